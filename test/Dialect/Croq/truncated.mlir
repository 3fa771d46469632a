// Every prefix of the round-trip test, cut at each line and at punctuation,
// either parses or gets a located error: never a crash, a hang or an
// unlocated failure.
// RUN: %python %S/../../tools/check-truncations.py croq-opt %S/ops.mlir --step 7 | FileCheck %s
// CHECK: checked {{[0-9]+}} prefixes, 0 failures
