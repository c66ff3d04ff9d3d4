"""The lint configuration: `[tool.cuentry.lint]` in pyproject.toml, or `[lint]` in cuentry.toml.

Found by walking up from a directory (the first path linted, or the
current one): in each directory a pyproject.toml with a `[tool.cuentry.lint]`
table wins, then a cuentry.toml with a `[lint]` table (a manifest of that name
without one is not a configuration). Paths in it are relative to its
directory. The command line wins over every key. A malformed key is a
[LintConfigError][cuentry.errors.LintConfigError] naming the file, the line
and the key.

Also here: which files a run skips (`exclude` globs and `.gitignore`, asked of
`git check-ignore`), and `per-file-ignores`.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LintConfigError

__all__ = ["KEYS", "MAX_BYTES", "Config", "excluded", "find", "gitignored", "ignored_here", "load"]


KEYS = {
    "select": list, "ignore": list, "extend-select": list, "per-file-ignores": dict, "exclude": list,
    "extend-exclude": list, "floor": int, "manifest": str, "toolkit": str, "include": list, "defines": list,
    "compile-commands": str, "fix": bool, "unsafe-fixes": bool, "respect-gitignore": bool,
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


def _table(path: str) -> tuple[dict[str, Any] | None, str]:
    """The lint table of a candidate file (None when it has none) and the file's text."""
    try:
        text = _read(path).decode("utf-8")
        doc = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LintConfigError(path, 0, "", f"cannot be read ({exc})",
                              hint="make it a readable UTF-8 TOML file") from None
    except tomllib.TOMLDecodeError as exc:
        line = int(m.group(1)) if (m := re.search(r"line (\d+)", str(exc))) else 0
        raise LintConfigError(path, line, "", f"not valid TOML ({exc})", hint="fix the TOML syntax") from None
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
        elif not isinstance(value, want) or (want is int and isinstance(value, bool)):
            kind = {str: "a string", int: "an integer", bool: "true or false"}[want]
            raise LintConfigError(path, _line(text, key), key, f"must be {kind}, not {value!r}")
        else:
            setattr(cfg, key.replace("-", "_"),
                    os.path.join(cfg.root, str(value)) if key in _PATH_KEYS else value)
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
    """Of `paths`, those git ignores (asked of `git check-ignore` where they lie; none outside a repository
    or without git)."""
    by_dir: dict[str, list[str]] = {}
    for p in paths:
        by_dir.setdefault(os.path.dirname(os.path.abspath(p)) or ".", []).append(p)
    out: set[str] = set()
    tops: dict[str, list[str]] = {}
    for d, ps in by_dir.items():
        top = _toplevel(d)
        if top:
            tops.setdefault(top, []).extend(ps)
    for top, ps in tops.items():
        data = b"".join(os.fsencode(os.path.abspath(p)) + b"\0" for p in ps)
        try:
            got = subprocess.run(["git", "-C", top, "check-ignore", "-z", "--stdin"], input=data,
                                 capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if got.returncode in (0, 1):
            names = {os.fsdecode(b) for b in got.stdout.split(b"\0") if b}
            out.update(p for p in ps if os.path.abspath(p) in names)
    return out


def _toplevel(d: str) -> str:
    """The work tree holding directory `d` ("" when none)."""
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return ""
        d = up
