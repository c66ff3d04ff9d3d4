"""The CLI's global -v/--verbose and -q/--quiet: logging of the key=value diagnostic line, and silence."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .clihelp import run as _run


def _resolve(fake: dict[str, str], *extra: str, symbol: str = "cuCtxCreate", version: str = "12050") -> list[str]:
    return ["resolve", symbol, "--version", version, "--stream", "legacy", "--driver", fake["full"], *extra]


def test_default_logs_nothing(fake: dict[str, str], fake_version: Any) -> None:
    fake_version(12040)
    code, out, err = _run(*_resolve(fake))
    assert code == 1 and "did not resolve" in out
    assert "symbol=cuCtxCreate" not in err


def test_verbose_logs_failed_resolutions(fake: dict[str, str], fake_version: Any) -> None:
    fake_version(12040)
    for argv in (["-v", *_resolve(fake)], [*_resolve(fake), "--verbose"]):
        code, _, err = _run(*argv)
        assert code == 1
        (line,) = [ln for ln in err.splitlines() if "symbol=" in ln]
        assert line.startswith("INFO: cuentry: symbol=cuCtxCreate version=12050 ")
        assert "class=version_above_driver" in line and "driver=12040(12.4)" in line
    # -v does not log successes; -vv does.
    assert "symbol=" not in _run("-v", *_resolve(fake, symbol="cuMemAlloc", version="3020"))[2]
    _, _, err = _run("-vv", *_resolve(fake, symbol="cuMemAlloc", version="3020"))
    assert "DEBUG: cuentry: symbol=cuMemAlloc version=3020" in err and "class=ok" in err


def test_quiet_prints_only_errors_and_machine_output(fake: dict[str, str], fake_version: Any, tmp_path: Path) -> None:
    fake_version(12040)
    code, out, err = _run("-q", *_resolve(fake))
    assert code == 1 and out == "" and err == ""
    code, out, _ = _run("-q", *_resolve(fake, "--json"))
    assert code == 1 and json.loads(out)["classification"] == "version_above_driver"
    m = tmp_path / "broken.toml"
    m.write_text("[table\n")
    code, out, err = _run("check", str(m), "-q")
    assert code == 2 and out == "" and err.startswith("cuentry: error: ")


def test_verbose_and_quiet_exclude_each_other() -> None:
    code, _, err = _run("-v", "-q", "show", "cuMemAlloc")
    assert code == 2 and "not allowed with" in err


def test_handler_removed_after_the_run(fake: dict[str, str], fake_version: Any) -> None:
    logger = logging.getLogger("cuentry")
    before = (list(logger.handlers), logger.level)
    _run("-vv", *_resolve(fake))
    assert (list(logger.handlers), logger.level) == before


def test_quiet_keeps_a_commands_product(fake: dict[str, str]) -> None:
    """`$(cuentry -q fake-driver)` is still the path: --quiet silences reports, not results."""
    code, out, _ = _run("-q", "fake-driver")
    assert code == 0 and out.strip().endswith("libcuda.so.1")
