"""The compiled backend: callers of the `cuentry.calls._fastcall` extension.

Which backend a process uses is decided once, in `cuentry.calls.choice` (`$CUENTRY_BACKEND`,
read at import); the names of that choice, and the GIL policy of `cuentry.calls.gil`, are
re-exported here for callers of this module.

A compiled caller converts in C what the contract accepts in its common forms
(exact ints in range, None, cuentry's Out objects of the right element type,
bytes for const inputs) and hands anything else, keyword arguments included, to
`Contract.convert`, then makes the call itself with the converted values:
one conversion contract, two speeds.
"""

from __future__ import annotations

from .choice import BACKEND_ENV, MODES, backend, backend_mode, extension, extension_if_wanted
from .gil import GIL_GROUPS, GIL_RELEASING_GETTERS, holds_gil
from .shapes import SLOTS, shape_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..errors import CudaError
    from .contract import Contract
    from .ffi import Guard

__all__ = ["BACKEND_ENV", "GIL_GROUPS", "GIL_RELEASING_GETTERS", "MODES", "backend", "backend_mode", "extension",
           "extension_if_wanted", "holds_gil", "make", "shape_index"]


_SHAPE_INDEX: dict[str, int] = {}
_BY_TYPES: dict[tuple[str, ...], tuple[int, str] | None] = {}


def shape_index(ext: Any, ctypes_: tuple[str, ...]) -> tuple[int, str] | None:
    """(the extension's case number, slot letters) for a shape, or None when it has none."""
    if ctypes_ in _BY_TYPES:
        return _BY_TYPES[ctypes_]
    if not _SHAPE_INDEX:
        _SHAPE_INDEX.update({c: i for i, c in enumerate(ext.SHAPES.split(","))})
    code = shape_code(ctypes_)
    idx = _SHAPE_INDEX.get(code) if code else None
    got = _BY_TYPES[ctypes_] = (idx, "".join(SLOTS[t] for t in ctypes_)) if idx is not None else None
    return got


def make(ext: Any, c: Contract, address: int, guard: Guard,
         err: Callable[[int], CudaError]) -> tuple[Any, Any] | None:
    """(call, checked) compiled callers, or None when the extension has no case for this shape."""
    shape = shape_index(ext, c.ctypes)
    if shape is None:
        return None
    idx, slots = shape
    nogil = int(not holds_gil(c.abi.symbol, c.abi.group or ""))
    symbol = c.abi.symbol

    def on_closed() -> None:
        raise guard.closed_error(symbol)

    _hook_fork(ext)
    from .devmem import synchroniser

    sync = synchroniser(guard) if c.devptrs else None
    made = []
    # Device objects read in C too (the valid common forms; the rest and every refusal stay the contract's):
    # the stream parameter, what NULL means for it, and the ranges the call's counts name.
    device: tuple[Any, ...] = ()
    if c.devptrs and hasattr(ext, "DEVICE_FAST"):
        device = (-1 if c.stream_index is None else c.stream_index, c.null_stream, c.ranges)
    for check in (0, 1):
        caller = ext.Caller(address, idx, slots, c.checks, c.elems, guard.state, on_closed, check, err, nogil,
                            *device)
        caller._slow(_slow(c.convert, sync))
        made.append(caller)
    return made[0], made[1]


_FORK_HOOKED: list[bool] = []


def _hook_fork(ext: Any) -> None:
    """In a forked child, the extension recounts the calls the forking thread still has in flight (a fork
    from a callback inside a call). Registered after the guards' own reset (ffi's, at its import), so it
    runs after it."""
    import os

    if not _FORK_HOOKED and hasattr(os, "register_at_fork"):
        _FORK_HOOKED.append(True)
        os.register_at_fork(after_in_child=ext._after_fork_child)


def _slow(convert: Callable[..., list[Any]],
          sync: Callable[[int], int] | None) -> Callable[..., tuple[list[Any], list[Any]]]:
    """The Python side of a compiled caller: the contract converts (or raises); the caller then calls with the
    converted values while it holds the keep-alives (buffer exports, encoded strings, DLPack capsules)."""

    def slow(*args: Any, **kw: Any) -> tuple[list[Any], list[Any]]:
        keep: list[Any] = []
        return convert(args, kw, keep, sync), keep

    return slow
