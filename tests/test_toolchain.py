"""cuentry.toolchain: the one compiler discovery, C-string quoting and cached compile."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuentry.errors import BuildError
from cuentry.toolchain import c_string, compile_cached, find_compiler


def test_find_compiler_honours_cc_words(monkeypatch: pytest.MonkeyPatch) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("CC", f"{Path(cc).name} -O0")
    assert find_compiler() == [cc, "-O0"]                      # CC="ccache gcc"-style word lists work
    assert find_compiler("cc")[0] == shutil.which("cc")       # an explicit one wins over $CC
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(BuildError, match="'/nonexistent/cc' was not found"):
        find_compiler(what="build x")                         # never a silent fallback to another compiler
    monkeypatch.setenv("CC", "gcc 'unterminated")
    with pytest.raises(BuildError, match="not a valid command line"):
        find_compiler()
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BuildError, match=r"no C compiler found \(looked for cc, gcc, clang\)"):
        find_compiler()


def test_c_string_refuses_non_str() -> None:
    class S(str):
        pass

    for bad in (b"x", 1, None, S("x")):
        with pytest.raises(TypeError):
            c_string(bad)  # type: ignore[arg-type]
    assert c_string('a"b\\c') == '"a\\"b\\\\c"'
    assert c_string("??=") == '"?\\?="'                       # no trigraph
    assert c_string("\n1") == '"\\0121"'                      # octal: cannot run into the next digit
    assert c_string("é") == '"\\303\\251"'


@pytest.fixture(scope="module")
def echo_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program that prints a C string literal's bytes, built from hypothesis' strings below."""
    return tmp_path_factory.mktemp("cstr")


@settings(max_examples=15, deadline=None)
@given(text=st.text(min_size=0, max_size=40))
def test_c_string_means_exactly_the_text(echo_exe: Path, text: str) -> None:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src = echo_exe / "e.c"
    src.write_text('#include <stdio.h>\nint main(void) { static const char s[] = ' + c_string(text) +
                   '; fwrite(s, 1, sizeof s - 1, stdout); return 0; }\n')
    exe = echo_exe / "e"
    subprocess.run([cc, "-std=c99", "-Wall", "-Werror", "-o", str(exe), str(src)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True).stdout
    assert out == text.encode("utf-8", "surrogatepass")


def test_compile_cached_builds_once_and_reports_errors(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    src = "int cuentry_toolchain_test(void) { return 42; }\n"
    a = compile_cached("tc", src, filename="libtc.so", source_name="tc.c", flags=["-shared", "-fPIC"], root=root)
    b = compile_cached("tc", src, filename="libtc.so", source_name="tc.c", flags=["-shared", "-fPIC"], root=root)
    assert a == b and a.is_file()
    with pytest.raises(BuildError, match="cannot build broken") as info:
        compile_cached("broken", "int x = ;\n", filename="libb.so", source_name="b.c", flags=["-shared", "-fPIC"],
                       root=root, what="build broken", hint="fix it")
    assert info.value.hint == "fix it"
