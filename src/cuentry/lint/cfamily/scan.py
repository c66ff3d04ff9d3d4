"""One walk over a C-family tree: declarations, functions, assignments and calls, by node kind.

The walk records what later steps need and nothing else: each variable's declared
type and the expressions assigned to it (per function, and at file level), the
functions with their parameters, defaults and returns (lambdas bound to a name
count as functions), typedefs, and every call by its callee's name. It visits
each node once, so it is linear in the size of the tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..facts import FLAG_MODES, VERSION_QUERIES
from .tree import args, base_name, strip, text

__all__ = ["DRIVER", "Function", "Scan", "assigned_name", "declared_name", "namespace_of", "namespaces_around"]



@dataclass
class Function:
    """A function, method or named lambda: its parameters (name, default expression) and returns."""

    name: str
    node: Any
    params: list[tuple[str, Any]] = field(default_factory=list)
    returns: list[Any] = field(default_factory=list)
    # variable -> (declared type, declared as a function pointer)
    decls: dict[str, tuple[str, bool]] = field(default_factory=dict)
    assigned: dict[str, list[Any]] = field(default_factory=dict)   # variable -> assigned expressions / markers
    idents: dict[bytes, list[Any]] = field(default_factory=dict)     # identifier -> its nodes, in source order
    ns: str = ""                                                      # innermost enclosing namespace
    tested: dict[bytes, int] = field(default_factory=dict)  # identifier -> start of its last tested use, or -1

    def param_index(self, name: str) -> int | None:
        for i, (p, _) in enumerate(self.params):
            if p == name:
                return i
        return None


def _defines_or_masks(n: Any) -> bool:
    """A flag name being defined (an enumerator: a copy of cuda.h) or or-ed into a mask, not a request's mode."""
    p = n.parent
    if p is None:
        return False
    if p.type == "enumerator":
        return True
    if p.type == "binary_expression":
        op = p.child_by_field_name("operator")
        return op is not None and op.type == "|"
    return False


_LEAVES = frozenset({"string_literal", "number_literal", "char_literal", "comment", "primitive_type",
                     "raw_string_literal", "preproc_arg", "type_identifier", "sized_type_specifier"})
_FLAG_BYTES = frozenset(f.encode() for f in FLAG_MODES)
DRIVER = "<driver version>"   # marker for "assigned by cuDriverGetVersion(&v)"


@dataclass
class Scan:
    file: Function = field(default_factory=lambda: Function("<file>", None))
    functions: dict[str, list[Function]] = field(default_factory=dict)
    fn_of: dict[int, Function] = field(default_factory=dict)       # function node id -> Function
    calls: dict[str, list[tuple[Any, Function]]] = field(default_factory=dict)
    fn_typedefs: set[str] = field(default_factory=set)              # hand-written function (pointer) types
    aliases: dict[str, str] = field(default_factory=dict)           # typedef/using name -> type text it names
    macros: dict[str, Any] = field(default_factory=dict)            # object-like #define name -> value node
    proto_defaults: dict[str, dict[int, Any]] = field(default_factory=dict)  # prototype -> {param index: default}
    flag_uses: list[tuple[str, int, int]] = field(default_factory=list)
    parse_errors: int = 0

    def run(self, root: Any) -> Scan:
        handlers: dict[str, Callable[[Any, Function], Function | None]] = {
            "preproc_def": self.on_define,
            "type_definition": self.on_typedef,
            "alias_declaration": self.on_alias,
            "declaration": self.on_declaration,
            "field_declaration": self.on_declaration,
            "parameter_declaration": self.on_declaration,
            "optional_parameter_declaration": self.on_declaration,
            "function_definition": self.on_function,
            "lambda_expression": self.on_lambda,
            "assignment_expression": self.on_assignment,
            "call_expression": self.on_call,
            "return_statement": self.on_return,
            "identifier": self.on_identifier,
            "field_identifier": self.on_identifier,
            "ERROR": self.on_error,
        }
        stack: list[tuple[Any, Function]] = [(root, self.file)]
        pop, push, get = stack.pop, stack.append, handlers.get
        while stack:
            n, scope = pop()
            t = n.type
            h = get(t)
            if h is not None:
                inner = h(n, scope)
                if inner is not None:
                    scope = inner
            if t in _LEAVES or not n.named_child_count:
                continue
            for c in reversed(n.named_children):
                push((c, scope))
        return self

    # --- handlers, one per node kind ---
    def on_error(self, n: Any, scope: Function) -> None:
        self.parse_errors += 1

    def on_define(self, n: Any, scope: Function) -> None:
        v = n.child_by_field_name("value")
        if v is not None:
            self.macros[text(n.child_by_field_name("name"))] = text(v).strip()

    def on_typedef(self, n: Any, scope: Function) -> None:
        ty = text(n.child_by_field_name("type"))
        for d in n.children_by_field_name("declarator"):
            name, is_fn = declared_name(d)
            if name and is_fn:
                self.fn_typedefs.add(name)
            elif name:
                self.aliases[name] = ty

    def on_alias(self, n: Any, scope: Function) -> None:
        name = text(n.child_by_field_name("name"))
        ty = n.child_by_field_name("type")
        if ty is None:
            return
        if any(c.type in ("abstract_function_declarator", "function_declarator") for c in ty.children):
            self.fn_typedefs.add(name)
        else:
            self.aliases[name] = text(ty)

    def on_declaration(self, n: Any, scope: Function) -> None:
        ty = text(n.child_by_field_name("type"))
        if n.type in ("parameter_declaration", "optional_parameter_declaration"):
            self._param(n, ty, scope)
            return
        for d in n.children_by_field_name("declarator"):
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            name, is_fn = declared_name(target) if target is not None else (None, False)
            if not name:
                continue
            scope.decls[name] = (ty, is_fn)
            if n.type == "field_declaration":
                self.file.decls.setdefault(name, (ty, is_fn))
            val = d.child_by_field_name("value") if d.type == "init_declarator" else None
            if val is None and d.type == "init_declarator":
                val = next((c for c in d.named_children if c.type in ("initializer_list", "argument_list")), None)
            if val is not None:
                if val.type == "lambda_expression":
                    self._lambda(name, val)
                    continue
                if val.type in ("initializer_list", "argument_list") and val.named_child_count == 1:
                    val = val.named_children[0]
                scope.assigned.setdefault(name, []).append(val)

    def _param(self, n: Any, ty: str, scope: Function) -> None:
        d = n.child_by_field_name("declarator")
        name, is_fn = declared_name(d) if d is not None else (None, False)
        if not name:
            return
        fn = scope
        # parameters belong to the function whose declarator holds them
        p = n.parent
        while p is not None and p.type not in ("function_definition", "lambda_expression", "declaration",
                                               "field_declaration", "type_definition"):
            p = p.parent
        if p is not None and p.type in ("declaration", "field_declaration"):
            self._proto_default(n)
            return
        if p is None or p.type not in ("function_definition", "lambda_expression"):
            return
        fn = self.fn_of.get(p.id, scope)
        fn.decls[name] = (ty, is_fn)
        fn.params.append((name, n.child_by_field_name("default_value")))

    def _proto_default(self, n: Any) -> None:
        default = n.child_by_field_name("default_value")
        plist, fdecl = n.parent, n.parent.parent if n.parent is not None else None
        if default is None or plist is None or fdecl is None or fdecl.type != "function_declarator":
            return
        name = base_name(fdecl.child_by_field_name("declarator"))
        index = [c.id for c in plist.named_children if c.type.endswith("parameter_declaration")].index(n.id)
        self.proto_defaults.setdefault(name, {})[index] = default

    def on_function(self, n: Any, scope: Function) -> Function:
        decl = n.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator",):
            decl = decl.child_by_field_name("declarator")
        name = base_name(decl.child_by_field_name("declarator")) if decl is not None else ""
        fn = Function(name or "<anonymous>", n, ns=namespace_of(n))
        self.fn_of[n.id] = fn
        if name:
            self.functions.setdefault(name, []).append(fn)
        return fn

    def on_lambda(self, n: Any, scope: Function) -> Function:
        fn = self.fn_of.get(n.id)
        if fn is None:
            fn = self.fn_of[n.id] = Function("<lambda>", n)
        return fn

    def _lambda(self, name: str, lam: Any) -> None:
        fn = Function(name, lam)
        self.fn_of[lam.id] = fn
        self.functions.setdefault(name, []).append(fn)

    def on_assignment(self, n: Any, scope: Function) -> None:
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is None or right is None or text(n.child_by_field_name("operator")) not in ("=", ""):
            return
        name = assigned_name(left)
        if name:
            owner = scope if name in scope.decls or name in scope.assigned or scope is self.file else None
            (owner or (self.file if left.type == "field_expression" else scope)).assigned.setdefault(
                name, []).append(right)

    def on_call(self, n: Any, scope: Function) -> None:
        fn = n.child_by_field_name("function")
        name = base_name(fn)
        if not name:
            return
        self.calls.setdefault(name, []).append((n, scope))
        if name in VERSION_QUERIES:
            for a in args(n):
                s, _ = strip(a)
                if s is not None and s.type in ("identifier", "field_expression"):
                    var = assigned_name(s)
                    if var:
                        scope.assigned.setdefault(var, []).append(DRIVER)

    def on_return(self, n: Any, scope: Function) -> None:
        if n.named_child_count and scope is not self.file:
            scope.returns.append(n.named_children[0])

    def on_identifier(self, n: Any, scope: Function) -> None:
        raw = n.text
        scope.idents.setdefault(raw, []).append(n)
        if raw in _FLAG_BYTES and not _defines_or_masks(n):
            self.flag_uses.append((raw.decode(), n.start_point[0], n.start_point[1]))

    # --- look-ups ---
    def lookup_decl(self, name: str, scope: Function) -> tuple[str, bool] | None:
        return scope.decls.get(name) or self.file.decls.get(name)

    def resolve_type(self, ty: str) -> str:
        """Follow typedef/using aliases to a PFN name (or the last alias)."""
        for _ in range(16):
            nxt = self.aliases.get(ty.strip())
            if nxt is None:
                break
            ty = nxt
        return ty


def namespace_of(n: Any) -> str:
    """The innermost named namespace enclosing `n` ('' at global scope)."""
    p = n.parent
    for _ in range(512):
        if p is None:
            return ""
        if p.type == "namespace_definition":
            name = p.child_by_field_name("name")
            if name is not None:
                return text(name).split("::")[-1]
        p = p.parent
    return ""


def namespaces_around(n: Any) -> set[str]:
    """Every named namespace enclosing `n`."""
    out: set[str] = set()
    p = n.parent
    for _ in range(512):
        if p is None:
            break
        if p.type == "namespace_definition":
            name = p.child_by_field_name("name")
            if name is not None:
                out.update(text(name).split("::"))
        p = p.parent
    return out


def declared_name(decl: Any) -> tuple[str | None, bool]:
    """(name, declared as a function or function pointer) for a declarator subtree."""
    is_fn = False
    n = decl
    for _ in range(64):
        if n is None:
            return None, is_fn
        t = n.type
        if t in ("identifier", "field_identifier", "type_identifier"):
            return text(n), is_fn
        if t == "qualified_identifier":
            return base_name(n), is_fn
        if t == "function_declarator":
            is_fn = True
        if t == "parenthesized_declarator":
            n = n.named_children[0] if n.named_child_count else None
            continue
        nxt = n.child_by_field_name("declarator")
        if nxt is None and t in ("reference_declarator", "variadic_declarator") and n.named_child_count:
            nxt = n.named_children[-1]          # `T& name`, `Args... args`: no field names the declarator
        n = nxt
    return None, is_fn


def assigned_name(left: Any) -> str:
    """The variable an lvalue names: `x`, `obj.x`/`p->x` (the field), `*(void**)&x`."""
    s, _ = strip(left)
    if s is not None and s.type == "pointer_expression" and text(s.child(0)) == "*":
        s, _ = strip(s.child_by_field_name("argument"))
    if s is None:
        return ""
    if s.type == "field_expression":
        return text(s.child_by_field_name("field"))
    if s.type in ("identifier", "qualified_identifier"):
        return base_name(s) if s.type == "qualified_identifier" else text(s)
    return ""
