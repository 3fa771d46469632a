//===- InitAllDialects.cpp - croq dialect registration --------------------===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#include "Croq/InitAllDialects.h"
#include "Croq/Conversion/CroqToGPU/CroqToGPU.h"
#include "Croq/Dialect/Croq/IR/CroqDialect.h"
#include "Croq/Dialect/Croq/IR/CroqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVM/NVVM/Target.h"

void mlir::croq::registerCroqDialects(DialectRegistry &registry) {
  registry.insert<croq::CroqDialect, arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect,
                  nvgpu::NVGPUDialect, NVVM::NVVMDialect, scf::SCFDialect,
                  vector::VectorDialect>();
  // croq-check-divergence asks which upstream ops are collective.
  croq::registerCollectiveOpInterfaceExternalModels(registry);
  // croq.call lowers with the kernels' conversion to LLVM.
  croq::registerConvertCroqToLLVMInterface(registry);
  // gpu-module-to-binary serializes kernels through the NVVM target.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // What the pipeline's upstream passes need: the conversions to LLVM of
  // each dialect (convert-to-llvm's interfaces) and the translations of
  // the LLVM and NVVM dialects to LLVM IR, which serialize the kernels. An
  // embedder calls this one function.
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}
