//===- AST.h - Croqtile syntax tree -----------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// A small syntax tree for the `__co__` subset of Croqtile: expressions
// (including views and bounded-variable operators), statements, and
// functions. It keeps every node's source location for diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_LIB_FRONTEND_CROQTILE_AST_H
#define CROQ_LIB_FRONTEND_CROQTILE_AST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::croq::croqtile {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Int,      // 42
    Float,    // 1.0f (isF32) or 1.0
    Bool,     // true / false
    Name,     // x, and `_`
    Unary,    // op: ! - ~ ++ --
    Postfix,  // x++ / x--
    Binary,   // op: || && == != < > <= >= << >> + - * / % & ^ | # #+ #- #* #/ #%
    Ternary,  // args: cond, then, else
    Bound,    // #x
    Count,    // |x.span|
    Call,     // name(args): cdiv, __max, ...; x(lo:hi:st) is a Range
    Member,   // base.name or base.name(args); typeArg for .name<T>
    Index,    // base[args]
    Range,    // name(lo : hi : step) in foreach; args may be null
    List,     // [a, b.span, ...]: an mdspan literal; args
    Tuple,    // {a, b, ...}: an ituple literal; args
    String,   // "text" (println, assert): name holds the unquoted text
    DeviceCall, // call f<8>(args): name holds the callee as C++ spells it
  };
  Kind kind;
  llvm::SMLoc loc;
  std::string name;         // Name / op / callee / member
  int64_t intValue = 0;
  double floatValue = 0;
  bool isF32 = false;
  bool hasArgs = false;     // Member with a call list
  std::vector<ExprPtr> args;
  ExprPtr base;
  std::vector<std::string> typeArgs; // .swiz<128>, .fill.f16
  /// Range of `foreach c = a(lo:hi)`: the body's name for a's range.
  std::string alias;
  /// Written in parentheses: `(1)` in `x.span[(1), 2]` picks element 1,
  /// where a bare `2` is an extent.
  bool parenthesized = false;
  /// DeviceCall with template arguments: the callee without them, and each
  /// argument as written and, where it parses as one, as an expression.
  std::string calleeBase;
  std::vector<std::string> templateText;
  std::vector<ExprPtr> templateExprs;
  /// Height of the tree below this node (bounded by the parser).
  unsigned height = 1;

  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

/// True when `pred` holds for `e` or an expression under it (its base and
/// arguments).
inline bool anyExpr(const Expr &e,
                    llvm::function_ref<bool(const Expr &)> pred) {
  if (pred(e) || (e.base && anyExpr(*e.base, pred)))
    return true;
  for (const ExprPtr &arg : e.args)
    if (arg && anyExpr(*arg, pred))
      return true;
  return false;
}

/// `x[i][j]...` (nested subscripts, or one with several arguments): the
/// name `x`, with `indices` its subscripts in order; `x` itself, with none.
/// Null for anything else.
inline const Expr *subscriptedName(const Expr &e,
                                   std::vector<const Expr *> &indices) {
  if (e.kind == Expr::Kind::Name)
    return &e;
  if (e.kind != Expr::Kind::Index || !e.base)
    return nullptr;
  const Expr *name = subscriptedName(*e.base, indices);
  if (name)
    for (const ExprPtr &arg : e.args)
      indices.push_back(arg.get());
  return name;
}

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

/// `[[name(args)]]` before a statement.
struct StmtAttribute {
  llvm::SMLoc loc;
  std::string name;
  std::vector<ExprPtr> args; // `_` is a Name
};

/// One level of a `parallel` chain.
struct ParallelLevel {
  llvm::SMLoc loc;
  std::vector<std::string> names; // empty: anonymous
  std::vector<llvm::SMLoc> nameLocs;
  std::vector<ExprPtr> bounds;
  std::string level; // "" when not annotated
  bool cooperative = false; // block<cooperative>
  /// `p = {a, b} by [..]`: the ituple of the indices, when named.
  std::string tupleName;
  llvm::SMLoc tupleLoc;
};

/// `x in mdx` or `{a, b} in [m, n]` of with / foreach.
struct Within {
  llvm::SMLoc loc;
  std::vector<std::string> names;
  std::vector<ExprPtr> bounds;
  /// `index = {a, b} in [..]`: the ituple of the indices, when named.
  std::string tupleName;
  llvm::SMLoc tupleLoc;
};

/// One operand of inline assembly: `[name] "constraint" (value)`.
struct AsmOperand {
  llvm::SMLoc loc;
  std::string name;       // symbolic name, or empty
  std::string constraint; // "=r", "+l", "r", "n", ...
  ExprPtr value;          // an lvalue for outputs
};

/// `where a <-> b` of a with: `a` names the same variable as `b`.
struct WhereBinding {
  llvm::SMLoc loc;
  std::string alias, target;
};

struct Stmt {
  enum class Kind {
    Block,
    ScalarDecl,  // [mutable] int|bool|ELEM name [= init]
    ShapeDecl,   // [mdspan[<N>]] name : shape;  ituple[<N>] name = tuple;
    TensorDecl,  // [storage] ELEM [dims] name[arr] ...
    EventDecl,   // [storage] event[<N>] name[dims] [= ready]
    StreamDecl,  // stream s;
    Assign,      // target op= value  (op "=" declares a new name)
    ExprStmt,    // x++ etc.
    Dma,         // [result =] dma|tma ...
    DmaAny,      // result = dma.any | tma.any
    MmaFill,     // result = mma.fill[.T] value; frag[.T] result[dims] {value};
                 // mma.fill acc[, target element], value
    MmaLoad,     // result = mma.load[.swiz<N>] view
    Mma,         // [result =] mma.lay[.async|.scale] acc, a, b[, sa, sb]
    MmaScale,    // mma.scale acc, sa, sb
    MmaStore,    // mma.store acc, view
    MmaCommit,   // mma.commit / mma.wait<N>
    Wait,        // wait targets
    Trigger,     // trigger targets [after futures]
    Swap,        // swap(a, b) / rotate(a, b, ...)
    Sync,        // sync.shared / sync.global / sync.barrier : level
    Print,       // print(args) / println(args); `print!` at compile time
    Assert,      // assert(cond[, "message"])
    Cpp,         // __cpp__("C++ statements"): cxx
    Asm,         // __asm__ [volatile] ("template" : outs : ins : clobbers)
    Parallel,
    With,
    Foreach,
    InThreads,
    Apply,       // apply {i, j} in x.span body: operands the names, source x.span
    If,
    While,
    Break,
    Continue,
    Yield,       // yield; ends the thread's part of the innermost parallel
    Return,
  };
  Kind kind;
  llvm::SMLoc loc;
  std::vector<StmtAttribute> attributes;

  // Names and types.
  std::string name;             // declared / assigned / result name
  llvm::SMLoc nameLoc;
  std::string elemType;         // int, bool, f16, ... ; MmaFill accumulator type
  std::string storage;          // global / shared / local / ""
  bool isMutable = false;
  bool isStatic = false;        // print! / println!: at compile time
  bool newline = false;         // println
  bool refill = false;          // `mma.fill acc, v;` of an existing fragment
  const Expr *unroll = nullptr; // foreach ... : unroll(n), n constant
  const Expr *vectorizeIndex = nullptr; // foreach ... : vectorize(i, n)
  std::vector<ExprPtr> dims;    // tensor dims
  std::vector<ExprPtr> arrayDims; // name[ARR] of buffers / events / accumulators
  std::optional<int64_t> arrivals; // event<N>
  std::optional<int64_t> rank;  // mdspan<N> / ituple<N> of a ShapeDecl
  bool ready = false;           // = ready
  std::vector<StmtPtr> moreDecls; // `a[2], b[2]` in one declaration

  // Assignments and expressions.
  std::string op;               // "=", "+=", ...; engine ("dma"/"tma")
  ExprPtr target;               // assignment target (Name or element); the
                                // accumulator element a refill fills
  ExprPtr value;                // init / value / mma.fill value / condition

  // Copies.
  std::string copyKind;         // copy / load / transp
  std::vector<int64_t> permutation; // dma.transp<1, 0>: result dim i is source dim p[i]
  /// dma.pad<{low}, {high}, {mid}, value>: elements before, after and
  /// between the source's in each dimension, and their value.
  std::vector<int64_t> padLow, padHigh, padMid;
  ExprPtr padValue;
  bool async = false;
  bool multicast = false;       // tma.copy.multicast
  bool cluster = false;         // trigger.cluster
  bool transpose = false;       // mma.store.transp
  /// Cache hints of a copy (`.evict_first`, `.evict_last`) croq does not
  /// apply: the importer warns at each.
  std::vector<std::pair<llvm::SMLoc, std::string>> ignoredHints;
  ExprPtr boundEvent;           // D1 .async<ev[i]>
  std::optional<int64_t> swizzle;
  ExprPtr source, dest;         // dest null with destStorage
  std::string destStorage;      // => shared / => local
  std::vector<ExprPtr> operands; // mma acc/a/b, wait/trigger/swap targets
  std::vector<std::string> after;
  std::string layout;           // row.row ...
  /// mma.row.row.scale / mma.scale: the view of A's scale for each row and
  /// B's scale for the tile.
  ExprPtr scaleA, scaleB;

  // Structure.
  std::vector<ParallelLevel> levels; // parallel
  std::string streamName;       // parallel<s>
  /// `parallel {r} by [C] : cluster { <this block-level parallel> }`: the
  /// cluster level around this parallel, which the parser folds into it.
  std::optional<ParallelLevel> clusterLevel;
  std::vector<Within> withins;  // with / foreach
  std::vector<WhereBinding> whereBindings; // with ... where a <-> b
  std::vector<ExprPtr> ranges;  // foreach over existing names
  ExprPtr mask;                 // foreach ... if (cond): iterations run where cond holds
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> elseBody;
  bool hasElse = false;

  /// __cpp__: the C++ statements, unquoted; __asm__: the template.
  std::string cxx;
  /// __asm__: volatile, the operands and the clobbers.
  bool isVolatile = false;
  std::vector<AsmOperand> asmOutputs, asmInputs;
  std::vector<std::string> asmClobbers;

  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

struct Param {
  llvm::SMLoc loc;
  std::string name;
  std::string kind;      // tensor / scalar / stream
  std::string storage;   // global / "" (host)
  std::string elemType;
  std::vector<ExprPtr> dims; // Int, Name or Name "?"
  bool byRef = false;
};

struct Function {
  llvm::SMLoc loc;
  std::string name;
  std::string returnKind; // void / auto / tensor / scalar
  std::string returnType; // the element type of a tensor or scalar result
  /// The dimensions a tensor result declares (empty for mdspan<N>).
  std::vector<ExprPtr> returnDims;
  int64_t returnRank = -1; // mdspan<N>
  std::vector<Param> params;
  std::vector<StmtPtr> body;
};

struct Program {
  std::vector<Function> functions;
  /// Host C++ outside `__co__` functions, kept verbatim.
  std::vector<std::string> hostCode;
  /// When the file declares device code (`__device__`, `__co_device__`):
  /// its text for clang, the `__co__` and host functions blanked, lines
  /// kept, after a `#line` into the source. What `call` can call.
  std::string deviceCode;
};

/// True when `body` holds a `yield` of the parallel around it (not one of a
/// nested parallel).
inline bool mayYield(llvm::ArrayRef<StmtPtr> body) {
  for (const StmtPtr &stmt : body) {
    if (stmt->kind == Stmt::Kind::Yield)
      return true;
    if (stmt->kind == Stmt::Kind::Parallel)
      continue;
    if (mayYield(stmt->body) || mayYield(stmt->elseBody))
      return true;
  }
  return false;
}

/// The value of an integer expression of literals, when it has one.
std::optional<int64_t> foldConstant(const Expr &e);

} // namespace mlir::croq::croqtile

#endif // CROQ_LIB_FRONTEND_CROQTILE_AST_H
