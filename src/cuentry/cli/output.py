"""How the CLI prints: the one place that writes to the terminal."""

from __future__ import annotations

import json
import os
import re
import shutil
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import CuentryError

__all__ = ["Out", "cli_terms", "count", "diagnostic_json", "plain", "suggestion_objects", "terminal_width"]


_ANSI = re.compile(r"\033\[[0-9;]*m")


def plain(text: str) -> str:
    """`text` without ANSI colour codes (for measuring widths)."""
    return _ANSI.sub("", text)


# The library's hints name its parameters; through the CLI the same fix is a flag.
_CLI_TERMS = (
    ("pass allow_default=True to ask", "pass --allow-default to ask"),
    ("allow_default=True", "--allow-default"),
    ("allow_deprecated=True", "--allow-deprecated"),
    ("set CUENTRY_DRIVER=/path/to/libcuda.so.1", "pass --driver /path/to/libcuda.so.1 (or set CUENTRY_DRIVER)"),
    ("stream='legacy' or stream='per_thread'", "--stream legacy or --stream per-thread"),
    ("use 'legacy' or 'per_thread' ('default' only by explicit request)",
     "use --stream legacy or --stream per-thread (default only with --allow-default)"),
)


def cli_terms(text: str) -> str:
    """A library hint in the CLI's terms: parameters become the flags that do the same."""
    for api, cli in _CLI_TERMS:
        text = text.replace(api, cli)
    return text


def suggestion_objects(symbol: str, texts: Sequence[str]) -> list[dict[str, Any]]:
    """A diagnostic's suggestions in the decided JSON shape: {"symbol", "version", "stream", "reason"}, never prose."""
    if not texts:
        return []
    from ..catalog import catalog

    found = [{"symbol": s.symbol, "version": s.version, "stream": s.stream, "reason": s.reason}
             for s in catalog().suggest(symbol)]
    return found or [{"symbol": t.split(" ", 1)[0], "version": None, "stream": None, "reason": t} for t in texts]


def diagnostic_json(d: Any) -> dict[str, Any]:
    """A Diagnostic as the CLI's JSON: hint in the CLI's terms, suggestions as objects, `driver` as {path, version}.

    Every command that prints a diagnostic (resolve; check and trace through their owners) uses this one shape.
    `d` is a Diagnostic or its `to_dict()` (a table's report carries those).
    """
    doc: dict[str, Any] = dict(d) if isinstance(d, dict) else d.to_dict()
    doc["hint"] = cli_terms(doc["hint"])
    doc["suggestions"] = suggestion_objects(doc["symbol"], doc.get("suggestions") or [])
    doc["driver"] = {"path": doc.get("library"), "version": doc.get("driver_version")}
    return doc


def _one_line(exc: CuentryError) -> str:
    """The error's message, a search over many places summarised (doctor lists each with its reason)."""
    from ..errors import DriverNotFoundError, LibraryPathError

    if isinstance(exc, DriverNotFoundError) and not isinstance(exc, LibraryPathError) and len(exc.searched) > 2:
        what = "runtime library (libcudart)" if "runtime" in exc.message else "driver library"
        return (f"no CUDA {what} found in {len(exc.searched)} places "
                f"(`cuentry doctor` lists each with the reason)")
    return " ".join(exc.message.split())


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1: "1 entry", "2 entries", "0 ABIs"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def terminal_width() -> int:
    """The width to fit human output to: the terminal's, or $COLUMNS, else 100."""
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def _auto_color(stream: TextIO) -> bool:
    """`--color auto`: NO_COLOR (set and not empty) turns colour off; FORCE_COLOR (set, not empty and not 0) turns
    it on where output is not a terminal (CI logs); otherwise colour on a terminal that is not TERM=dumb."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    return stream.isatty() and os.environ.get("TERM") != "dumb"


class Out:
    """Where and how to print: colour on a terminal (or with FORCE_COLOR), never with NO_COLOR."""

    def __init__(self, stream: TextIO, err: TextIO, color: bool | None, *, quiet: bool = False) -> None:
        self.stream = stream
        self.err = err
        self.quiet = quiet  # --quiet: human output off; json() and errors still print
        if color is None:
            color = _auto_color(stream)
        self.color = color
        self.json_errors = False  # set for --json: a failure is also a JSON document on stdout

    def c(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def ok(self, t: str) -> str:
        return self.c(t, "32")

    def bad(self, t: str) -> str:
        return self.c(t, "31")

    def warn(self, t: str) -> str:
        return self.c(t, "33")

    def bold(self, t: str) -> str:
        return self.c(t, "1")

    def print(self, text: str = "") -> None:
        if not self.quiet:
            print(text, file=self.stream)

    def error(self, text: str) -> None:
        """One line on standard error."""
        print(text, file=self.err)

    def json(self, obj: Any) -> None:
        print(json.dumps(obj, indent=2, sort_keys=False), file=self.stream)

    def document(self, text: str) -> None:
        """A machine-readable document (JSON, SARIF, XML, workflow commands): printed even with --quiet."""
        print(text, file=self.stream)

    def fail(self, exc: CuentryError, code: int) -> int:
        """Report `exc` as the CLI's one-line error (and its hint); return `code`."""
        self.error(f"cuentry: error: {_one_line(exc)}")
        if exc.hint:
            self.error(f"  hint: {cli_terms(exc.hint)}")
        if self.json_errors:
            self.json({"ok": False, "error": {**exc.to_dict(), "hint": cli_terms(exc.hint)}})
        return code

    def wrap(self, text: str, indent: int = 0, first: str = "") -> None:
        """Print `first + text` fitted to the terminal; continuation lines indented by `indent`.

        Words are never split (a path stays whole, so it can be copied); a line
        that must be wrapped loses its colour.
        """
        width = terminal_width()
        if len(plain(first + text)) <= width:
            self.print(first + text)
            return
        for line in textwrap.wrap(plain(text), width=width, initial_indent=plain(first), subsequent_indent=" " * indent,
                                  break_long_words=False, break_on_hyphens=False):
            self.print(line)

    def progress(self, done: int, total: int, label: str) -> None:
        if self.err.isatty() and not self.quiet:
            print(f"\r{label} {done}/{total}", end="" if done < total else "\n", file=self.err, flush=True)

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None, indent: int = 0) -> None:
        """Columns padded to their widest cell; the last column wraps under itself to fit the terminal."""
        allrows = _padded([*([list(header)] if header else []), *(list(r) for r in rows)])
        if not allrows:
            return
        widths = [max(len(plain(r[i])) for r in allrows) for i in range(len(allrows[0]))]
        lead = indent + sum(w + 2 for w in widths[:-1])
        room = max(20, terminal_width() - lead)
        for j, r in enumerate(allrows):
            head = "".join(c + " " * (widths[i] - len(plain(c)) + 2) for i, c in enumerate(r[:-1]))
            for k, part in enumerate(_fitted(r[-1], room)):
                line = (" " * indent + (head if k == 0 else " " * (lead - indent)) + part).rstrip()
                self.print(self.bold(line) if header and j == 0 else line)


def _padded(rows: list[list[str]]) -> list[list[str]]:
    """Rows of one length (short ones padded with empty cells)."""
    ncol = max((len(r) for r in rows), default=0)
    return [r + [""] * (ncol - len(r)) for r in rows]


def _fitted(cell: str, room: int) -> list[str]:
    """A last-column cell as the lines it takes in `room` columns (words never split; wrapping drops colour)."""
    if len(plain(cell)) <= room:
        return [cell]
    return textwrap.wrap(plain(cell), width=room, break_long_words=False, break_on_hyphens=False) or [""]
