"""`-` reads standard input (issue 25.3): the shared helper for `cuentry check -` and `cuentry lint -`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuentry.cli.inputs import STDIN_NAME, load_manifest, read_input, stdin_paths
from cuentry.errors import ManifestError, UsageError

MANIFEST = '[table]\nname = "acme"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n'


class Tty(io.BytesIO):
    def isatty(self) -> bool:
        return True


def test_manifest_from_stdin() -> None:
    m = load_manifest("-", stdin=io.BytesIO(("\ufeff" + MANIFEST).encode()))
    assert m.min_driver() == 3020


def test_a_bad_manifest_on_stdin_names_stdin_with_line_and_column() -> None:
    with pytest.raises(ManifestError) as ei:
        load_manifest("-", stdin=io.BytesIO(b'[table]\nname = "acme"\nstream = "sideways"\nrequired = ["x@1"]\n'))
    assert str(ei.value).startswith(f"{STDIN_NAME}:")


@pytest.mark.parametrize("data,needle", [(b"\xff\xfe", "not UTF-8"), (b"x" * ((1 << 20) + 1), "over 1 MiB")])
def test_stdin_refusals(data: bytes, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        read_input("-", what="manifest", stdin=io.BytesIO(data))
    with pytest.raises(ManifestError, match=needle):
        load_manifest("-", stdin=io.BytesIO(data))


def test_a_terminal_on_stdin_is_refused_not_waited_on() -> None:
    with pytest.raises(UsageError, match="terminal"):
        read_input("-", stdin=Tty(b""))


def test_a_file_is_read_with_the_manifest_readers_checks(tmp_path: Path) -> None:
    f = tmp_path / "m.toml"
    f.write_text(MANIFEST)
    assert read_input(str(f)) == (MANIFEST, str(f))
    with pytest.raises(ManifestError):
        read_input(str(tmp_path))  # a directory
    with pytest.raises(ManifestError):
        read_input("/dev/zero")


def test_stdin_paths_gives_a_private_file_and_removes_it() -> None:
    with stdin_paths(["a.c", "-"], suffix=".cu", stdin=io.BytesIO(b"int x;\n")) as paths:
        assert paths[0] == "a.c" and paths[1].endswith("stdin.cu")
        assert Path(paths[1]).read_text() == "int x;\n"
        assert os.stat(Path(paths[1]).parent).st_mode & 0o077 == 0
        kept = paths[1]
    assert not Path(kept).exists()
    with stdin_paths(["a.c"]) as paths:
        assert paths == ["a.c"]
    with pytest.raises(UsageError, match="more than once"), stdin_paths(["-", "-"], stdin=io.BytesIO(b"")):
        pass


def test_a_real_pipe(tmp_path: Path) -> None:
    code = ("import sys; from cuentry.cli.inputs import load_manifest; "
            "print(load_manifest('-').min_driver())")
    r = subprocess.run([sys.executable, "-c", code], input=MANIFEST, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0 and r.stdout.strip() == "3020", r.stderr


def test_check_reads_the_manifest_from_stdin(tmp_path: Path) -> None:
    from cuentry.testing import fakedriver

    lib = fakedriver.build()
    r = subprocess.run([sys.executable, "-m", "cuentry", "check", "-", "--driver", str(lib), "--json"],
                       input=MANIFEST, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["manifest"] == "-"
