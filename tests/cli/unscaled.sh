# unscaled.sh - unscaled, badly conditioned data converge at the default stopping rule
# (relative duality gap 1e-5, cap 10,000 macro-iterations): the linear solver's subspace
# step (doc/linear-solver.md), on 5 features and on 600 (its coefficient side). Before it,
# every run below stopped at the cap with a gap near 1. The data: rows near (120, 120, 120,
# 120, 1000), labels from small deviations; and gen_wide's below.
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

# More features than the walk's feature side takes (KM_FACE_MAXDIM = 512): rows near
# (124, ..., 124) in 600 features, labels from small deviations of the first three; the
# walk then runs on the coefficient side (K_WW = X_W X_W', doc/linear-solver.md).
gen_wide() {  # gen_wide SEED ROWS FEATURES class2|class3|reg
    awk -v seed="$1" -v n="$2" -v nf="$3" -v task="$4" '
    function u() { s = (s * 16807) % 2147483647; return s / 2147483647 }
    BEGIN {
        s = seed
        for (i = 0; i < n; i++) {
            line = ""; t = 0
            for (j = 1; j <= nf; j++) {
                v = u()
                if (j <= 3) t += (j == 2 ? -1 : 1) * v
                line = line sprintf(" %d:%.2f", j, 120 + 8 * v)
            }
            t += 0.3 * (u() - 0.5) - 0.5
            if (task == "reg") y = sprintf("%.4f", 3 + 2 * t)
            else if (task == "class2") y = t < 0 ? 1 : -1
            else y = t < -0.2 ? 1 : t < 0.2 ? 2 : 3
            print y line
        }
    }'
}
gen_wide 11 300 600 class3 >"$TMP/wcls"
gen_wide 12 300 600 reg >"$TMP/wreg"
for s in l1svm l2svm rls; do
    $T -s $s -n 1 "$TMP/wcls" "$TMP/w$s.model" >"$TMP/w$s.out" 2>"$TMP/w$s.err"
    check "$s, 600 features, 3 classes, unscaled: every class converges at the default ($(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$TMP/w$s.out"))" \
        converged "$TMP/w$s.out" "$TMP/w$s.err"
    $T -q -s $s -n 2 "$TMP/wcls" "$TMP/w$s.n2.model"
    check "$s, 600 features: -n 2 gives the model of -n 1, bit for bit" cmp -s "$TMP/w$s.model" "$TMP/w$s.n2.model"
done
$T -s l1svm --no-walk --max-iter 200 "$TMP/wcls" "$TMP/wnowalk.model" >"$TMP/wnowalk.out" 2>"$TMP/wnowalk.err"
check "l1svm, 600 features: plain CD (--no-walk) stops at a cap of 200 sweeps there (gap $(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$TMP/wnowalk.out"); the walk needs $(sed -n 's/^macro-iterations = \([0-9]*\).*/\1/p' "$TMP/wl1svm.out"))" \
    bash -c "grep -q 'stopped at the cap' '$TMP/wnowalk.err' && ! awk '/^gap = / { exit !(\$3 + 0 <= 1e-3) }' '$TMP/wnowalk.out'"
for a in "svr -p 0.1 -c 4" rls rla; do
    n=${a%% *}
    $T -s $a -B 1 "$TMP/wreg" "$TMP/w$n.model" >"$TMP/w$n.out" 2>"$TMP/w$n.err"
    check "$n -B 1, 600 features, unscaled regression: converges at the default ($(sed -n 's/^gap = \([^ ]*\).*/\1/p' "$TMP/w$n.out"))" \
        converged "$TMP/w$n.out" "$TMP/w$n.err"
done
