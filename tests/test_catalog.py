"""The catalog: coverage of the real headers, exact types, keys, ordering, look-ups, suggestions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry.catalog import Catalog, c_declaration, catalog, format_version, parse_version
from cuentry.errors import HeaderParseError, UnknownSymbolError, UnknownVariantError, UnknownVersionError, UsageError

from .conftest import CUDA_INCLUDE

CAT = catalog()
SYMBOLS = CAT.symbols()
needs_headers = pytest.mark.skipif(not (CUDA_INCLUDE / "cudaTypedefs.h").is_file(),
                                   reason=f"no CUDA 13.0 headers at {CUDA_INCLUDE} (set CUENTRY_CUDA_INCLUDE)")
needs_cc = pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")


def test_keys_unique() -> None:
    keys = [(a.symbol, a.version, a.variant) for a in CAT]
    assert len(keys) == len(set(keys)) == len(CAT)
    assert len(CAT) > 700 and len(SYMBOLS) > 500


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_symbol_records(symbol: str) -> None:
    abis = CAT.abis(symbol)
    versions = [a.version for a in abis]
    assert versions == sorted(versions)
    assert CAT.versions(symbol) == tuple(sorted(set(versions)))
    newest = CAT.newest(symbol)
    assert newest.version == max(a.version for a in abis if not a.variant) or not any(not a.variant for a in abis)
    assert CAT.first_version(symbol) == min(a.version for a in abis if not a.variant) or all(a.variant for a in abis)
    for a in abis:
        assert a.signature.returns == "CUresult"
        assert a.pfn == f"PFN_{symbol}_v{a.version}" + (f"_{a.variant}" if a.variant else "")
        assert CAT.parse_pfn(a.pfn) == a
        assert a in CAT.at(symbol, a.version)
        assert a.exported is not None and a.exported.startswith(symbol)
        assert bool(a.variant) == a.exported.endswith(("_ptds", "_ptsz"))
        assert a.toolkits and set(a.toolkits) <= set(CAT.history)
        assert a.platforms
        # The driver's rule gives back each ABI when asked at its own version in its own mode.
        assert CAT.pick(symbol, a.version, a.stream) == a


def test_version_pick_follows_the_driver_rule() -> None:
    assert CAT.bind("cuMemAlloc", 3020).exported == "cuMemAlloc_v2"
    assert CAT.bind("cuMemAlloc", 2000).exported == "cuMemAlloc"
    assert [CAT.pick("cuCtxCreate", v).exported for v in (3020, 11040, 12050)] == \
        ["cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4"]
    assert CAT.bind("cuStreamBeginCapture", 10010, "per_thread").exported == "cuStreamBeginCapture_v2_ptsz"
    assert CAT.bind("cuStreamBeginCapture", 10010, "legacy").exported == "cuStreamBeginCapture_v2"
    # No per-thread variant: per-thread asks get the legacy ABI.
    assert CAT.bind("cuMemAlloc", 3020, "per_thread").exported == "cuMemAlloc_v2"
    assert CAT.pick("cuMemAlloc", 1999) is None


def test_lookups() -> None:
    assert CAT.first_version("cuDeviceGetUuid") == 9020
    assert CAT.versions("cuDeviceGetUuid") == (9020, 11040)
    assert CAT.first_version("cuMemcpy", "per_thread") == 7000
    assert CAT.first_toolkit("cuMemAlloc") == CAT.history[0]
    first = CAT.first_toolkit("cuMulticastCreate")
    assert first is not None and parse_version(first) >= 12010
    g = CAT.group("cuMemAlloc")
    assert g is not None and g.id == "CUDA_MEM" and g.title == "Memory Management"
    assert CAT.group("cuGraphCreate").id == "CUDA_GRAPH"  # type: ignore[union-attr]
    assert CAT.group("cuGreenCtxCreate").id == "CUDA_GREEN_CONTEXTS"  # type: ignore[union-attr]
    assert CAT.by_exported("cuCtxCreate_v3") == CAT.bind("cuCtxCreate", 11040)
    assert all(a.group == "CUDA_VA" for a in CAT.select(group="Virtual Memory Management"))
    assert all(a.version >= 12050 for a in CAT.select(since=parse_version("12.5")))


def test_history_spans_11_to_13() -> None:
    assert CAT.history[0].startswith("11.") and CAT.history[-1].startswith("13.")
    assert "12.0" in CAT.history and "13.0" in CAT.history


@pytest.mark.parametrize("name,symbol,version,stream", [
    ("cuMemAlloc_v2", "cuMemAlloc", 3020, "legacy"),
    ("cuMemcpy_ptds", "cuMemcpy", 7000, "per_thread"),
    ("cuStreamBeginCapture_v2_ptsz", "cuStreamBeginCapture", 10010, "per_thread"),
    ("cuCtxCreate_v4", "cuCtxCreate", 12050, "legacy"),
])
def test_suggest_suffixed(name: str, symbol: str, version: int, stream: str) -> None:
    s = CAT.suggest(name)[0]
    assert (s.symbol, s.version, s.stream) == (symbol, version, stream)


@pytest.mark.parametrize("name,expected", [("CUMemAlloc", "cuMemAlloc"), ("cumemalloc", "cuMemAlloc"),
                                           ("cuMemAloc", "cuMemAlloc"), ("cuCtxGetCurent", "cuCtxGetCurrent")])
def test_suggest_case_and_typos(name: str, expected: str) -> None:
    assert expected in [s.symbol for s in CAT.suggest(name)]


def test_unknown_symbol_error_names_alternatives() -> None:
    with pytest.raises(UnknownSymbolError) as ei:
        CAT.abis("cuMemAloc")
    assert ei.value.symbol == "cuMemAloc"
    assert any("cuMemAlloc" in s for s in ei.value.suggestions)
    assert "did you mean" in str(ei.value)
    assert CAT.suggest("") == ()


def test_unknown_version_error_lists_valid() -> None:
    with pytest.raises(UnknownVersionError) as ei:
        CAT.at("cuMemAlloc", 13000)
    assert ei.value.valid == (2000, 3020)
    assert "3020" in ei.value.hint
    with pytest.raises(UnknownVersionError):
        CAT.at("cuMemcpyHtoD", 13000)
    with pytest.raises(UnknownVariantError):
        CAT.bind("cuMemcpyHtoD", 3020, "per_thread")


def test_parse_pfn_errors() -> None:
    with pytest.raises(UsageError):
        CAT.parse_pfn("cuMemAlloc")
    with pytest.raises(UnknownVersionError):
        CAT.parse_pfn("PFN_cuMemAlloc_v3020_ptds")
    with pytest.raises(UnknownSymbolError):
        CAT.parse_pfn("PFN_cuNope_v1000")


@pytest.mark.parametrize("text,value", [("12.5", 12050), ("3.2", 3020), ("13000", 13000), (11040, 11040), ("12.4.1", 12040)])
def test_versions(text: str | int, value: int) -> None:
    assert parse_version(text) == value
    assert format_version(value) == ".".join(str(value // 1000 if i == 0 else (value % 1000) // 10) for i in range(2))


@pytest.mark.parametrize("bad", ["", "x", "12.", "-1", True, -5])
def test_bad_versions(bad: object) -> None:
    with pytest.raises(UsageError):
        parse_version(bad)  # type: ignore[arg-type]


def test_catalog_has_no_header_text() -> None:
    pkg = Path(__import__("cuentry").__file__).parent
    data = (pkg / "_catalog_data.py").read_text()
    body = data.split('"""', 2)[2]  # after the module's own docstring
    types = (pkg / "_data" / "types.json").read_text()
    for phrase in ("Copyright", "NVIDIA", "\\param", "Licensed", "@{", "/*", "//"):
        assert phrase not in body and phrase not in types


def test_records_are_frozen_values() -> None:
    a = CAT.bind("cuMemAlloc", 3020)
    with pytest.raises(AttributeError):
        a.version = 1  # type: ignore[misc]
    b = CAT.parse_pfn("PFN_cuMemAlloc_v3020")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.replace(version=2000) != a and "cuMemAlloc" in repr(a)
    assert dict(a.fields())["exported"] == "cuMemAlloc_v2"


# --- against the installed CUDA 13.0 headers -----------------------------------------


@pytest.fixture(scope="module")
def scanned13() -> object:
    pytest.importorskip("pycparser")
    from cuentry._catalog_build import _Builder, parse, preprocess

    b = _Builder()
    return b, b.extract(parse(preprocess(CUDA_INCLUDE), "13.0"))


@needs_headers
@needs_cc
def test_covers_every_installed_typedef_with_identical_types(scanned13: object) -> None:
    b, ex = scanned13  # type: ignore[misc]
    assert len(ex.pfn) > 600
    for (sym, ver, var), rec in ex.pfn.items():
        abi = next(a for a in CAT.at(sym, ver) if a.variant == var)
        got = [(p.type, p.canonical) for p in abi.signature.params]
        want = [(p[1], p[2]) for p in b.params(rec["node"], ex)]
        assert got == want, abi.pfn
        assert "13.0" in abi.toolkits


@needs_headers
@needs_cc
def test_round_trip_declarations_compile_against_the_real_header(tmp_path: Path) -> None:
    abis = [a for a in CAT if "13.0" in a.toolkits and "linux" in a.platforms]
    lines = ["#include <cuda.h>"] + [f"#include <{h}>" for h in sorted({a.header for a in abis})]
    for a in abis:
        mine = f"cuentry_{a.pfn}"
        lines.append(a.c_typedef(mine))
        lines.append(f'_Static_assert(__builtin_types_compatible_p({mine}, {a.pfn}), "{a.pfn}");')
    src = tmp_path / "roundtrip.c"
    src.write_text("\n".join(lines) + "\n")
    fake = Path(__import__("cuentry").__file__).parent / "_data" / "fake_include"
    proc = subprocess.run([os.environ.get("CC", "cc"), "-fsyntax-only", "-D__CUDA_API_VERSION_INTERNAL",
                           f"-I{CUDA_INCLUDE}", f"-idirafter{fake}", str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
    assert len(abis) > 600


@needs_headers
@needs_cc
def test_struct_layouts_match_the_real_header(tmp_path: Path, scanned13: object) -> None:
    """ctypes' layout of every aggregate equals the C compiler's, for those 13.0 defines as the catalog does.

    The catalog takes aggregates from the newest toolkit; a few grew after 13.0 and are left out here.
    """
    import ctypes

    from cuentry.calls import struct_type

    b, ex = scanned13  # type: ignore[misc]
    aggs = CAT.types["aggregates"]

    def same_in_13(tag: str) -> bool:
        node = ex.structs.get(tag)
        return node is not None and [b.render(b.expand(d.type, ex)) for d in node.decls] == \
            [f[2] for f in aggs[tag]["fields"]]

    # Structs passed by value must have the same size as 13.0's even where fields were renamed since.
    by_value = {p.canonical.split()[-1] for a in CAT for p in a.signature.params
                if re.fullmatch(r"(struct|union) \w+", p.canonical)}
    assert by_value and all(t in ex.structs for t in by_value)
    tags = [t for t, r in aggs.items() if not r["opaque"] and (same_in_13(t) or t in by_value)]
    checked = []
    for t in tags:
        try:
            checked.append((t, aggs[t]["kind"], ctypes.sizeof(struct_type(t))))
        except TypeError as exc:
            pytest.fail(f"{t}: {exc}")
    prog = ["#include <stdio.h>", "#include <cuda.h>", "#include <cudaEGL.h>", "#include <cudaGL.h>",
            "int main(void) {"]
    prog += [f'printf("%zu\\n", sizeof({k} {t}));' for t, k, _ in checked] + ["return 0; }"]
    src = tmp_path / "sizes.c"
    src.write_text("\n".join(prog))
    exe = tmp_path / "sizes"
    fake = Path(__import__("cuentry").__file__).parent / "_data" / "fake_include"
    proc = subprocess.run([os.environ.get("CC", "cc"), "-D__CUDA_API_VERSION_INTERNAL", f"-I{CUDA_INCLUDE}",
                           f"-idirafter{fake}", str(src), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:2000]
    sizes = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True).stdout.split()]
    wrong = [(t, s, c) for (t, _, s), c in zip(checked, sizes) if s != c]
    assert not wrong, f"ctypes size vs C size differ: {wrong[:5]}"
    assert len(sizes) == len(checked)
    assert len(checked) > 50


# --- the generator's errors -----------------------------------------------------------


def test_generator_rejects_a_directory_without_headers(tmp_path: Path) -> None:
    from cuentry._catalog_build import preprocess

    with pytest.raises(HeaderParseError, match="no cudaTypedefs.h"):
        preprocess(tmp_path)


@needs_cc
def test_generator_reports_malformed_header_with_line(tmp_path: Path) -> None:
    pytest.importorskip("pycparser")
    from cuentry._catalog_build import parse, preprocess

    (tmp_path / "cuda.h").write_text("typedef int CUresult;\n#define CUDAAPI\n")
    (tmp_path / "cudaTypedefs.h").write_text(
        "#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuFoo_v1000)(int a;\n")
    with pytest.raises(HeaderParseError) as ei:
        parse(preprocess(tmp_path), str(tmp_path / "cudaTypedefs.h"))
    assert ei.value.line is not None
    (tmp_path / "cudaTypedefs.h").write_text("#include <missing_header.h>\n")
    with pytest.raises(HeaderParseError, match="missing_header.h"):
        preprocess(tmp_path)


@needs_cc
def test_generator_builds_a_small_catalog(tmp_path: Path) -> None:
    pytest.importorskip("pycparser")
    from cuentry._catalog_build import build

    (tmp_path / "cuda.h").write_text(
        "#include <stdint.h>\ntypedef int CUresult;\n#define CUDAAPI\ntypedef struct CUctx_st *CUcontext;\n"
        "#ifndef __CUDA_API_VERSION_INTERNAL\n#define cuFoo cuFoo_v2\n#endif\n"
        "CUresult CUDAAPI cuFoo(CUcontext c);\nCUresult CUDAAPI cuFoo_v2(CUcontext c, uint64_t n);\n")
    (tmp_path / "cudaTypedefs.h").write_text(
        "#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuFoo_v1000)(CUcontext c);\n"
        "typedef CUresult (CUDAAPI *PFN_cuFoo_v12000)(CUcontext c, uint64_t n);\n")
    data = build(tmp_path, "12.0")
    small = Catalog(data)
    assert small.versions("cuFoo") == (1000, 12000)
    assert small.bind("cuFoo", 1000).exported == "cuFoo"
    assert small.bind("cuFoo", 12000).exported == "cuFoo_v2"
    assert [p.canonical for p in small.bind("cuFoo", 12000).signature.params] == ["struct CUctx_st *", "uint64_t"]
    assert data["aggregates"]["CUctx_st"]["opaque"] is True


def test_c_declaration_places_the_name_as_c_does() -> None:
    """One placement for the catalog's signatures and the generated C header."""
    assert c_declaration("int", "n") == "int n"
    assert c_declaration("CUdeviceptr *", "dptr") == "CUdeviceptr *dptr"
    assert c_declaration("void (*)(void *)", "fn") == "void (*fn)(void *)"
    assert c_declaration("const char *", "") == "const char *"
    abi = catalog().bind("cuMemAlloc", 3020)
    assert abi.signature.c_params() == "CUdeviceptr_v2 *dptr, size_t bytesize"
