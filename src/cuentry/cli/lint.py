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
                    help="parse each file with its flags from a compile_commands.json (and take its -I directories)")
    lt.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                    help="define a macro for the clang engine")
    lt.add_argument("-std", "--std", dest="std", metavar="STD", help="the language standard (c++17, c11, ...)")
    lt.add_argument("--engine", choices=("auto", "clang", "tree-sitter"), default="auto",
                    help="auto (default): clang when libclang is installed and the file parses, tree-sitter otherwise")
    lt.add_argument("--toolkit", metavar="X.Y",
                    help="parse against headers cuentry writes from its catalog for this CUDA toolkit "
                         "(default: the real cuda.h when found, else the newest toolkit)")
    lt.add_argument("--floor", type=int, default=0, metavar="VERSION",
                    help="the lowest driver the code supports (e.g. 12000): pins at or below it are notes")
    lt.add_argument("--manifest", metavar="TOML",
                    help="take the floor from this cuentry manifest (its required entries' driver floor) "
                         "unless --floor gives one")
    lt.add_argument("--pedantic", action="store_true", help="show notes too (findings that cannot change behaviour)")
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


def _read_commands(path: str) -> list[dict[str, object]]:
    try:
        with open(path, encoding="utf-8") as fh:
            entries = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="give the compile_commands.json your build wrote") from None
    if not isinstance(entries, list):
        raise UsageError(f"{path} is not a compile_commands.json (a list of entries)",
                         hint="give the compile_commands.json your build wrote")
    return [e for e in entries if isinstance(e, dict)]


def _argv(e: dict[str, object]) -> list[str]:
    raw = e.get("arguments")
    if isinstance(raw, list):
        return [str(a) for a in raw]
    try:
        return shlex.split(str(e.get("command", "")))
    except ValueError:
        return []


def _absolute(argv: list[str], base: str) -> list[str]:
    """A compile command's arguments with each -I/-isystem directory (joined or separate) made absolute
    against the entry's `directory`, as the build saw it."""
    out: list[str] = []
    for i, a in enumerate(argv):
        if i and argv[i - 1] in ("-I", "-isystem"):
            out.append(os.path.normpath(os.path.join(base, a)))
        elif a.startswith("-I") and len(a) > 2:
            out.append(f"-I{os.path.normpath(os.path.join(base, a[2:]))}")
        else:
            out.append(a)
    return out


def _compile_commands(path: str) -> tuple[dict[str, list[str]], list[str]]:
    """From a compile_commands.json, read once: each file's arguments (absolute path -> argv, include
    directories made absolute) and every entry's include directories, in order."""
    from ..lint.clang import include_dirs

    flags: dict[str, list[str]] = {}
    includes: list[str] = []
    for e in _read_commands(path):
        base = str(e.get("directory", "."))
        argv = _absolute(_argv(e), base)
        f = e.get("file")
        if isinstance(f, str):
            flags[os.path.normpath(os.path.join(base, f))] = argv
        includes += [d for d in include_dirs(argv) if d not in includes]
    return flags, includes


def _settings(args: argparse.Namespace) -> Any:
    from ..lint.engine import Settings

    includes = list(args.include)
    commands: dict[str, list[str]] = {}
    if args.compile_commands:
        commands, found = _compile_commands(args.compile_commands)
        includes += found
    if args.toolkit is not None:
        from ..catalog import catalog
        from ..lint.clang.headers import choose_toolkit

        choose_toolkit(catalog(), args.toolkit)
    return Settings(engine=args.engine, include_dirs=includes, defines=args.defines, std=args.std,
                    toolkit=args.toolkit, commands=commands, floor=args.floor or _manifest_floor(args.manifest),
                    pedantic=args.pedantic)


def _manifest_floor(path: str | None) -> int:
    """The driver floor a manifest states (0 without one); a bad manifest is bad input (exit 2)."""
    if not path:
        return 0
    from ..manifest import load

    return load(path).min_driver()


def run(args: argparse.Namespace, out: Out) -> int:
    try:
        from ..lint import lint_paths, sarif
    except ImportError as exc:
        raise UsageError(f"cuentry lint needs tree-sitter: {exc}",
                         hint="pip install tree-sitter tree-sitter-cpp (they come with cuentry's dependencies)") from None
    settings = _settings(args)
    rep = lint_paths(args.paths, select=args.select, ignore=args.ignore, include_dirs=settings.include_dirs,
                     jobs=args.jobs, progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None,
                     settings=settings)
    failing = [f for f in rep.findings if f.severity != "note"]
    code = EXIT_FAIL if failing or rep.problems else EXIT_OK
    if args.sarif:
        out.json(sarif(rep, __version__, command=["cuentry", "lint", *args.paths]))
    elif args.json:
        out.json(rep.to_dict())
    else:
        _print_text(rep, args, out)
    return code


def _print_text(rep: Any, args: argparse.Namespace, out: Out) -> None:
    """The problems and per-file notes on stderr; the findings (or the pins, with --min-driver) and a summary."""
    for p in rep.problems:
        out.error(f"{p.path}: not linted: {p.message}")
    for j in rep.judged:
        if j.note:
            out.error(f"{j.path}: note: {j.note}")
    if args.min_driver:
        _print_pins(rep, out)
        return
    for f in rep.findings:
        out.print(f"{f.path}:{f.line}:{f.col}: {out.bad(f.code)} {f.severity}: {f.message}")
    for note in rep.notes:
        out.print(f"{note.path}: {out.warn('note')}: {note.message}")
    for h in sorted({f.headers for f in rep.findings if f.headers}):
        out.print(f"judged by clang against {h}")
    _print_summary(rep, out)


def _print_pins(rep: Any, out: Out) -> None:
    """`--min-driver`: the lowest driver the pins need (the manifest's computation), and the pin each symbol's
    chain needs (its fallbacks, and whether it is optional, after it)."""
    md = rep.min_driver
    out.print(f"minimum driver for the pins found: {format_version(md)} ({md})" if md else
              "no literal version pins found")
    for sym, v in sorted(rep.pins.items(), key=lambda kv: (-kv[1], kv[0])):
        more = sorted(rep.chains.get(sym, ()), reverse=True)
        chain = f" (asked at {', '.join(map(str, more))})" if len(more) > 1 else ""
        out.print(f"  {v:>6}  {sym}{chain}{' (optional: under a driver-version test)' if sym in rep.optional else ''}")


def _print_summary(rep: Any, out: Out) -> None:
    """One line: how many findings in how many files, and what was not (fully) linted."""
    n = len(rep.findings)
    files = f"{rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} lines)"
    partial = len({note.path for note in rep.notes})
    skipped = (f"; {len(rep.problems)} not linted" if rep.problems else "") + (
        f"; {partial} not fully expanded (see the notes)" if partial else "")
    out.print((f"{n} finding{'s' if n != 1 else ''} in {files}" if n else f"no findings in {files}") + skipped)
