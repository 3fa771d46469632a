//===- CroqTypes.td - croq types ---------------------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQTYPES_TD
#define CROQ_DIALECT_CROQ_IR_CROQTYPES_TD

include "Croq/Dialect/Croq/IR/CroqEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Croq_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Croq_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Croq_EventType : Croq_Type<"Event", "event"> {
  let summary = "a phased event, or an array of them";
  let description = [{
    An event is a phased barrier. Each element has generations 0, 1, 2, ...;
    a generation completes when every thread that statically triggers the
    event has arrived (plus any TMA bytes bound to it), and a wait blocks
    until the generation its waiter is owed has completed. The storage says
    where the event lives; the shape, when present, makes it an array.

    ```mlir
    !croq.event<shared>          // shared event e;
    !croq.event<shared, 4>       // shared event full[4];
    !croq.event<shared, 2x3>     // shared event e[2][3];
    ```
  }];
  let parameters = (ins
    "::mlir::croq::MemoryKind":$storage,
    ArrayRefParameter<"int64_t", "array shape; empty for a scalar">:$shape
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of subscripts that select one element.
    unsigned getRank() const { return getShape().size(); }
    /// Number of event elements.
    int64_t getNumElements() const;
    /// A local event: each thread's own counts, which synchronise nothing
    /// between threads.
    bool isThreadLocal() const {
      return getStorage() == ::mlir::croq::MemoryKind::Local;
    }
  }];
}

def Croq_FutureType : Croq_Type<"Future", "future"> {
  let summary = "handle on the completion of a copy or an MMA";
  let description = [{
    A future names work issued by a `croq.dma.copy`, `croq.tma.copy` or
    `croq.mma`, and the data it produces: the destination buffer of a copy or
    the accumulator of an MMA. Asynchronous futures must be waited with
    `croq.wait` before their data is read; synchronous ones are complete when
    they are created and cannot be waited.

    ```mlir
    !croq.future<dma, async, memref<16x16xi32, #gpu.address_space<workgroup>>>
    !croq.future<dma, memref<64x64xf16>>
    !croq.future<mma, async, !croq.frag<acc, 64x64xf32>>
    ```
  }];
  let parameters = (ins
    "::mlir::croq::FutureKind":$kind,
    "bool":$async,
    "::mlir::Type":$dataType
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Croq_FragType : Croq_Type<"Frag", "frag"> {
  let summary = "register fragment of an MMA operand or accumulator";
  let description = [{
    A 2-D tile distributed over the registers of a warp (`group`, the
    default) or of a warpgroup (`group-4`, written `warpgroup`). The role
    says which MMA operand it is; the shape is the logical tile, e.g. A is
    `[M, K]` for a `row` layout. The scope is part of the type because it
    fixes which thread holds which element: a warp fragment is a set of
    mma.sync tiles, a warpgroup accumulator the wgmma register layout, and
    a warpgroup operand a shared-memory matrix descriptor.

    A `meta` fragment is the 2:4 sparsity metadata of an M x K tile of A
    (whose element type it names) for a sparse warpgroup MMA: loaded from
    an i8 view of [M, K / 8] (two 2-bit positions per group of four along
    K, two groups per byte, the first in the low nibble), it lives in one
    32-bit register per thread and wgmma K step.

    ```mlir
    !croq.frag<acc, 64x64xf16>
    !croq.frag<a, 16x16xf16>
    !croq.frag<acc, 64x128xf32, warpgroup>
    !croq.frag<meta, 64x32xf16, warpgroup>
    ```
  }];
  let parameters = (ins
    "::mlir::croq::FragRole":$role,
    ArrayRefParameter<"int64_t", "logical tile shape">:$shape,
    "::mlir::Type":$elementType,
    DefaultValuedParameter<"::mlir::croq::Level", "::mlir::croq::Level::Warp",
                           "the scope whose threads hold the fragment">:$scope
  );
  let builders = [
    TypeBuilder<(ins "::mlir::croq::FragRole":$role,
                     "::llvm::ArrayRef<int64_t>":$shape,
                     "::mlir::Type":$elementType), [{
      return $_get($_ctxt, role, shape, elementType, ::mlir::croq::Level::Warp);
    }]>
  ];
  let skipDefaultBuilders = 0;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The elements of an accumulator each thread holds, in the order
    /// `croq.mma.element` numbers them: for a warpgroup's 64 x N, N / 2
    /// (the wgmma layout); for a warp's M x N, four per m16n8 tile, the
    /// tiles row-major (padded tiles included).
    int64_t getRegisterCount() const;
  }];
}

def Croq_StreamType : Croq_Type<"Stream", "stream"> {
  let summary = "a GPU stream on which block-level parallels launch";
  let description = [{
    ```mlir
    func.func @f(%s: !croq.stream)
    ```
  }];
}

#endif // CROQ_DIALECT_CROQ_IR_CROQTYPES_TD
