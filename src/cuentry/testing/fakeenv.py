"""The fake driver's environment knobs, checked without importing its builder.

The loader checks them on every load of the fake driver, so this module stays light: a cold start
on the fake driver does not import subprocess or pathlib.
"""

from __future__ import annotations

import os

from ..errors import UsageError
from ..names import MAX_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["DEFAULT_VERSION", "ENV_KNOBS", "VARIANTS", "VARIANT_RELEASES", "check_env", "check_variant", "variant_for",
           "variant_of"]

ENV_KNOBS = (("CUENTRY_FAKE_DRIVER_VERSION", 1), ("CUENTRY_FAKE_RUNTIME_VERSION", 1), ("CUENTRY_FAKE_DEVICE_COUNT", 0))
DEFAULT_VERSION = 13000

# What a real driver of each release offers, as the fake driver's variants: (variant, lowest, highest
# driver version it can pretend to be, what it has). 12.0 brought cuGetProcAddress_v2, 11.3 the v1 form.
VARIANT_RELEASES = (
    ("full", 12000, MAX_VERSION, "cuGetProcAddress_v2 and v1 (a 12.0+ driver)"),
    ("v1", 11030, 11999, "only the v1 cuGetProcAddress (an 11.3-11.8 driver)"),
    ("nogpa", 1, 11029, "no cuGetProcAddress (a pre-11.3 driver)"),
)


def variant_for(version: int) -> str:
    """The fake driver variant that offers what a real driver of `version` offers.

    Args:
        version: a driver version number, e.g. 11080.

    Returns:
        `"full"` at 12.0 and above, `"v1"` from 11.3 to 11.8, `"nogpa"` below.
    """
    for name, low, high, _ in VARIANT_RELEASES:
        if low <= version <= high:
            return name
    return "nogpa"


VARIANTS = ("full", "v1", "nogpa", "stub")


def variant_of(has_symbol: Callable[[str], bool]) -> str | None:
    """Which variant a loaded fake driver is, from its marker export (`cuentryFakeVariant_<variant>`).

    Args:
        has_symbol: tells whether the library exports a name (e.g. `lambda n: bool(lib.address(n))`).

    Returns:
        The variant, or None for a fake driver built before the markers existed.
    """
    for name in VARIANTS:
        if has_symbol(f"cuentryFakeVariant_{name}"):
            return name
    return None


def check_variant(variant: str, version: int) -> None:
    """Refuse a fake driver variant asked to pretend to be a release that has not its lookup.

    Args:
        variant: `full`, `v1`, `nogpa` or `stub` (the stub fits any version).
        version: the driver version it would pretend to be.

    Raises:
        UsageError: the pair is impossible (the full variant as 11.8 would still offer the 12.0+
            `cuGetProcAddress_v2`); the hint names the variant of that release.
    """
    if variant == "stub":
        return
    fits = variant_for(version)
    if fits == variant:
        return
    what = {name: has for name, _, _, has in VARIANT_RELEASES}
    raise UsageError(f"the fake driver's '{variant}' variant ({what.get(variant, 'unknown')}) cannot pretend to be "
                     f"driver {version}: a real driver of that release has {what[fits]}",
                     hint=f"use the '{fits}' variant for {version} (`cuentry fake-driver` without --variant picks it "
                          "from CUENTRY_FAKE_DRIVER_VERSION), or set CUENTRY_FAKE_DRIVER_VERSION to a release "
                          f"the '{variant}' variant has")


def _number(name: str, raw: str, low: int) -> int:
    text = raw.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 10 and low <= int(text) <= MAX_VERSION):
        raise UsageError(f"${name}={raw!r} is not a number the fake driver can use",
                         hint=f"set {name} to a decimal number from {low} (e.g. 13000 for a version), "
                              "or unset it for the default")
    return int(text)


def check_env(environ: Mapping[str, str] | None = None, variant: str | None = None) -> None:
    """Refuse a fake-driver knob that is not a plain decimal number in range.

    Args:
        environ: the environment to check (default: `os.environ`).
        variant: the variant being loaded or built; when given, the pretended driver version must be
            one that variant can be ([check_variant][cuentry.testing.fakeenv.check_variant]).

    Raises:
        UsageError: a malformed knob, or an impossible variant/version pair.
    """
    env = os.environ if environ is None else environ
    version = DEFAULT_VERSION
    for name, low in ENV_KNOBS:
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        value = _number(name, raw, low)
        if name == "CUENTRY_FAKE_DRIVER_VERSION":
            version = value
    if variant is not None:
        check_variant(variant, version)
