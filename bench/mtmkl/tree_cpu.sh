#!/usr/bin/env bash
# bench/mtmkl/tree_cpu.sh - issue 14's target "the 32-task experiment < 0.1 s CPU per C" for
# every method of bench/mtmkl/tree.sh (Individual, Union, Vanilla, MT-MKL p = 1, 2, 3) at
# tree.sh's own -e (min(1e-5, C/1000)): one draw of the tree (gen_mtl_tree --tree-seed
# SEED --seed SEED --test 10) per s, REPS runs of `train -s mtmkl` per (s, C, method), the
# median CPU time of the whole process in ms (perf stat's task-clock, user + system of every
# thread; /usr/bin/time's 10 ms clock where perf is missing), the runs in brackets.
# Usage: bench/mtmkl/tree_cpu.sh   (after make; the repository is this script's)
# Environment: REPS (5), SIGMAS ("20 4.47213595499958"), CS ("0.001 0.01 0.1 1 100"),
#   SEED (3), METHODS ("individual union vanilla mtmkl1 mtmkl2 mtmkl3"), BIN (where train
#   and datasets/gen_mtl_tree are; default the repository).
set -eu
cd "$(dirname "$0")/../.."
REPS=${REPS:-5}
SIGMAS=${SIGMAS:-"20 4.47213595499958"}
CS=${CS:-"0.001 0.01 0.1 1 100"}
SEED=${SEED:-3}
BIN=${BIN:-.}
export LC_ALL=C
. bench/lib.bash
work=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-tree-cpu.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2206
methods=(${METHODS:-individual union vanilla mtmkl1 mtmkl2 mtmkl3})
# opts METHOD GROUPS C: tree.sh's options for the method (the same -e rule), from tree.sh
eval "$(sed -n '/^opts() {/,/^}/p' bench/mtmkl/tree.sh)"
cpu_ms() {   # CPU ms of one run of "$@"
    if command -v perf >/dev/null 2>&1; then
        perf stat -x, -e task-clock -o "$work/t" "$@" >/dev/null 2>&1 || die "failed: $*"
        awk -F, '/task-clock/ { printf "%d", $1 + 0.5 }' "$work/t"
    else
        /usr/bin/time -f '%U %S' -o "$work/t" "$@" >/dev/null 2>&1 || die "failed: $*"
        awk '{ printf "%d", ($1 + $2) * 1000 + 0.5 }' "$work/t"
    fi
}
echo "$(cpu_line) Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Load: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| s | C | $(for m in "${methods[@]}"; do printf '%s | ' "$m"; done)"
echo "|---|---|$(for m in "${methods[@]}"; do printf -- '---:|'; done)"
for s in $SIGMAS; do
    D="$work/tr"
    "$BIN/datasets/gen_mtl_tree" --sigma "$s" --test 10 --tree-seed "$SEED" --seed "$SEED" "$D" >/dev/null
    for c in $CS; do
        line="| $s | $c |"
        for m in "${methods[@]}"; do
            ts=()
            for _ in $(seq "$REPS"); do
                # shellcheck disable=SC2046
                ts+=("$(cpu_ms "$BIN/train" -q -s mtmkl -c "$c" $(opts "$m" "$D.groups" "$c") "$D.train" "$work/model")")
            done
            med=$(printf '%s\n' "${ts[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
            line="$line $med [$(IFS=,; echo "${ts[*]}")] |"
        done
        echo "$line"
    done
done
echo
echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
