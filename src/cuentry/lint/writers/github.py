"""`--output-format github`: GitHub Actions workflow commands, one annotation a line
(`::warning title=cuentry (CE010),file=src/x.c,line=8,col=7,endLine=8,endColumn=30::src/x.c:8:7: CE010 ...`):
errors as `::error`, warnings as `::warning`, notes as `::notice`; files not linted as errors, suppressions that
do nothing as warnings. What would end a command (`%`, CR, LF; in properties also `:` and `,`) is escaped."""

from __future__ import annotations

from typing import Any

from ._base import Rendered, Run, Style, shown

__all__ = ["escape_data", "escape_property", "render"]

_LEVELS = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    """A command's message escaped as the runner reads it back."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value escaped as the runner reads it back."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, props: dict[str, Any], message: str) -> str:
    given = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    return f"::{level} {given}::{escape_data(message)}"


def render(run: Run, style: Style) -> Rendered:
    rep = run.report
    out = []
    for f in rep.findings:
        props: dict[str, Any] = {"title": f"cuentry ({f.code})", "file": shown(f.path), "line": f.line, "col": f.col}
        if f.end_line and (f.end_line, f.end_col) > (f.line, f.col):
            props.update(endLine=f.end_line, endColumn=f.end_col)
        out.append(_command(_LEVELS.get(f.severity, "warning"), props,
                            f"{shown(f.path)}:{f.line}:{f.col}: {f.code} {shown(f.message)}"))
    for p in rep.problems:
        out.append(_command("error", {"title": "cuentry (not linted)", "file": shown(p.path)},
                            f"{shown(p.path)}: not linted: {shown(p.message)}"))
    for u in rep.unused_suppressions:
        out.append(_command("warning", {"title": "cuentry (suppression)", "file": shown(u.path), "line": u.line},
                            f"{shown(u.path)}:{u.line}: {shown(u.message)}"))
    return Rendered(out)
