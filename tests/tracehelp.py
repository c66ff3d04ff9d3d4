"""Helpers shared by the trace and emulate tests: the C test programs and how to run them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

TRACE_DATA = Path(__file__).parent / "data" / "trace"


def cc() -> str:
    found = shutil.which(os.environ.get("CC", "cc"))
    assert found, "no C compiler"
    return found


def compile_program(out: Path, *extra: str, source: Path | None = None) -> Path:
    """Compile a test program (default: req.c) into ``out``."""
    src = source or TRACE_DATA / "req.c"
    proc = subprocess.run([cc(), "-O1", "-w", "-o", str(out), str(src), *extra, "-ldl", "-pthread"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


def plain_run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run without any interposer (the baseline)."""
    e = dict(os.environ if env is None else env)
    e.pop("LD_PRELOAD", None)
    return subprocess.run(cmd, capture_output=True, text=True, env=e, check=False, timeout=60)
