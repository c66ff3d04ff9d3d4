"""The one error hierarchy of cuentry.

Every error cuentry raises derives from [CuentryError][cuentry.errors.CuentryError]. Each carries
structured fields (so code can react to them) and renders a message that says
what was wrong and how to fix it (so a person can). The base classes are never
raised directly.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time: `import cuentry` stays cheap
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = [
    "ArgumentError",
    "ArgumentRangeError",
    "BuildCacheError",
    "BuildError",
    "CatalogDataError",
    "CatalogError",
    "CudaError",
    "CuentryError",
    "DriverBusyError",
    "DriverClosedError",
    "DriverError",
    "DriverNotFoundError",
    "ForkError",
    "HeaderParseError",
    "InterpreterShutdownError",
    "LibraryPathError",
    "LintConfigError",
    "ManifestError",
    "ResolutionError",
    "StubLibraryError",
    "TableDeclarationError",
    "TableError",
    "TableResolutionError",
    "UnavailableError",
    "UnknownConstantError",
    "UnknownEntryError",
    "UnknownSymbolError",
    "UnknownVariantError",
    "UnknownVersionError",
    "UsageError",
    "shorten",
]


class CuentryError(Exception):
    """Base of every cuentry error; never raised directly."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.hint = hint
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        base = self.message
        return f"{base} (hint: {self.hint})" if self.hint else base

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable fields of this error."""
        return {"type": type(self).__name__, "message": self.message, "hint": self.hint}


# --- catalog -----------------------------------------------------------------


class CatalogError(CuentryError, LookupError):
    """A catalog look-up failed; never raised directly.

    `classification` is the diagnostic's word for the failure (`misspelled`,
    `not_an_abi_version`, ...; see [cuentry.Classification][cuentry.diagnostics.Classification]).
    """

    classification: str = ""


def shorten(text: str, limit: int = 120) -> str:
    """`text` on one line and at most `limit` characters, cut at a word boundary with "..." (never mid-word)."""
    one = " ".join(str(text).split())
    if len(one) <= limit:
        return one
    cut = one[:max(limit - 3, 1)]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "..."


def _alternatives(alts: Sequence[str]) -> str:
    return ", ".join(alts)


class UnknownSymbolError(CatalogError):
    """The symbol is not a driver entry point in the catalog."""

    def __init__(self, symbol: str, suggestions: Sequence[str] = (), *, detail: str = "",
                 classification: str = "unknown_symbol") -> None:
        self.symbol = symbol
        self.suggestions = tuple(suggestions)
        self.classification = classification
        hint = detail
        if not hint and self.suggestions:
            hint = f"did you mean {_alternatives(self.suggestions)}?"
        if not hint:
            hint = "run `cuentry list` to see the catalog"
        super().__init__(f"unknown driver entry point {symbol!r}", hint=hint)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "symbol": self.symbol, "suggestions": list(self.suggestions),
                "classification": self.classification}


class UnknownVersionError(CatalogError):
    """The symbol exists but has no ABI at that version."""

    classification = "not_an_abi_version"

    def __init__(self, symbol: str, version: int, valid: Sequence[int], *, hint: str = "") -> None:
        self.symbol = symbol
        self.version = version
        self.valid = tuple(valid)
        listed = _alternatives([str(v) for v in self.valid])
        super().__init__(
            f"{symbol} has no ABI version {version}; its ABI versions are {listed}",
            hint=hint or f"pin one of {listed} (the number in PFN_{symbol}_vNNNNN)",
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "symbol": self.symbol, "version": self.version, "valid": list(self.valid),
                "classification": self.classification}


class UnknownVariantError(CatalogError):
    """The pin has no ABI of the stream mode asked, or was written as a typedef of the other mode."""

    def __init__(self, symbol: str, version: int, variant: str, valid: Sequence[str], *, message: str = "",
                 hint: str = "", classification: str = "version_not_sufficient") -> None:
        self.symbol = symbol
        self.version = version
        self.variant = variant
        self.valid = tuple(valid)
        self.classification = classification
        super().__init__(
            message or f"{symbol}@{version} has no {variant or 'legacy'} variant",
            hint=hint or f"available: {_alternatives([v or 'legacy' for v in self.valid])}",
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "symbol": self.symbol, "version": self.version, "variant": self.variant,
                "classification": self.classification}


class UnknownConstantError(CatalogError, AttributeError):
    """No enum (or enum constant) of that name in the catalog's types (`cuentry.enums`); `suggestions` are the
    names it probably meant. An `AttributeError` too, as `enums.NAME` is an attribute."""

    classification = "unknown_constant"

    def __init__(self, name: str, suggestions: Sequence[str] = (), *, what: str = "enum constant") -> None:
        self.suggestions = tuple(suggestions)
        self.constant = name
        hint = (f"did you mean {_alternatives(self.suggestions)}?" if self.suggestions
                else "the names are cuda.h's (CU_DEVICE_ATTRIBUTE_WARP_SIZE); cuentry.enums.names() lists the enums")
        super().__init__(f"no {what} {name!r} in the catalog", hint=hint)
        self.name = name  # AttributeError's own field

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "constant": self.constant, "suggestions": list(self.suggestions),
                "classification": self.classification}


class CatalogDataError(CatalogError):
    """The committed catalog data is missing or unreadable (a broken install)."""


class HeaderParseError(CuentryError, ValueError):
    """A typedef header could not be preprocessed or parsed by the catalog generator."""

    def __init__(self, path: str, detail: str, *, line: int | None = None, column: int | None = None) -> None:
        self.path = path
        self.line = line
        self.column = column
        where = path if line is None else f"{path}:{line}" + (f":{column}" if column else "")
        super().__init__(
            f"cannot parse {where}: {detail}",
            hint="point --include at an unmodified CUDA toolkit include directory (it must hold cudaTypedefs.h)",
        )


# --- input validation -----------------------------------------------------------


class UsageError(CuentryError, ValueError):
    """An argument given to cuentry is malformed (bad symbol text, flags, mode, version)."""


class LintConfigError(UsageError):
    """The lint configuration (`[tool.cuentry.lint]` in pyproject.toml, `[lint]` in cuentry.toml) is malformed:
    `path`, `line` (0 when not known) and `key` say where."""

    def __init__(self, path: str, line: int, key: str, detail: str, *, hint: str = "") -> None:
        self.path = path
        self.line = line
        self.key = key
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {key}: {detail}" if key else f"{where}: {detail}",
                         hint=hint or "see docs/lint.md#configuration for the keys and their types")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "path": self.path, "line": self.line, "key": self.key}


# --- driver and resolution -----------------------------------------------------


class DriverError(CuentryError, OSError):
    """The driver library could not be used; never raised directly."""


class DriverNotFoundError(DriverError):
    """No usable driver library was found."""

    def __init__(self, searched: Sequence[str], reasons: Sequence[str] = ()) -> None:
        self.searched = tuple(searched)
        self.reasons = tuple(reasons)
        if len(self.searched) > 1:  # every place and its reason are fields (to_dict, `cuentry doctor`), not message text
            p, r = self.searched[0], (self.reasons or ("",))[0]
            first = r if r.startswith(p) else f"{p}: {r}" if r else p  # dlopen's own words start with the name
            tried = f"in {len(self.searched)} places; the first: {shorten(first, 80)}"
        else:
            tried = "; ".join(f"{p}: {r}" for p, r in zip(self.searched, self.reasons, strict=False)) or \
                ", ".join(self.searched)
        super().__init__(
            f"no CUDA driver library found ({tried})",
            hint='install the NVIDIA driver or set CUENTRY_DRIVER=/path/to/libcuda.so.1; no GPU: '
                 'CUENTRY_DRIVER="$(cuentry fake-driver)" runs on cuentry\'s fake driver',
        )

    def to_dict(self) -> dict[str, Any]:
        reasons = list(self.reasons) + [""] * len(self.searched)
        return {**super().to_dict(),
                "searched": [{"path": p, "reason": r} for p, r in zip(self.searched, reasons, strict=False)]}


class LibraryPathError(DriverNotFoundError):
    """The one library named (an argument, $CUENTRY_DRIVER, $CUENTRY_RUNTIME) cannot be used.

    `kind`: `missing` (no such file), `unloadable` (the loader refused it: the
    loader's own words are in `reason`), `wrong_library` (it loads but is not a
    CUDA driver, or not a CUDA runtime). `expected`: `driver` or `runtime`.
    """

    def __init__(self, path: str, how: str, reason: str, kind: str, expected: str = "driver") -> None:
        DriverNotFoundError.__init__(self, [path], [reason])
        self.path = path
        self.how = how
        self.kind = kind
        self.expected = expected
        lib = "libcuda.so.1 (the NVIDIA driver)" if expected == "driver" else "libcudart.so (the CUDA runtime)"
        what = {"missing": f"no such file {path!r}",
                "unloadable": f"{path} cannot be loaded: {reason}",
                "wrong_library": f"{path} is not a CUDA {expected}: {reason}"}.get(kind, f"{path}: {reason}")
        source = "the path" if how == "argument" else f"the path in {how}"
        hints = {"missing": f"check {source} (a relative path is taken from the current directory)",
                 "unloadable": f"give the path of {lib}; this file is not a shared library for this machine",
                 "wrong_library": f"give the path of {lib}"
                                  + (", or of `cuentry fake-driver`'s library" if expected == "driver" else "")}
        self.args = (what if how == "argument" else f"{what} (from {how})",)
        self.hint = hints.get(kind, f"give the path of {lib}")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "path": self.path, "how": self.how, "kind": self.kind, "expected": self.expected}


class StubLibraryError(DriverError):
    """The library found is the toolkit's link-time stub libcuda.so, not a driver."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"{path} is the CUDA toolkit's stub libcuda (CUDA_ERROR_STUB_LIBRARY), not a driver",
            hint="remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH or point CUENTRY_DRIVER at the real "
                 "libcuda.so.1",
        )


class DriverClosedError(DriverError):
    """The driver library was unloaded; its functions can no longer be called."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: the driver library was closed",
            hint="resolve again from a new cuentry.Driver (tables: call table.reset())",
        )


class ResolutionError(CuentryError, LookupError):
    """An entry point did not resolve; carries the full two-layer diagnostic."""

    def __init__(self, diagnostic: Any) -> None:
        self.diagnostic = diagnostic
        super().__init__(diagnostic.summary(), hint=diagnostic.hint)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "diagnostic": self.diagnostic.to_dict()}


class CudaError(CuentryError, RuntimeError):
    """A driver call returned a CUresult other than CUDA_SUCCESS."""

    def __init__(self, code: int, name: str, description: str = "", *, call: str = "") -> None:
        self.code = code
        self.name = name
        self.description = description
        self.call = call
        where = f"{call}: " if call else ""
        text = f"{where}{name} ({code})" + (f": {description}" if description else "")
        super().__init__(text, hint=_RESULT_HINTS.get(name, ""))

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "code": self.code, "name": self.name, "call": self.call}


# The fix for CUresults a caller's own code causes, by the name cuGetErrorName gives (one line each).
_RESULT_HINTS = {
    "CUDA_ERROR_INVALID_CONTEXT": "no CUDA context is current on this thread: make the call inside "
                                  "`with cuentry.primary_context(0):` (or make a context current with cuCtxSetCurrent)",
    "CUDA_ERROR_NOT_INITIALIZED": "the driver is not initialised: cuentry.Driver.load() calls cuInit(0) (unless init=False)",
}


class TableError(CuentryError, RuntimeError):
    """A function table is misdeclared or misused; never raised directly."""


class TableDeclarationError(TableError, ValueError):
    """A table declaration is invalid (duplicate entry, mixed modes, bad fallback)."""


class TableResolutionError(TableError):
    """One or more required entries of a table failed to resolve; lists all of them."""

    def __init__(self, table: str, failures: Sequence[Any]) -> None:
        self.table = table
        self.failures = tuple(failures)
        lines = "; ".join(f.summary() for f in self.failures)
        super().__init__(
            f"table {table!r}: {len(self.failures)} required entr{'y' if len(self.failures) == 1 else 'ies'} failed: {lines}",
            hint=" / ".join(dict.fromkeys(f.hint for f in self.failures if f.hint)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "failures": [f.to_dict() for f in self.failures]}


class UnknownEntryError(TableError, AttributeError):
    """A table has no entry of that name (`lib.cuMemAloc`): `table`, `entry`, and `suggestions`, the names it
    probably meant; an `AttributeError` too (`getattr(lib, name, None)` and `hasattr` work as ever)."""

    def __init__(self, table: str, entry: str, suggestions: Sequence[str] = (), *, hint: str = "") -> None:
        self.table = table
        self.entry = entry
        self.suggestions = tuple(suggestions)
        if not hint:
            hint = (f"did you mean {_alternatives(self.suggestions)}?" if self.suggestions
                    else "declare it in the table (required(...) or optional(...)); `table.entries` lists them")
        super().__init__(f"table {table!r} has no entry {entry!r}", hint=hint)
        self.name = entry  # AttributeError's own field: the attribute that was missing

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "table": self.table, "entry": self.entry, "suggestions": list(self.suggestions)}


class UnavailableError(TableError, LookupError):
    """An optional entry is unavailable and has no fallback; carries the reason."""

    def __init__(self, symbol: str, reason: Any) -> None:
        self.symbol = symbol
        self.reason = reason
        super().__init__(f"{symbol} is unavailable: {reason.summary()}", hint=reason.hint)


class ForkError(TableError):
    """A table resolved in a parent process was used in a forked child that refuses re-resolution."""


class InterpreterShutdownError(TableError):
    """A table was first used (resolved or bound) while the interpreter is shutting down, when Python can no
    longer import what the first use needs."""


class ArgumentError(CuentryError, TypeError):
    """A typed callable was called with an argument it cannot pass to the driver."""


class ManifestError(CuentryError, ValueError):
    """A manifest file is unreadable or malformed; carries line and column where known."""

    def __init__(self, path: str, detail: str, *, line: int | None = None, column: int | None = None, hint: str = "") -> None:
        self.path = path
        self.line = line
        self.column = column
        where = path if line is None else f"{path}:{line}:{column or 1}"
        super().__init__(f"{where}: {detail}", hint=hint or "see `cuentry check --help` for the manifest format")


# --- building helper libraries -------------------------------------------------------


class BuildError(CuentryError, RuntimeError):
    """A library cuentry compiles itself (the fake driver) could not be built."""

    def __init__(self, message: str, *, hint: str = "install a C compiler (gcc or clang) or set CC to one") -> None:
        super().__init__(message, hint=hint)


class BuildCacheError(BuildError):
    """The build cache directory is not private to this user (or cannot be made), so it is not used."""

    def __init__(self, path: str, detail: str, *, hint: str = "pass a directory only you can write") -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"unsafe build cache {path}: {detail}", hint=hint)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "path": self.path, "detail": self.detail}


# --- typed calls (the call layer, cuentry.calls) ----------------------------------------


class ArgumentRangeError(ArgumentError, OverflowError):
    """An integer argument is outside the exact range of its C type (it would have been truncated)."""

    def __init__(self, message: str, *, function: str, parameter: str, value: int, low: int, high: int,
                 hint: str = "") -> None:
        self.function = function
        self.parameter = parameter
        self.value = value
        self.low = low
        self.high = high
        super().__init__(message, hint=hint)

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "function": self.function, "parameter": self.parameter, "value": self.value,
                "low": self.low, "high": self.high}


class DriverBusyError(DriverError):
    """close() found calls into the library still running after waiting: the library stays mapped."""

    def __init__(self, what: str, in_flight: int, waited: float) -> None:
        self.in_flight = in_flight
        super().__init__(
            f"{what}: {in_flight} call(s) still in flight after {waited:g} s; the library was not unmapped "
            "(new calls are refused)",
            hint="let the other threads' driver calls return, then call close() again",
        )
