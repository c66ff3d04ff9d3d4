"""Score the linter on the C, C++ and CUDA variants: recall on the faulty ones, false findings on the twins.

    python -m tests.lint_variants.c.score [--quick | --full] [--json] [--family F] [--seed S] [--max-depth N]
                                          [-j N] [--toolkit X.Y] [--runner text|paths|cli] [--misses N] [--keep DIR]

Each variant is written into a directory of its own under a temporary directory and linted alone (no other
variant can lend it a wrapper), with `--pedantic` so that notes are seen, against the headers cuentry writes for
`--toolkit` (13.0): by default with the library's `lint_text` on each of its files (`--runner text`), or with
`lint_paths` on its directory (`--runner paths`: the command line's engine and worker isolation, about 4 times
the time) or `cuentry lint --json --isolated` (`--runner cli`). A faulty variant is found when every code of its
`expect` is reported at severity error or warning; a twin is false when anything is reported at error or
warning. The goal of issue 38: recall >= 0.95 and no error or warning on any twin.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..record import Variant
from .compile import write
from .generate import variants

__all__ = ["GOAL_RECALL", "Outcome", "Score", "lint_variant", "main", "run", "score"]

GOAL_RECALL = 0.95
SERIOUS = ("error", "warning")


@dataclass
class Outcome:
    """What the linter said about one variant."""

    name: str
    seed: str
    families: tuple[str, ...]
    faulty: bool
    expect: tuple[str, ...]
    findings: list[tuple[str, int, str, str, str]] = field(default_factory=list)  # (file, line, code, sev, msg)
    requests: tuple[int, int] = (0, 0)       # (found, judged), summed over the variant's files
    notes: list[str] = field(default_factory=list)    # what the linter said it could not judge
    problems: list[str] = field(default_factory=list)  # files it could not lint, or how the run failed

    @property
    def serious(self) -> set[str]:
        return {code for _, _, code, sev, _ in self.findings if sev in SERIOUS}

    @property
    def found(self) -> bool:
        """A faulty variant: every expected code at error or warning."""
        return set(self.expect) <= self.serious

    @property
    def flagged(self) -> bool:
        """A faulty variant not found, but given some other error or warning (the fault, named by another rule,
        or a wrong reason: not counted as found)."""
        return not self.found and bool(self.serious)

    @property
    def false(self) -> list[tuple[str, int, str, str, str]]:
        """A twin's findings at error or warning (every one is false)."""
        return [] if self.faulty else [f for f in self.findings if f[3] in SERIOUS]

    @property
    def depth(self) -> int:
        return len(self.families)


def _outcome(v: Variant, report: dict[str, Any], root: str) -> Outcome:
    def rel(path: str) -> str:
        return os.path.relpath(path, root) if os.path.isabs(path) else path

    out = Outcome(v.name, v.seed, v.families, v.faulty, tuple(sorted(v.expect)))
    out.findings = sorted((rel(f["path"]), f["line"], f["code"], f["severity"], f["message"])
                          for f in report.get("findings", []))
    judged = report.get("judged", [])
    out.requests = (sum(j.get("requests_found", 0) for j in judged), sum(j.get("requests_judged", 0) for j in judged))
    out.notes = [f"{rel(j['path'])}: {j['note']}" for j in judged if j.get("note")]
    out.problems = [f"{rel(p['path'])}: {p.get('message') or p.get('reason') or p}" for p in report.get("problems", [])]
    return out


RUNNERS = ("text", "paths", "cli")
"""How a variant is linted: "text" (`lint_text` on each of its files in this worker process: the fastest),
"paths" (`lint_paths` on its directory: the command line's engine, passes and isolation, each file in a
supervised worker), "cli" (`cuentry lint --json --isolated` in a subprocess)."""


def lint_variant(v: Variant, toolkit: str = "13.0", runner: str = "paths") -> Outcome:
    """Write `v` into a directory of its own and lint it alone."""
    with tempfile.TemporaryDirectory(prefix="cuentry-variant-") as d:
        write(v, d)
        try:
            report = {"text": _text, "paths": _library, "cli": _cli}[runner](d, toolkit)
        except Exception as e:  # noqa: BLE001 -- a failed run is an outcome (a miss, or a false twin), not a stop
            out = Outcome(v.name, v.seed, v.families, v.faulty, tuple(sorted(v.expect)))
            out.problems = [f"the run failed: {type(e).__name__}: {e}"]
            return out
        return _outcome(v, report, d)


def _library(d: str, toolkit: str) -> dict[str, Any]:
    from cuentry.lint.engine import Settings, lint_paths

    return lint_paths([d], settings=Settings(toolkit=toolkit, pedantic=True), jobs=1).to_dict()


def _text(d: str, toolkit: str) -> dict[str, Any]:
    """`lint_paths`'s report of the directory, made of `lint_text` on each file (a header is a file of its own, as
    `lint_paths` has it; a row of a header reported from each file that expands it counts once)."""
    from cuentry.lint.engine import Settings, lint_text

    settings = Settings(toolkit=toolkit, pedantic=True)
    findings: list[dict[str, Any]] = []
    judged: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    seen: set[tuple[str, int, int, str]] = set()
    for path in sorted(str(p) for p in Path(d).rglob("*") if p.suffix in (".c", ".cpp", ".cu", ".h")):
        got, unit = lint_text(Path(path).read_text(), path, settings=settings)
        for f in got:
            key = (f.path, f.line, f.col, f.code)
            if f.path != path and key in seen:
                continue
            seen.add(key)
            findings.append(f.to_dict())
        if unit.problem:
            problems.append({"path": path, "message": unit.problem})
        else:
            judged.append({"path": path, "note": unit.note, "requests_found": unit.requests,
                           "requests_judged": unit.judged})
    return {"findings": findings, "judged": judged, "problems": problems}


def _cli(d: str, toolkit: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "cuentry", "lint", "--json", "--pedantic", "--isolated", "--toolkit", toolkit, d]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if res.returncode not in (0, 1):
        raise RuntimeError(f"cuentry lint exited {res.returncode}: {res.stderr.strip()[-300:]}")
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _task(args: tuple[Variant, str, str]) -> Outcome:
    return lint_variant(*args)


def run(vs: Sequence[Variant], *, jobs: int = 2, toolkit: str = "13.0", runner: str = "text",
        progress: Callable[[int, int], None] | None = None) -> list[Outcome]:
    """Lint every variant (in `jobs` processes); the outcomes in the order of `vs`. A variant whose process dies
    (libclang crashing under the "text" runner) is linted again by the "paths" runner, which isolates it."""
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {RUNNERS}")
    tasks = [(v, toolkit, runner) for v in vs]
    outs: list[Outcome | None] = [None] * len(tasks)
    done = 0
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(_task, t): i for i, t in enumerate(tasks)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                outs[i] = fut.result()
            except Exception:  # noqa: BLE001 -- the worker died: this variant, isolated
                outs[i] = lint_variant(vs[i], toolkit, "paths")
            done += 1
            if progress:
                progress(done, len(tasks))
    return [o for o in outs if o is not None]


@dataclass
class Tally:
    found: int = 0
    faulty: int = 0
    flagged: int = 0           # faulty variants not found that got another error or warning
    twins: int = 0
    false_twins: int = 0       # twins with at least one error or warning
    false_findings: int = 0

    @property
    def recall(self) -> float | None:
        return self.found / self.faulty if self.faulty else None

    def add(self, o: Outcome) -> None:
        if o.faulty:
            self.faulty += 1
            self.found += o.found
            self.flagged += o.flagged
        else:
            self.twins += 1
            self.false_twins += bool(o.false)
            self.false_findings += len(o.false)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "recall": None if self.recall is None else round(self.recall, 4)}


@dataclass
class Score:
    total: Tally
    by_depth: dict[int, Tally]
    by_family: dict[str, Tally]
    by_seed: dict[str, Tally]
    outcomes: list[Outcome]

    @property
    def goal_met(self) -> bool:
        """Issue 38's goal: recall >= 0.95 and no error or warning on any twin."""
        return (self.total.recall or 0.0) >= GOAL_RECALL and self.total.false_findings == 0

    def misses(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.faulty and not o.found]

    def false(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.false]

    def to_dict(self) -> dict[str, Any]:
        return {"goal": {"recall": GOAL_RECALL, "false_findings": 0, "met": self.goal_met},
                "total": self.total.to_dict(),
                "by_depth": {str(k): t.to_dict() for k, t in sorted(self.by_depth.items())},
                "by_family": {k: t.to_dict() for k, t in sorted(self.by_family.items())},
                "by_seed": {k: t.to_dict() for k, t in sorted(self.by_seed.items())},
                "variants": [{**asdict(o), "found": o.found if o.faulty else None,
                              "false": [list(f) for f in o.false]} for o in self.outcomes]}


def score(outcomes: Iterable[Outcome]) -> Score:
    """Tally outcomes: in total, per depth, per family (each variant counts for each of its families; the seeds
    themselves as "(seed)") and per seed."""
    outs = list(outcomes)
    total = Tally()
    by_depth: dict[int, Tally] = defaultdict(Tally)
    by_family: dict[str, Tally] = defaultdict(Tally)
    by_seed: dict[str, Tally] = defaultdict(Tally)
    for o in outs:
        total.add(o)
        by_depth[o.depth].add(o)
        by_seed[o.seed].add(o)
        for f in o.families or ("(seed)",):
            by_family[f].add(o)
    return Score(total, dict(by_depth), dict(by_family), dict(by_seed), outs)


def _pct(t: Tally) -> str:
    r = t.recall
    return f"{t.found}/{t.faulty} {r:.2f}" if r is not None else "-"


def _said(o: Outcome) -> str:
    """What the linter said of a missed variant, in a few words."""
    got = sorted({f"{code}/{sev}" for _, _, code, sev, _ in o.findings})
    parts = [f"got {', '.join(got) if got else 'nothing'}", f"requests {o.requests[1]}/{o.requests[0]} judged"]
    if o.problems:
        parts.append(f"problem: {o.problems[0][:100]}")
    elif o.notes:
        parts.append(f"note: {o.notes[0][:100]}")
    return "; ".join(parts)


def format_text(sc: Score, *, misses: int = 40, header: str = "") -> str:
    t = sc.total
    lines = [header] if header else []
    lines.append(f"recall {_pct(t)} (goal {GOAL_RECALL}); false errors/warnings on twins: {t.false_findings} "
                 f"on {t.false_twins} of {t.twins} twins (goal 0); goal {'met' if sc.goal_met else 'not met'}")
    lines.append(f"not found but given another error or warning: {t.flagged} of {t.faulty - t.found} misses")
    lines.append("by depth:   " + " | ".join(f"{d}: {_pct(x)}, false twins {x.false_twins}"
                                             for d, x in sorted(sc.by_depth.items())))
    width = max(map(len, sc.by_family), default=8)
    lines.append(f"by family:  {'family':{width}}  found/faulty recall   false twins")
    for name, x in sorted(sc.by_family.items(), key=lambda kv: ((kv[1].recall or 0.0), kv[0])):
        lines.append(f"            {name:{width}}  {_pct(x):>14}   {x.false_twins}/{x.twins}")
    lines.append("by seed:    " + " | ".join(f"{s} {_pct(x)}" + (f" (false {x.false_twins})" if x.false_twins else "")
                                             for s, x in sorted(sc.by_seed.items())))
    ms = sc.misses()
    if ms and misses > 0:
        lines.append(f"misses ({min(misses, len(ms))} of {len(ms)}):")
        for o in ms[:misses]:
            lines.append(f"  {o.name}: want {','.join(o.expect)}; {_said(o)}")
    fs = sc.false()
    if fs and misses > 0:
        lines.append(f"false findings on twins ({min(misses, len(fs))} of {len(fs)} twins):")
        for o in fs[:misses]:
            for path, line, code, sev, msg in o.false[:2]:
                lines.append(f"  {o.name}: {path}:{line}: {code}/{sev}: {msg[:140]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.lint_variants.c.score", description=__doc__.split("\n")[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", const="quick", dest="size",
                      help="every seed, each family on 3 seeds, one composition of 2 and of 3 per seed (~20 s)")
    size.add_argument("--full", action="store_const", const="full", dest="size",
                      help="every composition of 2, 40 of 3 per seed (long: thousands of variants)")
    ap.add_argument("--json", action="store_true", help="the score and every variant's outcome as JSON on stdout")
    ap.add_argument("--family", action="append", default=[], metavar="F",
                    help="only variants holding family F (repeat: all of them)")
    ap.add_argument("--seed", action="append", default=[], metavar="S", help="only seed S (repeat for more)")
    ap.add_argument("--max-depth", type=int, default=3, metavar="N", help="only compositions of at most N families")
    ap.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1), help="processes (default 2)")
    ap.add_argument("--toolkit", default="13.0", help="the CUDA headers cuentry writes and lints against (13.0)")
    ap.add_argument("--runner", choices=RUNNERS, default="text",
                    help="text: lint_text per file in the worker (fast, the default); paths: lint_paths per variant "
                         "(the CLI's engine and isolation, ~4x the time); cli: `cuentry lint --json` per variant")
    ap.add_argument("--misses", type=int, default=40, metavar="N", help="list at most N misses and false twins")
    ap.add_argument("--keep", metavar="DIR", help="also write every variant under DIR (to read or lint by hand)")
    ap.add_argument("--require-goal", action="store_true", help="exit 1 unless the goal of issue 38 is met")
    a = ap.parse_args(argv)
    try:
        vs = list(variants(a.size or "default", families=a.family, max_depth=a.max_depth, seeds=a.seed))
    except ValueError as e:
        ap.error(str(e))
    if not vs:
        ap.error(f"no variant of the {a.size or 'default'} size holds all of {', '.join(a.family)} "
                 f"at depth <= {a.max_depth}" + ("" if a.size == "full" else " (--full has every pair)"))
    if a.keep:
        for v in vs:
            write(v, os.path.join(a.keep, v.name))
    start = time.monotonic()

    def progress(i: int, n: int) -> None:
        if sys.stderr.isatty() and (i % 25 == 0 or i == n):
            print(f"\r{i}/{n} variants linted", end="" if i < n else "\n", file=sys.stderr, flush=True)

    sc = score(run(vs, jobs=a.jobs, toolkit=a.toolkit, runner=a.runner, progress=progress))
    took = time.monotonic() - start
    if a.json:
        print(json.dumps({"size": a.size or "default", "toolkit": a.toolkit, "runner": a.runner,
                          "seconds": round(took, 1),
                          **sc.to_dict()}, indent=1))
    else:
        head = (f"C/C++/CUDA variants ({a.size or 'default'} size, CUDA {a.toolkit} headers): "
                f"{sc.total.faulty} faulty, {sc.total.twins} twins, {took:.0f} s with -j {a.jobs}, runner {a.runner}")
        print(format_text(sc, misses=a.misses, header=head))
    return 1 if a.require_goal and not sc.goal_met else 0


if __name__ == "__main__":
    sys.exit(main())
