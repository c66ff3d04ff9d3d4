"""Write a seed's loader (faulty or fixed) under a set of families, as C, C++ or CUDA source files.

The renderer builds a loader from a `Shape` (the rows, the lookup, where the version comes from, the flags, the
query check) and `Opts` (one choice per axis, see `families`). Each axis owns one concern -- how the lookup is
reached, where the version comes from, how a pointer is stored, where it lives, how the rows are listed, how the
types are spelled, the preprocessor around it, the C++ scope, the files, the names -- so any choices compose.
The faulty loader and its twin differ only where the seed's shapes differ (a name, a type, a version source, the
flags, the test of the query result).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .families import Opts
from .model import FnType, Row, Shape

__all__ = ["ABSENT_CONFIG", "HEADER", "Rendered", "render", "renamed"]

HEADER = "acme_driver.h"
ABSENT_CONFIG = {"acme_config.h": "#define ACME_API\ntypedef void *acme_lib_t;\n"}
"""The project header the missing_header family includes and leaves out (given to the compile check only)."""

_FLAGS = {"legacy": "CU_GET_PROC_ADDRESS_LEGACY_STREAM", "per_thread": "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
          "default": "CU_GET_PROC_ADDRESS_DEFAULT"}
_PROJECT_NAMES = (
    "load_driver", "init_driver", "DriverApi", "g_driver", "fetch_entry", "resolve_entry", "load_sym", "lookup",
    "ACME_GET_ENTRY", "ACME_LOAD_SYM", "load_fn", "get", "p_get_proc", "p_driver_version", "p_runtime_version",
    "p_dlsym", "p_get_proc_address", "bind_entry_points", "g_abi_version", "init_version", "loader_config",
    "g_config", "init_config", "abi_version", "ACME_CUDA_ABI", "ACME_QUERY_VERSION", "driver_api", "g_api", "api_",
    "acme_entry", "k_entries", "ACME_DRIVER_ENTRIES", "ACME_DECLARE_ENTRY", "ACME_LOAD_ENTRY", "ACME_ROW", "acme",
    "gpu", "acme_touch", "reported",
)


@dataclass
class Rendered:
    """The files of one rendering, and what the compile check needs that the files leave out."""

    files: dict[str, str]
    main: str
    absent: dict[str, str] = field(default_factory=dict)
    configs: tuple[tuple[str, ...], ...] = ((),)


def render(shape: Shape, o: Opts, *, cxx: bool) -> Rendered:
    """The loader `shape` written with the choices `o` (as C++ when `cxx`, or when a choice needs it)."""
    return _Loader(shape, o, cxx).render()


def _indent(lines: Iterable[str], n: int = 1) -> list[str]:
    pad = "  " * n
    return [pad + line if line and not line.startswith("#") else line for line in lines]


def _block(lines: list[str]) -> list[str]:
    """Statements in their own block when they declare something (so rows do not redeclare)."""
    if any(re.match(r"(CUdriverProcAddressQueryResult|void \*tmp|const |int )", s) for s in lines):
        return ["{", *_indent(lines), "}"]
    return lines


class _Loader:
    def __init__(self, shape: Shape, o: Opts, cxx: bool) -> None:
        self.s = shape
        self.o = o
        self.cu = o.lang == "cu"
        self.cxx = cxx or self.cu or shape.cxx or o.wrap in ("lambda", "template") or o.typing == "using_alias" \
            or o.scope in ("namespace", "class")
        self.getter = shape.lookup == "getter"
        self.win = o.pp == "win32"
        self.cls = o.scope == "class"
        self.ht = "acme_lib_t" if o.pp == "missing_header" else "void *"
        self.api = "ACME_API " if o.pp == "missing_header" else ""
        self.pointer = o.callee == "pointer"
        self.aliases: list[str] = []
        self.types = {r.var: self._type(r) for r in shape.rows}

    # ---- small pieces ------------------------------------------------------------------------------------
    def param(self, name: str) -> str:
        return f"{self.ht}{name}" if self.ht.endswith("*") else f"{self.ht} {name}"

    def open_lib(self, runtime: bool = False) -> str:
        if self.win:
            return f'(void *)LoadLibraryA("{"cudart64_13.dll" if runtime else "nvcuda.dll"}")'
        return f'dlopen("{"libcudart.so.13" if runtime else "libcuda.so.1"}", RTLD_NOW | RTLD_LOCAL)'

    def lookup_call(self, lib: str, name: str, *, bound: bool | None = None) -> str:
        """The platform's lookup of `name` in `lib` (through a pointer for a dlsym loader with via_pointer)."""
        through = (self.pointer and not self.getter) if bound is None else bound
        if self.win:
            fn = "p_get_proc_address" if through else "GetProcAddress"
            return f"(void *){fn}((HMODULE)({lib}), {name})"
        return f"{'p_dlsym' if through else 'dlsym'}({lib}, {name})"

    @property
    def flags(self) -> str:
        return _FLAGS[self.s.flags]

    @property
    def check(self) -> str:
        return " || st != CU_GET_PROC_ADDRESS_SUCCESS" if self.s.check_query else ""

    @property
    def getproc(self) -> str:
        return "p_get_proc" if self.pointer else "cuGetProcAddress"

    @property
    def query(self) -> tuple[str, str]:
        """The version query's callee and its success value."""
        if self.s.version == "runtime":
            return ("p_runtime_version" if self.pointer else "cudaRuntimeGetVersion"), "cudaSuccess"
        return ("p_driver_version" if self.pointer else "cuDriverGetVersion"), "CUDA_SUCCESS"

    # ---- types -------------------------------------------------------------------------------------------
    def _type(self, r: Row) -> FnType:
        t = r.type
        alias = f"acme_{r.var[2:] if r.var.startswith('p_') else r.var}"
        if self.o.typing == "typedef_chain":
            self.aliases += [f"typedef {t.declare(alias + '_fn')};", f"typedef {alias}_fn {alias}_t;"]
            return FnType(name=f"{alias}_t")
        if self.o.typing == "using_alias":
            self.aliases.append(f"using {alias}_t = {t.abstract};")
            return FnType(name=f"{alias}_t")
        if self.o.xlist == "xmacro" and not t.single_token:
            self.aliases.append(f"typedef {t.declare(alias + '_t')};")
            return FnType(name=f"{alias}_t")
        return t

    # ---- the version -------------------------------------------------------------------------------------
    def _set(self, lv: str, fail: str = "-1") -> list[str]:
        if self.s.version == "literal":
            return [f"{lv} = {self.s.pin};"]
        if self.s.version == "toolkit":
            return [f"{lv} = CUDA_VERSION;"]
        fn, ok = self.query
        return [f"if ({fn}(&{lv}) != {ok}) return {fail};"]

    @property
    def const_version(self) -> str | None:
        return {"literal": str(self.s.pin), "toolkit": "CUDA_VERSION"}.get(self.s.version)

    def version(self) -> tuple[list[str], list[str], list[str], str]:
        """(file-scope declarations, loader prologue, statements of init_driver, the version expression)."""
        if not self.getter:
            return [], [], [], ""
        route, const = self.o.version, self.const_version
        if route == "static_elsewhere":
            return (["static int g_abi_version;", "", "static int init_version(void) {",
                     *_indent(self._set("g_abi_version")), "  return 0;", "}"],
                    [], ["if (init_version() != 0) return -1;"], "g_abi_version")
        if route == "struct_field":
            return (["struct loader_config {", "  int abi_version;", "  unsigned flags;", "};",
                     "static struct loader_config g_config;", "", "static int init_config(void) {",
                     "  g_config.flags = 0;", *_indent(self._set("g_config.abi_version")), "  return 0;", "}"],
                    [], ["if (init_config() != 0) return -1;"], "g_config.abi_version")
        if route == "helper_return":
            body = [f"return {const};"] if const else ["int v = 0;", *self._set("v", "0"), "return v;"]
            return ["static int abi_version(void) {", *_indent(body), "}"], [], [], "abi_version()"
        if route == "caller_param":
            return [], [], ["int v = 0;", *self._set("v")], "ver"
        if route == "macro":
            if const:
                return [f"#define ACME_CUDA_ABI {const}"], [], [], "ACME_CUDA_ABI"
            fn, ok = self.query
            return ([f"#define ACME_QUERY_VERSION(out) {fn}(&(out))"],
                    ["int ver = 0;", f"if (ACME_QUERY_VERSION(ver) != {ok}) return -1;"], [], "ver")
        if route == "late_assign":
            if const:
                return [], ["int ver = 0;", f"ver = {const};"], [], "ver"
            return [], ["int ver = 0;", "int reported = 0;", *self._set("reported"), "ver = reported;"], [], "ver"
        if const:
            return [], [], [], const
        return [], ["int ver = 0;", *self._set("ver")], [], "ver"

    # ---- the lookup --------------------------------------------------------------------------------------
    def bound_pointers(self) -> list[str]:
        """The pointers the via_pointer family calls through, and the function that binds them."""
        if not self.pointer:
            return []
        if not self.getter:
            if self.win:
                return ["static FARPROC (WINAPI *p_get_proc_address)(HMODULE, LPCSTR) = GetProcAddress;"]
            return ["static void *(*p_dlsym)(void *, const char *) = dlsym;"]
        decl = ["static PFN_cuGetProcAddress_v12000 p_get_proc;"]
        body = ["p_get_proc = (PFN_cuGetProcAddress_v12000)" + self.lookup_call("h", '"cuGetProcAddress_v2"') + ";",
                "if (p_get_proc == NULL) return -1;"]
        if self.s.version == "driver":
            decl.append("static PFN_cuDriverGetVersion_v2020 p_driver_version;")
            body += ["p_driver_version = (PFN_cuDriverGetVersion_v2020)"
                     + self.lookup_call("h", '"cuDriverGetVersion"') + ";", "if (p_driver_version == NULL) return -1;"]
        if self.s.version == "runtime":
            decl.append("static cudaError_t (*p_runtime_version)(int *);")
            body += [f"void *rt = {self.open_lib(runtime=True)};", "if (rt == NULL) return -1;",
                     "p_runtime_version = (cudaError_t (*)(int *))"
                     + self.lookup_call("rt", '"cudaRuntimeGetVersion"') + ";",
                     "if (p_runtime_version == NULL) return -1;"]
        return [*decl, "", f"static int bind_entry_points({self.param('h')}) {{", *_indent(body), "  return 0;", "}"]

    def wrappers(self) -> tuple[list[str], list[str]]:
        """(file-scope definitions, loader prologue) of the lookup family."""
        w, g = self.o.wrap, self.getter
        ht = self.param
        if g:
            call = f"{self.getproc}(name, &fn, version, {self.flags}, &st) != CUDA_SUCCESS{self.check}"
            if w == "rename":
                return (["static CUresult fetch_entry(const char *name, void **out, int version, cuuint64_t flags,",
                         "                           CUdriverProcAddressQueryResult *status) {",
                         f"  return {self.getproc}(name, out, version, flags, status);", "}"], [])
            if w == "load_sym":
                return ([f"static void *load_sym({ht('h')}, const char *name, int version) {{", "  void *fn = NULL;",
                         "  CUdriverProcAddressQueryResult st;", "  (void)h;", f"  if ({call}) return NULL;",
                         "  return fn;", "}"], [])
            if w == "out_param":
                return ([f"static int lookup({ht('h')}, const char *name, void **out, int version) {{",
                         "  CUdriverProcAddressQueryResult st;", "  (void)h;", "  *out = NULL;",
                         f"  if ({call.replace('&fn', 'out')}) return 0;", "  return 1;", "}"], [])
            if w == "macro":
                return ([f"#define ACME_GET_ENTRY(name, out, version, status) "
                         f"{self.getproc}((name), (out), (version), {self.flags}, (status))"], [])
            if w == "lambda":
                return ([], ["CUdriverProcAddressQueryResult st;",
                             "auto get = [&](const char *name, void **out, int version) {",
                             f"  return {self.getproc}(name, out, version, {self.flags}, &st);", "};"])
            if w == "template":
                return (["template <typename F>", "static bool load_fn(const char *name, F &out, int version) {",
                         "  void *fn = nullptr;", "  CUdriverProcAddressQueryResult st;",
                         f"  if ({call}) return false;", f"  {self._template_store()}", "  return true;", "}"], [])
            return [], []
        look = self.lookup_call
        if w == "rename":
            return ([f"static void *resolve_entry({ht('lib')}, const char *symbol) {{",
                     f"  return {look('lib', 'symbol')};", "}"], [])
        if w == "load_sym":
            return ([f"static void *load_sym({ht('h')}, const char *name) {{", "  const char *symbol = name;",
                     f"  void *fn = {look('h', 'symbol')};", "  return fn;", "}"], [])
        if w == "out_param":
            return ([f"static int lookup({ht('h')}, const char *name, void **out) {{",
                     f"  *out = {look('h', 'name')};", "  return *out != NULL;", "}"], [])
        if w == "macro":
            return ([f"#define ACME_LOAD_SYM(lib, name) {look('(lib)', '(name)')}"], [])
        if w == "lambda":
            return [], [f"auto get = [&](const char *name) -> void * {{ return {look('h', 'name')}; }};"]
        if w == "template":
            return (["template <typename F>", f"static bool load_fn({ht('h')}, const char *name, F &out) {{",
                     f"  void *fn = {look('h', 'name')};", f"  {self._template_store()}", "  return fn != nullptr;",
                     "}"], [])
        return [], []

    def _template_store(self) -> str:
        return {"cast_store": "*(void **)&out = fn;", "memcpy": "memcpy(&out, &fn, sizeof out);"}.get(
            self.o.store, "out = (F)fn;")

    def fetch(self, name: str, dest: str, typ: str | None, ver: str) -> list[str]:
        """The statements that fetch `name` into `dest` (of type `typ`; None: `dest` is a `void *` in a table)."""
        w, g = self.o.wrap, self.getter
        if w == "template":
            args = f"{name}, {dest}, {ver}" if g else f"h, {name}, {dest}"
            return [f"if (!load_fn({args})) return -1;"]
        if g and w in ("", "rename", "macro", "lambda"):
            callee = {"": self.getproc, "rename": "fetch_entry", "macro": "ACME_GET_ENTRY", "lambda": "get"}[w]

            def into(addr: str) -> list[str]:
                if w == "lambda":
                    return [f"if (get({name}, {addr}, {ver}) != CUDA_SUCCESS{self.check}) return -1;"]
                args = f"{name}, {addr}, {ver}, &st" if w == "macro" else f"{name}, {addr}, {ver}, {self.flags}, &st"
                return ["CUdriverProcAddressQueryResult st;",
                        f"if ({callee}({args}) != CUDA_SUCCESS{self.check}) return -1;"]
            return self._store_into(into, dest, typ)
        if w == "out_param":
            extra = f", {ver}" if g else ""
            return self._store_into(lambda addr: [f"if (!lookup(h, {name}, {addr}{extra})) return -1;"], dest, typ)
        if g:   # load_sym
            expr = f"load_sym(h, {name}, {ver})"
        else:
            expr = {"": self.lookup_call("h", name), "rename": f"resolve_entry(h, {name})",
                    "load_sym": f"load_sym(h, {name})", "macro": f"ACME_LOAD_SYM(h, {name})",
                    "lambda": f"get({name})"}[w]
        return self._store_expr(expr, dest, typ)

    def _store_expr(self, expr: str, dest: str, typ: str | None) -> list[str]:
        st = self.o.store
        if st == "memcpy":
            target = "memcpy(e->dest, &tmp, sizeof tmp);" if typ is None else f"memcpy(&{dest}, &tmp, sizeof {dest});"
            return [f"void *tmp = {expr};", "if (tmp == NULL) return -1;", target]
        if st == "cast_store":
            lv = "*(void **)e->dest" if typ is None else f"*(void **)&{dest}"
            return [f"{lv} = {expr};", f"if ({dest} == NULL) return -1;"]
        value = expr if typ is None else f"({typ}){expr}"
        return [f"{dest} = {value};", f"if ({dest} == NULL) return -1;"]

    def _store_into(self, into: object, dest: str, typ: str | None) -> list[str]:
        fetch = into  # a function: the address -> statements
        st = self.o.store
        addr = "e->dest" if typ is None else f"(void **)&{dest}"
        if st == "":
            return fetch(addr)  # type: ignore[operator,no-any-return]
        target = {"cast_store": "*(void **)e->dest = tmp;" if typ is None else f"*(void **)&{dest} = tmp;",
                  "memcpy": "memcpy(e->dest, &tmp, sizeof tmp);" if typ is None
                  else f"memcpy(&{dest}, &tmp, sizeof {dest});"}[st]
        return ["void *tmp = NULL;", *fetch("&tmp"), target]  # type: ignore[operator]

    # ---- where the pointers live ---------------------------------------------------------------------------
    def dest(self, var: str) -> str:
        if self.o.dest == "struct_member":
            return f"{'api_' if self.cls else 'g_api'}.{var}"
        if self.o.dest == "array_element":
            return f"{var}[0]"
        return var

    def declarations(self) -> list[str]:
        """The pointer variables (file scope, or the members of the class)."""
        static = "" if self.cls else "static "
        arr = "[2]" if self.o.dest == "array_element" else ""
        if self.o.xlist == "xmacro":
            member = self.o.dest == "struct_member"
            decl = [f"#define ACME_DECLARE_ENTRY(sym_, var_, type_) {'' if member else static}type_ var_{arr};"]
            rows = ["ACME_DRIVER_ENTRIES(ACME_DECLARE_ENTRY)"]
        else:
            decl = []
            rows = [f"{'' if self.o.dest == 'struct_member' else static}"
                    f"{self.types[r.var].declare(r.var + arr)};" for r in self.s.rows]
        if self.o.dest == "struct_member":
            tail = "} api_;" if self.cls else "};"
            rows = ["struct driver_api {", *_indent(rows), tail]
            if not self.cls:
                rows.append("static struct driver_api g_api;")
        return decl + rows

    def xlist(self) -> list[str]:
        if self.o.xlist != "xmacro":
            return []
        rows = [f"  X({r.name}, {r.var}, {self.types[r.var].abstract})" for r in self.s.rows]
        return ["#define ACME_DRIVER_ENTRIES(X) \\", *[r + " \\" for r in rows[:-1]], rows[-1]]

    # ---- the table and the loader ----------------------------------------------------------------------------
    def row_version(self, ver: str) -> bool:
        """Whether the table's rows carry the version (a constant), else the loop asks at `ver`."""
        return self.getter and self.o.version in ("", "macro") and self.const_version is not None

    def table(self, ver: str) -> tuple[list[str], list[str]]:
        """(file-scope declarations, statements of the loader) of the table_loop family."""
        with_ver = self.row_version(ver)
        struct = ["struct acme_entry {", "  const char *name;", "  void **dest;",
                  *(["  int version;"] if with_ver else []), "};"]
        vfield = f", {ver}" if with_ver else ""
        if self.o.xlist == "xmacro":
            body = [f"#define ACME_ROW(sym_, var_, type_) {{ #sym_, (void **)&{self.dest('var_')}{vfield} }},",
                    "ACME_DRIVER_ENTRIES(ACME_ROW)"]
        else:
            body = [f'{{ "{r.name}", (void **)&{self.dest(r.var)}{vfield} }},' for r in self.s.rows]
        head = "const struct acme_entry k_entries[] = {" if self.cls else \
            "static const struct acme_entry k_entries[] = {"
        table = [head, *[b if b.startswith("#") else "  " + b for b in body], "};"]
        loop = ["for (size_t i = 0; i < sizeof k_entries / sizeof k_entries[0]; ++i) {",
                "  const struct acme_entry *e = &k_entries[i];",
                *_indent(_block(self.fetch("e->name", "*e->dest", None, "e->version" if with_ver else ver))), "}"]
        if self.cls:
            return struct, table + loop
        return struct + [""] + table, loop

    def loads(self, ver: str) -> tuple[list[str], list[str]]:
        """(file-scope definitions, statements of the loader) that fetch every row."""
        if self.o.table == "table_loop":
            return self.table(ver)
        if self.o.xlist == "xmacro":
            stmts = _block(self.fetch("#sym_", self.dest("var_"), "type_", ver))
            return ["#define ACME_LOAD_ENTRY(sym_, var_, type_) \\", *[f"  {s} \\" for s in stmts[:-1]],
                    f"  {stmts[-1]}"], ["ACME_DRIVER_ENTRIES(ACME_LOAD_ENTRY)"]
        out: list[str] = []
        for r in self.s.rows:
            out += _block(self.fetch(f'"{r.name}"', self.dest(r.var), self.types[r.var].abstract, ver))
        return [], out

    def render(self) -> Rendered:
        o = self.o
        vdecl, vprologue, vinit, ver = self.version()
        wdecl, wprologue = self.wrappers()
        ldecl, lstmts = self.loads(ver)
        params = self.param("h") + (", int ver" if o.version == "caller_param" and self.getter else "")
        body = ["(void)h;", *vprologue, *wprologue, *lstmts, "return 0;"]
        includes = ["#include <stddef.h>", "#include <string.h>",
                    "#include <windows.h>" if self.win else "#include <dlfcn.h>", "#include <cuda.h>",
                    "#include <cudaTypedefs.h>"]
        if self.getter and self.s.version == "runtime":
            includes.append("#include <cuda_runtime_api.h>")
        shared = [*self.aliases, "", *self.bound_pointers(), "", *vdecl, "", *wdecl, "", *self.xlist()]
        if self.cls:
            klass = ["class DriverApi {", " public:", f"  int load({params}) {{", *_indent(body, 2), "  }", "",
                     *_indent(self.declarations()), "};"]
            shared += ["", *ldecl, "", *klass]
            loader: list[str] = []
            call = "g_driver.load"
            instance = ["static DriverApi g_driver;", ""]
        else:
            shared += ["", *self.declarations()]
            loader = [*ldecl, "", f"{self.api}int load_driver({params}) {{", *_indent(body), "}"]
            call = "load_driver"
            instance = []
        init = [f"{self.param('h')} = {self.open_lib()};", "if (h == NULL) return -1;"]
        if self.pointer and self.getter:
            init.append("if (bind_entry_points(h) != 0) return -1;")
        init += vinit
        args = "h, v" if o.version == "caller_param" and self.getter else "h"
        init.append(f"return {call}({args});")
        tail = [*instance, f"{self.api}int init_driver(void) {{", *_indent(init), "}"]
        if self.cu:
            tail += ["", "__global__ void acme_touch(int *flag) { *flag = 1; }"]
        ns_open, ns_close = (["namespace acme {", "namespace gpu {", ""], ["", "}  // namespace gpu",
                                                                           "}  // namespace acme"]) \
            if o.scope == "namespace" else ([], [])
        files: dict[str, str] = {}
        if o.layout == "header":
            header = ["#ifndef ACME_DRIVER_H", "#define ACME_DRIVER_H", *includes, "", *ns_open, *shared, *ns_close,
                      "", "#endif"]
            files[HEADER] = _text(header)
            main_body = [f'#include "{HEADER}"', "", *ns_open, *loader, "", *tail, *ns_close]
        else:
            main_body = [*includes, "", *ns_open, *shared, "", *loader, "", *tail, *ns_close]
        configs: tuple[tuple[str, ...], ...] = ((),)
        absent: dict[str, str] = {}
        if o.pp == "ifdef_macro":
            main_body = ["#if defined(ACME_WITH_CUDA)", *main_body, "#else",
                         "int init_driver(void) { return -1; }", "#endif"]
            configs = ((), ("-DACME_WITH_CUDA",))
        elif self.win:
            main_body = ["#if defined(_WIN32)", *main_body, "#endif"]
            configs = ((), ("-D_WIN32",))
        elif o.pp == "missing_header":
            main_body = ['#include "acme_config.h"', *main_body]
            absent = dict(ABSENT_CONFIG)
        suffix = ".cu" if self.cu else ".cpp" if self.cxx else ".c"
        main = "loader" + suffix
        files[main] = _text(main_body)
        if o.names == "renamed":
            files = _rename(files)
        return Rendered(files, main, absent, configs)


def _text(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _rename(files: dict[str, str]) -> dict[str, str]:
    """Every project identifier (and every row variable `p_*` and alias `acme_*`) renamed to a name with no hint.
    A name's new name depends on the name alone, so a faulty variant and its twin are renamed alike."""
    found = set().union(*(re.findall(r"\b(?:p|acme)_[a-z_0-9]+\b", t) for t in files.values()))
    names = (set(_PROJECT_NAMES) | found) - {"acme_lib_t"}
    table = {n: renamed(n) for n in names}
    pattern = re.compile(r'"[^"\n]*"|\b(' + "|".join(map(re.escape, sorted(table, key=len, reverse=True))) + r")\b")
    return {k: pattern.sub(lambda m: table[m.group(1)] if m.group(1) else m.group(0), t) for k, t in files.items()}


def renamed(name: str) -> str:
    """The renamed_vars family's name for a project identifier (macros stay upper case)."""
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    return f"{'M' if name.isupper() else 'v'}{digest}"
