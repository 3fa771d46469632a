//===- CroqDialect.h - croq dialect -----------------------------*- C++ -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQDIALECT_H
#define CROQ_DIALECT_CROQ_IR_CROQDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

#include "Croq/Dialect/Croq/IR/CroqDialect.h.inc"

namespace mlir::croq {
/// The unit attribute of a kernel `gpu.func` whose blocks must all be
/// resident at once (a `block<cooperative>` parallel): its host code
/// launches it with cuLaunchCooperativeKernel.
inline constexpr llvm::StringLiteral kCooperativeAttrName = "croq.cooperative";
/// On a gpu.launch_func of a kernel launched in clusters: the blocks per
/// cluster along x, for the host's check of the grid.
inline constexpr llvm::StringLiteral kClusterBlocksAttrName =
    "croq.cluster_blocks";
/// On an scf.for: the program's `: unroll(n)`, the factor that
/// croq-unroll-hinted-loops unrolls it by (fully when n covers its trips).
inline constexpr llvm::StringLiteral kUnrollAttrName = "croq.unroll";
/// On the op that a cooperative copy lowers to (its loop, or the branch
/// between its vector and scalar loops): the level whose instance splits
/// the copy among its threads, which croq-check-divergence requires all
/// to reach it, as it does a barrier.
inline constexpr llvm::StringLiteral kCollectiveAttrName = "croq.collective";
/// On a croq.wait that croq-bind-tma-futures left with TMA futures: they
/// are asynchronous TMA stores', checked there; the wait lowers to a wait
/// for the executing threads' bulk stores to have read their tiles.
inline constexpr llvm::StringLiteral kTmaStoreWaitAttr = "croq.tma_stores";
/// On a memref.store of a block's own code (between the block level and
/// the levels inside it) that croq-insert-barriers ordered after another
/// such store by program order alone: croq-elect-issuers elects the one
/// thread that makes it by thread id, so that every such store is the same
/// thread's (elect.sync may pick another lane each time).
inline constexpr llvm::StringLiteral kSameIssuerAttr = "croq.same_issuer";
} // namespace mlir::croq

#endif // CROQ_DIALECT_CROQ_IR_CROQDIALECT_H
