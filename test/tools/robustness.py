"""Shared by the robustness checks: runs a tool on one input and judges the
outcome. A tool may accept the input or reject it with a located
diagnostic (exit code 1 and an error naming file:line:col); a hang, a crash
or any other failure is a problem."""
import subprocess


def judge(cmd, timeout, located):
    """Returns None when `cmd` hung past `timeout` seconds, else (problem,
    error output): problem is "" when the outcome is acceptable, otherwise
    "BAD EXIT <code>"."""
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0 or (proc.returncode == 1 and located.search(err)):
        return "", err
    return f"BAD EXIT {proc.returncode}", err
