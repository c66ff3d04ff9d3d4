"""The catalog's one verdict on a request, as lint asks it: below the rules and their fixes, which both ask.

[Catalog.judge][cuentry.catalog.Catalog.judge] decides; this module only maps a request's facts (its API, its
flags) onto the judge's arguments.
"""

from __future__ import annotations

from ..catalog import Abi, Catalog, Verdict
from ..names import FLAGS, VERSIONED_APIS
from .facts import Query

__all__ = ["bound", "verdict"]


def verdict(q: Query, cat: Catalog, pin: int | None, *, floor: int = 0, variant: str | None = None) -> Verdict:
    """The catalog's one verdict on a request ([Catalog.judge][cuentry.catalog.Catalog.judge]): the ABI it
    binds and its faults. Lint adds only what the catalog cannot know (the pointer's type, the results
    left unchecked, wrapper context)."""
    flags = FLAGS.get(q.flags_mode) if q.flags_mode else None
    api = q.api if q.api in VERSIONED_APIS or q.api == "cudaGetDriverEntryPoint" else "cuGetProcAddress_v2"
    return cat.judge(q.symbol or "", pin, flags, api=api, variant=variant, floor=floor or None)


def bound(q: Query, cat: Catalog, pin: int, variant: str | None = None) -> Abi | None:
    """The ABI a request at `pin` binds, as the catalog's verdict says."""
    return verdict(q, cat, pin, variant=variant).abi
