"""A current CUDA context for the calling thread: the device's primary context, retained and released.

Memory, stream and module calls need a context current on the calling thread; without one the driver
answers CUDA_ERROR_INVALID_CONTEXT (201). [primary_context][cuentry.context.primary_context] is the
shortest correct way to get one:

```python
from cuentry import Table, out, required
from cuentry.context import primary_context

lib = Table("mylib", [required("cuMemAlloc", 3020), required("cuMemFree", 3020)], stream="legacy")
with primary_context(0):          # device 0's primary context, current on this thread
    ptr = out("CUdeviceptr")
    lib.cuMemAlloc.checked(ptr, 1 << 20)
    lib.cuMemFree.checked(ptr[0])
```

It uses only the public [Driver][cuentry.driver.Driver] API, through pinned ABIs:
`cuInit@2000`, `cuDeviceGet@2000`, `cuDevicePrimaryCtxRetain@7000`, `cuCtxPushCurrent@4000`, and on
exit `cuCtxPopCurrent@4000` and `cuDevicePrimaryCtxRelease@11000` (`@7000` on drivers older than 11.0).
The primary context is the one the CUDA runtime, CuPy, PyTorch and cuda.bindings share, so code that
mixes them sees the same context.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from .driver import Driver

__all__ = ["primary_context"]

_MAX_DEVICE = (1 << 31) - 1
# The ABIs asked for (the numbers of their PFN typedefs), in one place.
_INIT, _DEVICE_GET, _RETAIN, _PUSH, _POP = 2000, 2000, 7000, 4000, 4000
_RELEASE, _RELEASE_OLD = 11000, 7000


def _device_ordinal(device: object) -> int:
    if type(device) is not int:  # not a bool, not an int subclass that could lie about its value
        from .calls.contract import device_of

        dev = device_of(device)  # a cuda.core Device: its ordinal
        if dev is None:
            raise UsageError(f"primary_context: the device must be an int ordinal or a cuda.core Device, not "
                             f"{type(device).__name__}", hint="pass the device's ordinal, e.g. primary_context(0)")
        return dev[0]
    if not 0 <= device <= _MAX_DEVICE:
        raise UsageError(f"primary_context: device ordinal {device} is out of range",
                         hint="pass 0 for the first device; `cuentry doctor` shows the driver")
    return device


@contextlib.contextmanager
def primary_context(device: int | Any = 0, *, driver: Driver | None = None) -> Iterator[int]:
    """Make `device`'s primary context current on this thread for the `with` block.

    On entry: `cuInit(0)`, `cuDeviceGet`, `cuDevicePrimaryCtxRetain`, `cuCtxPushCurrent`. On exit
    (also when the block raises): `cuCtxPopCurrent`, then `cuDevicePrimaryCtxRelease`, so the
    context that was current before the block is current again. Blocks nest.

    Args:
        device: the device ordinal (an `int`, 0 for the first device) or a cuda.core `Device`.
        driver: the driver to use; default: the process-wide
            [default_driver][cuentry.driver.default_driver], the one a
            [Table][cuentry.table.Table] resolves through.

    Yields:
        The context's handle (a `CUcontext`, as an int).

    Raises:
        UsageError: `device` is not an int in range.
        CudaError: a driver call failed (no device, an invalid ordinal, the toolkit's stub).
    """
    from .calls import out
    from .driver import default_driver

    ordinal = _device_ordinal(device)
    drv = default_driver() if driver is None else driver
    drv.call("cuInit", _INIT).checked(0)
    dev = out("CUdevice")
    drv.call("cuDeviceGet", _DEVICE_GET).checked(dev, ordinal)
    handle = out("CUcontext")
    drv.call("cuDevicePrimaryCtxRetain", _RETAIN).checked(handle, dev[0])
    release_version = _RELEASE if (drv.driver_version or 0) >= _RELEASE else _RELEASE_OLD
    release = drv.call("cuDevicePrimaryCtxRelease", release_version)
    ctx = int(handle[0] or 0)
    try:
        drv.call("cuCtxPushCurrent", _PUSH).checked(ctx)
    except BaseException:
        release.checked(dev[0])
        raise
    try:
        yield ctx
    finally:
        try:
            popped = out("CUcontext")
            drv.call("cuCtxPopCurrent", _POP).checked(popped)
        finally:
            release.checked(dev[0])
