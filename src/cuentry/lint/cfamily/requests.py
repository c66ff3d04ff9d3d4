"""Requests in the C family: the entry-point APIs, pointers to them, and wrappers of them.

An API is described by a `Spec`: where each role (symbol, pointer,
version, flags, status) comes from: an argument of the call, a fixed expression
inside a wrapper, or the call's own result. The base APIs are cuGetProcAddress
(4 or 5 arguments), cuGetProcAddress_v2, cudaGetDriverEntryPoint(ByVersion), and
for exported names dlsym / dlvsym / GetProcAddress. A variable that holds a
pointer to a getter (fetched by dlsym, by cuGetProcAddress("cuGetProcAddress"),
or declared with a getter's PFN type) is that API; a function, lambda or
template that passes a parameter on as the symbol is a wrapper, found by a
worklist through any number of layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..facts import DECLTYPE_RE, GETTER_PFN, Export, Query, flag_mode
from .scan import Function, Scan, namespaces_around
from .tree import args, base_name, strip, template_args, text
from .values import Evaluator, Value

__all__ = ["BASE", "Requests", "Source", "Spec", "assigned_to", "getter_of_type", "tested_after"]


# role -> ("arg", index[, default node, scope]) | ("argv", index, default Value or None) | ("fixed", node, scope)
#         | ("return",) | ("const", Value). "argv" and "const" are portable: they hold no tree node, so a
#         wrapper found in one file can be used in another.
Source = tuple[Any, ...]


@dataclass(frozen=True)
class Spec:
    kind: str                       # "query" or "export"
    api: str                        # the base API (for messages and rules)
    roles: dict[str, Source] = field(default_factory=dict)
    via: str = ""                   # wrapper chain, outermost first
    wrapper: bool = False           # a function passing its arguments on (not a pointer to the API itself)
    ns: str = ""                    # the namespace the wrapper is defined in
    version_kind: str = ""          # fixed kind ("runtime" for cudaGetDriverEntryPoint)
    status_checked_inside: bool = False


def _argspec(kind: str, api: str, *order: str, version_kind: str = "") -> Spec:
    return Spec(kind, api, {r: ("arg", i) for i, r in enumerate(order) if r}, version_kind=version_kind)


BASE: dict[str, Spec] = {
    "cuGetProcAddress": _argspec("query", "cuGetProcAddress", "symbol", "pfn", "version", "flags", "status"),
    "cuGetProcAddress_v2": _argspec("query", "cuGetProcAddress_v2", "symbol", "pfn", "version", "flags", "status"),
    "cudaGetDriverEntryPoint": _argspec("query", "cudaGetDriverEntryPoint", "symbol", "pfn", "flags", "status",
                                        version_kind="runtime"),
    "cudaGetDriverEntryPointByVersion": _argspec("query", "cudaGetDriverEntryPointByVersion", "symbol", "pfn",
                                                 "version", "flags", "status"),
    "dlsym": _argspec("export", "dlsym", "", "symbol"),
    "dlvsym": _argspec("export", "dlvsym", "", "symbol"),
    "GetProcAddress": _argspec("export", "GetProcAddress", "", "symbol"),
}
_GETTERS = {"cuGetProcAddress": "cuGetProcAddress", "cuGetProcAddress_v2": "cuGetProcAddress_v2",
            "cudaGetDriverEntryPoint": "cudaGetDriverEntryPoint",
            "cudaGetDriverEntryPointByVersion": "cudaGetDriverEntryPointByVersion"}


def getter_of_type(ty: str) -> str | None:
    """The getter API a pointer type names (PFN_cuGetProcAddress_v12000 -> cuGetProcAddress_v2)."""
    m = GETTER_PFN.search(ty)
    if m:
        if m.group(1) == "cuGetProcAddress":
            return "cuGetProcAddress_v2" if m.group(2) and int(m.group(2)) >= 12000 else "cuGetProcAddress"
        return m.group(1)
    d = DECLTYPE_RE.search(ty)
    if d and d.group(1) in _GETTERS:
        return _GETTERS[d.group(1)]
    return None


class Requests:
    """Finds every API (base, getter pointer, wrapper) and turns each call of one into facts."""

    def __init__(self, scan: Scan, ev: Evaluator, extra: dict[str, Spec] | None = None) -> None:
        self.scan, self.ev = scan, ev
        self.specs: dict[str, Spec] = {**BASE, **(extra or {})}
        self.foreign: set[str] = set(extra or ())
        self.local: set[str] = set()
        self.getter_owner: dict[str, Function] = {}
        self._args: dict[int, list[Any]] = {}

    def args(self, call: Any) -> list[Any]:
        """The call's arguments (computed once per call)."""
        got = self._args.get(call.id)
        if got is None:
            got = self._args[call.id] = args(call)
        return got

    def calls_of(self, name: str) -> list[tuple[Any, Function]]:
        """The calls of an API; for a wrapper from another file, only those that can name it (namespace)."""
        calls = self.scan.calls.get(name, [])
        owner = self.getter_owner.get(name)
        if owner is not None:
            return [(c, s) for c, s in calls if s is owner]
        spec = self.specs.get(name)
        if name not in self.foreign or spec is None or not spec.ns or name in self.local:
            return calls
        return [(c, s) for c, s in calls if _ns_match(spec.ns, c)]

    def portable(self) -> dict[str, Spec]:
        """The wrappers this file defines, with every fixed expression evaluated (usable in other files)."""
        out: dict[str, Spec] = {}
        for name in self.local:
            spec = self.specs[name]
            roles: dict[str, Source] = {}
            for role, src in spec.roles.items():
                if src[0] == "arg":
                    default = src[2] if len(src) > 2 else None
                    roles[role] = ("argv", src[1], self.ev.value(default, src[3]) if default is not None else None)
                elif src[0] == "fixed":
                    v = self.ev.value(src[1], src[2])
                    roles[role] = ("const", replace(v, text=v.text or text(src[1])))
                else:
                    roles[role] = src
            out[name] = replace(spec, roles=roles)
        return out

    def portable_defaults(self) -> dict[str, dict[int, Value]]:
        """Defaults of parameters declared in prototypes (a header's `int version = 12010`)."""
        return {name: {i: self.ev.value(node, self.scan.file) for i, node in d.items()}
                for name, d in self.scan.proto_defaults.items()}

    # --- getters held in variables ---
    def add_getter(self, var: str, api: str, owner: Function | None = None) -> bool:
        """`var` holds a pointer to a getter: calls through it are requests (only in `owner` when the
        variable is local to a function)."""
        if not var or var in self.specs:
            return False
        base = BASE[api]
        self.specs[var] = replace(base, via=f"{var} (a pointer to {api})")
        if owner is not None:
            self.getter_owner[var] = owner
        return True

    def getters_from_types(self) -> None:
        for owner in [self.scan.file, *(f for fs in self.scan.functions.values() for f in fs)]:
            for var, (ty, _) in owner.decls.items():
                api = getter_of_type(self.scan.resolve_type(ty))
                if api:
                    self.add_getter(var, api, None if owner is self.scan.file else owner)

    # --- wrappers ---
    def find_wrappers(self) -> None:
        work = list(self.specs)
        seen = 0
        while work and seen < 10_000:
            name = work.pop()
            seen += 1
            spec = self.specs.get(name)
            if spec is None:
                continue
            for call, scope in self.calls_of(name):
                if scope is self.scan.file or scope.name in self.specs or scope.name.startswith("<"):
                    continue
                w = self.wrapper(spec, call, scope)
                if w is not None:
                    self.specs[scope.name] = w
                    self.local.add(scope.name)
                    work.append(scope.name)

    def wrapper(self, spec: Spec, call: Any, fn: Function) -> Spec | None:
        """The spec of `fn` when it passes one of its parameters on as the symbol of `spec`."""
        if not fn.params:
            return None
        a = self.args(call)
        sym_src = spec.roles.get("symbol")
        sym = self._lift("symbol", sym_src, a, fn, call) if sym_src is not None else None
        if sym is None or sym[0] not in ("arg", "argv"):
            return None
        roles: dict[str, Source] = {}
        for role, src in spec.roles.items():
            roles[role] = sym if role == "symbol" else self._lift(role, src, a, fn, call)
        via = fn.name + (" -> " + spec.via if spec.via else f" -> {spec.api}")
        return Spec(spec.kind, spec.api, roles, via, True, fn.ns, spec.version_kind,
                    status_checked_inside=spec.status_checked_inside or "status" in spec.roles)

    def _lift(self, role: str, src: Source, a: list[Any], fn: Function, call: Any) -> Source:
        if src[0] == "fixed":
            # an expression of an inner wrapper: remember the call that reaches it, to bind its parameters
            return ("fixed", src[1], src[2], (*src[3], (call, fn)))
        if src[0] not in ("arg", "argv"):
            return src
        i = src[1]
        if i >= len(a):
            # not passed by this layer either: the inner wrapper's own default (`get_symbol(symbol)` with
            # `int cuda_version = 12010`), else missing
            if src[0] == "argv" and isinstance(src[2], Value):
                return ("const", src[2])
            if src[0] == "arg" and len(src) > 3 and src[2] is not None:
                return ("fixed", src[2], src[3], ())
            proto = self.scan.proto_defaults.get(base_name(call.child_by_field_name("function")), {}).get(i)
            if proto is not None:    # the default a prototype in this file declares
                return ("fixed", proto, self.scan.file, ())
            return ("const", Value("missing"))
        node = a[i]
        inner, _ = strip(node)
        if inner is not None and inner.type == "identifier":
            j = fn.param_index(text(inner))
            if j is not None and text(inner) not in fn.assigned:
                default = fn.params[j][1] or self.scan.proto_defaults.get(fn.name, {}).get(j)
                return ("arg", j, default, fn)
        if role == "pfn" and inner is not None and inner.type == "identifier" and fn.returns:
            return ("return",)
        return ("fixed", node, fn, ())

    # --- facts ---
    def queries_and_exports(self, where: Any) -> tuple[list[Query], list[Export]]:
        queries: list[Query] = []
        exports: list[Export] = []
        done: set[str] = set()
        for _ in range(4):
            new_getters = False
            for name, spec in list(self.specs.items()):
                if name in done:
                    continue
                done.add(name)
                for call, scope in self.calls_of(name):
                    if spec.kind == "query":
                        q = self.query(spec, call, scope)
                        if spec.wrapper and q.symbol is not None and not q.symbol.lower().startswith("cu"):
                            continue   # a wrapper used for another library's names
                        q.where = where(call)
                        queries.append(q)
                        if q.symbol in _GETTERS and q.target:
                            new_getters |= self.add_getter(q.target, _GETTERS[q.symbol])
                    else:
                        e = self.export(spec, call, scope)
                        if e is not None:
                            e.where = where(call)
                            exports.append(e)
                            if e.name.split("_v")[0] in _GETTERS and e.target:
                                api = getter_of_type(e.target_type or "") or _GETTERS.get(e.name, "cuGetProcAddress")
                                new_getters |= self.add_getter(e.target, api)
            if not new_getters:
                break
            self.find_wrappers()
        return queries, exports

    def role(self, spec: Spec, role: str, call: Any, scope: Function) -> tuple[Any, Function] | Value | None:
        """The expression (and its scope) or value that fills `role` at this call."""
        src = spec.roles.get(role)
        if src is None:
            return None
        a = self.args(call)
        if src[0] in ("arg", "argv"):
            i = src[1]
            if i < len(a):
                return a[i], scope
            if src[0] == "argv":
                return src[2] if isinstance(src[2], Value) else None   # a default from another file
            if len(src) > 2 and src[2] is not None:
                return src[2], src[3]          # the wrapper parameter's default value
            return None
        if src[0] == "fixed":
            return src[1], src[2]
        if src[0] == "const":
            return src[1]  # type: ignore[no-any-return]
        return None

    def value_of(self, spec: Spec, role: str, call: Any, scope: Function) -> tuple[Value, Any]:
        got = self.role(spec, role, call, scope)
        if got is None:
            return Value("missing"), None
        if isinstance(got, Value):
            return got, None
        node, sc = got
        src = spec.roles.get(role)
        if src is not None and src[0] == "fixed" and sc is not scope and sc is not self.scan.file:
            return self._through(src, call, scope), node
        return self.ev.value(node, sc), node

    def _through(self, src: Source, call: Any, scope: Function) -> Value:
        """A fixed expression inside (layers of) wrappers, with each layer's parameters bound to the
        arguments of the call that reaches it, outermost first (`get(name, 12, 0)` -> `make_version(12, 0)`)."""
        node, inner, chain = src[1], src[2], src[3]
        vals = [self.ev.value(x, scope) for x in self.args(call)]
        for c, caller in reversed(chain):
            vals = self.ev.bound_values(self.args(c), caller, self._defaults(caller, vals))
        return self.ev.bound_value(node, inner, self._defaults(inner, vals))

    def _defaults(self, fn: Function, vals: list[Value]) -> list[Value]:
        """Arguments for `fn`, the missing ones taken from its parameters' defaults."""
        out = list(vals)
        protos = self.scan.proto_defaults.get(fn.name, {})
        for i in range(len(vals), len(fn.params)):
            default = fn.params[i][1] or protos.get(i)
            out.append(self.ev.value(default, fn) if default is not None else Value("missing"))
        return out

    def query(self, spec: Spec, call: Any, scope: Function) -> Query:
        a = self.args(call)
        api = spec.api
        roles = dict(spec.roles)
        if not spec.wrapper and ((api == "cuGetProcAddress" and len(a) == 4) or
                                 (api == "cudaGetDriverEntryPoint" and len(a) == 3)):
            roles.pop("status", None)   # the 11030 getter and the pre-12.0 runtime call have no status
        spec = replace(spec, roles=roles)
        q = Query(api=api, line=call.start_point[0], col=call.start_point[1], via=spec.via, wrapped=spec.wrapper)
        self._symbol(q, spec, call, scope)
        self._version(q, spec, call, scope)
        fv, fnode = self.value_of(spec, "flags", call, scope)
        q.flags_text = text(fnode) if fnode is not None else fv.text
        q.flags_mode = fv.flag if fv.kind == "flag" else (
            flag_mode(str(fv.ints[0])) if fv.kind == "int" and len(fv.ints) == 1 else flag_mode(q.flags_text))
        self._status(q, spec, call, scope)
        self._pointer(q, spec, call, scope)
        return q

    def _symbol(self, q: Query, spec: Spec, call: Any, scope: Function) -> None:
        v, node = self.value_of(spec, "symbol", call, scope)
        if v.kind == "str" and len(v.strs) == 1:
            q.symbol = v.strs[0]
            if node is not None and node.type in ("string_literal", "concatenated_string"):
                q.symbol_line, q.symbol_col = node.start_point[0], node.start_point[1]
        elif v.kind == "param":
            q.version_kind = "param"

    def _version(self, q: Query, spec: Spec, call: Any, scope: Function) -> None:
        if spec.version_kind:
            q.version_kind = spec.version_kind
            return
        v, node = self.value_of(spec, "version", call, scope)
        q.version_text = text(node) if node is not None else (", ".join(map(str, v.ints)) or v.text)
        if v.kind == "int":
            q.pins = tuple(v.ints)   # 0 and negative numbers are pins too: the catalog judges them
            q.version = q.pins[0] if len(q.pins) == 1 else None
            q.version_kind = "literal"
        elif v.kind in ("driver", "toolkit", "runtime", "param", "missing"):
            q.version_kind = v.kind
        else:
            q.version_kind = "other"

    def _status(self, q: Query, spec: Spec, call: Any, scope: Function) -> None:
        parent = call.parent
        if spec.wrapper:
            q.result_used = True
            q.status = "not_applicable" if spec.status_checked_inside or "status" not in spec.roles else "given"
            return
        q.result_used = not (parent is not None and (parent.type == "expression_statement" or (
            parent.type == "cast_expression" and text(parent.child_by_field_name("type")) == "void")))
        if "status" not in spec.roles:
            q.status = "not_applicable"
            st = None
        else:
            got = self.role(spec, "status", call, scope)
            st = got[0] if isinstance(got, tuple) else None
            if st is None:
                q.status = "missing"
            elif st.type in ("null", "nullptr") or text(st) in ("NULL", "0", "nullptr"):
                q.status = "null"
            else:
                q.status = "given"
        if q.result_used:
            stored = [x for x in (assigned_to(call),) if x]
            if st is not None and st.type == "pointer_expression":
                stored.append(text(st.child_by_field_name("argument")))
            q.unchecked = tuple(x for x in stored if not tested_after(scope, x, call.end_byte))

    def _pointer(self, q: Query, spec: Spec, call: Any, scope: Function) -> None:
        src = spec.roles.get("pfn")
        if src is not None and src[0] == "return":
            self._returned_pointer(q, call, scope)
            return
        got = self.role(spec, "pfn", call, scope)
        if not isinstance(got, tuple):
            return
        node, sc = got
        target, casts = strip(node)
        if target is None:
            return
        name = text(target.child_by_field_name("field")) if target.type == "field_expression" else text(target)
        q.target = name
        declared = self.scan.lookup_decl(name, sc)
        if declared is not None:
            ty, is_fn = declared
            self._typed(q, name, ty, is_fn)
        for c in casts:
            if "(*" in c.replace(" ", ""):
                q.handwritten = f"the pointer is cast to the hand-written type {c}"

    def _typed(self, q: Query, name: str, ty: str, is_fn: bool) -> None:
        resolved = self.scan.resolve_type(ty)
        q.target_type = resolved
        if is_fn:
            q.handwritten = f"'{name}' is declared with a hand-written function type"
        elif ty in self.scan.fn_typedefs or resolved in self.scan.fn_typedefs:
            q.handwritten = f"'{name}' has type {ty}, a hand-written function pointer typedef"
        elif resolved.startswith("decltype"):
            q.handwritten = f"'{name}' takes its type from {resolved}, which follows cuda.h's macros, not a fixed ABI"

    def _returned_pointer(self, q: Query, call: Any, scope: Function) -> None:
        targs = template_args(call.child_by_field_name("function"))
        if targs:
            q.target_type = self.scan.resolve_type(targs)
            if targs in self.scan.fn_typedefs:
                q.handwritten = f"the pointer type {targs} is a hand-written function type"
        node = call
        parent = node.parent
        for _ in range(16):
            if parent is None:
                break
            cast = ""
            if parent.type == "cast_expression":
                cast = text(parent.child_by_field_name("type"))
            elif parent.type == "call_expression" and base_name(parent.child_by_field_name("function")) in (
                    "reinterpret_cast", "static_cast", "bit_cast"):
                cast = template_args(parent.child_by_field_name("function"))
            elif parent.type not in ("parenthesized_expression", "argument_list"):
                break
            if cast:
                self._cast(q, cast)
            node, parent = parent, parent.parent
        if parent is not None and parent.type == "init_declarator":
            from .scan import declared_name

            name, _ = declared_name(parent.child_by_field_name("declarator"))
            if name:
                q.target = name
                declared = self.scan.lookup_decl(name, scope)
                if declared is not None and declared[0] != "auto":
                    self._typed(q, name, *declared)
        elif parent is not None and parent.type == "assignment_expression":
            from .scan import assigned_name

            name = assigned_name(parent.child_by_field_name("left"))
            q.target = name
            declared = self.scan.lookup_decl(name, scope)
            if declared is not None:
                self._typed(q, name, *declared)
        if q.target and not q.handwritten:
            self._later_casts(q, q.target, call.end_byte, scope)

    def _later_casts(self, q: Query, name: str, after: int, scope: Function) -> None:
        """A pointer kept in a variable and cast afterwards (`reinterpret_cast<FuncT*>(ptr)`)."""
        for n in scope.idents.get(name.encode(), [])[-64:]:
            if n.start_byte < after:
                continue
            p = n.parent
            if p is not None and p.type == "cast_expression":
                self._cast(q, text(p.child_by_field_name("type")))
            elif p is not None and p.type == "argument_list" and p.parent is not None and \
                    base_name(p.parent.child_by_field_name("function")) in ("reinterpret_cast", "static_cast"):
                self._cast(q, template_args(p.parent.child_by_field_name("function")))
            if q.handwritten:
                return

    def _cast(self, q: Query, cast: str) -> None:
        bare = cast.replace("*", "").strip()
        q.target_type = q.target_type or self.scan.resolve_type(bare)
        if bare in self.scan.fn_typedefs or "(*" in cast.replace(" ", ""):
            q.handwritten = f"the pointer is cast to {cast}, a hand-written function type"
        elif DECLTYPE_RE.search(cast):
            q.handwritten = f"the pointer is cast to {cast}, which follows cuda.h's macros, not a fixed ABI"

    def export(self, spec: Spec, call: Any, scope: Function) -> Export | None:
        v, node = self.value_of(spec, "symbol", call, scope)
        if v.kind != "str" or len(v.strs) != 1 or not v.strs[0].startswith("cu"):
            return None
        e = Export(spec.via.split(" ")[0] if spec.via else spec.api, v.strs[0], call.start_point[0],
                   call.start_point[1])
        node, parent, types = _casts_around(call)
        e.target = _landing(node, parent)
        declared = self.scan.lookup_decl(e.target, scope) if e.target else None
        for ty in [declared[0] if declared else "", *types]:
            r = self.scan.resolve_type(ty.replace("*", "").strip()) if ty else ""
            if r.startswith(("PFN_", "decltype")) or DECLTYPE_RE.search(r):
                e.target_type = r
                break
        return e


def _casts_around(call: Any) -> tuple[Any, Any, list[str]]:
    """Up from a `dlsym` call through parentheses and casts: the outermost node, its parent, and the
    types it is cast to (a template argument of the call first)."""
    targs = template_args(call.child_by_field_name("function"))
    types: list[str] = [targs] if targs else []
    node, parent = call, call.parent
    for _ in range(16):
        if parent is None:
            break
        if parent.type == "cast_expression":
            types.append(text(parent.child_by_field_name("type")))
        elif parent.type == "call_expression" and base_name(parent.child_by_field_name("function")) in (
                "reinterpret_cast", "static_cast", "bit_cast"):
            types.append(template_args(parent.child_by_field_name("function")))
        elif parent.type not in ("parenthesized_expression", "argument_list"):
            break
        node, parent = parent, parent.parent
    return node, parent, types


def _landing(node: Any, parent: Any) -> str | None:
    """The variable the (cast) result is declared or assigned as, if any."""
    if parent is not None and parent.type == "init_declarator":
        from .scan import declared_name

        return declared_name(parent.child_by_field_name("declarator"))[0]
    if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("right") == node:
        from .scan import assigned_name

        return assigned_name(parent.child_by_field_name("left")) or None
    return None


def _ns_match(ns: str, call: Any) -> bool:
    fn = call.child_by_field_name("function")
    last = ""
    for _ in range(32):
        if fn is None:
            break
        if fn.type == "template_function":
            fn = fn.child_by_field_name("name")
        elif fn.type == "qualified_identifier":
            scope = fn.child_by_field_name("scope")
            last = text(scope).split("::")[-1].split("<")[0] if scope is not None else last
            fn = fn.child_by_field_name("name")
        else:
            break
    return last == ns if last else ns in namespaces_around(call)


def assigned_to(call: Any) -> str | None:
    """The variable a call's result is stored in (`CUresult r = call` or `r = call`)."""
    p = call.parent
    if p is not None and p.type == "init_declarator":
        return text(p.child_by_field_name("declarator"))
    if p is not None and p.type == "assignment_expression" and p.child_by_field_name("right") == call:
        return text(p.child_by_field_name("left"))
    return None


_TEST_PARENTS = ("if_statement", "while_statement", "do_statement", "for_statement", "switch_statement")
_TEST_EXPRS = ("conditional_expression", "return_statement", "binary_expression", "unary_expression",
               "call_expression", "condition_clause")
_STOP = ("expression_statement", "compound_statement", "declaration", "function_definition", "translation_unit")


def tested_after(fn: Function, name: str, end: int) -> bool:
    """Whether `name` is tested (in a condition, comparison, return or call) after byte `end` in `fn`.

    The start of the name's last tested occurrence is found once per function and name (each occurrence
    walked up to its statement once) and kept, so a function with many requests storing into the same
    variable stays linear."""
    key = name.replace("->", ".").split(".")[-1].strip().encode()
    last = fn.tested.get(key)
    if last is None:
        last = next((n.start_byte for n in reversed(fn.idents.get(key, ())) if _in_test(n)), -1)
        fn.tested[key] = last
    return last >= end


def _in_test(n: Any) -> bool:
    child, p = n, n.parent
    for _ in range(256):
        if p is None or p.type in _STOP:
            return False
        t = p.type
        if t in _TEST_PARENTS:
            return bool(child == p.child_by_field_name("condition"))
        if t in _TEST_EXPRS and not (t == "call_expression" and _is_request(p)):
            return True
        child, p = p, p.parent
    return False


def _is_request(call: Any) -> bool:
    return base_name(call.child_by_field_name("function")) in BASE
