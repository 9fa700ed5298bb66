#!/usr/bin/env bash
# train-mpi's searches (issue 17 item 2) under mpirun with R in {1, 2, 3, 4}: -C (each C's
# folds on ranks, warm starts kept on the rank of their fold), --grid (the gamma columns on
# ranks, or each point's folds when there are fewer columns than ranks) and --grid-plot:
# train's stdout and SVG byte for byte; warnings travel with their column.
source "$(dirname "$0")/lib.bash"
awk '{ $1 = NR % 3 + 1; print }' $H >"$TMP/three"      # 3 classes: one-versus-all inside

G="C=-3:3:4,g=-7:-3:3"    # 3 gamma columns: on ranks at R = 2, 3; folds on ranks at R = 4
$T -C $H >"$TMP/C.want"
$T -C -s rls $H >"$TMP/Cr.want"
$T -s l2svm -t rbf --grid $G --grid-plot "$TMP/g.svg" $H >"$TMP/g.want"
$T --grid C=-8:2:6 --metric auc $H >"$TMP/auc.want"
$T -v 4 --metric f1 -s l1svm "$TMP/three" >"$TMP/f1.want"
$T -s l1svm -t rbf --grid C=-2:2:3,g=-4:-2:2 -v 3 --max-iter 3 "$TMP/three" \
    >"$TMP/w.want" 2>"$TMP/w.err"
check "-C prints a best C" grep -q '^Best C = ' "$TMP/C.want"
check "--grid prints 12 points and the best" test "$(grep -c '^log2c' "$TMP/g.want")" -eq 12
check "--grid-plot wrote an SVG" grep -q '<svg' "$TMP/g.svg"
check "the capped grid warns (warnings to carry)" grep -q 'C = .* gamma = ' "$TMP/w.err"
for R in $RANKS; do
    run $R -C $H >"$TMP/C.$R"
    check "R = $R: -C (folds on ranks, warm along C): train's output" cmp -s "$TMP/C.want" "$TMP/C.$R"
    run $R -C -s rls $H >"$TMP/Cr.$R"
    check "R = $R: -C -s rls (MSE): train's output" cmp -s "$TMP/Cr.want" "$TMP/Cr.$R"
    run $R -s l2svm -t rbf --grid $G --grid-plot "$TMP/g.$R.svg" $H >"$TMP/g.$R"
    check "R = $R: --grid C x gamma: train's table and best point" cmp -s "$TMP/g.want" "$TMP/g.$R"
    check "R = $R: --grid-plot: train's SVG" cmp -s "$TMP/g.svg" "$TMP/g.$R.svg"
    run $R --grid C=-8:2:6 --metric auc $H >"$TMP/auc.$R"
    check "R = $R: --grid over C, --metric auc (scores travel with the folds): train's" \
        cmp -s "$TMP/auc.want" "$TMP/auc.$R"
    run $R -v 4 --metric f1 -s l1svm "$TMP/three" >"$TMP/f1.$R"
    check "R = $R: -v 4 --metric f1 (one-versus-all): train's" cmp -s "$TMP/f1.want" "$TMP/f1.$R"
    run $R -s l1svm -t rbf --grid C=-2:2:3,g=-4:-2:2 -v 3 --max-iter 3 "$TMP/three" \
        >"$TMP/w.$R" 2>"$TMP/w.$R.err"
    check "R = $R: a grid with warnings: train's output" cmp -s "$TMP/w.want" "$TMP/w.$R"
    check "R = $R: a grid with warnings: train's warnings, in train's order" \
        cmp -s <(grep -v ' s)$' "$TMP/w.err" | sed 's/^train: //') \
               <(grep -v ' s)$' "$TMP/w.$R.err" | sed 's/^train-mpi: //')
done
for R in $RANKS2; do [ "$R" -le 3 ] || continue   # the same R twice, and the in-process simulation: the same bytes
    run $R -s l2svm -t rbf --grid $G $H >"$TMP/g2.$R"
    check "R = $R: --grid twice: the same bytes" cmp -s "$TMP/g.$R" "$TMP/g2.$R"
    "$M" --simulate $R -s l2svm -t rbf --grid $G $H >"$TMP/gs.$R"
    check "--simulate $R: --grid: train's output" cmp -s "$TMP/g.want" "$TMP/gs.$R"
done
expect_fail "-C with a model file: status 1" 1 "writes no model" run 2 -C $H "$TMP/x.model"
expect_fail "a bad --grid: status 1" 1 "expected C=LO:HI:N" run 2 --grid C=1:2 $H
expect_fail "--grid-plot without --grid: status 1" 1 "needs --grid" run 2 -C --grid-plot x.svg $H
expect_fail "-C with --cocoa: refused" 1 "without it" run 2 -C --cocoa $H
