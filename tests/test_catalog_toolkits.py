"""Per-release facts (`Catalog.toolkits`, `Catalog.toolkit`): what each toolkit release's own headers declare.

The facts come from each release's real headers (`cuentry catalog build --history`). Here they are checked
for consistency with the catalog, for the facts the issues name, and against real headers wherever some are
on this machine: CUDA 13.0's (`$CUENTRY_CUDA_INCLUDE`), NVIDIA's runtime wheels installed in this
environment, and a folder of unpacked releases (`$CUENTRY_CUDA_HISTORY`: `include-11.8/`, `include-12.4/`,
..., as `cuentry catalog build --history` caches them in `~/.cache/cuentry-gen`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cuentry.catalog import Signature, Toolkit, catalog
from cuentry.errors import UsageError
from cuentry.names import format_version

from .conftest import CUDA_INCLUDE

CAT = catalog()
TOOLKITS = CAT.toolkits()
_TAG = re.compile(r"\b(?:struct|union|enum)\s+\w+")


def test_one_toolkit_per_release_of_the_history() -> None:
    assert [t.release for t in TOOLKITS] == list(CAT.history)
    for t in TOOLKITS:
        assert format_version(t.cuda_version) == t.release
        assert CAT.toolkit(t.release) is t and CAT.toolkit(t.cuda_version) is t
    with pytest.raises(UsageError) as err:
        CAT.toolkit("11.6")
    assert "11.7" in (err.value.hint or "")
    for bad in (True, 11075, "12", None):
        with pytest.raises(UsageError):
            CAT.toolkit(bad)  # type: ignore[arg-type]


def _alias(release: str, symbol: str, stream: str = "legacy") -> int | None:
    abi = CAT.toolkit(release).pfn_alias(symbol, stream)  # type: ignore[arg-type]
    return None if abi is None else abi.version


def test_the_facts_the_issues_name() -> None:
    """PFN_cuMemAdvise is _v8000 in 12.2-12.8 headers and _v12020 in 12.9 (issue 38); 13.0 dropped the
    unversioned names; CUDA_MEM_ALLOC_NODE_PARAMS_st is the tag before 12.2, _v1_st from 12.2 (issue 40)."""
    for release in ("11.7", "12.2", "12.4", "12.8"):
        assert _alias(release, "cuMemAdvise") == 8000
    assert _alias("12.9", "cuMemAdvise") == 12020
    assert all(_alias(t.release, "cuMemAdvise") is None for t in TOOLKITS if t.cuda_version >= 13000)
    assert CAT.toolkit("12.4").pfn_alias("cuMemcpy", "per_thread") == CAT.parse_pfn("PFN_cuMemcpy_v7000_ptds")
    assert _alias("12.4", "cuMemcpy") == 4000
    # cuda.h's own name: cuMemAdvise is the v1 function until 13.0 renames it to cuMemAdvise_v2
    assert CAT.toolkit("12.9").function("cuMemAdvise") == CAT.parse_pfn("PFN_cuMemAdvise_v8000")
    assert CAT.toolkit("13.0").function("cuMemAdvise") == CAT.parse_pfn("PFN_cuMemAdvise_v12020")
    assert CAT.toolkit("12.4").function("cuMemAlloc") == CAT.parse_pfn("PFN_cuMemAlloc_v3020")
    assert CAT.toolkit("12.4").function("cuMemcpy", "per_thread") == CAT.parse_pfn("PFN_cuMemcpy_v7000_ptds")
    node = CAT.parse_pfn("PFN_cuGraphAddMemAllocNode_v11040")
    for t in TOOLKITS:
        sig = t.signature(node)
        assert sig is not None
        tag = "CUDA_MEM_ALLOC_NODE_PARAMS_st" if t.cuda_version < 12020 else "CUDA_MEM_ALLOC_NODE_PARAMS_v1_st"
        assert sig.params[-1].canonical == f"struct {tag} *", t
        assert t.differs(node) == (t.cuda_version < 12020)
        assert t.defines(f"struct {tag}")
    assert not CAT.toolkit("11.8").defines("struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st")
    assert not CAT.toolkit("11.7").defines("enum CUlaunchAttributeID_enum")
    assert CAT.toolkit("11.8").defines("enum CUlaunchAttributeID_enum")
    assert CAT.toolkit("12.4").signature(CAT.parse_pfn("PFN_cuMemAdvise_v12020")) is not None
    assert CAT.toolkit("12.1").signature(CAT.parse_pfn("PFN_cuMemAdvise_v12020")) is None  # not declared there


@pytest.mark.parametrize("tk", TOOLKITS, ids=lambda t: t.release)
def test_facts_agree_with_the_catalog(tk: Toolkit) -> None:
    """Every alias and function names an ABI of its own symbol that the release declares; a release's own
    signature differs from the catalog's record in tags only (same parameters, same C shapes)."""
    some = 0
    renamed: dict[str, str] = {}
    for sym in CAT.symbols():
        for stream in ("legacy", "per_thread"):
            for abi in (tk.pfn_alias(sym, stream), tk.function(sym, stream)):
                if abi is not None:
                    some += 1
                    assert tk.declares(abi), (tk, sym, abi.pfn)
                    renamed.setdefault(sym, abi.symbol)
        for abi in CAT.abis(sym):
            sig = tk.signature(abi)
            assert (sig is None) == (tk.release not in abi.toolkits)
            if sig is None or sig == abi.signature:
                assert not tk.differs(abi)
                continue
            assert tk.differs(abi)
            ours = [_TAG.sub("T", p.canonical) for p in abi.signature.params]
            theirs = [_TAG.sub("T", p.canonical) for p in sig.params]
            assert ours == theirs and sig.returns == abi.signature.returns, (tk, abi.pfn)
            for p in sig.params:
                assert all(tk.defines(w) for w in _TAG.findall(p.canonical) if w.startswith("enum")), (tk, abi.pfn)
    assert some > 300 if tk.cuda_version < 13000 else some > 0
    # cuda.h renames one function to another one's name from 12.0 on: no other alias crosses symbols
    others = {k: v for k, v in renamed.items() if k != v}
    assert others == ({"cuGraphInstantiate": "cuGraphInstantiateWithFlags"} if tk.cuda_version >= 12000 else {})


# --- against real headers -------------------------------------------------------------------------------------


def _real_includes() -> dict[str, Path]:
    """Release -> an include directory with that release's real cuda.h and cudaTypedefs.h."""
    cands = [CUDA_INCLUDE, *(p.parent for s in sys.path if s for p in Path(s).glob("nvidia/cu*/include/cuda.h"))]
    hist = os.environ.get("CUENTRY_CUDA_HISTORY")
    if hist:
        cands += sorted(Path(hist).glob("include-*"))
    out: dict[str, Path] = {}
    for inc in cands:
        try:
            m = re.search(r"^#define CUDA_VERSION (\d+)", (inc / "cuda.h").read_text(errors="replace"), re.M)
        except OSError:
            continue
        if m and (inc / "cudaTypedefs.h").is_file():
            out.setdefault(format_version(int(m.group(1))), inc)
    return out


REAL = _real_includes()
PFNS = frozenset(a.pfn for a in CAT)
_REAL_IDS = [t.release for t in TOOLKITS if t.release in REAL]


def _cxx() -> str:
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    return cxx


def _fn_type(sig: Signature) -> str:
    params = ", ".join(p.canonical for p in sig.params) or "void"
    return f"{sig.returns} (*)({params})"


def _expand(cxx: str, inc: Path, names: list[str], per_thread: bool, tmp: Path) -> dict[str, str]:
    src = tmp / "names.cpp"
    src.write_text("#include <cuda.h>\n#include <cudaTypedefs.h>\n" + "".join(f'@@ "{n}" {n}\n' for n in names))
    cmd = [cxx, "-E", "-P", *(["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"] if per_thread else []), f"-I{inc}", str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {k: v.strip() for k, v in re.findall(r'^@@ "(\w+)" (.*)$', proc.stdout, re.M)}


@pytest.mark.skipif(not _REAL_IDS, reason="no real CUDA headers here (set CUENTRY_CUDA_INCLUDE or CUENTRY_CUDA_HISTORY)")
@pytest.mark.parametrize("release", _REAL_IDS)
def test_facts_match_the_real_headers(release: str, tmp_path: Path) -> None:
    """Each unversioned PFN_cuX expands to the alias's typedef (legacy and per-thread); each declared ABI's
    real PFN_ typedef and each `decltype(&cuX)` is exactly the type the facts give (std::is_same)."""
    tk, inc, cxx = CAT.toolkit(release), REAL[release], _cxx()
    # the interop typedef headers (EGL, GL, VDPAU) need their platform headers: cuda.h's functions only
    symbols = [s for s in CAT.symbols() if all(a.header == "cudaTypedefs.h" for a in CAT.abis(s))]
    for per_thread in (False, True):
        stream = "per_thread" if per_thread else "legacy"
        got = _expand(cxx, inc, [f"PFN_{s}" for s in symbols], per_thread, tmp_path)
        for s in symbols:
            abi = tk.pfn_alias(s, stream)  # type: ignore[arg-type]
            real = got[f"PFN_{s}"]  # 11.7: `#define PFN_cuGraphBatchMemOpNodeSetParams PFN_..._ _v11070`, no name
            have = real if real in PFNS else None  # 12.x: PFN_cuStreamGetId is PFN_cuStreamGetId_v12000_v12000
            assert have == (abi.pfn if abi is not None else None), (release, s, stream, real)
    typedefs = []  # the old ABIs' typedefs are declared under __CUDA_API_VERSION_INTERNAL, as the build reads them
    for a in CAT:
        if tk.declares(a) and a.header == "cudaTypedefs.h":
            sig = tk.signature(a)
            assert sig is not None
            typedefs.append(f"static_assert(std::is_same<{a.pfn}, {_fn_type(sig)}>::value, \"{a.pfn}\");")
    functions = []  # what user code sees: no internal macro
    for s in symbols:
        fn = tk.function(s)
        if fn is not None:
            sig = tk.signature(fn)
            assert sig is not None
            functions.append(f"static_assert(std::is_same<decltype(&{s}), {_fn_type(sig)}>::value, \"{s}\");")
    assert len(typedefs) > 500 and len(functions) > 300
    for checks, defines in ((typedefs, ["-D__CUDA_API_VERSION_INTERNAL"]), (functions, [])):
        src = tmp_path / "exact.cpp"
        src.write_text("#include <type_traits>\n#include <cuda.h>\n#include <cudaTypedefs.h>\n" + "\n".join(checks) + "\n")
        proc = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-w", *defines, f"-I{inc}", str(src)],
                              capture_output=True, text=True, check=False, timeout=300)
        assert proc.returncode == 0, "\n".join(ln for ln in proc.stderr.splitlines() if "error" in ln)[:4000]


def test_release_facts_hold_no_header_text() -> None:
    text = (Path(str(__import__("cuentry").__file__)).parent / "_data" / "releases.json").read_text()
    for phrase in ("Copyright", "NVIDIA", "\\param", "Licensed", "@{", "/*", "//"):
        assert phrase not in text
