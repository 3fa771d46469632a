#!/usr/bin/env python3
"""Runs croq-prepare-gpu once and twice on every integration kernel (croq
IR, and Croqtile through the importer) and checks that the second run
changes nothing, SSA names aside: each preparation pass recognizes the
decisions already made. Prints each kernel that differs and a total.

usage: check-prepare-idempotent.py BIN_DIR SRC_ROOT
"""
import pathlib
import re
import sys

from integration_kernels import kernels, run


def shape(text):
    return re.sub(r"%[\w]+", "%N", text)


def main():
    bin_dir, src = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    opt = str(bin_dir / "croq-opt")
    count = differ = 0
    for kernel, ir, error in kernels(bin_dir, src):
        count += 1
        if ir is None:
            print(f"{kernel.name}: import failed\n{error}")
            differ += 1
            continue
        once = run([opt, "--croq-verify-protocol", "--croq-prepare-gpu"], ir)
        twice = run([opt, "--croq-prepare-gpu"], once.stdout)
        if once.returncode or twice.returncode:
            print(f"{kernel.name}: failed\n{once.stderr}{twice.stderr}")
            differ += 1
        elif shape(once.stdout) != shape(twice.stdout):
            print(f"{kernel.name}: a second run changes it")
            differ += 1
    print(f"{count} kernels, {differ} not idempotent")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
