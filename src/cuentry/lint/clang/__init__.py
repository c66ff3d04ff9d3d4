"""The semantic engine for C, C++ and CUDA: libclang (the `libclang` wheel, `pip install 'cuentry[lint]'`).

Each file is parsed as a translation unit with its real flags (`-I`/`-D`/`-std`, or its entry of a
`compile_commands.json`); `.cu`/`.cuh` files in clang's CUDA mode, host side. Against the real
`cuda.h`/`cudaTypedefs.h` when they are found, or against headers `.headers` writes from the
catalog for one toolkit. Macros, aliases, `decltype`, templates and constants are then resolved by
the compiler; `.walk` evaluates each request's symbol, version and flags and the canonical type of
the pointer it fills, into the `Unit` facts the rules read (the one engine of the C family).

A file with errors (an include that is not found, an undeclared name, a type from elsewhere) is still
judged: clang keeps going, and only the requests that depend on what it could not see are left unjudged
(`Unit.unjudged` says which and why). `NotParsed` is raised only when clang cannot parse the file at all.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import re
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...catalog import Catalog, catalog
from ..facts import Query, Unit, suppressions
from ..signature import normalizer
from .headers import include_dirs  # where configs finds it too (it never imports this package: no cycle)

RESOURCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resource")
CUDA_PREAMBLE = os.path.join(RESOURCE_DIR, "cuda_host_preamble.h")
_CU = (".cu", ".cuh")
_C = (".c",)
_LOCK = threading.RLock()
_INDEX: list[Any] = []


class NotParsed(Exception):
    """The file could not be parsed by clang (the message says why and what to give)."""


def available() -> bool:
    """True when libclang can be loaded."""
    try:
        import clang.cindex as ci

        _index(ci)
    except Exception:
        return False
    return True


def _index(ci: Any) -> Any:
    with _LOCK:
        if not _INDEX:
            _INDEX.append(ci.Index.create())
            atexit.register(_INDEX.clear)   # disposed while the bindings still exist, not at teardown
        return _INDEX[0]


@dataclass
class Options:
    """How files are parsed."""

    include_dirs: Sequence[str] = ()
    defines: Sequence[str] = ()
    std: str | None = None
    toolkit: str | None = None                       # write headers for this toolkit even if cuda.h is found
    commands: dict[str, list[str]] = field(default_factory=dict)   # file -> its compile flags
    cat: Catalog | None = None
    pch: bool = True                                 # precompile the generated headers (same facts, faster)
    foreign: dict[str, dict[str, Any]] = field(default_factory=dict)   # other files' wrappers, by USR
    extra: Sequence[str] = ()                        # flags of another configuration (-DX, -UX), after the file's own
    flip: bool = True                                # also judge the branches the flags skip (see `.configs`)
    parses: list[int] = field(default_factory=lambda: [0])   # libclang parses of the file, its configurations too


def _flags_of(argv: Sequence[str]) -> list[str]:
    """The flags of a compile command that matter to parsing: -I -D -U -isystem -include -std -x."""
    out: list[str] = []
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        if a in ("-I", "-D", "-U", "-isystem", "-include", "-x") and i + 1 < len(argv):
            out += [a, argv[i + 1]]
            next(it, None)
        elif a.startswith(("-I", "-D", "-U", "-std=", "-isystem")) and len(a) > 2:
            out.append(a)
    return out


def arguments(path: str, opts: Options, cat: Catalog, *, as_c: bool = False, text: str = "") -> tuple[list[str], str]:
    """The clang arguments for one file (`as_c`: a header read as C), and which CUDA headers they use.

    The default standards are the compilers' own defaults, with their GNU extensions (`gnu11`,
    `gnu++17`), so POSIX declarations (`off_t`, `O_CLOEXEC`) are there as in a real build."""
    from .headers import choose_toolkit, find_toolkit_include, generated_dir, legacy_pfn_flags, runtime_shadow

    args = ["-resource-dir", RESOURCE_DIR, "-ferror-limit=0", "-Wno-everything", *NO_DEBUG_PRAGMAS]
    cmd = opts.commands.get(os.path.abspath(path))
    if path.endswith(_CU):
        args += ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-include", CUDA_PREAMBLE]
    elif path.endswith(_C) or as_c:
        args += ["-x", "c", f"-std={opts.std or 'gnu11'}"] if not (opts.std or "").startswith(("c++", "gnu++")) else \
            ["-x", "c"]
    else:
        args += ["-x", "c++", f"-std={opts.std or 'gnu++17'}"]
    if path.endswith(_CU):
        args.append(f"-std={opts.std or 'gnu++17'}")
    args += [f"-I{d}" for d in opts.include_dirs] + [f"-D{d}" for d in opts.defines]
    if cmd:
        args += _flags_of(cmd)
    args += opts.extra
    real = None if opts.toolkit else find_toolkit_include([*opts.include_dirs, *include_dirs(cmd or [])])
    if real is not None:
        if path.endswith(_CU):   # nvcc's implicit cuda_runtime.h: the runtime API, host side
            args += ["-DCUENTRY_REAL_CUDA_TOOLKIT", "-isystem", runtime_shadow(), "-isystem", real,
                     "-include", "cuda_runtime.h"]
        else:
            args += ["-isystem", real]
        args += legacy_pfn_flags(cat, real, text)
        return args, f"cuda.h and cudaTypedefs.h of {real}"
    tk = choose_toolkit(cat, opts.toolkit)
    args += ["-isystem", generated_dir(cat, tk)] + (["-include", "cuda_runtime.h"] if path.endswith(_CU) else [])
    return args, f"cuda.h and cudaTypedefs.h written by cuentry from its catalog for CUDA {tk} (--toolkit)"


NO_DEBUG_PRAGMAS = ("-Xclang", "-disable-pragma-debug-crash")
"""Flags that make clang refuse its debugging pragmas (`#pragma clang __debug crash`, `overflow_stack`,
`llvm_fatal_error`, ...: a crash or a hang on purpose) wherever they come from: the file, a header it
includes, a line continuation, a `_Pragma` a macro makes. Every parse carries them."""

_INCLUDES_CUDA = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<(cuda|cudaTypedefs)\.h>", re.M)
_PCH: dict[str, str | None] = {}
_PCH_SENSITIVE = re.compile(r"CUDA_API_PER_THREAD_DEFAULT_STREAM|__CUDA_API_VERSION|CUDA_FORCE_API_VERSION")


def _pch(ci: Any, args: list[str], text: str) -> str | None:
    """A precompiled header of the CUDA headers the flags name (the real toolkit's or the generated ones;
    built once per process and flags: a parse against it takes a third of the time), or None where it
    could change the meaning: a file that does not include cuda.h itself, or that (or its flags) sets a
    macro the header reads."""
    from .headers import scratch_dir

    cuda = _cuda_dir(args)
    heads = sorted(set(_INCLUDES_CUDA.findall(text)))
    if cuda is None or not heads or _PCH_SENSITIVE.search(text) or any(_PCH_SENSITIVE.search(a) for a in args):
        return None
    lang = [("c-header" if a == "c" else "c++-header" if a == "c++" else a) for a in args]
    if "cuda" in lang:
        return None   # the CUDA host parse keeps its preamble first
    header = "cudaTypedefs" if "cudaTypedefs" in heads else "cuda"   # only what the file itself includes
    keyed = "\0".join([header, *lang])
    with _LOCK:
        if keyed in _PCH:
            return _PCH[keyed]
        out = None
        try:
            hdr = os.path.join(scratch_dir(), f"pch-{len(_PCH)}.h")
            with open(hdr, "w", encoding="utf-8") as fh:
                fh.write(f"#include <{header}.h>\n")
            tu = _index(ci).parse(hdr, args=lang, options=ci.TranslationUnit.PARSE_INCOMPLETE)
            if _first_error(tu, hdr) is None:
                tu.save(hdr + ".pch")
                out = hdr + ".pch"
        except Exception:
            out = None
        _PCH[keyed] = out
        return out


def _cuda_dir(args: list[str]) -> str | None:
    """The CUDA headers' directory: the last -isystem `arguments` adds (None when it holds no cuda.h)."""
    at = [i for i, a in enumerate(args) if a == "-isystem" and i + 1 < len(args)]
    d = args[at[-1] + 1] if at else None
    return d if d is not None and os.path.isfile(os.path.join(d, "cuda.h")) else None


SEARCH_ROUNDS = 6
"""How many times a file is parsed again with the directories of the headers it could not find."""
SEARCH_LEVELS = 8
"""How far up from a file the directories that could hold a missing header are looked for."""
_NOT_FOUND = re.compile(r"^'([^']+)' file not found")


def _parse(ci: Any, path: str, text: str, args: list[str], flags: int, *, searched: bool,
           refused: list[str] | None = None, count: list[int] | None = None) -> Any:
    """Parse; where a header is not found and `searched` (no compile command names the file's flags),
    look for it where projects keep their headers (see `header_dirs`) and parse again with those.

    Before each parse, the includes the parse can reach are checked (`refuse_special`), and clang's
    debugging pragmas (`#pragma clang __debug ...`: crash, hang, overflow the stack) are blanked. With
    `refused`, an include of a special file is left out of the parse (see `leave_out`) and said there;
    without it, it is `Refused`."""
    tried: set[str] = set()
    text = _DEBUG_PRAGMA.sub(lambda m: " " * len(m.group(0)), text) if "__debug" in text else text
    for _ in range(SEARCH_ROUNDS + 1):
        text, args, over = leave_out(path, text, args, refused)
        try:
            if count is not None:
                count[0] += 1
            tu = _index(ci).parse(path, args=args, unsaved_files=[(path, text), *over.items()], options=flags)
        except ci.TranslationUnitLoadError as exc:
            raise NotParsed(f"clang could not parse it ({exc})") from None
        if not searched:
            return tu
        found = [d for d in _missing_dirs(tu, path) if d not in tried]
        if not found:
            return tu
        tried.update(found)
        args = [*args, *(f"-I{d}" for d in found)]
    return tu


_DEBUG_PRAGMA = re.compile(r'^[ \t]*#[ \t]*pragma[ \t]+clang[ \t]+__debug\b[^\n]*'
                           r'|_Pragma[ \t]*\([ \t]*"clang[ \t]+__debug[^"\n]*"[ \t]*\)', re.M)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*(?:include_next|include|import|embed)[ \t]*([<"])([^>"\n]+)[>"]', re.M)
SCAN_HEADERS = 4096
"""Headers read, at most, to check what a file's includes reach (per process; each is read once)."""
_SCANNED: dict[str, list[tuple[bool, str]]] = {}
_SYSTEM = (RESOURCE_DIR, "/usr/include/", "/usr/lib/", "/usr/local/include/", "/usr/local/cuda")


class Refused(NotParsed):
    """An include (or `-include`) names something that is not a regular file: a device, a FIFO, a socket.

    `what` says which (and where), `src` is the file whose directive it is ("" for a `-include` of the
    flags), `name` the name it includes."""

    def __init__(self, what: str, src: str = "", name: str = "") -> None:
        super().__init__(f"{what}: not parsed (reading it would never end)")
        self.what, self.src, self.name = what, src, name


def refuse_special(path: str, text: str, args: Sequence[str], texts: dict[str, str] | None = None) -> None:
    """Raise `Refused` when the file, a header it reaches (through the include directories of `args`) or
    a `-include` of `args` names a target that is not a regular file (`/dev/zero`, a FIFO, a symlink to
    one): libclang would read it without end or block on it. Headers under the system directories are
    taken as they are; a header in `texts` (absolute path -> text) is read from there."""
    quote, angle, forced = _search_dirs(args)
    for name in forced:
        _check(name, True, os.getcwd(), quote, angle, "the -include of its flags")
    todo = [(os.path.abspath(path), _includes(text))]
    seen = {os.path.abspath(path)}
    while todo:
        src, incs = todo.pop()
        for quoted, name in incs:
            got = _check(name, quoted, os.path.dirname(src), quote, angle, os.path.basename(src), src)
            if got is None or got in seen or got.startswith(_SYSTEM) or "cuentry-lint-cuda" in got:
                continue
            seen.add(got)
            if texts and got in texts:
                todo.append((got, _includes(texts[got])))
            elif len(_SCANNED) < SCAN_HEADERS or got in _SCANNED:
                todo.append((got, _header_includes(got)))


MAX_LEFT_OUT = 16
"""Includes of special files left out of one parse, at most (then the file is `Refused`)."""


def leave_out(path: str, text: str, args: list[str],
              refused: list[str] | None) -> tuple[str, list[str], dict[str, str]]:
    """The file's text, its arguments and the texts of the headers to give libclang instead of theirs, with
    each include of a special file (see `refuse_special`) left out: its directive blanked where it is, a
    `-include` dropped from the flags; each is said in `refused` (an include that is not there costs only
    what it would have declared). Without `refused`, or beyond `MAX_LEFT_OUT`, `Refused` is raised."""
    over: dict[str, str] = {}
    me = os.path.abspath(path)
    for _ in range(MAX_LEFT_OUT):
        try:
            refuse_special(path, text, args, over)
            return text, args, over
        except Refused as exc:
            if refused is None:
                raise
            if not exc.src:
                fewer = _drop_forced(args, exc.name)
                changed = fewer != args
                args = fewer
            elif exc.src == me:
                blanked = _blank_include(text, exc.name)
                changed, text = blanked != text, blanked
            else:
                old = over.get(exc.src)
                if old is None:
                    old = _header_text(exc.src)
                over[exc.src] = _blank_include(old, exc.name)
                changed = over[exc.src] != old
            if not changed:
                raise
            refused.append(exc.what)
    refuse_special(path, text, args, over)
    return text, args, over


def _blank_include(text: str, name: str) -> str:
    """`text` with the include directives of `name` blanked (newlines kept: lines stay where they are)."""
    return _INCLUDE.sub(lambda m: " " * len(m.group(0)) if m.group(2).strip() == name else m.group(0), text)


def _drop_forced(args: list[str], name: str) -> list[str]:
    """`args` without the `-include NAME` (separate or joined)."""
    out: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "-include" and i + 1 < len(args) and args[i + 1] == name:
            skip = True
            continue
        if a == f"-include{name}":
            continue
        out.append(a)
    return out


def _header_text(hdr: str) -> str:
    """A header's text (a regular file: `_check` found it so), read at most 16 MiB."""
    fd = os.open(hdr, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(16 << 20).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _includes(text: str) -> list[tuple[bool, str]]:
    return [(m.group(1) == '"', m.group(2).strip()) for m in _INCLUDE.finditer(text)] if "#" in text else []


def _header_includes(hdr: str) -> list[tuple[bool, str]]:
    if hdr not in _SCANNED:
        _SCANNED[hdr] = []
        try:
            fd = os.open(hdr, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError:
            return []
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                with os.fdopen(os.dup(fd), "rb") as fh:
                    _SCANNED[hdr] = _includes(fh.read(16 << 20).decode("utf-8", "replace"))
        except OSError:
            pass
        finally:
            os.close(fd)
    return _SCANNED[hdr]


def _search_dirs(args: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The directories `#include "..."` and `#include <...>` search (in order), and the `-include` files."""
    quote: list[str] = []
    angle: list[str] = []
    forced: list[str] = []
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a == "-iquote" and nxt:
            quote.append(nxt)
        elif a in ("-I", "-isystem", "-idirafter") and nxt:
            angle.append(nxt)
        elif a.startswith("-I") and len(a) > 2:
            angle.append(a[2:])
        elif a.startswith("-isystem") and len(a) > 8:
            angle.append(a[8:])
        elif a == "-include" and nxt:
            forced.append(nxt)
        elif a.startswith("-include") and len(a) > 8 and not a.startswith("-include-pch"):
            forced.append(a[8:])
    return quote, angle, forced


def _check(name: str, quoted: bool, here: str, quote: list[str], angle: list[str], where: str,
           src: str = "") -> str | None:
    """The file clang would open for an include (None: none found), refused when it is not a regular file."""
    cands = [name] if os.path.isabs(name) else \
        [os.path.join(d, name) for d in ([here, *quote, *angle] if quoted else angle)]
    for cand in cands:
        try:
            st = os.stat(cand)
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
                stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
            raise Refused(f"{where} includes {name}, which is {kind} ({os.path.realpath(cand)})", src, name)
        return os.path.abspath(cand)
    return None


def _missing_dirs(tu: Any, path: str) -> list[str]:
    out: list[str] = []
    for d in tu.diagnostics:
        m = _NOT_FOUND.match(d.spelling) if d.severity >= 3 else None
        if m is None:
            continue
        where = d.location.file.name if d.location.file is not None else path
        got = header_dirs(m.group(1), os.path.dirname(os.path.abspath(where)))
        out += [g for g in got if g not in out]
    return out


def header_dirs(name: str, start: str) -> list[str]:
    """The directory that holds `name` (`ucs/sys/sys.h`) nearest above `start`: an ancestor, or its
    `include`/`src` subdirectory, at most `SEARCH_LEVELS` up and not above the repository's root
    (a directory with `.git`). Empty when none is found or `name` climbs out (`..`, absolute)."""
    if os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
        return []
    d = start
    for _ in range(SEARCH_LEVELS):
        for cand in (d, os.path.join(d, "include"), os.path.join(d, "src")):
            if os.path.isfile(os.path.join(cand, name)):
                return [cand]
        if os.path.exists(os.path.join(d, ".git")) or os.path.dirname(d) == d:
            break
        d = os.path.dirname(d)
    return []


KEEP_GOING = 0x200
"""libclang's CXTranslationUnit_KeepGoing: a header that is not found is an error, not the end of the parse."""


def _first_error(tu: Any, path: str, *, missing: list[str] | None = None) -> str | None:
    """The first error said with its fix (a header not found counts only when `missing` is None);
    headers not found go into `missing`, and are named as the likely cause of a later error. None: the
    file parsed (with `missing`: every error was a header not found)."""
    errors = [d for d in tu.diagnostics if d.severity >= 3]
    lost = [m.group(1) for d in errors if (m := _NOT_FOUND.match(d.spelling)) is not None]
    for d in errors:
        if missing is not None and _NOT_FOUND.match(d.spelling):
            continue
        where = d.location.file.name if d.location.file is not None else path
        if lost:
            fix = f"not found: {_names(lost)}: give their directories with -I or --compile-commands"
        else:
            fix = "check the flags (-D, -std, --compile-commands) it is compiled with"
        return f"clang: {os.path.basename(where)}:{d.location.line}: {d.spelling} ({fix})"
    if missing is not None:
        missing += lost
    return None


def _names(headers: list[str]) -> str:
    got = sorted(set(headers))
    return ", ".join(got[:6]) + (", ..." if len(got) > 6 else "")


def _translation_unit(ci: Any, text: str, path: str, opts: Options, cat: Catalog,
                      refused: list[str]) -> tuple[Any, list[str], str, list[str], list[tuple[int, str]]]:
    """The parsed file, its arguments, the headers used, the headers not found, and the errors in the file
    itself (line, message): clang keeps going past them, and only the facts that depend on them are lost. A `.h`
    that does not parse as C++ is tried as C (the parse with fewer errors is kept). The includes of special
    files left out of the parse go into `refused`."""
    best: tuple[Any, list[str], str, list[str], list[tuple[int, str]]] | None = None
    for as_c in (False, True) if path.endswith(".h") else (False,):
        args, headers = arguments(path, opts, cat, as_c=as_c, text=text)
        _, args, _ = leave_out(path, "", args, refused)   # a -include of a device never reaches the PCH's parse
        pch = _pch(ci, args, text) if opts.pch else None
        if pch is not None:
            args = [*args, "-include-pch", pch]
        tu = _parse(ci, path, text, args, ci.TranslationUnit.PARSE_INCOMPLETE | KEEP_GOING,
                    searched=not opts.commands.get(os.path.abspath(path)), refused=refused, count=opts.parses)
        missing = [m.group(1) for d in tu.diagnostics if d.severity >= 3 and (m := _NOT_FOUND.match(d.spelling))]
        errors = _errors(tu, path)
        tu, args, missing, errors, implied = _implied(ci, path, text, opts, tu, args, missing, errors, refused)
        if implied:
            headers += f" (assumed for it: {', '.join(implied)})"
        if not errors:
            return tu, args, headers, missing, errors
        if best is None or len(errors) < len(best[4]):
            best = (tu, args, headers, missing, errors)
    assert best is not None
    return best


def _implied(ci: Any, path: str, text: str, opts: Options, tu: Any, args: list[str], missing: list[str],
             errors: list[tuple[int, str]],
             refused: list[str]) -> tuple[Any, list[str], list[str], list[tuple[int, str]], list[str]]:
    """Parse again with the headers the file's undeclared names imply (see `_implied_headers`): the CUDA names
    used but not declared (the header that includes cuda.h is not found, or the file is a fragment) are judged
    as if the file included them, which is what the build it comes from does; an export macro of a header not found
    is read as empty (see `_attribute_macros`). Two rounds at most."""
    implied: list[str] = []
    for _ in range(2):
        more = [h for h in _implied_headers(errors) if h not in implied]
        empty = [f"-D{m}=" for m in _attribute_macros(tu, path, text) if f"-D{m}=" not in args]
        if not more and not empty:
            break
        implied += more + [f"{a[2:-1]} defined empty" for a in empty]
        args = [*args, *empty, *(x for h in more for x in ("-include", h))]
        tu = _parse(ci, path, text, args, ci.TranslationUnit.PARSE_INCOMPLETE | KEEP_GOING,
                    searched=not opts.commands.get(os.path.abspath(path)), refused=refused, count=opts.parses)
        missing = [m.group(1) for d in tu.diagnostics if d.severity >= 3 and (m := _NOT_FOUND.match(d.spelling))]
        errors = _errors(tu, path)
    return tu, args, missing, errors, implied


_UNDECLARED = re.compile(r"(?:undeclared identifier|unknown type name|undeclared function|undeclared library "
                         r"function) '((?:cu|CU|PFN_cu|cuda|dl)\w*)'")


_INCOMPLETE = re.compile(r"variable has incomplete type '(?:class|struct|union) ([A-Za-z_]\w*)'")


def _attribute_macros(tu: Any, path: str, text: str) -> list[str]:
    """The undeclared names `X` of `class X Name {` (an export macro, `class LEGATE_EXPORT Api {`, whose header was
    not found): that text parses only when X expands to nothing, and read otherwise it makes `Name` a variable of
    the incomplete type `class X`, so every `Name::member` definition of the file is lost. Clang says that the
    variable has an incomplete type; the text at that place is `class X Name` followed by `{`, `:` or `final`."""
    out: list[str] = []
    texts: dict[str, list[str]] = {}
    for d in tu.diagnostics:
        m = _INCOMPLETE.match(str(d.spelling)) if d.severity >= 3 and d.location.file is not None else None
        if m is None or m.group(1) in out:
            continue
        name = d.location.file.name
        if name not in texts:
            try:
                texts[name] = (text if os.path.abspath(name) == os.path.abspath(path) else _header_text(name)).splitlines()
            except OSError:
                texts[name] = []
        lines = texts[name]
        at = "\n".join(lines[d.location.line - 1:d.location.line + 1]) if 0 < d.location.line <= len(lines) else ""
        if re.search(rf"\b(?:class|struct|union)\s+{re.escape(m.group(1))}\s+\w+\s*(?:[:{{]|final\b)", at):
            out.append(m.group(1))
    return out


def _implied_headers(errors: list[tuple[int, str]]) -> list[str]:
    """The headers a file's undeclared names imply: CUDA's (cudaTypedefs.h includes cuda.h) and `dlfcn.h`."""
    names = {m.group(1) for _, msg in errors if (m := _UNDECLARED.search(msg))}
    out = []
    if any(n.startswith(("cu", "CU", "PFN_")) for n in names):
        out.append("cudaTypedefs.h")
    if any(n.startswith("cuda") for n in names):
        out.append("cuda_runtime_api.h")
    if names & {"dlsym", "dlvsym", "dlopen", "dlclose"}:
        out.append("dlfcn.h")
    return out


def _errors(tu: Any, path: str) -> list[tuple[int, str]]:
    """The errors clang reports (other than a header not found), at their line in this file (0: in a header)."""
    me = os.path.abspath(path)
    out = []
    for d in tu.diagnostics:
        if d.severity < 3 or _NOT_FOUND.match(d.spelling):
            continue
        f = d.location.file
        here = f is not None and os.path.abspath(f.name) == me
        out.append((d.location.line if here else 0, str(d.spelling)))
    return out


_ARITY = re.compile(r"too (?:few|many) arguments to function call|no matching function for call to "
                    r"'(?:cuGetProcAddress|cudaGetDriverEntryPoint)")
_GETTER_CALL = re.compile(r"\b(?:cuGetProcAddress|cudaGetDriverEntryPoint)\w*\s*\(")


def _compiles_with(text: str, errors: list[tuple[int, str]], opts: Options, cat: Catalog) -> str | None:
    """The older toolkit release to parse the file against when its getter calls have the arity of an older
    `cuda.h` (the 4-argument `cuGetProcAddress` of 11.x is `cuGetProcAddress_v2`'s 5 from 12.0 on): the newest
    11.x release of the catalog's history. None when no such error is on a getter's line, or a toolkit was
    given."""
    if opts.toolkit is not None or not errors:
        return None
    lines = text.splitlines()
    bad = [n for n, msg in errors if n and _ARITY.search(msg) and 0 < n <= len(lines) and _GETTER_CALL.search(lines[n - 1])]
    if not bad:
        return None
    older = [t for t in cat.history if t.startswith("11.")]
    return older[-1] if older else None


def extract(text: str, path: str, opts: Options) -> Unit:
    """The facts of one C/C++/CUDA file, judged with clang; `NotParsed` when it does not parse."""
    import clang.cindex as ci

    from .walk import Walker

    cat = opts.cat or catalog()
    refused: list[str] = []
    tu, args, headers, missing, errors = _translation_unit(ci, text, path, opts, cat, refused)
    older = _compiles_with(text, errors, opts, cat)
    if older is not None:     # the file's getter calls compile only against an older release's headers
        got = _translation_unit(ci, text, path, dataclasses.replace(opts, toolkit=older), cat, refused)
        if len(got[4]) < len(errors):
            tu, args, headers, missing, errors = got
            headers += f" (its calls of the getters compile only against those of CUDA {older}: judged so)"
    skip = tuple(a for i, a in enumerate(args) if i and args[i - 1] == "-isystem") + (RESOURCE_DIR, "/usr/include",
                                                                                      "/usr/lib", "/usr/local/include")
    w = Walker(tu, path, cat, normalizer(cat), skip, text, opts.foreign)
    w.cuda_version = _cuda_version(args)
    w.run()
    unit = Unit(path=path, lang="c", suppressions=suppressions(text), lines=text.count("\n") + 1,
                engine="clang", headers=headers)
    unit.note = _note(missing, errors, refused)

    def where(s: Any) -> str:
        if s.callers:
            lines = ", ".join(map(str, s.callers[:8])) + (", ..." if len(s.callers) > 8 else "")
            return f" (in the wrapper {s.fn.name}, reported once; called from line {lines})"
        return ""

    unit.queries, unit.exports = w.facts(where)
    tk = _cuda_version(args)
    for q in unit.queries:
        q.toolkit = tk
    for e in unit.exports:
        e.toolkit = tk
    _lost(unit, w, tu, path, errors, missing)
    unit.parses = opts.parses[0]
    unit.requests = len(w.tally)
    unit.unjudged = sorted((line, why) for line, why in w.tally if why)
    unit.judged = unit.requests - len(unit.unjudged)
    unit.clang_apis = w.portable()
    unit.flag_uses = w.flag_uses
    me = os.path.abspath(path)
    unit.misstores = sorted({(c.location.line, c.location.column, d.spelling) for c, d in w.misstores()
                             if c.location.file is not None and os.path.abspath(c.location.file.name) == me})
    unit.queries.sort(key=lambda q: (q.line, q.col))
    unit.called = frozenset(w.called)   # what later passes look for
    if opts.flip:
        from .configs import every

        unit = every(unit, tu, text, path, opts, cat, extract)
        _unseen(unit, text, w)
    unit.parses = opts.parses[0]     # the configurations' parses too
    return unit


def _unseen(unit: Unit, text: str, w: Any) -> None:
    """The lines that call a request API or a lookup where no request was seen, in any configuration, and none was
    said to be unjudged: each counted as found and unjudged, with why (nothing lost without a word)."""
    from .configs import request_lines

    lines = request_lines(text)
    if not lines:
        return
    seen = {q.line for q in unit.queries} | {e.line for e in unit.exports} | {n for n, _ in unit.unjudged} | \
        w.call_lines()
    lost = [n for n in lines if n not in seen]
    if lost:
        why = ("clang saw no request here: in a branch no configuration entered, inside code it could not parse, "
               "or a call of a pointer it could not follow")
        unit.unjudged = sorted([*unit.unjudged, *((n, why) for n in lost)])
        unit.requests += len(lost)


_CUDA_VERSION = re.compile(r"^[ \t]*#[ \t]*define[ \t]+CUDA_VERSION[ \t]+(\d+)", re.M)


def _cuda_version(args: list[str]) -> int:
    """The CUDA_VERSION of the cuda.h in the -isystem directories (0 when none is found)."""
    for i, a in enumerate(args):
        if i and args[i - 1] == "-isystem" and os.path.isfile(os.path.join(a, "cuda.h")):
            try:
                with open(os.path.join(a, "cuda.h"), encoding="utf-8", errors="replace") as fh:
                    m = _CUDA_VERSION.search(fh.read(1 << 20))
            except OSError:
                return 0
            return int(m.group(1)) if m else 0
    return 0


def _note(missing: list[str], errors: list[tuple[int, str]], refused: Sequence[str] = ()) -> str:
    """What clang could not see, and that only the facts depending on it are left unjudged."""
    said = _note_of(missing, errors)
    if refused:
        left = "; ".join(dict.fromkeys(refused))
        out = f"clang: left out (reading it would never end): {left}; only what it declares is unknown"
        said = f"{out}; {said}" if said else out
    return said


def _note_of(missing: list[str], errors: list[tuple[int, str]]) -> str:
    fix = "give their directories with -I or --compile-commands to check the file whole"
    if errors:
        line, msg = errors[0]
        at = f"line {line}: " if line else "in a header: "
        lost = f"not found: {_names(missing)}; " if missing else ""
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return (f"clang: {lost}{len(errors)} error{'s' if len(errors) > 1 else ''}, {at}{msg}{more}; the requests "
                f"that depend on them are not judged, the others are ("
                f"{fix if missing else 'check the flags (-D, -std, --compile-commands) it is compiled with'})")
    if missing:
        return f"clang: not found: {_names(missing)}; nothing the file's requests use came from them ({fix})"
    return ""


def _lost(unit: Unit, w: Any, tu: Any, path: str, errors: list[tuple[int, str]], missing: list[str]) -> None:
    """The requests clang dropped at an error: each counted and said why; a request's symbol, when it is a
    string literal, is still judged (its name), nothing else."""
    from .walk import EXPORT_APIS, lost_requests

    seen = {line for line, _ in w.tally}
    for api, line, col, sym, why in lost_requests(tu, path, errors, seen):
        hint = f" (not found: {_names(missing)})" if missing else ""
        w.tally.append((line, f"clang: {why}{hint}"))
        if sym and api not in EXPORT_APIS:
            unit.queries.append(Query(api=api, line=line, col=col, symbol=sym, version_kind="other",
                                      status="not_applicable", where=" (the rest of this request does not parse)"))


__all__ = [
    "CUDA_PREAMBLE", "KEEP_GOING", "MAX_LEFT_OUT", "NO_DEBUG_PRAGMAS", "RESOURCE_DIR", "SCAN_HEADERS", "SEARCH_LEVELS",
    "SEARCH_ROUNDS", "NotParsed", "Options", "Refused", "arguments", "available", "extract", "header_dirs",
    "include_dirs", "leave_out", "refuse_special",
]
