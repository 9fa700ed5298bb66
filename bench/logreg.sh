#!/usr/bin/env bash
# bench/logreg.sh - kmtk `train -s logreg` against LIBLINEAR's logistic regression, `-s 0`
# (primal, trust-region Newton) and `-s 7` (dual coordinate descent), at the same C, no bias
# (a benchmark, not a test). For each data set and peer: the peer's default run gives its
# relative primal gap g = (F - F*)/F* to F*, the optimum (kmtk at -e 1e-10, a certified
# relative duality gap); then kmtk runs paired with the peer (kmtk, peer, kmtk, peer, ...)
# at its default -e 1e-5; at -e = g rounded down to one significant digit (kmtk's -e is a
# relative duality gap, which bounds its relative primal gap: kmtk ends at least as close to
# F*, usually much closer); and at equal accuracy, the loosest -e of 1e-3, 5e-4, 2e-4, 1e-4,
# ... whose relative primal gap (one run each, before the pairs) is at most g (when it
# differs from the others). One markdown row per data set x peer x kmtk -e:
# CPU (user + sys) and wall seconds, median (min-max) over the pairs, the kmtk/peer ratios
# (median of the pairs), both objectives, both relative gaps to F*, both test accuracies.
#
# Usage: bench/logreg.sh            (after `make`; a few minutes on 2 loaded cores)
# Environment (optional): DATA_DIR, BENCH_BIN, BENCH_CACHE, BENCH_AVX2 as in bench/liblinear.sh;
#   BENCH_DATASETS (default "a9a w8a ijcnn1"), BENCH_C (default 1), BENCH_REPEAT (pairs,
#   default 5), BENCH_WARMUP (default 1), BENCH_PEERS (default "0 7": liblinear -s values).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.bash"
bench_paths
DATASETS=${BENCH_DATASETS:-a9a w8a ijcnn1}
C=${BENCH_C:-1}
REPEAT=${BENCH_REPEAT:-5}
WARMUP=${BENCH_WARMUP:-1}
PEERS=${BENCH_PEERS:-0 7}
TIME=/usr/bin/time

bench_tools train predict bench/liblinear_objective bench/runstat
need_peers liblinear-tools liblinear-train liblinear-predict
bench_dirs

# "objective = F" from file $1, or "?".
objective() { sed -n 's/^objective = \([^ ]*\).*/\1/p' "$1" | tail -n 1 | grep . || echo "?"; }
# "x%" from a predict output $1, or "?".
accuracy() { sed -n 's/^Accuracy = \([^%]*\)%.*/\1%/p' "$1" | tail -n 1 | grep . || echo "?"; }
# (F - F*)/F* of $1 to $2.
relgap() { awk -v f="$1" -v t="$2" 'BEGIN { if (t + 0 > 0 && f ~ /^[0-9.eE+-]+$/) printf "%.1e\n", (f - t) / t; else print "-" }'; }
# $1 rounded down to one significant digit (a positive number), else 1e-5.
round_down() {
    awk -v g="$1" 'BEGIN { if (g + 0 <= 0) { print "1e-5"; exit }
        k = 10 ^ int(log(g) / log(10) - (g < 1 ? 1 : 0)); if (k * 10 <= g) k *= 10
        printf "%.3g\n", int(g / k + 1e-9) * k }'
}
ratio() { awk -v r="${1%% *}" 'BEGIN { print (r ~ /^[0-9.eE+-]+$/) ? sprintf("%.2f", r) : "-" }'; }

llver=$(dpkg-query -W -f '${Version}' liblinear-tools 2>/dev/null || echo unknown)
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
echo "kmtk \`train -s logreg\` vs \`liblinear-train -s 0\` / \`-s 7\` ($llver), $(date -u +%Y-%m-%d), kmtk commit $commit; C = $C, no bias; $REPEAT pairs after $WARMUP warm-up pair(s)."
echo
cpu_line
echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| data | peer | kmtk -e | kmtk CPU s | peer CPU s | CPU ratio | kmtk wall s | peer wall s | wall ratio | kmtk objective | peer objective | kmtk gap to F* | peer gap to F* | kmtk test | peer test |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
status=0
for d in $DATASETS; do
    [ -f "$DATA_DIR/$d.gz" ] || die "$DATA_DIR/$d.gz not found"
    tr=$(plain "$d") || exit 2
    te=$tr
    [ -f "$DATA_DIR/$d.t.gz" ] && { te=$(plain "$d.t") || exit 2; }
    w=$work/$d
    say "$d: F* (kmtk -e 1e-10)"
    run_once "$w.star" "$BIN/train" -s logreg -c "$C" -e 1e-10 "$tr" "$w.star.model"
    fstar=$(objective "$w.star.out")
    for s in $PEERS; do
        run_once "$w.p$s" liblinear-train -q -s "$s" -c "$C" "$tr" "$w.p$s.model"
        run_once "$w.p${s}obj" "$BIN/bench/liblinear_objective" -s logreg -c "$C" "$w.p$s.model" "$tr"
        pobj=$(objective "$w.p${s}obj.out")
        pgap=$(relgap "$pobj" "$fstar")
        run_once "$w.p${s}pred" liblinear-predict "$te" "$w.p$s.model" "$w.p$s.pred"
        pacc=$(accuracy "$w.p${s}pred.out")
        # the loosest -e (of a fixed list) whose primal gap is at most the peer's: equal accuracy
        em=
        for e in 1e-3 5e-4 2e-4 1e-4 5e-5 2e-5 1e-5 5e-6 2e-6 1e-6 1e-7 1e-8 1e-9; do
            run_once "$w.search" "$BIN/train" -s logreg -c "$C" -e "$e" "$tr" "$w.search.model"
            g=$(relgap "$(objective "$w.search.out")" "$fstar")
            if awk -v g="$g" -v p="$pgap" 'BEGIN { exit !(g + 0 <= p + 0) }'; then em=$e; break; fi
        done
        eg=$(round_down "$pgap")
        es="1e-5 $eg"
        [ -n "$em" ] && [ "$em" != 1e-5 ] && awk -v a="$em" -v b="$eg" 'BEGIN { exit !(a + 0 > b + 0) }' \
            && es="$es $em"   # (a tighter -e than the gap-matched one adds nothing)
        for e in $es; do
            say "$d vs -s $s, kmtk -e $e: $REPEAT pairs"
            CMD_A=("$BIN/train" -s logreg -c "$C" -e "$e" "$tr" "$w.k.model")
            CMD_B=(liblinear-train -q -s "$s" -c "$C" "$tr" "$w.p.model")
            pair_runs "$w.ka" "$w.pb" "$REPEAT" "$WARMUP"
            [ "$RC_A" -eq 0 ] && [ "$RC_B" -eq 0 ] || { say "a run failed"; status=1; continue; }
            kobj=$(objective "$w.ka.out")
            run_once "$w.kpred" "$BIN/predict" "$te" "$w.k.model" "$w.k.pred"
            echo "| $d | -s $s | $e | $(fmt_spread $A_CPU) | $(fmt_spread $B_CPU) | $(ratio "$R_CPU") | $(fmt_spread $A_WALL) | $(fmt_spread $B_WALL) | $(ratio "$R_WALL") | $kobj | $pobj | $(relgap "$kobj" "$fstar") | $pgap | $(accuracy "$w.kpred.out") | $pacc |"
        done
    done
done
echo
echo "CPU = user + system seconds of the whole process (reading the file included; bench/runstat), wall = elapsed; median (min-max) over the pairs; ratios kmtk/peer pair by pair, median (below 1 kmtk is faster)."
echo "Objectives: primal F(w) = ||w||^2/2 + C sum_i log(1 + exp(-y_i w'x_i)) on the training file (the peer's by bench/liblinear_objective). Gap to F*: (F - F*)/F*, F* = kmtk -e 1e-10. kmtk -e: 1e-5 (its default); the peer's gap rounded down (kmtk's duality gap bounds its primal gap: at least the peer's accuracy); the loosest -e of a list whose primal gap is at most the peer's (equal accuracy)."
echo "Test: accuracy on the .t file when there is one, else on the training file."
exit $status
