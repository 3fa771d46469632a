//===- DeviceCalls.cpp - Calls of C++ device functions --------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// `croq.call` reaches LLVM in two steps:
//  - the croq dialect's ConvertToLLVMPatternInterface turns each call into
//    an `llvm.call` of an extern "C" shim, `__croq_call_<callee>`, declared
//    in the kernel's module with the callee's C++ spelling and the C++ types
//    of its parameters;
//  - croq-link-device-code writes those shims after the file's `__device__`
//    functions, compiles them with clang (CUDA, device side only) to LLVM
//    bitcode and imports that into the kernel module as LLVM dialect
//    functions, where the shims' definitions replace their declarations.
// The shim lets C++ resolve templates, namespaces, overloads and implicit
// conversions; the PTX never needs a C++ mangled name.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Croq/Conversion/Passes.h"
#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"


namespace mlir::croq {
#define GEN_PASS_DEF_CROQLINKDEVICECODEPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;
using namespace mlir::croq;

/// Attributes of a shim declaration: the callee as C++ spells it, and the
/// C++ types of its result and parameters.
static constexpr llvm::StringLiteral kCalleeAttr = "croq.callee";
static constexpr llvm::StringLiteral kSignatureAttr = "croq.signature";

namespace {

/// `__croq_call_` and the callee's identifier characters.
std::string shimBaseName(StringRef callee) {
  std::string name = "__croq_call_";
  for (char c : callee)
    name += llvm::isAlnum(c) ? c : '_';
  while (StringRef(name).ends_with("_") && name.size() > 12)
    name.pop_back();
  return name;
}

/// croq.call -> llvm.call of the shim: buffers as generic pointers to their
/// first element, 16-bit floats as their bits.
struct CallLowering : ConvertOpToLLVMPattern<croq::CallOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(croq::CallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto generic = LLVM::LLVMPointerType::get(ctx);
    auto bits = [&](Type t) { return t.isF16() || t.isBF16(); };
    // croq's name of the C++ type: `s32` or, where the call says the C++
    // side is unsigned, `u32`.
    auto cxxName = [&](Type t, bool byValue, bool isUnsigned) {
      std::string name = getDeviceCallTypeName(t, byValue).str();
      if (isUnsigned && StringRef(name).starts_with("s"))
        name[0] = 'u';
      return name;
    };
    std::optional<ArrayRef<bool>> unsignedArgs = op.getUnsignedArgs();
    SmallVector<Value> args;
    SmallVector<Type> argTypes;
    SmallVector<Attribute> signature;
    Type result;
    if (Value r = op.getResult()) {
      result = bits(r.getType()) ? rewriter.getI16Type()
                                 : getTypeConverter()->convertType(r.getType());
      signature.push_back(rewriter.getStringAttr(
          cxxName(r.getType(), /*byValue=*/true, op.getUnsignedResult())));
    } else {
      signature.push_back(rewriter.getStringAttr("void"));
    }
    for (auto [i, original, converted] :
         llvm::enumerate(op.getArgs(), adaptor.getArgs())) {
      Type type = original.getType();
      bool isUnsigned = unsignedArgs && (*unsignedArgs)[i];
      if (auto memref = dyn_cast<MemRefType>(type)) {
        MemRefDescriptor descriptor(converted);
        Value ptr = descriptor.bufferPtr(rewriter, loc, *getTypeConverter(),
                                         memref);
        if (cast<LLVM::LLVMPointerType>(ptr.getType()).getAddressSpace() != 0)
          ptr = LLVM::AddrSpaceCastOp::create(rewriter, loc, generic, ptr);
        args.push_back(ptr);
        argTypes.push_back(generic);
        signature.push_back(rewriter.getStringAttr(
            cxxName(memref.getElementType(), false, isUnsigned) + " *"));
        continue;
      }
      Value value = converted;
      if (bits(type))
        value = LLVM::BitcastOp::create(rewriter, loc, rewriter.getI16Type(),
                                        value);
      args.push_back(value);
      argTypes.push_back(value.getType());
      signature.push_back(
          rewriter.getStringAttr(cxxName(type, true, isUnsigned)));
    }
    auto functionType = LLVM::LLVMFunctionType::get(
        result ? result : LLVM::LLVMVoidType::get(ctx), argTypes);

    // One declaration per callee and signature, in the kernel's module.
    Operation *table = SymbolTable::getNearestSymbolTable(op);
    if (!table)
      return rewriter.notifyMatchFailure(op, "no symbol table above the call");
    std::string base = shimBaseName(op.getCallee());
    LLVM::LLVMFuncOp shim;
    for (unsigned k = 0; !shim; ++k) {
      std::string name = k ? base + "_" + std::to_string(k) : base;
      Operation *existing = SymbolTable::lookupSymbolIn(table, name);
      if (!existing) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(&table->getRegion(0).front());
        shim = LLVM::LLVMFuncOp::create(rewriter, loc, name, functionType);
        shim->setAttr(kCalleeAttr, op.getCalleeAttr());
        shim->setAttr(kSignatureAttr, rewriter.getArrayAttr(signature));
        break;
      }
      auto function = dyn_cast<LLVM::LLVMFuncOp>(existing);
      if (function && function.getFunctionType() == functionType &&
          function->getAttr(kCalleeAttr) == op.getCalleeAttr() &&
          function->getAttr(kSignatureAttr) ==
              rewriter.getArrayAttr(signature))
        shim = function;
    }
    auto call = LLVM::CallOp::create(rewriter, loc, shim, args);
    if (!result) {
      rewriter.eraseOp(op);
      return success();
    }
    Value value = call.getResult();
    if (bits(op.getResult().getType()))
      value = LLVM::BitcastOp::create(
          rewriter, loc,
          getTypeConverter()->convertType(op.getResult().getType()), value);
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct CroqToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    patterns.add<CallLowering>(converter);
  }
};

//===----------------------------------------------------------------------===//
// croq-link-device-code
//===----------------------------------------------------------------------===//

/// `code` without its comments and string and character literals.
std::string withoutCommentsAndStrings(StringRef code) {
  std::string out;
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '/' && i + 1 < code.size() && code[i + 1] == '/') {
      i = code.find('\n', i);
      if (i == StringRef::npos)
        break;
      out += '\n';
    } else if (c == '/' && i + 1 < code.size() && code[i + 1] == '*') {
      i = code.find("*/", i + 2);
      if (i == StringRef::npos)
        break;
      ++i;
      out += ' ';
    } else if (c == '"' || c == '\'') {
      for (++i; i < code.size() && code[i] != c && code[i] != '\n'; ++i)
        if (code[i] == '\\')
          ++i;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

/// Whether `text` holds `name` as a whole C++ identifier.
bool mentions(StringRef text, StringRef name) {
  auto isIdent = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (size_t at = text.find(name); at != StringRef::npos;
       at = text.find(name, at + 1)) {
    bool before = at > 0 && isIdent(text[at - 1]);
    size_t end = at + name.size();
    bool after = end < text.size() && isIdent(text[end]);
    if (!before && !after)
      return true;
  }
  return false;
}

/// The unqualified name of `callee`, without template arguments.
StringRef calleeName(StringRef callee) {
  StringRef name = callee.take_until([](char c) { return c == '<'; });
  size_t colons = name.rfind("::");
  return colons == StringRef::npos ? name : name.drop_front(colons + 2);
}

/// What the device code sees: croq's element type names, and the CUDA
/// headers for them.
constexpr llvm::StringLiteral kPrelude = R"cxx(#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#define __co_device__ __device__
using f16 = __half;
using bf16 = __nv_bfloat16;
using f32 = float;
using f64 = double;
using f8_e4m3 = __nv_fp8_e4m3;
using f8_e5m2 = __nv_fp8_e5m2;
using s8 = int8_t;
using u8 = uint8_t;
using s16 = int16_t;
using u16 = uint16_t;
using s32 = int32_t;
using u32 = uint32_t;
using s64 = int64_t;
using u64 = uint64_t;
)cxx";

/// The extern "C" shim of one declaration. A 16-bit float crosses it as
/// its bits (`u16`): CUDA's `__half` is a struct, passed unlike LLVM's
/// `half`.
void writeShim(llvm::raw_ostream &os, LLVM::LLVMFuncOp decl) {
  // clang's messages about the shim point at the call it stands for.
  if (auto at = decl.getLoc()->findInstanceOf<FileLineColLoc>())
    os << "#line " << at.getLine() << " \"" << at.getFilename().getValue()
       << "\"\n";
  else
    os << "#line 1 \"croq call shim " << decl.getSymName() << "\"\n";
  StringRef callee = cast<StringAttr>(decl->getAttr(kCalleeAttr)).getValue();
  auto signature = cast<ArrayAttr>(decl->getAttr(kSignatureAttr));
  auto typeOf = [&](unsigned i) {
    return cast<StringAttr>(signature[i]).getValue();
  };
  auto crossing = [](StringRef type) {
    return type == "f16" || type == "bf16" ? StringRef("u16") : type;
  };
  StringRef result = typeOf(0);
  os << "extern \"C\" __device__ " << crossing(result) << " "
     << decl.getSymName() << "(";
  for (unsigned i = 1; i < signature.size(); ++i)
    os << (i > 1 ? ", " : "") << crossing(typeOf(i)) << " a" << i - 1;
  // One line, so that clang's messages about it name the call's line.
  os << ") { ";
  std::string call = callee.str() + "(";
  for (unsigned i = 1; i < signature.size(); ++i) {
    std::string arg = "a" + std::to_string(i - 1);
    if (typeOf(i) == "f16")
      arg = "__ushort_as_half(" + arg + ")";
    else if (typeOf(i) == "bf16")
      arg = "__ushort_as_bfloat16(" + arg + ")";
    call += (i > 1 ? ", " : "") + arg;
  }
  call += ")";
  if (result == "void")
    os << call << ";";
  else if (result == "f16")
    os << "return __half_as_ushort(f16(" << call << "));";
  else if (result == "bf16")
    os << "return __bfloat16_as_ushort(bf16(" << call << "));";
  else
    os << "return " << call << ";";
  os << " }\n";
}

struct CroqLinkDeviceCodePass
    : mlir::croq::impl::CroqLinkDeviceCodePassBase<CroqLinkDeviceCodePass> {
  using CroqLinkDeviceCodePassBase::CroqLinkDeviceCodePassBase;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> shims;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function.isExternal() && function->hasAttr(kCalleeAttr))
        shims.push_back(function);
    if (shims.empty())
      return;
    auto top = module->getParentOfType<ModuleOp>();
    auto codeAttr =
        top ? top->getAttrOfType<StringAttr>("croq.device_code") : nullptr;
    StringRef code = codeAttr ? codeAttr.getValue() : StringRef();
    std::string names = withoutCommentsAndStrings(code);

    // A callee C++ resolves (the file's, CUDA's: __threadfence, atomicAdd)
    // is compiled. A plain callee that neither the file nor CUDA declares
    // stays external, under its own name: something linked later must
    // define it with C linkage. A qualified or templated one must be
    // declared in the file.
    SmallVector<LLVM::LLVMFuncOp> compiled, unsure;
    for (LLVM::LLVMFuncOp shim : shims) {
      StringRef callee = cast<StringAttr>(shim->getAttr(kCalleeAttr)).getValue();
      if (mentions(names, calleeName(callee))) {
        compiled.push_back(shim);
        continue;
      }
      if (calleeName(callee) != callee) {
        shim.emitError("device function '")
            << callee
            << "' is not declared in this file; declare it in a "
               "`__device__` function beside the `__co__` functions";
        return signalPassFailure();
      }
      unsure.push_back(shim);
    }
    if (!unsure.empty()) {
      // One try with them all; those clang calls undeclared go external.
      SmallVector<LLVM::LLVMFuncOp> all(compiled);
      llvm::append_range(all, unsure);
      std::string log;
      FailureOr<OwningOpRef<ModuleOp>> device =
          compile(source(code, all), all, &log);
      if (succeeded(device)) {
        if (failed(merge(**device, all)))
          return signalPassFailure();
        return;
      }
      for (LLVM::LLVMFuncOp shim : unsure) {
        StringRef callee =
            cast<StringAttr>(shim->getAttr(kCalleeAttr)).getValue();
        if (!StringRef(log).contains(
                ("use of undeclared identifier '" + callee + "'").str())) {
          compiled.push_back(shim);
          continue;
        }
        if (failed(makeExternal(shim, callee)))
          return signalPassFailure();
      }
    }
    if (compiled.empty())
      return;
    FailureOr<OwningOpRef<ModuleOp>> device =
        compile(source(code, compiled), compiled);
    if (failed(device))
      return signalPassFailure();
    if (failed(merge(**device, compiled)))
      return signalPassFailure();
  }

  /// The prelude, the file's device code and the shims of `shims`.
  static std::string source(StringRef code, ArrayRef<LLVM::LLVMFuncOp> shims) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << kPrelude << code << "\n";
    for (LLVM::LLVMFuncOp shim : shims)
      writeShim(os, shim);
    return text;
  }

  /// Renames `shim` to its plain callee, an external function with C
  /// linkage, with a warning.
  LogicalResult makeExternal(LLVM::LLVMFuncOp shim, StringRef callee) {
    gpu::GPUModuleOp module = getOperation();
    if (Operation *clash = SymbolTable::lookupSymbolIn(module, callee);
        clash && clash != shim.getOperation()) {
      // Only an external function of this name, made by an earlier call,
      // can stand for this one too.
      auto other = dyn_cast<LLVM::LLVMFuncOp>(clash);
      if (!other || !other.isExternal())
        return shim.emitError("device function '")
               << callee << "' is not declared in this file, and the kernel "
               << "module already has a symbol of that name";
      if (other.getFunctionType() != shim.getFunctionType())
        return shim.emitError("device function '")
               << callee << "', which this file does not declare, is called "
               << "with two signatures (" << shim.getFunctionType() << " and "
               << other.getFunctionType()
               << "); an external function with C linkage has one";
      // Another call of the same signature: one declaration.
      if (failed(SymbolTable::replaceAllSymbolUses(shim.getOperation(),
                                                   other.getSymNameAttr(),
                                                   module)))
        return failure();
      shim.erase();
      return success();
    }
    shim.emitWarning("device function '")
        << callee
        << "' is not declared in this file or by CUDA: the kernel calls it "
           "as an external function with C linkage, to be linked in "
           "(ptxas -c, then nvlink) from code that defines it "
           "`extern \"C\" __device__`";
    if (failed(SymbolTable::replaceAllSymbolUses(
            shim.getOperation(), StringAttr::get(&getContext(), callee),
            module)))
      return failure();
    shim.setSymName(callee);
    shim->removeAttr(kCalleeAttr);
    shim->removeAttr(kSignatureAttr);
    return success();
  }

  /// Moves the functions and globals of the compiled device code into the
  /// kernel module: a definition replaces the shim's declaration, a
  /// declaration the module already has is dropped.
  LogicalResult merge(ModuleOp device, ArrayRef<LLVM::LLVMFuncOp> shims) {
    gpu::GPUModuleOp module = getOperation();
    LLVM::LLVMFuncOp first = shims.front();
    OpBuilder builder(module.getBodyRegion());
    for (Operation &op : llvm::make_early_inc_range(*device.getBody())) {
      // NVPTX has no comdats or module flags.
      if (!isa<LLVM::LLVMFuncOp, LLVM::GlobalOp>(op))
        continue;
      StringAttr name = SymbolTable::getSymbolName(&op);
      Operation *existing = SymbolTable::lookupSymbolIn(module, name);
      auto function = dyn_cast<LLVM::LLVMFuncOp>(op);
      auto global = dyn_cast<LLVM::GlobalOp>(op);
      bool definition = function ? !function.isExternal()
                                 : global.getValueOrNull() ||
                                       !global.getInitializerRegion().empty();
      if (existing) {
        auto declared = dyn_cast<LLVM::LLVMFuncOp>(existing);
        if (!definition)
          continue;
        if (!declared || !declared.isExternal()) {
          first.emitError("the device code defines '")
              << name.getValue()
              << "', which the kernel module already has; rename it";
          return failure();
        }
        if (declared.getFunctionType() != function.getFunctionType()) {
          first.emitError("the device code defines '")
              << name.getValue() << "' as " << function.getFunctionType()
              << ", but the kernel calls it as " << declared.getFunctionType();
          return failure();
        }
        existing->erase();
      }
      // (The insertion point may have been the erased declaration.)
      builder.setInsertionPointToStart(module.getBody());
      // A __device__ variable is the module's, so all its kernels (croq
      // puts every kernel in one module) share it, as in CUDA.
      Operation *copy = builder.clone(op);
      copy->removeAttr("comdat");
      // Only this module's kernels call them: internal, so that the
      // backend inlines and drops them.
      if (auto defined = dyn_cast<LLVM::LLVMFuncOp>(copy);
          defined && !defined.isExternal())
        defined.setLinkage(LLVM::Linkage::Internal);
    }
    // Every shim's declaration is now its definition.
    return success();
  }

  /// Compiles `source` with clang to LLVM bitcode and imports it as the
  /// LLVM dialect; errors go to `at`, with clang's own messages as a note.
  FailureOr<OwningOpRef<ModuleOp>> compile(StringRef source,
                                           ArrayRef<LLVM::LLVMFuncOp> shims,
                                           std::string *failureLog = nullptr) {
    Operation *at = shims.front();
    std::string compiler = clang.getValue();
    if (!llvm::sys::fs::can_execute(compiler)) {
      at->emitError("calling device functions written in C++ needs clang to "
                    "compile them, and '")
          << compiler
          << "' is not an executable; name one with --croq-clang=PATH "
             "(croq-translate) or the pipeline's clang=PATH option";
      return failure();
    }
    std::string chip = "sm_90a";
    for (Attribute attr : getOperation().getTargetsAttr()
                              ? getOperation().getTargetsAttr().getValue()
                              : ArrayRef<Attribute>{})
      if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(attr))
        chip = nvvm.getChip().str();

    SmallString<128> input, output, errors;
    if (llvm::sys::fs::createTemporaryFile("croq-device", "cu", input) ||
        llvm::sys::fs::createTemporaryFile("croq-device", "bc", output) ||
        llvm::sys::fs::createTemporaryFile("croq-device", "log", errors)) {
      at->emitError("cannot create temporary files for the device code");
      return failure();
    }
    auto cleanup = llvm::scope_exit([&] {
      llvm::sys::fs::remove(input);
      llvm::sys::fs::remove(output);
      llvm::sys::fs::remove(errors);
    });
    {
      std::error_code ec;
      llvm::raw_fd_ostream file(input, ec);
      if (ec) {
        at->emitError("cannot write the device code: ") << ec.message();
        return failure();
      }
      file << source;
    }
    std::string arch = "--cuda-gpu-arch=" + chip;
    std::string cudaPath = "--cuda-path=" + toolkit.getValue();
    SmallVector<StringRef> argv = {compiler,
                                   "-x",
                                   "cuda",
                                   "--cuda-device-only",
                                   arch,
                                   cudaPath,
                                   "-std=c++17",
                                   "-O3",
                                   "-Wno-unknown-cuda-version",
                                   "-emit-llvm",
                                   "-c",
                                   input,
                                   "-o",
                                   output};
    // CUDA 13 keeps libcu++ (cuda/std/...), which its own headers include,
    // under include/cccl.
    std::string cccl = toolkit.getValue() + "/include/cccl";
    if (llvm::sys::fs::is_directory(cccl)) {
      argv.insert(argv.end() - 4, "-isystem");
      argv.insert(argv.end() - 4, cccl);
    }
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(errors),
                                            StringRef(errors)};
    std::string message;
    int rc = llvm::sys::ExecuteAndWait(compiler, argv, std::nullopt,
                                       redirects, /*SecondsToWait=*/120,
                                       /*MemoryLimit=*/0, &message);
    if (rc != 0) {
      auto log = llvm::MemoryBuffer::getFile(errors);
      StringRef text = log ? (*log)->getBuffer() : StringRef();
      if (failureLog) {
        *failureLog = text.str();
        return failure();
      }
      // The error goes to the call whose line clang's first error names,
      // when it names one.
      StringRef first = text.substr(0, text.find(": error:"));
      first = first.substr(first.rfind('\n') + 1);
      for (LLVM::LLVMFuncOp shim : shims)
        if (auto loc = shim.getLoc()->findInstanceOf<FileLineColLoc>())
          if (first.starts_with((loc.getFilename().getValue() + ":" +
                                 Twine(loc.getLine()) + ":")
                                    .str()))
            at = shim;
      InFlightDiagnostic diag =
          at->emitError("clang could not compile the device functions this "
                        "kernel calls");
      if (!message.empty())
        diag << ": " << message;
      if (log) {
        // The first errors say what is wrong; the rest is usually noise.
        SmallVector<StringRef> lines;
        text.split(lines, '\n');
        std::string shown;
        for (StringRef line : ArrayRef(lines).take_front(20))
          shown += line.str() + "\n";
        diag.attachNote() << "clang says:\n" << shown;
      }
      return failure();
    }
    llvm::LLVMContext llvmContext;
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> bitcode =
        llvm::parseIRFile(output, diagnostic, llvmContext);
    if (!bitcode) {
      at->emitError("cannot read the bitcode clang wrote: ")
          << diagnostic.getMessage();
      return failure();
    }
    // What clang's module says of itself (its data layout, its module
    // flags) the kernel module does not take, and the importer would warn
    // about parts of it. Intrinsics stay llvm.call_intrinsic: the export
    // turns them back.
    bitcode->setDataLayout("");
    if (llvm::NamedMDNode *flags = bitcode->getModuleFlagsMetadata())
      bitcode->eraseNamedMetadata(flags);
    OwningOpRef<ModuleOp> imported = translateLLVMIRToModule(
        std::move(bitcode), &getContext(), /*emitExpensiveWarnings=*/false,
        /*dropDICompositeTypeElements=*/true, /*loadAllDialects=*/false,
        /*preferUnregisteredIntrinsics=*/true);
    if (!imported) {
      at->emitError("cannot import the device code's LLVM IR into MLIR");
      return failure();
    }
    return imported;
  }
};

} // namespace

std::string mlir::croq::getDefaultClangPath() { return CROQ_DEFAULT_CLANG; }

void mlir::croq::registerConvertCroqToLLVMInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, CroqDialect *dialect) {
    dialect->addInterfaces<CroqToLLVMInterface>();
  });
}
