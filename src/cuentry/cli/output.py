"""How the CLI prints: the one place that writes to the terminal."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import CuentryError

_ANSI = re.compile(r"\033\[[0-9;]*m")


def plain(text: str) -> str:
    """``text`` without ANSI colour codes (for measuring widths)."""
    return _ANSI.sub("", text)


class Out:
    """Where and how to print: colour only on a terminal and without NO_COLOR."""

    def __init__(self, stream: TextIO, err: TextIO, color: bool | None, *, quiet: bool = False) -> None:
        self.stream = stream
        self.err = err
        self.quiet = quiet  # --quiet: human output off; json() and errors still print
        if color is None:
            color = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        self.color = color

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

    def fail(self, exc: CuentryError, code: int) -> int:
        """Report ``exc`` as the CLI's one-line error (and its hint); return ``code``."""
        self.error(f"cuentry: error: {exc.message}")
        if exc.hint:
            self.error(f"  hint: {exc.hint}")
        return code

    def progress(self, done: int, total: int, label: str) -> None:
        if self.err.isatty() and not self.quiet:
            print(f"\r{label} {done}/{total}", end="" if done < total else "\n", file=self.err, flush=True)

    def table(self, rows: Sequence[Sequence[str]], header: Sequence[str] | None = None, indent: int = 0) -> None:
        allrows = [list(header)] + [list(r) for r in rows] if header else [list(r) for r in rows]
        if not allrows:
            return
        widths = [max(len(plain(r[i])) for r in allrows if i < len(r)) for i in range(max(len(r) for r in allrows))]
        for j, r in enumerate(allrows):
            cells = [r[i] + " " * (widths[i] - len(plain(r[i]))) for i in range(len(r))]
            line = " " * indent + "  ".join(cells).rstrip()
            self.print(self.bold(line) if header and j == 0 else line)
