"""The C engine judges meaning, not spelling: semantics-preserving variants of faulty loaders keep their finding.

tests/lint_variants/c rewrites 19 faulty seed loaders (and their fixed twins) by each family alone and in
compositions (the quick size: every family on three seeds, one composition of two per seed). The goal of issue 38:
recall at least 0.95 over the faulty variants, and no error or warning on any fixed twin.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.lint_variants.c.generate import variants
from tests.lint_variants.c.score import GOAL_RECALL, Outcome, run, score


@pytest.fixture(scope="module")
def quick() -> list[Outcome]:
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang is not installed (the lint extra)")
    return run(list(variants("quick")), jobs=2)


def test_quick_variants_meet_the_goal(quick: list[Outcome]) -> None:
    sc = score(quick)
    assert sc.total.faulty >= 150 and sc.total.twins == sc.total.faulty
    missed = [(o.seed, o.families) for o in sc.misses()]
    assert (sc.total.recall or 0.0) >= GOAL_RECALL, missed
    assert sc.total.false_findings == 0, [(o.seed, o.families, o.false) for o in sc.false()]


def test_the_scorer_counts_a_miss_and_a_false_twin() -> None:
    """The scorer can fail: a faulty variant whose fault was taken out is missed; a twin given the fault is false."""
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang is not installed (the lint extra)")
    faulty = next(v for v in variants("quick") if v.faulty and v.seed == "driver_version_pin" and not v.families)
    twin = next(v for v in variants("quick") if not v.faulty and v.seed == "driver_version_pin" and not v.families)
    missed, false = run([replace(faulty, files=twin.files), replace(twin, files=faulty.files)], jobs=1)
    assert missed.faulty and not missed.found
    assert not false.faulty and false.false
