# logreg.sh - command-line tests of -s logreg and of probabilities (train -b 1, predict -b 1).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict H=$DATA/heart_scale

# logistic regression, linear and kernel
$T -s logreg -c 2 $H "$TMP/lr.model" >"$TMP/lr.out" 2>&1
check "train -s logreg writes a model with loss logreg" grep -qx 'loss logreg' "$TMP/lr.model"
check "train -s logreg prints its objective and a gap <= 1e-5" bash -c \
    "grep -Eq '^objective = [0-9.]+' $TMP/lr.out && awk '/^gap = / { g = \$3 } END { exit !(g <= 1e-5) }' $TMP/lr.out"
$P -b 1 $H "$TMP/lr.model" "$TMP/lr.prob" >"$TMP/lr.pred"
check "predict -b 1: a header 'labels -1 1' then one line per row" bash -c \
    "head -n 1 $TMP/lr.prob | grep -qx 'labels -1 1' && test \$(wc -l <$TMP/lr.prob) -eq 271"
check "predict -b 1: label, then probabilities in [0, 1] summing to 1, the label the likeliest" \
    awk 'NR > 1 { if (NF != 3 || $2 < 0 || $3 < 0 || ($2 + $3 - 1)^2 > 1e-24 ||
                      ($1 == 1) != ($3 > $2)) bad++ } END { exit bad + 0 }' "$TMP/lr.prob"
$P -d $H "$TMP/lr.model" "$TMP/lr.dec" >/dev/null
check "logreg probabilities are the sigmoid of the decision values" bash -c \
    "tail -n +2 $TMP/lr.prob | paste -d' ' - $TMP/lr.dec |
     awk '{ p = 1 / (1 + exp(-\$4)); if ((\$3 - p)^2 > 1e-24) bad++ } END { exit bad + 0 }'"
check "predict -b 1 prints the accuracy of the likeliest labels" \
    grep -Eq '^Accuracy = (8[0-9]|9[0-9])' "$TMP/lr.pred"
$T -q -s logreg -t rbf -g 0.1 $H "$TMP/lrk.model"
$P -q -b 1 $H "$TMP/lrk.model" "$TMP/lrk.prob"
check "kernel logreg (-t rbf): probabilities" bash -c \
    "head -n 1 $TMP/lrk.prob | grep -qx 'labels -1 1' && test \$(wc -l <$TMP/lrk.prob) -eq 271"
check "train -s logreg -v 5 reports a CV accuracy" bash -c \
    "$T -s logreg -v 5 $H | grep -Eq '^Cross Validation Accuracy = (7|8|9)[0-9]'"

# three classes: one-versus-all probabilities, normalised
awk '{ if (NR % 3 == 0) $1 = 2; print }' $H >"$TMP/three"
$T -q -s logreg "$TMP/three" "$TMP/three.model"
$P -q -b 1 "$TMP/three" "$TMP/three.model" "$TMP/three.prob"
check "3 classes: header 'labels -1 1 2', rows of 4 fields summing to 1" bash -c \
    "head -n 1 $TMP/three.prob | grep -qx 'labels -1 1 2' &&
     awk 'NR > 1 { if (NF != 4 || (\$2 + \$3 + \$4 - 1)^2 > 1e-24) bad++ } END { exit bad + 0 }' $TMP/three.prob"

# SVMs: Platt scaling with train -b 1
$T -q -s l1svm $H "$TMP/svm.model"
expect_fail "predict -b 1 on an SVM trained without -b 1: exit 1, says how" 1 \
    "has no probabilities \\(train -s logreg, or a classifier with train -b 1\\)" \
    $P -b 1 $H "$TMP/svm.model" "$TMP/x"
check "the failed predict leaves no output file" test ! -e "$TMP/x"
$T -s l1svm -b 1 $H "$TMP/svmb.model" >"$TMP/svmb.out"
check "train -b 1 writes probA and probB and says so" bash -c \
    "grep -Eq '^probA -[0-9.]+' $TMP/svmb.model && grep -q '^probB ' $TMP/svmb.model &&
     grep -q \"^probability: Platt's sigmoid on 5-fold\" $TMP/svmb.out"
check "train -b 1: the same weights as without it" bash -c \
    "sed -n '/^w\$/,\$p' $TMP/svm.model | cmp -s - <(sed -n '/^w\$/,\$p' $TMP/svmb.model)"
$P -b 1 $H "$TMP/svmb.model" "$TMP/svmb.prob" >/dev/null
check "predict -b 1 with Platt's A, B: P(1) = 1/(1 + exp(A f + B))" bash -c \
    "$P -d $H $TMP/svmb.model - 2>/dev/null | paste -d' ' <(tail -n +2 $TMP/svmb.prob) - |
     awk -v A=\$(awk '/^probA/ { print \$2 }' $TMP/svmb.model) -v B=\$(awk '/^probB/ { print \$2 }' $TMP/svmb.model) \
       '{ p = 1 / (1 + exp(A * \$4 + B)); if ((\$3 - p)^2 > 1e-24) bad++ } END { exit bad + 0 }'"
$T -q -s l2svm -b 1 -t rbf "$TMP/three" "$TMP/threek.model"
check "kernel one-versus-all -b 1: three probA values" bash -c \
    "awk '/^probA/ { exit !(NF == 4) }' $TMP/threek.model"
printf '1 1:1\n1 1:2\n-1 1:-1\n-1 1:-2\n-1 1:-1.5\n2 1:0.1\n-1 1:-3\n1 1:3\n' >"$TMP/tiny"
check "train -b 1: a class of one row (absent from a fold) with its -w still fits A, B" bash -c \
    "$T -q -s l1svm -b 1 -w2 3 $TMP/tiny $TMP/tiny.model && awk '/^probA/ { exit !(NF == 4) }' $TMP/tiny.model &&
     $P -q -b 1 $TMP/tiny $TMP/tiny.model - | awk 'NR > 1 && NF == 4 { n++ } END { exit n != 8 }'"
expect_fail "-b with -d: exit 1" 1 "choose one" $P -b 1 -d $H "$TMP/svmb.model" "$TMP/x"
expect_fail "-b 2: exit 1" 1 "-b" $P -b 2 $H "$TMP/svmb.model" "$TMP/x"
expect_fail "train -s rls -b 1: exit 1" 1 "-b \\(probability\\) does not apply to -s rls" \
    $T -s rls -b 1 $H "$TMP/x"

# the objective matches LIBLINEAR's -s 0 (primal) and -s 7 (dual) at the same C
if command -v liblinear-train >/dev/null && [ -x "$BIN/bench/liblinear_objective" ]; then
    for s in 0 7; do
        liblinear-train -q -s $s -c 2 -e 1e-6 $H "$TMP/ll$s.model"
        lf=$("$BIN/bench/liblinear_objective" -s logreg -c 2 "$TMP/ll$s.model" $H | awk '{ print $3 }')
        kf=$(awk '/^objective = / { print $3 }' "$TMP/lr.out")
        check "objective $kf within 1e-5 of liblinear -s $s -e 1e-6's $lf" \
            awk -v k="$kf" -v l="$lf" 'BEGIN { d = (k - l) / l; exit !(l > 0 && d * d < 1e-10) }'
    done
else
    ok "(skipped: liblinear-train or bench/liblinear_objective not found)"
fi
