#===- CroqDeps.cmake - which MLIR libraries croq links ------*- cmake -*-===//
#
# Dylib mode (default) links libMLIR.so: small, fast links and a single copy
# of every MLIR global shared by all croq tools and libraries. Static mode
# lists only what croq uses. Never mix the two in one binary.
#
#===----------------------------------------------------------------------===//

if(CROQ_LINK_MLIR_DYLIB)
  set(CROQ_MLIR_LIBS MLIR)
  set(CROQ_TOOL_MLIR_LIBS MLIR)
  set(CROQ_CAPI_MLIR_LIBS MLIR)
else()
  set(CROQ_MLIR_LIBS
    MLIRIR MLIRSupport MLIRArithDialect MLIRFuncDialect MLIRMemRefDialect
    MLIRSCFDialect MLIRGPUDialect MLIRNVGPUDialect MLIRNVVMDialect
    MLIRControlFlowInterfaces MLIRSideEffectInterfaces MLIRInferTypeOpInterface)
  set(CROQ_TOOL_MLIR_LIBS
    ${CROQ_MLIR_LIBS} MLIROptLib MLIRTranslateLib MLIRRegisterAllDialects
    MLIRRegisterAllPasses MLIRRegisterAllExtensions MLIRToLLVMIRTranslationRegistration)
  set(CROQ_CAPI_MLIR_LIBS ${CROQ_MLIR_LIBS} MLIRCAPIIR)
endif()
