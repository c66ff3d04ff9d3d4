"""`cuentry resolve`: one resolution with the full two-layer diagnostic."""

from __future__ import annotations

import argparse
from typing import Any

from ..catalog import parse_version
from ..errors import ResolutionError, UsageError
from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    r = sub.add_parser("resolve", help="resolve one entry point and print the two-layer diagnostic")
    r.add_argument("symbol", help="base name, e.g. cuMemAlloc")
    r.add_argument("--version", required=True, help="the fixed ABI version (the number in PFN_cuX_vNNNNN)")
    r.add_argument("--stream", required=True, choices=("legacy", "per-thread", "per_thread", "default"),
                   help="stream mode to pin ('default' needs --allow-default)")
    r.add_argument("--allow-default", action="store_true", help="allow CU_GET_PROC_ADDRESS_DEFAULT")
    r.add_argument("--driver", metavar="PATH", help="driver library to use")
    r.add_argument("--runtime", metavar="PATH", nargs="?", const="",
                   help="resolve through libcudart's cudaGetDriverEntryPointByVersion (optionally its path)")
    r.add_argument("--allow-deprecated", action="store_true",
                   help="with --runtime: fall back to cudaGetDriverEntryPoint (asks at the runtime's version)")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver, Runtime

    version = _version_arg(args.version)
    src: Any
    if args.runtime is not None:
        src = Runtime.load(args.runtime or None)
    else:
        src = Driver.load(args.driver)
    try:
        if args.runtime is not None:
            r = src.resolve(args.symbol, version, args.stream, allow_default=args.allow_default,
                            allow_deprecated=args.allow_deprecated)
        else:
            r = src.resolve(args.symbol, version, args.stream, allow_default=args.allow_default)
        d = r.diagnostic
        code = EXIT_OK
    except ResolutionError as exc:
        d = exc.diagnostic
        code = EXIT_FAIL if d.access != "-" else EXIT_USAGE
    if args.json:
        out.json(d.to_dict())
        return code
    mark = out.ok("ok") if d.ok else out.bad("FAILED")
    out.print(f"{mark}  {d.summary()}")
    out.print(f"    {d.log_line()}")
    if d.hint:
        out.print(f"    hint: {d.hint}")
    return code


def _version_arg(text: str) -> int:
    v = parse_version(text)
    if not isinstance(text, int) and "." in str(text):
        raise UsageError(f"--version {text}: give the ABI version number (e.g. 3020), not a release",
                         hint="the number in PFN_cuX_vNNNNN; `cuentry show SYMBOL` lists them")
    return v
