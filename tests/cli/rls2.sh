# rls2.sh - command-line tests of rls2-path (RLS2 multiple kernel learning) with predict.
. "$(dirname "$0")/lib.bash"
R=$BIN/rls2-path P=$BIN/predict H=$DATA/heart_scale
G=$BIN/datasets/gen_binary_strings

# a short path on heart_scale: table, CSV, figure, model; predict agrees with the path
$R -L 1e-3:1e2:6 -o "$TMP/h.csv" --plot "$TMP/h.svg" $H "$TMP/h.model" >"$TMP/h.out" 2>"$TMP/h.err"
check "rls2-path: 6 lambdas in the table" test "$(grep -c '^ *[0-9.e+-]* \+[0-9]\+ \+[0-9]\+ ' "$TMP/h.out")" -eq 6
check "rls2-path: progress and data summary on stderr" grep -q 'basis kernels' "$TMP/h.err"
check "csv: header and 6 rows" test "$(wc -l <"$TMP/h.csv")" -eq 7
check "csv header names the columns" grep -qx 'lambda,objective,kernels,iterations,seconds,dof,train_accuracy,valid_accuracy,valid_accuracy_se,test_accuracy,chosen' "$TMP/h.csv"
check "csv: the last row is the model without -v" bash -c "tail -n 1 $TMP/h.csv | grep -q ',1\$'"
check "svg figure written" bash -c "head -c 200 $TMP/h.svg | grep -q '<svg' && tail -c 20 $TMP/h.svg | grep -q '</svg>'"
check "model: solver rls2 with 182 = 13 x 14 paper kernels to choose from" grep -qx 'solver rls2' "$TMP/h.model"
train_acc=$(tail -n 1 "$TMP/h.csv" | cut -d, -f7)
$P $H "$TMP/h.model" "$TMP/h.pred" >"$TMP/h.acc"
check "predict on the training data = the path's training accuracy ($train_acc)" \
    grep -q "^Accuracy = $(printf '%.6g' "$train_acc")% " "$TMP/h.acc"

# gzip and standard input
gzip -c $H >"$TMP/h.gz"
$R -q -L 1e-3:1e2:6 - "$TMP/stdin.model" <"$TMP/h.gz"
check "gzip on standard input gives the same model" cmp -s "$TMP/h.model" "$TMP/stdin.model"

$R -q -n 2 -L 1e-3:1e2:6 $H "$TMP/n2.model"
check "two threads give the same model" cmp -s "$TMP/h.model" "$TMP/n2.model"

# determinism, cross-validation, one-se
$R -q -L 1e-3:1e2:6 -v 3 --seed 5 -o "$TMP/v1.csv" $H "$TMP/v1.model"
$R -q -L 1e-3:1e2:6 -v 3 --seed 5 -o "$TMP/v2.csv" $H "$TMP/v2.model"
check "same seed, same model" cmp -s "$TMP/v1.model" "$TMP/v2.model"
check "cross-validation fills the validation columns" bash -c "awk -F, 'NR > 1 && \$8 == \"\" {bad=1} END {exit bad}' $TMP/v1.csv"
best=$(awk -F, 'NR > 1 && ($8 > b || NR == 2) {b = $8; r = NR} END {print r}' "$TMP/v1.csv")
check "-v: the model is the row with the best validation accuracy (line $best)" \
    bash -c "sed -n ${best}p $TMP/v1.csv | grep -q ',1\$'"
$R -q -L 1e-3:1e2:6 -v 3 --seed 5 --one-se -o "$TMP/se.csv" $H "$TMP/se.model"
se_row=$(awk -F, 'NR > 1 && $11 == 1 {print NR}' "$TMP/se.csv")
check "--one-se picks the same or a larger lambda (line $se_row <= $best)" test "$se_row" -le "$best"

# test file, transductive scaling, regression, linear RLS2 (Experiment 1 in small)
$G --seed 3 "$TMP/bs.train" "$TMP/bs.test" 2>/dev/null
$R -q -k linear --no-intercept --test "$TMP/bs.test" --transductive -L 1e-3:1:8 \
    -o "$TMP/bs.csv" "$TMP/bs.train" "$TMP/bs.model"
check "regression: RMSE columns" grep -q '^lambda,.*,test_rmse,chosen$' "$TMP/bs.csv"
check "binary strings: the test RMSE reaches the noise level (< 0.05)" \
    bash -c "awk -F, 'NR > 1 && \$10 < 0.05 {ok=1} END {exit !ok}' $TMP/bs.csv"
$R -q -k linear --no-intercept -L 0.01:0.01:1 "$TMP/bs.train" "$TMP/bs1.model"
check "linear RLS2 puts 99% of the kernel weight d on the first three bits" \
    bash -c "sed -n '/^basis\$/,/^intercept/p' $TMP/bs1.model | awk '/features=[123]\$/ {a += \$2} /features=/ {t += \$2} END {exit !(a > 0.99 * t)}'"

# a kernel-list file
printf '# two kernels\nrbf gamma=0.5 features=all\nlinear features=1-3\n' >"$TMP/list"
$R -q -k "$TMP/list" -L 0.1:10:3 $H "$TMP/list.model"
check "kernel-list file: 2 kernels to choose from" grep -Eq '^nr_basis [12]$' "$TMP/list.model"

# a target that is not a regular file is written in place, not renamed over
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
$R -q -L 1e-3:1e2:6 -o "$TMP/fifo" $H "$TMP/f.model"
wait
check "-o to a named pipe: the table comes through and the pipe stays a pipe" \
    bash -c "test -p $TMP/fifo && test \$(wc -l <$TMP/fifo.out) -eq 7"

# errors
expect_fail "missing training file" 2 'nope' $R /nonexistent/nope "$TMP/x.model"
expect_fail "unknown scaling" 1 'unknown scaling' $R -S median $H "$TMP/x.model"
expect_fail "bad -L" 1 'MIN:MAX:COUNT' $R -L 1:2 $H "$TMP/x.model"
expect_fail "-L with MIN > MAX" 1 '0 < MIN < MAX' $R -L 10:1:5 $H "$TMP/x.model"
expect_fail "--one-se needs -v" 1 'needs -v' $R --one-se $H "$TMP/x.model"
expect_fail "--transductive needs --test" 1 'needs --test' $R --transductive $H "$TMP/x.model"
printf 'rbf gamma=0.5 features=all\nrbf gamma=oops\n' >"$TMP/bad.list"
expect_fail "bad kernel-list line: FILE:LINE" 2 "bad.list:2" $R -k "$TMP/bad.list" $H "$TMP/x.model"
expect_fail "class scaling on regression data" 1 "needs class labels" $R -q -S class --task reg $H "$TMP/x.model"
awk '{ $1 = "1"; print }' $H >"$TMP/one"
expect_fail "one class only" 2 "one class" $R -q --task class "$TMP/one" "$TMP/x.model"
check "no model left behind by failures" test ! -e "$TMP/x.model"
