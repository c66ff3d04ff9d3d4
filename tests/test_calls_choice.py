"""The call backend is decided once per process, in calls/choice.py, and calls/ has no import cycle (issue 23)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cuentry.calls

CALLS = Path(cuentry.calls.__file__).parent

READ_ONCE = r"""
import json, os, sys
import cuentry
from cuentry.calls import Out, choice
os.environ["CUENTRY_BACKEND"] = sys.argv[2]  # too late: the choice was made at import
d = cuentry.Driver.load(sys.argv[1])
fn = d.call("cuCtxGetCurrent", 4000)
print(json.dumps([fn.backend, choice.backend()["name"], Out.__mro__[1].__name__]))
"""


def _read_once(first: str, later: str, fake: str) -> Any:
    env = {**os.environ, "CUENTRY_BACKEND": first}
    r = subprocess.run([sys.executable, "-c", READ_ONCE, fake, later], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_the_backend_is_read_once(fake: dict[str, str], fake_version: Any) -> None:
    assert _read_once("pure", "compiled", fake["full"]) == ["pure", "pure", "PyOutBase"]
    if cuentry.calls.choice.extension_module() is None:
        pytest.skip("the compiled extension is not installed")
    # the Out base and every bind agree: both come from the one choice
    assert _read_once("auto", "pure", fake["full"]) == ["compiled", "compiled", "OutBase"]


def test_an_invalid_backend_fails_the_bind_not_the_import(fake: dict[str, str], fake_version: Any) -> None:
    env = {**os.environ, "CUENTRY_BACKEND": "fastest"}
    code = ("import sys, cuentry\nfrom cuentry.calls import choice\nprint(choice.backend()['name'])\n"
            "d = cuentry.Driver.load(sys.argv[1])\n"
            "try:\n    d.call('cuCtxGetCurrent', 4000)\nexcept cuentry.CuentryError as exc:\n"
            "    print(type(exc).__name__, exc.hint)\n")
    r = subprocess.run([sys.executable, "-c", code, fake["full"]], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0] == "invalid" and lines[1].startswith("UsageError") and "auto, pure, compiled" in lines[1]


def _imports(path: Path, mods: set[str]) -> set[str]:
    """The calls/ modules a module imports, at its top or inside its functions (TYPE_CHECKING blocks aside)."""
    out: set[str] = set()

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                walk(node.orelse)
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                    names = [sub.module.split(".")[0]] if sub.module else [a.name for a in sub.names]
                    out.update(n for n in names if n in mods)

    walk(ast.parse(path.read_text()).body)
    return out


def test_calls_has_no_import_cycle() -> None:
    mods = {p.stem: p for p in CALLS.glob("*.py") if p.stem != "__init__"}
    graph = {m: _imports(p, set(mods)) for m, p in mods.items()}
    assert graph["choice"] == set()  # the decision imports nothing of the call layer
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in graph[m]:
            assert state.get(n) != 1, f"import cycle in calls/: {' -> '.join([*path, m, n])}"
            if n not in state:
                visit(n, [*path, m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


@pytest.mark.parametrize("module", sorted(p.stem for p in CALLS.glob("*.py") if p.stem not in ("__init__", "_fastgen")))
def test_each_calls_module_imports_first(module: str) -> None:
    r = subprocess.run([sys.executable, "-c", f"import cuentry.calls.{module}"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
