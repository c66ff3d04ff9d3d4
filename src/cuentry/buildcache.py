"""A per-user cache of libraries cuentry compiles itself (the fake driver, interposers).

cuentry loads what it builds into the running process, so whatever sits in the
cache is code that will run. The cache therefore trusts nothing it did not just
verify:

* The root is `$XDG_CACHE_HOME/cuentry` (`~/.cache/cuentry` when unset or not
  absolute), or a directory the caller names. It is created with mode 0700 and,
  before every use, must be a real directory (not a symlink) owned by this user
  and not writable by anyone else; every directory above it must be owned by
  this user or root and not writable by others unless sticky (`/tmp`). A
  caller-named root that fails is refused ([BuildCacheError][cuentry.errors.BuildCacheError]); the default
  root falls back to a fresh private temporary directory (no reuse, always safe).
* An entry is `ROOT/NAME/KEY/`, where KEY is the SHA-256 of the name, the
  source text and the build's extra key. It is built in a fresh `mkdtemp`
  directory (0700, a name nobody could predict), every file written with
  `O_CREAT|O_EXCL|O_NOFOLLOW`, and published by one `rename` of the whole
  directory, so the library and its stamp (the SHA-256 of the library's bytes)
  appear together or not at all.
* On use, the entry directory, the library and the stamp are opened without
  following symlinks and checked (owner, mode, regular file) and the library's
  bytes are hashed against the stamp. On any doubt the entry is moved aside and
  rebuilt.

Only POSIX systems are supported (`os.getuid`, `O_NOFOLLOW`); the libraries
built here are Linux shared objects anyway.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import BuildCacheError, BuildError

__all__ = [
    "STAMP",
    "cached_build",
    "check_root",
    "default_root",
    "entry_key",
    "file_digest",
    "write_new",
]

STAMP = "sha256"
_OWNER_ONLY = 0o077
_OTHERS_WRITE = 0o022
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 1 << 20


def default_root() -> Path:
    """`$XDG_CACHE_HOME/cuentry`, or `~/.cache/cuentry` (the XDG base directory rule)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "cuentry"


def _uid() -> int:
    return os.getuid()


def _why_unsafe_ancestors(path: Path) -> str | None:
    """Why a directory above `path` lets another user swap what is below it, or None."""
    real = Path(os.path.realpath(path.parent))
    for p in (real, *real.parents):
        try:
            st = os.stat(p)
        except OSError as exc:
            return f"cannot inspect {p}: {exc.strerror}"
        if st.st_uid not in (0, _uid()):
            return f"{p} belongs to another user (uid {st.st_uid})"
        if st.st_mode & _OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
            return f"{p} is writable by other users and not sticky"
    return None


def _why_unsafe_dir(path: Path | str, *, private: bool = True) -> str | None:
    """Why `path` is not a directory only this user controls, or None. Never follows a symlink."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot inspect {path}: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if st.st_uid != _uid():
        return f"{path} belongs to another user (uid {st.st_uid})"
    mask = _OWNER_ONLY if private else _OTHERS_WRITE
    if st.st_mode & mask:
        return f"{path} has mode {stat.S_IMODE(st.st_mode):o} (others may write{' or read' if private else ''})"
    return None


def check_root(root: Path, *, create: bool = True, private: bool = True) -> None:
    """Make sure `root` is a directory only this user controls; raise BuildCacheError otherwise.

    `create`: make it (mode 0700, parents as needed) when it is missing.
    `private`: require mode 0700 (the default root); a caller-named directory
    only needs to be unwritable by others.
    """
    if create and not os.path.lexists(root):
        try:
            root.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(root, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise BuildCacheError(str(root), f"cannot create it: {exc.strerror}",
                                  hint="pass a directory you own, or set XDG_CACHE_HOME to one") from None
    why = _why_unsafe_dir(root, private=private) or _why_unsafe_ancestors(root)
    if why:
        raise BuildCacheError(str(root), why, hint=f"remove {root} (or make it yours: chmod 700) and run again, "
                              "or pass a directory only you can write")


def _open_checked(path: Path) -> int:
    """Open a regular file owned by this user, unwritable by others, without following a symlink."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != _uid() or st.st_mode & _OTHERS_WRITE:
        os.close(fd)
        raise OSError(f"{path}: not a regular file of this user")
    return fd


def file_digest(path: Path) -> str:
    """SHA-256 of a file checked as `_open_checked` does (OSError when it is not one)."""
    fd = _open_checked(path)
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def write_new(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Create `path` (which must not exist, and is never a symlink followed) holding `data`."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _publish(tmp: Path, entry: Path, filename: str, attempts: int = 8) -> None:
    """Rename the finished build over `entry`; when builders race, the first verified entry wins.

    A rename onto an existing (non-empty) entry fails: if that entry verifies, another
    builder published the same content and it is used; if it does not, it is moved
    aside (never trusted) and the rename is tried again.
    """
    for _ in range(attempts):
        try:
            os.rename(tmp, entry)
            return
        except OSError:
            if _verified(entry, filename):
                return
            if os.path.lexists(entry):
                _discard(entry)
    os.rename(tmp, entry)  # the last try raises the real error


def _verified(entry: Path, filename: str) -> bool:
    """The entry holds the library its stamp names, and only this user could have put it there."""
    if _why_unsafe_dir(entry) is not None:
        return False
    lib = entry / filename
    for d in lib.relative_to(entry).parents:
        if d != Path(".") and _why_unsafe_dir(entry / d) is not None:
            return False
    try:
        fd = _open_checked(entry / STAMP)
        with os.fdopen(fd, "rb") as fh:
            want = fh.read(128).decode("ascii", errors="replace").strip()
        return file_digest(lib) == want
    except OSError:
        return False


def _discard(entry: Path) -> None:
    """Move a doubtful entry out of the way (rename first: never delete through a swapped path)."""
    try:
        aside = tempfile.mkdtemp(prefix=".bad-", dir=entry.parent)
        os.rename(entry, os.path.join(aside, "entry"))
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def entry_key(name: str, source_text: str, extra: str = "") -> str:
    """The content key of a build: SHA-256 of name, source and extra key (flags, compiler)."""
    h = hashlib.sha256()
    for part in (name, source_text, extra):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _check_filename(filename: str) -> None:
    p = Path(filename)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts):
        raise ValueError(f"filename must be a relative path without '..', got {filename!r}")


def _build_into(tmp: Path, filename: str, source_name: str, source_text: str,
                build_fn: Callable[[Path, Path], None]) -> None:
    src = tmp / source_name
    write_new(src, source_text.encode())
    lib = tmp / filename
    for d in reversed(lib.relative_to(tmp).parents):
        if d != Path("."):
            os.mkdir(tmp / d, 0o700)
    build_fn(src, lib)
    # The compiler made the file with the user's umask (0775 under umask 002): owner-only now, through
    # a descriptor opened without following a link, before anything checks or hashes it.
    fd = os.open(lib, os.O_RDONLY | _NOFOLLOW)
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    digest = file_digest(lib)  # also checks that the build left a regular file of ours
    write_new(tmp / STAMP, digest.encode() + b"\n")


_FALLBACK: dict[int, Path] = {}  # pid -> this process's private build directory when no cache is usable


def _fallback_root() -> Path:
    """One fresh private directory per process for builds when no per-user cache is safe, removed at exit
    (a trace or a test run leaves no cuentry-build-* folder behind); a forked child makes its own."""
    pid = os.getpid()
    got = _FALLBACK.get(pid)
    if got is None:
        got = _FALLBACK[pid] = Path(tempfile.mkdtemp(prefix="cuentry-build-"))
        atexit.register(_remove_fallback, pid, got)
    return got


def _remove_fallback(pid: int, path: Path) -> None:
    if os.getpid() == pid:  # never the parent's folder from an exiting forked child
        shutil.rmtree(path, ignore_errors=True)


def cached_build(name: str, source_text: str, build_fn: Callable[[Path, Path], None], *,
                 filename: str, source_name: str = "source.c", extra_key: str = "",
                 root: str | os.PathLike[str] | None = None) -> Path:
    """The path of the library built from `source_text`, building it when no verified copy exists.

    `build_fn(source_path, output_path)` compiles the source (written for it to
    `source_path`) into `output_path` and raises on failure; both paths lie in
    a fresh private directory. `filename` is the library's path inside the entry
    (`libcuda.so.1`, or `stubs/libcuda.so.1` where the directory name matters).
    `root`: the cache directory (default `default_root`). Raises
    [BuildCacheError][cuentry.errors.BuildCacheError] when a named root is not private to this user, and
    whatever `build_fn` raises.
    """
    if not name or os.sep in name or name.startswith("."):
        raise ValueError(f"name must be a plain directory name, got {name!r}")
    _check_filename(filename)
    if root is None:
        try:
            base = default_root()  # Path.home() raises RuntimeError without $HOME or a passwd entry
            check_root(base)
        except (BuildCacheError, RuntimeError):
            # No safe per-user cache here (read-only home, foreign owner): build in a fresh
            # private directory every time instead of trusting anything shared.
            base = _fallback_root()
    else:
        base = Path(root).absolute()  # the path handed out must work from any directory
        check_root(base, private=False)
    group = base / name
    if not os.path.lexists(group):
        try:
            os.mkdir(group, 0o700)
        except FileExistsError:
            pass
    if _why_unsafe_dir(group) is not None:
        _discard(group)
        os.mkdir(group, 0o700)
    entry = group / entry_key(name, source_text, extra_key)
    if _verified(entry, filename):
        return entry / filename
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=group))
    try:
        _build_into(tmp, filename, source_name, source_text, build_fn)
        _publish(tmp, entry, filename)
    except OSError as exc:  # a full disk, a vanished directory: one error, not a traceback
        raise BuildError(f"building {name} in {group} failed: {exc.strerror or exc}",
                         hint="check the disk and the cache directory, or pass another directory") from None
    finally:
        if os.path.lexists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    if not _verified(entry, filename):
        raise BuildCacheError(str(entry), "the entry just built does not verify",
                              hint="remove the cache directory and run again")
    return entry / filename
