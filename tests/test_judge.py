"""One verdict for "is this request right?", read in every vocabulary.

Each row is one request and the fault kind it must give; the test checks the
kind's severity and its word in each vocabulary: lint's rule (CE), the trace's
finding (CT, through ``audit.classify``) and the diagnostic's classification
(through ``Catalog.bind``'s refusal, or ``diagnostics.classify`` of the driver's
answer for driver-side kinds). A kind added to ``names.FAULTS`` without a row
here fails ``test_every_kind_has_a_row``.
"""

from __future__ import annotations

import pytest

from cuentry import audit, diagnostics
from cuentry.catalog import catalog
from cuentry.errors import CatalogError
from cuentry.names import CUDA_ERROR_INVALID_VALUE, FAULTS, FLAG_DEFAULT, FLAG_LEGACY, FLAG_PER_THREAD

# (kind, symbol, version, flags, keyword arguments of judge, the ABI it binds or None)
ROWS = [
    ("unknown_symbol", "cuNoSuchThing", 3020, FLAG_LEGACY, {}, None),
    ("misspelled", "cumemalloc", 3020, FLAG_LEGACY, {}, None),
    ("suffixed_name", "cuMemAlloc_v2", 3020, FLAG_LEGACY, {}, None),
    ("negative_version", "cuMemAlloc", -1, FLAG_LEGACY, {}, "PFN_cuMemAlloc_v3020"),
    ("below_first_abi", "cuMemAlloc", 0, FLAG_LEGACY, {}, None),
    ("no_abi_of_mode", "cuMemcpy", 4000, FLAG_PER_THREAD, {"variant": "ptds"}, None),
    ("mixed_stream_modes", "cuStreamBeginCapture", 10010, FLAG_LEGACY, {"variant": "ptsz"},
     "PFN_cuStreamBeginCapture_v10010"),
    ("release_number", "cuMemAlloc", 12000, FLAG_LEGACY, {}, "PFN_cuMemAlloc_v3020"),
    ("between_abis", "cuMemAlloc", 2500, FLAG_LEGACY, {}, "PFN_cuMemAlloc_v2000"),
    ("above_newest_abi", "cuMemAlloc", 4000, FLAG_LEGACY, {}, "PFN_cuMemAlloc_v3020"),
    ("above_every_driver", "cuMemAlloc", 110400, FLAG_LEGACY, {}, None),   # a typo of 11040: fails on every driver
    ("driver_too_old", "cuMulticastCreate", 12010, FLAG_LEGACY, {"driver_version": 11080},
     "PFN_cuMulticastCreate_v12010"),
    ("above_driver", "cuCtxCreate", 12050, FLAG_LEGACY, {"driver_version": 12040}, "PFN_cuCtxCreate_v12050"),
    ("default_flags", "cuMemcpy", 7000, FLAG_DEFAULT, {}, "PFN_cuMemcpy_v4000"),
    ("bad_flags", "cuMemAlloc", 3020, 4, {}, "PFN_cuMemAlloc_v3020"),
    ("deprecated_api", "cuMemAlloc", None, None, {"api": "cudaGetDriverEntryPoint"}, "PFN_cuMemAlloc_v3020"),
    ("old_export", "cuMemAlloc", None, None, {"api": "dlsym"}, "PFN_cuMemAlloc_v2000"),
]
BIND_REFUSES = {"unknown_symbol", "misspelled", "suffixed_name", "negative_version", "below_first_abi",
                "no_abi_of_mode", "mixed_stream_modes", "release_number", "between_abis", "above_newest_abi",
                "above_every_driver"}


def test_every_kind_has_a_row() -> None:
    assert sorted(r[0] for r in ROWS) == sorted(FAULTS)


@pytest.mark.parametrize(("kind", "symbol", "version", "flags", "kw", "binds"), ROWS, ids=[r[0] for r in ROWS])
def test_verdict_in_every_vocabulary(kind: str, symbol: str, version: int | None, flags: int | None,
                                     kw: dict[str, object], binds: str | None) -> None:
    cat = catalog()
    verdict = cat.judge(symbol, version, flags, **kw)  # type: ignore[arg-type]
    fault = verdict.fault(kind)
    assert fault is not None, verdict.faults
    severity, ce, ct, classification = FAULTS[kind]
    assert fault.severity == severity
    assert (fault.lint_code, fault.trace_code, fault.classification) == (ce, ct, classification)
    assert fault.message and fault.fix  # every fault names what is wrong and the fix
    assert (verdict.abi.pfn if verdict.abi is not None else None) == binds
    assert verdict.resolves == (binds is not None and severity != "error" and
                                not any(f.severity == "error" for f in verdict.faults))

    api = str(kw.get("api", "cuGetProcAddress_v2"))
    if ct is not None and kind != "mixed_stream_modes":  # CT006 is judged per library, not per request
        found = audit.classify(symbol, version, flags, api=api, driver_version=kw.get("driver_version"))  # type: ignore[arg-type]
        assert ct in [f.code for f in found]

    if kind in BIND_REFUSES:
        stream = "per_thread" if flags == FLAG_PER_THREAD else "legacy"
        with pytest.raises(CatalogError) as exc:
            cat.bind(symbol, version, stream, kw.get("variant"))  # type: ignore[arg-type]
        assert exc.value.classification == classification
    elif classification is not None and kind in ("driver_too_old", "above_driver"):
        got, hint = diagnostics.classify(symbol=symbol, version=version or 0, stream="legacy",
                                         result=CUDA_ERROR_INVALID_VALUE, query=None, address=0,
                                         driver_version=kw["driver_version"])  # type: ignore[arg-type]
        assert got.value == classification and hint


def test_a_right_request_has_no_fault() -> None:
    cat = catalog()
    for symbol, version, flags in [("cuMemAlloc", 3020, FLAG_LEGACY), ("cuMemcpy", 7000, FLAG_PER_THREAD),
                                   ("cuStreamBeginCapture", 10010, FLAG_PER_THREAD)]:
        verdict = cat.judge(symbol, version, flags)
        assert verdict.ok and verdict.resolves and verdict.needs == version
    assert cat.judge("cuMemAlloc_v2", None, None, api="dlsym").ok  # the export of the newest ABI, named on purpose


def test_floor_decides_the_severity_of_a_pin_that_raises_it() -> None:
    cat = catalog()
    assert cat.judge("cuMemAlloc", 12000, FLAG_LEGACY).fault("release_number").severity == "warning"  # type: ignore[union-attr]
    assert cat.judge("cuMemAlloc", 12000, FLAG_LEGACY, floor=12000).fault("release_number").severity == "note"  # type: ignore[union-attr]
    raised = cat.judge("cuMemAlloc", 13000, FLAG_LEGACY, floor=12000).fault("release_number")
    assert raised is not None and raised.severity == "warning" and "raises the driver floor" in raised.message
    assert cat.judge("cuMemAlloc", 4000, FLAG_LEGACY, floor=3020).fault("above_newest_abi").severity == "warning"  # type: ignore[union-attr]


def test_runtime_requests_may_use_default_flags() -> None:
    assert catalog().judge("cuMemcpy", 7000, FLAG_DEFAULT, runtime=True).ok


def test_the_too_old_hint_names_the_driver_the_pin_needs() -> None:
    got, hint = diagnostics.classify(symbol="cuCtxCreate", version=12050, stream="legacy",
                                     result=CUDA_ERROR_INVALID_VALUE, query=None, address=0, driver_version=1000)
    assert got.value == "driver_too_old" and "needs driver >= 12.5 (12050)" in hint
    assert "needs driver >= 3.2 (3020)" in diagnostics.driver_too_old_hint("cuCtxCreate", 3020, 2000, 3020)
