"""Values cuentry builds for typed calls: :class:`Out` buffers, :class:`Address`, :class:`KernelParams`.

An :class:`Out` owns its memory (a ctypes array) and knows its C element type,
count and item size. Both backends recognise it by type and take its address
through public APIs only: the compiled extension through the buffer protocol
(its ``OutBase`` holds the buffer export for the object's whole life), the pure
backend through ``ctypes.addressof``. The base class is the extension's
``OutBase`` where the compiled backend is in use, else :class:`PyOutBase`; both
expose the same read-only fields.
"""

from __future__ import annotations

import ctypes

from ..errors import ArgumentError
from . import ffi

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class PyOutBase:
    """The pure backend's Out base: a ctypes array, its element code, count and item size (read-only)."""

    __slots__ = ("_obj", "_ptr", "count", "itemsize", "_code")
    _obj: Any
    _ptr: int
    count: int
    itemsize: int
    _code: str

    def __init__(self, obj: Any, count: int, itemsize: int, code: str) -> None:
        if not isinstance(obj, ctypes.Array) or ctypes.sizeof(obj) < count * itemsize or count < 1:
            raise ArgumentError("Out needs a ctypes array of at least count * itemsize bytes")
        if getattr(self, "_obj", None) is not None:
            raise ArgumentError("an Out cannot be re-initialised")
        for k, v in (("_obj", obj), ("_ptr", ctypes.addressof(obj)), ("count", count), ("itemsize", itemsize),
                     ("_code", code)):
            object.__setattr__(self, k, v)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} fields are read-only")


def _base() -> Any:
    from .choice import extension_if_wanted

    ext = extension_if_wanted()
    return ext.OutBase if ext is not None else PyOutBase


_OutBase: Any = _base()


class Out(_OutBase):  # type: ignore[misc]
    """Storage for a C output (or input) array of ``count`` elements of one C type; made by :func:`out`.

    ``o[i]`` reads element i (an int, a float, a 1-byte bytes for char, or a view of
    a struct), ``o[i] = v`` writes it, ``o.value`` is ``o[0]``; ``len(o)`` is the count.
    """

    __slots__ = ("ctype", "_tag")
    ctype: str
    _tag: str | None

    def __init__(self, obj: Any, count: int, itemsize: int, code: str, ctype: str, tag: str | None = None) -> None:
        super().__init__(obj, count, itemsize, code)
        object.__setattr__(self, "ctype", ctype)
        object.__setattr__(self, "_tag", tag)

    def __len__(self) -> int:
        return int(self.count)

    def _index(self, i: object) -> int:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"Out indices are ints, got {type(i).__name__}")
        j = i + self.count if i < 0 else i
        if not 0 <= j < self.count:
            raise IndexError(f"index {i} out of range for {self.count} element(s)")
        return j

    def __getitem__(self, i: int) -> Any:
        return self._obj[self._index(i)]

    def __setitem__(self, i: int, value: Any) -> None:
        self._obj[self._index(i)] = value

    @property
    def value(self) -> Any:
        return self._obj[0]

    @property
    def nbytes(self) -> int:
        return int(self.count) * int(self.itemsize)

    @property
    def address(self) -> int:
        """Where the storage is (for struct fields that take a pointer)."""
        return ffi.ctypes_address(self._obj)

    def __repr__(self) -> str:
        shown = self._obj[0] if self.count == 1 and self._tag is None else f"{self.count} elements"
        return f"cuentry.Out({self.ctype!r}, {self.count}: {shown!r})"


if _OutBase is not PyOutBase:
    from .choice import extension_if_wanted as _ext

    _ext().register_out(Out)


class KernelParams(Out):
    """``void *kernelParams[]`` for cuLaunchKernel: one pointer per kernel parameter, each to storage it keeps alive."""

    __slots__ = ("_keep",)

    def __init__(self, values: tuple[Out, ...]) -> None:
        arr = (ctypes.c_uint64 * max(1, len(values)))(*[v.address for v in values])
        super().__init__(arr, max(1, len(values)), 8, "P", "void *")
        object.__setattr__(self, "_keep", values)


class Address:
    """An explicit raw address for a pointer parameter: the escape hatch (``cuentry.address(n)``).

    cuentry cannot check what is at an address: the caller vouches for its type,
    size, mutability and lifetime. Never accepted implicitly: a plain int is not a pointer.
    """

    __slots__ = ("value",)
    value: int

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"address() needs an int, got {type(value).__name__}")
        if not 0 <= value <= ffi.POINTER_MAX:
            raise ArgumentError(f"address({value}) is outside 0..{ffi.POINTER_MAX}")
        object.__setattr__(self, "value", value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Address is read-only")

    def __repr__(self) -> str:
        return f"cuentry.address({self.value:#x})"
