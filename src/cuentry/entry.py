"""Entries: one declared entry point, bound once, shared by tables, manifests, `check` and the generators.

An [Entry][cuentry.entry.Entry] is a pin (symbol, fixed ABI version), whether it
is required, the attribute it is reached by, and its fallback chain. It is made
by [required][cuentry.entry.required] / [optional][cuentry.entry.optional] (not
bound yet: a declaration does not know its table's stream mode) or by the
manifest reader (bound at once: a manifest pins its mode). Binding asks
[Catalog.bind][cuentry.catalog.Catalog.bind] once per pin and keeps the
[Abi][cuentry.catalog.Abi] it returned on the entry; a table given bound entries
of its own mode and catalog does not ask again.

The driver floor of a set of entries is computed here and nowhere else:
[driver_floor][cuentry.entry.driver_floor].
"""

from __future__ import annotations

from .catalog import Abi, Catalog, Record, catalog
from .errors import CuentryError, TableDeclarationError
from .names import Stream, is_identifier

TYPE_CHECKING = False  # typing and dataclasses are not imported at run time: a library's first table stays cheap
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

__all__ = [
    "FALLBACK_CHAIN_LIMIT",
    "RESERVED",
    "Entry",
    "bind_entry",
    "bind_pin",
    "driver_floor",
    "floor_of",
    "optional",
    "required",
]

# The longest fallback chain (the entry itself not counted) a table or a manifest accepts.
FALLBACK_CHAIN_LIMIT = 16

# Attribute names a Table defines itself: no entry may be reached by one of them.
RESERVED = frozenset({"name", "stream", "from_manifest", "entries", "available", "reason", "report", "reset", "resolve",
                      "min_driver", "resolved", "driver"})


class Entry(Record):
    """One declared entry point: (symbol, fixed ABI version), required or optional, with its fallbacks.

    `abi` is what [Catalog.bind][cuentry.catalog.Catalog.bind] returned for the
    pin in `stream` (None until the entry is bound by a table or a manifest);
    `line`/`column` say where a manifest wrote it (0 when declared in Python). Entries
    are frozen; equality and hashing leave out `line`, `column` and `cat`.
    """

    __slots__ = ("symbol", "version", "required", "fallback", "name", "variant", "abi", "stream", "line", "column",
                 "cat")
    symbol: str
    version: int
    required: bool
    fallback: Entry | Callable[..., Any] | None
    name: str | None
    variant: str | None  # from a PFN name with _ptds/_ptsz: it must match the table's mode
    abi: Abi | None
    stream: Stream | None
    line: int
    column: int
    cat: Catalog | None

    def __init__(self, symbol: str, version: int, required: bool = True,
                 fallback: Entry | Callable[..., Any] | None = None, name: str | None = None,
                 variant: str | None = None, abi: Abi | None = None, stream: Stream | None = None,
                 line: int = 0, column: int = 0, cat: Catalog | None = None) -> None:
        put = object.__setattr__  # one call per field: tables build many entries
        put(self, "symbol", symbol)
        put(self, "version", version)
        put(self, "required", required)
        put(self, "fallback", fallback)
        put(self, "name", name)
        put(self, "variant", variant)
        put(self, "abi", abi)
        put(self, "stream", stream)
        put(self, "line", line)
        put(self, "column", column)
        put(self, "cat", cat)

    def _key(self) -> tuple[object, ...]:
        return (self.symbol, self.version, self.required, self.fallback, self.name, self.variant, self.abi,
                self.stream)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Entry:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def replace(self, **changes: object) -> Entry:
        """A copy with some fields changed."""
        new = super().replace(**changes)
        assert isinstance(new, Entry)
        return new

    @property
    def attr(self) -> str:
        """The name the entry is reached by: `name`, or the symbol."""
        return self.name or self.symbol

    @property
    def key(self) -> str:
        """`symbol@version`."""
        return f"{self.symbol}@{self.version}"

    def describe(self) -> str:
        return self.key

    def __repr__(self) -> str:
        kind = "required" if self.required else "optional"
        name = f", name={self.name!r}" if self.name else ""
        fb = self.fallback
        tail = "" if fb is None else f", fallback={fb!r}" if isinstance(fb, Entry) else \
            f", fallback={getattr(fb, '__qualname__', type(fb).__name__)}"
        bound = f", abi={self.abi.pfn}" if self.abi is not None else ""
        return f"<Entry {kind} {self.key}{name}{bound}{tail}>"

    @property
    def chain(self) -> tuple[Entry, ...]:
        """The pins tried in order: this entry, then each entry of its fallback chain."""
        out: list[Entry] = [self]
        nxt = self.fallback
        while isinstance(nxt, Entry):
            out.append(nxt)
            nxt = nxt.fallback
        return tuple(out)

    @property
    def final(self) -> Callable[..., Any] | None:
        """The callable the chain ends in (optional entries only), or None."""
        last = self.chain[-1].fallback
        return None if last is None or isinstance(last, Entry) else last

    @property
    def bound_abi(self) -> Abi:
        """The ABI the pin binds; the entry must be bound (a table's and a manifest's entries are).

        Raises:
            TableDeclarationError: an entry that no table or manifest has bound yet.
        """
        if self.abi is None:
            raise TableDeclarationError(f"{self.key} is not bound to an ABI yet",
                                        hint="declare it in a Table (or read it from a manifest): that binds it")
        return self.abi

    def bound_in(self, stream: Stream, cat: Catalog) -> bool:
        """Whether the whole chain is bound already, in `stream` against `cat`."""
        return all(x.abi is not None and x.stream == stream and x.cat is cat for x in self.chain)


def driver_floor(chains: Iterable[tuple[bool, Sequence[int]]]) -> int:
    """The deployment floor: the lowest driver release at which every required entry has at least
    one member of its chain.

    The one computation of it, for `cuentry check`, [Table.min_driver][cuentry.table.Table.min_driver],
    both generators and `cuentry lint --min-driver`.

    Args:
        chains: per entry, `(required, pins)`: whether it is required and the ABI versions of
            its chain (the entry's pin, then its fallbacks'). A driver resolves a pin only at or
            above the pin's version, so a chain needs its lowest pin.

    Returns:
        The highest of the required chains' lowest pins; 0 when nothing is required (optional
        entries never raise the floor).
    """
    return max((min(pins) for req, pins in chains if req and pins), default=0)


def floor_of(entries: Iterable[Entry]) -> int:
    """[driver_floor][cuentry.entry.driver_floor] of declared entries."""
    return driver_floor((e.required, [x.version for x in e.chain]) for e in entries)


def bind_entry(e: Entry, stream: Stream, cat: Catalog, *, where: str = "") -> Entry:
    """`e` with every pin of its chain bound in `stream` (the catalog decides, once per pin).

    An entry bound already in that mode against that catalog is returned as it is.

    Raises:
        TableDeclarationError: a pin the catalog refuses in that mode, or a chain longer than
            [FALLBACK_CHAIN_LIMIT][cuentry.entry.FALLBACK_CHAIN_LIMIT].
    """
    if not isinstance(e.fallback, Entry):  # one pin (the common case): no chain to walk
        if e.fallback is not None:
            _check_final(e, e.fallback, where)
        if e.abi is not None and e.stream == stream and e.cat is cat:
            return e
        key = (id(e), stream, id(cat))
        got = _BOUND_ENTRIES.get(key)
        if got is not None and got[0] is e and got[1] is cat:  # the same declared entry in a table of this mode
            return got[2]
        bound = Entry(e.symbol, e.version, e.required, e.fallback, e.name, e.variant, _bind(e, stream, cat, where),
                      stream, e.line, e.column, cat)
        if len(_BOUND_ENTRIES) >= _BOUND_ENTRIES_LIMIT:
            _BOUND_ENTRIES.clear()
        _BOUND_ENTRIES[key] = (e, cat, bound)  # e and cat kept alive with their key: an id is never reused here
        return bound
    if e.bound_in(stream, cat):
        return e
    chain = e.chain
    if len(chain) > FALLBACK_CHAIN_LIMIT + 1:
        raise TableDeclarationError(f"{where}{e.describe()}: the fallback chain has {len(chain) - 1} entries; "
                                    f"the limit is {FALLBACK_CHAIN_LIMIT}",
                                    hint="keep the few ABIs the code really handles")
    tail: Entry | Callable[..., Any] | None = e.final
    if tail is not None:
        _check_final(e, tail, where)
    for x in reversed(chain):
        tail = Entry(x.symbol, x.version, x.required, tail, x.name, x.variant, _bind(x, stream, cat, where), stream,
                     x.line, x.column, cat)
    assert isinstance(tail, Entry)
    return tail


def _check_final(e: Entry, final: object, where: str) -> None:
    """What a chain ends in (an Entry built by hand can hold anything): a callable, and only for an
    optional entry."""
    if e.required:
        raise TableDeclarationError(f"{where}{e.describe()}: a required entry falls back only to other entries, "
                                    f"got {type(final).__name__}",
                                    hint="make the entry optional(...) to fall back to a callable")
    if not callable(final):
        raise TableDeclarationError(f"{where}{e.describe()}: fallback must be an entry, a callable or None, "
                                    f"got {type(final).__name__}", hint="optional('cuX', N, fallback=my_function)")


# Single-pin entries already bound, by (declared entry, mode, catalog): a library that builds the same
# table again (one per thread, per device, after a reset) binds nothing twice. Bounded, so a program
# declaring entries without end cannot grow it without end.
_BOUND_ENTRIES: dict[tuple[int, str, int], tuple[Entry, Catalog, Entry]] = {}
_BOUND_ENTRIES_LIMIT = 4096


def bind_pin(cat: Catalog, symbol: str, version: int, stream: Stream, variant: str | None = None) -> Abi:
    """[Catalog.bind][cuentry.catalog.Catalog.bind]'s answer for one pin, asked once per catalog.

    Raises:
        CuentryError: what [Catalog.bind][cuentry.catalog.Catalog.bind] raises for the pin.
    """
    # Catalog.bind's answers, kept on the catalog (Catalog.fact): its answer for one pin never changes, so a
    # second table (or a manifest read again) declaring the same pins does not ask again. Refusals are not kept.
    known: dict[tuple[str, int, str, str | None], Abi] = cat.fact("entry.bound_pins", _no_pins)
    key = (symbol, version, stream, variant)
    got = known.get(key)
    if got is None:
        got = known[key] = cat.bind(symbol, version, stream, variant)
    return got


def _no_pins(cat: Catalog) -> dict[tuple[str, int, str, str | None], Abi]:
    return {}


def _bind(e: Entry, stream: Stream, cat: Catalog, where: str) -> Abi:
    try:
        return bind_pin(cat, e.symbol, e.version, stream, e.variant)
    except CuentryError as exc:
        raise TableDeclarationError(f"{where}{exc.message}", hint=exc.hint) from None


# --- declaring ----------------------------------------------------------------------------

_HINT = "required('cuMemAlloc', 3020) or required('PFN_cuMemAlloc_v3020')"


def _symbol(spec: object, version: object) -> tuple[str, int | None, str | None]:
    if not isinstance(spec, str) or not spec:
        raise TableDeclarationError(f"entry needs a symbol name or PFN typedef name, got {spec!r}", hint=_HINT)
    if not is_identifier(spec):  # control characters, spaces, non-ASCII: refused where they are written
        raise TableDeclarationError(f"entry {spec!r} is not a C identifier",
                                    hint="driver function names are ASCII identifiers like cuMemAlloc")
    if version is not None and (type(version) is not int):
        raise TableDeclarationError(f"{spec}: version must be an int ABI version, got {type(version).__name__} "
                                    f"{version!r}", hint=f"write the number itself: {spec!r}, {_versions_hint(spec)}")
    if not spec.startswith("PFN_"):
        return spec, version, None
    try:
        abi = catalog().parse_pfn(spec)
    except CuentryError as exc:
        raise TableDeclarationError(f"{spec}: {exc.message}", hint=exc.hint) from None
    if version is not None and version != abi.version:
        raise TableDeclarationError(f"{spec} says version {abi.version} but version={version} was given",
                                    hint="give the PFN name alone")
    return abi.symbol, abi.version, abi.variant


def _fallback(symbol: str, fallback: object, required: bool) -> Entry | Callable[..., Any] | None:
    """A fallback as declared: an entry, a sequence of entries (a chain tried in order), a callable
    (optional entries only) or None."""
    if isinstance(fallback, (list, tuple)):
        if not fallback or not all(isinstance(x, Entry) for x in fallback):
            raise TableDeclarationError(f"{symbol}: a fallback chain is a non-empty list of entries",
                                        hint="fallback=[optional('cuX', N), optional('cuX', M)]")
        if len(fallback) > FALLBACK_CHAIN_LIMIT:
            raise TableDeclarationError(f"{symbol}: the fallback chain has {len(fallback)} entries; the limit is "
                                        f"{FALLBACK_CHAIN_LIMIT}", hint="keep the few ABIs the code really handles")
        tail: Entry | None = None
        for x in reversed(fallback):
            if x.fallback is not None:
                raise TableDeclarationError(f"{symbol}: an entry in a fallback list has its own fallback",
                                            hint="write the chain as one flat list")
            tail = x.replace(fallback=tail)
        return tail
    if fallback is None or isinstance(fallback, Entry):
        return fallback
    if required:
        raise TableDeclarationError(f"{symbol}: a required entry falls back only to other entries, got "
                                    f"{type(fallback).__name__}",
                                    hint="make the entry optional(...) to fall back to a callable")
    if callable(fallback):
        return fallback
    raise TableDeclarationError(f"{symbol}: fallback must be an entry, a list of entries, a callable or None, "
                                f"got {type(fallback).__name__}")


def _entry(spec: object, version: object, required: bool, fallback: object, name: object) -> Entry:
    symbol, ver, variant = _symbol(spec, version)
    if ver is None:
        raise TableDeclarationError(f"{symbol}: no ABI version given",
                                    hint=f"pin one of its ABI versions, e.g. {symbol!r}, {_versions_hint(symbol)}")
    if name is not None and (not isinstance(name, str) or not name.isidentifier()):
        raise TableDeclarationError(f"{symbol}: name must be a Python identifier string, got {name!r}",
                                    hint=f"name='{symbol}_fn' (or leave it out: the symbol is the name)")
    return Entry(symbol, ver, required, _fallback(symbol, fallback, required), name, variant)


def _versions_hint(symbol: str) -> str:
    try:
        return " or ".join(str(v) for v in catalog().versions(symbol))
    except CuentryError:
        return "the number in PFN_<symbol>_vNNNNN"


def required(symbol: str, version: int | None = None, *, name: str | None = None,
             fallback: Entry | Sequence[Entry] | None = None) -> Entry:
    """A required entry: the table fails to resolve unless it or one entry of its fallback chain does.

    Args:
        symbol: the base name (`"cuMemAlloc"`) or a typedef name (`"PFN_cuMemAlloc_v3020"`).
        version: the fixed ABI version (the number in `PFN_cuX_vNNNNN`); left out with a typedef name.
        name: the attribute the entry is reached by (default: the symbol).
        fallback: an entry, or a list of entries tried in order, when this pin does not resolve.

    Raises:
        TableDeclarationError: a malformed symbol, version, name or fallback.
    """
    return _entry(symbol, version, True, fallback, name)


def optional(symbol: str, version: int | None = None, *,
             fallback: Entry | Sequence[Entry] | Callable[..., Any] | None = None,
             name: str | None = None) -> Entry:
    """An optional entry with its own fallback: an entry, a list of entries tried in order, a callable,
    or None (an [Unavailable][cuentry.table.Unavailable] carrying the reason).

    Raises:
        TableDeclarationError: a malformed symbol, version, name or fallback.
    """
    return _entry(symbol, version, False, fallback, name)
