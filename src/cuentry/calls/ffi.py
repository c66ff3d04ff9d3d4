"""The platform layer: the only code in cuentry that touches ctypes, dlopen, dlsym and dladdr.

The OS's dynamic loader is chosen once, at import, behind the small
`PlatformLoader` protocol (`LOADER`: dlopen/dlsym/dladdr/dlclose, or
LoadLibraryW/GetProcAddress/GetModuleFileNameW/FreeLibrary on Windows); nothing
else in cuentry branches on the platform to load a library.

Everything above deals in plain Python values and catalog records. Here they
become C: shared libraries opened and closed (with a `Guard` that keeps a
library mapped while a call is in flight), the bootstrap functions cuentry calls
itself, ctypes function pointers for the pure backend, and ctypes structures for
the catalog's aggregates (built from the catalog's field lists on first use; no C
declaration is parsed).
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from _thread import get_ident
from _weakrefset import WeakSet  # weakref.WeakSet, without importing weakref (a cold start)

from .. import _forksafe, cfacts
from ..errors import DriverBusyError, DriverClosedError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

__all__ = [
    "ALIASES",
    "BOOTSTRAP",
    "CHAR_IS_SIGNED",
    "CLOSE_WAIT_S",
    "LOADER",
    "POINTER_MAX",
    "RTLD_LOCAL",
    "RTLD_NOW",
    "SCALARS",
    "Bootstrap",
    "Guard",
    "LoadFailure",
    "SharedLibrary",
    "StructTypes",
    "buffer_address",
    "bytes_address",
    "c_string",
    "call_frames",
    "ctypes_address",
    "ctypes_reference",
    "field_text",
    "function_address",
    "function_at",
    "is_ctypes_function",
    "sizeof",
    "struct_repr",
    "value_text",
]


_IS_WINDOWS = sys.platform == "win32"
RTLD_NOW = 2
RTLD_LOCAL = 0
POINTER_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1
# plain char is signed on x86, unsigned on Arm and POWER (their ABIs say so)
CHAR_IS_SIGNED = _IS_WINDOWS or (os.uname().machine.lower() in ("x86_64", "amd64", "i386", "i686"))


class LoadFailure(Exception):
    """dlopen failed; carries the loader's own words. Internal: callers turn it into a cuentry error."""


# --- the platform loader: chosen once, behind one small protocol ------------------------

if TYPE_CHECKING:
    from typing import Protocol

    class PlatformLoader(Protocol):
        """What [SharedLibrary][cuentry.calls.ffi.SharedLibrary] needs of the OS: open, look up, name, close."""

        def open(self, name: str) -> int:
            """A handle of the loaded library; LoadFailure (the loader's words) when it cannot be loaded."""

        def symbol(self, handle: int, name: str) -> int:
            """The address of an exported symbol, 0 when there is none."""

        def file_of(self, handle: int, probes: Sequence[int]) -> str | None:
            """The file the library was loaded from (`probes`: addresses inside it), None when unknown."""

        def close(self, handle: int) -> None:
            """Unmap the library (the handle is not used again)."""


def _fn(lib: Any, name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


class _PosixLoader:
    """dlopen (RTLD_NOW | RTLD_LOCAL), dlsym, dladdr, dlclose."""

    def __init__(self) -> None:
        libdl: Any = ctypes.CDLL(None)
        self._open = _fn(libdl, "dlopen", ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int)
        self._sym = _fn(libdl, "dlsym", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
        self._close = _fn(libdl, "dlclose", ctypes.c_int, ctypes.c_void_p)
        self._error = _fn(libdl, "dlerror", ctypes.c_char_p)
        self._addr = _fn(libdl, "dladdr", ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_DlInfo))

    def open(self, name: str) -> int:
        handle = self._open(os.fsencode(name), RTLD_NOW | RTLD_LOCAL)
        if not handle:
            err = self._error()
            raise LoadFailure(err.decode(errors="replace") if err else "dlopen failed")
        return int(handle)

    def symbol(self, handle: int, name: str) -> int:
        return int(self._sym(handle, name.encode()) or 0)

    def file_of(self, handle: int, probes: Sequence[int]) -> str | None:
        for addr in probes:
            info = _DlInfo()
            if self._addr(addr, ctypes.byref(info)) and info.dli_fname:
                return os.path.realpath(os.fsdecode(info.dli_fname))
        return None

    def close(self, handle: int) -> None:
        self._close(handle)


class _WindowsLoader:  # pragma: no cover - exercised on Windows only
    """LoadLibraryW, GetProcAddress, GetModuleFileNameW, FreeLibrary."""

    def __init__(self) -> None:
        k32: Any = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        self._open = _fn(k32, "LoadLibraryW", ctypes.c_void_p, ctypes.c_wchar_p)
        self._sym = _fn(k32, "GetProcAddress", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
        self._close = _fn(k32, "FreeLibrary", ctypes.c_int, ctypes.c_void_p)
        self._name = _fn(k32, "GetModuleFileNameW", ctypes.c_ulong, ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_ulong)

    def open(self, name: str) -> int:
        handle = self._open(name)
        if not handle:
            raise LoadFailure(f"LoadLibrary failed (error {ctypes.get_last_error()})")  # type: ignore[attr-defined]
        return int(handle)

    def symbol(self, handle: int, name: str) -> int:
        return int(self._sym(handle, name.encode()) or 0)

    def file_of(self, handle: int, probes: Sequence[int]) -> str | None:
        buf = ctypes.create_unicode_buffer(4096)
        return buf.value if self._name(handle, buf, 4096) else None

    def close(self, handle: int) -> None:
        self._close(handle)


LOADER: PlatformLoader = _WindowsLoader() if _IS_WINDOWS else _PosixLoader()


# --- the guard: closed flag and in-flight calls -------------------------------------

CLOSE_WAIT_S = 5.0


# Code objects of the pure backend's call functions: a frame running one of them, whose local `guard` is a
# guard, is a call of that guard's library in flight (every path of a pure call runs under such a frame).
_CALL_CODES: set[Any] = set()


def call_frames(code: Any) -> None:
    """Say that a frame running `code` (with a local `guard`) is a call in flight of that guard's library."""
    _CALL_CODES.add(code)


class Guard:
    """What a library shares with every callable bound from it: closed, and how many calls are in flight.

    A call is in flight from before it looks at the closed flag until the C
    function returned; `close` sets the flag first and then waits until no
    call is in flight. Under the GIL these steps are ordered, so a library is
    never unmapped under a running call: a call that looked at the flag before
    it was set is still in flight when close() looks, and one that looks after
    refuses. How a call is in flight, per kind:

    - pure backend: its frame is on a thread's stack (a frame of a code given to
      `call_frames`, whose local `guard` is this guard). Nothing is registered
      per call; close() reads the threads' stacks (`sys._current_frames`). Any
      thread, any nesting (a callback inside a call calling again), and a
      forked child (only the forking thread's stack exists there) are seen as
      they are.
    - compiled extension: it counts in `state[1]`, which it reaches through the
      buffer protocol of the ctypes array (`state[0]` is its closed flag).
    - cuentry's own bootstrap and stream synchronisation calls: `enter`/`leave`
      (a list of thread ids; append and remove are atomic).

    A child forked inside a call (from a callback the driver runs) keeps the
    forking thread's calls in flight: they return in the child too.
    """

    __slots__ = ("what", "closed", "calls", "state", "lookup", "__weakref__")

    def __init__(self, what: str, lookup: Callable[[str], int] | None = None) -> None:
        self.what = what
        self.lookup = lookup  # the library's dlsym (exported name -> address, 0 when absent), where there is one
        self.closed = False
        self.calls: list[int] = []  # the thread id of each enter() not yet left
        self.state = (ctypes.c_int64 * 2)()
        _GUARDS.add(self)

    def closed_error(self, call: str = "") -> DriverClosedError:
        return DriverClosedError(f"{call} ({self.what})" if call else self.what)

    def enter(self, call: str = "") -> None:
        """Register a call in flight; raise DriverClosedError (and unregister) if the library is closed."""
        me = get_ident()
        self.calls.append(me)
        if self.closed:
            self.calls.remove(me)
            raise self.closed_error(call)

    def leave(self) -> None:
        self.calls.remove(get_ident())

    @property
    def in_flight(self) -> int:
        return len(self.calls) + int(self.state[1]) + self._frames()

    def _frames(self) -> int:
        """Pure-backend calls of this guard on the threads' stacks (and on greenlets' suspended ones)."""
        codes = _CALL_CODES
        n = 0
        for top in _stacks() if codes else ():
            f: Any = top
            while f is not None:
                if f.f_code in codes and f.f_locals.get("guard") is self:
                    n += 1
                f = f.f_back
        return n

    def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Refuse new calls; wait (GIL released) up to `timeout` s for calls in flight to return.

        Raises DriverBusyError if some are still running: the caller must then not unmap.
        """
        self.closed = True
        self.state[0] = 1
        deadline = time.monotonic() + timeout
        while self.in_flight:
            if time.monotonic() >= deadline:
                raise DriverBusyError(self.what, self.in_flight, timeout)
            time.sleep(0.001)


_GUARDS: WeakSet[Guard] = WeakSet()


def _stacks() -> list[Any]:
    """The top frame of every stack that may hold a call: each thread's, and each greenlet's that switched away
    (a Python callback inside a call can switch greenlets; its call then waits on no thread's stack)."""
    tops = list(sys._current_frames().values())
    kind: Any = getattr(sys.modules.get("greenlet"), "greenlet", None)
    if isinstance(kind, type):
        import gc

        tops += [f for g in gc.get_objects() if isinstance(g, kind) and (f := getattr(g, "gr_frame", None)) is not None]
    return tops


def _after_fork_in_child() -> None:
    """Only the forking thread lives on in a child: its calls stay in flight (a fork from a callback inside a
    call returns into that call), every other thread's are gone. The compiled extension recounts its own
    calls of this thread after this reset (its handler is registered later, so it runs later)."""
    me = get_ident()
    for g in list(_GUARDS):
        g.calls[:] = [t for t in g.calls if t == me]
        g.state[1] = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class SharedLibrary:
    """A dlopen'ed library with explicit close; symbol addresses as ints."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._handle: int | None = LOADER.open(name)
        self._lock = _forksafe.Lock()
        self.guard = Guard(name, self.address)

    @property
    def closed(self) -> bool:
        return self.guard.closed or self._handle is None

    def address(self, symbol: str) -> int:
        """The address of an exported symbol, or 0 when it is not exported (or the library is closed)."""
        handle = self._handle
        if handle is None or self.guard.closed:
            return 0
        return LOADER.symbol(handle, symbol)

    def path(self) -> str:
        """The file the library was actually loaded from."""
        if self._handle is None:
            return self.name
        probes = [a for a in (self.address(p) for p in ("cuInit", "cudaRuntimeGetVersion", "cuDriverGetVersion")) if a]
        return LOADER.file_of(self._handle, probes) or self.name

    def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Refuse new calls, wait for calls in flight, then unmap.

        Raises DriverBusyError (and leaves the library mapped, closed to new calls)
        when calls are still running after `timeout` seconds; calling close()
        again later finishes the job.
        """
        with self._lock:
            if self._handle is None:
                return
            self.guard.close(timeout)
            handle, self._handle = self._handle, None
        LOADER.close(handle)


# --- ctypes types ----------------------------------------------------------------

SCALARS: dict[str, Any] = {
    "int": ctypes.c_int, "unsigned int": ctypes.c_uint, "short": ctypes.c_short, "unsigned short": ctypes.c_ushort,
    "char": ctypes.c_char, "signed char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte, "long": ctypes.c_long,
    "unsigned long": ctypes.c_ulong, "long long": ctypes.c_longlong, "unsigned long long": ctypes.c_ulonglong,
    "float": ctypes.c_float, "double": ctypes.c_double, "size_t": ctypes.c_size_t, "int8_t": ctypes.c_int8,
    "uint8_t": ctypes.c_uint8, "int16_t": ctypes.c_int16, "uint16_t": ctypes.c_uint16, "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32, "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
    "intptr_t": ctypes.c_ssize_t, "uintptr_t": ctypes.c_size_t, "ptrdiff_t": ctypes.c_ssize_t,
    "wchar_t": ctypes.c_wchar, "void *": ctypes.c_void_p,
}
ALIASES = cfacts.ALIASES


def sizeof(ctype: str) -> int:
    """The size in bytes of a scalar C type name of `SCALARS`."""
    return int(ctypes.sizeof(SCALARS[ctype]))


_SHOWN = 8  # elements of an array shown in a repr before the rest is counted


def struct_repr(self: Any) -> str:
    """`CUuuid_st(bytes=b'...')`: a struct's fields by name (char arrays as all their bytes, other arrays as
    lists of their first elements, pointers in hex)."""
    cls = type(self)
    parts = []
    for name, ftype in getattr(cls, "_fields_", ()):
        if name.startswith("_anon"):
            continue
        parts.append(f"{name}={field_text(self, name, ftype)}")
    return f"{cls.__name__}({', '.join(parts)})"


def field_text(obj: Any, name: str, ftype: Any) -> str:
    """One field of a struct, as a repr shows it."""
    if issubclass(ftype, ctypes.Array) and ftype._type_ is ctypes.c_char:
        desc = getattr(type(obj), name)
        return repr(ctypes.string_at(ctypes.addressof(obj) + desc.offset, desc.size))
    value = getattr(obj, name)
    return value_text(value, ftype is ctypes.c_void_p)


def value_text(value: Any, pointer: bool = False) -> str:
    """A field or element value as a repr shows it (arrays cut after a few elements)."""
    if pointer:
        return f"{value or 0:#x}"
    if isinstance(value, ctypes.Array):
        items = [value_text(v) for v in value[:_SHOWN]]
        more = f", ... ({len(value)} in all)" if len(value) > _SHOWN else ""
        return f"[{', '.join(items)}{more}]"
    return repr(value)


class StructTypes:
    """ctypes Structure/Union classes for the catalog's aggregates, built from its field lists on first use."""

    def __init__(self, types: Callable[[], Mapping[str, Any]], opaque: frozenset[str],
                 unsigned_enums: frozenset[str], enum_typedefs: frozenset[str]) -> None:
        self._types = types
        self._opaque = opaque
        self._unsigned = unsigned_enums
        self._enum_typedefs = enum_typedefs
        self._made: dict[str, Any] = {}
        self._lock = _forksafe.RLock()

    def get(self, tag: str) -> Any:
        """The ctypes class of `struct`/`union` `tag`; TypeError when it has no known layout."""
        got = self._made.get(tag)
        if got is not None:
            return got
        with self._lock:
            got = self._made.get(tag)
            if got is None:
                rec = self._types()["aggregates"].get(tag)
                if rec is None or rec.get("opaque"):
                    raise TypeError(f"struct {tag} has no known layout")
                base = ctypes.Union if rec["kind"] == "union" else ctypes.Structure
                got = type(tag, (base,), {"__repr__": struct_repr})
                self._made[tag] = got  # before the fields: a struct may point to itself
                try:
                    self._fill(got, [(name, canon) for name, _, canon in rec["fields"]])
                except (TypeError, ValueError, KeyError) as exc:
                    del self._made[tag]
                    raise TypeError(f"cannot lay out {rec['kind']} {tag}: {exc}") from None
        return got

    def _fill(self, cls: Any, fields: Sequence[tuple[str, str]]) -> None:
        out: list[tuple[str, Any]] = []
        anon: list[str] = []
        for i, (given, canon) in enumerate(fields):
            name = given or f"_anon{i}"
            if not given:
                anon.append(name)
            out.append((name, self.field_type(canon)))
        if anon:
            cls._anonymous_ = tuple(anon)
        cls._fields_ = out

    def field_type(self, canonical: str) -> Any:
        """The ctypes type of one field's canonical C type (arrays, inline aggregates included)."""
        import re

        t = " ".join(canonical.split())
        if t.startswith(("struct {", "union {")):
            return self._inline(t)
        m = re.fullmatch(r"(.*?)\s*((?:\[\d+\])+)", t)
        if m:
            base = self.field_type(m.group(1))
            for n in reversed(re.findall(r"\[(\d+)\]", m.group(2))):
                base = base * int(n)
            return base
        t = t.replace("const ", "").replace("volatile ", "").strip()
        if "(" in t or t.endswith("*"):
            return ctypes.c_void_p
        if t.startswith("enum "):
            return ctypes.c_uint if t[5:] in self._unsigned else ctypes.c_int
        if t in self._enum_typedefs:
            return ctypes.c_int
        m2 = re.fullmatch(r"(?:struct|union) (\w+)", t)
        if m2:
            return self.get(m2.group(1))
        return SCALARS[ALIASES.get(t, t)]

    def _inline(self, text: str) -> Any:
        """An inline (anonymous) struct/union type, nested ones included."""
        import re

        kind, rest = text.split("{", 1)
        body, tail = _match_brace(rest)
        fields: list[tuple[str, str]] = []
        for decl in _split_top(body):
            if decl.startswith(("struct {", "union {")):
                k2, r2 = decl.split("{", 1)
                inner, after = _match_brace(r2)
                name, arr = _declarator(after)
                fields.append((name, f"{k2.strip()} {{{inner}}}" + arr))
                continue
            m = re.fullmatch(r"(.*?)\s*(\**)\s*(\w+)\s*((?:\[\d*\])*)", decl)
            if not m:
                raise TypeError(f"cannot lay out inline field {decl!r}")
            fields.append((m.group(3), f"{m.group(1)} {m.group(2)}".strip() + m.group(4)))
        base = ctypes.Union if kind.strip() == "union" else ctypes.Structure
        cls: Any = type("inline", (base,), {"__repr__": struct_repr})
        self._fill(cls, fields)
        arr = tail.strip()
        for n in reversed(re.findall(r"\[(\d+)\]", arr)):
            cls = cls * int(n)
        return cls


def _declarator(text: str) -> tuple[str, str]:
    import re

    m = re.fullmatch(r"\s*(\w*)\s*((?:\[\d+\])*)\s*", text)
    if not m:
        raise TypeError(f"cannot read declarator {text!r}")
    return m.group(1), m.group(2)


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
        depth += (ch == "{") - (ch == "}")
        if ch == ";" and depth == 0:
            if "".join(cur).strip():
                out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


# --- function pointers -------------------------------------------------------------

_FNTYPES: dict[tuple[Any, ...], Any] = {}


def function_at(address: int, restype: Any, argtypes: Sequence[Any], *, keep_gil: bool = False) -> Any:
    """A ctypes function pointer at `address` (its type cached per signature); `keep_gil`: a call holds the GIL
    (`PYFUNCTYPE`), for a function that cannot block (`calls.holds_gil`), else releases it (`CFUNCTYPE`)."""
    key = (keep_gil, restype, *argtypes)
    ft = _FNTYPES.get(key)
    if ft is None:
        ft = _FNTYPES[key] = (ctypes.PYFUNCTYPE if keep_gil else ctypes.CFUNCTYPE)(restype, *argtypes)
    return ft(address)


def buffer_address(obj: Any) -> tuple[int, Any]:
    """(address, keep-alive) of a writable, C-contiguous buffer (a ctypes view holding its export)."""
    mv = memoryview(obj)
    view = (ctypes.c_char * mv.nbytes).from_buffer(mv)
    return ctypes.addressof(view), view


_CARG: Any = type(ctypes.byref(ctypes.c_int()))
_CDATA: tuple[type, ...] = (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union, ctypes._Pointer)


def ctypes_reference(obj: Any) -> tuple[Any, int] | None:
    """What a `ctypes.byref(x[, offset])` or a ctypes pointer instance refers to: (the ctypes object that owns
    the memory, the byte offset into it); (None, 0) for a NULL pointer; None for anything else.

    The owner is the object the reference itself keeps alive (`byref`'s `x`; for a pointer, an object in its
    `_objects`: `pointer(x)`'s `x`, `cast(array, POINTER(T))`'s array), and the address must lie inside it.

    Raises:
        ValueError: a pointer whose address no object it keeps owns (a cast from an int, a pointer read out
            of a struct): its memory's extent and lifetime are unknown.
    """
    if type(obj) is _CARG:
        owner = obj._obj
    elif isinstance(obj, ctypes._Pointer):
        owner = None
    else:
        return None
    address = int(ctypes.cast(obj, ctypes.c_void_p).value or 0)
    if owner is None and address == 0 and type(obj) is not _CARG:
        return None, 0
    cands: list[Any] = [owner] if owner is not None else _kept(obj._objects)
    for o in cands:
        start = _address_or(o, -1)
        if start >= 0 and 0 <= address - start < max(ctypes.sizeof(o), 1):
            return o, address - start
    if owner is not None:
        raise ValueError(f"ctypes.byref() of a {type(owner).__name__} at an offset past its end")
    raise ValueError("a ctypes pointer to memory it does not own (made from an int, or read out of a struct)")


def _address_or(o: Any, default: int) -> int:
    """The address of a ctypes data object, or `default` for anything else."""
    if not isinstance(o, _CDATA):
        return default
    data: Any = o
    return int(ctypes.addressof(data))


def _kept(objects: Any, depth: int = 0) -> list[Any]:
    """The ctypes objects a ctypes instance keeps alive (its `_objects`, a dict that may nest)."""
    if depth > 4 or objects is None:
        return []
    if isinstance(objects, dict):
        return [o for v in objects.values() for o in _kept(v, depth + 1)]
    return [objects] if isinstance(objects, _CDATA) else []


def bytes_address(b: bytes) -> int:
    """The address of a bytes object's (NUL-terminated, immutable) storage."""
    return int(ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value or 0)


def ctypes_address(obj: Any) -> int:
    return int(ctypes.addressof(obj))


def function_address(fn: Any) -> int:
    """The code address of a ctypes function object."""
    return int(ctypes.cast(fn, ctypes.c_void_p).value or 0)


def is_ctypes_function(obj: object) -> bool:
    return isinstance(obj, _FUNC_BASE)


_FUNC_BASE: Any = ctypes.CFUNCTYPE(ctypes.c_int).__bases__[0]  # the base class of every CFUNCTYPE type


def c_string(address: int) -> str | None:
    """The NUL-terminated string at `address` (a driver-owned constant), or None for NULL."""
    if not address:
        return None
    got = ctypes.string_at(address)
    return got.decode(errors="replace")


# --- the fixed bootstrap functions ---------------------------------------------------

_I, _U, _ULL, _P, _S = ctypes.c_int, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_char_p
BOOTSTRAP: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "cuInit": (_I, (_U,)),
    "cuDriverGetVersion": (_I, (_P,)),
    "cuGetProcAddress_v2": (_I, (_S, _P, _I, ctypes.c_uint64, _P)),
    "cuGetProcAddress": (_I, (_S, _P, _I, ctypes.c_uint64)),
    "cuGetErrorName": (_I, (_I, _P)),
    "cuGetErrorString": (_I, (_I, _P)),
    "cudaRuntimeGetVersion": (_I, (_P,)),
    "cudaDriverGetVersion": (_I, (_P,)),
    "cudaGetDriverEntryPointByVersion": (_I, (_S, _P, _U, _ULL, _P)),
    "cudaGetDriverEntryPoint": (_I, (_S, _P, _ULL, _P)),
    "cudaGetErrorName": (_P, (_I,)),
}


class Bootstrap:
    """The handful of driver/runtime functions cuentry calls itself, bound by exported name.

    Every call holds the library's guard, so close() waits for it.
    """

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

    def function(self, name: str) -> Any:
        """The ctypes function of bootstrap function `name` (LookupError when the library lacks it).

        Calling it directly is for callers that hold the library's guard themselves.
        """
        f = self._fns.get(name)
        if f is None:
            addr = self._lib.address(name)
            if not addr:
                raise LookupError(name)
            res, argt = BOOTSTRAP[name]
            f = self._fns[name] = function_at(addr, res, argt)
        return f

    def proc_address_asker(self) -> Callable[[bytes, int, int], tuple[int, int, int]]:
        """`ask(symbol, version, flags) -> (CUresult, query result, address)` through cuGetProcAddress_v2, for
        one thread's loop of queries: its output cells are made once and reset before each call, and the
        caller holds the library's guard around the loop (`guard.enter()` / `guard.leave()`)."""
        f = self.function("cuGetProcAddress_v2")
        pfn, status = ctypes.c_void_p(0), ctypes.c_int(-1)
        pfn_ref, status_ref = ctypes.byref(pfn), ctypes.byref(status)

        def ask(symbol: bytes, version: int, flags: int) -> tuple[int, int, int]:
            pfn.value, status.value = 0, -1
            rc = f(symbol, pfn_ref, version, flags, status_ref)  # restype c_int: an int
            return rc, status.value, pfn.value or 0

        return ask

    def _call(self, name: str, *args: Any) -> Any:
        f = self._fns.get(name) or self.function(name)
        guard = self._lib.guard
        guard.enter(name)
        try:
            return f(*args)
        finally:
            guard.leave()

    def call(self, name: str, *args: Any) -> int:
        return int(self._call(name, *args))

    def get_version(self, name: str) -> tuple[int, int]:
        out = ctypes.c_int(0)
        rc = int(self._call(name, ctypes.byref(out)))
        return rc, int(out.value)

    def get_proc_address(self, name: str, symbol: bytes, version: int, flags: int,
                         with_status: bool) -> tuple[int, int | None, int]:
        """Call cuGetProcAddress(_v2) with valid non-NULL outputs; (CUresult, status or None, address)."""
        pfn = ctypes.c_void_p(0)
        status = ctypes.c_int(-1)
        if with_status:
            rc = int(self._call(name, symbol, ctypes.byref(pfn), version, flags, ctypes.byref(status)))
            return rc, int(status.value), int(pfn.value or 0)
        rc = int(self._call(name, symbol, ctypes.byref(pfn), version, flags))
        return rc, None, int(pfn.value or 0)

    def runtime_entry_point(self, symbol: bytes, version: int | None, flags: int) -> tuple[int, int, int]:
        pfn = ctypes.c_void_p(0)
        status = ctypes.c_int(-1)
        if version is None:
            rc = int(self._call("cudaGetDriverEntryPoint", symbol, ctypes.byref(pfn), flags, ctypes.byref(status)))
        else:
            rc = int(self._call("cudaGetDriverEntryPointByVersion", symbol, ctypes.byref(pfn), version, flags,
                                ctypes.byref(status)))
        return rc, int(status.value), int(pfn.value or 0)

    def _string_out(self, name: str, code: int) -> str | None:
        if not self.has(name):
            return None
        out = ctypes.c_void_p(0)
        if int(self._call(name, code, ctypes.byref(out))) == 0:
            return c_string(out.value or 0)
        return None

    def error_name(self, code: int) -> str | None:
        """cuGetErrorName's answer for `code` (cached: the names never change)."""
        if code not in self._names:
            self._names[code] = self._string_out("cuGetErrorName", code)
        return self._names[code]

    def error_string(self, code: int) -> str | None:
        return self._string_out("cuGetErrorString", code)

    def runtime_error_name(self, code: int) -> str | None:
        """cudaGetErrorName's answer (libcudart), or None."""
        if not self.has("cudaGetErrorName"):
            return None
        return c_string(int(self._call("cudaGetErrorName", code) or 0))
