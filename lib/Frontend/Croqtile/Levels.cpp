//===- Levels.cpp - Croqtile parallel level inference ---------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Levels.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::croq;
using namespace mlir::croq::croqtile;

std::optional<Level> mlir::croq::croqtile::levelFromName(StringRef name) {
  return llvm::StringSwitch<std::optional<Level>>(name)
      .Case("block", Level::Block)
      .Case("group-4", Level::Warpgroup)
      .Case("group", Level::Warp)
      .Case("thread", Level::Thread)
      .Default(std::nullopt);
}

StringRef mlir::croq::croqtile::levelName(Level level) {
  switch (level) {
  case Level::Block:
    return "block";
  case Level::Warpgroup:
    return "group-4";
  case Level::Warp:
    return "group";
  case Level::Thread:
    return "thread";
  }
  llvm_unreachable("unknown level");
}

/// The number of parallel levels nested in `body`, at the deepest.
static unsigned parallelDepth(const std::vector<StmtPtr> &body) {
  unsigned depth = 0;
  for (const StmtPtr &s : body) {
    unsigned here = s->kind == Stmt::Kind::Parallel ? s->levels.size() : 0;
    depth = std::max(
        {depth, here + parallelDepth(s->body), parallelDepth(s->elseBody)});
  }
  return depth;
}

static LogicalResult fail(LevelError &error, llvm::SMLoc loc,
                          const llvm::Twine &message,
                          const llvm::Twine &hint = "") {
  error.loc = loc;
  error.message = message.str();
  error.hint = hint.str();
  return failure();
}

FailureOr<SmallVector<LevelPlan>> mlir::croq::croqtile::planLevels(
    const Stmt &stmt, std::optional<Level> enclosing, LevelError &error) {
  SmallVector<LevelPlan> plan;
  bool anyAnnotated = llvm::any_of(
      stmt.levels, [](const ParallelLevel &p) { return !p.level.empty(); });
  bool allAnnotated = llvm::all_of(
      stmt.levels, [](const ParallelLevel &p) { return !p.level.empty(); });
  if (anyAnnotated && !allAnnotated) {
    // `parallel p by 8, q by 4 : thread`: an unannotated level takes the
    // level below the one before it (the block level first in a kernel), a
    // last one the thread level; each must fit above the next annotated.
    // Depth counts levels from the block level down.
    auto depthOf = [](Level level) { return 3 - static_cast<int>(level); };
    int previous = !enclosing ? -1 : depthOf(*enclosing);
    for (auto [i, p] : llvm::enumerate(stmt.levels)) {
      int depth;
      if (!p.level.empty()) {
        depth = depthOf(*levelFromName(p.level));
      } else {
        int next = 4;
        for (size_t j = i + 1; j < stmt.levels.size(); ++j)
          if (!stmt.levels[j].level.empty()) {
            next = depthOf(*levelFromName(stmt.levels[j].level));
            break;
          }
        depth = i + 1 == stmt.levels.size() ? 3 : previous + 1;
        if (depth >= next || depth > 3 || depth <= previous)
          return fail(error, p.loc,
                      "unable to infer the level of this parallel-by: "
                      "no level lies between the levels around it",
                      "annotate it (`: block`, `: group-4`, `: group`, "
                      "`: thread`)");
      }
      plan.push_back({&p, static_cast<Level>(3 - depth)});
      previous = depth;
    }
  } else if (allAnnotated) {
    for (const ParallelLevel &p : stmt.levels)
      plan.push_back({&p, *levelFromName(p.level)});
  } else if (stmt.levels.size() == 1) {
    // An unannotated level, as Croqtile's pbfill infers it: the outermost
    // of a nest is the block level and the innermost the thread level; in
    // between, levels take group-4 and group so that the nest below fits
    // (`parallel by 2 parallel by 4 parallel by 6` is block, group,
    // thread). Depth here counts levels from the block level down.
    unsigned below = parallelDepth(stmt.body);
    if (!enclosing && below > 0) {
      plan.push_back({&stmt.levels[0], Level::Block});
    } else if (!enclosing) {
      plan.push_back({nullptr, Level::Block});
      plan.push_back({&stmt.levels[0], Level::Thread});
    } else {
      int parentDepth = 3 - static_cast<int>(*enclosing);
      int depth = std::max(parentDepth + 1, 3 - static_cast<int>(below));
      if (depth > 3)
        return fail(error, stmt.loc,
                    "this parallel is nested below the thread level",
                    "a nest has at most four levels: block, group-4, group "
                    "and thread");
      plan.push_back({&stmt.levels[0], static_cast<Level>(3 - depth)});
    }
  } else if (stmt.levels.size() == 2 && !enclosing) {
    plan.push_back({&stmt.levels[0], Level::Block});
    plan.push_back({&stmt.levels[1], Level::Thread});
  } else {
    return fail(error, stmt.loc, "unable to infer the parallel-by level(s)",
                "annotate the levels (`: block`, `: thread`, ...)");
  }
  return plan;
}
