"""The fake driver must answer like the real one: every recorded 13.0 driver answer, compared."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest

from cuentry.calls import ffi
from cuentry.driver import Driver


def _answer(drv: Driver, api: str, version: int, flags: int) -> tuple[int, int, int]:
    rc, st, addr = drv.boot.get_proc_address("cuGetProcAddress_v2", api.encode(), version, flags, True)
    return rc, -1 if st is None else st, addr


TRUTHS = ["driver-580.159.04-truth.json", "driver-13000-cuentry-capture.json"]


@pytest.mark.parametrize("name", TRUTHS)
def test_every_recorded_query_matches(driver: Driver, name: str) -> None:
    """Both recordings of the real 13.0 driver: the design notes' and cuentry's own capture (whole catalog)."""
    import json

    from .conftest import DATA

    truth = json.loads((DATA / name).read_text())
    assert truth["driver_version"] == driver.driver_version == 13000
    mismatches = []
    for q in truth["queries"]:
        rc, st, addr = _answer(driver, q["api"], q["version"], q["flags"])
        want_addr = driver.library.address(q["names"][0]) if q["names"] else 0
        if q["names"]:
            assert want_addr, f"the fake does not export {q['names'][0]}"
        got = (rc, st if rc == 0 else -1, addr)
        want = (q["rc"], q["status"], want_addr)
        if got != want:
            mismatches.append((q, got, want))
    assert not mismatches, f"{len(mismatches)} of {len(truth['queries'])} differ, e.g. {mismatches[:3]}"
    assert len(truth["queries"]) > 8000


ODD = {
    "suffix_v2": ("cuMemAlloc_v2", 13000, 0),
    "suffix_ptds": ("cuMemcpy_ptds", 13000, 2),
    "wrong_case": ("CUMemAlloc", 13000, 0),
    "lower_case": ("cumemalloc", 13000, 0),
    "empty": ("", 13000, 0),
    "bad_flags_3": ("cuMemAlloc", 13000, 3),
    "bad_flags_4": ("cuMemAlloc", 13000, 4),
    "version_zero": ("cuMemAlloc", 0, 0),
    "version_negative": ("cuMemAlloc", -1, 0),
    "nonexistent": ("cuDefinitelyNotAThing", 13000, 0),
    "cuGetProcAddress_self": ("cuGetProcAddress", 12000, 0),
    "cuGetProcAddress_self_11030": ("cuGetProcAddress", 11030, 0),
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_odd_inputs_match(driver: Driver, truth: dict[str, Any], case: str) -> None:
    want = truth["odd"][case]
    api, version, flags = ODD[case]
    rc, st, addr = _answer(driver, api, version, flags)
    assert rc == want["rc"]
    if rc == 0:
        assert st == want["status"]
    names = want.get("names", [])
    assert addr == (driver.library.address(names[0]) if names else 0)


def test_null_outputs_refused_by_the_fake_not_crashing(driver: Driver) -> None:
    # The real driver crashes here (see REAL_DRIVER_FACTS); the fake says INVALID_VALUE, and cuentry never asks.
    restype, argtypes = ffi.BOOTSTRAP["cuGetProcAddress_v2"]
    fn = ffi.function_at(driver.library.address("cuGetProcAddress_v2"), restype, argtypes)
    assert fn(None, ctypes.byref(ctypes.c_void_p()), 13000, 0, None) == 1
    assert fn(b"cuMemAlloc", None, 13000, 0, None) == 1
    out = ctypes.c_void_p()
    assert fn(b"cuMemAlloc", ctypes.byref(out), 13000, 0, None) == 0  # a NULL status is fine, as on the real driver
    assert out.value == driver.library.address("cuMemAlloc_v2")


@pytest.mark.parametrize("key", ["cuMemAlloc@3020/0", "cuMemAlloc@2000/0", "cuMemAlloc@1000/0",
                                 "cuDefinitelyNotAThing@13000/0", "cuStreamBeginCapture@10010/2"])
def test_v1_answers_match(driver: Driver, truth: dict[str, Any], key: str) -> None:
    want = truth["v1"][key]
    api, rest = key.split("@")
    version, flags = (int(x) for x in rest.split("/"))
    rc, _, addr = driver.boot.get_proc_address("cuGetProcAddress", api.encode(), version, flags, False)
    assert rc == want["rc"]
    assert addr == (driver.library.address(want["names"][0]) if want["names"] else 0)


@pytest.mark.parametrize("key", ["cuMemAlloc@3020/0", "cuMemAlloc@2000/0", "cuMemAlloc@1000/0",
                                 "cuDefinitelyNotAThing@13000/0", "cuStreamBeginCapture@10010/2",
                                 "cuDeviceGetUuid@11040/0", "cuDeviceGetUuid@9020/0"])
def test_runtime_answers_match(driver: Driver, truth: dict[str, Any], key: str) -> None:
    want = truth["cudart"][key]
    api, rest = key.split("@")
    version, flags = (int(x) for x in rest.split("/"))
    rc, st, addr = driver.boot.runtime_entry_point(api.encode(), version, flags)
    assert (rc, st) == (want["rc"], want["status"])
    assert addr == (driver.library.address(want["names"][0]) if want["names"] else 0)


def test_catalog_exported_names_are_real_exports(truth: dict[str, Any]) -> None:
    from cuentry.catalog import catalog

    exported = set(truth["exported"])
    missing = [a.pfn for a in catalog() if "13.0" in a.toolkits and "linux" in a.platforms
               and a.exported not in exported and a.symbol != "cuEventCreateFromEGLSync"]
    assert not missing
