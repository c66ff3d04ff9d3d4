"""`cuentry catalog build`: regenerate the catalog from CUDA typedef headers."""

from __future__ import annotations

import argparse

from . import SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    cb = sub.add_parser("catalog", help="catalog maintenance")
    cbs = cb.add_subparsers(dest="catalog_command", metavar="ACTION")
    b = cbs.add_parser("build", help="regenerate the catalog from CUDA typedef headers (needs pycparser, cc)")
    b.add_argument("--include", required=True, help="CUDA include directory holding cudaTypedefs.h")
    b.add_argument("--toolkit", required=True, help="the toolkit release of --include, e.g. 13.0")
    b.add_argument("--history", action="store_true", help="download the PyPI toolkit runtime wheels (11.7-13.x)")
    b.add_argument("-o", "--output", help="output JSON (default: the package's own catalog)")
    b.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from .._catalog_build import main as build_main

    argv = ["--include", args.include, "--toolkit", args.toolkit]
    if args.history:
        argv.append("--history")
    if args.output:
        argv += ["-o", args.output]
    return build_main(argv)
