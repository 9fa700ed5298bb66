# polymkl.sh - command-line tests of train -s polymkl (seed 002, issue 15) on heart_scale.
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict D=$(dirname "$0")/../../data

$T -s polymkl --lambda 0.1 --iters 50 -o "$TMP/trace.csv" "$D/heart_scale" "$TMP/h.model" >"$TMP/h.out"
check "train -s polymkl: 13 rank-one base kernels, D = 3, |I| = 2380, 50 iterations" bash -c \
    "grep -q '^polymkl: 270 rows, 13 base kernels (rank one), D = 3, |I| = 2380, Algorithm 3' $TMP/h.out && grep -qx 'iterations = 50' $TMP/h.out"
check "-o: the trace's header and rows (iterations 0..10, 20, 50)" bash -c \
    "head -n 1 $TMP/trace.csv | grep -qx 'iteration,seconds,J,active,g1,gap' && test \$(wc -l <$TMP/trace.csv) -eq 14 && tail -n 1 $TMP/trace.csv | grep -q '^50,'"
check "the trace's J falls from n/2 = 135 (theta = 0)" awk -F, \
    'NR == 2 { j0 = $3 } END { exit !(j0 > 135 - 1e-9 && j0 < 135 + 1e-9 && $3 < j0) }' "$TMP/trace.csv"
$P "$D/heart_scale" "$TMP/h.model" "$TMP/h.pred" >"$TMP/h.mse"
check "predict: a regression model (MSE below the variance of y, 1)" \
    awk '/^Mean squared error = / { exit !($5 < 1) }' "$TMP/h.mse"
$T -q -s polymkl --lambda 0.1 --iters 50 "$D/heart_scale" "$TMP/again.model"
check "the same seed: the same model file" cmp -s "$TMP/h.model" "$TMP/again.model"
$T -s polymkl -a kloft -d 2 --lambda 0.1 "$D/heart_scale" "$TMP/k.model" >"$TMP/k.out"
check "-a kloft -d 2: relative gap <= 1e-10, all 183 tuples active" bash -c \
    "awk '/^gap = / { exit !(\$3 <= 1e-10) }' $TMP/k.out && grep -q '^active tuples = 183,' $TMP/k.out"
for s in uniform full; do
    check "--sampler $s trains" $T -q -s polymkl --sampler $s -d 2 --iters 20 "$D/heart_scale" "$TMP/$s.model"
done
printf 'rbf gamma=0.5 features=1-3\nlinear features=4\npoly gamma=1 coef0=1 degree=2 features=5,6\n' >"$TMP/kl"
$T -s polymkl --kernels "$TMP/kl" -d 2 --lambda 0.1 --iters 20 "$D/heart_scale" "$TMP/kl.model" >"$TMP/kl.out"
check "--kernels FILE: dense base kernels, kept in the model in kernel-list syntax" bash -c \
    "grep -q '3 base kernels (dense)' $TMP/kl.out && grep -qx 'rbf gamma=0.5 features=1-3' $TMP/kl.model"
check "... and the model predicts" $P -q "$D/heart_scale" "$TMP/kl.model" "$TMP/kl.pred"
expect_fail "--rho2 with a wrong count" 1 "need 1 or D \\+ 1 = 4 values" \
    $T -s polymkl --rho2 1,2 "$D/heart_scale" "$TMP/x.model"
expect_fail "options of other methods are refused" 1 "-c \\(C\\) does not apply to -s polymkl" \
    $T -s polymkl -c 1 "$D/heart_scale" "$TMP/x.model"
expect_fail "-a kloft where |I| is too large" 1 "too many to enumerate" \
    $T -s polymkl -a kloft -d 12 "$D/heart_scale" "$TMP/x.model"

G=$BIN/datasets/gen_poly_terms
$G -r 5 --train 300 --valid 10 --test 200 "$TMP/pt"
check "gen_poly_terms: 10 distinct monomials of degree <= 3, 300/10/200 rows of 5 features" bash -c \
    "test \$(sort -u $TMP/pt.terms | wc -l) -eq 10 && test \$(awk 'NF > 3' $TMP/pt.terms | wc -l) -eq 0 && test \$(wc -l <$TMP/pt.train) -eq 300 && test \$(wc -l <$TMP/pt.test) -eq 200 && awk 'NF != 6 { exit 1 }' $TMP/pt.train"
$G -r 5 --train 300 --valid 10 --test 200 "$TMP/pt2"
check "gen_poly_terms: the same seed, the same files" cmp -s "$TMP/pt.train" "$TMP/pt2.train"
$T -q -s polymkl --lambda 1e-3 --iters 300 "$TMP/pt.train" "$TMP/pt.model"
$P "$TMP/pt.test" "$TMP/pt.model" "$TMP/pt.pred" >"$TMP/pt.mse"
check "polymkl on gen_poly_terms -r 5: test MSE below 1% of the variance of y" bash -c \
    "awk '{ s += \$1; q += \$1 * \$1 } END { print q / NR - (s / NR)^2 }' $TMP/pt.test >$TMP/pt.var && awk -v v=\$(cat $TMP/pt.var) '/^Mean squared error = / { exit !(\$5 < 0.01 * v) }' $TMP/pt.mse"

# the lambda path: -L MIN:MAX:N --valid FILE, theta warm-started from lambda to lambda
head -n 170 "$D/heart_scale" >"$TMP/pv.train"
tail -n 100 "$D/heart_scale" >"$TMP/pv.valid"
$T -s polymkl -d 2 -L 1e-2:1e3:6 --valid "$TMP/pv.valid" --iters 200 -o "$TMP/path.csv" \
    "$TMP/pv.train" "$TMP/pv.model" >"$TMP/pv.out"
check "-L: the path table, 6 lambdas from 1000 down to 0.01, 200 iterations each, one chosen" bash -c \
    "head -n 1 $TMP/path.csv | grep -qx 'lambda,iterations,seconds,J,gap,active,valid_mse,chosen' && test \$(wc -l <$TMP/path.csv) -eq 7 && awk -F, 'NR == 2 && \$1 != 1000 || NR == 7 && \$1 != 0.01 || NR > 1 && \$2 != 200 { exit 1 } NR > 1 { c += \$8 } END { exit c != 1 }' $TMP/path.csv"
check "-L: the chosen lambda has the least validation MSE of the path, and is the model's" bash -c \
    "awk -F, 'NR > 1 && (best == \"\" || \$7 < best) { best = \$7; l = \$1 } NR > 1 && \$8 == 1 { c = \$1 } END { print l; exit l != c }' $TMP/path.csv >$TMP/pv.l && grep -qx \"lambda \$(cat $TMP/pv.l)\" $TMP/pv.model"
$P "$TMP/pv.valid" "$TMP/pv.model" "$TMP/pv.pred" >/dev/null
check "-L: predict on the validation file reproduces the chosen row's MSE (relative 1e-12)" bash -c \
    "paste -d ' ' $TMP/pv.pred $TMP/pv.valid | awk '{ s += (\$1 - \$2)^2 } END { printf \"%.17g\\n\", s / NR }' >$TMP/pv.mse && awk -F, -v m=\$(cat $TMP/pv.mse) 'NR > 1 && \$8 == 1 { d = m - \$7; if (d < 0) d = -d; exit !(d <= 1e-12 * \$7) }' $TMP/path.csv"
expect_fail "-L without --valid" 1 "-L needs --valid FILE" \
    $T -s polymkl -L 1e-3:1:3 "$TMP/pv.train" "$TMP/x.model"
expect_fail "--lambda and -L together" 1 "--lambda or -L, not both" \
    $T -s polymkl --lambda 1 -L 1e-3:1:3 --valid "$TMP/pv.valid" "$TMP/pv.train" "$TMP/x.model"
expect_fail "--valid without -L" 1 "--valid goes with -L" \
    $T -s polymkl --valid "$TMP/pv.valid" "$TMP/pv.train" "$TMP/x.model"

# the stored polynomial form (poly_form) against the support vector form (--sv-form)
$T -q -s polymkl -d 3 --lambda 0.1 --iters 100 "$TMP/pv.train" "$TMP/poly.model"
$T -q -s polymkl -d 3 --lambda 0.1 --iters 100 --sv-form "$TMP/pv.train" "$TMP/sv.model"
check "the model stores the polynomial form (poly_form 1); --sv-form leaves it out" bash -c \
    "grep -qx 'poly_form 1' $TMP/poly.model && ! grep -q poly_form $TMP/sv.model"
$P -q -d "$TMP/pv.valid" "$TMP/poly.model" "$TMP/poly.dec"
$P -q -d "$TMP/pv.valid" "$TMP/sv.model" "$TMP/sv.dec"
check "held-out rows: the polynomial form = the support vector form (relative 1e-10)" bash -c \
    "paste -d ' ' $TMP/poly.dec $TMP/sv.dec | awk '{ d = \$1 - \$2; if (d < 0) d = -d; a = \$1 < 0 ? -\$1 : \$1; if (a > m) m = a; if (d > w) w = d } END { exit !(w <= 1e-10 * m) }'"
sed 's/^nr_sv \(.*\)$/nr_sv \1\npoly_form 1/' "$TMP/kl.model" >"$TMP/klpoly.model"
expect_fail "poly_form on dense base kernels is refused" 2 "poly_form needs linear base kernels" \
    $P "$D/heart_scale" "$TMP/klpoly.model" "$TMP/x.pred"

# --rho-monomial: rho_t^2 = rho_d^2 sqrt(m_t), kept in the model (rho_monomial 1)
$T -s polymkl -d 2 -a kloft --lambda 0.1 --rho-monomial "$TMP/pv.train" "$TMP/mono.model" >"$TMP/mono.out"
check "--rho-monomial: Kloft converges, the model says rho_monomial 1" bash -c \
    "awk '/^gap = / { exit !(\$3 <= 1e-10) }' $TMP/mono.out && grep -qx 'rho_monomial 1' $TMP/mono.model"
$P -q -d "$TMP/pv.valid" "$TMP/mono.model" "$TMP/mono.dec"
check "--rho-monomial: the model predicts (finite decision values)" \
    awk '!($1 + 0 == $1) { exit 1 } END { exit NR != 100 }' "$TMP/mono.dec"
