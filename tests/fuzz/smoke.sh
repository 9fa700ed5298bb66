#!/usr/bin/env bash
# tests/fuzz/smoke.sh BUILD SECONDS [HARNESS...] - `make fuzz-smoke`: for each harness (all
# of BUILD/fuzz_* by default) replay tests/fuzz/regressions/HARNESS, then fuzz for SECONDS
# from tests/fuzz/corpus/HARNESS (+ the regressions) with a -max_len suited to its format.
# New inputs go to a temporary directory (removed); a crash's input goes to
# BUILD/artifacts/. Exit 1 if any harness crashed.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=$1 secs=$2
shift 2
if [ $# -eq 0 ]; then
    set -- $(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')
fi
max_len() {
    case $1 in
        fuzz_svmlight) echo 4096 ;;
        fuzz_model) echo 8192 ;;
        fuzz_wire) echo 8192 ;;
        fuzz_journal) echo 8192 ;;
        fuzz_text) echo 1024 ;;
        *) echo 4096 ;;
    esac
}
work=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-fuzz-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/artifacts"
failed=()
for h in "$@"; do
    bin=$build/$h
    corpus=tests/fuzz/corpus/$h regress=tests/fuzz/regressions/$h
    dirs=("$corpus")
    log=$work/$h.log
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        dirs+=("$regress")
        if ! UBSAN_OPTIONS=print_stacktrace=1 "$bin" -timeout=60 "$regress"/* >"$log" 2>&1; then
            echo "FAIL $h: a regression input crashes again"
            grep -E "^(Running|==[0-9]+==ERROR|SUMMARY|fuzz:)|^ *#[0-9]+ .* in " "$log" | head -30
            failed+=("$h")
            continue
        fi
    fi
    mkdir -p "$work/$h"
    # libFuzzer's -timeout watchdog is a SIGALRM that lands in any blocking call now and then
    # (once in ~10^5 inputs a poll(2) of fuzz_wire): 5 s of its corpus under a storm of them
    "$bin" -max_len="$(max_len "$h")" -max_total_time=5 -timeout=30 \
        -artifact_prefix="$build/artifacts/$h-alarm-" "$work/$h" "${dirs[@]}" >"$log" 2>&1 &
    pid=$!
    sleep 1   # its SIGALRM handler is in place by then
    while kill -ALRM $pid 2>/dev/null; do sleep 0.002; done
    if ! wait $pid; then
        echo "FAIL $h: under a storm of SIGALRM (libFuzzer's watchdog signal)"
        grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz:)|^ *#[0-9]+ .* in " "$log" | head -30
        failed+=("$h")
        continue
    fi
    UBSAN_OPTIONS=print_stacktrace=1 "$bin" -max_len="$(max_len "$h")" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$h-" \
        "$work/$h" "${dirs[@]}" >"$log" 2>&1
    rc=$?
    done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "FAIL $h (exit $rc):"
        grep -E "^(==[0-9]+==ERROR|SUMMARY|fuzz:|Test unit written|artifact_prefix)|^ *#[0-9]+ .* in |runtime error" "$log" | head -40
        failed+=("$h")
    else
        echo "ok   $h: ${secs}s, ${done_line#*DONE }"
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz-smoke: ${#failed[@]} harness(es) failed: ${failed[*]} (inputs in $build/artifacts)"
    exit 1
fi
echo "fuzz-smoke: $# harnesses ok"
