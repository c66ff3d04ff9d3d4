"""The lint configuration: `[tool.cuentry.lint]` in pyproject.toml, or `[lint]` in cuentry.toml.

Found by walking up from a directory (the first path linted, or the
current one): in each directory a pyproject.toml with a `[tool.cuentry.lint]`
table wins, then a cuentry.toml with a `[lint]` table (a manifest of that name
without one is not a configuration). Paths in it are relative to its
directory. The command line wins over every key. A malformed key is a
[LintConfigError][cuentry.errors.LintConfigError] naming the file, the line
and the key.

Also here: which files a run skips (`exclude` globs and `.gitignore`, read by
[gitignore][cuentry.lint.gitignore]: no git is run), and `per-file-ignores`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LintConfigError

__all__ = ["KEYS", "MAX_BYTES", "MAX_TIMEOUT", "Config", "excluded", "find", "floor_problem", "gitignored", "ignored_here",
           "load", "releases", "timeout_problem"]


KEYS = {
    "select": list, "ignore": list, "extend-select": list, "per-file-ignores": dict, "exclude": list,
    "extend-exclude": list, "floor": int, "manifest": str, "toolkit": str, "include": list, "defines": list,
    "compile-commands": str, "fix": bool, "unsafe-fixes": bool, "respect-gitignore": bool, "timeout": float,
}
"""Every key of the configuration and the TOML type it takes."""

_PATH_KEYS = ("manifest", "compile-commands")


@dataclass
class Config:
    """A lint configuration; `path` is "" when none was found (every key at its default)."""

    path: str = ""
    root: str = "."
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    floor: int = 0
    manifest: str | None = None
    toolkit: str | None = None
    include: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    compile_commands: str | None = None
    fix: bool = False
    unsafe_fixes: bool = False
    respect_gitignore: bool = True
    timeout: float | None = None


def _table(path: str) -> tuple[dict[str, Any] | None, str]:
    """The lint table of a candidate file (None when it has none) and the file's text."""
    try:
        text = _read(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LintConfigError(path, 0, "", f"cannot be read ({exc})",
                              hint="make it a readable UTF-8 TOML file") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = int(m.group(1)) if (m := re.search(r"line (\d+)", str(exc))) else 0
        raise LintConfigError(path, line, "", f"not valid TOML ({exc})", hint="fix the TOML syntax") from None
    except RecursionError:   # arrays or tables nested thousands deep: the parser's recursion runs out
        raise LintConfigError(path, 0, "", "not read: its TOML nests deeper than Python's parser follows",
                              hint="nest arrays and tables a few levels deep, as a configuration does") from None
    got = doc.get("tool", {}).get("cuentry", {}).get("lint") if path.endswith("pyproject.toml") else doc.get("lint")
    if got is not None and not isinstance(got, dict):
        raise LintConfigError(path, _line(text, "lint"), "lint", "must be a table")
    return got, text


MAX_BYTES = 1 << 20
"""A configuration file larger than this (1 MiB) is refused."""


def _read(path: str) -> bytes:
    """A regular file's bytes (never blocking on a FIFO or reading a device); ValueError when it is not one
    or is larger than MAX_BYTES."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES >> 20} MiB")
    return data


def find(start: str) -> str | None:
    """The configuration file nearest `start` (a file or directory) or above it; None when there is none."""
    d = os.path.abspath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    while True:
        for name in ("pyproject.toml", "cuentry.toml"):
            cand = os.path.join(d, name)
            if os.path.isfile(cand) and _table(cand)[0] is not None:
                return cand
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


_HEADER = re.compile(r"^[ \t]*\[[ \t]*(?:tool\.cuentry\.lint|lint)[ \t]*\]", re.M)


def _line(text: str, key: str) -> int:
    """The line where `key` is set (its first `key =` or `[... key]` from the lint table on), 0 when it cannot
    be told."""
    start = m.start() if (m := _HEADER.search(text)) else 0
    k = re.escape(key)
    pat = re.compile(rf'^[ \t]*(?:"{k}"|\'{k}\'|{k})[ \t]*=|^[ \t]*\[[^\]\n]*\b{k}\]', re.M)
    m = pat.search(text, start)
    return text.count("\n", 0, m.start()) + 1 if m else 0


def _strings(value: Any, path: str, text: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LintConfigError(path, _line(text, key), key, f"must be a list of strings, not {value!r}")
    return list(value)


def load(path: str | None) -> Config:
    """The configuration in `path` (a pyproject.toml or cuentry.toml); defaults for None."""
    if path is None:
        return Config()
    table, text = _table(path)
    table = table or {}
    cfg = Config(path=path, root=os.path.dirname(os.path.abspath(path)))
    for key, value in table.items():
        want = KEYS.get(key)
        if want is None:
            raise LintConfigError(path, _line(text, key), key, "unknown key",
                                  hint=f"the keys are: {', '.join(KEYS)}")
        if want is list:
            setattr(cfg, key.replace("-", "_"), _strings(value, path, text, key))
        elif want is dict:
            if not isinstance(value, dict):
                raise LintConfigError(path, _line(text, key), key, "must be a table of glob = [codes]")
            cfg.per_file_ignores = {g: _strings(v, path, text, g) for g, v in value.items()}
        elif not _typed(value, want):
            kind = {str: "a string", int: "an integer", bool: "true or false", float: "a number of seconds"}[want]
            raise LintConfigError(path, _line(text, key), key, f"must be {kind}, not {value!r}")
        else:
            setattr(cfg, key.replace("-", "_"),
                    os.path.join(cfg.root, str(value)) if key in _PATH_KEYS else value)
    _check_values(cfg, path, text)
    cfg.include = [os.path.join(cfg.root, d) for d in cfg.include]
    _check_codes(cfg, path, text)
    return cfg


def _check_codes(cfg: Config, path: str, text: str) -> None:
    """Every rule code the configuration names is a code or a prefix of one; else the error names the file, the
    line and the key (`pyproject.toml:5: select: unknown rule 'CE999'`)."""
    from .rules import RULE_CODES

    named = [("select", cfg.select or []), ("ignore", cfg.ignore), ("extend-select", cfg.extend_select),
             *cfg.per_file_ignores.items()]
    for key, codes in named:
        for item in codes:
            for c in (x.strip().upper() for x in item.split(",")):
                if c and not any(r.startswith(c) for r in RULE_CODES):
                    raise LintConfigError(path, _line(text, key), key, f"unknown rule {c!r}",
                                          hint=f"rules: {', '.join(RULE_CODES)} (a prefix like CE00 works)")


def _typed(value: Any, want: type) -> bool:
    """Whether a TOML value has the type a key takes (a bool is no number; an integer is a number of seconds)."""
    if isinstance(value, bool):
        return want is bool
    if want is float:
        return isinstance(value, (int, float))
    return isinstance(value, want)


def _check_values(cfg: Config, path: str, text: str) -> None:
    """Refuse a floor that is no CUDA release, and a timeout out of range (exit 2, at their line)."""
    if cfg.floor and (got := floor_problem(cfg.floor)) is not None:
        raise LintConfigError(path, _line(text, "floor"), "floor", got[0], hint=got[1])
    if cfg.timeout is not None and (why := timeout_problem(cfg.timeout)):
        raise LintConfigError(path, _line(text, "timeout"), "timeout", why,
                              hint=f"give seconds of CPU time a file may take, above 0 and at most {MAX_TIMEOUT:g}")


def releases() -> tuple[int, ...]:
    """Every CUDA release a driver floor may name: those with a driver API up to 13.0 (`names.CUDA_RELEASES`),
    every ABI version of the catalog, and every toolkit of its history."""
    from ..catalog import catalog
    from ..names import CUDA_RELEASES

    cat = catalog()
    history = {int(t.split(".")[0]) * 1000 + int(t.split(".")[1]) * 10 for t in cat.history}
    return tuple(sorted({*CUDA_RELEASES, *history, *(a.version for a in cat)}))


def floor_problem(floor: int) -> tuple[str, str] | None:
    """Why `floor` cannot be a driver floor, and the fix naming the nearest release (None when it is one).

    A floor is a CUDA release (12000 for 12.0): a number between releases, or above the newest one the
    catalog knows, would turn every finding into a note (`--floor 120000`, a typo of 12000)."""
    from ..names import format_version

    known = releases()
    if floor in known:
        return None

    def shown(v: int) -> str:
        return f"{v} ({format_version(v)})"

    if floor < 0:
        return f"{floor} is negative, no CUDA release", f"give a release such as {shown(12000)}, or 0 for none"
    if floor > known[-1]:
        typo = next((floor // d for d in (10, 100, 1000) if floor // d in known and floor % d == 0), None)
        fix = f"did you mean {shown(typo)}? " if typo else ""
        return (f"{floor} is above the newest CUDA release cuentry knows ({shown(known[-1])})",
                f"{fix}the newest is {shown(known[-1])}")
    below = max(v for v in known if v < floor) if floor > known[0] else None
    above = min(v for v in known if v > floor)
    near = [v for v in (below, above) if v is not None]
    best = min(near, key=lambda v: (abs(v - floor), v))
    return (f"{floor} is no CUDA release cuentry knows",
            f"the nearest is {shown(best)}" + (f" (releases around it: {', '.join(map(shown, near))})"
                                              if len(near) > 1 else ""))


MAX_TIMEOUT = 86400.0
"""The largest per-file limit (`--timeout`, `timeout =`): a day of CPU time."""


def timeout_problem(seconds: float) -> str:
    """Why `seconds` cannot be the per-file limit of CPU time ("" when it can)."""
    import math

    if not math.isfinite(seconds) or seconds <= 0:
        return f"{seconds!r} is not a positive number of seconds"
    if seconds > MAX_TIMEOUT:
        return f"{seconds:g} s is above the largest limit, {MAX_TIMEOUT:g} s"
    return ""


def _relative(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root)
    return rel.replace(os.sep, "/")


def _matches(path: str, root: str, patterns: Sequence[str]) -> str | None:
    """The first glob that matches `path` (relative to `root`), its name, or one of its parent directories."""
    rel = _relative(path, root)
    parts = rel.split("/")
    for pat in patterns:
        p = pat.rstrip("/").removeprefix("./")
        if fnmatch.fnmatchcase(rel, p) or any(fnmatch.fnmatchcase(part, p) for part in parts) or \
                any(fnmatch.fnmatchcase("/".join(parts[:i]), p) for i in range(1, len(parts))):
            return pat
    return None


def excluded(path: str, root: str, patterns: Sequence[str]) -> bool:
    """Whether an `exclude` glob names `path`, its file name or a directory above it."""
    return _matches(path, root, patterns) is not None


def ignored_here(path: str, root: str, per_file: dict[str, list[str]]) -> set[str]:
    """The codes `per-file-ignores` turns off for `path` (codes or prefixes, as written)."""
    out: set[str] = set()
    for glob, codes in per_file.items():
        if _matches(path, root, [glob]) is not None:
            out.update(c.strip().upper() for c in codes)
    return out


def gitignored(paths: Sequence[str]) -> set[str]:
    """Of `paths`, those git ignores: read from the ignore files (see [gitignore][cuentry.lint.gitignore]),
    never by running git (which runs what the tree's own configuration names). None outside a work tree."""
    from .gitignore import GitIgnore

    return GitIgnore().select(paths)
