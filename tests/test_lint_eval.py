"""tools/lint_eval.py scores saved lint output against hand judgements, and needs a root that is not a machine path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tools" / "lint_eval.py"

JUDGED = """
[[repo]]
name = "acme/loader"
commit = "0000000000000000000000000000000000000000"
dir = "acme+loader"
include = []
read = "a test"
set = "dev-x"

[[judged]]
repo = "acme/loader"
commit = "0000000000000000000000000000000000000000"
path = "src/load.c"
line = 3
rule = "CE011"
verdict = "missed"
serious = true
why = "found by the linter"

[[judged]]
repo = "acme/loader"
commit = "0000000000000000000000000000000000000000"
path = "src/load.c"
line = 9
rule = "CE004"
verdict = "missed"
serious = false
why = "not found by the linter"

[[judged]]
repo = "acme/loader"
commit = "0000000000000000000000000000000000000000"
path = "src/load.c"
line = 5
rule = "CE010"
verdict = "false"
serious = false
why = "pedantic"
"""


def _run(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--judged", str(tmp / "judged.toml"), *args],
                          capture_output=True, text=True, timeout=120, env=env, check=False)


def test_from_dump_scores_saved_output(tmp_path: Path) -> None:
    (tmp_path / "judged.toml").write_text(JUDGED, encoding="utf-8")
    root = tmp_path / "root"
    (root / "acme+loader").mkdir(parents=True)
    saved = tmp_path / "dump" / "clang" / "acme+loader.json"
    saved.parent.mkdir(parents=True)
    base = root / "acme+loader" / "src" / "load.c"
    saved.write_text(json.dumps({"findings": [
        {"path": str(base), "line": 3, "code": "CE011", "severity": "error"},
        {"path": str(base), "line": 5, "code": "CE010", "severity": "note"},
        {"path": str(base), "line": 7, "code": "CE006", "severity": "warning"},
    ], "judged": [{"path": str(base), "engine": "clang"}]}), encoding="utf-8")
    proc = _run(tmp_path, "--root", str(root), "--from-dump", str(tmp_path / "dump"), "--json")
    assert proc.returncode == 0, proc.stderr
    (score,) = json.loads(proc.stdout)
    assert (score["true"], score["false"], score["found"], score["faults"]) == (1, 1, 1, 2)
    assert (score["serious"], score["serious_found"]) == (1, 1)
    assert (score["precision"], score["default_precision"]) == (0.5, 1.0)   # the false note counts only strictly
    assert score["unjudged"] == ["acme/loader src/load.c:7 CE006"]
    assert score["missed"] == ["acme/loader src/load.c:9 CE004"]


def test_a_root_is_required(tmp_path: Path) -> None:
    (tmp_path / "judged.toml").write_text(JUDGED, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CUENTRY_EVAL_ROOT"}
    proc = _run(tmp_path, env=env)
    assert proc.returncode == 2
    assert "--root" in proc.stderr and "CUENTRY_EVAL_ROOT" in proc.stderr
