"""`import cuentry` plus the first catalog look-up, against `python -c pass`, in one run.

Goal (issue 2): under 15 ms above the interpreter's own start.
    python benchmarks/bench_import.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import sys

from _common import SRC, wall

CASES = {
    "python -c pass": "pass",
    "import cuentry": "import cuentry",
    "import cuentry + first look-up": "import cuentry; cuentry.get_catalog().bind('cuMemAlloc', 3020)",
    "... + resolve-ready (ctypes, driver module)": "import cuentry.driver",
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    # An installed package has its bytecode compiled at install time; do the same for the checkout.
    compileall.compile_dir(SRC, quiet=1)
    times = {name: wall([sys.executable, "-c", code], a.runs) for name, code in CASES.items()}
    base = times["python -c pass"]
    rows = [{"case": k, "ms": round(v * 1e3, 2), "ratio": round(v / base, 3), "extra_ms": round((v - base) * 1e3, 2)}
            for k, v in times.items()]
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['case']:<45} {r['ms']:8.2f} ms  x{r['ratio']:.3f}  (+{r['extra_ms']:.2f} ms)")
        extra = rows[2]["extra_ms"]
        print(f"goal: import + first look-up < 15 ms above baseline: {'met' if extra < 15 else 'NOT met'} ({extra:.2f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
