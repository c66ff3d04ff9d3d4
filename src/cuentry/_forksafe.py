"""Locks that a forked child can use even when another thread held them at fork time.

`fork()` copies a lock in whatever state it is in, but only the forking
thread survives: a lock another thread held (a table resolving, the default
driver loading, the catalog loading) would stay held forever in the child, and
the child's first use of it would deadlock. Every lock cuentry takes is made
here; after a fork the child replaces each one with a fresh, unlocked lock
(`os.register_at_fork`). The state the lock guarded is whatever the parent's
thread left; each user of these locks keeps that state valid at every point
(publish a finished object with one assignment, reset flags first), so the
child simply redoes the unfinished work.

Other cuentry modules that need a lock: `from ._forksafe import Lock, RLock`.
"""

from __future__ import annotations

import _thread
import os
from _weakrefset import WeakSet  # what weakref.WeakSet is; importing weakref and threading costs a cold start ms

TYPE_CHECKING = False  # typing is not imported at run time: `import cuentry` stays cheap
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

__all__ = ["Lock", "RLock", "reinit_after_fork"]


class _ForkSafe:
    """A lock (or re-entrant lock) that a forked child gets back unlocked."""

    __slots__ = ("_lock", "_reentrant", "__weakref__")

    def __init__(self, reentrant: bool) -> None:
        self._reentrant = reentrant
        self._lock: Any = _thread.RLock() if reentrant else _thread.allocate_lock()
        _ALL.add(self)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return bool(self._lock.acquire(blocking, timeout))

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return bool(self._lock.acquire())

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self._lock.release()

    def _reinit(self) -> None:
        self._lock = _thread.RLock() if self._reentrant else _thread.allocate_lock()


_ALL: WeakSet[_ForkSafe] = WeakSet()


def Lock() -> _ForkSafe:  # named like threading.Lock, which it replaces
    """A non-reentrant lock that is fresh again in a forked child."""
    return _ForkSafe(False)


def RLock() -> _ForkSafe:
    """A re-entrant lock that is fresh again in a forked child."""
    return _ForkSafe(True)


def reinit_after_fork() -> None:
    """Replace every cuentry lock with a fresh one (run in the child; idempotent there)."""
    for lk in list(_ALL):
        lk._reinit()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=reinit_after_fork)
