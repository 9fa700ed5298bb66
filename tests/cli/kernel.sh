# kernel.sh - command-line tests of the kernel options of train and predict.
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict H=$DATA/heart_scale

$T -s l1svm -t rbf -g 0.1 $H "$TMP/rbf.model" >"$TMP/rbf.train"
check "rbf: train prints the objective" grep -Eq '^objective = [0-9.]+' "$TMP/rbf.train"
check "rbf model is a kernel model" bash -c "grep -qx 'solver kernel' $TMP/rbf.model && grep -qx 'kernel rbf' $TMP/rbf.model"
$P $H "$TMP/rbf.model" "$TMP/rbf.out" >"$TMP/rbf.pred"
check "rbf: training accuracy above 85%" grep -Eq '^Accuracy = (8[5-9]|9[0-9]|100)(\.[0-9]+)?% ' "$TMP/rbf.pred"
$T -q -s l1svm -t 2 -g 0.1 $H "$TMP/t2.model"
check "-t 2 is rbf, as in svm-train" cmp -s "$TMP/rbf.model" "$TMP/t2.model"
$T -q -s l1svm -t rbf -g 0.1 -m 1 $H "$TMP/m1.model"
check "a 1 MB cache gives the same model" cmp -s "$TMP/rbf.model" "$TMP/m1.model"
$T -q -s l1svm -t rbf -g 0.1 -n 2 $H "$TMP/n2.model"
check "two threads give the same model" cmp -s "$TMP/rbf.model" "$TMP/n2.model"
$P -q -n 2 $H "$TMP/rbf.model" "$TMP/rbf2.out"
check "predict -n 2 gives the same predictions" cmp -s "$TMP/rbf.out" "$TMP/rbf2.out"
nsv=$(sed -n 's/^nr_sv //p' "$TMP/rbf.model")
nz=$(sed -n 's/^nonzero coefficients = \([0-9]*\).*/\1/p' "$TMP/rbf.train")
check "the model keeps exactly the nonzero coefficients ($nsv)" test "$nsv" = "$nz"

$T -q -s l1svm -t rbf $H "$TMP/g.model"
check "default gamma is 1/number of features" grep -qx 'gamma 0.07692307692307693' "$TMP/g.model"
for k in linear poly sigmoid laplacian expdot; do
    $T -q -s l2svm -t $k -g 0.05 $H "$TMP/$k.model" && $P -q $H "$TMP/$k.model" "$TMP/$k.out"
    check "kernel $k trains and predicts" test "$(wc -l <"$TMP/$k.out")" -eq 270
done
for s in rls rla svr; do
    $T -q -s $s -t rbf $H "$TMP/k$s.model"
    $P $H "$TMP/k$s.model" "$TMP/k$s.out" >"$TMP/k$s.pred"
    check "kernel $s: predict prints MSE" grep -q '^Mean squared error = ' "$TMP/k$s.pred"
done
$T -s rls -t rbf -a fixedpoint --alpha norm2 -n 2 $H "$TMP/fp.model" >"$TMP/fp.train"
$T -s rls -t rbf -e 1e-9 $H "$TMP/cd.model" >"$TMP/cd.train"
check "fixed point and CD reach the same rls objective" awk '
    FNR == 1 { f++ } /^objective = / { o[f] = $3 }
    END { d = o[1] - o[2]; if (d < 0) d = -d; exit !(d <= 1e-3 * o[2]) }' "$TMP/fp.train" "$TMP/cd.train"

# one-spline kernel on 1-D data; 3 classes with a kernel
awk '{ split($2, a, ":"); print $1, (a[1] == 1 ? $2 : "") }' $H >"$TMP/oned"
check "spline kernel on 1-D data" $T -q -s rls -t spline "$TMP/oned" "$TMP/sp.model"
awk '{ $1 = ($2 ~ /^1:/ && substr($2, 3) + 0 > 0.2) ? 3 : ($1 > 0 ? 2 : 1); print }' $H >"$TMP/three"
$T -q -s l1svm -t rbf "$TMP/three" "$TMP/three.model"
$P -d "$TMP/three" "$TMP/three.model" "$TMP/three.dec" >"$TMP/three.pred"
check "kernel one-versus-all: three decision values per line" bash -c "awk 'NF != 3 { exit 1 }' $TMP/three.dec"
$T -v 5 -s l1svm -t rbf $H >"$TMP/cv.out"
check "kernel -v 5 prints Cross Validation Accuracy" grep -Eq '^Cross Validation Accuracy = [0-9.]+%$' "$TMP/cv.out"

expect_fail "unknown kernel" 1 "-t: unknown value 'gauss'" $T -t gauss $H
check "-B with a kernel: K + B^2, kernel_offset in the model (tests/cli/search.sh)" bash -c '"$0" -q -t rbf -B 1 "$1" "$2" && grep -qx "kernel_offset 1" "$2"' $T $H "$TMP/x"
expect_fail "fixed point without a kernel" 1 "needs a kernel" $T -a fixedpoint $H "$TMP/x"
expect_fail "spline on 13 features" 1 "spline" $T -t spline $H "$TMP/x"
expect_fail "negative gamma" 1 "gamma" $T -t rbf -g -1 $H "$TMP/x"
expect_fail "zero threads" 1 "-n: expected an integer" $T -t rbf -n 0 $H "$TMP/x"
expect_fail "bad -a" 1 "-a: unknown value 'newton' \\(cd\\|fixedpoint\\)" $T -t rbf -a newton $H "$TMP/x"
sed 's/^kernel rbf$/kernel gauss/' "$TMP/rbf.model" >"$TMP/bad.model"
expect_fail "model with an unknown kernel" 2 "bad.model:4: unknown kernel" $P $H "$TMP/bad.model" "$TMP/o"
head -n 30 "$TMP/rbf.model" >"$TMP/cut.model"
expect_fail "truncated kernel model" 2 "truncated model \\([0-9]+ of [0-9]+ support vectors\\)" $P $H "$TMP/cut.model" "$TMP/o"
