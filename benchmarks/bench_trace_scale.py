"""`cuentry trace` of a program making thousands of distinct requests: the whole command, end to end (issue 42).

Goal: 10,000 distinct requests recorded in at most 5 s on the 2-core dev VM, nothing dropped without a count.
A C program (tests/data/trace/req.c, `file:` command) on the fake driver makes N distinct
cuGetProcAddress_v2 requests, under `cuentry trace --json -o FILE` (a subprocess: Python's start, the
interposer, the run, reading the records, judging each request, writing the report). Two sets:

* ``known``: every catalog symbol at versions from 1000 up, with flags 0, 1, 2 (the judgement of a known
  name: ABI versions, default flags, fallbacks);
* ``unknown``: misspelled names (each a catalog symbol with a suffix): every request is judged and gets a
  "did you mean" (the slowest to judge).

For each set and N in (1,000, 10,000): wall time and CPU time (this process's children: cuentry and the
program), best of the rounds, and the ratio 10,000 / 1,000 (10 is linear; the quadratic reader of before
was about 100). The report is checked: N requests (+1: the program's dlsym of the getter), none dropped.

    python benchmarks/bench_trace_scale.py [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import add_src, env

add_src()

from cuentry import interpose  # noqa: E402
from cuentry.catalog import catalog  # noqa: E402
from cuentry.testing import fakedriver  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REQ = ROOT / "tests" / "data" / "trace" / "req.c"
GOAL_S = 5.0


def queries(kind: str, n: int) -> list[str]:
    syms = [s for s in catalog().symbols() if s not in ("cuEventCreateFromEGLSync", "cuWGLGetDevice")]
    out = []
    for i in range(n):
        sym = syms[i % len(syms)]
        out.append(f"{sym}X{i} {(3020, 12000, 13000)[i % 3]} 1" if kind == "unknown" else
                   f"{sym} {1000 + 10 * (i // len(syms))} {i % 3}")
    return out


def one(cmd: list[str], e: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s of the children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cuentry-bench-trace-scale-"))
    req = tmp / "req"
    subprocess.run(["cc", "-O2", "-w", "-o", str(req), str(REQ), "-ldl", "-pthread"], check=True)
    lib = str(fakedriver.build(tmp / "fake", "full"))
    interpose.build()
    e = env()
    e["CUENTRY_FAKE_DRIVER_VERSION"] = "13000"
    result: dict[str, dict[str, float | int]] = {}
    for kind in ("known", "unknown"):
        for n in (1_000, 10_000):
            qf = tmp / f"{kind}-{n}.txt"
            qf.write_text("\n".join(queries(kind, n)) + "\n")
            out = tmp / f"{kind}-{n}.json"
            cmd = [sys.executable, "-m", "cuentry", "trace", "--json", "-o", str(out), "--", str(req), lib,
                   f"file:{qf}"]
            runs = [one(cmd, e) for _ in range(a.rounds)]
            doc = json.loads(out.read_text())
            got = sum(1 for r in doc["requests"] if r["api"] == "cuGetProcAddress_v2")
            assert got == n and doc["dropped"] == 0, (kind, n, got, doc["dropped"])
            result[f"{kind}_{n}"] = {"wall_s": round(min(w for w, _ in runs), 3),
                                     "cpu_s": round(min(c for _, c in runs), 3), "requests": got,
                                     "dropped": doc["dropped"], "findings": len(doc["findings"])}
    for kind in ("known", "unknown"):
        small, big = result[f"{kind}_1000"], result[f"{kind}_10000"]
        result[f"{kind}_ratio_10k_1k"] = {"wall": round(float(big["wall_s"]) / float(small["wall_s"]), 2),
                                          "cpu": round(float(big["cpu_s"]) / float(small["cpu_s"]), 2)}
    result["goal_s"] = {"wall": GOAL_S}
    result["load_average"] = {"1min": round(os.getloadavg()[0], 2)}
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"cuentry trace, best of {a.rounds} (goal: 10,000 distinct requests in at most {GOAL_S:g} s)")
    for k, v in result.items():
        print(f"  {k:<22} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
