"""`cuentry check`: a deployment gate for a manifest of entry points."""

from __future__ import annotations

import argparse

from ..catalog import format_version
from ..errors import DriverError
from . import EXIT_FAIL, EXIT_NODRIVER, EXIT_OK, SubParsers
from .output import Out

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
    c.add_argument("manifest", help="TOML manifest")
    c.add_argument("--driver", metavar="PATH", help="driver library to use")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver
    from ..manifest import load

    m = load(args.manifest)
    table = m.table()
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
