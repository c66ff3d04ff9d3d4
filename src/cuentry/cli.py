"""The cuentry command line: the only code that prints.

Commands: doctor, resolve, show, list, check, fake-driver, catalog build.
Every report takes ``--json`` (schemas in docs/cli.md). Exit codes:
0 success; 1 the thing checked failed (a required entry, a resolution);
2 bad input (usage, unknown symbol/version, malformed manifest);
3 no usable driver (check, resolve).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TextIO, TypedDict

from . import __version__
from .catalog import Abi, Catalog, catalog, format_version, parse_version
from .errors import CuentryError, DriverError, ManifestError, ResolutionError, UsageError

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NODRIVER = 0, 1, 2, 3


class _Out:
    """Where and how to print: colour only on a terminal and without NO_COLOR."""

    def __init__(self, stream: TextIO, err: TextIO, color: bool | None) -> None:
        self.stream = stream
        self.err = err
        if color is None:
            color = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        self.color = color

    def c(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def ok(self, t: str) -> str:
        return self.c(t, "32")

    def bad(self, t: str) -> str:
        return self.c(t, "31")

    def warn(self, t: str) -> str:
        return self.c(t, "33")

    def bold(self, t: str) -> str:
        return self.c(t, "1")

    def print(self, text: str = "") -> None:
        print(text, file=self.stream)

    def json(self, obj: Any) -> None:
        print(json.dumps(obj, indent=2, sort_keys=False), file=self.stream)

    def progress(self, done: int, total: int, label: str) -> None:
        if self.err.isatty():
            print(f"\r{label} {done}/{total}", end="" if done < total else "\n", file=self.err, flush=True)

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None, indent: int = 0) -> None:
        allrows = [list(header)] + [list(r) for r in rows] if header else [list(r) for r in rows]
        if not allrows:
            return
        widths = [max(len(_plain(r[i])) for r in allrows if i < len(r)) for i in range(max(len(r) for r in allrows))]
        for j, r in enumerate(allrows):
            cells = [r[i] + " " * (widths[i] - len(_plain(r[i]))) for i in range(len(r))]
            line = " " * indent + "  ".join(cells).rstrip()
            self.print(self.bold(line) if header and j == 0 else line)


def _plain(s: str) -> str:
    import re
    return re.sub(r"\033\[[0-9;]*m", "", s)


def _fail(out: _Out, exc: CuentryError, code: int) -> int:
    print(f"cuentry: error: {exc.message}", file=out.err)
    if exc.hint:
        print(f"  hint: {exc.hint}", file=out.err)
    return code


# --- doctor ----------------------------------------------------------------------


def _backend() -> dict[str, str]:
    from .calls import backend

    return backend()


def _coverage(drv: Any, cat: Catalog, out: _Out) -> dict[str, Any]:
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


def cmd_doctor(args: argparse.Namespace, out: _Out) -> int:
    from .driver import Driver, Runtime
    from .loader import describe, driver_candidates

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
        report["runtime"] = {"found": True, **rt.info()}
    except DriverError as exc:
        report["runtime"] = {"found": False, "error": exc.message, "hint": exc.hint}
    if drv is not None and not drv.stub and drv.driver_version:
        report["coverage"] = _coverage(drv, cat, out)
    if args.json:
        out.json(report)
        return EXIT_OK
    _print_doctor(report, out)
    if rt is not None:
        rt.close()
    return EXIT_OK


def _print_doctor(r: dict[str, Any], out: _Out) -> None:
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
        out.print(f"            cudaGetDriverEntryPointByVersion: {by}")
    else:
        out.print(f"runtime     {out.warn('not found')} (optional; only the --runtime path needs it)")
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


# --- resolve -----------------------------------------------------------------------


def cmd_resolve(args: argparse.Namespace, out: _Out) -> int:
    from .driver import Driver, Runtime

    version = _version_arg(args.version)
    src: Any
    if args.runtime is not None:
        src = Runtime.load(args.runtime or None)
    else:
        src = Driver.load(args.driver)
    try:
        if args.runtime is not None:
            r = src.resolve(args.symbol, version, args.stream, allow_default=args.allow_default,
                            allow_deprecated=args.allow_deprecated)
        else:
            r = src.resolve(args.symbol, version, args.stream, allow_default=args.allow_default)
        d = r.diagnostic
        code = EXIT_OK
    except ResolutionError as exc:
        d = exc.diagnostic
        code = EXIT_FAIL if d.access != "-" else EXIT_USAGE
    if args.json:
        out.json(d.to_dict())
        return code
    mark = out.ok("ok") if d.ok else out.bad("FAILED")
    out.print(f"{mark}  {d.summary()}")
    out.print(f"    {d.log_line()}")
    if d.hint:
        out.print(f"    hint: {d.hint}")
    return code


def _version_arg(text: str) -> int:
    v = parse_version(text)
    if not isinstance(text, int) and "." in str(text):
        raise UsageError(f"--version {text}: give the ABI version number (e.g. 3020), not a release",
                         hint="the number in PFN_cuX_vNNNNN; `cuentry show SYMBOL` lists them")
    return v


# --- show and list --------------------------------------------------------------------


def _lookup_symbol(cat: Catalog, name: str) -> str:
    if name.startswith("PFN_"):
        return cat.parse_pfn(name).symbol
    cat.abis(name)  # raises UnknownSymbolError with suggestions
    return name


def cmd_show(args: argparse.Namespace, out: _Out) -> int:
    cat = catalog()
    sym = _lookup_symbol(cat, args.symbol)
    abis = cat.abis(sym)
    g = cat.group(sym)
    info = {"symbol": sym, "group": g.id if g else None, "group_title": g.title if g else None,
            "first_version": cat.first_version(sym), "first_toolkit": cat.first_toolkit(sym),
            "versions": list(cat.versions(sym)), "abis": [a.to_dict() for a in abis]}
    if args.json:
        out.json(info)
        return EXIT_OK
    out.print(out.bold(sym) + (f"  [{g.id}: {g.title}]" if g else ""))
    out.print(f"  ABI versions: {', '.join(map(str, cat.versions(sym)))}; first declared in toolkit "
              f"{info['first_toolkit']} of the catalog's history ({cat.history[0]}-{cat.history[-1]})")
    for a in abis:
        mode = "per-thread" if a.variant else "legacy"
        out.print(f"  {a.version:>6} ({format_version(a.version)}) {mode:<10} exported {a.exported or '?'}"
                  f"  toolkits {a.toolkits[0]}-{a.toolkits[-1]}  {a.header}"
                  + ("" if "linux" in a.platforms else "  [windows only]"))
        out.print(f"         {a.c_typedef()}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace, out: _Out) -> int:
    cat = catalog()
    if args.groups:
        counts = Counter((cat.group(s) or None) for s in cat.symbols())
        rows: list[dict[str, Any]] = [{"id": g.id, "title": g.title, "symbols": counts.get(g, 0)}
                                      for g in cat.groups.values()]
        if args.json:
            out.json(rows)
        else:
            out.table([[r["id"], r["title"], str(r["symbols"])] for r in rows], ["group", "title", "symbols"])
        return EXIT_OK
    since = parse_version(args.since) if args.since is not None else None
    abis: Sequence[Abi] = cat.select(group=args.group, since=since)
    if args.json:
        out.json([{"symbol": a.symbol, "version": a.version, "variant": a.variant, "exported": a.exported,
                   "group": a.group, "first_toolkit": a.toolkits[0] if a.toolkits else None,
                   "declaration": a.c_typedef()} for a in abis])
        return EXIT_OK
    out.table([[a.symbol, str(a.version), a.variant or "legacy", a.exported or "?", a.group or "-",
                a.toolkits[0] if a.toolkits else "?"] for a in abis],
              ["symbol", "version", "stream", "exported", "group", "since toolkit"])
    out.print(f"{len(abis)} ABIs")
    return EXIT_OK


# --- check ---------------------------------------------------------------------------


class _Pos(TypedDict):
    line: int | None
    column: int | None


def load_manifest(path: str) -> dict[str, Any]:
    """Read a manifest; malformed TOML and bad entries become ManifestError with line and column."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ManifestError(path, f"cannot read the manifest: {exc.strerror or exc}",
                            hint="give the path of a TOML manifest (see `cuentry check --help`)") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        import re
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        if "(at end of document)" in str(exc):
            lines = text.splitlines() or [""]
            raise ManifestError(path, f"invalid TOML: {msg} (at the end of the file)", line=len(lines),
                                column=len(lines[-1]) + 1) from None
        if m:
            raise ManifestError(path, f"invalid TOML: {msg}", line=int(m.group(1)), column=int(m.group(2))) from None
        raise ManifestError(path, f"invalid TOML: {msg}") from None

    def where(needle: str) -> _Pos:
        for i, ln in enumerate(text.splitlines(), 1):
            col = ln.find(needle)
            if col >= 0:
                return {"line": i, "column": col + 1}
        return {"line": None, "column": None}

    table = data.get("table", {})
    if not isinstance(table, dict):
        raise ManifestError(path, "[table] must be a table", **where("table"))
    # Entries may sit at the top level or inside [table] (where TOML puts keys written after it).
    for kind in ("required", "optional"):
        if kind in table:
            if kind in data:
                raise ManifestError(path, f"{kind} is given twice (top level and in [table])", **where(kind))
            data[kind] = table.pop(kind)
    unknown_t = set(table) - {"name", "stream"}
    if unknown_t:
        key = sorted(unknown_t)[0]
        raise ManifestError(path, f"unknown key {key!r} in [table]", **where(key),
                            hint="[table] takes name, stream, required, optional")
    stream = table.get("stream")
    if stream is None:
        raise ManifestError(path, "no stream mode: add `stream = \"legacy\"` or `\"per_thread\"` under [table]",
                            hint="a manifest, like a table, pins one stream mode")
    entries: list[dict[str, Any]] = []
    unknown = set(data) - {"table", "required", "optional"}
    if unknown:
        key = sorted(unknown)[0]
        raise ManifestError(path, f"unknown key {key!r}", **where(key), hint="top-level keys: table, required, optional")
    for kind in ("required", "optional"):
        items = data.get(kind, [])
        if not isinstance(items, list):
            raise ManifestError(path, f"{kind} must be an array", **where(kind))
        for it in items:
            if isinstance(it, str):
                spec: dict[str, Any] = {"pfn": it} if it.startswith("PFN_") else _at_spec(path, it, where)
            elif isinstance(it, dict):
                spec = dict(it)
            else:
                raise ManifestError(path, f"{kind} entries are strings or tables, got {it!r}", **where(str(it)))
            spec["required"] = kind == "required"
            entries.append(spec)
    return {"name": table.get("name", os.path.basename(path)), "stream": stream, "entries": entries,
            "where": where}


def _at_spec(path: str, it: str, where: Callable[[str], _Pos]) -> dict[str, Any]:
    if "@" not in it:
        raise ManifestError(path, f"entry {it!r} has no version", **where(it),
                            hint="write 'cuMemAlloc@3020', 'PFN_cuMemAlloc_v3020' or {symbol=..., version=...}")
    sym, _, ver = it.partition("@")
    try:
        return {"symbol": sym, "version": int(ver)}
    except ValueError:
        raise ManifestError(path, f"entry {it!r}: version {ver!r} is not a number", **where(it)) from None


def cmd_check(args: argparse.Namespace, out: _Out) -> int:
    from .driver import Driver
    from .table import Entry, Table, optional, required

    m = load_manifest(args.manifest)
    entries: list[Entry] = []
    for spec in m["entries"]:
        mk = required if spec["required"] else optional
        label = spec.get("pfn") or spec.get("symbol")
        try:
            if "pfn" in spec:
                e = mk(spec["pfn"], name=spec.get("name"))
            else:
                if not isinstance(spec.get("symbol"), str) or not isinstance(spec.get("version"), int):
                    raise UsageError("needs symbol (string) and version (integer)")
                e = mk(spec["symbol"], spec["version"], name=spec.get("name"))
            entries.append(e)
        except CuentryError as exc:
            raise ManifestError(args.manifest, f"entry {label!r}: {exc.message}", **m["where"](str(label)),
                                hint=exc.hint) from None
    try:
        table = Table(m["name"], entries, stream=m["stream"])
    except CuentryError as exc:
        labels = [str(sp.get("pfn") or sp.get("symbol")) for sp in m["entries"]]
        needle = next((lb for lb in labels if lb in exc.message), "stream")
        raise ManifestError(args.manifest, exc.message, **m["where"](needle), hint=exc.hint) from None
    floor = table.min_driver()
    try:
        drv = Driver.load(args.driver)
    except DriverError as exc:
        if args.json:
            out.json({"manifest": args.manifest, "ok": False, "min_driver": floor, "error": exc.to_dict()})
        else:
            print(f"cuentry: error: {exc.message}\n  hint: {exc.hint}", file=out.err)
            out.print(f"manifest needs driver >= {format_version(floor)} ({floor})")
        return EXIT_NODRIVER
    table.reset(source=drv)
    rep = table.report()
    ok = all(r["status"] != "failed" for r in rep["entries"])
    rep.update({"manifest": args.manifest, "ok": ok, "driver": drv.info()})
    if args.json:
        out.json(rep)
        return EXIT_OK if ok else EXIT_FAIL
    out.print(out.bold(f"{args.manifest}: table {rep['table']!r}, {rep['stream'].replace('_', '-')} stream, "
                       f"driver {drv.driver_version} ({format_version(drv.driver_version or 0)})"))
    rows = []
    for r in rep["entries"]:
        st = r["status"]
        mark = {"resolved": out.ok("ok"), "fallback": out.warn("fallback"), "unavailable": out.warn("unavailable"),
                "failed": out.bad("FAILED")}.get(st, st)
        first = r["attempts"][0] if r["attempts"] else {}
        why = "" if st == "resolved" else f"{first.get('classification')}: {first.get('hint')}"
        if r["via"]:
            why = f"via {r['via']}; " + why
        rows.append([mark, f"{r['symbol']}@{r['version']}", "required" if r["required"] else "optional",
                     r["exported"] or "-", why])
    out.table(rows, ["", "entry", "kind", "exported", "why"])
    out.print(f"minimum driver for the required entries: {format_version(floor)} ({floor})")
    out.print(out.ok("PASS") if ok else out.bad("FAIL: a required entry does not resolve on this driver"))
    return EXIT_OK if ok else EXIT_FAIL


# --- lint ------------------------------------------------------------------------------


def cmd_lint(args: argparse.Namespace, out: _Out) -> int:
    try:
        from .lint import lint_paths, sarif
    except ImportError as exc:
        raise UsageError(f"cuentry lint needs tree-sitter: {exc}",
                         hint="pip install tree-sitter tree-sitter-cpp (they come with cuentry's dependencies)") from None
    rep = lint_paths(args.paths, select=args.select, ignore=args.ignore,
                     progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None)
    code = EXIT_FAIL if rep.findings else EXIT_OK
    if args.sarif:
        out.json(sarif(rep, __version__))
        return code
    if args.json:
        out.json(rep.to_dict())
        return code
    if args.min_driver:
        md = rep.min_driver
        out.print(f"minimum driver for the pins found: {format_version(md)} ({md})" if md else
                  "no literal version pins found")
        for sym, v in sorted(rep.pins.items(), key=lambda kv: (-kv[1], kv[0])):
            out.print(f"  {v:>6}  {sym}")
        return code
    for f in rep.findings:
        out.print(f"{f.path}:{f.line}:{f.col}: {out.bad(f.code)} {f.message}")
    for p in rep.unparsable:
        print(f"cuentry: warning: {p}: not valid Python, skipped", file=out.err)
    n = len(rep.findings)
    summary = f"{n} finding{'s' if n != 1 else ''} in {rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)"
    out.print(summary if n else f"no findings in {rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)")
    return code


# --- fake driver and catalog build ------------------------------------------------------


def cmd_fake_driver(args: argparse.Namespace, out: _Out) -> int:
    from .testing.fakedriver import build

    try:
        path = build(args.dir, args.variant)
    except RuntimeError as exc:
        print(f"cuentry: error: {exc}", file=out.err)
        return EXIT_FAIL
    out.print(str(path))
    return EXIT_OK


def cmd_catalog_build(args: argparse.Namespace, out: _Out) -> int:
    from ._catalog_build import main as build_main

    argv = ["--include", args.include, "--toolkit", args.toolkit]
    if args.history:
        argv.append("--history")
    if args.output:
        argv += ["-o", args.output]
    return build_main(argv)


# --- parser ------------------------------------------------------------------------------

MANIFEST_HELP = """\
manifest format (TOML):

  [table]
  name = "mylib"
  stream = "per_thread"            # or "legacy"

  required = ["PFN_cuMemAlloc_v3020", "cuStreamBeginCapture@10010"]
  optional = [{ symbol = "cuMulticastCreate", version = 12010 }]

exit codes: 0 every required entry resolves; 1 one does not; 2 bad manifest or
input; 3 no driver found (the minimum driver is still printed).
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cuentry", description="Safe, ABI-pinned access to CUDA Driver API entry points.")
    p.add_argument("--version", action="version", version=f"cuentry {__version__}")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour in human output")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("doctor", help="what driver and runtime are here, and what resolves on them")
    d.add_argument("--driver", metavar="PATH", help="driver library to use (default: search; $CUENTRY_DRIVER)")
    d.add_argument("--runtime", metavar="PATH", help="libcudart to use (default: search; $CUENTRY_RUNTIME)")
    d.add_argument("--json", action="store_true", help="machine-readable report")
    d.set_defaults(func=cmd_doctor)

    r = sub.add_parser("resolve", help="resolve one entry point and print the two-layer diagnostic")
    r.add_argument("symbol", help="base name, e.g. cuMemAlloc")
    r.add_argument("--version", required=True, help="the fixed ABI version (the number in PFN_cuX_vNNNNN)")
    r.add_argument("--stream", required=True, choices=("legacy", "per-thread", "per_thread", "default"),
                   help="stream mode to pin ('default' needs --allow-default)")
    r.add_argument("--allow-default", action="store_true", help="allow CU_GET_PROC_ADDRESS_DEFAULT")
    r.add_argument("--driver", metavar="PATH", help="driver library to use")
    r.add_argument("--runtime", metavar="PATH", nargs="?", const="",
                   help="resolve through libcudart's cudaGetDriverEntryPointByVersion (optionally its path)")
    r.add_argument("--allow-deprecated", action="store_true",
                   help="with --runtime: fall back to cudaGetDriverEntryPoint (asks at the runtime's version)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_resolve)

    s = sub.add_parser("show", help="every ABI of one symbol: signature, first toolkit, exported name")
    s.add_argument("symbol", help="base name or PFN typedef name")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)

    ls = sub.add_parser("list", help="the catalog, filtered")
    ls.add_argument("--group", help="doc group id or title (CUDA_MEM, 'Graph Management', ...)")
    ls.add_argument("--since", help="only ABIs at or after this version (12050 or 12.5)")
    ls.add_argument("--groups", action="store_true", help="list the groups instead")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)

    c = sub.add_parser("check", help="check a manifest of required/optional entry points against this driver",
                       epilog=MANIFEST_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("manifest", help="TOML manifest")
    c.add_argument("--driver", metavar="PATH", help="driver library to use")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)

    from .lint.rules import RULES

    lt = sub.add_parser(
        "lint", help="find wrong entry-point use in C, C++, CUDA and Python sources",
        epilog="rules:\n" + "\n".join(f"  {r.code}  {r.summary}" for r in RULES)
        + "\n\nsuppress on a line with a comment: cuentry: ignore  or  cuentry: ignore[CE001,CE004]\n"
          "exit codes: 0 no findings, 1 findings, 2 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lt.add_argument("paths", nargs="+", help="files or directories (.c .cc .cpp .cu .cuh .h .hpp .py ...)")
    lt.add_argument("--select", action="append", metavar="CODES", help="only these rules (comma list or prefix)")
    lt.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    fmt = lt.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="findings, pins and minimum driver as JSON")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code scanning")
    fmt.add_argument("--min-driver", action="store_true", help="the lowest driver the scanned code's pins need")
    lt.set_defaults(func=cmd_lint)

    f = sub.add_parser("fake-driver", help="build cuentry's fake driver (for machines without a GPU) and print its path")
    f.add_argument("--variant", choices=("full", "v1", "nogpa", "stub"), default="full",
                   help="full: 12.0+ driver; v1: 11.3-11.8; nogpa: pre-11.3; stub: the toolkit's stub")
    f.add_argument("--dir", help="where to build (default: a cuentry-fake folder in the temp directory)")
    f.set_defaults(func=cmd_fake_driver)

    cb = sub.add_parser("catalog", help="catalog maintenance")
    cbs = cb.add_subparsers(dest="catalog_command", metavar="ACTION")
    b = cbs.add_parser("build", help="regenerate the catalog from CUDA typedef headers (needs pycparser, cc)")
    b.add_argument("--include", required=True, help="CUDA include directory holding cudaTypedefs.h")
    b.add_argument("--toolkit", required=True, help="the toolkit release of --include, e.g. 13.0")
    b.add_argument("--history", action="store_true", help="download the PyPI toolkit runtime wheels (11.7-13.x)")
    b.add_argument("-o", "--output", help="output JSON (default: the package's own catalog)")
    b.set_defaults(func=cmd_catalog_build)
    return p


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (never raises for bad input)."""
    parser = build_parser()
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse's own usage errors and --help/--version
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    color = {"auto": None, "always": True, "never": False}[args.color]
    out = _Out(stdout, stderr, color)
    if not getattr(args, "func", None):
        parser.print_help(stdout)
        return EXIT_USAGE
    try:
        return int(args.func(args, out))
    except ManifestError as exc:
        return _fail(out, exc, EXIT_USAGE)
    except DriverError as exc:
        return _fail(out, exc, EXIT_NODRIVER)
    except CuentryError as exc:
        return _fail(out, exc, EXIT_USAGE)
    except KeyboardInterrupt:
        print("cuentry: interrupted", file=stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


def entry() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except Exception as exc:  # a bug in cuentry: one line, not a traceback, unless asked
        if os.environ.get("CUENTRY_DEBUG"):
            raise
        print(f"cuentry: internal error: {type(exc).__name__}: {exc} (set CUENTRY_DEBUG=1 for the traceback "
              "and please report it)", file=sys.stderr)
        code = 70
    raise SystemExit(code)
