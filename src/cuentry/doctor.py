"""What `cuentry doctor` reports, as data: the driver and runtime found, and catalog coverage on them.

The CLI prints it (`cuentry doctor`, `--json`); programs can call :func:`report`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from . import __version__
from .catalog import Catalog, catalog
from .driver import Driver, Runtime
from .errors import DriverError, ResolutionError
from .loader import describe, driver_candidates, pathfinder_version
from .names import LEGACY

Progress = Callable[[int, int], None]


def coverage(drv: Driver, cat: Catalog | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Resolve each symbol's newest legacy ABI on ``drv``; count and classify what does not resolve."""
    cat = catalog() if cat is None else cat
    symbols = cat.symbols()
    resolved = 0
    failures: list[dict[str, Any]] = []
    for i, sym in enumerate(symbols, 1):
        abi = cat.newest(sym)
        try:
            drv.resolve(sym, abi.version, LEGACY)
            resolved += 1
        except ResolutionError as exc:
            d = exc.diagnostic
            g = cat.group(sym)
            failures.append({"symbol": sym, "version": abi.version, "group": g.id if g else None,
                             "classification": d.classification.value, "hint": d.hint,
                             "result": d.result_name, "query": d.query_name})
        if progress is not None and (i % 25 == 0 or i == len(symbols)):
            progress(i, len(symbols))
    by_class = Counter(f["classification"] for f in failures)
    return {"symbols": len(symbols), "resolved_at_newest": resolved, "not_resolved": len(failures),
            "by_classification": dict(by_class.most_common()), "failures": failures}


def _backend() -> dict[str, str]:
    from ._ffi import backend

    return backend()


def report(driver: str | None = None, runtime: str | None = None, *,
           progress: Progress | None = None) -> dict[str, Any]:
    """The doctor's report: cuentry, call backend, catalog, driver (or where it looked), runtime, coverage."""
    cat = catalog()
    rep: dict[str, Any] = {"cuentry": __version__, "backend": _backend(),
                           "catalog": {"abis": len(cat), "symbols": len(cat.symbols()), "toolkits": list(cat.history)}}
    drv = None
    try:
        drv = Driver.load(driver, allow_stub=True)
        rep["driver"] = {"found": True, **drv.info(), "searched": describe(drv.attempts)}
    except DriverError as exc:
        rep["driver"] = {"found": False, "error": exc.message, "hint": exc.hint,
                         "searched": [{"candidate": c, "how": h} for c, h in driver_candidates(driver)],
                         **({"reasons": list(exc.reasons)} if hasattr(exc, "reasons") else {})}
    try:
        rt = Runtime.load(runtime or (driver if driver and drv is not None and drv.fake else None))
        rep["runtime"] = {"found": True, **rt.info(), "searched": describe(rt.attempts)}
        rt.close()
    except DriverError as exc:
        rep["runtime"] = {"found": False, "error": exc.message, "hint": exc.hint,
                          "searched": [{"candidate": c, "outcome": r} for c, r in
                                       zip(getattr(exc, "searched", ()), getattr(exc, "reasons", ()), strict=False)]}
    rep["discovery"] = {"cuda_pathfinder": pathfinder_version()}
    if drv is not None:
        if not drv.stub and drv.driver_version:
            rep["coverage"] = coverage(drv, cat, progress)
        drv.close()
    return rep
