"""The integration kernels as croq IR, for the test tools that run every
one of them: test/Integration/kernels/*.mlir as they are, and
test/Integration/croqtile/*.co through the importer."""
import pathlib
import subprocess


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True)


def kernels(bin_dir, src):
    """Yields (path, ir, error) for each kernel; ir is None when the import
    failed, with its stderr in error."""
    translate = str(pathlib.Path(bin_dir) / "croq-translate")
    src = pathlib.Path(src)
    for path in sorted((src / "test/Integration/kernels").glob("*.mlir")):
        yield path, path.read_text(), ""
    for path in sorted((src / "test/Integration/croqtile").glob("*.co")):
        imported = run([translate, "--import-croqtile", str(path)])
        if imported.returncode:
            yield path, None, imported.stderr
        else:
            yield path, imported.stdout, ""
