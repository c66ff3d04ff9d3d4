"""cuentry emulate on the fake driver: a 13.0 driver made to look like 11.4, 12.0, 12.4."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuentry import interpose
from cuentry import trace as tr
from cuentry.catalog import catalog
from cuentry.cli import main
from cuentry.errors import UsageError

from .tracehelp import plain_run

pytestmark = pytest.mark.usefixtures("private_cache")  # builds go to the test session's cache (tests/conftest.py)


def emulated(req: str, lib: str, version: int, *cmds: str) -> list[str]:
    out = subprocess.run([req, lib, *cmds], capture_output=True, text=True, check=False, timeout=60,
                         env=tr.environment(str(interpose.build()), emulate=version))
    assert out.returncode == 7, out.stderr
    return out.stdout.splitlines()


COMMANDS = ("gpa2:cuMemAlloc:3020:1", "gpa2:cuCtxCreate:12050:1", "gpa2:cuCtxCreate:11040:1",
            "gpa2:cuMulticastCreate:12010:1", "gpa2:cuMulticastCreate:12000:1", "gpa2:cuMemAlloc:-1:1",
            "ver", "verp", "dlsym:cuGetProcAddress_v2", "dlsym:cuGetProcAddress", "dlsym:cuCtxCreate_v4",
            "dlsym:cuCtxCreate_v3", "gpa1:cuCtxCreate:11040:1", "gpa1:cuCtxCreate:12050:1",
            "gpa1:cuMulticastCreate:11040:1")

EXPECTED = {
    12040: [
        "gpa2 cuMemAlloc 3020 1 rc=0 st=0 p=1",
        "gpa2 cuCtxCreate 12050 1 rc=1 st=-1 p=-1",        # above the driver: INVALID_VALUE, untouched
        "gpa2 cuCtxCreate 11040 1 rc=0 st=0 p=1",
        "gpa2 cuMulticastCreate 12010 1 rc=0 st=0 p=1",
        "gpa2 cuMulticastCreate 12000 1 rc=0 st=2 p=0",    # below its first ABI: VERSION_NOT_SUFFICIENT
        "gpa2 cuMemAlloc -1 1 rc=0 st=0 p=1",
        "ver rc=0 version=12040", "verp rc=0 version=12040",
        "dlsym cuGetProcAddress_v2 found", "dlsym cuGetProcAddress found",
        "dlsym cuCtxCreate_v4 null", "dlsym cuCtxCreate_v3 found",
        "gpa1 cuCtxCreate 11040 1 rc=0 st=-1 p=1", "gpa1 cuCtxCreate 12050 1 rc=1 st=-1 p=-1",
        "gpa1 cuMulticastCreate 11040 1 rc=500 st=-1 p=0",
    ],
    12000: [
        "gpa2 cuMemAlloc 3020 1 rc=0 st=0 p=1",
        "gpa2 cuCtxCreate 12050 1 rc=1 st=-1 p=-1",
        "gpa2 cuCtxCreate 11040 1 rc=0 st=0 p=1",
        "gpa2 cuMulticastCreate 12010 1 rc=1 st=-1 p=-1",
        "gpa2 cuMulticastCreate 12000 1 rc=0 st=1 p=0",    # newer than the driver: SYMBOL_NOT_FOUND
        "gpa2 cuMemAlloc -1 1 rc=0 st=0 p=1",
        "ver rc=0 version=12000", "verp rc=0 version=12000",
        "dlsym cuGetProcAddress_v2 found", "dlsym cuGetProcAddress found",
        "dlsym cuCtxCreate_v4 null", "dlsym cuCtxCreate_v3 found",
        "gpa1 cuCtxCreate 11040 1 rc=0 st=-1 p=1", "gpa1 cuCtxCreate 12050 1 rc=1 st=-1 p=-1",
        "gpa1 cuMulticastCreate 11040 1 rc=500 st=-1 p=0",
    ],
    11040: [
        # no cuGetProcAddress_v2 on an 11.x driver: dlsym gives NULL, so the program has none
        *(f"gpa2 {c.split(':')[1]} {c.split(':')[2]} 1 rc=-100 st=-1 p=-1" for c in COMMANDS[:6]),
        "ver rc=0 version=11040", "verp rc=-100 version=-1",
        "dlsym cuGetProcAddress_v2 null", "dlsym cuGetProcAddress found",
        "dlsym cuCtxCreate_v4 null", "dlsym cuCtxCreate_v3 found",
        "gpa1 cuCtxCreate 11040 1 rc=0 st=-1 p=1", "gpa1 cuCtxCreate 12050 1 rc=1 st=-1 p=-1",
        "gpa1 cuMulticastCreate 11040 1 rc=500 st=-1 p=0",
    ],
}


@pytest.mark.parametrize("version", sorted(EXPECTED))
def test_answers(req: str, lib: str, version: int) -> None:
    assert emulated(req, lib, version, *COMMANDS) == EXPECTED[version]


def test_no_getter_before_11_3(req: str, lib: str) -> None:
    assert emulated(req, lib, 11020, "dlsym:cuGetProcAddress", "ver") == ["dlsym cuGetProcAddress null",
                                                                           "ver rc=0 version=11020"]


def test_a_newer_driver_cannot_be_emulated(req: str, lib: str) -> None:
    assert emulated(req, lib, 13050, "ver") == ["ver rc=0 version=13000"]  # the real one is older: it is reported


@pytest.mark.parametrize("version", [12000, 12040, 12080])
def test_every_answer_matches_an_old_driver(req: str, lib: str, version: int, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Emulating VERSION on a 13.0 driver answers each query as a VERSION driver does (the fake at VERSION)."""
    cat = catalog()
    lines = []
    skip = {"cuGetProcAddress", "cuDriverGetVersion", "cuEventCreateFromEGLSync"}  # wrapped, or not on Linux
    for sym in cat.symbols():
        if sym in skip or not any("linux" in a.platforms for a in cat.abis(sym)):
            continue
        vs = cat.versions(sym)
        for v in {*vs, vs[0] - 1, -1, version, version + 10}:
            for flags in (0, 1, 2):
                lines.append(f"{sym} {v} {flags}")
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(lines) + "\n")
    got = emulated(req, lib, version, f"file:{queries}")
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", str(version))
    want = plain_run([req, lib, f"file:{queries}"]).stdout.splitlines()
    assert len(got) == len(lines) > 3000
    assert got == want


def test_emulate_with_trace(req: str, lib: str) -> None:
    res = tr.emulate([req, lib, "gpa2:cuCtxCreate:12050:1", "gpa2:cuCtxCreate:11040:1", "dlsym:cuCtxCreate_v4"],
                     12040, trace=True, stdout=subprocess.DEVNULL)
    assert res.exit_code == 7 and res.report is not None
    rep = res.report
    assert rep.emulated == 12040 and rep.driver_version == 13000
    got = {(r.api, r.symbol, r.version): r for r in rep.requests}
    above = got[("cuGetProcAddress_v2", "cuCtxCreate", 12050)]
    assert (above.result_name, above.emulated) == ("CUDA_ERROR_INVALID_VALUE", True)
    assert got[("cuGetProcAddress_v2", "cuCtxCreate", 11040)].emulated is False
    hidden = got[("dlsym", "cuCtxCreate_v4", None)]
    assert (hidden.export, hidden.emulated) == (None, True)
    # 12050 failed and the fallback at 11040 succeeded: a fallback taken, not CT004 (issue 25)
    assert above.fallback == 11040 and rep.findings == ()


def test_table_takes_its_fallbacks(lib: str, tmp_path: Path) -> None:
    script = tmp_path / "table.py"
    script.write_text(
        "import json\n"
        "from cuentry import Table, optional, required\n"
        "t = Table('t', [required('cuMemAlloc', 3020),\n"
        "                optional('cuCtxCreate', 12050, fallback=optional('cuCtxCreate', 11040)),\n"
        "                optional('cuMulticastCreate', 12010)], stream='legacy')\n"
        "print(json.dumps({e['name']: [e['status'], e['abi']] for e in t.report()['entries']}))\n")
    env = dict(os.environ, CUENTRY_DRIVER=lib)

    def table(version: int | None) -> dict[str, list[str]]:
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, env=(
            tr.environment(str(interpose.build()), emulate=version, base=env) if version else env))
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    assert table(None) == {"cuMemAlloc": ["resolved", "PFN_cuMemAlloc_v3020"],
                           "cuCtxCreate": ["resolved", "PFN_cuCtxCreate_v12050"],
                           "cuMulticastCreate": ["resolved", "PFN_cuMulticastCreate_v12010"]}
    assert table(12000) == {"cuMemAlloc": ["resolved", "PFN_cuMemAlloc_v3020"],
                            "cuCtxCreate": ["fallback", "PFN_cuCtxCreate_v11040"],
                            "cuMulticastCreate": ["unavailable", "PFN_cuMulticastCreate_v12010"]}


@pytest.mark.parametrize(("release", "version", "form"), [("12.4", 12040, "v2"),
                                                          ("11.0", 11000, "none")])
def test_doctor_reports_the_emulated_driver(lib: str, capfd: pytest.CaptureFixture[str], release: str, version: int,
                                            form: str) -> None:
    code = main(["emulate", "--driver", release, "--", sys.executable, "-m", "cuentry", "doctor", "--driver", lib,
                 "--json"])
    out = capfd.readouterr().out
    assert code == 0
    d = json.loads(out)["driver"]
    assert (d["driver_version"], d["cuGetProcAddress"]) == (version, form)


def test_cli_emulate(req: str, lib: str, capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["emulate", "--driver", "12.0", "--", req, lib, "ver"]) == 7
    assert "version=12000" in capfd.readouterr().out
    out = tmp_path / "r.json"
    assert main(["emulate", "--driver", "12040", "--json", "-o", str(out), "--", req, lib,
                 "gpa2:cuCtxCreate:12050:1"]) == 7
    d = json.loads(out.read_text())
    assert d["driver"]["emulated"] == 12040 and d["findings"][0]["code"] == "CT004"
    assert main(["emulate", "--driver", "12.4"]) == 2
    assert main(["emulate", "--driver", "twelve", "--", req]) == 2


@pytest.mark.parametrize("bad", [0, -5, 1999, True, "12.4", 2**40])
def test_api_refuses_bad_versions(bad: object) -> None:
    with pytest.raises(UsageError):
        tr.emulate(["true"], bad)  # type: ignore[arg-type]


def test_cli_notes_a_driver_older_than_the_emulated_one(req: str, lib: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", "--driver", "13.5", "--trace", "--", req, lib, "ver"]) == 7
    o = capfd.readouterr()
    assert "version=13000" in o.out and "older than 13050" in o.err


def test_cli_without_a_compiler(req: str, lib: str, capfd: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert main(["emulate", "--driver", "12.4", "--", req, lib, "ver"]) == 2
    err = capfd.readouterr().err
    assert "cannot build the cuentry interposer" in err and "hint:" in err


def test_runtime_entry_point_follows_the_same_rules(req: str, lib: str) -> None:
    assert emulated(req, lib, 12040, "rt:cuCtxCreate:12050:1", "rt:cuCtxCreate:11040:1", "rt:cuStreamGetDevice:12080:1",
                    "rt:cuMulticastCreate:12000:1") == [
        "rt cuCtxCreate 12050 1 rc=1 st=-1 p=-1",        # cudaErrorInvalidValue: above the driver
        "rt cuCtxCreate 11040 1 rc=0 st=0 p=1",
        "rt cuStreamGetDevice 12080 1 rc=1 st=-1 p=-1",
        "rt cuMulticastCreate 12000 1 rc=0 st=2 p=0",     # below its first ABI, as on the real driver
    ]


def test_a_newer_driver_than_the_real_one_says_so(req: str, lib: str) -> None:
    """Issue 25: --driver 14.0 on a 13.0 driver changes nothing; a one-line note says so."""
    p = subprocess.run([sys.executable, "-m", "cuentry", "emulate", "--driver", "14.0", "--", req, lib, "ver"],
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 7                                  # the program's status, as documented
    assert "ver rc=0 version=13000" in p.stdout
    notes = [line for line in p.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and "14000" in notes[0] and "13000" in notes[0] and "no effect" in notes[0]


def test_without_a_gpu_section_runs() -> None:
    """docs/emulate.md 'Without a GPU': every command succeeds on the fake driver (the asserts are the checks)."""
    from .tracehelp import run_shell_block, section_block

    block = section_block("emulate.md", "## Without a GPU")
    assert block.count("cuentry emulate") == 3
    p = run_shell_block(block, dict(os.environ))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "emulating 12.0 (12000)" in p.stderr and "note:" not in p.stderr


def test_cli_emulate_check_is_a_gate_that_names_why(req: str, lib: str, capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 33.5: `emulate --check` exits 1 when the command succeeded but a request has a finding, no driver was
    seen, or the emulation had no effect; each reason is printed (also under -q). A clean run passes."""
    assert main(["emulate", "--check", "--driver", "12.4", "--", req, lib, "gpa2:cuMemAlloc:3020:1", "exit:0"]) == 0
    capfd.readouterr()
    assert main(["emulate", "--check", "--driver", "12.4", "--", req, lib, "gpa2:cuCtxCreate:12050:1",
                 "exit:0"]) == 1
    assert "cuentry emulate --check: failed: 1 finding outside the CUDA runtimes" in capfd.readouterr().err
    assert main(["-q", "emulate", "--check", "--driver", "13.5", "--", req, lib, "gpa2:cuMemAlloc:3020:1",
                 "exit:0"]) == 1
    assert "--check: failed: the real driver (13000) is older than 13050" in capfd.readouterr().err
    assert main(["emulate", "--check", "--driver", "12.4", "--", "true"]) == 1  # no driver loaded at all
    assert "--check: failed: no driver seen" in capfd.readouterr().err
    assert main(["emulate", "--driver", "12.4", "--", req, lib, "gpa2:cuCtxCreate:12050:1", "exit:0"]) == 0  # no gate


# A program as cuda.bindings and hand-written ctypes loaders are: it opens the driver, finds its functions by
# dlsym and cuGetProcAddress, and stops (exit 3) when one is missing. MODE says what it needs.
PROGRAM = r"""
import ctypes, os, sys
lib = ctypes.CDLL(os.environ["CUENTRY_DRIVER"])
mode = sys.argv[1]
if mode == "fail":
    sys.exit(5)
getter = "cuGetProcAddress" if mode == "v1" else "cuGetProcAddress_v2"
try:
    gpa = getattr(lib, getter)
except AttributeError as exc:   # dlsym gave NULL: ctypes reads dlerror() (a NULL message crashed it)
    print(exc, file=sys.stderr)
    sys.exit(3)
lib.cuInit(0)
if mode.startswith("version:"):
    v = ctypes.c_int()
    lib.cuDriverGetVersion(ctypes.byref(v))
    sys.exit(0 if v.value >= int(mode.split(":")[1]) else 4)
symbol, version = {"v2": (b"cuMemAlloc", 3020), "v1": (b"cuMemAlloc", 3020),
                   "multicast": (b"cuMulticastCreate", 12010)}[mode]
pfn, status = ctypes.c_void_p(), ctypes.c_int()
args = [symbol, ctypes.byref(pfn), version, 1] + ([] if mode == "v1" else [ctypes.byref(status)])
rc = gpa(*args)
sys.exit(0 if rc == 0 and pfn.value and status.value == 0 else 3)
"""


@pytest.fixture
def program(tmp_path: Path, lib: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    path = tmp_path / "needs.py"
    path.write_text(PROGRAM)
    monkeypatch.setenv("CUENTRY_DRIVER", lib)
    return [sys.executable, str(path)]


def test_a_program_stopped_by_a_hidden_export_is_told_which_and_since_when(
        program: list[str], capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 41: `emulate --driver 11.8` of a program that needs cuGetProcAddress_v2 names the export the
    emulated driver refused and the first driver that has it, not "no driver seen"; ctypes' dlsym of the
    hidden export raises its own AttributeError (the program used to die of SIGSEGV: dlerror() was NULL)."""
    assert main(["emulate", "--driver", "11.8", "--", *program, "v2"]) == 3
    err = capfd.readouterr().err
    assert "undefined symbol: cuGetProcAddress_v2 (not in the emulated driver" in err
    assert "the emulated driver 11.8 (11080) refused 1 request the real one answers:" in err
    assert "dlsym cuGetProcAddress_v2: first in driver 12.0 (12000) (asked by ctypes" in err
    assert "no driver seen" not in err
    assert main(["emulate", "--driver", "12.0", "--", *program, "v2"]) == 0
    assert "refused" not in capfd.readouterr().err
    # a request above the emulated driver: the release that first answers it
    res = tr.emulate([*program, "multicast"], 12000, stderr=subprocess.DEVNULL)
    from cuentry.emulation import refusals

    assert res.exit_code == 3 and res.seen is not None
    assert [r.describe() for r in refusals(res.seen)] == [
        "cuGetProcAddress_v2 cuMulticastCreate@12010: first in driver 12.1 (12010)"]


@pytest.mark.parametrize(("mode", "floor", "below", "refused"), [
    ("v2", 12000, 11080, ["dlsym cuGetProcAddress_v2: first in driver 12.0 (12000)"]),
    ("multicast", 12010, 12000, ["cuGetProcAddress_v2 cuMulticastCreate@12010: first in driver 12.1 (12010)"]),
    ("v1", 11030, 11020, ["dlsym cuGetProcAddress: first in driver 11.3 (11030)"]),
    ("version:12040", 12040, 12030, []),   # the program's own check: nothing refused, the floor all the same
])
def test_floor_finds_a_programs_real_minimum_driver(program: list[str], mode: str, floor: int, below: int,
                                                    refused: list[str]) -> None:
    from cuentry.emulation import candidates
    from cuentry.emulation import floor as find_floor

    res = find_floor([*program, mode])
    assert (res.floor, res.below, res.real) == (floor, below, 13000)
    assert [r.describe() for r in res.refused] == refused
    tried = {t.driver: t.exit_code for t in res.tries}
    assert tried[None] == 0 and tried[floor] == 0 and tried[below] != 0  # both sides of the floor were run
    assert len(res.tries) <= 2 + len(candidates(13000)).bit_length()   # bisected, not walked


def test_cli_floor(program: list[str], capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", "--floor", "--", *program, "v2"]) == 0
    o = capfd.readouterr()
    assert o.out.startswith("floor: 12.0 (12000), the lowest driver")
    assert "on 11.8 (11080) the emulated driver refused:" in o.out and "first in driver 12.0 (12000)" in o.out
    assert "cuentry emulate --floor: the real driver: exit 0" in o.err and "12.0 (12000): exit 0" in o.err
    assert main(["emulate", "--floor", "--json", "--", *program, "v2"]) == 0
    d = json.loads(capfd.readouterr().out)
    assert (d["floor"], d["floor_release"], d["below"], d["real_driver"]["version"]) == (12000, "12.0", 11080, 13000)
    assert d["refused"][0]["symbol"] == "cuGetProcAddress_v2" and d["refused"][0]["first"] == 12000
    assert main(["emulate", "--floor", "--", *program, "fail"]) == 1
    err = capfd.readouterr().err
    assert "no floor for" in err and "it fails on the real driver too (exit 5)" in err
    assert main(["emulate", "--floor", "--driver", "12.0", "--", *program, "v2"]) == 2
    assert main(["emulate", "--", *program, "v2"]) == 2
