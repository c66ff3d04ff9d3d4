"""What a new user meets in the Python API (issue 41): reprs that say what a thing is, "did you mean" for an
unknown table entry, a hint for a call without a current context, the enum constants, and the error without
a driver that names the fake driver."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

import cuentry
from cuentry import Table, enums, optional, out, required
from cuentry.catalog import catalog
from cuentry.driver import Driver
from cuentry.errors import (
    CudaError,
    CuentryError,
    DriverNotFoundError,
    TableError,
    UnavailableError,
    UnknownConstantError,
    UnknownEntryError,
)
from cuentry.loader import load_driver

_DEFAULT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>")


def test_reprs_say_what_each_thing_is(drv: Driver) -> None:
    r = repr(drv)
    assert not _DEFAULT_REPR.search(r)
    assert r.startswith("<cuentry.Driver 13.0 (13000) ") and drv.path in r and "cuGetProcAddress_v2" in r
    assert r.endswith(", fake>")
    f = drv.call("cuMemAlloc", 3020)
    for fn, what in ((f, "cuMemAlloc@3020"), (f.checked, "cuMemAlloc@3020.checked")):
        text = repr(fn)
        assert what in text and not _DEFAULT_REPR.search(text), text
        if f.backend == "compiled":
            assert "PFN_cuMemAlloc_v3020" in text and f"{f.address:#x}" in text and "cuMemAlloc_v2" in text
    assert repr(catalog()) == (f"<cuentry.Catalog: {len(catalog())} ABIs of {len(catalog().symbols())} entry points, "
                               f"toolkits {catalog().history[0]}-{catalog().history[-1]}>")
    t = Table("reprs", [required("cuMemAlloc", 3020)], stream="legacy", source=drv)
    assert repr(t) == "<cuentry.Table 'reprs' legacy 1 entry, unresolved>"
    assert repr(out("CUdeviceptr")) == "cuentry.out('CUdeviceptr') = 0x0"
    drv.close()
    assert repr(drv).endswith(", fake, closed>")


def test_a_typo_of_an_entry_is_said_on_every_python(driver: Driver) -> None:
    """A typo of an entry is an AttributeError on every version (3.11: Python's own, as the table defines no
    `__getattr__` there, so entry reads stay specialized); `available()` gives cuentry's "did you mean" on every
    version."""
    t = Table("mylib", [required("cuMemAlloc", 3020)], stream="legacy", source=driver)
    with pytest.raises(AttributeError, match="cuMemAloc"):
        t.cuMemAloc  # noqa: B018
    with pytest.raises(UnknownEntryError, match="did you mean cuMemAlloc"):
        t.available("cuMemAloc")


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.11 keeps entry reads one slot read: no __getattr__")
def test_an_unknown_entry_says_which_it_probably_meant(driver: Driver) -> None:
    t = Table("mylib", [required("cuMemAlloc", 3020), required("cuMemFree", 3020)], stream="legacy", source=driver)
    for typo, meant in (("cuMemAloc", "cuMemAlloc"), ("cumemfree", "cuMemFree"), ("cuMemAlloc_v2", "cuMemAlloc")):
        with pytest.raises(UnknownEntryError) as e:
            getattr(t, typo)
        err = e.value
        assert isinstance(err, TableError) and isinstance(err, CuentryError) and isinstance(err, AttributeError)
        assert (err.table, err.entry, err.suggestions, err.name) == ("mylib", typo, (meant,), typo)
        assert str(err) == f"table 'mylib' has no entry {typo!r} (hint: did you mean {meant}?)"
    with pytest.raises(UnknownEntryError, match=r"cuMemsetD8 is a driver entry point this table does not declare"):
        t.cuMemsetD8  # noqa: B018
    with pytest.raises(UnknownEntryError, match="did you mean cuMemAlloc"):
        t.available("cuMemAloc")
    assert getattr(t, "nothing", None) is None and not hasattr(t, "cuMemAloc")
    # protocols probe private and special names (copy, pickle): they get the plain AttributeError
    with pytest.raises(AttributeError) as plain:
        t._nothing  # noqa: B018
    assert not isinstance(plain.value, CuentryError)
    with pytest.raises(AttributeError) as special:
        t.__deepcopy_hook__  # noqa: B018
    assert not isinstance(special.value, CuentryError)


def test_a_call_without_a_current_context_says_how_to_make_one(driver: Driver) -> None:
    with pytest.raises(CudaError) as e:
        driver.call("cuMemAlloc", 3020).checked(out("CUdeviceptr"), 16)
    assert e.value.code == 201 and e.value.name == "CUDA_ERROR_INVALID_CONTEXT"
    assert "primary_context(0)" in e.value.hint and "cuCtxSetCurrent" in e.value.hint
    assert e.value.to_dict()["hint"] == e.value.hint


def test_an_unavailable_entry_raises_its_reason_from_checked_too(driver: Any, fake_version: Any) -> None:
    t = Table("opt", [optional("cuMulticastCreate", 12010)], stream="legacy",
              source=lambda: Driver.from_answers(_Old()))
    assert not t.cuMulticastCreate
    with pytest.raises(UnavailableError, match="cuMulticastCreate is unavailable"):
        t.cuMulticastCreate.checked(out("CUmemGenericAllocationHandle"), None)


class _Old:
    """A 12.0 driver that knows no cuMulticastCreate (answers in Python)."""

    def version(self) -> int:
        return 12000

    def init(self, flags: int) -> int:
        return 0

    def get_proc_address(self, symbol: str, version: int, flags: int) -> tuple[int, int, int]:
        return 0, 1, 0  # CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, NULL

    def exports(self, name: str) -> int:
        return 0


def test_enum_constants_come_from_the_catalog(drv: Driver) -> None:
    attr = enums.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    assert attr == 16 and attr.name == "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"
    assert enums.CUdevice_attribute(16) is attr and enums.CUdevice_attribute_enum is enums.CUdevice_attribute
    assert enums.constant("CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK") == 8  # an alias of the same value
    assert enums.CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT == 0  # a member of value 0 is found too
    assert enums.enum_class("CUmem_advise").CU_MEM_ADVISE_SET_READ_MOSTLY == 1
    assert "CUdevice_attribute" in enums.names() and "CU_DEVICE_ATTRIBUTE_WARP_SIZE" in dir(enums)
    # every constant is the header's value as the catalog recorded it
    recorded = catalog().types["enums"]
    assert all(enums.constant(k) == v for e in recorded.values() for k, v in e["values"].items())
    # a typed call takes a member where the C parameter is the enum
    v = out("int")
    assert drv.call("cuDeviceGetAttribute", 2000)(v, enums.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == 0
    assert v[0] == 132  # the fake driver's answer for attribute 16
    with pytest.raises(UnknownConstantError) as e:
        enums.CU_DEVICE_ATTRIBUTE_MULTIPROCESOR_COUNT  # noqa: B018
    assert e.value.suggestions[0] == "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT" and isinstance(e.value, AttributeError)
    with pytest.raises(UnknownConstantError, match="did you mean CU_DEVICE_ATTRIBUTE_WARP_SIZE"):
        enums.constant("cu_device_attribute_warp_size")
    with pytest.raises(UnknownConstantError, match="no enum 'CUnothing'"):
        enums.enum_class("CUnothing")


def test_no_driver_error_is_short_and_names_the_fake_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUENTRY_DRIVER", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/nonexistent")
    import cuentry.loader as loader

    monkeypatch.setattr(loader, "driver_candidates", lambda explicit=None: [(p, "search") for p in _PLACES])
    with pytest.raises(DriverNotFoundError) as e:
        load_driver()
    text = str(e.value)
    assert len(text) <= 300, (len(text), text)
    assert 'CUENTRY_DRIVER="$(cuentry fake-driver)"' in e.value.hint
    assert len(e.value.searched) == len(e.value.to_dict()["searched"]) >= 1  # every place stays in the fields


_PLACES = [f"/nonexistent/lib{i}/libcuda.so.1" for i in range(12)]


def test_driver_not_found_keeps_every_place_in_its_fields() -> None:
    err = DriverNotFoundError(_PLACES, [f"{p}: cannot open shared object file" for p in _PLACES])
    assert len(str(err)) <= 300 and "in 12 places" in err.message and "cuentry fake-driver" in err.hint
    assert [s["path"] for s in err.to_dict()["searched"]] == _PLACES
    assert cuentry.UnknownEntryError is UnknownEntryError and cuentry.UnknownConstantError is UnknownConstantError


# --- out(): a type asked before is made at once (issue 41: out() <= 5x ctypes.c_int()) -------------------------


def test_out_made_again_is_new_storage_with_the_same_facts() -> None:
    from cuentry.calls import _OUT_SPECS

    first = out("CUdeviceptr")
    assert "CUdeviceptr" in _OUT_SPECS  # what out() worked out is kept for the next one
    a, b = out("CUdeviceptr"), out("CUdeviceptr")
    assert a.address != b.address and a.address != first.address
    a[0] = 0x1000
    assert (a[0], b[0]) == (0x1000, 0) and (a.ctype, a.count, a.itemsize, a.nbytes) == ("CUdeviceptr", 1, 8, 8)
    c = out("char", 4)
    assert out("char", 4).nbytes == 4 and len(out("char", 4)) == 4 and repr(out("char", 4)) == repr(c)


def test_out_never_takes_a_lying_name_or_count_for_a_known_one() -> None:
    out("int")
    out("int", 3)

    class Named(str):  # claims to be "int" to every dict look-up
        def __hash__(self) -> int:
            return hash("int")

        def __eq__(self, other: object) -> bool:
            return True

    class Count(int):  # claims to be 1 to every comparison; its stored value is 3
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 1

    uuid = out(Named("CUuuid"))
    assert uuid.ctype == "CUuuid" and uuid.nbytes == 16  # the name's own text, not the "int" it claims to be
    many = out("int", Count(3))
    assert len(many) == 3 and many.nbytes == 12
    assert len(out("int", count=Count(3))) == 3 and len(out("int", 1)) == 1


def test_outs_remembered_are_bounded() -> None:
    from cuentry.calls import _OUT_SPECS, _OUT_SPECS_LIMIT

    for n in range(1, _OUT_SPECS_LIMIT + 50):
        out("unsigned char", n)
    assert len(_OUT_SPECS) <= _OUT_SPECS_LIMIT
    assert out("unsigned char", 7).nbytes == 7
