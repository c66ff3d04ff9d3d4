"""cuentry's pytest plugin: test CUDA entry-point code at any driver version, with or without a GPU.

Installed with cuentry and loaded by pytest through the `pytest11` entry
point (disable it with `-p no:cuentry`). It gives:

* `cuentry_fake_driver`: a fixture returning a factory. `cuentry_fake_driver(version=12040)`
  builds cuentry's fake driver (C generated from the catalog, compiled once with
  the system C compiler and cached), makes it pretend to be that driver release
  and points `$CUENTRY_DRIVER` at it for the rest of the test, so code that
  calls `cuentry.Driver.load()` gets it. The variant follows the version (11.3
  to 11.8: only the v1 `cuGetProcAddress`; older: none) unless given.
* `@pytest.mark.requires_driver(">=12.4")`: skip the test unless the driver
  cuentry finds (the real one, or `$CUENTRY_DRIVER`) satisfies every clause
  (`>=`, `>`, `<=`, `<`, `==`, `!=`; comma-separated; releases
  `12.4` or numbers `12040`). No driver, or the toolkit's stub: skipped too.
* `cuentry_emulate`: a factory fixture on machines with a driver:
  `cuentry_emulate(12040).run([sys.executable, "-m", "mylib.selftest"])` runs
  a command under `cuentry emulate --driver 12040`, so a library's fallbacks
  are exercised on a newer real driver. Skipped, with the reason, when the
  `cuentry emulate` command is not installed or no driver is found.

Why a factory: a test often needs a particular driver release, and one fixture
per release would not scale. The plugin imports nothing heavy at load time
(pytest loads it in every session of an environment where cuentry is
installed); the catalog and the driver are touched only by tests that use a
fixture or the marker.

Bad input fails the test with one line naming the fix: an unknown version
(`cuentry_fake_driver(version=12345)`), a malformed marker, an unknown variant.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from .driver import Driver

__all__ = [
    "DRIVER_ENV",
    "FAKE_ENV",
    "MARKER",
    "OLDEST",
    "Emulation",
    "FakeDriver",
    "SpecError",
    "cuentry_emulate",
    "cuentry_fake_driver",
    "emulate_available",
    "known_version",
    "newest_known",
    "parse_spec",
    "probe_driver",
    "pytest_configure",
    "pytest_runtest_setup",
    "requirement_skip_reason",
    "variant_for",
]


MARKER = "requires_driver"
FAKE_ENV = "CUENTRY_FAKE_DRIVER_VERSION"
DRIVER_ENV = "CUENTRY_DRIVER"
# The oldest release that has the Driver API entry points cuentry knows (cuMemAlloc@3020).
OLDEST = 3020
_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<)?\s*(\d+(?:\.\d+){0,2})\s*")
_OPS: dict[str, Callable[[int, int], bool]] = {
    ">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


class SpecError(ValueError):
    """A fixture argument or marker the plugin cannot use; its message is the one line pytest shows."""


def newest_known() -> int:
    """The newest driver release cuentry's catalog knows (its newest toolkit headers)."""
    from .catalog import catalog, parse_version

    history = catalog().history
    return max((parse_version(t) for t in history), default=13000)


def known_version(value: object, what: str = "cuentry_fake_driver") -> int:
    """`value` as a CUDA driver version the fake driver can pretend to be, or SpecError.

    Accepted: an int like 12040 or a string like `"12.4"`/`"12040"`, a real
    release number (major*1000 + minor*10) from 3.2 to the newest toolkit the
    catalog knows.
    """
    from .catalog import format_version, parse_version
    from .errors import UsageError

    newest = newest_known()
    span = f"{format_version(OLDEST)} to {format_version(newest)}"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SpecError(f"{what}: version must be an int like 12040 or a string like '12.4', "
                        f"not {type(value).__name__}")
    try:
        v = parse_version(value)
    except UsageError:
        raise SpecError(f"{what}: unknown driver version {value!r}: give a release like '12.4' or "
                        f"12040 (from {span})") from None
    if v % 10 or not OLDEST <= v <= newest:
        raise SpecError(f"{what}: unknown driver version {value!r}: driver versions are "
                        f"major*1000 + minor*10, e.g. 12040 for 12.4, from {span}")
    return v


def _checked(value: object, what: str) -> tuple[int, str]:
    """(version, "") or (0, the one-line error); pytest.fail is called outside `except` so no chain is shown."""
    try:
        return known_version(value, what), ""
    except SpecError as exc:
        return 0, str(exc)


def variant_for(version: int) -> str:
    """The fake driver variant a real driver of `version` matches (the rule lives in `cuentry.testing.fakeenv`)."""
    from .testing.fakeenv import variant_for as rule

    return rule(version)


@dataclasses.dataclass(frozen=True)
class FakeDriver:
    """One fake driver set up for a test: where it is and what it pretends to be."""

    path: Path
    version: int
    variant: str
    _opened: list[Any] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def load(self, **kw: Any) -> Driver:
        """`cuentry.Driver.load` of this library; closed when the test ends."""
        from .driver import Driver

        d = Driver.load(str(self.path), allow_stub=self.variant == "stub", **kw)
        self._opened.append(d)
        return d


def _have_compiler() -> bool:
    from .errors import BuildError
    from .toolchain import find_compiler

    try:
        find_compiler()
    except BuildError:
        return False
    return True


def _fake_factory(monkeypatch: pytest.MonkeyPatch,
                  opened: list[Any]) -> Callable[..., FakeDriver]:
    from .errors import BuildError, UsageError
    from .testing import fakedriver

    current: dict[str, int] = {}

    def make(version: int | str = 13000, variant: str | None = None) -> FakeDriver:
        v, err = _checked(version, "cuentry_fake_driver")
        if err:
            pytest.fail(err, pytrace=False)
        var = variant_for(v) if variant is None else variant
        if var not in fakedriver.VARIANTS:
            pytest.fail(f"cuentry_fake_driver: unknown variant {var!r}; choose one of "
                        f"{', '.join(fakedriver.VARIANTS)}", pytrace=False)
        try:
            fakedriver.check_variant(var, v)
        except UsageError as exc:
            pytest.fail(f"cuentry_fake_driver(version={version!r}, variant={var!r}): {exc} ({exc.hint})", pytrace=False)
        if current and current["version"] != v:
            # The fake driver reads its version from the environment at every call: one per test.
            pytest.fail(f"cuentry_fake_driver: this test already has a fake driver at {current['version']}; "
                        "one version per test (split the test or parametrize it)", pytrace=False)
        if not _have_compiler():
            _skip("cuentry_fake_driver: no C compiler (install gcc or clang, or set CC) to build the fake driver")
        built: Path | None = None
        try:
            built = fakedriver.build(variant=var)  # fakedriver's own per-user cache
        except BuildError as exc:  # an unsafe cache directory or a failed compile: fail, never skip silently
            err = f"cuentry_fake_driver: {exc}"
        if built is None:
            pytest.fail(err, pytrace=False)
        path = built
        current["version"] = v
        monkeypatch.setenv(FAKE_ENV, str(v))
        monkeypatch.setenv(DRIVER_ENV, str(path))
        return FakeDriver(path, v, var, opened)

    return make


@pytest.fixture
def cuentry_fake_driver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeDriver]]:
    """Factory: `cuentry_fake_driver(version=12040, variant=None) -> FakeDriver`.

    Sets `$CUENTRY_DRIVER` and `$CUENTRY_FAKE_DRIVER_VERSION` for the test
    (restored after it). `FakeDriver.load()` returns a loaded
    [cuentry.Driver][cuentry.driver.Driver], closed at teardown. Skips when no C compiler exists.
    """
    opened: list[Any] = []
    yield _fake_factory(monkeypatch, opened)
    for d in opened:
        d.close()


# --- requires_driver ---------------------------------------------------------------


def parse_spec(spec: object) -> list[tuple[str, int]]:
    """`">=12.4,<13"` -> [(">=", 12040), ("<", 13000)]; SpecError when malformed."""
    from .catalog import parse_version

    if not isinstance(spec, str) or not spec.strip():
        raise SpecError(f"{MARKER}: give a version requirement string like '>=12.4', not {spec!r}")
    out: list[tuple[str, int]] = []
    for part in spec.split(","):
        m = _CLAUSE.fullmatch(part)
        if not m:
            raise SpecError(f"{MARKER}: cannot read {part.strip()!r} in {spec!r}: write clauses like "
                            "'>=12.4' or '>=12040,<13.0'")
        v = parse_version(m.group(2))
        out.append((m.group(1) or ">=", v * 1000 if v < 1000 else v))  # "13" is the release 13.0
    return out


def _marker_spec(mark: pytest.Mark) -> object:
    if len(mark.args) == 1 and not mark.kwargs:
        return mark.args[0]
    raise SpecError(f"{MARKER}: takes one requirement string, e.g. @pytest.mark.{MARKER}('>=12.4')")


_PROBES: dict[str | None, tuple[int | None, str]] = {}


def probe_driver() -> tuple[int | None, str]:
    """(version, description) of the driver cuentry would load, or (None, why not); cached per $CUENTRY_DRIVER.

    Uses `cuDriverGetVersion` only (no `cuInit`), so it is cheap and never
    creates a context.
    """
    key = os.environ.get(DRIVER_ENV)
    got = _PROBES.get(key)
    if got is not None:
        return got
    from .driver import Driver
    from .errors import CuentryError

    try:
        d = Driver.load(init=False)
    except CuentryError as exc:  # short: the skip line names the test; `cuentry doctor` has the whole search
        got = (None, _no_driver(exc))
    else:
        try:
            what = "cuentry's fake driver" if d.fake else d.path
            got = (d.driver_version, what) if d.driver_version else (None, f"{d.path}: cuDriverGetVersion failed")
        finally:
            d.close()
    _PROBES[key] = got
    return got


def _no_driver(exc: Exception) -> str:
    """Why no driver was loaded, in one short line (the search itself is `cuentry doctor`'s)."""
    from .errors import DriverNotFoundError, LibraryPathError, shorten

    if isinstance(exc, DriverNotFoundError) and not isinstance(exc, LibraryPathError) and len(exc.searched) > 2:
        return "no CUDA driver found (`cuentry doctor` says where it looked)"
    return shorten(f"no usable CUDA driver: {getattr(exc, 'message', exc)}", 90)


def _skip(reason: str) -> NoReturn:
    """Skip the running test with its own location in the report (not this plugin's line)."""
    raise pytest.skip.Exception(reason, _use_item_location=True)


def requirement_skip_reason(spec: object) -> str | None:
    """Why a test marked `requires_driver(spec)` must be skipped here, or None to run it."""
    from .catalog import format_version

    clauses = parse_spec(spec)
    version, what = probe_driver()
    if version is None:
        return f"{MARKER}({spec!r}): {what}"
    for op, want in clauses:
        if not _OPS[op](version, want):
            return (f"{MARKER}({spec!r}): the driver is {format_version(version)} ({version}), "
                    f"needs {op}{format_version(want)} [{what}]")
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(spec): skip unless the CUDA driver satisfies spec, e.g. '>=12.4' or '>=12040,<13.0' "
                   "(no driver: skipped; cuentry plugin)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marks = list(item.iter_markers(name=MARKER))
    if not marks:
        return
    reason, error = None, ""
    try:
        for mark in marks:
            reason = reason or requirement_skip_reason(_marker_spec(mark))
    except SpecError as exc:
        error = str(exc)
    if error:
        pytest.fail(error, pytrace=False)
    if reason:
        _skip(reason)


# --- emulation ---------------------------------------------------------------------


def emulate_available() -> str | None:
    """None when `cuentry emulate` is installed, else why not (the skip reason)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("cuentry.cli.emulate")
    except (ImportError, ValueError) as exc:
        return f"cuentry emulate is not importable: {exc}"
    if spec is None:
        return "cuentry emulate is not available in this cuentry (module cuentry.cli.emulate missing)"
    return None


@dataclasses.dataclass(frozen=True)
class Emulation:
    """Runs commands under `cuentry emulate --driver VERSION`."""

    version: int

    def command(self, cmd: Sequence[str]) -> list[str]:
        """The full command line that runs `cmd` under emulation."""
        return [sys.executable, "-m", "cuentry", "emulate", "--driver", str(self.version), "--", *cmd]

    def run(self, cmd: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        """`subprocess.run` of `cmd` under emulation (text mode, output captured unless given)."""
        if isinstance(cmd, str):
            raise TypeError("cuentry_emulate(...).run: give the command as a list of arguments, not a string")
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        check = bool(kw.pop("check", False))
        return subprocess.run(self.command(cmd), check=check, **kw)


@pytest.fixture
def cuentry_emulate() -> Callable[..., Emulation]:
    """Factory: `cuentry_emulate(version) -> Emulation` (see [Emulation][cuentry.pytest_plugin.Emulation]).

    Skips when the `cuentry emulate` command is missing or no driver is found
    (a GPU machine, or `$CUENTRY_DRIVER` pointing at cuentry's fake driver).
    """
    why = emulate_available()
    if why:
        _skip(why)
    found, what = probe_driver()
    if found is None:
        _skip(f"cuentry_emulate: {what}")

    def make(version: int | str) -> Emulation:
        v, err = _checked(version, "cuentry_emulate")
        if err:
            pytest.fail(err, pytrace=False)
        return Emulation(v)

    return make
