#!/usr/bin/env bash
# Run cuentry's GPU work on a machine with an NVIDIA driver (the device tool's H200), from the
# repository root, with the wheels it needs carried in .whl/ (the machine has no network):
#
#   bash tools/gpu_run.sh suite trace generate bench     # any subset, in that order
#
# suite: `pytest -m gpu tests/gpu` on both call backends; trace: the framework traces and the
# rendered page; generate: the generated C++ loader on the real driver; bench: the per-call, cold-start
# and trace benchmarks. Everything it prints goes to $OUT (default /tmp/cuentry-gpu-out) as a few files.
set -uo pipefail
OUT=${OUT:-/tmp/cuentry-gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
log() { echo "== $*" | tee -a "$OUT/run.txt"; }

log "machine: $($PY -V 2>&1); $(nvidia-smi -L 2>/dev/null | head -1); cc: $(command -v cc || echo none)"
$PY -m pip install -q --no-index --find-links .whl hatchling editables \
    cuda-pathfinder jsonschema hypothesis cffi pycparser >>"$OUT/run.txt" 2>&1
$PY -m pip install -q --no-index --no-build-isolation --no-deps -e . >>"$OUT/run.txt" 2>&1
$PY -c "import cuentry, cuentry.doctor as d; print('backend:', d.report()['backend'])" >>"$OUT/run.txt" 2>&1

for part in "$@"; do
  case "$part" in
    suite)
      log "pytest -m gpu tests/gpu (default backend)"
      mkdir -p /tmp/trace-out
      CUENTRY_GPU_OUT=/tmp/trace-out $PY -m pytest -m gpu tests/gpu -v -p no:cacheprovider >"$OUT/LAST_RUN.txt" 2>&1
      echo "# the same suite on the pure backend (CUENTRY_BACKEND=pure), same run:" >>"$OUT/LAST_RUN.txt"
      CUENTRY_BACKEND=pure $PY -m pytest -m gpu tests/gpu -q -p no:cacheprovider --ignore=tests/gpu/test_trace_gpu.py \
          >>"$OUT/LAST_RUN.txt" 2>&1
      # no machine's paths in the committed record (tests/test_packaging.py greps for them)
      sed -i -E "s#^(platform .* -- ).*/(python[0-9.]*)\$#\\1\\2#; s#^rootdir: .*#rootdir: .#" "$OUT/LAST_RUN.txt"
      tail -3 "$OUT/LAST_RUN.txt" | tee -a "$OUT/run.txt" ;;
    trace)
      log "framework traces"
      if [ -z "$(ls /tmp/trace-out 2>/dev/null)" ]; then
        mkdir -p /tmp/trace-out
        CUENTRY_GPU_OUT=/tmp/trace-out $PY -m pytest -m gpu tests/gpu/test_trace_gpu.py -v -p no:cacheprovider \
            >>"$OUT/run.txt" 2>&1
      fi
      $PY tools/trace_page.py /tmp/trace-out >"$OUT/trace-real-frameworks.md" 2>>"$OUT/run.txt"
      tar czf "$OUT/trace-out.tgz" -C /tmp/trace-out . ;;
    generate)
      log "generated loader on the real driver"
      [ -f "$OUT/LAST_RUN.txt" ] || $PY -m pytest -m gpu tests/gpu/test_generate_gpu.py -v -p no:cacheprovider >>"$OUT/run.txt" 2>&1 ;;
    bench)
      log "benchmarks"
      mkdir -p /tmp/bench
      for b in bench_gpu bench_coldstart bench_table bench_devptr; do
        [ -f "benchmarks/$b.py" ] || continue
        $PY "benchmarks/$b.py" --json >"/tmp/bench/$b.json" 2>>"$OUT/run.txt"
        CUENTRY_BACKEND=pure $PY "benchmarks/$b.py" --json >"/tmp/bench/${b}_pure.json" 2>>"$OUT/run.txt"
      done
      # every calling style and both backends in one run, on the real driver (bench_calls runs each backend itself)
      timeout 300 $PY benchmarks/bench_calls.py --json \
          --driver "$($PY -c 'import cuentry; print(cuentry.Driver.load().path)')" \
          >/tmp/bench/bench_calls.json 2>>"$OUT/run.txt"
      [ -f benchmarks/bench_trace.py ] && $PY benchmarks/bench_trace.py --rounds 15 --json \
          >/tmp/bench/bench_trace.json 2>>"$OUT/run.txt"
      tar czf "$OUT/bench.tgz" -C /tmp/bench . ;;
    *) log "unknown part $part" ;;
  esac
done
log "done"
