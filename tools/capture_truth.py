"""Ask a real driver every catalog (symbol, ABI version) and record its answers as test data.

For each symbol: each of its ABI versions, each version + 10, the first version - 1,
the newest, the driver's own version and 99999, with flags 0, 1 and 2; plus odd
inputs (suffixed names, wrong case, empty, flags 3 and 4, versions 0 and -1) and the
v1 ``cuGetProcAddress``. Each answer records the CUresult, the query result (-1 when
the driver left it untouched) and which exported names the pointer equals. NULL
symbol/output pointers are not asked: they crash a real driver.

    python tools/capture_truth.py [--driver PATH] -o tests/data/driver-<version>-truth.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cuentry.catalog import catalog  # noqa: E402
from cuentry.driver import Driver  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    drv = Driver.load(a.driver)
    cat = catalog()
    dv = drv.driver_version or 0
    names = sorted({x.exported for x in cat if x.exported})
    by_addr: dict[int, list[str]] = {}
    for n in names:
        addr = drv.library.address(n)
        if addr:
            by_addr.setdefault(addr, []).append(n)

    def ask(api: str, version: int, flags: int) -> dict[str, object]:
        rc, st, addr = drv.boot.get_proc_address("cuGetProcAddress_v2", api.encode(), version, flags, True)
        return {"rc": rc, "status": -1 if st is None else st, "names": by_addr.get(addr, []) if addr else []}

    queries = []
    t0 = time.perf_counter()
    for sym in cat.symbols():
        vs = cat.versions(sym)
        asked = sorted({*vs, *(v + 10 for v in vs), vs[0] - 1, dv, 99999})
        for v in asked:
            for f in (0, 1, 2):
                queries.append({**ask(sym, v, f), "api": sym, "version": v, "flags": f})
    odd_cases = {
        "suffix_v2": ("cuMemAlloc_v2", dv, 0), "suffix_ptds": ("cuMemcpy_ptds", dv, 2),
        "wrong_case": ("CUMemAlloc", dv, 0), "lower_case": ("cumemalloc", dv, 0), "empty": ("", dv, 0),
        "bad_flags_3": ("cuMemAlloc", dv, 3), "bad_flags_4": ("cuMemAlloc", dv, 4),
        "version_zero": ("cuMemAlloc", 0, 0), "version_negative": ("cuMemAlloc", -1, 0),
        "nonexistent": ("cuDefinitelyNotAThing", dv, 0), "cuGetProcAddress_self": ("cuGetProcAddress", 12000, 0),
        "cuGetProcAddress_self_11030": ("cuGetProcAddress", 11030, 0),
    }
    odd = {k: ask(*v) for k, v in odd_cases.items()}
    v1 = {}
    for api, ver, fl in (("cuMemAlloc", 3020, 0), ("cuMemAlloc", 2000, 0), ("cuMemAlloc", 1000, 0),
                         ("cuDefinitelyNotAThing", dv, 0), ("cuStreamBeginCapture", 10010, 2)):
        rc, _, addr = drv.boot.get_proc_address("cuGetProcAddress", api.encode(), ver, fl, False)
        v1[f"{api}@{ver}/{fl}"] = {"rc": rc, "names": by_addr.get(addr, []) if addr else []}
    out = {"driver_version": dv, "libcuda": drv.path, "init_rc": drv.init_result, "captured_with": "cuentry",
           "date": time.strftime("%Y-%m-%d"), "seconds": round(time.perf_counter() - t0, 3),
           "n_queries": len(queries), "queries": queries, "odd": odd, "v1": v1,
           "exported_checked": len(names), "exported_found": sum(len(v) for v in by_addr.values())}
    Path(a.output).write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"{len(queries)} queries on driver {dv} ({drv.path}) in {out['seconds']} s -> {a.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
