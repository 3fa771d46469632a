"""Runs the GPU integration tests (test_kernels.py), each in its own process
under a watchdog, and ends with `N passed, M failed`.

  suite.py LIB [--jobs N] [--timeout S] [--only SUBSTRING] [--sanitize]

A test whose process does not finish in S seconds is killed and reported as
`FAIL <test>: hang (no completion in S s)`; the suite goes on. With
--sanitize every test runs at its small shapes (CROQ_SMALL=1) under
compute-sanitizer memcheck, racecheck and synccheck, and any report fails it.
Tests named in EXCLUSIVE time themselves and run alone, after the others."""
import argparse
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "test_kernels.py")
EXCLUSIVE = {"parallel_async_streams_overlap"}
TOOLS = ("memcheck", "racecheck", "synccheck")


def list_tests(lib):
    out = subprocess.run([sys.executable, TESTS, lib, "--list"], check=True,
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line]


def run_one(lib, name, timeout, tool=None):
    """Returns (label, ok, log)."""
    label = name if tool is None else f"{name}[{tool}]"
    cmd = [sys.executable, TESTS, lib, "--one", name]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if tool is not None:
        env["CROQ_SMALL"] = "1"
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "97",
               # PyTorch's own kernels are not under test.
               "--kernel-name-exclude", "kns=at6native"] + cmd
        if tool == "racecheck":
            cmd[1:1] = ["--racecheck-report", "all"]
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        return label, False, (log or "") + \
            f"\nFAIL {label}: hang (no completion in {timeout} s)\n"
    took = time.time() - start
    ok = proc.returncode == 0 and f"PASS {name}" in log
    if tool is not None:
        # Every tool prints its summary; any hazard, leak or error fails.
        summary = ("0 hazards displayed (0 errors, 0 warnings)"
                   if tool == "racecheck" else "ERROR SUMMARY: 0 errors")
        ok = ok and summary in log
    verdict = f"PASS {label} ({took:.1f} s)" if ok else \
        f"FAIL {label}: exit {proc.returncode} ({took:.1f} s)"
    return label, ok, log + "\n" + verdict + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=0)
    ap.add_argument("--only", default="")
    ap.add_argument("--sanitize", action="store_true")
    args = ap.parse_args()
    timeout = args.timeout or (600 if args.sanitize else 120)
    # --only: comma-separated substrings of test names; one that names no
    # test is an error, not an empty pass.
    names = list_tests(args.lib)
    if args.only:
        wanted = [w for w in args.only.split(",") if w]
        unmatched = [w for w in wanted if not any(w in n for n in names)]
        if unmatched:
            print(f"error: --only {', '.join(unmatched)} names no test")
            return 1
        names = [n for n in names if any(w in n for w in wanted)]
    runs = [(n, t) for n in names
            for t in (TOOLS if args.sanitize else (None,))]
    shared = [r for r in runs if r[0] not in EXCLUSIVE or args.sanitize]
    alone = [r for r in runs if r not in shared]
    results = []

    def report(result):
        label, ok, log = result
        results.append((label, ok))
        # A failure shows its whole log; a pass only its verdict.
        print(log.rstrip().splitlines()[-1] if ok else log.rstrip(), flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(lambda r: run_one(args.lib, r[0], timeout, r[1]),
                               shared):
            report(result)
    for name, tool in alone:
        report(run_one(args.lib, name, timeout, tool))
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    for label, ok in results:
        if not ok:
            print(f"failed: {label}")
    mode = "sanitizer (memcheck, racecheck, synccheck)" if args.sanitize \
        else "sweep"
    print(f"{mode}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
