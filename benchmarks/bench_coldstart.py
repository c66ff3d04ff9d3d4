"""Cold start: a fresh process that imports, loads the driver, resolves cuCtxGetCurrent and calls it
(through ``Driver.call``, and as a library would: a one-entry ``Table`` and ``out()`` before it resolved).

Compared, in one run, as fresh subprocesses interleaved round by round (so drift
hits all alike), against a hand-written ctypes program doing the same
(dlopen, cuInit, cuGetProcAddress_v2, one call), and, where ``cuda.bindings`` is
importable (the GPU host), against cuda.bindings (import + cuInit + first call).
Goal (issue 41): cuentry at most 10 ms of CPU time over the ctypes program (CPU time: a busy machine does not
blur it; wall time is reported beside it, issue 11's goal was 15 ms of it).

    python benchmarks/bench_coldstart.py [--driver PATH] [--runs N] [--installed] [--json]

--installed measures the cuentry this interpreter imports (a regular, non-editable
`pip install .` in a fresh venv: what users run) instead of this checkout's src/.

Without --driver (or $CUENTRY_DRIVER): the real driver where the loader finds one (the GPU host),
else the fake driver, built here; --fake forces the fake.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import SRC, add_src, env, portable

CTYPES = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cuInit.argtypes = [ctypes.c_uint]
assert lib.cuInit(0) == 0
gpa = lib.cuGetProcAddress_v2
gpa.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                ctypes.POINTER(ctypes.c_int)]
pfn, st = ctypes.c_void_p(), ctypes.c_int()
assert gpa(b"cuCtxGetCurrent", ctypes.byref(pfn), 4000, 1, ctypes.byref(st)) == 0 and pfn.value
f = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))(pfn.value)
ctx = ctypes.c_void_p()
assert f(ctypes.byref(ctx)) in (0, 201)
"""

CUENTRY = r"""
import sys
import cuentry
d = cuentry.Driver.load(sys.argv[1])
f = d.call("cuCtxGetCurrent", 4000)
assert f(cuentry.out("CUcontext")) in (0, 201)
"""

TABLE = r"""
import sys
import cuentry
t = cuentry.Table("app", [cuentry.required("cuCtxGetCurrent", 4000)], stream="legacy",
                  source=cuentry.Driver.load(sys.argv[1]))
assert t.cuCtxGetCurrent(cuentry.out("CUcontext")) in (0, 201)
"""

BINDINGS = r"""
from cuda.bindings import driver
(err,) = driver.cuInit(0)
err, ctx = driver.cuCtxGetCurrent()
"""


def _fake_driver() -> str:
    add_src()
    from cuentry.testing import fakedriver

    return str(fakedriver.build(Path(tempfile.mkdtemp(prefix="cuentry-bench-")), "full"))


def _real_driver() -> str | None:
    """The real driver the loader finds (not the fake, not the toolkit's stub), or None."""
    add_src()
    from cuentry.errors import CuentryError
    from cuentry.loader import load_driver

    try:
        found = load_driver()
    except CuentryError:
        return None
    found.library.close()
    return None if found.fake or found.stub else found.path


_ENV: list[dict[str, str]] = []


def _run(code: str, driver: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process; CPU time is less disturbed by a busy machine."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, driver], check=True, env=_ENV[0] if _ENV else env(),
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", default=os.environ.get("CUENTRY_DRIVER"))
    ap.add_argument("--fake", action="store_true", help="use the fake driver even where a real one is installed")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--installed", action="store_true", help="measure the installed cuentry, not this checkout's src/")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    driver = a.driver or (None if a.fake else _real_driver()) or _fake_driver()
    if a.installed:
        _ENV.append({k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        where = subprocess.run([sys.executable, "-c", "import cuentry; print(cuentry.__file__)"], env=_ENV[0],
                               capture_output=True, text=True, check=True).stdout.strip()
        if where.startswith(SRC):
            raise SystemExit(f"--installed: this interpreter imports cuentry from the checkout ({where}); "
                             "use a venv with a regular `pip install .`")
    else:
        compileall.compile_dir(SRC, quiet=1)  # an installed package has its bytecode compiled at install time
    cases = {"python -c pass": "pass", "hand-written ctypes": CTYPES, "cuentry": CUENTRY, "cuentry table": TABLE}
    probe = subprocess.run([sys.executable, "-c", "import cuda.bindings.driver"], env=_ENV[0] if _ENV else env(),
                           capture_output=True)
    if probe.returncode == 0:
        cases["cuda.bindings"] = BINDINGS
    for code in cases.values():  # warm the page cache
        _run(code, driver)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(a.runs):
        for k, code in cases.items():
            times[k].append(_run(code, driver))
    med = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    base, cbase = med["hand-written ctypes"], cpu["hand-written ctypes"]
    rows = [{"case": k, "ms": round(v * 1e3, 2), "over_ctypes_ms": round((v - base) * 1e3, 2),
             "ratio_to_ctypes": round(v / base, 3), "cpu_ms": round(cpu[k] * 1e3, 2),
             "cpu_over_ctypes_ms": round((cpu[k] - cbase) * 1e3, 2)} for k, v in med.items()]
    extra = (med["cuentry"] - base) * 1e3
    cpu_extra = (cpu["cuentry"] - cbase) * 1e3
    res = {"driver": portable(driver), "runs": a.runs, "installed": a.installed, "python": sys.version.split()[0],
           "load_average": os.getloadavg()[0], "rows": rows, "cuentry_over_ctypes_ms": round(extra, 2),
           "cuentry_cpu_over_ctypes_ms": round(cpu_extra, 2), "goal_cpu_ms": 10, "goal_met": cpu_extra <= 10}
    res["cuentry_table_over_ctypes_ms"] = round((med["cuentry table"] - base) * 1e3, 2)
    res["cuentry_table_cpu_over_ctypes_ms"] = round((cpu["cuentry table"] - cbase) * 1e3, 2)
    if "cuda.bindings" in med:
        res["cuda_bindings_over_ctypes_ms"] = round((med["cuda.bindings"] - base) * 1e3, 2)
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for r in rows:
            print(f"{r['case']:<22} {r['ms']:8.2f} ms  {r['over_ctypes_ms']:+8.2f} ms vs ctypes  x{r['ratio_to_ctypes']:.3f}"
                  f"   cpu {r['cpu_ms']:7.2f} ms ({r['cpu_over_ctypes_ms']:+.2f})")
        print(f"goal: cuentry <= 10 ms of CPU over the ctypes program: {'met' if res['goal_met'] else 'NOT met'} "
              f"({cpu_extra:.2f} ms; wall {extra:+.2f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
