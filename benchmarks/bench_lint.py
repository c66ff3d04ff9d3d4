"""cuentry lint timing, as ratios measured in one run (issue 29.6): is the linter linear, fast and parallel?

This is a benchmark, not a test: nothing here fails; each goal is printed next to its number. Every case
lints with libclang, the one engine of the C family (the `lint` extra), in its supervised worker processes.

* scaling: the time to lint one file against its size, for four shapes, each from 100 to 20,000: lines of
  ordinary code (a request in one function of fifty), requests in ONE function (each stored and tested),
  function-like ``#define``s holding a request (one in ten invoked), and the depth of a macro chain. The
  fitted exponent of CPU time (this process and its workers: a loaded machine inflates wall time, not
  this) against size (least squares of log t on log n) is printed over the whole range and over the top
  of it (sizes >= 1,000, where the fixed cost of a run -- a worker, the preamble of cuda.h -- no longer
  hides the slope); goal <= 1.1. Wall times are printed beside.
* per core: an ordinary tree (400 files of 250 lines, a loader in one file of fifty) and a request-dense tree
  (every function a loader): lines per CPU second of this process and its workers together (another job on
  the machine does not inflate it); goals >= 50k and >= 5k lines/s.
* clean repository: a synthetic 1M-line tree without a request (every file includes a project header that
  wraps dlsym: the shape that let 651 files through the pre-filter) with ``-j 2``; goal under 15 s.
* jobs: each tree with ``-j 2`` against ``-j 1`` (wall time, and the same report); goal >= 1.0.
* --big MB: one C file of that many MB (a request in one function of fifty); goal under 10 s.

    python benchmarks/bench_lint.py [--quick] [--json] [--big MB]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import add_src

add_src()

from cuentry.lint import clang, lint_paths  # noqa: E402
from cuentry.lint.engine import Report, Settings  # noqa: E402

STORED = ('  CUresult r{i} = cuGetProcAddress("cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n'
          '  if (r{i} != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return {i};\n')
PLAIN = ("static int helper_{i}(int a, int b) {{\n  int s = 0;\n"
         "  for (int i = 0; i < a; ++i) {{ s += i * b; if (s > 1000) s -= 7; }}\n  return s;\n}}\n")
LOADER = ("int load_{i}(void) {{\n  void* p; CUdriverProcAddressQueryResult q;\n"
          "  CUresult r = cuGetProcAddress(\"cuMemAlloc\", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n"
          "  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;\n}}\n")
PLATFORM_H = ('#pragma once\n#include <dlfcn.h>\n'
              'static inline void *plat_sym(void *h, const char *n) { return dlsym(h, n); }\n')


def lines_of(n: int) -> str:
    out, got, i = ["#include <cuda.h>\n"], 1, 0
    while got < n:
        s = (LOADER if i % 50 == 0 else PLAIN).format(i=i)
        out.append(s)
        got += s.count("\n")
        i += 1
    return "".join(out)


def requests_of(n: int) -> str:
    return ("#include <cuda.h>\nint f() {\n  void* p; CUdriverProcAddressQueryResult q;\n"
            + "".join(STORED.format(i=i) for i in range(n)) + "  return 0;\n}\n")


def defines_of(n: int) -> str:
    defs = "".join(f"#define LOAD_{i}(x) cuGetProcAddress(#x, &p, {3020 + i % 7}, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "
                   f"&q)\n" for i in range(n))
    uses = "".join(f"  r = LOAD_{i}(cuMemAlloc); if (r || q) return {i};\n" for i in range(0, n, 10))
    return ("#include <cuda.h>\n" + defs + "int f(void) {\n  void* p; CUresult r; CUdriverProcAddressQueryResult q;\n"
            + uses + "  return 0;\n}\n")


def depth_of(n: int) -> str:
    defs = "".join(f"#define C{i}(x) C{i - 1}(x)\n" for i in range(1, n))
    return ("#include <cuda.h>\n#define C0(x) cuGetProcAddress(#x, &p, 3020, 0, &q)\n" + defs
            + f"void f(void) {{ void* p; CUdriverProcAddressQueryResult q; C{n - 1}(cuMemAlloc); }}\n")


ENGINE = Settings()
"""The one engine's settings (libclang, whatever the size)."""
SHAPES: dict[str, Callable[[int], str]] = {"lines": lines_of, "requests_per_function": requests_of,
                                           "defines": defines_of, "macro_depth": depth_of}


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the lint workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def exponent(points: list[tuple[int, float]]) -> float:
    """The least-squares slope of log t on log n."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(t, 1e-6)) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def scaling(d: Path, shape: str, sizes: list[int]) -> dict[str, object]:
    points = []
    rows = {}
    for n in sizes:
        path = d / f"{shape}-{n}.c"
        path.write_text(SHAPES[shape](n))
        rep: list[Report] = []
        c0 = cpu()
        took = timed(lambda p=path: rep.append(lint_paths([str(p)], settings=ENGINE)))
        used = cpu() - c0
        points.append((n, used))
        engine = rep[0].judged[0].engine if rep[0].judged else "-"
        rows[str(n)] = {"cpu_s": round(used, 3), "wall_s": round(took, 3), "engine": engine,
                        "findings": len(rep[0].findings), "problems": len(rep[0].problems)}
    top = [p for p in points if p[0] >= 1000]
    whole, upper = exponent(points), exponent(top) if len(top) >= 2 else float("nan")
    return {"sizes": rows, "exponent_100_to_max": round(whole, 2), "exponent_top": round(upper, 2),
            "goal": "<= 1.1", "goal_met": upper <= 1.1}


def tree(d: Path, name: str, files: int, per_file: int, dense: bool) -> tuple[Path, int]:
    root = d / name
    root.mkdir()
    lines = 0
    for f in range(files):
        parts = ["#include <cuda.h>\n" if dense or f % 50 == 0 else "#include <stdio.h>\n"]
        for i in range(per_file):
            loader = dense or (f % 50 == 0 and i == 0)
            parts.append((LOADER if loader else PLAIN).format(i=i))
        text = "".join(parts)
        (root / f"f{f:05d}.c").write_text(text)
        lines += text.count("\n")
    return root, lines


def clean_repo(d: Path, lines_goal: int) -> tuple[Path, int]:
    root = d / "clean"
    (root / "include").mkdir(parents=True)
    (root / "include" / "platform.h").write_text(PLATFORM_H)
    body = "".join(PLAIN.format(i=i) for i in range(40))
    n = f = 0
    while n < lines_goal:
        sub = root / "src" / f"m{f // 100:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        text = '#include "platform.h"\n#include <stdio.h>\n' + body.replace("helper_", f"h{f}_")
        (sub / f"f{f:05d}.c").write_text(text)
        n += text.count("\n")
        f += 1
    return root, n


def per_core(root: Path, lines: int, goal: int) -> dict[str, object]:
    lint_paths([str(root)])                       # warm: the page cache, the catalog
    c0 = cpu()
    took = timed(lambda: lint_paths([str(root)]))
    used = cpu() - c0
    return {"lines": lines, "wall_s": round(took, 2), "cpu_s": round(used, 2), "lines_per_cpu_s": round(lines / used),
            "lines_per_s": round(lines / took), "goal_lines_per_cpu_s": goal, "goal_met": lines / used >= goal}


def jobs(root: Path, rounds: int = 3) -> dict[str, object]:
    """-j 1 against -j 2, interleaved (the order alternating), best of `rounds` each: a single pair of runs
    of a third of a second differs by more than the two do."""
    one: list[Report] = []
    two: list[Report] = []
    a: list[float] = []
    b: list[float] = []
    for r in range(rounds):
        for j in ((1, 2) if r % 2 == 0 else (2, 1)):
            got, times = (one, a) if j == 1 else (two, b)
            times.append(timed(lambda j=j, got=got: got.append(lint_paths([str(root)], jobs=j))))
    t1, t2 = min(a), min(b)
    return {"j1_s": round(t1, 2), "j2_s": round(t2, 2), "speedup": round(t1 / t2, 2), "goal": ">= 1.0",
            "goal_met": t2 <= t1, "same_report": one[0].to_dict() == two[0].to_dict(), "cores": os.cpu_count()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--big", type=float, default=0.0, help="also lint one C file of this many MB")
    a = ap.parse_args()
    q = a.quick
    d = Path(tempfile.mkdtemp(prefix="cuentry-lint-bench-"))
    res: dict[str, object] = {"date": time.strftime("%Y-%m-%d"), "clang": clang.available(),
                              "load_average": os.getloadavg()[0]}
    sizes = [100, 300, 1000, 2000] if q else [100, 300, 1000, 3000, 10000, 20000]
    (d / "warm.c").write_text(lines_of(100))
    lint_paths([str(d / "warm.c")])
    for shape in SHAPES:
        res[f"scaling_{shape}"] = scaling(d, shape, sizes)
    root, lines = tree(d, "tree", 100 if q else 400, 50, dense=False)
    droot, dlines = tree(d, "dense", 10 if q else 40, 50, dense=True)
    res["ordinary_tree"] = per_core(root, lines, 50_000)
    res["dense_tree"] = per_core(droot, dlines, 5_000)
    croot, clines = clean_repo(d, 100_000 if q else 1_000_000)
    lint_paths([str(croot / "src" / "m000")])
    c0 = cpu()
    took = timed(lambda: lint_paths([str(croot)], include_dirs=[str(croot / "include")], jobs=2))
    res["clean_repository_j2"] = {"lines": clines, "wall_s": round(took, 2), "cpu_s": round(cpu() - c0, 2),
                                  "goal_s": 15.0, "goal_met": took < 15.0}
    res["jobs_ordinary_tree"] = jobs(root)
    res["jobs_dense_tree"] = jobs(droot)
    if a.big:
        path = d / "big.c"
        path.write_text(lines_of(int(a.big * 1e6 / 35)))   # about 35 bytes a line
        c0 = cpu()
        took = timed(lambda: lint_paths([str(path)]))
        res["big_file"] = {"mb": round(path.stat().st_size / 1e6, 1), "wall_s": round(took, 2),
                           "cpu_s": round(cpu() - c0, 2), "goal_s": 10.0, "goal_met": took < 10}
    shutil.rmtree(d, ignore_errors=True)
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:<28} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
