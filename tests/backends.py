"""The two call backends, as the tests pick them: one list and one way to bind on one of them."""

from __future__ import annotations

import pytest

from cuentry.calls import choice, compiled

BACKENDS = ("pure", "compiled")


def use_backend(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Bind on one backend for the rest of the test (skipped for compiled where the extension is not
    installed)."""
    monkeypatch.setattr(choice, "_CHOICE", choice._Choice(name))
    if name == "compiled":
        try:
            compiled.extension()
        except ImportError:
            pytest.skip("the compiled extension is not installed")
