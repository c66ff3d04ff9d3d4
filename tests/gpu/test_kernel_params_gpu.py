"""Issue 32 on a real GPU: kernels launched with tensors as their device-pointer parameters, cuda.core
Buffer/Stream/Device interop, and a DLPack range past the address space.

Run with `python -m pytest -m gpu tests/gpu/test_kernel_params_gpu.py` (and again with `CUENTRY_BACKEND=pure`);
each library is skipped where missing; the saxpy kernel is built at test time by nvcc (a cubin for this
device) or NVRTC (cuda.bindings.nvrtc: PTX), and skipped where neither is present.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cuentry import Driver, kernel_params, out
from cuentry.context import primary_context
from cuentry.errors import ArgumentError

from .test_real_driver import PTX  # add_one(unsigned int *p, unsigned int n): p[i] += 1

pytestmark = pytest.mark.gpu

SAXPY = b"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def _function(real: Driver, image: bytes, name: bytes) -> tuple[int, int]:
    mod, fn = out("CUmodule"), out("CUfunction")
    real.call("cuModuleLoadData", 2000).checked(mod, image)
    real.call("cuModuleGetFunction", 2000).checked(fn, mod[0], name)
    return int(mod[0]), int(fn[0])


def _arch(real: Driver) -> tuple[int, int]:
    major, minor = out("int"), out("int")
    real.call("cuDeviceGetAttribute", 2000).checked(major, 75, 0)  # COMPUTE_CAPABILITY_MAJOR
    real.call("cuDeviceGetAttribute", 2000).checked(minor, 76, 0)  # COMPUTE_CAPABILITY_MINOR
    return int(major[0]), int(minor[0])


def _nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and Path(root, "bin", "nvcc").is_file():
            return str(Path(root, "bin", "nvcc"))
    return None


@pytest.fixture(scope="module")
def saxpy_image(real: Driver, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The saxpy kernel, compiled now: a cubin by nvcc for this device, else PTX by NVRTC."""
    major, minor = _arch(real)
    nvcc = _nvcc()
    if nvcc is not None:
        d = tmp_path_factory.mktemp("saxpy")
        (d / "k.cu").write_bytes(SAXPY)
        got = subprocess.run([nvcc, "-cubin", f"-arch=sm_{major}{minor}", "-o", str(d / "k.cubin"), str(d / "k.cu")],
                             capture_output=True, text=True, timeout=300)
        if got.returncode == 0:
            return (d / "k.cubin").read_bytes()
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        pytest.skip("neither nvcc nor cuda.bindings.nvrtc to build the kernel")
    err, prog = nvrtc.nvrtcCreateProgram(SAXPY, b"k.cu", 0, [], [])
    opts = [f"--gpu-architecture=compute_{major}{minor}".encode()]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        pytest.skip(f"NVRTC could not compile the kernel: {err}")
    err, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    (err,) = nvrtc.nvrtcGetPTX(prog, ptx)
    return ptx


def test_add_one_with_torch_tensors_as_device_pointers(real: Driver, ctx: int, torch: Any) -> None:
    mod, fn = _function(real, PTX, b"add_one")
    launch = real.call("cuLaunchKernel", 4000)
    n = 1000
    t = torch.arange(n, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream()
    params = kernel_params(("CUdeviceptr", t), ("unsigned int", n), stream=stream)  # the tensor itself
    launch.checked(fn, (n + 255) // 256, 1, 1, 256, 1, 1, 0, stream, params, None)
    view = t[500:]  # a view: its own address, as a call argument would take it
    launch.checked(fn, 2, 1, 1, 256, 1, 1, 0, stream, kernel_params(("CUdeviceptr", view), ("unsigned int", 500),
                                                                      stream=stream), None)
    dl = torch.arange(n, dtype=torch.int32, device="cuda")
    launch.checked(fn, 4, 1, 1, 256, 1, 1, 0, stream, kernel_params(("CUdeviceptr", _OnlyDLPack(dl)),
                                                                    ("unsigned int", n), stream=stream), None)
    torch.cuda.synchronize()
    want = torch.arange(n, dtype=torch.int32, device="cuda") + 1
    want[500:] += 1
    assert torch.equal(t, want)
    assert torch.equal(dl, torch.arange(n, dtype=torch.int32, device="cuda") + 1)
    with pytest.raises(ArgumentError, match="host array"):
        kernel_params(("CUdeviceptr", torch.zeros(4, dtype=torch.int32)), ("unsigned int", 4))  # a CPU tensor
    with pytest.raises(ArgumentError, match="host array|__index__|array"):
        kernel_params(("CUdeviceptr", torch.tensor([t.data_ptr()], dtype=torch.int64)))  # its value: not an address
    real.call("cuModuleUnload", 2000).checked(mod)


class _OnlyDLPack:
    """A tensor seen through DLPack alone (no __cuda_array_interface__)."""

    def __init__(self, t: Any) -> None:
        self.t = t

    def __dlpack__(self, **kw: Any) -> Any:
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self) -> Any:
        return self.t.__dlpack_device__()


def test_saxpy_built_now_with_tensor_arguments(real: Driver, ctx: int, torch: Any, saxpy_image: bytes) -> None:
    mod, fn = _function(real, saxpy_image, b"saxpy")
    n = 1 << 16
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    want = 2.5 * x + y
    params = kernel_params(("float", 2.5), ("CUdeviceptr", x), ("CUdeviceptr", y), ("unsigned int", n))
    real.call("cuLaunchKernel", 4000).checked(fn, n // 256, 1, 1, 256, 1, 1, 0, None, params, None)
    real.call("cuCtxSynchronize", 2000).checked()
    assert torch.allclose(y, want)
    real.call("cuModuleUnload", 2000).checked(mod)


def test_saxpy_with_cupy_arrays(real: Driver, ctx: int, cupy: Any, saxpy_image: bytes) -> None:
    mod, fn = _function(real, saxpy_image, b"saxpy")
    n = 4096
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.ones(n, dtype=cupy.float32)
    cupy.cuda.runtime.deviceSynchronize()
    s = cupy.cuda.get_current_stream()
    params = kernel_params(("float", 2.0), ("CUdeviceptr", x), ("CUdeviceptr", y), ("unsigned int", n), stream=s)
    real.call("cuLaunchKernel", 4000).checked(fn, n // 256, 1, 1, 256, 1, 1, 0, s, params, None)
    s.synchronize()
    assert bool((y == 2.0 * cupy.arange(n, dtype=cupy.float32) + 1).all())
    real.call("cuModuleUnload", 2000).checked(mod)


def test_cuda_core_buffer_stream_and_device(real: Driver, ctx: int, core_device: Any, core_stream: Any) -> None:
    n = 1024
    buf = core_device.allocate(4 * n, stream=core_stream)
    real.call("cuMemsetD32Async", 3020).checked(buf, 41, n, core_stream)  # a Buffer and a Stream as arguments
    mod, fn = _function(real, PTX, b"add_one")
    params = kernel_params(("CUdeviceptr", buf), ("unsigned int", n), stream=core_stream)
    real.call("cuLaunchKernel", 4000).checked(fn, n // 256, 1, 1, 256, 1, 1, 0, core_stream, params, None)
    real.call("cuStreamSynchronize", 2000).checked(core_stream)
    back = bytearray(4 * n)
    real.call("cuMemcpyDtoH", 3020).checked(back, buf, 4 * n)
    assert bytes(back) == (42).to_bytes(4, "little") * n
    with pytest.raises(ArgumentError, match="holds 4096 bytes"):
        real.call("cuMemsetD8", 3020)(buf, 0, 4 * n + 1)  # the Buffer's size is its extent
    name = out("char", 256)
    real.call("cuDeviceGetName", 2000).checked(name, 256, core_device)  # a cuda.core Device for a CUdevice
    assert bytes(name[0])
    with primary_context(core_device, driver=real) as pctx:
        assert pctx == ctx  # the same primary context
    buf.close(core_stream)
    real.call("cuModuleUnload", 2000).checked(mod)


def test_a_dlpack_range_past_the_address_space_is_refused_on_the_gpu(real: Driver, ctx: int) -> None:
    from ..test_calls_devmem import DL

    bad = DL(2**64 - 8, (16,), byte_offset=16)  # a kDLCUDA tensor whose data + byte_offset wraps to 8
    with pytest.raises(ArgumentError, match="byte_offset"):
        real.call("cuMemsetD8", 3020)(bad, 0, 16)
    with pytest.raises(ArgumentError, match="byte_offset"):
        kernel_params(("CUdeviceptr", bad))
