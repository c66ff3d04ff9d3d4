"""Shared fixtures: the fake driver, built once per test session with the system C compiler."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cuentry import out
from cuentry.driver import Driver
from cuentry.testing import fakedriver

from .backends import BACKENDS, use_backend
from .tracehelp import compile_program, session_cache

DATA = Path(__file__).parent / "data"
TRUTH_FILE = DATA / "driver-580.159.04-truth.json"
CUDA_INCLUDE = Path(os.environ.get("CUENTRY_CUDA_INCLUDE", "/usr/local/cuda-13.0/include"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        skip = pytest.mark.skip(reason="no C compiler: the fake driver cannot be built")
        for item in items:
            if "fake" in item.fixturenames or "driver" in item.fixturenames:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def fake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths of the fake driver's variants: full, v1, nogpa, stub."""
    root = tmp_path_factory.mktemp("fake")
    return {v: str(fakedriver.build(root, v)) for v in fakedriver.VARIANTS}


@pytest.fixture
def fake_version(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Set the version the fake driver pretends to be (before loading it)."""

    def set_version(v: int) -> None:
        monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", str(v))

    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    return set_version


@pytest.fixture
def driver(fake: dict[str, str], fake_version: Any) -> Iterator[Driver]:
    """A 13.0 fake driver."""
    d = Driver.load(fake["full"])
    yield d
    d.close()


@pytest.fixture(params=BACKENDS)
def drv(request: pytest.FixtureRequest, fake: dict[str, str], fake_version: Any,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[Driver]:
    """The full fake driver on each call backend, with its primary context current (device memory, interop)."""
    use_backend(monkeypatch, str(request.param))
    d = Driver.load(fake["full"])
    ctx = out("CUcontext")
    assert d.call("cuDevicePrimaryCtxRetain", 7000)(ctx, 0) == 0 and d.call("cuCtxSetCurrent", 4000)(ctx[0]) == 0
    yield d
    d.close()


@pytest.fixture
def load(fake: dict[str, str], fake_version: Any) -> Iterator[Any]:
    """load(variant, version) -> Driver; closed after the test."""
    opened: list[Driver] = []

    def _load(variant: str = "full", version: int = 13000, **kw: Any) -> Driver:
        fake_version(version)
        d = Driver.load(fake[variant], **kw)
        opened.append(d)
        return d

    yield _load
    for d in opened:
        d.close()


@pytest.fixture(scope="session")
def truth() -> dict[str, Any]:
    return json.loads(TRUTH_FILE.read_text())  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def _pathfinder_loads_nothing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep cuda-pathfinder from loading the machine's real libcudart during the (non-GPU) suite.

    pathfinder loads what it finds with RTLD_GLOBAL, for good; the fake driver's own
    internal calls (cudaGetDriverEntryPoint -> cudaGetDriverEntryPointByVersion)
    would then bind to the real libcudart's symbols. Tests that exercise pathfinder
    replace this answer themselves (tests/test_discovery.py); the GPU suite uses the real one.
    """
    if request.node.get_closest_marker("gpu"):
        return
    try:
        from cuda import pathfinder
    except ImportError:
        return

    def refuse(libname: str) -> Any:
        raise pathfinder.DynamicLibNotFoundError(f"{libname}: not loaded in cuentry's test suite (see tests/conftest.py)")

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", refuse)


# --- the trace and emulate tests (test_trace.py, test_emulate.py) ------------------------------


@pytest.fixture(scope="module")
def private_cache() -> Iterator[None]:
    """Builds (the interposer) go to one cache of this test session, not the user's; a module takes it
    with `pytestmark = pytest.mark.usefixtures("private_cache")`."""
    with session_cache():
        yield


@pytest.fixture(scope="module")
def req(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The trace tests' C program (tests/data/trace/req.c), compiled once per module."""
    return str(compile_program(tmp_path_factory.mktemp("req") / "req"))


@pytest.fixture
def lib(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake driver's path, answering as a 13.0 driver, for a traced program to load."""
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    return fake["full"]
