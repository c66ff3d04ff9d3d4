"""Run a program and see every entry-point request it makes; or run it as if on an older driver.

:func:`run` starts a command with cuentry's interposer (:mod:`cuentry.interpose`)
preloaded, waits for it, and returns a :class:`TraceReport`: every distinct
request of the process and its children (``cuGetProcAddress``/``_v2``,
``cudaGetDriverEntryPoint[ByVersion]`` attributed to their real caller, ``dlsym``
of driver exports), with a count, and the findings of :mod:`cuentry.audit`.

:func:`emulate` runs a command so that the driver looks like an older one
(``cuDriverGetVersion`` reports it, newer versions and symbols are refused the way
that driver would refuse them, newer exports are not found); with ``trace=True``
it records at the same time.

The program's standard streams, behaviour and exit status are its own: the
interposer writes only to files in a private temporary directory, which is read
and removed when the command ends. Linux only (``LD_PRELOAD``); a statically
linked or set-user-ID program is not interposed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from . import audit, interpose
from .catalog import Catalog, catalog
from .diagnostics import cu_result_name
from .errors import UsageError
from .names import QUERY_NAMES, RUNTIME_ERROR_NAMES, VERSIONED_APIS, check_version

SCHEMA = 1


@dataclass(frozen=True)
class Request:
    """One distinct request and how many times it was made (one meaning per field; docs/trace.md)."""

    api: str
    symbol: str
    version: int | None      # None: the API takes no version (dlsym, cudaGetDriverEntryPoint)
    flags: int | None        # None: dlsym
    result: str | None       # CUresult / cudaError_t by name; None for dlsym
    query: str | None        # the query result by name; None when the driver wrote none
    export: str | None       # the driver export the returned pointer equals; None: NULL; "?": no export
    caller: str              # the library (or program) that made the request
    count: int
    runtime: bool            # the request is a CUDA runtime's own table (libcudart or a static one)
    emulated: bool           # the emulation decided or changed the answer
    query_given: bool        # the caller passed a query-result pointer

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "symbol": self.symbol, "version": self.version, "flags": self.flags,
                "result": self.result, "query": self.query, "export": self.export, "caller": self.caller,
                "count": self.count, "runtime": self.runtime, "emulated": self.emulated,
                "query_given": self.query_given}


@dataclass(frozen=True)
class Process:
    """One process that made requests."""

    pid: int
    ppid: int
    exe: str
    requests: int
    dropped: int

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "ppid": self.ppid, "exe": self.exe, "requests": self.requests,
                "dropped": self.dropped}


@dataclass(frozen=True)
class TraceReport:
    """What a command asked the driver for, and what is wrong with it."""

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

    @property
    def callers(self) -> tuple[str, ...]:
        """The calling libraries, in order of first appearance."""
        return tuple(dict.fromkeys(r.caller for r in self.requests))

    def by_caller(self, caller: str) -> tuple[Request, ...]:
        return tuple(r for r in self.requests if r.caller == caller)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "command": list(self.command),
            "exit_code": self.exit_code,
            "driver": {"version": self.driver_version, "path": self.driver_path, "emulated": self.emulated},
            "requests": [r.to_dict() for r in self.requests],
            "findings": [f.to_dict() for f in self.findings],
            "runtimes": list(self.runtimes),
            "processes": [p.to_dict() for p in self.processes],
            "dropped": self.dropped,
        }


@dataclass(frozen=True)
class EmulationResult:
    """What :func:`emulate` returns: the exit status, and the trace when one was asked for."""

    version: int
    exit_code: int
    report: TraceReport | None = field(default=None)


# --- collecting ------------------------------------------------------------------------


def _result_name(api: str, code: int, cat: Catalog) -> str | None:
    if api == "dlsym":
        return None
    if api.startswith("cuda"):
        return RUNTIME_ERROR_NAMES.get(code, f"cudaError({code})")
    return cu_result_name(code, cat)


def _merge(records: Sequence[interpose.ProcessRecord]) -> dict[tuple[Any, ...], list[Any]]:
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for proc in records:
        for r in proc.requests:
            key = (r.api, r.symbol, r.version, r.flags, r.result, r.query, r.export, r.caller, r.emulated,
                   r.status_given)
            if key in merged:
                merged[key][0] += r.count
            else:
                merged[key] = [r.count, r]
    return merged


def collect(records: Sequence[interpose.ProcessRecord], *, command: Sequence[str] = (), exit_code: int = 0,
            emulated: int | None = None, cat: Catalog | None = None) -> TraceReport:
    """Build the report from the interposer's records (see :func:`cuentry.interpose.read`)."""
    cat = catalog() if cat is None else cat
    drivers = [(p.driver_version, p.driver_path) for p in records if p.driver_version]
    driver_version, driver_path = drivers[0] if drivers else (None, None)
    merged = _merge(records)
    per_caller: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    for _count, r in merged.values():
        per_caller[r.caller].append((r.symbol, r.version if r.api in VERSIONED_APIS else None))
    runtimes = tuple(sorted(c for c, reqs in per_caller.items() if audit.is_runtime(c, reqs)))
    requests = []
    for count, r in merged.values():
        versioned = r.api in VERSIONED_APIS
        requests.append(Request(
            api=r.api, symbol=r.symbol, version=r.version if versioned else None,
            flags=r.flags if r.api != "dlsym" else None, result=_result_name(r.api, r.result, cat),
            query=QUERY_NAMES.get(r.query, f"query({r.query})") if r.query is not None else None,
            export=r.export, caller=r.caller, count=count, runtime=r.caller in runtimes, emulated=r.emulated,
            query_given=r.status_given))
    requests.sort(key=lambda q: (q.caller, q.api, q.symbol, q.version or 0, q.flags or 0))
    # Under emulation the driver the program saw is the emulated one (unless the real one is older).
    effective = emulated if emulated and (driver_version is None or emulated < driver_version) else driver_version
    findings = _findings(requests, effective, cat)
    procs = tuple(Process(p.pid, p.ppid, p.exe, sum(r.count for r in p.requests), p.dropped) for p in records)
    return TraceReport(command=tuple(command), exit_code=exit_code, driver_version=driver_version,
                       driver_path=driver_path, emulated=emulated, requests=tuple(requests),
                       findings=tuple(findings), processes=procs, runtimes=runtimes,
                       dropped=sum(p.dropped for p in records))


def _findings(requests: Sequence[Request], driver_version: int | None, cat: Catalog) -> list[audit.Finding]:
    """One finding per distinct (code, symbol, version, flags, caller): counts and results do not repeat them."""
    seen: set[tuple[Any, ...]] = set()
    out: list[audit.Finding] = []
    by_caller: dict[str, list[Request]] = defaultdict(list)
    for r in requests:
        by_caller[r.caller].append(r)
        for f in audit.classify(r.symbol, r.version, r.flags, api=r.api, driver_version=driver_version,
                                caller=r.caller, runtime=r.runtime, cat=cat):
            key = (f.code, f.symbol, f.version, f.flags, f.caller)
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
    few milliseconds per process, on tmpfs nothing measurable. ``$XDG_RUNTIME_DIR`` (private
    to the user) or ``/dev/shm`` when usable, else the usual temporary directory; ``mkdtemp``
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


def run(cmd: Sequence[str], *, emulate: int | None = None, env: Mapping[str, str] | None = None,
        cwd: str | None = None, timeout: float | None = None, stdin: IO[Any] | int | None = None,
        stdout: IO[Any] | int | None = None, stderr: IO[Any] | int | None = None,
        cc: str | None = None) -> TraceReport:
    """Run ``cmd`` under the interposer and return what it asked the driver for.

    ``emulate``: also behave as that driver version (see :func:`emulate`). ``env``:
    the command's environment (default: this process's). Standard streams are
    inherited unless given. ``timeout`` raises :class:`subprocess.TimeoutExpired`
    (the command is killed).
    """
    args = _check_command(cmd)
    emu = _check_emulate(emulate) if emulate is not None else None
    lib = str(interpose.build(cc=cc))
    tmp = _record_dir()  # mode 0700: only this user writes records here
    try:
        code = _launch(args, environment(lib, trace_dir=tmp, emulate=emu, base=env), cwd, timeout,
                       stdin, stdout, stderr)
        records = interpose.read(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return collect(records, command=args, exit_code=code, emulated=emu)


def emulate(cmd: Sequence[str], version: int, *, trace: bool = False, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float | None = None, stdin: IO[Any] | int | None = None,
            stdout: IO[Any] | int | None = None, stderr: IO[Any] | int | None = None,
            cc: str | None = None) -> EmulationResult:
    """Run ``cmd`` as if the driver were ``version`` (e.g. 12040), on the real (or fake) driver.

    ``cuDriverGetVersion`` reports ``version`` (or the real one, if that is older);
    ``cuGetProcAddress(_v2)`` above ``version`` answers CUDA_ERROR_INVALID_VALUE; a
    symbol whose first ABI is newer than ``version`` is not found; ``dlsym`` of an
    export newer than ``version`` gives NULL (so ``cuGetProcAddress_v2`` is absent
    below 12.0, and ``cuGetProcAddress`` below 11.3). Everything else runs on the
    real driver.
    """
    v = _check_emulate(version)
    if trace:
        report = run(cmd, emulate=v, env=env, cwd=cwd, timeout=timeout, stdin=stdin, stdout=stdout, stderr=stderr,
                     cc=cc)
        return EmulationResult(v, report.exit_code, report)
    args = _check_command(cmd)
    lib = str(interpose.build(cc=cc))
    code = _launch(args, environment(lib, emulate=v, base=env), cwd, timeout, stdin, stdout, stderr)
    return EmulationResult(v, code, None)
