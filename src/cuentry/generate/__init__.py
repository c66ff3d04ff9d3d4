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
    """Plan ``manifest``'s table once and write it in ``language`` (``"c"`` or ``"python"``).

    Returns:
        The text and the [Plan][cuentry.generate.model.Plan] it was written from (what the CLI reports).

    Raises:
        ValueError: an unknown language.
        TableDeclarationError: a table the language cannot express (a C keyword as a member, ...).
    """
    from . import c, python

    p = plan(manifest)
    if language == "c":
        return Generated(language, c.render(p, manifest.cat), p)
    if language == "python":
        return Generated(language, python.render(p), p)
    raise ValueError(f"unknown language {language!r}: one of {', '.join(LANGUAGES)}")
