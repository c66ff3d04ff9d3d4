"""`cuentry resolve`: one resolution with the full two-layer diagnostic.

What the catalog alone can decide (a version that is not one of the symbol's
ABIs, a suffixed, misspelled or unknown name, a per-thread pin below the first
per-thread ABI) is answered without loading a driver: exit 2, the fix named.
Only a request the catalog accepts is asked of a driver (exit 0 or 1; 3 when
there is none).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import CatalogError, CuentryError, ResolutionError, UsageError
from ..names import DEFAULT, STREAM_CHOICES, parse_stream
from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE, SubParsers
from .output import Out, cli_terms, diagnostic_json

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    r = sub.add_parser("resolve", help="resolve one entry point and print the two-layer diagnostic")
    r.add_argument("symbol", help="base name, e.g. cuMemAlloc")
    r.add_argument("--version", required=True, help="the fixed ABI version (the number in PFN_cuX_vNNNNN)")
    r.add_argument("--stream", required=True, metavar="MODE",
                   help=f"stream mode to pin: {', '.join(STREAM_CHOICES)} (any case; 'default' needs --allow-default)")
    r.add_argument("--allow-default", action="store_true", help="allow CU_GET_PROC_ADDRESS_DEFAULT")
    r.add_argument("--driver", metavar="PATH", help="driver library to use (not with --runtime)")
    r.add_argument("--runtime", metavar="PATH", nargs="?", const="",
                   help="resolve through libcudart's cudaGetDriverEntryPointByVersion (optionally its path)")
    r.add_argument("--allow-deprecated", action="store_true",
                   help="with --runtime: fall back to cudaGetDriverEntryPoint (asks at the runtime's version)")
    r.add_argument("--json", action="store_true", help="the diagnostic as JSON")
    r.set_defaults(func=run)


def _check_flags(args: argparse.Namespace) -> None:
    """Flags that would be ignored are errors: say which and why."""
    if args.runtime is not None and args.driver:
        raise UsageError("--driver has no effect with --runtime: libcudart loads the driver itself",
                         hint="drop --driver, or drop --runtime to resolve through that driver")
    if args.allow_deprecated and args.runtime is None:
        raise UsageError("--allow-deprecated only applies to the runtime path",
                         hint="add --runtime, or drop --allow-deprecated")


def _catalog_refusal(args: argparse.Namespace) -> tuple[Any, int] | None:
    """(diagnostic, exit code) when the catalog alone refuses the request; None when a driver must answer."""
    from ..catalog import catalog
    from ..diagnostics import Classification, Diagnostic
    from ..names import FLAGS, catalog_stream, check_symbol

    sym = check_symbol(args.symbol)
    mode = parse_stream(args.stream)
    if mode == DEFAULT and not args.allow_default:
        raise UsageError("stream mode 'default' was not explicitly allowed",
                         hint="pin --stream legacy or --stream per-thread (libraries must not inherit the "
                              "application's mode); pass --allow-default to ask with CU_GET_PROC_ADDRESS_DEFAULT anyway")
    version = _version_arg(args.version, sym, mode)
    try:
        catalog().bind(sym, version, catalog_stream(mode))
    except CatalogError as exc:
        d = Diagnostic(symbol=sym, version=version, flags=FLAGS[mode], stream=mode, access="-", driver_version=None,
                       library=None, result=None, result_name="-", query=None, query_emulated=False, address=0,
                       classification=Classification(exc.classification), hint=exc.hint,
                       suggestions=tuple(getattr(exc, "suggestions", ())))
        return d, EXIT_USAGE
    return None


def run(args: argparse.Namespace, out: Out) -> int:
    from ..driver import Driver, Runtime

    _check_flags(args)
    refused = _catalog_refusal(args)
    if refused is not None:
        return _show(refused[0], refused[1], args, out)
    version = _version_arg(args.version, args.symbol, parse_stream(args.stream))
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
    finally:
        src.close()
    return _show(d, code, args, out)


def _show(d: Any, code: int, args: argparse.Namespace, out: Out) -> int:
    if args.json:
        out.json(diagnostic_json(d))
        return code
    mark = out.ok("ok") if d.ok else out.bad("FAILED")
    out.wrap(d.summary(), 4, f"{mark}  ")
    if d.access != "-":  # a refusal before asking has no second layer to show
        line = d.log_line()
        if d.hint and line.endswith(f" hint={d.hint!r}"):  # printed once, below, in the CLI's terms
            line = line[: -len(f" hint={d.hint!r}")]
        out.wrap(line, 6, "    ")
    if d.hint:
        out.wrap(cli_terms(d.hint), 10, "    hint: ")
    return code


def _version_arg(text: str, symbol: str, mode: Any) -> int:
    """--version as an ABI version number; a release (`12.5`) or a non-number is refused with the pin to use."""
    from ..catalog import catalog
    from ..names import check_version, parse_version

    raw = text.strip()
    if not raw.isdigit():
        try:
            release = parse_version(raw)
        except CuentryError:
            release = None
        if release is None or "." not in raw:
            raise UsageError(f"--version {text!r} is not an ABI version number",
                             hint=f"give the number in PFN_{symbol}_vNNNNN, e.g. --version 3020; "
                                  f"`cuentry show {symbol}` lists them")
        raise UsageError(f"--version {text}: give the ABI version number, not a release",
                         hint=_release_hint(catalog(), symbol, release, mode))
    return check_version(parse_version(raw))


def _release_hint(cat: Any, symbol: str, release: int, mode: Any) -> str:
    """Which ABI a driver of `release` would give for `symbol` (Catalog.bind decides): the number to pin."""
    from ..names import catalog_stream

    name = f"{release // 1000}.{release % 1000 // 10}"
    try:
        abi = cat.bind(symbol, release, catalog_stream(mode))
    except CatalogError as exc:
        # bind names the ABI the driver would give for a number between ABIs ("pin 11040")
        return f"--version takes ABI versions: {name} read as {release}: {exc.hint}"
    return f"--version {abi.version} (PFN_{symbol}_v{abi.version}: the ABI a {name} driver gives)"
