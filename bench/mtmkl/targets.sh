#!/usr/bin/env bash
# bench/mtmkl/targets.sh - two of issue 14's performance targets, CPU time (user + sys of
# the process, /usr/bin/time) next to the solver's own time (train's "time = ... train X s"):
#  1. T = M = 1 (train -s mtmkl --baseline union on a9a with qid:1 on every row) within
#     1.2x of train -s l1svm on a9a; both -n 1, default -e 1e-5; PAIRS paired runs, medians;
#     each run is REPEAT (10) runs of the process under one /usr/bin/time (its 10 ms clock
#     is coarse next to 0.1 s), the CPU time per run;
#  2. the 32-task experiment (bench/mtmkl/tree.sh's first draw at s = sqrt(20): 640
#     training rows, 100 features, 63 groups) under 0.1 s per C: each method at each C of
#     tree.sh's grid, with tree.sh's -e.
# Usage: bench/mtmkl/targets.sh   (after make; the repository is this script's)
# Environment: PAIRS (5), REPEAT (10), DATA_DIR (the public data sets, default /work/shared/datasets),
#   BIN (default the repository), CS (tree.sh's grid).
set -eu
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-5}
REPEAT=${REPEAT:-10}
DATA_DIR=${DATA_DIR:-/work/shared/datasets}
BIN=${BIN:-.}
CS=${CS:-"0.000001 0.00001 0.0001 0.001 0.01 0.1 1 100"}
export LC_ALL=C
. bench/lib.bash
work=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-mtmkl-targets.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
[ -s "$DATA_DIR/a9a.gz" ] || die "no $DATA_DIR/a9a.gz"
gunzip -c "$DATA_DIR/a9a.gz" >"$work/a9a"
sed 's/^\([^ ]*\)/\1 qid:1/' "$work/a9a" >"$work/a9a.q"

# CPU seconds of the process and the solver's own seconds ("A B")
run() {
    /usr/bin/time -f '%U %S' -o "$work/t" "$@" >"$work/o" 2>/dev/null || die "failed: $*"
    echo "$(awk '{ printf "%.3f", $1 + $2 }' "$work/t") $(sed -n 's/.*train \([0-9.]*\) s.*/\1/p' "$work/o")"
}
# the same, REPEAT runs of the process: CPU seconds per run, the solver's own of the last
runs() {
    /usr/bin/time -f '%U %S' -o "$work/t" bash -c 'for k in $(seq "$1"); do "${@:2}" >"$0" 2>/dev/null || exit 1; done' \
        "$work/o" "$REPEAT" "$@" || die "failed: $*"
    echo "$(awk -v r="$REPEAT" '{ printf "%.4f", ($1 + $2) / r }' "$work/t") $(sed -n 's/.*train \([0-9.]*\) s.*/\1/p' "$work/o")"
}
median() { sort -g | awk '{ a[n++] = $1 } END { printf "%.3f", n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2 }'; }

echo "$(cpu_line) Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "T = M = 1 on a9a (32,561 rows), $PAIRS pairs: CPU s of the process, mean of $REPEAT runs (the solver's own s, wall)"
echo
echo "| pair | train -s l1svm | train -s mtmkl --baseline union | ratio (CPU) |"
echo "|---:|---:|---:|---:|"
: >"$work/pairs"
for k in $(seq 1 "$PAIRS"); do
    read -r la ls <<<"$(runs "$BIN/train" -n 1 -s l1svm "$work/a9a" "$work/l.model")"
    read -r ma ms <<<"$(runs "$BIN/train" -n 1 -s mtmkl --baseline union "$work/a9a.q" "$work/m.model")"
    echo "$la $ma $ls $ms" >>"$work/pairs"
    awk -v k="$k" -v la="$la" -v ls="$ls" -v ma="$ma" -v ms="$ms" \
        'BEGIN { printf "| %d | %.4f (%.3f) | %.4f (%.3f) | %.2f |\n", k, la, ls, ma, ms, ma / la }'
done
printf '| median | %s (%s) | %s (%s) | %.2f |\n' "$(cut -d' ' -f1 "$work/pairs" | median)" \
    "$(cut -d' ' -f3 "$work/pairs" | median)" "$(cut -d' ' -f2 "$work/pairs" | median)" \
    "$(cut -d' ' -f4 "$work/pairs" | median)" \
    "$(awk '{ print $2 / $1 }' "$work/pairs" | median)"

# the 32-task experiment: tree.sh's first draw at s = sqrt(20), tree.sh's options
"$BIN/datasets/gen_mtl_tree" --sigma 4.47213595499958 --tree-seed 1 --seed 1 --test 1 "$work/d1"
eval "$(sed -n '/^opts() {/,/^}/p' bench/mtmkl/tree.sh)"
echo
echo "The 32-task experiment (640 rows, 100 features, 63 groups): CPU s of the process (the solver's own s) per C"
echo
echo "| method | $(echo $CS | sed 's/ / | /g') |"
echo "|---|$(for c in $CS; do printf -- '---:|'; done)"
for m in individual union vanilla mtmkl1 mtmkl2 mtmkl3; do
    line="| $m |"
    for c in $CS; do
        # shellcheck disable=SC2046
        read -r a s <<<"$(run "$BIN/train" -n 1 -s mtmkl -c "$c" $(opts "$m" "$work/d1.groups" "$c") "$work/d1.train" "$work/m.model")"
        line="$line $a ($s) |"
    done
    echo "$line"
done
