"""`cuentry check`: a deployment gate for a manifest of entry points."""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Callable
from typing import Any, TypedDict

from ..catalog import format_version
from ..errors import CuentryError, DriverError, ManifestError, UsageError
from . import EXIT_FAIL, EXIT_NODRIVER, EXIT_OK, SubParsers
from .output import Out

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


def register(sub: SubParsers) -> None:
    c = sub.add_parser("check", help="check a manifest of required/optional entry points against this driver",
                       epilog=MANIFEST_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("manifest", help="TOML manifest")
    c.add_argument("--driver", metavar="PATH", help="driver library to use")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run)


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


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver
    from ..table import Entry, Table, optional, required

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
            out.fail(exc, EXIT_NODRIVER)
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
