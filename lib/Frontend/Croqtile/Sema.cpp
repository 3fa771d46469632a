//===- Sema.cpp - Croqtile semantic analysis ------------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Sema.h"
#include "Levels.h"

#include "Croq/Dialect/Croq/Utils/TileAlgebra.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <deque>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// A scalar as far as Sema knows it: its value and, for a bounded variable
/// (a parallel, foreach or with index, or a composition of them), its bound.
struct Scalar {
  std::optional<int64_t> value;
  std::optional<int64_t> bound;
  bool bounded = false;
};

/// What a name stands for.
struct Decl {
  enum class Kind { Tensor, Future, Frag, Tile, Scalar, Shape, Other };
  Kind kind = Kind::Other;
  /// The declaring statement (null for parameters and indices).
  const Stmt *stmt = nullptr;
  /// Tensor, Future (its buffer), Frag and Tile: static extents.
  std::optional<BufferFacts> buffer;
  /// Scalar: what is known of it.
  Scalar scalar;
  /// Shape: the elements of an mdspan or ituple, unless Sema cannot tell
  /// how many there are (`rankUnknown`, also of an index over such a
  /// shape); the names of a tuple of indices' elements.
  SmallVector<Scalar> elems;
  bool rankUnknown = false;
  SmallVector<std::string> elemNames;
  /// Future: a dma.any / tma.any placeholder, and whether a copy or a swap
  /// has given it a future, in program order.
  bool placeholder = false;
  bool holdsFuture = false;
  /// Scalar or index tuple: differs between the threads of a thread-level
  /// parallel (one of its indices, or computed from one).
  bool threadIndex = false;
  /// Scalar: declared with a type (`int x = 4;`), so assignable.
  bool isMutable = false;
  /// Frag: the extents of an array of accumulators (`frag mc[2][3] {0};`),
  /// empty for one accumulator.
  SmallVector<int64_t> accumulatorArray;
  /// What made the name, for the messages of a second declaration.
  enum class Origin { Parameter, Index, Declaration, Assignment };
  Origin origin = Origin::Declaration;
};

class Sema {
public:
  Sema(SemaResult &result, DiagnoseFn diagnose)
      : result(result), diagnose(diagnose) {}

  /// False after an error.
  bool program(const Program &program) {
    for (const Function &fn : program.functions)
      coFunctions.insert(fn.name);
    for (const Function &fn : program.functions) {
      function(fn);
      if (hadError)
        return false;
    }
    return true;
  }

private:
  SemaResult &result;
  DiagnoseFn diagnose;
  bool hadError = false;
  /// The file's __co__ functions, which `call` cannot name.
  llvm::StringSet<> coFunctions;

  /// Reports the first error; Sema stops there.
  void fail(SMLoc loc, const Twine &message, const Twine &hint = "") {
    if (!hadError)
      diagnose(loc, message, hint);
    hadError = true;
  }

  /// The constructs open around the current statement in its function,
  /// innermost last: what break, continue, yield, return and the register
  /// budget of a role may act on.
  enum class Region { Parallel, OneThread, Apply, Role, InThreads, Loop, Branch };
  struct OpenRegion {
    Region kind;
    /// Role: it has a register budget (setreg_inc/dec).
    bool budget = false;
  };
  SmallVector<OpenRegion> regions;
  /// The function returned a value already.
  bool returnedValue = false;
  /// The function being checked.
  const Function *currentFunction = nullptr;
  bool onDevice() const { return !levels.empty(); }
  std::deque<Decl> decls;
  std::vector<llvm::StringMap<Decl *>> scopes;
  /// The levels of the parallels around the current statement, outermost
  /// first.
  SmallVector<Level> levels;
  /// Names assigned after their declaration somewhere in the function: a
  /// scalar among them has no value Sema can count on.
  llvm::StringSet<> reassigned;

  // Scopes.
  void push() { scopes.emplace_back(); }
  void pop() { scopes.pop_back(); }
  Decl *lookup(StringRef name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
      if (Decl *d = it->lookup(name))
        return d;
    return nullptr;
  }
  Decl *declare(StringRef name, Decl decl) {
    decls.push_back(std::move(decl));
    scopes.back()[name] = &decls.back();
    return &decls.back();
  }
  /// The declaration of `name` in the innermost scope, if any.
  Decl *inThisScope(StringRef name) { return scopes.back().lookup(name); }
  /// What a name already declared in this scope is, for messages.
  static StringRef describe(const Decl &d) {
    switch (d.origin) {
    case Decl::Origin::Parameter:
      return "a parameter of this function";
    case Decl::Origin::Index:
      return "an index of the parallel, loop or apply this code is in";
    case Decl::Origin::Declaration:
    case Decl::Origin::Assignment:
      return "declared in this scope";
    }
    llvm_unreachable("unknown origin");
  }
  /// Declares a name that a declaration statement, an index or a parameter
  /// introduces (`int x = 1;`, `shared f32 [..] b;`, `event e;`, a shape,
  /// `parallel p by 4`): any other declaration of the name in the same scope
  /// is an error. A function's parameters share the scope of its body, and
  /// the indices of a parallel, foreach, with or apply the scope of theirs,
  /// so a body's declaration may not reuse them; an inner block may.
  Decl *declareNew(StringRef name, SMLoc at, Decl decl,
                   Decl::Origin origin = Decl::Origin::Declaration) {
    if (Decl *existing = inThisScope(name)) {
      fail(at, "'" + name + "' is already " + describe(*existing),
           "pick another name, or assign to a mutable variable");
      return nullptr;
    }
    decl.origin = origin;
    return declare(name, std::move(decl));
  }
  Decl *declareScalar(StringRef name, Scalar value) {
    Decl d;
    d.kind = Decl::Kind::Scalar;
    d.scalar = value;
    return declare(name, std::move(d));
  }

  // Expressions.
  static bool isWildcard(const Expr &e) {
    return e.kind == Expr::Kind::Name && e.name == "_";
  }

  bool isShapeValued(const Expr &e) {
    return croqtile::isShapeValued(
        e,
        [&](StringRef name) {
          Decl *d = lookup(name);
          return d && d->kind == Decl::Kind::Shape;
        },
        [&](const Expr &x) { return isTensorPick(x); });
  }

  /// `t[(1), (0)]` of a tensor: one parenthesized pick per dimension.
  bool isTensorPick(const Expr &e) {
    if (e.kind != Expr::Kind::Index || !e.base ||
        e.base->kind != Expr::Kind::Name || e.args.empty() ||
        !llvm::all_of(e.args, [](const ExprPtr &arg) {
          return arg->parenthesized && arg->kind == Expr::Kind::Int;
        }))
      return false;
    Decl *d = lookup(e.base->name);
    return d && d->kind == Decl::Kind::Tensor && d->buffer &&
           d->buffer->shape.size() == e.args.size();
  }

  static std::optional<int64_t> arith(StringRef op, int64_t a, int64_t b) {
    if (op == "+")
      return a + b;
    if (op == "-")
      return a - b;
    if (op == "*")
      return a * b;
    if ((op == "/" || op == "%") && b == 0)
      return std::nullopt;
    if (op == "/")
      return a / b;
    if (op == "%")
      return a % b;
    if (op == "<<")
      return a << b;
    if (op == ">>")
      return a >> b;
    if (op == "&")
      return a & b;
    if (op == "|")
      return a | b;
    if (op == "^")
      return a ^ b;
    return std::nullopt;
  }

  Scalar scalar(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::Int:
      return Scalar{e.intValue, std::nullopt, false};
    case Expr::Kind::Name: {
      Decl *d = lookup(e.name);
      if (d && d->kind == Decl::Kind::Scalar)
        return d->scalar;
      return {};
    }
    case Expr::Kind::Unary: {
      Scalar v = scalar(*e.args[0]);
      if (!v.value)
        return {};
      if (e.name == "-")
        return Scalar{-*v.value, std::nullopt, false};
      if (e.name == "~")
        return Scalar{~*v.value, std::nullopt, false};
      return {};
    }
    case Expr::Kind::Binary: {
      Scalar a = scalar(*e.args[0]), b = scalar(*e.args[1]);
      StringRef op = e.name;
      if (op == "#") {
        // a # b = a * #b + b, bound #a * #b.
        Scalar out;
        out.bounded = a.bounded && b.bounded;
        if (a.bound && b.bound)
          out.bound = *a.bound * *b.bound;
        return out;
      }
      if (op.starts_with("#")) {
        Scalar out;
        out.bounded = a.bounded;
        if (a.bound && b.value)
          out.bound = arith(op.drop_front(), *a.bound, *b.value);
        return out;
      }
      if (a.value && b.value)
        return Scalar{arith(op, *a.value, *b.value), std::nullopt, false};
      return {};
    }
    case Expr::Kind::Ternary: {
      Scalar c = scalar(*e.args[0]);
      if (!c.value)
        return {};
      return scalar(*e.args[*c.value ? 1 : 2]);
    }
    case Expr::Kind::Bound: {
      Scalar v = scalar(*e.args[0]);
      return Scalar{v.bound, std::nullopt, false};
    }
    case Expr::Kind::Count: {
      const Expr &inner = *e.args[0];
      std::optional<SmallVector<Scalar>> elems;
      if (isShapeValued(inner))
        elems = shapeOf(inner);
      else if (std::optional<BufferFacts> b = view(inner))
        elems = extents(b->shape);
      if (!elems)
        return {};
      int64_t total = 1;
      for (const Scalar &s : *elems) {
        if (!s.value)
          return {};
        total *= *s.value;
      }
      return Scalar{total, std::nullopt, false};
    }
    case Expr::Kind::Call: {
      if (e.base || e.args.size() != 2)
        return {};
      Scalar a = scalar(*e.args[0]), b = scalar(*e.args[1]);
      if (!a.value || !b.value)
        return {};
      if (e.name == "cdiv" && *b.value > 0)
        return Scalar{(*a.value + *b.value - 1) / *b.value, std::nullopt,
                      false};
      if (e.name == "__max" || e.name == "max")
        return Scalar{std::max(*a.value, *b.value), std::nullopt, false};
      if (e.name == "__min" || e.name == "min")
        return Scalar{std::min(*a.value, *b.value), std::nullopt, false};
      return {};
    }
    case Expr::Kind::Index: {
      if (!isShapeValued(*e.base) || e.args.size() != 1)
        return {};
      std::optional<SmallVector<Scalar>> elems = shapeOf(*e.base);
      Scalar i = scalar(*e.args[0]);
      if (!elems || !i.value || *i.value < 0 ||
          *i.value >= static_cast<int64_t>(elems->size()))
        return {};
      return (*elems)[*i.value];
    }
    default:
      return {};
    }
  }

  static SmallVector<Scalar> extents(ArrayRef<int64_t> shape) {
    SmallVector<Scalar> out;
    for (int64_t d : shape)
      out.push_back(ShapedType::isDynamic(d) ? Scalar{}
                                             : Scalar{d, std::nullopt, false});
    return out;
  }

  /// The elements of a list whose entries may be shapes themselves; with
  /// `wildcards`, `_` (in chunkat and subspan) is kept as a marker.
  std::optional<SmallVector<Scalar>> splice(ArrayRef<ExprPtr> args,
                                            bool wildcards = false) {
    SmallVector<Scalar> out;
    for (const ExprPtr &arg : args) {
      if (arg->kind == Expr::Kind::Name)
        if (Decl *d = lookup(arg->name); d && d->rankUnknown)
          return std::nullopt;
      if (wildcards && isWildcard(*arg)) {
        out.push_back(Scalar{kWildcardMark, std::nullopt, false});
        continue;
      }
      if (isShapeValued(*arg)) {
        std::optional<SmallVector<Scalar>> elems = shapeOf(*arg);
        if (!elems)
          return std::nullopt;
        out.append(elems->begin(), elems->end());
        continue;
      }
      out.push_back(scalar(*arg));
    }
    return out;
  }

  std::optional<SmallVector<Scalar>> shapeOf(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::List:
    case Expr::Kind::Tuple:
      return splice(e.args);
    case Expr::Kind::Name: {
      Decl *d = lookup(e.name);
      if (!d || d->kind != Decl::Kind::Shape || d->rankUnknown)
        return std::nullopt;
      return d->elems;
    }
    case Expr::Kind::Member: {
      std::optional<BufferFacts> b = view(*e.base);
      if (!b)
        return std::nullopt;
      return extents(b->shape);
    }
    case Expr::Kind::Binary:
    case Expr::Kind::Call: {
      StringRef op = e.kind == Expr::Kind::Call ? StringRef("cdiv") : e.name;
      auto side = [&](const Expr &x) -> std::optional<SmallVector<Scalar>> {
        if (isShapeValued(x))
          return shapeOf(x);
        return SmallVector<Scalar>{scalar(x)};
      };
      std::optional<SmallVector<Scalar>> a = side(*e.args[0]);
      std::optional<SmallVector<Scalar>> b = side(*e.args[1]);
      if (!a || !b ||
          (a->size() != b->size() && a->size() != 1 && b->size() != 1))
        return std::nullopt;
      size_t n = std::max(a->size(), b->size());
      SmallVector<Scalar> out;
      for (size_t i = 0; i < n; ++i) {
        const Scalar &x = (*a)[a->size() == 1 ? 0 : i];
        const Scalar &y = (*b)[b->size() == 1 ? 0 : i];
        if (!x.value || !y.value) {
          out.push_back({});
          continue;
        }
        if (op == "cdiv")
          out.push_back(*y.value > 0
                            ? Scalar{(*x.value + *y.value - 1) / *y.value,
                                     std::nullopt, false}
                            : Scalar{});
        else
          out.push_back(
              Scalar{arith(op, *x.value, *y.value), std::nullopt, false});
      }
      return out;
    }
    case Expr::Kind::Index: {
      std::optional<SmallVector<Scalar>> base;
      if (isTensorPick(e)) {
        std::optional<BufferFacts> b = view(*e.base);
        if (b)
          base = extents(b->shape);
      } else {
        base = shapeOf(*e.base);
      }
      if (!base)
        return std::nullopt;
      bool mixed = llvm::any_of(
          e.args, [](const ExprPtr &arg) { return arg->parenthesized; });
      SmallVector<Scalar> out;
      for (const ExprPtr &arg : e.args) {
        Scalar v = scalar(*arg);
        if (mixed && !arg->parenthesized) {
          out.push_back(v);
          continue;
        }
        if (!v.value || *v.value < 0 ||
            *v.value >= static_cast<int64_t>(base->size()))
          return std::nullopt;
        out.push_back((*base)[*v.value]);
      }
      return out;
    }
    default:
      return std::nullopt;
    }
  }

  static int64_t staticOf(const Scalar &s) {
    return s.value ? *s.value : kDynamic;
  }

  /// The buffer of `base` seen with the extents `extents` lists (span_as,
  /// view(...).from(...)).
  std::optional<BufferFacts> withExtents(const Expr &base,
                                         ArrayRef<ExprPtr> extents) {
    std::optional<BufferFacts> b = view(base);
    std::optional<SmallVector<Scalar>> shape = splice(extents);
    if (!b || !shape)
      return std::nullopt;
    b->shape.clear();
    for (const Scalar &s : *shape)
      b->shape.push_back(staticOf(s));
    return b;
  }

  /// The buffer a view expression shows: its static extents, element type
  /// and storage, or nothing where Sema cannot tell.
  std::optional<BufferFacts> view(const Expr &e) {
    if (e.kind == Expr::Kind::Name) {
      Decl *d = lookup(e.name);
      if (d && (d->kind == Decl::Kind::Tensor || d->kind == Decl::Kind::Future))
        return d->buffer;
      return std::nullopt;
    }
    if (e.kind == Expr::Kind::Index) {
      // buffers[i]: one buffer of an array of buffers.
      std::optional<BufferFacts> b = view(*e.base);
      if (!b || e.args.size() >= b->shape.size())
        return std::nullopt;
      b->shape.erase(b->shape.begin(), b->shape.begin() + e.args.size());
      return b;
    }
    if (e.kind != Expr::Kind::Member || !e.base)
      return std::nullopt;
    if (e.name == "data")
      return view(*e.base);
    if (e.name == "span_as" && e.hasArgs)
      return withExtents(*e.base, e.args);
    if (e.name == "sqz" && e.hasArgs && e.args.empty()) {
      std::optional<BufferFacts> b = view(*e.base);
      if (!b)
        return std::nullopt;
      SmallVector<int64_t> shape;
      for (int64_t d : b->shape)
        if (d != 1)
          shape.push_back(d);
      if (shape.empty())
        shape.push_back(1);
      b->shape = shape;
      return b;
    }
    if (e.name == "from" && e.base->kind == Expr::Kind::Member &&
        e.base->name == "view" && e.base->base) {
      const Expr &viewExpr = *e.base;
      size_t nSizes =
          viewExpr.intValue ? viewExpr.intValue : viewExpr.args.size();
      return withExtents(*viewExpr.base,
                         ArrayRef<ExprPtr>(viewExpr.args.data(), nSizes));
    }
    bool chunkAt = e.name == "at" && e.base->kind == Expr::Kind::Member &&
                   e.base->name == "chunk";
    if (e.name == "chunkat" || chunkAt) {
      std::optional<BufferFacts> b = view(chunkAt ? *e.base->base : *e.base);
      if (!b)
        return std::nullopt;
      std::optional<SmallVector<Scalar>> indices = splice(e.args, /*wildcards=*/true);
      std::optional<SmallVector<Scalar>> factors =
          chunkAt ? splice(e.base->args) : SmallVector<Scalar>();
      if (!indices || !factors || indices->size() != b->shape.size() ||
          (chunkAt && factors->size() != b->shape.size()))
        return std::nullopt;
      SmallVector<int64_t> counts;
      for (size_t d = 0; d < indices->size(); ++d) {
        const Scalar &i = (*indices)[d];
        if (isWildcardScalar(i)) {
          counts.push_back(tile::kWholeDim);
          continue;
        }
        std::optional<int64_t> count = chunkAt ? (*factors)[d].value : i.bound;
        if (count && *count <= 0)
          return std::nullopt;
        counts.push_back(count ? *count : kDynamic);
      }
      std::optional<SmallVector<int64_t>> shape =
          tile::chunkatShape(b->shape, counts);
      if (!shape)
        return std::nullopt;
      b->shape = *shape;
      return b;
    }
    // subspan(e...)[.step(s...)][.at(i...)]
    const Expr *subspan = nullptr;
    const Expr *cursor = &e;
    bool seenAt = false, seenStep = false;
    while (cursor && cursor->kind == Expr::Kind::Member) {
      if (cursor->name == "at" && !seenAt) {
        seenAt = true;
      } else if (cursor->name == "step" && !seenStep) {
        seenStep = true;
      } else if (cursor->name == "subspan" || cursor->name == "modspan") {
        subspan = cursor;
        break;
      } else {
        break;
      }
      cursor = cursor->base.get();
    }
    if (!subspan || !subspan->base)
      return std::nullopt;
    std::optional<BufferFacts> b = view(*subspan->base);
    std::optional<SmallVector<Scalar>> spans = splice(subspan->args, /*wildcards=*/true);
    if (!b || !spans || spans->size() != b->shape.size())
      return std::nullopt;
    SmallVector<int64_t> statics;
    for (const Scalar &s : *spans) {
      if (isWildcardScalar(s)) {
        statics.push_back(tile::kWholeDim);
        continue;
      }
      if (s.value && *s.value <= 0)
        return std::nullopt;
      statics.push_back(staticOf(s));
    }
    std::optional<SmallVector<int64_t>> shape =
        tile::subspanShape(b->shape, statics);
    if (!shape)
      return std::nullopt;
    b->shape = *shape;
    return b;
  }

  /// `_` among view arguments, kept by splice as a value no extent has.
  static bool isWildcardScalar(const Scalar &s) {
    return s.value == std::optional<int64_t>(kWildcardMark) && !s.bounded;
  }
  static constexpr int64_t kWildcardMark = std::numeric_limits<int64_t>::min();

  // Statements.
  void collectAssigned(ArrayRef<StmtPtr> body) {
    for (const StmtPtr &s : body) {
      if (s->kind == Stmt::Kind::Assign && s->target &&
          s->target->kind == Expr::Kind::Name)
        reassigned.insert(s->target->name);
      if (s->kind == Stmt::Kind::ExprStmt && s->value &&
          (s->value->kind == Expr::Kind::Postfix ||
           s->value->kind == Expr::Kind::Unary) &&
          !s->value->args.empty() &&
          s->value->args[0]->kind == Expr::Kind::Name)
        reassigned.insert(s->value->args[0]->name);
      for (const AsmOperand &out : s->asmOutputs)
        if (out.value && out.value->kind == Expr::Kind::Name)
          reassigned.insert(out.value->name);
      collectAssigned(s->body);
      collectAssigned(s->elseBody);
    }
  }

  void function(const Function &fn) {
    reassigned.clear();
    returnedValue = false;
    currentFunction = &fn;
    collectAssigned(fn.body);
    scopes.clear();
    push();
    for (const Param &p : fn.params) {
      if (p.name.empty())
        continue;
      if (p.kind != "tensor") {
        Decl d;
        d.kind = Decl::Kind::Scalar;
        if (!declareNew(p.name, p.loc, std::move(d), Decl::Origin::Parameter))
          return;
        continue;
      }
      Decl d;
      d.kind = Decl::Kind::Tensor;
      BufferFacts b;
      b.element = p.elemType;
      b.storage = "global";
      for (const ExprPtr &dim : p.dims) {
        // A named extent is the parameter's run-time extent.
        if (dim->kind == Expr::Kind::Name) {
          b.shape.push_back(kDynamic);
          if (dim->name != "?" && !lookup(dim->name))
            declareScalar(dim->name, {})->origin = Decl::Origin::Parameter;
          continue;
        }
        b.shape.push_back(staticOf(scalar(*dim)));
      }
      d.buffer = std::move(b);
      if (!declareNew(p.name, p.loc, std::move(d), Decl::Origin::Parameter))
        return;
    }
    statements(fn.body);
    pop();
  }

  void statements(ArrayRef<StmtPtr> body) {
    // Futures waited in this list, where (a second wait observes nothing:
    // upstream's "wait observes future 'f' more than once").
    llvm::StringMap<SMLoc> waited;
    for (const StmtPtr &s : body) {
      if (hadError)
        return;
      if (s->kind == Stmt::Kind::Wait) {
        for (const ExprPtr &operand : s->operands) {
          if (operand->kind != Expr::Kind::Name)
            continue;
          Decl *d = lookup(operand->name);
          if (!d || d->kind != Decl::Kind::Future)
            continue;
          auto [it, fresh] = waited.try_emplace(operand->name, operand->loc);
          if (!fresh) {
            fail(operand->loc, "'" + operand->name + "' was already waited "
                               "in this block, and nothing made it again "
                               "since",
                 "drop the second wait");
            return;
          }
        }
      } else if (s->kind != Stmt::Kind::Trigger) {
        // Anything but a trigger may make a waited future again (`f =
        // dma.copy.async ...`, a swap, a loop or branch that does).
        waited.clear();
      }
      statement(*s);
    }
  }

  /// Runs `body` inside a construct of kind `kind`.
  void inRegion(Region kind, function_ref<void()> body) {
    regions.push_back({kind});
    body();
    regions.pop_back();
  }

  void scoped(ArrayRef<StmtPtr> body) {
    push();
    statements(body);
    pop();
  }

  /// Declares bounded indices `names` over `bounds` (and the tuple of them
  /// as `tupleName`), written at `at` (`nameLocs` where known): a name that
  /// is already an index of the same construct is an error. One name over
  /// several bounds is the whole index tuple, except in a parallel.
  void indices(ArrayRef<std::string> names, ArrayRef<ExprPtr> boundExprs,
               StringRef tupleName, SMLoc at, ArrayRef<SMLoc> nameLocs = {},
               SMLoc tupleLoc = {}, bool threadLevel = false,
               bool parallel = false) {
    for (const ExprPtr &bound : boundExprs)
      if (!resolved(*bound))
        return;
    std::optional<SmallVector<Scalar>> bounds = splice(boundExprs);
    SmallVector<Scalar> elems;
    for (size_t i = 0; bounds && i < bounds->size(); ++i)
      elems.push_back(Scalar{std::nullopt, (*bounds)[i].value, true});
    auto index = [&](StringRef name, SMLoc loc, Decl d) {
      d.threadIndex = threadLevel;
      d.rankUnknown |= !bounds;
      if (name.empty() || name == "_")
        return true;
      return declareNew(name, loc.isValid() ? loc : at, std::move(d),
                        Decl::Origin::Index) != nullptr;
    };
    // `{x, y} in a.span`: one index per dimension.
    bool wholeTuple = names.size() == 1 && tupleName.empty();
    if (bounds && !names.empty() && (!wholeTuple || parallel) &&
        names.size() != bounds->size()) {
      fail(at, Twine(parallel ? "parallel declares " : "declares ") +
                   Twine(names.size()) + " indices but " +
                   Twine(bounds->size()) +
                   (bounds->size() == 1 ? " bound" : " bounds"),
           parallel ? "give one name per bound (`parallel {a, b} by [m, "
                      "n]`), and name their tuple too if you need it "
                      "(`parallel p = {a, b} by [m, n]`)"
                    : "give one bound per index (x.span counts as one per "
                      "dimension of x), or one name for the whole index "
                      "tuple");
      return;
    }
    Decl tuple;
    tuple.kind = Decl::Kind::Shape;
    tuple.elems = elems;
    if (wholeTuple && bounds && bounds->size() > 1) {
      // `index in [3, 2, 1]`: the one name is the whole index tuple.
      index(names[0], nameLocs.empty() ? at : nameLocs[0], std::move(tuple));
      return;
    }
    for (auto [i, name] : llvm::enumerate(names)) {
      Decl d;
      d.kind = Decl::Kind::Scalar;
      d.scalar = bounds && i < elems.size()
                     ? elems[i]
                     : Scalar{std::nullopt, std::nullopt, true};
      if (!index(name, i < nameLocs.size() ? nameLocs[i] : at, std::move(d)))
        return;
    }
    if (!tupleName.empty()) {
      tuple.elemNames.assign(names.begin(), names.end());
      index(tupleName, tupleLoc, std::move(tuple));
    }
  }

  void tensorDecl(const Stmt &stmt) {
    Decl d;
    d.kind = stmt.storage == "frag" ? Decl::Kind::Tile : Decl::Kind::Tensor;
    d.stmt = &stmt;
    BufferFacts b;
    b.element = stmt.elemType;
    b.storage = stmt.storage.empty() ? "local" : stmt.storage;
    std::optional<SmallVector<Scalar>> arrays = splice(stmt.arrayDims);
    std::optional<SmallVector<Scalar>> dims = splice(stmt.dims);
    if (arrays && dims) {
      for (const Scalar &s : *arrays)
        b.shape.push_back(staticOf(s));
      for (const Scalar &s : *dims)
        b.shape.push_back(staticOf(s));
      d.buffer = std::move(b);
    }
    declareNew(stmt.name, stmt.nameLoc, std::move(d));
  }

  /// The buffer a copy writes: its destination, or a new one of the
  /// source's (transposed or padded) shape.
  std::optional<BufferFacts> copyBuffer(const Stmt &stmt) {
    if (stmt.dest) {
      std::optional<BufferFacts> b = view(*stmt.dest);
      // Only a whole declared buffer has a type Sema can name (a view of
      // one has strides of its own).
      Decl *d = stmt.dest->kind == Expr::Kind::Name ? lookup(stmt.dest->name)
                                                    : nullptr;
      if (b)
        b->allocated =
            d && d->kind == Decl::Kind::Tensor && d->stmt &&
            d->stmt->kind == Stmt::Kind::TensorDecl &&
            d->stmt->arrayDims.empty() &&
            (d->stmt->storage == "shared" || d->stmt->storage == "local");
      return b;
    }
    std::optional<BufferFacts> b = view(*stmt.source);
    if (!b)
      return std::nullopt;
    if (!stmt.permutation.empty()) {
      if (stmt.permutation.size() != b->shape.size())
        return std::nullopt;
      SmallVector<int64_t> shape;
      for (int64_t p : stmt.permutation) {
        if (p < 0 || p >= static_cast<int64_t>(b->shape.size()))
          return std::nullopt;
        shape.push_back(b->shape[p]);
      }
      b->shape = shape;
    }
    if (stmt.copyKind == "pad") {
      size_t rank = b->shape.size();
      if (stmt.padLow.size() != rank || stmt.padHigh.size() != rank ||
          stmt.padMid.size() != rank)
        return std::nullopt;
      for (size_t d = 0; d < b->shape.size(); ++d)
        if (!ShapedType::isDynamic(b->shape[d]))
          b->shape[d] += (b->shape[d] - 1) * stmt.padMid[d] + stmt.padLow[d] +
                         stmt.padHigh[d];
    }
    // As IRGen does: a tile that differs between the threads of a thread
    // level gets a buffer per thread, in local memory.
    b->storage =
        stmt.destStorage == "shared" && mentionsThreadIndex(*stmt.source)
            ? "local"
            : stmt.destStorage;
    b->allocated = true;
    return b;
  }

  /// Whether `e` uses a value that differs between the threads of an
  /// enclosing thread level, as IRGen's dependsOnThreadIndex finds.
  bool mentionsThreadIndex(const Expr &e) {
    // `#t` is the same in every thread.
    if (e.kind == Expr::Kind::Bound)
      return false;
    if (e.kind == Expr::Kind::Name)
      if (Decl *d = lookup(e.name); d && d->threadIndex)
        return true;
    if (e.base && mentionsThreadIndex(*e.base))
      return true;
    return llvm::any_of(e.args, [&](const ExprPtr &arg) {
      return arg && mentionsThreadIndex(*arg);
    });
  }

  /// `tma.copy[.async] s => g` into a global view.
  bool isTmaStore(const Stmt &stmt) {
    if (stmt.op != "tma" || !stmt.dest || !stmt.source)
      return false;
    // The tensor the destination is a view of.
    const Expr *root = stmt.dest.get();
    while (root->base && root->kind != Expr::Kind::Name)
      root = root->base.get();
    Decl *d = root->kind == Expr::Kind::Name ? lookup(root->name) : nullptr;
    return d && d->kind == Decl::Kind::Tensor && d->buffer &&
           d->buffer->storage == "global";
  }

  void copy(const Stmt &stmt) {
    std::optional<BufferFacts> buffer = copyBuffer(stmt);
    if (stmt.name.empty())
      return;
    Decl *existing = lookup(stmt.name);
    if (existing && existing->kind == Decl::Kind::Future) {
      if (!existing->buffer)
        existing->buffer = buffer;
      existing->holdsFuture = true;
      // A copy assigned to a placeholder tells what it stands for.
      if (existing->placeholder && existing->stmt) {
        PlaceholderFacts &facts = result.placeholders[existing->stmt];
        if (!facts.buffered) {
          facts.buffered = true;
          if (isTmaStore(stmt))
            facts.storeSource = stmt.source.get();
          else
            facts.buffer = buffer;
        }
      }
      return;
    }
    Decl d;
    d.kind = Decl::Kind::Future;
    d.stmt = &stmt;
    d.buffer = buffer;
    declare(stmt.name, std::move(d));
  }

  void swap(const Stmt &stmt) {
    SmallVector<std::pair<Decl *, const Expr *>> futures;
    for (const ExprPtr &operand : stmt.operands) {
      Decl *d =
          operand->kind == Expr::Kind::Name ? lookup(operand->name) : nullptr;
      if (!d || d->kind != Decl::Kind::Future)
        return;
      futures.emplace_back(d, operand.get());
    }
    for (auto [d, e] : futures)
      d->holdsFuture = true;
    for (auto [d, e] : futures) {
      if (!d->placeholder || !d->stmt)
        continue;
      PlaceholderFacts &facts = result.placeholders[d->stmt];
      if (!facts.partner.empty())
        continue;
      for (auto [other, otherExpr] : futures)
        if (!other->placeholder) {
          facts.partner = otherExpr->name;
          facts.partnerDecl = other->stmt;
          if (!d->buffer)
            d->buffer = other->buffer;
          if (!facts.buffered) {
            facts.buffered = true;
            facts.buffer = other->buffer;
          }
          break;
        }
    }
  }

  /// Gives the fragment `load` makes its operand role, as `e` uses it; a
  /// fragment used in two roles (`mma.row.row ma, ma, mb`) is an error.
  void sameRole(const Expr &e, const Stmt *load, FragRole role) {
    auto [it, fresh] = result.loadRoles.try_emplace(load, role);
    if (fresh || it->second == role || hadError)
      return;
    auto name = [](FragRole r) -> StringRef {
      switch (r) {
      case FragRole::A: return "the A operand";
      case FragRole::B: return "the B operand";
      case FragRole::Acc: return "an accumulator";
      default: return "sparsity metadata";
      }
    };
    fail(e.loc, "'" + e.name + "' is used as " + name(role) +
                    " here, but as " + name(it->second) +
                    " elsewhere: a fragment has one role",
         "the operands of mma.row.row are the accumulator (from mma.fill), "
         "then A, then B");
  }

  /// The [rows, cols] and element type of an MMA operand.
  std::optional<BufferFacts> operand(const Expr &e, FragRole role) {
    if (e.kind == Expr::Kind::Name) {
      if (Decl *d = lookup(e.name)) {
        if (d->kind == Decl::Kind::Frag) {
          if (d->stmt && d->stmt->kind == Stmt::Kind::MmaLoad)
            sameRole(e, d->stmt, role);
          return d->buffer;
        }
        if (d->kind == Decl::Kind::Tile)
          return d->buffer;
      }
    }
    return view(e);
  }

  /// As IRGen::fragmentScope: the nearest level above the thread level
  /// holds the fragments made here.
  Level fragmentScope() const {
    for (Level level : llvm::reverse(levels))
      if (level != Level::Thread)
        return level == Level::Warpgroup ? Level::Warpgroup : Level::Warp;
    return Level::Warp;
  }

  /// The accumulator `e` names as the accumulator operand of `use` (an
  /// MMA, mma.fill, mma.store): `mc`, or `mc[i][j]` of an array of them.
  /// Null when `e` names none, or after reporting a misused array.
  Decl *accumulatorOf(const Expr &e, StringRef use) {
    std::vector<const Expr *> indices;
    const Expr *name = subscriptedName(e, indices);
    if (!name)
      return nullptr;
    Decl *d = lookup(name->name);
    if (!d || d->kind != Decl::Kind::Frag)
      return indices.empty() ? d : nullptr;
    size_t rank = d->accumulatorArray.size();
    if (indices.empty()) {
      if (rank == 0)
        return d;
      std::string element = name->name;
      for (size_t i = 0; i < rank; ++i)
        element += "[0]";
      fail(e.loc, "'" + name->name + "' is an array of accumulators, and " +
                      use + " takes one of them",
           "name an element, as `" + element + "`");
      return nullptr;
    }
    if (rank == 0) {
      fail(e.loc, "'" + name->name + "' is one accumulator, not an array "
                  "of them",
           "drop the subscript, or declare an array: `frag " + name->name +
               "[2] {0};`");
      return nullptr;
    }
    if (indices.size() != rank) {
      fail(e.loc, "'" + name->name + "' is an array of " + Twine(rank) +
                      " dimension" + (rank == 1 ? "" : "s") + ", indexed "
                      "here with " + Twine(indices.size()),
           "give one index per dimension");
      return nullptr;
    }
    for (auto [arg, extent] : llvm::zip_equal(indices, d->accumulatorArray)) {
      std::optional<int64_t> i = scalar(*arg).value;
      if (i && (*i < 0 || *i >= extent)) {
        fail(arg->loc, "index " + Twine(*i) + " is out of bounds of the "
                       "accumulator array's dimension of " + Twine(extent));
        return nullptr;
      }
    }
    return d;
  }

  void mma(const Stmt &stmt) {
    if (stmt.operands.size() < 3)
      return;
    const Expr &accExpr = *stmt.operands[0];
    Decl *acc = accumulatorOf(accExpr, "an MMA");
    if (hadError)
      return;
    std::optional<BufferFacts> a = operand(*stmt.operands[1], FragRole::A);
    std::optional<BufferFacts> b = operand(*stmt.operands[2], FragRole::B);
    if (stmt.operands.size() > 3)
      (void)operand(*stmt.operands[3], FragRole::Meta);
    if (acc && acc->kind == Decl::Kind::Frag && acc->stmt) {
      if (acc->stmt->kind == Stmt::Kind::MmaLoad)
        sameRole(accExpr, acc->stmt, FragRole::Acc);
      if (acc->stmt->kind == Stmt::Kind::MmaFill &&
          !result.accumulators.count(acc->stmt) &&
          !result.unshapedAccumulators.count(acc->stmt)) {
        bool aRow = StringRef(stmt.layout).starts_with("row");
        bool bRow = StringRef(stmt.layout).ends_with("row");
        auto known = [](const std::optional<BufferFacts> &x, size_t d) {
          return x && x->shape.size() == 2 &&
                 !ShapedType::isDynamic(x->shape[d]);
        };
        if (known(a, aRow ? 0 : 1) && known(b, bRow ? 0 : 1)) {
          AccumulatorFacts facts;
          facts.rows = a->shape[aRow ? 0 : 1];
          facts.cols = b->shape[bRow ? 0 : 1];
          facts.operandElement = a->element;
          facts.scope = fragmentScope();
          result.accumulators[acc->stmt] = facts;
          BufferFacts shape;
          shape.shape = {facts.rows, facts.cols};
          shape.element = acc->stmt->elemType.empty()
                              ? defaultAccumulatorElement(a->element)
                              : acc->stmt->elemType;
          acc->buffer = shape;
        } else {
          result.unshapedAccumulators[acc->stmt] = known(a, aRow ? 0 : 1)
                                                       ? stmt.operands[2].get()
                                                       : stmt.operands[1].get();
        }
      }
    }
    if (!stmt.name.empty() && !lookup(stmt.name)) {
      Decl d;
      d.kind = Decl::Kind::Future;
      d.stmt = &stmt;
      declare(stmt.name, std::move(d));
    }
  }

  /// `select(k, f0, f1, ...)` among futures: the first one (swap and
  /// select need futures of one type).
  Decl *selectedFuture(const Expr &e) {
    if (e.kind != Expr::Kind::Call || e.name != "select" || e.args.size() < 2 ||
        e.args[1]->kind != Expr::Kind::Name)
      return nullptr;
    Decl *d = lookup(e.args[1]->name);
    return d && d->kind == Decl::Kind::Future ? d : nullptr;
  }

  //===--------------------------------------------------------------------===//
  // Language rules
  //===--------------------------------------------------------------------===//

  /// Whether `e` reads or writes an element of a tensor or a future's
  /// buffer (`x.at(...)`).
  bool touchesElements(const Expr &e) {
    return anyExpr(e, [&](const Expr &x) {
      if (x.kind != Expr::Kind::Member || x.name != "at" || !x.hasArgs ||
          !x.base || x.base->kind != Expr::Kind::Name)
        return false;
      Decl *d = lookup(x.base->name);
      return d && (d->kind == Decl::Kind::Tensor ||
                   d->kind == Decl::Kind::Future);
    });
  }

  /// The expressions of `stmt` itself, not of the statements in its body.
  static void ownExprs(const Stmt &stmt,
                       function_ref<void(const Expr &)> each) {
    auto one = [&](const Expr *e) {
      if (e)
        each(*e);
    };
    auto all = [&](ArrayRef<ExprPtr> es) {
      for (const ExprPtr &e : es)
        one(e.get());
    };
    for (const StmtAttribute &attr : stmt.attributes)
      all(attr.args);
    for (const Expr *e : {stmt.target.get(), stmt.value.get(),
                          stmt.source.get(), stmt.dest.get(),
                          stmt.padValue.get(), stmt.boundEvent.get(),
                          stmt.mask.get()})
      one(e);
    all(stmt.operands);
    all(stmt.dims);
    all(stmt.arrayDims);
    all(stmt.ranges);
    for (const ParallelLevel &level : stmt.levels)
      all(level.bounds);
    for (const Within &w : stmt.withins)
      all(w.bounds);
    for (const std::vector<AsmOperand> *ops :
         {&stmt.asmOutputs, &stmt.asmInputs})
      for (const AsmOperand &op : *ops)
        one(op.value.get());
  }

  /// Host code that reads or writes tensor elements runs on the GPU, in
  /// one thread of one block: loops, branches, prints, asserts, element
  /// stores and expression statements that do. A declaration or a binding
  /// would end with the kernel it ran in.
  bool runsOnOneThread(const Stmt &stmt) {
    switch (stmt.kind) {
    case Stmt::Kind::Foreach:
    case Stmt::Kind::With:
    case Stmt::Kind::If:
    case Stmt::Kind::While:
    case Stmt::Kind::Print:
    case Stmt::Kind::Assert:
    case Stmt::Kind::ExprStmt:
    case Stmt::Kind::Block:
      break;
    case Stmt::Kind::Assign:
      if (stmt.target->kind == Expr::Kind::Name)
        return false;
      break;
    default:
      return false;
    }
    std::function<bool(const Stmt &)> any = [&](const Stmt &s) {
      if (s.kind == Stmt::Kind::Parallel)
        return false;
      for (const Expr *e :
           {s.target.get(), s.value.get(), s.source.get(), s.dest.get(),
            s.mask.get(), s.padValue.get()})
        if (e && touchesElements(*e))
          return true;
      for (const ExprPtr &e : s.operands)
        if (e && touchesElements(*e))
          return true;
      for (ArrayRef<StmtPtr> body : {ArrayRef(s.body), ArrayRef(s.elseBody)})
        for (const StmtPtr &inner : body)
          if (any(*inner))
            return true;
      return false;
    };
    return any(stmt);
  }

  /// The first host variable that `stmt`, run on the GPU, would assign.
  const Expr *assignedHostVariable(const Stmt &stmt) {
    if (stmt.kind == Stmt::Kind::Parallel)
      return nullptr;
    const Expr *target = nullptr;
    if (stmt.kind == Stmt::Kind::Assign && stmt.target &&
        stmt.target->kind == Expr::Kind::Name)
      target = stmt.target.get();
    if (stmt.kind == Stmt::Kind::ExprStmt && stmt.value &&
        (stmt.value->kind == Expr::Kind::Postfix ||
         stmt.value->kind == Expr::Kind::Unary) &&
        !stmt.value->args.empty() &&
        stmt.value->args[0]->kind == Expr::Kind::Name)
      target = stmt.value->args[0].get();
    if (target) {
      Decl *d = lookup(target->name);
      if (d && d->kind == Decl::Kind::Scalar &&
          (stmt.op != "=" || d->isMutable))
        return target;
    }
    for (ArrayRef<StmtPtr> body : {ArrayRef(stmt.body), ArrayRef(stmt.elseBody)})
      for (const StmtPtr &inner : body)
        if (const Expr *e = assignedHostVariable(*inner))
          return e;
    return nullptr;
  }

  /// The rules of an expression's calls: atomics and, in host code, device
  /// calls and element accesses.
  void checkExprs(const Stmt &stmt) {
    ownExprs(stmt, [&](const Expr &root) {
      anyExpr(root, [&](const Expr &e) {
        checkExpr(e);
        return hadError;
      });
    });
  }

  void checkExpr(const Expr &e) {
    if (e.kind == Expr::Kind::DeviceCall && coFunctions.contains(e.name))
      return fail(e.loc, "'" + e.name + "' is a __co__ function; `call` "
                                        "runs C++ device functions",
                  "croq does not call one __co__ function from another; "
                  "make the shared work a __device__ function, or call "
                  "both __co__ functions from the host program");
    if (e.kind == Expr::Kind::Call && !e.base &&
        isAtomicBuiltin(e.name)) {
      bool cas = e.name == "__atomic_cas";
      size_t arity = cas ? 3 : 2;
      if (e.args.size() != arity)
        return fail(e.loc, e.name + " takes " + Twine(arity) + " arguments",
                    cas ? "write " + e.name + "(x.at(i), expected, desired)"
                        : "write " + e.name + "(x.at(i), value)");
      const Expr &target = *e.args[0];
      if (target.kind != Expr::Kind::Member || target.name != "at" ||
          !target.hasArgs)
        return fail(target.loc, e.name + " updates an element: its first "
                                         "argument is x.at(...)");
      // An atomic is each thread's: between levels (a block or warpgroup
      // body) every thread of the group would run it, not one as for a
      // store.
      if (levels.empty() || levels.back() != Level::Thread)
        return fail(e.loc, e.name + " runs in each thread: put it in the "
                                    "body of a thread-level parallel",
                    "in a block or warpgroup body every thread would run "
                    "it; write `parallel t by 1 : thread` around it to run "
                    "it once");
      return;
    }
    if (onDevice())
      return;
    if (e.kind == Expr::Kind::DeviceCall && !isRegisterBudget(e))
      return fail(e.loc, "`call` runs a device function, but this is host "
                         "code",
                  "move the call into a parallel");
    if (e.kind == Expr::Kind::Member && e.name == "at" && e.hasArgs && e.base)
      return fail(e.loc, "host code cannot read or write elements of a "
                         "tensor: croq's host code computes scalars and "
                         "launches kernels",
                  "move the access into a parallel");
  }

  static bool isRegisterBudget(const Expr &e) {
    return e.kind == Expr::Kind::DeviceCall &&
           (e.name == "croq::cuda::setreg_inc" ||
            e.name == "croq::cuda::setreg_dec");
  }

  /// Whether break and continue (`loop`) or yield (`!loop`) have what they
  /// act on: a loop, or a parallel body, before another construct (an
  /// apply, a one-thread host statement, the function) ends the search.
  bool canExit(bool loop) {
    for (const OpenRegion &r : llvm::reverse(regions)) {
      if (r.kind == Region::Loop && loop)
        return true;
      if (r.kind == Region::Parallel)
        return !loop;
      if (r.kind == Region::Apply || r.kind == Region::OneThread)
        return false;
    }
    return false;
  }

  /// Whether a construct of kind `kind` is open around the statement.
  bool inside(Region kind) {
    return llvm::any_of(regions,
                        [&](const OpenRegion &r) { return r.kind == kind; });
  }

  void checkAttributes(const Stmt &stmt) {
    for (const StmtAttribute &attr : stmt.attributes) {
      if (attr.name == "schedule") {
        if (stmt.kind != Stmt::Kind::Mma)
          return fail(attr.loc, "[[schedule]] applies to an MMA statement");
        for (const ExprPtr &arg : attr.args) {
          if (arg->kind != Expr::Kind::Call || arg->name != "k_tiles")
            continue;
          SmallVector<int64_t> order;
          for (const ExprPtr &k : arg->args) {
            std::optional<int64_t> c = scalar(*k).value;
            if (!c)
              return fail(k->loc, "expected a compile-time constant",
                          "use a literal or a #define");
            order.push_back(*c);
          }
          SmallVector<int64_t> sorted(order);
          llvm::sort(sorted);
          for (auto [i, k] : llvm::enumerate(sorted))
            if (k != static_cast<int64_t>(i))
              return fail(arg->loc,
                          "the k_tiles schedule must be a permutation of [0, " +
                              Twine(order.size()) + ")",
                          "name each K tile once");
        }
        continue;
      }
      if (attr.name != "launch_bounds" && attr.name != "maxnreg")
        return fail(attr.loc, "unsupported attribute '[[" + attr.name + "]]'",
                    "croq knows [[launch_bounds(threads, blocks)]] and "
                    "[[maxnreg(n)]], on a kernel's parallel");
      if (stmt.kind != Stmt::Kind::Parallel || onDevice())
        return fail(attr.loc, "[[" + attr.name + "]] applies to a kernel: put "
                              "it before the outermost parallel");
    }
  }

  /// An expression statement: a built-in, a device call or `x++`.
  void checkExprStmt(const Stmt &stmt) {
    const Expr &e = *stmt.value;
    if (isRegisterBudget(e))
      return checkRegisterBudget(e);
    if (e.kind == Expr::Kind::DeviceCall ||
        (e.kind == Expr::Kind::Call && StringRef(e.name).starts_with("__atomic_")))
      return;
    if (e.kind == Expr::Kind::Call) {
      bool reduce = e.name == "reduce_max" || e.name == "reduce_sum";
      bool allReduce = e.name == "all_reduce_sum" || e.name == "all_reduce_max";
      if (reduce || allReduce || e.name == "copy") {
        size_t arity = reduce ? 3 : allReduce ? 1 : 2;
        if (e.args.size() != arity)
          return fail(e.loc,
                      e.name + " takes " + Twine(arity) +
                          (arity == 1 ? " argument" : " arguments"),
                      reduce      ? "write " + e.name + "(dst, src, 1)"
                      : allReduce ? "write " + e.name + "(x)"
                                  : std::string("write copy(dst, src)"));
        if (inside(Region::Apply))
          return fail(e.loc,
                      e.name + " acts on whole frags: call it outside apply");
        return;
      }
      if (e.name == "__bar_sync" || e.name == "__bar_arrive") {
        if (!onDevice())
          return fail(e.loc, "'" + e.name + "' synchronises device threads; "
                             "move it into a parallel");
        if (e.args.size() != 2)
          return fail(e.loc, "'" + e.name + "' takes a barrier id and a "
                             "thread count: " + e.name + "(1, 128)");
        return;
      }
      if (StringRef(e.name).starts_with("__"))
        return fail(stmt.loc, "'" + e.name + "' is not a croq built-in",
                    "CUDA intrinsics are not available in Croqtile code; use "
                    "sync.barrier, events and the math built-ins");
    }
    if (e.kind != Expr::Kind::Postfix &&
        !(e.kind == Expr::Kind::Unary && (e.name == "++" || e.name == "--")))
      return fail(stmt.loc, "this expression has no effect as a statement");
  }

  /// `call croq::cuda::setreg_inc(n)` / `setreg_dec(n)`: the register budget
  /// of the warp-specialized role whose body holds it.
  void checkRegisterBudget(const Expr &e) {
    if (regions.empty() || regions.back().kind != Region::Role)
      return fail(e.loc, "'" + e.name + "' sets the register budget of a "
                         "warp-specialized role, so it belongs directly in "
                         "the body of an inthreads.async region that selects "
                         "whole warpgroups",
                  "move it to the start of the role, outside loops and ifs");
    std::optional<int64_t> count;
    if (e.args.size() == 1)
      count = scalar(*e.args[0]).value;
    if (!count)
      return fail(e.loc, "'" + e.name + "' takes one compile-time register "
                         "count: " + e.name + "(240)");
    if (*count < 24 || *count > 256 || *count % 8 != 0)
      return fail(e.args[0]->loc, "setmaxnreg moves a warpgroup to 24 to 256 "
                                  "registers per thread in steps of 8, not " +
                                      Twine(*count));
    if (regions.back().budget)
      return fail(e.loc, "this role already has a register budget",
                  "set it once per role");
    regions.back().budget = true;
  }

  /// The rules of `stmt` itself; the statements of its body are checked
  /// as Sema reaches them.
  void check(const Stmt &stmt) {
    checkAttributes(stmt);
    if (hadError)
      return;
    bool device = onDevice();
    switch (stmt.kind) {
    case Stmt::Kind::Mma:
      if (!device)
        return fail(stmt.loc,
                    "MMA runs on device threads; move it into a parallel");
      break;
    case Stmt::Kind::MmaScale:
      if (!device)
        return fail(stmt.loc, "mma.scale runs on device threads; move it "
                              "into a parallel");
      break;
    case Stmt::Kind::MmaCommit:
      if (!device)
        return fail(stmt.loc, "mma." + stmt.op + " runs on device threads; "
                                                  "move it into a parallel");
      break;
    case Stmt::Kind::Sync:
      if (!device)
        return fail(stmt.loc, "sync." + stmt.op + " synchronises device "
                                                  "threads; move it into a "
                                                  "parallel");
      break;
    case Stmt::Kind::Cpp:
      if (!device)
        return fail(stmt.loc, "__cpp__ in host code: croq writes the host "
                              "code of a __co__ function itself",
                    "put host C++ outside the __co__ function, or move the "
                    "__cpp__ into a parallel");
      break;
    case Stmt::Kind::Asm:
      if (!device)
        return fail(stmt.loc, "inline assembly runs on device threads, but "
                              "this is host code",
                    "move it into a parallel");
      break;
    case Stmt::Kind::InThreads:
      if (!device)
        return fail(stmt.loc, "inthreads partitions the threads of a "
                              "parallel and is illegal at host level",
                    "move it into a parallel");
      if (stmt.async && (inside(Region::Role) || inside(Region::InThreads)))
        return fail(stmt.loc, "only the outermost inthreads can be async",
                    "drop .async from the nested inthreads");
      break;
    case Stmt::Kind::Dma:
      if (stmt.copyKind == "pad" && !device)
        return fail(stmt.loc, "dma.pad runs on device threads; move it into "
                              "a parallel");
      if (!stmt.dest && !device)
        return fail(stmt.loc, "=> " + stmt.destStorage +
                                  " allocates a buffer and is only legal "
                                  "inside a parallel");
      break;
    case Stmt::Kind::TensorDecl: {
      if (stmt.storage == "frag")
        break;
      bool deviceStorage = stmt.storage == "shared" || stmt.storage == "local";
      if (deviceStorage && !device)
        return fail(stmt.loc, stmt.storage + " tensors can only be declared "
                                             "inside a parallel",
                    "move the declaration into the block-level parallel");
      if (!deviceStorage && device)
        return fail(stmt.loc, "a global tensor cannot be declared inside a "
                              "parallel",
                    "declare it before the parallel, at host level");
      break;
    }
    case Stmt::Kind::EventDecl: {
      std::string storage = stmt.storage.empty() ? "shared" : stmt.storage;
      if (storage != "global" && !device)
        return fail(stmt.loc, storage + " events can only be declared inside "
                                        "a parallel",
                    "declare them in the block-level parallel");
      if (storage == "global" && device)
        return fail(stmt.loc, "a global event can only be declared at host "
                              "level, before the parallels",
                    "declare a shared event in the block-level parallel to "
                    "signal within a block");
      // An event orders regions; one of an inthreads region belongs to it
      // alone (upstream: "the event should not be declared inside a
      // inthreads block").
      if (inside(Region::Role) || inside(Region::InThreads))
        return fail(stmt.loc, "an event cannot be declared inside an "
                              "inthreads region",
                    "declare it in the parallel around the inthreads "
                    "regions that wait on and trigger it");
      // IRGen reports a size that is not a constant, where it evaluates it.
      for (const ExprPtr &d : stmt.arrayDims)
        if (std::optional<int64_t> c = scalar(*d).value; c && *c <= 0)
          return fail(d->loc, "event arrays need a positive size");
      if (stmt.arrivals && *stmt.arrivals <= 0)
        return fail(stmt.loc, "event<N> needs a positive arrival count");
      break;
    }
    case Stmt::Kind::ExprStmt:
      checkExprStmt(stmt);
      break;
    case Stmt::Kind::Apply: {
      const Expr &span = *stmt.source;
      if (span.kind != Expr::Kind::Member || span.name != "span" ||
          span.hasArgs || !span.base || span.base->kind != Expr::Kind::Name)
        return fail(span.loc, "apply runs over a frag's elements: apply "
                              "{i, j} in x.span");
      if (inside(Region::Apply))
        return fail(stmt.loc, "apply cannot be nested in another apply");
      if (mayYield(stmt.body))
        return fail(stmt.loc, "yield inside apply is not supported: the body "
                              "runs once per element, unrolled",
                    "yield before or after the apply");
      break;
    }
    case Stmt::Kind::Yield:
      if (!canExit(/*loop=*/false))
        return fail(stmt.loc, "yield ends a thread's part of a parallel; "
                              "outside one there is nothing to end",
                    "use return to leave a function");
      break;
    case Stmt::Kind::Break:
    case Stmt::Kind::Continue:
      if (!canExit(/*loop=*/true))
        return fail(stmt.loc,
                    (stmt.kind == Stmt::Kind::Break ? "break" : "continue") +
                        Twine(" outside a loop"),
                    "use it inside foreach or while");
      break;
    case Stmt::Kind::Return:
      if (device)
        return fail(stmt.loc, "return cannot leave a parallel",
                    "`yield;` ends the thread's part of the parallel; or "
                    "guard the work with if");
      if (!stmt.value)
        break;
      if (currentFunction && currentFunction->returnKind == "void")
        return fail(stmt.value->loc, "a void function returns no value",
                    "declare the function with the type it returns, or "
                    "write `return;`");
      if (returnedValue)
        return fail(stmt.loc, "a function returns once, at its end");
      if (!regions.empty())
        return fail(stmt.loc,
                    "return inside a branch or a loop is not supported",
                    "return once, at the end of the function");
      returnedValue = true;
      break;
    default:
      break;
    }
    if (!hadError)
      checkExprs(stmt);
  }

  /// The levels of the parallel `stmt` inside `enclosing`, completed, after
  /// the level rules; none after an error.
  std::optional<SmallVector<LevelPlan>>
  levelPlan(const Stmt &stmt, std::optional<Level> enclosing) {
    LevelError error;
    FailureOr<SmallVector<LevelPlan>> planned =
        planLevels(stmt, enclosing, error);
    if (failed(planned)) {
      fail(error.loc, error.message, error.hint);
      return std::nullopt;
    }
    SmallVector<LevelPlan> &plan = *planned;
    bool outermost = !enclosing;
    auto reject = [&](SMLoc loc, const Twine &message,
                      const Twine &hint = "") {
      fail(loc, message, hint);
      return std::nullopt;
    };
    if (stmt.async && !outermost)
      return reject(stmt.loc, "only the outermost parallel can be .async",
                    "drop .async from this nested parallel");
    if (!stmt.streamName.empty() && plan.front().level != Level::Block)
      return reject(stmt.loc,
                    "a stream can only be bound to a block-level parallel",
                    "annotate the level `: block`, or drop <" +
                        stmt.streamName + ">");
    if (stmt.clusterLevel &&
        (!outermost || plan.front().level != Level::Block ||
         !plan.front().source))
      return reject(stmt.clusterLevel->loc,
                    "a cluster groups the blocks of a kernel, so the "
                    "parallel inside it must be the kernel's block level",
                    "write `parallel {r} by [C] : cluster { parallel ... : "
                    "block { ... } }` outside every other parallel");
    // `parallel p by 64 : thread` outside any parallel runs in one block.
    if (outermost && plan.front().level != Level::Block)
      plan.insert(plan.begin(), {nullptr, Level::Block});
    if (!outermost && plan.front().level == Level::Block)
      return reject(stmt.loc, "a block-level parallel cannot be nested in "
                              "another parallel");
    // The chain continues the levels of the parallel around it.
    if (enclosing && static_cast<int>(*enclosing) <=
                         static_cast<int>(plan.front().level))
      return reject(plan.front().source ? plan.front().source->loc : stmt.loc,
                    "a '" + levelName(plan.front().level) +
                        "' parallel cannot be nested in a '" +
                        levelName(*enclosing) + "' parallel",
                    "levels go block, group-4, group, thread from the "
                    "outside in");
    for (size_t i = 0; i + 1 < plan.size(); ++i) {
      if (static_cast<int>(plan[i + 1].level) >=
          static_cast<int>(plan[i].level))
        return reject(plan[i + 1].source ? plan[i + 1].source->loc : stmt.loc,
                      "parallel levels must go from block to group-4, group "
                      "and thread");
      if (plan[i].level == Level::Warpgroup && plan[i + 1].level == Level::Warp)
        return reject(plan[i + 1].source->loc,
                      "an explicit group inside group-4 is not supported",
                      "use `: thread` inside a group-4 level");
    }
    // A group-4 level's threads: 128 per warpgroup.
    for (size_t i = 0; i + 1 < plan.size(); ++i) {
      if (plan[i].level != Level::Warpgroup ||
          plan[i + 1].level != Level::Thread)
        continue;
      int64_t total = 1;
      bool known = true;
      for (const ExprPtr &b : plan[i + 1].source->bounds) {
        if (b->kind != Expr::Kind::Int) {
          known = false;
          break;
        }
        total *= b->intValue;
      }
      if (known && total != 128)
        return reject(plan[i + 1].source->loc,
                      "a group-4 level has 128 threads, but this thread "
                      "level has " + Twine(total),
                      "make the thread extents multiply to 128");
    }
    return plan;
  }

  void statement(const Stmt &stmt) {
    // Host code that touches elements runs in a kernel of one thread.
    if (!onDevice() && runsOnOneThread(stmt)) {
      if (const Expr *assigned = assignedHostVariable(stmt))
        return fail(stmt.loc, "this host statement reads or writes tensor "
                              "elements, so croq runs it on the GPU, where it "
                              "cannot assign '" + assigned->name + "'",
                    "compute the value in a parallel and write it to a "
                    "tensor");
      result.onOneThread.insert(&stmt);
      levels.push_back(Level::Block);
      levels.push_back(Level::Thread);
      inRegion(Region::OneThread, [&] { analyzeStatement(stmt); });
      levels.resize(levels.size() - 2);
      return;
    }
    analyzeStatement(stmt);
  }

  /// The loops (foreach, while) around the current statement, outermost
  /// first.
  SmallVector<const Stmt *> loops;

  /// Whether a statement of `body` gives the future `name` a value: a copy
  /// or an assignment to it, or a swap or rotate of it.
  static bool fills(ArrayRef<StmtPtr> body, StringRef name) {
    return llvm::any_of(body, [&](const StmtPtr &s) {
      if ((s->kind == Stmt::Kind::Dma && s->name == name) ||
          (s->kind == Stmt::Kind::Assign && s->target &&
           s->target->kind == Expr::Kind::Name && s->target->name == name))
        return true;
      if (s->kind == Stmt::Kind::Swap &&
          llvm::any_of(s->operands, [&](const ExprPtr &e) {
            return e->kind == Expr::Kind::Name && e->name == name;
          }))
        return true;
      return fills(s->body, name) || fills(s->elseBody, name);
    });
  }

  /// What the place of a name expects, for the hint of an undeclared one.
  enum class Expects { Value, View, Event };

  /// False, after reporting it, when `e` uses a name no scope declares.
  bool resolved(const Expr &e, Expects what = Expects::Value) {
    if (e.kind == Expr::Kind::Name && e.name != "_" && e.name != "inf" &&
        !lookup(e.name)) {
      std::string hint =
          what == Expects::Event ? "declare the event (`shared event e;`) or "
                                   "name the future"
          : what == Expects::View
              ? "declare the tensor or name the future first"
              : "declare it (`int " + e.name + " = ...;`), bind it in a "
                "parallel, foreach or with, or #define it";
      fail(e.loc, "use of undeclared name '" + e.name + "'", hint);
      return false;
    }
    // The base of `x.at(i)` or `e[i]` is what the place expects; the
    // arguments are values.
    if (e.base && !resolved(*e.base, what))
      return false;
    return llvm::all_of(e.args, [&](const ExprPtr &arg) {
      return !arg || resolved(*arg, Expects::Value);
    });
  }

  /// Reports the first name that `stmt`'s own expressions use and no
  /// scope declares. Not resolved here: the bounds of parallel levels and
  /// withins, which indices() resolves level by level (a bound may use an
  /// earlier level's index), a foreach's `if` mask and vectorize index,
  /// which name the loop's indices, an apply's operands, which it
  /// declares, and the operands of inline assembly and attributes, which
  /// IRGen reads.
  void resolveNames(const Stmt &stmt) {
    auto one = [&](const Expr *e, Expects what = Expects::Value) {
      return !e || resolved(*e, what);
    };
    auto all = [&](ArrayRef<ExprPtr> es, Expects what = Expects::Value) {
      return llvm::all_of(es,
                          [&](const ExprPtr &e) { return one(e.get(), what); });
    };
    // `x = v;` declares x; `x += v` and `x.at(i) = v` use it.
    bool declares = stmt.kind == Stmt::Kind::Assign && stmt.op == "=" &&
                    stmt.target && stmt.target->kind == Expr::Kind::Name;
    bool views = stmt.kind == Stmt::Kind::Dma ||
                 stmt.kind == Stmt::Kind::MmaLoad ||
                 stmt.kind == Stmt::Kind::MmaStore || stmt.kind == Stmt::Kind::Mma;
    if ((!declares && !one(stmt.target.get())) ||
        !one(stmt.value.get(), views ? Expects::View : Expects::Value) ||
        !one(stmt.source.get(), Expects::View) ||
        !one(stmt.dest.get(), Expects::View) || !one(stmt.padValue.get()) ||
        !one(stmt.boundEvent.get(), Expects::Event) ||
        !one(stmt.scaleA.get(), Expects::View) || !one(stmt.scaleB.get()) ||
        !all(stmt.dims) ||
        !all(stmt.arrayDims))
      return;
    switch (stmt.kind) {
    case Stmt::Kind::Apply:
    case Stmt::Kind::Foreach:
    case Stmt::Kind::Asm:
      return;
    case Stmt::Kind::Wait:
    case Stmt::Kind::Trigger:
      all(stmt.operands, Expects::Event);
      return;
    case Stmt::Kind::Mma:
    case Stmt::Kind::MmaScale:
    case Stmt::Kind::MmaStore:
    case Stmt::Kind::Swap:
      all(stmt.operands, Expects::View);
      return;
    default:
      all(stmt.operands);
      return;
    }
  }

  void analyzeStatement(const Stmt &stmt) {
    check(stmt);
    if (hadError)
      return;
    resolveNames(stmt);
    if (hadError)
      return;
    switch (stmt.kind) {
    case Stmt::Kind::Block:
      scoped(stmt.body);
      return;
    case Stmt::Kind::ScalarDecl: {
      // A typed scalar is mutable: its value counts only when nothing
      // assigns it.
      Decl scalarDecl;
      scalarDecl.kind = Decl::Kind::Scalar;
      if (stmt.value && !reassigned.contains(stmt.name))
        scalarDecl.scalar = scalar(*stmt.value);
      Decl *d = declareNew(stmt.name, stmt.nameLoc, std::move(scalarDecl));
      if (!d)
        return;
      d->isMutable = true;
      d->threadIndex = stmt.value && mentionsThreadIndex(*stmt.value);
      for (const StmtPtr &more : stmt.moreDecls)
        statement(*more);
      return;
    }
    case Stmt::Kind::ShapeDecl: {
      Decl d;
      d.kind = Decl::Kind::Shape;
      d.rankUnknown = true;
      if (stmt.value)
        if (std::optional<SmallVector<Scalar>> elems = shapeOf(*stmt.value)) {
          d.elems = *elems;
          d.rankUnknown = false;
        }
      declareNew(stmt.name, stmt.nameLoc, std::move(d));
      return;
    }
    case Stmt::Kind::TensorDecl:
      tensorDecl(stmt);
      for (const StmtPtr &more : stmt.moreDecls)
        statement(*more);
      return;
    case Stmt::Kind::EventDecl:
    case Stmt::Kind::StreamDecl: {
      Decl d;
      d.stmt = &stmt;
      if (!declareNew(stmt.name, stmt.nameLoc, std::move(d)))
        return;
      for (const StmtPtr &more : stmt.moreDecls)
        statement(*more);
      return;
    }
    case Stmt::Kind::Assign: {
      if (!stmt.target || stmt.target->kind != Expr::Kind::Name ||
          !stmt.value)
        return;
      StringRef name = stmt.target->name;
      Decl *existing = lookup(name);
      // `k += t`: an update of a mutable scalar.
      if (stmt.op != "=") {
        if (existing && existing->kind == Decl::Kind::Scalar) {
          existing->scalar = {};
          existing->threadIndex |= mentionsThreadIndex(*stmt.value);
        }
        return;
      }
      // `b = {6, 8};`: the first assignment names a shape; shapes are
      // immutable.
      bool here = existing && inThisScope(name) == existing;
      if (isShapeValued(*stmt.value) && existing) {
        if (existing->kind != Decl::Kind::Shape)
          return fail(stmt.target->loc,
                      "'" + name + "' is not a shape; a shape cannot be "
                      "assigned to it");
        if (here)
          return fail(stmt.target->loc,
                      "the shape '" + name +
                          "' is already defined in this scope",
                      "shapes are immutable; give the new one its own name");
      }
      // A mutable scalar is reassigned and a future rebound. An immutable
      // scalar of this scope (a parameter, an index, a name an assignment
      // made) cannot be; any other name is declared again, shadowing an
      // outer one.
      if (existing && existing->kind == Decl::Kind::Scalar &&
          existing->isMutable) {
        existing->scalar = {};
        existing->threadIndex |= mentionsThreadIndex(*stmt.value);
        return;
      }
      if (existing && existing->kind == Decl::Kind::Future) {
        existing->holdsFuture = true;
        return;
      }
      // `v = select(k, f0, f1);` names a future: not a name this scope
      // has for something else.
      if (here && selectedFuture(*stmt.value))
        return fail(stmt.target->loc,
                    "'" + name + "' is already " + describe(*existing),
                    "give the selected future its own name");
      // `f2 = f;` of a placeholder that no copy or swap has filled, before
      // here or later in a loop around here: there is no future to name.
      if (stmt.value->kind == Expr::Kind::Name)
        if (Decl *source = lookup(stmt.value->name);
            source && source->kind == Decl::Kind::Future &&
            source->placeholder && !source->holdsFuture &&
            llvm::none_of(loops, [&](const Stmt *loop) {
              return fills(loop->body, stmt.value->name);
            }))
          return fail(stmt.target->loc,
                      "'" + name + "' cannot be initialised with the "
                      "placeholder '" + stmt.value->name +
                          "', which no copy or swap has given a future yet",
                      "declare another placeholder (`" + name +
                          " = dma.any;`), or assign a copy to '" +
                          stmt.value->name + "' first");
      if (here && existing->kind == Decl::Kind::Scalar)
        return fail(stmt.target->loc,
                    "'" + name + "' is immutable and already defined in "
                    "this scope",
                    "declare it as `mutable int " + name + " = ...;`");
      Decl d;
      d.stmt = &stmt;
      if (isShapeValued(*stmt.value)) {
        d.kind = Decl::Kind::Shape;
        d.rankUnknown = true;
        if (std::optional<SmallVector<Scalar>> elems = shapeOf(*stmt.value)) {
          d.elems = *elems;
          d.rankUnknown = false;
        }
      } else if (Decl *future = selectedFuture(*stmt.value)) {
        d.kind = Decl::Kind::Future;
        d.buffer = future->buffer;
      } else if (std::optional<BufferFacts> b = view(*stmt.value)) {
        d.kind = Decl::Kind::Tensor;
        d.buffer = b;
      } else {
        d.kind = Decl::Kind::Scalar;
        d.scalar = scalar(*stmt.value);
        d.threadIndex = mentionsThreadIndex(*stmt.value);
      }
      d.origin = Decl::Origin::Assignment;
      declare(name, std::move(d));
      return;
    }
    case Stmt::Kind::Dma:
      copy(stmt);
      return;
    case Stmt::Kind::DmaAny: {
      Decl d;
      d.kind = Decl::Kind::Future;
      d.stmt = &stmt;
      d.placeholder = true;
      declare(stmt.name, std::move(d));
      result.placeholders.try_emplace(&stmt);
      return;
    }
    case Stmt::Kind::MmaFill: {
      if (stmt.refill) {
        // Of one accumulator, an element of an array of them, or (`mma.fill
        // mc, v;` of an array) each element.
        Decl *existing = stmt.target ? accumulatorOf(*stmt.target, "mma.fill")
                                     : lookup(stmt.name);
        if (hadError || (existing && existing->kind == Decl::Kind::Frag))
          return;
      }
      Decl d;
      d.kind = Decl::Kind::Frag;
      d.stmt = &stmt;
      for (const ExprPtr &dim : stmt.arrayDims) {
        std::optional<int64_t> extent = scalar(*dim).value;
        if (!extent || *extent <= 0)
          return fail(dim->loc, "the extents of an array of accumulators "
                                "are positive compile-time constants",
                      "write a constant, or a name #defined or bound to "
                      "one");
        d.accumulatorArray.push_back(*extent);
      }
      declare(stmt.name, std::move(d));
      return;
    }
    case Stmt::Kind::MmaLoad: {
      // `mma.load src, frag;`: into the register tile `frag` declares.
      if (stmt.refill) {
        Decl *target = lookup(stmt.name);
        if (!target || target->kind != Decl::Kind::Tile)
          return fail(stmt.nameLoc,
                      "mma.load src, " + stmt.name +
                          " loads into a register tile, and '" + stmt.name +
                          "' is not one",
                      "declare it (`frag f16 [64, 16] " + stmt.name +
                          ";`), or name the load: `" + stmt.name +
                          " = mma.load src;`");
        if (stmt.source)
          view(*stmt.source);
        return;
      }
      Decl d;
      d.kind = Decl::Kind::Frag;
      d.stmt = &stmt;
      if (stmt.source)
        d.buffer = view(*stmt.source);
      declare(stmt.name, std::move(d));
      return;
    }
    case Stmt::Kind::Mma:
      mma(stmt);
      return;
    case Stmt::Kind::MmaStore:
      if (!stmt.operands.empty())
        (void)accumulatorOf(*stmt.operands[0], "mma.store");
      return;
    case Stmt::Kind::MmaScale: {
      const Expr &accExpr = *stmt.operands[0];
      Decl *acc = accumulatorOf(accExpr, "mma.scale");
      if (hadError)
        return;
      if (acc && !acc->accumulatorArray.empty())
        return fail(accExpr.loc, "mma.scale of an element of an array of "
                                 "accumulators is not supported",
                    "declare the block-scaled accumulator on its own: "
                    "`mc = mma.fill.f32 0.0f;`");
      if (!acc || acc->kind != Decl::Kind::Frag || !acc->stmt ||
          acc->stmt->kind != Stmt::Kind::MmaFill)
        return fail(accExpr.loc, "mma.scale scales an accumulator that "
                                 "mma.fill started",
                    "write `mc = mma.fill.f32 0.0f;` before the MMAs");
      result.blockScaled.insert(acc->stmt);
      return;
    }
    case Stmt::Kind::Swap:
      swap(stmt);
      return;
    case Stmt::Kind::Parallel: {
      std::optional<Level> enclosing;
      if (!levels.empty())
        enclosing = levels.back();
      std::optional<SmallVector<LevelPlan>> plan = levelPlan(stmt, enclosing);
      if (!plan)
        return;
      size_t depth = levels.size();
      for (const LevelPlan &level : *plan)
        levels.push_back(level.level);
      push();
      for (const ParallelLevel &level : stmt.levels) {
        bool threadLevel = false;
        for (const LevelPlan &planned : *plan)
          if (planned.source == &level)
            threadLevel = planned.level == Level::Thread;
        indices(level.names, level.bounds, level.tupleName, level.loc,
                level.nameLocs, level.tupleLoc, threadLevel,
                /*parallel=*/true);
        if (hadError)
          return;
      }
      // The cluster's index, declared where IRGen binds it: after the block
      // level's bounds, which cannot use it.
      if (const std::optional<ParallelLevel> &cluster = stmt.clusterLevel) {
        if (!cluster->tupleName.empty())
          return fail(cluster->tupleLoc,
                      "a cluster's one index needs no tuple name");
        indices(cluster->names, cluster->bounds, "", cluster->loc,
                cluster->nameLocs, {}, /*threadLevel=*/false,
                /*parallel=*/true);
        if (hadError)
          return;
      }
      result.levelPlans[&stmt] = std::move(*plan);
      inRegion(Region::Parallel, [&] { statements(stmt.body); });
      pop();
      levels.resize(depth);
      return;
    }
    case Stmt::Kind::With:
    case Stmt::Kind::Foreach:
      push();
      for (const ExprPtr &range : stmt.ranges) {
        Decl *d = lookup(range->name);
        StringRef name = range->alias.empty() ? StringRef(range->name)
                                              : StringRef(range->alias);
        // `foreach x` runs over the range of a bounded variable, or over
        // each index of a tuple of them.
        bool bounded =
            d && ((d->kind == Decl::Kind::Scalar && d->scalar.bounded) ||
                  (d->kind == Decl::Kind::Shape &&
                   (d->rankUnknown ||
                    llvm::all_of(d->elems,
                                 [](const Scalar &e) { return e.bounded; }))));
        if (!bounded) {
          std::string hint = "write `with " + range->name + " in N { foreach " +
                             range->name + " ... }` or `foreach " +
                             range->name + " in N`";
          if (d && d->kind == Decl::Kind::Shape)
            return fail(range->loc, "foreach " + range->name +
                                        " needs an index tuple of bounded "
                                        "variables",
                        hint);
          return fail(range->loc,
                      d ? "foreach " + range->name +
                              " needs a bounded variable declared by with or "
                              "an enclosing foreach"
                        : "use of undeclared name '" + range->name + "'",
                      hint);
        }
        for (const ExprPtr &arg : range->args)
          if (arg && !resolved(*arg))
            return;
        // `foreach index` over an index tuple runs over its elements: the
        // name stays the tuple, its elements keep their bounds.
        if (d && d->kind == Decl::Kind::Shape) {
          Decl tuple = *d;
          for (Scalar &elem : tuple.elems)
            elem = Scalar{std::nullopt, elem.bound, true};
          tuple.threadIndex = false;
          SmallVector<std::string> elemNames = tuple.elemNames;
          SmallVector<Scalar> elems = tuple.elems;
          if (!declareNew(name, range->loc, std::move(tuple),
                          Decl::Origin::Index))
            return;
          // The loops bind the tuple's element names too.
          for (auto [i, elemName] : llvm::enumerate(elemNames)) {
            Decl elem;
            elem.kind = Decl::Kind::Scalar;
            elem.scalar = i < elems.size() ? elems[i] : Scalar{};
            if (!declareNew(elemName, range->loc, std::move(elem),
                            Decl::Origin::Index))
              return;
          }
          continue;
        }
        Decl index;
        index.kind = Decl::Kind::Scalar;
        index.scalar = d && d->kind == Decl::Kind::Scalar
                           ? Scalar{std::nullopt, d->scalar.bound, true}
                           : Scalar{std::nullopt, std::nullopt, true};
        // A loop over the range of a thread index runs the same
        // iterations in every thread.
        if (!declareNew(name, range->loc, std::move(index),
                        Decl::Origin::Index))
          return;
      }
      for (const Within &w : stmt.withins) {
        indices(w.names, w.bounds, w.tupleName, w.loc, {}, w.tupleLoc);
        if (hadError)
          return;
      }
      for (const WhereBinding &binding : stmt.whereBindings)
        if (Decl *target = lookup(binding.target))
          scopes.back()[binding.alias] = target;
      if (stmt.kind == Stmt::Kind::Foreach) {
        loops.push_back(&stmt);
        inRegion(Region::Loop, [&] { statements(stmt.body); });
        loops.pop_back();
      } else {
        statements(stmt.body);
      }
      pop();
      return;
    case Stmt::Kind::Apply: {
      push();
      std::optional<SmallVector<Scalar>> bounds;
      if (stmt.source)
        bounds =
            isShapeValued(*stmt.source) ? shapeOf(*stmt.source) : std::nullopt;
      if (!bounds && stmt.source && stmt.source->kind == Expr::Kind::Member &&
          stmt.source->base && stmt.source->base->kind == Expr::Kind::Name)
        if (Decl *d = lookup(stmt.source->base->name); d && d->buffer)
          bounds = extents(d->buffer->shape);
      for (auto [i, name] : llvm::enumerate(stmt.operands)) {
        Decl index;
        index.kind = Decl::Kind::Scalar;
        index.scalar = Scalar{std::nullopt,
                              bounds && i < bounds->size() ? (*bounds)[i].value
                                                           : std::nullopt,
                              true};
        if (!declareNew(name->name, name->loc, std::move(index),
                        Decl::Origin::Index))
          return;
      }
      // Each thread runs the body for its own elements: IRGen puts a thread
      // level around it where there is none.
      bool threads = !levels.empty() && levels.back() != Level::Thread;
      if (threads)
        levels.push_back(Level::Thread);
      inRegion(Region::Apply, [&] { statements(stmt.body); });
      if (threads)
        levels.pop_back();
      pop();
      return;
    }
    case Stmt::Kind::If:
      inRegion(Region::Branch, [&] {
        scoped(stmt.body);
        scoped(stmt.elseBody);
      });
      return;
    case Stmt::Kind::While:
      loops.push_back(&stmt);
      inRegion(Region::Loop, [&] { scoped(stmt.body); });
      loops.pop_back();
      return;
    case Stmt::Kind::InThreads:
      inRegion(stmt.async ? Region::Role : Region::InThreads,
               [&] { scoped(stmt.body); });
      return;
    default:
      return;
    }
  }
};

} // namespace

bool mlir::croq::croqtile::isAtomicBuiltin(StringRef name) {
  return llvm::is_contained(
      {"__atomic_add", "__atomic_sub", "__atomic_exch", "__atomic_min",
       "__atomic_max", "__atomic_and", "__atomic_or", "__atomic_xor",
       "__atomic_cas"},
      name);
}

bool mlir::croq::croqtile::isShapeOperator(StringRef op) {
  return op == "+" || op == "-" || op == "*" || op == "/" || op == "%";
}

bool mlir::croq::croqtile::isShapeValued(
    const Expr &e, function_ref<bool(StringRef)> isShapeName,
    function_ref<bool(const Expr &)> isTensorPick) {
  auto recurse = [&](const Expr &x) {
    return isShapeValued(x, isShapeName, isTensorPick);
  };
  switch (e.kind) {
  case Expr::Kind::List:
  case Expr::Kind::Tuple:
    return true;
  case Expr::Kind::Name:
    return isShapeName(e.name);
  case Expr::Kind::Member:
    return e.name == "span" && !e.hasArgs && e.base;
  case Expr::Kind::Binary:
    return isShapeOperator(e.name) &&
           (recurse(*e.args[0]) || recurse(*e.args[1]));
  case Expr::Kind::Index:
    return e.base && (recurse(*e.base) || isTensorPick(e));
  case Expr::Kind::Call:
    // cdiv(shape, shape-or-scalar), element-wise.
    return e.name == "cdiv" && !e.base && e.args.size() == 2 &&
           (recurse(*e.args[0]) || recurse(*e.args[1]));
  default:
    return false;
  }
}

std::string
mlir::croq::croqtile::defaultAccumulatorElement(StringRef operandElement) {
  if (operandElement == "f16" || operandElement == "half")
    return "f16";
  if (operandElement.starts_with("s") || operandElement.starts_with("u"))
    return "s32";
  return "f32";
}

FailureOr<SemaResult> mlir::croq::croqtile::analyze(const Program &program,
                                                    DiagnoseFn diagnose) {
  SemaResult result;
  if (!Sema(result, diagnose).program(program))
    return failure();
  return result;
}
