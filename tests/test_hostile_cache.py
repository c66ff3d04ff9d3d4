"""Issue 12, security: the fake driver's build cache never hands out a library someone else put there.

The old code cached the fake driver in ``$TMPDIR/cuentry-fake/<variant>/`` and
loaded any ``libcuda.so.1`` there whose public stamp matched; its C source was
written through whatever symlink sat at ``fake_cuda.c``. Each test plants what
an attacker could and checks that the planted code never runs and planted
links are never written through.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cuentry import buildcache
from cuentry.errors import BuildCacheError, BuildError
from cuentry.testing import fakedriver

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")

ROOT_USER = os.getuid() == 0
OTHER_UID = 54321

# A library that looks enough like a driver to be loaded, and leaves a mark when its code runs.
PLANTED_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void pwned(void) {
    const char *p = getenv("PLANTED_MARK");
    if (p) { FILE *f = fopen(p, "w"); if (f) { fputs("planted code ran\n", f); fclose(f); } }
}
int cuInit(unsigned int f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { if (v) *v = 13000; return 0; }
"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("planted")
    (d / "p.c").write_text(PLANTED_C)
    lib = d / "libcuda.so.1"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(lib), str(d / "p.c")], check=True)
    return lib


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cuentry", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120, check=False)


def test_library_planted_where_the_old_code_looked_never_runs(tmp_path: Path, planted: Path) -> None:
    """The issue's reproduction: `cuentry doctor --driver "$(cuentry fake-driver)"` with a planted cache."""
    shared = tmp_path / "tmp"
    old = shared / "cuentry-fake" / "full"
    old.mkdir(parents=True)
    shutil.copy(planted, old / "libcuda.so.1")
    src = fakedriver.source(variant="full")
    (old / "build.sha").write_text(hashlib.sha256(src.encode()).hexdigest()[:16])  # the old public stamp
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (old / "fake_cuda.c").symlink_to(victim)  # the old code wrote its source through this
    mark = tmp_path / "mark"
    env = {"TMPDIR": str(shared), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PLANTED_MARK": str(mark)}
    built = _cli("fake-driver", env=env)
    assert built.returncode == 0, built.stderr
    path = Path(built.stdout.strip())
    assert path.is_relative_to(tmp_path / "cache" / "cuentry")
    doctor = _cli("doctor", "--driver", str(path), env=env)
    assert doctor.returncode == 0, doctor.stderr
    assert "cuentry fake driver" in doctor.stdout
    assert not mark.exists()
    assert victim.read_text() == "keep me"


def _fake_cc(src: Path, out: Path) -> None:
    """A stand-in compiler: the 'library' is the source's bytes with a prefix (the cache's logic is the same)."""
    out.write_bytes(b"built from " + src.read_bytes())


@pytest.mark.parametrize("as_symlink", [True, False], ids=["entry-is-symlink", "library-is-symlink"])
def test_planted_symlinks_in_the_cache_are_not_followed(tmp_path: Path, planted: Path, as_symlink: bool) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    group = root / "thing"
    group.mkdir(mode=0o700)
    evil = tmp_path / "evil-entry"
    evil.mkdir()
    shutil.copy(planted, evil / "lib.so")
    (evil / "sha256").write_text(_sha(evil / "lib.so") + "\n")
    entry = group / buildcache.entry_key("thing", "int x;")
    if as_symlink:
        entry.symlink_to(evil)
    else:
        entry.mkdir(mode=0o700)
        (entry / "lib.so").symlink_to(evil / "lib.so")
        shutil.copy(evil / "sha256", entry / "sha256")
    before = _sha(evil / "lib.so")
    lib = buildcache.cached_build("thing", "int x;", _fake_cc, filename="lib.so", root=root)
    assert lib == entry / "lib.so"
    assert not lib.is_symlink() and not entry.is_symlink()
    assert lib.read_bytes() == b"built from int x;"
    assert _sha(evil / "lib.so") == before  # nothing was written through the links


def test_tampered_library_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    calls: list[Path] = []

    def cc(src: Path, out: Path) -> None:
        calls.append(src)
        _fake_cc(src, out)

    lib = buildcache.cached_build("thing", "int x;", cc, filename="lib.so", root=root)
    with open(lib, "r+b") as fh:
        fh.write(b"\xcc" * 4)
    again = buildcache.cached_build("thing", "int x;", cc, filename="lib.so", root=root)
    assert again == lib and again.read_bytes() == b"built from int x;" and len(calls) == 2


def test_default_cache_is_private_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    calls: list[Path] = []

    def fake_cc(src: Path, out: Path) -> None:
        calls.append(src)
        out.write_bytes(b"library of " + src.read_bytes())

    p1 = buildcache.cached_build("thing", "int x;", fake_cc, filename="libthing.so")
    p2 = buildcache.cached_build("thing", "int x;", fake_cc, filename="libthing.so")
    assert p1 == p2 and len(calls) == 1
    root = tmp_path / "xdg" / "cuentry"
    assert p1.is_relative_to(root)
    for d in (root, root / "thing", p1.parent):
        assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700
    assert buildcache.cached_build("thing", "int y;", fake_cc, filename="libthing.so") != p1
    assert len(calls) == 2


def test_loose_default_cache_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "xdg" / "cuentry"
    root.mkdir(parents=True)
    root.chmod(0o777)

    def fake_cc(src: Path, out: Path) -> None:
        out.write_bytes(b"x")

    p = buildcache.cached_build("thing", "int x;", fake_cc, filename="libthing.so")
    assert not p.is_relative_to(root)  # a fresh private directory instead
    assert stat.S_IMODE(os.lstat(p.parent.parent.parent).st_mode) == 0o700


def test_named_root_writable_by_others_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    with pytest.raises(BuildCacheError, match="others may write"):
        fakedriver.build(root, "full")
    unsafe_parent = tmp_path / "open"
    unsafe_parent.mkdir()
    unsafe_parent.chmod(0o777)
    with pytest.raises(BuildCacheError, match="writable by other users and not sticky"):
        fakedriver.build(unsafe_parent / "mine", "full")


def test_cli_refuses_an_unsafe_dir_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    r = _cli("fake-driver", "--dir", str(root), env={})
    assert r.returncode != 0 and r.returncode != 70
    assert "unsafe build cache" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(not ROOT_USER, reason="needs root to give a directory to another user")
def test_directories_of_another_user_are_not_trusted(tmp_path: Path, planted: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    entry = root / "thing" / buildcache.entry_key("thing", "int x;")
    entry.mkdir(parents=True, mode=0o700)
    shutil.copy(planted, entry / "lib.so")
    (entry / "sha256").write_text(_sha(entry / "lib.so") + "\n")  # a stamp that matches: not enough
    for p in (entry, entry / "lib.so", entry / "sha256"):
        os.chown(p, OTHER_UID, OTHER_UID, follow_symlinks=False)
    lib = buildcache.cached_build("thing", "int x;", _fake_cc, filename="lib.so", root=root)
    assert os.lstat(lib).st_uid == os.getuid() and lib.read_bytes() == b"built from int x;"
    os.chown(root, OTHER_UID, OTHER_UID)
    with pytest.raises(BuildCacheError, match="another user"):
        buildcache.cached_build("thing", "int x;", _fake_cc, filename="lib.so", root=root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # default root = tmp_path/cuentry, foreign owner
    (tmp_path / "cuentry").mkdir(mode=0o700)
    os.chown(tmp_path / "cuentry", OTHER_UID, OTHER_UID)
    p = buildcache.cached_build("thing", "int x;", _fake_cc, filename="lib.so")
    assert not p.is_relative_to(tmp_path / "cuentry")


def test_concurrent_builds_agree(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    got: list[Path] = []
    errors: list[BaseException] = []

    def slow_cc(src: Path, out: Path) -> None:
        out.write_bytes(b"built " + src.read_bytes())

    def work() -> None:
        try:
            got.append(buildcache.cached_build("race", "int z;", slow_cc, filename="sub/lib.so", root=root))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(set(got)) == 1
    assert got[0].read_bytes() == b"built int z;"
    assert [p.name for p in (root / "race").iterdir()] == [got[0].parent.parent.name]


def test_failed_build_leaves_nothing_and_names_the_fix(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    with pytest.raises(BuildError, match="building the fake driver failed") as ei:
        fakedriver.build(root, "full", cc="/bin/false")
    assert ei.value.hint
    assert [p for p in (root / "fake-driver-full").iterdir()] == []


@pytest.mark.parametrize("bad", ["../x", "/abs", "", "a/../b"])
def test_filename_outside_the_entry_is_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError):
        buildcache.cached_build("n", "s", lambda s, o: None, filename=bad, root=tmp_path)


def test_unusable_home_falls_back_to_a_private_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/proc/cuentry-no-such-home")  # cannot be created, even by root

    def fake_cc(src: Path, out: Path) -> None:
        out.write_bytes(b"x")

    p = buildcache.cached_build("thing", "int x;", fake_cc, filename="libthing.so")
    base = p.parent.parent.parent
    assert p.read_bytes() == b"x" and stat.S_IMODE(os.lstat(base).st_mode) == 0o700
    assert os.lstat(base).st_uid == os.getuid()


def test_a_loose_umask_still_builds_a_private_library(tmp_path: Path) -> None:
    old = os.umask(0o002)  # Ubuntu's default for users with a private group: cc makes 0775 files
    try:
        def cc(src: Path, out: Path) -> None:
            out.write_bytes(b"x")
            out.chmod(0o775)

        p = buildcache.cached_build("thing", "int x;", cc, filename="lib.so", root=tmp_path / "c")
        assert stat.S_IMODE(os.lstat(p).st_mode) == 0o700
        assert buildcache.cached_build("thing", "int x;", cc, filename="lib.so", root=tmp_path / "c") == p
    finally:
        os.umask(old)


def test_a_build_that_leaves_no_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="building thing"):
        buildcache.cached_build("thing", "int x;", lambda s, o: None, filename="lib.so", root=tmp_path / "c")


def test_a_relative_dir_gives_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    p = buildcache.cached_build("thing", "int x;", _fake_cc, filename="lib.so", root="rel")
    assert p.is_absolute() and p.is_relative_to(tmp_path / "rel")
