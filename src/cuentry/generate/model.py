"""What the generators need from a manifest, computed once for both the C and the Python generator.

The manifest ([cuentry.manifest][cuentry.manifest]) gives bound [Entry][cuentry.entry.Entry]
records: each pin of each chain already carries the ABI
[Catalog.bind][cuentry.catalog.Catalog.bind] returned for it while the manifest
was read. A [Plan][cuentry.generate.model.Plan] adds what only a generated loader
needs: the table member each pin lands in (a fallback of another function type
gets a member of its own), the symbol's first ABI version in the table's mode
and its ABI versions, and the driver floor
([driver_floor][cuentry.entry.driver_floor]). Nothing is bound again here.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from ..catalog import Abi, Catalog
from ..entry import Entry, bind_entry, floor_of
from ..errors import TableDeclarationError
from ..manifest import Manifest
from ..names import FLAG_NAMES, FLAGS, Stream

__all__ = ["Generated", "Pin", "Plan", "Slot", "function_type", "plan"]


@dataclass(frozen=True)
class Pin:
    """One pin of an entry's chain as the generated loader sees it: the bound entry and where it lands."""

    entry: Entry                 # the pin itself (bound: entry.abi is the ABI it binds)
    first: int                   # the symbol's first ABI version in the table's mode
    versions: tuple[int, ...]    # all ABI versions of the symbol, ascending
    member: str                  # the table member that receives it

    @property
    def symbol(self) -> str:
        return self.entry.symbol

    @property
    def version(self) -> int:
        return self.entry.version

    @property
    def abi(self) -> Abi:
        return self.entry.bound_abi  # manifests bind every pin while reading

    @property
    def key(self) -> str:
        return self.entry.key


@dataclass(frozen=True)
class Slot:
    """One bound entry of the manifest and its pins in the order they are tried (a view: the entry is
    the manifest's own record, not a copy)."""

    entry: Entry
    pins: tuple[Pin, ...]

    @property
    def attr(self) -> str:
        return self.entry.attr

    @property
    def required(self) -> bool:
        return self.entry.required

    @property
    def abi(self) -> Abi:
        return self.pins[0].abi

    def members(self) -> tuple[tuple[str, Abi], ...]:
        """The table members this entry fills: its own, then one per fallback of another type."""
        seen: dict[str, Abi] = {}
        for p in self.pins:
            seen.setdefault(p.member, p.abi)
        return tuple(seen.items())


@dataclass(frozen=True)
class Plan:
    """A whole table, ready to be written out: the manifest's bound entries and where each pin lands."""

    name: str
    source: str
    stream: Stream
    slots: tuple[Slot, ...]
    min_driver: int              # driver_floor of the entries: the generated NAME_MIN_DRIVER / MIN_DRIVER
    cat: Catalog

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(s.entry for s in self.slots)

    @property
    def pins(self) -> tuple[Pin, ...]:
        return tuple(p for s in self.slots for p in s.pins)

    @property
    def flags(self) -> int:
        """The cuGetProcAddress flags of the table's stream mode."""
        return FLAGS[self.stream]

    @property
    def flags_name(self) -> str:
        return FLAG_NAMES[self.flags]

    def abis(self) -> tuple[Abi, ...]:
        """Every distinct ABI a member is typed by, in first-use order."""
        return tuple(dict.fromkeys(abi for s in self.slots for _, abi in s.members()))


@dataclass(frozen=True)
class Generated:
    """What a generator wrote and the plan it wrote it from (the CLI reports from the plan)."""

    language: str
    text: str
    plan: Plan


def function_type(abi: Abi) -> tuple[str, ...]:
    """An ABI's function type without parameter names: two ABIs with equal ones can share a member."""
    return (abi.signature.returns, *(" ".join(p.canonical.split()) for p in abi.signature.params))


def _member(e: Entry, x: Entry, main: Abi, i: int) -> str:
    if i == 0 or function_type(x.bound_abi) == function_type(main):
        return e.attr
    if x.symbol == e.symbol:
        return f"{e.attr}_{x.version}"
    return f"{e.attr}_{x.symbol}_{x.version}"


_PLANS: weakref.WeakKeyDictionary[Manifest, Plan] = weakref.WeakKeyDictionary()


def plan(manifest: Manifest) -> Plan:
    """The plan of `manifest`'s table, from its bound entries (nothing is bound again).

    Planned once per manifest: the generators and the CLI's report of what they wrote get the same
    [Plan][cuentry.generate.model.Plan] object.
    """
    got = _PLANS.get(manifest)
    if got is None:
        got = _PLANS[manifest] = _plan(manifest)
    return got


def _plan(manifest: Manifest) -> Plan:
    cat = manifest.cat
    stream = manifest.stream
    taken: dict[str, str] = {}
    slots: list[Slot] = []
    for declared in manifest.entries:
        e = bind_entry(declared, stream, cat)  # a manifest's entries are bound already: returned as they are
        main = e.bound_abi
        pins: list[Pin] = []
        for i, x in enumerate(e.chain):
            member = _member(e, x, main, i)
            owner = taken.setdefault(member, e.attr)
            if owner != e.attr:
                raise TableDeclarationError(
                    f"table {manifest.name!r}: member {member} of {e.attr} clashes with entry {owner}",
                    hint=f"give {e.attr} or {owner} another name = \"...\" in the manifest")
            pins.append(Pin(x, cat.first_version(x.symbol, stream), cat.versions(x.symbol), member))
        slots.append(Slot(e, tuple(pins)))
    return Plan(manifest.name, manifest.path, stream, tuple(slots), floor_of(s.entry for s in slots), cat)
