"""`cuentry list`: the catalog, filtered."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..catalog import Abi, Catalog, catalog, parse_version
from ..errors import UsageError
from . import EXIT_OK, SubParsers
from .output import Out, count, terminal_width

__all__ = ["UNGROUPED", "group_rows", "register", "run"]


def register(sub: SubParsers) -> None:
    ls = sub.add_parser("list", help="the catalog, filtered")
    ls.add_argument("--group", help="doc group id or title (CUDA_MEM, 'Graph Management', ...)")
    ls.add_argument("--since", help="only ABIs at or after this version (12050 or 12.5)")
    ls.add_argument("--groups", action="store_true", help="list the groups instead")
    ls.add_argument("--json", action="store_true", help="every ABI listed, with its fields, as JSON (docs/json.md)")
    ls.set_defaults(func=run)


UNGROUPED = "(in no doc group)"


def group_rows(cat: Catalog) -> list[dict[str, Any]]:
    """One row per doc group with its symbol count, and a last row (id null) for symbols in none:
    the counts add up to the catalog's symbols."""
    counts = Counter(cat.group(s) for s in cat.symbols())
    rows: list[dict[str, Any]] = [{"id": g.id, "title": g.title, "symbols": counts.get(g, 0)}
                                  for g in cat.groups.values()]
    listed = sum(r["symbols"] for r in rows)
    if listed < len(cat.symbols()):
        rows.append({"id": None, "title": UNGROUPED, "symbols": len(cat.symbols()) - listed})
    return rows


def _print_groups(args: argparse.Namespace, out: Out, cat: Catalog) -> int:
    rows = group_rows(cat)
    if args.json:
        out.json(rows)
    else:
        out.table([[r["id"] or "-", r["title"], str(r["symbols"])] for r in rows], ["group", "title", "symbols"])
    return EXIT_OK


def _abi_row(a: Abi) -> dict[str, Any]:
    return {"symbol": a.symbol, "version": a.version, "variant": a.variant, "exported": a.exported,
            "group": a.group, "first_toolkit": a.toolkits[0] if a.toolkits else None, "declaration": a.c_typedef()}


def run(args: argparse.Namespace, out: Out) -> int:
    cat = catalog()
    if args.groups:
        return _print_groups(args, out, cat)
    for flag, value in (("--since", args.since), ("--group", args.group)):
        if value is not None and not isinstance(value, str):  # argparse turns "--since=--" into []
            raise UsageError(f"{flag} needs a value", hint=f"write {flag}=VALUE")
    since = parse_version(args.since) if args.since is not None else None
    abis: Sequence[Abi] = cat.select(group=args.group, since=since)
    if args.json:
        out.json([_abi_row(a) for a in abis])
        return EXIT_OK
    if not abis:  # no empty table: say what matched nothing, and what the catalog has
        out.print(_nothing(args, since, cat))
        return EXIT_OK
    header = ["symbol", "version", "stream", "exported", "group", "since toolkit"]
    table = [[a.symbol, str(a.version), a.variant or "legacy", a.exported or "?", a.group or "-",
             a.toolkits[0] if a.toolkits else "?"] for a in abis]
    dropped = _fit(header, table, droppable=("exported", "group"))
    out.table(table, header)
    out.print(count(len(abis), "ABI") + (f" ({' and '.join(dropped)} left out to fit the terminal: --json has them)"
                                     if dropped else ""))
    return EXIT_OK


def _nothing(args: argparse.Namespace, since: int | None, cat: Catalog) -> str:
    """What an empty selection says instead of an empty table."""
    newest = max((a.version for a in cat.select()), default=0)
    if since is not None and since > newest:
        return f"no ABI matches --since {args.since} (the catalog's newest ABI is {newest})"
    return "no ABI matches these filters"


def _fit(header: list[str], rows: list[list[str]], droppable: Sequence[str]) -> list[str]:
    """Drop `droppable` columns (in order) until the table fits the terminal; return those dropped."""
    dropped: list[str] = []
    for name in droppable:
        widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header))]
        if sum(widths) + 2 * (len(widths) - 1) <= terminal_width():
            break
        i = header.index(name)
        del header[i]
        for r in rows:
            del r[i]
        dropped.append(name)
    return dropped
