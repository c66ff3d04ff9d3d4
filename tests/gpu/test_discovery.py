"""Real-machine discovery: libcudart and NVRTC through cuda-pathfinder, and the plugin's marker on a real driver."""

from __future__ import annotations

import ctypes

import pytest

from cuentry import Driver
from cuentry.driver import Runtime
from cuentry.loader import locate_nvidia_library

pytestmark = pytest.mark.gpu


def test_runtime_found_by_pathfinder() -> None:
    path, attempt = locate_nvidia_library("cudart")
    if path is None:
        pytest.skip(f"no libcudart on this machine: {attempt.outcome}")
    with Runtime.load() as rt:
        assert rt.how.startswith("cuda-pathfinder ("), rt.how
        assert rt.runtime_version and rt.runtime_version >= 11000


def test_nvrtc_found_by_pathfinder() -> None:
    path, attempt = locate_nvidia_library("nvrtc")
    if path is None:
        pytest.skip(f"no NVRTC on this machine (pip install nvidia-cuda-nvrtc): {attempt.outcome}")
    lib = ctypes.CDLL(path)
    major, minor = ctypes.c_int(), ctypes.c_int()
    assert lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0
    assert major.value >= 11


@pytest.mark.requires_driver(">=11.0")
def test_requires_driver_runs_on_a_real_driver(real: Driver) -> None:
    assert real.driver_version is not None and real.driver_version >= 11000


@pytest.mark.requires_driver(">=99.0")
def test_requires_driver_skips_above_the_real_driver() -> None:
    raise AssertionError("the plugin must skip this on any real driver")
