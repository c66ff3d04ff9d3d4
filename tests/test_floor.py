"""The driver floor (cuentry.entry.driver_floor) is where every consumer of a manifest says "resolves".

For random manifests (required and optional entries with fallback chains) and every driver release
the fake driver can pretend to be: `cuentry check` says ok, the Python table resolves, and the
generated Python module's table resolves exactly when the driver is at or above the floor that
check, Table.min_driver() and both generators report. Each consumer is a *leg* in ``LEGS``; a leg
takes (manifest path, Manifest, driver library, driver) and says whether the table resolves there.
The generated C loader's leg is added by its owner (``LEGS["c"] = ...``, same signature).
``CUENTRY_FLOOR_EXAMPLES=300`` runs more examples per leg (default 40).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import manifest as manifest_mod
from cuentry.catalog import catalog, format_version, parse_version
from cuentry.cli import main
from cuentry.driver import Driver
from cuentry.entry import Entry, driver_floor, optional, required
from cuentry.errors import TableResolutionError
from cuentry.generate import generate, generate_c, generate_python
from cuentry.manifest import Manifest
from cuentry.pytest_plugin import OLDEST, newest_known, variant_for
from cuentry.table import Table
from cuentry.testing.fakedriver import NOT_ON_LINUX

from .manifests import CHAIN

CAT = catalog()
NEWEST = newest_known()
# Every release the fake driver can pretend to be where an answer can change: each ABI version (a pin
# needs a driver at or above it), the release just below it, and every toolkit release in the catalog.
_EDGES = {v for s in CAT.symbols() for v in CAT.versions(s) if v % 10 == 0}
RELEASES = sorted(v for v in (_EDGES | {v - 10 for v in _EDGES} | {parse_version(t) for t in CAT.history}
                              | {OLDEST, NEWEST}) if OLDEST <= v <= NEWEST)


def _linux_pins(stream: str) -> list[tuple[str, int]]:
    """Pins of one mode whose ABI a Linux driver exports (a Windows-only ABI never resolves here)."""
    out = []
    for s in CAT.symbols():
        for v in CAT.versions(s):
            try:
                abi = CAT.bind(s, v, stream)  # type: ignore[arg-type]
            except Exception:
                continue
            if "linux" in abi.platforms and abi.exported not in NOT_ON_LINUX:
                out.append((s, v))
    return out


PINS = {mode: _linux_pins(mode) for mode in ("legacy", "per_thread")}
_BY_SYMBOL = {mode: {s: sorted(v for t, v in pins if t == s) for s, _ in pins} for mode, pins in PINS.items()}


@st.composite
def chains(draw: st.DrawFn, mode: str) -> list[tuple[str, int]]:
    """An entry's chain: mostly one symbol's ABIs newest first (a typical fallback), sometimes another symbol."""
    by_symbol = _BY_SYMBOL[mode]
    sym = draw(st.sampled_from(sorted(by_symbol)))
    versions = draw(st.lists(st.sampled_from(by_symbol[sym]), min_size=1, max_size=4, unique=True))
    chain = [(sym, v) for v in sorted(versions, reverse=True)]
    if draw(st.booleans()) and draw(st.booleans()):
        chain.append(draw(st.sampled_from(PINS[mode])))
    return list(dict.fromkeys(chain))


@st.composite
def manifests(draw: st.DrawFn) -> str:
    mode = draw(st.sampled_from(sorted(PINS)))
    entries = draw(st.lists(st.tuples(st.booleans(), chains(mode)), min_size=1, max_size=5))
    parts: dict[str, list[str]] = {"required": [], "optional": []}
    for i, (req, chain) in enumerate(entries):
        (sym, ver), rest = chain[0], chain[1:]
        fb = f", fallback = [{', '.join(json.dumps(f'{s}@{v}') for s, v in rest)}]" if rest else ""
        parts["required" if req else "optional"].append(f'{{ symbol = "{sym}", version = {ver}, name = "e{i}"{fb} }}')
    sep = ",\n  "
    return (f'[table]\nname = "prop"\nstream = "{mode}"\n'
            + "".join(f"{k} = [\n  {sep.join(v)},\n]\n" for k, v in parts.items() if v))


# --- the legs ------------------------------------------------------------------------------

Leg = Callable[[Path, Manifest, str, Driver], bool]


def _check_leg(path: Path, m: Manifest, lib: str, drv: Driver) -> bool:
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", str(path), "--driver", lib, "--json"], stdout=out, stderr=err)
    doc = json.loads(out.getvalue())
    assert doc["min_driver"] == m.min_driver()
    assert (code == 0) == doc["ok"], (code, doc)
    return bool(doc["ok"])


def _resolves(t: Table) -> bool:
    try:
        t.resolve()
    except TableResolutionError:
        return False
    return True


def _table_leg(path: Path, m: Manifest, lib: str, drv: Driver) -> bool:
    t = Table.from_manifest(path, source=drv)
    assert t.min_driver() == m.min_driver()
    return _resolves(t)


def _python_leg(path: Path, m: Manifest, lib: str, drv: Driver) -> bool:
    ns: dict[str, Any] = {"__name__": "prop_table"}
    exec(compile(generate_python(m), "prop_table.py", "exec"), ns)  # the generated module, as imported
    assert ns["MIN_DRIVER"] == m.min_driver()
    return _resolves(ns["table"](source=drv))


LEGS: dict[str, Leg] = {"check": _check_leg, "table": _table_leg, "python": _python_leg}


def _drivers(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Callable[[int], tuple[str, Driver]]:
    opened: dict[int, tuple[str, Driver]] = {}

    def at(version: int) -> tuple[str, Driver]:
        monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", str(version))
        if version not in opened:
            lib = fake[variant_for(version)]
            opened[version] = (lib, Driver.load(lib))
        return opened[version]

    return at


@pytest.mark.parametrize("leg", sorted(LEGS))
@settings(max_examples=int(os.environ.get("CUENTRY_FLOOR_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=manifests(), release=st.sampled_from(RELEASES))
def test_resolves_exactly_at_and_above_the_floor(leg: str, text: str, release: int, fake: dict[str, str],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prop.toml"
    path.write_text(text)
    m = manifest_mod.load(path)
    floor = m.min_driver()
    at = _drivers(fake, monkeypatch)
    below = max((r for r in RELEASES if r < floor), default=None)
    for v in {release, max(floor, OLDEST), *([below] if below else [])}:
        lib, drv = at(v)
        got = LEGS[leg](path, m, lib, drv)
        assert got == (v >= floor), (leg, v, floor, text)


# --- the floor itself ------------------------------------------------------------------------


def test_a_chain_needs_its_lowest_pin_and_optional_entries_never_raise_the_floor(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    m = manifest_mod.load(path)
    assert m.min_driver() == 3020
    assert Table.from_manifest(m).min_driver() == 3020
    assert "#define X_MIN_DRIVER 3020" in generate_c(m)
    assert "MIN_DRIVER = 3020" in generate_python(m)
    assert generate(m, "c").plan.min_driver == 3020
    # optional entries only: nothing is required, the floor is 0
    only = Table("o", [optional("cuMulticastCreate", 12010)], stream="legacy")
    assert only.min_driver() == 0


def test_driver_floor_is_the_highest_of_the_required_chains_lowest_pins() -> None:
    assert driver_floor([]) == 0
    assert driver_floor([(True, [12050, 11040, 3020])]) == 3020
    assert driver_floor([(True, [12050]), (True, [11040, 3020])]) == 12050
    assert driver_floor([(False, [13000]), (True, [4000])]) == 4000
    assert driver_floor([(False, [13000])]) == 0
    t = Table("f", [required("cuCtxCreate", 12050, fallback=optional("cuCtxCreate", 11040)),
                    optional("cuMulticastCreate", 12010)], stream="legacy")
    assert t.min_driver() == 11040 and format_version(t.min_driver()) == "11.4"


def test_check_on_an_older_driver_reports_the_floor_it_passes_at(fake: dict[str, str], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11080")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(path), "--driver", fake["v1"], "--json"], stdout=out, stderr=err) == 0
    doc = json.loads(out.getvalue())
    assert doc["ok"] is True and doc["min_driver"] == 3020 and doc["min_driver_release"] == "3.2"
    ctx = next(e for e in doc["entries"] if e["symbol"] == "cuCtxCreate")
    assert ctx["status"] == "fallback" and ctx["abi"] == "PFN_cuCtxCreate_v11040"


def test_generated_python_declares_a_required_entry_with_a_chain(tmp_path: Path) -> None:
    m = manifest_mod.loads(CHAIN, "x.toml")
    text = generate_python(m)
    assert "required('cuCtxCreate', 12050, fallback=optional('cuCtxCreate', 11040, " \
           "fallback=optional('cuCtxCreate', 3020)))" in text
    ns: dict[str, Any] = {"__name__": "x_table"}
    exec(compile(text, "x_table.py", "exec"), ns)  # raised TypeError before required() took fallback
    entry = ns["__getattr__"]("x").entries[0]  # the module makes its table on first use
    assert isinstance(entry, Entry) and [e.key for e in entry.chain] == \
        ["cuCtxCreate@12050", "cuCtxCreate@11040", "cuCtxCreate@3020"]


def test_releases_span_what_the_fake_driver_pretends() -> None:
    assert RELEASES[0] == OLDEST and RELEASES[-1] == NEWEST
    assert {3020, 11040, 12050} <= set(RELEASES) and all(v % 10 == 0 for v in RELEASES)
