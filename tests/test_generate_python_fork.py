"""A fork at any point of another thread's first use of a generated Python module's table (issue 40).

A program imports the generated module (and nothing of cuentry) before it starts threads, as a library does;
a thread makes the first call through the module's table (declaring it, loading the driver, resolving every
entry, binding and calling) and is stopped, by a trace function, at one point of it; the main thread forks
there; the child then makes the same first call itself and must finish (a deadlock ends in SIGALRM). The
points are every module body the first use runs (an import in progress is what deadlocks: Python's lock of a
half-imported module has no living owner in the child) and points spread over the whole of it, as
tests/test_fork_first_load.py does for cuentry's own tables. Both backends; each run is a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuentry import manifest
from cuentry.generate import generate_python

from .test_fork_first_load import _points

DATA = Path(__file__).parent / "generate_data" / "real_ports"

SCRIPT = r"""
import json, os, sys, threading
mode = sys.argv[1]
import ctypes
import momo_table  # what a program has imported before it starts threads: the generated module alone
pkg = os.path.dirname(os.path.dirname(momo_table.__file__))

def first_use():
    t = momo_table.momo
    n = ctypes.c_int()
    assert t.cuInit(0) == 0 and t.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0

def traced(stop_at, paused, go, seen):
    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>" or "cuentry" in code.co_filename or "momo_table" in code.co_filename:
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


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("genfork")
    (d / "momo_table.py").write_text(generate_python(manifest.load(DATA / "momo.toml")))
    return d


def _run(d: Path, driver: str, backend: str, mode: str) -> Any:
    env = {**os.environ, "CUENTRY_BACKEND": backend, "PYTHONFAULTHANDLER": "1", "CUENTRY_DRIVER": driver,
           "PYTHONPATH": os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=env, timeout=600,
                       cwd=d)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_during_a_generated_tables_first_use_never_deadlocks_the_child(
        module_dir: Path, backend: str, fake: dict[str, str], fake_version: Any) -> None:
    if backend == "compiled":
        from cuentry.calls import choice as chosen

        if chosen.extension_module() is None:
            pytest.skip("the compiled extension is not installed")
    seen = _run(module_dir, fake["full"], backend, "count")
    assert len(seen) > 50  # the trace saw the first use (declaring, resolving, binding run many cuentry frames)
    codes = _run(module_dir, fake["full"], backend, ",".join(map(str, _points(seen))))
    failed = {k: v for k, v in codes.items() if v != 0}
    assert not failed, f"children that did not finish (-14: deadlocked, killed by SIGALRM): {failed}"


FIRST_USE_IMPORTS = r"""
import ctypes, sys
import momo_table
before = set(sys.modules)
t = momo_table.momo
n = ctypes.c_int()
assert t.cuInit(0) == 0 and t.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
print(" ".join(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_generated_tables_first_use_imports_nothing(module_dir: Path, backend: str, fake: dict[str, str],
                                                      fake_version: Any) -> None:
    """What makes the first use fork-safe: every module it needs was imported with the generated module."""
    env = {**os.environ, "CUENTRY_BACKEND": backend, "CUENTRY_DRIVER": fake["full"],
           "PYTHONPATH": os.pathsep.join([str(module_dir), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", FIRST_USE_IMPORTS], capture_output=True, text=True, env=env,
                       timeout=120, cwd=module_dir)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == []
