"""The generated loader's failures reach the user, and its C++ needs no C++ runtime unless asked (issue 40).

* A 500-entry table whose last required entry fails (the fake driver at 10.1): the report's first lines,
  C++ `require()`'s `what()` (with `<NAME>_EXCEPTIONS`) and the aborting default's stderr all name that entry
  and why, whatever the table's size (main cut `what()` at 1,024 bytes, before the failing entry).
* The implementation file compiled as C++ references nothing of the C++ runtime (no libstdc++, no unwinder)
  unless `<NAME>_EXCEPTIONS` asks for exceptions: `nm -u` with and without `-fno-exceptions`; and a MinGW
  C++ program imports only Windows' own DLLs (`objdump -p`), where a MinGW cross compiler is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry import manifest
from cuentry.catalog import catalog
from cuentry.generate import generate_c

pytestmark = pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                reason="does not use the call backend: runs in the default pass")

LAST = "cuIpcOpenMemHandle@11000"
# What a 10.1 driver (exported names, no cuGetProcAddress) says about the last entry.
WHY = ("cuIpcOpenMemHandle [required] cuIpcOpenMemHandle@11000: version_above_driver", "version 11000 is newer than "
       "the driver (10.1 (10010)): this pin needs driver >= 11.0")
CXX_RUNTIME = re.compile(r"__cxa_|__gxx_personality|_Unwind_|_ZTV|_ZTI|_ZNSt|_ZSt|_Znw|_Zdl|__dynamic_cast")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """big.h: 499 required entries a 10.1 driver has (each ABI at or below 10010 under a few names), then one
    it does not have."""
    d = tmp_path_factory.mktemp("big")
    abis = [a for a in catalog() if not a.variant and a.version <= 10010 and a.header == "cudaTypedefs.h"
            and a.platforms == ("linux", "windows")]
    rows = [f'  {{ symbol = "{abis[i % len(abis)].symbol}", version = {abis[i % len(abis)].version}, name = "e{i}" }},'
            for i in range(499)]
    rows.append('  { symbol = "cuIpcOpenMemHandle", version = 11000, name = "cuIpcOpenMemHandle" },')
    (d / "big.toml").write_text('[table]\nname = "big"\nstream = "legacy"\nrequired = [\n' + "\n".join(rows) + "\n]\n")
    (d / "big.h").write_text(generate_c(manifest.load(d / "big.toml")))
    return d


_CXX = r"""
#include <cstdio>
#include <exception>
#include "big.h"
int main() {
    std::setvbuf(stdout, nullptr, _IONBF, 0);  // abort() loses a buffer
    const big_table *t = big_get();
    std::printf("STATUS %d\n", big_status());
    std::printf("FIRST [%.400s]\n", big_report(t));
    try {
        (void)big_driver::require();
        std::printf("NO THROW\n");
    } catch (const std::exception &e) {
        std::printf("WHAT [%s]\n", e.what());
    }
    return 0;
}
"""


@pytest.mark.parametrize("exceptions", [True, False])
def test_the_failing_entry_of_a_500_entry_table_reaches_the_user(big: Path, tmp_path: Path, fake: dict[str, str],
                                                                  exceptions: bool) -> None:
    (tmp_path / "main.cpp").write_text(_CXX)
    impl = "#define BIG_EXCEPTIONS\n" if exceptions else ""
    (tmp_path / "impl.cpp").write_text(impl + '#define BIG_IMPLEMENTATION\n#include "big.h"\n')
    exe = tmp_path / "big"
    _run([_tool("g++"), "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{big}", "-o", str(exe),
          str(tmp_path / "main.cpp"), str(tmp_path / "impl.cpp"), "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "10010", "LD_LIBRARY_PATH": str(Path(fake["nogpa"]).parent)}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert "STATUS 1" in proc.stdout, proc.stdout + proc.stderr
    first = proc.stdout.split("FIRST [", 1)[1].split("]\n", 1)[0]
    assert WHY[0] in first.splitlines()[1], first    # right after the header line, before 499 lines of "ok"
    if exceptions:
        assert proc.returncode == 0, proc.stderr
        what = proc.stdout.split("WHAT [", 1)[1]
        assert len(what) > 499 * 60            # the whole report, not 1,024 bytes of it
        assert WHY[0] in what and WHY[1] in what and "e498 [required]" in what, what[:3000]
    else:  # no exceptions asked for: the report to stderr, then abort()
        assert proc.returncode < 0 and "NO THROW" not in proc.stdout and "WHAT" not in proc.stdout
        assert WHY[0] in proc.stderr.splitlines()[1] and WHY[1] in proc.stderr


def _impl(tmp_path: Path, hdrs: Path, flags: list[str], exceptions: bool) -> str:
    src = tmp_path / "impl.cpp"
    src.write_text(("#define BIG_EXCEPTIONS\n" if exceptions else "") + '#define BIG_IMPLEMENTATION\n#include "big.h"\n'
                   "int use(void);\nint use(void) { return big_driver::require().pfn_e0 != nullptr; }\n")
    obj = tmp_path / "impl.o"
    _run([_tool("g++"), "-std=c++17", "-O2", *flags, f"-I{hdrs}", "-c", "-o", str(obj), str(src)])
    return _run([_tool("nm"), "-u", str(obj)]).stdout


@pytest.mark.parametrize("flags", [[], ["-fno-exceptions"], ["-fno-exceptions", "-fno-rtti"]], ids=" ".join)
def test_the_cxx_implementation_needs_no_cxx_runtime(big: Path, tmp_path: Path, flags: list[str]) -> None:
    """An implementation file compiled as C++ and calling require(): no symbol of libstdc++ or the unwinder."""
    undefined = _impl(tmp_path, big, flags, exceptions=False)
    assert not CXX_RUNTIME.findall(undefined), undefined
    assert "dlopen" in undefined and "abort" in undefined
    if not flags:  # asked for: it throws, and references the runtime (what the check above would catch)
        assert CXX_RUNTIME.findall(_impl(tmp_path, big, flags, exceptions=True))


def test_a_mingw_cxx_program_imports_only_windows_dlls(big: Path, tmp_path: Path) -> None:
    """MinGW's g++: a C++ program with the implementation file imports only Windows' own DLLs (main imported
    libstdc++-6.dll and libgcc_s_seh-1.dll); with BIG_EXCEPTIONS it imports the C++ runtime it asked for."""
    gxx, objdump = _tool("x86_64-w64-mingw32-g++"), _tool("x86_64-w64-mingw32-objdump")
    src = tmp_path / "w.cpp"
    dlls = {}
    for exceptions in (False, True):
        src.write_text(("#define BIG_EXCEPTIONS\n" if exceptions else "") + '#define BIG_IMPLEMENTATION\n#include "big.h"\n'
                       "int main() { return big_driver::require().pfn_e0 != nullptr ? 0 : 1; }\n")
        exe = tmp_path / f"w{int(exceptions)}.exe"
        _run([gxx, "-std=c++17", "-O2", f"-I{big}", "-o", str(exe), str(src)])
        dlls[exceptions] = {d.lower() for d in re.findall(r"DLL Name: (\S+)", _run([objdump, "-p", str(exe)]).stdout)}
    system = {"kernel32.dll", "msvcrt.dll", "ucrtbase.dll", "user32.dll", "advapi32.dll"}
    assert dlls[False] and dlls[False] <= system | {d for d in dlls[False] if d.startswith("api-ms-win-")}, dlls[False]
    assert "libstdc++-6.dll" in dlls[True], dlls[True]
