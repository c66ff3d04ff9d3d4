#!/usr/bin/env bash
# The steps of cuentry's GitHub Action (action.yml), as one script so the tests run exactly what CI runs.
#
#   cuentry-action.sh preflight  Linux and a C compiler (RUNNER_OS, CC), or one ::error line and exit 2
#   cuentry-action.sh lint    reads INPUT_PATHS, INPUT_SELECT, INPUT_IGNORE, INPUT_SARIF_FILE
#   cuentry-action.sh check   reads INPUT_MANIFEST, INPUT_DRIVER, INPUT_DRIVER_VERSION
#   cuentry-action.sh gate    reads INPUT_FAIL_ON_FINDINGS, FINDINGS, LINT_EXIT
#
# Inputs arrive in the environment (never interpolated into the script: no
# injection). Outputs go to $GITHUB_OUTPUT; problems become one ::error line
# each (a GitHub annotation, with file, line and column where known).
set -uo pipefail

CUENTRY=${CUENTRY:-cuentry}
PYTHON=${PYTHON:-python3}
OUT=${GITHUB_OUTPUT:-/dev/null}

output() { printf '%s=%s\n' "$1" "$2" >>"$OUT"; }

# One ::error line from cuentry's "cuentry: error: FILE:LINE:COL: message" (or any other first line).
annotate() {
    local title=$1 line=$2 re='^cuentry: error: ([^:]+):([0-9]+):([0-9]+): (.*)$'
    if [[ $line =~ $re ]]; then
        printf '::error file=%s,line=%s,col=%s,title=%s::%s\n' \
            "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}" "$title" "${BASH_REMATCH[4]}"
    else
        printf '::error title=%s::%s\n' "$title" "${line#cuentry: error: }"
    fi
}

# 12.4 -> 12040, 12040 -> 12040; anything else: empty.
driver_number() {
    local v=$1
    if [[ $v =~ ^([0-9]+)\.([0-9]+)(\.[0-9]+)?$ ]]; then
        echo $((10#${BASH_REMATCH[1]} * 1000 + 10#${BASH_REMATCH[2]} * 10))
    elif [[ $v =~ ^[0-9]{4,5}$ ]] && ((10#$v % 10 == 0)); then
        echo $((10#$v))
    fi
}

do_lint() {
    local sarif=${INPUT_SARIF_FILE:-cuentry.sarif} err rc n
    local -a paths args=()
    read -ra paths <<<"${INPUT_PATHS:-.}"
    [[ ${#paths[@]} -gt 0 ]] || paths=(.)
    [[ -n ${INPUT_SELECT:-} ]] && args+=(--select "$INPUT_SELECT")
    [[ -n ${INPUT_IGNORE:-} ]] && args+=(--ignore "$INPUT_IGNORE")
    err=$(mktemp)
    # --no-fix: the report (with each repair as a SARIF fix) is of the code as checked out, even where the
    # project's configuration says fix = true.
    "$CUENTRY" lint --sarif --no-fix "${args[@]}" -- "${paths[@]}" >"$sarif" 2>"$err"
    rc=$?
    cat "$err" >&2
    if [[ $rc -ge 2 ]]; then
        annotate "cuentry lint" "$(head -n1 "$err")"
        rm -f "$err"
        return "$rc"
    fi
    rm -f "$err"
    n=$("$PYTHON" -c 'import json,sys; print(sum(len(r.get("results", [])) for r in json.load(open(sys.argv[1]))["runs"]))' "$sarif") || n=0
    echo "cuentry lint: $n finding(s); SARIF in $sarif"
    output sarif-file "$sarif"
    output findings "$n"
    output lint-exit "$rc"
    return 0
}

do_check() {
    local manifest=${INPUT_MANIFEST:-} version err rc md
    local -a args=()
    if [[ -z $manifest ]]; then
        echo "cuentry check: no manifest given; skipped"
        return 0
    fi
    if [[ -n ${INPUT_DRIVER:-} && -n ${INPUT_DRIVER_VERSION:-} ]]; then
        printf '::error title=cuentry check::give driver or driver-version, not both\n'
        return 2
    fi
    if [[ -n ${INPUT_DRIVER_VERSION:-} ]]; then
        version=$(driver_number "$INPUT_DRIVER_VERSION")
        if [[ -z $version ]]; then
            printf "::error title=cuentry check::driver-version '%s' is not a driver release: write it like 12.4 or 12040\n" \
                "$INPUT_DRIVER_VERSION"
            return 2
        fi
        # cuentry's fake driver, pretending to be that release: the gate runs on runners without a GPU.
        export CUENTRY_FAKE_DRIVER_VERSION=$version
        args+=(--driver "$("$CUENTRY" fake-driver)") || return 2
    elif [[ -n ${INPUT_DRIVER:-} ]]; then
        args+=(--driver "$INPUT_DRIVER")
    fi
    err=$(mktemp)
    "$CUENTRY" check "$manifest" "${args[@]}" 2>"$err"
    rc=$?
    cat "$err" >&2
    case $rc in
        0) ;;
        1) printf '::error file=%s,title=cuentry check::a required entry point does not resolve on this driver (see the table above)\n' "$manifest" ;;
        3) printf '::error title=cuentry check::no CUDA driver on this runner: set driver-version (e.g. 12.4) to check against cuentry'"'"'s fake driver at that release, or run on a GPU runner\n' ;;
        *) annotate "cuentry check" "$(head -n1 "$err")" ;;
    esac
    rm -f "$err"
    if [[ $rc -le 1 || $rc -eq 3 ]]; then
        md=$({ "$CUENTRY" check "$manifest" "${args[@]}" --json 2>/dev/null || true; } |
            "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin).get("min_driver") or "")') || md=""
        output min-driver "$md"
    fi
    output check-exit "$rc"
    return "$rc"
}

do_gate() {
    if [[ ${INPUT_FAIL_ON_FINDINGS:-true} == true && ${LINT_EXIT:-0} == 1 ]]; then
        printf '::error title=cuentry lint::%s finding(s) (see the code scanning alerts or the SARIF file)\n' "${FINDINGS:-?}"
        return 1
    fi
    return 0
}

# The action runs on Linux runners with a C compiler: the fake driver and the interposer are ELF libraries
# built on the runner. Anything else stops here, with what to change.
do_preflight() {
    local os=${RUNNER_OS:-$(uname -s)}
    if [ "$os" != "Linux" ]; then
        printf '::error title=cuentry::the cuentry action runs on Linux runners only (this one is %s): use runs-on: ubuntu-24.04\n' "$os"
        return 2
    fi
    if ! command -v "${CC:-gcc}" >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then
        printf '::error title=cuentry::the cuentry action needs a C compiler (gcc) to build its fake driver: apt-get install -y gcc, or set CC\n'
        return 2
    fi
    return 0
}

case ${1:-} in
    preflight) do_preflight ;;
    lint) do_lint ;;
    check) do_check ;;
    gate) do_gate ;;
    *) echo "usage: cuentry-action.sh preflight|lint|check|gate" >&2; exit 2 ;;
esac
