"""The ignore-file reader of `cuentry lint` (`cuentry.lint.gitignore`): git's semantics, without running git.

The reader is compared with `git check-ignore --no-index` (the test runs git, in a tree it made, with a clean
environment and fsmonitor off): on hand-picked cases from gitignore(5), and on trees and patterns that
hypothesis makes up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry.lint.gitignore import GitIgnore, parse

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="no git")


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"),
            "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def _git_ignored(repo: Path, rels: list[str], home: Path) -> set[str]:
    assert GIT is not None
    got = subprocess.run([GIT, "-c", "core.fsmonitor=false", "-c", "core.ignorecase=false", "-C", str(repo),
                          "check-ignore", "--no-index", "-z", "--stdin"],
                         input="".join(r + "\0" for r in rels).encode(), capture_output=True, env=_env(home),
                         timeout=60, check=False)
    assert got.returncode in (0, 1), got.stderr
    return {b.decode() for b in got.stdout.split(b"\0") if b}


def _tree(root: Path, files: list[str], ignores: dict[str, str], home: Path) -> None:
    assert GIT is not None
    root.mkdir()
    subprocess.run([GIT, "init", "-q", str(root)], env=_env(home), check=True, capture_output=True)
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("int x;\n")
    for d, text in ignores.items():
        target = root / ".git" / "info" / "exclude" if d == "@exclude" else root / d / ".gitignore"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _ours(root: Path, rels: list[str], home: Path) -> set[str]:
    gi = GitIgnore(global_file=str(home / "xdg" / "git" / "ignore"))
    return {r for r in rels if gi.ignored(str(root / r))}


FILES = ["a.c", "b.h", "build/x.c", "src/build/y.c", "src/a.c", "src/deep/er/z.cu", "doc/frotz/q.c", "a/doc/frotz/q.c",
         "foo/bar.c", "x/foo/bar.c", "lib/keep.h", "lib/drop.h", "sp ace.c", "hash#.c", "!bang.c", "[br].c", "t.cu",
         "abc/x/y/z.c", "abc/z.c", "aXb.c", "a/b/c.c", "v1.c", "v2.c", "vv.c"]

CASES = [
    ("build/\n", {}),
    ("/build/\n", {}),
    ("*.c\n!src/*.c\n", {}),
    ("src/\n!src/a.c\n", {}),                      # a file in an ignored directory cannot be re-included
    ("doc/frotz/\n", {}),
    ("frotz/\n", {}),
    ("**/foo/bar.c\n", {}),
    ("abc/**\n", {}),
    ("abc/**/z.c\n", {}),
    ("a/**/c.c\n", {}),
    ("lib/*\n!lib/keep.h\n", {}),
    ("sp\\ ace.c\n", {}),
    ("sp ace.c   \n", {}),
    ("\\#*.c\n#hash#.c\n", {}),
    ("hash#.c\n", {}),
    ("\\!bang.c\n", {}),
    ("\\[br\\].c\n", {}),
    ("[br].c\n", {}),
    ("[!a-c]*.c\n", {}),
    ("[[:upper:]]*\n", {}),
    ("v[0-9].c\n", {}),
    ("v?.c\n", {}),
    ("*\n!*/\n!*.cu\n", {}),
    ("", {"src": "*.c\n", "src/deep": "!*.cu\n*.cu\n"}),
    ("*.cu\n", {"src/deep": "!z.cu\n"}),
    ("", {"@exclude": "*.h\n", "lib": "!keep.h\n"}),
    ("a.c\r\nb.h\r\n", {}),
    ("\ufeffa.c\n", {}),
    ("build\n", {}),
    ("/a.c\n", {}),
    ("foo/*\n", {}),
    ("foo/**/\n", {}),
    ("**\n", {}),
    ("*/\n", {}),
    ("[a\n", {}),
    ("trailing\\\n", {}),
]


@needs_git
@pytest.mark.parametrize(("top", "more"), CASES)
def test_the_reader_answers_as_git_does(tmp_path: Path, top: str, more: dict[str, str]) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    _tree(root, FILES, {"": top, **more} if top else more, home)
    assert _ours(root, FILES, home) == _git_ignored(root, FILES, home)


_PART = st.sampled_from(["a", "b", "src", "build", "x.c", "y.h", "z.cu", "deep", "B"])
_PATH = st.lists(_PART, min_size=1, max_size=4).map(lambda ps: "/".join(ps[:-1] + [ps[-1] + ".c"]))
_TOKEN = st.sampled_from(["a", "b", "src", "build", "x", "*", "**", "?", "/", ".c", "[ab]", "[!a]", "c", "B", "deep"])
_LINE = st.tuples(st.booleans(), st.lists(_TOKEN, min_size=1, max_size=5), st.booleans()).map(
    lambda t: ("!" if t[0] else "") + "".join(t[1]) + ("/" if t[2] else ""))


@needs_git
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(_PATH, min_size=1, max_size=8, unique=True),
       top=st.lists(_LINE, max_size=5), nested=st.lists(_LINE, max_size=3))
def test_made_up_trees_are_judged_as_git_judges_them(tmp_path_factory: pytest.TempPathFactory, files: list[str],
                                                     top: list[str], nested: list[str]) -> None:
    base = tmp_path_factory.mktemp("gi")
    root, home = base / "repo", base / "home"
    home.mkdir()
    clean = [f for f in files if not any(f.startswith(g + "/") for g in files)]   # no file is another's directory
    sub = next((f.rsplit("/", 1)[0] for f in clean if "/" in f), "")
    _tree(root, clean, {"": "\n".join(top) + "\n", **({sub: "\n".join(nested) + "\n"} if sub else {})}, home)
    assert _ours(root, clean, home) == _git_ignored(root, clean, home), (top, nested, sub)


def test_the_global_file_is_the_lowest_precedence(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    (root / "a.c").write_text("")
    (root / "b.c").write_text("")
    glob = tmp_path / "ignore"
    glob.write_text("*.c\n")
    (root / ".gitignore").write_text("!b.c\n")
    assert GitIgnore(global_file=str(glob)).select([str(root / "a.c"), str(root / "b.c")]) == {str(root / "a.c")}


def test_a_linked_work_tree_reads_the_common_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "info").mkdir(parents=True)
    (main / ".git" / "info" / "exclude").write_text("gen.c\n")
    wt_dir = main / ".git" / "worktrees" / "w"
    wt_dir.mkdir(parents=True)
    (wt_dir / "commondir").write_text("../..\n")
    work = tmp_path / "w"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {wt_dir}\n")
    (work / "gen.c").write_text("")
    (work / "kept.c").write_text("")
    assert GitIgnore(global_file="").select([str(work / "gen.c"), str(work / "kept.c")]) == {str(work / "gen.c")}


def test_ignore_files_that_are_no_regular_files_add_nothing(tmp_path: Path) -> None:
    """A .gitignore that is a FIFO, a link to a device or a directory is not read (nothing blocks, nothing is
    ignored by it); a symbolic link to a regular file is not followed, as git does not follow it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for d in ("fifo", "dev", "dir", "link"):
        (root / d).mkdir()
        (root / d / "a.c").write_text("")
    os.mkfifo(root / "fifo" / ".gitignore")
    os.symlink("/dev/zero", root / "dev" / ".gitignore")
    (root / "dir" / ".gitignore").mkdir()
    (tmp_path / "real").write_text("*.c\n")
    os.symlink(tmp_path / "real", root / "link" / ".gitignore")
    paths = [str(root / d / "a.c") for d in ("fifo", "dev", "dir", "link")]
    assert GitIgnore(global_file="").select(paths) == set()


def test_outside_a_work_tree_nothing_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("")
    (tmp_path / ".gitignore").write_text("*.c\n")
    assert GitIgnore(global_file="").select([str(tmp_path / "a.c")]) == set()


def test_parse_skips_comments_blank_lines_and_keeps_escapes() -> None:
    pats = parse("# c\n\n   \n\\#x\n!y/\n/z\n")
    assert [(p.negate, p.dir_only, p.basename) for p in pats] == [(False, False, True), (True, True, True),
                                                                 (False, False, False)]
