"""Write a seed's loader (faulty or fixed) under a set of families, as C, C++ or CUDA source files.

The renderer builds a loader from a `Shape` (the rows, the lookup, where the version comes from, the flags, the
query check) and `Opts` (one choice per axis, see `families`). Each axis owns one concern -- how the lookup is
reached (wrap), what calls it (callee), where the version comes from, how a pointer is stored and where it
lives, how the rows are listed, how the types and casts are spelled, the preprocessor around it, the C++ scope,
the files, the names -- so any choices compose. The faulty loader and its twin differ only where the seed's
shapes differ (a name, a type, a version source, the flags, the test of the query result).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .families import Opts
from .model import FnType, Row, Shape, handwritten, pfn

__all__ = ["ABSENT_CONFIG", "GETTERS", "HEADER", "Rendered", "render", "renamed"]

HEADER = "acme_driver.h"
ABSENT_CONFIG = {"acme_config.h": "#define ACME_API\ntypedef void *acme_lib_t;\n"}
"""The project header the missing_header family includes and leaves out (given to the compile check only)."""


@dataclass(frozen=True)
class _Getter:
    """The C spelling of one getter API."""

    callee: str
    result: str
    ok: str
    status: str
    found: str
    vtype: str
    ftype: str
    flags: dict[str, str]
    export: str            # the export a pointer to it is bound from
    ptype: FnType          # the pointer's type
    runtime: bool          # exported by libcudart (else libcuda)


_DRIVER = _Getter("cuGetProcAddress", "CUresult", "CUDA_SUCCESS", "CUdriverProcAddressQueryResult",
                  "CU_GET_PROC_ADDRESS_SUCCESS", "int", "cuuint64_t",
                  {"legacy": "CU_GET_PROC_ADDRESS_LEGACY_STREAM",
                   "per_thread": "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
                   "default": "CU_GET_PROC_ADDRESS_DEFAULT"},
                  "cuGetProcAddress_v2", pfn("PFN_cuGetProcAddress_v12000"), False)
_RUNTIME = _Getter("cudaGetDriverEntryPointByVersion", "cudaError_t", "cudaSuccess",
                   "enum cudaDriverEntryPointQueryResult",   # no typedef of it in the real headers' C
                   "cudaDriverEntryPointSuccess", "unsigned int", "unsigned long long",
                   {"legacy": "cudaEnableLegacyStream", "per_thread": "cudaEnablePerThreadDefaultStream",
                    "default": "cudaEnableDefault"},
                   "cudaGetDriverEntryPointByVersion",
                   handwritten("cudaError_t", "const char *, void **, unsigned int, unsigned long long, "
                                              "enum cudaDriverEntryPointQueryResult *"), True)
GETTERS = {"getter": _DRIVER, "rt_getter": _RUNTIME}

_PROJECT_NAMES = (
    "load_driver", "init_driver", "DriverApi", "g_driver", "fetch_entry", "resolve_entry", "load_sym", "lookup",
    "ACME_GET_ENTRY", "ACME_LOAD_SYM", "load_fn", "load_as", "get", "p_get_proc", "p_driver_version",
    "p_runtime_version", "p_dlsym", "p_win_lookup", "bind_entry_points", "g_abi_version", "init_version",
    "loader_config", "g_config", "init_config", "abi_version", "ACME_CUDA_ABI", "ACME_QUERY_VERSION", "driver_api",
    "g_api", "api_", "api", "acme_entry", "k_entries", "ACME_DRIVER_ENTRIES", "ACME_DECLARE_ENTRY",
    "ACME_LOAD_ENTRY", "ACME_ROW", "acme", "gpu", "acme_touch", "reported", "getproc", "sym", "acme_lib_sym",
    "ACME_LIB_OPEN", "ACME_LIB_SYM", "ACME_CUDA_LIB", "ACME_CUDART_LIB",
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


_DECLARES = re.compile(r"(CUdriverProcAddressQueryResult|enum |void \*tmp|const |int )")


def _block(lines: list[str]) -> list[str]:
    """Statements in their own block when they declare something (so rows do not redeclare)."""
    if any(_DECLARES.match(s) for s in lines):
        return ["{", *_indent(lines), "}"]
    return lines


class _Loader:
    def __init__(self, shape: Shape, o: Opts, cxx: bool) -> None:
        self.s = shape
        self.o = o
        self.cu = o.lang == "cu"
        self.cxx = cxx or self.cu or shape.cxx or o.wrap in ("lambda", "template", "template_return") \
            or o.typing == "using_alias" or o.scope in ("namespace", "class") or o.casts == "cxx"
        self.k = GETTERS.get(shape.lookup)
        self.getter = self.k is not None
        self.win = o.pp == "win32"
        self.portable = o.pp == "portable"
        self.cls = o.scope == "class"
        self.ht = "acme_lib_t" if o.pp == "missing_header" else "void *"
        self.api_macro = "ACME_API " if o.pp == "missing_header" else ""
        self.callee = o.callee            # "" | pointer | param
        self.local_table = self.cls or o.dest == "struct_param"
        self.aliases: list[str] = []
        clash = {r.var for r in shape.rows} & set(_PROJECT_NAMES)
        if clash:
            raise ValueError(f"a row's variable is a name the renderer uses: {', '.join(sorted(clash))}")
        self.types = {r.var: self._type(r) for r in shape.rows}

    # ---- the platform ------------------------------------------------------------------------------------
    def param(self, name: str) -> str:
        return f"{self.ht}{name}" if self.ht.endswith("*") else f"{self.ht} {name}"

    def open_lib(self, runtime: bool = False) -> str:
        if self.portable:
            return f"ACME_LIB_OPEN({'ACME_CUDART_LIB' if runtime else 'ACME_CUDA_LIB'})"
        if self.win:
            return f'(void *)LoadLibraryA("{"cudart64_13.dll" if runtime else "nvcuda.dll"}")'
        return f'dlopen("{"libcudart.so.13" if runtime else "libcuda.so.1"}", RTLD_NOW | RTLD_LOCAL)'

    def sym_fn_declare(self, name: str) -> str:
        """A function pointer `name` of the platform lookup's type."""
        if self.win:
            return f"FARPROC (WINAPI *{name})(HMODULE, LPCSTR)"
        return f"void *(*{name})(void *, const char *)"

    @property
    def sym_fn(self) -> str:
        """The platform lookup function a pointer can hold."""
        return "GetProcAddress" if self.win else "acme_lib_sym" if self.portable else "dlsym"

    def lookup_call(self, lib: str, name: str, *, through: str = "") -> str:
        """The platform's lookup of `name` in `lib`, directly or through the function pointer `through`."""
        if through:
            return f"(void *){through}((HMODULE)({lib}), {name})" if self.win else f"{through}({lib}, {name})"
        if self.portable:
            return f"ACME_LIB_SYM({lib}, {name})"
        if self.win:
            return f"(void *)GetProcAddress((HMODULE)({lib}), {name})"
        return f"dlsym({lib}, {name})"

    def look(self, lib: str, name: str) -> str:
        """How a dlsym loader looks `name` up (through the pointer or parameter of the callee family)."""
        through = {"pointer": "p_win_lookup" if self.win else "p_dlsym", "param": "sym"}.get(self.callee, "")
        return self.lookup_call(lib, name, through=through)

    def includes(self) -> list[str]:
        out = ["#include <stddef.h>", "#include <string.h>"]
        if self.portable:
            out += ["#if defined(_WIN32)", "#include <windows.h>", '#define ACME_CUDA_LIB "nvcuda.dll"',
                    '#define ACME_CUDART_LIB "cudart64_13.dll"',
                    "#define ACME_LIB_OPEN(name) (void *)LoadLibraryA(name)",
                    "#define ACME_LIB_SYM(lib, name) (void *)GetProcAddress((HMODULE)(lib), (name))", "#else",
                    "#include <dlfcn.h>", '#define ACME_CUDA_LIB "libcuda.so.1"',
                    '#define ACME_CUDART_LIB "libcudart.so.13"',
                    "#define ACME_LIB_OPEN(name) dlopen((name), RTLD_NOW | RTLD_LOCAL)",
                    "#define ACME_LIB_SYM(lib, name) dlsym((lib), (name))", "#endif"]
        else:
            out.append("#include <windows.h>" if self.win else "#include <dlfcn.h>")
        out += ["#include <cuda.h>", "#include <cudaTypedefs.h>"]
        if self.getter and (self.s.version == "runtime" or self.s.lookup == "rt_getter"):
            out.append("#include <cuda_runtime_api.h>")
        return out

    # ---- casts -------------------------------------------------------------------------------------------
    def cast(self, typ: str, expr: str, dest: str = "") -> str:
        if self.o.casts == "cxx":   # decltype of a variable or member names its type (of an element: a reference)
            named = dest and not dest.endswith("]")
            return f"reinterpret_cast<decltype({dest})>({expr})" if named else f"reinterpret_cast<{typ}>({expr})"
        return f"({typ}){expr}"

    def addr(self, dest: str) -> str:
        return f"reinterpret_cast<void **>(&{dest})" if self.o.casts == "cxx" else f"(void **)&{dest}"

    # ---- the getter --------------------------------------------------------------------------------------
    @property
    def kind(self) -> _Getter:
        assert self.k is not None
        return self.k

    @property
    def flags(self) -> str:
        return self.kind.flags[self.s.flags]

    @property
    def check(self) -> str:
        return f" || st != {self.kind.found}" if self.s.check_query else ""

    @property
    def getproc(self) -> str:
        return {"pointer": "p_get_proc", "param": "getproc"}.get(self.callee, self.kind.callee)

    @property
    def gp_param(self) -> str:
        """The leading parameter of every function that calls the lookup, when the callee is a parameter."""
        if self.callee != "param":
            return ""
        return (self.kind.ptype.declare("getproc") if self.getter else self.sym_fn_declare("sym")) + ", "

    @property
    def gp_arg(self) -> str:
        return ("getproc, " if self.getter else "sym, ") if self.callee == "param" else ""

    @property
    def query(self) -> tuple[str, str]:
        """The version query's callee and its success value."""
        pointer = self.callee == "pointer"
        if self.s.version == "runtime":
            return ("p_runtime_version" if pointer else "cudaRuntimeGetVersion"), "cudaSuccess"
        return ("p_driver_version" if pointer else "cuDriverGetVersion"), "CUDA_SUCCESS"

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
    @property
    def const_version(self) -> str | None:
        toolkit = "CUDART_VERSION" if self.s.lookup == "rt_getter" else "CUDA_VERSION"
        return {"literal": str(self.s.pin), "toolkit": toolkit}.get(self.s.version)

    def _set(self, lv: str, fail: str = "-1") -> list[str]:
        const = self.const_version
        if const:
            return [f"{lv} = {const};"]
        fn, ok = self.query
        return [f"if ({fn}(&{lv}) != {ok}) return {fail};"]

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

    # ---- the callee: pointers bound by dlsym, or a parameter ------------------------------------------------
    def _bind_getter(self, target: str) -> list[str]:
        k = self.kind
        lib = "rt" if k.runtime else "h"
        out = [f"void *rt = {self.open_lib(runtime=True)};", "if (rt == NULL) return -1;"] if k.runtime else []
        return out + [f"{target} = {self.cast(k.ptype.abstract, self.lookup_call(lib, chr(34) + k.export + chr(34)))};",
                      f"if ({target} == NULL) return -1;"]

    def bound_pointers(self) -> list[str]:
        """The pointers the via_pointer family calls through, and the function that binds them."""
        out = []
        if self.portable and not self.getter and self.callee:
            out += [f"static void *acme_lib_sym({self.param('lib')}, const char *name) {{",
                    "  return ACME_LIB_SYM(lib, name);", "}", ""]
        if self.callee != "pointer":
            return out
        if not self.getter:
            name = "p_win_lookup" if self.win else "p_dlsym"
            return [*out, f"static {self.sym_fn_declare(name)} = {self.sym_fn};"]
        decl = [f"static {self.kind.ptype.declare('p_get_proc')};"]
        body = self._bind_getter("p_get_proc")
        if self.s.version == "driver":
            decl.append("static PFN_cuDriverGetVersion_v2020 p_driver_version;")
            body += [f"p_driver_version = {self.cast('PFN_cuDriverGetVersion_v2020', self.lookup_call('h', chr(34) + 'cuDriverGetVersion' + chr(34)))};",  # noqa: E501
                     "if (p_driver_version == NULL) return -1;"]
        if self.s.version == "runtime":
            decl.append("static cudaError_t (*p_runtime_version)(int *);")
            if not self.kind.runtime:
                body += [f"void *rt = {self.open_lib(runtime=True)};", "if (rt == NULL) return -1;"]
            body += [f"p_runtime_version = {self.cast('cudaError_t (*)(int *)', self.lookup_call('rt', chr(34) + 'cudaRuntimeGetVersion' + chr(34)))};",  # noqa: E501
                     "if (p_runtime_version == NULL) return -1;"]
        return [*out, *decl, "", f"static int bind_entry_points({self.param('h')}) {{", *_indent(body), "  return 0;",
                "}"]

    # ---- the lookup ----------------------------------------------------------------------------------------
    def wrappers(self) -> tuple[list[str], list[str]]:
        """(file-scope definitions, loader prologue) of the wrap family."""
        return self._getter_wrappers() if self.getter else self._dlsym_wrappers()

    def _getter_wrappers(self) -> tuple[list[str], list[str]]:
        w, k, gp, g = self.o.wrap, self.kind, self.gp_param, self.getproc
        call = f"{g}(name, &fn, version, {self.flags}, &st) != {k.ok}{self.check}"
        vt = k.vtype
        if w == "rename":
            return ([f"static {k.result} fetch_entry({gp}const char *name, void **out, {vt} version, {k.ftype} flags,",
                     f"                           {k.status} *status) {{",
                     f"  return {g}(name, out, version, flags, status);", "}"], [])
        if w == "load_sym":
            return ([f"static void *load_sym({gp}{self.param('h')}, const char *name, {vt} version) {{",
                     "  void *fn = NULL;", f"  {k.status} st;", "  (void)h;", f"  if ({call}) return NULL;",
                     "  return fn;", "}"], [])
        if w == "out_param":
            return ([f"static int lookup({gp}{self.param('h')}, const char name[], void **out, {vt} version) {{",
                     f"  {k.status} st;", "  (void)h;", "  *out = NULL;",
                     f"  if ({call.replace('&fn', 'out')}) return 0;", "  return 1;", "}"], [])
        if w == "macro":
            return ([f"#define ACME_GET_ENTRY(name, out, version, status) "
                     f"{g}((name), (out), (version), {self.flags}, (status))"], [])
        if w == "lambda":
            return ([], [f"{k.status} st;", f"auto get = [&](const char *name, void **out, {vt} version) {{",
                         f"  return {g}(name, out, version, {self.flags}, &st);", "};"])
        if w == "template":
            return (["template <typename F>", f"static bool load_fn({gp}const char *name, F &out, {vt} version) {{",
                     "  void *fn = nullptr;", f"  {k.status} st;", f"  if ({call}) return false;",
                     f"  {self._template_store()}", "  return true;", "}"], [])
        if w == "template_return":
            return (["template <typename F>", f"static F load_as({gp}const char *name, {vt} version) {{",
                     "  void *fn = nullptr;", f"  {k.status} st;", f"  if ({call}) return nullptr;",
                     f"  return {self.cast('F', 'fn')};", "}"], [])
        return [], []

    def _dlsym_wrappers(self) -> tuple[list[str], list[str]]:
        w, gp, look, p = self.o.wrap, self.gp_param, self.look, self.param
        if w == "rename":
            return ([f"static void *resolve_entry({gp}{p('lib')}, const char *symbol) {{",
                     f"  return {look('lib', 'symbol')};", "}"], [])
        if w == "load_sym":
            return ([f"static void *load_sym({gp}{p('h')}, const char *name) {{", "  const char *symbol = name;",
                     f"  void *fn = {look('h', 'symbol')};", "  return fn;", "}"], [])
        if w == "out_param":
            return ([f"static int lookup({gp}{p('h')}, const char name[], void **out) {{",
                     f"  *out = {look('h', 'name')};", "  return *out != NULL;", "}"], [])
        if w == "macro":
            return ([f"#define ACME_LOAD_SYM(lib, name) {look('(lib)', '(name)')}"], [])
        if w == "lambda":
            return [], [f"auto get = [&](const char *name) -> void * {{ return {look('h', 'name')}; }};"]
        if w == "template":
            return (["template <typename F>", f"static bool load_fn({gp}{p('h')}, const char *name, F &out) {{",
                     f"  void *fn = {look('h', 'name')};", f"  {self._template_store()}", "  return fn != nullptr;",
                     "}"], [])
        if w == "template_return":
            return (["template <typename F>", f"static F load_as({gp}{p('h')}, const char *name) {{",
                     f"  return {self.cast('F', look('h', 'name'))};", "}"], [])
        return [], []

    def _template_store(self) -> str:
        return {"cast_store": "*(void **)&out = fn;", "memcpy": "memcpy(&out, &fn, sizeof out);"}.get(
            self.o.store, f"out = {self.cast('F', 'fn')};")

    def fetch(self, name: str, dest: str, typ: str | None, ver: str) -> list[str]:
        """The statements that fetch `name` into `dest` (of type `typ`; None: `dest` is a `void *` in a table)."""
        w, gp = self.o.wrap, self.gp_arg
        vargs = f", {ver}" if self.getter else ""
        if w == "template":
            args = f"{gp}{name}, {dest}{vargs}" if self.getter else f"{gp}h, {name}, {dest}"
            return [f"if (!load_fn({args})) return -1;"]
        if w == "template_return":
            args = f"{gp}{name}{vargs}" if self.getter else f"{gp}h, {name}"
            return self._store_expr(lambda t, d: f"load_as<{t or 'void *'}>({args})", dest, typ)
        if self.getter and w in ("", "rename", "macro", "lambda"):
            return self._store_into(self._getter_call(name, ver), dest, typ)
        if w == "out_param":
            return self._store_into(lambda a: [f"if (!lookup({gp}h, {name}, {a}{vargs})) return -1;"], dest, typ)
        if self.getter:   # load_sym
            base = f"load_sym({gp}h, {name}, {ver})"
        else:
            base = {"": self.look("h", name), "rename": f"resolve_entry({gp}h, {name})",
                    "load_sym": f"load_sym({gp}h, {name})", "macro": f"ACME_LOAD_SYM(h, {name})",
                    "lambda": f"get({name})"}[w]
        return self._store_expr(lambda t, d: base if t is None else self.cast(t, base, d), dest, typ)

    def _getter_call(self, name: str, ver: str) -> Callable[[str], list[str]]:
        w, k = self.o.wrap, self.kind
        if w == "lambda":
            return lambda a: [f"if (get({name}, {a}, {ver}) != {k.ok}{self.check}) return -1;"]
        if w == "macro":
            return lambda a: [f"{k.status} st;",
                              f"if (ACME_GET_ENTRY({name}, {a}, {ver}, &st) != {k.ok}{self.check}) return -1;"]
        callee = f"fetch_entry({self.gp_arg}" if w == "rename" else f"{self.getproc}("
        return lambda a: [f"{k.status} st;",
                          f"if ({callee}{name}, {a}, {ver}, {self.flags}, &st) != {k.ok}{self.check}) return -1;"]

    def _store_expr(self, expr: Callable[[str | None, str], str], dest: str, typ: str | None) -> list[str]:
        """Store the pointer an expression gives: `expr(type, dest)` is the value as `type` (None: a `void *`)."""
        st = self.o.store
        if st == "memcpy":
            target = "memcpy(e->dest, &tmp, sizeof tmp);" if typ is None else f"memcpy(&{dest}, &tmp, sizeof {dest});"
            return [f"void *tmp = {expr(None, dest)};", "if (tmp == NULL) return -1;", target]
        if st == "cast_store":
            lv = "*(void **)e->dest" if typ is None else f"*(void **)&{dest}"
            return [f"{lv} = {expr(None, dest)};", f"if ({dest} == NULL) return -1;"]
        return [f"{dest} = {expr(typ, dest)};", f"if ({dest} == NULL) return -1;"]

    def _store_into(self, fetch: Callable[[str], list[str]], dest: str, typ: str | None) -> list[str]:
        """Store the pointer a call writes through its `void **` argument."""
        st = self.o.store
        if st == "":
            return fetch("e->dest" if typ is None else self.addr(dest))
        target = {"cast_store": "*(void **)e->dest = tmp;" if typ is None else f"*(void **)&{dest} = tmp;",
                  "memcpy": "memcpy(e->dest, &tmp, sizeof tmp);" if typ is None
                  else f"memcpy(&{dest}, &tmp, sizeof {dest});"}[st]
        return ["void *tmp = NULL;", *fetch("&tmp"), target]

    # ---- where the pointers live ---------------------------------------------------------------------------
    def dest(self, var: str) -> str:
        if self.o.dest == "struct_member":
            return f"{'api_' if self.cls else 'g_api'}.{var}"
        if self.o.dest == "struct_param":
            return f"api->{var}"
        if self.o.dest == "array_element":
            return f"{var}[0]"
        return var

    def declarations(self) -> list[str]:
        """The pointer variables (file scope, or the members of the class)."""
        in_struct = self.o.dest in ("struct_member", "struct_param")
        static = "" if self.cls or in_struct else "static "
        arr = "[2]" if self.o.dest == "array_element" else ""
        if self.o.xlist == "xmacro":
            decl = [f"#define ACME_DECLARE_ENTRY(sym_, var_, type_) {static}type_ var_{arr};"]
            rows = ["ACME_DRIVER_ENTRIES(ACME_DECLARE_ENTRY)"]
        else:
            decl = []
            rows = [f"{static}{self.types[r.var].declare(r.var + arr)};" for r in self.s.rows]
        if in_struct:
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
    def table(self, ver: str) -> tuple[list[str], list[str]]:
        """(file-scope declarations, statements of the loader) of the table_loop family: rows carry the version
        when it is a constant, else the loop asks at `ver`."""
        with_ver = self.getter and self.o.version in ("", "macro") and self.const_version is not None
        struct = ["struct acme_entry {", "  const char *name;", "  void **dest;",
                  *([f"  {self.kind.vtype} version;"] if with_ver else []), "};"]
        vfield = f", {ver}" if with_ver else ""
        if self.o.xlist == "xmacro":
            body = [f"#define ACME_ROW(sym_, var_, type_) {{ #sym_, {self.addr(self.dest('var_'))}{vfield} }},",
                    "ACME_DRIVER_ENTRIES(ACME_ROW)"]
        else:
            body = [f'{{ "{r.name}", {self.addr(self.dest(r.var))}{vfield} }},' for r in self.s.rows]
        head = f"{'' if self.local_table else 'static '}const struct acme_entry k_entries[] = {{"
        table = [head, *[b if b.startswith("#") else "  " + b for b in body], "};"]
        loop = ["for (size_t i = 0; i < sizeof k_entries / sizeof k_entries[0]; ++i) {",
                "  const struct acme_entry *e = &k_entries[i];",
                *_indent(_block(self.fetch("e->name", "*e->dest", None, "e->version" if with_ver else ver))), "}"]
        if self.local_table:
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

    def _init(self, call: str, vinit: list[str]) -> list[str]:
        init = [f"{self.param('h')} = {self.open_lib()};", "if (h == NULL) return -1;"]
        args = ["h"]
        if self.callee == "pointer" and self.getter:
            init.append("if (bind_entry_points(h) != 0) return -1;")
        if self.callee == "param":
            if self.getter:
                init += [f"{self.kind.ptype.declare('getproc')} = NULL;", *self._bind_getter("getproc")]
                args.append("getproc")
            else:
                args.append(self.sym_fn)
        if self.o.dest == "struct_param" and not self.cls:
            args.append("&g_api")
        init += vinit
        if self.o.version == "caller_param" and self.getter:
            args.append("v")
        return [*init, f"return {call}({', '.join(args)});"]

    def _params(self) -> str:
        out = [self.param("h")]
        if self.callee == "param":
            out.append(self.gp_param[:-2])
        if self.o.dest == "struct_param" and not self.cls:
            out.append("struct driver_api *api")
        if self.o.version == "caller_param" and self.getter:
            out.append("int ver")
        return ", ".join(out)

    def render(self) -> Rendered:
        o = self.o
        vdecl, vprologue, vinit, ver = self.version()
        wdecl, wprologue = self.wrappers()
        ldecl, lstmts = self.loads(ver)
        params = self._params()
        body = ["(void)h;", *vprologue, *wprologue, *lstmts, "return 0;"]
        includes = self.includes()
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
            loader = [*ldecl, "", f"{self.api_macro}int load_driver({params}) {{", *_indent(body), "}"]
            call = "load_driver"
            instance = []
        tail = [*instance, f"{self.api_macro}int init_driver(void) {{", *_indent(self._init(call, vinit)), "}"]
        if self.cu:
            tail += ["", "__global__ void acme_touch(int *flag) { *flag = 1; }"]
        ns_open, ns_close = (["namespace acme {", "namespace gpu {", ""],
                             ["", "}  // namespace gpu", "}  // namespace acme"]) if o.scope == "namespace" else ([], [])
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
        elif self.portable:
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
