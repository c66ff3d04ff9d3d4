"""`cuentry lint --fix`: the repairs that are mechanical and certain, each a rewrite of exactly one span.

What is fixed (not through a wrapper function; in a macro, a pin at the argument the macro passes on, or
in its definition only when every expansion wants the same pin):

- a pin (CE001, CE002, CE009, CE010) becomes the ABI version the pointer's type names (`PFN_cuX_vN`, or the
  one ABI whose function type the pointer has): safe.
- a pointer whose hand-written type is the function type of none of its symbol's ABIs (CE002, clang) gets the
  `PFN_cuX_vN` typedef of the ABI its pin binds, and the pin that ABI's version, together: unsafe (the calls
  through it then compile against another type). Untyped, a pin between ABIs becomes the ABI it binds
  (the same ABI wherever it resolved before): safe; a toolkit/driver version or a pin outside the ABIs
  becomes the ABI the targeted toolkit binds: unsafe (it may change which ABI some driver gives).
- a `_vN`/`_ptds`/`_ptsz` name (CE003) becomes the base name, with the pin of the ABI the suffix names (and
  the per-thread flag for `_ptds`/`_ptsz`); a case error becomes the one catalog name it spells: safe when
  the pointer's type agrees or is not known.
- default stream flags (CE007) become the one explicit flag the file uses elsewhere: safe.
- a library export (CE011) taken by a name whose ABI is not the pointer's `PFN_cuX_vN` becomes the export of
  that ABI: safe.
- a pointer declared `decltype(&cuX) p` (CE004) whose function type is the bound ABI's gets that ABI's
  `PFN_cuX_vN` typedef instead (where the file includes cudaTypedefs.h): safe.
- a pointer whose type is written by hand (CE004, clang): a function-pointer declarator `R (*p)(...)`, a
  variable of a hand-written typedef `my_t p`, or the cast that gives a `void *` its type `(R (*)(...))raw`,
  gets the `PFN_cuX_vN` typedef of the ABI the request binds (its pin's; with no pin, the one ABI with the
  pointer's function type, else the targeted toolkit's) where the file includes cudaTypedefs.h: safe when
  that ABI has the pointer's own function type (the type does not change, only its name), unsafe otherwise
  (the calls then compile against another type).

Every fix is verified: the fixed text is linted again with the same settings, and must still be judged by
the same engine (it still parses) with no finding of the fixed code left on the fixed line and no new
finding; otherwise it is withdrawn with a note saying why and what to change by hand.

Each fixer takes the finding's place and facts (`At`) and is named by its rule's row in
[rules][cuentry.lint.rules] (`Rule.fix`): a rule is one unit, its check, its page and its fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..catalog import Catalog
from ..names import split_suffix
from .facts import DEFAULT_FLAGS, LEGACY_FLAGS, PER_THREAD_FLAGS, PFN_RE, Query, Unit
from .signature import normalizer
from .verdict import bound

__all__ = ["At", "Edit", "Fix", "export_name", "flags", "name", "pin", "pin_or_type", "pointer_type", "position", "span"]


_PIN_CODES = ("CE001", "CE002", "CE009", "CE010")
_VERSIONED = ("cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPointByVersion")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"^\d+[uUlL]*$")


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] with `new`."""

    start: int
    end: int
    new: str


@dataclass(frozen=True)
class Fix:
    code: str
    line: int
    kind: str                     # safe | unsafe
    edits: tuple[Edit, ...]
    what: str                     # "pin 3020", "name cuMemAlloc at 3020", ...


@dataclass(frozen=True)
class At:
    """Where a fix is asked for: the finding's code and place, the file's facts and text, the catalog, and the
    CUDA_VERSION of the toolkit targeted (`--toolkit`, else the newest) and of the newest the catalog knows."""

    unit: Unit
    text: str
    code: str
    line: int
    col: int
    cat: Catalog
    toolkit: int
    newest: int



def position(text: str, off: int) -> tuple[int, int]:
    """1-based (line, column) of an offset."""
    line = text.count("\n", 0, off) + 1
    return line, off - (text.rfind("\n", 0, off) + 1) + 1


def _offset(text: str, line: int, col: int) -> int:
    """The offset of 1-based (line, col); -1 when outside the text."""
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return -1
        pos = nl + 1
    off = pos + col - 1
    return off if col >= 1 and off <= len(text) else -1


def _close(text: str, i: int) -> int:
    """The offset of the bracket closing the one at `i` (strings, chars and comments skipped); -1 if none."""
    depth = 0
    j = i
    n = len(text)
    while j < n:
        c = text[j]
        if c in "\"'":
            j = _skip_quoted(text, j)
            continue
        if text.startswith("//", j) or text.startswith("/*", j):
            end = text.find("\n" if text[j + 1] == "/" else "*/", j + 2)
            j = n if end < 0 else end + (1 if text[j + 1] == "/" else 2)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


def _skip_quoted(text: str, j: int) -> int:
    q = text[j]
    j += 1
    while j < len(text) and text[j] != q:
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _arguments(text: str, open_at: int, close_at: int) -> list[tuple[int, int]]:
    """The top-level arguments between the brackets, as (start, end) offsets with blanks trimmed."""
    out: list[tuple[int, int]] = []
    start = open_at + 1
    j = start
    while j <= close_at:
        c = text[j]
        if c in "\"'":
            j = _skip_quoted(text, j)
            continue
        if c in "([{":
            j = _close(text, j) + 1
            if j <= 0:
                return []
            continue
        if c == "," or j == close_at:
            a, b = start, j
            while a < b and text[a].isspace():
                a += 1
            while b > a and text[b - 1].isspace():
                b -= 1
            out.append((a, b))
            start = j + 1
        j += 1
    return out


def _call(text: str, line: int, col: int) -> tuple[int, int, list[tuple[int, int]]] | None:
    """The call whose callee starts at (line, col): its bracket offsets and arguments."""
    off = _offset(text, line, col)
    m = _IDENT.match(text, off) if off >= 0 else None
    if m is None:
        return None
    j = m.end()
    while j < len(text) and text[j] in " \t":
        j += 1
    if j >= len(text) or text[j] != "(":
        return None
    close = _close(text, j)
    return (j, close, _arguments(text, j, close)) if close > 0 else None


def span(text: str, line: int, col: int) -> tuple[int, int]:
    """Where the source range starting at (line, col) ends (1-based line, column after its last character):
    a call's closing bracket, a string literal's quote, an identifier or number; the start when not known."""
    try:
        return _span(text, line, col)
    except (ValueError, LookupError, RecursionError):
        return line, col


def _span(text: str, line: int, col: int) -> tuple[int, int]:
    off = _offset(text, line, col)
    if off < 0 or off >= len(text):
        return line, col
    got = _call(text, line, col)
    if got is not None:
        end = got[1] + 1
    elif text[off] == '"':
        end = _skip_quoted(text, off)
    else:
        m = re.compile(r"[\w.:]+").match(text, off)
        end = m.end() if m else off
    end = min(end, len(text))
    end_line = line + text.count("\n", off, end)
    last_nl = text.rfind("\n", 0, end)
    return end_line, end - last_nl


def _typed(q: Query, cat: Catalog, symbol: str) -> int | None:
    """The ABI version the pointer's type names: its PFN typedef, or the one ABI with its function type."""
    m = PFN_RE.search(q.target_type or "")
    if m is not None:
        name = m.group(0)
        got = re.fullmatch(r"PFN_(\w+?)_v(\d+)(?:_pt[ds]z?)?", name)
        if got and got.group(1) == symbol and int(got.group(2)) in cat.versions(symbol):
            return int(got.group(2))
        return None
    if q.target_sig is not None and symbol in cat:
        norm = normalizer(cat)
        same = {a.version for a in cat.abis(symbol) if norm.abi(a) == q.target_sig}
        if len(same) == 1:
            return same.pop()
    return None


def _query(u: Unit, line: int, col: int) -> Query | None:
    """The request a finding at (line, col) is about, when it is written here as a plain call or a macro's
    invocation (not through a wrapper, another configuration, or a table's row written elsewhere)."""
    for q in u.queries:
        if (q.line, q.col) == (line, col) or (q.symbol_line, q.symbol_col) == (line, col):
            plain = q.where == (f" (expanded from the macro {q.macro})" if q.macro else "")
            if q.wrapped or q.via or q.config or not plain or q.api not in (*_VERSIONED, "cudaGetDriverEntryPoint"):
                return None
            return q
    return None


def _safe_pin(q: Query, cat: Catalog, old: str, newest: int) -> int | None:
    """The pin that is certainly right: the pointer's own ABI; untyped, the ABI a literal pin between ABIs
    (at most the newest release) binds, which is the same ABI wherever the old pin resolved."""
    sym = q.symbol or ""
    typed = _typed(q, cat, sym)
    if typed is not None:
        return typed
    if _INT.match(old):
        pin = int(old.rstrip("uUlL"))
    elif q.version is not None and len(set(q.pins)) <= 1 and q.version_kind == "literal":
        pin = q.version          # a constant the front end folded (kAbi, make_version(11, 0))
    else:
        return None
    if not cat.versions(sym) or not cat.versions(sym)[0] <= pin <= newest:
        return None
    abi = bound(q, cat, pin)
    return abi.version if abi is not None else None


def _pin_fix(q: Query, at: At) -> Fix | None:
    """The pin rewritten to the pointer's ABI (safe), or to the ABI the old pin / the toolkit binds."""
    sym, text, cat, code = q.symbol, at.text, at.cat, at.code
    if sym is None or sym not in cat or q.api not in _VERSIONED:
        return None
    where = _version_at(q, text)
    if where is None:
        return None
    a, b, macro = where
    old = text[a:b]
    new = _safe_pin(q, cat, old, at.newest) if code != "CE009" or _typed(q, cat, sym) is not None else None
    kind = "safe"
    if new is None and macro is None:
        abi = bound(q, cat, at.toolkit)
        if abi is None:
            return None
        new, kind = abi.version, "unsafe"
    if new is None or (_INT.match(old) and int(old.rstrip("uUlL")) == new):
        return None
    if macro is not None and not _all_agree(at.unit, text, cat, macro, new, at.newest):
        return None
    what = f"pin {new}" + (f" in the definition of {macro}" if macro else "")
    return Fix(code, q.line, kind, (Edit(a, b, str(new)),), what)


_TYPEDEFS = re.compile(r"#\s*include\s*[<\"]cudaTypedefs\.h[>\"]")
_API_CALL = re.compile(r"\b(?:cuGetProcAddress(?:_v2)?|cudaGetDriverEntryPointByVersion)\s*\(")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)", re.M)


def _macro(text: str, name: str) -> tuple[list[str], int, int] | None:
    """A function-like macro defined once in the text: its parameters and its body's offsets."""
    found = [m for m in _DEFINE.finditer(text) if m.group(1) == name]
    if len(found) != 1:
        return None
    m = found[0]
    end = m.end()
    while True:
        nl = text.find("\n", end)
        if nl < 0:
            end = len(text)
            break
        if text[nl - 1:nl] != "\\" and text[nl - 2:nl] != "\\\r":
            end = nl
            break
        end = nl + 1
    return [p.strip() for p in m.group(2).split(",")], m.end(), end


def _version_at(q: Query, text: str) -> tuple[int, int, str | None] | None:
    """Where the request's version is written: (start, end, None) at a direct call or a macro's argument;
    (start, end, macro) in a macro's definition, shared by every expansion."""
    call = _call(text, q.line, q.col)
    if call is None:
        return None
    off = _offset(text, q.line, q.col)
    m = _IDENT.match(text, off)
    callee = m.group(0) if m else ""
    defined = _macro(text, callee)
    getter = (defined is None and not re.search(rf"#\s*define\s+{re.escape(callee)}\b", text) and bool(call[2])
              and text[slice(*call[2][0])] == f'"{q.symbol}"')      # a pointer to the API: its arguments
    if callee in _VERSIONED or getter:
        return (*call[2][2], None) if len(call[2]) >= 3 else None
    if defined is None:
        return None
    params, start, end = defined
    body = list(_API_CALL.finditer(text[start:end]))
    if len(body) != 1:
        return None
    open_at = start + body[0].end() - 1
    close = _close(text, open_at)
    args = [(a, b) for a, b in _arguments(text, open_at, close)] if 0 < close <= end else []
    if len(args) < 3:
        return None
    a, b = _strip(text, *args[2])
    v = text[a:b]
    if v in params and len(call[2]) == len(params):
        return (*_strip(text, *call[2][params.index(v)]), None)
    if not (_INT.match(v) or re.fullmatch(r"[A-Z_]\w*", v)) or v in params or "#" in v:
        return None
    return a, b, callee


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    """(a, b) without blanks and line continuations at either end."""
    while a < b and text[a] in " \t\r\n\\":
        a += 1
    while b > a and text[b - 1] in " \t\r\n\\":
        b -= 1
    return a, b


def _all_agree(u: Unit, text: str, cat: Catalog, macro: str, new: int, newest: int) -> bool:
    """Whether every request expanded from `macro` wants the same pin `new` (a fix at its definition)."""
    for q in u.queries:
        off = _offset(text, q.line, q.col)
        m = _IDENT.match(text, off) if off >= 0 else None
        if m is None or m.group(0) != macro:
            continue
        where = _version_at(q, text)
        if q.symbol is None or where is None or _safe_pin(q, cat, text[where[0]:where[1]], newest) != new:
            return False
    return True


def _name_fix(q: Query, text: str, cat: Catalog) -> Fix | None:
    """A suffixed name made the base name at the suffix's ABI; a case error made the catalog's name."""
    sym = q.symbol
    if sym is None or sym in cat or q.api not in (*_VERSIONED, "cudaGetDriverEntryPoint"):
        return None
    call = _call(text, q.line, q.col)
    if call is None or not call[2]:
        return None
    a, b = call[2][0]
    if text[a:b] != f'"{sym}"':
        return None
    edits = []
    abi = cat.by_exported(sym)
    if abi is None and split_suffix(sym) is None:
        return _case_fix(q, sym, a, b, cat)
    if abi is None or q.api not in _VERSIONED or len(call[2]) < 4:
        return None
    typed = _typed(q, cat, abi.symbol)
    if typed is not None and typed != abi.version:
        return None
    edits.append(Edit(a, b, f'"{abi.symbol}"'))
    va, vb = call[2][2]
    edits.append(Edit(va, vb, str(abi.version)))
    if abi.variant:
        fa, fb = call[2][3]
        flag = next(iter(sorted(f for f in PER_THREAD_FLAGS if f.startswith("cuda") == q.api.startswith("cuda"))))
        if text[fa:fb].split("::")[-1] not in PER_THREAD_FLAGS:
            edits.append(Edit(fa, fb, flag))
    return Fix("CE003", q.line, "safe", tuple(edits), f"name {abi.symbol} at {abi.version}")


def _case_fix(q: Query, sym: str, a: int, b: int, cat: Catalog) -> Fix | None:
    """A name with a case error made the one catalog name it spells."""
    same = [s for s in cat.symbols() if s.lower() == sym.lower()]
    if len(same) != 1:
        return None
    return Fix("CE003", q.line, "safe", (Edit(a, b, f'"{same[0]}"'),), f"name {same[0]}")


def _flags_fix(q: Query, u: Unit, text: str) -> Fix | None:
    """Default flags made the one explicit flag the file uses elsewhere (and no other)."""
    modes = {n for n, _, _ in u.flag_uses if n in LEGACY_FLAGS or n in PER_THREAD_FLAGS}
    if len(modes) != 1 or q.api not in (*_VERSIONED, "cudaGetDriverEntryPoint"):
        return None
    call = _call(text, q.line, q.col)
    index = 2 if q.api == "cudaGetDriverEntryPoint" else 3
    if call is None or len(call[2]) <= index:
        return None
    a, b = call[2][index]
    old = text[a:b].split("::")[-1]
    if old not in DEFAULT_FLAGS and old != "0":
        return None
    (flag,) = modes
    if flag.startswith("cuda") != q.api.startswith("cuda"):
        return None
    return Fix("CE007", q.line, "safe", (Edit(a, b, flag),), f"flags {flag}")


def _decltype_fix(q: Query, text: str, cat: Catalog) -> Fix | None:
    """A pointer declared `decltype(&cuX) p` whose function type is the bound ABI's: the declaration's
    `decltype(...)` becomes that ABI's PFN typedef (the same type, now named by its version)."""
    sym = q.symbol
    if sym is None or sym not in cat or q.target_sig is None or not q.pins or "decltype" not in (q.target_type or ""):
        return None
    if not _TYPEDEFS.search(text):
        return None   # the PFN typedefs would not be declared
    abi = bound(q, cat, q.pins[0])
    if abi is None or normalizer(cat).abi(abi) != q.target_sig or len(set(q.pins)) != 1:
        return None
    call = _call(text, q.line, q.col)
    if call is None or len(call[2]) < 2:
        return None
    m = re.search(r"&\s*(\w+)\s*\)?\s*$", text[slice(*call[2][1])])
    if m is None:
        return None
    decl = re.compile(r"\bdecltype\s*\(\s*&?\s*(?:::)?\s*(\w+)\s*\)(?=\s*(?:const\s*)?" + re.escape(m.group(1)) + r"\b)")
    found = [d for d in decl.finditer(text) if d.group(1) in (sym, abi.exported)]
    if len(found) != 1:
        return None
    return Fix("CE004", q.line, "safe", (Edit(found[0].start(), found[0].end(), abi.pfn),), f"type {abi.pfn}")


_SPECS = r"(?:(?:static|extern|inline|thread_local|__thread|_Thread_local)\s+)*"
_FN_DECL = re.compile(_SPECS + r"(?P<ret>(?:[A-Za-z_][\w:]*+\s*)+?)\(\s*(?:(?:CUDAAPI|__stdcall|__cdecl)\s*)?\*\s*"
                      r"[A-Za-z_]\w*\s*\)\s*\(", re.S)
_NAMED_DECL = re.compile(_SPECS + r"(?P<type>(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s+[A-Za-z_]\w*\s*(?:=.*)?", re.S)
_CPP_CAST = re.compile(r"(?:reinterpret_cast|static_cast)\s*<([^<>]*)>\s*\(")
_NOT_TYPES = {"auto", "const", "volatile", "struct", "enum", "union", "typename", "decltype"}


def _handwritten_fix(q: Query, text: str, cat: Catalog, toolkit: int) -> Fix | None:
    """The hand-written type of a request's pointer, where this file spells it (its declaration, or the cast
    of the `void *` that received it), rewritten to the PFN typedef of the ABI the request binds."""
    sym, decl = q.symbol, q.target_decl
    if sym is None or sym not in cat or q.target_sig is None or decl is None or len(set(q.pins)) > 1:
        return None
    if not _TYPEDEFS.search(text):
        return None   # the PFN typedefs would not be declared
    typed = None if q.pins else _typed(q, cat, sym)
    if typed is not None:        # no pin: the one ABI of the pointer's function type (the pin a fix gives)
        abi = next((a for a in cat.abis(sym) if a.version == typed and not a.variant), None)
    else:
        if not q.pins and q.api == "cudaGetDriverEntryPoint":
            q = replace(q, api=_VERSIONED[0])      # the runtime asks at its own version: the toolkit's
        abi = bound(q, cat, q.pins[0] if q.pins else (q.toolkit or toolkit))
    if abi is None:
        return None
    a, b = _offset(text, *decl[:2]), _offset(text, *decl[2:])
    where = _type_span(text, a, b) if 0 <= a < b else None
    if where is None:
        return None
    kind = "safe" if normalizer(cat).abi(abi) == q.target_sig else "unsafe"
    return Fix("CE004", q.line, kind, (Edit(where[0], where[1], abi.pfn + where[2]),), f"type {abi.pfn}")


def _type_span(text: str, a: int, b: int) -> tuple[int, int, str] | None:
    """What to replace with a typedef's name in the declaration or cast text[a:b], and what follows the name
    there: a C cast's parenthesized type, a C++ cast's template argument, a function-pointer declarator from
    its return type to its parameter list (" name" follows), or a single declarator's type name."""
    s = text[a:b]
    if s.startswith("("):
        close = _close(text, a)
        return (*_strip(text, a + 1, close), "") if a < close < b else None
    m = _CPP_CAST.match(s)
    if m is not None:
        return (*_strip(text, a + m.start(1), a + m.end(1)), "")
    if not re.match(r"\s*;", text[b:]):
        return None   # not the declaration's only declarator
    m = _FN_DECL.match(s)
    if m is not None:
        close = _close(text, a + m.end() - 1)
        name = re.search(r"(\w+)\s*\)\s*\($", s[:m.end()])
        if name is None or not a < close < b or not re.fullmatch(r"\s*(?:=.*)?", text[close + 1:b], re.S):
            return None
        return a + m.start("ret"), close + 1, " " + name.group(1)
    m = _NAMED_DECL.fullmatch(s)
    if m is None or m.group("type") in _NOT_TYPES:
        return None
    return a + m.start("type"), a + m.end("type"), ""


def _export_fix(u: Unit, text: str, line: int, col: int, cat: Catalog) -> Fix | None:
    """A library export taken by a name whose ABI is not the pointer's `PFN_cuX_vN` (CE011): the name becomes
    the export of that ABI (`"cuMemAlloc"` -> `"cuMemAlloc_v2"` for a `PFN_cuMemAlloc_v3020`)."""
    for e in u.exports:
        if (e.line, e.col) != (line, col) or e.where:
            continue
        m = re.fullmatch(r"PFN_(\w+?)_v(\d+)(?:_(pt[ds]z?))?", (e.target_type or "").strip())
        if m is None or m.group(1) not in cat:
            return None
        abi = next((a for a in cat.abis(m.group(1)) if a.version == int(m.group(2)) and a.variant == (m.group(3) or "")),
                   None)
        if abi is None or not abi.exported or abi.exported == e.name:
            return None
        start = _offset(text, line, 1)
        end = text.find("\n", start)
        found = [x.start() + start for x in re.finditer(re.escape(f'"{e.name}"'), text[start:end if end >= 0 else None])]
        if len(found) != 1:
            return None
        return Fix("CE011", line, "safe", (Edit(found[0], found[0] + len(e.name) + 2, f'"{abi.exported}"'),),
                   f"export {abi.exported}")
    return None


def _request(at: At) -> Query | None:
    return _query(at.unit, at.line, at.col) if at.unit.lang == "c" else None


def pin(at: At) -> Fix | None:
    """CE001, CE009, CE010: the pin becomes the ABI the pointer's type names (safe), the ABI an untyped pin
    between ABIs binds (safe), or the ABI the targeted toolkit binds (unsafe)."""
    q = _request(at)
    return _pin_fix(q, at) if q is not None else None


def pin_or_type(at: At) -> Fix | None:
    """CE002: the pin becomes the pointer's own ABI (safe); where the pointer's hand-written type is no ABI's
    function type, its type becomes the `PFN_cuX_vN` of the ABI the pin binds and the pin that ABI's version,
    together (unsafe: the calls through it compile against another type)."""
    q = _request(at)
    if q is None:
        return None
    if q.target_sig is None or q.symbol is None or _typed(q, at.cat, q.symbol) is not None:
        return _pin_fix(q, at)
    return _type_and_pin(q, at)


def _type_and_pin(q: Query, at: At) -> Fix | None:
    """The pointer's declaration (or cast) made the PFN typedef of the ABI its one literal pin binds, and that
    pin the ABI's version: one unsafe fix of two edits."""
    sym, text, cat = q.symbol, at.text, at.cat
    if sym is None or q.target_decl is None or len(set(q.pins)) != 1 or q.api not in _VERSIONED:
        return None
    if not _TYPEDEFS.search(text):
        return None   # the PFN typedefs would not be declared
    abi = bound(q, cat, q.pins[0])
    where = _version_at(q, text)
    if abi is None or where is None or where[2] is not None:
        return None
    a, b = _offset(text, *q.target_decl[:2]), _offset(text, *q.target_decl[2:])
    span_ = _type_span(text, a, b) if 0 <= a < b else None
    if span_ is None or not (span_[1] <= where[0] or where[1] <= span_[0]):
        return None
    edits = [Edit(span_[0], span_[1], abi.pfn + span_[2])]
    if text[where[0]:where[1]].rstrip("uUlL") != str(abi.version):
        edits.append(Edit(where[0], where[1], str(abi.version)))
    return Fix(at.code, q.line, "unsafe", tuple(sorted(edits, key=lambda e: e.start)),
               f"type {abi.pfn} and pin {abi.version}")


def name(at: At) -> Fix | None:
    """CE003: a suffixed name becomes the base name at the ABI the suffix names (with the per-thread flag for
    `_ptds`/`_ptsz`); a case error the one catalog name it spells: safe."""
    q = _request(at)
    return _name_fix(q, at.text, at.cat) if q is not None else None


def flags(at: At) -> Fix | None:
    """CE007: default flags become the one explicit flag the file uses elsewhere: safe."""
    q = _request(at)
    return _flags_fix(q, at.unit, at.text) if q is not None else None


def pointer_type(at: At) -> Fix | None:
    """CE004: `decltype(&cuX)`, or a hand-written type this file spells, becomes the `PFN_cuX_vN` of the ABI the
    request binds: safe where the function type stays, unsafe otherwise."""
    q = _request(at)
    if q is None:
        return None
    return _decltype_fix(q, at.text, at.cat) or _handwritten_fix(q, at.text, at.cat, at.toolkit)


def export_name(at: At) -> Fix | None:
    """CE011: the export's name becomes the export of the ABI the pointer's `PFN_cuX_vN` names: safe."""
    return _export_fix(at.unit, at.text, at.line, at.col, at.cat) if at.unit.lang == "c" else None
