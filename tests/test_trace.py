"""cuentry trace on the fake driver: C test programs built here, run with and without the interposer."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cuentry import audit, interpose
from cuentry import trace as tr
from cuentry.cli import main
from cuentry.errors import UsageError

from .tracehelp import TRACE_DATA, compile_program, plain_run

pytestmark = pytest.mark.usefixtures("private_cache")  # builds go to the test session's cache (tests/conftest.py)


def run(req: str, lib: str, *cmds: str, **kw: Any) -> tr.TraceReport:
    return tr.run([req, lib, *cmds], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def seen(report: tr.TraceReport, api: str = "cuGetProcAddress_v2") -> dict[tuple[str, int | None, int | None], tr.Request]:
    return {(r.symbol, r.version, r.flags): r for r in report.requests if r.api == api}


def codes(report: tr.TraceReport) -> set[tuple[str, str, int | None, int | None]]:
    return {(f.code, f.symbol, f.version, f.flags) for f in report.findings}


# --- what is recorded ----------------------------------------------------------------------

CORRECT = ("gpa2:cuMemAlloc:3020:1", "gpa2:cuCtxCreate:11040:1", "gpa2:cuMemcpyHtoD:3020:1",
           "gpa2:cuDeviceGetUuid:11040:0", "rt:cuDeviceGetUuid:9020:1", "dlsym:cuDriverGetVersion",
           "gpa1:cuInit:2000:1")


def test_output_and_exit_code_untouched(req: str, lib: str) -> None:
    cmds = [req, lib, *CORRECT, "gpa2:cuMemAlloc:13000:1", "self:cuInit:2000:1", "ver", "verp"]
    base = plain_run(cmds)
    assert base.returncode == 7
    interposer = str(interpose.build())
    env = tr.environment(interposer, base=dict(os.environ))
    traced = subprocess.run(cmds, capture_output=True, text=True, env=env, check=False)
    assert (traced.returncode, traced.stdout, traced.stderr) == (base.returncode, base.stdout, base.stderr)
    rep = tr.run(cmds, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert rep.exit_code == 7


def test_requests_recorded(req: str, lib: str) -> None:
    rep = run(req, lib, "gpa2:cuMemAlloc:3020:1", "gpa2:cuMemAlloc:3020:1", "gpa2:cuMemcpy:7000:2",
              "gpa2:cuMemAlloc:99999:1", "gpa2:cuMemAlloc:1999:1", "gpa2:cuMemAlloc_v2:3020:1",
              "gpa2:cuCtxCreate:12050:1", "dlsym:cuMemAlloc")
    got = seen(rep)
    a = got[("cuMemAlloc", 3020, 1)]
    assert (a.result_name, a.query_name, a.export, a.count, a.caller, a.query_given) == (
        "CUDA_SUCCESS", "CU_GET_PROC_ADDRESS_SUCCESS", "cuMemAlloc_v2", 2, req, True)
    assert got[("cuMemcpy", 7000, 2)].export == "cuMemcpy_ptds"
    assert got[("cuCtxCreate", 12050, 1)].export == "cuCtxCreate_v4"
    above = got[("cuMemAlloc", 99999, 1)]
    assert (above.result_name, above.query_name, above.export) == ("CUDA_ERROR_INVALID_VALUE", None, None)
    assert got[("cuMemAlloc", 1999, 1)].query_name == "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT"
    assert got[("cuMemAlloc_v2", 3020, 1)].query_name == "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND"
    dl = seen(rep, "dlsym")
    assert dl[("cuMemAlloc", None, None)].export == "cuMemAlloc"
    assert dl[("cuGetProcAddress_v2", None, None)].export == "cuGetProcAddress_v2"  # the program's own look-up
    assert rep.driver_version == 13000 and rep.driver_path == lib
    assert [p.exe for p in rep.processes] == [req]


def test_getter_asked_for_itself_is_followed(req: str, lib: str) -> None:
    rep = run(req, lib, "self:cuInit:2000:1", "verp")
    got = seen(rep)
    assert got[("cuGetProcAddress", 12000, 1)].export == "cuGetProcAddress_v2"
    assert got[("cuInit", 2000, 1)].count == 1            # asked through the pointer the driver gave
    assert got[("cuDriverGetVersion", 2020, 1)].count == 1


def test_threads_are_counted(req: str, lib: str) -> None:
    rep = run(req, lib, "threads:8:500:cuMemAlloc:3020:1")
    assert seen(rep)[("cuMemAlloc", 3020, 1)].count == 4000


def test_fork_exec_and_closed_stdout(req: str, lib: str) -> None:
    rep = run(req, lib, "gpa2:cuInit:2000:1", "fork", "gpa2:cuMemAlloc:3020:1", "spawn", "closeout",
              "gpa2:cuMemFree:3020:1")
    got = seen(rep)
    assert {("cuInit", 2000, 1), ("cuMemAlloc", 3020, 1), ("cuMemFree", 3020, 1)} <= set(got)
    assert all(r.count == 1 for r in got.values())       # the child's records are not the parent's again
    assert len(rep.processes) == 3
    assert rep.exit_code == 7


def test_program_linked_to_the_driver(req: str, lib: str, tmp_path: Path) -> None:
    d = str(Path(lib).parent)
    direct = compile_program(tmp_path / "direct", "-DDIRECT", f"-L{d}", "-l:libcuda.so.1", f"-Wl,-rpath,{d}")
    rep = run(str(direct), lib, "gpa2:cuMemAlloc:3020:1", "gpa2:cuMemAlloc:13000:1")
    got = seen(rep)
    assert got[("cuMemAlloc", 3020, 1)].export == "cuMemAlloc_v2"
    assert got[("cuMemAlloc", 3020, 1)].caller == str(direct)
    assert ("CT003", "cuMemAlloc", 13000, 1) in codes(rep)


def test_runtime_requests_attributed_to_the_caller(req: str, lib: str) -> None:
    rep = run(req, lib, "rt:cuDeviceGetUuid:11040:1", "rt:cuMemAlloc:12000:1")
    got = seen(rep, "cudaGetDriverEntryPointByVersion")
    r = got[("cuDeviceGetUuid", 11040, 1)]
    assert (r.caller, r.result_name, r.export) == (req, "cudaSuccess", "cuDeviceGetUuid_v2")
    assert ("CT003", "cuMemAlloc", 12000, 1) in codes(rep)


def test_rtld_next_still_means_after_the_caller(tmp_path: Path) -> None:
    """A library that wraps a function with dlsym(RTLD_NEXT) keeps getting the next one, not itself."""
    src = TRACE_DATA / "rtld_next.c"
    y = tmp_path / "liby.so"
    x = tmp_path / "libx.so"
    for out, define in ((y, "-DLIB_Y"), (x, "-DLIB_X")):
        subprocess.run(["cc", "-shared", "-fPIC", define, "-o", str(out), str(src), "-ldl"], check=True)
    prog = tmp_path / "main"
    subprocess.run(["cc", "-DMAIN", "-o", str(prog), str(src), f"-L{tmp_path}", "-Wl,--no-as-needed", "-lx", "-ly",
                    f"-Wl,-rpath,{tmp_path}", "-ldl"], check=True)
    base = plain_run([str(prog)])
    assert base.stdout.strip() == "value 12"
    rep = tr.run([str(prog)], stdout=subprocess.PIPE)
    assert rep.exit_code == 0
    res = subprocess.run([str(prog)], capture_output=True, text=True, check=False,
                         env=tr.environment(str(interpose.build()), emulate=12040))
    assert res.stdout.strip() == "value 12"


def test_no_trace_dir_means_pass_through(req: str, lib: str, tmp_path: Path) -> None:
    env = tr.environment(str(interpose.build()))
    env[interpose.TRACE_DIR_ENV] = "relative/dir"   # ignored: only an absolute directory is used
    out = subprocess.run([req, lib, "gpa2:cuMemAlloc:3020:1"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, check=False)
    assert out.returncode == 7 and "rc=0 st=0 p=1" in out.stdout
    assert not (tmp_path / "relative").exists()


# --- findings ---------------------------------------------------------------------------------

def test_findings_exactly(req: str, lib: str) -> None:
    rep = run(req, lib, *CORRECT, "gpa2:cuMemAlloc:13000:1", "gpa2:cuMemAlloc:1999:1", "gpa2:cuMemAlloc_v2:3020:1",
              "gpa2:cuMemAlloc:99999:1", "gpa2:cuStreamBeginCapture:10010:0", "gpa2:cuMemcpy:7000:2",
              "gpa2:cuMemAlloc:4:8", "dlsym:cuMemAlloc", "dlsym:cuMemAloc")
    assert codes(rep) == {
        ("CT003", "cuMemAlloc", 13000, 1),
        ("CT002", "cuMemAlloc", 1999, 1),
        ("CT001", "cuMemAlloc_v2", 3020, 1),
        ("CT003", "cuMemAlloc", 99999, 1),
        ("CT004", "cuMemAlloc", 99999, 1),
        ("CT005", "cuStreamBeginCapture", 10010, 0),
        ("CT006", "", None, None),
        ("CT009", "cuMemAlloc", 4, 8),
        ("CT002", "cuMemAlloc", 4, 8),
        ("CT007", "cuMemAlloc", None, None),
        ("CT001", "cuMemAloc", None, None),
    }
    by = {(f.code, f.symbol, f.version): f.message for f in rep.findings}
    assert "pin 3020" in by[("CT003", "cuMemAlloc", 13000)]
    assert "ask for 'cuMemAlloc' at 3020" in by[("CT001", "cuMemAlloc_v2", 3020)]
    assert all(f.caller == req and not f.runtime for f in rep.findings)
    sev = {f.code: f.severity for f in rep.findings if f.code in ("CT006", "CT009", "CT001", "CT002")}
    assert sev == {"CT006": "warning", "CT009": "error", "CT001": "error", "CT002": "error"}


def test_correct_requests_are_silent(req: str, lib: str) -> None:
    rep = run(req, lib, *CORRECT)
    assert len(rep.requests) >= len(CORRECT)
    assert rep.findings == ()


def test_runtime_tables_reported_separately(req: str, lib: str) -> None:
    rep = run(req, lib, "gpa2::0:0", "gpa2:cuStreamBeginCapture:10010:0", "gpa2:cuMemcpy:7000:2",
              "gpa2:cuMemAlloc:1999:1")
    assert rep.runtimes == (req,)
    assert all(r.runtime for r in rep.requests)
    # By design a runtime asks with flags 0 and in both modes: not reported; a pin that never resolves is.
    assert codes(rep) == {("CT002", "cuMemAlloc", 1999, 1)}
    assert all(f.runtime for f in rep.findings)


# --- the report and the CLI ----------------------------------------------------------------------

def test_json_schema(req: str, lib: str) -> None:
    d = json.loads(json.dumps(run(req, lib, "gpa2:cuMemAlloc:13000:1").to_dict()))
    assert set(d) >= {"driver", "requests", "findings"}
    assert set(d["requests"][0]) >= {"symbol", "version", "flags", "result", "query", "export", "caller", "count"}
    assert set(d["findings"][0]) >= {"symbol", "version", "flags", "caller", "code", "message"}
    assert d["driver"]["version"] == 13000


def test_cli_trace(req: str, lib: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    code = main(["trace", "--json", "-o", str(out), "--", req, lib, "gpa2:cuMemAlloc:13000:1"])
    assert code == 7                                        # the program's exit status
    d = json.loads(out.read_text())
    assert [f["code"] for f in d["findings"]] == ["CT003"]
    capfd.readouterr()
    code = main(["trace", "--check", "--", req, lib, "gpa2:cuMemAlloc:13000:1"])
    o = capfd.readouterr()
    assert code == 7
    assert "gpa2 cuMemAlloc 13000 1 rc=0" in o.out          # the program's output, on its stdout
    err = o.err
    assert err.index("CT003") < err.index("count")          # findings first, then the table
    assert "pin 3020" in err


def test_cli_check_fails_on_findings(req: str, lib: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--check", "--", req, lib, "gpa2:cuMemAlloc:13000:1", "exit:0"]) == 1
    assert main(["trace", "--check", "--", req, lib, "gpa2:cuMemAlloc:3020:1", "exit:0"]) == 0
    assert main(["trace", "--", req, lib, "gpa2:cuMemAlloc:13000:1", "exit:0"]) == 0
    assert main(["trace", "--", "sh", "-c", "kill -TERM $$"]) == 128 + 15


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace"]) == 2
    assert "no command given" in capsys.readouterr().err
    assert main(["trace", "--", "/nonexistent/program"]) == 2
    assert "command not found" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [[], "ls", [b"ls"], ["ls", "a\0b"], None])
def test_api_refuses_bad_commands(bad: Any) -> None:
    with pytest.raises(UsageError):
        tr.run(bad)


# --- the record file and the classifier without a process ------------------------------------

def test_parse_refuses_what_is_not_a_record() -> None:
    assert interpose.parse(b"") is None
    assert interpose.parse(b"CUETRC01" + b"\0" * 100) is None
    assert interpose.parse(b"X" * interpose.FILE_SIZE) is None


def test_read_skips_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "a.rec").write_bytes(b"junk")
    (tmp_path / "b.txt").write_text("x")
    os.symlink("/etc/passwd", tmp_path / "c.rec")
    assert interpose.read(tmp_path) == []


def test_classify_without_a_process() -> None:
    f = audit.classify("cuCtxCreate", 12000, 1)
    assert [x.code for x in f] == ["CT003"] and "cuCtxCreate_v3" in f[0].message
    assert audit.classify("cuCtxCreate", 11040, 1) == []
    assert audit.classify("cuCtxCreate", 12050, 1, driver_version=12040)[0].code == "CT004"
    assert [x.code for x in audit.classify("cuMemcpy", 7000, 0)] == ["CT005"]
    assert audit.classify("cuMemcpy", 7000, 0, runtime=True) == []
    assert [x.code for x in audit.classify("cuInit", None, 0, api="cudaGetDriverEntryPoint")] == ["CT008"]
    assert audit.classify("cuGetProcAddress", None, None, api="dlsym") == []
    assert audit.classify("cuCtxCreate_v4", None, None, api="dlsym") == []
    assert audit.classify("cuCtxCreate_v3", None, None, api="dlsym") == []   # a suffix written on purpose
    assert [x.code for x in audit.classify("cuCtxCreate", None, None, api="dlsym")] == ["CT007"]
    assert [x.code for x in audit.classify("cumemalloc", 3020, 1)] == ["CT001"]
    assert audit.is_runtime("/x/libcudart.so.13") and not audit.is_runtime("/x/libfoo.so")
    assert audit.mixed_modes("lib", [("cuMemcpy", 7000, 2), ("cuMemcpyHtoD", 3020, 1)])[0].code == "CT006"
    assert audit.mixed_modes("lib", [("cuMemcpy", 7000, 2), ("cuMemAlloc", 3020, 1)]) == []


def test_classify_never_raises_on_odd_input() -> None:
    import random

    rnd = random.Random(14)
    names = ["", "cu", "cuMemAlloc", "cuMemAlloc_v2", "cuMemcpy_ptds", "x" * 300, "cuGetProcAddress", "\u00e9",
             "cuCtxCreate", "CUMEMALLOC", "cuda", "cuMemAlloc\0"]
    apis = ["cuGetProcAddress_v2", "cuGetProcAddress", "cudaGetDriverEntryPointByVersion", "cudaGetDriverEntryPoint",
            "dlsym"]
    for _ in range(600):
        sym = rnd.choice(names)
        ver = rnd.choice([None, -1, 0, 1, 1999, 3020, 12050, 13000, 2**31 - 1, -(2**31)])
        flags = rnd.choice([None, 0, 1, 2, 3, 4, 2**63])
        for f in audit.classify(sym, ver, flags, api=rnd.choice(apis), driver_version=rnd.choice([None, 12040])):
            assert f.code in audit.CODES and f.message


def test_a_full_record_file_counts_what_it_drops(req: str, lib: str, tmp_path: Path) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"cuInit {v} 1\n" for v in range(1, interpose.SLOTS + 101)))
    rep = run(req, lib, f"file:{queries}")
    assert rep.exit_code == 7
    assert len(rep.requests) == interpose.SLOTS
    assert rep.dropped == 101      # 100 more versions, and the program's dlsym of the getter


def test_ten_thousand_distinct_requests_are_all_recorded(req: str, lib: str, tmp_path: Path) -> None:
    """Issue 42: a program that asks for 10,000 distinct requests (misspelled names among them, the slowest
    to judge) has every one in the report, none dropped."""
    from cuentry.catalog import catalog

    syms = catalog().symbols()
    lines = [f"{syms[i % len(syms)]}{'' if i % 2 else 'X'} {1000 + i} {i % 3}" for i in range(10_000)]
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(lines) + "\n")
    rep = run(req, lib, f"file:{queries}")
    got = seen(rep)
    assert rep.exit_code == 7 and rep.dropped == 0 and not rep.incomplete
    assert len(got) == 10_000 and sum(r.count for r in got.values()) == 10_000
    assert {f.code for f in rep.findings} >= {"CT001", "CT002", "CT003"}


def test_fallbacks_are_the_first_later_success_below() -> None:
    """`audit.fallbacks` (read in n log n) answers as its definition does, on made-up request sequences."""
    import random

    def by_definition(reqs: list[tuple[str, int | None, bool]]) -> dict[int, int]:
        out = {}
        for i, (sym, ver, ok) in enumerate(reqs):
            if ok or ver is None:
                continue
            for sym2, ver2, ok2 in reqs[i + 1:]:
                if ok2 and sym2 == sym and ver2 is not None and 0 < ver2 < ver:
                    out[i] = ver2
                    break
        return out

    rnd = random.Random(42)
    for _ in range(2000):
        reqs = [(rnd.choice("abc"), rnd.choice([None, -1, 0, 1, 2, 3, 5, 8, 13]), rnd.random() < 0.5)
                for _ in range(rnd.randint(0, 40))]
        assert audit.fallbacks(reqs) == by_definition(reqs), reqs


def test_close_names_are_difflibs_answers() -> None:
    """The catalog's suggestions of a similar name (indexed, for traces of thousands of unknown names) are
    `difflib.get_close_matches`'s, name for name and in the same order."""
    import difflib
    import random

    from cuentry.catalog import catalog

    cat = catalog()
    names = list(cat.symbols())
    rnd = random.Random(7)
    words = list(names) + ["", "c", "cu", "\xff\u00e9", "cuMemAlloc_v2", "CUMEMALLOC"]
    for i in range(1500):
        s = rnd.choice(names)
        words.append(rnd.choice([s + str(i), s[:-1] + rnd.choice("aXz_"), "".join(rnd.sample(s, len(s))),
                                 s[:rnd.randint(0, len(s))], s[1:], s.lower(),
                                 "".join(rnd.choice("cuMemAlocGrphxyz_0123") for _ in range(rnd.randint(1, 40)))]))
    for w in words:
        got = [x.symbol for x in cat.suggest(w) if x.reason == "similar name"]
        want = difflib.get_close_matches(w, list(cat._raw), n=3, cutoff=0.75) if not [
            x for x in cat.suggest(w) if x.reason != "similar name"] else []
        assert got == want, w


def test_runtime_api_attributed_to_its_caller_and_the_runtime_table_reported(req: str, lib: str,
                                                                            tmp_path: Path) -> None:
    rt = tmp_path / "libcudart.so.99"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(rt), str(TRACE_DATA / "fakert.c"), "-ldl"], check=True)
    env = dict(os.environ, FAKERT_DRIVER=lib)
    rep = tr.run([req, str(rt), "rt:cuDeviceGetUuid:11040:1", "rt:cuMemAlloc:13000:1"], env=env,
                 stdout=subprocess.DEVNULL)
    mine = {(r.api, r.symbol, r.version): r for r in rep.requests if r.caller == req and r.api != "dlsym"}
    assert set(mine) == {("cudaGetDriverEntryPointByVersion", "cuDeviceGetUuid", 11040),
                         ("cudaGetDriverEntryPointByVersion", "cuMemAlloc", 13000)}
    assert mine[("cudaGetDriverEntryPointByVersion", "cuDeviceGetUuid", 11040)].export == "cuDeviceGetUuid_v2"
    inner = {(r.symbol, r.version) for r in rep.requests if r.caller == str(rt) and r.api == "cuGetProcAddress_v2"}
    # The runtime's own table is recorded as the runtime's; the forwarded requests are not counted twice.
    assert inner == {("", 0), ("cuMemAlloc", 3020), ("cuMemcpyHtoD", 3020), ("cuMemcpy", 7000)}
    assert rep.runtimes == (str(rt),)
    assert {(f.code, f.symbol, f.version, f.runtime) for f in rep.findings} == {("CT003", "cuMemAlloc", 13000, False)}


def test_requests_from_a_signal_handler_do_not_deadlock(req: str, lib: str) -> None:
    rep = tr.run([req, lib, "sigstorm:8000"], stdout=subprocess.DEVNULL, timeout=60)  # a deadlock times out
    assert rep.exit_code == 7
    got = seen(rep)
    assert got[("cuDriverGetVersion", 2020, 1)].count >= 1   # the handler's requests (some may be dropped)
    assert sum(1 for k in got if k[0] == "cuInit") + rep.dropped >= 8000


# --- hostile conditions: each reproduced in a subprocess with a timeout ------------------------

def _cli_sub(*argv: str, env: dict[str, str] | None = None, timeout: float = 60,
             cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """`cuentry ARGV` in a child (a hang or a signal cannot take the test session with it)."""
    import sys

    return subprocess.run([sys.executable, "-m", "cuentry", *argv], capture_output=True, text=True, check=False,
                          errors="backslashreplace", timeout=timeout, env=dict(os.environ if env is None else env), cwd=cwd)


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (root only)."""
    mnt = where / f"tmpfs-{size}"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                                            str(mnt)], capture_output=True, check=False).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """An 8 KiB tmpfs: room for a record file's header, not for its first records."""
    with small_tmpfs(tmp_path, "8k") as mnt:
        yield mnt


def test_record_space_that_runs_out_midway_keeps_what_was_recorded(req: str, lib: str, tmp_path: Path) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("".join(f"cuInit {v} 1\n" for v in range(1, 1001)))
    # header + the first callers' and slots' chunks fit (136 KiB), the next chunk of slots does not
    with small_tmpfs(tmp_path, "140k") as mnt:
        p = _cli_sub("trace", "--json", "--", req, lib, f"file:{queries}", "gpa2:cuMemAlloc:3020:1",
                     env=dict(os.environ, XDG_RUNTIME_DIR=str(mnt)))
    assert p.returncode == 7, p.stderr[-2000:]
    assert p.stdout.count("rc=0") == 1001                 # the program ran to its end, unharmed
    d = json.loads(p.stderr)
    assert d["incomplete"] == ["record space exhausted"]
    kept = sum(1 for r in d["requests"] if r["symbol"] == "cuInit")
    assert 200 < kept < 1000 and kept + d["dropped"] >= 1000


def test_an_empty_record_file_is_a_process_without_records() -> None:
    rec = interpose.parse(b"", "/x/p4242-1.rec")
    assert rec is not None and rec.pid == 4242 and rec.incomplete == (interpose.SPACE_EXHAUSTED,)
    assert interpose.parse(b"", "/x/other.rec") is None
    rep = tr.collect([rec])
    assert rep.traced and rep.incomplete == (interpose.SPACE_EXHAUSTED,)
    assert tr.collect([]).incomplete == (tr.NOT_LOADED,) and not tr.collect([]).traced


def test_a_full_record_file_system_is_no_signal(req: str, lib: str, tiny_tmpfs: Path) -> None:
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tiny_tmpfs))
    p = _cli_sub("trace", "--json", "--", req, lib, "gpa2:cuMemAlloc:3020:1", env=env)
    assert p.returncode == 7, p.stderr                  # the program's own status, not SIGBUS (135)
    assert "gpa2 cuMemAlloc 3020 1 rc=0 st=0 p=1" in p.stdout
    d = json.loads(p.stderr)
    _schema_valid(d)
    assert d["incomplete"] == ["record space exhausted"]
    assert [pr["incomplete"] for pr in d["processes"]] == [["record space exhausted"]]
    h = _cli_sub("trace", "--", req, lib, "gpa2:cuMemAlloc:3020:1", env=env)
    assert h.returncode == 7 and "trace incomplete: record space exhausted" in h.stderr
    c = _cli_sub("trace", "--check", "--", req, lib, "gpa2:cuMemAlloc:3020:1", "exit:0", env=env)
    assert c.returncode == 1 and "no findings" in c.stderr     # no finding, but the trace cannot vouch for that


def test_a_fifo_among_the_records_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p1-1.rec")
    (tmp_path / "p2-1.rec").write_bytes(b"\0" * 10)
    code = f"from cuentry import interpose; print(interpose.read({str(tmp_path)!r}))"
    import sys

    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def _static_program(tmp_path: Path) -> Path:
    from .tracehelp import cc

    out = tmp_path / "static"
    p = subprocess.run([cc(), "-O1", "-w", "-static", "-o", str(out), str(TRACE_DATA / "req.c"), "-ldl", "-pthread"],
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        pytest.skip(f"no static C library here: {p.stderr[-300:]}")
    return out


def test_a_static_program_is_reported_not_traced(tmp_path: Path) -> None:
    static = _static_program(tmp_path)
    p = _cli_sub("trace", "--check", "--", str(static), "/nonexistent/libcuda.so.1")
    assert p.returncode == 2, p.stderr
    assert "statically linked" in p.stderr and "cannot be traced" in p.stderr
    e = _cli_sub("emulate", "--driver", "12.4", "--", str(static), "/x")
    assert e.returncode == 2 and "statically linked" in e.stderr


def test_a_set_user_id_program_is_reported_not_traced(req: str, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a set-user-ID program of another user needs root")
    import shutil

    suid = tmp_path / "suid"
    shutil.copy(req, suid)
    os.chown(suid, 65534, 65534)
    os.chmod(suid, 0o4755)
    tmp_path.chmod(0o755)
    p = _cli_sub("trace", "--check", "--", str(suid), "/x")
    assert p.returncode == 2, p.stderr
    assert "set-user-ID" in p.stderr


def test_no_process_seen_is_an_error(tmp_path: Path) -> None:
    """A script whose interpreter is statically linked: the interposer loads in no process."""
    static = _static_program(tmp_path)
    script = tmp_path / "script"
    script.write_text(f"#!{static}\n")
    script.chmod(0o755)
    for argv in (["trace", "--check", "--", str(script)], ["emulate", "--driver", "12.4", "--", str(script)]):
        p = _cli_sub(*argv)
        assert p.returncode == 1, p.stderr
        assert "the interposer loaded in no process" in p.stderr
        assert "statically linked" in p.stderr and "LD_PRELOAD" in p.stderr
    q = _cli_sub("trace", "--json", "-o", str(tmp_path / "r.json"), "--", str(script))
    assert q.returncode == 1
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["processes"] == [] and d["incomplete"] == ["the interposer loaded in no process"]
    _schema_valid(d)


def _schema_valid(d: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parent.parent / "docs" / "schemas" / "trace.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(d)


def _json_trace(req: str, lib: str, *cmds: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    p = _cli_sub("trace", "--json", "--", req, lib, *cmds, env=env)
    assert p.returncode == 7, p.stderr
    d: dict[str, Any] = json.loads(p.stderr)
    _schema_valid(d)
    return d


def test_null_symbol_and_null_pfn_are_facts_and_findings(req: str, lib: str) -> None:
    d = _json_trace(req, lib, "gpa2:@null:3020:1", "gpa2::3020:1", "gpa2:cuInit:2000:1:nopfn")
    got = {(r["symbol"], r["version"], r["pfn_null"]): r for r in d["requests"] if r["api"] == "cuGetProcAddress_v2"}
    assert set(got) == {(None, 3020, False), ("", 3020, False), ("cuInit", 2000, True)}
    assert got[(None, 3020, False)]["result"] == 1 and got[(None, 3020, False)]["result_name"] == \
        "CUDA_ERROR_INVALID_VALUE"
    f = {(x["symbol"], x["code"]): x for x in d["findings"]}
    assert f[(None, "CT001")]["severity"] == "error" and "NULL symbol" in f[(None, "CT001")]["message"]
    assert f[("", "CT001")]["severity"] == "error"
    assert f[("cuInit", "CT010")]["severity"] == "error" and "NULL" in f[("cuInit", "CT010")]["message"]
    h = _cli_sub("trace", "--", req, lib, "gpa2:@null:3020:1", "gpa2:cuInit:2000:1:nopfn")
    assert "(NULL)" in h.stderr and "CT010" in h.stderr


def test_a_truncated_symbol_says_so(req: str, lib: str) -> None:
    long = "cu" + "X" * 200
    d = _json_trace(req, lib, f"gpa2:{long}:3020:1")
    r = next(r for r in d["requests"] if r["symbol"] and r["symbol"].startswith("cuX"))
    assert r["truncated"] is True and len(r["symbol"]) == interpose.SYMBOL_SIZE - 1
    assert [x["truncated"] for x in d["requests"] if x is not r] == [False] * (len(d["requests"]) - 1)
    h = _cli_sub("trace", "--", req, lib, f"gpa2:{long}:3020:1")
    assert "(truncated)" in h.stderr


def test_program_bytes_are_escaped_in_the_human_report(req: str, lib: str) -> None:
    p = _cli_sub("trace", "--", req, lib, "gpa2:cu\\e[31mRED\\nx\\xff:3020:1")
    assert p.returncode == 7
    err = p.stderr
    assert "\x1b" not in err and "\\x1b[31mRED\\nx\\xff" in err
    row = next(line for line in err.splitlines() if line.startswith("  v2 ") and "RED" in line)
    assert "count" not in row and row.rstrip().endswith("1")   # one table row: the newline did not split it
    d = _json_trace(req, lib, "gpa2:cu\\e[31mRED\\nx\\xff:3020:1")
    sym = next(r["symbol"] for r in d["requests"] if r["symbol"] and "RED" in r["symbol"])
    assert sym == "cu\x1b[31mRED\nx\\xff"        # JSON: every byte, non-UTF-8 as a visible \\x escape


def test_json_result_and_query_are_integers_with_names(req: str, lib: str) -> None:
    d = _json_trace(req, lib, "gpa2:cuMemAlloc:13000:1", "gpa2:cuMemAlloc:3020:1", "gpa2:cuMemAlloc:99999:1",
                    "dlsym:cuMemAlloc", "gpa2:cuMemcpy:7000:0")
    by = {(r["api"], r["symbol"], r["version"]): r for r in d["requests"]}
    ok = by[("cuGetProcAddress_v2", "cuMemAlloc", 3020)]
    assert (ok["result"], ok["result_name"], ok["query"], ok["query_name"]) == (0, "CUDA_SUCCESS", 0,
                                                                                "CU_GET_PROC_ADDRESS_SUCCESS")
    bad = by[("cuGetProcAddress_v2", "cuMemAlloc", 99999)]
    assert (bad["result"], bad["result_name"], bad["query"], bad["query_name"]) == (1, "CUDA_ERROR_INVALID_VALUE",
                                                                                    None, None)
    dl = by[("dlsym", "cuMemAlloc", None)]
    assert (dl["result"], dl["result_name"]) == (None, None)
    assert d["driver"] == {"path": lib, "version": 13000, "emulated": None}
    sev = {(f["code"], f["version"], f["severity"]) for f in d["findings"]}
    assert sev == {("CT003", 99999, "error"), ("CT004", 99999, "error"), ("CT007", None, "note"),  # 99999: above every driver
                   ("CT003", 13000, "warning"), ("CT005", 7000, "warning")}
    assert all(f["rule"] for f in d["findings"])


def test_a_fallback_taken_is_not_a_finding(req: str, lib: str) -> None:
    """Issue 25: an optional entry whose first request fails and whose fallback succeeds."""
    p = _cli_sub("emulate", "--driver", "12.4", "--json", "--", req, lib, "gpa2:cuCtxCreate:12050:1",
                 "gpa2:cuCtxCreate:11040:1", "gpa2:cuMemAlloc:3020:1", "gpa2:cuMemAlloc:13000:1")
    assert p.returncode == 7, p.stderr
    d = json.loads(p.stderr)
    _schema_valid(d)
    assert {(f["code"], f["symbol"], f["version"]) for f in d["findings"]} == {
        ("CT003", "cuMemAlloc", 13000), ("CT004", "cuMemAlloc", 13000)}   # no fallback after it
    first = next(r for r in d["requests"] if r["symbol"] == "cuCtxCreate" and r["version"] == 12050)
    assert first["fallback"] == 11040
    assert all(r["fallback"] is None for r in d["requests"] if r is not first)
    # the fallback must come after the failed request, from the same caller
    q = _cli_sub("emulate", "--driver", "12.4", "--json", "--", req, lib, "gpa2:cuCtxCreate:11040:1",
                 "gpa2:cuCtxCreate:12050:1")
    assert ("CT004", "cuCtxCreate", 12050) in {(f["code"], f["symbol"], f["version"])
                                               for f in json.loads(q.stderr)["findings"]}
    h = _cli_sub("emulate", "--driver", "12.4", "--trace", "--", req, lib, "gpa2:cuCtxCreate:12050:1",
                 "gpa2:cuCtxCreate:11040:1", "exit:0")
    assert "fallback 11040" in h.stderr and "no findings" in h.stderr


def test_output_path_checked_before_the_program_runs(req: str, lib: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    p = _cli_sub("trace", "-o", str(tmp_path / "missing" / "x.json"), "--", "sh", "-c", f"touch {marker}")
    assert p.returncode == 2 and "cannot write" in p.stderr
    assert not marker.exists()
    target = tmp_path / "victim"
    target.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    p = _cli_sub("trace", "--json", "-o", str(link), "--", "sh", "-c", f"touch {marker}")
    assert p.returncode == 2 and "symbolic link" in p.stderr
    assert target.read_text() == "keep" and not marker.exists()
    os.mkfifo(tmp_path / "fifo")
    p = _cli_sub("trace", "-o", str(tmp_path / "fifo"), "--", "true", timeout=30)
    assert p.returncode == 2 and "regular file" in p.stderr
    e = _cli_sub("emulate", "--driver", "12.4", "-o", str(link), "--", "sh", "-c", f"touch {marker}")
    assert e.returncode == 2 and not marker.exists()
    assert _cli_sub("trace", "-o", "/dev/null", "--", "true").returncode == 0     # a device is fine
    missing = tmp_path / "new.json"
    assert _cli_sub("trace", "-o", str(missing), "--", "/nonexistent/program").returncode == 2
    assert not missing.exists()                                   # made for the report, removed with the run
    out = tmp_path / "old.json"
    out.write_text("x" * 100000)
    assert _cli_sub("trace", "--json", "-o", str(out), "--", "true").returncode == 0
    assert json.loads(out.read_text())["exit_code"] == 0          # replaced, not appended to


def test_no_driver_seen_gives_a_hint(tmp_path: Path) -> None:
    p = _cli_sub("trace", "--", "true")
    assert p.returncode == 0
    assert "no driver seen" in p.stderr and "fake-driver" in p.stderr


def test_cuentry_driver_redirects_a_c_programs_dlopen(req: str, lib: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    assert plain_run([req, "libcuda.so.1", "ver"], env=env).returncode == 3      # no driver here by that name
    env["CUENTRY_DRIVER"] = lib
    p = _cli_sub("trace", "--json", "--", req, "libcuda.so.1", "ver", "gpa2:cuInit:2000:1", env=env)
    assert p.returncode == 7, p.stderr
    assert "ver rc=0 version=13000" in p.stdout
    assert json.loads(p.stderr)["driver"]["path"] == lib
    e = _cli_sub("emulate", "--driver", "12.4", "--", req, "libcuda.so.1", "ver", env=env)
    assert e.returncode == 7 and "ver rc=0 version=12040" in e.stdout
    env["CUENTRY_DRIVER"] = str(tmp_path / "missing.so")
    m = _cli_sub("trace", "--", req, "libcuda.so.1", "ver", env=env)
    assert m.returncode == 3 and "missing.so" in m.stdout + m.stderr     # the named driver, never another


def test_dlopen_keeps_the_callers_runpath(tmp_path: Path, lib: str) -> None:
    """The dlopen the interposer defines is a tail call: a bare name still searches the caller's RUNPATH."""
    (tmp_path / "sub").mkdir()
    sib = tmp_path / "sub" / "libsib.so"
    (tmp_path / "sib.c").write_text("int sib_value(void) { return 42; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(sib), str(tmp_path / "sib.c")], check=True)
    (tmp_path / "main.c").write_text(
        "#include <dlfcn.h>\n#include <stdio.h>\n"
        "int main(void) { void *h = dlopen(\"libsib.so\", RTLD_NOW); if (!h) { puts(dlerror()); return 3; }\n"
        "  int (*f)(void) = (int (*)(void))dlsym(h, \"sib_value\"); printf(\"value %d\\n\", f()); return 0; }\n")
    prog = tmp_path / "main"
    subprocess.run(["cc", "-o", str(prog), str(tmp_path / "main.c"), "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN/sub", "-ldl"], check=True)
    assert plain_run([str(prog)]).stdout == "value 42\n"
    for env in (dict(os.environ), dict(os.environ, CUENTRY_DRIVER=lib)):
        out = subprocess.run([str(prog)], capture_output=True, text=True, check=False, timeout=60,
                             env=tr.environment(str(interpose.build()), base=env))
        assert (out.returncode, out.stdout) == (0, "value 42\n"), out.stdout


def test_without_a_gpu_section_runs() -> None:
    """docs/trace.md 'Without a GPU': every command succeeds on the fake driver, and sees it."""
    from .tracehelp import run_shell_block, section_block

    block = section_block("trace.md", "## Without a GPU")
    assert block.count("cuentry trace") == 3
    p = run_shell_block(block, dict(os.environ))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count("driver 13.0 (13000) at ") == 3 and "no findings" in p.stderr


def test_safe_text_is_always_one_printable_line() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cuentry.cli.trace import safe

    @settings(max_examples=400, deadline=None)
    @given(st.binary(max_size=120))
    def check(raw: bytes) -> None:
        text = raw.decode("utf-8", "backslashreplace")   # how the reader decodes the program's bytes
        shown = safe(text)
        assert shown.isprintable() and "\x1b" not in shown and "\n" not in shown
        if text.isprintable():
            assert shown == text

    check()


def test_parse_never_raises_on_hostile_records() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    good = bytearray(interpose.FILE_SIZE)
    good[:8] = interpose.MAGIC
    good[8:12] = interpose.LAYOUT.to_bytes(4, "little")
    good[32:36] = interpose.SLOTS.to_bytes(4, "little")

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, interpose.FILE_SIZE - 1), st.integers(0, 255)), max_size=64),
           st.sampled_from([interpose.FILE_SIZE, interpose.HEADER_SIZE, 100, 0]))
    def check(edits: list[tuple[int, int]], size: int) -> None:
        data = bytearray(good)
        for off, val in edits:
            data[off] = val
        for off in (28, 36):    # ncallers, nrecords: often in range, sometimes huge
            if edits and edits[0][1] & 1:
                data[off:off + 4] = (edits[0][0] % (interpose.SLOTS + 10)).to_bytes(4, "little")
        rec = interpose.parse(bytes(data[:size]), "/x/p1-1.rec")
        if rec is not None:
            tr.collect([rec])   # and the report is built from whatever it holds

    check()


def test_collect_never_raises_on_hostile_slots() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    i32 = st.integers(-(2**31), 2**31 - 1)
    slot = st.tuples(st.integers(0, 9), i32, i32, st.integers(0, 2**64 - 1), i32, i32, i32, st.integers(0, 2**32 - 1),
                     st.integers(0, 2**64 - 1), st.binary(max_size=interpose.SYMBOL_SIZE),
                     st.binary(max_size=interpose.EXPORT_SIZE))

    @settings(max_examples=150, deadline=None)
    @given(st.lists(slot, min_size=1, max_size=12), st.integers(0, 3))
    def check(slots: list[Any], ncallers: int) -> None:
        data = bytearray(interpose.FILE_SIZE)
        interpose._HEADER.pack_into(data, 0, interpose.MAGIC, interpose.LAYOUT, 1, 0, 13000, 0, ncallers,
                                    interpose.SLOTS, len(slots), 0, 0, b"/bin/x", b"/lib/libcuda.so.1", 0)
        for i in range(ncallers):
            data[interpose.HEADER_SIZE + i * interpose.CALLER_SIZE] = ord("a") + i
        base = interpose.HEADER_SIZE + interpose.MAX_CALLERS * interpose.CALLER_SIZE
        for i, (api, ver, res, flags, query, caller, status, marks, count, sym, exp) in enumerate(slots):
            interpose._SLOT.pack_into(data, base + i * interpose._SLOT.size, 1, 0, api, ver, flags, res, query, caller,
                                      status & 1, status & 2, marks, count, sym, exp)
        rec = interpose.parse(bytes(data), "/x/p1-1.rec")
        assert rec is not None and len(rec.requests) == len(slots)
        rep = tr.collect([rec])
        json.dumps(rep.to_dict())
        import io

        from cuentry.cli.output import Out
        from cuentry.cli.trace import print_report
        buf = io.StringIO()
        print_report(rep, Out(buf, buf, False))
        assert "\x1b" not in buf.getvalue()

    check()


# --- issue 33.3 -------------------------------------------------------------------------------------------------


def test_quiet_trace_prints_only_errors(req: str, lib: str, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "trace", "--", req, lib, "gpa2:cuMemAlloc:13000:1", "exit:0"]) == 0
    assert capfd.readouterr().err == ""
    assert main(["trace", "-q", "--check", "--", req, lib, "gpa2:cuMemAlloc:13000:1", "exit:0"]) == 1
    err = capfd.readouterr().err
    assert err.startswith("cuentry trace --check: failed: 1 finding outside the CUDA runtimes") and "api" not in err


def test_check_fails_naming_no_driver_seen(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--check", "--", "true"]) == 1
    assert "cuentry trace --check: failed: no driver seen" in capfd.readouterr().err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="switching user needs root")
def test_a_child_that_switches_user_fails_the_check_naming_why(capfd: pytest.CaptureFixture[str]) -> None:
    """The gosu/su-exec pattern: the interposer and the records stay root's alone (nothing of the trace is
    readable or writable by others), so the trace says what it misses and --check fails naming it."""
    import shutil

    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("no setpriv (util-linux) to switch user with")
    ok = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "true"], check=False)
    if ok.returncode != 0:
        pytest.skip("setpriv cannot switch user here")
    # the child (any program: `true`) runs as nobody and succeeds; nothing it did could be traced
    code = main(["trace", "--check", "--", setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "true"])
    err = capfd.readouterr().err
    assert code == 1 and "setpriv switches user" in err and "--check: failed: incomplete: setpriv switches user" in err
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    for p in [cache, *cache.rglob("*")] if cache.is_dir() else []:
        assert not p.stat().st_mode & 0o002, f"{p} is writable by others"


def test_a_trace_with_an_unusable_cache_leaves_nothing_in_tmpdir(req: str, lib: str, tmp_path: Path) -> None:
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)  # shared with everyone: cuentry builds in a private folder of its own instead
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_CACHE_HOME": str(cache)}
    r = subprocess.run([sys.executable, "-m", "cuentry", "trace", "--", req, lib, "gpa2:cuMemAlloc:3020:1", "exit:0"],
                       env=env, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and "cuMemAlloc" in r.stderr, r.stderr
    assert not list(tmp.glob("cuentry-build-*")), list(tmp.iterdir())


def test_python_callers_are_named_python(lib: str, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(f"import cuentry\ncuentry.Driver.load({lib!r}).call('cuMemAlloc', 3020)\n")
    r = subprocess.run([sys.executable, "-m", "cuentry", "trace", "--", sys.executable, str(app)],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    heads = [ln for ln in r.stderr.splitlines() if " distinct, " in ln]
    assert heads and all(ln.startswith("Python (") for ln in heads), heads
