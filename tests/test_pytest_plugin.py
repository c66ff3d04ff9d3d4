"""cuentry's pytest plugin, run as a user would: inner pytest sessions through ``pytester``."""

from __future__ import annotations

import os
import shutil

import pytest

from cuentry import pytest_plugin as plugin
from cuentry.testing import fakedriver

pytest_plugins = ["pytester"]
# Inner sessions: no cache files, and not hypothesis's plugin (its summary imports hypothesis: ~2 s).
INNER = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None,
                              reason="no C compiler: the fake driver cannot be built")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUENTRY_DRIVER", raising=False)
    monkeypatch.delenv("CUENTRY_FAKE_DRIVER_VERSION", raising=False)
    plugin._PROBES.clear()


def test_registered_through_entry_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(cuentry_fake_driver, cuentry_emulate): pass")
    res = pytester.runpytest("--fixtures")
    res.stdout.fnmatch_lines(["*cuentry_fake_driver*", "*cuentry_emulate*"])
    res = pytester.runpytest("--markers")
    res.stdout.fnmatch_lines(["*requires_driver(spec)*"])
    # and it can be switched off
    res = pytester.runpytest("-p", "no:cuentry", "--markers")
    assert "requires_driver" not in res.stdout.str()


@needs_cc
def test_fake_driver_at_a_chosen_version(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import os
        import pytest
        import cuentry
        from cuentry.errors import ResolutionError

        def test_124(cuentry_fake_driver):
            fd = cuentry_fake_driver(version=12040)
            assert fd.version == 12040 and fd.variant == "full"
            assert os.environ["CUENTRY_DRIVER"] == str(fd.path)
            d = cuentry.Driver.load()               # found through $CUENTRY_DRIVER
            assert d.fake and d.driver_version == 12040
            assert d.resolve("cuMemAlloc", 3020, "legacy").diagnostic.ok
            with pytest.raises(ResolutionError) as exc:
                d.resolve("cuCtxCreate", 12050, "legacy")
            assert exc.value.diagnostic.classification.value == "version_above_driver"
            d.close()

        def test_release_string_and_v1_variant(cuentry_fake_driver):
            fd = cuentry_fake_driver(version="11.4")
            assert (fd.version, fd.variant) == (11040, "v1")
            assert fd.load().gpa_form == "v1"

        def test_pre_113(cuentry_fake_driver):
            assert cuentry_fake_driver(version=10020).load().gpa_form == "none"

        def test_stub(cuentry_fake_driver):
            assert cuentry_fake_driver(variant="stub").load().stub

        def test_env_restored():
            assert "CUENTRY_DRIVER" not in os.environ
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(passed=5)


@needs_cc
@pytest.mark.parametrize("bad, words", [
    ("12345", "unknown driver version 12345"),
    ("'12.x'", "unknown driver version '12.x'"),
    ("99000", "unknown driver version 99000"),
    ("1000", "unknown driver version 1000"),
    ("True", "version must be an int"),
    ("12.4", "version must be an int like 12040 or a string like '12.4', not float"),
])
def test_unknown_fixture_version_is_one_line(pytester: pytest.Pytester, bad: str, words: str) -> None:
    pytester.makepyfile(f"""
        def test_bad(cuentry_fake_driver):
            cuentry_fake_driver(version={bad})
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert words in out
    assert "Traceback" not in out and "def test_bad" not in out  # one line, no traceback
    lines = [ln for ln in out.splitlines() if "cuentry_fake_driver:" in ln]
    assert lines and all("from 3.2 to" in ln or "not " in ln for ln in lines)


@needs_cc
def test_unknown_variant_and_two_versions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        def test_variant(cuentry_fake_driver):
            cuentry_fake_driver(variant="nope")

        def test_two(cuentry_fake_driver):
            cuentry_fake_driver(version=12040)
            cuentry_fake_driver(version=13000)
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["*unknown variant 'nope'; choose one of full, v1, nogpa, stub*",
                              "*already has a fake driver at 12040; one version per test*"])


@needs_cc
def test_requires_driver_marker(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", str(fakedriver.build(variant="full")))
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "12040")
    pytester.makepyfile("""
        import pytest

        @pytest.mark.requires_driver(">=12.4")
        def test_ok(): pass

        @pytest.mark.requires_driver(">=12040,<13.0")
        def test_range(): pass

        @pytest.mark.requires_driver(">=12.5")
        def test_newer(): pass

        @pytest.mark.requires_driver("==13.0")
        def test_eq(): pass

        @pytest.mark.requires_driver("12.0")
        def test_bare_means_at_least(): pass
    """)
    res = pytester.runpytest(*INNER, "-rs")
    res.assert_outcomes(passed=3, skipped=2)
    res.stdout.fnmatch_lines(["*requires_driver('>=12.5'): the driver is 12.4 (12040), needs >=12.5*"])


def test_requires_driver_without_a_driver(pytester: pytest.Pytester, tmp_path: os.PathLike[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_DRIVER", os.path.join(tmp_path, "no-such-libcuda.so.1"))
    pytester.makepyfile("""
        import pytest

        @pytest.mark.requires_driver(">=11.0")
        def test_x(): raise AssertionError("must not run")
    """)
    res = pytester.runpytest(*INNER, "-rs")
    res.assert_outcomes(skipped=1)
    res.stdout.fnmatch_lines(["*requires_driver('>=11.0'): no usable CUDA driver*"])


@pytest.mark.parametrize("marker, words", [
    ("'>=twelve'", "cannot read '>=twelve'"),
    ("''", "give a version requirement string"),
    ("12040", "give a version requirement string like '>=12.4', not 12040"),
    ("'>=12.4', '<13'", "takes one requirement string"),
])
def test_malformed_marker_fails_in_one_line(pytester: pytest.Pytester, marker: str, words: str) -> None:
    pytester.makepyfile(f"""
        import pytest

        @pytest.mark.requires_driver({marker})
        def test_x(): pass
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(errors=1)
    assert words in res.stdout.str()
    assert "Traceback" not in res.stdout.str()


def test_parse_spec() -> None:
    assert plugin.parse_spec(">=12.4, <13") == [(">=", 12040), ("<", 13000)]
    assert plugin.parse_spec("!=12.0.1") == [("!=", 12000)]
    for bad in ("", ">= ", "=>12.4", "12.4.5.6", ">=12.4;<13", None, 12040):
        with pytest.raises(plugin.SpecError):
            plugin.parse_spec(bad)


def test_known_version() -> None:
    assert plugin.known_version(12040) == 12040
    assert plugin.known_version("12.4") == 12040
    assert plugin.known_version("13.0.1") == 13000
    for bad in (12045, 0, -12040, 2000, plugin.newest_known() + 10, "abc", 12.4, None, b"12040"):
        with pytest.raises(plugin.SpecError):
            plugin.known_version(bad)
    assert [plugin.variant_for(v) for v in (13000, 12000, 11080, 11030, 11020)] == \
        ["full", "full", "v1", "v1", "nogpa"]


def test_emulate_fixture_skips_with_reason(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    why = plugin.emulate_available()
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    pytester.makepyfile("""
        def test_x(cuentry_emulate):
            raise AssertionError("must not run")
    """)
    res = pytester.runpytest(*INNER, "-rs")
    res.assert_outcomes(skipped=1)
    # Either emulate is missing from this cuentry, or no driver can be found: each says so.
    res.stdout.fnmatch_lines([f"*{why}*" if why else "*cuentry_emulate: no usable CUDA driver*"])


def test_emulation_command_line() -> None:
    em = plugin.Emulation(12040)
    cmd = em.command(["prog", "--flag"])
    assert cmd[1:] == ["-m", "cuentry", "emulate", "--driver", "12040", "--", "prog", "--flag"]
    with pytest.raises(TypeError):
        em.run("prog --flag")  # type: ignore[arg-type]


def test_plugin_import_is_light() -> None:
    """pytest imports the plugin in every session of an environment with cuentry: it must stay cheap."""
    import subprocess
    import sys

    code = ("import sys, cuentry.pytest_plugin; "
            "heavy = [m for m in ('ctypes', 'cuentry.catalog', 'cuentry.driver', 'cuentry.calls') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@needs_cc
def test_documented_example_runs(pytester: pytest.Pytester) -> None:
    """docs/pytest.md's first example is run as written."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "pytest.md").read_text()
    example = re.findall(r"```python\n(.*?)```", doc, flags=re.S)[0]
    pytester.makepyfile(example)
    pytester.runpytest(*INNER).assert_outcomes(passed=2)


@needs_cc
def test_emulate_fixture_runs_a_command_on_the_fake_driver(pytester: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Where `cuentry emulate` exists: a child process sees the emulated version through cuentry."""
    why = plugin.emulate_available()
    if why:
        pytest.skip(why)
    monkeypatch.setenv("CUENTRY_DRIVER", str(fakedriver.build(variant="full")))
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    pytester.makepyfile("""
        import sys

        def test_child_sees_12_4(cuentry_emulate):
            code = "import cuentry; print(cuentry.Driver.load().driver_version)"
            proc = cuentry_emulate("12.4").run([sys.executable, "-c", code])
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.split()[-1] == "12040"

        def test_bad_version(cuentry_emulate):
            cuentry_emulate("12.x")
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(passed=1, failed=1)
    res.stdout.fnmatch_lines(["*cuentry_emulate: unknown driver version '12.x'*"])


@needs_cc
def test_requires_driver_sees_the_emulated_version(pytester: pytest.Pytester) -> None:
    """A suite run under `cuentry emulate --driver 12.0` skips tests that need 12.4."""
    import subprocess
    import sys

    why = plugin.emulate_available()
    if why:
        pytest.skip(why)
    pytester.makepyfile("""
        import pytest

        @pytest.mark.requires_driver(">=12.4")
        def test_new(): pass

        @pytest.mark.requires_driver(">=11.0")
        def test_old(): pass
    """)
    env = {**os.environ, "CUENTRY_DRIVER": str(fakedriver.build(variant="full")), "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    proc = subprocess.run([sys.executable, "-m", "cuentry", "emulate", "--driver", "12.0", "--", sys.executable, "-m",
                           "pytest", "-q", "-rs", *INNER, str(pytester.path)], capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 1 skipped" in proc.stdout
    assert "the driver is 12.0 (12000), needs >=12.4" in proc.stdout


def test_fake_driver_without_a_compiler_skips(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    pytester.makepyfile("""
        def test_x(cuentry_fake_driver):
            cuentry_fake_driver(version=12040)
    """)
    res = pytester.runpytest(*INNER, "-rs")
    res.assert_outcomes(skipped=1)
    res.stdout.fnmatch_lines(["*cuentry_fake_driver: no C compiler*"])


@needs_cc
def test_fake_driver_build_failure_fails_in_one_line(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: os.PathLike[str]) -> None:
    """A compiler that fails (or an unsafe cache) is an error to see, not a skip."""
    bad_cc = os.path.join(tmp_path, "cc")
    with open(bad_cc, "w") as fh:
        fh.write("#!/bin/sh\necho 'cc: simulated failure' >&2\nexit 1\n")
    os.chmod(bad_cc, 0o755)
    monkeypatch.setenv("CC", bad_cc)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(tmp_path, "cache"))
    pytester.makepyfile("""
        def test_x(cuentry_fake_driver):
            cuentry_fake_driver(version=12040)
    """)
    res = pytester.runpytest(*INNER)
    res.assert_outcomes(failed=1)
    res.stdout.fnmatch_lines(["*cuentry_fake_driver: building the fake driver failed*"])
    assert "Traceback" not in res.stdout.str()
