"""The platform/FFI layer: the only code that touches cffi, ctypes and dlopen.

Everything above this module deals in plain Python values (ints, bytes, strs)
and catalog records. Here they become C calls.

Function types are built from the catalog's *canonical* parameter types, mapped
onto a few FFI types so that no header needs to be parsed at run time:

* integers, enums (as ``int``/``unsigned int``), floats: as they are;
* a handle (pointer to an opaque driver struct: ``CUcontext``, ``CUstream`` ...):
  ``uintptr_t``, passed exactly like the pointer on every supported ABI, so a
  plain int (``torch.cuda.current_stream().cuda_stream``) goes straight through;
* ``char *``: ``char *`` (bytes, or str encoded as UTF-8);
* any other pointer, and function pointers: ``void *``;
* a struct or union by value: the struct, declared from the catalog's fields.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

import cffi

ffi: Any = cffi.FFI()  # typed as Any: this module is the untyped boundary
_IS_WINDOWS = sys.platform == "win32"

if _IS_WINDOWS:  # pragma: no cover - exercised on Windows only
    ffi.cdef(
        """
        void *LoadLibraryW(const wchar_t *);
        void *GetProcAddress(void *, const char *);
        int FreeLibrary(void *);
        unsigned long GetModuleFileNameW(void *, wchar_t *, unsigned long);
        unsigned long GetLastError(void);
        """
    )
    _dl: Any = ffi.dlopen("kernel32.dll")
else:
    ffi.cdef(
        """
        void *dlopen(const char *, int);
        void *dlsym(void *, const char *);
        int dlclose(void *);
        char *dlerror(void);
        typedef struct { const char *dli_fname; void *dli_fbase; const char *dli_sname; void *dli_saddr; } Dl_info;
        int dladdr(const void *, Dl_info *);
        """
    )
    _dl = ffi.dlopen(None)
    # Look dlerror up now: cffi resolves a function on its first use with dlsym, which clears
    # the error a failed dlopen left, so the first failure of a process lost its reason.
    _dl.dlerror  # noqa: B018

RTLD_NOW = 2
RTLD_LOCAL = 0
NULL = ffi.NULL
CData = ffi.CData
# The class of what ffi.new() returns: the common case on the hot path, tested by identity.
OWNED_CDATA = type(ffi.new("int *"))


class LoadFailure(Exception):
    """dlopen failed; carries the loader's own words. Internal: callers turn it into a cuentry error."""


class SharedLibrary:
    """A dlopen'ed library with explicit close; symbol addresses as ints."""

    def __init__(self, name: str) -> None:
        self.name = name
        if _IS_WINDOWS:  # pragma: no cover
            handle = _dl.LoadLibraryW(name)
            if handle == NULL:
                raise LoadFailure(f"LoadLibrary failed (error {_dl.GetLastError()})")
        else:
            handle = _dl.dlopen(name.encode(), RTLD_NOW | RTLD_LOCAL)
            if handle == NULL:
                err = _dl.dlerror()
                raise LoadFailure(ffi.string(err).decode(errors="replace") if err != NULL else "dlopen failed")
        self._handle: Any = handle
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._handle is None

    def address(self, symbol: str) -> int:
        """The address of an exported symbol, or 0 when it is not exported."""
        handle = self._handle
        if handle is None:
            return 0
        if _IS_WINDOWS:  # pragma: no cover
            p = _dl.GetProcAddress(handle, symbol.encode())
        else:
            p = _dl.dlsym(handle, symbol.encode())
        return int(ffi.cast("uintptr_t", p))

    def path(self) -> str:
        """The file the library was actually loaded from."""
        if self._handle is None:
            return self.name
        if _IS_WINDOWS:  # pragma: no cover
            buf = ffi.new("wchar_t[]", 4096)
            n = _dl.GetModuleFileNameW(self._handle, buf, 4096)
            return ffi.string(buf, n) if n else self.name
        for probe in ("cuInit", "cudaRuntimeGetVersion", "cuDriverGetVersion"):
            addr = self.address(probe)
            if addr:
                info = ffi.new("Dl_info *")
                if _dl.dladdr(ffi.cast("void *", addr), info) and info.dli_fname != NULL:
                    return os.path.realpath(_cstr(info.dli_fname))
        return self.name

    def close(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return
        if _IS_WINDOWS:  # pragma: no cover
            _dl.FreeLibrary(handle)
        else:
            _dl.dlclose(handle)


# --- type mapping --------------------------------------------------------------

_SCALARS = {
    "int", "unsigned int", "short", "unsigned short", "char", "signed char", "unsigned char",
    "long", "unsigned long", "long long", "unsigned long long", "float", "double", "size_t",
    "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
    "intptr_t", "uintptr_t", "ptrdiff_t", "wchar_t",
}
_ALIASES = {"unsigned": "unsigned int", "signed": "int", "signed int": "int", "long int": "long",
            "unsigned long int": "unsigned long", "long long int": "long long",
            "unsigned long long int": "unsigned long long"}

# Argument kinds: how a Python value becomes this C argument.
INT, FLOAT, HANDLE, POINTER, STRING, STRUCT = "int", "float", "handle", "pointer", "string", "struct"


class TypeMap:
    """Maps catalog canonical C types to FFI types, declaring by-value structs on demand."""

    def __init__(self, hints: Mapping[str, frozenset[str]], types: Callable[[], Mapping[str, Any]]) -> None:
        """``hints``: the opaque struct tags, unsigned enum tags and anonymous-enum typedef
        names (enough to map every parameter); ``types``: loads the full type data, needed
        only to declare a struct passed by value."""
        self._opaque = hints["opaque"]
        self._unsigned = hints["unsigned_enums"]
        self._enum_typedefs = hints["enum_typedefs"]
        self._load_types = types
        self._declared: set[str] = set()
        self._lock = threading.Lock()
        self._params: dict[str, tuple[str, str]] = {}
        self._fntypes: dict[tuple[str, ...], Any] = {}

    def enum_type(self, tag: str) -> str:
        return "unsigned int" if tag in self._unsigned else "int"

    def param(self, canonical: str) -> tuple[str, str]:
        """(ffi type, argument kind) for one parameter's canonical type (cached)."""
        got = self._params.get(canonical)
        if got is None:
            got = self._params[canonical] = self._param(canonical)
        return got

    def _param(self, canonical: str) -> tuple[str, str]:
        t = " ".join(canonical.replace("const ", " ").replace("volatile ", " ").split())
        if "(" in t:
            return "void *", POINTER
        if t.endswith("*"):
            inner = t[:-1].strip()
            m = re.fullmatch(r"(struct|union) (\w+)", inner)
            if m and m.group(2) in self._opaque:
                return "uintptr_t", HANDLE
            if inner in ("char", "signed char"):
                return "char *", STRING
            return "void *", POINTER
        if t.startswith("enum "):
            return self.enum_type(t[5:]), INT
        m = re.fullmatch(r"(struct|union) (\w+)", t)
        if m:
            self.declare(m.group(2))
            return f"{m.group(1)} {m.group(2)}", STRUCT
        if t in self._enum_typedefs:
            return "int", INT  # an anonymous enum, known only by its typedef name
        t = _ALIASES.get(t, t)
        if t in ("float", "double"):
            return t, FLOAT
        if t in _SCALARS:
            return t, INT
        raise TypeError(f"no FFI mapping for C type {canonical!r}")

    def field(self, canonical: str, name: str) -> str:
        """One struct field declaration in cffi syntax."""
        t = " ".join(canonical.replace("const ", " ").replace("volatile ", " ").split())
        arr = ""
        m = re.fullmatch(r"(.*?)\s*((?:\[\d*\])+)", t)
        if m and not t.startswith(("struct {", "union {")):
            t, arr = m.group(1), m.group(2)
        if t.startswith(("struct {", "union {")):
            return self._inline(t, name)
        if "(" in t or t.endswith("*"):
            return f"void *{name}{arr};"
        if t.startswith("enum "):
            return f"{self.enum_type(t[5:])} {name}{arr};"
        if t in self._enum_typedefs:
            return f"int {name}{arr};"
        m2 = re.fullmatch(r"(struct|union) (\w+)", t)
        if m2:
            self.declare(m2.group(2))
            return f"{t} {name}{arr};"
        return f"{_ALIASES.get(t, t)} {name}{arr};"

    def _inline(self, text: str, name: str) -> str:
        """An inline (anonymous) struct/union field, nested ones included."""
        kind, rest = text.split("{", 1)
        body, tail = _match_brace(rest)
        fields = []
        for decl in _split_top(body):
            if decl.startswith(("struct {", "union {")):
                k2, r2 = decl.split("{", 1)
                inner, after = _match_brace(r2)
                fields.append(self._inline(f"{k2.strip()} {{{inner}}}", after.strip()))
                continue
            m = re.fullmatch(r"(.*?)\s*(\**)\s*(\w+)\s*((?:\[\d*\])*)", decl)
            if not m:
                raise TypeError(f"cannot declare inline field {decl!r}")
            fields.append(self.field(f"{m.group(1)} {m.group(2)}".strip() + m.group(4), m.group(3)))
        return f"{kind.strip()} {{ {' '.join(fields)} }} {name}{tail.strip()};"

    def declare(self, tag: str) -> None:
        """Declare a struct/union (and what it contains by value) to cffi, once."""
        with self._lock:
            if tag in self._declared:
                return
            self._declared.add(tag)
        rec = self._load_types()["aggregates"].get(tag)
        if rec is None or rec.get("opaque"):
            raise TypeError(f"struct {tag} has no known layout")
        try:
            fields = " ".join(self.field(canon, name) for name, _, canon in rec["fields"])
            ffi.cdef(f"{rec['kind']} {tag} {{ {fields} }};")
        except (TypeError, cffi.CDefError) as exc:
            with self._lock:
                self._declared.discard(tag)
            raise TypeError(f"cannot declare {rec['kind']} {tag}: {exc}") from None

    def function_type(self, ffi_types: list[str] | tuple[str, ...], returns: str = "int") -> Any:
        """The cffi function-pointer type, built from its parts (cached per shape).

        Built with the backend's constructors, not by parsing a C string: parsing
        costs about half a millisecond per new type, which made the first
        resolution of a large table slow.
        """
        key = (returns, *ffi_types)
        got = self._fntypes.get(key)
        if got is None:
            args = tuple(_typeof(t) for t in ffi_types)
            got = self._fntypes[key] = ffi._backend.new_function_type(args, _typeof(returns), False)
        return got


_TYPEOF: dict[str, Any] = {}


def _typeof(name: str) -> Any:
    """cffi's type for a simple type name: primitives and pointers built directly, others parsed once."""
    t = _TYPEOF.get(name)
    if t is None:
        b = ffi._backend
        if name == "void *":
            t = b.new_pointer_type(b.new_void_type())
        elif name == "char *":
            t = b.new_pointer_type(b.new_primitive_type("char"))
        elif name in _SCALARS:
            t = b.new_primitive_type(name)
        else:
            t = ffi.typeof(name)
        _TYPEOF[name] = t
    return t


def _match_brace(text: str) -> tuple[str, str]:
    """Split 'a; b { c; } d; } rest' at the brace closing the one already opened."""
    depth = 1
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[:i], text[i + 1:]
    raise TypeError(f"unbalanced braces in {text!r}")


def _split_top(body: str) -> list[str]:
    """Split declarations on ';' outside braces."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == ";" and depth == 0:
            if "".join(cur).strip():
                out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def function_at(address: int, fntype: str) -> Any:
    """A callable cffi function pointer of type ``fntype`` at ``address``."""
    return ffi.cast(fntype, address)


def new(ctype: str, init: Any = None) -> Any:
    return ffi.new(ctype, init)


def cast(ctype: str, value: Any) -> Any:
    return ffi.cast(ctype, value)


def from_buffer(obj: Any) -> Any:
    return ffi.from_buffer(obj)


def string(cdata: Any) -> bytes:
    got = ffi.string(cdata)
    return got if isinstance(got, bytes) else str(got).encode()


def _cstr(cdata: Any) -> str:
    return string(cdata).decode(errors="replace")


def address_of(cdata: Any) -> int:
    return int(ffi.cast("uintptr_t", cdata))


def sizeof(ctype: str) -> int:
    return int(ffi.sizeof(ctype))


def buffer(cdata: Any, size: int | None = None) -> bytes:
    return bytes(ffi.buffer(cdata, size) if size is not None else ffi.buffer(cdata))


def is_cdata(obj: object) -> bool:
    return isinstance(obj, ffi.CData)


# --- backends --------------------------------------------------------------------

BACKEND_ENV = "CUENTRY_BACKEND"
_STUBS_LOCK = threading.Lock()
_STUBS: list[Any] = []  # [lib or None] once looked for
_STUBS_WHY: list[str] = []


def _backend_mode() -> str:
    """``$CUENTRY_BACKEND`` as pure, compiled or auto (unset or empty)."""
    raw = os.environ.get(BACKEND_ENV)
    return "auto" if raw is None else (raw.strip().lower() or "auto")


def stubs() -> Any:
    """The compiled backend (the ``cuentry._fastcall`` extension), or None for the pure backend.

    ``$CUENTRY_BACKEND``: ``pure`` never uses the stubs; ``compiled`` requires them
    (an ImportError otherwise, for test runs that must cover that backend); unset
    or ``auto`` uses them when installed.
    """
    mode = _backend_mode()
    if mode == "pure":
        return None
    if _STUBS and _STUBS[0] is not None:
        return _STUBS[0]
    if not _STUBS:
        with _STUBS_LOCK:
            if not _STUBS:
                try:
                    import importlib

                    mod = importlib.import_module(f"{__package__}._fastcall")
                    probes = (ffi.new("uintptr_t[1]"), ffi.from_buffer(bytearray(8)))
                    if not all(mod.calibrate(p, int(ffi.cast("uintptr_t", p))) for p in probes):
                        raise ImportError("cannot locate cffi's pointer in its objects (an unknown cffi?)")
                    _STUBS.append(mod)
                except ImportError as exc:
                    _STUBS.append(None)
                    _STUBS_WHY.append(str(exc))
    lib = _STUBS[0]
    if lib is None and mode == "compiled":
        raise ImportError(f"{BACKEND_ENV}=compiled but the compiled extension cuentry._fastcall is not installed: "
                          f"{_STUBS_WHY[0] if _STUBS_WHY else 'unknown'}")
    return lib


def backend() -> dict[str, str]:
    """Which call backend is active, and why."""
    mode = _backend_mode()
    try:
        lib = stubs()
    except ImportError as exc:
        return {"name": "missing", "detail": str(exc)}
    if lib is not None:
        return {"name": "compiled", "detail": "C vectorcall callers built at install (cuentry._fastcall): "
                                              "no libffi and no Python frame per call"}
    if mode == "pure":
        return {"name": "pure", "detail": f"cffi ABI mode through libffi (forced by {BACKEND_ENV}=pure)"}
    why = _STUBS_WHY[0] if _STUBS_WHY else ""
    return {"name": "pure", "detail": "cffi ABI mode through libffi: the compiled extension is not installed "
                                      f"(no C compiler or Python headers at install time?){' - ' + why if why else ''}"}


# --- the fixed bootstrap functions ---------------------------------------------------

BOOTSTRAP: dict[str, str] = {
    "cuInit": "int(*)(unsigned int)",
    "cuDriverGetVersion": "int(*)(int *)",
    "cuGetProcAddress_v2": "int(*)(char *, void **, int, uint64_t, int *)",
    "cuGetProcAddress": "int(*)(char *, void **, int, uint64_t)",
    "cuGetErrorName": "int(*)(int, char **)",
    "cuGetErrorString": "int(*)(int, char **)",
    "cudaRuntimeGetVersion": "int(*)(int *)",
    "cudaDriverGetVersion": "int(*)(int *)",
    "cudaGetDriverEntryPointByVersion": "int(*)(char *, void **, unsigned int, unsigned long long, int *)",
    "cudaGetDriverEntryPoint": "int(*)(char *, void **, unsigned long long, int *)",
    "cudaGetErrorName": "char *(*)(int)",
}


class Bootstrap:
    """The handful of driver/runtime functions cuentry calls itself, bound by exported name."""

    def __init__(self, lib: SharedLibrary) -> None:
        self._lib = lib
        self._fns: dict[str, Any] = {}
        self._has: dict[str, bool] = {}
        self._names: dict[int, str | None] = {}

    def has(self, name: str) -> bool:
        got = self._has.get(name)
        if got is None:
            got = self._has[name] = self._lib.address(name) != 0
        return got

    def fn(self, name: str) -> Any:
        f = self._fns.get(name)
        if f is None:
            addr = self._lib.address(name)
            if not addr:
                raise LookupError(name)
            f = self._fns[name] = function_at(addr, BOOTSTRAP[name])
        return f

    def get_version(self, name: str) -> tuple[int, int]:
        out = ffi.new("int *")
        rc = int(self.fn(name)(out))
        return rc, int(out[0])

    def get_proc_address(self, name: str, symbol: bytes, version: int, flags: int, with_status: bool) -> tuple[int, int | None, int]:
        """Call cuGetProcAddress(_v2) with valid non-NULL outputs; (CUresult, status or None, address)."""
        pfn = ffi.new("void **")
        status = ffi.new("int *", -1)
        f = self.fn(name)
        if with_status:
            rc = int(f(symbol, pfn, version, flags, status))
            st: int | None = int(status[0])
        else:
            rc = int(f(symbol, pfn, version, flags))
            st = None
        return rc, st, int(ffi.cast("uintptr_t", pfn[0]))

    def runtime_entry_point(self, symbol: bytes, version: int | None, flags: int) -> tuple[int, int, int]:
        pfn = ffi.new("void **")
        status = ffi.new("int *", -1)
        if version is None:
            rc = int(self.fn("cudaGetDriverEntryPoint")(symbol, pfn, flags, status))
        else:
            rc = int(self.fn("cudaGetDriverEntryPointByVersion")(symbol, pfn, version, flags, status))
        return rc, int(status[0]), int(ffi.cast("uintptr_t", pfn[0]))

    def error_name(self, code: int) -> str | None:
        """cuGetErrorName's answer for ``code`` (cached: the names never change)."""
        if code in self._names:
            return self._names[code]
        name = None
        if self.has("cuGetErrorName"):
            out = ffi.new("char **")
            if int(self.fn("cuGetErrorName")(code, out)) == 0 and out[0] != NULL:
                name = _cstr(out[0])
        self._names[code] = name
        return name

    def error_string(self, code: int) -> str | None:
        if self.has("cuGetErrorString"):
            out = ffi.new("char **")
            if int(self.fn("cuGetErrorString")(code, out)) == 0 and out[0] != NULL:
                return _cstr(out[0])
        return None

    def call(self, name: str, *args: Any) -> int:
        return int(self.fn(name)(*args))

