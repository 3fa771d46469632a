#!/usr/bin/env python3
"""Import benchmark: generates a Croqtile file of about 20,000 lines (copies
of chapter 6's event pipeline and double-buffering kernels under different
names) and times `croq-translate --import-croqtile` on it, against the time
to merely read the file (`cat`). Prints a table; the target is under 1 s.

usage: bench/import_bench.py BUILD_DIR [LINES]"""
import os
import subprocess
import sys
import tempfile

from cpu_timing import median_seconds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
target_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 20000

pipeline = open(os.path.join(ROOT, "test/Import/chapter6/event_pipeline.co")).read()
pipeline = pipeline[pipeline.index("__co__"):]
double = open(os.path.join(ROOT, "test/Import/chapter6/double_buffer.co")).read()
double = double[double.index("__co__"):]
header = ("#define TILE_M 128\n#define TILE_N 128\n#define TILE_K 128\n#define WARP_M 64\n"
          "#define WARP_N 64\n#define WARP_K 16\n#define STAGES 2\n")

parts, lines, i = [header], header.count("\n"), 0
while lines < target_lines:
    for template in (pipeline, double):
        text = template.replace("matmul(", f"matmul_{i}(", 1)
        parts.append(text + "\n")
        lines += text.count("\n") + 1
        i += 1
source = "".join(parts)

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "big.co")
    open(path, "w").write(source)
    tool = os.path.join(build, "bin", "croq-translate")

    def timed(cmd):
        return median_seconds(cmd, 5, stdout=subprocess.DEVNULL)

    t_import = timed([tool, "--import-croqtile", path, "-o", os.devnull])
    t_cat = timed(["cat", path])

n_lines = source.count("\n")
print(f"{'input':<36}{'lines':>8}{'functions':>11}{'import s':>10}{'cat s':>8}")
print(f"{'generated chapter-6 kernels':<36}{n_lines:>8}{i:>11}{t_import:>10.3f}{t_cat:>8.3f}")
print("target: import under 1 s:", "met" if t_import < 1.0 else "NOT met")
