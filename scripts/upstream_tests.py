#!/usr/bin/env python3
"""Measures croq against Croqtile programs it was not written for.

    scripts/upstream_tests.py [options] PATH...

Each PATH is a checkout of LancerLab/croqtile (its tests/ and tools/ are
searched for .co files), a checkout of LancerLab/croqtile-tutorial (the code
blocks of its English markdown that define a __co__ function are extracted),
a directory of .co files, a .co file, or a .md file.

Every case runs through croq the way a user would:
  1. croq-translate --import-croqtile [-I runtime -I dir] [-D...] FILE
  2. croq-translate --croq-to-ptx on the result
  3. ptxas -arch=sm_90a on every kernel module of that PTX.
A case is a file under one -D set of its RUN lines (a file whose RUN lines
use two -D sets is two cases).

Positive tests pass when ptxas accepts the PTX. Negative tests (every RUN line
is `not choreo ...`, or the test expects a compiler `error:`) pass when croq
rejects them with a location in the test file; the report says whether that
is the line the test marks. Files outside croq's scope are left out and listed
with the reason (AMD and CPU targets, the co-mock interpreter, preprocessor
output tests).

Prints one line per case and the totals; --report FILE writes a markdown
table of totals, left-out files and failures by first error.
"""
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

IMPORT_TIMEOUT = 30
PTX_TIMEOUT = 90
PTXAS_TIMEOUT = 60

COMPILER_RE = re.compile(r"\b(choreo|cocc|copp|co2ir|%choreo)\b")
DEFINE_RE = re.compile(r"\s-D\s*([A-Za-z_]\w*(?:=\S*)?)")
LOC_ERR_RE = re.compile(r"^(.*?):(\d+):(\d+):\s*error:\s*(.*)$")
CRASH_RE = re.compile(r"Stack dump:|Assertion `|LLVM ERROR:|PLEASE submit a bug report|"
                      r"Segmentation fault|Aborted \(core dumped\)")
CHECK_ERR_RE = re.compile(r"error:|Parsing failed|Assertion failed|errors have been detected")

# RUN lines that are `not` for a reason other than the source: a bad command
# line or a dump mode that exits non-zero. The source itself is valid.
NOT_FOR_THE_SOURCE = {
    "tests/cli/debug_option_conflict.co": "RUN: not, for a bad command line",
    "tests/cli/unknown_option.co": "RUN: not, for a bad command line",
    "tests/cli/insert_dma_fences.co": "RUN: not, for a bad command line",
    "tests/others/input_existance.co": "RUN: not, for a missing input file",
    "tests/gpu/check/active_threads_basic.co": "RUN: not, for the -pa dump mode",
    "tests/gpu/check/active_threads_advanced.co": "RUN: not, for the -pa dump mode",
}
# Expected failures that the RUN lines do not say: a disabled `// 1RUN: not`,
# or a CHECK line that expects a diagnostic without the word error.
NEGATIVE_BY_CONTENT = {
    "tests/check/illegal_span_init2.co",
    "tests/check/illegal_arith_decl.co",
}


def run_lines(text):
    return [l for l in text.splitlines() if re.search(r"^\s*//\s*\d*RUN:", l)]


def active_run_lines(text):
    return [l for l in text.splitlines() if re.search(r"^\s*//\s*RUN:", l)]


def define_sets(text):
    sets = []
    for l in run_lines(text):
        if not COMPILER_RE.search(l):
            continue
        ds = tuple(DEFINE_RE.findall(l))
        if ds not in sets:
            sets.append(ds)
    return sets or [()]


def check_lines(text):
    return [l for l in text.splitlines()
            if re.search(r"//\s*[A-Z][\w]*(-[A-Z0-9]+)*:", l) and "-NOT:" not in l
            and "RUN:" not in l]


def left_out(rel, text):
    """Why a file is not croq's to compile, or None."""
    parts = rel.split("/")
    if "co-mock" in parts:
        return "co-mock interpreter test"
    if "amdgpu" in parts:
        return "AMD target"
    if parts[:2] in (["tests", "cpu"],) or ("cpu" in parts and "coir" in parts):
        return "CPU target"
    runs = " ".join(r for r in active_run_lines(text) if COMPILER_RE.search(r))
    targets = set(re.findall(r"\s-t\s*([\w-]+)", runs))
    if targets and targets <= {"hip", "cc", "mock", "hetero"}:
        return {"hip": "AMD target", "cc": "CPU target", "mock": "co-mock interpreter test",
                "hetero": "CPU target"}[sorted(targets)[0]]
    if (re.search(r"\bcopp\b", runs) or re.search(r"\s-E\b", runs)) and \
            not re.search(r"\s-(e|es|gs|t|i)\b", runs):
        return "preprocessor output only (choreo -E)"
    return None


def classify(rel, text):
    if rel in NOT_FOR_THE_SOURCE:
        return "positive"
    if rel in NEGATIVE_BY_CONTENT:
        return "negative"
    active = [l for l in active_run_lines(text) if COMPILER_RE.search(l) or "not" in l]
    if active and all(re.search(r"RUN:\s*not\b", l) for l in active):
        return "negative"
    executes = any(re.search(r"--execute|\./a\.out|&&\s*\./", l) for l in active)
    if not executes and any(CHECK_ERR_RE.search(c) for c in check_lines(text)):
        return "negative"
    return "positive"


ERR_WORDS = re.compile(
    r"\b(error|errors|fail|fails|failed|illegal|invalid|not allow(ed)?|disallow(ed)?|wrong|bad|"
    r"reject(ed)?|conflict(s)?|redefine(d)?|unsupported|not supported|out of bounds?|oob|mismatch|"
    r"cannot|can't|not permitted|forbidden|missing|undefined|undeclared|removed|no longer)\b", re.I)
OK_WORDS = re.compile(r"^\s*(ok|okay|fine|valid|legal|allowed)\b", re.I)


def expected_lines(text, defines):
    """The lines a negative test marks as wrong: the body of the #ifdef block
    its -D enables, else code lines whose trailing comment says so."""
    lines = text.splitlines()
    names = [d.split("=")[0] for d in defines]
    exp = set()
    if names:
        inside = False
        for i, l in enumerate(lines, 1):
            m = re.match(r"\s*#\s*if(?:def)?\s+(?:defined\s*\(?\s*)?(\w+)", l)
            if m and m.group(1) in names and not inside:
                inside = True
                continue
            if inside and re.match(r"\s*#\s*endif", l):
                inside = False
                continue
            if inside and l.strip() and not l.strip().startswith("//"):
                exp.add(i)
        if exp:
            return exp
    for i, l in enumerate(lines, 1):
        if "//" not in l or re.search(r"//\s*\d*(RUN|CHECK|CHK)[\w-]*:", l):
            continue
        code, comment = l.split("//", 1)
        if code.strip() and not OK_WORDS.search(comment) and ERR_WORDS.search(comment):
            exp.add(i)
    return exp


class Case:
    def __init__(self, name, path, kind, defines=(), includes=(), source_rel=None):
        self.name, self.path, self.kind = name, path, kind
        self.defines, self.includes = list(defines), list(includes)
        self.source_rel = source_rel or name
        self.stage = ""      # import | ptx | ptxas | "" (all passed)
        self.status = ""     # ok | error | crash | timeout
        self.error = ""
        self.err_file, self.err_line = "", 0
        self.kernels = 0
        self.relocatable = False  # calls device functions defined elsewhere
        self.verdict = ""
        self.markdown = False


def first_error(s):
    for l in s.splitlines():
        if "error:" in l:
            return l.strip()
    for l in s.splitlines():
        if CRASH_RE.search(l):
            return l.strip()
    return (s.strip().splitlines() or [""])[0][:300]


def run(cmd, timeout, stdin=None):
    try:
        p = subprocess.run(["timeout", "-k", "5", str(timeout)] + cmd, input=stdin,
                           capture_output=True, text=True, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except OSError as e:
        return -1, "", str(e)


def status_of(rc, err):
    if rc in (124, 137):
        return "timeout"
    if rc < 0 or rc >= 128 or CRASH_RE.search(err):
        return "crash"
    return "ok" if rc == 0 else "error"


def split_ptx(ptx):
    """The kernel modules of --croq-to-ptx output (one per gpu.module)."""
    mods, cur = [], []
    for l in ptx.splitlines(keepends=True):
        if l.startswith("// kernel module @") and cur:
            mods.append("".join(cur))
            cur = []
        cur.append(l)
    if "".join(cur).strip():
        mods.append("".join(cur))
    return [m for m in mods if ".version" in m]


def compile_case(c, opts):
    cmd = [opts.croq, "--import-croqtile", "--mlir-print-debuginfo"]
    for d in c.includes:
        cmd += ["-I", d]
    for d in c.defines:
        cmd += ["-D", d]
    cmd.append(c.path)
    rc, mlir, err = run(cmd, IMPORT_TIMEOUT)
    c.stage, c.status = "import", status_of(rc, err)
    if c.status == "ok":
        rc, ptx, err = run([opts.croq, "--croq-to-ptx", "--croq-chip=sm_90a"], PTX_TIMEOUT, stdin=mlir)
        c.stage, c.status = "ptx", status_of(rc, err)
        if c.status == "ok":
            mods = split_ptx(ptx)
            c.kernels = sum(len(re.findall(r"^\s*(?:\.visible\s+)?\.entry\b", m, re.M)) for m in mods)
            c.stage = "ptxas"
            for m in mods:
                with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                    f.write(m)
                # A call of a device function the file does not define stays
                # an external function: such PTX is assembled for separate
                # linking (ptxas -c), and the case is counted apart.
                external = re.search(r"^\.extern\s+\.func\b", m, re.M) is not None
                c.relocatable |= external
                rc, _, err = run([opts.ptxas, "-arch=sm_90a"] + (["-c"] if external else []) +
                                 [f.name, "-o", os.devnull], PTXAS_TIMEOUT)
                os.unlink(f.name)
                # ptxas's own "fatal" lines are errors in the PTX, not
                # crashes; only a signal or a timeout is.
                # (ptxas exits with 255 on an error.)
                c.status = ("ok" if rc == 0 else "timeout" if rc in (124, 137)
                            else "crash" if rc < 0 else "error")
                if c.status != "ok":
                    err = "ptxas: " + err
                    break
    if c.status == "ok":
        c.stage = ""
    else:
        c.error = first_error(err)
        m = LOC_ERR_RE.match(c.error)
        if m:
            c.err_file, c.err_line = m.group(1), int(m.group(2))
    judge(c)
    return c


UNDEFINED_RE = re.compile(r"use of undeclared name '([A-Z][A-Z0-9_]+)'|'([A-Z][A-Z0-9_]+)' is not a constant here")


def judge(c):
    if c.markdown and c.status == "error":
        # A tutorial block that uses a constant only its prose (or nothing)
        # defines is a fragment, not a complete kernel.
        m = UNDEFINED_RE.search(c.error)
        name = m and (m.group(1) or m.group(2))
        if name and not re.search(r"#\s*define\s+" + name + r"\b", open(c.path).read()):
            c.verdict = f"left out (a fragment: uses {name}, which the block does not define)"
            return
    if c.kind == "positive":
        c.verdict = "pass" if c.status == "ok" else f"fail ({c.stage} {c.status})"
        return
    if c.status in ("crash", "timeout"):
        c.verdict = f"fail (negative test: {c.status})"
    elif c.status == "ok":
        c.verdict = "fail (negative test accepted)"
    elif not c.err_line or os.path.realpath(c.err_file) != os.path.realpath(c.path):
        c.verdict = "pass (rejected, no location in the test)"
    else:
        text = open(c.path, errors="replace").read()
        exp = expected_lines(text, c.defines)
        c.verdict = ("pass (rejected at the marked line)" if c.err_line in exp else
                     "pass (rejected)" if not exp else "pass (rejected at another line)")


def co_cases(root, files, includes):
    cases, skipped = [], []
    for path in files:
        rel = os.path.relpath(path, root)
        text = open(path, errors="replace").read()
        why = left_out(rel, text)
        if why:
            skipped.append((rel, why))
            continue
        kind = classify(rel, text)
        for ds in define_sets(text):
            name = rel + ("" if not ds else " [" + " ".join("-D" + d for d in ds) + "]")
            cases.append(Case(name, path, kind, ds, includes + [os.path.dirname(path)], rel))
    return cases, skipped


CO_FN_RE = re.compile(r"__co__[^;{}]*\([^)]*\)\s*\{", re.S)
FENCE_RE = re.compile(r"^[ \t]*```([\w+-]*)[^\n]*\n(.*?)^[ \t]*```", re.M | re.S)


def fragment_reason(body):
    """Why a code block is a fragment rather than a complete kernel, or None:
    it elides code (`...`) or its braces do not balance."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", "", body, flags=re.S)
    if "..." in code:
        return "a fragment: elides code with '...'"
    if code.count("{") != code.count("}"):
        return "a fragment: its braces do not balance"
    return None


def md_cases(root, mdfiles, workdir, skipped):
    """One case per code block that defines a __co__ function. Blocks with the
    same text (a chapter repeating a kernel) are one case; fragments are
    left out."""
    cases, seen = [], set()
    for md in mdfiles:
        rel = os.path.relpath(md, root)
        text = open(md, errors="replace").read()
        for i, m in enumerate(FENCE_RE.finditer(text)):
            lang, body = m.group(1), m.group(2)
            if lang not in ("", "choreo", "co", "c", "cpp", "c++", "cuda") or not CO_FN_RE.search(body):
                continue
            h = hashlib.sha1(body.encode()).hexdigest()[:10]
            if h in seen:
                continue
            seen.add(h)
            line = text.count("\n", 0, m.start()) + 2
            name = f"{rel}:{line}"
            why = fragment_reason(body)
            if why:
                skipped.append((name, why))
                continue
            out = os.path.join(workdir, rel.replace("/", "__") + f".{line}.co")
            with open(out, "w") as f:
                f.write(body)
            case = Case(name, out, "positive", source_rel=name)
            case.markdown = True
            cases.append(case)
    return cases


def collect(paths, workdir):
    cases, skipped = [], []
    for p in paths:
        p = os.path.abspath(p)
        if os.path.isfile(p):
            if p.endswith(".md"):
                cases += md_cases(os.path.dirname(p), [p], workdir, skipped)
            else:
                c, s = co_cases(os.path.dirname(p), [p], [])
                cases += c
                skipped += s
            continue
        tutorial = [os.path.join(p, d) for d in ("tutorial", "optimization", "documentation")
                    if os.path.isdir(os.path.join(p, d))]
        if tutorial and not os.path.isdir(os.path.join(p, "tests")):
            mds = sorted(os.path.join(d, f) for t in tutorial for d, _, fs in os.walk(t)
                         for f in fs if f.endswith(".md"))
            cases += md_cases(p, mds, workdir, skipped)
            continue
        runtime = os.path.join(p, "runtime")
        includes = [runtime] if os.path.isdir(runtime) else []
        cos = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".co"))
        c, s = co_cases(p, cos, includes)
        cases += c
        skipped += s
    return cases, skipped


def summary(cases):
    cases = [c for c in cases if not c.verdict.startswith("left out")]
    pos = [c for c in cases if c.kind == "positive"]
    neg = [c for c in cases if c.kind == "negative"]
    return dict(
        pos=len(pos), pos_pass=sum(c.verdict == "pass" for c in pos),
        pos_kernels=sum(c.verdict == "pass" and c.kernels > 0 for c in pos),
        pos_reloc=sum(c.verdict == "pass" and c.relocatable for c in pos),
        neg=len(neg), neg_pass=sum(c.verdict.startswith("pass") for c in neg),
        neg_marked=sum(c.verdict == "pass (rejected at the marked line)" for c in neg),
        neg_accepted=sum(c.verdict == "fail (negative test accepted)" for c in neg),
        crashes=sum(c.status == "crash" for c in cases),
        timeouts=sum(c.status == "timeout" for c in cases))


def totals_line(s, label):
    pct = 100.0 * s["pos_pass"] / s["pos"] if s["pos"] else 0.0
    return (f"{label}: positive {s['pos_pass']}/{s['pos']} compiled through ptxas ({pct:.1f}%, "
            f"{s['pos_kernels']} with a kernel, {s['pos_reloc']} relocatable); negative {s['neg_pass']}/{s['neg']} rejected "
            f"({s['neg_marked']} at the marked line, {s['neg_accepted']} accepted); "
            f"crashes {s['crashes']}; timeouts {s['timeouts']}")


def norm_error(msg):
    m = LOC_ERR_RE.match(msg)
    msg = m.group(4) if m else msg
    msg = re.sub(r"'[^']*'", "'X'", msg)
    # Temporary file names (ptxas names its input) differ run to run.
    msg = re.sub(r"/tmp/\S+", "FILE", msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    return msg[:120]


def write_report(path, groups, skipped, opts):
    out = ["# croq on upstream Croqtile programs", "",
           f"Generated by `scripts/upstream-tests.sh` on {time.strftime('%Y-%m-%d')}, "
           f"croq at {opts.commit}" + (f", over {opts.source_note}" if opts.source_note else "") +
           ". Each positive case must import, lower to PTX and pass "
           "`ptxas -arch=sm_90a`; each negative case must be rejected with a location in the test. "
           "A case that calls a device function its file does not define compiles to PTX with an "
           "external function, which is assembled with `ptxas -c` for separate linking: the "
           "'relocatable' column counts those among the compiled. "
           "Why croq rejects what it rejects: [Language.md](Language.md#what-croq-rejects-and-why).", ""]
    out += ["| source | positive compiled | % | with a kernel | relocatable | negative rejected | at the marked line | accepted | crashes |",
            "|---|---|---|---|---|---|---|---|---|"]
    for label, cases in groups:
        s = summary(cases)
        pct = 100.0 * s["pos_pass"] / s["pos"] if s["pos"] else 0.0
        out.append(f"| {label} | {s['pos_pass']}/{s['pos']} | {pct:.1f} | {s['pos_kernels']} | {s['pos_reloc']} | "
                   f"{s['neg_pass']}/{s['neg']} | {s['neg_marked']} | {s['neg_accepted']} | {s['crashes']} |")
    out += ["", "## Left out", ""]
    reasons = collections.Counter(w for _, w in skipped)
    for w, n in reasons.most_common():
        out.append(f"- {w}: {n} files")
    fragments = [c for _, cases in groups for c in cases if c.verdict.startswith("left out")]
    for c in fragments:
        out.append(f"- `{c.name}`: {c.verdict[len('left out ('):-1]}")
    for label, cases in groups:
        fails = [c for c in cases if c.verdict.startswith("fail")]
        if not fails:
            continue
        out += ["", f"## {label}: failures by first error", "", "| cases | first error | example |", "|---|---|---|"]
        by = collections.defaultdict(list)
        for c in fails:
            key = "negative test accepted" if c.status == "ok" else f"{c.stage}: {norm_error(c.error)}"
            by[key].append(c.name)
        for key, names in sorted(by.items(), key=lambda kv: -len(kv[1])):
            k = key.replace("|", "\\|")
            out.append(f"| {len(names)} | {k} | `{names[0]}` |")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--croq", default=os.path.join(REPO, "build", "bin", "croq-translate"))
    ap.add_argument("--ptxas", default=os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", action="append", default=[], help="only cases whose name contains this")
    ap.add_argument("--report", help="write a markdown report here")
    ap.add_argument("--json", help="write every case's outcome here")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the totals")
    ap.add_argument("--source-note", default="", help="what the paths are (repositories and commits), for the report")
    opts = ap.parse_args()
    opts.commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True).stdout.strip() or "?"
    for tool in (opts.croq, opts.ptxas):
        if not os.access(tool, os.X_OK):
            sys.exit(f"upstream-tests: {tool} is not an executable (build croq first, or pass --croq/--ptxas)")
    work = tempfile.mkdtemp(prefix="croq-upstream-")
    groups = []
    all_skipped = []
    for p in opts.paths:
        cases, skipped = collect([p], work)
        if opts.filter:
            cases = [c for c in cases if any(f in c.name for f in opts.filter)]
        all_skipped += skipped
        with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
            for c in ex.map(lambda c: compile_case(c, opts), cases):
                if not opts.quiet or c.verdict.startswith("fail"):
                    err = f"  {c.error}" if c.verdict.startswith("fail") and c.error else ""
                    print(f"{c.verdict:40} {c.name}{err}", flush=True)
        label = os.path.basename(os.path.normpath(p))
        for top in sorted({c.source_rel.split("/")[0] for c in cases}):
            groups.append((f"{label}/{top}", [c for c in cases if c.source_rel.split("/")[0] == top]))
    for rel, why in all_skipped:
        if not opts.quiet:
            print(f"{'left out (' + why + ')':40} {rel}")
    print()
    for label, cases in groups:
        print(totals_line(summary(cases), label))
    fragments = [c for _, cs in groups for c in cs if c.verdict.startswith("left out")]
    print(f"left out: {len(all_skipped)} files (" + ", ".join(
        f"{w}: {n}" for w, n in collections.Counter(w for _, w in all_skipped).most_common()) + ")"
        + (f"; and {len(fragments)} blocks that use constants they do not define" if fragments else ""))
    if opts.report:
        write_report(opts.report, groups, all_skipped, opts)
    if opts.json:
        json.dump([dict(vars(c)) for _, cs in groups for c in cs], open(opts.json, "w"), indent=1)


if __name__ == "__main__":
    main()
