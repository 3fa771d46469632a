//===- Evaluate.cpp - integer expressions at compile time -----------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Analysis/Evaluate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::croq;

namespace {

/// The integer operations the evaluators know.
enum class Code : uint8_t {
  Add, Sub, Mul, DivS, DivU, RemS, RemU, CeilDivS, FloorDivS, And, Or, Xor,
  Shl, ShrS, ShrU, MinS, MaxS, MinU, MaxU, Cmp, Select, Cast, ZeroExtend
};

/// An operation's code and what its semantics need beyond the operands.
struct Operator {
  Code code;
  arith::CmpIPredicate predicate = arith::CmpIPredicate::eq;
  /// Bits of the result, and of the operand a zero extension widens.
  unsigned width = 64, fromWidth = 64;
};

unsigned bitsOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

std::optional<Operator> classify(Operation *def) {
  if (def->getNumResults() != 1 || !def->getResult(0).getType().isIntOrIndex())
    return std::nullopt;
  std::optional<Code> code =
      llvm::TypeSwitch<Operation *, std::optional<Code>>(def)
          .Case([](arith::AddIOp) { return Code::Add; })
          .Case([](arith::SubIOp) { return Code::Sub; })
          .Case([](arith::MulIOp) { return Code::Mul; })
          .Case([](arith::DivSIOp) { return Code::DivS; })
          .Case([](arith::DivUIOp) { return Code::DivU; })
          .Case([](arith::RemSIOp) { return Code::RemS; })
          .Case([](arith::RemUIOp) { return Code::RemU; })
          .Case([](arith::CeilDivSIOp) { return Code::CeilDivS; })
          .Case([](arith::FloorDivSIOp) { return Code::FloorDivS; })
          .Case([](arith::AndIOp) { return Code::And; })
          .Case([](arith::OrIOp) { return Code::Or; })
          .Case([](arith::XOrIOp) { return Code::Xor; })
          .Case([](arith::ShLIOp) { return Code::Shl; })
          .Case([](arith::ShRSIOp) { return Code::ShrS; })
          .Case([](arith::ShRUIOp) { return Code::ShrU; })
          .Case([](arith::MinSIOp) { return Code::MinS; })
          .Case([](arith::MaxSIOp) { return Code::MaxS; })
          .Case([](arith::MinUIOp) { return Code::MinU; })
          .Case([](arith::MaxUIOp) { return Code::MaxU; })
          .Case([](arith::CmpIOp) { return Code::Cmp; })
          .Case([](arith::SelectOp) { return Code::Select; })
          .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
              [](Operation *) { return Code::Cast; })
          .Case<arith::ExtUIOp, arith::IndexCastUIOp>(
              [](Operation *) { return Code::ZeroExtend; })
          // The frontend's copy of an integer that changes its signedness
          // (`__to<s32>(x)` of a u32): the same bits.
          .Case([](arith::BitcastOp op) -> std::optional<Code> {
            if (op.getIn().getType().isSignlessInteger())
              return Code::Cast;
            return std::nullopt;
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!code)
    return std::nullopt;
  Operator result{*code};
  result.width = bitsOf(def->getResult(0).getType());
  if (auto cmp = dyn_cast<arith::CmpIOp>(def))
    result.predicate = cmp.getPredicate();
  if (*code == Code::ZeroExtend)
    result.fromWidth = bitsOf(def->getOperand(0).getType());
  return result;
}

/// `v` as a value of `width` bits, as the IR reads it: wrapped to its width
/// and sign-extended (i32 arithmetic wraps as the GPU's does; an i1 true is
/// -1, which arith.extsi and signed comparisons see, and a test of it is
/// `!= 0`).
int64_t wrap(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  return llvm::SignExtend64(static_cast<uint64_t>(v), width);
}

std::optional<int64_t> apply(const Operator &op, ArrayRef<int64_t> x) {
  using P = arith::CmpIPredicate;
  switch (op.code) {
  case Code::Select:
    return x[0] ? x[1] : x[2];
  case Code::Cast:
    return wrap(x[0], op.width);
  case Code::ZeroExtend:
    return wrap(op.fromWidth < 64 ? x[0] & ((int64_t(1) << op.fromWidth) - 1)
                                  : x[0],
                op.width);
  default:
    break;
  }
  int64_t a = x[0], b = x[1];
  // Unsigned operations of negative values, division by zero and shifts
  // past the width have no value here.
  bool isUnsigned = op.code == Code::DivU || op.code == Code::RemU ||
                    op.code == Code::ShrU || op.code == Code::MinU ||
                    op.code == Code::MaxU ||
                    (op.code == Code::Cmp &&
                     (op.predicate == P::ult || op.predicate == P::ule ||
                      op.predicate == P::ugt || op.predicate == P::uge));
  if (isUnsigned && (a < 0 || b < 0))
    return std::nullopt;
  int64_t r = 0;
  // 64-bit overflow (index arithmetic) has no value here.
  switch (op.code) {
  case Code::Add:
    if (llvm::AddOverflow(a, b, r))
      return std::nullopt;
    break;
  case Code::Sub:
    if (llvm::SubOverflow(a, b, r))
      return std::nullopt;
    break;
  case Code::Mul:
    if (llvm::MulOverflow(a, b, r))
      return std::nullopt;
    break;
  case Code::DivS:
  case Code::DivU:
  case Code::RemS:
  case Code::RemU:
  case Code::CeilDivS:
  case Code::FloorDivS: {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
      return std::nullopt;
    bool inexact = a % b != 0;
    if (op.code == Code::DivS || op.code == Code::DivU)
      r = a / b;
    else if (op.code == Code::RemS || op.code == Code::RemU)
      r = a % b;
    else if (op.code == Code::CeilDivS)
      r = a / b + (inexact && (a < 0) == (b < 0));
    else
      r = a / b - (inexact && (a < 0) != (b < 0));
    break;
  }
  case Code::And: r = a & b; break;
  case Code::Or: r = a | b; break;
  case Code::Xor: r = a ^ b; break;
  case Code::Shl:
  case Code::ShrS:
  case Code::ShrU:
    if (b < 0 || b >= 63)
      return std::nullopt;
    r = op.code == Code::Shl
            ? static_cast<int64_t>(static_cast<uint64_t>(a) << b)
            : a >> b;
    break;
  case Code::MinS: case Code::MinU: r = std::min(a, b); break;
  case Code::MaxS: case Code::MaxU: r = std::max(a, b); break;
  case Code::Cmp:
    switch (op.predicate) {
    case P::eq: r = a == b; break;
    case P::ne: r = a != b; break;
    case P::slt: case P::ult: r = a < b; break;
    case P::sle: case P::ule: r = a <= b; break;
    case P::sgt: case P::ugt: r = a > b; break;
    case P::sge: case P::uge: r = a >= b; break;
    }
    break;
  default:
    llvm_unreachable("handled above");
  }
  return wrap(r, op.width);
}

/// The value of an integer constant (an i1 true is -1, see wrap).
std::optional<int64_t> constantOf(Value v) {
  APInt constant;
  if (!v.getType().isIntOrIndex() || !matchPattern(v, m_ConstantInt(&constant)))
    return std::nullopt;
  return constant.getSExtValue();
}

std::optional<int64_t> evaluate(Value v,
                                const DenseMap<Value, int64_t> &bindings,
                                unsigned depth) {
  if (depth > 64)
    return std::nullopt;
  if (auto it = bindings.find(v); it != bindings.end())
    return it->second;
  if (std::optional<int64_t> c = constantOf(v))
    return c;
  Operation *def = v.getDefiningOp();
  std::optional<Operator> op = def ? classify(def) : std::nullopt;
  if (!op)
    return std::nullopt;
  // A select needs only the operand its condition picks.
  if (op->code == Code::Select) {
    std::optional<int64_t> c = evaluate(def->getOperand(0), bindings, depth + 1);
    return c ? evaluate(def->getOperand(*c ? 1 : 2), bindings, depth + 1)
             : std::nullopt;
  }
  SmallVector<int64_t, 2> operands;
  for (Value operand : def->getOperands()) {
    std::optional<int64_t> x = evaluate(operand, bindings, depth + 1);
    if (!x)
      return std::nullopt;
    operands.push_back(*x);
  }
  return apply(*op, operands);
}

} // namespace

std::optional<int64_t>
mlir::croq::evaluateIndex(Value v, const DenseMap<Value, int64_t> &bindings) {
  return evaluate(v, bindings, 0);
}

/// One slot of a program: an input, a constant, a value it cannot know, or
/// an operation of earlier slots.
struct IndexProgram::Step {
  enum Kind : uint8_t { Input, Constant, Unknown, Apply } kind;
  Operator op{Code::Add};
  SmallVector<int, 3> operands;
};

IndexProgram::IndexProgram() = default;
IndexProgram::~IndexProgram() = default;

void IndexProgram::addInput(Value input) {
  if (slots.count(input))
    return;
  slots[input] = steps.size();
  steps.push_back({Step::Input, Operator{Code::Add}, {}});
  values.push_back(0);
  known.push_back(false);
}

int IndexProgram::slotOf(Value v, unsigned depth) {
  if (auto it = slots.find(v); it != slots.end())
    return it->second;
  Step step{Step::Unknown, Operator{Code::Add}, {}};
  int64_t value = 0;
  Operation *def = v.getDefiningOp();
  std::optional<Operator> op =
      def && depth <= 64 ? classify(def) : std::nullopt;
  if (std::optional<int64_t> c = constantOf(v)) {
    step.kind = Step::Constant;
    value = *c;
  } else if (op) {
    step.kind = Step::Apply;
    step.op = *op;
    for (Value operand : def->getOperands())
      step.operands.push_back(slotOf(operand, depth + 1));
  }
  int slot = steps.size();
  slots[v] = slot;
  steps.push_back(std::move(step));
  values.push_back(value);
  known.push_back(steps.back().kind == Step::Constant);
  return slot;
}

void IndexProgram::order(int slot, std::vector<int> &into,
                         std::vector<bool> &seen) {
  if (seen[slot])
    return;
  seen[slot] = true;
  for (int operand : steps[slot].operands)
    order(operand, into, seen);
  if (steps[slot].kind == Step::Apply)
    into.push_back(slot);
}

unsigned IndexProgram::compile(Value root) {
  int slot = slotOf(root, 0);
  std::vector<int> sequence;
  std::vector<bool> seen(steps.size(), false);
  order(slot, sequence, seen);
  // The root's own slot last: evaluate reads it there.
  if (sequence.empty() || sequence.back() != slot)
    sequence.push_back(slot);
  roots.push_back(std::move(sequence));
  return roots.size() - 1;
}

void IndexProgram::set(Value input, int64_t value) {
  int slot = slots.lookup(input);
  values[slot] = value;
  known[slot] = true;
}

std::optional<int64_t> IndexProgram::evaluate(unsigned root) {
  const std::vector<int> &sequence = roots[root];
  for (int slot : sequence) {
    const Step &step = steps[slot];
    if (step.kind != Step::Apply)
      continue;
    int64_t operands[3];
    bool ok = true;
    for (auto [i, operand] : llvm::enumerate(step.operands)) {
      ok &= known[operand];
      operands[i] = values[operand];
    }
    // A select of a known condition needs only the operand it picks.
    if (step.op.code == Code::Select && known[step.operands[0]]) {
      int picked = step.operands[operands[0] ? 1 : 2];
      ok = known[picked];
      operands[1] = operands[2] = values[picked];
    }
    std::optional<int64_t> r =
        ok ? apply(step.op, ArrayRef(operands, step.operands.size()))
           : std::nullopt;
    known[slot] = r.has_value();
    values[slot] = r.value_or(0);
  }
  int last = sequence.back();
  if (!known[last])
    return std::nullopt;
  return values[last];
}
