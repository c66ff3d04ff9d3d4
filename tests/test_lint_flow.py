"""The libclang engine's reach (issue 29): per-fact judgement of files with errors, data flow across functions
(globals, statics, fields, stored constants), pointer flow (a `void *` to the cast that types it, a lookup
wrapper's return), and severities. Each fixture in tests/lint_flow marks its findings `// expect: CODE/severity`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuentry.lint import lint_text
from cuentry.lint.engine import Settings

FLOW = Path(__file__).parent / "lint_flow"
FILES = sorted(p.name for p in FLOW.iterdir() if p.suffix in (".c", ".cpp", ".cu"))
EXPECT = re.compile(r"expect:\s*((?:CE\d{3}/\w+\s*)+)")


def _clang() -> None:
    pytest.importorskip("clang.cindex")
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang cannot be loaded")


def _expected(path: Path) -> set[tuple[int, str, str]]:
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        for m in EXPECT.finditer(line):
            for item in m.group(1).split():
                code, _, sev = item.partition("/")
                out.add((i, code, sev))
    return out


def _lint(path: Path) -> tuple[list[tuple[int, str, str]], object]:
    findings, unit = lint_text(path.read_text(), str(path),
                               settings=Settings(engine="clang", toolkit="13.0", pedantic=True))
    assert unit.engine == "clang", unit.note
    return sorted((f.line, f.code, f.severity) for f in findings), unit


@pytest.mark.parametrize("name", FILES)
def test_flow_fixture(name: str) -> None:
    _clang()
    path = FLOW / name
    got, unit = _lint(path)
    assert got == sorted(_expected(path))    # one finding per cause: no duplicates either
    assert unit.requests == unit.judged > 0 and not unit.unjudged   # type: ignore[attr-defined]


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The global's value is what the version query stored: a constant store alone gives no CE001."""
    _clang()
    src = (FLOW / "global_driver_version.cpp").read_text().replace("cuDriverGetVersion(&g_driver_version);",
                                                                   "g_driver_version = 3020;")
    p = tmp_path / "g.cpp"
    p.write_text(src)
    got, _ = _lint(p)
    assert (40, "CE001", "error") not in got and (42, "CE001", "error") in got


def test_a_table_is_one_finding_per_cause(tmp_path: Path) -> None:
    """Seven rows asked at 12000: one CE002 error at the cause naming the one entry whose ABI differs and the six
    others as notes; pinned at each typedef's own number instead, nothing."""
    _clang()
    text = (FLOW / "xmacro_one_cause.cpp").read_text()
    findings, _ = lint_text(text, "t.cpp", settings=Settings(engine="clang", toolkit="13.0", pedantic=True))
    (f,) = findings
    assert (f.line, f.code, f.severity) == (21, "CE002", "error")
    assert "cuCtxCreate pinned at 12000 binds the 11040 ABI" in f.message and "the other 6 entries" in f.message
    fixed = text.replace("12000", "3020").replace("PFN_cuStreamCreate_v2000", "PFN_cuStreamCreate_v3020")
    p = tmp_path / "fixed.cpp"
    p.write_text(fixed)
    got, _ = _lint(p)
    assert all(code != "CE002" for _, code, _ in got)
