"""``cuentry generate c``: one self-contained C/C++ loader header for a manifest's table.

The header is single-file style: declarations always, the loader's definitions
where the including file defines ``<NAME>_IMPLEMENTATION``. It is C99 and
C++11, and it needs no CUDA header: every function-pointer type is written from
the catalog with fully resolved parameter types (``struct CUctx_st *`` for
``CUcontext``, ``unsigned long long`` for ``CUdeviceptr``), so it is the very
type ``cudaTypedefs.h`` declares, and it does not clash with a toolkit header
included before it:

* struct and union tags are only forward-declared (``struct CUctx_st;``), which
  is compatible with any later definition;
* enums (which C and C++ cannot forward-declare compatibly) are defined from the
  catalog only where no CUDA header has defined them: guarded by ``CUDA_VERSION``
  (or the interop header's include guard) against the first toolkit that has
  them, and by a ``CUENTRY_HAVE_*`` macro shared by all generated headers;
* the function-pointer typedefs carry the table's prefix
  (``acme_PFN_cuMemAlloc_v3020``) so they never collide with NVIDIA's.

The loader follows the same rules as :mod:`cuentry.driver` and
:mod:`cuentry.table`: ``cuGetProcAddress_v2`` where the driver has it, the v1 form
on 11.3-11.8 drivers, the catalog's exported names before that (never a name
made by appending suffixes), the table's explicit stream flag, CUresult, query
result and pointer all checked, fallbacks in order, and a report with the same
classifications and hints as :func:`cuentry.diagnostics.classify`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..calls import enum_type
from ..catalog import Abi, Catalog
from ..errors import TableDeclarationError
from ..names import format_version, parse_version
from .model import Plan, plan

if TYPE_CHECKING:
    from ..manifest import Manifest

_TAG = re.compile(r"\b(struct|union|enum)\s+(\w+)")
_ENUM_WORD = re.compile(r"\benum\s+\w+|\bCU\w+")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Where each typedef header's types come from, and that header's include guard.
_ORIGIN_GUARD = {
    "cudaTypedefs.h": "CUDA_VERSION",
    "cudaProfilerTypedefs.h": "cuda_profiler_H",
    "cudaGLTypedefs.h": "CUDAGL_H",
    "cudaEGLTypedefs.h": "CUDAEGL_H",
    "cudaVDPAUTypedefs.h": "CUDAVDPAU_H",
}

# cuda.h (12.0 and later) renames one entry point to another one's base name by a macro; with cuda.h
# included first, a table holding both would declare one member twice. (Its other renames go to
# suffixed export names, which are never member names.)
CUDA_H_RENAMES = {"cuGraphInstantiate": "cuGraphInstantiateWithFlags"}

# What the loader itself calls: (symbol, ABI version), from the catalog like everything else.
BOOTSTRAP = (("cuDriverGetVersion", 2020), ("cuGetErrorName", 6000),
             ("cuGetProcAddress", 11030), ("cuGetProcAddress", 12000))



def generate_c(manifest: Manifest) -> str:
    """The header text for ``manifest``'s table."""
    return render(plan(manifest), manifest.cat)


def _check_name(name: str) -> None:
    if not _C_IDENT.match(name) or name.startswith("_"):
        raise TableDeclarationError(
            f"table name {name!r} is not usable as a C prefix",
            hint='set [table] name = "..." in the manifest to a C identifier such as "acme"')
    up = name.upper()
    if up in ("CU", "CUDA", "CUDART", "CUENTRY") or up.startswith(("CU_", "CUDA_", "CUENTRY_")):
        raise TableDeclarationError(
            f"table name {name!r} would put the header's names in NVIDIA's or cuentry's namespace "
            f"({up}_OK, {name}_load, ...)", hint='name the table after your library, e.g. name = "acme"')


def _spell(cat: Catalog, ctype: str) -> str:
    """A return or parameter type with typedef names the catalog can resolve spelled out."""
    t = " ".join(ctype.split())
    typedefs = cat.types["typedefs"]
    info = typedefs.get(t.replace("const ", ""))
    if info is not None and info.get("canonical", "enum") != "enum":
        return ("const " if t.startswith("const ") else "") + str(info["canonical"])
    return t


def _declare(ctype: str, name: str) -> str:
    if not name:
        return ctype
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    return f"{ctype}{name}" if ctype.endswith("*") else f"{ctype} {name}"


def pfn_typedef(cat: Catalog, abi: Abi, name: str, cudaapi: str, respell: Callable[[str], str] = str) -> str:
    """``typedef <returns> (<cudaapi> *name)(<params>);`` with resolved types."""
    ret = respell(_spell(cat, abi.signature.returns))
    params = ", ".join(_declare(respell(_spell(cat, p.canonical)), p.name) for p in abi.signature.params) or "void"
    return f"typedef {ret} ({cudaapi} *{name})({params});"


class _Types:
    """The tags and enum definitions the header's typedefs need, with their guards."""

    def __init__(self, cat: Catalog) -> None:
        self.cat = cat
        self.tags: dict[str, str] = {}          # tag -> "struct" | "union"
        self.enums: dict[str, str] = {}         # key -> spelling ("enum X" or typedef name)
        self.names: dict[str, str] = {}         # cuda.h typedef name -> its resolved type
        order = {t: i for i, t in enumerate(cat.history)}
        self._first: dict[str, int] = {}
        self._origin: dict[str, str] = {}
        for abi in cat:
            idx = min((order.get(t, 1 << 20) for t in abi.toolkits), default=1 << 20)
            for t in self._words(abi):
                if idx < self._first.get(t, 1 << 20):
                    self._first[t] = idx
                if abi.header == "cudaTypedefs.h" or t not in self._origin:
                    self._origin[t] = _ORIGIN_GUARD.get(abi.header, "CUDA_VERSION")

    def _types_of(self, abi: Abi) -> list[str]:
        return [_spell(self.cat, abi.signature.returns), *(_spell(self.cat, p.canonical) for p in abi.signature.params)]

    def _words(self, abi: Abi) -> set[str]:
        out: set[str] = set()
        typedefs = self.cat.types["typedefs"]
        for t in self._types_of(abi):
            out.update(f"{k} {n}" for k, n in _TAG.findall(t))
            out.update(w for w in _WORD.findall(t) if w in typedefs and typedefs[w].get("canonical") == "enum")
        return out

    def add_names(self, abi: Abi) -> None:
        """The cuda.h type names an ABI's parameters are spelled with (CUdeviceptr, CUcontext, CUresult)."""
        if abi.header != "cudaTypedefs.h":
            return
        typedefs = self.cat.types["typedefs"]
        for t in (abi.signature.returns, *(p.type for p in abi.signature.params)):
            for w in _WORD.findall(t):
                canon = typedefs.get(w, {}).get("canonical", "enum")
                if w[:2] in ("CU", "cu") and canon != "enum":
                    self.names.setdefault(w, canon)
                    base = re.sub(r"_v\d+$", "", w)
                    if base != w and typedefs.get(base, {}).get("canonical") == canon:
                        self.names.setdefault(base, canon)

    def add(self, abi: Abi) -> None:
        for w in sorted(self._words(abi)):
            kind, _, tag = w.partition(" ")
            if kind in ("struct", "union"):
                self.tags.setdefault(tag, kind)
            elif kind == "enum":
                self.enums.setdefault(tag, w)
            else:
                self.enums.setdefault(w, w)

    def _late(self, word: str) -> int | None:
        """The CUDA_VERSION of the first toolkit that has ``word``, when that is after the catalog's first."""
        first = self._first.get(word, 0)
        return parse_version(self.cat.history[first]) if 0 < first < len(self.cat.history) else None

    def respell(self, text: str) -> str:
        """``text`` with each enum that an included CUDA header may predate named by its spelling macro.

        Whether an older header already has such an enum is unknown (it may exist before any
        entry point takes it), so the header never defines it next to a CUDA header: it spells
        the parameter by the enum where the header is new enough, by its underlying integer type
        where it is older (the same ABI; NVIDIA's own PFN typedef for it cannot exist there).
        """
        spelled = set(self.enums.values())

        def sub(m: re.Match[str]) -> str:
            word = m.group(0)
            return f"CUENTRY_SPELL_{word.replace(' ', '_')}" if word in spelled and self._late(word) else word

        return _ENUM_WORD.sub(sub, text)

    def _enum_lines(self, key: str, spelling: str) -> list[str]:
        word = spelling if spelling.startswith("enum ") else key
        ident = word.replace(" ", "_")
        guard = self._origin.get(word, "CUDA_VERSION")
        if spelling.startswith("enum "):
            body = ", ".join(f"{n} = {v}" for n, v in self.cat.types["enums"][key]["values"].items())
            text = f"{spelling} {{ {body} }};"
            under = enum_type(key, self.cat)
        else:
            text = f"typedef {self.cat.types['typedefs'][key]['type']} {key};"
            under = "int"
        out = [f"#if !defined(CUENTRY_HAVE_{ident}) && !defined({guard})", f"#define CUENTRY_HAVE_{ident} 1", text,
               "#endif"]
        late = self._late(word)
        if late:
            out += [f"#if !defined(CUENTRY_SPELL_{ident})",
                    f"#if !defined({guard}) || CUDA_VERSION >= {late}", f"#define CUENTRY_SPELL_{ident} {word}",
                    "#else", f"#define CUENTRY_SPELL_{ident} {under} /* the CUDA header included predates it */",
                    "#endif", "#endif"]
        return out

    def definitions(self) -> list[str]:
        out: list[str] = []
        if self.tags:
            out.append("/* Struct and union tags: declared only (include cuda.h before this header for their members). */")
            out.extend(f"{kind} {tag};" for tag, kind in sorted(self.tags.items()))
            out.append("")
        for key, spelling in sorted(self.enums.items()):
            out += self._enum_lines(key, spelling)
        if "CUuuid_st" in self.tags:
            # NVIDIA's own protocol (cuda.h and driver_types.h both test this macro): define it once, fully.
            out += ["#ifndef CU_UUID_HAS_BEEN_DEFINED", "#define CU_UUID_HAS_BEEN_DEFINED",
                    "struct CUuuid_st { char bytes[16]; };", "typedef struct CUuuid_st CUuuid;", "#endif"]
        if self.names:
            out += ["", "/* cuda.h's names for the types above, for code written without cuda.h. */"]
        for name, canon in sorted(self.names.items()):
            if name == "CUuuid":
                continue
            macro = f"CUENTRY_HAVE_typedef_{name}"
            out += [f"#if !defined({macro}) && !defined(CUDA_VERSION)", f"#define {macro} 1",
                    f"typedef {_declare(canon, name)};", "#endif"]
        return out


def _c_string(s: str | None) -> str:
    if s is None:
        return "0"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _report_size(p: Plan) -> int:
    """An upper bound for the report text: a header line plus one bounded line per pin."""
    per_pin = 700 + max(len(x.key) + len(x.abi.pfn) + 3 * len(x.symbol) + len(x.member) for x in p.pins)
    return 512 + len(p.pins) * per_pin


def render(p: Plan, cat: Catalog) -> str:
    """The header text for a plan."""
    _check_name(p.name)
    _check_members(p)
    if not p.slots:
        raise TableDeclarationError(f"table {p.name!r} has no entries", hint="list entries under required/optional")
    low, up = p.name, p.name.upper()
    cudaapi = f"{up}_CUDAAPI"
    types = _Types(cat)
    boot = [cat.bind(s, v, "legacy") for s, v in BOOTSTRAP]
    for abi in (*boot, *p.abis()):
        types.add(abi)
    for abi in p.abis():
        types.add_names(abi)
    pfns = [pfn_typedef(cat, a, f"{low}_{a.pfn}", cudaapi, types.respell) for a in (*boot, *p.abis())]
    pfns = list(dict.fromkeys(pfns))
    members = []
    for s in p.slots:
        for member, abi in s.members():
            note = "required" if s.required and member == s.attr else "optional"
            fb = "" if member == s.attr else f", fallback of {s.attr}"
            members.append(f"    {low}_{abi.pfn} {member}; /* {note}{fb}: {abi.pfn} */")
    subs: dict[str, Any] = {
        "@HEADER_DOC@": _doc(p),
        "@SOURCE@": _comment_text(os.path.basename(p.source)),
        "@VERSION@": __version__,
        "@CATALOG@": _comment_text(cat.primary_toolkit or "?"),
        "@MIN@": str(p.min_driver),
        "@MIN_RELEASE@": format_version(p.min_driver) if p.min_driver else "none",
        "@FLAGS@": str(p.flags),
        "@FLAGS_NAME@": p.flags_name,
        "@STREAM@": p.stream.replace("_", "-"),
        "@NENT@": str(len(p.slots)),
        "@NPIN@": str(len(p.pins)),
        "@RSIZE@": str(_report_size(p)),
        "@TYPES@": "\n".join([*types.definitions(), *_rename_guards(p, up)]),
        "@PFNS@": "\n".join(pfns),
        "@MEMBERS@": "\n".join(members),
        "@PINS@": _pins(p, low),
        "@QUERY_T@": types.respell("enum CUdriverProcAddressQueryResult_enum"),
        "@ENTRIES@": _entries(p),
    }
    text = _TEMPLATE
    for k, v in subs.items():
        text = text.replace(k, v)
    return text.replace("CUENTRY_PFX", up).replace("cuentry_pfx", low)


def _rename_guards(p: Plan, up: str) -> list[str]:
    members = {m for s in p.slots for m, _ in s.members()}
    out = []
    for name, target in CUDA_H_RENAMES.items():
        if name in members and target in members:
            error = (f'#error "{up}: cuda.h defines {name} as {target}, another member of this table: give one of '
                     f'the two entries another name in the manifest (name = ...) and regenerate"')
            out += [f"#if defined({name})", error, "#endif"]
    return out


# Words a struct member cannot be named in C or C++, and macros of the headers the loader includes.
_RESERVED_WORDS = """
auto break case char const continue default do double else enum extern float for goto if inline int long register
restrict return short signed sizeof static struct switch typedef union unsigned void volatile while _Bool _Complex
alignas alignof and and_eq asm bitand bitor bool catch char16_t char32_t char8_t class compl concept consteval
constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export false friend
module mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public reinterpret_cast
requires static_assert static_cast template this thread_local throw true try typeid typename using virtual wchar_t
xor xor_eq errno stdin stdout stderr NULL EOF offsetof assert va_start va_end va_arg va_copy
"""
_NOT_MEMBER_NAMES = frozenset(_RESERVED_WORDS.split())


def _check_members(p: Plan) -> None:
    for s in p.slots:
        for member, _ in s.members():
            if member in _NOT_MEMBER_NAMES:
                raise TableDeclarationError(
                    f"table {p.name!r}: entry name {member!r} is a C or C++ keyword or standard macro",
                    hint=f'give the entry another name = "..." in the manifest (e.g. "{member}_fn")')


def _comment_text(text: str) -> str:
    """Text that cannot end a C comment or hide a line break."""
    return "".join(c if c.isprintable() else "?" for c in text).replace("*/", "*?").replace("/*", "/?")


def _doc(p: Plan) -> str:
    lines = [f" *   {s.attr}: {' -> '.join(x.key for x in s.pins)} ({'required' if s.required else 'optional'})"
             for s in p.slots]
    return "\n".join(lines)


def _pins(p: Plan, low: str) -> str:
    versions: list[str] = []
    rows: list[str] = []
    index = 0
    for e, s in enumerate(p.slots):
        for x in s.pins:
            vname = f"{low}_impl_versions_{index}"
            versions.append(f"static const int {vname}[] = {{{', '.join(map(str, x.versions))}}};")
            plat = (1 if "linux" in x.abi.platforms else 0) | (2 if "windows" in x.abi.platforms else 0)
            rows.append(f"    {{{_c_string(x.symbol)}, {x.version}, {x.first}, {_c_string(x.abi.pfn)}, "
                        f"{_c_string(x.abi.exported)}, {plat}, {e}, {_c_string(x.member)}, "
                        f"offsetof(struct {low}_table, {x.member}), {vname}, {len(x.versions)}}},")
            index += 1
    return "\n".join(versions) + f"\nstatic const struct {low}_impl_pin {low}_impl_pins[] = {{\n" + "\n".join(rows) + "\n};"


def _entries(p: Plan) -> str:
    rows = []
    first = 0
    for s in p.slots:
        rows.append(f"    {{{_c_string(s.attr)}, {1 if s.required else 0}, {first}, {len(s.pins)}}},")
        first += len(s.pins)
    return "\n".join(rows)


_TEMPLATE = r"""/* Generated by `cuentry generate c` from @SOURCE@ (cuentry @VERSION@, catalog @CATALOG@):
 * the cuentry_pfx entry-point table. Do not edit; regenerate.
 *
 * Entries (symbol@ABI version, fallbacks after ->), stream mode @STREAM@:
@HEADER_DOC@
 *
 * Use: in exactly one C or C++ file
 *     #define CUENTRY_PFX_IMPLEMENTATION
 *     #include "this header"
 * and include it plainly everywhere else. Link with -ldl (and -pthread on old glibc).
 * If you include cuda.h / cudaTypedefs.h, include them BEFORE this header.
 *
 *     struct cuentry_pfx_table t;
 *     if (cuentry_pfx_load(&t) != CUENTRY_PFX_OK) { fputs(cuentry_pfx_report(&t), stderr); return 1; }
 *     t.cuMemAlloc(&dptr, n);                        required entries are never NULL after a 0 return
 *     if (t.cuMulticastCreate) t.cuMulticastCreate(...);   optional entries: NULL when unavailable;
 *     if (cuentry_pfx_available(&t, "cuMulticastCreate")) ...  test before every call, never call NULL
 *
 * A fallback of the same function type fills the entry's own member; one of another type fills
 * its own member (named in the struct below); cuentry_pfx_available() is true when any did.
 */
#ifndef CUENTRY_PFX_CUENTRY_H
#define CUENTRY_PFX_CUENTRY_H

#include <stddef.h>
#include <stdint.h>

/* The deployment floor: the lowest driver version (cuDriverGetVersion) the required entries need. */
#define CUENTRY_PFX_MIN_DRIVER @MIN@ /* @MIN_RELEASE@ */
/* The table's pinned stream mode: the flags every query passes. */
#define CUENTRY_PFX_STREAM_FLAGS @FLAGS@ /* @FLAGS_NAME@ */
#define CUENTRY_PFX_ENTRY_COUNT @NENT@
#define CUENTRY_PFX_PIN_COUNT @NPIN@

/* cuentry_pfx_load() results */
#define CUENTRY_PFX_OK 0
#define CUENTRY_PFX_ERR_REQUIRED 1 /* a required entry did not resolve: see cuentry_pfx_report() */
#define CUENTRY_PFX_ERR_DRIVER 2   /* the driver could not be loaded or asked at all */
#define CUENTRY_PFX_ERR_ARGUMENT 3 /* a NULL table or getter */

#if defined(_WIN32)
#define CUENTRY_PFX_CUDAAPI __stdcall
#else
#define CUENTRY_PFX_CUDAAPI
#endif

@TYPES@

#ifdef __cplusplus
extern "C" {
#endif

/* Function-pointer types, each the exact ABI of the named NVIDIA PFN typedef. */
@PFNS@

struct cuentry_pfx_pin_state {
    int asked;          /* 1 when the driver was asked for this pin */
    int result;         /* CUresult (cudaError_t on the runtime path) of the query; -1: not asked */
    int query;          /* query result (0 found, 1 symbol not found, 2 version not sufficient); -1: none */
    int emulated;       /* 1: the query result was derived by the loader (v1 form, exported names) */
    int classification; /* index into the report's classification names */
    int resolved;       /* 1 when this pin filled its member */
};

struct cuentry_pfx_state {
    int loaded;
    int status;         /* what the load returned */
    int access;         /* how entries were asked: see the report */
    int driver_version; /* 0 when unknown */
    int version_result; /* CUresult of cuDriverGetVersion; -1: not called */
    struct cuentry_pfx_pin_state pins[@NPIN@];
    char report[@RSIZE@];
};

struct cuentry_pfx_table {
@MEMBERS@
    struct cuentry_pfx_state _state; /* read through cuentry_pfx_available() and cuentry_pfx_report() */
};

/* Load the driver (libcuda.so.1 / nvcuda.dll; define CUENTRY_PFX_DRIVER_LIBRARY in the implementation
   file to change it) and resolve every entry, once per process (thread-safe); copies the result
   into *t. Returns CUENTRY_PFX_OK when every required entry resolved. */
int cuentry_pfx_load(struct cuentry_pfx_table *t);
/* The process-wide table cuentry_pfx_load() fills (loading it on first use); never NULL. */
const struct cuentry_pfx_table *cuentry_pfx_get(void);
/* Resolve into *t through a caller's cuGetProcAddress_v2 (no global state; one caller per t at a time). */
int cuentry_pfx_load_with(struct cuentry_pfx_table *t, cuentry_pfx_PFN_cuGetProcAddress_v12000 getter);
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12050
typedef cudaError_t (CUDARTAPI *cuentry_pfx_runtime_getter)(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                           unsigned long long flags,
                                                           enum cudaDriverEntryPointQueryResult *driverStatus);
/* Resolve into *t through the runtime's cudaGetDriverEntryPointByVersion (include cuda_runtime_api.h first). */
int cuentry_pfx_load_with_runtime(struct cuentry_pfx_table *t, cuentry_pfx_runtime_getter getter);
#endif
/* The driver version the table was loaded from (cuDriverGetVersion); 0 when unknown or not loaded. */
int cuentry_pfx_driver_version(const struct cuentry_pfx_table *t);
/* 1 when the entry (or a fallback member) named `name` resolved, else 0 (also for unknown names). */
int cuentry_pfx_available(const struct cuentry_pfx_table *t, const char *name);
/* Per entry: the ABI it resolved to, or why not (result, query result, classification, hint). */
const char *cuentry_pfx_report(const struct cuentry_pfx_table *t);

#ifdef __cplusplus
}
#endif

#if defined(CUENTRY_PFX_IMPLEMENTATION) && !defined(CUENTRY_PFX_IMPLEMENTED)
#define CUENTRY_PFX_IMPLEMENTED 1

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#include <pthread.h>
#endif

#ifndef CUENTRY_PFX_DRIVER_LIBRARY
#if defined(_WIN32)
#define CUENTRY_PFX_DRIVER_LIBRARY "nvcuda.dll"
#else
#define CUENTRY_PFX_DRIVER_LIBRARY "libcuda.so.1"
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Pointers move between void * and function types by memcpy: that needs equal sizes. */
typedef char cuentry_pfx_impl_pointer_sizes[(sizeof(cuentry_pfx_PFN_cuDriverGetVersion_v2020) == sizeof(void *)) ? 1 : -1];

struct cuentry_pfx_impl_pin {
    const char *symbol;
    int version;            /* the pinned ABI version (the number in the PFN typedef) */
    int first;              /* the symbol's first ABI version in this stream mode */
    const char *abi;        /* the PFN typedef this pin binds */
    const char *exported;   /* that ABI's exported name (drivers older than 11.3) */
    int platforms;          /* 1 linux, 2 windows */
    int entry;
    const char *member;
    size_t offset;
    const int *versions;    /* all ABI versions of the symbol */
    int n_versions;
};

@PINS@

struct cuentry_pfx_impl_entry { const char *name; int required; int first_pin; int n_pins; };
static const struct cuentry_pfx_impl_entry cuentry_pfx_impl_entries[] = {
@ENTRIES@
};

enum {
    CUENTRY_PFX_IMPL_OK, CUENTRY_PFX_IMPL_DRIVER_TOO_OLD, CUENTRY_PFX_IMPL_VERSION_ABOVE_DRIVER,
    CUENTRY_PFX_IMPL_VERSION_NOT_SUFFICIENT, CUENTRY_PFX_IMPL_NOT_ON_PLATFORM, CUENTRY_PFX_IMPL_NOT_EXPORTED,
    CUENTRY_PFX_IMPL_NULL_POINTER, CUENTRY_PFX_IMPL_STUB_LIBRARY, CUENTRY_PFX_IMPL_NOT_INITIALIZED,
    CUENTRY_PFX_IMPL_BAD_FLAGS, CUENTRY_PFX_IMPL_DRIVER_ERROR, CUENTRY_PFX_IMPL_NO_DRIVER, CUENTRY_PFX_IMPL_NOT_ASKED
};
static const char *const cuentry_pfx_impl_class_names[] = {
    "ok", "driver_too_old", "version_above_driver", "version_not_sufficient", "not_on_platform", "not_exported",
    "null_pointer", "stub_library", "not_initialized", "bad_flags", "driver_error", "no_driver", "not_asked"
};
static const char *const cuentry_pfx_impl_query_names[] = {
    "CU_GET_PROC_ADDRESS_SUCCESS", "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND", "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT"
};

enum { CUENTRY_PFX_IMPL_V2 = 1, CUENTRY_PFX_IMPL_V1, CUENTRY_PFX_IMPL_DLSYM, CUENTRY_PFX_IMPL_GETTER,
       CUENTRY_PFX_IMPL_RUNTIME };
static const char *const cuentry_pfx_impl_access_names[] = {
    "nothing", "cuGetProcAddress_v2", "cuGetProcAddress (v1 form, query result emulated)",
    "exported names (driver older than 11.3, query result emulated)", "the caller's cuGetProcAddress_v2",
    "cudaGetDriverEntryPointByVersion"
};

struct cuentry_pfx_impl_src {
    int access;
    void *lib;
    const char *lib_error;
    cuentry_pfx_PFN_cuGetProcAddress_v12000 gpa2;
    cuentry_pfx_PFN_cuGetProcAddress_v11030 gpa1;
    cuentry_pfx_PFN_cuGetErrorName_v6000 error_name;
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12050
    cuentry_pfx_runtime_getter runtime;
#endif
    int driver_version;
};

static void *cuentry_pfx_impl_sym(void *lib, const char *name) {
    void *p = NULL;
#if defined(_WIN32)
    FARPROC f = GetProcAddress((HMODULE)lib, name);
    memcpy(&p, &f, sizeof p);
#else
    p = dlsym(lib, name);
#endif
    return p;
}

static int cuentry_pfx_impl_open(struct cuentry_pfx_impl_src *s) {
#if defined(_WIN32)
    s->lib = (void *)LoadLibraryA(CUENTRY_PFX_DRIVER_LIBRARY);
    s->lib_error = "LoadLibrary failed";
#else
    s->lib = dlopen(CUENTRY_PFX_DRIVER_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    s->lib_error = s->lib ? NULL : dlerror();
#endif
    return s->lib != NULL;
}

/* Ask for one pin. Returns the API result; *query is -1 when there is none. */
static int cuentry_pfx_impl_ask(const struct cuentry_pfx_impl_src *s, const struct cuentry_pfx_impl_pin *p, void **out,
                                int *query, int *emulated) {
    int rc;
    *out = NULL;
    *query = -1;
    *emulated = 0;
    if (s->access == CUENTRY_PFX_IMPL_V2 || s->access == CUENTRY_PFX_IMPL_GETTER) {
        @QUERY_T@ q = (@QUERY_T@)3; /* 3: untouched */
        rc = (int)s->gpa2(p->symbol, out, p->version, (uint64_t)CUENTRY_PFX_STREAM_FLAGS, &q);
        if ((int)q != 3) *query = (int)q;
        return rc;
    }
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12050
    if (s->access == CUENTRY_PFX_IMPL_RUNTIME) {
        enum cudaDriverEntryPointQueryResult q = (enum cudaDriverEntryPointQueryResult)3; /* untouched */
        rc = (int)s->runtime(p->symbol, out, (unsigned int)p->version, (unsigned long long)CUENTRY_PFX_STREAM_FLAGS, &q);
        if ((int)q != 3) *query = (int)q;
        return rc;
    }
#endif
    *emulated = 1;
    if (s->access == CUENTRY_PFX_IMPL_V1) {
        rc = (int)s->gpa1(p->symbol, out, p->version, (uint64_t)CUENTRY_PFX_STREAM_FLAGS);
        if (rc == 0) {
            *query = *out ? 0 : -1;
            return 0;
        }
        if (rc == 500) { /* CUDA_ERROR_NOT_FOUND: the v1 form cannot say which kind of miss */
            *query = 1;
            return 0;
        }
        return rc;
    }
    /* Drivers older than 11.3: the exported name the catalog records for exactly this ABI. */
    if (s->driver_version > 0 && p->version > s->driver_version) return 1;
    if (p->exported == NULL || s->lib == NULL) {
        *query = 1;
        return 0;
    }
    *out = cuentry_pfx_impl_sym(s->lib, p->exported);
    *query = *out ? 0 : 1;
    return 0;
}

static int cuentry_pfx_impl_classify(const struct cuentry_pfx_impl_pin *p, int drv, int rc, int query, int have) {
    int here = 1;
#if defined(_WIN32)
    here = 2;
#endif
    if (rc != 0) {
        if (rc == 34) return CUENTRY_PFX_IMPL_STUB_LIBRARY;
        if (rc == 3) return CUENTRY_PFX_IMPL_NOT_INITIALIZED;
        if (rc == 1 && drv > 0 && p->version > drv)
            return p->first > drv ? CUENTRY_PFX_IMPL_DRIVER_TOO_OLD : CUENTRY_PFX_IMPL_VERSION_ABOVE_DRIVER;
        if (rc == 1) return CUENTRY_PFX_IMPL_BAD_FLAGS;
        return CUENTRY_PFX_IMPL_DRIVER_ERROR;
    }
    if (query == 2) return CUENTRY_PFX_IMPL_VERSION_NOT_SUFFICIENT;
    if (query == 1) {
        if (drv > 0 && drv < p->first) return CUENTRY_PFX_IMPL_DRIVER_TOO_OLD;
        if (!(p->platforms & here)) return CUENTRY_PFX_IMPL_NOT_ON_PLATFORM;
        return CUENTRY_PFX_IMPL_NOT_EXPORTED;
    }
    if (query > 0) return CUENTRY_PFX_IMPL_DRIVER_ERROR;
    if (!have) return CUENTRY_PFX_IMPL_NULL_POINTER;
    return CUENTRY_PFX_IMPL_OK;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void cuentry_pfx_impl_put(char *buf, size_t *len, const char *fmt, ...) {
    size_t cap = sizeof(((struct cuentry_pfx_state *)0)->report);
    va_list ap;
    int n;
    if (*len + 1 >= cap) return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    *len += (size_t)n;
    if (*len >= cap) {
        *len = cap - 1;
        memcpy(buf + cap - 4, "...", 4);
    }
}

static const char *cuentry_pfx_impl_result_name(const struct cuentry_pfx_impl_src *s, int rc, char *tmp, size_t n) {
    const char *name = NULL;
    if (rc == -1) return "-";
    if (s->access == CUENTRY_PFX_IMPL_RUNTIME) {
        if (rc == 0) return "cudaSuccess";
        snprintf(tmp, n, "cudaError_t(%d)", rc);
        return tmp;
    }
    if (s->error_name != NULL && s->error_name((enum cudaError_enum)rc, &name) == 0 && name != NULL) return name;
    snprintf(tmp, n, "CUresult(%d)", rc);
    return tmp;
}

static void cuentry_pfx_impl_hint(char *buf, size_t *len, const struct cuentry_pfx_impl_pin *p, int cls, int drv,
                                  int query, const struct cuentry_pfx_impl_src *s) {
    int i, older = 0;
    switch (cls) {
    case CUENTRY_PFX_IMPL_DRIVER_TOO_OLD:
        cuentry_pfx_impl_put(buf, len, "%s needs driver >= %d.%d (%d); this driver is %d.%d (%d)", p->symbol,
                             p->first / 1000, p->first % 1000 / 10, p->first, drv / 1000, drv % 1000 / 10, drv);
        break;
    case CUENTRY_PFX_IMPL_VERSION_ABOVE_DRIVER:
        for (i = 0; i < p->n_versions; i++)
            if (p->versions[i] <= drv) older = p->versions[i];
        cuentry_pfx_impl_put(buf, len, "version %d is newer than the driver (%d.%d (%d)): this pin needs driver >= %d.%d; "
                             "update the driver, make the entry optional with a fallback", p->version, drv / 1000,
                             drv % 1000 / 10, drv, p->version / 1000, p->version % 1000 / 10);
        if (older) cuentry_pfx_impl_put(buf, len, ", or pin the older ABI %d that this driver has", older);
        break;
    case CUENTRY_PFX_IMPL_VERSION_NOT_SUFFICIENT:
        cuentry_pfx_impl_put(buf, len, "the driver knows %s but not at version %d: its first %s ABI is %d; raise the pin to %d",
                             p->symbol, p->version, CUENTRY_PFX_STREAM_FLAGS == 2 ? "per-thread" : "legacy", p->first, p->first);
        break;
    case CUENTRY_PFX_IMPL_NOT_ON_PLATFORM:
        cuentry_pfx_impl_put(buf, len, "%s exists only on %s", p->symbol, p->platforms == 2 ? "windows" : "linux");
        break;
    case CUENTRY_PFX_IMPL_NOT_EXPORTED:
        cuentry_pfx_impl_put(buf, len, "this driver (%d.%d (%d)) does not provide %s although it is in the headers; "
                             "it may be platform- or build-specific: use a fallback",
                             drv / 1000, drv % 1000 / 10, drv, p->symbol);
        break;
    case CUENTRY_PFX_IMPL_NULL_POINTER:
        cuentry_pfx_impl_put(buf, len, "the driver reported success but gave a NULL pointer: treat it as unavailable");
        break;
    case CUENTRY_PFX_IMPL_STUB_LIBRARY:
        cuentry_pfx_impl_put(buf, len, "this is the toolkit's stub libcuda: load the real driver "
                             "(libcuda.so.1 from the NVIDIA driver)");
        break;
    case CUENTRY_PFX_IMPL_NOT_INITIALIZED:
        cuentry_pfx_impl_put(buf, len, "cuInit did not succeed: check the GPU is visible (nvidia-smi) and CUDA_VISIBLE_DEVICES");
        break;
    case CUENTRY_PFX_IMPL_BAD_FLAGS:
        cuentry_pfx_impl_put(buf, len, "the driver rejected the arguments: flags must be 0, 1 or 2");
        break;
    case CUENTRY_PFX_IMPL_NO_DRIVER:
        cuentry_pfx_impl_put(buf, len, "%s could not be used (%s): install the NVIDIA driver or put its directory on the "
                             "library path", CUENTRY_PFX_DRIVER_LIBRARY, s->lib_error ? s->lib_error : "no cuDriverGetVersion");
        break;
    default:
        if (query > 2) cuentry_pfx_impl_put(buf, len, "unexpected query result %d", query);
        else cuentry_pfx_impl_put(buf, len, "the %s returned an error: see its name above",
                                  s->access == CUENTRY_PFX_IMPL_RUNTIME ? "runtime" : "driver");
        break;
    }
}

static void cuentry_pfx_impl_report(struct cuentry_pfx_table *t, const struct cuentry_pfx_impl_src *s) {
    struct cuentry_pfx_state *st = &t->_state;
    char *buf = st->report;
    size_t len = 0;
    int e, i;
    char tmp[48];
    int drv = st->driver_version;
    cuentry_pfx_impl_put(buf, &len, "cuentry_pfx: %s table (flags %d), minimum driver %d; ", "@STREAM@",
                         CUENTRY_PFX_STREAM_FLAGS, CUENTRY_PFX_MIN_DRIVER);
    if (st->access == 0) {
        cuentry_pfx_impl_put(buf, &len, "no driver: ");
        cuentry_pfx_impl_hint(buf, &len, NULL, CUENTRY_PFX_IMPL_NO_DRIVER, 0, -1, s);
        cuentry_pfx_impl_put(buf, &len, "\n");
    } else if (drv > 0) {
        cuentry_pfx_impl_put(buf, &len, "driver %d.%d (%d) asked through %s\n", drv / 1000, drv % 1000 / 10, drv,
                             cuentry_pfx_impl_access_names[st->access]);
    } else {
        cuentry_pfx_impl_put(buf, &len, "driver version unknown (cuDriverGetVersion gave %s), asked through %s\n",
                             cuentry_pfx_impl_result_name(s, st->version_result, tmp, sizeof tmp),
                             cuentry_pfx_impl_access_names[st->access]);
    }
    for (e = 0; e < CUENTRY_PFX_ENTRY_COUNT; e++) {
        const struct cuentry_pfx_impl_entry *en = &cuentry_pfx_impl_entries[e];
        for (i = en->first_pin; i < en->first_pin + en->n_pins; i++) {
            const struct cuentry_pfx_impl_pin *p = &cuentry_pfx_impl_pins[i];
            const struct cuentry_pfx_pin_state *ps = &st->pins[i];
            if (ps->classification == CUENTRY_PFX_IMPL_NOT_ASKED) continue;
            if (i == en->first_pin)
                cuentry_pfx_impl_put(buf, &len, "%s [%s] %s@%d: ", en->name, en->required ? "required" : "optional",
                                     p->symbol, p->version);
            else
                cuentry_pfx_impl_put(buf, &len, "  fallback %s@%d -> %s: ", p->symbol, p->version, p->member);
            if (ps->classification == CUENTRY_PFX_IMPL_NO_DRIVER) {
                cuentry_pfx_impl_put(buf, &len, "no_driver\n");
                continue;
            }
            if (ps->resolved) {
                cuentry_pfx_impl_put(buf, &len, "ok: resolved %s (exported as %s)\n", p->abi, p->exported ? p->exported : "-");
                continue;
            }
            cuentry_pfx_impl_put(buf, &len, "%s (result %s, query %s%s; abi %s): ",
                                 cuentry_pfx_impl_class_names[ps->classification],
                                 cuentry_pfx_impl_result_name(s, ps->result, tmp, sizeof tmp),
                                 ps->query >= 0 && ps->query <= 2 ? cuentry_pfx_impl_query_names[ps->query] : "-",
                                 ps->emulated && ps->query >= 0 ? " (emulated)" : "", p->abi);
            cuentry_pfx_impl_hint(buf, &len, p, ps->classification, drv, ps->query, s);
            cuentry_pfx_impl_put(buf, &len, "\n");
        }
    }
}

/* Resolve every pin of every entry, in order, into *t (already zeroed, with its source filled). */
static int cuentry_pfx_impl_resolve(struct cuentry_pfx_table *t, const struct cuentry_pfx_impl_src *s, int usable) {
    struct cuentry_pfx_state *st = &t->_state;
    int e, i, status = CUENTRY_PFX_OK;
    st->access = usable ? s->access : 0;
    st->driver_version = s->driver_version;
    for (e = 0; e < CUENTRY_PFX_ENTRY_COUNT; e++) {
        const struct cuentry_pfx_impl_entry *en = &cuentry_pfx_impl_entries[e];
        int done = 0;
        for (i = en->first_pin; i < en->first_pin + en->n_pins; i++) {
            const struct cuentry_pfx_impl_pin *p = &cuentry_pfx_impl_pins[i];
            struct cuentry_pfx_pin_state *ps = &st->pins[i];
            void *fn = NULL;
            ps->result = -1;
            ps->query = -1;
            if (done) {
                ps->classification = CUENTRY_PFX_IMPL_NOT_ASKED;
                continue;
            }
            if (!usable) {
                ps->classification = CUENTRY_PFX_IMPL_NO_DRIVER;
                continue;
            }
            if (s->driver_version > 0 && s->driver_version < p->first) {
                ps->classification = CUENTRY_PFX_IMPL_DRIVER_TOO_OLD; /* it cannot have it: not asked */
                continue;
            }
            ps->asked = 1;
            ps->result = cuentry_pfx_impl_ask(s, p, &fn, &ps->query, &ps->emulated);
            ps->classification = cuentry_pfx_impl_classify(p, s->driver_version, ps->result, ps->query, fn != NULL);
            if (ps->classification == CUENTRY_PFX_IMPL_OK) {
                memcpy((char *)t + p->offset, &fn, sizeof fn);
                ps->resolved = 1;
                done = 1;
            }
        }
        if (en->required && !done) status = usable ? CUENTRY_PFX_ERR_REQUIRED : CUENTRY_PFX_ERR_DRIVER;
    }
    st->status = status;
    st->loaded = 1;
    cuentry_pfx_impl_report(t, s);
    return status;
}

/* Ask a getter for a bootstrap function (cuDriverGetVersion, cuGetErrorName) at its first ABI. */
static void *cuentry_pfx_impl_boot(const struct cuentry_pfx_impl_src *s, const char *symbol, int version) {
    struct cuentry_pfx_impl_pin p;
    void *fn = NULL;
    int query = -1, emulated = 0;
    memset(&p, 0, sizeof p);
    p.symbol = symbol;
    p.version = version;
    if (cuentry_pfx_impl_ask(s, &p, &fn, &query, &emulated) != 0 || query != 0) return NULL;
    return fn;
}

static void cuentry_pfx_impl_version(struct cuentry_pfx_table *t, struct cuentry_pfx_impl_src *s, void *fn) {
    cuentry_pfx_PFN_cuDriverGetVersion_v2020 get_version = NULL;
    int v = 0;
    t->_state.version_result = -1;
    if (fn == NULL) return;
    memcpy(&get_version, &fn, sizeof fn);
    t->_state.version_result = (int)get_version(&v);
    if (t->_state.version_result == 0 && v > 0) s->driver_version = v;
}

static int cuentry_pfx_impl_load_driver(struct cuentry_pfx_table *t) {
    struct cuentry_pfx_impl_src s;
    void *fn;
    memset(t, 0, sizeof *t);
    memset(&s, 0, sizeof s);
    if (!cuentry_pfx_impl_open(&s)) return cuentry_pfx_impl_resolve(t, &s, 0);
    fn = cuentry_pfx_impl_sym(s.lib, "cuDriverGetVersion");
    if (fn == NULL) return cuentry_pfx_impl_resolve(t, &s, 0);
    cuentry_pfx_impl_version(t, &s, fn);
    fn = cuentry_pfx_impl_sym(s.lib, "cuGetErrorName");
    memcpy(&s.error_name, &fn, sizeof fn);
    fn = cuentry_pfx_impl_sym(s.lib, "cuGetProcAddress_v2");
    memcpy(&s.gpa2, &fn, sizeof fn);
    fn = cuentry_pfx_impl_sym(s.lib, "cuGetProcAddress");
    memcpy(&s.gpa1, &fn, sizeof fn);
    s.access = s.gpa2 ? CUENTRY_PFX_IMPL_V2 : s.gpa1 ? CUENTRY_PFX_IMPL_V1 : CUENTRY_PFX_IMPL_DLSYM;
    return cuentry_pfx_impl_resolve(t, &s, 1); /* the library stays loaded: the pointers point into it */
}

static int cuentry_pfx_impl_load_getter(struct cuentry_pfx_table *t, struct cuentry_pfx_impl_src *s) {
    void *fn;
    cuentry_pfx_impl_version(t, s, cuentry_pfx_impl_boot(s, "cuDriverGetVersion", 2020));
    fn = cuentry_pfx_impl_boot(s, "cuGetErrorName", 6000);
    memcpy(&s->error_name, &fn, sizeof fn);
    return cuentry_pfx_impl_resolve(t, s, 1);
}

int cuentry_pfx_load_with(struct cuentry_pfx_table *t, cuentry_pfx_PFN_cuGetProcAddress_v12000 getter) {
    struct cuentry_pfx_impl_src s;
    if (t == NULL || getter == NULL) return CUENTRY_PFX_ERR_ARGUMENT;
    memset(t, 0, sizeof *t);
    memset(&s, 0, sizeof s);
    s.access = CUENTRY_PFX_IMPL_GETTER;
    s.gpa2 = getter;
    return cuentry_pfx_impl_load_getter(t, &s);
}

#if defined(CUDART_VERSION) && CUDART_VERSION >= 12050
int cuentry_pfx_load_with_runtime(struct cuentry_pfx_table *t, cuentry_pfx_runtime_getter getter) {
    struct cuentry_pfx_impl_src s;
    if (t == NULL || getter == NULL) return CUENTRY_PFX_ERR_ARGUMENT;
    memset(t, 0, sizeof *t);
    memset(&s, 0, sizeof s);
    s.access = CUENTRY_PFX_IMPL_RUNTIME;
    s.runtime = getter;
    return cuentry_pfx_impl_load_getter(t, &s);
}
#endif

static struct cuentry_pfx_table cuentry_pfx_impl_global;
static int cuentry_pfx_impl_global_status;

static void cuentry_pfx_impl_load_global(void) {
    cuentry_pfx_impl_global_status = cuentry_pfx_impl_load_driver(&cuentry_pfx_impl_global);
}

#if defined(_WIN32)
static INIT_ONCE cuentry_pfx_impl_once = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK cuentry_pfx_impl_once_fn(PINIT_ONCE once, PVOID param, PVOID *context) {
    (void)once;
    (void)param;
    (void)context;
    cuentry_pfx_impl_load_global();
    return TRUE;
}
static void cuentry_pfx_impl_run_once(void) { InitOnceExecuteOnce(&cuentry_pfx_impl_once, cuentry_pfx_impl_once_fn, NULL, NULL); }
#else
static pthread_once_t cuentry_pfx_impl_once = PTHREAD_ONCE_INIT;
static void cuentry_pfx_impl_run_once(void) { (void)pthread_once(&cuentry_pfx_impl_once, cuentry_pfx_impl_load_global); }
#endif

int cuentry_pfx_load(struct cuentry_pfx_table *t) {
    if (t == NULL) return CUENTRY_PFX_ERR_ARGUMENT;
    cuentry_pfx_impl_run_once();
    memcpy(t, &cuentry_pfx_impl_global, sizeof *t);
    return cuentry_pfx_impl_global_status;
}

const struct cuentry_pfx_table *cuentry_pfx_get(void) {
    cuentry_pfx_impl_run_once();
    return &cuentry_pfx_impl_global;
}

int cuentry_pfx_available(const struct cuentry_pfx_table *t, const char *name) {
    int e, i;
    if (t == NULL || name == NULL || !t->_state.loaded) return 0;
    for (e = 0; e < CUENTRY_PFX_ENTRY_COUNT; e++) {
        const struct cuentry_pfx_impl_entry *en = &cuentry_pfx_impl_entries[e];
        int whole = strcmp(en->name, name) == 0;
        for (i = en->first_pin; i < en->first_pin + en->n_pins; i++) {
            if (!t->_state.pins[i].resolved) continue;
            if (whole || strcmp(cuentry_pfx_impl_pins[i].member, name) == 0) return 1;
        }
    }
    return 0;
}

int cuentry_pfx_driver_version(const struct cuentry_pfx_table *t) {
    return t != NULL && t->_state.loaded ? t->_state.driver_version : 0;
}

const char *cuentry_pfx_report(const struct cuentry_pfx_table *t) {
    if (t == NULL) return "cuentry_pfx: no table (NULL)";
    if (!t->_state.loaded) return "cuentry_pfx: not loaded: call cuentry_pfx_load() first";
    return t->_state.report;
}

#ifdef __cplusplus
}
#endif
#endif /* CUENTRY_PFX_IMPLEMENTATION */
#endif /* CUENTRY_PFX_CUENTRY_H */
"""
