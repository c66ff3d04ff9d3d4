"""Differential property test: identical arguments to both backends, over every signature shape of the catalog.

Each catalog signature shape is bound, on the compiled and the pure backend, to a
C function of a recorder library built here with cc: it stores the values it
received and returns 0. Hypothesis sends the same arguments (valid and hostile)
to both; the outcomes must be identical: the same values reaching C, or the same
error type.
"""

from __future__ import annotations

import array
import ctypes
import os
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import address, out
from cuentry.calls import bind, choice, compiled, contract
from cuentry.calls.shapes import SLOTS, catalog_shapes
from cuentry.catalog import catalog

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


def _recorder_source(shapes: list[tuple[str, ...]]) -> str:
    lines = ["#include <stdint.h>", "#include <stddef.h>", "#include <wchar.h>",
             "unsigned long long rec_u[40]; double rec_f[40]; int rec_n;"]
    for i, shape in enumerate(shapes):
        params = ", ".join(f"{t} a{j}" for j, t in enumerate(shape)) or "void"
        body = []
        for j, t in enumerate(shape):
            slot = SLOTS[t]
            if slot == "f":
                body.append(f"rec_f[{j}] = (double)a{j};")
            elif slot == "p":
                body.append(f"rec_u[{j}] = (unsigned long long)(uintptr_t)a{j};")
            elif slot == "s":
                body.append(f"rec_u[{j}] = (unsigned long long)(long long)a{j};")
            else:
                body.append(f"rec_u[{j}] = (unsigned long long)a{j};")
        lines.append(f"int rec_{i}({params}) {{ rec_n = {len(shape)}; {' '.join(body)} return 0; }}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def recorder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[tuple[str, ...], int]]:
    shapes = [s for s in catalog_shapes() if len(s) <= 32]
    root = tmp_path_factory.mktemp("recorder")
    src = root / "rec.c"
    src.write_text(_recorder_source(shapes))
    lib = root / "librec.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-w", str(src), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib)), {s: i for i, s in enumerate(shapes)}


def _representatives() -> list[Any]:
    """One ABI per distinct list of parameter kinds (what the conversion depends on)."""
    hints = contract.Hints(catalog().ffi_hints)
    seen: dict[Any, Any] = {}
    for abi in catalog():
        c = contract.Contract(abi, hints, lambda tag: None)
        key = tuple((s.kind, s.ctype, s.elem, s.companion is not None, s.extent, s.stream, s.tag) for s in c.specs)
        if any(s.kind == contract.STRUCT for s in c.specs):
            continue  # a struct by value: the pure backend serves both (no compiled case exists)
        seen.setdefault(key, abi)
    return list(seen.values())


REPS = _representatives()
OUTCOMES: dict[str, int] = {}


class Stream:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def __cuda_stream__(self) -> Any:
        return self.answer


_EDGES = [0, 1, -1, 127, 128, 255, 256, 2**15, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 16, 2**63 - 1,
          2**63, 2**64 - 1, 2**64, 2**64 + 8, -(2**31), -(2**31) - 1, -(2**63), -(2**63) - 1]
_OUT_TYPES = ["int", "unsigned int", "short", "char", "CUcontext", "CUdeviceptr", "double", "float", "size_t",
              "CUuuid", "CUmemLocation", "unsigned long long", "CUstream", "void *"]


def _hostile() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(_EDGES), st.integers(-(2**70), 2**70),
        st.sampled_from([1.9, 0.0, -1.5, 1e39, float("inf"), float("nan"), True, False, None, "abc", "a\x00b", "",
                         b"abcd", b""]),
        st.builds(bytearray, st.integers(0, 300)),
        st.sampled_from(["i", "q", "Q", "I", "d", "f", "B", "h"]).map(lambda t: array.array(t, [0] * 4)),
        st.just(memoryview(bytearray(64)).toreadonly()),
        st.builds(out, st.sampled_from(_OUT_TYPES), st.integers(1, 300)),
        st.builds(address, st.integers(0, 2**64 - 1)),
        st.sampled_from([Stream((0, 7)), Stream((1, 7)), Stream((0, "7")), Stream((0, 2**64)), Stream(None)]),
        st.just(object()),
    )


def _valid(s: contract.ParamSpec) -> st.SearchStrategy[Any]:
    k = s.kind
    if k == contract.INT:
        return st.integers(s.low, s.high)
    if k in (contract.HANDLE, contract.DEVPTR):
        return st.integers(0, 2**64 - 1)
    if k == contract.FLOAT:
        return st.floats(width=32 if s.ctype == "float" else 64)
    if k == contract.CSTR:
        return st.binary(max_size=16)
    if k in (contract.INBUF, contract.OUTBUF):
        return st.builds(bytearray, st.integers(0, 64))
    return st.none()


def _draw_args(data: st.DataObject, c: contract.Contract) -> list[Any]:
    """Valid values, then none, one or every parameter replaced by a hostile one."""
    args = [data.draw(_valid(s), label=s.name) for s in c.specs]
    mode = data.draw(st.sampled_from(["valid", "one", "one", "all"]), label="mode")
    if args and mode == "one":
        j = data.draw(st.integers(0, len(args) - 1), label="which")
        args[j] = data.draw(_hostile(), label=f"hostile {c.specs[j].name}")
    elif mode == "all":
        args = [data.draw(_hostile(), label=f"hostile {s.name}") for s in c.specs]
    return args


def _outcome(fn: Any, lib: Any, args: list[Any], kw: dict[str, Any]) -> Any:
    lib.rec_n = -1
    try:
        rc = fn(*args, **kw)
    except Exception as exc:  # noqa: BLE001 - the outcome compared
        return ("error", type(exc).__name__)
    n = ctypes.c_int.in_dll(lib, "rec_n").value
    u = (ctypes.c_ulonglong * 40).in_dll(lib, "rec_u")
    f = (ctypes.c_double * 40).in_dll(lib, "rec_f")
    values = []
    for j, a in enumerate(args + list(kw.values())):
        if isinstance(a, str):
            values.append("str")  # a temporary encoding: its address differs call to call
        else:
            values.append((u[j], repr(f[j])))
    return ("ok", rc, n, tuple(values[:n]))


_BOUND: dict[tuple[str, str], Any] = {}


def _bound(rec: Any, abi: Any, backend: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    got = _BOUND.get((abi.pfn, backend))
    if got is not None:
        return got
    lib, index = rec
    hints = contract.Hints(catalog().ffi_hints)
    shape = tuple(s.ctype for s in contract.Contract(abi, hints, lambda tag: None).specs)
    addr = ctypes.cast(getattr(lib, f"rec_{index[shape]}"), ctypes.c_void_p).value
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice(backend))
    got = _BOUND[(abi.pfn, backend)] = bind(abi, addr)
    assert got.backend == ("pure" if backend == "pure" else "compiled")
    return got


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_both_backends_agree(recorder: Any, monkeypatch: pytest.MonkeyPatch, data: st.DataObject) -> None:
    try:
        compiled.extension()
    except ImportError:
        pytest.skip("the compiled extension is not installed")
    abi = data.draw(st.sampled_from(REPS), label="abi")
    pure_fn = _bound(recorder, abi, "pure", monkeypatch)
    fast_fn = _bound(recorder, abi, "auto", monkeypatch)
    c = contract.Contract(abi, contract.Hints(catalog().ffi_hints), lambda tag: None)
    args = _draw_args(data, c)
    kw: dict[str, Any] = {}
    if args and data.draw(st.booleans(), label="by keyword"):
        cut = data.draw(st.integers(0, len(args) - 1), label="cut")
        kw = {s.name: a for s, a in zip(c.specs[cut:], args[cut:])}
        args = args[:cut]
    lib = recorder[0]
    want = _outcome(pure_fn, lib, args, kw)
    got = _outcome(fast_fn, lib, args, kw)
    assert got == want, (abi.pfn, args, kw)
    key = want[0] if want[0] == "ok" else want[1]
    OUTCOMES[key] = OUTCOMES.get(key, 0) + 1
    assert _outcome(fast_fn.checked, lib, args, kw)[:1] == _outcome(pure_fn.checked, lib, args, kw)[:1]


_ELEM_TYPES = {"i": "int", "I": "unsigned int", "h": "short", "H": "unsigned short", "q": "long long",
               "Q": "unsigned long long", "P": "void *", "f": "float", "d": "double", "c": "char", "b": "int8_t",
               "B": "uint8_t"}


def _default(s: contract.ParamSpec) -> Any:
    """A valid value for each kind (other parameters while one is swept)."""
    k = s.kind
    if k in (contract.INT, contract.HANDLE, contract.DEVPTR):
        return max(0, s.low)
    if k == contract.FLOAT:
        return 0.0
    if k == contract.CSTR:
        return b"x"
    if k in (contract.INBUF, contract.OUTBUF):
        return bytearray(64)
    if k == contract.ARRAY:
        return out(_ELEM_TYPES[s.elem], 64)
    if k == contract.STRUCTPTR:
        return out(f"struct {s.tag}")
    return None


_SWEEP = [*_EDGES, 1.9, float("inf"), True, None, "abc", "a\x00b", b"abcd", bytearray(3), bytearray(64),
          memoryview(bytearray(64)).toreadonly(), array.array("i", [0] * 4), array.array("Q", [0] * 4),
          array.array("d", [0] * 4), address(0), address(2**64 - 1), Stream((0, 7)), Stream((1, 7)),
          Stream((0, "7")), object(), *[out(t, 2) for t in _OUT_TYPES]]


def test_both_backends_agree_on_each_parameter_swept(recorder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every parameter of every shape, through a fixed list of hostile and valid values, others valid."""
    try:
        compiled.extension()
    except ImportError:
        pytest.skip("the compiled extension is not installed")
    lib = recorder[0]
    hints = contract.Hints(catalog().ffi_hints)
    n = 0
    for abi in REPS:
        c = contract.Contract(abi, hints, lambda tag: None)
        pure_fn = _bound(recorder, abi, "pure", monkeypatch)
        fast_fn = _bound(recorder, abi, "auto", monkeypatch)
        base = [_default(s) for s in c.specs]
        assert _outcome(fast_fn, lib, base, {})[0] == "ok", abi.pfn
        for j in range(len(base)):
            for v in _SWEEP:
                args = list(base)
                args[j] = v
                want, got = _outcome(pure_fn, lib, args, {}), _outcome(fast_fn, lib, args, {})
                assert got == want, (abi.pfn, c.specs[j].name, v)
                n += 1
    assert n > 10000


def test_the_property_saw_calls_and_refusals() -> None:
    """Runs after the property (file order): both successful calls and each kind of refusal occurred."""
    if not OUTCOMES:
        pytest.skip("the property did not run")
    assert OUTCOMES.get("ok", 0) > 20 and OUTCOMES.get("ArgumentError", 0) > 20, OUTCOMES
    assert OUTCOMES.get("ArgumentRangeError", 0) > 0, OUTCOMES


def test_every_shape_is_represented() -> None:
    hints = contract.Hints(catalog().ffi_hints)
    rep_shapes = {tuple(s.ctype for s in contract.Contract(a, hints, lambda tag: None).specs) for a in REPS}
    assert rep_shapes >= {s for s in catalog_shapes() if len(s) <= 32}
    assert len(REPS) > 100
