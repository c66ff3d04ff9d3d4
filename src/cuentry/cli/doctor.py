"""`cuentry doctor`: what driver and runtime are here, and what resolves on them."""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from typing import Any

from .. import __version__
from ..catalog import Catalog, catalog
from ..errors import DriverError, ResolutionError
from . import EXIT_OK, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    d = sub.add_parser("doctor", help="what driver and runtime are here, and what resolves on them")
    d.add_argument("--driver", metavar="PATH", help="driver library to use (default: search; $CUENTRY_DRIVER)")
    d.add_argument("--runtime", metavar="PATH", help="libcudart to use (default: search; $CUENTRY_RUNTIME)")
    d.add_argument("--json", action="store_true", help="machine-readable report")
    d.set_defaults(func=run)


def _backend() -> dict[str, str]:
    from .._ffi import backend

    return backend()


def _coverage(drv: Any, cat: Catalog, out: Out) -> dict[str, Any]:
    """Resolve each symbol's newest legacy ABI on this driver; group what does not."""
    symbols = cat.symbols()
    resolved = 0
    failures: list[dict[str, Any]] = []
    for i, sym in enumerate(symbols, 1):
        abi = cat.newest(sym)
        try:
            drv.resolve(sym, abi.version, "legacy")
            resolved += 1
        except ResolutionError as exc:
            d = exc.diagnostic
            g = cat.group(sym)
            failures.append({"symbol": sym, "version": abi.version, "group": g.id if g else None,
                             "classification": d.classification.value, "hint": d.hint,
                             "result": d.result_name, "query": d.query_name})
        if i % 25 == 0 or i == len(symbols):
            out.progress(i, len(symbols), "checking catalog coverage")
    by_class = Counter(f["classification"] for f in failures)
    return {"symbols": len(symbols), "resolved_at_newest": resolved, "not_resolved": len(failures),
            "by_classification": dict(by_class.most_common()), "failures": failures}


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver, Runtime
    from ..loader import describe, driver_candidates, pathfinder_version

    cat = catalog()
    report: dict[str, Any] = {"cuentry": __version__, "backend": _backend(),
                              "catalog": {"abis": len(cat), "symbols": len(cat.symbols()),
                                          "toolkits": list(cat.history)}}
    drv = None
    try:
        drv = Driver.load(args.driver, allow_stub=True)
        report["driver"] = {"found": True, **drv.info(), "searched": describe(drv.attempts)}
    except DriverError as exc:
        report["driver"] = {"found": False, "error": exc.message, "hint": exc.hint,
                            "searched": [{"candidate": c, "how": h} for c, h in driver_candidates(args.driver)],
                            **({"reasons": list(exc.reasons)} if hasattr(exc, "reasons") else {})}
    rt = None
    try:
        rt = Runtime.load(args.runtime or (args.driver if args.driver and drv is not None and drv.fake else None))
        report["runtime"] = {"found": True, **rt.info(), "searched": describe(rt.attempts)}
    except DriverError as exc:
        report["runtime"] = {"found": False, "error": exc.message, "hint": exc.hint,
                             "searched": [{"candidate": c, "outcome": r} for c, r in
                                          zip(getattr(exc, "searched", ()), getattr(exc, "reasons", ()), strict=False)]}
    report["discovery"] = {"cuda_pathfinder": pathfinder_version()}
    if drv is not None and not drv.stub and drv.driver_version:
        report["coverage"] = _coverage(drv, cat, out)
    if args.json:
        out.json(report)
        return EXIT_OK
    _print_doctor(report, out)
    if rt is not None:
        rt.close()
    return EXIT_OK


def _print_doctor(r: dict[str, Any], out: Out) -> None:
    out.print(out.bold(f"cuentry {r['cuentry']} doctor"))
    d = r["driver"]
    if d["found"]:
        kind = " (cuentry fake driver)" if d.get("fake") else ""
        out.print(f"driver      {out.ok('found')} {d['path']}{kind}")
        out.print(f"            found by: {d['how']}")
        if d.get("stub"):
            out.print(f"            {out.bad('this is the toolkit stub libcuda (CUDA_ERROR_STUB_LIBRARY): not a driver')}")
            out.print("            hint: remove the toolkit's lib64/stubs from LD_LIBRARY_PATH or set CUENTRY_DRIVER")
        ver = d.get("driver_version")
        out.print(f"            version: {ver} ({d.get('driver_release')})" if ver else "            version: unknown")
        init = d.get("cuInit_name")
        out.print(f"            cuInit: {out.ok(init) if d.get('cuInit') == 0 else out.warn(str(init))}")
        form = {"v2": "cuGetProcAddress_v2 (12.0+ driver, with query result)",
                "v1": "cuGetProcAddress v1 only (11.3-11.8 driver; query result emulated)",
                "none": "none (pre-11.3 driver; exported names from the catalog)"}[d["cuGetProcAddress"]]
        out.print(f"            entry points: {form}")
    else:
        out.print(f"driver      {out.bad('not found')}: {d['error']}")
        out.print("            searched:")
        for i, s in enumerate(d["searched"]):
            reason = d.get("reasons", [])[i] if i < len(d.get("reasons", [])) else ""
            out.print(f"              {s['candidate']}  [{s['how']}]" + (f"  -> {reason}" if reason else ""))
        out.print(f"            fix: {d['hint']}")
        out.print("            (no GPU here? `cuentry doctor --driver \"$(cuentry fake-driver)\"` shows the report on cuentry's fake driver)")
    rt = r["runtime"]
    if rt["found"]:
        by = "yes" if rt.get("cudaGetDriverEntryPointByVersion") else out.warn("no (runtime older than 12.5)")
        out.print(f"runtime     {out.ok('found')} {rt['path']} version {rt.get('runtime_version')} ({rt.get('runtime_release')})")
        out.print(f"            found by: {rt['how']}")
        out.print(f"            cudaGetDriverEntryPointByVersion: {by}")
    else:
        out.print(f"runtime     {out.warn('not found')} (optional; only the --runtime path needs it)")
        for s in rt.get("searched", []):
            out.print(f"              {s['candidate']}  -> {s['outcome']}")
    pf = r["discovery"]["cuda_pathfinder"]
    out.print(f"discovery   cuda-pathfinder {pf}" if pf else
              f"discovery   {out.warn('cuda-pathfinder not installed')} (pip install cuda-pathfinder): "
              "libcudart is searched with cuentry's own list")
    b = r["backend"]
    out.print(f"backend     {b['name']}: {b['detail']}")
    c = r["catalog"]
    tks = c["toolkits"]
    out.print(f"catalog     {c['abis']} ABIs of {c['symbols']} symbols, headers of toolkits {tks[0]}-{tks[-1]}" if tks else "")
    cov = r.get("coverage")
    if cov:
        out.print(f"coverage    {out.ok(str(cov['resolved_at_newest']))} of {cov['symbols']} symbols resolve at their newest "
                  f"legacy ABI; {cov['not_resolved']} do not:")
        for cls, n in cov["by_classification"].items():
            out.print(f"              {n:4d}  {cls}")
        groups: dict[str, list[str]] = defaultdict(list)
        for f in cov["failures"]:
            groups[f["group"] or "(no group)"].append(f"{f['symbol']}@{f['version']}")
        rows = [[g, str(len(v)), ", ".join(v[:4]) + (" ..." if len(v) > 4 else "")] for g, v in sorted(groups.items())]
        if rows:
            out.print("            not resolved, by group:")
            out.table(rows, ["group", "n", "symbols"], indent=14)
            hints = {f["classification"]: f["hint"] for f in cov["failures"]}
            out.print("            why (one example per kind):")
            for cls, h in hints.items():
                out.print(f"              {cls}: {h}")
