"""The clang AST to facts: every request and every export taken by name, as the dataflow analysis of `..flow`
computes them over the IR `.lower` makes of the translation unit, with the canonical type of each pointer a
request fills and the context reporting needs (where a request is written, the macro or table row it comes
from, whether its result is tested, the version check around it).

A request inside a function whose symbol is one of its parameters (a wrapper, whatever it is called) is
reported at each call that gives the symbol, with the wrappers it went through; what does not depend on the
callers (an ignored result) once, at the wrapper.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from clang.cindex import CursorKind as K
from clang.cindex import TypeKind as T

from ...catalog import Catalog
from ...names import split_suffix
from .. import flow as F
from ..facts import FLAG_MODES, FLAG_NUMBERS, QUERY_APIS, VERSION_QUERIES, Export, Query, Row, flag_mode
from ..signature import Normalizer, signless
from .lower import Lowered, SiteInfo, kids, lower, subtree
from .values import UNKNOWN, Env, Val, evaluate, key, tokens

# api -> argument index of (symbol, pointer, version, flags, status)
ROLES: dict[str, tuple[int, int, int | None, int, int | None]] = {
    "cuGetProcAddress": (0, 1, 2, 3, 4),
    "cuGetProcAddress_v2": (0, 1, 2, 3, 4),
    "cudaGetDriverEntryPoint": (0, 1, None, 2, 3),
    "cudaGetDriverEntryPointByVersion": (0, 1, 2, 3, 4),
}
EXPORT_APIS = {"dlsym": 1, "dlvsym": 1, "GetProcAddress": 1}
VERSION_KINDS = {"cuDriverGetVersion": "driver", "cudaDriverGetVersion": "driver", "cudaRuntimeGetVersion": "runtime"}
COPIES = frozenset({"memcpy", "memmove", "__builtin_memcpy", "__builtin_memmove"})
LENGTHS = frozenset({"strlen", "__builtin_strlen"})
_DECLTYPE = re.compile(r"decltype\s*\(\s*&?\s*\(?\s*(?:::)?(cu[A-Z]\w*)\s*\)?\s*\)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+)$", re.M)
_PFN = re.compile(r"\bPFN_cu\w+_v\d+(?:_pt[ds][sz])?\b")
_DEFINE_FN = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(")
_WORD_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_MAX_HEADERS = 256          # project headers read for the X-macro lists a file expands
_MAX_HEADER_BYTES = 4 << 20
_GENERIC = frozenset({"void (*)(void)", "void (*)()"})   # the C idiom of "any function", like void *


class Macros(Mapping[str, list[str]]):
    """The object-like macros of a translation unit, tokenized on first use (a TU has thousands)."""

    def __init__(self) -> None:
        self._cursors: dict[str, Any] = {}
        self._tokens: dict[str, list[str] | None] = {}

    def add(self, c: Any) -> None:
        self._cursors[c.spelling] = c

    def _get(self, name: str) -> list[str] | None:
        if name not in self._tokens:
            c = self._cursors.get(name)
            toks = tokens(c) if c is not None else []
            self._tokens[name] = toks[1:] if len(toks) >= 2 and toks[1] != "(" else None
        return self._tokens[name]

    def __getitem__(self, name: str) -> list[str]:
        got = self._get(name) if name in self._cursors else None
        if got is None:
            raise KeyError(name)
        return got

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._cursors and self._get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._cursors)

    def __len__(self) -> int:
        return len(self._cursors)


@dataclass
class Fn:
    cursor: Any
    name: str
    params: list[Any] = field(default_factory=list)
    ident: str = ""     # key(cursor)


@dataclass
class Site:
    """A request: where it is reported, the API, the values of its symbol, version and flags, and the type its
    pointer lands in (a `TypeInfo`, or None)."""

    call: Any
    fn: Fn | None
    api: str
    symbol: Val
    version: Val
    flags: Val
    target: Any
    status: str
    result_used: bool
    unchecked: tuple[str, ...]
    via: tuple[str, ...] = ()
    export: bool = False
    parents: tuple[Any, ...] = ()           # the enclosing cursors (for a driver-version check around it)
    callers: tuple[int, ...] = ()           # a wrapper's request: the lines that call the wrapper
    symbol_text: str = ""                   # the symbol argument as written, when its value is not known
    symbol_at: tuple[int, int] = (0, 0)     # where a table's row in this file writes the symbol
    version_at: tuple[int, int] = (0, 0)    # where a table's row in this file writes the version


@dataclass(frozen=True)
class TypeInfo:
    spelling: str
    pfn: str | None
    export: str | None          # decltype(&cuX_v2): the export the type was taken from
    sig: str | None             # the normalized canonical function type, when it is one
    handwritten: str | None
    written: tuple[int, int, int, int] | None = None   # a hand-written type: the declaration or cast of this
    # file that spells it (line, column, end line, end column), for `--fix`


def _or_ed(parents: list[Any]) -> bool:
    """A flag or-ed into a mask (`LEGACY | PER_THREAD`: a test of bits, not a request's mode)."""
    for p in reversed(parents):
        if p.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            continue
        if p.kind not in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            return False
        ch = kids(p)
        end = ch[0].extent.end.offset if ch else -1
        op = next((t.spelling for t in p.get_tokens() if t.extent.start.offset >= end), "")
        return op in ("|", "|=")
    return False


def seeds(cat: Catalog) -> F.Seeds:
    """What the dataflow analysis knows of the libraries: the getters, lookups and version queries, by name and
    by the export or request a pointer is bound to (from the catalog)."""

    def export_of(name: str, ver: F.Val) -> str | None:
        if name in EXPORT_APIS or name in ROLES or name in VERSION_KINDS:
            if name == "cuGetProcAddress" and isinstance(ver, F.Int) and ver.n >= 12000:
                return "cuGetProcAddress_v2"
            return name
        abi = cat.by_exported(name)
        if abi is not None and abi.symbol == "cuGetProcAddress":
            return "cuGetProcAddress_v2" if abi.version >= 12000 else "cuGetProcAddress"
        return abi.symbol if abi is not None and abi.symbol in VERSION_KINDS else None

    def is_driver_name(name: str) -> bool:
        if name in cat or cat.by_exported(name) is not None:
            return True
        base = split_suffix(name)
        return base is not None and base[0] in cat

    return F.Seeds(ROLES, EXPORT_APIS, VERSION_KINDS, COPIES, LENGTHS, export_of, is_driver_name)


class Walker:
    def __init__(self, tu: Any, path: str, cat: Catalog, norm: Normalizer, skip: tuple[str, ...],
                 text: str = "", foreign: dict[str, dict[str, Any]] | None = None) -> None:
        self.tu, self.path, self.cat, self.norm, self.skip, self.text = tu, path, cat, norm, skip, text
        self.macros = Macros()
        self.foreign = foreign or {}                     # wrappers of other files of the run, by USR
        self.fns: dict[str, Fn] = {}
        self.flag_uses: list[tuple[str, int, int]] = []
        self.called: set[str] = set()
        self._getters: dict[str, str] | None = None
        self._file_macros: dict[str, str] | None = None
        self._includes: dict[str, list[tuple[int, int]]] | None = None
        self._lines: list[str] | None = None
        self._fn_names: set[str] | None = None
        self._defines: list[tuple[str, list[tuple[int, str]]]] | None = None
        self._macro_hits: dict[str, list[tuple[str, int]]] = {}   # api -> (macro, line) of the #defines calling it
        self.tally: list[tuple[int, str]] = []           # each request of this file: (line, why not judged or "")
        self._list_rows: dict[str, dict[str, tuple[str, int, int]]] = {}   # list macro -> symbol -> where it is written
        self._hdr_defines: dict[str, list[tuple[str, list[tuple[int, str]]]]] | None = None
        self._hdr_texts: dict[str, str] | None = None
        self._obj_defines: dict[str, str] | None = None
        self._pointers: dict[str, Any] | None = None
        self._members: dict[str, int] | None = None
        self._in_requests: dict[str, dict[str, int]] = {}
        self._type_cache: dict[str, TypeInfo | None] = {}
        self.low: Lowered | None = None
        self.result: F.Result | None = None
        self._by_var: dict[str, dict[str, int]] | None = None
        self._fn_bodies: dict[str, str] | None = None
        self.cuda_version = 0                            # the CUDA_VERSION of the headers parsed (set by extract)

    # --- the analysis --------------------------------------------------------------------------------------
    def ours(self, c: Any) -> bool:
        loc = c.location
        if loc.is_in_system_header:
            return False          # cuda.h and the system's headers (-isystem): one call, no file name
        f = loc.file
        return f is not None and not f.name.startswith(self.skip)

    def run(self) -> Walker:
        for c in kids(self.tu.cursor):
            if c.kind == K.MACRO_DEFINITION:
                self.macros.add(c)
        low = self.low = lower(self.tu, self.ours, self._type_of, self._static_api, self.macros,
                               frozenset(FLAG_MODES), {self.path: self.text}, self._object_defines,
                               self._function_bodies, self.cuda_version)
        self.fns = {k: Fn(info.cursor, info.name, info.params, k) for k, info in low.fns.items()}
        self.flag_uses = [(c.spelling, c.location.line, c.location.column) for c, par in low.flag_uses
                          if not _or_ed(list(par))]
        self.called = low.called
        low.prog.foreign = {usr: _foreign_summary(usr, spec) for usr, spec in self.foreign.items()
                            if usr not in low.prog.funcs}
        self.result = F.solve(low.prog, seeds(self.cat))
        return self

    def _type_of(self, ty: Any, anchor: Any) -> TypeInfo | None:
        """The type record of a place or conversion a pointer may land in (None: not a specific function type).
        A call's type is the one its written template argument spells (`get<PFN_cuX_vN>`, `get<decltype(&cuX)>`)."""
        if anchor is not None and anchor.kind == K.CALL_EXPR:
            ty = _sugared(anchor, ty)
            info = self.type_info(ty)
            exp = _written_export(anchor)
            if info is None or info.sig is None or _dependent(ty):
                return None
            if exp is not None and info.pfn is None:
                return TypeInfo(info.spelling, None, exp, info.sig, f"the pointer's type is decltype of {exp}")
            return info
        info = self.type_info(ty)
        if info is None or info.sig is None or info.spelling in _GENERIC or _dependent(ty) or \
                (info.pfn is None and info.sig is not None and _generic_sig(ty)):
            return None
        return self._spelled(info, anchor) if anchor is not None and anchor.kind in (
            K.VAR_DECL, K.FIELD_DECL, K.PARM_DECL, K.CSTYLE_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR,
            K.CXX_STATIC_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR) else info

    def _static_api(self, callee: Any) -> str:
        """The request or lookup API a callee expression is by its type (a pointer of the getter's type, or of
        dlsym's, is that function whatever it is named)."""
        ty = callee.type
        can = ty.get_canonical()
        if can.kind != T.POINTER:
            return ""
        info = self.type_info(ty)
        return self.getters().get(signless(info.sig), "") if info is not None and info.sig else ""

    def getters(self) -> dict[str, str]:
        """Normalized function type, signedness dropped (a hand-written `unsigned` version is still the
        getter) -> the getter API it is (a pointer of that type is that API): the
        driver's cuGetProcAddress ABIs, and dlsym's `void *(void *, const char *)` (an interposer's
        pointer to the real dlsym is dlsym)."""
        if self._getters is None:
            self._getters = {}
            for a in self.cat.abis("cuGetProcAddress"):
                self._getters.setdefault(signless(self.norm.abi(a)), a.exported or a.symbol)
            self._getters.setdefault(signless(self.norm.signature("void *", ["void *", "const char *"])), "dlsym")
        return self._getters

    def call_lines(self) -> set[int]:
        """The lines of this file where a call was lowered (a request seen there, judged or not, is said)."""
        assert self.low is not None
        me = os.path.abspath(self.path)
        return {s.cursor.location.line for s in self.low.sites.values()
                if s.cursor.location.file is not None and os.path.abspath(s.cursor.location.file.name) == me}

    def misstores(self) -> list[tuple[Any, Any]]:
        """The stores through a function pointer's value (see `.lower`): (the store, the pointer meant)."""
        return list(self.low.misstores) if self.low is not None else []

    def uses(self, fn: str, d: Any) -> int:
        """How often the variable `d` is named in the function `fn`; a variable a lambda reaches, everywhere."""
        assert self.low is not None
        k = key(d)
        v = self.low.prog.funcs.get(fn)
        shared = any(var.key == k and var.shared for var in v.params) if v is not None else False
        if shared or (d.semantic_parent is not None and d.semantic_parent.kind not in (
                K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR, K.LAMBDA_EXPR)) \
                or len(self._refs_of().get(k, ())) > 1:
            return sum(self._refs_of().get(k, {}).values())
        return self.low.refs.get((fn, k), 0)

    def _refs_of(self) -> dict[str, dict[str, int]]:
        """variable -> function -> how often it is named there (the lowering's counts, indexed once)."""
        if self._by_var is None:
            assert self.low is not None
            self._by_var = {}
            for (f, var), n in self.low.refs.items():
                self._by_var.setdefault(var, {})[f] = n
        return self._by_var

    # --- sites -----------------------------------------------------------------------------------------------
    def sites(self) -> Iterator[Site]:
        """Every request and export, with wrapper layers followed (each at the call that makes its symbol
        known), then each wrapper's own request once (what does not depend on its callers)."""
        assert self.result is not None
        for r in sorted(self.result.requests.values(), key=lambda r: (r.at, repr(r.value))):
            yield from self._request_sites(r)
        yield from self._wrapper_sites()

    def _request_sites(self, r: F.Request) -> Iterator[Site]:
        assert self.low is not None
        v = r.value
        at, inner = self.low.sites.get(r.at), self.low.sites.get(v.site)
        if at is None or inner is None:
            return
        fn = self.fns.get(at.fn)
        for target in self._targets(r.lands):
            if isinstance(v, F.Exp):
                yield Site(at.cursor, fn, v.api, _val(v.name), UNKNOWN, UNKNOWN, target, "", True, (), r.via,
                           True, at.parents, symbol_text=_arg_text(inner, EXPORT_APIS.get(v.api, 1)),
                           symbol_at=v.name.at if isinstance(v.name, F.Str) else (0, 0))
                continue
            direct = r.at == v.site and not r.via
            status, used, unchecked = self._checks(v.api, v.status, inner) if direct else \
                self._caller_checks(v, at, inner, r.via)
            version = _version_val(v)
            vi = ROLES.get(v.api, (0, 1, None))[2]
            if direct and vi is not None and not (version.kind == "toolkit" and version.text):
                version = replace(version, text=_arg_text(inner, vi) or version.text)
            yield Site(at.cursor, fn, v.api, _val(v.sym), version, _val(v.flags), target, status,
                       used, unchecked, r.via, False, at.parents,
                       symbol_text=_arg_text(inner, ROLES.get(v.api, (0,))[0]),
                       symbol_at=v.sym.at if isinstance(v.sym, F.Str) else (0, 0),
                       version_at=v.ver.at if isinstance(v.ver, (F.Tk, F.Int)) else (0, 0))

    def _wrapper_sites(self) -> Iterator[Site]:
        """A getter or lookup whose symbol is its function's parameter: once, with the lines of the calls that
        bind it (none: no call of the function is seen, so the request is not judged)."""
        assert self.low is not None and self.result is not None
        low, res = self.low, self.result
        for sid in sorted({*res.wrapped, *(s for s, why in res.unresolved.items() if "param" in why)}):
            inner = low.sites.get(sid)
            api = res.apis.get(sid, "")
            if inner is None or not api:
                continue
            callers = tuple(sorted({low.sites[a].cursor.location.line for a in res.wrapped.get(sid, ())
                                    if a in low.sites}))
            export = api not in ROLES
            status, used, unchecked = ("", True, ()) if export else self._checks(api, None, inner)
            text = _arg_text(inner, EXPORT_APIS.get(api, 1) if export else ROLES[api][0])
            yield Site(inner.cursor, self.fns.get(inner.fn), api, Val(None, "param", text=text), Val(None, "param"),
                       UNKNOWN, None, "not_applicable" if export else status, used, unchecked, (), export,
                       inner.parents, callers, text)

    def _targets(self, lands: set[int]) -> list[TypeInfo | None]:
        """The types a pointer lands in (one each distinct function type; None when it lands in none)."""
        assert self.low is not None
        infos = [self.low.types[t] for t in sorted(lands) if 0 <= t < len(self.low.types)]
        out: dict[str, TypeInfo] = {}
        for info in sorted((i for i in infos if i is not None),
                           key=lambda i: (i.pfn is None, i.export is None, i.written is None)):
            out.setdefault(info.sig or info.spelling, info)
        return list(out.values()) or [None]

    def _checks(self, api: str, status: F.Val | None, inner: SiteInfo) -> tuple[str, bool, tuple[str, ...]]:
        """How a getter's call passes and tests its results: (status given/null/missing/not_applicable, whether
        the CUresult is used, the result variables never tested afterwards)."""
        c = inner.cursor
        args = _arguments(c)
        used, unchecked = _result_use(c, list(inner.parents), inner.fn, self)
        sti = ROLES.get(api, (0, 1, None, 2, None))[4]
        state = "not_applicable"
        out = list(unchecked)
        if sti is not None and len(args) > sti:
            null = isinstance(status, F.Int) and status.n == 0 if status is not None else \
                evaluate(args[sti], Env({})).value == 0
            state = "null" if null else "given"
            d = _decl_of(args[sti])
            if state == "given" and d is not None and d.kind != K.PARM_DECL and not self._tested(inner.fn, d):
                out.append(d.spelling)
        elif sti is not None and api != "cuGetProcAddress":
            state = "missing"
        return state, used, tuple(out)

    def _caller_checks(self, v: F.Ent, at: SiteInfo, inner: SiteInfo,
                       via: tuple[str, ...]) -> tuple[str, bool, tuple[str, ...]]:
        """A request a wrapper makes with the query result its caller passes on (one wrapper deep): the caller's to
        test, unless the wrapper tests it itself."""
        st = v.status
        if len(via) != 1 or not isinstance(st, F.Addr) or st.loc.path or not st.loc.base.startswith("l:"):
            return "not_applicable", True, ()
        sti = ROLES.get(v.api, (0, 1, None, 2, None))[4]
        args = _arguments(inner.cursor)
        own = _decl_of(args[sti]) if sti is not None and len(args) > sti else None
        if own is None or own.kind != K.PARM_DECL or self._tested(inner.fn, own):
            return "not_applicable", True, ()
        k = st.loc.base[2:]
        d = next((x.referenced for x in subtree(at.cursor) if x.kind == K.DECL_REF_EXPR and x.referenced is not None
                  and key(x.referenced) == k), None)
        if d is None or d.kind == K.PARM_DECL:
            return "given", True, ()
        return "given", True, (() if self._tested(at.fn, d) else (d.spelling,))

    def _tested(self, fn: str, d: Any) -> bool:
        """True when a status variable is read somewhere other than inside a request (a getter's call, or the call
        of a wrapper that makes one)."""
        assert self.low is not None and self.result is not None
        inside = self._in_requests.get(fn)
        if inside is None:
            inside = self._in_requests[fn] = {}
            for sid in {*self.result.apis, *(r.at for r in self.result.requests.values())}:
                s = self.low.sites.get(sid)
                if s is not None and s.fn == fn:
                    for x in subtree(s.cursor):
                        if x.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and x.referenced is not None:
                            k = key(x.referenced)
                            inside[k] = inside.get(k, 0) + 1
        return self._named_in(fn, d) > inside.get(key(d), 0)

    def _named_in(self, fn: str, d: Any) -> int:
        """How often a variable is named in the function `fn`; a struct's field (`st.q`), in any function of the
        file (a lambda that captures `st` by reference writes the enclosing function's `st.q`)."""
        if d.kind != K.FIELD_DECL:
            return self.uses(fn, d)
        if self._members is None:
            self._members = {}
            for f in self.fns.values():
                for x in subtree(f.cursor):
                    if x.kind == K.MEMBER_REF_EXPR and x.referenced is not None:
                        m = key(x.referenced)
                        self._members[m] = self._members.get(m, 0) + 1
        return self._members.get(key(d), 0)

    def versioned(self, d: Any) -> bool:
        """True when a variable holds what a version query wrote (the driver's)."""
        assert self.result is not None
        return key(d) in self.result.versioned

    def portable(self) -> dict[str, dict[str, Any]]:
        """This translation unit's wrappers as data other files' translation units can use (by USR): a function
        whose request's symbol, version and flags are each a parameter or a constant, and the parameter the
        pointer is stored through."""
        assert self.result is not None and self.low is not None
        out: dict[str, dict[str, Any]] = {}
        for k, s in self.result.summaries.items():
            f = self.low.prog.funcs.get(k)
            if f is None or not k.startswith("c:"):
                continue
            spec = next((got for eff in sorted(s.effects, key=repr) if (got := _spec(eff, s, k)) is not None), None)
            if spec is not None:
                out[k] = {"name": f.name, **spec}
        return out

    # --- pointer types ---------------------------------------------------------------------------------
    def _spelled(self, info: TypeInfo | None, c: Any) -> TypeInfo | None:
        """`info`, when hand-written, with where this file spells it: the extent of the declaration or cast `c`."""
        a, b = c.extent.start, c.extent.end
        if info is None or info.handwritten is None or a.file is None or b.file is None or a.file.name != b.file.name \
                or os.path.abspath(a.file.name) != os.path.abspath(self.path):
            return info
        return replace(info, written=(a.line, a.column, b.line, b.column))

    def type_info(self, ty: Any) -> TypeInfo | None:
        k = f"{ty.kind.name}\0{ty.spelling}\0{ty.get_canonical().spelling}"
        if k not in self._type_cache:
            self._type_cache[k] = self._type_info(ty)
        return self._type_cache[k]

    def _type_info(self, ty: Any) -> TypeInfo | None:
        spelling = ty.spelling
        chain = _chain(ty)
        pfn = next((n for n in chain if _PFN.fullmatch(n)), None)
        if pfn is None:
            m = _PFN.search(spelling)
            pfn = m.group(0) if m else None
        can = ty.get_canonical()
        sig = None
        if can.kind == T.POINTER and can.get_pointee().kind in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO):
            f = can.get_pointee()
            argt = [self._spelled_as(a) for a in f.argument_types()] if f.kind == T.FUNCTIONPROTO else []
            sig = self.norm.signature(self._spelled_as(f.get_result()), argt)
        elif can.kind == T.VOID or (can.kind == T.POINTER and can.get_pointee().kind == T.VOID):
            return None
        m = _DECLTYPE.search(spelling) or next((_DECLTYPE.search(n) for n in chain if _DECLTYPE.search(n)), None)
        held = self._held(m, spelling) if m is not None and sig is not None else None
        if held is not None:
            return self.type_info(held)
        export = m.group(1) if m else None
        return TypeInfo(spelling, pfn, export, sig, self._handwritten(ty, spelling, pfn, export) if sig else None)

    def _held(self, m: re.Match[str], spelling: str) -> Any:
        """`decltype(p)` of a pointer object (not `&f`, not `decltype(f) *`): the type `p` is declared with."""
        return self._pointer_named(m.group(1)) if "&" not in m.group(0) and spelling.strip() == m.group(0) else None

    def _pointer_named(self, name: str) -> Any:
        """The declared type of this project's pointer object (a global or a member) called `name`, when there is
        exactly one; None otherwise (a function of that name: `decltype(cuX)` is its type)."""
        if self._pointers is None:
            found: dict[str, list[Any]] = {}
            todo = list(kids(self.tu.cursor))
            while todo:
                c = todo.pop()
                if c.kind in (K.NAMESPACE, K.CLASS_DECL, K.STRUCT_DECL, K.LINKAGE_SPEC) and self.ours(c):
                    todo.extend(kids(c))
                elif c.kind in (K.VAR_DECL, K.FIELD_DECL) and self.ours(c) and \
                        c.type.get_canonical().kind == T.POINTER:
                    found.setdefault(c.spelling, []).append(c.type)
            self._pointers = {n: ts[0] for n, ts in found.items()
                              if len({t.get_canonical().spelling for t in ts}) == 1}
        return self._pointers.get(name)

    def _spelled_as(self, ty: Any) -> str:
        """A parameter's or result's canonical spelling; an enum the catalog does not know (a project's own copy of
        `CUresult`) as the integer type it is passed as."""
        can = ty.get_canonical()
        if can.kind == T.ENUM:
            d = can.get_declaration()
            if d is not None and d.spelling not in self.norm.enums:
                try:
                    return str(d.enum_type.get_canonical().spelling)
                except Exception:
                    return str(can.spelling)
        return str(can.spelling)

    def _handwritten(self, ty: Any, spelling: str, pfn: str | None, export: str | None) -> str | None:
        """Why a function-pointer type is written by hand: no PFN typedef, or a PFN_ name the project declares."""
        if pfn is None:
            return (f"the pointer's type is {spelling}, taken from the declaration of {export} (decltype)" if export
                    else f"the pointer's type {spelling} is a hand-written function type")
        own = self._own_typedef(ty, pfn)
        return None if own is None else \
            f"the pointer's type {pfn} is a typedef the project writes itself ({own}), not cudaTypedefs.h's"

    def _own_typedef(self, ty: Any, name: str) -> str | None:
        """Where this project declares the typedef `name` the type goes through (None: the toolkit's, or not found)."""
        t = ty
        for _ in range(16):
            if t.kind == T.ELABORATED:
                t = t.get_named_type()
            if t.kind != T.TYPEDEF:
                return None
            d = t.get_declaration()
            if d.spelling == name:
                f = d.location.file
                return f"{os.path.basename(f.name)}:{d.location.line}" if f is not None and self.ours(d) else None
            t = d.underlying_typedef_type
        return None


    # --- facts ---------------------------------------------------------------------------------------------
    def facts(self, where: Any) -> tuple[list[Query], list[Export]]:
        queries: list[Query] = []
        exports: list[Export] = []
        for s in self.sites():
            at = self._place(s)
            if at is None:
                continue
            line, col, row = at
            macro = self._expanded(s)
            here = where(s) + (f" (the row at {row}, a table included here)" if row else "") + \
                (f" (expanded from the macro {macro})" if macro else "")
            tinfo = s.target if isinstance(s.target, TypeInfo) else None
            if not s.callers:
                self.tally.append((line, _unjudged(s)))
            written = self._row(s, line, row, macro)
            if not row:   # a request or export a table's row of this file names: that row's
                line, col, here = self._at_row(s, line, col, here)
            if s.export:
                if isinstance(s.symbol.value, str):
                    exports.append(Export(s.api, s.symbol.value, line, col, target=None,
                                          target_type=tinfo.pfn or tinfo.spelling if tinfo else None,
                                          where=here, target_sig=tinfo.sig if tinfo else None,
                                          target_export=tinfo.export if tinfo else None,
                                          cause=s.fn.ident if (macro or row) and s.fn is not None else "",
                                          row=written, handwritten=tinfo.handwritten if tinfo else None,
                                          macro=macro))
                continue
            queries.append(self._request(s, tinfo, (line, col, at[0]), here, written, macro))
        return queries, exports

    def _request(self, s: Site, tinfo: TypeInfo | None, at: tuple[int, int, int], here: str, written: Row | None,
                 macro: str) -> Query:
        """A request's facts, reported at `at` (line, column; the line of its call)."""
        line, col, call = at
        q = self._query(s, tinfo, line, col, here)
        q.row = written
        if s.symbol_at[0] and written is None and line != call:   # the version every row shares: at the call
            q.symbol_line, q.symbol_col = s.symbol_at
            q.version_line = 0 if s.version_at[0] else call
        if macro:
            self._by_macro(q, s, macro)
        return q

    @staticmethod
    def _at_row(s: Site, line: int, col: int, here: str) -> tuple[int, int, str]:
        """Where a request or export is reported: the row of this file's table that holds its name, else its
        call."""
        if not s.symbol_at[0]:
            return line, col, here
        return *s.symbol_at, here + f" (a row of the table, {'looked up' if s.export else 'asked'} at line {line})"

    def _by_macro(self, q: Query, s: Site, macro: str) -> None:
        """What a request a macro's invocation writes owes to the macro: its name, the `#define` that spells its
        version (one cause for every expansion), and, written there directly, the `#define`s that make it."""
        q.macro = macro
        q.version_line = (self._spells(macro, q.version_text) if q.version_kind != "literal" else 0) or q.version_line
        if not s.via:
            q.macro_lines = self._macro_lines(s.api, macro)

    def _row(self, s: Site, line: int, row: str, macro: str) -> Row | None:
        """Where the table's row this request is is written, when in another file: a table included into a function
        (the row is the call itself), or a list macro of a header expanded here (`LIST(LOAD)`: the row is where the
        list names the symbol)."""
        me = os.path.basename(self.path)
        if row:
            loc = s.call.location
            return Row(os.path.abspath(loc.file.name), loc.line, loc.column,
                       f" (a row of the table included at {me}:{line})")
        if not macro or not isinstance(s.symbol.value, str):
            return None
        got = self._list(macro, 0).get(s.symbol.value)
        if got is None or got[0] == os.path.abspath(self.path):
            return None
        return Row(*got, f" (a row of the table {macro}, expanded at {me}:{line})")

    def _list(self, macro: str, depth: int) -> dict[str, tuple[str, int, int]]:
        """The `cu` names a function-like macro of a header names in its body (through the list macros it expands, 4
        deep), each with where it is first written: the rows of an X-macro list. Once per macro."""
        got = self._list_rows.get(macro)
        if got is not None:
            return got
        out: dict[str, tuple[str, int, int]] = {}
        self._list_rows[macro] = out
        defs = self._header_defines()
        for path, body in defs.get(macro, []) if depth <= 4 else []:
            for i, (line, text) in enumerate(body):
                for m in _IDENT.finditer(text, text.index(macro) + len(macro) if i == 0 else 0):
                    word = m.group(0)
                    if word.startswith("cu"):
                        out.setdefault(word, (path, line, m.start() + 1))
                    elif word in defs and word != macro and word not in self._list_rows:
                        for k, v in self._list(word, depth + 1).items():
                            out.setdefault(k, v)
        return out

    def _function_bodies(self) -> dict[str, str]:
        """The function-like `#define`s of this file and the project headers it includes: name -> body text."""
        if self._fn_bodies is None:
            self._fn_bodies = {}
            for name, body in _function_defines(self.text):
                self._fn_bodies.setdefault(name, "\n".join(t for _, t in body))
            for name, rows in self._header_defines().items():
                self._fn_bodies.setdefault(name, "\n".join(t for _, t in rows[0][1]))
        return self._fn_bodies

    def _object_defines(self) -> dict[str, str]:
        """The object-like `#define`s of the project headers this translation unit includes: name -> body (the
        bodies of a macro defined in several `#if` branches, one a line). Read once."""
        if self._obj_defines is None:
            defs: dict[str, str] = {}
            for text in self._header_texts().values():
                for name, body in _DEFINE.findall(text):
                    defs[name] = f"{defs[name]}\n{body}" if name in defs else body
            self._obj_defines = defs
        return self._obj_defines

    def _header_texts(self) -> dict[str, str]:
        """The texts of the project headers this translation unit includes (not this file, not the system's or the
        toolkit's; at most `_MAX_HEADERS`, each at most `_MAX_HEADER_BYTES`). Read once."""
        if self._hdr_texts is None:
            self._hdr_texts = {}
            me = os.path.abspath(self.path)
            for inc in self.tu.get_includes():
                f = os.path.abspath(inc.include.name) if inc.include is not None else ""
                if not f or f == me or f in self._hdr_texts or f.startswith(self.skip) or \
                        len(self._hdr_texts) >= _MAX_HEADERS:
                    continue
                try:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        self._hdr_texts[f] = fh.read(_MAX_HEADER_BYTES)
                except OSError:
                    continue
        return self._hdr_texts

    def _header_defines(self) -> dict[str, list[tuple[str, list[tuple[int, str]]]]]:
        """The function-like `#define`s of the project headers this translation unit includes (not this file's, not
        the system's or the toolkit's): name -> (header, its lines). Read once."""
        if self._hdr_defines is None:
            self._hdr_defines = {}
            for f, text in self._header_texts().items():
                for name, body in _function_defines(text):
                    self._hdr_defines.setdefault(name, []).append((f, body))
        return self._hdr_defines

    def _macro_lines(self, api: str, name: str) -> tuple[int, ...]:
        """The lines of this file where a function-like `#define` calls `api` in its body: the definitions of the
        macro `name` (one per `#if` branch), or else the one definition that calls it (none: several do)."""
        if self._defines is None:
            self._defines = _function_defines(self.text)
        hits = self._macro_hits.get(api)
        if hits is None:    # once per API, not per request
            call = re.compile(rf"\b{re.escape(api)}\s*\(")
            hits = self._macro_hits[api] = [(n, next(line for line, text in body if call.search(text)))
                                            for n, body in self._defines if any(call.search(text) for _, text in body)]
        own = tuple(line for n, line in hits if n == name)
        return own or (tuple(line for _, line in hits) if len(hits) == 1 else ())

    def _spells(self, macro: str, text: str) -> int:
        """The line of this file's `#define` of `macro` when its body (not its parameters) spells `text` as a word;
        0 when it does not, or the macro is defined more than once."""
        if self._defines is None:
            self._defines = _function_defines(self.text)
        bodies = [body for n, body in self._defines if n == macro]
        if len(bodies) != 1 or not re.fullmatch(r"\w+", text):
            return 0
        first = bodies[0][0][1]
        params = first[first.index("(") + 1:first.find(")")] if ")" in first else ""
        rest = first[first.find(")") + 1:] + "\n" + "\n".join(t for _, t in bodies[0][1:])
        word = re.compile(rf"\b{text}\b")
        return bodies[0][0][0] if word.search(rest) and not word.search(params) else 0

    def _expanded(self, s: Site) -> str:
        """The macro whose invocation writes the request in this file ("" when it is written out)."""
        loc = s.call.location
        if loc.file is None or os.path.abspath(loc.file.name) != os.path.abspath(self.path):
            return ""
        if self._lines is None:
            self._lines = self.text.splitlines()
        line = self._lines[loc.line - 1] if 0 < loc.line <= len(self._lines) else ""
        m = _WORD_CALL.match(line, max(loc.column - 1, 0))
        name = m.group(1) if m else ""
        if name and name not in (s.call.spelling, s.api, _recovered_callee(s.call)) and name not in ROLES \
                and name not in EXPORT_APIS and name not in self.fn_names() and name not in _callee_names(s.call):
            return name
        return ""

    def fn_names(self) -> set[str]:
        if self._fn_names is None:
            self._fn_names = {f.name for f in self.fns.values()}
        return self._fn_names

    def _place(self, s: Site) -> tuple[int, int, str] | None:
        """Where this file reports a request: its own line; or, for a row of a table the file pulls in
        with `#include` inside one of its functions (an X-macro table), the `#include` line, naming the
        row. None: the request belongs to another file (a header's own code, judged with the header)."""
        f = s.call.location.file
        if f is None:
            return None
        if os.path.abspath(f.name) == os.path.abspath(self.path):
            return s.call.location.line, s.call.location.column, ""
        fn = s.fn.cursor if s.fn is not None else None
        home = fn.location.file if fn is not None else None
        if fn is None or home is None or os.path.abspath(home.name) != os.path.abspath(self.path):
            return None
        places = self._included_at().get(os.path.abspath(f.name))
        if not places:
            return None
        lo, hi = fn.extent.start.line, fn.extent.end.line   # the #include inside the function
        at = next((p for p in places if lo <= p[0] <= hi), places[0])
        return at[0], at[1], f"{os.path.basename(f.name)}:{s.call.location.line}"

    def _included_at(self) -> dict[str, list[tuple[int, int]]]:
        """Each header this file includes (directly or through other headers): the lines and columns of
        the `#include`s in this file it came in by, in order."""
        if self._includes is None:
            parent: dict[str, str] = {}
            direct: dict[str, list[tuple[int, int]]] = {}
            me = os.path.abspath(self.path)
            for inc in self.tu.get_includes():
                src = os.path.abspath(inc.source.name) if inc.source is not None else ""
                dst = os.path.abspath(inc.include.name) if inc.include is not None else ""
                if not dst:
                    continue
                if src == me:
                    direct.setdefault(dst, []).append((inc.location.line, inc.location.column))
                else:
                    parent.setdefault(dst, src)
            out = dict(direct)
            for dst in parent:
                seen, cur = 0, dst
                while cur not in direct and cur in parent and seen < 64:
                    cur, seen = parent[cur], seen + 1
                if cur in direct:
                    out.setdefault(dst, direct[cur])
            self._includes = out
        return self._includes

    def _query(self, s: Site, tinfo: TypeInfo | None, line: int, col: int, where: str) -> Query:
        sym = s.symbol.value if isinstance(s.symbol.value, str) else None
        ver, vkind = _version(s)
        literal = ver is not None and vkind == "literal"
        t = tinfo or TypeInfo("", None, None, None, None)
        return Query(
            api=s.api, line=line, col=col, symbol=sym, version=ver if literal else None,
            pins=(ver,) if literal and ver is not None else (), version_text=s.version.text, version_kind=vkind,
            flags_text=s.flags.text or ("" if s.flags.value is None else str(s.flags.value)),
            flags_mode=_flags_mode(s.flags), status=s.status, result_used=s.result_used, unchecked=s.unchecked,
            target_type=(t.pfn or t.spelling) if tinfo else None, handwritten=t.handwritten,
            via=" -> ".join(s.via), wrapped=bool(s.via), where=where, target_sig=t.sig, target_export=t.export,
            guard=_guard(s.parents, self), target_decl=t.written)



def _function_defines(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """Each function-like `#define` of a text: its name and its lines (number, text), continuation lines included."""
    out: list[tuple[str, list[tuple[int, str]]]] = []
    if "define" not in text:
        return out
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _DEFINE_FN.match(lines[i])
        if m:
            body = [(i + 1, lines[i])]
            while body[-1][1].endswith("\\") and i + 1 < len(lines):
                i += 1
                body.append((i + 1, lines[i]))
            out.append((m.group(1), body))
        i += 1
    return out


def lost_requests(tu: Any, path: str, errors: list[tuple[int, str]], seen: set[int]) -> list[tuple[str, int, int, str, str]]:
    """Requests clang dropped at an error (a call with an undeclared identifier in it is not in the AST):
    (api, line, col, symbol when its argument is one string literal, the error). Found by their tokens in the
    file, on the lines of an error, where no request was seen."""
    if not errors:
        return []
    bad = sorted({line for line, _ in errors if line})
    if not bad:
        return []
    out: list[tuple[str, int, int, str, str]] = []
    for i, t, toks in _request_tokens(tu, path):
        args, end = _call_args(toks, i + 2)
        lines = range(t.location.line, end + 1)
        why = next((msg for line, msg in errors if line in lines), None)
        if why is None or any(x in seen for x in lines):
            continue
        name = t.spelling
        k = EXPORT_APIS.get(name, ROLES[name][0] if name in ROLES else 0)
        arg = args[k] if k < len(args) else []
        sym = arg[0][1:-1] if len(arg) == 1 and arg[0].startswith('"') else ""
        out.append((name, t.location.line, t.location.column, sym, why))
    return out


def _request_tokens(tu: Any, path: str) -> Iterator[tuple[int, Any, list[Any]]]:
    """The tokens of this file that name a request API followed by `(` (not in a `#define`, not `&name`)."""
    try:
        toks = list(tu.cursor.get_tokens())
    except Exception:
        return
    me = os.path.abspath(path)
    for i, t in enumerate(toks[:-1]):
        name = t.spelling
        if (name not in ROLES and name not in EXPORT_APIS) or toks[i + 1].spelling != "(":
            continue
        loc = t.location
        if loc.file is None or os.path.abspath(loc.file.name) != me or (i and toks[i - 1].spelling in ("define", "&")):
            continue
        yield i, t, toks


def _call_args(toks: list[Any], i: int) -> tuple[list[list[str]], int]:
    """The arguments of a call whose `(` is just before `toks[i]`, as token spellings, and its last line."""
    out: list[list[str]] = [[]]
    level = 0
    last = toks[i - 1].location.line
    for t in toks[i:i + 512]:
        sp = t.spelling
        last = t.location.line
        if sp in ("(", "[", "{"):
            level += 1
        elif sp in (")", "]", "}"):
            if level == 0:
                break
            level -= 1
        elif sp == "," and level == 0:
            out.append([])
            continue
        out[-1].append(sp)
    return out, last


def _version(s: Site) -> tuple[int | None, str]:
    """The pin (when it is a number) and where the version came from."""
    if s.api == "cudaGetDriverEntryPoint":
        return None, "runtime"
    ver = s.version.value if isinstance(s.version.value, int) else None
    if ver is not None and s.version.kind == "literal":
        return ver, "literal"
    kind = s.version.kind
    return ver, "other" if kind == "literal" else kind


def _flags_mode(v: Val) -> str:
    if isinstance(v.value, int):
        return FLAG_NUMBERS.get(v.value, "")
    return flag_mode(v.text) if v.text else ""




def _unjudged(s: Site) -> str:
    """Why a request cannot be judged ("" when its symbol is known: the facts that are known are judged)."""
    if isinstance(s.symbol.value, str):
        return ""
    what = "exported name" if s.export else "symbol"
    text = s.symbol.text or s.symbol_text[:60]
    if s.symbol.kind == "param":
        return f"the {what} is a parameter ({text}) of a function no call of which is seen"
    return f"the {what} ({text}) is not a constant the linter can follow" if text else f"the {what} is not known"


def _val(v: F.Val) -> Val:
    """A value of the analysis as the facts carry it."""
    if isinstance(v, F.Str):
        return Val(v.s, "literal", text=f'"{v.s}"')
    if isinstance(v, F.Int):
        return Val(v.n, "literal", text=v.text or str(v.n))
    if isinstance(v, F.Tk):
        return Val(v.n, "toolkit", text=v.text)
    if isinstance(v, F.Ver):   # what cudaRuntimeGetVersion wrote is not cudaGetDriverEntryPoint's own "runtime"
        return Val(None, "driver" if v.kind == "driver" else "runtime_version", text=v.text)
    if isinstance(v, F.Par):
        return Val(None, "param", param=v.i if v.i >= 0 else None, tparam=-1 - v.i if v.i < 0 else None,
                   text=v.text)
    return Val(None, "other", text=getattr(v, "text", ""))


def _version_val(v: F.Ent) -> Val:
    if v.api == "cudaGetDriverEntryPoint":
        return Val(None, "runtime")
    return _val(v.ver)


def _from_val(v: Val) -> F.Val:
    if isinstance(v.value, str):
        return F.Str(v.value)
    if v.kind == "toolkit":
        return F.Tk(v.value if isinstance(v.value, int) else None, v.text)
    if v.kind in ("driver", "runtime_version"):
        return F.Ver("driver" if v.kind == "driver" else "runtime", v.text)
    if isinstance(v.value, int):
        return F.Int(v.value, v.text)
    return F.Unk(v.text)


def _portable(x: F.Val, fn: str) -> tuple[str, Any] | None:
    """A wrapper's role as data: ("param", i) when it is the parameter itself, ("fixed", value) when it does not
    depend on the parameters; None otherwise."""
    if isinstance(x, F.Par) and x.fn == fn and x.i >= 0:
        return ("param", x.i)
    if F.symbolic(x):
        return None
    return ("fixed", _val(x))


def _spec(eff: F.Effect, s: F.Summary, k: str) -> dict[str, Any] | None:
    """A request of a function's summary as another unit's wrapper spec (see `Walker.portable`), or None."""
    if not isinstance(eff, F.Req) or not isinstance(eff.v, F.Ent):
        return None
    roles = [_portable(x, k) for x in (eff.v.sym, eff.v.ver, eff.v.flags)]
    if any(r is None for r in roles) or roles[0] is None or roles[0][0] != "param":
        return None
    target = next((("param", st.loc.sym.i) for st in s.effects if isinstance(st, F.Store)
                   and st.loc.base == "*" and not st.loc.path and isinstance(st.loc.sym, F.Par)
                   and st.loc.sym.fn == k and any(v == eff.v for v, _ in st.vals)), None)
    return {"api": eff.v.api, "roles": roles, "target": target}


def _foreign_summary(usr: str, spec: dict[str, Any]) -> F.Summary:
    """Another file's wrapper (see `Walker.portable`) as the summary of a function: its request, with the
    symbol, version and flags its parameters or constants, stored through its target parameter."""
    roles = [F.Par(usr, v) if kind == "param" else _from_val(v) for kind, v in spec["roles"]]
    ent = F.Ent(-1, -1, spec["api"], roles[0], roles[1], roles[2], F.Unk())
    effects: set[F.Effect] = {F.Req(ent, ())}
    target = spec.get("target")
    if target and target[0] == "param":
        effects.add(F.Store(F.Loc("*", (), F.Par(usr, target[1])), frozenset({(ent, ())})))
    return F.Summary(usr, F.UNKNOWN, frozenset(effects), (), str(spec.get("name", "")))


def _arg_text(s: SiteInfo, i: int) -> str:
    args = _arguments(s.cursor)
    return " ".join(tokens(args[i]))[:60] if i < len(args) else ""


def _sugared(c: Any, ty: Any = None) -> Any:
    """The call's type (or `ty`) as the template argument written at the call spells it (`get<PFN_cuX_vN>(...)`:
    a specialization's own arguments are canonical, the written ones keep the typedef)."""
    ty = c.type if ty is None else ty
    want = ty.get_canonical().spelling
    callee = next(iter(kids(c)), None)
    if callee is None:
        return ty
    for x in callee.walk_preorder():
        if x.kind == K.TYPE_REF and x.referenced is not None and x.referenced.kind == K.TYPEDEF_DECL:
            t = x.referenced.type
            if t.get_canonical().spelling == want:
                return t
    return ty


def _written_export(c: Any) -> str | None:
    """`get<decltype(&cuX)>(...)`: the function the written template argument takes the type of."""
    callee = next(iter(kids(c)), None)
    if callee is None:
        return None
    for x in callee.walk_preorder():
        if x.kind == K.DECL_REF_EXPR and x.referenced is not None and x.referenced.kind == K.FUNCTION_DECL \
                and x.referenced.spelling.startswith("cu"):
            return str(x.referenced.spelling)
    return None


def _dependent(ty: Any) -> bool:
    """A type that depends on a template's parameters (known only in an instantiation)."""
    return "type-parameter" in ty.get_canonical().spelling or ty.kind == T.DEPENDENT


def _generic_sig(ty: Any) -> bool:
    """A function type that is a place to keep any function, as `void *` is: one without a prototype (`int (*)()`
    in C), or one that takes nothing and returns nothing or a plain integer (`void (*)(void)`, Windows' `FARPROC`).
    No driver function has such a type: they return `CUresult`."""
    can = ty.get_canonical()
    if can.kind != T.POINTER:
        return False
    f = can.get_pointee()
    if f.kind == T.FUNCTIONNOPROTO:
        return True
    res = f.get_result().get_canonical().kind
    return bool(not list(f.argument_types()) and (res == T.VOID or res in _PLAIN_INTS))


_PLAIN_INTS = frozenset({T.INT, T.UINT, T.LONG, T.ULONG, T.LONGLONG, T.ULONGLONG, T.SHORT, T.USHORT, T.CHAR_S,
                         T.SCHAR, T.UCHAR, T.CHAR_U})


def _arguments(c: Any) -> list[Any]:
    """A call's arguments (for a call clang kept with an error in it: its children after the callee)."""
    args = list(c.get_arguments())
    if args or c.spelling:
        return args
    return kids(c)[1:]


def _decl_of(expr: Any) -> Any:
    """The variable, field or parameter an expression like `(void**)&p`, `&t.fn` or `p` names."""
    c = expr
    for _ in range(16):
        if c is None:
            return None
        if c.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            d = c.referenced
            return d if d is not None and d.kind in (K.VAR_DECL, K.FIELD_DECL, K.PARM_DECL) else None
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            ch = kids(c)
            c = ch[0] if ch else None
            continue
        ch = [x for x in kids(c) if x.kind != K.TYPE_REF]
        c = ch[-1] if ch else None
    return None


_THROUGH = frozenset({K.UNEXPOSED_EXPR, K.PAREN_EXPR})


def _result_use(c: Any, par: list[Any], fn: str, w: Walker) -> tuple[bool, tuple[str, ...]]:
    """Whether a call's result is used, and the variable it initializes when that is never read again."""
    while par and par[-1] == c:
        par = par[:-1]
    for p in reversed(par):
        if p.kind in _THROUGH:
            continue
        if p.kind in (K.COMPOUND_STMT,):
            return False, ()
        if p.kind == K.CSTYLE_CAST_EXPR and p.type.kind == T.VOID:
            return False, ()
        if p.kind == K.VAR_DECL and not _used_after(w, fn, p, c):
            return True, (p.spelling,)
        return True, ()
    return True, ()


def _used_after(w: Walker, fn: str, d: Any, call: Any) -> bool:
    """True when the variable is read anywhere in the function outside the call itself."""
    h = key(d)
    inside = sum(1 for x in subtree(call) if x.kind == K.DECL_REF_EXPR and x.referenced is not None
                 and key(x.referenced) == h)
    return w.uses(fn, d) > inside


def _callee_names(c: Any) -> set[str]:
    """The names a call's callee expression refers to (`get` of a lambda `get(...)`, `obj.load`)."""
    callee = next(iter(c.get_children()), None)
    if callee is None:
        return set()
    return {str(x.spelling) for x in callee.walk_preorder() if x.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR)}


def _recovered_callee(c: Any) -> str | None:
    """The name a call clang kept with an error in its arguments calls (its callee an unresolved reference)."""
    callee = next(iter(c.get_children()), None)
    for _ in range(4):
        if callee is None:
            return None
        if callee.kind in (K.OVERLOADED_DECL_REF, K.DECL_REF_EXPR) and callee.spelling:
            name = str(callee.spelling)
            return name if name in ROLES or name in EXPORT_APIS else None
        callee = next(iter(callee.get_children()), None)
    return None


def _chain(ty: Any) -> list[str]:
    out = []
    t = ty
    for _ in range(16):
        if t.kind == T.ELABORATED:
            t = t.get_named_type()
        if t.kind != T.TYPEDEF:
            break
        d = t.get_declaration()
        out.append(d.spelling)
        t = d.underlying_typedef_type
        if t.kind == T.INVALID:
            break
    if t.kind in (T.UNEXPOSED, T.AUTO) or "decltype" in t.spelling:
        out.append(t.spelling)
    return out




_GE = {">=": 0, ">": 1}
_LE = {"<=": 0, "<": 1}


def _guard(parents: tuple[Any, ...], w: Walker) -> int:
    """The driver version an enclosing `if (drv >= N)` (or `N <= drv`) guarantees, where `drv` holds what the
    driver's version query wrote (0 when there is none)."""
    best = 0
    for i, p in enumerate(parents):
        if p.kind != K.IF_STMT or i + 1 >= len(parents):
            continue
        ch = kids(p)
        if len(ch) < 2 or ch[1].hash != parents[i + 1].hash:
            continue   # the request is not in the then-branch
        best = max(best, _guarantee(ch[0], w))
    return best


def _guarantee(cond: Any, w: Walker) -> int:
    c = cond
    while c.kind in _THROUGH and kids(c):
        c = kids(c)[0]
    if c.kind != K.BINARY_OPERATOR:
        return 0
    ch = kids(c)
    toks = tokens(c)
    op = next((t for t in toks if t in _GE or t in _LE), "")
    if len(ch) != 2 or not op:
        return 0
    left, right = _decl_of(ch[0]), _decl_of(ch[1])
    env = Env({})
    if left is not None and w.versioned(left) and op in _GE:
        n = evaluate(ch[1], env).value
        return n + _GE[op] if isinstance(n, int) else 0
    if right is not None and w.versioned(right) and op in _LE:
        n = evaluate(ch[0], env).value
        return n + _LE[op] if isinstance(n, int) else 0
    return 0


__all__ = ["COPIES", "EXPORT_APIS", "LENGTHS", "QUERY_APIS", "ROLES", "VERSION_KINDS", "VERSION_QUERIES", "Fn", "Macros",
           "Site", "TypeInfo", "Walker", "lost_requests", "seeds"]
