#!/usr/bin/env bash
# Runs every unit test binary and every command-line test; ends with "N passed, N failed".
# Usage: tests/run.sh BIN_DIR   (BIN_DIR holds train, predict and tests/test_* binaries)
set -u
bin=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() {  # count ok/FAIL lines of one test program's output
    local name=$1 status=$2
    local p f
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL - $name exited with status $status"
        tail -n 20 "$log"
        f=1
    fi
    grep '^FAIL' -A3 "$log" | head -n 60
    printf '%-40s %4d passed, %d failed\n' "$name" "$p" "$f"
    pass=$((pass + p)) fail=$((fail + f))
}

for t in "$bin"/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" >"$log" 2>&1
    st=$?
    count "$(basename "$t")" "$st"
done
for t in "$here"/cli/*.sh; do
    [ -f "$t" ] || continue
    BIN="$bin" bash "$t" >"$log" 2>&1
    st=$?
    count "cli/$(basename "$t")" "$st"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
