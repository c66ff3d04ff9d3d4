"""Which entry-point requests are wrong, and how to fix each: the catalog's judgement of requests.

``cuentry trace`` records what a process asks the driver for; this module says
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
=======  =======================  ====================================================================

CUDA runtimes (libcudart, or a static runtime inside another library) build a
table of both stream modes on purpose; their requests are recognised by
:func:`is_runtime` and CT005/CT006 are not reported for them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .catalog import Catalog, catalog
from .errors import UnknownSymbolError
from .names import (
    DRIVER_GETTERS,
    FLAG_DEFAULT,
    FLAG_LEGACY,
    FLAG_NAMES,
    FLAG_PER_THREAD,
    LEGACY,
    PER_THREAD,
    format_version,
    looks_like_release,
    stream_of_flags,
)

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
}

# APIs whose requests carry a version (cudaGetDriverEntryPoint and dlsym do not).
VERSIONED_APIS = frozenset({"cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPointByVersion"})
RUNTIME_PREFIX = "libcudart"
_VALID_FLAGS = 3  # legacy | per-thread: accepted by the driver, acts as legacy


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

    @property
    def rule(self) -> str:
        """The finding's rule name (``below-first-abi``); the JSON key is "rule", as in `cuentry lint`."""
        return CODES[self.code][0]

    def to_dict(self) -> dict[str, Any]:
        return {"symbol": self.symbol, "version": self.version, "flags": self.flags, "caller": self.caller,
                "code": self.code, "rule": self.rule, "message": self.message, "runtime": self.runtime}


def is_runtime(caller: str, requests: Iterable[tuple[str, int | None]] = ()) -> bool:
    """A CUDA runtime: libcudart by name, or a library that made the runtime's start-up probe.

    Every CUDA runtime (shared or static, inside cuBLAS, cuDNN, CuPy...) asks for an
    empty symbol name at version 0 once before it resolves its table.
    """
    if os.path.basename(caller).startswith(RUNTIME_PREFIX):
        return True
    return any(sym == "" and ver == 0 for sym, ver in requests)


def _flags_text(flags: int, api: str) -> str:
    name = FLAG_NAMES.get(flags, f"flags {flags}")
    if api.startswith("cuda"):
        name = {FLAG_DEFAULT: "cudaEnableDefault", FLAG_LEGACY: "cudaEnableLegacyStream",
                FLAG_PER_THREAD: "cudaEnablePerThreadDefaultStream"}.get(flags, name)
    return name


def _unknown_name(symbol: str, api: str, cat: Catalog) -> str:
    try:
        cat.abis(symbol)
    except UnknownSymbolError as exc:
        sugg = cat.suggest(symbol)
        if sugg and sugg[0].version is not None:
            s0 = sugg[0]
            mode = " with the per-thread flag" if s0.stream == PER_THREAD else ""
            return (f"{api} asks for {symbol!r}, which never resolves ({s0.reason}): ask for {s0.symbol!r} at "
                    f"{s0.version}{mode}")
        if sugg:
            return f"{api} asks for {symbol!r}, which never resolves: did you mean {sugg[0].symbol!r} ({sugg[0].reason})?"
        return f"{api} asks for {symbol!r}, which is not a driver entry point ({exc.hint})"
    return ""


def _version_findings(symbol: str, version: int, flags: int, api: str, driver_version: int | None,
                      cat: Catalog) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    vs = cat.versions(symbol)
    stream = stream_of_flags(flags)
    if version < 0:
        newest = cat.newest(symbol, stream)
        out.append(("CT003", f"{symbol} asked at {version}, which the driver takes as 'the newest ABI' (today "
                             f"{newest.pfn}): the ABI then changes with the driver; pin the version of your "
                             f"typedef ({', '.join(map(str, vs))})"))
    elif version < vs[0]:
        out.append(("CT002", f"{symbol} asked at {version}, below its first ABI {vs[0]}: it never resolves "
                             f"(VERSION_NOT_SUFFICIENT); pin {vs[0]} (PFN_{symbol}_v{vs[0]})"))
    elif version not in vs:
        picked = cat.pick(symbol, version, stream)
        gives = (f"the driver gives {picked.pfn}" + (f" ({picked.exported})" if picked.exported else "")
                 if picked is not None else "nothing of that stream mode resolves")
        kind = "a CUDA release" if looks_like_release(version) else "not one of its ABI versions"
        fix = picked.version if picked is not None else vs[0]
        floor = f", and it fails on drivers older than {format_version(version)}" if fix < version else ""
        out.append(("CT003", f"{symbol} asked at {version} ({kind}; its ABIs are {', '.join(map(str, vs))}): "
                             f"{gives}{floor}; pin {fix} (PFN_{symbol}_v{fix}) to say so"))
    if driver_version and version > driver_version:
        out.append(("CT004", f"{symbol} asked at {version}, above this driver's {driver_version} "
                             f"({format_version(driver_version)}): CUDA_ERROR_INVALID_VALUE, so it is unavailable "
                             f"in this process; pin the ABI your typedef has, and give optional entries a fallback"))
    return out


def classify(symbol: str, version: int | None, flags: int | None, *, api: str = "cuGetProcAddress_v2",
             driver_version: int | None = None, caller: str = "", runtime: bool = False,
             cat: Catalog | None = None) -> list[Finding]:
    """The findings for one request; an empty list when it is correct.

    ``api`` is the function that asked (``cuGetProcAddress_v2``, ``cuGetProcAddress``,
    ``cudaGetDriverEntryPointByVersion``, ``cudaGetDriverEntryPoint`` or ``dlsym``,
    whose ``symbol`` is then an exported name). ``driver_version`` enables CT004.
    ``runtime``: the request is a CUDA runtime's own (CT005 is not reported).
    """
    cat = catalog() if cat is None else cat
    hits = _hits(symbol, version, flags, api, driver_version, runtime, cat)
    return [Finding(code, symbol, version, flags, caller, msg, runtime) for code, msg in hits]


def _hits(symbol: str, version: int | None, flags: int | None, api: str, driver_version: int | None,
          runtime: bool, cat: Catalog) -> list[tuple[str, str]]:
    if api == "dlsym":
        return _dlsym_hits(symbol, cat)
    if runtime and symbol == "" and version == 0:
        return []  # the runtime's start-up probe
    out: list[tuple[str, str]] = []
    if api == "cudaGetDriverEntryPoint":
        out.append(("CT008", f"cudaGetDriverEntryPoint({symbol!r}) asks at the runtime's own version and fails on "
                             "older drivers: use cudaGetDriverEntryPointByVersion with the version of the typedef"))
    if flags is not None and flags & ~_VALID_FLAGS:
        out.append(("CT009", f"{api} with flags {flags}: CUDA_ERROR_INVALID_VALUE; pass "
                             f"{FLAG_NAMES[FLAG_LEGACY]} or {FLAG_NAMES[FLAG_PER_THREAD]}"))
    unknown = _unknown_name(symbol, api, cat)
    if unknown:
        return [*out, ("CT001", unknown)]
    if version is not None and api in VERSIONED_APIS:
        out += _version_findings(symbol, version, flags or 0, api, driver_version, cat)
    if flags == FLAG_DEFAULT and not runtime and any(a.variant for a in cat.abis(symbol)):
        out.append(("CT005", f"{symbol} asked with {_flags_text(flags, api)}: it has a per-thread variant, so the "
                             f"ABI depends on how the application was compiled; pin "
                             f"{_flags_text(FLAG_LEGACY, api)} or {_flags_text(FLAG_PER_THREAD, api)}"))
    return out


def _dlsym_hits(name: str, cat: Catalog) -> list[tuple[str, str]]:
    abi = cat.by_exported(name)
    if abi is None:
        if name in cat:  # a base name that no ABI exports (rare)
            return []
        sugg = cat.suggest(name)
        hint = f": did you mean {sugg[0].symbol!r} ({sugg[0].reason})?" if sugg else " (see `cuentry list`)"
        return [("CT001", f"dlsym({name!r}): not an export of any driver ABI{hint}")]
    if abi.symbol in DRIVER_GETTERS:
        return []  # the getter itself: taking both forms is how 11.x drivers are supported
    newest = cat.newest(abi.symbol, abi.stream)
    if newest.version <= abi.version or name != abi.symbol:
        return []  # the newest ABI, or a suffixed export named on purpose
    return [("CT007", f"dlsym({name!r}) gives {abi.pfn}, not the newest {newest.pfn} ({newest.exported}): a caller "
                      f"whose typedef is {newest.pfn} calls the wrong function; resolve {abi.symbol!r} with "
                      f"cuGetProcAddress at the version of its typedef instead of naming an export")]


def mixed_modes(caller: str, requests: Iterable[tuple[str, int | None, int | None]], *, runtime: bool = False,
                cat: Catalog | None = None) -> list[Finding]:
    """CT006 for one library: symbols that have both variants, asked in both stream modes.

    ``requests`` are (symbol, version, flags) of successful-or-not cuGetProcAddress-style
    requests of ``caller``. Flags 0 and 1 count as legacy (what the driver gives for them).
    """
    if runtime:
        return []
    cat = catalog() if cat is None else cat
    seen: dict[str, list[str]] = {LEGACY: [], PER_THREAD: []}
    for sym, _ver, flags in requests:
        if flags is None or flags & ~_VALID_FLAGS or sym not in cat or not any(a.variant for a in cat.abis(sym)):
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
    return [Finding("CT006", "", None, None, caller, msg, runtime)]
