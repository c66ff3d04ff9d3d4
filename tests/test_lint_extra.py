"""The `lint` extra: the core library installs and imports no parser; `cuentry lint` of C-family files
without the extra says in one line how to get it (exit 2), and Python files still lint."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARSERS = ("clang", "tree_sitter", "tree_sitter_cpp", "tree_sitter_cuda")   # libclang; the retired engine's too

# Run in a child: the parsers made unimportable (as in an install without the extra), then the script.
_BLOCK = textwrap.dedent("""
    import sys
    BLOCKED = {blocked!r}
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None
    if BLOCKED:
        sys.meta_path.insert(0, Block())
""")


def _child(script: str, *, blocked: tuple[str, ...] = PARSERS, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    code = _BLOCK.format(blocked=set(blocked)) + textwrap.dedent(script)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_the_core_depends_on_no_parser() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = " ".join(meta["dependencies"])
    assert not any(p in deps for p in ("tree-sitter", "libclang", "pycparser"))
    extras = meta["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["lint"]} == {"libclang"}   # one engine, one parser (tree-sitter retired)
    assert extras["clang"] == ["cuentry[lint]"]          # the old name still installs it


def test_the_core_imports_no_parser(fake: dict[str, str], tmp_path: Path) -> None:
    """Importing cuentry, running a table, doctor, check, generate: no parser module is loaded (nor needed)."""
    manifest = ROOT / "examples" / "c" / "kern.toml"
    got = _child(f"""
        import io, os, sys
        os.environ["CUENTRY_FAKE_DRIVER_VERSION"] = "13000"
        import cuentry
        from cuentry import Table, required
        from cuentry.driver import Driver
        from cuentry.cli import main
        d = Driver.load({fake["full"]!r})
        t = Table("x", [required("cuDeviceGetCount", 2000)], stream="legacy", source=d)
        assert t.cuDeviceGetCount.address
        rcs = [main(["doctor", "--driver", {fake["full"]!r}], stdout=io.StringIO(), stderr=io.StringIO()),
               main(["generate", "c", {str(manifest)!r}], stdout=io.StringIO(), stderr=io.StringIO()),
               main(["check", {str(manifest)!r}, "--driver", {fake["full"]!r}], stdout=io.StringIO(),
                    stderr=io.StringIO())]
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {set(PARSERS)!r})
        print(rcs, loaded)
    """, blocked=())
    assert got.returncode == 0, got.stderr
    rcs, loaded = got.stdout.strip().split("] ")
    assert loaded == "[]", got.stdout
    assert rcs == "[0, 0, 0"


def test_lint_without_the_extra(tmp_path: Path) -> None:
    (tmp_path / "loader.cpp").write_text('#include <cuda.h>\nvoid f(void **p) { cuGetProcAddress("cuInit", p, 2000, 0, 0); }\n')
    (tmp_path / "loader.py").write_text('from ctypes import CDLL, POINTER, c_size_t, c_uint64\nlib = CDLL("libcuda.so.1")\n'
                                        'alloc = lib.cuMemAlloc\nalloc.argtypes = [POINTER(c_uint64), c_size_t]\n')
    got = _child(f"""
        import os, sys
        from cuentry.cli import main
        rc_c = main(["lint", {str(tmp_path / "loader.cpp")!r}])
        rc_dir = main(["lint", "--json", {str(tmp_path)!r}], stdout=open(os.devnull, "w"))
        print("RC", rc_c, rc_dir, file=sys.stderr)
        rc_py = main(["lint", "--json", {str(tmp_path / "loader.py")!r}])
        print("RC", rc_py, file=sys.stderr)
    """)
    assert got.returncode == 0, got.stderr
    errs = got.stderr.strip().splitlines()
    assert errs[-2:] == ["RC 2 1", "RC 1"], got.stderr       # a directory: its Python files linted, its C ones not
    lines = [e for e in errs if not e.startswith("RC")]
    assert len(lines) == 1 and "pip install 'cuentry[lint]'" in lines[0]                 # one line
    doc = json.loads(got.stdout)
    assert [f["code"] for f in doc["findings"]] == ["CE011"]                              # Python still linted


def test_a_directory_without_the_extra_lints_its_python_and_names_the_c_files_in_one_line(tmp_path: Path) -> None:
    """Issue 41: on the core install, `cuentry lint src/` lints the Python files and says in one line that the
    C-family files need the extra (they are not linted: exit 1 as for any file not linted)."""
    (tmp_path / "a.cpp").write_text('#include <cuda.h>\nvoid f(void **p) { cuGetProcAddress("cuInit", p, 2000, 0, 0); }\n')
    (tmp_path / "b.cu").write_text("int x;\n")
    (tmp_path / "loader.py").write_text('from ctypes import CDLL, POINTER, c_size_t, c_uint64\nlib = CDLL("libcuda.so.1")\n'
                                        'alloc = lib.cuMemAlloc\nalloc.argtypes = [POINTER(c_uint64), c_size_t]\n')
    got = _child(f"""
        import sys
        from cuentry.cli import main
        print("RC", main(["lint", {str(tmp_path)!r}]), file=sys.stderr)
    """)
    assert got.returncode == 0, got.stderr
    assert got.stderr.strip().splitlines()[-1] == "RC 1", got.stderr
    lines = [ln for ln in (got.stdout + got.stderr).splitlines() if "cuentry[lint]" in ln]
    assert len(lines) == 1 and re.match(r"2 files not linted \(.*a\.cpp, .*b\.cu\): linting C, C\+\+ and CUDA files needs "
                                        r"the lint extra", lines[0]), got.stdout + got.stderr
    assert "loader.py:4:1: CE011 " in got.stdout, got.stdout     # the Python file is linted (at its argtypes)


def test_the_library_api_says_the_same() -> None:
    got = _child("""
        from cuentry.errors import UsageError
        from cuentry.lint import lint_text
        try:
            lint_text("int x;", "a.c")
        except UsageError as exc:
            print(exc)
        findings, unit = lint_text("import ctypes\\n", "a.py")
        print(unit.lang)
    """)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == [
        "linting C, C++ and CUDA files needs the lint extra: pip install 'cuentry[lint]' (Python files lint without it)",
        "python"]


@pytest.mark.skipif(__import__("importlib").util.find_spec(PARSERS[0]) is not None,
                    reason="the lint extra is installed (CI checks this in a venv without it)")
def test_really_without_the_extra(tmp_path: Path) -> None:
    """In an install without the extra (CI's plain `pip install .` venv), the same message with nothing blocked."""
    (tmp_path / "a.c").write_text("int x;\n")
    got = _child(f"""
        from cuentry.cli import main
        raise SystemExit(main(["lint", {str(tmp_path / "a.c")!r}]))
    """, blocked=())
    assert got.returncode == 2 and "pip install 'cuentry[lint]'" in got.stderr
