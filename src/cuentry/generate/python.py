"""`cuentry generate python`: a module with a typed [cuentry.Table][cuentry.table.Table] subclass for a manifest.

The generated module declares the manifest's table at import (declaring is
cheap and never loads the driver: tables resolve on first use) and types each
entry with a `typing.Protocol` whose `__call__` has the catalog's
parameter names and types, so editors complete `acme.cuCtxCreate(` with
`pctx, ctxCreateParams, flags, dev` and mypy checks arity and argument kinds.

Entries are typed positional-only (the typed callables also take the header's
names as keywords, docs/calls.md). Optional entries are typed
`<Protocol> | Unavailable`; an entry whose fallback chain binds ABIs of
different function types is typed as the union of them, and the class has one
accessor per ABI of the chain (`cuCtxCreate_as_v11040()`), typed by that ABI
alone or `None`, which mypy narrows with `is not None`.
"""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from ..calls import contract
from ..errors import TableDeclarationError
from .model import Plan, Slot, plan

if TYPE_CHECKING:
    from ..catalog import Abi
    from ..entry import Entry
    from ..manifest import Manifest

__all__ = ["accessor_name", "class_name", "generate_python", "protocol_name", "render"]


_ANNOTATIONS = {contract.INT: "int", contract.DEVPTR: "DevicePointer", contract.HANDLE: "Handle", contract.FLOAT: "float",
                contract.CSTR: "String", contract.STRUCT: "Struct", contract.INBUF: "Pointer",
                contract.OUTBUF: "Pointer", contract.ARRAY: "Pointer", contract.STRUCTPTR: "Pointer",
                contract.FUNCPTR: "Pointer"}


def generate_python(manifest: Manifest) -> str:
    """The module text for `manifest`'s table."""
    return render(plan(manifest))


def class_name(name: str) -> str:
    """`acme` -> `AcmeTable`, `my_lib` -> `MyLibTable`."""
    parts = [w for w in "".join(c if c.isalnum() else "_" for c in name).split("_") if w]
    base = "".join(w[:1].upper() + w[1:] for w in parts) or "Generated"
    return ("T" + base if base[0].isdigit() else base) + "Table"


def _param_name(name: str, i: int, seen: set[str]) -> str:
    n = name if name.isidentifier() else f"arg{i}"
    if keyword.iskeyword(n) or n in ("self",):
        n += "_"
    while n in seen:
        n += "_"
    seen.add(n)
    return n


def protocol_name(abi: Abi) -> str:
    return f"_{abi.pfn[4:]}"


def _protocol(abi: Abi) -> list[str]:
    from ..catalog import catalog

    hints = contract.Hints(catalog().ffi_hints)
    seen: set[str] = set()
    params = [f"{_param_name(p.name, i, seen)}: {_ANNOTATIONS[contract.classify(i, p, hints).kind]}"
              for i, p in enumerate(abi.signature.params)]
    args = ", ".join(["self", *params, "/"]) if params else "self"
    decl = abi.c_typedef().replace('"', "'")
    return [
        f"class {protocol_name(abi)}(Protocol):",
        f'    """{abi.pfn} (exported as {abi.exported or "-"}).',
        "",
        f"    {decl}",
        '    """',
        "",
        "    abi: Abi",
        "    address: int",
        "",
        f"    def __call__({args}) -> int: ...",
        f"    def checked({args}) -> None: ...",
        "",
        "",
    ]


def _entry_expr(e: Entry) -> str:
    """The declaration of a bound entry, as required()/optional() accept it (a required entry's fallback
    chain included)."""
    fn = "required" if e.required else "optional"
    name = f", name={e.name!r}" if e.name else ""
    chain = None
    for x in reversed(e.chain[1:]):
        inner = f", fallback={chain}" if chain else ""
        chain = f"optional({x.symbol!r}, {x.version}{inner})"
    fb = f", fallback={chain}" if chain else ""
    return f"{fn}({e.symbol!r}, {e.version}{name}{fb})"


def accessor_name(s: Slot, abi: Abi) -> str:
    """The name of the narrowing accessor for one ABI of an entry's chain: `cuCtxCreate_as_v11040`."""
    if abi.symbol == s.pins[0].symbol:
        return f"{s.attr}_as_v{abi.version}"
    return f"{s.attr}_as_{abi.symbol}_v{abi.version}"


def _accessors(s: Slot) -> list[str]:
    """For an entry whose chain binds several function types: one accessor per ABI, narrowable."""
    abis = list(dict.fromkeys(x.abi for x in s.pins))
    if len({protocol_name(a) for a in abis}) < 2:
        return []
    out: list[str] = []
    for abi in abis:
        proto = protocol_name(abi)
        out += [
            "",
            f"    def {accessor_name(s, abi)}(self) -> {proto} | None:",
            f'        """{s.attr} typed as {abi.pfn} when that ABI resolved, else None."""',
            f"        fn: Any = self.{s.attr}",
            f"        if isinstance(fn, Unavailable) or fn.abi.pfn != {abi.pfn!r}:",
            "            return None",
            f"        return cast({proto!r}, fn)",
        ]
    return out


def _annotation(s: Slot) -> str:
    kinds = list(dict.fromkeys(protocol_name(x.abi) for x in s.pins))
    if not s.required:
        kinds.append("Unavailable")
    return " | ".join(kinds)


def render(p: Plan, manifest: Manifest | None = None) -> str:
    """The module text for a plan (`manifest` is accepted for older callers; the plan holds its entries)."""
    for s in p.slots:
        if keyword.iskeyword(s.attr) or keyword.issoftkeyword(s.attr):
            raise TableDeclarationError(f"table {p.name!r}: entry name {s.attr!r} is a Python keyword",
                                        hint=f'give the entry another name = "..." in the manifest (e.g. "{s.attr}_fn")')
    cls = class_name(p.name)
    abis = list(dict.fromkeys(x.abi for x in p.pins))
    attrs = {s.attr for s in p.slots}
    for s in p.slots:
        for abi in dict.fromkeys(x.abi for x in s.pins):
            if accessor_name(s, abi) in attrs:
                raise TableDeclarationError(
                    f"table {p.name!r}: entry name {accessor_name(s, abi)!r} is the accessor of {s.attr}'s "
                    f"{abi.pfn} fallback", hint='give the entry another name = "..." in the manifest')
    out = [
        f'"""Typed cuentry table {_doc_text(repr(p.name))}: generated by `cuentry generate python` from '
        f"{_doc_text(_base(p.source))}.",
        "",
        ("Do not edit; regenerate. Entries (symbol@ABI version, fallbacks after ->), stream mode "
         f"{p.stream.replace('_', '-')}:"),
        "",
        *(f"    {s.attr}: {' -> '.join(x.key for x in s.pins)} ({'required' if s.required else 'optional'})"
          for s in p.slots),
        "",
        f"``{_py_ident(p.name)}`` is declared at import and resolves on first use; ``table(source=...)`` declares",
        "another instance (for example on a given cuentry.Driver).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Protocol, cast",
        "",
        "from cuentry.catalog import Abi",
        "from cuentry.table import Table, Unavailable, optional, required",
        "",
        "Handle = Any   # an int handle, None, or an object with __cuda_stream__ / .ptr / .handle",
        "Pointer = Any  # cuentry.out(...), a writable buffer, cuentry.address(n), or None (docs/calls.md)",
        "DevicePointer = Any  # an int address or a device array (__cuda_array_interface__, CUDA DLPack, "
        "cuda.core Buffer)",
        "String = bytes | str | None",
        "Struct = Any   # a struct value: cuentry.out('T')[0]",
        "",
        f"MIN_DRIVER = {p.min_driver}",
        f"STREAM = {p.stream!r}",
        "",
        "",
    ]
    for abi in abis:
        out += _protocol(abi)
    out.append(f"class {cls}(Table):")
    out.append(f'    """The {_doc_text(repr(p.name))} table with each entry typed by the ABI it binds."""')
    out.append("")
    for s in p.slots:
        out.append(f"    {s.attr}: {_annotation(s)}")
    for s in p.slots:
        out += _accessors(s)
    out += ["", "", f"def table(**kwargs: Any) -> {cls}:",
            f'    """Declare a new {cls} (keyword arguments go to cuentry.Table: source, on_fork)."""',
            f"    return {cls}(", f"        {p.name!r},", "        ["]
    for e in p.entries:
        out.append(f"            {_entry_expr(e)},")
    out += ["        ],", f"        stream={p.stream!r},", "        **kwargs,", "    )", "", "",
            f"{_py_ident(p.name)}: {cls} = table()", ""]
    return "\n".join(out)


def _py_ident(name: str) -> str:
    n = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not n or n[0].isdigit() or keyword.iskeyword(n):
        n = "table_" + n
    if n in _MODULE_NAMES:
        n += "_table"
    return n


# Names the generated module defines itself.
_MODULE_NAMES = frozenset({"Any", "Protocol", "cast", "Abi", "Table", "Unavailable", "optional", "required", "Handle",
                           "Pointer", "String", "Struct", "MIN_DRIVER", "STREAM", "table", "annotations"})


def _doc_text(text: str) -> str:
    """Text that is safe inside a triple-quoted docstring."""
    return text.replace("\\", "/").replace('"', "'")


def _base(path: str) -> str:
    import os

    return os.path.basename(path)
