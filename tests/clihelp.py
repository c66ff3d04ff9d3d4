"""The CLI in-process, as the tests run it: one helper for every test file that does."""

from __future__ import annotations

import io

from cuentry.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """`main(argv)` with its output captured: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()
