"""cuentry lint on input that crashes, hangs or blows up libclang: it costs that file, never the run.

Every case runs the linter in a subprocess with a timeout (a regression would crash, hang or fill
the memory of the test process otherwise), on a directory holding the bad file and a good one: the
good file's finding must be in the report, the bad file must be a problem or judged without libclang
reading what it must not.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")
pytest.importorskip("clang.cindex")

from cuentry.lint import clang  # noqa: E402

if not clang.available():   # pragma: no cover - the wheel is installed with the test extra
    pytest.skip("libclang cannot be loaded", allow_module_level=True)

GOOD = ('#include <cuda.h>\nint good(void) { void* p; CUdriverProcAddressQueryResult q;\n'
        '  if (cuGetProcAddress("cuMemAlloc", &p, 1000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;\n'
        '  return 0; }\n')   # a pin below the symbol's first version: CE009, judged by clang
REQUEST = 'int bad(void) { void* p; return cuGetProcAddress("cuMemAlloc", &p, 3020, 0, 0); }\n'
RUN = """
import json, sys, threading
from cuentry.lint import lint_paths
from cuentry.lint.engine import Settings
a = json.loads(sys.argv[1])
if a["threaded"]:   # a second thread: the workers are spawned, not forked
    done = threading.Event()
    threading.Thread(target=done.wait, daemon=True).start()
rep = lint_paths(a["paths"], jobs=a["jobs"], settings=Settings(engine="clang", timeout=a["timeout"], memory=a["memory"],
                 commands=a["commands"]))
print(json.dumps(rep.to_dict()))
"""


def _lint(paths: list[Path], *, jobs: int = 1, timeout: float = 60.0, memory: int = 3 << 30,
          commands: dict[str, list[str]] | None = None, limit: float = 120.0, threaded: bool = False) -> dict[str, object]:
    arg = json.dumps({"paths": [str(p) for p in paths], "jobs": jobs, "timeout": timeout, "memory": memory,
                      "commands": commands or {}, "threaded": threaded})
    got = subprocess.run([sys.executable, "-c", RUN, arg], capture_output=True, text=True, timeout=limit,
                         check=False)
    assert got.returncode == 0, got.stderr[-2000:]
    doc: dict[str, object] = json.loads(got.stdout)
    return doc


def _good_kept(doc: dict[str, object]) -> None:
    found = [(Path(f["path"]).name, f["code"], f["engine"]) for f in doc["findings"]]  # type: ignore[attr-defined, index]
    assert ("good.c", "CE009", "clang") in found, found


def _note(doc: dict[str, object], name: str) -> str:
    got = [j for j in doc["judged"] if Path(j["path"]).name == name]  # type: ignore[attr-defined, index]
    assert got, (doc["judged"], doc["problems"])
    return str(got[0]["note"])


def _problem(doc: dict[str, object], name: str) -> str:
    got = [p["message"] for p in doc["problems"] if Path(p["path"]).name == name]  # type: ignore[attr-defined, index]
    assert got, doc["problems"]
    return str(got[0])


@pytest.mark.parametrize(("jobs", "threaded"), [(1, False), (2, False), (2, True)])
def test_a_crash_of_libclang_costs_that_file_only(tmp_path: Path, jobs: int, threaded: bool) -> None:
    """A valid file with a 20,000-term expression: libclang dies of SIGSEGV on it (forked or spawned workers)."""
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "deep.c").write_text("#include <cuda.h>\n" + REQUEST + "int sum(void) { return "
                                     + " + ".join(["1"] * 20000) + "; }\n")
    doc = _lint([tmp_path], jobs=jobs, threaded=threaded)
    _good_kept(doc)
    assert "worker process died on it" in _problem(doc, "deep.c")


@pytest.mark.parametrize("target", ["/dev/zero", "link"])
def test_an_include_of_a_device_is_refused_before_libclang_opens_it(tmp_path: Path, target: str) -> None:
    if target == "link":
        os.symlink("/dev/zero", tmp_path / "zero.h")
        target = "zero.h"
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "zero.c").write_text(f'#include "{target}"\n' + REQUEST)
    doc = _lint([tmp_path], memory=64 << 40, limit=60)   # no memory limit: only the refusal keeps it small
    _good_kept(doc)
    note = _note(doc, "zero.c")   # the include is left out, said; the file's requests are judged
    assert "which is a device" in note and "left out" in note
    assert [f["code"] for f in doc["findings"] if Path(f["path"]).name == "zero.c"]  # type: ignore[attr-defined, index]


def test_an_include_of_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.h")
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "hdr.h").write_text('#include "../pipe.h"\n')   # reached through a header, not the file itself
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "fifo.c").write_text('#include <hdr.h>\n' + REQUEST)
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.h").st_mode)
    doc = _lint([tmp_path / "good.c", tmp_path / "fifo.c"], commands={
        str(tmp_path / "fifo.c"): ["cc", f"-I{inc}", "-c", "fifo.c"]}, timeout=600, limit=60)
    _good_kept(doc)
    assert "which is a FIFO" in _note(doc, "fifo.c")
    assert [f["code"] for f in doc["findings"] if Path(f["path"]).name == "fifo.c"]  # type: ignore[attr-defined, index]


@pytest.mark.parametrize("kind", ["device", "FIFO"])
def test_a_forced_include_of_a_device_in_a_compile_database_is_refused(tmp_path: Path, kind: str) -> None:
    """The library's path (no CLI check before it): a `-include` of /dev/zero or a FIFO is left out of every
    parse, the precompiled header's included (it read 4 GB of /dev/zero, or blocked on the FIFO, before)."""
    target = "/dev/zero"
    if kind == "FIFO":
        os.mkfifo(tmp_path / "pipe.h")
        target = str(tmp_path / "pipe.h")
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "forced.c").write_text("#include <cuda.h>\n" + REQUEST)
    doc = _lint([tmp_path / "good.c", tmp_path / "forced.c"],
                commands={str(tmp_path / "forced.c"): ["cc", "-include", target, "-c", "forced.c"]},
                memory=2 << 30, timeout=30, limit=120)
    _good_kept(doc)
    assert f"the -include of its flags includes {target}, which is a {kind}" in _note(doc, "forced.c")
    assert [f["code"] for f in doc["findings"] if Path(f["path"]).name == "forced.c"]  # type: ignore[attr-defined, index]


def test_a_debug_pragma_in_the_file_is_blanked(tmp_path: Path) -> None:
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "ovf.c").write_text("#include <cuda.h>\n#pragma clang __debug overflow_stack\n" + REQUEST)
    doc = _lint([tmp_path], timeout=600, limit=60)
    _good_kept(doc)
    assert [j["engine"] for j in doc["judged"] if Path(j["path"]).name == "ovf.c"] == ["clang"]  # type: ignore[attr-defined, index]


@pytest.mark.parametrize("where", ["header", "continuation", "macro", "header-continuation"])
def test_a_debug_pragma_is_refused_wherever_it_comes_from(tmp_path: Path, where: str) -> None:
    """`#pragma clang __debug overflow_stack` (libclang spins on it, then dies) in a header, split by a line
    continuation, or made by a macro's `_Pragma`: clang refuses it (`NO_DEBUG_PRAGMAS`); the file is judged."""
    pragma = {"header": "#pragma clang __debug overflow_stack\n",
              "continuation": "#pragma clang \\\n  __debug \\\n overflow_stack\n",
              "macro": '#define S(x) #x\n#define P(x) _Pragma(S(x))\n#define D __de##bug\nP(clang D overflow_stack)\n',
              "header-continuation": "#pragma \\\nclang __debug \\\ncrash\n"}[where]
    (tmp_path / "hang.h").write_text(pragma)
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "hang.c").write_text('#include <cuda.h>\n#include "hang.h"\n' + REQUEST)
    doc = _lint([tmp_path], timeout=20, limit=90)
    _good_kept(doc)
    assert not doc["problems"], doc["problems"]  # type: ignore[index]
    assert [f["code"] for f in doc["findings"] if Path(f["path"]).name == "hang.c"]  # type: ignore[attr-defined, index]


def test_a_blow_up_the_scan_cannot_see_stops_at_the_memory_limit(tmp_path: Path) -> None:
    """An include named by a macro is not resolved by the scan: the worker's memory limit stops it."""
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "macro.c").write_text('#define ZERO "/dev/zero"\n#include ZERO\n' + REQUEST)
    doc = _lint([tmp_path], memory=2 << 30, timeout=60, limit=100)
    _good_kept(doc)
    names = {Path(p["path"]).name for p in doc["problems"]}  # type: ignore[attr-defined, index]
    assert "macro.c" in names


WORKERS = """
import json, os, signal, sys, time
from cuentry.errors import UsageError
from cuentry.lint.parallel import Failed, Limits, Raised, Workers

def target(shared, task):
    import tempfile
    tempfile.mkdtemp(prefix="left-by-")   # in the worker's scratch directory, removed by the caller
    if task == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if task == "hang":      # a loop: its CPU time runs out
        while True:
            pass
    if task == "block":     # waits without computing: its wall-clock time runs out
        time.sleep(3600)
    if task == "hog":
        return len(bytearray(4 << 30))
    if task == "usage":
        raise UsageError("bad flag", hint="drop it")
    if task == "bug":
        raise KeyError(task)
    return shared + task

tasks = ["a", "segv", "b", "hang", "c", "hog", "d", "usage", "bug", "e"]
with Workers(int(sys.argv[1]), target, "ok-", Limits(seconds=3, memory=1 << 30, wall=300)) as w:
    got = dict(w.run(tasks))
with Workers(1, target, "ok-", Limits(seconds=3, memory=1 << 30, wall=4)) as w:   # the wall-clock backstop
    got[len(tasks)] = dict(w.run(["block"]))[0]
tasks.append("block")
out = {}
for i, t in enumerate(tasks):
    r = got[i]
    out[t] = r if isinstance(r, str) else [type(r).__name__, getattr(r, "reason", getattr(r, "message", ""))]
print(json.dumps(out))
"""


@pytest.mark.parametrize("jobs", [1, 3])
def test_workers_survive_a_crash_a_hang_a_hog_and_errors(jobs: int, tmp_path: Path) -> None:
    """The supervised pool on its own: every task gets an answer, the good ones their result, and no worker
    (killed or not) leaves a temporary file behind."""
    got = subprocess.run([sys.executable, "-c", WORKERS, str(jobs)], capture_output=True, text=True, timeout=120,
                         check=False, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert list(tmp_path.iterdir()) == []
    assert got.returncode == 0, got.stderr[-2000:]
    out = json.loads(got.stdout)
    assert [out[t] for t in "abcde"] == ["ok-a", "ok-b", "ok-c", "ok-d", "ok-e"]
    assert out["segv"][0] == "Failed" and "SIGSEGV" in out["segv"][1]
    assert out["hang"][0] == "Failed" and out["hang"][1].startswith("it took more than 3 s of CPU time (a hang?)")
    assert out["block"][0] == "Failed" and re.search(r"more than 4 s without finishing, within 0\.\d s of CPU time",
                                                     out["block"][1])
    assert out["hog"][0] == "Failed" and "1024 MiB" in out["hog"][1]
    assert out["usage"] == ["Raised", "bad flag"]
    assert out["bug"][0] == "Failed" and "KeyError" in out["bug"][1]


LIMITS = """
import json, os, sys, time
from cuentry.lint.parallel import Limits, Workers

def target(shared, task):
    if task == "sleep":     # 4 s of waiting, next to no CPU time: within a 2 s limit of CPU time
        time.sleep(4)
        return "slept"
    with open(shared, "w") as fh:
        fh.write(str(os.getpid()))
    while True:             # "spin": writes the worker's pid, then computes for ever
        pass

with Workers(1, target, sys.argv[1], Limits(seconds=float(sys.argv[3]), memory=1 << 30, wall=60)) as w:
    got = dict(w.run([sys.argv[2]]))
print(json.dumps([type(got[0]).__name__, getattr(got[0], "reason", got[0])]))
"""


def _gone(pid: int, within: float) -> bool:
    """Whether process `pid` has ended (or is a zombie) within `within` seconds (checked at least once)."""
    import time

    end = time.monotonic() + within
    while True:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True      # a zombie: ended, waiting for its reaper
        except OSError:
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)


def _end(pid: int) -> None:
    """Kill a worker this test left running (a failure of the test), once."""
    import signal

    if not _gone(pid, 0):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _worker_pid(pidfile: Path) -> int:
    import time

    end = time.monotonic() + 60
    while time.monotonic() < end:
        if pidfile.exists() and pidfile.read_text():
            return int(pidfile.read_text())
        time.sleep(0.05)
    raise AssertionError("the worker never started its task")


def test_the_limit_is_cpu_time_not_wall_time(tmp_path: Path) -> None:
    """A task that waits 4 s but computes little is within a 2 s limit of CPU time (a loaded machine slows a
    file down; it does not make it fail)."""
    got = subprocess.run([sys.executable, "-c", LIMITS, str(tmp_path / "pid"), "sleep", "2"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert got.returncode == 0, got.stderr[-2000:]
    assert json.loads(got.stdout) == ["str", "slept"]


def test_a_worker_never_outlives_its_parent(tmp_path: Path) -> None:
    """The caller is killed (SIGKILL, as a CI timeout does) while its worker computes: the worker ends too,
    and leaves no scratch directory."""

    pidfile = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", LIMITS, str(pidfile), "spin", "600"],
                              env={**os.environ, "TMPDIR": str(tmp_path)})
    worker = _worker_pid(pidfile)
    try:
        parent.kill()
        parent.wait(30)
        assert _gone(worker, 10), "the worker outlived its parent"
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("cuentry-lint-worker-")]
    finally:
        _end(worker)


def test_a_worker_stops_itself_at_its_own_cpu_limit(tmp_path: Path) -> None:
    """The caller is stopped (SIGSTOP: it cannot stop its worker), the worker computes: its own RLIMIT_CPU ends
    it; the caller, continued, reports the file with the CPU-time reason."""
    import signal

    pidfile = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", LIMITS, str(pidfile), "spin", "1"], stdout=subprocess.PIPE,
                              text=True)
    worker = _worker_pid(pidfile)
    try:
        parent.send_signal(signal.SIGSTOP)
        assert _gone(worker, 90), "the worker ran past its own limit of CPU time"
    finally:
        parent.send_signal(signal.SIGCONT)
        _end(worker)
    out, _ = parent.communicate(timeout=60)
    kind, reason = json.loads(out)
    assert kind == "Failed" and reason.startswith("it took more than 1 s of CPU time"), reason
