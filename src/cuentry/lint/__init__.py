"""cuentry lint: wrong entry-point use in C, C++, CUDA and Python sources.

The rooms: `.engine` (files, reading, selection, suppression, the report),
`.preprocess` (the macro-bomb bound, header look-up), `.clang` (C, C++ and
CUDA on libclang) and `.python` (`ast`) (front ends: source to facts),
`.facts` (what a file says), `.rules` (each rule one unit: its check, its
page, its fix), `.fix` and `.apply` (the repairs, verified), `.writers` (the
output formats; `.sarif` is the SARIF one). Findings can be suppressed on
their line with `cuentry: ignore` or `cuentry: ignore[CE001,CE004]` in a
comment, or on the next line with `cuentry: ignore-next-line[...]`.
"""

from __future__ import annotations

from .engine import MAX_FILE_BYTES, Finding, Problem, Report, lint_paths, lint_text
from .rules import RULES
from .sarif import sarif

__all__ = ["MAX_FILE_BYTES", "RULES", "Finding", "Problem", "Report", "lint_paths", "lint_text", "sarif"]
