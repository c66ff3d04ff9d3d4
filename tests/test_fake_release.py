"""The fake driver offers what a real driver of its pretended release offers (issue 25.2), its C lives in a
real template file (issue 23.4), its build errors say something, and the primary-context helper works on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuentry.cli import main
from cuentry.driver import Driver
from cuentry.errors import BuildError, CudaError, UsageError
from cuentry.testing import fakedriver, fakeenv

PKG = Path(fakedriver.__file__).resolve().parent


def _cli(*argv: str) -> tuple[int, str, str]:
    import io

    o, e = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=o, stderr=e)
    return code, o.getvalue(), e.getvalue()


@pytest.mark.parametrize("version,variant", [(13000, "full"), (12000, "full"), (11080, "v1"), (11030, "v1"),
                                             (11020, "nogpa"), (10000, "nogpa"), (3020, "nogpa")])
def test_variant_for_each_release(version: int, variant: str) -> None:
    assert fakeenv.variant_for(version) == variant
    fakeenv.check_variant(variant, version)
    fakeenv.check_variant("stub", version)


@pytest.mark.parametrize("variant,version", [("full", 11080), ("full", 10000), ("v1", 12000), ("v1", 11020),
                                             ("nogpa", 11030), ("nogpa", 13000)])
def test_impossible_pairs_are_refused_with_the_variant_to_use(variant: str, version: int) -> None:
    with pytest.raises(UsageError) as ei:
        fakeenv.check_variant(variant, version)
    assert f"'{variant}' variant" in str(ei.value) and str(version) in str(ei.value)
    assert f"'{fakeenv.variant_for(version)}' variant" in ei.value.hint
    with pytest.raises(UsageError):
        fakeenv.check_env({"CUENTRY_FAKE_DRIVER_VERSION": str(version)}, variant=variant)


def test_the_cli_picks_the_variant_of_the_release(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for version, variant, form in [("11080", "v1", "v1"), ("10000", "nogpa", "none"), ("12040", "full", "v2")]:
        monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", version)
        code, o, e = _cli("fake-driver", "--dir", str(tmp_path), "--json")
        rep = json.loads(o)
        assert code == 0 and rep["variant"] == variant and rep["version"] == int(version), e
        d = Driver.load(rep["path"])
        try:
            assert d.gpa_form == form and d.driver_version == int(version) and d.init_result == 0
        finally:
            d.close()


def test_every_variant_exports_its_marker(fake: dict[str, str]) -> None:
    from cuentry.calls.ffi import SharedLibrary

    for variant, path in fake.items():
        lib = SharedLibrary(path)
        try:
            assert fakeenv.variant_of(lambda n, lib=lib: bool(lib.address(n))) == variant
        finally:
            lib.close()


_PROBE = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int()
print(lib.cuInit(0), lib.cuDriverGetVersion(ctypes.byref(v)), v.value,
      lib.cuGetProcAddress(b"cuMemAlloc", ctypes.byref(ctypes.c_void_p()), 3020, ctypes.c_uint64(0)))
"""


@pytest.mark.parametrize("variant,version,fits", [("full", 11080, False), ("full", 12000, True), ("v1", 13000, False),
                                                  ("v1", 11080, True)])
def test_the_library_itself_refuses_an_impossible_release(fake: dict[str, str], variant: str, version: int,
                                                          fits: bool) -> None:
    """A generated C loader or any other program sees the refusal too: cuInit and the lookup fail, once said why."""
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": str(version)}
    r = subprocess.run([sys.executable, "-c", _PROBE, fake[variant]], env=env, capture_output=True, text=True,
                       timeout=60, check=True)
    init, rc_ver, ver, gpa = map(int, r.stdout.split())
    assert rc_ver == 0 and ver == version  # the version is still reported, for the diagnostic
    if fits:
        assert (init, gpa) == (0, 0) and r.stderr == ""
    else:
        assert (init, gpa) == (801, 801)
        assert r.stderr.count("cuentry fake driver:") == 1 and f"'{variant}' variant cannot pretend to be driver " \
            f"{version}" in r.stderr


def test_the_c_lives_in_a_template_file() -> None:
    template = PKG / fakedriver.TEMPLATE
    assert template.is_file() and template.suffix == ".in"
    py = Path(fakedriver.__file__).read_text()
    assert "EXPORT CUresult" not in py and "#include" not in py
    src = fakedriver.source()
    for key in ("@DECLS@", "@ERRORS@", "@ABIS@"):
        assert key not in src
    assert "cuCtxPushCurrent_v2(uintptr_t ctx)" in src and "cuentryFakeVariant_full" in src


def test_a_damaged_template_is_a_build_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fakedriver, "_template", lambda: "int x;\n")
    with pytest.raises(BuildError, match="damaged"):
        fakedriver.source()


def test_a_silent_compiler_failure_still_says_what_happened(tmp_path: Path) -> None:
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\nexit 3\n")
    cc.chmod(0o755)
    with pytest.raises(BuildError) as ei:
        fakedriver.build(tmp_path / "cache", cc=str(cc))
    msg = str(ei.value)
    assert "exit status 3" in msg and "printed nothing" in msg and str(cc) in msg
    assert str(cc) in ei.value.hint


# --- cuentry.context.primary_context ------------------------------------------------


@pytest.fixture
def drv(fake: dict[str, str], fake_version: Any) -> Any:
    d = Driver.load(fake["full"])
    yield d
    d.close()


def _current(drv: Any) -> int:
    from cuentry import out

    c = out("CUcontext")
    drv.call("cuCtxGetCurrent", 4000).checked(c)
    return int(c[0] or 0)


def test_primary_context_is_current_in_the_block_and_gone_after(drv: Any) -> None:
    from cuentry import out
    from cuentry.context import primary_context

    assert _current(drv) == 0
    with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_CONTEXT"):
        drv.call("cuMemAlloc", 3020).checked(out("CUdeviceptr"), 16)
    with primary_context(0, driver=drv) as ctx:
        assert ctx and _current(drv) == ctx
        with primary_context(0, driver=drv) as inner:
            assert inner == ctx
        assert _current(drv) == ctx  # nested blocks restore the outer one
        ptr = out("CUdeviceptr")
        drv.call("cuMemAlloc", 3020).checked(ptr, 16)
        drv.call("cuMemFree", 3020).checked(ptr[0])
    assert _current(drv) == 0


def test_primary_context_pops_when_the_block_raises(drv: Any) -> None:
    from cuentry.context import primary_context

    with pytest.raises(KeyError), primary_context(0, driver=drv):
        raise KeyError("boom")
    assert _current(drv) == 0


@pytest.mark.parametrize("bad", [True, -1, 1.0, "0", 1 << 31, None])
def test_primary_context_refuses_a_bad_ordinal(drv: Any, bad: object) -> None:
    from cuentry.context import primary_context

    class Lying(int):
        pass

    for value in (bad, Lying(0)):
        with pytest.raises(UsageError), primary_context(value, driver=drv):  # type: ignore[arg-type]
            pass
    assert _current(drv) == 0


def test_primary_context_on_a_missing_device_is_a_cuda_error(drv: Any) -> None:
    from cuentry.context import primary_context

    with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_DEVICE"), primary_context(3, driver=drv):
        pass
    assert _current(drv) == 0


def test_primary_context_on_an_old_driver(load: Any) -> None:
    """A 10.2 driver has no cuDevicePrimaryCtxRelease@11000: the 7000 ABI is used."""
    from cuentry.context import primary_context

    d = load("nogpa", 10020)
    with primary_context(0, driver=d) as ctx:
        assert _current(d) == ctx != 0
    assert _current(d) == 0


def test_loading_a_variant_at_a_release_it_cannot_be_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = fakedriver.build(variant="full")
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "11080")
    with pytest.raises(UsageError, match="use the 'v1' variant for 11080"):
        Driver.load(lib)
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "12040")
    drv = Driver.load(lib)
    assert drv.info()["version"] == 12040
