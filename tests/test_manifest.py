"""Manifests: the strict schema with positions, fallbacks, file safety, and tables from manifests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import Table
from cuentry.driver import Driver
from cuentry.errors import ManifestError
from cuentry.manifest import MAX_BYTES, load, loads

HEAD = '[table]\nstream = "legacy"\n'


def _err(text: str) -> ManifestError:
    with pytest.raises(ManifestError) as ei:
        loads(text, "m.toml")
    return ei.value


@pytest.mark.parametrize("text,line,col,needle", [
    (HEAD + 'optional = [\n  { symbol = "cuMemAlloc", version = 3020, colour = 1 },\n]\n', 4, 44, "unknown key 'colour'"),
    ('[table]\nname = 5\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n', 2, 8, "name must be"),
    (HEAD + 'required = [{symbol="cuMemAlloc", version=true}]\n', 3, 43, "got a boolean"),
    (HEAD + 'required = [{symbol=5, version=3020}]\n', 3, 21, "symbol must be a string"),
    (HEAD + 'required = ["cuMemAlloc@ 3020"]\n', 3, 13, "not a pin"),
    (HEAD + 'required = ["cuMemAlloc@3_020"]\n', 3, 13, "not a pin"),
    (HEAD + 'required = ["cuMemAlloc @3020"]\n', 3, 13, "not a pin"),
    (HEAD + 'required = ["cuMemAlloc"]\n', 3, 13, "no version"),
    (HEAD + 'required = [\n   "cuMemAlloc@13000"]\n', 4, 4, "looks like a CUDA release"),
    (HEAD + 'required = ["cuMemAlloc_v2@3020"]\n', 3, 13, "cuMemAlloc"),
    (HEAD + 'required = ["cuMemAlloc@3020", "cuMemAlloc@2000"]\n', 3, 32, "listed twice"),
    (HEAD + 'required = [{symbol="cuMemAlloc", version=3020, name="report"}]\n', 3, 13, "clashes"),
    (HEAD + 'required = [{pfn="PFN_cuMemAlloc_v3020", symbol="cuMemAlloc"}]\n', 3, 42, "not both"),
    (HEAD + 'required = ["PFN_cuMemcpyHtoD_v7000_ptds"]\n', 3, 13, "never mixes"),
    (HEAD + 'required = 5\n', 3, 12, "must be an array"),
    (HEAD + 'required = [5]\n', 3, 13, "string or an inline table"),
    (HEAD + 'foo.bar = 1\n', 3, 1, "unknown key 'foo'"),
    ('[table]\nstream = "sideways"\nrequired = ["cuMemAlloc@3020"]\n', 2, 10, "unknown stream mode"),
    ('[table]\nstream = "default"\nrequired = ["cuMemAlloc@3020"]\n', 2, 10, "not allowed"),
    ('[table]\nrequired = ["cuMemAlloc@3020"]\n', 1, 1, "no stream mode"),
    ('[[table]]\nstream = "legacy"\n', 1, 1, "must be a table"),
    (HEAD + 'optional = [{symbol="cuCtxCreate", version=12050, fallback=[{symbol="cuCtxCreate", version=3020, '
            'fallback="cuCtxCreate@3020"}]}]\n', 3, 107, "flat list"),
    (HEAD + 'optional = [{symbol="cuCtxCreate", version=12050, fallback="cuCtxCreate@12345"}]\n', 3, 60, "no ABI version"),
    ("", 1, 1, "empty"),
    ("# only a comment\n", 1, 1, "empty"),
    (HEAD, 1, 1, "no entries"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", 1, 1, "nested too deeply"),
    (HEAD + 'required = ["cuMemAlloc@3020"\n', 3, 30, "invalid TOML"),
])
def test_schema_errors_have_exact_positions(text: str, line: int, col: int, needle: str) -> None:
    e = _err(text)
    assert (e.line, e.column) == (line, col), str(e)
    assert needle in str(e)
    assert str(e).startswith(f"m.toml:{line}:{col}: ")


def test_deep_but_valid_nesting_is_judged_not_crashed() -> None:
    e = _err(HEAD + "required = [\"cuMemAlloc@3020\"]\nweird = " + "[" * 200 + "]" * 200 + "\n")
    assert "unknown key 'weird'" in str(e) and e.line == 4


def test_every_entry_form_and_fallbacks() -> None:
    m = loads('\ufeff[table]\nname = "acme"\nstream = "per-thread"\nrequired = ["cuMemAlloc@3020", '
              '"PFN_cuStreamBeginCapture_v10010_ptsz"]\noptional = [\n'
              '  { symbol = "cuCtxCreate", version = 12050, fallback = "cuCtxCreate@3020" },\n'
              '  { pfn = "PFN_cuMemAllocAsync_v11020_ptsz", name = "alloc_async", '
              'fallback = ["cuMemAlloc@3020", { symbol = "cuMemAlloc", version = 2000 }] },\n]\n', "acme.toml")
    assert (m.name, m.stream) == ("acme", "per_thread")
    got = [(e.describe(), e.required, e.variant, e.attr, [f.describe() for f in e.chain[1:]]) for e in m.entries]
    assert got == [
        ("cuMemAlloc@3020", True, None, "cuMemAlloc", []),
        ("cuStreamBeginCapture@10010", True, "ptsz", "cuStreamBeginCapture", []),
        ("cuCtxCreate@12050", False, None, "cuCtxCreate", ["cuCtxCreate@3020"]),
        ("cuMemAllocAsync@11020", False, "ptsz", "alloc_async", ["cuMemAlloc@3020", "cuMemAlloc@2000"]),
    ]
    assert (m.entries[2].line, m.entries[2].column) == (6, 3)
    assert m.min_driver() == 10010
    assert m.abi(m.entries[1]).pfn == "PFN_cuStreamBeginCapture_v10010_ptsz"


def test_entries_at_top_level_and_default_name() -> None:
    m = loads('required = ["cuMemAlloc@3020"]\n[table]\nstream = "legacy"\n', "/x/mylib.toml")
    assert m.name == "mylib" and [e.symbol for e in m.entries] == ["cuMemAlloc"]
    assert "given twice" in str(_err('required = ["cuMemAlloc@3020"]\n[table]\nstream = "legacy"\nrequired = []\n'))


def test_files_that_are_not_manifests_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="not a regular file"):
        load("/dev/zero")
    with pytest.raises(ManifestError, match="not a regular file"):
        load(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ManifestError, match="not a regular file"):
        load(fifo)  # must not block waiting for a writer
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(ManifestError, match="limit"):
        load(big)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[table]\nstream = "leg\xffacy"\n')
    with pytest.raises(ManifestError, match="not UTF-8") as ei:
        load(bad)
    assert (ei.value.line, ei.value.column) == (2, 14)
    with pytest.raises(ManifestError, match="cannot read"):
        load(tmp_path / "missing.toml")


def test_table_from_manifest_takes_fallbacks(tmp_path: Path, load: Any) -> None:
    drv: Driver = load("full", 12040)
    p = tmp_path / "acme.toml"
    p.write_text(HEAD + 'required = ["cuMemAlloc@3020"]\noptional = [\n'
                 '  { symbol = "cuCtxCreate", version = 12050, fallback = ["cuCtxCreate@11040", "cuCtxCreate@3020"] },\n'
                 '  "cuMulticastCreate@12010",\n]\n')
    t = Table.from_manifest(p, source=drv)
    assert t.name == "acme" and t.stream == "legacy"
    assert t.available("cuCtxCreate") and t.available("cuMulticastCreate")
    row = next(r for r in t.report()["entries"] if r["name"] == "cuCtxCreate")
    assert row["status"] == "fallback" and row["via"] == "entry cuCtxCreate@11040"
    assert t.min_driver() == 3020
    with pytest.raises(ManifestError):
        Table.from_manifest(tmp_path / "nope.toml")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list('[]{}=,."@#\n _-ab01PFN') + ["cuMemAlloc", "stream", "table", "required",
                                                                "optional", "legacy", "3020", "fallback"]),
                max_size=60).map("".join))
def test_fuzzed_text_gives_a_manifest_or_a_manifest_error(text: str) -> None:
    try:
        loads(text, "f.toml")
    except ManifestError as exc:
        assert exc.line is None or exc.line >= 1


def test_the_documented_example_is_valid() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "manifest.md").read_text()
    text = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    m = loads(text, "acme.toml")
    assert m.name == "acme" and len(m.entries) == 5 and m.entries[4].attr == "alloc_async"
