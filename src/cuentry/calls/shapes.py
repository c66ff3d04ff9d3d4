"""Signature shapes: the distinct tuples of C types the catalog's functions are called with.

A shape is named by one letter per parameter (`CODES`); the compiled
extension has one C call case per shape. Shapes come from the same
classification the pure backend uses (`.contract`), so both backends pass
the same C types. Shapes with a struct passed by value have no name and stay on
the pure backend.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["CODES", "SLOTS", "catalog_shapes", "shape_code", "shapes"]


CODES = {
    "int": "i", "unsigned int": "I", "short": "t", "unsigned short": "T", "char": "c", "signed char": "b",
    "unsigned char": "B", "long": "l", "unsigned long": "L", "long long": "q", "unsigned long long": "Q",
    "float": "f", "double": "d", "size_t": "z", "int8_t": "1", "uint8_t": "2", "int16_t": "3", "uint16_t": "4",
    "int32_t": "5", "uint32_t": "u", "int64_t": "6", "uint64_t": "U", "intptr_t": "7", "uintptr_t": "h",
    "ptrdiff_t": "8", "wchar_t": "w", "void *": "p",
}

# Which member of the extension's argument slot holds each type: s(igned), u(nsigned), f(loat), p(ointer).
SLOTS = {t: ("p" if t.endswith("*") else "f" if t in ("float", "double") else
             "u" if t.startswith(("unsigned", "uint")) or t in ("size_t", "uintptr_t") else "s") for t in CODES}


def shape_code(ctypes_: Sequence[str]) -> str | None:
    """A shape's letters ("v" for no parameters), or None when it has none (a struct by value)."""
    try:
        return "".join(CODES[t] for t in ctypes_) or "v"
    except KeyError:
        return None


def shapes(signatures: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """The distinct shapes that have letters, in a stable order."""
    return sorted({tuple(s) for s in signatures if shape_code(s) is not None})


def catalog_shapes() -> list[tuple[str, ...]]:
    """Every shape the shipped catalog needs."""
    from ..catalog import catalog
    from .contract import Hints, classify

    cat = catalog()
    hints = Hints(cat.ffi_hints)
    return shapes(tuple(classify(i, p, hints).ctype for i, p in enumerate(a.signature.params)) for a in cat)
