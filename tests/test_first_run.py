"""Issue 25.3: the first hour's raw errors and defects, each with the outcome a user should see."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .clihelp import run


@pytest.fixture
def headers(tmp_path: Path) -> Path:
    """A toolkit-like include directory whose cuda.h says CUDA_VERSION 13000."""
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text(
        "#include <stdint.h>\n#define CUDA_VERSION 13000\ntypedef int CUresult;\n#define CUDAAPI\n"
        "typedef struct CUctx_st *CUcontext;\nCUresult CUDAAPI cuFoo(CUcontext c);\n")
    (inc / "cudaTypedefs.h").write_text("#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuFoo_v1000)(CUcontext c);\n")
    return inc


@pytest.mark.parametrize("toolkit", ["abc", "13", "13.0.1.2", "", "1e3", "13.x"])
def test_catalog_build_bad_toolkit_is_usage(headers: Path, tmp_path: Path, toolkit: str) -> None:
    code, o, e = run("catalog", "build", "--include", str(headers), "--toolkit", toolkit, "-o", str(tmp_path / "c.json"))
    assert code == 2 and "is not a CUDA toolkit release" in e and "--toolkit 13.0" in e and "internal" not in e
    assert not (tmp_path / "c.json").exists()


def test_catalog_build_into_a_missing_folder_is_usage(headers: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "c.json"
    code, o, e = run("catalog", "build", "--include", str(headers), "--toolkit", "13.0", "-o", str(target))
    assert code == 2 and "does not exist" in e and f"mkdir -p {target.parent}" in e


def test_catalog_build_refuses_headers_of_another_release(headers: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.json"
    code, o, e = run("catalog", "build", "--include", str(headers), "--toolkit", "12.0", "-o", str(out))
    assert code == 2 and "are CUDA 13.0" in e and "pass --toolkit 13.0" in e and not out.exists()


def test_catalog_build_of_matching_headers_works(headers: Path, tmp_path: Path) -> None:
    pytest.importorskip("pycparser")
    out = tmp_path / "c.json"
    code, o, e = run("catalog", "build", "--include", str(headers), "--toolkit", "13.0", "-o", str(out))
    assert code == 0, e
    assert json.loads(out.read_text())["primary_toolkit"] == "13.0"


def test_catalog_alone_prints_its_own_help() -> None:
    code, o, e = run("catalog")
    assert code == 2 and "usage: cuentry catalog" in e and "build" in e and "COMMAND" not in e


@pytest.mark.parametrize("argv,pin", [(("cuCtxCreate", "12.5"), "--version 12050"),
                                      (("cuCtxCreate", "12.4"), "pin 11040"),
                                      (("cuMemAlloc", "12.5"), "pin 3020")])
def test_resolve_release_names_the_pin(argv: tuple[str, str], pin: str) -> None:
    code, o, e = run("resolve", argv[0], "--version", argv[1], "--stream", "legacy")
    assert code == 2 and "not a release" in e and pin in e
    assert "a release like 12.5" not in e  # never suggest what is refused


def test_resolve_hint_is_printed_once(fake: dict[str, str], fake_version: Any) -> None:
    fake_version(12000)
    code, o, e = run("resolve", "cuMulticastCreate", "--version", "12010", "--stream", "legacy", "--driver", fake["full"])
    assert code == 1
    assert o.count("needs driver >= 12.1") == 1, o


def test_resolve_json_has_the_decided_shapes(fake: dict[str, str], fake_version: Any) -> None:
    code, o, _ = run("resolve", "cuMemAlloc_v2", "--version", "3020", "--stream", "legacy", "--json")
    d = json.loads(o)
    assert code == 2 and d["suggestions"] == [
        {"symbol": "cuMemAlloc", "version": 3020, "stream": "legacy",
         "reason": "cuMemAlloc_v2 is the exported name of that ABI; ask for the base name"}]
    assert d["driver"] == {"path": None, "version": None}
    code, o, _ = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy", "--driver", fake["full"],
                     "--json")
    d = json.loads(o)
    assert code == 0 and d["driver"] == {"path": d["library"], "version": 13000}
    assert isinstance(d["result"], int) and d["result_name"] == "CUDA_SUCCESS"


def test_doctor_on_the_fake_driver_does_not_call_it_the_runtime(fake: dict[str, str], fake_version: Any,
                                                                  monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cuentry import loader

    monkeypatch.setattr(loader, "runtime_candidates", lambda explicit=None: [(str(tmp_path / "none.so"), "test")]
                        if explicit is None else [(explicit, "argument")])
    monkeypatch.setattr(loader, "locate_nvidia_library",
                        lambda name: (None, loader.Attempt(name, loader.PATHFINDER_HOW, "not here")))
    monkeypatch.delenv("CUENTRY_RUNTIME", raising=False)
    code, o, _ = run("doctor", "--driver", fake["full"], "--json")
    rep = json.loads(o)
    assert code == 0 and rep["runtime"]["found"] is False
    assert rep["driver"]["path"] == fake["full"] or rep["driver"]["fake"]
    code, o, _ = run("doctor", "--driver", fake["full"])
    assert "runtime     not found" in o and o.count(Path(fake["full"]).name) >= 1
    code, o, _ = run("doctor", "--driver", fake["full"], "--runtime", fake["full"], "--json")
    assert json.loads(o)["runtime"]["found"] is True  # asked for: then it is used


def test_doctor_json_has_the_decided_shapes(fake: dict[str, str], fake_version: Any, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    rep = json.loads(run("doctor", "--driver", fake["full"], "--json")[1])
    assert rep["driver"]["version"] == 13000 and rep["driver"]["path"]
    assert all(set(s) == {"path", "reason", "how"} for s in rep["driver"]["searched"])
    f = rep["coverage"]["failures"][0]
    assert isinstance(f["result"], int) and isinstance(f["result_name"], str)
    assert f["query"] is None or isinstance(f["query"], int)
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "libcuda.so.1"))
    rep = json.loads(run("doctor", "--json")[1])
    assert rep["driver"]["path"] is None and rep["driver"]["version"] is None
    assert rep["driver"]["searched"][0]["path"] == str(tmp_path / "libcuda.so.1")


@pytest.mark.parametrize("argv", [("doctor", "-v"), ("doctor", "-q"), ("-v", "doctor"), ("doctor", "-vv"),
                                  ("show", "cuMemAlloc", "-q"), ("list", "--groups", "-v")])
def test_global_flags_before_or_after_the_command(fake: dict[str, str], fake_version: Any, argv: tuple[str, ...],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", fake["full"])
    code, o, e = run(*argv)
    assert code == 0, e
    assert "unrecognized arguments" not in e
    if "-q" in argv:
        assert o == ""


def test_the_plugin_registers_its_marker_and_no_other(tmp_path: Path, fake: dict[str, str]) -> None:
    """A user project with --strict-markers: requires_driver is known; the cuentry repository's own `gpu`
    mark is not leaked into it (the docs' examples no longer use it)."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_user.py").write_text(
        "import pytest\n\n@pytest.mark.requires_driver('>=12.0')\ndef test_new(): pass\n")
    env = {**os.environ, "CUENTRY_DRIVER": fake["full"], "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--strict-markers",
                        "-W", "error::pytest.PytestUnknownMarkWarning", str(tmp_path)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    m = subprocess.run([sys.executable, "-m", "pytest", "--markers", "-p", "no:cacheprovider"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120, check=False)
    assert "@pytest.mark.requires_driver(spec)" in m.stdout and "@pytest.mark.gpu" not in m.stdout
