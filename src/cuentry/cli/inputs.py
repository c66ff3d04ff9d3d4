"""Where a command's input comes from: a file, or standard input for `-` (`cuentry check -`, `cuentry lint -`).

Standard input gets the same limits as a file, from the same reader
([read_limited][cuentry.manifest.read_limited]): UTF-8 only (a BOM is dropped), at most `limit` bytes (a
manifest's for `check -`, a linted file's for `lint -`), read once. A terminal on stdin is refused (the
command would wait for typing that nobody meant).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

from ..errors import ManifestError, UsageError

if TYPE_CHECKING:
    from ..manifest import Manifest

__all__ = ["STDIN", "STDIN_NAME", "load_manifest", "read_input", "stdin_paths"]

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
