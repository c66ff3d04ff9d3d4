"""Manifests: one TOML format for `cuentry check`, Python tables and code generation.

```toml
[table]
name = "acme"                     # optional; default: the file's stem
stream = "per_thread"             # or "legacy" (required)
required = ["cuMemAlloc@3020", "PFN_cuStreamBeginCapture_v10010_ptsz"]
optional = [
  { symbol = "cuCtxCreate", version = 12050, fallback = "cuCtxCreate@3020" },
  { pfn = "PFN_cuMemAllocAsync_v11020_ptsz", name = "alloc_async", fallback = [
    "cuMemAllocAsync@11020", { symbol = "cuMemAlloc", version = 3020 }] },
]
```

`required`/`optional` may also stand at the top level. An entry is a pin
string (`"symbol@version"`), a typedef name (`"PFN_cuX_vN[_ptds|_ptsz]"`) or
an inline table with `symbol` + `version` or `pfn`, and optionally
`name` (the attribute it is reached by) and `fallback` (one entry or a list:
the chain tried in order, with the same meaning as [cuentry.optional][cuentry.entry.optional]'s
`fallback`). The schema is strict: an unknown key, a value of the wrong type,
a malformed pin, a pin that is not one of the symbol's ABI versions, or a
duplicate name is a [ManifestError][cuentry.errors.ManifestError] at its exact line and column.
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass
from typing import Any, BinaryIO

from .catalog import Abi, Catalog, catalog
from .entry import FALLBACK_CHAIN_LIMIT, RESERVED, Entry, bind_entry, bind_pin, floor_of
from .errors import CuentryError, ManifestError
from .names import DEFAULT, Stream, catalog_stream, parse_pfn_name, parse_stream

__all__ = ["FALLBACK_CHAIN_LIMIT", "FORMAT_HINT", "MAX_BYTES", "Manifest", "load", "loads", "read_limited",
           "read_text"]

MAX_BYTES = 1 << 20  # a manifest lists entry points: 1 MiB is far beyond any real one

_TOP_KEYS = ("table", "required", "optional")
_TABLE_KEYS = ("name", "stream", "required", "optional")
_ENTRY_KEYS = ("symbol", "version", "pfn", "name", "fallback")
_PIN = r"(?P<sym>[A-Za-z_][A-Za-z0-9_]*)@(?P<ver>[0-9]{1,9})"
FORMAT_HINT = ("entries are 'symbol@version' (cuMemAlloc@3020), 'PFN_cuMemAlloc_v3020', or "
               "{ symbol = \"cuMemAlloc\", version = 3020 } with optional name and fallback")

_Where = tuple[str | int, ...]


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: a table name, one stream mode and its entries, each bound once.

    Every [Entry][cuentry.entry.Entry] (and each entry of its fallback chain) carries
    the ABI [Catalog.bind][cuentry.catalog.Catalog.bind] returned for it in this
    manifest's mode while the file was read; a table, `cuentry check` and both
    generators use those entries as they are. A table of the manifest:
    [Table.from_manifest][cuentry.table.Table.from_manifest].
    """

    path: str
    name: str
    stream: Stream
    entries: tuple[Entry, ...]
    cat: Catalog

    def abi(self, e: Entry) -> Abi:
        """The ABI `e`'s pin binds in this manifest's stream mode (bound while reading: not asked again)."""
        return bind_entry(e, self.stream, self.cat).bound_abi  # returns a bound entry as it is

    def min_driver(self) -> int:
        """The deployment floor ([driver_floor][cuentry.entry.driver_floor]): each required entry
        needs one pin of its chain; optional entries never raise it (0 when nothing is required)."""
        return floor_of(self.entries)


# --- reading --------------------------------------------------------------------------


def read_text(path: str, *, what: str = "manifest", limit: int = MAX_BYTES) -> str:
    """A small UTF-8 text file: refuses non-regular files (`/dev/zero`, FIFOs), files over `limit`
    bytes and invalid UTF-8; a BOM is dropped.

    Args:
        path: the file's path.
        what: what the file is, for the messages ("manifest").
        limit: the most bytes accepted.

    Returns:
        The text, read as [read_limited][cuentry.manifest.read_limited] reads it.

    Raises:
        ManifestError: the file cannot be opened, is not a regular file, is over `limit` or not UTF-8.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ManifestError(path, f"cannot read the {what}: {exc.strerror or exc}",
                            hint=f"give the path of a TOML {what} (see `cuentry check --help`)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ManifestError(path, f"not a regular file: a {what} is a TOML file",
                                hint="give the path of a TOML file, not a device, FIFO or directory")
        if st.st_size > limit:
            raise _too_big(path, what, limit, st.st_size)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return read_limited(fh, path, what=what, limit=limit)
    finally:
        os.close(fd)


def read_limited(src: BinaryIO, name: str, *, what: str = "manifest", limit: int = MAX_BYTES) -> str:
    """The one reader of text input with a size limit (a file's contents, standard input): at most `limit`
    bytes of UTF-8, read once; a BOM is dropped.

    Args:
        src: the stream, read once (at most `limit` + 1 bytes: a larger input is never read whole).
        name: the name the input is reported under (its path, `<stdin>`).
        what: what the input is, for the messages ("manifest", "source").
        limit: the most bytes accepted.

    Returns:
        The text.

    Raises:
        ManifestError: over `limit` (the message names the limit and the fix), or not UTF-8 (at its line
            and column).
    """
    raw = bytes(src.read(limit + 1))
    if len(raw) > limit:
        raise _too_big(name, what, limit)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[:exc.start].decode("utf-8", "replace")
        line, col = _position(before, len(before))
        raise ManifestError(name, f"the {what} is not UTF-8 (byte 0x{raw[exc.start]:02x})", line=line, column=col,
                            hint=f"save the {what} as UTF-8") from None
    return text[1:] if text.startswith("\ufeff") else text


def _too_big(name: str, what: str, limit: int, size: int | None = None) -> ManifestError:
    """The one refusal of an input over its limit, for a file's size and for what a stream held."""
    whole = limit >= 1 << 20 and not limit % (1 << 20)
    mib = f"{limit >> 20} MiB" if whole else f"{limit} bytes"
    got = f"{size} bytes, " if size is not None else ""
    exact = f" (the limit is {limit} bytes)" if whole else ", the limit"
    return ManifestError(name, f"the {what} is {got}over {mib}{exact}",
                         hint=f"give a {what} of at most {mib}: split it, or check that this is the right input")


def load(path: str | os.PathLike[str], *, cat: Catalog | None = None) -> Manifest:
    """Read and validate a manifest file (see the module doc for the format)."""
    p = os.fspath(path)
    return loads(read_text(p), p, cat=cat)


def loads(text: str, path: str = "<string>", *, cat: Catalog | None = None) -> Manifest:
    """Validate manifest text; errors are [ManifestError][cuentry.errors.ManifestError] with line and column."""
    if text.startswith("\ufeff"):
        text = text[1:]
    data = _parse_toml(text, path)
    positions = _Positions.scan(text)
    return _Validator(path, text, positions, catalog() if cat is None else cat).manifest(data)


def _parse_toml(text: str, path: str) -> dict[str, Any]:
    import re

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ManifestError(path, "nested too deeply to be a manifest", line=1, column=1, hint=FORMAT_HINT) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        detail = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        if m:
            raise ManifestError(path, f"invalid TOML: {detail}", line=int(m.group(1)), column=int(m.group(2))) from None
        lines = text.splitlines() or [""]
        raise ManifestError(path, f"invalid TOML: {detail} (at the end of the file)", line=len(lines),
                            column=len(lines[-1]) + 1) from None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# --- positions --------------------------------------------------------------------------


class _Positions:
    """Where each key and value of a TOML document starts (tomllib does not say).

    A scanner for what tomllib already accepted: it walks headers, dotted keys,
    arrays and inline tables with an explicit stack (no recursion, so deep
    nesting costs nothing) and records `path -> (line, column)` for values and
    `path + ("=",) -> (line, column)` for keys.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.where: dict[_Where, tuple[int, int]] = {}
        self._aot: dict[_Where, int] = {}

    @classmethod
    def scan(cls, text: str) -> _Positions:
        self = cls(text)
        try:
            self._scan()
        except (IndexError, ValueError):
            pass  # positions are a courtesy: tomllib has already judged the text
        return self

    def at(self, path: _Where, *, key: bool = False) -> tuple[int | None, int | None]:
        probe = path + ("=",) if key else path
        while probe:
            got = self.where.get(probe)
            if got is not None:
                return got
            probe = probe[:-1]
        return None, None

    def _mark(self, path: _Where, i: int) -> None:
        self.where.setdefault(path, _position(self.text, i))

    def _mark_key(self, path: _Where, i: int, base: int = 0, *, header: bool = False) -> None:
        """A key starts at `i`; a dotted key's prefixes (and a header's table) are tables that start there too."""
        for n in range(base + 1, len(path) + 1):
            self._mark(path[:n] + ("=",), i)
            if n < len(path) or header:
                self._mark(path[:n], i)

    def _skip_ws(self, i: int, newlines: bool) -> int:
        t = self.text
        while i < len(t):
            ch = t[i]
            if ch in " \t\r" or (newlines and ch == "\n"):
                i += 1
            elif ch == "#":
                while i < len(t) and t[i] != "\n":
                    i += 1
            else:
                break
        return i

    def _string_end(self, i: int) -> int:
        t = self.text
        q = t[i]
        if t.startswith(q * 3, i):
            end = t.index(q * 3, i + 3)
            while t.startswith(q, end + 3):
                end += 1
            return end + 3
        j = i + 1
        while t[j] != q:
            j += 2 if (q == '"' and t[j] == "\\") else 1
        return j + 1

    def _key(self, i: int) -> tuple[list[str], int]:
        t = self.text
        parts: list[str] = []
        while True:
            i = self._skip_ws(i, False)
            if t[i] in "\"'":
                end = self._string_end(i)
                parts.append(tomllib.loads(f"k = {t[i:end]}")["k"])
                i = end
            else:
                j = i
                while j < len(t) and (t[j].isalnum() or t[j] in "_-"):
                    j += 1
                parts.append(t[i:j])
                i = j
            i = self._skip_ws(i, False)
            if i < len(t) and t[i] == ".":
                i += 1
                continue
            return parts, i

    def _scan(self) -> None:
        t = self.text
        base: _Where = ()
        i = 0
        while True:
            i = self._skip_ws(i, True)
            if i >= len(t):
                return
            if t[i] == "[":
                start = i
                aot = t.startswith("[[", i)
                parts, i = self._key(i + (2 if aot else 1))
                i += 2 if aot else 1
                base = tuple(parts)
                self._mark_key(base, start, header=True)
                if aot:
                    n = self._aot.get(base, -1) + 1
                    self._aot[base] = n
                    base = base + (n,)
                continue
            start = i
            parts, i = self._key(i)
            path = base + tuple(parts)
            self._mark_key(path, start, len(base))
            i = self._value(path, self._skip_ws(i + 1, False))

    def _value(self, path: _Where, i: int) -> int:
        """Scan one value starting at `i` (arrays and inline tables iteratively); return the end."""
        t = self.text
        stack: list[list[Any]] = []  # frames: [kind, path, next index]
        while True:
            self._mark(path, i)
            ch = t[i]
            if ch in "\"'":
                i = self._string_end(i)
            elif ch == "[":
                stack.append(["a", path, 0])
                i += 1
            elif ch == "{":
                stack.append(["t", path, 0])
                i += 1
            else:
                while i < len(t) and t[i] not in ",]}\n#":
                    i += 1
            # close finished containers, then find where the next value starts
            while True:
                if not stack:
                    return i
                frame = stack[-1]
                i = self._skip_ws(i, frame[0] == "a")
                if t[i] == ",":
                    i = self._skip_ws(i + 1, frame[0] == "a")
                if t[i] in "]}":
                    stack.pop()
                    i += 1
                    continue
                if frame[0] == "a":
                    path = frame[1] + (frame[2],)
                    frame[2] += 1
                else:
                    start = i
                    parts, i = self._key(i)
                    path = frame[1] + tuple(parts)
                    self._mark_key(path, start, len(frame[1]))
                    i = self._skip_ws(i + 1, False)
                break


# --- validation ---------------------------------------------------------------------------


class _Validator:
    """Checks parsed TOML against the manifest schema and the catalog, with positions."""

    def __init__(self, path: str, text: str, positions: _Positions, cat: Catalog) -> None:
        self.path = path
        self.text = text
        self.pos = positions
        self.cat = cat
        self.stream: Stream = "legacy"

    def error(self, where: _Where, detail: str, *, key: bool = False, hint: str = "") -> ManifestError:
        line, col = self.pos.at(where, key=key)
        return ManifestError(self.path, detail, line=line, column=col, hint=hint or FORMAT_HINT)

    def manifest(self, data: dict[str, Any]) -> Manifest:
        if not data:
            raise ManifestError(self.path, "the manifest is empty", line=1, column=1,
                                hint="add a [table] with stream = \"legacy\" or \"per_thread\" and required/optional entries")
        self._keys(data, (), _TOP_KEYS, "top-level keys: table, required, optional")
        table = data.get("table", {})
        if not isinstance(table, dict):
            raise self.error(("table",), "[table] must be a table", hint="write [table] on a line of its own")
        self._keys(table, ("table",), _TABLE_KEYS, "[table] takes name, stream, required, optional")
        name = table.get("name", os.path.splitext(os.path.basename(self.path))[0] or "manifest")
        if not isinstance(name, str) or not name.strip():
            raise self.error(("table", "name"), f"name must be a non-empty string, got {_show(name)}",
                             hint="e.g. name = \"mylib\" (the default is the file's name)")
        self.stream = self._stream(table)
        specs: list[tuple[Entry, _Where]] = []
        for kind in ("required", "optional"):
            specs.extend(self._list(table, data, kind))
        if not specs:
            raise self.error(("table",), "the manifest lists no entries",
                             hint="add required = [\"cuMemAlloc@3020\", ...] or optional = [...]")
        self._no_duplicates(specs)
        return Manifest(self.path, name, self.stream, tuple(s for s, _ in specs), self.cat)

    def _keys(self, obj: dict[str, Any], at: _Where, allowed: tuple[str, ...], hint: str) -> None:
        for k in obj:
            if k not in allowed:
                raise self.error(at + (k,), f"unknown key {k!r}", key=True, hint=hint)

    def _stream(self, table: dict[str, Any]) -> Stream:
        raw = table.get("stream")
        if raw is None:
            raise self.error(("table",), "no stream mode: add `stream = \"legacy\"` or `\"per_thread\"` under [table]",
                             hint="a manifest, like a table, pins one stream mode")
        try:
            mode = parse_stream(raw)
        except CuentryError as exc:
            raise self.error(("table", "stream"), f"stream: {exc.message}", hint=exc.hint) from None
        if mode == DEFAULT:
            raise self.error(("table", "stream"), "stream mode 'default' is not allowed in a manifest",
                             hint="a library pins its mode: \"legacy\" or \"per_thread\"")
        return catalog_stream(mode)

    def _list(self, table: dict[str, Any], data: dict[str, Any], kind: str) -> list[tuple[Entry, _Where]]:
        if kind in table and kind in data:
            raise self.error((kind,), f"{kind} is given twice (top level and in [table])", key=True)
        at: _Where = ("table", kind) if kind in table else (kind,)
        items = table.get(kind, data.get(kind, []))
        if not isinstance(items, list):
            raise self.error(at, f"{kind} must be an array of entries, got {_show(items)}")
        return [(self._entry(it, at + (i,), kind == "required", 0), at + (i,)) for i, it in enumerate(items)]

    def _entry(self, it: object, at: _Where, required: bool, depth: int) -> Entry:
        line, col = self.pos.at(at)
        if isinstance(it, str):
            symbol, version, variant = self._pin_text(it, at)
            return self._bound(Entry(symbol, version, required, None, None, variant, line=line or 0, column=col or 0), at)
        if isinstance(it, dict):
            return self._entry_table(it, at, required, depth, line or 0, col or 0)
        raise self.error(at, f"an entry is a string or an inline table, got {_show(it)}")

    def _entry_table(self, it: dict[str, Any], at: _Where, required: bool, depth: int, line: int, col: int) -> Entry:
        self._keys(it, at, _ENTRY_KEYS, "entry keys: symbol, version, pfn, name, fallback")
        name = it.get("name")
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise self.error(at + ("name",), f"name must be a Python identifier string, got {_show(name)}")
        if "pfn" in it:
            for k in ("symbol", "version"):
                if k in it:
                    raise self.error(at + (k,), f"give either pfn or symbol + version, not both ({k} here)", key=True)
            if not isinstance(it["pfn"], str):
                raise self.error(at + ("pfn",), f"pfn must be a string, got {_show(it['pfn'])}")
            symbol, version, variant = self._pfn(it["pfn"], at + ("pfn",))
        else:
            symbol, version, variant = self._symbol_version(it, at), self._version(it, at), None
        entry = self._bound(Entry(symbol, version, required, None, name, variant, line=line, column=col), at)
        if "fallback" not in it:
            return entry
        tail: Entry | None = None
        for fb in reversed(self._fallbacks(it["fallback"], at + ("fallback",), depth)):
            tail = fb.replace(fallback=tail)
        return entry.replace(fallback=tail)

    def _symbol_version(self, it: dict[str, Any], at: _Where) -> str:
        sym = it.get("symbol")
        if sym is None:
            raise self.error(at, "the entry needs symbol and version (or pfn)")
        if not isinstance(sym, str):
            raise self.error(at + ("symbol",), f"symbol must be a string, got {_show(sym)}")
        return sym

    def _version(self, it: dict[str, Any], at: _Where) -> int:
        if "version" not in it:
            raise self.error(at, f"{it.get('symbol')!r}: no version",
                             hint="pin one of the symbol's ABI versions (the number in PFN_cuX_vNNNNN)")
        v = it["version"]
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(at + ("version",), f"version must be an integer ABI version, got {_show(v)}",
                             hint="e.g. version = 3020 (the number in PFN_cuMemAlloc_v3020)")
        return v

    def _fallbacks(self, raw: object, at: _Where, depth: int) -> tuple[Entry, ...]:
        items = raw if isinstance(raw, list) else [raw]
        if depth >= 1 or len(items) > FALLBACK_CHAIN_LIMIT:
            raise self.error(at, "a fallback chain is one flat list of entries (at most "
                                 f"{FALLBACK_CHAIN_LIMIT}), tried in order",
                             hint="write fallback = [\"cuX@N\", \"cuX@M\"] instead of nesting fallbacks")
        listed = isinstance(raw, list)
        return tuple(self._entry(x, at + (i,) if listed else at, False, depth + 1) for i, x in enumerate(items))

    def _pin_text(self, text: str, at: _Where) -> tuple[str, int, str | None]:
        import re

        if text.startswith("PFN_"):
            return self._pfn(text, at)
        if "@" not in text:
            raise self.error(at, f"entry {text!r} has no version",
                             hint="write 'cuMemAlloc@3020', 'PFN_cuMemAlloc_v3020' or {symbol=..., version=...}")
        m = re.fullmatch(_PIN, text)
        if m is None:
            raise self.error(at, f"{text!r} is not a pin", hint="write 'symbol@version', e.g. 'cuMemAlloc@3020'")
        return m.group("sym"), int(m.group("ver")), None

    def _pfn(self, text: str, at: _Where) -> tuple[str, int, str]:
        parsed = parse_pfn_name(text)
        if parsed is None or text != text.strip():
            raise self.error(at, f"{text!r} is not a PFN typedef name",
                             hint="write it as PFN_<symbol>_v<version>[_ptds|_ptsz]")
        return parsed

    def _bound(self, e: Entry, at: _Where) -> Entry:
        """`e` with the ABI its pin binds in the manifest's mode: the one bind of this pin."""
        try:
            abi = bind_pin(self.cat, e.symbol, e.version, self.stream, e.variant)
        except CuentryError as exc:
            raise self.error(at, f"entry {e.describe()!r}: {exc.message}", hint=exc.hint) from None
        return e.replace(abi=abi, stream=self.stream, cat=self.cat)

    def _no_duplicates(self, specs: list[tuple[Entry, _Where]]) -> None:
        seen: set[str] = set()
        for spec, at in specs:
            if spec.attr in seen:
                raise self.error(at, f"{spec.attr} is listed twice", hint="give one of them name = \"...\"")
            if spec.attr in RESERVED or spec.attr.startswith("_"):
                raise self.error(at, f"{spec.attr!r} clashes with a Table attribute", hint="give it name = \"...\"")
            seen.add(spec.attr)


def _show(value: object) -> str:
    """A value as the manifest wrote it, kept short."""
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} ({text[:40]}{'...' if len(text) > 40 else ''})"
