"""The release, checked and rehearsed locally: what .github/workflows/release.yml does for a tag, without publishing.

    python tools/release.py check [--tag vX.Y.Z]     the version's one source, its CHANGELOG section, the tag
    python tools/release.py sdist-files SDIST        the sdist holds exactly the files git tracks (+ PKG-INFO)
    python tools/release.py dry-run [--out DIR] [--no-docs]

`dry-run` takes the files git tracks (as a fresh clone has them, with their working-tree contents) into a
scratch folder and there: checks the version, the changelog and the tag it would push; builds the sdist and
lists it against git; builds the pure wheel (CUENTRY_NO_COMPILE=1) and reads its metadata; lists the native
wheels cibuildwheel would build (pyproject.toml [tool.cibuildwheel]); builds the documentation site strictly
(`mkdocs build --strict`, as the docs job does before `mike deploy`); then prints what a tag would publish.
Nothing is uploaded, tagged or pushed. Exit status: 0 ready, 1 not (each reason printed), 2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION_FILE = "src/cuentry/__init__.py"   # [tool.hatch.version] path: the one place the version is written
_VERSION = re.compile(r'^__version__\s*=\s*"([^"]+)"', re.M)
_SEMVER = re.compile(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?")
GENERATED_IN_SDIST = {"PKG-INFO"}         # what the sdist adds to the tracked files


def source_version(root: Path = ROOT) -> str:
    """`__version__` of the package source (what hatch writes into the metadata)."""
    m = _VERSION.search((root / VERSION_FILE).read_text(encoding="utf-8"))
    if not m:
        raise SystemExit(f"release: no __version__ = \"X.Y.Z\" line in {VERSION_FILE}")
    return m.group(1)


def tracked_files(root: Path = ROOT) -> list[str]:
    """The files git tracks that exist in the working tree (what a clean checkout of it holds)."""
    r = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"release: not a git checkout: {r.stderr.strip()}")
    return sorted(p for p in r.stdout.split("\0") if p and (root / p).is_file())


def check(root: Path = ROOT, tag: str | None = None) -> list[str]:
    """What stops a release of this source (empty: nothing): version, pyproject, changelog, tag."""
    problems = []
    version = source_version(root)
    if not _SEMVER.fullmatch(version):
        problems.append(f"version {version!r} in {VERSION_FILE} is not X.Y.Z (or X.Y.ZaN/bN/rcN)")
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    if "version" in project["project"] or project["project"].get("dynamic") != ["version"]:
        problems.append("pyproject.toml writes a version: it must be dynamic = [\"version\"], read from "
                        f"{VERSION_FILE} ([tool.hatch.version])")
    if project.get("tool", {}).get("hatch", {}).get("version", {}).get("path") != VERSION_FILE:
        problems.append(f"pyproject.toml [tool.hatch.version] path is not {VERSION_FILE}")
    problems += changelog_problems((root / "CHANGELOG.md").read_text(encoding="utf-8"), version)
    if tag is not None and tag != f"v{version}":
        problems.append(f"tag {tag} but the source is version {version}: tag v{version}, or bump {VERSION_FILE}")
    return problems


def changelog_problems(text: str, version: str) -> list[str]:
    """The CHANGELOG has an [Unreleased] section, a dated section for `version` that says something, and links."""
    problems = []
    if "## [Unreleased]" not in text:
        problems.append("CHANGELOG.md has no ## [Unreleased] section (where the next release's changes go)")
    m = re.search(rf"^## \[{re.escape(version)}\] - (\d{{4}}-\d{{2}}-\d{{2}})\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not m:
        problems.append(f"CHANGELOG.md has no '## [{version}] - YYYY-MM-DD' section")
    elif not re.search(r"^### (Added|Changed|Deprecated|Removed|Fixed|Security)", m.group(2), re.M):
        problems.append(f"CHANGELOG.md's [{version}] section lists no change (### Added, Changed, Fixed, ...)")
    if not re.search(rf"^\[{re.escape(version)}\]: \S+/releases/tag/v{re.escape(version)}$", text, re.M):
        problems.append(f"CHANGELOG.md has no link line '[{version}]: .../releases/tag/v{version}'")
    return problems


def sdist_problems(sdist: Path, tracked: list[str]) -> list[str]:
    """The sdist's files against git's: nothing more (a cache, a build, a venv) and nothing less."""
    with tarfile.open(sdist) as tf:
        names = {m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile() and "/" in m.name}
    extra = sorted(names - set(tracked) - GENERATED_IN_SDIST)
    missing = sorted(set(tracked) - names)
    problems = []
    if extra:
        problems.append(f"the sdist has {len(extra)} files git does not track (ignore them in .gitignore): "
                        + ", ".join(extra[:10]) + (" ..." if len(extra) > 10 else ""))
    if missing:
        problems.append(f"the sdist lacks {len(missing)} tracked files: " + ", ".join(missing[:10]))
    if not GENERATED_IN_SDIST <= names:
        problems.append(f"the sdist has no {', '.join(sorted(GENERATED_IN_SDIST - names))}")
    return problems


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str | None:
    """None when `cmd` succeeded, else its last lines of output."""
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, timeout=900,
                       env={**os.environ, **(env or {})})
    return None if r.returncode == 0 else (f"`{' '.join(cmd)}` exited {r.returncode}: "
                                           + " | ".join((r.stdout + r.stderr).strip().splitlines()[-5:]))


def _wheel_plan(root: Path) -> list[str]:
    """The native wheels the wheels job builds: cibuildwheel's own list when it is installed, else the config."""
    exe = shutil.which("cibuildwheel")
    if exe:
        r = subprocess.run([exe, "--print-build-identifiers", "--platform", "linux", str(root)], cwd=root,
                           capture_output=True, text=True, check=False, timeout=120)
        if r.returncode == 0:
            return r.stdout.split()
    cfg = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["cibuildwheel"]
    archs = cfg.get("linux", {}).get("archs", [])
    return [f"{b.rstrip('-*')}-manylinux_{a}" for b in cfg["build"] for a in archs]


def dry_run(out: Path, docs: bool = True) -> list[str]:
    """Everything a tag's release does, here, without publishing; the problems found (empty: ready)."""
    version = source_version()
    tag = f"v{version}"
    say(f"release dry run of {tag} (nothing is uploaded, tagged or pushed)")
    problems = check(ROOT, tag)
    for p in problems:
        say(f"  check: {p}")
    src = out / "checkout"
    if src.exists():
        shutil.rmtree(src)
    tracked = tracked_files()
    for rel in tracked:  # a fresh clone of this working tree: its tracked files, nothing else
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel, follow_symlinks=False)
    dist = out / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    steps: list[tuple[str, list[str], dict[str, str]]] = [
        ("sdist", [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(dist)], {}),
        ("pure wheel", [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(dist)],
         {"CUENTRY_NO_COMPILE": "1"}),
    ]
    if not _has_module("hatchling"):  # the build backend: without it nothing can be built, said once
        why = (f"hatchling (the build backend) is not installed for {sys.executable}: "
               "pip install hatchling (it is in the [test] extra), then run the dry run again")
        say(f"  sdist, pure wheel: not built: {why}")
        problems.append(why)
        steps = []
    for name, cmd, env in steps:
        err = _run(cmd, src, env)
        say(f"  {name}: " + ("built" if err is None else f"FAILED: {err}"))
        if err:
            problems.append(f"{name}: {err}")
    for sd in dist.glob("cuentry-*.tar.gz"):
        found = sdist_problems(sd, tracked)
        say(f"  {sd.name}: " + ("exactly the tracked files + PKG-INFO" if not found else "; ".join(found)))
        problems += found
        if sd.name != f"cuentry-{version}.tar.gz":
            problems.append(f"the sdist is {sd.name}, not cuentry-{version}.tar.gz")
    for whl in dist.glob("cuentry-*.whl"):
        meta = zipfile.ZipFile(whl).read(f"cuentry-{version}.dist-info/METADATA").decode()
        built = re.search(r"^Version: (.+)$", meta, re.M)
        say(f"  {whl.name}: metadata version {built.group(1) if built else '?'}")
        if not whl.name.endswith("-py3-none-any.whl") or not built or built.group(1) != version:
            problems.append(f"the pure wheel {whl.name} is not cuentry {version} py3-none-any")
    plan = _wheel_plan(src)
    say(f"  native wheels (cibuildwheel, the wheels job): {len(plan)}: {' '.join(plan)}")
    if docs:
        if shutil.which("mkdocs") is None and not _has_module("mkdocs"):
            say("  docs: skipped (pip install '.[docs]' to build them)")
        else:
            err = _run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out / "site")], src)
            say("  docs: " + ("mkdocs build --strict passed" if err is None else f"FAILED: {err}"))
            if err:
                problems.append(f"docs: {err}")
    built = sorted(p.name for p in dist.iterdir()) if dist.is_dir() else []
    say(f"a tag would publish to PyPI: {len(plan)} native wheels, "
        + (", ".join(built) or "no sdist or pure wheel (none was built)")
        + f"; and deploy the docs as {version.rsplit('.', 1)[0]} (alias latest) with mike")
    say(f"to release: git tag -a {tag} -m 'cuentry {version}' && git push origin {tag}"
        if not problems else f"NOT ready: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return problems


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def say(text: str) -> None:
    print(text, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="version, pyproject, CHANGELOG and (with --tag) the tag")
    c.add_argument("--tag", help="the tag being released (vX.Y.Z); its version must be the source's")
    s = sub.add_parser("sdist-files", help="the sdist holds exactly what git tracks (+ PKG-INFO)")
    s.add_argument("sdist", type=Path)
    d = sub.add_parser("dry-run", help="what a tag's release does, locally, without publishing")
    d.add_argument("--out", type=Path, help="scratch folder (default: a temporary one, removed after)")
    d.add_argument("--no-docs", action="store_true", help="do not build the documentation site")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        problems = check(ROOT, a.tag)
        say(f"cuentry {source_version()}: " + ("ready" if not problems else "NOT ready"))
    elif a.cmd == "sdist-files":
        problems = sdist_problems(a.sdist, tracked_files())
        say(f"{a.sdist.name}: " + ("exactly the tracked files + PKG-INFO" if not problems else "wrong"))
    elif a.out is not None:
        a.out.mkdir(parents=True, exist_ok=True)
        problems = dry_run(a.out.resolve(), docs=not a.no_docs)
    else:
        with tempfile.TemporaryDirectory(prefix="cuentry-release-") as tmp:
            problems = dry_run(Path(tmp), docs=not a.no_docs)
    for p in problems:
        say(f"release: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
