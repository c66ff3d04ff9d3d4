"""Function tables: what library authors declare once and call many times.

::

    from cuentry import Table, required, optional

    drv = Table(
        "mylib",
        [
            required("cuMemAlloc", 3020),
            required("PFN_cuStreamBeginCapture_v10010_ptsz"),
            optional("cuDeviceGetUuid", 11040, fallback=optional("cuDeviceGetUuid", 9020)),
            optional("cuMulticastCreate", 12010),            # unavailable -> reason object
        ],
        stream="per_thread",                                  # or "legacy", or stream_from_env()
    )
    drv.cuMemAlloc(out, n)        # first access resolves the whole table, once
    drv.available("cuMulticastCreate"), drv.reason("cuMulticastCreate")

A table has exactly one stream mode. Resolution is lazy, happens once under a
lock, and leaves each resolved function as a plain instance attribute, so a
cached access costs what any attribute access costs. A required entry that
fails makes resolution raise :class:`TableResolutionError` listing every
failing entry. Optional entries follow the seed's flow (driver version against
the catalog's first version, ask at the fixed ABI version, check CUresult,
query result and pointer), else take their own fallback: another entry, a
Python callable, or an :class:`Unavailable` carrying the reason.
"""

from __future__ import annotations

import os
from _weakrefset import WeakSet  # weakref.WeakSet, without importing weakref (a cold start)

from . import _forksafe
from .catalog import Abi, Catalog, catalog
from .diagnostics import Diagnostic
from .driver import Driver, Runtime, default_driver
from .errors import (
    CuentryError,
    ForkError,
    ResolutionError,
    TableDeclarationError,
    TableResolutionError,
    UnavailableError,
    UsageError,
)
from .names import DEFAULT, LEGACY, PER_THREAD, Stream, catalog_stream, format_version, is_identifier, parse_stream

TYPE_CHECKING = False  # typing and collections.abc only for annotations: a first table's import stays cheap
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Literal

STREAM_ENV = "CUENTRY_PER_THREAD_DEFAULT_STREAM"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def stream_from_env(default: Stream | None = None, env: str = STREAM_ENV) -> Stream:
    """The stream mode from ``$CUENTRY_PER_THREAD_DEFAULT_STREAM``, parsed strictly.

    "1", "true", "yes", "on" mean per-thread; "0", "false", "no", "off" mean legacy
    (case-insensitive); unset or empty gives ``default``; anything else is an error.
    """
    raw = os.environ.get(env)
    if raw is None or raw.strip() == "":
        if default is None:
            raise UsageError(f"${env} is not set and no default stream mode was given",
                             hint=f"set {env}=0 (legacy) or 1 (per-thread), or pass default='legacy'")
        return default
    v = raw.strip().lower()
    if v in _TRUE:
        return PER_THREAD
    if v in _FALSE:
        return LEGACY
    raise UsageError(f"${env}={raw!r} is neither on nor off", hint="use 1/true/yes/on or 0/false/no/off")


_ENTRY_FIELDS = ("symbol", "version", "required", "fallback", "name", "variant")


class Entry:
    """One declared entry point: (symbol, fixed ABI version), required or optional. Frozen.

    What ``@dataclass(frozen=True)`` would give (the fields as keywords or positions, equality and
    hashing by value, a repr, no assignment), written out: :mod:`dataclasses` imports inspect, re and
    enum, which cost a first table's process about 15 ms on a CI-class machine.
    """

    symbol: str
    version: int
    required: bool
    fallback: Entry | Callable[..., Any] | None
    name: str | None
    variant: str | None  # from a PFN name with _ptds/_ptsz: it must match the table's mode

    __match_args__ = ("symbol", "version", "required", "fallback", "name", "variant")

    def __init__(self, symbol: str, version: int, required: bool = True,
                 fallback: Entry | Callable[..., Any] | None = None, name: str | None = None,
                 variant: str | None = None) -> None:
        put = object.__setattr__
        put(self, "symbol", symbol)
        put(self, "version", version)
        put(self, "required", required)
        put(self, "fallback", fallback)
        put(self, "name", name)
        put(self, "variant", variant)

    def _fields(self) -> tuple[Any, ...]:
        return (self.symbol, self.version, self.required, self.fallback, self.name, self.variant)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: an Entry is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: an Entry is frozen")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Entry({', '.join(f'{k}={v!r}' for k, v in zip(_ENTRY_FIELDS, self._fields(), strict=True))})"

    @property
    def attr(self) -> str:
        return self.name or self.symbol

    def describe(self) -> str:
        return f"{self.symbol}@{self.version}"


def _entry(spec: str, version: int | None, required: bool, fallback: Any, name: str | None) -> Entry:
    if not isinstance(spec, str) or not spec:
        raise TableDeclarationError(f"entry needs a symbol name or PFN typedef name, got {spec!r}",
                                    hint="required('cuMemAlloc', 3020) or required('PFN_cuMemAlloc_v3020')")
    if not is_identifier(spec):  # control characters, spaces, non-ASCII: refused where they are written
        raise TableDeclarationError(f"entry {spec!r} is not a C identifier",
                                    hint="driver function names are ASCII identifiers like cuMemAlloc")
    variant = None
    if spec.startswith("PFN_"):
        try:
            abi = catalog().parse_pfn(spec)
        except CuentryError as exc:
            raise TableDeclarationError(f"{spec}: {exc.message}", hint=exc.hint) from None
        if version is not None and version != abi.version:
            raise TableDeclarationError(f"{spec} says version {abi.version} but version={version} was given",
                                        hint="give the PFN name alone")
        spec, version, variant = abi.symbol, abi.version, abi.variant
    if version is None:
        raise TableDeclarationError(f"{spec}: no ABI version given",
                                    hint=f"pin one of its ABI versions, e.g. {spec!r}, {_versions_hint(spec)}")
    if fallback is not None and not isinstance(fallback, Entry) and not callable(fallback):
        raise TableDeclarationError(f"{spec}: fallback must be an entry, a callable or None, got {type(fallback).__name__}")
    return Entry(spec, version, required, fallback, name, variant)


def _versions_hint(symbol: str) -> str:
    try:
        return " or ".join(str(v) for v in catalog().versions(symbol))
    except CuentryError:
        return "the number in PFN_<symbol>_vNNNNN"


def required(symbol: str, version: int | None = None, *, name: str | None = None) -> Entry:
    """A required entry: the table fails to resolve without it."""
    return _entry(symbol, version, True, None, name)


def optional(symbol: str, version: int | None = None, *, fallback: Entry | Callable[..., Any] | None = None,
             name: str | None = None) -> Entry:
    """An optional entry with its own fallback (another entry, a callable, or None for Unavailable)."""
    return _entry(symbol, version, False, fallback, name)


class _Lazy:
    """What an entry's slot holds before resolution: using it resolves the table.

    Tables define no ``__getattr__`` (it would slow every attribute read); instead
    each slot starts as one of these, and resolution overwrites it with the real
    function, so later reads cost one slot access.
    """

    __slots__ = ("_table", "_attr")

    def __init__(self, table: Table, attr: str) -> None:
        self._table = table
        self._attr = attr

    def _target(self) -> Any:
        # Resolve and read under the table's lock: a reset() in another thread cannot
        # slip in between and hand back another _Lazy (which would recurse).
        t = self._table
        with t._lock:
            t.resolve()
            return getattr(t, self._attr)

    def __call__(self, *args: Any) -> Any:
        return self._target()(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __bool__(self) -> bool:
        return bool(self._target())

    def __repr__(self) -> str:
        return f"<unresolved entry {self._attr} of table {self._table.name!r}>"


class Unavailable:
    """Stands in for an optional entry that did not resolve; falsy; calling it raises with the reason."""

    __slots__ = ("symbol", "reason")

    def __init__(self, symbol: str, reason: Diagnostic) -> None:
        self.symbol = symbol
        self.reason = reason

    def __bool__(self) -> Literal[False]:
        return False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UnavailableError(self.symbol, self.reason)

    def __repr__(self) -> str:
        return f"<Unavailable {self.symbol}: {self.reason.classification.value}>"


class _State:
    """How one entry ended: status (resolved | fallback | unavailable | failed), its value, the diagnostic
    (of a plain success: built when first asked for), the fallback taken, every attempt's diagnostic."""

    __slots__ = ("status", "value", "_diagnostic", "via", "_attempts", "_make")

    def __init__(self, status: str, value: Any, diagnostic: Diagnostic | None, via: str | None = None,
                 attempts: tuple[Diagnostic, ...] = (), make: Callable[[], Diagnostic] | None = None) -> None:
        self.status = status
        self.value = value
        self._diagnostic = diagnostic
        self.via = via
        self._attempts = attempts
        self._make = make

    @property
    def diagnostic(self) -> Diagnostic | None:
        if self._make is not None:
            d = self._make()
            self._diagnostic, self._attempts, self._make = d, (d,), None
        return self._diagnostic

    @property
    def attempts(self) -> tuple[Diagnostic, ...]:
        if self._make is not None:
            self.diagnostic  # noqa: B018  (builds it)
        return self._attempts


_TABLES: WeakSet[Table] = WeakSet()
_LAYOUTS: dict[tuple[type, tuple[str, ...]], type] = {}  # (Table class, entry slots) -> its per-layout subclass
# What each catalog's Catalog.bind answered for a pin in a mode (by id: the catalog is kept in the value)
_BOUND_PINS: dict[int, tuple[Catalog, dict[tuple[str, int, str, str | None], Abi]]] = {}
RESERVED = frozenset({"name", "stream", "from_manifest", "entries", "available", "reason", "report", "reset", "resolve",
                       "min_driver", "resolved", "driver"})


def _after_fork() -> None:
    _forksafe.reinit_after_fork()  # tables take their locks below: make sure they are fresh first
    for t in list(_TABLES):
        t._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class Table:
    """A declared set of entry points in one stream mode, resolved lazily once.

    Each table is an instance of its own subclass whose ``__slots__`` are the entry
    names, so a resolved entry is read as a slot: as fast as any attribute access,
    however many entries the table has.
    """

    def __new__(cls, name: str, entries: Iterable[Entry], **kwargs: Any) -> Table:
        listed = tuple(entries)
        names = [e.name or e.symbol for e in listed if isinstance(e, Entry)]
        slots = tuple(dict.fromkeys(a for a in names if a.isidentifier() and a not in RESERVED and not a.startswith("_")))
        sub = _LAYOUTS.get((cls, slots))
        if sub is None:  # making a class costs ~40 us for 100 slots: tables of one layout share theirs
            sub = type(cls.__name__, (cls,), {"__slots__": slots, "__module__": cls.__module__,
                                               "__qualname__": cls.__qualname__})
            if len(_LAYOUTS) < 1024:
                _LAYOUTS[(cls, slots)] = sub
        self: Table = object.__new__(sub)
        self.__dict__["_declared_entries"] = listed
        return self

    def __init__(
        self,
        name: str,
        entries: Iterable[Entry],
        *,
        stream: Literal["legacy", "per_thread", "per-thread"],
        source: Driver | Runtime | Callable[[], Driver | Runtime] | None = None,
        on_fork: Literal["reresolve", "refuse"] = "reresolve",
        cat: Catalog | None = None,
    ) -> None:
        self._lock = _forksafe.RLock()
        declared = self.__dict__.pop("_declared_entries", None)
        self._init(name, list(entries if declared is None else declared), stream, source, on_fork,
                   catalog() if cat is None else cat)
        _TABLES.add(self)

    def _init(self, name: str, entries: list[Entry], stream: Any, source: Any, on_fork: str, cat: Catalog) -> None:
        if stream is None:
            raise TableDeclarationError(f"table {name!r}: no stream mode",
                                        hint="pass stream='legacy' or stream='per_thread' (or stream_from_env())")
        try:
            mode = parse_stream(stream)
        except UsageError as exc:
            raise TableDeclarationError(f"table {name!r}: {exc.message}", hint=exc.hint) from None
        if mode == DEFAULT:
            raise TableDeclarationError(f"table {name!r}: stream mode 'default' is not allowed in a table",
                                        hint="a library pins its mode: 'legacy' or 'per_thread'")
        if on_fork not in ("reresolve", "refuse"):
            raise TableDeclarationError(f"on_fork must be 'reresolve' or 'refuse', got {on_fork!r}")
        self.name = name
        self.stream: Stream = catalog_stream(mode)
        self._source = source
        self._on_fork = on_fork
        self._cat = cat
        self._pid = os.getpid()
        self._states: dict[str, _State] = {}
        self._abis: dict[int, Abi] = {}  # by id(entry): an Entry's dataclass hash walks its fallbacks
        self._resolved = False
        self._forked_refused = False
        seen: dict[str, Entry] = {}
        held = _BOUND_PINS.get(id(cat))
        if held is None or held[0] is not cat:
            if len(_BOUND_PINS) >= 64:  # many catalogs (tests): forget, rather than keep them all alive
                _BOUND_PINS.clear()
            held = _BOUND_PINS[id(cat)] = (cat, {})
        known = held[1]
        abis, stream_ = self._abis, self.stream
        for e in entries:
            if type(e) is not Entry and not isinstance(e, Entry):
                raise TableDeclarationError(f"table {name!r}: {e!r} is not an entry",
                                            hint="use required(...) or optional(...)")
            got = known.get((e.symbol, e.version, stream_, e.variant)) if e.fallback is None else None
            if got is not None:  # a pin the catalog already judged in this mode (the common case, inlined)
                abis[id(e)] = got
            else:
                for x in self._chain(e):
                    abis[id(x)] = self._validate(x, known)
            attr = e.name or e.symbol
            if attr in seen:
                raise TableDeclarationError(f"table {name!r}: {attr} is declared twice",
                                            hint="give one of them name='...' to hold both")
            if attr in RESERVED or attr.startswith("_"):
                raise TableDeclarationError(f"table {name!r}: {attr!r} clashes with a Table attribute",
                                            hint="give it another name='...'")
            seen[attr] = e
        self.entries: tuple[Entry, ...] = tuple(seen.values())
        self._fill_lazy()

    @staticmethod
    def _chain(e: Entry) -> list[Entry]:
        if not isinstance(e.fallback, Entry):
            return [e]
        out = [e]
        while isinstance(out[-1].fallback, Entry):
            if len(out) > 16:
                raise TableDeclarationError(f"{e.describe()}: fallback chain is too long")
            nxt = out[-1].fallback
            assert isinstance(nxt, Entry)
            out.append(nxt)
        return out

    def _validate(self, e: Entry, known: dict[tuple[str, int, str, str | None], Abi]) -> Abi:
        """The ABI the entry's pin binds in this table's mode (the catalog decides), or a declaration error.

        The catalog's answer for one pin never changes: it is remembered per catalog, so a second table
        declaring the same pins does not ask again.
        """
        key = (e.symbol, e.version, self.stream, e.variant)
        got = known.get(key)
        if got is not None:
            return got
        try:
            got = known[key] = self._cat.bind(e.symbol, e.version, self.stream, e.variant)
        except CuentryError as exc:
            raise TableDeclarationError(f"table {self.name!r}: {exc.message}", hint=exc.hint) from None
        return got

    @classmethod
    def from_manifest(cls, path: str | os.PathLike[str], **kwargs: Any) -> Table:
        """A table declared by a manifest file (the format of `cuentry check` and `cuentry generate`).

        Keyword arguments (``source``, ``on_fork``, ``cat``) go to the table;
        a malformed manifest raises :class:`ManifestError` with its line and column.
        """
        from .manifest import load

        return load(path, cat=kwargs.get("cat")).table(**{k: v for k, v in kwargs.items() if k != "cat"})

    # --- resolution --------------------------------------------------------------
    def _get_source(self) -> Driver | Runtime:
        src = self._source
        if src is None:
            return default_driver()
        if isinstance(src, (Driver, Runtime)):
            return src
        got = src()
        if not isinstance(got, (Driver, Runtime)):
            raise TableDeclarationError(f"table {self.name!r}: source() returned {type(got).__name__}, not a Driver")
        return got

    def resolve(self) -> Table:
        """Resolve every entry now (idempotent, thread-safe). Raises TableResolutionError."""
        if self._resolved:
            return self
        with self._lock:
            if self._resolved:
                return self
            if self._forked_refused:
                raise ForkError(f"table {self.name!r} was resolved in process {self._pid} and this is a forked child",
                                hint="call table.reset() in the child, or declare the table with on_fork='reresolve'")
            src = self._get_source()
            states: dict[str, _State] = {}
            failures: list[Diagnostic] = []
            stream, abis = self.stream, self._abis
            answers = src.resolve_many([(e.symbol, e.version, stream, abis[id(e)]) for e in self.entries])
            for e, answer in zip(self.entries, answers, strict=True):
                if type(answer) is tuple:
                    states[e.name or e.symbol] = _State("resolved", answer[0], None, None, (), answer[1])
                    continue
                st = states[e.name or e.symbol] = self._resolve_entry(src, e, answer)  # type: ignore[arg-type]
                if e.required and st.status == "failed":
                    failures.extend(d for d in st.attempts[:1])
            if failures:
                self._states = states
                raise TableResolutionError(self.name, failures)
            for attr, st in states.items():
                object.__setattr__(self, attr, st.value)
            self._states = states
            self._pid = os.getpid()
            self._resolved = True
        return self

    def _ask(self, src: Driver | Runtime, e: Entry) -> tuple[Any, Diagnostic]:
        abi = self._abis[id(e)]
        too_old = src.too_old(e.symbol, e.version, self.stream, abi)
        if too_old is not None:
            raise too_old
        r = src.resolve_checked(e.symbol, e.version, self.stream, abi)
        return r.function, r.diagnostic

    def _resolve_entry(self, src: Driver | Runtime, e: Entry, failed: ResolutionError | None = None) -> _State:
        """The entry's state; ``failed``: how its own pin already failed (then only its fallbacks are asked)."""
        attempts: list[Diagnostic] = []
        cur: Entry | Callable[..., Any] | None = e
        first = True
        if failed is not None:
            attempts.append(failed.diagnostic)
            cur, first = e.fallback, False
        while isinstance(cur, Entry):
            try:
                fn, diag = self._ask(src, cur)
            except ResolutionError as exc:
                attempts.append(exc.diagnostic)
                cur = cur.fallback
                first = False
                continue
            attempts.append(diag)
            if first:
                return _State("resolved", fn, diag, None, tuple(attempts))
            return _State("fallback", fn, diag, f"entry {cur.describe()}", tuple(attempts))
        if e.required:
            return _State("failed", None, attempts[0], None, tuple(attempts))
        if cur is not None:
            return _State("fallback", cur, attempts[0], f"callable {getattr(cur, '__qualname__', repr(cur))}",
                          tuple(attempts))
        return _State("unavailable", Unavailable(e.attr, attempts[0]), attempts[0], None, tuple(attempts))

    def _fill_lazy(self) -> None:
        put = object.__setattr__
        for e in self.entries:
            attr = e.name or e.symbol
            put(self, attr, _Lazy(self, attr))

    # --- queries -------------------------------------------------------------------
    @property
    def resolved(self) -> bool:
        return self._resolved

    def _state(self, attr: str) -> _State:
        if attr not in {e.attr for e in self.entries}:
            raise AttributeError(f"table {self.name!r} has no entry {attr!r}")
        with self._lock:  # reset() in another thread must not empty the states in between
            self.resolve()
            return self._states[attr]

    def available(self, attr: str) -> bool:
        """True when the entry resolved itself or through an entry/callable fallback."""
        return self._state(attr).status in ("resolved", "fallback")

    def reason(self, attr: str) -> Diagnostic | None:
        """Why the entry itself did not resolve (None when it did)."""
        st = self._state(attr)
        return None if st.status == "resolved" else st.attempts[0]

    def min_driver(self) -> int:
        """The lowest driver version this table needs: the highest pin among required entries."""
        pins = [e.version for e in self.entries if e.required]
        return max(pins) if pins else 0

    def report(self) -> dict[str, Any]:
        """Per entry: what it resolved to and why anything did not. JSON-serialisable.

        Resolves the table if needed, but never raises for failed entries: they
        are reported.
        """
        with self._lock:  # one consistent snapshot, whatever reset() does meanwhile
            if not self._resolved:
                try:
                    self.resolve()
                except TableResolutionError:
                    pass
            states, resolved = self._states, self._resolved
        rows = []
        for e in self.entries:
            st = states.get(e.attr)
            d = st.diagnostic if st else None
            rows.append({
                "name": e.attr,
                "symbol": e.symbol,
                "version": e.version,
                "required": e.required,
                "status": st.status if st else "unresolved",
                "abi": d.abi if d else None,
                "exported": d.exported if d and d.ok else None,
                "address": d.to_dict()["address"] if d and d.ok else None,
                "via": st.via if st else None,
                "attempts": [a.to_dict() for a in st.attempts] if st else [],
            })
        return {
            "table": self.name,
            "stream": self.stream,
            "resolved": resolved,
            "min_driver": self.min_driver(),
            "min_driver_release": format_version(self.min_driver()) if self.min_driver() else None,
            "entries": rows,
        }

    # --- lifecycle ---------------------------------------------------------------
    def reset(self, *, source: Driver | Runtime | Callable[[], Driver | Runtime] | None = None) -> None:
        """Forget every resolution (tests, a driver reload, a forked child); the next access resolves again."""
        with self._lock:
            # The flag first: a reader that still sees True reads a real function or, after
            # _fill_lazy, a _Lazy that resolves again under the lock, never a loop of _Lazy.
            self._resolved = False
            self._fill_lazy()
            self._states = {}
            self._forked_refused = False
            if source is not None:
                self._source = source

    def _forked(self) -> None:
        """In a forked child: drop pointers resolved by the parent, or refuse use."""
        if not self._resolved:
            return
        # The lock itself is fresh here already (cuentry._forksafe re-creates every cuentry lock).
        refuse = self._on_fork == "refuse"
        self.reset()
        self._forked_refused = refuse

    def __repr__(self) -> str:
        d = self.__dict__
        state = "resolved" if d.get("_resolved") else "unresolved"
        return f"<cuentry.Table {d.get('name')!r} {d.get('stream')} {len(d.get('entries', ()))} entries, {state}>"
