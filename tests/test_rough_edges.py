"""Issue 33.5: the command line's and the library's rough edges, each fixed and held here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .clihelp import run

ROOT = Path(__file__).resolve().parent.parent


def test_quiet_doctor_without_a_driver_still_prints_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    code, out, err = run("-q", "doctor")
    assert code == 3 and out == ""
    assert err.startswith("cuentry: error: ") and "/nonexistent/libcuda.so.1" in err and "hint:" in err
    code, out, err = run("doctor", "-q")  # -q after the command too
    assert code == 3 and out == "" and "cuentry: error: " in err


def test_quiet_doctor_with_a_driver_prints_nothing(fake: dict[str, str], fake_version: Any) -> None:
    assert run("-q", "doctor", "--driver", fake["full"]) == (0, "", "")


def test_global_flags_after_the_command(fake: dict[str, str], fake_version: Any) -> None:
    code, out, _ = run("doctor", "--color", "never", "--driver", fake["full"])
    assert code == 0 and "\033[" not in out and out.startswith("cuentry")
    code, out, _ = run("doctor", "--color", "always", "--driver", fake["full"])
    assert code == 0 and "\033[" in out
    code, out, _ = run("--color", "always", "doctor", "--driver", fake["full"])  # a command never resets it
    assert code == 0 and "\033[" in out


def test_an_unknown_flag_shows_the_commands_usage() -> None:
    code, _, err = run("doctor", "--bogus")
    assert code == 2 and err.startswith("usage: cuentry doctor") and "unrecognized arguments: --bogus" in err
    code, _, err = run("show", "cuMemAlloc", "--nope")
    assert code == 2 and err.startswith("usage: cuentry show") and "--nope" in err
    code, _, err = run("--bogus")
    assert code == 2 and err.startswith("usage: cuentry [")


@pytest.mark.parametrize("command", ["show", "list", "check"])
def test_json_has_help_text(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("--json"))
    assert len(line.split()) > 1, line  # "--json   what it prints", not a bare flag


def test_counts_are_pluralised(tmp_path: Path) -> None:
    (tmp_path / "one.toml").write_text('[table]\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
    code, out, _ = run("generate", "c", str(tmp_path / "one.toml"), "-o", str(tmp_path / "one.h"))
    assert code == 0 and "1 entry," in out and "1 entries" not in out
    (tmp_path / "a.py").write_text("x = 1")  # one line, no newline at the end
    code, out, _ = run("lint", str(tmp_path / "a.py"))
    assert code == 0 and "(1 line)" in out
    from cuentry.cli.output import count

    assert (count(1, "entry", "entries"), count(2, "ABI"), count(0, "ABI")) == ("1 entry", "2 ABIs", "0 ABIs")


def test_lint_line_total_is_the_number_of_lines(tmp_path: Path) -> None:
    files = {"a.py": "a = 1\nb = 2\n", "b.py": "a = 1\nb = 2", "c.py": "", "d.c": "int x;\n\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    expected = {"a.py": 2, "b.py": 2, "c.py": 0, "d.c": 2}
    for name, n in expected.items():
        code, out, _ = run("lint", "--json", str(tmp_path / name))
        assert json.loads(out)["lines"] == n, (name, out)
    code, out, _ = run("lint", str(tmp_path))
    assert f"in 4 files ({sum(expected.values())} lines)" in out


def test_resolve_of_a_suffixed_name_says_its_hint_once(fake: dict[str, str], fake_version: Any) -> None:
    code, out, err = run("resolve", "cuMemAlloc_v2", "--version", "3020", "--stream", "legacy",
                         "--driver", fake["full"])
    text = " ".join((out + err).split())
    assert code == 2 and "ask for 'cuMemAlloc' at version 3020" in text
    assert text.count("3020") == 2, text  # the pin asked for, and the one to ask for: no repeat
    assert "did you mean" not in text


def test_list_since_beyond_the_catalog_says_so() -> None:
    code, out, _ = run("list", "--since", "99.0")
    assert code == 0 and out.strip() == "no ABI matches --since 99.0 (the catalog's newest ABI is " + \
        out.split("is ")[-1].strip()
    assert "symbol" not in out and "0 ABIs" not in out


def test_top_level_exports() -> None:
    import cuentry
    from cuentry import errors, table

    for name in ("ArgumentError", "UsageError", "DriverClosedError", "StubLibraryError"):
        assert getattr(cuentry, name) is getattr(errors, name) and name in cuentry.__all__
    assert cuentry.stream_from_env is table.stream_from_env and "stream_from_env" in cuentry.__all__


def test_shorten_never_cuts_mid_word() -> None:
    from cuentry.errors import shorten

    text = "the exporter's __cuda_array_interface__ raised " + "averyveryverylongword " * 20
    short = shorten(text, 120)
    assert len(short) <= 120 and short.endswith("...")
    assert text.startswith(short[:-3]) and text[len(short) - 3] == " "  # it stops at a word's end
    assert shorten("  two\nlines  ") == "two lines"


def test_a_failing_array_interface_message_is_cut_at_a_word() -> None:
    from cuentry.calls import devmem

    class Bad:
        @property
        def __cuda_array_interface__(self) -> Any:
            raise RuntimeError("word " * 60)

    with pytest.raises(devmem.Refused) as info:
        devmem.convert(Bad(), None)
    msg = str(info.value)
    assert "word wor" not in msg.replace("word word", "") and msg.rstrip(".").endswith("word"), msg


def test_lint_of_a_cuentry_pin_that_is_not_an_abi_is_an_error(tmp_path: Path) -> None:
    """cuentry refuses required("cuMemAlloc", 12040) (TableDeclarationError): lint says error, not warning."""
    from cuentry import Table, TableDeclarationError, required

    with pytest.raises(TableDeclarationError):
        Table("x", [required("cuMemAlloc", 12040)], stream="legacy")
    (tmp_path / "t.py").write_text('from cuentry import required\nr = required("cuMemAlloc", 12040)\n')
    code, out, _ = run("lint", "--json", str(tmp_path / "t.py"))
    (f,) = json.loads(out)["findings"]
    assert code == 1 and f["code"] == "CE010" and f["severity"] == "error" and "cuentry refuses" in f["message"]
    # a hand-written request at a release number stays what it was (a warning): it works on newer drivers
    (tmp_path / "c.c").write_text("#include <cuda.h>\nvoid f(void) { void *p; CUdriverProcAddressQueryResult q;\n"
                                  "  CUresult r = cuGetProcAddress(\"cuMemAlloc\", &p, 12040, "
                                  "CU_GET_PROC_ADDRESS_DEFAULT, &q); (void)r; }\n")
    code, out, _ = run("lint", "--json", "--select", "CE010", str(tmp_path / "c.c"))
    assert [f["severity"] for f in json.loads(out)["findings"]] == ["warning"], out


def test_pytest_skip_reasons_are_short_and_point_at_the_test(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\n\n@pytest.mark.requires_driver(\">=12.4\")\ndef test_new_api():\n    pass\n\n\n"
        "def test_emulated(cuentry_emulate):\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_")}
    env.update(CUENTRY_DRIVER="/nonexistent/libcuda.so.1", LD_LIBRARY_PATH="")
    r = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                        "test_x.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                       check=False)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert len(lines) == 2, r.stdout
    for ln in lines:
        where, reason = ln.split("] ", 1)[1].split(": ", 1)
        assert where.startswith("test_x.py:"), ln  # the test's line, not the plugin's
        assert len(reason) <= 120, (len(reason), reason)


def test_no_compile_install_says_so_not_a_missing_compiler(tmp_path: Path) -> None:
    """A wheel built with CUENTRY_NO_COMPILE=1 records why it is pure; the backend's detail says that."""
    import importlib.util
    import zipfile

    if importlib.util.find_spec("hatchling") is None:
        pytest.skip("hatchling not installed (it is in the [test] extra)")
    env = {**os.environ, "CUENTRY_NO_COMPILE": "1", "TMPDIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(tmp_path / "dist"), str(ROOT)], env=env, capture_output=True, text=True, timeout=600,
                       check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("cuentry-*.whl")
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_")}
    env["PYTHONPATH"] = str(tmp_path / "site")
    r = subprocess.run([sys.executable, "-c", "import json, cuentry.calls as c; print(json.dumps(c.backend()))"],
                       env=env, capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    got = json.loads(r.stdout)
    assert got["name"] == "pure" and "CUENTRY_NO_COMPILE=1" in got["detail"], got
    assert "no C compiler" not in got["detail"]
    assert not list(tmp_path.glob("cuentry-calls-*")) and not list(tmp_path.glob("cuentry-build-*"))


def test_the_pytest_pages_skip_lines_are_what_pytest_prints(fake: dict[str, str], tmp_path: Path) -> None:
    """docs/pytest.md's `pytest -rs` lines, pasted from a run, are what a run prints (fake driver at 12.4; none)."""
    import re

    page = (ROOT / "docs" / "pytest.md").read_text()
    shown = [ln for ln in re.search(r"```text\n(SKIPPED .*?)```", page, re.S)[1].splitlines() if ln]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_new.py").write_text(
        'import pytest\n\n\n@pytest.mark.requires_driver(">=12.5")\ndef test_new_api():\n    pass\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_")}
    got = []
    for extra in ({"CUENTRY_DRIVER": fake["full"], "CUENTRY_FAKE_DRIVER_VERSION": "12040"},
                  {"CUENTRY_DRIVER": str(tmp_path / "none" / "libcuda.so.1"), "LD_LIBRARY_PATH": ""}):
        r = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-q", "-p", "no:cacheprovider", "-p",
                            "no:hypothesispytest", "tests"], cwd=tmp_path, env={**env, **extra}, capture_output=True,
                           text=True, timeout=120, check=False)
        got += [ln for ln in r.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert got[0] == shown[0]
    # without a driver: $CUENTRY_DRIVER names a missing file here, so the reason names it (the page's machine
    # had none anywhere); both are one short line at the test's location
    assert got[1].startswith("SKIPPED [1] tests/test_new.py:4: requires_driver('>=12.5'): ") and len(got[1]) < 200
    assert shown[1].startswith("SKIPPED [1] tests/test_new.py:4: requires_driver('>=12.5'): no CUDA driver found")
