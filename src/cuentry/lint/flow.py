"""One dataflow analysis under every lint rule: what a request binds, whatever the code's spelling.

A front end lowers a translation unit once into a small IR (`Program`: functions of statements over
expressions and lvalues, and the call sites with what the front end knows of each); `solve` computes, to a
fixed point, every value a location can hold and so every entry-point request and every export taken by name,
with the types the resulting pointers land in. Nothing here knows a language or a spelling; the front end and
`Seeds` bring those.

Values (`Int`, `Str`, `Tk` for the toolkit's `CUDA_VERSION`, `Ver` for a version query's answer, `Addr`,
`Fun`, `Exp` for an export taken by name, `Ent` for the pointer a request stores, `Par` and `Ld` for what a
function's parameters are and point to, `Ar` for arithmetic on those, `Unk`) are held in sets; each member
carries tags `(table, row)` so that values read from one row of a constant table keep together: a request
whose name comes from row 3 and whose destination from row 4 is never made.

The facts it computes, each a sentence about the language:
- a call through a pointer bound to export X (by dlsym, by a request, by any route a value travels) is a call
  of X: the getter's request, the version query's store;
- a function's effects are its summary (stores through its parameters, requests, landings, returns) with the
  parameters symbolic; a call applies the summary to its arguments, so a function whose parameter reaches a
  lookup's name is a lookup, whatever it is called;
- a call of a function whose body is not seen, given a driver export's name, that returns a pointer or
  fills a pointer to a pointer, is a lookup by use;
- locals are flow-sensitive (an assignment replaces), everything reachable from elsewhere (globals, fields,
  captured variables) is the union of every store to it; a field reached through an unknown object is the
  field of every object;
- a loop over a constant table reads each row with its tag (the body is not unrolled: the tags keep a row's
  fields together).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ANY",
    "LV",
    "MAX_COMBOS",
    "MAX_DEPTH",
    "MAX_ROUNDS",
    "MAX_VALUES",
    "NONE",
    "TV",
    "UNKNOWN",
    "Addr",
    "Ar",
    "Call",
    "E",
    "EAddr",
    "ECall",
    "ECast",
    "ECond",
    "EFun",
    "ELit",
    "ELoad",
    "EOp",
    "EUnion",
    "EUnk",
    "EVar",
    "Effect",
    "Ent",
    "Exp",
    "Fun",
    "Func",
    "Int",
    "LDeref",
    "LField",
    "LIndex",
    "LVar",
    "Land",
    "Ld",
    "Loc",
    "Par",
    "Path",
    "Program",
    "Req",
    "Request",
    "Result",
    "S",
    "SAssign",
    "SExpr",
    "SIf",
    "SLoop",
    "SRet",
    "Seeds",
    "Store",
    "Str",
    "Summary",
    "Tags",
    "Through",
    "Tk",
    "Unk",
    "Val",
    "Vals",
    "Var",
    "Ver",
    "arith",
    "solve",
    "symbolic",
]

MAX_VALUES = 96
"""Values a location or an expression holds, at most (beyond: one more `Unk`)."""
MAX_COMBOS = 4096
"""Combinations of a call's argument values tried, at most."""
MAX_ROUNDS = 8
"""Rounds of the whole program to a fixed point of the shared locations, at most."""
MAX_DEPTH = 10
"""Summaries in progress at once (deeper calls are unknown)."""


# ---- locations and values ------------------------------------------------------------------------------------

Path = tuple[str | int, ...]
ANY = "*"   # an index that is any index


@dataclass(frozen=True, slots=True)
class Loc:
    """A place that holds values: a variable (`base` "l:KEY" local, "g:KEY" shared), a field of any object
    ("f:KEY"), or (base "*") the object a symbolic pointer `sym` points to; `path` the fields and indexes
    below it. `ty` is the type id of what it holds (not part of its identity)."""

    base: str
    path: Path = ()
    sym: Val | None = None
    ty: int = field(default=-1, compare=False, hash=False)

    def below(self, step: str | int, ty: int = -1) -> Loc:
        return Loc(self.base, (*self.path, step), self.sym, ty)


@dataclass(frozen=True, slots=True)
class Int:
    n: int
    text: str = field(default="", compare=False, hash=False)
    at: tuple[int, int] = field(default=(0, 0), compare=False, hash=False)   # where a table's row writes it


@dataclass(frozen=True, slots=True)
class Str:
    s: str
    at: tuple[int, int] = field(default=(0, 0), compare=False, hash=False)   # where a table's row writes it


@dataclass(frozen=True, slots=True)
class Tk:
    """The toolkit's version (`CUDA_VERSION`, a macro of it), with its value when known."""

    n: int | None
    text: str = field(default="", compare=False, hash=False)
    at: tuple[int, int] = field(default=(0, 0), compare=False, hash=False)   # where a table's row writes it


@dataclass(frozen=True, slots=True)
class Ver:
    """What a version query wrote: "driver" or "runtime"."""

    kind: str
    text: str = field(default="", compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Addr:
    loc: Loc


@dataclass(frozen=True, slots=True)
class Fun:
    """A function of the program or a library, by key."""

    key: str
    name: str = field(default="", compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Exp:
    """The address a library exports under `name` (the lookup at `site`, made concrete at the call `at`)."""

    site: int
    at: int
    api: str
    name: Val
    by_use: bool = False


@dataclass(frozen=True, slots=True)
class Ent:
    """The pointer a request stores: the getter call at `site`, made concrete at the call `at`."""

    site: int
    at: int
    api: str
    sym: Val
    ver: Val
    flags: Val
    status: Val


@dataclass(frozen=True, slots=True)
class Par:
    """A parameter of the function being summarized (`i` < 0: a template argument, -1 - i)."""

    fn: str
    i: int
    text: str = field(default="", compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Ld:
    """What a symbolic location holds (read through a parameter)."""

    loc: Loc


@dataclass(frozen=True, slots=True)
class Ar:
    """Arithmetic over a symbolic value (`ver * 10`): its kind is the operand's once known."""

    op: str
    a: Val
    b: Val


@dataclass(frozen=True, slots=True)
class Unk:
    text: str = field(default="", compare=False, hash=False)


Val = Int | Str | Tk | Ver | Addr | Fun | Exp | Ent | Par | Ld | Ar | Unk
Tags = tuple[tuple[str, int], ...]
TV = tuple[Val, Tags]
Vals = frozenset[TV]
NONE: Vals = frozenset()
UNKNOWN: Vals = frozenset({(Unk(), ())})


def symbolic(v: Val) -> bool:
    """True when the value depends on a parameter of the function being summarized."""
    if isinstance(v, (Par, Ld, Ar)):
        return True
    if isinstance(v, Addr):
        return v.loc.sym is not None
    if isinstance(v, Exp):
        return symbolic(v.name)
    if isinstance(v, Ent):
        return any(symbolic(x) for x in (v.sym, v.ver, v.flags))
    return False


# ---- the IR ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Var:
    """A variable: `key` unique in the program; `shared` when anything but its own function can reach it."""

    key: str
    shared: bool
    ty: int = -1
    param: int | None = None


@dataclass(frozen=True, slots=True)
class ELit:
    v: Val


@dataclass(frozen=True, slots=True)
class EVar:
    var: Var


@dataclass(frozen=True, slots=True)
class EAddr:
    lv: LV


@dataclass(frozen=True, slots=True)
class ELoad:
    lv: LV


@dataclass(frozen=True, slots=True)
class ECall:
    site: int


@dataclass(frozen=True, slots=True)
class EOp:
    op: str
    a: E
    b: E


@dataclass(frozen=True, slots=True)
class EUnion:
    items: tuple[E, ...]


@dataclass(frozen=True, slots=True)
class ECast:
    """A conversion to the type `ty`: the value lands in that type (when it is a function pointer's)."""

    ty: int
    e: E


@dataclass(frozen=True, slots=True)
class ECond:
    """`c ? a : b`: one side when `c` is known, both otherwise."""

    c: E
    a: E
    b: E


@dataclass(frozen=True, slots=True)
class EFun:
    key: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class EUnk:
    text: str = ""


E = ELit | EVar | EAddr | ELoad | ECall | EOp | EUnion | ECast | ECond | EFun | EUnk


@dataclass(frozen=True, slots=True)
class LVar:
    var: Var


@dataclass(frozen=True, slots=True)
class LDeref:
    """`*e`; `index` when written `e[i]` (the element `i` away from where `e` points)."""

    e: E
    index: E | None = None
    ty: int = -1


@dataclass(frozen=True, slots=True)
class LField:
    base: LV
    key: str
    ty: int = -1


@dataclass(frozen=True, slots=True)
class LIndex:
    """An element of an array (the array itself, not a pointer: see `LDeref`)."""

    base: LV
    index: E
    ty: int = -1


LV = LVar | LDeref | LField | LIndex


@dataclass(frozen=True, slots=True)
class SAssign:
    lv: LV
    e: E


@dataclass(frozen=True, slots=True)
class SExpr:
    e: E


@dataclass(frozen=True, slots=True)
class SRet:
    e: E


@dataclass(frozen=True, slots=True)
class SIf:
    then: tuple[S, ...]
    other: tuple[S, ...]


@dataclass(frozen=True, slots=True)
class SLoop:
    body: tuple[S, ...]


S = SAssign | SExpr | SRet | SIf | SLoop


@dataclass
class Call:
    """A call site: the callee (a value), its arguments, and what the front end knows of it statically."""

    id: int
    fn: str                                   # the key of the function it is in
    callee: E
    args: tuple[E, ...]
    name: str = ""                            # the callee's name when it is a named function
    static_api: str = ""                      # the request or lookup API the callee's type is (a pointer's)
    outs: tuple[int, ...] = ()                # arguments that are pointers to pointers (a lookup by use fills them)
    ty: int = -1                              # the call's own type id, when a function pointer's
    targs: tuple[E, ...] = ()                 # template arguments that are values


@dataclass
class Func:
    key: str
    name: str
    params: tuple[Var, ...]
    body: tuple[S, ...]
    defaults: tuple[E | None, ...] = ()
    exported: bool = False                    # callable from other translation units


@dataclass
class Program:
    funcs: dict[str, Func]
    calls: dict[int, Call]
    init: tuple[S, ...] = ()                  # the shared variables' initializers
    fnptr_types: frozenset[int] = frozenset() # type ids of function-pointer types (a value landing there counts)
    foreign: dict[str, Summary] = field(default_factory=dict)   # summaries of other translation units' functions


# ---- what the analysis is told of the world ---------------------------------------------------------------------


@dataclass(frozen=True)
class Seeds:
    """The library functions the analysis knows by what they do (by name, or the export a pointer is bound to).

    getters: API -> argument index of (symbol, pointer, version or None, flags, status or None);
    exporters: API -> argument index of the name; versions: API -> "driver" | "runtime";
    copies: functions that copy the bytes their second argument points to into their first's;
    lengths: functions whose value is the length of the string they are given (`strlen`);
    export_of: an exported name -> the API it is when it is one of the above (`cuGetProcAddress_v2` ->
    itself, `cuDriverGetVersion` -> itself), None for any other driver function;
    is_driver_name: True for a name of the driver's (a lookup by use needs one)."""

    getters: Mapping[str, tuple[int, int, int | None, int, int | None]]
    exporters: Mapping[str, int]
    versions: Mapping[str, str]
    copies: frozenset[str]
    lengths: frozenset[str]
    export_of: Callable[[str, Val], str | None]
    is_driver_name: Callable[[str], bool]


# ---- results ---------------------------------------------------------------------------------------------------


@dataclass
class Request:
    """One concrete request (or export taken by name): the value, the call it is reported at, the wrappers it
    went through (innermost first) and the types the pointer landed in."""

    value: Ent | Exp
    at: int
    via: tuple[str, ...] = ()
    lands: set[int] = field(default_factory=set)


@dataclass
class Result:
    requests: dict[Ent | Exp, Request] = field(default_factory=dict)
    unresolved: dict[int, set[str]] = field(default_factory=dict)   # getter/lookup site -> why its symbol is unknown
    wrapped: dict[int, set[int]] = field(default_factory=dict)      # a getter's site -> the calls that bound it
    state: dict[Loc, Vals] = field(default_factory=dict)            # every shared location's values
    summaries: dict[str, Summary] = field(default_factory=dict)     # the program's functions (for other units)
    apis: dict[int, str] = field(default_factory=dict)              # each getter or lookup call -> its API
    versioned: set[str] = field(default_factory=set)                # variables the driver's version reaches
    rounds: int = 0

    def holds(self, var_key: str) -> Vals:
        """What a shared variable holds (NONE for a local)."""
        return self.state.get(Loc("g:" + var_key), NONE)


# ---- effects and summaries ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Store:
    loc: Loc
    vals: Vals


@dataclass(frozen=True, slots=True)
class Land:
    ty: int
    v: Val


@dataclass(frozen=True, slots=True)
class Req:
    v: Ent | Exp
    via: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Through:
    """A call through a symbolic callee: made once the callee is known."""

    site: int
    callee: Val
    args: tuple[Vals, ...]


Effect = Store | Land | Req | Through


@dataclass
class Summary:
    fn: str
    ret: Vals = NONE
    effects: frozenset[Effect] = frozenset()
    defaults: tuple[Vals | None, ...] = ()
    name: str = ""


# ---- value sets ------------------------------------------------------------------------------------------------


def _cap(vals: Iterable[TV]) -> Vals:
    out = frozenset(vals)
    if len(out) > MAX_VALUES:
        out = frozenset(itertools.islice(out, MAX_VALUES)) | UNKNOWN
    return out


def _merge_tags(*tags: Tags) -> Tags | None:
    """The tags of values used together; None when two of them read different rows of one table."""
    if not any(tags):
        return ()
    seen: dict[str, int] = {}
    for ts in tags:
        for t, row in ts:
            if seen.setdefault(t, row) != row:
                return None
    return tuple(sorted(seen.items()))


def _combos(sets: Sequence[Vals]) -> Iterator[tuple[tuple[Val, ...], Tags]]:
    """Each tag-consistent choice of one value per set (at most `MAX_COMBOS`)."""
    n = 0
    for pick in itertools.product(*[sorted(s, key=repr) if len(s) > 1 else s for s in sets]):
        tags = _merge_tags(*(t for _, t in pick))
        if tags is None:
            continue
        yield tuple(v for v, _ in pick), tags
        n += 1
        if n >= MAX_COMBOS:
            return


def _with(vals: Vals, tags: Tags) -> Vals:
    if not tags:
        return vals
    out = []
    for v, t in vals:
        m = _merge_tags(t, tags)
        if m is not None:
            out.append((v, m))
    return frozenset(out)


def _untag(vals: Vals) -> Vals:
    return frozenset((v, ()) for v, _ in vals) if any(t for _, t in vals) else vals


_OPS: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a // b if b else None, "%": lambda a, b: a % b if b else None,
    "|": lambda a, b: a | b, "&": lambda a, b: a & b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b if 0 <= b < 64 else None, ">>": lambda a, b: a >> b if 0 <= b < 64 else None,
    "min": min, "max": max,
}
_CMP: dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def arith(op: str, a: Val, b: Val) -> Val:
    """The value of `a op b`: numbers folded (the toolkit's when its value is known), strings joined, a
    version stays a version (`drv / 10 * 10` is still the driver's), a symbolic operand waits for its value."""
    if op in _CMP:
        x, y = _number(a), _number(b)
        return Int(int(_CMP[op](x, y))) if x is not None and y is not None else Unk()
    if op == "+" and isinstance(a, Str) and isinstance(b, Str):
        return Str(a.s + b.s)
    if op not in _OPS:
        return Unk()
    if isinstance(a, Int) and isinstance(b, Int):
        try:
            got = _OPS[op](a.n, b.n)
        except (OverflowError, ValueError):
            got = None
        return Int(got) if got is not None else Unk()
    version = _version_arith(op, a, b)
    if version is not None:
        return version
    if symbolic(a) or symbolic(b):
        return Ar(op, a, b)
    if isinstance(a, Addr) and isinstance(b, Int) and op in "+-":
        return Addr(_step(a.loc, b.n if op == "+" else -b.n))
    return Unk()


def _version_arith(op: str, a: Val, b: Val) -> Val | None:
    """Arithmetic on a version: the driver's answer over the runtime's (the request asks at a version the driver
    gave); the toolkit's, folded when its value and the other operand are known. None: neither is a version."""
    vers = [x for x in (a, b) if isinstance(x, Ver)]
    if vers:
        return next((x for x in vers if x.kind == "driver"), vers[0])
    tk = a if isinstance(a, Tk) else b if isinstance(b, Tk) else None
    if tk is None:
        return None
    x, y = _number(a), _number(b)
    return Tk(_OPS[op](x, y) if x is not None and y is not None else None, tk.text)


def _number(v: Val) -> int | None:
    return v.n if isinstance(v, (Int, Tk)) else None


def _step(loc: Loc, n: int | None) -> Loc:
    """The element `n` away from the one `loc` is (any element when not known)."""
    if loc.path and (isinstance(loc.path[-1], int) or loc.path[-1] == ANY):
        last = loc.path[-1]
        new: str | int = last + n if isinstance(last, int) and n is not None else ANY
        return Loc(loc.base, (*loc.path[:-1], new), loc.sym, loc.ty)
    return loc if n == 0 else Loc(loc.base, (*loc.path, ANY), loc.sym, loc.ty)


# ---- the solver ------------------------------------------------------------------------------------------------


_MISSING: Vals = frozenset({(Unk("missing"), ())})   # a journal's mark: the location had no value


class _Frame:
    """One function being summarized: its locals (flow-sensitive, indexed by variable), what it returns, its
    symbolic effects. Branches and loops change the locals through a journal of the values they replace, so a
    branch costs what it changes, not the size of the function."""

    __slots__ = ("fn", "local", "by_base", "journals", "ret", "effects", "site")

    def __init__(self, fn: Func | None) -> None:
        self.fn = fn
        self.local: dict[Loc, Vals] = {}
        self.by_base: dict[str, set[Loc]] = {}
        self.journals: list[dict[Loc, Vals]] = []
        self.ret: set[TV] = set()
        self.effects: set[Effect] = set()
        self.site = -1

    def set(self, loc: Loc, vals: Vals) -> None:
        if self.journals:
            self.journals[-1].setdefault(loc, self.local.get(loc, _MISSING))
        if loc not in self.local:
            self.by_base.setdefault(loc.base, set()).add(loc)
        self.local[loc] = vals

    def _restore(self, loc: Loc, old: Vals) -> None:
        if old is _MISSING:
            self.local.pop(loc, None)
            self.by_base.get(loc.base, set()).discard(loc)
        else:
            self.local[loc] = old

    def run(self, body: Callable[[], None]) -> dict[Loc, tuple[Vals, Vals]]:
        """Run `body`, then undo what it changed: each location it set, with (the value before, the value after)."""
        self.journals.append({})
        try:
            body()
        finally:
            journal = self.journals.pop()
        out = {loc: (old, self.local.get(loc, _MISSING)) for loc, old in journal.items()}
        for loc, old in journal.items():
            self._restore(loc, old)
        return out


class _Solver:
    def __init__(self, prog: Program, seeds: Seeds) -> None:
        self.prog, self.seeds = prog, seeds
        self.state: dict[Loc, Vals] = {}
        self.by_base: dict[str, set[Loc]] = {}
        self.by_field: dict[str | int, set[Loc]] = {}
        self.stored: set[str] = set()          # shared bases assigned outside their initializer
        self.changed = False
        self.result = Result()
        self.memo: dict[str, Summary] = {}
        self.busy: list[str] = []
        self.in_init = False
        self.init_vals: dict[Loc, Vals] = {}
        self.optimistic = True                 # an unset shared location is empty while solving, unknown after
        self._by_name: dict[str, str] | None = None
        self._root_keys: set[str] | None = None

    # -- shared state --
    def _put(self, loc: Loc, vals: Vals) -> None:
        """Store into a shared location; a store into any row of a table (`t[i].f = ...`) of a value read from row k
        of that same table goes to row k (the loop that fills each row from its own fields)."""
        if ANY in loc.path and any(t for _, t in vals):
            rest: set[TV] = set()
            for v, tags in vals:
                row = _row_of(loc, tags)
                if row is None:
                    rest.add((v, tags))
                else:
                    self._put_one(row, frozenset({(v, ())}))
            if rest:
                self._put_one(loc, frozenset(rest))
            return
        self._put_one(loc, vals)

    def _put_one(self, loc: Loc, vals: Vals) -> None:
        if self.in_init:
            self.init_vals[loc] = _cap(self.init_vals.get(loc, NONE) | vals)
        else:
            self.stored.add(loc.base)
        old = self.state.get(loc, NONE)
        new = _cap(old | _untag(vals))
        if new != old:
            self.state[loc] = new
            self.by_base.setdefault(loc.base, set()).add(loc)
            if loc.path:
                self.by_field.setdefault(loc.path[-1], set()).add(loc)
            self.changed = True

    def _get(self, loc: Loc) -> Vals:
        """What a shared location holds: its own stores, the stores to any element where it names one (tagged
        by the row), and the stores to the same field of an object not known."""
        out: set[TV] = set()
        for other in self.by_base.get(loc.base, ()):
            m = _match(loc, other.path)
            if m is not None:
                out |= _with(self._initless(other), m)
        if loc.path and isinstance(loc.path[-1], str) and loc.path[-1] != ANY and not loc.base.startswith("f:"):
            out |= self.state.get(Loc("f:" + loc.path[-1]), NONE)
        if loc.base.startswith("f:"):
            for other in self.by_field.get(loc.base[2:], ()):
                out |= self._initless(other)
        if not out and not self.optimistic:
            return UNKNOWN
        return _cap(out)

    def _initless(self, loc: Loc) -> Vals:
        """A shared location's values; a zero or null initializer is left out when the program assigns it
        elsewhere (the value it has before it is set, not one it is used with)."""
        got = self.state.get(loc, NONE)
        if loc.base in self.stored:
            init = self.init_vals.get(loc, NONE)
            zero = {tv for tv in init if isinstance(tv[0], Int) and tv[0].n == 0}
            if zero and len(got) > len(zero):
                return got - frozenset(zero)
        return got

    # -- the whole program --
    def run(self) -> Result:
        """Rounds over the whole program until the shared locations hold still, then one more in which what was
        never set is unknown: the requests of that round are the result."""
        for rnd in range(MAX_ROUNDS + 1):
            last = not self.optimistic
            self.changed = False
            self.memo.clear()
            self.result.requests.clear()
            self.result.unresolved.clear()
            self.result.wrapped.clear()
            self.result.apis.clear()
            self.in_init = True
            self._block(self.prog.init, _Frame(None))
            self.in_init = False
            for key in self._order():
                s = self.summary(key)
                if key in self._roots:
                    self._finish(s)
            self.result.rounds = rnd + 1
            if last:
                break
            if not self.changed or rnd == MAX_ROUNDS - 1:
                self.optimistic = False
        self.result.state = self.state
        self.result.summaries = dict(self.memo)
        return self.result

    @property
    def _roots(self) -> set[str]:
        """The functions no call of this program is seen to make (their parameters stay unknown)."""
        if self._root_keys is None:
            called = {c.callee.key for c in self.prog.calls.values() if isinstance(c.callee, EFun)}
            self._root_keys = {k for k in self.prog.funcs if k not in called}
        return self._root_keys

    def _order(self) -> list[str]:
        return sorted(self.prog.funcs, key=lambda k: (k not in self._roots, k))

    def _finish(self, s: Summary) -> None:
        """A root's symbolic effects, its parameters never bound: a request of a parameter's symbol is left
        unjudged, a store through a parameter reaches the field of any object."""
        for eff in s.effects:
            if isinstance(eff, Req):
                site = eff.v.site
                why = "param" if _has_par(eff.v) else "unknown"
                self.result.unresolved.setdefault(site, set()).add(why)
            elif isinstance(eff, Store) and eff.loc.base == "*" and eff.loc.path and isinstance(eff.loc.path[-1], str):
                self._put(Loc("f:" + str(eff.loc.path[-1])), frozenset(tv for tv in eff.vals if not symbolic(tv[0])))

    # -- summaries --
    def summary(self, key: str) -> Summary:
        got = self.memo.get(key)
        if got is not None:
            return got
        f = self.prog.funcs.get(key)
        if f is None:
            return self.prog.foreign.get(key) or Summary(key, UNKNOWN)
        if key in self.busy or len(self.busy) >= MAX_DEPTH:
            return Summary(key, UNKNOWN, name=f.name)
        self.busy.append(key)
        try:
            fr = _Frame(f)
            for p in f.params:
                if p.param is not None:
                    fr.set(Loc("l:" + p.key, (), None, p.ty), frozenset({(Par(key, p.param, p.key), ())}))
            self._block(f.body, fr)
            defaults = tuple(self.expr(d, fr) if d is not None else None for d in f.defaults)
            s = Summary(key, _cap(fr.ret) or UNKNOWN, frozenset(fr.effects), defaults, f.name)
        finally:
            self.busy.pop()
        self.memo[key] = s
        return s

    # -- statements --
    def _block(self, stmts: Sequence[S], fr: _Frame) -> None:
        for st in stmts:
            self._stmt(st, fr)

    def _stmt(self, st: S, fr: _Frame) -> None:
        if isinstance(st, SAssign):
            self.assign(st.lv, self.expr(st.e, fr), fr)
        elif isinstance(st, SExpr):
            self.expr(st.e, fr)
        elif isinstance(st, SRet):
            fr.ret |= self.expr(st.e, fr)
        elif isinstance(st, SIf):
            then = fr.run(lambda: self._block(st.then, fr))
            other = fr.run(lambda: self._block(st.other, fr))
            for loc in {*then, *other}:
                a = then[loc][1] if loc in then else fr.local.get(loc, _MISSING)
                b = other[loc][1] if loc in other else fr.local.get(loc, _MISSING)
                fr.set(loc, _either(a, b))
        elif isinstance(st, SLoop):
            for _ in range(3):
                done = fr.run(lambda: self._block(st.body, fr))
                moved = False
                for loc, (old, new) in done.items():
                    joined = _either(old, new)
                    if joined != old:
                        fr.set(loc, joined)
                        moved = True
                if not moved:
                    break

    # -- stores --
    def assign(self, lv: LV, vals: Vals, fr: _Frame, *, strong: bool = True) -> None:
        """`lv = vals`: each place the lvalue may name gets the values that agree with the row it was reached by."""
        locs = self.lval(lv, fr)
        one = strong and len(locs) == 1
        for loc, tags in locs:
            self.store([loc], _with(vals, tags), fr, strong=one)

    def store(self, locs: Sequence[Loc], vals: Vals, fr: _Frame, *, strong: bool) -> None:
        versioned = any(isinstance(v, Ver) and v.kind == "driver" for v, _ in vals)
        for loc in locs:
            if versioned and loc.base[:2] in ("l:", "g:"):
                self.result.versioned.add(loc.base[2:])
            if loc.ty in self.prog.fnptr_types:
                for v, _ in vals:
                    self.land(loc.ty, v, fr)
            if loc.base == "*":
                if loc.sym is not None and isinstance(loc.sym, (Par, Ld)):
                    fr.effects.add(Store(loc, _untag(vals)))
                continue
            if loc.base.startswith("l:"):
                fr.set(loc, vals if strong and ANY not in loc.path else _cap(fr.local.get(loc, NONE) | vals))
                continue
            concrete = frozenset(tv for tv in vals if not symbolic(tv[0]))
            sym = vals - concrete
            if concrete:
                self._put(loc, concrete)
            if sym and fr.fn is not None:
                fr.effects.add(Store(loc, _untag(sym)))

    def land(self, ty: int, v: Val, fr: _Frame) -> None:
        """A value reaching a location (or a conversion) of a function-pointer type: the type the pointer of a
        request or export lands in."""
        if isinstance(v, (Ent, Exp)):
            if symbolic(v):
                if fr.fn is not None:
                    fr.effects.add(Land(ty, v))
                return
            if isinstance(v, Exp) and v.by_use and not (isinstance(v.name, Str) and self.seeds.is_driver_name(v.name.s)):
                return
            req = self.result.requests.get(v)
            if req is None:
                req = self.result.requests[v] = Request(v, v.at)
            req.lands.add(ty)
        elif isinstance(v, (Par, Ld)) and fr.fn is not None:
            fr.effects.add(Land(ty, v))

    # -- lvalues --
    def lval(self, lv: LV, fr: _Frame) -> list[tuple[Loc, Tags]]:
        """The places an lvalue may name, each with the rows of tables it was reached through."""
        if isinstance(lv, LVar):
            return [(Loc(("g:" if lv.var.shared else "l:") + lv.var.key, (), None, lv.var.ty), ())]
        if isinstance(lv, LField):
            return [(base.below(lv.key, lv.ty) if base.base != "u" else Loc("f:" + lv.key, (), None, lv.ty), tags)
                    for base, tags in self.lval(lv.base, fr)]
        if isinstance(lv, LIndex):
            idx = self.expr(lv.index, fr)
            steps = {v.n if isinstance(v, Int) else ANY for v, _ in idx}
            if len(steps) != 1:
                steps = {ANY}       # rows read one at a time: each tagged with its own
            return [(b.below(st, lv.ty), tags) for b, tags in self.lval(lv.base, fr) for st in sorted(steps, key=str)]
        out: list[tuple[Loc, Tags]] = []
        ptrs = self.expr(lv.e, fr)
        off = self.expr(lv.index, fr) if lv.index is not None else None
        for v, tags in ptrs:
            loc = _pointee(v)
            if loc is None:
                out.append((Loc("u", (), None, lv.ty), tags))
                continue
            if off is not None:
                for o, otags in off:
                    both = _merge_tags(tags, otags)
                    if both is not None:
                        got = _step(loc, o.n if isinstance(o, Int) else None)
                        out.append((_retype(got, lv.ty, self.prog.fnptr_types), both))
            else:
                out.append((_retype(loc, lv.ty, self.prog.fnptr_types), tags))
        return list(dict.fromkeys(out))

    def read(self, loc: Loc, fr: _Frame) -> Vals:
        if loc.base == "u":
            return UNKNOWN
        if loc.base == "*":
            return frozenset({(Ld(loc), ())})
        if loc.base.startswith("l:"):
            parts = [_with(fr.local[other], m) for other in fr.by_base.get(loc.base, ())
                     if (m := _match(loc, other.path)) is not None]
            return _cap(frozenset().union(*parts)) if parts else UNKNOWN
        return self._get(loc)

    # -- expressions --
    def expr(self, e: E, fr: _Frame) -> Vals:
        how = _EVAL.get(type(e))
        return how(self, e, fr) if how is not None else frozenset({(Unk(getattr(e, "text", "")), ())})

    def _e_lit(self, e: ELit, fr: _Frame) -> Vals:
        return frozenset({(e.v, ())})

    def _e_var(self, e: EVar, fr: _Frame) -> Vals:
        v = e.var
        return self.read(Loc(("g:" if v.shared else "l:") + v.key, (), None, v.ty), fr)

    def _e_load(self, e: ELoad, fr: _Frame) -> Vals:
        out: set[TV] = set()
        for loc, tags in self.lval(e.lv, fr):
            out |= _with(self.read(loc, fr), tags)
        return _cap(out)

    def _e_addr(self, e: EAddr, fr: _Frame) -> Vals:
        return frozenset((_addr(loc), tags) for loc, tags in self.lval(e.lv, fr) if loc.base != "u") or UNKNOWN

    def _e_call(self, e: ECall, fr: _Frame) -> Vals:
        return self.call(self.prog.calls[e.site], fr)

    def _e_cast(self, e: ECast, fr: _Frame) -> Vals:
        vals = self.expr(e.e, fr)
        if e.ty in self.prog.fnptr_types:
            for v, _ in vals:
                self.land(e.ty, v, fr)
        return vals

    def _e_op(self, e: EOp, fr: _Frame) -> Vals:
        a, b = self.expr(e.a, fr), self.expr(e.b, fr)
        return _cap((arith(e.op, x[0], y[0]), tags) for (x, y), tags in _pairs(a, b))

    def _e_union(self, e: EUnion, fr: _Frame) -> Vals:
        out: set[TV] = set()
        for it in e.items:
            out |= self.expr(it, fr)
        return _cap(out)

    def _e_cond(self, e: ECond, fr: _Frame) -> Vals:
        cv = self.expr(e.c, fr)
        known = {_number(v) for v, _ in cv}
        if cv and None not in known and all(known):
            return self.expr(e.a, fr)
        if cv and known == {0}:
            return self.expr(e.b, fr)
        return _cap(self.expr(e.a, fr) | self.expr(e.b, fr))

    def _e_fun(self, e: EFun, fr: _Frame) -> Vals:
        return frozenset({(Fun(e.key, e.name), ())})

    # -- calls --
    def call(self, c: Call, fr: _Frame) -> Vals:
        callee = self.expr(c.callee, fr)
        args = tuple(self.expr(a, fr) for a in c.args)
        targs = tuple(self.expr(a, fr) for a in c.targs)
        out: set[TV] = set()
        for cv, ctags in callee:
            out |= self.dispatch(c, cv, _withall(args, ctags), targs, fr)
        got = _cap(out) or UNKNOWN
        if c.ty in self.prog.fnptr_types:
            for v, _ in got:
                self.land(c.ty, v, fr)
        return got

    def identify(self, c: Call, cv: Val) -> tuple[str, Any]:
        """What calling `cv` at `c` does: ("getter", api), ("exporter", api), ("version", kind), ("copy", None),
        ("fn", key), ("external", name), ("symbolic", None) or ("none", None)."""
        sd = self.seeds
        if isinstance(cv, Fun):
            if cv.key in self.prog.funcs or cv.key in self.prog.foreign:
                return "fn", cv.key
            if cv.key.startswith("name:"):   # a call the front end could not resolve: the function of that name
                own = self._named().get(cv.name)
                if own is not None:
                    return "fn", own
            return _by_name(sd, cv.name) or ("external", cv.name)
        if isinstance(cv, (Exp, Ent)):
            name = cv.name if isinstance(cv, Exp) else cv.sym
            if isinstance(name, Str):
                api = sd.export_of(name.s, cv.ver if isinstance(cv, Ent) else Unk())
                got = _by_name(sd, api) if api else None
                if got is not None:
                    return got
            if isinstance(name, Str):
                return "none", None
        if symbolic(cv):
            return _by_name(sd, c.static_api) or ("symbolic", None) if c.static_api else ("symbolic", None)
        if c.static_api:
            return _by_name(sd, c.static_api) or ("none", None)
        return "none", None

    def _named(self) -> dict[str, str]:
        """The program's functions by name, where the name is one function's (a call by name finds its body)."""
        if self._by_name is None:
            seen: dict[str, list[str]] = {}
            for k, f in self.prog.funcs.items():
                seen.setdefault(f.name, []).append(k)
            self._by_name = {n: ks[0] for n, ks in seen.items() if len(ks) == 1}
        return self._by_name

    def dispatch(self, c: Call, cv: Val, args: tuple[Vals, ...], targs: tuple[Vals, ...], fr: _Frame,
                 at: int | None = None) -> Vals:
        """Call `cv` at `c`. `at`: the caller's call that made `cv` known (a call through a function-pointer
        parameter): a request it makes is made there, as a wrapper's request is made at the call that binds it."""
        kind, what = self.identify(c, cv)
        if kind == "fn":
            return self.apply(self.summary(what), c, args, targs, fr)
        if kind == "getter":
            return self.getter(c, what, args, fr, c.id if at is None else at)
        if kind in ("exporter", "version", "copy", "length"):
            return self.library(kind, what, c, args, fr, c.id if at is None else at)
        if kind == "external":
            return self.by_use(c, what, args, fr)
        if kind == "symbolic" and fr.fn is not None:
            fr.effects.add(Through(c.id, cv, tuple(_untag(a) for a in args)))
        return UNKNOWN

    def library(self, kind: str, what: Any, c: Call, args: tuple[Vals, ...], fr: _Frame, at: int) -> Vals:
        """A call of a seeded library function other than a getter (made concrete at the call `at`): its value and
        what it stores."""
        if kind == "exporter":
            self.result.apis[c.id] = what
            i = self.seeds.exporters[what]
            names = args[i] if i < len(args) else UNKNOWN
            out = frozenset((Exp(c.id, at, what, n), t) for n, t in names)
            for tv in out:
                self._export(tv[0], c, fr)
            return out
        if kind == "version":
            if c.args:
                self.store(self.deref(args[0], fr), frozenset({(Ver(what, c.name), ())}), fr, strong=True)
            return UNKNOWN
        if kind == "copy":   # the bytes the second argument points to, into what the first points to (row by row)
            if len(args) >= 2:
                src: set[TV] = set()
                for sv, st in args[1]:
                    loc = _pointee(sv)
                    if loc is not None:
                        src |= _with(self.read(loc, fr), st)
                for dv, dt in args[0]:
                    loc = _pointee(dv)
                    if loc is not None:
                        self.store([loc], _with(_cap(src), dt), fr, strong=len(args[0]) == 1)
            return UNKNOWN
        if kind == "length":   # strlen("v2") is 2: a condition on it is known (a macro's optional suffix)
            strs = args[0] if args else UNKNOWN
            return _cap((Int(len(v.s)) if isinstance(v, Str) else Unk(), t) for v, t in strs) or UNKNOWN
        return UNKNOWN

    def deref(self, ptrs: Vals, fr: _Frame) -> list[Loc]:
        out = []
        for v, _ in ptrs:
            loc = _pointee(v)
            if loc is not None:
                out.append(loc)
        return list(dict.fromkeys(out))

    def getter(self, c: Call, api: str, args: tuple[Vals, ...], fr: _Frame, at: int) -> Vals:
        self.result.apis[c.id] = api
        si, pi, vi, fi, sti = self.seeds.getters[api]
        n = len(args)
        pick = [args[i] if i is not None and i < n else frozenset({(Unk("runtime" if i is None else ""), ())})
                for i in (si, vi, fi, sti)]
        dsts = args[pi] if pi < n else UNKNOWN
        for (sym, ver, flags, status, dst), tags in _combos([*pick, dsts]):
            ent = Ent(c.id, at, api, sym, ver, flags, status)
            self._request(ent, (), fr)
            self.store(self.deref(frozenset({(dst, tags)}), fr), frozenset({(ent, tags)}), fr,
                       strong=len(dsts) == 1)
        return UNKNOWN

    def _request(self, v: Ent | Exp, via: tuple[str, ...], fr: _Frame) -> None:
        if symbolic(v):
            if fr.fn is not None:
                fr.effects.add(Req(v, via))
            else:
                self.result.unresolved.setdefault(v.site, set()).add("unknown")
            return
        if isinstance(v, Exp) and v.by_use and not (isinstance(v.name, Str) and self.seeds.is_driver_name(v.name.s)):
            return
        at = v.at
        req = self.result.requests.get(v)
        if req is None:
            self.result.requests[v] = Request(v, at, via)
        elif not req.via and via:
            req.via = via
        if v.at != v.site:
            self.result.wrapped.setdefault(v.site, set()).add(v.at)
        if isinstance(v, Exp) and not isinstance(v.name, Str):
            self.result.unresolved.setdefault(v.site, set()).add("unknown")
        if isinstance(v, Ent) and not isinstance(v.sym, Str):
            self.result.unresolved.setdefault(v.site, set()).add("unknown")

    def _export(self, v: Val, c: Call, fr: _Frame) -> None:
        if isinstance(v, Exp):
            self._request(v, (), fr)

    def by_use(self, c: Call, name: str, args: tuple[Vals, ...], fr: _Frame) -> Vals:
        """A function whose body is not seen, given a driver export's name (or a parameter that may be one):
        what it returns, and what it writes through a pointer-to-pointer argument, is that export."""
        names = [(v, t) for a in args for v, t in a if (isinstance(v, Str) and self.seeds.is_driver_name(v.s))
                 or isinstance(v, (Par, Ld))]
        if not names:
            return UNKNOWN
        out = frozenset((Exp(c.id, c.id, name, n, by_use=True), t) for n, t in names)
        for i in c.outs:
            if i < len(args):
                for v, t in out:
                    self.store(self.deref(_with(args[i], t), fr), frozenset({(v, t)}), fr, strong=False)
        return out | UNKNOWN

    # -- applying a summary at a call --
    def apply(self, s: Summary, c: Call, args: tuple[Vals, ...], targs: tuple[Vals, ...], fr: _Frame) -> Vals:
        bind: dict[int, Vals] = {}
        for i in range(max(len(args), len(s.defaults))):
            if i < len(args):
                bind[i] = args[i]
            elif i < len(s.defaults) and s.defaults[i] is not None:
                bind[i] = s.defaults[i] or UNKNOWN
        for i, t in enumerate(targs):
            bind[-1 - i] = t
        sub = _Subst(self, s.fn, bind, c, fr)
        for eff in s.effects:
            sub.effect(eff, s.name)
        return sub.vals(s.ret)


class _Subst:
    """A summary's symbolic values with the call's arguments put in for its parameters, read in the caller."""

    def __init__(self, solver: _Solver, fn: str, bind: dict[int, Vals], c: Call, fr: _Frame) -> None:
        self.s, self.fn, self.bind, self.c, self.fr = solver, fn, bind, c, fr

    def vals(self, vals: Vals) -> Vals:
        out: set[TV] = set()
        for v, t in vals:
            out |= _with(self.val(v), t)
        return _cap(out)

    def val(self, v: Val) -> Vals:
        if not symbolic(v):
            return frozenset({(v, ())})
        how = _SUBST.get(type(v))
        return how(self, v) if how is not None else frozenset({(v, ())})

    def _par(self, v: Par) -> Vals:
        if v.fn != self.fn:
            return frozenset({(v, ())})
        return self.bind.get(v.i, frozenset({(Unk(v.text), ())}))

    def _ld(self, v: Ld) -> Vals:
        out: set[TV] = set()
        for loc, tags in self.loc(v.loc):
            out |= _with(self.s.read(loc, self.fr), tags)
        return _cap(out)

    def _addr(self, v: Addr) -> Vals:
        return frozenset((_addr(loc), tags) for loc, tags in self.loc(v.loc) if loc.base != "u")

    def _ar(self, v: Ar) -> Vals:
        return _cap((arith(v.op, x[0], y[0]), tags) for (x, y), tags in _pairs(self.val(v.a), self.val(v.b)))

    def _exp(self, v: Exp) -> Vals:
        return frozenset((Exp(v.site, self.c.id if not symbolic(n) else v.at, v.api, n, v.by_use), t)
                         for n, t in self.val(v.name))

    def _ent(self, v: Ent) -> Vals:
        out: set[TV] = set()
        site = v.site if v.site >= 0 else self.c.id    # another unit's wrapper: its request is this call
        for (sym, ver, flags, status), tags in _combos([self.val(x) for x in (v.sym, v.ver, v.flags, v.status)]):
            at = self.c.id if v.site < 0 or (symbolic(v.sym) and not symbolic(sym)) else v.at
            out.add((Ent(site, at, v.api, sym, ver, flags, status), tags))
        return _cap(out)

    def loc(self, loc: Loc) -> list[tuple[Loc, Tags]]:
        if loc.sym is None:
            return [(loc, ())]
        out = []
        for p, tags in self.val(loc.sym):
            base = _pointee(p)
            if base is None:
                out.append((Loc("u", (), None, loc.ty), tags))
                continue
            got = base
            for step in loc.path:
                got = got.below(step)
            out.append((_retype(got, loc.ty, self.s.prog.fnptr_types), tags))
        return out

    def effect(self, eff: Effect, name: str) -> None:
        s, fr = self.s, self.fr
        if isinstance(eff, Store):
            vals = self.vals(eff.vals)
            for loc, tags in self.loc(eff.loc):
                if loc.base == "u":
                    if loc.path and isinstance(loc.path[-1], str):
                        s.store([Loc("f:" + loc.path[-1], (), None, loc.ty)], _with(vals, tags), fr, strong=False)
                    continue
                s.store([loc], _with(vals, tags), fr, strong=False)
        elif isinstance(eff, Land):
            for v, _ in self.val(eff.v):
                s.land(eff.ty, v, fr)
        elif isinstance(eff, Req):
            for v, _ in self.val(eff.v):
                if isinstance(v, (Ent, Exp)):
                    s._request(v, (*eff.via, name), fr)
        elif isinstance(eff, Through):
            c = s.prog.calls.get(eff.site)
            if c is None:
                return
            args = tuple(self.vals(a) for a in eff.args)
            for cv, tags in self.val(eff.callee):
                s.dispatch(c, cv, _withall(args, tags), (), fr, None if symbolic(cv) else self.c.id)


# ---- helpers ---------------------------------------------------------------------------------------------------


def _by_name(sd: Seeds, name: str) -> tuple[str, Any] | None:
    if name in sd.getters:
        return "getter", name
    if name in sd.exporters:
        return "exporter", name
    if name in sd.versions:
        return "version", sd.versions[name]
    if name in sd.copies:
        return "copy", None
    if name in sd.lengths:
        return "length", None
    return None


def _has_par(v: Val) -> bool:
    if isinstance(v, Par):
        return True
    if isinstance(v, Exp):
        return _has_par(v.name)
    if isinstance(v, Ent):
        return _has_par(v.sym)
    return False


def _pointee(v: Val) -> Loc | None:
    if isinstance(v, Addr):
        return v.loc
    if isinstance(v, (Par, Ld)):
        return Loc("*", (), v)
    return None


def _addr(loc: Loc) -> Val:
    if loc.base == "*" and not loc.path and loc.sym is not None:
        return loc.sym
    return Addr(loc)


def _retype(loc: Loc, ty: int, fnptr: frozenset[int] = frozenset()) -> Loc:
    """`loc` accessed as the type `ty`: an object declared with a function pointer's type keeps it (what lands
    there is judged against its declaration), any other takes the type it is accessed as."""
    return loc if ty < 0 or loc.ty == ty or loc.ty in fnptr else Loc(loc.base, loc.path, loc.sym, ty)




def _match(want: Loc, have: Path) -> Tags | None:
    """Whether the stored path `have` is (or may be) the path `want` reads; the rows of tables it fixes as tags
    (an index read as any index that was stored as row k)."""
    if len(want.path) != len(have):
        return None
    tags: list[tuple[str, int]] = []
    for i, (a, b) in enumerate(zip(want.path, have, strict=True)):
        if a == b or (b == ANY and (a == ANY or isinstance(a, int))):
            continue
        if a == ANY and isinstance(b, int):
            tags.append((f"{want.base}{want.path[:i]!r}", b))
            continue
        return None
    return tuple(tags)


def _row_of(loc: Loc, tags: Tags) -> Loc | None:
    """`loc` (a path with an index that is any index) at the row a value's tags fix for that same table, or None."""
    for i, step in enumerate(loc.path):
        if step == ANY:
            key = f"{loc.base}{loc.path[:i]!r}"
            row = next((r for t, r in tags if t == key), None)
            if row is None:
                return None
            return Loc(loc.base, (*loc.path[:i], row, *loc.path[i + 1:]), loc.sym, loc.ty)
    return None


def _either(a: Vals, b: Vals) -> Vals:
    """What a location holds where two paths meet: the values of both (a path that never set it adds nothing)."""
    if a is _MISSING:
        return b
    if b is _MISSING or a == b:
        return a
    return _cap(a | b)


def _pairs(a: Vals, b: Vals) -> Iterator[tuple[tuple[TV, TV], Tags]]:
    for x in a:
        for y in b:
            tags = _merge_tags(x[1], y[1])
            if tags is not None:
                yield (x, y), tags


def _withall(args: tuple[Vals, ...], tags: Tags) -> tuple[Vals, ...]:
    return args if not tags else tuple(_with(a, tags) for a in args)


_EVAL: dict[type, Callable[[_Solver, Any, _Frame], Vals]] = {
    ELit: _Solver._e_lit, EVar: _Solver._e_var, ELoad: _Solver._e_load, EAddr: _Solver._e_addr,
    ECall: _Solver._e_call, ECast: _Solver._e_cast, EOp: _Solver._e_op, EUnion: _Solver._e_union,
    ECond: _Solver._e_cond, EFun: _Solver._e_fun,
}
_SUBST: dict[type, Callable[[_Subst, Any], Vals]] = {
    Par: _Subst._par, Ld: _Subst._ld, Addr: _Subst._addr, Ar: _Subst._ar, Exp: _Subst._exp, Ent: _Subst._ent,
}


def solve(prog: Program, seeds: Seeds) -> Result:
    """Every request and export of the program, with the types its pointers land in (see the module docstring)."""
    return _Solver(prog, seeds).run()
