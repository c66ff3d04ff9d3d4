"""Run a program and see every entry-point request it makes; or run it as if on an older driver.

[run][cuentry.trace.run] starts a command with cuentry's interposer (`cuentry.interpose`)
preloaded, waits for it, and returns a [TraceReport][cuentry.trace.TraceReport]: every distinct
request of the process and its children (`cuGetProcAddress`/`_v2`,
`cudaGetDriverEntryPoint[ByVersion]` attributed to their real caller, `dlsym`
of driver exports), with a count, and the findings of `cuentry.audit`.

[emulate][cuentry.trace.emulate] runs a command so that the driver looks like an older one
(`cuDriverGetVersion` reports it, newer versions and symbols are refused the way
that driver would refuse them, newer exports are not found); with `trace=True`
it records at the same time.

The program's standard streams, behaviour and exit status are its own: the
interposer writes only to files in a private temporary directory, which is read
and removed when the command ends. Linux only (`LD_PRELOAD`); a statically
linked or set-user-ID program is not interposed.
"""

from __future__ import annotations

import os
import shutil
import stat
import struct
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any

from . import audit, interpose
from .catalog import Catalog, catalog
from .diagnostics import cu_result_name
from .errors import UsageError
from .names import QUERY_NAMES, RUNTIME_ERROR_NAMES, USER_SWITCHERS, VERSIONED_APIS, check_version

__all__ = [
    "NOT_LOADED",
    "NOT_LOADED_WHY",
    "NO_DRIVER_HINT",
    "SCHEMA",
    "EmulationResult",
    "Process",
    "Request",
    "TraceReport",
    "collect",
    "emulate",
    "environment",
    "python_caller",
    "run",
    "untraceable",
    "user_switch",
]


SCHEMA = 2

# What a trace can miss (TraceReport.incomplete): the record files ran out of space, or the
# interposer loaded in no process at all.
NOT_LOADED = "the interposer loaded in no process"
NOT_LOADED_WHY = ("the program (or the interpreter of its script) may be statically linked, set-user-ID or "
                  "given file capabilities (the dynamic loader then ignores LD_PRELOAD), or something cleared "
                  "LD_PRELOAD before it ran")
NO_DRIVER_HINT = ("no driver seen: the program resolved no driver entry point. Without a GPU, run it on "
                  "cuentry's fake driver: LD_LIBRARY_PATH=$(dirname $(cuentry fake-driver)) for a program that "
                  "opens libcuda.so.1 by name or links it, or CUENTRY_DRIVER=$(cuentry fake-driver) (docs/trace.md, "
                  "'Without a GPU')")


@dataclass(frozen=True)
class Request:
    """One distinct request and how many times it was made (one meaning per field; docs/trace.md)."""

    api: str
    symbol: str              # the name asked for; "" also for a NULL symbol (symbol_null)
    version: int | None      # None: the API takes no version (dlsym, cudaGetDriverEntryPoint)
    flags: int | None        # None: dlsym
    result: int | None       # the CUresult / cudaError_t; None for dlsym
    query: int | None        # the query result the driver wrote; None when it wrote none
    export: str | None       # the driver export the returned pointer equals; None: NULL; "?": no export
    caller: str              # the library (or program) that made the request
    count: int
    runtime: bool            # the request is a CUDA runtime's own table (libcudart or a static one)
    emulated: bool           # the emulation decided or changed the answer
    query_given: bool        # the caller passed a query-result pointer
    result_name: str | None = None   # result by name (CUDA_SUCCESS, cudaSuccess)
    query_name: str | None = None    # query by name (CU_GET_PROC_ADDRESS_SUCCESS)
    symbol_null: bool = False        # the caller passed a NULL symbol
    truncated: bool = False          # the symbol was longer than the record keeps: symbol is its start
    pfn_null: bool = False           # the caller passed a NULL result pointer
    fallback: int | None = None      # this failed request was followed by its fallback at that version

    @property
    def succeeded(self) -> bool:
        """The driver returned a function: success, a success query (if any), a non-NULL pointer."""
        return self.result in (0, None) and self.query in (0, None) and not self.pfn_null and self.export is not None

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "symbol": None if self.symbol_null else self.symbol, "truncated": self.truncated,
                "version": self.version, "flags": self.flags, "result": self.result,
                "result_name": self.result_name, "query": self.query, "query_name": self.query_name,
                "export": self.export, "pfn_null": self.pfn_null, "caller": self.caller, "count": self.count,
                "from_runtime": self.runtime, "emulated_answer": self.emulated, "query_given": self.query_given,
                "fallback": self.fallback}


@dataclass(frozen=True)
class Process:
    """One process the interposer loaded in (with or without requests)."""

    pid: int
    ppid: int
    exe: str
    requests: int
    dropped: int
    incomplete: bool = False   # its records are incomplete (record space exhausted)

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "ppid": self.ppid, "exe": self.exe, "request_count": self.requests,
                "dropped": self.dropped, "incomplete": [interpose.SPACE_EXHAUSTED] if self.incomplete else []}


@dataclass(frozen=True)
class TraceReport:
    """What a command asked the driver for, and what is wrong with it.

    `incomplete` lists what the trace misses (`NOT_LOADED`: the
    interposer loaded in no process, so nothing was seen; `"record space exhausted"`: a
    process's record file could not grow); `notes` are one-line remarks (no driver seen, an
    emulated version the real driver cannot be made to look like).
    """

    command: tuple[str, ...]
    exit_code: int
    driver_version: int | None
    driver_path: str | None
    emulated: int | None
    requests: tuple[Request, ...]
    findings: tuple[audit.Finding, ...]
    processes: tuple[Process, ...] = ()
    runtimes: tuple[str, ...] = ()
    dropped: int = 0
    incomplete: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def callers(self) -> tuple[str, ...]:
        """The calling libraries, in order of first appearance."""
        return tuple(dict.fromkeys(r.caller for r in self.requests))

    @property
    def traced(self) -> bool:
        """The interposer loaded in at least one process."""
        return bool(self.processes)

    def by_caller(self, caller: str) -> tuple[Request, ...]:
        return tuple(r for r in self.requests if r.caller == caller)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "command": list(self.command),
            "exit_code": self.exit_code,
            "driver": {"path": self.driver_path, "version": self.driver_version, "emulated": self.emulated},
            "requests": [r.to_dict() for r in self.requests],
            "findings": [f.to_dict() for f in self.findings],
            "runtimes": list(self.runtimes),
            "processes": [p.to_dict() for p in self.processes],
            "dropped": self.dropped,
            "incomplete": list(self.incomplete),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class EmulationResult:
    """What [emulate][cuentry.trace.emulate] returns.

    `report` is the trace when one was asked for; `seen` is always the run's report (the
    emulation records to know that it took effect), and `notes` its one-line remarks.
    """

    version: int
    exit_code: int
    report: TraceReport | None = field(default=None)
    seen: TraceReport | None = field(default=None, repr=False)

    @property
    def notes(self) -> tuple[str, ...]:
        return self.seen.notes if self.seen is not None else ()

    @property
    def incomplete(self) -> tuple[str, ...]:
        return self.seen.incomplete if self.seen is not None else ()


# --- collecting ------------------------------------------------------------------------


def _result_name(api: str, code: int, cat: Catalog) -> str | None:
    if api == "dlsym":
        return None
    if api.startswith("cuda"):
        return RUNTIME_ERROR_NAMES.get(code, f"cudaError({code})")
    return cu_result_name(code, cat)


def _ok(r: interpose.RawRequest) -> bool:
    return r.result == 0 and r.query in (0, None) and not r.pfn_null and r.export is not None


def _process_fallbacks(proc: interpose.ProcessRecord) -> dict[int, int]:
    """seq of each failed request of `proc` whose caller then took a fallback -> its version."""
    per_caller: dict[str, list[interpose.RawRequest]] = defaultdict(list)
    for r in sorted(proc.requests, key=lambda q: q.seq):
        if r.api in VERSIONED_APIS:
            per_caller[r.caller].append(r)
    out: dict[int, int] = {}
    for reqs in per_caller.values():
        for i, ver in audit.fallbacks([(r.symbol, r.version, _ok(r)) for r in reqs]).items():
            out[reqs[i].seq] = ver
    return out


def _merge(records: Sequence[interpose.ProcessRecord]) -> dict[tuple[Any, ...], list[Any]]:
    """Identical requests of all processes, counted; [count, request, fallback or None]."""
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for proc in records:
        taken = _process_fallbacks(proc)
        for r in proc.requests:
            key = (r.api, r.symbol, r.version, r.flags, r.result, r.query, r.export, r.caller, r.emulated,
                   r.status_given, r.symbol_null, r.pfn_null, r.truncated)
            fb = taken.get(r.seq)
            if key in merged:
                merged[key][0] += r.count
                if merged[key][2] != fb:   # a fallback only when every process took it
                    merged[key][2] = None
            else:
                merged[key] = [r.count, r, fb]
    return merged


def _request(count: int, r: interpose.RawRequest, fb: int | None, runtimes: tuple[str, ...],
             cat: Catalog) -> Request:
    versioned = r.api in VERSIONED_APIS
    dl = r.api == "dlsym"
    return Request(
        api=r.api, symbol=r.symbol, version=r.version if versioned else None, flags=None if dl else r.flags,
        result=None if dl else r.result, query=r.query, export=r.export, caller=r.caller, count=count,
        runtime=r.caller in runtimes, emulated=r.emulated, query_given=r.status_given,
        result_name=_result_name(r.api, r.result, cat),
        query_name=QUERY_NAMES.get(r.query, f"query({r.query})") if r.query is not None else None,
        symbol_null=r.symbol_null, truncated=r.truncated, pfn_null=r.pfn_null, fallback=fb)


def _notes(driver_version: int | None, emulated: int | None, traced: bool) -> tuple[str, ...]:
    notes = []
    if traced and driver_version is None:
        notes.append(NO_DRIVER_HINT)
    if emulated and driver_version and driver_version <= emulated:
        how = "older than" if driver_version < emulated else "already"
        notes.append(f"the real driver ({driver_version}) is {how} {emulated}: emulating it has no effect "
                     "(a driver cannot be made newer); programs saw the real one")
    return tuple(notes)


def collect(records: Sequence[interpose.ProcessRecord], *, command: Sequence[str] = (), exit_code: int = 0,
            emulated: int | None = None, cat: Catalog | None = None) -> TraceReport:
    """Build the report from the interposer's records (see `cuentry.interpose.read`).

    No record at all means the interposer loaded in no process: the report's `incomplete`
    says so (`NOT_LOADED`).
    """
    cat = catalog() if cat is None else cat
    driver_version, driver_path = _driver(records)
    merged = _merge(records)
    runtimes = _runtimes(merged)
    requests = sorted((_request(count, r, fb, runtimes, cat) for count, r, fb in merged.values()),
                      key=lambda q: (q.caller, q.api, q.symbol, q.version or 0, q.flags or 0))
    # Under emulation the driver the program saw is the emulated one (unless the real one is older).
    effective = emulated if emulated and (driver_version is None or emulated < driver_version) else driver_version
    return TraceReport(command=tuple(command), exit_code=exit_code, driver_version=driver_version,
                       driver_path=driver_path, emulated=emulated, requests=tuple(requests),
                       findings=tuple(_findings(requests, effective, cat)), processes=_processes(records),
                       runtimes=runtimes, dropped=sum(p.dropped for p in records), incomplete=_incomplete(records),
                       notes=_notes(driver_version, emulated, bool(records)))


def _driver(records: Sequence[interpose.ProcessRecord]) -> tuple[int | None, str | None]:
    """The first driver any process noted: (version, path)."""
    for p in records:
        if p.driver_version:
            return p.driver_version, p.driver_path
    return None, None


def _runtimes(merged: dict[tuple[Any, ...], list[Any]]) -> tuple[str, ...]:
    per_caller: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    for _count, r, _fb in merged.values():
        per_caller[r.caller].append((r.symbol, r.version if r.api in VERSIONED_APIS else None))
    return tuple(sorted(c for c, reqs in per_caller.items() if audit.is_runtime(c, reqs)))


def _processes(records: Sequence[interpose.ProcessRecord]) -> tuple[Process, ...]:
    return tuple(Process(p.pid, p.ppid, p.exe, sum(r.count for r in p.requests), p.dropped, bool(p.incomplete))
                 for p in records)


def _incomplete(records: Sequence[interpose.ProcessRecord]) -> tuple[str, ...]:
    if not records:
        return (NOT_LOADED,)
    return tuple(dict.fromkeys(x for p in records for x in p.incomplete))


def _findings(requests: Sequence[Request], driver_version: int | None, cat: Catalog) -> list[audit.Finding]:
    """One finding per distinct (code, symbol, version, flags, caller): counts and results do not repeat them.

    A failed request whose fallback was taken (`Request.fallback`) is not above-driver (CT004):
    the code did what cuentry recommends.
    """
    seen: set[tuple[Any, ...]] = set()
    out: list[audit.Finding] = []
    by_caller: dict[str, list[Request]] = defaultdict(list)
    for r in requests:
        by_caller[r.caller].append(r)
        for f in audit.classify(r.symbol, r.version, r.flags, api=r.api, driver_version=driver_version,
                                caller=r.caller, runtime=r.runtime, cat=cat, null_symbol=r.symbol_null,
                                null_pfn=r.pfn_null):
            if f.code == "CT004" and r.fallback is not None:
                continue
            key = (f.code, f.symbol, f.symbol_null, f.version, f.flags, f.caller)
            if key not in seen:
                seen.add(key)
                out.append(f)
    for caller, reqs in by_caller.items():
        out += audit.mixed_modes(caller, [(r.symbol, r.version, r.flags) for r in reqs if r.api in VERSIONED_APIS],
                                 runtime=any(r.runtime for r in reqs), cat=cat)
    out.sort(key=lambda f: (f.runtime, f.caller, f.code, f.symbol, f.version or 0))
    return out


# --- running ----------------------------------------------------------------------------


def _check_command(cmd: object) -> list[str]:
    if isinstance(cmd, (str, bytes)) or not isinstance(cmd, Sequence) or not cmd:
        raise UsageError("the command must be a non-empty list of arguments",
                         hint="pass it as a list, e.g. ['python', 'app.py'] (on the command line: after --)")
    out = []
    for a in cmd:
        if not isinstance(a, str) or "\0" in a:
            raise UsageError(f"command argument {a!r} is not a string without NUL bytes", hint="pass str arguments")
        out.append(a)
    return out


def _elf_is_static(head: bytes, fh: IO[bytes]) -> bool | None:
    """True for an ELF executable without PT_INTERP (static, static-pie); None when not ELF."""
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    end = "<" if head[5] == 1 else ">"
    if head[4] == 2:
        phoff, = struct.unpack_from(end + "Q", head, 32)
        phentsize, phnum = struct.unpack_from(end + "HH", head, 54)
    else:
        phoff, = struct.unpack_from(end + "I", head, 28)
        phentsize, phnum = struct.unpack_from(end + "HH", head, 42)
    if phentsize < 4 or phnum == 0 or phnum > 4096:
        return None
    fh.seek(phoff)
    table = fh.read(phentsize * phnum)
    if len(table) < phentsize * phnum:
        return None
    pt_interp = 3
    return not any(struct.unpack_from(end + "I", table, i * phentsize)[0] == pt_interp for i in range(phnum))


def _program_path(cmd0: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    if "/" in cmd0:
        return os.path.join(cwd or os.getcwd(), cmd0)
    return shutil.which(cmd0, path=env.get("PATH", os.defpath))


def untraceable(cmd: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None) -> str | None:
    """Why the interposer cannot load in `cmd`'s program, or None when it can (as far as can be told).

    The dynamic loader ignores `LD_PRELOAD` for a statically linked program (an ELF file
    without an interpreter) and in secure-execution mode: a set-user-ID or set-group-ID
    program of another user or group, or one with file capabilities. A script is judged by
    its own file only; when its interpreter cannot be interposed either, the run shows it
    (`NOT_LOADED`).
    """
    e = os.environ if env is None else env
    path = _program_path(cmd[0], e, cwd) if cmd else None
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None   # not readable (or not there): running it says what is wrong
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        static = _elf_is_static(fh.read(64), fh)
    if static:
        return f"{path} is statically linked: the dynamic loader, which preloads the interposer, never runs"
    if st.st_mode & stat.S_ISUID and st.st_uid != os.geteuid():
        return f"{path} is set-user-ID: the dynamic loader ignores LD_PRELOAD for it"
    if st.st_mode & stat.S_ISGID and st.st_gid != os.getegid():
        return f"{path} is set-group-ID: the dynamic loader ignores LD_PRELOAD for it"
    if os.geteuid() != 0 and _has_capabilities(path):
        return f"{path} has file capabilities: the dynamic loader ignores LD_PRELOAD for it"
    return None


def _has_capabilities(path: str) -> bool:
    try:
        return bool(os.getxattr(path, "security.capability"))
    except (OSError, AttributeError):
        return False


def _refuse_untraceable(cmd: Sequence[str], env: Mapping[str, str] | None, cwd: str | None, what: str) -> None:
    why = untraceable(cmd, env=env, cwd=cwd)
    if why is not None:
        raise UsageError(f"{cmd[0]} cannot be {what}: {why}",
                         hint=f"run the dynamically linked program it starts under cuentry {what.split()[0]} "
                              "instead, or build it without -static / the set-user-ID bit")


def _check_emulate(version: object) -> int:
    v = check_version(version)
    if v < 2000:
        raise UsageError(f"cannot emulate driver {v}", hint="give a CUDA version such as 12040 or 12.4")
    return v


def environment(library: str, *, trace_dir: str | None = None, emulate: int | None = None,
                base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment that runs a command under the interposer (for launching it yourself)."""
    env = dict(os.environ if base is None else base)
    for var in (interpose.TRACE_DIR_ENV, interpose.EMULATE_ENV):
        env.pop(var, None)
    if ":" in library or " " in library:
        raise UsageError(f"the interposer path {library!r} cannot go into LD_PRELOAD",
                         hint="set XDG_CACHE_HOME to a directory whose path has no ':' or space")
    pre = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = library + (":" + pre if pre else "")
    if trace_dir is not None:
        env[interpose.TRACE_DIR_ENV] = trace_dir
    if emulate is not None:
        env[interpose.EMULATE_ENV] = str(emulate)
    return env


def _record_dir() -> str:
    """A fresh private directory for the record files, in memory where possible.

    Record files are written through a shared mapping; on a disk file system that costs a
    few milliseconds per process, on tmpfs nothing measurable. `$XDG_RUNTIME_DIR` (private
    to the user) or `/dev/shm` when usable, else the usual temporary directory; `mkdtemp`
    makes the directory 0700 either way.
    """
    for base in (os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm"):
        if base and os.path.isabs(base) and os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
            try:
                return tempfile.mkdtemp(prefix="cuentry-trace-", dir=base)
            except OSError:
                continue
    return tempfile.mkdtemp(prefix="cuentry-trace-")


def _exit_status(returncode: int) -> int:
    """A shell's view of the status: a signal N becomes 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _launch(cmd: list[str], env: dict[str, str], cwd: str | None, timeout: float | None,
            stdin: IO[Any] | int | None, stdout: IO[Any] | int | None, stderr: IO[Any] | int | None) -> int:
    try:
        proc = subprocess.run(cmd, env=env, cwd=cwd, timeout=timeout, stdin=stdin, stdout=stdout, stderr=stderr,
                              check=False)
    except FileNotFoundError:
        raise UsageError(f"command not found: {cmd[0]}", hint="check the program's name and PATH") from None
    except PermissionError:
        raise UsageError(f"cannot run {cmd[0]}: permission denied", hint="check that it is an executable") from None
    return _exit_status(proc.returncode)


_PYTHON_CALLERS = (("libffi.so", "ctypes or cffi through libffi"), ("_ctypes.", "ctypes"),
                   ("_cffi_backend.", "cffi"), ("_fastcall.", "cuentry's compiled calls"))


def python_caller(path: str) -> str | None:
    """How Python called, when the calling library is Python's foreign-call machinery (libffi, ctypes, cffi,
    cuentry's extension): the request came from Python code, which the return address cannot name."""
    base = os.path.basename(path or "")
    return next((how for prefix, how in _PYTHON_CALLERS if base.startswith(prefix)), None)


def user_switch(cmd: Sequence[str]) -> str | None:
    """Why a root trace of `cmd` misses what it runs as another user (gosu, su-exec, ...), or None.

    The interposer is built in the user's private cache and the records go to a 0700 directory: readable and
    writable by root alone, never by others (another user could then change what is traced or recorded). A
    command that switches user therefore runs untraced after the switch; the trace says so (`incomplete`).
    """
    prog = os.path.basename(cmd[0]) if cmd else ""
    if os.geteuid() != 0 or prog not in USER_SWITCHERS:
        return None
    return (f"{prog} switches user: the interposer and the record directory are root's alone (never readable or "
            f"writable by others), so what runs as the other user is not traced; trace it as that user "
            f"({prog} USER cuentry trace -- CMD)")


def _traced_run(args: list[str], lib: str, emu: int | None, env: Mapping[str, str] | None, cwd: str | None,
                timeout: float | None, stdin: IO[Any] | int | None, stdout: IO[Any] | int | None,
                stderr: IO[Any] | int | None) -> TraceReport:
    tmp = _record_dir()  # mode 0700: only this user writes records here
    try:
        code = _launch(args, environment(lib, trace_dir=tmp, emulate=emu, base=env), cwd, timeout,
                       stdin, stdout, stderr)
        records = interpose.read(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report = collect(records, command=args, exit_code=code, emulated=emu)
    switch = user_switch(args)
    return replace(report, incomplete=(*report.incomplete, switch)) if switch else report


def run(cmd: Sequence[str], *, emulate: int | None = None, env: Mapping[str, str] | None = None,
        cwd: str | None = None, timeout: float | None = None, stdin: IO[Any] | int | None = None,
        stdout: IO[Any] | int | None = None, stderr: IO[Any] | int | None = None,
        cc: str | None = None) -> TraceReport:
    """Run `cmd` under the interposer and return what it asked the driver for.

    Args:
        cmd: the command, a list of str arguments.
        emulate: also behave as that driver version (see [emulate][cuentry.trace.emulate]).
        env: the command's environment (default: this process's).
        cwd: its working directory.
        timeout: seconds; then the command is killed and `subprocess.TimeoutExpired` raised.
        stdin: the command's standard input (inherited unless given); likewise `stdout`, `stderr`.
        stdout: its standard output.
        stderr: its standard error.
        cc: the C compiler that builds the interposer.

    Returns:
        The [TraceReport][cuentry.trace.TraceReport]; `report.incomplete` names what it misses
        (`report.traced` is False when the interposer loaded in no process).

    Raises:
        UsageError: a bad command, one that cannot be found or run, or a program the interposer
            cannot load in (statically linked, set-user-ID: see [untraceable][cuentry.trace.untraceable]).
        BuildError: the interposer cannot be built.
    """
    args = _check_command(cmd)
    emu = _check_emulate(emulate) if emulate is not None else None
    _refuse_untraceable(args, env, cwd, "emulated" if emu else "traced")
    lib = str(interpose.build(cc=cc))
    return _traced_run(args, lib, emu, env, cwd, timeout, stdin, stdout, stderr)


def emulate(cmd: Sequence[str], version: int, *, trace: bool = False, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float | None = None, stdin: IO[Any] | int | None = None,
            stdout: IO[Any] | int | None = None, stderr: IO[Any] | int | None = None,
            cc: str | None = None) -> EmulationResult:
    """Run `cmd` as if the driver were `version` (e.g. 12040), on the real (or fake) driver.

    `cuDriverGetVersion` reports `version` (or the real one, if that is older);
    `cuGetProcAddress(_v2)` above `version` answers CUDA_ERROR_INVALID_VALUE; a
    symbol whose first ABI is newer than `version` is not found; `dlsym` of an
    export newer than `version` gives NULL (so `cuGetProcAddress_v2` is absent
    below 12.0, and `cuGetProcAddress` below 11.3). Everything else runs on the
    real driver. The run is always recorded (to know that the emulation took effect:
    `result.incomplete`, `result.notes`); `trace=True` also returns the report.

    Args:
        cmd: the command, as for [run][cuentry.trace.run].
        version: the driver version to emulate (2000 or above).
        trace: return the report of the run as `result.report`.
        env: as for [run][cuentry.trace.run]; likewise `cwd`, `timeout`, the streams and `cc`.
        cwd: the working directory.
        timeout: seconds before the command is killed.
        stdin: standard input.
        stdout: standard output.
        stderr: standard error.
        cc: the C compiler.

    Returns:
        The [EmulationResult][cuentry.trace.EmulationResult].

    Raises:
        UsageError: a bad version or command, or a program the interposer cannot load in.
        BuildError: the interposer cannot be built.
    """
    v = _check_emulate(version)
    report = run(cmd, emulate=v, env=env, cwd=cwd, timeout=timeout, stdin=stdin, stdout=stdout, stderr=stderr,
                 cc=cc)
    return EmulationResult(v, report.exit_code, report if trace else None, report)
