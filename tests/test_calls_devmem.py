"""Issue 22: device memory for CUdeviceptr parameters, on the fake driver (its device memory is host memory).

What is accepted (ints, cuda.bindings-like CUdeviceptr, __cuda_array_interface__, CUDA DLPack, cuda.core-like
Buffer), what is refused (host arrays, array values taken through __index__, bool), and the extents: every
row of contract.DEVICE_RANGES refuses a count past a known extent, a non-contiguous object where the driver
touches one range, and a read-only destination, the same on both backends.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import Driver, out
from cuentry.calls import bind, contract
from cuentry.calls.ffi import Guard
from cuentry.catalog import catalog
from cuentry.errors import ArgumentError

from .backends import BACKENDS, use_backend


class CAI:
    """A __cuda_array_interface__ over any address (host memory here: the fake driver's device memory is)."""

    def __init__(self, ptr: int, shape: tuple[int, ...] = (16,), typestr: str = "|u1", readonly: bool = False,
                 strides: tuple[int, ...] | None = None, version: int = 3, **extra: Any) -> None:
        self.__cuda_array_interface__ = {"data": (ptr, readonly), "shape": shape, "typestr": typestr,
                                         "strides": strides, "version": version, **extra}


def cai_of(a: np.ndarray, **kw: Any) -> CAI:
    return CAI(a.ctypes.data, a.shape, a.dtype.str, strides=None if a.flags.c_contiguous else a.strides, **kw)


# A DLPack exporter made here from the DLPack spec (dlpack.h), never from cuentry's reading of it: each struct
# as a native `struct` format (C alignment rules), its LP64 size pinned below and its layout checked against
# numpy's exporter (C compiled against the real dlpack.h) in test_the_tests_dlpack_layout_is_the_specs.
DL_DEVICE = "ii"  # DLDevice {int32 device_type; int32 device_id}
DL_DATATYPE = "BBH"  # DLDataType {uint8 code; uint8 bits; uint16 lanes}
# DLTensor {void* data; DLDevice device; int32 ndim; DLDataType dtype; int64* shape; int64* strides;
#           uint64 byte_offset}
DL_TENSOR = "@P" + DL_DEVICE + "i" + DL_DATATYPE + "PPQ"
# DLManagedTensor {DLTensor dl_tensor; void* manager_ctx; void (*deleter)(DLManagedTensor*)}
DL_MANAGED = DL_TENSOR + "PP"
# DLManagedTensorVersioned {DLPackVersion {uint32 major; uint32 minor} version; void* manager_ctx;
#                           void (*deleter)(DLManagedTensorVersioned*); uint64 flags; DLTensor dl_tensor}
DL_VERSIONED = "@IIPPQ" + DL_TENSOR[1:]
DL_FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0)
DL_CAPSULE, DL_VERSIONED_CAPSULE = b"dltensor", b"dltensor_versioned"

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class DL:
    """__dlpack__/__dlpack_device__ over an address, as a CUDA (or any) device kind."""

    def __init__(self, ptr: int, shape: tuple[int, ...] = (16,), bits: int = 8, kind: int = 2,
                 strides: tuple[int, ...] | None = None, versioned: bool = True, readonly: bool = False,
                 byte_offset: int = 0) -> None:
        self.ptr, self.shape, self.bits, self.kind, self.byte_offset = ptr, shape, bits, kind, byte_offset
        self.strides, self.versioned, self.readonly = strides, versioned, readonly
        self.streams: list[Any] = []
        self._keep: list[Any] = []

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.kind, 0)

    def __dlpack__(self, stream: Any = None, max_version: Any = None) -> Any:
        self.streams.append(stream)
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        strides = (ctypes.c_int64 * max(1, len(self.shape)))(*(self.strides or ()))
        tensor = (self.ptr, self.kind, 0, len(self.shape), 1, self.bits, 1, ctypes.addressof(shape),
                  ctypes.addressof(strides) if self.strides else 0, self.byte_offset)  # code 1: kDLUInt
        if self.versioned and max_version is not None:
            fmt, name = DL_VERSIONED, DL_VERSIONED_CAPSULE
            values: tuple[int, ...] = (1, 0, 0, 0, DL_FLAG_READ_ONLY if self.readonly else 0, *tensor)
        else:
            fmt, name, values = DL_MANAGED, DL_CAPSULE, (*tensor, 0, 0)
        m = ctypes.create_string_buffer(struct.calcsize(fmt))
        struct.pack_into(fmt, m, 0, *values)
        self._keep += [shape, strides, m]
        return _new_capsule(ctypes.addressof(m), name, None)


class HostTensor:
    """A 1-element CPU tensor: __index__ gives its value, its DLPack device is the CPU."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)

    def __dlpack__(self, stream: Any = None, max_version: Any = None) -> Any:
        raise AssertionError("a host tensor must not be exported")


class CpuTensor(HostTensor):
    """Like a CPU torch tensor: its type has __cuda_array_interface__, which raises for it."""

    @property
    def __cuda_array_interface__(self) -> Any:
        raise AttributeError("not a CUDA tensor")


class GradTensor:
    @property
    def __cuda_array_interface__(self) -> Any:
        raise RuntimeError("requires grad")


class Meta(type):
    def __getattr__(cls, name: str) -> Any:
        raise RuntimeError("hostile metaclass")


class Hostile(metaclass=Meta):
    pass


def _fake_type(name: str, module: str, body: dict[str, Any]) -> Any:
    t = type(name, (), body)
    t.__module__ = module
    return t


Buffer = _fake_type("Buffer", "cuda.core.experimental._memory",
                    {"__init__": lambda s, h, n: (setattr(s, "handle", h), setattr(s, "size", n)) and None,
                     "is_device_accessible": True})
CUdeviceptr = _fake_type("CUdeviceptr", "cuda.bindings.driver",
                         {"__init__": lambda s, v: setattr(s, "v", v), "__int__": lambda s: s.v})


class Plain:
    def __init__(self, v: Any) -> None:
        self.v = v

    def __index__(self) -> Any:
        return self.v


# --- on the fake driver: real copies into memory these objects describe --------------------------------


def test_accepted_kinds_copy_into_the_memory_they_describe(drv: Driver) -> None:
    htod, dtoh = drv.call("cuMemcpyHtoD", 3020), drv.call("cuMemcpyDtoH", 3020)
    src = bytes(range(16))
    for make in (lambda a: a.ctypes.data, lambda a: cai_of(a), lambda a: DL(a.ctypes.data),
                 lambda a: DL(a.ctypes.data, versioned=False), lambda a: Buffer(a.ctypes.data, 16),
                 lambda a: Buffer(CUdeviceptr(a.ctypes.data), 16), lambda a: CUdeviceptr(a.ctypes.data),
                 lambda a: Plain(a.ctypes.data), lambda a: cai_of(a, version=2),
                 lambda a: cai_of(a.reshape(4, 4).T)):  # Fortran order: dense too
        dev = np.zeros(16, np.uint8)
        obj = make(dev)
        assert htod(obj, src, 16) == 0, obj
        assert dev.tobytes() == src, obj
        back = bytearray(16)
        assert dtoh(back, obj, 16) == 0 and bytes(back) == src


def test_a_count_past_the_extent_is_refused_and_memory_is_untouched(drv: Driver) -> None:
    dev = np.zeros(32, np.uint8)
    htod = drv.call("cuMemcpyHtoD", 3020)
    for obj in (CAI(dev.ctypes.data, (16,)), DL(dev.ctypes.data, (16,)), Buffer(dev.ctypes.data, 16),
                CAI(dev.ctypes.data + 8, (4,), "<u4")):
        with pytest.raises(ArgumentError, match="'ByteCount'.*holds 16 bytes"):
            htod(obj, b"\xff" * 32, 17)
    assert not dev.any()
    assert htod(CAI(dev.ctypes.data + 16, (16,)), b"\x01" * 16, 16) == 0 and dev[16:].all() and not dev[:16].any()
    back = bytearray(64)
    with pytest.raises(ArgumentError, match="'ByteCount'"):
        drv.call("cuMemcpyDtoH", 3020)(back, CAI(dev.ctypes.data, (16,)), 64)  # the source is 16 bytes


def test_host_arrays_and_array_values_are_refused(drv: Driver) -> None:
    htod = drv.call("cuMemcpyHtoD", 3020)
    host = np.zeros(16, np.uint8)
    for bad, why in ((host, "host array"), (np.uint64(host.ctypes.data), "host array"),
                     (HostTensor(host.ctypes.data), "host array.*kDLCPU"), (DL(host.ctypes.data, kind=1), "kDLCPU"),
                     (DL(host.ctypes.data, kind=3), "kDLCUDAHost"), (DL(host.ctypes.data, kind=4), "not a CUDA"),
                     (True, "bool"), (None, "None"), (1.0, "1.0"), ("0x10", "0x10"), (Plain(True), "bool"),
                     (Plain("1"), "str"), (CAI(host.ctypes.data, stream=0), "stream 0"),
                     (CAI(host.ctypes.data, version=1), "version 1"), (CAI(True), "bool"),
                     (CAI(host.ctypes.data, typestr="|O8"), "typestr"), (CAI(host.ctypes.data, shape=(-1,)), "negative"),
                     (CAI(host.ctypes.data, mask=object()), "mask"), (CAI(2**64 - 4), "address space"),
                     (Buffer(host.ctypes.data, -1), "size"), (CpuTensor(host.ctypes.data), "host array.*kDLCPU"),
                     (GradTensor(), "raised RuntimeError: requires grad"), (Hostile(), "failed while being read")):
        with pytest.raises(ArgumentError, match=f"'dstDevice'.*{why}"):
            htod(bad, b"x" * 16, 16)
    assert not host.any()


def test_read_only_and_non_contiguous_destinations_are_refused(drv: Driver) -> None:
    memset, htod = drv.call("cuMemsetD8", 3020), drv.call("cuMemcpyHtoD", 3020)
    a = np.zeros((4, 8), np.uint8)
    view = a[:, ::2]
    with pytest.raises(ArgumentError, match="'dstDevice'.*non-contiguous"):
        memset(cai_of(view), 7, 4)
    with pytest.raises(ArgumentError, match="'dstDevice'.*non-contiguous"):
        htod(DL(a.ctypes.data, (4, 4), strides=(8, 2)), b"x" * 4, 4)
    with pytest.raises(ArgumentError, match="'dstDevice'.*read-only"):
        htod(cai_of(a, readonly=True), b"x" * 4, 4)
    with pytest.raises(ArgumentError, match="'dstDevice'.*read-only"):
        htod(DL(a.ctypes.data, readonly=True), b"x" * 4, 4)
    assert not a.any()
    back = bytearray(4)  # a read-only or strided source is fine where only a query names it... but a copy reads
    assert drv.call("cuMemcpyDtoH", 3020)(back, cai_of(a, readonly=True), 4) == 0
    with pytest.raises(ArgumentError, match="'srcDevice'.*non-contiguous"):
        drv.call("cuMemcpyDtoH", 3020)(back, cai_of(view), 4)
    # the fake driver does not implement memset: a well-formed call reaches it and is answered 801
    assert memset(cai_of(a), 7, 32) == 801


def test_dlpack_is_asked_on_the_stream_the_call_runs_on(drv: Driver) -> None:
    a = np.zeros(16, np.uint8)
    dl = DL(a.ctypes.data)
    drv.call("cuMemcpyHtoD", 3020)(dl, b"x" * 16, 16)
    drv.call("cuMemcpyHtoDAsync", 3020)(dl, b"x" * 16, 16, 0)
    drv.call("cuMemcpyHtoDAsync", 3020)(dl, b"x" * 16, 16, 0x1234)
    drv.call("cuMemcpyHtoD", 7000, stream="per_thread")(dl, b"x" * 16, 16)
    assert dl.streams == [1, 1, 0x1234, 2]


def _read_dlpack(capsule: Any, fmt: str, name: bytes) -> dict[str, Any]:
    """The fields of a DLPack capsule, read with this file's layout (for checking that layout)."""
    raw = struct.unpack(fmt, ctypes.string_at(_capsule_pointer(capsule, name), struct.calcsize(fmt)))
    head, tensor = (raw[:5], raw[5:]) if fmt == DL_VERSIONED else ((), raw[:10])
    t = dict(zip(("data", "device_type", "device_id", "ndim", "code", "bits", "lanes", "shape", "strides",
                  "byte_offset"), tensor, strict=True))
    n = t["ndim"]
    t["shape"] = struct.unpack(f"{n}q", ctypes.string_at(t["shape"], 8 * n))
    t["strides"] = struct.unpack(f"{n}q", ctypes.string_at(t["strides"], 8 * n)) if t["strides"] else None
    if head:
        t["version"], t["flags"] = head[:2], head[4]
    return t


@pytest.mark.skipif(struct.calcsize("P") != 8, reason="the sizes pinned are LP64's")
def test_the_tests_dlpack_layout_is_the_specs() -> None:
    # dlpack.h on LP64: DLTensor 48 bytes (shape at 24), DLManagedTensor 64, DLManagedTensorVersioned 80
    # (dl_tensor at 32); the layout the producer above writes with, independent of cuentry's definition
    assert (struct.calcsize(DL_TENSOR), struct.calcsize(DL_MANAGED), struct.calcsize(DL_VERSIONED)) == (48, 64, 80)
    assert struct.calcsize("@P" + DL_DEVICE + "i" + DL_DATATYPE) == 24
    assert struct.calcsize("@IIPPQ") == 32
    # numpy's exporter is C compiled against the real dlpack.h: read with this layout, its capsules say
    # what the array is (a strided view, so shape and strides are both set)
    a = np.arange(48, dtype=np.uint16).reshape(4, 12)[:, ::3]
    for capsule, fmt, name in ((a.__dlpack__(), DL_MANAGED, DL_CAPSULE),
                               (a.__dlpack__(max_version=(1, 0)), DL_VERSIONED, DL_VERSIONED_CAPSULE)):
        t = _read_dlpack(capsule, fmt, name)
        assert t["data"] + t["byte_offset"] == a.ctypes.data
        assert (t["device_type"], t["device_id"], t["ndim"]) == (1, 0, 2)  # kDLCPU
        assert (t["code"], t["bits"], t["lanes"]) == (1, 16, 1)  # kDLUInt, 16 bits, 1 lane
        assert t["shape"] == (4, 4) and t["strides"] == (12, 3)  # strides count elements
        if fmt == DL_VERSIONED:
            assert t["version"][0] == 1 and t["flags"] & DL_FLAG_READ_ONLY == 0
    ro = np.zeros(4, np.uint8)
    ro.flags.writeable = False
    t = _read_dlpack(ro.__dlpack__(max_version=(1, 0)), DL_VERSIONED, DL_VERSIONED_CAPSULE)
    assert t["flags"] & DL_FLAG_READ_ONLY and t["shape"] == (4,)
    # and what the producer above writes reads back as it was given
    dl = DL(0x1000, (2, 8), 16, strides=(8, 1), readonly=True)
    t = _read_dlpack(dl.__dlpack__(max_version=(1, 0)), DL_VERSIONED, DL_VERSIONED_CAPSULE)
    assert (t["data"], t["device_type"], t["ndim"], t["bits"], t["shape"], t["strides"], t["flags"]) == \
        (0x1000, 2, 2, 16, (2, 8), (8, 1), DL_FLAG_READ_ONLY)


class ClaimsCuda:
    """A real exporter's capsule (numpy's, a CPU tensor) behind a __dlpack_device__ that claims CUDA."""

    def __init__(self, a: np.ndarray, versioned: bool) -> None:
        self.a, self.versioned = a, versioned

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, stream: Any = None, max_version: Any = None) -> Any:
        return self.a.__dlpack__(max_version=max_version) if self.versioned else self.a.__dlpack__()


@pytest.mark.parametrize("versioned", [True, False])
def test_a_real_exporters_capsule_is_read_where_the_spec_puts_its_device(drv: Driver, versioned: bool) -> None:
    host = np.zeros(16, np.uint8)
    with pytest.raises(ArgumentError, match="'dstDevice'.*DLPack tensor is on device type 1, not 2"):
        drv.call("cuMemcpyHtoD", 3020)(ClaimsCuda(host, versioned), b"x" * 16, 16)
    assert not host.any()


def test_array_interface_streams_are_synchronised_unless_the_call_runs_on_them() -> None:
    abi = next(a for a in catalog() if a.symbol == "cuMemsetD8Async" and a.stream == "legacy")
    synced: list[int] = []

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    def sync(stream: int) -> int:
        synced.append(stream)
        return 0 if stream != 0x666 else 400

    @ctypes.CFUNCTYPE(ctypes.c_int)
    def memset() -> int:
        return 0

    def lookup(name: str) -> int:
        return int(ctypes.cast(sync, ctypes.c_void_p).value or 0) if name == "cuStreamSynchronize" else 0

    a = np.zeros(16, np.uint8)
    for backend in BACKENDS:
        with pytest.MonkeyPatch.context() as mp:
            use_backend(mp, backend)
            fn = bind(abi, int(ctypes.cast(memset, ctypes.c_void_p).value or 0), guard=Guard("t", lookup))
            unsynced = bind(abi, int(ctypes.cast(memset, ctypes.c_void_p).value or 0))
        synced.clear()
        assert fn(cai_of(a, stream=0x1234), 0, 16, 0x1234) == 0 and synced == []  # the same stream: ordered
        assert fn(cai_of(a, stream=1), 0, 16, 0) == 0 and synced == []  # NULL on a legacy ABI is stream 1
        assert fn(cai_of(a, stream=0x1234), 0, 16, 0x99) == 0 and synced == [0x1234]
        assert fn(cai_of(a), 0, 16, 0x99) == 0 and synced == [0x1234]  # no stream: nothing to wait for
        with pytest.raises(ArgumentError, match="'dstDevice'.*did not synchronise"):
            fn(cai_of(a, stream=0x666), 0, 16, 0)
        with pytest.raises(ArgumentError, match="'dstDevice'.*cannot synchronise"):
            unsynced(cai_of(a, stream=0x1234), 0, 16, 0)


# --- every DEVICE_RANGES row, against a stand-in function (nothing is touched) ----------------------------


@ctypes.CFUNCTYPE(ctypes.c_int)
def _answer_zero() -> int:
    return 0


_ZERO = int(ctypes.cast(_answer_zero, ctypes.c_void_p).value or 0)


def _rows() -> list[tuple[str, int, int]]:
    got = []
    for symbol, rows in sorted(contract.DEVICE_RANGES.items()):
        abis = [a for a in catalog() if a.symbol == symbol and a.stream == "legacy"]
        assert abis, f"DEVICE_RANGES names {symbol}, which the catalog does not have"
        for r in range(len(rows)):
            got.append((symbol, max(a.version for a in abis), r))
    return got


def _args(c: contract.Contract, fill: dict[str, Any]) -> list[Any]:
    args: list[Any] = []
    for s in c.specs:
        if s.name in fill:
            args.append(fill[s.name])
        elif s.kind in (contract.INT, contract.DEVPTR, contract.HANDLE):
            args.append(0)
        elif s.kind == contract.FLOAT:
            args.append(0.0)
        elif s.kind == contract.STRUCT:
            args.append(out(f"struct {s.tag}")[0])
        else:
            args.append(None)
    return args


@pytest.mark.parametrize(("symbol", "version", "row"), _rows())
def test_each_device_range_row_is_checked(symbol: str, version: int, row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    abi = next(a for a in catalog() if a.symbol == symbol and a.version == version and a.stream == "legacy")
    dev, access, factor, counts = contract.DEVICE_RANGES[symbol][row]
    mem = np.zeros(64, np.uint8)
    for backend in BACKENDS:
        use_backend(monkeypatch, backend)
        fn = bind(abi, _ZERO)
        c = contract.Contract(abi, contract.Hints(catalog().ffi_hints), lambda tag: None)
        ones = {n: 1 for n in counts}
        fits = {**ones, counts[-1]: 16 // factor}
        over = {**ones, counts[-1]: 16 // factor + 1}
        obj = CAI(mem.ctypes.data, (16,))
        assert fn(*_args(c, {dev: obj, **fits})) == 0, (symbol, backend)
        with pytest.raises(ArgumentError, match=f"'{counts[-1]}'.*holds 16 bytes"):
            fn(*_args(c, {dev: obj, **over}))
        strided = CAI(mem.ctypes.data, (16,), strides=(2,))
        readonly = CAI(mem.ctypes.data, (16,), readonly=True)
        if access in "wr":
            with pytest.raises(ArgumentError, match=f"'{dev}'.*non-contiguous"):
                fn(*_args(c, {dev: strided, **fits}))
        else:
            assert fn(*_args(c, {dev: strided, **fits})) == 0
        if access == "w":
            with pytest.raises(ArgumentError, match=f"'{dev}'.*read-only"):
                fn(*_args(c, {dev: readonly, **fits}))
        else:
            assert fn(*_args(c, {dev: readonly, **fits})) == 0
        assert fn(*_args(c, {dev: mem.ctypes.data, **over})) == 0  # a plain int: nothing known, passed as given
    assert not mem.any()


# --- hypothesis: objects, extents and counts; both backends agree with the model ----------------------------

FUNCS = [("cuMemsetD8", 3020, "dstDevice", "N", 1, "w"), ("cuMemsetD32", 3020, "dstDevice", "N", 4, "w"),
         ("cuMemcpyHtoD", 3020, "dstDevice", "ByteCount", 1, "w"), ("cuMemcpyDtoH", 3020, "srcDevice", "ByteCount", 1, "r"),
         ("cuMemPrefetchAsync", 8000, "devPtr", "count", 1, "n")]


@st.composite
def _device_objects(draw: Any) -> tuple[Any, int, bool, bool]:
    """(object, bytes from its pointer, contiguous, writable) over a fixed 256-byte host area."""
    item = draw(st.sampled_from([1, 2, 4, 8]))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    step = draw(st.sampled_from([1, 1, 2]))
    strides = None
    if step != 1 or draw(st.booleans()):
        acc, rev = item * step, []
        for d in reversed(shape):
            rev.append(acc)
            acc *= max(d, 1)
        strides = tuple(reversed(rev))
    readonly = draw(st.booleans())
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        span, dense = 0, True
    elif strides is None:
        span, dense = n * item, True
    else:
        span = sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + item
        dense = span == n * item
    kind = draw(st.sampled_from(["cai", "dl", "buffer"]))
    base = _AREA.ctypes.data
    if kind == "cai":
        return CAI(base, shape, f"<u{item}", readonly, strides), span, dense, not readonly
    if kind == "dl":
        el = None if strides is None else tuple(s // item for s in strides)
        return DL(base, shape, 8 * item, strides=el, readonly=readonly), span, dense, not readonly
    return Buffer(base, span), span, True, True


_AREA = np.zeros(4096, np.uint8)


@pytest.fixture(scope="module")
def bound_pairs() -> dict[tuple[str, str], Any]:
    got = {}
    mp = pytest.MonkeyPatch()
    for symbol, version, *_ in FUNCS:
        abi = next(a for a in catalog() if a.symbol == symbol and a.version == version and a.stream == "legacy")
        for backend in BACKENDS:
            use_backend(mp, backend)
            got[(symbol, backend)] = (bind(abi, _ZERO), contract.Contract(abi, contract.Hints(catalog().ffi_hints),
                                                                         lambda tag: None))
    mp.undo()
    return got


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(obj=_device_objects(), func=st.sampled_from(FUNCS), count=st.integers(0, 80))
def test_objects_extents_and_counts_agree_on_both_backends(bound_pairs: dict[tuple[str, str], Any],
                                                           obj: tuple[Any, int, bool, bool], func: Any, count: int) -> None:
    symbol, _, dev, cname, width, access = func
    o, span, dense, writable = obj
    outcomes = []
    for backend in BACKENDS:
        fn, c = bound_pairs[(symbol, backend)]
        try:
            outcomes.append(("rc", fn(*_args(c, {dev: o, cname: count}))))
        except ArgumentError as exc:
            outcomes.append(("refused", str(exc).split(":")[1].split("'")[1]))
    assert outcomes[0] == outcomes[1], outcomes
    refused = (access == "w" and not writable) or (access in "wr" and not dense) or count * width > span
    assert (outcomes[0][0] == "refused") == refused, (outcomes, span, dense, writable, count)
    assert not _AREA.any()


def test_integers_inside_interfaces_are_exact_too(drv: Driver) -> None:
    from .test_calls_lying import Idx, Liar

    htod = drv.call("cuMemcpyHtoD", 3020)
    dev = np.zeros(64, np.uint8)
    base = dev.ctypes.data
    for obj in (CAI(Liar(base), (Liar(16),)), CAI(base, (16,), strides=(Liar(1),)), Buffer(Liar(base), Liar(16)),
                CAI(base, (Liar(4),), "<u4")):
        with pytest.raises(ArgumentError, match="'ByteCount'.*holds 16 bytes"):
            htod(obj, b"\xff" * 64, Liar(17))
        assert htod(obj, b"\x01" * 16, Idx(16)) == 0
    assert dev[:16].all() and not dev[16:].any()
    # the protocols' fields are ints: no bool, no __index__ objects
    for bad in (CAI(base, (Idx(16),)), CAI(base, (True,)), Buffer(base, Idx(16)), CAI(Idx(base)), CAI(base, (16.0,))):
        with pytest.raises(ArgumentError, match="'dstDevice'"):
            htod(bad, b"x", 1)


# --- the compiled backend reads the common forms in C (issue 41: an array costs about its protocol call) -----


class CAIProperty:
    """__cuda_array_interface__ built on each read, as torch and CuPy do."""

    def __init__(self, ptr: int, n: int = 16, readonly: bool = False, stream: int | None = None) -> None:
        self.ptr, self.n, self.readonly, self.stream = ptr, n, readonly, stream

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        d: dict[str, Any] = {"data": (self.ptr, self.readonly), "shape": (self.n,), "typestr": "|u1", "version": 3}
        if self.stream is not None:
            d["stream"] = self.stream
        return d


_SEEN: list[tuple[int, int, int]] = []


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t)
def _record_memset(dst: int, value: int, n: int) -> int:
    _SEEN.append((dst, value, n))
    return 0


def test_compiled_calls_read_valid_arrays_in_c_and_leave_the_rest_to_the_contract(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the Python reading of device objects made to fail, the valid common forms still reach the C function
    with their exact address (read in C), and everything else reaches the contract (which fails here, by design)."""
    use_backend(monkeypatch, "compiled")
    from cuentry.calls import devmem

    abi = next(a for a in catalog() if a.symbol == "cuMemsetD8" and a.version == 3020 and a.stream == "legacy")
    memset = bind(abi, int(ctypes.cast(_record_memset, ctypes.c_void_p).value or 0))
    base = _AREA.ctypes.data

    def python_reading(v: Any, stream: int) -> Any:
        raise RuntimeError("read by the contract")

    monkeypatch.setattr(devmem, "convert", python_reading)
    fast = [(CAI(base, (16,)), base), (CAIProperty(base + 16, stream=1), base + 16), (DL(base + 32, (4,), 32), base + 32),
            (DL(base + 48, (16,), versioned=False), base + 48), (CAI(base, (4, 4), strides=(4, 1)), base),
            (DL(base, (16,), byte_offset=64), base + 64), (CAI(base, (2, 8), strides=(8, 1), stream=None), base)]
    _SEEN.clear()
    for v, (o, at) in enumerate(fast, 1):
        assert memset(o, v, 16) == 0 and _SEEN[-1] == (at, v, 16), (o, _SEEN[-1:])
    slow = [CAI(base, (16,), readonly=True), CAI(base, (8,)), CAIProperty(base, stream=7), CAI(base, (2, 8), strides=(16, 1)),
            CAI(base, (16,), version=1), CAI(base, (16,), mask=(1,)), Buffer(base, 16), CUdeviceptr(base),
            CAI(base + 15, (16,), strides=(-1,))]  # the lowest byte is 15 below its pointer: 1 byte from there
    for o in slow:  # read-only, too short, another stream, gaps, an old version, a mask, the contract's kinds
        with pytest.raises(ArgumentError, match="read by the contract"):
            memset(o, 9, 16)
    assert len(_SEEN) == len(fast)
    with pytest.raises(ArgumentError, match="read by the contract"):  # keywords: the contract's, for objects too
        memset(dstDevice=CAI(base, (16,)), uc=1, N=16)


@st.composite
def _interfaces(draw: Any) -> dict[str, Any]:
    """__cuda_array_interface__ dicts, valid and not, over a 256-byte area."""
    item = draw(st.sampled_from([1, 2, 4, 8, 16]))
    shape = tuple(draw(st.integers(-1, 6)) for _ in range(draw(st.integers(0, 3))))
    d: dict[str, Any] = {
        "version": draw(st.sampled_from([3, 3, 2, 1, 4, True, "3"])),
        "data": draw(st.sampled_from([(_AREA.ctypes.data, False), (_AREA.ctypes.data, True), (_AREA.ctypes.data + 8, False),
                                      (_AREA.ctypes.data, 0), (-1, False), (2**64, False), [_AREA.ctypes.data, False],
                                      (True, False)])),
        "typestr": draw(st.sampled_from([f"<u{item}", f"|i{item}", f">f{item}", "<u0", "<x4", "u4", "<u\u0664", "<u1x",
                                         f"=c{item}"])),
        "shape": draw(st.sampled_from([shape, list(shape), (*shape, 2**63)])),
    }
    if draw(st.booleans()):
        d["strides"] = draw(st.sampled_from([None, tuple(draw(st.integers(-32, 32)) for _ in shape),
                                             tuple(item for _ in shape), (1,) * (len(shape) + 1)]))
    if draw(st.booleans()):
        d["stream"] = draw(st.sampled_from([None, 1, 2, 0, -1, True, 123]))
    if draw(st.booleans()):
        d["mask"] = draw(st.sampled_from([None, (1,)]))
    return d


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(cai=_interfaces(), count=st.integers(0, 300), fn=st.sampled_from(["cuMemsetD8", "cuMemcpyDtoH",
                                                                          "cuMemPrefetchAsync"]))
def test_interfaces_valid_or_not_get_the_same_answer_on_both_backends(bound_pairs: dict[tuple[str, str], Any],
                                                                      cai: dict[str, Any], count: int, fn: str) -> None:
    """The compiled backend's C reading and the contract's agree on every interface: the same result, or the
    same refusal (word for word)."""
    dev, cname = {"cuMemsetD8": ("dstDevice", "N"), "cuMemcpyDtoH": ("srcDevice", "ByteCount"),
                  "cuMemPrefetchAsync": ("devPtr", "count")}[fn]
    outcomes = []
    for backend in BACKENDS:
        o = CAI(0)
        o.__cuda_array_interface__ = cai
        f, c = bound_pairs[(fn, backend)]
        fill = {dev: o, cname: count}
        if fn == "cuMemcpyDtoH":
            fill["dstHost"] = bytearray(300)
        try:
            outcomes.append(("rc", f(*_args(c, fill))))
        except ArgumentError as exc:
            outcomes.append(("refused", str(exc)))
    assert outcomes[0] == outcomes[1], outcomes
    assert not _AREA.any()
