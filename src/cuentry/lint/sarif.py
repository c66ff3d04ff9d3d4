"""The SARIF 2.1.0 writer, kept under its old name: it is [writers.sarif][cuentry.lint.writers.sarif]."""

from __future__ import annotations

from .writers.sarif import SCHEMA, language, sarif

__all__ = ["SCHEMA", "language", "sarif"]
