"""The fake driver's environment knobs, checked without importing its builder (the loader does this on every
load of the fake driver, so it stays light: a cold start on the fake driver does not import subprocess or pathlib).
"""

from __future__ import annotations

import os

from ..errors import UsageError
from ..names import MAX_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ENV_KNOBS", "check_env"]

ENV_KNOBS = (("CUENTRY_FAKE_DRIVER_VERSION", 1), ("CUENTRY_FAKE_RUNTIME_VERSION", 1), ("CUENTRY_FAKE_DEVICE_COUNT", 0))


def check_env(environ: Mapping[str, str] | None = None) -> None:
    """Refuse a fake-driver knob whose value is not a plain decimal number in range (UsageError)."""
    env = os.environ if environ is None else environ
    for name, low in ENV_KNOBS:
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        text = raw.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 10 and low <= int(text) <= MAX_VERSION):
            raise UsageError(f"${name}={raw!r} is not a number the fake driver can use",
                             hint=f"set {name} to a decimal number from {low} (e.g. 13000 for a version), "
                                  "or unset it for the default")
