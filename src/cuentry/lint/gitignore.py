"""Which files git would ignore, read from the ignore files themselves: no git is run.

`cuentry lint` skips what `.gitignore` names. Asking `git check-ignore` would run git inside the linted
tree, and git runs programs that a tree's own `.git/config` names (`core.fsmonitor`, among others): linting
a pull request's checkout would run the pull request's code. So the ignore files are read here, with git's
semantics (gitignore(5)):

- the sources, lowest precedence first: the user's global file (`$XDG_CONFIG_HOME/git/ignore`, else
  `~/.config/git/ignore`: git's default `core.excludesFile`), the repository's `info/exclude` (of its common
  directory, for a linked work tree), then `.gitignore` of each directory from the work tree's top down to
  the file's own; the last pattern that matches decides;
- blank lines and `#` comments skipped, trailing spaces dropped unless escaped, a final `\\r` dropped, `!`
  negates, `\\` escapes; a trailing `/` matches directories only; a pattern with a `/` before its end is
  anchored at its file's directory, one without matches a name at any depth; `*`, `?`, `[...]` (with `!` or
  `^`, ranges and `[:classes:]`) never match a `/`; `**/`, `/**/` and `/**` match across directories;
- a file whose directory is ignored is ignored, whatever a later `!` says (git cannot re-include it).

What this reader does not do: read git's configuration (a `core.excludesFile` set there, `core.ignoreCase`:
matching is case-sensitive) or its index (a tracked file that a pattern names is ignored too, as ruff and
ripgrep do; name it on the command line, or pass `--no-respect-gitignore`). Every file is read only when it
is a regular file of at most `MAX_BYTES` (a `.gitignore` that is a symbolic link is not followed, as git
does not follow one); one that cannot be read adds no pattern.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["MAX_BYTES", "GitIgnore", "Pattern", "parse", "toplevel"]


MAX_BYTES = 1 << 20
"""An ignore file larger than this (1 MiB) adds no pattern."""


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file: its regular expression over a path relative to `base` (a directory,
    relative to the work tree's top, "" for the top), whether it negates, matches directories only, or
    matches the last component of a path only (no `/` but a trailing one)."""

    text: str
    regex: re.Pattern[str]
    base: str
    negate: bool
    dir_only: bool
    basename: bool

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether the pattern matches `rel` (relative to the work tree's top)."""
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not rel.startswith(self.base + "/"):
                return False
            rel = rel[len(self.base) + 1:]
        if self.basename:
            rel = rel.rpartition("/")[2]
        return self.regex.fullmatch(rel) is not None


_CLASSES = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
            "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v",
            "upper": "A-Z", "xdigit": "0-9a-fA-F"}


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """The character class that starts at `pat[i]` ("[") as a regex, and the index after it; None when it is
    not closed (git's wildmatch then matches nothing)."""
    j = i + 1
    negate = j < len(pat) and pat[j] in "!^"
    if negate:
        j += 1
    parts: list[str] = []
    first = True
    while j < len(pat):
        c = pat[j]
        if c == "]" and not first:
            body = "".join(parts) or "(?!)"
            return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j + 1
        first = False
        if c == "[" and pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            if end < 0:
                return None
            name = pat[j + 2:end]
            if name not in _CLASSES:
                return None
            parts.append(_CLASSES[name])
            j = end + 2
            continue
        if c == "\\" and j + 1 < len(pat):
            j += 1
            c = pat[j]
        lo = c
        j += 1
        if j + 1 < len(pat) and pat[j] == "-" and pat[j + 1] != "]":
            hi = pat[j + 1]
            if hi == "\\" and j + 2 < len(pat):
                hi = pat[j + 2]
                j += 1
            j += 2
            if ord(hi) >= ord(lo):
                parts.append(f"{re.escape(lo)}-{re.escape(hi)}")
            continue
        parts.append(re.escape(lo))
    return None


def _regex(pat: str) -> str:
    """A wildmatch pattern (with WM_PATHNAME: wildcards stop at `/`) as a regular expression."""
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            at_start = i == 0 or pat[i - 1] == "/"
            if j - i >= 2 and at_start and (j == n or pat[j] == "/"):
                if j == n:
                    out.append(".*")               # "**" at the end: everything (below)
                else:
                    out.append("(?:.*/)?")         # "**/": zero or more directories
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            got = _bracket(pat, i)
            if got is None:
                return "(?!)"
            out.append(got[0])
            i = got[1]
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
        elif c == "\\":
            return "(?!)"                          # a trailing backslash: git matches nothing
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _trim(line: str) -> str:
    """A line without its trailing spaces, unless the last one is escaped."""
    end = len(line)
    while end and line[end - 1] == " ":
        k, slashes = end - 2, 0
        while k >= 0 and line[k] == "\\":
            slashes += 1
            k -= 1
        if slashes % 2:
            break
        end -= 1
    return line[:end]


def parse(text: str, base: str = "") -> list[Pattern]:
    """The patterns of one ignore file's text; `base` is its directory relative to the work tree's top ("" for
    the top, and for `info/exclude` and the global file)."""
    out: list[Pattern] = []
    for raw in text.removeprefix("\ufeff").split("\n"):
        line = _trim(raw[:-1] if raw.endswith("\r") else raw)
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        body = line[:-1] if dir_only else line
        if not body:
            continue
        anchored = "/" in body
        body = body.removeprefix("/") if anchored else body
        if not body:
            continue
        try:
            regex = re.compile(_regex(body), re.S)
        except re.error:
            continue
        out.append(Pattern(raw, regex, base, negate, dir_only, not anchored))
    return out


def _read(path: str, *, follow: bool) -> str:
    """A regular file's text (at most MAX_BYTES, UTF-8 with bad bytes replaced); "" for anything else."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return ""
        data = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return ""
    finally:
        os.close(fd)
    return "" if len(data) > MAX_BYTES else data.decode("utf-8", "replace")


def toplevel(d: str) -> str:
    """The work tree holding directory `d`: the nearest directory at or above it with a `.git` ("" when none)."""
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return ""
        d = up


_GITDIR = re.compile(r"gitdir:[ \t]*(.+?)[ \t]*\r?\n?\Z")


def _git_dir(top: str) -> str:
    """The repository directory of work tree `top`: `.git` itself, or where a `.git` file (`gitdir: ...`)
    points, and for a linked work tree its common directory (`commondir`)."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        gd = dot
    else:
        m = _GITDIR.match(_read(dot, follow=False))
        if m is None:
            return ""
        gd = os.path.normpath(os.path.join(top, m.group(1)))
    common = _read(os.path.join(gd, "commondir"), follow=True).strip()
    return os.path.normpath(os.path.join(gd, common)) if common else gd


def _global_file() -> str:
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "git", "ignore")
    home = os.path.expanduser("~")
    return os.path.join(home, ".config", "git", "ignore") if os.path.isabs(home) else ""


class GitIgnore:
    """The ignore files of the work trees asked about, each read once."""

    def __init__(self, *, global_file: str | None = None) -> None:
        self._global = _global_file() if global_file is None else global_file
        self._tops: dict[str, str] = {}
        self._root_patterns: dict[str, list[Pattern]] = {}
        self._dir_patterns: dict[tuple[str, str], list[Pattern]] = {}
        self._verdicts: dict[tuple[str, str], bool] = {}

    def _top(self, d: str) -> str:
        if d not in self._tops:
            self._tops[d] = toplevel(d)
        return self._tops[d]

    def _base(self, top: str) -> list[Pattern]:
        """The global file's and `info/exclude`'s patterns (below every `.gitignore`)."""
        if top not in self._root_patterns:
            pats = parse(_read(self._global, follow=True)) if self._global else []
            gd = _git_dir(top)
            if gd:
                pats += parse(_read(os.path.join(gd, "info", "exclude"), follow=True))
            self._root_patterns[top] = pats
        return self._root_patterns[top]

    def _in_dir(self, top: str, rel_dir: str) -> list[Pattern]:
        """The patterns of the `.gitignore` in `rel_dir` (relative to `top`)."""
        key = (top, rel_dir)
        if key not in self._dir_patterns:
            path = os.path.join(top, rel_dir, ".gitignore") if rel_dir else os.path.join(top, ".gitignore")
            self._dir_patterns[key] = parse(_read(path, follow=False), rel_dir)
        return self._dir_patterns[key]

    def _decide(self, top: str, rel: str, is_dir: bool) -> bool:
        """Whether `rel` itself (not its directories) is matched last by an ignoring pattern."""
        parts = rel.split("/")
        layers: list[Sequence[Pattern]] = [self._base(top)]
        layers += [self._in_dir(top, "/".join(parts[:i])) for i in range(len(parts))]
        for pats in reversed(layers):
            for p in reversed(pats):
                if p.matches(rel, is_dir):
                    return not p.negate
        return False

    def ignored(self, path: str) -> bool:
        """Whether git would ignore `path` (a file, or a directory when it is one): it, or a directory above
        it inside its work tree, is ignored. False outside a work tree."""
        full = os.path.abspath(path)
        top = self._top(os.path.dirname(full))
        if not top:
            return False
        rel = os.path.relpath(full, top).replace(os.sep, "/")
        if rel == "." or rel.startswith("../"):
            return False
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            last = i == len(parts)
            key = (top, sub)
            if key not in self._verdicts:
                is_dir = not last or (os.path.isdir(full) and not os.path.islink(full))
                self._verdicts[key] = self._decide(top, sub, is_dir)
            if self._verdicts[key]:
                return True
        return False

    def select(self, paths: Iterable[str]) -> set[str]:
        """Of `paths`, those git would ignore."""
        return {p for p in paths if self.ignored(p)}
