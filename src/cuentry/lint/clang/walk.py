"""The clang AST to facts: every request (direct, through wrappers and templates), every export taken by
name, with the symbol, version and flags evaluated as constants and the canonical type of the pointer
the result lands in.

Wrappers are found by evaluating each request inside its function with the parameters unbound: a request
whose symbol is a parameter makes the function a wrapper, and each call of it is a request with the
caller's arguments (or the parameter's default, or the template argument of the specialization) bound.
This repeats through any number of layers (bounded). A request inside a wrapper is reported at the
wrapper's callers; what does not depend on the caller (an ignored result) once, at the wrapper.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from clang.cindex import CursorKind as K
from clang.cindex import TypeKind as T
from clang.cindex import callbacks, conf

from ...catalog import Catalog
from ...names import LOOKUP_NAME_PATTERN
from ..facts import FLAG_MODES, FLAG_NUMBERS, QUERY_APIS, TOOLKIT_MACROS, VERSION_QUERIES, Export, Query, Row, flag_mode
from ..signature import Normalizer, signless
from .values import UNKNOWN, Env, Val, evaluate, key, tokens

# api -> argument index of (symbol, pointer, version, flags, status)
ROLES: dict[str, tuple[int, int, int | None, int, int | None]] = {
    "cuGetProcAddress": (0, 1, 2, 3, 4),
    "cuGetProcAddress_v2": (0, 1, 2, 3, 4),
    "cudaGetDriverEntryPoint": (0, 1, None, 2, 3),
    "cudaGetDriverEntryPointByVersion": (0, 1, 2, 3, 4),
}
EXPORT_APIS = {"dlsym": 1, "dlvsym": 1, "GetProcAddress": 1}
_FN_KINDS = frozenset({K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR, K.LAMBDA_EXPR})
_CASTS = frozenset({K.CSTYLE_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
                    K.CXX_FUNCTIONAL_CAST_EXPR})
_THROUGH = frozenset({K.UNEXPOSED_EXPR, K.PAREN_EXPR})
_DECLTYPE = re.compile(r"decltype\s*\(\s*&?\s*\(?\s*(?:::)?(cu[A-Z]\w*)\s*\)?\s*\)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+)$", re.M)
_PFN = re.compile(r"\bPFN_cu\w+_v\d+(?:_pt[ds][sz])?\b")
_DEFINE_FN = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(")
_WORD_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_LOOKUP_NAME = re.compile(LOOKUP_NAME_PATTERN)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_MAX_HEADERS = 256          # project headers read for the X-macro lists a file expands
_MAX_HEADER_BYTES = 4 << 20


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
    tparams: list[str] = field(default_factory=list)
    driver_vars: set[str] = field(default_factory=set)
    callers: list[tuple[Any, Fn | None]] = field(default_factory=list)
    ident: str = ""     # key(cursor), computed once


def _visit(child: Any, _parent: Any, data: Any) -> int:
    """libclang's visitor for `_kids` (1: continue with the next sibling) and `_subtree` (2: recurse)."""
    out, tu, how = data
    child._tu = tu
    out.append(child)
    return int(how)


_VISIT = callbacks["cursor_visit"](_visit)   # one ctypes callback for every visit (none made per node)


def _kids(c: Any) -> list[Any]:
    """A cursor's children: `get_children` without its per-child comparison with the null cursor."""
    out: list[Any] = []
    conf.lib.clang_visitChildren(c, _VISIT, (out, c._tu, 1))
    return out


def _subtree(c: Any) -> list[Any]:
    """A cursor and its descendants in preorder, with one visit of libclang (no generator per level)."""
    out: list[Any] = [c]
    conf.lib.clang_visitChildren(c, _VISIT, (out, c._tu, 2))
    return out


@dataclass
class Role:
    """How one argument of a request is computed: an expression in a function, with that function's
    parameters bound to the roles of a caller's arguments once a call of it is followed."""

    cursor: Any = None
    fn: Fn | None = None
    binds: dict[str, Role] | None = None
    tbinds: dict[str, Val] | None = None
    fixed: Val | None = None

    def rebind(self, w: Fn, binds: dict[str, Role], tbinds: dict[str, Val]) -> Role:
        if self.fixed is not None:
            return self
        if self.fn is w and self.binds is None:
            return Role(self.cursor, self.fn, binds, tbinds)
        inner = {k: r.rebind(w, binds, tbinds) for k, r in (self.binds or {}).items()}
        return Role(self.cursor, self.fn, inner if self.binds is not None else None, self.tbinds)


@dataclass
class Site:
    """A request: where it is, the API, and each role's value (a Val, or a pointer target)."""

    call: Any
    fn: Fn | None
    api: str
    symbol: Val
    version: Val
    flags: Val
    target: Any                 # TypeInfo | ("param", i) | ("return",) | None
    status: str
    result_used: bool
    unchecked: tuple[str, ...]
    via: tuple[str, ...] = ()
    export: bool = False
    roles: tuple[Role, Role, Role] = (Role(), Role(), Role())
    parents: tuple[Any, ...] = ()           # the enclosing cursors (for a driver-version check around it)
    callers: tuple[int, ...] = ()           # a wrapper's request: the lines that call the wrapper


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
        kids = list(p.get_children())
        end = kids[0].extent.end.offset if kids else -1
        op = next((t.spelling for t in p.get_tokens() if t.extent.start.offset >= end), "")
        return op in ("|", "|=")
    return False


class Walker:
    def __init__(self, tu: Any, path: str, cat: Catalog, norm: Normalizer, skip: tuple[str, ...],
                 text: str = "") -> None:
        self.tu, self.path, self.cat, self.norm, self.skip, self.text = tu, path, cat, norm, skip, text
        self.macros = Macros()
        self.fns: dict[str, Fn] = {}
        self.direct: list[tuple[Any, Fn | None, list[Any]]] = []   # (call, fn, parents)
        self.calls: list[tuple[Any, Fn | None, list[Any]]] = []
        self.flag_uses: list[tuple[str, int, int]] = []
        self.api_names: dict[str, str] = {}
        self._getters: dict[str, str] | None = None
        self._file_macros: dict[str, str] | None = None
        self._includes: dict[str, list[tuple[int, int]]] | None = None
        self.foreign: dict[str, dict[str, Any]] = {}     # wrappers of other files of the run, by USR
        self.wrappers: dict[str, Site] = {}              # this file's wrappers, by USR
        self.driver_vars: set[str] = set()               # every variable or field a version query fills
        self.stores: dict[str, list[Any]] = {}            # variable/field -> the assignments to it
        self.memo: dict[str, Any] = {}                    # variables' values and stores, once per TU (values.Env)
        self.refs: dict[tuple[str, str], int] = {}        # (function, variable) -> how often it is named there
        self.casts: dict[str, list[tuple[Any, Fn | None]]] = {}   # variable -> the casts of it, and where
        self._in_requests: dict[str, dict[str, int]] = {}
        self.returned: set[tuple[str, str]] = set()         # (function, variable) it returns as it is
        self._lines: list[str] | None = None
        self.ranges: dict[str, Any] = {}                 # a range-for's loop variable -> the table it walks
        self._fn_names: set[str] | None = None
        self._defines: list[tuple[str, list[tuple[int, str]]]] | None = None
        self._macro_hits: dict[str, list[tuple[str, int]]] = {}   # api -> (macro, line) of the #defines calling it
        self.tally: list[tuple[int, str]] = []           # each request of this file: (line, why not judged or "")
        self._list_rows: dict[str, dict[str, tuple[str, int, int]]] = {}   # list macro -> symbol -> where it is written
        self._hdr_defines: dict[str, list[tuple[str, list[tuple[int, str]]]]] | None = None
        self.lookups: dict[str, int] = {}                # a call of a lookup whose body is not seen -> its name's argument
        self._unseen: dict[str, bool] = {}               # a function (by key) -> no body of it in this translation unit

    # --- the walk -------------------------------------------------------------------------------------
    def ours(self, c: Any) -> bool:
        loc = c.location
        if loc.is_in_system_header:
            return False          # cuda.h and the system's headers (-isystem): one call, no file name
        f = loc.file
        return f is not None and not f.name.startswith(self.skip)

    def run(self) -> Walker:
        for c in self.tu.cursor.get_children():
            if c.kind == K.MACRO_DEFINITION:
                self.macros.add(c)
                continue
            if c.kind == K.MACRO_INSTANTIATION or not self.ours(c):
                continue
            self._walk(c, None, [])
        return self

    def _walk(self, root: Any, fn: Fn | None, parents: list[Any]) -> None:
        stack: list[tuple[Any, Fn | None, list[Any]]] = [(root, fn, parents)]
        while stack:
            c, fn, par = stack.pop()
            k = c.kind
            if k in _FN_KINDS and (k == K.LAMBDA_EXPR or c.is_definition()):
                fn = self._fn(c)
            elif k == K.CALL_EXPR:
                self._call(c, fn, par)
            elif k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                self._store(c)
            elif k == K.DECL_REF_EXPR:
                self._ref(c, fn, par)
            elif k == K.CXX_FOR_RANGE_STMT:
                kids = _kids(c)
                d = _decl_of(kids[1]) if len(kids) > 2 and kids[0].kind == K.VAR_DECL else None
                if d is not None:
                    self.ranges[key(kids[0])] = d
            elif k == K.RETURN_STMT and fn is not None:
                d = _decl_of(c)
                if d is not None:
                    self.returned.add((fn.ident, key(d)))
            elif k in _CASTS:
                d = _decl_of(c)
                if d is not None and d.kind in (K.VAR_DECL, K.FIELD_DECL, K.PARM_DECL):
                    self.casts.setdefault(key(d), []).append((c, fn))
            kids = _kids(c)
            sub = [*par[-6:], c]
            for ch in reversed(kids):
                stack.append((ch, fn, sub))

    def _ref(self, c: Any, fn: Fn | None, par: list[Any]) -> None:
        """A name used: counted per function (for "is it read again"), and a stream flag's use noted."""
        if c.spelling in FLAG_MODES and not _or_ed(par):
            self.flag_uses.append((c.spelling, c.location.line, c.location.column))
        ref = c.referenced
        if fn is not None and ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL):
            h = (fn.ident, key(ref))
            self.refs[h] = self.refs.get(h, 0) + 1

    def uses(self, fn: Fn, d: Any) -> int:
        """How often the variable `d` is named in `fn` (its nested lambdas are functions of their own)."""
        return self.refs.get((fn.ident, key(d)), 0)

    def _store(self, c: Any) -> None:
        """An assignment to a variable or field (checked for `=` only when its value is asked)."""
        lhs = next(iter(c.get_children()), None)
        if lhs is None or lhs.kind not in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.UNEXPOSED_EXPR):
            return
        d = _decl_of(lhs)
        if d is not None and d.kind in (K.VAR_DECL, K.FIELD_DECL):
            self.stores.setdefault(key(d), []).append(c)

    def _fn(self, c: Any) -> Fn:
        h = key(c)
        got = self.fns.get(h)
        if got is None:
            got = self.fns[h] = Fn(c, c.spelling or "<lambda>",
                                   [p for p in c.get_children() if p.kind == K.PARM_DECL],
                                   [p.spelling for p in c.get_children()
                                    if p.kind in (K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TYPE_PARAMETER)],
                                   ident=h)
        return got

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

    def api_of(self, c: Any) -> str | None:
        """The request API a call is: by name, or by the canonical type of a pointer it calls through (a
        call clang kept with an error in it, `cuGetProcAddress(..., &undeclared->fn, ...)`, by the name it calls)."""
        name = c.spelling or _recovered_callee(c)
        ref = c.referenced
        if ref is not None and ref.kind in (K.VAR_DECL, K.FIELD_DECL, K.PARM_DECL):
            # a call through a pointer is the getter its type is, whatever it is named (a field named
            # cuGetProcAddress that cuda.h renames to cuGetProcAddress_v2 still holds the type it was given)
            info = self.type_info(ref.type)
            got = self.getters().get(signless(info.sig)) if info is not None and info.sig else None
            if got is not None or (name not in ROLES and name not in EXPORT_APIS):
                return got
        if ref is None and not name:
            # a call through an expression: `((PFN_cuGetProcAddress_v12000)addr)(...)`, a getter from an integer
            callee = next(iter(c.get_children()), None)
            while callee is not None and callee.kind in _THROUGH and callee.type.get_canonical().kind != T.POINTER:
                callee = next(iter(callee.get_children()), None)
            info = self.type_info(callee.type) if callee is not None else None
            return self.getters().get(signless(info.sig)) if info is not None and info.sig else None
        if name in ROLES or name in EXPORT_APIS:
            return str(name)
        return self._lookup(c, name, ref)

    def _lookup(self, c: Any, name: str | None, ref: Any) -> str | None:
        """A call of a function named like a symbol lookup (`LOOKUP_NAME_PATTERN`) whose body this translation
        unit does not have (declared in a header, defined elsewhere, or not declared at all): `dlsym` of the
        string it is given. A body that is seen makes it a wrapper instead (what it returns is followed)."""
        if not name or ref is None or ref.kind != K.FUNCTION_DECL or not _LOOKUP_NAME.match(name):
            return None
        h = key(ref)
        unseen = self._unseen.get(h)
        if unseen is None:   # once per function, not per call
            unseen = self._unseen[h] = ref.get_definition() is None
        if not unseen:
            return None
        for i, a in enumerate(_arguments(c)):
            if "char" in a.type.get_canonical().spelling or a.kind == K.STRING_LITERAL or \
                    any(x.kind == K.STRING_LITERAL for x in a.get_children()):
                self.lookups[key(c)] = i
                return str(name)
        return None

    def _call(self, c: Any, fn: Fn | None, par: list[Any]) -> None:
        api = self.api_of(c)
        if api is not None:
            self.direct.append((c, fn, par))
            self.api_names[key(c)] = api
        elif c.spelling in VERSION_QUERIES:
            for a in c.get_arguments():
                d = _decl_of(a)
                if d is not None:
                    self.driver_vars.add(key(d))   # a global or a field filled here is the driver's anywhere
                    if fn is not None:
                        fn.driver_vars.add(key(d))
        else:
            self.calls.append((c, fn, par))

    # --- evaluation ---------------------------------------------------------------------------------------
    def env(self, fn: Fn | None) -> Env:
        if fn is None:
            return Env(self.macros, driver_vars=frozenset(self.driver_vars), stores=self.stores, memo=self.memo)
        return Env(self.macros, param_index={key(p): i for i, p in enumerate(fn.params)},
                   tparam_index={n: i for i, n in enumerate(fn.tparams)}, driver_vars=frozenset(self.driver_vars),
                   stores=self.stores, memo=self.memo)

    def value(self, r: Role, depth: int = 0) -> Val:
        if r.fixed is not None:
            return r.fixed
        if r.cursor is None or depth > 12:
            return UNKNOWN
        env = self.env(r.fn)
        if r.binds is not None:
            env.params = {k: self.value(v, depth + 1) for k, v in r.binds.items()}
        if r.tbinds is not None:
            env.tparams = dict(r.tbinds)
        return evaluate(r.cursor, env)

    def _callees(self) -> dict[str, list[tuple[Any, Fn | None, list[Any]]]]:
        """Every call of a function of this translation unit, by the called function's key (a template's
        specializations under the template too, a lambda under the lambda)."""
        by_callee: dict[str, list[tuple[Any, Fn | None, list[Any]]]] = {}
        for c, fn, par in self.calls:
            lam = _lambda_of(c)
            if lam is not None:
                by_callee.setdefault(key(lam), []).append((c, fn, par))
                continue
            ref = c.referenced
            if ref is not None:
                tmpl = _template_of(ref)
                by_callee.setdefault(key(tmpl if tmpl is not None else ref), []).append((c, fn, par))
                if tmpl is not None:
                    by_callee.setdefault(key(ref), []).append((c, fn, par))
        return by_callee

    def sites(self) -> Iterator[Site]:
        """Every request, with wrapper layers followed (the final ones, whose symbol is known)."""
        pending = [r for s in (self._direct(c, fn, par) for c, fn, par in self.direct) if s is not None
                   for r in self._rows(s)]
        by_callee = self._callees()
        local = {f.ident for f in self.fns.values()}
        for usr, spec in self.foreign.items():
            if usr not in local:
                pending += [self._foreign(spec, c, fn, par) for c, fn, par in by_callee.get(usr, [])]
        seen = 0
        while pending and seen < 4096:
            s = pending.pop()
            seen += 1
            if s.symbol.kind == "param" and s.fn is not None and len(s.via) < 8:
                callers = by_callee.get(s.fn.ident, [])
                if callers:
                    self.wrappers[s.fn.ident] = s
                    yield _wrapper_site(s, tuple(sorted({c.location.line for c, _, _ in callers})))
                    pending += [self._bind(s, c, fn, par) for c, fn, par in callers]
                    continue
                self.wrappers[s.fn.ident] = s
            yield s

    def portable(self) -> dict[str, dict[str, Any]]:
        """The wrappers of this translation unit as data other files' translation units can use (by USR): each
        role a parameter index or a constant; wrappers whose roles are expressions of parameters are left out."""
        out: dict[str, dict[str, Any]] = {}
        for usr, s in self.wrappers.items():
            if s.fn is None or not usr.startswith("c:") or s.export:
                continue
            roles = [_portable_role(self, r) for r in s.roles]
            target = s.target if isinstance(s.target, tuple) else None
            if any(r is None for r in roles) or (s.target is not None and target is None):
                continue
            out[usr] = {"name": s.fn.name, "api": s.api, "roles": roles, "target": target}
        return out

    def _foreign(self, spec: dict[str, Any], c: Any, caller: Fn | None, par: list[Any]) -> Site:
        """A call of a wrapper defined in another file of the run, as the request it makes."""
        args = [a for a in c.get_arguments()]
        decl = c.referenced
        params = [p for p in decl.get_children() if p.kind == K.PARM_DECL] if decl is not None else []
        roles = []
        for kind, v in spec["roles"]:
            if kind == "fixed":
                roles.append(Role(fixed=v))
            elif v < len(args) and not _is_default_arg(args[v]):
                roles.append(Role(args[v], caller))
            else:
                kids = [x for x in params[v].get_children() if x.kind.is_expression()] if v < len(params) else []
                roles.append(Role(kids[-1], None) if kids else Role(fixed=UNKNOWN))
        target = spec["target"]
        r0, r1, r2 = roles
        return Site(c, caller, spec["api"], self.value(r0), self.value(r1), self.value(r2),
                    self._bound_target(target, c, args, caller, par) if target else None, "not_applicable", True,
                    (), (spec["name"],), False, roles=(r0, r1, r2), parents=tuple(par))

    def _direct(self, c: Any, fn: Fn | None, par: list[Any]) -> Site | None:
        args = _arguments(c)
        env = self.env(fn)
        used, unchecked_result = _result_use(c, par, fn, self)
        api = self.api_names.get(key(c)) or c.spelling or _recovered_callee(c) or ""
        looked = self.lookups.get(key(c))
        if api not in ROLES and api not in EXPORT_APIS and looked is None:
            return None
        if api in EXPORT_APIS or looked is not None:
            i = EXPORT_APIS.get(api, looked or 0)
            if len(args) <= i:
                return None
            role = Role(args[i], fn)
            return Site(c, fn, api, self.value(role), UNKNOWN, UNKNOWN, self._landing(c, par, fn), "",
                        True, (), export=True, roles=(role, Role(fixed=UNKNOWN), Role(fixed=UNKNOWN)))
        si, pi, vi, fi, sti = ROLES[api]
        if len(args) <= max(si, pi, fi):
            return None
        status, unchecked = self._status(api, args, sti, fn, env, list(unchecked_result))
        vrole = Role(args[vi], fn) if vi is not None else Role(fixed=Val(None, "runtime"))
        written = self._written(args, vi) if vi is not None else ""
        if self._toolkit_words(written):
            vrole = Role(fixed=Val(self.value(vrole).value, "toolkit", text=written.strip(" ,")))
        roles = (Role(args[si], fn), vrole, Role(args[fi], fn))
        return Site(c, fn, api, self.value(roles[0]), self.value(roles[1]), self.value(roles[2]),
                    self._target(args[pi], fn), status, used, tuple(unchecked), roles=roles, parents=tuple(par))

    def _rows(self, s: Site) -> list[Site]:
        """A request made in a loop over a table (`for (auto& e : table) get(e.name, e.fn, e.version)`, `table[i]`,
        `names[i]`): one request per row of the table's initializer, each role that reads the row bound to the
        row's value, the pointer to the row's target. The request itself when its symbol is not read from a table."""
        if isinstance(s.symbol.value, str) or s.roles[0].cursor is None:
            return [s]
        table = self._table(s.roles[0].cursor)
        if table is None:
            return [s]
        decl, rows = table
        out = []
        args = _arguments(s.call)
        pi = None if s.export else ROLES[s.api][1]
        for row in rows[:MAX_ROWS]:
            roles = tuple(Role(fixed=evaluate(got, Env(self.macros))) if (got := _row_value(r.cursor, decl, row))
                          is not None else r for r in s.roles)
            target = s.target
            if pi is not None and pi < len(args):
                at = _row_value(args[pi], decl, row)
                target = self._target(at, None) if at is not None else target
            if not isinstance(self.value(roles[0]).value, str):
                return [s]
            r0, r1, r2 = roles
            out.append(Site(s.call, s.fn, s.api, self.value(r0), self.value(r1), self.value(r2), target, s.status,
                            s.result_used, s.unchecked, s.via, s.export, roles=(r0, r1, r2), parents=s.parents))
        return out or [s]

    def _table(self, expr: Any) -> tuple[Any, list[Any]] | None:
        """The table an argument reads (`e.name` of a range-for over it, `t[i].name`, `names[i]`) and its rows."""
        decl = _table_decl(expr, self.ranges)
        if decl is None:
            return None
        init = next((x for x in decl.get_children() if x.kind == K.INIT_LIST_EXPR), None)
        if init is None:
            return None
        return decl, [x for x in init.get_children() if x.kind.is_expression()]

    def _status(self, api: str, args: list[Any], sti: int | None, fn: Fn | None, env: Env,
                unchecked: list[str]) -> tuple[str, list[str]]:
        """How the query result is passed (given, null, missing), and the results never tested."""
        status = "not_applicable"
        if sti is not None and len(args) > sti:
            st = evaluate(args[sti], env)
            status = "null" if st.value == 0 else "given"
            d = _decl_of(args[sti])
            # a parameter passed on (an interposer's forwarding) is its caller's to test
            if status == "given" and d is not None and fn is not None and d.kind != K.PARM_DECL and \
                    not self._tested(fn, d):
                unchecked.append(d.spelling)
        elif sti is not None and api != "cuGetProcAddress":
            status = "missing"
        return status, unchecked

    def _tested(self, fn: Fn, d: Any) -> bool:
        """True when a status variable is read somewhere in the function other than inside a request."""
        h = fn.ident
        inside = self._in_requests.get(h)
        if inside is None:
            inside = self._in_requests[h] = {}
            for call, cfn, _ in self.direct:
                if cfn is fn:
                    for x in _subtree(call):
                        if x.kind == K.DECL_REF_EXPR and x.referenced is not None:
                            k = key(x.referenced)
                            inside[k] = inside.get(k, 0) + 1
        return self.uses(fn, d) > inside.get(key(d), 0)

    def _toolkit_words(self, written: str, depth: int = 0) -> bool:
        """True when text written in the file names CUDA_VERSION (or a macro of the file that does)."""
        if self._file_macros is None:
            self._file_macros = dict(_DEFINE.findall(self.text))
        for w in re.findall(r"[A-Za-z_]\w*", written):
            if w in TOOLKIT_MACROS:
                return True
            if depth < 8 and w in self._file_macros and self._toolkit_words(self._file_macros[w], depth + 1):
                return True
        return False

    def _written(self, args: list[Any], i: int) -> str:
        """Argument `i` as the file spells it (its own tokens, or the text between its neighbours when a
        macro made it), for telling `CUDA_VERSION` from the number it expands to."""
        own = " ".join(tokens(args[i]))
        if own or not 0 < i < len(args) - 1:
            return own
        a, b = args[i - 1].extent.end, args[i + 1].extent.start
        if a.file is None or b.file is None or a.file.name != b.file.name or a.file.name != self.path:
            return ""
        return self.text[a.offset:b.offset] if 0 <= a.offset <= b.offset <= len(self.text) else ""

    def _bind(self, s: Site, c: Any, caller: Fn | None, par: list[Any]) -> Site:
        """The request `s` (inside a wrapper) as the call `c` of that wrapper makes it."""
        w = s.fn
        assert w is not None
        args = list(c.get_arguments())
        if w.cursor.kind == K.LAMBDA_EXPR and len(args) > len(w.params):
            args = args[1:]   # operator() of the closure: the closure object comes first
        binds = _binds(w, args, caller)
        tbinds = {n: _template_arg(c, i) for i, n in enumerate(w.tparams)}
        r0, r1, r2 = (r.rebind(w, binds, tbinds) for r in s.roles)
        return Site(c, caller, s.api, self.value(r0), self.value(r1), self.value(r2),
                    self._bound_target(s.target, c, args, caller, par), "not_applicable", True, (),
                    (*s.via, w.name), s.export, roles=(r0, r1, r2), parents=(*s.parents, *par))

    def _bound_target(self, target: Any, c: Any, args: list[Any], caller: Fn | None, par: list[Any]) -> Any:
        """Where the pointer of a wrapper's request lands, seen from one call of the wrapper."""
        if not isinstance(target, tuple):
            return target
        if target[0] == "param":
            return self._target(args[target[1]], caller) if target[1] < len(args) else None
        if target[0] == "tparam" and not _function_pointer(c.type):
            # `fn = (T)p` in a template that does not return it: T as this call's specialization has it
            ref = c.referenced
            try:
                ty = ref.get_template_argument_type(target[1]) if ref is not None else None
            except Exception:
                ty = None
            return self.type_info(_sugared(c, ty)) if ty is not None and ty.kind != T.INVALID else None
        own = self.type_info(_sugared(c))
        exp = _written_export(c)
        if own is not None and exp is not None and own.pfn is None:
            own = TypeInfo(own.spelling, None, exp, own.sig, f"the pointer's type is decltype of {exp}")
        return own if own is not None and own.sig is not None else self._landing(c, par, caller)

    def _default(self, fn: Fn, i: int) -> Val:
        if i >= len(fn.params):
            return UNKNOWN
        kids = [x for x in fn.params[i].get_children() if x.kind.is_expression()]
        return evaluate(kids[-1], Env(self.macros)) if kids else UNKNOWN

    # --- pointer types ---------------------------------------------------------------------------------
    def _target(self, expr: Any, fn: Fn | None) -> Any:
        d = _decl_of(expr)
        if d is None:
            return None
        if d.kind == K.PARM_DECL and fn is not None:
            for i, p in enumerate(fn.params):
                if key(p) == key(d):
                    return ("param", i)
        if _void_pointer(d.type):
            return self._cast_of(d, fn)
        own = d.get_definition()
        single = d.canonical == d and (own is None or own == d)    # declared once
        return self._spelled(self.type_info(d.type), d) if single else self.type_info(d.type)

    def _cast_of(self, d: Any, fn: Fn | None) -> Any:
        """Where a `void *` that received the pointer goes: a cast of it that gives it a type (in the same
        function first, then anywhere in the translation unit: a `static void *` cast at its call in another
        function or a template functor), or the function's return."""
        casts = self.casts.get(key(d), [])
        for c, cfn in sorted(casts, key=lambda x: x[1] is not fn):
            if _dependent(c.type) or "type-parameter" in c.type.spelling:
                if cfn is fn:
                    return ("return",)
                continue
            info = self.type_info(c.type)
            if info is not None:
                return self._spelled(info, c)
        if fn is not None and (fn.ident, key(d)) in self.returned:
            return ("return",)     # returned as it is: its type is given where the function is called
        return None

    def _spelled(self, info: TypeInfo | None, c: Any) -> TypeInfo | None:
        """`info`, when hand-written, with where this file spells it: the extent of the declaration or cast `c`."""
        a, b = c.extent.start, c.extent.end
        if info is None or info.handwritten is None or a.file is None or b.file is None or a.file.name != b.file.name \
                or os.path.abspath(a.file.name) != os.path.abspath(self.path):
            return info
        return replace(info, written=(a.line, a.column, b.line, b.column))

    def _landing(self, c: Any, par: list[Any], fn: Fn | None = None) -> Any:
        """The type a returned pointer lands in: the cast around the call, the variable it initializes,
        the left side it is assigned to (a `void *` variable, field or element: the cast that gives it a type)."""
        for p in reversed(par):
            if p.kind in _THROUGH:
                continue
            if p.kind in _CASTS:
                return _type_parameter(p.type) or ("return",) if _dependent(p.type) else self.type_info(p.type)
            if p.kind == K.VAR_DECL:
                return self._cast_of(p, fn) if _void_pointer(p.type) else self.type_info(p.type)
            if p.kind == K.BINARY_OPERATOR:
                lhs = next(iter(p.get_children()), None)
                d = _decl_of(lhs) if lhs is not None else None
                if d is not None and lhs is not None and _void_pointer(lhs.type):
                    return self._cast_of(d, fn)
                return self.type_info(d.type if d is not None else lhs.type) if lhs is not None else None
            if p.kind == K.RETURN_STMT:
                return ("return",)
            break
        ty = c.type
        return self.type_info(ty) if ty.get_canonical().kind == T.POINTER else None

    def type_info(self, ty: Any) -> TypeInfo | None:
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
            argt = [a.get_canonical().spelling for a in f.argument_types()] if f.kind == T.FUNCTIONPROTO else []
            sig = self.norm.signature(f.get_result().get_canonical().spelling, argt)
        elif can.kind == T.VOID or (can.kind == T.POINTER and can.get_pointee().kind == T.VOID):
            return None
        m = _DECLTYPE.search(spelling) or next((_DECLTYPE.search(n) for n in chain if _DECLTYPE.search(n)), None)
        export = m.group(1) if m else None
        return TypeInfo(spelling, pfn, export, sig, self._handwritten(ty, spelling, pfn, export) if sig else None)

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
            here = where(s) + (f" (the row at {row}, a table included here)" if row else "") + self._expanded(s)
            tinfo = s.target if isinstance(s.target, TypeInfo) else None
            if not s.callers:
                self.tally.append((line, _unjudged(s)))
            name = re.search(r"expanded from the macro (\w+)\)", here)
            macro = name.group(1) if name is not None else ""
            written = self._row(s, line, row, macro)
            if s.export:
                if isinstance(s.symbol.value, str):
                    made = name is not None or row
                    exports.append(Export(s.api, s.symbol.value, line, col, target=None,
                                          target_type=tinfo.pfn or tinfo.spelling if tinfo else None,
                                          where=here, target_sig=tinfo.sig if tinfo else None,
                                          target_export=tinfo.export if tinfo else None,
                                          cause=s.fn.ident if made and s.fn is not None else "", row=written,
                                          handwritten=tinfo.handwritten if tinfo else None, macro=macro))
                continue
            q = self._query(s, tinfo, line, col, here)
            q.row = written
            q.macro = macro
            if name is not None and not s.via:
                q.macro_lines = self._macro_lines(s.api, macro)
            queries.append(q)
        return queries, exports

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

    def _header_defines(self) -> dict[str, list[tuple[str, list[tuple[int, str]]]]]:
        """The function-like `#define`s of the project headers this translation unit includes (not this file's, not
        the system's or the toolkit's): name -> (header, its lines). Read once."""
        if self._hdr_defines is None:
            self._hdr_defines = {}
            me = os.path.abspath(self.path)
            seen: set[str] = set()
            for inc in self.tu.get_includes():
                f = os.path.abspath(inc.include.name) if inc.include is not None else ""
                if not f or f == me or f in seen or f.startswith(self.skip) or len(seen) >= _MAX_HEADERS:
                    continue
                seen.add(f)
                try:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        text = fh.read(_MAX_HEADER_BYTES)
                except OSError:
                    continue
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

    def _expanded(self, s: Site) -> str:
        """" (expanded from the macro M)" when the request is written in this file as a macro's invocation."""
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
            return f" (expanded from the macro {name})"
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
            guard=_guard(s.parents, s.fn), target_decl=t.written)


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


def _unjudged(s: Site) -> str:
    """Why a request cannot be judged ("" when its symbol is known: the facts that are known are judged)."""
    if isinstance(s.symbol.value, str):
        return ""
    what = "exported name" if s.export else "symbol"
    text = s.symbol.text
    if not text and s.roles[0].cursor is not None:
        text = " ".join(tokens(s.roles[0].cursor))[:60]
    if s.symbol.kind == "param":
        return f"the {what} is a parameter ({text}) of a function no call of which is seen"
    return f"the {what} ({text}) is not a constant the linter can follow" if text else f"the {what} is not known"


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


def _wrapper_site(s: Site, callers: tuple[int, ...]) -> Site:
    """The part of a wrapper's request that does not depend on its callers (reported once, at the wrapper)."""
    return Site(s.call, s.fn, s.api, Val(None, "param", text=s.symbol.text), Val(None, "param"), UNKNOWN, None,
                s.status, s.result_used, s.unchecked, s.via, s.export, callers=callers)


MAX_ROWS = 1024
"""The most rows of one table a request in a loop is judged for."""


def _bare(c: Any) -> Any:
    while c is not None and c.kind in _THROUGH | _CASTS:
        kids = [x for x in c.get_children() if x.kind != K.TYPE_REF]
        c = kids[-1] if kids else None
    return c


def _element(c: Any, ranges: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """(the table, the field read or None) for `e.f` (e a range-for's variable over the table), `t[i].f`, `t[i]`."""
    c = _bare(c)
    if c is None:
        return None
    field_ = None
    if c.kind == K.MEMBER_REF_EXPR and c.referenced is not None and c.referenced.kind == K.FIELD_DECL:
        field_ = c.referenced
        c = _bare(next(iter(c.get_children()), None))
        if c is None:
            return None
    if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
        base = _bare(next(iter(c.get_children()), None))
        d = base.referenced if base is not None and base.kind == K.DECL_REF_EXPR else None
        return (d, field_) if d is not None and d.kind == K.VAR_DECL else None
    if c.kind == K.DECL_REF_EXPR and c.referenced is not None and field_ is not None:
        d = ranges.get(key(c.referenced))
        return (d, field_) if d is not None else None
    return None


def _table_decl(expr: Any, ranges: Mapping[str, Any]) -> Any:
    got = _element(expr, ranges)
    return got[0] if got is not None else None


def _row_value(expr: Any, decl: Any, row: Any) -> Any:
    """The part of a table's row an argument reads (`e.name`: the row's `name`), when it reads this table's row."""
    c = _bare(expr) if expr is not None else None
    if c is None or c.kind == K.UNARY_OPERATOR:   # `&e.fn`: the address of the table's own member, not a row value
        return None
    got = _element(expr, {})
    if got is None:
        # a range-for's variable `e.f`: the field of the row's record
        ranged = c.referenced if c.kind == K.MEMBER_REF_EXPR else None
    elif key(got[0]) == key(decl):
        ranged = got[1]
        if ranged is None:
            return row
    else:
        return None
    return _field_of_row(ranged, row)


def _field_of_row(f: Any, row: Any) -> Any:
    if f is None or f.kind != K.FIELD_DECL or row.kind != K.INIT_LIST_EXPR:
        return None
    parent = f.semantic_parent
    fields = [x for x in parent.get_children() if x.kind == K.FIELD_DECL] if parent is not None else []
    idx = next((i for i, x in enumerate(fields) if key(x) == key(f)), None)
    elems = [x for x in row.get_children() if x.kind.is_expression()]
    return elems[idx] if idx is not None and idx < len(elems) else None


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


def _arguments(c: Any) -> list[Any]:
    """A call's arguments (for a call clang kept with an error in it: its children after the callee)."""
    args = list(c.get_arguments())
    if args or c.spelling:
        return args
    return list(c.get_children())[1:]


def _lambda_of(c: Any) -> Any:
    """The lambda a call `load(...)` calls, when `load` is a variable initialized with one."""
    ref = c.referenced
    if ref is None or ref.spelling != "operator()":
        return None
    for x in c.get_children():
        d = _decl_of(x)
        if d is not None and d.kind == K.VAR_DECL:
            return next((y for y in d.walk_preorder() if y.kind == K.LAMBDA_EXPR), None)
        break
    return None


def _written_args(call: Any) -> list[list[str]] | None:
    """Each argument of a call as written in the source (before macro expansion), when the call's tokens
    are its own (not a macro invocation)."""
    toks = tokens(call)
    if "(" not in toks:
        return None
    i = toks.index("(")
    out: list[list[str]] = [[]]
    level = 0
    for t in toks[i + 1:]:
        if t in "([{":
            level += 1
        elif t in ")]}":
            if level == 0:
                return out if out != [[]] else []
            level -= 1
        elif t == "," and level == 0:
            out.append([])
            continue
        out[-1].append(t)
    return None


def _sugared(c: Any, ty: Any = None) -> Any:
    """The call's type (or `ty`) as the template argument written at the call spells it (`get<PFN_cuX_vN>(...)`:
    a specialization's own arguments are canonical, the written ones keep the typedef)."""
    ty = c.type if ty is None else ty
    want = ty.get_canonical().spelling
    callee = next(iter(c.get_children()), None)
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
    callee = next(iter(c.get_children()), None)
    if callee is None:
        return None
    for x in callee.walk_preorder():
        if x.kind == K.DECL_REF_EXPR and x.referenced is not None and x.referenced.kind == K.FUNCTION_DECL \
                and x.referenced.spelling.startswith("cu"):
            return str(x.referenced.spelling)
    return None


def _portable_role(w: Walker, r: Role) -> tuple[str, Any] | None:
    """A role as data: ("param", index) when it is the wrapper's parameter itself, ("fixed", value) when it
    does not depend on the parameters; None otherwise."""
    if r.fixed is not None:
        return ("fixed", r.fixed)
    v = w.value(r)
    if v.kind != "param":
        return ("fixed", v)
    c = r.cursor
    while c is not None and c.kind in _THROUGH | _CASTS:
        kids = [x for x in c.get_children() if x.kind != K.TYPE_REF]
        c = kids[-1] if kids else None
    if c is not None and c.kind == K.DECL_REF_EXPR and v.param is not None and r.binds is None:
        return ("param", v.param)
    return None


def _binds(w: Fn, args: list[Any], caller: Fn | None) -> dict[str, Role]:
    """A wrapper's parameters bound to a call's arguments, or to their defaults where the call has none."""
    binds: dict[str, Role] = {}
    for i, p in enumerate(w.params):
        if i < len(args) and not _is_default_arg(args[i]):
            binds[key(p)] = Role(args[i], caller)
        else:
            kids = [x for x in p.get_children() if x.kind.is_expression()]
            binds[key(p)] = Role(kids[-1], None) if kids else Role(fixed=UNKNOWN)
    return binds


def _is_default_arg(a: Any) -> bool:
    """A default argument the compiler filled in (no extent in the file, nothing under it)."""
    return a.kind == K.UNEXPOSED_EXPR and a.extent.start.file is None and not list(a.get_children())


def _template_of(ref: Any) -> Any:
    from clang.cindex import conf

    t = conf.lib.clang_getSpecializedCursorTemplate(ref)
    return t if t is not None and t.kind != K.NO_DECL_FOUND and t != ref else None


def _template_arg(c: Any, i: int) -> Val:
    ref = c.referenced
    try:
        if ref is not None and ref.get_num_template_arguments() > i:
            return Val(int(ref.get_template_argument_value(i)), "literal", text=f"template argument {i}")
    except Exception:
        return UNKNOWN
    return UNKNOWN


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
            kids = list(c.get_children())
            c = kids[0] if kids else None
            continue
        kids = [x for x in c.get_children() if x.kind != K.TYPE_REF]
        c = kids[-1] if kids else None
    return None


def _result_use(c: Any, par: list[Any], fn: Fn | None, w: Walker | None = None) -> tuple[bool, tuple[str, ...]]:
    for p in reversed(par):
        if p.kind in _THROUGH:
            continue
        if p.kind in (K.COMPOUND_STMT,):
            return False, ()
        if p.kind == K.CSTYLE_CAST_EXPR and p.type.kind == T.VOID:
            return False, ()
        if p.kind == K.VAR_DECL and fn is not None and w is not None and not _used_after(w, fn, p, c):
            return True, (p.spelling,)
        return True, ()
    return True, ()


def _used_after(w: Walker, fn: Fn, d: Any, call: Any) -> bool:
    """True when the variable is read anywhere in the function outside the call itself."""
    h = key(d)
    inside = sum(1 for x in _subtree(call) if x.kind == K.DECL_REF_EXPR and x.referenced is not None
                 and key(x.referenced) == h)
    return w.uses(fn, d) > inside


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


_TYPE_PARAMETER = re.compile(r"type-parameter-0-(\d+)")


def _type_parameter(ty: Any) -> tuple[str, int] | None:
    """("tparam", i) when a type is the enclosing function template's i-th type parameter itself (`(T)p`)."""
    m = _TYPE_PARAMETER.fullmatch(ty.get_canonical().spelling)
    return ("tparam", int(m.group(1))) if m else None


def _function_pointer(ty: Any) -> bool:
    can = ty.get_canonical()
    return bool(can.kind == T.POINTER and can.get_pointee().kind in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO))


def _void_pointer(ty: Any) -> bool:
    can = ty.get_canonical()
    return bool(can.kind == T.POINTER and can.get_pointee().kind == T.VOID)


def _dependent(ty: Any) -> bool:
    can = ty.get_canonical()
    return ty.kind in (T.DEPENDENT,) or "type-parameter" in can.spelling or can.kind == T.UNEXPOSED


_GE = {">=": 0, ">": 1}
_LE = {"<=": 0, "<": 1}


def _guard(parents: tuple[Any, ...], fn: Fn | None) -> int:
    """The driver version an enclosing `if (drv >= N)` (or `N <= drv`) guarantees, where `drv` was
    filled by cuDriverGetVersion in the same function (0 when there is none)."""
    if fn is None or not fn.driver_vars:
        return 0
    best = 0
    for i, p in enumerate(parents):
        if p.kind != K.IF_STMT or i + 1 >= len(parents):
            continue
        kids = list(p.get_children())
        if len(kids) < 2 or kids[1].hash != parents[i + 1].hash:
            continue   # the request is not in the then-branch
        best = max(best, _guarantee(kids[0], fn))
    return best


def _guarantee(cond: Any, fn: Fn) -> int:
    c = cond
    while c.kind in _THROUGH and list(c.get_children()):
        c = next(iter(c.get_children()))
    if c.kind != K.BINARY_OPERATOR:
        return 0
    kids = list(c.get_children())
    toks = tokens(c)
    op = next((t for t in toks if t in _GE or t in _LE), "")
    if len(kids) != 2 or not op:
        return 0
    left, right = _decl_of(kids[0]), _decl_of(kids[1])
    env = Env({})
    if left is not None and key(left) in fn.driver_vars and op in _GE:
        n = evaluate(kids[1], env).value
        return n + _GE[op] if isinstance(n, int) else 0
    if right is not None and key(right) in fn.driver_vars and op in _LE:
        n = evaluate(kids[0], env).value
        return n + _LE[op] if isinstance(n, int) else 0
    return 0


__all__ = ["EXPORT_APIS", "MAX_ROWS", "QUERY_APIS", "ROLES", "Fn", "Macros", "Role", "Site", "TypeInfo", "Walker",
           "lost_requests"]
