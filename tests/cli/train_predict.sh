# train_predict.sh - command-line tests of train and predict (run by tests/run.sh).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict H=$DATA/heart_scale

# usage and option errors: exit 1 with a one-line reason
check "train -h prints usage, exits 0" bash -c "$T -h | grep -q '^Usage: train'"
check "predict -h prints usage, exits 0" bash -c "$P -h | grep -q '^Usage: predict'"
expect_fail "train without arguments" 1 "no data file" $T
expect_fail "unknown option" 1 "unknown option '-z'" $T -z $H
expect_fail "bad -c value" 1 "-c: expected a number" $T -c abc $H
expect_fail "negative C" 1 "-c: C must be > 0" $T -c -1 $H
expect_fail "unknown loss" 1 "unknown method 'foo' \\(l1svm, l2svm" $T -s foo $H
expect_fail "missing option value" 1 "needs a value" $T $H -c
expect_fail "bad fold count" 1 "-v: expected an integer" $T -v 1 $H
expect_fail "unknown rule" 1 "--rule: unknown value 'zigzag'" $T --rule zigzag $H
expect_fail "stdin needs a model name" 1 "model file name" $T -
expect_fail "predict with two arguments" 1 "expected test_file" $P $H x

# training and prediction on heart_scale
$T $H "$TMP/h.model" >"$TMP/train.out" 2>&1
check "train writes a model and prints the objective" \
    grep -Eq '^objective = [0-9.]+' "$TMP/train.out"
check "train prints macro-iterations, nonzero coefficients and time" bash -c \
    "grep -q '^macro-iterations = ' $TMP/train.out && grep -q '^nonzero coefficients = ' $TMP/train.out && grep -q '^time = ' $TMP/train.out"
check "model file starts with format and version" grep -qx 'kmtk-model 1' "$TMP/h.model"
check "no temporary file left beside the model" bash -c "! ls $TMP | grep -q tmp"
$P $H "$TMP/h.model" "$TMP/h.out" >"$TMP/pred.out"
check "predict prints Accuracy = x% (a/b) above 80%" \
    grep -Eq '^Accuracy = (8[0-9]|9[0-9])(\.[0-9]+)?% \([0-9]+/270\)$' "$TMP/pred.out"
check "one prediction per test line" test "$(wc -l <"$TMP/h.out")" -eq 270
check "predictions are labels" bash -c "sort -u $TMP/h.out | tr '\n' ' ' | grep -qx -- '-1 1 '"
$P -d $H "$TMP/h.model" "$TMP/h.dec" >/dev/null
check "-d writes decision values whose signs give the labels" bash -c \
    "paste -d' ' $TMP/h.dec $TMP/h.out | awk '{ if ((\$1 > 0) != (\$2 > 0)) bad++ } END { exit bad }'"
$P -q $H "$TMP/h.model" - >"$TMP/so" 2>"$TMP/se"
check "output '-' goes to stdout, -q silences metrics" bash -c \
    "test \$(wc -l <$TMP/so) -eq 270 && ! test -s $TMP/se"

# same data through gzip, stdin and a gzip pipe: the same model, byte for byte
gzip -c $H >"$TMP/h.gz"
$T -q "$TMP/h.gz" "$TMP/gz.model"
cat $H | $T -q - "$TMP/stdin.model"
zcat "$TMP/h.gz" | $T -q - "$TMP/zcat.model"
check "gzip input gives the same model" cmp -s "$TMP/h.model" "$TMP/gz.model"
check "stdin gives the same model" cmp -s "$TMP/h.model" "$TMP/stdin.model"
check "zcat pipe gives the same model" cmp -s "$TMP/h.model" "$TMP/zcat.model"
gzip -dc "$TMP/h.gz" | $P - "$TMP/h.model" "$TMP/h2.out" >/dev/null
check "predict reads stdin" cmp -s "$TMP/h.out" "$TMP/h2.out"

# determinism and seeds
$T -q --seed 7 $H "$TMP/s7a.model"; $T -q --seed 7 $H "$TMP/s7b.model"
check "same seed, same model" cmp -s "$TMP/s7a.model" "$TMP/s7b.model"
for r in cyclic aitken; do
    check "rule $r trains" $T -q --rule $r $H "$TMP/$r.model"
done

# default model name is the data file's base name + .model, in the current directory
(cd "$TMP" && cp $H hs && $T -q hs)
check "default model name" test -f "$TMP/hs.model"

# cross-validation prints accuracy and writes no model
(cd "$TMP" && $T -v 5 hs >cv.out)
check "-v 5 prints Cross Validation Accuracy" grep -Eq '^Cross Validation Accuracy = [0-9.]+%$' "$TMP/cv.out"
$T -s svr -v 3 $H >"$TMP/cvr.out"
check "-v with svr prints MSE and squared correlation" bash -c \
    "grep -q '^Cross Validation Mean squared error = ' $TMP/cvr.out && grep -q '^Cross Validation Squared correlation coefficient = ' $TMP/cvr.out"

# regression output
for s in rls rla svr; do
    $T -q -s $s $H "$TMP/$s.model"
    $P $H "$TMP/$s.model" "$TMP/$s.out" >"$TMP/$s.pred"
    check "$s: predict prints MSE and squared correlation" bash -c \
        "grep -q '^Mean squared error = ' $TMP/$s.pred && grep -q '^Squared correlation coefficient = ' $TMP/$s.pred"
done

# three classes: one-versus-all, class weights, bias
awk '{ $1 = ($2 ~ /^1:/ && substr($2, 3) + 0 > 0.2) ? 3 : ($1 > 0 ? 2 : 1); print }' $H >"$TMP/three"
$T -B 1 -w3 2 "$TMP/three" "$TMP/three.model" >"$TMP/three.train"
check "one-versus-all model has three weight vectors" grep -qx 'nr_w 3' "$TMP/three.model"
check "class weight recorded" grep -qx 'label_weights 1 1 2' "$TMP/three.model"
check "per-class lines printed" test "$(grep -c '^class ' "$TMP/three.train")" -eq 3
$P -d "$TMP/three" "$TMP/three.model" "$TMP/three.dec" >"$TMP/three.pred"
check "-d writes three decision values per line" bash -c "awk 'NF != 3 { exit 1 }' $TMP/three.dec"
check "three-class accuracy line" grep -Eq '^Accuracy = [0-9.]+% \([0-9]+/270\)$' "$TMP/three.pred"
expect_fail "-w for a label not in the data" 1 "no class with label 9" $T -w9 2 $H "$TMP/x.model"
expect_fail "one class only" 2 "only one class" $T <(awk '{ $1 = 1; print }' $H) "$TMP/x.model"

# bad input: file:line:col, exit 2, no model written
printf '1 1:0.5 2:1\n-1 3:x\n' >"$TMP/bad"
expect_fail "malformed data gives FILE:LINE:COL" 2 "bad:2:[0-9]+: " $T "$TMP/bad" "$TMP/bad.model"
check "no model written on bad input" test ! -e "$TMP/bad.model"
expect_fail "missing data file" 2 "nofile: No such file" $T "$TMP/nofile" "$TMP/x.model"
: >"$TMP/empty"
expect_fail "empty data file" 2 "no data" $T "$TMP/empty" "$TMP/x.model"
head -c 1000 "$TMP/h.gz" >"$TMP/trunc.gz"
expect_fail "truncated gzip" 2 "trunc.gz.*(truncated|corrupt)" $T "$TMP/trunc.gz" "$TMP/x.model"

# damaged models
sed 's/^kmtk-model 1$/kmtk-model 9/' "$TMP/h.model" >"$TMP/v9.model"
expect_fail "unknown model version" 2 "version 9 is not supported" $P $H "$TMP/v9.model" "$TMP/o"
head -n 15 "$TMP/h.model" >"$TMP/cut.model"
expect_fail "truncated model" 2 "truncated" $P $H "$TMP/cut.model" "$TMP/o"
expect_fail "not a model" 2 "not a kmtk model" $P $H $H "$TMP/o"
sed '14s/.*/0.1 zz/' "$TMP/h.model" >"$TMP/garbled.model"
expect_fail "garbled weight line" 2 "garbled.model:14: " $P $H "$TMP/garbled.model" "$TMP/o"

# features beyond the model's count are ignored, also with a bias feature
$T -q -B 1 $H "$TMP/b.model"
$P $H "$TMP/b.model" "$TMP/b.out" >/dev/null
awk '{ print $0, "20:5" }' $H >"$TMP/wide"
$P "$TMP/wide" "$TMP/b.model" "$TMP/wide.out" >/dev/null
check "unseen feature 20 changes no prediction of a -B model" cmp -s "$TMP/b.out" "$TMP/wide.out"

# stopping rules: the gap line, --stop, -e, and the cap named per class and per fold
check "train prints the relative duality gap next to the objective" bash -c \
    "grep -A1 '^objective = ' $TMP/train.out | grep -Eq '^gap = [0-9.e+-]+ \(relative duality gap'"
check "one-versus-all prints each class's gap and the largest" bash -c \
    "test \$(grep -c '^class .*, gap = [0-9.e+-]*, ' $TMP/three.train) -eq 3 && grep -q '^gap = .*the largest of all classes' $TMP/three.train"
expect_fail "unknown stopping rule" 1 "--stop: unknown value 'foo'" $T --stop foo $H
expect_fail "-e must be positive" 1 "-e: delta must be > 0" $T -e 0 $H
$T --stop step $H "$TMP/step.model" >"$TMP/step.train"
check "--stop step names its tolerance" grep -Eq '^macro-iterations = [0-9]+ \(stop: max\|h\| < ' "$TMP/step.train"
$T --max-iter 2 -e 1e-12 "$TMP/three" "$TMP/cap.model" >"$TMP/cap.out" 2>"$TMP/cap.err"
check "one-versus-all names every class stopped at the cap" bash -c \
    "for c in 1 2 3; do grep -q \"warning: class \$c stopped at the cap of 2 macro-iterations (gap [0-9.e+-]* > 1e-12); raise --max-iter or -e\" $TMP/cap.err || exit 1; done"
$T -v 3 --max-iter 2 -e 1e-12 "$TMP/three" >"$TMP/cvcap.out" 2>"$TMP/cvcap.err"
check "-v names the fold and class stopped at the cap" \
    grep -q 'warning: fold 2: class 3 stopped at the cap of 2 macro-iterations (gap ' "$TMP/cvcap.err"
$T -s svr -v 3 --max-iter 2 -e 1e-12 $H >/dev/null 2>"$TMP/cvsvr.err"
check "-v names the fold stopped at the cap (one problem per fold)" \
    grep -q 'warning: fold 3: stopped at the cap of 2 macro-iterations' "$TMP/cvsvr.err"
$T -q -v 3 $H 2>"$TMP/cvq.err" >/dev/null
check "-v at the default converges: no warning" test ! -s "$TMP/cvq.err"
for r in random cyclic aitken auto; do
    check "--rule $r (linear) trains" $T -q --rule $r $H "$TMP/rule-$r.model"
done

# threads: -n 2 gives the bits of -n 1 (one-versus-all classes, cross-validation folds)
$T -q -n 1 -B 1 -w3 2 "$TMP/three" "$TMP/n1.model"
$T -q -n 2 -B 1 -w3 2 "$TMP/three" "$TMP/n2.model"
$T -q -n 3 -B 1 -w3 2 "$TMP/three" "$TMP/n3.model"
check "one-versus-all: -n 2 and -n 3 write the model of -n 1, byte for byte" bash -c \
    "cmp -s $TMP/n1.model $TMP/n2.model && cmp -s $TMP/n1.model $TMP/n3.model"
$T -n 1 -v 5 "$TMP/three" >"$TMP/cv1.out"
$T -n 2 -v 5 "$TMP/three" >"$TMP/cv2.out"
check "-v 5: -n 2 prints the accuracy of -n 1" cmp -s "$TMP/cv1.out" "$TMP/cv2.out"
$T -s svr -n 1 -v 4 $H >"$TMP/cvr1.out"
$T -s svr -n 2 -v 4 $H >"$TMP/cvr2.out"
check "-v 4 svr: -n 2 prints the MSE of -n 1" cmp -s "$TMP/cvr1.out" "$TMP/cvr2.out"
expect_fail "-n 0 is refused" 1 "-n: " $T -n 0 $H

# predict on threads: blocks of rows in parallel, the output of -n 1 (5400 rows: 6 blocks)
for i in $(seq 20); do cat "$TMP/three"; done >"$TMP/three20"
$P -n 1 "$TMP/three20" "$TMP/n1.model" "$TMP/p1.out" >"$TMP/p1.acc"
$P -n 2 "$TMP/three20" "$TMP/n1.model" "$TMP/p2.out" >"$TMP/p2.acc"
$P -n 3 -d "$TMP/three20" "$TMP/n1.model" "$TMP/p3.dec" >/dev/null
$P -n 1 -d "$TMP/three20" "$TMP/n1.model" "$TMP/p1.dec" >/dev/null
check "predict -n 2: the labels and accuracy of -n 1" bash -c \
    "cmp -s $TMP/p1.out $TMP/p2.out && cmp -s $TMP/p1.acc $TMP/p2.acc && test \$(wc -l <$TMP/p2.out) -eq 5400"
check "predict -n 3 -d: the decision values of -n 1" cmp -s "$TMP/p1.dec" "$TMP/p3.dec"
cat "$TMP/three20" "$TMP/three20" >"$TMP/three40"   # 10800 rows: -n 2 reads a second batch while predicting the first
$P -n 1 -d "$TMP/three40" "$TMP/n1.model" "$TMP/q1.dec" >"$TMP/q1.acc"
$P -n 2 -d "$TMP/three40" "$TMP/n1.model" "$TMP/q2.dec" >"$TMP/q2.acc"
check "predict -n 2 over several batches: the output of -n 1" bash -c \
    "cmp -s $TMP/q1.dec $TMP/q2.dec && cmp -s $TMP/q1.acc $TMP/q2.acc && test \$(wc -l <$TMP/q2.dec) -eq 10800"
printf '1 1:0.5\n-1 2:x\n' >"$TMP/badrow"
expect_fail "predict -n 2: a malformed row gives FILE:LINE:COL, exit 2" 2 "badrow:2:[0-9]+: " \
    $P -n 2 "$TMP/badrow" "$TMP/n1.model" "$TMP/o"
$T -q -s svr $H "$TMP/svr.model"
for i in $(seq 10); do cat $H; done >"$TMP/h10"
$P -n 1 "$TMP/h10" "$TMP/svr.model" "$TMP/r1.out" >"$TMP/r1.acc"
$P -n 2 "$TMP/h10" "$TMP/svr.model" "$TMP/r2.out" >"$TMP/r2.acc"
check "predict -n 2, regression: the values and MSE of -n 1" bash -c \
    "cmp -s $TMP/r1.out $TMP/r2.out && cmp -s $TMP/r1.acc $TMP/r2.acc"
$T -q -t rbf "$TMP/three" "$TMP/rbf3.model"
$P -n 1 -d "$TMP/three20" "$TMP/rbf3.model" "$TMP/k1.dec" >/dev/null
$P -n 2 -d "$TMP/three20" "$TMP/rbf3.model" "$TMP/k2.dec" >/dev/null
# (the kernel blocks' dgemm tiles do not depend on the thread count)
check "predict -n 2, kernel model: the decision values of -n 1, byte for byte" \
    cmp -s "$TMP/k1.dec" "$TMP/k2.dec"

# the README's Examples block runs as written, line by line in order, in a directory that
# looks like the top of the tree (the programs, data/, datasets/); every line must succeed
README=$(dirname "$0")/../../README.md
R=$TMP/readme
mkdir -p "$R/data" "$R/datasets"
for p in train predict rls2-path mtl-server mtl-client; do ln -sf "$BIN/$p" "$R/$p"; done
for g in "$BIN"/datasets/*; do [ -x "$g" ] && ln -sf "$g" "$R/datasets/"; done
ln -sf $H "$R/data/heart_scale"
readme_block "$README" '^## Examples' >"$R/cmds"
check "the README's Examples block has at least 25 commands" test "$(wc -l <"$R/cmds")" -ge 25
run_lines "$R/cmds" "$R" "README example"
check "README examples: the rls2-path example finds bits 1-3" grep -q 'linear features=1' "$R/bs.model"

# an empty row (k_ii = 0, a zero kernel row): the duality gap still closes, linear and kernel
printf '1 1:1\n-1 1:-2\n1\n-1 2:1\n' >"$TMP/empty.svm"
for opt in "" "-t linear" "-t linear --rule random" "-s svr" "-s rls -t poly"; do
    $T $opt "$TMP/empty.svm" "$TMP/empty.model" >"$TMP/empty.out" 2>&1
    check "an empty row, train $opt: converged with a gap <= 1e-5" bash -c \
        "grep -q '^gap = ' $TMP/empty.out && ! grep -q warning $TMP/empty.out && awk '/^gap = / { exit !(\$3 <= 1e-5) }' $TMP/empty.out"
done
# feature values that overflow the kernel: an input error, not a model of NaN
printf '1 1:1e200\n-1 1:2\n1 3:1\n' >"$TMP/huge.svm"
expect_fail "a 1e200 feature under the RBF kernel: exit 2 naming the row" 2 "row 1 is not finite" \
    $T -t rbf "$TMP/huge.svm" "$TMP/huge.model"
expect_fail "a 1e200 feature, linear solver: exit 2, the objective is not finite" 2 \
    "objective is not finite" $T "$TMP/huge.svm" "$TMP/huge.model"

# ---- the method table: help, options a method does not take, deprecated spellings
$T -h >"$TMP/help.out"
check "train -h lists every method of the table" bash -c \
    "for m in l1svm l2svm rls rla svr okl mtl; do grep -Eq \"^ +\$m  \" $TMP/help.out || exit 1; done"
$T -s okl -h >"$TMP/okl.help"
check "train -s okl -h: its options with defaults, not the others'" bash -c \
    "grep -q -- '--rank p' $TMP/okl.help && grep -q -- '-e delta .*(default 1e-6)' $TMP/okl.help && ! grep -q -- '--no-shrinking' $TMP/okl.help"
expect_fail "-p with l1svm: refused, naming the method" 1 "-p \\(epsilon\\) does not apply to -s l1svm" $T -s l1svm -p 0.1 $H
expect_fail "-g without -t: refused" 1 "-g needs a kernel \\(-t\\)" $T -g 0.5 $H
expect_fail "-w with a regression method: refused" 1 "-w \\(weight\\) does not apply to -s rls" $T -s rls -w1 2 $H
expect_fail "a -c that swallows the data file's name says so" 1 "-c: expected a number, got '.*heart_scale'" $T -c $H
$T -q -t rbf -a fixedpoint --fp-step norm2 --max-iter 50 $H "$TMP/fp1.model" 2>/dev/null
$T -q -t rbf -a fixedpoint --alpha norm2 --max-iter 50 $H "$TMP/fp2.model" 2>"$TMP/fp2.err"
check "--alpha norm2 (old spelling of --fp-step): a deprecation note, the same model" \
    bash -c "grep -q 'deprecated: use --fp-step norm2' $TMP/fp2.err && cmp -s $TMP/fp1.model $TMP/fp2.model"

# the EXAMPLES of kmtk-train(1), then kmtk-predict(1), as written, with kmtk-* on the PATH
MAN=$(cd "$(dirname "$0")/../../doc" && pwd)
mkdir -p "$TMP/mx/bin" "$TMP/mx/run"
for p in train predict; do printf '#!/bin/sh\nexec "%s" "$@"\n' "$BIN/$p" >"$TMP/mx/bin/kmtk-$p"; done
chmod +x "$TMP/mx/bin/"*
ln -s "$BIN/datasets" "$TMP/mx/run/datasets"
ln -s "$DATA" "$TMP/mx/run/data"
for page in train predict; do
    man_examples "$MAN/kmtk-$page.1" >"$TMP/mx/run/$page.sh"
    check "kmtk-$page.1 has EXAMPLES" test "$(grep -c . "$TMP/mx/run/$page.sh")" -ge 4
    (cd "$TMP/mx/run" && PATH="$TMP/mx/bin:$PATH" timeout 300 bash -e "$page.sh") \
        >"$TMP/mx/$page.out" 2>"$TMP/mx/$page.err"
    st=$?
    check "every example of kmtk-$page.1 runs (status $st: $(tail -n 2 "$TMP/mx/$page.err" | tr '\n' ' '))" \
        test "$st" -eq 0
done
check "kmtk-predict.1 examples: heart_scale accuracy printed" grep -q '^Accuracy = ' "$TMP/mx/predict.out"
