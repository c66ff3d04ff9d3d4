"""`--output-format text` (the default): `path:line:col: CODE severity: message`, one finding a line, `[*]` where
`--fix` applies a verified fix; the files not (fully) linted on standard error; a summary line that counts what
was found, what can be fixed, what was not linted and the suppressions that do nothing. Also `--statistics`,
`--min-driver` and `--show-fixes`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...catalog import format_version
from ._base import Rendered, Run, Style, shown

__all__ = ["render"]


def render(run: Run, style: Style) -> Rendered:
    rep = run.report
    got = Rendered()
    got.err += _problems(rep.problems)
    got.err += [f"{shown(j.path)}: note: {shown(j.note)}" for j in rep.judged if j.note]
    if run.min_driver:
        got.out += _pins(rep)
        return got
    if run.statistics:
        got.out += _statistics(rep, run)
    else:
        got.out += _findings(run, style)
    got.out += [f"{shown(u.path)}:{u.line}: {style.warn('warning')}: {shown(u.message)}" for u in rep.unused_suppressions]
    got.out += [f"{shown(n.path)}: {style.warn('note')}: {shown(n.message)}" for n in rep.notes]
    got.out += [f"judged by clang against {shown(h)}" for h in sorted({f.headers for f in rep.findings if f.headers})]
    got.out.append(_summary(run))
    if run.fixing:
        got.out += _fixed(run)
    return got


def _applies(f: Any, run: Run) -> bool:
    """Whether `--fix` (as asked: with `--unsafe-fixes` or not) applies the finding's verified fix."""
    return bool(f.fix == "safe" or (f.fix == "unsafe" and run.unsafe))


def _findings(run: Run, style: Style) -> list[str]:
    out = []
    regions = run.plan.regions if run.plan is not None else {}
    for f in run.report.findings:
        mark = " [*]" if _applies(f, run) else ""
        out.append(f"{shown(f.path)}:{f.line}:{f.col}: {style.bad(f.code)} {f.severity}: {shown(f.message)}{mark}")
        got = regions.get((f.path, f.code, f.line, f.col)) if run.show_fixes and f.fix != "none" else None
        if got is not None:
            out.append(f"    fix ({f.fix}{'' if _applies(f, run) else ', with --unsafe-fixes'}): {shown(got[0].what)}")
    return out


def _problems(problems: list[Any]) -> list[str]:
    """One line per file not linted; files not linted for one reason, more than one, are one line."""
    by_reason: dict[str, list[Any]] = {}
    for p in problems:
        by_reason.setdefault(p.message, []).append(p)
    out = []
    for reason, ps in by_reason.items():
        if len(ps) == 1:
            out.append(f"{shown(ps[0].path)}: not linted: {shown(reason)}")
        else:
            names = ", ".join(shown(p.path) for p in ps[:3]) + (", ..." if len(ps) > 3 else "")
            out.append(f"{len(ps)} files not linted ({names}): {shown(reason)}")
    return out


def _statistics(rep: Any, run: Run) -> list[str]:
    """One line per rule: how many findings, whether `--fix` repairs some, the rule's name."""
    count = Counter(f.code for f in rep.findings)
    fixable = Counter(f.code for f in rep.findings if _applies(f, run))
    names = {f.code: f.rule for f in rep.findings}
    out = [f"{n:>6}  {code}  {'[*] ' if fixable[code] else '    '}{names[code]}"
           for code, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]
    parsed = [j for j in rep.judged if j.parses]
    if parsed:
        most = max(parsed, key=lambda j: j.parses)
        out.append(f"{sum(j.parses for j in parsed):>6}  parses by libclang of {_count(len(parsed), 'file')} "
                   f"(at most {most.parses}: {shown(most.path)})")
    return out


def _pins(rep: Any) -> list[str]:
    """`--min-driver`: the lowest driver the pins need (the manifest's computation), and the pin each symbol's
    chain needs (its fallbacks, and whether it is optional, after it)."""
    md = rep.min_driver
    out = [f"minimum driver for the pins found: {format_version(md)} ({md})" if md else "no literal version pins found"]
    for sym, v in sorted(rep.pins.items(), key=lambda kv: (-kv[1], kv[0])):
        more = sorted(rep.chains.get(sym, ()), reverse=True)
        chain = f" (asked at {', '.join(map(str, more))})" if len(more) > 1 else ""
        out.append(f"  {v:>6}  {sym}{chain}{' (optional: under a driver-version test)' if sym in rep.optional else ''}")
    return out


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _summary(run: Run) -> str:
    """One line: how many findings (how many fixable) in how many files, what was not (fully) linted, and the
    suppressions that do nothing."""
    rep = run.report
    n = len(rep.findings)
    files = f"{_count(rep.files, 'file')} ({_count(rep.lines, 'line')})"
    partial = len({note.path for note in rep.notes})
    tail = (f"; {len(rep.problems)} not linted" if rep.problems else "") + (
        f"; {partial} not fully expanded (see the notes)" if partial else "") + (
        f"; {_count(len(rep.unused_suppressions), 'unused suppression')}" if rep.unused_suppressions else "")
    safe, unsafe = sum(f.fix == "safe" for f in rep.findings), sum(f.fix == "unsafe" for f in rep.findings)
    if run.unsafe:
        fixes = f"{safe + unsafe} fixable with --fix --unsafe-fixes" if safe + unsafe else ""
    else:
        fixes = "; ".join(x for x in (f"{safe} fixable with --fix" if safe else "",
                                      f"{unsafe} more with --fix --unsafe-fixes" if unsafe else "") if x)
    fixes = f" ({fixes})" if fixes else ""
    return (f"{_count(n, 'finding')}{fixes} in {files}" if n else f"no findings in {files}") + tail


def _fixed(run: Run) -> list[str]:
    """After `--fix`: how many findings were fixed; with `--show-fixes`, each of them and what its fix changed."""
    plan = run.plan
    applied = list(plan.applied) if plan is not None else []
    withdrawn = list(plan.withdrawn) if plan is not None else []
    if not applied and not withdrawn:
        return []
    out = [f"fixed {_count(len(applied), 'finding')}" if applied else "no fixes applied"]
    if run.show_fixes:
        for f in applied:
            got = plan.regions.get((f.path, f.code, f.line, f.col))
            out.append(f"  {shown(f.path)}:{f.line}:{f.col}: {f.code} {shown(got[0].what) if got else ''}".rstrip())
    return out
