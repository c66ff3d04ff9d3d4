"""Every member of a generated table is the exact PFN typedef of the CUDA header the file includes (issue 40).

A table of every ABI of the catalog (one legacy table, one per-thread table) is compiled after each toolkit
release's `cuda.h`/`cudaTypedefs.h`: C checks each member against NVIDIA's `PFN_..._vN` typedef with
`_Generic`, C++ with `std::is_same`. Real headers where this machine has them (CUDA 13.0's, NVIDIA's runtime
wheels installed here, `$CUENTRY_CUDA_HISTORY/include-X.Y` as `cuentry catalog build --history` caches
them); everywhere, headers written from the catalog's per-release facts (`Catalog.toolkit`, themselves
checked against the real headers in tests/test_catalog_toolkits.py). Every member a release declares is compared,
in C and in C++ (issue 40: C++ no longer spells an enum that older releases lack by its integer type).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry import manifest
from cuentry.catalog import Abi, Toolkit, catalog
from cuentry.generate import generate_c
from cuentry.generate.model import plan

from .test_catalog_toolkits import REAL

CAT = catalog()
FULL = os.environ.get("CUENTRY_FULL_MATRIX") == "1"
LEAN = ("11.7", "11.8", "12.1", "12.2", "13.0")
pytestmark = pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                reason="does not use the call backend: runs in the default pass")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def _manifest(d: Path, stream: str) -> Path:
    """A table of every ABI of the mode (cudaTypedefs.h's: the interop ones need platform headers)."""
    rows = []
    for sym in CAT.symbols():
        for a in CAT.abis(sym):
            if a.header != "cudaTypedefs.h" or bool(a.variant) != (stream == "per_thread"):
                continue
            rows.append(f'  {{ symbol = "{a.symbol}", version = {a.version}, name = "{a.symbol}_{a.version}" }},')
    path = d / f"every_{stream}.toml"
    path.write_text(f'[table]\nname = "every_{stream}"\nstream = "{stream}"\noptional = [\n' + "\n".join(rows) + "\n]\n")
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[tuple[str, Abi]]]]:
    d = tmp_path_factory.mktemp("releases")
    out = {}
    for stream in ("legacy", "per_thread"):
        m = manifest.load(_manifest(d, stream))
        (d / f"every_{stream}.h").write_text(generate_c(m))
        out[stream] = (d, [(f"pfn_{member}", abi) for s in plan(m).slots for member, abi in s.members()])
    return out


def _facts_headers(tk: Toolkit, d: Path) -> Path:
    """cuda.h and cudaTypedefs.h of `tk` written from the catalog's per-release facts: the catalog's types, the
    enums only that release has, and each PFN typedef the release declares, spelled as it declares it."""
    from cuentry.lint.clang.headers import cuda_h

    inc = d / f"facts-{tk.release}"
    inc.mkdir(exist_ok=True)
    text = cuda_h(CAT, tk.release).replace("#define CUENTRY_GENERATED_CUDA_H 1", "#define CU_UUID_HAS_BEEN_DEFINED")
    known = set(CAT.types["enums"])
    extra = sorted({w.split()[1] for a in CAT for p in (tk.signature(a) or a.signature).params
                    for w in [p.canonical] if w.startswith("enum ") and w.split()[1] not in known})
    text = text.replace("/* aggregates, declared */", "".join(f"enum {e} {{ {e}_any = 1 }};\n" for e in extra) +
                        "/* aggregates, declared */")
    (inc / "cuda.h").write_text(text)
    typedefs, tags = [], set()
    for a in CAT:
        sig = tk.signature(a)
        if sig is not None and a.header == "cudaTypedefs.h":
            params = ", ".join(p.canonical for p in sig.params) or "void"
            typedefs.append(f"typedef {sig.returns} (CUDAAPI *{a.pfn})({params});")
            tags.update(re.findall(r"\b(?:struct|union) \w+", params))  # file scope, as the real headers have them
    typedefs[:0] = [f"{t};" for t in sorted(tags)]
    (inc / "cudaTypedefs.h").write_text("#include <cuda.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n" +
                                        "\n".join(typedefs) + "\n#ifdef __cplusplus\n}\n#endif\n")
    return inc


def _check(tables: dict[str, tuple[Path, list[tuple[str, Abi]]]], tk: Toolkit, inc: Path, tmp: Path,
           internal: bool) -> int:
    """Compile the checks, C and C++, every member the release declares against its PFN typedef; returns how many
    members were compared per language."""
    compared = 0
    defines = ["-D__CUDA_API_VERSION_INTERNAL"] if internal else []  # real headers declare old ABIs under it
    for stream, (hdrs, members) in tables.items():
        declared = [(m, a) for m, a in members if tk.declares(a)]
        assert len(declared) > (50 if stream == "per_thread" else 300)
        c_checks = [f'_Static_assert(_Generic(t.{m}, {a.pfn}: 1, default: 0), "{a.pfn} in {tk.release}");'
                    for m, a in declared]
        cxx_checks = [f'static_assert(std::is_same<decltype(t.{m}), {a.pfn}>::value, "{a.pfn} in {tk.release}");'
                      for m, a in declared]
        compared += len(declared)
        head = f'#include <cuda.h>\n#include <cudaTypedefs.h>\n#include "every_{stream}.h"\n'
        for lang, compiler, std, body in (("c", "gcc", "-std=c11", c_checks), ("c++", "g++", "-std=c++17", cxx_checks)):
            src = tmp / f"{stream}.{'c' if lang == 'c' else 'cpp'}"
            pre = "#include <type_traits>\n" if lang == "c++" else ""
            src.write_text(pre + head + f"void f(struct every_{stream}_table t);\nvoid f(struct every_{stream}_table t) {{\n" +
                           "\n".join(body) + "\n(void)t;\n}\n")
            proc = subprocess.run([_tool(compiler), std, "-fsyntax-only", "-w", *defines, f"-I{inc}", f"-I{hdrs}", str(src)],
                                  capture_output=True, text=True, check=False, timeout=300)
            errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
            assert proc.returncode == 0, f"{tk.release} {stream} {lang}:\n" + "\n".join(errors[:20])
    return compared


def test_no_member_is_spelled_apart_in_cxx(tables: dict[str, tuple[Path, list[tuple[str, Abi]]]]) -> None:
    """C++ members are spelled as C's: no enum replaced by its integer type for C++ alone (the type each release's
    PFN typedef has, where the release has the enum)."""
    for stream, (hdrs, _) in tables.items():
        text = (hdrs / f"every_{stream}.h").read_text()
        assert "MEMBER_SPELL" not in text
        assert "CUENTRY_SPELL_" in text  # enums older releases lack: the enum where the header has it


_FACTS = [t for t in CAT.toolkits() if FULL or t.release in LEAN]


@pytest.mark.parametrize("tk", _FACTS, ids=lambda t: t.release)
def test_every_member_is_the_release_typedef_headers_from_facts(tables: dict[str, tuple[Path, list[tuple[str, Abi]]]],
                                                                tmp_path: Path, tk: Toolkit) -> None:
    assert _check(tables, tk, _facts_headers(tk, tmp_path), tmp_path, internal=False) > 350


@pytest.mark.skipif(not REAL, reason="no real CUDA headers here (set CUENTRY_CUDA_INCLUDE or CUENTRY_CUDA_HISTORY)")
@pytest.mark.parametrize("release", sorted(REAL))
def test_every_member_is_the_release_typedef_real_headers(tables: dict[str, tuple[Path, list[tuple[str, Abi]]]],
                                                          tmp_path: Path, release: str) -> None:
    assert _check(tables, CAT.toolkit(release), REAL[release], tmp_path, internal=True) > 350
