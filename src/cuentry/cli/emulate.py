"""`cuentry emulate --driver VERSION -- CMD`: run a command as if the driver were older."""

from __future__ import annotations

import argparse

from ..names import parse_version
from . import EXIT_FAIL, SubParsers
from .output import Out
from .trace import add_report_options, check_failed, command, not_loaded, open_sink, safe, sink_kept, write_report

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
               "With --check, 1 when the command succeeded but the gate failed (see --check). docs/emulate.md")
    e.add_argument("--driver", required=True, metavar="VERSION", help="the driver to emulate: 12.4 or 12040")
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

    version = parse_version(args.driver)
    cmd = command(args)
    sink = open_sink(args)
    with sink_kept(sink):
        res = emulate(cmd, version, trace=args.trace or args.json or sink is not None)
    if res.report is not None:
        write_report(res.report, args, sink, out)
    else:
        for note in res.notes:
            out.error(f"cuentry emulate: note: {safe(note)}")
    if res.seen is not None and not res.seen.traced:
        return not_loaded(out, "emulated")
    if args.check and res.exit_code == 0 and res.seen is not None and check_failed(res.seen, out, "emulate",
                                                                                   emulated=True):
        return EXIT_FAIL
    return res.exit_code
