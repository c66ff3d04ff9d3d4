"""What an emulated run means: the requests the older driver refused, and a program's real minimum driver.

[refusals][cuentry.emulation.refusals] reads a run under `cuentry emulate` (its trace, which an emulation
always records) for the requests the emulated driver refused that the real one answers: an export `dlsym`
found no more (`cuGetProcAddress_v2` below 12.0), a `cuGetProcAddress` above the emulated version, a
symbol newer than it. Each [Refusal][cuentry.emulation.Refusal] names the lowest driver that answers it,
from the catalog.

[floor][cuentry.emulation.floor] finds the lowest driver a program runs on, by running it: on the real
driver first, then, bisecting the releases the catalog knows (every ABI version and toolkit release below
the real driver: the versions at which a driver's answers change), as if the driver were each of them. A run
succeeds when the command exits 0. The bisection assumes what drivers promise: a program that runs on a
driver runs on every newer one. The result names the floor, the release just below it and what the
emulation refused there: the deployment floor measured from the program itself.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .catalog import Catalog, catalog
from .errors import UsageError
from .names import format_version, parse_version, stream_of_flags
from .trace import Request, TraceReport, run

__all__ = ["FloorResult", "Refusal", "Try", "candidates", "floor", "refusals"]

_VERSIONED = ("cuGetProcAddress_v2", "cuGetProcAddress", "cudaGetDriverEntryPointByVersion")


@dataclass(frozen=True)
class Refusal:
    """A request the emulated driver refused and the real one answers; `first`: the lowest driver that
    answers it (None when the catalog does not know the name)."""

    api: str
    symbol: str
    version: int | None
    flags: int | None
    caller: str
    count: int
    first: int | None

    def describe(self) -> str:
        """`dlsym cuGetProcAddress_v2: first in driver 12.0 (12000)`."""
        what = f"{self.symbol}@{self.version}" if self.version is not None else self.symbol
        first = f"first in driver {format_version(self.first)} ({self.first})" if self.first else "not in the catalog"
        return f"{self.api} {what}: {first}"

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "symbol": self.symbol, "version": self.version, "flags": self.flags,
                "caller": self.caller, "count": self.count, "first": self.first,
                "first_release": format_version(self.first) if self.first else None}


def _export_first(cat: Catalog) -> dict[str, int]:
    """Each export's lowest ABI version (as the interposer hides it: an export newer than the driver)."""
    got: dict[str, int] = {}
    for a in cat:
        if a.exported:
            got[a.exported] = min(got.get(a.exported, a.version), a.version)
    return got


def _first(r: Request, cat: Catalog, exports: Mapping[str, int]) -> int | None:
    """The lowest driver that answers `r`: an export's ABI version; a versioned request's version, or its
    symbol's first ABI (of the stream mode its flags ask for) when that is newer."""
    if r.api == "dlsym":
        return exports.get(r.symbol)
    if r.symbol not in cat:
        return None
    first = cat.first_version(r.symbol, stream_of_flags(r.flags) if r.flags is not None else "legacy")
    return max(first, r.version) if r.api in _VERSIONED and r.version is not None else first


def refusals(report: TraceReport, cat: Catalog | None = None) -> tuple[Refusal, ...]:
    """The requests of an emulated run that the emulation refused (an answer it changed into a failure)."""
    cat = catalog() if cat is None else cat
    exports = cat.fact("emulation.export_first", _export_first)
    got = [Refusal(r.api, r.symbol, r.version, r.flags, r.caller, r.count, _first(r, cat, exports))
           for r in report.requests if r.emulated and not r.succeeded and not r.symbol_null]
    return tuple(sorted(got, key=lambda x: (x.first or 0, x.symbol, x.api)))


# --- the floor ---------------------------------------------------------------------------------


def candidates(below: int, cat: Catalog | None = None) -> tuple[int, ...]:
    """The driver versions below `below` at which a driver's answers change: every ABI version of the catalog
    and every toolkit release it records (2000 and above), ascending."""
    cat = catalog() if cat is None else cat
    got = {a.version for a in cat} | {parse_version(t) for t in cat.history}
    return tuple(sorted(v for v in got if 2000 <= v < below))


@dataclass(frozen=True)
class Try:
    """One run of the bisection: the driver emulated (None: the real one) and how the command ended."""

    driver: int | None
    exit_code: int

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.driver, "exit_code": self.exit_code}


@dataclass(frozen=True)
class FloorResult:
    """What [floor][cuentry.emulation.floor] found.

    `floor`: the lowest driver the command succeeds on (None: it fails on the real driver too, or no driver
    was seen); `real`: the real driver's version; `below`: the release just below the floor, where the
    command failed (None when the floor is the lowest release the catalog knows); `refused`: what the
    emulation refused there; `tries`: every run, in order; `report`: the trace of the run below the floor
    (or of the failed real run).
    """

    command: tuple[str, ...]
    floor: int | None
    real: int | None
    real_path: str | None
    below: int | None
    refused: tuple[Refusal, ...]
    tries: tuple[Try, ...]
    report: TraceReport | None = None

    def to_dict(self) -> dict[str, Any]:
        fv = format_version
        return {"command": list(self.command), "floor": self.floor,
                "floor_release": fv(self.floor) if self.floor else None,
                "real_driver": {"path": self.real_path, "version": self.real},
                "below": self.below, "below_release": fv(self.below) if self.below else None,
                "refused": [r.to_dict() for r in self.refused], "tries": [t.to_dict() for t in self.tries],
                "exit_code": self.tries[-1].exit_code if self.tries else 0}


def floor(cmd: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
          timeout: float | None = None, cat: Catalog | None = None,
          on_try: Callable[[Try], None] | None = None) -> FloorResult:
    """The lowest driver `cmd` succeeds on (exit status 0), found by running it (its output discarded).

    Runs it on the real driver, then bisects [candidates][cuentry.emulation.candidates] below it under
    emulation. `on_try` is called after each run (progress).

    Raises:
        UsageError: a bad command, or one the interposer cannot load in.
        BuildError: the interposer cannot be built.
    """
    cat = catalog() if cat is None else cat
    tries: list[Try] = []

    def attempt(version: int | None) -> TraceReport:
        rep = run(cmd, emulate=version, env=env, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL,
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tries.append(Try(version, rep.exit_code))
        if on_try is not None:
            on_try(tries[-1])
        return rep

    top = attempt(None)
    if not top.traced:
        raise UsageError(f"{cmd[0]}: the interposer loaded in no process, so no driver could be emulated",
                         hint="run the dynamically linked program itself (not a static or set-user-ID launcher)")
    real = top.driver_version
    if top.exit_code != 0 or real is None:
        return FloorResult(tuple(cmd), None, real, top.driver_path, None, (), tuple(tries), top)
    versions = candidates(real, cat)
    lo, hi = -1, len(versions)   # versions[hi] succeeds (hi == len: the real driver); versions[lo] fails (or none)
    failed: TraceReport | None = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        rep = attempt(versions[mid])
        if rep.exit_code == 0:
            hi = mid
        else:
            lo, failed = mid, rep
    found = versions[hi] if hi < len(versions) else real
    below = versions[lo] if lo >= 0 else None  # the last failure of the bisection is the run at `below`
    refused = refusals(failed, cat) if failed is not None else ()
    return FloorResult(tuple(cmd), found, real, top.driver_path, below, refused, tuple(tries), failed)
