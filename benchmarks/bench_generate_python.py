"""A generated Python table module's import plus first calls, against a hand-written ctypes loader (issue 40).

Each case is a fresh interpreter (bytecode compiled, as an install has it) on cuentry's fake driver:

* bare: ``python -c pass``;
* hand: a ctypes loader of the same entries as a careful hand would write it: ``CDLL`` of the driver,
  ``cuGetProcAddress_v2`` asked for every entry at its pinned version and flags, result and query result
  checked, one ``CFUNCTYPE`` prototype per entry with its argument types; then the first calls;
* generated: ``import <name>_table`` and the same first calls through the module's table (it declares the
  table, loads the driver, resolves every entry and binds the two called).

* call layer: ``import ctypes, cuentry.calls, cuentry.loader`` and nothing else: what any cuentry typed call
  imports before it resolves anything (the conversion contract, device memory, the backends, the platform loader,
  the errors), eagerly for fork safety. A floor for every design that calls through the call layer.

The first calls are ``cuInit(0)`` and ``cuDeviceGetCount(ctypes.byref(n))``. Times are the median CPU time
(user + system) of the child over ``--runs`` runs, the cases interleaved. Goal: generated <= 2x hand, both
over bare (what each adds to a program's start).

    python benchmarks/bench_generate_python.py [--manifest tests/generate_data/real_ports/momo.toml] [--runs 21] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import add_src

add_src()

from cuentry import manifest  # noqa: E402
from cuentry.generate import generate_python  # noqa: E402
from cuentry.generate.model import plan  # noqa: E402
from cuentry.names import FLAGS  # noqa: E402
from cuentry.testing import fakedriver  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
_CTYPES = {"int": "c_int", "unsigned int": "c_uint", "size_t": "c_size_t", "unsigned long long": "c_ulonglong",
           "float": "c_float", "double": "c_double", "long long": "c_longlong", "short": "c_short",
           "unsigned short": "c_ushort", "unsigned char": "c_ubyte", "char": "c_char", "long": "c_long",
           "unsigned long": "c_ulong"}


def _ctype(canonical: str) -> str:
    """The ctypes type a careful hand writes for a parameter: scalars by their C type, everything else a pointer."""
    c = " ".join(canonical.replace("const ", "").split())
    if c in _CTYPES:
        return f"ctypes.{_CTYPES[c]}"
    if c.startswith("enum "):
        return "ctypes.c_int"
    return "ctypes.c_void_p"


def _hand(path: Path, driver: str) -> str:
    """The hand-written loader of the manifest's entries (first pin of each), and its first calls."""
    p = plan(manifest.load(path))
    rows = []
    for s in p.slots:
        a = s.abi
        args = ", ".join(_ctype(q.canonical) for q in a.signature.params)
        rows.append(f"    ({a.symbol!r}, {a.version}, ({args}{',' if args else ''})),")
    return "\n".join([
        "import ctypes",
        f"lib = ctypes.CDLL({driver!r})",
        "gpa = lib.cuGetProcAddress_v2",
        "gpa.restype = ctypes.c_int",
        "gpa.argtypes = (ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_ulonglong,",
        "                ctypes.POINTER(ctypes.c_int))",
        "ENTRIES = (", *rows, ")",
        "table = {}",
        "for name, version, argtypes in ENTRIES:",
        "    fn, q = ctypes.c_void_p(), ctypes.c_int(-1)",
        f"    rc = gpa(name.encode(), ctypes.byref(fn), version, {FLAGS[p.stream]}, ctypes.byref(q))",
        "    if rc != 0 or q.value != 0 or not fn.value:",
        "        raise RuntimeError(f'{name}@{version}: {rc} {q.value}')",
        "    table[name] = ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(fn.value)",
        "n = ctypes.c_int()",
        "assert table['cuInit'](0) == 0 and table['cuDeviceGetCount'](ctypes.byref(n)) == 0 and n.value > 0",
        ""])


def _generated(name: str, out_style: str) -> str:
    if out_style == "out":  # cuentry.out(), for a checkout whose callables refuse ctypes.byref
        return "\n".join([f"import {name}_table as m", "import cuentry", "n = cuentry.out('int')", f"t = m.{name}",
                          "assert t.cuInit(0) == 0 and t.cuDeviceGetCount(n) == 0 and n[0] > 0", ""])
    return "\n".join(["import ctypes", f"import {name}_table as m", "n = ctypes.c_int()",
                      f"t = m.{name}", "assert t.cuInit(0) == 0 and t.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0",
                      ""])


def _cpu(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", default=str(ROOT / "tests" / "generate_data" / "real_ports" / "momo.toml"))
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--src", default=str(ROOT / "src"), help="the cuentry checkout's src to measure (default: this one)")
    ap.add_argument("--out-style", choices=("byref", "out"), default="byref",
                    help="how the generated case passes its out-parameter (out: cuentry.out(), for older checkouts)")
    args = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="cuentry-bench-genpy-"))
    driver = str(fakedriver.build(d / "fake", "full"))
    m = manifest.load(args.manifest)
    (d / f"{m.name}_table.py").write_text(generate_python(m))
    (d / "hand.py").write_text(_hand(Path(args.manifest), driver))
    (d / "generated.py").write_text(_generated(m.name, args.out_style))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"CUENTRY_DRIVER": driver, "CUENTRY_FAKE_DRIVER_VERSION": "13000",
                "PYTHONPATH": os.pathsep.join([str(d), args.src])})
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(args.src) / "cuentry"), str(d)], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    cases = {"bare": [sys.executable, "-c", "pass"], "hand": [sys.executable, "hand.py"],
             "generated": [sys.executable, "generated.py"],
             "call_layer": [sys.executable, "-c", "import ctypes, cuentry.calls, cuentry.loader"]}
    for cmd in cases.values():  # warm the caches once; a broken case fails here
        subprocess.run(cmd, check=True, env=env, cwd=d)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):
        for k, cmd in cases.items():
            times[k].append(_cpu(cmd, env, d))
    ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
    hand, gen, floor = ms["hand"] - ms["bare"], ms["generated"] - ms["bare"], ms["call_layer"] - ms["bare"]
    out = {"manifest": os.path.relpath(args.manifest, ROOT), "entries": len(m.entries), "runs": args.runs,
           "src": "this checkout" if Path(args.src).resolve() == (ROOT / "src").resolve() else "another (--src)",
           "out_style": args.out_style,
           "cpu_ms": {k: round(v, 1) for k, v in ms.items()},
           "over_bare_ms": {"hand": round(hand, 1), "generated": round(gen, 1), "call_layer": round(floor, 1)},
           "generated_over_hand": round(gen / hand, 2) if hand > 0 else None,
           "call_layer_over_hand": round(floor / hand, 2) if hand > 0 else None}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{out['manifest']} ({out['entries']} entries), median CPU time of {args.runs} runs")
    print(f"  bare python {ms['bare']:.1f} ms; hand ctypes loader +{hand:.1f} ms; generated module +{gen:.1f} ms: "
          f"{out['generated_over_hand']}x (goal <= 2x)")
    print(f"  importing the call layer alone (ctypes, cuentry.calls, cuentry.loader): +{floor:.1f} ms: "
          f"{out['call_layer_over_hand']}x the whole hand loader")


if __name__ == "__main__":
    main()
