"""Measure cuentry lint on code we did not write, against hand-judged expectations.

The repositories are fetched locally (never into the repository); `tests/lint_eval/judged.toml`
lists, for each repository, its commit and what was read, and one `[[judged]]` entry per fault
or finding: a finding the linter reported (`verdict = "true"` or `"false"`) or a fault found by
reading the loader that the linter did not report (`verdict = "missed"`), with `serious` (a wrong
ABI bound, a call that never resolves, undefined behaviour) and `why`.

This runs `cuentry lint --json --pedantic` (libclang, the one engine of the C family; notes too: a
harmless fault reported as a note is found) over every repository and reports:

* precision: true findings / judged findings reported (strict: a note judged false counts against it);
* precision of the default output: the same over the findings that are not notes;
* recall: faults reported / all faults (the true findings and the missed ones);
* recall on serious faults, the same over the serious ones;
* findings nobody judged yet (they count in neither number; judge them).

A "missed" fault that the linter does report counts as found. Repositories carry a
`set`: "development" (looked at while the linter was being improved) or "held-out" (judged only
after); each set is scored on its own.

    python tools/lint_eval.py --root DIR [--set held-out] [--json] [--dump DIR | --from-dump DIR]

`--root` is the folder holding one checkout per repository (each in its `dir`); without it,
`$CUENTRY_EVAL_ROOT` is used.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JUDGED = Path(__file__).resolve().parent.parent / "tests" / "lint_eval" / "judged.toml"
VERDICTS = ("true", "false", "missed")


@dataclass
class Score:
    engine: str
    reported: int = 0
    true: int = 0
    false: int = 0
    unjudged: list[str] = field(default_factory=list)
    faults: int = 0
    found: int = 0
    serious: int = 0
    serious_found: int = 0
    as_notes: int = 0          # true findings reported with severity "note" (shown with --pedantic)
    default_true: int = 0      # true findings that are not notes (the default output's)
    default_false: int = 0     # false findings that are not notes
    c_files: int = 0           # C-family files judged (each by clang, the one engine)
    missed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "reported": self.reported, "true": self.true, "false": self.false,
                "unjudged": self.unjudged, "faults": self.faults, "found": self.found, "serious": self.serious,
                "serious_found": self.serious_found, "precision": _ratio(self.true, self.true + self.false),
                "recall": _ratio(self.found, self.faults), "serious_recall": _ratio(self.serious_found, self.serious),
                "missed": self.missed, "seconds": round(self.seconds, 1), "errors": self.errors,
                "as_notes": self.as_notes, "c_files": self.c_files,
                "default_precision": _ratio(self.default_true, self.default_true + self.default_false)}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    for j in data.get("judged", []):
        if j.get("verdict") not in VERDICTS:
            raise SystemExit(f"{path}: verdict must be one of {VERDICTS}: {j}")
        for key in ("repo", "commit", "path", "line", "rule", "serious", "why"):
            if key not in j:
                raise SystemExit(f"{path}: judged entry without {key!r}: {j}")
    return data


DUMPED = ("clang", "default")
"""Where `--dump` writes each repository's JSON (`DIR/clang/`), and where `--from-dump` looks, in order (the
folder of the one engine; `default/`, where runs without an engine name wrote it)."""


def lint_repo(repo: dict[str, Any], root: Path, dump: Path | None = None,
              from_dump: Path | None = None) -> tuple[list[dict[str, Any]], str, list[str]]:
    """The findings (paths relative to the repository), an error, and the engine that judged each C file.

    With `dump`, the linter's JSON is also written to `dump/clang/<dir>.json` (to judge new findings);
    with `from_dump`, that saved JSON is scored instead of running the linter (after new judgements).
    """
    base = root / repo["dir"]
    if from_dump is not None:
        saved = next((p for d in DUMPED if (p := from_dump / d / f"{repo['dir']}.json").is_file()),
                     from_dump / DUMPED[0] / f"{repo['dir']}.json")
        if not saved.is_file():
            return [], f"{repo['name']}: no saved lint output {saved}", []
        doc = json.loads(saved.read_text(encoding="utf-8"))
        for f in doc["findings"]:
            f["path"] = os.path.relpath(f["path"], base)
        return doc["findings"], "", [j["engine"] for j in doc.get("judged", [])]
    if not base.is_dir():
        return [], f"{repo['name']}: not found under {root} (fetch it at {repo['commit']})", []
    argv = [sys.executable, "-m", "cuentry", "lint", "--json", "--pedantic"]   # notes too: a harmless fault
    # reported as a note is found
    for inc in repo.get("include", []):
        argv += ["-I", str(base / inc)]
    argv.append(str(base))
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        return [], f"{repo['name']}: lint exited {proc.returncode}: {proc.stderr.strip()[:300]}", []
    doc = json.loads(proc.stdout)
    if dump is not None:
        out = dump / DUMPED[0] / f"{repo['dir']}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(proc.stdout, encoding="utf-8")
    for f in doc["findings"]:
        f["path"] = os.path.relpath(f["path"], base)
    return doc["findings"], "", [j["engine"] for j in doc.get("judged", [])]


def score(data: dict[str, Any], root: Path, subset: str, dump: Path | None = None,
          from_dump: Path | None = None) -> Score:
    import time

    s = Score(f"clang ({subset})")
    repos = [r for r in data["repo"] if r.get("set", "development") == subset]
    names = {r["name"] for r in repos}
    judged = {(j["repo"], j["path"], j["line"], j["rule"]): j for j in data.get("judged", []) if j["repo"] in names}
    reported: set[tuple[str, str, int, str]] = set()
    t0 = time.perf_counter()
    for repo in repos:
        findings, err, engines = lint_repo(repo, root, dump, from_dump)
        if err:
            s.errors.append(err)
            continue
        s.c_files += len(engines)
        for f in findings:
            key = (repo["name"], f["path"], f["line"], f["code"])
            if key in reported:
                continue
            reported.add(key)
            j = judged.get(key)
            if j is None:
                s.unjudged.append(f"{repo['name']} {f['path']}:{f['line']} {f['code']}")
                continue
            s.reported += 1
            note = f.get("severity") == "note"
            if j["verdict"] == "false":
                s.false += 1
                s.default_false += not note
            else:
                s.true += 1
                s.as_notes += note
                s.default_true += not note
    s.seconds = time.perf_counter() - t0
    linted = names - {e.split(":")[0] for e in s.errors}
    for key, j in judged.items():
        if j["verdict"] == "false" or j["repo"] not in linted:
            continue
        s.faults += 1
        s.serious += bool(j["serious"])
        if key in reported:
            s.found += 1
            s.serious_found += bool(j["serious"])
        else:
            s.missed.append(f"{j['repo']} {j['path']}:{j['line']} {j['rule']}{' (serious)' if j['serious'] else ''}")
    return s


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.environ.get("CUENTRY_EVAL_ROOT"),
                    help="where the repositories are checked out, one folder each (default: $CUENTRY_EVAL_ROOT)")
    ap.add_argument("--judged", default=str(JUDGED))
    ap.add_argument("--set", dest="sets", action="append", help="only these sets (development, held-out, ...)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dump", metavar="DIR", help="also write each repository's lint JSON to DIR/clang/<dir>.json")
    ap.add_argument("--from-dump", metavar="DIR", help="score the JSON saved by --dump instead of linting (no timing)")
    a = ap.parse_args()
    if not a.root:
        ap.error("give --root DIR (the folder holding one checkout per repository) or set CUENTRY_EVAL_ROOT")
    data = load(Path(a.judged))
    subsets = sorted({r.get("set", "development") for r in data["repo"]} & set(a.sets or [r.get("set", "development")
                                                                                        for r in data["repo"]]))
    dump = Path(a.dump) if a.dump else None
    from_dump = Path(a.from_dump) if a.from_dump else None
    scores = [score(data, Path(a.root), sub, dump, from_dump) for sub in subsets]
    if a.json:
        print(json.dumps([sc.to_dict() for sc in scores], indent=2))
        return 0
    print("| engine | findings judged | true | false | precision | precision, default output | faults | found | "
          "recall | serious | serious found | serious recall | true as notes | C files | unjudged | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for sc in scores:
        d = sc.to_dict()
        print(f"| {sc.engine} | {sc.reported} | {sc.true} | {sc.false} | {_pct(d['precision'])} | "
              f"{sc.default_true}/{sc.default_true + sc.default_false} ({_pct(d['default_precision'])}) | {sc.faults} | "
              f"{sc.found} | {_pct(d['recall'])} | {sc.serious} | {sc.serious_found} | {_pct(d['serious_recall'])} | "
              f"{sc.as_notes} | {sc.c_files} | {len(sc.unjudged)} | {d['seconds']} |")
    for sc in scores:
        for line in sc.errors + [f"unjudged ({sc.engine}): {u}" for u in sc.unjudged] + \
                [f"missed ({sc.engine}): {m}" for m in sc.missed]:
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
