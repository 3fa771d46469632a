#!/usr/bin/env python3
"""Feeds every prefix of an MLIR file (cut at line and token boundaries) to a
tool and checks that each one either parses or is rejected with a located
diagnostic: exit code 1, an `error:` line naming `file:line:col`. A crash
(signal), a hang (timeout) or an unlocated error fails the check.

usage: check-truncations.py TOOL FILE [--step N]
"""
import argparse
import os
import re
import sys
import tempfile

from robustness import judge

LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: error: ", re.M)


def cut_points(text, step):
    points = set()
    for i, ch in enumerate(text):
        if ch in "\n,:<>()[]{}%" and i % step == 0:
            points.add(i)
        if ch == "\n":
            points.add(i)
    return sorted(points)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("file")
    ap.add_argument("--step", type=int, default=1)
    args = ap.parse_args()
    text = open(args.file).read()
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "prefix.mlir")
        for cut in cut_points(text, args.step):
            with open(path, "w") as f:
                f.write(text[:cut])
            verdict = judge([args.tool, path], 20, LOCATED)
            if verdict is None:
                print(f"HANG at byte {cut}")
                failures += 1
                continue
            checked += 1
            problem, err = verdict
            if problem:
                print(f"{problem} at byte {cut}:\n{err[-2000:]}")
                failures += 1
    print(f"checked {checked} prefixes, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
