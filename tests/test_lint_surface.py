"""`cuentry lint` as a user meets it (issue 41): fixes that keep their promise, the output formats behind one
registry, exit codes, suppression comments, the configuration applied by the library, rule pages."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("clang.cindex")

from cuentry.cli import main  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_cache")

HERE = Path(__file__).parent
PINS = (HERE / "lint_corpus" / "pins.cpp").read_text()

# The issue's M1: a loader pinned at 12000 whose cuMemAlloc pointer has a hand-written type that is no ABI's.
HANDWRITTEN = """\
#include <cuda.h>
#include <cudaTypedefs.h>

typedef CUresult (*my_alloc_t)(CUdeviceptr *, unsigned int);
static my_alloc_t p_alloc;

int load(void) {
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q)
    return 0;
  return 1;
}
"""

# One finding, and its repair is safe: the release number 12040 becomes the ABI of the pointer's typedef.
ONE_FIX = """\
#include <cuda.h>
#include <cudaTypedefs.h>

static PFN_cuMemAlloc_v3020 p_alloc;

int load(void) {
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, 12040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q)
    return 0;
  return 1;
}
"""


def lint(*args: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    code = main(["lint", *args], stdout=o, stderr=e)
    return code, o.getvalue(), e.getvalue()


def _file(tmp_path: Path, text: str, name: str = "loader.cpp") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# --- M1: a fix is promised only when it verifies ---------------------------------------------------------


def test_the_listing_promises_no_fix_that_fix_then_withdraws(tmp_path: Path) -> None:
    f = _file(tmp_path, HANDWRITTEN)
    code, out, _ = lint("--isolated", f)
    ce002 = [ln for ln in out.splitlines() if " CE002 " in ln]
    assert code == 1 and len(ce002) == 1 and not ce002[0].endswith("[*]"), out
    assert "fixable with --fix" not in out and "1 more with --fix --unsafe-fixes" in out, out
    code, out, err = lint("--fix", "--isolated", f)
    assert "withdrawn" not in err and Path(f).read_text() == HANDWRITTEN, err


def test_every_fix_the_corpus_listing_promises_is_applied(tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "corpus"
    shutil.copytree(HERE / "lint_corpus", repo, ignore=shutil.ignore_patterns("semantic", "*.py"))
    _, out, _ = lint("--json", "--isolated", str(repo))
    promised = [(f["path"], f["line"]) for f in json.loads(out)["findings"] if f["fix"] == "safe"]
    _, out, err = lint("--fix", "--isolated", str(repo))
    withdrawn = {(m.group(1), int(m.group(2))) for m in re.finditer(r"^(.*):(\d+): fix withdrawn: ", err, re.M)}
    assert promised and not set(promised) & withdrawn, set(promised) & withdrawn
    assert f"fixed {len(promised)} finding" in out, out


def test_a_handwritten_type_of_no_abi_gets_the_unsafe_type_and_pin_fix(tmp_path: Path) -> None:
    f = _file(tmp_path, HANDWRITTEN)
    _, out, _ = lint("--json", "--isolated", f)
    assert [(x["code"], x["fix"]) for x in json.loads(out)["findings"]] == [("CE002", "unsafe")], out
    code, out, err = lint("--fix", "--unsafe-fixes", "--isolated", f)
    fixed = Path(f).read_text()
    assert "static PFN_cuMemAlloc_v3020 p_alloc;" in fixed and "(void **)&p_alloc, 3020," in fixed, (fixed, err)
    assert code == 0 and "fixed 1 finding" in out and "withdrawn" not in err, (out, err)


def test_a_withdrawn_fix_says_what_to_change_by_hand(tmp_path: Path) -> None:
    f = _file(tmp_path, PINS, "w.cpp")
    _, _, err = lint("--fix", "--isolated", f)
    line = next(ln for ln in err.splitlines() if "w.cpp:13: fix withdrawn: CE003" in ln)
    assert "brings a new CE008" in line and "by hand:" in line, line
    assert "separate tables" in line.split("by hand:", 1)[1], line   # CE008's own advice: one mode a table


# --- M2 and the exit codes -----------------------------------------------------------------------------


def test_diff_exits_1_when_it_prints_a_diff(tmp_path: Path) -> None:
    f = _file(tmp_path, ONE_FIX)
    code, out, _ = lint("--diff", "--isolated", f)
    assert "+  if (cuGetProcAddress(\"cuMemAlloc\", (void **)&p_alloc, 3020," in out and code == 1, (code, out)
    assert Path(f).read_text() == ONE_FIX
    clean = _file(tmp_path, ONE_FIX.replace("12040", "3020"), "clean.cpp")
    assert lint("--diff", "--isolated", clean)[:2] == (0, "")


def test_exit_zero(tmp_path: Path) -> None:
    f = _file(tmp_path, PINS, "pins.cpp")
    code, out, _ = lint("--exit-zero", "--isolated", f)
    assert code == 0 and " CE010 " in out
    assert lint("--isolated", f)[0] == 1


# --- output formats: one registry, one module each ---------------------------------------------------------


def _check_text(out: str, path: str) -> None:
    assert re.search(rf"^{re.escape(path)}:8:7: CE010 warning: .* \[\*\]$", out, re.M), out


def _check_json(out: str, path: str) -> None:
    doc = json.loads(out)
    assert [(f["path"], f["code"], f["fix"]) for f in doc["findings"]] == [(path, "CE010", "safe")]


def _check_sarif(out: str, path: str) -> None:
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and [r["ruleId"] for r in doc["runs"][0]["results"]] == ["CE010"]


def _check_github(out: str, path: str) -> None:
    (line,) = out.splitlines()
    m = re.fullmatch(r"::warning title=cuentry \(CE010\),file=(.*),line=8,col=7,endLine=8,endColumn=\d+::(.*)", line)
    assert m and m.group(1) == path and m.group(2).startswith(f"{path}:8:7: CE010 "), line


def _check_gitlab(out: str, path: str) -> None:
    (issue,) = json.loads(out)
    assert issue["check_name"] == "CE010" and issue["severity"] == "major" and len(issue["fingerprint"]) >= 16
    assert issue["location"] == {"path": path, "lines": {"begin": 8, "end": 8}} and "cuMemAlloc" in issue["description"]


def _check_junit(out: str, path: str) -> None:
    root = ET.fromstring(out)
    assert root.tag == "testsuites" and root.get("failures") == "1" and root.get("tests") == "1"
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    assert suite.get("name") == path and case.get("name") == "CE010" and case.get("line") == "8"
    (failure,) = case.findall("failure")
    assert "cuMemAlloc" in (failure.get("message") or "")


CHECKS = {"text": _check_text, "json": _check_json, "sarif": _check_sarif, "github": _check_github,
          "gitlab": _check_gitlab, "junit": _check_junit}


def test_every_output_format_is_one_writer_module_with_its_check_here() -> None:
    import pkgutil

    from cuentry.lint import writers

    modules = {m.name for m in pkgutil.iter_modules(writers.__path__) if not m.name.startswith("_")}
    assert set(writers.FORMATS) == modules == set(CHECKS)


@pytest.mark.parametrize("fmt", sorted(CHECKS))
def test_output_format(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, ONE_FIX)
    code, out, err = lint("--output-format", fmt, "--isolated", "loader.cpp")
    assert code == 1, err
    CHECKS[fmt](out, "loader.cpp")


def test_json_and_sarif_flags_are_aliases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, ONE_FIX)
    assert lint("--json", "--isolated", "loader.cpp") == lint("--output-format", "json", "--isolated", "loader.cpp")
    assert lint("--sarif", "--isolated", "loader.cpp") == lint("--output-format", "sarif", "--isolated", "loader.cpp")
    code, _, err = lint("--json", "--output-format", "sarif", "loader.cpp")
    assert code == 2 and "not allowed with" in err


def test_junit_and_gitlab_without_findings(tmp_path: Path) -> None:
    f = _file(tmp_path, ONE_FIX.replace("12040", "3020"))
    code, out, _ = lint("--output-format", "junit", "--isolated", f)
    assert code == 0 and ET.fromstring(out).get("failures") == "0"
    code, out, _ = lint("--output-format", "gitlab", "--isolated", f)
    assert code == 0 and json.loads(out) == []


def test_github_escapes_what_would_end_its_command(tmp_path: Path) -> None:
    from cuentry.lint.writers.github import escape_data, escape_property

    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("x,y:z\n") == "x%2Cy%3Az%0A"


def test_show_fixes(tmp_path: Path) -> None:
    f = _file(tmp_path, ONE_FIX)
    _, out, _ = lint("--show-fixes", "--isolated", f)
    assert re.search(r"CE010 .*\[\*\]\n +fix \(safe\): pin 3020\n", out), out
    _, out, _ = lint("--fix", "--show-fixes", "--isolated", f)
    assert "fixed 1 finding" in out and re.search(rf"^  {re.escape(f)}:8:7: CE010 pin 3020$", out, re.M), out


def test_explain() -> None:
    from cuentry.lint.rules import RULES

    for r in RULES:
        code, out, _ = lint("--explain", r.code.lower())
        assert code == 0 and out.startswith(f"# {r.code} {r.name}\n"), out[:200]
        for part in ("## What it finds", "## Why", "## Example that fires", "## Example that is silent", "## Fix"):
            assert part in out, (r.code, part)
        assert r.bad.splitlines()[0] in out and r.good.splitlines()[0] in out
    code, _, err = lint("--explain", "CE999")
    assert code == 2 and "CE999" in err
    code, _, err = lint()
    assert code == 2 and "give files or directories" in err


# --- suppression ------------------------------------------------------------------------------------------


def test_ignore_next_line(tmp_path: Path) -> None:
    text = ONE_FIX.replace("  if (cuGetProcAddress", "  // cuentry: ignore-next-line[CE010]\n  if (cuGetProcAddress")
    f = _file(tmp_path, text)
    code, out, _ = lint("--isolated", f)
    assert code == 0 and "CE010" not in out, out
    stale = _file(tmp_path, text.replace("12040", "3020"), "stale.cpp")
    code, out, _ = lint("--isolated", stale)
    assert code == 1 and re.search(r"stale\.cpp:8: warning: unused suppression of CE010", out), out
    bare = _file(tmp_path, ONE_FIX.replace("  if (cuGetProcAddress", "  /* cuentry: ignore-next-line */\n"
                                           "  if (cuGetProcAddress"), "bare.cpp")
    assert lint("--isolated", bare)[0] == 0


def test_the_summary_counts_suppression_problems(tmp_path: Path) -> None:
    f = _file(tmp_path, ONE_FIX.replace("12040", "3020").replace("return 1;", "return 1;  // cuentry: ignore[CE004]"))
    code, out, _ = lint("--isolated", f)
    assert code == 1 and out.splitlines()[-1] == "no findings in 1 file (11 lines); 1 unused suppression", out


# --- configuration -------------------------------------------------------------------------------------------


def test_an_unknown_rule_in_the_configuration_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.cuentry.lint]\nselect = ["CE999"]\n')
    f = _file(tmp_path, ONE_FIX)
    code, _, err = lint(f)
    assert code == 2 and re.search(r"pyproject\.toml:5: select: unknown rule 'CE999'", err), err


def test_paths_are_printed_without_a_leading_dot_slash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    _file(tmp_path / "src", ONE_FIX)
    monkeypatch.chdir(tmp_path)
    _, out, _ = lint("--isolated", ".")
    assert out.startswith("src/loader.cpp:8:7: CE010"), out
    _, out, _ = lint("--isolated", "./src/loader.cpp")
    assert out.startswith("src/loader.cpp:8:7: CE010"), out


@pytest.mark.parametrize(("env", "colored"), [({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
                                              ({}, False)])
def test_force_color_and_no_color(env: dict[str, str], colored: bool, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _, out, _ = lint("--isolated", _file(tmp_path, ONE_FIX))
    assert ("\033[" in out) is colored, out


def test_the_library_applies_the_configuration_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuentry.lint import lint_paths

    repo = tmp_path / "repo"
    for d in ("src", "tests", "third_party", "build_out"):
        (repo / d).mkdir(parents=True)
        _file(repo / d, PINS, "pins.cpp")
    (repo / "pyproject.toml").write_text('[tool.cuentry.lint]\nexclude = ["third_party"]\n\n'
                                         '[tool.cuentry.lint.per-file-ignores]\n"tests/*" = ["CE010"]\n')
    (repo / ".gitignore").write_text("build_out/\n")
    import subprocess

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(repo)
    rep = lint_paths(["."])
    _, out, _ = lint("--json", ".")
    cli = [(f["path"], f["line"], f["code"]) for f in json.loads(out)["findings"]]
    assert [(f.path, f.line, f.code) for f in rep.findings] == cli
    files = {p for p, _, _ in cli}
    assert files == {"src/pins.cpp", "tests/pins.cpp"}, files
    assert not [c for p, _, c in cli if p == "tests/pins.cpp" and c == "CE010"]


# --- rules: one unit, its page, facts as fields ------------------------------------------------------------


def test_each_rule_is_one_unit_with_its_page_and_its_fix() -> None:
    from cuentry.lint import fix
    from cuentry.lint.rules import RULES, page

    for r in RULES:
        assert r.what and r.why and r.fix_safety, r.code
        text = page(r)
        assert text.startswith(f"# {r.code} {r.name}") and r.why in text and r.bad in text and r.good in text
    fixers = {r.code: r.fix for r in RULES}
    assert fixers["CE011"] is not None and fixers["CE005"] is None and fixers["CE006"] is None
    assert all(f is None or f.__module__ == fix.__name__ for f in fixers.values())


def test_sarif_help_uri_is_the_versioned_rule_page(tmp_path: Path) -> None:
    from cuentry import __version__

    f = _file(tmp_path, ONE_FIX)
    _, out, _ = lint("--sarif", "--isolated", f)
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    major_minor = ".".join(__version__.split(".")[:2])
    assert rules[0]["helpUri"] == f"https://cuentry.github.io/cuentry/{major_minor}/rules/ce001/"


def test_the_rules_reference_page_keeps_no_measurement_history() -> None:
    page = (HERE.parent / "docs" / "lint.md").read_text()
    history = (HERE.parent / "docs" / "lint-measurements.md").read_text()
    assert len(page.splitlines()) < 700 and "Set 3" not in page and "held-out" not in page and "precision" not in page
    assert "Set 3" in history and "held-out" in history


def test_the_docs_hook_writes_one_page_per_rule_into_the_nav() -> None:
    import importlib.util

    from cuentry.lint.rules import RULES

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", HERE.parent / "tools" / "mkdocs_hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    pages = hooks.rule_pages()
    assert set(pages) == {f"rules/{r.code.lower()}.md" for r in RULES} | {"rules/index.md"}
    nav = hooks.on_config({"nav": [{"Reference": [{"Lint rules": "lint.md"}]}], "docs_dir": str(HERE.parent / "docs")})
    (ref,) = nav["nav"]
    rules = ref["Reference"][0]["Lint rules"]
    assert rules[0] == "lint.md" and {next(iter(x.values())) for x in rules[1:]} >= {"rules/ce001.md", "rules/ce011.md"}


def test_rule_hits_carry_their_facts_as_fields() -> None:
    from cuentry.lint import lint_text
    from cuentry.lint.rules import Hit, run

    src = ONE_FIX.replace("12040", "CUDA_VERSION")
    _, unit = lint_text(src, "x.cpp")
    hits = list(run(unit))
    assert hits and all(isinstance(h, Hit) for _, h in hits)
    (rule, hit), = [(r, h) for r, h in hits if r.code == "CE001"]
    assert hit.symbol == "cuMemAlloc" and hit.hint.startswith("pin 3020") and hit.hint in hit.message


def test_ce007_names_the_per_thread_typedef_the_pin_binds(tmp_path: Path) -> None:
    src = ONE_FIX.replace("PFN_cuMemAlloc_v3020", "PFN_cuStreamBeginCapture_v10010").replace(
        '"cuMemAlloc"', '"cuStreamBeginCapture"').replace("12040", "10010").replace(
        "CU_GET_PROC_ADDRESS_LEGACY_STREAM", "CU_GET_PROC_ADDRESS_DEFAULT")
    _, out, _ = lint("--isolated", _file(tmp_path, src))
    assert "PFN_cuStreamBeginCapture_v10010_ptsz" in out and "v10000" not in out, out


def test_lint_writers_print_nothing_themselves() -> None:
    src = Path(sys.modules["cuentry.cli"].__file__ or "").parent.parent / "lint" / "writers"
    for p in src.glob("*.py"):
        assert not re.search(r"^\s*print\(", p.read_text(), re.M), p
    assert os.path.isdir(src)


def _json_findings(out: str) -> list[dict[str, Any]]:
    return list(json.loads(out)["findings"])


def test_a_fix_whose_text_cannot_be_linted_again_is_withdrawn_and_the_run_goes_on(tmp_path: Path) -> None:
    """The fixes are verified in the supervised workers (`engine.Isolated`): a fixed text its worker dies on is a
    fix withdrawn with why, never the end of the run."""
    from cuentry.lint import apply, lint_paths
    from cuentry.lint.config import Config
    from cuentry.lint.engine import Isolated, Problem, Settings

    f = _file(tmp_path, ONE_FIX)
    rep = lint_paths([f], config=Config())
    real = Isolated(Settings())
    texts: list[str] = []

    def lint(text: str, path: str) -> Any:
        texts.append(text)
        return real(text, path) if len(texts) == 1 else Problem(path, "the linter's worker process died on it (SIGSEGV)")

    try:
        p = apply.plan(rep, Settings(), lint=lint)  # type: ignore[arg-type]
    finally:
        real.close()
    assert len(texts) >= 2 and not p.applied and not p.texts
    assert "could not be linted again (the linter's worker process died on it (SIGSEGV))" in p.withdrawn[0].message
