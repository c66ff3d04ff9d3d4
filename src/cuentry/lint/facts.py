"""What the linter knows about one source file, independent of its language.

The C-family and Python front ends turn a file into a :class:`Unit` of facts
(every entry-point query with its arguments classified, the flags used, how
pointers are declared); the rules only read facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

QUERY_APIS = frozenset({"cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPoint",
                        "cudaGetDriverEntryPointByVersion"})
VERSION_QUERIES = frozenset({"cuDriverGetVersion", "cudaDriverGetVersion", "cudaRuntimeGetVersion"})
TOOLKIT_MACROS = frozenset({"CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "CUDA_API_VERSION"})
LEGACY_FLAGS = frozenset({"CU_GET_PROC_ADDRESS_LEGACY_STREAM", "cudaEnableLegacyStream"})
PER_THREAD_FLAGS = frozenset({"CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM", "cudaEnablePerThreadDefaultStream"})
DEFAULT_FLAGS = frozenset({"CU_GET_PROC_ADDRESS_DEFAULT", "cudaEnableDefault"})
PFN_RE = re.compile(r"\bPFN_(\w+?)_v(\d+)(?:_(ptds|ptsz))?\b")
SUPPRESS_RE = re.compile(r"cuentry:\s*ignore(?:\[([A-Z0-9_, ]+)\])?")


@dataclass
class Query:
    """One call of cuGetProcAddress / cudaGetDriverEntryPoint(ByVersion)."""

    api: str
    line: int
    col: int
    symbol: str | None = None              # the string literal, when it is one
    symbol_line: int = 0
    symbol_col: int = 0
    version: int | None = None             # the literal pin, when it is one
    version_text: str = ""
    version_kind: str = "missing"          # literal | toolkit | driver | other | missing
    flags_text: str = ""
    status: str = "missing"                # given | null | missing | not_applicable
    result_used: bool = True
    unchecked: tuple[str, ...] = ()         # result/status variables never tested after the call (C family)
    target: str | None = None              # the variable that receives the pointer
    target_type: str | None = None         # its declared type, as written
    handwritten: str | None = None         # why the target's type is a hand-written function type


@dataclass
class Unit:
    """The facts of one file."""

    path: str
    lang: str                               # "c" or "python"
    queries: list[Query] = field(default_factory=list)
    flag_uses: list[tuple[str, int, int]] = field(default_factory=list)
    suffixed_names: list[tuple[str, int, int]] = field(default_factory=list)  # exported names used directly
    handwritten_protos: list[tuple[str, int, int]] = field(default_factory=list)  # Python CFUNCTYPE et al.
    suppressions: dict[int, frozenset[str] | None] = field(default_factory=dict)
    lines: int = 0
    parse_errors: int = 0


def suppressions(text: str) -> dict[int, frozenset[str] | None]:
    """Lines carrying `cuentry: ignore` (all rules) or `cuentry: ignore[CE001,CE004]`."""
    out: dict[int, frozenset[str] | None] = {}
    for i, line in enumerate(text.splitlines(), 1):
        m = SUPPRESS_RE.search(line)
        if m:
            out[i] = frozenset(c.strip() for c in m.group(1).split(",")) if m.group(1) else None
    return out
