"""`cuentry lint`: wrong entry-point use in C, C++, CUDA and Python sources."""

from __future__ import annotations

import argparse

from .. import __version__
from ..catalog import format_version
from ..errors import UsageError
from . import EXIT_FAIL, EXIT_OK, SubParsers
from .output import Out


def register(sub: SubParsers) -> None:
    from ..lint.rules import RULES

    lt = sub.add_parser(
        "lint", help="find wrong entry-point use in C, C++, CUDA and Python sources",
        epilog="rules:\n" + "\n".join(f"  {r.code}  {r.summary}" for r in RULES)
        + "\n\nsuppress on a line with a comment: cuentry: ignore  or  cuentry: ignore[CE001,CE004]\n"
          "exit codes: 0 no findings, 1 findings, 2 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lt.add_argument("paths", nargs="+", help="files or directories (.c .cc .cpp .cu .cuh .h .hpp .py ...)")
    lt.add_argument("--select", action="append", metavar="CODES", help="only these rules (comma list or prefix)")
    lt.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    fmt = lt.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="findings, pins and minimum driver as JSON")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code scanning")
    fmt.add_argument("--min-driver", action="store_true", help="the lowest driver the scanned code's pins need")
    lt.set_defaults(func=run)


def run(args: argparse.Namespace, out: Out) -> int:
    try:
        from ..lint import lint_paths, sarif
    except ImportError as exc:
        raise UsageError(f"cuentry lint needs tree-sitter: {exc}",
                         hint="pip install tree-sitter tree-sitter-cpp (they come with cuentry's dependencies)") from None
    rep = lint_paths(args.paths, select=args.select, ignore=args.ignore,
                     progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None)
    code = EXIT_FAIL if rep.findings else EXIT_OK
    if args.sarif:
        out.json(sarif(rep, __version__))
        return code
    if args.json:
        out.json(rep.to_dict())
        return code
    if args.min_driver:
        md = rep.min_driver
        out.print(f"minimum driver for the pins found: {format_version(md)} ({md})" if md else
                  "no literal version pins found")
        for sym, v in sorted(rep.pins.items(), key=lambda kv: (-kv[1], kv[0])):
            out.print(f"  {v:>6}  {sym}")
        return code
    for f in rep.findings:
        out.print(f"{f.path}:{f.line}:{f.col}: {out.bad(f.code)} {f.message}")
    for p in rep.unparsable:
        out.error(f"cuentry: warning: {p}: not valid Python, skipped")
    n = len(rep.findings)
    summary = f"{n} finding{'s' if n != 1 else ''} in {rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)"
    out.print(summary if n else f"no findings in {rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)")
    return code
