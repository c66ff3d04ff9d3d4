"""`cuentry doctor`: what driver and runtime are here, and what resolves on them."""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from . import EXIT_OK, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    d = sub.add_parser("doctor", help="what driver and runtime are here, and what resolves on them")
    d.add_argument("--driver", metavar="PATH", help="driver library to use (default: search; $CUENTRY_DRIVER)")
    d.add_argument("--runtime", metavar="PATH", help="libcudart to use (default: search; $CUENTRY_RUNTIME)")
    d.add_argument("--json", action="store_true", help="machine-readable report")
    d.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..doctor import report

    rep = report(args.driver, args.runtime, progress=lambda i, n: out.progress(i, n, "checking catalog coverage"))
    if args.json:
        out.json(rep)
        return EXIT_OK
    _print_doctor(rep, out)
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
        out.print("            (no GPU here? `cuentry doctor --driver \"$(cuentry fake-driver)\"` shows the report "
                  "on cuentry's fake driver)")
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
