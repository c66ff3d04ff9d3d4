"""One shape per JSON key across every schema in docs/schemas/ (GUIDE: `--json`: one shape per key).

Each property name is reduced to a shape (its JSON types; for an object, its property names; for an array,
its items' shape; `$ref`s followed) wherever it appears in any schema. A key with more than one shape fails,
unless it is in PENDING with the owner who converts it: that list may only shrink (a stale entry fails too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"

# key: why it still has more than one shape, and whose command converts it.
PENDING: dict[str, str] = {}

# Keys whose shape is decided (GUIDE.md): each must have exactly this shape wherever it appears.
DECIDED = {
    "searched": "array[object{how,path,reason}]",
    "driver": "object{path,version}",
    "suggestions": "array[object{reason,stream,symbol,version}]",
    "result": "integer|null",
    "query": "integer|null",
}


def _load() -> dict[str, Any]:
    return {json.loads(p.read_text())["$id"].rsplit("/", 1)[-1]: json.loads(p.read_text())
            for p in sorted(SCHEMAS.glob("*.schema.json"))}


def _deref(node: Any, here: str, docs: dict[str, Any]) -> tuple[Any, str]:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 20:
        ref = node["$ref"]
        doc_name, _, pointer = ref.partition("#")
        doc_name = doc_name or here
        target: Any = docs[doc_name]
        for part in [p for p in pointer.split("/") if p]:
            target = target[part]
        node, here, seen = target, doc_name, seen + 1
    return node, here


def _merge(parts: list[dict[str, Any]], here: str, docs: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {"properties": {}, "type": set()}
    for p in parts:
        p, _ = _deref(p, here, docs)
        merged["properties"].update(p.get("properties", {}))
        t = p.get("type")
        merged["type"] |= set([t] if isinstance(t, str) else t or [])
        if "items" in p:
            merged["items"] = p["items"]
    return merged


def shape(node: Any, here: str, docs: dict[str, Any], depth: int = 0) -> str:
    node, here = _deref(node, here, docs)
    if not isinstance(node, dict) or depth > 6:
        return "any"
    if "allOf" in node:
        node = {**node, **_merge(node["allOf"], here, docs)}
    for key in ("oneOf", "anyOf"):
        if key in node:
            return "|".join(sorted({shape(n, here, docs, depth + 1) for n in node[key]}))
    types = node.get("type")
    types = set([types] if isinstance(types, str) else types or [])
    for v in node.get("enum", []) + ([node["const"]] if "const" in node else []):
        types.add({bool: "boolean", int: "integer", str: "string", type(None): "null"}.get(type(v), "any"))
    if "properties" in node:
        types.discard("object")
        types.add("object{" + ",".join(sorted(node["properties"])) + "}")
    if "items" in node:
        types.discard("array")
        types.add(f"array[{shape(node['items'], here, docs, depth + 1)}]")
    return "|".join(sorted(types)) or "any"


def shapes() -> dict[str, dict[str, set[str]]]:
    """key -> shape -> the schemas (and places) where the key has it."""
    docs = _load()
    found: dict[str, dict[str, set[str]]] = {}

    def walk(node: Any, here: str, where: str, depth: int) -> None:
        if depth > 40:
            return
        if isinstance(node, dict):
            for name, sub in (node.get("properties") or {}).items():
                found.setdefault(name, {}).setdefault(shape(sub, here, docs), set()).add(f"{here}:{where}/{name}")
            for k, v in node.items():
                if k != "$ref":
                    walk(v, here, f"{where}/{k}", depth + 1)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, here, f"{where}/{i}", depth + 1)

    for name, doc in docs.items():
        walk(doc, name, "", 0)
    return found


def test_the_walk_sees_the_decided_keys() -> None:
    got = shapes()
    for key in DECIDED:
        assert key in got, f"no schema has {key!r}: the test would be vacuous"


def test_decided_keys_have_their_decided_shape() -> None:
    got = shapes()
    for key, want in DECIDED.items():
        if key in PENDING:
            continue
        wrong = {s: sorted(w) for s, w in got.get(key, {}).items() if kind(s) != kind(want) or (
            key != "driver" and s.replace("null|", "").replace("|null", "") != want.replace("|null", ""))}
        # a driver object may carry more than path and version (doctor's full report): its shape must contain them
        if key == "driver":
            wrong = {s: w for s, w in wrong.items() if not ("object{" in s and all(
                f in s.split("{", 1)[1] for f in ("path", "version")))}
        assert not wrong, f"{key}: decided {want}, but {wrong}"


def kind(s: str) -> str:
    """A shape's kind: null dropped (a key may be nullable), objects' members dropped (`entries` of a check and
    of a generate report are different records), arrays by their items' kind."""
    import re

    s = re.sub(r"object\{[^{}]*\}", "object", s)
    while re.search(r"object\{", s):
        s = re.sub(r"object\{[^{}]*\}", "object", s)
    parts = sorted({p for p in s.split("|") if p != "null"} or {"null"})
    return "|".join(parts)


def test_one_kind_per_key_across_schemas() -> None:
    got = shapes()
    conflicts = {k: {s: sorted(w)[:3] for s, w in v.items()} for k, v in got.items()
                 if len({kind(s) for s in v} - {"null"}) > 1 and k not in PENDING and k not in DECIDED}
    assert not conflicts, json.dumps(conflicts, indent=1)[:6000]


def test_pending_entries_are_still_pending() -> None:
    got = shapes()
    for key in PENDING:
        assert len(got.get(key, {})) > 1 or (key in DECIDED and set(got.get(key, {})) != {DECIDED[key]}), \
            f"{key} has one shape now: remove it from PENDING"
