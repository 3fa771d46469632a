#!/usr/bin/env python3
"""Checks that croq's lowering, embedded in another compiler, generates what
croq itself does: for every integration kernel (croq IR, and Croqtile
through the importer), `croq-opt --croq-to-nvvm` and croq-pattern-embedder
(its own conversion target around croq's public pattern sets) must print
the same module, PTX included. Prints one line per kernel that differs and
a total.

usage: compare-embedder.py BIN_DIR SRC_ROOT [EMBEDDER]
EMBEDDER defaults to BIN_DIR/croq-pattern-embedder.
"""
import difflib
import pathlib
import re
import sys
import tempfile

from integration_kernels import kernels, run


def normalized(text):
    # gpu-module-to-binary records how long the NVPTX backend took.
    return re.sub(r"LLVMIRToISATimeInMs = \d+ : i64, ", "", text)


def main():
    bin_dir, src = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    opt = bin_dir / "croq-opt"
    embedder = (pathlib.Path(sys.argv[3]) if len(sys.argv) > 3
                else bin_dir / "croq-pattern-embedder")
    count = differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kernel, ir, error in kernels(bin_dir, src):
            count += 1
            if ir is None:
                print(f"{kernel.name}: import failed\n{error}")
                differ += 1
                continue
            path = pathlib.Path(tmp) / (kernel.stem + ".mlir")
            path.write_text(ir)
            ours = run([str(opt), "--croq-to-nvvm", str(path)])
            theirs = run([str(embedder), str(path)])
            if ours.returncode or theirs.returncode:
                print(f"{kernel.name}: failed (croq-opt {ours.returncode}, "
                      f"embedder {theirs.returncode})\n{ours.stderr}{theirs.stderr}")
                differ += 1
                continue
            if normalized(ours.stdout) != normalized(theirs.stdout):
                diff = difflib.unified_diff(normalized(ours.stdout).splitlines(),
                                            normalized(theirs.stdout).splitlines(),
                                            "croq-to-nvvm", "embedder", n=1,
                                            lineterm="")
                print(f"{kernel.name}: differs")
                print("\n".join(line[:160] for line in list(diff)[:20]))
                differ += 1
    print(f"{count} kernels, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
