# unscaled.sh - unscaled, badly conditioned data converge at the default stopping rule
# (relative duality gap 1e-5, cap 10,000 macro-iterations): the linear solver's subspace
# step (doc/linear-solver.md). Before it, every run below stopped at the cap with a gap
# near 1. The data: rows near (120, 120, 120, 120, 1000), labels from small deviations.
. "$(dirname "$0")/lib.bash"
T=$BIN/train

gen_unscaled 7 600 class3 >"$TMP/cls"
gen_unscaled 8 400 reg >"$TMP/reg"

# converged: the gap line <= 1e-5, no warning about the cap
converged() {  # converged OUT ERR
    awk '/^gap = / { g = $3 } END { exit !(g != "" && g + 0 <= 1e-5) }' "$1" &&
        ! grep -q 'cap' "$2"
}
for s in l1svm l2svm rls; do
    $T -s $s -n 1 "$TMP/cls" "$TMP/$s.model" >"$TMP/$s.out" 2>"$TMP/$s.err"
    check "$s, 3 classes, unscaled: every class converges at the default ($(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$TMP/$s.out"))" \
        converged "$TMP/$s.out" "$TMP/$s.err"
    $T -q -s $s -n 2 "$TMP/cls" "$TMP/$s.n2.model"
    check "$s: -n 2 gives the model of -n 1, bit for bit" cmp -s "$TMP/$s.model" "$TMP/$s.n2.model"
done
for a in "svr -p 0.1 -c 4" rls rla; do
    n=${a%% *}
    $T -s $a -B 1 "$TMP/reg" "$TMP/$n.model" >"$TMP/$n.out" 2>"$TMP/$n.err"
    check "$n -B 1, unscaled regression: converges at the default ($(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$TMP/$n.out"))" \
        converged "$TMP/$n.out" "$TMP/$n.err"
done
$T -s l1svm -v 3 "$TMP/cls" >"$TMP/cv.out" 2>"$TMP/cv.err"
check "l1svm -v 3, unscaled: no fold stops at the cap" bash -c "grep -q '^Cross Validation Accuracy' '$TMP/cv.out' && ! grep -q cap '$TMP/cv.err'"
