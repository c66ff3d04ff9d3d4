"""`cuentry catalog build`: regenerate the catalog from CUDA typedef headers.

Writes where `-o` says, in the format its extension names (`.json` or
`.py`); the installed package's own catalog only with `--in-place`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import EXIT_OK, EXIT_USAGE, SubParsers
from .output import Out

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    cb = sub.add_parser("catalog", help="catalog maintenance")
    cbs = cb.add_subparsers(dest="catalog_command", metavar="ACTION")
    # `cuentry catalog` alone: this command's help (its actions), not the top-level one.
    cb.set_defaults(func=lambda args, out: _help(cb, out))
    b = cbs.add_parser("build", help="regenerate the catalog from CUDA typedef headers (needs pycparser, cc)")
    b.add_argument("--include", required=True, help="CUDA include directory holding cudaTypedefs.h")
    b.add_argument("--toolkit", required=True, help="the toolkit release of --include, e.g. 13.0")
    b.add_argument("--history", action="store_true", help="download the PyPI toolkit runtime wheels (11.7-13.x)")
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", metavar="FILE",
                       help="write the catalog here: FILE.json (JSON) or FILE.py (the Python data module, "
                            "types beside it as FILE.types.json)")
    where.add_argument("--in-place", action="store_true",
                       help="replace the installed package's own catalog (cuentry/_catalog_data.py, _data/types.json)")
    b.add_argument("--json", action="store_true", help="what was written, as JSON")
    b.set_defaults(func=run)


def _help(parser: argparse.ArgumentParser, out: Out) -> int:
    out.error(parser.format_help().rstrip())
    out.error("cuentry: error: catalog needs an action (build)")
    return EXIT_USAGE


def run(args: argparse.Namespace, out: Out) -> int:
    from .._catalog_build import build_catalog

    rep = build_catalog(Path(args.include), args.toolkit, output=Path(args.output) if args.output else None,
                        in_place=args.in_place, history=args.history,
                        progress=out.error)
    if args.json:
        out.json({"abi_count": rep.entries, "written": [str(p) for p in rep.written], "notes": rep.notes})
        return EXIT_OK
    for note in rep.notes:
        out.error(f"cuentry: note: {note}")
    n = rep.entries
    out.print(f"wrote {n} ABI{'' if n == 1 else 's'} to {', '.join(str(p) for p in rep.written)}")
    return EXIT_OK
