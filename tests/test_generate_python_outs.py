"""Out-parameters of typed callables (what a generated Python module's entries are) take ctypes as a ported
loader passes them: `ctypes.byref(x)`, `ctypes.pointer(x)` and ctypes instances, under the checks of any buffer
(issue 40): the element type, the bytes needed, the memory owned by what the reference keeps alive. Misuse
runs in a subprocess (a write past the end or a crash would show there): each case is refused or, where
accepted, writes inside the object and nowhere else (a sentinel after it stays untouched).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .backends import BACKENDS

_SCRIPT = textwrap.dedent(r"""
    import ctypes, json, sys
    from cuentry import Driver
    d = Driver.load(sys.argv[1])
    count = d.call("cuDeviceGetCount", 2000)          # int *count
    info = d.call("cuMemGetInfo", 3020)               # size_t *free, size_t *total
    current = d.call("cuCtxGetCurrent", 4000)         # CUcontext *pctx
    props = d.call("cuDeviceGetUuid", 9020)           # CUuuid *uuid, CUdevice dev
    SENTINEL = 0x5A5A5A5A

    class Guarded(ctypes.Structure):                  # an int, then a guard the driver must never touch
        _fields_ = [("value", ctypes.c_int), ("guard", ctypes.c_uint32 * 4)]

    def guarded():
        g = Guarded()
        for i in range(4):
            g.guard[i] = SENTINEL
        return g

    def run(name, call):
        try:
            rc = call()
            return {"case": name, "ok": True, "rc": rc}
        except Exception as exc:
            return {"case": name, "ok": False, "error": type(exc).__name__, "text": str(exc)}

    out = []
    x = ctypes.c_int(-1)
    out.append(run("byref(c_int)", lambda: count(ctypes.byref(x))) | {"value": x.value})
    y = ctypes.c_int(-1)
    out.append(run("pointer(c_int)", lambda: count(ctypes.pointer(y))) | {"value": y.value})
    z = ctypes.c_int(-1)
    out.append(run("c_int", lambda: count(z)) | {"value": z.value})
    arr = (ctypes.c_int * 3)(-1, -1, -1)
    out.append(run("byref(int[3], 8)", lambda: count(ctypes.byref(arr, 8))) | {"value": list(arr)})
    p = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int))
    out.append(run("cast(int[3], int *)", lambda: count(p)) | {"value": list(arr)})
    f, t = ctypes.c_size_t(), ctypes.c_size_t()
    out.append(run("byref(size_t) x2", lambda: info(ctypes.byref(f), ctypes.byref(t))))
    v = ctypes.c_void_p()
    out.append(run("byref(c_void_p)", lambda: current(ctypes.byref(v))))
    out.append(run("NULL pointer", lambda: count(ctypes.POINTER(ctypes.c_int)())))
    # misuse: refused, nothing written
    g = guarded()
    out.append(run("byref(c_int) for size_t *", lambda: info(ctypes.byref(g, 0), ctypes.byref(t)))
               | {"guard": list(g.guard)})
    s = ctypes.c_short()
    out.append(run("byref(c_short)", lambda: count(ctypes.byref(s))))
    out.append(run("pointer(c_short)", lambda: count(ctypes.pointer(s))))
    u = ctypes.c_uint()
    out.append(run("byref(c_uint) for int *", lambda: count(ctypes.byref(u))))
    small = (ctypes.c_int * 2)()
    out.append(run("byref(int[2], 4) for size_t *", lambda: info(ctypes.byref(small, 4), ctypes.byref(t))))
    out.append(run("byref(int[2], 8) past the end", lambda: count(ctypes.byref(small, 8))))
    out.append(run("byref(int[2], 2) mid-element", lambda: count(ctypes.byref(small, 2))))
    out.append(run("pointer from an int", lambda: count(ctypes.cast(ctypes.addressof(x), ctypes.POINTER(ctypes.c_int)))))
    out.append(run("byref(c_int) for CUcontext *", lambda: current(ctypes.byref(ctypes.c_int()))))
    out.append(run("byref(c_int) for CUuuid *", lambda: props(ctypes.byref(ctypes.c_int()), 0)))
    out.append(run("byref(bytes buffer)", lambda: count(ctypes.byref(ctypes.create_string_buffer(4)))))
    print(json.dumps(out))
""")

ACCEPTED = {"byref(c_int)", "pointer(c_int)", "c_int", "byref(int[3], 8)", "cast(int[3], int *)", "byref(size_t) x2",
            "byref(c_void_p)", "NULL pointer"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctypes_references_as_out_parameters(fake: dict[str, str], tmp_path: Path, backend: str) -> None:
    script = tmp_path / "outs.py"
    script.write_text(_SCRIPT)
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "CUENTRY_BACKEND": backend}
    proc = subprocess.run([sys.executable, str(script), fake["full"]], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]      # no crash, whatever was passed
    got = {r["case"]: r for r in json.loads(proc.stdout)}
    for case, r in got.items():
        assert r["ok"] == (case in ACCEPTED), r
        if not r["ok"]:
            assert r["error"] == "ArgumentError", r
    assert got["byref(c_int)"]["value"] == got["pointer(c_int)"]["value"] == got["c_int"]["value"] == 1
    assert got["byref(int[3], 8)"]["value"] == [-1, -1, 1]       # the third element, nothing else
    assert got["cast(int[3], int *)"]["value"] == [1, -1, 1]       # the first (the third from the case before)
    assert got["byref(c_int) for size_t *"]["guard"] == [0x5A5A5A5A] * 4
    assert "8-byte unsigned integer elements" in got["byref(int[2], 4) for size_t *"]["text"]
    assert "past its end" in got["byref(int[2], 8) past the end"]["text"]
    assert "does not own" in got["pointer from an int"]["text"]
    assert "cuentry.address(n)" in got["pointer from an int"]["text"]
