"""Does a variant compile? libclang's `-fsyntax-only` parse of its main file, under each of its configurations.

The CUDA headers are the ones cuentry writes from its catalog for a toolkit (13.0 by default: the headers the
scorer lints against), or a real toolkit's include directory (`include=`). A variant whose family leaves a
project header out on purpose (`missing_header`) is compiled with that header given (`Variant.absent`): it must
be a correct program that the linter sees without one of its headers. `-D_WIN32` configurations get the minimal
`windows.h` cuentry carries for judging `_WIN32` branches. No toolchain is needed: libclang comes with the `lint`
extra, and the compiler's own headers (`stddef.h`, ...) with cuentry.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from importlib.resources import files as resource_files
from pathlib import Path
from typing import Any

from ..record import Variant

__all__ = ["compile_errors", "headers_dir", "main", "write"]


def _resource() -> Path:
    return Path(str(resource_files("cuentry.lint.clang"))) / "resource"


@cache
def headers_dir(toolkit: str = "13.0") -> str:
    """The directory of the cuda.h/cudaTypedefs.h cuentry writes from its catalog for `toolkit`."""
    from cuentry.catalog import catalog
    from cuentry.lint.clang.headers import generated_dir

    return generated_dir(catalog(), toolkit)


@cache
def _index() -> Any:
    import clang.cindex as ci

    from cuentry.lint import clang as cuentry_clang

    if not cuentry_clang.available():   # loads the libclang that the lint extra installs
        raise RuntimeError("libclang cannot be loaded")
    return ci.Index.create()


def write(v: Variant, root: str | Path, *, absent: bool = False) -> Path:
    """Write the files of `v` under `root` (and the headers it leaves out, with `absent`); the main file's path."""
    root = Path(root)
    texts = {**v.files, **(v.absent if absent else {})}
    for rel, text in texts.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root / v.main_path


def _args(suffix: str, config: tuple[str, ...], include: str) -> list[str]:
    res = _resource()
    args = ["-resource-dir", str(res), "-fsyntax-only", "-ferror-limit=0"]
    if suffix == ".cu":
        args += ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=gnu++17",
                 "-include", str(res / "cuda_host_preamble.h")]
    elif suffix == ".c":
        args += ["-x", "c", "-std=gnu11"]
    else:
        args += ["-x", "c++", "-std=gnu++17"]
    args += ["-isystem", include]
    if suffix == ".cu" and include == headers_dir():   # nvcc's implicit cuda_runtime.h (cuentry writes one)
        args += ["-include", "cuda_runtime.h"]
    if "-D_WIN32" in config:
        args += ["-isystem", str(res / "win32")]
    return args + list(config)


def compile_errors(v: Variant, *, include: str | None = None) -> list[str]:
    """The errors of `v`'s main file under each configuration ([] when it compiles): 'config: file:line: text'."""
    import clang.cindex as ci

    inc = include or headers_dir()
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cuentry-variant-") as d:
        main = write(v, d, absent=True)
        for config in v.configs:
            tu = _index().parse(str(main), args=_args(v.suffix, config, inc))
            for diag in tu.diagnostics:
                if diag.severity >= ci.Diagnostic.Error:
                    loc = diag.location
                    where = f"{os.path.basename(str(loc.file)) if loc.file else '?'}:{loc.line}"
                    out.append(f"{' '.join(config) or 'default'}: {where}: {diag.spelling}")
    return out


def _errors_of(args: tuple[Variant, str | None]) -> tuple[str, tuple[str, ...], list[str]]:
    v, include = args
    return v.name, v.families, compile_errors(v, include=include)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m tests.lint_variants.c.compile [--quick | --full] [--include DIR] [-j N]`: compile every variant
    of a size; list those that do not compile (exit 1), grouped by their families."""
    from .generate import SIZES, variants

    ap = argparse.ArgumentParser(prog="python -m tests.lint_variants.c.compile", description=main.__doc__)
    ap.add_argument("--size", choices=SIZES, default="default")
    ap.add_argument("--quick", action="store_const", const="quick", dest="size")
    ap.add_argument("--full", action="store_const", const="full", dest="size")
    ap.add_argument("--include", help="a real CUDA toolkit's include directory (default: cuentry's 13.0 headers)")
    ap.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args(argv)
    vs = list(variants(a.size))
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        bad = [r for r in pool.map(_errors_of, [(v, a.include) for v in vs], chunksize=16) if r[2]]
    by = Counter(fams for _, fams, _ in bad)
    for name, _, errs in bad[:20]:
        print(f"{name}: {errs[0]}")
    print(f"{len(vs) - len(bad)} of {len(vs)} variants compile" +
          (f"; the families of those that do not: {dict(by.most_common(10))}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
