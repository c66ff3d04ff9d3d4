"""Python front end: the `ast` module, facts out.

Recognises the two ways Python code asks for entry points by hand:
`cuda.bindings` (`driver.cuGetProcAddress(b"cuX", version, flags)`) and
ctypes (`libcuda.cuGetProcAddress_v2(b"cuX", byref(p), version, flags, byref(st))`),
functions that pass a parameter on to one of them as the symbol (wrappers, any
number of layers), hand-written `CFUNCTYPE` prototypes applied to a driver
function's pointer (not callbacks), and exported names with suffixes. Versions
are followed through module and function assignments.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

from .facts import (
    FLAG_MODES,
    QUERY_APIS,
    SUFFIXED_EXPORT_RE,
    TOOLKIT_MACROS,
    VERSION_QUERIES,
    PyProto,
    Query,
    Unit,
    flag_mode,
    suppressions,
)

__all__ = ["extract", "syntax_problem"]


_SUFFIXED = SUFFIXED_EXPORT_RE
_PROTO_MAKERS = ("CFUNCTYPE", "WINFUNCTYPE", "PYFUNCTYPE")
_DRIVER_NAME = re.compile(r"cu[A-Z]")       # a driver function (cudaMalloc is the runtime's: another library)
_LOADERS = ("CDLL", "WinDLL", "OleDLL", "PyDLL", "LoadLibrary")
_MODE_FLAGS = {"legacy": 1, "per_thread": 2, "default": 0}
_CUENTRY_METHODS = ("call", "resolve")
_CUENTRY_ENTRIES = ("required", "optional")
_TESTS = (ast.If, ast.While, ast.Assert, ast.Compare, ast.BoolOp, ast.IfExp, ast.Return, ast.Call, ast.UnaryOp,
          ast.Raise, ast.match_case, ast.Match)


def _name(node: ast.AST | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _inner(node: ast.AST) -> ast.AST:
    """byref(x) / pointer(x) / x.value / int(x) / name.encode() -> x."""
    for _ in range(32):
        if isinstance(node, ast.Call) and _name(node.func) in ("byref", "pointer", "addressof", "int", "bytes",
                                                                "c_char_p", "c_void_p") and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("encode", "decode"):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "value":
            node = node.value
        else:
            break
    return node


def _str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        v = node.value
        return v.decode("ascii", errors="replace") if isinstance(v, bytes) else v
    return None


@dataclass
class _Api:
    """Where each role of a request comes from: a positional index at the call, or a fixed expression."""

    api: str
    positions: dict[str, int]
    keywords: dict[str, str]
    fixed: dict[str, ast.expr] = field(default_factory=dict)
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    via: str = ""
    wrapped: bool = False             # a wrapper function (its own request is reported in its body)
    version_kind: str = ""
    status: str | None = None         # fixed status class, or None to read it from the call


def _base(fname: str, nargs: int) -> _Api:
    kw = {"symbol": "symbol", "version": "cudaVersion", "flags": "flags"}
    ctypes_form = nargs >= 4 or fname.endswith("_v2")
    if fname == "cudaGetDriverEntryPoint":
        pos = {"symbol": 0, "flags": 1} if not ctypes_form else {"symbol": 0, "pfn": 1, "flags": 2, "status": 3}
        return _Api(fname, pos, kw, version_kind="runtime", status=None if ctypes_form else "not_applicable")
    if ctypes_form:
        pos = {"symbol": 0, "pfn": 1, "version": 2, "flags": 3, "status": 4}
        if fname == "cuGetProcAddress" and nargs == 4:
            del pos["status"]
            return _Api(fname, pos, kw, status="not_applicable")
        return _Api(fname, pos, kw)
    # cuda.bindings: (symbol, version, flags) -> (err, pfn, status); both layers come back
    return _Api(fname, {"symbol": 0, "version": 1, "flags": 2}, kw, status="not_applicable")


class _Front:
    def __init__(self, tree: ast.Module, unit: Unit) -> None:
        self.tree, self.unit = tree, unit
        self.parents: dict[ast.AST, ast.AST] = {}
        self.scope_of: dict[ast.AST, ast.AST] = {}
        self.assigned: dict[tuple[int, str], list[ast.expr]] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.wrappers: dict[str, _Api] = {}
        self.pointer_vars: set[str] = set()
        self.protos: dict[str, tuple[str, int, int]] = {}
        self.calls: list[ast.Call] = []
        self.getters: dict[str, str] = {}     # a name bound to a getter (gpa = libcuda.cuGetProcAddress_v2)
        self.loads: dict[tuple[int, str], list[ast.Name]] = {}   # (scope, name) -> its reads
        self.pointer_query: dict[str, Query] = {}               # pointer variable -> the request that filled it
        self.handles: set[str] = set()                          # names bound to a CDLL of libcuda
        self.proto_calls: dict[str, ast.Call] = {}              # prototype name -> its CFUNCTYPE(...) call
        self.ctypes_exports: set[tuple[str, int]] = set()      # (export, line) taken from a handle

    # --- one walk: parents, scopes, assignments, functions, calls ---
    def index(self) -> None:
        stack: list[tuple[ast.AST, ast.AST]] = [(self.tree, self.tree)]
        while stack:
            node, scope = stack.pop()
            self.scope_of[node] = scope
            inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.Assign):
                self._assign(node.targets, node.value, scope)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assign([node.target], node.value, scope)
            elif isinstance(node, ast.Call):
                self.calls.append(node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault((id(scope), node.id), []).append(node)
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
                stack.append((child, inner))

    def _assign(self, targets: list[ast.expr], value: ast.expr, scope: ast.AST) -> None:
        getter = _name(value) if isinstance(value, (ast.Name, ast.Attribute)) else (
            _str(value.args[1]) or "" if isinstance(value, ast.Call) and _name(value.func) == "getattr"
            and len(value.args) >= 2 else "")
        if getter in QUERY_APIS:
            for t in targets:
                if isinstance(t, (ast.Name, ast.Attribute)) and _name(t) not in QUERY_APIS:
                    self.getters[_name(t)] = getter
        for t in targets:
            elts = t.elts if isinstance(t, ast.Tuple) else [t]
            for e in elts:
                if isinstance(e, (ast.Name, ast.Attribute)):
                    self.assigned.setdefault((id(scope), _name(e)), []).append(value)

    # --- values ---
    def kind(self, node: ast.expr, scope: ast.AST, depth: int = 0) -> tuple[str, tuple[int, ...]]:
        """(literal | toolkit | driver | param | other, pins) for a version expression."""
        if depth > 24:
            return "other", ()
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return "literal", (node.value,)
        if isinstance(node, ast.Call) and _name(node.func) in VERSION_QUERIES:
            return "driver", ()
        if isinstance(node, ast.IfExp):
            a = self.kind(node.body, scope, depth + 1)
            b = self.kind(node.orelse, scope, depth + 1)
            if "driver" in (a[0], b[0]) or "toolkit" in (a[0], b[0]):
                return ("driver" if "driver" in (a[0], b[0]) else "toolkit"), ()
            return ("literal", tuple(sorted(set(a[1] + b[1])))) if a[0] == b[0] == "literal" else ("other", ())
        if isinstance(node, ast.Call) and _name(node.func) in ("min", "max") and node.args:
            parts = [self.kind(a, scope, depth + 1) for a in node.args]
            for k in ("driver", "toolkit"):
                if any(p[0] == k for p in parts):
                    return k, ()
            return "other", ()
        inner = _inner(node)
        if isinstance(inner, (ast.Name, ast.Attribute)):
            return self._name_kind(_name(inner), scope, depth)
        return "other", ()

    def _name_kind(self, name: str, scope: ast.AST, depth: int) -> tuple[str, tuple[int, ...]]:
        if name in TOOLKIT_MACROS:
            return "toolkit", ()
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                name in [a.arg for a in scope.args.args] and (id(scope), name) not in self.assigned:
            return "param", ()
        for sc in (scope, self.tree):
            vals = self.assigned.get((id(sc), name))
            if vals:
                got = [self.kind(v, sc, depth + 1) for v in vals[:16]]
                if (id(sc), name) in self._driver_outs:
                    return "driver", ()
                for k in ("driver", "toolkit"):
                    if any(g[0] == k for g in got):
                        return k, ()
                if all(g[0] == "literal" for g in got):
                    return "literal", tuple(sorted({p for g in got for p in g[1]}))
                return "other", ()
            if (id(sc), name) in self._driver_outs:
                return "driver", ()
        return "other", ()

    _driver_outs: set[tuple[int, str]] = set()

    def driver_outs(self) -> None:
        """Names filled by a version query (`cuDriverGetVersion(byref(v))`) or unpacked from one."""
        outs: set[tuple[int, str]] = set()
        for call in self.calls:
            if _name(call.func) not in VERSION_QUERIES:
                continue
            scope = self.scope_of.get(call, self.tree)
            for a in call.args:
                inner = _inner(a)
                if isinstance(inner, ast.Name):
                    outs.add((id(scope), inner.id))
            parent = self.parents.get(call)
            if isinstance(parent, ast.Assign):
                for t in parent.targets:
                    for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                        if isinstance(e, ast.Name):
                            outs.add((id(scope), e.id))
        self._driver_outs = outs

    # --- APIs and wrappers ---
    def api_for(self, call: ast.Call) -> _Api | None:
        fname = _name(call.func)
        if fname in QUERY_APIS:
            return _base(fname, len(call.args))
        if fname in self.getters:
            api = _base(self.getters[fname], len(call.args))
            api.via = f"{fname} (bound to {self.getters[fname]})"
            return api
        return self.wrappers.get(fname)

    def find_wrappers(self) -> None:
        for _ in range(8):
            grew = False
            for call in self.calls:
                api = self.api_for(call)
                fn = self.scope_of.get(call)
                if api is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                        fn.name in self.wrappers:
                    continue
                w = self._wrapper(api, call, fn)
                if w is not None:
                    self.wrappers[fn.name] = w
                    grew = True
            if not grew:
                return

    def _wrapper(self, api: _Api, call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> _Api | None:
        params = [a.arg for a in fn.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        defaults = dict(zip(reversed(params), reversed(fn.args.defaults), strict=False))
        pos: dict[str, int] = {}
        fixed: dict[str, ast.expr] = dict(api.fixed)
        dflt: dict[str, ast.expr] = {}
        for role in ("symbol", "pfn", "version", "flags", "status"):
            node = self.arg(api, call, role)
            if node is None:
                continue
            inner = _inner(node)
            if isinstance(inner, ast.Name) and inner.id in params:
                pos[role] = params.index(inner.id)
                if inner.id in defaults:
                    dflt[role] = defaults[inner.id]
            else:
                fixed[role] = node
        if "symbol" not in pos:
            return None
        kw = {r: params[i] for r, i in pos.items()}
        return _Api(api.api, pos, kw, fixed, dflt, via=fn.name + " -> " + (api.via or api.api),
                    version_kind=api.version_kind, status="not_applicable", wrapped=True)

    def arg(self, api: _Api, call: ast.Call, role: str) -> ast.expr | None:
        i = api.positions.get(role)
        if i is not None and i < len(call.args):
            return call.args[i]
        kw = api.keywords.get(role)
        got = next((k.value for k in call.keywords if kw is not None and k.arg == kw), None)
        if got is not None:
            return got
        return api.defaults.get(role) or api.fixed.get(role)

    # --- facts ---
    def query(self, api: _Api, call: ast.Call) -> Query:
        scope = self.scope_of.get(call, self.tree)
        q = Query(api=api.api, line=call.lineno, col=call.col_offset + 1, via=api.via, wrapped=api.wrapped)
        q.result_used = api.wrapped or not isinstance(self.parents.get(call), ast.Expr)
        sym = self.arg(api, call, "symbol")
        q.symbol = _str(_inner(sym)) if sym is not None else None
        if sym is not None and q.symbol is not None and sym in ast.walk(call):
            q.symbol_line, q.symbol_col = sym.lineno, sym.col_offset + 1
        if api.version_kind:
            q.version_kind = api.version_kind
        else:
            v = self.arg(api, call, "version")
            if v is not None:
                q.version_text = ast.unparse(v)
                q.version_kind, pins = self.kind(v, scope)
                q.pins = tuple(p for p in pins if p > 0)
                q.version = q.pins[0] if len(q.pins) == 1 else None
        f = self.arg(api, call, "flags")
        q.flags_text = ast.unparse(f) if f is not None else ""
        q.flags_mode = flag_mode(_name(f) or q.flags_text) if f is not None else ""
        q.status = api.status or self._status(api, call)
        self._targets(q, api, call, scope)
        return q

    def _targets(self, q: Query, api: _Api, call: ast.Call, scope: ast.AST) -> None:
        """The variables the request's pointer lands in, and (cuda.bindings) its results never tested."""
        pfn = self.arg(api, call, "pfn")
        target = _inner(pfn) if pfn is not None else None
        if isinstance(target, ast.Name):
            self.pointer_vars.add(target.id)
            self.pointer_query[target.id] = q
        parent = self.parents.get(call)
        if isinstance(parent, ast.Assign):
            for t in parent.targets:
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(e, ast.Name):
                        self.pointer_vars.add(e.id)
                        self.pointer_query[e.id] = q
            if "pfn" not in api.positions and not api.wrapped and api.status == "not_applicable":
                q.unchecked = self._unchecked_tuple(parent, scope)

    def _unchecked_tuple(self, assign: ast.Assign, scope: ast.AST) -> tuple[str, ...]:
        """cuda.bindings returns (err, pfn[, query result]): the err and query-result names never tested."""
        t = assign.targets[0]
        if not isinstance(t, ast.Tuple) or len(t.elts) not in (2, 3):
            return ()
        out = []
        for i in (0, 2)[:len(t.elts) - 1]:
            e = t.elts[i]
            role = "the CUresult" if i == 0 else "the query result"
            if not isinstance(e, ast.Name) or e.id == "_":
                out.append(f"{ast.unparse(e)} ({role}, discarded)")
            elif not self._tested_after(e.id, scope, assign):
                out.append(f"{e.id} ({role})")
        return tuple(out)

    def _tested_after(self, name: str, scope: ast.AST, after: ast.stmt) -> bool:
        """Whether `name` is read after `after` in a test, comparison, return or call argument."""
        end = (after.end_lineno or after.lineno, after.end_col_offset or 0)
        for n in self.loads.get((id(scope), name), ()):
            if (n.lineno, n.col_offset) <= end:
                continue
            p: ast.AST | None = self.parents.get(n)
            for _ in range(32):
                if p is None or isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                    break
                if isinstance(p, _TESTS):
                    return True
                p = self.parents.get(p)
        return False

    def _status(self, api: _Api, call: ast.Call) -> str:
        st = self.arg(api, call, "status")
        if st is None:
            return "missing"
        if isinstance(st, ast.Constant) and st.value in (None, 0):
            return "null"
        return "given"

    def names(self) -> None:
        seen: set[tuple[str, int]] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Name, ast.Attribute)):
                nm = _name(node)
                if nm in FLAG_MODES and not isinstance(node.ctx, ast.Store):   # a definition is not a use
                    self.unit.flag_uses.append((nm, node.lineno, node.col_offset + 1))
                if isinstance(node, ast.Attribute) and _SUFFIXED.match(node.attr) and node.attr not in QUERY_APIS \
                        and (node.attr, node.lineno) not in seen | self.ctypes_exports:
                    seen.add((node.attr, node.lineno))
                    self._named_export(node.attr, node)
            elif isinstance(node, ast.Call) and _name(node.func) == "getattr" and len(node.args) >= 2:
                s = _str(node.args[1])
                if s and _SUFFIXED.match(s) and s not in QUERY_APIS and (s, node.lineno) not in self.ctypes_exports:
                    self._named_export(s, node.args[1])

    def _named_export(self, name: str, node: ast.expr) -> None:
        """A suffixed driver name taken as an attribute (`cuda.cuMemAlloc_v2`): an export named by its
        exported name, judged like a dlsym of it (a real export binds its own ABI; a made-up one never
        resolves)."""
        self.unit.py_protos.append(PyProto("attribute", node.lineno, node.col_offset + 1, export=name,
                                           handle=_name(getattr(node, "value", None))))

    def prototypes(self) -> None:
        """CFUNCTYPE prototypes applied to a driver function's pointer (not to Python callbacks)."""
        for call in self.calls:
            if _name(call.func) in _PROTO_MAKERS:
                parent = self.parents.get(call)
                if isinstance(parent, ast.Assign):
                    for t in parent.targets:
                        if isinstance(t, (ast.Name, ast.Attribute)):
                            self.protos[_name(t)] = (_name(call.func), call.lineno, call.col_offset + 1)
                            self.proto_calls[_name(t)] = call
        for call in self.calls:
            proto = self._proto_applied(call)
            if proto is None:
                continue
            what, why = proto
            judged = self._judged_proto(call, what)
            if judged is not None:
                self.unit.py_protos.append(judged)
            else:
                self.unit.handwritten_protos.append((what, call.lineno, call.col_offset + 1, why))

    def _judged_proto(self, call: ast.Call, what: str) -> PyProto | None:
        """The prototype applied here as a PyProto, when both it and the request it is applied to are known
        (then it is judged against the ABI the request binds instead of reported as hand-written)."""
        maker = call.func if isinstance(call.func, ast.Call) else self.proto_calls.get(what)
        ptr = _inner(call.args[0]) if call.args else None
        q = self.pointer_query.get(ptr.id) if isinstance(ptr, ast.Name) else None
        if maker is None or q is None or q.symbol is None or q.version is None or not maker.args:
            return None
        classes = tuple(self.ctypes_class(a) for a in maker.args)
        flags = _MODE_FLAGS.get(q.flags_mode) if q.flags_mode else None
        return PyProto(what, call.lineno, call.col_offset + 1, symbol=q.symbol, version=q.version, flags=flags,
                       api=q.api, args=classes[1:], restype=classes[0])

    def ctypes_class(self, node: ast.expr, depth: int = 0) -> str | None:
        """How a ctypes type expression passes a value (module aliases followed: CUdeviceptr = c_uint64)."""
        from .pyabi import ctypes_class

        if isinstance(node, ast.Constant) and node.value is None:
            return "void"
        if isinstance(node, ast.Call) and _name(node.func) in ("POINTER", "CFUNCTYPE", "WINFUNCTYPE"):
            return "ptr"
        if not isinstance(node, (ast.Name, ast.Attribute)) or depth > 8:
            return None
        got = ctypes_class(_name(node))
        if got is not None:
            return got
        vals = self.assigned.get((id(self.tree), _name(node)))
        return self.ctypes_class(vals[-1], depth + 1) if vals else None

    # --- ctypes exports of libcuda: lib.cuX with argtypes/restype ---
    def find_handles(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and _is_loader(node.value):
                for t in node.targets:
                    if isinstance(t, (ast.Name, ast.Attribute)):
                        self.handles.add(_name(t))

    def export_of(self, node: ast.AST) -> tuple[str, str] | None:
        """(export name, handle) when `node` takes a function from a libcuda handle by name."""
        if isinstance(node, ast.Attribute) and _DRIVER_NAME.match(node.attr) and (
                _name(node.value) in self.handles or _is_loader(node.value)):
            return node.attr, _name(node.value) if _name(node.value) in self.handles else "CDLL(...)"
        if isinstance(node, ast.Subscript) and _name(node.value) in self.handles:
            s = _str(node.slice)
            return (s, _name(node.value)) if s and _DRIVER_NAME.match(s) else None
        if isinstance(node, ast.Call) and _name(node.func) == "getattr" and len(node.args) >= 2 and \
                _name(node.args[0]) in self.handles:
            s = _str(node.args[1])
            return (s, _name(node.args[0])) if s and _DRIVER_NAME.match(s) else None
        return None

    def ctypes_prototypes(self) -> None:
        """One PyProto per export taken from a libcuda handle, with the argtypes/restype set on it."""
        if not self.handles:
            return
        bound: dict[str, tuple[str, str, ast.AST]] = {}     # variable -> (export, handle, where it was taken)
        sites: dict[tuple[str, str], tuple[str, str, ast.AST]] = {}
        for node in ast.walk(self.tree):
            got = self.export_of(node)
            if got is not None:
                sites.setdefault(got, (*got, node))
                self.ctypes_exports.add((got[0], getattr(node, "lineno", 0)))
            if isinstance(node, ast.Assign) and (got := self.export_of(node.value)) is not None:
                for t in node.targets:
                    if isinstance(t, (ast.Name, ast.Attribute)):
                        bound[_name(t)] = (*got, node.value)
        protos: dict[tuple[str, str], dict[str, ast.expr]] = {}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr in ("argtypes", "restype")):
                continue
            owner = node.targets[0].value
            got = self.export_of(owner)
            key = got if got is not None else (bound[_name(owner)][:2] if _name(owner) in bound else None)
            if key is not None:
                protos.setdefault(key, {})[node.targets[0].attr] = node.value
        for key, (export, handle, where) in sites.items():
            self.unit.py_protos.append(self._export_proto(export, handle, where, protos.get(key, {})))

    def _export_proto(self, export: str, handle: str, where: ast.AST, proto: dict[str, ast.expr]) -> PyProto:
        args = proto.get("argtypes")
        classes = tuple(self.ctypes_class(a) for a in args.elts) if isinstance(args, (ast.List, ast.Tuple)) else None
        res = proto.get("restype")
        return PyProto("ctypes argtypes", getattr(where, "lineno", 0), getattr(where, "col_offset", 0) + 1,
                       export=export, handle=handle, args=classes,
                       restype=self.ctypes_class(res) if res is not None else None)

    # --- cffi: ffi.cdef("CUresult cuX(...);") with lib = ffi.dlopen("libcuda.so.1") ---
    def cffi_prototypes(self) -> None:
        """Each driver function a cdef declares, when the file dlopens libcuda through cffi."""
        opens = any(_name(c.func) == "dlopen" and isinstance(c.func, ast.Attribute) and c.args
                    and _names_cuda(c.args[0]) for c in self.calls)
        if not opens:
            return
        for call in self.calls:
            if _name(call.func) != "cdef" or not call.args or _str(call.args[0]) is None:
                continue
            text = _C_COMMENT.sub(" ", (_str(call.args[0]) or "")[:_CDEF_LIMIT])
            typedefs = tuple((m.group(2), m.group(1).strip()) for m in _C_TYPEDEF.finditer(text))
            for m in _C_DECL.finditer(text):
                head = text[max(0, m.start() - 200):m.start()]       # the return type: back to ; } or a newline
                ret = re.split(r"[;}\n]", head)[-1].strip()
                params = [p.strip() for p in m.group(2).split(",") if p.strip() and p.strip() != "void"]
                self.unit.py_protos.append(PyProto(
                    "cffi cdef", call.lineno, call.col_offset + 1, export=m.group(1), handle="ffi.dlopen",
                    c_args=tuple(_c_param_type(p) for p in params), c_ret=ret, c_typedefs=typedefs))

    # --- cuentry's own API: Driver.call / resolve, required() / optional() ---
    def cuentry_requests(self) -> None:
        if not any(isinstance(n, (ast.Import, ast.ImportFrom)) and "cuentry" in ast.unparse(n)
                   for n in self.tree.body):
            return
        for call in self.calls:
            q = self._cuentry_query(call)
            if q is not None:
                self.unit.queries.append(q)

    def _cuentry_query(self, call: ast.Call) -> Query | None:
        fname = _name(call.func)
        method = fname in _CUENTRY_METHODS and isinstance(call.func, ast.Attribute)
        if not (method or fname in _CUENTRY_ENTRIES) or not call.args:
            return None
        sym = _str(call.args[0])
        if sym is None or not sym.startswith("cu"):
            return None
        q = Query(api="cuGetProcAddress_v2", line=call.lineno, col=call.col_offset + 1, symbol=sym,
                  symbol_line=call.args[0].lineno, symbol_col=call.args[0].col_offset + 1,
                  via=f"cuentry {fname}()", status="not_applicable")
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        ver = call.args[1] if len(call.args) > 1 else kw.get("version")
        if ver is not None:
            q.version_text = ast.unparse(ver)
            q.version_kind, pins = self.kind(ver, self.scope_of.get(call, self.tree))
            q.pins = tuple(p for p in pins if p > 0)
            q.version = q.pins[0] if len(q.pins) == 1 else None
        if method:
            _cuentry_stream(q, call.args[2] if len(call.args) > 2 else kw.get("stream"), fname)
        return q

    def _proto_applied(self, call: ast.Call) -> tuple[str, str] | None:
        fn = call.func
        if isinstance(fn, ast.Call) and _name(fn.func) in _PROTO_MAKERS:
            what = _name(fn.func)
        elif _name(fn) in self.protos and isinstance(fn, (ast.Name, ast.Attribute)):
            what = _name(fn)
        elif _name(fn) == "cast" and len(call.args) == 2 and _name(call.args[1]) in self.protos:
            return self._driver_arg(call.args[0], _name(call.args[1]))
        else:
            return None
        return self._driver_arg(call.args[0], what) if call.args else None

    def _driver_arg(self, arg: ast.expr, what: str) -> tuple[str, str] | None:
        inner = _inner(arg)
        if isinstance(inner, ast.Tuple) and inner.elts:
            s = _str(inner.elts[0])
            if s and s.startswith("cu"):
                return what, f"for {s}"
        if isinstance(inner, ast.Name) and inner.id in self.pointer_vars:
            return what, f"applied to {inner.id}, a pointer from an entry-point request"
        if isinstance(inner, ast.Call) and self.api_for(inner) is not None:
            return what, "applied to the pointer of an entry-point request"
        return None


_C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_CDEF_LIMIT = 1 << 20     # the part of a cdef string that is read
_C_TYPEDEF = re.compile(r"\btypedef[ \t\n]+([^;{}()]{1,200}?)[ \t\n]*\b([A-Za-z_]\w*)[ \t\n]*;")
_C_DECL = re.compile(r"\b(cu[A-Z]\w*)[ \t\n]*\(([^;{}()]{0,2000})\)[ \t\n]*;")


def _c_param_type(decl: str) -> str:
    """The type of a C parameter declaration (`CUdeviceptr *dptr` -> `CUdeviceptr *`)."""
    words = decl.replace("*", " * ").split()
    if len(words) >= 2 and words[-1] != "*" and re.match(r"[A-Za-z_]\w*$", words[-1]) and \
            words[-1] not in ("int", "long", "short", "char", "unsigned", "signed", "float", "double"):
        words = words[:-1]          # drop the parameter's name
    return " ".join(words)


def _cuentry_stream(q: Query, stream: ast.expr | None, method: str) -> None:
    """The stream mode of a cuentry call: `call` defaults to legacy; `resolve` has no default."""
    text = _str(stream) if stream is not None else ("legacy" if method == "call" else None)
    q.flags_text = f"stream={text!r}" if text else "no stream"
    q.flags_mode = text if text in ("legacy", "per_thread") else ""


def _is_loader(node: ast.expr) -> bool:
    """`CDLL("libcuda.so.1")` and the like, written in place."""
    return isinstance(node, ast.Call) and _name(node.func) in _LOADERS and bool(node.args) and _names_cuda(node.args[0])


def _names_cuda(node: ast.expr) -> bool:
    """Whether a library-loading argument names the CUDA driver (`"libcuda.so.1"`, `find_library("cuda")`)."""
    s = _str(node)
    if s is None and isinstance(node, ast.Call) and node.args:
        s = _str(node.args[0]) if _name(node.func) == "find_library" else None
    if s is None and isinstance(node, ast.IfExp):
        return _names_cuda(node.body) or _names_cuda(node.orelse)
    low = (s or "").lower()
    return low in ("cuda", "nvcuda") or "libcuda" in low or "nvcuda" in low


def _parse(text: str, path: str) -> tuple[ast.Module | None, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # a SyntaxWarning of the linted file is not ours to print
            return ast.parse(text, filename=path), ""
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        return None, f"not valid Python{f' (line {line})' if line else ''}: {getattr(exc, 'msg', exc)}"
    except (RecursionError, MemoryError):
        return None, "nested too deeply for Python's parser"


def syntax_problem(text: str, path: str) -> str:
    """Why a Python file does not parse ('' when it does): files with nothing to lint are still checked."""
    return _parse(text, path)[1]


def extract(text: str, path: str) -> Unit:
    """Parse one Python file into facts (a file that does not parse is a problem, reported)."""
    unit = Unit(path=path, lang="python", suppressions=suppressions(text), lines=text.count("\n") + 1,
                engine="ast")
    tree, unit.problem = _parse(text, path)
    if tree is None:
        unit.parse_errors = 1
        return unit
    fr = _Front(tree, unit)
    fr.index()
    fr.driver_outs()
    fr.find_wrappers()
    for call in fr.calls:
        api = fr.api_for(call)
        if api is not None:
            unit.queries.append(fr.query(api, call))
    fr.cuentry_requests()
    fr.cffi_prototypes()
    fr.find_handles()
    fr.ctypes_prototypes()
    fr.names()
    fr.prototypes()
    unit.queries.sort(key=lambda q: (q.line, q.col))
    return unit
