"""Large C-family files: parse only the top-level pieces that can hold a request.

A file above `FULL_PARSE_BYTES` is cut at the closing braces that end a
top-level definition; the pieces that name an entry-point API, a getter, a PFN
type, `decltype`, a version query or a `"cu..."` string are kept, the others
become blank lines (so line numbers stay). If what is kept is still above
`MAX_FOCUS_BYTES`, the file is refused with a reason rather than parsed:
time and memory stay bounded whatever the input.
"""

from __future__ import annotations

import re

__all__ = ["FULL_PARSE_BYTES", "MAX_FOCUS_BYTES", "TooLarge", "focus", "pieces"]


FULL_PARSE_BYTES = 1 << 20
MAX_FOCUS_BYTES = 8 << 20
_CLOSE = re.compile(r"^\}[^\n]*\n?", re.M)
_FOCUS = re.compile(r'cuGetProcAddress|cudaGetDriverEntryPoint|dlv?sym|GetProcAddress|"cu[A-Z]|PFN_|decltype'
                    r'|cuDriverGetVersion|cuda(?:Driver|Runtime)GetVersion|CU_GET_PROC_ADDRESS|cudaEnable')


class TooLarge(ValueError):
    """The relevant part of a file is above the limit."""


def pieces(text: str) -> list[tuple[int, int]]:
    """Byte ranges of the top-level pieces: each ends with a line that starts with `}` (the end of a
    definition at file or namespace level, in the usual formatting), or at the end of the text."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _CLOSE.finditer(text):
        end = m.end()
        if end > start:
            out.append((start, end))
            start = end
    if start < len(text):
        out.append((start, len(text)))
    return out


def focus(text: str) -> str:
    """The text with every piece that cannot hold a request blanked (newlines kept)."""
    if len(text) <= FULL_PARSE_BYTES:
        return text
    parts: list[str] = []
    kept = 0
    for a, b in pieces(text):
        chunk = text[a:b]
        if _FOCUS.search(chunk):
            kept += len(chunk)
            if kept > MAX_FOCUS_BYTES:
                raise TooLarge(f"more than {MAX_FOCUS_BYTES >> 20} MiB of code that may hold requests: not linted")
            parts.append(chunk)
        else:
            parts.append("\n" * chunk.count("\n"))
    return "".join(parts)
