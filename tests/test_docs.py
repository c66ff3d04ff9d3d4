"""The documentation's examples do what the pages say (the site itself is built strictly in CI)."""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path
from typing import Any

import pytest

from cuentry.cli import main

DOCS = Path(__file__).resolve().parent.parent / "docs"
pytest_plugins = ["pytester"]
# Inner sessions: no cache files, and not hypothesis's plugin (its summary imports hypothesis: ~2 s).
INNER = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def _blocks(page: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue() + err.getvalue()


def test_hand_written_loader_has_the_faults_the_tutorial_names(tmp_path: Path) -> None:
    src = tmp_path / "handwritten.py"
    src.write_text(_blocks("tutorials/python-library.md", "python")[0])
    code, text = _cli("lint", str(src))
    assert code == 1
    assert set(re.findall(r" (CE\d{3}) ", text)) == {"CE001", "CE004", "CE006"}


def test_gate_tutorial_manifest(fake: dict[str, str], fake_version: Any, tmp_path: Path) -> None:
    m = tmp_path / "acme.toml"
    m.write_text(_blocks("tutorials/gate-deployment.md", "toml")[0])
    fake_version(12040)
    code, text = _cli("check", str(m), "--driver", fake["full"])
    assert code == 0 and "minimum driver for the required entries: 10.1 (10010)" in text
    shown = re.search(r"```console\n\$ cuentry check acme.toml\n(.*?)```",
                      (DOCS / "tutorials" / "gate-deployment.md").read_text(), re.S)
    assert shown and text == shown[1].replace("acme.toml: table", f"{m}: table", 1), text  # the page's, pasted
    fake_version(10000)  # a 10.0 driver has no cuGetProcAddress: the variant of that release
    assert _cli("check", str(m), "--driver", fake["nogpa"])[0] == 1


def test_emulate_tutorial_fake_driver_example(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(_blocks("tutorials/emulate.md", "python")[0])
    pytester.runpytest(*INNER).assert_outcomes(passed=4)


def test_nav_hook_drops_only_missing_pages(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", DOCS.parent / "tools" / "mkdocs_hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    (tmp_path / "a.md").write_text("# a")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "b.md").write_text("# b")
    nav = [{"A": "a.md"}, {"Gone": "gone.md"}, "a.md", "missing.md", {"Ext": "https://example.org/x.md"},
           {"T": [{"B": "t/b.md"}, {"C": "t/c.md"}]}, {"Empty": [{"D": "d.md"}]}]
    cfg = hooks.on_config({"nav": nav, "docs_dir": str(tmp_path)})
    assert cfg["nav"] == [{"A": "a.md"}, "a.md", {"Ext": "https://example.org/x.md"}, {"T": [{"B": "t/b.md"}]}]


def test_every_page_in_the_nav_or_dropped_is_a_known_page() -> None:
    yaml = pytest.importorskip("yaml")
    text = (DOCS.parent / "mkdocs.yml").read_text()
    cfg = yaml.safe_load(text)
    pages: list[str] = []

    def walk(items: list[Any]) -> None:
        for it in items:
            v = next(iter(it.values())) if isinstance(it, dict) else it
            walk(v) if isinstance(v, list) else pages.append(v)

    walk(cfg["nav"])
    mine = [p for p in pages if (DOCS / p).exists()]
    # Every page written for the site is reachable from the nav.
    written = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert written <= set(pages), written - set(pages)
    assert "index.md" in mine and "api.md" in mine and "zh.md" in mine


def test_cpp_tutorial_builds_and_runs_as_written(tmp_path: Path) -> None:
    """The C++ tutorial's files, its build-and-run commands as written (against the fake driver) and the output
    it shows: the snippet calls cuInit, makes a context current and checks every CUresult."""
    import os
    import shutil
    import subprocess
    import sys

    if shutil.which("c++") is None or shutil.which("cc") is None:
        pytest.skip("no C/C++ compiler")
    page = "tutorials/cpp-loader.md"
    (tmp_path / "acme.toml").write_text(_blocks(page, "toml")[0])
    impl, main_cpp = _blocks(page, "cpp")[:2]
    assert impl.startswith("// acme_loader.cpp") and main_cpp.startswith("// main.cpp")
    (tmp_path / "acme_loader.cpp").write_text(impl)
    (tmp_path / "main.cpp").write_text(main_cpp)
    build = next(b for b in _blocks(page, "sh") if "./acme_demo" in b)
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", CUENTRY_FAKE_DRIVER_VERSION="13000",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", build], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    shown = re.search(r"```sh\n[^`]*\./acme_demo\n```\n\n```text\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert shown and r.stdout == shown[1], (r.stdout, shown and shown[1])


def test_every_logger_is_documented() -> None:
    """docs/logging.md names every logger the library creates (all under `cuentry`)."""
    src = DOCS.parent / "src" / "cuentry"
    names = set()
    for p in src.rglob("*.py"):
        names |= set(re.findall(r"getLogger\(\s*[\"']([\w.]+)[\"']\s*\)", p.read_text()))
    assert names, "no logger found: the test would be vacuous"
    page = (DOCS / "logging.md").read_text()
    for n in names:
        assert n == "cuentry" or n.startswith("cuentry."), n
        assert f"`{n}`" in page, f"logger {n} is not in docs/logging.md"


def test_commands_page_covers_every_command() -> None:
    """docs/commands.md has a section and a --help placeholder for each command the parser has."""
    from cuentry.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    page = (DOCS / "commands.md").read_text()
    for cmd in sub.choices:
        assert f"\n## {cmd}\n" in page, cmd
        assert f"<!-- cuentry-help: {cmd} -->" in page, cmd


def test_lint_tutorial_lists_every_rule() -> None:
    from cuentry.lint.rules import RULES

    page = (DOCS / "tutorials" / "lint-and-trace.md").read_text()
    for r in RULES:
        assert f"| {r.code} |" in page, r.code


# The command CI (.ci/run) and the docs workflow run, and the one the README documents: never `-q` (mkdocs's
# -q drops warnings before --strict counts them, so a strict build with -q can never fail on one).
MKDOCS_BUILD = ("mkdocs", "build", "--strict")


def _mkdocs(cwd: Path, *extra: str) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", *MKDOCS_BUILD, *extra], cwd=cwd, capture_output=True, text=True,
                          timeout=600, check=False)


needs_mkdocs = pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None
                                  or importlib.util.find_spec("mkdocstrings") is None,
                                  reason="the [docs] extra is not installed (pip install -e '.[docs]')")


def test_ci_builds_the_site_strictly_without_quiet() -> None:
    """.ci/run and the workflows build with --strict and never with -q (which would hide the warnings)."""
    files = [DOCS.parent / ".ci" / "run", *(DOCS.parent / ".github" / "workflows").glob("*.yml")]
    seen = 0
    for f in files:
        for line in f.read_text().splitlines():
            if re.match(r"\s*(?:-\s*run:\s*)?mkdocs build\b", line):
                seen += 1
                words = line.split("#")[0].split()
                assert "--strict" in words and "-q" not in words and "--quiet" not in words, f"{f}: {line}"
    assert seen >= 3, seen  # .ci/run, docs.yml, release.yml


@needs_mkdocs
def test_a_warning_fails_the_strict_build(tmp_path: Path) -> None:
    """The check below can fail: a page with a broken reference makes the same command exit non-zero."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# x\n\nSee [nothing](missing.md) and [gone][cuentry.nothing].\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nplugins:\n  - autorefs\n")
    r = _mkdocs(tmp_path, "-d", str(tmp_path / "site"))
    assert r.returncode != 0 and "WARNING" in r.stderr and "Aborted with 2 warnings" in r.stdout + r.stderr, r.stderr


@needs_mkdocs
def test_the_site_builds_strictly_with_highlighted_examples(tmp_path: Path) -> None:
    """`mkdocs build --strict` from the repository passes with no warning; the API page has no stray `::`
    (a reST literal block mkdocstrings does not know) and every example on it names its language."""
    site = tmp_path / "site"
    r = _mkdocs(DOCS.parent, "-d", str(site))
    assert r.returncode == 0 and "WARNING" not in r.stderr, r.stderr[-4000:]
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "<p>::</p>" not in api and not re.search(r"<p>[^<]*::</p>", api)
    blocks = re.findall(r"<pre><code(?: class=\"([^\"]*)\")?>", api)
    assert blocks and all(c and c.startswith("language-") for c in blocks), blocks
    # Every example of every page names a language the site's highlight.js knows (its common build, and the
    # theme's hljs_languages): an unnamed block is guessed at, a language it lacks is shown plain.
    import yaml

    extra = yaml.safe_load((DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8"))["theme"].get("hljs_languages", [])
    known = HLJS_COMMON | set(extra)
    unnamed, unknown = [], []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        if rel.startswith(("lint/", "404")):  # the lint pages are another piece of issue 41's (rule pages)
            continue
        for c in re.findall(r"<pre><code(?: class=\"([^\"]*)\")?>", page.read_text(encoding="utf-8")):
            if not c.startswith("language-"):
                unnamed.append(rel)
            elif c.removeprefix("language-") not in known:
                unknown.append((rel, c))
    assert not unnamed and not unknown, (unnamed, unknown)


# highlight.js 11's common build (what the readthedocs theme loads) and the aliases the pages use.
HLJS_COMMON = {"bash", "sh", "c", "h", "cpp", "cc", "c++", "hpp", "cxx", "diff", "ini", "toml", "json", "makefile",
               "markdown", "md", "plaintext", "text", "txt", "python", "py", "python-repl", "pycon", "shell", "console",
               "yaml", "yml", "xml", "html", "javascript", "js", "sql"}
