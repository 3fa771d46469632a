"""Prepares the croq-against-choreo benchmark of issue 14 (run on the GPU
machine by bench/choreo_bench.py).

    python3 bench/choreo_prepare.py TUNER OUT [--per-set N] [--croqc PATH]
                                    [--croqc-flag=OPTION ...]

TUNER is a checkout of codes1gn/croqtile-tuner. Its f16 GEMM tuning runs
(f16 in, f32 out, B stored [N, K]; `tuning/sm90_NVIDIA_H800_PCIe/croqtile/
srcs/matmul_f*16fp32_MxNxK/MODEL/iterNNN_*.co`, 13 runs at 13 problem
shapes) each kept a sequence of kernels tuned for upstream's compiler; this
takes the N best kept ones of each run (by the TFLOP/s its results.tsv
records; default 2). Beside each `.co` is the CUDA that choreo generated
(`.cu`, often edited by hand after generation); the run's `cmd/` folder
has its build script (`build_iterNNN.sh`: the nvcc flags it was tuned
with, --use_fast_math, -maxrregcount) and, for most, choreo's own script
(`iterNNN_*.cute.result`), which embeds choreo's runtime headers and the
CUDA exactly as choreo generated it. This writes into OUT:

- choreo_rt/: the runtime headers, from the .cute.result scripts (all must
  embed the same ones);
- choreo/NAME.cu and choreo-gen/NAME.cu: the stored and the generated CUDA,
  each wrapped for timing: `main` removed, the launch repeated `iters`
  times between two CUDA events when asked, and a C entry point
  `croq_choreo_matmul(a, b, c, M, N, K, iters, &ms)` that calls choreo's
  host function on device pointers;
- croq/NAME.cpp: croq's host code (cubin inside) of the same .co, from
  croqc with the knobs for its tuned flags (--fast-math, --maxnreg=N),
  its entry point renamed croq_NAME;
- manifest.json: each kernel's run, shape, flags and files;
- build.sh: builds each .cu into a shared library with its tuned flags
  (at most 6 nvcc jobs at once) and croq's into one.
NAME is RUN__MODEL__iterNNN_idea.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = "tuning/sm90_NVIDIA_H800_PCIe/croqtile"
HEREDOC = re.compile(r"^cat <<'(\w+)' > (\S+)\n(.*?)^\1\n", re.M | re.S)
LAUNCH = re.compile(r"^([ \t]*)(__choreo_device_\w+\s*<<<[^;]*>>>\([^;]*\);)[ \t]*\n"
                    r"([ \t]*choreo::abend_true\(cudaDeviceSynchronize\(\)\);)", re.M)

ENTRY = r'''
// Added by croq's bench/choreo_prepare.py: a C entry point over device
// pointers, and the launch timed alone when `iters` > 0.
extern "C" int croq_choreo_matmul(void *a, void *b, void *c, long long M,
                                  long long N, long long K, int iters,
                                  float *ms) {
  static bool ready = false;
  if (!ready) {
    cudaEventCreate(&croq_bench_begin);
    cudaEventCreate(&croq_bench_end);
    ready = true;
  }
  croq_bench_iters = iters;
  auto lhs = choreo::make_spanview<choreo::f16, 2>((choreo::f16 *)a, {(size_t)M, (size_t)K});
  auto rhs = choreo::make_spanview<choreo::f16, 2>((choreo::f16 *)b, {(size_t)N, (size_t)K});
  auto out = choreo::make_spanview<choreo::f32, 2>((choreo::f32 *)c, {(size_t)M, (size_t)N});
  matmul(lhs, rhs, out);
  croq_bench_iters = 0;
  if (iters > 0 && ms) {
    cudaEventElapsedTime(ms, croq_bench_begin, croq_bench_end);
    *ms /= iters;
  }
  return (int)cudaGetLastError();
}
'''


def heredocs(path):
    with open(path) as f:
        text = f.read()
    return {os.path.basename(target): body for _, target, body in HEREDOC.findall(text)}


def nvcc_flags(script):
    """The tuning flags of a build_iterNNN.sh nvcc line."""
    with open(script) as f:
        text = f.read().replace("\\\n", " ")
    line = next((l for l in text.splitlines() if "nvcc" in l), "")
    flags = []
    tokens = line.split()
    for i, tok in enumerate(tokens):
        if tok == "--use_fast_math":
            flags.append(tok)
        elif tok.lstrip("-").startswith("maxrregcount"):
            count = tok.split("=", 1)[1] if "=" in tok else tokens[i + 1]
            flags.append(f"-maxrregcount={count}")
    return flags


def croqc_flags(flags):
    """croqc's options for a kernel's nvcc tuning flags: --fast-math for
    --use_fast_math, --maxnreg=N for -maxrregcount=N."""
    out = []
    for flag in flags:
        if flag == "--use_fast_math":
            out.append("--fast-math")
        elif flag.startswith("-maxrregcount="):
            out.append("--maxnreg=" + flag.split("=", 1)[1])
    return out


def wrap(cu, where, function):
    """`cu` ready for timing, or raises ValueError; `function` is the
    host function choreo generated for the `__co__` one."""
    cut = cu.find("\nint main(")
    if cut < 0:
        raise ValueError(f"{where}: no main to remove")
    body = cu[:cut] + "\n"
    launches = LAUNCH.findall(body)
    if len(launches) != 1:
        raise ValueError(f"{where}: expected one launch followed by a "
                         f"synchronization, found {len(launches)}")
    body = LAUNCH.sub(
        lambda m: f"{m.group(1)}if (croq_bench_iters > 0) {{\n"
                  f"{m.group(1)}  cudaEventRecord(croq_bench_begin);\n"
                  f"{m.group(1)}  for (int croq_i = 0; croq_i < croq_bench_iters; ++croq_i)\n"
                  f"{m.group(1)}    {m.group(2)}\n"
                  f"{m.group(1)}  cudaEventRecord(croq_bench_end);\n"
                  f"{m.group(1)}}} else {{\n"
                  f"{m.group(1)}  {m.group(2)}\n"
                  f"{m.group(1)}}}\n{m.group(3)}", body)
    # The bench's globals go before choreo's host function.
    at = body.find(f"\nvoid {function}(")
    if at < 0:
        raise ValueError(f"{where}: no host function {function}")
    globals_ = ("\nstatic int croq_bench_iters = 0;\n"
                "static cudaEvent_t croq_bench_begin, croq_bench_end;\n")
    return body[:at] + globals_ + body[at:] + ENTRY.replace("  matmul(lhs, rhs, out);",
                                                            f"  {function}(lhs, rhs, out);")


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path, "w") as f:
        f.write(text)


def best_kept(results, count):
    """The `count` kept kernels of a results.tsv with the most TFLOP/s."""
    kept = []
    with open(results) as f:
        for line in f.read().splitlines()[1:]:
            cols = line.split("\t")
            if len(cols) < 4 or cols[0] == "iter000" or cols[3] != "KEEP":
                continue
            try:
                kept.append((float(cols[2]), cols[1]))
            except ValueError:
                continue
    return [(name, tflops) for tflops, name in sorted(kept, reverse=True)[:count]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tuner")
    ap.add_argument("out")
    ap.add_argument("--per-set", type=int, default=2)
    ap.add_argument("--croqc", default=os.path.join(os.path.dirname(__file__), "..",
                                                    "build", "bin", "croqc"))
    ap.add_argument("--croqc-flag", action="append", default=[],
                    help="an extra croqc option for every croq build (a "
                         "tuning A/B, e.g. --croqc-flag=--mma-defer-min-slots=3)")
    args = ap.parse_args()
    root = os.path.join(args.tuner, ROOT)
    out = args.out
    # lib/ (what build.sh built) stays: build.sh skips a library newer than
    # its source, and sources are rewritten only when they change.
    for d in ("choreo_rt", "choreo", "choreo-gen", "croq"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    headers = {}
    kernels = []
    for results in sorted(glob.glob(os.path.join(root, "logs", "matmul_f*16fp32_*", "*",
                                                 "results.tsv"))):
        model_dir = os.path.dirname(results)
        model = os.path.basename(model_dir)
        run_name = os.path.basename(os.path.dirname(model_dir))
        shape = tuple(int(x) for x in run_name.rsplit("_", 1)[1].split("x"))
        srcs = os.path.join(root, "srcs", run_name, model)
        cmds = os.path.join(root, "cmd", run_name, model)
        for kernel, tflops in best_kept(results, args.per_set):
            co = os.path.join(srcs, kernel + ".co")
            if not os.path.exists(co):
                continue
            functions = re.findall(r"__co__\s+void\s+(\w+)\s*\(", open(co).read())
            if len(functions) != 1:
                print(f"  {kernel}: skipped, {len(functions)} __co__ functions")
                continue
            function = functions[0]
            name = f"{run_name}__{model}__{kernel}".replace("-", "_").replace(".", "_")
            number = kernel[len("iter"):len("iter") + 3]
            entry = {"name": name, "run": f"{run_name}/{model}", "kernel": kernel,
                     "shape": shape, "tuned_tflops": tflops, "flags": [], "notes": []}
            script = os.path.join(cmds, f"build_iter{number}.sh")
            if os.path.exists(script):
                entry["flags"] = nvcc_flags(script)
            result = os.path.join(cmds, kernel + ".cute.result")
            generated = None
            if os.path.exists(result):
                for file, text in heredocs(result).items():
                    if file.endswith(".h"):
                        digest = hashlib.sha256(text.encode()).hexdigest()
                        if headers.setdefault(file, digest) != digest:
                            sys.exit(f"{result}: embeds another {file} than earlier scripts")
                        with open(os.path.join(out, "choreo_rt", file), "w") as f:
                            f.write(text)
                    elif file.endswith(".cu"):
                        generated = text
            stored = os.path.join(srcs, kernel + ".cu")
            stored_text = open(stored).read() if os.path.exists(stored) else None
            for kind, text in (("choreo", stored_text), ("choreo-gen", generated)):
                if text is None:
                    continue
                try:
                    write_if_changed(os.path.join(out, kind, name + ".cu"),
                                     wrap(text, f"{kind} {name}", function))
                    entry[kind] = True
                except ValueError as e:
                    entry["notes"].append(str(e))
            if generated is not None and stored_text is not None:
                entry["stored_is_generated"] = stored_text == generated
            # croq's build of the .co, as a user would compile it, with
            # croqc's knobs for the kernel's tuned nvcc flags.
            cpp = os.path.join(out, "croq", name + ".cpp")
            run = subprocess.run([args.croqc, co, "--emit=host", "-o", cpp,
                                  *croqc_flags(entry["flags"]), *args.croqc_flag],
                                 capture_output=True, text=True)
            if run.returncode == 0:
                # One library holds every croq build: each entry point renamed.
                with open(cpp) as f:
                    text = f.read()
                text = re.sub(r"\bcroq_module_(\w+)", rf"croq_module_{name}_\1", text)
                text = re.sub(r"\bcroq_image_(\w+)", rf"croq_image_{name}_\1", text)
                if f'extern "C" int {function}(' in text:
                    text = text.replace(f'extern "C" int {function}(', f'extern "C" int croq_{name}(')
                    entry["croq"] = True
                    with open(cpp, "w") as f:
                        f.write(text)
                else:
                    entry["notes"].append(f"croq: no entry point named {function}")
                    os.remove(cpp)
            else:
                first = next((l for l in run.stderr.splitlines() if "error" in l),
                             run.stderr[:200])
                entry["notes"].append(f"croq: {first.strip()}")
            kernels.append(entry)
    if not headers:
        sys.exit("no .cute.result script embedded choreo's headers")
    shutil.copy(os.path.join(os.path.dirname(__file__), "..", "runtime", "lib",
                             "croq_runtime.cpp"), os.path.join(out, "croq"))
    shutil.copy(os.path.join(os.path.dirname(__file__), "..", "runtime", "include",
                             "croq_runtime.h"), os.path.join(out, "croq"))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"headers": headers, "kernels": kernels}, f, indent=1)
    # CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED: the tuner passes it for N
    # tiles such as 160 and 200 (EXTRA_TARGET_CFLAGS); it only adds shapes.
    base = ("-O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 "
            "-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1 -D__CHOREO_TARGET_CUTE__ "
            "-DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED "
            "-D__USE_CUDA_TYPE__ -D__CHOREO_DMA_DIAGNOSIS__ --expt-relaxed-constexpr "
            "-shared -Xcompiler -fPIC")
    lines = ["#!/usr/bin/env bash",
             "# Generated by bench/choreo_prepare.py: builds the wrapped choreo CUDA",
             "# (each with its tuned flags) and croq's host code into libraries.",
             "#   usage: build.sh CUTLASS_INCLUDE [JOBS]",
             "set -uo pipefail",
             'here="$(cd "$(dirname "$0")" && pwd)"',
             'cutlass="$1"; jobs="${2:-6}"',
             'mkdir -p "$here/lib"',
             "build() {",
             '  local kind="$1" name="$2"; shift 2',
             '  [ "$here/lib/$kind-$name.so" -nt "$here/$kind/$name.cu" ] && return',
             f'  nvcc {base} "$@" -I"$here/choreo_rt" -I"$cutlass" '
             '"$here/$kind/$name.cu" -lcuda -o "$here/lib/$kind-$name.so" '
             '> "$here/lib/$kind-$name.log" 2>&1 && echo "built $kind $name" || echo "FAILED $kind $name"',
             "}"]
    for k in kernels:
        for kind in ("choreo", "choreo-gen"):
            if k.get(kind):
                lines.append(f'build {kind} {k["name"]} {" ".join(k["flags"])} &')
                lines.append('while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do sleep 1; done')
    lines.append("wait")
    lines.append('nvcc -O2 -std=c++17 -shared -Xcompiler -fPIC -I"$here/croq" "$here"/croq/*.cpp '
                 '-lcuda -o "$here/lib/croq.so" && echo "built croq"')
    with open(os.path.join(out, "build.sh"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(os.path.join(out, "build.sh"), 0o755)
    have = lambda kind: sum(1 for k in kernels if k.get(kind))
    print(f"{len(kernels)} kernels: {have('choreo')} stored .cu, {have('choreo-gen')} generated "
          f".cu, {have('croq')} compiled by croq")
    for k in kernels:
        for n in k["notes"]:
            print(f"  {k['name']}: {n}")


if __name__ == "__main__":
    main()
