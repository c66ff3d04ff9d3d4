"""Applying `cuentry lint --fix`: the fixes of a report planned per file, each verified by linting the fixed
text again (with the same settings), withdrawn with a note (why, and what to change by hand) when it does not
verify, and written atomically.

A fix is promised only once it verified: [verified][cuentry.lint.apply.verified] marks each finding's `fix` with
the kind of the fix that verified ("none" when none did), so the listing's `[*]` and `--json`'s `fix` are what
`--fix` then applies. The fixes themselves (which span, which kind) are their rules' ([fix][cuentry.lint.fix]);
this module sits above the engine, which it runs to verify them. Every text is linted in a supervised worker
(`engine.Isolated`, with the run's limits): libclang never runs in this process, whatever the output format
(`--fix`, `--diff`, `--sarif`); a text its worker fails on has its fixes withdrawn with the reason.

Writing ([write][cuentry.lint.apply.write]) is a compare-and-swap: the file is read again just before it is
replaced, and a file that changed since it was linted is left as it is (the fix withdrawn, saying so). The
file keeps its owner, group and mode; a file with more than one name (hard links) is rewritten in place, so
every name sees the fix; a symbolic link is fixed in its target only when the target lies inside the
project's root (else the fix is withdrawn, naming the target).
"""

from __future__ import annotations

import difflib
import errno
import itertools
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..catalog import catalog
from .engine import MAX_FILE_BYTES, Isolated, Problem, read_source, toolkit_versions
from .facts import Unit
from .fix import At, Fix, position
from .rules import candidate

__all__ = ["CHANGED", "Plan", "Withdrawn", "diff", "plan", "verified", "write"]


@dataclass(frozen=True)
class Withdrawn:
    """A fix that did not verify (or a file that cannot be rewritten): the finding's place and code, what the fix
    would have changed, why it was withdrawn, and what to change by hand instead."""

    path: str
    line: int
    code: str = ""
    what: str = ""
    why: str = ""
    by_hand: str = ""

    @property
    def message(self) -> str:
        """The note as one line: `CE003 (name cuMemcpy at 7000): the fix brings a new CE008 ...; by hand: ...`."""
        head = f"{self.code} ({self.what}): {self.why}" if self.code else self.why
        return f"{head}; by hand: {self.by_hand}" if self.by_hand else head


@dataclass
class Plan:
    """The fixes of a run: the new text of each file changed, the findings fixed, the fixes withdrawn."""

    texts: dict[str, str] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)
    applied: list[Any] = field(default_factory=list)
    withdrawn: list[Withdrawn] = field(default_factory=list)
    regions: dict[tuple[str, str, int, int], tuple[Fix, list[tuple[int, int, int, int, str]]]] = field(
        default_factory=dict)   # (path, code, line, col) -> the fix and its edits as (line, col, end line, end col, new)

    remaining: dict[str, set[tuple[str, int, int]]] = field(default_factory=dict)   # a fixed file's findings after

    def remove_applied(self, report: Any) -> None:
        """Drop from `report` the findings this plan fixed, and those its fixes made go away."""
        fixed = {(f.path, f.code, f.line, f.col) for f in self.applied}
        report.findings = [f for f in report.findings if (f.path, f.code, f.line, f.col) not in fixed and (
            f.path not in self.remaining or (f.code, f.line, f.col) in self.remaining[f.path])]


def _apply(text: str, fixes: Sequence[Fix]) -> str | None:
    """The text with every fix's edits; None when two edits overlap."""
    edits = sorted({e for f in fixes for e in f.edits}, key=lambda e: e.start)
    for x, y in itertools.pairwise(edits):
        if y.start < x.end:
            return None
    out = text
    for e in reversed(edits):
        out = out[:e.start] + e.new + out[e.end:]
    return out


@dataclass(frozen=True)
class _Failed:
    """Why fixed text failed verification, and the finding of the fixed text that says what is left to do."""

    why: str
    left: Any = None        # a finding of the fixed code still there, or a new one the fix brings


def _verify(text: str, path: str, fixes: Sequence[Fix], before: list[Any], unit: Unit, lint: Any,
            after: list[Any] | None = None) -> _Failed | None:
    """Why the fixed text fails verification (None when it passes); `after` receives the fixed text's findings."""
    new = _apply(text, fixes)
    if new is None:
        return _Failed("two fixes overlap")
    got = lint(new, path)
    if isinstance(got, Problem):
        return _Failed(f"the fixed file could not be linted again ({got.message})")
    found, u2 = got
    if after is not None:
        after[:] = found
    if u2.engine != unit.engine:
        return _Failed(f"the fixed file is no longer judged by {unit.engine} (it may not parse)")
    fixed = {(f.code, f.line) for f in fixes}
    left = [f for f in found if (f.code, f.line) in fixed]
    if left:
        return _Failed(f"{left[0].code} is still found on line {left[0].line} after the fix", left[0])
    old = {(f.code, f.line) for f in before}
    new_ones = [f for f in found if (f.code, f.line) not in old]
    if new_ones:
        return _Failed(f"the fix brings a new {new_ones[0].code} on line {new_ones[0].line}", new_ones[0])
    return None


def _by_hand(finding: Any, failed: _Failed) -> str:
    """What to change by hand for a fix that did not verify: the finding's own advice, then what the fixed text
    still says (the finding left, or the one the fix would bring)."""
    own = str(finding.hint)
    left = failed.left
    if left is None or not left.hint:
        return own
    if left.code == finding.code:
        return str(left.hint)       # the same finding after the fix: its advice now is what is left to do
    return f"{own}, and then {left.hint} ({left.code})" if own else f"{left.hint} ({left.code})"


def _withdrawn(path: str, f: Any, fx: Fix, failed: _Failed) -> Withdrawn:
    return Withdrawn(path, f.line, f.code, fx.what, failed.why, _by_hand(f, failed))


def _file(path: str, text: str, settings: Any, lint: Isolated, unsafe: bool, p: Plan, wanted: list[Any]) -> None:
    cat = catalog()
    got = lint(text, path)
    if isinstance(got, Problem):
        p.withdrawn.append(Withdrawn(path, wanted[0].line, why=f"not verified: the file could not be linted again "
                                                                 f"({got.message})"))
        return
    before, unit = got
    targets = toolkit_versions(cat, settings.toolkit)
    fixes: list[tuple[Any, Fix]] = []
    for f in before:
        fx = candidate(At(unit, text, f.code, f.line, f.col, cat, *targets))
        if fx is not None and (fx.kind == "safe" or unsafe) and any(
                (w.code, w.line, w.col) == (f.code, f.line, f.col) for w in wanted):
            fixes.append((f, fx))
    if not fixes:
        return
    after: list[Any] = []
    if _verify(text, path, [fx for _, fx in fixes], before, unit, lint, after) is not None:
        fixes = _one_by_one(path, text, fixes, before, unit, lint, p, after)
    if fixes:
        new = _apply(text, [fx for _, fx in fixes])
        assert new is not None
        p.texts[path], p.originals[path] = new, text
        p.applied.extend(f for f, _ in fixes)
        p.remaining[path] = {(f.code, f.line, f.col) for f in after}
        for f, fx in fixes:
            p.regions[(path, f.code, f.line, f.col)] = (fx, [(*position(text, e.start), *position(text, e.end), e.new)
                                                             for e in fx.edits])


def _one_by_one(path: str, text: str, fixes: list[tuple[Any, Fix]], before: list[Any], unit: Unit, lint: Any,
                p: Plan, after: list[Any]) -> list[tuple[Any, Fix]]:
    """The fixes that verify each on its own and then together (the others withdrawn, with why)."""
    good = []
    for f, fx in fixes:
        one = _verify(text, path, [fx], before, unit, lint)
        if one is not None:
            p.withdrawn.append(_withdrawn(path, f, fx, one))
        else:
            good.append((f, fx))
    if good and _verify(text, path, [fx for _, fx in good], before, unit, lint, after) is not None:
        p.withdrawn.extend(_withdrawn(path, f, fx, _Failed("the fixes together do not verify")) for f, fx in good)
        return []
    return good


def plan(report: Any, settings: Any, *, select: Any = None, ignore: Any = None, unsafe: bool = False,
         verify: bool = True, lint: Isolated | None = None) -> Plan:
    """The fixes for the report's findings, each verified by linting the fixed text again with `lint` (by default
    in a supervised worker, as the files were linted); `verify` False: none."""
    p = Plan()
    allowed = ("safe", "unsafe") if unsafe else ("safe",)
    by_path: dict[str, list[Any]] = {}
    for f in report.findings:
        if f.fix in allowed:
            by_path.setdefault(f.path, []).append(f)
    if not verify or not by_path:
        return p
    linter = lint or Isolated(settings, select, ignore)
    try:
        for path, wanted in by_path.items():
            text = _plain(path)
            if text is None:
                p.withdrawn.append(Withdrawn(path, wanted[0].line, why="not rewritten: the file is not plain UTF-8 "
                                                                       "(a byte-order mark or bytes that are not UTF-8)"))
                continue
            _file(path, text, settings, linter, unsafe, p, wanted)
    finally:
        if lint is None:
            linter.close()
    return p


def verified(report: Any, settings: Any, *, select: Any = None, ignore: Any = None, unsafe: bool = False) -> Plan:
    """Verify every fix the report's findings are offered and mark each finding's `fix` with what verified: "safe"
    (`--fix` applies it), "unsafe" (`--fix --unsafe-fixes` does), or "none". Returns the plan `--fix` applies
    (with `unsafe`, the unsafe fixes too); its `regions` hold every verified fix, unsafe ones included."""
    lint = Isolated(settings, select, ignore)
    try:
        safe = plan(report, settings, select=select, ignore=ignore, lint=lint)
        full = safe
        unsafe_files = {f.path for f in report.findings if f.fix == "unsafe"}
        if unsafe_files:     # only the files with an unsafe fix are planned again, with it
            some = _Findings([f for f in report.findings if f.path in unsafe_files])
            full = _merged(safe, plan(some, settings, select=select, ignore=ignore, unsafe=True, lint=lint),
                           unsafe_files)
    finally:
        lint.close()
    ok = {_key(f) for f in safe.applied}
    ok_unsafe = {_key(f) for f in full.applied}
    report.findings = [replace(f, fix="safe" if f.fix == "safe" and _key(f) in ok else
                               "unsafe" if f.fix == "unsafe" and _key(f) in ok_unsafe else "none")
                       for f in report.findings]
    chosen = full if unsafe else safe
    chosen.regions = {**full.regions, **chosen.regions}
    return chosen


@dataclass
class _Findings:
    findings: list[Any]


def _merged(base: Plan, other: Plan, paths: set[str]) -> Plan:
    """`base`'s plan for every file but `paths`, `other`'s for those."""
    def mine(path: str) -> bool:
        return path not in paths

    out = Plan(texts={p: t for p, t in base.texts.items() if mine(p)} | other.texts,
               originals={p: t for p, t in base.originals.items() if mine(p)} | other.originals,
               applied=[f for f in base.applied if mine(f.path)] + other.applied,
               withdrawn=[w for w in base.withdrawn if mine(w.path)] + other.withdrawn,
               regions={k: v for k, v in base.regions.items() if mine(k[0])} | other.regions,
               remaining={p: r for p, r in base.remaining.items() if mine(p)} | other.remaining)
    return out


def _key(f: Any) -> tuple[str, str, int, int]:
    return f.path, f.code, f.line, f.col


def _plain(path: str) -> str | None:
    """The file's text when its bytes are plain UTF-8 (no BOM, nothing replaced): only those are rewritten."""
    try:
        text = read_source(path, MAX_FILE_BYTES)
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except (OSError, ValueError):
        return None
    return text if raw == text.encode("utf-8") else None


def diff(old: str, new: str, name: str) -> str:
    """A unified diff of one file's fixes."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))


CHANGED = "not rewritten: the file changed since it was linted (run cuentry lint --fix again)"
"""Why a fix is withdrawn when its file changed between the lint and the write."""


def _inside(path: str, root: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.commonpath([path, real_root]) == real_root


def _open_same(path: str, flags: int, original: bytes | None) -> tuple[int, os.stat_result] | str:
    """An open descriptor of the regular file `path` (never through a link) whose bytes are still `original`,
    and its status; or why not."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        return f"not rewritten: it cannot be opened again ({exc.strerror or exc})"
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return "not rewritten: it is no longer a regular file"
    if original is not None and (st.st_size != len(original) or _head(fd, len(original) + 1) != original):
        os.close(fd)
        return CHANGED
    return fd, st


def _head(fd: int, n: int) -> bytes:
    """The first `n` bytes of an open file (fewer at its end)."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, left = [], n
    while left > 0:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def _in_place(path: str, data: bytes, original: bytes | None) -> str:
    """Rewrite the file through its own inode (owner, group, mode, links and attributes all kept)."""
    got = _open_same(path, os.O_RDWR, original)
    if isinstance(got, str):
        return got
    fd, _ = got
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)
    return ""


def _replace(path: str, data: bytes, original: bytes | None, st: os.stat_result) -> str | None:
    """Replace the file by a new one renamed over it, with its mode, owner and group; None when that cannot
    keep them (the owner cannot be given, the directory is not writable): then it is rewritten in place."""
    d = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".cuentry-fix-")
    except PermissionError:
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), st.st_mode & 0o7777)
            mine = os.fstat(fh.fileno())
            if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.fchown(fh.fileno(), st.st_uid, st.st_gid)
                except PermissionError:
                    os.unlink(tmp)
                    return None
                os.fchmod(fh.fileno(), st.st_mode & 0o7777)   # a chown drops the set-id bits
            os.fsync(fh.fileno())
        again = _open_same(path, os.O_RDONLY, original)   # the compare of the compare-and-swap, just before it
        if isinstance(again, str):
            os.unlink(tmp)
            return again
        os.close(again[0])
        if (again[1].st_ino, again[1].st_dev) != (st.st_ino, st.st_dev):
            os.unlink(tmp)
            return CHANGED
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return ""


def write(path: str, text: str, *, original: str | None = None, root: str | None = None) -> str:
    """Replace `path`'s text with `text`, if it still holds `original` (the text linted); "" when it was
    written, else why it was not (its fix withdrawn).

    Args:
        path: the file, as it was linted.
        text: its fixed text.
        original: the text the fixes were planned on (None: no compare).
        root: the project's root: a path that is a symbolic link (or lies under one) is written in its
            target only when the target is inside `root`.

    Raises:
        OSError: the file or its directory cannot be written (permissions, a read-only file system).
    """
    full = os.path.abspath(path)
    real = os.path.realpath(full)
    if real != full and (root is None or not _inside(real, root)):
        return (f"not rewritten: it is a symbolic link to {real}, outside the project's root ({root})" if root
                else f"not rewritten: it is a symbolic link to {real}")
    data = text.encode("utf-8")
    old = original.encode("utf-8") if original is not None else None
    got = _open_same(real, os.O_RDONLY, old)
    if isinstance(got, str):
        return got
    fd, st = got
    os.close(fd)
    if st.st_nlink > 1:
        return _in_place(real, data, old)   # every name of the file sees the fix: no name is split off
    done = _replace(real, data, old, st)
    return _in_place(real, data, old) if done is None else done
