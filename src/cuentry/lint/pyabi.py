"""Python prototypes against the ABI they bind: ctypes `argtypes`/`restype`, calls, `CFUNCTYPE` and cffi.

The Python front end records each prototype it sees as a
[PyProto][cuentry.lint.facts.PyProto]: what the pointer is (an export taken from a
handle of libcuda by name, or the result of an entry-point request) and how each
argument is passed: the ctypes classes of its `argtypes`, or, for a call of an
export without them, the ctypes types of the arguments themselves. This module
asks [Catalog.judge][cuentry.catalog.Catalog.judge] which ABI that export or
request binds (never deciding it itself), then compares the prototype with that
ABI's C signature parameter by parameter, on a 64-bit platform: how each value is
passed (a 32-bit integer, a 64-bit integer, a pointer, a float, a double), and
for a pointer the width of the object behind it, since the driver writes through
out-parameters (`POINTER(c_size_t)` where the ABI writes an `unsigned int`). The
severity is the consequence: a pointer or size passed in another width, a write
past an object or into part of it, a call that passes too few arguments: errors;
a prototype that leaves parameters out but whose calls pass them right: a
warning; an older export bound only where the driver lacks the newer one: a note.

It also owns what a ctypes type is, by name: how it is passed and how wide it is
on LP64 (Linux, macOS) and LLP64 (Windows, where `c_long` has 32 bits).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..catalog import Abi, Catalog, Verdict, format_version
from ..names import FAULTS
from .facts import PyProto, Unit

__all__ = ["CTYPES_FUNCTIONS", "Hit", "c_class", "c_pointee", "check", "ctypes_class", "ctypes_width", "hits",
           "is_ctypes_type", "resolve_c"]


# (line, col, message, severity)
Hit = tuple[int, int, str, str]

_WIDTH = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "ptr": 8, "f32": 4, "f64": 8, "f80": 16}
_SCALARS = {
    **dict.fromkeys(("c_void_p", "c_char_p", "c_wchar_p", "py_object", "c_voidp", "HANDLE", "LPVOID", "HMODULE",
                     "LPCSTR", "LPSTR", "LPCWSTR", "LPWSTR"), "ptr"),
    **dict.fromkeys(("c_char", "c_byte", "c_ubyte", "c_int8", "c_uint8", "c_bool", "BYTE", "BOOLEAN"), "i8"),
    **dict.fromkeys(("c_short", "c_ushort", "c_int16", "c_uint16", "WORD", "SHORT", "USHORT"), "i16"),
    **dict.fromkeys(("c_int", "c_uint", "c_int32", "c_uint32", "c_wchar", "DWORD", "UINT", "INT", "BOOL", "LONG",
                     "ULONG"), "i32"),
    **dict.fromkeys(("c_longlong", "c_ulonglong", "c_int64", "c_uint64", "c_size_t", "c_ssize_t", "c_time_t",
                     "LARGE_INTEGER", "ULARGE_INTEGER"), "i64"),
    "c_float": "f32", "c_double": "f64", "c_longdouble": "f80",
}
_LONGS = ("c_long", "c_ulong")
"""The ctypes classes whose width is the platform's: 64 bits on LP64 (Linux, macOS), 32 on Windows."""
CTYPES_FUNCTIONS = frozenset({"POINTER", "pointer", "byref", "addressof", "cast", "sizeof", "CFUNCTYPE",
                              "WINFUNCTYPE", "PYFUNCTYPE", "CDLL", "WinDLL", "OleDLL", "PyDLL", "LoadLibrary",
                              "cdll", "windll", "oledll", "pydll", "Structure", "Union", "create_string_buffer",
                              "string_at", "memmove", "memset", "util", "RTLD_GLOBAL", "RTLD_LOCAL", "wintypes"})
"""Names of ctypes (and `ctypes.wintypes`) that are not a scalar type: what `from ctypes import *` binds besides
them."""

_C64 = re.compile(r"\b(?:(?:unsigned\s+)?long\s+long|size_t|ssize_t|u?int64_t|cuuint64_t|uintptr_t|ptrdiff_t)\b")
_CLONG = re.compile(r"\b(?:unsigned\s+|signed\s+)?long\b")
_C8 = re.compile(r"\b(?:(?:unsigned\s+|signed\s+)?char|u?int8_t|bool)\b")
_C16 = re.compile(r"\b(?:(?:unsigned\s+|signed\s+)?short|u?int16_t)\b")
_C32 = re.compile(r"\b(?:(?:unsigned\s+|signed\s+)?int|unsigned|u?int32_t|cuuint32_t|enum\s+\w+)\b")
_NAMES = {"ptr": "a pointer", "i32": "a 32-bit integer", "i64": "a 64-bit integer", "f32": "a float",
          "f64": "a double", "f80": "a long double", "void": "nothing", "struct": "a struct by value",
          "i8": "an 8-bit integer", "i16": "a 16-bit integer"}
_PLATFORM = {"windows": " on Windows (c_long is 32 bits there)", "linux": " on Linux and macOS (c_long is 64 bits)"}


def ctypes_class(name: str, platform: str = "") -> str | None:
    """How a ctypes class (by its name) passes a value as an argument: ptr, i32, i64, f32, f64, f80 (8- and 16-bit
    integers are passed as 32-bit ones); None if it is not a known ctypes scalar. `platform` "windows" makes `c_long`
    32 bits."""
    w = ctypes_width(name, platform)
    return "i32" if w in ("i8", "i16") else w


def ctypes_width(name: str, platform: str = "") -> str | None:
    """What a ctypes scalar class is in memory: i8, i16, i32, i64, ptr, f32, f64, f80; None if not known."""
    if name in _LONGS:
        return "i32" if platform == "windows" else "i64"
    return _SCALARS.get(name)


def is_ctypes_type(name: str) -> bool:
    """Whether `name` is a scalar type of ctypes (or ctypes.wintypes) this module knows."""
    return name in _SCALARS or name in _LONGS


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
    if _C64.search(t) or _CLONG.search(t):
        return "i64"
    if _C32.search(t) or _C8.search(t) or _C16.search(t):
        return "i32"
    if t.startswith(("struct ", "union ")):
        return "struct"
    return None


def c_pointee(canonical: str) -> str | None:
    """What a C pointer parameter points to (i8 ... f64, ptr), or None: not a pointer, `void *`, a struct, an
    array or a function (their width is not compared)."""
    t = re.sub(r"\b(?:const|volatile|restrict|__restrict)\b", " ", canonical).strip()
    if not t.endswith("*") or "(" in t or "[" in t:
        return None
    base = t[:-1].strip()
    if base.endswith("*"):
        return "ptr"
    if base == "void" or base.startswith(("struct ", "union ")):
        return None
    if re.search(r"\bdouble\b", base):
        return "f64"
    if re.search(r"\bfloat\b", base):
        return "f32"
    for pattern, width in ((_C64, "i64"), (_CLONG, "i64"), (_C8, "i8"), (_C16, "i16"), (_C32, "i32")):
        if pattern.search(base):
            return width
    return None


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
                   restype=resolve_c(p.c_ret, cat, local) if p.c_ret else None, where=p.where)


def _fits(want: str | None, got: str | None) -> bool:
    if want is None or got is None or want == "struct":
        return True                       # not known on one side: nothing to compare
    if want == got:
        return True
    return {want, got} == {"ptr", "i64"}  # the same 64-bit register on every 64-bit ABI


def _pointee_fault(want: str | None, got: str | None) -> str:
    """Why an out-parameter of `want` behind a pointer to an object of `got` is wrong ('' when it is not)."""
    if want is None or got is None or want == got:
        return ""
    w, g = _WIDTH.get(want, 0), _WIDTH.get(got, 0)
    if not w or not g or w == g:
        return ""          # one width (a pointer in a 64-bit integer): every byte lands where it is read
    if w > g:
        return f"the driver writes {w} bytes there, into a {g}-byte object: a write past it"
    return f"the driver writes {w} bytes of the {g}-byte object there: the rest keeps what it held (a truncated value)"


def _count(p: PyProto, n: int) -> tuple[str, str] | None:
    """An argtypes list (or a call) of another length than the ABI's parameters: (why, severity)."""
    if p.args is None or len(p.args) == n:
        return None
    if p.maker == "call":
        if len(p.args) > n:
            return f"the call passes {len(p.args)} arguments for {n} parameters", "warning"
        return (f"the call passes {len(p.args)} arguments for {n} parameters: the driver reads the missing ones from "
                "registers nobody set"), "error"
    if len(p.args) > n:
        return f"{len(p.args)} argtypes for {n} parameters", "warning"
    short = p.fewest_args is None or p.fewest_args < n
    how = (f"and a call passes {p.fewest_args}: the driver reads the missing ones from registers nobody set"
           if p.fewest_args is not None and p.fewest_args < n else
           "(the calls pass them, as ctypes converts arguments without argtypes)" if not short else
           "(no call here passes the rest)")
    return f"{len(p.args)} argtypes for {n} parameters {how}", "error" if short else "warning"


def _compare(p: PyProto, abi: Abi) -> tuple[list[str], str]:
    """Where the prototype passes a value differently from the ABI's C signature, and the worst severity."""
    params = abi.signature.params
    out: list[str] = []
    sev = "warning"
    counted = _count(p, len(params))
    if counted is not None:
        out.append(counted[0])
        sev = counted[1]
    for i, (got, prm) in enumerate(zip(p.args or (), params, strict=False)):
        want = c_class(prm.canonical)
        if not _fits(want, got):
            out.append(f"parameter {i + 1} ({prm.name}: {prm.type}) is {_NAMES.get(want or '', want)}, "
                       f"the {'call' if p.maker == 'call' else 'prototype'} passes {_NAMES.get(got or '', got)}")
            sev = "error"
    for i, (got, prm) in enumerate(zip(p.pointees, params, strict=False)):
        why = _pointee_fault(c_pointee(prm.canonical), got)
        if why:
            out.append(f"parameter {i + 1} ({prm.name}: {prm.type}) points to {_NAMES.get(got or '', got)}: {why}")
            sev = "error"
    if p.restype is not None:
        want = c_class(abi.signature.returns) or "i32"     # CUresult, an enum
        if not _fits(want, p.restype) and not (p.restype == "void" and want == "i32"):
            out.append(f"the result is {_NAMES.get(want, want)} ({abi.signature.returns}), "
                       f"restype is {_NAMES.get(p.restype, p.restype)}")
            sev = "error"
    return out, sev


def _abi_text(abi: Abi) -> str:
    ps = ", ".join(prm.type for prm in abi.signature.params)
    return f"{abi.pfn}: {abi.signature.returns}({ps})"


def _what(p: PyProto) -> str:
    if p.export:
        return f"{p.handle}.{p.export}" if p.handle else repr(p.export)
    return f"the pointer of {p.symbol!r} at {p.version}"


def _newer(p: PyProto, abi: Abi, cat: Catalog) -> Abi | None:
    """A newer export of the same symbol and stream mode that the same binding tries too: `p`'s export is then only
    what drivers without it give."""
    found = [a for n in p.alternatives if (a := cat.by_exported(n)) is not None and a.symbol == abi.symbol
             and a.variant == abi.variant and a.version > abi.version]
    return max(found, key=lambda a: a.version) if found else None


def _mismatch(p: PyProto, abi: Abi, wrong: list[str], sev: str, cat: Catalog) -> tuple[str, str, str]:
    """The finding of a prototype that does not match the ABI it binds."""
    code = "CE011" if p.export else "CE004"
    how = "a call without argtypes, which passes each argument by its own type," if p.maker == "call" else \
        f"{p.maker} prototype"
    fallback = ""
    newer = _newer(p, abi, cat)
    if newer is not None:
        fallback = (f"; it is bound only where the driver lacks {newer.exported}, which the same lookup tries "
                    f"(drivers older than {format_version(newer.version)})")
        sev = "note"
    return code, sev, (f"{how} of {_what(p)}{p.where}{_PLATFORM.get(p.platform, '')} does not match the ABI it binds "
                       f"({_abi_text(abi)}): {'; '.join(wrong)}: the call passes its arguments another way than "
                       f"the function reads them{fallback}; take the signature from the catalog "
                       "(cuentry.Driver.call / cuentry.Table) or fix the prototype")


def check(p: PyProto, cat: Catalog) -> Iterator[tuple[str, str, str]]:
    """(rule code, severity, message) for one prototype; nothing when it matches what it binds."""
    p = _cdef_classes(p, cat)
    if p.optional and p.export and cat.by_exported(p.export) is None:
        return                            # a name tried where its absence is handled, and no driver has it
    verdict = _verdict(p, cat)
    if verdict is None:
        return
    if verdict.abi is None:
        yield from _never_resolves(p, verdict)
        return
    wrong, sev = _compare(p, verdict.abi)
    if wrong:
        yield _mismatch(p, verdict.abi, wrong, sev, cat)
    elif p.args is None and p.export and not p.pointees:
        for f in verdict.faults:          # no prototype to compare: the export's own verdict (an old export)
            code = FAULTS.get(f.kind, ("note", "CE011", None, None))[1] or "CE011"
            yield code, f.severity, f"{_what(p)}{p.where}: {f.message} ({f.fix})"


def _verdict(p: PyProto, cat: Catalog) -> Verdict | None:
    """The catalog's verdict on what the prototype is applied to: an export by name, or a request's pointer."""
    if p.export:
        return cat.judge(p.export, None, None, api="dlsym")
    if p.symbol and p.version is not None:
        return cat.judge(p.symbol, p.version, p.flags, api=p.api or "cuGetProcAddress_v2")
    return None


def _never_resolves(p: PyProto, verdict: Verdict) -> Iterator[tuple[str, str, str]]:
    """The faults of a name no driver gives (unless its absence is handled where it is looked up)."""
    if p.optional:
        return
    for f in verdict.faults:
        code = FAULTS.get(f.kind, ("error", "CE003", None, None))[1] or "CE003"
        if f.kind in ("unknown_symbol", "misspelled", "suffixed_name") or p.export:
            yield code, f.severity, (f"{_what(p)}{p.where}: {f.message}; it never resolves ({f.fix})"
                                     if p.export else f"{_what(p)}{p.where}: {f.message} ({f.fix})")


def hits(u: Unit, cat: Catalog, code: str) -> Iterator[Hit]:
    """The hits of rule `code` on the file's Python prototypes (the rules call this): each distinct prototype is
    judged once (a table's rows bound at one place often repeat)."""
    seen: set[tuple[int, int, str]] = set()
    judged: dict[tuple[object, ...], list[tuple[str, str, str]]] = {}
    for p in u.py_protos:
        key = _key(p)
        if key not in judged:
            judged[key] = list(check(p, cat))
        for c, sev, msg in judged[key]:
            if c == code and (p.line, p.col, msg) not in seen:
                seen.add((p.line, p.col, msg))
                yield p.line, p.col, msg, sev


def _key(p: PyProto) -> tuple[object, ...]:
    return (p.maker, p.export, p.handle, p.symbol, p.version, p.flags, p.api, p.args, p.restype, p.c_args, p.c_ret,
            p.c_typedefs, p.pointees, p.fewest_args, p.platform, p.alternatives, p.optional, p.where)
