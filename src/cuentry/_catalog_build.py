"""Catalog generator: NVIDIA's typedef headers in, cuentry's catalog data out.

The headers are run through the system C preprocessor (with stand-ins for the
libc, GL, EGL and VDPAU headers, shipped in `_data/fake_include`) and parsed
with pycparser. Only facts are kept: names, numbers and C types as rendered by
pycparser's generator. No header text or comment is copied.

Two header passes per toolkit: Linux (the main one) and `_WIN32` (for the few
Windows-only typedefs such as `cuWGLGetDevice`). `__CUDA_API_VERSION_INTERNAL`
is defined so the old ABIs are declared too.

History comes from the toolkit runtime wheels on PyPI (`--history`), which the
generator downloads itself with `pip download`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BuildError, HeaderParseError, UsageError
from .names import parse_pfn_name, split_suffix

__all__ = [
    "DATA_MODULE",
    "FAKE_INCLUDE",
    "FORMAT",
    "GROUP_HEADERS",
    "HISTORY_WHEELS",
    "OUTPUT_FORMATS",
    "PLATFORMS",
    "RELEASES_FILE",
    "RELEASES_FORMAT",
    "ROW_COLUMNS",
    "TERMINALS",
    "TYPEDEF_HEADERS",
    "TYPES_FILE",
    "BuildReport",
    "Extracted",
    "Key",
    "ToolkitScan",
    "build",
    "build_catalog",
    "check_headers_release",
    "check_toolkit",
    "compact",
    "fetch_history",
    "headers_cuda_version",
    "macro_names",
    "match_exported",
    "parse",
    "pfn_aliases",
    "preprocess",
    "present_headers",
    "release_facts",
    "scan_groups",
    "scan_toolkit",
    "write",
    "write_json",
]


TYPEDEF_HEADERS = (
    "cudaTypedefs.h",
    "cudaEGLTypedefs.h",
    "cudaGLTypedefs.h",
    "cudaVDPAUTypedefs.h",
    "cudaProfilerTypedefs.h",
)
# The headers whose doc groups name the group of a function.
GROUP_HEADERS = ("cuda.h", "cudaEGL.h", "cudaGL.h", "cudaVDPAU.h", "cudaProfiler.h")

# Names from <stdint.h>/<stddef.h> stay as they are: the FFI layer knows them.
TERMINALS = frozenset(
    ["size_t", "ptrdiff_t", "wchar_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
     "uint64_t", "intptr_t", "uintptr_t"]
)
FAKE_INCLUDE = Path(__file__).parent / "_data" / "fake_include"
FORMAT = 1

# The toolkit runtime wheels whose headers give the history (newest patch of each minor on PyPI).
HISTORY_WHEELS = (
    ("11.7", "nvidia-cuda-runtime-cu11==11.7.99"),
    ("11.8", "nvidia-cuda-runtime-cu11==11.8.89"),
    ("12.0", "nvidia-cuda-runtime-cu12==12.0.146"),
    ("12.1", "nvidia-cuda-runtime-cu12==12.1.105"),
    ("12.2", "nvidia-cuda-runtime-cu12==12.2.140"),
    ("12.3", "nvidia-cuda-runtime-cu12==12.3.101"),
    ("12.4", "nvidia-cuda-runtime-cu12==12.4.127"),
    ("12.5", "nvidia-cuda-runtime-cu12==12.5.82"),
    ("12.6", "nvidia-cuda-runtime-cu12==12.6.77"),
    ("12.8", "nvidia-cuda-runtime-cu12==12.8.90"),
    ("12.9", "nvidia-cuda-runtime-cu12==12.9.79"),
    ("13.0", "nvidia-cuda-runtime==13.0.96"),
    ("13.1", "nvidia-cuda-runtime==13.1.80"),
    ("13.2", "nvidia-cuda-runtime==13.2.86"),
    ("13.3", "nvidia-cuda-runtime==13.3.29"),
    ("13.4", "nvidia-cuda-runtime==13.4.92"),
    ("13.5", "nvidia-cuda-runtime==13.5.37"),
)


def _pycparser() -> Any:
    try:
        import pycparser  # noqa: F401
        from pycparser import c_ast, c_generator, c_parser
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise HeaderParseError("<generator>", "pycparser is not installed (pip install 'cuentry[gen]')") from exc
    return c_ast, c_generator, c_parser


# --- preprocessing and parsing -----------------------------------------------------


def present_headers(include: Path, fallback: Path | None = None) -> list[str]:
    """The typedef headers of `include` whose companion API header is there (or in `fallback`)."""
    dirs = [include] + ([fallback] if fallback else [])
    return [
        h for h in TYPEDEF_HEADERS
        if (include / h).is_file() and any((d / h.replace("Typedefs", "")).is_file() for d in dirs)
    ]


def preprocess(include: Path, *, windows: bool = False, cc: str = "cc", extra: Sequence[str] = (),
               fallback: Path | None = None) -> str:
    """Preprocess all typedef headers of `include` as one translation unit.

    `fallback` is searched after `include` for companion headers that a
    toolkit wheel does not ship (the runtime wheels lack cudaProfiler.h).
    """
    include = Path(include)
    if not (include / "cudaTypedefs.h").is_file():
        raise HeaderParseError(str(include), "no cudaTypedefs.h in this directory")
    src = "#include <stdint.h>\n#include <cuda.h>\n" + "".join(
        f"#include <{h}>\n" for h in present_headers(include, fallback))
    src += "".join(extra)
    defines = ["-D__CUDA_API_VERSION_INTERNAL"]
    if windows:
        defines += ["-D_WIN32", "-D__stdcall="]
    after = [f"-idirafter{fallback}"] if fallback else []
    cmd = [cc, "-E", "-P", "-nostdinc", "-x", "c", f"-I{FAKE_INCLUDE}", f"-I{include}", *after, *defines, "-"]
    try:
        proc = subprocess.run(cmd, input=src, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise HeaderParseError(str(include), f"cannot run the C preprocessor {cc!r}: {exc}") from exc
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:300])
        m = re.match(r"^(.*?):(\d+):(\d+): (?:fatal )?error: (.*)$", first)
        if m:
            raise HeaderParseError(m.group(1), m.group(4), line=int(m.group(2)), column=int(m.group(3)))
        raise HeaderParseError(str(include), f"preprocessor failed: {first}")
    return proc.stdout


def parse(text: str, origin: str) -> Any:
    """Parse preprocessed C with pycparser, turning its errors into HeaderParseError."""
    _, _, c_parser = _pycparser()
    try:
        return c_parser.CParser().parse(text, filename=origin)
    except Exception as exc:  # pycparser raises ParseError and occasionally others
        m = re.match(r"^(.*?):(\d+):(\d+): (.*)$", str(exc))
        if m:
            raise HeaderParseError(origin, m.group(4), line=int(m.group(2)), column=int(m.group(3))) from exc
        raise HeaderParseError(origin, str(exc)) from exc


# --- extraction ------------------------------------------------------------------


@dataclass
class Extracted:
    """What one header pass yields."""

    pfn: dict[tuple[str, int, str], dict[str, Any]] = field(default_factory=dict)
    typedefs: dict[str, Any] = field(default_factory=dict)
    structs: dict[str, Any] = field(default_factory=dict)  # tag -> Struct/Union node with decls
    enums: dict[str, dict[str, int | None]] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)  # prototype names (exported functions)
    tags: set[str] = field(default_factory=set)  # every named aggregate or enum, declared or defined ("struct X")


class _Builder:
    def __init__(self) -> None:
        c_ast, c_generator, _ = _pycparser()
        self.ast = c_ast
        self.gen = c_generator.CGenerator()

    # rendering -------------------------------------------------------------
    def _strip_names(self, node: Any) -> Any:
        node = copy.deepcopy(node)
        n = node
        while n is not None:
            if isinstance(n, self.ast.TypeDecl):
                n.declname = None
                break
            if isinstance(n, self.ast.FuncDecl) and n.args is not None:
                for p in n.args.params:
                    if isinstance(p, self.ast.Decl):
                        p.name = None
                        p.type = self._strip_names(p.type)
            n = getattr(n, "type", None)
        return node

    def render(self, typ: Any) -> str:
        tn = self.ast.Typename(None, [], None, self._strip_names(typ))
        return " ".join(self.gen.visit(tn).split())

    # canonical types -------------------------------------------------------
    def expand(self, typ: Any, ex: Extracted, depth: int = 0) -> Any:
        """Replace typedef names by what they stand for, down to C basics and tags."""
        a = self.ast
        if depth > 50:
            return typ
        if isinstance(typ, a.PtrDecl):
            return a.PtrDecl(list(typ.quals), self.expand(typ.type, ex, depth + 1))
        if isinstance(typ, a.ArrayDecl):
            return self._expand_array(typ, ex, depth)
        if isinstance(typ, a.FuncDecl):
            return self._expand_function(typ, ex, depth)
        if isinstance(typ, (a.Struct, a.Union)) and typ.name is None and typ.decls is not None:
            # An anonymous member (C11): the aggregate itself is the field's type.
            return self.expand(a.TypeDecl(None, [], None, typ), ex, depth + 1)
        if isinstance(typ, a.TypeDecl):
            return self._expand_typedecl(typ, ex, depth)
        return typ

    def _expand_array(self, typ: Any, ex: Extracted, depth: int) -> Any:
        a = self.ast
        dim = typ.dim
        if dim is not None and not isinstance(dim, a.Constant):
            v = self.eval_const(dim, self.all_enum_values(ex), ex)
            if v is not None:
                dim = a.Constant("int", str(v))
        return a.ArrayDecl(self.expand(typ.type, ex, depth + 1), dim, list(typ.dim_quals))

    def _expand_function(self, typ: Any, ex: Extracted, depth: int) -> Any:
        a = self.ast
        args = None
        if typ.args is not None:
            params = []
            for p in typ.args.params:
                if isinstance(p, (a.Decl, a.Typename)):
                    q = copy.copy(p)
                    q.type = self.expand(p.type, ex, depth + 1)
                    params.append(q)
                else:
                    params.append(p)
            args = a.ParamList(params)
        return a.FuncDecl(args, self.expand(typ.type, ex, depth + 1))

    def _expand_typedecl(self, typ: Any, ex: Extracted, depth: int) -> Any:
        a = self.ast
        inner = typ.type
        if isinstance(inner, a.IdentifierType) and len(inner.names) == 1:
            return self._expand_typedef_name(typ, inner.names[0], ex, depth)
        if isinstance(inner, (a.Struct, a.Union)) and inner.name is None and inner.decls is not None:
            body = copy.copy(inner)
            body.decls = []
            for d in inner.decls:
                d2 = copy.copy(d)
                d2.type = self._rename(self.expand(d.type, ex, depth + 1), d.name)
                body.decls.append(d2)
            return a.TypeDecl(None, list(typ.quals), None, body)
        if isinstance(inner, (a.Struct, a.Union, a.Enum)):
            ref = copy.copy(inner)
            if isinstance(inner, a.Enum):
                ref.values = None
            else:
                ref.decls = None
            return a.TypeDecl(None, list(typ.quals), None, ref)
        return typ

    def _expand_typedef_name(self, typ: Any, name: str, ex: Extracted, depth: int) -> Any:
        a = self.ast
        if name not in ex.typedefs or name in TERMINALS:
            return typ
        target = copy.deepcopy(ex.typedefs[name].type)
        if typ.quals and isinstance(target, (a.TypeDecl, a.PtrDecl)):
            target.quals = list(dict.fromkeys([*typ.quals, *target.quals]))
        if (isinstance(target, a.TypeDecl) and isinstance(target.type, (a.Struct, a.Union, a.Enum))
                and target.type.name is None):
            return typ  # anonymous aggregate: the typedef name is its only name
        return self.expand(target, ex, depth + 1)

    def _rename(self, typ: Any, name: str | None) -> Any:
        """Put a declarator name back on an expanded field type (for inline aggregates)."""
        n = typ
        while n is not None and not isinstance(n, self.ast.TypeDecl):
            n = getattr(n, "type", None)
        if n is not None:
            n.declname = name
        return typ

    # enum values -----------------------------------------------------------
    def eval_const(self, node: Any, env: dict[str, int | None], ex: Extracted | None = None) -> int | None:
        a = self.ast
        if node is None:
            return None
        if isinstance(node, a.UnaryOp) and node.op == "sizeof" and ex is not None:
            return self._sizeof(node.expr, ex)
        if isinstance(node, a.Constant):
            text = node.value.rstrip("uUlL")
            try:
                if text.startswith("'"):
                    return ord(text[1:-1])
                return int(text, 0) if not re.match(r"^0\d", text) else int(text, 8)
            except ValueError:
                return None
        if isinstance(node, a.ID):
            return env.get(node.name)
        if isinstance(node, a.UnaryOp):
            v = self.eval_const(node.expr, env, ex)
            if v is None:
                return None
            return {"-": -v, "+": v, "~": ~v, "!": int(not v)}.get(node.op)
        if isinstance(node, a.Cast):
            return self.eval_const(node.expr, env, ex)
        if isinstance(node, a.BinaryOp):
            x = self.eval_const(node.left, env, ex)
            y = self.eval_const(node.right, env, ex)
            if x is None or y is None:
                return None
            ops = {"<<": lambda: x << y, ">>": lambda: x >> y, "|": lambda: x | y, "&": lambda: x & y,
                   "+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "^": lambda: x ^ y}
            fn = ops.get(node.op)
            return fn() if fn else None
        return None

    _SIZES = {"char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2,
               "int": 4, "unsigned int": 4, "unsigned": 4, "float": 4, "double": 8}

    def _sizeof(self, node: Any, ex: Extracted) -> int | None:
        """sizeof of a scalar or enum type (all the headers use in array bounds)."""
        a = self.ast
        typ = node.type if isinstance(node, a.Typename) else None
        if typ is None:
            return None
        text = self.render(self.expand(typ, ex))
        if text.startswith("enum") :
            return 4
        return self._SIZES.get(text.replace("const ", ""))

    def walk_aggregates(self, node: Any, ex: Extracted) -> None:
        """Record every struct/union with a body and every enum, wherever declared."""
        a = self.ast
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (a.Struct, a.Union)) and n.name:
                ex.tags.add(f"{'union' if isinstance(n, a.Union) else 'struct'} {n.name}")
            if isinstance(n, (a.Struct, a.Union)) and n.decls is not None and n.name:
                ex.structs.setdefault(n.name, n)
            if isinstance(n, a.Enum) and n.values is not None and n.name:
                ex.tags.add(f"enum {n.name}")
                env: dict[str, int | None] = {}
                nxt: int | None = 0
                for e in n.values.enumerators:
                    v = self.eval_const(e.value, {**self.all_enum_values(ex), **env}) if e.value is not None else nxt
                    env[e.name] = v
                    nxt = v + 1 if v is not None else None
                ex.enums.setdefault(n.name, env)
            stack.extend(child for _, child in n.children())

    @staticmethod
    def all_enum_values(ex: Extracted) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for vals in ex.enums.values():
            out.update(vals)
        return out

    def extract(self, ast_root: Any) -> Extracted:
        a = self.ast
        ex = Extracted()
        for node in ast_root.ext:
            self.walk_aggregates(node, ex)
            if isinstance(node, a.Typedef):
                ex.typedefs[node.name] = node
                key = parse_pfn_name(node.name)
                if (key and key[0].startswith("cu") and isinstance(node.type, a.PtrDecl)
                        and isinstance(node.type.type, a.FuncDecl)):
                    ex.pfn[key] = {"node": node}
            elif isinstance(node, a.Decl) and isinstance(node.type, a.FuncDecl) and node.name:
                ex.declared.add(node.name)
        return ex

    def params(self, node: Any, ex: Extracted) -> list[list[str]]:
        a = self.ast
        fdecl = node.type.type
        out: list[list[str]] = []
        if fdecl.args is None:
            return out
        for i, p in enumerate(fdecl.args.params):
            if isinstance(p, a.EllipsisParam):
                out.append(["...", "...", "..."])
                continue
            spelled = self.render(p.type)
            if spelled == "void":
                continue
            canonical = self.render(self.expand(p.type, ex))
            out.append([p.name or f"arg{i}", spelled, canonical])
        return out

    def return_type(self, node: Any) -> str:
        return self.render(node.type.type.type)


# --- groups and exported names -----------------------------------------------------

_DEFGROUP = re.compile(r"\\defgroup\s+(\w+)\s+(.*?)\s*$")
_ENDGROUP = re.compile(r"@\}")
_PROTO = re.compile(r"\bCUDAAPI\s+(cu\w+)\s*\(")


def scan_groups(include: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Map each function to the doc group it is declared in; and group ids to titles."""
    func_group: dict[str, str] = {}
    titles: dict[str, str] = {}
    for h in GROUP_HEADERS:
        path = include / h
        if not path.is_file():
            continue
        stack: list[str] = []
        carry = ""
        for raw in path.read_text(errors="replace").splitlines():
            line = carry + raw
            carry = raw.strip() + " " if raw.rstrip().endswith("CUDAAPI") else ""
            m = _DEFGROUP.search(line)
            if m:
                stack.append(m.group(1))
                titles.setdefault(m.group(1), re.sub(r"\s+", " ", m.group(2)).strip())
                continue
            if _ENDGROUP.search(line) and stack:
                stack.pop()
                continue
            p = _PROTO.search(line)
            if p and stack and stack[-1] != "CUDA_TYPES":
                func_group.setdefault(p.group(1), stack[-1])
    return func_group, titles


def macro_names(include: Path, bases: Iterable[str], *, per_thread: bool, cc: str = "cc",
                fallback: Path | None = None) -> dict[str, str]:
    """What each base name expands to in user code: `cuMemAlloc` -> `cuMemAlloc_v2`."""
    bases = sorted(set(bases))
    src = "#include <stdint.h>\n#include <cuda.h>\n" + "".join(
        f"#include <{h}>\n" for h in present_headers(include, fallback))
    src += "".join(f'@@ "{b}" {b}\n' for b in bases)
    defines = ["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"] if per_thread else []
    after = [f"-idirafter{fallback}"] if fallback else []
    cmd = [cc, "-E", "-P", "-nostdinc", "-x", "c", f"-I{FAKE_INCLUDE}", f"-I{include}", *after, *defines, "-"]
    proc = subprocess.run(cmd, input=src, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise HeaderParseError(str(include), f"preprocessor failed on the name map: {proc.stderr.strip()[:300]}")
    out: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r'^@@ "(\w+)" (\w+)\s*$', line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def match_exported(
    keys: Iterable[tuple[str, int, str]],
    declared: set[str],
    legacy_macro: dict[str, str],
    ptds_macro: dict[str, str],
) -> dict[tuple[str, int, str], str | None]:
    """Pair each ABI with the exported function the headers declare for it.

    The declared prototypes of one base name (`cuCtxCreate`, `cuCtxCreate_v2` ...),
    in suffix order, pair with its ABIs in version order when the counts agree; else
    only the newest ABI gets a name, the one cuda.h's macros map the base name to.
    """
    by_base: dict[tuple[str, bool], list[tuple[str, int, str]]] = {}
    for k in keys:
        by_base.setdefault((k[0], bool(k[2])), []).append(k)
    names: dict[tuple[str, bool], list[tuple[int, str]]] = {}
    for d in declared:
        if not d.startswith("cu"):
            continue
        base, order, var = split_suffix(d) or (d, None, "")
        names.setdefault((base, bool(var)), []).append((order or 1, d))
    # The name parse above splits "cuFoo_v2" as base cuFoo; a real base ending in _vN
    # does not exist in the driver API, so this is unambiguous.
    out: dict[tuple[str, int, str], str | None] = {}
    for (base, pt), ks in by_base.items():
        ks.sort(key=lambda k: k[1])
        cands = sorted(names.get((base, pt), []))
        if len(cands) == len(ks):
            for k, (_, exported) in zip(ks, cands, strict=True):
                out[k] = exported
            continue
        for k in ks:
            out[k] = None
        macro = (ptds_macro if pt else legacy_macro).get(base)
        if macro and macro in declared:
            out[ks[-1]] = macro
    return out


# --- whole build -------------------------------------------------------------------


@dataclass
class ToolkitScan:
    toolkit: str
    linux: Extracted
    windows: Extracted
    include: Path
    fallback: Path | None = None


def scan_toolkit(include: Path, toolkit: str, cc: str = "cc", fallback: Path | None = None) -> ToolkitScan:
    """Parse one toolkit's typedef headers (Linux and Windows passes)."""
    b = _Builder()
    lin = b.extract(parse(preprocess(include, cc=cc, fallback=fallback), f"{include}/<linux>"))
    win = b.extract(parse(preprocess(include, windows=True, cc=cc, fallback=fallback), f"{include}/<windows>"))
    if not lin.pfn:
        raise HeaderParseError(str(include / "cudaTypedefs.h"), "no PFN_cu*_v* typedefs found")
    return ToolkitScan(toolkit, lin, win, include, fallback)


def _header_of(include: Path) -> dict[str, str]:
    """Which typedef header declares each PFN name (a text scan, names only)."""
    out: dict[str, str] = {}
    pat = re.compile(r"\b(PFN_cu\w+_v\d+(?:_pt(?:ds|sz))?)\)\s*\(")
    for h in TYPEDEF_HEADERS:
        p = include / h
        if p.is_file():
            for name in pat.findall(p.read_text(errors="replace")):
                out.setdefault(name, h)
    return out


Key = tuple[str, int, str]


def build(primary: Path, toolkit: str, history: Sequence[ToolkitScan] = (), cc: str = "cc") -> dict[str, Any]:
    """Build the catalog data from the primary include dir plus optional history scans."""
    b = _Builder()
    main = scan_toolkit(primary, toolkit, cc=cc)
    # The primary scan goes after a history scan of the same release (a stable sort), so it
    # describes what both declare and adds what the wheel lacks.
    scans = [*history, main]
    scans.sort(key=lambda s: tuple(int(x) for x in s.toolkit.split(".")))
    source, declared_in = _sources(scans)
    groups, titles = _groups(scans)
    exported = _exported(scans, cc)
    headers: dict[str, str] = {}
    for s in scans:
        headers.update(_header_of(s.include))

    entries = []
    type_roots: dict[str, Extracted] = {}
    for key in sorted(source, key=lambda k: (k[0], k[1], k[2])):
        s, ex, plat = source[key]
        node = ex.pfn[key]["node"]
        params = b.params(node, ex)
        for p in params:
            for name in re.findall(r"[A-Za-z_]\w*", p[1]):
                if name in ex.typedefs:
                    type_roots.setdefault(name, ex)
        entries.append({
            "symbol": key[0], "version": key[1], "variant": key[2], "returns": b.return_type(node),
            "params": params, "header": headers.get(node.name, "cudaTypedefs.h"), "exported": exported.get(key),
            "platforms": _platforms(s, key, plat), "toolkits": declared_in.get(key, []), "group": groups.get(key[0]),
        })
    types = _types(b, type_roots)
    one_each = list({s.toolkit: s for s in scans}.values())  # the primary scan for its own release
    return {
        "format": FORMAT,
        "primary_toolkit": toolkit,
        "history": list(dict.fromkeys(s.toolkit for s in scans)),
        "groups": dict(sorted(titles.items())),
        "entries": entries,
        "releases": release_facts(one_each, entries, cc),
        **types,
    }


def _sources(scans: Sequence[ToolkitScan]) -> tuple[dict[Key, tuple[ToolkitScan, Extracted, str]], dict[Key, list[str]]]:
    """The union of all ABIs, each described by the newest toolkit that declares it; and who declares each."""
    source: dict[Key, tuple[ToolkitScan, Extracted, str]] = {}
    declared_in: dict[Key, list[str]] = {}
    for s in scans:
        for ex in (s.linux, s.windows):
            for k in ex.pfn:
                tks = declared_in.setdefault(k, [])
                if s.toolkit not in tks:
                    tks.append(s.toolkit)
        for k in s.linux.pfn:
            source[k] = (s, s.linux, "linux")
        for k in s.windows.pfn:
            if k not in s.linux.pfn:
                source[k] = (s, s.windows, "windows")
    return source, declared_in


def _groups(scans: Sequence[ToolkitScan]) -> tuple[dict[str, str], dict[str, str]]:
    """cuda.h's doc group of each function, and the groups' titles (newest toolkit first)."""
    groups, titles = scan_groups(scans[-1].include)
    for s in scans[:-1]:
        g2, t2 = scan_groups(s.include)
        for fname, gid in g2.items():
            groups.setdefault(fname, gid)
        for gid, title in t2.items():
            titles.setdefault(gid, title)
    return groups, titles


def _exported(scans: Sequence[ToolkitScan], cc: str) -> dict[Key, str | None]:
    """The exported library name of each ABI, from the headers' macro renames."""
    exported: dict[Key, str | None] = {}
    for s in scans:
        bases = {k[0] for k in s.linux.pfn} | {k[0] for k in s.windows.pfn}
        keys = set(s.linux.pfn) | set(s.windows.pfn)
        found = match_exported(
            keys,
            s.linux.declared | s.windows.declared,
            macro_names(s.include, bases, per_thread=False, cc=cc, fallback=s.fallback),
            macro_names(s.include, bases, per_thread=True, cc=cc, fallback=s.fallback),
        )
        for k, v in found.items():
            if v is not None or k not in exported:
                exported[k] = v
    return exported


# --- per-release facts -------------------------------------------------------------------

RELEASES_FORMAT = 1
_TAG_WORD = re.compile(r"\b(?:struct|union|enum)\s+\w+")


def pfn_aliases(include: Path, bases: Iterable[str], *, per_thread: bool, cc: str = "cc",
                fallback: Path | None = None) -> dict[str, str]:
    """What each unversioned `PFN_<base>` of `cudaTypedefs.h` names in user code (`PFN_cuMemAdvise` ->
    `PFN_cuMemAdvise_v8000` in 12.4); a base the headers give no such name is left out."""
    got = macro_names(include, [f"PFN_{b}" for b in bases], per_thread=per_thread, cc=cc, fallback=fallback)
    return {k[4:]: v for k, v in got.items() if v != k}


def _delta(prev: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """The changes from `prev` to `now`: new or changed keys with their value, removed keys with None."""
    out: dict[str, Any] = {k: v for k, v in now.items() if prev.get(k) != v}
    out.update({k: None for k in prev if k not in now})
    return dict(sorted(out.items()))


_C_WORDS = frozenset(["const", "volatile", "restrict", "signed", "unsigned", "char", "short", "int", "long",
                      "float", "double", "void"])


def _signature_words(params: Iterable[Sequence[str]]) -> set[str]:
    """The tags (`struct X`, `union X`, `enum X`) and the typedef names left in canonical types (those of
    anonymous enums and aggregates, whose typedef name is their only name)."""
    out: set[str] = set()
    for p in params:
        tags = _TAG_WORD.findall(p[-1])
        out.update(tags)
        rest = _TAG_WORD.sub(" ", p[-1])
        out.update(w for w in re.findall(r"[A-Za-z_]\w*", rest) if w not in _C_WORDS and w not in TERMINALS)
    return out


def _abi_ref(base: str, key: Key) -> list[Any]:
    """An ABI as the release facts name it: `[version, variant]`, and its symbol where that is another one
    (12.x: `PFN_cuGraphInstantiate` is `PFN_cuGraphInstantiateWithFlags_v11040`)."""
    return [key[1], key[2]] if key[0] == base else [key[1], key[2], key[0]]


def _release(b: _Builder, s: ToolkitScan, rows: dict[Key, dict[str, Any]], by_export: dict[str, Key],
             cc: str) -> dict[str, Any]:
    """One release's facts, full (not yet a delta): see `release_facts`."""
    bases = sorted({k[0] for k in rows})
    declared = s.linux.declared | s.windows.declared
    out: dict[str, Any] = {"toolkit": s.toolkit,
                           "cuda_version": headers_cuda_version(s.include) or check_toolkit(s.toolkit)}
    for mode, per_thread in (("", False), ("_per_thread", True)):
        aliases = pfn_aliases(s.include, bases, per_thread=per_thread, cc=cc, fallback=s.fallback)
        out["pfn" + mode] = {base: _abi_ref(base, key) for base, name in aliases.items()
                             if (key := parse_pfn_name(name)) is not None and key in rows}
        names = macro_names(s.include, bases, per_thread=per_thread, cc=cc, fallback=s.fallback)
        out["function" + mode] = {base: _abi_ref(base, by_export[name]) for base, name in names.items()
                                  if name in declared and name in by_export}
    signatures: dict[str, Any] = {}
    words: set[str] = set()
    for key, row in rows.items():
        ex = s.linux if key in s.linux.pfn else s.windows if key in s.windows.pfn else None
        if ex is None:
            continue
        node = ex.pfn[key]["node"]
        returns, params = b.return_type(node), b.params(node, ex)
        if returns != row["returns"] or [p[2] for p in params] != [p[2] for p in row["params"]]:
            signatures[node.name] = [returns, params]
            words |= _signature_words(params)
    out["signatures"] = dict(sorted(signatures.items()))
    out["words"] = words
    out["typedefs"] = set(s.linux.typedefs) | set(s.windows.typedefs)
    out["tags"] = s.linux.tags | s.windows.tags
    return out


def release_facts(scans: Sequence[ToolkitScan], entries: Sequence[dict[str, Any]], cc: str = "cc") -> dict[str, Any]:
    """What each toolkit release's own headers say, where it matters to code compiled against them.

    Per release of `scans` (one scan a release, oldest first), against the catalog's `entries`:

    * `cuda_version`: the `CUDA_VERSION` its `cuda.h` defines;
    * `pfn` / `pfn_per_thread`: the ABI (`[version, variant]`, `[version, variant, symbol]` for another
      symbol's) each unversioned `PFN_<symbol>` of its `cudaTypedefs.h` names, without and with
      `CUDA_API_PER_THREAD_DEFAULT_STREAM` (13.0 has none);
    * `function` / `function_per_thread`: the ABI its `cuda.h` declares under the plain name `<symbol>`
      (what `decltype(&cuX)` is there; `#define cuMemAlloc cuMemAlloc_v2` and the like followed);
    * `signatures`: each PFN typedef whose function type differs from the catalog's record (another
      struct, union or enum tag: `CUDA_MEM_ALLOC_NODE_PARAMS_st` before 12.2), as that release declares
      it (`[returns, [[name, spelled, canonical], ...]]`), complete for the release;
    * `defines`: which of the enum, struct and union tags and enum typedef names that any signature
      (the catalog's or a release's own) names are declared by its headers.

    `pfn`, `function` and `defines` are stored as changes from the release before (a key mapped to null:
    gone; `pfn: null`: no unversioned names at all); `Catalog.toolkit` rebuilds each release whole.
    """
    b = _Builder()
    rows = {(e["symbol"], e["version"], e["variant"]): e for e in entries}
    by_export = {e["exported"]: k for k, e in rows.items() if e["exported"]}
    full = [_release(b, s, rows, by_export, cc) for s in scans]
    words = {w for e in entries for w in _signature_words(e["params"])} | set().union(*(r["words"] for r in full))
    out: list[dict[str, Any]] = []
    prev: dict[str, Any] = {k: {} for k in ("pfn", "pfn_per_thread", "function", "function_per_thread", "defines")}
    for r in full:
        defined = {w: 1 for w in sorted(words) if w in r["tags"] or w in r["typedefs"]}
        now = {**{k: r[k] for k in ("pfn", "pfn_per_thread", "function", "function_per_thread")}, "defines": defined}
        rel: dict[str, Any] = {"toolkit": r["toolkit"], "cuda_version": r["cuda_version"]}
        for k, v in now.items():
            rel[k] = None if k.startswith("pfn") and not v and prev[k] else _delta(prev[k], v)
        rel["signatures"] = r["signatures"]
        out.append(rel)
        prev = now
    return {"format": RELEASES_FORMAT, "releases": out}


def _platforms(s: ToolkitScan, key: Key, plat: str) -> list[str]:
    platforms = ["linux", "windows"] if key in s.linux.pfn or plat == "linux" else ["windows"]
    if plat == "linux" and key not in s.windows.pfn:
        platforms = ["linux"]
    return platforms


def _types(b: _Builder, roots: dict[str, Extracted]) -> dict[str, Any]:
    """The typedefs, enums and aggregates that the signatures need, transitively."""
    a = b.ast
    typedefs: dict[str, dict[str, str]] = {}
    enums: dict[str, dict[str, Any]] = {}
    aggregates: dict[str, dict[str, Any]] = {}
    todo = list(roots.items())
    seen: set[str] = set()
    ex_any = next(iter(roots.values()), Extracted())

    def tags_in(node: Any, ex: Extracted) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, a.IdentifierType):
                for nm in n.names:
                    if nm in ex.typedefs and nm not in seen:
                        todo.append((nm, ex))
            if isinstance(n, (a.Struct, a.Union)) and n.name and n.name not in aggregates:
                body = ex.structs.get(n.name)
                kind = "union" if isinstance(n, a.Union) else "struct"
                rec: dict[str, Any] = {"kind": kind, "opaque": body is None, "fields": []}
                aggregates[n.name] = rec
                if body is not None:
                    for d in body.decls or []:
                        rec["fields"].append([d.name or "", b.render(d.type), b.render(b.expand(d.type, ex))])
                        stack.append(d.type)
            if isinstance(n, a.Enum) and n.name and n.name not in enums:
                vals = ex.enums.get(n.name, {})
                enums[n.name] = {"values": vals, "unsigned": any(v is not None and v > 0x7FFFFFFF for v in vals.values())}
            stack.extend(child for _, child in n.children())

    while todo:
        name, ex = todo.pop()
        if name in seen or name in TERMINALS:
            continue
        seen.add(name)
        node = ex.typedefs[name]
        typedefs[name] = {"type": b.render(node.type), "canonical": b.render(b.expand(node.type, ex))}
        tags_in(node.type, ex)
    del ex_any
    return {
        "typedefs": dict(sorted(typedefs.items())),
        "enums": dict(sorted(enums.items())),
        "aggregates": dict(sorted(aggregates.items())),
    }


# --- history download ------------------------------------------------------------------


def fetch_history(cache: Path, wanted: Sequence[tuple[str, str]] = HISTORY_WHEELS, *,
                  progress: Any = None) -> list[tuple[str, Path]]:
    """Download each toolkit runtime wheel (once) and unpack its include directory."""
    cache.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, Path]] = []
    for i, (tk, spec) in enumerate(wanted, 1):
        if progress:
            progress(f"[{i}/{len(wanted)}] toolkit {tk} ({spec})")
        inc = cache / f"include-{tk}"
        if not (inc / "cudaTypedefs.h").is_file():
            dl = cache / "wheels"
            dl.mkdir(exist_ok=True)
            name = spec.split("==")[0].replace("-", "_")
            ver = spec.split("==")[1]
            found = [w for w in dl.glob(f"{name}-{ver}-*.whl")]
            if not found:
                cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                       "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
                       "--python-version", "3.11", "-q", "-d", str(dl), spec]
                subprocess.run(cmd, check=True)
                found = [w for w in dl.glob(f"{name}-{ver}-*.whl")]
            if not found:
                raise HeaderParseError(spec, "download produced no wheel")
            tmp = Path(tempfile.mkdtemp(dir=cache))
            with zipfile.ZipFile(found[0]) as z:
                members = [m for m in z.namelist() if "/include/" in m and m.endswith(".h")]
                z.extractall(tmp, members)
            src = next((tmp / m).parent for m in members if m.endswith("/cudaTypedefs.h"))
            shutil.move(str(src), str(inc))
            shutil.rmtree(tmp, ignore_errors=True)
        out.append((tk, inc))
    return out


ROW_COLUMNS = ("symbol", "version", "variant", "returns", "params", "header", "exported",
               "platforms", "toolkits", "group")
PLATFORMS = ("linux", "windows")


def compact(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split built data into the look-up file and the types file, in the compact row form.

    Rows are arrays in ROW_COLUMNS order; `toolkits` and `platforms` are bit masks
    over `history` and PLATFORMS; a parameter's canonical type is omitted (null)
    where it equals the spelled one. This keeps `import cuentry` plus a look-up cheap.
    """
    hist = list(data["history"])
    rows = []
    for e in data["entries"]:
        tk = sum(1 << hist.index(t) for t in e["toolkits"])
        pf = sum(1 << PLATFORMS.index(p) for p in e["platforms"])
        params = [[n, t] if c == t else [n, t, c] for n, t, c in e["params"]]
        rows.append([e["symbol"], e["version"], e["variant"], e["returns"], params, e["header"],
                     e["exported"], pf, tk, e["group"]])
    hints = {
        "opaque": sorted(k for k, v in data["aggregates"].items() if v.get("opaque")),
        "unsigned_enums": sorted(k for k, v in data["enums"].items() if v.get("unsigned")),
        "enum_typedefs": sorted(k for k, v in data["typedefs"].items() if v.get("canonical", "").strip() == "enum"),
    }
    main = {"format": 2, "primary_toolkit": data["primary_toolkit"], "history": hist,
            "platforms": list(PLATFORMS), "columns": list(ROW_COLUMNS), "groups": data["groups"],
            "ffi_hints": hints, "entries": rows}
    types = {k: data[k] for k in ("typedefs", "enums", "aggregates")}
    return main, types


def _releases_text(releases: dict[str, Any]) -> str:
    """The per-release facts as JSON, one release's part a line (diffs between catalogs stay readable)."""
    lines = ["{", f'"format": {json.dumps(releases["format"])},', '"releases": [']
    rels = releases["releases"]
    for i, r in enumerate(rels):
        parts = [f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in r.items()]
        lines.append("{" + ",\n ".join(parts) + "}" + ("," if i < len(rels) - 1 else ""))
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


DATA_MODULE = Path(__file__).parent / "_catalog_data.py"
TYPES_FILE = Path(__file__).parent / "_data" / "types.json"
RELEASES_FILE = Path(__file__).parent / "_data" / "releases.json"


def _py(v: Any) -> str:
    """A Python literal with tuples for lists (constant-folded into the bytecode)."""
    if isinstance(v, (list, tuple)):
        return "(" + "".join(_py(x) + "," for x in v) + ")"
    if isinstance(v, dict):
        return "{" + ",".join(f"{_py(k)}:{_py(x)}" for k, x in v.items()) + "}"
    return repr(v)


def write(data: dict[str, Any], module: Path = DATA_MODULE, types_file: Path = TYPES_FILE,
          releases_file: Path | None = None) -> None:
    """Write the look-up data as a Python module (one ABI a line), the types as JSON, and the per-release
    facts ([release_facts][cuentry._catalog_build.release_facts]) as JSON (`releases_file`: beside the
    types, `releases.json` for the package's own, `X.releases.json` for `X.types.json`).

    A module of constant tuples loads from its .pyc in about a millisecond, with no
    JSON parser, which keeps `import cuentry` plus a first look-up cheap.
    """
    main, types = compact(data)
    lines = [
        '"""Generated by `cuentry catalog build`: facts from NVIDIA\'s typedef headers (names, numbers, C types).',
        "",
        "Do not edit. One row per ABI, columns as COLUMNS; toolkits and platforms are bit masks.",
        '"""',
        "",
        f"FORMAT = {main['format']}",
        f"PRIMARY_TOOLKIT = {main['primary_toolkit']!r}",
        f"HISTORY = {_py(main['history'])}",
        f"PLATFORMS = {_py(main['platforms'])}",
        f"COLUMNS = {_py(main['columns'])}",
        f"GROUPS = {_py(main['groups'])}",
        f"FFI_HINTS = {_py(main['ffi_hints'])}",
        "ROWS = (",
    ]
    lines.extend(_py(r) + "," for r in main["entries"])
    lines.append(")")
    _replace(module, "\n".join(lines) + "\n")
    tl = ["{"]
    keys = list(types)
    for i, k in enumerate(keys):
        items = list(types[k].items())
        tl.append(f'"{k}": {{')
        tl.extend(f"{json.dumps(n)}:{json.dumps(x, separators=(',', ':'))}" + ("," if j < len(items) - 1 else "")
                  for j, (n, x) in enumerate(items))
        tl.append("}" + ("," if i < len(keys) - 1 else ""))
    tl.append("}")
    _replace(types_file, "\n".join(tl) + "\n")
    if "releases" in data:
        _replace(releases_file or _releases_beside(types_file), _releases_text(data["releases"]))


def _releases_beside(types_file: Path) -> Path:
    if types_file.name == TYPES_FILE.name:
        return types_file.with_name(RELEASES_FILE.name)
    return types_file.with_name(types_file.name.removesuffix(".types.json") + ".releases.json")


OUTPUT_FORMATS = {".py": "Python data module", ".json": "JSON"}


@dataclass
class BuildReport:
    """What `build_catalog` wrote, and what the caller should know about it."""

    entries: int
    written: list[Path]
    notes: list[str]


def _is_package_file(path: Path) -> bool:
    targets = (DATA_MODULE, TYPES_FILE)
    try:
        return any(path.resolve() == t.resolve() or (path.exists() and t.exists() and path.samefile(t)) for t in targets)
    except OSError:
        return False


def _targets(output: Path | None, in_place: bool) -> tuple[str, Path, Path | None]:
    """(format, main file, types file) for the request; UsageError for anything ambiguous."""
    if in_place:
        if output is not None:
            raise UsageError("give either -o FILE or --in-place, not both",
                             hint="--in-place replaces the installed package's catalog; -o writes elsewhere")
        return "py", DATA_MODULE, TYPES_FILE
    if output is None:
        raise UsageError("no output given: the installed package's catalog is only replaced on request",
                         hint="pass -o catalog.json (or .py), or --in-place to replace the installed catalog")
    suffix = output.suffix.lower()
    if suffix not in OUTPUT_FORMATS:
        raise UsageError(f"-o {output}: unknown output format {suffix or '(no extension)'!r}",
                         hint="name the file .json (JSON) or .py (the Python data module)")
    if _is_package_file(output):
        raise UsageError(f"-o {output} is the installed package's own catalog",
                         hint="pass --in-place to replace it on purpose")
    folder = output.parent
    if not folder.is_dir():
        raise UsageError(f"-o {output}: the folder {folder} does not exist",
                         hint=f"create it first (mkdir -p {folder}) or write the catalog into an existing folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"-o {output}: the folder {folder} is not writable by you",
                         hint="write the catalog into a folder you own")
    if suffix == ".json":
        return "json", output, None
    return "py", output, output.with_name(output.stem + ".types.json")


_TOOLKIT = re.compile(r"(\d{1,2})\.(\d{1,2})")
_CUDA_VERSION = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+CUDA_VERSION[ \t]+(\d+)[ \t]*(?:/[/*].*)?$", re.M)


def check_toolkit(toolkit: str) -> int:
    """The CUDA_VERSION number of a `--toolkit` release such as `13.0`; UsageError for anything else."""
    m = _TOOLKIT.fullmatch(toolkit.strip())
    if not m:
        raise UsageError(f"--toolkit {toolkit!r} is not a CUDA toolkit release",
                         hint="give the release of the headers as MAJOR.MINOR, e.g. --toolkit 13.0 "
                              "(the value of CUDA_VERSION in their cuda.h: 13000 is 13.0)")
    return int(m[1]) * 1000 + int(m[2]) * 10


def headers_cuda_version(include: Path) -> int | None:
    """CUDA_VERSION as `cuda.h` in `include` defines it, or None when it cannot be read there."""
    try:
        with open(include / "cuda.h", "rb") as fh:
            text = fh.read(1 << 22)
    except OSError:
        return None
    m = _CUDA_VERSION.search(text)
    return int(m[1]) if m else None


def check_headers_release(include: Path, toolkit: str) -> str | None:
    """Refuse headers whose CUDA_VERSION is another release than `toolkit`; a note when it is not stated."""
    want = check_toolkit(toolkit)
    have = headers_cuda_version(include)
    if have is None:  # not a toolkit's cuda.h (a test's headers): --toolkit is all there is
        return None
    if have // 10 != want // 10:
        release = f"{have // 1000}.{have % 1000 // 10}"
        raise UsageError(f"--toolkit {toolkit}, but the headers in {include} are CUDA {release} "
                         f"(cuda.h defines CUDA_VERSION {have})",
                         hint=f"pass --toolkit {release}, or point --include at the {toolkit} headers")
    return None


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a fresh temporary file beside it, then rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json(data: dict[str, Any], path: Path) -> None:
    """The compact look-up data and the types as one JSON document."""
    main, types = compact(data)
    extra = {"releases": data["releases"]} if "releases" in data else {}
    _replace(path, json.dumps({**main, "types": types, **extra}, separators=(",", ":")) + "\n")


def build_catalog(include: Path, toolkit: str, *, output: Path | None = None, in_place: bool = False,
                  history: bool = False, cache: Path | None = None,
                  progress: Callable[[str], None] | None = None) -> BuildReport:
    """Regenerate the catalog from the headers in `include` and write it.

    `output`: `X.json` writes JSON, `X.py` the Python data module (its types
    beside it as `X.types.json`); any other extension is refused. The installed
    package's own catalog is written only with `in_place=True`. `history`
    downloads the toolkit runtime wheels of HISTORY_WHEELS into `cache`. Raises
    UsageError (bad request), HeaderParseError (bad headers), BuildError (download).
    """
    fmt, main_file, types_file = _targets(output, in_place)
    notes: list[str] = []
    note = check_headers_release(include, toolkit)
    if note:
        notes.append(note)
    if in_place and not history:
        notes.append(f"writing the package's own catalog without --history: each ABI's toolkit list will name "
                     f"only {toolkit}")
    scans: list[ToolkitScan] = []
    if history:
        where = cache if cache is not None else Path.home() / ".cache" / "cuentry-gen"
        try:
            for tk, inc in fetch_history(where, progress=progress):
                scans.append(scan_toolkit(inc, tk, fallback=include))
        except (subprocess.CalledProcessError, OSError) as exc:
            raise BuildError(f"downloading the toolkit headers for --history failed: {exc}",
                             hint="check network access to PyPI (pip download), or build without --history") from None
    data = build(include, toolkit, scans)
    if fmt == "json":
        write_json(data, main_file)
        written = [main_file]
    else:
        assert types_file is not None
        write(data, main_file, types_file)
        written = [main_file, types_file, _releases_beside(types_file)]
    return BuildReport(len(data["entries"]), written, notes)
