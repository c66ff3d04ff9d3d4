"""The lint rules, as data: one function per rule, in the tuple RULES.

Each rule reads a :class:`Unit`'s facts and yields (line, col, message) for what
breaks the seed's rules; the message names the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..catalog import Catalog, catalog, format_version
from .facts import DEFAULT_FLAGS, LEGACY_FLAGS, PER_THREAD_FLAGS, PFN_RE, Query, Unit

Hit = tuple[int, int, str]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    check: Callable[[Unit, Catalog], Iterator[Hit]]


def _known(q: Query, cat: Catalog) -> bool:
    return q.symbol is not None and q.symbol in cat


def version_from_toolkit_or_driver(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        if q.version_kind in ("toolkit", "driver"):
            src = "the toolkit's CUDA_VERSION" if q.version_kind == "toolkit" else "the driver's version"
            pin = ""
            if _known(q, cat):
                assert q.symbol is not None
                vs = cat.versions(q.symbol)
                pin = f": pin the ABI of the typedef you call through ({', '.join(map(str, vs))} for {q.symbol})"
            yield q.line, q.col, (f"{q.api} asks at {src} ({q.version_text}), which binds whatever ABI is newest "
                                  f"there, not the one your pointer type has{pin or ': pin the number in PFN_cuX_vNNNNN'}")


def typedef_version_mismatch(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        m = PFN_RE.search(q.target_type or "")
        if not m:
            continue
        sym, ver = m.group(1), int(m.group(2))
        if q.symbol is not None and q.symbol != sym:
            yield q.line, q.col, (f"the pointer is a {m.group(0)} but the symbol asked for is {q.symbol!r}: "
                                  f"ask for {sym!r} or use PFN_{q.symbol}_v<version>")
        elif q.version is not None and q.version != ver:
            yield q.line, q.col, (f"the pointer is a {m.group(0)} but the version asked for is {q.version}: "
                                  f"pass {ver} (the typedef's number) so type and ABI are one pair")


def suffixed_or_miscased_name(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        if q.symbol is None or q.symbol in cat:
            continue
        sugg = cat.suggest(q.symbol)
        if sugg:
            s = sugg[0]
            extra = (f" at version {s.version}" if s.version is not None else "") + \
                    (" with the per-thread flag" if s.stream == "per_thread" else "")
            why = "names are base names; the driver picks _v2/_ptsz itself" if s.version is not None else s.reason
            yield q.symbol_line or q.line, q.symbol_col or q.col, \
                f"{q.symbol!r} is not a driver entry point name ({why}): ask for {s.symbol!r}{extra}"
        else:
            yield q.symbol_line or q.line, q.symbol_col or q.col, \
                f"{q.symbol!r} is not a driver entry point in the catalog: check the spelling (`cuentry list`)"
    for name, line, col in u.suffixed_names:
        abi = cat.by_exported(name)
        if abi is not None:
            yield line, col, (f"{name} is the exported name of {abi.symbol}@{abi.version}: resolve {abi.symbol!r} at "
                              f"{abi.version}{' per-thread' if abi.variant else ''} instead of naming the export")
        else:
            yield line, col, f"{name}: never build _vN/_ptds/_ptsz names by hand; resolve the base name at a pinned version"


def handwritten_signature(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        if q.handwritten:
            hint = f"PFN_{q.symbol}_v{q.version}" if _known(q, cat) and q.version else "the official PFN_cuX_vNNNNN typedef"
            yield q.line, q.col, f"{q.handwritten}: declare it as {hint} (cudaTypedefs.h)"
    for fname, line, col in u.handwritten_protos:
        yield line, col, (f"hand-written ctypes.{fname} prototype for a driver function: take the signature from "
                          "the catalog (cuentry.Driver.resolve / cuentry.Table)")


def deprecated_runtime_entry_point(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        if q.api == "cudaGetDriverEntryPoint":
            pin = f" with the version of the typedef ({', '.join(map(str, cat.versions(q.symbol)))})" \
                if _known(q, cat) and q.symbol else ""
            yield q.line, q.col, ("cudaGetDriverEntryPoint asks at the runtime's own version and fails on older "
                                  f"drivers: use cudaGetDriverEntryPointByVersion{pin}")


def unchecked_result(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q in u.queries:
        if not q.result_used:
            yield q.line, q.col, f"the {q.api} result is ignored: check it, then the query result, then the pointer"
        elif q.status in ("null", "missing"):
            yield q.line, q.col, (f"no query result is passed to {q.api}: pass a CUdriverProcAddressQueryResult and "
                                  "check it, or a miss cannot be told from a version problem")
        elif q.unchecked:
            yield q.line, q.col, (f"{' and '.join(q.unchecked)} from {q.api} {'is' if len(q.unchecked) == 1 else 'are'} "
                                  "never tested afterwards: check the CUresult, then the query result, then the "
                                  "pointer, before calling through it")


def default_stream_mode(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for name, line, col in u.flag_uses:
        if name in DEFAULT_FLAGS:
            yield line, col, (f"{name} inherits the application's stream mode: a library pins "
                              "CU_GET_PROC_ADDRESS_LEGACY_STREAM or _PER_THREAD_DEFAULT_STREAM explicitly")
    for q in u.queries:
        if q.flags_text.strip() in ("0", "0ULL", "0ull", "0u"):
            yield q.line, q.col, "flags 0 is CU_GET_PROC_ADDRESS_DEFAULT: pin the stream mode explicitly"


def mixed_stream_modes(u: Unit, cat: Catalog) -> Iterator[Hit]:
    legacy = [f for f in u.flag_uses if f[0] in LEGACY_FLAGS]
    per_thread = [f for f in u.flag_uses if f[0] in PER_THREAD_FLAGS]
    if legacy and per_thread:
        first, second = sorted([legacy[0], per_thread[0]], key=lambda f: (f[1], f[2]))
        yield second[1], second[2], (f"{second[0]} and {first[0]} (line {first[1]}) in one file: one function table "
                                     "has one stream mode; keep legacy and per-thread entries in separate tables")


def _pins(u: Unit, cat: Catalog) -> Iterator[tuple[Query, str, int, tuple[int, ...]]]:
    """Each literal pin of a catalog symbol: (query, symbol, pin, the symbol's ABI versions)."""
    for q in u.queries:
        if q.version is not None and q.symbol is not None and q.symbol in cat:
            yield q, q.symbol, q.version, cat.versions(q.symbol)


def pin_out_of_range(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q, sym, pin, vs in _pins(u, cat):
        if pin < vs[0]:
            yield q.line, q.col, (f"{sym} pinned at {pin}, below its first ABI {vs[0]}: it never resolves "
                                  f"(VERSION_NOT_SUFFICIENT); pin {vs[0]}")
        elif pin > vs[-1]:
            yield q.line, q.col, (f"{sym} pinned at {pin}, above its newest ABI {vs[-1]}: it fails on drivers "
                                  f"older than {format_version(pin)} although the ABI exists since "
                                  f"{format_version(vs[-1])}; pin {vs[-1]}")


def pin_not_an_abi(u: Unit, cat: Catalog) -> Iterator[Hit]:
    for q, sym, pin, vs in _pins(u, cat):
        if vs[0] < pin < vs[-1] and pin not in vs:
            below = max(v for v in vs if v <= pin)
            yield q.line, q.col, (f"{sym} pinned at {pin}, which is not one of its ABI versions "
                                  f"({', '.join(map(str, vs))}): the driver gives the {below} ABI; pin {below} "
                                  f"(PFN_{sym}_v{below}) to say so and lower the driver floor")


RULES: tuple[Rule, ...] = (
    Rule("CE001", "version-from-toolkit-or-driver", "the version is CUDA_VERSION or the driver's version",
         version_from_toolkit_or_driver),
    Rule("CE002", "typedef-version-mismatch", "the PFN typedef and the symbol/version asked for disagree",
         typedef_version_mismatch),
    Rule("CE003", "suffixed-or-miscased-name", "the name has a _vN/_ptds/_ptsz suffix, a case error or a typo",
         suffixed_or_miscased_name),
    Rule("CE004", "handwritten-signature", "the pointer has a hand-written function type, not the PFN typedef",
         handwritten_signature),
    Rule("CE005", "deprecated-runtime-entry-point", "cudaGetDriverEntryPoint asks at the runtime's version",
         deprecated_runtime_entry_point),
    Rule("CE006", "unchecked-result", "the CUresult or the query result is ignored, not passed or never tested",
         unchecked_result),
    Rule("CE007", "default-stream-mode", "CU_GET_PROC_ADDRESS_DEFAULT / cudaEnableDefault: mode not pinned",
         default_stream_mode),
    Rule("CE008", "mixed-stream-modes", "legacy and per-thread flags in one file", mixed_stream_modes),
    Rule("CE009", "pin-out-of-range", "a pin below the first ABI or above the newest", pin_out_of_range),
    Rule("CE010", "pin-not-an-abi", "a pin between ABI versions (a release or feature-group number)", pin_not_an_abi),
)
RULE_CODES = tuple(r.code for r in RULES)


def run(unit: Unit, cat: Catalog | None = None) -> Iterator[tuple[Rule, Hit]]:
    cat = catalog() if cat is None else cat
    for rule in RULES:
        for hit in rule.check(unit, cat):
            yield rule, hit
