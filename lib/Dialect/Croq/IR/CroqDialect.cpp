//===- CroqDialect.cpp - croq dialect registration ------------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"
#include "Croq/Dialect/Croq/IR/CroqTypes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::croq;

#include "Croq/Dialect/Croq/IR/CroqDialect.cpp.inc"

void CroqDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "Croq/Dialect/Croq/IR/CroqOps.cpp.inc"
      >();
}

/// `croq.swizzle` (croq-plan-shared-layout): the swizzle span in bytes of
/// a shared buffer that warpgroup MMAs read, on its allocation (or, inside
/// the croq-to-gpu conversion, on the view of dynamic shared memory that
/// replaced it).
static LogicalResult verifySwizzleAttr(Operation *op, Attribute value) {
  auto span = dyn_cast<IntegerAttr>(value);
  if (!span || !span.getType().isInteger(64))
    return op->emitError("'croq.swizzle' must be an i64 span in bytes");
  int64_t bytes = span.getInt();
  if (bytes != 32 && bytes != 64 && bytes != 128)
    return op->emitError("'croq.swizzle' is ")
           << bytes << "; a wgmma swizzle span is 32, 64 or 128 bytes";
  if (!isa<memref::AllocOp, memref::ViewOp>(op))
    return op->emitError("'croq.swizzle' belongs on the memref.alloc of a "
                         "shared buffer");
  auto type = cast<MemRefType>(op->getResult(0).getType());
  if (getStorage(type) != Storage::Shared || type.getRank() < 2)
    return op->emitError("'croq.swizzle' needs a shared buffer of rank 2 or "
                         "more, got ")
           << type;
  // The layout repeats the span's pattern along each row, and wgmma
  // descriptors count its 16-byte chunks: rows are whole spans.
  int64_t rowBytes =
      type.getShape().back() * getStorageBytes(type.getElementType());
  if (!ShapedType::isDynamic(type.getShape().back()) && rowBytes % bytes != 0)
    return op->emitError("'croq.swizzle' is ")
           << bytes << ", but the buffer's rows are " << rowBytes
           << " bytes, not a multiple of it";
  return success();
}

LogicalResult CroqDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == "croq.swizzle")
    return verifySwizzleAttr(op, attr.getValue());
  // `croq.issuer_thread` (croq-elect-issuers): the thread id that issues an
  // op whose issuer is `lowest`.
  if (name == "croq.issuer_thread") {
    auto thread = dyn_cast<IntegerAttr>(attr.getValue());
    auto issuer = op->getAttrOfType<IssuerAttr>("issuer");
    if (!thread || !thread.getType().isInteger(64) || thread.getInt() < 0 ||
        !issuer || issuer.getValue() != Issuer::Lowest)
      return op->emitError("'croq.issuer_thread' must be a thread id (i64) "
                           "on an op whose issuer is `lowest`");
    return success();
  }
  // croq-bind-tma-futures' mark on a wait it left with TMA stores' futures.
  if (name == kTmaStoreWaitAttr) {
    if (!isa<WaitOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError("'")
             << kTmaStoreWaitAttr << "' is a unit attribute of a croq.wait";
    return success();
  }
  // croq-insert-barriers' mark on a store it ordered by one thread's
  // program order.
  if (name == kSameIssuerAttr) {
    if (!isa<memref::StoreOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitError("'")
             << kSameIssuerAttr << "' is a unit attribute of a memref.store";
    return success();
  }
  // The program's host C++ code (outside __co__ functions), in source order,
  // kept for the tools that build the whole program.
  if (name == "croq.host_code") {
    auto chunks = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !chunks ||
        !llvm::all_of(chunks, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError("'croq.host_code' is an array of strings on a "
                           "module");
    return success();
  }
  // The file's C++ device code (its `__device__` declarations), which
  // croq-link-device-code compiles for the functions kernels call.
  if (name == "croq.device_code") {
    if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitError("'croq.device_code' is a string on a module");
    return success();
  }
  // A call shim's declaration: the callee as C++ spells it, and the C++
  // types of its result and parameters (see croq-link-device-code).
  if (name == "croq.callee" || name == "croq.signature") {
    auto strings = dyn_cast<ArrayAttr>(attr.getValue());
    bool ok = name == "croq.callee"
                  ? isa<StringAttr>(attr.getValue())
                  : strings && !strings.empty() &&
                        llvm::all_of(strings, [](Attribute a) {
                          return isa<StringAttr>(a);
                        });
    if (!ok || op->getName().getStringRef() != "llvm.func")
      return op->emitError("'")
             << name << "' is a " << (name == "croq.callee" ? "string" : "non-empty array of strings")
             << " on an llvm.func";
    return success();
  }
  // A kernel whose blocks must all be resident at once (see
  // kCooperativeAttrName).
  if (name == kCooperativeAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        !(isa<gpu::GPUFuncOp, gpu::LaunchFuncOp>(op) ||
          op->getName().getStringRef() == "llvm.func"))
      return op->emitError("'")
             << name
             << "' is a unit attribute on a kernel (gpu.func or llvm.func) "
                "or its gpu.launch_func";
    return success();
  }
  // A loop's unroll factor (see kUnrollAttrName).
  if (name == kUnrollAttrName) {
    auto factor = dyn_cast<IntegerAttr>(attr.getValue());
    if (!factor || factor.getInt() < 1 || !isa<scf::ForOp>(op))
      return op->emitError("'")
             << name << "' is a positive integer attribute on an scf.for";
    return success();
  }
  // The cluster size of a launch's kernel (see kClusterBlocksAttrName).
  if (name == kClusterBlocksAttrName) {
    auto blocks = dyn_cast<IntegerAttr>(attr.getValue());
    if (!blocks || blocks.getInt() < 1 || !isa<gpu::LaunchFuncOp>(op))
      return op->emitError("'")
             << name
             << "' is a positive integer attribute on a gpu.launch_func";
    return success();
  }
  // The group that splits a cooperative copy (see kCollectiveAttrName).
  if (name == kCollectiveAttrName) {
    if (!isa<LevelAttr>(attr.getValue()) || !isa<scf::IfOp, scf::ForOp>(op))
      return op->emitError("'") << name
                                << "' is a level attribute on the scf.if or "
                                   "scf.for of a cooperative copy";
    return success();
  }
  // Every decision that passes record goes through an op, an operand, a
  // property or one of the attributes above: no other croq.* attribute.
  return op->emitError("unknown croq dialect attribute '")
         << name << "'";
}
