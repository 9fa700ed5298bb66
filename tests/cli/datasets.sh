# datasets.sh - command-line tests of the generators gen_binary_strings and gen_microarray
# and of standardize (run by tests/run.sh).
. "$(dirname "$0")/lib.bash"
D=$BIN/datasets
B=$D/gen_binary_strings M=$D/gen_microarray S=$D/standardize
sizes() {  # sizes FILE...: the number of rows of each label, in label order
    cut -d' ' -f1 "$@" | sort -n | uniq -c | awk '{ printf "%s ", $1 }'
}

# ---- gen_binary_strings: thesis section 4.5.1, Experiment 1
check "gen_binary_strings -h prints usage" bash -c "$B -h | grep -q '^Usage: gen_binary_strings'"
$B >"$TMP/bs"
check "default: 250 rows" test "$(wc -l <"$TMP/bs")" -eq 250
check "features are bits: values 1, indices in 1..100, increasing" awk '
    { last = 0
      for (i = 2; i <= NF; i++) { split($i, a, ":")
          if (a[2] != "1" || a[1] < 1 || a[1] > 100 || a[1] <= last) exit 1
          last = a[1] } }' "$TMP/bs"
check "label = x1 + x2 + x3 within 5 sigma (sigma 0.01)" awk '
    { s = 0
      for (i = 2; i <= NF; i++) { split($i, a, ":"); if (a[1] <= 3) s++ }
      d = $1 - s; if (d < 0) d = -d; if (d > 0.05) exit 1 }' "$TMP/bs"
check "about half the bits are 1 (p = 0.5)" awk '
    { n += NF - 1 } END { exit !(n > 0.45 * 25000 && n < 0.55 * 25000) }' "$TMP/bs"
$B "$TMP/bs2"
check "same seed, same bytes (stdout and file)" cmp -s "$TMP/bs" "$TMP/bs2"
$B --seed 2 "$TMP/bs3"
check "another seed, other bytes" bash -c "! cmp -s $TMP/bs $TMP/bs3"
$B "$TMP/bs.train" "$TMP/bs.test"
check "two outputs: 150 training and 100 test rows" bash -c \
    "test \$(wc -l <$TMP/bs.train) -eq 150 && test \$(wc -l <$TMP/bs.test) -eq 100"
check "the split cuts the same rows" bash -c "cat $TMP/bs.train $TMP/bs.test | cmp -s - $TMP/bs"
$B --train 20 -l 30 -n 10 --sigma 0 "$TMP/small.train" - >"$TMP/small.test"
check "--train 20 -l 30: 20 + 10 rows, test on stdout" bash -c \
    "test \$(wc -l <$TMP/small.train) -eq 20 && test \$(wc -l <$TMP/small.test) -eq 10"
check "--sigma 0: labels are exactly x1 + x2 + x3" awk '
    { s = 0
      for (i = 2; i <= NF; i++) { split($i, a, ":"); if (a[1] <= 3) s++ }
      if ($1 != s || a[1] > 10) exit 1 }' "$TMP/small.train" "$TMP/small.test"
check "kmtk train reads the output" $BIN/train -q -s rls "$TMP/bs.train" "$TMP/bs.model"
expect_fail "bad -p" 1 "-p: expected a probability" $B -p 1.5
expect_fail "negative --sigma" 1 "--sigma: expected a number >= 0" $B --sigma -1
expect_fail "bad -l" 1 "-l: expected an integer" $B -l 0
expect_fail "-n below 3" 1 "-n: expected an integer" $B -n 2
expect_fail "--train with one output" 1 "--train needs two output files" $B --train 10 x
expect_fail "--train leaves no test rows" 1 "leaves no test rows" $B -l 100 "$TMP/a" "$TMP/b"
expect_fail "three outputs" 1 "unexpected argument" $B a b c
expect_fail "unknown option" 1 "unknown option '--foo'" $B --foo
expect_fail "missing value" 1 "needs a value" $B --seed
expect_fail "unwritable output" 2 "No such file or directory" $B "$TMP/no/such/dir"

# ---- gen_microarray: the 14 Cancers stand-in (thesis Table 4.5)
check "gen_microarray -h prints usage" bash -c "$M -h | grep -q '^Usage: gen_microarray'"
$M "$TMP/ma.train" "$TMP/ma.test"
check "default: 144 training and 54 test rows" bash -c \
    "test \$(wc -l <$TMP/ma.train) -eq 144 && test \$(wc -l <$TMP/ma.test) -eq 54"
check "dense rows of 16,063 positive genes" awk '
    NF != 16064 || $NF !~ /^16063:/ { exit 1 }
    { for (i = 2; i <= NF; i++) if (substr($i, index($i, ":") + 1) <= 0) exit 1 }' \
    "$TMP/ma.train" "$TMP/ma.test"
check "training class sizes of the 14 Cancers split" \
    test "$(sizes "$TMP/ma.train")" = '8 8 8 8 16 8 8 8 24 8 8 8 8 16 '
check "test class sizes of the 14 Cancers split" \
    test "$(sizes "$TMP/ma.test")" = '4 6 4 4 6 3 2 2 6 3 3 4 3 4 '
small="-n 300 -l 30 -t 12 -k 3 --informative 10"
$M $small "$TMP/m1.train" "$TMP/m1.test"
$M $small "$TMP/m2.train" "$TMP/m2.test"
check "same seed, same bytes" bash -c \
    "cmp -s $TMP/m1.train $TMP/m2.train && cmp -s $TMP/m1.test $TMP/m2.test"
$M $small --seed 2 "$TMP/m3.train" "$TMP/m3.test"
check "another seed, other bytes" bash -c "! cmp -s $TMP/m1.train $TMP/m3.train"
check "-k 3: even classes 10/10/10 and 4/4/4" bash -c \
    "test '$(sizes "$TMP/m1.train")' = '10 10 10 ' && test '$(sizes "$TMP/m1.test")' = '4 4 4 '"
$M -n 300 -l 30 -t 5 -k 3 --informative 10 "$TMP/m4.train" - >"$TMP/m4.test"
check "-t does not change the training rows; test to stdout" bash -c \
    "cmp -s $TMP/m1.train $TMP/m4.train && test \$(wc -l <$TMP/m4.test) -eq 5"
expect_fail "one output" 1 "expected two output files" $M "$TMP/x"
expect_fail "both outputs on stdout" 1 "cannot both be standard output" $M - -
expect_fail "markers exceed genes" 1 "exceed -n 100 genes" $M -n 100 "$TMP/x" "$TMP/y"
expect_fail "a class without training rows" 1 "without training rows" $M -k 5 -l 4 -n 300 "$TMP/x" "$TMP/y"
expect_fail "bad -k" 1 "-k: expected an integer" $M -k 1 "$TMP/x" "$TMP/y"
expect_fail "bad --informative" 1 "--informative: expected an integer" $M --informative x "$TMP/x" "$TMP/y"

# ---- standardize
check "standardize -h prints usage" bash -c "$S -h | grep -q '^Usage: standardize'"
printf '1.5 1:1 2:4 4:2\n-2 2:5 4:2\n0.1 1:3 2:1 4:2 5:7\n2 1:-1 2:0.5 4:2 5:1\n' >"$TMP/st"
printf '7 1:2 6:1\n' >"$TMP/st2"
$S "$TMP/st" "$TMP/st.out" "$TMP/st2" "$TMP/st2.out" 2>"$TMP/st.err"
check "features 1, 2, 5: mean 0 and sample sd 1" awk '
    { for (i = 2; i <= NF; i++) { split($i, a, ":"); s[a[1]] += a[2]; q[a[1]] += a[2] * a[2] } }
    END { for (j = 1; j <= 5; j += (j == 2 ? 3 : 1)) {
              m = s[j] / NR; sd = sqrt((q[j] - NR * m * m) / (NR - 1))
              if (m * m > 1e-20 || (sd - 1) ^ 2 > 1e-20) exit 1 } }' "$TMP/st.out"
check "labels unchanged" bash -c "test \"\$(cut -d' ' -f1 $TMP/st.out | tr '\n' ' ')\" = '1.5 -2 0.1 2 '"
check "constant feature 4 and absent feature 3 are reported" \
    grep -q 'warning: .*st: 2 features with standard deviation 0, only centred: 3 4' "$TMP/st.err"
check "constant feature 4 is centred to 0 (omitted)" bash -c "! grep -q ' 4:' $TMP/st.out"
# the test row with the reference's statistics: feature 1 mean 0.75, sd sqrt(35/12)
check "a second input uses the first input's statistics" awk '
    { split($2, a, ":"); z = (2 - 0.75) / sqrt(35 / 12)
      exit !(a[1] == 1 && (a[2] - z) ^ 2 < 1e-24 && $0 ~ / 4:-2 / && $NF == "6:1") }' "$TMP/st2.out"
check "index beyond the reference copied, with a warning" \
    grep -q 'st2: 1 value of features above 5 .* copied unchanged' "$TMP/st.err"
$S --stats-from "$TMP/st" "$TMP/st2" "$TMP/st2b.out" 2>/dev/null
check "--stats-from gives the same result" cmp -s "$TMP/st2.out" "$TMP/st2b.out"
gzip -c "$TMP/st" | $S - - 2>/dev/null >"$TMP/st.gz.out"
check "gzip on stdin, result on stdout" cmp -s "$TMP/st.out" "$TMP/st.gz.out"
$S "$TMP/m1.train" "$TMP/m1s.train" "$TMP/m1.test" "$TMP/m1s.test"
$BIN/train -q "$TMP/m1s.train" "$TMP/m1.model"
check "standardized microarray trains and predicts" bash -c \
    "$BIN/predict $TMP/m1s.test $TMP/m1.model $TMP/m1.out | grep -q '^Accuracy = '"
expect_fail "no arguments" 1 "no input given" $S
expect_fail "odd arguments" 1 "has no output file" $S "$TMP/st"
expect_fail "output is an input" 1 "output .* is also an input" $S "$TMP/st" "$TMP/st"
expect_fail "output twice" 1 "given twice" $S "$TMP/st" "$TMP/o" "$TMP/st2" "$TMP/o"
expect_fail "stdin twice" 1 "read only once" $S - "$TMP/o" - "$TMP/o2"
expect_fail "unknown option" 1 "unknown option '-x'" $S -x "$TMP/st" "$TMP/o"
expect_fail "one-row reference" 2 "at least two" $S "$TMP/st2" "$TMP/o"
printf '1 1:x\n' >"$TMP/bad"
expect_fail "malformed input gives FILE:LINE:COL" 2 "bad:1:[0-9]+: " \
    $S "$TMP/st" "$TMP/o" "$TMP/bad" "$TMP/o2"
check "no output left for the malformed input" test ! -e "$TMP/o2"

# ---- gen_dense: the dense binary set of bench/libsvm.sh
G=$D/gen_dense
check "gen_dense -h prints usage" bash -c "$G -h | grep -q '^Usage: gen_dense'"
$G --rows 2000 --features 5 >"$TMP/gd1"
$G --rows 2000 --features 5 >"$TMP/gd2"
$G --rows 2000 --features 5 --split-seed 2 >"$TMP/gd3"
check "gen_dense: same options, same bytes; another --split-seed, other rows" bash -c \
    "cmp -s $TMP/gd1 $TMP/gd2 && ! cmp -s $TMP/gd1 $TMP/gd3"
check "gen_dense: 2000 dense rows of 5 features, labels +1/-1" awk '
    NF != 6 || ($1 != "+1" && $1 != "-1") { exit 1 }
    { for (j = 2; j <= 6; j++) if ($j !~ "^" j - 1 ":") exit 1 } END { exit NR != 2000 }' "$TMP/gd1"
check "gen_dense: balanced classes, standardised features" awk '
    { p += ($1 == "+1"); for (j = 2; j <= 6; j++) { v = substr($j, index($j, ":") + 1); s[j] += v; q[j] += v * v } }
    END { if (p < 900 || p > 1100) exit 1
          for (j = 2; j <= 6; j++) { m = s[j] / NR; va = q[j] / NR - m * m
              if (m < -0.3 || m > 0.3 || va < 0.6 || va > 1.4) exit 1 } }' "$TMP/gd1"
expect_fail "gen_dense: negative --noise" 1 "noise" $G --noise -1
expect_fail "gen_dense: unknown option" 1 "unknown option" $G --bogus
