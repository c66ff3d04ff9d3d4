"""Every `--json` report validates against its published schema (docs/schemas/), so the docs cannot drift."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cuentry.cli import main

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the [test] extra")
referencing = pytest.importorskip("referencing", reason="comes with jsonschema >= 4.18")

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"
MANIFEST = """\
[table]
name = "acme"
stream = "per_thread"
required = ["cuMemAlloc@3020", "PFN_cuStreamBeginCapture_v10010_ptsz"]
optional = [{ symbol = "cuMulticastCreate", version = 12010 }, { symbol = "cuCtxCreate", version = 12050 }]
"""


def _validator(name: str) -> Any:
    from referencing.jsonschema import DRAFT202012

    resources = []
    for p in SCHEMAS.glob("*.schema.json"):
        doc = json.loads(p.read_text())
        resources.append((doc["$id"], DRAFT202012.create_resource(doc)))
    registry = referencing.Registry().with_resources(resources)
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _run(*argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--json"], stdout=out, stderr=err)
    return code, json.loads(out.getvalue())


def _valid(name: str, doc: Any) -> None:
    errors = sorted(_validator(name).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_doctor(fake: dict[str, str], fake_version: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _valid("doctor", _run("doctor", "--driver", fake["full"])[1])
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    monkeypatch.setenv("CUENTRY_RUNTIME", "/nonexistent/libcudart.so")
    doc = _run("doctor")[1]
    assert doc["driver"]["found"] is False and doc["runtime"]["found"] is False
    _valid("doctor", doc)


def test_resolve(fake: dict[str, str], fake_version: Any) -> None:
    code, ok = _run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy", "--driver", fake["full"])
    assert code == 0 and ok["classification"] == "ok"
    _valid("resolve", ok)
    fake_version(12040)
    code, bad = _run("resolve", "cuCtxCreate", "--version", "12050", "--stream", "legacy", "--driver", fake["full"])
    assert code == 1 and bad["classification"] == "version_above_driver"
    _valid("resolve", bad)


def test_show_and_list() -> None:
    _valid("show", _run("show", "cuStreamBeginCapture")[1])
    _valid("list", _run("list", "--since", "12.8")[1])
    _valid("list", _run("list", "--groups")[1])


def test_check(fake: dict[str, str], fake_version: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = tmp_path / "acme.toml"
    m.write_text(MANIFEST)
    fake_version(12040)
    code, doc = _run("check", str(m), "--driver", fake["full"])
    assert code == 0 and doc["ok"] is True
    assert {e["status"] for e in doc["entries"]} >= {"resolved", "unavailable"}
    assert doc["driver"]["path"] == fake["full"] and doc["driver"]["version"] == 12040
    assert doc["searched"] and all(set(s) >= {"path", "reason"} for s in doc["searched"])
    assert doc["searched"][-1] == {"path": fake["full"], "reason": "loaded", "how": "argument"}
    tried = [a for e in doc["entries"] for a in e["attempts"]]
    assert tried and all(a["driver"] == {"path": fake["full"], "version": 12040} for a in tried)
    assert all(isinstance(a["suggestions"], list) and all(isinstance(s, dict) for s in a["suggestions"]) for a in tried)
    _valid("check", doc)
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    code, doc = _run("check", str(m))
    assert code == 3 and "error" in doc
    assert doc["driver"] == {"path": None, "version": None}
    assert doc["searched"] == doc["error"]["searched"] and doc["searched"][0]["path"] == "/nonexistent/libcuda.so.1"
    assert doc["searched"][0]["reason"] and "reasons" not in doc["error"]
    _valid("check", doc)
    bad = {**doc, "searched": ["/nonexistent/libcuda.so.1"]}  # the old shape: strings
    assert list(_validator("check").iter_errors(bad))


def test_failure_with_json(tmp_path: Path) -> None:
    m = tmp_path / "broken.toml"
    m.write_text("[table\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(m), "--json"], stdout=out, stderr=err) == 2
    doc = json.loads(out.getvalue())
    assert doc["error"]["type"] == "ManifestError"
    _valid("failure", doc)


def test_trace(fake: dict[str, str], fake_version: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("CUENTRY_DRIVER", fake["full"])
    report = tmp_path / "trace.json"
    code = ("import cuentry; d = cuentry.Driver.load(); d.resolve('cuMemAlloc', 3020, 'legacy'); "
            "d.query('cuMemAlloc_v2', 3020, 0)")
    out, err = io.StringIO(), io.StringIO()
    rc = main(["trace", "--json", "-o", str(report), "--", sys.executable, "-c", code], stdout=out, stderr=err)
    if rc != 0 and "interposer" in err.getvalue():
        pytest.skip(f"no interposer here: {err.getvalue().strip()}")
    assert rc == 0, err.getvalue()
    doc = json.loads(report.read_text())
    assert doc["requests"] and doc["findings"]
    _valid("trace", doc)


def test_emulate_floor(fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("CUENTRY_DRIVER", fake["full"])
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    code = "import ctypes, os; ctypes.CDLL(os.environ['CUENTRY_DRIVER']).cuGetProcAddress_v2"
    out, err = io.StringIO(), io.StringIO()
    rc = main(["emulate", "--floor", "--json", "--", sys.executable, "-c", code], stdout=out, stderr=err)
    if rc == 2 and "interposer" in err.getvalue():
        pytest.skip(f"no interposer here: {err.getvalue().strip()}")
    doc = json.loads(out.getvalue())
    assert rc == 0 and doc["floor"] == 12000 and doc["refused"], err.getvalue()
    _valid("emulate-floor", doc)


def test_generate(tmp_path: Path) -> None:
    m = tmp_path / "acme.toml"
    m.write_text(MANIFEST)
    for lang, ext in (("c", "h"), ("python", "py")):
        code, doc = _run("generate", lang, str(m), "-o", str(tmp_path / f"acme.{ext}"))
        assert code == 0 and doc["language"] == lang
        _valid("generate", doc)


def test_every_json_command_has_a_schema() -> None:
    """Each command that takes --json is in docs/json.md's table with a schema file that exists."""
    from cuentry.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    page = (SCHEMAS.parent / "json.md").read_text()
    for name, p in sub.choices.items():
        nested = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        parsers = [(f"{name} {n}", q) for a in nested for n, q in a.choices.items()] or [(name, p)]
        for label, q in parsers:
            if any("--json" in a.option_strings for a in q._actions):
                assert f"`cuentry {label}" in page, label
    for ref in re.findall(r"\(schemas/([\w-]+\.schema\.json)\)", page):
        assert (SCHEMAS / ref).exists(), ref


def test_fake_driver() -> None:
    code, doc = _run("fake-driver", "--variant", "v1")
    assert code == 0 and doc["variant"] == "v1"
    _valid("fake-driver", doc)


def test_lint() -> None:
    corpus = Path(__file__).parent / "lint_corpus"
    code, doc = _run("lint", "--pedantic", str(corpus))
    assert code == 1 and doc["findings"] and doc["judged"]
    assert {f["severity"] for f in doc["findings"]} == {"error", "warning", "note"}
    _valid("lint", doc)
    bad = {**doc, "findings": [{**doc["findings"][0], "severity": "fatal"}]}
    with pytest.raises(jsonschema.ValidationError):
        _validator("lint").validate(bad)


def test_schemas_are_not_vacuous() -> None:
    """A report missing a key, or with a wrong type, is refused."""
    with pytest.raises(jsonschema.ValidationError):
        _validator("lint").validate({"files": 1})
    with pytest.raises(jsonschema.ValidationError):
        _validator("resolve").validate({"symbol": 1})


def test_every_schema_has_a_real_id_on_the_documentation_site() -> None:
    """Issue 33.5: `$id` is where the schema is published (mkdocs copies docs/schemas/ to the site), not a
    placeholder domain; the wheel ships the same files (tests/test_packaging.py checks the wheel)."""
    import tomllib

    site = "https://cuentry.github.io/cuentry/"
    pyproject = tomllib.loads((SCHEMAS.parent.parent / "pyproject.toml").read_text())
    assert pyproject["project"]["urls"]["Documentation"] == site
    assert f"site_url: {site}" in (SCHEMAS.parent.parent / "mkdocs.yml").read_text()
    files = sorted(SCHEMAS.glob("*.schema.json"))
    assert len(files) >= 10
    for p in files:
        assert json.loads(p.read_text())["$id"] == f"{site}schemas/{p.name}", p.name
