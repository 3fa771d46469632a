#!/usr/bin/env python3
"""Divergence-analysis benchmark: generates one kernel of about 100,000 ops
(chains of thread-index arithmetic, loads, branches every 50 ops, loops) and
times `croq-opt --croq-report-divergence` against parsing and printing the
same file (`croq-opt` with no pass). Prints a table; the target for the
analysis itself is under 1 s.

usage: bench/divergence_bench.py BUILD_DIR [OPS]"""
import os
import subprocess
import sys
import tempfile

from cpu_timing import median_seconds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
target = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000

lines = ["func.func @big(%data: memref<?xi32>, %n: index) {",
         "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
         "  %c32 = arith.constant 32 : index", "  %c256 = arith.constant 256 : index",
         "  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)",
         "             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {",
         "    %tid = gpu.thread_id x", "    %warp = arith.divui %tid, %c32 : index",
         "    %v0 = arith.addi %bx, %c1 : index"]
ops = 12
i = 0
while ops < target:
    prev = f"%v{i}"
    src = ["%tid", "%warp", "%bx"][i % 3]
    lines.append(f"    %v{i+1} = arith.addi {prev}, {src} : index")
    ops += 1
    if i % 50 == 49:
        lines += [f"    %p{i} = arith.cmpi ult, %v{i+1}, %n : index",
                  f"    %w{i} = scf.if %p{i} -> index {{",
                  f"      %l{i} = memref.load %data[%v{i+1}] : memref<?xi32>",
                  f"      %x{i} = arith.index_cast %l{i} : i32 to index",
                  f"      scf.yield %x{i} : index",
                  "    } else {", f"      scf.yield %v{i+1} : index", "    }"]
        ops += 6
        i += 1
        lines.append(f"    %v{i+1} = arith.addi %w{i-1}, %c1 : index")
        ops += 1
    if i % 500 == 499:
        lines += [f"    %s{i} = scf.for %k{i} = %c0 to %warp step %c1 iter_args(%a{i} = %v{i+1}) -> index {{",
                  f"      %b{i} = arith.addi %a{i}, %k{i} : index",
                  f"      scf.yield %b{i} : index", "    }"]
        ops += 3
        i += 1
        lines.append(f"    %v{i+1} = arith.addi %s{i-1}, %c1 : index")
        ops += 1
    i += 1
lines += ["    %z = arith.constant 0 : i32", f"    memref.store %z, %data[%v{i}] : memref<?xi32>", "    gpu.terminator",
          "  }", "  return", "}"]
source = "\n".join(lines) + "\n"

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "big.mlir")
    open(path, "w").write(source)
    tool = os.path.join(build, "bin", "croq-opt")

    def timed(args):
        return median_seconds([tool, path, "-o", os.devnull] + args, 3,
                              stderr=subprocess.DEVNULL)

    t_parse = timed([])
    t_report = timed(["--croq-report-divergence"])

print(f"{'input':<28}{'ops':>9}{'parse+print s':>15}{'+analysis s':>13}{'analysis s':>12}")
print(f"{'generated kernel':<28}{ops:>9}{t_parse:>15.3f}{t_report:>13.3f}{t_report - t_parse:>12.3f}")
print("target: analysis under 1 s:", "met" if t_report - t_parse < 1.0 else "NOT met")
