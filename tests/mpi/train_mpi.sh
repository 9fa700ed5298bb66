#!/usr/bin/env bash
# train-mpi under mpirun with R in {1, 2, 3, 4}: train's output byte for byte (models, -v,
# one-versus-all classes); CoCoA+ reproducible, near a tight serial optimum, the simulation's
# communication counts equal MPI's; the same FILE:LINE:COL for a bad line at every R.
source "$(dirname "$0")/lib.bash"

# ---- without --cocoa: train's bytes
awk '{ $1 = NR % 3 + 1; print }' $H >"$TMP/three"      # 3 classes: one-versus-all
$T -q $H "$TMP/l2.model"
$T -q -s l1svm -B 1 -c 4 "$TMP/three" "$TMP/ova.model"
$T -q -s l2svm -t rbf -g 0.5 "$TMP/three" "$TMP/kova.model"
$T -v 5 $H >"$TMP/cv.want"
$T -v 4 -s rls $H >"$TMP/cvr.want"
$T -v 3 -s l1svm "$TMP/three" >"$TMP/cv3.want"
for R in $RANKS; do
    run $R -q $H "$TMP/l2.$R.model"
    check "R = $R: the model of train, byte for byte" cmp -s "$TMP/l2.model" "$TMP/l2.$R.model"
    run $R -q -s l1svm -B 1 -c 4 "$TMP/three" "$TMP/ova.$R.model"
    check "R = $R: one-versus-all classes on ranks: train's model" \
        cmp -s "$TMP/ova.model" "$TMP/ova.$R.model"
    run $R -q -s l2svm -t rbf -g 0.5 "$TMP/three" "$TMP/kova.$R.model"
    check "R = $R: kernel one-versus-all on ranks: train's model" \
        cmp -s "$TMP/kova.model" "$TMP/kova.$R.model"
    run $R -v 5 $H >"$TMP/cv.$R"
    check "R = $R: -v 5 folds on ranks: train's output" cmp -s "$TMP/cv.want" "$TMP/cv.$R"
    run $R -v 4 -s rls $H >"$TMP/cvr.$R"
    check "R = $R: -v 4 -s rls: train's MSE and SCC" cmp -s "$TMP/cvr.want" "$TMP/cvr.$R"
    run $R -v 3 -s l1svm "$TMP/three" >"$TMP/cv3.$R"
    check "R = $R: -v 3 with one-versus-all inside the folds: train's output" \
        cmp -s "$TMP/cv3.want" "$TMP/cv3.$R"
done
check "-v output is not empty" grep -q 'Cross Validation Accuracy = ' "$TMP/cv.want"

# ---- --cocoa
run 1 -q --cocoa $H "$TMP/c1.model"
check "--cocoa at R = 1: train's model, byte for byte" cmp -s "$TMP/l2.model" "$TMP/c1.model"
for loss in l2svm l1svm svr; do
    F=$($T -s $loss -e 1e-9 --max-iter 100000 $H "$TMP/tight.model" | awk '$1 == "objective" { print $3 }')
    for R in $RANKS2; do
        run $R --cocoa -s $loss -e 1e-3 --comm-stats $H "$TMP/c.$loss.$R.model" \
            >"$TMP/c.out" 2>"$TMP/c.err"
        run $R --cocoa -s $loss -e 1e-3 --comm-stats $H "$TMP/c.$loss.$R.again" \
            >/dev/null 2>&1
        check "--cocoa -s $loss R = $R twice: the same model" \
            cmp -s "$TMP/c.$loss.$R.model" "$TMP/c.$loss.$R.again"
        f=$(awk '$1 == "objective" { print $3 }' "$TMP/c.out")
        check "--cocoa -s $loss R = $R: objective $f within 2e-3 of the tight serial $F" \
            awk -v f="$f" -v s="$F" 'BEGIN { exit !(f != "" && f >= s * (1 - 1e-9) && (f - s) <= 2e-3 * s) }'
        "$M" --simulate $R --cocoa -s $loss -e 1e-3 --comm-stats $H "$TMP/s.model" \
            >/dev/null 2>"$TMP/s.err"
        check "--cocoa -s $loss R = $R: the simulation's collectives and bytes = MPI's" \
            cmp -s <(grep '^comm' "$TMP/c.err") <(grep '^comm' "$TMP/s.err")
        check "--cocoa -s $loss R = $R: the simulation's model = MPI's (sums in rank order)" \
            cmp -s "$TMP/s.model" "$TMP/c.$loss.$R.model"
        predict=$BIN/predict
        check "--cocoa -s $loss R = $R: predict reads the model" \
            bash -c "'$predict' '$H' '$TMP/c.$loss.$R.model' '$TMP/p.out' >/dev/null"
    done
done
grep -q "^comm rank $((R - 1)): " "$TMP/c.err"   # R: the loop's last
check "--comm-stats: one line per rank" test $? -eq 0
check "--comm-stats: a round is one allreduce of 8 (n + 3) bytes" \
    grep -q '(128 per round)' "$TMP/c.out"
gzip -c $H >"$TMP/h.gz"
run 3 -q --cocoa -s l1svm "$TMP/h.gz" "$TMP/gz.model"
run 3 -q --cocoa -s l1svm $H "$TMP/pl.model"
check "--cocoa gzip (rank 0 reads, rows scattered by hash) = plain (byte ranges): the same model" \
    cmp -s "$TMP/gz.model" "$TMP/pl.model"
gzip -c $H | run 3 -q - "$TMP/stdin.model"
check "standard input (MPI gives it to rank 0; read there, broadcast): train's model" \
    cmp -s "$TMP/l2.model" "$TMP/stdin.model"
gzip -c $H | run 3 -q --cocoa -s l1svm - "$TMP/stdin.c.model"
check "--cocoa from standard input (rank 0 reads, rows scattered): the plain file's model" \
    cmp -s "$TMP/pl.model" "$TMP/stdin.c.model"
run 3 -q --cocoa --partition bytes -s l2svm -e 1e-3 $H "$TMP/pb.model" >"$TMP/pb.out"
check "--partition bytes: converges" test -s "$TMP/pb.model"

# ---- a bad line: train's FILE:LINE:COL at every R, reading by byte ranges or not
sed '200s/:/@/' $H >"$TMP/bad"
$T -q "$TMP/bad" "$TMP/x.model" 2>"$TMP/bad.want"
want=$(sed 's/^train: //' "$TMP/bad.want")
check "train names the bad line" grep -q ':200:' "$TMP/bad.want"
for R in $RANKS; do
    for mode in --cocoa -q; do
        run $R $mode "$TMP/bad" "$TMP/x.model" >/dev/null 2>"$TMP/bad.$R"
        st=$?
        check "R = $R $mode: a bad line is \"$want\" (status 2, got $st)" \
            test "$st" -eq 2 -a "$(head -n 1 "$TMP/bad.$R")" = "train-mpi: $want"
    done
done
check "no model left by the failures" test ! -e "$TMP/x.model"
expect_fail "usage error: status 1" 1 "expected a number" run 2 -c x $H "$TMP/x.model"
expect_fail "a missing file: status 2" 2 "no_such" run 2 --cocoa "$TMP/no_such" "$TMP/x.model"
expect_fail "--cocoa with a kernel: refused" 1 "linear solver only" run 2 --cocoa -t rbf $H "$TMP/x.model"

# ---- the fixed point (2.10) with the rows of K over ranks: train's bits
$T -q -t rbf -a fixedpoint $H "$TMP/fp.model"
$T -q -t linear -a fixedpoint -s rls --stop step --max-iter 1500 $H "$TMP/fpl.model"
for R in $RANKS; do
    run $R -q -t rbf -a fixedpoint $H "$TMP/fp.$R.model"
    check "R = $R: -a fixedpoint (rbf, gap rule): train's model, bit for bit" \
        cmp -s "$TMP/fp.model" "$TMP/fp.$R.model"
    run $R -q -t linear -a fixedpoint -s rls --stop step --max-iter 1500 $H "$TMP/fpl.$R.model"
    check "R = $R: -a fixedpoint (linear kernel, rls, step rule): train's model" \
        cmp -s "$TMP/fpl.model" "$TMP/fpl.$R.model"
done
# K larger than the cache (-m 1): each rank keeps only its rows; z_i summed over j in order,
# as train sums it whatever its cache holds (kernel.c's matvec: one order for cached and
# uncached columns, the uncached values by the exact path, never dgemm's): train -m 1 gives
# the bits of train with K in memory, on dense data too
for i in 1 2 3 4 5 6; do cat $H; done >"$TMP/h6"
$T -q -t rbf -a fixedpoint --max-iter 30 "$TMP/h6" "$TMP/h6.model"
$T -q -t rbf -a fixedpoint --max-iter 30 -m 1 "$TMP/h6" "$TMP/h6.m1.model"
check "train -a fixedpoint -m 1 (K, 1620 rows, not in the cache): train's model with K in memory" \
    cmp -s "$TMP/h6.model" "$TMP/h6.m1.model"
$T -q -n 2 -t poly -a fixedpoint -s rls --max-iter 20 -m 2 "$TMP/h6" "$TMP/h6p.m2.model"
$T -q -n 1 -t poly -a fixedpoint -s rls --max-iter 20 "$TMP/h6" "$TMP/h6p.model"
check "train -n 2 -a fixedpoint -m 2 (poly, rls): the bits of -n 1 with K in memory" \
    cmp -s "$TMP/h6p.model" "$TMP/h6p.m2.model"
for R in $RANKS2; do [ "$R" -le 3 ] || continue
    run $R -q -t rbf -a fixedpoint --max-iter 30 -m 1 "$TMP/h6" "$TMP/h6.$R.model"
    check "R = $R: -a fixedpoint, K (1620 rows) not in the 1 MB cache: train's model (any -m)" \
        cmp -s "$TMP/h6.model" "$TMP/h6.$R.model"
done

# ---- the EXAMPLES of kmtk-train-mpi(1), as written, with kmtk-* on the PATH
MAN=$(cd "$(dirname "$0")/../../doc" && pwd)
mkdir -p "$TMP/mx/bin" "$TMP/mx/run"
for p in train-mpi train predict; do printf '#!/bin/sh\nexec "%s" "$@"\n' "$BIN/$p" >"$TMP/mx/bin/kmtk-$p"; done
chmod +x "$TMP/mx/bin/"*
ln -s "$DATA" "$TMP/mx/run/data"
man_examples "$MAN/kmtk-train-mpi.1" >"$TMP/mx/run/ex.sh"
check "kmtk-train-mpi.1 has EXAMPLES" test "$(grep -c . "$TMP/mx/run/ex.sh")" -ge 5
(cd "$TMP/mx/run" && PATH="$TMP/mx/bin:$PATH" timeout 300 bash -e ex.sh) >"$TMP/mx/out" 2>"$TMP/mx/err"
st=$?
check "every example of kmtk-train-mpi.1 runs (status $st: $(tail -n 2 "$TMP/mx/err" | tr '\n' ' '))" \
    test "$st" -eq 0
check "examples: -v 5 prints the accuracy" grep -q '^Cross Validation Accuracy = ' "$TMP/mx/out"
check "examples: --comm-stats prints each rank's counts" grep -q '^comm rank 3: ' "$TMP/mx/err"
check "examples: -C prints the best C" grep -q '^Best C = ' "$TMP/mx/out"
check "examples: --grid wrote the heat map" grep -q '<svg' "$TMP/mx/run/grid.svg"

# ---- CoCoA+ on reuters-lasvm (public data, by path; skipped where it is not)
RE=${KMTK_DATASETS:-/work/shared/datasets}/reuters-lasvm.gz
if [ -f "$RE" ] && [ "$LARGE" = 1 ]; then
    F=$($T -s l2svm -e 1e-9 --max-iter 100000 "$RE" "$TMP/re.model" | awk '$1 == "objective" { print $3 }')
    for R in $RANKS2; do
        f=$(run $R --cocoa -s l2svm -e 1e-3 "$RE" "$TMP/re.$R.model" 2>/dev/null | awk '$1 == "objective" { print $3 }')
        check "--cocoa reuters-lasvm R = $R: objective $f within 2e-3 of the tight serial $F" \
            awk -v f="$f" -v s="$F" 'BEGIN { exit !(f != "" && f >= s * (1 - 1e-9) && (f - s) <= 2e-3 * s) }'
    done
else
    echo "# skipped: $RE not found (set KMTK_DATASETS), or MPI_LARGE=0"
fi
