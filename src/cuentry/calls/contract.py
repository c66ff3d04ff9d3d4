"""The conversion contract: what each C parameter kind accepts, enforced in Python.

One `ParamSpec` per parameter, derived from the catalog's canonical C type
(and, for device pointers and a few length-carrying buffers, the header's names).
`Contract.convert` turns call arguments into C-ready values (ints for every
pointer and handle, floats, ctypes structs for structs by value) or raises the
error that names the function, the parameter, the value and what is accepted.
The pure backend always runs it; the compiled extension converts the common
cases in C (accepting only what this module accepts, with the same result) and
hands everything else here, so both backends give the same answers.
See docs/calls.md for the table.
"""

from __future__ import annotations

import ctypes

from .. import cfacts, names
from ..errors import ArgumentError, ArgumentRangeError, shorten
from . import devmem, ffi
from .values import Address, KernelParams, Out, _Sealed, exact_int, out_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..catalog import Abi, Param

__all__ = [
    "COMPANIONS",
    "DEVICE_RANGES",
    "DEVPTR_TYPES",
    "FIXED_EXTENT",
    "POINTER_KINDS",
    "VALUE_KINDS",
    "Contract",
    "Hints",
    "ParamSpec",
    "Reporter",
    "Value",
    "bindable",
    "classify",
    "code_class",
    "device_object",
    "device_of",
    "element_matches",
    "fast_check",
    "out_matches",
]


# Parameter kinds and the C type facts: cfacts (beside the catalog) owns them.
INT, FLOAT, HANDLE, DEVPTR, CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR, STRUCT = cfacts.KINDS
POINTER_KINDS = cfacts.POINTER_KINDS
Hints = cfacts.Hints

# (buffer parameter, byte-count parameter) pairs, from the headers' parameter names: the count
# must not exceed the buffer. Checked wherever both appear in one signature with these kinds.
COMPANIONS: frozenset[tuple[str, str]] = frozenset({
    ("dstHost", "ByteCount"), ("srcHost", "ByteCount"), ("name", "len"), ("pciBusId", "len"),
    ("logBuffer", "bufferSize"), ("p", "bytesize"), ("ptr", "numbytes"), ("data", "dataSize"),
})
# Device pointers and the counts that say how many bytes of them the driver touches, per function (its name
# without export suffixes; legacy and per-thread forms alike). Each row: (device pointer parameter, access,
# bytes per unit, parameters whose product is the unit count). Access: "w" the driver writes a contiguous
# range (the object must be writable and contiguous), "r" it reads one (contiguous), "n" it only names a
# range (prefetch, advice, range queries: the range must lie inside the object). Checked where the object
# states its extent (__cuda_array_interface__, DLPack, cuda.core Buffer); plain ints are passed as given.
_MEMSET = {"D8": 1, "D16": 2, "D32": 4}
DEVICE_RANGES: dict[str, tuple[tuple[str, str, int, tuple[str, ...]], ...]] = {
    **{f"cuMemset{w}{a}": (("dstDevice", "w", n, ("N",)),) for w, n in _MEMSET.items() for a in ("", "Async")},
    **{f"cuMemsetD2{w}{a}": (("dstDevice", "w", 1, ("dstPitch", "Height")),)
       for w in _MEMSET for a in ("", "Async")},
    **{f"cuMemcpy{a}": (("dst", "w", 1, ("ByteCount",)), ("src", "r", 1, ("ByteCount",))) for a in ("", "Async")},
    **{f"cuMemcpyDtoD{a}": (("dstDevice", "w", 1, ("ByteCount",)), ("srcDevice", "r", 1, ("ByteCount",)))
       for a in ("", "Async")},
    **{f"cuMemcpyPeer{a}": (("dstDevice", "w", 1, ("ByteCount",)), ("srcDevice", "r", 1, ("ByteCount",)))
       for a in ("", "Async")},
    **{f"cuMemcpyDtoH{a}": (("srcDevice", "r", 1, ("ByteCount",)),) for a in ("", "Async")},
    **{f"cuMemcpyHtoD{a}": (("dstDevice", "w", 1, ("ByteCount",)),) for a in ("", "Async")},
    "cuMemcpyDtoA": (("srcDevice", "r", 1, ("ByteCount",)),),
    "cuMemcpyAtoD": (("dstDevice", "w", 1, ("ByteCount",)),),
    "cuMemcpyWithAttributesAsync": (("dst", "w", 1, ("size",)), ("src", "r", 1, ("size",))),
    "cuMemPrefetchAsync": (("devPtr", "n", 1, ("count",)),),
    "cuMemAdvise": (("devPtr", "n", 1, ("count",)),),
    "cuMemRangeGetAttribute": (("devPtr", "n", 1, ("count",)),),
    "cuMemRangeGetAttributes": (("devPtr", "n", 1, ("count",)),),
}
# Buffers the driver fills with a fixed number of bytes that no parameter states.
FIXED_EXTENT: dict[tuple[str, str], int] = {("cuDeviceGetLuid", "luid"): 8}
DEVPTR_TYPES = cfacts.DEVPTR_TYPES

# Element codes of typed buffers: struct-module letters by (class, size). 'P' is a pointer.
_INT_CODES = {(True, 1): "b", (False, 1): "B", (True, 2): "h", (False, 2): "H", (True, 4): "i", (False, 4): "I",
              (True, 8): "q", (False, 8): "Q"}
_FMT_CLASS = {**{c: "s" for c in "bhilqn"}, **{c: "u" for c in "BHILQNP"}, **{c: "f" for c in "efd"}, "c": "c",
              "?": "?"}


def code_class(code: str) -> tuple[str, int]:
    """(class, item size) of an element code: s(igned), u(nsigned), f(loat), c(har), T (struct)."""
    got = _CODE_CLASS.get(code)
    if got is None:
        got = _CODE_CLASS[code] = _code_class(code)
    return got


_CODE_CLASS: dict[str, tuple[str, int]] = {}


def _code_class(code: str) -> tuple[str, int]:
    if code == "P":
        return "u", ffi.sizeof("void *")
    if code == "c":
        return "c", 1
    if code in "fd":
        return "f", 4 if code == "f" else 8
    if code == "T":
        return "T", 0
    return ("s" if code.islower() else "u"), {"b": 1, "h": 2, "i": 4, "q": 8}[code.lower()]


def element_matches(want: str, fmt: str, itemsize: int) -> bool:
    """Whether a buffer format (struct syntax) holds elements of code `want` exactly."""
    if fmt[:1] in "@=<":
        fmt = fmt[1:]
    if len(fmt) != 1 or fmt not in _FMT_CLASS:
        return False
    cls, size = code_class(want)
    got = _FMT_CLASS[fmt]
    if cls == "c":  # char buffers: any 1-byte char or integer element
        return got in ("c", "s", "u") and itemsize == 1
    return got == cls and itemsize == size


class ParamSpec:
    """How one parameter is converted: its kind and everything the checks need."""

    __slots__ = ("index", "name", "type", "canonical", "kind", "ctype", "low", "high", "elem", "tag", "const",
                 "stream", "typename", "companion", "extent", "check", "accepted")

    def __init__(self, index: int, p: Param, kind: str, ctype: str, **kw: Any) -> None:
        self.index = index
        self.name = p.name
        self.type = p.type
        self.canonical = p.canonical
        self.kind = kind
        self.ctype = ctype  # the C type the value is passed as (names the compiled extension's shape)
        self.low = kw.get("low", 0)
        self.high = kw.get("high", 0)
        self.elem = kw.get("elem", "")
        self.tag = kw.get("tag")
        self.const = kw.get("const", False)
        self.stream = kw.get("stream", False)
        self.typename = p.type.replace("const ", "").strip()
        self.companion: int | None = None  # index of the partner (buffer <-> byte count)
        self.extent = 0  # bytes the buffer must hold at least (fixed extents)
        self.check = "x"  # the compiled fast path's letter (set by Contract)
        self.accepted = ""  # what a pointer parameter accepts, in words (set by Contract)


def _int_range(ctype: str) -> tuple[int, int, bool]:
    """(lowest, highest, signed) of an integer C type."""
    if ctype == "char":
        signed = ffi.CHAR_IS_SIGNED
    else:
        signed = not (ctype.startswith(("unsigned", "uint")) or ctype == "size_t")
    bits = 8 * ffi.sizeof(ctype)
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1, True) if signed else (0, (1 << bits) - 1, False)


def classify(index: int, p: Param, h: Hints) -> ParamSpec:
    """The kind of one parameter, from its canonical C type (its shape: cfacts.shape)."""
    sh = cfacts.shape(p.canonical, p.type, h)
    k = sh.kind
    if k == STRUCT:
        return ParamSpec(index, p, STRUCT, sh.scalar, tag=sh.tag)
    if k == FLOAT:
        return ParamSpec(index, p, FLOAT, sh.scalar)
    if k in (INT, DEVPTR):
        lo, hi, _ = _int_range(sh.scalar)
        return ParamSpec(index, p, k, sh.scalar, low=0 if k == DEVPTR else lo, high=hi)
    if k == HANDLE:
        return ParamSpec(index, p, HANDLE, "void *", low=0, high=ffi.POINTER_MAX, stream=sh.tag == "CUstream_st")
    if k == STRUCTPTR:
        return ParamSpec(index, p, STRUCTPTR, "void *", elem="T", tag=sh.tag, const=sh.const)
    if k in (CSTR, ARRAY):
        return ParamSpec(index, p, k, "void *", elem=_elem_code(sh.elem), const=sh.const)
    return ParamSpec(index, p, k, "void *", const=sh.const)  # FUNCPTR, INBUF, OUTBUF


def _elem_code(elem: str) -> str:
    """An array's element code: "c", "P", "f", "d" or the integer's struct letter."""
    if elem in ("c", "P"):
        return elem
    if elem in ("float", "double"):
        return elem[0]
    _, _, signed = _int_range(elem)
    return _INT_CODES[(signed, ffi.sizeof(elem))]


def bindable(abi: Abi, h: Hints) -> None:
    """Raise the TypeError that building `abi`'s [Contract][cuentry.calls.contract.Contract] would (a parameter
    type with no conversion), without building it: what may be refused at resolution when the contract
    itself is built at the first use. Whether a type classifies depends on its canonical spelling alone, so
    each is classified once per catalog."""
    done = h.classified
    for i, p in enumerate(abi.signature.params):
        if p.canonical not in done:
            classify(i, p, h)
            done.add(p.canonical)


_FAST_INT = {(-(1 << 7), (1 << 7) - 1): "b", (0, (1 << 8) - 1): "B", (-(1 << 15), (1 << 15) - 1): "h",
             (0, (1 << 16) - 1): "H", (-(1 << 31), (1 << 31) - 1): "i", (0, (1 << 32) - 1): "I",
             (-(1 << 63), (1 << 63) - 1): "q", (0, (1 << 64) - 1): "Q"}


def _fast_letter(s: ParamSpec) -> str:
    """The compiled fast path's letter: what C converts itself (a subset of this contract)."""
    if s.companion is not None or s.extent:
        return "x"
    if s.kind == INT:
        return _FAST_INT.get((s.low, s.high), "x")
    if s.kind == FLOAT:
        return "f" if s.ctype == "float" else "d"
    return {HANDLE: "P", DEVPTR: "D", CSTR: "S", INBUF: "V", OUTBUF: "W",
            ARRAY: "o" if s.elem != "T" else "x"}.get(s.kind, "x")


# --- values ------------------------------------------------------------------------------


def _bindings_int(v: Any, s: ParamSpec) -> int | None:
    """cuda.bindings (cuda-python) handle objects: their documented int() gives the handle's value (exact)."""
    mod = type(v).__module__ or ""
    if mod.startswith(("cuda.bindings.", "cuda.cuda", "cuda.ccuda")) and type(v).__name__ in (
            s.typename, s.typename.split("_v")[0]):
        try:
            return exact_int(int(v))
        except (_Sealed, Exception):
            return None
    return None


class Reporter:
    """What every conversion raises through: errors that say where the value was given and what is accepted.

    [Contract][cuentry.calls.contract.Contract] words them per call argument, [Value][cuentry.calls.contract.Value]
    per out() element or kernel parameter; the converters themselves are the same functions."""

    label = ""
    hint = ""
    function = ""

    def where(self, s: ParamSpec) -> str:
        return self.label

    def _structs(self, tag: str) -> Any:
        raise NotImplementedError

    def error(self, s: ParamSpec, value: Any, accepted: str) -> ArgumentError:
        return ArgumentError(f"{self.where(s)}: got {_show(value)}; accepted: {accepted}", hint=self.hint)

    def refusal(self, s: ParamSpec, what: str, accepted: str) -> ArgumentError:
        """An error whose 'got' part is already worded (`what`: e.g. "a Tensor whose __index__ raised ...")."""
        return ArgumentError(f"{self.where(s)}: got {what}; accepted: {accepted}", hint=self.hint)

    def range_error(self, s: ParamSpec, value: int) -> ArgumentRangeError:
        return ArgumentRangeError(
            f"{self.where(s)}: {value} is outside the range of "
            f"{s.ctype if s.kind == INT else 'a pointer'}, {s.low}..{s.high}",
            function=self.function, parameter=s.name, value=value, low=s.low, high=s.high,
            hint=f"pass a value in {s.low}..{s.high}" + (f"; {self.hint}" if self.hint else ""))


_DEVICE_TYPES = frozenset({"CUdevice", "CUdevice_v1"})


def device_of(v: Any) -> tuple[int, int] | None:
    """(ordinal, CUdevice) of a cuda.core `Device`, duck-typed by its public attributes (a type named `Device`
    with an int `device_id`; its `handle`, a cuda.bindings CUdevice or an int, when it has one), else None.

    Never imports cuda.core: an object that only looks like one is read the same way, and an attribute that
    raises or holds anything else makes it not a Device."""
    if type(v).__name__ != "Device" or isinstance(v, (int, float, str, bytes)):
        return None
    try:
        ordinal = v.device_id
        handle = getattr(v, "handle", None)
    except Exception:
        return None
    if type(ordinal) is not int or not 0 <= ordinal < 1 << 31:
        return None
    if handle is None:
        return ordinal, ordinal
    if type(handle) is not int and type(handle).__name__ == "CUdevice" and (type(handle).__module__ or "").startswith(
            ("cuda.bindings", "cuda.cuda")):
        try:
            handle = exact_int(int(handle))
        except Exception:
            return None
    return (ordinal, handle) if type(handle) is int and 0 <= handle < 1 << 31 else None


class Contract(Reporter):
    """The conversion of one ABI's arguments, with errors naming the function and the parameter."""

    def __init__(self, abi: Abi, hints: Hints, structs: Callable[[str], Any]) -> None:
        self.abi = abi
        self.label = f"{abi.symbol}@{abi.version}" + (f" ({abi.exported})" if abi.exported else "")
        self.function = abi.symbol
        self.hint = f"signature: {abi.c_typedef()}"
        self.specs = tuple(classify(i, p, hints) for i, p in enumerate(abi.signature.params))
        self.names = tuple(s.name for s in self.specs)
        self._struct_of = structs
        by_name = {s.name: s for s in self.specs}
        for buf, count in COMPANIONS:
            b, c = by_name.get(buf), by_name.get(count)
            if b is not None and c is not None and b.kind in POINTER_KINDS and c.kind == INT:
                b.companion, c.companion = c.index, b.index
        for s in self.specs:
            s.extent = FIXED_EXTENT.get((abi.symbol, s.name), 0)
            s.check = _fast_letter(s)
            s.accepted = _accepted(s)
        self.checks = "".join(s.check for s in self.specs)
        self.ctypes = tuple(s.ctype for s in self.specs)
        self.ffi_type = f"int(*)({', '.join(self.ctypes) or 'void'})"
        self.doc = (f"{abi.pfn}({', '.join(self.names)}): returns the CUresult as an int; .checked(...) raises "
                    "CudaError. See .abi.c_typedef().")
        self.elems = "".join(s.elem[:1] if s.kind == ARRAY else "-" for s in self.specs)
        self._device_facts(abi, by_name)

    def _device_facts(self, abi: Abi, by_name: Mapping[str, ParamSpec]) -> None:
        """Device pointers, their DEVICE_RANGES rows, the stream parameter and what a NULL stream means."""
        self.devptrs = tuple(s.index for s in self.specs if s.kind == DEVPTR)
        self.ranges = _device_ranges(abi.symbol, by_name)
        self.stream_index = next((s.index for s in self.specs if s.stream), None)
        # What a NULL stream means for this ABI, in the special handles both protocols use.
        self.null_stream = names.STREAM_PER_THREAD_HANDLE if abi.stream == "per_thread" else names.STREAM_LEGACY_HANDLE

    # errors ---------------------------------------------------------------------------
    def where(self, s: ParamSpec) -> str:
        return f"{self.label}: argument {s.index + 1} '{s.name}' ({s.type})"

    def _structs(self, tag: str) -> Any:
        return self._struct_of(tag)

    def arity_error(self, args: tuple[Any, ...], kw: Mapping[str, Any]) -> ArgumentError:
        n = len(self.names)
        listed = ", ".join(self.names) or "none"
        fn = self.abi.symbol
        unknown = [k for k in kw if k not in self.names]
        if unknown:
            text = f"{fn}() got an unexpected keyword argument {unknown[0]!r} (parameters: {listed})"
        elif len(args) > n:
            text = f"{fn}() takes {n} positional argument{'s' if n != 1 else ''} ({listed}) but {len(args)} were given"
        else:
            dup = [k for k in kw if k in self.names[:len(args)]]
            if dup:
                text = f"{fn}() got multiple values for argument {dup[0]!r}"
            else:
                missing = [m for m in self.names[len(args):] if m not in kw]
                text = (f"{fn}() missing {len(missing)} required positional argument{'s' if len(missing) != 1 else ''}:"
                        f" {', '.join(repr(m) for m in missing)} (parameters: {listed})")
        return ArgumentError(text, hint=f"signature: {self.abi.c_typedef()}")

    # conversion -------------------------------------------------------------------------
    def arguments(self, args: tuple[Any, ...], kw: Mapping[str, Any]) -> tuple[Any, ...]:
        """Positional arguments from positional and keyword ones (by the catalog's names)."""
        if not kw:
            if len(args) != len(self.names):
                raise self.arity_error(args, kw)
            return args
        if len(args) > len(self.names) or any(k not in self.names or k in self.names[:len(args)] for k in kw):
            raise self.arity_error(args, kw)
        try:
            return (*args, *(kw[n] for n in self.names[len(args):]))
        except KeyError:
            raise self.arity_error(args, kw) from None

    def convert(self, args: tuple[Any, ...], kw: Mapping[str, Any], keep: list[Any],
                sync: Callable[[int], int] | None = None) -> list[Any]:
        """C-ready values for `args`/`kw`; keep-alive objects go to `keep` (hold it during the call).

        `sync(stream)` synchronises a stream (cuStreamSynchronize of the same driver) for a
        `__cuda_array_interface__` that names a stream the call does not run on; without it such an
        object is refused.
        """
        values = self.arguments(args, kw)
        out = [_CONVERT[s.kind](self, s, v, keep) for s, v in zip(self.specs, values, strict=True)]
        if self.devptrs:
            self._device_memory(out, keep, sync)
        for s in self.specs:
            if s.companion is not None and s.kind in POINTER_KINDS:
                self._check_extent(s, out, values, keep)
        return out

    def _check_extent(self, s: ParamSpec, out: list[Any], values: tuple[Any, ...], keep: list[Any]) -> None:
        """A byte count must not exceed the buffer it describes (when cuentry knows the buffer's size)."""
        c = self.specs[s.companion]  # type: ignore[index]
        count = out[c.index]
        if count < 0:
            raise self.error(c, values[c.index], f"0..{c.high} (a byte count)")
        size = _extent(values[s.index], out[s.index], keep)
        if size is not None and count > size:
            raise self.error(c, values[c.index], f"at most {size}: '{s.name}' holds {size} bytes")

    # device memory ----------------------------------------------------------------------
    def run_stream(self, out: list[Any]) -> int:
        """The stream this call runs on, as a protocol handle: its CUstream argument, NULL as 1 or 2 by mode."""
        if self.stream_index is not None:
            h = out[self.stream_index]
            if h:
                return int(h)
        return self.null_stream

    def _device_memory(self, out: list[Any], keep: list[Any], sync: Callable[[int], int] | None) -> None:
        """Objects given for device pointers: their addresses, then their extents against the call's counts,
        then the streams their interfaces ask to synchronise."""
        pending = [i for i in self.devptrs if type(out[i]) is _Pending]
        if not pending:
            return
        run = self.run_stream(out)
        extents: dict[int, devmem.Extent] = {}
        for i in pending:
            out[i], ext = device_object(self, self.specs[i], out[i].value, run, keep)
            if ext is not None:
                extents[i] = ext
        for di, access, factor, counts in self.ranges:
            ext = extents.get(di)
            if ext is not None:
                self._check_device_range(di, access, factor, counts, out, ext)
        for stream in sorted({e.stream for e in extents.values() if e.stream is not None and e.stream != run}):
            self._synchronise(stream, run, sync, next(self.specs[i] for i, e in extents.items() if e.stream == stream))

    def _check_device_range(self, di: int, access: str, factor: int, counts: tuple[int, ...], out: list[Any],
                            ext: devmem.Extent) -> None:
        s = self.specs[di]
        if access == "w" and not ext.writable:
            raise self.refusal(s, f"a read-only object (its {ext.source} says so): the driver writes here",
                               "a writable device array or an int address")
        if access in "wr" and not ext.contiguous:
            raise self.refusal(s, f"a non-contiguous object (its {ext.source} has gaps): the driver "
                               f"{'writes' if access == 'w' else 'reads'} one contiguous range",
                               "a contiguous device array (e.g. t.contiguous()) or an int address")
        need = factor
        for ci in counts:
            need *= out[ci]
        have = ext.available(out[di])
        if need > have:
            c = self.specs[counts[-1]]
            expr = " x ".join([str(factor)] * (factor != 1) + [f"{self.specs[ci].name} ({out[ci]})" for ci in counts])
            raise self.refusal(c, f"{out[c.index]!r}: {expr} = {need} bytes, but '{s.name}' holds {have} bytes "
                               "from its address", f"a count within the {ext.nbytes}-byte object")

    def _synchronise(self, stream: int, run: int, sync: Callable[[int], int] | None, s: ParamSpec) -> None:
        """The interface's stream is not the one this call runs on: synchronise it first, as the protocol asks."""
        if sync is None:
            raise self.refusal(s, f"an array whose __cuda_array_interface__ names stream {stream:#x}, which cuentry "
                               "cannot synchronise here", f"the same stream as this call's ({run:#x}), or "
                               "an int address after synchronising it yourself")
        rc = sync(stream)
        if rc:
            raise self.refusal(s, f"an array whose __cuda_array_interface__ stream {stream:#x} did not synchronise "
                               f"(cuStreamSynchronize answered {rc})", "an array on a live stream")


def device_object(r: Reporter, s: ParamSpec, v: Any, run: int, keep: list[Any]) -> tuple[int, devmem.Extent | None]:
    """(address, extent or None) of an object given for a device pointer (`run`: the stream the work runs on);
    the object and what holds its export go to `keep`. The one reading of device memory objects: call
    arguments and kernel parameters alike."""
    try:
        addr, ext, hold = devmem.convert(v, run)
    except devmem.Refused as why:
        raise r.refusal(s, str(why), _DEVPTR_ACCEPTED) from None
    except Exception as exc:  # a foreign object's protocol machinery failing: a refusal, not a traceback
        raise r.refusal(s, f"a {type(v).__name__} that failed while being read ({type(exc).__name__}: "
                        f"{shorten(str(exc))})", _DEVPTR_ACCEPTED) from None
    if not s.low <= addr <= s.high:
        raise r.range_error(s, addr)
    keep.append(v)
    if hold is not None:
        keep.append(hold)
    return addr, ext


class _Pending:
    """A device-pointer argument that is an object: resolved once every argument (the stream too) is converted."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_DEVPTR_ACCEPTED = ("an int device address, a cuda.bindings CUdeviceptr, a CUDA array (__cuda_array_interface__: "
                    "torch, CuPy, numba), a CUDA __dlpack__ object or a cuda.core Buffer (never a host array, None, "
                    "bool, float or str)")


def _device_ranges(symbol: str, by_name: Mapping[str, ParamSpec]) -> tuple[tuple[int, str, int, tuple[int, ...]], ...]:
    """DEVICE_RANGES rows of one function, as parameter indexes (rows whose parameters it lacks are left out)."""
    got = []
    for dev, access, factor, counts in DEVICE_RANGES.get(symbol, ()):
        d = by_name.get(dev)
        cs = [by_name.get(n) for n in counts]
        if d is not None and d.kind == DEVPTR and all(c is not None and c.kind == INT for c in cs):
            got.append((d.index, access, factor, tuple(c.index for c in cs if c is not None)))
    return tuple(got)


def fast_check(s: ParamSpec) -> tuple[str, tuple[Any, ...]] | None:
    """The pure backend's shortcut for one parameter, as (letter, constants), or None where it has none.

    A shortcut takes a subset of what the contract accepts, giving the same C value, and leaves everything
    else to the contract: `i` an exact int in (low, high) (integers, enums, device addresses); `h` an exact
    int in 0..high or None (handles); `a` a cuentry Out whose element code is in the constant set, or None
    (typed arrays); `v`/`w` an Out (initialised), bytes (`v`, inputs only) or None (`void *`); `f`/`d` an
    exact float (`f`: within a float's range); `s` bytes, None or a char Out (`const char *`).
    """
    if s.companion is not None or s.extent:
        return None
    k = s.kind
    if k in (INT, DEVPTR):
        return "i", (s.low, s.high)
    if k == HANDLE:
        return "h", (s.high,)
    if k == ARRAY:
        return "a", (frozenset(c for c in "bBhHiIqQfdcP" if out_matches(s.elem, c)),)
    if k in (INBUF, OUTBUF):
        return ("v" if k == INBUF else "w"), ()
    if k == FLOAT:
        return ("f" if s.ctype == "float" else "d"), ()
    if k == CSTR:
        return "s", (frozenset("cbB"),)
    return None


_OUT_TYPES = frozenset({Out, KernelParams})


def _show(v: Any) -> str:
    if isinstance(v, Out):
        return repr(v)
    text = repr(v) if isinstance(v, (int, float, str, bytes, type(None))) else f"a {type(v).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _extent(v: Any, address: int, keep: list[Any]) -> int | None:
    """Bytes a pointer argument provides, or None when unknown (None, address()).

    Never asked of the object again: an Out's facts are fixed, and a buffer's size is the one of the
    export the conversion took (kept in `keep`), whatever the object would answer now.
    """
    if type(v) in _OUT_TYPES:
        _, count, itemsize, _ = out_facts(v)
        return count * itemsize
    if type(v) is bytes:
        return len(v)
    if type(v) is str:
        return len(v.encode())
    if v is None or type(v) is Address:
        return None
    if isinstance(v, (ctypes.Structure, ctypes.Union)):
        return ctypes.sizeof(v)
    for k in keep:
        if isinstance(k, ctypes.Array) and ffi.ctypes_address(k) == address:
            return ctypes.sizeof(k)
    return 0  # not reached: every other accepted argument is a buffer export in keep


def _is_out(v: Any) -> bool:
    return type(v) in _OUT_TYPES


def _int(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    if type(v) is int:
        n = v
    elif isinstance(v, (bool, float, str, bytes)) or v is None:
        raise c.error(s, v, f"an int in {s.low}..{s.high} (no bool, float, str or None)")
    else:
        got = _bindings_int(v, s)
        if got is None and s.typename in _DEVICE_TYPES:
            dev = device_of(v)
            got = None if dev is None else dev[1]
        if got is None:
            try:
                got = exact_int(v)
            except _Sealed as why:
                raise c.refusal(s, str(why), f"an int in {s.low}..{s.high}, or an object with __index__ "
                                             "returning one") from None
        n = got
    if not s.low <= n <= s.high:
        raise c.range_error(s, n)
    return n


def _exact_number(v: Any) -> int | float | None:
    """An int or float argument as an exact int or float (subclasses by their stored value), else None."""
    t = type(v)
    if t is int or t is float:
        return v  # type: ignore[no-any-return]
    if isinstance(v, bool):
        return None
    if isinstance(v, float):
        return float.__float__(v)
    if isinstance(v, int):
        return int.__index__(v)
    return None


def _float(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> float:
    n = _exact_number(v)
    if n is None:
        raise c.error(s, v, f"a float or int ({s.ctype})")
    try:
        f = float(n)
    except OverflowError:
        raise c.error(s, v, f"a number that fits a {s.ctype}") from None
    if s.ctype == "float" and f - f == 0.0 and abs(f) > 3.4028234663852886e38:  # finite, beyond FLT_MAX
        raise c.error(s, v, "a number that fits a float (|x| <= 3.4028235e38)")
    return f


def _handle(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    if v is None:
        return 0
    if type(v) is int:
        n = v
    elif s.stream and getattr(v, "__cuda_stream__", None) is not None:
        n = _stream_protocol(c, s, v)
    else:
        got = _bindings_int(v, s) if not isinstance(v, (bool, float, str, bytes)) else None
        if got is None and s.stream:
            got = _framework_stream(v)
        if got is None:
            what = "an int handle, None (NULL)" + (", an object with __cuda_stream__, a cuda.bindings CUstream, "
                                                   "a torch/cupy stream" if s.stream else
                                                   f", a cuda.bindings {s.typename}")
            raise c.error(s, v, what)
        n = got
    if not 0 <= n <= ffi.POINTER_MAX:
        raise c.range_error(s, n)
    return n


def _stream_protocol(c: Reporter, s: ParamSpec, v: Any) -> int:
    proto = v.__cuda_stream__
    try:
        got = proto() if callable(proto) else proto
    except Exception as exc:
        raise c.error(s, v, f"an object whose __cuda_stream__() works (it raised {type(exc).__name__})") from None
    if not (isinstance(got, tuple) and len(got) == 2 and type(got[0]) is int and got[0] == 0
            and type(got[1]) is int):
        raise c.error(s, v, "an object whose __cuda_stream__() returns (0, handle int)")
    return got[1]


def _framework_stream(v: Any) -> int | None:
    """torch's Stream.cuda_stream and cupy's Stream.ptr: the documented ints of those stream objects."""
    root = (type(v).__module__ or "").split(".")[0]
    if root not in ("torch", "cupy") or "Stream" not in type(v).__name__:
        return None
    got = getattr(v, "cuda_stream" if root == "torch" else "ptr", None)
    return got if type(got) is int else None


def _devptr(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> Any:
    """An int address as given; an object becomes a _Pending, resolved by Contract._device_memory."""
    if type(v) is int:
        n = v
    elif isinstance(v, (bool, float, str, bytes)) or v is None:
        raise c.error(s, v, _DEVPTR_ACCEPTED)
    elif isinstance(v, int):
        n = int.__index__(v)  # an int subclass (an IntEnum): its stored value, never its comparisons
    else:
        return _Pending(v)
    if not s.low <= n <= s.high:
        raise c.range_error(s, n)
    return n


def _pointer_common(c: Reporter, s: ParamSpec, v: Any, accepted: str) -> int | None:
    """None and address(): the answers shared by every pointer kind (None otherwise)."""
    if v is None:
        return 0
    if type(v) is Address:
        return v.value
    if isinstance(v, (int, float)):
        raise c.error(s, v, accepted + "; a raw address only as cuentry.address(n)")
    if isinstance(v, str) and s.kind != CSTR:
        raise c.error(s, v, accepted + " (never str)")
    return None


def _writable(c: Reporter, s: ParamSpec, v: Any, keep: list[Any], accepted: str) -> int:
    """A writable, C-contiguous buffer's address (the ctypes view holding its export goes to keep)."""
    try:
        mv = memoryview(v)
    except TypeError:
        raise c.error(s, v, accepted) from None
    except (ValueError, BufferError) as exc:  # a released memoryview, an export the object refuses
        raise c.refusal(s, f"a {type(v).__name__} that cannot export its buffer ({exc})", accepted) from None
    return _checked_buffer(c, s, v, mv, mv.format, mv.itemsize, keep, accepted)


def _checked_buffer(c: Reporter, s: ParamSpec, v: Any, mv: memoryview, fmt: str, itemsize: int, keep: list[Any],
                    accepted: str) -> int:
    """The address of the buffer `mv` (elements of format `fmt`, `itemsize` bytes: the exporter's own, also
    where `mv` is a byte view of part of it), after every check of a pointer parameter's buffer."""
    if mv.readonly:
        raise c.error(s, v, accepted + " (this buffer is read-only)")
    if not mv.c_contiguous:
        raise c.error(s, v, accepted + " (this buffer is not C-contiguous)")
    if "O" in fmt:
        raise c.error(s, v, accepted + " (never a buffer of Python objects)")
    if s.kind == ARRAY and not element_matches(s.elem, fmt, itemsize):
        cls, size = code_class(s.elem)
        raise c.error(s, v, accepted + f" (its elements are {fmt!r} of {itemsize} bytes; "
                                       f"{s.canonical} needs {size}-byte {_CLASS_WORD[cls]} elements)")
    need = max(s.extent, code_class(s.elem)[1] if s.kind == ARRAY else 0)
    if mv.nbytes < need:
        raise c.error(s, v, accepted + f" (it holds {mv.nbytes} bytes; at least {need} needed)")
    addr, view = ffi.buffer_address(mv)  # this one export: its address and its size are the ones checked
    keep.append(view)
    return addr


_CLASS_WORD = {"s": "signed integer", "u": "unsigned integer", "f": "floating", "c": "char", "T": "struct"}


def _out(c: Reporter, s: ParamSpec, v: Any, accepted: str) -> int:
    """An Out: its element type must match the parameter's (structs: the same tag)."""
    ptr, count, itemsize, code = _facts(c, s, v, accepted)
    if s.kind == ARRAY and not out_matches(s.elem, code):
        raise c.error(s, v, accepted + f" (this Out holds {v.ctype!r})")
    if s.kind == STRUCTPTR and v._tag != s.tag:
        raise c.error(s, v, accepted + f" (this Out holds {v.ctype!r})")
    if count * itemsize < s.extent:
        raise c.error(s, v, accepted + f" (it holds {count * itemsize} bytes; {s.extent} needed)")
    return ptr


def _facts(c: Reporter, s: ParamSpec, v: Any, accepted: str) -> tuple[int, int, int, str]:
    try:
        return out_facts(v)
    except _Sealed as why:
        raise c.refusal(s, str(why), accepted) from None


def out_matches(want: str, code: str) -> bool:
    """Whether an Out with element code `code` may be passed where elements `want` are expected."""
    if want == "c":
        return code in "cbB"
    return code != "T" and code != "c" and code_class(code) == code_class(want)


def _accepted(s: ParamSpec) -> str:
    """What a pointer parameter accepts, in words (for its errors)."""
    if s.kind == ARRAY:
        cls, size = code_class(s.elem)
        return (f"a cuentry.out() of the pointed-to type, or a writable buffer of {size}-byte {_CLASS_WORD[cls]} "
                "elements (a ctypes instance, ctypes.byref or ctypes.pointer of one), None or cuentry.address(n)")
    if s.kind == STRUCTPTR:
        return f"cuentry.out({s.tag!r}) (or a struct from one, or ctypes.byref of it), None or cuentry.address(n)"
    return _ACCEPTED.get(s.kind, "")


_ACCEPTED = {
    CSTR: "bytes, str (UTF-8, no NUL), a cuentry.out('char', n), None or cuentry.address(n)",
    INBUF: "bytes, a writable buffer (bytearray, array, numpy, ctypes), a cuentry.out(), None or cuentry.address(n)",
    OUTBUF: "a writable buffer (bytearray, array, numpy, ctypes, ctypes.byref/pointer), a cuentry.out(), None or "
            "cuentry.address(n)",
    FUNCPTR: "a ctypes CFUNCTYPE function (kept alive by you while the driver may call it), None or "
             "cuentry.address(n)",
}


def _cstr(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if type(v) is str:
        if "\x00" in v:
            raise c.error(s, v, acc)
        v = v.encode()
        keep.append(v)
    if type(v) is bytes:
        return ffi.bytes_address(v)
    if _is_out(v):
        return _out(c, s, v, acc) if _facts(c, s, v, acc)[3] in "cbB" else _raise(c.error(s, v, acc))
    raise c.error(s, v, acc)


def _raise(exc: Exception) -> int:
    raise exc


def _inbuf(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if type(v) is bytes:
        return ffi.bytes_address(v)
    if _is_out(v):
        return _facts(c, s, v, acc)[0]
    ref = _reference(c, s, v, keep, acc)
    return ref if ref is not None else _writable(c, s, v, keep, acc)


def _writable_out(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    """An output buffer (`void *` with a byte count) or a typed output array: the same rules, the
    element type and the count checked by `_out`/`_writable` from the parameter's spec."""
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if _is_out(v):
        return _out(c, s, v, acc)
    if isinstance(v, bytes):
        raise c.error(s, v, acc + " (bytes are immutable)")
    ref = _reference(c, s, v, keep, acc)
    return ref if ref is not None else _writable(c, s, v, keep, acc)


def _reference(c: Reporter, s: ParamSpec, v: Any, keep: list[Any], accepted: str) -> int | None:
    """`ctypes.byref(x[, offset])` or a ctypes pointer: the memory of the object it refers to, from the offset on,
    under the very checks of a buffer (element type, bytes needed); None when `v` is neither."""
    try:
        ref = ffi.ctypes_reference(v)
    except ValueError as why:
        raise c.refusal(s, str(why), accepted + "; a raw address only as cuentry.address(n)") from None
    if ref is None:
        return None
    owner, offset = ref
    if owner is None:
        return 0  # a NULL pointer, as None
    if s.kind == STRUCTPTR:
        if type(owner) is not c._structs(s.tag) or offset:  # type: ignore[arg-type]
            raise c.error(s, v, accepted + f" (it refers to a {type(owner).__name__})")
        keep.append(owner)
        return ffi.ctypes_address(owner)
    mv = memoryview(owner)
    if offset % max(mv.itemsize, 1):
        raise c.error(s, v, accepted + f" (offset {offset} is inside a {mv.itemsize}-byte element)")
    return _checked_buffer(c, s, v, mv.cast("B")[offset:], mv.format, mv.itemsize, keep, accepted)


def _structptr(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if _is_out(v):
        return _out(c, s, v, acc)
    if type(v) is c._structs(s.tag):  # type: ignore[arg-type]
        keep.append(v)
        return ffi.ctypes_address(v)
    ref = _reference(c, s, v, keep, acc)
    if ref is not None:
        return ref
    raise c.error(s, v, acc)


def _funcptr(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if ffi.is_ctypes_function(v):
        keep.append(v)
        return ffi.function_address(v)
    raise c.error(s, v, acc)


def _struct(c: Reporter, s: ParamSpec, v: Any, keep: list[Any]) -> Any:
    cls = c._structs(s.tag)  # type: ignore[arg-type]
    if type(v) is cls:
        return v
    if _is_out(v) and v._tag == s.tag:
        _facts(c, s, v, f"cuentry.out({s.tag!r}) or its [0]")
        return v[0]
    raise c.error(s, v, f"a {s.tag} struct made by cuentry: cuentry.out({s.tag!r}) or its [0]")


_CONVERT: dict[str, Callable[[Reporter, ParamSpec, Any, list[Any]], Any]] = {
    INT: _int, FLOAT: _float, HANDLE: _handle, DEVPTR: _devptr, CSTR: _cstr, INBUF: _inbuf, OUTBUF: _writable_out,
    ARRAY: _writable_out, STRUCTPTR: _structptr, FUNCPTR: _funcptr, STRUCT: _struct,
}


# --- one value outside a call: out() elements and kernel parameters -------------------------------------------

class _Named:
    """The parameter-like facts classify() reads, for a value that is not a call's parameter."""

    __slots__ = ("name", "type", "canonical")

    def __init__(self, name: str, type: str, canonical: str) -> None:
        self.name, self.type, self.canonical = name, type, canonical


VALUE_KINDS = frozenset({INT, FLOAT, HANDLE, DEVPTR})


class Value:
    """The conversion of one value of a C type outside a call (an `out()` element, a `kernel_params` entry): the
    parameter kind and the converter a call argument of that type has, so both accept and refuse the same.

    Only scalar kinds (integers, enums, floats, handles, device pointers) convert here; other element types
    (structs, chars, pointers) are stored as their storage takes them. `None` from [of][cuentry.calls.contract.Value.of]
    marks those.
    """

    __slots__ = ("spec", "ctype")

    def __init__(self, spec: ParamSpec, ctype: str) -> None:
        self.spec = spec
        self.ctype = ctype

    @classmethod
    def of(cls, ctype: str, canonical: str, hints: Hints) -> Value | None:
        """The conversion of C type `ctype` (canonical type `canonical`), or None where it has none of its own."""
        try:
            spec = classify(0, _Named("value", ctype, canonical), hints)  # type: ignore[arg-type]
        except TypeError:
            return None
        if spec.kind not in VALUE_KINDS:
            return None
        spec.accepted = _DEVPTR_ACCEPTED if spec.kind == DEVPTR else _accepted(spec)
        return cls(spec, ctype)

    def convert(self, v: Any, where: str, stream: int | None = None) -> tuple[Any, list[Any]]:
        """(C-ready value, objects to keep alive with the storage) for `v`; ArgumentError naming `where` otherwise.

        `stream`: the stream the work using the value runs on (a handle; None: the legacy default stream), for
        device memory objects: DLPack exports for it, and a `__cuda_array_interface__` naming another stream
        is refused (no driver here to synchronise it)."""
        r = _At(where, self.ctype)
        s = self.spec
        keep: list[Any] = []
        got = _CONVERT[s.kind](r, s, v, keep)
        if type(got) is _Pending:
            run = stream or names.STREAM_LEGACY_HANDLE
            got, ext = device_object(r, s, v, run, keep)
            if ext is not None and ext.stream is not None and ext.stream != run:
                raise r.refusal(s, f"an array whose __cuda_array_interface__ names stream {ext.stream:#x}, not the "
                                f"stream the work runs on ({run:#x})", "an array on that stream: pass the launch's "
                                "stream (kernel_params(..., stream=s)), or an int address after synchronising "
                                "the array's stream yourself")
        return got, keep


class _At(Reporter):
    """Errors for one value, worded by where it was given (e.g. `kernel_params: value 2 (CUdeviceptr)`)."""

    def __init__(self, where: str, ctype: str) -> None:
        self.label = where
        self.function = where
        self.hint = f"pass what a call argument of type {ctype} takes (docs/calls.md)"
