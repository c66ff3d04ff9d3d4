"""The pure backend: the contract converts, ctypes calls (libffi), the guard brackets the call."""

from __future__ import annotations

import ctypes

from . import contract as k
from . import ffi

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..errors import CudaError


def argtype(s: k.ParamSpec, structs: Callable[[str], Any]) -> Any:
    """The ctypes type a parameter is passed as (pointers and handles as void *)."""
    if s.kind == k.STRUCT:
        return structs(s.tag)  # type: ignore[arg-type]
    return ffi.SCALARS[s.ctype]


def make(c: k.Contract, address: int, guard: ffi.Guard, err: Callable[[int], CudaError],
         structs: Callable[[str], Any]) -> tuple[Callable[..., int], Callable[..., None]]:
    """(call, checked) for one ABI at ``address``."""
    cfn = ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs])
    convert = c.convert
    calls = guard.calls
    symbol = c.abi.symbol
    fasts = [k.fast_converter(s) for s in c.specs]
    shortcut = tuple(fasts) if all(f is not None for f in fasts) else None
    n = len(c.specs)
    no = k.NOT_FAST

    def call(*args: Any, **kw: Any) -> int:
        keep: list[Any] = []
        cargs: list[Any] | None = None
        if shortcut is not None and not kw and len(args) == n:
            cargs = [f(v) for f, v in zip(shortcut, args, strict=True)]  # type: ignore[misc]
            if no in cargs:
                cargs = None
        if cargs is None:
            cargs = convert(args, kw, keep)
        calls.append(None)
        try:
            if guard.closed:
                raise guard.closed_error(symbol)
            return int(cfn(*cargs))
        finally:
            calls.pop()

    def checked(*args: Any, **kw: Any) -> None:
        rc = call(*args, **kw)
        if rc:
            raise err(rc)

    return call, checked
