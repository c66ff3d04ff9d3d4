"""CI helper: run `cuentry doctor --json` with this interpreter; fail unless the call backend is the one named.

Also fails when cuentry was imported from the source tree instead of the installed package.
Usage: python tools/ci_backend.py compiled|pure
"""

from __future__ import annotations

import json
import subprocess
import sys

import cuentry


def main() -> int:
    want = sys.argv[1]
    proc = subprocess.run([sys.executable, "-m", "cuentry", "doctor", "--json"], capture_output=True, text=True,
                          check=False)
    report = json.loads(proc.stdout)
    got = report["backend"]["name"]
    print(f"cuentry {report['cuentry']} from {cuentry.__file__}: backend {got} ({report['backend']['detail']})")
    if "/src/cuentry/" in cuentry.__file__:
        print("error: cuentry was imported from the source tree, not from the installed package")
        return 1
    if got != want:
        print(f"error: expected the {want} backend")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
