//===- KernelModules.cpp - one gpu.module for all kernels ------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//
//
// Moves every outlined kernel into one gpu.module, so that a source file
// with several kernels serializes to one PTX file and one image.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQMERGEKERNELMODULESPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

/// The name of the merged module.
constexpr llvm::StringLiteral kMergedName = "croq_kernels";

/// An external function declaration: func.func or llvm.func without a body.
static bool isExternalDeclaration(Operation *op) {
  if (auto fn = dyn_cast<func::FuncOp>(op))
    return fn.isExternal();
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op))
    return fn.isExternal();
  return false;
}

/// The function type of a declaration, for comparing two of them.
static Type declaredType(Operation *op) {
  if (auto fn = dyn_cast<func::FuncOp>(op))
    return fn.getFunctionType();
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op))
    return fn.getFunctionType();
  return {};
}

struct CroqMergeKernelModulesPass
    : mlir::croq::impl::CroqMergeKernelModulesPassBase<
          CroqMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(top.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp merged = modules.front();
    for (gpu::GPUModuleOp other : ArrayRef(modules).drop_front())
      if (other->getDiscardableAttrDictionary() !=
              merged->getDiscardableAttrDictionary() ||
          other.getTargetsAttr() != merged.getTargetsAttr() ||
          other.getOffloadingHandlerAttr() !=
              merged.getOffloadingHandlerAttr()) {
        other.emitError("kernel module @")
            << other.getSymName() << " has other attributes than @"
            << merged.getSymName() << ", so their kernels cannot share one "
               "image";
        return signalPassFailure();
      }

    // Where each kernel ends up: (module, kernel) -> kernel's new name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> moved;
    for (auto fn : merged.getOps<gpu::GPUFuncOp>())
      moved[{merged.getSymNameAttr(), SymbolTable::getSymbolName(fn)}] =
          SymbolTable::getSymbolName(fn);

    SymbolTable into(merged);
    for (gpu::GPUModuleOp other : ArrayRef(modules).drop_front()) {
      SymbolTable from(other);
      for (Operation &op :
           llvm::make_early_inc_range(other.getBody()->getOperations())) {
        auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
        if (name) {
          Operation *existing = into.lookup(name);
          if (existing && isExternalDeclaration(existing) &&
              isExternalDeclaration(&op) &&
              declaredType(existing) == declaredType(&op)) {
            op.erase();
            continue;
          }
          if (existing) {
            // Renamed where it is, so that its uses in `other` follow; the
            // new name must be free in both modules.
            std::string base = name.getValue().str();
            StringAttr fresh;
            for (unsigned i = 1;; ++i) {
              fresh = StringAttr::get(&getContext(),
                                      base + "_" + std::to_string(i));
              if (!into.lookup(fresh) && !from.lookup(fresh))
                break;
            }
            if (failed(from.rename(&op, fresh))) {
              op.emitError("cannot rename '") << name.getValue()
                                              << "' to merge kernel modules";
              return signalPassFailure();
            }
          }
          if (auto fn = dyn_cast<gpu::GPUFuncOp>(op))
            moved[{other.getSymNameAttr(), name}] = SymbolTable::getSymbolName(fn);
        }
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        if (name)
          into.insert(&op);
      }
    }

    // The launches name the merged module and the kernels' new names.
    StringAttr oldName = merged.getSymNameAttr();
    StringAttr newName = StringAttr::get(&getContext(), kMergedName);
    for (gpu::GPUModuleOp other : ArrayRef(modules).drop_front())
      other.erase();
    SymbolTable symbols(top);
    if (newName != oldName) {
      if (Operation *clash = symbols.lookup(newName)) {
        clash->emitError("'") << kMergedName
                              << "' names the merged kernel module; rename "
                                 "this symbol";
        return signalPassFailure();
      }
      symbols.setSymbolName(merged, newName);
    }
    WalkResult result = top.walk([&](gpu::LaunchFuncOp launch) {
      auto it = moved.find(
          {launch.getKernelModuleName(), launch.getKernelName()});
      if (it == moved.end()) {
        launch.emitError("launches a kernel that is in no kernel module");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          newName, {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
