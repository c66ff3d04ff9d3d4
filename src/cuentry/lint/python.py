"""Python front end: a small abstract interpreter over `ast`, facts out.

Python code reaches the driver in three ways: a ctypes handle of libcuda whose exports it
prototypes (`lib.cuMemAlloc_v2.argtypes = [...]`) or calls, a cffi `cdef` with `ffi.dlopen`, and
entry-point requests (`driver.cuGetProcAddress(b"cuX", version, flags)` of cuda.bindings,
`libcuda.cuGetProcAddress_v2(...)` through ctypes). However the code spells them, the same
facts decide: which export or ABI is bound (the name, the version, the flags), how each
argument is passed, and whether the result is tested. So this module does not match shapes: it
runs the file abstractly and lets values say what happens.

Values (strings, numbers, sequences and dictionaries of them, the driver's
or the runtime's version, library handles, exports taken from them, ctypes types and objects,
pointers returned by requests, functions, classes and instances) flow through assignments,
module globals, class attributes, loops over constant sequences (the body runs once per
element), f-strings and concatenations that fold, `try`/`except` around loads, and calls: a
function is evaluated again for each call with the values its arguments have there (its summary
in that context), and a function that looks a parameter up in a constant dictionary is evaluated
once per key. Modules imported from the same project (relative imports, or a package found
above the file) are read for their module-level values. The interpreter is bounded (depth,
sizes of value sets, steps); what it cannot follow is unknown, and a request whose symbol is
unknown is listed as not judged, with why.

What the run observed becomes facts ([Query][cuentry.lint.facts.Query],
[PyProto][cuentry.lint.facts.PyProto]): the rules and the catalog judge them, as for C.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..names import DRIVER_NAME_PATTERN, FLAGS
from .facts import FLAG_MODES, QUERY_APIS, SUFFIXED_EXPORT_RE, TOOLKIT_MACROS, PyProto, Query, Unit, flag_mode, suppressions
from .pyabi import CTYPES_FUNCTIONS, ctypes_class, ctypes_width, is_ctypes_type

__all__ = ["extract", "syntax_problem"]


# ---------------------------------------------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------------------------------------------

_Site = tuple[str, int, int]          # (file, line, column) where a value was made
_NOWHERE: _Site = ("", 0, 0)


class _V:
    """An abstract value (every subclass is a frozen dataclass: hashable, compared by fields)."""

    __slots__ = ()


@dataclass(frozen=True)
class _Top(_V):
    """A value the interpreter cannot tell."""


@dataclass(frozen=True)
class _Str(_V):
    """A str or bytes constant, with the place its literal is written (reports point there)."""

    s: str
    at: _Site = _NOWHERE


@dataclass(frozen=True)
class _Tail(_V):
    """A string known only by its end (`os.path.join(d, "libcuda.so")`)."""

    s: str


@dataclass(frozen=True)
class _Num(_V):
    """An int, float, bool or None constant."""

    n: object


@dataclass(frozen=True)
class _Seq(_V):
    """A tuple or list: its items when their number is known, and the union of them."""

    items: tuple[frozenset[_V], ...] | None
    elems: frozenset[_V]


@dataclass(frozen=True)
class _Map(_V):
    """A dictionary with constant keys."""

    items: tuple[tuple[_V, frozenset[_V]], ...]


@dataclass(frozen=True)
class _Ver(_V):
    """The driver's version (cuDriverGetVersion), the runtime's, or the toolkit's macro."""

    kind: str                        # driver | runtime | toolkit


@dataclass(frozen=True)
class _Lib(_V):
    """A library handle (a ctypes CDLL/WinDLL/LoadLibrary, or cffi's dlopen)."""

    names: frozenset[str]            # the names it may be loaded by ('' for a name not known)
    cuda: bool | None                # whether it is the CUDA driver (None: its name is not known)
    platforms: frozenset[str]        # linux / windows
    site: _Site
    cffi: bool = False


@dataclass(frozen=True)
class _Export(_V):
    """A function taken from a library handle by its exported name."""

    name: str
    lib: _Lib
    at: _Site = _NOWHERE               # where the name's literal is written
    copy: _Site = _NOWHERE             # lib[name] makes a new function object each time: where
    optional: bool = False           # taken where its absence is handled (try/except, getattr's default, hasattr)


@dataclass(frozen=True)
class _CT(_V):
    """A ctypes type: a scalar (by its ctypes name), a pointer to a type, a struct, an array, a function type."""

    kind: str                        # scalar | ptr | struct | array | fn | void
    name: str = ""
    to: _CT | None = None             # ptr/array: the type pointed to
    sig: tuple[_CT | None, ...] = ()  # fn: restype, then the argtypes


@dataclass(frozen=True)
class _Obj(_V):
    """An instance of a ctypes type, known by where it was made (its content is kept apart)."""

    ct: _CT
    site: _Site


@dataclass(frozen=True)
class _Ref(_V):
    """A pointer to a ctypes object: byref(x), pointer(x), addressof(x)."""

    to: _Obj


@dataclass(frozen=True)
class _ProcPtr(_V):
    """The function pointer an entry-point request returned."""

    req: int                         # the request's index


@dataclass(frozen=True)
class _Typed(_V):
    """A CFUNCTYPE prototype applied to a pointer."""

    proto: _CT
    target: frozenset[_V]


@dataclass(frozen=True)
class _Func(_V):
    """A Python function (or lambda), with the module it is defined in and its defaults."""

    node: ast.AST
    mod: int
    defaults: tuple[frozenset[_V], ...] = ()
    kw_defaults: tuple[tuple[str, frozenset[_V]], ...] = ()
    owner: ast.ClassDef | None = None


@dataclass(frozen=True)
class _Bound(_V):
    """A method bound to its object."""

    func: _Func
    self_: _V


@dataclass(frozen=True)
class _Cls(_V):
    """A class defined in an analysed module."""

    node: ast.ClassDef
    mod: int


@dataclass(frozen=True)
class _Inst(_V):
    """An instance of a class of an analysed module (its attributes are kept per class)."""

    node: ast.ClassDef


@dataclass(frozen=True)
class _Mod(_V):
    """A module: a known one by its dotted name, or an analysed file by its index."""

    name: str
    index: int = -1


@dataclass(frozen=True)
class _Lazy(_V):
    """A name imported from a project module, read on its first use (most imported names are never used)."""

    dotted: str
    level: int
    mod: int                         # the importing module
    attr: str                        # '' for the module itself


@dataclass(frozen=True)
class _Builtin(_V):
    """A callable the interpreter knows: a builtin, a function of ctypes, cffi, os.path, cuda.bindings ..."""

    name: str


@dataclass(frozen=True)
class _Method(_V):
    """A method of a known value (str.encode, dict.items, ffi.cdef ...)."""

    name: str
    of: _V


@dataclass(frozen=True)
class _Ffi(_V):
    """A cffi FFI object."""

    site: _Site


_VS = frozenset[_V]
_TOP: _VS = frozenset({_Top()})
_EMPTY: _VS = frozenset()
_CAP = 48                   # values a set keeps before it is unknown
_UNROLL = 2048              # elements of a constant sequence a loop is run for, one by one
_DEPTH = 8                  # nested calls followed
_STEPS = 200_000            # nodes evaluated per pass
_IMPORT_STEPS = 200_000     # nodes evaluated reading the modules a file imports, all of them
_IMPORTS = 64               # project modules read for one file
_IMPORT_BYTES = 4 << 20     # the largest module read
_DRIVER_NAME = re.compile(DRIVER_NAME_PATTERN + "$")
_CUDA_LIBRARY = re.compile(r"(?:lib)?cuda(?:\.so(?:\.\d+)*|\.dylib)?|nvcuda(?:\.dll)?", re.I)
"""The CUDA driver library (`names.DRIVER_LIBRARY`) as a file or library name may spell it, without a directory:
libcuda.so.1, libcuda.dylib, nvcuda.dll, `cuda` (find_library's and cupy's short name); libcudart is not it."""
_VERSION_QUERY = {"cuDriverGetVersion": "driver", "cudaDriverGetVersion": "driver", "cudaRuntimeGetVersion": "runtime"}
_BINDINGS = ("cuda.bindings.driver", "cuda.cuda", "cuda.bindings.runtime", "cuda.cudart")
_LOADERS = {"CDLL", "WinDLL", "OleDLL", "PyDLL", "LoadLibrary", "dlopen", "LoadLibraryEx"}


class _Budget(Exception):
    """The interpreter ran out of steps (the file is judged on what it saw)."""


class _ImportBudget(Exception):
    """Reading the project's modules ran out of steps (what they defined so far is what is known of them)."""


def _vs(*values: _V) -> _VS:
    return frozenset(values)


def _union(*sets: Iterable[_V]) -> _VS:
    """The union of value sets, with handles of one load merged; unknown beyond `_CAP` values."""
    a, b = (sets[0], sets[1]) if len(sets) == 2 else (None, None)
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        if a is b or b <= a:
            return a if len(a) <= _CAP else _TOP
        if a <= b:
            return b if len(b) <= _CAP else _TOP
    out: set[_V] = set()
    for s in sets:
        out.update(s)
    if len(out) > _CAP:
        return _TOP
    libs = [v for v in out if isinstance(v, _Lib)]
    if len(libs) > 1 and len({v.site for v in libs}) < len(libs):
        out = {v for v in out if not isinstance(v, _Lib)} | set(_merge_libs(libs))
    return frozenset(out)


def _merge_libs(libs: list[_Lib]) -> Iterator[_Lib]:
    by: dict[_Site, list[_Lib]] = {}
    for lib in libs:
        by.setdefault(lib.site, []).append(lib)
    for site, same in by.items():
        names = frozenset().union(*(x.names for x in same))
        cuda = True if any(x.cuda for x in same) else None if any(x.cuda is None for x in same) else False
        yield _Lib(names, cuda, frozenset().union(*(x.platforms for x in same)), site, any(x.cffi for x in same))


def _strings(values: _VS) -> list[str] | None:
    """The strings of a set, or None when one of its values is not a known string."""
    out = [v.s for v in values if isinstance(v, _Str)]
    return out if len(out) == len(values) and out else None


def _names_cuda(name: str) -> bool:
    """Whether a library name or path names the CUDA driver."""
    base = re.split(r"[/\\]", name)[-1]
    return _CUDA_LIBRARY.fullmatch(base) is not None


def _lib_of(names: _VS, site: _Site, loader: str = "") -> _Lib:
    """The handle a load of one of these names makes."""
    known = {v.s for v in names if isinstance(v, (_Str, _Tail))}
    unknown = any(not isinstance(v, (_Str, _Tail)) or not v.s for v in names if not isinstance(v, _Num))
    cuda: bool | None = True if any(_names_cuda(n) for n in known) else (None if unknown or not known else False)
    plats = {"windows" if n.lower().endswith(".dll") else "linux" for n in known if "." in re.split(r"[/\\]", n)[-1]}
    if loader in ("WinDLL", "OleDLL", "windll", "oledll"):
        plats = {"windows"}
    elif not plats or unknown:
        plats |= {"linux", "windows"}
    return _Lib(frozenset(known | ({""} if unknown else set())), cuda, frozenset(plats), site)


# ---------------------------------------------------------------------------------------------------------------
# What the run observed
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _Request:
    """One entry-point request: a call of cuGetProcAddress(_v2) or cudaGetDriverEntryPoint(ByVersion)."""

    api: str
    node: ast.Call
    where: _Site                      # where it is reported (the call, or the wrapper's call that named the symbol)
    via: str
    symbol: _VS
    version: _VS
    flags: _VS
    status: str
    form: str                        # bindings | ctypes


@dataclass
class _Store:
    """argtypes/restype set on an export (or a CFUNCTYPE applied to one, or a call of one)."""

    kind: str                        # argtypes | restype | call | take
    where: _Site
    exports: _VS
    value: Any                       # argtypes/restype: the values; call: the argument value sets


@dataclass
class _Applied:
    """A CFUNCTYPE prototype applied to what an entry-point request returned."""

    where: _Site
    proto: _CT
    reqs: tuple[int, ...]
    what: str


@dataclass
class _Seen:
    requests: list[_Request] = field(default_factory=list)
    stores: list[_Store] = field(default_factory=list)
    applied: list[_Applied] = field(default_factory=list)
    cdefs: dict[_Site, list[tuple[_Site, _VS]]] = field(default_factory=dict)      # ffi -> its cdefs
    dlopens: dict[_Site, list[_Lib]] = field(default_factory=dict)                # ffi -> its handles
    unjudged: list[tuple[int, str]] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _Module:
    path: str
    tree: ast.Module
    env: dict[str, _VS]
    index: int
    package: str                     # the directory a relative import starts from


@dataclass
class _Frame:
    mod: _Module
    env: dict[str, _VS]
    func: _Func | None = None
    call: ast.Call | None = None
    parent: _Frame | None = None
    globals_: frozenset[str] = frozenset()
    local_names: frozenset[str] = frozenset()
    closure: dict[str, _VS] | None = None
    overrides: dict[str, _VS] = field(default_factory=dict)      # "self.attr" bound by a refinement
    returns: set[_V] = field(default_factory=set)
    breaks: list[dict[str, _VS]] = field(default_factory=list)
    continues: list[dict[str, _VS]] = field(default_factory=list)
    depth: int = 0


_Env = dict[str, _VS] | None          # None: no path reaches here


def _join(*envs: _Env) -> _Env:
    live = [e for e in envs if e is not None]
    if not live:
        return None
    out = dict(live[0])
    for e in live[1:]:
        for k, v in e.items():
            cur = out.get(k)
            if cur is None:
                out[k] = v
            elif cur is not v:
                out[k] = _union(cur, v)
    return out


def _assigned_names(node: ast.AST) -> frozenset[str]:
    """The names a function body assigns (its locals), not looking into nested functions or classes."""
    out: set[str] = set()
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        elif isinstance(n, ast.Lambda):
            continue
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        stack.extend(ast.iter_child_nodes(n))
    return frozenset(out)


def _global_names(node: ast.AST) -> frozenset[str]:
    out: set[str] = set()
    for n in _own_nodes(node):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return frozenset(out)


def _params(fn: ast.AST) -> ast.arguments:
    assert isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    return fn.args


class _Interp:
    """Runs a file (and the project modules it imports) abstractly, recording what it observes."""

    def __init__(self, path: str, read: Callable[[str], str] | None) -> None:
        self.path = path
        self.read = read
        self.modules: list[_Module] = []
        self.by_path: dict[str, int] = {}
        self.attrs: dict[ast.ClassDef, dict[str, _VS]] = {}      # class attributes (body and stores through self)
        self.heap: dict[_Site, _VS] = {}                          # the content of ctypes objects (x.value)
        self.lib_attrs: dict[_Site, dict[str, _VS]] = {}          # attributes stored on a handle
        self.proto_of: dict[tuple[str, _Site, _Site, str], _VS] = {}  # (export, lib, copy, argtypes|restype)
        self.seen = _Seen()
        self.recording = False
        self.steps = 0
        self.memo: dict[tuple[Any, ...], _VS] = {}
        self.active: dict[ast.AST, int] = {}
        self.refine_cache: dict[ast.AST, tuple[tuple[str, ast.expr], ...]] = {}
        self.ran: set[ast.AST] = set()
        self.closures: dict[ast.AST, dict[str, _VS]] = {}        # a nested function -> the scope it was defined in
        self.owners: dict[ast.AST, ast.ClassDef] = {}           # a method -> its class
        self.guarded: dict[int, frozenset[ast.AST]] = {}        # module -> the nodes where a missing export is handled
        self.locals_cache: dict[ast.AST, frozenset[str]] = {}
        self.globals_cache: dict[ast.AST, frozenset[str]] = {}
        self.importing = 0                                      # modules being read (their steps count apart)
        self.import_steps = 0
        self.notes: set[str] = set()
        self.note = ""

    # --- modules ---
    def load_main(self, tree: ast.Module) -> _Module:
        mod = _Module(self.path, tree, {}, 0, os.path.dirname(self.path))
        self.modules.append(mod)
        self.by_path[os.path.abspath(self.path)] = 0
        return mod

    def run(self, main: _Module) -> None:
        """Two passes: the first learns the stores that later reads depend on (class attributes, handles, ctypes
        objects), the second records what happens, with what the first learnt as a start."""
        for recording in (False, True):
            self.recording = recording
            self.steps = 0
            self.memo.clear()
            self.ran.clear()
            main.env.clear()
            if recording:
                self.seen = _Seen()
            try:
                self.exec_scope(main.tree.body, _Frame(main, main.env))
                self.entry_runs(main)
            except _Budget:
                self.note = "the analysis reached its step limit: what came after it is not judged"
            except RecursionError:
                self.note = "nested too deeply for the analysis: what came after it is not judged"

    def entry_runs(self, mod: _Module) -> None:
        """Each function or method of the file not run from its module code, once, with unknown arguments: first
        those no code of the file calls by name (the entry points), then whatever is still not run."""
        called: set[str] = set()
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Call):
                called.add(_name_of(node.func))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(node)
            elif isinstance(node, ast.ClassDef):
                for f in node.body:
                    self.owners[f] = node
        for late in (False, True):
            for node in functions:
                if node in self.ran or (node.name in called) != late:
                    continue
                owner = self.owners.get(node)
                fn = self.func_value(node, mod, owner)
                self_v: _VS = _vs(_Inst(owner)) if owner is not None and not self.is_static(node) else _EMPTY
                if owner is not None and self.is_classmethod(node):
                    self_v = _vs(_Cls(owner, mod.index))
                self.call_function(fn, [], {}, None, None, self_v, entry=True)

    @staticmethod
    def is_static(fn: ast.AST) -> bool:
        return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                   for d in getattr(fn, "decorator_list", ()))

    @staticmethod
    def is_classmethod(fn: ast.AST) -> bool:
        return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in getattr(fn, "decorator_list", ()))

    def func_value(self, node: ast.AST, mod: _Module, owner: ast.ClassDef | None) -> _Func:
        args = _params(node)
        defaults = tuple(self.quick(d, mod) for d in args.defaults)
        kw = tuple((a.arg, self.quick(d, mod)) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                   if d is not None)
        return _Func(node, mod.index, defaults, kw, owner)

    def quick(self, expr: ast.expr, mod: _Module) -> _VS:
        """A default's value, evaluated in its module (a constant, mostly)."""
        return self.eval(expr, _Frame(mod, mod.env))

    def import_module(self, dotted: str, level: int, here: _Module) -> _Module | None:
        """A project module imported by `here`: found beside it (relative) or in a package above it."""
        if self.read is None or (not level and dotted.split(".")[0] in _STDLIB):
            return None
        path = self.find_module(dotted, level, here)
        if path is None:
            return None
        key = os.path.abspath(path)
        if key in self.by_path:
            return self.modules[self.by_path[key]]
        if len(self.modules) >= _IMPORTS:
            return None
        try:
            text = self.read(path)
            tree = _parse(text, path)[0]
        except (OSError, ValueError):
            return None
        if tree is None:
            return None
        mod = _Module(path, tree, {}, len(self.modules), os.path.dirname(path))
        self.modules.append(mod)
        self.by_path[key] = mod.index
        self.importing += 1
        try:
            self.exec_scope(tree.body, _Frame(mod, mod.env))
        except (RecursionError, _ImportBudget):
            pass                             # what it defined so far is what is known of it
        finally:
            self.importing -= 1
        return mod

    def find_module(self, dotted: str, level: int, here: _Module) -> str | None:
        parts = [p for p in dotted.split(".") if p]
        if level:
            base = here.package
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return _module_file(os.path.join(base, *parts)) if parts else _module_file(base)
        base = here.package
        for _ in range(8):                        # a package of the project, found above the file
            got = _module_file(os.path.join(base, *parts))
            if got is not None:
                return got
            up = os.path.dirname(base)
            if up == base:
                break
            base = up
        return None

    # --- statements ---
    def tick(self) -> None:
        if self.importing:
            self.import_steps += 1
            if self.import_steps > _IMPORT_STEPS:
                raise _ImportBudget
            return
        self.steps += 1
        if self.steps > _STEPS:
            raise _Budget

    def exec_block(self, body: Sequence[ast.stmt], frame: _Frame, env: _Env) -> _Env:
        for stmt in body:
            if env is None:
                return None
            self.tick()
            env = self.exec_stmt(stmt, frame, env)
        return env

    def exec_scope(self, body: Sequence[ast.stmt], frame: _Frame) -> None:
        """A module's or a class's body: its one dictionary of names stays the one that functions read."""
        for stmt in body:
            self.tick()
            new = self.exec_stmt(stmt, frame, frame.env)
            if new is None:
                return
            if new is not frame.env:
                frame.env.clear()
                frame.env.update(new)

    def exec_stmt(self, stmt: ast.stmt, frame: _Frame, env: dict[str, _VS]) -> _Env:
        handler = _STATEMENTS.get(type(stmt))
        if handler is not None:
            return handler(self, stmt, frame, env)
        for child in ast.iter_child_nodes(stmt):          # anything else: its expressions, for their effects
            if isinstance(child, ast.expr):
                self.eval(child, frame, env)
        return env

    def s_expr(self, stmt: ast.Expr, frame: _Frame, env: dict[str, _VS]) -> _Env:
        self.eval(stmt.value, frame, env)
        return env

    def s_assign(self, stmt: ast.Assign, frame: _Frame, env: dict[str, _VS]) -> _Env:
        value = self.eval(stmt.value, frame, env)
        for target in stmt.targets:
            self.assign(target, value, frame, env, stmt)
        return env

    def s_annassign(self, stmt: ast.AnnAssign, frame: _Frame, env: dict[str, _VS]) -> _Env:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, frame, env), frame, env, stmt)
        return env

    def s_augassign(self, stmt: ast.AugAssign, frame: _Frame, env: dict[str, _VS]) -> _Env:
        load = _as_load(stmt.target)
        value = self.binop(stmt.op, self.eval(load, frame, env), self.eval(stmt.value, frame, env)) \
            if load is not None else _TOP
        self.assign(stmt.target, value, frame, env, stmt)
        return env

    def s_if(self, stmt: ast.If, frame: _Frame, env: dict[str, _VS]) -> _Env:
        truth = self.truth(stmt.test, frame, env)
        a = self.exec_block(stmt.body, frame, dict(env)) if truth is not False else None
        b = self.exec_block(stmt.orelse, frame, dict(env)) if truth is not True else None
        return _join(a, b)

    def truth(self, test: ast.expr, frame: _Frame, env: dict[str, _VS]) -> bool | None:
        """Whether a test holds, when the values it compares are constants (`name in ("cuA", "cuB")` once the name
        is known); None when it cannot be told. Its operands are evaluated either way (their calls happen)."""
        if isinstance(test, ast.BoolOp):
            parts = [self.truth(v, frame, env) for v in test.values]
            if isinstance(test.op, ast.And):
                return False if False in parts else True if all(p is True for p in parts) else None
            return True if True in parts else False if all(p is False for p in parts) else None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand, frame, env)
            return None if inner is None else not inner
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left = self.eval(test.left, frame, env)
            right = self.eval(test.comparators[0], frame, env)
            return _compare(test.ops[0], left, right)
        return _truthy(self.eval(test, frame, env))

    def s_for(self, stmt: ast.For | ast.AsyncFor, frame: _Frame, env: dict[str, _VS]) -> _Env:
        seq = self.eval(stmt.iter, frame, env)
        elements = self.elements(seq)
        if elements is None and self.recording and frame.mod.index == 0 and _longest(seq) > _UNROLL:
            self.notes.add(f"line {stmt.lineno}: a loop over {_longest(seq)} constant elements, more than the "
                           f"{_UNROLL} the linter runs one by one: its body is judged with the elements unknown")
        saved = (frame.breaks, frame.continues)
        frame.breaks, frame.continues = [], []
        exits: list[_Env] = []
        cur: _Env = env
        runs: Iterable[_VS] = elements if elements is not None else ()
        for element in runs:
            if cur is None:
                break
            cur = self.iteration(stmt, frame, dict(cur), element, exits)
        if elements is None:
            elem = self.any_element(self.eval(stmt.iter, frame, env))
            first = self.iteration(stmt, frame, dict(env), elem, exits)
            again = self.iteration(stmt, frame, _join(env, first) or dict(env), elem, exits)
            cur = _join(env, first, again)
        after = self.exec_block(stmt.orelse, frame, cur) if cur is not None else None
        frame.breaks, frame.continues = saved
        return _join(after, *exits)

    def iteration(self, stmt: ast.For | ast.AsyncFor | ast.While, frame: _Frame, env: dict[str, _VS], element: _VS,
                  exits: list[_Env]) -> _Env:
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.assign(stmt.target, element, frame, env, stmt)
        frame.breaks, frame.continues = [], []
        end = self.exec_block(stmt.body, frame, env)
        exits.extend(frame.breaks)
        return _join(end, *frame.continues)

    def s_while(self, stmt: ast.While, frame: _Frame, env: dict[str, _VS]) -> _Env:
        saved = (frame.breaks, frame.continues)
        exits: list[_Env] = []
        self.eval(stmt.test, frame, env)
        first = self.iteration(stmt, frame, dict(env), _EMPTY, exits)
        again = self.iteration(stmt, frame, _join(env, first) or dict(env), _EMPTY, exits)
        cur = _join(env, first, again)
        after = self.exec_block(stmt.orelse, frame, cur) if cur is not None else None
        frame.breaks, frame.continues = saved
        return _join(after, *exits)

    def s_try(self, stmt: ast.Try, frame: _Frame, env: dict[str, _VS]) -> _Env:
        body = self.exec_block(stmt.body, frame, dict(env))
        start = _join(env, body) or dict(env)       # an exception may leave after any statement
        handled = []
        for h in stmt.handlers:
            henv = dict(start)
            if h.name:
                henv[h.name] = _TOP
            handled.append(self.exec_block(h.body, frame, henv))
        ok = self.exec_block(stmt.orelse, frame, body) if body is not None else None
        end = _join(ok, *handled)
        if not stmt.finalbody:
            return end
        after = self.exec_block(stmt.finalbody, frame, end if end is not None else dict(start))
        return after if end is not None else None

    def s_with(self, stmt: ast.With | ast.AsyncWith, frame: _Frame, env: dict[str, _VS]) -> _Env:
        for item in stmt.items:
            value = self.eval(item.context_expr, frame, env)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, frame, env, stmt)
        return self.exec_block(stmt.body, frame, env)

    def s_return(self, stmt: ast.Return, frame: _Frame, env: dict[str, _VS]) -> _Env:
        frame.returns.update(self.eval(stmt.value, frame, env) if stmt.value is not None else _vs(_Num(None)))
        return None

    def s_raise(self, stmt: ast.Raise, frame: _Frame, env: dict[str, _VS]) -> _Env:
        if stmt.exc is not None:
            self.eval(stmt.exc, frame, env)
        return None

    def s_break(self, stmt: ast.Break, frame: _Frame, env: dict[str, _VS]) -> _Env:
        frame.breaks.append(env)
        return None

    def s_continue(self, stmt: ast.Continue, frame: _Frame, env: dict[str, _VS]) -> _Env:
        frame.continues.append(env)
        return None

    def s_def(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, frame: _Frame, env: dict[str, _VS]) -> _Env:
        value = self.func_value(stmt, frame.mod, None)
        if frame.func is not None:
            self.closures[stmt] = env
        self.bind(stmt.name, _vs(value), frame, env)
        return env

    def s_class(self, stmt: ast.ClassDef, frame: _Frame, env: dict[str, _VS]) -> _Env:
        bases = [self.eval(b, frame, env) for b in stmt.bases]
        ct = self.class_ctype(stmt, bases)
        if ct is not None:
            self.bind(stmt.name, _vs(ct), frame, env)
            return env
        body_env: dict[str, _VS] = {}
        body = _Frame(frame.mod, body_env, parent=frame, closure=env)
        methods = [s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.exec_scope([s for s in stmt.body if s not in methods], body)
        for s in methods:
            body_env[s.name] = _vs(self.func_value(s, frame.mod, stmt))
        attrs = self.attrs.setdefault(stmt, {})
        for k, v in body_env.items():
            attrs[k] = _union(attrs.get(k, _EMPTY), v)
        attrs.setdefault("__bases__", _union(*bases) if bases else _EMPTY)
        self.bind(stmt.name, _vs(_Cls(stmt, frame.mod.index)), frame, env)
        return env

    @staticmethod
    def class_ctype(stmt: ast.ClassDef, bases: list[_VS]) -> _CT | None:
        """A class deriving from a ctypes type is that kind of type (a Structure subclass is a struct)."""
        for b in bases:
            for v in b:
                if isinstance(v, _Builtin) and v.name in ("ctypes.Structure", "ctypes.Union",
                                                         "ctypes.BigEndianStructure", "ctypes.LittleEndianStructure"):
                    return _CT("struct", stmt.name)
                if isinstance(v, _CT) and v.kind in ("struct", "scalar"):
                    return _CT(v.kind, v.name if v.kind == "scalar" else stmt.name)
        return None

    def s_import(self, stmt: ast.Import, frame: _Frame, env: dict[str, _VS]) -> _Env:
        for a in stmt.names:
            name = a.name if a.asname else a.name.split(".")[0]
            value = _vs(_Mod(name)) if _known_module(name) else _vs(_Lazy(name, 0, frame.mod.index, ""))
            self.bind(a.asname or name, value, frame, env)
        return env

    def s_importfrom(self, stmt: ast.ImportFrom, frame: _Frame, env: dict[str, _VS]) -> _Env:
        base = stmt.module or ""
        for a in stmt.names:
            if a.name == "*":
                self.star_import(base, stmt.level, frame, env)
                continue
            if stmt.level or not _known_module(base):
                self.bind(a.asname or a.name, _vs(_Lazy(base, stmt.level, frame.mod.index, a.name)), frame, env)
                continue
            got = self.attribute(self.module_value(base, stmt.level, frame.mod), a.name)
            self.bind(a.asname or a.name, got, frame, env)
        return env

    def resolve(self, lazy: _Lazy) -> _VS:
        """What an imported name is, reading its module now."""
        here = self.modules[lazy.mod]
        if not lazy.attr:
            return self.module_value(lazy.dotted, lazy.level, here)
        got = self.attribute(self.module_value(lazy.dotted, lazy.level, here), lazy.attr)
        if got == _TOP:
            got = self.module_value(f"{lazy.dotted}.{lazy.attr}" if lazy.dotted else lazy.attr, lazy.level, here)
        return got

    def unlazy(self, values: _VS) -> _VS:
        if not any(isinstance(v, _Lazy) for v in values):
            return values
        return _union(*(self.resolve(v) if isinstance(v, _Lazy) else _vs(v) for v in values))

    def star_import(self, base: str, level: int, frame: _Frame, env: dict[str, _VS]) -> None:
        if base in ("ctypes", "ctypes.wintypes") and not level:
            for name in (*CTYPES_FUNCTIONS, *_CT_NAMES):
                self.bind(name, self.attribute(_vs(_Mod("ctypes")), name), frame, env)
            return
        for v in self.module_value(base, level, frame.mod):
            if isinstance(v, _Mod) and v.index >= 0:
                for k, val in self.modules[v.index].env.items():
                    if not k.startswith("_"):
                        self.bind(k, val, frame, env)

    def module_value(self, dotted: str, level: int, here: _Module) -> _VS:
        if not level and _known_module(dotted):
            return _vs(_Mod(dotted))
        mod = self.import_module(dotted, level, here)
        return _vs(_Mod(mod.path, mod.index)) if mod is not None else _TOP

    def s_global(self, stmt: ast.AST, frame: _Frame, env: dict[str, _VS]) -> _Env:
        return env

    # --- binding names ---
    def bind(self, name: str, value: _VS, frame: _Frame, env: dict[str, _VS]) -> None:
        if name in frame.globals_ and frame.func is not None:
            g = frame.mod.env
            g[name] = _union(g.get(name, _EMPTY), value)     # a global written by a function: one more value
        else:
            env[name] = value

    def assign(self, target: ast.expr, value: _VS, frame: _Frame, env: dict[str, _VS], stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value, frame, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target.elts, value, frame, env, stmt)
        elif isinstance(target, ast.Attribute):
            self.store_attr(target, value, frame, env, stmt)
        elif isinstance(target, ast.Subscript):
            self.store_item(target, value, frame, env)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, _vs(_Seq(None, self.any_element(value))), frame, env, stmt)

    def unpack(self, elts: list[ast.expr], value: _VS, frame: _Frame, env: dict[str, _VS], stmt: ast.AST) -> None:
        parts: list[list[_VS]] = [[] for _ in elts]
        for v in value:
            items = v.items if isinstance(v, _Seq) else None
            if items is not None and len(items) == len(elts) and not any(isinstance(e, ast.Starred) for e in elts):
                for i, it in enumerate(items):
                    parts[i].append(it)
            else:
                each = self.any_element(_vs(v))
                for p in parts:
                    p.append(each)
        for e, p in zip(elts, parts, strict=True):
            self.assign(e, _union(*p) if p else _TOP, frame, env, stmt)

    def store_attr(self, target: ast.Attribute, value: _VS, frame: _Frame, env: dict[str, _VS], stmt: ast.AST) -> None:
        objs = self.eval(target.value, frame, env)
        path = _path(target)
        if path in frame.overrides:
            frame.overrides[path] = value
        exports = frozenset(o for o in objs if isinstance(o, _Export))
        if exports and target.attr in ("argtypes", "restype"):
            self.proto_store(exports, target.attr, value, frame, stmt)
        for o in objs:
            if isinstance(o, (_Inst, _Cls)):
                node = o.node
                attrs = self.attrs.setdefault(node, {})
                attrs[target.attr] = _union(attrs.get(target.attr, _EMPTY), value)
            elif isinstance(o, _Lib):
                la = self.lib_attrs.setdefault(o.site, {})
                la[target.attr] = _union(la.get(target.attr, _EMPTY), value)
            elif isinstance(o, _Mod) and o.index >= 0:
                menv = self.modules[o.index].env
                menv[target.attr] = _union(menv.get(target.attr, _EMPTY), value)

    def proto_store(self, exports: frozenset[_Export], attr: str, value: _VS, frame: _Frame, stmt: ast.AST) -> None:
        """argtypes/restype set on the exports a name may hold (alternatives of one binding: kept together)."""
        for e in exports:
            key = (e.name, e.lib.site, e.copy, attr)
            self.proto_of[key] = _union(self.proto_of.get(key, _EMPTY), value)
        if self.recording:
            self.seen.stores.append(_Store(attr, self.report_site(stmt, frame, exports), frozenset(exports), value))

    def store_item(self, target: ast.Subscript, value: _VS, frame: _Frame, env: dict[str, _VS]) -> None:
        """`d[k] = v` on a name or attribute bound to a dictionary: that name now holds the dictionary with k."""
        keys = self.eval(target.slice, frame, env)
        base = self.eval(target.value, frame, env)
        new: set[_V] = set()
        for b in base:
            if isinstance(b, _Map) and len(keys) == 1 and isinstance(next(iter(keys)), (_Str, _Num)):
                k = next(iter(keys))
                items = [(kk, _union(vv, value) if _key(kk) == _key(k) else vv) for kk, vv in b.items]
                if not any(_key(kk) == _key(k) for kk, _ in b.items):
                    items.append((k, value))
                new.add(_Map(tuple(items)))
            elif isinstance(b, _Obj):
                self.heap[b.site] = _union(self.heap.get(b.site, _EMPTY), value)
        if new and isinstance(target.value, (ast.Name, ast.Attribute)):
            self.assign(target.value, frozenset(new), frame, env, target)

    # --- expressions ---
    def eval(self, node: ast.expr | None, frame: _Frame, env: dict[str, _VS] | None = None) -> _VS:
        if node is None:
            return _vs(_Num(None))
        self.tick()
        env = frame.env if env is None else env
        handler = _EXPRESSIONS.get(type(node))
        if handler is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child, frame, env)
            return _TOP
        return handler(self, node, frame, env)

    def e_const(self, node: ast.Constant, frame: _Frame, env: dict[str, _VS]) -> _VS:
        v = node.value
        if isinstance(v, (str, bytes)):
            s = v.decode("latin-1") if isinstance(v, bytes) else v
            return _vs(_Str(s, (frame.mod.path, node.lineno, node.col_offset + 1)))
        return _vs(_Num(v)) if isinstance(v, (int, float, bool)) or v is None else _TOP

    def e_name(self, node: ast.Name, frame: _Frame, env: dict[str, _VS]) -> _VS:
        got = self.lookup(node.id, frame, env)
        if any(isinstance(v, _Lazy) for v in got):
            got = self.unlazy(got)
            if node.id in frame.mod.env and frame.mod.env[node.id] != got and not (
                    frame.func is not None and node.id in env):
                frame.mod.env[node.id] = got
        return got

    def lookup(self, name: str, frame: _Frame, env: dict[str, _VS]) -> _VS:
        if name in frame.overrides:
            return frame.overrides[name]
        if name not in frame.globals_ and name in env:
            return env[name]
        if frame.closure is not None and name in frame.closure and name not in frame.local_names:
            return frame.closure[name]
        if name in frame.mod.env:
            return frame.mod.env[name]
        if name in FLAG_MODES:
            return _vs(_Num(FLAGS[FLAG_MODES[name]]))
        if name in TOOLKIT_MACROS:
            return _vs(_Ver("toolkit"))
        if name in _BUILTINS:
            return _vs(_Builtin(name))
        return _TOP

    def e_attr(self, node: ast.Attribute, frame: _Frame, env: dict[str, _VS]) -> _VS:
        path = _path(node)
        if path in frame.overrides:
            return frame.overrides[path]
        if node.attr in FLAG_MODES:
            self.eval(node.value, frame, env)
            return _vs(_Num(FLAGS[FLAG_MODES[node.attr]]))
        base = self.eval(node.value, frame, env)
        got = self.attribute(base, node.attr, node, frame)
        return got

    def attribute(self, base: _VS, attr: str, node: ast.AST | None = None, frame: _Frame | None = None) -> _VS:
        out: list[_VS] = []
        for b in self.unlazy(base):
            out.append(self.attribute_of(b, attr, node, frame))
        return _union(*out) if out else _TOP

    def attribute_of(self, b: _V, attr: str, node: ast.AST | None, frame: _Frame | None) -> _VS:
        if isinstance(b, _Mod):
            return self.unlazy(self.module_attr(b, attr))
        if isinstance(b, _Lib):
            return self.lib_attr(b, attr, node, frame)
        if isinstance(b, (_Inst, _Cls)):
            return self.class_attr(b, attr)
        if isinstance(b, _Export):
            return self.proto_of.get((b.name, b.lib.site, b.copy, attr), _TOP) if attr in ("argtypes", "restype") \
                else _TOP
        if isinstance(b, _Obj):
            return self.heap.get(b.site, _TOP) if attr in ("value", "contents") else _TOP
        if isinstance(b, _Builtin) and b.name == "ctypes.util" and attr == "find_library":
            return _vs(_Builtin("ctypes.util.find_library"))
        if isinstance(b, _Builtin) and b.name in ("ctypes.cdll", "ctypes.windll", "ctypes.oledll", "ctypes.pydll"):
            loader = b.name.split(".")[-1]         # ctypes.cdll.nvcuda / ctypes.windll.LoadLibrary
            if attr == "LoadLibrary":
                return _vs(_Builtin(f"ctypes.{loader}.LoadLibrary"))
            site = self.site(node, frame) if node is not None and frame is not None else _NOWHERE
            return _vs(_lib_of(_vs(_Str(attr)), site, loader)) if not attr.startswith("_") else _TOP
        if isinstance(b, (_Str, _Seq, _Map, _Ffi)):
            return _vs(_Method(attr, b))
        return _TOP

    def module_attr(self, m: _Mod, attr: str) -> _VS:
        if m.index >= 0:
            env = self.modules[m.index].env
            if attr in env:
                return env[attr]
            sub = self.import_module(attr, 1, self.modules[m.index]) if os.path.basename(m.name) == "__init__.py" \
                else None
            return _vs(_Mod(sub.path, sub.index)) if sub is not None else _TOP
        full = f"{m.name}.{attr}"
        if m.name in ("ctypes", "ctypes.wintypes"):
            return _ctypes_attr(attr)
        if full in _KNOWN_MODULES or m.name == "cuda" or full in ("cuda.bindings", "ctypes.util", "os.path"):
            return _vs(_Mod(full))
        if full in _BUILTIN_FUNCTIONS:
            return _vs(_Builtin(full))
        if m.name.startswith("cuda"):
            return _vs(_Builtin(f"bindings.{attr}"))
        return _TOP

    def lib_attr(self, lib: _Lib, attr: str, node: ast.AST | None, frame: _Frame | None) -> _VS:
        stored = self.lib_attrs.get(lib.site, {}).get(attr)
        if stored is not None:
            return stored
        if attr.startswith("_"):
            return _TOP
        at = (frame.mod.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1) \
            if frame is not None and node is not None \
            and hasattr(node, "lineno") else _NOWHERE
        e = _Export(attr, lib, at, optional=frame is not None and node is not None and self.handled(node, frame))
        self.taken(e, node, frame)
        return _vs(e)

    def handled(self, node: ast.AST, frame: _Frame) -> bool:
        """Whether a missing export is handled where `node` takes it: inside a try whose handlers catch
        AttributeError (or any exception), or tested with hasattr."""
        idx = frame.mod.index
        if idx not in self.guarded:
            self.guarded[idx] = _guarded_nodes(frame.mod.tree)
        return node in self.guarded[idx]

    def taken(self, e: _Export, node: ast.AST | None, frame: _Frame | None) -> None:
        if self.recording and frame is not None and node is not None and hasattr(node, "lineno"):
            self.seen.stores.append(_Store("take", self.report_site(node, frame, _vs(e)), _vs(e), None))

    def class_attr(self, obj: _Inst | _Cls, attr: str) -> _VS:
        seen: set[ast.ClassDef] = set()
        todo = [obj.node]
        while todo:
            node = todo.pop(0)
            if node in seen:
                continue
            seen.add(node)
            attrs = self.attrs.get(node, {})
            if attr in attrs:
                return _union(*(self.bind_method(v, obj) for v in attrs[attr]))
            todo.extend(v.node for v in attrs.get("__bases__", _EMPTY) if isinstance(v, _Cls))
        return _TOP

    def bind_method(self, v: _V, obj: _Inst | _Cls) -> _VS:
        if isinstance(v, _Func) and isinstance(v.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(obj, _Inst) and _is_property(v.node):
                return self.call_function(v, [], {}, None, None, _vs(obj))     # a property: what it returns
            if self.is_static(v.node) and not self.is_classmethod(v.node):
                return _vs(v)
            if self.is_classmethod(v.node):
                return _vs(_Bound(v, _Cls(obj.node, v.mod)))
            if isinstance(obj, _Inst):
                return _vs(_Bound(v, obj))
        return _vs(v)

    def e_subscript(self, node: ast.Subscript, frame: _Frame, env: dict[str, _VS]) -> _VS:
        base = self.eval(node.value, frame, env)
        if isinstance(node.slice, ast.Slice):
            lo = self.eval(node.slice.lower, frame, env) if node.slice.lower else _vs(_Num(None))
            return _union(*(self.sliced(b, lo) for b in base))
        key = self.eval(node.slice, frame, env)
        out: list[_VS] = []
        for b in base:
            out.append(self.item(b, key, node, frame))
        return _union(*out) if out else _TOP

    def item(self, b: _V, key: _VS, node: ast.AST, frame: _Frame) -> _VS:
        if isinstance(b, _Map):
            return _map_item(b, key)
        if isinstance(b, _Seq):
            return _seq_item(b, key)
        if isinstance(b, _Lib):
            names = _strings(key)
            if names is None:
                self.unjudged_export(node, frame, b)
                return _TOP
            site = (frame.mod.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1)
            out = [_Export(n, b, next((x.at for x in key if isinstance(x, _Str) and x.s == n), _NOWHERE), site,
                          self.handled(node, frame)) for n in names]
            for e in out:
                self.taken(e, node, frame)
            return frozenset(out)
        return _TOP

    def sliced(self, b: _V, lo: _VS) -> _VS:
        if isinstance(b, _Seq) and b.items is not None:
            starts = [x.n for x in lo if isinstance(x, _Num) and isinstance(x.n, int)]
            if len(starts) == 1:
                items = b.items[starts[0]:]
                return _vs(_Seq(items, _union(*items) if items else _EMPTY))
        if isinstance(b, _Seq):
            return _vs(_Seq(None, b.elems))
        if isinstance(b, _Str):
            return _vs(_Top())
        return _TOP

    def e_joined(self, node: ast.JoinedStr, frame: _Frame, env: dict[str, _VS]) -> _VS:
        acc = [""]
        for part in node.values:
            vals = self.eval(part.value, frame, env) if isinstance(part, ast.FormattedValue) else \
                self.eval(part, frame, env)
            texts = _texts(vals)
            if texts is None:
                return _tail_of(acc, node, frame)
            acc = [a + t for a in acc for t in texts][:_CAP]
        at = (frame.mod.path, node.lineno, node.col_offset + 1)
        return frozenset(_Str(a, at) for a in acc)

    def e_binop(self, node: ast.BinOp, frame: _Frame, env: dict[str, _VS]) -> _VS:
        left = self.eval(node.left, frame, env)
        right = self.eval(node.right, frame, env)
        return self.binop(node.op, left, right, node, frame)

    def binop(self, op: ast.operator, left: _VS, right: _VS, node: ast.AST | None = None,
              frame: _Frame | None = None) -> _VS:
        at = (frame.mod.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1) \
            if frame is not None else _NOWHERE
        if isinstance(op, ast.Add):
            return _add(left, right, at)
        if isinstance(op, ast.Mod):
            return _percent(left, right, at)
        if isinstance(op, ast.Mult):
            arrays = [_CT("array", "", v) for v in left if isinstance(v, _CT)]
            if arrays:
                return frozenset(arrays)
            repeated = _repeat(left, right)
            if repeated is not None:
                return repeated
        nums = _arith(op, left, right)
        return nums if nums is not None else _TOP

    def e_boolop(self, node: ast.BoolOp, frame: _Frame, env: dict[str, _VS]) -> _VS:
        parts = [self.eval(v, frame, env) for v in node.values]
        if isinstance(node.op, ast.Or):
            kept = [frozenset(v for v in p if not _falsy(v)) for p in parts[:-1]] + parts[-1:]
            return _union(*kept)
        return _union(*parts)

    def e_ifexp(self, node: ast.IfExp, frame: _Frame, env: dict[str, _VS]) -> _VS:
        truth = self.truth(node.test, frame, env)
        if truth is not None:
            return self.eval(node.body if truth else node.orelse, frame, env)
        return _union(self.eval(node.body, frame, env), self.eval(node.orelse, frame, env))

    def e_other(self, node: ast.expr, frame: _Frame, env: dict[str, _VS]) -> _VS:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child, frame, env)
        return _TOP

    def e_seq(self, node: ast.Tuple | ast.List | ast.Set, frame: _Frame, env: dict[str, _VS]) -> _VS:
        items: list[_VS] = []
        known = True
        for e in node.elts:
            if isinstance(e, ast.Starred):
                got = self.eval(e.value, frame, env)
                seqs = [v for v in got if isinstance(v, _Seq)]
                if len(seqs) == 1 and len(got) == 1 and seqs[0].items is not None:
                    items.extend(seqs[0].items)
                else:
                    known = False
                    items.append(self.any_element(got))
            else:
                items.append(self.eval(e, frame, env))
        return _vs(_Seq(tuple(items) if known else None, _union(*items) if items else _EMPTY))

    def e_dict(self, node: ast.Dict, frame: _Frame, env: dict[str, _VS]) -> _VS:
        items: list[tuple[_V, _VS]] = []
        for k, v in zip(node.keys, node.values, strict=True):
            val = self.eval(v, frame, env)
            if k is None:
                for m in val:
                    if isinstance(m, _Map):
                        items.extend(m.items)
                continue
            keys = self.eval(k, frame, env)
            if len(keys) == 1 and isinstance(next(iter(keys)), (_Str, _Num)):
                items.append((next(iter(keys)), val))
        return _vs(_Map(tuple(items)))

    def e_lambda(self, node: ast.Lambda, frame: _Frame, env: dict[str, _VS]) -> _VS:
        return _vs(_Func(node, frame.mod.index, tuple(self.eval(d, frame, env) for d in node.args.defaults)))

    def e_comp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, frame: _Frame,
               env: dict[str, _VS]) -> _VS:
        results: list[_VS] = []
        keys: list[_VS] = []
        known = True
        for local in self.comp_envs(node.generators, frame, dict(env)):
            if local is None:
                known = False
                continue
            if isinstance(node, ast.DictComp):
                keys.append(self.eval(node.key, frame, local))
                results.append(self.eval(node.value, frame, local))
            else:
                results.append(self.eval(node.elt, frame, local))
        if isinstance(node, ast.DictComp):
            pairs = [(next(iter(k)), v) for k, v in zip(keys, results, strict=True)
                     if len(k) == 1 and isinstance(next(iter(k)), (_Str, _Num))]
            return _vs(_Map(tuple(pairs)))
        return _vs(_Seq(tuple(results) if known else None, _union(*results) if results else _EMPTY))

    def comp_envs(self, gens: list[ast.comprehension], frame: _Frame, env: dict[str, _VS]) -> Iterator[_Env]:
        """One environment per element of the generators (None once for an iteration over unknown values)."""
        if not gens:
            yield env
            return
        g = gens[0]
        seq = self.eval(g.iter, frame, env)
        elements = self.elements(seq)
        if elements is None:
            local = dict(env)
            self.assign(g.target, self.any_element(seq), frame, local, g)
            yield None
            yield from (e for e in self.comp_envs(gens[1:], frame, local) if e is not None)
            return
        for el in elements[:_CAP]:
            local = dict(env)
            self.assign(g.target, el, frame, local, g)
            for cond in g.ifs:
                self.eval(cond, frame, local)
            yield from self.comp_envs(gens[1:], frame, local)

    def e_named(self, node: ast.NamedExpr, frame: _Frame, env: dict[str, _VS]) -> _VS:
        value = self.eval(node.value, frame, env)
        self.assign(node.target, value, frame, env, node)
        return value

    # --- sequences ---
    def elements(self, values: _VS) -> list[_VS] | None:
        """The elements of a constant sequence, in order (None when they are not all known)."""
        if len(values) != 1:
            return None
        v = next(iter(values))
        if isinstance(v, _Seq) and v.items is not None and len(v.items) <= _UNROLL:
            return list(v.items)
        if isinstance(v, _Map) and len(v.items) <= _UNROLL:
            return [_vs(k) for k, _ in v.items]
        if isinstance(v, _Method) and v.name in ("items", "keys", "values") and isinstance(v.of, _Map) and \
                len(v.of.items) <= _UNROLL:
            return _map_view(v.of, v.name)
        if isinstance(v, _Str) and len(v.s) <= 64:
            return [_vs(_Str(c, v.at)) for c in v.s]
        return None

    def any_element(self, values: _VS) -> _VS:
        out: list[_VS] = []
        for v in values:
            if isinstance(v, _Seq):
                out.append(v.elems or _TOP)
            elif isinstance(v, _Map):
                out.append(_union(*(_vs(k) for k, _ in v.items)) if v.items else _TOP)
            elif isinstance(v, _Method) and isinstance(v.of, _Map) and v.name in ("items", "keys", "values"):
                out.append(_union(*_map_view(v.of, v.name)) if v.of.items else _TOP)
            else:
                out.append(_TOP)
        return _union(*out) if out else _TOP

    # --- calls ---
    def e_call(self, node: ast.Call, frame: _Frame, env: dict[str, _VS]) -> _VS:
        callee = self.eval(node.func, frame, env)
        args: list[_VS] = []
        rest = False
        for a in node.args:
            if isinstance(a, ast.Starred):
                got = self.eval(a.value, frame, env)
                seqs = [v for v in got if isinstance(v, _Seq) and v.items is not None]
                if len(seqs) == 1 and len(got) == 1:
                    args.extend(seqs[0].items or ())
                else:
                    rest = True
            else:
                args.append(self.eval(a, frame, env))
        kwargs = {k.arg: self.eval(k.value, frame, env) for k in node.keywords if k.arg}
        for k in node.keywords:
            if not k.arg:
                self.eval(k.value, frame, env)
        out: list[_VS] = []
        for c in callee:
            out.append(self.call(c, args, kwargs, node, frame, rest))
        self.unfollowed(node, callee, frame)
        return _union(*out) if out else _TOP

    def unfollowed(self, node: ast.Call, callee: _VS, frame: _Frame) -> None:
        """A call of a driver function by name through something the interpreter cannot see into (a module it
        does not read, a binding made by a decorator): a request it found but cannot judge."""
        name = _name_of(node.func)
        if not self.recording or frame.mod.index != 0 or not _DRIVER_NAME.match(name):
            return
        if any(isinstance(c, _Export) for c in callee) or all(
                isinstance(c, (_Builtin, _Method, _Cls, _CT)) or (isinstance(c, (_Func, _Bound)) and not _decorated(c))
                for c in callee):
            return
        self.seen.unjudged.append((node.lineno, f"a call of {name} through a value the linter cannot follow "
                                                "(a module it does not read, a binding made by a decorator)"))

    def call(self, c: _V, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame, rest: bool) -> _VS:
        if isinstance(c, _Func):
            return self.call_function(c, args, kwargs, node, frame, _EMPTY)
        if isinstance(c, _Bound):
            return self.call_function(c.func, args, kwargs, node, frame, _vs(c.self_))
        if isinstance(c, _Cls):
            return self.instantiate(c, args, kwargs, node, frame)
        if isinstance(c, _Builtin):
            return self.call_builtin(c.name, args, kwargs, node, frame)
        if isinstance(c, _Method):
            return self.call_method(c, args, kwargs, node, frame)
        if isinstance(c, _CT):
            return self.call_ctype(c, args, node, frame)
        if isinstance(c, _Export):
            return self.call_export(c, args, kwargs, node, frame, rest)
        if isinstance(c, _Top):
            return self.call_unknown(args, node, frame)
        return _TOP

    def call_unknown(self, args: list[_VS], node: ast.Call, frame: _Frame) -> _VS:
        """A function the interpreter cannot see: given the name of the CUDA driver library, it loads it."""
        for a in args[:1]:
            if any(isinstance(v, (_Str, _Tail)) and _names_cuda(v.s) for v in a):
                return _vs(_lib_of(a, self.site(node, frame)))
        return _TOP

    def site(self, node: ast.AST, frame: _Frame) -> _Site:
        return (frame.mod.path, getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1)

    def instantiate(self, c: _Cls, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        inst = _Inst(c.node)
        init = self.class_attr(inst, "__init__")
        for v in init:
            if isinstance(v, _Bound):
                self.call_function(v.func, args, kwargs, node, frame, _vs(inst))
        return _vs(inst)

    def call_function(self, fn: _Func, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call | None,
                      caller: _Frame | None, self_: _VS, entry: bool = False) -> _VS:
        depth = caller.depth + 1 if caller is not None else 0
        if depth > _DEPTH or self.active.get(fn.node, 0) >= 2:
            return _TOP
        key = (fn, tuple(args), tuple(sorted(kwargs.items())), self_, node)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = _TOP
        self.ran.add(fn.node)
        binding = self.bind_params(fn, args, kwargs, self_, entry)
        forks = self.refinements(fn, binding, self_)
        result: set[_V] = set()
        for env, overrides in forks:
            try:
                result.update(self.run_body(fn, env, overrides, node, caller, depth))
            except RecursionError:           # Python's own stack: this call is not followed further
                result.add(_Top())
        got = frozenset(result) if result else _vs(_Num(None))
        got = _union(got)
        self.memo[key] = got
        return got

    def run_body(self, fn: _Func, env: dict[str, _VS], overrides: dict[str, _VS], node: ast.Call | None,
                 caller: _Frame | None, depth: int) -> _VS:
        mod = self.modules[fn.mod]
        body = getattr(fn.node, "body", [])
        frame = _Frame(mod, env, fn, node, caller, self.globals_of(fn.node), self.locals_of(fn.node),
                       self.closures.get(fn.node), dict(overrides), depth=depth)
        self.active[fn.node] = self.active.get(fn.node, 0) + 1
        try:
            if isinstance(fn.node, ast.Lambda):
                assert isinstance(body, ast.expr)
                return self.eval(body, frame, env)
            assert isinstance(body, list)
            end = self.exec_block(body, frame, env)
            if end is not None:
                frame.returns.add(_Num(None))
            return frozenset(frame.returns)
        finally:
            self.active[fn.node] -= 1

    def locals_of(self, node: ast.AST) -> frozenset[str]:
        if node not in self.locals_cache:
            self.locals_cache[node] = _assigned_names(node) - self.globals_of(node)
        return self.locals_cache[node]

    def globals_of(self, node: ast.AST) -> frozenset[str]:
        if node not in self.globals_cache:
            self.globals_cache[node] = _global_names(node)
        return self.globals_cache[node]

    def bind_params(self, fn: _Func, args: list[_VS], kwargs: dict[str, _VS], self_: _VS,
                    entry: bool = False) -> dict[str, _VS]:
        a = _params(fn.node)
        positional = [*a.posonlyargs, *a.args]
        given = ([self_] if self_ else []) + list(args)
        env: dict[str, _VS] = {}
        defaults = dict(zip([p.arg for p in positional][len(positional) - len(fn.defaults):], fn.defaults,
                            strict=True)) if fn.defaults else {}
        for i, p in enumerate(positional):
            if i < len(given):
                env[p.arg] = given[i]
            elif p.arg in kwargs:
                env[p.arg] = kwargs[p.arg]
            elif p.arg in defaults:
                env[p.arg] = _union(defaults[p.arg], _TOP) if entry else defaults[p.arg]
            else:
                env[p.arg] = _TOP
        kwd = dict(fn.kw_defaults)
        for p in a.kwonlyargs:
            env[p.arg] = kwargs.get(p.arg, _union(kwd[p.arg], _TOP) if entry and p.arg in kwd else kwd.get(p.arg, _TOP))
        if a.vararg is not None:
            extra = given[len(positional):]
            env[a.vararg.arg] = _vs(_Seq(tuple(extra), _union(*extra) if extra else _EMPTY))
        if a.kwarg is not None:
            env[a.kwarg.arg] = _TOP
        return env

    def refinements(self, fn: _Func, env: dict[str, _VS], self_: _VS) -> list[tuple[dict[str, _VS], dict[str, _VS]]]:
        """A function that looks an unknown parameter (or self.attribute) up in a constant dictionary runs once per
        key of it: a name that is not a key raises there (KeyError), so no other value gets past."""
        for path, table in self.lookups(fn.node):
            if path in env:
                known = env[path]
            elif path.startswith("self.") and self_:
                known = self.attribute(self_, path[5:])
            else:
                continue
            if any(isinstance(v, _Str) for v in known):
                continue
            keys = self.table_keys(table, fn)
            if not keys:
                continue
            out = []
            for k in keys:
                local = dict(env)
                overrides: dict[str, _VS] = {}
                if path in env:
                    local[path] = _vs(k)
                else:
                    overrides[path] = _vs(k)
                out.append((local, overrides))
            return out
        return [(env, {})]

    def lookups(self, node: ast.AST) -> tuple[tuple[str, ast.expr], ...]:
        """(key path, table expression) of `table[key]` and `table.get(key)` in a function's own body."""
        if node in self.refine_cache:
            return self.refine_cache[node]
        params = {p.arg for p in (*_params(node).posonlyargs, *_params(node).args, *_params(node).kwonlyargs)}
        out: list[tuple[str, ast.expr]] = []
        for n in _own_nodes(node):
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                key, table = n.slice, n.value
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args:
                key, table = n.args[0], n.func.value
            else:
                continue
            path = _path(key)
            if path and (path in params or path.startswith("self.")) and isinstance(table, (ast.Name, ast.Attribute)):
                out.append((path, table))
        self.refine_cache[node] = tuple(out)
        return self.refine_cache[node]

    def table_keys(self, table: ast.expr, fn: _Func) -> list[_Str]:
        mod = self.modules[fn.mod]
        got = self.eval(table, _Frame(mod, mod.env))
        maps = [v for v in got if isinstance(v, _Map)]
        if len(maps) != 1 or len(got) != 1 or len(maps[0].items) > _UNROLL:
            return []
        keys = [k for k, _ in maps[0].items if isinstance(k, _Str)]
        return keys if len(keys) == len(maps[0].items) else []

    # --- builtins, ctypes, cffi ---
    def call_builtin(self, name: str, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        handler = _BUILTIN_CALLS.get(name)
        if handler is not None:
            return handler(self, args, kwargs, node, frame)
        if name.endswith((".LoadLibrary", "ctypes.CDLL", "ctypes.WinDLL", "ctypes.OleDLL", "ctypes.PyDLL")):
            return self.load(name, args, kwargs, node, frame)
        if name.startswith("bindings."):
            return self.call_bindings(name[len("bindings."):], args, kwargs, node, frame)
        return _TOP

    def load(self, name: str, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        target = args[0] if args else kwargs.get("name", _TOP)
        loader = name.split(".")[-2] if name.endswith(".LoadLibrary") else name.split(".")[-1]
        return _vs(_lib_of(target, self.site(node, frame), loader))

    def b_getattr(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if len(args) < 2:
            return _TOP
        names = _strings(args[1])
        out: list[_VS] = [args[2]] if len(args) > 2 else []
        for obj in args[0]:
            if names is None:
                if isinstance(obj, _Lib):
                    self.unjudged_export(node, frame, obj)
                out.append(_TOP)
                continue
            for n in names:
                if isinstance(obj, _Lib):
                    at = next((x.at for x in args[1] if isinstance(x, _Str) and x.s == n), _NOWHERE)
                    stored = self.lib_attrs.get(obj.site, {}).get(n)
                    e = _Export(n, obj, at, optional=len(args) > 2 or self.handled(node, frame))
                    if stored is None:
                        self.taken(e, node, frame)
                    out.append(stored if stored is not None else _vs(e))
                else:
                    out.append(self.attribute(_vs(obj), n, node, frame))
        return _union(*out) if out else _TOP

    def b_setattr(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if len(args) >= 3:
            names = _strings(args[1]) or []
            for obj in args[0]:
                for n in names:
                    if isinstance(obj, _Export) and n in ("argtypes", "restype"):
                        self.proto_store(frozenset({obj}), n, args[2], frame, node)
                    elif isinstance(obj, (_Inst, _Cls)):
                        attrs = self.attrs.setdefault(obj.node, {})
                        attrs[n] = _union(attrs.get(n, _EMPTY), args[2])
                    elif isinstance(obj, _Lib):
                        la = self.lib_attrs.setdefault(obj.site, {})
                        la[n] = _union(la.get(n, _EMPTY), args[2])
        return _vs(_Num(None))

    def unjudged_export(self, node: ast.AST, frame: _Frame, lib: _Lib) -> None:
        if self.recording and lib.cuda and frame.mod.index == 0:
            self.seen.unjudged.append((getattr(node, "lineno", 0),
                                       "an export taken by a name that is not a constant the linter can follow"))

    def b_find_library(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        names = _strings(args[0]) if args else None
        if names is None:
            return _union(_TOP, _vs(_Num(None)))
        at = next((v.at for v in args[0] if isinstance(v, _Str)), _NOWHERE)
        found = {_Str(n, at) for n in names} | {_Str(f"lib{n}.so", at) for n in names if "." not in n}
        return frozenset({*found, _Num(None)})

    def b_join(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if not args:
            return _TOP
        last = args[-1]
        texts = _texts(last)
        if texts is None:
            return _TOP
        heads = [_texts(a) for a in args[:-1]]
        if all(h is not None and len(h) == 1 for h in heads):
            prefix = "/".join(h[0] for h in heads if h)
            at = self.site(node, frame)
            return frozenset(_Str(f"{prefix}/{t}" if prefix else t, at) for t in texts)
        return frozenset(_Tail(t) for t in texts)

    def b_identity(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        return args[0] if args else _TOP

    def b_str(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if not args:
            return _vs(_Str(""))
        texts = _texts(args[0])
        return frozenset(_Str(t) for t in texts) if texts is not None else _TOP

    def b_seq(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if not args:
            return _vs(_Seq((), _EMPTY))
        elements = self.elements(args[0])
        if elements is not None:
            return _vs(_Seq(tuple(elements), _union(*elements) if elements else _EMPTY))
        return _vs(_Seq(None, self.any_element(args[0])))

    def b_dict(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if args:
            return args[0] if all(isinstance(v, _Map) for v in args[0]) else _TOP
        return _vs(_Map(tuple((_Str(k), v) for k, v in kwargs.items())))

    def b_enumerate(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        elements = self.elements(args[0]) if args else None
        if elements is None:
            return _vs(_Seq(None, _vs(_Seq((_TOP, self.any_element(args[0]) if args else _TOP), _TOP))))
        rows = [_vs(_Seq((_vs(_Num(i)), e), _union(_vs(_Num(i)), e))) for i, e in enumerate(elements)]
        return _vs(_Seq(tuple(rows), _union(*rows) if rows else _EMPTY))

    def b_zip(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        cols = [self.elements(a) for a in args]
        if not cols or any(c is None for c in cols):
            return _vs(_Seq(None, _vs(_Seq(tuple(self.any_element(a) for a in args), _TOP))))
        rows = [_vs(_Seq(tuple(parts), _union(*parts))) for parts in zip(*(c or [] for c in cols), strict=False)]
        return _vs(_Seq(tuple(rows), _union(*rows) if rows else _EMPTY))

    def b_byref(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        out = [_Ref(v) for v in (args[0] if args else _EMPTY) if isinstance(v, _Obj)]
        return frozenset(out) if out else _TOP

    def b_pointer_type(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if not args:
            return _TOP
        out = [_CT("ptr", "", v) for v in args[0] if isinstance(v, _CT)]
        out += [_CT("ptr", "void") for v in args[0] if isinstance(v, _Num) and v.n is None]
        return frozenset(out) if out else _vs(_CT("ptr"))

    def b_functype(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        sig = tuple(_one_ct(a) for a in args)
        return _vs(_CT("fn", "CFUNCTYPE", None, sig))

    def b_cast(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        if len(args) < 2:
            return _TOP
        out: list[_VS] = []
        for t in args[1]:
            if isinstance(t, _CT) and t.kind == "fn":
                out.append(self.apply_proto(t, args[0], node, frame))
        return _union(*out) if out else args[0]

    def b_ffi(self, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        return _vs(_Ffi(self.site(node, frame)))

    def call_method(self, m: _Method, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        of = m.of
        if isinstance(of, _Ffi):
            return self.call_ffi(of, m.name, args, node, frame)
        if isinstance(of, _Str):
            return _str_method(of, m.name, args)
        if isinstance(of, _Map):
            if m.name == "get" and args:
                got = self.item(of, args[0], node, frame)
                return _union(got, args[1]) if len(args) > 1 else _union(got, _vs(_Num(None)))
            if m.name in ("items", "keys", "values"):
                return _vs(m)
        if isinstance(of, _Seq) and m.name in ("index", "count"):
            return _TOP
        return _TOP

    def call_ffi(self, ffi: _Ffi, name: str, args: list[_VS], node: ast.Call, frame: _Frame) -> _VS:
        if name == "cdef" and args:
            if self.recording and frame.mod.index == 0:
                self.seen.cdefs.setdefault(ffi.site, []).append((self.report_site(node, frame), args[0]))
            return _vs(_Num(None))
        if name == "dlopen":
            lib = _lib_of(args[0] if args else _TOP, self.site(node, frame))
            lib = _Lib(lib.names, lib.cuda, lib.platforms, lib.site, cffi=True)
            if self.recording:
                self.seen.dlopens.setdefault(ffi.site, []).append(lib)
            return _vs(lib)
        return _TOP

    def call_ctype(self, ct: _CT, args: list[_VS], node: ast.Call, frame: _Frame) -> _VS:
        if ct.kind == "fn":
            return self.apply_proto(ct, args[0] if args else _TOP, node, frame)
        obj = _Obj(ct, self.site(node, frame))
        if args:
            self.heap[obj.site] = _union(self.heap.get(obj.site, _EMPTY), args[0])
        return _vs(obj)

    def apply_proto(self, proto: _CT, target: _VS, node: ast.Call, frame: _Frame) -> _VS:
        """A CFUNCTYPE prototype applied to a value: a driver pointer (judged), a ("name", dll) pair (an export
        bound to the prototype), or a Python callable (a callback: nothing to judge)."""
        reqs = tuple(sorted({r for v in target for r in self.requests_of(v)}))
        if reqs and self.recording and frame.mod.index == 0:
            self.seen.applied.append(_Applied(self.report_site(node, frame), proto, reqs, proto.name))
        for v in target:
            if isinstance(v, _Seq) and v.items is not None and len(v.items) == 2:
                names = _strings(v.items[0]) or []
                for lib in v.items[1]:
                    if isinstance(lib, _Lib):
                        for n in names:
                            e = frozenset({_Export(n, lib, _NOWHERE, self.site(node, frame))})
                            self.proto_store(e, "argtypes", _vs(_Seq(tuple(_vs(a) if a else _TOP for a in proto.sig[1:]),
                                                                   _TOP)), frame, node)
                            self.proto_store(e, "restype", _vs(proto.sig[0]) if proto.sig and proto.sig[0] else _TOP,
                                             frame, node)
        return _vs(_Typed(proto, target))

    def requests_of(self, v: _V) -> Iterator[int]:
        if isinstance(v, _ProcPtr) and v.req >= 0:
            yield v.req
        elif isinstance(v, _Obj):
            for c in self.heap.get(v.site, _EMPTY):
                if isinstance(c, _ProcPtr) and c.req >= 0:
                    yield c.req
        elif isinstance(v, _Ref):
            yield from self.requests_of(v.to)

    # --- the driver's functions ---
    def call_export(self, e: _Export, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame,
                    rest: bool) -> _VS:
        if e.name in _VERSION_QUERY:
            for a in args[:1]:
                for r in a:
                    if isinstance(r, _Ref):
                        self.heap[r.to.site] = _union(self.heap.get(r.to.site, _EMPTY), _vs(_Ver(_VERSION_QUERY[e.name])))
            return _TOP
        if e.name in QUERY_APIS and e.lib.cuda is not False:
            return self.request_ctypes(e.name, args, node, frame)
        if self.recording and not rest and (e.lib.cuda or (e.lib.cuda is None and _DRIVER_NAME.match(e.name))):
            self.seen.stores.append(_Store("call", self.report_site(node, frame, _vs(e)), _vs(e), list(args)))
        return _TOP

    def request_ctypes(self, api: str, args: list[_VS], node: ast.Call, frame: _Frame) -> _VS:
        """A call of the ctypes export of cuGetProcAddress(_v2) / cudaGetDriverEntryPoint(ByVersion)."""
        roles = _ctypes_roles(api, len(args))
        get = {r: (self.contents(args[i]) if i < len(args) else None) for r, i in roles.items()}
        idx = self.record_request(api, node, frame, get.get("symbol") or _TOP, get.get("version"),
                                  get.get("flags"), _status_of(get, roles), "ctypes")
        for r in get.get("pfn") or _EMPTY:
            if isinstance(r, _Ref):
                self.heap[r.to.site] = _union(self.heap.get(r.to.site, _EMPTY), _vs(_ProcPtr(idx)))
        return _TOP

    def contents(self, values: _VS) -> _VS:
        """A ctypes object passed by value stands for what it holds (`c_char_p(b"cuX")`, `c_int(3020)`)."""
        if not any(isinstance(v, _Obj) and v.ct.kind == "scalar" for v in values):
            return values
        return _union(*(self.heap.get(v.site, _TOP) if isinstance(v, _Obj) and v.ct.kind == "scalar" else _vs(v)
                        for v in values))

    def call_bindings(self, name: str, args: list[_VS], kwargs: dict[str, _VS], node: ast.Call, frame: _Frame) -> _VS:
        """A function of cuda.bindings (or cuda-python's cuda.cuda): results come back in a tuple."""
        if name in _VERSION_QUERY:
            return _vs(_Seq((_TOP, _vs(_Ver(_VERSION_QUERY[name]))), _TOP))
        if name in ("cuGetProcAddress", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"):
            roles = {"symbol": 0, "version": 1, "flags": 2} if name != "cudaGetDriverEntryPoint" else \
                {"symbol": 0, "flags": 1}
            kw = {"symbol": "symbol", "version": "cudaVersion", "flags": "flags"}
            get = {r: args[i] if i < len(args) else kwargs.get(kw[r]) for r, i in roles.items()}
            idx = self.record_request(name, node, frame, get.get("symbol") or _TOP, get.get("version"),
                                      get.get("flags"), "not_applicable", "bindings")
            return _vs(_Seq((_TOP, _vs(_ProcPtr(idx)), _TOP), _vs(_Top(), _ProcPtr(idx))))
        return _TOP

    def record_request(self, api: str, node: ast.Call, frame: _Frame, symbol: _VS, version: _VS | None,
                       flags: _VS | None, status: str, form: str) -> int:
        if not self.recording:
            return -1
        where = self.report_site(node, frame, symbol)
        own = where == self.site(node, frame)
        req = _Request(api, node, where, "" if own else f"{self.via(frame, where)} -> {api}", symbol,
                       version if version is not None else _EMPTY, flags if flags is not None else _EMPTY, status,
                       form)
        self.seen.requests.append(req)
        return len(self.seen.requests) - 1

    # --- where things are reported ---
    def report_site(self, node: ast.AST, frame: _Frame, named: frozenset[_V] = _EMPTY) -> _Site:
        """Where an observation is reported: at the outermost call of the linted file whose arguments hold the
        literal that names it (a symbol, an export: the call of a wrapper), else at the node itself. What happens
        in a module the file imports is reported here only through such a call (the name written here); else it
        is that module's own finding."""
        origins = {v.at for v in named if isinstance(v, (_Str, _Export)) and v.at[0] == self.path}
        best = self.site(node, frame)
        f: _Frame | None = frame
        while f is not None:
            if f.call is not None and f.parent is not None and f.parent.mod.index == 0 and \
                    any(_inside(o, f.call) for o in origins):
                best = self.site(f.call, f.parent)
            f = f.parent
        return best

    def via(self, frame: _Frame, where: _Site) -> str:
        """The functions between the call reported (`where`) and the request: the wrappers it goes through."""
        names: list[str] = []
        f: _Frame | None = frame
        while f is not None and f.func is not None:
            names.append(getattr(f.func.node, "name", "<lambda>"))
            if f.call is not None and f.parent is not None and self.site(f.call, f.parent) == where:
                break
            f = f.parent
        return " -> ".join(reversed(names))


# ---------------------------------------------------------------------------------------------------------------
# Helpers of the interpreter
# ---------------------------------------------------------------------------------------------------------------

_KNOWN_MODULES = frozenset({"ctypes", "ctypes.util", "ctypes.wintypes", "cffi", "os", "os.path", "sys", "platform",
                            "cuda", "cuda.bindings", "cuda.bindings.driver", "cuda.bindings.runtime", "cuda.cuda",
                            "cuda.cudart", "pathlib"})
_CT_NAMES = (*("c_void_p", "c_char_p", "c_wchar_p", "py_object", "c_char", "c_byte", "c_ubyte", "c_int8", "c_uint8",
               "c_bool", "c_short", "c_ushort", "c_int16", "c_uint16", "c_int", "c_uint", "c_int32", "c_uint32",
               "c_wchar", "c_longlong", "c_ulonglong", "c_int64", "c_uint64", "c_size_t", "c_ssize_t", "c_float",
               "c_double", "c_longdouble", "c_long", "c_ulong", "c_voidp"),)


def _ctypes_attr(attr: str) -> _VS:
    if is_ctypes_type(attr):
        return _vs(_CT("scalar", attr))
    if attr in ("CDLL", "WinDLL", "OleDLL", "PyDLL"):
        return _vs(_Builtin(f"ctypes.{attr}"))
    if attr in ("cdll", "windll", "oledll", "pydll"):
        return _vs(_Builtin(f"ctypes.{attr}"))
    if attr in ("util", "wintypes"):
        return _vs(_Mod(f"ctypes.{attr}"))
    if attr in ("Structure", "Union", "BigEndianStructure", "LittleEndianStructure"):
        return _vs(_Builtin(f"ctypes.{attr}"))
    if attr in CTYPES_FUNCTIONS:
        return _vs(_Builtin(f"ctypes.{attr}"))
    return _TOP


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"ctypes", "os"}


def _known_module(dotted: str) -> bool:
    """A module the interpreter knows by name (ctypes, cffi, os, cuda-python): it is never read from a file."""
    top = dotted.split(".")[0]
    return dotted in _KNOWN_MODULES or top in ("ctypes", "cffi", "cuda") or top in _STDLIB


_BUILTIN_FUNCTIONS = frozenset({"os.path.join", "ctypes.util.find_library", "cffi.FFI", "os.environ.get",
                                "os.getenv", "platform.system"})
_BUILTINS = frozenset({"getattr", "setattr", "hasattr", "str", "bytes", "int", "list", "tuple", "dict", "sorted",
                       "reversed", "enumerate", "zip", "len", "range", "isinstance", "print", "min", "max", "repr",
                       "bool", "set", "frozenset", "iter", "next", "super", "type", "object", "float"})


def _module_file(base: str) -> str | None:
    for cand in (base + ".py", os.path.join(base, "__init__.py")):
        try:
            st = os.stat(cand)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size <= _IMPORT_BYTES:
            return cand
    return None


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own body (not of functions or classes nested in it)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


_CATCHES = frozenset({"AttributeError", "Exception", "BaseException", "OSError", "KeyError", "LookupError"})


def _guarded_nodes(tree: ast.Module) -> frozenset[ast.AST]:
    """The nodes where a missing export is handled: the bodies of `try` statements with a handler of
    AttributeError (or any exception), and the branches of `if hasattr(...)` tests."""
    out: set[ast.AST] = set()
    for node in ast.walk(tree):
        body: list[ast.stmt] = []
        if isinstance(node, ast.Try) and any(h.type is None or _catches(h.type) for h in node.handlers):
            body = node.body
        elif isinstance(node, ast.If) and any(isinstance(n, ast.Call) and _name_of(n.func) == "hasattr"
                                              for n in ast.walk(node.test)):
            body = [*node.body, *node.orelse]
        for stmt in body:
            out.update(ast.walk(stmt))
    return frozenset(out)


def _catches(t: ast.expr) -> bool:
    if isinstance(t, ast.Tuple):
        return any(_catches(e) for e in t.elts)
    return _name_of(t) in _CATCHES


def _path(node: ast.AST) -> str:
    """`name` or `self.attr` (the paths a refinement binds); '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return ""


def _as_load(target: ast.expr) -> ast.expr | None:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Attribute):
        return ast.Attribute(target.value, target.attr, ast.Load())
    return None


def _inside(site: _Site, node: ast.AST) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1)
    end = (getattr(node, "end_lineno", 0) or 0, (getattr(node, "end_col_offset", 0) or 0) + 1)
    return start <= (site[1], site[2]) <= end


def _map_item(b: _Map, key: _VS) -> _VS:
    got = [vals for k, vals in b.items if any(_key(x) == _key(k) for x in key)]
    if got and not any(isinstance(x, _Top) for x in key):
        return _union(*got)
    return _union(*(vals for _, vals in b.items)) if b.items else _TOP


def _seq_item(b: _Seq, key: _VS) -> _VS:
    idx = [x.n for x in key if isinstance(x, _Num) and isinstance(x.n, int)]
    if b.items is None or not idx or len(idx) != len(key):
        return b.elems or _TOP
    n = len(b.items)
    if all(-n <= i < n for i in idx):
        return _union(*(b.items[i] for i in idx))
    return b.elems or _TOP


def _key(v: _V) -> _V:
    return _Str(v.s) if isinstance(v, _Str) else v


def _map_view(m: _Map, kind: str) -> list[_VS]:
    if kind == "keys":
        return [_vs(k) for k, _ in m.items]
    if kind == "values":
        return [v for _, v in m.items]
    return [_vs(_Seq((_vs(k), v), _union(_vs(k), v))) for k, v in m.items]


def _texts(values: _VS) -> list[str] | None:
    out = []
    for v in values:
        if isinstance(v, _Str):
            out.append(v.s)
        elif isinstance(v, _Num) and not isinstance(v.n, bool) and v.n is not None:
            out.append(str(v.n))
        else:
            return None
    return out or None


def _tail_of(acc: list[str], node: ast.JoinedStr, frame: _Frame) -> _VS:
    last = node.values[-1]
    if isinstance(last, ast.Constant) and isinstance(last.value, str):
        return _vs(_Tail(last.value))
    return _TOP


def _add(left: _VS, right: _VS, at: _Site) -> _VS:
    lt, rt = _texts(left), _texts(right)
    if lt is not None and rt is not None and all(isinstance(v, _Str) for v in left | right):
        return frozenset(_Str(a + b, at) for a in lt for b in rt[:_CAP])
    if rt is not None and all(isinstance(v, _Str) for v in right):
        return frozenset(_Tail(b) for b in rt)
    seqs = [(a, b) for a in left for b in right if isinstance(a, _Seq) and isinstance(b, _Seq)]
    if seqs:
        out = []
        for a, b in seqs:
            items = a.items + b.items if a.items is not None and b.items is not None else None
            out.append(_Seq(items, _union(a.elems, b.elems)))
        return frozenset(out)
    nums = _arith(ast.Add(), left, right)
    return nums if nums is not None else _TOP


def _percent(left: _VS, right: _VS, at: _Site) -> _VS:
    fmts = _texts(left)
    if fmts is None or not all(isinstance(v, _Str) for v in left):
        return _arith(ast.Mod(), left, right) or _TOP
    out: list[_V] = []
    for r in right:
        parts = r.items if isinstance(r, _Seq) and r.items is not None else (_vs(r),)
        texts = [_texts(p) for p in parts]
        if any(t is None or len(t) != 1 for t in texts):
            return _TOP
        for f in fmts:
            try:
                out.append(_Str(f % tuple(t[0] for t in texts if t), at))
            except (TypeError, ValueError):
                return _TOP
    return frozenset(out) if out else _TOP


def _ints(values: _VS) -> list[int] | None:
    """The integers of a set, or None when one of its values is not a known integer."""
    out = [v.n for v in values if isinstance(v, _Num) and isinstance(v.n, int) and not isinstance(v.n, bool)]
    return out if out and len(out) == len(values) else None


def _arith(op: ast.operator, left: _VS, right: _VS) -> _VS | None:
    """Integer arithmetic on known integers (a version computed from a constant stays that version)."""
    ls, rs = _ints(left), _ints(right)
    if ls is None or rs is None:
        versions = frozenset(v for v in left | right if isinstance(v, _Ver))
        return versions or None
    fn = _ARITH.get(type(op))
    if fn is None:
        return None
    got = {fn(a, b) for a in ls for b in rs}
    return frozenset(_Num(g) for g in got if g is not None) or None


def _const(v: _V) -> object:
    """A value's constant for comparisons (`_NOCONST` when it is not one)."""
    if isinstance(v, _Str):
        return v.s
    if isinstance(v, _Num):
        return v.n
    if isinstance(v, _Seq) and v.items is not None and all(len(i) == 1 for i in v.items):
        items = tuple(_const(next(iter(i))) for i in v.items)
        return _NOCONST if _NOCONST in items else items
    if isinstance(v, _Map):
        keys = tuple(_const(k) for k, _ in v.items)
        return _NOCONST if _NOCONST in keys else frozenset(keys)
    return _NOCONST


_NOCONST = object()
_NEVER_NONE = (_Lib, _Export, _Obj, _Func, _Cls, _Inst, _Mod, _CT, _Str, _Seq, _Map)
_CMP: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: bool(a == b), ast.NotEq: lambda a, b: bool(a != b), ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Is: lambda a, b: a is None and b is None,
    ast.IsNot: lambda a, b: not (a is None and b is None),
}


def _compare(op: ast.cmpop, left: _VS, right: _VS) -> bool | None:
    """A comparison of constants, when every pair of values gives one answer."""
    fn = _CMP.get(type(op))
    if fn is None or not left or not right or len(left) * len(right) > 64:
        return None
    if isinstance(op, (ast.Is, ast.IsNot)):
        return _is_none(op, left, right)
    pairs = [(_const(a), _const(b)) for a in left for b in right]
    if any(a is _NOCONST or b is _NOCONST for a, b in pairs):
        return None
    try:
        answers = {fn(a, b) for a, b in pairs}
    except TypeError:
        return None
    return answers.pop() if len(answers) == 1 else None


def _is_none(op: ast.cmpop, left: _VS, right: _VS) -> bool | None:
    """`x is None` / `x is not None`, when each value of x is None or an object that is never None."""
    if not all(_none(v) for v in right):
        return None
    if not all(_none(v) or isinstance(v, _NEVER_NONE) for v in left):
        return None
    answers = {_none(v) == isinstance(op, ast.Is) for v in left}
    return answers.pop() if len(answers) == 1 else None


def _none(v: _V) -> bool:
    return isinstance(v, _Num) and v.n is None


def _truthy(values: _VS) -> bool | None:
    consts = [_const(v) for v in values]
    if not consts or _NOCONST in consts:
        return None
    answers = {bool(c) for c in consts}
    return answers.pop() if len(answers) == 1 else None


_ARITH: dict[type, Callable[[int, int], int | None]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b if b else None, ast.Mod: lambda a, b: a % b if b else None,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b}


def _falsy(v: _V) -> bool:
    return (isinstance(v, _Num) and not v.n) or (isinstance(v, _Str) and not v.s)


def _single_texts(args: Iterable[_VS]) -> list[str] | None:
    """The one string each argument is, or None when one of them is not exactly one known string."""
    out = []
    for a in args:
        t = _texts(a)
        if t is None or len(t) != 1:
            return None
        out.append(t[0])
    return out


def _str_method(s: _Str, name: str, args: list[_VS]) -> _VS:
    """What a method of a known string gives (encode, format, join, replace ...); unknown otherwise."""
    if name in ("encode", "decode", "strip", "rstrip", "lstrip", "upper", "lower"):
        text = s.s.upper() if name == "upper" else s.s.lower() if name == "lower" else s.s
        return _vs(_Str(text, s.at))
    if name == "join" and args:
        seqs = [v for v in args[0] if isinstance(v, _Seq) and v.items is not None]
        parts = _single_texts(seqs[0].items or ()) if len(seqs) == 1 else None
        return _vs(_Str(s.s.join(parts), s.at)) if parts is not None else _TOP
    texts = _single_texts(args)
    if texts is None:
        return _TOP
    try:
        if name == "format":
            return _vs(_Str(s.s.format(*texts), s.at))
        if name == "replace" and len(texts) >= 2:
            return _vs(_Str(s.s.replace(texts[0], texts[1]), s.at))
    except (IndexError, KeyError, ValueError):
        pass
    return _TOP


def _one_ct(values: _VS) -> _CT | None:
    cts = [v for v in values if isinstance(v, _CT)]
    if len(cts) == 1 and len(values) == 1:
        return cts[0]
    if len(values) == 1 and isinstance(next(iter(values)), _Num) and next(iter(values)).n is None:   # type: ignore[attr-defined]
        return _CT("void", "None")
    return None


def _ctypes_roles(api: str, nargs: int) -> dict[str, int]:
    """Where each role of a request is among a ctypes call's arguments."""
    if api == "cudaGetDriverEntryPoint":
        return {"symbol": 0, "pfn": 1, "flags": 2, "status": 3}
    if api == "cuGetProcAddress" and nargs == 4:
        return {"symbol": 0, "pfn": 1, "version": 2, "flags": 3}
    return {"symbol": 0, "pfn": 1, "version": 2, "flags": 3, "status": 4}


def _status_of(get: dict[str, _VS | None], roles: dict[str, int]) -> str:
    if "status" not in roles:
        return "not_applicable"
    st = get.get("status")
    if st is None:
        return "missing"
    if all(isinstance(v, _Num) and v.n in (None, 0) for v in st):
        return "null"
    return "given"


_STATEMENTS: dict[type, Callable[..., _Env]] = {
    ast.Expr: _Interp.s_expr, ast.Assign: _Interp.s_assign, ast.AnnAssign: _Interp.s_annassign,
    ast.AugAssign: _Interp.s_augassign, ast.If: _Interp.s_if, ast.For: _Interp.s_for, ast.AsyncFor: _Interp.s_for,
    ast.While: _Interp.s_while, ast.Try: _Interp.s_try, ast.With: _Interp.s_with, ast.AsyncWith: _Interp.s_with,
    ast.Return: _Interp.s_return, ast.Raise: _Interp.s_raise, ast.Break: _Interp.s_break,
    ast.Continue: _Interp.s_continue, ast.FunctionDef: _Interp.s_def, ast.AsyncFunctionDef: _Interp.s_def,
    ast.ClassDef: _Interp.s_class, ast.Import: _Interp.s_import, ast.ImportFrom: _Interp.s_importfrom,
    ast.Global: _Interp.s_global, ast.Nonlocal: _Interp.s_global,
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = _Interp.s_try
_EXPRESSIONS: dict[type, Callable[..., _VS]] = {
    ast.Constant: _Interp.e_const, ast.Name: _Interp.e_name, ast.Attribute: _Interp.e_attr,
    ast.Subscript: _Interp.e_subscript, ast.JoinedStr: _Interp.e_joined, ast.BinOp: _Interp.e_binop,
    ast.BoolOp: _Interp.e_boolop, ast.IfExp: _Interp.e_ifexp, ast.Tuple: _Interp.e_seq, ast.List: _Interp.e_seq,
    ast.Set: _Interp.e_seq, ast.Dict: _Interp.e_dict, ast.Lambda: _Interp.e_lambda, ast.ListComp: _Interp.e_comp,
    ast.SetComp: _Interp.e_comp, ast.GeneratorExp: _Interp.e_comp, ast.DictComp: _Interp.e_comp,
    ast.Call: _Interp.e_call, ast.NamedExpr: _Interp.e_named, ast.Await: _Interp.e_other,
    ast.Compare: _Interp.e_other, ast.UnaryOp: _Interp.e_other,
}
_BUILTIN_CALLS: dict[str, Callable[..., _VS]] = {
    "min": lambda self, args, kwargs, node, frame: _minmax(min, args),
    "max": lambda self, args, kwargs, node, frame: _minmax(max, args),
    "getattr": _Interp.b_getattr, "setattr": _Interp.b_setattr, "ctypes.util.find_library": _Interp.b_find_library,
    "os.path.join": _Interp.b_join, "str": _Interp.b_str, "bytes": _Interp.b_identity, "int": _Interp.b_identity,
    "list": _Interp.b_seq, "tuple": _Interp.b_seq, "sorted": _Interp.b_seq, "dict": _Interp.b_dict,
    "enumerate": _Interp.b_enumerate, "zip": _Interp.b_zip, "ctypes.byref": _Interp.b_byref,
    "ctypes.pointer": _Interp.b_byref, "ctypes.addressof": _Interp.b_byref, "ctypes.POINTER": _Interp.b_pointer_type,
    "ctypes.CFUNCTYPE": _Interp.b_functype, "ctypes.WINFUNCTYPE": _Interp.b_functype,
    "ctypes.PYFUNCTYPE": _Interp.b_functype, "ctypes.cast": _Interp.b_cast, "cffi.FFI": _Interp.b_ffi,
}


# ---------------------------------------------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------------------------------------------


class _Facts:
    """Turns what the interpreter observed into the file's facts."""

    def __init__(self, it: _Interp, tree: ast.Module, unit: Unit) -> None:
        self.it, self.tree, self.unit = it, tree, unit
        self.optional = False
        self._parents: dict[ast.AST, ast.AST] | None = None

    @property
    def parents(self) -> dict[ast.AST, ast.AST]:
        """Each node's parent (made on first use: only files with requests need it)."""
        if self._parents is None:
            self._parents = {}
            for node in ast.walk(self.tree):
                for child in ast.iter_child_nodes(node):
                    self._parents[child] = node
        return self._parents

    def build(self) -> None:
        self.requests()
        self.applied()
        self.exports()
        self.cffi()
        self.names()
        if self.it.note:
            self.unit.notes.append(self.it.note)
        self.unit.notes.extend(sorted(self.it.notes))
        unjudged = sorted(set(self.it.seen.unjudged))
        self.unit.unjudged.extend(unjudged)
        self.unit.requests += len(unjudged)
        self.unit.queries.sort(key=lambda q: (q.line, q.col))

    # --- requests ---
    def requests(self) -> None:
        by_site: dict[tuple[_Site, str], Query] = {}
        for i, r in enumerate(self.it.seen.requests):
            if r.where[0] != self.it.path:
                continue
            symbols = [v for v in r.symbol if isinstance(v, _Str)]
            if len(symbols) != len(r.symbol) or not symbols:
                self.unjudged_request(r)
                continue
            for s in symbols:
                key = (r.where, s.s)
                q = by_site.get(key)
                if q is None:
                    q = by_site[key] = self.query(r, s, i)
                    self.unit.queries.append(q)
                    self.unit.requests += 1
                    self.unit.judged += 1
                else:
                    _merge_versions(q, r.version)

    def unjudged_request(self, r: _Request) -> None:
        line = r.where[1]
        if any(line == u[0] for u in self.unit.unjudged):
            return
        why = "its symbol is not a constant the linter can follow"
        fn = self.scope_of(r.node)
        own = (r.node.lineno, r.node.col_offset + 1) == (r.where[1], r.where[2])
        params = {a.arg for a in (*_params(fn).args, *_params(fn).kwonlyargs)} if own and fn is not self.tree else set()
        arg0 = r.node.args[0] if r.node.args else None
        if arg0 is not None and _path(arg0).split(".")[0] in params:
            why = f"its symbol is a parameter of {getattr(fn, 'name', 'a lambda')}, which no call in this file names"
        self.unit.unjudged.append((line, why))
        self.unit.requests += 1

    def query(self, r: _Request, s: _Str, index: int) -> Query:
        q = Query(api=r.api, line=r.where[1], col=r.where[2], symbol=s.s, via=r.via)
        if s.at[0] == self.it.path:
            q.symbol_line, q.symbol_col = s.at[1], s.at[2]
        own = (r.node.lineno, r.node.col_offset + 1) == (r.where[1], r.where[2])
        if r.api != "cudaGetDriverEntryPoint":
            _set_version(q, r.version, r.node if own else None)
        else:
            q.version_kind = "runtime"
        self.flags(q, r, own)
        q.status = r.status
        if r.node in self.parents:             # the request's own call, here: what is done with its results
            self.results(q, r)
        return q

    def flags(self, q: Query, r: _Request, own: bool) -> None:
        nums = [v.n for v in r.flags if isinstance(v, _Num) and isinstance(v.n, int)]
        index = {("bindings", "cudaGetDriverEntryPoint"): 1, ("ctypes", "cudaGetDriverEntryPoint"): 2}.get(
            (r.form, r.api), 2 if r.form == "bindings" else 3)
        arg = _arg(r.node, index, "flags")
        if own and arg is not None:
            q.flags_text = ast.unparse(arg)
        if len(nums) == 1 and len(r.flags) == 1:
            name = {v: k for k, v in FLAGS.items()}.get(nums[0], "")
            q.flags_mode = name
            q.flags_text = q.flags_text or str(nums[0])
        elif q.flags_text:
            q.flags_mode = flag_mode(q.flags_text.split(".")[-1])

    def results(self, q: Query, r: _Request) -> None:
        parent = self.parents.get(r.node)
        scope = self.scope_of(r.node)
        if isinstance(parent, ast.Expr):
            q.result_used = False
            return
        if r.form == "bindings":
            if isinstance(parent, ast.Assign):
                q.unchecked = self.unchecked_tuple(parent, scope)
            return
        names = [t.id for t in getattr(parent, "targets", ()) if isinstance(t, ast.Name)] \
            if isinstance(parent, ast.Assign) else []
        unchecked = [f"{n} (the CUresult)" for n in names if parent is None or not self.tested_after(n, scope, parent)]
        st = _arg(r.node, 4, "")
        inner = st.args[0] if isinstance(st, ast.Call) and st.args else None
        if isinstance(inner, ast.Name) and q.status == "given" and not self.tested_after(inner.id, scope, r.node):
            unchecked.append(f"{inner.id} (the query result)")
        q.unchecked = tuple(unchecked)

    def unchecked_tuple(self, assign: ast.Assign, scope: ast.AST) -> tuple[str, ...]:
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
            elif not self.tested_after(e.id, scope, assign):
                out.append(f"{e.id} ({role})")
        return tuple(out)

    def scope_of(self, node: ast.AST) -> ast.AST:
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            p = self.parents.get(p)
        return p if p is not None else self.tree

    def tested_after(self, name: str, scope: ast.AST, after: ast.AST) -> bool:
        """Whether `name` is read after `after` in a test, a comparison, a return, a raise or a call's argument."""
        end = (getattr(after, "end_lineno", 0) or 0, getattr(after, "end_col_offset", 0) or 0)
        for n in ast.walk(scope):
            if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
                continue
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

    # --- CFUNCTYPE applied to a request's pointer ---
    def applied(self) -> None:
        reqs = self.it.seen.requests
        for a in self.it.seen.applied:
            if a.where[0] != self.it.path:
                continue
            judged = False
            for i in a.reqs:
                q = self.judgeable(reqs[i])
                if q is None:
                    continue
                judged = True
                sym, pin, fl = q
                self.unit.py_protos.append(PyProto(
                    a.proto.name, a.where[1], a.where[2], symbol=sym, version=pin, flags=fl, api=reqs[i].api,
                    args=tuple(_arg_class(c, "") for c in a.proto.sig[1:]),
                    restype=_arg_class(a.proto.sig[0], "") if a.proto.sig else None,
                    pointees=tuple(_pointee(c, "") for c in a.proto.sig[1:])))
            if not judged:
                self.unit.handwritten_protos.append(
                    (a.what, a.where[1], a.where[2], "applied to the pointer of an entry-point request"))

    @staticmethod
    def judgeable(r: _Request) -> tuple[str, int, int | None] | None:
        syms = [v.s for v in r.symbol if isinstance(v, _Str)]
        pins = [v.n for v in r.version if isinstance(v, _Num) and isinstance(v.n, int) and not isinstance(v.n, bool)]
        if len(syms) != 1 or len(r.symbol) != 1 or len(pins) != 1 or len(r.version) != 1:
            return None
        fl = [v.n for v in r.flags if isinstance(v, _Num) and isinstance(v.n, int)]
        return syms[0], pins[0], (fl[0] if len(fl) == 1 and len(r.flags) == 1 else None)

    # --- ctypes exports ---
    def exports(self) -> None:
        groups: dict[tuple[str, _Site], list[_Store]] = {}
        for st in self.it.seen.stores:
            for e in st.exports:
                if isinstance(e, _Export) and _judged_lib(e):
                    groups.setdefault((e.name, e.copy), []).append(st)
        for (name, copy), stores in groups.items():
            self.binding(name, copy, stores)
        n = _count_bindings(frozenset(e.name for e in st.exports if isinstance(e, _Export) and _judged_lib(e))
                            for st in self.it.seen.stores if st.where[0] == self.it.path)
        self.unit.requests += n
        self.unit.judged += n

    def binding(self, name: str, copy: _Site, stores: list[_Store]) -> None:
        """The prototypes of one export bound by a name that may hold either of several handles (a platform's
        branch): one binding."""
        mine = [x for s in stores for x in s.exports if isinstance(x, _Export) and x.name == name and x.copy == copy]
        self.optional = all(x.optional for x in mine)
        libs = {x.lib for x in mine}
        lib = next(iter(_merge_libs([replace(x, site=_NOWHERE) for x in libs])))
        declared = _union(*(self.it.proto_of.get((name, x.site, copy, "argtypes"), _EMPTY) for x in libs))
        self.export_facts(replace(mine[0], lib=lib), stores, declared or None)

    def export_facts(self, e: _Export, stores: list[_Store], declared: _VS | None) -> None:
        mine = {k: [s for s in stores if s.kind == k and s.where[0] == self.it.path]
                for k in ("argtypes", "restype", "call", "take")}
        res = _union(*(s.value for s in mine["restype"])) if mine["restype"] else None
        b = _Binding(e, sorted(e.lib.platforms) or ["linux"], _alternatives(e, stores),
                     _where(e, self.it.path, stores), min((len(c.value) for c in mine["call"]), default=None),
                     _one_ct(res) if res is not None else None, res is not None, self.optional)
        made = bool(mine["argtypes"]) or bool(mine["restype"])
        for s in mine["argtypes"]:
            for cts in (_seq_cts(seq) for seq in s.value):
                if cts is not None:
                    self.add_proto(b, "ctypes argtypes", s.where, cts)
        if not mine["argtypes"] and mine["restype"]:
            self.add_proto(b, "ctypes restype", mine["restype"][0].where, None)
        for c in mine["call"]:
            made |= self.call_proto(b, c, declared)
        if not made and mine["take"]:
            t = min(mine["take"], key=lambda s: (s.where[1], s.where[2]))
            self.unit.py_protos.append(PyProto("attribute", t.where[1], t.where[2], export=e.name,
                                               handle=_handle_text(e), alternatives=b.alternatives, where=b.where,
                                               optional=b.optional))

    def add_proto(self, b: _Binding, maker: str, where: _Site, cts: tuple[_CT | None, ...] | None) -> None:
        """An argtypes (or restype) prototype, once per platform where its classes differ (c_long)."""
        seen: dict[tuple[Any, ...], str] = {}
        for plat in b.platforms:
            args = tuple(_arg_class(c, plat) for c in cts) if cts is not None else None
            pointees = tuple(_pointee(c, plat) for c in cts) if cts is not None else ()
            rt = _arg_class(b.restype, plat) if b.has_restype else None
            seen.setdefault((args, pointees, rt), plat)
        longs = any(_ct_long(c) for c in cts or ())
        for (args, pointees, rt), plat in seen.items():
            self.unit.py_protos.append(PyProto(
                maker, where[1], where[2], export=b.export.name, handle=_handle_text(b.export), args=args, restype=rt,
                pointees=pointees, fewest_args=b.fewest, platform=b.platform(plat, len(seen), longs),
                alternatives=b.alternatives, where=b.where, optional=b.optional))

    def call_proto(self, b: _Binding, c: _Store, declared: _VS | None) -> bool:
        """A call: each argument passed by its own ctypes type (no argtypes), or, where argtypes take any pointer,
        what the pointer points to. False when the call says nothing the prototype does not."""
        declared_cts = _declared(declared)
        if declared is not None and declared_cts is None:
            return False
        seen: dict[tuple[Any, ...], str] = {}
        for plat in b.platforms:
            args = tuple(_value_class(a, plat) for a in c.value) if declared_cts is None else None
            pointees = tuple(_value_pointee(a, plat, declared_cts, i) for i, a in enumerate(c.value))
            if args is not None or any(p is not None for p in pointees):
                seen.setdefault((args, pointees), plat)   # with argtypes, only what an untyped pointer points to
        longs = any(_is_long(v) for a in c.value for v in a)
        for (args, pointees), plat in seen.items():
            self.unit.py_protos.append(PyProto(
                "call", c.where[1], c.where[2], export=b.export.name, handle=_handle_text(b.export), args=args,
                pointees=pointees, platform=b.platform(plat, len(seen), longs), alternatives=b.alternatives,
                where=b.where, optional=b.optional))
        return bool(seen) or declared_cts is not None

    # --- cffi ---
    def cffi(self) -> None:
        for ffi, cdefs in self.it.seen.cdefs.items():
            libs = self.it.seen.dlopens.get(ffi, [])
            if not any(lib.cuda for lib in libs):
                continue
            for where, texts in cdefs:
                for t in texts:
                    if isinstance(t, _Str):
                        self.cdef(where, t.s)

    def cdef(self, where: _Site, src: str) -> None:
        text = _C_COMMENT.sub(" ", src[:_CDEF_LIMIT])
        typedefs = tuple((m.group(2), m.group(1).strip()) for m in _C_TYPEDEF.finditer(text))
        for m in _C_DECL.finditer(text):
            head = text[max(0, m.start() - 200):m.start()]
            ret = re.split(r"[;}\n]", head)[-1].strip()
            params = [p.strip() for p in m.group(2).split(",") if p.strip() and p.strip() != "void"]
            self.unit.py_protos.append(PyProto(
                "cffi cdef", where[1], where[2], export=m.group(1), handle="ffi.dlopen",
                c_args=tuple(_c_param_type(p) for p in params), c_ret=ret, c_typedefs=typedefs))

    # --- names ---
    def names(self) -> None:
        """Flag constants named (CE008), and suffixed driver names taken from objects that are not a handle the
        interpreter followed (`driver.cuMemAlloc_v2`): exports named by their exported name, judged as such."""
        taken = {(p.export, p.line) for p in self.unit.py_protos}
        taken |= {(st_e.name, s.where[1]) for s in self.it.seen.stores for st_e in s.exports
                  if isinstance(st_e, _Export)}
        for node in ast.walk(self.tree):
            got = _named(node)
            if got is None:
                continue
            name, at, handle = got
            if name in FLAG_MODES and not (isinstance(node, (ast.Name, ast.Attribute)) and
                                           isinstance(node.ctx, ast.Store)):
                self.unit.flag_uses.append((name, at[0], at[1]))
            elif not isinstance(node, ast.Name) and SUFFIXED_EXPORT_RE.match(name) and name not in QUERY_APIS and \
                    (name, at[0]) not in taken:
                taken.add((name, at[0]))
                self.unit.py_protos.append(PyProto("attribute", at[0], at[1], export=name, handle=handle))


def _named(node: ast.AST) -> tuple[str, tuple[int, int], str] | None:
    """(name, where it is written, the object it is taken from) of a Name, an Attribute or a getattr's constant."""
    if isinstance(node, ast.Name):
        return node.id, (node.lineno, node.col_offset + 1), ""
    if isinstance(node, ast.Attribute):
        return node.attr, (node.lineno, node.col_offset + 1), _name_of(node.value)
    if isinstance(node, ast.Call) and _name_of(node.func) == "getattr" and len(node.args) >= 2:
        arg = node.args[1]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value, (arg.lineno, arg.col_offset + 1), ""
    return None


_TESTS = (ast.If, ast.While, ast.Assert, ast.Compare, ast.BoolOp, ast.IfExp, ast.Return, ast.Call, ast.UnaryOp,
          ast.Raise, ast.match_case, ast.Match)
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


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _arg(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if keyword and k.arg == keyword), None)


def _set_version(q: Query, values: _VS, node: ast.Call | None) -> None:
    if node is not None:
        arg = _arg(node, 1 if len(node.args) <= 3 and not _is_ctypes_form(node) else 2, "cudaVersion")
        q.version_text = ast.unparse(arg) if arg is not None else ""
    _merge_versions(q, values)


def _is_ctypes_form(node: ast.Call) -> bool:
    return len(node.args) >= 4


def _merge_versions(q: Query, values: _VS) -> None:
    kinds = {v.kind for v in values if isinstance(v, _Ver)}
    pins = sorted({v.n for v in values if isinstance(v, _Num) and isinstance(v.n, int) and not isinstance(v.n, bool)}
                  | set(q.pins))
    if not values and not q.pins:
        q.version_kind = "missing"
        return
    for k in ("driver", "toolkit", "runtime"):
        if k in kinds or q.version_kind == k:
            q.version_kind = "driver" if k == "runtime" else k
            q.pins = ()
            q.version = None
            return
    if pins and all(isinstance(v, _Num) for v in values):
        q.version_kind = "literal"
        q.pins = tuple(p for p in pins if p > 0)
        q.version = q.pins[0] if len(q.pins) == 1 else None
    else:
        q.version_kind = "other"


def _decorated(c: _V) -> bool:
    fn = c.func if isinstance(c, _Bound) else c
    return isinstance(fn, _Func) and bool(getattr(fn.node, "decorator_list", ()))


def _minmax(pick: Callable[[list[int]], int], args: list[_VS]) -> _VS:
    """min/max of versions: a driver's version among them keeps the result the driver's (what it binds depends on
    the driver); of known integers, the one picked."""
    versions = frozenset(v for a in args for v in a if isinstance(v, _Ver))
    if versions:
        return versions
    ints = [_ints(a) for a in args]
    if len(args) > 1 and all(i is not None and len(i) == 1 for i in ints):
        return _vs(_Num(pick([i[0] for i in ints if i])))
    return _TOP


def _is_property(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_name_of(d) in ("property", "cached_property") for d in fn.decorator_list)


def _repeat(left: _VS, right: _VS) -> _VS | None:
    """`[T] * n` with a known sequence and count: the items repeated."""
    counts = _ints(right)
    seqs = [v for v in left if isinstance(v, _Seq) and v.items is not None]
    if counts is None or len(counts) != 1 or len(seqs) != 1 or len(left) != 1 or not 0 <= counts[0] <= _UNROLL:
        return None
    items = (seqs[0].items or ()) * counts[0]
    return _vs(_Seq(items, seqs[0].elems if items else _EMPTY))


def _ct_long(ct: _CT | None) -> bool:
    """Whether a ctypes type is (or points to) c_long, whose width is the platform's."""
    while ct is not None:
        if ct.kind == "scalar" and ct.name in ("c_long", "c_ulong"):
            return True
        ct = ct.to
    return False


def _is_long(v: _V) -> bool:
    return _ct_long(v.ct) if isinstance(v, _Obj) else _ct_long(v.to.ct) if isinstance(v, _Ref) else False


def _longest(values: _VS) -> int:
    """The number of elements of the longest constant sequence or dictionary among the values."""
    sizes = [len(v.items) for v in values if isinstance(v, (_Seq, _Map)) and v.items is not None]
    sizes += [len(v.of.items) for v in values if isinstance(v, _Method) and isinstance(v.of, _Map)]
    return max(sizes, default=0)


def _count_bindings(sets: Iterable[frozenset[str]]) -> int:
    """How many bindings of exports a file makes: each set of names bound at one place, the sets that another
    contains (one name of a loop over suffixes, taken again to be called) counted in it."""
    distinct = {b for b in sets if b}
    by_name: dict[str, list[frozenset[str]]] = {}
    for b in distinct:
        for name in b:
            by_name.setdefault(name, []).append(b)
    return sum(1 for b in distinct if not any(len(o) > len(b) and b < o for o in by_name[next(iter(b))]))


@dataclass(frozen=True)
class _Binding:
    """What every prototype of one export shares: the platforms its handle loads on, the exports bound with it,
    where its name came from, the fewest arguments a call passes, its restype."""

    export: _Export
    platforms: list[str]
    alternatives: tuple[str, ...]
    where: str
    fewest: int | None
    restype: _CT | None
    has_restype: bool
    optional: bool

    def platform(self, plat: str, variants: int, longs: bool) -> str:
        """The platform a prototype names: when its classes differ by platform, or a Windows-only c_long."""
        return plat if variants > 1 or (longs and self.platforms == ["windows"]) else ""


def _declared(declared: _VS | None) -> tuple[_CT | None, ...] | None:
    """The argtypes an export was given, when they are one known list."""
    if declared is None or len(declared) != 1:
        return None
    v = next(iter(declared))
    return _seq_cts(v) if isinstance(v, _Seq) else None


def _value_pointee(values: _VS, plat: str, declared: tuple[_CT | None, ...] | None, i: int) -> str | None:
    """What a call's argument points to (byref(x)), where no argtypes type the parameter as a pointer to
    something (a typed pointer parameter: ctypes refuses another type at the call)."""
    if declared is not None:
        ct = declared[i] if i < len(declared) else None
        if not (ct is not None and ct.kind == "scalar" and ctypes_width(ct.name) == "ptr"):
            return None
    refs = [v for v in values if isinstance(v, _Ref)]
    if len(refs) != 1 or len(values) != 1:
        return None
    return _width_of(refs[0].to.ct, plat)


def _judged_lib(e: _Export) -> bool:
    if e.lib.cffi:
        return False
    if e.lib.cuda:
        return _DRIVER_NAME.match(e.name) is not None
    return e.lib.cuda is None and _DRIVER_NAME.match(e.name) is not None


def _handle_text(e: _Export) -> str:
    named = sorted(n for n in e.lib.names if n)
    return "CDLL(" + (repr(named[0]) if len(named) == 1 else "...") + ")" if named else "a library handle"


def _alternatives(e: _Export, stores: list[_Store]) -> tuple[str, ...]:
    """The other exports bound at the same place as `e` (a loop over suffixes, a getattr default, a fallback):
    which of them a driver gives is the catalog's to say."""
    return tuple(sorted({o.name for s in stores for o in s.exports if isinstance(o, _Export) and o.name != e.name}))


def _where(e: _Export, path: str, stores: list[_Store]) -> str:
    parts = []
    if e.at[0] and (e.at[0] != path or all(e.at[1] != s.where[1] for s in stores if s.kind != "take")):
        where = os.path.basename(e.at[0]) if e.at[0] != path else "line"
        parts.append(f"named at {where}{':' if e.at[0] != path else ' '}{e.at[1]}")
    return f" ({', '.join(parts)})" if parts else ""


def _seq_cts(v: _V) -> tuple[_CT | None, ...] | None:
    if isinstance(v, _Seq) and v.items is not None:
        return tuple(_one_ct(i) for i in v.items)
    return None


def _arg_class(ct: _CT | None, plat: str) -> str | None:
    if ct is None:
        return None
    if ct.kind in ("ptr", "fn", "array"):
        return "ptr"
    if ct.kind == "void":
        return "void"
    if ct.kind == "scalar":
        return ctypes_class(ct.name, plat)
    return None


def _width_of(ct: _CT | None, plat: str) -> str | None:
    if ct is None:
        return None
    if ct.kind == "scalar":
        return ctypes_width(ct.name, plat)
    if ct.kind in ("ptr", "fn"):
        return "ptr"
    if ct.kind == "array":
        return _width_of(ct.to, plat)
    return None


def _pointee(ct: _CT | None, plat: str) -> str | None:
    if ct is None or ct.kind != "ptr" or ct.to is None:
        return None
    return _width_of(ct.to, plat)


def _value_class(values: _VS, plat: str) -> str | None:
    """How ctypes passes an argument without argtypes, by its value: a ctypes object by its type, byref as a
    pointer, None as a null pointer; a Python int as a C int, which is left unknown (ctypes refuses one that does
    not fit)."""
    if len(values) != 1:
        return None
    v = next(iter(values))
    if isinstance(v, _Obj):
        return _arg_class(v.ct, plat) if v.ct.kind in ("scalar", "ptr") else None
    if isinstance(v, (_Ref, _ProcPtr)):
        return "ptr"
    if isinstance(v, _Num) and v.n is None:
        return "ptr"
    return None


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


def extract(text: str, path: str, read: Callable[[str], str] | None = None) -> Unit:
    """Parse one Python file into facts (a file that does not parse is a problem, reported). `read` reads another
    file of the project (a module the file imports); without it, imports are not followed."""
    unit = Unit(path=path, lang="python", suppressions=suppressions(text), lines=text.count("\n") + 1,
                engine="ast")
    tree, unit.problem = _parse(text, path)
    if tree is None:
        unit.parse_errors = 1
        return unit
    it = _Interp(path, read)
    it.run(it.load_main(tree))
    _Facts(it, tree, unit).build()
    _cuentry_requests(tree, unit, it)
    unit.queries.sort(key=lambda q: (q.line, q.col))
    return unit


# ---------------------------------------------------------------------------------------------------------------
# cuentry's own API: Driver.call / resolve, required() / optional()
# ---------------------------------------------------------------------------------------------------------------

_CUENTRY_METHODS = ("call", "resolve")
_CUENTRY_ENTRIES = ("required", "optional")


def _cuentry_requests(tree: ast.Module, unit: Unit, it: _Interp) -> None:
    if not any(isinstance(n, (ast.Import, ast.ImportFrom)) and "cuentry" in ast.unparse(n) for n in tree.body):
        return
    main = it.modules[0]
    for call in ast.walk(tree):
        if isinstance(call, ast.Call):
            q = _cuentry_query(call, _Frame(main, main.env), it)
            if q is not None:
                unit.queries.append(q)
                unit.requests += 1
                unit.judged += 1


def _cuentry_query(call: ast.Call, frame: _Frame, it: _Interp) -> Query | None:
    fname = _name_of(call.func)
    method = fname in _CUENTRY_METHODS and isinstance(call.func, ast.Attribute)
    if not (method or fname in _CUENTRY_ENTRIES) or not call.args:
        return None
    arg0 = call.args[0]
    sym = arg0.value if isinstance(arg0, ast.Constant) and isinstance(arg0.value, str) else None
    if sym is None or not sym.startswith("cu"):
        return None
    q = Query(api="cuGetProcAddress_v2", line=call.lineno, col=call.col_offset + 1, symbol=sym,
              symbol_line=arg0.lineno, symbol_col=arg0.col_offset + 1, via=f"cuentry {fname}()",
              status="not_applicable")
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    ver = call.args[1] if len(call.args) > 1 else kw.get("version")
    if ver is not None:
        q.version_text = ast.unparse(ver)
        _merge_versions(q, it.eval(ver, frame))
    if method:
        _cuentry_stream(q, call.args[2] if len(call.args) > 2 else kw.get("stream"), fname)
    return q


def _cuentry_stream(q: Query, stream: ast.expr | None, method: str) -> None:
    """The stream mode of a cuentry call: `call` defaults to legacy; `resolve` has no default."""
    text = stream.value if isinstance(stream, ast.Constant) and isinstance(stream.value, str) else \
        ("legacy" if method == "call" and stream is None else None)
    q.flags_text = f"stream={text!r}" if text else "no stream"
    q.flags_mode = text if text in ("legacy", "per_thread") else ""

