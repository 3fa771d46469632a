// RUN: croq-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(gpu.module(croq-check-lowered))"

// A conversion that left an op behind: the op is reported, not the casts
// around it.
gpu.module @k {
  llvm.func @kernel(%n: i64) attributes {nvvm.kernel} {
    %i = builtin.unrealized_conversion_cast %n : i64 to index
    // expected-error @below {{internal error: croq did not lower 'vector.create_mask' to LLVM}}
    // expected-note @below {{this is a croq bug}}
    %m = vector.create_mask %i : vector<2xi1>
    %c = builtin.unrealized_conversion_cast %m : vector<2xi1> to i2
    llvm.return
  }
}

// -----

// A cast alone: the conversion between its types was not finished.
gpu.module @k {
  llvm.func @kernel(%n: i64) -> i64 attributes {nvvm.kernel} {
    // expected-error @below {{internal error: croq did not finish a type conversion here ('i64' to 'index')}}
    // expected-note @below {{this is a croq bug}}
    %i = builtin.unrealized_conversion_cast %n : i64 to index
    %j = builtin.unrealized_conversion_cast %i : index to i32
    %k = llvm.zext %j : i32 to i64
    llvm.return %k : i64
  }
}

// -----

// What LLVM IR takes passes.
gpu.module @k {
  llvm.func @kernel(%p: !llvm.ptr<3>) attributes {nvvm.kernel} {
    %c = llvm.mlir.constant(1 : i32) : i32
    nvvm.barrier0
    llvm.return
  }
}
