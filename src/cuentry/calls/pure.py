"""The pure backend: the contract converts, ctypes calls (libffi), the call's own frame keeps the library mapped.

Where every parameter has a shortcut (exact ints in range, None, cuentry Out
objects of the right type, bytes: `contract.fast_check`), a function generated
per sequence of shortcuts checks each argument inline (no call per argument, no
loop, no list) and hands ctypes C values itself, through a prototype without
argtypes (ctypes converts nothing again); any other argument goes through
`Contract.convert`, which converts or raises, and the typed prototype. Both
prototypes keep the GIL (`PYFUNCTYPE`) for the calls the GIL policy keeps it for
(`holds_gil`), and release it (`CFUNCTYPE`) for every other.

Nothing is registered per call: a call is in flight while its frame is on its
thread's stack, and `Guard.close` finds it there (`ffi.call_frames`).
"""

from __future__ import annotations

import ctypes

from . import contract as k
from . import devmem, ffi, values
from .gil import holds_gil
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
_HANDLES_KEPT = 64  # per handle parameter of a callable: the most handle values it keeps converted


def _out_facts() -> tuple[Any, Any, int, int, str]:
    """(descriptor get, base class, index of the address, index of the element code, what an Out is passed to
    ctypes as) of Out's sealed facts."""
    if values._OutBase is values.PyOutBase:  # (array, address, count, itemsize, code, what ctypes is given: the array)
        return values._PY_FACTS.__get__, values.PyOutBase, 1, 4, "f[5]"
    return values._C_FACTS.__get__, values._OutBase, 0, 3, "POINTER(f[ADDR])"  # (address, count, itemsize, code)


_FACTS, _BASE, _ADDR, _CODE, _OUT_PASSED = _out_facts()
_OUTS = frozenset({Out, KernelParams})

# Per letter (contract.fast_check's, with `n` for an `i` that C takes as an int): the constants it takes
# (named by the parameter's index) and the lines that check argument x{i} (`miss` with the arguments as given,
# ALL, on anything else) and leave y{i}, the value handed to ctypes. The fast function is declared without
# argtypes: ctypes passes an int as a C int (`n`, after the range check), None as NULL, bytes as their
# address, and a `from_param` result (W{i}, of the parameter's ctypes type) as it is; an Out is passed as
# the pointer made with its sealed facts. The typed prototype's conversion of every argument happens only
# where C needs it. A handle parameter keeps the pointers it made, by the handle's value (H{i}, up to
# _HANDLES_KEPT of them; an exact int cannot change): a handle given again needs no check or conversion, and
# one seen first is checked and converted by `handle` (None: out of range). `miss(ALL)` is written out as the
# call of `slow` with the arguments given: the function refers to as few of its closure's names as it can,
# since a call copies each of them (about 1 ns apiece).
# Out facts are read through the sealed slot's descriptor (`FACTS(x, BASE)`): an uninitialised Out raises
# there, and the except clause sends it to `miss` (only that read is in the try: what `miss` raises goes to
# the caller as it is, the contract asked once).
_NONE = ["if x{i} is None:", "    y{i} = None"]
_NONE_OR_BYTES = ["if x{i} is None or type(x{i}) is bytes:", "    y{i} = x{i}"]
_READ = ["elif type(x{i}) in OUTS:", "    try:", "        f = FACTS(x{i}, BASE)", "    except (AttributeError, ValueError):",
         "        return miss(ALL)"]
_CODE_OK = ["    if f[CODE] not in k{i}:", "        return miss(ALL)"]
_PASS_OUT = [f"    y{{i}} = {_OUT_PASSED}", "else:", "    return miss(ALL)"]
_IN_RANGE = ["if type(x{i}) is not int or not lo{i} <= x{i} <= hi{i}:", "    return miss(ALL)"]
_CHECKS: dict[str, tuple[tuple[str, ...], list[str]]] = {
    "n": (("lo", "hi"), [*_IN_RANGE, "y{i} = x{i}"]),
    "i": (("lo", "hi", "W"), [*_IN_RANGE, "y{i} = W{i}(x{i})"]),
    "h": (("H",), [*_NONE, "elif type(x{i}) is int:", "    y{i} = H{i}.get(x{i})", "    if y{i} is None:",
                   "        y{i} = handle({i}, x{i})", "        if y{i} is None:", "            return miss(ALL)",
                   "else:", "    return miss(ALL)"]),
    "a": (("k",), [*_NONE, *_READ, *_CODE_OK, *_PASS_OUT]),
    "s": (("k",), [*_NONE_OR_BYTES, *_READ, *_CODE_OK, *_PASS_OUT]),
    "v": ((), [*_NONE_OR_BYTES, *_READ, *_PASS_OUT]),
    "w": ((), [*_NONE, *_READ, *_PASS_OUT]),
    "d": (("W",), ["if type(x{i}) is not float:", "    return miss(ALL)", "y{i} = W{i}(x{i})"]),
    "f": (("W",), ["if type(x{i}) is not float or (x{i} - x{i} == 0.0 and not -FLT_MAX <= x{i} <= FLT_MAX):",
                   "    return miss(ALL)", "y{i} = W{i}(x{i})"]),
}
_AS_INT = (ctypes.c_int, ctypes.c_uint)  # what ctypes passes a Python int as, signed or not: C int


def _factory(letters: str) -> Callable[..., Callable[..., int]]:
    """make(slow, cfn, guard, symbol, handle, *constants) -> call, for one sequence of shortcut
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
    body = [f"def make(slow, cfn, guard, symbol, handle{cs}):",
            # positional parameters: a call with exactly n positional arguments makes no tuple; keywords and
            # too many go to the contract with the arguments as given, and so do too few (MISSING passes no
            # check below)
            f"    def call({''.join(f'x{i}=MISSING, ' for i in range(n))}{'/, ' if n else ''}*rest, **kw):",
            "        if kw or rest:",
            f"            return slow(tuple(x for x in (*{every}, *rest) if x is not MISSING), kw)"]
    miss = f"slow(tuple(x for x in {every} if x is not MISSING), {{}})"
    for i, letter in enumerate(letters):
        body += [f"        {line.format(i=i).replace('miss(ALL)', miss)}" for line in _CHECKS[letter][1]]
    body += ["        if guard.closed:",
             "            raise guard.closed_error(symbol)",
             f"        return cfn({', '.join(f'y{i}' for i in range(n))})",
             "    return call"]
    ns: dict[str, Any] = {"FLT_MAX": 3.4028234663852886e38, "ADDR": _ADDR, "CODE": _CODE, "MISSING": _MISSING,
                          "POINTER": ctypes.c_void_p.from_param, "OUTS": _OUTS, "FACTS": _FACTS, "BASE": _BASE}
    exec(compile("\n".join(body), f"<cuentry pure call {letters}>", "exec"), ns)  # our own text, one per sequence
    for code in ns["make"].__code__.co_consts:
        if getattr(code, "co_name", None) == "call":
            ffi.call_frames(code)
    got = _FACTORIES.setdefault(letters, ns["make"])
    return got


def make(c: k.Contract, address: int, guard: ffi.Guard, err: Callable[[int], CudaError],
         structs: Callable[[str], Any]) -> tuple[Callable[..., int], Callable[..., None]]:
    """(call, checked) for one ABI at `address`.

    A struct passed by value needs its ctypes layout, which comes from the catalog's
    full type data (a 160 kB JSON file): such a function gets its ctypes prototype at
    its first call, so resolving a table never loads that file. Every path of a call
    runs under a frame of a code given to `ffi.call_frames` (the generated `call`, or
    the generic one here), from before it looks at the closed flag until ctypes returned.
    """
    holding = holds_gil(c.abi.symbol, c.abi.group or "")
    # a struct passed by value leaves the argument types (and the prototype) to the first call
    types = None if any(s.kind == k.STRUCT for s in c.specs) else [argtype(s, structs) for s in c.specs]
    made: list[Any] = [] if types is None else [ffi.function_at(address, ctypes.c_int, types, keep_gil=holding)]
    convert = c.convert
    symbol = c.abi.symbol
    sync = devmem.synchroniser(guard) if c.devptrs else None

    def slow(args: tuple[Any, ...], kw: dict[str, Any]) -> int:
        keep: list[Any] = []  # held by this frame until the C function returned
        cargs = convert(args, kw, keep, sync)
        if not made:  # the first call of a function that takes a struct by value (idempotent if two race)
            made.append(ffi.function_at(address, ctypes.c_int, [argtype(s, structs) for s in c.specs], keep_gil=holding))
        if guard.closed:
            raise guard.closed_error(symbol)
        return int(made[0](*cargs))

    fasts = [k.fast_check(s) for s in c.specs]
    if types is not None and all(f is not None for f in fasts):
        letters, consts, kept = _shortcuts(fasts, types)  # type: ignore[arg-type]
        highs = {i: f[1][0] for i, f in enumerate(fasts) if f is not None and f[0] == "h"}

        def handle(i: int, x: int) -> Any:
            """Handle parameter i's pointer for the exact int x (kept for the next time), or None: out of range."""
            if not 0 <= x <= highs[i]:
                return None
            y = types[i].from_param(x)
            if len(kept[i]) < _HANDLES_KEPT:
                kept[i][x] = y
            return y

        bare = ffi.function_at(address, ctypes.c_int, [], keep_gil=holding)  # no argtypes: the shortcut hands C values
        call = _factory(letters)(slow, bare, guard, symbol, handle, *consts)
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


def _shortcuts(fasts: list[tuple[str, tuple[Any, ...]]],
               types: list[Any]) -> tuple[str, list[Any], dict[int, dict[int, Any]]]:
    """(letters, constants, kept) of a fast function: contract.fast_check's letters, `n` for an `i` whose C
    type ctypes passes a Python int as; each letter's constants in the order _CHECKS names them; the pointers
    each handle parameter keeps, by its index."""
    letters = ""
    consts: list[Any] = []
    kept: dict[int, dict[int, Any]] = {}
    for i, ((shortcut, given), t) in enumerate(zip(fasts, types, strict=True)):
        letter = "n" if shortcut == "i" and t in _AS_INT else shortcut
        letters += letter
        if letter == "h":
            consts.append(kept.setdefault(i, {}))
        else:
            consts += [*given, *([t.from_param] if "W" in _CHECKS[letter][0] else [])]
    return letters, consts, kept


def _generic_code() -> Any:
    """The code of make()'s generic `call` (for arguments without a shortcut)."""
    return next(code for code in make.__code__.co_consts if getattr(code, "co_name", None) == "call")


ffi.call_frames(_generic_code())
