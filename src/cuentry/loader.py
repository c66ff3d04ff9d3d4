"""Finding the driver (libcuda / nvcuda.dll) and the runtime (libcudart).

Search order for the driver: an explicit path, `$CUENTRY_DRIVER`, the system
loader's own search for `libcuda.so.1` (`nvcuda.dll` on Windows), WSL's
driver store, then well-known install directories. Each attempt is recorded, so
a failure says exactly what was searched. The toolkit's link-time stub
`libcuda.so` is recognised and reported, never used as a driver. The driver is
never in a pip wheel, so cuentry's own search is the only one for it.

Search order for the runtime (libcudart) and other NVIDIA libraries (NVRTC for
the GPU tests): an explicit path, `$CUENTRY_RUNTIME`, then NVIDIA's
`cuda-pathfinder` (the search cuda-python, cuda.core and CuPy use, so cuentry
finds the same libcudart they load), then cuentry's own list (system loader,
NVIDIA wheels, `$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`).
"""

from __future__ import annotations

import os
import sys

from .calls.ffi import Bootstrap, LoadFailure, SharedLibrary
from .errors import DriverNotFoundError, LibraryPathError, StubLibraryError, UsageError, shorten
from .names import CUDA_ERROR_STUB_LIBRARY
from .testing.fakeenv import check_env as _check_fake_knobs  # at import, not at a first load (a fork-safe first use)
from .testing.fakeenv import variant_of as _fake_variant

__all__ = [
    "DRIVER_ENV",
    "NOT_A_DRIVER",
    "NOT_A_RUNTIME",
    "PATHFINDER_HOW",
    "PATHFINDER_MISSING",
    "RUNTIME_ENV",
    "WSL_DIR",
    "Attempt",
    "Found",
    "as_given",
    "describe",
    "driver_candidates",
    "is_stub_path",
    "load_driver",
    "load_runtime",
    "locate_nvidia_library",
    "path_arg",
    "pathfinder_version",
    "runtime_candidates",
    "toolkit_roots",
]


DRIVER_ENV = "CUENTRY_DRIVER"
RUNTIME_ENV = "CUENTRY_RUNTIME"

_LINUX_DIRS = (
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
    "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/nvidia",
)
WSL_DIR = "/usr/lib/wsl/lib"


TYPE_CHECKING = False  # no typing/dataclasses at run time: a cold start stays cheap
if TYPE_CHECKING:
    from collections.abc import Sequence


class Attempt:
    """One place looked at, and what happened (read-only)."""

    __slots__ = ("candidate", "how", "outcome")
    candidate: str
    how: str
    outcome: str

    def __init__(self, candidate: str, how: str, outcome: str) -> None:
        for k, v in (("candidate", candidate), ("how", how), ("outcome", outcome)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Attempt is read-only")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Attempt:
            return NotImplemented
        return (self.candidate, self.how, self.outcome) == (other.candidate, other.how, other.outcome)

    def __hash__(self) -> int:
        return hash((self.candidate, self.how, self.outcome))

    def __repr__(self) -> str:
        return f"Attempt(candidate={self.candidate!r}, how={self.how!r}, outcome={self.outcome!r})"


class Found:
    """A loaded library and how it was found."""

    __slots__ = ("library", "path", "how", "attempts", "stub", "fake")

    def __init__(self, library: SharedLibrary, path: str, how: str, attempts: list[Attempt] | None = None,
                 stub: bool = False, fake: bool = False) -> None:
        self.library = library
        self.path = path
        self.how = how
        self.attempts: list[Attempt] = [] if attempts is None else attempts
        self.stub = stub
        self.fake = fake


def driver_candidates(explicit: str | None = None) -> list[tuple[str, str]]:
    """(candidate, how) pairs, in search order."""
    out: list[tuple[str, str]] = []
    if explicit:
        out.append((as_given(explicit), "argument"))
        return out
    env = os.environ.get(DRIVER_ENV)
    if env:
        out.append((env, f"${DRIVER_ENV}"))
        return out
    if sys.platform == "win32":  # pragma: no cover
        out.append(("nvcuda.dll", "system loader"))
        return out
    if sys.platform == "darwin":  # pragma: no cover
        return out
    out.append(("libcuda.so.1", "system loader (LD_LIBRARY_PATH, ld.so cache)"))
    if os.path.isdir(WSL_DIR):
        out.append((os.path.join(WSL_DIR, "libcuda.so.1"), "WSL driver store"))
    for d in _LINUX_DIRS:
        out.append((os.path.join(d, "libcuda.so.1"), "well-known directory"))
    return out


def as_given(path: str) -> str:
    """An explicitly given library as the user meant it: a bare name that is a file here is that file.

    dlopen treats a name without a slash as a soname to search for, so
    `--driver libcuda.so.1` in the library's own directory would load some other
    copy, or none. Only explicit arguments get this; $CUENTRY_DRIVER is taken as is
    (a bare name there means a soname).
    """
    if os.sep not in path and "\0" not in path and os.path.isfile(path):
        return os.path.abspath(path)
    return path


def is_stub_path(path: str) -> bool:
    return f"{os.sep}stubs{os.sep}" in path or path.endswith(f"{os.sep}stubs")


def _open(cand: str, how: str, attempts: list[Attempt]) -> SharedLibrary | None:
    """dlopen one candidate, recording why it failed."""
    if "\0" in cand:
        attempts.append(Attempt(cand, how, "not a path (it holds a NUL character)"))
        return None
    if os.sep in cand and not os.path.exists(cand):
        attempts.append(Attempt(cand, how, "no such file"))
        return None
    try:
        return SharedLibrary(cand)
    except LoadFailure as exc:
        attempts.append(Attempt(cand, how, str(exc)))
        return None


def path_arg(path: object, what: str = "driver") -> str | None:
    """An explicit library path as given to a load: str, an `os.PathLike` of str (`pathlib.Path`), or None.

    Raises UsageError for anything else (bytes, numbers, ...), before any loader sees it.
    """
    if path is None or type(path) is str:
        return path
    if isinstance(path, os.PathLike):
        got = os.fspath(path)
        if type(got) is str:
            return got
    raise UsageError(f"the {what} path must be a str or an os.PathLike (pathlib.Path), got {type(path).__name__}",
                     hint=f"pass the {what} library's path, e.g. pathlib.Path('/usr/lib/x86_64-linux-gnu/libcuda.so.1')")


def _answers_as_stub(lib: SharedLibrary) -> bool:
    """The toolkit's stub answers every call with CUDA_ERROR_STUB_LIBRARY: ask the one call without side effects.

    `cuDriverGetVersion` needs no `cuInit` and changes nothing; only
    [Driver][cuentry.driver.Driver] calls `cuInit` (and only when asked to), so
    loading never initialises the driver.
    """
    rc, _ = Bootstrap(lib).get_version("cuDriverGetVersion")
    return rc == CUDA_ERROR_STUB_LIBRARY


def load_driver(explicit: str | os.PathLike[str] | None = None, *, allow_stub: bool = False) -> Found:
    """Load the driver; raise DriverNotFoundError (with every attempt) or StubLibraryError.

    Nothing is initialised: the stub probe is `cuDriverGetVersion`, never `cuInit`.
    """
    attempts: list[Attempt] = []
    tried_paths: set[str] = set()
    for cand, how in driver_candidates(path_arg(explicit)):
        lib = _open(cand, how, attempts)
        if lib is None:
            continue
        path = lib.path()
        if path in tried_paths:
            lib.close()
            continue
        tried_paths.add(path)
        if not lib.address("cuInit") or not lib.address("cuDriverGetVersion"):
            attempts.append(Attempt(cand, how, NOT_A_DRIVER))
            lib.close()
            continue
        stub = is_stub_path(path) or is_stub_path(cand) or _answers_as_stub(lib)
        if stub and not allow_stub:
            lib.close()
            raise StubLibraryError(path)
        attempts.append(Attempt(cand, how, "loaded"))
        fake = bool(lib.address("cuentryFakeDriver"))
        if fake:
            _check_fake_env(lib)
        return Found(lib, path, how, attempts, stub=stub, fake=fake)
    if len(attempts) == 1 and attempts[0].how in ("argument", f"${DRIVER_ENV}"):
        raise _named_failure(attempts[0], "driver")
    raise DriverNotFoundError([a.candidate for a in attempts] or ["(no candidates on this platform)"],
                              [a.outcome for a in attempts] or [f"unsupported platform {sys.platform}"])


PATHFINDER_HOW = "cuda-pathfinder"
PATHFINDER_MISSING = "cuda-pathfinder is not installed (pip install cuda-pathfinder); using cuentry's own search"


def locate_nvidia_library(libname: str) -> tuple[str | None, Attempt]:
    """Find an NVIDIA library ("cudart", "nvrtc", ...) the way NVIDIA's Python packages do.

    Asks `cuda.pathfinder.load_nvidia_dynamic_lib` (its public API): already
    loaded in the process, NVIDIA's pip wheels, conda, the system loader, then
    `$CUDA_PATH` before `$CUDA_HOME`. That call loads the library into the
    process for good (pathfinder caches the handle; cuentry never closes it).
    Returns (absolute path, the attempt) or (None, the attempt saying why not),
    never raises: a missing cuda-pathfinder is one line in the attempt.
    """
    try:
        from cuda import pathfinder
    except ImportError:
        return None, Attempt(libname, PATHFINDER_HOW, PATHFINDER_MISSING)
    try:
        loaded = pathfinder.load_nvidia_dynamic_lib(libname)
    except Exception as exc:  # its errors (not found, unknown, unsupported) all mean "not here"
        first = (str(exc).strip().splitlines() or [""])[0]
        return None, Attempt(libname, PATHFINDER_HOW, shorten(f"{type(exc).__name__}: {first}", 300))
    path = getattr(loaded, "abs_path", None)
    via = getattr(loaded, "found_via", None) or "found"
    if not path:
        return None, Attempt(libname, PATHFINDER_HOW, f"found via {via} but no path reported")
    return str(path), Attempt(str(path), f"{PATHFINDER_HOW} ({via})", "located")


def pathfinder_version() -> str | None:
    """The importable cuda-pathfinder's version, or None when it cannot be imported."""
    try:
        from cuda import pathfinder
    except ImportError:
        return None
    return str(getattr(pathfinder, "__version__", "unknown version"))


def toolkit_roots() -> list[tuple[str, str]]:
    """(directory, how) of CUDA toolkits named by the environment: $CUDA_PATH before $CUDA_HOME, as pathfinder does."""
    out: list[tuple[str, str]] = []
    for var in ("CUDA_PATH", "CUDA_HOME"):
        root = os.environ.get(var)
        if root and root not in [r for r, _ in out]:
            out.append((root, f"${var}"))
    out.append(("/usr/local/cuda", "default toolkit directory"))
    return out


def _check_fake_env(lib: SharedLibrary) -> None:
    """The fake driver reads its knobs with atoi: refuse a malformed one before it is read as 0, and a
    release its variant cannot be (a `full` fake pretending to be 11.8 would offer the 12.0 lookup)."""
    try:
        _check_fake_knobs(variant=_fake_variant(lambda name: bool(lib.address(name))))
    except Exception:
        lib.close()
        raise


NOT_A_DRIVER = "it does not export cuInit and cuDriverGetVersion"
NOT_A_RUNTIME = "it does not export cudaRuntimeGetVersion"


def _named_failure(a: Attempt, expected: str) -> LibraryPathError:
    """The error for the one library the user named: missing, unloadable, or the wrong library."""
    if a.outcome == "no such file" or a.outcome.endswith("No such file or directory"):
        kind = "missing"
    elif a.outcome in (NOT_A_DRIVER, NOT_A_RUNTIME):
        kind = "wrong_library"
    else:
        kind = "unloadable"
    return LibraryPathError(a.candidate, a.how, a.outcome, kind, expected)


def runtime_candidates(explicit: str | None = None) -> list[tuple[str, str]]:
    """cuentry's own libcudart search, in order.

    cuda-pathfinder is asked first by [load_runtime][cuentry.loader.load_runtime].
    """
    out: list[tuple[str, str]] = []
    if explicit:
        return [(as_given(explicit), "argument")]
    env = os.environ.get(RUNTIME_ENV)
    if env:
        return [(env, f"${RUNTIME_ENV}")]
    if sys.platform == "win32":  # pragma: no cover
        for v in ("13", "12", "110"):
            out.append((f"cudart64_{v}.dll", "system loader"))
        return out
    for soname in ("libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"):
        out.append((soname, "system loader (LD_LIBRARY_PATH, ld.so cache)"))
    import glob
    import sysconfig

    purelib = sysconfig.get_paths().get("purelib", "")
    for pattern in ("nvidia/cu13/lib/libcudart.so.*", "nvidia/cuda_runtime/lib/libcudart.so.*"):
        for p in sorted(glob.glob(os.path.join(purelib, pattern)), reverse=True):
            out.append((p, "pip wheel (nvidia-cuda-runtime)"))
    for root, how in toolkit_roots():
        for sub in ("lib64", "lib"):
            for p in sorted(glob.glob(os.path.join(root, sub, "libcudart.so.*")), reverse=True):
                if (p, f"CUDA toolkit ({how})") not in out:
                    out.append((p, f"CUDA toolkit ({how})"))
    return out


def load_runtime(explicit: str | os.PathLike[str] | None = None, *, pathfinder: bool = True) -> Found:
    """Load libcudart: an explicit path or $CUENTRY_RUNTIME, else cuda-pathfinder, else cuentry's own list."""
    explicit = path_arg(explicit, "runtime")
    attempts: list[Attempt] = []
    candidates = runtime_candidates(explicit)
    if pathfinder and not explicit and not os.environ.get(RUNTIME_ENV):
        located, attempt = locate_nvidia_library("cudart")
        if located:
            candidates.insert(0, (located, attempt.how))
        else:
            attempts.append(attempt)
    for cand, how in candidates:
        lib = _open(cand, how, attempts)
        if lib is None:
            continue
        if not lib.address("cudaRuntimeGetVersion"):
            attempts.append(Attempt(cand, how, NOT_A_RUNTIME))
            lib.close()
            continue
        attempts.append(Attempt(cand, how, "loaded"))
        fake = bool(lib.address("cuentryFakeDriver"))
        if fake:
            _check_fake_env(lib)
        return Found(lib, lib.path(), how, attempts, fake=fake)
    if len(attempts) == 1 and attempts[0].how in ("argument", f"${RUNTIME_ENV}"):
        raise _named_failure(attempts[0], "runtime")
    err = DriverNotFoundError([a.candidate for a in attempts], [a.outcome for a in attempts])
    err.args = (err.message.replace("CUDA driver library", "CUDA runtime library (libcudart)"),)
    err.hint = f"install the CUDA runtime (pip install nvidia-cuda-runtime) or set {RUNTIME_ENV}=/path/to/libcudart.so"
    raise err


def describe(attempts: Sequence[Attempt]) -> list[dict[str, str]]:
    return [{"candidate": a.candidate, "how": a.how, "outcome": a.outcome} for a in attempts]
