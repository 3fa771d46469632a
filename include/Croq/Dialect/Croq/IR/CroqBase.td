//===- CroqBase.td - croq dialect definition ---------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQBASE_TD
#define CROQ_DIALECT_CROQ_IR_CROQBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Croq_Dialect : Dialect {
  let name = "croq";
  let cppNamespace = "::mlir::croq";
  let summary = "Structured concurrency, events, copies and MMA for Croqtile";
  let description = [{
    The `croq` dialect carries what upstream MLIR lacks to express Croqtile
    GPU kernels: parallel levels (`croq.parallel`), statically partitioned
    thread regions (`croq.inthreads`), phased events (`!croq.event`) with
    `croq.event.trigger` / `croq.event.wait`, futures of asynchronous work
    (`!croq.future`), cooperative and TMA copies, tile views with Croqtile's
    `chunkat` / `subspan` semantics, and register-fragment MMA.

    Everything upstream already says is reused: `scf.for` / `scf.if` for
    loops and branches, `arith` for scalars, `func.func` for `__co__`
    functions, and `memref` for buffers. Shared memory is
    `#gpu.address_space<workgroup>`, local (register-backed) buffers are
    `#gpu.address_space<private>`, and global tensors carry no memory space.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // croq.swizzle (croq-plan-shared-layout) and croq.host_code (the
  // importer) are checked wherever they appear; any other croq.* attribute
  // on an op is an error.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Croq_Op<string mnemonic, list<Trait> traits = []>
    : Op<Croq_Dialect, mnemonic, traits>;

#endif // CROQ_DIALECT_CROQ_IR_CROQBASE_TD
