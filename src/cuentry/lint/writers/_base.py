"""What every writer reads (a `Run`: the report, the fixes planned and what was asked), what it returns (a
`Rendered`: lines for standard output and standard error; the CLI prints them), and the escapes that keep a
hostile file name from breaking a line or reaching the terminal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["PLAIN", "Rendered", "Run", "Style", "shown", "shown_block", "valid_json"]


class Style(Protocol):
    """How text output marks a code or a warning (the CLI's `Out` colours them on a terminal)."""

    def bad(self, t: str) -> str: ...

    def warn(self, t: str) -> str: ...


class _Plain:
    def bad(self, t: str) -> str:
        return t

    def warn(self, t: str) -> str:
        return t


PLAIN: Style = _Plain()
"""No colour."""


@dataclass
class Run:
    """One `cuentry lint` run as the writers see it."""

    report: Any                          # the engine's Report (findings' `fix` verified: apply.verified)
    plan: Any = None                     # apply's Plan: the fixes applied (or shown) and withdrawn, their regions
    version: str = ""                    # cuentry's version
    command: list[str] = field(default_factory=list)
    fixing: bool = False                 # --fix: the files were rewritten
    unsafe: bool = False                 # --unsafe-fixes: unsafe fixes are applied (and marked [*]) too
    show_fixes: bool = False             # --show-fixes
    statistics: bool = False             # --statistics
    min_driver: bool = False             # --min-driver
    root: str | None = None              # SARIF's %SRCROOT% (the working directory when None)


@dataclass
class Rendered:
    """A writer's output: the lines for standard output and for standard error."""

    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


def valid_json(obj: Any) -> Any:
    """`obj` with every string valid Unicode: a file name's bytes that were not UTF-8 as `\\xNN`."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return obj.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return obj
    if isinstance(obj, dict):
        return {valid_json(k): valid_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [valid_json(v) for v in obj]
    return obj


_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def shown(text: str) -> str:
    """A name or message as one printable line: bytes that were not UTF-8 and control characters (newline,
    ESC, BEL, CR, ...) as escapes, so no file name can forge a line or reach the terminal."""
    text = valid_json(text)
    if text.isprintable():
        return str(text)
    return "".join(ch if ch.isprintable() else _ESCAPES.get(ch, f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else
                                                            f"\\u{ord(ch):04x}") for ch in text)


def shown_block(text: str) -> str:
    """Each line of `text` as `shown` makes it."""
    return "\n".join(shown(line) for line in text.splitlines())
