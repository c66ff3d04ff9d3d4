"""What a seed is made of: the rows a loader fetches, and how it asks for them."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["FnType", "Row", "Seed", "Shape", "handwritten", "pfn"]


@dataclass(frozen=True)
class FnType:
    """A function pointer's type as the loader spells it: a typedef name (`PFN_cuX_vN`), a `decltype(&cuX)`, or a
    hand-written pointer type (`ret (*)(params)`)."""

    name: str = ""
    ret: str = ""
    params: str = ""

    @property
    def abstract(self) -> str:
        """The type without a name (for casts and `using`)."""
        return self.name or f"{self.ret} (*)({self.params})"

    def declare(self, var: str) -> str:
        """A declaration of `var` with this type."""
        return f"{self.name} {var}" if self.name else f"{self.ret} (*{var})({self.params})"

    @property
    def single_token(self) -> bool:
        """Whether it can be a macro argument as it is (no comma)."""
        return "," not in self.abstract

    @property
    def cxx(self) -> bool:
        return self.name.startswith("decltype")


def pfn(name: str) -> FnType:
    return FnType(name=name)


def handwritten(ret: str, params: str) -> FnType:
    return FnType(ret=ret, params=params)


@dataclass(frozen=True)
class Row:
    """One function pointer a loader fills: the name it asks for (the getter's symbol or `dlsym`'s export), the
    variable, and the variable's type."""

    name: str
    var: str
    type: FnType


@dataclass(frozen=True)
class Shape:
    """A loader as data. `lookup`: "getter" (`cuGetProcAddress`, the 12000 getter cuda.h names so), "rt_getter"
    (`cudaGetDriverEntryPointByVersion`) or "dlsym" (the export taken by name). For a getter: where the version
    comes from ("literal" `pin`, "toolkit" CUDA_VERSION -- CUDART_VERSION for the runtime's getter --, "driver"
    cuDriverGetVersion, "runtime" cudaRuntimeGetVersion), the stream flags and whether the query result is tested.
    Every row is asked at the same version and flags."""

    lookup: str
    rows: tuple[Row, ...]
    version: str = "literal"
    pin: int = 0
    flags: str = "legacy"
    check_query: bool = True

    def but(self, **kw: object) -> Shape:
        return replace(self, **kw)  # type: ignore[arg-type]

    def renamed(self, index: int, name: str) -> Shape:
        """The same shape with row `index` asking for `name`."""
        rows = list(self.rows)
        rows[index] = replace(rows[index], name=name)
        return replace(self, rows=tuple(rows))

    def retyped(self, index: int, type_: FnType) -> Shape:
        """The same shape with row `index` of type `type_`."""
        rows = list(self.rows)
        rows[index] = replace(rows[index], type=type_)
        return replace(self, rows=tuple(rows))

    @property
    def cxx(self) -> bool:
        return any(r.type.cxx for r in self.rows)


@dataclass(frozen=True)
class Seed:
    """A faulty loader (`bad`) and its fixed twin (`good`: the same loader done right), the codes the fault must get
    at error or warning (`expect`), and what the fault is, in words."""

    id: str
    fault: str
    bad: Shape
    good: Shape
    expect: frozenset[str]

    @property
    def lookup(self) -> str:
        return self.bad.lookup

    @property
    def cxx(self) -> bool:
        return self.bad.cxx or self.good.cxx
