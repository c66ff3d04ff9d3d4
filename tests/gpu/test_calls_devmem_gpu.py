"""Device memory objects as CUdeviceptr arguments on a real GPU (issue 22): what is written, what is refused.

torch CUDA/CPU tensors, views, 1-element tensors, CuPy, numba-cuda and cuda.core objects; each framework
is skipped where it is missing. Every refused case is built so that a wrong acceptance would still stay
inside memory the test owns (a slice of a larger allocation), and the test checks that memory afterwards.

Run: `python -m pytest -m gpu tests/gpu/test_calls_devmem_gpu.py`, then again with `CUENTRY_BACKEND=pure`.
"""

from __future__ import annotations

from typing import Any

import pytest

from cuentry import Driver
from cuentry.errors import ArgumentError

pytestmark = pytest.mark.gpu

N = 4096


class OnlyDLPack:
    """Hides every protocol of ``obj`` but DLPack."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __dlpack__(self, stream: Any = None, max_version: Any = None) -> Any:
        if max_version is None:
            return self.obj.__dlpack__(stream=stream)
        return self.obj.__dlpack__(stream=stream, max_version=max_version)

    def __dlpack_device__(self) -> Any:
        return self.obj.__dlpack_device__()


class ReadOnly:
    """The array interface of ``obj`` with its read-only flag set."""

    def __init__(self, obj: Any) -> None:
        cai = dict(obj.__cuda_array_interface__)
        cai["data"] = (cai["data"][0], True)
        self.__cuda_array_interface__ = cai


def _sync(real: Driver) -> None:
    real.call("cuCtxSynchronize", 2000).checked()


def test_torch_tensors_views_and_one_element_tensors(real: Driver, ctx: int, torch: Any) -> None:
    memset = real.call("cuMemsetD8", 3020)
    t = torch.zeros(N, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    memset.checked(t, 5, N)
    _sync(real)
    assert int(t.sum().item()) == 5 * N
    big = torch.zeros(1 << 21, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    small = big[:16]
    with pytest.raises(ArgumentError, match="'N'.*holds 16 bytes"):
        memset(small, 7, 1 << 20)  # a megabyte into a 16-byte tensor
    with pytest.raises(ArgumentError, match="'dstDevice'.*non-contiguous"):
        memset(big[:64].view(8, 8)[:, ::2], 7, 32)
    with pytest.raises(ArgumentError, match="'dstDevice'.*read-only"):
        memset(ReadOnly(small), 7, 16)
    _sync(real)
    assert int(big.sum().item()) == 0
    one = torch.zeros(1, dtype=torch.int64, device="cuda")  # its memory, never its value
    torch.cuda.synchronize()
    memset.checked(one, 1, 8)
    _sync(real)
    assert int(one.item()) == 0x0101010101010101
    cpu = torch.tensor([int(big.data_ptr())], dtype=torch.int64)  # a host tensor holding an address
    with pytest.raises(ArgumentError, match="'dstDevice'.*host"):
        memset(cpu, 7, 16)
    with pytest.raises(ArgumentError, match="'dstDevice'.*host"):
        memset(OnlyDLPack(cpu), 7, 16)
    _sync(real)
    assert int(big.sum().item()) == 0


def test_torch_through_dlpack(real: Driver, ctx: int, torch: Any) -> None:
    t = torch.zeros(N, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    real.call("cuMemsetD8", 3020).checked(OnlyDLPack(t), 6, N)
    _sync(real)
    assert int(t.sum().item()) == 6 * N
    with pytest.raises(ArgumentError, match="'N'"):
        real.call("cuMemsetD8", 3020)(OnlyDLPack(t[:16]), 6, 17)
    back = bytearray(N)
    real.call("cuMemcpyDtoH", 3020).checked(back, OnlyDLPack(t), N)
    assert back == b"\x06" * N


def test_cupy_arrays_views_and_dlpack(real: Driver, ctx: int, cupy: Any) -> None:
    a = cupy.zeros(N, dtype=cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    real.call("cuMemsetD8", 3020).checked(a, 3, N)
    _sync(real)
    assert int(a.sum()) == 3 * N
    b = cupy.zeros(64, dtype=cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    with pytest.raises(ArgumentError, match="'dstDevice'.*non-contiguous"):
        real.call("cuMemsetD8", 3020)(b[::2], 1, 32)
    with pytest.raises(ArgumentError, match="'N'"):
        real.call("cuMemsetD8", 3020)(b[:16], 1, 17)
    real.call("cuMemsetD8", 3020).checked(OnlyDLPack(b[:16]), 2, 16)
    _sync(real)
    assert int(b.sum()) == 2 * 16
    with pytest.raises(ArgumentError, match="'dstDevice'.*host"):
        real.call("cuMemsetD8", 3020)(cupy.asnumpy(b), 1, 16)


def test_numba_device_arrays(real: Driver, ctx: int) -> None:
    numba_cuda = pytest.importorskip("numba.cuda")
    np = pytest.importorskip("numpy")
    if not numba_cuda.is_available():
        pytest.skip("numba without a usable GPU")
    d = numba_cuda.device_array(N, dtype=np.uint8)
    numba_cuda.synchronize()
    real.call("cuMemsetD8", 3020).checked(d, 4, N)
    _sync(real)
    assert int(d.copy_to_host().sum()) == 4 * N
    with pytest.raises(ArgumentError, match="'N'"):
        real.call("cuMemsetD8", 3020)(d[:16], 4, 17)


def test_cuda_core_buffers(real: Driver, ctx: int, core_device: Any, core_stream: Any) -> None:
    big = core_device.allocate(1 << 21, stream=core_stream)
    core_stream.sync()
    real.call("cuMemsetD8", 3020).checked(big, 0, 1 << 21)  # the Buffer itself: its handle and size
    _sync(real)
    with pytest.raises(ArgumentError, match="'N'"):
        real.call("cuMemsetD8", 3020)(big, 9, (1 << 21) + 1)
    back = bytearray(1 << 21)
    real.call("cuMemcpyDtoH", 3020).checked(back, big, 1 << 21)
    assert not any(back)
    big.close(core_stream)
