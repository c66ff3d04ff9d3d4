"""Packaging configuration: what wheels are built for, what the wheel declares (entry points, dependencies)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_cibuildwheel_builds_manylinux_x86_64_and_aarch64_only() -> None:
    exe = shutil.which("cibuildwheel", path=os.path.dirname(sys.executable)) or shutil.which("cibuildwheel")
    if exe is None:
        pytest.skip("cibuildwheel not installed (pip install cibuildwheel)")
    proc = subprocess.run([exe, "--print-build-identifiers", "--platform", "linux", str(ROOT)],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    ids = set(proc.stdout.split())
    want = {f"cp3{m}-manylinux_{a}" for m in (11, 12, 13, 14) for a in ("x86_64", "aarch64")}
    assert ids == want


def test_the_readme_names_the_cpython_versions_wheels_are_built_for() -> None:
    """README's "CPython 3.A-3.B" of the prebuilt wheels is the cibuildwheel build list and the classifiers."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (low, high), = re.findall(r"cibuildwheel, manylinux[^)]*CPython 3\.(\d+)-3\.(\d+)\)", readme)
    said = {f"3.{m}" for m in range(int(low), int(high) + 1)}
    built = {f"3.{b[3:-2]}" for b in PYPROJECT["tool"]["cibuildwheel"]["build"]}
    declared = {c.rsplit(" ", 1)[1] for c in PYPROJECT["project"]["classifiers"]
                if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    assert said == built == declared, (said, built, declared)


def test_no_free_threading_declared() -> None:
    """Free-threaded CPython is neither built nor declared until it is tested."""
    cfg = PYPROJECT["tool"]["cibuildwheel"]
    assert "cpython-freethreading" not in cfg.get("enable", [])
    classifiers = PYPROJECT["project"].get("classifiers", [])
    assert not any("Free Threading" in c for c in classifiers)


def test_wheel_declares_plugin_and_dependencies() -> None:
    proj = PYPROJECT["project"]
    assert proj["entry-points"]["pytest11"] == {"cuentry": "cuentry.pytest_plugin"}
    assert proj["scripts"]["cuentry"] == "cuentry.cli:entry"
    assert any(d.startswith("cuda-pathfinder") for d in proj["dependencies"])
    assert {"docs", "test", "gen"} <= set(proj["optional-dependencies"])
    assert any(d.startswith("mkdocs") for d in proj["optional-dependencies"]["docs"])


def test_release_workflow_builds_tests_and_publishes_every_artifact() -> None:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["push"]["tags"] == ["v*"]
    jobs = wf["jobs"]
    steps = jobs["wheels"]["steps"]
    assert any(s.get("uses", "").startswith("pypa/cibuildwheel@v3") for s in steps)
    assert set(jobs["wheels"]["strategy"]["matrix"]["os"]) == {"ubuntu-24.04", "ubuntu-24.04-arm"}
    pure = "\n".join(s.get("run", "") for s in jobs["pure"]["steps"])
    assert "CUENTRY_NO_COMPILE=1 python -m build --wheel" in pure and "--sdist" in pure
    assert "ci_backend.py pure" in pure and "ci_backend.py compiled" in pure and pure.count("pytest") == 2
    pub = jobs["publish"]
    assert pub["permissions"] == {"id-token": "write"} and set(pub["needs"]) == {"wheels", "pure"}
    assert any(s.get("uses", "") == "pypa/gh-action-pypi-publish@release/v1" for s in pub["steps"])
    assert not any("password" in (s.get("with") or {}) for s in pub["steps"])  # trusted publishing, no token
    assert "mike deploy" in "\n".join(s.get("run", "") for s in jobs["docs"]["steps"])


# Current majors (checked December 2026): one place, so a bump is one edit here and in the files.
ACTION_MAJORS = {"actions/checkout": "v7", "actions/setup-python": "v7", "actions/upload-artifact": "v7",
                 "actions/download-artifact": "v8", "github/codeql-action/upload-sarif": "v4"}


def test_every_workflow_and_the_action_use_current_action_majors() -> None:
    import re

    files = [*(ROOT / ".github" / "workflows").glob("*.yml"), ROOT / "action.yml",
             *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]
    seen = set()
    for f in files:
        for name, ver in re.findall(r"uses:\s*([\w./-]+)@([\w.]+)", f.read_text()):
            if name in ACTION_MAJORS:
                seen.add(name)
                assert ver == ACTION_MAJORS[name], f"{f.name}: {name}@{ver}, current is {ACTION_MAJORS[name]}"
    assert {"actions/checkout", "actions/setup-python", "github/codeql-action/upload-sarif"} <= seen


def test_one_repository_url_everywhere() -> None:
    import re

    urls = PYPROJECT["project"]["urls"]
    assert urls["Repository"] == "https://github.com/cuentry/cuentry"
    files = [ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml", ROOT / "mkdocs.yml", ROOT / "README.md",
             ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "src").rglob("*.py")]
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert "OWNER/cuentry" not in text and "<owner>/cuentry" not in text, f
        for owner in re.findall(r"github\.com/([\w.-]+)/cuentry\b", text):
            assert owner == "cuentry", f"{f}: github.com/{owner}/cuentry"


def test_release_metadata_is_complete() -> None:
    proj = PYPROJECT["project"]
    assert "version" not in proj and proj["dynamic"] == ["version"] and proj["license"] == "Apache-2.0"
    assert set(proj["license-files"]) == {"LICENSE", "NOTICE"}
    assert proj["readme"] == "README.md" and proj["authors"]
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(proj["urls"])
    cls = proj["classifiers"]
    assert "Programming Language :: Python :: 3.14" in cls and not any(c.startswith("License ::") for c in cls)
    lic = (ROOT / "LICENSE").read_text()
    assert "Apache License" in lic and "Version 2.0, January 2004" in lic and "END OF TERMS AND CONDITIONS" in lic
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "Keep a Changelog" in changelog and f"## [{_release().source_version()}] - " in changelog
    assert "## [Unreleased]" in changelog


def test_action_says_linux_and_gcc() -> None:
    import subprocess as sp

    text = (ROOT / "action.yml").read_text()
    assert "Linux runners only" in text and "gcc" in text and "cuentry-action.sh\" preflight" in text
    script = str(ROOT / "action" / "cuentry-action.sh")
    bash = shutil.which("bash") or "/bin/bash"
    r = sp.run([bash, script, "preflight"], env={**os.environ, "RUNNER_OS": "macOS"}, capture_output=True, text=True,
               check=False)
    assert r.returncode == 2 and "Linux runners only" in r.stdout and "macOS" in r.stdout
    r = sp.run([bash, script, "preflight"], env={**os.environ, "RUNNER_OS": "Linux", "CC": "no-such-cc",
                                                   "PATH": "/nonexistent"}, capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "needs a C compiler" in r.stdout
    if shutil.which("cc") or shutil.which("gcc"):
        r = sp.run([bash, script, "preflight"], env={**os.environ, "RUNNER_OS": "Linux"}, capture_output=True,
                   text=True, check=False)
        assert r.returncode == 0, r.stdout


def test_a_wheel_build_leaves_no_temporary_folder_and_ships_the_c_template(tmp_path: Path) -> None:
    """hatch_build.py removes its cuentry-calls-* folder; the wheel has the fake driver's template and the license."""
    import importlib.util
    import zipfile

    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling not installed (it is in the [test] extra)")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                           str(tmp_path / "dist"), str(ROOT)], env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not list(tmp.glob("cuentry-calls-*")), list(tmp.iterdir())
    (wheel,) = (tmp_path / "dist").glob("cuentry-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "cuentry/testing/fake_cuda.c.in" in names
    assert any(n.endswith("licenses/LICENSE") for n in names) and any(n.endswith("licenses/NOTICE") for n in names)
    assert "cuentry/calls/_fastcall.c.in" in names  # the call extension's C template (issue 23.4)
    schemas = sorted(p.name for p in (ROOT / "docs" / "schemas").glob("*.schema.json"))
    assert sorted(n.split("/")[-1] for n in names if n.startswith("cuentry/schemas/")) == schemas  # issue 33.5


def test_the_call_extension_c_lives_in_a_template_file_shipped_as_package_data() -> None:
    """Issue 23.4: the extension's C is a real file beside its generator, not a Python string, and it ships."""
    import ast

    from cuentry.calls import _fastgen

    calls = ROOT / "src" / "cuentry" / "calls"
    template = calls / _fastgen.TEMPLATE
    assert template.is_file() and "PyInit__fastcall" in template.read_text()
    assert "@CASES@" in _fastgen.template() and "@SHAPES@" in _fastgen.template()
    tree = ast.parse((calls / "_fastgen.py").read_text())
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not any("#include" in s or "PyObject" in s for s in strings), "C source held in a Python string"
    src = _fastgen.source([("int",), ("void *", "size_t")])
    assert "case 1: *rc = ((int (*)(void *, size_t))fn)" in src
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/cuentry"] and "exclude" not in wheel  # every file of the package ships
    assert "_fastcall.c.in" not in (ROOT / ".gitignore").read_text()


# A development machine's own paths: a user's home, this workplace's checkouts and virtual environments.
MACHINE_PATH = r"(?<![\w.~-])(?:/home/[a-z_][\w.-]*/|/Users/\w+/|/root/|/work/[A-Za-z]|/opt/torch\b|/tmp/pytest-of-)"


def _tracked() -> list[Path]:
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        pytest.skip("not a git checkout (an sdist): the tracked files are unknown")
    return [ROOT / p for p in r.stdout.split("\0") if p]


def test_no_machine_specific_path_in_the_repository() -> None:
    import re

    pattern = re.compile(MACHINE_PATH)
    assert pattern.search('"driver": "/root/.cache/cuentry/x.so"') and pattern.search("rootdir: /work/Example")
    assert pattern.search("rootdir: /home/alice/src/cuentry")
    assert not pattern.search('"driver": "~/.cache/cuentry/x.so"') and not pattern.search("/usr/local/cuda/include")
    hits = []
    for f in _tracked():
        if f == Path(__file__).resolve() or not f.is_file():
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{f.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m[0]}" for m in pattern.finditer(text)]
    assert not hits, "machine-specific paths (write them relative, with ~, or as an option):\n" + "\n".join(hits)


# --- the release path (issue 33.2) ------------------------------------------------------------------------------


def _release():  # tools/release.py, imported as a module
    import importlib.util

    spec = importlib.util.spec_from_file_location("cuentry_release_tool", ROOT / "tools" / "release.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_version_has_one_source() -> None:
    """__version__ in src/cuentry/__init__.py is the version: hatch reads it into the metadata (pyproject writes
    none), and `cuentry --version` prints the installed metadata's."""
    import importlib.metadata

    import cuentry
    from cuentry.cli import installed_version

    from .clihelp import run

    assert PYPROJECT["tool"]["hatch"]["version"]["path"] == "src/cuentry/__init__.py"
    assert _release().source_version() == cuentry.__version__
    code, out, _ = run("--version")
    assert code == 0 and out == f"cuentry {installed_version()}\n"
    try:
        installed = importlib.metadata.version("cuentry")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("cuentry is not installed (run from a source tree)")
    assert installed == cuentry.__version__, "the installed metadata is stale: pip install -e . again"
    assert installed_version() == installed


def test_release_check_names_what_stops_a_release(tmp_path: Path) -> None:
    rel = _release()
    assert rel.check(ROOT) == [], "this source is not releasable as it stands"
    v = rel.source_version()
    assert rel.check(ROOT, tag=f"v{v}") == []
    (wrong,) = rel.check(ROOT, tag="v99.0.0")
    assert f"tag v99.0.0 but the source is version {v}" in wrong
    text = (ROOT / "CHANGELOG.md").read_text()
    assert rel.changelog_problems(text, v) == []
    assert any("no '## [9.9.9] - YYYY-MM-DD' section" in p for p in rel.changelog_problems(text, "9.9.9"))
    empty = re.sub(rf"(## \[{re.escape(v)}\] - [\d-]+\n).*?(?=^## |\Z)", r"\1\n", text, flags=re.S | re.M)
    assert any("lists no change" in p for p in rel.changelog_problems(empty, v))


def test_the_sdist_holds_exactly_the_tracked_files(tmp_path: Path) -> None:
    """Built from this working tree as `python -m build --sdist` would (hatchling), after the test suite has
    left its caches (.hypothesis/, .ruff_cache/, ...): the files git tracks, PKG-INFO, nothing else."""
    import importlib.util

    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling not installed (it is in the [test] extra)")
    rel = _release()
    tracked = _tracked()
    (ROOT / ".hypothesis").mkdir(exist_ok=True)  # what a test run leaves (with its own "*" .gitignore)
    r = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    (sdist,) = tmp_path.glob("cuentry-*.tar.gz")
    assert rel.sdist_problems(sdist, [str(p.relative_to(ROOT)) for p in tracked if p.is_file()]) == []
    # and the check can fail: a list that lacks a file the sdist has
    assert any("does not track" in p for p in rel.sdist_problems(sdist, ["README.md"]))


def test_an_sdist_of_a_working_tree_leaves_out_untracked_files(tmp_path: Path) -> None:
    """`python -m build --sdist` in a working tree with a stray log, a scratch script and a file whose name is a
    gitignore pattern: none of them is packed (only what git tracks, and PKG-INFO)."""
    import importlib.util

    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling not installed (it is in the [test] extra)")
    tracked = [p for p in _tracked() if p.is_file()]
    tree = tmp_path / "tree"
    for f in tracked:
        dest = tree / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=tree, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tree, check=True)
    strays = ["build-2026.log", "src/cuentry/scratch.py", "docs/[draft] *notes*.md", "#odd!", ".cache-x/data.json",
              "tests/.tool/x.txt"]
    for s in strays:
        (tree / s).parent.mkdir(parents=True, exist_ok=True)
        (tree / s).write_text("not for release\n")
    (tree / ".cache-x" / ".gitignore").write_text("*\n")  # a tool's cache: git ignores it, hatchling would not
    r = subprocess.run([sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "dist")],
                       cwd=tree, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    (sdist,) = (tmp_path / "dist").glob("cuentry-*.tar.gz")
    assert _release().sdist_problems(sdist, [str(p.relative_to(ROOT)) for p in tracked]) == []
    with tarfile.open(sdist) as tf:
        names = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert not names & set(strays) and "src/cuentry/table.py" in names


def test_release_dry_run(tmp_path: Path) -> None:
    """tools/release.py dry-run: a tag's release rehearsed in a clean copy of the tracked files (the docs are
    built by tests/test_docs.py)."""
    import importlib.util

    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling not installed (it is in the [test] extra)")
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), "dry-run", "--no-docs", "--out",
                        str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    v = _release().source_version()
    assert f"cuentry-{v}.tar.gz: exactly the tracked files + PKG-INFO" in r.stdout
    assert f"cuentry-{v}-py3-none-any.whl: metadata version {v}" in r.stdout
    assert "native wheels (cibuildwheel, the wheels job): 8:" in r.stdout
    assert f"git tag -a v{v}" in r.stdout and "nothing is uploaded" in r.stdout


def test_release_dry_run_without_hatchling_says_so(tmp_path: Path) -> None:
    """Without the build backend (a fresh venv without packages) the dry run ends in one clear reason and exit 1,
    never a traceback."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    r = subprocess.run([str(venv / "bin" / "python"), str(ROOT / "tools" / "release.py"), "dry-run", "--no-docs",
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=900,
                       check=False)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stdout + r.stderr, r.stderr[-2000:]
    assert "release: hatchling (the build backend) is not installed" in r.stdout
    assert "pip install hatchling" in r.stdout


def test_the_release_workflow_runs_the_release_checks() -> None:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    runs = "\n".join(s.get("run", "") for job in wf["jobs"].values() for s in job["steps"])
    assert "tools/release.py check" in runs and "tools/release.py sdist-files" in runs
    assert "tomllib" not in runs  # the version is read from its one source by the tool, not from pyproject
