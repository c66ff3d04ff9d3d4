"""Signature shapes: the distinct tuples of FFI parameter types the catalog needs.

A shape is named by one letter per parameter (``CODES``); the compiled backend
(:mod:`cuentry._fastgen`) has one call case per shape. The shapes come from the
catalog through the same type mapping the pure backend uses, so both backends
pass exactly the same C types. Shapes with a struct passed by value have no
name and stay on the pure backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

CODES = {
    "int": "i", "unsigned int": "I", "short": "t", "unsigned short": "T", "char": "c", "signed char": "b",
    "unsigned char": "B", "long": "l", "unsigned long": "L", "long long": "q", "unsigned long long": "Q",
    "float": "f", "double": "d", "size_t": "z", "int8_t": "1", "uint8_t": "2", "int16_t": "3", "uint16_t": "4",
    "int32_t": "5", "uint32_t": "u", "int64_t": "6", "uint64_t": "U", "intptr_t": "7", "uintptr_t": "h",
    "ptrdiff_t": "8", "wchar_t": "w", "void *": "p", "char *": "s",
}


# How the compiled backend converts each type: s(igned), u(nsigned), f(loat), p(ointer).
KINDS = {t: ("p" if t.endswith("*") else "f" if t in ("float", "double") else
             "u" if t.startswith(("unsigned", "uint", "size_t")) or t in ("uintptr_t",) else "s") for t in CODES}


def kinds(shape: Sequence[str]) -> str:
    """Conversion letters of a shape, as the compiled backend reads them."""
    return "".join(KINDS[t] for t in shape)


def shape_code(ffi_types: Sequence[str]) -> str | None:
    """A shape's letters ("v" for no parameters), or None when it has none (a struct by value)."""
    try:
        return "".join(CODES[t] for t in ffi_types) or "v"
    except KeyError:
        return None


def shapes(signatures: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """The distinct shapes that have letters, in a stable order."""
    return sorted({tuple(s) for s in signatures if shape_code(s) is not None})


def catalog_shapes() -> list[tuple[str, ...]]:
    """Every shape the shipped catalog needs."""
    from .callables import typemap
    from .catalog import catalog

    tm = typemap()
    return shapes(tuple(tm.param(p.canonical)[0] for p in a.signature.params) for a in catalog())
