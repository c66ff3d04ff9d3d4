"""Applying `cuentry lint --fix`: the fixes of a report planned per file, each verified by linting the fixed
text again (with the same settings), withdrawn with a note when it does not verify, and written atomically.

The fixes themselves (which span, which kind) are [fix][cuentry.lint.fix]'s; this module sits above the
engine, which it runs to verify them.
"""

from __future__ import annotations

import difflib
import itertools
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..catalog import catalog
from .engine import MAX_FILE_BYTES, lint_text, read_source
from .facts import Unit
from .fix import Fix, candidate, position

__all__ = ["Plan", "Withdrawn", "diff", "plan", "write"]


@dataclass(frozen=True)
class Withdrawn:
    path: str
    line: int
    message: str


@dataclass
class Plan:
    """The fixes of a run: the new text of each file changed, the findings fixed, the fixes withdrawn."""

    texts: dict[str, str] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)
    applied: list[Any] = field(default_factory=list)
    withdrawn: list[Withdrawn] = field(default_factory=list)
    regions: dict[tuple[str, str, int, int], tuple[Fix, list[tuple[int, int, int, int, str]]]] = field(
        default_factory=dict)   # (path, code, line, col) -> the fix and its edits as (line, col, end line, end col, new)

    remaining: dict[str, set[tuple[str, int, int]]] = field(default_factory=dict)   # a fixed file's findings after

    def remove_applied(self, report: Any) -> None:
        """Drop from `report` the findings this plan fixed, and those its fixes made go away."""
        fixed = {(f.path, f.code, f.line, f.col) for f in self.applied}
        report.findings = [f for f in report.findings if (f.path, f.code, f.line, f.col) not in fixed and (
            f.path not in self.remaining or (f.code, f.line, f.col) in self.remaining[f.path])]


def _apply(text: str, fixes: Sequence[Fix]) -> str | None:
    """The text with every fix's edits; None when two edits overlap."""
    edits = sorted({e for f in fixes for e in f.edits}, key=lambda e: e.start)
    for x, y in itertools.pairwise(edits):
        if y.start < x.end:
            return None
    out = text
    for e in reversed(edits):
        out = out[:e.start] + e.new + out[e.end:]
    return out


def _verify(text: str, path: str, fixes: Sequence[Fix], before: list[Any], unit: Unit, lint: Any,
            after: list[Any] | None = None) -> str:
    """Why the fixed text fails verification ("" when it passes); `after` receives the fixed text's findings."""
    new = _apply(text, fixes)
    if new is None:
        return "two fixes overlap"
    found, u2 = lint(new, path)
    if after is not None:
        after[:] = found
    if u2.engine != unit.engine:
        return f"the fixed file is no longer judged by {unit.engine} (it may not parse)"
    fixed = {(f.code, f.line) for f in fixes}
    left = [f for f in found if (f.code, f.line) in fixed]
    if left:
        return f"{left[0].code} is still found on line {left[0].line} after the fix"
    old = {(f.code, f.line) for f in before}
    new_ones = [f for f in found if (f.code, f.line) not in old]
    if new_ones:
        return f"the fix brings a new {new_ones[0].code} on line {new_ones[0].line}"
    return ""


def _file(path: str, text: str, settings: Any, select: Any, ignore: Any, unsafe: bool,
          p: Plan, wanted: list[Any]) -> None:
    cat = catalog()

    def lint(t: str, name: str) -> Any:
        return lint_text(t, name, select=select, ignore=ignore, cat=cat, settings=settings)

    before, unit = lint(text, path)
    fixes: list[tuple[Any, Fix]] = []
    for f in before:
        fx = candidate(unit, text, f.code, f.line, f.col, cat, settings.toolkit)
        if fx is not None and (fx.kind == "safe" or unsafe) and any(
                (w.code, w.line, w.col) == (f.code, f.line, f.col) for w in wanted):
            fixes.append((f, fx))
    if not fixes:
        return
    after: list[Any] = []
    if _verify(text, path, [fx for _, fx in fixes], before, unit, lint, after):
        fixes = _one_by_one(path, text, fixes, before, unit, lint, p, after)
    if fixes:
        new = _apply(text, [fx for _, fx in fixes])
        assert new is not None
        p.texts[path], p.originals[path] = new, text
        p.applied.extend(f for f, _ in fixes)
        p.remaining[path] = {(f.code, f.line, f.col) for f in after}
        for f, fx in fixes:
            p.regions[(path, f.code, f.line, f.col)] = (fx, [(*position(text, e.start), *position(text, e.end), e.new)
                                                             for e in fx.edits])


def _one_by_one(path: str, text: str, fixes: list[tuple[Any, Fix]], before: list[Any], unit: Unit, lint: Any,
                p: Plan, after: list[Any]) -> list[tuple[Any, Fix]]:
    """The fixes that verify each on its own and then together (the others withdrawn, with why)."""
    good = []
    for f, fx in fixes:
        one = _verify(text, path, [fx], before, unit, lint)
        if one:
            p.withdrawn.append(Withdrawn(path, f.line, f"{f.code} ({fx.what}): {one}"))
        else:
            good.append((f, fx))
    if good and _verify(text, path, [fx for _, fx in good], before, unit, lint, after):
        p.withdrawn.extend(Withdrawn(path, f.line, f"{f.code} ({fx.what}): the fixes together do not verify")
                           for f, fx in good)
        return []
    return good


def plan(report: Any, settings: Any, *, select: Any = None, ignore: Any = None, unsafe: bool = False,
         verify: bool = True) -> Plan:
    """The fixes for the report's findings (`verify` False: only mark each finding's fix kind)."""
    p = Plan()
    allowed = ("safe", "unsafe") if unsafe else ("safe",)
    by_path: dict[str, list[Any]] = {}
    for f in report.findings:
        if f.fix in allowed:
            by_path.setdefault(f.path, []).append(f)
    if not verify:
        return p
    for path, wanted in by_path.items():
        text = _plain(path)
        if text is None:
            p.withdrawn.append(Withdrawn(path, wanted[0].line, "not rewritten: the file is not plain UTF-8 "
                                                               "(a byte-order mark or bytes that are not UTF-8)"))
            continue
        _file(path, text, settings, select, ignore, unsafe, p, wanted)
    return p


def _plain(path: str) -> str | None:
    """The file's text when its bytes are plain UTF-8 (no BOM, nothing replaced): only those are rewritten."""
    try:
        text = read_source(path, MAX_FILE_BYTES)
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    return text if raw == text.encode("utf-8") else None


def diff(old: str, new: str, name: str) -> str:
    """A unified diff of one file's fixes."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))


def write(path: str, text: str) -> None:
    """Replace `path`'s text atomically (a temporary file in its directory renamed over it), keeping its mode."""
    d = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".cuentry-fix-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
