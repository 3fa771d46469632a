//===- InitAllDialects.h - croq dialect registration ------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Entry point for tools and for compilers that embed croq: registers the croq
// dialect and the upstream dialects that croq IR is written with and lowered
// through.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_INITALLDIALECTS_H
#define CROQ_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;

namespace croq {

/// Registers `croq` and the upstream dialects croq IR uses (func, arith,
/// scf, memref, gpu, nvgpu, nvvm, llvm, cf, math, vector) and the NVVM
/// target that serializes kernels.
/// Registers the croq dialect, the upstream dialects croq IR and its
/// lowering use, and every interface and translation the croq-to-nvvm
/// pipeline needs (upstream's extensions and LLVM IR translations
/// included): the one call an embedder makes before running croq's passes.
void registerCroqDialects(DialectRegistry &registry);

} // namespace croq
} // namespace mlir

#endif // CROQ_INITALLDIALECTS_H
