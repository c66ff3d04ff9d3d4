"""`cuentry generate c`: one self-contained C/C++ loader header for a manifest's table.

The header is single-file style: declarations always, the loader's definitions
where the including file defines `<NAME>_IMPLEMENTATION`. It is C99 and
C++11, and it needs no CUDA header: every function-pointer type is written from
the catalog with fully resolved parameter types (`struct CUctx_st *` for
`CUcontext`, `unsigned long long` for `CUdeviceptr`), so it is the very
type `cudaTypedefs.h` declares, and it does not clash with a toolkit header
included before it:

* struct and union tags are only forward-declared (`struct CUctx_st;`), which
  is compatible with any later definition;
* enums (which C and C++ cannot forward-declare compatibly) are defined from the
  catalog only where no CUDA header has defined them: guarded by `CUDA_VERSION`
  (or the interop header's include guard) against the first toolkit that has
  them, and by a `CUENTRY_HAVE_*` macro shared by all generated headers;
* the function-pointer typedefs carry the table's prefix
  (`acme_PFN_cuMemAlloc_v3020`) so they never collide with NVIDIA's.

The loader follows the same rules as [cuentry.driver][cuentry.driver] and
[cuentry.table][cuentry.table]: `cuGetProcAddress_v2` where the driver has it, the v1 form
on 11.3-11.8 drivers, the catalog's exported names before that (never a name
made by appending suffixes), the table's explicit stream flag, CUresult, query
result and pointer all checked, fallbacks in order, and a report with the same
classifications and hints as `cuentry.diagnostics.classify`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..catalog import Abi, Catalog, Signature, Toolkit, c_declaration
from ..cfacts import Hints, enum_type
from ..errors import ManifestError, TableDeclarationError
from ..names import GENERATED_MEMBER_PREFIX, format_version, parse_version, split_suffix
from ..toolchain import c_string
from .model import Plan, plan

if TYPE_CHECKING:
    from ..manifest import Manifest

__all__ = [
    "BOOTSTRAP", "CUDA_H_RENAMES", "MEMBER_PREFIX", "TEMPLATE", "check_entry_names", "generate_c", "layout_stamp",
    "member", "pfn_typedef", "render", "symbol_stamp", "template",
]


_TAG = re.compile(r"\b(struct|union|enum)\s+(\w+)")
_ENUM_WORD = re.compile(r"\benum\s+\w+|\bCU\w+")
_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER = re.compile(r"@[A-Z_]+@")

# Where each typedef header's types come from, and that header's include guard.
_ORIGIN_GUARD = {
    "cudaTypedefs.h": "CUDA_VERSION",
    "cudaProfilerTypedefs.h": "cuda_profiler_H",
    "cudaGLTypedefs.h": "CUDAGL_H",
    "cudaEGLTypedefs.h": "CUDAEGL_H",
    "cudaVDPAUTypedefs.h": "CUDAVDPAU_H",
}

# What cuentry's own generated cuda.h (lint's, written from the catalog) defines: every type of the
# catalog, interop enums and CUuuid included, so the header defines none of them next to it.
_GENERATED_CUDA_H = "CUENTRY_GENERATED_CUDA_H"

# cuda.h (12.0 and later) renames one entry point to another one's base name by a macro. Members are
# named <MEMBER_PREFIX><entry>, which no cuda.h macro touches, so both can be in one table; an entry *named* after
# one of them (name = "cuGraphInstantiateWithFlags" for another symbol) is refused like any other
# entry named after a driver function.
CUDA_H_RENAMES = {"cuGraphInstantiate": "cuGraphInstantiateWithFlags"}

# The prefix of every table member (names.GENERATED_MEMBER_PREFIX, the one owner of it).
MEMBER_PREFIX = GENERATED_MEMBER_PREFIX

TEMPLATE = "loader.h.in"

# What the loader itself calls: (symbol, ABI version), from the catalog like everything else.
BOOTSTRAP = (("cuDriverGetVersion", 2020), ("cuGetErrorName", 6000),
             ("cuGetProcAddress", 11030), ("cuGetProcAddress", 12000))



def generate_c(manifest: Manifest) -> str:
    """The header text for `manifest`'s table.

    Raises:
        ManifestError: an entry's name cannot be a C member or would be mistaken for a driver
            function (with the entry's line and column).
        TableDeclarationError: the table name is not a usable C prefix, or members clash.
    """
    check_entry_names(manifest)
    return render(plan(manifest), manifest.cat)


def template(name: str = TEMPLATE) -> str:
    """The text of one of the generator's C templates (package data beside this module)."""
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def member(name: str) -> str:
    """The C struct member for a plan member name (`cuMemAlloc` -> `pfn_cuMemAlloc`)."""
    return MEMBER_PREFIX + name


# Object-like macros compilers predefine without a leading underscore (GNU modes; -std=gnu*), and
# macros of the standard headers the loader includes: an entry named so would not compile.
_PREDEFINED_MACROS = frozenset((
    "linux", "unix", "i386", "sun", "sparc", "mips", "vax",                      # gcc/clang -std=gnu*, old ABIs
    "major", "minor", "makedev",                                                 # <sys/sysmacros.h> via glibc
    "assert", "errno", "stdin", "stdout", "stderr", "NULL", "EOF", "offsetof",   # the headers the loader includes
    "bool", "true", "false",                                                     # <stdbool.h>
))


def _name_problem(e_attr: str, symbol: str, symbols: frozenset[str]) -> tuple[str, str] | None:
    """Why an entry name is refused (detail, hint), or None."""
    fix = f'give the entry another name = "..." in the manifest (e.g. "{e_attr}_fn")'
    if e_attr in _PREDEFINED_MACROS or e_attr in _NOT_MEMBER_NAMES:
        return (f"entry name {e_attr!r} is a C or C++ keyword or a predefined or standard macro "
                "(it does not survive the preprocessor)", fix)
    if e_attr != symbol and e_attr in symbols:
        return (f"entry name {e_attr!r} is the name of another driver function (this entry binds {symbol}): "
                "code reading it would call the wrong function", fix)
    split = split_suffix(e_attr)
    if split is not None and split[0] in symbols:
        return (f"entry name {e_attr!r} is an exported name of {split[0]} (cuda.h's macros map {split[0]} "
                "onto such names)", fix)
    return None


def check_entry_names(manifest: Manifest) -> None:
    """Refuse entry names that are macros, keywords, another driver function's name or a cuda.h rename target.

    Raises:
        ManifestError: at the entry's line and column, with the fix.
    """
    symbols = frozenset(manifest.cat.symbols())
    for e in manifest.entries:
        problem = _name_problem(e.attr, e.symbol, symbols)
        if problem is not None:
            detail, hint = problem
            raise ManifestError(manifest.path, f"table {manifest.name!r}: {detail}", line=e.line or None,
                                column=e.column or None, hint=hint)


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


def pfn_typedef(cat: Catalog, abi: Abi, name: str, cudaapi: str, respell: Callable[[str], str] = str,
                signature: Signature | None = None) -> str:
    """`typedef <returns> (<cudaapi> *name)(<params>);` with resolved types (`signature`: a toolkit
    release's own spelling of the ABI, [Toolkit.signature][cuentry.catalog.Toolkit.signature])."""
    sig = signature or abi.signature
    ret = respell(_spell(cat, sig.returns))
    params = ", ".join(c_declaration(respell(_spell(cat, p.canonical)), p.name) for p in sig.params) or "void"
    return f"typedef {ret} ({cudaapi} *{name})({params});"


def _versions_test(lo: int | None, hi: int | None) -> str:
    """The `#if` test for a run of toolkit releases (a real CUDA header of CUDA_VERSION in [lo, hi))."""
    parts = ["defined(CUDA_VERSION)", f"!defined({_GENERATED_CUDA_H})"]
    if lo is not None:
        parts.append(f"CUDA_VERSION >= {lo}")
    if hi is not None:
        parts.append(f"CUDA_VERSION < {hi}")
    return " && ".join(parts)


class _Types:
    """The tags and enum definitions the header's typedefs need, with their guards."""

    def __init__(self, cat: Catalog) -> None:
        self.cat = cat
        self.hints = Hints(cat.ffi_hints)
        self.tags: dict[str, str] = {}          # tag -> "struct" | "union"
        self.enums: dict[str, str] = {}         # key -> spelling ("enum X" or typedef name)
        self.names: dict[str, str] = {}         # cuda.h typedef name -> its resolved type
        self.toolkits: tuple[Toolkit, ...] = cat.toolkits()
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

    def _late_index(self, word: str) -> int:
        """The index of the first toolkit from which on every toolkit's headers define `word` (the catalog's
        per-release facts; without them, the first toolkit whose signatures use it)."""
        if not self.toolkits:
            return self._first.get(word, 0)
        first = len(self.toolkits)
        for i in range(len(self.toolkits) - 1, -1, -1):
            if not self.toolkits[i].defines(word):
                break
            first = i
        return first

    def _late(self, word: str) -> int | None:
        """The CUDA_VERSION of the first toolkit that has `word`, when that is after the catalog's first."""
        first = self._late_index(word)
        if self.toolkits:
            return self.toolkits[first].cuda_version if 0 < first < len(self.toolkits) else None
        return parse_version(self.cat.history[first]) if 0 < first < len(self.cat.history) else None

    def variants(self, abi: Abi) -> list[tuple[int | None, int | None, Signature]]:
        """The runs of toolkit releases whose headers spell `abi` otherwise than the catalog's record
        (other tags), as (lowest CUDA_VERSION or None, first CUDA_VERSION after or None, their signature)."""
        out: list[tuple[int | None, int | None, Signature]] = []
        tks = self.toolkits
        i = 0
        while i < len(tks):
            sig = tks[i].signature(abi) if tks[i].differs(abi) else None
            j = i + 1
            while sig is not None and j < len(tks) and tks[j].differs(abi) and tks[j].signature(abi) == sig:
                j += 1
            if sig is not None:
                out.append((tks[i].cuda_version if i else None, tks[j].cuda_version if j < len(tks) else None, sig))
            i = j
        return out

    def record_since(self, abi: Abi) -> int:
        """The index of the first toolkit from which on the catalog's record of `abi` is what the headers say."""
        last = max((i for i, t in enumerate(self.toolkits) if t.differs(abi)), default=-1)
        return last + 1

    def add_variant(self, sig: Signature) -> None:
        """The struct and union tags of a release's own spelling: declared like the others (enums come with
        that release's cuda.h, the only place the spelling is used)."""
        for t in (sig.returns, *(p.canonical for p in sig.params)):
            for kind, tag in _TAG.findall(t):
                if kind in ("struct", "union"):
                    self.tags.setdefault(tag, kind)

    def typedef(self, abi: Abi, name: str, cudaapi: str) -> str:
        """The PFN typedef of `abi` named `name`: the catalog's record, and where a toolkit release spells the
        ABI otherwise, that release's spelling under a test of the included header's CUDA_VERSION."""
        since = self.record_since(abi)
        record = pfn_typedef(self.cat, abi, name, cudaapi, partial(self.respell, since=since))
        runs = self.variants(abi)
        if not runs:
            return record
        out = []
        for i, (lo, hi, sig) in enumerate(runs):
            out += [f"#{'if' if i == 0 else 'elif'} {_versions_test(lo, hi)}",
                    pfn_typedef(self.cat, abi, name, cudaapi, signature=sig)]
        return "\n".join([*out, "#else", record, "#endif"])

    def respell(self, text: str, since: int = 0) -> str:
        """`text` with each enum that an included CUDA header may predate named by its spelling macro.

        Whether an older header already has such an enum is unknown (it may exist before any
        entry point takes it), so the header never defines it next to a CUDA header: it spells
        the parameter by the enum where the header is new enough, by its underlying integer type
        where it is older (the same ABI; NVIDIA's own PFN typedef for it cannot exist there). In C and
        in C++ alike: in C++ every file of a program sees one CUDA header (the header includes cuda.h
        itself where it is on the include path) or none, so every file sees one spelling and one struct.
        `since`: the index of the first toolkit whose headers the text is used with (a typedef whose older
        releases are spelled apart, under their own CUDA_VERSION test): a word every later release defines
        is spelled as it is.
        """
        spelled = set(self.enums.values())

        def sub(m: re.Match[str]) -> str:
            word = m.group(0)
            late = word in spelled and self._late(word) and self._late_index(word) > since
            return f"CUENTRY_SPELL_{word.replace(' ', '_')}" if late else word

        return _ENUM_WORD.sub(sub, text)

    def _enum_lines(self, key: str, spelling: str) -> list[str]:
        word = spelling if spelling.startswith("enum ") else key
        ident = word.replace(" ", "_")
        guard = self._origin.get(word, "CUDA_VERSION")
        if spelling.startswith("enum "):
            body = _enumerators(self.cat.types["enums"][key]["values"])
            text = f"{spelling} {{ {body} }};"
            under = enum_type(key, self.hints)
        else:
            text = f"typedef {self.cat.types['typedefs'][key]['type']} {key};"
            under = "int"
        out = [f"#if !defined(CUENTRY_HAVE_{ident}) && !defined({guard}) && !defined({_GENERATED_CUDA_H})",
               f"#define CUENTRY_HAVE_{ident} 1", text, "#endif"]
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
            out += [f"#if !defined(CU_UUID_HAS_BEEN_DEFINED) && !defined({_GENERATED_CUDA_H})",
                    "#define CU_UUID_HAS_BEEN_DEFINED",
                    "struct CUuuid_st { char bytes[16]; };", "typedef struct CUuuid_st CUuuid;", "#endif"]
        if self.names:
            out += ["", "/* cuda.h's names for the types above, for code written without cuda.h. */"]
        for name, canon in sorted(self.names.items()):
            if name == "CUuuid":
                continue
            macro = f"CUENTRY_HAVE_typedef_{name}"
            out += [f"#if !defined({macro}) && !defined(CUDA_VERSION)", f"#define {macro} 1",
                    f"typedef {c_declaration(canon, name)};", "#endif"]
        return out


def _enumerators(values: dict[str, int]) -> str:
    """An enum's enumerators, each value written only where C would not give it anyway (the previous one + 1):
    the same enum in less text, which every file that includes the header reads, most of them only to skip it."""
    out, prev = [], -1
    for name, value in values.items():
        out.append(name if value == prev + 1 else f"{name} = {value}")
        prev = value
    return ", ".join(out)


def _c_string(s: str | None) -> str:
    return "0" if s is None else c_string(s)


def _report_size(p: Plan) -> int:
    """An upper bound for the report text: a header line plus one bounded line per pin."""
    per_pin = 700 + max(len(x.key) + len(x.abi.pfn) + 3 * len(x.symbol) + len(x.member) for x in p.pins)
    return (512 + len(p.pins) * per_pin + 7) // 8 * 8  # a multiple of 8: the struct needs no padding


def layout_stamp(p: Plan, cat: Catalog) -> int:
    """A 32-bit stamp of the table struct's layout: member names and types in order, and the catalog."""
    text = "\n".join(f"{m}:{abi.pfn}" for s in p.slots for m, abi in s.members())
    return int.from_bytes(hashlib.sha256(f"{cat.primary_toolkit}\n{text}".encode()).digest()[:4], "big")


def _cxx_versions(p: Plan) -> str:
    """The C++ layer's ABI version of each entry: enumerators of one unnamed enum (int), constant expressions as
    `constexpr int` variables are, at a tenth of their compile time (500 variables cost an includer ~1.3 ms)."""
    rows = [f"    version_{s.attr} = {s.pins[0].version}," for s in p.slots]
    return "\n".join(["enum : int {", *rows, "};"])


def _member_lines(p: Plan, low: str) -> list[str]:
    """The struct's members. In C++ each type is named by `<NAME>_SCOPE` (`::`): g++ looks an unqualified name
    up in the class being defined first, member by member (quadratic in the members); qualified, it does not."""
    out = []
    for s in p.slots:
        for m, abi in s.members():
            note = "required" if s.required and m == s.attr else "optional"
            fb = "" if m == s.attr else f", fallback of {s.attr}"
            out.append(f"    {low.upper()}_SCOPE {low}_{abi.pfn} {member(m)}; /* {note}{fb}: {abi.pfn} */")
    return out


def render(p: Plan, cat: Catalog) -> str:
    """The header text for a plan."""
    _check_name(p.name)
    if not p.slots:
        raise TableDeclarationError(f"table {p.name!r} has no entries", hint="list entries under required/optional")
    low, up = p.name, p.name.upper()
    cudaapi = f"{up}_CUDAAPI"
    types = _Types(cat)
    boot = [cat.bind(s, v, "legacy") for s, v in BOOTSTRAP]
    for abi in (*boot, *p.abis()):
        types.add(abi)
        for _, _, sig in types.variants(abi):
            types.add_variant(sig)
    for abi in p.abis():
        types.add_names(abi)
    pfns = [types.typedef(a, f"{low}_{a.pfn}", cudaapi) for a in (*boot, *p.abis())]
    pfns = list(dict.fromkeys(pfns))
    members = _member_lines(p, low)
    subs: dict[str, Any] = {
        "@HEADER_DOC@": _doc(p),
        "@USAGE@": _usage(p),
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
        "@TYPES@": "\n".join(types.definitions()),
        "@LAYOUT@": f"0x{layout_stamp(p, cat):08x}UL",
        "@CXX_VERSIONS@": _cxx_versions(p),
        "@PFNS@": "\n".join(pfns),
        "@MEMBERS@": "\n".join(members),
        "@PINS@": _pins(p, low),
        "@QUERY_T@": types.respell("enum CUdriverProcAddressQueryResult_enum"),
        "@ENTRIES@": _entries(p),
    }
    subs["@MEMBER_PREFIX@"] = MEMBER_PREFIX
    # The prefix first, then every placeholder in one pass: text from the manifest (a file name, say) is
    # never scanned again for placeholders or the prefix. The symbol stamp (@ABI@) is a hash of the
    # whole text around it, so equal stamps mean equal headers.
    parts = [_PLACEHOLDER.sub(lambda m: subs[m.group(0)], piece)
             for piece in template().replace("CUENTRY_PFX", up).replace("cuentry_pfx", low).split(_ABI)]
    return symbol_stamp(parts).join(parts)


_ABI = "@ABI@"


def symbol_stamp(parts: list[str]) -> str:
    """The stamp in the loader's symbol names: 8 hex digits of a hash of the header's text around it."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


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


def _comment_text(text: str) -> str:
    """Text that cannot end a C comment or hide a line break."""
    return "".join(c if c.isprintable() else "?" for c in text).replace("*/", "*?").replace("/*", "/?")


def _usage(p: Plan) -> str:
    """The usage comment's calls, with this table's own first required and first optional entry."""
    lines = []
    req = next((s for s in p.slots if s.required), None)
    opt = next((s for s in p.slots if not s.required), None)
    if req is not None:
        lines.append(f" *     t->{member(req.attr)}(...);   required entries are never NULL after {p.name.upper()}_OK")
    if opt is not None:
        lines.append(f" *     if (t->{member(opt.attr)}) t->{member(opt.attr)}(...);")
        lines.append(" *         optional entries are NULL when unavailable: test before every call, never call NULL")
    return "\n".join(_comment_text(line) for line in lines)


def _doc(p: Plan) -> str:
    lines = [f" *   {s.attr}: {' -> '.join(x.key for x in s.pins)} ({'required' if s.required else 'optional'})"
             for s in p.slots]
    return "\n".join(lines)


def _pins(p: Plan, low: str) -> str:
    versions: list[str] = []   # every pin's ABI versions, in one array (one declaration, not one per pin)
    rows: list[str] = []
    for e, s in enumerate(p.slots):
        for x in s.pins:
            plat = (1 if "linux" in x.abi.platforms else 0) | (2 if "windows" in x.abi.platforms else 0)
            rows.append(f"    {{{_c_string(x.symbol)}, {x.version}, {x.first}, {_c_string(x.abi.pfn)}, "
                        f"{_c_string(x.abi.exported)}, {plat}, {e}, {_c_string(x.member)}, "
                        f"{low.upper()}_IMPL_AT({member(x.member)}), {len(versions)}, "
                        f"{len(x.versions)}}},")
            versions.extend(map(str, x.versions))
    return (f"static const int {low}_impl_versions[] = {{{', '.join(versions)}}};\n"
            f"static const struct {low}_impl_pin {low}_impl_pins[] = {{\n" + "\n".join(rows) + "\n};")


def _entries(p: Plan) -> str:
    rows = []
    first = 0
    for s in p.slots:
        rows.append(f"    {{{_c_string(s.attr)}, {1 if s.required else 0}, {first}, {len(s.pins)}}},")
        first += len(s.pins)
    return "\n".join(rows)
