"""Typed calls taking other libraries' objects on a real GPU: cuda.bindings, cuda.core, torch, cupy (issue 11).

Run with `python -m pytest -m gpu tests/gpu` on a machine with a GPU (each library is skipped where missing),
on both backends: add `CUENTRY_BACKEND=pure` for the second run.
"""

from __future__ import annotations

from typing import Any

import pytest

from cuentry import Driver
from cuentry.errors import ArgumentError

pytestmark = pytest.mark.gpu

N = 4096


def _fill_and_read(real: Driver, dptr: Any, value: int, n: int = N) -> bytes:
    """cuMemsetD8 then cuMemcpyDtoH through cuentry, with ``dptr`` as the foreign object."""
    real.call("cuMemsetD8", 3020).checked(dptr, value, n)
    real.call("cuCtxSynchronize", 2000).checked()
    back = bytearray(n)
    real.call("cuMemcpyDtoH", 3020).checked(back, dptr, n)
    return bytes(back)


def test_cuda_bindings_handles_and_device_pointers(real: Driver, ctx: int) -> None:
    cb = pytest.importorskip("cuda.bindings.driver")
    err, stream = cb.cuStreamCreate(0)
    assert int(err) == 0
    err, event = cb.cuEventCreate(0)
    assert int(err) == 0
    err, dptr = cb.cuMemAlloc(N)
    assert int(err) == 0
    try:
        real.call("cuEventRecord", 2000).checked(event, stream)  # CUevent, CUstream objects
        real.call("cuStreamSynchronize", 2000).checked(stream)
        assert _fill_and_read(real, dptr, 7) == b"\x07" * N  # a cuda.bindings CUdeviceptr
        with pytest.raises(ArgumentError, match="'hEvent'"):
            real.call("cuEventRecord", 2000)(stream, stream)  # a CUstream is not a CUevent
        with pytest.raises(ArgumentError, match="'hStream'"):
            real.call("cuStreamSynchronize", 2000)(dptr)
    finally:
        cb.cuMemFree(dptr)
        cb.cuEventDestroy(event)
        cb.cuStreamDestroy(stream)


def test_cuda_core_stream_and_buffer(real: Driver, ctx: int, core_device: Any, core_stream: Any) -> None:
    buf = core_device.allocate(N, stream=core_stream)
    core_stream.sync()
    real.call("cuStreamSynchronize", 2000).checked(core_stream)  # __cuda_stream__
    assert _fill_and_read(real, buf.handle, 9) == b"\x09" * N  # its handle: a cuda.bindings CUdeviceptr
    buf.close(core_stream)


def test_torch_streams_and_tensors(real: Driver, ctx: int, torch: Any) -> None:
    s = torch.cuda.Stream()
    real.call("cuStreamSynchronize", 2000).checked(s)  # the stream object itself
    real.call("cuStreamSynchronize", 2000).checked(torch.cuda.current_stream().cuda_stream)  # its int
    t = torch.zeros(N, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    assert _fill_and_read(real, t, 5) == b"\x05" * N  # __cuda_array_interface__
    assert int(t.sum().item()) == 5 * N


def test_cupy_streams_and_arrays(real: Driver, ctx: int, cupy: Any) -> None:
    s = cupy.cuda.Stream(non_blocking=True)
    real.call("cuStreamSynchronize", 2000).checked(s)
    real.call("cuStreamSynchronize", 2000).checked(s.ptr)
    a = cupy.zeros(N, dtype=cupy.uint8)
    cupy.cuda.runtime.deviceSynchronize()
    assert _fill_and_read(real, a, 3) == b"\x03" * N
    assert int(a.sum()) == 3 * N


def test_floats_never_pass_as_handles_on_the_gpu(real: Driver, ctx: int) -> None:
    with pytest.raises(ArgumentError, match="'hStream'"):
        real.call("cuStreamSynchronize", 2000)(0.0)
