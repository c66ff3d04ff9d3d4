"""The CLI, in-process through main(argv) and as a subprocess, on the fake driver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .clihelp import run


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    monkeypatch.delenv("CUENTRY_DRIVER", raising=False)


def test_doctor_on_the_fake(fake: dict[str, str]) -> None:
    code, o, _ = run("doctor", "--driver", fake["full"])
    assert code == 0
    assert "cuentry fake driver" in o and "13000 (13.0)" in o and "cuGetProcAddress_v2" in o
    assert "coverage" in o and "driver_too_old" in o
    code, o, _ = run("doctor", "--driver", fake["full"], "--json")
    rep = json.loads(o)
    assert rep["driver"]["found"] and rep["driver"]["driver_version"] == 13000
    cov = rep["coverage"]
    assert cov["resolved_at_newest"] + cov["not_resolved"] == cov["symbols"] > 500
    assert rep["backend"]["name"]


def test_doctor_without_a_driver_says_what_it_searched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "libcuda.so.1"))
    code, o, _ = run("doctor")
    assert code == 3  # no driver: exit 3, as documented
    assert "not found" in o and str(tmp_path / "libcuda.so.1") in o and "fix:" in o
    rep = json.loads(run("doctor", "--json")[1])
    assert rep["driver"]["found"] is False and rep["driver"]["searched"]


def test_doctor_on_old_drivers(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11040")
    assert "v1 only" in run("doctor", "--driver", fake["v1"])[1]
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11000")
    assert "pre-11.3" in run("doctor", "--driver", fake["nogpa"])[1]
    assert "stub" in run("doctor", "--driver", fake["stub"])[1]


def test_resolve(fake: dict[str, str]) -> None:
    code, o, _ = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy", "--driver", fake["full"])
    assert code == 0 and "cuMemAlloc_v2" in o and "result=CUDA_SUCCESS" in o
    code, o, _ = run("resolve", "cuMemAlloc", "--version", "13000", "--stream", "legacy", "--driver", fake["full"])
    assert code == 2 and "not_an_abi_version" in o and "pin 3020" in o
    code, o, _ = run("resolve", "cuStreamBeginCapture", "--version", "10010", "--stream", "per-thread",
                     "--driver", fake["full"], "--json")
    d = json.loads(o)
    assert code == 0 and d["exported"] == "cuStreamBeginCapture_v2_ptsz" and d["query_name"] == "CU_GET_PROC_ADDRESS_SUCCESS"
    code, o, _ = run("resolve", "cuDeviceGetUuid", "--version", "11040", "--stream", "legacy",
                     "--runtime", fake["full"], "--json")
    assert code == 0 and json.loads(o)["access"] == "runtime"


def test_resolve_failure_against_the_driver(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "12000")
    code, o, _ = run("resolve", "cuMulticastCreate", "--version", "12010", "--stream", "legacy", "--driver", fake["full"])
    assert code == 1 and "FAILED" in o and "driver_too_old" in o and "hint:" in o


@pytest.mark.parametrize("argv,needle", [
    (["resolve", "cuMemAloc", "--version", "3020", "--stream", "legacy"], "misspelled"),
    (["resolve", "cuMemAlloc", "--version", "12.5", "--stream", "legacy"], "not a release"),
    (["resolve", "cuMemAlloc", "--version", "abc", "--stream", "legacy"], "not an ABI version number"),
    (["resolve", "cuMemAlloc", "--version", "3020", "--stream", "default"], "default"),
])
def test_resolve_bad_input(fake: dict[str, str], argv: list[str], needle: str) -> None:
    code, o, e = run(*argv, "--driver", fake["full"])
    assert code == 2 and needle in (o + e) and "Traceback" not in (o + e)


def test_bad_flag_value_is_a_usage_error() -> None:
    code, _, e = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "sideways")
    assert code == 2 and "unknown stream mode 'sideways'" in e and "--stream legacy" in e


def test_show_and_list() -> None:
    code, o, _ = run("show", "cuCtxCreate")
    assert code == 0 and "cuCtxCreate_v4" in o and "PFN_cuCtxCreate_v12050" in o and "CUDA_CTX" in o
    d = json.loads(run("show", "PFN_cuMemAlloc_v3020", "--json")[1])
    assert d["versions"] == [2000, 3020] and d["abis"][1]["exported"] == "cuMemAlloc_v2"
    code, _, e = run("show", "cuMemAlloc_v2")
    assert code == 2 and "ask for 'cuMemAlloc' at version 3020" in e and e.count("3020") == 1
    rows = json.loads(run("list", "--group", "CUDA_VA", "--json")[1])
    assert rows and all(r["group"] == "CUDA_VA" for r in rows)
    rows = json.loads(run("list", "--since", "13.0", "--json")[1])
    assert rows and all(r["version"] >= 13000 for r in rows)
    assert "CUDA_GRAPH" in run("list", "--groups")[1]
    code, _, e = run("list", "--group", "CUDA_MEMM")
    assert code == 2 and "CUDA_MEM" in e


def _manifest(tmp_path: Path, text: str) -> str:
    p = tmp_path / "m.toml"
    p.write_text(text)
    return str(p)


GOOD = """
[table]
name = "mylib"
stream = "per_thread"

required = ["PFN_cuMemAlloc_v3020", "cuStreamBeginCapture@10010"]
optional = [{ symbol = "cuMulticastCreate", version = 12010 }]
"""


def test_check_passes_and_prints_the_floor(fake: dict[str, str], tmp_path: Path) -> None:
    m = _manifest(tmp_path, GOOD)
    code, o, _ = run("check", m, "--driver", fake["full"])
    assert code == 0 and "PASS" in o and "10.1 (10010)" in o
    rep = json.loads(run("check", m, "--driver", fake["full"], "--json")[1])
    assert rep["ok"] and rep["min_driver"] == 10010 and rep["stream"] == "per_thread"


def test_check_fails_on_an_old_driver(fake: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "12000")
    m = _manifest(tmp_path, GOOD.replace('"cuStreamBeginCapture@10010"', '"cuMulticastCreate@12010"')
                  .replace('symbol = "cuMulticastCreate"', 'symbol = "cuDeviceGetUuid"').replace("12010 }", "11040 }"))
    code, o, _ = run("check", m, "--driver", fake["full"])
    assert code == 1 and "FAIL" in o and "driver_too_old" in o


def test_check_without_a_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "none.so"))
    code, o, e = run("check", _manifest(tmp_path, GOOD))
    assert code == 3 and "10.1 (10010)" in o and "no such file" in e and "none.so" in e


@pytest.mark.parametrize("text,where,needle", [
    ('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"\n', ":3:", "invalid TOML"),
    ('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc@13000"]\n', ":3:", "no ABI version 13000"),
    ('[table]\nstream = "legacy"\nrequired = ["cuMemAloc@3020"]\n', ":3:", "did you mean"),
    ('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc"]\n', ":3:", "no version"),
    ('required = ["cuMemAlloc@3020"]\n', "m.toml", "no stream mode"),
    ('[table]\nstream = "sideways"\n', "m.toml", "unknown stream mode"),
    ('[table]\nstream = "legacy"\nrequird = []\n', ":3:", "unknown key"),
])
def test_check_bad_manifests(tmp_path: Path, fake: dict[str, str], text: str, where: str, needle: str) -> None:
    code, _, e = run("check", _manifest(tmp_path, text), "--driver", fake["full"])
    assert code == 2 and where in e and needle in e and "Traceback" not in e
    assert len(e.strip().splitlines()) <= 2


def test_check_unreadable_manifest(tmp_path: Path) -> None:
    code, _, e = run("check", str(tmp_path / "missing.toml"))
    assert code == 2 and "cannot read" in e


def test_fake_driver_command(tmp_path: Path) -> None:
    code, o, _ = run("fake-driver", "--dir", str(tmp_path), "--variant", "v1")
    assert code == 0 and Path(o.strip()).is_file()


def test_no_command_prints_help() -> None:
    code, o, _ = run()
    assert code == 2 and "doctor" in o


def test_help_matches_commands() -> None:
    o = subprocess.run([sys.executable, "-m", "cuentry", "--help"], capture_output=True, text=True).stdout
    for cmd in ("doctor", "resolve", "show", "list", "check", "fake-driver", "catalog"):
        assert cmd in o


def test_subprocess_doctor_and_resolve(fake: dict[str, str]) -> None:
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    p = subprocess.run([sys.executable, "-m", "cuentry", "doctor", "--driver", fake["full"]],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0 and "cuentry fake driver" in p.stdout and "\033[" not in p.stdout
    p = subprocess.run([sys.executable, "-m", "cuentry", "resolve", "cuNope", "--version", "1", "--stream", "legacy",
                        "--driver", fake["full"]], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout
    p = subprocess.run([sys.executable, "-m", "cuentry", "doctor", "--driver", "/nonexistent/libcuda.so.1"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 3 and "not found" in p.stdout and "Traceback" not in p.stderr
