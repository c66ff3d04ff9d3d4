"""Helpers shared by the trace and emulate tests: the C test programs and how to run them."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
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


_CACHE: list[str] = []


@contextlib.contextmanager
def session_cache() -> Iterator[str]:
    """XDG_CACHE_HOME set to one private directory for the whole test session (built once there)."""
    if not _CACHE:
        _CACHE.append(tempfile.mkdtemp(prefix="cuentry-test-cache-"))
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = _CACHE[0]
    try:
        yield _CACHE[0]
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old


DOCS = Path(__file__).parent.parent / "docs"


def section_block(page: str, heading: str, lang: str = "sh") -> str:
    """The first ``lang`` code block under ``heading`` in docs/PAGE."""
    import re

    text = (DOCS / page).read_text()
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    blocks = re.findall(rf"```{lang}\n(.*?)```", text[start:end if end >= 0 else None], flags=re.S)
    assert blocks, f"no {lang} block under {heading} in {page}"
    return str(blocks[0])


def run_shell_block(script: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a documentation block with bash -e (stop at the first failing command), this Python first on PATH."""
    import sys

    e = dict(env)
    e["PATH"] = os.path.dirname(sys.executable) + os.pathsep + e.get("PATH", "")
    for var in ("CUENTRY_DRIVER", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUENTRY_FAKE_DRIVER_VERSION"):
        e.pop(var, None)
    return subprocess.run(["bash", "-e", "-u", "-o", "pipefail", "-c", script], capture_output=True, text=True,
                          env=e, timeout=timeout, check=False)
