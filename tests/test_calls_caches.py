"""Caches that cannot lie (issue 32): facts per catalog live on the catalog, and every module-level cache is listed.

A catalog is freed and new ones are made until one takes its id: every verdict a cache could keep must then be
the new catalog's. docs/architecture.md lists each remaining module-level cache; the list is checked against the
code here (a new module-level memo without its row fails).
"""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path
from typing import Any

import pytest

import cuentry
from cuentry import diagnostics, entry
from cuentry.calls import bind
from cuentry.catalog import Catalog
from cuentry.errors import ArgumentError
from cuentry.lint.signature import normalizer

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "cuentry"

# Two kinds of catalog that answer every question differently.
_KINDS = {
    0: ("int", 4, "CUDA_ERROR_ZERO"),
    1: ("long long", 8, "CUDA_ERROR_ONE"),
}


def _catalog(kind: int) -> Catalog:
    return Catalog(*_data(kind))


def _data(kind: int) -> tuple[dict[str, Any], dict[str, Any]]:
    canonical, _, err = _KINDS[kind]
    data = {"entries": [{"symbol": "cuFoo", "version": 1000, "variant": None, "returns": "CUresult",
                         "params": [["p", "my_t *", f"{canonical} *"]], "exported": "cuFoo"}]}
    types = {"typedefs": {"my_t": {"canonical": canonical}},
             "enums": {"cudaError_enum": {"values": {err: 1}}}, "aggregates": {}}
    return data, types


def _verdicts(cat: Catalog) -> dict[str, Any]:
    """Every answer a per-catalog cache could keep, asked of `cat`."""
    abi = entry.bind_pin(cat, "cuFoo", 1000, "legacy")
    return {
        "cu_result_name": diagnostics.cu_result_name(1, cat),
        "normalizer": normalizer(cat).typedefs.get("my_t"),
        "out": cuentry.out("my_t", cat=cat).itemsize,
        "bind_pin": abi.signature.params[0].canonical,
        "contract": _refusal(bind(abi, 0x1000, cat=cat)),
    }


def _refusal(fn: Any) -> str:
    """What the bound function's contract says it accepts (a char Out is refused before any call is made)."""
    with pytest.raises(ArgumentError) as got:
        fn(cuentry.out("char"))
    return re.findall(r"\d-byte signed integer", str(got.value))[0]


def _expected(kind: int) -> dict[str, Any]:
    canonical, size, err = _KINDS[kind]
    return {"cu_result_name": err, "normalizer": canonical, "out": size, "bind_pin": f"{canonical} *",
            "contract": f"{size}-byte signed integer"}


def test_a_catalog_that_reuses_a_freed_catalogs_id_gets_its_own_verdicts() -> None:
    for i in range(6):
        before, after = i % 2, 1 - i % 2
        cat = _catalog(before)
        assert _verdicts(cat) == _expected(before)
        old = id(cat)
        del cat
        gc.collect()
        keep: list[Catalog] = []  # new objects stay alive until one takes the freed catalog's memory
        for _ in range(200_000):
            new = Catalog.__new__(Catalog)
            if id(new) == old:
                break
            keep.append(new)
        assert id(new) == old, "no catalog took the freed one's id (the check did not run)"
        new.__init__(*_data(after))  # type: ignore[misc]
        assert _verdicts(new) == _expected(after)  # every cache asked of a catalog whose id another had
        del new, keep


def test_a_fact_is_computed_once_per_catalog_and_dropped_with_it() -> None:
    import weakref

    made: list[int] = []
    cat = _catalog(0)
    assert cat.fact("test.x", lambda c: made.append(1) or len(made)) == 1
    assert cat.fact("test.x", lambda c: made.append(1) or len(made)) == 1 and made == [1]
    other = _catalog(0)
    assert other.fact("test.x", lambda c: made.append(1) or len(made)) == 2
    held = weakref.ref(cat)
    del cat
    gc.collect()
    assert held() is None  # no cache keeps a catalog alive through its facts


# --- the list of module-level caches --------------------------------------------------------------------

_EMPTY_CALLS = {"set", "dict", "list", "WeakSet", "WeakKeyDictionary", "WeakValueDictionary", "OrderedDict"}


def _module_state() -> set[str]:
    """Module-level mutable state in src/cuentry: names bound to an empty container at module level, names a
    function rebinds with `global`, and functions wrapped by a cache decorator."""
    found: set[str] = set()
    for f in sorted(SRC.rglob("*.py")):
        mod = ".".join(f.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in tree.body:
            target, value = _assignment(node)
            if target is not None and target != "__all__" and _empty(value):
                found.add(f"{mod}.{target}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    "cache" in ast.unparse(d) for d in node.decorator_list):
                found.add(f"{mod}.{node.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.update(f"{mod}.{n}" for n in node.names)
    return found


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    return None, None


def _empty(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.List, ast.Set)):
        return not value.elts
    if isinstance(value, ast.Call) and not value.args:
        f = value.func
        return (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "") in _EMPTY_CALLS
    return False


def _documented() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Module-level state", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w.]+)` \|", section, re.M))


def test_every_module_level_cache_is_listed_in_the_architecture_doc() -> None:
    found, listed = _module_state(), _documented()
    assert found - listed == set(), "module-level state missing from docs/architecture.md 'Module-level state'"
    assert listed - found == set(), "rows of docs/architecture.md 'Module-level state' the code no longer has"


def test_the_scan_finds_a_new_memo(tmp_path: Path) -> None:
    tree = ast.parse("_MEMO: dict[int, str] = {}\nX = {1: 2}\n")
    got = [(_assignment(n)[0], _empty(_assignment(n)[1])) for n in tree.body]
    assert got == [("_MEMO", True), ("X", False)]


def test_no_module_level_cache_is_keyed_by_an_id() -> None:
    """A cache keyed by id() must keep the object alive with its key (checked by reading each use)."""
    offenders = []
    for f in sorted(SRC.rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"^(_[A-Z_]+)\b.*=", text, re.M):
            name = m.group(1)
            if re.search(rf"{name}\.(?:get|setdefault)\(id\(|{name}\[id\(", text):
                offenders.append(f"{f.relative_to(SRC)}:{name}")
    assert offenders == []
