"""Typed calls: a resolved pointer wrapped with its catalog signature, safe whatever it is given.

A user never writes a signature. [bind][cuentry.calls.bind] builds, from the exact ABI the
driver returned, a callable with one parameter per C parameter (named as in the
header; positional or keyword), that converts each argument by the one
conversion contract of `.contract` (docs/calls.md has the table) and
returns the CUresult as an int; `fn.checked(...)` raises [CudaError][cuentry.errors.CudaError]
named by `cuGetErrorName` instead. After the library is closed, calls raise
`DriverClosedError`; a close waits for calls in flight.

Backends: the compiled extension (`_fastcall`, built at install) or the pure
one (ctypes); same contract, same errors; which one is decided once per process
by `cuentry.calls.choice` (`$CUENTRY_BACKEND`, read at import). Modules:
`ffi` (the only code touching ctypes and the dynamic loader, its platform
loader chosen once), `choice`, `contract`, `values`, `pure`, `compiled`,
`shapes`, `_fastgen` (build time only). Every module the first call needs is
imported with this package, never during a first call (a fork then cannot catch
an import half done).
"""

from __future__ import annotations

from .. import cfacts
from ..errors import ArgumentError, CudaError
from . import compiled, contract, ffi, pure, values
from .choice import backend, extension, extension_module
from .gil import holds_gil
from .values import Address, KernelParams, Out, meta, new_out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    from ..catalog import Abi, Catalog

    class TypedFunction(Protocol):
        """What [bind][cuentry.calls.bind] returns: a callable with these attributes."""

        abi: Abi
        address: int
        exported: str | None
        backend: str
        checked: Callable[..., None]
        __name__: str

        def __call__(self, *args: Any, **kw: Any) -> int: ...

__all__ = ["Address", "KernelParams", "Out", "address", "as_bytes", "as_str", "backend", "bind", "check_bindable",
           "enum_type", "holds_gil", "kernel_params", "out", "struct_type"]

def _catalog_parts(cat: Catalog | None) -> tuple[Catalog, contract.Hints, ffi.StructTypes]:
    from ..catalog import catalog

    cat = catalog() if cat is None else cat
    got = cat.fact("calls.parts", _make_parts)
    return cat, got[0], got[1]


def _make_parts(cat: Catalog) -> tuple[contract.Hints, ffi.StructTypes]:
    """The conversion hints and struct layouts of `cat` (a fact of the catalog: Catalog.fact)."""
    hints = contract.Hints(cat.ffi_hints)
    return hints, ffi.StructTypes(lambda: cat.types, hints.opaque, hints.unsigned, hints.enum_typedefs)


def _typedefs(cat: Catalog) -> dict[str, str]:
    """The typedef names learnt so far from `cat`'s signatures (spelled -> canonical; the key "" marks a full scan)."""
    return cat.fact("calls.typedefs", lambda c: {})


def _contracts(cat: Catalog) -> dict[str, contract.Contract]:
    """The contracts built for `cat`'s ABIs, by typedef name (a contract holds no per-address state)."""
    return cat.fact("calls.contracts", lambda c: {})


def _learn_typedefs(cat: Catalog, c: contract.Contract) -> None:
    """Remember the typedef names a signature spells (`CUcontext *` is `struct CUctx_st **`).

    out() then finds the common names without loading the catalog's full type
    data (a 160 kB JSON file: milliseconds a cold start need not pay).
    """
    known = _typedefs(cat)
    for s in c.specs:
        _learn(known, s.type, s.canonical)


def _learn(known: dict[str, str], t: str, k: str) -> None:
    """One parameter's spelled type and canonical type: the typedef name it uses, if any, and what it is."""
    while t.endswith("*") and k.endswith("*"):
        t, k = t[:-1].strip(), k[:-1].strip()
    t = t.removeprefix("const ").strip()
    k = k.removeprefix("const ").removesuffix(" const").strip()
    if t.isidentifier() and t not in known:
        known[t] = k


def _learn_from_signatures(cat: Catalog, name: str) -> str | None:
    """What typedef `name` is, from the signatures in the catalog's rows (scanned up to the first that spells
    it, learning every other name on the way; a name no signature spells makes it scan them all, once).

    A type asked of out() before any function that uses it was bound (`out("CUcontext")` before the
    table that takes it resolved) is found here without the full type data: no JSON file read, no json
    module imported, on the first call's path.
    """
    known = _typedefs(cat)
    if "" in known:  # scanned them all already
        return known.get(name)
    for spelled, canonical in cat.spelled_types():
        _learn(known, spelled, " ".join(canonical.split()))
        if name in known:
            return known[name]
    known[""] = ""
    return None


def _canonical(cat: Catalog, hints: contract.Hints, name: str) -> str:
    """The canonical C type of a type name: C's own names as they are, typedefs through the catalog."""
    if hints.scalar(name) is not None or name.endswith("*") or name.startswith(("struct ", "union ", "enum ")):
        return name
    got = _typedefs(cat).get(name) if name else None
    if got is None:
        got = _learn_from_signatures(cat, name)
    if got is not None:
        return got
    typedefs = cat.types["typedefs"]
    return " ".join(typedefs[name]["canonical"].split()) if name in typedefs else name


def enum_type(tag: str, cat: Catalog | None = None) -> str:
    """The C type an enum with tag `tag` is passed as: `unsigned int` or `int`, as the catalog records."""
    return cfacts.enum_type(tag, _catalog_parts(cat)[1])


def struct_type(tag: str, cat: Catalog | None = None) -> Any:
    """The ctypes class cuentry uses for `struct`/`union` `tag` (its layout from the catalog)."""
    return _catalog_parts(cat)[2].get(tag)


def check_bindable(abi: Abi, cat: Catalog | None = None) -> None:
    """Raise what [bind][cuentry.calls.bind] would refuse in `abi`'s signature (a parameter type with no
    conversion: a TypeError), without binding: a table checks at resolution what it binds at first use.

    Every ABI record of the shipped catalog builds its contract (`tests/test_calls.py` checks each), so only
    records of other catalogs are checked (with the hints of `cat`, the catalog that binds)."""
    if not _SHIPPED:
        from ..catalog import catalog

        _SHIPPED.append(catalog())
    shipped = _SHIPPED[0]
    if abi.symbol in shipped and abi in shipped.abis(abi.symbol):  # the record itself (or one equal to it)
        return
    contract.bindable(abi, _catalog_parts(cat)[1])


_SHIPPED: list[Catalog] = []


def bind(abi: Abi, address: int, *, error_name: Callable[[int], str] | None = None, cat: Catalog | None = None,
         guard: ffi.Guard | None = None) -> TypedFunction:
    """A typed callable for the C function at `address` with `abi`'s signature.

    `guard` is the library's (its close() then waits for calls and makes them raise
    DriverClosedError); without one, the callable is never closed.
    """
    if isinstance(address, bool) or not isinstance(address, int) or not 0 < address <= ffi.POINTER_MAX:
        raise ArgumentError(f"{abi.pfn}: refusing to bind the address {address!r}",
                            hint="resolve the symbol first and check its diagnostic")
    cat, hints, structs = _catalog_parts(cat)
    contracts = _contracts(cat)
    c = contracts.get(abi.pfn)
    if c is None or c.abi is not abi:
        c = contracts[abi.pfn] = contract.Contract(abi, hints, structs.get)
        _learn_typedefs(cat, c)
    g = guard if guard is not None else ffi.Guard(f"{abi.symbol} at {address:#x}")
    label = c.label

    def err(rc: int) -> CudaError:
        return CudaError(rc, error_name(rc) if error_name else f"CUresult({rc})", call=label)

    ext = extension()
    made = compiled.make(ext, c, address, g, err) if ext is not None else None
    if made is not None:
        fn, checked = made
        name = "compiled"
    else:
        fn, checked = pure.make(c, address, g, err, structs.get)
        name = "pure"
    fn.__dict__.update(checked=checked, abi=abi, address=address, exported=abi.exported, backend=name,
                       params=c.names, ffi_type=c.ffi_type)
    fn.__name__ = abi.symbol
    fn.__doc__ = c.doc
    checked.__name__ = f"{abi.symbol}.checked"
    # A pure function's repr is Python's (`<function cuMemAlloc@3020 at 0x...>`): its qualified name says which ABI.
    fn.__qualname__ = f"{abi.symbol}@{abi.version}{'_' + abi.variant if abi.variant else ''}"
    checked.__qualname__ = f"{fn.__qualname__}.checked"
    if name == "compiled":  # the extension's callers show what they are (their "_repr")
        what = f"{abi.pfn} at {address:#x}" + (f" ({abi.exported})" if abi.exported else "")
        fn.__dict__["_repr"] = f"<cuentry function {fn.__qualname__}: {what}, returns the CUresult, {name}>"
        checked.__dict__["_repr"] = f"<cuentry function {checked.__qualname__}: {what}, raises CudaError, {name}>"
    return fn  # type: ignore[no-any-return]


# --- values -------------------------------------------------------------------------------


def address(n: int) -> Address:
    """An explicit raw address for a pointer parameter (the escape hatch: cuentry cannot check it)."""
    return Address(n)


def out(ctype: str, count: int = 1, cat: Catalog | None = None) -> Out:
    """Storage for `count` elements of C type `ctype` (as the header spells it), owned by cuentry.

    `out("CUcontext")` (read `[0]`), `out("CUuuid")` (a struct), `out("char", 256)`
    (a 256-byte string buffer, always NUL-terminated after its last byte),
    `out("int", 4)`. Pass it where the function takes `CUcontext *`, `CUuuid *`, `char *`...
    """
    if type(ctype) is str and cat is None:  # a type asked before, of the shipped catalog: made at once
        spec = _OUT_SPECS.get(ctype if count is _ONE else (ctype, count) if type(count) is int else "")
        if spec is not None:
            return new_out(spec)
    return _out(ctype, count, cat)


_ONE = 1  # `count is _ONE`: the int 1 itself (an int subclass never is), without a comparison it could lie to
# What out() worked out for a C type name (and count) of the shipped catalog: (array type, count, itemsize, code,
# meta), so the next out() of it makes the storage at once (BENCHMARKS.md: out() against ctypes.c_int()).
_OUT_SPECS: dict[Any, tuple[Any, int, int, str, Any]] = {}
_OUT_SPECS_LIMIT = 1024


def _out(ctype: str, count: int, cat: Catalog | None) -> Out:
    """out(), worked out from the catalog (and remembered for the shipped one)."""
    shipped = cat is None
    if not isinstance(ctype, str) or not ctype.strip():
        raise ArgumentError(f"out() needs a C type name, got {ctype!r}", hint="e.g. out('CUcontext')")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= int.__index__(count) <= 1 << 31:
        raise ArgumentError(f"out() needs a count in 1..{1 << 31}, got {count!r}")
    count = int.__index__(count)  # an int subclass by its stored value (its comparisons may lie)
    cat, hints, structs = _catalog_parts(cat)
    name = " ".join(ctype.split())
    canonical = _canonical(cat, hints, name)
    t = canonical.replace("const ", "").replace("volatile ", "").strip()
    try:
        elem, code, tag = _element(t, hints, structs)
    except (TypeError, KeyError) as exc:
        raise ArgumentError(f"out({ctype!r}): {exc}",
                            hint="use a type name from the function's signature, e.g. 'CUcontext'") from None
    import ctypes

    extra = 1 if code == "c" else 0  # char storage keeps a NUL after its last element
    spec = (elem * (count + extra), count, ctypes.sizeof(elem), code,
            meta(name, tag, None if code in "cT" else _conversion(cat, hints, name, t)))
    if shipped and type(ctype) is str:
        if len(_OUT_SPECS) >= _OUT_SPECS_LIMIT:
            _OUT_SPECS.clear()
        _OUT_SPECS[ctype if count == 1 else (ctype, count)] = spec
    return new_out(spec)


def _use_compiled_out() -> None:
    """With the extension, `out` is its C function: the same answers, a type asked before made in one C call."""
    ext = extension_module()
    if ext is not None and values.new_out is getattr(ext, "new_out", None) and hasattr(ext, "set_out_specs"):
        ext.set_out_specs(_OUT_SPECS, out)  # the Python out() answers whatever the C one does not
        globals()["out"] = ext.out


def _conversion(cat: Catalog, hints: contract.Hints, name: str, canonical: str) -> contract.Value | None:
    """The conversion of C type `name` (what a call argument of that type accepts), made once per catalog."""
    known: dict[str, contract.Value | None] = cat.fact("calls.values", lambda c: {})
    try:
        return known[name]
    except KeyError:
        got = known[name] = contract.Value.of(name, canonical, hints)
        return got


def _element(t: str, hints: contract.Hints, structs: ffi.StructTypes) -> tuple[Any, str, str | None]:
    """(ctypes element type, element code, struct tag) for an out() type."""
    import ctypes

    if t.endswith("*") or "(" in t:
        return ctypes.c_uint64 if ffi.POINTER_MAX > 0xFFFFFFFF else ctypes.c_uint32, "P", None
    if t.startswith(("struct ", "union ")):
        tag = t.split()[1]
        if tag in hints.opaque:
            raise TypeError(f"{t} is opaque (only pointers to it exist)")
        return structs.get(tag), "T", tag
    s = hints.scalar(t)
    if s is None:
        raise TypeError(f"no storage for C type {t!r}")
    if s in ("char", "signed char", "unsigned char"):
        return ctypes.c_char, "c", None
    if s in ("float", "double"):
        return ffi.SCALARS[s], s[0], None
    _, _, signed = contract._int_range(s)
    return ffi.SCALARS[s], contract._INT_CODES[(signed, ffi.sizeof(s))], None


def kernel_params(*values: Out | tuple[str, Any], stream: Any = None, cat: Catalog | None = None) -> KernelParams:
    """`void **kernelParams` for cuLaunchKernel: one entry per kernel parameter, in order.

    Each value is an `Out` (its storage is what the kernel parameter points
    to) or a `(ctype, value)` pair, e.g. `kernel_params(("CUdeviceptr", t), ("unsigned int", n))`. A pair's
    value is converted as a call argument of that C type is: a `CUdeviceptr` takes an int address or a
    device array (`__cuda_array_interface__`, CUDA DLPack, cuda.core `Buffer`, cuda.bindings `CUdeviceptr`)
    and refuses host memory and array values; a `CUdevice` takes a cuda.core `Device` too.
    `stream`: the stream of the launch (what a `CUstream` argument takes; default the legacy default
    stream): DLPack objects export for it, and an array whose `__cuda_array_interface__` names another
    stream is refused. The result keeps every storage, and every object a value came from, alive; keep it
    until the launch's stream work is done.
    """
    cat, hints, _ = _catalog_parts(cat)
    run = None
    if stream is not None:
        sv = _conversion(cat, hints, "CUstream", "struct CUstream_st *")
        run = (sv.convert(stream, "kernel_params: stream")[0] or None) if sv is not None else None
    made: list[Out] = []
    for i, v in enumerate(values):
        if isinstance(v, Out):
            made.append(v)
        elif isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str):
            o = out(v[0], cat=cat)
            where = f"kernel_params: value {i + 1} ({v[0]})"
            if o._m(2, None) is not None:  # the C type's own conversion (its errors name this value)
                o._store(0, v[1], where, run)
            elif o._code == "c" and type(v[1]) is not bytes:  # a char parameter given as a number
                name = " ".join(v[0].split())
                conv = _conversion(cat, hints, name, _canonical(cat, hints, name))
                n = conv.convert(v[1], where)[0] if conv is not None else v[1]
                o._obj[0] = (n & 0xFF).to_bytes(1, "little")
            else:
                _store_plain(o, i, v)
            made.append(o)
        else:
            raise ArgumentError(f"kernel_params: value {i + 1} must be a cuentry.out() or a (ctype, value) pair, "
                                f"got {type(v).__name__}")
    return KernelParams(tuple(made))


def _store_plain(o: Out, i: int, v: tuple[str, Any]) -> None:
    """A value of a type stored as its storage takes it (chars, structs, pointers)."""
    try:
        o[0] = v[1]
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"kernel_params: value {i + 1} {v[1]!r} is not a {v[0]}: {exc}") from None
    if o[0] != v[1] and not isinstance(v[1], float):
        raise ArgumentError(f"kernel_params: value {i + 1} {v[1]!r} does not fit a {v[0]}")


def as_bytes(o: Out) -> bytes:
    """The bytes of an Out's storage (e.g. a CUuuid's 16 bytes)."""
    import ctypes

    if not isinstance(o, Out):
        raise ArgumentError(f"as_bytes() takes a cuentry.out(), got {type(o).__name__}")
    return ctypes.string_at(o._ptr, o.nbytes)


def as_str(o: Out) -> str:
    """A char Out as str, up to its first NUL (UTF-8, undecodable bytes replaced)."""
    if not isinstance(o, Out) or o._code not in "cbB":
        raise ArgumentError(f"as_str() takes a cuentry.out('char', n), got {type(o).__name__}")
    raw = as_bytes(o)
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


_use_compiled_out()
