"""`cuentry lint`: wrong entry-point use in C, C++, CUDA and Python sources."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

from .. import __version__
from ..errors import UsageError
from . import EXIT_FAIL, EXIT_OK, SubParsers
from .inputs import STDIN, STDIN_NAME, check_dir
from .inputs import compile_commands as read_compile_commands
from .output import Out

__all__ = ["register", "run"]



def register(sub: SubParsers) -> None:
    from ..lint import MAX_FILE_BYTES
    from ..lint.rules import RULES
    from ..lint.writers import FORMATS

    lt = sub.add_parser(
        "lint", help="find wrong entry-point use in C, C++, CUDA and Python sources",
        epilog="rules (cuentry lint --explain CODE says what each finds, why, and its fix):\n"
        + "\n".join(f"  {r.code}  {r.summary}" for r in RULES)
        + "\n\nsuppress with a comment: cuentry: ignore  or  cuentry: ignore[CE001,CE004]  on the line,\n"
          "  cuentry: ignore-next-line[CE001]  on the line before it\n"
          "(a suppression that silences nothing, or names an unknown rule, is reported)\n"
          "configuration: [tool.cuentry.lint] in pyproject.toml, or [lint] in cuentry.toml (docs/lint.md)\n"
          "--fix applies the fixes that verified ([*] at the end of their findings); --diff shows them\n"
          f"files above {MAX_FILE_BYTES >> 20} MiB and non-regular files are reported, not read\n"
          "exit codes: 0 no findings, 1 findings, files that could not be linted, unused suppressions or\n"
          "(--diff) a diff printed, 2 bad input (also a malformed configuration); --exit-zero: 0 unless bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    lt.add_argument("paths", nargs="*",
                    help="files or directories (.c .cc .cpp .cu .cuh .h .hpp .py ...); - reads standard input")
    lt.add_argument("--stdin-filename", metavar="NAME",
                    help="the name (and by its suffix the language) of the source read from standard input; "
                         "without it, Python when the text has a #!python line or an import statement, else C++")
    lt.add_argument("--explain", metavar="CODE", help="print what a rule finds, why, examples and its fix; lint nothing")
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
    lt.add_argument("--diff", action="store_true",
                    help="print the fixes as a unified diff; change no file (exit 1 when there is one)")
    lt.add_argument("--unsafe-fixes", action="store_true", default=None,
                    help="also apply fixes that change behaviour on some driver")
    lt.add_argument("--show-fixes", action="store_true",
                    help="say what each fix changes (under its finding; with --fix, each fix applied)")
    lt.add_argument("--exit-zero", action="store_true", help="exit 0 even when something is found (2 stays bad input)")
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
                    help="the lowest driver the code supports, a CUDA release (e.g. 12000): pins at or below it "
                         "are notes")
    lt.add_argument("--manifest", metavar="TOML",
                    help="take the floor from this cuentry manifest (its required entries' driver floor) "
                         "unless --floor gives one")
    lt.add_argument("--pedantic", action="store_true", help="show notes too (findings that cannot change behaviour)")
    lt.add_argument("--timeout", type=_timeout, default=None, metavar="SECONDS",
                    help="the CPU time libclang may spend on one file before the file is reported, not linted "
                         "(default 120; also timeout = in the configuration)")
    lt.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                    help="lint files in N processes (the output is the same as with -j 1)")
    fmt = lt.add_mutually_exclusive_group()
    fmt.add_argument("--output-format", choices=FORMATS, metavar="FORMAT",
                     help=f"how to print the findings: {', '.join(FORMATS)} (default: text)")
    fmt.add_argument("--json", action="store_true", help="findings, problems, pins and minimum driver as JSON "
                                                         "(--output-format json)")
    fmt.add_argument("--sarif", action="store_true", help="SARIF 2.1.0 for code scanning (--output-format sarif)")
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


def _timeout(value: str) -> float:
    from ..lint.config import MAX_TIMEOUT, timeout_problem

    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout takes seconds of CPU time, not {value!r}") from None
    why = timeout_problem(seconds)
    if why:
        raise argparse.ArgumentTypeError(f"{why} (give seconds above 0, at most {MAX_TIMEOUT:g})")
    return seconds


def _floor(args: argparse.Namespace, cfg: Any) -> int:
    """The floor the code states: --floor (a CUDA release; 0 for none), else the configuration's (checked when
    it was read), else a manifest's."""
    from ..lint.config import floor_problem

    if args.floor is not None and args.floor and (got := floor_problem(args.floor)) is not None:
        raise UsageError(f"--floor {got[0]}", hint=got[1])
    floor = args.floor if args.floor is not None else (cfg.floor or 0)
    return floor or _manifest_floor(args.manifest or cfg.manifest)


def _config(args: argparse.Namespace) -> Any:
    """The configuration: --config, else the nearest one above the first path (or the working directory); the
    command line's exclusions and --no-respect-gitignore added to it (the library applies it: `lint_paths`)."""
    import dataclasses

    from ..lint import config

    if args.isolated:
        cfg = config.Config()
    elif args.config:
        cfg = config.load(args.config)
    else:
        first = next((p for p in args.paths if p != STDIN), args.stdin_filename or ".")
        cfg = config.load(config.find(first))
    respect = cfg.respect_gitignore if args.respect_gitignore is None else args.respect_gitignore
    return dataclasses.replace(cfg, extend_exclude=[*cfg.extend_exclude, *args.exclude], respect_gitignore=respect)


def _settings(args: argparse.Namespace, cfg: Any) -> Any:
    """The engine's settings: the command line, else the configuration."""
    from ..lint.engine import Settings, check_engine

    check_engine(args.engine)
    includes = list(args.include) + list(cfg.include)
    commands: dict[str, list[str]] = {}
    compile_commands = args.compile_commands or cfg.compile_commands
    if compile_commands:
        commands, found = read_compile_commands(compile_commands)
        includes += found
    for d in includes:
        check_dir(d, "include directory")
    if args.stdin_filename:
        includes.append(os.path.dirname(os.path.abspath(args.stdin_filename)))
    toolkit = args.toolkit if args.toolkit is not None else cfg.toolkit
    if toolkit is not None:
        from ..catalog import catalog
        from ..lint.clang.headers import choose_toolkit

        choose_toolkit(catalog(), toolkit)
    timeout = args.timeout if args.timeout is not None else cfg.timeout
    return Settings(engine=args.engine, include_dirs=includes, defines=[*cfg.defines, *args.defines],
                    std=args.std, toolkit=toolkit, commands=commands, floor=_floor(args, cfg), pedantic=args.pedantic,
                    **({"timeout": timeout} if timeout is not None else {}))


def _manifest_floor(path: str | None) -> int:
    """The driver floor a manifest states (0 without one); a bad manifest is bad input (exit 2)."""
    if not path:
        return 0
    from ..manifest import load

    return load(path).min_driver()


def run(args: argparse.Namespace, out: Out) -> int:
    if args.explain:
        return _explain(args.explain, out)
    if not args.paths:
        raise UsageError("give files or directories to lint", hint="cuentry lint src/ (- reads standard input)")
    try:
        from ..lint import lint_paths
    except ImportError as exc:
        raise UsageError(f"cuentry lint could not load: {exc}", hint="pip install 'cuentry[lint]'") from None
    from .inputs import stdin_paths

    fmt = _format(args)
    out.json_errors = out.json_errors or fmt == "json"
    cfg = _config(args)
    settings = _settings(args, cfg)
    # the command line wins over the configuration's `fix` and `unsafe-fixes`
    args.fix = bool(args.fix if args.fix is not None else cfg.fix)
    args.unsafe_fixes = bool(args.unsafe_fixes if args.unsafe_fixes is not None else cfg.unsafe_fixes)
    suffix = os.path.splitext(args.stdin_filename or "")[1] or _stdin_suffix
    with stdin_paths(args.paths, suffix=suffix) as paths:
        tmp = next((p for p, a in zip(paths, args.paths, strict=True) if a == STDIN), None)
        with _stdin_taken_as_cpp(args, tmp):
            rep = lint_paths(paths, config=cfg, select=args.select, extend_select=args.extend_select,
                             ignore=args.ignore, include_dirs=settings.include_dirs, jobs=args.jobs,
                             force_exclude=args.force_exclude,
                             progress=lambda i, n: out.progress(i, n, "linting") if n > 20 else None,
                             settings=settings)
        fixes = _fixes(args, rep, settings, tmp, out, _project_root(args, cfg))
        if tmp is not None:
            _rename(rep, fixes, tmp, args.stdin_filename or STDIN_NAME)
    return _report(args, fmt, rep, fixes, out)


@contextlib.contextmanager
def _stdin_taken_as_cpp(args: argparse.Namespace, tmp: str | None) -> Iterator[None]:
    """Standard input taken as C++ where the C family cannot be linted (no lint extra): the refusal says how to
    lint it as Python."""
    try:
        yield
    except UsageError as exc:
        if tmp is None or args.stdin_filename or not tmp.endswith(".cpp") or "lint extra" not in exc.message:
            raise
        raise UsageError(f"{exc.message}; standard input was taken as C or C++ (no #!python line, no import "
                         "statement)", hint="if it is Python, pass --stdin-filename x.py") from None


def _stdin_suffix(text: str) -> str:
    """The language of standard input given without --stdin-filename: Python when it looks like Python."""
    from ..lint.engine import looks_like_python

    return ".py" if looks_like_python(text) else ".cpp"


def _format(args: argparse.Namespace) -> str:
    """The output format: --output-format, or its aliases --json and --sarif; text by default."""
    return str(args.output_format or ("json" if args.json else "sarif" if args.sarif else "text"))


def _explain(code: str, out: Out) -> int:
    """--explain CODE: the rule's page (what it finds, why, examples, its fix), as the documentation site has it."""
    from ..lint.rules import RULE_CODES, by_code, page

    rule = by_code(code)
    if rule is None:
        raise UsageError(f"unknown rule {code!r}", hint=f"rules: {', '.join(RULE_CODES)}")
    out.print(page(rule).rstrip("\n"))
    return EXIT_OK


def _fixes(args: argparse.Namespace, rep: Any, settings: Any, tmp: str | None, out: Out, root: str) -> Any:
    """Verify every fix the findings are offered (each finding's `fix` then says what `--fix` applies); with
    --fix/--diff apply (or show) them."""
    from ..lint import apply

    plan = apply.verified(rep, settings, select=rep.select, ignore=rep.ignore, unsafe=args.unsafe_fixes)
    if args.fix or args.diff:
        _write_fixes(args, plan, tmp, out, root)
        plan.remove_applied(rep)
    return plan


def _project_root(args: argparse.Namespace, cfg: Any) -> str:
    """The project's root (a symbolic link is fixed in its target only inside it): the configuration's
    directory, else the work tree of the first path, else the working directory."""
    if cfg.path:
        return str(cfg.root)
    from ..lint.gitignore import toplevel

    first = os.path.abspath(next((p for p in args.paths if p != STDIN), "."))
    return toplevel(first if os.path.isdir(first) else os.path.dirname(first)) or os.getcwd()


def _write_fixes(args: argparse.Namespace, plan: Any, tmp: str | None, out: Out, root: str) -> None:
    """--diff: print each file's diff; --fix: rewrite each file (standard input's fixed text is printed)."""
    from ..lint import apply as fix

    for path, new in list(plan.texts.items()):
        name = args.stdin_filename or STDIN_NAME if path == tmp else path
        if args.diff:
            out.print(_shown_block(fix.diff(plan.originals[path], new, name)))
        elif path == tmp:
            out.print(new.rstrip("\n"))
        else:
            try:
                why = fix.write(path, new, original=plan.originals[path], root=root)
            except OSError as exc:   # a read-only file or directory: its fixes are not applied, the rest are
                out.error(f"{_shown(path)}: fixes not written: {exc.strerror or exc}")
                why = ""
                _unapplied(plan, path)
            if why:   # the file changed since it was linted, or is a link out of the project: its fixes withdrawn
                line = min((f.line for f in plan.applied if f.path == path), default=1)
                plan.withdrawn.append(fix.Withdrawn(path, line, why=why))
                _unapplied(plan, path)
    if tmp is not None and tmp not in plan.texts and not args.diff:
        with open(tmp, encoding="utf-8") as fh:    # standard input with nothing to fix: printed as it came
            out.print(fh.read().rstrip("\n"))


def _unapplied(plan: Any, path: str) -> None:
    """A file whose fixes were not written keeps its findings."""
    plan.applied = [f for f in plan.applied if f.path != path]
    plan.remaining.pop(path, None)


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
    plan.withdrawn, plan.applied = moved(plan.withdrawn), moved(plan.applied)
    plan.regions = {(name if k[0] == tmp else k[0], *k[1:]): v for k, v in plan.regions.items()}
    rep.linted = [name if p == tmp else p for p in rep.linted]


def _report(args: argparse.Namespace, fmt: str, rep: Any, plan: Any, out: Out) -> int:
    """Print the report in its format (the diff, or standard input's fixed text, instead with --diff or `--fix -`)
    and the fixes withdrawn; the exit code."""
    if args.diff or args.fix or args.show_fixes:
        for w in plan.withdrawn:
            out.error(f"{_shown(w.path)}:{w.line}: fix withdrawn: {_shown(w.message)}")
    if not (args.diff or (args.fix and STDIN in args.paths)):
        _print(args, fmt, rep, plan, out)
    return _exit_code(args, rep, plan)


def _exit_code(args: argparse.Namespace, rep: Any, plan: Any) -> int:
    """1 for findings (not notes), files not linted, unused suppressions, or a diff printed (--diff); 0 otherwise
    and with --exit-zero."""
    if args.exit_zero:
        return EXIT_OK
    failing = any(f.severity != "note" for f in rep.findings)
    return EXIT_FAIL if failing or rep.problems or rep.unused_suppressions or (args.diff and plan.texts) else EXIT_OK


def _print(args: argparse.Namespace, fmt: str, rep: Any, plan: Any, out: Out) -> None:
    """The report in its format, by its writer; text is colour-coded (and silenced by --quiet), the other
    formats are documents printed as they are."""
    from ..lint import writers

    run = writers.Run(rep, plan, __version__, ["cuentry", "lint", *args.paths], fixing=args.fix,
                      unsafe=args.unsafe_fixes, show_fixes=args.show_fixes, statistics=args.statistics,
                      min_driver=args.min_driver)
    got = writers.render(fmt, run, out)
    for line in got.err:
        out.error(line)
    for line in got.out:
        if fmt == "text":
            out.print(line)
        else:
            out.document(line)


def _shown(text: str) -> str:
    from ..lint.writers import shown

    return shown(text)


def _shown_block(text: str) -> str:
    from ..lint.writers import shown_block

    return shown_block(text)
