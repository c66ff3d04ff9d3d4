"""The call layer's contract on the fake driver: values, kinds, errors, lifetime and threads, both backends."""

from __future__ import annotations

import array
import ctypes
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import cuentry
from cuentry import Driver, address, as_bytes, as_str, kernel_params, out
from cuentry.calls import Out, bind, choice, compiled, struct_type
from cuentry.errors import ArgumentError, ArgumentRangeError, DriverBusyError, DriverClosedError, UsageError

from .backends import BACKENDS, use_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Bind on one backend (skipped for compiled where the extension is not installed)."""
    name = str(request.param)
    use_backend(monkeypatch, name)
    return name


@pytest.fixture
def drv(fake: dict[str, str], fake_version: Any, backend: str) -> Iterator[Driver]:
    d = Driver.load(fake["full"])
    yield d
    d.close()


class Stream:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def __cuda_stream__(self) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


# --- values ----------------------------------------------------------------------------------


def test_out_knows_its_element_type_and_reads_back(drv: Driver, backend: str) -> None:
    n = out("int")
    assert (n.count, n.itemsize, n.ctype, len(n)) == (1, 4, "int", 1)
    assert drv.call("cuDeviceGetCount", 2000).backend == backend
    assert drv.call("cuDeviceGetCount", 2000)(n) == 0 and n[0] == n.value == 1
    with pytest.raises(IndexError):
        n[1]
    with pytest.raises(TypeError):
        n[True]
    with pytest.raises(AttributeError):
        n.count = 5  # type: ignore[misc]
    u = out("CUuuid")
    assert u.itemsize == 16 and len(as_bytes(u)) == 16
    name = out("char", 32)
    assert drv.call("cuDeviceGetName", 2000)(name, 32, 0) == 0 and as_str(name) == "cuentry fake GPU 0"


def test_out_refuses_what_has_no_storage() -> None:
    for bad in ("NoSuchType", "void", "CUctx_st", "struct CUctx_st", ""):
        with pytest.raises(ArgumentError):
            out(bad)
    for count in (0, -1, True, 1.5, 1 << 40):
        with pytest.raises(ArgumentError):
            out("int", count)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError):
        as_str(out("int"))
    with pytest.raises(ArgumentError):
        as_bytes(bytearray(4))  # type: ignore[arg-type]


def test_address_is_validated() -> None:
    assert address(0).value == 0 and address(2**64 - 1).value == 2**64 - 1
    for bad in (-1, 2**64, 1.0, True, "1", None):
        with pytest.raises(ArgumentError):
            address(bad)  # type: ignore[arg-type]


def test_kernel_params_keep_their_storage() -> None:
    d = out("CUdeviceptr")
    d[0] = 0x1234
    kp = kernel_params(d, ("unsigned int", 7), ("float", 1.5))
    assert len(kp) == 3 and kp[0] == d.address
    assert ctypes.c_uint.from_address(kp[1]).value == 7
    assert ctypes.c_float.from_address(kp[2]).value == 1.5
    with pytest.raises(ArgumentError):
        kernel_params(("unsigned int", -1))
    with pytest.raises(ArgumentError):
        kernel_params(42)  # type: ignore[arg-type]


def test_unknown_backend_is_an_error(monkeypatch: pytest.MonkeyPatch, fake: dict[str, str], fake_version: Any) -> None:
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice("fastest"))
    with pytest.raises(UsageError, match="CUENTRY_BACKEND"):
        compiled.backend_mode()
    assert compiled.backend()["name"] == "invalid"
    with Driver.load(fake["full"]) as d, pytest.raises(UsageError):
        d.call("cuCtxGetCurrent", 4000)


# --- integers and enums ------------------------------------------------------------------


@pytest.mark.parametrize("value", [2**32, 2**32 + 16, -(2**31) - 1, 2**31, 2**64, -(2**64)])
def test_ints_out_of_range_are_refused_not_truncated(drv: Driver, value: int) -> None:
    attr = drv.call("cuDeviceGetAttribute", 2000)
    with pytest.raises(ArgumentRangeError) as ei:
        attr(out("int"), value, 0)
    e = ei.value
    assert isinstance(e, OverflowError) and e.parameter == "attrib" and e.value == value
    assert (e.low, e.high) == (-(2**31), 2**31 - 1) and "cuDeviceGetAttribute" in str(e)
    with pytest.raises(ArgumentRangeError, match="'Flags'"):
        drv.call("cuInit", 2000)(2**32)


@pytest.mark.parametrize("value", [1.0, 16.0, True, "16", None, b"\x10"])
def test_ints_take_no_float_bool_str(drv: Driver, value: Any) -> None:
    with pytest.raises(ArgumentError, match="'attrib'"):
        drv.call("cuDeviceGetAttribute", 2000)(out("int"), value, 0)


def test_ints_take_index_objects(drv: Driver) -> None:
    class Attr:
        def __index__(self) -> int:
            return 16

    v = out("int")
    assert drv.call("cuDeviceGetAttribute", 2000)(v, Attr(), 0) == 0 and v[0] == 132


# --- handles and device pointers -----------------------------------------------------------


@pytest.mark.parametrize("value", [-1, 2**64, 2**64 + 8])
def test_handles_out_of_pointer_range(drv: Driver, value: int) -> None:
    with pytest.raises(ArgumentRangeError, match="'ctx'"):
        drv.call("cuCtxSetCurrent", 4000)(value)


@pytest.mark.parametrize("value", [1.9, 1.0, True, "0", b"", object(), Stream((0, 5))])
def test_handles_take_no_float_or_foreign_objects(drv: Driver, value: Any) -> None:
    with pytest.raises(ArgumentError, match="'ctx'"):
        drv.call("cuCtxSetCurrent", 4000)(value)


def test_handles_round_trip(drv: Driver) -> None:
    set_cur, get_cur = drv.call("cuCtxSetCurrent", 4000), drv.call("cuCtxGetCurrent", 4000)
    cur = out("CUcontext")
    for value, want in ((2**64 - 1, 2**64 - 1), (1234, 1234), (None, 0)):
        assert set_cur(value) == 0 and get_cur(cur) == 0 and cur[0] == want


@pytest.mark.parametrize("answer", [(0, "7"), (1, 7), (0, 7.0), (0,), [0, 7], None, (True, 7), (0, -1),
                                    (0, 2**64), ValueError("nope")])
def test_stream_protocol_is_checked(drv: Driver, answer: Any) -> None:
    record = drv.call("cuEventRecord", 2000)
    with pytest.raises(ArgumentError, match="'hStream'"):
        record(0, Stream(answer))


def test_stream_protocol_accepted(drv: Driver) -> None:
    # the fake does not implement cuEventRecord: CUDA_ERROR_NOT_SUPPORTED proves the call was made
    assert drv.call("cuEventRecord", 2000)(0, Stream((0, 7))) == 801
    assert drv.call("cuEventRecord", 2000)(0, None) == 801


class CAI:
    def __init__(self, ptr: Any) -> None:
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<u4", "version": 3}


def test_device_pointers(drv: Driver) -> None:
    retain, set_cur = drv.call("cuDevicePrimaryCtxRetain", 7000), drv.call("cuCtxSetCurrent", 4000)
    ctx = out("CUcontext")
    assert retain(ctx, 0) == 0 and set_cur(ctx[0]) == 0
    d = out("CUdeviceptr")
    assert drv.call("cuMemAlloc", 3020)(d, 16) == 0
    src, dst = bytearray(b"0123456789abcdef"), bytearray(16)
    assert drv.call("cuMemcpyHtoD", 3020)(CAI(d[0]), src, 16) == 0
    assert drv.call("cuMemcpyDtoH", 3020)(dst, d[0], 16) == 0 and dst == src
    for bad in (None, 1.5, True, "1", CAI("x"), CAI(-1), CAI(2**64)):
        with pytest.raises(ArgumentError, match="'dstDevice'"):
            drv.call("cuMemcpyHtoD", 3020)(bad, src, 16)
    assert drv.call("cuMemFree", 3020)(d[0]) == 0


# --- buffers -------------------------------------------------------------------------------


def _name(drv: Driver) -> Any:
    return drv.call("cuDeviceGetName", 2000)


@pytest.mark.parametrize("buf", ["abcd" * 16, b"\0" * 64, memoryview(bytearray(64)).toreadonly(), 12345, 1.5,
                                 array.array("i", [0] * 16), address])
def test_output_char_buffers_refuse_what_cannot_be_written(drv: Driver, buf: Any) -> None:
    if buf is address:
        assert _name(drv)(address(0), 8, 0) == 1  # the escape hatch: NULL reaches the driver, which refuses
        return
    with pytest.raises(ArgumentError, match="'name'"):
        _name(drv)(buf, 8, 0)


def test_length_must_fit_the_buffer(drv: Driver) -> None:
    with pytest.raises(ArgumentError, match="'len'.*at most 4"):
        _name(drv)(out("char", 4), 256, 0)
    with pytest.raises(ArgumentError, match="'len'"):
        _name(drv)(bytearray(4), 5, 0)
    with pytest.raises(ArgumentError, match="'len'"):
        _name(drv)(bytearray(4), -1, 0)
    b = bytearray(40)
    assert _name(drv)(b, 40, 0) == 0 and b.startswith(b"cuentry fake GPU 0\0")
    with pytest.raises(ArgumentError, match="'ByteCount'"):
        drv.call("cuMemcpyDtoH", 3020)(bytearray(8), 0, 16)


@pytest.mark.parametrize("make", [
    lambda: array.array("q", [0]), lambda: array.array("I", [0]), lambda: array.array("f", [0]),
    lambda: bytearray(4), lambda: (ctypes.c_uint * 1)(), lambda: out("unsigned int"), lambda: out("CUcontext"),
    lambda: array.array("i", []), lambda: memoryview(array.array("i", [0])).toreadonly(), lambda: b"\0\0\0\0",
])
def test_typed_outputs_need_the_exact_element_type(drv: Driver, make: Any) -> None:
    with pytest.raises(ArgumentError, match="'pi'"):
        drv.call("cuDeviceGetAttribute", 2000)(make(), 16, 0)


@pytest.mark.parametrize("make", [lambda: array.array("i", [0]), lambda: (ctypes.c_int * 1)(), lambda: out("int"),
                                  lambda: memoryview(bytearray(4)).cast("i")])
def test_typed_outputs_accept_matching_buffers(drv: Driver, make: Any) -> None:
    v = make()
    assert drv.call("cuDeviceGetAttribute", 2000)(v, 16, 0) == 0 and v[0] == 132


def test_numpy_buffers(drv: Driver) -> None:
    np = pytest.importorskip("numpy")
    attr = drv.call("cuDeviceGetAttribute", 2000)
    a = np.zeros(1, dtype=np.int32)
    assert attr(a, 16, 0) == 0 and a[0] == 132
    for bad in (np.zeros(1, dtype=object), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.uint32),
                np.zeros(1, dtype=">i4"), np.zeros(4, dtype=np.int32)[::2], np.zeros(0, dtype=np.int32)):
        with pytest.raises(ArgumentError, match="'pi'"):
            attr(bad, 16, 0)
    ro = np.zeros(1, dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only"):
        attr(ro, 16, 0)


def test_structs_only_of_their_own_type(drv: Driver) -> None:
    uuid = drv.call("cuDeviceGetUuid", 11040)
    u = out("CUuuid")
    assert uuid(u, 0) == 0 and as_bytes(u)[0] == 0xA0
    assert uuid(u[0], 0) == 0  # the struct itself (a view of u) is the matching type too
    for bad in (bytearray(16), out("char", 16), out("CUmemLocation"), (ctypes.c_char * 16)(), 0):
        with pytest.raises(ArgumentError, match="'uuid'"):
            uuid(bad, 0)
    loc = out("CUmemLocation")
    assert type(loc[0]) is struct_type("CUmemLocation_st")
    advise = drv.call("cuMemAdvise", 12020)
    assert advise(0, 16, 1, loc) == 801 and advise(0, 16, 1, loc[0]) == 801  # by value: converted, then called
    with pytest.raises(ArgumentError, match="'location'"):
        advise(0, 16, 1, u)


def test_const_char_inputs(drv: Driver) -> None:
    by_id = drv.call("cuDeviceGetByPCIBusId", 4010)
    dev = out("CUdevice")
    for ok in (b"0000:00:00.0", "0000:00:00.0", None):
        assert by_id(dev, ok) == 801
    for bad in ("a\x00b", bytearray(b"x"), 5, 1.0):
        with pytest.raises(ArgumentError, match="'pciBusId'"):
            by_id(dev, bad)


# --- keywords and arity ------------------------------------------------------------------------


def test_keywords_by_the_headers_names(drv: Driver) -> None:
    attr = drv.call("cuDeviceGetAttribute", 2000)
    v = out("int")
    assert attr(pi=v, attrib=16, dev=0) == 0 and v[0] == 132
    v[0] = 0
    assert attr(v, dev=0, attrib=75) == 0 and v[0] == 9
    assert attr.params == ("pi", "attrib", "dev")
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'device'"):
        attr(v, 16, device=0)
    with pytest.raises(ArgumentError, match="multiple values for argument 'attrib'"):
        attr(v, 16, attrib=16, dev=0)
    with pytest.raises(TypeError, match=r"missing 2 required positional arguments: 'attrib', 'dev'") as ei:
        attr(v)
    assert "a0" not in str(ei.value) and "a1" not in str(ei.value)
    with pytest.raises(TypeError, match=r"takes 3 positional arguments \(pi, attrib, dev\) but 4"):
        attr(v, 16, 0, 0)
    with pytest.raises(ArgumentError, match="unexpected keyword"):
        attr.checked(v, 16, 0, x=1)


# --- an argument given again ---------------------------------------------------------------------


def test_an_argument_given_again_is_never_taken_for_another(drv: Driver) -> None:
    """New Outs at freed ones' addresses, None after an Out, another element type: each judged afresh, and no
    Out kept alive by a call. Handles (which the pure backend keeps converted, by value, up to a bound): many
    values, each as a fresh int object, twice over, reach C exactly; one out of range, or a bool equal to a
    kept one, is still refused."""
    attr = drv.call("cuDeviceGetAttribute", 2000)
    for i in range(300):  # Outs made and dropped: CPython hands their addresses out again
        v = out("int")
        assert attr(v, 75 if i % 2 else 16, 0) == 0 and v[0] == (9 if i % 2 else 132)
    assert attr(None, 16, 0) == 1  # NULL: CUDA_ERROR_INVALID_VALUE
    with pytest.raises(ArgumentError):
        attr(out("CUcontext"), 16, 0)
    kept = out("int")
    refs = sys.getrefcount(kept)
    assert attr(kept, 16, 0) == 0 and attr(kept, 16, 0) == 0
    assert sys.getrefcount(kept) == refs
    setc, getc, cur = drv.call("cuCtxSetCurrent", 4000), drv.call("cuCtxGetCurrent", 4000), out("CUcontext")
    for _ in range(2):
        for v in range(300):  # the fake driver keeps any handle as the current context
            h = int(str(2**40 + 7 * v))
            assert setc(h) == 0 and getc(cur) == 0 and cur[0] == h
    for bad in (2**64 + 2**40, -1):
        with pytest.raises(ArgumentError):
            setc(bad)
    assert setc(1) == 0
    with pytest.raises(ArgumentError):
        setc(True)
    assert setc(None) == 0 and getc(cur) == 0 and cur[0] == 0


# --- lifetime and threads -----------------------------------------------------------------------


def test_callables_outlive_their_driver_safely(fake: dict[str, str], fake_version: Any, backend: str) -> None:
    d = Driver.load(fake["full"])
    fns = [d.call("cuDeviceGetCount", 2000), d.call("cuCtxGetCurrent", 4000)]
    d.close()
    for fn in fns:
        for f in (fn, fn.checked):
            with pytest.raises(DriverClosedError):
                f(out("int") if fn.__name__ == "cuDeviceGetCount" else out("CUcontext"))
    d.close()


def _sleeper(d: Driver) -> Any:
    abi = cuentry.get_catalog().abis("cuInit")[0]  # int(unsigned int): the shape of cuentryFakeSleep
    return bind(abi, d.library.address("cuentryFakeSleep"), guard=d.library.guard)


@pytest.mark.parametrize("kept", [False, True])
def test_a_call_holds_the_gil_only_where_the_policy_says(fake: dict[str, str], fake_version: Any, backend: str,
                                                         kept: bool) -> None:
    """A 300 ms call bound as a function that may block (cuInit's group) lets another Python thread run; bound
    as a getter the policy keeps the GIL for (cuCtxGetFlags's name and group), it holds the GIL, on both
    backends."""
    d = Driver.load(fake["full"])
    abi = cuentry.get_catalog().abis("cuInit")[0]  # int(unsigned int): the shape of cuentryFakeSleep
    if kept:
        abi = abi.replace(symbol="cuCtxGetFlags", group="CUDA_CTX")
    sleep = bind(abi, d.library.address("cuentryFakeSleep"), guard=d.library.guard)
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        time.sleep(0.02)
        start = time.monotonic()
        assert sleep(300) == 0
        end = time.monotonic()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start + 0.05 < x < end - 0.05]
    assert (len(during) == 0) if kept else (len(during) > 20), (kept, len(during))
    d.close()


def _in_background(fn: Any, *args: Any) -> tuple[threading.Thread, list[Any]]:
    got: list[Any] = []

    def run() -> None:
        try:
            got.append(fn(*args))
        except Exception as exc:  # noqa: BLE001 - reported to the test
            got.append(exc)

    t = threading.Thread(target=run)
    t.start()
    return t, got


def _wait_in_flight(d: Driver) -> None:
    deadline = time.monotonic() + 5
    while d.library.guard.in_flight == 0:
        assert time.monotonic() < deadline, "the call never started"
        time.sleep(0.001)


def test_close_waits_for_a_call_in_flight(fake: dict[str, str], fake_version: Any, backend: str) -> None:
    d = Driver.load(fake["full"])
    sleep = _sleeper(d)
    t, got = _in_background(sleep, 300)
    _wait_in_flight(d)
    t0 = time.monotonic()
    d.close()  # waits for the sleeping call, then unmaps
    assert time.monotonic() - t0 > 0.05
    t.join()
    assert got == [0] and d.closed
    with pytest.raises(DriverClosedError):
        sleep(1)


def test_close_refuses_to_unmap_under_a_running_call(fake: dict[str, str], fake_version: Any, backend: str) -> None:
    d = Driver.load(fake["full"])
    sleep = _sleeper(d)
    t, got = _in_background(sleep, 600)
    _wait_in_flight(d)
    with pytest.raises(DriverBusyError, match="1 call"):
        d.library.close(timeout=0.05)
    assert d.closed and d.library.address("cuInit") == 0  # closed to new work, still mapped
    with pytest.raises(DriverClosedError):
        sleep(1)
    t.join()
    assert got == [0]
    d.close()  # now it unmaps


def test_a_call_in_flight_counts_for_its_own_library_only(fake: dict[str, str], fake_version: Any,
                                                         backend: str) -> None:
    one, other = Driver.load(fake["full"]), Driver.load(fake["full"])
    sleep = _sleeper(one)
    t, got = _in_background(sleep, 300)
    _wait_in_flight(one)
    assert other.library.guard.in_flight == 0
    other.close()  # nothing of its own in flight: at once (a wait would raise DriverBusyError after 5 s)
    assert one.library.guard.in_flight == 1 and not one.closed
    t.join()
    assert got == [0] and one.library.guard.in_flight == 0
    one.close()


def test_compiled_and_pure_out_bases_behave_alike(drv: Driver) -> None:
    from cuentry.calls.values import PyOutBase

    with pytest.raises(TypeError, match="cannot be subclassed"):
        class PyOut(PyOutBase):
            __slots__ = ()

    storage = (ctypes.c_int * 1)()
    with pytest.raises(ArgumentError):
        PyOutBase(storage, 2, 4, "i")  # larger than its storage
    assert isinstance(out("int"), Out)


# Threads call through every path (the inline shortcut, the contract's path with keywords, `checked`, a C
# function that sleeps inside the library, a callback into Python inside a call) while the main thread
# closes the driver, which unmaps the library; a call still inside it would crash the process (hence a
# subprocess). The library must really be gone from the process's mappings, or the run proves nothing.
RACE_SCRIPT = r"""
import ctypes, os, sys, threading, time
from cuentry import Driver, out
from cuentry.calls import bind
from cuentry.catalog import catalog
from cuentry.errors import DriverClosedError
path, cycles, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
real = os.path.realpath(path)
sleep_abi = catalog().abis("cuInit")[0]  # int(unsigned int): the shape of cuentryFakeSleep
host_abi = next(a for a in catalog() if a.symbol == "cuLaunchHostFunc" and a.stream == "legacy")
HOST = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

def mapped():
    with open("/proc/self/maps") as f:
        return real in f.read()

calls = [0] * 6
for cycle in range(cycles):
    d = Driver.load(path)
    sleep = bind(sleep_abi, d.library.address("cuentryFakeSleep"), guard=d.library.guard)
    assert sleep.backend == backend, sleep.backend
    get, attr = d.call("cuCtxGetCurrent", 4000), d.call("cuDeviceGetAttribute", 2000)

    @HOST
    def in_python(stream, fn, data):  # a call whose C side runs Python (and sleeps in the library) before it returns
        sleep(1)
        return 0

    host = bind(host_abi, ctypes.cast(in_python, ctypes.c_void_p).value, guard=d.library.guard)
    done = []

    def run(kind):
        o, v = out("CUcontext"), out("int")
        step = [lambda: sleep(1), lambda: get(o), lambda: attr(v, attrib=16, dev=0), lambda: sleep.checked(0),
                lambda: attr(pi=v, attrib=16, dev=0), lambda: host(0, None, None)][kind]
        try:
            while True:
                step()
                calls[kind] += 1
        except DriverClosedError:
            done.append(kind)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    time.sleep(0.004 + 0.003 * (cycle % 4))
    d.close()
    assert not mapped(), "the library is still mapped after close(): nothing was tested"
    for t in threads:
        t.join(10)
    assert sorted(done) == list(range(6)), done
print("ok", calls)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.parametrize("backend_name", BACKENDS)
def test_close_racing_calls_from_threads_never_unmaps_under_a_call(fake: dict[str, str], backend_name: str) -> None:
    if backend_name == "compiled":
        try:
            compiled.extension()
        except ImportError:
            pytest.skip("the compiled extension is not installed")
    env = {**os.environ, "CUENTRY_BACKEND": backend_name, "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    proc = subprocess.run([sys.executable, "-c", RACE_SCRIPT, fake["full"], "12", backend_name], capture_output=True,
                          text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    counts = [int(n) for n in proc.stdout.split("[", 1)[1].rstrip("]\n").split(",")]
    assert proc.stdout.startswith("ok") and all(counts), proc.stdout  # every path was running when closed


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_forked_child_has_no_calls_in_flight(fake: dict[str, str], fake_version: Any, backend: str) -> None:
    import os

    d = Driver.load(fake["full"])
    sleep = _sleeper(d)
    t, got = _in_background(sleep, 300)
    _wait_in_flight(d)
    pid = os.fork()
    if pid == 0:  # the child: the sleeping thread does not exist here, so close() must not wait for it
        try:
            d.library.close(timeout=0.05)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - any failure is the child's exit status
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    t.join()
    assert status == 0 and got == [0]
    d.close()


def test_the_cold_path_stays_lean(fake: dict[str, str]) -> None:
    """import -> load -> resolve -> first call parses no C and imports none of the costly stdlib modules."""
    import os
    import subprocess
    import sys

    code = ("import sys, cuentry\n"
            "d = cuentry.Driver.load(sys.argv[1])\n"
            "f = d.call('cuCtxGetCurrent', 4000)\n"
            "assert f(cuentry.out('CUcontext')) == 0\n"
            "print(f.backend, ' '.join(sorted(sys.modules)))\n")
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    proc = subprocess.run([sys.executable, "-c", code, fake["full"]], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    backend, *modules = proc.stdout.split()
    heavy = {"pycparser", "cffi", "dataclasses", "typing", "logging", "enum", "re", "threading", "weakref",
             "subprocess", "pathlib", "inspect", "json"}
    assert not (set(modules) & heavy), sorted(set(modules) & heavy)
    assert ("cuentry.calls._fastcall" in modules) == (backend == "compiled")


def test_no_unchecked_entry_on_a_callable(drv: Driver) -> None:
    """Nothing public on a typed callable calls the C function without the contract."""
    fn = drv.call("cuCtxGetCurrent", 4000)
    public = {m for m in dir(fn) if not m.startswith("_")}
    assert public <= {"abi", "address", "exported", "backend", "checked", "params", "ffi_type"}, public


def test_every_abi_of_the_shipped_catalog_builds_its_contract() -> None:
    """What lets a table trust the shipped catalog at resolution (calls.check_bindable skips its records)
    and build each contract at an entry's first use."""
    from cuentry.calls import check_bindable, contract
    from cuentry.catalog import catalog

    cat = catalog()
    hints = contract.Hints(cat.ffi_hints)
    abis = list(cat)
    assert len(abis) > 500
    for abi in abis:
        contract.bindable(abi, hints)  # raises for a type with no conversion
        c = contract.Contract(abi, hints, lambda tag: None)
        assert len(c.specs) == len(abi.signature.params)
        check_bindable(abi, cat)
    assert len(hints.classified) > 50


def test_reprs_say_how_a_value_was_made_and_what_it_holds() -> None:
    assert repr(out("CUcontext")) == "cuentry.out('CUcontext') = 0x0"
    assert repr(out("int", 3)) == "cuentry.out('int', 3) = [0, 0, 0]"
    assert repr(out("int", 20)).endswith("[0, 0, 0, 0, 0, 0, 0, 0, ... (20 in all)]")
    name = out("char", 16)
    name._obj[:4] = b"H200"
    assert repr(name) == "cuentry.out('char', 16) = 'H200'"
    u = out("CUuuid")
    raw = bytes([0xA0, 0, 0, 7] * 4)
    ctypes.memmove(u.address, raw, 16)
    assert repr(u[0]) == f"CUuuid_st(bytes={raw!r})"  # every byte, NULs included
    assert repr(u) == f"cuentry.out('CUuuid') = CUuuid_st(bytes={raw!r})"
    assert repr(out("CUlaunchConfig")).startswith("cuentry.out('CUlaunchConfig') = CUlaunchConfig_st(gridDimX=0, ")
    d = out("CUdeviceptr")
    d[0] = 0x1234
    assert repr(d) == "cuentry.out('CUdeviceptr') = 0x1234"
    assert repr(kernel_params(d, ("unsigned int", 7))) == \
        "cuentry.kernel_params(('CUdeviceptr', 0x1234), ('unsigned int', 7))"
    assert repr(address(0x10)) == "cuentry.address(0x10)"


def test_the_gil_policy_is_data_per_group_documented_and_complete() -> None:
    import re
    from pathlib import Path

    from cuentry.calls import holds_gil
    from cuentry.calls.gil import GIL_GROUPS, GIL_RELEASING_GETTERS
    from cuentry.catalog import catalog

    cat = catalog()
    groups = {cat.newest(s).group or "" for s in cat.symbols()}
    assert groups <= set(GIL_GROUPS), groups - set(GIL_GROUPS)  # every group decided
    assert set(GIL_GROUPS) - {""} <= groups  # and no row for a group the catalog lacks
    for sym in GIL_RELEASING_GETTERS:  # each exception is a getter that would otherwise keep the GIL
        assert sym in cat and GIL_GROUPS[cat.newest(sym).group or ""] == "getters" and "Get" in sym
        assert not holds_gil(sym)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "calls.md").read_text(encoding="utf-8")
    section = doc.split("## The GIL", 1)[1].split("\n## ", 1)[0]
    rows = {m[0]: m[1] for m in re.findall(r"^\| (`CUDA_.*?) \| (kept|released)", section, re.M)}
    documented = {g.strip("`"): ("getters" if how == "kept" else "all")
                  for cell, how in rows.items() for g in cell.split(", ")}
    assert documented == {g: v for g, v in GIL_GROUPS.items() if g}
    assert all(f"`{s}`" in section for s in GIL_RELEASING_GETTERS)
    # what the policy decides, on calls whose behaviour is known
    kept = ["cuCtxGetCurrent", "cuDeviceGetAttribute", "cuStreamQuery", "cuEventQuery", "cuPointerGetAttribute",
            "cuFuncGetAttribute", "cuGraphGetNodes", "cuDriverGetVersion"]
    released = ["cuStreamSynchronize", "cuMemcpyDtoH", "cuLaunchKernel", "cuModuleGetFunction", "cuLibraryGetKernel",
                "cuGLGetDevices", "cuMemAlloc", "cuCtxSynchronize", "cuIpcGetMemHandle", "cuEventSynchronize"]
    assert [s for s in kept if not holds_gil(s)] == [] and [s for s in released if holds_gil(s)] == []
