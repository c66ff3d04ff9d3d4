"""README's environment table names every variable cuentry reads, and only those (issue 25.3)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# How cuentry reads a variable: os.environ / getenv / the C fake driver's env_int, a *_ENV constant, a knob tuple.
_READ = re.compile(r"""(?:environ(?:\.get)?\(|environ\[|getenv\(|env_int\()\s*["']([A-Z][A-Z0-9_]+)["']"""
                   r"""|\b[A-Z_]*ENV\s*=\s*["']([A-Z][A-Z0-9_]+)["']|\(["'](CUENTRY_[A-Z0-9_]+)["'],\s*\d+\)""")
SOURCES = [*ROOT.joinpath("src").rglob("*.py"), *ROOT.joinpath("src").rglob("*.c"),
           *ROOT.joinpath("src").rglob("*.c.in"), ROOT / "hatch_build.py"]
# Read, but not cuentry's to document: the shell's own.
NOT_OURS = {"PATH", "HOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "TMPDIR"}


def read_in_source() -> set[str]:
    names: set[str] = set()
    for p in SOURCES:
        for m in _READ.finditer(p.read_text(encoding="utf-8", errors="replace")):
            names.add(next(g for g in m.groups() if g))
    return names - NOT_OURS


def documented() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Environment"):]
    table = table[: table.index("\n## ", 3)]
    names: set[str] = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1]))
    return names


def test_the_source_scan_finds_what_it_should() -> None:
    found = read_in_source()
    assert {"CUENTRY_DRIVER", "CUENTRY_FAKE_DEVICE_COUNT", "CUENTRY_TRACE_DIR", "CUENTRY_DEBUG", "XDG_CACHE_HOME"} <= found


def test_every_variable_read_is_documented() -> None:
    missing = read_in_source() - documented()
    assert not missing, f"add these to README.md's environment table: {sorted(missing)}"


def test_every_documented_variable_is_read() -> None:
    stale = documented() - read_in_source() - {"CUDA_PATH", "CUDA_HOME"}  # read by cuda-pathfinder and loader
    assert not stale, f"README.md documents variables nothing reads: {sorted(stale)}"
