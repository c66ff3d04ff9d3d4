"""Data flow for the C family: what value an expression can have, as far as the linter cares.

A version can be a literal pin (or several, through a ternary), come from the
driver or runtime (`cuDriverGetVersion`, through assignments, `std::min`,
helper functions that return it), from the toolkit's headers (`CUDA_VERSION`),
or from a parameter of the enclosing function (then the function may be a
wrapper). Strings and flags are followed the same way. Each (node, scope) is
evaluated once, and recursion is cut, so the cost stays linear.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..facts import FLAG_MODES, TOOLKIT_MACROS, VERSION_QUERIES
from .scan import DRIVER, Function, Scan
from .tree import args, base_name, string_value, strip, template_args, text, to_int

__all__ = ["OTHER", "Evaluator", "Value", "join"]


_TAINTS = ("driver", "toolkit", "runtime")


@dataclass(frozen=True)
class Value:
    kind: str = "other"                 # int | str | flag | driver | toolkit | runtime | param | other
    ints: tuple[int, ...] = ()
    strs: tuple[str, ...] = ()
    flag: str = ""
    param: int = -1
    text: str = ""


OTHER = Value()


def join(values: list[Value]) -> Value:
    """Several possible values of one expression: a taint wins, literals collect, else 'other'."""
    if not values:
        return OTHER
    for k in _TAINTS:
        for v in values:
            if v.kind == k:
                return v
    kinds = {v.kind for v in values}
    if kinds == {"int"}:
        return Value("int", tuple(sorted({i for v in values for i in v.ints})))
    if kinds == {"str"}:
        return Value("str", strs=tuple(dict.fromkeys(s for v in values for s in v.strs)))
    if kinds == {"flag"} and len({v.flag for v in values}) == 1:
        return values[0]
    if kinds == {"param"} and len({v.param for v in values}) == 1:
        return values[0]
    return OTHER


_MINMAX = ("min", "max", "fmin", "fmax")


class Evaluator:
    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.memo: dict[tuple[int, int], Value] = {}
        self.names: dict[tuple[int, str], Value] = {}
        self.busy: set[tuple[int, str]] = set()
        self.fn_busy: set[int] = set()
        self.bindings: dict[int, list[Value]] = {}      # function -> values of its parameters at one call

    def bound_values(self, nodes: list[Any], fn: Function, args: list[Value]) -> list[Value]:
        """The values of expressions inside `fn` when it is called with these arguments."""
        return [self.bound_value(n, fn, args) for n in nodes]

    def bound_value(self, n: Any, fn: Function, args: list[Value]) -> Value:
        """The value of `n` (an expression inside `fn`) when `fn` is called with these arguments."""
        if id(fn) in self.bindings or len(self.bindings) > 4:
            return self.value(n, fn)
        self.bindings[id(fn)] = args
        try:
            return self._value(n, fn, 1)
        finally:
            del self.bindings[id(fn)]

    def value(self, n: Any, scope: Function, depth: int = 0) -> Value:
        if n is None or depth > 48:
            return OTHER
        if self.bindings:
            return self._value(n, scope, depth)     # values under a binding are not memoised
        key = (n.id, id(scope))
        got = self.memo.get(key)
        if got is None:
            got = self._value(n, scope, depth)
            self.memo[key] = got
        return got

    def _value(self, n: Any, scope: Function, depth: int) -> Value:
        t = n.type
        if t == "number_literal":
            i = to_int(text(n))
            return Value("int", (i,)) if i is not None else OTHER
        if t in ("string_literal", "concatenated_string"):
            s = string_value(n)
            return Value("str", strs=(s,)) if s is not None else OTHER
        if t in ("identifier", "qualified_identifier", "field_expression"):
            return self.name(n, scope, depth)
        if t in ("parenthesized_expression", "cast_expression", "pointer_expression"):
            inner, _ = strip(n)
            return self.value(inner, scope, depth + 1) if inner is not n else OTHER
        if t == "conditional_expression":
            return join([self.value(n.child_by_field_name("consequence"), scope, depth + 1),
                         self.value(n.child_by_field_name("alternative"), scope, depth + 1)])
        if t == "call_expression":
            return self.call(n, scope, depth)
        if t == "binary_expression":
            return self.binary(n, scope, depth)
        if t in ("null", "nullptr"):
            return Value("int", (0,))
        return OTHER

    def name(self, n: Any, scope: Function, depth: int) -> Value:
        name = text(n.child_by_field_name("field")) if n.type == "field_expression" else (
            base_name(n) if n.type == "qualified_identifier" else text(n))
        if name in TOOLKIT_MACROS:
            return Value("toolkit", text=name)
        if name in FLAG_MODES:
            return Value("flag", flag=FLAG_MODES[name], text=name)
        if n.type == "identifier" and scope is not self.scan.file:
            i = scope.param_index(name)
            if i is not None and name not in scope.assigned:
                bound = self.bindings.get(id(scope))
                if bound is not None and i < len(bound):
                    return bound[i]
                return Value("param", param=i, text=name)
        key = (id(scope), name)
        if self.bindings:
            return self._lookup(name, scope, depth) if key not in self.busy else OTHER
        if key in self.names:
            return self.names[key]
        if key in self.busy:
            return OTHER
        self.busy.add(key)
        try:
            got = self._lookup(name, scope, depth)
        finally:
            self.busy.discard(key)
        self.names[key] = got
        return got

    def _lookup(self, name: str, scope: Function, depth: int) -> Value:
        for owner in (scope, self.scan.file):
            assigned = owner.assigned.get(name)
            if assigned:
                vals = [Value("driver", text=name) if a is DRIVER else self.value(a, owner, depth + 1)
                        for a in assigned[:64]]
                return join(vals)
        macro = self.scan.macros.get(name)
        if macro is not None:
            i = to_int(macro.strip("() "))
            if i is not None:
                return Value("int", (i,))
            word = macro.strip("() ").split("::")[-1]
            if word in FLAG_MODES:
                return Value("flag", flag=FLAG_MODES[word], text=word)
            if word in TOOLKIT_MACROS:
                return Value("toolkit", text=word)
            if macro.startswith('"') and macro.endswith('"'):
                return Value("str", strs=(macro[1:-1],))
        return OTHER

    def call(self, n: Any, scope: Function, depth: int) -> Value:
        fn = n.child_by_field_name("function")
        name = base_name(fn)
        a = args(n)
        if name in VERSION_QUERIES:
            return Value("driver", text=name)
        if name in _MINMAX and a:
            vals = [self.value(x, scope, depth + 1) for x in a]
            got = join(vals)
            if got.kind == "int" and all(len(v.ints) == 1 for v in vals):
                pick = min if "min" in name else max
                return Value("int", (pick(v.ints[0] for v in vals),))
            return got
        inner, _ = strip(n)
        if inner is not n:
            return self.value(inner, scope, depth + 1)
        if name in ("int", "long", "unsigned") and len(a) == 1:
            return self.value(a[0], scope, depth + 1)
        if template_args(fn) == "" and name in self.scan.functions:
            if a:
                return self.returns_with(name, [self.value(x, scope, depth + 1) for x in a], depth)
            return self.returns(name, depth)
        return OTHER

    def returns_with(self, name: str, args: list[Value], depth: int) -> Value:
        """What a helper returns for these arguments (`make_version(12, 0)` -> 12000), one level deep."""
        vals: list[Value] = []
        for f in self.scan.functions.get(name, [])[:8]:
            if id(f) in self.fn_busy or not f.returns:
                continue
            self.fn_busy.add(id(f))
            try:
                vals.extend(self.bound_value(r, f, args) for r in f.returns[:16])
            finally:
                self.fn_busy.discard(id(f))
        got = join(vals)
        return got if got.kind != "param" else OTHER

    def returns(self, name: str, depth: int) -> Value:
        vals: list[Value] = []
        for f in self.scan.functions.get(name, [])[:8]:
            if id(f) in self.fn_busy:
                continue
            self.fn_busy.add(id(f))
            try:
                vals.extend(self.value(r, f, depth + 1) for r in f.returns[:16])
                # a helper that fills an out-parameter from the driver and returns it
            finally:
                self.fn_busy.discard(id(f))
        got = join(vals)
        return got if got.kind != "param" else OTHER

    def binary(self, n: Any, scope: Function, depth: int) -> Value:
        op = text(n.child_by_field_name("operator"))
        left = self.value(n.child_by_field_name("left"), scope, depth + 1)
        right = self.value(n.child_by_field_name("right"), scope, depth + 1)
        for v in (left, right):
            if v.kind in _TAINTS:
                return v
        if left.kind == right.kind == "int" and len(left.ints) == len(right.ints) == 1 and op in "+-*/":
            x, y = left.ints[0], right.ints[0]
            r = {"+": x + y, "-": x - y, "*": x * y, "/": x // y if y else 0}[op]
            return Value("int", (r,)) if abs(r) < 1 << 40 else OTHER
        return OTHER
