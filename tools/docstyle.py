"""Convert Sphinx/reST docstrings to the project's style: Google sections and mkdocstrings/autorefs links.

    python tools/docstyle.py [--check] [--api docs/api.md] PATH...

What changes, inside docstrings only (module, class and function docstrings, found with `ast`):

* roles `:class:`X``, `:func:`, `:meth:`, `:mod:`, `:attr:`, `:exc:`, `:data:`, `:obj:`, `:const:` become
  autorefs links `[X][cuentry.mod.X]` when the target is an object the API pages render (docs/api.md's
  `:::` blocks and their members), else plain code `` `X` `` (a link to a page that does not exist would fail
  the strict build). `~pkg.mod.X` shows `X`; `.mod` and bare names are resolved against the module's own
  names and imports; `cuentry.X` through the package's lazy exports;
* ``double backticks`` become `single backticks`;
* field lists become sections: `:param x: ...` (also `:arg:`, `:key:`, `:keyword:`) -> `Args:`,
  `:returns:`/`:return:` -> `Returns:`, `:raises X: ...` -> `Raises:`, `:yields:` -> `Yields:`;
  `:type x:` and `:rtype:` are dropped (the annotations say it).

It is idempotent (a converted docstring has nothing left to convert) and only rewrites the docstring's text
between its quotes. `--check` changes nothing and exits 1 when a file would change. Exit 2 on a file that does
not parse.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|attr|exc|data|obj|const):`(~?)([^`<>]+?)(?:\s*<([^`>]+)>)?`")
DOUBLE = re.compile(r"``([^`\n]+?)``")
FIELD = re.compile(r"^(?P<indent>[ \t]*):(?P<kind>param|parameter|arg|argument|key|keyword|type|returns?|rtype|"
                   r"raises?|except|exception|yields?|ytype)(?P<arg>[^:]*):[ \t]?(?P<text>.*)$")
SECTIONS = {"param": "Args", "parameter": "Args", "arg": "Args", "argument": "Args", "key": "Args",
            "keyword": "Args", "returns": "Returns", "return": "Returns", "raises": "Raises", "raise": "Raises",
            "except": "Raises", "exception": "Raises", "yields": "Yields", "yield": "Yields"}
DROPPED = {"type", "rtype", "ytype"}
ORDER = ("Args", "Returns", "Yields", "Raises")


@dataclass
class Rendered:
    """What the API pages render: identifiers autorefs can link to."""

    modules: set[str] = field(default_factory=set)
    objects: set[str] = field(default_factory=set)
    classes: dict[str, set[str]] = field(default_factory=dict)  # rendered class -> the members it defines itself

    def has(self, target: str) -> bool:
        if target in self.modules or target in self.objects:
            return True
        owner, _, attr = target.rpartition(".")
        # mkdocstrings renders a class's own public members, not inherited ones
        return not attr.startswith("_") and attr in self.classes.get(owner, set())


def rendered_from_api(page: Path, src: Path) -> Rendered:
    """Read docs/api.md's `::: module` blocks and their `members: [...]` lists."""
    out = Rendered()
    if not page.exists():
        return out
    text = page.read_text(encoding="utf-8")
    for m in re.finditer(r"^::: ([\w.]+)\n((?:[ \t]+.*\n)*)", text, re.M):
        mod, opts = m[1], m[2]
        out.modules.add(mod)
        members = re.search(r"members:\s*\[([^\]]*)\]", opts)
        names = [n.strip() for n in members[1].split(",")] if members else _public_names(mod, src)
        for n in names:
            if n:
                out.objects.add(f"{mod}.{n}")
        for cls, members in _classes(mod, src).items():
            if f"{mod}.{cls}" in out.objects:
                out.classes[f"{mod}.{cls}"] = members
    return out


def _module_file(mod: str, src: Path) -> Path | None:
    base = src.joinpath(*mod.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.exists():
            return p
    return None


def _tree(mod: str, src: Path) -> ast.Module | None:
    p = _module_file(mod, src)
    return ast.parse(p.read_text(encoding="utf-8")) if p else None


def _public_names(mod: str, src: Path) -> list[str]:
    tree = _tree(mod, src)
    if tree is None:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
            names.append(node.name)
    return names


def _classes(mod: str, src: Path) -> dict[str, set[str]]:
    """Each top-level class of `mod` and the names its own body defines (methods, attributes)."""
    tree = _tree(mod, src)
    out: dict[str, set[str]] = {}
    for n in tree.body if tree else []:
        if isinstance(n, ast.ClassDef):
            names: set[str] = set()
            for b in n.body:
                if isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(b.name)
                elif isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                    names.add(b.target.id)
                elif isinstance(b, ast.Assign):
                    names |= {t.id for t in b.targets if isinstance(t, ast.Name)}
            out[n.name] = names
    return out


class Scope:
    """How bare and relative names resolve in one module: its definitions, its imports, the package's exports."""

    def __init__(self, module: str, tree: ast.Module, exports: dict[str, str], *, is_package: bool = False) -> None:
        self.module = module
        self.is_package = is_package
        self.names: dict[str, str] = {}
        self.exports = exports
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module or "", node.level)
                for a in node.names:
                    self.names.setdefault(a.asname or a.name, f"{base}.{a.name}" if base else a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    self.names.setdefault(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                self.names[node.name] = f"{module}.{node.name}"
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.names[t.id] = f"{module}.{t.id}"

    def _absolute(self, name: str, level: int) -> str:
        if level == 0:
            return name
        parts = self.module.split(".")
        base = parts[: len(parts) - level + (1 if self.is_package else 0)]
        return ".".join([*base, name] if name else base)

    def resolve(self, target: str, owner_class: str | None) -> str:
        if target.startswith("."):
            level = len(target) - len(target.lstrip("."))
            return self._absolute(target.lstrip("."), level)
        head, _, rest = target.partition(".")
        if head == "cuentry" and rest:
            first, _, tail = rest.partition(".")
            if first in self.exports:
                return f"{self.exports[first]}.{first}" + (f".{tail}" if tail else "")
            return target
        if head in self.names:
            return self.names[head] + (f".{rest}" if rest else "")
        if owner_class and not rest:
            return f"{self.module}.{owner_class}.{target}"
        return target


def _exports(src: Path) -> dict[str, str]:
    init = src / "cuentry" / "__init__.py"
    if not init.exists():
        return {}
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
    return {}


def convert_roles(text: str, scope: Scope | None, owner_class: str | None, rendered: Rendered) -> str:
    def role(m: re.Match[str]) -> str:
        kind, tilde, shown, explicit = m[1], m[2], m[3].strip(), m[4]
        target = (explicit or shown).strip().lstrip("~")
        label = shown.lstrip("~")
        if tilde:
            label = label.rsplit(".", 1)[-1]
        if explicit:
            label = shown
        full = scope.resolve(target, owner_class if kind in ("meth", "attr") else None) if scope else target
        if rendered.has(full):
            return f"[{label}][{full}]"
        return f"`{label}`"

    text = ROLE.sub(role, text)
    return DOUBLE.sub(lambda m: f"`{m[1]}`", text)


def convert_fields(text: str) -> str:
    """`:param x: ...` and friends -> Google sections, at the place of the first field."""
    lines = text.split("\n")
    out: list[str] = []
    sections: dict[str, list[str]] = {}
    at: int | None = None
    indent = ""
    i = 0
    while i < len(lines):
        m = FIELD.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        if at is None:
            at, indent = len(out), m["indent"]
        body = [m["text"].strip()]
        i += 1
        while i < len(lines) and lines[i].strip() and not FIELD.match(lines[i]) and \
                len(lines[i]) - len(lines[i].lstrip()) > len(m["indent"]):
            body.append(lines[i].strip())
            i += 1
        kind = m["kind"]
        if kind in DROPPED:
            continue
        section = SECTIONS[kind]
        arg = m["arg"].split()[-1] if m["arg"].split() else ""
        desc = " ".join(b for b in body if b)
        entry = f"{arg}: {desc}" if arg else desc
        sections.setdefault(section, []).append(entry)
    if at is None:
        return text
    block: list[str] = []
    for name in ORDER:
        if name in sections:
            if block and block[-1].strip():
                block.append("")
            block.append(f"{indent}{name}:")
            block.extend(f"{indent}    {e}" for e in sections[name])
    if at > 0 and out[at - 1].strip():  # a section starts after a blank line
        block.insert(0, "")
    tail = out[at:]
    if tail and tail[0].strip():  # and text after it is a paragraph of its own
        block.append("")
    return "\n".join(out[:at] + block + tail)


def _docstring_nodes(tree: ast.Module) -> list[tuple[ast.Constant, str | None]]:
    found: list[tuple[ast.Constant, str | None]] = []

    def first(body: list[ast.stmt]) -> ast.Constant | None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[0].value
        return None

    def walk(node: ast.AST, cls: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                c = first(child.body)
                if c is not None:
                    found.append((c, child.name))
                walk(child, child.name)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                c = first(child.body)
                if c is not None:
                    found.append((c, cls))
                walk(child, None)
            elif isinstance(child, ast.stmt):  # `if TYPE_CHECKING:`, try/except, with: definitions inside them
                walk(child, cls)

    c = first(tree.body)
    if c is not None:
        found.append((c, None))
    walk(tree, None)
    return found


def _offset(lines: list[str], lineno: int, col: int) -> int:
    return sum(len(line) for line in lines[: lineno - 1]) + len(lines[lineno - 1].encode()[:col].decode())


def module_name(path: Path, src: Path) -> tuple[str | None, bool]:
    """(dotted module name, whether it is a package's __init__) of a file under `src`."""
    try:
        rel = path.resolve().relative_to(src.resolve())
    except ValueError:
        return None, False
    parts = list(rel.with_suffix("").parts)
    is_package = bool(parts) and parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def convert_source(text: str, module: str | None, rendered: Rendered, exports: dict[str, str], *,
                   is_package: bool = False) -> str:
    """The file's text with every docstring converted (see the module's docstring)."""
    tree = ast.parse(text)
    scope = Scope(module, tree, exports, is_package=is_package) if module else None
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node, cls in _docstring_nodes(tree):
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        start = _offset(lines, node.lineno, node.col_offset)
        end = _offset(lines, node.end_lineno, node.end_col_offset)
        literal = text[start:end]
        m = re.match(r"(?is)([rbuf]*)(\"\"\"|'''|\"|')", literal)
        if not m or "b" in m[1].lower() or "f" in m[1].lower():
            continue
        q = m[2]
        inner = literal[len(m[0]): len(literal) - len(q)]
        new = convert_fields(convert_roles(inner, scope, cls, rendered))
        if new != inner:
            edits.append((start + len(m[0]), end - len(q), new))
    for s, e, new in sorted(edits, reverse=True):
        text = text[:s] + new + text[e:]
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 when a file would change")
    p.add_argument("--api", type=Path, default=ROOT / "docs" / "api.md", help="the API page (what is rendered)")
    p.add_argument("--src", type=Path, default=ROOT / "src", help="the source root (module names)")
    args = p.parse_args(argv)
    rendered = rendered_from_api(args.api, args.src)
    exports = _exports(args.src)
    files = [f for path in args.paths for f in ([path] if path.is_file() else sorted(path.rglob("*.py")))]
    changed = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        try:
            mod, is_package = module_name(f, args.src)
            new = convert_source(text, mod, rendered, exports, is_package=is_package)
        except SyntaxError as exc:
            print(f"{f}: cannot parse: {exc}", file=sys.stderr)
            return 2
        if new != text:
            changed += 1
            print(f"{'would convert' if args.check else 'converted'} {f}")
            if not args.check:
                f.write_text(new, encoding="utf-8")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
