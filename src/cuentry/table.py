"""Function tables: what library authors declare once and call many times.

```python
from cuentry import Table, optional, out, required
from cuentry.context import primary_context

drv = Table(
    "mylib",
    [
        required("cuMemAlloc", 3020),
        required("cuMemFree", 3020),
        required("PFN_cuStreamBeginCapture_v10010_ptsz"),
        optional("cuDeviceGetUuid", 11040, fallback=optional("cuDeviceGetUuid", 9020)),
        required("cuCtxCreate", 12050, fallback=[optional("cuCtxCreate", 11040),
                                                 optional("cuCtxCreate", 3020)]),  # one of three
        optional("cuMulticastCreate", 12010),            # unavailable -> reason object
    ],
    stream="per_thread",                                 # or "legacy", or stream_from_env()
)
with primary_context(0):                                 # memory calls need a current context
    ptr = out("CUdeviceptr")
    drv.cuMemAlloc.checked(ptr, 1 << 20)                 # first access resolves the whole table, once
    drv.cuMemFree.checked(ptr[0])
drv.available("cuMulticastCreate"), drv.reason("cuMulticastCreate")
```

A table has exactly one stream mode. Resolution is lazy, happens once under a
lock, and asks and checks every entry (nothing is refused later); each entry's
typed callable is then bound on its first read, and from then on is a plain
slot of the table, so a cached access costs what any attribute access costs. A required entry that
fails makes resolution raise [TableResolutionError][cuentry.errors.TableResolutionError] listing every
failing entry. Optional entries follow the seed's flow (driver version against
the catalog's first version, ask at the fixed ABI version, check CUresult,
query result and pointer), else take their own fallback: another entry, a
Python callable, or an [Unavailable][cuentry.table.Unavailable] carrying the reason. A required entry
may fall back to other entries too (never to a callable): it fails only when every
pin of its chain does, and [Table.min_driver][cuentry.table.Table.min_driver] is
the driver floor that follows ([driver_floor][cuentry.entry.driver_floor]).

Entries are [Entry][cuentry.entry.Entry] records: a table binds each pin once, in
its mode, and keeps the bound entries (`table.entries`); entries a manifest has
bound in the table's mode are used as they are.
"""

from __future__ import annotations

import os
import sys
from _weakrefset import WeakSet  # what weakref.WeakSet is, without importing weakref (a cold start)

from . import _forksafe
from .catalog import Catalog, catalog
from .diagnostics import Diagnostic
from .driver import Driver, Runtime, default_driver
from .entry import RESERVED, Entry, bind_entry, floor_of, optional, required
from .errors import (
    ForkError,
    InterpreterShutdownError,
    ResolutionError,
    TableDeclarationError,
    TableResolutionError,
    UnavailableError,
    UnknownEntryError,
    UsageError,
)
from .names import DEFAULT, LEGACY, PER_THREAD, Stream, catalog_stream, format_version, parse_stream

TYPE_CHECKING = False  # typing is not imported at run time: a library's first table stays cheap
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Literal

    from .calls import TypedFunction
    from .catalog import Abi
    from .manifest import Manifest

    # (declared entries, catalog, bound entries, their names, their own pins)
    _Declared = tuple[tuple[Any, ...], Catalog, tuple[Entry, ...], tuple[str, ...], tuple[tuple[str, int, Stream, Abi], ...]]

__all__ = [
    "RESERVED",
    "STREAM_ENV",
    "Entry",
    "Table",
    "Unavailable",
    "optional",
    "required",
    "stream_from_env",
]

STREAM_ENV = "CUENTRY_PER_THREAD_DEFAULT_STREAM"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def stream_from_env(default: Stream | None = None, env: str = STREAM_ENV) -> Stream:
    """The stream mode from `$CUENTRY_PER_THREAD_DEFAULT_STREAM`, parsed strictly.

    "1", "true", "yes", "on" mean per-thread; "0", "false", "no", "off" mean legacy
    (case-insensitive); unset or empty gives `default`; anything else is an error.
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


class _Lazy:
    """What an entry's slot holds before resolution: using it resolves the table.

    Tables define no `__getattr__` (it would slow every attribute read); instead
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

    def checked(self, *args: Any, **kwargs: Any) -> None:
        """As a typed callable's `checked`: raises [UnavailableError][cuentry.errors.UnavailableError] with the reason."""
        raise UnavailableError(self.symbol, self.reason)

    def __repr__(self) -> str:
        return f"<Unavailable {self.symbol}: {self.reason.classification.value}>"


class _Binder:
    """An entry resolved and checked but not bound yet, in the table's own class: its first read binds the
    typed callable ([Table._bind_entry][cuentry.table.Table._bind_entry]), writes it to the entry's slot and
    removes this descriptor, so every later read is a slot read.

    This is why a table changes its class (issue 32.2 measured the one-class alternative, a forwarding object
    in each slot until the entry's first call: an entry read before its first call and held then costs 3-4x
    per call compiled, +35% pure; `one_class_alternative` of benchmarks/bench_table.py, BENCHMARKS.md)."""

    __slots__ = ("attr",)

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, t: Table | None, owner: type | None = None) -> Any:
        if t is None:
            return self
        return t._bind_entry(self.attr)

    def __set__(self, t: Table, value: Any) -> None:  # an assignment, as to the slot it stands in for
        t._settle(self.attr, value)

    def __delete__(self, t: Table) -> None:
        with t._lock:
            t._settle(self.attr, None)
            t._layout.__dict__[self.attr].__delete__(t)


class _State:
    """How one entry ended: status (resolved | fallback | unavailable | failed), its value, the diagnostic
    (of a plain success: built when first asked for), the fallback taken, every attempt's diagnostic, and
    for a success not bound yet what binds it: (source, ABI, address)."""

    __slots__ = ("status", "value", "_diagnostic", "via", "_attempts", "_make", "bind")

    def __init__(self, status: str, value: Any, diagnostic: Diagnostic | None, via: str | None = None,
                 attempts: tuple[Diagnostic, ...] = (), make: Callable[[], Diagnostic] | None = None,
                 bind: tuple[Driver | Runtime, Abi, int] | None = None) -> None:
        self.status = status
        self.value = value
        self._diagnostic = diagnostic
        self.via = via
        self._attempts = attempts
        self._make = make
        self.bind = bind

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
_BINDERS: dict[type, dict[str, _Binder]] = {}  # per layout: a _Binder for each entry (as many as _LAYOUTS)
_PENDING: dict[type, type] = {}  # per layout: the class of its tables resolved with no entry bound yet (shared)


def _pending_class(layout: type, unbound: set[str], shared: bool = False) -> type:
    """A subclass of `layout` with a [_Binder][cuentry.table._Binder] for each entry of `unbound`. A shared
    one (`_shared`) is never changed: a table leaves it for a class of its own at its first binding."""
    binders = _BINDERS.get(layout)
    if binders is None:
        binders = {a: _Binder(a) for a in layout.__dict__["__slots__"]}  # stateless: one set per layout
        if len(_BINDERS) < 1024:
            _BINDERS[layout] = binders
    return type(layout.__name__, (layout,), {"__slots__": (), "__module__": layout.__module__,
                                             "__qualname__": layout.__qualname__, "_shared": shared,
                                             **{a: binders[a] for a in unbound}})


def _shutdown_error(name: str, what: str, exc: ImportError) -> Exception:
    """An import failing during a table's first use: the interpreter is shutting down (Python imports nothing
    then), said as such; any other ImportError is returned as it is."""
    if sys.meta_path is None or sys.is_finalizing():
        return InterpreterShutdownError(f"table {name!r} was first {what} while the interpreter is shutting down",
                                        hint="use the table once before exit (e.g. table.resolve() at start-up), "
                                             "not for the first time in a __del__ or an atexit handler")
    return exc


def _after_fork() -> None:
    _forksafe.reinit_after_fork()  # tables take their locks below: make sure they are fresh first
    for t in list(_TABLES):
        t._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _listed(name: object, entries: object) -> tuple[Any, ...]:
    """The declared entries as a tuple; a table name that is not a string or entries that are not an
    iterable are declaration errors."""
    if not isinstance(name, str) or not name.strip():
        raise TableDeclarationError(f"a table's name is a non-empty string, got {name!r}",
                                    hint="Table('mylib', [required(...), ...], stream='legacy')")
    if isinstance(entries, (str, bytes)) or not hasattr(entries, "__iter__"):
        raise TableDeclarationError(f"table {name!r}: entries must be a list of required(...)/optional(...), "
                                    f"got {type(entries).__name__}", hint="Table('mylib', [required('cuMemAlloc', 3020)], ...)")
    return tuple(entries)


def _mode(name: str, stream: object) -> Stream:
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
    return catalog_stream(mode)


def _check_source(name: str, source: object) -> None:
    if source is None or isinstance(source, (Driver, Runtime)) or callable(source):
        return
    raise TableDeclarationError(f"table {name!r}: source must be a Driver, a Runtime, a function returning one, "
                                f"or None, got {type(source).__name__}",
                                hint="leave source out to use cuentry.default_driver(), or pass Driver.load(path)")


def _check_attr(name: str, attr: object, seen: dict[str, Entry]) -> None:
    if not isinstance(attr, str) or not attr.isidentifier():
        raise TableDeclarationError(f"table {name!r}: entry name {attr!r} is not a Python identifier",
                                    hint="required('cuMemAlloc', 3020, name='mem_alloc')")
    if attr in seen:
        raise TableDeclarationError(f"table {name!r}: {attr} is declared twice",
                                    hint="give one of them name='...' to hold both")
    if attr in RESERVED or attr.startswith("_"):
        raise TableDeclarationError(f"table {name!r}: {attr!r} clashes with a Table attribute",
                                    hint="give it another name='...'")


def _layout(cls: type[Table], listed: tuple[Any, ...]) -> type[Table]:
    """The per-layout subclass of `cls` whose `__slots__` are the entries' names (declaration errors are
    raised by `_declare`: an invalid name gets no slot here)."""
    attrs = [e.attr for e in listed if isinstance(e, Entry)]
    slots = tuple(dict.fromkeys(
        a for a in attrs if isinstance(a, str) and a.isidentifier() and a not in RESERVED and not a.startswith("_")))
    sub = _LAYOUTS.get((cls, slots))
    if sub is None:  # making a class costs ~40 us for 100 slots: tables of one layout share theirs
        sub = type(cls.__name__, (cls,), {"__slots__": slots, "__module__": cls.__module__,
                                           "__qualname__": cls.__qualname__})
        if len(_LAYOUTS) < 1024:
            _LAYOUTS[(cls, slots)] = sub
    return sub


def _declare(name: str, entries: tuple[Any, ...], mode: Stream, cat: Catalog) -> _Declared:
    """Check and bind declared entries in `mode`: (declared, cat, bound entries, names, pins)."""
    seen: dict[str, Entry] = {}
    pins: list[tuple[str, int, Stream, Abi]] = []
    for e in entries:
        if not isinstance(e, Entry):
            raise TableDeclarationError(f"table {name!r}: {e!r} is not an entry", hint="use required(...) or optional(...)")
        attr = e.attr
        _check_attr(name, attr, seen)
        b = seen[attr] = bind_entry(e, mode, cat, where=f"table {name!r}: ")
        pins.append((b.symbol, b.version, mode, b.bound_abi))
    return (entries, cat, tuple(seen.values()), tuple(seen), tuple(pins))


# Declarations already checked and bound, by (the declared entries' ids, mode, catalog): a library that
# declares the same table again (per thread, per device, after a reset) checks and binds nothing twice.
# Each value keeps its declared entries and catalog alive (an id is not reused while it is kept); bounded.
_DECLARED: dict[tuple[tuple[int, ...], str, int], _Declared] = {}
_NEW: dict[tuple[type, tuple[int, ...]], tuple[tuple[Any, ...], type[Table]]] = {}  # ids -> the layout class
_MEMO_LIMIT = 256


class Table:
    """A declared set of entry points in one stream mode, resolved lazily once.

    Each table is an instance of a subclass whose `__slots__` are the entry names
    (one per layout), so a resolved entry is read as a slot: as fast as any
    attribute access, however many entries the table has. Between resolution and
    an entry's first read, a class of the table's own stands above it, holding a
    descriptor for each entry not bound yet; it is dropped when none is left.
    """

    _layout: type[Table]  # the per-layout class (set in __new__)
    _unbound: set[str]  # entries resolved but not bound yet
    _attrs: tuple[str, ...]  # the entries' names, in order
    _pins: tuple[tuple[str, int, Stream, Abi], ...]  # the entries' own pins, as resolve_many takes them

    def __new__(cls, name: str, entries: Iterable[Entry], **kwargs: Any) -> Table:
        listed = _listed(name, entries)
        ids = tuple(map(id, listed))  # the same declared entries (kept alive by the memo: an id is not reused)
        known = _NEW.get((cls, ids))
        if known is not None:
            sub = known[1]
        else:
            sub = _layout(cls, listed)
            if len(_NEW) >= _MEMO_LIMIT:
                _NEW.clear()
            _NEW[(cls, ids)] = (listed, sub)
        self: Table = object.__new__(sub)
        self.__dict__["_declared_entries"] = listed
        self.__dict__["_declared_ids"] = ids
        self.__dict__["_layout"] = sub
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
        ids = self.__dict__.pop("_declared_ids", None)
        if cat is not None and not isinstance(cat, Catalog):
            raise TableDeclarationError(f"table {name!r}: cat must be a cuentry Catalog, got {type(cat).__name__}",
                                        hint="leave cat out to use the installed catalog")
        listed = _listed(name, entries) if declared is None else declared
        self._init(name, listed, tuple(map(id, listed)) if ids is None else ids, stream, source, on_fork,
                   catalog() if cat is None else cat)
        _TABLES.add(self)

    def _init(self, name: str, entries: tuple[Entry, ...], ids: tuple[int, ...], stream: Any, source: Any, on_fork: str,
              cat: Catalog) -> None:
        self.stream: Stream = _mode(name, stream)
        if on_fork not in ("reresolve", "refuse"):
            raise TableDeclarationError(f"on_fork must be 'reresolve' or 'refuse', got {on_fork!r}")
        _check_source(name, source)
        self.name = name
        self._source = source
        self._on_fork = on_fork
        self._cat = cat
        self._pid = os.getpid()
        self._states: dict[str, _State] = {}
        self._unbound = set()
        self._resolved = False
        self._forked_refused = False
        key = (ids, self.stream, id(cat))
        got = _DECLARED.get(key)
        if got is None or got[1] is not cat:
            got = _declare(name, entries, self.stream, cat)
            if len(_DECLARED) >= _MEMO_LIMIT:
                _DECLARED.clear()
            _DECLARED[key] = got
        self.entries: tuple[Entry, ...] = got[2]
        self._attrs = got[3]  # each entry's name, in order (its slot)
        self._pins = got[4]  # each entry's own pin, as resolve_many takes it
        self._fill_lazy()

    @classmethod
    def from_manifest(cls, manifest: str | os.PathLike[str] | Manifest, **kwargs: Any) -> Table:
        """A table declared by a manifest (the format of `cuentry check` and `cuentry generate`).

        Args:
            manifest: the manifest file's path, or a [Manifest][cuentry.manifest.Manifest] already read
                (its entries are bound already: nothing is bound again).
            **kwargs: `source`, `on_fork`, `cat` go to the table.

        Raises:
            ManifestError: a malformed manifest, with its line and column.
        """
        from .manifest import Manifest, load

        m = manifest if isinstance(manifest, Manifest) else load(manifest, cat=kwargs.get("cat"))
        rest = {k: v for k, v in kwargs.items() if k != "cat"}
        return cls(m.name, m.entries, stream=m.stream, cat=m.cat, **rest)

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
        """Resolve every entry now (idempotent, thread-safe).

        Raises:
            TableResolutionError: a required entry failed.
            InterpreterShutdownError: the first use comes while the interpreter shuts down.
        """
        if self._resolved:
            return self
        try:
            return self._resolve_now()
        except ImportError as exc:
            raise _shutdown_error(self.name, "resolved", exc) from None

    def _resolve_now(self) -> Table:
        with self._lock:
            if self._resolved:
                return self
            if self._forked_refused:
                raise ForkError(f"table {self.name!r} was resolved in process {self._pid} and this is a forked child",
                                hint="call table.reset() in the child, or declare the table with on_fork='reresolve'")
            src = self._get_source()
            states: dict[str, _State] = {}
            failures: list[Diagnostic] = []
            # One call for every entry's own pin (Driver.resolve_many: the queries in one loop); a pin that
            # failed goes on through its fallbacks one by one.
            pins = self._pins
            answers = src.resolve_many(pins)
            for attr, e, pin, answer in zip(self._attrs, self.entries, pins, answers, strict=True):
                if type(answer) is tuple:  # (address, diagnostic()): checked; bound on the first read
                    states[attr] = _State("resolved", None, None, None, (), answer[1], (src, pin[3], answer[0]))
                    continue
                st = states[attr] = self._resolve_entry(src, e, answer)  # type: ignore[arg-type]
                if e.required and st.status == "failed":
                    failures.extend(d for d in st.attempts[:1])
            if failures:
                self._states = states
                raise TableResolutionError(self.name, failures)
            self._publish(states)
            self._states = states
            self._pid = os.getpid()
            self._resolved = True
        return self

    def _ask(self, src: Driver | Runtime, e: Entry) -> tuple[Any, Diagnostic]:
        abi = e.bound_abi  # every entry of a table is bound at declaration
        too_old = src.too_old(e.symbol, e.version, self.stream, abi)
        if too_old is not None:
            raise too_old
        r = src.resolve_checked(e.symbol, e.version, self.stream, abi)
        return r.function, r.diagnostic

    def _resolve_entry(self, src: Driver | Runtime, e: Entry, failed: ResolutionError | None = None) -> _State:
        """The entry's state; `failed`: how its own pin already failed (then only its fallbacks are asked)."""
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

    def _publish(self, states: dict[str, _State]) -> None:
        """Each entry's value into its slot, and for those still to bind, a class of this table's own with a
        [_Binder][cuentry.table._Binder] for each (a read of one binds it)."""
        layout = self._layout
        members = layout.__dict__
        unbound: set[str] = set()
        for attr, st in states.items():
            if st.bind is None:
                members[attr].__set__(self, st.value)
            else:
                unbound.add(attr)
        self._unbound = unbound
        if unbound and len(unbound) == len(states):  # none bound yet (the common case): the layout's shared class
            shared = _PENDING.get(layout)
            if shared is None:
                shared = _pending_class(layout, unbound, shared=True)
                if len(_PENDING) < 1024:
                    _PENDING[layout] = shared
            self.__class__ = shared
        elif unbound:
            self.__class__ = _pending_class(layout, unbound)

    def _bind_entry(self, attr: str) -> Any:
        """The first read of a resolved entry: its typed callable, bound now (and from now on its slot's)."""
        with self._lock:
            if not self._resolved:  # reset() since the descriptor was read: resolve again
                self.resolve()
            st = self._states[attr]
            if st.bind is not None:
                src, abi, addr = st.bind
                try:
                    st.value = src.typed(abi, addr)
                except ImportError as exc:
                    raise _shutdown_error(self.name, f"bound ({attr})", exc) from None
                st.bind = None
            self._settle(attr, st.value)
            return st.value

    def _settle(self, attr: str, value: Any) -> None:
        """`value` into the entry's slot; its descriptor (if any) removed, and the table's own class with the
        last one."""
        with self._lock:
            self._layout.__dict__[attr].__set__(self, value)
            unbound = self.__dict__.get("_unbound")
            if unbound and attr in unbound:
                unbound.discard(attr)
                cls = type(self)
                if not unbound:
                    self.__class__ = self._layout
                elif cls.__dict__.get("_shared"):  # the layout's shared class: this table gets its own now
                    self.__class__ = _pending_class(self._layout, unbound)
                elif cls is not self._layout and attr in cls.__dict__:
                    delattr(cls, attr)

    def _fill_lazy(self) -> None:
        put = object.__setattr__
        for attr in self._attrs:
            put(self, attr, _Lazy(self, attr))

    # --- queries -------------------------------------------------------------------
    @property
    def resolved(self) -> bool:
        return self._resolved

    def _state(self, attr: str) -> _State:
        if attr not in {e.attr for e in self.entries}:
            raise _unknown_entry(self, attr)
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
        """The lowest driver version on which this table resolves: [driver_floor][cuentry.entry.driver_floor]
        of its entries (each required entry needs one pin of its chain; optional ones never raise it)."""
        return floor_of(self.entries)

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
            self._unbound = set()
            if type(self) is not self._layout:
                self.__class__ = self._layout
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

    if TYPE_CHECKING or sys.version_info >= (3, 12):
        # On 3.11 a class with `__getattr__` loses the interpreter's specialized attribute reads (an entry read
        # would cost 2-2.6x a plain attribute, against the table's promise of one slot read); 3.12 keeps them. On
        # 3.11 a typo is Python's own AttributeError, whose traceback names the entry it probably meant.
        def __getattr__(self, name: str) -> TypedFunction:
            """Only reached for a name that is neither an entry nor an attribute of the table: a typo
            (`lib.cuMemAloc`) raises [UnknownEntryError][cuentry.errors.UnknownEntryError] with the entries it
            probably meant (Python 3.12+). Typed as an entry, so code that reads entries type-checks; `cuentry
            generate python` types each by its ABI."""
            if name.startswith("_"):  # private and protocol names (copy, pickle probe them): the plain error
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)
            raise _unknown_entry(self, name)

    def __repr__(self) -> str:
        d = self.__dict__
        state = "resolved" if d.get("_resolved") else "unresolved"
        n = len(d.get("entries", ()))
        return f"<cuentry.Table {d.get('name')!r} {d.get('stream')} {n} {'entry' if n == 1 else 'entries'}, {state}>"


def _unknown_entry(t: Table, name: str) -> UnknownEntryError:
    """The error for a name that is not an entry of `t`: the entries it probably meant (a typo, the case, a
    suffix), or, for a driver entry point the table does not declare, how to declare it."""
    d = t.__dict__
    attrs: tuple[str, ...] = d.get("_attrs", ())
    table = str(d.get("name", "?"))
    base = name.split("_v")[0].removesuffix("_ptsz").removesuffix("_ptds") if "_" in name else name
    near = [a for a in attrs if a.lower() == name.lower() or a == base]
    if not near and attrs:
        import difflib

        near = difflib.get_close_matches(name, attrs, n=3, cutoff=0.75)
    if near:
        return UnknownEntryError(table, name, near)
    cat = d.get("_cat")
    if cat is not None and name in cat:
        return UnknownEntryError(table, name, hint=f"{name} is a driver entry point this table does not declare: add "
                                                   f"required({name!r}, VERSION) (or optional) to its entries")
    return UnknownEntryError(table, name, hint=f"its entries: {', '.join(attrs[:8])}{', ...' if len(attrs) > 8 else ''}"
                             if attrs else "")
