"""`cuentry doctor`: what driver and runtime are here, and what resolves on them."""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from ..errors import UsageError
from . import EXIT_NODRIVER, EXIT_OK, SubParsers
from .output import Out, cli_terms

__all__ = ["SHOWN", "exit_code", "register", "run"]



def register(sub: SubParsers) -> None:
    d = sub.add_parser("doctor", help="what driver and runtime are here, and what resolves on them")
    d.add_argument("--driver", metavar="PATH", help="driver library to use (default: search; $CUENTRY_DRIVER)")
    d.add_argument("--runtime", metavar="PATH", help="libcudart to use (default: search; $CUENTRY_RUNTIME)")
    d.add_argument("--json", action="store_true", help="machine-readable report")
    d.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..doctor import report

    if args.runtime is not None and not args.runtime.strip():
        raise UsageError("--runtime is empty", hint="give libcudart's path, or leave --runtime out to search for it")
    rep = report(args.driver, args.runtime, progress=lambda i, n: out.progress(i, n, "checking catalog coverage"))
    code = exit_code(rep, explicit_runtime=bool(args.runtime))
    if args.json:
        out.json(rep)
        return code
    _print_doctor(rep, out, explicit_runtime=bool(args.runtime))
    if code != EXIT_OK and out.quiet:  # -q hides the report, never the error that makes the exit code
        _print_error(rep, out, explicit_runtime=bool(args.runtime))
    return code


def _print_error(rep: dict[str, Any], out: Out, *, explicit_runtime: bool) -> None:
    """The one error of a failed doctor, on standard error (what -q still shows)."""
    d, rt = rep["driver"], rep["runtime"]
    if not d["found"]:
        n, err = len(d.get("searched") or ()), d["error"]
        many = err["type"] == "DriverNotFoundError" and n > 2
        out.error("cuentry: error: " + (f"no CUDA driver library found in {n} places (`cuentry doctor` without -q "
                                        "lists each with the reason)" if many else " ".join(err["message"].split())))
        out.error(f"  hint: {cli_terms(d['error']['hint'])}")
    elif d.get("stub"):
        out.error(f"cuentry: error: {d['path']} is the toolkit's stub libcuda (CUDA_ERROR_STUB_LIBRARY), not a driver")
        out.error("  hint: remove the toolkit's lib64/stubs from LD_LIBRARY_PATH, or pass --driver with the real "
                  "libcuda.so.1")
    elif explicit_runtime and not rt["found"]:
        out.error(f"cuentry: error: the runtime asked for is not usable: {rt['error']['message']}")


def exit_code(rep: dict[str, Any], *, explicit_runtime: bool = False) -> int:
    """0 with a usable driver; 3 without one, with the toolkit's stub, or when a runtime asked for is not there."""
    d = rep["driver"]
    if not d["found"] or d.get("stub") or (explicit_runtime and not rep["runtime"]["found"]):
        return EXIT_NODRIVER
    return EXIT_OK


_IND = " " * 12  # the column where the doctor's values start


def _print_driver(d: dict[str, Any], out: Out) -> None:
    if d["found"]:
        kind = " (cuentry fake driver)" if d.get("fake") else ""
        out.wrap(f"{out.ok('found')} {d['path']}{kind}", 12, "driver      ")
        out.print(f"{_IND}found by: {d['how']}")
        if d.get("stub"):
            out.wrap(out.bad("this is the toolkit stub libcuda (CUDA_ERROR_STUB_LIBRARY): not a driver"), 12, _IND)
            out.wrap("remove the toolkit's lib64/stubs from LD_LIBRARY_PATH, or pass --driver with the real "
                     "libcuda.so.1", 18, f"{_IND}hint: ")
        ver = d.get("driver_version")
        out.print(f"{_IND}version: {ver} ({d.get('driver_release')})" if ver else f"{_IND}version: unknown")
        init = str(d.get("cuInit_name"))
        out.print(f"{_IND}cuInit: {out.ok(init) if d.get('cuInit') == 0 else out.warn(init)}")
        form = {"v2": "cuGetProcAddress_v2 (12.0+ driver, with query result)",
                "v1": "cuGetProcAddress v1 only (11.3-11.8 driver; query result emulated)",
                "none": "none (pre-11.3 driver; exported names from the catalog)"}[d["cuGetProcAddress"]]
        out.wrap(form, 26, f"{_IND}entry points: ")
        return
    err = d["error"]
    # A search over many places is listed below, each with its reason; the message would repeat it.
    message = "no CUDA driver library found" if err["type"] == "DriverNotFoundError" else err["message"]
    out.wrap(f"{out.bad('not found')}: {message}", 12, "driver      ")
    out.print(f"{_IND}searched:")
    for s in d["searched"]:
        out.wrap(f"{s['path']}  [{s['how']}]" + (f"  -> {s['reason']}" if s["reason"] else ""), 18, f"{_IND}  ")
    out.wrap(cli_terms(d["error"]["hint"]), 17, f"{_IND}fix: ")
    out.wrap("(no GPU here? `cuentry doctor --driver \"$(cuentry fake-driver)\"` shows the report on cuentry's "
             "fake driver)", 12, _IND)


def _print_doctor(r: dict[str, Any], out: Out, *, explicit_runtime: bool = False) -> None:
    out.print(out.bold(f"cuentry {r['cuentry']} doctor"))
    _print_driver(r["driver"], out)
    rt = r["runtime"]
    if rt["found"]:
        by = "yes" if rt.get("cudaGetDriverEntryPointByVersion") else out.warn("no (runtime older than 12.5)")
        out.wrap(f"{out.ok('found')} {rt['path']} version {rt.get('runtime_version')} ({rt.get('runtime_release')})",
                 12, "runtime     ")
        out.wrap(rt["how"], 22, f"{_IND}found by: ")
        out.print(f"{_IND}cudaGetDriverEntryPointByVersion: {by}")
    elif explicit_runtime:
        out.wrap(f"{out.bad('not usable')}: {rt['error']['message']}", 12, "runtime     ")
        out.wrap(cli_terms(rt["error"]["hint"]), 17, f"{_IND}fix: ")
    else:
        out.print(f"runtime     {out.warn('not found')} (optional; only the --runtime path needs it)")
        for s in rt.get("searched", []):
            out.wrap(f"{s['path']}  -> {s['reason']}", 14, "              ")
    pf = r["discovery"]["cuda_pathfinder"]
    out.wrap(f"cuda-pathfinder {pf}" if pf else f"{out.warn('cuda-pathfinder not installed')} (pip install "
             "cuda-pathfinder): libcudart is searched with cuentry's own list", 12, "discovery   ")
    b = r["backend"]
    out.wrap(f"{b['name']}: {b['detail']}", 12, "backend     ")
    c = r["catalog"]
    tks = c["toolkits"]
    if tks:
        out.wrap(f"{c['abi_count']} ABIs of {c['symbols']} symbols, headers of toolkits {tks[0]}-{tks[-1]}", 12, "catalog     ")
    cov = r.get("coverage")
    if cov:
        _print_coverage(cov, out)


def _print_coverage(cov: dict[str, Any], out: Out) -> None:
    """Counts by classification, then groups with a few names each (never the whole list: --json has it)."""
    out.wrap(f"{out.ok(str(cov['resolved_at_newest']))} of {cov['symbols']} symbols resolve at their newest "
             f"legacy ABI; {cov['not_resolved']} do not:", 12, "coverage    ")
    for cls, n in cov["by_classification"].items():
        out.print(f"{_IND}  {n:4d}  {cls}")
    groups: dict[str, list[str]] = defaultdict(list)
    for f in cov["failures"]:
        groups[f["group"] or "(no group)"].append(f"{f['symbol']}@{f['version']}")
    if not groups:
        return
    out.print(f"{_IND}not resolved, by group (all of them: --json):")
    for g, v in sorted(groups.items()):
        out.print(f"{_IND}  {g} ({len(v)})")
        out.wrap(", ".join(v[:SHOWN]) + (f", +{len(v) - SHOWN} more" if len(v) > SHOWN else ""), 16, f"{_IND}    ")
    hints = {f["classification"]: f["hint"] for f in cov["failures"]}
    out.print(f"{_IND}why (one example per kind):")
    for cls, h in hints.items():
        out.wrap(cli_terms(h), 16, f"{_IND}  {cls}: ")


SHOWN = 2  # names per group in the coverage table
