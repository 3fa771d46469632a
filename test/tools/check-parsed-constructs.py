#!/usr/bin/env python3
"""Every keyword the Croqtile parser accepts is used by some test.

Collects the quoted identifiers of the parser source (keywords, modifiers,
type names) and fails, naming them, when one appears as a whole word in no
`.co` test under the given directories. A construct the parser accepts
then has a test that shows it lowered, warned about, or rejected.

usage: check-parsed-constructs.py PARSER_CPP TEST_DIR...
"""
import os
import re
import sys

# Quoted strings of the parser that are not syntax: parts of messages,
# AST kinds, literal suffixes and an #include.
NOT_SYNTAX = {"functions", "scalar", "tensor", "f", "mma.", "Parser.h",
              "fFlL", "uU", "uUlL"}


def main():
    parser, dirs = sys.argv[1], sys.argv[2:]
    words = set(re.findall(r'"([A-Za-z_][A-Za-z_0-9.]*)"', open(parser).read()))
    words -= NOT_SYNTAX
    text = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in files:
                if name.endswith(".co"):
                    with open(os.path.join(root, name), errors="replace") as f:
                        text.append(f.read())
    corpus = "\n".join(text)
    missing = sorted(w for w in words
                     if not re.search(r"(?<![A-Za-z_0-9])" + re.escape(w) +
                                      r"(?![A-Za-z_0-9])", corpus))
    if missing:
        print("parsed but used by no test: " + ", ".join(missing))
        return 1
    print(f"all {len(words)} parser keywords appear in tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
