"""`--output-format json` (`--json`): the report as one JSON document (schema: docs/schemas/lint.schema.json)."""

from __future__ import annotations

import json

from ._base import Rendered, Run, Style, valid_json

__all__ = ["render"]


def render(run: Run, style: Style) -> Rendered:
    return Rendered([json.dumps(valid_json(run.report.to_dict()), indent=2)])
