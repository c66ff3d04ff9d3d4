"""The conversion contract: what each C parameter kind accepts, enforced in Python.

One :class:`ParamSpec` per parameter, derived from the catalog's canonical C type
(and, for device pointers and a few length-carrying buffers, the header's names).
:meth:`Contract.convert` turns call arguments into C-ready values (ints for every
pointer and handle, floats, ctypes structs for structs by value) or raises the
error that names the function, the parameter, the value and what is accepted.
The pure backend always runs it; the compiled extension converts the common
cases in C (accepting only what this module accepts, with the same result) and
hands everything else here, so both backends give the same answers.
See docs/calls.md for the table.
"""

from __future__ import annotations

import ctypes

from ..errors import ArgumentError, ArgumentRangeError
from . import ffi
from .values import Address, KernelParams, Out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..catalog import Abi, Param

# Parameter kinds.
INT, FLOAT, HANDLE, DEVPTR, CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR, STRUCT = (
    "int", "float", "handle", "devptr", "cstr", "inbuf", "outbuf", "array", "structptr", "funcptr", "struct")
POINTER_KINDS = frozenset({CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR})

# (buffer parameter, byte-count parameter) pairs, from the headers' parameter names: the count
# must not exceed the buffer. Checked wherever both appear in one signature with these kinds.
COMPANIONS: frozenset[tuple[str, str]] = frozenset({
    ("dstHost", "ByteCount"), ("srcHost", "ByteCount"), ("name", "len"), ("pciBusId", "len"),
    ("logBuffer", "bufferSize"), ("p", "bytesize"), ("ptr", "numbytes"), ("data", "dataSize"),
})
# Buffers the driver fills with a fixed number of bytes that no parameter states.
FIXED_EXTENT: dict[tuple[str, str], int] = {("cuDeviceGetLuid", "luid"): 8}
DEVPTR_TYPES = frozenset({"CUdeviceptr", "CUdeviceptr_v1", "CUdeviceptr_v2"})
_CHARS = frozenset({"char", "signed char", "unsigned char"})

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
    """Whether a buffer format (struct syntax) holds elements of code ``want`` exactly."""
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


def _strip(t: str) -> str:
    return " ".join(t.replace("volatile ", " ").split())


def _int_range(ctype: str) -> tuple[int, int, bool]:
    """(lowest, highest, signed) of an integer C type."""
    if ctype == "char":
        signed = ffi.CHAR_IS_SIGNED
    else:
        signed = not (ctype.startswith(("unsigned", "uint")) or ctype == "size_t")
    bits = 8 * ffi.sizeof(ctype)
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1, True) if signed else (0, (1 << bits) - 1, False)


class Hints:
    """The catalog facts the classification needs (opaque tags, enum signedness)."""

    def __init__(self, hints: Mapping[str, frozenset[str]]) -> None:
        self.opaque = hints["opaque"]
        self.unsigned = hints["unsigned_enums"]
        self.enum_typedefs = hints["enum_typedefs"]

    def scalar(self, t: str) -> str | None:
        """The C type an integer/enum/float type is passed as, or None."""
        if t.startswith("enum "):
            return "unsigned int" if t[5:] in self.unsigned else "int"
        if t in self.enum_typedefs:
            return "int"
        t = ffi.ALIASES.get(t, t)
        return t if t in ffi.SCALARS and t != "void *" else None


def classify(index: int, p: Param, h: Hints) -> ParamSpec:
    """The kind of one parameter, from its canonical C type."""
    t = _strip(p.canonical)
    if "(" in t:
        return ParamSpec(index, p, FUNCPTR, "void *")
    if not t.endswith("*"):
        return _by_value(index, p, t.replace("const ", "").strip(), h)
    inner = t[:-1].strip()
    const = inner.endswith(" const") or (not inner.rstrip(" const").endswith("*") and inner.startswith("const "))
    base = inner.replace("const", " ").split()
    base_t = " ".join(base)
    if base_t == "void":
        return ParamSpec(index, p, INBUF if const else OUTBUF, "void *", const=const)
    if base_t in _CHARS:
        return ParamSpec(index, p, CSTR if const else ARRAY, "void *", elem="c", const=const)
    if base_t.startswith(("struct ", "union ")) and not base_t.endswith("*"):
        tag = base_t.split()[1]
        if tag in h.opaque:
            return ParamSpec(index, p, HANDLE, "void *", low=0, high=ffi.POINTER_MAX, stream=tag == "CUstream_st")
        return ParamSpec(index, p, STRUCTPTR, "void *", elem="T", tag=tag, const=const)
    if base_t.endswith("*"):
        return ParamSpec(index, p, ARRAY, "void *", elem="P", const=const)
    s = h.scalar(base_t)
    if s is None:
        raise TypeError(f"no conversion for C type {p.canonical!r}")
    if s in ("float", "double"):
        return ParamSpec(index, p, ARRAY, "void *", elem="f" if s == "float" else "d", const=const)
    _, _, signed = _int_range(s)
    return ParamSpec(index, p, ARRAY, "void *", elem=_INT_CODES[(signed, ffi.sizeof(s))], const=const)


def _by_value(index: int, p: Param, t: str, h: Hints) -> ParamSpec:
    if t.startswith(("struct ", "union ")):
        return ParamSpec(index, p, STRUCT, t, tag=t.split()[1])
    s = h.scalar(t)
    if s is None:
        raise TypeError(f"no conversion for C type {p.canonical!r}")
    if s in ("float", "double"):
        return ParamSpec(index, p, FLOAT, s)
    lo, hi, _ = _int_range(s)
    if p.type.replace("const ", "").strip() in DEVPTR_TYPES and ffi.sizeof(s) == 8:
        return ParamSpec(index, p, DEVPTR, s, low=0, high=hi)
    return ParamSpec(index, p, INT, s, low=lo, high=hi)


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
    """cuda.bindings (cuda-python) handle objects: their documented int() gives the handle's value."""
    mod = type(v).__module__ or ""
    if mod.startswith(("cuda.bindings.", "cuda.cuda", "cuda.ccuda")) and type(v).__name__ in (
            s.typename, s.typename.split("_v")[0]):
        got = int(v)
        return got if isinstance(got, int) else None
    return None


class Contract:
    """The conversion of one ABI's arguments, with errors naming the function and the parameter."""

    def __init__(self, abi: Abi, hints: Hints, structs: Callable[[str], Any]) -> None:
        self.abi = abi
        self.label = f"{abi.symbol}@{abi.version}" + (f" ({abi.exported})" if abi.exported else "")
        self.specs = tuple(classify(i, p, hints) for i, p in enumerate(abi.signature.params))
        self.names = tuple(s.name for s in self.specs)
        self._structs = structs
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

    # errors ---------------------------------------------------------------------------
    def error(self, s: ParamSpec, value: Any, accepted: str) -> ArgumentError:
        return ArgumentError(f"{self.label}: argument {s.index + 1} '{s.name}' ({s.type}): got "
                             f"{_show(value)}; accepted: {accepted}", hint=f"signature: {self.abi.c_typedef()}")

    def range_error(self, s: ParamSpec, value: int) -> ArgumentRangeError:
        return ArgumentRangeError(
            f"{self.label}: argument {s.index + 1} '{s.name}' ({s.type}): {value} is outside the range of "
            f"{s.ctype if s.kind == INT else 'a pointer'}, {s.low}..{s.high}",
            function=self.abi.symbol, parameter=s.name, value=value, low=s.low, high=s.high,
            hint=f"pass a value in {s.low}..{s.high}; signature: {self.abi.c_typedef()}")

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

    def convert(self, args: tuple[Any, ...], kw: Mapping[str, Any], keep: list[Any]) -> list[Any]:
        """C-ready values for ``args``/``kw``; keep-alive objects go to ``keep`` (hold it during the call)."""
        values = self.arguments(args, kw)
        out = [_CONVERT[s.kind](self, s, v, keep) for s, v in zip(self.specs, values, strict=True)]
        for s in self.specs:
            if s.companion is not None and s.kind in POINTER_KINDS:
                self._check_extent(s, out, values)
        return out

    def _check_extent(self, s: ParamSpec, out: list[Any], values: tuple[Any, ...]) -> None:
        """A byte count must not exceed the buffer it describes (when cuentry knows the buffer's size)."""
        c = self.specs[s.companion]  # type: ignore[index]
        count = out[c.index]
        if count < 0:
            raise self.error(c, values[c.index], f"0..{c.high} (a byte count)")
        size = _extent(values[s.index])
        if size is not None and count > size:
            raise self.error(c, values[c.index], f"at most {size}: '{s.name}' holds {size} bytes")


NOT_FAST: Any = object()  # a fast converter's answer for "not mine: run the full contract"


def fast_converter(s: ParamSpec) -> Callable[[Any], Any] | None:
    """The pure backend's shortcut for the common exact cases of one parameter (a subset of this contract,
    with the same result), answering NOT_FAST for anything else; None where a parameter has no shortcut."""
    if s.companion is not None or s.extent:
        return None
    lo, hi, k = s.low, s.high, s.kind
    if k in (INT, DEVPTR):
        return lambda v: v if type(v) is int and lo <= v <= hi else NOT_FAST
    if k == HANDLE:
        return lambda v: v if type(v) is int and 0 <= v <= hi else 0 if v is None else NOT_FAST
    if k == ARRAY:
        codes = frozenset(c for c in "bBhHiIqQfdcP" if out_matches(s.elem, c))
        return lambda v: v._ptr if type(v) in _OUT_TYPES and v._code in codes else 0 if v is None else NOT_FAST
    if k in (INBUF, OUTBUF):
        ok_bytes = k == INBUF
        return lambda v: (v._ptr if type(v) in _OUT_TYPES else ffi.bytes_address(v) if ok_bytes and type(v) is bytes
                          else 0 if v is None else NOT_FAST)
    return None


_OUT_TYPES = frozenset({Out, KernelParams})


def _show(v: Any) -> str:
    if isinstance(v, Out):
        return repr(v)
    text = repr(v) if isinstance(v, (int, float, str, bytes, type(None))) else f"a {type(v).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _extent(v: Any) -> int | None:
    """Bytes a pointer argument provides, or None when unknown (None, address())."""
    if isinstance(v, Out):
        return int(v.count) * int(v.itemsize)
    if isinstance(v, (bytes, str)):
        return len(v.encode() if isinstance(v, str) else v)
    if v is None or isinstance(v, Address):
        return None
    if isinstance(v, (ctypes.Structure, ctypes.Union)):
        return ctypes.sizeof(v)
    with memoryview(v) as mv:
        return mv.nbytes


def _is_out(v: Any) -> bool:
    return isinstance(v, Out)


def _int(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    if type(v) is int:
        n = v
    elif isinstance(v, (bool, float, str, bytes)) or v is None:
        raise c.error(s, v, f"an int in {s.low}..{s.high} (no bool, float, str or None)")
    else:
        got = _bindings_int(v, s)
        if got is None:
            try:
                got = v.__index__()
            except AttributeError:
                raise c.error(s, v, f"an int in {s.low}..{s.high}, or an object with __index__") from None
        n = got
    if not s.low <= n <= s.high:
        raise c.range_error(s, n)
    return n


def _float(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise c.error(s, v, f"a float or int ({s.ctype})")
    try:
        f = float(v)
    except OverflowError:
        raise c.error(s, v, f"a number that fits a {s.ctype}") from None
    if s.ctype == "float" and f - f == 0.0 and abs(f) > 3.4028234663852886e38:  # finite, beyond FLT_MAX
        raise c.error(s, v, "a number that fits a float (|x| <= 3.4028235e38)")
    return f


def _handle(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
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


def _stream_protocol(c: Contract, s: ParamSpec, v: Any) -> int:
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


def _devptr(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    if type(v) is int:
        n = v
    elif isinstance(v, (bool, float, str, bytes)) or v is None:
        raise c.error(s, v, "an int device address, a cuda.bindings CUdeviceptr or an object with "
                            "__cuda_array_interface__ (no None, bool, float, str)")
    else:
        got = _bindings_int(v, s)
        if got is None:
            cai = getattr(v, "__cuda_array_interface__", None)
            data = cai.get("data") if isinstance(cai, dict) else None
            if isinstance(data, tuple) and len(data) == 2 and type(data[0]) is int:
                got = data[0]
        if got is None:
            try:
                got = v.__index__()
            except AttributeError:
                raise c.error(s, v, "an int device address, a cuda.bindings CUdeviceptr or an object with "
                                    "__cuda_array_interface__") from None
        n = got
    if not s.low <= n <= s.high:
        raise c.range_error(s, n)
    return n


def _pointer_common(c: Contract, s: ParamSpec, v: Any, accepted: str) -> int | None:
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


def _writable(c: Contract, s: ParamSpec, v: Any, keep: list[Any], accepted: str) -> int:
    """A writable, C-contiguous buffer's address (the ctypes view holding its export goes to keep)."""
    try:
        mv = memoryview(v)
    except TypeError:
        raise c.error(s, v, accepted) from None
    with mv:
        if mv.readonly:
            raise c.error(s, v, accepted + " (this buffer is read-only)")
        if not mv.c_contiguous:
            raise c.error(s, v, accepted + " (this buffer is not C-contiguous)")
        if "O" in mv.format:
            raise c.error(s, v, accepted + " (never a buffer of Python objects)")
        if s.kind == ARRAY and not element_matches(s.elem, mv.format, mv.itemsize):
            cls, size = code_class(s.elem)
            raise c.error(s, v, accepted + f" (its elements are {mv.format!r} of {mv.itemsize} bytes; "
                                           f"{s.canonical} needs {size}-byte {_CLASS_WORD[cls]} elements)")
        need = max(s.extent, code_class(s.elem)[1] if s.kind == ARRAY else 0)
        if mv.nbytes < need:
            raise c.error(s, v, accepted + f" (it holds {mv.nbytes} bytes; at least {need} needed)")
        addr, view = ffi.buffer_address(v)
    keep.append(view)
    return addr


_CLASS_WORD = {"s": "signed integer", "u": "unsigned integer", "f": "floating", "c": "char", "T": "struct"}


def _out(c: Contract, s: ParamSpec, v: Any, accepted: str) -> int:
    """An Out: its element type must match the parameter's (structs: the same tag)."""
    if s.kind == ARRAY and not out_matches(s.elem, v._code):
        raise c.error(s, v, accepted + f" (this Out holds {v.ctype!r})")
    if s.kind == STRUCTPTR and getattr(v, "_tag", None) != s.tag:
        raise c.error(s, v, accepted + f" (this Out holds {getattr(v, 'ctype', '?')!r})")
    if v.count * v.itemsize < s.extent:
        raise c.error(s, v, accepted + f" (it holds {v.count * v.itemsize} bytes; {s.extent} needed)")
    return int(v._ptr)


def out_matches(want: str, code: str) -> bool:
    """Whether an Out with element code ``code`` may be passed where elements ``want`` are expected."""
    if want == "c":
        return code in "cbB"
    return code != "T" and code != "c" and code_class(code) == code_class(want)


def _accepted(s: ParamSpec) -> str:
    """What a pointer parameter accepts, in words (for its errors)."""
    if s.kind == ARRAY:
        cls, size = code_class(s.elem)
        return (f"a cuentry.out() of the pointed-to type, or a writable buffer of {size}-byte {_CLASS_WORD[cls]} "
                "elements, None or cuentry.address(n)")
    if s.kind == STRUCTPTR:
        return f"cuentry.out({s.tag!r}) (or a struct from one), None or cuentry.address(n)"
    return _ACCEPTED.get(s.kind, "")


_ACCEPTED = {
    CSTR: "bytes, str (UTF-8, no NUL), a cuentry.out('char', n), None or cuentry.address(n)",
    INBUF: "bytes, a writable buffer (bytearray, array, numpy, ctypes), a cuentry.out(), None or cuentry.address(n)",
    OUTBUF: "a writable buffer (bytearray, array, numpy, ctypes), a cuentry.out(), None or cuentry.address(n)",
    FUNCPTR: "a ctypes CFUNCTYPE function (kept alive by you while the driver may call it), None or "
             "cuentry.address(n)",
}


def _cstr(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
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
        return _out(c, s, v, acc) if v._code in "cbB" else _raise(c.error(s, v, acc))
    raise c.error(s, v, acc)


def _raise(exc: Exception) -> int:
    raise exc


def _inbuf(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if type(v) is bytes:
        return ffi.bytes_address(v)
    if _is_out(v):
        return int(v._ptr)
    return _writable(c, s, v, keep, acc)


def _writable_out(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    """An output buffer (``void *`` with a byte count) or a typed output array: the same rules, the
    element type and the count checked by ``_out``/``_writable`` from the parameter's spec."""
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if _is_out(v):
        return _out(c, s, v, acc)
    if isinstance(v, bytes):
        raise c.error(s, v, acc + " (bytes are immutable)")
    return _writable(c, s, v, keep, acc)


def _structptr(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if _is_out(v):
        return _out(c, s, v, acc)
    if type(v) is c._structs(s.tag):  # type: ignore[arg-type]
        keep.append(v)
        return ffi.ctypes_address(v)
    raise c.error(s, v, acc)


def _funcptr(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> int:
    acc = s.accepted
    got = _pointer_common(c, s, v, acc)
    if got is not None:
        return got
    if ffi.is_ctypes_function(v):
        keep.append(v)
        return ffi.function_address(v)
    raise c.error(s, v, acc)


def _struct(c: Contract, s: ParamSpec, v: Any, keep: list[Any]) -> Any:
    cls = c._structs(s.tag)  # type: ignore[arg-type]
    if type(v) is cls:
        return v
    if _is_out(v) and getattr(v, "_tag", None) == s.tag:
        return v[0]
    raise c.error(s, v, f"a {s.tag} struct made by cuentry: cuentry.out({s.tag!r}) or its [0]")


_CONVERT: dict[str, Callable[[Contract, ParamSpec, Any, list[Any]], Any]] = {
    INT: _int, FLOAT: _float, HANDLE: _handle, DEVPTR: _devptr, CSTR: _cstr, INBUF: _inbuf, OUTBUF: _writable_out,
    ARRAY: _writable_out, STRUCTPTR: _structptr, FUNCPTR: _funcptr, STRUCT: _struct,
}
