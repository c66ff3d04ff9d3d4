"""The cuentry command line: the only code that prints.

One module per command (`cuentry.cli.<module>`), each with `register(sub)`
that adds its parser and `run(args, out) -> int`. Every report takes
`--json` (schemas in docs/cli.md). Exit codes: 0 success; 1 the thing checked
failed (a required entry, a resolution, a lint finding); 2 bad input (usage,
unknown symbol/version, malformed manifest); 3 no usable driver.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..errors import CuentryError, DriverError, ManifestError, UsageError

if TYPE_CHECKING:
    from .output import Out

    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    SubParsers = argparse._SubParsersAction

__all__ = ["COMMANDS", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "build_parser", "cmake_dir", "entry", "installed_version", "main"]


EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NODRIVER = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70

# The command modules, in the order `cuentry --help` lists them.
COMMANDS = ("doctor", "resolve", "show", "listing", "check", "lint", "trace", "emulate", "generate", "fake_driver",
            "catalog")


_PRODUCT_COMMANDS = ("fake-driver", "generate")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cuentry", description="Safe, ABI-pinned access to CUDA Driver API entry points.")
    p.add_argument("--version", action=_Version, help="show the installed cuentry's version and exit")
    _add_color(p, "auto")
    p.add_argument("--cmake-dir", action="store_true",
                   help="print the directory of cuentry's CMake package (cuentryConfig.cmake: cuentry_generate()) and exit")
    _add_verbosity(p, 0)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    for cmd in sub.choices.values():  # also after the command: `cuentry doctor -v`, `cuentry doctor --color never`
        _add_verbosity(cmd, argparse.SUPPRESS)
        _add_color(cmd, argparse.SUPPRESS)
    return p


class _Version(argparse.Action):
    """--version: the installed distribution's version (its metadata, built from cuentry.__version__: one source),
    read only when asked (importlib.metadata is not imported by a plain run)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"cuentry {installed_version()}\n")
        parser.exit()


def installed_version() -> str:
    """The version pip installed (package metadata); `cuentry.__version__` when run from a source tree."""
    from importlib import metadata

    try:
        return metadata.version("cuentry")
    except metadata.PackageNotFoundError:
        return __version__


def _add_color(p: argparse.ArgumentParser, default: object) -> None:
    """--color; SUPPRESS on subcommands so they never reset the global one."""
    p.add_argument("--color", choices=("auto", "always", "never"), default=default, help="colour in human output")


def _command_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of `command` (the top-level one when there is none): whose usage an unknown option shows."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]  # type: ignore[no-any-return]
    return parser


def _add_verbosity(p: argparse.ArgumentParser, default: object) -> None:
    """-v/--verbose (repeatable) and -q/--quiet; SUPPRESS on subcommands so they never reset the global one."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="count", default=default,
                   help="log each failed resolution's key=value diagnostic on stderr (-vv: every resolution)")
    g.add_argument("-q", "--quiet", action="store_const", const=-1, dest="verbose", default=default,
                   help="print nothing but errors (--json/--sarif output is still printed); the exit code says it all")


@contextlib.contextmanager
def _logging(verbosity: int, stream: TextIO) -> Iterator[None]:
    """Send the `cuentry` loggers to `stream` at the level `verbosity` asks, for one CLI run."""
    import logging

    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    logger = logging.getLogger("cuentry")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    handler.setLevel(level)
    old = logger.level
    logger.setLevel(level)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (never raises for bad input)."""
    from .output import Out

    parser = build_parser()
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args, unknown = parser.parse_known_args(argv)
            if unknown:  # the usage of the command it was given to, not the top level's
                _command_parser(parser, getattr(args, "command", None)).error(
                    f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # argparse's own usage errors and --help/--version
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    color = {"auto": None, "always": True, "never": False}[args.color]
    # --quiet silences reports; the commands whose output is the product (a path, a generated file) still print it.
    out = Out(stdout, stderr, color,
              quiet=args.verbose < 0 and args.command not in _PRODUCT_COMMANDS and not args.cmake_dir)
    out.json_errors = bool(getattr(args, "json", False))
    if getattr(args, "driver", None) is not None and not args.driver.strip():
        # An empty --driver "" (an unset shell variable, typically) must not quietly mean "search".
        return out.fail(UsageError("--driver is empty", hint="give the driver library's path, or leave --driver "
                                   "out to search for it"), EXIT_USAGE)
    if args.cmake_dir:
        out.print(cmake_dir())
        return EXIT_OK
    if not getattr(args, "func", None):
        parser.print_help(stdout)
        return EXIT_USAGE
    return _dispatch(args, out, stderr)


def _dispatch(args: argparse.Namespace, out: Out, stderr: TextIO) -> int:
    """Run the command; each error class becomes its exit code and one message."""
    try:
        with _logging(args.verbose, stderr):
            return int(args.func(args, out))
    except ManifestError as exc:
        return out.fail(exc, EXIT_USAGE)
    except DriverError as exc:
        return out.fail(exc, EXIT_NODRIVER)
    except CuentryError as exc:
        return out.fail(exc, EXIT_USAGE)
    except KeyboardInterrupt:
        out.error("cuentry: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


def cmake_dir() -> str:
    """The directory holding cuentryConfig.cmake (package data), for `find_package(cuentry CONFIG)`."""
    from importlib import resources

    return str(resources.files("cuentry").joinpath("cmake"))


def entry() -> None:
    """Console-script entry point."""
    try:
        code = main()
    except Exception as exc:  # a bug in cuentry: one line, not a traceback, unless asked
        if os.environ.get("CUENTRY_DEBUG", "").strip().lower() in ("1", "true", "yes", "on"):
            raise
        sys.stderr.write(f"cuentry: internal error: {type(exc).__name__}: {exc} (set CUENTRY_DEBUG=1 for the "
                         "traceback and please report it)\n")
        code = EXIT_INTERNAL
    raise SystemExit(code)
