#!/usr/bin/env python3
"""Splits `croq-translate --croq-to-ptx` output into its kernel modules and
assembles each with ptxas. Prints one line per module and exits non-zero if
ptxas rejects any.  usage: ptxas-each.py PTXAS ARCH FILE"""
import re
import subprocess
import sys
import tempfile

ptxas, arch, path = sys.argv[1:4]
text = open(path).read()
parts = re.split(r"^// kernel module @(\S+)\n", text, flags=re.M)
status = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, body in zip(parts[1::2], parts[2::2]):
        src = f"{tmp}/{name}.ptx"
        open(src, "w").write(body)
        proc = subprocess.run([ptxas, f"-arch={arch}", src, "-o", f"{tmp}/{name}.cubin"],
                              capture_output=True, text=True)
        print(f"ptxas {name}: {'ok' if proc.returncode == 0 else 'FAILED'}")
        if proc.returncode:
            print(proc.stderr)
            status = 1
sys.exit(status)
