"""C, C++ and CUDA front end: macros expanded, tree-sitter parse, facts out.

Steps, each in its own module: `..preprocess` expands the macros defined in
the file and its headers (keeping line numbers); `.tree` parses with the
C++ grammar (CUDA sources with tree-sitter-cuda when it is installed);
`.scan` walks the tree once by node kind; `.values` follows versions,
strings and flags through assignments, constants and helper functions;
`.requests` finds the APIs (base, getter pointers, wrappers) and turns each
call into a `Query` or `Export`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..facts import Unit, suppressions
from ..preprocess import Preprocessed, preprocess
from .focus import TooLarge, focus
from .requests import Requests
from .scan import Scan
from .tree import grammar_for, parser
from .values import Evaluator

__all__ = ["extract"]



def _where(pre: Preprocessed) -> Any:
    def where(node: Any) -> str:
        line0, col0 = node.start_point
        _, exp = pre.origin(line0, col0)
        parts = []
        if exp is not None:
            src = "" if exp.def_path == pre_path[0] else f" of {exp.def_path}"
            parts.append(f"in {exp.text}, expanded from the macro {exp.macro} defined at line {exp.def_line}{src}")
            if exp.branch:
                parts.append(f"the definition in the {exp.branch}" if exp.branch != "every branch" else "")
        branch = pre.branch_of(line0 + 1)
        if branch:
            parts.append(f"in the {branch}")
        parts = [p for p in parts if p]
        return f" ({'; '.join(parts)})" if parts else ""

    pre_path: list[str] = [""]
    where.pre_path = pre_path  # type: ignore[attr-defined]
    return where


def extract(text: str, path: str, include_dirs: Sequence[str] = (), extra: dict[str, Any] | None = None,
            defaults: dict[str, dict[int, Any]] | None = None) -> Unit:
    """Parse one C/C++/CUDA file into facts."""
    unit = Unit(path=path, lang="c", suppressions=suppressions(text), lines=text.count("\n") + 1)
    pre = preprocess(text, path, include_dirs)
    unit.notes = list(pre.notes)
    try:
        src = focus(pre.text).encode("utf-8", errors="replace")
    except TooLarge as exc:
        unit.problem = str(exc)
        return unit
    tree = parser(grammar_for(path)).parse(src)
    scan = Scan().run(tree.root_node)
    unit.parse_errors = scan.parse_errors
    ev = Evaluator(scan)
    req = Requests(scan, ev, _with_defaults(extra or {}, defaults or {}))
    req.getters_from_types()
    req.find_wrappers()
    where = _where(pre)
    where.pre_path[0] = path
    queries, exports = req.queries_and_exports(where)
    for q in queries:
        q.line, q.col = _map(pre, q.line, q.col)
        if q.symbol_line or q.symbol_col:
            line, col = _map(pre, q.symbol_line, q.symbol_col)
            q.symbol_line, q.symbol_col = (line, col) if line == q.line or not q.where else (q.line, q.col)
        unit.queries.append(q)
    for e in exports:
        e.line, e.col = _map(pre, e.line, e.col)
        unit.exports.append(e)
    for name, line0, col0 in scan.flag_uses:
        line, col = _map(pre, line0, col0)
        unit.flag_uses.append((name, line, col))
    unit.queries.sort(key=lambda q: (q.line, q.col))
    unit.apis = req.portable()
    unit.defaults = req.portable_defaults()
    unit.called = frozenset(scan.calls)
    return unit


def _with_defaults(extra: dict[str, Any], defaults: dict[str, dict[int, Any]]) -> dict[str, Any]:
    """Wrappers from other files, with the defaults their prototypes (in headers) declare filled in."""
    out = {}
    for name, spec in extra.items():
        d = defaults.get(name, {})
        roles = {r: (src[0], src[1], d.get(src[1])) if src[0] == "argv" and src[2] is None and src[1] in d else src
                 for r, src in spec.roles.items()}
        out[name] = replace(spec, roles=roles)
    return out


def _map(pre: Preprocessed, line0: int, col0: int) -> tuple[int, int]:
    col, _ = pre.origin(line0, col0)
    return line0 + 1, col
