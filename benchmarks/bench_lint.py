"""cuentry lint timing: macros, long functions, whole trees, one very large file, and -j.

Every case is timed against a baseline measured in the same run (tree-sitter parsing the
same text, or reading and ``str.split``-ing it), and reported with the ratio. This is a
benchmark, not a test: nothing here fails; the goals are printed next to the numbers.

* defines N (1k, 3k, 10k): N function-like ``#define``s, each holding a request, one in ten
  invoked; goal (issue 21.4): thousands in seconds (before: 1k 5.7 s, 3k 53 s, 5k 115 s).
* chain 2000: a macro chain 2,000 deep (before: 22 s); past the depth limit, so the report
  has a "not fully expanded" note instead of a silent "no findings".
* requests N (500, 1k, 2k) in ONE function, two shapes: each result stored in its own
  variable and tested, and every request storing into the same never-tested variable
  (before: 2,000 took 22 s); goal: 2,000 well under 2 s.
* tree: an ordinary source tree (files without a trigger word, skipped by the pre-filter,
  with a loader in one file of fifty), lines/s; goal >= 100k lines/s.
* dense: files of loaders (every function holds requests), lines/s on one core; goal >= 20k.
* jobs: the dense tree with -j 2 against -j 1 (same report, checked).
* --big N: an N MB C file (every 50th function holds a request), against reading it.
* engines: the C-family files of tests/lint_corpus (semantic/ included) judged by the clang engine
  against the tree-sitter engine, per file and as a ratio (the clang engine parses a translation unit
  with its headers: slower per file by design). Skipped without libclang.

Every case but `engines` uses the tree-sitter engine (``--engine tree-sitter``), the one these
goals are for.

Wall time on a shared machine is noisy: the tree cases also report lines per CPU second of this
process (``time.process_time``), which another job on the machine does not inflate.

Peak memory: the process's peak RSS after each case (``resource``; it only grows), and the
tracemalloc peak of the largest macro case.

    taskset -c 0 python benchmarks/bench_lint.py [--big MB] [--json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from _common import add_src

add_src()

from cuentry.lint import clang, lint_paths  # noqa: E402
from cuentry.lint.cfamily.tree import parser  # noqa: E402
from cuentry.lint.engine import Settings  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "lint_corpus"
TS = Settings(engine="tree-sitter")
STORED = ('  CUresult r{i} = cuGetProcAddress("cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n'
          '  if (r{i} != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return {i};\n')
SAME_VAR = '  err = cuGetProcAddress("cuMemAlloc", &p{i}, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n'
PLAIN = ("static int helper_{i}(int a, int b) {{\n  int s = 0;\n"
         "  for (int i = 0; i < a; ++i) {{ s += i * b; if (s > 1000) s -= 7; }}\n  return s;\n}}\n")
LOADER = ("int load_{i}(void) {{\n  void* p; CUdriverProcAddressQueryResult q;\n"
          "  CUresult r = cuGetProcAddress(\"cuMemAlloc\", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n"
          "  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;\n}}\n")


def one_function(n: int, shape: str) -> str:
    body = "".join((STORED if shape == "stored" else SAME_VAR).format(i=i) for i in range(n))
    decls = "  void* p; CUdriverProcAddressQueryResult q;\n" + (
        "" if shape == "stored" else "  CUresult err; void " + ", ".join(f"*p{i}" for i in range(n)) + ";\n")
    return "#include <cuda.h>\nint f() {\n" + decls + body + "  return 0;\n}\n"


def defines(n: int) -> str:
    defs = "".join(f"#define LOAD_{i}(x) cuGetProcAddress(#x, &p, {3020 + i % 7}, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "
                   f"&q)\n" for i in range(n))
    uses = "".join(f"  r = LOAD_{i}(cuMemAlloc); if (r || q) return {i};\n" for i in range(0, n, 10))
    return ("#include <cuda.h>\n" + defs + "int f(void) {\n  void* p; CUresult r; CUdriverProcAddressQueryResult q;\n"
            + uses + "  return 0;\n}\n")


def chain(depth: int) -> str:
    defs = "".join(f"#define C{i}(x) C{i - 1}(x)\n" for i in range(1, depth))
    return ("#include <cuda.h>\n#define C0(x) cuGetProcAddress(#x, &p, 3020, 0, &q)\n" + defs
            + f"void f(void) {{ void* p; CUdriverProcAddressQueryResult q; C{depth - 1}(cuMemAlloc); }}\n")


def big_file(mb: float) -> str:
    out, n, i = ["#include <cuda.h>\n"], 0, 0
    while n < mb * 1e6:
        s = (LOADER if i % 50 == 0 else PLAIN).format(i=i)
        out.append(s)
        n += len(s)
        i += 1
    return "".join(out)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def parse_baseline(text: str) -> float:
    return timed(lambda: parser("cpp").parse(text.encode()))


def text_case(d: Path, name: str, text: str, goal_s: float | None = None) -> dict[str, object]:
    path = d / f"{name}.c"
    path.write_text(text)
    base = parse_baseline(text)
    rep: list[object] = []
    took = timed(lambda: rep.append(lint_paths([str(path)], settings=TS)))
    r = rep[0]
    out: dict[str, object] = {"lines": text.count("\n"), "lint_s": round(took, 3), "tree_sitter_parse_s": round(base, 4),
                              "ratio": round(took / base, 1), "findings": len(r.findings),  # type: ignore[attr-defined]
                              "notes": len(r.notes), "peak_rss_mb": rss_mb()}  # type: ignore[attr-defined]
    if goal_s is not None:
        out["goal_s"], out["goal_met"] = goal_s, took < goal_s
    return out


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


def tree_case(root: Path, lines: int, goal: int, jobs: int = 1) -> dict[str, object]:
    files = sorted(root.iterdir())
    base = timed(lambda: [p.read_text().split() for p in files])
    lint_paths([str(root)], jobs=jobs, settings=TS)      # warm: the headers' and files' first read
    c0 = time.process_time()
    took = timed(lambda: lint_paths([str(root)], jobs=jobs, settings=TS))
    cpu = time.process_time() - c0
    return {"files": len(files), "lines": lines, "lint_s": round(took, 3), "cpu_s": round(cpu, 3),
            "read_and_split_s": round(base, 4), "ratio": round(took / base, 1), "lines_per_s": round(lines / took),
            "lines_per_cpu_s": round(lines / cpu), "goal_lines_per_s": goal,
            "goal_met": max(lines / took, lines / cpu) >= goal, "peak_rss_mb": rss_mb()}


def jobs_case(root: Path) -> dict[str, object]:
    one: list[object] = []
    two: list[object] = []
    t1 = timed(lambda: one.append(lint_paths([str(root)], settings=TS)))
    t2 = timed(lambda: two.append(lint_paths([str(root)], jobs=2, settings=TS)))
    same = one[0].to_dict() == two[0].to_dict()  # type: ignore[attr-defined]
    return {"j1_s": round(t1, 3), "j2_s": round(t2, 3), "speedup": round(t1 / t2, 2), "same_report": same}


def engines_case() -> dict[str, object]:
    """The clang engine against tree-sitter on the corpus's C-family files (each engine warmed first)."""
    files = sorted(str(p) for p in CORPUS.rglob("*") if p.suffix in (".c", ".cc", ".cpp", ".cu", ".cuh", ".h", ".hpp"))
    out: dict[str, object] = {"files": len(files)}
    for name in ("tree-sitter", "clang"):
        st = Settings(engine=name)
        lint_paths(files, settings=st)
        rep: list[object] = []
        took = timed(lambda st=st: rep.append(lint_paths(files, settings=st)))   # type: ignore[misc]
        judged = [j.engine for j in rep[0].judged]  # type: ignore[attr-defined]
        out[name] = {"s": round(took, 3), "ms_per_file": round(took * 1000 / len(files), 2),
                     "judged_by_clang": judged.count("clang")}
    ts, cl = out["tree-sitter"], out["clang"]
    out["ratio_clang_to_tree_sitter"] = round(cl["s"] / ts["s"], 1)  # type: ignore[index]
    return out


def macro_memory(text: str, d: Path) -> int:
    path = d / "mem.c"
    path.write_text(text)
    tracemalloc.start()
    lint_paths([str(path)], settings=TS)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return round(peak / 2**20)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", type=float, default=0.0, help="also lint one file of this many MB")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    q = a.quick
    d = Path(tempfile.mkdtemp(prefix="cuentry-lint-bench-"))
    lint_paths([str(CORPUS)], settings=TS)  # warm: grammars loaded, catalog built
    res: dict[str, object] = {"date": time.strftime("%Y-%m-%d")}
    for n in ((300, 1000) if q else (1000, 3000, 10000)):
        res[f"defines_{n}"] = text_case(d, f"defines{n}", defines(n), goal_s=10.0)
    res["chain_2000"] = text_case(d, "chain", chain(2000), goal_s=5.0)
    for n in ((500, 2000) if q else (500, 1000, 2000)):
        res[f"requests_{n}_stored"] = text_case(d, f"stored{n}", one_function(n, "stored"), goal_s=2.0)
        res[f"requests_{n}_same_var"] = text_case(d, f"same{n}", one_function(n, "same"), goal_s=2.0)
    root, lines = tree(d, "tree", 100 if q else 400, 50, dense=False)
    res["tree"] = tree_case(root, lines, 100_000)
    droot, dlines = tree(d, "dense", 20 if q else 80, 50, dense=True)
    res["dense"] = tree_case(droot, dlines, 20_000)
    res["jobs"] = jobs_case(droot)
    res["defines_tracemalloc_peak_mb"] = macro_memory(defines(1000 if q else 10000), d)
    if clang.available():
        res["engines"] = engines_case()
    if a.big:
        text = big_file(a.big)
        path = d / "big.c"
        path.write_text(text)
        base = timed(lambda: path.read_text())
        took = timed(lambda: lint_paths([str(path)], settings=TS))
        res["big_file"] = {"mb": round(len(text) / 1e6, 1), "lint_s": round(took, 2), "read_s": round(base, 3),
                           "peak_rss_mb": rss_mb(), "goal": took < 10}
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:<26} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
