"""`cuentry fake-driver`: build cuentry's fake driver and print its path."""

from __future__ import annotations

import argparse

from . import EXIT_FAIL, EXIT_OK, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    f = sub.add_parser("fake-driver", help="build cuentry's fake driver (for machines without a GPU) and print its path")
    f.add_argument("--variant", choices=("full", "v1", "nogpa", "stub"), default="full",
                   help="full: 12.0+ driver; v1: 11.3-11.8; nogpa: pre-11.3; stub: the toolkit's stub")
    f.add_argument("--dir", help="where to build (default: a cuentry-fake folder in the temp directory)")
    f.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..testing.fakedriver import build

    try:
        path = build(args.dir, args.variant)
    except RuntimeError as exc:
        out.error(f"cuentry: error: {exc}")
        return EXIT_FAIL
    out.print(str(path))
    return EXIT_OK
