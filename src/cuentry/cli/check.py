"""`cuentry check`: a deployment gate for a manifest of entry points."""

from __future__ import annotations

import argparse
from typing import Any

from ..catalog import format_version
from ..errors import DriverError
from . import EXIT_FAIL, EXIT_NODRIVER, EXIT_OK, SubParsers
from .output import Out, diagnostic_json, plain, terminal_width

__all__ = ["MANIFEST_HELP", "register", "run"]

MANIFEST_HELP = """\
manifest format (TOML):

  [table]
  name = "mylib"
  stream = "per_thread"            # or "legacy"

  required = ["PFN_cuMemAlloc_v3020", "cuStreamBeginCapture@10010"]
  optional = [
    { symbol = "cuMulticastCreate", version = 12010 },
    { symbol = "cuCtxCreate", version = 12050, fallback = "cuCtxCreate@3020" },
  ]

entries: "symbol@version", "PFN_cuX_vN[_ptds|_ptsz]", or an inline table with
symbol + version (or pfn), optional name and fallback (one entry or a list,
tried in order). Unknown keys, wrong types and malformed pins are errors at
their line:column. The same file declares a Python table
(cuentry.Table.from_manifest) and feeds `cuentry generate`.

exit codes: 0 every required entry resolves; 1 one does not; 2 bad manifest or
input; 3 no driver found (the minimum driver is still printed).
"""


def register(sub: SubParsers) -> None:
    c = sub.add_parser("check", help="check a manifest of required/optional entry points against this driver",
                       epilog=MANIFEST_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("manifest", help="TOML manifest ('-': standard input)")
    c.add_argument("--driver", metavar="PATH", help="driver library to use")
    c.add_argument("--json", action="store_true", help="every entry's verdict and the minimum driver as JSON (docs/json.md)")
    c.set_defaults(func=run)


def _searched(exc: DriverError) -> list[dict[str, str]]:
    """Each place looked at and why it was not used: [{"path", "reason"}]."""
    paths = list(getattr(exc, "searched", ()))
    reasons = list(getattr(exc, "reasons", ())) + [""] * len(paths)
    return [{"path": p, "reason": r} for p, r in zip(paths, reasons, strict=False)]


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver
    from ..loader import describe
    from ..table import Table
    from .inputs import load_manifest

    m = load_manifest(args.manifest)
    floor = m.min_driver()                                  # the one floor (cuentry.entry.driver_floor)
    try:
        drv = Driver.load(args.driver)
    except DriverError as exc:
        if args.json:
            out.json({"manifest": args.manifest, "ok": False, "min_driver": floor,
                      "min_driver_release": format_version(floor) if floor else None,
                      "driver": {"path": None, "version": None}, "searched": _searched(exc), "error": exc.to_dict()})
        else:
            out.fail(exc, EXIT_NODRIVER)
            out.print(f"manifest needs driver >= {format_version(floor)} ({floor})")
        return EXIT_NODRIVER
    table = Table.from_manifest(m, source=drv)              # the manifest's bound entries: nothing binds again
    rep = table.report()
    for r in rep["entries"]:  # the CLI's one diagnostic shape: suggestions as objects, driver {path, version}
        r["attempts"] = [diagnostic_json(a) for a in r["attempts"]]
    ok = all(r["status"] != "failed" for r in rep["entries"])
    searched = [{"path": a["candidate"], "reason": a["outcome"], "how": a["how"]} for a in describe(drv.attempts)]
    rep.update({"manifest": args.manifest, "ok": ok, "driver": {**drv.info(), "version": drv.driver_version},
                "searched": searched})
    if args.json:
        out.json(rep)
        return EXIT_OK if ok else EXIT_FAIL
    _print_report(out, args.manifest, rep, drv.driver_version or 0)
    return EXIT_OK if ok else EXIT_FAIL


_MARKS = {"resolved": "ok", "fallback": "fallback", "unavailable": "unavailable", "failed": "FAILED"}


def _why(r: dict[str, Any]) -> tuple[str, str | None]:
    """The table's short reason for one entry, and the hint printed under the table (None: none needed).

    An entry that resolved through its fallback needs no advice; one whose every pin failed gets the
    hint of its last pin (the first pin's hint may advise a fallback the entry already has).
    """
    if r["status"] == "resolved":
        return "", None
    tried = r["attempts"]
    first = tried[0] if tried else {}
    if r["status"] == "fallback":
        via = str(r["via"]).removeprefix("entry ")
        return f"via {via} ({first.get('classification')})", None
    if len(tried) > 1:
        chain = ", ".join(f"{a.get('symbol')}@{a.get('version')}: {a.get('classification')}" for a in tried)
        return f"every pin failed ({chain})", tried[-1].get("hint")
    return str(first.get("classification")), first.get("hint")


def _print_report(out: Out, manifest: str, rep: dict[str, Any], version: int) -> None:
    out.print(out.bold(f"{manifest}: table {rep['table']!r}, {rep['stream'].replace('_', '-')} stream, "
                       f"driver {version} ({format_version(version)})"))
    paint = {"resolved": out.ok, "fallback": out.warn, "unavailable": out.warn, "failed": out.bad}
    rows, hints = [], []
    for r in rep["entries"]:
        why, hint = _why(r)
        rows.append([paint[r["status"]](_MARKS[r["status"]]), f"{r['symbol']}@{r['version']}",
                     "required" if r["required"] else "optional", r["exported"] or "-", why])
        if hint:
            hints.append((r["name"], hint))
    header = ["", "entry", "kind", "exported", "why"]
    if sum(max(len(plain(r[i])) for r in [header, *rows]) + 2 for i in range(4)) + 24 > terminal_width():
        header.pop(3)                                   # the exported names are in --json
        rows = [r[:3] + r[4:] for r in rows]
    out.table(rows, header)
    for name, hint in hints:
        out.wrap(hint, indent=4, first=f"  {name}: ")
    floor = rep["min_driver"]
    out.print(f"minimum driver for the required entries: {format_version(floor)} ({floor})")
    out.print(out.ok("PASS") if rep["ok"] else out.bad("FAIL: a required entry does not resolve on this driver"))
