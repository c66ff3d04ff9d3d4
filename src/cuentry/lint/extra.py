"""The `lint` extra: the parsers C, C++ and CUDA files need, which the core library does not install.

`pip install cuentry` gives the calls, tables, `doctor`, `check`, `generate`, `trace` and the emulator
with no parser at all; `pip install 'cuentry[lint]'` adds libclang (the `libclang` wheel). Python files are
linted with `ast` either way. Nothing here is imported until a C-family file is linted.
"""

from __future__ import annotations

import importlib

from ..errors import UsageError

__all__ = ["HINT", "MODULES", "NOT_INSTALLED", "missing", "require"]

HINT = "pip install 'cuentry[lint]'"
"""The one command that installs what linting C, C++ and CUDA files needs."""
NOT_INSTALLED = f"linting C, C++ and CUDA files needs the lint extra: {HINT} (Python files lint without it)"
"""Why a C-family file is not linted without the extra (the message of `require`, and of such a file's problem)."""
MODULES = ("clang.cindex",)
"""The modules of the extra C-family linting cannot do without (libclang's bindings)."""


def missing() -> list[str]:
    """The modules of `MODULES` that cannot be imported (empty: the extra is installed)."""
    out = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            out.append(name)
    return out


def require() -> None:
    """Raise `UsageError` (exit 2), in one line naming the fix, when the extra is not installed."""
    if missing():
        raise UsageError(NOT_INSTALLED)
