"""C call stubs for the compiled backend, one per distinct FFI signature shape.

A stub takes the function pointer and the typed arguments and calls through
the pointer directly::

    int cuentry_call_hp(uintptr_t fn, uintptr_t a0, void *a1)
    { return ((int (*)(uintptr_t, void *))fn)(a0, a1); }

Compiled with cffi's out-of-line API mode into the extension ``cuentry._stubs``,
each call skips libffi. The shapes come from the catalog through the same type
mapping the pure backend uses, so both backends pass exactly the same C types.
Shapes with a struct passed by value stay on the pure backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MODULE = "cuentry._stubs"

CODES = {
    "int": "i", "unsigned int": "I", "short": "t", "unsigned short": "T", "char": "c", "signed char": "b",
    "unsigned char": "B", "long": "l", "unsigned long": "L", "long long": "q", "unsigned long long": "Q",
    "float": "f", "double": "d", "size_t": "z", "int8_t": "1", "uint8_t": "2", "int16_t": "3", "uint16_t": "4",
    "int32_t": "5", "uint32_t": "u", "int64_t": "6", "uint64_t": "U", "intptr_t": "7", "uintptr_t": "h",
    "ptrdiff_t": "8", "wchar_t": "w", "void *": "p", "char *": "s",
}


def stub_name(ffi_types: Sequence[str]) -> str | None:
    """The stub's C name for a shape, or None when the shape has no stub (a struct by value)."""
    try:
        return "cuentry_call_" + ("".join(CODES[t] for t in ffi_types) or "v")
    except KeyError:
        return None


def _decl(ffi_types: Sequence[str]) -> tuple[str, str]:
    name = stub_name(ffi_types)
    assert name is not None
    params = ", ".join(["uintptr_t fn", *(f"{t} a{i}" for i, t in enumerate(ffi_types))])
    proto = f"int {name}({params})"
    fntype = f"int (*)({', '.join(ffi_types) or 'void'})"
    call = f"(({fntype})fn)({', '.join(f'a{i}' for i in range(len(ffi_types)))})"
    return proto + ";", f"{proto} {{ return {call}; }}"


def shapes(signatures: Iterable[Sequence[str]]) -> list[tuple[str, ...]]:
    """The distinct shapes that get a stub, in a stable order."""
    return sorted({tuple(s) for s in signatures if stub_name(s) is not None})


def catalog_shapes() -> list[tuple[str, ...]]:
    """Every shape the shipped catalog needs."""
    from .callables import typemap
    from .catalog import catalog

    tm = typemap()
    return shapes(tuple(tm.param(p.canonical)[0] for p in a.signature.params) for a in catalog())


def cdef_and_source(shape_list: Iterable[Sequence[str]]) -> tuple[str, str]:
    """(cffi cdef, C source) for the stubs of ``shape_list``."""
    decls, bodies = [], ["#include <stdint.h>", "#include <stddef.h>"]
    for s in shape_list:
        d, b = _decl(s)
        decls.append(d)
        bodies.append(b)
    return "\n".join(decls), "\n".join(bodies)


def build(out_dir: str, *, verbose: bool = False) -> str:
    """Compile the stubs extension into ``out_dir``; return the extension's path."""
    import cffi

    cdef, src = cdef_and_source(catalog_shapes())
    builder = cffi.FFI()
    builder.cdef(cdef)
    builder.set_source(MODULE, src)
    return str(builder.compile(tmpdir=out_dir, verbose=verbose))


def main() -> int:
    """``python -m cuentry._stubgen``: build the stubs into this package's own folder (for a checkout)."""
    import glob
    import os
    import shutil
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    so = build(tempfile.mkdtemp(prefix="cuentry-stubs-"))
    for old in glob.glob(os.path.join(here, "_stubs*.so")):
        os.remove(old)
    dest = os.path.join(here, os.path.basename(so))
    shutil.copy2(so, dest)
    print(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
