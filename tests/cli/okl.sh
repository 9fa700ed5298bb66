# okl.sh - command-line tests of low-rank output kernel learning (train -s okl) and
# multi-output predict, on the paper's signals data (datasets/gen_okl_signals, small m).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict G=$BIN/datasets/gen_okl_signals

$G -m 40 --seed 2 "$TMP/s.train" "$TMP/s.test"
check "generator: 100 + 100 rows of 40 outputs and one feature" \
    bash -c "test \$(wc -l <$TMP/s.train) -eq 100 && test \$(wc -l <$TMP/s.test) -eq 100 && head -n 1 $TMP/s.train | awk '{exit !(split(\$1, a, \",\") == 40 && \$2 ~ /^1:/)}'"
$G -m 40 --seed 2 "$TMP/s2.train" "$TMP/s2.test"
check "generator: same seed, same data" cmp -s "$TMP/s.train" "$TMP/s2.train"

# the path with validation data: table, CSV, chosen lambda, model
$T -s okl -t laplacian -g 10 --rank 5 --valid "$TMP/s.test" -o "$TMP/p.csv" \
    "$TMP/s.train" "$TMP/s.model" >"$TMP/p.out"
check "okl: 25 lambdas in the table" test "$(grep -c '^ *[0-9.e+-]\+ \+[0-9.e+-]\+ \+[0-9]\+ ' "$TMP/p.out")" -eq 25
check "csv: header and 25 rows" bash -c "head -n 1 $TMP/p.csv | grep -qx 'lambda,objective,rank,iterations,seconds,train_mse,valid_mse,chosen' && test \$(wc -l <$TMP/p.csv) -eq 26"
check "csv: L = 0 at the first lambda (alpha), rank <= 5 everywhere" \
    bash -c "awk -F, 'NR == 2 && \$3 != 0 {bad=1} NR > 1 && \$3 > 5 {bad=1} END {exit bad}' $TMP/p.csv"
best=$(awk -F, 'NR > 1 && (NR == 2 || $7 < b) {b = $7; r = NR} END {print r}' "$TMP/p.csv")
check "the chosen lambda has the least validation MSE (line $best)" \
    bash -c "sed -n ${best}p $TMP/p.csv | grep -q ',1\$'"
check "model: solver okl, 40 outputs, 5 codes, an output map" \
    bash -c "grep -qx 'solver okl' $TMP/s.model && grep -qx 'nr_output 40' $TMP/s.model && grep -qx 'nr_w 5' $TMP/s.model && grep -qx 'output_map' $TMP/s.model"
vmse=$(sed -n "${best}p" "$TMP/p.csv" | cut -d, -f7)
$P "$TMP/s.test" "$TMP/s.model" "$TMP/s.pred" >"$TMP/s.acc"
check "predict: 40 outputs per line" bash -c "awk '{ if (NF != 40) bad=1 } END {exit bad || NR != 100}' $TMP/s.pred"
check "predict: MSE over all outputs = the path's validation MSE ($vmse)" \
    bash -c "awk -v v=$vmse '/^Mean squared error = / {m = \$5} END {exit !(m > 0 && (m - v)^2 < (1e-5 * v)^2)}' $TMP/s.acc"
$P --codes "$TMP/s.test" "$TMP/s.model" - 2>/dev/null >"$TMP/codes"
check "predict --codes: 5 codes per line" bash -c "awk '{ if (NF != 5) bad=1 } END {exit bad || NR != 100}' $TMP/codes"
cut -d' ' -f2 "$TMP/s.test" | sed 's/^/0 /' | $P - "$TMP/s.model" "$TMP/nolab.pred" >"$TMP/nolab.out"
check "predict: single placeholder labels are predicted, not scored" \
    bash -c "grep -q '^100 rows had a single label' $TMP/nolab.out && cmp -s $TMP/nolab.pred $TMP/s.pred"

# determinism, stdin and gzip, the baseline, plain Algorithm 1
gzip -c "$TMP/s.train" | $T -q -s okl -t laplacian -g 10 --rank 5 --valid "$TMP/s.test" - "$TMP/gz.model"
check "gzip on standard input gives the same model" cmp -s "$TMP/s.model" "$TMP/gz.model"
$T -q -s okl -t laplacian -g 10 --identity --valid "$TMP/s.test" -o "$TMP/id.csv" "$TMP/s.train" "$TMP/id.model"
check "baseline L = I: model with the identity output map" grep -qx 'output_map identity' "$TMP/id.model"
okl_best=$(awk -F, 'NR > 1 && $8 == 1 {print $7}' "$TMP/p.csv")
id_best=$(awk -F, 'NR > 1 && $8 == 1 {print $7}' "$TMP/id.csv")
check "low-rank output kernel beats L = I on the signals ($okl_best < $id_best)" \
    awk -v a="$okl_best" -v b="$id_best" 'BEGIN {exit !(a < b)}'
$P "$TMP/s.test" "$TMP/id.model" "$TMP/id.pred" >"$TMP/id.acc"
check "predict with the L = I model: its validation MSE ($id_best)" \
    bash -c "awk -v v=$id_best '/^Mean squared error = / {m = \$5} END {exit !((m - v)^2 < (1e-5 * v)^2)}' $TMP/id.acc"
$T -q -s okl -t laplacian -g 10 --rank 5 --plain -o "$TMP/plain.csv" --valid "$TMP/s.test" "$TMP/s.train" "$TMP/plain.model"
check "plain Algorithm 1: no objective lower than the default's by more than 1e-6" \
    bash -c "paste -d, $TMP/p.csv $TMP/plain.csv | awk -F, 'NR > 1 && \$2 > \$10 * (1 + 1e-6) {bad=1} END {exit bad}'"
check "plain Algorithm 1 takes more iterations" \
    bash -c "test \$(awk -F, 'NR > 1 {s += \$4} END {print s}' $TMP/plain.csv) -gt \$(awk -F, 'NR > 1 {s += \$4} END {print s}' $TMP/p.csv)"
$T -q -s okl -L 0.5:50:4 --rank 2 "$TMP/s.train" "$TMP/lin.model"
check "linear kernel by default; -L sets the grid; no --valid: the smallest lambda" \
    bash -c "grep -qx 'kernel linear' $TMP/lin.model && grep -qx 'lambda 0.5' $TMP/lin.model"

# bad input and bad options
printf '1,2 1:1\n3 1:2\n' >"$TMP/ragged"
expect_fail "ragged outputs: file:line:col error" 2 "ragged:2:1: expected 2 outputs in the label \\(as on line 1\\), got 1" \
    $T -s okl "$TMP/ragged" "$TMP/x.model"
expect_fail "multi-output data need -s okl" 2 "40 outputs per row.*only -s okl" \
    $T -s rls "$TMP/s.train" "$TMP/x.model"
expect_fail "rls2-path rejects multi-output data" 2 "40 outputs per row" \
    $BIN/rls2-path "$TMP/s.train" "$TMP/x.model"
expect_fail "--rank above the number of outputs" 1 "rank p = 41 must be in 1..40" \
    $T -s okl --rank 41 "$TMP/s.train" "$TMP/x.model"
expect_fail "okl options need -s okl" 1 "--rank \\(rank\\) does not apply to -s l2svm" $T --rank 3 "$TMP/s.train" "$TMP/x.model"
expect_fail "-v is not for okl" 1 "use --valid" $T -s okl -v 3 "$TMP/s.train" "$TMP/x.model"
$G -m 7 "$TMP/o7.train" "$TMP/o7.test"
expect_fail "validation data with other outputs" 2 "validation data have 7 outputs per row, the training data 40" \
    $T -s okl --valid "$TMP/o7.test" "$TMP/s.train" "$TMP/x.model"
expect_fail "predict: test rows with other outputs" 2 "o7.test:1: a label with 7 outputs; the model has 40" \
    $P "$TMP/o7.test" "$TMP/s.model" "$TMP/x.pred"
$T -q -s rls $DATA/heart_scale "$TMP/h.model"
expect_fail "predict: multi-output rows need an okl model" 2 "a label with 40 outputs; only multi-output models" \
    $P "$TMP/s.test" "$TMP/h.model" "$TMP/x.pred"
expect_fail "predict --codes needs an okl model" 1 "--codes needs a multi-output model" \
    $P --codes $DATA/heart_scale "$TMP/h.model" "$TMP/x.pred"
head -n 30 "$TMP/s.model" >"$TMP/trunc.model"
expect_fail "truncated okl model" 2 "trunc.model.*truncated model" $P "$TMP/s.test" "$TMP/trunc.model" "$TMP/x.pred"
sed 's/^output_map$/output_map identity/' "$TMP/s.model" >"$TMP/badmap.model"
expect_fail "identity map with nr_w != nr_output" 2 "badmap.model:[0-9]+: the identity output map needs nr_w = nr_output" \
    $P "$TMP/s.test" "$TMP/badmap.model" "$TMP/x.pred"

# threads: the same bits for any -n (BLAS on one thread: OpenBLAS's dgemm and dpotrf change
# in the last bits with its thread count; this model differed before)
$G -m 300 --seed 2 "$TMP/w.train" "$TMP/w.test"
$T -q -n 1 -s okl -t laplacian -g 10 --rank 20 "$TMP/w.train" "$TMP/w1.model" >/dev/null
$T -q -n 2 -s okl -t laplacian -g 10 --rank 20 "$TMP/w.train" "$TMP/w2.model" >/dev/null
check "okl: -n 2 writes the model of -n 1, byte for byte" cmp -s "$TMP/w1.model" "$TMP/w2.model"
$P -n 1 "$TMP/w.test" "$TMP/w1.model" "$TMP/w1.pred" >/dev/null
$P -n 2 "$TMP/w.test" "$TMP/w1.model" "$TMP/w2.pred" >/dev/null
check "okl: predict -n 2 writes the outputs of -n 1" cmp -s "$TMP/w1.pred" "$TMP/w2.pred"
