"""Each crash class of issue 11, in a fresh process (a signal fails the test), on both backends.

The cases are what used to crash, corrupt memory or silently truncate: each must
now end in the stated cuentry error, the same on the pure and compiled backends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

SCRIPT = r"""
import array, os, sys
import cuentry
from cuentry import Driver, out, address
from cuentry.calls import choice
case = sys.argv[2]
for backend in ("pure", "auto"):
    choice.select(backend)
    d = Driver.load(sys.argv[1])
    call = d.call
    class S:
        def __init__(self, a): self.a = a
        def __cuda_stream__(self): return self.a
    try:
        rc = eval(case)
        print(backend, "ok", rc)
    except Exception as exc:
        print(backend, type(exc).__name__, str(exc).replace("\n", " ")[:300])
    d.close()
"""

CASES: dict[str, tuple[str, str]] = {
    # integers truncated to the C width
    "cuInit(2**32)": ('call("cuInit", 2000)(2**32)', "ArgumentRangeError"),
    "attribute 2**32+16": ('call("cuDeviceGetAttribute", 2000)(out("int"), 2**32 + 16, 0)', "ArgumentRangeError"),
    # output pointers given what cannot be written, or too little
    "str output": ('call("cuDeviceGetAttribute", 2000)("abcdefgh", 16, 0)', "ArgumentError"),
    "bytes output": ('call("cuDeviceGetName", 2000)(b"x" * 64, 64, 0)', "ArgumentError"),
    "read-only output": ('call("cuDeviceGetName", 2000)(memoryview(bytearray(64)).toreadonly(), 64, 0)',
                         "ArgumentError"),
    "object-dtype output": ('call("cuDeviceGetAttribute", 2000)(__import__("numpy").zeros(1, dtype=object), 16, 0)',
                            "ArgumentError"),
    "wrong itemsize": ('call("cuCtxGetCurrent", 4000)(array.array("i", [0]))', "ArgumentError"),
    "short char buffer": ('call("cuDeviceGetName", 2000)(out("char", 4), 256, 0)', "ArgumentError"),
    "short copy buffer": ('call("cuMemcpyDtoH", 3020)(bytearray(4), 0, 1 << 20)', "ArgumentError"),
    "int for char *": ('call("cuDeviceGetName", 2000)(12345, 4, 0)', "ArgumentError"),
    "int for an output pointer": ('call("cuCtxGetCurrent", 4000)(0x1000)', "ArgumentError"),
    # pointers and handles out of range, floats, broken stream protocol
    "handle -1": ('call("cuCtxSetCurrent", 4000)(-1)', "ArgumentRangeError"),
    "handle 2**64+8": ('call("cuCtxSetCurrent", 4000)(2**64 + 8)', "ArgumentRangeError"),
    "float handle": ('call("cuCtxSetCurrent", 4000)(1.9)', "ArgumentError"),
    "stream handle str": ('call("cuEventRecord", 2000)(0, S((0, "0x1234")))', "ArgumentError"),
    "stream protocol version": ('call("cuEventRecord", 2000)(0, S((3, 0)))', "ArgumentError"),
    "stream protocol shape": ('call("cuEventRecord", 2000)(0, S(7))', "ArgumentError"),
    # keywords and arity
    "keywords are used": ('(lambda v: (call("cuDeviceGetAttribute", 2000)(v, attrib=16, dev=0), v[0]))(out("int"))',
                          "ok (0, 132)"),
    "unknown keyword": ('call("cuDeviceGetAttribute", 2000)(out("int"), 16, device=0)', "ArgumentError"),
    "arity names parameters": ('call("cuDeviceGet", 2000)(out("CUdevice"))', "ArgumentError: 'ordinal'"),
    # lifetime
    "callable after close": ('(lambda f: (d.close(), f(out("int"))))(call("cuDeviceGetCount", 2000))',
                             "DriverClosedError"),
    "checked after close": ('(lambda f: (d.close(), f.checked(out("int"))))(call("cuDeviceGetCount", 2000))',
                            "DriverClosedError"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crash_class_is_refused_in_a_fresh_process(fake: dict[str, str], name: str) -> None:
    code, want = CASES[name]
    if "numpy" in code:
        pytest.importorskip("numpy")
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, fake["full"], code], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, f"killed or failed (rc {proc.returncode}): {proc.stderr[-2000:]}"
    lines = proc.stdout.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == ["pure", "auto"], proc.stdout
    kind, _, detail = want.partition(": ")
    outcomes: list[Any] = []
    for ln in lines:
        _, got, rest = ln.split(" ", 2) if ln.count(" ") >= 2 else (*ln.split(" "), "")
        outcomes.append((got, rest))
        if kind.startswith("ok"):
            assert f"{got} {rest}" == kind, ln
        else:
            assert got == kind, ln
            assert detail in rest and " 'a0'" not in rest, ln
    assert outcomes[0][0] == outcomes[1][0]
