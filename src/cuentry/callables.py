"""Typed callables: a resolved pointer wrapped with its catalog signature.

A user never writes a signature. :func:`bind` builds, from the exact ABI the
driver returned, a plain Python function with one positional parameter per C
parameter (named as in the header), converting only what needs converting:

* handles (``CUstream``, ``CUcontext`` ...) take ints (``torch`` ``.cuda_stream``,
  ``cupy`` ``.ptr``), objects with ``__cuda_stream__``, ``__int__`` or ``.ptr``, and None;
* other pointers take cffi pointers (see :func:`out`), ints (addresses), None and
  writable or read-only buffers (bytes, bytearray, memoryview, numpy arrays);
* ``char *`` takes bytes or str.

It returns the CUresult as an int; ``fn.checked(...)`` raises :class:`CudaError`
named by ``cuGetErrorName`` instead. After the library is closed, calls raise
:class:`DriverClosedError` instead of jumping into unmapped memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from . import _ffi
from ._stubgen import kinds, shape_code
from .catalog import Abi, Catalog, catalog
from .errors import ArgumentError, CudaError, DriverClosedError

_TYPEMAP_LOCK = threading.Lock()
_TYPEMAPS: dict[int, _ffi.TypeMap] = {}


def typemap(cat: Catalog | None = None) -> _ffi.TypeMap:
    cat = catalog() if cat is None else cat
    tm = _TYPEMAPS.get(id(cat))
    if tm is None:
        with _TYPEMAP_LOCK:
            tm = _TYPEMAPS.setdefault(id(cat), _ffi.TypeMap(cat.ffi_hints, lambda: cat.types))
    return tm


class TypedFunction(Protocol):
    """What :func:`bind` returns: a function with these attributes."""

    abi: Abi
    address: int
    exported: str | None
    checked: Callable[..., None]
    __name__: str

    def __call__(self, *args: Any) -> int: ...


# --- argument converters (only reached when the fast path's type test fails) ---------


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    try:
        return int(v.__index__())
    except AttributeError:
        raise TypeError(f"expected an int, got {type(v).__name__}") from None


def _to_handle(v: Any) -> int:
    if v is None:
        return 0
    if isinstance(v, int):
        return int(v)
    proto = getattr(v, "__cuda_stream__", None)
    if proto is not None:
        got = proto() if callable(proto) else proto
        if isinstance(got, tuple) and len(got) == 2:
            return int(got[1])
        raise TypeError("__cuda_stream__ must return (version, handle)")
    if _ffi.is_cdata(v):
        return _ffi.address_of(v)
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(v, attr, None)
        if isinstance(h, int):
            return h
    if hasattr(v, "__int__"):
        return int(v)
    raise TypeError(f"expected a handle (int, __cuda_stream__, .ptr or None), got {type(v).__name__}")


def _to_pointer(v: Any) -> Any:
    if _ffi.is_cdata(v):
        return v
    if v is None:
        return _ffi.NULL
    if isinstance(v, int) and not isinstance(v, bool):
        return _ffi.cast("void *", v)
    cd = getattr(v, "cdata", None)
    if cd is not None and _ffi.is_cdata(cd):
        return cd
    if isinstance(v, str):
        raise TypeError("expected a pointer or buffer, got str (encode it, or pass bytes)")
    try:
        return _ffi.from_buffer(v)
    except TypeError:
        raise TypeError(f"expected a pointer (cuentry.out(), an int address, a buffer or None), got {type(v).__name__}") from None


def _to_string(v: Any) -> Any:
    if v is None:
        return _ffi.NULL
    if isinstance(v, str):
        return v.encode("utf-8")
    if _ffi.is_cdata(v):
        return v
    if isinstance(v, (bytearray, memoryview)):
        return _ffi.from_buffer(v)
    raise TypeError(f"expected bytes or str, got {type(v).__name__}")


def _to_struct(v: Any) -> Any:
    if _ffi.is_cdata(v):
        return v
    cd = getattr(v, "cdata", None)
    if cd is not None and _ffi.is_cdata(cd):
        return cd[0]
    raise TypeError(f"expected a struct value made with cuentry.out(...)[0], got {type(v).__name__}")


_CONVERTERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    _ffi.INT: ("int", _to_int),
    _ffi.HANDLE: ("int", _to_handle),
    _ffi.FLOAT: ("float", float),
    _ffi.POINTER: ("cdata", _to_pointer),
    _ffi.STRING: ("bytes", _to_string),
    _ffi.STRUCT: ("cdata", _to_struct),
}


def bind(
    abi: Abi,
    address: int,
    *,
    error_name: Callable[[int], str] | None = None,
    cat: Catalog | None = None,
) -> TypedFunction:
    """A typed Python function calling the C function at ``address`` with ``abi``'s signature."""
    if not isinstance(address, int) or address == 0:
        raise ArgumentError(f"{abi.pfn}: refusing to bind a NULL pointer", hint="resolve the symbol first and check its diagnostic")
    tm = typemap(cat)
    ffi_types: list[str] = []
    kinds: list[str] = []
    for p in abi.signature.params:
        t, k = tm.param(p.canonical)
        ffi_types.append(t)
        kinds.append(k)
    fast = _ffi.stubs()
    shape = _compiled_shape(fast, tuple(ffi_types)) if fast is not None else None
    fntype = tm.function_type(ffi_types)
    fntype_name = fntype.cname
    label = f"{abi.symbol}@{abi.version}" + (f" ({abi.exported})" if abi.exported else "")

    def bad(exc: Exception, args: tuple[Any, ...]) -> ArgumentError:
        for i, (v, k, p) in enumerate(zip(args, kinds, abi.signature.params)):
            try:
                _, conv = _CONVERTERS[k]
                c = conv(v)
                if k in (_ffi.INT, _ffi.HANDLE, _ffi.FLOAT):
                    _ffi.new(f"{ffi_types[i]} *", c)
            except (TypeError, OverflowError) as e2:
                return ArgumentError(f"{label}: argument {i + 1} '{p.name}' ({p.type}): {e2}",
                                     hint=f"signature: {abi.c_typedef()}")
        return ArgumentError(f"{label}: {exc}", hint=f"signature: {abi.c_typedef()}")

    def err(rc: int) -> CudaError:
        name = error_name(rc) if error_name else f"CUresult({rc})"
        return CudaError(rc, name, call=label)

    convs = tuple(_CONVERTERS[k][1] for k in kinds)

    def conv(args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(c(v) for c, v in zip(convs, args))

    built: list[tuple[Any, Any]] = []

    def pure() -> tuple[Any, Any]:
        """The pure backend's (call, checked) pair; made on first need when the compiled one fronts it."""
        if not built:
            pointers = tuple(i for i, k in enumerate(kinds) if k in (_ffi.POINTER, _ffi.STRING))
            factory = _factory(len(kinds), pointers)
            built.append(factory(_ffi.function_at(address, fntype), conv, bad, err))
        return built[0]

    if shape is not None:
        # The C caller converts what it can and hands anything else to the pure wrapper.
        idx, codes, kinds_c = shape
        nogil = int(not holds_gil(abi.symbol))
        fn = fast.Caller(address, idx, codes, kinds_c, lambda *a: pure()[0](*a), 0, None, nogil)
        checked = fast.Caller(address, idx, codes, kinds_c, lambda *a: pure()[1](*a), 1, err, nogil)
        backend = "compiled"
    else:
        fn, checked = pure()
        backend = "pure"
    fn.checked = checked
    fn.abi = abi
    fn.address = address
    fn.exported = abi.exported
    fn.ffi_type = fntype_name
    fn.backend = backend
    fn.__name__ = fn.__qualname__ = abi.symbol
    checked.__name__ = checked.__qualname__ = f"{abi.symbol}.checked"
    fn.__doc__ = f"{abi.pfn}: returns the CUresult as an int; .checked(...) raises CudaError. See .abi.c_typedef()."
    return fn  # type: ignore[no-any-return]


def holds_gil(symbol: str) -> bool:
    """Whether the compiled backend keeps the GIL during the call.

    Getters and queries return at once, and releasing and retaking the GIL would
    cost more than the call; every other driver function may block (synchronise,
    copy, allocate, launch into a full queue) and runs with the GIL released.
    """
    return "Get" in symbol or symbol.endswith("Query")


_SHAPES: dict[tuple[str, ...], tuple[int, str, str] | None] = {}
_SHAPE_INDEX: dict[str, int] = {}


def _compiled_shape(fast: Any, shape: tuple[str, ...]) -> tuple[int, str, str] | None:
    """(case number, shape letters, conversion letters) of a shape in the extension; None if it has none."""
    if shape in _SHAPES:
        return _SHAPES[shape]
    if not _SHAPE_INDEX:
        _SHAPE_INDEX.update({c: i for i, c in enumerate(fast.SHAPES.split(","))})
    codes = shape_code(shape)
    idx = _SHAPE_INDEX.get(codes) if codes else None
    got = (idx, "" if codes == "v" else codes, kinds(shape)) if idx is not None and codes else None
    _SHAPES[shape] = got
    return got


def invalidate(fn: Any, what: str) -> None:
    """Make a bound function raise DriverClosedError from now on (the library was closed)."""

    def closed(*_: Any) -> Any:
        raise DriverClosedError(what)

    for f in (fn, getattr(fn, "checked", None)):
        if f is not None and hasattr(f, "_close"):  # a compiled caller
            f._close(closed)
            continue
        cell = _fn_cell(f)
        if cell is not None:
            cell.cell_contents = closed


def _fn_cell(f: Any) -> Any:
    code = getattr(f, "__code__", None)
    if code is None or f.__closure__ is None or "_fn" not in code.co_freevars:
        return None
    return f.__closure__[code.co_freevars.index("_fn")]


_FACTORY_LOCK = threading.Lock()
_FACTORIES: dict[tuple[int, tuple[int, ...]], Callable[..., tuple[Any, Any]]] = {}


def _factory(arity: int, pointers: tuple[int, ...] = ()) -> Callable[..., tuple[Any, Any]]:
    """A compiled maker of (call, checked) closures for one arity, shared by all signatures.

    The fast path hands the arguments to cffi as they are (ints, cffi pointers,
    bytes pass straight through). cffi rejects anything else with TypeError or
    OverflowError before the C function runs, so only then are the arguments
    converted (handles from objects, buffers, None, str) and the call made again;
    if that fails too, the error names the argument.
    """
    key = (arity, pointers)
    f = _FACTORIES.get(key)
    if f is not None:
        return f
    names = [f"a{i}" for i in range(arity)]
    args = ", ".join(names)
    tup = f"({args}{',' if arity else ''})"
    # None is the usual way to pass NULL (cuLaunchKernel's `extra`); cffi wants ffi.NULL, so
    # pointer parameters map None on the fast path instead of taking the slow one.
    head = ", ".join(f"_NULL if {n} is None else {n}" if i in pointers else n for i, n in enumerate(names))
    conv_call = f"*_conv({tup})"
    code = (
        "def make(_fn, _conv, _bad, _err):\n"
        f"    def call({args}):\n"
        f"        try:\n            return _fn({head})\n"
        "        except (TypeError, OverflowError):\n            pass\n"
        f"        try:\n            return _fn({conv_call})\n"
        f"        except (TypeError, OverflowError) as e:\n            raise _bad(e, {tup}) from None\n"
        f"    def checked({args}):\n"
        f"        try:\n            rc = _fn({head})\n"
        "        except (TypeError, OverflowError):\n"
        f"            try:\n                rc = _fn({conv_call})\n"
        f"            except (TypeError, OverflowError) as e:\n                raise _bad(e, {tup}) from None\n"
        "        if rc:\n            raise _err(rc)\n"
        "    return call, checked\n"
    )
    ns: dict[str, Any] = {"_NULL": _ffi.NULL}
    exec(compile(code, f"<cuentry call/{arity}>", "exec"), ns)
    with _FACTORY_LOCK:
        f = _FACTORIES.setdefault(key, ns["make"])
    return f


# --- out-parameters --------------------------------------------------------------


def out(ctype: str, count: int = 1, cat: Catalog | None = None) -> Any:
    """Storage for an out-parameter of C type ``ctype`` (as the header spells it).

    ``out("CUcontext")`` gives a ``uintptr_t[1]`` (read ``[0]``); ``out("CUuuid")`` a
    ``struct CUuuid_st[1]``; ``out("char", 256)`` a 256-byte buffer. Pass it where the
    function takes ``CUcontext *`` etc.
    """
    if not isinstance(ctype, str) or not ctype.strip():
        raise ArgumentError(f"out() needs a C type name, got {ctype!r}")
    if not isinstance(count, int) or count < 1:
        raise ArgumentError(f"out() needs a positive count, got {count!r}")
    cat = catalog() if cat is None else cat
    name = ctype.strip()
    typedefs = cat.types["typedefs"]
    canonical = typedefs[name]["canonical"] if name in typedefs else name
    tm = typemap(cat)
    try:
        t, kind = tm.param(canonical)
    except TypeError as exc:
        raise ArgumentError(f"out({ctype!r}): {exc}", hint="use a type name from the function's signature, e.g. 'CUcontext'") from None
    if kind == _ffi.POINTER and canonical.endswith("*"):
        t = "void *"
    if kind == _ffi.STRING:
        t = "char *"
    return _ffi.new(f"{t}[{count}]")


def as_bytes(cdata: Any) -> bytes:
    """The bytes of an out-parameter (e.g. a CUuuid)."""
    return _ffi.buffer(cdata)


def as_str(cdata: Any) -> str:
    """A NUL-terminated char buffer as str."""
    return _ffi.string(cdata).decode("utf-8", errors="replace")
