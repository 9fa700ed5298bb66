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
$R --kernels linear --no-intercept --test "$TMP/bs.test" --transductive -L 1e-6:1:12 \
    -o "$TMP/bs.csv" --selected "$TMP/bs.sel" "$TMP/bs.train" "$TMP/bs.model" >"$TMP/bs.out" \
    2>"$TMP/bs.err"
check "regression: RMSE columns" grep -q '^lambda,.*,test_rmse,chosen$' "$TMP/bs.csv"
check "binary strings: the test RMSE reaches the noise level (< 0.05)" \
    bash -c "awk -F, 'NR > 1 && \$10 < 0.05 {ok=1} END {exit !ok}' $TMP/bs.csv"
# without -v, with --test: the model is at the best test lambda (it was the last one)
best=$(awk -F, 'NR > 1 && (b == "" || $10 < b) { b = $10; l = $1 } END { print l }' "$TMP/bs.csv")
check "--test without -v: the chosen row is the best test RMSE (lambda $best)" \
    bash -c "awk -F, '\$11 == 1 { print \$1 }' $TMP/bs.csv | grep -qx -- '$best'"
check "--test without -v: the model's lambda is that lambda" \
    awk -v b="$best" '$1 == "lambda" { ok = ($2 - b) / b; ok = ok < 0 ? -ok : ok; exit !(ok < 1e-9) }' \
    "$TMP/bs.model"
check "... not the last lambda" bash -c "tail -n 1 $TMP/bs.csv | grep -q ',0\$'"
check "the summary says the lambda was chosen on --test and that its metric is not held out" \
    grep -q 'chosen lambda = .*the best on --test: its test metric is not held out' "$TMP/bs.out"
test_at=$(awk -F, '$11 == 1 { print $10 }' "$TMP/bs.csv")
$P "$TMP/bs.test" "$TMP/bs.model" "$TMP/bs.pred" >"$TMP/bs.mse"
check "predict on the test file: MSE = the chosen row's test RMSE^2 ($test_at)" \
    awk -v r="$test_at" '/^Mean squared error/ { e = $5 - r * r; e = e < 0 ? -e : e; exit !(e < 1e-5 * r * r) }' \
    "$TMP/bs.mse"
check "the table names the selected kernels: bits 1-3 on the model's row" \
    grep -Eq '<- model +linear features=[123], linear features=[123], linear features=[123]' \
    "$TMP/bs.out"
check "the table: at most 3 names, then '+N more' (N = kernels - 3)" \
    awk '$1 ~ /^[0-9.e+-]+$/ && $2 > 3 { m++; if ($(NF - 1) == "+" $2 - 3 && $NF == "more") n++ }
         END { exit !(m > 0 && n == m) }' "$TMP/bs.out"
check "--selected: one line per selected kernel of every lambda (the kernels column's sum)" \
    test "$(($(wc -l <"$TMP/bs.sel") - 1))" -eq "$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$TMP/bs.csv")"
check "--selected: header, ranks from 1, weights decreasing within a lambda, quoted kernels" \
    awk -F, 'NR == 1 { exit !($0 == "lambda,rank,weight,kernel") ? 1 : 0 }
             NR > 1 { if ($1 != l) { if ($2 != 1) bad = 1; l = $1; w = $3 }
                      else if ($3 > w || $2 != r + 1) bad = 1
                      r = $2; w = $3; if ($4 !~ /^"linear features=[0-9]+"$/) bad = 1 }
             END { exit bad }' "$TMP/bs.sel"
# --valid: the model at the best validation lambda; -k is --kernels with a warning
$G --seed 4 -l 80 "$TMP/bs.valid" 2>/dev/null
$R -q --kernels linear --no-intercept --valid "$TMP/bs.valid" --test "$TMP/bs.test" \
    -L 1e-5:1:12 -o "$TMP/bv.csv" "$TMP/bs.train" "$TMP/bv.model"
vbest=$(awk -F, 'NR > 1 && (b == "" || $8 < b) { b = $8; r = NR } END { print r }' "$TMP/bv.csv")
check "--valid: the valid column filled, no standard error" \
    awk -F, 'NR > 1 && ($8 == "" || $9 != "") { bad = 1 } END { exit bad }' "$TMP/bv.csv"
check "--valid: the chosen row is the best validation RMSE (line $vbest), not the best test" \
    bash -c "sed -n ${vbest}p $TMP/bv.csv | grep -q ',1\$'"
vlam=$(sed -n "${vbest}p" "$TMP/bv.csv" | cut -d, -f1)
check "--valid: the model's lambda is that lambda ($vlam)" \
    awk -v b="$vlam" '$1 == "lambda" { ok = ($2 - b) / b; ok = ok < 0 ? -ok : ok; exit !(ok < 1e-9) }' \
    "$TMP/bv.model"
$R -q -k linear --no-intercept --valid "$TMP/bs.valid" --test "$TMP/bs.test" \
    -L 1e-5:1:12 "$TMP/bs.train" "$TMP/bk.model" 2>"$TMP/bk.err"
check "-k (deprecated): the same model as --kernels, bit for bit" cmp -s "$TMP/bv.model" "$TMP/bk.model"
check "-k (deprecated): a warning naming --kernels" \
    grep -q 'warning: -k is deprecated, use --kernels (-k will be removed in the next release)' \
    "$TMP/bk.err"
expect_fail "--valid with -v: usage error" 1 'chosen one way' \
    $R -v 3 --valid "$TMP/bs.valid" "$TMP/bs.train" "$TMP/x.model"
$R -q --kernels linear --no-intercept -L 0.01:0.01:1 "$TMP/bs.train" "$TMP/bs1.model"
check "linear RLS2 puts 99% of the kernel weight d on the first three bits" \
    bash -c "sed -n '/^basis\$/,/^intercept/p' $TMP/bs1.model | awk '/features=[123]\$/ {a += \$2} /features=/ {t += \$2} END {exit !(a > 0.99 * t)}'"

# a kernel-list file
printf '# two kernels\nrbf gamma=0.5 features=all\nlinear features=1-3\n' >"$TMP/list"
$R -q --kernels "$TMP/list" -L 0.1:10:3 $H "$TMP/list.model"
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
expect_fail "bad kernel-list line: FILE:LINE" 2 "bad.list:2" $R --kernels "$TMP/bad.list" $H "$TMP/x.model"
expect_fail "class scaling on regression data" 1 "needs class labels" $R -q -S class --task reg $H "$TMP/x.model"
awk '{ $1 = "1"; print }' $H >"$TMP/one"
expect_fail "one class only" 2 "one class" $R -q --task class "$TMP/one" "$TMP/x.model"
check "no model left behind by failures" test ! -e "$TMP/x.model"

# ---- the EXAMPLES of the man page, as written, with kmtk-* on the PATH
MAN=$(cd "$(dirname "$0")/../../doc" && pwd)
mkdir -p "$TMP/xbin" "$TMP/ex"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$R" >"$TMP/xbin/kmtk-rls2-path"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$P" >"$TMP/xbin/kmtk-predict"
chmod +x "$TMP/xbin/"*
ln -s "$BIN/datasets" "$TMP/ex/datasets"
ln -s "$DATA" "$TMP/ex/data"
man_examples "$MAN/kmtk-rls2-path.1" >"$TMP/ex/ex.sh"
check "kmtk-rls2-path.1 has EXAMPLES" test "$(grep -c . "$TMP/ex/ex.sh")" -ge 6
(cd "$TMP/ex" && PATH="$TMP/xbin:$PATH" timeout 300 bash -e -o pipefail ex.sh) \
    >"$TMP/ex/out" 2>"$TMP/ex/err"
st=$?
check "every example of kmtk-rls2-path.1 runs (status $st: $(tail -n 2 "$TMP/ex/err" | tr '\n' ' '))" \
    test "$st" -eq 0
check "examples: -v 5 --one-se, the model's lambda is the chosen row of path.csv" \
    awk -F, -v m="$(awk '$1 == "lambda" { print $2 }' "$TMP/ex/heart.model")" \
    'FNR > 1 && $11 == 1 { d = ($1 - m) / m; d = d < 0 ? -d : d; ok = d < 1e-9 }
     END { exit !ok }' "$TMP/ex/path.csv"
check "examples: --valid, the model's lambda is the best validation row of bs.csv" \
    awk -F, -v m="$(awk '$1 == "lambda" { print $2 }' "$TMP/ex/bs.model")" \
    'FNR > 1 && (b == "" || $8 < b) { b = $8; l = $1 }
     END { d = (l - m) / m; d = d < 0 ? -d : d; exit !(d < 1e-9) }' "$TMP/ex/bs.csv"
check "examples: bits 1-3 carry the weight at the chosen lambda" \
    awk -F, -v l="$(awk -F, '$11 == 1 { print $1 }' "$TMP/ex/bs.csv")" \
    '$1 == l && $2 <= 3 && $4 !~ /features=[123]"/ { bad = 1 } END { exit bad }' "$TMP/ex/bs.kernels.csv"
check "examples: no deprecation warning" bash -c "! grep -q deprecated $TMP/ex/err"
