"""Suppression comments that do nothing: `cuentry: ignore[...]` (or `cuentry: ignore-next-line[...]`) naming an
unknown rule, or on a line where the rules it names (or, for a bare one, any rule) found nothing (like ruff's
unused-noqa). Each is reported at the comment's line.

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
    for rule, hit in run(unit, cat):
        hits.setdefault(hit.line, set()).add(rule.code)
    comment_line = getattr(unit.suppressions, "comment_line", lambda line: line)
    out: list[Unused] = []
    for line, codes in sorted(unit.suppressions.items()):
        here = hits.get(line, set())
        at = comment_line(line)
        where = "this line" if at == line else "the next line"
        if codes is None:
            if not here & active and active == set(RULE_CODES):
                out.append((at, f"unused suppression: no rule finds anything on {where} (remove the comment)"))
            continue
        for c in sorted(codes):
            if c not in RULE_CODES:
                out.append((at, f"suppression names unknown rule {c!r} (the rules are CE001..{RULE_CODES[-1]})"))
            elif c in active and c not in here:
                out.append((at, f"unused suppression of {c}: it finds nothing on {where} (remove {c})"))
    return sorted(out)
