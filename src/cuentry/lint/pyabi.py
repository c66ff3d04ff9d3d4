"""Python prototypes against the ABI they bind: ctypes `argtypes`/`restype` and `CFUNCTYPE`.

The Python front end records each prototype it sees as a
[PyProto][cuentry.lint.facts.PyProto]: what the pointer is (an export taken from a
`CDLL` of libcuda by name, or the result of an entry-point request) and the ctypes
classes of its parameters and result. This module asks
[Catalog.judge][cuentry.catalog.Catalog.judge] which ABI that export or request binds
(never deciding it itself), then compares the prototype with that ABI's C signature
parameter by parameter, by how each value is passed on a 64-bit platform: a 32-bit
integer, a 64-bit integer, a pointer (the same register as a 64-bit integer), a float,
a double. A prototype that passes every parameter the way the ABI takes it is not a
finding; one that does not binds another ABI than the code means (an error), and so
does a name that no driver exports (it never resolves).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..catalog import Abi, Catalog
from ..names import FAULTS
from .facts import PyProto, Unit

__all__ = ["Hit", "c_class", "check", "ctypes_class", "hits", "resolve_c"]


# (line, col, message, severity)
Hit = tuple[int, int, str, str]

_CTYPES_CLASS = {
    **dict.fromkeys(("c_void_p", "c_char_p", "c_wchar_p", "py_object", "POINTER", "pointer", "CFUNCTYPE",
                     "c_voidp"), "ptr"),
    **dict.fromkeys(("c_int", "c_uint", "c_int32", "c_uint32", "c_short", "c_ushort", "c_int16", "c_uint16",
                     "c_byte", "c_ubyte", "c_int8", "c_uint8", "c_char", "c_bool", "c_wchar", "int", "bool"), "i32"),
    **dict.fromkeys(("c_long", "c_ulong", "c_longlong", "c_ulonglong", "c_int64", "c_uint64", "c_size_t",
                     "c_ssize_t"), "i64"),
    "c_float": "f32", "c_double": "f64", "c_longdouble": "f80", "None": "void",
}
"""How ctypes passes a value of each class (LP64: ``c_long`` is 64 bits, as on Linux)."""

_C64 = re.compile(r"\b(?:(?:unsigned\s+)?long(?:\s+long)?|size_t|ssize_t|u?int64_t|cuuint64_t|uintptr_t|ptrdiff_t)\b")
_C32 = re.compile(r"\b(?:(?:unsigned\s+|signed\s+)?(?:int|short|char)|unsigned|u?int(?:8|16|32)_t|cuuint32_t|bool"
                  r"|enum\s+\w+)\b")
_NAMES = {"ptr": "a pointer", "i32": "a 32-bit integer", "i64": "a 64-bit integer", "f32": "a float",
          "f64": "a double", "f80": "a long double", "void": "nothing", "struct": "a struct by value"}


def c_class(canonical: str) -> str | None:
    """How the C type (canonical spelling) is passed: ptr, i32, i64, f32, f64, struct, void; None if unknown."""
    t = canonical.strip()
    if "*" in t or "[" in t or "(" in t:
        return "ptr"
    if t == "void":
        return "void"
    if re.search(r"\bdouble\b", t):
        return "f64"
    if re.search(r"\bfloat\b", t):
        return "f32"
    if _C64.search(t):
        return "i64"
    if _C32.search(t):
        return "i32"
    if t.startswith(("struct ", "union ")):
        return "struct"
    return None


def ctypes_class(name: str) -> str | None:
    """How a ctypes class (by its name) passes a value; None if it is not a known ctypes class."""
    return _CTYPES_CLASS.get(name)


def resolve_c(type_text: str, cat: Catalog, local: dict[str, str]) -> str | None:
    """How a C type named in a cdef is passed, through its own typedefs and the catalog's."""
    t = " ".join(w for w in type_text.replace("*", " * ").split() if w not in ("const", "volatile", "struct",
                                                                                 "enum", "union"))
    if "*" in t or "[" in t:
        return "ptr"
    known = cat.types.get("typedefs", {})
    for _ in range(8):
        if t in local:
            t = local[t]
        elif t in known:
            return c_class(known[t]["canonical"])
        else:
            break
        if "*" in t:
            return "ptr"
    return c_class(t)


def _cdef_classes(p: PyProto, cat: Catalog) -> PyProto:
    """A cdef's prototype with its C types turned into how each value is passed."""
    if p.c_args is None:
        return p
    local = dict(p.c_typedefs)
    args = tuple(resolve_c(a, cat, local) for a in p.c_args)
    return PyProto(p.maker, p.line, p.col, export=p.export, handle=p.handle, args=args,
                   restype=resolve_c(p.c_ret, cat, local) if p.c_ret else None)


def _fits(want: str | None, got: str | None) -> bool:
    if want is None or got is None or want == "struct":
        return True                       # not known on one side: nothing to compare
    if want == got:
        return True
    return {want, got} == {"ptr", "i64"}  # the same 64-bit register on every 64-bit ABI


def _compare(p: PyProto, abi: Abi) -> list[str]:
    """Where the prototype passes a value differently from the ABI's C signature."""
    params = abi.signature.params
    out: list[str] = []
    if p.args is not None:
        if len(p.args) != len(params):
            out.append(f"{len(p.args)} argtypes for {len(params)} parameters")
        for i, (got, prm) in enumerate(zip(p.args, params, strict=False)):
            want = c_class(prm.canonical)
            if not _fits(want, got):
                out.append(f"parameter {i + 1} ({prm.name}: {prm.type}) is {_NAMES.get(want or '', want)}, "
                           f"the prototype passes {_NAMES.get(got or '', got)}")
    if p.restype is not None:
        want = c_class(abi.signature.returns) or "i32"     # CUresult, an enum
        if not _fits(want, p.restype) and not (p.restype == "void" and want == "i32"):
            out.append(f"the result is {_NAMES.get(want, want)} ({abi.signature.returns}), "
                       f"restype is {_NAMES.get(p.restype, p.restype)}")
    return out


def _abi_text(abi: Abi) -> str:
    ps = ", ".join(prm.type for prm in abi.signature.params)
    return f"{abi.pfn}: {abi.signature.returns}({ps})"


def check(p: PyProto, cat: Catalog) -> Iterator[tuple[str, str, str]]:
    """(rule code, severity, message) for one prototype; nothing when it matches what it binds."""
    p = _cdef_classes(p, cat)
    if p.export:
        verdict = cat.judge(p.export, None, None, api="dlsym")
        what = f"{p.handle}.{p.export}" if p.handle else repr(p.export)
    elif p.symbol and p.version is not None:
        verdict = cat.judge(p.symbol, p.version, p.flags, api=p.api or "cuGetProcAddress_v2")
        what = f"the pointer of {p.symbol!r} at {p.version}"
    else:
        return
    if verdict.abi is None:
        for f in verdict.faults:
            code = FAULTS.get(f.kind, ("error", "CE003", None, None))[1] or "CE003"
            if f.kind in ("unknown_symbol", "misspelled", "suffixed_name") or p.export:
                yield code, f.severity, (f"{what}: {f.message}; it never resolves ({f.fix})"
                                         if p.export else f"{what}: {f.message} ({f.fix})")
        return
    wrong = _compare(p, verdict.abi)
    if wrong:
        code = "CE011" if p.export else "CE004"
        yield code, "error", (f"{p.maker} prototype of {what} does not match the ABI it binds "
                              f"({_abi_text(verdict.abi)}): {'; '.join(wrong)}: the call passes its arguments "
                              "another way than the function reads them; take the signature from the catalog "
                              "(cuentry.Driver.call / cuentry.Table) or fix the prototype")
    elif p.args is None and p.export:
        for f in verdict.faults:          # no prototype to compare: the export's own verdict (an old export)
            code = FAULTS.get(f.kind, ("note", "CE011", None, None))[1] or "CE011"
            yield code, f.severity, f"{what}: {f.message} ({f.fix})"


def hits(u: Unit, cat: Catalog, code: str) -> Iterator[Hit]:
    """The hits of rule `code` on the file's Python prototypes (the rules call this)."""
    for p in u.py_protos:
        for c, sev, msg in check(p, cat):
            if c == code:
                yield p.line, p.col, msg, sev
