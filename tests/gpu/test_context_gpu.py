"""primary_context on a real driver: current in the block, the previous context back after, memory works.

Run with `python -m pytest -m gpu tests/gpu/test_context_gpu.py` on a machine with a GPU. Each test runs in a
fresh thread, which starts with no current context (the session's `ctx` fixture makes one current on the main
thread only).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from cuentry import Driver, out
from cuentry.context import primary_context
from cuentry.errors import CudaError

pytestmark = pytest.mark.gpu


def _in_thread(fn: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    assert not t.is_alive(), "primary_context hung"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _current(d: Driver) -> int:
    c = out("CUcontext")
    d.call("cuCtxGetCurrent", 4000).checked(c)
    return int(c[0] or 0)


def test_memory_calls_work_only_inside_the_block(real: Driver) -> None:
    def body() -> tuple[int, int, int]:
        before = _current(real)
        ptr = out("CUdeviceptr")
        with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_CONTEXT"):
            real.call("cuMemAlloc", 3020).checked(ptr, 1 << 20)
        with primary_context(0, driver=real) as ctx:
            inside = _current(real)
            real.call("cuMemAlloc", 3020).checked(ptr, 1 << 20)
            real.call("cuMemFree", 3020).checked(ptr[0])
            assert inside == ctx != 0
        return before, inside, _current(real)

    before, inside, after = _in_thread(body)
    assert before == 0 and inside != 0 and after == 0


def test_it_is_the_runtime_s_primary_context(real: Driver) -> None:
    """The same context cuDevicePrimaryCtxRetain gives anyone else (CuPy, PyTorch, the runtime)."""
    def body() -> tuple[int, int]:
        c = out("CUcontext")
        real.call("cuDevicePrimaryCtxRetain", 7000).checked(c, 0)
        try:
            with primary_context(0, driver=real) as ctx:
                return ctx, int(c[0])
        finally:
            real.call("cuDevicePrimaryCtxRelease", 11000).checked(0)

    ctx, retained = _in_thread(body)
    assert ctx == retained


def test_nested_and_raising_blocks_restore_the_previous_context(real: Driver) -> None:
    def body() -> list[int]:
        seen = []
        with primary_context(0, driver=real) as outer:
            with pytest.raises(RuntimeError), primary_context(0, driver=real):
                raise RuntimeError("boom")
            seen.append(int(_current(real) == outer))
        seen.append(_current(real))
        return seen

    assert _in_thread(body) == [1, 0]
