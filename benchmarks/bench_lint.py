"""Lint 10,000 lines of C++ on one core, against reading and tokenising them (`str.split`), in one run.

Goal (issue 6): under 1 s. The source is the C-family part of tests/lint_corpus,
repeated into one file per copy until it reaches the line count.

    python benchmarks/bench_lint.py [--lines N] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import add_src

add_src()

from cuentry.lint import lint_paths  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "lint_corpus"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    texts = [p.read_text() for p in sorted(CORPUS.iterdir()) if p.suffix in (".cpp", ".cc", ".cu")]
    d = Path(tempfile.mkdtemp(prefix="cuentry-lint-bench-"))
    lines, i = 0, 0
    while lines < a.lines:
        t = texts[i % len(texts)]
        (d / f"f{i:04d}.cpp").write_text(t)
        lines += t.count("\n") + 1
        i += 1
    lint_paths([str(d)])  # warm: grammar loaded, catalog built
    t0 = time.perf_counter()
    for p in sorted(d.iterdir()):
        p.read_text().split()
    base = time.perf_counter() - t0
    t0 = time.perf_counter()
    rep = lint_paths([str(d)])
    took = time.perf_counter() - t0
    res = {"files": rep.files, "lines": rep.lines, "findings": len(rep.findings), "lint_s": round(took, 4),
           "read_and_split_s": round(base, 4), "ratio": round(took / base, 1),
           "lines_per_s": round(rep.lines / took), "goal_under_1s": took < 1.0, "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(res, indent=2) if a.json else "\n".join(f"{k:<18} {v}" for k, v in res.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
