"""Two-layer diagnostics for one entry-point query.

The first layer is the API call's own result (`CUresult` for the driver path,
`cudaError_t` for the runtime path): did the query run at all. The second is
the query result (`CUdriverProcAddressQueryResult`): what the symbol look-up
found. [Diagnostic][cuentry.diagnostics.Diagnostic] carries both, with everything needed to tell a
configuration error from a driver that is too old, and a classification with a
concrete hint.
"""

from __future__ import annotations

import sys

from .catalog import Catalog, catalog
from .names import (
    CUDA_ERROR_INVALID_VALUE,
    CUDA_ERROR_NOT_INITIALIZED,
    CUDA_ERROR_STUB_LIBRARY,
    CUDA_SUCCESS,
    QUERY_NAMES,
    QUERY_SUCCESS,
    QUERY_SYMBOL_NOT_FOUND,
    QUERY_VERSION_NOT_SUFFICIENT,
    flags_name,
    format_version,
    stream_label,
)

TYPE_CHECKING = False  # no typing, dataclasses, enum or logging at run time: a cold start stays cheap
if TYPE_CHECKING:
    from enum import Enum
    from typing import Any
else:

    class _Members(type):
        """A string enumeration without `enum` (which brings functools and collections: ~5 ms of a cold
        start). Members are instances of the class (so `str` subclasses, equal to their values), looked up
        by value with `Cls(value)`, iterable in definition order, with `.name` and `.value`."""

        def __new__(mcls, name, bases, ns):
            values = {k: v for k, v in ns.items() if k.isupper() and isinstance(v, str)}
            for k in values:
                del ns[k]
            ns.setdefault("__repr__", lambda self: f"<{name}.{self.name}: {str.__str__(self)!r}>")
            ns.setdefault("__str__", lambda self: f"{name}.{self.name}")
            ns.setdefault("__format__", lambda self, spec: format(str(self), spec))
            cls = super().__new__(mcls, name, bases, ns)
            members = {}
            for k, v in values.items():
                m = str.__new__(cls, v)
                m._name_ = k
                type.__setattr__(cls, k, m)
                members[k] = m
            type.__setattr__(cls, "_members_", members)
            type.__setattr__(cls, "_by_value_", {str.__str__(m): m for m in members.values()})
            return cls

        def __call__(cls, value):
            if isinstance(value, cls):
                return value
            try:
                return cls._by_value_[value]
            except (KeyError, TypeError):
                raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

        def __iter__(cls):
            return iter(cls._members_.values())

        def __len__(cls):
            return len(cls._members_)

        def __getitem__(cls, name):
            return cls._members_[name]

        def __setattr__(cls, name, value):
            raise AttributeError(f"cannot reassign {cls.__name__}.{name}")

    class Enum(metaclass=_Members):
        __slots__ = ()

        @property
        def name(self):
            return self._name_

        @property
        def value(self):
            return str.__str__(self)

        def __reduce__(self):
            return (type(self), (str.__str__(self),))

__all__ = [
    "Classification",
    "Diagnostic",
    "classify",
    "cu_result_name",
    "driver_too_old_hint",
]


class Classification(str, Enum):
    """Why a query ended as it did."""

    OK = "ok"
    INVALID_SYMBOL = "invalid_symbol"            # empty, non-ASCII, not an identifier
    SUFFIXED_NAME = "suffixed_name"              # cuMemAlloc_v2, cuMemcpy_ptds
    MISSPELLED = "misspelled"                    # wrong case or a typo of a catalog symbol
    UNKNOWN_SYMBOL = "unknown_symbol"            # not in the catalog at all
    NOT_AN_ABI_VERSION = "not_an_abi_version"    # 13000 for cuMemAlloc
    VERSION_NOT_SUFFICIENT = "version_not_sufficient"
    DRIVER_TOO_OLD = "driver_too_old"
    VERSION_ABOVE_DRIVER = "version_above_driver"
    NOT_ON_PLATFORM = "not_on_platform"
    NOT_EXPORTED = "not_exported"                # the catalog knows it, this driver does not have it
    NULL_POINTER = "null_pointer"
    STUB_LIBRARY = "stub_library"
    NOT_INITIALIZED = "not_initialized"
    BAD_FLAGS = "bad_flags"
    MIXED_STREAM_MODES = "mixed_stream_modes"    # a per-thread typedef asked in legacy mode, or the reverse
    RUNTIME_TOO_OLD = "runtime_too_old"
    DRIVER_ERROR = "driver_error"


def cu_result_name(code: int | None, cat: Catalog | None = None) -> str:
    """The CUresult's enumerator name, from the catalog's copy of the enum."""
    if code is None:
        return "-"
    names = _cu_names(catalog() if cat is None else cat)
    return names.get(code, f"CUresult({code})")


def _cu_names(cat: Catalog) -> dict[int, str]:
    return cat.fact("diagnostics.cu_names", _make_cu_names)


def _make_cu_names(cat: Catalog) -> dict[int, str]:
    """Each CUresult value's first enumerator name in `cat` (a fact of the catalog: Catalog.fact)."""
    vals = cat.types["enums"].get("cudaError_enum", {}).get("values", {})
    got: dict[int, str] = {}
    for name, v in vals.items():
        if v is not None:
            got.setdefault(v, name)
    return got


_FIELDS = ("symbol", "version", "flags", "stream", "access", "driver_version", "library", "result", "result_name",
           "query", "query_emulated", "address", "classification", "hint", "abi", "exported", "suggestions")


class Diagnostic:
    """Everything known about one query, and what it means. Treat it as read-only.

    (Not a frozen dataclass: a frozen one costs three times as much to make, and a
    table makes one per entry.)
    """

    symbol: str
    version: int | None
    flags: int | None
    stream: str | None
    access: str                      # "driver:v2", "driver:v1", "dlsym", "runtime", "-" (refused before asking)
    driver_version: int | None
    library: str | None
    result: int | None               # CUresult (driver path) or cudaError_t (runtime path)
    result_name: str
    query: int | None                # query result as the driver/runtime wrote it; None if untouched/not asked
    query_emulated: bool             # derived by cuentry (v1/dlsym path), not written by the driver
    address: int
    classification: Classification
    hint: str
    abi: str | None           # the PFN typedef the pin binds (PFN_cuMemAlloc_v3020)
    exported: str | None      # the exported name of that ABI, where known
    suggestions: tuple[str, ...]

    __slots__ = _FIELDS

    def __init__(self, symbol: str, version: int | None, flags: int | None, stream: str | None, access: str,
                 driver_version: int | None, library: str | None, result: int | None, result_name: str,
                 query: int | None, query_emulated: bool, address: int, classification: Classification, hint: str,
                 abi: str | None = None, exported: str | None = None, suggestions: tuple[str, ...] = ()) -> None:
        self.symbol = symbol
        self.version = version
        self.flags = flags
        self.stream = stream
        self.access = access
        self.driver_version = driver_version
        self.library = library
        self.result = result
        self.result_name = result_name
        self.query = query
        self.query_emulated = query_emulated
        self.address = address
        self.classification = classification
        self.hint = hint
        self.abi = abi
        self.exported = exported
        self.suggestions = suggestions

    def __eq__(self, other: object) -> bool:
        if type(other) is not Diagnostic:
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"Diagnostic({', '.join(f'{k}={getattr(self, k)!r}' for k in _FIELDS)})"

    @property
    def ok(self) -> bool:
        return self.classification is Classification.OK

    @property
    def query_name(self) -> str:
        if self.query is None:
            return "-"
        name = QUERY_NAMES.get(self.query, f"query({self.query})")
        return name + (" (emulated)" if self.query_emulated else "")

    @property
    def flags_name(self) -> str:
        return "-" if self.flags is None else flags_name(self.flags)

    def summary(self) -> str:
        """One line a person can act on."""
        pin = f"{self.symbol}@{self.version}" if self.version is not None else self.symbol
        if self.ok:
            return f"{pin} resolved to {self.exported or hex(self.address)} ({self.abi})"
        return f"{pin} did not resolve: {self.classification.value}"

    def log_line(self) -> str:
        """All fields as key=value, for logs."""
        drv = self.driver_version
        return (
            f"symbol={self.symbol} version={self.version} flags={self.flags_name} stream={self.stream} "
            f"access={self.access} driver={drv}{'(' + format_version(drv) + ')' if drv else ''} "
            f"library={self.library} result={self.result_name} query={self.query_name} "
            f"address={hex(self.address)} abi={self.abi} exported={self.exported} "
            f"class={self.classification.value} hint={self.hint!r}"
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: getattr(self, k) for k in _FIELDS}
        d["classification"] = self.classification.value
        d["flags_name"] = self.flags_name
        d["query_name"] = self.query_name
        d["suggestions"] = list(self.suggestions)
        d["address"] = hex(self.address)
        return d

    def log(self) -> None:
        # Until something imports logging, no handler can be configured and DEBUG/INFO records
        # would go nowhere: skip it, and a cold start does not pay for importing it.
        logging = sys.modules.get("logging")
        if logging is None:
            return
        log = logging.getLogger("cuentry")
        level = logging.DEBUG if self.ok else logging.INFO
        if log.isEnabledFor(level):
            log.log(level, "cuentry: %s", self.log_line())


def driver_too_old_hint(symbol: str, first: int, driver_version: int | None, pin: int | None = None) -> str:
    """The hint for a driver older than a symbol's first ABI; with `pin`, the driver that pin needs."""
    drv = f"{format_version(driver_version)} ({driver_version})" if driver_version else "unknown"
    if pin is not None and pin > first:
        return (f"{symbol}@{pin} needs driver >= {format_version(pin)} ({pin}) (its first ABI is {first}); "
                f"this driver is {drv}")
    return f"{symbol} needs driver >= {format_version(first)} ({first}); this driver is {drv}"


def classify(
    *,
    symbol: str,
    version: int,
    stream: str,
    result: int,
    query: int | None,
    address: int,
    driver_version: int | None,
    runtime: bool = False,
    cat: Catalog | None = None,
    platform: str = "linux",
) -> tuple[Classification, str]:
    """Classify an answer from the driver or the runtime and give the hint for it."""
    cat = catalog() if cat is None else cat
    drv = f"{format_version(driver_version)} ({driver_version})" if driver_version else "unknown"
    known = symbol in cat
    if result != CUDA_SUCCESS:
        return _classify_error(cat, symbol, version, stream, result, driver_version, drv, known, runtime)
    if query == QUERY_VERSION_NOT_SUFFICIENT:
        if known:
            first = cat.first_version(symbol, stream)  # type: ignore[arg-type]
            return (Classification.VERSION_NOT_SUFFICIENT,
                    f"the driver knows {symbol} but not at version {version}: its first "
                    f"{stream_label(stream)} ABI is {first}; raise the pin to {first}")
        return Classification.VERSION_NOT_SUFFICIENT, "raise the version pin to the symbol's first ABI version"
    if query == QUERY_SYMBOL_NOT_FOUND:
        return _classify_not_found(cat, symbol, version, stream, driver_version, drv, known, platform)
    if query is not None and query != QUERY_SUCCESS:
        return Classification.DRIVER_ERROR, f"unexpected query result {query}"
    if address == 0:
        return Classification.NULL_POINTER, "the driver reported success but gave a NULL pointer: treat it as unavailable"
    return Classification.OK, ""


def _classify_error(cat: Catalog, symbol: str, version: int, stream: str, result: int, driver_version: int | None,
                    drv: str, known: bool, runtime: bool) -> tuple[Classification, str]:
    """An answer whose CUresult is not CUDA_SUCCESS."""
    if result == CUDA_ERROR_STUB_LIBRARY:
        return (Classification.STUB_LIBRARY,
                "this is the toolkit's stub libcuda: load the real driver (libcuda.so.1 from the NVIDIA driver)")
    if result == CUDA_ERROR_NOT_INITIALIZED:
        return (Classification.NOT_INITIALIZED,
                "cuInit did not succeed: check the GPU is visible (nvidia-smi) and CUDA_VISIBLE_DEVICES")
    if result == CUDA_ERROR_INVALID_VALUE and driver_version is not None and version > driver_version:
        first = cat.first_version(symbol, stream) if known else None  # type: ignore[arg-type]
        if first is not None and first > driver_version:
            return Classification.DRIVER_TOO_OLD, driver_too_old_hint(symbol, first, driver_version, version)
        older = [v for v in cat.versions(symbol) if v <= driver_version] if known else []
        alt = f", or pin the older ABI {older[-1]} that this driver has" if older else ""
        return (Classification.VERSION_ABOVE_DRIVER,
                f"version {version} is newer than the driver ({drv}): this pin needs driver >= {format_version(version)}; "
                f"update the driver, make the entry optional with a fallback{alt}")
    if result == CUDA_ERROR_INVALID_VALUE:
        return Classification.BAD_FLAGS, "the driver rejected the arguments: flags must be 0, 1 or 2"
    return Classification.DRIVER_ERROR, f"the {'runtime' if runtime else 'driver'} returned an error: see its name above"


def _classify_not_found(cat: Catalog, symbol: str, version: int, stream: str, driver_version: int | None, drv: str,
                        known: bool, platform: str) -> tuple[Classification, str]:
    """A successful call whose query result is SYMBOL_NOT_FOUND."""
    if not known:
        return Classification.UNKNOWN_SYMBOL, "check the spelling: names are case-sensitive base names (cuMemAlloc)"
    first = cat.first_version(symbol, stream)  # type: ignore[arg-type]
    if driver_version is not None and driver_version < first:
        return Classification.DRIVER_TOO_OLD, driver_too_old_hint(symbol, first, driver_version, version)
    abi = cat.pick(symbol, version, stream)  # type: ignore[arg-type]
    if abi is not None and platform not in abi.platforms:
        return Classification.NOT_ON_PLATFORM, f"{symbol} exists only on {', '.join(abi.platforms)}"
    return (Classification.NOT_EXPORTED,
            f"this driver ({drv}) does not provide {symbol} although it is in the headers; "
            "it may be platform- or build-specific: use a fallback")
