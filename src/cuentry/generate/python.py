"""`cuentry generate python`: a module with a typed [cuentry.Table][cuentry.table.Table] subclass for a manifest.

The generated module imports, at its own import, every module its table's first use needs (cuentry.table and
what it imports), so that first use imports nothing: a fork in another thread never catches an import half done
(tests/test_generate_python_fork.py). The module's table is declared on first use of `<name>` (module
`__getattr__`; declaring never loads the driver: tables resolve on first use). It types each
entry with a `typing.Protocol` whose `__call__` has the catalog's
parameter names and types, so editors complete `acme.cuCtxCreate(` with
`pctx, ctxCreateParams, flags, dev` and mypy checks arity and argument kinds.

Entries are typed positional-only (the typed callables also take the header's
names as keywords, docs/calls.md). Optional entries are typed
`<Protocol> | Unavailable`; an entry whose fallback chain binds ABIs of
different function types is typed as the union of them, and the class has one
accessor per ABI of the chain (`cuCtxCreate_as_v11040()`), typed by that ABI
alone or `None`, which mypy narrows with `is not None`.

Parameters are typed as the call layer accepts them: a device pointer as `DevicePointer` (an int, a
cuda.bindings CUdeviceptr, a CUDA array (`__cuda_array_interface__`), a `__dlpack__` object or a
cuda.core Buffer), a stream as `Stream` (an int handle, None, a `__cuda_stream__` object, a cuda.bindings
CUstream, a torch/cupy stream), another handle as `Handle` (an int, None or a cuda.bindings handle).
`available()`/`reason()` answer after a required entry failed (as the C header's `available()` does).
"""

from __future__ import annotations

import keyword
from typing import TYPE_CHECKING

from .. import cfacts
from ..errors import TableDeclarationError
from .model import Plan, Slot, plan

if TYPE_CHECKING:
    from ..catalog import Abi
    from ..entry import Entry
    from ..manifest import Manifest

__all__ = ["accessor_name", "class_name", "generate_python", "protocol_name", "render"]


_ANNOTATIONS = {cfacts.INT: "int", cfacts.DEVPTR: "DevicePointer", cfacts.HANDLE: "Handle", cfacts.FLOAT: "float",
                cfacts.CSTR: "String", cfacts.STRUCT: "Struct", cfacts.INBUF: "Pointer",
                cfacts.OUTBUF: "Pointer", cfacts.ARRAY: "Pointer", cfacts.STRUCTPTR: "Pointer",
                cfacts.FUNCPTR: "Pointer"}


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


def _param_annotation(sh: cfacts.Shape) -> str:
    if sh.kind == cfacts.HANDLE and sh.tag == "CUstream_st":
        return "Stream"
    return _ANNOTATIONS[sh.kind]


def protocol_name(abi: Abi) -> str:
    return f"_{abi.pfn[4:]}"


def _protocol(abi: Abi) -> list[str]:
    from ..catalog import catalog

    hints = cfacts.Hints(catalog().ffi_hints)
    seen: set[str] = set()
    params = [f"{_param_name(p.name, i, seen)}: {_param_annotation(cfacts.shape(p.canonical, p.type, hints))}"
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
            f"        got: {proto} = fn",
            "        return got",
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
    ident = _py_ident(p.name)
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
        f"``{ident}`` is declared on first use and resolves on first call; ``table(source=...)`` declares another",
        "instance (for example on a given cuentry.Driver). Importing this module imports what the table's first",
        "use needs, so that first use imports nothing (a fork in another thread never catches an import half done).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from cuentry.diagnostics import Classification, Diagnostic",
        "from cuentry.errors import TableResolutionError",
        "from cuentry.table import Table, Unavailable, optional, required",
        "",
        "TYPE_CHECKING = False",
        "if TYPE_CHECKING:",
        *_indent(_TYPES.splitlines()),
    ]
    for abi in abis:
        out += _indent(_protocol(abi))
    out += ["", *_class_body(p, cls), "", "",
            f"MIN_DRIVER = {p.min_driver}", f"STREAM = {p.stream!r}", "", "",
            f"def table(**kwargs: Any) -> {cls}:",
            f'    """Declare a new {cls} (keyword arguments go to cuentry.Table: source, on_fork)."""',
            f"    return {cls}(", f"        {p.name!r},", "        ["]
    for e in p.entries:
        out.append(f"            {_entry_expr(e)},")
    out += ["        ],", f"        stream={p.stream!r},", "        **kwargs,", "    )", "", "",
            "if TYPE_CHECKING:",
            f"    {ident}: {cls}", "", "",
            "def __getattr__(name: str) -> Any:",
            f'    """``{ident}``, declared on first use."""',
            f"    if name == {ident!r}:",
            f"        return globals().setdefault({ident!r}, table())",
            '    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")', ""]
    return "\n".join(out)


# What the call layer accepts, as types (docs/calls.md): only type checkers read them.
_TYPES = """import sys
from typing import Any, Protocol, SupportsInt

if sys.version_info >= (3, 12):
    from collections.abc import Buffer
else:
    from typing_extensions import Buffer

from cuentry.calls import Address, Out
from cuentry.catalog import Abi

class _CudaArray(Protocol):
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...

class _DLPack(Protocol):
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...

class _DeviceBuffer(Protocol):  # a cuda.core Buffer: its .handle and .size
    @property
    def handle(self) -> Any: ...
    @property
    def size(self) -> int: ...

class _CudaStream(Protocol):
    def __cuda_stream__(self) -> tuple[int, int]: ...

class _TorchStream(Protocol):
    @property
    def cuda_stream(self) -> int: ...

class _CupyStream(Protocol):
    @property
    def ptr(self) -> int: ...

# An int, a cuda.bindings CUdeviceptr (int()), a CUDA array, a __dlpack__ object or a cuda.core Buffer.
DevicePointer = int | SupportsInt | _CudaArray | _DLPack | _DeviceBuffer
# An int handle, None (NULL) or a cuda.bindings handle object (int() gives the handle).
Handle = int | SupportsInt | None
# A stream: a Handle, an object with __cuda_stream__, or a torch/cupy stream.
Stream = int | SupportsInt | _CudaStream | _TorchStream | _CupyStream | None
# A pointer: a cuentry.out(...), a buffer (bytes, bytearray, array, numpy, a ctypes object or ctypes.pointer(x),
# a CFUNCTYPE callback), cuentry.address(n) or None (docs/calls.md; ctypes.byref(x) is taken at run time too);
# never an int or a str.
Pointer = Out | Address | Buffer | None
String = bytes | str | None
Struct = Any   # a struct value: cuentry.out('T')[0]

"""

# available()/reason() answering after a required entry failed (resolve() raises then; report() does not).
_ANSWERS = """
def available(self, attr: str) -> bool:
    \"\"\"True when the entry resolved itself or through a fallback (an answer after a required entry failed).\"\"\"
    try:
        return super().available(attr)
    except TableResolutionError:
        return self._row(attr)["status"] in ("resolved", "fallback")

def reason(self, attr: str) -> Diagnostic | None:
    \"\"\"Why the entry itself did not resolve, None when it did (an answer after a required entry failed).\"\"\"
    try:
        return super().reason(attr)
    except TableResolutionError:
        row = self._row(attr)
        if row["status"] == "resolved" or not row["attempts"]:
            return None
        a = row["attempts"][0]
        return Diagnostic(a["symbol"], a["version"], a["flags"], a["stream"], a["access"], a["driver_version"],
                          a["library"], a["result"], a["result_name"], a["query"], a["query_emulated"],
                          int(a["address"], 16), Classification(a["classification"]), a["hint"], a["abi"],
                          a["exported"], tuple(a["suggestions"]))

def _row(self, attr: str) -> dict[str, Any]:
    for row in self.report()["entries"]:
        if row["name"] == attr:
            return row  # type: ignore[no-any-return]
    raise AttributeError(f"table {self.name!r} has no entry {attr!r}")
"""


def _indent(lines: list[str]) -> list[str]:
    return [f"    {x}" if x else "" for x in lines]


def _class_body(p: Plan, cls: str) -> list[str]:
    out = [f"class {cls}(Table):",
           f'    """The {_doc_text(repr(p.name))} table with each entry typed by the ABI it binds."""', ""]
    for s in p.slots:
        out.append(f"    {s.attr}: {_annotation(s)}")
    # For type checkers only (an annotation: the class keeps Table's own): a name that is not an entry is an error.
    out.append("    __getattr__: None  # type: ignore[assignment, misc]")
    for s in p.slots:
        out += _accessors(s)
    out += _indent(_ANSWERS.splitlines())
    return out


def _py_ident(name: str) -> str:
    n = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not n or n[0].isdigit() or keyword.iskeyword(n):
        n = "table_" + n
    if n in _MODULE_NAMES:
        n += "_table"
    return n


# Names the generated module defines itself.
_MODULE_NAMES = frozenset({"Any", "Protocol", "SupportsInt", "sys", "Buffer", "Address", "Out", "Abi", "Table",
                           "Unavailable", "Diagnostic", "optional",
                           "required", "Handle", "Stream", "DevicePointer", "Pointer", "String", "Struct", "MIN_DRIVER",
                           "STREAM", "TYPE_CHECKING", "table", "annotations"})


def _doc_text(text: str) -> str:
    """Text that is safe inside a triple-quoted docstring."""
    return text.replace("\\", "/").replace('"', "'")


def _base(path: str) -> str:
    import os

    return os.path.basename(path)
