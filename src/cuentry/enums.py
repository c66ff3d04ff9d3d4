"""The driver's enum constants, from the catalog's types: never copy a number out of cuda.h.

```python
from cuentry import enums, out

value = out("int")
attr = enums.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT          # 16, an IntEnum member (an int)
assert attr == 16 and attr.name == "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"
assert enums.CUdevice_attribute(16) is attr                     # the enum itself, by its typedef name
assert enums.constant("CU_MEM_ADVISE_SET_READ_MOSTLY") == 1     # the same, for any catalog (cat=)
```

Each enum of the driver's headers is an `enum.IntEnum` named by its typedef (`CUdevice_attribute`; the
tag `CUdevice_attribute_enum` works too), each constant one of its members, read as `enums.NAME`. A typed
call takes a member where the C parameter is that enum or any integer (an `int` subclass counts by its
value, docs/calls.md). An unknown name raises [UnknownConstantError][cuentry.errors.UnknownConstantError]
with the names it probably meant. The values are those of the catalog's primary toolkit (CUDA keeps an
enum constant's value across releases); the enums are made on first use, from the catalog's type data.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

from .catalog import Catalog, catalog
from .errors import UnknownConstantError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["constant", "enum_class", "names"]


class _Enums:
    """One catalog's enums: by typedef and by tag, and every constant by name (a fact of the catalog)."""

    __slots__ = ("classes", "constants", "tags")

    def __init__(self, cat: Catalog) -> None:
        types = cat.types
        typedefs: Mapping[str, Any] = types.get("typedefs", {})
        by_tag = {t["canonical"].split()[1]: name for name, t in typedefs.items()
                  if t.get("canonical", "").startswith("enum ") and len(t["canonical"].split()) == 2
                  and t.get("type", "").startswith("enum ")} if typedefs else {}
        self.classes: dict[str, type[IntEnum]] = {}
        self.tags: dict[str, str] = {}
        self.constants: dict[str, IntEnum] = {}
        for tag, info in sorted(types.get("enums", {}).items()):
            name = by_tag.get(tag) or _typedef_of(tag, typedefs)
            members = {k: int(v) for k, v in info.get("values", {}).items() if isinstance(v, int)}
            if not members:
                continue
            cls = IntEnum(name, members, module=__name__, qualname=name)  # type: ignore[misc]
            self.classes[name] = cls
            self.tags[tag] = name
            for k, m in cls.__members__.items():  # aliases too (CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8)
                self.constants.setdefault(k, m)


def _typedef_of(tag: str, typedefs: Mapping[str, Any]) -> str:
    """The typedef that names `enum tag` (`CUdevice_attribute` for `CUdevice_attribute_enum`), else the tag."""
    for name, t in typedefs.items():
        if " ".join(str(t.get("canonical", "")).split()) == f"enum {tag}" and not name.endswith("_enum"):
            return str(name)
    return tag


def _enums(cat: Catalog | None) -> _Enums:
    c = catalog() if cat is None else cat
    return c.fact("enums.enums", _Enums)


def constant(name: str, cat: Catalog | None = None) -> int:
    """The enum constant `name` (`"CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"`): an `IntEnum` member.

    Raises:
        UnknownConstantError: no enum of the catalog has a constant of that name.
    """
    e = _enums(cat)
    got = e.constants.get(name) if isinstance(name, str) else None
    if got is None:
        raise _unknown(name, e.constants)
    return got


def enum_class(name: str, cat: Catalog | None = None) -> type[IntEnum]:
    """The enum named by its typedef (`"CUdevice_attribute"`) or its tag (`"CUdevice_attribute_enum"`).

    Raises:
        UnknownConstantError: the catalog has no enum of that name.
    """
    e = _enums(cat)
    key = e.tags.get(name, name) if isinstance(name, str) else ""
    got = e.classes.get(key)
    if got is None:
        raise _unknown(name, e.classes, what="enum")
    return got


def names(cat: Catalog | None = None) -> tuple[str, ...]:
    """Every enum's typedef name, sorted."""
    return tuple(sorted(_enums(cat).classes))


def _unknown(name: object, known: Mapping[str, Any], what: str = "enum constant") -> UnknownConstantError:
    text = name if isinstance(name, str) else repr(name)
    near: list[str] = []
    if isinstance(name, str) and name:
        import difflib

        upper = {k.upper(): k for k in known}
        near = [upper[name.upper()]] if name.upper() in upper else difflib.get_close_matches(name, list(known), n=3,
                                                                                             cutoff=0.8)
    return UnknownConstantError(text, near, what=what)


def __getattr__(name: str) -> Any:
    """`enums.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT` (a constant) or `enums.CUdevice_attribute` (an enum)."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    e = _enums(None)
    got: Any = e.constants.get(name)  # a member may be 0 (falsy): tested against None
    if got is None:
        got = e.classes.get(e.tags.get(name, name))
    if got is None:
        raise _unknown(name, {**e.constants, **e.classes}, what="enum or enum constant")
    return got


def __dir__() -> list[str]:
    e = _enums(None)
    return sorted([*globals(), *e.classes, *e.constants])
