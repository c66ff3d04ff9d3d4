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
from .inputs import STDIN, STDIN_NAME
from .output import Out

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    from ..lint import MAX_FILE_BYTES
    from ..lint.rules import RULES

    lt = sub.add_parser(
        "lint", help="find wrong entry-point use in C, C++, CUDA and Python sources",
        epilog="rules:\n" + "\n".join(f"  {r.code}  {r.summary}" for r in RULES)
        + "\n\nsuppress on a line with a comment: cuentry: ignore  or  cuentry: ignore[CE001,CE004]\n"
          "(a suppression that silences nothing, or names an unknown rule, is reported)\n"
          "configuration: [tool.cuentry.lint] in pyproject.toml, or [lint] in cuentry.toml (docs/lint.md)\n"
          "--fix repairs what is mechanical and verified ([*] at the end of its finding); --diff shows it\n"
          f"files above {MAX_FILE_BYTES >> 20} MiB and non-regular files are reported, not read\n"
          "exit codes: 0 no findings, 1 findings, files that could not be linted or unused suppressions,\n"
          "2 bad input (also a malformed configuration)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lt.add_argument("paths", nargs="+",
                    help="files or directories (.c .cc .cpp .cu .cuh .h .hpp .py ...); - reads standard input")
    lt.add_argument("--stdin-filename", metavar="NAME",
                    help="the name (and by its suffix the language) of the source read from standard input; "
                         "without it, Python when the text has a #!python line or an import statement, else C++")
    lt.add_argument("--config", metavar="TOML",
                    help="the configuration file (default: [tool.cuentry.lint] in the nearest pyproject.toml, "
                         "or [lint] in cuentry.toml, from the first path up)")
    lt.add_argument("--isolated", action="store_true", help="read no configuration file")
    lt.add_argument("--select", action="append", metavar="CODES", help="only these rules (comma list or prefix)")
    lt.add_argument("--extend-select", action="append", metavar="CODES", help="these rules too")
    lt.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    lt.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="skip files and directories matching this glob (added to the configuration's)")
    lt.add_argument("--force-exclude", action="store_true",
                    help="apply the exclusions (and .gitignore) to files named on the command line too")
    lt.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                    help="lint files that .gitignore names too")
    lt.add_argument("--statistics", action="store_true", help="count the findings by rule instead of listing them")
    fx = lt.add_mutually_exclusive_group()
    fx.add_argument("--fix", action="store_true", default=None, help="apply the safe fixes in place")
    fx.add_argument("--no-fix", dest="fix", action="store_false", help="do not fix (overrides fix = true)")
    lt.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    lt.add_argument("--unsafe-fixes", action="store_true", default=None,
                    help="also apply fixes that change behaviour on some driver")
    lt.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                    help="look for included headers (and their macros) here too")
    lt.add_argument("--compile-commands", metavar="JSON",
                    help="parse each file with its flags from a compile_commands.json (and take its -I directories)")
    lt.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                    help="define a macro for the clang engine")
    lt.add_argument("-std", "--std", dest="std", metavar="STD", help="the language standard (c++17, c11, ...)")
    lt.add_argument("--engine", default="auto", metavar="clang",
                    help="the engine of C, C++ and CUDA files: libclang, the one there is (auto and clang name it; "
                         "the tree-sitter engine was retired)")
    lt.add_argument("--toolkit", metavar="X.Y",
                    help="parse against headers cuentry writes from its catalog for this CUDA toolkit "
                         "(default: the real cuda.h when found, else the newest toolkit)")
    lt.add_argument("--floor", type=int, default=None, metavar="VERSION",
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


def _config(args: argparse.Namespace) -> Any:
    """The configuration: --config, else the nearest one above the first path (or the working directory)."""
    from ..lint import config

    if args.isolated:
        return config.Config()
    if args.config:
        return config.load(args.config)
    first = next((p for p in args.paths if p != STDIN), args.stdin_filename or ".")
    return config.load(config.find(first))


def _settings(args: argparse.Namespace, cfg: Any) -> Any:
    """The engine's settings: the command line, else the configuration."""
    from ..lint.engine import Settings, check_engine

    check_engine(args.engine)
    includes = list(args.include) + list(cfg.include)
    commands: dict[str, list[str]] = {}
    compile_commands = args.compile_commands or cfg.compile_commands
    if compile_commands:
        commands, found = _compile_commands(compile_commands)
        includes += found
    if args.stdin_filename:
        includes.append(os.path.dirname(os.path.abspath(args.stdin_filename)))
    toolkit = args.toolkit if args.toolkit is not None else cfg.toolkit
    if toolkit is not None:
        from ..catalog import catalog
        from ..lint.clang.headers import choose_toolkit

        choose_toolkit(catalog(), toolkit)
    floor = args.floor if args.floor is not None else (cfg.floor or 0)
    return Settings(engine=args.engine, include_dirs=includes, defines=[*cfg.defines, *args.defines],
                    std=args.std, toolkit=toolkit, commands=commands,
                    floor=floor or _manifest_floor(args.manifest or cfg.manifest), pedantic=args.pedantic)


def _manifest_floor(path: str | None) -> int:
    """The driver floor a manifest states (0 without one); a bad manifest is bad input (exit 2)."""
    if not path:
        return 0
    from ..manifest import load

    return load(path).min_driver()


def _rules(args: argparse.Namespace, cfg: Any) -> tuple[list[str] | None, list[str]]:
    """(select, ignore) as the engine takes them: the command line's, else the configuration's, plus
    extend-select from both."""
    select = args.select if args.select is not None else cfg.select
    extend = [*cfg.extend_select, *(args.extend_select or [])]
    if extend and select is not None:
        select = [*select, *extend]
    from ..lint.engine import parse_codes

    named = (parse_codes(args.select) or set()) | (parse_codes(extend) or set()) if args.select or extend else set()
    ignore = sorted((parse_codes(cfg.ignore) or set()) - named) if cfg.ignore else []   # what is named wins
    return select, [*ignore, *(args.ignore or [])]


def _files(args: argparse.Namespace, cfg: Any, paths: list[str]) -> list[str]:
    """The paths to hand the engine: directories expanded, then what the exclusions and .gitignore name
    dropped (files named on the command line only with --force-exclude)."""
    from ..lint import config
    from ..lint.engine import iter_files

    files, problems = iter_files(paths)
    given = set(paths) if not args.force_exclude else set()
    patterns = [*cfg.exclude, *cfg.extend_exclude]
    root = cfg.root
    if args.exclude:
        patterns += args.exclude
    keep = [f for f in files if f in given or not (patterns and config.excluded(f, root, patterns))]
    respect = cfg.respect_gitignore if args.respect_gitignore is None else args.respect_gitignore
    if respect:
        ignored = config.gitignored([f for f in keep if f not in given])
        keep = [f for f in keep if f not in ignored]
    return keep + [p.path for p in problems]


def run(args: argparse.Namespace, out: Out) -> int:
    try:
        from ..lint import lint_paths
    except ImportError as exc:
        raise UsageError(f"cuentry lint could not load: {exc}", hint="pip install 'cuentry[lint]'") from None
    from .inputs import stdin_paths

    cfg = _config(args)
    settings = _settings(args, cfg)
    select, ignore = _rules(args, cfg)
    suffix = os.path.splitext(args.stdin_filename or "")[1] or _stdin_suffix
    with stdin_paths(args.paths, suffix=suffix) as paths:
        tmp = next((p for p, a in zip(paths, args.paths, strict=True) if a == STDIN), None)
        try:
            rep = lint_paths(_files(args, cfg, paths), select=select, ignore=ignore,
                             include_dirs=settings.include_dirs, jobs=args.jobs,
                             progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None,
                             settings=settings)
        except UsageError as exc:
            if tmp is None or args.stdin_filename or not tmp.endswith(".cpp") or "lint extra" not in exc.message:
                raise
            raise UsageError(f"{exc.message}; standard input was taken as C or C++ (no #!python line, no import "
                             "statement)", hint="if it is Python, pass --stdin-filename x.py") from None
        _per_file_ignores(rep, cfg)
        fixes = _fixes(args, cfg, rep, settings, select, ignore, tmp, out)
        if tmp is not None:
            _rename(rep, fixes, tmp, args.stdin_filename or STDIN_NAME)
    return _report(args, rep, fixes, out)


def _stdin_suffix(text: str) -> str:
    """The language of standard input given without --stdin-filename: Python when it looks like Python."""
    from ..lint.engine import looks_like_python

    return ".py" if looks_like_python(text) else ".cpp"


def _fixes(args: argparse.Namespace, cfg: Any, rep: Any, settings: Any, select: list[str] | None,
           ignore: list[str], tmp: str | None, out: Out) -> Any:
    """Mark each finding with its fix kind; with --fix/--diff apply (or show) the fixes."""
    from ..lint import apply as fix

    unsafe = args.unsafe_fixes if args.unsafe_fixes is not None else cfg.unsafe_fixes
    want = (args.fix if args.fix is not None else cfg.fix) or args.diff
    plan = fix.plan(rep, settings, select=select, ignore=ignore, unsafe=unsafe or (args.sarif and not want),
                    verify=bool(want) or args.sarif)
    if not want:
        return plan
    _write_fixes(args, plan, tmp, out)
    plan.remove_applied(rep)
    return plan


def _write_fixes(args: argparse.Namespace, plan: Any, tmp: str | None, out: Out) -> None:
    """--diff: print each file's diff; --fix: rewrite each file (standard input's fixed text is printed)."""
    from ..lint import apply as fix

    for path, new in plan.texts.items():
        name = args.stdin_filename or STDIN_NAME if path == tmp else path
        if args.diff:
            out.print(_shown_block(fix.diff(plan.originals[path], new, name)))
        elif path == tmp:
            out.print(new.rstrip("\n"))
        else:
            try:
                fix.write(path, new)
            except OSError as exc:   # a read-only file or directory: its fixes are not applied, the rest are
                out.error(f"{_shown(path)}: fixes not written: {exc.strerror or exc}")
                plan.applied = [f for f in plan.applied if f.path != path]
                plan.remaining.pop(path, None)
    if tmp is not None and tmp not in plan.texts and not args.diff:
        with open(tmp, encoding="utf-8") as fh:    # standard input with nothing to fix: printed as it came
            out.print(fh.read().rstrip("\n"))


def _per_file_ignores(rep: Any, cfg: Any) -> None:
    """Drop the findings that `per-file-ignores` turns off for their file."""
    if not cfg.per_file_ignores:
        return
    from ..lint import config

    keep = []
    for f in rep.findings:
        off = config.ignored_here(f.path, cfg.root, cfg.per_file_ignores)
        if not any(f.code.startswith(c) for c in off):
            keep.append(f)
    rep.findings = keep


def _rename(rep: Any, plan: Any, tmp: str, name: str) -> None:
    """Standard input's findings and problems under the name given for it, not the temporary file's."""
    import dataclasses

    from ..lint.engine import _fingerprint

    def moved(items: list[Any]) -> list[Any]:
        return [dataclasses.replace(x, path=name) if x.path == tmp else x for x in items]

    with open(tmp, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    seen: dict[tuple[str, str], int] = {}
    found = []
    for f in rep.findings:
        if f.path == tmp:
            lt = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
            nth = seen[(f.code, lt)] = seen.get((f.code, lt), -1) + 1
            found.append(dataclasses.replace(f, path=name, fingerprint=_fingerprint(f.code, name, lt, nth)))
        else:
            found.append(f)
    rep.findings = found
    rep.problems, rep.notes, rep.judged = moved(rep.problems), moved(rep.notes), moved(rep.judged)
    rep.unused_suppressions = moved(rep.unused_suppressions)
    plan.withdrawn = moved(plan.withdrawn)
    plan.regions = {(name if k[0] == tmp else k[0], *k[1:]): v for k, v in plan.regions.items()}
    rep.linted = [name if p == tmp else p for p in rep.linted]


def _report(args: argparse.Namespace, rep: Any, plan: Any, out: Out) -> int:
    from ..lint import sarif

    failing = [f for f in rep.findings if f.severity != "note"]
    code = EXIT_FAIL if failing or rep.problems or rep.unused_suppressions else EXIT_OK
    if args.diff or (args.fix and STDIN in args.paths):
        for w in plan.withdrawn:
            out.error(f"{_shown(w.path)}:{w.line}: fix withdrawn: {_shown(w.message)}")
        return code
    if args.sarif:
        out.json(_valid_json(sarif(rep, __version__, command=["cuentry", "lint", *args.paths], fixes=plan.regions)))
    elif args.json:
        out.json(_valid_json(rep.to_dict()))
    else:
        _print_text(rep, args, out)
        if plan.applied or plan.withdrawn:
            _print_fixes(plan, args, out)
    return code


def _print_fixes(plan: Any, args: argparse.Namespace, out: Out) -> None:
    n = len(plan.applied)
    if args.fix:
        out.print(f"fixed {n} finding{'s' if n != 1 else ''}" if n else "no fixes applied")
    for w in plan.withdrawn:
        out.error(f"{_shown(w.path)}:{w.line}: fix withdrawn: {_shown(w.message)}")


def _valid_json(obj: Any) -> Any:
    """`obj` with every string valid Unicode: a file name's bytes that were not UTF-8 as `\\xNN`."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return obj.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return obj
    if isinstance(obj, dict):
        return {_valid_json(k): _valid_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_valid_json(v) for v in obj]
    return obj


def _shown(text: str) -> str:
    """A name or message as one printable line: bytes that were not UTF-8 and control characters (newline,
    ESC, BEL, CR, ...) as escapes, so no file name can forge a line or reach the terminal."""
    text = _valid_json(text)
    if text.isprintable():
        return str(text)
    return "".join(ch if ch.isprintable() else
                   {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else
                                                          f"\\u{ord(ch):04x}") for ch in text)


def _shown_block(text: str) -> str:
    return "\n".join(_shown(line) for line in text.splitlines())


def _print_text(rep: Any, args: argparse.Namespace, out: Out) -> None:
    """The problems and per-file notes on stderr; the findings (or the pins, with --min-driver) and a summary."""
    for p in rep.problems:
        out.error(f"{_shown(p.path)}: not linted: {_shown(p.message)}")
    for j in rep.judged:
        if j.note:
            out.error(f"{_shown(j.path)}: note: {_shown(j.note)}")
    if args.min_driver:
        _print_pins(rep, out)
        return
    if args.statistics:
        _print_statistics(rep, out)
    else:
        for f in rep.findings:
            fixable = " [*]" if f.fix == "safe" else ""
            out.print(f"{_shown(f.path)}:{f.line}:{f.col}: {out.bad(f.code)} {f.severity}: {_shown(f.message)}{fixable}")
    for u in rep.unused_suppressions:
        out.print(f"{_shown(u.path)}:{u.line}: {out.warn('warning')}: {_shown(u.message)}")
    for note in rep.notes:
        out.print(f"{_shown(note.path)}: {out.warn('note')}: {_shown(note.message)}")
    for h in sorted({f.headers for f in rep.findings if f.headers}):
        out.print(f"judged by clang against {_shown(h)}")
    _print_summary(rep, out)


def _print_statistics(rep: Any, out: Out) -> None:
    """--statistics: one line per rule: how many findings, how many a safe fix repairs, the rule's name."""
    from collections import Counter

    count = Counter(f.code for f in rep.findings)
    fixable = Counter(f.code for f in rep.findings if f.fix == "safe")
    names = {f.code: f.rule for f in rep.findings}
    for code, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])):
        out.print(f"{n:>6}  {code}  {'[*] ' if fixable[code] else '    '}{names[code]}")


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
    files = f"{rep.files} file{'s' if rep.files != 1 else ''} ({rep.lines} line{'s' if rep.lines != 1 else ''})"
    partial = len({note.path for note in rep.notes})
    skipped = (f"; {len(rep.problems)} not linted" if rep.problems else "") + (
        f"; {partial} not fully expanded (see the notes)" if partial else "")
    fixable, unsafe = sum(f.fix == "safe" for f in rep.findings), sum(f.fix == "unsafe" for f in rep.findings)
    fixes = (f"{fixable} fixable with --fix" if fixable else "") + (
        f"{'; ' if fixable else ''}{unsafe} more with --fix --unsafe-fixes" if unsafe else "")
    fixes = f" ({fixes})" if fixes else ""
    out.print((f"{n} finding{'s' if n != 1 else ''}{fixes} in {files}" if n else f"no findings in {files}") + skipped)
