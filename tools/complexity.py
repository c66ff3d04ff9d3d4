"""The complexity limit as radon counts it: no function above 20, no CLI function (a printer) above 15.

ruff's C901 (mccabe, at 15) counts a boolean operator or a comprehension as nothing; radon counts each,
so a function can pass ruff and still be a 39 under radon. This script is the radon half of the limit:

    python tools/complexity.py            # exit 1 and list each offender; 0 when none
    python tools/complexity.py --strict   # also exit 1 for an allowlist entry that no longer offends
    python tools/complexity.py --list     # every function above the limits, allowlisted or not

``tools/complexity_allowlist.txt`` lists offenders waiting for their owner's fix (``path:Name.method``,
one a line, ``#`` comments): they are reported but do not fail. An entry that no longer offends is
named (with ``--strict`` it fails) so that it is removed: the list only shrinks, to an empty file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "cuentry"
ALLOWLIST = ROOT / "tools" / "complexity_allowlist.txt"
LIMIT = 20
CLI_LIMIT = 15
SKIP = {"_catalog_data.py"}  # generated data


def limit_for(rel: str) -> int:
    """The limit of a function in ``rel`` (a path under src/cuentry): CLI code prints, so it gets 15."""
    return CLI_LIMIT if rel.startswith("cli/") else LIMIT


def measure(src: Path = SRC) -> list[tuple[str, int, int]]:
    """Every function or method above its limit: (``path:Name.method``, complexity, limit)."""
    found: list[tuple[str, int, int]] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if path.name in SKIP:
            continue
        limit = limit_for(rel)
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if not isinstance(block, Function):
                continue  # classes: radon averages their methods, which are measured themselves
            name = f"{block.classname}.{block.name}" if block.classname else block.name
            if block.complexity > limit:
                found.append((f"{rel}:{name}", block.complexity, limit))
    return found


def allowlisted(path: Path = ALLOWLIST) -> set[str]:
    if not path.exists():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


def check(found: list[tuple[str, int, int]], allowed: set[str]) -> list[str]:
    """The offenders that are not allowlisted."""
    return [f"{n}: complexity {c} (limit {lim})" for n, c, lim in found if n not in allowed]


def stale(found: list[tuple[str, int, int]], allowed: set[str]) -> list[str]:
    """Allowlist entries that no longer offend (fixed, renamed or removed): to be deleted."""
    names = {n for n, _, _ in found}
    return [f"{n}: allowlisted but within its limit now: remove it from {ALLOWLIST.name}"
            for n in sorted(allowed - names)]


def main(argv: list[str]) -> int:
    found = measure()
    if "--list" in argv:
        for n, c, lim in sorted(found, key=lambda x: -x[1]):
            print(f"{c:3d} > {lim}  {n}")
        return 0
    problems = check(found, allowlisted())
    old = stale(found, allowlisted())
    for p in problems + old:
        print(p)
    if "--strict" in argv:
        problems += old
    waiting = len([n for n, _, _ in found if n in allowlisted()])
    if waiting:
        print(f"({waiting} allowlisted offenders wait for their owners: {ALLOWLIST.relative_to(ROOT)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
