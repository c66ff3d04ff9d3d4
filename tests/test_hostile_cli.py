"""Issue 12, CLI behaviour: bad input, hostile environments, exit codes, terminal width, --json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry.cli.output import cli_terms

from .clihelp import run

EXIT_CODES = {0, 1, 2, 3}
HAS_CC = shutil.which(os.environ.get("CC", "cc")) is not None



@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    monkeypatch.delenv("CUENTRY_DRIVER", raising=False)
    monkeypatch.delenv("CUENTRY_RUNTIME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def no_driver(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Make sure no driver can be found: every catalog-only answer must come without one."""
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "no-such-libcuda.so.1"))


# --- catalog-only checks answer without a driver ---------------------------------------------


@pytest.mark.parametrize("argv,needle", [
    (("cuMemAlloc", "--version", "13000", "--stream", "legacy"), "pin 3020"),
    (("cuMemAlloc_v2", "--version", "3020", "--stream", "legacy"), "ask for 'cuMemAlloc' at version 3020"),
    (("cumemalloc", "--version", "3020", "--stream", "legacy"), "case-sensitive"),
    (("cuMemAloc", "--version", "3020", "--stream", "legacy"), "did you mean"),
    (("cuMemcpyHtoD", "--version", "3020", "--stream", "per-thread"), "first exists at"),
    (("cuMemAlloc", "--version", "12.5", "--stream", "legacy"), "not a release"),
])
def test_catalog_only_refusals_need_no_driver(no_driver: None, argv: tuple[str, ...], needle: str) -> None:
    code, o, e = run("resolve", *argv)
    assert code == 2, (o, e)
    assert needle in o + e
    assert "no CUDA driver" not in o + e and "no such file" not in o + e


def test_catalog_refusal_as_json_is_a_diagnostic(no_driver: None) -> None:
    code, o, _ = run("resolve", "cuMemAlloc", "--version", "13000", "--stream", "legacy", "--json")
    d = json.loads(o)
    assert code == 2 and d["classification"] == "not_an_abi_version" and d["access"] == "-"
    assert d["driver_version"] is None and "3020" in d["hint"]


def test_a_valid_request_needs_a_driver(no_driver: None) -> None:
    code, _, e = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy")
    assert code == 3 and "no such file" in e


# --- exit codes --------------------------------------------------------------------------------


def test_doctor_exit_codes(fake: dict[str, str], no_driver: None) -> None:
    assert run("doctor")[0] == 3
    assert run("doctor", "--json")[0] == 3
    assert run("doctor", "--driver", fake["stub"])[0] == 3
    assert run("doctor", "--driver", fake["full"])[0] == 0
    code, _, _ = run("doctor", "--driver", fake["full"], "--runtime", str(Path(fake["full"]).parent / "nope.so"))
    assert code == 3  # a runtime asked for and not there


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.one_of(
    st.text(max_size=12),
    st.sampled_from(["9" * 5000, "²", "12.100", "-1", "0", "2147483648", "1e3", "0x10", " 3020 ", "3020\n", "12.5.1"]),
    st.integers(-10, 10**12).map(str)),
       stream=st.sampled_from(["legacy", "PER-THREAD", "ptds", "default", "", "x", "legacy\x00"]),
       symbol=st.one_of(st.sampled_from(["cuMemAlloc", "cuInit", "PFN_cuMemAlloc_v3020", "cuMemAlloc\n", "²"]),
                        st.text(max_size=20)))
def test_resolve_argument_fuzz_never_crashes(fake: dict[str, str], version: str, stream: str, symbol: str) -> None:
    """No input gives a traceback (exit 70): each answer is 0, 1, 2 or 3 and fits one line per message."""
    argv = ["resolve", symbol, "--version", version, "--stream", stream, "--driver", fake["full"]]
    if symbol.startswith("-") or version.startswith("-") or stream.startswith("-"):
        argv = ["resolve", "--version=" + version, "--stream=" + stream, "--driver", fake["full"], "--", symbol]
    code, o, e = run(*argv)
    assert code in EXIT_CODES, (argv, o, e)
    assert "Traceback" not in o + e


@settings(max_examples=40, deadline=None)
@given(text=st.one_of(st.text(max_size=12), st.sampled_from(["9" * 5000, "²", "12.100", "12.5"])))
def test_list_since_and_show_fuzz_never_crash(text: str) -> None:
    for argv in (["list", "--since=" + text], ["show", "--", text], ["list", "--group=" + text]):
        code, o, e = run(*argv)
        assert code in {0, 2}, (argv, e)


@pytest.mark.parametrize("version", ["9" * 5000, "²", "12.100"])
def test_the_issues_versions_exit_2_in_a_real_process(version: str) -> None:
    r = subprocess.run([sys.executable, "-m", "cuentry", "resolve", "cuMemAlloc", "--version", version, "--stream",
                        "legacy"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and "internal error" not in r.stderr and len(r.stderr.splitlines()) <= 2


# --- hints in CLI terms; stream spellings; flags never ignored ------------------------------------


def test_hints_name_cli_flags(fake: dict[str, str]) -> None:
    code, o, e = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "default", "--driver", fake["full"])
    assert code == 2 and "--allow-default" in e and "allow_default" not in e and "=True" not in e
    assert "--allow-deprecated" in cli_terms("or allow_deprecated=True for cudaGetDriverEntryPoint")
    code, o, e = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "sideways")
    assert code == 2 and "--stream legacy" in e and "'per_thread'" not in e


@pytest.mark.parametrize("spelling", ["legacy", "LEGACY", "per-thread", "per_thread", "Per-Thread", "ptds",
                                      "perthread"])
def test_cli_takes_the_api_stream_spellings(fake: dict[str, str], spelling: str) -> None:
    code, o, e = run("resolve", "cuMemcpyHtoD", "--version", "7000", "--stream", spelling, "--driver", fake["full"],
                     "--json")
    assert code == 0, e
    want = "legacy" if spelling.lower() == "legacy" else "per_thread"
    assert json.loads(o)["stream"] == want


def test_flags_are_never_silently_ignored(fake: dict[str, str]) -> None:
    code, _, e = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--runtime", fake["full"],
                     "--driver", fake["full"])
    assert code == 2 and "--driver has no effect with --runtime" in e
    code, _, e = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--allow-deprecated",
                     "--driver", fake["full"])
    assert code == 2 and "--allow-deprecated only applies" in e
    code, o, _ = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--runtime", fake["full"],
                     "--json")
    assert code == 0 and json.loads(o)["access"] == "runtime"


# --- --driver: relative paths, non-drivers, the loader's own words ------------------------------------


def test_relative_driver_path_is_that_file(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    lib = Path(fake["full"])
    monkeypatch.chdir(lib.parent)
    code, o, e = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--driver", lib.name, "--json")
    assert code == 0, e
    assert json.loads(o)["library"] == str(lib.resolve())


@pytest.fixture(scope="module")
def not_a_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HAS_CC:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("notdriver")
    (d / "x.c").write_text("int answer(void) { return 42; }\n")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(d / "libx.so"), str(d / "x.c")],
                   check=True)
    return d / "libx.so"


def test_a_non_driver_gets_its_own_hint(not_a_driver: Path, tmp_path: Path) -> None:
    code, _, e = run("doctor", "--driver", str(not_a_driver))
    assert code == 3
    code, _, e = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--driver", str(not_a_driver))
    assert code == 3 and "is not a CUDA driver" in e and "cuentry fake-driver" in e
    junk = tmp_path / "junk.so"
    junk.write_text("not an ELF file at all\n" * 10)
    code, _, e = run("resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--driver", str(junk))
    assert code == 3 and "cannot be loaded" in e and "ELF" in e


def test_the_loader_error_is_kept_on_a_process_first_failure(tmp_path: Path) -> None:
    junk = tmp_path / "junk.so"
    junk.write_text("not an ELF file at all\n" * 10)
    code = ("from cuentry.driver import Driver\n"
            f"try:\n    Driver.load({str(junk)!r})\nexcept Exception as exc:\n    print(exc)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert "ELF" in r.stdout and "dlopen failed" not in r.stdout, r.stdout + r.stderr


# --- environment variables -----------------------------------------------------------------------------


@pytest.mark.parametrize("name,value", [("CUENTRY_FAKE_DRIVER_VERSION", "13.0"), ("CUENTRY_FAKE_DRIVER_VERSION", "abc"),
                                        ("CUENTRY_FAKE_DEVICE_COUNT", "-1"), ("CUENTRY_FAKE_RUNTIME_VERSION", "1e4")])
def test_fake_driver_knobs_with_unknown_values_are_errors(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                                         name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    code, _, e = run("doctor", "--driver", fake["full"])
    assert code == 2 and name in e


def test_stream_env_with_unknown_value_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from cuentry.errors import UsageError
    from cuentry.table import stream_from_env

    monkeypatch.setenv("CUENTRY_PER_THREAD_DEFAULT_STREAM", "maybe")
    with pytest.raises(UsageError):
        stream_from_env("legacy")


# --- lines fit the terminal ----------------------------------------------------------------------------


def _overlong(text: str, width: int) -> list[str]:
    """Lines wider than ``width`` that could have been wrapped (more than one word)."""
    return [ln for ln in text.splitlines() if len(ln) > width and len(ln.split()) > 1
            and max(len(w) for w in ln.split()) + (len(ln) - len(ln.lstrip())) + 4 < width]


@pytest.mark.parametrize("width", [60, 100])
def test_human_output_fits_the_terminal(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    for argv in (["doctor", "--driver", fake["full"]],
                 ["resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy", "--driver", fake["full"]],
                 ["resolve", "cuMemAlloc", "--version", "13000", "--stream", "legacy"],
                 ["resolve", "cuMulticastCreate", "--version", "12010", "--stream", "legacy", "--driver", fake["v1"]]):
        _, o, _ = run(*argv)
        assert not _overlong(o, width), (argv, _overlong(o, width))
    _, o, _ = run("show", "cuLaunchKernel")
    assert not _overlong(o, width) and "typedef CUresult" in o


def test_list_drops_columns_to_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    _, o, _ = run("list")
    assert max(len(ln) for ln in o.splitlines()) <= 100 and "left out to fit the terminal" in o
    monkeypatch.setenv("COLUMNS", "250")
    _, o, _ = run("list")
    assert "exported" in o.splitlines()[0] and "left out" not in o


def test_doctor_summarises_long_lists(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, o, _ = run("doctor", "--driver", fake["full"])
    assert "more" in o and "--json" in o  # groups show a few names and point at the full list
    assert len(o.splitlines()) < 120


# --- --json on every report command ------------------------------------------------------------------------


def _json_commands(fake: dict[str, str], tmp_path: Path) -> list[list[str]]:
    manifest = tmp_path / "m.toml"
    manifest.write_text('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
    src = tmp_path / "a.c"
    src.write_text('void f(void){ void *p; cuGetProcAddress("cuMemAlloc", &p, 3020, 1, 0); }\n')
    return [["doctor", "--driver", fake["full"]],
            ["resolve", "cuMemAlloc", "--version", "3020", "--stream", "legacy", "--driver", fake["full"]],
            ["show", "cuMemAlloc"], ["list", "--group", "CUDA_MEM"], ["list", "--groups"],
            ["check", str(manifest), "--driver", fake["full"]], ["lint", str(src)],
            ["fake-driver", "--dir", str(tmp_path / "fd")]]


def test_every_report_command_takes_json(fake: dict[str, str], tmp_path: Path) -> None:
    for argv in _json_commands(fake, tmp_path):
        code, o, e = run(*argv, "--json")
        assert code in (0, 1), (argv, e)
        json.loads(o)


def _keys(obj: Any, path: str = "") -> dict[str, set[str]]:
    """Every key's value kinds, by key name (scalar type names, 'list', 'object')."""
    found: dict[str, set[str]] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            kind = "object" if isinstance(v, dict) else "list" if isinstance(v, list) else type(v).__name__
            if v is not None:
                found.setdefault(k, set()).add(kind)
            for kk, vv in _keys(v).items():
                found.setdefault(kk, set()).update(vv)
    elif isinstance(obj, list):
        for v in obj:
            for kk, vv in _keys(v).items():
                found.setdefault(kk, set()).update(vv)
    return found


def test_one_meaning_per_key_across_commands(fake: dict[str, str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A key has one kind of value in every command's JSON (an error is always the error object)."""
    kinds: dict[str, set[str]] = {}
    docs = [json.loads(run(*argv, "--json")[1]) for argv in _json_commands(fake, tmp_path)]
    monkeypatch.setenv("CUENTRY_DRIVER", str(tmp_path / "none.so"))
    docs.append(json.loads(run("doctor", "--json")[1]))
    docs.append(json.loads(run("check", str(tmp_path / "m.toml"), "--json")[1]))
    docs.append(json.loads(run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "bogus", "--json")[1]))
    for d in docs:
        for k, v in _keys(d).items():
            kinds.setdefault(k, set()).update(v)
    # Known, documented exceptions: 'version' is an int pin everywhere; 'symbols' counts (doctor, list --groups).
    mixed = {k: v for k, v in kinds.items() if len(v - {"NoneType"}) > 1}
    assert not mixed, mixed
    assert kinds["error"] == {"object"}


def test_a_failure_with_json_is_a_json_document(no_driver: None) -> None:
    code, o, e = run("resolve", "cuMemAlloc", "--version", "3020", "--stream", "bogus", "--json")
    d = json.loads(o)
    assert code == 2 and d["ok"] is False and d["error"]["type"] == "UsageError" and "--stream" in d["error"]["hint"]
    assert "unknown stream mode" in e


@pytest.mark.parametrize("argv", [["doctor", "--driver", ""], ["doctor", "--runtime", " "],
                                  ["resolve", "cuInit", "--version", "2000", "--stream", "legacy", "--driver", ""]])
def test_an_empty_library_flag_is_an_error_not_a_search(argv: list[str]) -> None:
    code, _, e = run(*argv)
    assert code == 2 and "is empty" in e


def test_doctor_without_a_driver_does_not_repeat_the_search(no_driver: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUENTRY_DRIVER")
    monkeypatch.setattr("cuentry.loader._LINUX_DIRS", ("/nonexistent-a", "/nonexistent-b"))
    code, o, _ = run("doctor")
    assert code == 3
    assert sum(line.count("/nonexistent-a/libcuda.so.1") for line in o.splitlines()) == 1
