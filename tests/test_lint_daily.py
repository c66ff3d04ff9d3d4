"""cuentry lint as a tool run every day: file names that cannot break the output, standard input, the
configuration file, .gitignore and exclusions, unused suppressions, exact SARIF, no leftovers, --fix/--diff."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")
jsonschema = pytest.importorskip("jsonschema")

from cuentry.cli import main  # noqa: E402
from cuentry.errors import LintConfigError  # noqa: E402
from cuentry.lint import apply, config, fix  # noqa: E402
from cuentry.lint.rules import RULE_CODES  # noqa: E402
from cuentry.lint.sarif import language  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_cache")

HERE = Path(__file__).parent
PINS = (HERE / "lint_corpus" / "pins.cpp").read_text()
LOADER = (HERE / "data" / "lint_fix" / "loader.cpp").read_text()
SCHEMA = json.loads((HERE / "data" / "sarif-schema-2.1.0.json").read_text())
BAD_NAME = os.fsdecode(b"bad\xff.cpp")
NL_NAME = "nl\nx.cpp:1:1: CE001 error: forged\x1b[31m\x07\r.cpp"
FIXABLE_IN_LOADER = 13


def lint(*args: str, stdin: bytes | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(["lint", *args], stdout=o, stderr=e)
    return code, o.getvalue(), e.getvalue()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


# --- file names ----------------------------------------------------------------------------------


@pytest.fixture
def hostile_names(tmp_path: Path) -> Path:
    (tmp_path / "pins.cpp").write_text(PINS)
    try:
        (tmp_path / BAD_NAME).write_text(PINS)
        (tmp_path / NL_NAME).write_text(PINS)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes no such names")
    return tmp_path


def test_names_not_utf8_or_with_control_characters_are_escaped_one_finding_a_line(hostile_names: Path) -> None:
    code, out, err = lint(str(hostile_names))
    assert code == 1 and "internal error" not in err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out + err), "a control character reached the terminal"
    lines = out.splitlines()
    findings = [ln for ln in lines if re.search(r":\d+:\d+: CE\d{3}", ln)]
    per_file = sum(1 for ln in findings if ln.startswith(str(hostile_names / "pins.cpp")))
    assert per_file >= 5 and len(findings) == 3 * per_file       # one line per finding, nothing forged
    assert sum("bad\\xff.cpp:" in ln for ln in findings) == per_file
    assert sum("nl\\nx.cpp:1:1: CE001 error: forged\\x1b[31m\\x07\\r.cpp:" in ln for ln in findings) == per_file


def test_json_and_sarif_survive_such_names_and_stay_valid_utf8(hostile_names: Path) -> None:
    code, out, err = lint("--json", str(hostile_names))
    doc = json.loads(out.encode("utf-8").decode("utf-8", "strict"))
    assert code == 1 and "internal error" not in err
    paths = {f["path"] for f in doc["findings"]}
    assert str(hostile_names / "bad\\xff.cpp") in paths and str(hostile_names / NL_NAME) in paths
    assert "\\udcff" not in out
    code, out, _ = lint("--sarif", str(hostile_names))
    sarif = json.loads(out)
    jsonschema.Draft7Validator(SCHEMA).validate(sarif)
    uris = {a["location"]["uri"] for a in sarif["runs"][0]["artifacts"]}
    assert any(u.endswith("bad%FF.cpp") for u in uris)
    assert any(u.endswith("nl%0Ax.cpp%3A1%3A1%3A%20CE001%20error%3A%20forged%1B%5B31m%07%0D.cpp") for u in uris)


# --- standard input ------------------------------------------------------------------------------


def test_stdin_is_linted_under_the_name_given(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = lint("-", stdin=PINS.encode(), monkeypatch=monkeypatch)
    assert code == 1 and out.startswith("<stdin>:9:7: CE010")
    code, out, _ = lint("--json", "-", "--stdin-filename", "src/loader.cu", stdin=PINS.encode(), monkeypatch=monkeypatch)
    doc = json.loads(out)
    assert {f["path"] for f in doc["findings"]} == {"src/loader.cu"} and doc["judged"][0]["path"] == "src/loader.cu"
    assert all(f["fingerprint"] for f in doc["findings"])


def test_stdin_fix_prints_the_fixed_source(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = lint("--fix", "-", stdin=PINS.encode(), monkeypatch=monkeypatch)
    assert '"cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM' in out and "13000" not in out
    assert len(out.splitlines()) == len(PINS.splitlines())
    _, out, _ = lint("--fix", "-", stdin=b"int x;\n", monkeypatch=monkeypatch)    # nothing to fix: the source
    assert out == "int x;\n"


# --- configuration --------------------------------------------------------------------------------


def _repo(tmp_path: Path, conf: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.cuentry.lint]\n" + conf)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pins.cpp").write_text(PINS)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "pins.cpp").write_text(PINS)
    return tmp_path


def test_pyproject_configuration_selects_ignores_and_excludes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, 'ignore = ["CE006"]\nexclude = ["vendor"]\n'
                           '[tool.cuentry.lint.per-file-ignores]\n"src/*.cpp" = ["CE007"]\n')
    monkeypatch.chdir(repo / "src")
    _, out, _ = lint("--json", str(repo))
    codes = {(Path(f["path"]).parent.name, f["code"]) for f in json.loads(out)["findings"]}
    assert ("src", "CE010") in codes and not {c for d, c in codes} & {"CE006", "CE007"}
    assert all(d == "src" for d, _ in codes)
    _, out, _ = lint("--json", "--select", "CE006", str(repo))          # the command line wins
    assert {f["code"] for f in json.loads(out)["findings"]} == {"CE006"}
    _, out, _ = lint("--json", "--isolated", str(repo))
    assert any(Path(f["path"]).parent.name == "vendor" for f in json.loads(out)["findings"])


def test_cuentry_toml_lint_table_and_a_manifest_of_that_name(tmp_path: Path) -> None:
    (tmp_path / "cuentry.toml").write_text("[tables.acme]\n")        # a manifest: not a configuration
    assert config.find(str(tmp_path)) is None
    (tmp_path / "cuentry.toml").write_text('[lint]\nselect = ["CE01"]\nfloor = 12000\ntoolkit = "12.4"\n')
    cfg = config.load(config.find(str(tmp_path)))
    assert cfg.select == ["CE01"] and cfg.floor == 12000 and cfg.toolkit == "12.4"


@pytest.mark.parametrize(("conf", "line", "key"), [
    ('select = "CE001"\n', 5, "select"),
    ("\nfloor = 'high'\n", 6, "floor"),
    ("selct = []\n", 5, "selct"),
    ("fix = 1\n", 5, "fix"),
])
def test_configuration_errors_name_file_line_and_key(tmp_path: Path, conf: str, line: int, key: str) -> None:
    repo = _repo(tmp_path, conf)
    with pytest.raises(LintConfigError) as info:
        config.load(str(repo / "pyproject.toml"))
    assert (info.value.path, info.value.line, info.value.key) == (str(repo / "pyproject.toml"), line, key)
    code, _, err = lint(str(repo / "src"))
    assert code == 2 and f"pyproject.toml:{line}: {key}:" in err


def test_gitignore_is_respected_unless_told(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = _repo(tmp_path, "")
    _git(repo, "init", "-q")
    (repo / ".gitignore").write_text("vendor/\n")
    _, out, _ = lint("--json", str(repo))
    assert {Path(f["path"]).parent.name for f in json.loads(out)["findings"]} == {"src"}
    _, out, _ = lint("--json", "--no-respect-gitignore", str(repo))
    assert {Path(f["path"]).parent.name for f in json.loads(out)["findings"]} == {"src", "vendor"}
    _, out, _ = lint("--json", "--no-respect-gitignore", "--exclude", "src", str(repo))
    assert {Path(f["path"]).parent.name for f in json.loads(out)["findings"]} == {"vendor"}


def test_statistics_count_by_rule(tmp_path: Path) -> None:
    (tmp_path / "pins.cpp").write_text(PINS)
    _, out, _ = lint("--statistics", "--isolated", str(tmp_path))
    assert re.search(r"^\s+2\s+CE010\s+\[\*\] pin-not-an-abi$", out, re.M)
    assert "pins.cpp:" not in out


def test_unused_and_unknown_suppressions_are_reported(tmp_path: Path) -> None:
    text = PINS.replace("// expect: CE010", "// cuentry: ignore[CE010]", 1).replace(
        "// expect: CE009", "// cuentry: ignore[CE999]").replace("// expect: CE003", "// cuentry: ignore[CE004]", 1)
    (tmp_path / "s.cpp").write_text(text)
    code, out, _ = lint("--json", "--isolated", str(tmp_path))
    doc = json.loads(out)
    got = sorted((u["line"], u["message"].split(":")[0]) for u in doc["unused_suppressions"])
    assert got == [(10, f"suppression names unknown rule 'CE999' (the rules are CE001..{RULE_CODES[-1]})"),
                   (12, "unused suppression of CE004")]
    assert code == 1 and 9 not in {f["line"] for f in doc["findings"] if f["code"] == "CE010"}


# --- SARIF -----------------------------------------------------------------------------------------


def test_sarif_regions_languages_relative_uris_fixes_and_help(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pins.cpp").write_text(PINS)
    (tmp_path / "a.c").write_text("int x;\n")
    monkeypatch.chdir(tmp_path)
    _, out, _ = lint("--sarif", "--isolated", ".")
    doc = json.loads(out)
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path(os.getcwd()).as_uri() + "/"
    assert {a["location"]["uri"]: a["sourceLanguage"] for a in run["artifacts"]} == {
        "a.c": "c", "sub/pins.cpp": "cplusplus"}
    first = run["results"][0]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (9, 7, 9, 87)
    assert first["fixes"][0]["artifactChanges"][0]["replacements"] == [{
        "deletedRegion": {"startLine": 9, "startColumn": 42, "endLine": 9, "endColumn": 47},
        "insertedContent": {"text": "3020"}}]
    pages = {r["helpUri"]: r["id"] for r in run["tool"]["driver"]["rules"]}     # each rule's page on the site
    assert all(uri.startswith("https://cuentry.github.io/cuentry/") and uri.endswith(f"/rules/{code.lower()}/")
               for uri, code in pages.items()) and len(pages) == len(run["tool"]["driver"]["rules"])


@pytest.mark.parametrize(("name", "lang"), [("a.c", "c"), ("a.cpp", "cplusplus"), ("a.cc", "cplusplus"),
                                            ("a.h", "cplusplus"), ("a.hpp", "cplusplus"), ("a.cu", "cuda"),
                                            ("a.cuh", "cuda"), ("a.py", "python"), ("a.pyw", "python")])
def test_source_languages(name: str, lang: str) -> None:
    assert language(name) == lang


def test_a_python_script_without_a_suffix_is_python_in_sarif(tmp_path: Path) -> None:
    (tmp_path / "tool").write_text("#!/usr/bin/python3\nprint()\n")
    (tmp_path / "header").write_text("#pragma once\n")
    assert language(str(tmp_path / "tool")) == "python" and language(str(tmp_path / "header")) == "cplusplus"


# --- no leftovers ----------------------------------------------------------------------------------


def test_a_run_leaves_nothing_in_tmpdir(tmp_path: Path) -> None:
    pytest.importorskip("clang.cindex")
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    (tmp_path / "loader.cpp").write_text(LOADER)
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_CACHE_HOME": str(cache)}
    for _ in range(2):
        got = subprocess.run([sys.executable, "-m", "cuentry", "lint", "--toolkit", "12.4", "--json",
                              str(tmp_path / "loader.cpp")], capture_output=True, text=True, env=env, timeout=300,
                             check=False)
        assert got.returncode == 1, got.stderr
        assert json.loads(got.stdout)["judged"][0]["engine"] == "clang"
        assert list(tmp.iterdir()) == []
    assert len(list((cache / "cuentry" / "lint-headers").iterdir())) == 1


# --- fixes -------------------------------------------------------------------------------------------


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A repository with a configuration, a .gitignore, hostile names and a loader with a dozen faults."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.cuentry.lint]\ntoolkit = "12.4"\n'
                                         'exclude = ["third_party"]\n')
    (repo / ".gitignore").write_text("build-out/\n")
    (repo / "src").mkdir()
    (repo / "src" / "loader.cpp").write_text(LOADER)
    (repo / "third_party").mkdir()
    (repo / "third_party" / "pins.cpp").write_text(PINS)
    (repo / "build-out").mkdir()
    (repo / "build-out" / "pins.cpp").write_text(PINS)
    try:
        (repo / "src" / BAD_NAME).write_text("int x;\n")
        (repo / "src" / NL_NAME).write_text("int y;\n")
    except (OSError, UnicodeEncodeError):
        pass
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return repo


def _changed_lines(repo: Path) -> list[str]:
    return [ln for ln in _git(repo, "diff", "-U0").splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]


def test_fix_repairs_every_certain_fault_and_nothing_else(scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scratch)
    _, out, _ = lint("--json", ".")
    before = json.loads(out)["findings"]
    safe = [f for f in before if f["fix"] == "safe"]
    assert len(safe) == FIXABLE_IN_LOADER and {Path(f["path"]).name for f in safe} == {"loader.cpp"}
    code, out, err = lint("--fix", ".")
    assert f"fixed {FIXABLE_IN_LOADER} findings" in out and "withdrawn" not in err
    assert _git(scratch, "diff", "--name-only").split() == ["src/loader.cpp"]
    changed = _changed_lines(scratch)
    assert len(changed) == 2 * FIXABLE_IN_LOADER
    for old, new in zip(changed[:FIXABLE_IN_LOADER], changed[FIXABLE_IN_LOADER:], strict=True):
        assert old.startswith("-") and new.startswith("+")
    _, out, _ = lint("--json", ".")
    after = json.loads(out)["findings"]
    assert [(f["code"], f["line"]) for f in after] == [("CE006", 37)]    # the one fault no fix repairs
    assert code == 1


def test_fixed_loader_parses_and_lints_clean_against_old_and_new_headers(scratch: Path) -> None:
    pytest.importorskip("clang.cindex")
    lint("--fix", str(scratch / "src" / "loader.cpp"))
    for tk in ("12.0", "12.4", "13.0"):      # the loader uses the 12.x cuGetProcAddress (with its status)
        _, out, _ = lint("--json", "--toolkit", tk, str(scratch / "src" / "loader.cpp"))
        doc = json.loads(out)
        assert doc["judged"][0]["engine"] == "clang", (tk, doc["judged"])
        assert {f["code"] for f in doc["findings"]} == {"CE006"}, tk


def test_diff_shows_and_changes_nothing(scratch: Path) -> None:
    code, out, _ = lint("--diff", str(scratch / "src" / "loader.cpp"))
    assert out.count("\n-  ok &=") == FIXABLE_IN_LOADER and out.count("\n+  ok &=") == FIXABLE_IN_LOADER
    assert _git(scratch, "status", "--porcelain") == "" and code == 1


def test_unsafe_fixes_only_when_asked(tmp_path: Path) -> None:
    text = PINS.replace("void *p = nullptr;", "void *p = nullptr; (void)p;")
    f = tmp_path / "u.cpp"
    f.write_text(text)
    _, out, _ = lint("--json", "--isolated", "--toolkit", "12.4", str(f))
    kinds = {(x["line"], x["code"]): x["fix"] for x in json.loads(out)["findings"]}
    assert kinds[(10, "CE009")] == "unsafe" and kinds[(9, "CE010")] == "safe" and kinds[(16, "CE006")] == "none"
    lint("--fix", "--isolated", "--toolkit", "12.4", str(f))
    assert "&p, 1000," in f.read_text() and "&p, 13000," not in f.read_text()
    lint("--fix", "--unsafe-fixes", "--isolated", "--toolkit", "12.4", str(f))
    assert "&p, 1000," not in f.read_text()


def test_a_fix_that_does_not_verify_is_withdrawn_with_a_note(tmp_path: Path) -> None:
    f = tmp_path / "w.cpp"
    f.write_text(PINS)
    _, _, err = lint("--fix", "--isolated", str(f))
    assert re.search(r"w\.cpp:13: fix withdrawn: CE003 \(name cuMemcpy at 7000\): the fix brings a new CE008", err)
    assert '"cuMemcpy_ptds"' in f.read_text()


def test_fix_keeps_files_it_cannot_rewrite_exactly(tmp_path: Path) -> None:
    f = tmp_path / "bom.cpp"
    f.write_bytes(b"\xef\xbb\xbf" + PINS.encode())
    _, _, err = lint("--fix", "--isolated", str(f))
    assert "not plain UTF-8" in err and f.read_bytes() == b"\xef\xbb\xbf" + PINS.encode()


def test_fix_plan_is_exact_spans() -> None:
    text = 'x = cuGetProcAddress("cuMemAlloc", &p, 13000, F(a, b), &q);\n'
    got = fix._call(text, 1, 5)
    assert got is not None
    assert [text[a:b] for a, b in got[2]] == ['"cuMemAlloc"', "&p", "13000", "F(a, b)", "&q"]
    assert fix.span(text, 1, 5) == (1, 59)
    assert fix.span(text, 1, 22) == (1, 34)


MACROS = """\
#include <cuda.h>
#include <cudaTypedefs.h>

static PFN_cuMemAlloc_v3020 p_cuMemAlloc;
static PFN_cuMemFree_v3020 p_cuMemFree;
static PFN_cuCtxCreate_v3020 p_cuCtxCreate;
static PFN_cuCtxDestroy_v4000 p_cuCtxDestroy;

#define LOAD(name) \\
  if (cuGetProcAddress(#name, (void **)&p_##name, 12040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 0
#define LOAD_AT(name, v) \\
  if (cuGetProcAddress(#name, (void **)&p_##name, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 0

int load(void) {
  CUdriverProcAddressQueryResult q;
  LOAD(cuMemAlloc);
  LOAD(cuMemFree);
  LOAD_AT(cuCtxCreate, 12000);
  return 1;
}
"""


def _clang_only() -> None:
    pytest.importorskip("clang.cindex")
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang cannot be loaded")


@pytest.mark.parametrize(("extra", "definition_fixed"), [("", True), ("LOAD(cuCtxDestroy);", False)])
def test_macro_pins_are_fixed_at_the_definition_only_when_every_expansion_agrees(
        tmp_path: Path, extra: str, definition_fixed: bool) -> None:
    _clang_only()
    f = tmp_path / "m.cpp"
    f.write_text(MACROS.replace("  return 1;", f"  {extra}\n  return 1;" if extra else "  return 1;"))
    lint("--fix", "--isolated", "--toolkit", "12.4", str(f))
    text = f.read_text()
    assert "LOAD_AT(cuCtxCreate, 3020);" in text                 # a macro's argument: fixed where it is written
    assert ("&p_##name, 3020, CU_GET" in text) is definition_fixed
    assert ("&p_##name, 12040, CU_GET" in text) is not definition_fixed
    assert text.count("3020") == MACROS.count("3020") + 1 + definition_fixed


DECLTYPE = """\
#include <cuda.h>
#include <cudaTypedefs.h>

int load(void) {
  CUdriverProcAddressQueryResult q;
  decltype(&cuMemAlloc) p_alloc = nullptr;
  if (cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 0;
  return 1;
}
"""


def test_a_decltype_pointer_becomes_the_pfn_typedef_of_the_bound_abi(tmp_path: Path) -> None:
    _clang_only()
    f = tmp_path / "d.cpp"
    f.write_text(DECLTYPE)
    _, out, _ = lint("--json", "--isolated", "--pedantic", "--toolkit", "12.4", str(f))
    assert [(x["code"], x["fix"]) for x in json.loads(out)["findings"]] == [("CE004", "safe")]
    lint("--fix", "--isolated", "--pedantic", "--toolkit", "12.4", str(f))
    assert f.read_text() == DECLTYPE.replace("decltype(&cuMemAlloc) p_alloc", "PFN_cuMemAlloc_v3020 p_alloc")
    f.write_text(DECLTYPE.replace("#include <cudaTypedefs.h>\n", ""))   # no typedefs to name it by: no fix
    _, out, _ = lint("--json", "--isolated", "--pedantic", "--toolkit", "12.4", str(f))
    assert [x["fix"] for x in json.loads(out)["findings"] if x["code"] == "CE004"] == ["none"]


def test_fix_on_the_whole_corpus_applies_or_withdraws_every_safe_fix(tmp_path: Path) -> None:
    """Every safe fix the lint corpus's listing promises is applied (a fix that does not verify is not promised,
    and withdrawn with a note); only the lines of the applied ones change; a second --fix finds nothing more."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "corpus"
    shutil.copytree(HERE / "lint_corpus", repo, ignore=shutil.ignore_patterns("semantic", "*.py"))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "corpus")
    _, out, _ = lint("--json", "--isolated", str(repo))
    safe = {(f["path"], f["line"]) for f in json.loads(out)["findings"] if f["fix"] == "safe"}
    _, out, _ = lint("--sarif", "--isolated", str(repo))
    def path(uri: str) -> str:    # relative to %SRCROOT% (the working directory) or a file: URI
        u = urllib.parse.urlparse(uri)
        return urllib.parse.unquote(u.path) if u.scheme == "file" else str(Path.cwd() / urllib.parse.unquote(uri))

    edits: dict[tuple[str, int], set[tuple[str, int]]] = {}    # a safe finding -> the lines its fix rewrites
    for r in json.loads(out)["runs"][0]["results"]:
        at = r["locations"][0]["physicalLocation"]
        for ch in (c for x in r.get("fixes", ()) if "(safe fix" in x["description"]["text"] for c in x["artifactChanges"]):
            for d in (x["deletedRegion"] for x in ch["replacements"]):
                edits.setdefault((path(at["artifactLocation"]["uri"]), at["region"]["startLine"]), set()).update(
                    (path(ch["artifactLocation"]["uri"]), n) for n in range(d["startLine"], d["endLine"] + 1))
    assert set(edits) <= safe      # a fix withdrawn when verified has no SARIF fix
    _, out, err = lint("--fix", "--isolated", str(repo))
    withdrawn = {(m.group(1), int(m.group(2))) for m in re.finditer(r"^(.*):(\d+): fix withdrawn: ", err, re.M)}
    applied = int(re.search(r"fixed (\d+) finding", out).group(1))     # type: ignore[union-attr]
    assert applied >= 10 and not withdrawn & safe and len(withdrawn) <= 2     # a fix promised is never withdrawn
    changed = set()
    for name in _git(repo, "diff", "--name-only").split():
        for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? ", _git(repo, "diff", "-U0", "--", name), re.M):
            changed |= {(str(repo / name), int(m.group(1)) + i) for i in range(int(m.group(2) or 1))}
    assert changed and changed <= set().union(*(edits.get(f, set()) for f in safe))
    _, out, _ = lint("--json", "--isolated", str(repo))
    assert not [f for f in json.loads(out)["findings"] if f["fix"] == "safe"]      # nothing promised is left


def test_a_file_that_cannot_be_written_keeps_its_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pins.cpp").write_text(PINS)

    def refuse(path: str, text: str, **kw: object) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(apply, "write", refuse)
    code, out, err = lint("--fix", "--isolated", str(tmp_path))
    assert code == 1 and "pins.cpp: fixes not written: Permission denied" in err
    assert "CE010" in out and "fixed" not in out and (tmp_path / "pins.cpp").read_text() == PINS


def test_an_export_taken_by_the_wrong_name_gets_the_name_of_the_pointers_abi(tmp_path: Path) -> None:
    f = tmp_path / "d.c"
    src = (HERE / "lint_corpus" / "dlsym_loader.c").read_text()
    f.write_text(src)
    lint("--fix", "--isolated", "--toolkit", "12.4", str(f))
    assert f.read_text() == src.replace('dlsym(lib, "cuMemAlloc");', 'dlsym(lib, "cuMemAlloc_v2");').replace(
        'sym("cuMemFree_v2");', 'sym("cuMemFree");')
    _, out, _ = lint("--json", "--isolated", "--toolkit", "12.4", str(f))
    assert not [x for x in json.loads(out)["findings"] if x["code"] == "CE011"]


def test_a_configuration_that_is_not_a_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pyproject.toml"
    os.mkfifo(fifo)
    script = ("import sys\nfrom cuentry.cli import main\n"
              f"sys.exit(main(['lint', '--config', {str(fifo)!r}, {str(tmp_path)!r}]))\n")
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert got.returncode == 2 and "not a regular file" in got.stderr
    assert config.find(str(tmp_path)) is None                 # walking up skips it
    big = tmp_path / "sub" / "pyproject.toml"
    big.parent.mkdir()
    big.write_text("[tool.cuentry.lint]\n" + "# x\n" * (config.MAX_BYTES // 4 + 1))
    with pytest.raises(LintConfigError, match="larger than"):
        config.load(str(big))


def test_spans_of_hostile_text_never_fail() -> None:
    import random

    rng = random.Random(30)
    alphabet = 'cuGetProcAddress("x", &p, 12000, F(a), &q);()[]{}"\'\\/*\n #define L(n) \\\n'
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 80)))
        line, col = rng.randrange(0, 5), rng.randrange(-2, 40)
        end = fix.span(text, line, col)
        assert isinstance(end, tuple) and len(end) == 2
        fix._call(text, line, col)
        got = fix._type_span(text, 0, len(text))
        assert got is None or 0 <= got[0] <= got[1] <= len(text)


HANDWRITTEN = (HERE / "data" / "lint_fix" / "handwritten.cpp").read_text()
HANDWRITTEN_SAFE = {          # line of the finding -> (old, new) of the one span its fix rewrites
    20: ("static CUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr;", "static PFN_cuMemAlloc_v3020 p_alloc = nullptr;"),
    21: ("static my_free_t p_free;", "static PFN_cuMemFree_v3020 p_free;"),
    22: ("  CUresult (CUDAAPI *memGetInfo)(size_t *, size_t *);", "  PFN_cuMemGetInfo_v3020 memGetInfo;"),
    24: ("CUresult r = ((CUresult (*)(void))raw)();", "CUresult r = ((PFN_cuCtxSynchronize_v2000)raw)();"),
}
HANDWRITTEN_UNSAFE = ("static CUresult (*p_alloc_small)(CUdeviceptr *, unsigned int);",
                      "static PFN_cuMemAlloc_v3020 p_alloc_small;")


def _ce004(path: Path, toolkit: str = "12.4") -> dict[int, str]:
    _, out, _ = lint("--json", "--isolated", "--toolkit", toolkit, str(path))
    return {x["line"]: x["fix"] for x in json.loads(out)["findings"] if x["code"] == "CE004"}


@pytest.mark.parametrize("toolkit", ["12.4", "13.0"])
def test_a_hand_written_function_type_becomes_the_pfn_typedef_of_the_bound_abi(tmp_path: Path, toolkit: str) -> None:
    """A declarator, a variable of a hand-written typedef, a struct field and the cast of the `void *` that
    received the pointer: safe where the function type is the bound ABI's, unsafe where it is not. Unpinned,
    the ABI of the pointer's own type (CUDA 13 binds cuCtxSynchronize's 13000 ABI; the cast is the 2000 one,
    which line 24's CE001 fix pins)."""
    _clang_only()
    f = tmp_path / "hw.cpp"
    f.write_text(HANDWRITTEN)
    assert _ce004(f, toolkit) == {20: "safe", 21: "safe", 22: "safe", 23: "unsafe", 24: "safe"}
    lint("--fix", "--isolated", "--toolkit", toolkit, str(f))
    want = HANDWRITTEN.replace("CUDA_VERSION, CU_GET", "2000, CU_GET")     # line 24's CE001, fixed alongside
    for old, new in HANDWRITTEN_SAFE.values():
        assert want.count(old) == 1
        want = want.replace(old, new)
    assert f.read_text() == want                     # exactly those spans; the typedef itself is left
    assert _ce004(f, toolkit) == {23: "unsafe"}
    lint("--fix", "--unsafe-fixes", "--isolated", "--toolkit", toolkit, str(f))
    assert f.read_text() == want.replace(*HANDWRITTEN_UNSAFE) and _ce004(f, toolkit) == {}


@pytest.mark.parametrize("change", [
    ("#include <cudaTypedefs.h>\n", ""),                                            # no typedefs to name it by
    ("static CUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr;",               # two declarators in one
     "static CUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr, (*p_other)(CUdeviceptr *, size_t);"),
    ("static CUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr;",               # declared twice
     "extern CUresult (*p_alloc)(CUdeviceptr *, size_t);\nCUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr;"),
])
def test_a_hand_written_type_is_not_fixed_where_the_span_is_not_certain(tmp_path: Path, change: tuple[str, str]) -> None:
    _clang_only()
    f = tmp_path / "hw.cpp"
    src = HANDWRITTEN.replace(*change)
    f.write_text(src)
    got = _ce004(f)
    line = src[:src.index('"cuMemAlloc"')].count("\n") + 1
    assert got[line] == "none"
    assert list(got.values()).count("none") == (len(got) if change[1] == "" else 1)


def test_type_spans() -> None:
    def new(s: str) -> str | None:
        got = fix._type_span(s, 0, len(s.rstrip(";")))
        return None if got is None else s[:got[0]] + "PFN_x" + got[2] + s[got[1]:]

    assert new("static CUresult (*p)(CUdeviceptr *, size_t);") == "static PFN_x p;"
    assert new("CUresult (CUDAAPI * p)(int (*)(void), size_t) = 0;") == "PFN_x p = 0;"
    assert new("extern my_t p;") == "extern PFN_x p;"
    assert new("(CUresult (*)(void))raw") == "(PFN_x)raw"
    assert new("reinterpret_cast<CUresult (*)()>(raw)") == "reinterpret_cast<PFN_x>(raw)"
    for refused in ("auto p = nullptr;", "const my_t p;", "my_t a, b;", "CUresult (*p[2])(void);",
                    "decltype(&cuMemAlloc) p;", "CUresult (*p)(void), (*q)(void);", "(x"):
        assert new(refused) is None, refused


def test_type_span_of_long_names_takes_linear_time() -> None:
    """A declaration with a long name and no function declarator (tests/lint_corpus/triton_like.c has one) once
    backtracked exponentially in the declarator pattern: 20 letters took 8 s, 40 would never end. Run apart,
    with a timeout, so a regression fails instead of hanging the suite."""
    code = ("from cuentry.lint import fix\n"
            "for n in (40, 400, 40000):\n"
            "    s = 'static CUresult ' + 'a' * n + ' = 0'\n"
            "    assert fix._type_span(s + ';', 0, len(s)) is not None\n"
            "    assert fix._type_span('CUresult ' + 'b ' * n + '(*p)(void);', 0, 2 * n + 19) is not None\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def _header_dirs() -> list[tuple[str, str]]:
    """(name, include directory): the headers cuentry writes from its catalog for CUDA 11.8, 12.4 and 13.0,
    and each real toolkit's found here."""
    from cuentry.catalog import catalog
    from cuentry.lint.clang.headers import generated_dir

    dirs = [(f"catalog {tk}", generated_dir(catalog(), tk)) for tk in ("11.8", "12.4", "13.0")]
    real = {os.path.realpath(str(p.parent)) for p in Path("/usr/local").glob("cuda*/include/cudaTypedefs.h")}
    return dirs + [(f"real {d}", d) for d in sorted(real)]


def _compiles(compiler: str, include: str, path: Path) -> str:
    """The compiler's errors for `path` against the headers in `include` ("" when it compiles). CUDA 11.x's
    cuGetProcAddress takes no query result: built for it, the loader maps the 12.0 form onto it (the compat
    header such loaders include)."""
    from cuentry.lint.clang.headers import real_version

    compat = path.parent.parent / "compat11.h"
    compat.write_text("#include <cuda.h>\n#define cuGetProcAddress(s, p, v, f, q) (cuGetProcAddress)(s, p, v, f)\n")
    pre = ["-include", str(compat)] if real_version(include) < 12000 else []
    got = subprocess.run([compiler, "-fsyntax-only", "-w", "-I", include, *pre, str(path)],
                         capture_output=True, text=True, timeout=120, check=False)
    return "" if got.returncode == 0 else got.stderr[-2000:]


def test_the_fixed_loaders_compile_against_cuda_11_12_and_13_headers_and_nothing_else_changes(tmp_path: Path) -> None:
    """Issue 30's scratch repository: `--fix` fixes every certain fault of the loaders, the result compiles
    (`c++ -fsyntax-only`, `cc -fsyntax-only` for C) against the CUDA 11.8, 12.4 and 13.0 headers cuentry writes
    and the real toolkits found here, lints clean of the fixed codes, and `git diff` shows only fixed lines."""
    _clang_only()
    cxx, cc = shutil.which("c++"), shutil.which("cc")
    if cxx is None or cc is None or shutil.which("git") is None:
        pytest.skip("no C/C++ compiler or no git")
    repo = tmp_path / "repo"
    repo.mkdir()
    files = {"loader.cpp": LOADER, "handwritten.cpp": HANDWRITTEN,
             "dlsym_loader.c": (HERE / "lint_corpus" / "dlsym_loader.c").read_text()}
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "loaders")
    _, out, _ = lint("--json", "--isolated", "--toolkit", "12.4", str(repo))
    safe = {(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(out)["findings"] if f["fix"] == "safe"}
    _, out, err = lint("--fix", "--isolated", "--toolkit", "12.4", str(repo))
    assert "withdrawn" not in err and f"fixed {len(safe)} findings" in out and len(safe) >= 20
    changed = set()
    for name in files:
        for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? ", _git(repo, "diff", "-U0", "--", name), re.M):
            changed |= {(name, int(m.group(1)) + i) for i in range(int(m.group(2) or 1))}
    away = {("handwritten.cpp", n) for n in (20, 21, 22)}     # CE004 fixed at the declaration, not the request
    declared = {("handwritten.cpp", n) for n in (9, 12, 13, 25)}     # those declarations, and line 24's cast
    assert changed == {(n, line) for n, line, _ in safe} - away | declared
    for tk in ("12.4", "13.0"):
        _, out, _ = lint("--json", "--isolated", "--toolkit", tk, str(repo))
        left = {(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(out)["findings"]}
        assert not left & safe, tk
    for name, include in _header_dirs():
        for f in files:
            if f == "dlsym_loader.c" and name.startswith("real"):
                continue    # it names PFN_cuMemFree_v2000, which a toolkit's own cudaTypedefs.h declares only
                #             under __CUDA_API_VERSION_INTERNAL
            errors = _compiles(cc if f.endswith(".c") else cxx, include, repo / f)
            assert not errors, f"{f} against the {name} headers:\n{errors}"


def test_the_fixing_hook_through_pre_commit_fixes_then_passes(tmp_path: Path) -> None:
    """`pre-commit try-repo <this repository> cuentry-lint-fix`: pre-commit installs the hook as published (cuentry
    and its lint extra), the first run fixes the loader and fails (files changed), the second passes."""
    pc = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    root = HERE.parent
    if pc is None or shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("pre-commit, git or this repository's git checkout missing")
    repo = tmp_path / "repo"
    repo.mkdir()
    fixable = "".join(ln for ln in LOADER.splitlines(keepends=True) if not ln.startswith('  cuGetProcAddress("'))
    (repo / "loader.cpp").write_text(fixable)                      # every fault a certain fix (the unchecked one out)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "loader")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([pc, "try-repo", str(root), "cuentry-lint-fix", "--files", "loader.cpp"], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=600, check=False)

    first = run()
    if first.returncode == 3 and "Installing environment" in first.stdout + first.stderr:
        pytest.skip("pre-commit could not install the hook's environment (no package index?):\n" + first.stdout[-800:])
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout and f"fixed {FIXABLE_IN_LOADER} findings" in first.stdout
    assert (repo / "loader.cpp").read_text() != fixable and "12040, CU_GET" not in (repo / "loader.cpp").read_text()
    second = run()
    assert second.returncode == 0 and "Passed" in second.stdout, second.stdout + second.stderr
