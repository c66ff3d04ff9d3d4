"""The SARIF 2.1.0 writer: rules with help, results with fingerprints, artifacts, invocations.

Files that could not be linted are tool execution notifications of the
invocation (level "error"), each with the file's location, so code scanning
shows them instead of passing silently.
"""

from __future__ import annotations

import os
from typing import Any

from .engine import Report
from .rules import RULE_CODES, RULES, Rule

__all__ = ["SCHEMA", "sarif"]


SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    return path.replace(os.sep, "/")


def _rule(r: Rule) -> dict[str, Any]:
    lang = "python" if r.lang == "python" else "c"
    md = (f"**{r.code} {r.name}**: {r.summary}.\n\nFires on:\n\n```{lang}\n{r.bad}\n```\n\n"
          f"Silent on:\n\n```{lang}\n{r.good}\n```\n")
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": f"{r.summary}. Example that fires: {r.bad}"},
        "help": {"text": f"{r.summary}. Fires on: {r.bad} -- silent on: {r.good}", "markdown": md},
        "helpUri": r.help_uri,
        "defaultConfiguration": {"level": r.severity},
    }


def sarif(report: Report, version: str, *, command: list[str] | None = None) -> dict[str, Any]:
    """The report as SARIF 2.1.0, for code scanning."""
    files = list(dict.fromkeys([*report.linted, *(f.path for f in report.findings), *(p.path for p in report.problems)]))
    index = {p: i for i, p in enumerate(files)}
    results = [{
        "ruleId": f.code,
        "ruleIndex": RULE_CODES.index(f.code),
        "level": f.severity if f.severity in ("error", "warning", "note") else "warning",
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": _uri(f.path), "index": index[f.path]},
            "region": {"startLine": f.line, "startColumn": f.col},
        }}],
        "partialFingerprints": {"cuentryFindingHash/v1": f.fingerprint},
        **({"properties": {"config": f.config}} if f.config else {}),
    } for f in report.findings]
    notes = [{
        "level": "error",
        "message": {"text": f"{p.path}: {p.message}"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": _uri(p.path), "index": index[p.path]},
            **({"region": {"startLine": p.line}} if p.line else {}),
        }}],
        "descriptor": {"id": "unlinted-file"},
    } for p in report.problems]
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
                "rules": [_rule(r) for r in RULES],
            }},
            "invocations": [invocation],
            "artifacts": [{"location": {"uri": _uri(p)},
                           "sourceLanguage": "python" if p.endswith((".py", ".pyi")) else
                           ("cuda" if p.endswith((".cu", ".cuh")) else "cpp")} for p in files],
            "results": results,
        }],
    }
