"""Build hook: compile cuentry's call extension (cuentry.calls._fastcall) into the wheel where a C compiler exists.

Without a compiler (or Python headers) the wheel is built pure and cuentry runs on
its pure backend; `cuentry doctor` then says so. Set CUENTRY_NO_COMPILE=1 to build
a pure wheel on purpose.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CallExtensionBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "cuentry-call-extension"
    _tmp: str | None = None

    def _cleanup(self) -> None:
        """Remove the build's temporary folder (a cuentry-calls-* folder left in TMPDIR per install was a bug)."""
        tmp, self._tmp = self._tmp, None
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    def _why_pure(self, version: str, build_data: dict[str, Any], why: str) -> None:
        """Record in the wheel why it has no extension (cuentry.calls.choice.backend() says it: WHY_PURE)."""
        if version == "editable":
            return  # nothing written into the working tree
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="cuentry-calls-")
        path = os.path.join(self._tmp, "_why_pure.txt")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(" ".join(why.split())[:500] + "\n")
        build_data["force_include"][path] = "cuentry/calls/_why_pure.txt"

    def _exclude_untracked(self) -> None:
        """An sdist built in a git working tree holds only what git tracks (and what the build adds): the files
        git does not track and does not ignore (a stray `run.log`, a scratch script) are excluded too.

        Outside a git checkout (an sdist unpacked, an export) nothing changes: hatchling's own rules apply.
        """
        untracked = untracked_files(self.root)
        if not untracked:
            return
        config = self.build_config
        try:
            import pathspec

            extra = pathspec.GitIgnoreSpec.from_lines("/" + gitignore_escape(p) for p in untracked)
            spec = config.exclude_spec
            config.__dict__["exclude_spec"] = extra if spec is None else spec + extra
        except Exception as exc:  # hatchling's internals moved: say so rather than pack the files
            raise RuntimeError(f"cuentry: cannot keep {len(untracked)} untracked files out of the sdist "
                               f"({type(exc).__name__}: {exc}); remove them or build from a clean clone") from None
        self.app.display_info(f"cuentry: {len(untracked)} files or folders git does not track are left out of the sdist")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        self._cleanup()

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "sdist":
            self._exclude_untracked()
            return
        if self.target_name != "wheel":
            return
        if version != "editable":  # the --json reports' schemas, as importlib.resources.files("cuentry") / "schemas"
            schemas = os.path.join(self.root, "docs", "schemas")
            for name in sorted(os.listdir(schemas)):
                if name.endswith(".schema.json"):
                    build_data["force_include"][os.path.join(schemas, name)] = f"cuentry/schemas/{name}"
        flag = os.environ.get("CUENTRY_NO_COMPILE", "").strip().lower()
        if flag not in ("", "0", "1", "true", "false", "yes", "no", "on", "off"):
            raise ValueError(f"CUENTRY_NO_COMPILE={flag!r}: use 1/true/yes/on (pure backend only) or 0/false/no/off")
        if flag in ("1", "true", "yes", "on"):
            self.app.display_warning("cuentry: CUENTRY_NO_COMPILE set: building the pure backend only")
            self._why_pure(version, build_data, f"CUENTRY_NO_COMPILE={flag} at install: the pure backend on purpose")
            return
        src = os.path.join(self.root, "src")
        sys.path.insert(0, src)
        tmp = tempfile.mkdtemp(prefix="cuentry-calls-")
        self._tmp = tmp  # removed in finalize(), once the wheel holds the extension
        try:
            from cuentry.calls._fastgen import build

            so = build(tmp)
        except Exception as exc:
            self._cleanup()
            self.app.display_warning(f"cuentry: compiled call extension not built ({type(exc).__name__}: {exc}); "
                                     "the pure backend will be used")
            self._why_pure(version, build_data, f"not built at install ({type(exc).__name__}: {exc})")
            return
        finally:
            sys.path.remove(src)
            for m in [m for m in sys.modules if m == "cuentry" or m.startswith("cuentry.")]:
                del sys.modules[m]
        name = os.path.basename(so)
        if version == "editable":
            # A new file renamed over the old one: a process that has the old extension mapped (this
            # one, when importing the generator loaded it) keeps its inode instead of seeing its code
            # change under it.
            dest = os.path.join(src, "cuentry", "calls", name)
            staged = f"{dest}.{os.getpid()}.tmp"
            shutil.copy2(so, staged)
            os.replace(staged, dest)
            self._cleanup()
        else:
            build_data["force_include"][so] = f"cuentry/calls/{name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"cuentry: compiled call extension built ({name})")


def untracked_files(root: str) -> list[str]:
    """What the git working tree at `root` holds that git does not track ([] outside a checkout): files, and
    folders holding nothing tracked as one entry ending in "/" (a stray log; a tool's cache whose own "*"
    .gitignore git honours and hatchling does not)."""
    import subprocess

    if not os.path.exists(os.path.join(root, ".git")):
        return []
    try:
        r = subprocess.run(["git", "ls-files", "--others", "--directory", "-z"], cwd=root,
                           capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    if r.returncode != 0:
        return []
    return [p for p in r.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def gitignore_escape(path: str) -> str:
    """`path` as a gitignore pattern that matches that path alone (wildcards, `!`, `#` and trailing spaces escaped;
    a folder's trailing "/" kept)."""
    folder = path.endswith("/")
    body = path.rstrip("/") if folder else path
    out = "".join("\\" + c if c in "\\*?[]!#" else c for c in body)
    out = out[:-1] + "\\ " if out.endswith(" ") else out
    return out + "/" if folder else out
