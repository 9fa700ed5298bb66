# kwalk.sh - the kernel solver on unscaled, badly conditioned data (-t linear, -t poly)
# converges at the default stopping rule thanks to its active-set walk (doc/kernel-solver.md);
# --no-walk switches it off (then coordinate descent crawls: the cap). The data: rows near
# (120, 120, 120, 120, 1000), as tests/cli/unscaled.sh.
. "$(dirname "$0")/lib.bash"
T=$BIN/train

gen_unscaled 7 500 class2 >"$TMP/cls"
gen_unscaled 8 400 reg >"$TMP/reg"

converged() {  # converged OUT ERR: the gap line <= 1e-5, no warning about the cap
    awk '/^gap = / { g = $3 } END { exit !(g != "" && g + 0 <= 1e-5) }' "$1" &&
        ! grep -q 'cap' "$2"
}
gap() { sed -n 's/^gap = \([^ ]*\).*/\1/p' "$1"; }
for a in "l1svm -t linear" "l2svm -t linear" "l1svm -t poly -d 2" ; do
    n=$(echo "$a" | tr -d ' -')
    $T -s $a -n 1 "$TMP/cls" "$TMP/$n.model" >"$TMP/$n.out" 2>"$TMP/$n.err"
    check "$a, unscaled: converges at the default ($(gap "$TMP/$n.out"))" \
        converged "$TMP/$n.out" "$TMP/$n.err"
done
for a in "svr -p 0.1 -c 4 -t linear" "rls -t linear" "rla -t linear"; do
    n=$(echo "$a" | tr -d ' -.')
    $T -s $a -B 1 -n 1 "$TMP/reg" "$TMP/$n.model" >"$TMP/$n.out" 2>"$TMP/$n.err"
    check "$a -B 1, unscaled regression: converges at the default ($(gap "$TMP/$n.out"))" \
        converged "$TMP/$n.out" "$TMP/$n.err"
done
$T -s l1svm -t linear -n 1 --no-walk --max-iter 100 "$TMP/cls" "$TMP/nw.model" \
    >"$TMP/nw.out" 2>"$TMP/nw.err"
check "--no-walk: coordinate descent alone stops at the cap of 100 ($(gap "$TMP/nw.out"))" \
    grep -q 'cap' "$TMP/nw.err"

# more free coefficients than the dense walk takes (1,000): rls walks by conjugate gradients
gen_unscaled 9 1500 reg >"$TMP/reg1500"
$T -s rls -t linear -n 1 "$TMP/reg1500" "$TMP/cg.model" >"$TMP/cg.out" 2>"$TMP/cg.err"
check "rls -t linear, 1,500 unscaled rows (the CG walk): converges at the default ($(gap "$TMP/cg.out"))" \
    converged "$TMP/cg.out" "$TMP/cg.err"

# a degree-3 polynomial kernel on these rows is not positive semidefinite at working
# precision against rls's curvature 1/C: exit status 2, said so, no model written
expect_fail "rls -t poly -d 3, unscaled: exit status 2, the kernel matrix not PSD at working precision" \
    2 'not positive semidefinite at working precision.*scale the features' \
    $T -s rls -t poly -d 3 -n 1 "$TMP/reg" "$TMP/np.model"
check "... and no model written" test ! -e "$TMP/np.model"
