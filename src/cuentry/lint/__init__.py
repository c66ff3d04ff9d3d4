"""cuentry lint: wrong entry-point use in C, C++, CUDA and Python sources.

The rooms: `.engine` (files, reading, selection, suppression, the report),
`.preprocess` (the macro-bomb bound, header look-up), `.clang` (C, C++ and
CUDA on libclang) and `.python` (`ast`) (front ends: source to facts),
`.facts` (what a file says), `.rules` (the rules as
data, with examples), `.sarif` (the SARIF writer). Findings can be
suppressed on their line with `cuentry: ignore` or
`cuentry: ignore[CE001,CE004]` in a comment.
"""

from __future__ import annotations

from .engine import MAX_FILE_BYTES, Finding, Problem, Report, lint_paths, lint_text
from .rules import RULES
from .sarif import sarif

__all__ = ["MAX_FILE_BYTES", "RULES", "Finding", "Problem", "Report", "lint_paths", "lint_text", "sarif"]
