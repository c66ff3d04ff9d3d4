"""`cuentry trace -- CMD`: every entry-point request a program makes, and what is wrong with it."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

from ..errors import UsageError
from . import EXIT_FAIL, SubParsers
from .output import Out, count

if TYPE_CHECKING:
    from ..audit import Finding
    from ..trace import Request, TraceReport

__all__ = [
    "Sink",
    "add_report_options",
    "check_failed",
    "check_failures",
    "command",
    "not_loaded",
    "open_sink",
    "print_report",
    "register",
    "report_out",
    "run",
    "safe",
    "sink_kept",
    "write_report",
]


_API_SHORT = {"cuGetProcAddress_v2": "v2", "cuGetProcAddress": "v1", "cudaGetDriverEntryPointByVersion": "rt",
              "cudaGetDriverEntryPoint": "rt-old", "dlsym": "dlsym"}
_HEADER = ["api", "symbol", "version", "flags", "result", "query", "export", "count"]


def register(sub: SubParsers) -> None:
    t = sub.add_parser(
        "trace", help="run a command and report every driver entry-point request it makes (and what is wrong)",
        description="Runs CMD with cuentry's interposer preloaded (Linux) and reports every cuGetProcAddress, "
                    "cudaGetDriverEntryPoint[ByVersion] and dlsym request of the process and its children, per "
                    "calling library, with the catalog's findings. The program's output and exit status are its "
                    "own; the report goes to standard error, or to -o FILE.",
        epilog="exit status: the command's (a signal N gives 128+N); 1 when the interposer loaded in no process "
               "(nothing was traced); with --check, 1 when the command succeeded but there are findings outside "
               "CUDA runtimes or the trace is incomplete; 2 for a bad command or -o path (checked before the "
               "command runs) or a program that cannot be traced (statically linked, set-user-ID). "
               "JSON schema: docs/trace.md")
    add_report_options(t)
    t.add_argument("--check", action="store_true",
                   help="exit 1 when there are findings (outside CUDA runtimes) or the trace is incomplete")
    t.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]", help="the command to run")
    t.set_defaults(func=run)


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="the report as JSON (schema: docs/trace.md)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the report to FILE, a regular file or a device (not a link, not a FIFO; checked before "
                        "the command runs; default: standard error)")
    p.add_argument("--all", action="store_true", help="also list the CUDA runtimes' own table requests")


def command(args: argparse.Namespace) -> list[str]:
    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no command given", hint="put the command after --, e.g. cuentry trace -- python app.py")
    return cmd


class Sink:
    """The -o FILE, opened before the command runs (a bad path costs no run); written after it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.created = False
        existed = os.path.lexists(path)
        try:
            # No link followed, no wait on a FIFO, nothing truncated before the report is ready.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise _refusal(path, exc) from None
        self.created = not existed
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):   # a file, or a device such as /dev/null
            os.close(fd)
            raise UsageError(f"cannot write {path}: not a regular file", hint="give -o the path of a regular file")
        self.regular = stat.S_ISREG(mode)
        self.fd = fd

    def open(self) -> TextIO:
        if self.regular:
            os.ftruncate(self.fd, 0)
        return open(self.fd, "w", encoding="utf-8", closefd=True)

    def discard(self) -> None:
        """The command did not run: close, and remove the file if this made it."""
        os.close(self.fd)
        if self.created:
            with contextlib.suppress(OSError):
                os.unlink(self.path)


def _refusal(path: str, exc: OSError) -> UsageError:
    if exc.errno == errno.ELOOP:
        return UsageError(f"cannot write {path}: it is a symbolic link (not followed)",
                          hint="give -o the path of a regular file, not a link")
    if exc.errno == errno.ENXIO:
        return UsageError(f"cannot write {path}: not a regular file (a FIFO)", hint="give -o the path of a regular file")
    return UsageError(f"cannot write {path}: {exc.strerror}", hint="give -o a path in an existing, writable directory")


def open_sink(args: argparse.Namespace) -> Sink | None:
    return Sink(args.output) if args.output else None


@contextlib.contextmanager
def report_out(sink: Sink | None, out: Out) -> Iterator[Out]:
    """Where the report goes: -o FILE, or standard error (the program owns standard output)."""
    if sink is not None:
        with sink.open() as fh:
            yield Out(fh, out.err, False)
    else:
        # -q: no human report (errors and --check's reasons still print; --json is still written)
        yield Out(out.err, out.err, out.color if out.err is sys.stderr and out.err.isatty() else False, quiet=out.quiet)


@contextlib.contextmanager
def sink_kept(sink: Sink | None) -> Iterator[None]:
    """Discard the sink when the command could not be run."""
    try:
        yield
    except BaseException:
        if sink is not None:
            sink.discard()
        raise


def write_report(report: TraceReport, args: argparse.Namespace, sink: Sink | None, out: Out) -> None:
    with report_out(sink, out) as rout:
        if args.json:
            rout.json(report.to_dict())
        else:
            print_report(report, rout, show_runtimes=args.all)


def not_loaded(out: Out, what: str) -> int:
    """The interposer loaded in no process: an error, exit 1."""
    from ..trace import NOT_LOADED, NOT_LOADED_WHY

    out.error(f"cuentry: error: {NOT_LOADED}: {NOT_LOADED_WHY}; nothing was {what}")
    out.error("  hint: run the dynamically linked program itself under cuentry (not a static or set-user-ID "
              "launcher), and keep LD_PRELOAD in its environment")
    return EXIT_FAIL


def run(args: argparse.Namespace, out: Out) -> int:
    from ..trace import run as trace_run

    cmd = command(args)
    sink = open_sink(args)
    with sink_kept(sink):
        report = trace_run(cmd)
    write_report(report, args, sink, out)
    if not report.traced:
        return not_loaded(out, "traced")
    if args.check and report.exit_code == 0 and check_failed(report, out, "trace"):
        return EXIT_FAIL
    return report.exit_code if report.exit_code >= 0 else EXIT_FAIL


def check_failures(report: TraceReport, *, emulated: bool = False) -> list[str]:
    """Why `--check` fails for this run (empty: it passes): findings outside the CUDA runtimes, a trace
    that misses something, no driver seen, or (emulate) an emulation that had no effect."""
    from ..trace import NO_DRIVER_HINT

    why = [f"incomplete: {safe(i)}" for i in report.incomplete]
    n = sum(1 for f in report.findings if not f.runtime)
    if n:
        why.append(f"{count(n, 'finding', 'findings')} outside the CUDA runtimes")
    if NO_DRIVER_HINT in report.notes:
        why.append("no driver seen: the program resolved no driver entry point, so nothing was checked"
                   + (" (as root: if a child switched user, it could not load root's private interposer)"
                      if os.geteuid() == 0 else ""))
    if emulated:
        why += [safe(note) for note in report.notes if "has no effect" in note]
    return why


def check_failed(report: TraceReport, out: Out, what: str, *, emulated: bool = False) -> bool:
    """Print why `--check` fails (one line each, on standard error, shown under -q too); True if it does."""
    why = check_failures(report, emulated=emulated)
    for w in why:
        out.error(f"cuentry {what} --check: failed: {w}")
    return bool(why)


# --- the human report -----------------------------------------------------------------------


def safe(text: str | None) -> str:
    """Text that came from the program, printable: control characters, ESC, newlines and other
    non-printable characters as escapes (bytes that were not UTF-8 already read as `\\xNN`)."""
    if text is None:
        return ""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return "".join(out)


def _base(path: str) -> str:
    """A caller as the report names it: its file name, or for Python's call machinery, Python."""
    from ..trace import python_caller

    base = safe(os.path.basename(path) or path)
    how = python_caller(path)
    return f"Python ({how}: {base})" if how else base


def _short(text: str | None, prefix: str) -> str:
    if text is None:
        return "-"
    return text[len(prefix):] if text.startswith(prefix) else text


def _header(report: TraceReport, out: Out) -> None:
    from ..catalog import format_version

    total = sum(r.count for r in report.requests)
    drv = (f"driver {format_version(report.driver_version)} ({report.driver_version}) at "
           f"{safe(report.driver_path)}" if report.driver_version else "no driver seen")
    emu = f", emulating {format_version(report.emulated)} ({report.emulated})" if report.emulated else ""
    out.print(out.bold(f"cuentry trace: {count(total, 'request', 'requests')} ({len(report.requests)} distinct) "
                       f"from {count(len(report.callers), 'library', 'libraries')} in "
                       f"{count(len(report.processes), 'process', 'processes')}; {drv}{emu}"))


def _notices(report: TraceReport, out: Out) -> None:
    from ..interpose import SPACE_EXHAUSTED
    from ..trace import NOT_LOADED

    for what in report.incomplete:
        if what == SPACE_EXHAUSTED:
            out.print(out.bad(f"  trace incomplete: {what}") + " (some requests were not recorded: give the "
                      "record directory's file system ($XDG_RUNTIME_DIR, /dev/shm) more space)")
        elif what != NOT_LOADED:
            out.print(out.bad(f"  trace incomplete: {safe(what)}"))
    for note in report.notes:
        out.print(out.warn(f"  note: {note}"))
    if report.dropped:
        out.print(out.warn(f"  {report.dropped} requests were not recorded (too many distinct requests in one "
                           "process, or no record space)"))


def _what(symbol: str, symbol_null: bool, version: int | None) -> str:
    name = "(NULL)" if symbol_null else (safe(symbol) if symbol else '""')
    return f"{name}@{version}" if version is not None else name


def _finding_line(f: Finding, out: Out) -> None:
    what = _what(f.symbol, f.symbol_null, f.version) if (f.symbol or f.symbol_null) else "(library)"
    if not f.symbol and not f.symbol_null and f.version is not None:
        what = f'""@{f.version}'
    flags = f" flags {f.flags}" if f.flags is not None else ""
    mark = out.bad(f.code) if f.severity == "error" else out.warn(f.code)
    out.print(f"  {mark} {f.severity} {what}{flags}  [{_base(f.caller)}]")
    out.print(f"        {safe(f.message)}")


def _findings(report: TraceReport, out: Out) -> None:
    user = [f for f in report.findings if not f.runtime]
    rt = any(f.runtime for f in report.findings)
    out.print()
    if user:
        out.print(out.bold(f"findings ({len(user)}):"))
        for f in user:
            _finding_line(f, out)
    else:
        out.print(out.ok("no findings") + (" outside CUDA runtimes" if rt else ""))


def _fallbacks(report: TraceReport, out: Out) -> None:
    taken = [r for r in report.requests if r.fallback is not None and not r.runtime]
    if not taken:
        return
    out.print(f"fallbacks taken (not findings: the request failed and the fallback at a lower ABI succeeded; "
              f"{len(taken)}):")
    for r in taken:
        out.print(f"  {_what(r.symbol, r.symbol_null, r.version)} -> fallback {r.fallback}  [{_base(r.caller)}]")


def _result(r: Request) -> str:
    text = _short(r.result_name, "CUDA_ERROR_").replace("CUDA_", "")
    return f"{text} (fallback {r.fallback})" if r.fallback is not None else text


def _row(r: Request) -> list[str]:
    symbol = _what(r.symbol, r.symbol_null, None) + (" (truncated)" if r.truncated else "")
    export = "NULL" if r.export is None else safe(r.export)
    if r.pfn_null:
        export = "(NULL pfn)"
    return [_API_SHORT.get(r.api, safe(r.api)), symbol, "-" if r.version is None else str(r.version),
            "-" if r.flags is None else str(r.flags), _result(r), _short(r.query_name, "CU_GET_PROC_ADDRESS_"),
            export, str(r.count)]


def _caller_table(report: TraceReport, caller: str, out: Out, show_runtimes: bool) -> None:
    reqs = report.by_caller(caller)
    n = sum(r.count for r in reqs)
    nf = sum(1 for f in report.findings if f.caller == caller)
    is_rt = caller in report.runtimes
    out.print()
    label = " (CUDA runtime: its own table)" if is_rt else ""
    out.print(out.bold(f"{_base(caller)}{label}: {count(n, 'request', 'requests')}, {len(reqs)} distinct, "
                       f"{count(nf, 'finding', 'findings')}") + f"  {safe(caller)}")
    if is_rt and not show_runtimes:
        out.print("  (table not shown; --all shows it)")
        return
    out.table([_row(r) for r in reqs], _HEADER, indent=2)


def _runtime_summary(findings: Sequence[Finding], out: Out) -> None:
    rt = [f for f in findings if f.runtime]
    if rt:
        out.print()
        out.print(f"{count(len(rt), 'finding', 'findings')} in CUDA runtimes' own tables (NVIDIA's, "
                  "not yours): see --json")


def print_report(report: object, out: Out, *, show_runtimes: bool = False) -> None:
    """The human report: findings first (each with its fix), then a table per calling library.

    Every string that came from the program (symbols, paths, export names) is escaped
    (`safe`): the report cannot recolour the terminal or break its table.
    """
    from ..trace import TraceReport

    assert isinstance(report, TraceReport)
    _header(report, out)
    _notices(report, out)
    _findings(report, out)
    _fallbacks(report, out)
    for caller in report.callers:
        _caller_table(report, caller, out, show_runtimes)
    _runtime_summary(report.findings, out)
