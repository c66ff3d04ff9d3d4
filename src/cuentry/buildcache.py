"""A safe per-user cache for the C libraries cuentry compiles (interposer, fake driver).

What cuentry builds is later loaded into processes (``dlopen``, ``LD_PRELOAD``), so
the cache must never hand out a file that another user could have placed or
changed. The rules:

* the cache lives in ``$CUENTRY_CACHE_DIR``, else ``$XDG_CACHE_HOME/cuentry``, else
  ``~/.cache/cuentry``; each directory cuentry uses there is created with mode
  0700 and checked before every use (a directory, not a symlink, owned by this
  user, no group or other permissions);
* a cached library is used only when it is a regular file owned by this user,
  writable by nobody else, and its stamp records both the build key (source,
  flags, compiler) and the SHA-256 of the library's bytes;
* files are written to fresh ``O_EXCL`` temporary names in that directory and
  renamed into place, so a reader sees either nothing or a whole file;
* on any doubt (a check fails, the directory cannot be made private) the library
  is built again, in a fresh private temporary directory if need be: a slower run,
  never an unsafe one.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .errors import BuildError

CACHE_ENV = "CUENTRY_CACHE_DIR"


def default_root() -> Path:
    """Where the per-user cache lives (not created here)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "cuentry"
    return Path.home() / ".cache" / "cuentry"


def is_private_dir(path: Path) -> bool:
    """A directory (not a symlink) owned by this user with no group or other permissions."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and (st.st_mode & 0o077) == 0


def safe_parent(path: Path) -> bool:
    """A directory owned by this user that nobody else can write to (it may be readable)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and (st.st_mode & 0o022) == 0


def private_dir(path: Path) -> Path | None:
    """Create ``path`` (mode 0700, parents as needed) and return it if it is private; else None."""
    try:
        if not path.parent.exists():
            os.makedirs(path.parent, mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return path if is_private_dir(path) else None


def compiler(cc: str | None = None, what: str = "a C library") -> list[str]:
    """The C compiler command: ``cc``, ``$CC``, or the first of cc/gcc/clang on PATH."""
    text = cc or os.environ.get("CC") or ""
    words = shlex.split(text) if text else []
    if words:
        found = shutil.which(words[0])
        if found:
            return [found, *words[1:]]
        raise BuildError(what, f"the compiler {words[0]!r} was not found",
                         hint="set CC to an installed C compiler")
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return [found]
    raise BuildError(what, "no C compiler found (looked for cc, gcc, clang)")


def _digest_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _owned_regular(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and (st.st_mode & 0o022) == 0


def trusted(lib: Path, key: str) -> bool:
    """Whether ``lib`` is a cached build of ``key`` that nobody else could have changed."""
    stamp = lib.with_name(lib.name + ".stamp")
    if not (_owned_regular(lib) and _owned_regular(stamp) and is_private_dir(lib.parent)):
        return False
    try:
        recorded = stamp.read_text(encoding="ascii").split()
        return recorded == [key, _digest_file(lib)]
    except (OSError, UnicodeDecodeError):
        return False


def _write_atomic(directory: Path, final: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")  # O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, final)
    except BaseException:
        with _suppress_os_error():
            os.unlink(tmp)
        raise


class _suppress_os_error:
    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: object, exc: object, tb: object) -> bool:
        return isinstance(exc, OSError)


def build_shared(what: str, source: str, *, name: str, flags: Sequence[str] = (), libs: Sequence[str] = (),
                 cc: str | None = None, dest: str | os.PathLike[str] | None = None,
                 filename: str | None = None) -> Path:
    """Compile ``source`` into a shared library and return its path, reusing a trusted cached build.

    ``what`` names the library in errors; ``name`` is its subdirectory of the cache
    (or of ``dest``); ``filename`` the library's file name (default: ``<name>-<key>.so``).
    """
    cmd = compiler(cc, what)
    key = hashlib.sha256("\0".join([source, *flags, *libs, *cmd]).encode()).hexdigest()[:24]
    root = Path(dest) if dest is not None else default_root()
    if dest is None:
        private_dir(root)
    elif not root.exists():
        os.makedirs(root, mode=0o700, exist_ok=True)
    directory = private_dir(root / name) if safe_parent(root) else None
    fresh = directory is None
    if directory is None:  # the cache is not safe to use: build where only we can write
        directory = Path(tempfile.mkdtemp(prefix=f"cuentry-{name}-"))
    lib = directory / (filename or f"{name}-{key}.so")
    if not fresh and trusted(lib, key):
        return lib
    # A private working directory with fixed names: the build is the same bytes each time.
    work = Path(tempfile.mkdtemp(dir=directory, prefix=".build-"))
    try:
        fd = os.open(work / "source.c", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(source)
        proc = subprocess.run([*cmd, "-shared", "-fPIC", *flags, "-o", "out.so", "source.c", *libs],
                              cwd=work, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BuildError(what, (proc.stderr.strip() or proc.stdout.strip() or "the compiler failed")[:2000],
                             hint=f"the compiler {cmd[0]} rejected cuentry's generated C: please report it "
                                  "(set CC to try another compiler)")
        built = work / "out.so"
        os.chmod(built, 0o700)  # our private work directory: nobody else can swap it
        if not _owned_regular(built):
            raise BuildError(what, f"the compiler left no library at {built}")
        digest = _digest_file(built)
        os.replace(built, lib)
        _write_atomic(directory, lib.with_name(lib.name + ".stamp"), f"{key} {digest}\n".encode("ascii"))
    except OSError as exc:
        raise BuildError(what, f"{type(exc).__name__}: {exc}", hint="check the cache directory "
                         f"{directory} (or set {CACHE_ENV} to a private directory)") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lib
