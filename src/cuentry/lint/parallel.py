"""Supervised worker processes: where the lint engine parses files (libclang never runs in the caller).

`Workers` keeps N processes (`-j N`; one with `-j 1`, so one file is isolated as well as many). Each
worker runs with a limit on its address space (`RLIMIT_AS`), and each task (one file) with a limit on
the CPU time it may use (`Limits.seconds`: a loaded machine slows a file down, it does not make it
fail) and, for a task that waits without computing, a longer one of wall-clock time (`Limits.wall`). A
worker that dies on a task (a signal: libclang's SIGSEGV on a 20,000-term expression), overruns its time
(a hang) or its memory (a blow-up) costs that task only: the caller gets a `Failed` for it, with the
reason, and a fresh worker takes the tasks that follow. A `UsageError` in a worker comes back as
`Raised`, for the caller to raise as it would have in one process.

A worker never outlives its caller: a thread of the worker watches its parent process and ends the
worker (its scratch directory removed) within `WATCH_SECONDS` of the parent's end, however the parent
ended (SIGKILL included, as a CI timeout sends). Each worker also carries its own limit of CPU time
(`RLIMIT_CPU`, a little above the task's), so a worker whose caller cannot stop it stops itself; it
writes no core file (`RLIMIT_CORE` 0).

This module knows nothing of linting: the caller gives the function a worker runs (a module-level
function, so a spawned worker can import it) and the state every task shares (sent once per worker).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = ["BACKLOG", "DEPTH", "MAX_JOBS", "POLL_SECONDS", "WATCH_SECONDS", "Failed", "Limits", "Raised", "Workers",
           "cpu_seconds"]


MAX_JOBS = 64
"""The most worker processes ``-j`` starts."""
DEPTH = 2
"""Tasks queued to one worker at a time (the next one waits in its pipe while it works)."""
BACKLOG = 8
"""Tasks that must be waiting before one more worker is started (a worker's start -- libclang, the
preamble of cuda.h -- costs about as much as two files: a few files are parsed by the workers already up)."""


WATCH_SECONDS = 0.25
"""How often a worker checks that its parent is alive (it ends within this of the parent's end)."""
POLL_SECONDS = 0.25
"""How often the caller checks its workers' CPU time while it waits for their results."""


@dataclass(frozen=True)
class Limits:
    """Per task: seconds of CPU time (`seconds`) and of wall-clock time (`wall`: a task that waits without
    computing; default: three times `seconds`, at least `seconds` + 60); per worker: bytes of address space."""

    seconds: float = 120.0
    memory: int = 8 << 30
    wall: float | None = None

    @property
    def wall_seconds(self) -> float:
        return self.wall if self.wall is not None else max(3 * self.seconds, self.seconds + 60)


@dataclass(frozen=True)
class Failed:
    """A task whose worker crashed, hung or ran out of memory (or raised something unexpected): why."""

    reason: str


@dataclass(frozen=True)
class Raised:
    """A `UsageError` raised by a task (bad input the whole run shares): raised again by the caller."""

    message: str
    hint: str = ""


def _limit_memory(limit: int) -> None:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        if soft == resource.RLIM_INFINITY or want < soft:
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def _no_core() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    except (ImportError, ValueError, OSError):
        pass


def _limit_cpu(seconds: float) -> None:
    """The worker's own backstop for the task it starts: its soft `RLIMIT_CPU` a little above what it has
    used plus the task's limit (SIGXCPU then ends it, even when nothing else can)."""
    try:
        import math
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        want = math.ceil(used.ru_utime + used.ru_stime + seconds * 1.1 + 2)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def _watch_parent(parent: int, scratch: str) -> None:
    """End this worker (its scratch directory removed) as soon as its parent is gone: re-parented, its
    parent id is no longer `parent`."""
    import shutil

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)

    threading.Thread(target=watch, name="cuentry-lint-parent-watch", daemon=True).start()


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system, every thread) process `pid` has used; None where it cannot be read
    (no /proc, the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read(4096)
        fields = raw[raw.rindex(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in getattr(os, "sysconf_names", {}) \
    else 100


def _quiet() -> None:
    """The worker's stderr to /dev/null: libclang writes its crash reports there ("LLVM ERROR: out of
    memory"); the caller reports the file's problem in one line instead."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


def _serve(conn: Connection, target: Callable[[Any, Any], Any], shared: Any, limits: Limits, scratch: str,
           parent: int) -> None:
    """A worker's life: tasks in, results out, until the pipe closes or its parent (`parent`) ends. Its
    temporary files go under `scratch`, which the caller removes however the worker ends (a killed worker
    runs no clean-up)."""
    import tempfile

    from ..errors import UsageError

    _watch_parent(parent, scratch)
    tempfile.tempdir = scratch
    memory = limits.memory
    _limit_memory(memory)
    _no_core()
    _quiet()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        _limit_cpu(limits.seconds)
        fatal = False
        try:
            res: Any = target(shared, task)
        except UsageError as exc:
            res = Raised(exc.message, exc.hint)
        except MemoryError:
            res, fatal = Failed(f"it needs more than the {memory >> 20} MiB the linter allows a file"), True
        except RecursionError:
            res = Failed("it nests deeper than the linter follows")
        except Exception as exc:   # a defect: the file is reported, the run goes on
            res = Failed(f"the linter failed on it ({type(exc).__name__}: {exc}); please report this")
        try:
            conn.send(res)
        except Exception as exc:
            conn.send(Failed(f"its result could not be returned ({type(exc).__name__})"))
        if fatal:
            return


@dataclass
class _Slot:
    proc: Any = None
    conn: Connection | None = None
    scratch: str = ""
    queued: deque[tuple[int, Any]] = field(default_factory=deque)
    since: float = 0.0           # when the task at the head of `queued` started (wall clock)
    cpu: float | None = None     # the worker's CPU time then (None: not measurable here)


class Workers:
    """N supervised worker processes running `target(shared, task)` for each task."""

    def __init__(self, jobs: int, target: Callable[[Any, Any], Any], shared: Any, limits: Limits | None = None) -> None:
        self.jobs = max(1, min(jobs, MAX_JOBS))
        self.target, self.shared, self.limits = target, shared, limits or Limits()
        self.slots = [_Slot() for _ in range(self.jobs)]
        self.ctx = _context()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for s in self.slots:
            self._stop(s, kill=False)

    def _start(self, s: _Slot) -> None:
        import tempfile

        parent, child = self.ctx.Pipe()
        s.scratch = tempfile.mkdtemp(prefix="cuentry-lint-worker-")
        s.proc = self.ctx.Process(target=_serve, args=(child, self.target, self.shared, self.limits, s.scratch,
                                                       os.getpid()), daemon=True, name="cuentry-lint-worker")
        s.proc.start()
        child.close()
        s.conn = parent

    def _stop(self, s: _Slot, *, kill: bool) -> str:
        """Stop a worker; how it ended (a signal's name, an exit status)."""
        how = ""
        if s.proc is not None:
            if kill:
                s.proc.kill()
            else:
                try:
                    s.conn.send(None) if s.conn is not None else None
                except OSError:
                    pass
            s.proc.join(2.0)
            if s.proc.is_alive():
                s.proc.kill()
                s.proc.join(2.0)
            code = s.proc.exitcode
            if code is not None and code < 0:
                try:
                    how = signal.Signals(-code).name
                except ValueError:
                    how = f"signal {-code}"
            elif code:
                how = f"exit status {code}"
        if s.conn is not None:
            s.conn.close()
        if s.scratch:
            import shutil

            shutil.rmtree(s.scratch, ignore_errors=True)
        s.proc, s.conn, s.scratch = None, None, ""
        return how

    def run(self, tasks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        """(index, result) for each task, in the order they finish; a `Failed` for a task that cost its worker."""
        pending: deque[tuple[int, Any]] = deque(enumerate(tasks))
        while True:
            self._feed(pending)
            busy = [s for s in self.slots if s.queued]
            if not busy:
                return
            left = min(s.since + self.limits.wall_seconds for s in busy) - time.monotonic()
            ready = wait([s.conn for s in busy if s.conn is not None], timeout=min(max(0.0, left), POLL_SECONDS))
            for s in busy:
                if s.conn in ready:
                    yield from self._receive(s, pending)
                    continue
                why = self._overrun(s)
                if why:
                    i, _ = s.queued.popleft()
                    self._stop(s, kill=True)
                    pending.extendleft(reversed(s.queued))
                    s.queued.clear()
                    yield i, Failed(why)

    def _overrun(self, s: _Slot) -> str:
        """Why the task at the head of `s` is stopped now ("" when it may go on): past its CPU time, or
        past its wall-clock time (where CPU time cannot be measured, past its CPU time in wall-clock time)."""
        lim = self.limits
        now = time.monotonic()
        cpu = cpu_seconds(s.proc.pid) if s.proc is not None and s.cpu is not None else None
        if cpu is not None and s.cpu is not None and cpu - s.cpu > lim.seconds:
            return _cpu_reason(lim.seconds)
        if cpu is None and now - s.since > lim.seconds:
            return _cpu_reason(lim.seconds) + " (measured in wall-clock time here)"
        if now - s.since > lim.wall_seconds:
            used = f"{cpu - s.cpu:.1f} s of CPU time" if cpu is not None and s.cpu is not None else "its CPU time"
            return (f"it took more than {lim.wall_seconds:g} s without finishing, within {used} (blocked on "
                    "something it reads, or a machine too loaded to run it?)")
        return ""

    def _started(self, s: _Slot) -> None:
        """The task at the head of `s` starts now."""
        s.since = time.monotonic()
        s.cpu = cpu_seconds(s.proc.pid) if s.proc is not None else None

    def _feed(self, pending: deque[tuple[int, Any]]) -> None:
        for s in self.slots:
            if s.proc is None and len(pending) < BACKLOG and any(x.proc is not None for x in self.slots):
                continue
            while pending and len(s.queued) < DEPTH:
                if s.proc is None:
                    self._start(s)
                i, task = pending.popleft()
                try:
                    assert s.conn is not None
                    s.conn.send(task)
                except OSError:
                    pending.appendleft((i, task))
                    break
                if not s.queued:
                    self._started(s)
                s.queued.append((i, task))

    def _receive(self, s: _Slot, pending: deque[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        try:
            assert s.conn is not None
            res = s.conn.recv()
        except (EOFError, OSError):
            i, _ = s.queued.popleft()
            how = self._stop(s, kill=True)
            pending.extendleft(reversed(s.queued))
            s.queued.clear()
            if how == "SIGXCPU":   # the worker's own backstop (RLIMIT_CPU)
                yield i, Failed(_cpu_reason(self.limits.seconds))
                return
            yield i, Failed(f"the linter's worker process died on it ({how or 'killed'}): a crash in the parser, "
                            "or more memory than it is allowed")
            return
        i, _ = s.queued.popleft()
        self._started(s)
        if isinstance(res, Failed) and s.proc is not None and not _alive(s.proc):
            self._stop(s, kill=True)
            pending.extendleft(reversed(s.queued))
            s.queued.clear()
        yield i, res


def _cpu_reason(seconds: float) -> str:
    return f"it took more than {seconds:g} s of CPU time (a hang?): raise the limit with --timeout to lint it"


def _alive(proc: Any) -> bool:
    proc.join(0.05)
    return bool(proc.is_alive())


def _context() -> Any:
    """Fork when this process has one thread (fast, nothing to re-import), else spawn (a fork of a
    threaded process can inherit a held lock)."""
    if os.name == "posix" and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
