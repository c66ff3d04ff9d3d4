"""Code generation from a manifest: a C/C++ loader header and a typed Python table module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .c import generate_c
from .model import Generated, Plan, plan
from .python import generate_python

if TYPE_CHECKING:
    from ..manifest import Manifest

__all__ = ["LANGUAGES", "Generated", "Plan", "generate", "generate_c", "generate_python", "plan"]

LANGUAGES = ("c", "python")


def generate(manifest: Manifest, language: str) -> Generated:
    """Write `manifest`'s table in `language` (`"c"` or `"python"`), planned once.

    Returns:
        The text and the [Plan][cuentry.generate.model.Plan] it was written from (what the CLI
        reports): [plan][cuentry.generate.model.plan] plans a manifest once, so the generator and
        this report share one plan object.

    Raises:
        ValueError: an unknown language.
        ManifestError: an entry the language cannot express, at its line and column.
        TableDeclarationError: a table the language cannot express (a C keyword as a member, ...).
    """
    writers = {"c": generate_c, "python": generate_python}
    if language not in writers:
        raise ValueError(f"unknown language {language!r}: one of {', '.join(LANGUAGES)}")
    text = writers[language](manifest)
    return Generated(language, text, plan(manifest))
