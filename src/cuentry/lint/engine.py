"""The lint engine: files in, findings and problems out.

It finds the files, reads each one safely (regular files only, at most
`MAX_FILE_BYTES`, never blocking on a FIFO or device), hands the text to
the front end of its language, runs the rules, applies selection and
suppression comments, and collects the pins for `--min-driver`. A file that
cannot be read or parsed is a `Problem` with its own line in every
output format; it never stops the other files from being linted.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..catalog import Catalog, catalog, format_version
from ..errors import UsageError
from .config import Config
from .facts import Unit, suppressions
from .fix import At, span
from .rules import RULE_CODES, Hit, Rule, candidate, rows_elsewhere, run, run_rows

__all__ = [
    "C_SUFFIXES",
    "ENGINES",
    "KEEP_SKIPPED",
    "MAX_FILE_BYTES",
    "MAX_PASSES",
    "PY_SUFFIXES",
    "RETIRED",
    "Finding",
    "Isolated",
    "Judged",
    "Problem",
    "Report",
    "Settings",
    "Shared",
    "check_engine",
    "chosen_files",
    "configuration",
    "display_path",
    "extract",
    "is_python",
    "iter_files",
    "lint_paths",
    "lint_text",
    "looks_like_python",
    "parse_codes",
    "read_source",
    "selection",
    "toolkit_versions",
    "triggered",
]


C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".inc",
              ".ipp", ".tpp", ".tcc", ".ixx", ".cppm", ".ccm", ".cxxm", ".c++m")
PY_SUFFIXES = (".py", ".pyi", ".pyw", ".pyt")
MAX_FILE_BYTES = 64 << 20
"""Files larger than this (64 MiB) are refused with a problem line, not read."""
_PY_ALWAYS = 4 << 20   # Python files below this are always parsed, to report the invalid ones
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".venv", "venv", "build", "dist"}
_FUNCTION_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+\w+\(", re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")
_LOADER_CALL = re.compile(r"\b[A-Z][A-Z0-9_]{2,}[ \t]*\([ \t]*&?[ \t]*cu[A-Z]")
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
_ANGLE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<([^>]+)>', re.M)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    rule: str          # the rule's name (pin-out-of-range): "name" means an entry's name elsewhere in the JSON
    message: str
    fingerprint: str = ""
    severity: str = "warning"   # error | warning | note
    engine: str = "clang"        # which engine judged the file: clang (C family) | ast (Python)
    headers: str = ""            # clang: the CUDA headers the file was parsed against
    config: str = ""             # clang: the configuration judged, when not the flags' own ("when USE_CUDA is defined")
    end_line: int = 0            # where the finding's source range ends (0: at its start)
    end_col: int = 0
    fix: str = "none"            # whether `lint --fix` can repair it: safe | unsafe | none (verified: see apply)
    hint: str = ""               # what to change, the advice the message gives ("" when it gives none)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Judged:
    """Which engine judged a file, against which headers, and what it could not see."""

    path: str
    engine: str
    headers: str = ""
    note: str = ""
    configs: tuple[str, ...] = ()   # clang: the other configurations it was judged in (branches its flags skip)
    requests: int = 0                                  # clang: requests found in the file
    judged: int = 0                                    # clang: how many of them were judged
    unjudged: tuple[tuple[int, str], ...] = ()         # clang: (line, why) of the others
    parses: int = 0                                    # clang: libclang parses of the file (configurations too)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        # JSON keys of their own (a key has one kind across the schemas: `judged` is the list, `requests` trace's)
        out["requests_found"] = out.pop("requests")
        out["requests_judged"] = out.pop("judged")
        out["requests_unjudged"] = [{"line": line, "why": why} for line, why in out.pop("unjudged")]
        return out


@dataclass
class Settings:
    """How C-family files are judged: the engine (libclang, the one there is: "auto" and "clang" name it),
    its parse flags, the toolkit of generated headers, the driver floor the code states, and whether notes show."""

    engine: str = "auto"
    include_dirs: Sequence[str] = ()
    defines: Sequence[str] = ()
    std: str | None = None
    toolkit: str | None = None
    commands: dict[str, list[str]] = field(default_factory=dict)
    floor: int = 0
    pedantic: bool = False
    timeout: float = 120.0      # seconds of CPU time one file may take in its worker (then it is a problem)
    memory: int = 8 << 30       # bytes of address space a worker may use (then the file is a problem)


ENGINES = ("auto", "clang")
"""The engine names accepted (both name libclang: kept for the command lines and scripts that give one)."""
RETIRED = ("the tree-sitter engine was retired: C, C++ and CUDA files are judged by libclang alone "
           "(drop --engine tree-sitter)")
"""What `--engine tree-sitter` is answered with (exit 2)."""


def check_engine(engine: str) -> None:
    """Raise `UsageError` for an engine name that is not one of `ENGINES` (the retired one says so)."""
    if engine == "tree-sitter":
        raise UsageError(RETIRED)
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", hint=f"choose one of {', '.join(ENGINES)}")


@dataclass(frozen=True)
class Problem:
    """A file that was not linted, and why (unreadable, not a regular file, too large, not valid Python)."""

    path: str
    message: str
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    findings: list[Finding]
    files: int
    lines: int
    pins: dict[str, int]            # symbol -> the pin its chain needs (the lowest it is asked at)
    problems: list[Problem] = field(default_factory=list)
    linted: list[str] = field(default_factory=list)
    judged: list[Judged] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)   # files linted only in part ("not fully expanded: ...")
    unused_suppressions: list[Problem] = field(default_factory=list)   # comments naming no finding/unknown codes
    chains: dict[str, set[int]] = field(default_factory=dict)   # symbol -> every literal pin it is asked at
    optional: set[str] = field(default_factory=set)              # symbols asked only under a driver-version test
    select: list[str] | None = None     # the rules the run selected (the configuration applied; None: every rule)
    ignore: list[str] = field(default_factory=list)              # and those it ignored

    @property
    def min_driver(self) -> int:
        """The deployment floor of the pins found, by the one computation of it
        ([driver_floor][cuentry.entry.driver_floor]): each symbol is an entry whose chain is the pins it is
        asked at (a loader that falls back from 12050 to 3020 needs 3020); a symbol asked only where a test
        of the driver's version guarantees its pin is optional."""
        from ..entry import driver_floor

        return driver_floor((sym not in self.optional, sorted(pins)) for sym, pins in self.chains.items())

    @property
    def unparsable(self) -> list[str]:
        return [p.path for p in self.problems]

    def to_dict(self) -> dict[str, Any]:
        md = self.min_driver
        return {"files": self.files, "lines": self.lines, "findings": [f.to_dict() for f in self.findings],
                "min_driver": md, "min_driver_release": format_version(md) if md else None,
                "problems": [p.to_dict() for p in self.problems],
                "chains": [{"symbol": sym, "asked_at": sorted(v), "pin": self.pins.get(sym, min(v)),
                            "required": sym not in self.optional} for sym, v in sorted(self.chains.items())],
                "partial": [{**n.to_dict(), "severity": "note"} for n in self.notes],
                "unparsable": self.unparsable, "judged": [j.to_dict() for j in self.judged],
                "unused_suppressions": [p.to_dict() for p in self.unused_suppressions]}


def parse_codes(spec: Sequence[str] | None) -> set[str] | None:
    """Rule codes from `--select`/`--ignore` values (comma lists, prefixes); None when not given."""
    if spec is None:
        return None
    out: set[str] = set()
    for item in spec:
        parts = [c.strip().upper() for c in item.split(",")]
        if not any(parts):
            raise UsageError("an empty rule list selects nothing", hint=f"name rules: {', '.join(RULE_CODES)}")
        for c in parts:
            if not c:
                continue
            matches = [r for r in RULE_CODES if r.startswith(c)]
            if not matches:
                raise UsageError(f"unknown rule {c!r}", hint=f"rules: {', '.join(RULE_CODES)} (a prefix like CE00 works)")
            out.update(matches)
    return out


@dataclass
class Shared:
    """What one C-family file tells the others: the wrappers it defines (by USR, with the defaults of their
    parameters)."""

    clang: dict[str, Any] = field(default_factory=dict)       # the clang engine's wrappers, by USR

    @property
    def names(self) -> frozenset[str]:
        """The wrappers' function names (what a file that calls one of them is found by)."""
        return frozenset(str(spec.get("name", "")) for spec in self.clang.values()) - {""}

    def learn(self, unit: Unit) -> bool:
        """Take a file's wrappers; True when something new was learnt."""
        new = False
        for usr, spec in unit.clang_apis.items():
            if usr not in self.clang:
                self.clang[usr] = spec
                new = True
        return new


def _clang(text: str, path: str, settings: Settings, shared: Shared | None = None) -> tuple[Unit | None, str]:
    """The clang engine's facts, or None and why it could not parse the file at all."""
    from . import clang

    if not clang.available():
        from .extra import HINT

        raise UsageError(f"linting C, C++ and CUDA files needs libclang, which cannot be loaded here: {HINT} "
                         "(Python files lint without it)")
    if _FUNCTION_MACRO.search(text):
        from .preprocess import preprocess

        if preprocess(text, path, settings.include_dirs).truncated:
            return None, "its macros expand beyond the linter's bound (a macro bomb?): not parsed"
    try:
        unit = clang.extract(text, _utf8_name(path), clang.Options(settings.include_dirs, settings.defines, settings.std,
                                                       settings.toolkit, settings.commands,
                                                       foreign=shared.clang if shared is not None else {}))
        unit.path = path
    except clang.NotParsed as exc:
        return None, str(exc)
    except UsageError:
        raise
    except Exception as exc:
        return None, f"clang could not parse it ({type(exc).__name__}: {exc})"
    return unit, ""


def _utf8_name(path: str) -> str:
    """`path`, or for a name that is not UTF-8 (libclang's bindings encode names as UTF-8) the same name with
    its stray bytes as `\\xNN`: clang reads the text given, the name only places quoted includes."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return path


def extract(text: str, path: str, include_dirs: Sequence[str] = (), shared: Shared | None = None,
            settings: Settings | None = None) -> Unit:
    """The facts of one file, by its suffix (C family unless it ends in .py): Python with `ast`, the C family
    with libclang. A file libclang cannot parse at all is a unit with its `problem` (why), and no facts."""
    if is_python(path, text):
        from .python import extract as py

        return py(text, path, read=lambda other: read_source(other, 4 << 20))
    from .extra import require

    require()
    settings = settings or Settings(include_dirs=include_dirs)
    check_engine(settings.engine)
    unit, why = _clang(text, path, settings, shared)
    if unit is None:
        unit = Unit(path=path, lang="c", suppressions=suppressions(text), lines=text.count("\n") + 1, engine="clang",
                    problem=f"not linted: {why}")
    unit.floor = settings.floor
    return unit


def _fingerprint(code: str, path: str, line_text: str, nth: int) -> str:
    h = hashlib.sha256(f"{code}\0{path}\0{' '.join(line_text.split())}\0{nth}".encode(
        "utf-8", "surrogateescape")).hexdigest()   # a file name that is not UTF-8 keeps its bytes
    return h[:32]


def lint_text(text: str, path: str, *, select: Sequence[str] | None = None,
              ignore: Sequence[str] | None = None, include_dirs: Sequence[str] = (),
              cat: Catalog | None = None, shared: Shared | None = None,
              settings: Settings | None = None) -> tuple[list[Finding], Unit]:
    """Lint one file's text; returns the findings (suppressions applied; notes only with
    `settings.pedantic`) and its facts."""
    sel, ign = parse_codes(select), parse_codes(ignore) or set()
    settings = settings or Settings(include_dirs=include_dirs)
    unit = extract(text, path, include_dirs, shared, settings)

    targets = toolkit_versions(cat or catalog(), settings.toolkit) if unit.lang == "c" else (0, 0)

    def fix(code: str, line: int, col: int) -> tuple[tuple[int, int], str]:
        fx = candidate(At(unit, text, code, line, col, cat or catalog(), *targets)) if unit.lang == "c" else None
        return span(text, line, col), fx.kind if fx is not None else "none"

    out = _kept(run(unit, cat), path, text, unit.suppressions, unit, (sel, ign, settings.pedantic), fix)
    out += _at_rows(unit, sel, ign, settings, cat)
    out.sort(key=lambda f: (f.path != path, f.path, f.line, f.col, f.code, bool(f.config)))
    dedup: list[Finding] = []
    for f in out:   # one finding per cause: the same fault in another configuration is the flags' own finding
        if not dedup or _cause(dedup[-1]) != _cause(f):
            dedup.append(f)
    return dedup, unit


def _cause(f: Finding) -> tuple[str, int, int, str, str, str]:
    """What makes two findings one: the place, the rule, the severity and the advice (fields, never the message,
    which names the configuration it was found in)."""
    return f.path, f.line, f.col, f.code, f.severity, f.hint


def toolkit_versions(cat: Catalog, toolkit: str | None) -> tuple[int, int]:
    """The CUDA_VERSION of the toolkit a run targets (`--toolkit`, else the newest the catalog knows) and of the
    newest: what the fixes weigh a pin against."""
    from .clang.headers import choose_toolkit, toolkit_version

    return toolkit_version(choose_toolkit(cat, toolkit)), toolkit_version(choose_toolkit(cat, None))


def _at_rows(unit: Unit, sel: set[str] | None, ign: set[str], settings: Settings, cat: Catalog | None) -> list[Finding]:
    """Findings at the rows of tables that another file (a header) writes and this one expands (`rows_elsewhere`):
    reported there too, where the row is fixed; that file's suppression comments apply."""
    out: list[Finding] = []
    for other, rows in rows_elsewhere(unit).items():
        try:
            text = read_source(other)
        except (OSError, ValueError):
            continue
        out += _kept(run_rows(rows, cat), other, text, suppressions(text), unit, (sel, ign, settings.pedantic), None)
    return out


_Fixer = Callable[[str, int, int], tuple[tuple[int, int], str]]


def _kept(hits: Iterable[tuple[Rule, Hit]], path: str, text: str,
          sups: dict[int, frozenset[str] | None],
          unit: Unit, chosen: tuple[set[str] | None, set[str], bool], fix: _Fixer | None) -> list[Finding]:
    """The findings of the rules' `hits` in the file `path` (its `text` and suppression comments `sups`) that the
    selection keeps (`chosen`: selected codes, ignored codes, whether notes show) and no suppression silences,
    each with its fingerprint and the configuration its message names; `fix(code, line, col)` gives the end of
    its span and the kind of its fix (None: no span, no fix)."""
    sel, ign, pedantic = chosen
    lines = text.splitlines()
    out: list[Finding] = []
    seen: dict[tuple[str, str], int] = {}
    for rule, hit in hits:
        line, col, sev = hit.line, hit.col, hit.severity
        if (sel is not None and rule.code not in sel) or rule.code in ign or (sev == "note" and not pedantic):
            continue
        sup = sups.get(line, frozenset())
        if sup is None or (sup and rule.code in sup):
            continue
        lt = lines[line - 1] if 0 < line <= len(lines) else ""
        nth = seen[(rule.code, lt)] = seen.get((rule.code, lt), -1) + 1
        end, kind = fix(rule.code, line, col) if fix is not None else ((line, col), "none")
        out.append(Finding(path, line, col, rule.code, rule.name, hit.message, _fingerprint(rule.code, path, lt, nth),
                           sev, unit.engine, unit.headers, hit.config, *end, kind, hit.hint))
    return out


def display_path(path: str) -> str:
    """A path as the reports name it: without a leading `./` (`./src/x.c` is `src/x.c`)."""
    while path.startswith(("./", "." + os.sep)) and len(path) > 2:
        path = path[2:].lstrip("/" + os.sep) or path
    return path


def iter_files(paths: Iterable[str]) -> tuple[list[str], list[Problem]]:
    """Source files under `paths` (named as `display_path` shows them), and the entries that cannot be files to
    lint (dangling symlinks, and files given explicitly whose suffix is not one of C, C++, CUDA or Python: a
    header without a suffix is taken, `README.md` is not)."""
    out: list[str] = []
    problems: list[Problem] = []
    for p in map(display_path, paths):
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(C_SUFFIXES + PY_SUFFIXES):
                        full = display_path(os.path.join(root, f))
                        (out.append(full) if os.path.exists(full) else
                         problems.append(Problem(full, "dangling symbolic link")))
        elif os.path.exists(p):
            ext = os.path.splitext(os.path.basename(p))[1]
            (out.append(p) if not ext or p.endswith(C_SUFFIXES + PY_SUFFIXES) else
             problems.append(Problem(p, f"{ext} is not a suffix of C, C++, CUDA or Python source "
                                        "(to lint it anyway: cuentry lint - --stdin-filename NAME.cpp < FILE)")))
        elif os.path.lexists(p):
            problems.append(Problem(p, "dangling symbolic link"))
        else:
            raise UsageError(f"no such file or directory: {p}", hint="give source files or directories to lint")
    return out, problems


_PY_SHEBANG = re.compile(r"#![^\n]*\bpython[\d.]*\b")
_PY_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+[A-Za-z_][\w.]*|from[ \t]+\.*[A-Za-z_]?[\w.]*[ \t]+import[ \t(])[^;\n]*$",
                        re.M)


def looks_like_python(text: str) -> bool:
    """Whether source given without a name (standard input) is Python: a `#!...python` first line, or an import
    statement (`import x`, `from x import y`; a C++ `import m;` ends with a semicolon)."""
    return _PY_SHEBANG.match(text) is not None or _PY_IMPORT.search(text) is not None


def is_python(path: str, text: str | None = None) -> bool:
    """Whether `path` is Python source: by its suffix, or, having none, by a `#!...python` first line (a script,
    which pre-commit hands over as Python). `text` is the file's text, when it was read already."""
    if path.endswith(PY_SUFFIXES):
        return True
    if os.path.splitext(os.path.basename(path))[1]:
        return False
    if text is None:
        try:
            text = read_source(path)[:256]   # a file without a suffix is rare: read it once more
        except (OSError, ValueError):
            return False
    return _PY_SHEBANG.match(text) is not None


def read_source(path: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a regular file of at most `limit` bytes (UTF-8, a BOM dropped); OSError or ValueError
    with a one-line reason otherwise. Never blocks on a FIFO and never reads a device."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size} bytes, above the {limit >> 20} MiB limit")
        chunks = []
        left = limit + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"above the {limit >> 20} MiB limit")
    return data.decode("utf-8-sig", errors="replace")


_WORDS = ("GetProcAddress", "GetDriverEntryPoint", "dlsym", "dlvsym", "CU_GET_PROC_ADDRESS", "cudaEnable",
          "FUNCTYPE", "CDLL", "argtypes", "cuentry", ".cdef(")
"""Words that make a file worth parsing by themselves (substring checks: the pre-filter reads every file)."""
_PY_WORDS = ("ctypes", "cffi", "cuda", "cuentry", "CDLL", "dlopen", "LoadLibrary")
"""A Python file is run when it names something of the driver API (`cuX`, `CU_X`) and one of these: a way to
reach a library (ctypes, cffi, cuda-python, cuentry)."""
_PY_DRIVER = ("libcuda", "nvcuda", '"cuda"', "'cuda'")
"""What names the driver library itself (a load whose exports come from a table elsewhere)."""
_VERSIONED = re.compile(r"cu[A-Z]\w*_(?:v\d|pt[ds])")   # a literal first: the regex engine scans for "cu"
_NAMED = re.compile(r'"cu[A-Z]\w*"')   # a driver function's name as a whole string: what a lookup of any name is given
_CU = re.compile(r"cu[A-Z]")


def _word_at(text: str, pattern: re.Pattern[str]) -> bool:
    """Whether `pattern` matches at the start of a word (checked by hand: a leading \\b makes a search slow)."""
    for m in pattern.finditer(text):
        i = m.start()
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):
            return True
    return False


def _cuda_word(text: str) -> bool:
    """Whether a text names something of the CUDA driver API (`cuX`, `CU_X`, `PFN_cuX`)."""
    return "CU_" in text or "PFN_cu" in text or _word_at(text, _CU)


def triggered(text: str) -> bool:
    """Whether a text names a request API, a PFN typedef, a versioned driver symbol or a driver function's name as a
    string (what any lookup is given): the pre-filter's test of one file."""
    if any(w in text for w in _WORDS) or "PFN_cu" in text:
        return True
    if '"cu' in text and _NAMED.search(text):
        return True
    return ("_v" in text or "_pt" in text) and _word_at(text, _VERSIONED)


def _python_relevant(text: str) -> bool:
    """A Python file is read when it names the driver (a CUDA word, `libcuda`, `nvcuda`, `"cuda"`) and a way of
    loading or binding it (ctypes, cffi, cuda.bindings, cuentry)."""
    return (_cuda_word(text) or any(w in text for w in _PY_DRIVER)) and any(w in text for w in _PY_WORDS)


class _Relevance:
    """Skips the parse of files that cannot hold a request. A file is parsed when it names a request API
    itself; or when it includes a header that does (a wrapper, a loader macro) and it, or another header
    it includes (an X-macro table), names a CUDA driver symbol; or when it calls a loader-like macro on a
    driver symbol and includes a header that is not found. Everything is a substring or one-regex check,
    and each header is read once per run."""

    def __init__(self, include_dirs: Sequence[str]) -> None:
        self.include_dirs = include_dirs
        self.headers: dict[str, tuple[bool, bool]] = {}     # header -> (triggered, names a CUDA symbol)
        self.missing: dict[str, bool] = {}
        self.found: dict[tuple[str, str], str | None] = {}

    def __call__(self, text: str, path: str) -> bool:
        if is_python(path, text):
            return _python_relevant(text)
        if triggered(text):
            return True
        if "#" not in text:
            return False
        hdrs = [self._find(m.group(1), path) for m in list(_QUOTED_INCLUDE.finditer(text))[:64]]
        # a project header included with <...> (`<kvikio/shim/cuda.hpp>`): found in the include directories or
        # where the project keeps its headers; a system header is found in neither and costs nothing
        angled = [self._find_project(m.group(1), path) for m in list(_ANGLE_INCLUDE.finditer(text))[:64]]
        facts = [self._header(h) for h in [*hdrs, *angled] if h is not None]
        if any(t for t, _ in facts) and (_cuda_word(text) or any(c and not t for t, c in facts)):
            return True
        missing = any(h is None or self._misses(h) for h in hdrs)
        return missing and _LOADER_CALL.search(text) is not None   # parsed, to say what it could not see

    def _find(self, name: str, path: str) -> str | None:
        k = (os.path.dirname(path), name)
        if k not in self.found:
            from .preprocess import find_header

            self.found[k] = find_header(name, path, self.include_dirs)
        return self.found[k]

    def _find_project(self, name: str, path: str) -> str | None:
        got = self._find(name, path) if self.include_dirs else None
        if got is None and "/" in name:
            from .clang import header_dirs

            found = header_dirs(name, os.path.dirname(os.path.abspath(path)))
            got = os.path.join(found[0], name) if found else None
        return got

    def _misses(self, hdr: str) -> bool:
        """Whether a header includes (quoted) one that cannot be found."""
        if hdr not in self.missing:
            self.missing[hdr] = False
            try:
                text = read_source(hdr, 4 << 20)
            except (OSError, ValueError):
                return False
            self.missing[hdr] = any(self._find(m.group(1), hdr) is None for m in list(_QUOTED_INCLUDE.finditer(text))[:64])
        return self.missing[hdr]

    def _header(self, hdr: str, depth: int = 0) -> tuple[bool, bool]:
        """(whether a header, or a project header it includes, names a request API; whether it names a CUDA driver
        symbol), three includes deep."""
        if hdr not in self.headers:
            self.headers[hdr] = (False, False)
            try:
                text = read_source(hdr, 4 << 20)
            except (OSError, ValueError):
                return self.headers[hdr]
            got = (triggered(text), _cuda_word(text))
            if not got[0] and depth < 3 and "#" in text:
                inner = [self._find(m.group(1), hdr) for m in list(_QUOTED_INCLUDE.finditer(text))[:64]]
                inner += [self._find_project(m.group(1), hdr) for m in list(_ANGLE_INCLUDE.finditer(text))[:64]]
                got = (any(self._header(h, depth + 1)[0] for h in inner if h is not None), got[1])
            self.headers[hdr] = got
        return self.headers[hdr]


def _pins(unit: Unit, cat: Catalog, rep: Report, required: set[str]) -> None:
    """Each symbol's chain (the pins it is asked at, an export taken by name at its ABI's version); a
    request under a test that guarantees a driver at or above its pin does not make its symbol required."""
    for q in unit.queries:
        sym = q.symbol
        if sym is None or sym not in cat:
            continue
        first = cat.versions(sym)[0]
        for v in q.pins:
            if v >= first:
                rep.chains.setdefault(sym, set()).add(v)
                if not (q.guard and q.guard >= v):
                    required.add(sym)
    for e in unit.exports:
        abi = cat.by_exported(e.name)
        if abi is not None:
            rep.chains.setdefault(abi.symbol, set()).add(abi.version)
            required.add(abi.symbol)


MAX_PASSES = 4
"""Passes over the C-family files that call wrappers defined in other files (one more layer each)."""
KEEP_SKIPPED = 256 << 20
"""Bytes of skipped files' text kept for the later passes (beyond it they are read again)."""

_Result = tuple[list[Finding], Unit]


def _work(state: tuple[Sequence[str] | None, Sequence[str] | None, Settings], task: tuple[str, str, str, Any]) -> Any:
    """One task in a worker process: ("lint", path, text, shared) -> (findings, unit); ("check", path, text,
    None) -> why the Python file is not valid ('' when it is)."""
    select, ignore, settings = state
    kind, path, text, shared = task
    if kind == "check":
        from .python import syntax_problem

        return syntax_problem(text, path)
    return lint_text(text, path, select=select, ignore=ignore, include_dirs=settings.include_dirs, cat=catalog(),
                     shared=shared, settings=settings)


class _Runner:
    """Where files are linted: in supervised worker processes (always when libclang is installed, and with
    `-j` above 1), so a crash, hang or blow-up costs one file; in this process only without libclang (Python
    files alone) at -j 1."""

    def __init__(self, jobs: int, select: Sequence[str] | None, ignore: Sequence[str] | None,
                 settings: Settings) -> None:
        self.state = (select, ignore, settings)
        clang = _clang_installed()
        self.workers: Any = None
        if jobs > 1 or clang:
            from .parallel import Limits, Workers

            if clang:
                _preload()   # forked workers find libclang loaded (no parse happens here)

            self.workers = Workers(jobs, _work, self.state, Limits(settings.timeout, settings.memory))

    def close(self) -> None:
        if self.workers is not None:
            self.workers.close()

    def run(self, tasks: list[tuple[str, str, str, Any]], done: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Each task's result by path: a result, or a `Problem` when its worker failed on it; `done(n)`
        after each of them."""
        out: dict[str, Any] = {}
        if self.workers is None:
            for t in tasks:
                out[t[1]] = _work(self.state, t)
                if done:
                    done(len(out))
            return out
        from .parallel import Failed, Raised

        for i, res in self.workers.run(tasks):
            path = tasks[i][1]
            if isinstance(res, Raised):
                raise UsageError(res.message, hint=res.hint)
            out[path] = Problem(path, res.reason) if isinstance(res, Failed) else res
            if done:
                done(len(out))
        return out


class Isolated:
    """`lint_text` of one text at a time as `lint_paths` lints files: in a supervised worker process when libclang
    is installed (started on the first text), so a crash, a hang or a blow-up on a text is a `Problem`, never the
    run's end. What verifies the fixes ([apply][cuentry.lint.apply]) lints the fixed texts with it."""

    def __init__(self, settings: Settings, select: Sequence[str] | None = None,
                 ignore: Sequence[str] | None = None) -> None:
        self._args = (select, ignore, settings)
        self._runner: _Runner | None = None

    def __call__(self, text: str, path: str) -> tuple[list[Finding], Unit] | Problem:
        if self._runner is None:
            select, ignore, settings = self._args
            self._runner = _Runner(1, select, ignore, settings)
        got: tuple[list[Finding], Unit] | Problem = self._runner.run([("lint", path, text, None)])[path]
        return got

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def _preload() -> None:
    try:
        from clang.cindex import conf

        conf.lib  # noqa: B018 - loading the shared library is the point
    except Exception:
        return


def _clang_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("clang") is not None
    except (ImportError, ValueError):   # an import hook that refuses it: not installed, as far as we can use it
        return False


def lint_paths(paths: Sequence[str], *, select: Sequence[str] | None = None, ignore: Sequence[str] | None = None,
               include_dirs: Sequence[str] = (), max_bytes: int = MAX_FILE_BYTES,
               progress: Callable[[int, int], None] | None = None, settings: Settings | None = None,
               jobs: int = 1, config: Config | str | None = None, extend_select: Sequence[str] | None = None,
               force_exclude: bool = False) -> Report:
    """Lint files and directories; the report includes the pins found, for the minimum driver.

    The configuration is applied here, as `cuentry lint` applies it: `config` is a
    [Config][cuentry.lint.config.Config], the path of a configuration file, or None to find one as the command
    does (the nearest `pyproject.toml` with `[tool.cuentry.lint]`, or `cuentry.toml` with `[lint]`, from the first
    path up; `Config()` reads none). Its `select`/`ignore`/`extend-select` apply unless `select`/`ignore` are
    given (`extend_select` adds to either); its `exclude`, `extend-exclude`, `.gitignore` (`respect-gitignore`)
    and `per-file-ignores` always (files named in `paths` are excluded only with `force_exclude`).

    This process reads each file once and keeps only those the pre-filter admits; they are parsed in
    `jobs` supervised worker processes (see `cuentry.lint.parallel`), where a crash, a hang or a blow-up
    costs that file (a problem in the report), never the run. A wrapper defined in one file
    (`get_driver_entry_point` in a loader, a template in a header) is an API in every other file:
    files that call such wrappers are linted again with them, until no pass finds a new one. The report
    does not depend on `jobs`. Each finding's `fix` is the kind of repair its rule offers; the command promises
    only those [verified][cuentry.lint.apply.verified] marks.
    """
    cfg = configuration(config, paths)
    select, ignore = selection(cfg, select, extend_select, ignore)
    settings = settings or Settings(include_dirs=include_dirs)
    check_engine(settings.engine)
    files, problems = chosen_files(paths, cfg, force_exclude)
    files, problems = _without_extra(files, problems)
    cat = catalog()
    rep = Report([], 0, 0, {}, problems, select=select, ignore=ignore)
    relevant = _Relevance(settings.include_dirs or include_dirs)
    texts: dict[str, str] = {}
    skipped: dict[str, str | None] = {}
    tasks: list[tuple[str, str, str, Any]] = []
    kept = 0
    for path in files:
        text = _read(path, max_bytes, rep)
        if text is not None and relevant(text, path):
            texts[path] = text
            tasks.append(("lint", path, text, None))
        elif text is not None and is_python(path, text):
            if len(text) < _PY_ALWAYS:
                tasks.append(("check", path, text, None))
        elif text is not None:
            kept += len(text)
            skipped[path] = text if kept <= KEEP_SKIPPED else None
    runner = _Runner(jobs, select, ignore, settings)
    unparsed = len(files) - len(tasks)
    try:
        results = _first(runner.run(tasks, (lambda n: progress(unparsed + n, len(files))) if progress else None), rep)
        shared = Shared()
        for path in files:
            if path in results:
                shared.learn(results[path][1])
        passes = _Passes(results, texts, shared, skipped, relevant)
        passes.run(lambda todo: runner.run([("lint", p, texts[p], shared) for p in todo]), max_bytes)
        rep.problems += passes.problems
    finally:
        runner.close()
    _assemble(rep, files, results, cat, select, ignore)
    _per_file_ignores(rep, cfg)
    return rep


def configuration(config: Config | str | None, paths: Sequence[str]) -> Config:
    """The configuration a run applies: `config` as it is, the file it names, or (None) the one found from the
    first path up (a path of `-`, standard input, is not a place to look from)."""
    from . import config as conf

    if isinstance(config, conf.Config):
        return config
    if isinstance(config, str):
        return conf.load(config)
    first = next((p for p in paths if p != "-"), ".")
    return conf.load(conf.find(first))


def selection(cfg: Config, select: Sequence[str] | None = None, extend_select: Sequence[str] | None = None,
              ignore: Sequence[str] | None = None) -> tuple[list[str] | None, list[str]]:
    """The rules a run selects and ignores: `select` (else the configuration's) with every extend-select, and the
    configuration's ignores (less what `select`/`extend_select` name: what is named wins) with `ignore`."""
    chosen = list(select) if select is not None else cfg.select
    extend = [*cfg.extend_select, *(extend_select or [])]
    if extend and chosen is not None:
        chosen = [*chosen, *extend]
    named = (parse_codes(select) or set()) | (parse_codes(extend) or set()) if select or extend else set()
    off = sorted((parse_codes(cfg.ignore) or set()) - named) if cfg.ignore else []
    parse_codes(chosen)
    parse_codes(ignore)
    return chosen, [*off, *(ignore or [])]


def chosen_files(paths: Sequence[str], cfg: Config, force_exclude: bool = False) -> tuple[list[str], list[Problem]]:
    """The files to lint under `paths` (`iter_files`) less those the configuration's exclusions and `.gitignore`
    name (files named in `paths` only with `force_exclude`), and the entries that cannot be linted."""
    from . import config as conf

    files, problems = iter_files(paths)
    given = set() if force_exclude else set(map(display_path, paths))
    patterns = [*cfg.exclude, *cfg.extend_exclude]
    keep = [f for f in files if f in given or not (patterns and conf.excluded(f, cfg.root, patterns))]
    if cfg.respect_gitignore:
        ignored = conf.gitignored([f for f in keep if f not in given])
        keep = [f for f in keep if f not in ignored]
    return keep, problems


def _per_file_ignores(rep: Report, cfg: Config) -> None:
    """Drop the findings that `per-file-ignores` turns off for their file."""
    if not cfg.per_file_ignores:
        return
    from . import config as conf

    rep.findings = [f for f in rep.findings if not any(
        f.code.startswith(c) for c in conf.ignored_here(f.path, cfg.root, cfg.per_file_ignores))]


def _without_extra(files: list[str], problems: list[Problem]) -> tuple[list[str], list[Problem]]:
    """Without the lint extra: the C-family files as problems of the report (one line of text output names them
    all) and the Python files linted; nothing but C-family files to lint is bad input (exit 2), in one line."""
    from .extra import NOT_INSTALLED, missing, require

    c_family = [f for f in files if not is_python(f)]
    if not c_family or not missing():
        return files, problems
    python = [f for f in files if f not in set(c_family)]
    if not python:
        require()
    return python, [*problems, *(Problem(f, NOT_INSTALLED) for f in c_family)]


def _first(got: dict[str, Any], rep: Report) -> dict[str, _Result]:
    """The first pass's results; its problems (a file a worker failed on, an invalid Python file) into `rep`."""
    results: dict[str, _Result] = {}
    for path, res in got.items():
        if isinstance(res, Problem):
            rep.problems.append(res)
        elif isinstance(res, str):
            if res:
                rep.problems.append(Problem(path, res))
        else:
            results[path] = res
    return results


def _assemble(rep: Report, files: list[str], results: dict[str, _Result], cat: Catalog,
              select: Sequence[str] | None, ignore: Sequence[str] | None) -> None:
    required: set[str] = set()
    rows: set[tuple[str, int, int, str]] = set()   # a header's row, reported from each file that expands it: once
    for path in files:
        if path in results:
            got, unit = results[path]
            for f in got:
                if f.path != path:
                    if (f.path, f.line, f.col, f.code) in rows:
                        continue
                    rows.add((f.path, f.line, f.col, f.code))
                rep.findings.append(f)
            if unit.problem:
                rep.problems.append(Problem(path, unit.problem))
            if not unit.problem:
                rep.judged.append(Judged(path, unit.engine, unit.headers, unit.note, tuple(unit.configs), unit.requests,
                                         unit.judged, tuple(unit.unjudged), unit.parses))
            rep.notes.extend(Problem(path, "not fully expanded: " + n) for n in unit.notes)
            _unused_suppressions(rep, path, unit, cat, select, ignore)
            _pins(unit, cat, rep, required)
    rep.optional = set(rep.chains) - required
    rep.pins.update({sym: min(pins) for sym, pins in rep.chains.items()})
    rep.problems.sort(key=lambda p: p.path)


def _unused_suppressions(rep: Report, path: str, unit: Unit, cat: Catalog, select: Sequence[str] | None,
                         ignore: Sequence[str] | None) -> None:
    """Into the report, the file's suppression comments that silence nothing or name an unknown rule."""
    if unit.suppressions:
        from .suppress import unused

        active = (parse_codes(select) or set(RULE_CODES)) - (parse_codes(ignore) or set())
        rep.unused_suppressions.extend(Problem(path, m, ln) for ln, m in unused(unit, cat, active))


def _read(path: str, max_bytes: int, rep: Report) -> str | None:
    try:
        text = read_source(path, max_bytes)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        rep.problems.append(Problem(path, reason))
        return None
    rep.files += 1
    rep.linted.append(path)
    rep.lines += text.count("\n") + (bool(text) and not text.endswith("\n"))  # a last line without a newline counts
    return text


def _own(unit: Unit) -> set[str]:
    """The names of the wrappers a file defines itself."""
    return {str(spec.get("name", "")) for spec in unit.clang_apis.values()}


class _Passes:
    """Later passes: files that call a wrapper defined elsewhere, or mention one (or include a header
    that does) but had no trigger word of their own, are linted with every wrapper known so far."""

    def __init__(self, results: dict[str, _Result], texts: dict[str, str], shared: Shared,
                 skipped: dict[str, str | None], relevant: _Relevance) -> None:
        self.results, self.texts, self.shared, self.skipped = results, texts, shared, skipped
        self.relevant = relevant
        self.done: dict[str, frozenset[str]] = {}
        self.header_words: dict[str, frozenset[str]] = {}
        self.problems: list[Problem] = []

    def run(self, lint: Callable[[list[str]], dict[str, Any]], max_bytes: int) -> None:
        for _ in range(MAX_PASSES):
            names = self.shared.names
            if not names:
                return
            again = [p for p, (_, u) in self.results.items() if u.lang == "c" and
                     (u.called & names) - _own(u) and self.done.get(p) != names]
            again += self.newly_relevant(names, max_bytes)
            if not again:
                return
            learnt = False
            for path in again:
                self.done[path] = names
            for path, res in lint(again).items():
                if isinstance(res, tuple):       # a worker that failed now keeps the file's earlier result
                    self.results[path] = res
                    learnt |= self.shared.learn(res[1])
                elif isinstance(res, Problem) and path not in self.results:
                    self.problems.append(res)    # a file first parsed in this pass
            if not learnt:
                return

    def newly_relevant(self, names: frozenset[str], max_bytes: int) -> list[str]:
        out = []
        for path, kept in list(self.skipped.items()):
            try:
                text = kept if kept is not None else read_source(path, max_bytes)
            except (OSError, ValueError):
                del self.skipped[path]
                continue
            if self.mentions(text, path, names):
                self.texts[path] = text
                out.append(path)
                del self.skipped[path]
        return out

    def mentions(self, text: str, path: str, names: frozenset[str]) -> bool:
        if any(n in text for n in names) and not names.isdisjoint(_WORD.findall(text)):
            return True
        if not _cuda_word(text):
            return False    # a header's wrapper is linted in the header; this file asks for nothing by name
        from .preprocess import find_header

        for m in list(_QUOTED_INCLUDE.finditer(text))[:64]:
            hdr = find_header(m.group(1), path, self.relevant.include_dirs)
            if hdr is None:
                continue
            if hdr not in self.header_words:
                try:
                    self.header_words[hdr] = frozenset(_WORD.findall(read_source(hdr, 4 << 20)))
                except (OSError, ValueError):
                    self.header_words[hdr] = frozenset()
            if not names.isdisjoint(self.header_words[hdr]):
                return True
        return False
