"""`cuentry generate`: a C/C++ loader header or a typed Python table module from a manifest."""

from __future__ import annotations

import argparse
import os
import tempfile

from ..errors import UsageError
from . import EXIT_FAIL, EXIT_OK, SubParsers
from .output import Out, count

__all__ = ["EPILOG", "register", "run", "write_atomic"]

EPILOG = """\
c       one self-contained header, C99 and C++11: struct NAME_table, NAME_load(), NAME_load_with(),
        NAME_available(), NAME_report(), NAME_MIN_DRIVER; definitions where NAME_IMPLEMENTATION
        is defined before including it (see docs/generate.md)
python  a module with a typed cuentry.Table subclass: editors and mypy see each entry's parameters

The manifest is the one `cuentry check` reads (see `cuentry check --help`).
exit codes: 0 written (or, with --check, up to date); 1 --check found it missing or stale;
2 bad manifest, table name or output path.
"""


def register(sub: SubParsers) -> None:
    g = sub.add_parser("generate", help="write a C/C++ loader header or a typed Python table from a manifest",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("language", choices=("c", "python"), help="what to write")
    g.add_argument("manifest", help="TOML manifest")
    g.add_argument("-o", "--output", metavar="PATH", default="-", help="file to write (default: standard output)")
    g.add_argument("--json", action="store_true", help="print what was written as JSON (needs -o)")
    g.add_argument("--check", action="store_true",
                   help="write nothing: exit 1 when the -o file is missing or differs from what would be generated")
    g.set_defaults(func=run)


def _file_mode(path: str) -> int:
    """The mode a written file gets: an existing file's own, else what open() would give (0666 less the umask)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomic(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory (no half-written output).

    The file gets the mode a plain write would give it (not the temporary file's 0600).
    """
    directory = os.path.dirname(os.path.abspath(path))
    mode = _file_mode(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".cuentry-", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write into {directory}: {exc.strerror}", hint="choose another -o path") from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise UsageError(f"cannot write {path}: {exc.strerror}", hint="choose another -o path") from None


def _check(args: argparse.Namespace, out: Out, text: str) -> int:
    """--check: compare the -o file with what would be generated (for CI)."""
    if args.output == "-":
        raise UsageError("--check compares a written file", hint="give -o PATH with --check")
    try:
        with open(args.output, encoding="utf-8", newline="") as fh:
            current = fh.read()
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise UsageError(f"cannot read {args.output}: {exc.strerror}", hint="check the -o path") from None
    fresh = current == text
    if args.json:
        out.json({"ok": fresh, "language": args.language, "manifest": args.manifest, "output": args.output,
                  "exists": current is not None, "up_to_date": fresh})
    elif fresh:
        out.print(f"{args.output} is up to date")
    else:
        state = "is missing" if current is None else "differs from what the manifest generates"
        out.print(out.bad(f"{args.output} {state}: run cuentry generate {args.language} {args.manifest} "
                          f"-o {args.output}"))
    return EXIT_OK if fresh else EXIT_FAIL


def run(args: argparse.Namespace, out: Out) -> int:
    from ..generate import generate
    from ..generate.c import member
    from ..manifest import load

    gen = generate(load(args.manifest), args.language)
    text, p = gen.text, gen.plan
    if args.check:
        return _check(args, out, text)
    if args.output == "-":
        if args.json:
            raise UsageError("--json describes a written file", hint="give -o PATH with --json")
        out.print(text.rstrip("\n"))
        return EXIT_OK
    if os.path.exists(args.output) and os.path.samefile(args.output, args.manifest):
        raise UsageError(f"-o {args.output} is the manifest itself", hint="write the output to another file")
    if os.path.isdir(args.output):
        raise UsageError(f"-o {args.output} is a directory", hint="name the file to write, e.g. -o acme.h")
    write_atomic(args.output, text)
    if args.json:
        out.json({"ok": True, "language": args.language, "manifest": args.manifest, "output": args.output,
                  "table": p.name,
                  "stream": p.stream, "min_driver": p.min_driver, "bytes": len(text.encode()),
                  "entries": [{"name": s.attr, "required": s.required,
                               "pins": [{"symbol": x.symbol, "version": x.version, "abi": x.abi.pfn,
                                         "member": member(x.member) if args.language == "c" else s.attr}
                                        for x in s.pins]} for s in p.slots]})
    elif getattr(args, "verbose", 0) >= 0:  # -q: the file is the product, the line about it is not
        out.print(f"wrote {args.output}: table {p.name!r}, {count(len(p.slots), 'entry', 'entries')}, "
                  f"{p.stream.replace('_', '-')} stream, minimum driver {p.min_driver}")
    return EXIT_OK
