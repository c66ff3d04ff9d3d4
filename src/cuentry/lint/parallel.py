"""`cuentry lint -j N`: the first pass over the files in worker processes.

Each worker reads a file, decides whether it can hold a request (the same pre-filter as
the engine) and lints it; the engine then consumes the results in its own file order,
so the report is the same as with one process. Files linted again with wrappers from
other files (the later passes) stay in the calling process: they need every file's
wrappers. A worker that fails on a file returns nothing for it, and the engine lints
that file itself (so an error surfaces exactly as it would with `-j 1`); workers that cannot
be started (a spawn from an interactive session) leave every file to the engine.
"""

from __future__ import annotations

import multiprocessing
import pickle
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_JOBS", "PY_ALWAYS", "PY_SUFFIXES", "Checked", "first_pass"]


MAX_JOBS = 64
"""The most worker processes ``-j`` starts."""
PY_SUFFIXES = (".py", ".pyi")
PY_ALWAYS = 4 << 20


@dataclass(frozen=True)
class Checked:
    """A Python file with nothing to lint, checked to be valid Python: why it is not ('' when it is)."""

    problem: str


def _one(job: tuple[str, Sequence[str] | None, Sequence[str] | None, Sequence[str], int, Any]) -> tuple[str, Any]:
    from ..catalog import catalog
    from .engine import _Relevance, lint_text, read_source

    path, select, ignore, include_dirs, max_bytes, settings = job
    try:
        text = read_source(path, max_bytes)
        if not _Relevance(include_dirs)(text, path):
            if path.endswith(PY_SUFFIXES) and len(text) < PY_ALWAYS:
                from .python import syntax_problem

                return path, Checked(syntax_problem(text, path))   # only checked to be valid Python
            return path, None
        return path, lint_text(text, path, select=select, ignore=ignore, include_dirs=include_dirs,
                               cat=catalog(), settings=settings)
    except Exception:   # the engine lints this file itself and reports what happens exactly as with -j 1
        return path, None


def first_pass(files: Sequence[str], jobs: int, select: Sequence[str] | None, ignore: Sequence[str] | None,
               include_dirs: Sequence[str], max_bytes: int, settings: Any = None) -> dict[str, Any]:
    """Findings and facts of each file that the pre-filter lets through, linted in `jobs` processes."""
    jobs = max(1, min(jobs, MAX_JOBS, len(files)))
    if jobs < 2:
        return {}
    work = [(f, select, ignore, tuple(include_dirs), max_bytes, settings) for f in files]
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
            got = pool.map(_one, work, chunksize=max(1, min(16, len(files) // (jobs * 4) or 1)))
            return {path: res for path, res in got if res is not None}
    except (BrokenProcessPool, OSError, RuntimeError, pickle.PicklingError):
        return {}      # workers could not be started or died: the engine lints every file itself


def _context() -> multiprocessing.context.BaseContext:
    """Fork when this process has one thread (fast, nothing to re-import), else spawn (a fork of a
    threaded process can inherit a held lock)."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
