"""Per-request overhead of cuentry's interposer (trace, emulate, both) against an uninterposed run, in one run.

Goal (issue 14): under 1 us a request, and no measurable change of a program's run time.
A C program (tests/data/trace/req.c) on the fake driver times, in-process:

* ``repeat``: one cuGetProcAddress_v2 request asked N times (a hot loop: a count in the record file);
* ``table first``: a table of distinct requests resolved once, like a CUDA runtime's start-up
  (every request is new: a slot is filled; the first also builds the driver's export map);
* ``table again``: the same table resolved again (every request already recorded);

and the wall time of a whole short run (process start, LD_PRELOAD, the interposer's constructor).
Configurations are interleaved round by round; each number is the best of the rounds.

    python benchmarks/bench_trace.py [--rounds 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import add_src

add_src()

from cuentry import interpose  # noqa: E402
from cuentry import trace as tr  # noqa: E402
from cuentry.catalog import catalog  # noqa: E402
from cuentry.testing import fakedriver  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REQ = ROOT / "tests" / "data" / "trace" / "req.c"


def build(tmp: Path) -> tuple[str, str, str]:
    req = tmp / "req"
    subprocess.run(["cc", "-O2", "-w", "-o", str(req), str(REQ), "-ldl", "-pthread"], check=True)
    lib = str(fakedriver.build(tmp / "fake", "full"))
    # The table: each symbol's newest legacy ABI, like a runtime's table (distinct requests).
    cat = catalog()
    lines = [f"{s} {cat.newest(s).version} 1" for s in cat.symbols()
             if s not in ("cuEventCreateFromEGLSync", "cuWGLGetDevice")]
    table = tmp / "table.txt"
    table.write_text("\n".join(lines) + "\n")
    return str(req), lib, str(table)


def configs(lib_ip: str, tmp: Path) -> dict[str, dict[str, str] | None]:
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    base["CUENTRY_FAKE_DRIVER_VERSION"] = "13000"
    d = tr._record_dir()  # where cuentry trace puts records (tmpfs where there is one)
    return {
        "plain": base,
        "trace": tr.environment(lib_ip, trace_dir=d, base=base),
        "emulate": tr.environment(lib_ip, emulate=12040, base=base),
        "trace+emulate": tr.environment(lib_ip, trace_dir=d, emulate=12040, base=base),
    }


def one(cmd: list[str], env: dict[str, str]) -> str:
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False).stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--loop", type=int, default=2_000_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cuentry-bench-trace-"))
    req, lib, table = build(tmp)
    ip = str(interpose.build())
    envs = configs(ip, tmp)
    best: dict[str, dict[str, float]] = {k: {"repeat": 1e18, "table_first": 1e18, "table_again": 1e18} for k in envs}
    walls: dict[str, list[float]] = {k: [] for k in envs}
    for _ in range(a.rounds):
        for name, env in envs.items():
            assert env is not None
            out = one([req, lib, f"loop:{a.loop}:cuMemAlloc:3020:1", f"table:{table}:20"], env)
            m = re.search(r"loop \d+ ([\d.]+) ns", out)
            t = re.search(r"table (\d+) first ([\d.]+) ns again ([\d.]+) ns", out)
            assert m and t, out
            b = best[name]
            b["repeat"] = min(b["repeat"], float(m.group(1)))
            b["table_first"] = min(b["table_first"], float(t.group(2)))
            b["table_again"] = min(b["table_again"], float(t.group(3)))
            t0 = time.perf_counter()
            one([req, lib, "ver"], env)
            walls[name].append((time.perf_counter() - t0) * 1e3)
    result = {
        "table_size": int(t.group(1)),
        "ns_per_request": best,
        "overhead_ns": {k: {m: round(v[m] - best["plain"][m], 2) for m in v} for k, v in best.items() if k != "plain"},
        "wall_ms_median": {k: round(statistics.median(v), 3) for k, v in walls.items()},
        "python": sys.version.split()[0],
    }
    if a.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"ns per request (best of {a.rounds} interleaved rounds; table of {result['table_size']} distinct requests)")
    print(f"{'config':<15}{'repeat':>10}{'table 1st':>12}{'table again':>13}{'wall ms':>10}")
    for k, v in best.items():
        print(f"{k:<15}{v['repeat']:>10.1f}{v['table_first']:>12.1f}{v['table_again']:>13.1f}"
              f"{result['wall_ms_median'][k]:>10.2f}")
    print("overhead vs plain (ns): " + "; ".join(
        f"{k}: " + ", ".join(f"{m} {d:+.1f}" for m, d in v.items()) for k, v in result["overhead_ns"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
