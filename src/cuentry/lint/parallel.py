"""Supervised worker processes: where the lint engine parses files (libclang never runs in the caller).

`Workers` keeps N processes (`-j N`; one with `-j 1`, so one file is isolated as well as many). Each
worker runs with a limit on its address space (`RLIMIT_AS`), and each task (one file) with a limit on
its time. A worker that dies on a task (a signal: libclang's SIGSEGV on a 20,000-term expression),
overruns its time (a hang) or its memory (a blow-up) costs that task only: the caller gets a `Failed`
for it, with the reason, and a fresh worker takes the tasks that follow. A `UsageError` in a worker
comes back as `Raised`, for the caller to raise as it would have in one process.

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

__all__ = ["BACKLOG", "DEPTH", "MAX_JOBS", "Failed", "Limits", "Raised", "Workers"]


MAX_JOBS = 64
"""The most worker processes ``-j`` starts."""
DEPTH = 2
"""Tasks queued to one worker at a time (the next one waits in its pipe while it works)."""
BACKLOG = 8
"""Tasks that must be waiting before one more worker is started (a worker's start -- libclang, the
preamble of cuda.h -- costs about as much as two files: a few files are parsed by the workers already up)."""


@dataclass(frozen=True)
class Limits:
    """Per task: seconds of wall time; per worker: bytes of address space."""

    seconds: float = 120.0
    memory: int = 8 << 30


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


def _quiet() -> None:
    """The worker's stderr to /dev/null: libclang writes its crash reports there ("LLVM ERROR: out of
    memory"); the caller reports the file's problem in one line instead."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


def _serve(conn: Connection, target: Callable[[Any, Any], Any], shared: Any, memory: int, scratch: str) -> None:
    """A worker's life: tasks in, results out, until the pipe closes. Its temporary files go under
    `scratch`, which the caller removes however the worker ends (a killed worker runs no clean-up)."""
    import tempfile

    from ..errors import UsageError

    tempfile.tempdir = scratch
    _limit_memory(memory)
    _quiet()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
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
    since: float = 0.0


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
        s.proc = self.ctx.Process(target=_serve, args=(child, self.target, self.shared, self.limits.memory,
                                                       s.scratch), daemon=True, name="cuentry-lint-worker")
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
            now = time.monotonic()
            left = min(s.since + self.limits.seconds for s in busy) - now
            ready = wait([s.conn for s in busy if s.conn is not None], timeout=max(0.0, left))
            for s in busy:
                if s.conn in ready:
                    yield from self._receive(s, pending)
                elif time.monotonic() - s.since > self.limits.seconds:
                    i, _ = s.queued.popleft()
                    self._stop(s, kill=True)
                    pending.extendleft(reversed(s.queued))
                    s.queued.clear()
                    yield i, Failed(f"it took more than {self.limits.seconds:g} s (a hang?)")

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
                    s.since = time.monotonic()
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
            yield i, Failed(f"the linter's worker process died on it ({how or 'killed'}): a crash in the parser, "
                            "or more memory than it is allowed")
            return
        i, _ = s.queued.popleft()
        s.since = time.monotonic()
        if isinstance(res, Failed) and s.proc is not None and not _alive(s.proc):
            self._stop(s, kill=True)
            pending.extendleft(reversed(s.queued))
            s.queued.clear()
        yield i, res


def _alive(proc: Any) -> bool:
    proc.join(0.05)
    return bool(proc.is_alive())


def _context() -> Any:
    """Fork when this process has one thread (fast, nothing to re-import), else spawn (a fork of a
    threaded process can inherit a held lock)."""
    if os.name == "posix" and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
