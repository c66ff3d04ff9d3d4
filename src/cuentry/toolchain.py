"""The C toolchain cuentry drives: which compiler, how a Python string becomes a C string literal,
and compiling a source text into the per-user build cache.

One place for the three decisions that were made four times before (the fake driver, the
interposer, the compiled extension's generator and the header generator each had their own):

* [find_compiler][cuentry.toolchain.find_compiler]: an explicit `cc`, else `$CC` (split like a
  shell word list, so `CC="ccache gcc"` works), else the first of `cc`, `gcc`, `clang` on
  `PATH`; a name that is not found is an error that names it, never a silent fallback to another;
* [c_string][cuentry.toolchain.c_string]: a C string literal that means exactly the given text in
  C99 and C++11 (backslash, quote, control and non-ASCII bytes as octal escapes, no trigraphs);
* [compile_cached][cuentry.toolchain.compile_cached]: compile into [buildcache][cuentry.buildcache]
  (0700, owner checked, published by rename, verified by hash), keyed by source, compiler and flags.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .errors import BuildError

__all__ = ["CC_ENV", "CXX_COMPILERS", "C_COMPILERS", "c_string", "compile_cached", "find_compiler", "run_compiler"]


CC_ENV = "CC"  # the C compiler, as shell words ("ccache gcc")
C_COMPILERS = ("cc", "gcc", "clang")
CXX_COMPILERS = ("c++", "g++", "clang++")


def find_compiler(cc: str | None = None, *, cxx: bool = False, what: str = "compile C") -> list[str]:
    """The compiler command as a word list: `cc`, else `$CC` (`$CXX`), else the first on PATH.

    Args:
        cc: an explicit compiler command (may hold flags: `"ccache gcc"`).
        cxx: look for a C++ compiler (`$CXX`, `c++`, `g++`, `clang++`).
        what: what the compiler is for, for the error message.

    Returns:
        The command's words, the first one an absolute path.

    Raises:
        BuildError: the named compiler is not on PATH, or none of the defaults is.
    """
    var = "CXX" if cxx else CC_ENV
    text = cc or os.environ.get(var) or ""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise BuildError(f"cannot {what}: {var}={text!r} is not a valid command line ({exc})",
                         hint=f"set {var} to a compiler, e.g. {var}=gcc") from None
    if words:
        found = shutil.which(words[0])
        if not found:
            raise BuildError(f"cannot {what}: the compiler {words[0]!r} was not found",
                             hint=f"install it or set {var} to a compiler on PATH")
        return [found, *words[1:]]
    names = CXX_COMPILERS if cxx else C_COMPILERS
    for name in names:
        found = shutil.which(name)
        if found:
            return [found]
    raise BuildError(f"cannot {what}: no {'C++' if cxx else 'C'} compiler found (looked for {', '.join(names)})",
                     hint=f"install one (apt-get install gcc) or set {var}")


def c_string(text: str) -> str:
    """`text` as a C string literal with exactly its UTF-8 bytes (C99 and C++11).

    Printable ASCII stays as it is, except `\\` and `"` (escaped) and `?` after `?`
    (escaped: no trigraph); every other byte is a three-digit octal escape, which cannot
    run into a following digit the way a hex escape does.

    Raises:
        TypeError: `text` is not a str (an int subclass or bytes is refused, never converted).
    """
    if type(text) is not str:
        raise TypeError(f"c_string needs a str, got {type(text).__name__}")
    out = ['"']
    prev = ""
    for b in text.encode("utf-8", "surrogatepass"):
        ch = chr(b)
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "?" and prev == "?":
            out.append("\\?")
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
        prev = ch
    out.append('"')
    return "".join(out)


def run_compiler(cmd: Sequence[str], *, what: str, hint: str = "", failed: str = "") -> None:
    """Run one compiler command; a failure is a [BuildError][cuentry.errors.BuildError] with its output.

    Args:
        cmd: the command's words.
        what: what is built, for messages (`"build the interposer"`: "cannot build the interposer: ...").
        hint: the fix to name when the compiler fails (a default names the compiler).
        failed: the message's opening instead of "cannot {what}" (`"building the fake driver failed"`).

    Raises:
        BuildError: the compiler could not be started or returned non-zero (its own words, or how it
            ended when it said nothing).
    """
    opening = failed or f"cannot {what}"
    try:
        proc = subprocess.run(list(cmd), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BuildError(f"{opening}: cannot run {cmd[0]}: {exc.strerror}",
                         hint=hint or "check the compiler (CC) works") from None
    if proc.returncode != 0:
        said = ((proc.stderr or "").strip() or (proc.stdout or "").strip())[:2000] or "the compiler printed nothing"
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise BuildError(f"{opening}: {cmd[0]} ended with {how}: {said}",
                         hint=hint or f"the compiler {cmd[0]} rejected the generated C: set CC to another one")


def compile_cached(name: str, source_text: str, *, filename: str, source_name: str, flags: Sequence[str] = (),
                   libs: Sequence[str] = (), cc: str | Sequence[str] | None = None,
                   root: str | os.PathLike[str] | None = None, what: str = "", hint: str = "",
                   failed: str = "") -> Path:
    """Compile `source_text` into the per-user build cache once per content, compiler and flags.

    Args:
        name: the cache entry's name (`"interposer"`).
        source_text: the complete C source.
        filename: the built file's name inside the entry (`"libx.so"`, may have one directory).
        source_name: the name the source is saved under beside it (`"x.c"`).
        flags: compiler flags before the output (`-shared -fPIC ...`).
        libs: what follows the source on the command line (`-ldl`).
        cc: an explicit compiler (see [find_compiler][cuentry.toolchain.find_compiler]), or the words
            find_compiler returned already.
        root: another cache root (checked like the default one).
        what: what is built, for messages (`"build the interposer"`).
        hint: the fix to name when the compiler fails.
        failed: the opening of a compile error's message (see [run_compiler][cuentry.toolchain.run_compiler]).

    Returns:
        The built file's path in the cache.

    Raises:
        BuildError: no compiler, a compile error, or an unsafe cache.
    """
    from .buildcache import cached_build

    what = what or f"build {name}"
    compiler = find_compiler(cc, what=what) if cc is None or isinstance(cc, str) else list(cc)

    def compile_it(src: Path, out: Path) -> None:
        run_compiler([*compiler, *flags, "-o", str(out), str(src), *libs], what=what, hint=hint, failed=failed)

    return cached_build(name, source_text, compile_it, filename=filename, source_name=source_name,
                        extra_key=" ".join([*compiler, *flags, *libs]), root=root)
