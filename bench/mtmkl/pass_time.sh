#!/usr/bin/env bash
# bench/mtmkl/pass_time.sh - issue 14's performance target: on a synthetic set of 1,024 tasks
# and 1,024,000 rows (datasets/gen_mtl_tree --depth 10 --dim 20 --flips 2 --train 500: 20
# dense features, 2 x 500 rows per task), the CPU time per pass of train -s mtmkl (default
# task kernels: all tasks together plus each alone, 1,025 kernels) against liblinear-train
# -s 3 (the same rows without qid: one l1-loss SVM, LIBLINEAR's dual coordinate descent).
#
# Time per pass, for both, is a difference of CPU times (user + sys of the process, from
# /proc/PID/stat), so that reading the file and the setup cancel:
#   liblinear: it prints "." after every 10th iteration (liblinear 2.3, fflush'ed); the
#     process's CPU time is read at the K1/10-th and the K2/10-th dot, then it is stopped:
#     (cpu(K2) - cpu(K1)) / (K2 - K1);
#   mtmkl: (cpu(--max-iter K2) - cpu(--max-iter K1)) / (K2 - K1) of two whole runs (each
#     ends with a checkpoint: a pass over all rows for the primal and the dual, taken every
#     10 passes anyway).
# Both shrink (LIBLINEAR's rule), so passes K1+1..K2 are compared with passes K1+1..K2.
# Runs are paired (liblinear, mtmkl, liblinear, mtmkl, ...); prints each pair and the medians.
#
# Usage: bench/mtmkl/pass_time.sh   (after make; the repository is this script's)
# Environment: PAIRS (3), K1 (10), K2 (30), SIGMA (4.47213595499958), DEPTH (10), TRAIN
#   (500), DATA_DIR (where the set is generated once; ${TMPDIR:-/tmp}/kmtk-mtmkl-pass),
#   BIN (train and datasets/gen_mtl_tree; default the repository), LIBLINEAR
#   (liblinear-train).
set -eu
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-3} K1=${K1:-10} K2=${K2:-30}
SIGMA=${SIGMA:-4.47213595499958} DEPTH=${DEPTH:-10} TRAIN=${TRAIN:-500}
DIR=${DATA_DIR:-${TMPDIR:-/tmp}/kmtk-mtmkl-pass}
BIN=${BIN:-.}
LL=${LIBLINEAR:-liblinear-train}
export LC_ALL=C
. bench/lib.bash
command -v "$LL" >/dev/null || die "no $LL"
[ $((K1 % 10)) -eq 0 ] && [ $((K2 % 10)) -eq 0 ] && [ "$K1" -lt "$K2" ] || die "K1 < K2, both multiples of 10"
mkdir -p "$DIR"
set_name="d$DEPTH-t$TRAIN-s$SIGMA"
if [ ! -s "$DIR/$set_name.ll" ]; then
    say "generating $DIR/$set_name"
    "$BIN/datasets/gen_mtl_tree" --depth "$DEPTH" --dim 20 --flips 2 --train "$TRAIN" --test 1 \
        --sigma "$SIGMA" "$DIR/$set_name"
    sed 's/ qid:[0-9]*//' "$DIR/$set_name.train" >"$DIR/$set_name.ll.tmp"
    mv "$DIR/$set_name.ll.tmp" "$DIR/$set_name.ll"
fi
hz=$(getconf CLK_TCK)
cpu_of() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"; }

# liblinear: CPU seconds at the dots of iterations K1 and K2 (printed as "A B")
liblinear_run() {
    local fifo=$DIR/dots.$$ pid ch dots=0 a= b=
    rm -f "$fifo"
    mkfifo "$fifo"
    "$LL" -s 3 -e 1e-12 "$DIR/$set_name.ll" "$DIR/ll.model" >"$fifo" 2>/dev/null &
    pid=$!
    while IFS= read -r -n1 ch; do
        [ "$ch" = . ] || continue
        dots=$((dots + 1))
        [ $((dots * 10)) -eq "$K1" ] && a=$(cpu_of "$pid")
        if [ $((dots * 10)) -eq "$K2" ]; then
            b=$(cpu_of "$pid")
            kill "$pid"
            break
        fi
    done <"$fifo"
    wait "$pid" 2>/dev/null || true
    rm -f "$fifo"
    [ -n "$b" ] || die "liblinear stopped before iteration $K2"
    echo "$a $b"
}

# mtmkl: CPU seconds (user + sys) of a whole run of N passes
mtmkl_run() {
    /usr/bin/time -f '%U %S' -o "$DIR/time.$$" "$BIN/train" -q -n 1 -s mtmkl --max-iter "$1" \
        "$DIR/$set_name.train" "$DIR/mt.model" 2>/dev/null || true
    awk '{ printf "%.2f", $1 + $2 }' "$DIR/time.$$"
    rm -f "$DIR/time.$$"
}

echo "$(cpu_line) Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
echo "Set: gen_mtl_tree --depth $DEPTH --dim 20 --flips 2 --train $TRAIN --sigma $SIGMA ($(wc -l <"$DIR/$set_name.ll") rows, $((1 << DEPTH)) tasks); CPU seconds per pass over passes $((K1 + 1))-$K2; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| pair | liblinear -s 3 s/pass | mtmkl s/pass | ratio |"
echo "|---:|---:|---:|---:|"
: >"$DIR/pairs.$$"
for k in $(seq 1 "$PAIRS"); do
    read -r a b <<<"$(liblinear_run)"
    m1=$(mtmkl_run "$K1")
    m2=$(mtmkl_run "$K2")
    awk -v k="$k" -v a="$a" -v b="$b" -v m1="$m1" -v m2="$m2" -v n=$((K2 - K1)) 'BEGIN {
        l = (b - a) / n; m = (m2 - m1) / n
        printf "| %d | %.3f | %.3f | %.2f |\n", k, l, m, m / l }' | tee -a "$DIR/pairs.$$"
done
awk -F'|' '{ l[NR] = $3 + 0; m[NR] = $4 + 0; r[NR] = $5 + 0 }
    function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                     return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { printf "| median | %.3f | %.3f | %.2f |\n", med(l, NR), med(m, NR), med(r, NR) }' "$DIR/pairs.$$"
rm -f "$DIR/pairs.$$"
