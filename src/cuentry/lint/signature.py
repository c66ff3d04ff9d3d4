"""Function types compared by meaning: a normalizer of C type spellings.

A pointer is right when its canonical function type is the one of the ABI the
request binds, however the source spells it. Both sides are reduced to one
spelling: typedef names of the catalog resolved to their canonical types
(`CUdeviceptr` -> `unsigned long long`, `CUresult` -> `cudaError_enum`),
`struct`/`enum`/`union` tags and calling conventions (`CUDAAPI`,
`__stdcall`) dropped, qualifiers put in one order at each pointer level
(`char const *` is `const char *`), a parameter's top-level `const` and
array-to-pointer decay applied, integer synonyms folded (`unsigned` is
`unsigned int`), and the fixed-width and size types mapped to the integer type
they are on the platform (LP64, or LLP64 on Windows).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..catalog import Abi, Catalog

_DROP = frozenset({"struct", "enum", "union", "class", "CUDAAPI", "__stdcall", "_stdcall", "__cdecl", "__restrict",
                   "restrict", "__restrict__", "volatile_never"})
_QUALS = ("const", "volatile")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|\S")
_ATTR = re.compile(r"__attribute__\s*\(\(.*?\)\)")
_LP64 = {"size_t": "unsigned long", "uint64_t": "unsigned long", "int64_t": "long", "uintptr_t": "unsigned long",
         "intptr_t": "long", "ssize_t": "long", "ptrdiff_t": "long"}
_LLP64 = {"size_t": "unsigned long long", "uint64_t": "unsigned long long", "int64_t": "long long",
          "uintptr_t": "unsigned long long", "intptr_t": "long long", "ptrdiff_t": "long long"}
_FIXED = {"uint32_t": "unsigned int", "int32_t": "int", "uint16_t": "unsigned short", "int16_t": "short",
          "uint8_t": "unsigned char", "int8_t": "signed char", "_Bool": "bool"}
_INTS = {("unsigned",): "unsigned int", ("signed",): "int", ("signed", "int"): "int", ("long", "int"): "long",
         ("unsigned", "long", "int"): "unsigned long", ("long", "long", "int"): "long long",
         ("unsigned", "long", "long", "int"): "unsigned long long", ("short", "int"): "short",
         ("unsigned", "short", "int"): "unsigned short", ("signed", "long"): "long",
         ("signed", "long", "long"): "long long", ("signed", "short"): "short"}


def platform_map(windows: bool | None = None) -> dict[str, str]:
    """The spellings of the size and fixed-width types on the platform (LP64, or LLP64 on Windows)."""
    win = sys.platform == "win32" if windows is None else windows
    return {**_FIXED, **(_LLP64 if win else _LP64)}


class Normalizer:
    """Reduces C type spellings to one canonical text (see the module's docstring)."""

    def __init__(self, typedefs: Mapping[str, Any] | None = None, windows: bool | None = None) -> None:
        self.typedefs = {k: v["canonical"] for k, v in (typedefs or {}).items()
                         if v.get("canonical") not in ("enum", "struct", "union")}
        self.base = platform_map(windows)
        self.enums: frozenset[str] = frozenset()     # the catalog's enum tags (an enum is passed as an int)
        self.structs: frozenset[str] = frozenset()   # its struct tags (by value: passed by layout)

    def type(self, text: str, *, param: bool = True) -> str:
        """One type, canonical; `param` applies a parameter's adjustments (top-level const, decay)."""
        return self._type(_ATTR.sub(" ", text), param, 0)

    def _resolve(self, toks: list[str], depth: int) -> list[str]:
        out: list[str] = []
        for t in toks:
            if t in _DROP:
                continue
            if t in self.typedefs and depth < 16:
                out += self._resolve(_TOKEN.findall(self.typedefs[t]), depth + 1)
            elif t in self.base:
                out += self.base[t].split()
            else:
                out.append(t)
        return out

    def _type(self, text: str, param: bool, depth: int) -> str:
        toks = self._resolve(_TOKEN.findall(text), depth)
        if "(" in toks:
            return self._function(toks, depth)
        text2 = " ".join(toks)
        text2 = re.sub(r"\[[^\]]*\]", "*", text2) if param else text2
        segs = text2.split("*")
        norm = [_segment(s) for s in segs]
        if param and norm:
            norm[-1] = " ".join(t for t in norm[-1].split() if t not in _QUALS)
        head, rest = norm[0], norm[1:]
        return head + "".join(" *" + (f" {r}" if r else "") for r in rest)

    def _function(self, toks: list[str], depth: int) -> str:
        """A function or function-pointer type: the return type, the declarator kind, each parameter."""
        i = toks.index("(")
        ret = self._type(" ".join(toks[:i]), False, depth + 1)
        groups = _paren_groups(toks[i:])
        if len(groups) >= 2 and groups[0] and all(t in ("*", "const") for t in groups[0]):
            return f"{ret} (*)({self._params(groups[1], depth)})"
        return f"{ret} ({self._params(groups[0] if groups else [], depth)})"

    def _params(self, toks: list[str], depth: int) -> str:
        parts: list[list[str]] = []
        cur: list[str] = []
        level = 0
        for t in toks:
            if t == "," and level == 0:
                parts.append(cur)
                cur = []
                continue
            level += (t == "(") - (t == ")")
            cur.append(t)
        if cur:
            parts.append(cur)
        out = [self._type(" ".join(p), True, depth + 1) for p in parts]
        return ", ".join(o for o in out if o != "void" or len(out) > 1)

    def signature(self, returns: str, params: Sequence[str]) -> str:
        """`R (P1, P2)` canonical."""
        ps = [self.type(p) for p in params]
        return f"{self.type(returns, param=False)} ({', '.join(p for p in ps if p != 'void' or len(ps) > 1)})"

    def abi(self, abi: Abi) -> str:
        """The canonical function type of a catalog ABI."""
        return self.signature(abi.signature.returns, [p.canonical for p in abi.signature.params])


def _segment(seg: str) -> str:
    toks = seg.split()
    quals = sorted(t for t in toks if t in _QUALS)
    rest = [t for t in toks if t not in _QUALS]
    key = tuple(rest)
    if key in _INTS:
        rest = _INTS[key].split()
    return " ".join([*quals, *rest])


def _paren_groups(toks: list[str]) -> list[list[str]]:
    """The top-level `( ... )` groups of a token list, without their parentheses."""
    groups: list[list[str]] = []
    level = 0
    for t in toks:
        if t == "(":
            level += 1
            if level == 1:
                groups.append([])
                continue
        elif t == ")":
            level -= 1
            if level == 0:
                continue
        if level >= 1:
            groups[-1].append(t)
    return groups


def normalizer(cat: Catalog) -> Normalizer:
    """The normalizer with `cat`'s typedefs (one per catalog, kept on it: Catalog.fact)."""
    return cat.fact("lint.signature.normalizer", _make)


def _make(cat: Catalog) -> Normalizer:
    n = Normalizer(cat.types.get("typedefs", {}))
    typedefs = cat.types.get("typedefs", {})
    # an enum is its tag, or a typedef of an anonymous enum (`typedef enum {...} CUdevResourceType`)
    n.enums = frozenset(cat.types.get("enums", {})) | {k for k, v in typedefs.items() if v.get("canonical") == "enum"}
    n.structs = frozenset(cat.types.get("aggregates", {}))
    return n


_WIDTHS = {"char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "short": 2, "unsigned short": 2, "int": 4,
           "unsigned int": 4, "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8}
_FLOATS = {"float": "float", "double": "double"}


def passed_alike(n: Normalizer, a: str, b: str) -> bool:
    """Two normalized signatures whose results and parameters are passed the same way (LP64: x86-64 and aarch64):
    by value integers and enums of one width (`int` for `CUresult`), a pointer for a 64-bit integer (`void *` for a
    `CUdeviceptr`) or for another pointer (a handle), and a pointer for a pointer whose pointee is written alike
    (`void **` for `CUstream *` or `CUdeviceptr *`). Not alike: integers of two widths (`unsigned int` for a
    64-bit `CUdeviceptr` truncates it; `unsigned int *` for `size_t *` has the callee write 4 bytes of an 8-byte
    object), two structs of other layouts. A call through either type is
    the same call; what differs is how the type is spelled, not the ABI."""
    pa, pb = _split(a), _split(b)
    if pa is None or pb is None or len(pa[1]) != len(pb[1]):
        return False
    return _alike(n, pa[0], pb[0], 0) and all(_alike(n, x, y, 0) for x, y in zip(pa[1], pb[1], strict=True))


def _alike(n: Normalizer, x: str, y: str, depth: int) -> bool:
    """Whether two types are passed (depth 0: a parameter or the result, by value) or written (depth 1: what a
    pointer parameter points to) alike."""
    if x == y:
        return True
    cx, cy = _class(n, x), _class(n, y)
    if cx[0] == "ptr" and cy[0] == "ptr":
        if depth >= 1:      # a pointer to a pointer: what is written is a pointer, whatever it points to
            return True
        px, py = x[:-1].strip(), y[:-1].strip()
        if _class(n, px)[0] in ("void", "opaque") or _class(n, py)[0] in ("void", "opaque"):
            return True
        return _alike(n, px, py, depth + 1)
    if {cx, cy} == {("ptr",), ("int", 8)}:
        return True      # 8 bytes passed or written either way (`void *` for a `CUdeviceptr`, `void **` for its pointer)
    return cx == cy and cx[0] not in ("opaque", "struct")   # integers and enums of one width; never another width


def _class(n: Normalizer, t: str) -> tuple[Any, ...]:
    """How a normalized type is passed: ("int", width), ("float"/"double",), ("ptr",), ("void",), ("struct", tag),
    or ("opaque",) for a name the catalog does not describe."""
    t = re.sub(r"\b(?:const|volatile)\b", "", t).strip()
    t = re.sub(r"\s+", " ", t)
    if t.endswith("*") or "(*" in t:
        return ("ptr",)
    if t == "void":
        return ("void",)
    if t in _WIDTHS:
        return ("int", _WIDTHS[t])
    if t in _FLOATS:
        return (_FLOATS[t],)
    if t in n.enums:
        return ("int", 4)
    if t in n.structs:
        return ("struct", t)
    return ("opaque",)


__all__ = ["Normalizer", "normalizer", "passed_alike", "platform_map", "pointee_only", "sign_only", "signless"]


_SIGNED = re.compile(r"\b(?:un)?signed\s+(?=(?:char|short|int|long)\b)")
_BARE = re.compile(r"\b(?:un)?signed\b")


def signless(x: str) -> str:
    """A normalized type with integer signedness dropped (`unsigned int` -> `int`)."""
    return _BARE.sub("int", _SIGNED.sub("", x))


def pointee_only(a: str, b: str) -> bool:
    """Two normalized signatures that differ only in what pointer parameters point to (`int *` for `void *`, a
    project's alias of a layout-compatible struct): passed alike (a pointer), the same call when the pointees
    agree in layout; a rule broken, not a wrong ABI."""
    pa, pb = _split(a), _split(b)
    if a == b or pa is None or pb is None or pa[0] != pb[0] or len(pa[1]) != len(pb[1]):
        return False
    return all(x == y or _alike_pointers(x, y) for x, y in zip(pa[1], pb[1], strict=True))


def _alike_pointers(x: str, y: str) -> bool:
    """Pointers whose pointees differ but not in a way the callee writes wrong: one is `void *`, or both point
    to structs (a scalar of another size, `unsigned int *` for `unsigned long long *`, is a wrong ABI)."""
    if not (x.endswith("*") and y.endswith("*")):
        return False
    px, py = (re.sub(r"\bconst\b", "", t[:-1]).strip() for t in (x, y))
    if "void" in (px, py):
        return True
    return bool(_STRUCT.fullmatch(px) and _STRUCT.fullmatch(py))


_STRUCT = re.compile(r"\w+_st")


def _split(sig: str) -> tuple[str, list[str]] | None:
    """A normalized signature `ret (p1, p2)` as (ret, [p1, p2]) (commas inside nested parentheses kept)."""
    i = sig.find(" (")
    if i < 0 or not sig.endswith(")"):
        return None
    params: list[str] = [""]
    level = 0
    for ch in sig[i + 2:-1]:
        if ch == "(":
            level += 1
        elif ch == ")":
            level -= 1
        if ch == "," and level == 0:
            params.append("")
            continue
        params[-1] += ch
    return sig[:i], [p.strip() for p in params if p.strip()]


def sign_only(a: str, b: str) -> bool:
    """Two normalized signatures that differ only in the signedness of integers of one size (`int` for
    `unsigned int`): passed alike by every calling convention, so a rule broken, not a wrong ABI."""
    return a != b and signless(a) == signless(b)
