//===- CroqEnums.td - croq enums and attributes ------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQENUMS_TD
#define CROQ_DIALECT_CROQ_IR_CROQENUMS_TD

include "Croq/Dialect/Croq/IR/CroqBase.td"
include "mlir/IR/EnumAttr.td"

// Levels are ordered: a nested `croq.parallel` must use a strictly smaller
// level than its enclosing one. The values encode that order.
def Croq_Level : I32EnumAttr<"Level", "parallel level", [
    I32EnumAttrCase<"Thread", 0, "thread">,
    I32EnumAttrCase<"Warp", 1, "warp">,
    I32EnumAttrCase<"Warpgroup", 2, "warpgroup">,
    I32EnumAttrCase<"Block", 3, "block">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}
def Croq_LevelAttr : EnumAttr<Croq_Dialect, Croq_Level, "level"> {
  let summary = "Croqtile parallel level (block, group-4, group, thread)";
}

def Croq_MmaLayout : I32EnumAttr<"MmaLayout", "MMA operand layout", [
    I32EnumAttrCase<"RowRow", 0, "row_row">,
    I32EnumAttrCase<"RowCol", 1, "row_col">,
    I32EnumAttrCase<"ColRow", 2, "col_row">,
    I32EnumAttrCase<"ColCol", 3, "col_col">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}
def Croq_MmaLayoutAttr : EnumAttr<Croq_Dialect, Croq_MmaLayout, "mma_layout"> {
  let summary = "layouts of the A and B operands of an MMA";
}

// Enums used as type parameters; parsed and printed by the types themselves.
def Croq_MemoryKind : I32EnumAttr<"MemoryKind", "storage of an event", [
    I32EnumAttrCase<"Shared", 0, "shared">,
    I32EnumAttrCase<"Local", 1, "local">,
    I32EnumAttrCase<"Global", 2, "global">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}

def Croq_Issuer : I32EnumAttr<"Issuer",
    "which threads of a group issue a single-thread operation", [
    I32EnumAttrCase<"Each", 0, "each">,
    I32EnumAttrCase<"First", 1, "first">,
    I32EnumAttrCase<"Elected", 2, "elected">,
    I32EnumAttrCase<"Lowest", 3, "lowest">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}
def Croq_IssuerAttr : EnumAttr<Croq_Dialect, Croq_Issuer, "issuer"> {
  let summary = "who issues a TMA copy or an expect_tx arrival";
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    `each`: every executing thread issues its own (the group is one thread,
    or a croq.inthreads picks single threads). `first`: the thread of rank 0
    in the cooperating group. `elected`: the lane that `elect.sync` picks in
    the group's first warp, where the divergence analysis proved that warp
    converged. `lowest`: the lowest-numbered thread that the croq.inthreads
    around the op selects, where it selects several threads but not whole
    groups (upstream's `inthreads.async (g == 0 && t >= 32 && t < 64)`
    issues from thread 32). Set by croq-elect-issuers.
  }];
}

def Croq_FutureKind : I32EnumAttr<"FutureKind", "engine a future waits on", [
    I32EnumAttrCase<"Dma", 0, "dma">,
    I32EnumAttrCase<"Tma", 1, "tma">,
    I32EnumAttrCase<"Mma", 2, "mma">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}

def Croq_FragRole : I32EnumAttr<"FragRole", "role of an MMA fragment", [
    I32EnumAttrCase<"A", 0, "a">,
    I32EnumAttrCase<"B", 1, "b">,
    I32EnumAttrCase<"Acc", 2, "acc">,
    I32EnumAttrCase<"Meta", 3, "meta">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::croq";
}

// TMA and shared-memory swizzle spans, in bytes.
def Croq_SwizzleAttr : ConfinedAttr<I64Attr, [IntIsOneOf<[32, 64, 128]>]>;

#endif // CROQ_DIALECT_CROQ_IR_CROQENUMS_TD
