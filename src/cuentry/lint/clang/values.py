"""Constants read off the clang AST: literals, macros, enumerators, const variables with their initializers,
simple arithmetic and ternaries over them. Everything that flows (variables, parameters, calls, tables) is the
dataflow analysis's (`..flow`, over `.lower`); this reads the leaves it starts from.

A value is `Val(value, kind)`: `value` an int or a str when known; `kind` says where it came from
(`literal`, `toolkit` for CUDA_VERSION and friends; the facts also carry `driver`/`runtime_version` for a
version query's answer, `param` for a wrapper's parameter, `other`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
    """What names mean while evaluating a constant: the macros of the translation unit."""

    macros: Mapping[str, list[str]]
    depth: int = 0


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
    """An enumerator's value, a const variable's initializer, a function's name."""
    d = c.referenced
    if d is None:
        return UNKNOWN
    dk = d.kind
    if dk == K.ENUM_CONSTANT_DECL:
        return Val(d.enum_value, "literal", text=d.spelling)
    if dk == K.VAR_DECL and d.type.is_const_qualified():
        init = [x for x in d.get_children() if x.kind.is_expression()]
        if init and env.depth < 8:
            got = evaluate(init[-1], Env(env.macros, env.depth + 1))
            toks = tokens(d)   # the declaration as written: its initializer may be a macro (CUDA_VERSION)
            return Val(got.value, "toolkit", text=d.spelling) if any(t in TOOLKIT_MACROS for t in toks) else got
    if dk == K.FUNCTION_DECL:
        return Val(d.spelling, "function", text=d.spelling)
    return UNKNOWN


def _binary(c: Any, env: Env) -> Val:
    kids = list(c.get_children())
    if len(kids) != 2:
        return UNKNOWN
    a, b = evaluate(kids[0], env), evaluate(kids[1], env)
    op = _operator(c, kids)
    kind = next((v.kind for v in (a, b) if v.kind == "toolkit"), "literal")
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


_HANDLERS: dict[Any, Callable[[Any, Env], Val]] = {
    K.INTEGER_LITERAL: _integer,
    K.STRING_LITERAL: _string,
    K.DECL_REF_EXPR: _ref,
    K.BINARY_OPERATOR: _binary,
    K.CONDITIONAL_OPERATOR: _conditional,
    K.UNARY_OPERATOR: _unary,
    K.CXX_BOOL_LITERAL_EXPR: lambda c, env: Val(1 if tokens(c)[:1] == ["true"] else 0, "literal"),
    K.GNU_NULL_EXPR: lambda c, env: Val(0, "literal", text="NULL"),
}


__all__ = ["UNKNOWN", "Env", "Val", "evaluate", "key", "macro_value", "number", "tokens"]
