"""Every configuration: requests in regions the preprocessor skipped are judged by parsing again.

A file parsed with its flags leaves out the `#if` branches those flags do not enter: a whole
loader under `#if defined(USE_CUDA)`, the other branch of `#if CUDA_VERSION >= 12000`, the
`#ifdef _WIN32` half. This module finds the request tokens of the file (`cuGetProcAddress`,
`cudaGetDriverEntryPoint(ByVersion)`, `dlsym`, `GetProcAddress`, a loader macro called with a
driver name) that clang skipped, reads the conditions of the branches around each, and works out
the macro settings that enter them: `-DX`/`-UX`/`-DX=N`, or for `CUDA_VERSION`/`CUDART_VERSION`
the toolkit of the catalog whose headers define a value that does. Compatible settings share one
configuration; at most `MAX_CONFIGS` are parsed per file, and none is started once
`MAX_SECONDS` have passed. Each configuration's requests inside the branches it was made to
enter (and a wrapper's faults for the calls made from them) join the file's facts, named by
the configuration ("when USE_CUDA is defined"); a fact already judged is not added again.

A condition this module cannot read (a function-like macro, arithmetic) leaves its requests
unjudged; the file's note says which and why.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...catalog import Catalog
from ..facts import Export, Query, Unit

__all__ = [
    "INF", "MAX_CONFIGS", "MAX_DEPTH", "MAX_FORCED", "MAX_REGIONS", "MAX_SECONDS", "TOOLKIT_MACROS",
    "WIN32_DIR", "WINDOWS_MACROS", "Config", "Extract", "Need", "Needs", "Region", "base_version", "condition",
    "every", "forced", "label", "plan", "regions", "request_lines", "require", "skipped",
]

MAX_CONFIGS = 4
"""Extra configurations parsed per file, at most."""
MAX_REGIONS = 256
"""Skipped branches with requests considered per file, at most (the others are said to be unjudged)."""
MAX_SECONDS = 20.0
"""No further configuration of a file is started after this many seconds of extra parsing."""

WIN32_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resource", "win32")
"""A minimal `windows.h` (LoadLibrary, GetProcAddress, FreeLibrary) for the `_WIN32` configuration."""

WINDOWS_MACROS = ("_WIN32", "_WIN64", "WIN32", "WIN64", "_WINDOWS", "WINDOWS", "_MSC_VER")
"""Macros whose branches are Windows code: their configuration gets the minimal `windows.h`."""
TOOLKIT_MACROS = ("CUDA_VERSION", "CUDART_VERSION")
"""Macros the CUDA headers define: set by choosing the toolkit whose headers are written (and `-D` of its value)."""

_DEFINED = re.compile(r"[ \t]*(\w*)")
_DEFINE_APIS = frozenset({"cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPoint",
                          "cudaGetDriverEntryPointByVersion"})
_REQUEST = re.compile(r"(?:cuGetProcAddress(?:_v2)?|cudaGetDriverEntryPoint(?:ByVersion)?|dlv?sym|GetProcAddress)\b")
_LOADER_ARG = re.compile(r"\([ \t]*&?[ \t]*cu[A-Z]")          # `(cuX` / `(&cuX`: a loader macro's argument
_LOADER_NAME = re.compile(r"\b_*[A-Z][A-Z0-9_]{2,}[ \t]*$")   # `LOAD_SYM`, `_CCCLRT_GET_DRIVER_FUNCTION`
_COMMENT = re.compile(r"(?=[/\"'])(?://[^\n]*|/\*.*?\*/|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')", re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)((?:[^\n\\]|\\\n|\\.)*)", re.M)
_COND_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)|(?P<op>&&|\|\||[<>=!]=|[()!<>]))")
INF = 1 << 62


# ---- conditions -------------------------------------------------------------------------------------------------


def condition(text: str) -> Any:
    """The parsed `#if` expression: nested tuples (`("and", a, b)`, `("or", a, b)`, `("not", a)`,
    `("defined", X)`, `("cmp", X, op, N)`, `("id", X)`, `("num", N)`), or None when it is not of that shape."""
    toks: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _COND_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return None
        kind = m.lastgroup or "op"
        toks.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    p = _Parser(toks)
    try:
        out = p.disjunction()
    except ValueError:
        return None
    return out if p.i == len(toks) else None


class _Parser:
    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks, self.i = toks, 0

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ValueError("end")
        self.i += 1
        return self.toks[self.i - 1]

    def disjunction(self) -> Any:
        left = self.conjunction()
        while self.peek() == "||":
            self.take()
            left = ("or", left, self.conjunction())
        return left

    def conjunction(self) -> Any:
        left = self.unary()
        while self.peek() == "&&":
            self.take()
            left = ("and", left, self.unary())
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return ("not", self.unary())
        return self.comparison()

    def comparison(self) -> Any:
        left = self.primary()
        if self.peek() in ("<", ">", "<=", ">=", "==", "!="):
            op = self.take()[1]
            right = self.primary()
            if left[0] == "id" and right[0] == "num":
                return ("cmp", left[1], op, right[1])
            if left[0] == "num" and right[0] == "id":
                flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
                return ("cmp", right[1], flip[op], left[1])
            raise ValueError("comparison")
        return left

    def primary(self) -> Any:
        kind, tok = self.take()
        if tok == "(":
            inner = self.disjunction()
            if self.take()[1] != ")":
                raise ValueError(")")
            return inner
        if tok == "defined":
            paren = self.peek() == "("
            if paren:
                self.take()
            k, name = self.take()
            if k != "id" or (paren and self.take()[1] != ")"):
                raise ValueError("defined")
            return ("defined", name)
        if kind == "num":
            return ("num", int(tok, 0))
        if kind == "id":
            if self.peek() == "(":
                raise ValueError("function-like macro")
            return ("id", tok)
        raise ValueError(tok)


@dataclass(frozen=True)
class Need:
    """What one macro must be: defined or not (None: either), the range its value must lie in, and
    values it must not have."""

    defined: bool | None = None
    lo: int = -INF
    hi: int = INF
    ne: frozenset[int] = frozenset()

    def meet(self, other: Need) -> Need | None:
        """Both needs at once, or None when they contradict."""
        lo, hi, ne = max(self.lo, other.lo), min(self.hi, other.hi), self.ne | other.ne
        if self.defined is not None and other.defined is not None and self.defined != other.defined:
            return None
        defined = self.defined if other.defined is None else other.defined
        zero_ok = lo <= 0 <= hi and 0 not in ne           # an undefined macro is 0 in `#if`
        if lo > hi or (defined is False and not zero_ok) or (hi - lo < len(ne) and _pick(lo, hi, ne) is None):
            return None
        if defined is None and not zero_ok:
            defined = True
        return Need(defined, lo, hi, ne)

    def value(self) -> int:
        """A value that meets the need (the bound named, else 1)."""
        start = self.lo if self.lo > -INF and self.lo != 0 else self.hi if self.hi < INF and self.lo == -INF else \
            max(self.lo, 1) if self.lo > -INF else 1
        got = _pick(start, self.hi, self.ne) if start >= self.lo else None
        return got if got is not None else (_pick(self.lo, self.hi, self.ne) or start)


def _pick(lo: int, hi: int, ne: frozenset[int]) -> int | None:
    """The first value from `lo` up to `hi` not in `ne` (or down from `hi` when `lo` is unbounded)."""
    step, v = (1, lo) if lo > -INF else (-1, hi)
    for _ in range(len(ne) + 1):
        if lo <= v <= hi and v not in ne:
            return v
        v += step
    return None


Needs = dict[str, Need]


def _meet(a: Needs, b: Needs) -> Needs | None:
    out = dict(a)
    for k, n in b.items():
        got = out[k].meet(n) if k in out else n
        if got is None:
            return None
        out[k] = got
    return out


def require(node: Any, truth: bool) -> Needs | None:
    """Macro needs that make `node` evaluate to `truth` (one way of doing it), or None when there is none."""
    if node is None:
        return None
    kind = node[0]
    if kind == "num":
        return {} if bool(node[1]) == truth else None
    if kind == "not":
        return require(node[1], not truth)
    if kind in ("and", "or"):
        both = (kind == "and") == truth
        a, b = require(node[1], truth), require(node[2], truth)
        if both:
            return _meet(a, b) if a is not None and b is not None else None
        return a if a is not None else b
    if kind == "defined":
        return {node[1]: Need(defined=truth)}
    if kind == "id":
        return {node[1]: Need(True, 1, INF) if truth else Need(None, 0, 0)}
    _, name, op, n = node
    if not truth:
        op = {"<": ">=", ">": "<=", "<=": ">", ">=": "<", "==": "!=", "!=": "=="}[op]
    if op == "!=":
        return {name: Need(ne=frozenset({n}))}
    lo, hi = {"<": (-INF, n - 1), "<=": (-INF, n), ">": (n + 1, INF), ">=": (n, INF), "==": (n, n)}[op]
    need = Need(None, lo, hi).meet(Need())
    return {name: need} if need is not None else None


# ---- the branches of the file -------------------------------------------------------------------------------------


@dataclass
class Region:
    """One branch of an `#if` chain whose body holds request tokens: its body's lines and how to enter it."""

    first: int                      # 1-based line of the directive that opens the branch
    last: int                       # 1-based line of the directive that closes it
    needs: Needs | None             # None: a condition that could not be read (or `#if 0`)
    why: str = ""                   # the conditions, as written, for messages
    tokens: list[tuple[int, int, str]] = field(default_factory=list)   # (line, col, token) in its body
    defines: list[tuple[str, str]] = field(default_factory=list)   # (macro, request API) a `#define` here calls


@dataclass
class _Open:
    """An `#if` chain being read: the needs to reach it, those that its earlier branches not be taken,
    its current condition, and the region of its current branch."""

    outer: Needs | None
    outer_why: str
    neg: Needs | None
    cond: Any
    text: str
    region: Region = field(default_factory=lambda: Region(0, 0, None))


MAX_DEPTH = 64
"""`#if` nesting deeper than this is not flipped (its requests are said to be unjudged)."""


def _blank(text: str) -> str:
    """Comments, and the insides of string and character literals, replaced by spaces (newlines kept, so every
    token keeps its line and column): a `dlsym` in a message is not a request."""
    def keep(m: re.Match[str]) -> str:
        s = m.group()
        if s[0] in "\"'":
            return s[0] + " " * (len(s) - 2) + s[-1]
        return "\n".join(" " * len(p) for p in s.split("\n"))
    return _COMMENT.sub(keep, text)


def request_lines(text: str) -> list[int]:
    """The lines of a file that call a request API or a lookup (`cuGetProcAddress(`, `dlsym(`...) outside comments,
    strings and `#define`s (a macro's body is a request where it is expanded): what the pre-filter saw."""
    blank = _blank(text)
    if not _REQUEST.search(blank):
        return []
    defined: set[int] = set()
    for m in _DIRECTIVE.finditer(blank):
        if m.group(1) == "define":
            first = blank.count("\n", 0, m.start()) + 1
            defined.update(range(first, first + m.group(0).count("\n") + 1))
    out = []
    for m in _REQUEST.finditer(blank):
        rest = blank[m.end():m.end() + 64].lstrip()
        line = blank.count("\n", 0, m.start()) + 1
        if rest.startswith("(") and line not in defined and (not m.start() or blank[m.start() - 1] not in "&.>:_"):
            out.append(line)
    return sorted(set(out))


def _both(a: Needs | None, b: Needs | None) -> Needs | None:
    return _meet(a, b) if a is not None and b is not None else None


def _directive_condition(word: str, rest: str) -> Any:
    rest = rest.strip()
    if word in ("ifdef", "elifdef"):
        return ("defined", rest.split()[0]) if rest else None
    if word in ("ifndef", "elifndef"):
        return ("not", ("defined", rest.split()[0])) if rest else None
    return condition(rest)


def regions(text: str, wrappers: Iterable[str] = ()) -> list[Region]:
    """The `#if` branches of the file whose own body (not a nested branch) holds request tokens: the
    request APIs, a loader macro called with a driver name, or a call of one of `wrappers`; also in the
    body of a `#define` there (a loader macro defined once per branch, expanded after the `#endif`)."""
    blank = _blank(text)
    found: list[tuple[int, int, Any]] = [(m.start(), m.end(), m) for m in _DIRECTIVE.finditer(blank)]
    found += [(pos, -1, tok) for pos, tok in _tokens(blank, wrappers)]
    found.sort(key=lambda f: f[0])
    stack: list[_Open] = []
    out: list[Region] = []
    line, at, directive_end = 1, 0, -1
    defined: str | None = None      # in a `#define`: the macro's name
    for pos, end, m in found:
        line += blank.count("\n", at, pos)
        at = pos
        if end >= 0:
            directive_end = end
            got = _DEFINED.match(m.group(2)) if m.group(1) == "define" else None
            defined = got.group(1) if got is not None else None
            _directive(stack, out, m.group(1), m.group(2).replace("\\\n", " "), line)
        elif stack and (pos >= directive_end or defined is not None):
            stack[-1].region.tokens.append((line, pos - blank.rfind("\n", 0, pos), m))
            if defined and pos < directive_end and m in _DEFINE_APIS:
                # a loader macro defined in this branch: its expansions elsewhere make requests only here
                stack[-1].region.defines.append((defined, m))
    last = line + blank.count("\n", at)
    for o in stack:
        _close(o.region, last, out)
    return sorted((r for r in out if r.tokens or _expanded(blank, r.defines)), key=lambda r: r.first)


def _expanded(blank: str, defines: list[tuple[str, str]]) -> bool:
    """Whether a loader macro a branch defines is invoked in the file (more `NAME(` than its `#define`s)."""
    return any(blank.count(name + "(") > blank.count("define " + name + "(") for name, _ in defines)


def _tokens(blank: str, wrappers: Iterable[str]) -> list[tuple[int, str]]:
    """Where request tokens start: the request APIs, a loader macro called with a driver name (`LOAD(cuX`),
    a call of one of `wrappers` (names found by a search for what is rare, then checked around)."""
    def starts_word(pos: int) -> bool:
        return pos == 0 or not (blank[pos - 1].isalnum() or blank[pos - 1] == "_")

    out = [(m.start(), m.group()) for m in _REQUEST.finditer(blank) if starts_word(m.start())]
    for m in _LOADER_ARG.finditer(blank):
        name = _LOADER_NAME.search(blank, max(0, m.start() - 64), m.start())
        if name is not None:
            out.append((name.start(), name.group().rstrip()))
    names = sorted({w for w in wrappers if re.fullmatch(r"[A-Za-z_]\w*", w)})[:256]
    if names:
        calls = re.compile("(?:" + "|".join(map(re.escape, names)) + r")\b(?=[ \t]*[(<])")
        out += [(m.start(), m.group()) for m in calls.finditer(blank) if starts_word(m.start())]
    return out


def _directive(stack: list[_Open], out: list[Region], word: str, rest: str, n: int) -> None:
    """One conditional directive: a chain opened, a branch moved on, a chain closed (others are ignored)."""
    if word in ("if", "ifdef", "ifndef"):
        parent = stack[-1].region if stack else Region(0, 0, {})
        outer = parent.needs if len(stack) < MAX_DEPTH else None
        stack.append(_Open(outer, parent.why, {}, _directive_condition(word, rest), f"#{word} {rest.strip()}"))
        _open(stack[-1], n)
    elif word in ("elif", "elifdef", "elifndef", "else") and stack:
        o = stack[-1]
        _close(o.region, n, out)
        o.neg = _both(o.neg, require(o.cond, False) if o.cond is not True else None)
        o.cond = True if word == "else" else _directive_condition(word, rest)
        o.text = f"#{word} {rest.strip()}".rstrip()
        _open(o, n)
    elif word == "endif" and stack:
        _close(stack.pop().region, n, out)


def _open(o: _Open, n: int) -> None:
    needs = _both(_both(o.outer, o.neg), {} if o.cond is True else require(o.cond, True))
    outer = o.outer_why if len(o.outer_why) < 200 else o.outer_why[:200].rsplit(" and ", 1)[0] + " and ..."
    why = f"{outer} and {o.text}" if outer else o.text
    o.region = Region(n, n, needs, why)


def _close(region: Region, n: int, out: list[Region]) -> None:
    region.last = n
    if region.tokens or region.defines:
        out.append(region)


# ---- which were skipped, and the configurations that enter them ----------------------------------------------------


def skipped(tu: Any, path: str, found: list[Region], seen_lines: set[int],
            made: set[tuple[str, str]] | None = None) -> list[Region]:
    """The regions whose request tokens clang did not see (no cursor of that name at the token); a region that
    only defines a loader macro, when no request of the parse was made by that macro with that API (`made`)."""
    import clang.cindex as ci

    out = []
    for r in found:
        if not r.tokens:
            if not any(d in (made or set()) for d in r.defines):
                out.append(r)
            continue
        for line, col, tok in r.tokens:
            if line in seen_lines:
                break
            try:
                cur = ci.Cursor.from_location(tu, tu.get_location(path, (line, col)))
                here = cur.spelling == tok or (cur.location.line, cur.location.column) == (line, col)
            except Exception:
                here = False
            if here:
                break
        else:
            out.append(r)
    return out


@dataclass
class Config:
    """One more parse of the file: the macro needs it meets, and the regions it was made to enter."""

    needs: Needs
    regions: list[Region] = field(default_factory=list)
    toolkit: str | None = None      # the toolkit whose headers are written for it (None: the flags' own headers)
    base: int = 0                   # the CUDA_VERSION of the flags' own headers
    forced: str = ""                # entered by rewriting its directives (see `forced`): how it is named

    def holds(self, line: int) -> bool:
        """Whether `line` is in the body of a region this configuration was made to enter."""
        return any(r.first < line < r.last for r in self.regions)

    def label(self) -> str:
        return self.forced or label(self.needs)

    def flags(self) -> list[str]:
        out = []
        for name, n in sorted(self.needs.items()):
            if name in TOOLKIT_MACROS:   # as the headers define it (also where the file does not include them)
                from .headers import toolkit_version

                value = toolkit_version(self.toolkit) if self.toolkit is not None else self.base
                out += [f"-D{name}={value}"] if value else []
                continue
            if n.defined is False:
                out.append(f"-U{name}")
            elif (n.lo, n.hi) == (-INF, INF):
                out.append(f"-D{name}")
            else:
                out.append(f"-D{name}={n.value()}")
        if any(self.needs.get(m, Need()).defined for m in WINDOWS_MACROS):
            out += ["-isystem", WIN32_DIR, "-isystem", os.path.join(WIN32_DIR, "upper")]
        return out


def label(needs: Needs) -> str:
    """How a configuration is named in messages: "when USE_CUDA is defined and CUDA_VERSION < 12000"."""
    parts = []
    for name, n in sorted(needs.items()):
        if n.defined is False:
            parts.append(f"{name} is not defined")
        elif (n.lo, n.hi) == (-INF, INF):
            parts.append(f"{name} is defined")
        elif n.lo == n.hi or (n.lo, n.hi) == (-INF, INF):
            parts.append(f"{name} = {n.value()}")
        elif n.hi == INF:
            parts.append(f"{name} >= {n.lo}")
        elif n.lo == -INF:
            parts.append(f"{name} < {n.hi + 1}")
        else:
            parts.append(f"{n.lo} <= {name} <= {n.hi}")
    return "when " + " and ".join(parts)


def _toolkit(cat: Catalog, needs: Needs, base: int = 0) -> tuple[bool, str | None]:
    """The newest catalog toolkit whose CUDA_VERSION meets the needs (ok, toolkit); (True, None): none asked,
    or the headers of the flags' own parse (CUDA_VERSION `base`) meet them."""
    from .headers import toolkit_version

    asked = [needs[m] for m in TOOLKIT_MACROS if m in needs]
    if not asked or (base and all(n.defined is not False and n.lo <= base <= n.hi for n in asked)):
        return True, None
    if any(n.defined is False for n in asked):
        return False, None
    for tk in reversed(cat.history):
        v = toolkit_version(tk)
        if all(n.lo <= v <= n.hi for n in asked):
            return True, tk
    return False, None


def plan(found: list[Region], cat: Catalog, base: int = 0) -> tuple[list[Config], list[Region]]:
    """Configurations that enter the regions (compatible needs share one; at most `MAX_CONFIGS`),
    and the regions none can enter (a condition not read, needs that contradict, no toolkit that fits).
    `base`: the CUDA_VERSION of the headers the flags' own parse used (kept where it meets the needs)."""
    configs: list[Config] = []
    left: list[Region] = []
    for r in found:
        if r.needs is None or not _toolkit(cat, r.needs)[0]:
            left.append(r)
            continue
        for c in configs:
            merged = _meet(c.needs, r.needs)
            if merged is not None and _toolkit(cat, merged)[0]:
                c.needs = merged
                c.regions.append(r)
                break
        else:
            if len(configs) < MAX_CONFIGS:
                configs.append(Config(dict(r.needs), [r]))
            else:
                left.append(r)
    for c in configs:
        c.toolkit, c.base = _toolkit(cat, c.needs, base)[1], base
    return configs, left


def base_version(opts: Any, cat: Catalog, path: str) -> int:
    """The CUDA_VERSION of the headers a parse of `path` with `opts` uses: a real toolkit's, or the generated one's."""
    from .headers import choose_toolkit, find_toolkit_include, include_dirs, real_version, toolkit_version

    if opts.toolkit is None:
        cmd = opts.commands.get(os.path.abspath(path))
        real = find_toolkit_include([*opts.include_dirs, *include_dirs(cmd or [])])
        if real is not None:
            return real_version(real)
    return toolkit_version(choose_toolkit(cat, opts.toolkit))


# ---- judging them ----------------------------------------------------------------------------------------------------


def _key(f: Query | Export) -> tuple[Any, ...]:
    if isinstance(f, Export):
        return ("e", f.line, f.col, f.name, f.target_sig, f.target_export)
    return ("q", f.line, f.col, f.symbol, f.version, f.pins, f.flags_text, f.target_sig, f.target_export, f.status)


_MADE_BY = re.compile(r"\(expanded from the macro (\w+)\)")
_CALLERS = re.compile(r"\(in the wrapper [^()]*called from line ([\d, ]+)")


def _wanted(f: Query | Export, c: Config, branchy: frozenset[str] = frozenset()) -> bool:
    """A fact of a configuration's parse inside a region it was made to enter, a wrapper's own fact for
    calls made from one, a call's fact through a wrapper whose body holds one of the regions (the request
    the branch makes, judged where its symbol is known), or a request a `#define` of one of the regions
    writes; not a fact the other configuration changed in code both configurations have."""
    if c.holds(f.line):
        return True
    if isinstance(f, Query) and f.via and branchy.intersection(f.via.split(" -> ")):
        return True
    if isinstance(f, Query) and any(c.holds(n) for n in f.macro_lines):
        return True   # written by a #define of the branch, expanded in code both configurations have
    m = _CALLERS.search(f.where)
    lines = [int(x) for x in m.group(1).replace(",", " ").split()] if m else []
    return any(c.holds(n) for n in lines)


Extract = Callable[[str, str, Any], Unit]


def every(unit: Unit, tu: Any, text: str, path: str, opts: Any, cat: Catalog, extract: Extract) -> Unit:
    """`unit` (the file in the configuration of its flags) with the facts of the configurations that enter
    the branches its flags skipped; `extract(text, path, opts)` parses one configuration."""
    wrappers = [str(spec.get("name", "")) for spec in [*unit.clang_apis.values(), *getattr(opts, "foreign", {}).values()]]
    found = regions(text, wrappers)
    if not found:
        return unit
    facts: list[Query | Export] = [*unit.queries, *unit.exports]
    dark = skipped(tu, path, found, {f.line for f in facts}, _made(unit))   # a #define's body is parsed again
    if not dark:
        return unit
    configs, left = plan(dark[:MAX_REGIONS], cat, base_version(opts, cat, path))
    keys = {_key(f) for f in facts}
    start = time.monotonic()
    entered = _forced_configs(text, left)
    left = [r for r in left if not any(r in c.regions for c in entered)]
    not_judged: list[str] = [f"{r.why} (line {r.first}): its condition cannot be set by -D/-U or a toolkit"
                             for r in left[:8]]
    if len(left) > 8 or len(dark) > MAX_REGIONS:
        not_judged.append(f"{max(0, len(left) - 8) + max(0, len(dark) - MAX_REGIONS)} more branches")
    for c in [*configs, *entered]:
        if time.monotonic() - start > MAX_SECONDS:
            not_judged.append(f"{c.label()}: not parsed, the file's {MAX_SECONDS:.0f} s for configurations is spent")
            continue
        try:
            got = _parse_config(c, text, path, opts, extract)
        except Exception as exc:
            not_judged.append(f"{c.label()}: {exc}".split("\n")[0])
            continue
        if c.forced and not _inside(got, c.regions[0]):   # a branch whose enclosing ones stay skipped
            r = c.regions[0]
            not_judged.append(f"{r.why} (line {r.first}): its condition cannot be set by -D/-U or a toolkit")
            continue
        _take(unit, got, c, keys, (tu, text, path, wrappers), {f.line for f in facts})
    if not_judged:
        said = "requests in branches the flags skip were not judged: " + "; ".join(not_judged)
        unit.note = f"{unit.note}; {said}" if unit.note else said
    return unit


def _made(unit: Unit) -> set[tuple[str, str]]:
    """(macro, API) of each request of the parse a macro made: its definition is the one the flags enter."""
    return {(m.group(1), f.api) for f in unit.queries if (m := _MADE_BY.search(f.where))}


def _inside(got: Unit, r: Region) -> bool:
    """Whether a parse has a fact in the region (it entered it)."""
    lines = [q.line for q in got.queries] + [e.line for e in got.exports]
    return any(r.first < n < r.last for n in lines)


def _parse_config(c: Config, text: str, path: str, opts: Any, extract: Extract) -> Unit:
    """The file parsed in configuration `c`: with its flags, or its text `forced` into its branch."""
    sub = dataclasses.replace(opts, extra=[*getattr(opts, "extra", ()), *c.flags()], flip=False,
                              toolkit=c.toolkit or opts.toolkit)
    return extract((forced(text, c.regions[0].first) or text) if c.forced else text, path, sub)


MAX_FORCED = 4
"""Branches per file whose condition no -D/-U or toolkit sets (`#if _CCCL_CTK_AT_LEAST(13, 4)`, a function-like
macro) that are entered by rewriting their directives (`forced`), at most."""
_OPENS = ("if", "ifdef", "ifndef")
_NEXT = ("elif", "elifdef", "elifndef", "else")


def _forced_configs(text: str, left: list[Region]) -> list[Config]:
    """One configuration for each of the first `MAX_FORCED` regions (in the order of the file) that no flag
    can enter: parsed with the text `forced` into that branch."""
    out: list[Config] = []
    for r in sorted(left, key=lambda r: r.first):
        if len(out) >= MAX_FORCED:
            break
        if forced(text, r.first) is not None:
            why = r.why.rsplit(" and ", 1)[-1]
            out.append(Config({}, [r], forced=f"in the branch {why} of line {r.first}, entered whatever its condition"))
    return out


def forced(text: str, line: int) -> str | None:
    """`text` with the `#if` chain of the branch whose directive is at `line` rewritten so that the
    preprocessor enters it: its condition true (`#if 1`, `#elif 1`), the branches before it false; every line
    stays where it is. The chains around it are left as they are (an include guard forced open would let the
    file include itself without end). None when no branch of a chain opens at `line`, or when it is an
    include guard (`#ifndef X` then `#define X`)."""
    blank = _blank(text)
    stack: list[list[re.Match[str]]] = []
    at, pos = 1, 0
    ds = list(_DIRECTIVE.finditer(blank))
    guards = {a.start() for a, b in itertools.pairwise(ds)   # the include guards' `#ifndef`s
              if a.group(1) == "ifndef" and b.group(1) == "define" and a.group(2).split()[:1] == b.group(2).split()[:1]}
    for m in ds:
        at += blank.count("\n", pos, m.start())
        pos = m.start()
        word = m.group(1)
        if word in _OPENS:
            stack.append([m])
        elif word in _NEXT and stack:
            stack[-1].append(m)
        else:
            if word == "endif" and stack:
                stack.pop()
            continue
        if at == line:
            return None if stack[-1][0].start() in guards else _rewrite(text, stack[-1:])
    return None


def _rewrite(text: str, stack: list[list[re.Match[str]]]) -> str:
    edits = sorted(((m, m is chain[-1]) for chain in stack for m in chain), key=lambda e: e[0].start())
    out, last = [], 0
    for m, truth in edits:
        word = m.group(1)
        new = "#else" if word == "else" else f"#{'if' if word in _OPENS else 'elif'} {int(truth)}"
        out += [text[last:m.start()], new, "\n" * m.group(0).count("\n")]
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _take(unit: Unit, got: Unit, c: Config, keys: set[tuple[Any, ...]], base: tuple[Any, str, str, list[str]],
          seen_lines: set[int]) -> None:
    """Into `unit`, what the parse of configuration `c` (`got`) adds; `base`: the flags' own translation
    unit, the text, its path and the wrappers known there."""
    tu, text, path, wrappers = base
    learnt = [str(spec.get("name", "")) for spec in got.clang_apis.values()]
    if set(learnt) - set(wrappers):
        c.regions += _entered(c, text, [*wrappers, *learnt], tu, path, seen_lines)
    branchy = _holding(tu, path, c.regions)
    had = len(unit.queries) + len(unit.exports)
    _add(unit, unit.queries, got.queries, c, keys, branchy)
    _add(unit, unit.exports, got.exports, c, keys, branchy)
    added = len(unit.queries) + len(unit.exports) - had      # counted as found and judged, as the flags' own are
    lost = [u for u in got.unjudged if c.holds(u[0]) and u not in unit.unjudged]
    unit.unjudged = sorted([*unit.unjudged, *lost])
    unit.requests += added + len(lost)
    unit.judged += added
    unit.flag_uses += [u for u in got.flag_uses if u not in unit.flag_uses and c.holds(u[1])]


def _entered(c: Config, text: str, names: list[str], tu: Any, path: str, seen_lines: set[int]) -> list[Region]:
    """The more regions a configuration enters once the wrappers its parse defines are known (a file under a
    build macro that calls its own lookup wrapper): branches whose body calls one, that the configuration's
    needs already meet and the flags' parse skipped."""
    have = {(r.first, r.last) for r in c.regions}
    more = [r for r in regions(text, names) if (r.first, r.last) not in have and r.needs is not None
            and _meet(c.needs, r.needs) == c.needs]
    return skipped(tu, path, more, seen_lines)[:MAX_REGIONS]


_FUNCTIONS = frozenset({"FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE", "CONSTRUCTOR", "DESTRUCTOR"})
_SCOPES = frozenset({"NAMESPACE", "CLASS_DECL", "STRUCT_DECL", "CLASS_TEMPLATE", "UNEXPOSED_DECL", "LINKAGE_SPEC"})


def _holding(tu: Any, path: str, found: list[Region]) -> frozenset[str]:
    """The names of this file's function definitions whose bodies hold one of the regions (a wrapper with a
    request per branch): top-level declarations and those of namespaces and classes, nothing deeper."""
    me = os.path.abspath(path)
    out: set[str] = set()
    todo = list(tu.cursor.get_children())
    while todo and len(out) < 4096:
        cur = todo.pop()
        loc = cur.location.file
        if loc is None or os.path.abspath(loc.name) != me:
            continue
        kind = cur.kind.name
        if kind in _SCOPES:
            todo += list(cur.get_children())
        elif kind in _FUNCTIONS and cur.is_definition():
            a, b = cur.extent.start.line, cur.extent.end.line
            if any(a < r.first and r.last < b for r in found):
                out.add(cur.spelling)
    return frozenset(out)


def _add(unit: Unit, into: list[Any], got: Iterable[Any], c: Config, keys: set[tuple[Any, ...]],
         branchy: frozenset[str] = frozenset()) -> None:
    """The new facts of a configuration, each named by the needs of the branch it is in (the smallest), or
    by the whole configuration for a wrapper's fact outside them."""
    for f in got:
        k = _key(f)
        if k in keys or not _wanted(f, c, branchy):
            continue
        keys.add(k)
        inside = [r for r in c.regions if r.first < f.line < r.last and r.needs is not None]
        name = label(min(inside, key=lambda r: r.last - r.first).needs or {}) if inside else c.label()
        if name not in unit.configs:
            unit.configs.append(name)
        f.where = f"{f.where} ({name})"
        f.config = name
        into.append(f)
