"""What the linter knows about one source file, independent of its language.

The C-family and Python front ends turn a file into a `Unit` of facts
(every entry-point request with its arguments classified, every pointer taken
from a library by its exported name, the flags used, how pointers are typed);
the rules only read facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import names

__all__ = [
    "DECLTYPE_RE",
    "DEFAULT_FLAGS",
    "FLAG_MODES",
    "FLAG_NUMBERS",
    "GETTER_PFN",
    "LEGACY_FLAGS",
    "PER_THREAD_FLAGS",
    "PFN_RE",
    "QUERY_APIS",
    "SUFFIXED_EXPORT_RE",
    "SUPPRESS_RE",
    "TOOLKIT_MACROS",
    "VERSION_QUERIES",
    "Export",
    "PyProto",
    "Query",
    "Row",
    "Suppressions",
    "Unit",
    "flag_mode",
    "suppressions",
]


QUERY_APIS = frozenset({"cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPoint",
                        "cudaGetDriverEntryPointByVersion"})
VERSION_QUERIES = frozenset({"cuDriverGetVersion", "cudaDriverGetVersion", "cudaRuntimeGetVersion"})
TOOLKIT_MACROS = frozenset({"CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "CUDA_API_VERSION"})
LEGACY_FLAGS = names.LEGACY_FLAG_NAMES
PER_THREAD_FLAGS = names.PER_THREAD_FLAG_NAMES
DEFAULT_FLAGS = names.DEFAULT_FLAG_NAMES
FLAG_MODES = {**{f: names.LEGACY for f in LEGACY_FLAGS}, **{f: names.PER_THREAD for f in PER_THREAD_FLAGS},
              **{f: names.DEFAULT for f in DEFAULT_FLAGS}}
FLAG_NUMBERS = {v: k for k, v in names.FLAGS.items()}
GETTER_PFN = re.compile(r"\bPFN_(cuGetProcAddress|cudaGetDriverEntryPoint(?:ByVersion)?)(?:_v(\d+))?\b")
PFN_RE = re.compile(names.PFN_IN_TEXT)
SUFFIXED_EXPORT_RE = re.compile("^" + names.SUFFIXED_EXPORT_PATTERN + "$")
DECLTYPE_RE = re.compile(r"decltype\s*\(\s*&?\s*\(?\s*(?:::)?(cu[A-Z]\w*)\s*\)?\s*\)")
SUPPRESS_RE = re.compile(r"cuentry:\s*ignore(-next-line)?(?:\[([A-Za-z0-9_, ]+)\])?")


class Suppressions(dict[int, frozenset[str] | None]):
    """The lines a file's suppression comments silence: line -> the codes (None: every rule). `comments` maps a
    line silenced by a comment on the line before it (`cuentry: ignore-next-line`) to that comment's line."""

    def __init__(self) -> None:
        super().__init__()
        self.comments: dict[int, int] = {}

    def add(self, line: int, codes: frozenset[str] | None, comment: int) -> None:
        """Silence `codes` (None: all) on `line`, by the comment on line `comment`."""
        if line in self:
            old = self[line]
            codes = None if old is None or codes is None else old | codes
        self[line] = codes
        if comment != line:
            self.comments[line] = comment

    def comment_line(self, line: int) -> int:
        """The line of the comment that silences `line`."""
        return self.comments.get(line, line)


@dataclass(frozen=True)
class Row:
    """Where a table's row that makes a request is written, when that is another file than the one linted (an
    X-macro list in a header, a table included into a function): the request is also reported there."""

    path: str
    line: int
    col: int
    how: str                                # " (a row of the table LIST, expanded at loader.cpp:90)"


@dataclass
class Query:
    """One request of an entry point: a call of cuGetProcAddress / cudaGetDriverEntryPoint(ByVersion),
    of a pointer to one of them, or of a wrapper that passes its arguments on to one."""

    api: str
    line: int
    col: int
    symbol: str | None = None              # the string, when it is known
    symbol_line: int = 0
    symbol_col: int = 0
    version: int | None = None             # the pin, when there is exactly one
    pins: tuple[int, ...] = ()             # every literal pin the version can take (ternaries, branches)
    version_text: str = ""
    version_kind: str = "missing"          # literal | toolkit | driver | runtime_version (what cudaRuntimeGetVersion
    # wrote) | runtime (cudaGetDriverEntryPoint's own) | param | other | missing
    flags_text: str = ""
    flags_mode: str = ""                   # default | legacy | per_thread | "" (not known)
    status: str = "missing"                # given | null | missing | not_applicable
    result_used: bool = True
    unchecked: tuple[str, ...] = ()         # result/status variables never tested after the call (C family)
    target: str | None = None              # the variable that receives the pointer
    target_type: str | None = None         # its declared type, as written
    handwritten: str | None = None         # why the target's type is a hand-written function type
    via: str = ""                          # the wrapper(s) the request goes through
    wrapped: bool = False                  # through a wrapper function (its body is reported on its own)
    where: str = ""                        # " (in LOAD_SYM(...) expanded from line N, ...)" for messages
    target_sig: str | None = None          # clang: the pointer's canonical function type, normalized
    target_export: str | None = None       # clang: decltype(&cuX) resolved to this export (after renames)
    guard: int = 0                         # a driver version a check around the request guarantees
    config: str = ""                       # the configuration it was judged in, when not the flags' own
    macro_lines: tuple[int, ...] = ()      # clang: the lines of this file's #defines that write the request
    toolkit: int = 0                       # clang: the CUDA_VERSION of the cuda.h the file was parsed against
    target_decl: tuple[int, int, int, int] | None = None   # clang: the declaration or cast of this file that
    # spells the pointer's hand-written type (line, column, end line, end column)
    row: Row | None = None                 # clang: the table's row the request is, written in another file
    macro: str = ""                        # clang: the macro whose invocation in this file writes the request
    version_line: int = 0                  # clang: where the version every row shares is written, when not at the
    # request: the `#define` of that macro whose body spells it, or the call that asks for a table's rows


@dataclass
class Export:
    """A pointer taken from a library by its exported name (dlsym, GetProcAddress, or a wrapper of them)."""

    api: str
    name: str
    line: int
    col: int
    target: str | None = None
    target_type: str | None = None          # a PFN typedef, decltype(...) or another type, as written
    where: str = ""
    target_sig: str | None = None           # clang: the pointer's canonical function type, normalized
    target_export: str | None = None
    config: str = ""                        # the configuration it was judged in, when not the flags' own
    toolkit: int = 0                        # clang: the CUDA_VERSION of the cuda.h the file was parsed against
    cause: str = ""                         # clang: rows macros write in one function share it (one cause)
    row: Row | None = None                  # clang: the table's row the export is, written in another file
    handwritten: str | None = None          # clang: why the pointer's type is written by hand (a PFN_ name included)
    macro: str = ""                         # clang: the macro whose invocation in this file takes the export


@dataclass
class PyProto:
    """A Python prototype and what it is applied to: an export taken from a CDLL of libcuda by name
    (`lib.cuMemAlloc.argtypes = [...]`), or the pointer of an entry-point request (`CFUNCTYPE(...)(p)`).

    `args`/`restype` are how each value is passed (ptr, i32, i64, f32, f64, void; None where the class
    is not known); `args` is None when no argtypes were given. A call of an export without argtypes is a
    prototype too (maker "call"): ctypes passes each argument by its own type. `pointees` say how wide the
    object behind each pointer argument is (`POINTER(c_size_t)`, `byref(c_uint())`)."""

    maker: str                              # "ctypes argtypes", "CFUNCTYPE", ...
    line: int
    col: int
    export: str = ""                        # the exported name, for a CDLL attribute
    handle: str = ""                        # the CDLL's name in the code
    symbol: str = ""                        # the request's symbol, for a request's pointer
    version: int | None = None
    flags: int | None = None
    api: str = ""
    args: tuple[str | None, ...] | None = None
    restype: str | None = None
    c_args: tuple[str, ...] | None = None   # a cffi cdef: the C parameter types as declared
    c_ret: str = ""
    c_typedefs: tuple[tuple[str, str], ...] = ()   # typedefs the cdef itself declares (name, type)
    pointees: tuple[str | None, ...] = ()   # what each pointer argument points to (i8 ... f64, ptr; None: not known)
    fewest_args: int | None = None          # the fewest arguments a call of the export passes (None: no call seen)
    platform: str = ""                      # "windows" / "linux" when the classes hold there only (c_long)
    alternatives: tuple[str, ...] = ()      # the other exports the same binding may hold (name_v2, then name)
    optional: bool = False                  # taken where a missing export is handled (try/except, hasattr, a default)
    where: str = ""                         # how the export or the prototype was reached (a table's row, a helper)


@dataclass
class Unit:
    """The facts of one file."""

    path: str
    lang: str                               # "c" or "python"
    queries: list[Query] = field(default_factory=list)
    exports: list[Export] = field(default_factory=list)
    flag_uses: list[tuple[str, int, int]] = field(default_factory=list)
    suffixed_names: list[tuple[str, int, int]] = field(default_factory=list)  # exported names used directly
    handwritten_protos: list[tuple[str, int, int, str]] = field(default_factory=list)  # (what, line, col, why)
    misstores: list[tuple[int, int, str]] = field(default_factory=list)   # clang: (line, col, pointer) of a store
    # through a function pointer's value (`*(void **)(*fp) = v`): it writes into the function, fp stays unset
    py_protos: list[PyProto] = field(default_factory=list)   # Python prototypes, judged against their ABI
    suppressions: Suppressions = field(default_factory=Suppressions)
    lines: int = 0
    parse_errors: int = 0
    problem: str = ""                       # why the file could not be linted (a syntax error), if it could not
    notes: list[str] = field(default_factory=list)           # what could not be seen ("not fully expanded")
    called: frozenset[str] = frozenset()    # every function name called (after macro expansion)
    engine: str = "clang"                   # which engine judged the file: "clang" (C family) or "ast" (Python)
    headers: str = ""                       # clang: which CUDA headers the file was parsed against
    note: str = ""                          # what clang could not see (a missing include...)
    floor: int = 0                          # the driver floor the code states (--floor, a manifest)
    clang_apis: dict[str, Any] = field(default_factory=dict)  # clang: wrappers defined here, by USR
    configs: list[str] = field(default_factory=list)  # clang: the other configurations parsed ("when X is defined")
    requests: int = 0                       # the requests (and exports taken by name) found in the file
    parses: int = 0                         # clang: how many times libclang parsed it (its configurations included)
    judged: int = 0                         # how many of them were judged (their symbol known)
    unjudged: list[tuple[int, str]] = field(default_factory=list)   # (line, why) of those that were not


def suppressions(text: str) -> Suppressions:
    """Lines carrying `cuentry: ignore` (all rules) or `cuentry: ignore[CE001,CE004]`, and the lines after a
    `cuentry: ignore-next-line` (`[...]` alike)."""
    out = Suppressions()
    if "cuentry" not in text:
        return out
    for i, line in enumerate(text.splitlines(), 1):
        m = SUPPRESS_RE.search(line)
        if m:
            codes = frozenset(c.strip().upper() for c in m.group(2).split(",") if c.strip()) if m.group(2) else None
            out.add(i + 1 if m.group(1) else i, codes, i)
    return out


def flag_mode(text: str) -> str:
    """The stream mode a flags expression names ("" when it cannot be told)."""
    t = text.strip().split("::")[-1]
    if t in FLAG_MODES:
        return FLAG_MODES[t]
    try:
        return FLAG_NUMBERS.get(int(t.rstrip("uUlL") or "x", 0), "")
    except ValueError:
        return ""
