"""Shared helpers: timing by best-of-repeats, and running with this checkout's src on the path."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = SRC + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    return e


def wall(cmd: list[str], runs: int) -> float:
    """Median wall time of a command, seconds."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env(), stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def per_call(fn: Callable[[], object], inner: int = 100_000, repeats: int = 7) -> float:
    """Best-of-repeats ns per call of a no-argument thunk that loops itself ``inner`` times."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter_ns()
        fn()
        best = min(best, (time.perf_counter_ns() - t) / inner)
    return best


def add_src() -> None:
    if SRC not in sys.path:
        sys.path.insert(0, SRC)


def race(thunks: dict[str, Callable[[], object]], inner: int, rounds: int = 9) -> dict[str, float]:
    """Best ns per call of each thunk, measured in interleaved rounds so drift hits all alike."""
    best = {k: float("inf") for k in thunks}
    for _ in range(rounds):
        for k, fn in thunks.items():
            t = time.perf_counter_ns()
            fn()
            best[k] = min(best[k], (time.perf_counter_ns() - t) / inner)
    return best


def portable(path: object) -> str:
    """A path as a result file records it: under the home directory written with `~` (no machine's user in it)."""
    home = os.path.expanduser("~")
    p = str(path)
    return "~" + p[len(home):] if home not in ("", "/") and (p == home or p.startswith(home + os.sep)) else p


def race_cpu(thunks: dict[str, Callable[[], object]], inner: int, rounds: int = 9) -> dict[str, float]:
    """Best CPU ns (this thread's) per call of each thunk, in interleaved rounds: a busy machine does not blur it."""
    best = {k: float("inf") for k in thunks}
    for _ in range(rounds):
        for k, fn in thunks.items():
            t = time.thread_time_ns()
            fn()
            best[k] = min(best[k], (time.thread_time_ns() - t) / inner)
    return best
