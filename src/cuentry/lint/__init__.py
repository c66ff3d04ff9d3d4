"""cuentry lint: wrong entry-point use in C, C++, CUDA and Python sources.

C-family files are parsed with tree-sitter's C++ grammar, Python with ``ast``;
both become facts (:mod:`cuentry.lint.facts`) that the rules
(:data:`cuentry.lint.rules.RULES`) check. Findings can be suppressed on their
line with ``cuentry: ignore`` or ``cuentry: ignore[CE001,CE004]`` in a comment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..catalog import catalog, format_version
from ..errors import UsageError
from .facts import Unit
from .rules import RULE_CODES, RULES, run

C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc")
PY_SUFFIXES = (".py", ".pyi")
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".venv", "venv", "build", "dist"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    name: str
    message: str

    def render(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    findings: list[Finding]
    files: int
    lines: int
    pins: dict[str, int]            # symbol -> highest literal pin seen
    unparsable: list[str]

    @property
    def min_driver(self) -> int:
        return max(self.pins.values(), default=0)

    def to_dict(self) -> dict[str, Any]:
        md = self.min_driver
        return {"files": self.files, "lines": self.lines, "findings": [f.to_dict() for f in self.findings],
                "min_driver": md, "min_driver_release": format_version(md) if md else None,
                "pins": dict(sorted(self.pins.items())), "unparsable": self.unparsable}


def _codes(spec: Sequence[str] | None) -> set[str] | None:
    if not spec:
        return None
    out: set[str] = set()
    for item in spec:
        for c in item.split(","):
            c = c.strip().upper()
            if not c:
                continue
            matches = [r for r in RULE_CODES if r.startswith(c)]
            if not matches:
                raise UsageError(f"unknown rule {c!r}", hint=f"rules: {', '.join(RULE_CODES)} (a prefix like CE00 works)")
            out.update(matches)
    return out


def extract(text: str, path: str) -> Unit:
    """The facts of one file, by its suffix (C family unless it ends in .py)."""
    if path.endswith(PY_SUFFIXES):
        from .python import extract as py

        return py(text, path)
    from .cfamily import extract as cf

    return cf(text, path)


def lint_text(text: str, path: str, *, select: Sequence[str] | None = None,
              ignore: Sequence[str] | None = None) -> tuple[list[Finding], Unit]:
    """Lint one file's text; returns the findings (suppressions applied) and its facts."""
    sel, ign = _codes(select), _codes(ignore) or set()
    unit = extract(text, path)
    out = []
    for rule, (line, col, msg) in run(unit):
        if sel is not None and rule.code not in sel or rule.code in ign:
            continue
        sup = unit.suppressions.get(line, frozenset())
        if sup is None or (sup and rule.code in sup):
            continue
        out.append(Finding(path, line, col, rule.code, rule.name, msg))
    out.sort(key=lambda f: (f.line, f.col, f.code))
    return out, unit


def iter_files(paths: Iterable[str]) -> list[str]:
    """Source files under ``paths`` (files given explicitly are taken whatever their suffix)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(C_SUFFIXES + PY_SUFFIXES))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise UsageError(f"no such file or directory: {p}", hint="give source files or directories to lint")
    return out


def lint_paths(paths: Sequence[str], *, select: Sequence[str] | None = None, ignore: Sequence[str] | None = None,
               progress: Callable[[int, int], None] | None = None) -> Report:
    """Lint files and directories; the report includes the pins found, for the minimum driver."""
    files = iter_files(paths)
    cat = catalog()
    findings: list[Finding] = []
    pins: dict[str, int] = {}
    lines = 0
    unparsable: list[str] = []
    for i, path in enumerate(files, 1):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        got, unit = lint_text(text, path, select=select, ignore=ignore)
        findings.extend(got)
        lines += unit.lines
        if unit.lang == "python" and unit.parse_errors:
            unparsable.append(path)
        for q in unit.queries:
            sym = q.symbol
            if q.version is not None and sym is not None and sym in cat and q.version >= cat.versions(sym)[0]:
                pins[sym] = max(pins.get(sym, 0), q.version)
        if progress:
            progress(i, len(files))
    return Report(findings, len(files), lines, pins, unparsable)


def sarif(report: Report, version: str) -> dict[str, Any]:
    """The report as SARIF 2.1.0, for code scanning."""
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cuentry",
                "version": version,
                "informationUri": "https://pypi.org/project/cuentry/",
                "rules": [{"id": r.code, "name": r.name, "shortDescription": {"text": r.summary},
                           "defaultConfiguration": {"level": "warning"}} for r in RULES],
            }},
            "results": [{
                "ruleId": f.code,
                "ruleIndex": RULE_CODES.index(f.code),
                "level": "warning",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path.replace(os.sep, "/")},
                    "region": {"startLine": f.line, "startColumn": f.col},
                }}],
            } for f in report.findings],
        }],
    }


__all__ = ["Finding", "Report", "RULES", "lint_paths", "lint_text", "sarif"]
