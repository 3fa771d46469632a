#!/usr/bin/env python3
"""Mutation fuzzer for croq-translate / croq-opt.

Seeds: every .co file under test/ and every .mlir file under test/ that holds
croq ops (split at `// -----`), plus the IR that the importer makes of each
.co seed. Each iteration picks a seed, applies 1-4 random mutations and runs
the tools on the mutant:

  .co   croq-translate --import-croqtile M.co            (import)
        croq-opt IMPORTED                               (print/parse round trip)
        croq-opt --croq-to-nvvm IMPORTED                (full pipeline)
        croq-translate --croq-to-ptx IMPORTED
        croq-translate --croq-to-host IMPORTED          (--host)
  .mlir croq-opt M.mlir                                 (parse + verify)
        croq-opt --PASS M.mlir   for canonicalize, cse, every croq pass and
                                 the full --croq-to-nvvm pipeline
        croq-translate --croq-to-ptx / --croq-to-host M.mlir

Each mutant that gets past the import / parse also runs one random option
variant (VARIANTS: sm_80 / sm_100a targets, use-elect-sync, register
budgets, pass chains).

A finding is a signal, a timeout (gdb, when present, records where it
hangs), or output with a crash marker (Assertion, LLVM ERROR, UNREACHABLE,
Stack dump, ...) or, for a run whose input the tool accepted, a first error
that croq should not emit (unresolved materialization, failed to legalize,
an upstream dialect verifier such as 'llvm.*' / 'nvvm.*', an error without
a location), an importer output that a croq op verifier rejects, or a
croq-opt error that goes away with --verify-each=false (a pass produced IR
its verifier rejects). Each distinct finding (keyed by its first message
line with numbers, locations and types stripped) gets a line-minimised
reproducer in OUT/NNN.{co,mlir} and OUT/NNN.txt with the command and the
output tail; OUT/index.json carries the keys across runs, and --recheck
re-runs every reproducer against the current binaries (dropping fixed and
duplicate ones).

  usage: scripts/fuzz.py [--seed S] [--iterations N] [--time SECONDS]
                         [--timeout 20] [--out /tmp/fuzz-findings]
                         [--minimize-time 60] [--no-host] [--recheck]
"""

import argparse
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
OPT = os.path.join(BIN, "croq-opt")
TRANSLATE = os.path.join(BIN, "croq-translate")

# ----------------------------------------------------------------------------
# Finding classification
# ----------------------------------------------------------------------------

# Markers that are a finding whatever the input was.
HARD_MARKERS = [
    "Assertion", "LLVM ERROR", "UNREACHABLE", "Stack dump",
    "PLEASE submit a bug report",
]
# Markers that are a finding only for an input the tool accepted (after the
# parse and verify of the input, or for the importer's own output).
SOFT_MARKERS = [
    "unresolved materialization", "failed to legalize", "verifier",
    "'llvm.", "'nvvm.", "error: <unknown>", "<unknown>:0: error",
]
# Upstream (non-croq) ops whose verifier rejects what a croq pass or the
# importer produced.
UPSTREAM_OP_RE = re.compile(
    r"error: '(llvm|nvvm|gpu|scf|memref|arith|vector|nvgpu|func|cf|math|"
    r"builtin)\.[\w.]+' op")
CROQ_OP_RE = re.compile(r"error: 'croq\.[\w.]+' op")
LOC_RE = re.compile(r"^\S*?:\d+:\d+: ")
CROQ_SOURCE = None


def croq_says(line):
    """Whether the op diagnostic on this line is one croq's sources emit
    (croq passes report on upstream ops too): its first literal fragment
    appears in lib/ or include/."""
    global CROQ_SOURCE
    if CROQ_SOURCE is None:
        chunks = []
        for d in ("lib", "include"):
            for dp, _, fs in os.walk(os.path.join(ROOT, d)):
                for f in fs:
                    if f.endswith((".cpp", ".h", ".td", ".inc")):
                        chunks.append(open(os.path.join(dp, f),
                                           errors="replace").read())
        # join string literals continued on the next line
        CROQ_SOURCE = re.sub(r'"\s*\n\s*"', "", "\n".join(chunks))
    # The conversion's "has no <decision>: run croq-<pass> before ..." is
    # assembled from pieces.
    if re.search(r": run croq-[a-z-]+ before ", line):
        return True
    m = re.search(r"' op (.*)", line)
    if not m:
        return False
    frag = re.split(r"['%\d\"]", m.group(1))[0].strip()
    return len(frag) >= 12 and frag in CROQ_SOURCE


def normalize(line):
    line = line.strip()
    line = LOC_RE.sub("", line)
    line = re.sub(r"/[\w./+-]+", "PATH", line)
    line = re.sub(r"0x[0-9a-fA-F]+", "N", line)
    line = re.sub(r"%[\w.$-]+", "%V", line)
    line = re.sub(r"@[\w.$-]+", "@S", line)
    line = re.sub(r"'[!\w.]*[<(][^']*'", "'T'", line)
    line = re.sub(r"\d+", "N", line)
    return line[:200]


def first_message(text, markers):
    """The first line of the crash/error message."""
    lines = text.splitlines()
    for want in ("Assertion", "LLVM ERROR", "UNREACHABLE"):
        for l in lines:
            if want in l:
                return l
    for l in lines:
        for m in markers:
            if m in l and m not in ("Stack dump", "PLEASE submit a bug report"):
                return l
    for l in lines:
        if "error:" in l:
            return l
    return lines[0] if lines else ""


SKIP_FRAME_RE = re.compile(
    r"llvm::sys::|SignalHandler|PrintStackTrace|__restore_rt|libc\.so|"
    r"\braise\b|\babort\b|__assert|report_fatal|llvm_unreachable_internal|"
    r"^\(/|sysdeps|\./string/|\bmem(cpy|move|set|cmp)\b|__libc|_start\b|"
    r"^main$|^_start$|raw_ostream|StringRef|SmallVector|DenseMap|^\?\?$|"
    r"malloc|^operator new|pthread_kill|nptl|gsignal")


def frames(text):
    out = []
    for l in text.splitlines():
        m = re.match(r"\s*#\d+ +(?:0x[0-9a-f]+ (?:in )?)?(.*)", l)
        if m:
            f = re.sub(r" (from|at) \S+$", "", m.group(1))
            out.append(f)
    return out


def clean_frame(f):
    f = re.sub(r"\s+\(?/\S+\)?$", "", f)   # drop the file / library
    f = re.sub(r"\s+\S+\.(cpp|h|hpp):\d+:\d+$", "", f)
    f = re.sub(r"\((?:[^()]|\([^()]*\))*\)", "", f)   # parameter lists
    f = re.sub(r"\s+const$", "", f)
    return f.strip()[:160]


def top_frame(text):
    """The innermost croq frame, else the first non-runtime frame."""
    fs = [(f, clean_frame(f)) for f in frames(text)]
    fs = [(f, c) for f, c in fs if c and not SKIP_FRAME_RE.search(c)
          and "libc.so" not in f and "sysdeps" not in f]
    for f, c in fs:
        if "croq" in f or "/work/main" in f or ".cpp:" in f:
            return c
    return fs[0][1] if fs else ""


def running_pass(text):
    m = re.search(r"Running pass '([^']*)'", text)
    return m.group(1) if m else ""


# Stages that run the same lowering.
STAGE_GROUP = {"nvvm": "lower", "ptx": "lower", "host": "lower",
               "opt --croq-to-nvvm": "lower"}


def classify(res, accepted_input):
    """(kind, key, message) of a finding in a tool result, or None.

    accepted_input: whether the input was valid for the tool (the soft
    markers only count then)."""
    out = res["out"]
    if res["timeout"]:
        frame = top_frame(out)
        p = running_pass(out)
        stage = STAGE_GROUP.get(res["stage"], res["stage"])
        return ("timeout", "timeout | " + frame if frame else
                "timeout in " + stage,
                "timeout after %ss in %s%s" % (
                    res["limit"], frame or "?", " (pass %s)" % p if p else ""))
    if res["rc"] < 0:
        frame = top_frame(out)
        msg = first_message(out, HARD_MARKERS)
        if "PLEASE submit" in msg or "Stack dump" in msg or not msg.strip():
            msg = ""
        key = "signal %d: %s | %s" % (-res["rc"], normalize(msg), frame)
        p = running_pass(out)
        desc = "signal %d in %s%s%s" % (-res["rc"], frame or "?",
                                       " (pass %s)" % p if p else "",
                                       ": " + msg.strip() if msg else "")
        return ("signal", key, desc)
    for m in HARD_MARKERS:
        if m in out:
            msg = first_message(out, HARD_MARKERS)
            return ("crash", normalize(msg), msg.strip())
    if not accepted_input:
        return None
    # Only the first error counts: a croq diagnostic followed by "failed to
    # legalize" from the conversion driver is croq's own report.
    first = out
    errs = [m.start() for m in re.finditer(r"error:", out)]
    if len(errs) > 1:
        first = out[:errs[1]]
        first = first[:first.rfind("\n") + 1] if "\n" in first else first
    for m in SOFT_MARKERS:
        if m in first:
            msg = first_message(first, SOFT_MARKERS)
            return ("internal-error", normalize(msg),
                    msg.strip())
    m = UPSTREAM_OP_RE.search(first)
    if m:
        line = next(l for l in first.splitlines() if m.group(0) in l)
        if croq_says(line):
            return None
        return ("upstream-verifier", normalize(line),
                line.strip())
    if res["stage"].startswith("import") or res["stage"] == "roundtrip":
        m = CROQ_OP_RE.search(out)
        # A croq op verifier's error at the .co line, with no dump of the
        # generated op, is a located diagnostic, not a finding.
        if m and ".co:" in out and "see current operation" not in out:
            m = None
        if m:
            line = next(l for l in out.splitlines() if m.group(0) in l)
            # one finding per op and message shape, whatever the types
            key = re.sub(r"'[^']*'", lambda q: q.group(0) if
                         q.group(0).startswith("'croq.") else "'Q'",
                         normalize(line))
            return ("import-invalid-croq", "import: " + key, line.strip())
    if res["stage"] == "roundtrip" and res["rc"] != 0:
        msg = first_message(out, [])
        return ("roundtrip", "roundtrip: " + normalize(msg), msg.strip())
    return None


# ----------------------------------------------------------------------------
# Running the tools
# ----------------------------------------------------------------------------

def run(cmd, timeout, stdin_data=None):
    """Run a tool. On a timeout, gdb (when there is one) prints where it
    hangs before the tool is killed."""
    t0 = time.time()
    # A rebuild can remove a binary for a moment: wait for it.
    for _ in range(60):
        if os.path.exists(cmd[0]):
            break
        time.sleep(5)
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin_data else None,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(stdin_data, timeout=timeout)
        return {"rc": p.returncode, "stdout": out,
                "out": err.decode("utf-8", "replace"),
                "timeout": False, "time": time.time() - t0}
    except subprocess.TimeoutExpired:
        bt = ""
        if GDB:
            try:
                g = subprocess.run([GDB, "-p", str(p.pid), "-batch", "-ex",
                                    "bt"], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, timeout=60)
                bt = "\n".join(l for l in g.stdout.decode(
                    "utf-8", "replace").splitlines() if l.startswith("#"))
            except subprocess.TimeoutExpired:
                pass
        p.kill()
        out, err = p.communicate()
        return {"rc": -999, "stdout": b"",
                "out": err.decode("utf-8", "replace") +
                ("\n--- gdb backtrace at the timeout ---\n" + bt if bt
                 else ""),
                "timeout": True, "time": time.time() - t0}


GDB = shutil.which("gdb")
MLIR_PASSES = None


def mlir_passes():
    global MLIR_PASSES
    if MLIR_PASSES is None:
        helptext = subprocess.run([OPT, "--help"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL).stdout.decode()
        names = re.findall(r"^\s+--((?:convert-)?croq-[\w-]+)\s", helptext,
                           re.M)
        names = [n for n in dict.fromkeys(names) if n != "croq-to-nvvm"]
        MLIR_PASSES = (["--canonicalize", "--cse"] + ["--" + n for n in names]
                       + ["--croq-to-nvvm",
                          "--croq-prepare-gpu,--convert-croq-to-gpu,"
                          "--canonicalize",
                          "--croq-prepare-gpu,--convert-croq-to-gpu"])
    return MLIR_PASSES


# Option variants: each mutant that gets past the import / parse runs one
# of these too, chosen by the fuzzer's random generator. A stage is
# "opt ARGS" (croq-opt) or "tr ARGS" (croq-translate), ARGS split at ";".
VARIANTS = [
    "opt --croq-to-nvvm=chip=sm_80 features=+ptx70",
    "opt --croq-to-nvvm=format=none",
    "opt --croq-to-nvvm=opt-level=0",
    "tr --croq-chip=sm_80;--croq-features=+ptx70;--croq-to-ptx",
    "tr --croq-chip=sm_100a;--croq-features=+ptx86;--croq-to-ptx",
    "opt --croq-prepare-gpu,--convert-croq-to-gpu",
    "opt --croq-prepare-gpu=chip=sm_80,--convert-croq-to-gpu=chip=sm_80,"
    "--canonicalize,--cse",
    "opt --croq-warp-specialize=producer-registers=24 max-registers=24,"
    "--croq-prepare-gpu=chip=sm_90,--convert-croq-to-gpu",
    "opt --croq-warp-specialize=producer-registers=256 max-registers=256,"
    "--croq-prepare-gpu=chip=sm_90,--convert-croq-to-gpu",
    "opt --croq-warp-specialize=producer-registers=40 max-registers=0,"
    "--croq-prepare-gpu=chip=sm_90,--convert-croq-to-gpu",
    "opt --croq-warp-specialize=max-registers=1000,"
    "--croq-prepare-gpu=chip=sm_90,--convert-croq-to-gpu",
    "opt --croq-warp-specialize=max-registers=-8,"
    "--croq-prepare-gpu=chip=sm_90,--convert-croq-to-gpu",
    "opt --canonicalize,--croq-verify-protocol,--croq-insert-barriers,"
    "--croq-check-divergence",
    "opt --cse,--canonicalize,--croq-to-nvvm",
]


def stage_cmd(stage, path):
    """The command of a stage on `path`."""
    if stage in ("roundtrip", "parse"):
        return [OPT, path]
    if stage == "nvvm":
        return [OPT, "--croq-to-nvvm", path]
    if stage == "ptx":
        return [TRANSLATE, "--croq-to-ptx", path]
    if stage == "host":
        return [TRANSLATE, "--croq-to-host", path]
    tool, args = stage.split(" ", 1)
    if tool == "opt":
        return [OPT] + args.split(",") + [path]
    return [TRANSLATE] + args.split(";") + [path]


class Runner:
    def __init__(self, timeout, host, workdir, rng):
        self.timeout = timeout
        self.host = host
        self.workdir = workdir
        self.rng = rng

    def res(self, r, stage, cmd):
        r["stage"] = stage
        r["cmd"] = cmd
        r["limit"] = self.timeout
        return r

    def stages(self, base, only):
        if only:
            return [only]
        return base + [self.rng.choice(VARIANTS)]

    def run_stages(self, stages, path):
        for stage in stages:
            cmd = stage_cmd(stage, path)
            r = self.res(run(cmd, self.timeout), stage, cmd)
            yield r, stage != "parse"
            if r["timeout"] and stage != "roundtrip":
                return  # the other lowerings likely hang the same way

    def run_co(self, path, extra, only=None):
        """Yield (result, accepted) for the chain of a .co mutant. `only`
        restricts the downstream stage (for minimisation)."""
        imp = [TRANSLATE, "--import-croqtile"] + extra + [path]
        r = self.res(run(imp, self.timeout), "import", imp)
        yield r, True
        if r["rc"] != 0 or r["timeout"]:
            return
        ir = os.path.join(self.workdir, "imported.mlir")
        with open(ir, "wb") as f:
            f.write(r["stdout"])
        base = ["roundtrip", "nvvm", "ptx"] + (["host"] if self.host else [])
        yield from self.run_stages(self.stages(base, only), ir)

    def run_mlir(self, path, only=None):
        cmd = [OPT, path]
        r = self.res(run(cmd, self.timeout), "parse", cmd)
        yield r, False
        if r["rc"] != 0 or r["timeout"]:
            return
        base = (["opt " + p for p in mlir_passes()] + ["ptx"] +
                (["host"] if self.host else []))
        yield from self.run_stages(self.stages(base, only), path)


# ----------------------------------------------------------------------------
# Seeds
# ----------------------------------------------------------------------------

def split_chunks(text):
    parts = re.split(r"^// -----\s*$", text, flags=re.M)
    return [p for p in parts if p.strip()]


def co_extra_args(text, path):
    """-D / -I arguments of the file's first croq-translate RUN line."""
    for line in text.splitlines():
        if "RUN:" in line and "--import-croqtile" in line:
            cmd = line.split("RUN:", 1)[1].split("|")[0]
            toks = shlex.split(cmd)
            extra, i = [], 0
            while i < len(toks):
                t = toks[i].replace("%S", os.path.dirname(path))
                if t in ("-I", "-D") and i + 1 < len(toks):
                    extra += [t, toks[i + 1].replace("%S",
                                                     os.path.dirname(path))]
                    i += 2
                    continue
                if t.startswith("-D") or t.startswith("-I"):
                    extra.append(t)
                i += 1
            return extra
    return []


def collect_seeds(workdir, timeout):
    seeds = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for fn in sorted(files):
            p = os.path.join(dirpath, fn)
            if fn.endswith(".co"):
                text = open(p, "rb").read().decode("utf-8", "replace")
                extra = co_extra_args(text, p)
                for i, c in enumerate(split_chunks(text)):
                    seeds.append({"kind": "co", "text": c, "extra": extra,
                                  "name": os.path.relpath(p, ROOT) +
                                  ("#%d" % i if i else "")})
            elif fn.endswith(".mlir"):
                text = open(p, "rb").read().decode("utf-8", "replace")
                if not re.search(r"\bcroq\.\w", text):
                    continue
                for i, c in enumerate(split_chunks(text)):
                    seeds.append({"kind": "mlir", "text": c,
                                  "name": os.path.relpath(p, ROOT) +
                                  ("#%d" % i if i else "")})
    # The importer's IR of every .co seed that imports.
    derived = []
    tmp = os.path.join(workdir, "seed.co")
    for s in seeds:
        if s["kind"] != "co":
            continue
        with open(tmp, "w") as f:
            f.write(s["text"])
        r = run([TRANSLATE, "--import-croqtile"] + s["extra"] + [tmp], timeout)
        if r["rc"] == 0 and r["stdout"].strip():
            derived.append({"kind": "mlir",
                            "text": r["stdout"].decode("utf-8", "replace"),
                            "name": s["name"] + "(imported)"})
    seeds.sort(key=lambda s: s["name"])
    derived.sort(key=lambda s: s["name"])
    return seeds + derived


# ----------------------------------------------------------------------------
# Mutations
# ----------------------------------------------------------------------------

INTS = ["0", "-1", "1", "2", "3", "7", "31", "32", "33", "64", "127", "128",
        "129", "255", "256", "1024", "65535", "65536", "2147483647",
        "2147483648", "4294967295", "4294967296", "9223372036854775807",
        "9223372036854775808", "18446744073709551615",
        "18446744073709551616", "340282366920938463463374607431768211456"]
HUGE = ["18446744073709551615", "2147483648", "9223372036854775808",
        "4294967296", "99999999999999999999999"]
PAR_KINDS = ["block", "group", "group-4", "thread", "warp", "device"]
CO_KEYWORDS = (
    "after any async auto barrier block break by commit continue copy dma "
    "else event fence fill foreach global group if in inthreads load local "
    "mma mutable parallel ready return rotate row col shared store stream "
    "swap swiz sync tensor thread tma transp trigger wait while with zfill "
    "void int bool float half double").split()
CO_TYPES = ("f16 f32 f64 bf16 tf32 f8_e4m3 f8_e5m2 s8 s16 s32 s64 u8 u16 u32 "
            "u64 bool int float").split()
MLIR_TYPES = ["f16", "f32", "f64", "bf16", "index", "i1", "i8", "i16", "i32",
              "i64", "f8E4M3FN"]
CO_PUNCT = [";", "{", "}", "(", ")", "[", "]", ",", ".", "=>", "=", ":"]

CO_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<num>0[xX][0-9a-fA-F]+|\d+\.\d*(?:[eE][-+]?\d+)?[fF]?|\d+[uUlL]*)
  | (?P<grp>group-4)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<punct><<=|>>=|=>|->|::|\+\+|--|\+=|-=|\*=|/=|%=|==|!=|<=|>=|&&|\|\||
               <<|>>|\.\.\.|.)
""", re.X | re.S)


def co_tokens(text):
    toks = []
    for m in CO_TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "grp":
            kind = "id"
        toks.append([kind, m.group(0)])
    return toks


def sig(toks):
    return [i for i, t in enumerate(toks) if t[0] not in ("ws", "comment")]


def join(toks):
    return "".join(t[1] for t in toks)


def lines_mut(text, rng, op):
    lines = text.split("\n")
    code = [i for i, l in enumerate(lines)
            if l.strip() and not l.strip().startswith("//")]
    if not code:
        return text
    i = rng.choice(code)
    if op == "delete":
        del lines[i]
    elif op == "dup":
        lines.insert(i, lines[i])
    elif op == "swap":
        j = rng.choice(code)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "move":
        l = lines.pop(i)
        lines.insert(rng.randrange(len(lines) + 1), l)
    return "\n".join(lines)


def mutate_co(text, rng):
    toks = co_tokens(text)
    s = sig(toks)
    if not s:
        return text
    ids = sorted({t[1] for t in toks if t[0] == "id"})
    nums = [i for i in s if toks[i][0] == "num"]
    idents = [i for i in s if toks[i][0] == "id"]
    op = rng.choice(["int", "int", "int", "huge", "ident", "ident", "delline",
                     "deltok", "dupline", "parkind", "parkind", "punct",
                     "punct", "waittrig", "waittrig", "keyword", "type",
                     "swapline", "moveline", "duptok", "index", "float"])
    if op in ("int", "huge") and nums:
        i = rng.choice(nums)
        toks[i][1] = rng.choice(INTS if op == "int" else HUGE)
    elif op == "float":
        fl = [i for i in nums if "." in toks[i][1]]
        if fl:
            toks[rng.choice(fl)][1] = rng.choice(
                ["1e39f", "-0.0f", "nan", "1e400", "0.0", "1", "3.4e38f"])
    elif op == "ident" and idents and ids:
        toks[rng.choice(idents)][1] = rng.choice(ids)
    elif op == "delline":
        return lines_mut(text, rng, "delete")
    elif op == "dupline":
        return lines_mut(text, rng, "dup")
    elif op == "swapline":
        return lines_mut(text, rng, "swap")
    elif op == "moveline":
        return lines_mut(text, rng, "move")
    elif op == "deltok":
        toks[rng.choice(s)][1] = " "
    elif op == "duptok":
        i = rng.choice(s)
        toks[i][1] = toks[i][1] + " " + toks[i][1]
    elif op == "parkind":
        ks = [i for i in s if toks[i][1] in PAR_KINDS]
        if ks:
            toks[rng.choice(ks)][1] = rng.choice(PAR_KINDS[:4] +
                                                  PAR_KINDS[:4] + PAR_KINDS)
    elif op == "punct":
        ps = [i for i in s if toks[i][1] in (";", "{", "}", "(", ")", "[",
                                              "]", ",")]
        r = rng.random()
        if ps and r < 0.5:
            toks[rng.choice(ps)][1] = ""
        else:
            i = rng.choice(s)
            toks[i][1] = toks[i][1] + rng.choice(CO_PUNCT)
    elif op == "waittrig":
        wt = [i for i in s if toks[i][1] in ("wait", "trigger")]
        if wt:
            i = rng.choice(wt)
            j = s.index(i)
            choice = rng.random()
            if choice < 0.2:
                toks[i][1] = "trigger" if toks[i][1] == "wait" else "wait"
            elif choice < 0.5 and j + 1 < len(s) and ids:
                # change the target
                toks[s[j + 1]][1] = rng.choice(ids)
            else:
                # change / drop / add the index
                if j + 2 < len(s) and toks[s[j + 2]][1] == "[":
                    k = j + 3
                    if rng.random() < 0.3:
                        # drop the whole [..]
                        depth, k2 = 0, j + 2
                        while k2 < len(s):
                            if toks[s[k2]][1] == "[":
                                depth += 1
                            elif toks[s[k2]][1] == "]":
                                depth -= 1
                            toks_k = s[k2]
                            done = depth == 0
                            toks[toks_k][1] = ""
                            k2 += 1
                            if done:
                                break
                    elif k < len(s):
                        toks[s[k]][1] = rng.choice(
                            INTS[:12] + [rng.choice(ids)] + ["-1", "2 + 1"])
                elif j + 1 < len(s):
                    toks[s[j + 1]][1] += "[" + rng.choice(INTS[:8]) + "]"
    elif op == "keyword" and idents:
        kw = [i for i in idents if toks[i][1] in CO_KEYWORDS]
        if kw:
            toks[rng.choice(kw)][1] = rng.choice(CO_KEYWORDS)
    elif op == "type":
        ty = [i for i in idents if toks[i][1] in CO_TYPES]
        if ty:
            toks[rng.choice(ty)][1] = rng.choice(CO_TYPES)
    elif op == "index":
        # subspan/chunkat/at argument changes
        calls = [i for i in idents if toks[i][1] in
                 ("at", "subspan", "chunkat", "span", "cdiv", "step",
                  "chunk", "view", "from")]
        if calls and nums:
            toks[rng.choice(nums)][1] = rng.choice(INTS)
        elif idents:
            toks[rng.choice(idents)][1] = "_"
    return join(toks)


MLIR_INT_RE = re.compile(r"(?<![\w%#^@$.])(-?\d+)(?![\w.])|"
                         r"(?<=\dx)(\d+)(?=x)|(?<=<)(\d+)(?=x)|"
                         r"(?<=\dx)(\d+)(?=x?[a-z])")
MLIR_SSA_RE = re.compile(r"%[\w.$-]+(?:#\d+)?")
MLIR_TYPE_RE = re.compile(r"\b(f16|f32|f64|bf16|index|i1|i8|i16|i32|i64)\b")
CROQ_OP_NAME_RE = re.compile(r"\bcroq(?:\.\w+)+")
MLIR_WORD_RE = re.compile(r"(?<=[<, ])(shared|global|local|acc|warpgroup|"
                          r"warp|thread|block|group|row_row|row_col|col_row|"
                          r"col_col|async|sync|workgroup|private)(?=[>, ])")


def mutate_mlir(text, rng):
    op = rng.choice(["int", "int", "int", "huge", "delop", "delop", "dupline",
                     "type", "type", "ssa", "ssa", "opname", "word",
                     "moveline", "dim"])
    if op in ("int", "huge", "dim"):
        ms = [m for m in MLIR_INT_RE.finditer(text)
              if not text[max(0, m.start() - 40):m.start()].rstrip()
              .endswith("//")]
        if op == "dim":
            ms = [m for m in ms if m.group(1) is None] or ms
        if not ms:
            return text
        m = rng.choice(ms)
        g = next(i for i in range(1, 5) if m.group(i) is not None)
        val = rng.choice(INTS if op == "int" else HUGE)
        if g != 1 and val.startswith("-"):
            val = rng.choice(["0", "1", "?", "-1"])
        return text[:m.start(g)] + val + text[m.end(g):]
    if op == "delop":
        lines = text.split("\n")
        ops = [i for i, l in enumerate(lines)
               if re.match(r"\s*(%[\w.#:, %]+=\s*)?\"?[a-z_]+\.[\w.]+", l)
               and not l.strip().startswith("//")]
        if not ops:
            return lines_mut(text, rng, "delete")
        del lines[rng.choice(ops)]
        return "\n".join(lines)
    if op == "dupline":
        return lines_mut(text, rng, "dup")
    if op == "moveline":
        return lines_mut(text, rng, "move")
    if op == "type":
        ms = list(MLIR_TYPE_RE.finditer(text))
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(MLIR_TYPES) + text[m.end():]
    if op == "ssa":
        ms = list(MLIR_SSA_RE.finditer(text))
        names = sorted({m.group(0) for m in ms})
        uses = [m for m in ms if not re.match(
            r"\s*(,\s*%[\w.$-]+\s*)*(=|:\s*\w)", text[m.end():m.end() + 40])]
        if not uses or not names:
            return text
        m = rng.choice(uses)
        return text[:m.start()] + rng.choice(names) + text[m.end():]
    if op == "opname":
        ms = list(CROQ_OP_NAME_RE.finditer(text))
        names = sorted({m.group(0) for m in ms})
        if not ms:
            return text
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(names) + text[m.end():]
    if op == "word":
        ms = list(MLIR_WORD_RE.finditer(text))
        if not ms:
            return text
        words = sorted({m.group(0) for m in ms})
        m = rng.choice(ms)
        return text[:m.start()] + rng.choice(words) + text[m.end():]
    return text


def mutate(seed, rng):
    text = seed["text"]
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        text = (mutate_co if seed["kind"] == "co" else mutate_mlir)(text, rng)
    return text


# ----------------------------------------------------------------------------
# Findings
# ----------------------------------------------------------------------------

class Findings:
    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.index_path = os.path.join(out, "index.json")
        self.index = []
        if os.path.exists(self.index_path):
            self.index = json.load(open(self.index_path))
        self.keys = {f["key"] for f in self.index}

    def has(self, key):
        return key in self.keys

    def add(self, entry, text, suffix, res, repro_cmd):
        n = 1 + max([int(f["id"]) for f in self.index] or [0])
        nid = "%03d" % n
        path = os.path.join(self.out, nid + suffix)
        with open(path, "w") as f:
            f.write(text)
        cmd = repro_cmd.replace("FILE", path)
        entry.update({"id": nid, "file": path, "cmd": cmd})
        self.write_txt(entry, res)
        self.index.append(entry)
        self.keys.add(entry["key"])
        self.save()
        return nid

    def write_txt(self, entry, res):
        tail = res["out"][-6000:]
        with open(os.path.join(self.out, entry["id"] + ".txt"), "w") as f:
            f.write("kind: %s\nkey: %s\nseed: %s\nmessage: %s\n"
                    "command: %s\nreturncode: %s\n\n--- output tail ---\n%s\n"
                    % (entry["kind"], entry["key"], entry["seed"],
                       entry["message"], entry["cmd"],
                       "timeout" if res["timeout"] else res["rc"], tail))

    def save(self):
        self.keys = {f["key"] for f in self.index}
        with open(self.index_path, "w") as f:
            json.dump(self.index, f, indent=1)


def repro_command(kind, stage, extra, res):
    def shell(cmd):
        return " ".join(shlex.quote(c) for c in cmd).replace(
            BIN + "/", "").replace("'FILE'", "FILE")
    if kind == "co":
        imp = shell([TRANSLATE, "--import-croqtile"] + extra + ["FILE"])
        if stage == "import":
            return imp
        return imp + " | " + shell(stage_cmd(stage, "-")[:-1])
    return shell(stage_cmd(stage, "FILE"))


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = tempfile.mkdtemp(prefix="croq-fuzz-")
        self.runner = Runner(args.timeout, not args.no_host, self.work,
                             random.Random(args.seed + 1000003))
        self.findings = Findings(args.out)
        self.stats = {"runs": 0, "mutants": 0, "accepted": 0}

    def check(self, kind, text, extra, only=None):
        """Run a mutant; the list of (kind, key, msg, res) findings."""
        suffix = "." + kind
        path = os.path.join(self.work, "mutant" + suffix)
        with open(path, "w") as f:
            f.write(text)
        found = []
        gen = (self.runner.run_co(path, extra, only) if kind == "co"
               else self.runner.run_mlir(path, only))
        for n, (res, accepted) in enumerate(gen):
            self.stats["runs"] += 1
            if n == 1 and only is None:
                self.stats["accepted"] += 1
            c = classify(res, accepted)
            if not c and accepted:
                c = self.verifier_failure(res)
            if c:
                found.append(c + (res,))
        return found

    def verifier_failure(self, res):
        """A croq-opt pass run on accepted input that failed: does its first
        error go away with --verify-each=false? Then it is the verifier
        rejecting what a pass produced."""
        cmd = res["cmd"]
        if (res["rc"] != 1 or res["timeout"] or cmd[0] != OPT or
                res["stage"] in ("roundtrip", "parse")):
            return None
        line = next((l for l in res["out"].splitlines() if "error:" in l),
                    None)
        if not line:
            return None
        msg = LOC_RE.sub("", line.strip())
        again = run(cmd[:1] + ["--verify-each=false"] + cmd[1:],
                    self.args.timeout)
        self.stats["runs"] += 1
        if msg in again["out"]:
            return None
        return ("pass-invalid-ir", "invalid IR after a pass: " +
                normalize(line), line.strip() +
                " (gone with --verify-each=false: the verifier rejects what "
                "a pass produced)")

    def minimize(self, kind, text, extra, key, stage):
        """Delete chunks of lines (halving the chunk) while the finding with
        this key persists, within --minimize-time seconds."""
        deadline = time.time() + self.args.minimize_time
        only = None if stage in ("import", "parse") else stage

        def still(t):
            return any(f[1] == key for f in self.check(kind, t, extra, only))

        lines = text.split("\n")
        # drop comment-only and blank lines first, in one go
        cand = [l for l in lines
                if l.strip() and not l.strip().startswith("//")]
        if cand != lines and still("\n".join(cand)):
            lines = cand
        chunk = max(1, len(lines) // 2)
        while chunk >= 1 and time.time() < deadline:
            i, changed = 0, False
            while i < len(lines) and time.time() < deadline:
                trial = lines[:i] + lines[i + chunk:]
                if trial and still("\n".join(trial)):
                    lines = trial
                    changed = True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        return "\n".join(lines) + "\n"

    def record(self, seed, text, kind, key, msg, res):
        if self.findings.has(key):
            return
        stage = res["stage"]
        small = text
        if not self.args.no_minimize and kind != "timeout":
            small = self.minimize(seed["kind"], text, seed.get("extra", []),
                                  key, stage)
        elif kind == "timeout":
            small = text
        # re-run the minimised input to get its own output
        rr = None
        for f in self.check(seed["kind"], small, seed.get("extra", []),
                            None if stage in ("import", "parse") else stage):
            if f[1] == key:
                rr = f[3]
                msg = f[2]
        if rr is None:
            small, rr = text, res
        cmd = repro_command(seed["kind"], stage, seed.get("extra", []), rr)
        nid = self.findings.add(
            {"kind": kind, "key": key, "message": msg, "seed": seed["name"],
             "stage": stage, "extra": seed.get("extra", [])}, small, "." + seed["kind"], rr, cmd)
        print("[%s] NEW %s %s: %s (%s)" % (time.strftime("%H:%M:%S"), nid,
                                           kind, msg[:150], seed["name"]),
              flush=True)

    def loop(self):
        seeds = collect_seeds(self.work, self.args.timeout)
        if self.args.only_kind:
            seeds = [s for s in seeds if s["kind"] == self.args.only_kind]
        print("%d seeds (%d .co, %d .mlir); passes: %s" % (
            len(seeds), sum(s["kind"] == "co" for s in seeds),
            sum(s["kind"] == "mlir" for s in seeds),
            " ".join(mlir_passes())), flush=True)
        start = time.time()
        it = 0
        while it < self.args.iterations:
            if self.args.time and time.time() - start > self.args.time:
                break
            it += 1
            seed = self.rng.choice(seeds)
            text = mutate(seed, self.rng)
            if text == seed["text"]:
                text = mutate(seed, self.rng)
            self.stats["mutants"] += 1
            for kind, key, msg, res in self.check(seed["kind"], text,
                                                  seed.get("extra", [])):
                self.record(seed, text, kind, key, msg, res)
            if it % 100 == 0:
                print("[%s] iter %d runs %d accepted %d findings %d" % (
                    time.strftime("%H:%M:%S"), it, self.stats["runs"],
                    self.stats["accepted"], len(self.findings.index)),
                    flush=True)
        print("done: %d mutants (%d accepted), %d runs, %d findings in %s,"
              " %.0fs" % (self.stats["mutants"], self.stats["accepted"],
                          self.stats["runs"],
            len(self.findings.index), self.args.out, time.time() - start))


def recheck(args):
    """Re-run every reproducer of OUT/index.json: refresh its key, message and
    .txt, and drop entries that no longer reproduce or duplicate an earlier
    key."""
    fz = Fuzzer(args)
    fd = fz.findings
    seen, keep = {}, []
    for e in sorted(fd.index, key=lambda e: e["id"]):
        kind = "co" if e["file"].endswith(".co") else "mlir"
        extra = e.get("extra", [])
        text = open(e["file"]).read()
        stage = e["stage"]
        only = None if stage in ("import", "parse") else stage
        hit = None
        for f in fz.check(kind, text, extra, only):
            if f[3]["stage"] == stage or hit is None:
                hit = f
        if hit is None:
            print("%s: no longer reproduces, dropped" % e["id"])
        elif hit[1] in seen:
            print("%s: duplicate of %s, dropped" % (e["id"], seen[hit[1]]))
        else:
            seen[hit[1]] = e["id"]
            e.update({"kind": hit[0], "key": hit[1], "message": hit[2]})
            fd.write_txt(e, hit[3])
            keep.append(e)
            continue
        for ext in (".co", ".mlir", ".txt"):
            path = os.path.join(fd.out, e["id"] + ext)
            if os.path.exists(path):
                os.remove(path)
    fd.index = keep
    fd.save()
    print("%d findings" % len(keep))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--time", type=float, default=0,
                    help="stop after this many seconds (0: no limit)")
    ap.add_argument("--timeout", type=float, default=20,
                    help="seconds per tool run")
    ap.add_argument("--out", default="/tmp/fuzz-findings")
    ap.add_argument("--minimize-time", type=float, default=60)
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--no-host", action="store_true",
                    help="skip croq-translate --croq-to-host")
    ap.add_argument("--only-kind", choices=["co", "mlir"])
    ap.add_argument("--recheck", action="store_true",
                    help="re-run the reproducers of --out and re-key them")
    args = ap.parse_args()
    for b in (OPT, TRANSLATE):
        if not os.access(b, os.X_OK):
            sys.exit("missing " + b)
    if args.recheck:
        recheck(args)
    else:
        Fuzzer(args).loop()


if __name__ == "__main__":
    main()
