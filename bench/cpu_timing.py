"""Shared by the CPU benchmarks: the median wall time of a command."""
import statistics
import subprocess
import time


def median_seconds(cmd, runs, **run_args):
    """Runs `cmd` `runs` times (subprocess.run with check=True and
    `run_args`) and returns the median wall time in seconds."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, **run_args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
