"""A fork at any point of another thread's first catalog load or first table resolution (issue 21).

A thread does cuentry's first catalog load (or its first driver load and table
resolution) and is stopped, by a trace function, at one point of it; the main
thread forks there; the child then does the same work itself and must finish
(a deadlock ends in SIGALRM). The points are every module body the first use
runs (an import in progress is what deadlocked: Python's lock of a half-imported
module has no living owner in the child, so every module a first use needs is
imported before it) and points spread over the whole load.
Each point forks from a fresh template process, so every point is a first load.
Both backends; each run is a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

SCRIPT = r"""
import json, os, sys, threading
stage, driver, mode = sys.argv[1], sys.argv[2], sys.argv[3]
import cuentry, cuentry.catalog, cuentry.driver, cuentry.table  # what a program has imported before it starts threads
pkg = os.path.dirname(cuentry.__file__)

def first_use():
    if stage == "catalog":
        cuentry.catalog.catalog().bind("cuMemAlloc", 3020)
        return
    d = cuentry.Driver.load(driver)
    t = cuentry.Table("t", [cuentry.required("cuCtxGetCurrent", 4000)], stream="legacy", source=d).resolve()
    assert t.cuCtxGetCurrent(cuentry.out("CUcontext")) == 0

def traced(stop_at, paused, go, seen):
    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>" or code.co_filename.startswith(pkg):
            seen.append(event == "call" and code.co_name == "<module>")
            if len(seen) == stop_at:
                paused.set()
                go.wait(20)
        return tracer
    sys.settrace(tracer)
    try:
        first_use()
    finally:
        sys.settrace(None)
        paused.set()

def one(stop_at):
    # in a fresh fork of the template: nothing loaded yet
    paused, go, seen = threading.Event(), threading.Event(), []
    t = threading.Thread(target=traced, args=(stop_at, paused, go, seen))
    t.start()
    paused.wait(20)
    pid = os.fork()
    if pid == 0:
        import signal
        signal.alarm(8)
        try:
            first_use()
        except BaseException as exc:
            print(repr(exc), file=sys.stderr)
            os._exit(3)
        os._exit(0)
    go.set()
    t.join()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), seen

def forked(stop_at):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code, seen = one(stop_at)
        os.write(w, json.dumps([code, seen]).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data)

if mode == "count":
    print(json.dumps(forked(0)[1]))
else:
    print(json.dumps({k: forked(int(k))[0] for k in mode.split(",")}))
"""

BACKENDS = ["pure", "compiled"]


def _run(stage: str, driver: str, backend: str, mode: str) -> Any:
    env = {**os.environ, "CUENTRY_BACKEND": backend, "PYTHONFAULTHANDLER": "1"}
    r = subprocess.run([sys.executable, "-c", SCRIPT, stage, driver, mode], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def _points(seen: list[bool], spread: int = 16) -> list[int]:
    """Every module body the first use runs, and ``spread`` points over the whole of it."""
    n = len(seen)
    modules = [i + 1 for i, is_module in enumerate(seen) if is_module]
    even = [1 + (n - 1) * j // (spread - 1) for j in range(spread)]
    return sorted(set(modules + even))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stage", ["catalog", "table"])
def test_a_fork_during_the_first_load_never_deadlocks_the_child(stage: str, backend: str, fake: dict[str, str],
                                                               fake_version: Any) -> None:
    if backend == "compiled":
        from cuentry.calls import choice as chosen

        if chosen.extension_module() is None:
            pytest.skip("the compiled extension is not installed")
    seen = _run(stage, fake["full"], backend, "count")
    assert len(seen) > 50  # the trace saw the load (a first use runs many cuentry frames)
    points = _points(seen)
    codes = _run(stage, fake["full"], backend, ",".join(map(str, points)))
    failed = {k: v for k, v in codes.items() if v != 0}
    assert not failed, f"children that did not finish (-14: deadlocked, killed by SIGALRM): {failed}"


NO_IMPORTS = r"""
import sys
import cuentry, cuentry.catalog, cuentry.driver, cuentry.table
before = set(sys.modules)
cuentry.catalog.catalog().bind("cuMemAlloc", 3020)
d = cuentry.Driver.load(sys.argv[1])
t = cuentry.Table("t", [cuentry.required("cuCtxGetCurrent", 4000)], stream="legacy", source=d)
assert t.cuCtxGetCurrent(cuentry.out("CUcontext")) == 0  # out() before the table resolved: no type data read
print(" ".join(sorted(set(sys.modules) - before)))  # not json: the script must not import what it looks for
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_first_load_imports_nothing(backend: str, fake: dict[str, str], fake_version: Any) -> None:
    """The design that makes a first use fork-safe: every module it needs was imported with cuentry's modules."""
    env = {**os.environ, "CUENTRY_BACKEND": backend}
    r = subprocess.run([sys.executable, "-c", NO_IMPORTS, fake["full"]], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == []


LEAN_TABLE = r"""
import sys
import cuentry
t = cuentry.Table("app", [cuentry.required("cuCtxGetCurrent", 4000)], stream="legacy",
                  source=cuentry.Driver.load(sys.argv[1]))
assert t.cuCtxGetCurrent(cuentry.out("CUcontext")) == 0
print(" ".join(sorted(sys.modules)))
"""


def _table_path_modules(backend: str, fake: str) -> set[str]:
    env = {**os.environ, "CUENTRY_BACKEND": backend}
    r = subprocess.run([sys.executable, "-c", LEAN_TABLE, fake], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return set(r.stdout.split())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_first_table_reads_no_type_data(backend: str, fake: dict[str, str], fake_version: Any) -> None:
    """A library's cold path (import, a table, out() before it resolved, a call) reads no JSON and imports none
    of what the call layer, the driver and the loader could import lazily (issue 23)."""
    heavy = {"json", "logging", "threading", "difflib", "subprocess", "pathlib", "pycparser", "cffi"}
    got = _table_path_modules(backend, fake["full"])
    assert not got & heavy, sorted(got & heavy)


def test_a_first_table_stays_lean(fake: dict[str, str], fake_version: Any) -> None:
    """The cold-start goal of issue 23 on a library's path: none of the costly standard-library modules."""
    # weakref is not on the list: it is a thin layer over modules every interpreter has loaded (_weakref,
    # _weakrefset), well under a millisecond.
    heavy = {"re", "enum", "dataclasses", "typing", "inspect", "functools", "collections", "json"}
    got = _table_path_modules("auto", fake["full"])
    assert not got & heavy, sorted(got & heavy)
