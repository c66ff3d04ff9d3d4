"""cuentry lint on trees nobody trusts (issue 42): nothing from the tree runs, every path it names is what it
must be before it is opened, --fix loses no edit and splits no file, floors and timeouts are checked, libclang
runs only in the supervised workers.

The cases that could hang (a FIFO) or fill the memory (/dev/zero) run the command in a subprocess with a
timeout.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("clang.cindex")

from cuentry.cli import main  # noqa: E402
from cuentry.lint import apply  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_cache")

HERE = Path(__file__).parent
PINS = (HERE / "lint_corpus" / "pins.cpp").read_text()
FIXED_PIN = '"cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM'   # what --fix writes in PINS
SRC = Path(__import__("cuentry").__file__).resolve().parent.parent   # the cuentry under test, for subprocesses


def lint(*args: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    code = main(["lint", *args], stdout=o, stderr=e)
    return code, o.getvalue(), e.getvalue()


def cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`cuentry ARGS` in a subprocess with a timeout (a regression would hang or fill the memory otherwise)."""
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = str(SRC) + os.pathsep + e.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "cuentry", *args], capture_output=True, text=True, cwd=cwd,
                          env=e, timeout=timeout, check=False)


# --- nothing from the tree runs ---------------------------------------------------------------------------


def _hostile_repo(root: Path, marker: Path) -> None:
    """A work tree whose git configuration names programs in every place git could run one, each of which
    writes `marker`; a .gitignore that names vendor/."""
    root.mkdir()
    git = root / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "info").mkdir()
    (git / "objects").mkdir()
    (git / "refs").mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    prog = root / "run.sh"
    prog.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexit 0\n")
    prog.chmod(0o755)
    for hook in ("pre-commit", "post-checkout", "fsmonitor-watchman", "post-index-change", "reference-transaction"):
        (git / "hooks" / hook).write_text(prog.read_text())
        (git / "hooks" / hook).chmod(0o755)
    (root / "included.cfg").write_text(f"[core]\n\tfsmonitor = {prog}\n\tpager = {prog}\n")
    (git / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f"\tfsmonitor = {prog}\n\tsshCommand = {prog}\n\thooksPath = {git / 'hooks'}\n\tuntrackedCache = true\n"
        f"[diff]\n\texternal = {prog}\n[include]\n\tpath = {root / 'included.cfg'}\n"
        f"[filter \"x\"]\n\tclean = {prog}\n\tsmudge = {prog}\n[credential]\n\thelper = !{prog}\n")
    (root / ".gitattributes").write_text("* filter=x\n")
    (root / ".gitignore").write_text("vendor/\n")
    for d in ("src", "vendor"):
        (root / d).mkdir()
        (root / d / "pins.cpp").write_text(PINS)


def test_lint_runs_nothing_the_tree_or_its_configuration_names(tmp_path: Path) -> None:
    """A tree planting core.fsmonitor, hooks, core.sshCommand, diff.external, include.path (and filters and a
    credential helper), and a `git` first on PATH: nothing runs, and .gitignore is still respected."""
    marker = tmp_path / "ran"
    repo = tmp_path / "repo"
    _hostile_repo(repo, marker)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").write_text(f"#!/bin/sh\necho \"git $*\" >> {marker}\nexit 1\n")
    (bindir / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    got = cli("lint", "--json", str(repo), cwd=repo, env=env)
    assert not marker.exists(), f"lint ran: {marker.read_text()}"
    assert got.returncode == 1, got.stderr
    assert {Path(f["path"]).parent.name for f in json.loads(got.stdout)["findings"]} == {"src"}
    got = cli("lint", "--fix", "--diff", str(repo / "src"), cwd=repo, env=env)
    assert not marker.exists(), f"lint ran: {marker.read_text()}"


# --- every named path is what it must be, before it is opened ----------------------------------------------


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "x.c").write_text("int x;\n")
    return {"fifo": fifo, "zero": Path("/dev/zero"), "dir": tmp_path, "src": tmp_path / "x.c"}


@pytest.mark.parametrize("kind", ["zero", "fifo", "dir"])
@pytest.mark.parametrize("how", ["option", "config"])
def test_a_compilation_database_that_is_no_regular_file_is_refused_in_one_line(
        specials: dict[str, Path], tmp_path: Path, kind: str, how: str) -> None:
    target = specials[kind]
    if how == "config":
        (tmp_path / "cuentry.toml").write_text(f'[lint]\ncompile-commands = "{target}"\n')
        got = cli("lint", str(specials["src"]), cwd=tmp_path, timeout=60)
    else:
        got = cli("lint", "--compile-commands", str(target), str(specials["src"]), cwd=tmp_path, timeout=60)
    words = {"zero": "a device", "fifo": "a FIFO", "dir": "a directory"}[kind]
    assert got.returncode == 2, got.stderr
    assert f"the compilation database {target} is {words}, not a regular file" in got.stderr
    assert "internal error" not in got.stderr and len(got.stderr.strip().splitlines()) <= 2   # the line and a hint


@pytest.mark.parametrize("kind", ["zero", "fifo", "dir"])
@pytest.mark.parametrize("joined", [False, True])
def test_an_include_of_a_special_file_in_a_compilation_database_is_refused(specials: dict[str, Path], tmp_path: Path,
                                                                          kind: str, joined: bool) -> None:
    target = specials[kind]
    args = ["cc", f"-include{target}"] if joined else ["cc", "-include", str(target)]
    db = tmp_path / "compile_commands.json"
    db.write_text(json.dumps([{"directory": str(tmp_path), "file": "x.c", "arguments": [*args, "-c", "x.c"]}]))
    got = cli("lint", "--compile-commands", str(db), str(specials["src"]), cwd=tmp_path, timeout=60)
    words = {"zero": "a device", "fifo": "a FIFO", "dir": "a directory"}[kind]
    assert got.returncode == 2, got.stderr
    assert f"the entry of x.c includes {target} before it (-include), which is {words}" in got.stderr


@pytest.mark.parametrize("kind", ["zero", "fifo", "src"])
def test_an_include_directory_that_is_no_directory_is_refused(specials: dict[str, Path], tmp_path: Path,
                                                             kind: str) -> None:
    got = cli("lint", "-I", str(specials[kind]), str(specials["src"]), cwd=tmp_path, timeout=60)
    assert got.returncode == 2 and "not a directory" in got.stderr, got.stderr


@pytest.mark.parametrize("key", ["config", "manifest"])
@pytest.mark.parametrize("kind", ["zero", "fifo", "dir"])
def test_configuration_and_manifest_paths_that_are_no_regular_files_are_refused(
        specials: dict[str, Path], tmp_path: Path, key: str, kind: str) -> None:
    target = specials[kind]
    got = cli("lint", f"--{key}", str(target), str(specials["src"]), cwd=tmp_path, timeout=60)
    assert got.returncode == 2 and "not a regular file" in got.stderr, got.stderr


def test_toml_nested_five_thousand_levels_is_bad_input_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "x.c").write_text("int x;\n")
    (tmp_path / "pyproject.toml").write_text("[tool.cuentry.lint]\nselect = " + "[" * 5000 + "]" * 5000 + "\n")
    got = cli("lint", str(tmp_path / "x.c"), cwd=tmp_path, timeout=60)
    assert got.returncode == 2, got.stderr
    assert f"{tmp_path / 'pyproject.toml'}: not read: its TOML nests deeper" in got.stderr
    assert "internal error" not in got.stderr and "RecursionError" not in got.stderr


# --- floors and timeouts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("floor", "words"), [
    ("120000", "did you mean 12000 (12.0)?"),
    ("9223372036854775807", "the newest is 13050 (13.5)"),
    ("12070", "the nearest is 12060 (12.6)"),
    ("-3", "or 0 for none"),
])
def test_a_floor_that_is_no_release_is_refused_naming_the_nearest(tmp_path: Path, floor: str, words: str) -> None:
    (tmp_path / "pins.cpp").write_text(PINS)
    code, _, err = lint("--isolated", "--floor", floor, str(tmp_path))
    assert code == 2 and words in err, err
    (tmp_path / "cuentry.toml").write_text(f"[lint]\nselect = ['CE']\nfloor = {floor}\n")
    code, _, err = lint(str(tmp_path))
    assert code == 2 and f"cuentry.toml:3: floor: {floor} " in err and words in err, err


def test_a_release_floor_is_taken(tmp_path: Path) -> None:
    (tmp_path / "pins.cpp").write_text(PINS)
    (tmp_path / "cuentry.toml").write_text("[lint]\nfloor = 11050\n")
    code, _, err = lint(str(tmp_path))
    assert code in (0, 1) and "floor:" not in err, err
    code, _, err = lint("--isolated", "--floor", "12000", str(tmp_path))
    assert code == 1, err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9", "soon"])
def test_a_timeout_out_of_range_is_refused(tmp_path: Path, value: str) -> None:
    (tmp_path / "x.c").write_text("int x;\n")
    code, _, err = lint("--isolated", "--timeout", value, str(tmp_path))
    assert code == 2 and "--timeout" in err, err
    if value != "soon":
        (tmp_path / "cuentry.toml").write_text(f"[lint]\ntimeout = {value}\n")
        code, _, err = lint(str(tmp_path))
        assert code == 2 and "cuentry.toml:2: timeout:" in err, err


def test_a_file_over_its_cpu_time_is_named_with_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--timeout 1`: a file whose parse computes past one second of CPU time is reported, naming the limit; the
    other files are linted."""
    from cuentry.lint import engine

    real = engine._work

    def work(state: Any, task: Any) -> Any:
        if task[1].endswith("spin.cpp"):
            while True:
                pass
        return real(state, task)

    monkeypatch.setattr(engine, "_work", work)   # the workers are forked from this process: they run it
    monkeypatch.setattr("cuentry.lint.parallel._context", lambda: __import__("multiprocessing").get_context("fork"))
    (tmp_path / "spin.cpp").write_text(PINS)
    (tmp_path / "pins.cpp").write_text(PINS)
    code, out, err = lint("--isolated", "--timeout", "1", str(tmp_path))
    assert code == 1
    assert "spin.cpp: not linted: it took more than 1 s of CPU time (a hang?): raise the limit with --timeout" in err
    assert "pins.cpp:9:7: CE010" in out


# --- libclang only in the workers -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [["--sarif"], ["--diff"], ["--fix"], ["--json"]])
def test_libclang_never_parses_in_the_main_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   fmt: list[str]) -> None:
    """Every output format: the lint and the verification of its fixes parse in worker processes."""
    from cuentry.lint import clang

    me = os.getpid()
    real = clang.extract
    here: list[str] = []

    def extract(text: str, path: str, opts: Any) -> Any:
        if os.getpid() == me:
            here.append(path)
        return real(text, path, opts)

    monkeypatch.setattr(clang, "extract", extract)
    (tmp_path / "pins.cpp").write_text(PINS)
    code, out, _ = lint("--isolated", *fmt, str(tmp_path))
    assert code in (0, 1) and out is not None
    assert here == [], f"libclang parsed {here} in the main process"


# --- --fix: compare-and-swap, owner, links ------------------------------------------------------------------


def test_an_edit_saved_between_the_lint_and_the_write_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "pins.cpp"
    f.write_text(PINS)
    real = apply.write

    def racing(path: str, text: str, **kw: Any) -> Any:
        with open(path, "a", encoding="utf-8") as fh:   # the user saves an edit while lint runs
            fh.write("// my edit\n")
        return real(path, text, **kw)

    monkeypatch.setattr(apply, "write", racing)
    code, out, err = lint("--fix", "--isolated", str(f))
    assert f.read_text() == PINS + "// my edit\n"
    assert "fix withdrawn: not rewritten: the file changed since it was linted" in err
    assert code == 1 and "CE010" in out and "fixed" not in out


def test_fix_keeps_mode_owner_and_group(tmp_path: Path) -> None:
    f = tmp_path / "pins.cpp"
    f.write_text(PINS)
    os.chmod(f, 0o640)
    if os.geteuid() == 0:
        os.chown(f, 4242, 4343)
    before = os.stat(f)
    code, _, err = lint("--fix", "--isolated", str(f))
    after = os.stat(f)
    assert FIXED_PIN in f.read_text(), err
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)


def test_fix_in_a_directory_it_cannot_write_rewrites_the_file_in_place(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes any directory")
    d = tmp_path / "ro"
    d.mkdir()
    f = d / "pins.cpp"
    f.write_text(PINS)
    d.chmod(0o555)
    try:
        lint("--fix", "--isolated", str(f))
        assert FIXED_PIN in f.read_text()
    finally:
        d.chmod(0o755)


def test_a_symbolic_link_out_of_the_project_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pins.cpp").write_text(PINS)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "cuentry.toml").write_text("[lint]\n")
    os.symlink(outside / "pins.cpp", proj / "link.cpp")
    code, _, err = lint("--fix", str(proj))
    assert (outside / "pins.cpp").read_text() == PINS and (proj / "link.cpp").is_symlink()
    assert f"fix withdrawn: not rewritten: it is a symbolic link to {outside / 'pins.cpp'}, outside the project's " \
           f"root ({proj})" in err
    assert code == 1


def test_a_symbolic_link_inside_the_project_is_fixed_in_its_target(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "real").mkdir(parents=True)
    (proj / "cuentry.toml").write_text("[lint]\n")
    (proj / "real" / "pins.cpp").write_text(PINS)
    (proj / "links").mkdir()
    os.symlink(proj / "real" / "pins.cpp", proj / "links" / "link.cpp")
    lint("--fix", str(proj / "links"))
    assert (proj / "links" / "link.cpp").is_symlink()
    assert FIXED_PIN in (proj / "real" / "pins.cpp").read_text()


def test_a_hard_linked_file_is_fixed_under_every_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    a = tmp_path / "a" / "pins.cpp"
    a.write_text(PINS)
    b = tmp_path / "other-name.cpp"
    os.link(a, b)
    lint("--fix", "--isolated", str(a))
    assert os.stat(a).st_ino == os.stat(b).st_ino and os.stat(a).st_nlink == 2
    assert FIXED_PIN in a.read_text() and a.read_text() == b.read_text()


def test_a_file_replaced_by_a_fifo_before_the_write_is_left_alone(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "pins.cpp"
    f.write_text(PINS)
    real = apply.write

    def swap(path: str, text: str, **kw: Any) -> Any:
        os.unlink(path)
        os.mkfifo(path)
        return real(path, text, **kw)

    monkeypatch.setattr(apply, "write", swap)
    code, _, err = lint("--fix", "--isolated", str(f))
    assert stat.S_ISFIFO(os.stat(f).st_mode) and "no longer a regular file" in err


def test_the_git_of_the_tests_is_not_needed(tmp_path: Path) -> None:
    """Without any git on PATH, .gitignore is still respected (it is read, not asked of git)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("vendor/\n")
    for d in ("src", "vendor"):
        (repo / d).mkdir()
        (repo / d / "pins.cpp").write_text(PINS)
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    assert shutil.which("git", path=env["PATH"]) is None or pytest.skip("git next to python")
    got = cli("lint", "--json", str(repo), env=env)
    assert {Path(f["path"]).parent.name for f in json.loads(got.stdout)["findings"]} == {"src"}, got.stderr
