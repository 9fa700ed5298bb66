#!/usr/bin/env bash
# Runs every tests/mpi/*.sh (train-mpi under mpirun with 1-4 ranks); ends with
# "N passed, N failed". Usage: tests/mpi/run.sh BIN_DIR (train, train-mpi, predict).
# MPI_RANKS (default "1 2 3 4"): the R of the loops over ranks (make check-mpi-asan: fewer).
set -u
bin=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -eq 0 ]; then   # Open MPI refuses root unless told
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# waiting ranks yield their core (more ranks than cores here; the results do not change)
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
pass=0 fail=0
log=$(mktemp)
san=$(mktemp -d)   # sanitizer reports of every process (ranks > 0 print nothing themselves)
trap 'rm -f "$log"; rm -rf "$san"' EXIT
# for a sanitizer build (make check-mpi-asan); ignored by the others: reports go to files,
# Open MPI's own leaks are suppressed (lsan.supp: its libraries only)
export ASAN_OPTIONS="fast_unwind_on_malloc=0:log_path=$san/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$san/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for t in "$here"/*.sh; do
    [ "$(basename "$t")" = run.sh ] && continue
    t0=$SECONDS
    BIN="$bin" bash "$t" >"$log" 2>&1
    st=$?
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^FAIL ' "$log")
    if [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL - $(basename "$t") exited with status $st"
        tail -n 20 "$log"
        f=1
    fi
    if [ -n "$(ls -A "$san")" ]; then   # a sanitizer report from any process fails the script
        echo "FAIL - $(basename "$t"): sanitizer reports ($(ls "$san" | wc -l) processes)"
        cat "$san"/* | head -n 60
        rm -f "$san"/*
        f=$((f + 1))
    fi
    grep '^FAIL' -A3 "$log" | head -n 60
    printf '%-40s %4d passed, %d failed (%d s)\n' "mpi/$(basename "$t")" "$p" "$f" \
        $((SECONDS - t0))
    pass=$((pass + p)) fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
