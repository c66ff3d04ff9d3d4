"""The record a variant generator yields, whatever the language: one faulty loader or its fixed twin, rewritten.

A generator starts from seeds (a loader with one serious fault, and its twin: the same loader done right) and
applies rewrite families that do not change what the code means (rename or wrap the lookup, move the version,
tabulate, ...). The linter's verdict must not change: the faulty variant still gets every code of `expect` (at
severity error or warning), and the twin gets no error or warning at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Variant"]


@dataclass(frozen=True, eq=False)
class Variant:
    """One variant: the files to write (relative path -> text; the loader is `main`, headers beside it) and what
    the linter must say about them."""

    seed: str                     # the seed's id ("driver_version_pin")
    families: tuple[str, ...]     # the rewrite families applied, in a canonical order (() for the seed itself)
    faulty: bool                  # the faulty loader (True) or its fixed twin (False)
    suffix: str                   # the main file's suffix: ".c", ".cpp", ".cu" (".py" for Python generators)
    files: Mapping[str, str]      # relative path -> text, every file of the variant (the main one and its headers)
    expect: frozenset[str]        # codes that must be reported at error or warning (empty for a twin)
    main: str = ""                # the relative path of the loader (default: "loader" + suffix)
    absent: Mapping[str, str] = field(default_factory=dict)   # headers deliberately missing (for compile checks)
    configs: tuple[tuple[str, ...], ...] = ((),)             # the flag sets each of which must compile

    @property
    def depth(self) -> int:
        """How many families were composed (0: the seed itself)."""
        return len(self.families)

    @property
    def name(self) -> str:
        """A stable, unique, path-safe name: seed/families/bad|good."""
        fams = "+".join(self.families) or "base"
        return f"{self.seed}/{fams}/{'bad' if self.faulty else 'good'}"

    @property
    def main_path(self) -> str:
        return self.main or f"loader{self.suffix}"
