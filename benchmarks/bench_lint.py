"""cuentry lint timing: whole files of loaders, one long function, and one very large file.

Each case is timed against a baseline measured in the same run:

* corpus: the C-family files of tests/lint_corpus repeated into files up to --lines
  (default 10,000), against reading and ``str.split``-ing them.  Goal: under 1 s.
* one function: --lines lines in ONE function (a stored-result request and its
  test per two lines), against tree-sitter parsing the same text.  Goal (issue 12):
  linear time, 10,000 lines under 1 s.
* 1,000 requests: the case that took ~49 s before (1,000 stored-result requests in
  one function).
* --big N: an N MB C file (every 50th function holds a request), against reading it;
  goal: 50 MB within 10 s and 1 GB (peak RSS of this process is reported).

    python benchmarks/bench_lint.py [--lines N] [--big MB] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from _common import add_src

add_src()

from cuentry.lint import lint_paths  # noqa: E402
from cuentry.lint.cfamily.tree import parser  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "lint_corpus"
REQUEST = ('  CUresult r{i} = cuGetProcAddress("cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n'
           '  if (r{i} != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return {i};\n')


def one_function(n: int) -> str:
    body = "".join(REQUEST.format(i=i) for i in range(n))
    return "#include <cuda.h>\nint f() {\n  void* p; CUdriverProcAddressQueryResult q;\n" + body + "  return 0;\n}\n"


def big_file(mb: float) -> str:
    plain = ("static int helper_{i}(int a, int b) {{\n  int s = 0;\n"
             "  for (int i = 0; i < a; ++i) {{ s += i * b; if (s > 1000) s -= 7; }}\n  return s;\n}}\n")
    req = ("int load_{i}(void) {{\n  void* p; CUdriverProcAddressQueryResult q;\n"
           "  CUresult r = cuGetProcAddress(\"cuMemAlloc\", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n"
           "  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;\n}}\n")
    out, n, i = ["#include <cuda.h>\n"], 0, 0
    while n < mb * 1e6:
        s = (req if i % 50 == 0 else plain).format(i=i)
        out.append(s)
        n += len(s)
        i += 1
    return "".join(out)


def timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def corpus_case(d: Path, lines: int) -> dict[str, object]:
    texts = [p.read_text() for p in sorted(CORPUS.iterdir()) if p.suffix in (".cpp", ".cc", ".cu")]
    total, i = 0, 0
    cdir = d / "corpus"
    cdir.mkdir()
    while total < lines:
        t = texts[i % len(texts)]
        (cdir / f"f{i:04d}.cpp").write_text(t)
        total += t.count("\n") + 1
        i += 1
    base = timed(lambda: [p.read_text().split() for p in sorted(cdir.iterdir())])
    took = timed(lambda: lint_paths([str(cdir)]))
    return {"files": i, "lines": total, "lint_s": round(took, 3), "read_and_split_s": round(base, 4),
            "ratio": round(took / base, 1), "goal_under_1s": took < 1.0}


def function_case(d: Path, requests: int, name: str) -> dict[str, object]:
    text = one_function(requests)
    path = d / f"{name}.cpp"
    path.write_text(text)
    base = timed(lambda: parser("cpp").parse(text.encode()))
    took = timed(lambda: lint_paths([str(path)]))
    return {"requests": requests, "lines": text.count("\n"), "lint_s": round(took, 3),
            "tree_sitter_parse_s": round(base, 3), "ratio": round(took / base, 1), "goal_under_1s": took < 1.0}


def big_case(d: Path, mb: float) -> dict[str, object]:
    text = big_file(mb)
    path = d / "big.c"
    path.write_text(text)
    base = timed(lambda: path.read_text())
    took = timed(lambda: lint_paths([str(path)]))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mb": round(len(text) / 1e6, 1), "lint_s": round(took, 2), "read_s": round(base, 3),
            "peak_rss_mb": round(rss), "goal": took < 10 and rss < 1024}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--big", type=float, default=0.0, help="also lint one file of this many MB")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="cuentry-lint-bench-"))
    lint_paths([str(CORPUS)])  # warm: grammars loaded, catalog built
    res: dict[str, object] = {"date": time.strftime("%Y-%m-%d")}
    res["corpus"] = corpus_case(d, a.lines)
    res["one_function"] = function_case(d, a.lines // 2, "one")
    res["requests_1000"] = function_case(d, 1000, "thousand")
    if a.big:
        res["big_file"] = big_case(d, a.big)
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:<14} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
