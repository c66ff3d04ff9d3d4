"""Where a command's input comes from: a file, or standard input for `-` (`cuentry check -`, `cuentry lint -`).

Standard input gets the same limits as a file, from the same reader
([read_limited][cuentry.manifest.read_limited]): UTF-8 only (a BOM is dropped), at most `limit` bytes (a
manifest's for `check -`, a linted file's for `lint -`), read once. A terminal on stdin is refused (the
command would wait for typing that nobody meant).

Every other path a user or a configuration names is opened only when it is what it must be: a file read
([read_regular][cuentry.cli.inputs.read_regular], `compile_commands`) only when it is a regular file within
its size limit, an include directory (`check_dir`) only when it is a directory; a device, a FIFO, a socket or
a directory in place of a file is refused in one line (`UsageError`, exit 2), before anything reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

from ..errors import ManifestError, UsageError

if TYPE_CHECKING:
    from ..manifest import Manifest

__all__ = ["MAX_COMPILE_COMMANDS", "STDIN", "STDIN_NAME", "check_dir", "compile_commands", "kind_of", "load_manifest",
           "read_input", "read_regular", "stdin_paths"]

STDIN = "-"
STDIN_NAME = "<stdin>"


def _stdin(stream: BinaryIO | None, what: str) -> BinaryIO:
    """The stream to read for `-`: refused when there is none, or when it is a terminal."""
    src = stream if stream is not None else getattr(sys.stdin, "buffer", None)
    if src is None:
        raise UsageError(f"{what} from standard input ('-'), but there is no standard input",
                         hint="pipe it in: ... | cuentry COMMAND -, or give a file")
    isatty = getattr(src, "isatty", None)
    if callable(isatty) and isatty():
        raise UsageError(f"{what} from standard input ('-'), but standard input is a terminal",
                         hint="pipe or redirect it in (cuentry check - < acme.toml), or give the file's path")
    return src


def read_input(path: str, *, what: str = "input", limit: int | None = None,
               stdin: BinaryIO | None = None) -> tuple[str, str]:
    """(text, name) of `path`, or of standard input when `path` is `-` (name `<stdin>`).

    Both are read by [read_limited][cuentry.manifest.read_limited], with the same limit and messages.

    Args:
        path: a file's path, or `-`.
        what: what the input is, for the error messages ("manifest").
        limit: the most bytes accepted (default: a manifest's,
            [MAX_BYTES][cuentry.manifest.MAX_BYTES]).
        stdin: the stream to read for `-` (default: the process's standard input).

    Returns:
        The text (UTF-8, BOM dropped) and the name to report it under.

    Raises:
        UsageError: stdin is a terminal or missing, the input is too big, or not UTF-8.
        ManifestError: a file that cannot be read (not a regular file, too big, not UTF-8).
    """
    from ..manifest import MAX_BYTES, read_limited, read_text

    limit = MAX_BYTES if limit is None else limit
    if path != STDIN:  # the manifest reader's checks: a regular file, the limit, UTF-8
        return read_text(path, what=what, limit=limit), path
    try:
        return read_limited(_stdin(stdin, what), STDIN_NAME, what=what, limit=limit), STDIN_NAME
    except ManifestError as exc:  # standard input is an argument given to the command
        raise UsageError(exc.message, hint=exc.hint) from None


def load_manifest(path: str, *, stdin: BinaryIO | None = None) -> Manifest:
    """`cuentry.manifest.load(path)`, or the manifest text on standard input for `-`.

    Raises:
        ManifestError: unreadable or malformed (at its line and column, under the name `<stdin>`).
    """
    from ..manifest import load, loads, read_limited

    if path != STDIN:
        return load(path)
    try:
        src = _stdin(stdin, "manifest")
    except UsageError as exc:
        raise ManifestError(STDIN_NAME, exc.message, hint=exc.hint) from None
    return loads(read_limited(src, STDIN_NAME), STDIN_NAME)


@contextlib.contextmanager
def stdin_paths(paths: Sequence[str], *, suffix: str | Callable[[str], str] = ".cpp",
                stdin: BinaryIO | None = None) -> Iterator[list[str]]:
    """`paths` with a `-` replaced by a private temporary file holding standard input (for `cuentry lint -`).

    The file is named `stdin<suffix>` (the suffix picks the language; a callable is given the text and says it) in a
    0700 directory removed afterwards.
    """
    if STDIN not in paths:
        yield list(paths)
        return
    if paths.count(STDIN) > 1:
        raise UsageError("'-' (standard input) is given more than once", hint="give '-' once")
    from ..lint.engine import MAX_FILE_BYTES  # the limit of a linted file, its one owner

    text, _ = read_input(STDIN, what="source", limit=MAX_FILE_BYTES, stdin=stdin)
    with tempfile.TemporaryDirectory(prefix="cuentry-stdin-") as tmp:
        target = os.path.join(tmp, f"stdin{suffix(text) if callable(suffix) else suffix}")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        yield [target if p == STDIN else p for p in paths]


MAX_COMPILE_COMMANDS = 128 << 20
"""A compile_commands.json larger than this (128 MiB) is refused."""


def kind_of(mode: int) -> str:
    """What a file of this `st_mode` is, in words ("a FIFO", "a device", "a directory", ...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def read_regular(path: str, *, what: str, limit: int, hint: str = "") -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes (opened without blocking: a
    FIFO is refused, never waited on; a device is refused, never read).

    Raises:
        UsageError: it cannot be opened, is no regular file or is larger than `limit` (one line naming `what`).
    """
    fix = hint or f"give the path of the {what} (a regular file)"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read the {what} {path}: {why}", hint=fix) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"the {what} {path} is {kind_of(st.st_mode)}, not a regular file", hint=fix)
        chunks, left = [], limit + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    except OSError as exc:
        raise UsageError(f"cannot read the {what} {path}: {exc.strerror or exc}", hint=fix) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise UsageError(f"the {what} {path} is larger than {limit >> 20} MiB", hint=fix)
    return data


def check_dir(path: str, what: str) -> None:
    """Refuse (`UsageError`) a directory to search that exists and is not a directory (`-I /dev/zero`, a FIFO,
    a regular file); one that does not exist is left to the parser (it adds nothing)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"the {what} {path} is {kind_of(st.st_mode)}, not a directory",
                         hint="give a directory of headers")


_DATABASE_HINT = "give the compile_commands.json your build wrote"
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros")


def _argv(e: dict[str, object]) -> list[str]:
    raw = e.get("arguments")
    if isinstance(raw, list):
        return [str(a) for a in raw]
    try:
        return shlex.split(str(e.get("command", "")))
    except ValueError:
        return []


def _at(base: str, flag: str, value: str) -> str:
    """A path flag's value against the entry's directory: always for a directory flag; for a file included
    first (-include, -imacros: looked for in the working directory first, then the include path) only when
    it is there."""
    full = os.path.normpath(os.path.join(base, value))
    return full if flag not in ("-include", "-imacros") or os.path.lexists(full) else value


def _absolute(argv: list[str], base: str) -> list[str]:
    """A compile command's arguments with each path of a path flag (-I, -isystem, -iquote, -idirafter, -include,
    -imacros; joined or separate) made absolute against the entry's `directory`, as the build saw it."""
    out: list[str] = []
    for i, a in enumerate(argv):
        joined = next((f for f in _PATH_FLAGS if a.startswith(f) and len(a) > len(f)), None)
        if i and argv[i - 1] in _PATH_FLAGS:
            out.append(_at(base, argv[i - 1], a))
        elif joined is not None and not a.startswith("-include-pch"):
            out.append(f"{joined}{_at(base, joined, a[len(joined):])}")
        else:
            out.append(a)
    return out


def _forced(argv: list[str]) -> list[str]:
    """The files a compile command includes before the source (-include, -imacros; joined or separate)."""
    out = []
    for i, a in enumerate(argv):
        if a in ("-include", "-imacros") and i + 1 < len(argv):
            out.append(argv[i + 1])
        elif a.startswith(("-include", "-imacros")) and not a.startswith("-include-pch") and len(a) > 8:
            out.append(a[8:])   # both flags have 8 characters
    return out


def _check_entry(path: str, source: str, argv: list[str]) -> None:
    """Refuse an entry that names, to be read before its source, something that is not a regular file."""
    for name in _forced(argv):
        try:
            st = os.stat(name)
        except (OSError, ValueError):
            continue
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path}: the entry of {source} includes {name} before it (-include), which is "
                             f"{kind_of(st.st_mode)}, not a regular file", hint="fix the build's flags, or "
                             "lint without --compile-commands")


def compile_commands(path: str) -> tuple[dict[str, list[str]], list[str]]:
    """From a compile_commands.json (a regular file of at most `MAX_COMPILE_COMMANDS` bytes), read once: each
    file's arguments (absolute path -> argv, path flags made absolute against the entry's `directory`) and
    every entry's include directories, in order.

    Raises:
        UsageError: the database is no regular file, too large, not JSON or not a list; an entry includes
            (-include) a device, FIFO, socket or directory.
    """
    from ..lint.clang import include_dirs

    data = read_regular(path, what="compilation database", limit=MAX_COMPILE_COMMANDS, hint=_DATABASE_HINT)
    try:
        entries = json.loads(data)
    except (ValueError, RecursionError) as exc:
        why = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise UsageError(f"cannot read {path}: not JSON ({why})", hint=_DATABASE_HINT) from None
    if not isinstance(entries, list):
        raise UsageError(f"{path} is not a compile_commands.json (a list of entries)", hint=_DATABASE_HINT)
    flags: dict[str, list[str]] = {}
    includes: list[str] = []
    for e in entries:
        if not isinstance(e, dict):
            continue
        base = str(e.get("directory", "."))
        argv = _absolute(_argv(e), base)
        f = e.get("file")
        if isinstance(f, str):
            _check_entry(path, f, argv)
            flags[os.path.normpath(os.path.join(base, f))] = argv
        includes += [d for d in include_dirs(argv) if d not in includes]
    return flags, includes
