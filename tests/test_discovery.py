"""Library discovery: libcudart through cuda-pathfinder first, cuentry's own search after; what doctor reports."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cuentry import loader
from cuentry.cli import main
from cuentry.errors import DriverNotFoundError

pathfinder = pytest.importorskip("cuda.pathfinder", reason="cuda-pathfinder is a dependency; install it")


@pytest.fixture(autouse=True)
def _no_runtime_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("CUENTRY_RUNTIME", "CUDA_PATH", "CUDA_HOME"):
        monkeypatch.delenv(var, raising=False)


def _pf_answer(monkeypatch: pytest.MonkeyPatch, answer: Any) -> list[str]:
    """Make cuda.pathfinder.load_nvidia_dynamic_lib return (or raise) ``answer``; returns the names asked."""
    asked: list[str] = []

    def fake(libname: str) -> Any:
        asked.append(libname)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", fake)
    return asked


def _no_pathfinder(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if cuda-pathfinder were not installed: importing it raises ImportError."""
    import cuda

    monkeypatch.setitem(sys.modules, "cuda.pathfinder", None)
    monkeypatch.delattr(cuda, "pathfinder", raising=False)


def test_pathfinder_is_asked_first(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _pf_answer(monkeypatch, SimpleNamespace(abs_path=fake["full"], found_via="site-packages"))
    found = loader.load_runtime()
    assert asked == ["cudart"]
    assert found.path == os.path.realpath(fake["full"]) or found.path == fake["full"]
    assert found.how == "cuda-pathfinder (site-packages)"
    assert [a.outcome for a in found.attempts] == ["loaded"]
    found.library.close()


def test_explicit_and_env_skip_pathfinder(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _pf_answer(monkeypatch, AssertionError("pathfinder must not be asked"))
    found = loader.load_runtime(fake["full"])
    assert found.how == "argument"
    found.library.close()
    monkeypatch.setenv("CUENTRY_RUNTIME", fake["full"])
    found = loader.load_runtime()
    assert found.how == "$CUENTRY_RUNTIME"
    found.library.close()
    assert asked == []


def test_pathfinder_failure_is_recorded_and_search_goes_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _pf_answer(monkeypatch, pathfinder.DynamicLibNotFoundError('Failure finding "libcudart.so"\nsecond line'))
    monkeypatch.setattr(loader, "runtime_candidates", lambda explicit=None: [(str(tmp_path / "nope.so"), "test")])
    with pytest.raises(DriverNotFoundError) as exc:
        loader.load_runtime()
    reasons = exc.value.reasons
    assert reasons[0] == 'DynamicLibNotFoundError: Failure finding "libcudart.so"'  # first line only
    assert reasons[1] == "no such file"
    assert "libcudart" in exc.value.message and "\n" not in exc.value.message


def test_missing_pathfinder_is_one_line_not_a_traceback(monkeypatch: pytest.MonkeyPatch, fake: dict[str, str]) -> None:
    _no_pathfinder(monkeypatch)
    path, attempt = loader.locate_nvidia_library("cudart")
    assert path is None
    assert attempt.outcome == loader.PATHFINDER_MISSING
    assert "pip install cuda-pathfinder" in attempt.outcome and "\n" not in attempt.outcome
    # The search goes on with cuentry's own list.
    monkeypatch.setattr(loader, "runtime_candidates", lambda explicit=None: [(fake["full"], "test list")])
    found = loader.load_runtime()
    assert found.how == "test list"
    assert [a.outcome for a in found.attempts] == [loader.PATHFINDER_MISSING, "loaded"]
    found.library.close()


def test_pathfinder_answer_without_path(monkeypatch: pytest.MonkeyPatch) -> None:
    _pf_answer(monkeypatch, SimpleNamespace(abs_path=None, found_via="already loaded"))
    path, attempt = loader.locate_nvidia_library("nvrtc")
    assert path is None and "no path" in attempt.outcome


def test_cuda_path_before_cuda_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home, cpath = tmp_path / "home", tmp_path / "path"
    for root in (home, cpath):
        (root / "lib64").mkdir(parents=True)
        (root / "lib64" / "libcudart.so.12").write_bytes(b"")
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("CUDA_PATH", str(cpath))
    cands = [c for c in loader.runtime_candidates() if c[0].startswith(str(tmp_path))]
    assert cands == [(str(cpath / "lib64" / "libcudart.so.12"), "CUDA toolkit ($CUDA_PATH)"),
                     (str(home / "lib64" / "libcudart.so.12"), "CUDA toolkit ($CUDA_HOME)")]
    assert [r for r, _ in loader.toolkit_roots()][:2] == [str(cpath), str(home)]


def _doctor(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["doctor", *args, "--json"], stdout=out, stderr=err) in (0, 3), err.getvalue()  # 3: no driver
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_doctor_reports_how_each_was_found(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", "13000")
    _pf_answer(monkeypatch, SimpleNamespace(abs_path=fake["full"], found_via="site-packages"))
    rep = _doctor("--driver", fake["full"], "--runtime", fake["full"])
    assert rep["driver"]["how"] == "argument" and rep["runtime"]["how"] == "argument"
    assert rep["runtime"]["searched"][-1]["reason"] == "loaded"
    assert rep["discovery"]["cuda_pathfinder"]
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    rep = _doctor()
    assert rep["runtime"]["how"] == "cuda-pathfinder (site-packages)"


def test_doctor_without_pathfinder(fake: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _no_pathfinder(monkeypatch)
    monkeypatch.setattr(loader, "runtime_candidates", lambda explicit=None: [(str(tmp_path / "x.so"), "test")])
    monkeypatch.setenv("CUENTRY_DRIVER", "/nonexistent/libcuda.so.1")
    rep = _doctor()
    assert rep["runtime"]["found"] is False
    assert rep["runtime"]["searched"][0] == {"path": "cudart", "how": "cuda-pathfinder",
                                            "reason": loader.PATHFINDER_MISSING}
    out, err = io.StringIO(), io.StringIO()
    assert main(["doctor"], stdout=out, stderr=err) == 3  # no driver
    text = out.getvalue()
    assert "cuda-pathfinder not installed (pip install cuda-pathfinder)" in text
    assert "Traceback" not in text + err.getvalue()
