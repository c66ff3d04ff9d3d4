"""`cuentry show`: every ABI of one symbol."""

from __future__ import annotations

import argparse

from ..catalog import Catalog, catalog, format_version
from . import EXIT_OK, SubParsers
from .output import Out

__all__ = ["register", "run"]


def register(sub: SubParsers) -> None:
    s = sub.add_parser("show", help="every ABI of one symbol: signature, first toolkit, exported name")
    s.add_argument("symbol", help="base name or PFN typedef name")
    s.add_argument("--json", action="store_true", help="the symbol's ABIs and exports as JSON (docs/json.md)")
    s.set_defaults(func=run)


def _lookup_symbol(cat: Catalog, name: str) -> str:
    if name.startswith("PFN_"):
        return cat.parse_pfn(name).symbol
    cat.abis(name)  # raises UnknownSymbolError with suggestions
    return name


def run(args: argparse.Namespace, out: Out) -> int:
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
    out.wrap(f"ABI versions: {', '.join(map(str, cat.versions(sym)))}; first declared in toolkit "
             f"{info['first_toolkit']} of the catalog's history ({cat.history[0]}-{cat.history[-1]})", 4, "  ")
    for a in abis:
        mode = "per-thread" if a.variant else "legacy"
        out.wrap(f"{a.version:>6} ({format_version(a.version)}) {mode:<10} exported {a.exported or '?'}"
                 f"  toolkits {a.toolkits[0]}-{a.toolkits[-1]}  {a.header}"
                 + ("" if "linux" in a.platforms else "  [windows only]"), 9, "  ")
        out.wrap(a.c_typedef(), 13, " " * 9)
    return EXIT_OK
