"""Driver answers in Python: a driver of any release without a library (`Driver.from_answers`).

[CatalogAnswers][cuentry.testing.answers.CatalogAnswers] answers `cuGetProcAddress` as a real driver of
`version` does for the catalog's ABIs (the same rules as the compiled fake driver's lookup): a symbol
none of whose ABIs is as old as the driver is not found; otherwise the newest ABI at or below both the
driver and the requested version, of the stream mode asked (per-thread where the symbol has one), or
"version not sufficient". Each ABI's address is a stable nonzero number that is never called unless
`functions` maps its typedef name to a real function address.

```python
from cuentry import Table, required
from cuentry.driver import Driver
from cuentry.testing.answers import CatalogAnswers

drv = Driver.from_answers(CatalogAnswers(version=11080, form="v1"))
t = Table("t", [required("cuMemAlloc", 3020)], stream="legacy", source=drv)
assert t.available("cuMemAlloc")
assert drv.resolve("cuMemAlloc", 3020, "legacy").diagnostic.query_emulated  # the v1 form: emulated
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalog import catalog
from ..names import CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND, CUDA_SUCCESS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..catalog import Catalog

__all__ = ["CatalogAnswers"]

_FORMS = ("v2", "v1", "none")
_BASE = 0x7E57_0000_0000  # addresses handed out: _BASE + 16 * (row number)


class CatalogAnswers:
    """A driver of release `version` whose entry points are the catalog's ABIs (see the module).

    Args:
        version: the release it pretends to be (`cuDriverGetVersion`), e.g. 12080.
        form: the cuGetProcAddress it exports: "v2" (12.0+), "v1" (11.3-11.8) or "none" (older: names only).
        init: what `cuInit` answers.
        missing: symbols it does not have at all (as if an older or stripped driver).
        functions: typedef names (`PFN_cuCtxGetCurrent_v4000`) and the real function addresses to hand out
            for them (for entries a test calls).
        cat: the catalog (the shipped one by default).
    """

    def __init__(self, version: int = 13000, form: str = "v2", *, init: int = 0, missing: Iterable[str] = (),
                 functions: Mapping[str, int] | None = None, cat: Catalog | None = None) -> None:
        if form not in _FORMS:
            raise ValueError(f"form must be one of {', '.join(_FORMS)}, got {form!r}")
        self.driver_version = version
        self.form = form
        self.init_result = init
        self.missing = frozenset(missing)
        self.functions = dict(functions or {})
        self.cat = catalog() if cat is None else cat
        self.asked: list[tuple[str, int, int]] = []  # every cuGetProcAddress question, in order
        self._exports = {a.exported: a for a in self.cat if a.exported}
        self._rows = {a.pfn: i for i, a in enumerate(self.cat)}

    # DriverAnswers ---------------------------------------------------------------------------
    def version(self) -> int | None:
        return self.driver_version

    def init(self, flags: int) -> int:
        return self.init_result if flags == 0 else CUDA_ERROR_INVALID_VALUE

    def exports(self, name: str) -> int:
        if name == "cuGetProcAddress_v2":
            return _BASE - 32 if self.form == "v2" else 0
        if name == "cuGetProcAddress":
            return _BASE - 16 if self.form in ("v2", "v1") else 0
        abi = self._exports.get(name)
        if abi is None or abi.symbol in self.missing or abi.version > self.driver_version:
            return 0
        return self._address(abi.pfn)

    def get_proc_address(self, symbol: str, version: int, flags: int) -> tuple[int, int | None, int]:
        self.asked.append((symbol, version, flags))
        if flags not in (0, 1, 2) or version > self.driver_version:
            return CUDA_ERROR_INVALID_VALUE, None, 0
        status, addr = self._lookup(symbol, version, flags == 2)
        if self.form == "v1":
            return (CUDA_SUCCESS, None, addr) if status == 0 else (CUDA_ERROR_NOT_FOUND, None, 0)
        return CUDA_SUCCESS, status, addr

    # ------------------------------------------------------------------------------------------
    def _lookup(self, symbol: str, version: int, per_thread: bool) -> tuple[int, int]:
        """(query result, address): 0 found, 1 symbol not found, 2 version not sufficient."""
        if symbol in self.missing or symbol not in self.cat:
            return 1, 0
        here = [a for a in self.cat.abis(symbol) if a.version <= self.driver_version]
        if not here:
            return 1, 0
        want = per_thread and any(a.variant for a in here)
        fits = [a for a in here if a.version <= version and bool(a.variant) == want]
        if not fits:
            return 2, 0
        best = max(fits, key=lambda a: a.version)
        return 0, self._address(best.pfn)

    def _address(self, pfn: str) -> int:
        got = self.functions.get(pfn)
        return got if got else _BASE + 16 * self._rows.get(pfn, 0)
