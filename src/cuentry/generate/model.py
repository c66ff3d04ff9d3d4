"""What the generators need from a manifest: each entry's chain of pins, resolved against the catalog.

The manifest (:mod:`cuentry.manifest`) says what the user asked for; this module
turns it into the facts code generation needs and computes them once, for both
the C and the Python generator: for each entry, its pins in order (the entry
itself, then its fallback chain), the ABI each pin binds in the table's stream
mode (:meth:`Manifest.abi`, which asks :meth:`Catalog.bind`), the first version of that symbol
in that mode, the symbol's ABI versions, and whether a fallback can share the
entry's function-pointer type.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import Abi
from ..errors import TableDeclarationError
from ..manifest import EntrySpec, Manifest
from ..names import FLAG_NAMES, FLAGS, Stream


@dataclass(frozen=True)
class Pin:
    """One (symbol, version) the generated loader asks for, and what the catalog knows of it."""

    symbol: str
    version: int
    abi: Abi                     # the ABI the driver gives for this pin in the table's mode
    first: int                   # the symbol's first ABI version in the table's mode
    versions: tuple[int, ...]    # all ABI versions of the symbol, ascending
    member: str                  # the table member that receives it

    @property
    def key(self) -> str:
        return f"{self.symbol}@{self.version}"


@dataclass(frozen=True)
class Slot:
    """One manifest entry: its name, whether it is required, its pins in the order they are tried."""

    attr: str
    required: bool
    pins: tuple[Pin, ...]

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
    """A whole table, ready to be written out."""

    name: str
    source: str
    stream: Stream
    slots: tuple[Slot, ...]
    min_driver: int

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


def function_type(abi: Abi) -> tuple[str, ...]:
    """An ABI's function type without parameter names: two ABIs with equal ones can share a member."""
    return (abi.signature.returns, *(" ".join(p.canonical.split()) for p in abi.signature.params))


def _chain(e: EntrySpec) -> list[EntrySpec]:
    return [e, *e.fallback]


def plan(manifest: Manifest) -> Plan:
    """Resolve every pin of ``manifest`` against its catalog (the manifest has validated them)."""
    cat = manifest.cat
    stream = manifest.stream
    slots: list[Slot] = []
    taken: dict[str, str] = {}
    for e in manifest.entries:
        main_abi = manifest.abi(e)
        pins: list[Pin] = []
        for i, spec in enumerate(_chain(e)):
            abi = main_abi if i == 0 else manifest.abi(spec)
            if i == 0 or function_type(abi) == function_type(main_abi):
                member = e.attr
            elif spec.symbol == e.symbol:
                member = f"{e.attr}_{spec.version}"
            else:
                member = f"{e.attr}_{spec.symbol}_{spec.version}"
            owner = taken.setdefault(member, e.attr)
            if owner != e.attr:
                raise TableDeclarationError(
                    f"table {manifest.name!r}: member {member} of {e.attr} clashes with entry {owner}",
                    hint=f"give {e.attr} or {owner} another name = \"...\" in the manifest")
            pins.append(Pin(spec.symbol, spec.version, abi, cat.first_version(spec.symbol, stream),
                            cat.versions(spec.symbol), member))
        slots.append(Slot(e.attr, e.required, tuple(pins)))
    return Plan(manifest.name, manifest.path, stream, tuple(slots), manifest.min_driver())
