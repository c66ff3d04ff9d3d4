"""`cuentry emulate --driver VERSION -- CMD`: run a command as if the driver were older."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..names import format_version, parse_version
from . import EXIT_FAIL, SubParsers
from .output import Out, count
from .trace import (
    Sink,
    add_report_options,
    check_failed,
    command,
    not_loaded,
    open_sink,
    safe,
    sink_kept,
    write_report,
)

if TYPE_CHECKING:
    from ..emulation import FloorResult, Refusal, Try
    from ..trace import EmulationResult

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    e = sub.add_parser(
        "emulate", help="run a command as if the driver were an older version (to exercise fallbacks)",
        description="Runs CMD on this machine's driver (or $CUENTRY_DRIVER) as if it were VERSION: "
                    "cuDriverGetVersion reports VERSION, cuGetProcAddress above VERSION answers "
                    "CUDA_ERROR_INVALID_VALUE, symbols newer than VERSION are not found, dlsym of exports newer "
                    "than VERSION gives NULL (no cuGetProcAddress_v2 below 12.0, no cuGetProcAddress below 11.3). "
                    "Everything else runs on the real driver.",
        epilog="exit status: the command's (a signal N gives 128+N), also when VERSION is not older than the real "
               "driver (a one-line note says the emulation had no effect); 1 when the interposer loaded in no "
               "process (nothing was emulated); 2 for a bad version, command or -o path (checked before the "
               "command runs) or a program that cannot be interposed (statically linked, set-user-ID). "
               "With --check, 1 when the command succeeded but the gate failed (see --check). With --floor: 0 "
               "when a floor was found, 1 when the command fails on the real driver too. docs/emulate.md")
    e.add_argument("--driver", metavar="VERSION", help="the driver to emulate: 12.4 or 12040")
    e.add_argument("--floor", action="store_true",
                   help="find the lowest driver CMD runs on (exit status 0): run it on the real driver, then bisect "
                        "the catalog's releases below it under emulation (its output is discarded); report that "
                        "driver and what the emulation refused just below it")
    e.add_argument("--trace", action="store_true", help="also record and report the requests (as cuentry trace)")
    e.add_argument("--check", action="store_true",
                   help="a CI gate on the emulated driver: exit 1 when the command succeeded but a request has a "
                        "finding (outside CUDA runtimes), the trace is incomplete, no driver was seen, or VERSION is "
                        "not older than the real driver (nothing was emulated); each reason is printed")
    add_report_options(e)
    e.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]", help="the command to run")
    e.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..trace import emulate

    if args.floor:
        return _run_floor(args, out)
    if args.driver is None:
        raise UsageError("cuentry emulate needs --driver VERSION (or --floor)",
                         hint="cuentry emulate --driver 12.4 -- CMD, or cuentry emulate --floor -- CMD")
    version = parse_version(args.driver)
    cmd = command(args)
    sink = open_sink(args)
    with sink_kept(sink):
        res = emulate(cmd, version, trace=args.trace or args.json or sink is not None)
    _report(res, version, args, sink, out)
    if res.seen is not None and not res.seen.traced:
        return not_loaded(out, "emulated")
    if args.check and res.exit_code == 0 and res.seen is not None and check_failed(res.seen, out, "emulate",
                                                                                   emulated=True):
        return EXIT_FAIL
    return res.exit_code


def _report(res: EmulationResult, version: int, args: argparse.Namespace, sink: Sink | None, out: Out) -> None:
    """The report (or the notes), and for a failed run what the emulated driver refused."""
    from ..emulation import refusals
    from ..trace import NO_DRIVER_HINT

    refused = refusals(res.seen) if res.seen is not None else ()
    # A program that stopped at a refused request saw no driver because of the emulation: say that, not "no driver".
    drop = NO_DRIVER_HINT if refused else None
    if res.report is not None:
        write_report(replace(res.report, notes=tuple(n for n in res.report.notes if n != drop)), args, sink, out)
    else:
        for note in res.notes:
            if note != drop:
                out.error(f"cuentry emulate: note: {safe(note)}")
    if refused and res.exit_code != 0 and not (args.json and sink is None):  # never into a JSON document
        _say_refused(refused, version, out, "cuentry emulate: ")


def _say_refused(refused: tuple[Refusal, ...], version: int, out: Out, lead: str) -> None:
    """What the emulated driver refused that the real one answers, each with the first driver that has it."""
    out.error(f"{lead}the emulated driver {format_version(version)} ({version}) refused "
              f"{count(len(refused), 'request')} the real one answers:")
    for r in refused:
        out.error(f"  {safe(r.describe())} (asked by {safe(_caller(r.caller))})")


def _caller(path: str) -> str:
    """The library that asked, as a person reads it: Python's foreign-call machinery by name, else the file."""
    from ..trace import python_caller

    how = python_caller(path)
    return f"{how} ({os.path.basename(path)})" if how else path


def _tried(t: Try, out: Out) -> None:
    where = f"{format_version(t.driver)} ({t.driver})" if t.driver else "the real driver"
    if not out.quiet:
        out.error(f"cuentry emulate --floor: {where}: exit {t.exit_code}")


def _run_floor(args: argparse.Namespace, out: Out) -> int:
    from ..emulation import floor

    if args.driver is not None or args.trace or args.check or args.output:
        raise UsageError("--floor takes no --driver, --trace, --check or -o",
                         hint="cuentry emulate --floor [--json] -- CMD")
    cmd = command(args)
    res = floor(cmd, on_try=lambda t: _tried(t, out))
    if args.json:
        out.json(res.to_dict())
    else:
        _print_floor(res, out)
    return 0 if res.floor is not None else EXIT_FAIL


def _print_floor(res: FloorResult, out: Out) -> None:
    cmd = safe(" ".join(res.command))
    if res.floor is None:
        code = res.tries[-1].exit_code
        real = f" {format_version(res.real)} ({res.real})" if res.real else ""
        why = (f"it fails on the real driver{real} too (exit {code})" if code != 0
               else "no driver was seen: it ran without asking a driver for anything")
        out.error(f"cuentry emulate --floor: no floor for {cmd}: {why}")
        return
    out.print(f"floor: {format_version(res.floor)} ({res.floor}), the lowest driver `{cmd}` runs on "
              f"({count(len(res.tries), 'run')}; real driver {format_version(res.real or 0)} ({res.real}))")
    if res.below is None:
        out.print("  it runs on every release the catalog knows below the real driver")
        return
    if not res.refused:
        out.print(f"  on {format_version(res.below)} ({res.below}) it fails (exit "
                  f"{res.report.exit_code if res.report else '?'}) with no request refused: its own version check")
        return
    out.print(f"  on {format_version(res.below)} ({res.below}) the emulated driver refused:")
    for r in res.refused:
        out.print(f"    {safe(r.describe())} (asked by {safe(_caller(r.caller))})")
