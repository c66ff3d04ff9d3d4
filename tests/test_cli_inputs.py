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
from cuentry.manifest import MAX_BYTES

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


def test_a_file_and_stdin_share_one_limit_and_one_message(tmp_path: Path) -> None:
    f = tmp_path / "m.toml"
    f.write_bytes(b"#" * MAX_BYTES)  # exactly the limit: accepted from both
    assert read_input(str(f))[0] == read_input("-", stdin=io.BytesIO(f.read_bytes()))[0] == "#" * MAX_BYTES
    f.write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(ManifestError) as from_file:
        load_manifest(str(f))
    with pytest.raises(ManifestError) as from_stdin:
        load_manifest("-", stdin=io.BytesIO(f.read_bytes()))
    with pytest.raises(UsageError) as as_argument:
        read_input("-", what="manifest", stdin=io.BytesIO(f.read_bytes()))
    assert f"the manifest is {MAX_BYTES + 1} bytes, over 1 MiB (the limit is {MAX_BYTES} bytes)" in str(from_file.value)
    assert str(from_stdin.value).startswith(f"{STDIN_NAME}: the manifest is over 1 MiB (the limit is {MAX_BYTES} bytes)")
    assert from_file.value.hint == from_stdin.value.hint == as_argument.value.hint
    assert "at most 1 MiB: split it" in from_file.value.hint


def test_bad_utf8_on_stdin_is_placed_like_a_files(tmp_path: Path) -> None:
    data = b'[table]\nstream = "leg\xffacy"\n'
    f = tmp_path / "bad.toml"
    f.write_bytes(data)
    with pytest.raises(ManifestError) as from_file:
        load_manifest(str(f))
    with pytest.raises(ManifestError) as from_stdin:
        load_manifest("-", stdin=io.BytesIO(data))
    assert (from_file.value.line, from_file.value.column) == (from_stdin.value.line, from_stdin.value.column) == (2, 14)
    assert str(from_stdin.value).startswith(f"{STDIN_NAME}:2:14: the manifest is not UTF-8 (byte 0xff)")


def test_lint_stdin_has_a_linted_files_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from cuentry.lint import engine

    monkeypatch.setattr(engine, "MAX_FILE_BYTES", 8)  # read where it is used: the lint engine owns it
    with pytest.raises(UsageError, match="the source is over 8 bytes, the limit"), \
            stdin_paths(["-"], stdin=io.BytesIO(b"int x; /**/\n")):
        pass
    with stdin_paths(["-"], stdin=io.BytesIO(b"int x;\n")) as paths:
        assert Path(paths[0]).read_text() == "int x;\n"


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
