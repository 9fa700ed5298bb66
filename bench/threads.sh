#!/usr/bin/env bash
# bench/threads.sh - kmtk `train -n 1` against `train -n 2` (kernel RBF l1svm) and `predict -n 1`
# against `predict -n 2` with the kernel model, in pairs (a benchmark, not a test). Per dataset:
# training runs in pairs, -n 1 then -n 2, BENCH_REPEAT times (bench/runstat: wall, CPU = user +
# system, of the whole process); medians (min-max), the speed-up wall(-n 1) / wall(-n 2) pair by
# pair (its median), and whether the two models are byte-identical (cmp). Then predict on the test
# file with the -n 1 model, in pairs likewise. The load average (uptime) before and after each
# set is printed next to the rows: the speed-up of a second thread depends on a free second core.
# One markdown table on stdout, headed by the CPU line; progress on stderr.
#
# Usage: bench/threads.sh          (after `make`; a9a and ijcnn1: about 10 minutes on 2 cores)
# Environment (all optional):
#   DATA_DIR, BENCH_BIN, BENCH_CACHE, BENCH_AVX2   as for bench/libsvm.sh
#   BENCH_DATASETS   space-separated names (default "a9a ijcnn1"); NAME.gz trains, NAME.t.gz is
#                    the test file (required)
#   BENCH_C, BENCH_GAMMA  C and gamma (default 1 and 0.05, bench/libsvm.sh's for these sets)
#   BENCH_CACHE_MB   kernel cache -m (default 200)
#   BENCH_THREADS    the thread count compared with 1 (default 2)
#   BENCH_KMTK_OPTS  extra options for kmtk train (default none: -e 1e-5, greedy rule)
#   BENCH_REPEAT     counted pairs of training runs (default 3)
#   BENCH_PREDICT_REPEAT  counted pairs of predict runs (default 3)
#   BENCH_HOG        1: a busy process (`yes > /dev/null`) runs through the whole benchmark, a
#                    loaded machine: "never below 1.0x" (default 0)
# Exit status: 0, 1 when a run failed, 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}
BIN=${BENCH_BIN:-$repo}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
DATASETS=${BENCH_DATASETS:-a9a ijcnn1}
C=${BENCH_C:-1}
GAMMA=${BENCH_GAMMA:-0.05}
MB=${BENCH_CACHE_MB:-200}
NT=${BENCH_THREADS:-2}
REPEAT=${BENCH_REPEAT:-3}
PREPEAT=${BENCH_PREDICT_REPEAT:-3}
read -r -a KOPTS <<<"${BENCH_KMTK_OPTS:-}"
HOG=${BENCH_HOG:-0}

. "$here/lib.bash"

[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT: not a positive count: '$REPEAT'"
[[ $PREPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_PREDICT_REPEAT: not a positive count: '$PREPEAT'"
[[ $NT =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS: not a count: '$NT'"
mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
avx2_setup
RUNSTAT=$BIN/bench/runstat
for t in "$BIN/train" "$BIN/predict" "$RUNSTAT"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
bench_dirs
if [ "$HOG" = 1 ]; then   # a process that takes a core for the whole run
    (exec yes >/dev/null) &
    hog=$!
    trap 'kill "$hog" 2>/dev/null; rm -rf "$work"' EXIT   # (bench_dirs' trap, and the hog)
fi

declare -A TRAIN TEST
for d in $DATASETS; do
    [ -f "$DATA_DIR/$d.gz" ] || die "$DATA_DIR/$d.gz not found"
    [ -f "$DATA_DIR/$d.t.gz" ] || die "$DATA_DIR/$d.t.gz not found (a test file is required)"
    TRAIN[$d]=$(plain "$d") || exit 2
    TEST[$d]=$(plain "$d.t") || exit 2
done

load() {
    sed -n 's/.*load average: //p' < <(uptime)
}

# Formats the speed-up "median min max" of the pairwise ratios wall(-n 1) / wall(-n N).
speedup() {
    awk -v m="$1" -v lo="$2" -v hi="$3" 'BEGIN {
        if (m !~ /^[0-9.eE+-]+$/) { print "-"; exit }
        printf "%.2f (%.2f-%.2f)\n", m, lo, hi }'
}

commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
echo "kmtk \`train -s l1svm -t rbf -g $GAMMA -c $C -m $MB ${KOPTS[*]}\` and \`predict\`, \`-n 1\` against \`-n $NT\`," \
    "$(date -u +%Y-%m-%d), kmtk commit $commit; $REPEAT training pair(s), $PREPEAT predict pair(s)$(
    [ "$HOG" = 1 ] && echo "; a busy process (\`yes > /dev/null\`) on one core throughout")."
echo
cpu_line
echo
echo "| data | step | -n 1 CPU s | -n $NT CPU s | -n 1 wall s | -n $NT wall s | speed-up (wall) | models equal | load before / after |"
echo "|---|---|---:|---:|---:|---:|---:|---|---|"

status=0
for d in $DATASETS; do
    tr=${TRAIN[$d]} te=${TEST[$d]} w=$work/$d
    l0=$(load)
    say "$d: train -n 1 / -n $NT in pairs ($REPEAT)"
    CMD_A=("$BIN/train" -s l1svm -t rbf -g "$GAMMA" -c "$C" -m "$MB" "${KOPTS[@]}" -n 1 "$tr" "$w.m1")
    CMD_B=("$BIN/train" -s l1svm -t rbf -g "$GAMMA" -c "$C" -m "$MB" "${KOPTS[@]}" -n "$NT" "$tr" "$w.m2")
    pair_runs "$w.t1" "$w.t2" "$REPEAT" 0
    if [ "$RC_A" -ne 0 ] || [ "$RC_B" -ne 0 ]; then
        say "$d: train FAILED ($RC_A, $RC_B)"; status=1
        echo "| $d | train | FAIL($RC_A) | FAIL($RC_B) | - | - | - | - | $l0 / $(load) |"
        continue
    fi
    same=no
    cmp -s "$w.m1" "$w.m2" && same=yes
    [ "$same" = yes ] || status=1
    echo "| $d | train | $(fmt_spread $A_CPU) | $(fmt_spread $B_CPU) | $(fmt_spread $A_WALL) | $(fmt_spread $B_WALL) | $(speedup $R_WALL) | $same (cmp) | $l0 / $(load) |"

    l0=$(load)
    say "$d: predict -n 1 / -n $NT in pairs ($PREPEAT)"
    CMD_A=("$BIN/predict" -n 1 "$te" "$w.m1" "$w.p1")
    CMD_B=("$BIN/predict" -n "$NT" "$te" "$w.m1" "$w.p2")
    pair_runs "$w.q1" "$w.q2" "$PREPEAT" 0
    if [ "$RC_A" -ne 0 ] || [ "$RC_B" -ne 0 ]; then
        say "$d: predict FAILED ($RC_A, $RC_B)"; status=1
        echo "| $d.t | predict | FAIL($RC_A) | FAIL($RC_B) | - | - | - | - | $l0 / $(load) |"
        continue
    fi
    same=no
    cmp -s "$w.p1" "$w.p2" && same=yes
    [ "$same" = yes ] || status=1
    echo "| $d.t | predict | $(fmt_spread $A_CPU) | $(fmt_spread $B_CPU) | $(fmt_spread $A_WALL) | $(fmt_spread $B_WALL) | $(speedup $R_WALL) | $same (outputs, cmp) | $l0 / $(load) |"
done
echo
echo "Runs in pairs, -n 1 then -n $NT: each cell is the median (min-max) over the pairs; CPU = user + system" \
    "seconds, wall = elapsed, of the whole process (reading included; bench/runstat). Speed-up: wall(-n 1) /" \
    "wall(-n $NT) pair by pair, the median (min-max). Load: the 1/5/15-minute load averages before and after the rows."
exit $status
