"""Values cuentry builds for typed calls: `Out` buffers, `Address`, `KernelParams`.

An `Out` owns its memory (a ctypes array) and knows its C element type,
count and item size. Both backends recognise it by type and take its address
through public APIs only: the compiled extension through the buffer protocol
(its `OutBase` holds the buffer export for the object's whole life), the pure
backend through `ctypes.addressof`. The base class is the extension's
`OutBase` where the compiled backend is in use, else `PyOutBase`; both
expose the same read-only fields.
"""

from __future__ import annotations

import ctypes

from ..errors import ArgumentError, ArgumentRangeError
from . import ffi

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["Address", "KernelParams", "Out", "PyOutBase", "exact_int", "meta", "new_out"]



class _Sealed(Exception):
    """Internal: the reason an integer-like value is not an exact int (worded for an error message)."""


def exact_int(v: Any) -> int:
    """`v` as an exact `int` (`type(n) is int`) before anything compares it; _Sealed with the reason otherwise.

    An `int` subclass gives its stored value (its own `__index__`, `__int__` and comparisons are never
    consulted: they can lie); any other object is asked `__index__` once, and only an exact int (or an int
    subclass, taken by its stored value) is accepted from it. `bool` is refused, as is an `__index__`
    that raises or returns anything else.
    """
    if type(v) is int:
        return v
    if isinstance(v, bool):
        raise _Sealed("a bool (pass int(flag))")
    if isinstance(v, int):
        return int.__index__(v)
    try:
        index = getattr(type(v), "__index__", None)
    except Exception:  # a metaclass whose attribute lookup fails: no __index__ to trust
        index = None
    if index is None:
        raise _Sealed(f"a {type(v).__name__}, which has no __index__")
    try:
        got = index(v)
    except Exception as exc:
        raise _Sealed(f"a {type(v).__name__} whose __index__ raised {type(exc).__name__}") from None
    if type(got) is int:
        return got
    if isinstance(got, bool):
        raise _Sealed(f"a {type(v).__name__} whose __index__ returned a bool")
    if isinstance(got, int):
        return int.__index__(got)
    raise _Sealed(f"a {type(v).__name__} whose __index__ returned a {type(got).__name__}, not an int")


class PyOutBase:
    """The pure backend's Out base: a ctypes array, its element code, count and item size (read-only).

    The facts live in one slot whose descriptor is removed from the class once this
    module holds it: `object.__setattr__` cannot reach them, and subclassing is refused.
    """

    __slots__ = ("_facts", "_holds_dict")

    def __init_subclass__(cls, **kw: Any) -> None:
        _refuse_subclass(cls)
        super().__init_subclass__(**kw)

    def __init__(self, obj: Any, count: int, itemsize: int, code: str, meta: Any = None) -> None:
        try:
            _PY_FACTS.__get__(self, type(self))
        except AttributeError:
            pass
        else:
            raise ArgumentError("an Out cannot be re-initialised")
        if type(count) is not int or type(itemsize) is not int or type(code) is not str or len(code) != 1:
            raise ArgumentError("Out needs an exact int count and itemsize and a 1-letter element code")
        if not isinstance(obj, ctypes.Array) or ctypes.sizeof(obj) < count * itemsize or count < 1 or itemsize < 1:
            raise ArgumentError("Out needs a ctypes array of at least count * itemsize bytes")
        _seal(self, obj, count, itemsize, code, meta)

    @property
    def _holds(self) -> dict[int, Any]:
        """Per element, what a value stored there needs kept alive (made on first use)."""
        try:
            return _PY_HOLDS.__get__(self, type(self))  # type: ignore[no-any-return]
        except AttributeError:
            got: dict[int, Any] = {}
            _PY_HOLDS.__set__(self, got)
            return got

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} fields are read-only")

    def _fact(self, i: int, missing: Any) -> Any:
        try:
            return _PY_FACTS.__get__(self, type(self))[i]
        except AttributeError:
            return missing

    # An uninitialised Out reads as address 0 and code "": no fast path takes it, and the contract refuses it.
    _obj = property(lambda self: self._fact(0, None))
    _ptr = property(lambda self: self._fact(1, 0))
    count = property(lambda self: self._fact(2, 0))
    itemsize = property(lambda self: self._fact(3, 0))
    _code = property(lambda self: self._fact(4, ""))
    _meta = property(lambda self: self._fact(6, None))


def _seal(o: Any, obj: Any, count: int, itemsize: int, code: str, meta: Any) -> None:
    """The facts of a pure-backend Out, set once: (array, address, count, itemsize, code, what the pure backend
    hands ctypes for it (the array itself: a function without argtypes passes a ctypes array as the address of
    its storage), what Out knows of its C type)."""
    _PY_FACTS.__set__(o, (obj, ctypes.addressof(obj), count, itemsize, code, obj, meta))


_SEALED: list[bool] = []  # non-empty once Out and KernelParams exist: no class may derive from them after


def _refuse_subclass(cls: type) -> None:
    if _SEALED:
        raise TypeError(f"{cls.__qualname__}: cuentry.Out cannot be subclassed (its size facts are final)")


_PY_FACTS: Any = PyOutBase.__dict__["_facts"]
_SET_FACTS: Any = _PY_FACTS.__set__
_PY_HOLDS: Any = PyOutBase.__dict__["_holds_dict"]
del PyOutBase._facts  # type: ignore[attr-defined]
del PyOutBase._holds_dict  # type: ignore[attr-defined]


def _base() -> Any:
    from .choice import extension_if_wanted

    ext = extension_if_wanted()
    # An extension built from an older template (no sealed facts, no facts of the C type, no one-call maker) is not
    # trusted with Out's storage.
    fresh = ext is not None and {"_facts", "_meta"} <= set(ext.OutBase.__dict__) and hasattr(ext, "new_out")
    return ext.OutBase if fresh else PyOutBase


_OutBase: Any = _base()


class Out(_OutBase):  # type: ignore[misc]
    """Storage for a C output (or input) array of `count` elements of one C type; made by `out`.

    `o[i]` reads element i (an int, a float, a 1-byte bytes for char, or a view of
    a struct), `o[i] = v` writes it (integers range-checked: never truncated),
    `o.value` is `o[0]`; `len(o)` is the count. Final: it cannot be subclassed,
    and its size facts (address, count, item size, element type, struct tag) are
    fixed when it is made.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kw: Any) -> None:
        _refuse_subclass(cls)
        super().__init_subclass__(**kw)

    def __init__(self, obj: Any, count: int, itemsize: int, code: str, ctype: str, tag: str | None = None,
                 conversion: Any = None) -> None:
        if self._m(0, None) is not None:  # the base refuses too (the extension's as a TypeError): say it as ours
            raise ArgumentError("an Out cannot be re-initialised")
        # (C type, struct tag, the C type's conversion (contract.Value) or None): kept with the storage's facts
        super().__init__(obj, count, itemsize, code, meta(ctype, tag, conversion))

    def _m(self, i: int, missing: Any) -> Any:
        try:
            m = self._meta
        except (AttributeError, ValueError):  # never initialised
            return missing
        return missing if m is None else m[i]

    ctype = property(lambda self: self._m(0, "?"))
    _tag = property(lambda self: self._m(1, None))

    def __len__(self) -> int:
        return int(self.count)

    def _index(self, i: object) -> int:
        try:
            n = exact_int(i)
        except _Sealed:
            raise TypeError(f"Out indices are ints, got {type(i).__name__}") from None
        j = n + self.count if n < 0 else n
        if not 0 <= j < self.count:
            raise IndexError(f"index {n} out of range for {self.count} element(s)")
        return j

    def __getitem__(self, i: int) -> Any:
        return self._obj[self._index(i)]

    def __setitem__(self, i: int, value: Any) -> None:
        j = self._index(i)
        self._store(j, value, f"cuentry.out({self.ctype!r})[{j}]", None)

    def _store(self, j: int, value: Any, where: str, stream: int | None) -> None:
        """Element `j` = `value`, converted as a call argument of the element's C type is (where the Out has the
        type's conversion); what the value needs kept alive (a device array, its DLPack export) is kept with it."""
        conversion = self._m(2, None)
        if conversion is not None:
            got, keep = conversion.convert(value, where, stream)
            self._obj[j] = got
            holds = self._holds
            if keep:
                holds[j] = keep
            else:
                holds.pop(j, None)
            return
        bounds = _INT_BOUNDS.get(self._code)
        if self._code == "f" and type(value) in (int, float) and abs(value) > _FLT_MAX and value - value == 0:
            raise ArgumentError(f"cuentry.out({self.ctype!r})[{j}] = {value!r}: beyond a float's range "
                                f"(|x| <= {_FLT_MAX})")
        if bounds is not None:
            try:
                value = exact_int(value)
            except _Sealed as why:
                raise ArgumentError(f"cuentry.out({self.ctype!r})[{j}] = ...: got {why}; accepted: an int in "
                                    f"{bounds[0]}..{bounds[1]}") from None
            if not bounds[0] <= value <= bounds[1]:
                raise ArgumentRangeError(f"cuentry.out({self.ctype!r})[{j}] = {value}: outside "
                                         f"{bounds[0]}..{bounds[1]} ({self.ctype})",
                                         function="Out.__setitem__", parameter=self.ctype, value=value,
                                         low=bounds[0], high=bounds[1], hint=f"store a value in {bounds[0]}..{bounds[1]}")
        self._obj[j] = value

    @property
    def value(self) -> Any:
        return self._obj[0]

    @property
    def nbytes(self) -> int:
        return int(self.count) * int(self.itemsize)

    @property
    def address(self) -> int:
        """Where the storage is (for struct fields that take a pointer)."""
        return int(self._ptr)

    def __repr__(self) -> str:
        """`cuentry.out('CUcontext') = 0x0`, `cuentry.out('int', 4) = [0, 0, 0, 0]`, `cuentry.out('char', 64) =
        'NVIDIA H200'`, `cuentry.out('CUuuid') = CUuuid_st(bytes=b'...')`: how it was made, then what it holds."""
        if not self._ptr:
            return "cuentry.Out(uninitialised)"
        n = int(self.count)
        made = f"cuentry.out({self.ctype!r}{'' if n == 1 else f', {n}'})"
        return f"{made} = {self._shown()}"

    def _shown(self) -> str:
        code = self._code
        if code == "c":
            raw = ctypes.string_at(self._ptr, self.nbytes)
            text = raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")
            return repr(text if len(text) <= 60 else text[:57] + "...")
        pointer = code == "P" or " ".join(self.ctype.split()) in _DEVPTR_NAMES
        items = [ffi.value_text(self._obj[i], pointer) for i in range(min(int(self.count), _SHOWN))]
        if self.count == 1:
            return items[0]
        more = f", ... ({self.count} in all)" if self.count > _SHOWN else ""
        return f"[{', '.join(items)}{more}]"


_SHOWN = 8  # elements a repr shows before it counts the rest
_DEVPTR_NAMES = frozenset({"CUdeviceptr", "CUdeviceptr_v1", "CUdeviceptr_v2"})  # device addresses: shown in hex


def meta(ctype: str, tag: str | None, conversion: Any) -> tuple[str, str | None, Any]:
    """What an Out knows of its C type: (the type as asked, its struct tag, its conversion or None)."""
    return (str(ctype), tag if type(tag) is str else None, conversion)


def _int_bounds() -> dict[str, tuple[int, int]]:
    sizes = {"b": 1, "h": 2, "i": 4, "q": 8}
    got = {}
    for c, n in sizes.items():
        got[c] = (-(1 << (8 * n - 1)), (1 << (8 * n - 1)) - 1)
        got[c.upper()] = (0, (1 << (8 * n)) - 1)
    got["P"] = (0, ffi.POINTER_MAX)
    return got


_INT_BOUNDS = _int_bounds()
_FLT_MAX = 3.4028234663852886e38

if _OutBase is not PyOutBase:
    from .choice import extension_if_wanted as _ext

    _ext().register_out(Out)
    _new_out: Any = getattr(_ext(), "new_out", None)  # an extension built from an older template has none
else:
    _new_out = None


def _py_new_out(spec: tuple[Any, int, int, str, Any], _new: Any = object.__new__, _addr: Any = ctypes.addressof) -> Out:
    """The pure backend's `new_out` (the facts of `_seal`, set in one function: it is what out() costs there)."""
    arr_type, count, itemsize, code, m = spec
    o = _new(Out)
    obj = arr_type()
    _SET_FACTS(o, (obj, _addr(obj), count, itemsize, code, obj, m))
    return o  # type: ignore[no-any-return]


# new_out(spec): an Out made at once from what `out()` worked out for its C type: (array type, count, itemsize,
# element code, meta). The storage is a new zeroed array of that type; every fact is set as `Out.__init__` sets
# it. The extension's maker (one C call), else the pure backend's.
new_out: Callable[[tuple[Any, int, int, str, Any]], Out] = _new_out if _new_out is not None else _py_new_out


class KernelParams(Out):
    """`void *kernelParams[]` for cuLaunchKernel: one pointer per kernel parameter, each to storage it keeps alive."""

    __slots__ = ("_keep",)

    def __init__(self, values: tuple[Out, ...]) -> None:
        if type(values) is not tuple or any(type(v) not in (Out, KernelParams) or not v._ptr for v in values):
            raise ArgumentError("KernelParams needs a tuple of cuentry.out() objects (use cuentry.kernel_params)")
        try:
            _KEEP.__get__(self, type(self))
        except AttributeError:
            pass
        else:
            raise ArgumentError("a KernelParams cannot be re-initialised")
        _KEEP.__set__(self, values)
        arr = (ctypes.c_uint64 * max(1, len(values)))(*[v.address for v in values])
        super().__init__(arr, max(1, len(values)), 8, "P", "void *")


    def __repr__(self) -> str:
        """`cuentry.kernel_params(('CUdeviceptr', 0x7f00...), ('unsigned int', 16))`: each parameter's type and value."""
        try:
            values = _KEEP.__get__(self, KernelParams)
        except AttributeError:
            return "cuentry.KernelParams(uninitialised)"
        shown = [f"({v.ctype!r}, {v._shown()})" if v.count == 1 else repr(v) for v in values[:_SHOWN]]
        more = f", ... ({len(values)} in all)" if len(values) > _SHOWN else ""
        return f"cuentry.kernel_params({', '.join(shown)}{more})"


_KEEP: Any = KernelParams.__dict__["_keep"]
del KernelParams._keep
_SEALED.append(True)


def _uninitialised() -> _Sealed:
    return _Sealed("a cuentry.Out that was never initialised (make one with cuentry.out())")


if _OutBase is PyOutBase:
    def out_facts(o: Out) -> tuple[int, int, int, str]:
        """(address, count, itemsize, element code) of an Out, read where Python code cannot change them."""
        try:
            f = _PY_FACTS.__get__(o, PyOutBase)
        except AttributeError:
            raise _uninitialised() from None
        return f[1], f[2], f[3], f[4]
else:
    _C_FACTS: Any = _OutBase.__dict__["_facts"]

    def out_facts(o: Out) -> tuple[int, int, int, str]:
        """(address, count, itemsize, element code) of an Out, read from the C object (fixed when it was made)."""
        try:
            return _C_FACTS.__get__(o, _OutBase)  # type: ignore[no-any-return]
        except ValueError:
            raise _uninitialised() from None


def _refuse_non_int(v: Any) -> int:
    raise _Sealed(f"a {type(v).__name__}")


class Address:
    """An explicit raw address for a pointer parameter: the escape hatch (`cuentry.address(n)`).

    cuentry cannot check what is at an address: the caller vouches for its type,
    size, mutability and lifetime. Never accepted implicitly: a plain int is not a pointer.
    """

    __slots__ = ("_value",)

    def __init_subclass__(cls, **kw: Any) -> None:
        raise TypeError("cuentry.Address cannot be subclassed")

    def __init__(self, value: int) -> None:
        try:
            value = exact_int(value) if isinstance(value, int) else _refuse_non_int(value)
        except _Sealed as why:
            raise ArgumentError(f"address() needs an int, got {why}") from None
        if not 0 <= value <= ffi.POINTER_MAX:
            raise ArgumentError(f"address({value}) is outside 0..{ffi.POINTER_MAX}")
        try:
            _ADDRESS.__get__(self, Address)
        except AttributeError:
            _ADDRESS.__set__(self, value)
        else:
            raise ArgumentError("an Address cannot be re-initialised")

    @property
    def value(self) -> int:
        """The address (0 for one never initialised: NULL)."""
        try:
            return int(_ADDRESS.__get__(self, Address))
        except AttributeError:
            return 0

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Address is read-only")

    def __repr__(self) -> str:
        return f"cuentry.address({self.value:#x})"


_ADDRESS: Any = Address.__dict__["_value"]
del Address._value  # type: ignore[attr-defined]
