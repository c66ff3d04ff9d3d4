"""The output formats of `cuentry lint`, one module each, behind one registry.

A format is a module of this package with `render(run, style) -> Rendered` (see `_base`): `--output-format NAME`
finds it here, and a new format is one module (and its test). Writers return lines; only the CLI prints.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._base import PLAIN, Rendered, Run, Style, shown, shown_block, valid_json

__all__ = ["FORMATS", "PLAIN", "Rendered", "Run", "Style", "render", "shown", "shown_block", "valid_json"]


FORMATS: tuple[str, ...] = tuple(sorted((m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")),
                                        key=lambda name: (name != "text", name)))
"""Every format, `text` first: the modules of this package."""


def render(fmt: str, run: Run, style: Style = PLAIN) -> Rendered:
    """The run in the format `fmt` (one of `FORMATS`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r} (formats: {', '.join(FORMATS)})")
    module = importlib.import_module(f"{__name__}.{fmt}")
    got: Rendered = module.render(run, style)
    return got
