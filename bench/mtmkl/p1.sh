#!/usr/bin/env bash
# bench/mtmkl/p1.sh - MT-MKL p = 1 on the 32-task tree (bench/mtmkl/tree.sh's first draw:
# 640 training rows, 100 features, 63 groups), per C of tree.sh's grid: CPU seconds of the
# process (user + sys, /usr/bin/time; REPEAT runs under one clock, per run), passes, the
# relative gap and the objective, of this build against another one (BIN_OLD: a build of the
# commit before the Newton walk, E.1's theta steps alone).
# PAIRS paired runs (old, new, old, new, ...), medians. tree.sh's -e at each C.
# Usage: BIN_OLD=/path/to/old/build bench/mtmkl/p1.sh   (after make; this script's repository)
# Environment: BIN_OLD (required: a directory with train), BIN (this repository), PAIRS (3),
#   REPEAT (5), SIGMAS ("4.47213595499958 20"), CS (tree.sh's grid), EPS (the -e of every run;
#   default tree.sh's, min(1e-5, C / 1000)).
set -eu
cd "$(dirname "$0")/../.."
BIN=${BIN:-.}
BIN_OLD=${BIN_OLD:?set BIN_OLD to a directory with the train to compare with}
PAIRS=${PAIRS:-3}
REPEAT=${REPEAT:-5}
SIGMAS=${SIGMAS:-"4.47213595499958 20"}
CS=${CS:-"0.000001 0.00001 0.0001 0.001 0.01 0.1 1 100"}
export LC_ALL=C
. bench/lib.bash
work=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-mtmkl-p1.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{ a[n++] = $1 } END { printf "%.3f", n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2 }'; }
# CPU seconds per run of REPEAT runs of train ($1 the binary's directory, the rest its
# arguments), then the last run's passes, gap and objective
runs() {
    local b=$1
    shift
    /usr/bin/time -f '%U %S' -o "$work/t" bash -c 'for k in $(seq "$1"); do "${@:2}" >"$0" 2>&1 || exit 1; done' \
        "$work/o" "$REPEAT" "$b/train" "$@" || die "failed: $b/train $*"
    printf '%s %s %s %s\n' "$(awk -v r="$REPEAT" '{ printf "%.4f", ($1 + $2) / r }' "$work/t")" \
        "$(sed -n 's/^passes = //p' "$work/o")" "$(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$work/o")" \
        "$(sed -n 's/^objective = //p' "$work/o")"
}
echo "$(cpu_line) Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?') against $BIN_OLD. Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
for s2 in $SIGMAS; do
    "$BIN/datasets/gen_mtl_tree" --sigma "$s2" --tree-seed 1 --seed 1 --test 1 "$work/d"
    echo
    echo "s = $s2: MT-MKL p = 1, CPU s per run (median of $PAIRS pairs of $REPEAT runs), passes, gap, objective"
    echo
    echo "| C | -e | old CPU s | new CPU s | old passes | new passes | old gap | new gap | objective new/old - 1 |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for c in $CS; do
        e=${EPS:-$(awk -v c="$c" 'BEGIN { printf "%.3g", c / 1000 < 1e-5 ? c / 1000 : 1e-5 }')}
        args=(-n 1 -s mtmkl -c "$c" --task-groups "$work/d.groups" --mkl-norm 1 -e "$e" "$work/d.train" "$work/m")
        : >"$work/pairs"
        for k in $(seq "$PAIRS"); do
            read -r oc op og oo <<<"$(runs "$BIN_OLD" "${args[@]}")"
            read -r nc np ng no <<<"$(runs "$BIN" "${args[@]}")"
            echo "$oc $nc $op $np $og $ng $oo $no" >>"$work/pairs"
        done
        read -r op np og ng oo no <<<"$(tail -1 "$work/pairs" | cut -d' ' -f3-)"
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$e" \
            "$(cut -d' ' -f1 "$work/pairs" | median)" "$(cut -d' ' -f2 "$work/pairs" | median)" \
            "$op" "$np" "$og" "$ng" "$(awk -v a="$no" -v b="$oo" 'BEGIN { printf "%.2g", a / b - 1 }')"
    done
done
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
