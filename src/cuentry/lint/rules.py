"""The lint rules, as data: each rule one unit, its check function, its documentation and its fix.

Each rule reads a `Unit`'s facts and yields a [Hit][cuentry.lint.rules.Hit]: where, the message (it names the
symbol, the pin and the fix, and ends with where the request came from when it was found through a macro or a
version branch) and the facts a finding carries as fields (the symbol, the configuration, the advice). A rule's
row also carries what it finds and why it matters, a bad and a good example (the tests lint both: the rule must
fire on `bad` and stay silent on `good`), its fix (a function of [fix][cuentry.lint.fix], or none) and what that
fix does and how safe it is; its documentation page is written from the row (`page`), for `--explain` and the
site.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from ..catalog import Abi, Catalog, Fault, catalog, format_version
from ..names import BY_VERSION_DRIVER_FLOOR, DRIVER_NAME_PATTERN, UNCATALOGUED_PATTERN, UNDECLARED_EXPORTS, split_suffix
from . import fix as fixes
from . import pyabi
from .facts import DECLTYPE_RE, LEGACY_FLAGS, PER_THREAD_FLAGS, PFN_RE, Export, Query, Unit
from .fix import At, Fix
from .signature import Normalizer, normalizer, passed_alike, pointee_only, sign_only
from .verdict import bound, verdict

__all__ = [
    "DOCS_URL",
    "ROW_CODES",
    "RULES",
    "RULE_CODES",
    "SEVERITIES",
    "TABLE_ROWS",
    "TYPO_RATIO",
    "Fixer",
    "Hit",
    "RawHit",
    "Rule",
    "bound",
    "by_code",
    "candidate",
    "default_stream_mode",
    "deprecated_runtime_entry_point",
    "docs_version",
    "export_abi_mismatch",
    "handwritten_signature",
    "mixed_stream_modes",
    "page",
    "pin_not_an_abi",
    "pin_out_of_range",
    "rows_elsewhere",
    "run",
    "run_rows",
    "store_through_function_value",
    "suffixed_or_miscased_name",
    "typedef_version_mismatch",
    "unchecked_result",
    "verdict",
    "version_from_toolkit_or_driver",
]


SEVERITIES = ("error", "warning", "note")
DOCS_URL = "https://cuentry.github.io/cuentry/"
"""The documentation site (one version of it per release, `X.Y`, and `dev` for main)."""


@dataclass(frozen=True)
class Hit:
    """One finding of a rule on a file's facts, with the facts it is about as fields (never read back from the
    message): the driver symbol, the configuration it was judged in, and what to change (`hint`, the advice the
    message gives)."""

    line: int
    col: int
    message: str
    severity: str = ""          # "" until `run` gives it the rule's default
    symbol: str = ""
    config: str = ""
    hint: str = ""
    version_line: int = 0       # where the version asked at is written for several requests (see `Query`)


def _at(q: Query | Export, message: str, severity: str = "", hint: str = "") -> Hit:
    """A hit at a request (or an export taken by name), carrying its symbol and configuration."""
    symbol = (q.symbol or "") if isinstance(q, Query) else q.name
    return Hit(q.line, q.col, message, severity, symbol, q.config, hint,
               q.version_line if isinstance(q, Query) else 0)


RawHit = Hit | tuple[int, int, str] | tuple[int, int, str, str]
"""What a check yields: a `Hit`, or (line, col, message[, severity]) where it knows no more."""
Fixer = Callable[[At], Fix | None]


def docs_version(version: str) -> str:
    """The documentation site's version of a cuentry version: `X.Y` for a release, `dev` for anything else (a
    development or local build: the site of main)."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.\d+", version)
    return f"{m.group(1)}.{m.group(2)}" if m else "dev"


@dataclass(frozen=True)
class Rule:
    """A rule: its code and name, its check over a file's facts, and everything its documentation page says."""

    code: str
    name: str
    summary: str
    check: Callable[[Unit, Catalog], Iterable[RawHit]]
    bad: str = ""
    good: str = ""
    lang: str = "c"
    severity: str = "warning"     # the default; a hit can carry its own (see the module docstring)
    what: str = ""                # what it finds, in full
    why: str = ""                 # why that matters
    fix: Fixer | None = None      # its mechanical repair ([fix][cuentry.lint.fix]), if it has one
    fix_safety: str = ""          # what the fix changes and when it is safe

    def help_url(self, version: str) -> str:
        """This rule's page on the documentation site of cuentry `version` (`docs_version`)."""
        return f"{DOCS_URL}{docs_version(version)}/rules/{self.code.lower()}/"


def page(rule: Rule) -> str:
    """The rule's documentation page (Markdown): what it finds, why, an example that fires and one that is
    silent, and its fix. `cuentry lint --explain CODE` prints it; the site has one per rule."""
    lang = "python" if rule.lang == "python" else "c"
    sev = {"error": "an error", "warning": "a warning", "note": "a note"}[rule.severity]
    return "\n".join([
        f"# {rule.code} {rule.name}", "", f"{rule.summary[:1].upper()}{rule.summary[1:]}.",
        f"Default severity: {sev} (a finding can carry its own: see Severity in the lint reference).", "",
        "## What it finds", "", rule.what, "", "## Why", "", rule.why, "",
        "## Example that fires", "", f"```{lang}", rule.bad, "```", "",
        "## Example that is silent", "", f"```{lang}", rule.good, "```", "",
        "## Fix", "", rule.fix_safety, "",
        f"Suppress it on a line with `cuentry: ignore[{rule.code}]`, or on the next line with "
        f"`cuentry: ignore-next-line[{rule.code}]`, in a comment.", ""])


def _faults(q: Query, cat: Catalog, u: Unit, code: str) -> Iterator[tuple[int, Fault]]:
    """The verdict's faults that map onto the lint rule `code`, for each literal pin."""
    for pin in q.pins or ((None,) if q.version_kind in ("missing", "runtime") else ()):
        for f in verdict(q, cat, pin, floor=_floor(u, q)).faults:
            if f.lint_code == code:
                yield pin or 0, f


def _sig_fix(cat: Catalog, sym: str, sig: str) -> str:
    """What to pin so the request binds the pointer's own function type, if an ABI has it."""
    norm = normalizer(cat)
    same = [a for a in cat.abis(sym) if norm.abi(a) == sig]
    return f"pin {same[-1].version} ({same[-1].pfn}), the ABI with the pointer's type, or " if same else ""


def _floor(u: Unit, q: Query) -> int:
    """The driver floor a request's pin is weighed against: the one the code states, a version check around it, and
    (clang, which sees cuda.h rename the call) the 12.0 driver that the 12000 getter cuGetProcAddress_v2 needs."""
    return max(u.floor, q.guard, BY_VERSION_DRIVER_FLOOR if q.api == "cuGetProcAddress_v2" else 0)


def _known(q: Query, cat: Catalog) -> bool:
    return q.symbol is not None and q.symbol in cat


def _about(q: Query) -> str:
    return f"{q.symbol}: " if q.symbol else ""


def _via(q: Query) -> str:
    return f" through {q.via}" if q.via else ""


def version_from_toolkit_or_driver(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        if q.version_kind not in ("toolkit", "driver", "runtime_version"):
            continue
        src = {"toolkit": "the toolkit's CUDA_VERSION", "driver": "the driver's version",
               "runtime_version": "the runtime's version (cudaRuntimeGetVersion)"}[q.version_kind]
        m = PFN_RE.search(q.target_type or "")
        if m and (q.symbol is None or m.group(1) == q.symbol):
            fix = f"pin {m.group(2)}, the version of its {m.group(0)}"
        elif _known(q, cat):
            assert q.symbol is not None
            fix = f"pin the ABI of the typedef you call through ({', '.join(map(str, cat.versions(q.symbol)))})"
        else:
            fix = "pin the number in PFN_cuX_vNNNNN"
        yield _at(q, f"{_about(q)}{q.api}{_via(q)} asks at {src} ({q.version_text or q.version_kind}), "
                     f"which binds whatever ABI is newest there, not the one your pointer type has: {fix}{q.where}",
                  hint=fix)


def _stream(q: Query, variant: str | None) -> str:
    """Which ABIs the request's flags select: only the per-thread flag picks _ptsz/_ptds ones (flags 0 and 1
    give the legacy ones); when the flags cannot be told, the typedef's own mode is assumed."""
    if q.flags_mode:
        return "per_thread" if q.flags_mode == "per_thread" else "legacy"
    return "per_thread" if variant else "legacy"


_SIGN_NOTE = " (only the signedness of an integer differs: called alike today, but not the ABI's type)"
_STRUCT_NOTE = (" (only what a pointer points to differs: passed alike, and the same call if the pointees agree in "
                "layout; not the ABI's type)")


def _canonical_mismatch(q: Query, cat: Catalog) -> Iterator[RawHit]:
    """clang: the pointer's canonical function type against the signature of the ABI the request binds."""
    if q.symbol is None or q.symbol not in cat or q.target_sig is None:
        return
    norm = normalizer(cat)
    for pin in q.pins:
        abi = bound(q, cat, pin)
        if abi is not None and norm.abi(abi) == q.target_sig:
            hit = _decltype_mismatch(q, cat, abi, pin)
            if hit is not None:
                yield hit
                return
        if abi is None or norm.abi(abi) == q.target_sig:
            continue
        signs = sign_only(norm.abi(abi), q.target_sig) or pointee_only(norm.abi(abi), q.target_sig) or \
            passed_alike(norm, norm.abi(abi), q.target_sig)
        hint = f"{_sig_fix(cat, q.symbol, q.target_sig)}declare it as {abi.pfn}"
        msg = (f"{q.symbol} pinned at {pin}{_via(q)} binds the {abi.version} ABI, {abi.signature.returns} "
               f"({abi.signature.c_params(names=False)}), but the pointer's type is {q.target_type} = "
               f"{q.target_sig}{_why_alike(norm, norm.abi(abi), q.target_sig)}: {hint}{q.where}")
        yield _at(q, msg, "warning" if signs else "error", hint)
        return


_RENAME_SEVERITY = "warning"
"""A newer toolkit's decltype: a warning, as the catalog records each ABI's toolkits but not whether that cuda.h
renames the base name to it (`cuCtxCreate_v4` is a rename in 13.0; `cuCtxSynchronize_v2` a name of its own)."""


def _decltype_risk(cat: Catalog, abi: Abi, parsed: int = 0) -> Abi | None:
    """A newer ABI of another signature that `decltype(&symbol)` names in a newer supported toolkit (of the same
    stream mode as `abi`): a pointer typed so binds `abi` only until the code is built with those headers. (An
    older toolkit's is not counted: code that pins a newer ABI is not built with headers older than it.)"""
    norm = normalizer(cat)
    mine = norm.abi(abi)
    return next((a for a in cat.decltype_abis(abi.symbol) if a.variant == abi.variant and a.version > abi.version
                 and norm.abi(a) != mine and _first_toolkit(cat, a) > parsed), None)


def _decltype_names(cat: Catalog, symbol: str, parsed: int) -> tuple[Abi, ...]:
    """The ABIs `decltype(&symbol)` can name (`Catalog.decltype_abis`), less the legacy ones of the toolkits up to
    the real headers parsed against (clang saw what their decltype names: the one they keep is the ABI bound)."""
    got = cat.decltype_abis(symbol)
    if not parsed:
        return got
    kept = tuple(a for a in got if a.variant or _first_toolkit(cat, a) > parsed)
    newest_old = [a for a in got if not a.variant and _first_toolkit(cat, a) <= parsed]
    return (*newest_old[-1:], *kept)


def _first_toolkit(cat: Catalog, abi: Abi) -> int:
    """The CUDA_VERSION of the first toolkit whose cuda.h names the ABI under the plain name (what `decltype(&symbol)`
    is there; the catalog's per-release facts), else of the first that declares it. The headers parsed against are
    authoritative for it and every older one: their decltype is what clang saw."""
    for rel in cat.toolkits():
        if rel.function(abi.symbol, "per_thread" if abi.variant else "legacy") == abi:
            return int(rel.cuda_version)
    if not abi.toolkits:
        return 1 << 30
    major, _, minor = abi.toolkits[0].partition(".")
    return int(major) * 1000 + int(minor or 0) * 10


def _toolkits_of(cat: Catalog, abi: Abi) -> str:
    """The toolkits whose cuda.h makes `decltype(&symbol)` this ABI (`13.0+`: the first that names it so)."""
    first = _first_toolkit(cat, abi)
    return format_version(first) + "+" if first < 1 << 30 else "newer"


def _decltype_mismatch(q: Query, cat: Catalog, abi: Abi, pin: int) -> Hit | None:
    """clang: a decltype-typed pointer whose type is the bound ABI's with these headers, but another toolkit's
    cuda.h renames the name to an ABI of another signature (an error: that build binds the wrong ABI)."""
    other = _decltype_risk(cat, abi, q.toolkit) if q.target_export is not None else None
    if other is None:
        return None
    return _at(q, f"{q.symbol} pinned at {pin}{_via(q)} binds the {abi.version} ABI, and the pointer's type is "
               f"decltype of {q.target_export}: that is the {abi.version} ABI with these headers, but CUDA "
               f"{_toolkits_of(cat, other)} has {other.pfn} ({other.signature.returns} "
               f"({other.signature.c_params(names=False)})), and where its cuda.h renames {q.symbol} to it, decltype "
               f"names that ABI and the pin binds the wrong one: declare it as {abi.pfn}{q.where}", _RENAME_SEVERITY,
               f"declare it as {abi.pfn}")


def _why_alike(norm: Normalizer, a: str, b: str) -> str:
    if a == b:
        return ""
    if sign_only(a, b):
        return _SIGN_NOTE
    return _STRUCT_NOTE if pointee_only(a, b) else _PASSED_NOTE if passed_alike(norm, a, b) else ""


_PASSED_NOTE = (" (each value passed as the ABI passes it: an int for an enum, a pointer for a pointer; the same call, "
                "but not the ABI's type)")


def typedef_version_mismatch(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        m = PFN_RE.search(q.target_type or "")
        if not m and q.target_sig is not None and q.version_kind != "param":
            yield from _canonical_mismatch(q, cat)
            continue
        if not m or q.version_kind == "param":
            continue
        sym, ver = m.group(1), int(m.group(2))
        if q.symbol is not None and q.symbol != sym:
            base = split_suffix(q.symbol)
            if base is not None and base[0] == sym:
                continue   # the suffixed name of the typedef's own symbol: CE003 says what to ask for
            hint = f"ask for {sym!r} or use PFN_{q.symbol}_v<version>"
            yield _at(q, f"the pointer is a {m.group(0)} but the symbol asked for{_via(q)} is {q.symbol!r}: "
                         f"{hint}{q.where}", hint=hint)
            continue
        if sym not in cat:
            continue
        if q.api == "cudaGetDriverEntryPoint" and q.toolkit:
            yield from _runtime_binds_newer(q, cat, sym, ver, m.group(3) or "", m.group(0))
        yield from _pins_bind_other(q, cat, sym, ver, m.group(3) or "", m.group(0))


def _pins_bind_other(q: Query, cat: Catalog, sym: str, ver: int, variant: str, pfn: str) -> Iterator[RawHit]:
    """The first pin of a request that binds another ABI than its PFN typedef's (or mixes stream modes)."""
    for pin in q.pins:
        v = verdict(replace(q, symbol=sym), cat, pin, variant=variant)
        mixed = next((f for f in v.faults if f.kind == "mixed_stream_modes"), None)
        if mixed is not None:
            yield _at(q, f"{mixed.message}{_via(q)}: {mixed.fix}{q.where}", mixed.severity, mixed.fix)
            return
        got = v.abi
        if got is not None and got.version != ver:
            hint = f"pin {ver} (the typedef's number) so type and ABI are one pair"
            yield _at(q, f"{sym} pinned at {pin}{_via(q)} binds the {got.version} ABI but the pointer is a {pfn}: "
                         f"{hint}{q.where}", hint=hint)
            return


def _runtime_binds_newer(q: Query, cat: Catalog, sym: str, ver: int, variant: str, pfn: str) -> Iterator[RawHit]:
    """cudaGetDriverEntryPoint asks at the version of the runtime the program runs with: any release of the major
    version of the headers it was built with (a newer libcudart of that major loads in its place). When such a
    runtime binds a newer ABI than the pointer's typedef, the typedef is the wrong pair (an error when the two
    signatures differ)."""
    major = q.toolkit // 1000
    mine = next((a for a in cat.abis(sym) if a.version == ver and a.variant == variant), None)
    newer = [a for a in cat.abis(sym) if a.variant == variant and ver < a.version < (major + 1) * 1000]
    if mine is None or not newer:
        return
    got = max(newer, key=lambda a: a.version)
    norm = normalizer(cat)
    other = norm.abi(got) != norm.abi(mine)
    which = f"any CUDA {major}.x runtime" if got.version <= major * 1000 else \
        f"a CUDA {major}.x runtime of {format_version(got.version)} or later (one the program built here may load)"
    hint = f"use cudaGetDriverEntryPointByVersion with {ver}"
    msg = (f"{sym}: cudaGetDriverEntryPoint{_via(q)} binds the newest ABI of the runtime it runs with, and {which} "
           f"gives {got.pfn}{', another signature,' if other else ''} not the pointer's {pfn}: {hint}{q.where}")
    yield _at(q, msg, "error" if other else "warning", hint)


def _suggest(name: str, cat: Catalog) -> tuple[str, str]:
    """(message, hint) for a name that is not a driver entry point: the catalog's suggestion, if it has one."""
    sugg = cat.suggest(name)
    if not sugg:
        hint = "check the spelling (`cuentry list`)"
        return f"{name!r} is not a driver entry point in the catalog: {hint}", hint
    s = sugg[0]
    extra = (f" at version {s.version}" if s.version is not None else "") + \
            (" with the per-thread flag" if s.stream == "per_thread" else "")
    why = "names are base names; the driver picks _v2/_ptsz itself" if s.version is not None else s.reason
    hint = f"ask for {s.symbol!r}{extra}"
    return f"{name!r} is not a driver entry point name ({why}): {hint}", hint


def _name_hit(q: Query, cat: Catalog) -> Hit:
    msg, hint = _suggest(q.symbol or "", cat)
    return Hit(q.symbol_line or q.line, q.symbol_col or q.col, msg + q.where, "", q.symbol or "", q.config, hint)


def suffixed_or_miscased_name(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        if q.symbol is None or q.symbol in cat or not q.symbol.lower().startswith("cu"):
            continue
        yield _name_hit(q, cat)
    for name, line, col in u.suffixed_names:
        abi = cat.by_exported(name)
        if abi is not None:
            hint = f"resolve {abi.symbol!r} at {abi.version}{' per-thread' if abi.variant else ''} instead of naming the export"
            yield Hit(line, col, f"{name} is the exported name of {abi.symbol}@{abi.version}: {hint}", "", abi.symbol,
                      hint=hint)
        else:
            hint = "resolve the base name at a pinned version"
            yield Hit(line, col, f"{name}: never build _vN/_ptds/_ptsz names by hand; {hint}", "", name, hint=hint)
    yield from _unexported(u, cat)
    yield from pyabi.hits(u, cat, "CE003")   # Python prototypes (their hits carry a severity)


_DRIVER_NAME = re.compile(DRIVER_NAME_PATTERN)
_UNCATALOGUED = re.compile(UNCATALOGUED_PATTERN)
TYPO_RATIO = 0.9
"""How alike a name taken by dlsym must be to a driver entry point's to be its misspelling (difflib's ratio): a
name of another library (`cudnnCreate`, `cublasCreate_v2`) is not, `cuCtxSyncronize` is."""


def _unexported(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    """Exports taken by a name no driver exports: a suffix the entry point never had, a misspelling of one, or a
    driver function's name that no toolkit the catalog reads declares and no recorded driver exports."""
    import difflib

    for e in u.exports:
        if e.name in cat or cat.by_exported(e.name) is not None or e.name in UNDECLARED_EXPORTS:
            continue
        split = split_suffix(e.name)
        if split is not None and split[0] in cat:
            got = ", ".join(a.exported or a.symbol for a in cat.abis(split[0]))
            hint = f"take one of {split[0]}'s exports ({got})"
            yield Hit(e.line, e.col, f"{e.api}({e.name!r}): no driver exports this name, so the lookup never resolves: "
                      f"{hint}{e.where}", "error", split[0], hint=hint)
            continue
        if not _DRIVER_NAME.match(e.name):
            continue   # `cudaMemcpyAsync` (the runtime's), `cudnnCreate`: another library's name, not a misspelling
        near = [s.symbol for s in cat.suggest(e.name)
                if difflib.SequenceMatcher(None, e.name, s.symbol).ratio() >= TYPO_RATIO]
        if near:
            hint = f"did you mean {near[0]!r}?"
            yield Hit(e.line, e.col, f"{e.api}({e.name!r}): no driver exports this name, so the lookup never resolves: "
                      f"{hint}{e.where}", "error", near[0], hint=hint)
        elif _DRIVER_NAME.fullmatch(e.name) and not _UNCATALOGUED.fullmatch(e.name):
            newest = cat.toolkits()[-1].release if cat.toolkits() else "the newest"
            hint = "take a name cuda.h declares, or drop the lookup"
            yield Hit(e.line, e.col, f"{e.api}({e.name!r}): no toolkit's cuda.h up to CUDA {newest} declares this name "
                      f"and no driver cuentry knows exports it, so the lookup never resolves: {hint}{e.where}", "error",
                      "", hint=hint)


def _handwritten_severity(q: Query, cat: Catalog) -> str | None:
    """None: not a fault (clang saw a hand-written type equal to the ABI bound); else the severity. A decltype
    that can name only one ABI in every supported toolkit and mode is a note."""
    single = _known(q, cat) and q.symbol is not None and len(_decltype_names(cat, q.symbol, q.toolkit)) == 1
    decl = q.target_export is not None or "decltype" in (q.handwritten or "")
    if q.target_sig is not None and q.symbol in cat and q.pins:
        return _clang_handwritten(q, cat, decl, single)
    if decl and single and q.symbol is not None and q.pins:
        # no canonical type (a decltype of a name clang could not see): the one ABI it can name against the bound one
        return "note" if bound(q, cat, q.pins[0]) == cat.decltype_abis(q.symbol)[0] else "warning"
    return "note" if decl and single else "warning"


def _clang_handwritten(q: Query, cat: Catalog, decl: bool, single: bool) -> str | None:
    abi = bound(q, cat, q.pins[0])
    if abi is None or normalizer(cat).abi(abi) != q.target_sig:
        return None   # a mismatch: CE002 reports it as an error
    if decl and q.target_export is not None and _decltype_risk(cat, abi, q.toolkit) is not None:
        return None   # another toolkit's decltype binds another ABI: CE002 reports it as an error
    if decl and q.symbol is not None:
        # a note when whatever the decltype can name has the bound ABI's signature (a _ptsz twin under
        # CUDA_API_PER_THREAD_DEFAULT_STREAM is called alike)
        norm = normalizer(cat)
        mine = norm.abi(abi)
        single = single or all(norm.abi(a) == mine for a in _decltype_names(cat, q.symbol, q.toolkit))
    return ("note" if single else "warning") if decl else None


def handwritten_signature(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        sev = _handwritten_severity(q, cat) if q.handwritten else None
        if q.handwritten and sev is not None:
            abi = cat.pick(q.symbol, q.version) if _known(q, cat) and q.symbol and q.version else None
            pfn = f"{abi.pfn}, the ABI pin {q.version} binds" if abi is not None else "the official PFN_cuX_vNNNNN typedef"
            hint = f"declare it as {pfn} (cudaTypedefs.h)"
            yield _at(q, f"{_about(q)}{q.handwritten}: {hint}{q.where}", sev, hint)
    yield from _handwritten_exports(u, cat)
    for what, line, col, why in u.handwritten_protos:
        yield line, col, (f"{what} is a hand-written ctypes prototype {why}: take the signature from the "
                          "catalog (cuentry.Driver.resolve / cuentry.Table)")
    yield from pyabi.hits(u, cat, "CE004")


def _handwritten_exports(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    """clang: exports taken into a hand-written function type that is the export's own ABI (a mismatch is CE011):
    a note, one per cause: the rows macros write in one function are one finding, at its first row."""
    groups: dict[str, list[tuple[Export, Abi]]] = {}
    for e in u.exports:
        abi = _own_abi_by_hand(e, cat)
        if abi is not None:
            groups.setdefault(e.cause or f"{e.line}:{e.col}:{e.name}", []).append((e, abi))
    norm = normalizer(cat)
    for rows in groups.values():
        rows.sort(key=lambda r: (r[0].line, r[0].col))
        e, abi = rows[0]
        hand = e.handwritten if e.handwritten and PFN_RE.search(e.target_type or "") else \
            f"the pointer's type {e.target_type} is taken from cuda.h's declaration" if e.target_export else \
            f"the pointer's type {e.target_type} is a hand-written function type"
        what = (f"{e.api}({e.name!r}): {hand}; it is the export's own ABI, {abi.symbol}@{abi.version}"
                f"{_why_alike(norm, norm.abi(abi), e.target_sig or '')}, but nothing ties the two together")
        fix = f"declare it as {abi.pfn}"
        if len(rows) > 1:
            made = sorted({r[0].macro for r in rows} - {""})
            name = (f"macro {made[0]} takes" if len(made) == 1 else f"macros {' and '.join(made)} take" if made
                    else "table takes")
            what = (f"one cause for {len({r[0].name for r in rows})} exports the {name} "
                    f"({_listed(sorted({r[0].name for r in rows}), 8)}): each pointer has a hand-written function "
                    f"type, each the ABI of its export (e.g. {e.name}: {e.target_type})")
            fix = f"declare each as its ABI's PFN typedef ({abi.pfn}, ...)"
        yield _at(e, f"{what}: {fix} (cudaTypedefs.h){e.where}", "note", f"{fix} (cudaTypedefs.h)")


def _own_abi_by_hand(e: Export, cat: Catalog) -> Abi | None:
    """The export's ABI when the pointer's type is hand-written and is that ABI (or differs only in what a pointer
    points to, or, for a PFN_ typedef the project writes itself, in signedness); None otherwise (CE011's)."""
    abi = cat.by_exported(e.name)
    if abi is None or e.target_sig is None:
        return None
    if e.target_export is not None:   # decltype of a function whose type is the export's under every toolkit
        own = normalizer(cat).abi(abi) == e.target_sig and _decltype_risk(cat, abi, e.toolkit) is None
        return abi if own and not [a for a in _decltype_names(cat, abi.symbol, e.toolkit) if a != abi] else None
    m = PFN_RE.search(e.target_type or "")
    if m is not None and (e.handwritten is None or m.group(0) != abi.pfn):
        return None   # a PFN typedef of cudaTypedefs.h, or one of another ABI (CE011)
    norm = normalizer(cat)
    mine = norm.abi(abi)
    alike = mine == e.target_sig or pointee_only(mine, e.target_sig) or \
        (m is not None and sign_only(mine, e.target_sig)) or \
        (not sign_only(mine, e.target_sig) and passed_alike(norm, mine, e.target_sig))
    return abi if alike else None


def deprecated_runtime_entry_point(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    by_macro: dict[int, list[Query]] = {}
    for q in u.queries:
        if q.api == "cudaGetDriverEntryPoint" and not q.wrapped:
            for line in q.macro_lines:
                by_macro.setdefault(line, []).append(q)
    for line, qs in by_macro.items():   # one cause: the macro that calls it, once, with its expansions
        at = ", ".join(map(str, sorted({q.line for q in qs})[:12])) + (", ..." if len({q.line for q in qs}) > 12 else "")
        hint = "use cudaGetDriverEntryPointByVersion with the version of each typedef"
        yield Hit(line, 1, f"cudaGetDriverEntryPoint in this macro asks at the runtime's own version and fails on "
                           f"older drivers (expanded at line{'s' if len(qs) > 1 else ''} {at}): {hint}",
                  config=qs[0].config, hint=hint)
    for q in u.queries:
        if q.api != "cudaGetDriverEntryPoint" or q.wrapped or q.macro_lines:
            continue
        pin = f" with the version of the typedef ({', '.join(map(str, cat.versions(q.symbol)))})" \
            if _known(q, cat) and q.symbol else " with the version of the typedef you call through"
        hint = f"use cudaGetDriverEntryPointByVersion{pin}"
        yield _at(q, f"{_about(q)}cudaGetDriverEntryPoint asks at the runtime's own version and fails on older "
                     f"drivers: {hint}{q.where}", hint=hint)


def unchecked_result(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        if not q.result_used:
            hint = "check it, then the query result, then the pointer"
            yield _at(q, f"{_about(q)}the {q.api} result is ignored: {hint}{q.where}", hint=hint)
        elif q.status in ("null", "missing"):
            hint = ("pass a CUdriverProcAddressQueryResult and check it, or a miss cannot be told from a version "
                    "problem")
            yield _at(q, f"{_about(q)}no query result is passed to {q.api}: {hint}{q.where}", hint=hint)
        elif q.unchecked:
            hint = "check the CUresult, then the query result, then the pointer, before calling through it"
            yield _at(q, f"{_about(q)}{' and '.join(q.unchecked)} from {q.api} "
                         f"{'is' if len(q.unchecked) == 1 else 'are'} never tested afterwards: {hint}{q.where}", hint=hint)


def default_stream_mode(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for q in u.queries:
        if q.flags_mode != "default" or not _known(q, cat):
            continue
        pins = q.pins[:1] or (None,)
        for f in verdict(q, cat, pins[0]).faults:
            if f.lint_code == "CE007":
                yield _at(q, f"{f.message}{_via(q)}: {f.fix}{q.where}", f.severity, f.fix)


def mixed_stream_modes(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    legacy = [f for f in u.flag_uses if f[0] in LEGACY_FLAGS]
    per_thread = [f for f in u.flag_uses if f[0] in PER_THREAD_FLAGS]
    if legacy and per_thread:
        first, second = sorted([legacy[0], per_thread[0]], key=lambda f: (f[1], f[2]))
        hint = "keep legacy and per-thread entries in separate tables"
        yield Hit(second[1], second[2], f"{second[0]} and {first[0]} (line {first[1]}) in one file: one function "
                                        f"table has one stream mode; {hint}", hint=hint)


def _pins(u: Unit, cat: Catalog) -> Iterator[tuple[Query, str, int, tuple[int, ...]]]:
    """Each literal pin of a catalog symbol: (query, symbol, pin, the symbol's ABI versions)."""
    for q in u.queries:
        if q.symbol is not None and q.symbol in cat:
            for pin in q.pins:
                yield q, q.symbol, pin, cat.versions(q.symbol)


# Pins cuentry's own API refuses outright (a version that is not one of the symbol's ABIs): always an error there.
_REFUSED_BY_CUENTRY = ("CE009", "CE010")


def _verdict_rule(code: str) -> Callable[[Unit, Catalog], Iterator[RawHit]]:
    """A rule whose findings are the catalog verdict's faults of that lint code, for every request."""

    def check(u: Unit, cat: Catalog) -> Iterator[RawHit]:
        for q in u.queries:
            if not _known(q, cat):
                continue
            for _, f in _faults(q, cat, u, code):
                if code in _REFUSED_BY_CUENTRY and q.via.startswith("cuentry "):  # not a risk: it never runs
                    yield _at(q, f"{f.message}{_via(q)}: {f.fix}{q.where}; cuentry refuses a pin that is not one of "
                                 "the symbol's ABI versions (TableDeclarationError when the table is declared, "
                                 "ResolutionError from Driver.call/resolve)", "error", f.fix)
                    continue
                yield _at(q, f"{f.message}{_via(q)}: {f.fix}{q.where}", f.severity, f.fix)

    check.__name__ = check.__qualname__ = f"verdict_{code.lower()}"
    return check


pin_out_of_range = _verdict_rule("CE009")
pin_not_an_abi = _verdict_rule("CE010")


def _export_canonical(e: Export, cat: Catalog) -> tuple[str, str, str] | None:
    """clang: the pointer's canonical type against the ABI of the export named (None: they agree)."""
    abi = cat.by_exported(e.name)
    if abi is None or e.target_sig is None:
        return None
    norm = normalizer(cat)
    if norm.abi(abi) == e.target_sig:
        m = PFN_RE.search(e.target_type or "")
        if m and m.group(0) != abi.pfn and (m.group(3) or "") == abi.variant:
            return None    # another typedef with the same type and mode: the call is the same
        return _export_decltype(e, cat, abi) if e.target_export is not None else None
    if _alike_by_hand(norm, norm.abi(abi), e.target_sig):
        return None   # passed alike, the same call: a hand-written type (CE004, `_handwritten_exports`)
    same = [a for a in cat.abis(abi.symbol) if norm.abi(a) == e.target_sig and a.exported]
    same = [a for a in same if a.variant == abi.variant] or same   # the export of the same stream mode first
    fix = f"take {same[-1].exported!r} (the export of that type)" if same else f"declare the pointer as {abi.pfn}"
    signs = sign_only(norm.abi(abi), e.target_sig)
    hint = f"{fix}, or resolve {abi.symbol!r} at a pinned version with cuGetProcAddress"
    return (f"{e.api}({e.name!r}) returns the export of {abi.symbol}@{abi.version}, {abi.signature.returns} "
            f"({abi.signature.c_params(names=False)}), but the pointer's type is {e.target_type} = {e.target_sig}"
            f"{_why_alike(norm, norm.abi(abi), e.target_sig)}: {hint}", "warning" if signs else "error", hint)


def _alike_by_hand(norm: Normalizer, abi_sig: str, sig: str) -> bool:
    """A hand-written type that is called as the ABI is (what a pointer points to aside, or each value passed
    alike) but not only in signedness (that one is a warning of its own)."""
    return pointee_only(abi_sig, sig) or (not sign_only(abi_sig, sig) and passed_alike(norm, abi_sig, sig))


def _export_decltype(e: Export, cat: Catalog, abi: Abi) -> tuple[str, str, str] | None:
    """A decltype-typed pointer with the export's type with these headers: an error when another supported
    toolkit's decltype names an ABI of another signature, a note when it can name only this one."""
    risk = _decltype_risk(cat, abi, e.toolkit)
    if risk is not None:
        return (f"{e.api}({e.name!r}) returns the export of {abi.symbol}@{abi.version}, and the pointer is typed "
                f"with decltype of {e.target_export}: the export's type with these headers, but CUDA "
                f"{_toolkits_of(cat, risk)} has {risk.pfn}, another ABI, and where its cuda.h renames {abi.symbol} to "
                f"it, decltype names that one: declare it as {abi.pfn}", _RENAME_SEVERITY, f"declare it as {abi.pfn}")
    others = ", ".join(a.pfn for a in _decltype_names(cat, abi.symbol, e.toolkit) if a != abi)
    if not others:
        return None   # the export's own type, whatever the toolkit: a hand-written type (CE004's note)
    return (f"{e.api}({e.name!r}) fills a pointer typed with decltype of {e.target_export}: the export's "
            f"type with these headers, but decltype follows the toolkit's cuda.h (another toolkit, or "
            f"CUDA_API_PER_THREAD_DEFAULT_STREAM, gives {others}): declare it as {abi.pfn}", "warning",
            f"declare it as {abi.pfn}")


def _export_check(e: Export, cat: Catalog) -> tuple[str, str] | None:
    """(message, hint) for an export taken into a PFN typedef or a decltype that is not its ABI's."""
    abi = cat.by_exported(e.name)
    ty = e.target_type or ""
    d = DECLTYPE_RE.search(ty)
    if d:
        got = f"the {abi.symbol}@{abi.version} ABI" if abi is not None else "one ABI"
        hint = f"declare it with the PFN typedef of that ABI{f' ({abi.pfn})' if abi is not None else ''}"
        return (f"{e.api}({e.name!r}) returns {got}, but the pointer's type is {ty}, which binds whatever ABI the "
                f"compiling toolkit's cuda.h picks: {hint}", hint)
    m = PFN_RE.search(ty)
    if not m or abi is None:
        return None
    if m.group(1) != abi.symbol:
        hint = f"ask for the export of {m.group(1)} or use {abi.pfn}"
        return f"{e.api}({e.name!r}) returns {abi.symbol}@{abi.version} but the pointer is a {m.group(0)}: {hint}", hint
    if int(m.group(2)) != abi.version or (m.group(3) or "") != abi.variant:
        want = next((a for a in cat.abis(abi.symbol) if a.pfn == m.group(0)), None)
        fix = (f"take {want.exported!r}" if want is not None and want.exported else
               f"resolve {abi.symbol!r} at {m.group(2)} with cuGetProcAddress")
        hint = f"{fix}, or declare the pointer as {abi.pfn}"
        return (f"{e.api}({e.name!r}) returns the export of {abi.symbol}@{abi.version} ({abi.pfn}) but the pointer is "
                f"a {m.group(0)}, another ABI: {hint}", hint)
    return None


def store_through_function_value(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    """clang: `*(void **)(*fp) = v` (or `*(void **)fp = v`): the store goes through the function pointer's value, into
    the function it points to; fp itself is never set."""
    for line, col, name in u.misstores:
        hint = f"write *(void **)&{name} = ... (the address of the pointer, not its value)"
        yield Hit(line, col, f"the store writes through the value of the function pointer {name} (`*{name}` is the "
                  f"function it points to, converted back to that value), into the function's code: {name} is never "
                  f"set, and a call through it is undefined behaviour: {hint}", "error", "", hint=hint)


def export_abi_mismatch(u: Unit, cat: Catalog) -> Iterator[RawHit]:
    for e in u.exports:
        if e.target_sig is not None and not PFN_RE.search(e.target_type or ""):
            got = _export_canonical(e, cat)
            if got is not None:
                yield _at(e, got[0] + e.where, got[1], got[2])
            continue
        checked = _export_check(e, cat)
        if checked:
            yield _at(e, checked[0] + e.where, hint=checked[1])
    yield from pyabi.hits(u, cat, "CE011")


RULES: tuple[Rule, ...] = (
    Rule("CE001", "version-from-toolkit-or-driver", "the version is CUDA_VERSION or the driver's version",
         version_from_toolkit_or_driver,
         bad='int v; cuDriverGetVersion(&v); CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
             'if (cuGetProcAddress("cuMemAlloc", (void**)&p, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
              'if (cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         severity="error",
         what='The version asked at is `CUDA_VERSION`/`CUDART_VERSION`, or comes from the driver or the runtime '
              '(`cuDriverGetVersion`, `cudaRuntimeGetVersion`) through assignments, `std::min`/`std::max`, ternaries or '
              'helper functions.',
         why="`cuGetProcAddress` returns the newest ABI at or below the version asked. A version from the toolkit's "
             'headers or from the running driver is not a fixed ABI: built with newer headers, or run on a newer driver, '
             "the same line binds a newer ABI, whose signature may not be the pointer's type (`cuCtxCreate`'s 11040 ABI "
             'takes two more parameters than its 3020 one), and every call through the pointer then passes the wrong '
             'arguments.',
         fix=fixes.pin,
         fix_safety="**Safe** where the pointer's type names the ABI (a `PFN_cuX_vN`, or the one ABI with the pointer's function "
                    "type): the version becomes that ABI's number. **Unsafe** for an untyped pointer: the version becomes the ABI"
                    ' the targeted toolkit binds (`--toolkit`, else the newest), which some driver may not have given before. '
                    'Applied with `--fix` (unsafe ones with `--unsafe-fixes`), each verified by linting the fixed text again.'),
    Rule("CE002", "typedef-version-mismatch", "the PFN typedef and the symbol/ABI asked for disagree",
         typedef_version_mismatch,
         bad='CUdriverProcAddressQueryResult q; PFN_cuCtxCreate_v3020 p;\n'
             'if (cuGetProcAddress("cuCtxCreate", (void**)&p, 11040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuCtxCreate_v3020 p;\n'
              'if (cuGetProcAddress("cuCtxCreate", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         severity="error",
         what="The pointer's `PFN_cuX_vN` and the request disagree: another symbol, or a pin that binds another ABI than "
              "the typedef's (12000 for a `PFN_cuMemAlloc_v3020` binds that ABI: silent; the suffixed name of the typedef's"
              ' own symbol is left to CE003). With libclang also a hand-written, aliased or `decltype` type whose canonical'
              " function type is not the bound ABI's; and `cudaGetDriverEntryPoint` into a typedef older than the ABI a "
              "runtime of the headers' major version binds.",
         why="The pin decides which ABI the driver returns; the pointer's type decides how every call passes its "
             'arguments. When the two name different ABIs, each call through the pointer is undefined behaviour: a 32-bit '
             'size read as 64 bits, a struct of another version, a parameter missing.',
         fix=fixes.pin_or_type,
         fix_safety="**Safe**: the pin becomes the version of the pointer's typedef, or of the one ABI whose function type the "
                    'pointer has (the type stays; the request now binds it). **Unsafe** (libclang): a hand-written type that is '
                    "no ABI's function type becomes the `PFN_cuX_vN` of the ABI the pin binds, and the pin that ABI's version, "
                    'together, where the file includes `cudaTypedefs.h` and declares the pointer by itself; the calls through the'
                    ' pointer then compile against another type, so check them.'),
    Rule("CE003", "suffixed-or-miscased-name", "the name has a _vN/_ptds/_ptsz suffix, a case error or a typo",
         suffixed_or_miscased_name,
         bad='CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
             'if (cuGetProcAddress("cuMemAlloc_v2", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
              'if (cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         severity="error",
         what='A `_v2`/`_ptds`/`_ptsz` suffix, a case error or a typo in the symbol asked for; in Python a name taken from '
              'libcuda that no driver exports (a real export such as `cuMemAlloc_v2`, named by its own name, binds its own '
              'ABI: judged by its prototype, CE011).',
         why='`cuGetProcAddress` takes base names: the driver picks the `_v2` or `_ptsz` ABI itself from the version and '
             'the flags. A suffixed or misspelled name never resolves (`CUDA_ERROR_NOT_FOUND`) on any driver, so the code '
             'takes its fallback, or fails, everywhere.',
         fix=fixes.name,
         fix_safety='**Safe**: a suffixed name becomes the base name at the version of the ABI the suffix names (with the '
                    'per-thread flag for `_ptds`/`_ptsz`); a case error becomes the one catalog name it spells. A fix that would '
                    'make the file mix stream modes (CE008) is withdrawn, with what to change by hand.'),
    Rule("CE004", "handwritten-signature", "the pointer has a hand-written function type, not the PFN typedef",
         handwritten_signature,
         bad='cudaDriverEntryPointQueryResult q; CUresult (*p)(CUdeviceptr*, size_t);\n'
             'if (cudaGetDriverEntryPoint("cuMemAlloc", (void**)&p, cudaEnableLegacyStream, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
              'if (cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         what='The pointer has a hand-written function type: a function-pointer declarator or typedef, `decltype(&cuX)`, a '
              "cast to a hand-written type, a template's `using F = CUresult(Args...)`, a `PFN_cuX_vN` typedef the project "
              "declares itself. An export taken by name into a hand-written type of its own ABI is a note (one per loader's"
              ' macro rows). In Python: a `CFUNCTYPE` prototype applied to a pointer from a request.',
         why='A hand-written type is tied to no ABI: nothing checks that it stays the type of the ABI the request binds '
             'when the pin, the toolkit or `CUDA_API_PER_THREAD_DEFAULT_STREAM` change, and `decltype(&cuX)` follows '
             "whatever the compiling toolkit's `cuda.h` renames `cuX` to. The `PFN_cuX_vN` typedef names the ABI, so type "
             'and pin are visibly one pair.',
         fix=fixes.pointer_type,
         fix_safety='**Safe** (libclang): `decltype(&cuX) p`, or a hand-written declarator, typedef variable, field or cast of '
                    'the pointer, becomes the `PFN_cuX_vN` of the ABI the request binds where the two are the same function type '
                    'and the file includes `cudaTypedefs.h`. **Unsafe** where the function types differ (the calls then compile '
                    'against another type).'),
    Rule("CE005", "deprecated-runtime-entry-point", "cudaGetDriverEntryPoint asks at the runtime's version",
         deprecated_runtime_entry_point,
         bad='cudaDriverEntryPointQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
             'if (cudaGetDriverEntryPoint("cuMemAlloc", (void**)&p, cudaEnableLegacyStream, &q) || q) {}',
         good='cudaDriverEntryPointQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
              'if (cudaGetDriverEntryPointByVersion("cuMemAlloc", (void**)&p, 3020, cudaEnableLegacyStream, &q) '
              '|| q) {}',
         what="`cudaGetDriverEntryPoint`, which asks at the runtime's own version. Reported once at the call, not at every "
              'call of a wrapper; with libclang once at the `#define` that calls it, naming its expansions.',
         why='The ABI it binds follows the `libcudart` the program runs with, not the code: a newer runtime of the same '
             'major version binds a newer ABI into the same pointer, and the call fails on drivers older than that '
             'runtime. `cudaGetDriverEntryPointByVersion` takes the pin.',
         fix=None,
         fix_safety="No automatic fix: `cudaGetDriverEntryPointByVersion` takes a version (the number of each pointer's typedef) "
                    'and needs a 12.x runtime; write it by hand.'),
    Rule("CE006", "unchecked-result", "the CUresult or the query result is ignored, not passed or never tested",
         unchecked_result,
         bad='PFN_cuMemAlloc_v3020 p;\n'
             'cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, NULL);',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemAlloc_v3020 p;\n'
              'if (cuGetProcAddress("cuMemAlloc", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         what="The request's result is ignored, no query result is passed (where the API has one: not the 11030 getter, not"
              ' the pre-12.0 runtime call), or the stored `CUresult`/query result is never tested afterwards.',
         why='A failed lookup leaves the pointer NULL or stale, and only the query result tells a symbol the driver does '
             'not have from a version it does not have. Calling through an unchecked pointer crashes where a fallback was '
             'possible.',
         fix=None,
         fix_safety="No automatic fix: what to do when the lookup fails (a fallback, an error) is the program's choice."),
    Rule("CE007", "default-stream-mode", "default flags for a symbol that has a per-thread ABI: mode not pinned",
         default_stream_mode,
         bad='CUdriverProcAddressQueryResult q; PFN_cuMemcpyAsync_v4000 p;\n'
             'if (cuGetProcAddress("cuMemcpyAsync", (void**)&p, 4000, CU_GET_PROC_ADDRESS_DEFAULT, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemCreate_v10020 p;\n'
              'if (cuGetProcAddress("cuMemCreate", (void**)&p, 10020, CU_GET_PROC_ADDRESS_DEFAULT, &q) || q) {}',
         what='`CU_GET_PROC_ADDRESS_DEFAULT`, `cudaEnableDefault` or flags 0 for a symbol that has a per-thread ABI in the '
              'catalog (elsewhere the flag cannot change what resolves: silent).',
         why="The default flag inherits the application's stream mode, which depends on how it was compiled "
             "(`CUDA_API_PER_THREAD_DEFAULT_STREAM`, nvcc's `--default-stream per-thread`): the same line binds the legacy"
             ' or the per-thread ABI depending on the build, and one table can end up holding both.',
         fix=fixes.flags,
         fix_safety='**Safe**: the default becomes the one explicit flag the file already uses elsewhere (when it uses none, or '
                    'both, there is no fix: choose the mode by hand).'),
    Rule("CE008", "mixed-stream-modes", "legacy and per-thread flags in one file", mixed_stream_modes,
         bad='int a = CU_GET_PROC_ADDRESS_LEGACY_STREAM; int b = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;',
         good='int a = CU_GET_PROC_ADDRESS_LEGACY_STREAM; int b = CU_GET_PROC_ADDRESS_LEGACY_STREAM;',
         what='Legacy and per-thread flags in one file.',
         why='One function table has one stream mode. Legacy and per-thread ABIs of stream functions in one table make its'
             ' calls use two different default streams, whose synchronization differs.',
         fix=None,
         fix_safety='No automatic fix: keep legacy and per-thread entries in separate tables (files).'),
    Rule("CE009", "pin-out-of-range", "a pin below the first ABI or above the newest", pin_out_of_range,
         bad='CUdriverProcAddressQueryResult q; PFN_cuMemCreate_v10020 p;\n'
             'if (cuGetProcAddress("cuMemCreate", (void**)&p, 10000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuMemCreate_v10020 p;\n'
              'if (cuGetProcAddress("cuMemCreate", (void**)&p, 10020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         what="A pin below the symbol's first ABI (never resolves: an error), above every driver's version (two majors "
              'above the newest release the catalog knows, a typo such as `110400`: an error), or above its newest ABI that'
              " is not a release number (a note). A wrapper's default version counts.",
         why="Below the first ABI the lookup fails on every driver (`CUDA_ERROR_NOT_FOUND`); above every driver's version "
             'it is `CUDA_ERROR_INVALID_VALUE` everywhere; above the newest ABI it binds that ABI but raises the driver '
             'floor for nothing.',
         fix=fixes.pin,
         fix_safety="**Safe** where the pointer's type names the ABI: the pin becomes its version. **Unsafe** for an untyped "
                    'pointer: the pin becomes the ABI the targeted toolkit binds.'),
    Rule("CE010", "pin-not-an-abi", "a pin between ABI versions (a release or feature-group number)", pin_not_an_abi,
         bad='CUdriverProcAddressQueryResult q; PFN_cuCtxCreate_v11040 p;\n'
             'if (cuGetProcAddress("cuCtxCreate", (void**)&p, 12010, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         good='CUdriverProcAddressQueryResult q; PFN_cuCtxCreate_v3020 p;\n'
              'if (cuGetProcAddress("cuCtxCreate", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}',
         what='A pin between ABI versions, or a release number (also one above the newest ABI): the message names the ABI '
              'the driver gives. A warning; a note at or below the driver floor the code states (`--floor`, a manifest, a '
              'driver-version check around the request, the 12.0 floor `cudaGetDriverEntryPointByVersion` and '
              '`cuGetProcAddress_v2` imply).',
         why='A release number binds whatever ABI is newest at it: right by coincidence, and it raises the driver floor to'
             ' that release, so the code refuses drivers that have the very ABI it needs.',
         fix=fixes.pin,
         fix_safety="**Safe**: the pin becomes the ABI version the pointer's type names, or (untyped) the ABI the old pin binds: "
                    'the same ABI on every driver where it resolved before, with a lower floor.'),
    Rule("CE011", "export-abi-mismatch", "dlsym/GetProcAddress of an export whose ABI is not the pointer's type",
         export_abi_mismatch,
         bad='PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress");',
         good='PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");',
         severity="error",
         what="`dlsym`/`GetProcAddress` (or a wrapper of them) of an exported name whose ABI is not the pointer's type (the"
              " catalog knows each export's ABI), or a pointer typed with `decltype(cuX)` that another toolkit's `cuda.h` makes "
              "another ABI's type.",
         why='An export is one fixed ABI: `cuMemAlloc` is the 2000 ABI with 32-bit sizes, `cuMemAlloc_v2` the 3020 one. '
             "Taken into another ABI's type, every call through the pointer passes the wrong arguments.",
         fix=fixes.export_name,
         fix_safety='**Safe**: in `(PFN_cuX_vN)dlsym(h, "name")` the name becomes the export of the ABI the typedef names '
                    '(`"cuMemAlloc"` becomes `"cuMemAlloc_v2"` for a `PFN_cuMemAlloc_v3020`).'),
    Rule("CE012", "store-through-function-value", "a lookup's result stored through a function pointer's value",
         store_through_function_value,
         bad='PFN_cuInit_v2000 p;\n*(void **)(*p) = dlsym(lib, "cuInit");',
         good='PFN_cuInit_v2000 p;\n*(void **)&p = dlsym(lib, "cuInit");',
         severity="error",
         what="A store through a function pointer's *value* made an object pointer: `*(void **)(*fp) = v` (`*fp` is the "
              "function, which converts back to fp's value) or `*(void **)fp = v`, where `*(void **)&fp = v` was meant.",
         why="The bytes go into the code of whatever function fp points to (nothing, when fp is not set yet), and fp "
             "itself is never set: the call through it that follows is undefined behaviour. The linter also judges "
             "the value as if it had been stored in fp (CE011 when its ABI is not fp's type).",
         fix_safety="No fix: take the pointer's address (`*(void **)&fp`) by hand."),
)
RULE_CODES = tuple(r.code for r in RULES)
_BY_CODE = {r.code: r for r in RULES}


def by_code(code: str) -> Rule | None:
    """The rule of a code (`CE001`, any case); None for a code no rule has."""
    return _BY_CODE.get(code.strip().upper())


def candidate(at: At) -> Fix | None:
    """The fix its rule offers for the finding `at.code` at (line, col), if its repair is mechanical; None
    otherwise (also when anything about the text is not as expected: a fix is an offer, never a reason for a run
    to fail). Every fix is verified before it is promised or applied ([apply][cuentry.lint.apply])."""
    rule = _BY_CODE.get(at.code)
    if rule is None or rule.fix is None:
        return None
    try:
        return rule.fix(at)
    except (ValueError, LookupError, TypeError, AttributeError, RecursionError):
        return None


TABLE_ROWS = 3
"""Requests of at least this many symbols at one place are a table's rows (an X-macro expanded there, a
table included there): their findings are one finding per cause."""
_PIN_CODES = ("CE001", "CE002", "CE009", "CE010")   # about the version asked at: reported where it is written
_VERSION_CODES = ("CE002", "CE009", "CE010", "CE004")   # one cause, the version asked at (in this order of weight)
_SEVERITY = {"error": 0, "warning": 1, "note": 2}


def _hit(raw: RawHit, rule: Rule) -> Hit:
    """A check's hit as a `Hit` with its severity (its own, else the rule's default)."""
    if not isinstance(raw, Hit):
        raw = Hit(raw[0], raw[1], raw[2], raw[3] if len(raw) == 4 else "")
    return raw if raw.severity else replace(raw, severity=rule.severity)


def run(unit: Unit, cat: Catalog | None = None) -> Iterator[tuple[Rule, Hit]]:
    """Every rule's hits on a file, each with its severity (the hit's own, or the rule's default); the hits of a
    table's rows (see `TABLE_ROWS`) made one finding per cause."""
    cat = catalog() if cat is None else cat
    at: dict[tuple[int, int], list[tuple[Rule, Hit]]] = {}
    for rule in RULES:
        for raw in rule.check(unit, cat):
            hit = _hit(raw, rule)
            if hit.version_line and rule.code in _PIN_CODES:   # the version is written there, for every row
                hit = replace(hit, line=hit.version_line, col=1)
            at.setdefault((hit.line, hit.col), []).append((rule, hit))
    for (line, col), here in at.items():
        if len({h.symbol for _, h in here} - {""}) < TABLE_ROWS:
            yield from _notes_once(here, line, col)
            continue
        causes: dict[str, list[tuple[Rule, Hit]]] = {}
        for rule, h in here:
            causes.setdefault("version" if rule.code in _VERSION_CODES else rule.code, []).append((rule, h))
        for group in causes.values():
            yield _one_finding(group, line, col) if len(group) > 1 else group[0]


def _notes_once(here: list[tuple[Rule, Hit]], line: int, col: int) -> Iterator[tuple[Rule, Hit]]:
    """The hits at one place, the notes of one rule there one finding (a macro's rows with one cause)."""
    notes: dict[str, list[tuple[Rule, Hit]]] = {}
    for rule, h in here:
        if h.severity == "note":
            notes.setdefault(rule.code, []).append((rule, h))
        else:
            yield rule, h
    for group in notes.values():
        yield _one_finding(group, line, col) if len({h.symbol for _, h in group}) > 1 else group[0]


def _one_finding(group: list[tuple[Rule, Hit]], line: int, col: int) -> tuple[Rule, Hit]:
    """A table's rows with one cause as one finding: the entries whose consequence is an error (a wrong ABI bound,
    a lookup that never resolves) each said in full, the others named, as notes."""
    order = [*_VERSION_CODES, *RULE_CODES]
    group = sorted(group, key=lambda g: (_SEVERITY.get(g[1].severity, 3), order.index(g[0].code)))
    rule, first = group[0]
    errors = [h for _, h in group if h.severity == "error"]
    wrong = {h.symbol for h in errors} - {""}
    rest = [h for _, h in group if h.severity != "error" and h.symbol not in wrong]
    names = sorted({h.symbol for h in rest} - {""})
    n = len({h.symbol for _, h in group} - {""})
    head = f"one cause for {n} entries of the table here: "
    config = first.config if all(h.config == first.config for _, h in group) else ""
    if errors:
        more = (f"; the other {len(names)} entries ({_listed(names)}) are notes: they bind the ABI their type has "
                f"(e.g. {rest[0].message})") if rest else ""
        text = head + f"{len(errors)} bind the wrong ABI or never resolve: " + "; ".join(h.message for h in errors)
        return rule, Hit(line, col, text + more, "error", "", config, errors[0].hint)
    return rule, Hit(line, col, head + f"{_listed(names)}: e.g. {first.message}", first.severity, "", config,
                     first.hint)


ROW_CODES = {"error": ("CE002", "CE003", "CE004", "CE007", "CE009", "CE010", "CE011"),
             "warning": ("CE002", "CE003", "CE007", "CE009"), "note": ("CE004",)}
"""What a table's row written in another file is told at that row, by severity: every error of its symbol, version,
type and stream mode; the warnings that a wrong ABI or stream mode is bound; a table of hand-written types as one
note at its first row. A release pin's floor and how a type is spelled stay in the cause at the expansion (as do the
API, the status handling and the flags' source: the loader's)."""


def rows_elsewhere(unit: Unit) -> dict[str, Unit]:
    """The requests of `unit` that are rows of a table written in another file (see `Row`), as facts of that file
    placed at the rows, each saying which table and expansion it is."""
    out: dict[str, Unit] = {}
    for q in unit.queries:
        if q.row is not None:
            u = out.setdefault(q.row.path, Unit(q.row.path, unit.lang, engine=unit.engine, headers=unit.headers,
                                                floor=unit.floor))
            u.queries.append(replace(q, line=q.row.line, col=q.row.col, symbol_line=0, symbol_col=0, row=None,
                                     where=q.where + q.row.how, macro_lines=(), target_decl=None))
    for e in unit.exports:
        if e.row is not None:
            u = out.setdefault(e.row.path, Unit(e.row.path, unit.lang, engine=unit.engine, headers=unit.headers,
                                                floor=unit.floor))
            u.exports.append(replace(e, line=e.row.line, col=e.row.col, row=None, where=e.where + e.row.how))
    return out


def run_rows(unit: Unit, cat: Catalog | None = None) -> Iterator[tuple[Rule, Hit]]:
    """The findings at the rows of a table written in this file but expanded elsewhere (`rows_elsewhere`): those
    `ROW_CODES` lets through, each row's errors and warnings at the row, each rule's notes one finding at its first
    row."""
    notes: dict[str, list[tuple[Rule, Hit]]] = {}
    for rule, hit in run(unit, cat):
        if rule.code not in ROW_CODES.get(hit.severity, ()):
            continue
        if hit.severity != "note":
            yield rule, hit
        else:
            notes.setdefault(rule.code, []).append((rule, hit))
    for group in notes.values():
        group.sort(key=lambda g: (g[1].line, g[1].col))
        first = group[0][1]
        yield _one_finding(group, first.line, first.col) if len({h.message for _, h in group}) > 1 else group[0]


def _listed(names: list[str], most: int = 12) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
