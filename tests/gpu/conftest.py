"""Real-driver fixtures: only under `pytest -m gpu`, on a machine with an NVIDIA driver and GPU."""

from __future__ import annotations

from collections.abc import Iterator

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
