"""Resolving entry points: the driver path and the runtime path.

:class:`Driver` loads libcuda, calls ``cuDriverGetVersion`` and ``cuInit`` and
asks ``cuGetProcAddress`` in the form the driver has: v2 (with the query result)
on 12.0+ drivers, v1 on 11.3-11.8 drivers (the query result then emulated, and
marked so), and for older drivers the exported name that the catalog records
for the ABI (never a name made by appending suffixes).

:class:`Runtime` asks ``cudaGetDriverEntryPointByVersion`` through libcudart and
keeps both the ``cudaError_t`` and the query result. The deprecated
``cudaGetDriverEntryPoint`` (which asks at the runtime's own version) is only
used with ``allow_deprecated=True`` and then warns.

Both refuse, before asking anything, what the seed's rules forbid: a version
that is not one of the symbol's ABI versions, a suffixed name, a stream mode
left to the default without ``allow_default=True``; and they never pass a NULL
symbol or output pointer (a real driver crashes on those).
"""

from __future__ import annotations

import re
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Literal

from . import _ffi, _forksafe
from .callables import TypedFunction, bind, invalidate
from .catalog import Abi, Catalog, Stream, catalog, format_version
from .diagnostics import Classification, Diagnostic, classify, cu_result_name
from .errors import CudaError, DriverClosedError, ResolutionError, UsageError
from .loader import Attempt, load_driver, load_runtime

Mode = Literal["legacy", "per_thread", "default"]
FLAGS: dict[str, int] = {"default": 0, "legacy": 1, "per_thread": 2}
# \Z, not $: "$" also matches before a trailing newline ("cuInit\n" must be refused).
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_SUFFIX = re.compile(r"_(?:v\d+|ptds|ptsz)\Z")


def parse_stream(mode: str) -> Mode:
    """Accept 'legacy', 'per_thread'/'per-thread'/'ptds', or 'default'."""
    if not isinstance(mode, str):
        raise UsageError(f"stream mode must be a string, got {type(mode).__name__}",
                         hint="use 'legacy' or 'per_thread'")
    m = mode.strip().lower().replace("-", "_")
    if m in ("per_thread", "ptds", "perthread"):
        return "per_thread"
    if m in ("legacy", "default"):
        return m  # type: ignore[return-value]
    raise UsageError(f"unknown stream mode {mode!r}", hint="use 'legacy' or 'per_thread' ('default' only by explicit request)")


def check_symbol(symbol: object) -> str:
    """Validate a symbol's text before it goes anywhere near C."""
    if symbol is None:
        raise UsageError("symbol is None", hint="pass a driver function name such as 'cuMemAlloc'")
    if isinstance(symbol, bytes):
        try:
            symbol = symbol.decode("ascii")
        except UnicodeDecodeError:
            raise UsageError(f"symbol {symbol!r} is not ASCII", hint="driver function names are ASCII identifiers") from None
    if not isinstance(symbol, str):
        raise UsageError(f"symbol must be a str, got {type(symbol).__name__}", hint="pass a name such as 'cuMemAlloc'")
    if not symbol:
        raise UsageError("symbol is empty", hint="pass a driver function name such as 'cuMemAlloc'")
    if not symbol.isascii() or not _IDENT.match(symbol) or "\x00" in symbol:
        raise UsageError(f"symbol {symbol!r} is not a C identifier", hint="driver function names are ASCII identifiers like cuMemAlloc")
    return symbol


def check_version(version: object) -> int:
    if isinstance(version, bool) or not isinstance(version, int):
        raise UsageError(f"version must be an int ABI version such as 3020, got {version!r}",
                         hint="use the number in PFN_cuX_vNNNNN")
    if version <= 0 or version > 0x7FFFFFFF:
        raise UsageError(f"version {version} is out of range", hint="use the number in PFN_cuX_vNNNNN, e.g. 3020")
    return version


@dataclass(frozen=True)
class Resolved:
    """A successful resolution: the typed callable and its diagnostic."""

    function: TypedFunction
    diagnostic: Diagnostic

    @property
    def address(self) -> int:
        return self.diagnostic.address


class _Source:
    """What Driver and Runtime share: the library, the catalog, the pre-checks, binding."""

    kind = "driver"

    def __init__(self, found: Any, cat: Catalog | None) -> None:
        self.cat = catalog() if cat is None else cat
        self._found = found
        self.library = found.library
        self.path: str = found.path
        self.how: str = found.how
        self.attempts: list[Attempt] = list(found.attempts)
        self.fake: bool = found.fake
        self.boot = _ffi.Bootstrap(found.library)
        self._bound: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = _forksafe.Lock()
        self.driver_version: int | None = None

    @property
    def closed(self) -> bool:
        return bool(self.library.closed)

    def _require_open(self, what: str) -> None:
        if self.library.closed:
            raise DriverClosedError(what)

    def close(self) -> None:
        """Unload the library; every function bound from it raises DriverClosedError afterwards."""
        with self._lock:
            for fn in list(self._bound):
                invalidate(fn, f"{fn.abi.symbol} ({self.path})")
            self._bound.clear()
        self.library.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def error_name(self, code: int) -> str:
        if not self.library.closed:
            name = self.boot.error_name(code)
            if name:
                return name
        return cu_result_name(code, self.cat)

    def check(self, rc: int, call: str = "") -> None:
        """Raise CudaError (named by cuGetErrorName) unless ``rc`` is CUDA_SUCCESS."""
        if rc:
            desc = self.boot.error_string(rc) if not self.library.closed else None
            raise CudaError(rc, self.error_name(rc), desc or "", call=call)

    # pre-checks ------------------------------------------------------------
    def _refusal(self, symbol: str, version: int | None, stream: str | None, cls: Classification,
                 hint: str, suggestions: tuple[str, ...] = ()) -> ResolutionError:
        d = Diagnostic(symbol=symbol, version=version, flags=FLAGS.get(stream or "", None), stream=stream,
                       access="-", driver_version=self.driver_version, library=self.path, result=None,
                       result_name="-", query=None, query_emulated=False, address=0, classification=cls,
                       hint=hint, suggestions=suggestions)
        d.log()
        return ResolutionError(d)

    def precheck(self, symbol: object, version: object, stream: object, allow_default: bool) -> tuple[str, int, Mode, Abi]:
        """Apply the seed's rules before asking; return (symbol, version, mode, ABI that will bind)."""
        try:
            sym = check_symbol(symbol)
        except UsageError as exc:
            raise self._refusal(repr(symbol) if not isinstance(symbol, str) else symbol, None, None,
                                Classification.INVALID_SYMBOL, exc.hint) from None
        mode = parse_stream(stream)  # type: ignore[arg-type]
        if mode == "default" and not allow_default:
            raise UsageError("stream mode 'default' was not explicitly allowed",
                             hint="pin 'legacy' or 'per_thread' (libraries must not inherit the application's mode); "
                                  "pass allow_default=True to ask with CU_GET_PROC_ADDRESS_DEFAULT anyway")
        ver = check_version(version)
        if sym not in self.cat:
            sugg = self.cat.suggest(sym)
            texts = tuple(str(s) for s in sugg)
            if sugg and _SUFFIX.search(sym) and sugg[0].version is not None:
                s0 = sugg[0]
                raise self._refusal(sym, ver, mode, Classification.SUFFIXED_NAME,
                                    f"ask for {s0.symbol!r} at version {s0.version} with stream "
                                    f"{s0.stream}: the driver picks the suffixed export itself", texts)
            if sugg:
                raise self._refusal(sym, ver, mode, Classification.MISSPELLED, f"did you mean {', '.join(texts)}?", texts)
            raise self._refusal(sym, ver, mode, Classification.UNKNOWN_SYMBOL,
                                "not a driver entry point in the catalog (see `cuentry list`)")
        versions = self.cat.versions(sym)
        if ver not in versions:
            raise self._refusal(sym, ver, mode, Classification.NOT_AN_ABI_VERSION,
                                self.cat._version_hint(sym, ver))
        cat_stream: Stream = "per_thread" if mode == "per_thread" else "legacy"
        abi = self.cat.pick(sym, ver, cat_stream)
        if abi is None:
            first = self.cat.first_version(sym, cat_stream)
            raise self._refusal(sym, ver, mode, Classification.VERSION_NOT_SUFFICIENT,
                                f"the per-thread {sym} first exists at {first}: pin {first} for a per-thread table")
        return sym, ver, mode, abi

    def _finish(self, sym: str, ver: int, mode: Mode, abi: Abi, access: str, rc: int, query: int | None,
                emulated: bool, addr: int, runtime: bool = False) -> Resolved:
        cat_stream = "per_thread" if mode == "per_thread" else "legacy"
        cls, hint = classify(symbol=sym, version=ver, stream=cat_stream, result=rc, query=query, address=addr,
                             driver_version=self.driver_version, runtime=runtime, cat=self.cat)
        exported = abi.exported
        if cls is Classification.OK and abi.exported and not self.library.closed:
            # The driver's answer is authoritative: name the export it equals, if one does.
            direct = self.library.address(abi.exported)
            if direct and direct != addr:
                exported = next((a.exported for a in self.cat.abis(sym)
                                 if a.exported and self.library.address(a.exported) == addr), None)
        name = self._result_name(rc)
        d = Diagnostic(symbol=sym, version=ver, flags=FLAGS[mode], stream=mode, access=access,
                       driver_version=self.driver_version, library=self.path, result=rc, result_name=name,
                       query=query, query_emulated=emulated, address=addr, classification=cls, hint=hint,
                       abi=abi.pfn, exported=exported)
        d.log()
        if not d.ok:
            raise ResolutionError(d)
        fn = bind(abi, addr, error_name=self.error_name, cat=self.cat)
        with self._lock:
            self._bound.add(fn)
        return Resolved(fn, d)

    def _result_name(self, rc: int) -> str:
        return self.error_name(rc)


class Driver(_Source):
    """A loaded CUDA driver. Use :meth:`load`; close it (or use ``with``) to unload."""

    def __init__(self, found: Any, cat: Catalog | None = None, *, init: bool = True) -> None:
        super().__init__(found, cat)
        self.stub: bool = found.stub
        rc, v = self.boot.get_version("cuDriverGetVersion")
        self.version_result: int = rc
        self.driver_version = v if rc == 0 else None
        self.init_result: int | None = self.boot.call("cuInit", 0) if init else None
        if self.boot.has("cuGetProcAddress_v2"):
            self.gpa_form = "v2"
        elif self.boot.has("cuGetProcAddress"):
            self.gpa_form = "v1"
        else:
            self.gpa_form = "none"

    @classmethod
    def load(cls, path: str | None = None, *, cat: Catalog | None = None, init: bool = True,
             allow_stub: bool = False) -> Driver:
        """Find and load the driver (see :mod:`cuentry.loader` for the search order)."""
        return cls(load_driver(path, allow_stub=allow_stub), cat, init=init)

    @property
    def access(self) -> str:
        return {"v2": "driver:v2", "v1": "driver:v1", "none": "dlsym"}[self.gpa_form]

    def query(self, symbol: str, version: int, flags: int) -> tuple[int, int | None, int, bool]:
        """One raw, validated query: (CUresult, query result, address, emulated).

        Only checks that make the call safe: a C-identifier symbol, a positive
        version, flags 0/1/2. No catalog rule is applied here.
        """
        self._require_open("cuGetProcAddress")
        sym = check_symbol(symbol)
        ver = check_version(version)
        if flags not in (0, 1, 2):
            raise UsageError(f"flags must be 0, 1 or 2, got {flags!r}",
                             hint="CU_GET_PROC_ADDRESS_LEGACY_STREAM (1) or _PER_THREAD_DEFAULT_STREAM (2)")
        if self.gpa_form == "v2":
            rc, st, addr = self.boot.get_proc_address("cuGetProcAddress_v2", sym.encode(), ver, flags, True)
            return rc, (st if st is not None and st >= 0 else None), addr, False
        if self.gpa_form == "v1":
            rc, _, addr = self.boot.get_proc_address("cuGetProcAddress", sym.encode(), ver, flags, False)
            if rc == 0:
                return 0, (0 if addr else None), addr, True
            if rc == 500:  # CUDA_ERROR_NOT_FOUND: the v1 form cannot say which kind of miss
                return 0, self._emulated_miss(sym, ver, flags), 0, True
            return rc, None, 0, True
        return self._dlsym(sym, ver, flags)

    def _emulated_miss(self, sym: str, ver: int, flags: int) -> int:
        if sym in self.cat:
            stream: Stream = "per_thread" if flags == 2 else "legacy"
            known_here = [a for a in self.cat.abis(sym) if self.driver_version is None or a.version <= self.driver_version]
            if known_here and ver < self.cat.first_version(sym, stream):
                return 2
        return 1

    def _dlsym(self, sym: str, ver: int, flags: int) -> tuple[int, int | None, int, bool]:
        """Pre-11.3 drivers: the exported name the catalog records for the ABI the driver would pick."""
        if self.driver_version is not None and ver > self.driver_version:
            return 1, None, 0, True
        if sym not in self.cat:
            return 0, 1, 0, True
        stream: Stream = "per_thread" if flags == 2 else "legacy"
        abi = self.cat.pick(sym, ver, stream)
        if abi is None:
            return 0, 2, 0, True
        addr = self.library.address(abi.exported) if abi.exported else 0
        return 0, (0 if addr else 1), addr, True

    def resolve(self, symbol: str, version: int, stream: str, *, allow_default: bool = False) -> Resolved:
        """Resolve one (symbol, ABI version) in one stream mode into a typed callable.

        Raises :class:`ResolutionError` with the full diagnostic when anything is off.
        """
        sym, ver, mode, abi = self.precheck(symbol, version, stream, allow_default)
        return self.resolve_checked(sym, ver, mode, abi)

    def resolve_checked(self, sym: str, ver: int, mode: Mode, abi: Abi) -> Resolved:
        """Resolve what :meth:`precheck` already accepted (tables check at declaration)."""
        if self.library.closed:
            raise DriverClosedError(f"resolve {sym}")
        rc, st, addr, emulated = self.query(sym, ver, FLAGS[mode])
        return self._finish(sym, ver, mode, abi, self.access, rc, st, emulated, addr)

    def call(self, symbol: str, version: int, stream: str = "legacy") -> TypedFunction:
        """Shorthand: resolve and return the typed callable."""
        return self.resolve(symbol, version, stream).function

    def info(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "how": self.how,
            "fake": self.fake,
            "stub": self.stub,
            "driver_version": self.driver_version,
            "driver_release": format_version(self.driver_version) if self.driver_version else None,
            "cuInit": self.init_result,
            "cuInit_name": self.error_name(self.init_result) if self.init_result is not None else None,
            "cuGetProcAddress": self.gpa_form,
        }


class Runtime(_Source):
    """libcudart's entry point access (``cudaGetDriverEntryPointByVersion``)."""

    kind = "runtime"

    def __init__(self, found: Any, cat: Catalog | None = None) -> None:
        super().__init__(found, cat)
        rc, v = self.boot.get_version("cudaRuntimeGetVersion")
        self.runtime_version: int | None = v if rc == 0 else None
        if self.boot.has("cudaDriverGetVersion"):
            rc2, dv = self.boot.get_version("cudaDriverGetVersion")
            self.driver_version = dv if rc2 == 0 and dv > 0 else None
        self.by_version: bool = self.boot.has("cudaGetDriverEntryPointByVersion")

    @classmethod
    def load(cls, path: str | None = None, *, cat: Catalog | None = None) -> Runtime:
        return cls(load_runtime(path), cat)

    def _result_name(self, rc: int) -> str:
        if self.boot.has("cudaGetErrorName") and not self.library.closed:
            p = self.boot.fn("cudaGetErrorName")(rc)
            if p != _ffi.NULL:
                return _ffi.string(p).decode()
        from .diagnostics import RUNTIME_ERROR_NAMES
        return RUNTIME_ERROR_NAMES.get(rc, f"cudaError_t({rc})")

    def resolve(self, symbol: str, version: int, stream: str, *, allow_default: bool = False,
                allow_deprecated: bool = False) -> Resolved:
        """Resolve through the runtime; same rules and diagnostics as :meth:`Driver.resolve`."""
        sym, ver, mode, abi = self.precheck(symbol, version, stream, allow_default)
        return self.resolve_checked(sym, ver, mode, abi, allow_deprecated=allow_deprecated)

    def resolve_checked(self, sym: str, ver: int, mode: Mode, abi: Abi, *, allow_deprecated: bool = False) -> Resolved:
        """Resolve what :meth:`precheck` already accepted (tables check at declaration)."""
        self._require_open(f"resolve {sym}")
        flags = FLAGS[mode]
        if self.by_version:
            rc, st, addr = self.boot.runtime_entry_point(sym.encode(), ver, flags)
            access = "runtime"
        elif allow_deprecated and self.boot.has("cudaGetDriverEntryPoint"):
            warnings.warn(
                f"cudaGetDriverEntryPoint asks at the runtime's own version ({self.runtime_version}), "
                f"not at the pin {ver}: it may bind a newer ABI than {abi.pfn}",
                DeprecationWarning, stacklevel=2)
            rc, st, addr = self.boot.runtime_entry_point(sym.encode(), None, flags)
            access = "runtime:deprecated"
        else:
            rv = format_version(self.runtime_version) if self.runtime_version else "unknown"
            raise self._refusal(sym, ver, mode, Classification.RUNTIME_TOO_OLD,
                                f"libcudart {rv} has no cudaGetDriverEntryPointByVersion (added in 12.5): use the "
                                "driver path, or allow_deprecated=True for cudaGetDriverEntryPoint")
        return self._finish(sym, ver, mode, abi, access, rc, st if st >= 0 else None, False, addr, runtime=True)

    def info(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "how": self.how,
            "runtime_version": self.runtime_version,
            "runtime_release": format_version(self.runtime_version) if self.runtime_version else None,
            "driver_version": self.driver_version,
            "cudaGetDriverEntryPointByVersion": self.by_version,
        }


_DEFAULT_LOCK = _forksafe.Lock()
_DEFAULT: Driver | None = None


def default_driver() -> Driver:
    """The process-wide driver, loaded once on first use."""
    global _DEFAULT
    d = _DEFAULT
    if d is not None and not d.closed:
        return d
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT.closed:
            _DEFAULT = Driver.load()
        return _DEFAULT


def resolve(symbol: str, version: int, stream: str, *, driver: Driver | None = None,
            allow_default: bool = False) -> TypedFunction:
    """Resolve through the default driver and return the typed callable."""
    return (driver or default_driver()).resolve(symbol, version, stream, allow_default=allow_default).function

