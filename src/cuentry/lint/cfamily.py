"""C, C++ and CUDA front end: tree-sitter's C++ grammar, facts out.

The C++ grammar parses C and CUDA sources too (CUDA's ``<<<...>>>`` becomes an
error node that the walk skips); no preprocessing is done, so what the linter
sees is the code as written, macros by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .facts import (
    DEFAULT_FLAGS,
    LEGACY_FLAGS,
    PER_THREAD_FLAGS,
    QUERY_APIS,
    TOOLKIT_MACROS,
    VERSION_QUERIES,
    Query,
    Unit,
    suppressions,
)

_PARSER: list[Any] = []


def _parser() -> Any:
    if not _PARSER:
        import tree_sitter_cpp
        from tree_sitter import Language, Parser

        _PARSER.append(Parser(Language(tree_sitter_cpp.language())))
    return _PARSER[0]


def _text(n: Any) -> str:
    return n.text.decode("utf-8", errors="replace") if n is not None else ""


def _walk(root: Any) -> Iterator[Any]:
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _args(call: Any) -> list[Any]:
    al = call.child_by_field_name("arguments")
    return [c for c in al.named_children if c.type != "comment"] if al is not None else []


def _declared_name(decl: Any) -> tuple[str | None, bool]:
    """(name, declared as a function pointer) for a declarator subtree."""
    is_fn = False
    name = None
    for n in _walk(decl):
        if n.type == "function_declarator":
            is_fn = True
        if n.type in ("identifier", "field_identifier", "type_identifier") and name is None:
            if n.parent is not None and n.parent.type in ("parameter_declaration", "parameter_list"):
                continue
            name = _text(n)
    return name, is_fn


def _strip(n: Any) -> tuple[Any, list[str]]:
    """Strip casts and address-of from the pointer argument; return (node, cast types seen)."""
    casts: list[str] = []
    while True:
        if n.type == "cast_expression":
            casts.append(_text(n.child_by_field_name("type")))
            n = n.child_by_field_name("value")
        elif n.type == "call_expression" and _text(n.child_by_field_name("function")).split("<")[0].endswith("_cast"):
            fn = n.child_by_field_name("function")
            targs = fn.child_by_field_name("arguments") if fn is not None else None
            casts.append(_text(targs).strip("<>") if targs is not None else "")
            a = _args(n)
            if not a:
                return n, casts
            n = a[0]
        elif n.type == "pointer_expression" and _text(n.child(0)) == "&":
            n = n.child_by_field_name("argument")
        elif n.type == "parenthesized_expression" and n.named_child_count == 1:
            n = n.named_children[0]
        else:
            return n, casts


def _int(text: str) -> int | None:
    t = text.rstrip("uUlL")
    try:
        return int(t, 0)
    except ValueError:
        return None


_TESTS = ("if_statement", "while_statement", "conditional_expression", "return_statement", "binary_expression",
          "unary_expression", "call_expression", "switch_statement")


def _tested_after(call: Any) -> set[str]:
    """Names tested (in a condition, comparison, return or call) after ``call`` in its function."""
    fn = call.parent
    while fn is not None and fn.type != "function_definition":
        fn = fn.parent
    if fn is None:
        return set()
    end = call.end_byte
    out: set[str] = set()
    for n in _walk(fn):
        if n.start_byte >= end and n.type in _TESTS:
            if n.type == "call_expression" and _text(n.child_by_field_name("function")).split("::")[-1] in QUERY_APIS:
                continue  # handing the status to the next query overwrites it; that is no check
            cond = n.child_by_field_name("condition") if n.type.endswith("_statement") and n.type != "return_statement" else n
            for x in _walk(cond if cond is not None else n):
                if x.type in ("identifier", "field_identifier"):
                    out.add(_text(x))
    return out


def _assigned_to(call: Any) -> str | None:
    """The variable a call's result is stored in (``CUresult r = call`` or ``r = call``)."""
    p = call.parent
    if p is not None and p.type == "init_declarator":
        return _text(p.child_by_field_name("declarator"))
    if p is not None and p.type == "assignment_expression" and p.child_by_field_name("right") == call:
        return _text(p.child_by_field_name("left"))
    return None


def extract(text: str, path: str) -> Unit:
    """Parse one C/C++/CUDA file into facts."""
    src = text.encode("utf-8", errors="replace")
    tree = _parser().parse(src)
    unit = Unit(path=path, lang="c", suppressions=suppressions(text), lines=text.count("\n") + 1)
    decls: dict[str, tuple[str, bool]] = {}       # variable -> (type text, function-pointer declarator)
    fn_typedefs: set[str] = set()                 # typedef names of hand-written function pointer types
    pfn_alias: dict[str, str] = {}                # typedef name -> PFN_ name it aliases
    macros: dict[str, int] = {}
    driver_taint: set[str] = set()
    toolkit_taint: set[str] = set()
    calls: list[Any] = []
    for n in _walk(tree.root_node):
        t = n.type
        if t == "ERROR":
            unit.parse_errors += 1
        if t == "preproc_def":
            v = n.child_by_field_name("value")
            iv = _int(_text(v).strip()) if v is not None else None
            if iv is not None:
                macros[_text(n.child_by_field_name("name"))] = iv
        elif t == "type_definition":
            ty = _text(n.child_by_field_name("type"))
            for d in n.children_by_field_name("declarator"):
                name, is_fn = _declared_name(d)
                if name and is_fn:
                    fn_typedefs.add(name)
                elif name and ty.startswith("PFN_"):
                    pfn_alias[name] = ty
        elif t in ("declaration", "field_declaration", "parameter_declaration"):
            ty = _text(n.child_by_field_name("type"))
            for d in n.children_by_field_name("declarator"):
                target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
                name, is_fn = _declared_name(target) if target is not None else (None, False)
                if name:
                    decls[name] = (ty, is_fn)
                if d.type == "init_declarator":
                    val = d.child_by_field_name("value")
                    if val is not None and any(_text(x) in TOOLKIT_MACROS for x in _walk(val)):
                        toolkit_taint.add(name or "")
        elif t == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if right is not None and any(_text(x) in TOOLKIT_MACROS for x in _walk(right)):
                toolkit_taint.add(_text(left))
        elif t == "call_expression":
            fname = _text(n.child_by_field_name("function"))
            base = fname.split("::")[-1]
            if base in VERSION_QUERIES:
                for a in _args(n):
                    s, _ = _strip(a)
                    driver_taint.add(_text(s))
            elif base in QUERY_APIS:
                calls.append(n)
        elif t == "identifier":
            name = _text(n)
            if name in LEGACY_FLAGS or name in PER_THREAD_FLAGS or name in DEFAULT_FLAGS:
                unit.flag_uses.append((name, n.start_point[0] + 1, n.start_point[1] + 1))

    for n in calls:
        api = _text(n.child_by_field_name("function")).split("::")[-1]
        args = _args(n)
        q = Query(api=api, line=n.start_point[0] + 1, col=n.start_point[1] + 1)
        parent = n.parent
        q.result_used = not (parent is not None and (parent.type == "expression_statement" or (
            parent.type == "cast_expression" and _text(parent.child_by_field_name("type")) == "void")))
        if api == "cudaGetDriverEntryPoint":
            layout = {"symbol": 0, "pfn": 1, "flags": 2, "status": 3}
            q.version_kind = "runtime"
        elif api == "cuGetProcAddress" and len(args) == 4:
            layout = {"symbol": 0, "pfn": 1, "version": 2, "flags": 3}
            q.status = "not_applicable"
        else:
            layout = {"symbol": 0, "pfn": 1, "version": 2, "flags": 3, "status": 4}

        def arg(role: str) -> Any:
            i = layout.get(role)
            return args[i] if i is not None and i < len(args) else None

        s = arg("symbol")
        if s is not None and s.type == "string_literal":
            q.symbol = "".join(_text(c) for c in s.named_children if c.type == "string_content")
            q.symbol_line, q.symbol_col = s.start_point[0] + 1, s.start_point[1] + 1
        v = arg("version")
        if v is not None:
            q.version_text = _text(v)
            names = {_text(x) for x in _walk(v) if x.type in ("identifier", "field_expression")}
            if v.type == "number_literal":
                q.version, q.version_kind = _int(_text(v)), "literal"
            elif v.type == "identifier" and _text(v) in macros:
                q.version, q.version_kind = macros[_text(v)], "literal"
            elif names & TOOLKIT_MACROS or names & toolkit_taint:
                q.version_kind = "toolkit"
            elif names & driver_taint:
                q.version_kind = "driver"
            elif any(_text(x.child_by_field_name("function")).split("::")[-1] in VERSION_QUERIES
                     for x in _walk(v) if x.type == "call_expression"):
                q.version_kind = "driver"
            else:
                q.version_kind = "other"
        f = arg("flags")
        q.flags_text = _text(f) if f is not None else ""
        st = arg("status")
        if q.result_used:
            tested = _tested_after(n)
            stored = [x for x in (_assigned_to(n),) if x]
            if st is not None and st.type == "pointer_expression":
                stored.append(_text(st.child_by_field_name("argument")))
            q.unchecked = tuple(x for x in stored if x not in tested)
        if "status" in layout:
            if st is None:
                q.status = "missing"
            elif st.type == "null" or _text(st) in ("NULL", "0", "nullptr"):
                q.status = "null"
            else:
                q.status = "given"
        p = arg("pfn")
        if p is not None:
            target, casts = _strip(p)
            name = _text(target.child_by_field_name("field")) if target.type == "field_expression" else _text(target)
            q.target = name
            declared = decls.get(name)
            if declared is not None:
                ty, is_fn = declared
                q.target_type = pfn_alias.get(ty, ty)
                if is_fn:
                    q.handwritten = f"'{name}' is declared with a hand-written function type"
                elif ty in fn_typedefs:
                    q.handwritten = f"'{name}' has type {ty}, a hand-written function pointer typedef"
                elif ty.startswith("decltype"):
                    q.handwritten = f"'{name}' takes its type from {ty}, which follows cuda.h's macros, not a fixed ABI"
            for c in casts:
                if "(*" in c.replace(" ", ""):
                    q.handwritten = f"the pointer is cast to the hand-written type {c}"
        unit.queries.append(q)
    return unit

