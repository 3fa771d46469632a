//===- HostEmitter.cpp - C++ host entry points for croq kernels -----------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Host functions that leave the croq-to-nvvm pipeline hold scalar arith,
// memref.dim on their tensor arguments, gpu.launch_func, gpu.wait on streams
// and cf.assert. This emitter prints them as C++ over the croq runtime
// (runtime/include/croq_runtime.h), which drives the CUDA driver API. The ABI
// of an entry point `f`:
//
//   extern "C" int f(void *t, int64_t t_size0, ..., int64_t n, CUstream s);
//
// one device pointer plus one extent per dimension for each tensor, the
// scalars as they are, and a CUstream per stream parameter. It returns 0, or
// non-zero after printing an error that names `f` (and the kernel). A scalar
// a `__co__` function returns is written through a trailing pointer
// argument (`int64_t *result0`); returned tensors are output arguments
// (croq-results-to-outputs).
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"
#include "Croq/Target/Translations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

class HostEmitter {
public:
  explicit HostEmitter(raw_ostream &os) : os(os) {}

  LogicalResult emitModule(ModuleOp module);
  /// The C prototypes of the module's entry points.
  LogicalResult emitHeader(ModuleOp module);
  /// The entry points' parameters, as JSON.
  LogicalResult emitDescription(ModuleOp module);

private:
  /// Runs `each` on every host function with a body and its entry point's
  /// parameters (`names` then names its arguments).
  LogicalResult forEachEntryPoint(
      ModuleOp module,
      function_ref<LogicalResult(func::FuncOp, ArrayRef<std::string>)> each);
  /// The parameters of `func`'s entry point, and the checks of their
  /// values that start its body; names each argument.
  LogicalResult signature(func::FuncOp func, SmallVector<std::string> &params,
                          std::string &checks);
  /// The C name of each argument of `func`: its Croqtile name (`croq.name`)
  /// where that is a C identifier no other parameter or generated name
  /// takes, else `argN`.
  static SmallVector<std::string> argumentNames(func::FuncOp func);
  LogicalResult emitBinary(gpu::BinaryOp binary);
  LogicalResult emitFunction(func::FuncOp func);
  LogicalResult emitOp(Operation &op);
  LogicalResult emitLaunch(gpu::LaunchFuncOp launch);
  LogicalResult emitTensorMap(nvgpu::TmaCreateDescriptorOp create);
  LogicalResult emitAlloc(memref::AllocOp alloc);
  /// Host control flow: `if`, `for` and `while` of C++, their results (and
  /// loop-carried values) in variables declared before them.
  LogicalResult emitIf(scf::IfOp branch);
  LogicalResult emitFor(scf::ForOp loop);
  LogicalResult emitWhile(scf::WhileOp loop);
  /// Declares a mutable variable for each of `values`, set to `inits` (or
  /// value-initialized); returns their names.
  FailureOr<SmallVector<std::string>> declareVariables(Operation *at,
                                                       ValueRange values,
                                                       ValueRange inits = {});
  /// Emits the ops of `block`; its terminator's operands (scf.yield, or
  /// scf.condition's after its condition) are assigned to `results`, all
  /// read before any is written.
  LogicalResult emitBlock(Block &block, ArrayRef<std::string> results);
  /// Nesting depth of host control flow around the op being emitted.
  unsigned depth = 0;

  FailureOr<std::string> cType(Operation *at, Type type);
  std::string define(Value value);
  std::string use(Value value) { return names.lookup(value); }
  /// How run-time errors name a tensor argument: its Croqtile name
  /// (`croq.name`), else its position.
  static std::string tensorName(Value tensor);

  raw_ostream &os;
  DenseMap<Value, std::string> names;
  /// Each entry point parameter's name in the C signature.
  DenseMap<Value, std::string> paramNames;
  /// Extents of each tensor argument, by argument.
  DenseMap<Value, SmallVector<std::string>> extents;
  SmallVector<std::string> ownedStreams;
  std::string function;
  unsigned counter = 0;
};

} // namespace

std::string HostEmitter::define(Value value) {
  std::string name = "v" + std::to_string(counter++);
  names[value] = name;
  return name;
}

FailureOr<std::string> HostEmitter::cType(Operation *at, Type type) {
  if (type.isIndex())
    return std::string("int64_t");
  if (type.isInteger(1))
    return std::string("bool");
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return (integer.isUnsigned() ? "uint" : "int") + std::to_string(width) +
             "_t";
  }
  if (type.isF32())
    return std::string("float");
  // Held as their bits; entry points take them as floats (signature).
  if (type.isF16() || type.isBF16())
    return std::string("uint16_t");
  if (type.isF64())
    return std::string("double");
  if (isa<gpu::AsyncTokenType>(type))
    return std::string("CUstream");
  if (isa<LLVM::LLVMPointerType, nvgpu::TensorMapDescriptorType>(type))
    return std::string("void *");
  return at->emitError("host code cannot hold a value of type ")
         << type << "; host scalars are integers, index, f32 or f64";
}

LogicalResult HostEmitter::emitBinary(gpu::BinaryOp binary) {
  auto objects = binary.getObjects();
  if (objects.size() != 1)
    return binary.emitError("expected one object per kernel module, got ")
           << objects.size();
  auto object = cast<gpu::ObjectAttr>(objects[0]);
  StringRef image = object.getObject().getValue();
  bool text = object.getFormat() == gpu::CompilationTarget::Assembly;
  if (!text && object.getFormat() != gpu::CompilationTarget::Binary)
    return binary.emitError("the host emitter embeds PTX or cubin objects; "
                            "serialize with format isa or bin");
  std::string name = binary.getSymName().str();
  os << "static const unsigned char croq_image_" << name << "[] = {";
  for (size_t i = 0; i < image.size(); ++i) {
    if (i % 16 == 0)
      os << "\n  ";
    os << static_cast<unsigned>(static_cast<unsigned char>(image[i])) << ",";
  }
  // PTX is loaded as a NUL-terminated string.
  if (text)
    os << "0,";
  os << "\n};\n";
  os << "static croq_module croq_module_" << name << " = {\"" << name
     << "\", croq_image_" << name << ", sizeof(croq_image_" << name
     << "), nullptr, {}};\n\n";
  return success();
}

/// C and C++ keywords, which cannot name a parameter.
static bool isKeyword(StringRef name) {
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case",
      "catch", "char", "class", "const", "constexpr", "continue", "default",
      "delete", "do", "double", "else", "enum", "explicit", "export", "extern",
      "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "nullptr", "operator",
      "or", "private", "protected", "public", "register", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "template", "this",
      "throw", "true", "try", "typedef", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "while", "xor", "_Bool",
      "_Alignas", "_Alignof", "_Atomic", "_Complex", "_Generic",
      "_Noreturn", "_Static_assert", "_Thread_local", "restrict",
      "decltype", "static_cast", "dynamic_cast", "reinterpret_cast",
      "const_cast", "typeid", "wchar_t", "char8_t", "char16_t", "char32_t",
      "requires", "concept", "consteval", "constinit", "co_await",
      "co_return", "co_yield", "static_assert", "thread_local", "bitand",
      "bitor", "compl", "and_eq", "or_eq", "xor_eq", "not_eq"};
  return keywords.contains(name);
}

/// Names the emitted code uses itself: values (v0), kernel parameters (p0),
/// the launch's locals, results and the runtime's names.
static bool isGenerated(StringRef name) {
  auto numbered = [&](StringRef prefix) {
    StringRef rest = name;
    return rest.consume_front(prefix) &&
           (rest.empty() || llvm::all_of(rest, llvm::isDigit));
  };
  // argN and its extents argN_sizeD are the fallback names.
  StringRef rest = name;
  bool fallback = rest.consume_front("arg") && !rest.empty() &&
                  llvm::isDigit(rest.front());
  // The C types and library functions the host code and header name.
  static const llvm::StringSet<> used = {
      "params", "err", "dims", "box", "CUstream", "CUresult", "CUdeviceptr",
      "printf", "fprintf", "stderr", "size_t", "nullptr", "NULL"};
  return (numbered("v") && name.size() > 1) ||
         (numbered("p") && name.size() > 1) || fallback ||
         used.contains(name) || name.ends_with("_t") ||
         name.starts_with("croq_") || name.starts_with("__") ||
         name.starts_with("CU");
}

SmallVector<std::string> HostEmitter::argumentNames(func::FuncOp func) {
  unsigned count = func.getNumArguments();
  SmallVector<std::string> out;
  for (unsigned i = 0; i < count; ++i)
    out.push_back("arg" + std::to_string(i));
  // Every name a candidate would bring: itself and its extents.
  auto namesOf = [&](unsigned i, StringRef base) {
    SmallVector<std::string> all{base.str()};
    if (auto memref = dyn_cast<MemRefType>(func.getArgumentTypes()[i]))
      for (int64_t d = 0; d < memref.getRank(); ++d)
        all.push_back((base + "_size" + Twine(d)).str());
    return all;
  };
  llvm::StringMap<unsigned> uses;
  SmallVector<std::string> wanted(count);
  for (unsigned i = 0; i < count; ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, "croq.name");
    if (!name || name.getValue().empty() || isKeyword(name.getValue()) ||
        isGenerated(name.getValue()) ||
        !(llvm::isAlpha(name.getValue().front()) ||
          name.getValue().front() == '_') ||
        !llvm::all_of(name.getValue(), [](char c) {
          return llvm::isAlnum(c) || c == '_';
        }))
      continue;
    wanted[i] = name.getValue().str();
    for (const std::string &n : namesOf(i, wanted[i]))
      ++uses[n];
  }
  for (unsigned i = 0; i < count; ++i) {
    if (wanted[i].empty())
      continue;
    SmallVector<std::string> all = namesOf(i, wanted[i]);
    if (llvm::all_of(all, [&](const std::string &n) {
          return uses.lookup(n) == 1 && !isGenerated(n) &&
                 n != func.getSymName();
        }))
      out[i] = wanted[i];
  }
  return out;
}

LogicalResult HostEmitter::signature(func::FuncOp func,
                                     SmallVector<std::string> &params,
                                     std::string &checks) {
  llvm::raw_string_ostream checkOs(checks);
  SmallVector<std::string> argNames = argumentNames(func);
  for (BlockArgument arg : func.getArguments()) {
    std::string name = argNames[arg.getArgNumber()];
    names[arg] = name;
    paramNames[arg] = name;
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      if (croq::getStorage(memref) != croq::Storage::Global ||
          !memref.getLayout().isIdentity())
        return func.emitError("argument ")
               << arg.getArgNumber()
               << " must be a dense global tensor (identity layout, no "
                  "memory space), got "
               << memref;
      params.push_back("void *" + name);
      SmallVector<std::string> dims;
      for (int64_t d = 0; d < memref.getRank(); ++d) {
        std::string dim = name + "_size" + std::to_string(d);
        params.push_back("int64_t " + dim);
        dims.push_back(dim);
        if (!memref.isDynamicDim(d))
          checkOs << "  if (" << dim << " != " << memref.getDimSize(d)
                  << ") return croq_rt_fail(\"" << function
                  << "\", \"argument " << arg.getArgNumber() << ": dimension "
                  << d << " is %lld, expected " << memref.getDimSize(d)
                  << "\", (long long)" << dim << ");\n";
        else
          checkOs << "  if (" << dim << " < 0) return croq_rt_fail(\""
                  << function << "\", \"argument " << arg.getArgNumber()
                  << ": dimension " << d << " is negative\");\n";
      }
      checkOs << "  if (!" << name << " && ";
      for (const std::string &dim : dims)
        checkOs << dim << " * ";
      checkOs << "1 != 0) return croq_rt_fail(\"" << function
              << "\", \"argument " << arg.getArgNumber()
              << ": null device pointer\");\n";
      extents[arg] = dims;
      continue;
    }
    // An f16 or bf16 scalar is a float for the caller, rounded here to the
    // bits the kernel takes.
    if (arg.getType().isF16() || arg.getType().isBF16()) {
      params.push_back("float " + name);
      names[arg] = name + "_bits";
      checkOs << "  const uint16_t " << name << "_bits = croq_rt_"
              << (arg.getType().isF16() ? "f16" : "bf16") << "_bits(" << name
              << ");\n";
      continue;
    }
    FailureOr<std::string> type = cType(func, arg.getType());
    if (failed(type))
      return failure();
    params.push_back(*type + " " + name);
  }
  // Scalar results are written through trailing pointers (null: dropped).
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    if (t.isF16() || t.isBF16())
      return func.emitError("an entry point cannot return ")
             << t << "; return it as f32";
    FailureOr<std::string> type = cType(func, t);
    if (failed(type))
      return failure();
    params.push_back(*type + " *croq_result" + std::to_string(i));
  }
  return success();
}

LogicalResult HostEmitter::emitFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  for (Type t : func.getResultTypes())
    if (isa<MemRefType>(t))
      return func.emitError("a host entry point cannot return a tensor: run "
                            "croq-results-to-outputs first");
  names.clear();
  extents.clear();
  ownedStreams.clear();
  counter = 0;
  function = func.getSymName().str();

  SmallVector<std::string> params;
  std::string checks;
  if (failed(signature(func, params, checks)))
    return failure();
  os << "extern \"C\" int " << function << "(" << llvm::join(params, ", ")
     << ") {\n"
     << checks;
  for (Operation &op : func.getBody().front())
    if (failed(emitOp(op)))
      return failure();
  os << "}\n\n";
  return success();
}

/// `text` as a C string literal.
static std::string cString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
      out += c;
    else
      out += (llvm::Twine("\\") + llvm::Twine(c >> 6) + llvm::Twine((c >> 3) & 7) +
              llvm::Twine(c & 7)).str();
  }
  return out + '"';
}

static std::string binaryOperator(Operation &op) {
  return TypeSwitch<Operation *, std::string>(&op)
      .Case<arith::AddIOp, arith::AddFOp>([](auto) { return "+"; })
      .Case<arith::SubIOp, arith::SubFOp>([](auto) { return "-"; })
      .Case<arith::MulIOp, arith::MulFOp>([](auto) { return "*"; })
      .Case<arith::DivSIOp, arith::DivFOp, arith::DivUIOp>(
          [](auto) { return "/"; })
      .Case<arith::RemSIOp, arith::RemUIOp>([](auto) { return "%"; })
      .Case<arith::AndIOp>([](auto) { return "&"; })
      .Case<arith::OrIOp>([](auto) { return "|"; })
      .Case<arith::XOrIOp>([](auto) { return "^"; })
      .Case<arith::ShLIOp>([](auto) { return "<<"; })
      .Case<arith::ShRSIOp, arith::ShRUIOp>([](auto) { return ">>"; })
      .Default([](Operation *) { return ""; });
}

static bool isUnsignedOp(Operation &op) {
  return isa<arith::DivUIOp, arith::RemUIOp, arith::ShRUIOp,
             arith::CeilDivUIOp, arith::MaxUIOp, arith::MinUIOp>(op);
}

static StringRef comparison(arith::CmpIPredicate predicate, bool &isUnsigned) {
  using P = arith::CmpIPredicate;
  isUnsigned = predicate == P::ult || predicate == P::ule ||
               predicate == P::ugt || predicate == P::uge;
  switch (predicate) {
  case P::eq:
    return "==";
  case P::ne:
    return "!=";
  case P::slt:
  case P::ult:
    return "<";
  case P::sle:
  case P::ule:
    return "<=";
  case P::sgt:
  case P::ugt:
    return ">";
  case P::sge:
  case P::uge:
    return ">=";
  }
  llvm_unreachable("unknown predicate");
}

LogicalResult HostEmitter::emitOp(Operation &op) {
  auto defineAs = [&](Value result, StringRef expr) -> LogicalResult {
    FailureOr<std::string> type = cType(&op, result.getType());
    if (failed(type))
      return failure();
    os << "  const " << *type << " " << define(result) << " = " << expr
       << ";\n";
    return success();
  };
  auto asU64 = [&](Value v) { return "(uint64_t)" + use(v); };
  // f16 and bf16 values are bits on the host: they go to kernels as they
  // are, and nothing computes with them.
  auto isHalf = [](Type t) { return t.isF16() || t.isBF16(); };
  if (!isa<gpu::LaunchFuncOp>(op) &&
      (llvm::any_of(op.getOperandTypes(), isHalf) ||
       llvm::any_of(op.getResultTypes(), isHalf)))
    return op.emitError("host code passes ")
           << "f16 and bf16 values to kernels but does not compute with "
              "them; compute in a parallel, or in f32";

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    if (auto integer = dyn_cast<IntegerAttr>(value)) {
      if (integer.getType().isInteger(1))
        return defineAs(constant, integer.getInt() ? "true" : "false");
      return defineAs(constant, std::to_string(integer.getInt()) + "LL");
    }
    if (auto fp = dyn_cast<FloatAttr>(value)) {
      std::string text;
      llvm::raw_string_ostream(text)
          << llvm::format("%.17g", fp.getValueAsDouble());
      return defineAs(constant, text);
    }
    return op.emitError("unsupported host constant ") << value;
  }
  // An integer division by a run-time zero would kill the caller's
  // process (SIGFPE): the entry point refuses it instead, with the place.
  // So would the one signed quotient that does not fit (INT64_MIN / -1).
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
          arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op)) {
    APInt divisor;
    bool constant = matchPattern(op.getOperand(1), m_ConstantInt(&divisor));
    bool isSigned = !isUnsignedOp(op);
    std::string where;
    if (auto file = op.getLoc()->findInstanceOf<FileLineColLoc>())
      where = " (" + file.getFilename().str() + ":" +
              std::to_string(file.getLine()) + ")";
    auto refuse = [&](const std::string &condition, const std::string &why) {
      os << "  if (" << condition << ") return croq_rt_fail(\"" << function
         << "\", \"%s\", " << cString(why + where) << ");\n";
    };
    if (!constant || divisor.isZero())
      refuse(use(op.getOperand(1)) + " == 0", "an integer division by zero");
    if (isSigned && (!constant || divisor.isAllOnes()) &&
        (op.getOperand(0).getType().isInteger(64) ||
         op.getOperand(0).getType().isIndex()))
      refuse(use(op.getOperand(0)) + " == INT64_MIN && " +
                 use(op.getOperand(1)) + " == -1",
             "an integer division that overflows (INT64_MIN / -1)");
  }
  std::string binary = binaryOperator(op);
  if (!binary.empty()) {
    Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    FailureOr<std::string> type = cType(&op, op.getResult(0).getType());
    if (failed(type))
      return failure();
    if (isUnsignedOp(op))
      return defineAs(op.getResult(0), "(" + *type + ")(" + asU64(lhs) + " " +
                                           binary + " " + asU64(rhs) + ")");
    return defineAs(op.getResult(0),
                    use(lhs) + " " + binary + " " + use(rhs));
  }
  if (isa<arith::CeilDivUIOp, arith::CeilDivSIOp>(op)) {
    Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    if (isa<arith::CeilDivUIOp>(op))
      return defineAs(op.getResult(0), "(int64_t)((" + asU64(lhs) + " + " +
                                           asU64(rhs) + " - 1) / " +
                                           asU64(rhs) + ")");
    return defineAs(op.getResult(0), "croq_rt_ceildiv(" + use(lhs) + ", " +
                                         use(rhs) + ")");
  }
  if (isa<arith::MaxSIOp, arith::MinSIOp>(op)) {
    StringRef cmp = isa<arith::MaxSIOp>(op) ? ">" : "<";
    Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    return defineAs(op.getResult(0), use(lhs) + " " + cmp.str() + " " +
                                         use(rhs) + " ? " + use(lhs) + " : " +
                                         use(rhs));
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    bool isUnsigned;
    StringRef symbol = comparison(cmp.getPredicate(), isUnsigned);
    std::string lhs = isUnsigned ? asU64(cmp.getLhs()) : use(cmp.getLhs());
    std::string rhs = isUnsigned ? asU64(cmp.getRhs()) : use(cmp.getRhs());
    return defineAs(cmp, lhs + " " + symbol.str() + " " + rhs);
  }
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return defineAs(select, use(select.getCondition()) + " ? " +
                                use(select.getTrueValue()) + " : " +
                                use(select.getFalseValue()));
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp, arith::SIToFPOp, arith::FPToSIOp,
          arith::ExtFOp, arith::TruncFOp>(op)) {
    FailureOr<std::string> type = cType(&op, op.getResult(0).getType());
    if (failed(type))
      return failure();
    return defineAs(op.getResult(0),
                    "(" + *type + ")" + use(op.getOperand(0)));
  }
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto it = extents.find(dim.getSource());
    if (!index || it == extents.end())
      return op.emitError("host code reads extents of tensor arguments at "
                          "constant dimensions only");
    if (*index < 0 || *index >= static_cast<int64_t>(it->second.size()))
      return op.emitError("memref.dim of dimension ")
             << *index << " of a rank-" << it->second.size()
             << " tensor, which does not exist";
    return defineAs(dim, it->second[*index]);
  }
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
    return emitLaunch(launch);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return emitIf(branch);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return emitFor(loop);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return emitWhile(loop);
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return emitAlloc(alloc);
  if (isa<memref::DeallocOp>(op))
    return success(); // The allocation's owner frees it at the return.
  if (auto cast = dyn_cast<memref::CastOp>(op)) {
    // A tensor argument seen as unranked (for a tensor map): the same one.
    auto it = extents.find(cast.getSource());
    if (it == extents.end())
      return op.emitError("host code casts only tensor arguments");
    names[cast] = use(cast.getSource());
    SmallVector<std::string> dims = it->second;
    extents[cast] = std::move(dims);
    return success();
  }
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op)) {
    // A tensor map passed to a kernel by pointer: the same pointer.
    if (cast.getNumOperands() != 1 || cast.getNumResults() != 1 ||
        !isa<nvgpu::TensorMapDescriptorType>(cast.getOperand(0).getType()))
      return op.emitError("host code casts only tensor maps to pointers");
    names[cast.getResult(0)] = use(cast.getOperand(0));
    return success();
  }
  if (auto create = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op))
    return emitTensorMap(create);
  if (auto wait = dyn_cast<gpu::WaitOp>(op)) {
    if (wait.getAsyncToken() && wait.getAsyncDependencies().empty()) {
      // A stream owned by this call: created here, joined before returning.
      if (depth)
        return op.emitError("a stream made inside a host if or loop is not "
                            "supported; declare the stream outside it");
      std::string name = define(wait.getAsyncToken());
      ownedStreams.push_back(name);
      os << "  CUstream " << name << " = nullptr;\n"
         << "  if (int err = croq_rt_stream_create(&" << name << ", \""
         << function << "\")) return err;\n";
      return success();
    }
    if (!wait.getAsyncToken()) {
      for (Value dep : wait.getAsyncDependencies())
        os << "  if (int err = croq_rt_stream_sync(" << use(dep) << ", \""
           << function << "\")) return err;\n";
      return success();
    }
    return op.emitError("joining streams into a new one is not supported in "
                        "host code");
  }
  if (auto assertOp = dyn_cast<cf::AssertOp>(op)) {
    os << "  if (!" << use(assertOp.getArg()) << ") return croq_rt_fail(\""
       << function << "\", \"%s\", " << cString(assertOp.getMsg()) << ");\n";
    return success();
  }
  if (auto printOp = dyn_cast<gpu::PrintfOp>(op)) {
    // The format's conversions match the argument types (the importer
    // widens integers to int or long long and floats to double).
    os << "  printf(" << cString(printOp.getFormat());
    for (Value arg : printOp.getArgs()) {
      Type type = arg.getType();
      std::string cast = isa<FloatType>(type)          ? "(double)"
                         : type.isIndex() || type.getIntOrFloatBitWidth() > 32
                             ? "(long long)"
                             : "(int)";
      os << ", " << cast << use(arg);
    }
    os << ");\n";
    return success();
  }
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      os << "  if (croq_result" << i << ") *croq_result" << i << " = "
         << use(v) << ";\n";
    for (const std::string &stream : ownedStreams)
      os << "  if (int err = croq_rt_stream_join(" << stream << ", \""
         << function << "\")) return err;\n";
    os << "  return 0;\n";
    return success();
  }
  return op.emitError("cannot emit host code for '")
         << op.getName()
         << "': host code computes scalars and launches kernels; move this "
            "into a croq.parallel";
}

FailureOr<SmallVector<std::string>>
HostEmitter::declareVariables(Operation *at, ValueRange values,
                              ValueRange inits) {
  SmallVector<std::string> names;
  for (auto [i, value] : llvm::enumerate(values)) {
    FailureOr<std::string> type = cType(at, value.getType());
    if (failed(type))
      return failure();
    std::string name = define(value);
    os << "  " << *type << " " << name
       << (inits.empty() ? std::string("{}") : " = " + use(inits[i]))
       << ";\n";
    names.push_back(name);
  }
  return names;
}

LogicalResult HostEmitter::emitBlock(Block &block,
                                     ArrayRef<std::string> results) {
  ++depth;
  llvm::scope_exit leave([&] { --depth; });
  for (Operation &op : block.without_terminator())
    if (failed(emitOp(op)))
      return failure();
  Operation *terminator = block.getTerminator();
  ValueRange yielded = terminator->getOperands();
  if (auto condition = dyn_cast<scf::ConditionOp>(terminator))
    yielded = condition.getArgs();
  else if (!isa<scf::YieldOp>(terminator))
    return terminator->emitError("cannot emit host code for '")
           << terminator->getName() << "'";
  // Read every value before writing any: a loop may yield its carried
  // values in another order.
  SmallVector<std::string> next;
  for (auto [i, value] : llvm::enumerate(yielded)) {
    FailureOr<std::string> type = cType(terminator, value.getType());
    if (failed(type))
      return failure();
    next.push_back("n" + std::to_string(counter++));
    os << "  const " << *type << " " << next.back() << " = " << use(value)
       << ";\n";
  }
  for (auto [name, value] : llvm::zip_equal(results, next))
    os << "  " << name << " = " << value << ";\n";
  return success();
}

LogicalResult HostEmitter::emitIf(scf::IfOp branch) {
  FailureOr<SmallVector<std::string>> results =
      declareVariables(branch, branch.getResults());
  if (failed(results))
    return failure();
  os << "  if (" << use(branch.getCondition()) << ") {\n";
  if (failed(emitBlock(*branch.thenBlock(), *results)))
    return failure();
  os << "  }";
  if (Block *otherwise = branch.elseBlock()) {
    os << " else {\n";
    if (failed(emitBlock(*otherwise, *results)))
      return failure();
    os << "  }";
  }
  os << "\n";
  return success();
}

LogicalResult HostEmitter::emitFor(scf::ForOp loop) {
  FailureOr<SmallVector<std::string>> carried =
      declareVariables(loop, loop.getRegionIterArgs(), loop.getInitArgs());
  if (failed(carried))
    return failure();
  FailureOr<std::string> type = cType(loop, loop.getInductionVar().getType());
  if (failed(type))
    return failure();
  std::string iv = define(loop.getInductionVar());
  std::string step = use(loop.getStep());
  // A step that is not positive would never end (scf.for's own rule).
  if (!matchPattern(loop.getStep(), m_Constant()))
    os << "  if (" << step << " <= 0) return croq_rt_fail(\"" << function
       << "\", \"%s\", \"a host loop's step is not positive\");\n";
  os << "  for (" << *type << " " << iv << " = "
     << use(loop.getLowerBound()) << "; " << iv << " < "
     << use(loop.getUpperBound()) << "; " << iv << " += " << step
     << ") {\n";
  if (failed(emitBlock(*loop.getBody(), *carried)))
    return failure();
  os << "  }\n";
  for (auto [result, name] : llvm::zip_equal(loop.getResults(), *carried))
    names[result] = name;
  return success();
}

LogicalResult HostEmitter::emitWhile(scf::WhileOp loop) {
  // The before region's arguments, and then the values its condition
  // passes on: the after region's arguments and the loop's results.
  FailureOr<SmallVector<std::string>> before =
      declareVariables(loop, loop.getBeforeArguments(), loop.getInits());
  if (failed(before))
    return failure();
  FailureOr<SmallVector<std::string>> passed =
      declareVariables(loop, loop.getResults());
  if (failed(passed))
    return failure();
  auto condition = cast<scf::ConditionOp>(loop.getBeforeBody()->getTerminator());
  os << "  for (;;) {\n";
  if (failed(emitBlock(*loop.getBeforeBody(), *passed)))
    return failure();
  os << "  if (!" << use(condition.getCondition()) << ") break;\n";
  for (auto [arg, name] : llvm::zip_equal(loop.getAfterArguments(), *passed))
    names[arg] = name;
  if (failed(emitBlock(*loop.getAfterBody(), *before)))
    return failure();
  os << "  }\n";
  return success();
}

std::string HostEmitter::tensorName(Value tensor) {
  while (auto cast = tensor.getDefiningOp<memref::CastOp>())
    tensor = cast.getSource();
  auto arg = dyn_cast<BlockArgument>(tensor);
  if (!arg)
    return "a tensor";
  if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       "croq.name"))
      return "'" + name.getValue().str() + "'";
  return "argument " + std::to_string(arg.getArgNumber());
}

/// A tensor map over a whole tensor argument, its box the descriptor's tile:
/// dimensions innermost first, as cuTensorMapEncodeTiled takes them.
LogicalResult HostEmitter::emitTensorMap(nvgpu::TmaCreateDescriptorOp create) {
  auto it = extents.find(create.getTensor());
  if (it == extents.end())
    return create.emitError("tensor maps are built over tensor arguments");
  nvgpu::TensorMapDescriptorType type = create.getTensorMap().getType();
  MemRefType box = type.getTensor();
  Type element = box.getElementType();
  StringRef dataType = element.isF16()        ? "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"
                       : element.isBF16()     ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"
                       : element.isF32()      ? "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"
                       : element.isF64()      ? "CU_TENSOR_MAP_DATA_TYPE_FLOAT64"
                       // 8-bit integers and floats move as bytes (TMA of
                       // sub-byte elements is refused at croq.tma.copy).
                       : element.getIntOrFloatBitWidth() == 8
                           ? "CU_TENSOR_MAP_DATA_TYPE_UINT8"
                       : element.isInteger(16) ? "CU_TENSOR_MAP_DATA_TYPE_UINT16"
                       : element.isInteger(32) ? "CU_TENSOR_MAP_DATA_TYPE_INT32"
                       : element.isInteger(64) ? "CU_TENSOR_MAP_DATA_TYPE_INT64"
                                               : "";
  if (dataType.empty())
    return create.emitError("no TMA data type for ") << element;
  int swizzle = 0;
  switch (type.getSwizzle()) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
    swizzle = 32;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
    swizzle = 64;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
    swizzle = 128;
    break;
  }
  std::string name = define(create.getTensorMap());
  SmallVector<std::string> dims(llvm::reverse(it->second));
  SmallVector<std::string> boxDims;
  for (int64_t d : llvm::reverse(box.getShape()))
    boxDims.push_back(std::to_string(d));
  os << "  void *" << name << " = nullptr;\n"
     << "  {\n"
     << "    const int64_t dims[] = {" << llvm::join(dims, ", ") << "};\n"
     << "    const int64_t box[] = {" << llvm::join(boxDims, ", ") << "};\n"
     << "    if (int err = croq_rt_tensor_map(&" << name << ", "
     << use(create.getTensor()) << ", " << dims.size() << ", " << dataType
     << ", " << mlir::croq::getStorageBytes(box.getElementType()) << ", dims, box, " << swizzle
     << ", \"" << function << "\", \"" << tensorName(create.getTensor())
     << "\")) return err;\n"
     << "  }\n";
  return success();
}

LogicalResult HostEmitter::emitAlloc(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (croq::getStorage(type) != croq::Storage::Global ||
      !type.getLayout().isIdentity() || !alloc.getSymbolOperands().empty())
    return alloc.emitError("host code allocates dense global tensors only, "
                           "got ")
           << type << "; declare shared and local buffers inside a parallel";
  // Elements narrower than a byte take one byte each, as in kernels.
  int64_t elementBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  SmallVector<std::string> dims;
  std::string bytes = std::to_string(elementBytes) + "LL";
  unsigned dynamic = 0;
  std::string what = "a global tensor";
  if (auto at = dyn_cast<FileLineColLoc>(alloc.getLoc()))
    what += " declared at line " + std::to_string(at.getLine());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::string dim = type.isDynamicDim(d)
                          ? use(alloc.getDynamicSizes()[dynamic++])
                          : std::to_string(type.getDimSize(d)) + "LL";
    if (type.isDynamicDim(d))
      os << "  if (" << dim << " < 0) return croq_rt_fail(\"" << function
         << "\", \"%s has extent %lld in dimension " << d << "\", "
         << cString(what) << ", (long long)" << dim << ");\n";
    dims.push_back(dim);
    bytes += " * " + dim;
  }
  // The owner frees the buffer when the function returns, on every path,
  // after the work queued so far (stream-ordered: the kernels that use it
  // finish first).
  std::string name = define(alloc);
  os << "  croq_rt_allocation " << name << "_owner;\n"
     << "  if (int err = croq_rt_alloc(&" << name << "_owner.ptr, " << bytes
     << ", \"" << function << "\", " << cString(what) << ")) return err;\n"
     << "  void *const " << name << " = " << name << "_owner.ptr;\n";
  extents[alloc] = std::move(dims);
  return success();
}

LogicalResult HostEmitter::emitLaunch(gpu::LaunchFuncOp launch) {
  std::string kernel = launch.getKernelName().str();
  std::string module = launch.getKernelModuleName().str();
  os << "  {\n";
  SmallVector<std::string> params;
  unsigned next = 0;
  auto local = [&](StringRef type, StringRef value) {
    std::string name = "p" + std::to_string(next++);
    os << "    " << type << " " << name << " = " << value << ";\n";
    params.push_back("&" + name);
  };
  for (Value operand : launch.getKernelOperands()) {
    if (auto memref = dyn_cast<MemRefType>(operand.getType())) {
      auto it = extents.find(operand);
      if (it == extents.end())
        return launch.emitError("kernel tensor arguments must be tensor "
                                "arguments of the host function or tensors "
                                "it allocates");
      // The default memref calling convention: allocated and aligned
      // pointers, offset, extents, then row-major strides.
      std::string pointer = use(operand);
      local("void *", pointer);
      local("void *", pointer);
      local("int64_t", "0");
      for (const std::string &dim : it->second)
        local("int64_t", dim);
      for (size_t d = 0; d < it->second.size(); ++d) {
        std::string stride = "1";
        for (size_t e = d + 1; e < it->second.size(); ++e)
          stride += " * " + it->second[e];
        local("int64_t", stride);
      }
      continue;
    }
    FailureOr<std::string> type = cType(launch, operand.getType());
    if (failed(type))
      return failure();
    local(*type, use(operand));
  }
  os << "    void *params[] = {" << llvm::join(params, ", ") << "};\n";
  std::string stream = "nullptr";
  if (!launch.getAsyncDependencies().empty())
    stream = use(launch.getAsyncDependencies().front());
  bool sync = !launch.getAsyncToken();
  // croq-mark-launches marked the launch of a cooperative
  // kernel.
  bool cooperative = launch->hasAttr(croq::kCooperativeAttrName);
  // A kernel of clusters (`.reqnctapercluster`) launches whole clusters
  // only: refuse a grid that the cluster does not divide, by name.
  // (croq-mark-launches copied the kernel's cluster shape.)
  if (auto cluster =
          launch->getAttrOfType<IntegerAttr>(croq::kClusterBlocksAttrName);
      cluster && cluster.getInt() > 1)
    os << "    if (" << use(launch.getGridSizeX()) << " % " << cluster.getInt()
       << " != 0) return croq_rt_fail(\"" << function
       << "\", \"the kernel runs in clusters of " << cluster.getInt()
       << " blocks along its first parallel index, whose extent %lld is "
          "not a multiple of "
       << cluster.getInt() << "\", (long long)" << use(launch.getGridSizeX())
       << ");\n";
  os << "    if (int err = croq_rt_launch(&croq_module_" << module << ", \""
     << kernel << "\", \"" << function << "\", " << use(launch.getGridSizeX())
     << ", " << use(launch.getGridSizeY()) << ", "
     << use(launch.getGridSizeZ()) << ", " << use(launch.getBlockSizeX())
     << ", " << use(launch.getBlockSizeY()) << ", "
     << use(launch.getBlockSizeZ()) << ", "
     << (launch.getDynamicSharedMemorySize()
             ? use(launch.getDynamicSharedMemorySize())
             : std::string("0"))
     << ", " << stream << ", params, " << (sync ? "1" : "0") << ", "
     << (cooperative ? "1" : "0") << ")) return err;\n";
  os << "  }\n";
  if (Value token = launch.getAsyncToken())
    names[token] = stream;
  return success();
}

LogicalResult HostEmitter::emitModule(ModuleOp module) {
  os << "// Generated by croq-translate --croq-to-host. Do not edit.\n"
     << "#include \"croq_runtime.h\"\n\n";
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto binary = dyn_cast<gpu::BinaryOp>(op)) {
      if (failed(emitBinary(binary)))
        return failure();
      continue;
    }
    if (isa<gpu::GPUModuleOp>(op))
      return op.emitError("kernel module was not serialized; run "
                          "gpu-module-to-binary first");
  }
  for (auto func : module.getOps<func::FuncOp>())
    if (failed(emitFunction(func)))
      return failure();
  return success();
}

/// `element` as Croqtile spells it, for the header's comments.
static std::string elementName(Type element) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto integer = dyn_cast<IntegerType>(element))
    os << (integer.isUnsigned() ? "u" : "s") << integer.getWidth();
  else
    os << element;
  return text;
}

LogicalResult HostEmitter::forEachEntryPoint(
    ModuleOp module,
    function_ref<LogicalResult(func::FuncOp, ArrayRef<std::string>)> each) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    SmallVector<std::string> params;
    std::string checks;
    names.clear();
    extents.clear();
    function = func.getSymName().str();
    if (failed(signature(func, params, checks)) || failed(each(func, params)))
      return failure();
  }
  return success();
}

LogicalResult HostEmitter::emitHeader(ModuleOp module) {
  std::string body;
  llvm::raw_string_ostream bodyOs(body);
  bool streams = false;
  LogicalResult listed = forEachEntryPoint(module, [&](func::FuncOp func,
                                                       ArrayRef<std::string>
                                                           params) {
    bodyOs << "/// " << function << ": returns 0, or a CUresult after "
           << "printing what failed.\n";
    for (BlockArgument arg : func.getArguments()) {
      std::string name = paramNames.lookup(arg);
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        bodyOs << "///   " << name << ": device pointer to a dense "
               << elementName(memref.getElementType()) << " [";
        for (int64_t d = 0; d < memref.getRank(); ++d) {
          if (d)
            bodyOs << ", ";
          if (memref.isDynamicDim(d))
            bodyOs << name << "_size" << d;
          else
            bodyOs << memref.getDimSize(d);
        }
        bodyOs << "] tensor (row-major)\n";
      }
      streams |= isa<gpu::AsyncTokenType>(arg.getType());
    }
    if (func.getNumResults())
      bodyOs << "///   croq_resultN: where result N is written (null: "
                "dropped)\n";
    bodyOs << "int " << function << "(" << llvm::join(params, ", ")
           << ");\n\n";
    return success();
  });
  if (failed(listed))
    return failure();
  os << "// Generated by croq. Do not edit.\n"
     << "#pragma once\n"
     << "#include <stdint.h>\n"
     << "#ifndef __cplusplus\n#include <stdbool.h>\n#endif\n";
  if (streams)
    os << "#include <cuda.h>\n";
  os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << body << "#ifdef __cplusplus\n}\n#endif\n";
  return success();
}

/// A tensor element's name as DLPack and the frameworks spell it.
static std::string dtypeName(Type element, bool isUnsigned) {
  if (element.isF16())
    return "float16";
  if (element.isBF16())
    return "bfloat16";
  if (element.isF32())
    return "float32";
  if (element.isF64())
    return "float64";
  if (isa<Float8E4M3FNType>(element))
    return "float8_e4m3fn";
  if (isa<Float8E5M2Type>(element))
    return "float8_e5m2";
  if (element.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(element))
    return (integer.isUnsigned() || isUnsigned ? "uint" : "int") +
           std::to_string(integer.getWidth());
  return elementName(element);
}

LogicalResult HostEmitter::emitDescription(ModuleOp module) {
  llvm::json::Array functions;
  LogicalResult listed = forEachEntryPoint(module, [&](func::FuncOp func,
                                                       ArrayRef<std::string>) {
    llvm::json::Array args;
    for (BlockArgument arg : func.getArguments()) {
      llvm::json::Object entry;
      entry["name"] = paramNames.lookup(arg);
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        "croq.name"))
        entry["source_name"] = name.getValue();
      // Unsigned Croqtile types are signless integers in the IR.
      bool isUnsigned = func.getArgAttr(arg.getArgNumber(), "croq.unsigned") &&
                        getElementTypeOrSelf(arg.getType()).isInteger();
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        entry["kind"] = "tensor";
        entry["dtype"] = dtypeName(memref.getElementType(), isUnsigned);
        llvm::json::Array shape;
        for (int64_t d : memref.getShape())
          shape.push_back(ShapedType::isDynamic(d) ? int64_t(-1) : d);
        entry["shape"] = std::move(shape);
      } else if (isa<gpu::AsyncTokenType>(arg.getType())) {
        entry["kind"] = "stream";
      } else {
        FailureOr<std::string> type = cType(func, arg.getType());
        if (failed(type))
          return failure();
        entry["kind"] = "scalar";
        // f16 and bf16 scalars cross as floats (signature).
        if (isUnsigned && StringRef(*type).starts_with("int"))
          type = "u" + *type;
        entry["ctype"] = arg.getType().isF16() || arg.getType().isBF16()
                             ? std::string("float")
                             : *type;
      }
      args.push_back(std::move(entry));
    }
    llvm::json::Array results;
    for (Type t : func.getResultTypes()) {
      FailureOr<std::string> type = cType(func, t);
      if (failed(type))
        return failure();
      results.push_back(*type);
    }
    functions.push_back(llvm::json::Object{{"name", function},
                                           {"params", std::move(args)},
                                           {"results", std::move(results)}});
    return success();
  });
  if (failed(listed))
    return failure();
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"functions", std::move(functions)}}))
     << "\n";
  return success();
}

LogicalResult mlir::croq::describeEntryPoints(ModuleOp module,
                                              raw_ostream &os) {
  return HostEmitter(os).emitDescription(module);
}

LogicalResult mlir::croq::emitHostCode(ModuleOp module, raw_ostream &os) {
  return HostEmitter(os).emitModule(module);
}

LogicalResult mlir::croq::emitHostHeader(ModuleOp module, raw_ostream &os) {
  return HostEmitter(os).emitHeader(module);
}
