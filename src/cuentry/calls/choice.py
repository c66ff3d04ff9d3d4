"""Which call backend this process uses: decided once, here, for every module of the call layer.

`$CUENTRY_BACKEND` is read once, when this module is imported: unset, empty or
`auto` uses the compiled extension when it is installed; `pure` never loads
it; `compiled` requires it (binding then raises ImportError where it is
missing, for test runs that must cover it); anything else is a UsageError at the
first bind. The choice serves both [Out][cuentry.calls.values.Out]'s base class
and every [bind][cuentry.calls.bind], so the two always agree. The extension is
imported here too, at import, never at a first call under a lock (a fork during
that import would leave the child a module lock that no thread owns).

This module imports nothing else of the call layer: the layer's modules import
it, and each other only downhill (no cycle inside `calls/`).
"""

from __future__ import annotations

import os

from ..errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BACKEND_ENV", "MODES", "backend", "backend_mode", "extension", "extension_if_wanted", "extension_module",
           "select", "token"]

BACKEND_ENV = "CUENTRY_BACKEND"
MODES = ("auto", "pure", "compiled")


class _Choice:
    """The process's decision: the mode (or why there is none), the extension and why it is missing."""

    __slots__ = ("raw", "mode", "error", "ext", "why")

    def __init__(self, raw: str | None) -> None:
        self.raw = raw
        mode = "auto" if raw is None else (raw.strip().lower() or "auto")
        self.error: UsageError | None = None
        if mode not in MODES:
            self.error = UsageError(f"{BACKEND_ENV}={raw!r} is not a backend",
                                    hint=f"set it to one of {', '.join(MODES)} (or unset it)")
        self.mode = mode
        self.ext: Any = None
        self.why = ""
        if mode != "pure" and self.error is None:
            self.ext, self.why = _import_extension()


_FOUND: list[tuple[Any, str]] = []  # the extension, imported at most once per process


def _import_extension() -> tuple[Any, str]:
    if not _FOUND:
        try:
            from . import _fastcall  # type: ignore[attr-defined]

            _FOUND.append((_fastcall, ""))
        except ImportError as exc:
            # Python words a missing submodule of a package being imported as a "circular import"; say what it is.
            missing = isinstance(exc, ModuleNotFoundError) or "partially initialized" in str(exc)
            _FOUND.append((None, "cuentry.calls._fastcall is not in this installation" if missing else str(exc)))
    return _FOUND[0]


_CHOICE = _Choice(os.environ.get(BACKEND_ENV))


def select(raw: str | None) -> str | None:
    """Decide again as if `$CUENTRY_BACKEND` were `raw` (None: unset); returns the previous raw value.

    For test suites that cover both backends in one process; a program sets the
    environment variable before it starts instead. Functions bound earlier keep
    their backend; `Out`'s base class stays what it was at import.
    """
    global _CHOICE
    prev = _CHOICE.raw
    _CHOICE = _Choice(raw)
    return prev


def token() -> object:
    """An object that stays the same until the choice is made again (`select`).

    What a cache of bound functions is valid for: a function bound under one choice keeps its backend.
    """
    return _CHOICE


def backend_mode() -> str:
    """The mode chosen: auto, pure or compiled; a UsageError when `$CUENTRY_BACKEND` named none of them."""
    if _CHOICE.error is not None:
        raise _CHOICE.error
    return _CHOICE.mode


def extension_module() -> Any:
    """The compiled extension when the choice allows it and it is installed, else None; never raises."""
    return _CHOICE.ext


def extension_if_wanted() -> Any:
    """The extension unless the pure backend is asked for (or it is missing); never raises."""
    return _CHOICE.ext


def extension() -> Any:
    """The extension for the chosen mode: None for pure; ImportError if compiled is required and missing."""
    c = _CHOICE
    if c.error is not None:
        raise c.error
    if c.ext is None and c.mode == "compiled":
        raise ImportError(f"{BACKEND_ENV}=compiled but the compiled extension cuentry.calls._fastcall is not "
                          f"installed: {c.why or 'unknown'}")
    return c.ext


def backend() -> dict[str, str]:
    """Which call backend is active, and why."""
    c = _CHOICE
    try:
        ext = extension()
    except (ImportError, UsageError) as exc:
        return {"name": "missing" if isinstance(exc, ImportError) else "invalid", "detail": str(exc)}
    if ext is not None:
        return {"name": "compiled", "detail": "C vectorcall callers built at install (cuentry.calls._fastcall): "
                                              "no libffi and no Python frame per call"}
    if c.mode == "pure":
        return {"name": "pure", "detail": f"ctypes (libffi) calls (forced by {BACKEND_ENV}=pure)"}
    recorded = _why_pure()
    if recorded:
        return {"name": "pure", "detail": f"ctypes (libffi) calls: the compiled extension is not installed: {recorded}"}
    return {"name": "pure", "detail": "ctypes (libffi) calls: the compiled extension is not installed "
                                      f"(no C compiler or Python headers at install time?){' - ' + c.why if c.why else ''}"}


def _why_pure() -> str:
    """Why the wheel was built without the extension, as its build recorded it ("" when it did not)."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "_why_pure.txt"), encoding="utf-8") as fh:
            return " ".join(fh.read(600).split())
    except (OSError, ValueError):
        return ""
