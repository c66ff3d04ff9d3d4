"""`--output-format junit`: JUnit XML, as CI systems show test results: one test suite per file, one failing test
case per finding (errors and warnings; notes are skipped cases), a file not linted as a case in error. A run with
nothing to report is one passing case."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from ._base import Rendered, Run, Style, shown

__all__ = ["render"]


def _case(suite: ET.Element, name: str, path: str, line: int, col: int) -> ET.Element:
    return ET.SubElement(suite, "testcase", name=name, classname=shown(path), file=shown(path), line=str(line),
                         column=str(col))


def render(run: Run, style: Style) -> Rendered:
    rep = run.report
    root = ET.Element("testsuites", name="cuentry lint")
    suites: dict[str, ET.Element] = {}
    counts: dict[str, list[int]] = {}      # path -> [tests, failures, errors, skipped]

    def suite(path: str) -> tuple[ET.Element, list[int]]:
        if path not in suites:
            suites[path] = ET.SubElement(root, "testsuite", name=shown(path))
            counts[path] = [0, 0, 0, 0]
        return suites[path], counts[path]

    for f in rep.findings:
        s, c = suite(f.path)
        case = _case(s, f.code, f.path, f.line, f.col)
        text = f"{shown(f.path)}:{f.line}:{f.col}: {f.code} {f.severity}: {shown(f.message)}"
        kind = "skipped" if f.severity == "note" else "failure"
        ET.SubElement(case, kind, message=shown(f.message), type=f.severity).text = text
        c[0] += 1
        c[1 if kind == "failure" else 3] += 1
    for p in [*rep.problems, *rep.unused_suppressions]:
        s, c = suite(p.path)
        not_linted = p in rep.problems
        case = _case(s, "not linted" if not_linted else "unused suppression", p.path, p.line, 1)
        ET.SubElement(case, "error" if not_linted else "failure", message=shown(p.message)).text = shown(p.message)
        c[0] += 1
        c[2 if not_linted else 1] += 1
    if not suites:
        s, c = suite("cuentry lint")
        ET.SubElement(s, "testcase", name="no findings", classname="cuentry lint")
        c[0] += 1
    _totals(root, suites, counts)
    return Rendered(['<?xml version="1.0" encoding="UTF-8"?>', ET.tostring(root, encoding="unicode")])


def _totals(root: ET.Element, suites: dict[str, ET.Element], counts: dict[str, Any]) -> None:
    total = [0, 0, 0, 0]
    for path, s in suites.items():
        for i, key in enumerate(("tests", "failures", "errors", "skipped")):
            s.set(key, str(counts[path][i]))
            total[i] += counts[path][i]
    for i, key in enumerate(("tests", "failures", "errors", "skipped")):
        root.set(key, str(total[i]))
