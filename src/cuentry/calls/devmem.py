"""Device memory arguments: what a `CUdeviceptr` parameter takes besides an int, and what it states about itself.

One conversion for both backends (the contract calls it for every object that is
not an exact int). Accepted: cuda.bindings `CUdeviceptr` (its `int()`),
`__cuda_array_interface__` v2/v3 objects (torch, CuPy, numba device arrays),
`__dlpack__` objects of a CUDA device kind (`kDLCUDA`, `kDLCUDAManaged`),
cuda.core `Buffer` (its public `.handle` and `.size`), and objects with
`__index__` that are not arrays. Refused: host arrays (`__array_interface__`,
`__array__`, a DLPack host kind), and any array-like taken through `__index__`
(an array's value is never an address). Where the object states its extent, the
answer carries an `Extent` (start, byte length, contiguous, writable, the
interface's stream) that the contract checks against the counts of the call.
"""

from __future__ import annotations

import ctypes

from .. import names
from ..errors import shorten
from . import ffi
from .values import _Sealed, exact_int

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["MAX_NDIM", "POINTER_MAX", "Extent", "Refused", "convert", "is_array_like", "synchroniser"]


POINTER_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_void_p))) - 1
MAX_NDIM = 64


class Refused(Exception):
    """Internal: why an object is not device memory, worded as what was passed (the contract adds what is accepted)."""


class Extent:
    """What a device-memory object says about itself: the bytes it spans, whether densely, whether writable.

    `start`/`nbytes`: the byte range its elements occupy; `contiguous`: no gaps
    inside it (C or Fortran order, any permutation); `stream`: the
    `__cuda_array_interface__` stream to synchronise on (None when none);
    `source`: the protocol it came through.
    """

    __slots__ = ("start", "nbytes", "contiguous", "writable", "stream", "source")

    def __init__(self, start: int, nbytes: int, contiguous: bool, writable: bool, stream: int | None,
                 source: str) -> None:
        self.start = start
        self.nbytes = nbytes
        self.contiguous = contiguous
        self.writable = writable
        self.stream = stream
        self.source = source

    def available(self, address: int) -> int:
        """Bytes from `address` to the end of the object (0 when the address is outside it)."""
        if not self.start <= address <= self.start + self.nbytes:
            return 0
        return self.start + self.nbytes - address


_ARRAY_NAMES = ("__cuda_array_interface__", "__dlpack__", "__dlpack_device__", "__array_interface__", "__array__")


def _has(v: Any, name: str) -> bool:
    """Whether `v` has the protocol attribute `name`, on its type or in its own __dict__ (no property runs)."""
    if hasattr(type(v), name):
        return True
    try:
        own = object.__getattribute__(v, "__dict__")
    except AttributeError:
        return False
    return isinstance(own, dict) and name in own


def is_array_like(v: Any) -> bool:
    """Whether `v` speaks an array protocol (an array's value is never an address)."""
    return any(_has(v, n) for n in _ARRAY_NAMES)


def _is_cuda_core_buffer(v: Any) -> bool:
    return any(c.__name__ == "Buffer" and (c.__module__ or "").startswith("cuda.core") for c in type(v).__mro__)


def _is_bindings_devptr(v: Any) -> bool:
    t = type(v)
    return t.__name__ in ("CUdeviceptr", "CUdeviceptr_v2") and (t.__module__ or "").startswith(
        ("cuda.bindings", "cuda.cuda", "cuda.ccuda"))


def _int_of(v: Any, what: str) -> int:
    """A protocol field: an int as the protocols specify (an int subclass by its stored value; never a bool,
    never an object's __index__)."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise Refused(f"{what} is a {type(v).__name__}, not an int")
    try:
        n = exact_int(v)
    except _Sealed as why:
        raise Refused(f"{what} is {why}") from None
    return n


def _address_int(v: Any, what: str) -> int:
    n = _int_of(v, what)
    if not 0 <= n <= POINTER_MAX:
        raise Refused(f"{what} {n} is outside 0..{POINTER_MAX}")
    return n


def convert(v: Any, stream: int) -> tuple[int, Extent | None, Any]:
    """(address, extent or None, keep-alive or None) of a device-memory object; Refused otherwise.

    `stream`: the stream the call runs on (1 legacy default, 2 per-thread default,
    or a handle), passed to `__dlpack__(stream=...)` as the DLPack protocol asks.
    """
    if _is_bindings_devptr(v):
        try:
            got = int(v)
        except Exception as exc:
            raise Refused(f"a {type(v).__name__} whose int() raised {type(exc).__name__}") from None
        return _address_int(got, "its int()"), None, None
    if _is_cuda_core_buffer(v):
        return _cuda_core(v)
    t = type(v)
    failed: Exception | None = None
    if _has(v, "__cuda_array_interface__"):
        try:
            cai = v.__cuda_array_interface__
        except Exception as exc:  # e.g. a CPU torch tensor: its DLPack device then says what it is
            cai, failed = None, exc
        if cai is not None:
            return _from_cai(cai)
    if _has(v, "__dlpack__") and _has(v, "__dlpack_device__"):
        return _from_dlpack(v, stream)
    if failed is not None:
        raise Refused(f"a {t.__name__} whose __cuda_array_interface__ raised {type(failed).__name__}: "
                      f"{shorten(str(failed))}")
    if is_array_like(v):
        raise Refused(f"a host array ({t.__name__}): its data is in host memory, and an array's value is never "
                      "an address")
    try:
        n = exact_int(v)  # a plain object with __index__ (never an array: see above)
    except _Sealed as why:
        raise Refused(str(why)) from None
    return _address_int(n, f"a {t.__name__}"), None, None


def _cuda_core(v: Any) -> tuple[int, Extent | None, Any]:
    if getattr(v, "is_device_accessible", True) is False:
        raise Refused("a cuda.core Buffer that is not device-accessible")
    handle = v.handle
    if handle is None:
        raise Refused("a cuda.core Buffer without memory (closed)")
    if _is_bindings_devptr(handle):
        handle = int(handle)
    addr = _address_int(handle, "its handle")
    size = _int_of(v.size, "its size")
    if size < 0:
        raise Refused(f"a cuda.core Buffer of size {size}")
    return addr, Extent(addr, size, True, True, None, "cuda.core Buffer"), None


# --- __cuda_array_interface__ -------------------------------------------------------------------


def _from_cai(cai: Any) -> tuple[int, Extent, Any]:
    if not isinstance(cai, dict):
        raise Refused(f"an object whose __cuda_array_interface__ is a {type(cai).__name__}, not a dict")
    version = cai.get("version")
    if type(version) is not int or version not in names.CAI_VERSIONS:
        raise Refused(f"a __cuda_array_interface__ of version {version!r} (read: "
                      f"{', '.join(map(str, names.CAI_VERSIONS))})")
    data = cai.get("data")
    if not (type(data) is tuple and len(data) == 2 and type(data[1]) is bool):
        raise Refused("a __cuda_array_interface__ whose data is not (pointer int, read-only bool)")
    ptr = _address_int(data[0], "its data pointer")
    if cai.get("mask") is not None:
        raise Refused("a masked __cuda_array_interface__ (a mask is not read)")
    itemsize = _itemsize(cai.get("typestr"))
    shape = _ints(cai.get("shape"), "shape", None)
    strides_raw = cai.get("strides")
    strides = None if strides_raw is None else _ints(strides_raw, "strides", len(shape))
    stream = cai.get("stream")
    if stream is not None:
        stream = _int_of(stream, "its stream")
        if stream == 0:
            raise Refused("a __cuda_array_interface__ with stream 0 (the protocol forbids it: 1 is the legacy "
                          "default stream, 2 the per-thread one)")
        if not 0 < stream <= POINTER_MAX:
            raise Refused(f"a __cuda_array_interface__ stream {stream} outside 1..{POINTER_MAX}")
    lo, nbytes, dense = _span(shape, strides, itemsize)
    if not 0 <= ptr + lo <= POINTER_MAX - nbytes:
        raise Refused("a __cuda_array_interface__ whose extent does not fit the address space")
    return ptr, Extent(ptr + lo, nbytes, dense, not data[1], stream, "__cuda_array_interface__"), None


def _itemsize(typestr: Any) -> int:
    if type(typestr) is not str or len(typestr) < 3 or typestr[0] not in "<>|=" or typestr[1] not in "biufcmMV":
        raise Refused(f"a __cuda_array_interface__ typestr {typestr!r} (expected e.g. '<f4')")
    if not typestr[2:].isdigit() or not 0 < int(typestr[2:]) <= 1 << 20:
        raise Refused(f"a __cuda_array_interface__ typestr {typestr!r} with no item size")
    return int(typestr[2:])


def _ints(raw: Any, what: str, length: int | None) -> tuple[int, ...]:
    if type(raw) is not tuple or len(raw) > MAX_NDIM or (length is not None and len(raw) != length):
        raise Refused(f"a __cuda_array_interface__ whose {what} is not a tuple of "
                      f"{length if length is not None else 'at most ' + str(MAX_NDIM)} ints")
    got = tuple(_int_of(x, f"its {what} entry") for x in raw)
    if what == "shape" and any(d < 0 for d in got):
        raise Refused(f"a __cuda_array_interface__ with a negative dimension {got}")
    return got


def _span(shape: tuple[int, ...], strides: tuple[int, ...] | None, itemsize: int) -> tuple[int, int, bool]:
    """(offset of the lowest byte from the data pointer, bytes spanned, dense) of a strided array."""
    n = 1
    for d in shape:
        n *= d
    if n == 0:
        return 0, 0, True
    if strides is None:
        return 0, n * itemsize, True
    lo = sum((d - 1) * s for d, s in zip(shape, strides, strict=True) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides, strict=True) if s > 0) + itemsize
    expected = itemsize
    dense = True
    for d, s in sorted(((d, abs(s)) for d, s in zip(shape, strides, strict=True) if d > 1), key=lambda x: x[1]):
        if s != expected:
            dense = False
            break
        expected *= d
    return lo, hi - lo, dense


# --- DLPack -------------------------------------------------------------------------------------


def _dlpack_types() -> tuple[Any, Any, Any, Any]:
    """(DLManagedTensor, DLManagedTensorVersioned, PyCapsule_IsValid, PyCapsule_GetPointer): made on the first
    DLPack object the contract reads (not at import: a cold start that passes no DLPack object skips them)."""
    if _DL:
        return _DL[0]

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]

    class DLManagedTensor(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    class DLPackVersion(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]

    class DLManagedTensorVersioned(ctypes.Structure):
        _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                    ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

    # A ctypes function type of its own (not ctypes.pythonapi's shared attributes, whose argtypes anyone may set).
    capi = ctypes.pythonapi
    is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_IsValid", capi))
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_GetPointer", capi))
    got = (DLManagedTensor, DLManagedTensorVersioned, is_valid, get_pointer)
    _DL.append(got)
    return _DL[0]


_DL: list[tuple[Any, Any, Any, Any]] = []  # the DLPack layouts, made once (under the GIL: a second maker's is dropped)


def _from_dlpack(v: Any, stream: int) -> tuple[int, Extent, Any]:
    t = type(v).__name__
    try:
        dev = v.__dlpack_device__()
    except Exception as exc:
        raise Refused(f"a {t} whose __dlpack_device__() raised {type(exc).__name__}") from None
    if not (type(dev) is tuple and len(dev) == 2):
        raise Refused(f"a {t} whose __dlpack_device__() is not a (device type, id) pair")
    kind = _int_of(dev[0], "its DLPack device type")
    if kind in names.DLPACK_HOST_KINDS:
        raise Refused(f"a host array ({t} on DLPack device {names.DLPACK_HOST_KINDS[kind]}): its data is in host "
                      "memory")
    if kind not in names.DLPACK_DEVICE_KINDS:
        raise Refused(f"a {t} on DLPack device type {kind}, not a CUDA device")
    managed, versioned, is_valid, get_pointer = _dlpack_types()
    capsule = _export(v, t, stream)
    if is_valid(capsule, names.DLPACK_VERSIONED_CAPSULE):
        m = versioned.from_address(get_pointer(capsule, names.DLPACK_VERSIONED_CAPSULE))
        if m.version.major != 1:
            raise Refused(f"a {t} exported as DLPack {m.version.major}.{m.version.minor} (read: 1.x)")
        tensor, writable = m.dl_tensor, not m.flags & names.DLPACK_FLAG_READ_ONLY
    elif is_valid(capsule, names.DLPACK_CAPSULE):
        tensor = managed.from_address(get_pointer(capsule, names.DLPACK_CAPSULE)).dl_tensor
        writable = True  # the unversioned protocol has no read-only flag (exporters refuse read-only arrays)
    else:
        raise Refused(f"a {t} whose __dlpack__() did not return an unconsumed DLPack capsule")
    if tensor.device.device_type != kind:
        raise Refused(f"a {t} whose DLPack tensor is on device type {tensor.device.device_type}, not {kind}")
    addr, ext = _dl_extent(tensor, writable, t)
    return addr, ext, capsule  # an unconsumed capsule: its destructor gives the tensor back when it is dropped


def _export(v: Any, t: str, stream: int) -> Any:
    try:
        try:
            return v.__dlpack__(stream=stream, max_version=(1, 0))
        except TypeError:  # an exporter older than DLPack 1.0 takes no max_version
            return v.__dlpack__(stream=stream)
    except Exception as exc:
        raise Refused(f"a {t} whose __dlpack__(stream={stream}) raised {type(exc).__name__}: {shorten(str(exc))}") \
            from None


def _dl_extent(tensor: Any, writable: bool, t: str) -> tuple[int, Extent]:
    ndim = int(tensor.ndim)
    if not 0 <= ndim <= MAX_NDIM or (ndim and not tensor.shape):
        raise Refused(f"a {t} whose DLPack tensor has {ndim} dimensions")
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    if any(d < 0 for d in shape):
        raise Refused(f"a {t} whose DLPack shape {shape} has a negative dimension")
    strides = None if not tensor.strides else tuple(int(tensor.strides[i]) for i in range(ndim))
    bits = int(tensor.dtype.bits) * int(tensor.dtype.lanes)
    addr = int(tensor.data or 0) + int(tensor.byte_offset)
    if addr > POINTER_MAX:  # data + byte_offset past the address space: never wrapped to a small address
        raise Refused(f"a {t} whose DLPack data pointer plus byte_offset ({addr:#x}) does not fit the address space")
    if bits % 8:
        n = 1
        for d in shape:
            n *= d
        if strides is not None and n > 1 and _span(shape, strides, 1)[1] != n:
            raise Refused(f"a {t} of a {bits}-bit type with strides (not read)")
        return addr, Extent(addr, (n * bits + 7) // 8, True, writable, None, "DLPack")
    item = bits // 8
    lo, nbytes, dense = _span(shape, None if strides is None else tuple(s * item for s in strides), item)
    if not 0 <= addr + lo <= POINTER_MAX - nbytes:
        raise Refused(f"a {t} whose DLPack extent does not fit the address space")
    return addr, Extent(addr + lo, nbytes, dense, writable, None, "DLPack")


# --- synchronising an interface's stream ---------------------------------------------------------


def synchroniser(guard: ffi.Guard) -> Callable[[int], int] | None:
    """`sync(stream) -> CUresult`: cuStreamSynchronize of the guard's library (bound on first use, called
    inside the guard), or None where the library cannot be asked (a guard without a library)."""
    lookup = guard.lookup
    if lookup is None:
        return None
    made: list[Any] = []

    def sync(stream: int) -> int:
        if not made:
            addr = lookup("cuStreamSynchronize")
            if not addr:
                return names.CUDA_ERROR_NOT_FOUND
            made.append(ffi.function_at(addr, ctypes.c_int, [ctypes.c_void_p]))
        guard.enter("cuStreamSynchronize")
        try:
            return int(made[0](stream))
        finally:
            guard.leave()

    return sync
