"""`cuentry fake-driver`: build cuentry's fake driver and print its path."""

from __future__ import annotations

import argparse

from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    f = sub.add_parser("fake-driver", help="build cuentry's fake driver (for machines without a GPU) and print its path")
    f.add_argument("--variant", choices=("full", "v1", "nogpa", "stub"), default="full",
                   help="full: 12.0+ driver; v1: 11.3-11.8; nogpa: pre-11.3; stub: the toolkit's stub")
    f.add_argument("--dir", help="build cache to use, a directory only you can write (default: your own "
                                 "$XDG_CACHE_HOME/cuentry, ~/.cache/cuentry, created with mode 0700)")
    f.add_argument("--json", action="store_true", help="the path and variant as JSON")
    f.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..errors import BuildCacheError, BuildError
    from ..testing.fakedriver import build, check_env

    check_env()  # a knob the built library would misread is an error now, not a surprise later
    try:
        path = build(args.dir, args.variant)
    except BuildCacheError as exc:
        return out.fail(exc, EXIT_USAGE)
    except BuildError as exc:
        return out.fail(exc, EXIT_FAIL)
    if args.json:
        out.json({"path": str(path), "variant": args.variant})
    else:
        out.print(str(path))
    return EXIT_OK
