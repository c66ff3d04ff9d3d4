"""Which entry-point requests are wrong, and how to fix each: the catalog's judgement of requests.

`cuentry trace` records what a process asks the driver for; this module says
which of those requests break the rules, with no process needed: give it a
request (symbol, version, flags, the API that asked, the driver's version) and
it returns findings, each with a code and a message that names the fix. A
request with no problem gives no finding.

The codes (the linter's rule with the same knowledge in brackets):

=======  =======================  ====================================================================
CT001    unknown-name             not a driver entry point: misspelled, wrong case, suffixed (CE003)
CT002    below-first-abi          a version below the symbol's first ABI: never resolves (CE009)
CT003    not-an-abi-version       a release or other number, not one of the symbol's ABI versions (CE010)
CT004    above-driver             a version above the driver's: CUDA_ERROR_INVALID_VALUE there
CT005    default-flags            CU_GET_PROC_ADDRESS_DEFAULT for a symbol with a per-thread variant (CE007)
CT006    mixed-stream-modes       legacy and per-thread ABIs requested by one library (CE008)
CT007    old-export-by-name       dlsym of a base name whose export is an older ABI than the newest (CE003)
CT008    deprecated-runtime-api   cudaGetDriverEntryPoint: asks at the runtime's own version (CE005)
CT009    bad-flags                flags other than 0, 1, 2, 3: CUDA_ERROR_INVALID_VALUE
CT010    null-pfn                 a NULL result pointer: CUDA_ERROR_INVALID_VALUE, nothing is returned
=======  =======================  ====================================================================

Each finding has a severity (`error`, `warning` or `note`): the verdict's
([Catalog.judge][cuentry.catalog.Catalog.judge], from `names.FAULTS`) for a request's own
faults; CT006 is a warning, CT010 an error.

A request that fails and is followed by the same caller's successful request for the same
symbol at a lower ABI is a fallback taken (`fallbacks`): the
code did what cuentry recommends, so it is not reported as CT004.

CUDA runtimes (libcudart, or a static runtime inside another library) build a
table of both stream modes on purpose; their requests are recognised by
`is_runtime` and CT005/CT006 are not reported for them.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .catalog import Catalog, catalog
from .names import LEGACY, PER_THREAD, VALID_FLAGS_MASK, VERSIONED_APIS, stream_of_flags

__all__ = ["CODES", "RUNTIME_PREFIX", "Finding", "classify", "fallbacks", "is_runtime", "mixed_modes"]


CODES: dict[str, tuple[str, str]] = {
    "CT001": ("unknown-name", "not a driver entry point: misspelled, wrong case or suffixed"),
    "CT002": ("below-first-abi", "a version below the symbol's first ABI: never resolves"),
    "CT003": ("not-an-abi-version", "a release or other number instead of one of the symbol's ABI versions"),
    "CT004": ("above-driver", "a version above the driver's: CUDA_ERROR_INVALID_VALUE on it"),
    "CT005": ("default-flags", "CU_GET_PROC_ADDRESS_DEFAULT for a symbol that has a per-thread variant"),
    "CT006": ("mixed-stream-modes", "legacy and per-thread ABIs requested by one library"),
    "CT007": ("old-export-by-name", "dlsym of an export that is an older ABI than the symbol's newest"),
    "CT008": ("deprecated-runtime-api", "cudaGetDriverEntryPoint asks at the runtime's own version"),
    "CT009": ("bad-flags", "flags other than the three stream modes (and 3)"),
    "CT010": ("null-pfn", "a NULL result pointer: the driver answers CUDA_ERROR_INVALID_VALUE"),
}
# The severities of the findings the verdict does not give (the others are the verdict's).
_MIXED_SEVERITY = "warning"  # one library may keep two tables on purpose; lint's CE002 sees the source
_NULL_SEVERITY = "error"

# APIs whose requests carry a version (cudaGetDriverEntryPoint and dlsym do not).
RUNTIME_PREFIX = "libcudart"


@dataclass(frozen=True)
class Finding:
    """One problem with one request (or with one library's requests, for CT006)."""

    code: str
    symbol: str
    version: int | None
    flags: int | None
    caller: str
    message: str
    runtime: bool = False
    severity: str = "error"
    symbol_null: bool = False   # the request passed a NULL symbol (symbol is ""; JSON: null)

    @property
    def rule(self) -> str:
        """The finding's rule name (`below-first-abi`); the JSON key is "rule", as in `cuentry lint`."""
        return CODES[self.code][0]

    def to_dict(self) -> dict[str, Any]:
        return {"symbol": None if self.symbol_null else self.symbol, "version": self.version, "flags": self.flags,
                "caller": self.caller, "code": self.code, "rule": self.rule, "severity": self.severity, "message": self.message,
                "from_runtime": self.runtime}


def is_runtime(caller: str, requests: Iterable[tuple[str, int | None]] = ()) -> bool:
    """A CUDA runtime: libcudart by name, or a library that made the runtime's start-up probe.

    Every CUDA runtime (shared or static, inside cuBLAS, cuDNN, CuPy...) asks for an
    empty symbol name at version 0 once before it resolves its table.
    """
    if os.path.basename(caller).startswith(RUNTIME_PREFIX):
        return True
    return any(sym == "" and ver == 0 for sym, ver in requests)


def classify(symbol: str, version: int | None, flags: int | None, *, api: str = "cuGetProcAddress_v2",
             driver_version: int | None = None, caller: str = "", runtime: bool = False,
             cat: Catalog | None = None, null_symbol: bool = False, null_pfn: bool = False) -> list[Finding]:
    """The findings for one request; an empty list when it is correct.

    Args:
        symbol: the name asked for (`""` when `null_symbol`); for `dlsym`, an exported name.
        version: the version passed (None when the API takes none).
        flags: the flags passed (None for `dlsym`).
        api: the function that asked (`cuGetProcAddress_v2`, `cuGetProcAddress`,
            `cudaGetDriverEntryPointByVersion`, `cudaGetDriverEntryPoint` or `dlsym`).
        driver_version: the driver the request met; enables CT004.
        caller: the library that asked (copied into the findings).
        runtime: the request is a CUDA runtime's own (CT005 is not reported).
        cat: the catalog (default: cuentry's).
        null_symbol: the symbol pointer was NULL (CT001, not judged as a name).
        null_pfn: the result pointer was NULL (CT010).

    Returns:
        The findings, most serious first within the request's own verdict.
    """
    cat = catalog() if cat is None else cat
    if null_symbol:
        hits = [("CT001", f"{api}: a NULL symbol: the driver answers CUDA_ERROR_INVALID_VALUE; pass the entry "
                          "point's name", _NULL_SEVERITY)]
    else:
        hits = _hits(symbol, version, flags, api, driver_version, runtime, cat)
    if null_pfn:
        hits.append(("CT010", f"{api}: a NULL result pointer (pfn): the driver answers CUDA_ERROR_INVALID_VALUE "
                              "and returns nothing; pass the address of a function pointer", _NULL_SEVERITY))
    return [Finding(code, symbol, version, flags, caller, msg, runtime, sev, null_symbol) for code, msg, sev in hits]


def _hits(symbol: str, version: int | None, flags: int | None, api: str, driver_version: int | None,
          runtime: bool, cat: Catalog) -> list[tuple[str, str, str]]:
    if runtime and symbol == "" and version == 0:
        return []  # the runtime's start-up probe
    verdict = cat.judge(symbol, version if api in VERSIONED_APIS else None, flags, api=api,
                        driver_version=driver_version, runtime=runtime)
    return [(f.trace_code, f"{api}: {f}", f.severity) for f in verdict.faults if f.trace_code]


def fallbacks(requests: Sequence[tuple[str, int | None, bool]]) -> dict[int, int]:
    """The fallbacks one caller took, in the order it made its requests.

    Args:
        requests: (symbol, version, succeeded) of one caller's versioned requests in one
            process, in the order they were first made.

    Returns:
        For each failed request followed by a successful request for the same symbol at a
        lower version, its index mapped to that lower version (the first such request): an
        optional entry whose fallback was taken, which is what cuentry recommends.

    Each symbol's requests are read once, from the last: a tree of the successes seen so far, by
    version, answers "the first later success below this version" (a program that asks one symbol at
    thousands of versions is read in n log n, not n squared).
    """
    by_symbol: dict[str, list[int]] = {}
    for i, (sym, _, _) in enumerate(requests):
        by_symbol.setdefault(sym, []).append(i)
    out: dict[int, int] = {}
    for idx in by_symbol.values():
        versions = sorted({v for i in idx if (v := requests[i][1]) is not None and v > 0})
        if not versions:
            continue
        rank = {v: k + 1 for k, v in enumerate(versions)}
        tree = [len(requests)] * (len(versions) + 1)   # Fenwick tree: the earliest success at or below a rank
        for i in reversed(idx):
            _, ver, ok = requests[i]
            if ver is None:
                continue
            if not ok:
                first = _earliest_below(tree, versions, ver)
                taken = requests[first][1] if first < len(requests) else None
                if taken is not None:
                    out[i] = taken
            elif ver > 0:
                k = rank[ver]
                while k < len(tree):
                    tree[k] = min(tree[k], i)
                    k += k & -k
    return out


def _earliest_below(tree: list[int], versions: list[int], ver: int) -> int:
    """The earliest index the tree holds at a version strictly below `ver` (len of the requests: none)."""
    k = bisect.bisect_left(versions, ver)   # the ranks 1..k are the versions below `ver`
    best = tree[0]
    while k > 0:
        best = min(best, tree[k])
        k -= k & -k
    return best


def mixed_modes(caller: str, requests: Iterable[tuple[str, int | None, int | None]], *, runtime: bool = False,
                cat: Catalog | None = None) -> list[Finding]:
    """CT006 for one library: symbols that have both variants, asked in both stream modes.

    `requests` are (symbol, version, flags) of successful-or-not cuGetProcAddress-style
    requests of `caller`. Flags 0 and 1 count as legacy (what the driver gives for them).
    """
    if runtime:
        return []
    cat = catalog() if cat is None else cat
    seen: dict[str, list[str]] = {LEGACY: [], PER_THREAD: []}
    for sym, _ver, flags in requests:
        if flags is None or flags & ~VALID_FLAGS_MASK or sym not in cat or not any(a.variant for a in cat.abis(sym)):
            continue
        bucket = seen[stream_of_flags(flags)]
        if sym not in bucket:
            bucket.append(sym)
    if not (seen[LEGACY] and seen[PER_THREAD]):
        return []
    leg, pt = sorted(seen[LEGACY]), sorted(seen[PER_THREAD])
    msg = (f"{os.path.basename(caller) or caller} asks for legacy ({', '.join(leg[:3])}"
           f"{', ...' if len(leg) > 3 else ''}) and per-thread ({', '.join(pt[:3])}{', ...' if len(pt) > 3 else ''}) "
           "ABIs: one function table has one stream mode; keep the modes in separate tables")
    return [Finding("CT006", "", None, None, caller, msg, runtime, _MIXED_SEVERITY)]
