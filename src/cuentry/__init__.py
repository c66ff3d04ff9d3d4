"""cuentry: safe, ABI-pinned access to CUDA Driver API entry points.

The names below are imported lazily, so `import cuentry` stays cheap and a
catalog look-up never loads ctypes or the driver.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at run time: `import cuentry` stays cheap
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "get_catalog": "cuentry.catalog",
    "Catalog": "cuentry.catalog",
    "Abi": "cuentry.catalog",
    "format_version": "cuentry.catalog",
    "parse_version": "cuentry.catalog",
    "Driver": "cuentry.driver",
    "Runtime": "cuentry.driver",
    "Resolved": "cuentry.driver",
    "resolve": "cuentry.driver",
    "default_driver": "cuentry.driver",
    "Diagnostic": "cuentry.diagnostics",
    "Classification": "cuentry.diagnostics",
    "out": "cuentry.calls",
    "as_bytes": "cuentry.calls",
    "as_str": "cuentry.calls",
    "address": "cuentry.calls",
    "kernel_params": "cuentry.calls",
    "Out": "cuentry.calls",
    "Table": "cuentry.table",
    "primary_context": "cuentry.context",
    "Entry": "cuentry.entry",
    "required": "cuentry.entry",
    "optional": "cuentry.entry",
    "Unavailable": "cuentry.table",
    "stream_from_env": "cuentry.table",
    "CuentryError": "cuentry.errors",
    "ResolutionError": "cuentry.errors",
    "CudaError": "cuentry.errors",
    "UnknownSymbolError": "cuentry.errors",
    "UnknownVersionError": "cuentry.errors",
    "UnknownEntryError": "cuentry.errors",
    "UnknownConstantError": "cuentry.errors",
    "DriverNotFoundError": "cuentry.errors",
    "TableResolutionError": "cuentry.errors",
    "TableDeclarationError": "cuentry.errors",
    "ManifestError": "cuentry.errors",
    "UnavailableError": "cuentry.errors",
    "ArgumentError": "cuentry.errors",
    "UsageError": "cuentry.errors",
    "DriverClosedError": "cuentry.errors",
    "StubLibraryError": "cuentry.errors",
}

__all__ = [
    "Abi",
    "ArgumentError",
    "Catalog",
    "Classification",
    "CudaError",
    "CuentryError",
    "Diagnostic",
    "Driver",
    "DriverClosedError",
    "DriverNotFoundError",
    "Entry",
    "ManifestError",
    "Out",
    "ResolutionError",
    "Resolved",
    "Runtime",
    "StubLibraryError",
    "Table",
    "TableDeclarationError",
    "TableResolutionError",
    "Unavailable",
    "UnavailableError",
    "UnknownConstantError",
    "UnknownEntryError",
    "UnknownSymbolError",
    "UnknownVersionError",
    "UsageError",
    "address",
    "as_bytes",
    "as_str",
    "default_driver",
    "format_version",
    "get_catalog",
    "kernel_params",
    "optional",
    "out",
    "parse_version",
    "primary_context",
    "required",
    "resolve",
    "stream_from_env",
]

if TYPE_CHECKING:
    from .calls import Out, address, as_bytes, as_str, kernel_params, out
    from .catalog import Abi, Catalog, format_version, get_catalog, parse_version
    from .diagnostics import Classification, Diagnostic
    from .driver import Driver, Resolved, Runtime, default_driver, resolve
    from .entry import Entry, optional, required
    from .errors import (
        ArgumentError,
        CudaError,
        CuentryError,
        DriverClosedError,
        DriverNotFoundError,
        ManifestError,
        ResolutionError,
        StubLibraryError,
        TableDeclarationError,
        TableResolutionError,
        UnavailableError,
        UnknownConstantError,
        UnknownEntryError,
        UnknownSymbolError,
        UnknownVersionError,
        UsageError,
    )
    from .table import Table, Unavailable, stream_from_env


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'cuentry' has no attribute {name!r}")
    __import__(mod)  # not importlib.import_module: importing importlib costs a cold start a millisecond
    value = getattr(sys.modules[mod], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
