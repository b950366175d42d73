# SPDX-License-Identifier: MIT
"""Whole-process timing shared by the benches: each command run once to warm
the page cache (and checked to succeed), then all of them in turn, RUNS
times, so that the machine's drift falls on each alike."""
import statistics
import subprocess
import time


def medians(commands, env, runs):
    """{name: median seconds} of the commands ({name: argv})."""
    times = {name: [] for name in commands}
    for cmd in commands.values():
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    for _ in range(runs):
        for name, cmd in commands.items():
            t = time.perf_counter()
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}
