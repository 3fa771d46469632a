//===- CroqInterfaces.td - croq op interfaces --------------*- tablegen -*-===//
//
// Part of the croq project: an MLIR dialect for the Croqtile GPU kernel
// language.
//
//===----------------------------------------------------------------------===//

#ifndef CROQ_DIALECT_CROQ_IR_CROQINTERFACES_TD
#define CROQ_DIALECT_CROQ_IR_CROQINTERFACES_TD

include "mlir/IR/OpBase.td"

def Croq_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let description = [{
    An op that a group of threads must execute together: every thread of
    the group reaches it, under the same control (barriers, MMAs, shuffles,
    votes, setmaxnreg). croq-check-divergence rejects one whose control is
    less uniform than its group. croq ops implement it; upstream gpu, nvgpu
    and nvvm ops get it as external models (registerCroqDialects).
  }];
  let cppNamespace = "::mlir::croq";
  let methods = [
    InterfaceMethod<[{
        The level whose instance executes the op together, or std::nullopt
        when this instance of the op is not collective (a thread-level
        barrier, a named barrier over a given number of threads).
      }],
      "::std::optional<::mlir::croq::Level>", "getCollectiveLevel">
  ];
}

def Croq_CopyOpInterface : OpInterface<"CopyOpInterface"> {
  let description = [{
    An op that moves a tile from one buffer (or view) into another: croq's
    DMA and TMA copies. Passes that ask whether code moves data, or which
    buffers it fills, go through it rather than listing the copy ops.
  }];
  let cppNamespace = "::mlir::croq";
  let methods = [
    InterfaceMethod<"The buffer or view read.", "::mlir::Value", "getSource">,
    InterfaceMethod<"The buffer or view written.", "::mlir::Value",
                    "getTarget">
  ];
}

#endif // CROQ_DIALECT_CROQ_IR_CROQINTERFACES_TD
