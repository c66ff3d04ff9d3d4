"""`--output-format sarif` (`--sarif`): SARIF 2.1.0 for code scanning: rules with their pages (`helpUri` is the
rule's page on the documentation site of this version), results with fingerprints and their verified fixes,
artifacts, invocations.

Files that could not be linted are tool execution notifications of the
invocation (level "error"), each with the file's location, so code scanning
shows them instead of passing silently; suppressions that do nothing are warnings.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

from ..engine import Report, is_python
from ..rules import RULE_CODES, RULES, Rule, page
from ._base import Rendered, Run, Style, valid_json

__all__ = ["SCHEMA", "language", "render", "sarif"]


SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


_LANGUAGES = {".c": "c", ".cu": "cuda", ".cuh": "cuda"}


def language(path: str) -> str:
    """SARIF's sourceLanguage of a file: python (as the linter takes it: `is_python`), c, cplusplus (.cpp, .cc,
    headers) or cuda."""
    return "python" if is_python(path) else _LANGUAGES.get(os.path.splitext(path)[1].lower(), "cplusplus")


def _location(path: str, root: str) -> dict[str, Any]:
    """An artifactLocation: a URI relative to %SRCROOT% (percent-encoded from the name's bytes, so names that
    are not UTF-8 or hold control characters stay exact), or an absolute file URI outside the root."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return {"uri": "file://" + quote(os.fsencode(full.replace(os.sep, "/")), safe="/")}
    return {"uri": quote(os.fsencode(rel.replace(os.sep, "/")), safe="/"), "uriBaseId": "%SRCROOT%"}


def _region(f: Any) -> dict[str, Any]:
    region = {"startLine": f.line, "startColumn": f.col}
    if f.end_line and (f.end_line, f.end_col) > (f.line, f.col):
        region.update(endLine=f.end_line, endColumn=f.end_col)
    return region


def _fixes(f: Any, loc: dict[str, Any], fixes: dict[Any, Any]) -> list[dict[str, Any]]:
    got = fixes.get((f.path, f.code, f.line, f.col))
    if got is None:
        return []
    fx, edits = got
    return [{
        "description": {"text": f"{fx.what} ({fx.kind} fix: cuentry lint --fix"
                                f"{' --unsafe-fixes' if fx.kind == 'unsafe' else ''})"},
        "artifactChanges": [{"artifactLocation": dict(loc), "replacements": [{
            "deletedRegion": {"startLine": a, "startColumn": b, "endLine": c, "endColumn": d},
            "insertedContent": {"text": new}} for a, b, c, d, new in edits]}],
    }]


def _rule(r: Rule, version: str) -> dict[str, Any]:
    md = page(r)
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": f"{r.summary}. Example that fires: {r.bad}"},
        "help": {"text": f"{r.summary}. Fires on: {r.bad} -- silent on: {r.good}", "markdown": md},
        "helpUri": r.help_url(version),
        "defaultConfiguration": {"level": r.severity},
    }


def sarif(report: Report, version: str, *, command: list[str] | None = None, root: str | None = None,
          fixes: dict[Any, Any] | None = None) -> dict[str, Any]:
    """The report as SARIF 2.1.0, for code scanning: URIs relative to `root` (%SRCROOT%, default the working
    directory), regions with their ends, and `fixes` (from [plan][cuentry.lint.apply.plan]) as SARIF fixes."""
    root = os.path.abspath(root or os.getcwd())
    fixes = fixes or {}
    files = list(dict.fromkeys([*report.linted, *(f.path for f in report.findings), *(p.path for p in report.problems),
                                *(p.path for p in report.unused_suppressions)]))
    index = {p: i for i, p in enumerate(files)}
    where = {p: _location(p, root) for p in files}
    results = [{
        "ruleId": f.code,
        "ruleIndex": RULE_CODES.index(f.code),
        "level": f.severity if f.severity in ("error", "warning", "note") else "warning",
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {**where[f.path], "index": index[f.path]},
            "region": _region(f),
        }}],
        "partialFingerprints": {"cuentryFindingHash/v1": f.fingerprint},
        **({"properties": {"config": f.config}} if f.config else {}),
        **({"fixes": fx} if (fx := _fixes(f, where[f.path], fixes)) else {}),
    } for f in report.findings]
    notes = [{
        "level": level,
        "message": {"text": f"{p.path}: {p.message}" if level == "error" else p.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {**where[p.path], "index": index[p.path]},
            **({"region": {"startLine": p.line}} if p.line else {}),
        }}],
        "descriptor": {"id": descriptor},
    } for level, descriptor, ps in (("error", "unlinted-file", report.problems),
                                    ("warning", "unused-suppression", report.unused_suppressions)) for p in ps]
    invocation: dict[str, Any] = {"executionSuccessful": True, "toolExecutionNotifications": notes}
    if command is not None:
        invocation["arguments"] = list(command)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cuentry",
                "version": version,
                "informationUri": "https://pypi.org/project/cuentry/",
                "rules": [_rule(r, version) for r in RULES],
            }},
            "invocations": [invocation],
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + quote(os.fsencode(
                root.replace(os.sep, "/").rstrip("/") + "/"), safe="/")}},
            "artifacts": [{"location": where[p], "sourceLanguage": language(p)} for p in files],
            "results": results,
        }],
    }


def render(run: Run, style: Style) -> Rendered:
    regions = run.plan.regions if run.plan is not None else {}
    doc = sarif(run.report, run.version, command=run.command or None, root=run.root, fixes=regions)
    return Rendered([json.dumps(valid_json(doc), indent=2)])
