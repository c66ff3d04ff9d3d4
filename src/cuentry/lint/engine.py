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
from .facts import Unit
from .rules import RULE_CODES, run

__all__ = [
    "C_SUFFIXES",
    "ENGINES",
    "MAX_FILE_BYTES",
    "MAX_PASSES",
    "PY_SUFFIXES",
    "Finding",
    "Judged",
    "Problem",
    "Report",
    "Settings",
    "Shared",
    "extract",
    "iter_files",
    "lint_paths",
    "lint_text",
    "parse_codes",
    "read_source",
]


C_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".inl", ".inc")
PY_SUFFIXES = (".py", ".pyi")
MAX_FILE_BYTES = 64 << 20
"""Files larger than this (64 MiB) are refused with a problem line, not read."""
_PY_ALWAYS = 4 << 20   # Python files below this are always parsed, to report the invalid ones
_SKIP_DIRS = {"__pycache__", "node_modules", ".git", ".hg", ".svn", ".tox", ".venv", "venv", "build", "dist"}
_TRIGGERS = re.compile(
    r"cuGetProcAddress|cudaGetDriverEntryPoint|dlv?sym|GetProcAddress|CU_GET_PROC_ADDRESS|cudaEnable"
    r"|FUNCTYPE|\bcu[A-Z]\w*_(?:v\d|pt[ds])|\bCDLL\b|\bargtypes\b|\bcuentry\b|\.cdef\(")
_FUNCTION_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+\w+\(", re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")
_LOADER_CALL = re.compile(r"\b[A-Z][A-Z0-9_]{2,}[ \t]*\([ \t]*&?[ \t]*cu[A-Z]")
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


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
    engine: str = "tree-sitter"  # which engine judged the file: clang | tree-sitter
    headers: str = ""            # clang: the CUDA headers the file was parsed against

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Judged:
    """Which engine judged a file, against which headers, and why not clang when it was not."""

    path: str
    engine: str
    headers: str = ""
    note: str = ""
    requests: int = 0                                  # clang: requests found in the file
    judged: int = 0                                    # clang: how many of them were judged
    unjudged: tuple[tuple[int, str], ...] = ()         # clang: (line, why) of the others

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        # JSON keys of their own (a key has one kind across the schemas: `judged` is the list, `requests` trace's)
        out["requests_found"] = out.pop("requests")
        out["requests_judged"] = out.pop("judged")
        out["requests_unjudged"] = [{"line": line, "why": why} for line, why in out.pop("unjudged")]
        return out


@dataclass
class Settings:
    """How C-family files are judged: the engine ("auto": clang when libclang is installed), its parse
    flags, the toolkit of generated headers, the driver floor the code states, and whether notes show."""

    engine: str = "auto"
    include_dirs: Sequence[str] = ()
    defines: Sequence[str] = ()
    std: str | None = None
    toolkit: str | None = None
    commands: dict[str, list[str]] = field(default_factory=dict)
    floor: int = 0
    pedantic: bool = False


ENGINES = ("auto", "clang", "tree-sitter")


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
    pins: dict[str, int]            # symbol -> highest literal pin seen
    problems: list[Problem] = field(default_factory=list)
    linted: list[str] = field(default_factory=list)
    judged: list[Judged] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)   # files linted only in part ("not fully expanded: ...")

    @property
    def min_driver(self) -> int:
        return max(self.pins.values(), default=0)

    @property
    def unparsable(self) -> list[str]:
        return [p.path for p in self.problems]

    def to_dict(self) -> dict[str, Any]:
        md = self.min_driver
        return {"files": self.files, "lines": self.lines, "findings": [f.to_dict() for f in self.findings],
                "min_driver": md, "min_driver_release": format_version(md) if md else None,
                "pins": dict(sorted(self.pins.items())), "problems": [p.to_dict() for p in self.problems],
                "partial": [{**n.to_dict(), "severity": "note"} for n in self.notes],
                "unparsable": self.unparsable, "judged": [j.to_dict() for j in self.judged]}


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
    """What one C-family file tells the others: the wrappers it defines and its prototypes' defaults."""

    apis: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, dict[int, Any]] = field(default_factory=dict)
    clang: dict[str, Any] = field(default_factory=dict)       # the clang engine's wrappers, by USR

    def learn(self, unit: Unit) -> bool:
        """Take a file's wrappers and defaults; True when something new was learnt."""
        new = False
        for usr, spec in unit.clang_apis.items():
            if usr not in self.clang:
                self.clang[usr] = spec
                new = True
        for name, spec in unit.apis.items():
            if name not in self.apis:
                self.apis[name] = spec
                new = True
        for name, d in unit.defaults.items():
            mine = self.defaults.setdefault(name, {})
            for i, v in d.items():
                if i not in mine:
                    mine[i] = v
                    new = True
        return new


def _clang(text: str, path: str, settings: Settings, shared: Shared | None = None) -> tuple[Unit | None, str]:
    """The clang engine's facts, or None and why it could not judge the file."""
    from . import clang

    if settings.engine == "tree-sitter":
        return None, ""
    if not clang.available():
        why = "libclang is not installed (pip install 'cuentry[clang]')"
        return None, why if settings.engine == "clang" else ""
    if _FUNCTION_MACRO.search(text):
        from .preprocess import preprocess

        if preprocess(text, path, settings.include_dirs).truncated:
            return None, "its macros expand beyond the linter's bound (a macro bomb?): judged by tree-sitter"
    try:
        unit = clang.extract(text, path, clang.Options(settings.include_dirs, settings.defines, settings.std,
                                                       settings.toolkit, settings.commands,
                                                       foreign=shared.clang if shared is not None else {}))
    except clang.NotParsed as exc:
        return None, f"{exc}; judged by tree-sitter"
    except UsageError:
        raise
    except Exception as exc:
        return None, f"clang could not judge it ({type(exc).__name__}: {exc}); judged by tree-sitter"
    return unit, ""


def _merge(unit: Unit, ts: Unit, foreign: set[str]) -> None:
    """Into clang's facts, tree-sitter's requests clang cannot see: those through wrappers defined in other files
    (when clang did not follow them), and those in the `#if` branches the flags leave out (tree-sitter lints
    every branch: a request there that clang has no match for on its line)."""
    seen = {(q.line, q.symbol) for q in unit.queries}
    same = {(q.line, q.symbol, q.version, q.api.removesuffix("_v2")) for q in unit.queries}
    for q in ts.queries:
        first = q.via.split(" -> ")[0] if q.via else ""
        through_other_file = first in foreign and (q.line, q.symbol) not in seen
        in_left_out_branch = "branch" in q.where and (q.line, q.symbol, q.version, q.api.removesuffix("_v2")) not in same
        if through_other_file or in_left_out_branch:
            unit.queries.append(q)
    have = set(unit.flag_uses)
    unit.flag_uses += [f for f in ts.flag_uses if f not in have]


def extract(text: str, path: str, include_dirs: Sequence[str] = (), shared: Shared | None = None,
            settings: Settings | None = None) -> Unit:
    """The facts of one file, by its suffix (C family unless it ends in .py): clang when it is installed
    and the file parses, tree-sitter otherwise (the unit says which, and why).

    A file clang judges is also read by tree-sitter (cheap): that front end's wrappers and prototype defaults
    are what other files of the run use, and its requests through wrappers defined in *other* files (which
    clang, seeing one translation unit, cannot follow) are added to clang's.
    """
    if path.endswith(PY_SUFFIXES):
        from .python import extract as py

        return py(text, path)
    from .cfamily import extract as cf

    settings = settings or Settings(include_dirs=include_dirs)
    unit, why = _clang(text, path, settings, shared)
    ts = cf(text, path, include_dirs) if shared is None else cf(text, path, include_dirs, shared.apis, shared.defaults)
    if unit is None:
        ts.note = why
        ts.floor = settings.floor
        return ts
    _merge(unit, ts, set(shared.apis) - set(ts.apis) if shared is not None else set())
    unit.queries.sort(key=lambda q: (q.line, q.col))
    unit.apis, unit.defaults, unit.called = ts.apis, ts.defaults, ts.called
    unit.floor = settings.floor
    return unit


def _fingerprint(code: str, path: str, line_text: str, nth: int) -> str:
    h = hashlib.sha256(f"{code}\0{path}\0{' '.join(line_text.split())}\0{nth}".encode()).hexdigest()
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
    lines = text.splitlines()
    out = []
    seen: dict[tuple[str, str], int] = {}
    for rule, (line, col, msg, sev) in run(unit, cat):
        if (sel is not None and rule.code not in sel) or rule.code in ign or (sev == "note" and not settings.pedantic):
            continue
        sup = unit.suppressions.get(line, frozenset())
        if sup is None or (sup and rule.code in sup):
            continue
        lt = lines[line - 1] if 0 < line <= len(lines) else ""
        nth = seen[(rule.code, lt)] = seen.get((rule.code, lt), -1) + 1
        out.append(Finding(path, line, col, rule.code, rule.name, msg, _fingerprint(rule.code, path, lt, nth), sev,
                           unit.engine, unit.headers))
    out.sort(key=lambda f: (f.line, f.col, f.code))
    dedup: list[Finding] = []
    for f in out:
        if not dedup or (dedup[-1].line, dedup[-1].col, dedup[-1].code, dedup[-1].message) != (
                f.line, f.col, f.code, f.message):
            dedup.append(f)
    return dedup, unit


def iter_files(paths: Iterable[str]) -> tuple[list[str], list[Problem]]:
    """Source files under `paths` (files given explicitly are taken whatever their suffix), and the
    entries that cannot be files to lint (dangling symlinks)."""
    out: list[str] = []
    problems: list[Problem] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(C_SUFFIXES + PY_SUFFIXES):
                        full = os.path.join(root, f)
                        (out.append(full) if os.path.exists(full) else
                         problems.append(Problem(full, "dangling symbolic link, not linted")))
        elif os.path.exists(p):
            out.append(p)
        elif os.path.lexists(p):
            problems.append(Problem(p, "dangling symbolic link, not linted"))
        else:
            raise UsageError(f"no such file or directory: {p}", hint="give source files or directories to lint")
    return out, problems


def read_source(path: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a regular file of at most `limit` bytes (UTF-8, a BOM dropped); OSError or ValueError
    with a one-line reason otherwise. Never blocks on a FIFO and never reads a device."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file, not linted")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size} bytes, above the {limit >> 20} MiB limit: not linted")
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
        raise ValueError(f"above the {limit >> 20} MiB limit: not linted")
    return data.decode("utf-8-sig", errors="replace")


class _Relevance:
    """Skips the parse of files that cannot hold a request (no trigger word in them or their headers)."""

    def __init__(self, include_dirs: Sequence[str]) -> None:
        self.include_dirs = include_dirs
        self.headers: dict[str, bool] = {}
        self.missing: dict[str, bool] = {}

    def __call__(self, text: str, path: str) -> bool:
        if _TRIGGERS.search(text):
            return True
        if path.endswith(PY_SUFFIXES):
            return False
        from .preprocess import find_header

        missing = False
        for m in list(_QUOTED_INCLUDE.finditer(text))[:64]:
            hdr = find_header(m.group(1), path, self.include_dirs)
            if hdr is not None and self._header(hdr):
                return True
            missing |= hdr is None or self._misses(hdr)
        return missing and _LOADER_CALL.search(text) is not None   # parsed, to say what it could not see

    def _misses(self, hdr: str) -> bool:
        """Whether a header includes (quoted) one that cannot be found."""
        if hdr not in self.missing:
            self.missing[hdr] = False
            from .preprocess import find_header

            try:
                text = read_source(hdr, 4 << 20)
            except (OSError, ValueError):
                return False
            self.missing[hdr] = any(find_header(m.group(1), hdr, self.include_dirs) is None
                                    for m in list(_QUOTED_INCLUDE.finditer(text))[:64])
        return self.missing[hdr]

    def _header(self, hdr: str) -> bool:
        if hdr not in self.headers:
            self.headers[hdr] = False
            try:
                self.headers[hdr] = bool(_TRIGGERS.search(read_source(hdr, 4 << 20)))
            except (OSError, ValueError):
                pass
        return self.headers[hdr]


def _pins(unit: Unit, cat: Catalog, pins: dict[str, int]) -> None:
    for q in unit.queries:
        sym = q.symbol
        if sym is None or sym not in cat:
            continue
        first = cat.versions(sym)[0]
        for v in q.pins:
            if v >= first:
                pins[sym] = max(pins.get(sym, 0), v)
    for e in unit.exports:
        abi = cat.by_exported(e.name)
        if abi is not None:
            pins[abi.symbol] = max(pins.get(abi.symbol, 0), abi.version)


MAX_PASSES = 4
"""Passes over the C-family files that call wrappers defined in other files (one more layer each)."""


def lint_paths(paths: Sequence[str], *, select: Sequence[str] | None = None, ignore: Sequence[str] | None = None,
               include_dirs: Sequence[str] = (), max_bytes: int = MAX_FILE_BYTES,
               progress: Callable[[int, int], None] | None = None, settings: Settings | None = None,
               jobs: int = 1) -> Report:
    """Lint files and directories; the report includes the pins found, for the minimum driver.

    A wrapper defined in one file (`get_driver_entry_point` in a loader, a template in a header) is
    an API in every other file: files that call such wrappers are linted again with them, until no
    pass finds a new one. With `jobs` above 1 the first pass runs in that many processes (the
    report is the same).
    """
    parse_codes(select)
    parse_codes(ignore)
    settings = settings or Settings(include_dirs=include_dirs)
    if settings.engine not in ENGINES:
        raise UsageError(f"unknown engine {settings.engine!r}", hint=f"choose one of {', '.join(ENGINES)}")
    files, problems = iter_files(paths)
    cat = catalog()
    rep = Report([], 0, 0, {}, problems)
    relevant = _Relevance(include_dirs)
    shared = Shared()
    results: dict[str, tuple[list[Finding], Unit]] = {}
    texts: dict[str, str] = {}
    skipped: list[str] = []
    from .parallel import first_pass

    first = first_pass(files, jobs, select, ignore, include_dirs, max_bytes, settings) if jobs > 1 else {}
    for i, path in enumerate(files, 1):
        text = _read(path, max_bytes, rep)
        if text is not None and relevant(text, path):
            got = first.get(path)
            results[path] = got if isinstance(got, tuple) else lint_text(
                text, path, select=select, ignore=ignore, include_dirs=include_dirs, cat=cat, settings=settings)
            texts[path] = text
            shared.learn(results[path][1])
        elif text is not None and path.endswith(PY_SUFFIXES):
            _check_python(text, path, rep, getattr(first.get(path), "problem", None))
        elif text is not None:
            skipped.append(path)
        if progress:
            progress(i, len(files))
    passes = _Passes(results, texts, shared, skipped, relevant)
    passes.run(lambda text, path: lint_text(text, path, select=select, ignore=ignore, include_dirs=include_dirs,
                                            cat=cat, shared=shared, settings=settings), max_bytes)
    for path in files:
        if path in results:
            got, unit = results[path]
            rep.findings.extend(got)
            if unit.problem:
                rep.problems.append(Problem(path, unit.problem))
            if unit.lang == "c":
                rep.judged.append(Judged(path, unit.engine, unit.headers, unit.note, unit.requests, unit.judged,
                                         tuple(unit.unjudged)))
            rep.notes.extend(Problem(path, "not fully expanded: " + n) for n in unit.notes)
            _pins(unit, cat, rep.pins)
    rep.problems.sort(key=lambda p: p.path)
    return rep


def _check_python(text: str, path: str, rep: Report, checked: str | None = None) -> None:
    from .python import syntax_problem

    if len(text) < _PY_ALWAYS:
        problem = syntax_problem(text, path) if checked is None else checked   # checked: by a -j worker
        if problem:
            rep.problems.append(Problem(path, problem))


def _read(path: str, max_bytes: int, rep: Report) -> str | None:
    try:
        text = read_source(path, max_bytes)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        rep.problems.append(Problem(path, reason))
        return None
    rep.files += 1
    rep.linted.append(path)
    rep.lines += text.count("\n") + 1
    return text


class _Passes:
    """Later passes: files that call a wrapper defined elsewhere, or mention one (or include a header
    that does) but had no trigger word of their own, are linted with every wrapper known so far."""

    def __init__(self, results: dict[str, tuple[list[Finding], Unit]], texts: dict[str, str], shared: Shared,
                 skipped: list[str], relevant: _Relevance) -> None:
        self.results, self.texts, self.shared, self.skipped = results, texts, shared, skipped
        self.relevant = relevant
        self.done: dict[str, frozenset[str]] = {}
        self.header_words: dict[str, frozenset[str]] = {}

    def run(self, lint: Callable[[str, str], tuple[list[Finding], Unit]], max_bytes: int) -> None:
        for _ in range(MAX_PASSES):
            names = frozenset(self.shared.apis)
            if not names:
                return
            again = [p for p, (_, u) in self.results.items() if u.lang == "c" and
                     (u.called & names) - set(u.apis) and self.done.get(p) != names]
            again += self.newly_relevant(names, max_bytes)
            if not again:
                return
            learnt = False
            for path in again:
                self.done[path] = names
                self.results[path] = lint(self.texts[path], path)
                learnt |= self.shared.learn(self.results[path][1])
            if not learnt:
                return

    def newly_relevant(self, names: frozenset[str], max_bytes: int) -> list[str]:
        out = []
        keep = []
        for path in self.skipped:
            try:
                text = read_source(path, max_bytes)
            except (OSError, ValueError):
                continue
            if self.mentions(text, path, names):
                self.texts[path] = text
                out.append(path)
            else:
                keep.append(path)
        self.skipped = keep
        return out

    def mentions(self, text: str, path: str, names: frozenset[str]) -> bool:
        if not names.isdisjoint(_WORD.findall(text)):
            return True
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
