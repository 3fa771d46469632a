// RUN: croq-translate --croq-to-ptx %s | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ croq-translate --croq-to-ptx %s -o %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// PTX: .target sm_90a
// PTX: .visible .entry divergent_kernel(
// PTX: ld.global.b32
// PTX: setp.gt.f32
// PTX: st.global.b32

// The glossary's divergent kernel: each thread of a 256-thread block scales
// or shifts its element depending on the data, then squares it.
func.func @divergent(%data: memref<?xf32>, %n: index) {
  %c256 = arith.constant 256 : index
  %blocks = arith.ceildivui %n, %c256 : index
  croq.parallel (%b) by [%blocks] : block {
    croq.parallel (%t) by [%c256] : thread {
      %b256 = arith.muli %b, %c256 : index
      %idx = arith.addi %b256, %t : index
      %in = arith.cmpi ult, %idx, %n : index
      scf.if %in {
        %v = memref.load %data[%idx] : memref<?xf32>
        %half = arith.constant 0.5 : f32
        %big = arith.cmpf ogt, %v, %half : f32
        %r = scf.if %big -> f32 {
          %four = arith.constant 4.0 : f32
          %a = arith.mulf %v, %four : f32
          scf.yield %a : f32
        } else {
          %two = arith.constant 2.0 : f32
          %b2 = arith.addf %v, %two : f32
          scf.yield %b2 : f32
        }
        %sq = arith.mulf %r, %r : f32
        memref.store %sq, %data[%idx] : memref<?xf32>
      }
    }
  }
  return
}
