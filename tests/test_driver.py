"""Resolution on the fake driver: both access paths, guard rails, diagnostics, typed calls."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

import cuentry
from cuentry import Classification, Driver, Runtime, as_bytes, as_str, out
from cuentry.errors import (
    ArgumentError,
    CudaError,
    DriverClosedError,
    DriverNotFoundError,
    ResolutionError,
    StubLibraryError,
    UsageError,
)


def _refused(drv: Any, *args: Any, **kw: Any) -> Any:
    with pytest.raises(ResolutionError) as ei:
        drv.resolve(*args, **kw)
    return ei.value.diagnostic


# --- loading -----------------------------------------------------------------------


def test_load_reports_where_and_how(driver: Driver) -> None:
    info = driver.info()
    assert info["fake"] is True and info["stub"] is False
    assert info["driver_version"] == 13000 and info["cuGetProcAddress"] == "v2"
    assert info["how"] == "argument" and info["path"].endswith("libcuda.so.1")
    assert info["cuInit"] == 0


def test_env_override(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", fake["full"])
    with Driver.load() as d:
        assert d.how == "$CUENTRY_DRIVER" and d.fake


def test_missing_driver_lists_what_was_searched(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "nope.so"))
    with pytest.raises(DriverNotFoundError) as ei:
        Driver.load()
    assert str(tmp_path / "nope.so") in ei.value.searched
    assert "CUENTRY_DRIVER" in ei.value.hint


def test_not_a_driver(tmp_path: Any, fake: dict[str, str]) -> None:
    import ctypes.util

    libm = ctypes.util.find_library("m") or "libm.so.6"
    with pytest.raises(DriverNotFoundError) as ei:
        Driver.load(libm)
    assert "cuInit" in ei.value.reasons[0]


def test_stub_library_is_recognised(fake: dict[str, str]) -> None:
    with pytest.raises(StubLibraryError) as ei:
        Driver.load(fake["stub"])
    assert "stub" in str(ei.value)
    with Driver.load(fake["stub"], allow_stub=True) as d:
        assert d.stub and d.init_result == 34
        diag = _refused(d, "cuMemAlloc", 3020, "legacy")
        assert diag.classification is Classification.STUB_LIBRARY
        assert diag.result_name == "CUDA_ERROR_STUB_LIBRARY"


# --- the v2 path: answers and diagnostics ----------------------------------------------


def test_resolve_gives_a_typed_callable_with_a_full_diagnostic(driver: Driver, caplog: Any) -> None:
    with caplog.at_level(logging.DEBUG, logger="cuentry"):
        r = driver.resolve("cuMemAlloc", 3020, "legacy")
    d = r.diagnostic
    assert d.ok and d.exported == "cuMemAlloc_v2" and d.abi == "PFN_cuMemAlloc_v3020"
    assert d.address == driver.library.address("cuMemAlloc_v2") == r.function.address
    assert (d.result_name, d.query_name, d.flags_name) == (
        "CUDA_SUCCESS", "CU_GET_PROC_ADDRESS_SUCCESS", "CU_GET_PROC_ADDRESS_LEGACY_STREAM")
    line = d.log_line()
    for field in ("symbol=cuMemAlloc", "version=3020", "driver=13000", "result=CUDA_SUCCESS", "library="):
        assert field in line
    assert any("symbol=cuMemAlloc" in rec.getMessage() for rec in caplog.records)
    assert r.function.abi.pfn == "PFN_cuMemAlloc_v3020"


@pytest.mark.parametrize("symbol,version,stream,exported", [
    ("cuMemAlloc", 2000, "legacy", "cuMemAlloc"),
    ("cuMemAlloc", 3020, "per_thread", "cuMemAlloc_v2"),
    ("cuCtxCreate", 11040, "legacy", "cuCtxCreate_v3"),
    ("cuStreamBeginCapture", 10000, "per_thread", "cuStreamBeginCapture_ptsz"),
    ("cuStreamBeginCapture", 10010, "per_thread", "cuStreamBeginCapture_v2_ptsz"),
    ("cuStreamBeginCapture", 10010, "legacy", "cuStreamBeginCapture_v2"),
    ("cuMemcpy", 7000, "per_thread", "cuMemcpy_ptds"),
    ("cuMemcpy", 7000, "legacy", "cuMemcpy"),
    ("cuDeviceGetUuid", 11040, "legacy", "cuDeviceGetUuid_v2"),
])
def test_abi_variant_picked(driver: Driver, symbol: str, version: int, stream: str, exported: str) -> None:
    d = driver.resolve(symbol, version, stream).diagnostic
    assert d.exported == exported
    assert d.address == driver.library.address(exported)


def test_not_an_abi_version_refused_before_asking(driver: Driver) -> None:
    d = _refused(driver, "cuMemAlloc", 13000, "legacy")
    assert d.classification is Classification.NOT_AN_ABI_VERSION
    assert d.access == "-" and "3020" in d.hint and "2000" not in d.hint.split("pin")[-1][:6]


def test_suffixed_names_refused(driver: Driver) -> None:
    d = _refused(driver, "cuMemAlloc_v2", 3020, "legacy")
    assert d.classification is Classification.SUFFIXED_NAME and "'cuMemAlloc'" in d.hint
    d = _refused(driver, "cuMemcpyHtoD_v2_ptds", 7000, "per_thread")
    assert d.classification is Classification.SUFFIXED_NAME and "per_thread" in d.hint


def test_misspelled_and_unknown(driver: Driver) -> None:
    d = _refused(driver, "CUMemAlloc", 3020, "legacy")
    assert d.classification is Classification.MISSPELLED and "cuMemAlloc" in d.hint
    d = _refused(driver, "cuDefinitelyNotAThing", 3020, "legacy")
    assert d.classification is Classification.UNKNOWN_SYMBOL


@pytest.mark.parametrize("bad", [None, "", "cu Mem", "cuMem\u00e4", "cu\x00x", 42, b"\xff"])
def test_bad_symbols_never_reach_c(driver: Driver, bad: Any) -> None:
    d = _refused(driver, bad, 3020, "legacy")
    assert d.classification is Classification.INVALID_SYMBOL


@pytest.mark.parametrize("bad", [0, -1, "3020", 3020.0, True, 1 << 40])
def test_bad_versions(driver: Driver, bad: Any) -> None:
    with pytest.raises(UsageError):
        driver.resolve("cuMemAlloc", bad, "legacy")


def test_stream_mode_must_be_explicit(driver: Driver) -> None:
    with pytest.raises(UsageError, match="default"):
        driver.resolve("cuMemAlloc", 3020, "default")
    assert driver.resolve("cuMemAlloc", 3020, "default", allow_default=True).diagnostic.flags == 0
    with pytest.raises(UsageError):
        driver.resolve("cuMemAlloc", 3020, "sideways")
    assert driver.resolve("cuMemAlloc", 3020, "per-thread").diagnostic.stream == "per_thread"


def test_raw_query_validates_flags(driver: Driver) -> None:
    with pytest.raises(UsageError):
        driver.query("cuMemAlloc", 3020, 4)
    rc, st, addr, emulated = driver.query("cuMemAlloc", 1999, 0)
    assert (rc, st, addr, emulated) == (0, 2, 0, False)


def test_version_above_driver(load: Any) -> None:
    d = _refused(load(version=12000), "cuCtxCreate", 12050, "legacy")
    assert d.classification is Classification.VERSION_ABOVE_DRIVER
    assert d.result_name == "CUDA_ERROR_INVALID_VALUE" and d.query is None
    assert "12.5" in d.hint and "11040" in d.hint


def test_driver_too_old(load: Any) -> None:
    d = _refused(load(version=12000), "cuMulticastCreate", 12010, "legacy")
    assert d.classification is Classification.DRIVER_TOO_OLD and "12.1" in d.hint


def test_version_not_sufficient_per_thread_pin(driver: Driver) -> None:
    d = _refused(driver, "cuMemcpyHtoD", 3020, "per_thread")
    assert d.classification is Classification.VERSION_NOT_SUFFICIENT and "7000" in d.hint


def test_symbol_the_driver_lacks(driver: Driver) -> None:
    d = _refused(driver, "cuEventCreateFromEGLSync", 9000, "legacy")
    assert d.classification is Classification.NOT_EXPORTED
    assert d.query_name == "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND"
    d = _refused(driver, "cuWGLGetDevice", 2020, "legacy")
    assert d.classification is Classification.NOT_ON_PLATFORM


# --- v1 and pre-11.3 drivers -----------------------------------------------------------


def test_v1_driver_emulates_the_query_result(load: Any) -> None:
    drv = load("v1", 11040)
    assert drv.gpa_form == "v1"
    r = drv.resolve("cuDeviceGetUuid", 9020, "legacy")
    assert r.diagnostic.query == 0 and r.diagnostic.query_emulated and r.diagnostic.access == "driver:v1"
    assert r.diagnostic.exported == "cuDeviceGetUuid"
    rc, st, addr, emulated = drv.query("cuMemAlloc", 1999, 0)
    assert (rc, st, addr, emulated) == (0, 2, 0, True)
    assert drv.query("cuNope", 3020, 0)[1] == 1
    d = _refused(drv, "cuMulticastCreate", 12010, "legacy")
    assert d.classification is Classification.DRIVER_TOO_OLD
    assert "(emulated)" in drv.resolve("cuMemAlloc", 3020, "legacy").diagnostic.query_name


def test_pre_11_3_driver_uses_catalog_exported_names(load: Any) -> None:
    drv = load("nogpa", 11000)
    assert drv.gpa_form == "none"
    d = drv.resolve("cuMemAlloc", 3020, "legacy").diagnostic
    assert d.access == "dlsym" and d.exported == "cuMemAlloc_v2"
    assert d.address == drv.library.address("cuMemAlloc_v2")
    assert drv.resolve("cuMemcpyHtoD", 7000, "per_thread").diagnostic.exported == "cuMemcpyHtoD_v2_ptds"
    d = _refused(drv, "cuMemMapArrayAsync", 11010, "legacy")
    assert d.classification is Classification.DRIVER_TOO_OLD and "11.1" in d.hint


# --- the runtime path ----------------------------------------------------------------------


def test_runtime_path_keeps_both_layers(fake: dict[str, str], fake_version: Any) -> None:
    with Runtime.load(fake["full"]) as rt:
        assert rt.runtime_version == 13000 and rt.by_version
        r = rt.resolve("cuDeviceGetUuid", 11040, "legacy")
        assert r.diagnostic.access == "runtime" and r.diagnostic.exported == "cuDeviceGetUuid_v2"
        assert r.diagnostic.result == 0 and r.diagnostic.query == 0
        with pytest.raises(ResolutionError) as ei:
            rt.resolve("cuMemcpyHtoD", 3020, "per_thread")
        assert ei.value.diagnostic.classification is Classification.VERSION_NOT_SUFFICIENT


def test_runtime_without_by_version_needs_opt_in(fake: dict[str, str], fake_version: Any) -> None:
    with Runtime.load(fake["full"]) as rt:
        rt.by_version = False  # as a runtime older than 12.5
        d = _refused(rt, "cuMemAlloc", 3020, "legacy")
        assert d.classification is Classification.RUNTIME_TOO_OLD
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = rt.resolve("cuMemAlloc", 3020, "legacy", allow_deprecated=True)
        assert r.diagnostic.access == "runtime:deprecated"
        assert any("runtime's own version" in str(x.message) for x in w)


# --- typed calls that do real work ------------------------------------------------------------


def test_typed_calls_end_to_end(driver: Driver) -> None:
    n = out("int")
    assert driver.call("cuDeviceGetCount", 2000)(n) == 0 and n[0] == 1
    dev = out("CUdevice")
    assert driver.call("cuDeviceGet", 2000)(dev, 0) == 0 and dev[0] == 0
    u1, u2 = out("CUuuid"), out("CUuuid")
    assert driver.call("cuDeviceGetUuid", 9020)(u1, 0) == 0
    assert driver.call("cuDeviceGetUuid", 11040)(u2, 0) == 0
    assert len(as_bytes(u1)) == 16 and as_bytes(u1) != as_bytes(u2)
    name = out("char", 64)
    assert driver.call("cuDeviceGetName", 2000)(name, 64, 0) == 0 and as_str(name) == "cuentry fake GPU 0"
    attr = out("int")
    assert driver.call("cuDeviceGetAttribute", 2000)(attr, 16, 0) == 0 and attr[0] == 132


def test_context_and_memory_round_trip(driver: Driver) -> None:
    retain = driver.call("cuDevicePrimaryCtxRetain", 7000)
    set_cur, get_cur = driver.call("cuCtxSetCurrent", 4000), driver.call("cuCtxGetCurrent", 4000)
    ctx = out("CUcontext")
    assert retain(ctx, 0) == 0 and ctx[0] != 0
    assert set_cur(ctx[0]) == 0
    cur = out("CUcontext")
    assert get_cur(cur) == 0 and cur[0] == ctx[0]
    dptr = out("CUdeviceptr")
    assert driver.call("cuMemAlloc", 3020)(dptr, 16) == 0
    src = bytearray(b"0123456789abcdef")
    dst = bytearray(16)
    assert driver.call("cuMemcpyHtoD", 3020)(dptr[0], src, 16) == 0
    assert driver.call("cuMemcpyDtoH", 7000, "per_thread")(dst, dptr[0], 16) == 0
    assert dst == src
    assert driver.call("cuMemFree", 3020)(dptr[0]) == 0


class _Stream:
    def __init__(self, h: int) -> None:
        self.h = h

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.h)


def test_handles_accept_ints_protocol_objects_and_none(driver: Driver) -> None:
    set_cur, get_cur = driver.call("cuCtxSetCurrent", 4000), driver.call("cuCtxGetCurrent", 4000)
    cur = out("CUcontext")
    for value, want in ((1234, 1234), (None, 0)):
        assert set_cur(value) == 0
        assert get_cur(cur) == 0 and cur[0] == want
    # __cuda_stream__ is the stream protocol: only CUstream parameters take it (tests/test_calls.py).
    with pytest.raises(ArgumentError, match="'ctx'"):
        set_cur(_Stream(777))


def test_checked_raises_named_errors(driver: Driver) -> None:
    dev = out("CUdevice")
    with pytest.raises(CudaError) as ei:
        driver.call("cuDeviceGet", 2000).checked(dev, 5)
    assert ei.value.name == "CUDA_ERROR_INVALID_DEVICE" and ei.value.code == 101
    assert "cuDeviceGet" in str(ei.value)
    assert driver.call("cuDeviceGet", 2000).checked(dev, 0) is None
    with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_DEVICE"):
        driver.check(101)


@pytest.mark.parametrize("args", [("x", 0), (out("CUdevice"), "zero"), (out("CUdevice"), 1 << 70)])
def test_wrong_argument_types_raise_argument_error(driver: Driver, args: tuple[Any, ...]) -> None:
    fn = driver.call("cuDeviceGet", 2000)
    with pytest.raises(ArgumentError) as ei:
        fn(*args)
    assert "cuDeviceGet" in str(ei.value) and "PFN_cuDeviceGet_v2000" in ei.value.hint


def test_wrong_argument_count_is_a_clear_type_error(driver: Driver) -> None:
    with pytest.raises(TypeError, match="positional argument"):
        driver.call("cuDeviceGet", 2000)(out("CUdevice"))


def test_calls_after_close_raise(fake: dict[str, str], fake_version: Any) -> None:
    d = Driver.load(fake["full"])
    fn = d.call("cuDeviceGetCount", 2000)
    d.close()
    with pytest.raises(DriverClosedError):
        fn(out("int"))
    with pytest.raises(DriverClosedError):
        fn.checked(out("int"))
    with pytest.raises(DriverClosedError):
        d.resolve("cuDeviceGetCount", 2000, "legacy")
    d.close()  # twice is fine


def test_out_rejects_nonsense() -> None:
    with pytest.raises(ArgumentError):
        out("NoSuchType")
    with pytest.raises(ArgumentError):
        out("int", 0)


def test_backend_is_reported_and_used(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuentry.calls import choice, compiled

    fn = driver.call("cuCtxGetCurrent", 4000)
    name = compiled.backend()["name"]
    assert fn.backend == name and name in ("compiled", "pure")
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice("pure"))
    assert compiled.backend()["name"] == "pure"
    pure = driver.call("cuCtxGetCurrent", 4000)
    assert pure.backend == "pure" and pure.address == fn.address
    c1, c2 = out("CUcontext"), out("CUcontext")
    assert fn(c1) == pure(c2) == 0 and c1[0] == c2[0]
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice("auto"))
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice("compiled"))
    if compiled.backend()["name"] == "missing":  # no extension installed: asking for it is an error
        with pytest.raises(ImportError, match="compiled extension cuentry.calls._fastcall is not installed"):
            compiled.extension()
    else:
        assert driver.call("cuCtxGetCurrent", 4000).backend == "compiled"


def test_every_newest_abi_binds(driver: Driver) -> None:
    """Every catalog signature maps onto an FFI type (the typed callable builds)."""
    from cuentry.calls import bind

    for sym in cuentry.get_catalog().symbols():
        for a in cuentry.get_catalog().abis(sym):
            fn = bind(a, driver.library.address("cuInit"))
            assert fn.abi is a and fn.ffi_type.startswith("int(*)(")


def test_which_calls_keep_the_gil() -> None:
    from cuentry.calls import holds_gil

    assert holds_gil("cuCtxGetCurrent") and holds_gil("cuStreamQuery") and holds_gil("cuDeviceGetAttribute")
    assert not holds_gil("cuStreamSynchronize") and not holds_gil("cuMemcpyDtoH") and not holds_gil("cuLaunchKernel")


def test_compiled_and_pure_callables_carry_the_same_attributes(driver: Driver) -> None:
    fn = driver.call("cuDeviceGetUuid", 11040)
    for attr in ("abi", "address", "exported", "checked", "backend", "ffi_type"):
        assert hasattr(fn, attr), attr
    assert fn.__name__ == "cuDeviceGetUuid" and fn.abi.pfn in fn.__doc__


# --- loading: paths, no cuInit, the runtime without a driver (issues 23 and 25) -------------------


def _device_count_rc(d: Driver) -> int:
    import ctypes

    f = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int))(d.library.address("cuDeviceGetCount"))
    n = ctypes.c_int(-1)
    return int(f(ctypes.byref(n)))


def test_loading_never_initialises_the_driver(fake: dict[str, str], fake_version: Any) -> None:
    """Only Driver calls cuInit, and only with init=True: the loader's stub probe does not (the pytest plugin's probe)."""
    import ctypes

    from cuentry.loader import load_driver

    with Driver.load(fake["full"], init=False) as d:
        ctypes.CFUNCTYPE(None)(d.library.address("cuentryFakeReset"))()
        assert _device_count_rc(d) == 3  # CUDA_ERROR_NOT_INITIALIZED: the reset took
        found = load_driver(fake["full"])
        assert not found.stub
        found.library.close()
        with Driver.load(fake["full"], init=False) as d2:
            assert d2.init_result is None and _device_count_rc(d2) == 3
        with Driver.load(fake["full"]) as d3:
            assert d3.init_result == 0 and _device_count_rc(d3) == 0


def test_the_stub_is_still_recognised_without_cuinit(fake: dict[str, str], fake_version: Any, tmp_path: Path) -> None:
    """A stub outside a stubs/ directory is known by its answer to cuDriverGetVersion."""
    import shutil

    from cuentry.errors import StubLibraryError

    plain = tmp_path / "libcuda.so.1"
    shutil.copy(fake["stub"], plain)
    with pytest.raises(StubLibraryError):
        Driver.load(str(plain))
    with Driver.load(str(plain), allow_stub=True) as d:
        assert d.stub


def test_load_takes_a_path_like(fake: dict[str, str], fake_version: Any) -> None:
    with Driver.load(Path(fake["full"])) as d:
        assert d.path == os.path.realpath(fake["full"]) and d.call("cuCtxGetCurrent", 4000)(out("CUcontext")) == 0
    with Runtime.load(Path(fake["full"])) as rt:
        assert rt.runtime_version == 13000


@pytest.mark.parametrize("bad", [b"/usr/lib/libcuda.so.1", 5, 1.5, ["libcuda.so.1"], object()])
def test_load_refuses_what_is_not_a_path(bad: object) -> None:
    with pytest.raises(UsageError, match="os.PathLike"):
        Driver.load(bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="os.PathLike"):
        Runtime.load(bad)  # type: ignore[arg-type]


def test_runtime_without_a_driver_is_no_driver(fake: dict[str, str], fake_version: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """libcudart's cudaErrorInsufficientDriver is "no driver" (DriverNotFoundError, CLI exit 3), not a failed lookup."""
    from cuentry.calls.ffi import Bootstrap
    from cuentry.cli import main
    from cuentry.errors import DriverNotFoundError

    monkeypatch.setattr(Bootstrap, "runtime_entry_point", lambda self, sym, ver, flags: (35, -1, 0))
    with Runtime.load(fake["full"]) as rt, pytest.raises(DriverNotFoundError) as got:
        rt.resolve("cuDeviceGetUuid", 11040, "legacy")
    assert "cudaErrorInsufficientDriver" in str(got.value) and "install the NVIDIA driver" in got.value.hint
    import io

    o, e = io.StringIO(), io.StringIO()
    code = main(["resolve", "cuDeviceGetUuid", "--version", "11040", "--stream", "legacy", "--runtime", fake["full"]],
                stdout=o, stderr=e)
    assert code == 3 and "see its name above" not in o.getvalue() + e.getvalue()
    assert "cudaErrorInsufficientDriver" in o.getvalue() + e.getvalue()


def test_resolve_checked_takes_only_what_precheck_returned(driver: Driver) -> None:
    """Asking for one symbol and binding another's signature is refused, not done."""
    sym, ver, mode, abi = driver.precheck("cuMemAlloc", 3020, "legacy", False)
    assert driver.resolve_checked(sym, ver, mode, abi).function.abi is abi
    other = driver.cat.bind("cuCtxGetCurrent", 4000)
    for args in [("cuCtxGetCurrent", ver, mode, abi), (sym, ver, mode, other), (sym, True, mode, abi),
                 (sym, 2000, mode, abi), (sym, ver, "sideways", abi)]:
        with pytest.raises(UsageError, match="precheck"):
            driver.resolve_checked(*args)  # type: ignore[arg-type]


def test_tables_on_one_driver_share_what_its_answers_mean(driver: Driver) -> None:
    """A second table costs its queries: the same answer gives the same function; diagnostics still full."""
    from cuentry import Table, required

    es = [required("cuMemAlloc", 3020), required("cuCtxGetCurrent", 4000)]
    t1 = Table("a", es, stream="legacy", source=driver).resolve()
    t2 = Table("b", es, stream="legacy", source=driver).resolve()
    assert t1.cuMemAlloc is t2.cuMemAlloc and t1.cuCtxGetCurrent is t2.cuCtxGetCurrent
    r1, r2 = t1.report()["entries"], t2.report()["entries"]
    assert r1 == r2 and r1[0]["exported"] == "cuMemAlloc_v2" and r1[0]["attempts"][0]["classification"] == "ok"
    assert driver.resolve("cuMemAlloc", 3020, "legacy").diagnostic == t2._states["cuMemAlloc"].diagnostic
