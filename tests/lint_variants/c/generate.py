"""The variants: every seed, every family alone, and compositions of 2 and 3 families, each faulty and fixed.

Three sizes, all deterministic (sampling is seeded by names, never by time or hash randomisation):

- `quick`: every seed, each family on 3 seeds (one of them a `dlsym` loader where the family applies to one),
  one composition of 2 and one of 3 per seed -- a run of about 20 s on 2 cores;
- the default: every seed, every family on every seed it applies to, 12 compositions of 2 and 8 of 3 per seed;
- `full`: every composition of 2 for every seed, and 40 of 3 per seed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator, Sequence

from ..record import Variant
from .families import BY_NAME, FAMILIES, Family, applies, compatible, opts
from .model import Seed
from .render import render
from .seeds import SEEDS

__all__ = ["SIZES", "families_of", "make", "plan", "variants"]

SIZES = ("quick", "default", "full")
_ORDER = {f.name: i for i, f in enumerate(FAMILIES)}
_PER_SEED = {"quick": (0, 1, 1), "default": (None, 12, 8), "full": (None, None, 40)}
"""Per size and seed: how many families alone (None: all; 0: the quick rotation), compositions of 2 and of 3."""


def families_of(s: Seed) -> list[Family]:
    """The families that apply to seed `s`."""
    return [f for f in FAMILIES if applies(f, s)]


def make(s: Seed, families: Sequence[str], faulty: bool) -> Variant:
    """Seed `s` (faulty, or its twin) rewritten by `families`."""
    fams = tuple(sorted(families, key=_ORDER.__getitem__))
    out = render(s.bad if faulty else s.good, opts(fams), cxx=s.cxx)
    suffix = out.main[out.main.rindex("."):]
    return Variant(seed=s.id, families=fams, faulty=faulty, suffix=suffix, files=out.files,
                   expect=s.expect if faulty else frozenset(), main=out.main, absent=out.absent, configs=out.configs)


def _combos(s: Seed, k: int, count: int | None) -> list[tuple[str, ...]]:
    names = [f.name for f in families_of(s)]
    if count is None:
        return [c for c in itertools.combinations(names, k) if compatible(c)]
    rng = random.Random(f"{s.id}:{k}")
    seen: set[tuple[str, ...]] = set()
    out: list[tuple[str, ...]] = []
    tries = 0
    while len(out) < count and tries < 10_000:
        tries += 1
        c = tuple(sorted(rng.sample(names, k), key=_ORDER.__getitem__))
        if c not in seen and compatible(c):
            seen.add(c)
            out.append(c)
    return out


def _rotation() -> dict[str, list[str]]:
    """The quick size's families alone: each family on 3 seeds, a dlsym loader among them where it applies."""
    out: dict[str, list[str]] = {s.id: [] for s in SEEDS}
    for i, f in enumerate(FAMILIES):
        fits = [s for s in SEEDS if applies(f, s)]
        rng = random.Random(f"quick:{f.name}")
        picked = rng.sample(fits, min(3, len(fits)))
        dl = [s for s in fits if s.lookup == "dlsym"]
        if dl and not any(s.lookup == "dlsym" for s in picked):
            picked[-1] = dl[i % len(dl)]
        for s in picked:
            out[s.id].append(f.name)
    return out


def plan(size: str = "default", *, families: Iterable[str] = (), max_depth: int = 3,
         seeds: Iterable[str] = ()) -> list[tuple[Seed, tuple[str, ...]]]:
    """(seed, families) of every variant pair of a size, less those that do not hold every family of `families`
    or are deeper than `max_depth`, or whose seed is not among `seeds` (when given)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    want = set(families)
    unknown = want - set(BY_NAME)
    if unknown:
        raise ValueError(f"unknown families: {', '.join(sorted(unknown))}")
    only = set(seeds)
    unknown = only - {s.id for s in SEEDS}
    if unknown:
        raise ValueError(f"unknown seeds: {', '.join(sorted(unknown))} (the seeds: {', '.join(s.id for s in SEEDS)})")
    alone, twos, threes = _PER_SEED[size]
    rotation = _rotation() if alone == 0 else {}
    out: list[tuple[Seed, tuple[str, ...]]] = []
    for s in SEEDS:
        if only and s.id not in only:
            continue
        ones = [(n,) for n in rotation[s.id]] if alone == 0 else [(f.name,) for f in families_of(s)]
        for combo in [(), *ones, *_combos(s, 2, twos), *_combos(s, 3, threes)]:
            if len(combo) <= max_depth and want <= set(combo):
                out.append((s, combo))
    return out


def variants(size: str = "default", *, families: Iterable[str] = (), max_depth: int = 3,
             seeds: Iterable[str] = ()) -> Iterator[Variant]:
    """Every variant of a size: for each planned (seed, families), the faulty one then its twin."""
    for s, combo in plan(size, families=families, max_depth=max_depth, seeds=seeds):
        yield make(s, combo, True)
        yield make(s, combo, False)
