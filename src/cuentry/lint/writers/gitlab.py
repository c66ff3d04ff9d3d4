"""`--output-format gitlab`: a GitLab Code Quality report (a JSON array of issues: `description`, `check_name`,
`fingerprint`, `severity`, `location` with the path relative to the project and the lines). Severity: errors
`critical`, warnings `major`, notes `info`; files not linted are `major` issues of their own, suppressions that do
nothing `minor`. Paths are relative to `$CI_PROJECT_DIR` when set (GitLab's checkout), else to the working
directory."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ._base import Rendered, Run, Style, valid_json

__all__ = ["render"]

_SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def _relative(path: str) -> str:
    root = os.path.abspath(os.environ.get("CI_PROJECT_DIR") or os.getcwd())
    full = os.path.abspath(path)
    rel = os.path.relpath(full, root)
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel.replace(os.sep, "/")


def _issue(check: str, description: str, severity: str, path: str, begin: int, end: int,
           fingerprint: str = "") -> dict[str, Any]:
    if not fingerprint:
        fingerprint = hashlib.sha256(f"{check}\0{path}\0{begin}\0{description}".encode(
            "utf-8", "surrogateescape")).hexdigest()[:32]
    return {"description": description, "check_name": check, "fingerprint": fingerprint, "severity": severity,
            "location": {"path": _relative(path), "lines": {"begin": begin, "end": end}}}


def render(run: Run, style: Style) -> Rendered:
    rep = run.report
    issues = [_issue(f.code, f"{f.code} {f.message}", _SEVERITY.get(f.severity, "major"), f.path, f.line,
                     max(f.end_line, f.line), f.fingerprint) for f in rep.findings]
    issues += [_issue("not-linted", f"not linted: {p.message}", "major", p.path, max(p.line, 1), max(p.line, 1))
               for p in rep.problems]
    issues += [_issue("unused-suppression", u.message, "minor", u.path, u.line, u.line)
               for u in rep.unused_suppressions]
    return Rendered([json.dumps(valid_json(issues), indent=2)])
