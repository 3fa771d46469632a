//===- DynamicSharedMemory.cpp - Dynamic shared memory as .extern --------===//
//
// Gives the zero-sized address-space-3 globals that stand for a kernel's
// dynamic shared memory external linkage and a 1024-byte alignment, so that
// the NVPTX backend declares them `.extern .shared` instead of demoting them
// into one-byte static variables among the kernel's mbarriers.
//
//===----------------------------------------------------------------------===//

#include "Croq/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::croq {
#define GEN_PASS_DEF_CROQEXTERNDYNAMICSHAREDMEMORYPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

using namespace mlir;

namespace {

/// The base alignment croq's shared-memory layout assumes: 1024 bytes suits
/// every TMA swizzle mode (the 128-byte swizzle repeats every 1024 bytes).
constexpr uint64_t kDynamicSharedAlignment = 1024;

struct CroqExternDynamicSharedMemoryPass
    : mlir::croq::impl::CroqExternDynamicSharedMemoryPassBase<
          CroqExternDynamicSharedMemoryPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (!array || array.getNumElements() != 0 ||
          global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          global.getValueOrNull() || !global.getInitializerRegion().empty())
        continue;
      global.setLinkage(LLVM::Linkage::External);
      global.setDsoLocal(false);
      global.setVisibility_(LLVM::Visibility::Default);
      if (global.getAlignment().value_or(0) < kDynamicSharedAlignment)
        global.setAlignment(kDynamicSharedAlignment);
    }
  }
};

} // namespace

namespace mlir::croq {
#define GEN_PASS_DEF_CROQCHECKSHAREDMEMORYPASS
#include "Croq/Conversion/Passes.h.inc"
} // namespace mlir::croq

namespace {

/// Bytes of a shared global: its type's size, or 0 for the dynamic window.
static uint64_t staticBytes(LLVM::GlobalOp global) {
  Type type = global.getGlobalType();
  uint64_t count = 1;
  while (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
    count *= array.getNumElements();
    type = array.getElementType();
  }
  if (!type.isIntOrFloat())
    return 0;
  return count * mlir::croq::getStorageBytes(type);
}

struct CroqCheckSharedMemoryPass
    : mlir::croq::impl::CroqCheckSharedMemoryPassBase<
          CroqCheckSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      Value size = launch.getDynamicSharedMemorySize();
      APInt dynamic;
      if (!size || !matchPattern(size, m_ConstantInt(&dynamic)))
        return WalkResult::advance();
      auto kernels = SymbolTable::lookupNearestSymbolFrom<gpu::GPUModuleOp>(
          launch, launch.getKernelModuleName());
      if (!kernels)
        return WalkResult::advance();
      // The kernel's shared globals: those it or a function it calls
      // addresses (the module holds other kernels' too).
      llvm::DenseSet<StringAttr> used;
      SmallVector<Operation *> work;
      llvm::DenseSet<Operation *> seen;
      if (Operation *kernel =
              SymbolTable::lookupSymbolIn(kernels, launch.getKernelName()))
        work.push_back(kernel);
      while (!work.empty()) {
        Operation *fn = work.pop_back_val();
        if (!seen.insert(fn).second)
          continue;
        fn->walk([&](Operation *op) {
          if (auto address = dyn_cast<LLVM::AddressOfOp>(op))
            used.insert(address.getGlobalNameAttr().getAttr());
          if (auto call = dyn_cast<LLVM::CallOp>(op))
            if (FlatSymbolRefAttr callee = call.getCalleeAttr())
              if (Operation *target =
                      SymbolTable::lookupSymbolIn(kernels, callee.getAttr()))
                work.push_back(target);
        });
      }
      uint64_t fixed = 0, align = 1;
      for (auto global : kernels.getOps<LLVM::GlobalOp>()) {
        if (global.getAddrSpace() !=
                static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
            !used.contains(global.getSymNameAttr()))
          continue;
        uint64_t alignment = global.getAlignment().value_or(1);
        if (uint64_t bytes = staticBytes(global))
          fixed = llvm::alignTo(fixed, alignment) + bytes;
        else
          align = std::max(align, alignment);
      }
      uint64_t buffers = dynamic.getZExtValue();
      uint64_t padded = buffers ? llvm::alignTo(fixed, align) : fixed;
      uint64_t total = padded + buffers;
      if (total <= static_cast<uint64_t>(static_cast<int64_t>(limit)))
        return WalkResult::advance();
      launch.emitError() << "this kernel needs " << total
                         << " bytes of shared memory per block ("
                         << buffers << " for shared buffers, " << fixed
                         << " for events and TMA barriers, "
                         << padded - fixed
                         << " to align the buffers); the target allows "
                         << static_cast<int64_t>(limit)
                         << ": use smaller shared tiles or fewer stages";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
