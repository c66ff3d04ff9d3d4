"""Issue 32.1: one conversion per C type, and cuda.core-like objects on the fake driver (no GPU).

A `CUdeviceptr` in `kernel_params` accepts and refuses exactly what a `CUdeviceptr` call argument does, and
keeps what it took alive with the parameter block; cuda.core-like `Buffer`, `Stream` and `Device` objects
(duck-typed here: cuda.core is never imported) work wherever a device pointer, a stream or a device is; the
fake driver's allocations are real ranges it answers `cuPointerGetAttribute` about.
"""

from __future__ import annotations

import ctypes
import gc
import weakref
from typing import Any

import numpy as np
import pytest

from cuentry import Driver, kernel_params, out
from cuentry.context import primary_context
from cuentry.errors import ArgumentError, UsageError

from .test_calls_devmem import CAI, DL, Buffer, CpuTensor, CUdeviceptr, GradTensor, Hostile, HostTensor, Plain, cai_of

# CUpointer_attribute values (cuda.h)
CONTEXT, MEMORY_TYPE, DEVICE_ORDINAL, RANGE_START, RANGE_SIZE = 1, 2, 9, 11, 12


class Stream:
    """A cuda.core-like Stream: the `__cuda_stream__` protocol (a method returning (0, handle))."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)


class Device:
    """A cuda.core-like Device: an int `device_id` (and a `handle`, as cuda.core has)."""

    def __init__(self, device_id: Any, handle: Any = None) -> None:
        self.device_id = device_id
        self.handle = device_id if handle is None else handle


def _refused_kinds(host: np.ndarray) -> list[tuple[Any, str]]:
    """Everything a CUdeviceptr argument refuses, with a word of its error (test_calls_devmem's list)."""
    return [(host, "host array"), (np.uint64(host.ctypes.data), "host array"),
            (HostTensor(host.ctypes.data), "host array.*kDLCPU"), (DL(host.ctypes.data, kind=1), "kDLCPU"),
            (DL(host.ctypes.data, kind=3), "kDLCUDAHost"), (DL(host.ctypes.data, kind=4), "not a CUDA"),
            (True, "bool"), (None, "None"), (1.0, "1.0"), ("0x10", "0x10"), (Plain(True), "bool"),
            (Plain("1"), "str"), (CAI(host.ctypes.data, stream=0), "stream 0"),
            (CAI(host.ctypes.data, version=1), "version 1"), (CAI(True), "bool"),
            (CAI(host.ctypes.data, typestr="|O8"), "typestr"), (CAI(host.ctypes.data, shape=(-1,)), "negative"),
            (CAI(host.ctypes.data, mask=object()), "mask"), (CAI(2**64 - 4), "address space"),
            (Buffer(host.ctypes.data, -1), "size"), (CpuTensor(host.ctypes.data), "host array.*kDLCPU"),
            (GradTensor(), "raised RuntimeError: requires grad"), (Hostile(), "failed while being read"),
            (DL(2**64 - 8, (16,), byte_offset=16), "byte_offset"), (-1, "outside"), (2**64, "outside")]


def test_kernel_params_refuse_every_kind_a_devptr_argument_refuses(drv: Driver) -> None:
    htod = drv.call("cuMemcpyHtoD", 3020)
    host = np.zeros(16, np.uint8)
    for bad, why in _refused_kinds(host):
        with pytest.raises(ArgumentError, match=f"'dstDevice'.*{why}"):
            htod(bad, b"x" * 16, 16)
        with pytest.raises(ArgumentError, match=f"kernel_params: value 2 \\(CUdeviceptr\\).*{why}"):
            kernel_params(("int", 1), ("CUdeviceptr", bad))
        o = out("CUdeviceptr")
        with pytest.raises(ArgumentError, match=why):
            o[0] = bad
        assert o[0] == 0  # nothing stored
    assert not host.any()


def test_a_dlpack_range_past_the_address_space_is_refused_not_wrapped() -> None:
    # data + byte_offset = 2**64 + 8: wrapped, it would read as address 8 with 16 bytes after it
    with pytest.raises(ArgumentError, match="byte_offset.*does not fit"):
        kernel_params(("CUdeviceptr", DL(2**64 - 8, (16,), byte_offset=16)))
    assert kernel_params(("CUdeviceptr", DL(4096, (16,), byte_offset=16)))  # a range that fits: accepted


def test_kernel_params_take_device_arrays_at_the_address_a_call_would_pass(drv: Driver) -> None:
    dev = np.zeros(16, np.uint8)
    for make in (lambda a: a.ctypes.data, lambda a: cai_of(a), lambda a: DL(a.ctypes.data),
                 lambda a: DL(a.ctypes.data, versioned=False), lambda a: Buffer(a.ctypes.data, 16),
                 lambda a: Buffer(CUdeviceptr(a.ctypes.data), 16), lambda a: CUdeviceptr(a.ctypes.data),
                 lambda a: Plain(a.ctypes.data), lambda a: cai_of(a[4:]), lambda a: DL(a.ctypes.data, byte_offset=4)):
        obj = make(dev)
        kp = kernel_params(("CUdeviceptr", obj), ("unsigned int", 16))
        addr = ctypes.c_uint64.from_address(kp[0]).value
        want = dev.ctypes.data + (4 if getattr(obj, "byte_offset", 0) or
                                  (isinstance(obj, CAI) and obj.__cuda_array_interface__["shape"] == (12,)) else 0)
        assert addr == want, obj
        assert ctypes.c_uint.from_address(kp[1]).value == 16
        # the same object, as a call argument, reaches the same memory
        assert drv.call("cuMemcpyHtoD", 3020)(make(dev), b"\x05" * 4, 4) == 0
        assert ctypes.string_at(addr, 4) == b"\x05" * 4  # where the kernel parameter points
        dev[:] = 0


def test_the_parameter_block_keeps_the_objects_it_took_alive() -> None:
    dev = np.zeros(16, np.uint8)
    for make in (lambda: cai_of(dev), lambda: DL(dev.ctypes.data), lambda: Buffer(dev.ctypes.data, 16)):
        obj = make()
        held = weakref.ref(obj)
        kp = kernel_params(("CUdeviceptr", obj))
        del obj
        gc.collect()
        assert held() is not None  # kept with the block
        del kp
        gc.collect()
        assert held() is None  # and only by it


def test_a_stored_value_replaced_drops_what_it_kept() -> None:
    dev = np.zeros(16, np.uint8)
    obj = cai_of(dev)
    held = weakref.ref(obj)
    o = out("CUdeviceptr")
    o[0] = obj
    del obj
    gc.collect()
    assert held() is not None and o[0] == dev.ctypes.data
    o[0] = 0
    gc.collect()
    assert held() is None


def test_other_types_convert_as_their_call_arguments_do() -> None:
    with pytest.raises(ArgumentError, match="outside the range of unsigned int"):
        kernel_params(("unsigned int", -1))
    with pytest.raises(ArgumentError, match="bool"):
        kernel_params(("int", True))
    with pytest.raises(ArgumentError, match="float"):
        kernel_params(("float", 1e300))
    with pytest.raises(ArgumentError, match="CUstream"):
        kernel_params(("CUstream", "default"))
    kp = kernel_params(("CUstream", Stream(0x1234)), ("CUstream", None), ("CUdevice", Device(0)),
                       ("double", 2.5), ("unsigned char", 255))
    assert [ctypes.c_uint64.from_address(kp[i]).value for i in (0, 1)] == [0x1234, 0]
    assert ctypes.c_int.from_address(kp[2]).value == 0 and ctypes.c_double.from_address(kp[3]).value == 2.5
    assert ctypes.c_ubyte.from_address(kp[4]).value == 255


def test_a_cuda_array_interface_stream_must_be_the_launchs(drv: Driver) -> None:
    dev = np.zeros(16, np.uint8)
    h = out("CUstream")
    assert drv.call("cuStreamCreate", 2000)(h, 0) == 0
    on_stream = CAI(dev.ctypes.data, (16,), stream=h[0])
    with pytest.raises(ArgumentError, match="names stream"):
        kernel_params(("CUdeviceptr", on_stream))  # the legacy default stream is not the array's
    kp = kernel_params(("CUdeviceptr", on_stream), stream=Stream(h[0]))
    assert ctypes.c_uint64.from_address(kp[0]).value == dev.ctypes.data
    d = DL(dev.ctypes.data)
    kernel_params(("CUdeviceptr", d), stream=Stream(h[0]))
    assert d.streams == [h[0]]  # exported for the launch's stream, as the DLPack protocol asks
    with pytest.raises(ArgumentError, match="kernel_params: stream"):
        kernel_params(("int", 1), stream="s")
    assert drv.call("cuStreamDestroy", 4000)(h[0]) == 0


# --- the fake driver as cuda.core would use it -------------------------------------------------------------


def test_fake_allocations_are_ranges_the_driver_answers_about(drv: Driver) -> None:
    alloc, free = drv.call("cuMemAlloc", 3020), drv.call("cuMemFree", 3020)
    attr = drv.call("cuPointerGetAttribute", 4000)
    d = out("CUdeviceptr")
    assert alloc(d, 64) == 0
    buf = Buffer(d[0], 64)  # cuda.core-like Buffer over the allocation
    start, size, kind, ordinal = out("CUdeviceptr"), out("size_t"), out("unsigned int"), out("int")
    assert attr(start, RANGE_START, buf) == 0 and start[0] == d[0]
    assert attr(size, RANGE_SIZE, Buffer(d[0] + 16, 48)) == 0 and size[0] == 64
    assert attr(kind, MEMORY_TYPE, buf) == 0 and kind[0] == 2  # CU_MEMORYTYPE_DEVICE
    assert attr(ordinal, DEVICE_ORDINAL, d[0] + 63) == 0 and ordinal[0] == 0
    ctx, cur = out("CUcontext"), out("CUcontext")
    assert attr(ctx, CONTEXT, buf) == 0 and drv.call("cuCtxGetCurrent", 4000)(cur) == 0 and ctx[0] == cur[0]
    assert attr(size, RANGE_SIZE, d[0] + 64) == 1  # one past the end: not the allocation's
    host = np.zeros(8, np.uint8)
    assert attr(size, RANGE_SIZE, host.ctypes.data) == 1  # memory the driver did not allocate
    base, n = out("CUdeviceptr"), out("size_t")
    assert drv.call("cuMemGetAddressRange", 3020)(base, n, d[0] + 10) == 0 and (base[0], n[0]) == (d[0], 64)
    # a Buffer's extent is checked like any device array's, and its memory is really written
    htod, dtoh = drv.call("cuMemcpyHtoD", 3020), drv.call("cuMemcpyDtoH", 3020)
    assert htod(buf, bytes(range(64)), 64) == 0
    back = bytearray(64)
    assert dtoh(back, buf, 64) == 0 and bytes(back) == bytes(range(64))
    with pytest.raises(ArgumentError, match="holds 64 bytes"):
        htod(buf, bytes(65), 65)
    assert free(buf) == 0
    assert attr(size, RANGE_SIZE, d[0]) == 1 and free(d[0]) == 1  # freed: unknown, and not freed twice


def test_fake_streams_are_created_checked_and_destroyed(drv: Driver) -> None:
    create, prio = drv.call("cuStreamCreate", 2000), drv.call("cuStreamCreateWithPriority", 5050)
    sync, query, destroy = drv.call("cuStreamSynchronize", 2000), drv.call("cuStreamQuery", 2000), \
        drv.call("cuStreamDestroy", 4000)
    a, b = out("CUstream"), out("CUstream")
    assert create(a, 0) == 0 and prio(b, 1, -1) == 0 and a[0] and b[0] and a[0] != b[0]
    assert create(out("CUstream"), 4) == 1  # unknown flags
    s = Stream(a[0])
    assert sync(s) == 0 and query(s) == 0 and sync(None) == 0 and sync(Stream(2)) == 0
    assert destroy(s) == 0 and sync(s) == 400 and destroy(a[0]) == 400  # destroyed: an invalid handle
    assert sync(Stream(0xDEAD0)) == 400  # never created
    assert destroy(b[0]) == 0


def test_a_cuda_core_like_device_is_a_device_everywhere(drv: Driver) -> None:
    name = out("char", 64)
    assert drv.call("cuDeviceGetName", 2000)(name, 64, Device(0)) == 0 and bytes(name[0])
    uuid = out("CUuuid")
    assert drv.call("cuDeviceGetUuid", 11040)(uuid, Device(0)) == 0
    with primary_context(Device(0), driver=drv) as ctx:
        assert ctx
    for bad in (Device(True), Device("0"), Device(-1), Device(0, handle=object())):
        with pytest.raises(ArgumentError, match="'dev'"):
            drv.call("cuDeviceGetName", 2000)(name, 64, bad)
        with pytest.raises(UsageError, match="cuda.core Device"):
            with primary_context(bad, driver=drv):
                pass
