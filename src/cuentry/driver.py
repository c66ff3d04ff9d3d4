"""Resolving entry points: the driver path and the runtime path.

[Driver][cuentry.driver.Driver] loads libcuda, calls `cuDriverGetVersion` and `cuInit` and
asks `cuGetProcAddress` in the form the driver has: v2 (with the query result)
on 12.0+ drivers, v1 on 11.3-11.8 drivers (the query result then emulated, and
marked so), and for older drivers the exported name that the catalog records
for the ABI (never a name made by appending suffixes).

[Runtime][cuentry.driver.Runtime] asks `cudaGetDriverEntryPointByVersion` through libcudart and
keeps both the `cudaError_t` and the query result. The deprecated
`cudaGetDriverEntryPoint` (which asks at the runtime's own version) is only
used with `allow_deprecated=True` and then warns.

Both refuse, before asking anything, what the seed's rules forbid: a version
that is not one of the symbol's ABI versions, a suffixed name, a stream mode
left to the default without `allow_default=True`; and they never pass a NULL
symbol or output pointer (a real driver crashes on those).
"""

from __future__ import annotations

import sys

from . import _forksafe
from .calls import bind, check_bindable, choice
from .calls.ffi import Bootstrap
from .calls.ffi import Guard as ffi_guard
from .catalog import Abi, Catalog, catalog
from .diagnostics import Classification, Diagnostic, classify, cu_result_name, driver_too_old_hint
from .errors import CatalogError, CudaError, DriverClosedError, DriverNotFoundError, ResolutionError, UsageError
from .loader import Attempt, load_driver, load_runtime
from .names import (
    CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NOT_FOUND,
    CUDA_SUCCESS,
    DEFAULT,
    FLAGS,
    QUERY_SUCCESS,
    QUERY_SYMBOL_NOT_FOUND,
    QUERY_VERSION_NOT_SUFFICIENT,
    RUNTIME_ERROR_INSUFFICIENT_DRIVER,
    RUNTIME_ERROR_NAMES,
    Mode,
    catalog_stream,
    check_symbol,
    check_version,
    format_version,
    parse_stream,
    stream_of_flags,
)

TYPE_CHECKING = False  # typing, dataclasses and warnings are not imported at run time: a cold start stays cheap
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Sequence
    from typing import Any

    from .calls import TypedFunction

    Answer = tuple[int, Callable[[], Diagnostic]] | ResolutionError  # (address, diagnostic()) of a success
    from functools import partial
else:
    from _functools import partial  # functools.partial, without importing functools (a cold start)

__all__ = ["NO_DRIVER_RUNTIME_ERROR", "Driver", "DriverAnswers", "Resolved", "Runtime", "default_driver", "resolve"]



def _check_pin(sym: object, ver: object, mode: object, abi: Abi) -> None:
    """What resolve_checked takes is what precheck returned: the ABI's own symbol, an int pin, a mode (else a
    UsageError: asking for one symbol and binding another's signature would be unsafe)."""
    if sym != abi.symbol or type(ver) is not int or not abi.version <= ver or mode not in FLAGS:
        raise UsageError(f"resolve_checked({sym!r}, {ver!r}, {mode!r}) does not match the ABI {abi.pfn}",
                         hint="pass what precheck() returned, or call resolve()")


def _logging_wanted() -> bool:
    """Whether a resolution's log line could go anywhere (as [Diagnostic.log][cuentry.diagnostics.Diagnostic.log] decides)."""
    logging = sys.modules.get("logging")
    return logging is not None and bool(logging.getLogger("cuentry").isEnabledFor(logging.DEBUG))


NO_DRIVER_RUNTIME_ERROR = RUNTIME_ERROR_NAMES[RUNTIME_ERROR_INSUFFICIENT_DRIVER]  # libcudart found no usable driver


class Resolved:
    """A successful resolution: the typed callable and its diagnostic (read-only)."""

    __slots__ = ("function", "diagnostic")
    function: TypedFunction
    diagnostic: Diagnostic

    def __init__(self, function: TypedFunction, diagnostic: Diagnostic) -> None:
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "diagnostic", diagnostic)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Resolved is read-only")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Resolved:
            return NotImplemented
        return (self.function, self.diagnostic) == (other.function, other.diagnostic)

    def __hash__(self) -> int:
        return hash((self.function, id(self.diagnostic)))

    def __repr__(self) -> str:
        return f"Resolved(function={self.function!r}, diagnostic={self.diagnostic!r})"

    @property
    def address(self) -> int:
        return self.diagnostic.address


class _Source:
    """What Driver and Runtime share: the library, the catalog, the pre-checks, binding."""

    kind = "driver"

    def __init__(self, found: Any, cat: Catalog | None) -> None:
        self.cat = catalog() if cat is None else cat
        self.library = found.library
        self.path: str = found.path
        self.how: str = found.how
        self.attempts: list[Attempt] = list(found.attempts)
        self.fake: bool = found.fake
        self.boot: Bootstrap = getattr(found, "boot", None) or Bootstrap(found.library)  # or answers (from_answers)
        self._lock = _forksafe.Lock()
        self.driver_version: int | None = None
        # What one library's answers always mean, worked out once: the classification of an answer, and for
        # an address of an ABI its exported name and typed callable (the same pointer with the same ABI is the
        # same function). A table resolved again, or a second table, then costs its queries.
        self._classified: dict[tuple[Any, ...], tuple[Classification, str]] = {}
        # By (id(abi), address): the successes seen (the ABI kept, so an id is never taken for another's) and
        # their exported names; the typed callables bound for them, under one backend choice.
        self._seen: dict[tuple[int, int], tuple[Abi, str | None]] = {}
        self._bound: dict[tuple[int, int], TypedFunction] = {}
        self._bound_choice = choice.token()  # functions bound under this backend choice
        self._first: dict[tuple[str, str], int] = {}

    @property
    def closed(self) -> bool:
        return bool(self.library.closed)

    def __repr__(self) -> str:
        """`<cuentry.Driver 13.0 (13000) /usr/lib/x86_64-linux-gnu/libcuda.so.1, cuGetProcAddress_v2>`: what
        it is, which library, and how it answers (fake, stub, closed when so)."""
        d = self.__dict__
        version = d.get("runtime_version") if self.kind == "runtime" else d.get("driver_version")
        shown = f"{format_version(version)} ({version})" if version else "version unknown"
        marks = [m for m, on in (("fake", d.get("fake")), ("stub", d.get("stub"))) if on]
        if "library" in d and self.closed:
            marks.append("closed")
        form = {"v2": "cuGetProcAddress_v2", "v1": "cuGetProcAddress (v1)", "none": "exported names only"}
        how = form.get(d.get("gpa_form", ""), "") if self.kind == "driver" else (
            "cudaGetDriverEntryPointByVersion" if d.get("by_version") else "cudaGetDriverEntryPoint only")
        extra = "".join(f", {m}" for m in [how, *marks] if m)
        return f"<cuentry.{type(self).__name__} {shown} {d.get('path', '?')}{extra}>"

    def _require_open(self, what: str) -> None:
        if self.library.closed:
            raise DriverClosedError(what)

    def close(self) -> None:
        """Unload the library; every function bound from it raises DriverClosedError afterwards.

        Calls in flight in other threads are waited for (a few seconds at most); if
        they do not return, DriverBusyError is raised and the library stays mapped.
        """
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
        """Raise CudaError (named by cuGetErrorName) unless `rc` is CUDA_SUCCESS."""
        if rc:
            desc = self.boot.error_string(rc) if not self.library.closed else None
            raise CudaError(rc, self.error_name(rc), desc or "", call=call)

    # pre-checks ------------------------------------------------------------
    def _refusal(self, symbol: str, version: int | None, stream: str | None, cls: Classification,
                 hint: str, suggestions: tuple[str, ...] = (), abi: str | None = None) -> ResolutionError:
        """A diagnostic for a request refused before asking (access '-')."""
        d = Diagnostic(symbol=symbol, version=version, flags=FLAGS.get(stream or "", None), stream=stream,
                       access="-", driver_version=self.driver_version, library=self.path, result=None,
                       result_name="-", query=None, query_emulated=False, address=0, classification=cls,
                       hint=hint, suggestions=suggestions, abi=abi)
        d.log()
        return ResolutionError(d)

    def precheck(self, symbol: object, version: object, stream: object, allow_default: bool) -> tuple[str, int, Mode, Abi]:
        """Apply the seed's rules before asking; return (symbol, version, mode, ABI that will bind).

        The input checks are the names module's; which ABI the pin binds is the
        catalog's decision ([Catalog.bind][cuentry.catalog.Catalog.bind]); a refusal becomes a diagnostic.
        """
        try:
            sym = check_symbol(symbol)
        except UsageError as exc:
            raise self._refusal(repr(symbol) if not isinstance(symbol, str) else symbol, None, None,
                                Classification.INVALID_SYMBOL, exc.hint) from None
        mode = parse_stream(stream)
        if mode == DEFAULT and not allow_default:
            raise UsageError("stream mode 'default' was not explicitly allowed",
                             hint="pin 'legacy' or 'per_thread' (libraries must not inherit the application's mode); "
                                  "pass allow_default=True to ask with CU_GET_PROC_ADDRESS_DEFAULT anyway")
        ver = check_version(version)
        try:
            abi = self.cat.bind(sym, ver, catalog_stream(mode))
        except CatalogError as exc:
            raise self._refusal(sym, ver, mode, Classification(exc.classification), exc.hint,
                                tuple(getattr(exc, "suggestions", ()))) from None
        return sym, ver, mode, abi

    def too_old(self, sym: str, ver: int, mode: Mode, abi: Abi) -> ResolutionError | None:
        """The seed's first step: a driver older than the symbol's first ABI cannot have it (said without asking)."""
        if self.driver_version is None:
            return None
        stream = catalog_stream(mode)
        first = self._first.get((sym, stream))
        if first is None:
            first = self._first[(sym, stream)] = self.cat.first_version(sym, stream)
        if self.driver_version >= first:
            return None
        return self._refusal(sym, ver, mode, Classification.DRIVER_TOO_OLD,
                             driver_too_old_hint(sym, first, self.driver_version), abi=abi.pfn)

    def _answer(self, sym: str, ver: int, mode: Mode, abi: Abi, access: str, rc: int, query: int | None,
                emulated: bool, addr: int, runtime: bool = False) -> Diagnostic:
        """The diagnostic of one answer (a failure raises its ResolutionError); a success is remembered, so
        that [typed][cuentry.driver._Source.typed] binds it. Nothing is bound here."""
        hint, exported = self._judged(sym, ver, mode, abi, access, rc, query, emulated, addr, runtime)
        d = self._diagnostic(sym, ver, mode, abi, access, rc, query, emulated, addr, Classification.OK, hint, exported)
        d.log()
        return d

    def _judged(self, sym: str, ver: int, mode: Mode, abi: Abi, access: str, rc: int, query: int | None,
                emulated: bool, addr: int, runtime: bool = False) -> tuple[str, str | None]:
        """Every check of one answer: for a success (hint, exported name), remembered for
        [typed][cuentry.driver._Source.typed]; a failure raises its ResolutionError (its diagnostic logged)."""
        stream = catalog_stream(mode)
        key = (sym, ver, stream, rc, query, addr != 0, runtime, self.driver_version)
        got = self._classified.get(key)
        if got is None:
            got = self._classified[key] = classify(symbol=sym, version=ver, stream=stream, result=rc, query=query,
                                                   address=addr, driver_version=self.driver_version, runtime=runtime,
                                                   cat=self.cat)
        cls, hint = got
        if cls is not Classification.OK:
            d = self._diagnostic(sym, ver, mode, abi, access, rc, query, emulated, addr, cls, hint, abi.exported)
            d.log()
            raise ResolutionError(d)
        seen = self._seen.get((id(abi), addr))
        exported = seen[1] if seen is not None and seen[0] is abi else self._exported(sym, abi, addr)
        check_bindable(abi, self.cat)  # what binding would refuse is refused now, not at the first call
        self._seen[(id(abi), addr)] = (abi, exported)
        return hint, exported

    def _diagnostic(self, sym: str, ver: int, mode: Mode, abi: Abi, access: str, rc: int, query: int | None,
                    emulated: bool, addr: int, cls: Classification, hint: str, exported: str | None) -> Diagnostic:
        return Diagnostic(symbol=sym, version=ver, flags=FLAGS[mode], stream=mode, access=access,
                          driver_version=self.driver_version, library=self.path, result=rc,
                          result_name=self._result_name(rc), query=query, query_emulated=emulated, address=addr,
                          classification=cls, hint=hint, abi=abi.pfn, exported=exported)

    def _bind(self, abi: Abi, addr: int) -> TypedFunction:
        """The typed callable of a success: bound once per (ABI, address) under the current backend choice."""
        bound = self._bound_now()
        key = (id(abi), addr)
        fn = bound.get(key)
        if fn is not None and fn.abi is abi:
            return fn
        made = bind(abi, addr, error_name=self.error_name, cat=self.cat, guard=self.library.guard)
        if fn is None:
            return bound.setdefault(key, made)  # two threads binding at once: both get the first one's
        bound[key] = made  # an id that another ABI held before
        return made

    def typed(self, abi: Abi, address: int) -> TypedFunction:
        """The typed callable for an address this source answered with for `abi` (what a table binds on an
        entry's first use: [resolve_many][cuentry.driver.Driver.resolve_many] answers with the address).

        Raises:
            UsageError: this source never answered `abi` with `address` (nothing else is bound).
        """
        seen = self._seen.get((id(abi), address)) if type(address) is int else None
        if seen is None or seen[0] is not abi:
            raise UsageError(f"{self.path} never resolved {abi.pfn} to {address!r}: refusing to bind it",
                             hint="bind what resolve() or resolve_many() answered")
        return self._bind(abi, address)

    def _exported(self, sym: str, abi: Abi, addr: int) -> str | None:
        """The exported name of a resolved address: the driver's answer is authoritative, so the export it
        equals, if one does (the catalog's name for the ABI where the library says nothing else)."""
        if not abi.exported or self.library.closed:
            return abi.exported
        direct = self.library.address(abi.exported)
        if direct and direct != addr:
            return next((a.exported for a in self.cat.abis(sym) if a.exported and self.library.address(a.exported) == addr),
                        None)
        return abi.exported

    def _result_name(self, rc: int) -> str:
        return self.error_name(rc)

    def resolve_checked(self, sym: str, ver: int, mode: Mode, abi: Abi) -> Resolved:
        """Resolve what `precheck` accepted: the answer, and its typed callable."""
        d = self._asked(sym, ver, mode, abi)
        return Resolved(self._bind(abi, d.address), d)

    def _asked(self, sym: str, ver: int, mode: Mode, abi: Abi) -> Diagnostic:
        """Ask for what `precheck` accepted: the diagnostic of a success, nothing bound (Driver and Runtime
        each have theirs); a failure raises its ResolutionError."""
        raise NotImplementedError

    def _bound_now(self) -> dict[tuple[int, int], TypedFunction]:
        """The functions bound under the current backend choice (a new choice starts afresh)."""
        token = choice.token()
        if self._bound_choice is not token:
            self._bound, self._bound_choice = {}, token
        return self._bound

    def resolve_many(self, pins: Sequence[tuple[str, int, Mode, Abi]]) -> list[Answer]:
        """Resolve pins that `precheck` accepted, in order: for each, `(address, diagnostic())` or the
        ResolutionError it would raise (a driver too old for it included). Tables resolve through this.

        Every check of an answer is made here; what is left is binding a success's typed callable
        ([typed][cuentry.driver._Source.typed], on an entry's first use) and its diagnostic, built when
        asked for (the thunk).
        """
        out: list[Answer] = []
        for sym, ver, mode, abi in pins:
            try:
                too_old = self.too_old(sym, ver, mode, abi)
                if too_old is not None:
                    out.append(too_old)
                    continue
                d = self._asked(sym, ver, mode, abi)
            except ResolutionError as exc:
                out.append(exc)
                continue
            out.append((d.address, lambda d=d: d))  # type: ignore[misc]
        return out


class Driver(_Source):
    """A loaded CUDA driver. Use [load][cuentry.driver.Driver.load]; close it (or use `with`) to unload."""

    def __init__(self, found: Any, cat: Catalog | None = None, *, init: bool = True) -> None:
        super().__init__(found, cat)
        self.stub: bool = found.stub
        rc, v = self.boot.get_version("cuDriverGetVersion")
        self.driver_version = v if rc == 0 else None
        self.init_result: int | None = self.boot.call("cuInit", 0) if init else None
        if self.boot.has("cuGetProcAddress_v2"):
            self.gpa_form = "v2"
        elif self.boot.has("cuGetProcAddress"):
            self.gpa_form = "v1"
        else:
            self.gpa_form = "none"

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, *, cat: Catalog | None = None, init: bool = True,
             allow_stub: bool = False) -> Driver:
        """Find and load the driver (see [cuentry.loader][] for the search order).

        Args:
            path: the driver library (a str or `pathlib.Path`); None searches.
            cat: the catalog to check pins against (the shipped one by default).
            init: call `cuInit(0)` once loaded (only a Driver calls it; loading alone never does).
            allow_stub: accept the toolkit's stub libcuda (for diagnostics).

        Returns:
            The loaded driver.

        Raises:
            DriverNotFoundError: no driver where it was looked for.
            StubLibraryError: the library is the toolkit's stub and `allow_stub` is false.
            UsageError: `path` is neither a str nor an `os.PathLike`.
        """
        return cls(load_driver(path, allow_stub=allow_stub), cat, init=init)

    @classmethod
    def from_answers(cls, answers: DriverAnswers, *, cat: Catalog | None = None, init: bool = True) -> Driver:
        """A Driver whose library questions are answered by `answers`, in Python: no library is loaded.

        The seam for unit tests of tables, diagnostics and floors (as httpx takes a `MockTransport`):
        `answers` says the driver's version, `cuInit`'s result, what `cuGetProcAddress` answers and which
        names are exported, and everything above it (the pre-checks, the catalog's judgement, the
        diagnostics, tables, fallbacks, floors) runs as it does on a loaded library.
        [cuentry.testing.answers.CatalogAnswers][] answers like a real driver of a given release.
        An address it returns is only called when you call the entry bound to it: give real
        function addresses for those (e.g. of a `ctypes.CFUNCTYPE` object), any other nonzero int elsewhere.

        Args:
            answers: an object with the methods of [DriverAnswers][cuentry.driver.DriverAnswers].
            cat: the catalog to check pins against (the shipped one by default).
            init: ask `answers.init(0)` as a loaded Driver calls `cuInit(0)`.

        Raises:
            UsageError: `answers` lacks one of the methods.
        """
        missing = [m for m in ("version", "init", "get_proc_address", "exports") if not callable(getattr(answers, m, None))]
        if missing:
            raise UsageError(f"Driver.from_answers: {type(answers).__name__} has no {', '.join(missing)}()",
                             hint="answers need version(), init(flags), get_proc_address(symbol, version, flags) "
                                  "and exports(name): see cuentry.driver.DriverAnswers")
        return cls(_Answered(answers), cat, init=init)

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
        if flags not in FLAGS.values():
            raise UsageError(f"flags must be 0, 1 or 2, got {flags!r}",
                             hint="CU_GET_PROC_ADDRESS_LEGACY_STREAM (1) or _PER_THREAD_DEFAULT_STREAM (2)")
        return self._query(sym, ver, flags)

    def _query(self, sym: str, ver: int, flags: int) -> tuple[int, int | None, int, bool]:
        """[query][cuentry.driver.Driver.query] for arguments already checked (a pin that `precheck` accepted)."""
        if self.gpa_form == "v2":
            rc, st, addr = self.boot.get_proc_address("cuGetProcAddress_v2", sym.encode(), ver, flags, True)
            return rc, (st if st is not None and st >= 0 else None), addr, False
        if self.gpa_form == "v1":
            rc, _, addr = self.boot.get_proc_address("cuGetProcAddress", sym.encode(), ver, flags, False)
            if rc == CUDA_SUCCESS:
                return CUDA_SUCCESS, (QUERY_SUCCESS if addr else None), addr, True
            if rc == CUDA_ERROR_NOT_FOUND:  # the v1 form cannot say which kind of miss
                return CUDA_SUCCESS, self._emulated_miss(sym, ver, flags), 0, True
            return rc, None, 0, True
        return self._dlsym(sym, ver, flags)

    def _emulated_miss(self, sym: str, ver: int, flags: int) -> int:
        if sym in self.cat:
            known_here = [a for a in self.cat.abis(sym) if self.driver_version is None or a.version <= self.driver_version]
            if known_here and ver < self.cat.first_version(sym, stream_of_flags(flags)):
                return QUERY_VERSION_NOT_SUFFICIENT
        return QUERY_SYMBOL_NOT_FOUND

    def _dlsym(self, sym: str, ver: int, flags: int) -> tuple[int, int | None, int, bool]:
        """Pre-11.3 drivers: the exported name the catalog records for the ABI the driver would pick."""
        if self.driver_version is not None and ver > self.driver_version:
            return CUDA_ERROR_INVALID_VALUE, None, 0, True
        if sym not in self.cat:
            return CUDA_SUCCESS, QUERY_SYMBOL_NOT_FOUND, 0, True
        abi = self.cat.pick(sym, ver, stream_of_flags(flags))
        if abi is None:
            return CUDA_SUCCESS, QUERY_VERSION_NOT_SUFFICIENT, 0, True
        addr = self.library.address(abi.exported) if abi.exported else 0
        return CUDA_SUCCESS, (QUERY_SUCCESS if addr else QUERY_SYMBOL_NOT_FOUND), addr, True

    def resolve(self, symbol: str, version: int, stream: str, *, allow_default: bool = False) -> Resolved:
        """Resolve one (symbol, ABI version) in one stream mode into a typed callable.

        Raises [ResolutionError][cuentry.errors.ResolutionError] with the full diagnostic when anything is off.
        """
        sym, ver, mode, abi = self.precheck(symbol, version, stream, allow_default)
        return self.resolve_checked(sym, ver, mode, abi)

    def resolve_checked(self, sym: str, ver: int, mode: Mode, abi: Abi) -> Resolved:
        """Resolve what `precheck` already accepted (tables check at declaration)."""
        return super().resolve_checked(sym, ver, mode, abi)

    def _asked(self, sym: str, ver: int, mode: Mode, abi: Abi) -> Diagnostic:
        if self.library.closed:
            raise DriverClosedError(f"resolve {sym}")
        _check_pin(sym, ver, mode, abi)
        rc, st, addr, emulated = self._query(sym, ver, FLAGS[mode])
        return self._answer(sym, ver, mode, abi, self.access, rc, st, emulated, addr)

    def resolve_many(self, pins: Sequence[tuple[str, int, Mode, Abi]]) -> list[Answer]:
        """The base source's `resolve_many` (one pin at a time, every check made), at the cost of its queries.

        With `cuGetProcAddress_v2` and no cuentry log wanted, one loop asks the driver for every pin
        with one pair of output cells, inside one bracket of the library's guard; an answer already seen
        on this driver (its classification, its exported name) is taken as it was. Anything else (the v1
        form, a failure, a first answer) is checked the one-pin way. Nothing is bound here.
        """
        if self.gpa_form != "v2" or _logging_wanted() or self.library.closed:
            return super().resolve_many(pins)
        ask = self.boot.proc_address_asker()  # its output cells made once, for this loop
        dv, seen, access, success = self.driver_version, self._seen, "driver:v2", self._success
        out: list[Answer] = []
        guard = self.library.guard
        guard.enter("cuGetProcAddress_v2")
        try:
            for sym, ver, mode, abi in pins:
                if sym != abi.symbol or type(ver) is not int:  # not what precheck returned: refused there
                    out.extend(super().resolve_many([(sym, ver, mode, abi)]))
                    continue
                # A driver at least as new as the bound ABI is not older than the symbol's first one (the ABI is
                # one of the symbol's in this mode): the seed's first step needs asking only below it.
                if dv is not None and dv < abi.version:
                    refused = self.too_old(sym, ver, mode, abi)
                    if refused is not None:
                        out.append(refused)
                        continue
                rc, q, addr = ask(sym.encode(), ver, FLAGS[mode])
                query = q if q >= 0 else None
                # The same answer as one this driver gave before for this ABI (a success): the same exported
                # name, the same function when it is bound, the same diagnostic, built when asked for.
                got = seen.get((id(abi), addr)) if rc == CUDA_SUCCESS and q == QUERY_SUCCESS else None
                if got is None or got[0] is not abi:
                    out.append(self._first_answer(sym, ver, mode, abi, access, rc, query, addr))
                else:
                    out.append((addr, partial(success, sym, ver, mode, abi, rc, query, addr, got[1])))
        finally:
            guard.leave()
        return out

    def _first_answer(self, sym: str, ver: int, mode: Mode, abi: Abi, access: str, rc: int, query: int | None,
                      addr: int) -> Answer:
        """An answer not seen before (or a failure): checked the one-pin way; a success's diagnostic built when
        asked for."""
        try:
            hint, exported = self._judged(sym, ver, mode, abi, access, rc, query, False, addr)
        except ResolutionError as exc:
            return exc
        return addr, partial(self._diagnostic, sym, ver, mode, abi, access, rc, query, False, addr, Classification.OK,
                             hint, exported)

    def _success(self, sym: str, ver: int, mode: Mode, abi: Abi, rc: int, query: int | None, addr: int,
                 exported: str | None) -> Diagnostic:
        """The diagnostic of a success [resolve_many][cuentry.driver.Driver.resolve_many] took from an earlier
        answer (built when asked for)."""
        return self._diagnostic(sym, ver, mode, abi, "driver:v2", rc, query, False, addr, Classification.OK, "",
                                exported)

    def call(self, symbol: str, version: int, stream: str = "legacy") -> TypedFunction:
        """Shorthand: resolve and return the typed callable."""
        return self.resolve(symbol, version, stream).function

    def info(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "how": self.how,
            "fake": self.fake,
            "stub": self.stub,
            "version": self.driver_version,
            "driver_version": self.driver_version,
            "driver_release": format_version(self.driver_version) if self.driver_version else None,
            "cuInit": self.init_result,
            "cuInit_name": self.error_name(self.init_result) if self.init_result is not None else None,
            "cuGetProcAddress": self.gpa_form,
        }


class Runtime(_Source):
    """libcudart's entry point access (`cudaGetDriverEntryPointByVersion`)."""

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
    def load(cls, path: str | os.PathLike[str] | None = None, *, cat: Catalog | None = None) -> Runtime:
        return cls(load_runtime(path), cat)

    def _result_name(self, rc: int) -> str:
        if not self.library.closed:
            name = self.boot.runtime_error_name(rc)
            if name:
                return name
        return RUNTIME_ERROR_NAMES.get(rc, f"cudaError_t({rc})")

    def resolve(self, symbol: str, version: int, stream: str, *, allow_default: bool = False,
                allow_deprecated: bool = False) -> Resolved:
        """Resolve through the runtime; same rules and diagnostics as [Driver.resolve][cuentry.driver.Driver.resolve]."""
        sym, ver, mode, abi = self.precheck(symbol, version, stream, allow_default)
        return self.resolve_checked(sym, ver, mode, abi, allow_deprecated=allow_deprecated)

    def resolve_checked(self, sym: str, ver: int, mode: Mode, abi: Abi, *, allow_deprecated: bool = False) -> Resolved:
        """Resolve what `precheck` already accepted (tables check at declaration)."""
        d = self._asked(sym, ver, mode, abi, allow_deprecated=allow_deprecated)
        return Resolved(self._bind(abi, d.address), d)

    def _asked(self, sym: str, ver: int, mode: Mode, abi: Abi, *, allow_deprecated: bool = False) -> Diagnostic:
        self._require_open(f"resolve {sym}")
        _check_pin(sym, ver, mode, abi)
        flags = FLAGS[mode]
        if self.by_version:
            rc, st, addr = self.boot.runtime_entry_point(sym.encode(), ver, flags)
            access = "runtime"
        elif allow_deprecated and self.boot.has("cudaGetDriverEntryPoint"):
            import warnings

            warnings.warn(
                f"cudaGetDriverEntryPoint asks at the runtime's own version ({self.runtime_version}), "
                f"not at the pin {ver}: it may bind a newer ABI than {abi.pfn}",
                DeprecationWarning, stacklevel=3)  # the caller of resolve_checked, as before _asked
            rc, st, addr = self.boot.runtime_entry_point(sym.encode(), None, flags)
            access = "runtime:deprecated"
        else:
            rv = format_version(self.runtime_version) if self.runtime_version else "unknown"
            raise self._refusal(sym, ver, mode, Classification.RUNTIME_TOO_OLD,
                                f"libcudart {rv} has no cudaGetDriverEntryPointByVersion (added in 12.5): use the "
                                "driver path, or allow_deprecated=True for cudaGetDriverEntryPoint")
        if rc and self._result_name(rc) == NO_DRIVER_RUNTIME_ERROR:
            raise self._no_driver(rc)
        return self._answer(sym, ver, mode, abi, access, rc, st if st >= 0 else None, False, addr, runtime=True)

    def _no_driver(self, rc: int) -> DriverNotFoundError:
        """libcudart found no usable driver: the same error (and CLI exit 3) as when cuentry finds none itself."""
        err = DriverNotFoundError(
            ["the CUDA driver (libcuda.so.1) as loaded by libcudart"],
            [f"{self.path} answered {self._result_name(rc)} ({rc}): no NVIDIA driver is installed, or it is older "
             "than this libcudart"])
        err.hint = ("install the NVIDIA driver (or one at least as new as the runtime), then check `cuentry doctor`; "
                    "without a GPU, use cuentry's fake driver (`cuentry fake-driver` prints its path)")
        return err

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
class DriverAnswers:
    """What a [Driver][cuentry.driver.Driver] asks its library, as [Driver.from_answers][cuentry.driver.Driver.from_answers]
    takes it: implement these four methods (any class will do; this one documents them and answers nothing).

    The form of `cuGetProcAddress` asked is the one the answers export (`exports("cuGetProcAddress_v2")`,
    else `exports("cuGetProcAddress")`, else none: exported names by `exports`), as for a library.
    """

    def version(self) -> int | None:
        """`cuDriverGetVersion`'s version (e.g. 12080), or None where it fails."""
        return None

    def init(self, flags: int) -> int:
        """`cuInit(flags)`'s CUresult."""
        return 0

    def get_proc_address(self, symbol: str, version: int, flags: int) -> tuple[int, int | None, int]:
        """(CUresult, query result, address) of `cuGetProcAddress(symbol, version, flags)`; the query result is
        `CUdriverProcAddressQueryResult` for the v2 form (0 found, 1 symbol not found, 2 version not
        sufficient) and ignored for the v1 form (which says a miss with CUDA_ERROR_NOT_FOUND, 500)."""
        return 500, 1, 0

    def exports(self, name: str) -> int:
        """The address of exported symbol `name`, or 0 when the library does not export it. cuentry calls
        one export itself: `cuStreamSynchronize`, to honour a `__cuda_array_interface__` stream (export it
        only as a real function, or not at all)."""
        return 0


class _AnsweredLibrary:
    """A library whose exported addresses come from answers (nothing mapped): closed flag and guard only."""

    def __init__(self, answers: DriverAnswers, name: str) -> None:
        self._answers = answers
        self.guard = ffi_guard(name, self.address)

    @property
    def closed(self) -> bool:
        return bool(self.guard.closed)

    def address(self, symbol: str) -> int:
        if self.guard.closed:
            return 0
        got = self._answers.exports(symbol)
        return got if type(got) is int and got > 0 else 0

    def close(self) -> None:
        self.guard.close()


class _AnsweredBoot:
    """Bootstrap's questions, asked of answers (inside the library's guard, as a library's are)."""

    def __init__(self, answers: DriverAnswers, lib: _AnsweredLibrary) -> None:
        self._answers = answers
        self._lib = lib

    def has(self, name: str) -> bool:
        return self._lib.address(name) != 0

    def _ask(self, name: str, fn: Callable[[], Any]) -> Any:
        guard = self._lib.guard
        guard.enter(name)
        try:
            return fn()
        finally:
            guard.leave()

    def call(self, name: str, *args: Any) -> int:
        if name != "cuInit":
            raise LookupError(name)
        return int(self._ask(name, lambda: self._answers.init(*args)))

    def get_version(self, name: str) -> tuple[int, int]:
        v = self._ask(name, self._answers.version)
        return (CUDA_SUCCESS, v) if type(v) is int else (CUDA_ERROR_INVALID_VALUE, 0)

    def get_proc_address(self, name: str, symbol: bytes, version: int, flags: int,
                         with_status: bool) -> tuple[int, int | None, int]:
        rc, st, addr = self._ask(name, lambda: self._answers.get_proc_address(symbol.decode(), version, flags))
        if not with_status:
            return int(rc), None, int(addr or 0)
        return int(rc), (-1 if st is None else int(st)), int(addr or 0)

    def proc_address_asker(self) -> Callable[[bytes, int, int], tuple[int, int, int]]:
        def ask(symbol: bytes, version: int, flags: int) -> tuple[int, int, int]:  # the caller holds the guard
            rc, st, addr = self._answers.get_proc_address(symbol.decode(), version, flags)
            return int(rc), (-1 if st is None else int(st)), int(addr or 0)

        return ask

    def error_name(self, code: int) -> str | None:
        return None  # the catalog's names

    def error_string(self, code: int) -> str | None:
        return None


class _Answered:
    """What the loader finds, for answers: the answered library and its bootstrap."""

    def __init__(self, answers: DriverAnswers) -> None:
        self.path = f"<answers: {type(answers).__name__}>"
        self.how = "answers"
        self.attempts: list[Attempt] = []
        self.stub = False
        self.fake = False
        self.library = _AnsweredLibrary(answers, self.path)
        self.boot = _AnsweredBoot(answers, self.library)


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

