"""The driver floor on the real driver: check, the table and the generated module agree with it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from cuentry import Driver, Table
from cuentry import manifest as manifest_mod
from cuentry.cli import main
from cuentry.generate import generate_python

from ..manifests import CHAIN

pytestmark = pytest.mark.gpu


def test_a_required_chain_resolves_on_the_real_driver_at_its_floor(real: Driver, tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(CHAIN)
    m = manifest_mod.load(path)
    assert m.min_driver() == 3020
    version = real.driver_version or 0
    want = 12050 if version >= 12050 else (11040 if version >= 11040 else 3020)
    t = Table.from_manifest(m, source=real).resolve()
    assert t.min_driver() == 3020 and t.cuCtxCreate.abi.version == want
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(path), "--driver", real.path, "--json"], stdout=out, stderr=err) == 0
    doc = json.loads(out.getvalue())
    assert doc["ok"] is True and doc["min_driver"] == 3020 and doc["driver"]["version"] == version
    ns: dict[str, Any] = {"__name__": "x_table"}
    exec(compile(generate_python(m), "x_table.py", "exec"), ns)
    g = ns["table"](source=real).resolve()
    assert ns["MIN_DRIVER"] == 3020 and g.cuCtxCreate.abi.version == want
