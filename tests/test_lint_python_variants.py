"""The Python engine judges meaning, not spelling: semantics-preserving variants of faulty loaders keep their finding.

tests/lint_variants/python/generator.py rewrites each faulty seed (and its fixed twin) by every family alone and in
compositions of two and three: where the handle comes from, how a name is built and taken, tables of prototypes,
wrappers, methods, where a request's version comes from. The goal of issue 39: recall at least 0.95 over the faulty
variants, and no error or warning on any fixed twin. Python files lint without libclang, so this runs everywhere.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from cuentry.lint import lint_text

GENERATOR = Path(__file__).parent / "lint_variants" / "python" / "generator.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cuentry_py_variants", GENERATOR)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()
VARIANTS = list(GEN.variants())


def _found(text: str, rule: str) -> bool:
    findings, _ = lint_text(text, "variant.py")
    return any(f.code == rule and f.severity in ("error", "warning") for f in findings)


def test_the_generator_covers_the_issue() -> None:
    """At least six faulty seeds, every family applied alone, compositions of two and three."""
    assert len(GEN.SEEDS) >= 6
    sizes = Counter(len(v.families) for v in VARIANTS)
    assert sizes[1] >= 30 and sizes[2] >= 60 and sizes[3] >= 30, sizes
    applied = {f for v in VARIANTS for f in v.families}
    assert set(GEN.EXPORT_FAMILIES) | set(GEN.REQUEST_FAMILIES) | set(GEN.CFFI_FAMILIES) <= applied
    for v in VARIANTS:
        compile(v.faulty, f"{v.seed}{v.families}", "exec")     # every variant is a Python program
        compile(v.fixed, f"{v.seed}{v.families}", "exec")


def test_recall_on_variants_and_clean_twins() -> None:
    missed = [v for v in VARIANTS if not _found(v.faulty, v.rule)]
    recall = 1 - len(missed) / len(VARIANTS)
    by_family = Counter(f for v in missed for f in (v.families or ("plain",)))
    assert recall >= 0.95, f"recall {recall:.3f} on {len(VARIANTS)} variants; missed by family: {dict(by_family)}"
    noisy = []
    for v in VARIANTS:
        findings, _ = lint_text(v.fixed, "twin.py")
        bad = [(f.line, f.code, f.severity) for f in findings if f.severity in ("error", "warning")]
        if bad:
            noisy.append((v.seed, v.families, bad))
    assert not noisy, f"{len(noisy)} fixed twins with an error or a warning: {noisy[:5]}"


@pytest.mark.parametrize("seed", GEN.SEEDS, ids=lambda s: s.name)
def test_each_seed_plain(seed: object) -> None:
    """The seeds themselves, unrewritten: the fault found, the twin clean (a failing seed names itself here)."""
    plain = next(v for v in VARIANTS if v.seed == seed.name and not v.families)   # type: ignore[attr-defined]
    assert _found(plain.faulty, plain.rule), plain.faulty
    findings, _ = lint_text(plain.fixed, "twin.py")
    assert not [f for f in findings if f.severity in ("error", "warning")], plain.fixed
