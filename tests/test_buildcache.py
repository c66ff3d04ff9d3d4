"""The per-user build cache: private directories, trusted files only, rebuild on any doubt."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cuentry import buildcache
from cuentry.errors import BuildError

SOURCE = "int cuentry_cache_test(void) { return 42; }\n"


def build(dest: Path, source: str = SOURCE) -> Path:
    return buildcache.build_shared("a test library", source, name="t", dest=dest)


def test_builds_once_into_a_private_directory(tmp_path: Path) -> None:
    lib = build(tmp_path)
    assert stat.S_IMODE(os.lstat(lib.parent).st_mode) == 0o700
    mtime = os.stat(lib).st_mtime_ns
    assert build(tmp_path) == lib and os.stat(lib).st_mtime_ns == mtime  # reused, not rebuilt
    assert buildcache.trusted(lib, lib.name.split("-")[1].split(".")[0])
    assert [p.name for p in lib.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_a_changed_library_is_rebuilt(tmp_path: Path) -> None:
    lib = build(tmp_path)
    good = lib.read_bytes()
    lib.write_bytes(good[:100])                        # truncated / tampered: the stamp's digest disagrees
    assert build(tmp_path).read_bytes() == good


def test_a_symlink_in_place_of_the_library_is_replaced(tmp_path: Path) -> None:
    lib = build(tmp_path)
    good = lib.read_bytes()
    lib.unlink()
    other = tmp_path / "other.so"
    other.write_bytes(good)
    lib.symlink_to(other)
    rebuilt = build(tmp_path)
    assert not rebuilt.is_symlink() and rebuilt.read_bytes() == good


def test_a_group_writable_library_is_not_trusted(tmp_path: Path) -> None:
    lib = build(tmp_path)
    os.chmod(lib, 0o777)
    assert build(tmp_path) == lib
    assert stat.S_IMODE(os.lstat(lib).st_mode) & 0o022 == 0


def test_an_open_directory_is_not_used(tmp_path: Path) -> None:
    lib = build(tmp_path)
    os.chmod(lib.parent, 0o777)                        # someone else could have written there
    got = build(tmp_path)
    assert got.parent != lib.parent and buildcache.is_private_dir(got.parent)


def test_a_world_writable_root_is_not_used(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    got = build(root)
    assert root not in got.parents and buildcache.is_private_dir(got.parent)


def test_the_default_root_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_CACHE_DIR", str(tmp_path / "c"))
    lib = buildcache.build_shared("a test library", SOURCE, name="t")
    assert lib.parent.parent == tmp_path / "c" and buildcache.is_private_dir(tmp_path / "c")


def test_compiler_errors_are_one_line_with_a_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BuildError) as e:
        build(tmp_path, "this is not C")
    assert "cannot build a test library" in str(e.value) and e.value.hint
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(BuildError, match="not found"):
        build(tmp_path, SOURCE + "/* other */")
