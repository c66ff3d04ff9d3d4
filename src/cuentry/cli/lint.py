"""`cuentry lint`: wrong entry-point use in C, C++, CUDA and Python sources."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from typing import Any

from .. import __version__
from ..catalog import format_version
from ..errors import UsageError
from . import EXIT_FAIL, EXIT_OK, SubParsers
from .output import Out

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    from ..lint import MAX_FILE_BYTES
    from ..lint.rules import RULES

    lt = sub.add_parser(
        "lint", help="find wrong entry-point use in C, C++, CUDA and Python sources",
        epilog="rules:\n" + "\n".join(f"  {r.code}  {r.summary}" for r in RULES)
        + "\n\nsuppress on a line with a comment: cuentry: ignore  or  cuentry: ignore[CE001,CE004]\n"
          f"files above {MAX_FILE_BYTES >> 20} MiB and non-regular files are reported, not read\n"
          "exit codes: 0 no findings, 1 findings or files that could not be linted, 2 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lt.add_argument("paths", nargs="+", help="files or directories (.c .cc .cpp .cu .cuh .h .hpp .py ...)")
    lt.add_argument("--select", action="append", metavar="CODES", help="only these rules (comma list or prefix)")
    lt.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    lt.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="look for included headers (and their macros) here too")
    lt.add_argument("--compile-commands", metavar="JSON",
                    help="take include directories from a compile_commands.json")
    lt.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                    help="lint files in N processes (the output is the same as with -j 1)")
    fmt = lt.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="findings, problems, pins and minimum driver as JSON")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code scanning")
    fmt.add_argument("--min-driver", action="store_true", help="the lowest driver the scanned code's pins need")
    lt.set_defaults(func=run)


def _jobs(value: str) -> int:
    from ..lint.parallel import MAX_JOBS

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"-j takes a number of processes, not {value!r}") from None
    if not 1 <= n <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"-j takes 1 to {MAX_JOBS} processes, not {n}")
    return n


def _compile_commands_includes(path: str) -> list[str]:
    """The -I/-isystem directories of every entry of a compile_commands.json."""
    try:
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="give the compile_commands.json your build wrote") from None
    if not isinstance(entries, list):
        raise UsageError(f"{path} is not a compile_commands.json (a list of entries)",
                         hint="give the compile_commands.json your build wrote")
    out: list[str] = []
    for e in entries:
        if not isinstance(e, dict):
            continue
        argv = e.get("arguments") or shlex.split(str(e.get("command", "")))
        base = str(e.get("directory", "."))
        for i, arg in enumerate(argv):
            a = str(arg)
            d = a[2:] if a.startswith("-I") and len(a) > 2 else (
                str(argv[i + 1]) if a in ("-I", "-isystem") and i + 1 < len(argv) else "")
            if d:
                full = os.path.normpath(os.path.join(base, d))
                if full not in out:
                    out.append(full)
    return out


def run(args: argparse.Namespace, out: Out) -> int:
    try:
        from ..lint import lint_paths, sarif
    except ImportError as exc:
        raise UsageError(f"cuentry lint needs tree-sitter: {exc}",
                         hint="pip install tree-sitter tree-sitter-cpp (they come with cuentry's dependencies)") from None
    includes = list(args.include)
    if args.compile_commands:
        includes += _compile_commands_includes(args.compile_commands)
    rep = lint_paths(args.paths, select=args.select, ignore=args.ignore, include_dirs=includes, jobs=args.jobs,
                     progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None)
    code = EXIT_FAIL if rep.findings or rep.problems else EXIT_OK
    if args.sarif:
        out.json(sarif(rep, __version__, command=["cuentry", "lint", *args.paths]))
        return code
    if args.json:
        out.json(rep.to_dict())
        return code
    for p in rep.problems:
        out.error(f"{p.path}: not linted: {p.message}")
    if args.min_driver:
        md = rep.min_driver
        out.print(f"minimum driver for the pins found: {format_version(md)} ({md})" if md else
                  "no literal version pins found")
        for sym, v in sorted(rep.pins.items(), key=lambda kv: (-kv[1], kv[0])):
            out.print(f"  {v:>6}  {sym}")
        return code
    _print_text(rep, out)
    return code


def _print_text(rep: Any, out: Out) -> None:
    """The findings, the notes of files linted only in part, and the summary line."""
    for f in rep.findings:
        out.print(f"{f.path}:{f.line}:{f.col}: {out.bad(f.code)} {f.message}")
    for note in rep.notes:
        out.print(f"{note.path}: {out.warn('note')}: {note.message}")
    n = len(rep.findings)
    files = f"{rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)"
    partial = len({note.path for note in rep.notes})
    skipped = (f"; {len(rep.problems)} not linted" if rep.problems else "") + (
        f"; {partial} not fully expanded (see the notes)" if partial else "")
    out.print((f"{n} finding{'s' if n != 1 else ''} in {files}" if n else f"no findings in {files}") + skipped)
