"""Every kernel the GPU suite calls (`K.name` in test_kernels.py) has its
argument kinds in croqlib.SIGNATURES and is built by the bundle: a
`__co__` function of test/Integration/croqtile, a `GPU-VARIANT` name there,
or a function of test/Integration/kernels. Without a GPU, a kernel missing
from either list would only show as a KeyError on the GPU machine.
    usage: check-gpu-signatures.py SOURCE_DIR"""
import ast
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1])
gpu = src / "test/Integration/gpu"
tree = ast.parse((gpu / "croqlib.py").read_text())
signatures = set()
for node in ast.walk(tree):
    if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "SIGNATURES" for t in node.targets):
        signatures = {k.value for k in node.value.keys}
called = set(re.findall(r"\bK\.(\w+)", (gpu / "test_kernels.py").read_text()))
# Kernels passed by name (the `both(...)` decorator).
for pair in re.findall(r'@both\("(\w+)", "(\w+)"\)', (gpu / "test_kernels.py").read_text()):
    called |= set(pair)
built = set()
for path in (src / "test/Integration/croqtile").glob("*.co"):
    text = path.read_text()
    # A file's kernel is often named by a define (`__co__ void GEMM(...)`
    # with GEMM defaulting to the file's name).
    built.add(path.stem)
    built |= set(re.findall(r"__co__\s+(?:void|auto|[\w:<>]+)\s+(\w+)\s*\(", text))
    built |= set(re.findall(r"^// GPU-VARIANT: (\w+)", text, re.M))
    built |= set(re.findall(r"^#define \w+ (\w+_co|\w+_co_\w+)\s*$", text, re.M))
for path in (src / "test/Integration/kernels").glob("*.mlir"):
    built |= set(re.findall(r"func\.func @(\w+)", path.read_text()))
missing = sorted(called - signatures)
unbuilt = sorted(n for n in called if n not in built)
for name in missing:
    print(f"no signature in croqlib.py: {name}")
for name in unbuilt:
    print(f"not built by the bundle: {name}")
print(f"{len(called)} kernels called, {len(missing)} without a signature, "
      f"{len(unbuilt)} not built")
sys.exit(1 if missing or unbuilt else 0)
