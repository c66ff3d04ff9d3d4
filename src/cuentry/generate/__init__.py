"""Code generation from a manifest: a C/C++ loader header and a typed Python table module."""

from __future__ import annotations

from .c import generate_c
from .python import generate_python

__all__ = ["generate_c", "generate_python"]
