"""Function tables on the fake driver: modes, fallbacks, thread safety, fork, reports."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import pytest

from cuentry import Driver, Table, optional, out, required
from cuentry.catalog import catalog
from cuentry.errors import ForkError, TableDeclarationError, TableResolutionError, UnavailableError, UsageError
from cuentry.table import Unavailable, stream_from_env


def _gpa_calls(d: Driver) -> int:
    import ctypes

    from cuentry.calls import ffi

    return int(ffi.function_at(d.library.address("cuentryFakeGetProcAddressCalls"), ctypes.c_long, ())())


def test_lazy_once_and_cached_as_plain_attributes(driver: Driver) -> None:
    t = Table("t", [required("cuDeviceGetCount", 2000), required("PFN_cuCtxGetCurrent_v4000")],
              stream="legacy", source=driver)
    assert not t.resolved
    before = _gpa_calls(driver)
    n = out("int")
    assert t.cuDeviceGetCount(n) == 0 and n[0] == 1
    assert t.resolved and _gpa_calls(driver) - before == 2
    assert type(t).cuDeviceGetCount.__get__(t) is t.cuDeviceGetCount  # a slot from now on
    t.cuCtxGetCurrent(out("CUcontext"))
    assert _gpa_calls(driver) - before == 2


def test_per_thread_and_legacy_tables_hold_different_stream_functions(driver: Driver) -> None:
    entries = [required("cuMemcpyHtoDAsync", 7000), required("cuStreamBeginCapture", 10010),
               required("cuMemAlloc", 3020), required("cuCtxGetCurrent", 4000)]
    legacy = Table("legacy", entries, stream="legacy", source=driver)
    per_thread = Table("pt", entries, stream="per_thread", source=driver)
    for sym in ("cuMemcpyHtoDAsync", "cuStreamBeginCapture"):
        assert getattr(legacy, sym).address != getattr(per_thread, sym).address
    assert per_thread.cuStreamBeginCapture.address == driver.library.address("cuStreamBeginCapture_v2_ptsz")
    assert legacy.cuMemcpyHtoDAsync.address == driver.library.address("cuMemcpyHtoDAsync_v2")
    for sym in ("cuMemAlloc", "cuCtxGetCurrent"):
        assert getattr(legacy, sym).address == getattr(per_thread, sym).address


def test_a_table_never_mixes_modes(driver: Driver) -> None:
    with pytest.raises(TableDeclarationError, match="never mixes"):
        Table("x", [required("PFN_cuMemcpyHtoD_v7000_ptds")], stream="legacy", source=driver)
    with pytest.raises(TableDeclarationError, match="per-thread ABI"):
        Table("x", [required("cuMemcpyHtoD", 3020)], stream="per_thread", source=driver)
    with pytest.raises(TableDeclarationError, match="not allowed"):
        Table("x", [], stream="default", source=driver)  # type: ignore[arg-type]
    with pytest.raises(TableDeclarationError, match="no stream mode"):
        Table("x", [], stream=None, source=driver)  # type: ignore[arg-type]


@pytest.mark.parametrize("raw,mode", [("1", "per_thread"), ("true", "per_thread"), ("ON", "per_thread"),
                                      ("0", "legacy"), ("false", "legacy"), (" off ", "legacy")])
def test_stream_env_is_parsed_strictly(monkeypatch: pytest.MonkeyPatch, raw: str, mode: str) -> None:
    monkeypatch.setenv("CUENTRY_PER_THREAD_DEFAULT_STREAM", raw)
    assert stream_from_env() == mode


def test_stream_env_rejects_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_PER_THREAD_DEFAULT_STREAM", "maybe")
    with pytest.raises(UsageError):
        stream_from_env()
    monkeypatch.delenv("CUENTRY_PER_THREAD_DEFAULT_STREAM")
    with pytest.raises(UsageError):
        stream_from_env()
    assert stream_from_env("legacy") == "legacy"


@pytest.mark.parametrize("bad,match", [
    (lambda: required("cuMemAlloc", 13000), "no ABI version 13000"),
    (lambda: required("cuMemAlloc"), "no ABI version given"),
    (lambda: required("PFN_cuMemAlloc_v3021"), "no ABI version 3021"),
    (lambda: required("cuMemAloc", 3020), "did you mean"),
    (lambda: required("cuMemAlloc_v2", 3020), "'cuMemAlloc' at version 3020"),
    (lambda: optional("cuMemAlloc", 3020, fallback=42), "fallback must be"),
])
def test_declaration_errors(driver: Driver, bad: Any, match: str) -> None:
    with pytest.raises(TableDeclarationError, match=match):
        Table("x", [bad()], stream="legacy", source=driver)


def test_duplicates_and_reserved_names(driver: Driver) -> None:
    with pytest.raises(TableDeclarationError, match="twice"):
        Table("x", [required("cuMemAlloc", 3020), required("cuMemAlloc", 2000)], stream="legacy", source=driver)
    t = Table("x", [required("cuMemAlloc", 3020), required("cuMemAlloc", 2000, name="cuMemAlloc_old")],
              stream="legacy", source=driver)
    assert t.cuMemAlloc_old.exported == "cuMemAlloc"
    with pytest.raises(TableDeclarationError, match="clashes"):
        Table("x", [required("cuMemAlloc", 3020, name="report")], stream="legacy", source=driver)


def _feature_table(d: Driver) -> Table:
    return Table("features", [
        required("cuMemAlloc", 3020),
        optional("cuCtxCreate", 12050, fallback=optional("cuCtxCreate", 3020)),
        optional("cuDeviceGetUuid", 11040, fallback=lambda *a: 0),
        optional("cuMulticastCreate", 12010),
    ], stream="legacy", source=d)


def test_fallbacks_on_an_11_4_driver(load: Any) -> None:
    t = _feature_table(load("v1", 11040))
    assert t.cuCtxCreate.abi.version == 3020 and t.available("cuCtxCreate")
    assert t.reason("cuCtxCreate").classification.value == "version_above_driver"  # type: ignore[union-attr]
    assert t.cuDeviceGetUuid.abi.version == 11040  # 11.4 has the v2 uuid
    assert isinstance(t.cuMulticastCreate, Unavailable) and not t.cuMulticastCreate
    assert not t.available("cuMulticastCreate")
    with pytest.raises(UnavailableError) as ei:
        t.cuMulticastCreate(out("int"))
    assert "12.1" in str(ei.value) and ei.value.reason.classification.value == "driver_too_old"


def test_fallbacks_on_a_12_0_driver(load: Any) -> None:
    t = _feature_table(load("full", 12000))
    assert t.cuCtxCreate.abi.version == 3020
    assert t.cuMulticastCreate.reason.hint.startswith("cuMulticastCreate needs driver >= 12.1")
    rep = t.report()
    json.dumps(rep)
    rows = {r["name"]: r for r in rep["entries"]}
    assert rows["cuMemAlloc"]["status"] == "resolved" and rows["cuMemAlloc"]["exported"] == "cuMemAlloc_v2"
    assert rows["cuCtxCreate"]["status"] == "fallback" and rows["cuCtxCreate"]["via"] == "entry cuCtxCreate@3020"
    assert rows["cuMulticastCreate"]["status"] == "unavailable"
    assert rows["cuMulticastCreate"]["attempts"][0]["classification"] == "driver_too_old"


def test_callable_fallback(load: Any) -> None:
    t = Table("x", [optional("cuMulticastCreate", 12010, fallback=lambda *a: "emulated")],
              stream="legacy", source=load("full", 12000))
    assert t.cuMulticastCreate() == "emulated" and t.available("cuMulticastCreate")
    assert t.report()["entries"][0]["via"].startswith("callable")


def test_required_failures_are_all_listed(load: Any) -> None:
    t = Table("x", [required("cuMulticastCreate", 12010), required("cuCtxCreate", 12050),
                    required("cuMemAlloc", 3020)], stream="legacy", source=load("full", 12000))
    assert "unresolved" in repr(t.cuMemAlloc)  # nothing is asked before first use
    with pytest.raises(TableResolutionError) as ei:
        t.cuMemAlloc(out("CUdeviceptr"), 16)
    assert [f.symbol for f in ei.value.failures] == ["cuMulticastCreate", "cuCtxCreate"]
    assert "2 required entries failed" in str(ei.value)
    assert t.report()["entries"][0]["status"] == "failed"


def test_min_driver(driver: Driver) -> None:
    t = Table("x", [required("cuMemAlloc", 3020), required("cuCtxCreate", 12050),
                    optional("cuMulticastBindMem", 13010)], stream="legacy", source=driver)
    assert t.min_driver() == 12050
    assert t.report()["min_driver_release"] == "12.5"


def test_32_threads_at_first_use_see_one_resolution(driver: Driver) -> None:
    syms = [a for a in catalog() if not a.variant and a.version <= 13000 and "linux" in a.platforms
            and a.symbol != "cuEventCreateFromEGLSync"]
    chosen = {}
    for a in syms:
        chosen.setdefault(a.symbol, a)
    entries = [required(a.symbol, a.version) for a in list(chosen.values())[:60]]
    t = Table("threads", entries, stream="legacy", source=driver)
    before = _gpa_calls(driver)
    barrier = threading.Barrier(32)
    seen: list[int] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            seen.append(getattr(t, entries[-1].attr).address)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(32)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(seen) == 32 and len(set(seen)) == 1
    assert _gpa_calls(driver) - before == len(entries)


def test_reset_and_rebinding(driver: Driver, load: Any) -> None:
    t = Table("x", [required("cuMemAlloc", 3020)], stream="legacy", source=driver)
    first = t.cuMemAlloc
    t.reset()
    assert not t.resolved
    assert t.cuMemAlloc is not first
    other = load("full", 13000)
    t.reset(source=other)
    assert t.cuMemAlloc.address == other.library.address("cuMemAlloc_v2")


def test_closed_driver_is_a_clear_error(fake: dict[str, str], fake_version: Any) -> None:
    from cuentry.errors import DriverClosedError

    d = Driver.load(fake["full"])
    t = Table("x", [required("cuMemAlloc", 3020)], stream="legacy", source=d)
    d.close()
    with pytest.raises(DriverClosedError):
        t.cuMemAlloc(out("CUdeviceptr"), 16)


def test_unknown_entry_attribute(driver: Driver) -> None:
    t = Table("x", [required("cuMemAlloc", 3020)], stream="legacy", source=driver)
    with pytest.raises(AttributeError):
        t.cuMemFree  # noqa: B018
    with pytest.raises(AttributeError):
        t.available("cuMemFree")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize("policy", ["reresolve", "refuse"])
def test_fork(driver: Driver, policy: str) -> None:
    t = Table("x", [required("cuDeviceGetCount", 2000)], stream="legacy", source=driver,
              on_fork=policy)  # type: ignore[arg-type]
    t.resolve()
    pid = os.fork()
    if pid == 0:  # the child: report through the exit code only
        code = 0
        try:
            if t.resolved:
                code = 10
            else:
                try:
                    n = out("int")
                    t.cuDeviceGetCount(n)
                    code = 20 if policy == "reresolve" and t.resolved else 30
                except ForkError:
                    code = 40 if policy == "refuse" else 50
        except BaseException:  # noqa: BLE001
            code = 60
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == (20 if policy == "reresolve" else 40)
    assert t.resolved  # the parent is untouched


# --- binding on first use (issue 23.6) ---------------------------------------------------------


@pytest.fixture
def binds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The typed callables bound (by symbol) through the driver, from now on."""
    import cuentry.driver as driver_mod

    made: list[str] = []
    real = driver_mod.bind

    def counting(abi: Any, address: int, **kw: Any) -> Any:
        made.append(abi.symbol)
        return real(abi, address, **kw)

    monkeypatch.setattr(driver_mod, "bind", counting)
    return made


LAZY = [required("cuDeviceGetCount", 2000), required("cuCtxGetCurrent", 4000), required("cuMemAlloc", 3020),
        optional("cuMulticastCreate", 12010)]


def test_resolution_asks_everything_and_binds_nothing_until_an_entry_is_read(driver: Driver, binds: list[str]) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver)
    before = _gpa_calls(driver)
    t.resolve()
    assert _gpa_calls(driver) - before == 4 and binds == []  # every query made, no callable bound
    assert t.available("cuDeviceGetCount") and t.report()["entries"][0]["status"] == "resolved" and binds == []
    f = t.cuDeviceGetCount
    assert binds == ["cuDeviceGetCount"] and f.abi.pfn == "PFN_cuDeviceGetCount_v2000"
    assert t.cuDeviceGetCount is f and binds == ["cuDeviceGetCount"]  # bound once, the same object after
    assert type(t).cuDeviceGetCount.__get__(t) is f  # a slot from now on
    n = out("int")
    assert f(n) == 0 and n[0] == 1
    assert hex(f.address) == t.report()["entries"][0]["address"] and f.address == driver.library.address("cuDeviceGetCount")
    assert _gpa_calls(driver) - before == 4


def test_the_tables_own_class_goes_when_every_entry_is_bound(driver: Driver) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver).resolve()
    layout = type(t).__mro__[1]
    assert type(t).__qualname__ == "Table" and isinstance(t, Table)
    t.cuDeviceGetCount, t.cuCtxGetCurrent  # noqa: B018
    assert type(t) is not layout
    assert isinstance(t.cuMulticastCreate, Unavailable) or t.cuMulticastCreate  # set at resolution, no binding
    t.cuMemAlloc  # noqa: B018  (the last one)
    assert type(t) is layout and "cuMemAlloc" in layout.__dict__
    other = Table("o", LAZY, stream="legacy", source=driver).resolve()  # tables of one layout stay apart
    third = Table("3", LAZY, stream="legacy", source=driver).resolve()
    assert type(other) is not layout and type(other).__mro__[1] is layout and type(third) is type(other)
    assert other.cuMemAlloc is t.cuMemAlloc  # the same address and ABI on one driver: the same function
    assert type(third) is not type(other) and "cuMemAlloc" in type(third).__dict__  # third: nothing bound
    assert "cuMemAlloc" not in type(other).__dict__ and "cuCtxGetCurrent" in type(other).__dict__
    assert third.cuCtxGetCurrent is other.cuCtxGetCurrent and third.cuDeviceGetCount.abi.symbol == "cuDeviceGetCount"


def test_an_entry_read_before_resolution_binds_when_used(driver: Driver, binds: list[str]) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver)
    early = t.cuCtxGetCurrent  # the stand-in of an unresolved entry
    assert binds == []
    assert early(out("CUcontext")) in (0, 201)
    assert binds == ["cuCtxGetCurrent"] and t.resolved
    assert early.address == t.cuCtxGetCurrent.address and binds == ["cuCtxGetCurrent"]


def test_first_reads_from_many_threads_get_one_function(driver: Driver) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver).resolve()
    got: list[Any] = []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        got.append(t.cuMemAlloc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(got) == 8 and all(g is got[0] for g in got) and got[0].abi.pfn == "PFN_cuMemAlloc_v3020"


def test_reset_with_entries_not_bound_yet_resolves_again(driver: Driver, binds: list[str]) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver).resolve()
    t.cuDeviceGetCount  # noqa: B018
    own = type(t)
    t.reset()
    assert not t.resolved and type(t) is own.__mro__[1]  # back to the layout's class: no stand-in left
    before = _gpa_calls(driver)
    assert t.cuMemAlloc.abi.pfn == "PFN_cuMemAlloc_v3020"  # resolved again (the read of a stand-in, then bound)
    assert t.resolved and _gpa_calls(driver) - before == 4


def test_assigning_an_entry_before_its_first_read_replaces_it(driver: Driver) -> None:
    t = Table("t", LAZY, stream="legacy", source=driver).resolve()
    t.cuMemAlloc = len  # type: ignore[assignment]
    assert t.cuMemAlloc is len
    del t.cuCtxGetCurrent
    with pytest.raises(AttributeError):
        t.cuCtxGetCurrent  # noqa: B018


def test_a_driver_binds_only_what_it_answered(driver: Driver) -> None:
    abi = catalog().bind("cuMemAlloc", 3020)
    with pytest.raises(UsageError, match="never resolved"):
        driver.typed(abi, driver.library.address("cuMemAlloc_v2"))  # not asked: refused
    fn = driver.resolve("cuMemAlloc", 3020, "legacy").function
    assert driver.typed(abi, fn.address) is fn
    with pytest.raises(UsageError, match="never resolved"):
        driver.typed(abi, fn.address + 1)
    with pytest.raises(UsageError, match="never resolved"):
        driver.typed(catalog().bind("cuMemFree", 3020), fn.address)  # another ABI at that address
    with pytest.raises(UsageError):
        driver.typed(abi, True)  # type: ignore[arg-type]


def test_a_signature_no_conversion_exists_for_is_refused_at_resolution_not_at_first_use(driver: Driver) -> None:
    from cuentry.catalog import Catalog

    odd = Catalog({"entries": [{"symbol": "cuCtxGetCurrent", "version": 4000, "variant": None, "returns": "CUresult",
                                "params": [["pctx", "mystery_t *", "mystery_t *"]], "exported": "cuCtxGetCurrent"}],
                   "ffi_hints": {"opaque": [], "unsigned_enums": [], "enum_typedefs": []}})
    t = Table("t", [required("cuCtxGetCurrent", 4000)], stream="legacy", source=driver, cat=odd)
    with pytest.raises(TypeError, match="no conversion for C type 'mystery_t \\*'"):
        t.resolve()
    assert not t.resolved


def test_a_declaration_made_again_is_checked_and_bound_once(driver: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    import cuentry.table as table_mod

    calls: list[int] = []
    real = table_mod.bind_entry
    monkeypatch.setattr(table_mod, "bind_entry", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    es = [required("cuMemAlloc", 3020), required("cuMemcpyHtoD", 7000), optional("cuMulticastCreate", 12010)]
    a = Table("a", es, stream="legacy", source=driver)
    assert len(calls) == 3
    b = Table("b", es, stream="legacy", source=driver)
    assert len(calls) == 3 and b.entries is a.entries and b.name == "b"
    c = Table("c", es, stream="per_thread", source=driver)  # another mode: its own binding
    assert len(calls) == 6 and c.entries[1].bound_abi.pfn == "PFN_cuMemcpyHtoD_v7000_ptds"
    assert a.entries[1].bound_abi.pfn == "PFN_cuMemcpyHtoD_v3020"
    with pytest.raises(TableDeclarationError, match="declared twice"):
        Table("d", [*es, required("cuMemAlloc", 3020)], stream="legacy", source=driver)  # a new list: checked
    assert b.resolve().cuMemAlloc is a.resolve().cuMemAlloc and b.available("cuMulticastCreate")


_SHUTDOWN = """
import sys
from cuentry import Table, required, Driver, out
d = Driver.load(sys.argv[1])
t = Table("t", [required("cuCtxGetCurrent", 4000)], stream="legacy", source=d)
o = out("CUcontext")
class Late:
    def __del__(self):
        try:
            t.cuCtxGetCurrent(o)
            print("called")
        except Exception as e:
            print("raised", type(e).__name__, e)
late = Late()
late.cycle = late  # freed by the collector at shutdown, after imports stopped working
"""


def test_a_table_first_used_during_interpreter_shutdown_says_so(fake: dict[str, str], fake_version: Any) -> None:
    import subprocess
    import sys

    got = subprocess.run([sys.executable, "-c", _SHUTDOWN, fake["full"]], capture_output=True, text=True,
                         timeout=120)
    assert got.returncode == 0, got.stderr
    assert "raised InterpreterShutdownError table 't' was first resolved while the interpreter is shutting down" \
        in got.stdout, got.stdout + got.stderr
    assert "Traceback" not in got.stderr


# --- the seam: a Driver answered in Python (Driver.from_answers), no library built or loaded ------------------

def test_a_table_resolves_through_answers_as_through_a_library() -> None:
    from cuentry.driver import Driver, DriverAnswers
    from cuentry.testing.answers import CatalogAnswers

    answers = CatalogAnswers(version=12080)
    drv = Driver.from_answers(answers)
    assert (drv.driver_version, drv.gpa_form, drv.init_result, drv.fake) == (12080, "v2", 0, False)
    t = Table("t", [required("cuMemAlloc", 3020), optional("cuMulticastCreate", 12010),
                    required("cuCtxCreate", 12050, fallback=required("cuCtxCreate", 3020))],
              stream="legacy", source=drv)
    t.resolve()
    assert t.available("cuMemAlloc") and t.available("cuCtxCreate") and t.available("cuMulticastCreate")
    old = Driver.from_answers(CatalogAnswers(version=11080, form="v1"))
    t2 = Table("t2", [required("cuMemAlloc", 3020), optional("cuMulticastCreate", 12010),
                      required("cuCtxCreate", 12050, fallback=required("cuCtxCreate", 3020))],
               stream="legacy", source=old)
    t2.resolve()
    assert not t2.available("cuMulticastCreate") and t2.reason("cuMulticastCreate") is not None
    assert t2.report()["entries"][2]["via"] is not None  # cuCtxCreate@12050 is above 11.8: its fallback
    assert old.resolve("cuMemAlloc", 3020, "legacy").diagnostic.query_emulated
    assert ("cuMemAlloc", 3020, 1) in answers.asked or any(a[0] == "cuMemAlloc" for a in answers.asked)
    with pytest.raises(UsageError, match="has no version, init, get_proc_address, exports"):
        Driver.from_answers(object())  # type: ignore[arg-type]
    assert isinstance(Driver.from_answers(DriverAnswers()), Driver)  # the documented do-nothing answers


def test_diagnostics_through_answers_name_each_miss() -> None:
    from cuentry import Classification
    from cuentry.driver import Driver
    from cuentry.errors import ResolutionError
    from cuentry.testing.answers import CatalogAnswers

    drv = Driver.from_answers(CatalogAnswers(version=12080, missing={"cuMemAlloc"}))
    with pytest.raises(ResolutionError) as got:
        drv.resolve("cuMemAlloc", 3020, "legacy")
    assert got.value.diagnostic.classification == Classification.NOT_EXPORTED
    with pytest.raises(ResolutionError) as got:
        Driver.from_answers(CatalogAnswers(version=11080, form="v1")).resolve("cuMulticastCreate", 12010, "legacy")
    assert got.value.diagnostic.classification == Classification.DRIVER_TOO_OLD
    assert drv.error_name(2) == "CUDA_ERROR_OUT_OF_MEMORY"  # the catalog's names: no cuGetErrorName to ask
    failing = Driver.from_answers(CatalogAnswers(init=100))
    assert failing.init_result == 100 and failing.info()["cuInit_name"] == "CUDA_ERROR_NO_DEVICE"
    closed = Driver.from_answers(CatalogAnswers())
    closed.close()
    with pytest.raises(Exception, match="closed"):
        closed.resolve("cuMemAlloc", 3020, "legacy")


@pytest.mark.parametrize("release", [3020, 9020, 11030, 11080, 12000, 12080, 13000])
def test_a_table_resolves_exactly_from_its_floor_through_answers(release: int) -> None:
    from cuentry.driver import Driver
    from cuentry.errors import TableResolutionError
    from cuentry.testing.answers import CatalogAnswers

    form = "v2" if release >= 12000 else "v1" if release >= 11030 else "none"
    drv = Driver.from_answers(CatalogAnswers(version=release, form=form))
    for entries in ([required("cuMemAlloc", 3020)],
                    [required("cuCtxCreate", 12050, fallback=required("cuCtxCreate", 3020))],
                    [required("cuMemAdvise", 12020, fallback=required("cuMemAdvise", 8000)),
                     optional("cuMulticastCreate", 12010)],
                    [required("cuStreamGetCaptureInfo", 12030)]):
        t = Table("floor", entries, stream="legacy", source=drv)
        try:
            t.resolve()
            resolves = True
        except TableResolutionError:
            resolves = False
        assert resolves == (release >= t.min_driver()), (release, t.min_driver(), entries)


def test_an_entry_answered_by_a_python_function_is_called_through_the_typed_callable() -> None:
    import ctypes

    from cuentry.driver import Driver
    from cuentry.testing.answers import CatalogAnswers

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    def get_current(pctx: int) -> int:
        ctypes.c_uint64.from_address(pctx).value = 0x1234
        return 0

    addr = ctypes.cast(get_current, ctypes.c_void_p).value
    assert addr
    drv = Driver.from_answers(CatalogAnswers(functions={"PFN_cuCtxGetCurrent_v4000": addr}))
    t = Table("t", [required("cuCtxGetCurrent", 4000)], stream="legacy", source=drv)
    ctx = out("CUcontext")
    assert t.cuCtxGetCurrent(ctx) == 0 and ctx[0] == 0x1234


def test_the_audit_verdicts_agree_with_what_a_driver_answers() -> None:
    """audit.classify judges a request with no process; a driver of that release (answered in Python) must
    answer it as the verdict says: CT004 (above the driver) exactly where it answers CUDA_ERROR_INVALID_VALUE,
    CT002 (below the symbol's first ABI) exactly where it answers "version not sufficient"."""
    from cuentry import audit
    from cuentry.catalog import catalog
    from cuentry.testing.answers import CatalogAnswers

    cat, release = catalog(), 12080
    answers = CatalogAnswers(version=release)
    checked = 0
    for sym in cat.symbols()[::7]:
        first = min(cat.versions(sym))
        if first > release:
            continue
        for ver in (first - 10, first, max(cat.versions(sym)), release + 10):
            if ver <= 0:
                continue
            codes = {f.code for f in audit.classify(sym, ver, 1, driver_version=release)}
            rc, status, _ = answers.get_proc_address(sym, ver, 1)
            assert ("CT004" in codes) == (rc == 1), (sym, ver, codes, rc)
            assert ("CT002" in codes) == (rc == 0 and status == 2), (sym, ver, codes, rc, status)
            checked += 1
    assert checked > 200
