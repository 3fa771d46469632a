//===- IRGenImpl.h - The Croqtile IR generator, shared by its parts -*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// The IRGen class, private to the frontend. Its definition is split by
// category: IRGenExpr.cpp (diagnostics, types, expressions), IRGenView.cpp
// (views), IRGenStmt.cpp (statements, declarations, assignments),
// IRGenParallel.cpp (parallel, foreach, with, if, while, inthreads),
// IRGenCopy.cpp (copies, futures, events), IRGenMma.cpp and
// IRGenFunction.cpp (functions and the module).
//
// Values: program-control integers (`int`, parallel and foreach indices,
// symbolic dimensions) are `index`; a bounded variable carries its upper
// bound `#x` as a second value. Names reassigned in a loop, a branch or a
// nested parallel are threaded through scf.for iter_args, scf.if results or
// croq.parallel results, so the IR stays in SSA form.
//
// Fragments get their shape and role from the MMA that uses them, and a
// `dma.any` placeholder its buffer from the copy or swap that defines it,
// which may come later in the program: Sema (Sema.h) works these out from
// the syntax tree first, and IRGen runs once.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_IRGENIMPL_H
#define CROQ_LIB_FRONTEND_CROQTILE_IRGENIMPL_H

#include "IRGen.h"
#include "Sema.h"
#include "Parser.h"

#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Frontend/Croqtile/Importer.h"
#include "Croq/Analysis/Futures.h"
#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::croq::croqtile {
using llvm::SMLoc;
using llvm::StringRef;
} // namespace mlir::croq::croqtile

namespace mlir::croq::croqtile {

/// A value of an expression: the value and, for bounded variables, `#x`.
struct EVal {
  EVal() = default;
  EVal(Value value, Value bound = Value(), bool literal = false)
      : value(value), bound(bound), literal(literal) {}
  Value value;
  Value bound;
  bool literal = false;
  explicit operator bool() const { return static_cast<bool>(value); }
};

/// The flags that break, continue and yield set. Loops, branches and
/// parallels carry them out of their bodies like variables.
enum class ControlFlag { Break, Continue, Yield };
inline constexpr unsigned kNumControlFlags = 3;

/// What a loop, a branch or a parallel carries out of its body: a variable,
/// by its name, or a control flag.
struct Carried {
  Carried(std::string name, bool scaledSum = false)
      : name(std::move(name)), scaledSum(scaledSum) {}
  Carried(const char *name) : name(name) {}
  Carried(ControlFlag flag) : flag(flag) {}
  /// Element `element` of the array of accumulators `name`.
  static Carried elementOf(std::string name, int element) {
    Carried c(std::move(name));
    c.element = element;
    return c;
  }
  std::string name;
  std::optional<ControlFlag> flag;
  /// Where the body first assigns it (an assignment or an increment), when
  /// known: errors about the assignment point there.
  llvm::SMLoc at;
  /// An element of an array of accumulators (Symbol::Kind::FragArray), or -1.
  int element = -1;
  /// The scaled sum of a block-scaled accumulator (Symbol::scaledSum), which
  /// follows the entry for its product.
  bool scaledSum = false;
  bool isFlag() const { return flag.has_value(); }
};

/// What a statement writes, as the carried-value analysis collects it: a
/// variable or a control flag, or (`waitedMma`) the future of an async MMA
/// that a wait completes, whose accumulator then changes.
struct Assigned {
  Carried what;
  bool waitedMma = false;
};

struct Symbol {
  enum class Kind {
    Scalar,
    Tensor,
    Event,
    Future,
    Frag,
    FragArray,
    Stream,
    Shape,
    Tile
  };
  Kind kind;
  Value value;
  Value bound = nullptr;
  bool isMutable = false;
  bool isParallelIndex = false;
  /// The statement that made a fragment or a future.
  const Stmt *origin = nullptr;
  /// An accumulator whose type its mma.fill could not make (Sema could not
  /// shape it, or the shape is no fragment's): a stand-in of some type
  /// holds its place until the MMA that uses it reports why, unless an
  /// error in that MMA's operands (the cause, more often) comes first.
  bool unshaped = false;
  /// Scope depth of the declaration (swap needs equal scopes).
  unsigned scope = 0;
  /// The elements of an mdspan or ituple (Kind::Shape), with their bounds
  /// when they are bounded variables (`index = {x, y} in [...]`).
  SmallVector<EVal> elems = {};
  /// A `with` index tuple's element names (`with index = {x, y} in ...`):
  /// `foreach x` re-declares the tuple with element 0 the loop's index
  /// (rebindTupleElement); another variable named x changes nothing.
  SmallVector<std::string> elemNames = {};
  /// A register tile (Kind::Tile): its index in IRGen::tiles.
  int tile = -1;
  /// An array of accumulators (Kind::FragArray, `frag mc[2][3] {0};`): its
  /// extents, and its accumulators in row-major order, each carried as a
  /// variable of its own (Carried::element).
  SmallVector<int64_t, 0> arrayShape = {};
  SmallVector<Value, 0> fragElements = {};
  /// A block-scaled accumulator (one that a standalone `mma.scale`
  /// scales): `value` is the product of the MMAs since the last scale and
  /// this the scaled sum before them; `zeroProduct` is the zero product its
  /// mma.fill made, which each scale starts the next one from.
  Value scaledSum = nullptr;
  Value zeroProduct = nullptr;
  /// `with ... where a <-> b`: this name stands for the variable `aliasOf`
  /// (lookup follows it).
  std::string aliasOf = {};
};

/// How the parts of a row frag accumulate (see RegisterTile::partial).
enum class PartialOp { Sum, Max };

/// How a register tile's elements are dealt out over its threads.
enum class TileLayout {
  /// The threads of one instance of a thread-level parallel (T of them):
  /// row i is thread i % T's, in registers q * C ... q * C + C - 1 of a
  /// private buffer, q = i / T. A whole row is one thread's, so row
  /// reductions need no other thread; a 1-D tile is a tile of rows of one
  /// element.
  RowCyclic,
  /// A warpgroup's [64, N] tile in the wgmma accumulator layout (see
  /// croq.mma.coords): N / 2 registers a thread, like an MMA accumulator.
  WgmmaAcc,
  /// A warpgroup's [64] tile of the rows of that layout: a thread holds the
  /// two rows its accumulator registers lie in (16w + l / 4, and 8 more),
  /// the four threads of a quad the same ones.
  WgmmaRows,
};

/// A register tile, `frag T[R] x;` or `frag T[R, C] x;`.
struct RegisterTile {
  TileLayout layout;
  SmallVector<int64_t> shape;
  Type element;
  /// Declared of an unsigned type (`frag u8 [64, 32] a;`): an MMA reads its
  /// bytes as unsigned.
  bool isUnsigned = false;
  /// The thread's registers: memref<count x T, private>.
  Value registers;
  /// RowCyclic: the instance's threads, and this thread's rank among them.
  int64_t threads;
  Value rank;
  /// The parallel whose instance holds the tile.
  Operation *owner;
  /// A WgmmaRows tile written inside an apply over a 2-D tile of the wgmma
  /// layout: each thread holds only its own columns' part of each row (a
  /// row spans the four threads of a quad) until all_reduce_* combines them.
  bool partial = false;
  PartialOp partialOp = PartialOp::Sum;
  /// WgmmaRows: the rows' values before they became parts (memref<2 x T>).
  Value snapshot;
  int64_t rows() const { return shape[0]; }
  int64_t cols() const { return shape.size() > 1 ? shape[1] : 1; }
  int64_t rowsPerThread() const { return llvm::divideCeil(rows(), threads); }
  int64_t registerCount() const {
    switch (layout) {
    case TileLayout::RowCyclic:
      return rowsPerThread() * cols();
    case TileLayout::WgmmaAcc:
      return cols() / 2;
    case TileLayout::WgmmaRows:
      return 2;
    }
    llvm_unreachable("unknown layout");
  }
};

/// The element an `apply` is at (its loops are unrolled): the layout and
/// shape of the tile or accumulator it runs over, and the register.
struct ApplyPoint {
  TileLayout layout;
  Operation *owner;
  int64_t rows, cols;
  /// RowCyclic: the row register q and the column; wgmma layouts: the
  /// register.
  int64_t q = 0, col = 0, reg = 0;
  SmallVector<std::string> names;
};

/// One argument of a view operation after shape arguments are spliced:
/// `chunkat(index)` with `index = {x, y}` is `chunkat(x, y)`. `value` is set
/// for spliced elements; other arguments are evaluated where they are used.
struct ViewArg {
  const Expr *expr;
  std::optional<EVal> value;
  bool isWildcard() const {
    return !value && expr->kind == Expr::Kind::Name && expr->name == "_";
  }
};


class IRGen {
public:
  IRGen(MLIRContext *context, llvm::SourceMgr &sourceMgr,
        const SemaResult &sema)
      : context(context), builder(context), sourceMgr(sourceMgr), sema(sema) {}

  OwningOpRef<ModuleOp> run(const Program &program);

private:
  // Locations and diagnostics.
  Location loc(SMLoc smloc);
  InFlightDiagnostic error(SMLoc smloc, const Twine &message);
  LogicalResult fail(SMLoc smloc, const Twine &message, const Twine &hint = "");
  /// Fails at `smloc` where a rule Sema owns does not hold: Sema should
  /// have rejected the program, so this is a croq bug.
  LogicalResult internalError(SMLoc smloc, const Twine &what);
  /// Fails at `smloc` when values of `type` cannot take part in `what`
  /// (arithmetic or a conversion): 8-bit floats only move, for now.
  LogicalResult checkArithmetic(SMLoc smloc, Type type, const Twine &what);
  /// Fails at `smloc` when `divisor` is the constant 0 (of `what`).
  LogicalResult checkDivisor(SMLoc smloc, Value divisor, StringRef what);
  /// Fails at `smloc` when `index` is a constant outside [0, extent) (an
  /// extent that is dynamic or unknown bounds nothing but negatives).
  LogicalResult checkIndex(SMLoc smloc, Value index, int64_t extent,
                           const Twine &what);
  /// checkIndex, and for an index of an array of buffers (or of
  /// `noun`) also the range of a bounded index, or else a check on the host
  /// before the launch. `covered`, when given, tells whether the index is
  /// now known to be in bounds: proven here, or checked by the host.
  LogicalResult checkBufferIndex(SMLoc smloc, Value index, int64_t extent,
                                 const Twine &what,
                                 StringRef noun = "buffers",
                                 bool *covered = nullptr);
  /// "`what` at line L is out of bounds of its array of `extent` `noun`".
  std::string outOfBoundsMessage(SMLoc smloc, const Twine &what,
                                 int64_t extent, StringRef noun);

  // Scopes.
  void push() {
    scopes.emplace_back();
    flagScopes.emplace_back();
  }
  /// The scope depth at which each open parallel's body (and the body of
  /// an apply or a one-thread host statement) begins: break, continue and
  /// yield act within the innermost one.
  SmallVector<unsigned> parallelScopeDepths;
  /// The innermost `flag`, or null.
  Symbol *lookupFlag(ControlFlag flag) {
    for (auto it = flagScopes.rbegin(); it != flagScopes.rend(); ++it)
      if (std::optional<Symbol> &s = (*it)[static_cast<unsigned>(flag)])
        return &*s;
    return nullptr;
  }
  /// The innermost `flag` declared inside the innermost parallel, or null.
  Symbol *controlFlag(ControlFlag flag) {
    Symbol *s = lookupFlag(flag);
    if (!s || (!parallelScopeDepths.empty() && s->scope < parallelScopeDepths.back()))
      return nullptr;
    return s;
  }
  void declareFlag(ControlFlag flag, Symbol symbol) {
    symbol.scope = scopes.size();
    flagScopes.back()[static_cast<unsigned>(flag)] = symbol;
  }
  void pop() {
    scopes.pop_back();
    flagScopes.pop_back();
  }
  Symbol *lookup(StringRef name);
  Symbol *lookupCarried(const Carried &c) {
    return c.isFlag() ? lookupFlag(*c.flag) : lookup(c.name);
  }
  /// The value of `c` that a loop or branch carries.
  Value &carriedValue(const Carried &c) {
    Symbol *s = lookupCarried(c);
    if (c.element >= 0)
      return s->fragElements[c.element];
    return c.scaledSum ? s->scaledSum : s->value;
  }
  void declare(StringRef name, Symbol symbol) {
    symbol.scope = scopes.size();
    scopes.back()[name] = symbol;
  }
  /// Declares a name written in the source. Sema rejects a second
  /// declaration in one scope, and its scopes hold IRGen's (a function's
  /// parameters and body share one, a construct's indices and its body
  /// another), so finding one here is croq's bug. A copy that shadow()
  /// made of an outer symbol keeps that symbol's scope and does not count.
  LogicalResult declareNew(StringRef name, SMLoc at, Symbol symbol) {
    if (auto it = scopes.back().find(name);
        it != scopes.back().end() && it->second.scope == scopes.size())
      return internalError(at, "'" + name + "' declared twice in one scope");
    declare(name, symbol);
    return success();
  }
  /// Declares, in the innermost scope, copies of the symbols `carried`
  /// bound to `values` (their current values when `values` is empty); each
  /// keeps the scope of its declaration, which swap checks.
  void shadow(ArrayRef<Carried> carried, ValueRange values = {}) {
    for (auto [j, c] : llvm::enumerate(carried)) {
      if (c.scaledSum) {
        // The copy that the entry for its product declared.
        if (!values.empty())
          scopes.back()[c.name].scaledSum = values[j];
        continue;
      }
      Symbol copy = *lookupCarried(c);
      unsigned scope = copy.scope;
      if (c.element >= 0) {
        // Each element's entry updates the copy the previous one declared.
        if (!values.empty())
          copy.fragElements[c.element] = values[j];
        declare(c.name, copy);
        scopes.back()[c.name].scope = scope;
        continue;
      }
      if (!values.empty()) {
        // A loop-carried or branch-joined unsigned value stays unsigned.
        if (isUnsigned(copy.value))
          unsignedValues.insert(values[j]);
        copy.value = values[j];
      }
      if (c.isFlag()) {
        declareFlag(*c.flag, copy);
        flagScopes.back()[static_cast<unsigned>(*c.flag)]->scope = scope;
      } else {
        declare(c.name, copy);
        scopes.back()[c.name].scope = scope;
      }
    }
  }
  /// The current values of `carried`.
  SmallVector<Value> currentValues(ArrayRef<Carried> carried) {
    SmallVector<Value> values;
    for (const Carried &c : carried)
      values.push_back(carriedValue(c));
    return values;
  }
  /// Rebinds an existing variable or flag to a new value (keeps kind and
  /// origin).
  void rebind(const Carried &c, Value value) {
    if (Symbol *s = lookupCarried(c)) {
      if (c.element >= 0) {
        s->fragElements[c.element] = value;
        return;
      }
      if (c.scaledSum) {
        s->scaledSum = value;
        return;
      }
      if (isUnsigned(s->value))
        unsignedValues.insert(value);
      s->value = value;
    }
  }

  /// Puts the builder at the end of `block`, before its terminator if any.
  void setInsertionBeforeTerminator(Block *block) {
    if (block->mightHaveTerminator())
      builder.setInsertionPoint(block->getTerminator());
    else
      builder.setInsertionPointToEnd(block);
  }

  // Functions and statements.
  LogicalResult function(const Function &fn);
  LogicalResult statements(ArrayRef<StmtPtr> body);
  /// Runs `body` only where `cond` holds, threading reassigned names
  /// through scf.if results.
  LogicalResult guarded(Value cond, ArrayRef<StmtPtr> body, Location l);
  /// Declares the flags of a loop whose body breaks or continues.
  bool loopExits(ArrayRef<StmtPtr> body);
  LogicalResult statement(const Stmt &stmt);
  LogicalResult declaration(const Stmt &stmt);
  /// A returned tensor has the type the function's signature declares.
  LogicalResult checkReturnedTensor(const Expr &e, MemRefType type);
  /// Fills a host-declared global tensor with the value of `stmt`'s
  /// initializer, by a kernel of one thread per element.
  LogicalResult fillGlobal(const Stmt &stmt, Value buffer, Type element);
  /// Fails when `value` (of `e`) cannot initialise `element`s implicitly.
  LogicalResult checkInitializer(const Expr &e, Value value, Type element);
  LogicalResult assignment(const Stmt &stmt);
  LogicalResult parallel(const Stmt &stmt);
  /// [[launch_bounds(..)]] / [[maxnreg(..)]] of `stmt` onto its kernel.
  LogicalResult applyLaunchBounds(const Stmt &stmt, ParallelOp kernel);
  /// `parallel {r} by [C] : cluster` around the kernel's block level.
  LogicalResult applyCluster(const Stmt &stmt, ParallelOp kernel);
  LogicalResult foreach(const Stmt &stmt);
  LogicalResult with(const Stmt &stmt);
  /// The bounds of `w`, shapes spliced; one per index.
  FailureOr<SmallVector<Value>> withinBounds(const Within &w);
  /// Declares the indices of `w` (and its named tuple) as bounded variables.
  void declareWithin(const Within &w, ValueRange values, ValueRange bounds);
  /// `where a <-> b` of a with: a becomes another name of b.
  LogicalResult bindWhere(const Stmt &stmt);
  /// In the current scope, the visible with-tuples that hold `var` with
  /// that element now `value` (the loop that iterates `var`).
  void rebindTupleElement(StringRef var, EVal value);
  /// The names a parallel's body assigns that flow out of it as results:
  /// carried(body) without the control flags, as break, continue and yield
  /// act within the parallel.
  SmallVector<Carried> carriedOutOfParallel(ArrayRef<StmtPtr> body);
  /// The types of the values `carried` have now.
  SmallVector<Type> typesOf(ArrayRef<Carried> carried);
  /// Fills the body of `op`, a parallel that carries `carriedNames` out:
  /// in a scope of its own (where break / continue / yield act), the names
  /// shadowed, `fill` generates the body; their values are yielded and the
  /// names rebound to the results.
  LogicalResult parallelBody(ParallelOp op, ArrayRef<Carried> carriedNames,
                             function_ref<LogicalResult()> fill);
  LogicalResult ifStmt(const Stmt &stmt);
  /// scf.if of `c` over two bodies, carrying the names they assign.
  LogicalResult ifThenElse(Location l, Value c,
                           const std::vector<StmtPtr> &thenBody,
                           const std::vector<StmtPtr> *elseBody);
  LogicalResult whileStmt(const Stmt &stmt);
  LogicalResult inthreads(const Stmt &stmt);
  LogicalResult copy(const Stmt &stmt);
  /// Whether `v` is computed from the index of a thread-level parallel
  /// around the insertion point.
  bool dependsOnThreadIndex(Value v);
  /// The source of `dma.transp<p...>` seen through its permutation.
  FailureOr<Value> transposedView(const Stmt &stmt, Value source);
  /// dma.pad<{low}, {high}, {mid}, value>: the padded buffer.
  LogicalResult padCopy(const Stmt &stmt, Value source);
  LogicalResult dmaAny(const Stmt &stmt);
  LogicalResult mmaFill(const Stmt &stmt);
  LogicalResult mmaLoad(const Stmt &stmt);
  /// `mma.load src, frag;`: the view into the register tile `frag`.
  LogicalResult mmaLoadInto(const Stmt &stmt, Value source);
  /// `__bar_sync(id, count)` / `__bar_arrive(id, count)`.
  LogicalResult namedBarrier(const Expr &e);
  /// Rejects an MMA operand view of unsigned integers.
  /// True when an MMA operand view holds unsigned integers.
  bool isUnsignedOperand(Value view);
  LogicalResult mma(const Stmt &stmt);
  /// The metadata fragment of `stmt`'s sparse MMA (its fourth operand, a
  /// view that mma.load named) for an accumulator `acc` and A `a` over K
  /// of `k`.
  FailureOr<Value> sparseMetadata(const Stmt &stmt, FragType acc, FragType a,
                                  int64_t k);
  LogicalResult mmaStore(const Stmt &stmt);
  /// `mma.scale acc, sa, sb;`: the product since the last scale, scaled,
  /// joins the sum.
  LogicalResult mmaScale(const Stmt &stmt);
  /// `sum + product * sa[row] * sb` of a block-scaled MMA at `stmt`, whose
  /// scales are stmt.scaleA and stmt.scaleB.
  FailureOr<Value> scaledSum(const Stmt &stmt, Value sum, Value product);
  /// An accumulator of `type` that no MMA wrote: a fill of zero.
  Value zeroFill(FragType type, Location l);
  /// `frag` with its registers 0 ... count - 1 loaded from the thread's
  /// private buffer `registers`.
  Value loadRegisters(Value frag, Value registers, int64_t count, Location l);
  /// A private buffer of `type` allocated at the top of the kernel around
  /// `owner` (or the open parallels), where LLVM keeps it in registers.
  Value registerBuffer(MemRefType type, Location l, ParallelOp owner);
  /// The accumulator an MMA, mma.fill or mma.store names: a frag, or an
  /// element of an array of them (`mc[i][j]`), whose row-major position
  /// `index` is a constant or a run-time value checked in bounds.
  struct AccumulatorRef {
    Symbol *symbol = nullptr;
    std::string name;
    Value index;
  };
  FailureOr<AccumulatorRef> accumulatorRef(const Expr &e, StringRef use);
  /// The value of `acc`: a run-time element is chosen among the array's.
  Value accumulatorValue(const AccumulatorRef &acc, Location l);
  /// Makes `value` the value of `acc` (of each element the run-time index
  /// may name, the one it names).
  void setAccumulator(const AccumulatorRef &acc, Value value, Location l);
  /// Rejects a use of a block-scaled accumulator other than an MMA into
  /// it, mma.scale, mma.fill and mma.store.
  LogicalResult rejectBlockScaled(const Symbol &acc, llvm::SMLoc at,
                                  StringRef name);
  LogicalResult waitOrTrigger(const Stmt &stmt);
  LogicalResult swap(const Stmt &stmt);

  /// Variables defined outside `body` that it reassigns, and the control
  /// flags it sets, in a stable order.
  SmallVector<Carried> carried(ArrayRef<StmtPtr> body);
  /// Of `assigned` (written somewhere), those that must flow out of a
  /// region: futures, fragments, mutable scalars and control flags in scope.
  SmallVector<Carried> carriedOf(ArrayRef<Assigned> assigned);

  // Expressions.
  FailureOr<EVal> expr(const Expr &e);
  FailureOr<Value> indexExpr(const Expr &e);
  FailureOr<int64_t> constantExpr(const Expr &e);
  FailureOr<Value> view(const Expr &e);
  FailureOr<Value> viewMember(const Expr &e);
  /// `x.span_as(shape)`: a contiguous view with another shape.
  FailureOr<Value> spanAs(const Expr &e);
  /// `x.view(sizes[ : strides]).from(origin)`: a window at element offsets.
  FailureOr<Value> windowView(const Expr &from);
  /// `x.sqz()`: the view without its unit dimensions.
  FailureOr<Value> squeeze(const Expr &e);
  /// A shape assumption the host entry point checks before any launch:
  /// `ok` (built by `make` from host values) must hold, else the call fails
  /// with `message`. `values` are cloned before the kernel when they are
  /// computed inside it from host values only; false when they are not.
  bool checkOnHost(Location l, ArrayRef<Value> values,
                   function_ref<Value(OpBuilder &, ArrayRef<Value>)> make,
                   const Twine &message);
  /// Extent `d` of `view`, from the operands that made it where it can
  /// (so that it does not depend on a tile's indices). `ofWindows`: also
  /// through span_as, view(...).from(...) and subscripts; without it
  /// their extents are `memref.dim`s of the view, known only in the kernel.
  Value viewExtent(Value view, int64_t d, Location l, bool ofWindows = true);
  /// Names of the current function's parameters.
  std::vector<std::string> paramNames;
  const Function *currentFunction = nullptr;
  /// The buffer and indices of an element access `view.at(i, ...)`.
  FailureOr<std::pair<Value, SmallVector<Value>>> element(const Expr &at);
  /// `chunk` as the subspan of `extents` (one per dimension; those of `_`
  /// dimensions unused) at its indices: the same tile when the host checked
  /// that its chunks have those extents, with origins `index * extent`
  /// that need no division by the chunk count.
  Value chunkAsSubspan(ChunkAtOp chunk, ArrayRef<int64_t> extents, Location l);
  /// `&x.at(i, ...)` (or `&x`) as a device-call argument: the one-element
  /// view at the element, whose address the call passes.
  FailureOr<Value> elementAddress(const Expr &e);
  FailureOr<EVal> binary(const Expr &e);
  /// `__sqrt(x)`, `__pow(x, y)`, ...: none when `e` names no math built-in.
  std::optional<FailureOr<EVal>> mathBuiltin(const Expr &e);
  /// `__sigmoid`, `__gelu`, `__softplus`, `__sign`, `__isfinite` of a float
  /// `x`, computed in f32 (f64 for f64) and returned in its type.
  Value activation(StringRef name, Value x, Location l);
  /// The type of `c ? a : b` from its arms' (the literal one adapts; f16
  /// against bf16 is an error at `e`).
  FailureOr<Type> ternaryType(const Expr &e, const EVal &a, const EVal &b);
  std::optional<FailureOr<EVal>> atomicBuiltin(const Expr &e);
  /// `call croq::cuda::setreg_inc/dec(n)`: the register budget of the
  /// async role around it.
  LogicalResult setRegisters(const Expr &e);
  /// The callee of device call `e` as C++ spells it, with its template
  /// arguments that name Croqtile values evaluated.
  FailureOr<std::string> deviceCallee(const Expr &e);
  /// `call f(args)`: a croq.call with a result of `result` (none when
  /// null), unsigned when `unsignedResult`. Buffers and views pass as
  /// pointers, the rest by value.
  FailureOr<EVal> deviceCall(const Expr &e, Type result,
                             bool unsignedResult = false);
  /// `x++` / `x--` (the value before) or `++x` / `--x` (the value after) of
  /// a mutable scalar, which takes the new value.
  FailureOr<EVal> increment(const Expr &e, bool postfix);
  /// `i(k)`: the k-th value of a variable bounded by `bound`.
  FailureOr<EVal> boundedValueAt(const Expr &k, Value bound, Location l);

  // Register tiles (IRGenFrag.cpp).
  std::vector<RegisterTile> tiles;
  /// The innermost `apply` being generated, if any.
  std::optional<ApplyPoint> applyPoint;
  LogicalResult tileDecl(const Stmt &stmt, Type element);
  LogicalResult apply(const Stmt &stmt);
  /// Builds a host statement that Sema found reads or writes tensor
  /// elements, in a kernel of one thread.
  LogicalResult onOneThread(const Stmt &stmt);
  /// Builds a loop or branch, which must leave every row frag's `partial`
  /// as it found it.
  LogicalResult keepingRowParts(const Stmt &stmt,
                                function_ref<LogicalResult()> build);
  /// True when `body` (nested statements included) holds an MMA statement.
  static bool bodyHasMma(ArrayRef<StmtPtr> body);
  /// Whether the parallels in a block's body, also those inside its loops
  /// and branches, are all one warpgroup (`parallel by 1 : group-4`): the
  /// block's threads are that warpgroup's.
  bool bodyIsOneWarpgroup(ArrayRef<StmtPtr> body) const;
  /// Thread-level parallels of the comma form `group-4, t by 128 : thread`
  /// whose bodies hold MMAs, and blocks whose threads are one warpgroup:
  /// their frags of accumulator shape take the warpgroup layouts, to line
  /// up with the accumulators.
  llvm::DenseSet<Operation *> warpgroupTileOwners;
  /// `x.at(i, j)` of a register tile inside an apply: its register.
  FailureOr<std::pair<Value, SmallVector<Value>>> tileElement(const Expr &at,
                                                              const Symbol &s);
  /// The register of the executing thread that `.at` of a tile (or
  /// accumulator) of `layout` and `shape` names inside the apply, or an
  /// error where it may be another thread's.
  FailureOr<int64_t> applyRegister(const Expr &at, TileLayout layout,
                                   Operation *owner, ArrayRef<int64_t> shape);
  /// `acc.at(i, j)` of a warpgroup MMA accumulator inside an apply.
  FailureOr<int64_t> accRegister(const Expr &at, const Symbol &acc);
  /// reduce_max / reduce_sum / all_reduce_sum / all_reduce_max / copy;
  /// std::nullopt when `e` is none of them.
  std::optional<LogicalResult> tileBuiltin(const Expr &e);
  FailureOr<int> tileOperand(const Expr &e, StringRef what);
  /// `value` combined over the four threads of a quad (lanes 4k ... 4k + 3,
  /// which share the rows of the wgmma layout): two butterfly shuffles.
  Value overQuad(Value value, function_ref<Value(Value, Value)> combine,
                 Location l);
  /// The tile whose accumulation statement's value is being generated:
  /// the one read of row parts allowed (-1: none).
  int accumulatingTile = -1;
  /// How `stmt`, a write of a row frag in an apply over a 2-D tile,
  /// accumulates: `x.at(i) += e`, `x.at(i) = x.at(i) + e` or
  /// `x.at(i) = __max(x.at(i), e)`; an error for anything else.
  FailureOr<PartialOp> rowAccumulation(const Stmt &stmt);

  // Shapes: mdspans (`[a, b]`, `x.span`, `s : [..]`) and ituples (`{a, b}`).
  /// True when `e` denotes a whole shape rather than one value.
  bool isShapeValued(const Expr &e);
  /// `t[(1), (0)]` of a tensor name, integers in parentheses: the dims
  /// it picks, as a shape.
  bool isTensorPick(const Expr &e);
  /// The extents of the view `e` (`e.span`).
  FailureOr<SmallVector<EVal>> viewShape(const Expr &e);
  /// `e` as one extent or index of a shape: an integer, as an index.
  FailureOr<EVal> extentValue(const Expr &e);
  /// The elements of the shape `e` (index values).
  /// `lhs op rhs` of shapes (or a shape and a scalar), element-wise; op is
  /// + - * / % or cdiv.
  FailureOr<SmallVector<EVal>> shapeArithmetic(StringRef op, const Expr &lhs,
                                               const Expr &rhs, SMLoc at);
  FailureOr<SmallVector<EVal>> shapeOf(const Expr &e);
  /// Evaluates `args`, splicing each shape-valued one into its elements.
  FailureOr<SmallVector<EVal>> spliceList(ArrayRef<ExprPtr> args);
  /// `args` with shape-valued ones spliced, unevaluated otherwise.
  FailureOr<SmallVector<ViewArg>> viewArgs(ArrayRef<ExprPtr> args);
  FailureOr<EVal> argValue(const ViewArg &arg);
  FailureOr<Value> argIndex(const ViewArg &arg);
  LogicalResult shapeDecl(const Stmt &stmt);

  // print, println and assert.
  LogicalResult print(const Stmt &stmt);
  /// `__cpp__("...")` in device code: its text becomes the body of a
  /// `__device__` function of its own (in deviceCodeExtra), called here.
  LogicalResult cpp(const Stmt &stmt);
  /// `__asm__(...)`: an llvm.inline_asm in the executing thread; outputs
  /// are assigned to their scalars or stored to their elements.
  LogicalResult inlineAsm(const Stmt &stmt);
  LogicalResult assertStmt(const Stmt &stmt);
  /// Appends `e` to a printf format and its arguments.
  LogicalResult appendPrinted(const Expr &e, std::string &format,
                              SmallVectorImpl<Value> &args);
  Value coerce(Value value, Type type, Location l);
  /// `v != 0` as an i1 (an i1 is itself).
  Value truthValue(Value v, Location l);
  /// The kernel (the outermost croq.parallel) around the insertion point,
  /// or null in host code.
  Operation *enclosingKernel() {
    Operation *kernel = nullptr;
    for (Operation *p = builder.getInsertionBlock()->getParentOp(); p;
         p = p->getParentOp())
      if (isa<ParallelOp>(p))
        kernel = p;
    return kernel;
  }
  /// `&&`, `||` or `?:` whose operands read memory, evaluated as C does:
  /// each operand in the branch where the condition lets it run.
  FailureOr<EVal> shortCircuit(const Expr &e);
  /// Unsigned element types (u8 ... u64) lower to signless integers; these
  /// sets keep what is unsigned: tensors declared so, and the values read
  /// from them or computed from such values. Division, remainder,
  /// comparisons, right shifts and conversions of them are the unsigned
  /// forms.
  llvm::DenseSet<Value> unsignedTensors, unsignedValues;
  bool isUnsigned(Value v) { return unsignedValues.contains(v); }
  /// `v`, an integer of its final type, as a value of the named signedness
  /// (`__to<s32>(x)`, `u32 y = ...`): a value of the other signedness is
  /// copied (an arith.bitcast that canonicalization folds), so that the
  /// value it came from keeps its own (a constant is a new constant).
  Value withSignedness(Value v, bool isUnsignedType, Location l) {
    if (!v.getType().isSignlessInteger() || v.getType().isInteger(1) ||
        isUnsigned(v) == isUnsignedType)
      return v;
    // A constant stays one (analyses read it), as a constant of its own.
    TypedAttr constant;
    Value copy = matchPattern(v, m_Constant(&constant))
                     ? Value(arith::ConstantOp::create(builder, l, constant))
                     : Value(arith::BitcastOp::create(builder, l, v.getType(), v));
    if (isUnsignedType)
      unsignedValues.insert(copy);
    return copy;
  }
  /// The tensor `buffer` is a view of (through views and future data).
  Value rootTensor(Value buffer);
  static bool isUnsignedName(StringRef type) {
    return type == "u1" || type == "bin1" || type == "u2" || type == "u4" || type == "u6" || type == "u8" ||
           type == "u16" || type == "u32" || type == "u64";
  }
  Value constIndex(int64_t v, Location l) {
    return arith::ConstantIndexOp::create(builder, l, v);
  }
  Type elementType(StringRef name, SMLoc at);
  std::optional<int64_t> asConstant(Value v) {
    APInt c;
    if (v && matchPattern(v, m_ConstantInt(&c)))
      return c.getSExtValue();
    return std::nullopt;
  }
  /// The parallels whose bodies are being generated, innermost last: the
  /// regions of an op still being built (a while loop's) are not attached
  /// yet, so the IR around the insertion point cannot tell.
  SmallVector<ParallelOp> openParallels;
  bool insideParallel() {
    if (!openParallels.empty())
      return true;
    return builder.getInsertionBlock() &&
           builder.getInsertionBlock()->getParentOp() &&
           (isa<ParallelOp>(builder.getInsertionBlock()->getParentOp()) ||
            builder.getInsertionBlock()->getParentOp()->getParentOfType<ParallelOp>());
  }
  /// The scope that holds fragments made here: the nearest parallel level
  /// above `thread` (a `group-4` body, also through its `thread` level,
  /// makes warpgroup fragments; anything else warp fragments).
  Level fragmentScope() {
    if (!insideParallel())
      return Level::Warp;
    for (ParallelOp p = enclosingParallel(); p; p = p.getParentParallel())
      if (p.getLevel() != Level::Thread)
        return p.getLevel() == Level::Warpgroup ? Level::Warpgroup
                                                : Level::Warp;
    return Level::Warp;
  }
  ParallelOp enclosingParallel() {
    if (!openParallels.empty())
      return openParallels.back();
    Operation *op = builder.getInsertionBlock()->getParentOp();
    if (!op)
      return {};
    if (auto p = dyn_cast<ParallelOp>(op))
      return p;
    return op->getParentOfType<ParallelOp>();
  }
  LogicalResult checkFuturesWaited(func::FuncOp func);
  /// The type of the accumulator `fill` makes, from Sema's `facts`; null
  /// when it has none, reported when `report` is set: at `mma` (the MMA
  /// that gives the shape), with a note at `fill`, or at `fill`.
  Type accumulatorType(const Stmt &fill, const AccumulatorFacts &facts,
                       bool report, const Stmt *mma = nullptr);
  /// Reports why the mma.fill of `acc`, an unshaped accumulator, could not
  /// type it: at `mma` when the MMA that uses it asks.
  LogicalResult reportUnshaped(const Symbol &acc, const Stmt *mma = nullptr);

  MLIRContext *context;
  OpBuilder builder;
  llvm::SourceMgr &sourceMgr;
  /// What Sema learned of the program: the types that later statements
  /// give.
  const SemaResult &sema;
  /// Device C++ made from this program's `__cpp__` statements.
  std::string deviceCodeExtra;
  unsigned cppBlocks = 0;

  std::vector<llvm::StringMap<Symbol>> scopes;
  /// The control flags declared in each scope of `scopes`.
  std::vector<std::array<std::optional<Symbol>, kNumControlFlags>> flagScopes;
  SmallVector<Value> returned;
  bool hasReturn = false;
  unsigned inthreadsDepth = 0;
  OwningOpRef<ModuleOp> module;
};

} // namespace mlir::croq::croqtile

namespace mlir::croq::croqtile {
/// Whether `type` is laid out row-major without gaps (unit dimensions
/// aside): a view of it can take another shape (span_as), and a device
/// function that gets its first element's address sees all of it.
bool isContiguous(MemRefType type);


inline std::string typeString(Type type) {
  return ::mlir::croq::spellCroqtileType(type);
}
} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_IRGENIMPL_H
