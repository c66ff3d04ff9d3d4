"""What `cuentry doctor` reports, as data: the driver and runtime found, and catalog coverage on them.

The CLI prints it (`cuentry doctor`, `--json`); programs can call [report][cuentry.doctor.report].
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from . import __version__
from .catalog import Catalog, catalog
from .driver import Driver, Runtime
from .errors import DriverError, ResolutionError
from .loader import PATHFINDER_HOW, describe, driver_candidates, pathfinder_version, runtime_candidates
from .names import LEGACY

__all__ = ["Progress", "coverage", "report"]


Progress = Callable[[int, int], None]


def coverage(drv: Driver, cat: Catalog | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Resolve each symbol's newest legacy ABI on `drv`; count and classify what does not resolve."""
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
                             "result": d.result, "result_name": d.result_name,
                             "query": d.query, "query_name": d.query_name})
        if progress is not None and (i % 25 == 0 or i == len(symbols)):
            progress(i, len(symbols))
    by_class = Counter(f["classification"] for f in failures)
    return {"symbols": len(symbols), "resolved_at_newest": resolved, "not_resolved": len(failures),
            "by_classification": dict(by_class.most_common()), "failures": failures}


def _backend() -> dict[str, str]:
    from .calls import backend

    return backend()


def _place(path: str, how: str, reason: str) -> dict[str, str]:
    """One place looked at: the decided `searched` shape ({"path", "reason"}), with how it came to be asked."""
    return {"path": path, "reason": reason, "how": how}


def _attempts(attempts: Any) -> list[dict[str, str]]:
    return [_place(a["candidate"], a["how"], a["outcome"]) for a in describe(attempts)]


def _searched(exc: DriverError, driver: str | None) -> list[dict[str, str]]:
    """Each place looked at and what happened there (the same shape as a found driver's `searched`)."""
    searched = getattr(exc, "searched", None)
    if searched is None:  # a stub refused, for instance: the candidates, without outcomes
        return [_place(c, h, "") for c, h in driver_candidates(driver)]
    reasons = list(getattr(exc, "reasons", ())) + [""] * len(searched)
    hows = dict(driver_candidates(driver))
    return [_place(c, getattr(exc, "how", None) or hows.get(c, ""), r)
            for c, r in zip(searched, reasons, strict=False)]


def _runtime_searched(exc: DriverError, runtime: str | None) -> list[dict[str, str]]:
    """Each place the runtime search looked at, how it came to look there, and what happened."""
    hows = {**dict(runtime_candidates(runtime)), "cudart": PATHFINDER_HOW}
    return [_place(c, hows.get(c, ""), r)
            for c, r in zip(getattr(exc, "searched", ()), getattr(exc, "reasons", ()), strict=False)]


def report(driver: str | None = None, runtime: str | None = None, *,
           progress: Progress | None = None) -> dict[str, Any]:
    """The doctor's report: cuentry, call backend, catalog, driver (or where it looked), runtime, coverage."""
    cat = catalog()
    rep: dict[str, Any] = {"cuentry": __version__, "backend": _backend(),
                           "catalog": {"abi_count": len(cat), "symbols": len(cat.symbols()), "toolkits": list(cat.history)}}
    drv = None
    try:
        drv = Driver.load(driver, allow_stub=True)
        rep["driver"] = {"found": True, **drv.info(), "version": drv.driver_version, "searched": _attempts(drv.attempts)}
    except DriverError as exc:
        rep["driver"] = {"found": False, "path": None, "version": None, "error": exc.to_dict(),
                         "searched": _searched(exc, driver)}
    try:
        # Only the runtime asked for or found: the fake libcuda also answers the runtime's calls, but it is
        # not the process's libcudart, and showing it as one would be a lie (--runtime names it on purpose).
        rt = Runtime.load(runtime)
        rep["runtime"] = {"found": True, **rt.info(), "searched": _attempts(rt.attempts)}
        rt.close()
    except DriverError as exc:
        rep["runtime"] = {"found": False, "error": exc.to_dict(),
                          "searched": _runtime_searched(exc, runtime)}
    rep["discovery"] = {"cuda_pathfinder": pathfinder_version()}
    if drv is not None:
        if not drv.stub and drv.driver_version:
            rep["coverage"] = coverage(drv, cat, progress)
        drv.close()
    return rep
