"""The interposer shared by `cuentry trace` and `cuentry emulate`.

`source` fills the C template `interposer.c` with two tables generated from
the catalog: every Linux driver export with the version of the ABI it is (so
`dlsym` of an export newer than an emulated driver can answer NULL), and every
entry point with its first ABI version and first per-thread ABI version (so a
symbol newer than the emulated driver is "not found"). `build` compiles it
with the system C compiler into the per-user build cache
(`cuentry.buildcache`). `read` parses the record files the interposer
leaves in `$CUENTRY_TRACE_DIR`, one per process.

The library is used with `LD_PRELOAD` (Linux). Environment it reads:
`CUENTRY_TRACE_DIR` (an absolute directory: record requests there),
`CUENTRY_EMULATE_DRIVER` (a version number: behave as that driver) and
`CUENTRY_DRIVER` (an absolute path: `dlopen("libcuda.so.1")` and `dlopen("libcuda.so")`
open that library instead, as cuentry's own loader does).
"""

from __future__ import annotations

import os
import re
import stat
import struct
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..catalog import Catalog, catalog
from ..errors import BuildError
from ..toolchain import c_string, compile_cached

__all__ = [
    "APIS",
    "CALLER_SIZE",
    "EMULATE_ENV",
    "EXPORT_SIZE",
    "FILE_SIZE",
    "HEADER_SIZE",
    "INCOMPLETE_SPACE",
    "LAYOUT",
    "MAGIC",
    "MAX_CALLERS",
    "SLOTS",
    "SPACE_EXHAUSTED",
    "SYMBOL_SIZE",
    "TRACE_DIR_ENV",
    "ProcessRecord",
    "RawRequest",
    "build",
    "parse",
    "read",
    "source",
    "tables",
]


TRACE_DIR_ENV = "CUENTRY_TRACE_DIR"
EMULATE_ENV = "CUENTRY_EMULATE_DRIVER"

# Exported on Linux by the catalog, but not by a real Linux driver (measured on 580.159.04).
_NOT_ON_LINUX = frozenset({"cuEventCreateFromEGLSync"})

# The record file's layout: it must match interposer.c (which asserts its side).
MAGIC = b"CUETRC01"
LAYOUT = 3
HEADER_SIZE = 4096
MAX_CALLERS = 256
CALLER_SIZE = 512
SLOTS = 65536
SYMBOL_SIZE = 112
EXPORT_SIZE = 64
_HEADER = struct.Struct("=8sIiiiiIIIQQ1024s1024sI")
_SLOT = struct.Struct(f"=IIiiQiiiIIIQ{SYMBOL_SIZE}s{EXPORT_SIZE}s")
# Bits of a slot's marks and of the header's "incomplete" (interposer.c's MARK_* and INCOMPLETE_*).
MARK_TRUNCATED, MARK_NULL_SYMBOL, MARK_NULL_PFN = 1, 2, 4
INCOMPLETE_SPACE = 1
SPACE_EXHAUSTED = "record space exhausted"
_NAME = re.compile(r"p([0-9]{1,10})-[0-9]{1,20}\.rec")
FILE_SIZE = HEADER_SIZE + MAX_CALLERS * CALLER_SIZE + SLOTS * _SLOT.size

# The API numbers of interposer.c, by name.
APIS = {1: "cuGetProcAddress_v2", 2: "cuGetProcAddress", 3: "cudaGetDriverEntryPointByVersion",
        4: "cudaGetDriverEntryPoint", 5: "dlsym"}




def tables(cat: Catalog | None = None) -> str:
    """The generated C tables: EXPORTS (name, ABI version) and SYMBOLS (name, first, first per-thread)."""
    cat = catalog() if cat is None else cat
    exports: dict[str, int] = {}
    symbols: dict[str, tuple[int, int]] = {}
    for a in cat:
        first, first_pt = symbols.get(a.symbol, (1 << 30, 0))
        first = min(first, a.version)
        if a.variant:
            first_pt = a.version if not first_pt else min(first_pt, a.version)
        symbols[a.symbol] = (first, first_pt)
        if a.exported and "linux" in a.platforms and a.symbol not in _NOT_ON_LINUX:
            exports[a.exported] = min(exports.get(a.exported, a.version), a.version)
    ex_rows = [f"    {{{c_string(n)}, {v}}}," for n, v in sorted(exports.items(), key=lambda kv: kv[0].encode())]
    sym_rows = [f"    {{{c_string(n)}, {f}, {p}}}," for n, (f, p) in sorted(symbols.items(), key=lambda kv: kv[0].encode())]
    return "\n".join([
        "static const struct export_entry EXPORTS[] = {", *ex_rows, "};",
        "#define N_EXPORTS (sizeof EXPORTS / sizeof EXPORTS[0])",
        "static const struct symbol_entry SYMBOLS[] = {", *sym_rows, "};",
        "#define N_SYMBOLS (sizeof SYMBOLS / sizeof SYMBOLS[0])",
    ])


def source(cat: Catalog | None = None) -> str:
    """The interposer's complete C source."""
    template = resources.files(__package__).joinpath("interposer.c").read_text(encoding="utf-8")
    return template.replace("@TABLES@", tables(cat))


_FLAGS = ("-O1", "-foptimize-sibling-calls", "-fno-stack-protector", "-fvisibility=hidden", "-pthread",
          "-fno-delete-null-pointer-checks", "-w")
_LIBS = ("-ldl",)


def build(*, cc: str | None = None, dest: str | os.PathLike[str] | None = None) -> Path:
    """Compile the interposer into the per-user build cache (`cuentry.buildcache`); return its path.

    Built once per content and compiler; `dest` names another cache root. Raises
    [BuildError][cuentry.errors.BuildError] (no compiler, a compile error, an unsafe cache).
    """
    if not sys.platform.startswith("linux"):
        raise BuildError(f"cannot build the cuentry interposer: it works on Linux only (this is {sys.platform})",
                         hint="run cuentry trace/emulate on Linux")
    return compile_cached("interposer", source(), filename="libcuentry-interpose.so", source_name="interposer.c",
                          flags=["-shared", "-fPIC", *_FLAGS], libs=_LIBS, cc=cc, root=dest,
                          what="build the cuentry interposer",
                          hint="the compiler rejected the generated C: set CC to another one, and please report it")


@dataclass(frozen=True)
class RawRequest:
    """One distinct request as the interposer recorded it (a count of identical ones)."""

    api: str
    symbol: str          # "" also for a NULL symbol (symbol_null); non-UTF-8 bytes as \\xNN
    version: int
    flags: int
    result: int
    query: int | None
    caller: str
    export: str | None   # the export the pointer equals; None: NULL; "?": a pointer that is no export
    status_given: bool
    emulated: bool
    truncated: bool      # the symbol was longer than SYMBOL_SIZE - 1 bytes: what is kept is its start
    count: int
    symbol_null: bool = False   # the caller passed a NULL symbol
    pfn_null: bool = False      # the caller passed a NULL result pointer
    seq: int = 0                # the order of first appearance in its process


@dataclass(frozen=True)
class ProcessRecord:
    """One process's record file."""

    path: str
    pid: int
    ppid: int
    exe: str
    driver_version: int | None
    driver_path: str | None
    emulated: int | None
    dropped: int
    unwrapped: int
    requests: tuple[RawRequest, ...]
    incomplete: tuple[str, ...] = ()   # what this process's records miss (SPACE_EXHAUSTED)


def _text(raw: bytes) -> str:
    """A C string from the record: every byte kept, a byte that is not UTF-8 as a visible \\xNN."""
    return raw.split(b"\0", 1)[0].decode("utf-8", "backslashreplace")


def _lost(path: str) -> ProcessRecord | None:
    """An empty record file: the interposer loaded, but not even its header could be written."""
    m = _NAME.fullmatch(os.path.basename(path))
    if m is None:
        return None
    return ProcessRecord(path=path, pid=int(m.group(1)), ppid=0, exe="", driver_version=None, driver_path=None,
                         emulated=None, dropped=0, unwrapped=0, requests=(), incomplete=(SPACE_EXHAUSTED,))


_SLOTS_OFF = HEADER_SIZE + MAX_CALLERS * CALLER_SIZE


def _needed(head: bytes) -> int:
    """How many bytes of a record file hold what its header says it records (the header alone for a file
    that is not one: `parse` refuses it)."""
    if len(head) < HEADER_SIZE or head[:8] != MAGIC or struct.unpack_from("=I", head, 8)[0] != LAYOUT:
        return HEADER_SIZE
    ncallers, nrec = struct.unpack_from("=I", head, 28)[0], struct.unpack_from("=I", head, 36)[0]
    if not (ncallers or nrec):
        return HEADER_SIZE
    return _SLOTS_OFF + min(int(nrec), SLOTS) * _SLOT.size


def _header_ok(data: bytes) -> bool:
    """A header of this layout, and every record it says the file holds."""
    if len(data) < HEADER_SIZE or data[:8] != MAGIC:
        return False
    layout, nslots = struct.unpack_from("=I", data, 8)[0], struct.unpack_from("=I", data, 32)[0]
    return bool(layout == LAYOUT and nslots == SLOTS and len(data) >= _needed(data))


def parse(data: bytes, path: str = "<bytes>") -> ProcessRecord | None:
    """One record file's contents; None when it is not a record file of this layout.

    A file of only the header is a process that made no request; an empty one whose name is
    the interposer's is a process whose records could not be written at all.
    """
    if not data:
        return _lost(path)
    if not _header_ok(data):
        return None
    (_, _layout, pid, ppid, dver, emu, ncallers, _nslots, nrec, dropped, unwrapped,
     exe, dpath, incomplete) = _HEADER.unpack_from(data, 0)
    callers = [_text(data[HEADER_SIZE + i * CALLER_SIZE:HEADER_SIZE + (i + 1) * CALLER_SIZE])
               for i in range(min(ncallers, MAX_CALLERS))]
    base = HEADER_SIZE + MAX_CALLERS * CALLER_SIZE
    slots = (_slot(data, base + i * _SLOT.size, i, callers) for i in range(min(nrec, SLOTS)))  # in order
    out = [r for r in slots if r is not None]
    return ProcessRecord(path=path, pid=pid, ppid=ppid, exe=_text(exe), driver_version=dver or None,
                         driver_path=_text(dpath) or None, emulated=emu or None, dropped=dropped,
                         unwrapped=unwrapped, requests=tuple(out),
                         incomplete=(SPACE_EXHAUSTED,) if incomplete & INCOMPLETE_SPACE else ())


def _slot(data: bytes, off: int, seq: int, callers: list[str]) -> RawRequest | None:
    """The request in the slot at `off`; None when the slot is not (yet) complete."""
    if data[off] == 0:
        return None
    (state, _h, api, version, flags, result, query, caller, status_given, emulated, marks, count,
     symbol, export) = _SLOT.unpack_from(data, off)
    if state != 1:
        return None
    exp = _text(export)
    return RawRequest(
        api=APIS.get(api, f"api{api}"), symbol=_text(symbol), version=version, flags=flags, result=result,
        query=None if query < 0 else query,
        caller=callers[caller] if 0 <= caller < len(callers) else "?",
        export=exp or None, status_given=bool(status_given), emulated=bool(emulated),
        truncated=bool(marks & MARK_TRUNCATED), count=count, symbol_null=bool(marks & MARK_NULL_SYMBOL),
        pfn_null=bool(marks & MARK_NULL_PFN), seq=seq)


def read(directory: str | os.PathLike[str]) -> list[ProcessRecord]:
    """Every process's records left in `directory` (files that are not records are skipped).

    Only regular files are read: a link is not followed, and a FIFO or device is opened
    without blocking and skipped.
    """
    got = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".rec"):
            continue
        p = os.path.join(directory, name)
        data = _read_regular(p)
        if data is None:
            continue
        rec = parse(data, p)
        if rec is not None:
            got.append(rec)
    return got


def _read_regular(path: str) -> bytes | None:
    """A regular file's header and the records it says it holds (the file is as large as a process could
    ever fill: what no record uses is not read); None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = fh.read(HEADER_SIZE)
        return head + fh.read(max(0, _needed(head) - len(head)))
