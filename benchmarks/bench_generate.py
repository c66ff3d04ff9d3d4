"""What a generated C/C++ loader header costs the build (issue 31.3), against baselines of the same run.

* include: a file that only includes a 500-entry header (``-fsyntax-only``), against an empty file;
  C and C++ (the C++ layer included, as every C++ includer gets it). Goal: at most 20 ms more. With a CUDA
  include directory (``--cuda-include``): C++ after the file's own ``#include <cuda.h>`` against that file
  alone, and C++ with cuda.h on the include path (the header includes it itself) against an empty file.
* python: ``import`` of a generated 500-entry Python module (its .pyc written, as an install has it),
  against bare ``python -c pass`` (wall time, median). Goal: at most 20 ms more.
* implementation: the file that defines ``<NAME>_IMPLEMENTATION`` (``-c -O2``), against a hand-written
  500-entry loader of the usual shape (the same typed function-pointer struct, a table of names and
  versions, dlopen, one cuGetProcAddress_v2 loop under pthread_once), C and C++. Goal: within 3x.

Each time is the median CPU time (user + system, of the compiler and its children) of ``--runs`` runs; the
cases run interleaved so drift hits all alike.
This is a benchmark, not a test: nothing fails; the goals are printed next to the numbers.

    python benchmarks/bench_generate.py [--entries 500] [--runs 15] [--cc gcc] [--cxx g++] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import statistics
import subprocess
import tempfile
from pathlib import Path

from _common import add_src

add_src()

from cuentry import manifest  # noqa: E402
from cuentry.catalog import catalog  # noqa: E402
from cuentry.generate import generate_c, generate_python  # noqa: E402
from cuentry.generate.c import member  # noqa: E402
from cuentry.generate.model import plan  # noqa: E402


def _manifest(n: int) -> str:
    cat = catalog()
    syms = [s for s in cat.symbols() if cat.versions(s)]
    items = [f'{{ symbol = "{sym}", version = {cat.first_version(sym, "legacy")}, name = "e{i}" }}'
             for i, sym in zip(range(n), itertools.cycle(syms))]
    return '[table]\nname = "big"\nstream = "legacy"\noptional = [\n' + ",\n".join(items) + "\n]\n"


def _hand_written(text: str, n: int) -> str:
    """A hand-written loader of the usual shape, typed as the generated one (its typedefs reused)."""
    m = manifest.loads(_manifest(n))
    p = plan(m)
    start = text.index("/* Function-pointer types")
    typedefs = text[text.index("\n", start) + 1:text.index("struct big_pin_state")]
    types = text[text.index("/* C++: one definition"):text.index('#ifdef __cplusplus\nextern "C" {')]
    rows = []
    fields = []
    for s in p.slots:
        for name, abi in s.members():
            fields.append(f"    big_{abi.pfn} {member(name)};")
    for s in p.slots:
        x = s.pins[0]
        rows.append(f'    {{"{x.symbol}", {x.version}, offsetof(struct hand_table, {member(x.member)})}},')
    return "\n".join([
        "#include <stddef.h>", "#include <stdint.h>", "#include <string.h>", "#include <dlfcn.h>", "#include <pthread.h>",
        "#if defined(_WIN32)", "#define BIG_CUDAAPI __stdcall", "#else", "#define BIG_CUDAAPI", "#endif",
        types, "#ifdef __cplusplus", 'extern "C" {', "#endif", typedefs,
        "struct hand_table {", *fields, "};",
        "struct hand_row { const char *symbol; int version; size_t offset; };",
        "static const struct hand_row hand_rows[] = {", *rows, "};",
        "static struct hand_table hand_global;", "static pthread_once_t hand_once = PTHREAD_ONCE_INIT;",
        "typedef int (*hand_gpa)(const char *, void **, int, unsigned long long, int *);",
        "static void hand_load(void) {",
        '    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);',
        "    void *sym;", "    hand_gpa gpa;", "    size_t i;",
        "    if (lib == NULL) return;", '    sym = dlsym(lib, "cuGetProcAddress_v2");', "    if (sym == NULL) return;",
        "    memcpy(&gpa, &sym, sizeof sym);",
        "    for (i = 0; i < sizeof hand_rows / sizeof hand_rows[0]; i++) {",
        "        void *fn = NULL;", "        int q = 0;",
        "        if (gpa(hand_rows[i].symbol, &fn, hand_rows[i].version, 1, &q) == 0 && q == 0 && fn != NULL)",
        "            memcpy((char *)&hand_global + hand_rows[i].offset, &fn, sizeof fn);", "    }", "}",
        "const struct hand_table *hand_get(void) { (void)pthread_once(&hand_once, hand_load); return &hand_global; }",
        "#ifdef __cplusplus", "}", "#endif", ""])


def _time(cmd: list[str]) -> float:
    """CPU seconds (user + system) of the compiler: another job on a shared machine does not inflate it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _python_import(d: Path, n: int, runs: int) -> tuple[float, float]:
    """(bare python, python importing the generated module): median wall ms."""
    import py_compile
    import sys
    import time

    path = d / "big_table.py"
    path.write_text(generate_python(manifest.loads(_manifest(n))))
    py_compile.compile(str(path), cfile=str(d / "__pycache__" / f"big_table.{sys.implementation.cache_tag}.pyc"))
    cases = {"bare": [sys.executable, "-c", "pass"], "import": [sys.executable, "-c", "import big_table"]}
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(runs):
        for k, cmd in cases.items():
            t = time.perf_counter()
            subprocess.run(cmd, check=True, cwd=d)
            times[k].append(time.perf_counter() - t)
    return 1000 * statistics.median(times["bare"]), 1000 * statistics.median(times["import"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=500)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cuda-include", default="/usr/local/cuda-13.0/include",
                    help="a CUDA include directory for the C++ cases with cuda.h (skipped where it has none)")
    args = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="cuentry-bench-generate-"))
    text = generate_c(manifest.loads(_manifest(args.entries)))
    (d / "big.h").write_text(text)
    files = {
        "empty.c": "", "include.c": '#include "big.h"\n',
        "empty.cpp": "", "include.cpp": '#include "big.h"\n',
        "impl.c": '#define BIG_IMPLEMENTATION\n#include "big.h"\n', "impl.cpp": '#define BIG_IMPLEMENTATION\n#include "big.h"\n',
        "hand.c": _hand_written(text, args.entries), "hand.cpp": _hand_written(text, args.entries),
    }
    cuda = Path(args.cuda_include)
    if (cuda / "cuda.h").is_file():  # C++ with cuda.h on the include path: the header includes it itself
        files.update({"cuda.cpp": "#include <cuda.h>\n", "cuda_include.cpp": '#include <cuda.h>\n#include "big.h"\n'})
    for name, body in files.items():
        (d / name).write_text(body)
    cases: dict[str, list[str]] = {}
    for name in files:
        cc = args.cc if name.endswith(".c") else args.cxx
        std = "-std=c99" if name.endswith(".c") else "-std=c++17"
        mode = ["-fsyntax-only"] if name.startswith(("empty", "include", "cuda")) else ["-c", "-O2", "-o", str(d / "x.o")]
        cases[name] = [cc, std, f"-I{d}", *mode, str(d / name)]
        if name.startswith("cuda"):
            cases[name].insert(3, f"-I{cuda}")
            cases["include_path.cpp"] = [args.cxx, "-std=c++17", f"-I{d}", f"-I{cuda}", "-fsyntax-only",
                                         str(d / "include.cpp")]
    for cmd in cases.values():  # warm the caches once; a broken case fails here
        subprocess.run(cmd, check=True)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):
        for k, cmd in cases.items():
            times[k].append(_time(cmd))
    ms = {k: 1000 * statistics.median(v) for k, v in times.items()}
    bare, imported = _python_import(d, args.entries, max(args.runs, 15))
    out = {
        "entries": args.entries, "runs": args.runs, "ms": {k: round(v, 1) for k, v in ms.items()},
        "include_over_empty_ms": {"c": round(ms["include.c"] - ms["empty.c"], 1),
                                  "c++": round(ms["include.cpp"] - ms["empty.cpp"], 1)},
        "include_over_empty_ratio": {"c": round(ms["include.c"] / ms["empty.c"], 2),
                                     "c++": round(ms["include.cpp"] / ms["empty.cpp"], 2)},
        "impl_over_hand": {"c": round(ms["impl.c"] / ms["hand.c"], 2), "c++": round(ms["impl.cpp"] / ms["hand.cpp"], 2)},
        "python_import_ms": round(imported, 1), "python_bare_ms": round(bare, 1),
        "python_import_over_bare_ms": round(imported - bare, 1),
    }
    if "cuda.cpp" in ms:
        out["cxx_cuda_h"] = {"after_cuda_h_over_cuda_h_ms": round(ms["cuda_include.cpp"] - ms["cuda.cpp"], 1),
                             "on_include_path_over_empty_ms": round(ms["include_path.cpp"] - ms["empty.cpp"], 1),
                             "cuda_h_over_empty_ms": round(ms["cuda.cpp"] - ms["empty.cpp"], 1)}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.entries}-entry header, median of {args.runs} runs ({args.cc}/{args.cxx})")
    if "cxx_cuda_h" in out:
        x = out["cxx_cuda_h"]
        print(f"  c++  after the file's own cuda.h: +{x['after_cuda_h_over_cuda_h_ms']:.1f} ms over cuda.h alone; "
              f"cuda.h on the include path, not included by the file: +{x['on_include_path_over_empty_ms']:.1f} ms "
              f"(cuda.h itself: +{x['cuda_h_over_empty_ms']:.1f} ms)")
    for lang in ("c", "c++"):
        ext = "c" if lang == "c" else "cpp"
        print(f"  {lang:4} include only: {ms['include.' + ext]:6.1f} ms, empty file {ms['empty.' + ext]:6.1f} ms: "
              f"+{out['include_over_empty_ms'][lang]:.1f} ms (goal <= 20 ms)")
        print(f"  {lang:4} implementation: {ms['impl.' + ext]:6.1f} ms, hand-written {ms['hand.' + ext]:6.1f} ms: "
              f"{out['impl_over_hand'][lang]:.2f}x (goal <= 3x)")
    print(f"  python import: {imported:6.1f} ms, bare python {bare:6.1f} ms: +{imported - bare:.1f} ms (goal <= 20 ms)")


if __name__ == "__main__":
    main()
