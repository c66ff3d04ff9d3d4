"""Real-driver fixtures: only under `pytest -m gpu`, on a machine with an NVIDIA driver and GPU."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cuentry import Driver
from cuentry.errors import DriverError


@pytest.fixture(scope="session")
def real() -> Iterator[Driver]:
    try:
        d = Driver.load()
    except DriverError as exc:
        pytest.skip(f"no real driver: {exc}")
    if d.fake or d.stub:
        pytest.skip("the driver found is cuentry's fake or the toolkit stub")
    if d.init_result != 0:
        pytest.skip(f"cuInit failed: {d.error_name(d.init_result or 0)}")
    yield d
    d.close()


@pytest.fixture(scope="session")
def ctx(real: Driver) -> int:
    """The primary context of device 0, made current."""
    from cuentry import out

    c = out("CUcontext")
    real.call("cuDevicePrimaryCtxRetain", 7000).checked(c, 0)
    real.call("cuCtxSetCurrent", 4000).checked(c[0])
    return int(c[0])


# --- other libraries' GPU objects: each framework is skipped where it is missing -------------------

@pytest.fixture
def torch() -> Any:
    """torch, with a usable CUDA device (skipped otherwise)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    return torch


@pytest.fixture
def cupy() -> Any:
    """CuPy (skipped where it is missing)."""
    return pytest.importorskip("cupy")


@pytest.fixture
def cuda_core() -> Any:
    """cuda.core: the module itself where it has `Device`, else the older `cuda.core.experimental`."""
    try:
        import cuda.core as core

        if hasattr(core, "Device"):
            return core
    except ImportError:
        pass
    return pytest.importorskip("cuda.core.experimental")


@pytest.fixture
def core_device(cuda_core: Any) -> Any:
    """cuda.core's device 0, made current."""
    dev = cuda_core.Device(0)
    dev.set_current()
    return dev


@pytest.fixture
def core_stream(core_device: Any) -> Iterator[Any]:
    """A cuda.core stream on device 0, closed after the test."""
    stream = core_device.create_stream()
    yield stream
    stream.close()
