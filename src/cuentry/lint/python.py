"""Python front end: the ``ast`` module, facts out.

Recognises the two ways Python code asks for entry points by hand:
``cuda.bindings`` (``driver.cuGetProcAddress(b"cuX", version, flags)``) and
ctypes (``libcuda.cuGetProcAddress_v2(b"cuX", byref(p), version, flags, byref(st))``),
plus hand-written ``CFUNCTYPE`` prototypes and exported names with suffixes.
"""

from __future__ import annotations

import ast
import re

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

_SUFFIXED = re.compile(r"^cu[A-Z]\w*?_(?:v\d+(?:_pt(?:ds|sz))?|pt(?:ds|sz))$")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _inner(node: ast.AST) -> ast.AST:
    """byref(x) / pointer(x) / x.value -> x."""
    while True:
        if isinstance(node, ast.Call) and _name(node.func) in ("byref", "pointer", "addressof") and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Attribute) and node.attr == "value":
            node = node.value
        else:
            return node


def _str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        v = node.value
        return v.decode("ascii", errors="replace") if isinstance(v, bytes) else v
    return None


def extract(text: str, path: str) -> Unit:
    """Parse one Python file into facts (a file that does not parse gives no facts)."""
    unit = Unit(path=path, lang="python", suppressions=suppressions(text), lines=text.count("\n") + 1)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError:
        unit.parse_errors = 1
        return unit
    driver_taint: set[str] = set()
    toolkit_taint: set[str] = set()
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets]
            names = [e.id for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(e, ast.Name)]
            if isinstance(node.value, ast.Call) and _name(node.value.func) in VERSION_QUERIES:
                driver_taint.update(names)
            if any(isinstance(x, ast.Name) and x.id in TOOLKIT_MACROS for x in ast.walk(node.value)):
                toolkit_taint.update(names)
        elif isinstance(node, ast.Call) and _name(node.func) in VERSION_QUERIES:
            for a in node.args:
                inner = _inner(a)
                if isinstance(inner, ast.Name):
                    driver_taint.add(inner.id)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)):
            nm = _name(node)
            if nm in LEGACY_FLAGS or nm in PER_THREAD_FLAGS or nm in DEFAULT_FLAGS:
                unit.flag_uses.append((nm, node.lineno, node.col_offset + 1))
            if isinstance(node, ast.Attribute) and _SUFFIXED.match(node.attr) and node.attr not in QUERY_APIS:
                unit.suffixed_names.append((node.attr, node.lineno, node.col_offset + 1))
        if not isinstance(node, ast.Call):
            continue
        fname = _name(node.func)
        if fname in ("CFUNCTYPE", "WINFUNCTYPE"):
            parent = parents.get(node)
            applied = isinstance(parent, ast.Call) and parent.func is node
            assigned = isinstance(parent, ast.Assign)
            if applied or assigned:
                unit.handwritten_protos.append((fname, node.lineno, node.col_offset + 1))
            continue
        if fname == "getattr" and len(node.args) >= 2:
            s = _str(node.args[1])
            if s and _SUFFIXED.match(s):
                unit.suffixed_names.append((s, node.args[1].lineno, node.args[1].col_offset + 1))
        if fname not in QUERY_APIS:
            continue
        q = Query(api=fname, line=node.lineno, col=node.col_offset + 1)
        q.result_used = not isinstance(parents.get(node), ast.Expr)
        args = list(node.args)
        ctypes_form = len(args) >= 4 or fname.endswith("_v2")
        if fname == "cudaGetDriverEntryPoint":
            layout = {"symbol": 0, "flags": 1} if not ctypes_form else {"symbol": 0, "flags": 2, "status": 3}
            q.version_kind = "runtime"
        elif ctypes_form:
            layout = {"symbol": 0, "version": 2, "flags": 3, "status": 4}
            if fname == "cuGetProcAddress" and len(args) == 4:
                del layout["status"]
                q.status = "not_applicable"
        else:  # cuda.bindings: (symbol, version, flags) -> (err, pfn, status); both layers come back
            layout = {"symbol": 0, "version": 1, "flags": 2}
            q.status = "not_applicable"

        def arg(role: str) -> ast.expr | None:
            i = layout.get(role)
            if i is not None and i < len(args):
                return args[i]
            kw = {"symbol": "symbol", "version": "cudaVersion", "flags": "flags"}.get(role)
            return next((k.value for k in node.keywords if k.arg == kw), None)

        sym_node = arg("symbol")
        q.symbol = _str(sym_node)
        if sym_node is not None:
            q.symbol_line, q.symbol_col = sym_node.lineno, sym_node.col_offset + 1
        v = arg("version")
        if v is not None:
            q.version_text = ast.unparse(v)
            vnames = {x.id for x in ast.walk(v) if isinstance(x, ast.Name)} | {_name(_inner(v))}
            if isinstance(v, ast.Constant) and isinstance(v.value, int):
                q.version, q.version_kind = v.value, "literal"
            elif vnames & TOOLKIT_MACROS or vnames & toolkit_taint:
                q.version_kind = "toolkit"
            elif vnames & driver_taint or any(isinstance(x, ast.Call) and _name(x.func) in VERSION_QUERIES
                                             for x in ast.walk(v)):
                q.version_kind = "driver"
            else:
                q.version_kind = "other"
        f = arg("flags")
        q.flags_text = ast.unparse(f) if f is not None else ""
        if "status" in layout:
            st = arg("status")
            if st is None:
                q.status = "missing"
            elif isinstance(st, ast.Constant) and st.value in (None, 0):
                q.status = "null"
            else:
                q.status = "given"
        unit.queries.append(q)
    return unit
