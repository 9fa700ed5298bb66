#!/bin/bash
# search.sh - train's cross-validation metrics (--metric), instance weights (--weights),
# warm starts (--init) and parameter search (-C, --grid).
. "$(dirname "$0")/lib.bash"
T="$BIN/train"
H="$DATA/heart_scale"

# ---- --metric ----
"$T" -q -v 5 --metric auc "$H" >"$TMP/auc.out"
check "--metric auc prints Cross Validation AUC" grep -Eq '^Cross Validation AUC = 0\.[0-9]+$' "$TMP/auc.out"
"$T" -q -v 5 --metric f1 "$H" >"$TMP/f1.out"
check "--metric f1 prints Cross Validation F1" grep -Eq '^Cross Validation F1 = 0\.[0-9]+$' "$TMP/f1.out"
"$T" -q -v 5 --metric accuracy "$H" >"$TMP/acc.out"
"$T" -q -v 5 "$H" >"$TMP/def.out"
check "--metric accuracy is the default" cmp -s "$TMP/acc.out" "$TMP/def.out"
# F1 of the larger label (+1) from the same folds' accuracy would need predictions: the
# independent count is in tests/unit/test_search.c; here the interface
expect_fail "--metric mse for a classifier" 1 'classifies' "$T" -v 5 --metric mse "$H"
expect_fail "--metric auc for regression" 1 'regression' "$T" -s rls -v 5 --metric auc "$H"
expect_fail "--metric without -v" 1 'needs -v' "$T" --metric auc "$H" "$TMP/x.model"
expect_fail "--metric unknown" 1 'unknown metric' "$T" -v 5 --metric recall "$H"

# ---- --weights ----
awk '{ print 1 }' "$H" >"$TMP/ones"
"$T" -q "$H" "$TMP/plain.model"
"$T" -q --weights "$TMP/ones" "$H" "$TMP/ones.model"
check "--weights of ones: the model without weights, byte for byte" cmp -s "$TMP/plain.model" "$TMP/ones.model"
# weight 2 on the +1 rows = the file with those rows twice (same w to the printed digits at
# a tight tolerance): the unit test checks 1e-8; here the command line path
awk '{ print ($1 > 0 ? 2 : 1) }' "$H" >"$TMP/two"
awk '{ print; if ($1 > 0) print }' "$H" >"$TMP/dup.svm"
"$T" -q --stop step -e 1e-13 --max-iter 1000000 --weights "$TMP/two" "$H" "$TMP/two.model"
"$T" -q --stop step -e 1e-13 --max-iter 1000000 "$TMP/dup.svm" "$TMP/dup.model"
check "--weights 2 = the rows twice (w to 1e-8)" awk 'NR == FNR { if (w) a[++n] = $1; if ($1 == "w") w = 1; next }
    m { d = $1 - a[++k]; if (d < 0) d = -d; if (d > 1e-8) bad = 1 } $1 == "w" { m = 1 }
    END { exit bad || k != n || n == 0 }' "$TMP/two.model" "$TMP/dup.model"
head -n 100 "$TMP/ones" >"$TMP/short"
expect_fail "--weights: fewer lines than rows" 2 'short: 100 weights for 270 rows' "$T" --weights "$TMP/short" "$H" "$TMP/x.model"
{ head -n 6 "$TMP/ones"; echo "-2"; tail -n +8 "$TMP/ones"; } >"$TMP/neg"
expect_fail "--weights: a negative weight, FILE:LINE" 2 'neg:7: expected a weight' "$T" --weights "$TMP/neg" "$H" "$TMP/x.model"
expect_fail "--weights: no such file" 2 'nofile' "$T" --weights "$TMP/nofile" "$H" "$TMP/x.model"
"$T" -q -v 5 --weights "$TMP/ones" "$H" >"$TMP/cvw.out"
check "-v 5 --weights of ones = -v 5" cmp -s "$TMP/cvw.out" "$TMP/def.out"

# ---- --init ----
"$T" -c 1 -e 1e-9 "$H" "$TMP/c1.model" >"$TMP/c1.out"
"$T" -c 1 -e 1e-9 --init "$TMP/c1.model" "$H" "$TMP/c1w.model" >"$TMP/c1w.out"
"$T" -c 4 -e 1e-9 "$H" "$TMP/c4.model" >"$TMP/c4.out"
"$T" -c 4 -e 1e-9 --init "$TMP/c1.model" "$H" "$TMP/c4w.model" >"$TMP/c4w.out"
sweeps() { sed -n 's/^macro-iterations = \([0-9]*\).*/\1/p' "$1"; }
obj() { sed -n 's/^objective = //p' "$1"; }
check "--init of its own model: fewer sweeps ($(sweeps "$TMP/c1w.out") < $(sweeps "$TMP/c1.out"))" \
    test "$(sweeps "$TMP/c1w.out")" -lt "$(sweeps "$TMP/c1.out")"
check "--init from C = 1 at C = 4: the cold objective to 1e-8 ($(obj "$TMP/c4w.out"))" \
    awk -v a="$(obj "$TMP/c4w.out")" -v b="$(obj "$TMP/c4.out")" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * b) }'
"$T" -q -s l2svm -t rbf -c 1 "$H" "$TMP/k1.model"
"$T" -s l2svm -t rbf -c 2 -e 1e-9 --init "$TMP/k1.model" "$H" "$TMP/k2w.model" >"$TMP/k2w.out"
"$T" -s l2svm -t rbf -c 2 -e 1e-9 "$H" "$TMP/k2.model" >"$TMP/k2.out"
check "kernel --init from C = 1 at C = 2: the cold objective to 1e-8" \
    awk -v a="$(obj "$TMP/k2w.out")" -v b="$(obj "$TMP/k2.out")" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * b) }'
expect_fail "--init: no such model" 2 'nomodel' "$T" --init "$TMP/nomodel" "$H" "$TMP/x.model"
"$T" -q -s rls "$H" "$TMP/rls.model"
expect_fail "--init: a regression model for classes" 1 'init: the model' "$T" --init "$TMP/rls.model" "$H" "$TMP/x.model"

# ---- -C and --grid ----
# the best line names the first argmax of the printed table (accuracy: the largest)
best_is_argmax() {  # FILE: compares "Best C = X ..." with the table's first best row
    awk '/^log2c/ { for (i = 1; i <= NF; i++) if ($i == "=" && $(i-1) == "accuracy") {
             v = $(i+1); sub("%", "", v); v += 0
             c = ""; g = ""
             for (j = 1; j <= NF; j++) { if ($j == "C") c = $(j+2); if ($j == "gamma") g = $(j+2) }
             if (n == 0 || v > best) { best = v; bc = c; bg = g } n++ } }
         /^Best C/ { for (j = 1; j <= NF; j++) { if ($j == "C") C = $(j+2); if ($j == "gamma") G = $(j+2) } }
         END { exit !(n > 2 && C == bc && G == bg) }' "$1"
}
"$T" -q -C -n 1 "$H" >"$TMP/C1.out"
"$T" -q -C -n 2 "$H" >"$TMP/C2.out"
check "-C: a table and the best C" grep -q '^Best C = [0-9.e-]*  CV accuracy = [0-9.]*%$' "$TMP/C1.out"
check "-C: the best C is the argmax of the printed table" best_is_argmax "$TMP/C1.out"
check "-C: -n 2 prints the bits of -n 1" cmp -s "$TMP/C1.out" "$TMP/C2.out"
# each C of the path: the cold -v 5 -c C accuracy (the path is warm-started)
check "-C: the path's accuracies = cold -v 5 at each C" bash -c '
    while read -r _ _ _ _ _ C _ _ _ acc; do
        [ "$("$0" -q -v 5 -e 1e-5 -c "$C" "$1" | sed "s/.*= //")" = "$(printf "%.6g%%" "${acc%\%}")" ] || exit 1
    done < <(grep "^log2c" "$2")' "$T" "$H" "$TMP/C1.out"
"$T" -q -C -s l1svm -t rbf -c 0.25 "$H" >"$TMP/Ck.out"
check "-C -c 0.25: the kernel path starts at 0.25" grep -q '^log2c =  -2.00  C = 0.25 ' "$TMP/Ck.out"
"$T" -q --grid C=-3:5:5,g=1:-5:4 -t rbf --grid-plot "$TMP/grid.svg" -n 1 "$H" >"$TMP/g1.out"
"$T" -q --grid C=-3:5:5,g=1:-5:4 -t rbf -n 2 "$H" >"$TMP/g2.out"
check "--grid: 20 rows and the best" test "$(grep -c '^log2c' "$TMP/g1.out")" -eq 20
check "--grid: the best C and gamma are the argmax of the printed table" best_is_argmax "$TMP/g1.out"
check "--grid: -n 2 prints the bits of -n 1" cmp -s "$TMP/g1.out" "$TMP/g2.out"
check "--grid-plot: 20 cells, contours and the best ringed" bash -c \
    '[ "$(grep -c "class=\"cell\"" "$1")" -eq 20 ] && grep -q "class=\"contour\"" "$1" && [ "$(grep -c "class=\"best\"" "$1")" -eq 1 ]' _ "$TMP/grid.svg"
"$T" -q -v 3 --metric auc --grid C=-2:2:3 "$H" >"$TMP/gauc.out"
check "--grid --metric auc, linear (C only)" grep -Eq '^Best C = [0-9.]+  CV AUC = 0\.[0-9]+$' "$TMP/gauc.out"
expect_fail "-C writes no model" 1 'writes no model' "$T" -C "$H" "$TMP/x.model"
expect_fail "--grid over gamma without -t" 1 'needs a kernel' "$T" --grid C=0:1:2,g=0:1:2 "$H"
expect_fail "--grid: a bad spec" 1 'expected C=LO:HI:N' "$T" --grid C=1:2 "$H"
expect_fail "--grid-plot without --grid" 1 'needs --grid' "$T" --grid-plot "$TMP/x.svg" "$H"
expect_fail "-C and --grid together" 1 'one search' "$T" -C --grid default "$H"

# ---- -B with a kernel ----
"$T" -s l2svm -t linear -B 1 -e 1e-12 --max-iter 1000000 "$H" "$TMP/klb.model" >"$TMP/klb.out"
"$T" -s l2svm -B 1 -e 1e-12 --max-iter 1000000 "$H" "$TMP/llb.model" >"$TMP/llb.out"
check "-t linear -B 1: the linear solver's -B 1 objective to 1e-11 ($(obj "$TMP/klb.out"))" \
    awk -v a="$(obj "$TMP/klb.out")" -v b="$(obj "$TMP/llb.out")" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-11 * b) }'
# a relative gap g bounds ||w - w*|| by sqrt(2 g F): 1e-5 here
"$BIN/predict" -d "$H" "$TMP/klb.model" "$TMP/klb.dec" >/dev/null
"$BIN/predict" -d "$H" "$TMP/llb.model" "$TMP/llb.dec" >/dev/null
check "-t linear -B 1 = the linear solver's -B 1 (decision values to 1e-4)" \
    awk 'NR == FNR { a[FNR] = $1; next } { d = $1 - a[FNR]; if (d < 0) d = -d; if (d > 1e-4) bad = 1 } END { exit bad || FNR != 270 }' "$TMP/klb.dec" "$TMP/llb.dec"
check "-t rbf -B 2: kernel_offset 4 in the model" bash -c '"$0" -q -t rbf -B 2 "$1" "$2" && grep -qx "kernel_offset 4" "$2"' "$T" "$H" "$TMP/kb2.model"

# ---- --multiclass ovo ----
awk 'BEGIN { srand(7); for (i = 0; i < 150; i++) { c = i % 3; x = rand() + c; y = rand() - c / 2
     printf "%d 1:%.4f 2:%.4f 3:%.4f\n", c + 1, x, y, rand() } }' >"$TMP/three.svm"
"$T" -q -s l1svm -t rbf --multiclass ovo "$TMP/three.svm" "$TMP/ovo.model"
check "--multiclass ovo: a kernel_ovo model with 3 pairs" bash -c 'grep -qx "solver kernel_ovo" "$1" && grep -qx "nr_pair 3" "$1"' _ "$TMP/ovo.model"
"$BIN/predict" "$TMP/three.svm" "$TMP/ovo.model" "$TMP/ovo.pred" >"$TMP/ovo.acc"
check "predict takes the ovo model unchanged (accuracy above 80%)" awk '{ v = $3; sub("%", "", v); exit !(v > 80) }' "$TMP/ovo.acc"
"$BIN/predict" -d "$TMP/three.svm" "$TMP/ovo.model" "$TMP/ovo.dec" >/dev/null
check "predict -d: the votes (3 per row, summing to the 3 pairs)" awk '{ if (NF != 3 || $1 + $2 + $3 != 3) bad = 1 } END { exit bad || NR != 150 }' "$TMP/ovo.dec"
"$T" -q -s l1svm -t rbf --multiclass ovo -v 5 "$TMP/three.svm" >"$TMP/ovo.cv"
check "--multiclass ovo -v 5" grep -Eq '^Cross Validation Accuracy = [0-9.]+%$' "$TMP/ovo.cv"
expect_fail "--multiclass ovo without a kernel" 1 'kernels only' "$T" --multiclass ovo "$TMP/three.svm" "$TMP/x.model"
expect_fail "--multiclass for regression" 1 'does not apply' "$T" -s rls --multiclass ovo "$TMP/three.svm" "$TMP/x.model"
