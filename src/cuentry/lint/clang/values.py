"""Constants evaluated on the clang AST: literals, macros, constexpr/const variables, enums, template
arguments, default arguments, parameters bound by the caller, simple arithmetic and ternaries.

A value is `Val(value, kind)`: `value` an int or a str when known; `kind` says where it came from
(`literal`, `toolkit` for CUDA_VERSION and friends, `driver`/`runtime` for a version query's
out-parameter, `param` for a parameter of the enclosing function not bound yet, `other`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clang.cindex import CursorKind as K

from ..facts import TOOLKIT_MACROS

_NUM = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*$")
_PASS = frozenset({K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR,
                   K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR})
_OPS: dict[str, Callable[[int, int], int | None]] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
        "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
        "|": lambda a, b: a | b, "&": lambda a, b: a & b, "<<": lambda a, b: a << b if 0 <= b < 64 else None,
        ">>": lambda a, b: a >> b if 0 <= b < 64 else None}


@dataclass(frozen=True)
class Val:
    value: int | str | None = None
    kind: str = "other"
    param: int | None = None        # index of the enclosing function's parameter it is, when kind == "param"
    tparam: int | None = None       # index of the enclosing template's parameter
    text: str = ""


UNKNOWN = Val()


@dataclass
class Env:
    """What names mean while evaluating: the enclosing function's parameters (bound or not) and template
    parameters, and the macros of the translation unit."""

    macros: Mapping[str, list[str]]
    params: dict[str, Val] = field(default_factory=dict)       # PARM_DECL hash -> value
    param_index: dict[str, int] = field(default_factory=dict)  # PARM_DECL hash -> index
    tparams: dict[str, Val] = field(default_factory=dict)      # template parameter name -> value
    tparam_index: dict[str, int] = field(default_factory=dict)
    driver_vars: frozenset[str] = frozenset()                  # VAR_DECL hashes set by a version query
    depth: int = 0
    stores: Mapping[str, list[Any]] = field(default_factory=dict)   # variable/field -> the `x = ...` assigning it
    memo: dict[str, Any] = field(default_factory=dict)   # per TU: "v:"+variable -> its value, "=:"+variable -> its stores


def key(c: Any) -> str:
    return c.get_usr() or f"{c.location.file}:{c.location.offset}:{c.spelling}"


_MACRO_SPAN = 256
"""Bytes of source read for the tokens of a cursor a macro made: its range runs from the macro's body (the
`#define`) to the use, across every line between; only its start is looked at, so it is read once, bounded."""
_MACRO_ID = 1 << 31   # clang's SourceLocation: a location inside a macro expansion


def tokens(c: Any) -> list[str]:
    try:
        ext = c.extent
        if not (ext.begin_int_data | ext.end_int_data) & _MACRO_ID:
            return [t.spelling for t in c.get_tokens()]
        return _macro_tokens(c.translation_unit, ext)
    except Exception:
        return []


def _macro_tokens(tu: Any, ext: Any) -> list[str]:
    """The tokens clang gives for a macro-made range (from the spelling of its start to the spelling of
    its end, in one file); past `_MACRO_SPAN` bytes only the first and the last (no location is made
    from an offset: that costs clang a pass over every macro expansion of the file)."""
    from clang.cindex import SourceRange

    first = next(iter(tu.get_tokens(extent=SourceRange.from_locations(ext.start, ext.start))), None)
    last = next(iter(tu.get_tokens(extent=SourceRange.from_locations(ext.end, ext.end))), None)
    if first is None or last is None:
        return []
    f0, f1 = first.location.file, last.location.file
    lo, hi = first.extent.start.offset, last.extent.start.offset
    if f0 is None or f1 is None or f0.name != f1.name or hi < lo:
        return []
    if hi - lo > _MACRO_SPAN:
        return [first.spelling, last.spelling]
    return [t.spelling for t in tu.get_tokens(extent=SourceRange.from_locations(first.location, last.location))]


def number(text: str) -> int | None:
    m = _NUM.match(text.strip())
    return int(m.group(1), 0) if m else None


def macro_value(name: str, macros: Mapping[str, list[str]], depth: int = 0) -> Val:
    """The value of an object-like macro (a number, a string, or another macro, through 16 levels)."""
    toks = macros.get(name)
    if toks is None or depth > 16:
        return UNKNOWN
    kind = "toolkit" if name in TOOLKIT_MACROS else "literal"
    body = [t for t in toks if t not in ("(", ")")]
    if len(body) == 1:
        n = number(body[0])
        if n is not None:
            return Val(n, kind, text=name)
        if body[0].startswith('"'):
            return Val(body[0].strip('"'), kind, text=name)
        inner = macro_value(body[0], macros, depth + 1)
        return Val(inner.value, "toolkit" if kind == "toolkit" else inner.kind, text=name)
    return Val(None, kind, text=name)


def evaluate(c: Any, env: Env) -> Val:
    """The value of an expression cursor."""
    if c is None or env.depth > 24:
        return UNKNOWN
    k = c.kind
    if k in _PASS or k == K.CXX_NULL_PTR_LITERAL_EXPR:
        kids = [x for x in c.get_children() if x.kind != K.TYPE_REF and x.kind.is_expression()]
        if k == K.CXX_NULL_PTR_LITERAL_EXPR:
            return Val(0, "literal", text="nullptr")
        if not kids:
            return _from_tokens(c, env)
        return evaluate(kids[-1], env)
    handler = _HANDLERS.get(k)
    return handler(c, env) if handler is not None else UNKNOWN


def _from_tokens(c: Any, env: Env) -> Val:
    toks = tokens(c) or _at(c)
    if len(toks) == 1:
        n = number(toks[0])
        if n is not None:
            return Val(n, "literal", text=toks[0])
        return macro_value(toks[0], env.macros)
    return UNKNOWN


def _at(c: Any) -> list[str]:
    """The source token where a cursor was expanded (a literal that came from an object-like macro has no
    extent of its own: its location is the macro's name at the use)."""
    try:
        from clang.cindex import SourceRange

        loc = c.location
        if loc.file is None:
            return []
        toks = c.translation_unit.get_tokens(extent=SourceRange.from_locations(loc, loc))
        return [t.spelling for t in toks][:1]
    except Exception:
        return []


def _integer(c: Any, env: Env) -> Val:
    toks = tokens(c) or _at(c)
    if toks:
        # the extent starts at the literal's spelling (inside a macro body the extent runs on past it)
        n = number(toks[0])
        if n is not None:
            return Val(n, "literal", text=toks[0])
        if len(toks) == 1 and toks[0] in env.macros:
            return macro_value(toks[0], env.macros)
    # inside a macro expansion the extent is the invocation: ask the literal itself
    lit = c.literal if hasattr(c, "literal") else None
    n = number(lit) if isinstance(lit, str) else None
    if n is not None:
        return Val(n, "literal", text=lit or "")
    for t in toks:
        if t in TOOLKIT_MACROS:
            return macro_value(t, env.macros)
    return Val(None, "literal")


def _string(c: Any, env: Env) -> Val:
    s = c.spelling
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', s)
    return Val("".join(parts), "literal", text=s) if parts else UNKNOWN


def _ref(c: Any, env: Env) -> Val:
    d = c.referenced
    if d is None:
        return UNKNOWN
    dk = d.kind
    if dk == K.ENUM_CONSTANT_DECL:
        return Val(d.enum_value, "literal", text=d.spelling)
    if dk == K.PARM_DECL:
        h = key(d)
        if h in env.params:
            return env.params[h]
        return Val(None, "param", param=env.param_index.get(h), text=d.spelling)
    if dk == K.TEMPLATE_NON_TYPE_PARAMETER:
        got = env.tparams.get(d.spelling)
        return got if got is not None else Val(None, "param", tparam=env.tparam_index.get(d.spelling), text=d.spelling)
    if dk == K.VAR_DECL:
        return _var(d, env)
    if dk == K.FUNCTION_DECL:
        return Val(d.spelling, "function", text=d.spelling)
    return UNKNOWN


def _member(c: Any, env: Env) -> Val:
    """`name.c_str` (the object), a static constexpr member's value, or a field a version query fills or
    that is only ever assigned one constant."""
    d = c.referenced
    if d is not None and d.kind == K.VAR_DECL:
        return _var(d, env)
    if d is not None and d.kind == K.FIELD_DECL:
        return _var(d, env)
    kids = [x for x in c.get_children() if x.kind.is_expression()]
    return evaluate(kids[0], env) if kids and c.spelling in ("c_str", "data") else UNKNOWN


def _var(d: Any, env: Env) -> Val:
    if key(d) in env.driver_vars:
        return Val(None, "driver", text=d.spelling)
    init = [x for x in d.get_children() if x.kind.is_expression()]
    if not d.type.is_const_qualified():
        k = "v:" + key(d)
        got = env.memo.get(k)
        if got is not None:
            return got  # type: ignore[no-any-return]
        stores = _stored(d, env)
        if stores:
            env.memo[k] = Val(None, "other", text=d.spelling)   # while it is computed: an assignment from itself
            env.memo[k] = _one_of([*init[-1:], *stores], d, env)   # once per translation unit, not per request
            return env.memo[k]  # type: ignore[no-any-return]
    if not init:
        return UNKNOWN
    sub = Env(env.macros, env.params, env.param_index, env.tparams, env.tparam_index, env.driver_vars, env.depth + 1,
              env.stores, env.memo)
    got = evaluate(init[-1], sub)
    toks = tokens(d)   # the declaration as written: its initializer may be a macro (CUDA_VERSION)
    if any(t in TOOLKIT_MACROS for t in toks):
        return Val(got.value, "toolkit", text=d.spelling)
    if any(t in ("cuDriverGetVersion", "cudaDriverGetVersion") for t in toks):
        return Val(None, "driver", text=d.spelling)
    return got


def _stored(d: Any, env: Env) -> list[Any]:
    """The right sides of the plain assignments `d = ...` anywhere in the translation unit (read once)."""
    k = "=:" + key(d)
    got = env.memo.get(k)
    if got is not None:
        return got  # type: ignore[no-any-return]
    out: list[Any] = []
    env.memo[k] = out
    for op in env.stores.get(key(d), ()):
        kids = list(op.get_children())
        if len(kids) == 2 and op.kind == K.BINARY_OPERATOR and _operator_is(op, kids, "="):
            out.append(kids[1])
        elif len(kids) == 2 and op.kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
            out.append(op)     # `x += n`: not a constant (evaluates to unknown)
    return out


def _one_of(exprs: list[Any], d: Any, env: Env) -> Val:
    """A variable's value from its initializer and every assignment (evaluated where they are, without the
    caller's parameters): the driver's version when any is, the constant when all agree, unknown otherwise."""
    sub = Env(env.macros, {}, {}, {}, {}, env.driver_vars, env.depth + 4, env.stores, env.memo)
    vals = [evaluate(x, sub) for x in exprs]
    if any(v.kind == "driver" for v in vals):
        return Val(None, "driver", text=d.spelling)
    if any(v.kind == "toolkit" for v in vals):
        toolkit = next(v for v in vals if v.kind == "toolkit")
        return Val(toolkit.value if all(v.value == toolkit.value for v in vals) else None, "toolkit", text=d.spelling)
    first = vals[0]
    if first.value is not None and all(v.value == first.value for v in vals):
        return Val(first.value, first.kind, text=d.spelling)
    return Val(None, "other", text=d.spelling)


def _operator_is(c: Any, kids: list[Any], op: str) -> bool:
    end, start = kids[0].extent.end.offset, kids[1].extent.start.offset
    try:
        return any(end <= t.extent.start.offset < start and t.spelling == op for t in c.get_tokens())
    except Exception:
        return False


def _binary(c: Any, env: Env) -> Val:
    kids = list(c.get_children())
    if len(kids) != 2:
        return UNKNOWN
    a, b = evaluate(kids[0], env), evaluate(kids[1], env)
    op = _operator(c, kids)
    kind = next((v.kind for v in (a, b) if v.kind in ("toolkit", "driver", "runtime", "param")), "literal")
    if isinstance(a.value, int) and isinstance(b.value, int) and op in _OPS:
        try:
            return Val(_OPS[op](a.value, b.value), kind)
        except (OverflowError, ValueError):
            return Val(None, kind)
    return Val(None, kind if kind != "literal" else "other")


def _operator(c: Any, kids: list[Any]) -> str:
    end = kids[0].extent.end.offset
    start = kids[1].extent.start.offset
    try:
        for t in c.get_tokens():
            if end <= t.extent.start.offset < start and t.spelling in _OPS:
                return str(t.spelling)
    except Exception:
        return ""
    return ""


def _conditional(c: Any, env: Env) -> Val:
    kids = list(c.get_children())
    if len(kids) != 3:
        return UNKNOWN
    cond = evaluate(kids[0], env)
    if isinstance(cond.value, int):
        return evaluate(kids[1] if cond.value else kids[2], env)
    a, b = evaluate(kids[1], env), evaluate(kids[2], env)
    return a if a == b else Val(None, "other")


def _unary(c: Any, env: Env) -> Val:
    kids = list(c.get_children())
    if len(kids) != 1:
        return UNKNOWN
    v = evaluate(kids[0], env)
    toks = tokens(c)
    if toks and toks[0] == "-" and isinstance(v.value, int):
        return Val(-v.value, v.kind)
    return v if toks and toks[0] == "+" else UNKNOWN


def _call(c: Any, env: Env) -> Val:
    """A call's value: `std::string("cuX")` and `name.c_str()` are the string; a helper function whose body
    returns one expression is evaluated with its parameters bound (`make_version(12, 0)` is 12000)."""
    f = c.referenced
    if f is None or env.depth > 8:
        return UNKNOWN
    if f.kind == K.CONSTRUCTOR or (f.kind == K.CXX_METHOD and f.spelling in ("c_str", "data")):
        kids = [x for x in c.get_children() if x.kind.is_expression()]
        return evaluate(kids[0], _deeper(env)) if kids else UNKNOWN
    if f.spelling in _PICK and f.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and _std_or_global(f):
        return _pick(c, f.spelling, env)
    if f.kind not in (K.FUNCTION_DECL, K.CXX_METHOD):
        return UNKNOWN
    return _helper(c, f, env)


_PICK = {"min": min, "max": max}
"""Functions whose value is one of their arguments (`std::min(runtime, driver_version())`): their bodies are the
standard library's, with more than one return, so they are known by what they do."""


def _std_or_global(f: Any) -> bool:
    parent = f.semantic_parent
    return parent is None or parent.kind == K.TRANSLATION_UNIT or (parent.kind == K.NAMESPACE and parent.spelling == "std")


def _pick(c: Any, name: str, env: Env) -> Val:
    """`min`/`max` of two values: the constant when both are, else a version query's (or a parameter's) kind
    when one argument has it: the call asks at a version that came from the driver or the runtime."""
    vals = [evaluate(a, _deeper(env)) for a in c.get_arguments()]
    if len(vals) == 2 and all(isinstance(v.value, int) for v in vals):
        return Val(_PICK[name](vals[0].value, vals[1].value), "literal")   # type: ignore[type-var]
    for k in ("driver", "runtime", "toolkit", "param"):
        src = next((v for v in vals if v.kind == k), None)
        if src is not None:
            return Val(None, k, param=src.param, tparam=src.tparam, text=src.text)
    return UNKNOWN


def _deeper(env: Env, params: dict[str, Val] | None = None) -> Env:
    return Env(env.macros, env.params if params is None else params, env.param_index if params is None else {},
               env.tparams, env.tparam_index, env.driver_vars, env.depth + 1, env.stores, env.memo)


def _helper(c: Any, f: Any, env: Env) -> Val:
    body = f.get_definition() or f
    rets = [x for x in body.walk_preorder() if x.kind == K.RETURN_STMT]
    expr = [x for x in rets[0].get_children() if x.kind.is_expression()] if len(rets) == 1 else []
    if not expr:
        return UNKNOWN
    params = [p for p in body.get_children() if p.kind == K.PARM_DECL]
    args = list(c.get_arguments())
    bound = {key(p): evaluate(a, env) for p, a in zip(params, args, strict=False)}
    for p in params[len(args):]:
        kids = [x for x in p.get_children() if x.kind.is_expression()]
        bound[key(p)] = evaluate(kids[-1], Env(env.macros, depth=env.depth + 1)) if kids else UNKNOWN
    got = evaluate(expr[0], _deeper(env, bound))
    if got.value is not None:
        return got
    for k in ("param", "toolkit", "driver", "runtime"):
        src = next((v for v in bound.values() if v.kind == k), None)
        if src is not None:
            return Val(None, k, param=src.param, tparam=src.tparam, text=src.text)
    return got


_HANDLERS: dict[Any, Callable[[Any, Env], Val]] = {
    K.CALL_EXPR: _call,
    K.INTEGER_LITERAL: _integer,
    K.STRING_LITERAL: _string,
    K.DECL_REF_EXPR: _ref,
    K.MEMBER_REF_EXPR: _member,
    K.BINARY_OPERATOR: _binary,
    K.CONDITIONAL_OPERATOR: _conditional,
    K.UNARY_OPERATOR: _unary,
    K.CXX_BOOL_LITERAL_EXPR: lambda c, env: Val(1 if tokens(c)[:1] == ["true"] else 0, "literal"),
    K.GNU_NULL_EXPR: lambda c, env: Val(0, "literal", text="NULL"),
}


__all__ = ["UNKNOWN", "Env", "Val", "evaluate", "key", "macro_value", "number", "tokens"]
