#!/usr/bin/env python3
"""Feeds malformed Croqtile to `croq-translate --import-croqtile` and checks
that each input is either imported or rejected with a located error (exit
code 1 and a `file:line:col: error:` line): never a crash, a hang or an
unlocated failure.

The corpus: every prefix of the given .co files cut at line ends and
punctuation, random bytes, random token soup, 10,000-deep nesting of
braces, parentheses, unary operators, parallels, #if blocks and macro
calls, huge literals and identifiers, self-including files and
self-referential macros.

usage: check-import-robustness.py TOOL FILE... [--step N]
"""
import argparse
import os
import random
import re
import sys
import tempfile

from robustness import judge

LOCATED = re.compile(r"^[^\n]+:\d+:\d+: error: ", re.M)


def generated_cases(tmp):
    rng = random.Random(1234)
    deep = 10000
    cases = {
        "braces": "__co__ void f() {" + "{" * deep + "}" * deep + "}",
        "parens": "__co__ void f() { int x = " + "(" * deep + "1" + ")" * deep + "; }",
        "unary": "__co__ void f() { int x = " + "!" * deep + "1; }",
        "tildes": "__co__ void f() { int x = " + "~" * deep + "1; }",
        "parallels": "__co__ void f() {" + "parallel p by 2 {" * deep + "}" * deep + "}",
        "ifs": "#if 1\n" * deep + "#endif\n" * deep,
        "if_exprs": "#if " + "(" * deep + "1" + ")" * deep + "\n#endif\n",
        "macro_nest": "#define F(x) (x)\n__co__ void f() { int y = " + "F(" * deep + "1" + ")" * deep + "; }",
        "self_macro": "#define A A + 1\n__co__ void f() { int y = A; }",
        "mutual_macro": "#define A B\n#define B A\n__co__ void f() { int y = A; }",
        "blowup_macro": "".join(f"#define M{i} M{i-1} M{i-1}\n" for i in range(1, 40)).replace("M0 M0", "1 1")
                        + "__co__ void f() { int y = M39; }",
        "long_chain": "__co__ void f() { int x = " + "+".join(["1"] * 100000) + "; }",
        "huge_int": "__co__ void f() { int x = 999999999999999999999999999999999; }",
        "huge_float": "__co__ void f() { f32 x = 1e99999999; }",
        "huge_ident": "__co__ void f() { int " + "a" * 1_000_000 + " = 1; }",
        "huge_shape": "__co__ void f() { parallel b by 1 : block { shared f16 [9223372036854775807, 9223372036854775807] s; } }",
        "huge_event": "__co__ void f() { parallel b by 1 : block { shared event e[4294967296][4294967296]; } }",
        "zero_bound": "__co__ void f() { parallel b by 0 : block { } }",
        "neg_shape": "__co__ void f(global f16 [-4] x) { }",
        "unterminated_comment": "__co__ void f() { /* ",
        "unterminated_string": "int x = \"abc\n__co__ void f() {}",
        "only_co": "__co__",
        "nul_bytes": "__co__ void f() { \x00\x00 }",
        "stray_at": "__co__ void f() { @@@ }",
        "unterminated_if": "#if 1\n__co__ void f() {}",
        "bad_directive": "#frobnicate\n",
        "macro_args": "#define F(a, b) a\n__co__ void f() { int x = F(1); }",
        "unterminated_macro": "#define F(a) a\n__co__ void f() { int x = F(1; }",
        "div_zero_if": "#if 1 / 0\n#endif\n",
    }
    self_include = os.path.join(tmp, "self.co")
    with open(self_include, "w") as f:
        f.write('#include "self.co"\n')
    yield "self_include", None, self_include
    for name, text in cases.items():
        yield name, text, None
    for i in range(40):
        n = rng.randint(1, 4000)
        yield f"random_bytes_{i}", bytes(rng.randrange(256) for _ in range(n)), None
    words = ["__co__", "void", "parallel", "by", ":", "block", "group-4", "{", "}", "(", ")",
             "[", "]", ",", ";", "=", "=>", "dma", ".", "copy", "async", "wait", "trigger",
             "event", "shared", "f16", "x", "1", "#", "chunkat", "mma", "row", "inthreads",
             "foreach", "in", "if", "else", "swap", "<", ">", "_", "int", "mutable", "+="]
    for i in range(60):
        n = rng.randint(1, 400)
        yield f"token_soup_{i}", " ".join(rng.choice(words) for _ in range(n)), None


def cut_points(text, step):
    points = set()
    for i, ch in enumerate(text):
        if ch == "\n" or (ch in ",:;<>()[]{}=." and i % step == 0):
            points.add(i)
    return sorted(points)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--step", type=int, default=3)
    args = ap.parse_args()
    failures = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        def run(name, path):
            nonlocal failures, checked
            verdict = judge([args.tool, "--import-croqtile", path, "-o",
                             os.devnull], 30, LOCATED)
            if verdict is None:
                print(f"HANG: {name}")
                failures += 1
                return
            checked += 1
            problem, err = verdict
            if problem:
                print(f"{problem}: {name}\n{err[-1500:]}")
                failures += 1

        path = os.path.join(tmp, "case.co")
        for name, text, existing in generated_cases(tmp):
            if existing:
                run(name, existing)
                continue
            with open(path, "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
            run(name, path)
        for source in args.files:
            text = open(source).read()
            for cut in cut_points(text, args.step):
                with open(path, "w") as f:
                    f.write(text[:cut])
                run(f"{os.path.basename(source)}[:{cut}]", path)
    print(f"checked {checked} inputs, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
