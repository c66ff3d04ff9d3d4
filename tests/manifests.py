"""Manifests shared by several test files (tests/ and tests/gpu/): one text each, one owner.

Import with `from .manifests import CHAIN` (tests/) or `from ..manifests import CHAIN` (tests/gpu/).
"""

from __future__ import annotations

#: A required entry with a fallback chain (12050 -> 11040 -> 3020), a plain required entry and an
#: optional one that must never raise the floor: the floor is 3020, and every pin of the chain binds.
CHAIN = """\
[table]
name = "x"
stream = "legacy"
required = [{ symbol = "cuCtxCreate", version = 12050, fallback = ["cuCtxCreate@11040", "cuCtxCreate@3020"] },
            "cuMemAlloc@3020"]
optional = ["cuMulticastCreate@12010"]
"""
