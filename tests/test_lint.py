"""cuentry lint: the corpus (true and false positives), output formats, selection, suppression, CLI."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from cuentry.cli import main  # noqa: E402
from cuentry.lint import lint_paths, lint_text, sarif  # noqa: E402
from cuentry.lint.engine import Settings  # noqa: E402
from cuentry.lint.rules import RULES  # noqa: E402

CORPUS = Path(__file__).parent / "lint_corpus"
FILES = sorted(p.name for p in CORPUS.iterdir() if p.is_file())
EXPECT = re.compile(r"expect:\s*((?:CE\d{3}\s*)+)")


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        for m in EXPECT.finditer(line):
            out.update((i, c) for c in m.group(1).split())
    return out


@pytest.mark.parametrize("name", FILES)
def test_corpus(name: str) -> None:
    """Every finding is expected on its line, and every expectation is found: no false positives either way.
    C-family files are judged by libclang (also the files with errors: per fact) against CUDA 13.0's headers."""
    path = CORPUS / name
    findings, unit = lint_text(path.read_text(), str(path), settings=Settings(toolkit="13.0", pedantic=True))
    assert unit.engine == ("ast" if name.endswith(".py") else "clang"), unit.note
    got = {(f.line, f.code) for f in findings}
    assert got == expected(path)


def test_every_rule_has_a_true_positive_in_the_corpus() -> None:
    seen = set()
    for name in FILES:
        seen.update(c for _, c in expected(CORPUS / name))
    assert {r.code for r in RULES} <= seen


def test_messages_name_the_fix() -> None:
    findings, _ = lint_text('void f(){void*p;CUdriverProcAddressQueryResult q;'
                            'cuGetProcAddress("cuMemAlloc_v2",&p,3020,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q);}', "x.c")
    (f,) = [x for x in findings if x.code == "CE003"]
    assert "'cuMemAlloc'" in f.message and "3020" in f.message


def test_select_and_ignore() -> None:
    path = str(CORPUS / "pins.cpp")
    only = lint_paths([path], select=["CE009"]).findings
    assert only and {f.code for f in only} == {"CE009"}
    rest = lint_paths([path], ignore=["CE00"]).findings
    assert all(f.code == "CE010" for f in rest)
    from cuentry.errors import UsageError

    with pytest.raises(UsageError):
        lint_paths([path], select=["XX1"])


def test_sarif_shape() -> None:
    rep = lint_paths([str(CORPUS)])
    doc = sarif(rep, "0.1.0")
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [r.code for r in RULES]
    res = run["results"]
    assert len(res) == len(rep.findings)
    loc = res[0]["locations"][0]["physicalLocation"]
    assert loc["region"]["startLine"] >= 1 and loc["artifactLocation"]["uri"].endswith(Path(rep.findings[0].path).name)
    assert all(r["ruleId"] == run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] for r in res)


def test_min_driver_from_pins() -> None:
    rep = lint_paths([str(CORPUS / "good.cpp")])
    assert rep.findings == [] and rep.min_driver == 10010 and rep.pins == {"cuMemAlloc": 3020, "cuStreamBeginCapture": 10010}


def _cli(*argv: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=o, stderr=e), o.getvalue(), e.getvalue()


def test_cli_text_json_sarif_and_exit_codes(tmp_path: Path) -> None:
    code, o, _ = _cli("lint", str(CORPUS / "pins.cpp"))
    assert code == 1 and re.search(r"pins\.cpp:9:\d+: CE010 ", o)
    code, o, _ = _cli("lint", str(CORPUS / "good.cpp"))
    assert code == 0 and "no findings" in o
    code, o, _ = _cli("lint", "--json", str(CORPUS))
    doc = json.loads(o)
    assert code == 1 and doc["findings"] and doc["min_driver"] >= 10010
    code, o, _ = _cli("lint", "--sarif", str(CORPUS / "mixed.cpp"))
    assert json.loads(o)["runs"][0]["results"][0]["ruleId"] == "CE008"
    code, o, _ = _cli("lint", "--min-driver", str(CORPUS / "good.cpp"))
    assert code == 0 and "10.1 (10010)" in o
    code, _, e = _cli("lint", str(tmp_path / "missing.cpp"))
    assert code == 2 and "no such file" in e
    code, _, e = _cli("lint", "--select", "ZZ9", str(CORPUS))
    assert code == 2 and "unknown rule" in e


def test_unparsable_python_is_reported_not_fatal(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    rep = lint_paths([str(tmp_path)])
    assert rep.unparsable == [str(bad)] and rep.findings == []
