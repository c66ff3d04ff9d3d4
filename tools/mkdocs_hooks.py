"""MkDocs hooks for cuentry's site.

* on_config: drop nav entries whose page does not exist (yet), so `mkdocs build
  --strict` passes on any branch. Pages owned by other parts of the project (the
  conversion table, the lint rules, ...) are named in mkdocs.yml's nav from the
  start; a branch that lacks one builds without it, and the log names it.
* on_page_markdown: replace ``<!-- cuentry-help: COMMAND -->`` with that
  command's ``--help`` text, taken from the installed cuentry's parser, so the
  commands page cannot drift from the code. An unknown command fails the build.
* on_files / on_config: one page per lint rule (``rules/ce001.md`` ...) and their
  index, written from the rules' own definitions (``cuentry.lint.rules.page``, what
  ``cuentry lint --explain`` prints), under "Lint rules" in the nav.
"""

from __future__ import annotations

import io
import logging
import os
import re
from typing import Any

log = logging.getLogger("mkdocs.plugins.cuentry")


def _prune(items: list[Any], docs_dir: str, dropped: list[str]) -> list[Any]:
    kept: list[Any] = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                sub = _prune(value, docs_dir, dropped)
                if sub:
                    kept.append({title: sub})
                continue
            if isinstance(value, str) and value.endswith(".md") and "://" not in value \
                    and not os.path.exists(os.path.join(docs_dir, value)):
                dropped.append(value)
                continue
        elif isinstance(item, str) and item.endswith(".md") and not os.path.exists(os.path.join(docs_dir, item)):
            dropped.append(item)
            continue
        kept.append(item)
    return kept


def on_config(config: Any) -> Any:
    dropped: list[str] = []
    if config.get("nav"):
        config["nav"] = _rules_nav(_prune(list(config["nav"]), config["docs_dir"], dropped))
    if dropped:
        log.info("cuentry docs: not in this tree yet, left out of the nav: %s", ", ".join(dropped))
    return config


_LINT_PAGE = "lint.md"


def rule_pages() -> dict[str, str]:
    """Each rule's page (``rules/ce001.md``: what it finds, why, examples, its fix) and their index, from
    the rules' definitions."""
    from cuentry.lint.rules import RULES, page

    pages = {f"rules/{r.code.lower()}.md": page(r) for r in RULES}
    rows = "\n".join(f"| [{r.code}]({r.code.lower()}.md) | {r.name} | {r.summary} | "
                      f"{'yes' if r.fix is not None else 'no'} |" for r in RULES)
    pages["rules/index.md"] = ("# Lint rules\n\nEach rule of `cuentry lint`, one page each (`cuentry lint --explain "
                               "CODE` prints the same). The linter itself: [its reference](../lint.md).\n\n"
                               "| code | name | finds | fix |\n|---|---|---|---|\n" + rows + "\n")
    return pages


def _rules_nav(items: list[Any]) -> list[Any]:
    """The nav with the rule pages under the entry of the lint reference (it becomes a section: the
    reference, the index, then one page per rule)."""
    from cuentry.lint.rules import RULES

    out: list[Any] = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if value == _LINT_PAGE:
                item = {title: [_LINT_PAGE, {"All rules": "rules/index.md"},
                                *({f"{r.code} {r.name}": f"rules/{r.code.lower()}.md"} for r in RULES)]}
            elif isinstance(value, list):
                item = {title: _rules_nav(value)}
        out.append(item)
    return out


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in rule_pages().items():
        files.append(File.generated(config, path, content=text))
    return files


_HELP = re.compile(r"<!-- cuentry-help: ([a-z-]+) -->")


def command_help(command: str) -> str:
    """``cuentry COMMAND --help`` as the parser prints it, 100 columns wide."""
    import contextlib

    from cuentry.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        buf = io.StringIO()
        if command == "cuentry":
            parser.print_help(buf)
        else:
            sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
            if command not in sub.choices:
                raise KeyError(f"docs: no cuentry command {command!r} (commands: {', '.join(sub.choices)})")
            with contextlib.redirect_stdout(buf):
                sub.choices[command].print_help(buf)
        return buf.getvalue().rstrip()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return _HELP.sub(lambda m: "```text\n" + command_help(m.group(1)) + "\n```", markdown)
