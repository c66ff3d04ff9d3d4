"""Every ```python example of README.md and docs/ runs against the fake driver, and succeeds (issue 25.1).

A page's examples run in order in one fresh interpreter (a reader types them one after another), in a
scratch directory, with `$CUENTRY_DRIVER` set to cuentry's fake driver at 13.0 and no GPU. An example
"succeeds" when the interpreter exits 0: the examples call `.checked(...)` and `assert`, so a failed
CUresult (the tutorial's old CUDA_ERROR_INVALID_CONTEXT) fails the test.

A comment line right before a block says how it runs, when not that way:

* `<!-- example: pytest -->`: the block is a test file; it runs under pytest (with cuentry's plugin) and
  every test in it must pass;
* `<!-- example: file NAME -->` (any language): the block is written to NAME in the scratch directory
  before the page's examples run;
* `<!-- example: repo -->`: the page's examples run in the repository root (they read docs/ files);
* `<!-- example: skip REASON -->`: not run, with the reason shown in the page's source.

Pages owned elsewhere that cannot run yet are listed in PENDING, each with why; the list may only shrink.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_FENCE = re.compile(r"(?:^<!-- example: (?P<directive>[^>]*?) -->\n)?^```(?P<lang>[\w+-]*)\n(?P<body>.*?)^```",
                    re.S | re.M)

# (page, index of the python block on the page): why it cannot run here yet. Owners: trace/emulate.
PENDING: dict[tuple[str, int], str] = {
    ("docs/emulate.md", 0): "runs `./app` and pytest under emulation: needs a program to run (trace/emulate's page)",
    ("docs/trace.md", 0): "traces `python app.py`: needs the app (trace/emulate's page)",
}

# Files a page's examples read that the page shows without a `file` directive (pages owned elsewhere):
# page -> {file name: (page holding it, index among that page's blocks of that language, language)}.
FILES: dict[str, dict[str, tuple[str, int, str]]] = {
    "docs/manifest.md": {"acme.toml": ("docs/manifest.md", 0, "toml")},
}


@dataclass(frozen=True)
class Block:
    page: str
    index: int  # among the page's python blocks
    lang: str
    body: str
    directive: str


def blocks(page: Path) -> list[Block]:
    rel = str(page.relative_to(ROOT))
    out: list[Block] = []
    n = 0
    for m in _FENCE.finditer(page.read_text(encoding="utf-8")):
        lang = m["lang"]
        out.append(Block(rel, n if lang == "python" else -1, lang, m["body"], (m["directive"] or "").strip()))
        n += lang == "python"
    return out


def _python(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.lang == "python"]


def _env(fake: dict[str, str], tmp: Path) -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_")}
    env.update({"CUENTRY_DRIVER": fake["full"], "CUENTRY_FAKE_DRIVER_VERSION": "13000",
                "XDG_CACHE_HOME": str(tmp / "cache"), "PATH": f"{bindir}{os.pathsep}{env.get('PATH', '')}",
                # the hand-written ctypes loader of the tutorial opens "libcuda.so.1" by name
                "LD_LIBRARY_PATH": str(Path(fake["full"]).parent), "PYTHONDONTWRITEBYTECODE": "1"})
    return env


PAGES_WITH_PYTHON = [p for p in PAGES if _python(p)]


def test_the_examples_are_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in PAGES_WITH_PYTHON}
    assert {"README.md", "docs/tutorials/python-library.md", "docs/zh.md"} <= names
    for page, index in PENDING:
        assert any(b.index == index for b in _python(ROOT / page)), f"PENDING names no block: {page} #{index}"


def test_every_directive_is_known() -> None:
    for page in PAGES:
        for b in blocks(page):
            d = b.directive
            assert d in ("", "pytest", "repo") or re.fullmatch(r"file [\w./-]+|skip \S.*", d), (b.page, d)
            if d.startswith("skip"):
                assert len(d.split(None, 1)[1]) > 10, f"{b.page}: a skipped example needs its reason"


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run_and_succeed(page: Path, fake: dict[str, str], tmp_path: Path) -> None:
    all_blocks = blocks(page)
    work = tmp_path / "work"
    work.mkdir()
    for b in all_blocks:
        if b.directive.startswith("file "):
            target = work / b.directive.split(None, 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.body)
    for name, (src, index, lang) in FILES.get(str(page.relative_to(ROOT)), {}).items():
        (work / name).write_text([b for b in blocks(ROOT / src) if b.lang == lang][index].body)
    runnable = [b for b in all_blocks if b.lang == "python" and not b.directive.startswith(("skip", "file"))
                and (b.page, b.index) not in PENDING]
    script = [b for b in runnable if b.directive != "pytest"]
    tests = [b for b in runnable if b.directive == "pytest"]
    if not script and not tests:
        pytest.skip(f"{page.name}: every example is skipped or pending, with its reason")
    env = _env(fake, tmp_path)
    repo = any(b.directive == "repo" for b in all_blocks)
    if script:
        code = "\n".join(f"# --- {b.page} example {b.index}\n{b.body}" for b in script)
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT if repo else work, env=env, capture_output=True,
                           text=True, timeout=300, check=False)
        assert r.returncode == 0, f"{page}: the examples failed:\n{code}\n--- stderr:\n{r.stderr[-4000:]}"
    for b in tests:
        _run_as_tests(b, work, env)


def _run_as_tests(b: Block, work: Path, env: dict[str, str]) -> None:
    d = work / f"t{b.index}"
    d.mkdir()
    (d / f"test_example_{b.index}.py").write_text(b.body)
    # what the examples run, as a reader's project would have it
    (d / "mylib").mkdir()
    (d / "mylib" / "__init__.py").write_text("")
    (d / "mylib" / "selftest.py").write_text("import cuentry\nassert cuentry.Driver.load().driver_version\n")
    env = {**env, "PYTHONPATH": str(d)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                        "-W", "error::pytest.PytestUnknownMarkWarning", "-rs", str(d)],
                       cwd=d, env=env, capture_output=True, text=True, timeout=300, check=False)
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0 and " passed" in summary and "failed" not in summary and "error" not in summary, \
        f"{b.page} example {b.index} as tests:\n{b.body}\n{r.stdout[-4000:]}\n{r.stderr[-2000:]}"


def _docstring_examples() -> list[tuple[str, str, str]]:
    """(module file, language, body) of every fenced example in a docstring of src/cuentry (the API page's)."""
    import ast

    found = []
    for p in sorted((ROOT / "src" / "cuentry").rglob("*.py")):
        if p.name == "_catalog_data.py":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node) or ""
                for m in re.finditer(r"^```(\w*)\n(.*?)^```", doc, re.S | re.M):
                    found.append((str(p.relative_to(ROOT)), m[1], m[2]))
    return found


def test_docstring_examples_name_their_language_and_run(fake: dict[str, str], tmp_path: Path) -> None:
    """The examples the API page shows (module and class docstrings) are highlighted and do what they say: each
    ```python one runs against the fake driver, each ```toml one is a manifest that loads."""
    from cuentry import manifest

    examples = _docstring_examples()
    files = {f for f, _, _ in examples}
    assert {"src/cuentry/table.py", "src/cuentry/manifest.py", "src/cuentry/context.py"} <= files, files
    for f, lang, body in examples:
        assert lang in ("python", "toml"), f"{f}: an example without its language (```python, ```toml)"
        if lang == "toml":
            assert manifest.loads(body).entries, f
            continue
        r = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=_env(fake, tmp_path), capture_output=True,
                           text=True, timeout=300, check=False)
        assert r.returncode == 0, f"{f}: the example failed:\n{body}\n{r.stderr[-3000:]}"
