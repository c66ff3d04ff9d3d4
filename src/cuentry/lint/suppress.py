"""Suppression comments that do nothing: `cuentry: ignore[...]` naming an unknown rule, or on a line where
the rules it names (or, for a bare `cuentry: ignore`, any rule) found nothing (like ruff's unused-noqa).

A rule that the run does not select cannot be judged used or not, so its suppressions are not reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..catalog import Catalog
from .facts import Unit
from .rules import RULE_CODES, run

__all__ = ["Unused", "unused"]


Unused = tuple[int, str]   # (line, message)


def unused(unit: Unit, cat: Catalog, selected: Iterable[str] | None = None) -> list[Unused]:
    """The suppressions of a file that name an unknown code or silence nothing, in line order."""
    if not unit.suppressions:
        return []
    active = set(RULE_CODES) if selected is None else set(selected)
    hits: dict[int, set[str]] = {}
    for rule, (line, *_rest) in run(unit, cat):
        hits.setdefault(line, set()).add(rule.code)
    out: list[Unused] = []
    for line, codes in sorted(unit.suppressions.items()):
        here = hits.get(line, set())
        if codes is None:
            if not here & active and active == set(RULE_CODES):
                out.append((line, "unused suppression: no rule finds anything on this line (remove the comment)"))
            continue
        for c in sorted(codes):
            if c not in RULE_CODES:
                out.append((line, f"suppression names unknown rule {c!r} (the rules are CE001..{RULE_CODES[-1]})"))
            elif c in active and c not in here:
                out.append((line, f"unused suppression of {c}: it finds nothing on this line (remove {c})"))
    return out
