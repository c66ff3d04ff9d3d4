"""C type facts: how each C type of the catalog is passed, from its canonical spelling alone.

The kind of a parameter (integer, device pointer, handle, string, buffer, ...), the scalar C type a
value is passed as, the size of each scalar on this platform and the signedness of each enum: the
facts the call layer converts by, the generators annotate and declare by, and lint reads. Beside the
catalog (whose `ffi_hints` say which tags are opaque and which enums unsigned), importing neither
ctypes nor the call layer: `cuentry generate` and lint need no FFI.
"""

from __future__ import annotations

import os
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "ALIASES", "ARRAY", "CHARS", "CSTR", "DEVPTR", "DEVPTR_TYPES", "FLOAT", "FUNCPTR", "HANDLE", "INBUF", "INT",
    "KINDS", "OUTBUF", "POINTER_KINDS", "SCALAR_NAMES", "STRUCT", "STRUCTPTR", "Hints", "Shape", "enum_type", "shape",
    "sizeof", "strip",
]

# Parameter kinds.
INT, FLOAT, HANDLE, DEVPTR, CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR, STRUCT = (
    "int", "float", "handle", "devptr", "cstr", "inbuf", "outbuf", "array", "structptr", "funcptr", "struct")
KINDS = (INT, FLOAT, HANDLE, DEVPTR, CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR, STRUCT)
POINTER_KINDS = frozenset({CSTR, INBUF, OUTBUF, ARRAY, STRUCTPTR, FUNCPTR})

DEVPTR_TYPES = frozenset({"CUdeviceptr", "CUdeviceptr_v1", "CUdeviceptr_v2"})
CHARS = frozenset({"char", "signed char", "unsigned char"})

# Every scalar C type a catalog signature uses, with its struct-module code (native size).
_CODES = {
    "int": "i", "unsigned int": "I", "short": "h", "unsigned short": "H", "char": "c", "signed char": "b",
    "unsigned char": "B", "long": "l", "unsigned long": "L", "long long": "q", "unsigned long long": "Q",
    "float": "f", "double": "d", "size_t": "N", "int8_t": "b", "uint8_t": "B", "int16_t": "h", "uint16_t": "H",
    "int32_t": "i", "uint32_t": "I", "int64_t": "q", "uint64_t": "Q", "intptr_t": "n", "uintptr_t": "N",
    "ptrdiff_t": "n", "wchar_t": "", "void *": "P",
}
SCALAR_NAMES = frozenset(_CODES)
ALIASES = {"unsigned": "unsigned int", "signed": "int", "signed int": "int", "long int": "long",
           "unsigned long int": "unsigned long", "long long int": "long long",
           "unsigned long long int": "unsigned long long", "_Bool": "unsigned char"}


def sizeof(ctype: str) -> int:
    """The size in bytes of a scalar C type of `SCALAR_NAMES` on this platform."""
    code = _CODES[ctype]
    if not code:  # wchar_t: UTF-16 on Windows, UTF-32 elsewhere
        return 2 if os.name == "nt" else 4
    return struct.calcsize(code)


def strip(t: str) -> str:
    """A C type with `volatile` dropped and its spaces normalised."""
    return " ".join(t.replace("volatile ", " ").split())


class Hints:
    """The catalog facts the classification needs (opaque tags, enum signedness)."""

    def __init__(self, hints: Mapping[str, frozenset[str]]) -> None:
        self.opaque = hints["opaque"]
        self.unsigned = hints["unsigned_enums"]
        self.enum_typedefs = hints["enum_typedefs"]
        self.classified: set[str] = set()  # canonical types the call layer classified (see contract.bindable)

    def scalar(self, t: str) -> str | None:
        """The C type an integer/enum/float type is passed as, or None."""
        if t.startswith("enum "):
            return enum_type(t[5:], self)
        if t in self.enum_typedefs:
            return "int"
        t = ALIASES.get(t, t)
        return t if t in SCALAR_NAMES and t != "void *" else None


def enum_type(tag: str, hints: Hints) -> str:
    """The C type an enum with tag `tag` is passed as: `unsigned int` or `int`, as the catalog records."""
    return "unsigned int" if tag in hints.unsigned else "int"


class Shape:
    """What a parameter's C type is: its kind and what the kind needs (scalar, element, tag, const)."""

    __slots__ = ("const", "elem", "kind", "scalar", "tag")

    def __init__(self, kind: str, scalar: str = "", *, elem: str = "", tag: str = "", const: bool = False) -> None:
        self.kind = kind
        self.scalar = scalar  # the C type the value is passed as ("void *" for every pointer)
        self.elem = elem      # an array's element: "c" (chars), "P" (pointers) or its scalar C type
        self.tag = tag        # the struct/union tag of STRUCT, STRUCTPTR and HANDLE
        self.const = const


def shape(canonical: str, spelled: str, h: Hints) -> Shape:
    """The shape of a parameter from its canonical C type (and, for device pointers, its spelled type).

    Raises:
        TypeError: a C type with no conversion.
    """
    t = strip(canonical)
    if "(" in t:
        return Shape(FUNCPTR, "void *")
    if not t.endswith("*"):
        return _by_value(canonical, t.replace("const ", "").strip(), spelled, h)
    inner = t[:-1].strip()
    const = inner.endswith(" const") or (not inner.rstrip(" const").endswith("*") and inner.startswith("const "))
    base_t = " ".join(inner.replace("const", " ").split())
    if base_t == "void":
        return Shape(INBUF if const else OUTBUF, "void *", const=const)
    if base_t in CHARS:
        return Shape(CSTR if const else ARRAY, "void *", elem="c", const=const)
    if base_t.startswith(("struct ", "union ")) and not base_t.endswith("*"):
        tag = base_t.split()[1]
        return Shape(HANDLE if tag in h.opaque else STRUCTPTR, "void *", elem="T", tag=tag, const=const)
    if base_t.endswith("*"):
        return Shape(ARRAY, "void *", elem="P", const=const)
    s = h.scalar(base_t)
    if s is None:
        raise TypeError(f"no conversion for C type {canonical!r}")
    return Shape(ARRAY, "void *", elem=s, const=const)


def _by_value(canonical: str, t: str, spelled: str, h: Hints) -> Shape:
    if t.startswith(("struct ", "union ")):
        return Shape(STRUCT, t, tag=t.split()[1])
    s = h.scalar(t)
    if s is None:
        raise TypeError(f"no conversion for C type {canonical!r}")
    if s in ("float", "double"):
        return Shape(FLOAT, s)
    if spelled.replace("const ", "").strip() in DEVPTR_TYPES and sizeof(s) == 8:
        return Shape(DEVPTR, s)
    return Shape(INT, s)
