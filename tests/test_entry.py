"""One bound entry: declarations refused where they are written, each pin bound once, and the CLI's
reports that come from it (check's hints, list --groups)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cuentry
from cuentry import manifest
from cuentry.catalog import Catalog, catalog
from cuentry.entry import FALLBACK_CHAIN_LIMIT, Entry, optional, required
from cuentry.errors import TableDeclarationError
from cuentry.table import Table

from .clihelp import run as _run
from .manifests import CHAIN

# --- declarations refused where they are written (issue 25) ------------------------------------

@pytest.mark.parametrize("make", [
    lambda: required("cuMemAlloc", 3020, name=5),              # type: ignore[arg-type]
    lambda: required("cuMemAlloc", 3020, name="not an ident"),
    lambda: Table("t", [Entry("cuMemAlloc", 3020, name=5)], stream="legacy"),  # type: ignore[arg-type]
    lambda: Table("t", [required("cuMemAlloc", 3020)], stream="legacy", source=5),  # type: ignore[arg-type]
    lambda: Table("t", [required("cuMemAlloc", 3020)], stream="legacy", source="libcuda.so.1"),  # type: ignore[arg-type]
    lambda: Table("t", None, stream="legacy"),                 # type: ignore[arg-type]
    lambda: Table("t", 5, stream="legacy"),                    # type: ignore[arg-type]
    lambda: Table("t", "cuMemAlloc", stream="legacy"),         # type: ignore[arg-type]
    lambda: Table(5, [required("cuMemAlloc", 3020)], stream="legacy"),  # type: ignore[arg-type]
    lambda: Table("", [required("cuMemAlloc", 3020)], stream="legacy"),
    lambda: Table("t", [required("cuMemAlloc", 3020)], stream="legacy", cat=5),  # type: ignore[arg-type]
    lambda: Table("t", [required("cuMemAlloc", 3020)], stream=None),  # type: ignore[arg-type]
    lambda: Table("t", [Entry("cuMemAlloc", 3020, False, 5)], stream="legacy"),  # type: ignore[arg-type]
    lambda: Table("t", [Entry("cuMemAlloc", 3020, True, print)], stream="legacy"),
    lambda: Table("t", [Entry("cuMemAlloc", 3020, False, Entry("cuMemAlloc", 3020, False, "x"))],  # type: ignore[arg-type]
                  stream="legacy"),
    lambda: Table("t", [Entry(5, 3020)], stream="legacy"),     # type: ignore[arg-type]
    lambda: Table("t", [Entry("cuMemAlloc", "3020")], stream="legacy"),  # type: ignore[arg-type]
])
def test_malformed_declarations_are_declaration_errors(make: Any) -> None:
    with pytest.raises(TableDeclarationError) as ei:
        make()
    assert ei.value.hint


@pytest.mark.parametrize("version", ["3020", 3020.0, True, [3020]])
def test_a_version_that_is_not_an_int_says_so(version: Any) -> None:
    with pytest.raises(TableDeclarationError, match="version must be an int") as ei:
        required("cuMemAlloc", version)
    assert "no ABI version" not in ei.value.message and "3020" in (ei.value.hint or "")


def test_int_subclasses_are_not_versions() -> None:
    class Lying(int):
        pass

    with pytest.raises(TableDeclarationError, match="version must be an int"):
        optional("cuMemAlloc", Lying(3020))


def test_table_declaration_error_is_exported() -> None:
    assert cuentry.TableDeclarationError is TableDeclarationError
    assert "TableDeclarationError" in cuentry.__all__ and "ManifestError" in cuentry.__all__
    assert issubclass(cuentry.TableDeclarationError, cuentry.CuentryError)


def test_required_takes_a_fallback_chain_of_entries_only() -> None:
    e = required("cuCtxCreate", 12050, fallback=[optional("cuCtxCreate", 11040), optional("cuCtxCreate", 3020)])
    assert [x.key for x in e.chain] == ["cuCtxCreate@12050", "cuCtxCreate@11040", "cuCtxCreate@3020"]
    nested = required("cuCtxCreate", 12050, fallback=optional("cuCtxCreate", 11040, fallback=optional("cuCtxCreate", 3020)))
    assert nested == e
    with pytest.raises(TableDeclarationError, match="falls back only to other entries"):
        required("cuMemAlloc", 3020, fallback=lambda *a: 0)  # type: ignore[arg-type]
    with pytest.raises(TableDeclarationError, match="non-empty list of entries"):
        optional("cuMemAlloc", 3020, fallback=[])
    with pytest.raises(TableDeclarationError, match="non-empty list of entries"):
        optional("cuMemAlloc", 3020, fallback=["cuMemAlloc@3020"])  # type: ignore[list-item]
    with pytest.raises(TableDeclarationError, match="flat list"):
        optional("cuCtxCreate", 12050, fallback=[optional("cuCtxCreate", 11040, fallback=optional("cuCtxCreate", 3020))])
    with pytest.raises(TableDeclarationError, match="limit"):
        optional("cuMemAlloc", 3020, fallback=[optional("cuMemAlloc", 3020)] * (FALLBACK_CHAIN_LIMIT + 1))
    with pytest.raises(TableDeclarationError, match="fallback must be"):
        optional("cuMemAlloc", 3020, fallback=5)  # type: ignore[arg-type]


def test_a_too_long_chain_built_by_hand_is_refused_by_the_table() -> None:
    e: Entry | None = None
    for _ in range(FALLBACK_CHAIN_LIMIT + 2):
        e = Entry("cuMemAlloc", 3020, False, e)
    assert e is not None
    with pytest.raises(TableDeclarationError, match="limit"):
        Table("t", [e], stream="legacy")


# --- each pin bound once (issue 23) -------------------------------------------------------------

@pytest.fixture
def binds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    calls: list[tuple[str, int]] = []
    real = Catalog.bind

    def counting(self: Catalog, symbol: str, version: int, *a: Any, **kw: Any) -> Any:
        calls.append((symbol, version))
        return real(self, symbol, version, *a, **kw)

    monkeypatch.setattr(Catalog, "bind", counting)
    monkeypatch.setitem(catalog()._facts, "entry.bound_pins", {})  # forget answers other tests got
    return calls


PINS = {("cuCtxCreate", 12050), ("cuCtxCreate", 11040), ("cuCtxCreate", 3020), ("cuMemAlloc", 3020),
        ("cuMulticastCreate", 12010)}


def _pins(calls: list[tuple[str, int]]) -> list[tuple[str, int]]:
    return sorted(c for c in calls if c in PINS)


def test_the_manifest_binds_each_pin_once_and_a_table_of_it_binds_none(binds: list[tuple[str, int]]) -> None:
    m = manifest.loads(CHAIN, "x.toml")
    assert _pins(binds) == sorted(PINS)
    binds.clear()
    t = Table.from_manifest(m)
    assert _pins(binds) == [] and t.entries == m.entries
    assert all(x.abi is not None for e in t.entries for x in e.chain)
    assert m.abi(m.entries[0]).pfn == "PFN_cuCtxCreate_v12050" and _pins(binds) == []


def test_a_table_of_another_mode_binds_its_own(binds: list[tuple[str, int]]) -> None:
    m = manifest.loads(CHAIN, "x.toml")
    binds.clear()
    t = Table("pt", m.entries, stream="per_thread")
    assert _pins(binds) == sorted(PINS) and all(x.stream == "per_thread" for e in t.entries for x in e.chain)


def test_the_catalogs_answers_are_asked_once_per_process(binds: list[tuple[str, int]]) -> None:
    Table("a", [required("cuMemAlloc", 3020)], stream="legacy")
    Table("b", [required("cuMemAlloc", 3020)], stream="legacy")
    manifest.loads(CHAIN, "x.toml")
    assert binds.count(("cuMemAlloc", 3020)) == 1
    with pytest.raises(TableDeclarationError):
        Table("c", [required("cuMemAlloc", 13000)], stream="legacy")
    with pytest.raises(TableDeclarationError):  # a refusal is asked again (and refused again)
        Table("c", [required("cuMemAlloc", 13000)], stream="legacy")
    assert binds.count(("cuMemAlloc", 13000)) == 2
    with pytest.raises(TableDeclarationError, match="not bound"):
        required("cuMemAlloc", 3020).bound_abi  # noqa: B018


def test_check_binds_each_pin_once(binds: list[tuple[str, int]], fake: dict[str, str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "12040")
    code, out, _ = _run("check", str(path), "--driver", fake["full"], "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    assert _pins(binds) == sorted(PINS)


@pytest.mark.parametrize("language", ["c", "python"])
def test_generate_binds_each_pin_once_and_reports_from_its_plan(binds: list[tuple[str, int]], tmp_path: Path,
                                                                language: str) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    out_file = tmp_path / ("x.h" if language == "c" else "x_table.py")
    code, out, _ = _run("generate", language, str(path), "-o", str(out_file), "--json")
    assert code == 0
    doc = json.loads(out)
    assert _pins(binds) == sorted(PINS)
    assert doc["min_driver"] == 3020 and [p["version"] for p in doc["entries"][0]["pins"]] == [12050, 11040, 3020]
    assert doc["bytes"] == len(out_file.read_bytes())


@pytest.mark.parametrize("language", ["c", "python"])
def test_the_generator_plans_once_and_returns_that_plan(language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuentry.generate import generate, model

    planned: list[object] = []
    real = model._plan

    def counting(m: Any) -> Any:
        planned.append(m)
        return real(m)

    monkeypatch.setattr(model, "_plan", counting)
    m = manifest.loads(CHAIN, "x.toml")
    got = generate(m, language)
    assert len(planned) == 1 and got.plan is model.plan(m) and len(planned) == 1
    assert got.plan.min_driver == 3020 and [s.attr for s in got.plan.slots] == ["cuCtxCreate", "cuMemAlloc",
                                                                                "cuMulticastCreate"]
    assert got.plan.entries == m.entries  # the manifest's bound entries themselves
    with pytest.raises(ValueError, match="unknown language"):
        generate(m, "rust")


# --- what check prints (issue 25) --------------------------------------------------------------

def test_check_hints_fit_80_columns_and_never_advise_a_fallback_the_entry_has(
        fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11080")
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run("check", str(path), "--driver", fake["v1"])
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: table 'x'")  # the path stays whole: it can be copied
    assert all(len(line) <= 80 for line in lines[1:]), [line for line in lines if len(line) > 80]
    ctx = [line for line in lines if "cuCtxCreate@12050" in line]
    assert len(ctx) == 1 and "via cuCtxCreate@11040" in ctx[0]
    assert "fall back" not in out.split("cuMulticastCreate")[0]  # the chained entry gets no fallback advice
    assert "minimum driver for the required entries: 3.2 (3020)" in out and lines[-1] == "PASS"
    rows = [line for line in lines if line.startswith(("ok", "fallback", "unavailable", "FAILED"))]
    assert len(lines) <= len(rows) + 8  # a header, the table, one hint or two, the floor and the verdict


def test_check_puts_a_failed_entrys_hint_under_the_table(fake: dict[str, str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "y.toml"
    path.write_text('[table]\nstream = "legacy"\nrequired = ["cuMulticastCreate@12010"]\n')
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11080")
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run("check", str(path), "--driver", fake["v1"])
    assert code == 1
    hint = [line for line in out.splitlines() if line.startswith("  cuMulticastCreate: ")]
    assert len(hint) == 1 and "12.1" in out
    assert all(len(line) <= 80 for line in out.splitlines()[1:])


# --- list --groups (issue 25) ------------------------------------------------------------------

def test_list_groups_counts_every_symbol() -> None:
    code, out, _ = _run("list", "--groups", "--json")
    rows = json.loads(out)
    assert code == 0 and sum(r["symbols"] for r in rows) == len(catalog().symbols())
    ungrouped = [r for r in rows if r["id"] is None]
    assert len(ungrouped) <= 1 and all(r["symbols"] > 0 for r in ungrouped)
    code, text, _ = _run("list", "--groups")
    assert code == 0 and ("(in no doc group)" in text) == bool(ungrouped)


# --- fuzz: a declaration is an entry or a TableDeclarationError, never another exception ---------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ANY = st.one_of(st.none(), st.booleans(), st.integers(-10, 20000), st.sampled_from([3020, 2000, 12050, 13000]),
                 st.text(max_size=12), st.sampled_from(["cuMemAlloc", "PFN_cuMemAlloc_v3020", "x y", "_a", "name"]),
                 st.floats(allow_nan=True), st.lists(st.integers(), max_size=2),
                 st.sampled_from([print, int, object(), b"cuMemAlloc", 3020.5, (3020,)]))


@settings(max_examples=300, deadline=None)
@given(symbol=_ANY, version=_ANY, name=_ANY, fallback=_ANY, source=_ANY, stream=_ANY, required_=st.booleans())
def test_declarations_never_raise_anything_but_a_declaration_error(symbol: Any, version: Any, name: Any,
                                                                    fallback: Any, source: Any, stream: Any,
                                                                    required_: bool) -> None:
    make = required if required_ else optional
    try:
        e = make(symbol, version, name=name, fallback=fallback)
    except TableDeclarationError:
        e = Entry("cuMemAlloc", 3020, required_, fallback if isinstance(fallback, Entry) else None, None)
    for s in (stream, "legacy"):
        try:
            t = Table("fuzz", [e], stream=s, source=source)
        except TableDeclarationError:
            continue
        assert t.entries[0].abi is not None and t.min_driver() in (0, e.version)


def test_a_declared_entry_is_bound_once_per_mode_and_the_memo_is_bounded() -> None:
    from cuentry import entry as entry_mod
    from cuentry.catalog import catalog

    e = entry_mod.required("cuMemAlloc", 3020)
    a = entry_mod.bind_entry(e, "legacy", catalog())
    assert entry_mod.bind_entry(e, "legacy", catalog()) is a and a.abi is not None and a.stream == "legacy"
    assert entry_mod.bind_entry(e, "per_thread", catalog()) is not a
    for i in range(entry_mod._BOUND_ENTRIES_LIMIT + 10):
        entry_mod.bind_entry(entry_mod.required("cuMemAlloc", 3020, name=f"m{i}"), "legacy", catalog())
    assert len(entry_mod._BOUND_ENTRIES) <= entry_mod._BOUND_ENTRIES_LIMIT
