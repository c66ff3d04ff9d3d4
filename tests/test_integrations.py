"""The pre-commit hook and the GitHub Action: their YAML checked against schemas, their commands run here."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cuentry.lint.engine import C_SUFFIXES, PY_SUFFIXES

yaml = pytest.importorskip("yaml", reason="PyYAML is in the [test] extra")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the [test] extra")

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = Path(__file__).parent / "data" / "schemas"
SCRIPT = ROOT / "action" / "cuentry-action.sh"
CUENTRY = shutil.which("cuentry", path=os.path.dirname(sys.executable)) or shutil.which("cuentry")
needs_cli = pytest.mark.skipif(CUENTRY is None or shutil.which("bash") is None,
                               reason="needs the installed cuentry command and bash")
needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")

BAD_C = """\
#include <cuda.h>
void load(void) {
    void *p;
    CUdriverProcAddressQueryResult q;
    cuGetProcAddress("cuMemAlloc", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q);
}
"""
GOOD_PY = "def f() -> int:\n    return 1\n"
MANIFEST = """\
[table]
name = "acme"
stream = "legacy"
required = ["cuMemAlloc@3020"]
optional = [{ symbol = "cuCtxCreate", version = 12050 }]
"""
NEEDS_125 = MANIFEST.replace('required = ["cuMemAlloc@3020"]', 'required = ["cuMemAlloc@3020", "cuCtxCreate@12050"]') \
    .replace('optional = [{ symbol = "cuCtxCreate", version = 12050 }]', 'optional = []')


def _load(name: str) -> Any:
    return yaml.safe_load((ROOT / name).read_text())


def _schema(name: str) -> Any:
    return json.loads((SCHEMAS / name).read_text())


# --- the YAML ---------------------------------------------------------------------


def test_pre_commit_hooks_yaml_is_valid() -> None:
    hooks = _load(".pre-commit-hooks.yaml")
    jsonschema.validate(hooks, _schema("pre-commit-hooks.schema.json"))
    hook, fixing = hooks
    assert hook["id"] == "cuentry-lint" and hook["entry"] == "cuentry lint --force-exclude"
    assert fixing["id"] == "cuentry-lint-fix" and fixing["entry"] == "cuentry lint --fix --force-exclude"
    lint_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["lint"]
    for h in hooks:
        assert h["language"] == "python" and set(h["types_or"]) >= {"c", "c++", "cuda", "python"}
        assert h["additional_dependencies"] == lint_extra    # pre-commit installs no extras: C/C++ needs these


def test_every_file_the_hooks_select_is_one_lint_takes() -> None:
    """No file the hooks hand over is refused for its suffix: every extension identify tags with the hooks'
    types, less their excluded types, is a C-family or Python suffix of the linter."""
    extensions = pytest.importorskip("identify.extensions", reason="identify comes with pre-commit")
    for h in _load(".pre-commit-hooks.yaml"):
        picked = {f".{ext}" for ext, tags in extensions.EXTENSIONS.items()
                  if tags & set(h["types_or"]) and not tags & set(h["exclude_types"])}
        assert {".c", ".cu", ".cpp", ".py", ".pyi"} <= picked
        assert not {x for x in picked if not x.endswith(C_SUFFIXES + PY_SUFFIXES)}, h["id"]


def test_pre_commit_validates_its_own_manifest() -> None:
    """pre-commit's own validator, where pre-commit is installed."""
    pc = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    if pc is None:
        pytest.skip("pre-commit not installed")
    proc = subprocess.run([pc, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schemas_refuse_broken_yaml() -> None:
    """The schemas can fail: a hook without an entry, a run step without a shell, an unknown key."""
    hook = dict(_load(".pre-commit-hooks.yaml")[0])
    del hook["entry"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([hook], _schema("pre-commit-hooks.schema.json"))
    action = _load("action.yml")
    step = next(s for s in action["runs"]["steps"] if "run" in s)
    del step["shell"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(action, _schema("github-action.schema.json"))
    action = _load("action.yml")
    action["inputs"]["paths"]["typo"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(action, _schema("github-action.schema.json"))


def test_action_yml_is_valid() -> None:
    action = _load("action.yml")
    jsonschema.validate(action, _schema("github-action.schema.json"))
    inputs = set(action["inputs"])
    steps = action["runs"]["steps"]
    text = (ROOT / "action.yml").read_text()
    # Every input used is declared, every declared input is used.
    used = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert used == inputs
    ids = {s["id"] for s in steps if "id" in s}
    assert set(re.findall(r"steps\.([A-Za-z0-9_-]+)\.", text)) <= ids
    for s in steps:
        # Inputs reach scripts through env only (an expression inside `run:` is a script injection).
        assert "${{" not in s.get("run", ""), s
        if "run" in s:
            assert "cuentry-action.sh" in s["run"] or "pip install" in s["run"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)


# --- the pre-commit hook's command ----------------------------------------------------


@needs_cli
def test_hook_file_selection_and_command(tmp_path: Path) -> None:
    identify = pytest.importorskip("identify.identify", reason="identify comes with pre-commit")
    hook = _load(".pre-commit-hooks.yaml")[0]
    files = {"k.cu": BAD_C, "k.cuh": BAD_C, "a.c": BAD_C, "a.cpp": BAD_C, "a.h": BAD_C, "m.py": GOOD_PY,
             "notes.txt": BAD_C, "data.json": "{}"}
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    chosen = sorted(n for n in files if set(hook["types_or"]) & identify.tags_from_filename(n))
    assert chosen == ["a.c", "a.cpp", "a.h", "k.cu", "k.cuh", "m.py"]
    argv = hook["entry"].split()
    argv[0] = CUENTRY  # type: ignore[assignment]
    bad = subprocess.run([*argv, *chosen], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert bad.returncode == 1, bad.stderr
    assert "k.cu:5:" in bad.stdout and "CE001" in bad.stdout
    good = subprocess.run([*argv, "m.py"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert good.returncode == 0 and "no findings" in good.stdout


@needs_cli
def test_fixing_hook_repairs_and_respects_the_configuration(tmp_path: Path) -> None:
    hook = _load(".pre-commit-hooks.yaml")[1]
    fixable = BAD_C.replace("void *p;", "PFN_cuMemAlloc_v3020 p;").replace("CU_GET_PROC_ADDRESS_DEFAULT",
                                                                          "CU_GET_PROC_ADDRESS_LEGACY_STREAM")
    fixable = fixable.replace("#include <cuda.h>", "#include <cuda.h>\n#include <cudaTypedefs.h>")
    (tmp_path / "pyproject.toml").write_text('[tool.cuentry.lint]\nexclude = ["vendor"]\ntoolkit = "12.4"\n')
    (tmp_path / "vendor").mkdir()
    for name in ("a.c", "vendor/v.c"):
        (tmp_path / name).write_text(fixable)
    argv = hook["entry"].split()
    argv[0] = CUENTRY  # type: ignore[assignment]
    got = subprocess.run([*argv, "a.c", "vendor/v.c"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert "fixed 1 finding" in got.stdout, got.stdout + got.stderr
    assert "&p, 3020, CU_GET" in (tmp_path / "a.c").read_text()
    assert (tmp_path / "vendor" / "v.c").read_text() == fixable      # excluded, even when named


# --- the action's steps -----------------------------------------------------------------


def _step(step: str, tmp_path: Path, **inputs: str) -> tuple[int, str, str, dict[str, str]]:
    out_file = tmp_path / "github_output"
    out_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "CUENTRY_"))}
    env.update({"CUENTRY": str(CUENTRY), "PYTHON": sys.executable, "GITHUB_OUTPUT": str(out_file),
                "CUENTRY_DRIVER": str(tmp_path / "no-driver-here.so.1")})
    env.update(inputs)
    proc = subprocess.run(["bash", str(SCRIPT), step], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=120)
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    return proc.returncode, proc.stdout, proc.stderr, outputs


def _errors(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("::error")]


@needs_cli
def test_action_lint_writes_sarif(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text(BAD_C)
    (tmp_path / "src" / "ok.py").write_text(GOOD_PY)
    rc, out, err, outputs = _step("lint", tmp_path, INPUT_PATHS="src", INPUT_SARIF_FILE="out.sarif")
    assert rc == 0, err
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert int(outputs["findings"]) == len(results) > 0
    assert outputs["lint-exit"] == "1" and outputs["sarif-file"] == "out.sarif"
    assert any(r.get("fixes") for r in results)              # the repairs travel with the SARIF
    # The gate fails on findings by default, and not when told not to.
    rc, out, _, _ = _step("gate", tmp_path, LINT_EXIT="1", FINDINGS=outputs["findings"])
    assert rc == 1 and len(_errors(out)) == 1
    assert _step("gate", tmp_path, LINT_EXIT="1", INPUT_FAIL_ON_FINDINGS="false")[0] == 0
    # --select narrows the rules.
    rc, _, _, outputs = _step("lint", tmp_path, INPUT_PATHS="src", INPUT_SELECT="CE005")
    assert rc == 0 and outputs["findings"] == "0" and outputs["lint-exit"] == "0"


@needs_cli
def test_action_lint_bad_input_is_one_error(tmp_path: Path) -> None:
    rc, out, _, _ = _step("lint", tmp_path, INPUT_PATHS="does-not-exist")
    assert rc == 2
    (line,) = _errors(out)
    assert line.startswith("::error title=cuentry lint::")


@needs_cli
@needs_cc
def test_action_check_against_a_fake_driver_release(tmp_path: Path) -> None:
    (tmp_path / "cuentry.toml").write_text(MANIFEST)
    rc, out, err, outputs = _step("check", tmp_path, INPUT_MANIFEST="cuentry.toml", INPUT_DRIVER_VERSION="12.4")
    assert rc == 0, out + err
    assert "PASS" in out and outputs["min-driver"] == "3020" and not _errors(out)
    (tmp_path / "new.toml").write_text(NEEDS_125)
    rc, out, _, outputs = _step("check", tmp_path, INPUT_MANIFEST="new.toml", INPUT_DRIVER_VERSION="12040")
    assert rc == 1 and outputs["min-driver"] == "12050"
    assert _errors(out) == ["::error file=new.toml,title=cuentry check::a required entry point does not resolve "
                            "on this driver (see the table above)"]
    rc, out, _, _ = _step("check", tmp_path, INPUT_MANIFEST="new.toml", INPUT_DRIVER_VERSION="13.0")
    assert rc == 0


@needs_cli
@pytest.mark.parametrize("body, where", [
    ('[table\nstream = "legacy"\n', "file=broken.toml,line=1,col=7"),
    ('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc@3020", "cuBogus@1"]\n', "file=broken.toml,line=3,col="),
    ('[table]\nstream = "sideways"\nrequired = ["cuMemAlloc@3020"]\n', "file=broken.toml"),
])
def test_action_broken_manifest_is_one_error(tmp_path: Path, body: str, where: str) -> None:
    (tmp_path / "broken.toml").write_text(body)
    rc, out, _, _ = _step("check", tmp_path, INPUT_MANIFEST="broken.toml", INPUT_DRIVER_VERSION="12.4")
    assert rc == 2
    (line,) = _errors(out)
    assert where in line and "title=cuentry check::" in line


@needs_cli
@pytest.mark.parametrize("inputs, words", [
    ({"INPUT_MANIFEST": "missing.toml"}, "cannot read the manifest"),
    ({"INPUT_MANIFEST": "m.toml", "INPUT_DRIVER_VERSION": "twelve"}, "driver-version 'twelve' is not a driver release"),
    ({"INPUT_MANIFEST": "m.toml", "INPUT_DRIVER_VERSION": "12045"}, "is not a driver release"),
    ({"INPUT_MANIFEST": "m.toml", "INPUT_DRIVER_VERSION": "12.4", "INPUT_DRIVER": "/x"}, "not both"),
    ({"INPUT_MANIFEST": "m.toml"}, "no CUDA driver on this runner: set driver-version"),
])
def test_action_check_bad_input(tmp_path: Path, inputs: dict[str, str], words: str) -> None:
    (tmp_path / "m.toml").write_text(MANIFEST)
    rc, out, _, _ = _step("check", tmp_path, **inputs)
    assert rc in (2, 3)
    (line,) = _errors(out)
    assert words in line


@needs_cli
def test_action_check_skipped_without_manifest(tmp_path: Path) -> None:
    rc, out, _, _ = _step("check", tmp_path)
    assert rc == 0 and "skipped" in out
    assert _step("nonsense", tmp_path)[0] == 2
