"""The pure backend: the contract converts, ctypes calls (libffi), the guard brackets the call.

Where every parameter has a shortcut (exact ints in range, None, cuentry Out
objects of the right type: `contract.fast_converter`), a small function
generated per arity tries the shortcuts first, without a loop or a list; any
other argument goes through `Contract.convert`, which converts or raises.
"""

from __future__ import annotations

import ctypes
from _thread import get_ident

from . import contract as k
from . import devmem, ffi

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..errors import CudaError

__all__ = ["argtype", "make"]



def argtype(s: k.ParamSpec, structs: Callable[[str], Any]) -> Any:
    """The ctypes type a parameter is passed as (pointers and handles as void *)."""
    if s.kind == k.STRUCT:
        return structs(s.tag)  # type: ignore[arg-type]
    return ffi.SCALARS[s.ctype]


_FACTORIES: dict[int, Callable[..., Callable[..., int]]] = {}


def _factory(n: int) -> Callable[..., Callable[..., int]]:
    """make(slow, cfn, guard, symbol, no, f0..fn-1) -> call: the shortcut path for one arity (compiled once)."""
    got = _FACTORIES.get(n)
    if got is not None:
        return got
    fs = [f"f{i}" for i in range(n)]
    xs = [f"x{i}" for i in range(n)]
    body = [f"def make(slow, cfn, guard, symbol, no, get_ident{''.join(', ' + f for f in fs)}):",
            "    calls = guard.calls",
            "    def call(*args, **kw):",
            f"        if kw or len(args) != {n}:",
            "            return slow(args, kw)"]
    for i in range(n):
        body += [f"        x{i} = f{i}(args[{i}])", f"        if x{i} is no:", "            return slow(args, kw)"]
    body += ["        me = get_ident()",
             "        calls.append(me)",
             "        try:",
             "            if guard.closed:",
             "                raise guard.closed_error(symbol)",
             f"            return cfn({', '.join(xs)})",
             "        finally:",
             "            calls.remove(me)",
             "    return call"]
    ns: dict[str, Any] = {}
    exec(compile("\n".join(body), f"<cuentry pure call/{n}>", "exec"), ns)  # our own text, one per arity
    got = _FACTORIES.setdefault(n, ns["make"])
    return got


def make(c: k.Contract, address: int, guard: ffi.Guard, err: Callable[[int], CudaError],
         structs: Callable[[str], Any]) -> tuple[Callable[..., int], Callable[..., None]]:
    """(call, checked) for one ABI at `address`.

    A struct passed by value needs its ctypes layout, which comes from the catalog's
    full type data (a 160 kB JSON file): such a function gets its ctypes prototype at
    its first call, so resolving a table never loads that file.
    """
    by_value = any(s.kind == k.STRUCT for s in c.specs)
    made: list[Any] = [] if by_value else [ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs])]
    convert = c.convert
    calls = guard.calls
    symbol = c.abi.symbol
    sync = devmem.synchroniser(guard) if c.devptrs else None

    def slow(args: tuple[Any, ...], kw: dict[str, Any]) -> int:
        keep: list[Any] = []
        cargs = convert(args, kw, keep, sync)
        if not made:  # the first call of a function that takes a struct by value (idempotent if two race)
            made.append(ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs]))
        cfn = made[0]
        me = get_ident()
        calls.append(me)
        try:
            if guard.closed:
                raise guard.closed_error(symbol)
            return int(cfn(*cargs))
        finally:
            calls.remove(me)

    fasts = [k.fast_converter(s) for s in c.specs]
    if made and all(f is not None for f in fasts):
        call = _factory(len(fasts))(slow, made[0], guard, symbol, k.NOT_FAST, get_ident, *fasts)
    else:
        def call(*args: Any, **kw: Any) -> int:
            return slow(args, kw)

    def checked(*args: Any, **kw: Any) -> None:
        rc = call(*args, **kw)
        if rc:
            raise err(rc)

    return call, checked
