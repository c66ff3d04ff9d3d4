"""A small, bounded C preprocessor: the engine's guard against macro bombs, and its header look-up.

libclang expands every macro of a file itself; before a file with function-like
macros is handed to it, the engine expands them here (in the file and the headers
it includes, found next to it or in the include directories), within a bound of
depth and tokens: a file whose macros expand beyond it (a macro bomb) is a problem,
not a parse that eats the worker's time and memory. `find_header` is also what the
pre-filter uses to find the headers a file includes. It keeps every directive in
the text, blanks `#if 0` blocks, and records, for each expansion, where it came from.

A macro defined differently in the branches of one `#if` has each definition
as an alternative: an invocation after the `#endif` is expanded with every
alternative (each becomes its own statement), so both branches are linted.

Expansion is bounded (depth, total tokens) so hostile input cannot blow up.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_DEPTH",
    "Expander",
    "Expansion",
    "Macro",
    "Preprocessed",
    "Tok",
    "collect_args",
    "find_header",
    "headers_macros",
    "preprocess",
    "tokenize",
]


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+|\\\n)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"|(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<punct>\#\#|\.\.\.|->|::|<<|>>|[^\s\w])
""", re.VERBOSE | re.DOTALL)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.DOTALL)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]')
_WORD = re.compile(r"[A-Za-z_]\w*")
_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[ \t]*(\w*)", re.M)
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"')
# a request API named in an object-like macro's body (its request is not expanded, so not checked)
_REQUEST_WORD = re.compile(r"^(?:cuGetProcAddress(?:_v2)?|cudaGetDriverEntryPoint(?:ByVersion)?|dlv?sym"
                           r"|GetProcAddress)$")
# an invocation that looks like a loader macro: an upper-case name called with a driver function's name
_LOADER_CALL = re.compile(r"\b([A-Z][A-Z0-9_]{2,})[ \t]*\([ \t]*&?[ \t]*(cu[A-Z]\w*)")


def _directive_end(text: str, start: int) -> int:
    """Index of the newline that ends the directive starting at `start` (backslash lines joined)."""
    i = text.find("\n", start)
    while i > 0 and text[i - 1] == "\\":
        i = text.find("\n", i + 1)
    return len(text) if i < 0 else i


def _line_end(text: str, start: int) -> int:
    i = text.find("\n", start)
    return len(text) if i < 0 else i
_VERSIONISH = re.compile(r"CUDA|CUDART|__CUDACC|NCCL|_VERSION|HIP")
MAX_DEPTH = 64


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None          # None: object-like
    body: tuple[Tok, ...]
    line: int
    path: str
    branch: str = ""                        # "#if CUDART_VERSION >= 13000 (line 40)" when defined in a branch


@dataclass(frozen=True)
class Expansion:
    """One macro invocation replaced in the text: where it was and what it was."""

    line: int                               # 1-based line of the invocation
    col: int                                # 1-based column of the invocation
    text: str                               # the invocation as written (shortened)
    macro: str
    def_line: int
    def_path: str
    branch: str                              # the branch the macro's definition is in, if any


@dataclass
class Preprocessed:
    """The expanded text and how to map its positions back to the source."""

    text: str
    # per 0-based line: sorted (expanded col start, expanded col end, delta to original col, expansion or None)
    segments: dict[int, list[tuple[int, int, int, Expansion | None]]] = field(default_factory=dict)
    branches: list[tuple[int, int, str]] = field(default_factory=list)   # (first line, last line, label), 1-based
    macros: dict[str, list[Macro]] = field(default_factory=dict)
    expansions: int = 0
    truncated: bool = False
    notes: list[str] = field(default_factory=list)    # why the expansion is incomplete ("not fully expanded")

    def origin(self, line0: int, col0: int) -> tuple[int, Expansion | None]:
        """The original 1-based column for 0-based (line, col) of the expanded text, and its expansion."""
        delta = 0
        for start, end, d, exp in self.segments.get(line0, ()):
            if start > col0:
                break
            if exp is not None:
                if col0 < end:
                    return exp.col, exp
            else:
                delta = d
        return col0 + 1 - delta, None

    def branch_of(self, line: int) -> str:
        """The innermost version-conditional branch enclosing `line` (1-based), or ''."""
        best = ""
        span = 1 << 62
        for first, last, label in self.branches:
            if first <= line <= last and last - first < span:
                best, span = label, last - first
        return best


def tokenize(text: str) -> list[Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        out.append(Tok(kind, m.group()))
    return out


def _significant(toks: Sequence[Tok]) -> list[Tok]:
    return [t for t in toks if t.kind not in ("ws", "nl", "comment")]


def _parse_define(body: str, line: int, path: str, branch: str) -> Macro | None:
    m = _DEFINE.match(body)
    if not m:
        return None
    name, params_text, rest = m.group(1), m.group(2), m.group(3)
    params: tuple[str, ...] | None = None
    if params_text is not None:
        params = tuple(p.strip() for p in params_text[1:-1].split(",") if p.strip())
    toks = tuple(_significant(tokenize(rest.replace("\\\n", " "))))
    return Macro(name, params, toks, line, path, branch)


def _balanced(body: Sequence[Tok]) -> bool:
    depth = {"(": 0, "{": 0, "[": 0}
    close = {")": "(", "}": "{", "]": "["}
    for t in body:
        if t.text in depth:
            depth[t.text] += 1
        elif t.text in close:
            depth[close[t.text]] -= 1
            if depth[close[t.text]] < 0:
                return False
    return all(v == 0 for v in depth.values())


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.exhausted = False

    def spend(self, n: int) -> bool:
        self.left -= n
        if self.left < 0:
            self.exhausted = True
        return not self.exhausted


class Expander:
    """Expands macro invocations in a token list (the C rules, with a disabled set instead of hide sets)."""

    def __init__(self, macros: dict[str, list[Macro]], budget: _Budget) -> None:
        self.macros = macros
        self.budget = budget
        self.too_deep: str = ""             # the first macro left unexpanded at the depth limit

    def expand(self, toks: Sequence[Tok], disabled: frozenset[str], depth: int = 0,
               pick: Callable[[list[Macro]], Macro] | None = None) -> list[Tok]:
        out: list[Tok] = []
        i, n = 0, len(toks)
        while i < n:
            if self.budget.exhausted:
                out.extend(toks[i:])
                break
            t = toks[i]
            defs = self.macros.get(t.text) if t.kind == "ident" and t.text not in disabled else None
            if not defs or depth > MAX_DEPTH:
                if defs and not self.too_deep:
                    self.too_deep = t.text
                out.append(t)
                i += 1
                continue
            m = pick(defs) if pick is not None else defs[-1]
            if m.params is None:
                got_body = self.expand(m.body, disabled | {m.name}, depth + 1)
                self.budget.spend(len(got_body))
                out.extend(got_body)
                i += 1
                continue
            got = collect_args(toks, i + 1)
            if got is None:
                out.append(t)
                i += 1
                continue
            args, end = got
            body = self.substitute(m, args, disabled, depth)
            expanded = self.expand(body, disabled | {m.name}, depth + 1)
            self.budget.spend(len(expanded))
            out.extend(expanded)
            i = end
        return out

    def substitute(self, m: Macro, args: list[list[Tok]], disabled: frozenset[str], depth: int) -> list[Tok]:
        params = m.params or ()
        bound: dict[str, list[Tok]] = {}
        for k, p in enumerate(params):
            if p == "...":
                rest: list[Tok] = []
                for j, a in enumerate(args[k:]):
                    if j:
                        rest.append(Tok("punct", ","))
                    rest.extend(a)
                bound["__VA_ARGS__"] = rest
            else:
                bound[p.rstrip(".")] = args[k] if k < len(args) else []
        body = m.body
        out: list[Tok] = []
        i = 0
        while i < len(body):
            t = body[i]
            if t.text == "#" and i + 1 < len(body) and body[i + 1].text in bound:
                raw = " ".join(x.text for x in bound[body[i + 1].text])
                out.append(Tok("str", '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'))
                i += 2
                continue
            if t.kind == "ident" and t.text in bound:
                pasted = (i + 1 < len(body) and body[i + 1].text == "##") or (i > 0 and body[i - 1].text == "##")
                out.extend(bound[t.text] if pasted else self.expand(bound[t.text], disabled, depth + 1))
                i += 1
                continue
            out.append(t)
            i += 1
        return _paste(out)


def _paste(toks: list[Tok]) -> list[Tok]:
    if not any(t.text == "##" for t in toks):
        return toks
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text == "##" and out and i + 1 < len(toks):
            left = out.pop()
            joined = tokenize(left.text + toks[i + 1].text)
            out.extend(_significant(joined))
            i += 2
            continue
        if t.text != "##":
            out.append(t)
        i += 1
    return out


def collect_args(toks: Sequence[Tok], i: int) -> tuple[list[list[Tok]], int] | None:
    """Arguments of an invocation whose name ends before `i`: (args, index after ')'), or None."""
    n = len(toks)
    while i < n and toks[i].kind in ("ws", "nl", "comment"):
        i += 1
    if i >= n or toks[i].text != "(":
        return None
    depth = 0
    args: list[list[Tok]] = [[]]
    i += 1
    while i < n:
        t = toks[i]
        if t.kind in ("ws", "nl", "comment"):
            i += 1
            continue
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            if depth == 0:
                if t.text != ")":
                    return None
                if args == [[]]:
                    args = []
                return args, i + 1
            depth -= 1
        elif t.text == "," and depth == 0:
            args.append([])
            i += 1
            continue
        args[-1].append(t)
        i += 1
    return None


def _render(toks: Sequence[Tok]) -> str:
    parts: list[str] = []
    prev: Tok | None = None
    for t in toks:
        if prev is not None and ((prev.kind in ("ident", "num") and t.kind in ("ident", "num"))
                                 or prev.text in (";", "{", "}", ",")):
            parts.append(" ")
        parts.append(t.text)
        prev = t
    return "".join(parts)


@dataclass
class _Frame:
    line: int
    cond: str
    # name -> its definitions before this branch (None: not defined), for the names this branch changed
    saved: dict[str, list[Macro] | None] = field(default_factory=dict)
    defined: dict[str, list[Macro]] = field(default_factory=dict)   # names defined in earlier branches
    label: str = ""
    start: int = 0
    dead: bool = False


def headers_macros(path: str, include_dirs: Sequence[str], seen: set[str],
                   depth: int = 0) -> tuple[dict[str, list[Macro]], list[tuple[str, int, str]]]:
    """Macros defined in a header (and the headers it includes that can be found), and the quoted
    includes that could not be found on the way: (name, line, the header that includes it)."""
    out: dict[str, list[Macro]] = {}
    if depth > 16 or path in seen or len(seen) > 256:
        return out, []
    seen.add(path)
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > 4 << 20:
            return out, []
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return out, []
    p = _Pass(text, path, include_dirs, seen, depth + 1, False)
    p.run()
    return p.macros, p.missing


def find_header(name: str, here: str, include_dirs: Sequence[str]) -> str | None:
    for d in (os.path.dirname(here) or ".", *include_dirs):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(cand):
            return cand
    return None


class _Pass:
    """One sequential pass over the logical lines: directives update the macro table, code is expanded."""

    def __init__(self, text: str, path: str, include_dirs: Sequence[str], seen: set[str], depth: int,
                 expand: bool) -> None:
        self.text, self.path, self.include_dirs = text, path, include_dirs
        self.seen, self.depth, self.expand_code = seen, depth, expand
        self.macros: dict[str, list[Macro]] = {}
        self.frames: list[_Frame] = []
        self.out: list[str] = []
        self.result = Preprocessed(text="")
        self.budget = _Budget(200_000 + len(text))
        self.live: set[str] = set()
        self.missing: list[tuple[str, int, str]] = []     # quoted includes not found: (name, line, where)
        self.hidden: list[Macro] = []                      # object-like macros whose body holds a request

    # --- the macro table: every change goes through these, so a branch can be undone without a copy ---
    def set_macro(self, name: str, defs: list[Macro]) -> None:
        if self.frames:
            self.frames[-1].saved.setdefault(name, self.macros.get(name))
        self.macros[name] = defs

    def del_macro(self, name: str) -> bool:
        if name not in self.macros:
            return False
        if self.frames:
            self.frames[-1].saved.setdefault(name, self.macros.get(name))
        del self.macros[name]
        return True

    def end_branch(self, f: _Frame) -> list[str]:
        """Collect what the branch defined into `f.defined` and restore the table as it was before it."""
        changed = list(f.saved)
        for k, prev in f.saved.items():
            cur = self.macros.get(k)
            if cur is not None and cur != prev:
                got = f.defined.setdefault(k, [])
                got.extend(d for d in cur if d not in got)
            if prev is None:
                self.macros.pop(k, None)
            else:
                self.macros[k] = prev
        f.saved = {}
        return changed

    # --- conditionals ---
    def branch_label(self) -> str:
        for f in reversed(self.frames):
            if f.label:
                return f.label
        return ""

    def directive(self, kind: str, body: str, line: int) -> None:
        self._directive(kind, body, line)
        self._dead = any(f.dead for f in self.frames)

    def _directive(self, kind: str, body: str, line: int) -> None:
        cond = body.split(kind, 1)[1].strip() if kind in body else ""
        cond = re.sub(r"\s+", " ", cond.replace("\\\n", " "))
        if kind in ("if", "ifdef", "ifndef"):
            word = {"if": "#if", "ifdef": "#ifdef", "ifndef": "#ifndef"}[kind]
            label = f"`{word} {cond}` branch (line {line})" if _VERSIONISH.search(cond) else ""
            dead = kind == "if" and cond in ("0", "(0)", "false")
            self.frames.append(_Frame(line, cond, label=label, start=line, dead=dead))
        elif kind in ("elif", "else") and self.frames:
            f = self.frames[-1]
            self._close_branch(f, line)
            self.refresh(self.end_branch(f))
            word = "#elif " + cond if kind == "elif" else "#else"
            f.label = (f"`{word}` branch of `#if {f.cond}` (line {line})"
                       if _VERSIONISH.search(f.cond + cond) else "")
            f.start, f.dead = line, kind == "elif" and cond in ("0", "(0)")
        elif kind == "endif" and self.frames:
            f = self.frames.pop()
            self._close_branch(f, line)
            changed = list(f.saved)
            for k, prev in f.saved.items():     # the last branch's state stays; what it defined is one more
                cur = self.macros.get(k)        # alternative, as for the earlier branches
                if cur is not None and cur != prev:
                    got = f.defined.setdefault(k, [])
                    got.extend(d for d in cur if d not in got)
                if self.frames:                 # the enclosing branch must be able to undo it too
                    self.frames[-1].saved.setdefault(k, prev)
            for k, alts in f.defined.items():
                self.set_macro(k, alts)
            self.refresh([*changed, *f.defined])

    def _close_branch(self, f: _Frame, line: int) -> None:
        if f.label:
            self.result.branches.append((f.start, line, f.label))

    def define(self, body: str, line: int) -> None:
        m = _parse_define(body, line, self.path, self.branch_label())
        if m is None or not _balanced(m.body):
            return
        if (m.params is None and self.expand_code and len(self.hidden) < 8
                and any(t.kind == "ident" and _REQUEST_WORD.match(t.text) for t in m.body)):
            self.hidden.append(m)
        self.set_macro(m.name, [m])
        self.refresh([m.name])

    def undef(self, body: str) -> None:
        parts = body.split()
        name = parts[-1] if len(parts) >= 2 else ""
        if self.del_macro(name):
            self.refresh([name])

    def include(self, body: str, line: int) -> None:
        m = _INCLUDE.match(body)
        if not m:
            return
        hdr = find_header(m.group(1), self.path, self.include_dirs)
        if hdr is None:
            if _QUOTED_INCLUDE.match(body):
                self.missing.append((m.group(1), line, self.path))
            return
        got, missing = headers_macros(hdr, self.include_dirs, self.seen, self.depth)
        self.missing.extend(missing)
        for k, v in got.items():
            self.set_macro(k, v)
        self.refresh(got)

    # --- code ---
    def refresh(self, names: Iterable[str]) -> None:
        """Re-decide which of these names are expanded in code (after a define, undef, include or #endif)."""
        for k in names:
            if any(self.expandable(m) for m in self.macros.get(k, ())):
                self.live.add(k)
            else:
                self.live.discard(k)

    def expandable(self, m: Macro) -> bool:
        """Function-like macros are expanded; object-like ones only when they invoke a function-like macro
        (an X-macro list such as `#define DRIVER_FUNCS X(cuMemMap, 10020) X(...)`)."""
        if m.params is not None:
            return True
        return any(t.kind == "ident" and i + 1 < len(m.body) and m.body[i + 1].text == "("
                   and any(d.params is not None for d in self.macros.get(t.text, ()))
                   for i, t in enumerate(m.body))

    def run(self) -> Preprocessed:
        """Directives are found with one pattern over the text; code between them is copied whole unless a
        macro to expand occurs in it (then only the lines with an invocation are tokenized)."""
        text = self.text
        pos, line0 = 0, 0
        for m in _DIRECTIVE_LINE.finditer(text):
            if m.start() < pos:
                continue
            self.code(text[pos:m.start()], line0)
            line0 += text.count("\n", pos, m.start())
            end = _directive_end(text, m.start())
            body = text[m.start():end]
            self.handle_directive(m.group(1), body, line0 + 1)
            self.out.append(body if not self.is_dead else "\n" * body.count("\n"))
            line0 += body.count("\n")
            pos = end
        self.code(text[pos:], line0)
        while self.frames:
            self.directive("endif", "#endif", line0 + 1)
        self.result.text = "".join(self.out)
        self.result.macros = self.macros
        self.result.truncated = self.budget.exhausted
        if self.expand_code:
            self.result.notes = self.notes()
        return self.result

    def notes(self) -> list[str]:
        """Why this file's expansion is incomplete: what the linter could not see, said instead of silence."""
        out: list[str] = []
        if self.too_deep:
            out.append(f"macros nested deeper than {MAX_DEPTH} levels (the macro {self.too_deep} was left "
                       "unexpanded): requests inside are not checked")
        if self.budget.exhausted:
            out.append("the expansion budget was exhausted (a macro expanding to too many tokens): "
                       "the rest of the file is not expanded")
        for m in (h for h in self.hidden if h.name not in self.live):
            what = next(t.text for t in m.body if t.kind == "ident" and _REQUEST_WORD.match(t.text))
            out.append(f"the object-like macro {m.name} (line {m.line}) contains a request ({what}); it is not "
                       "expanded, so its request is not checked (make it a function-like macro)")
        if self.missing:
            unknown = sorted({(m.group(1), m.group(2)) for m in _LOADER_CALL.finditer(self.text)
                              if m.group(1) not in self.macros})
            if unknown:
                names = ", ".join(f"{a}({b}...)" for a, b in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
                hdrs = ", ".join(f"{n!r} (included at line {ln} of {os.path.basename(w)})"
                                 for n, ln, w in self.missing[:3])
                out.append(f"{names} may be macros from a header that was not found: {hdrs}; "
                           "give its directory with -I or --compile-commands")
        return out

    too_deep = ""

    def code(self, block: str, line0: int) -> None:
        if not block:
            return
        if self.is_dead:
            self.out.append("\n" * block.count("\n"))
            return
        if not self.expand_code or not self.live or self.live.isdisjoint(_WORD.findall(block)):
            self.out.append(block)
            return
        p, cur = 0, line0
        for mm in _WORD.finditer(block):
            if mm.start() < p or mm.group() not in self.live:
                continue
            ls = max(p, block.rfind("\n", 0, mm.start()) + 1)
            self.out.append(block[p:ls])
            cur += block.count("\n", p, ls)
            le = _line_end(block, mm.end())
            first = le
            toks = tokenize(block[ls:le])
            opened = _open_parens(toks)
            for _ in range(200):     # an invocation over several lines: each line tokenized once
                if opened <= 0 or le >= len(block):
                    break
                nxt = _line_end(block, le + 1)
                opened += _open_parens(tokenize(block[le:nxt]))
                le = nxt
            if le != first:
                toks = tokenize(block[ls:le])
            self.emit(toks, cur)
            cur += block.count("\n", ls, le)
            p = le
        self.out.append(block[p:])

    @property
    def is_dead(self) -> bool:
        return self._dead

    _dead = False

    def handle_directive(self, kind: str, body: str, line: int) -> None:
        if kind in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            self.directive(kind, body, line)
        elif self.is_dead:
            return
        elif kind == "define":
            self.define(body, line)
        elif kind == "undef":
            self.undef(body)
        elif kind == "include":
            self.include(body, line)

    def emit(self, toks: list[Tok], first_line0: int) -> None:
        """Append the expanded chunk; as many newlines as the source chunk, columns mapped by segments."""
        exp = Expander(self.macros, self.budget)
        line0, col, out_col = first_line0, 0, 0
        pieces: list[str] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            usable = [m for m in self.macros.get(t.text, ()) if self.expandable(m)] if t.kind == "ident" else []
            got = collect_args(toks, i + 1) if usable and usable[-1].params is not None else None
            if usable and (usable[-1].params is None or got is not None):
                end = got[1] if got is not None else i + 1
                written = "".join(x.text for x in toks[i:end])
                text, spans = self.expansion_text(exp, usable, toks[i:end], _statement_context(toks, end), line0, col)
                segs = self.result.segments.setdefault(line0, [])
                segs.extend((out_col + a, out_col + b, 0, info) for a, b, info in spans)
                pieces.append(text)
                out_col += len(text)
                self.result.expansions += 1
                nls = written.count("\n")
                if nls:
                    tail = len(written.rsplit("\n", 1)[1])
                    pieces.append("\n" * nls + " " * tail)
                    line0 += nls
                    col = out_col = tail
                else:
                    col += len(written)
                    segs.append((out_col, out_col, out_col - col, None))
                i = end
                continue
            pieces.append(t.text)
            if "\n" in t.text:
                line0 += t.text.count("\n")
                col = out_col = len(t.text.rsplit("\n", 1)[1])
            else:
                col += len(t.text)
                out_col += len(t.text)
            i += 1
        self.out.append("".join(pieces))
        if exp.too_deep and not self.too_deep:
            self.too_deep = exp.too_deep

    def expansion_text(self, exp: Expander, defs: list[Macro], inv: list[Tok], statement: bool, line0: int,
                       col: int) -> tuple[str, list[tuple[int, int, Expansion]]]:
        """The invocation's expansion, with one statement per alternative definition in statement context,
        and the span of each alternative in it."""
        short = re.sub(r"\s+", " ", "".join(t.text for t in inv))
        short = short if len(short) <= 80 else short[:77] + "..."
        alts = defs if len(defs) > 1 and statement else defs[-1:]
        text = ""
        spans: list[tuple[int, int, Expansion]] = []
        for m in alts:
            info = Expansion(line0 + 1, col + 1, short, m.name, m.line, m.path, m.branch)
            body = _render(exp.expand(inv, frozenset(), pick=_prefer(m)))
            if len(alts) > 1:
                body = "{ " + body + "; } "
            spans.append((len(text), len(text) + len(body), info))
            text += body
        return text, spans


def _prefer(m: Macro) -> Callable[[list[Macro]], Macro]:
    """A picker that takes `m` among the alternatives of its name (else the latest definition)."""
    def pick(defs: list[Macro]) -> Macro:
        return m if m in defs else defs[-1]
    return pick


def _open_parens(toks: Sequence[Tok]) -> int:
    depth = 0
    for t in toks:
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
    return depth


def _statement_context(toks: Sequence[Tok], end: int) -> bool:
    for t in toks[end:]:
        if t.kind in ("ws", "nl", "comment"):
            continue
        return t.text in (";", "}") or t.kind == "ident"
    return True


def preprocess(text: str, path: str, include_dirs: Sequence[str] = (), *, seen: set[str] | None = None,
               depth: int = 0, expand: bool = True) -> Preprocessed:
    """Expand the file's macros; keep line numbers; record branches and expansions."""
    return _Pass(text, path, include_dirs, seen if seen is not None else {os.path.abspath(path)}, depth,
                 expand).run()
