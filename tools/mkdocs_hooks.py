"""MkDocs hook: drop nav entries whose page does not exist (yet), so `mkdocs build --strict` passes on any branch.

Pages owned by other parts of the project (the conversion table, the lint
rules, trace, emulate, generate) are named in mkdocs.yml's nav from the start;
a branch that lacks one builds without it, and the build log names what was
dropped. Nothing else is changed.
"""

from __future__ import annotations

import logging
import os
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
        config["nav"] = _prune(list(config["nav"]), config["docs_dir"], dropped)
    if dropped:
        log.info("cuentry docs: not in this tree yet, left out of the nav: %s", ", ".join(dropped))
    return config
