#!/usr/bin/env bash
# Runs every tests/mpi/*.sh (train-mpi under mpirun with 1-4 ranks); ends with
# "N passed, N failed". Usage: tests/mpi/run.sh BIN_DIR (train, train-mpi, predict).
set -u
bin=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -eq 0 ]; then   # Open MPI refuses root unless told
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
pass=0 fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$here"/*.sh; do
    [ "$(basename "$t")" = run.sh ] && continue
    BIN="$bin" bash "$t" >"$log" 2>&1
    st=$?
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL - $(basename "$t") exited with status $st"
        tail -n 20 "$log"
        f=1
    fi
    grep '^FAIL' -A3 "$log" | head -n 60
    printf '%-40s %4d passed, %d failed\n' "mpi/$(basename "$t")" "$p" "$f"
    pass=$((pass + p)) fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
