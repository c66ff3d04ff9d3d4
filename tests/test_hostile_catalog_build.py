"""Issue 12: `cuentry catalog build` never writes into the installed package unless asked, and writes
the format its output's name says."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from cuentry import _catalog_build as cb
from cuentry.catalog import Catalog

from .clihelp import run

pytestmark = [
    pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler"),
    pytest.mark.skipif(importlib.util.find_spec("pycparser") is None, reason="pycparser (extra [gen]) missing"),
]


@pytest.fixture
def headers(tmp_path: Path) -> Path:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text(
        "#include <stdint.h>\ntypedef int CUresult;\n#define CUDAAPI\ntypedef struct CUctx_st *CUcontext;\n"
        "CUresult CUDAAPI cuFoo(CUcontext c);\n")
    (inc / "cudaTypedefs.h").write_text(
        "#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuFoo_v1000)(CUcontext c);\n")
    return inc


def _package_digest() -> str:
    h = hashlib.sha256()
    for p in (cb.DATA_MODULE, cb.TYPES_FILE):
        h.update(p.read_bytes())
    return h.hexdigest()


def test_json_output_is_json(headers: Path, tmp_path: Path) -> None:
    before = _package_digest()
    out = tmp_path / "cat.json"
    code, o, e = run("catalog", "build", "--include", str(headers), "--toolkit", "12.0", "-o", str(out))
    assert code == 0, e
    data = json.loads(out.read_text())
    small = Catalog(data, data["types"])
    assert small.versions("cuFoo") == (1000,)
    assert _package_digest() == before
    assert "wrote 1 ABI to" in o


def test_py_output_is_the_data_module(headers: Path, tmp_path: Path) -> None:
    out = tmp_path / "cat.py"
    code, _, e = run("catalog", "build", "--include", str(headers), "--toolkit", "12.0", "-o", str(out), "--json")
    assert code == 0, e
    spec = importlib.util.spec_from_file_location("catdata", out)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.ROWS[0][0] == "cuFoo"
    assert json.loads((tmp_path / "cat.types.json").read_text())["aggregates"]["CUctx_st"]["opaque"] is True


@pytest.mark.parametrize("argv,needle", [
    ((), "one of the arguments -o/--output --in-place is required"),
    (("-o", "cat.txt"), "unknown output format '.txt'"),
    (("-o", "catalog"), "unknown output format '(no extension)'"),
    (("-o", str(cb.DATA_MODULE)), "the installed package's own catalog"),
    (("-o", "x.json", "--in-place"), "not allowed with argument"),
])
def test_refused_requests(headers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          argv: tuple[str, ...], needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    before = _package_digest()
    code, _, e = run("catalog", "build", "--include", str(headers), "--toolkit", "12.0", *argv)
    assert code == 2 and needle in e
    assert _package_digest() == before
    assert not list(tmp_path.glob("cat.*"))


def test_in_place_writes_the_package_catalog_only_when_asked(headers: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    module, types = tmp_path / "_catalog_data.py", tmp_path / "types.json"
    monkeypatch.setattr(cb, "DATA_MODULE", module)
    monkeypatch.setattr(cb, "TYPES_FILE", types)
    code, _, e = run("catalog", "build", "--include", str(headers), "--toolkit", "12.0", "--in-place")
    assert code == 0, e
    assert "ROWS = (" in module.read_text() and json.loads(types.read_text())
    assert "without --history" in e


def test_build_catalog_api_raises_instead_of_printing(headers: Path, tmp_path: Path) -> None:
    from cuentry.errors import UsageError

    with pytest.raises(UsageError, match="only replaced on request"):
        cb.build_catalog(headers, "12.0")
    rep = cb.build_catalog(headers, "12.0", output=tmp_path / "c.json")
    assert rep.entries == 1 and rep.written == [tmp_path / "c.json"] and rep.notes == []
    assert not hasattr(cb, "main")


def test_output_is_never_written_through_a_symlink(headers: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "c.json"
    link.symlink_to(victim)
    cb.build_catalog(headers, "12.0", output=link)
    assert victim.read_text() == "keep" and not link.is_symlink() and json.loads(link.read_text())
