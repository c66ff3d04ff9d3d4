"""Build-time generator of the compiled call extension, `cuentry.calls._fastcall`.

It defines two types. `OutBase`: the base of [cuentry.Out][cuentry.calls.Out], holding a
buffer export of the ctypes array it owns (so its pointer always comes from a
live, writable buffer of the stated size). `Caller`: a vectorcall object bound
to a function pointer, a signature shape (one C call case per shape of the
catalog), a letter per parameter saying what C may convert itself (see
`contract._fast_letter`), and the library's guard state. Whatever C does not
convert goes to the Python contract, which converts or raises and calls back
through the caller itself. No other library's private layout is read.

The C lives in `_fastcall.c.in` beside this module; this module only fills in
the call cases. Built with the system C compiler and the interpreter's headers, by the wheel's
build hook or `build` (`python -m cuentry.calls._fastgen` for a checkout).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile

from ..errors import BuildError
from ..toolchain import find_compiler, run_compiler
from .shapes import SLOTS, catalog_shapes, shape_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["TEMPLATE", "build", "install_into_checkout", "source", "template"]


TEMPLATE = "_fastcall.c.in"  # beside this module; shipped in the wheel and the sdist as package data


def template() -> str:
    """The extension's C template (`_fastcall.c.in`): C with `@SHAPES@` and `@CASES@` to fill."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), TEMPLATE), encoding="utf-8") as fh:
        return fh.read()


def source(shapes: Sequence[tuple[str, ...]]) -> str:
    """The extension's C source for `shapes` (shape i is case i; SHAPES lists their codes)."""
    cases = []
    names = []
    for i, shape in enumerate(shapes):
        args = ", ".join(f"({t})a[{j}].{SLOTS[t]}" for j, t in enumerate(shape))
        cases.append(f"    case {i}: *rc = ((int (*)({', '.join(shape) or 'void'}))fn)({args}); return 1;")
        names.append(shape_code(shape) or "")
    return template().replace("@CASES@", "\n".join(cases)).replace("@SHAPES@", ",".join(names))


def build(out_dir: str, cc: str | None = None) -> str:
    """Compile `cuentry.calls._fastcall` into `out_dir`; return the file's path.

    The compiler is [find_compiler][cuentry.toolchain.find_compiler]'s (`cc`, else `$CC` as words, else
    cc/gcc/clang): cuentry's one compiler discovery.

    Raises:
        BuildError: no compiler, no Python headers, or a compile error (the compiler's words).
    """
    shapes = [s for s in catalog_shapes() if len(s) <= 32]
    src = os.path.join(out_dir, "_fastcall.c")
    with open(src, "w") as fh:
        fh.write(source(shapes))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    out = os.path.join(out_dir, "_fastcall" + suffix)
    what = "build the call extension"
    compiler = find_compiler(cc, what=what)
    inc = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(inc, "Python.h")):
        raise BuildError(f"cannot {what}: no Python.h in {inc}",
                         hint="install the Python development headers (python3-dev), or use the pure backend")
    run_compiler([*compiler, "-shared", "-fPIC", "-O2", "-w", f"-I{inc}", "-o", out, src, "-lm"], what=what,
                 failed="compiling the call extension failed")
    return out


def install_into_checkout() -> str:
    """Build the extension into this package's folder (a source checkout); return its path."""
    import glob

    here = os.path.dirname(os.path.abspath(__file__))
    so = build(tempfile.mkdtemp(prefix="cuentry-calls-"))
    for old in glob.glob(os.path.join(here, "_fastcall*.so")) + glob.glob(os.path.join(here, "_fastcall*.pyd")):
        os.remove(old)
    dest = os.path.join(here, os.path.basename(so))
    shutil.copy2(so, dest)
    return dest


if __name__ == "__main__":
    install_into_checkout()
