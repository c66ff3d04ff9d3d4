"""The pure backend: the contract converts, ctypes calls (libffi), the call's own frame keeps the library mapped.

Where every parameter has a shortcut (exact ints in range, None, cuentry Out
objects of the right type, bytes: `contract.fast_check`), a function generated
per sequence of shortcuts checks each argument inline (no call per argument, no
loop, no list) and hands the values to ctypes as ctypes takes them (bytes and
None as they are); any other argument goes through `Contract.convert`, which
converts or raises.

Nothing is registered per call: a call is in flight while its frame is on its
thread's stack, and `Guard.close` finds it there (`ffi.call_frames`).
"""

from __future__ import annotations

import ctypes

from . import contract as k
from . import devmem, ffi, values
from .values import KernelParams, Out

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


_FACTORIES: dict[str, Callable[..., Callable[..., int]]] = {}
_MISSING: Any = object()  # a positional parameter not given


# Per shortcut letter (contract.fast_check): the constants it takes (named by the parameter's index), the lines
# that check argument x{i} (`miss` with the arguments as given, ALL, on anything else), and the C value handed
# to ctypes (x{i} itself, or y{i} that the lines leave). Out facts are read through the sealed slot's
# descriptor (`facts(x, base)`): an uninitialised Out raises there, and the except clause sends it to `miss`
# (only that read is in the try: what `miss` raises goes to the caller as it is, the contract asked once).
_OUT = ["if type(x{i}) in outs:", "    try:", "        f = facts(x{i}, base)", "    except (AttributeError, ValueError):",
        "        return miss(ALL)"]
_OUT_CODE = ["    if f[CODE] not in k{i}:", "        return miss(ALL)", "    y{i} = f[ADDR]"]
_CHECKS: dict[str, tuple[tuple[str, ...], list[str], str]] = {
    "i": (("lo", "hi"), ["if type(x{i}) is not int or not lo{i} <= x{i} <= hi{i}:", "    return miss(ALL)"], "x{i}"),
    "h": (("hi",), ["if type(x{i}) is int:", "    if not 0 <= x{i} <= hi{i}:", "        return miss(ALL)",
                    "elif x{i} is not None:", "    return miss(ALL)"], "x{i}"),
    "a": (("k",), [*_OUT, *_OUT_CODE, "elif x{i} is not None:", "    return miss(ALL)", "else:", "    y{i} = None"],
          "y{i}"),
    "s": (("k",), [*_OUT, *_OUT_CODE, "elif type(x{i}) is bytes or x{i} is None:", "    y{i} = x{i}", "else:",
                   "    return miss(ALL)"], "y{i}"),
    "v": ((), [*_OUT, "    y{i} = f[ADDR]", "elif type(x{i}) is bytes or x{i} is None:", "    y{i} = x{i}", "else:",
               "    return miss(ALL)"], "y{i}"),
    "w": ((), [*_OUT, "    y{i} = f[ADDR]", "elif x{i} is not None:", "    return miss(ALL)", "else:", "    y{i} = None"],
          "y{i}"),
    "d": ((), ["if type(x{i}) is not float:", "    return miss(ALL)"], "x{i}"),
    "f": ((), ["if type(x{i}) is not float or (x{i} - x{i} == 0.0 and not -FLT_MAX <= x{i} <= FLT_MAX):",
               "    return miss(ALL)"], "x{i}"),
}


def _factory(letters: str) -> Callable[..., Callable[..., int]]:
    """make(slow, cfn, guard, symbol, outs, facts, base, *constants) -> call, for one sequence of shortcut
    letters (compiled once per sequence; the constants of each parameter in order, as _CHECKS names them).

    The call registers nothing: its frame, on the thread's stack from before it looks at the closed flag
    until ctypes returned, is what `Guard` counts as a call in flight (`ffi.call_frames`)."""
    got = _FACTORIES.get(letters)
    if got is not None:
        return got
    n = len(letters)
    cs = "".join(f", {c}{i}" for i, letter in enumerate(letters) for c in _CHECKS[letter][0])
    xs = ", ".join(f"x{i}" for i in range(n))
    every = f"({xs}{',' if n == 1 else ''})"
    body = [f"def make(slow, cfn, guard, symbol, outs, facts, base{cs}):",
            "    def full(xs, rest, kw):",
            "        return slow(tuple(x for x in (*xs, *rest) if x is not MISSING), kw)",
            "    def miss(xs):",
            "        return slow(tuple(x for x in xs if x is not MISSING), {})",
            # positional parameters: a call with exactly n positional arguments makes no tuple; keywords and
            # too many go to the contract with the arguments as given, and so do too few (MISSING passes no
            # check below)
            f"    def call({''.join(f'x{i}=MISSING, ' for i in range(n))}{'/, ' if n else ''}*rest, **kw):",
            "        if kw or rest:",
            f"            return full({every}, rest, kw)"]
    for i, letter in enumerate(letters):
        body += [f"        {line.format(i=i).replace('ALL', every)}" for line in _CHECKS[letter][1]]
    body += ["        if guard.closed:",
             "            raise guard.closed_error(symbol)",
             f"        return cfn({', '.join(_CHECKS[letter][2].format(i=i) for i, letter in enumerate(letters))})",
             "    return call"]
    ns: dict[str, Any] = {"FLT_MAX": 3.4028234663852886e38, "ADDR": _ADDR, "CODE": _CODE, "MISSING": _MISSING}
    exec(compile("\n".join(body), f"<cuentry pure call {letters}>", "exec"), ns)  # our own text, one per sequence
    for code in ns["make"].__code__.co_consts:
        if getattr(code, "co_name", None) == "call":
            ffi.call_frames(code)
    got = _FACTORIES.setdefault(letters, ns["make"])
    return got


def _out_facts() -> tuple[Any, Any, int, int]:
    """(descriptor get, base class, index of the address, index of the element code) of Out's sealed facts."""
    if values._OutBase is values.PyOutBase:
        return values._PY_FACTS.__get__, values.PyOutBase, 1, 4  # (array, address, count, itemsize, code)
    return values._C_FACTS.__get__, values._OutBase, 0, 3  # (address, count, itemsize, code)


_FACTS, _BASE, _ADDR, _CODE = _out_facts()
_OUTS = frozenset({Out, KernelParams})


def make(c: k.Contract, address: int, guard: ffi.Guard, err: Callable[[int], CudaError],
         structs: Callable[[str], Any]) -> tuple[Callable[..., int], Callable[..., None]]:
    """(call, checked) for one ABI at `address`.

    A struct passed by value needs its ctypes layout, which comes from the catalog's
    full type data (a 160 kB JSON file): such a function gets its ctypes prototype at
    its first call, so resolving a table never loads that file. Every path of a call
    runs under a frame of a code given to `ffi.call_frames` (the generated `call`, or
    the generic one here), from before it looks at the closed flag until ctypes returned.
    """
    by_value = any(s.kind == k.STRUCT for s in c.specs)
    made: list[Any] = [] if by_value else [ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs])]
    convert = c.convert
    symbol = c.abi.symbol
    sync = devmem.synchroniser(guard) if c.devptrs else None

    def slow(args: tuple[Any, ...], kw: dict[str, Any]) -> int:
        keep: list[Any] = []  # held by this frame until the C function returned
        cargs = convert(args, kw, keep, sync)
        if not made:  # the first call of a function that takes a struct by value (idempotent if two race)
            made.append(ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs]))
        if guard.closed:
            raise guard.closed_error(symbol)
        return int(made[0](*cargs))

    fasts = [k.fast_check(s) for s in c.specs]
    if made and all(f is not None for f in fasts):
        letters = "".join(f[0] for f in fasts if f is not None)
        consts = [v for f in fasts if f is not None for v in f[1]]
        call = _factory(letters)(slow, made[0], guard, symbol, _OUTS, _FACTS, _BASE, *consts)
    else:
        def call(*args: Any, **kw: Any) -> int:
            if guard.closed:  # (and so this frame names its guard: a call in flight)
                raise guard.closed_error(symbol)
            return slow(args, kw)

    def checked(*args: Any, **kw: Any) -> None:
        rc = call(*args, **kw)
        if rc:
            raise err(rc)

    return call, checked


def _generic_code() -> Any:
    """The code of make()'s generic `call` (for arguments without a shortcut)."""
    return next(code for code in make.__code__.co_consts if getattr(code, "co_name", None) == "call")


ffi.call_frames(_generic_code())
