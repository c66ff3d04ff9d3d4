"""Semantics-preserving variants of Python loader seeds, each with its fixed twin.

A seed is a small Python loader with one fault the linter must find (its rule), and the same loader fixed. A
family rewrites how the code reaches the driver without changing what it does: where the library handle comes
from (a loop of candidate names, a helper, find_library, a class attribute, a module global set by a function),
how an export's name is written (an f-string, a concatenation, a constant), how it is taken (a getattr helper, a
table of prototypes walked in a loop, a dictionary), where the code runs (a function, a method), where a request's
version comes from (a helper, a module global, a caller's parameter), how its symbol is written, and whether the
request goes through a wrapper. Every family alone, then compositions of two and three, are applied to each seed
and to its twin: the verdict must not change (the faulty variant keeps its finding, the twin stays clean).

Self-contained: it knows nothing of the linter; tests/test_lint_python_variants.py lints what it writes.
"""

from __future__ import annotations

import itertools
import random
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["SEEDS", "Seed", "Variant", "variants"]


@dataclass(frozen=True)
class Seed:
    """A loader with one fault (`rule`) and its fixed twin, as the parts the families rewrite."""

    name: str
    kind: str                                   # export | request | cffi
    rule: str
    faulty: dict[str, object]
    fixed: dict[str, object]
    families: tuple[str, ...] = ()              # the families that apply (default: all of its kind)


@dataclass(frozen=True)
class Variant:
    seed: str
    families: tuple[str, ...]
    rule: str
    faulty: str                                 # the program with the fault
    fixed: str                                  # its twin


# --- seeds ---------------------------------------------------------------------------------------------------------

SEEDS: tuple[Seed, ...] = (
    Seed("total-mem-argtypes", "export", "CE011",
         {"export": "cuDeviceTotalMem", "argtypes": ["POINTER(c_size_t)", "c_int"],
          "decls": ["total = c_size_t()"], "call": ["byref(total)", "0"]},
         {"export": "cuDeviceTotalMem_v2", "argtypes": ["POINTER(c_size_t)", "c_int"],
          "decls": ["total = c_size_t()"], "call": ["byref(total)", "0"]}),
    Seed("mem-info-call", "export", "CE011",
         {"export": "cuMemGetInfo", "argtypes": None, "decls": ["free = c_size_t()", "total = c_size_t()"],
          "call": ["byref(free)", "byref(total)"]},
         {"export": "cuMemGetInfo_v2", "argtypes": None, "decls": ["free = c_size_t()", "total = c_size_t()"],
          "call": ["byref(free)", "byref(total)"]}),
    Seed("devptr-uint", "export", "CE011",
         {"export": "cuMemFree_v2", "argtypes": ["c_uint"], "decls": ["dptr = 0"], "call": ["dptr"]},
         {"export": "cuMemFree_v2", "argtypes": ["c_uint64"], "decls": ["dptr = 0"], "call": ["dptr"]}),
    Seed("driver-version-bindings", "request", "CE001",
         {"api": "bindings", "symbol": "cuMemAlloc", "version": "driver", "checked": True},
         {"api": "bindings", "symbol": "cuMemAlloc", "version": 3020, "checked": True}),
    Seed("driver-version-ctypes", "request", "CE001",
         {"api": "ctypes", "symbol": "cuCtxGetDevice", "version": "driver", "checked": True},
         {"api": "ctypes", "symbol": "cuCtxGetDevice", "version": 2000, "checked": True}),
    Seed("unchecked-getter", "request", "CE006",
         {"api": "ctypes", "symbol": "cuMemAlloc", "version": 3020, "checked": False},
         {"api": "ctypes", "symbol": "cuMemAlloc", "version": 3020, "checked": True}),
    Seed("suffixed-symbol", "request", "CE003",
         {"api": "bindings", "symbol": "cuMemAlloc_v2", "version": 3020, "checked": True},
         {"api": "bindings", "symbol": "cuMemAlloc", "version": 3020, "checked": True}),
    Seed("narrow-prototype", "request", "CE004",
         {"api": "ctypes", "symbol": "cuMemAlloc", "version": 3020, "checked": True,
          "proto": ["c_int", "POINTER(c_uint64)", "c_uint"]},
         {"api": "ctypes", "symbol": "cuMemAlloc", "version": 3020, "checked": True,
          "proto": ["c_int", "POINTER(c_uint64)", "c_size_t"]}),
    Seed("cffi-old-export", "cffi", "CE011",
         {"decl": "CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);"},
         {"decl": "CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);"}),
)

EXPORT_FAMILIES = ("lib-loop", "lib-helper", "lib-loop-helper", "find-library", "lib-class", "lib-global",
                   "name-fstring", "name-concat", "name-constant", "take-helper", "table-list", "table-dict",
                   "in-function", "in-method")
REQUEST_FAMILIES = ("lib-loop", "lib-helper", "find-library", "lib-class", "lib-global", "getter-attr",
                    "import-alias", "symbol-fstring", "symbol-concat", "symbol-table", "version-helper",
                    "version-global", "version-param", "wrapper", "in-method")
CFFI_FAMILIES = ("lib-loop", "lib-helper", "cdef-variable", "cdef-concat", "in-function", "lib-class")
_GROUPS = {   # families that answer the same question: one of each in a composition
    "lib": ("lib-loop", "lib-helper", "lib-loop-helper", "find-library", "lib-class", "lib-global"),
    "name": ("name-fstring", "name-concat", "name-constant", "symbol-fstring", "symbol-concat", "symbol-table"),
    "take": ("take-helper", "table-list", "table-dict"),
    "where": ("in-function", "in-method"),
    "version": ("version-helper", "version-global", "version-param"),
    "cdef": ("cdef-variable", "cdef-concat"),
}


# --- parts the families rewrite ---------------------------------------------------------------------------------

@dataclass
class _Program:
    imports: list[str] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)        # module-level definitions, in order
    body: list[str] = field(default_factory=list)        # what the loader does
    where: str = "module"                                # module | function | method
    tail: list[str] = field(default_factory=list)

    def render(self) -> str:
        out = [*dict.fromkeys(self.imports), ""]
        for d in self.defs:
            out += [d.rstrip(), ""]
        if self.where == "module":
            out += self.body
        elif self.where == "function":
            out += ["def setup():", *textwrap.indent("\n".join(self.body), "    ").splitlines(), "", "", "setup()"]
        else:
            out += ["class Loader:", "    def setup(self):",
                    *textwrap.indent("\n".join(self.body), "        ").splitlines(), "", "", "Loader().setup()"]
        out += self.tail
        return "\n".join(out) + "\n"


def _group(family: str) -> str:
    return next((g for g, fams in _GROUPS.items() if family in fams), family)


def _lib(p: _Program, families: tuple[str, ...], name: str = '"libcuda.so.1"') -> str:
    """Define how the handle is made; the expression that gives it."""
    p.imports.append("import ctypes")
    if "lib-loop" in families:
        p.defs.append('_LIB = None\nfor _cand in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):\n'
                      "    try:\n        _LIB = ctypes.CDLL(_cand)\n        break\n    except OSError:\n"
                      "        continue")
        return "_LIB"
    if "lib-loop-helper" in families:
        p.defs.append('def _load():\n    for _cand in ("libcuda.so.1", "libcuda.so"):\n        try:\n'
                      '            return ctypes.CDLL(_cand)\n        except OSError:\n            pass\n'
                      '    raise OSError("no CUDA driver")')
        return "_load()"
    if "lib-helper" in families:
        p.defs.append(f"def _driver():\n    return ctypes.CDLL({name})")
        return "_driver()"
    if "find-library" in families:
        p.imports.append("from ctypes.util import find_library")
        return 'ctypes.CDLL(find_library("cuda") or "libcuda.so.1")'
    if "lib-class" in families:
        p.defs.append(f"class _Driver:\n    def __init__(self):\n        self.lib = ctypes.CDLL({name})\n\n\n"
                      "_DRV = _Driver()")
        return "_DRV.lib"
    if "lib-global" in families:
        p.defs.append("_HANDLE = None\n\n\ndef _handle():\n    global _HANDLE\n    if _HANDLE is None:\n"
                      f"        _HANDLE = ctypes.CDLL({name})\n    return _HANDLE")
        return "_handle()"
    return f"ctypes.CDLL({name})"


def _name(p: _Program, text: str, families: tuple[str, ...], as_bytes: bool = False) -> str:
    """Define how a name is written; the expression that gives it."""
    half = max(2, len(text) // 2)
    head, tail = text[:half], text[half:]
    enc = ".encode()" if as_bytes else ""
    if "name-fstring" in families or "symbol-fstring" in families:
        p.defs.append(f'_HEAD = "{head}"')
        return f'f"{{_HEAD}}{tail}"{enc}'
    if "name-concat" in families or "symbol-concat" in families:
        return f'b"{head}" + b"{tail}"' if as_bytes else f'"{head}" + "{tail}"'
    if "name-constant" in families:
        p.defs.append(f'_NAME = "{text}"')
        return f"_NAME{enc}"
    return f'b"{text}"' if as_bytes else f'"{text}"'


# --- exports ---------------------------------------------------------------------------------------------------

def _export(parts: dict[str, object], families: tuple[str, ...]) -> str:
    p = _Program(imports=["import ctypes",
                          "from ctypes import POINTER, byref, c_int, c_size_t, c_uint, c_uint64, c_void_p"])
    lib = _lib(p, families)
    name = _name(p, str(parts["export"]), families)
    argtypes = parts["argtypes"]
    take = "getattr(lib, {})"
    if "take-helper" in families:
        p.defs.append("def _sym(lib, name):\n    return getattr(lib, name)")
        take = "_sym(lib, {})"
    body = [f"lib = {lib}"]
    if argtypes is not None and ("table-list" in families or "table-dict" in families):
        args = f"[{', '.join(argtypes)}]"    # type: ignore[arg-type]
        if "table-list" in families:
            p.defs.append(f"_PROTOS = [\n    ({name}, c_int, {args}),\n]")
            body += ["for _n, _res, _args in _PROTOS:", f"    _f = {take.format('_n')}", "    _f.restype = _res",
                     "    _f.argtypes = _args"]
        else:
            p.defs.append(f"_PROTOS = {{\n    {name}: {args},\n}}")
            body += ["for _n, _args in _PROTOS.items():", f"    {take.format('_n')}.argtypes = _args"]
    elif argtypes is not None:
        body += [f"fn = {take.format(name)}", f"fn.argtypes = [{', '.join(argtypes)}]",   # type: ignore[arg-type]
                 "fn.restype = c_int"]
    body += [f"fn = {take.format(name)}", *parts["decls"],   # type: ignore[misc]
             f"rc = fn({', '.join(parts['call'])})"]          # type: ignore[arg-type]
    p.body = body
    p.where = "function" if "in-function" in families else "method" if "in-method" in families else "module"
    return p.render()


# --- requests --------------------------------------------------------------------------------------------------

def _version(p: _Program, parts: dict[str, object], families: tuple[str, ...], api: str,
             lib: str) -> tuple[str, list[str]]:
    """Define where the version comes from; (its expression, lines the body needs first)."""
    v = parts["version"]
    if v == "driver":
        if api == "bindings":
            if "version-helper" in families:
                p.defs.append("def _driver_version():\n    err, v = driver.cuDriverGetVersion()\n    return v")
                return "_driver_version()", []
            if "version-global" in families:
                p.defs.append("_ERR, DRIVER_VERSION = driver.cuDriverGetVersion()")
                return "DRIVER_VERSION", []
            return "ver", ["err, ver = driver.cuDriverGetVersion()"]
        if "version-helper" in families:
            p.defs.append("def _driver_version(lib):\n    v = ctypes.c_int()\n"
                          "    lib.cuDriverGetVersion(ctypes.byref(v))\n    return v.value")
            return "_driver_version(lib)", []
        if "version-global" in families:
            p.defs.append(f"_V = ctypes.c_int()\n{lib}.cuDriverGetVersion(ctypes.byref(_V))\n"
                          "DRIVER_VERSION = _V.value")
            return "DRIVER_VERSION", []
        return "ver.value", ["ver = ctypes.c_int()", "lib.cuDriverGetVersion(ctypes.byref(ver))"]
    if "version-helper" in families:
        p.defs.append(f"def _pinned():\n    return {v}")
        return "_pinned()", []
    if "version-global" in families:
        p.defs.append(f"PINNED = {v}")
        return "PINNED", []
    return str(v), []


def _request(parts: dict[str, object], families: tuple[str, ...]) -> str:
    api = str(parts["api"])
    p = _Program()
    lib = ""
    if api == "bindings":
        p.imports.append("import cuda.bindings.driver as driver" if "import-alias" in families else
                         "from cuda.bindings import driver")
    else:
        p.imports += ["import ctypes", "from ctypes import POINTER, c_int, c_size_t, c_uint, c_uint64, c_void_p"]
        lib = _lib(p, families)
    sym = _name(p, str(parts["symbol"]), families, as_bytes=True)
    ver, pre = _version(p, parts, families, api, lib)
    param = "version-param" in families
    use_ver = "version" if param else ver
    checked = bool(parts["checked"])
    wrapper = "wrapper" in families
    if api == "bindings":
        call = "driver.cuGetProcAddress({s}, {v}, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)"
        test = ["if err != driver.CUresult.CUDA_SUCCESS or status != 0:", "    raise RuntimeError(err)"]
        lines = ["err, pfn, status = " + call.format(s="{s}", v="{v}")] + (test if checked else [])
        setup: list[str] = []
        after = "pfn"
    else:
        getter = "gpa" if "getter-attr" in families else "lib.cuGetProcAddress_v2"
        setup = [f"lib = {lib}"] + (['gpa = getattr(lib, "cuGetProcAddress_v2")'] if "getter-attr" in families
                                    else [])
        lines = ["pfn = ctypes.c_void_p()", "st = ctypes.c_int()",
                 f"rc = {getter}({{s}}, ctypes.byref(pfn), {{v}}, 1, ctypes.byref(st))"]
        lines += ["if rc != 0 or st.value != 0:", "    raise RuntimeError(rc)"] if checked else []
        after = "pfn.value"
    if wrapper:
        sig = "def _get(name, version" + (", lib" if api == "ctypes" else "") + "):"
        body = [ln.format(s="name", v="version") for ln in lines] + [f"return {after}"]
        p.defs.append(sig + "\n" + textwrap.indent("\n".join(body), "    "))
        lines = ["ptr = _get({s}, {v}" + (", lib" if api == "ctypes" else "") + ")"]
        after = "ptr"
    body = setup + ([] if param else pre)
    if "symbol-table" in families:
        rows = f"_ROWS = [\n    ({sym}, {ver if not param else 0}),\n]"
        if not param and (pre or api == "ctypes"):
            body += rows.splitlines()          # the version is known only once the body has the handle
        else:
            p.defs.append(rows)
        body += ["for _sym, _ver in _ROWS:"] + ["    " + ln.format(s="_sym", v="version" if param else "_ver")
                                                for ln in lines]
        loop = True
    else:
        body += [ln.format(s=sym, v=use_ver) for ln in lines]
        loop = False
    if parts.get("proto"):
        proto = ", ".join(parts["proto"])   # type: ignore[arg-type]
        body.append(("    " if loop else "") + f"fn = ctypes.CFUNCTYPE({proto})({after})")
    if param:
        outer = ["def load(version" + (", lib" if api == "ctypes" and setup else "") + "):",
                 *textwrap.indent("\n".join(b for b in body if b not in setup), "    ").splitlines()]
        p.defs.append("\n".join(outer))
        body = setup + pre + ["load(" + ver + (", lib" if api == "ctypes" and setup else "") + ")"]
    p.body = body
    p.where = "method" if "in-method" in families else "module"
    return p.render()


# --- cffi ------------------------------------------------------------------------------------------------------

def _cffi(parts: dict[str, object], families: tuple[str, ...]) -> str:
    decl = str(parts["decl"])
    p = _Program(imports=["from cffi import FFI"])
    p.defs.append("ffi = FFI()")
    head = "typedef int CUresult;\ntypedef unsigned long long CUdeviceptr;\n"
    if "cdef-variable" in families:
        p.defs.append(f'_SRC = """\n{head}{decl}\n"""')
        cdef = "ffi.cdef(_SRC)"
    elif "cdef-concat" in families:
        p.defs.append(f'_TYPES = """\n{head}"""')
        cdef = f'ffi.cdef(_TYPES + "{decl}")'
    else:
        cdef = f'ffi.cdef("""\n{head}{decl}\n""")'
    if "lib-loop" in families:
        open_ = ('lib = None\nfor _cand in ("libcuda.so.1", "nvcuda.dll"):\n    try:\n        lib = ffi.dlopen(_cand)\n'
                 "        break\n    except OSError:\n        continue")
    elif "lib-helper" in families:
        p.defs.append('def _open(name="libcuda.so.1"):\n    return ffi.dlopen(name)')
        open_ = "lib = _open()"
    elif "lib-class" in families:
        p.defs.append('class _Api:\n    def __init__(self):\n        self.lib = ffi.dlopen("libcuda.so.1")')
        open_ = "lib = _Api().lib"
    else:
        open_ = 'lib = ffi.dlopen("libcuda.so.1")'
    p.body = [*cdef.splitlines(), *open_.splitlines()]
    p.where = "function" if "in-function" in families else "module"
    return p.render()


_RENDER = {"export": _export, "request": _request, "cffi": _cffi}
_FAMILIES = {"export": EXPORT_FAMILIES, "request": REQUEST_FAMILIES, "cffi": CFFI_FAMILIES}


def _applies(seed: Seed, combo: tuple[str, ...]) -> bool:
    if len({_group(f) for f in combo}) < len(combo):
        return False                                  # two answers to one question
    if seed.kind == "export" and seed.faulty.get("argtypes") is None and {"table-list", "table-dict"} & set(combo):
        return False                                  # no prototype to tabulate
    if seed.kind == "request" and seed.faulty["api"] == "bindings" and \
            {"lib-loop", "lib-helper", "find-library", "lib-class", "lib-global", "getter-attr"} & set(combo):
        return False                                  # cuda.bindings has no handle
    if seed.kind == "request" and seed.faulty["api"] == "ctypes" and "import-alias" in combo:
        return False
    return not (seed.kind == "request" and seed.faulty["version"] != "driver" and seed.rule == "CE001")


def variants(max_pairs: int = 24, max_triples: int = 12, rng_seed: int = 39) -> Iterator[Variant]:
    """Every seed plain, with each family alone, and in compositions of two and three (all pairs up to
    `max_pairs` a seed, then a sample of triples), each with its fixed twin."""
    rng = random.Random(rng_seed)
    for seed in SEEDS:
        fams = [f for f in _FAMILIES[seed.kind] if not seed.families or f in seed.families]
        combos: list[tuple[str, ...]] = [(), *((f,) for f in fams)]
        pairs = [c for c in itertools.combinations(fams, 2) if _applies(seed, c)]
        triples = [c for c in itertools.combinations(fams, 3) if _applies(seed, c)]
        rng.shuffle(pairs)
        rng.shuffle(triples)
        combos += pairs[:max_pairs] + triples[:max_triples]
        for combo in combos:
            if not _applies(seed, combo):
                continue
            render = _RENDER[seed.kind]
            yield Variant(seed.name, combo, seed.rule, render(seed.faulty, combo), render(seed.fixed, combo))


