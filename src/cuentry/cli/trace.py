"""`cuentry trace -- CMD`: every entry-point request a program makes, and what is wrong with it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from ..errors import UsageError
from . import EXIT_FAIL, SubParsers
from .output import Out

_API_SHORT = {"cuGetProcAddress_v2": "v2", "cuGetProcAddress": "v1", "cudaGetDriverEntryPointByVersion": "rt",
              "cudaGetDriverEntryPoint": "rt-old", "dlsym": "dlsym"}


def register(sub: SubParsers) -> None:
    t = sub.add_parser(
        "trace", help="run a command and report every driver entry-point request it makes (and what is wrong)",
        description="Runs CMD with cuentry's interposer preloaded (Linux) and reports every cuGetProcAddress, "
                    "cudaGetDriverEntryPoint[ByVersion] and dlsym request of the process and its children, per "
                    "calling library, with the catalog's findings. The program's output and exit status are its "
                    "own; the report goes to standard error, or to -o FILE.",
        epilog="exit status: the command's (a signal N gives 128+N); with --check, 1 when the command "
               "succeeded but there are findings outside CUDA runtimes. JSON schema: docs/trace.md")
    add_report_options(t)
    t.add_argument("--check", action="store_true", help="exit 1 when there are findings (outside CUDA runtimes)")
    t.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]", help="the command to run")
    t.set_defaults(func=run)


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="the report as JSON (schema: docs/trace.md)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (default: standard error)")
    p.add_argument("--all", action="store_true", help="also list the CUDA runtimes' own table requests")


def command(args: argparse.Namespace) -> list[str]:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no command given", hint="put the command after --, e.g. cuentry trace -- python app.py")
    return cmd


@contextlib.contextmanager
def report_out(args: argparse.Namespace, out: Out) -> Iterator[Out]:
    """Where the report goes: -o FILE, or standard error (the program owns standard output)."""
    if args.output:
        try:
            fh: TextIO = open(args.output, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror}", hint="give a writable path to -o") from None
        with fh:
            yield Out(fh, out.err, False)
    else:
        yield Out(out.err, out.err, out.color if out.err is sys.stderr and out.err.isatty() else False)


def run(args: argparse.Namespace, out: Out) -> int:
    from ..trace import run as trace_run

    cmd = command(args)
    report = trace_run(cmd)
    with report_out(args, out) as rout:
        if args.json:
            rout.json(report.to_dict())
        else:
            print_report(report, rout, show_runtimes=args.all)
    if args.check and report.exit_code == 0 and any(not f.runtime for f in report.findings):
        return EXIT_FAIL
    return report.exit_code if report.exit_code >= 0 else EXIT_FAIL


def _short(text: str | None, prefix: str) -> str:
    if text is None:
        return "-"
    return text[len(prefix):] if text.startswith(prefix) else text


def print_report(report: object, out: Out, *, show_runtimes: bool = False) -> None:
    """The human report: findings first (each with its fix), then a table per calling library."""
    from ..catalog import format_version
    from ..trace import TraceReport

    assert isinstance(report, TraceReport)
    total = sum(r.count for r in report.requests)
    drv = (f"driver {format_version(report.driver_version)} ({report.driver_version}) at {report.driver_path}"
           if report.driver_version else "no driver seen")
    emu = f", emulating {format_version(report.emulated)} ({report.emulated})" if report.emulated else ""
    libs, procs = len(report.callers), len(report.processes)
    out.print(out.bold(f"cuentry trace: {total} request{'s' if total != 1 else ''} ({len(report.requests)} distinct) "
                       f"from {libs} librar{'ies' if libs != 1 else 'y'} in {procs} process{'es' if procs != 1 else ''}; "
                       f"{drv}{emu}"))
    if report.emulated and report.driver_version and report.driver_version < report.emulated:
        out.print(out.warn(f"  note: the real driver ({report.driver_version}) is older than {report.emulated}: "
                           "a driver cannot be made newer; programs saw the real one"))
    if report.dropped:
        out.print(out.warn(f"  {report.dropped} requests were not recorded (too many distinct requests in one process)"))
    user = [f for f in report.findings if not f.runtime]
    rt = [f for f in report.findings if f.runtime]
    out.print()
    if user:
        out.print(out.bold(f"findings ({len(user)}):"))
        for f in user:
            what = f"{f.symbol}@{f.version}" if f.version is not None else (f.symbol or "(library)")
            flags = f" flags {f.flags}" if f.flags is not None else ""
            out.print(f"  {out.bad(f.code)} {what}{flags}  [{os.path.basename(f.caller) or f.caller}]")
            out.print(f"        {f.message}")
    else:
        out.print(out.ok("no findings") + (" outside CUDA runtimes" if rt else ""))
    for caller in report.callers:
        reqs = report.by_caller(caller)
        n = sum(r.count for r in reqs)
        nf = sum(1 for f in report.findings if f.caller == caller)
        is_rt = caller in report.runtimes
        out.print()
        label = " (CUDA runtime: its own table)" if is_rt else ""
        out.print(out.bold(f"{os.path.basename(caller) or caller}{label}: {n} requests, {len(reqs)} distinct, "
                           f"{nf} finding{'s' if nf != 1 else ''}") + f"  {caller}")
        if is_rt and not show_runtimes:
            out.print("  (table not shown; --all shows it)")
            continue
        rows = [[_API_SHORT.get(r.api, r.api), r.symbol or '""', "-" if r.version is None else str(r.version),
                 "-" if r.flags is None else str(r.flags), _short(r.result, "CUDA_ERROR_").replace("CUDA_", ""),
                 _short(r.query, "CU_GET_PROC_ADDRESS_"), r.export or "NULL", str(r.count)] for r in reqs]
        out.table(rows, ["api", "symbol", "version", "flags", "result", "query", "export", "count"], indent=2)
    if rt:
        out.print()
        out.print(f"{len(rt)} finding{'s' if len(rt) != 1 else ''} in CUDA runtimes' own tables (NVIDIA's, "
                  "not yours): see --json")
