"""tree-sitter plumbing for the C family: the grammars, node text, walks, argument lists."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CASTS", "CUDA_SUFFIXES", "args", "base_name", "grammar_for", "parser", "string_value", "strip",
    "template_args", "text", "to_int",
]


_PARSERS: dict[str, Any] = {}
CUDA_SUFFIXES = (".cu", ".cuh")


def grammar_for(path: str) -> str:
    """'cuda' for CUDA sources when tree-sitter-cuda is installed, else 'cpp'."""
    if path.endswith(CUDA_SUFFIXES):
        try:
            import tree_sitter_cuda  # noqa: F401
        except ImportError:
            return "cpp"
        return "cuda"
    return "cpp"


def parser(kind: str = "cpp") -> Any:
    """The tree-sitter parser of one grammar ('cpp' or 'cuda'), built once."""
    if kind not in _PARSERS:
        from tree_sitter import Language, Parser

        if kind == "cuda":
            import tree_sitter_cuda as mod
        else:
            import tree_sitter_cpp as mod  # type: ignore[no-redef]
        _PARSERS[kind] = Parser(Language(mod.language()))
    return _PARSERS[kind]


def text(n: Any) -> str:
    return n.text.decode("utf-8", errors="replace") if n is not None else ""


def args(call: Any) -> list[Any]:
    al = call.child_by_field_name("arguments")
    return [c for c in al.named_children if c.type != "comment"] if al is not None else []


def base_name(fn: Any) -> str:
    """The called name without scope, object or template arguments: `ns::get<T>` -> `get`."""
    if fn is None:
        return ""
    t = fn.type
    if t == "template_function":
        return base_name(fn.child_by_field_name("name"))
    if t == "qualified_identifier":
        return base_name(fn.child_by_field_name("name"))
    if t == "field_expression":
        return text(fn.child_by_field_name("field"))
    if t == "parenthesized_expression" and fn.named_child_count == 1:
        return base_name(fn.named_children[0])
    if t == "pointer_expression":
        return base_name(fn.child_by_field_name("argument"))
    return text(fn) if t in ("identifier", "field_identifier", "destructor_name") else ""


def template_args(fn: Any) -> str:
    """`<PFN_cuX_v12000>` of `get<PFN_cuX_v12000>`, without the brackets ('' if none)."""
    while fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    if fn is not None and fn.type == "template_function":
        return text(fn.child_by_field_name("arguments")).strip("<> ")
    return ""


CASTS = ("static_cast", "reinterpret_cast", "const_cast", "bit_cast")


def strip(n: Any) -> tuple[Any, list[str]]:
    """Strip casts, address-of, parentheses and string conversions; return (node, cast types seen)."""
    casts: list[str] = []
    for _ in range(64):
        t = n.type
        if t == "cast_expression":
            casts.append(text(n.child_by_field_name("type")))
            n = n.child_by_field_name("value")
        elif t == "call_expression" and _is_cast_call(n):
            casts.append(template_args(n.child_by_field_name("function")))
            a = args(n)
            if not a:
                return n, casts
            n = a[0]
        elif t == "pointer_expression" and text(n.child(0)) == "&":
            n = n.child_by_field_name("argument")
        elif t == "parenthesized_expression" and n.named_child_count == 1:
            n = n.named_children[0]
        elif t == "call_expression" and _is_string_view(n):
            n = _string_view_inner(n)
        else:
            return n, casts
        if n is None:
            break
    return n, casts


def _is_cast_call(n: Any) -> bool:
    return base_name(n.child_by_field_name("function")) in CASTS


def _is_string_view(n: Any) -> bool:
    fn = n.child_by_field_name("function")
    name = base_name(fn)
    if name in ("c_str", "data") and fn is not None and fn.type == "field_expression":
        return True
    return name in ("string", "string_view", "str") and len(args(n)) == 1


def _string_view_inner(n: Any) -> Any:
    fn = n.child_by_field_name("function")
    if fn is not None and fn.type == "field_expression":
        return fn.child_by_field_name("argument")
    return args(n)[0]


def to_int(s: str) -> int | None:
    t = s.replace("'", "").rstrip("uUlL")
    try:
        return int(t, 0)
    except ValueError:
        return None


def string_value(n: Any) -> str | None:
    """The value of a string literal or a concatenation of string literals (None otherwise)."""
    if n is None:
        return None
    if n.type == "string_literal":
        return "".join(text(c) for c in n.named_children if c.type in ("string_content", "escape_sequence"))
    if n.type == "concatenated_string":
        parts = [string_value(c) for c in n.named_children]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    return None
