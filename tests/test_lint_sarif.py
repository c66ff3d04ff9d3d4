"""SARIF output validated against the SARIF 2.1.0 JSON schema (shipped as test data); rules carry examples."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")
jsonschema = pytest.importorskip("jsonschema")

from cuentry.cli import main  # noqa: E402
from cuentry.lint import lint_paths, lint_text, sarif  # noqa: E402
from cuentry.lint.rules import RULES  # noqa: E402

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
CORPUS = Path(__file__).parent / "lint_corpus"


def _validate(doc: dict[str, object]) -> None:
    jsonschema.Draft7Validator(SCHEMA).validate(doc)


def test_corpus_sarif_is_valid_with_fingerprints_help_artifacts_invocations() -> None:
    rep = lint_paths([str(CORPUS)])
    doc = sarif(rep, "0.1.0", command=["cuentry", "lint", str(CORPUS)])
    _validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    assert all(r["help"]["text"] and r["helpUri"] == f"https://cuentry.github.io/cuentry/0.1/rules/{r['id'].lower()}/"
               for r in rules)
    assert len(run["results"]) == len(rep.findings)
    prints = [r["partialFingerprints"]["cuentryFindingHash/v1"] for r in run["results"]]
    assert len(set(prints)) == len(prints)
    uris = [a["location"]["uri"] for a in run["artifacts"]]
    for r in run["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert uris[loc["index"]] == loc["uri"]
    assert run["invocations"][0]["executionSuccessful"] is True


def test_fingerprints_survive_lines_moving() -> None:
    text = (CORPUS / "pins.cpp").read_text()
    a, _ = lint_text(text, "pins.cpp")
    b, _ = lint_text("// a new first line\n" + text, "pins.cpp")
    assert [f.fingerprint for f in a] == [f.fingerprint for f in b]
    assert [f.line + 1 for f in a] == [f.line for f in b]


def test_unlinted_files_are_notifications(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def (:\n")
    os.symlink(tmp_path / "nowhere.c", tmp_path / "dangling.c")
    (tmp_path / "ok.c").write_text("int x;\n")
    o, e = io.StringIO(), io.StringIO()
    code = main(["lint", "--sarif", str(tmp_path)], stdout=o, stderr=e)
    doc = json.loads(o.getvalue())
    _validate(doc)
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert code == 1 and sorted(Path(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name
                                for n in notes) == ["bad.py", "dangling.c"]
    assert all(n["level"] == "error" for n in notes)


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_examples(rule: object) -> None:
    """Each rule fires on its own bad example and stays silent on its good one."""
    from cuentry.lint.rules import Rule

    assert isinstance(rule, Rule) and rule.bad and rule.good
    ext = "py" if rule.lang == "python" else "cpp"
    wrap = (lambda s: s) if rule.lang == "python" else (lambda s: "int f(void* lib) {\n" + s + "\nreturn 0; }\n")
    bad, _ = lint_text(wrap(rule.bad), f"bad.{ext}")
    good, _ = lint_text(wrap(rule.good), f"good.{ext}")
    assert rule.code in {f.code for f in bad}
    assert rule.code not in {f.code for f in good}


def test_every_message_names_symbol_and_fix() -> None:
    rep = lint_paths([str(CORPUS)])
    for f in rep.findings:
        if f.code in ("CE002", "CE007", "CE009", "CE010", "CE011"):
            assert "cu" in f.message and (":" in f.message), f.message
