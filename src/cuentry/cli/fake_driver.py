"""`cuentry fake-driver`: build cuentry's fake driver and print its path.

The variant follows `$CUENTRY_FAKE_DRIVER_VERSION` (default 13000), as it does in the pytest fixture: a
12.0+ release gets `full`, 11.3-11.8 `v1` (only the v1 `cuGetProcAddress`), older `nogpa`, unless
`--variant` says. The version is read at every call, so a variant asked to be a release it cannot be
(the full one as 11.8) refuses at run time: its `cuInit` and `cuGetProcAddress` calls fail with
CUDA_ERROR_NOT_SUPPORTED and it says why on stderr.
`--variant` that no driver of the release set in `$CUENTRY_FAKE_DRIVER_VERSION` could be is refused
(exit 2); the library itself refuses such a pair at run time (its entry-point calls fail with
CUDA_ERROR_NOT_SUPPORTED and it says why on stderr), and so does cuentry when it loads it.
"""

from __future__ import annotations

import argparse
import os

from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE, SubParsers
from .output import Out

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    f = sub.add_parser("fake-driver", help="build cuentry's fake driver (for machines without a GPU) and print its path")
    f.add_argument("--variant", choices=("full", "v1", "nogpa", "stub"), default=None,
                   help="full: 12.0+ driver; v1: 11.3-11.8; nogpa: pre-11.3; stub: the toolkit's stub "
                        "(default: the one of $CUENTRY_FAKE_DRIVER_VERSION's release)")
    f.add_argument("--dir", help="build cache to use, a directory only you can write (default: your own "
                                 "$XDG_CACHE_HOME/cuentry, ~/.cache/cuentry, created with mode 0700)")
    f.add_argument("--json", action="store_true", help="the path, variant and version as JSON")
    f.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..errors import BuildCacheError, BuildError
    from ..testing.fakedriver import build, check_env, variant_for
    from ..testing.fakeenv import DEFAULT_VERSION

    check_env()  # a knob the built library would misread is an error now, not a surprise later
    knob = os.environ.get("CUENTRY_FAKE_DRIVER_VERSION", "").strip()
    version = int(knob or DEFAULT_VERSION)
    variant = args.variant or variant_for(version)
    try:
        path = build(args.dir, variant)
    except BuildCacheError as exc:
        return out.fail(exc, EXIT_USAGE)
    except BuildError as exc:
        return out.fail(exc, EXIT_FAIL)
    if args.json:
        out.json({"path": str(path), "variant": variant, "version": version})
    else:
        out.print(str(path))
    return EXIT_OK
