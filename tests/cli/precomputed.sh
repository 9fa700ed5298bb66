# precomputed.sh - train -t precomputed (LIBSVM's -t 4 files: "label 0:ID 1:K(x_ID,x_1) ...
# L:K(x_ID,x_L)", test rows "label 0:? 1:K(x,x_1) ..."): the same problem trained with -t rbf
# and with -t precomputed on a file of the RBF values (written here by awk with %.17g) gives
# the same decision values (l1svm, rls; one-versus-all and one-versus-one); predict on the
# precomputed test file equals predict with the rbf model; svm-predict reads kmtk's
# --save-libsvm model and kmtk's predict reads svm-train -t 4's model, each giving the
# other's labels; hostile files exit 2 with FILE:LINE:COL.
# REQUIRES svm-train, svm-predict (Debian libsvm-tools; .ci/run installs them).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict H=$DATA/heart_scale G=0.1

for peer in svm-train svm-predict; do
    if ! command -v $peer >/dev/null; then
        fail "$peer not found: this test requires Debian's libsvm-tools"
        exit 1
    fi
done

# precomp GAMMA ZERO TRAIN [TEST]: the RBF kernel values of TEST's rows (TRAIN's when no TEST)
# against TRAIN's, as precomputed rows; ZERO is the test rows' 0: value ("?" or a number)
precomp() {
    awk -v g="$1" -v zero="$2" '
    FNR == 1 { f++ }
    { m = NR0[f]++; Y[f, m] = $1; N[f, m] = NF - 1
      for (i = 2; i <= NF; i++) { split($i, p, ":"); I[f, m, i - 1] = p[1] + 0; V[f, m, i - 1] = p[2] + 0 } }
    function dot(fa, a, fb, b,   s, i, j) {
      s = 0; i = 1; j = 1
      while (i <= N[fa, a] && j <= N[fb, b]) {
        if (I[fa, a, i] == I[fb, b, j]) { s += V[fa, a, i] * V[fb, b, j]; i++; j++ }
        else if (I[fa, a, i] < I[fb, b, j]) i++; else j++
      }
      return s
    }
    END { t = f == 2 ? 2 : 1
      for (b = 0; b < NR0[1]; b++) S[b] = dot(1, b, 1, b)
      for (a = 0; a < NR0[t]; a++) {
        line = Y[t, a] " 0:" (t == 1 ? a + 1 : zero); sa = dot(t, a, t, a)
        for (b = 0; b < NR0[1]; b++)
          line = line sprintf(" %d:%.17g", b + 1, exp(-g * (sa + S[b] - 2 * dot(t, a, 1, b))))
        print line } }' "${@:3}"
}
# close A B TOL: the numbers of files A and B (one a line) agree to TOL (relative, or absolute
# below 1)
close() {
    paste "$1" "$2" | awk -v tol="$3" '{ d = $1 - $2; d = d < 0 ? -d : d; s = $2 < 0 ? -$2 : $2
        if (d > tol * (s > 1 ? s : 1)) bad++; n++ } END { exit !(n > 0 && bad == 0) }'
}

head -n 170 "$H" >"$TMP/tr"
tail -n +171 "$H" >"$TMP/te"
precomp $G "?" "$TMP/tr" >"$TMP/tr.pc"
precomp $G "?" "$TMP/tr" "$TMP/te" >"$TMP/te.pc"
precomp $G 0 "$TMP/tr" "$TMP/te" >"$TMP/te0.pc"
check "the precomputed files: 170 training rows with 0:1..0:170, 100 test rows with 0:?" \
    test "$(wc -l <"$TMP/tr.pc")" -eq 170 -a "$(wc -l <"$TMP/te.pc")" -eq 100 -a \
    "$(awk '{ print $2 }' "$TMP/tr.pc" | sort -u | wc -l)" -eq 170

for s in l1svm rls; do
    $T -q -s $s -t rbf -g $G -e 1e-12 "$TMP/tr" "$TMP/$s.rbf.model"
    $T -q -s $s -t precomputed -e 1e-12 "$TMP/tr.pc" "$TMP/$s.pc.model"
    check "-s $s -t precomputed: trains, and the model says 'kernel precomputed'" \
        grep -qx 'kernel precomputed' "$TMP/$s.pc.model"
    check "-s $s: the same support vectors (count) as -t rbf" \
        test "$(grep '^nr_sv' "$TMP/$s.pc.model")" = "$(grep '^nr_sv' "$TMP/$s.rbf.model")"
    check "-s $s: support vector lines 'c 0:ID'" \
        bash -c "sed -n '/^sv$/,/^end$/p' $TMP/$s.pc.model | sed '1d;\$d' | grep -vqE '^[-0-9.e]+ 0:[0-9]+$' && exit 1 || exit 0"
    $P -q -d "$TMP/te" "$TMP/$s.rbf.model" "$TMP/$s.rbf.dec"
    $P -q -d "$TMP/te.pc" "$TMP/$s.pc.model" "$TMP/$s.pc.dec"
    check "-s $s: decision values of -t rbf and of -t precomputed agree to 1e-10" \
        close "$TMP/$s.pc.dec" "$TMP/$s.rbf.dec" 1e-10
    $P -q "$TMP/te" "$TMP/$s.rbf.model" "$TMP/$s.rbf.pred"
    $P "$TMP/te.pc" "$TMP/$s.pc.model" "$TMP/$s.pc.pred" >"$TMP/$s.pc.acc"
    if [ $s = l1svm ]; then
        check "-s $s: the same labels from the precomputed test file" \
            cmp -s "$TMP/$s.rbf.pred" "$TMP/$s.pc.pred"
        check "-s $s: predict prints the accuracy" grep -q '^Accuracy = ' "$TMP/$s.pc.acc"
    fi
    # cross-validation: the folds' rows keep their serial numbers
    a=$($T -q -s $s -t rbf -g $G -v 5 "$TMP/tr" | head -n 1)
    b=$($T -q -s $s -t precomputed -v 5 "$TMP/tr.pc" | head -n 1)
    check "-s $s -v 5: the same cross-validation result ($a / $b)" test "$a" = "$b"
done

# more classes: one-versus-all and one-versus-one (labels 1..3 from the row number)
awk '{ $1 = NR % 3 + 1; print }' "$TMP/tr" >"$TMP/tr3"
awk '{ $1 = NR % 3 + 1; print }' "$TMP/tr.pc" >"$TMP/tr3.pc"
for mc in ova ovo; do
    $T -q -s l1svm --multiclass $mc -t rbf -g $G "$TMP/tr3" "$TMP/$mc.rbf.model"
    $T -q -s l1svm --multiclass $mc -t precomputed "$TMP/tr3.pc" "$TMP/$mc.pc.model"
    $P -q -d "$TMP/te" "$TMP/$mc.rbf.model" "$TMP/$mc.rbf.dec" 2>/dev/null
    $P -q -d "$TMP/te.pc" "$TMP/$mc.pc.model" "$TMP/$mc.pc.dec" 2>/dev/null
    tr ' ' '\n' <"$TMP/$mc.rbf.dec" >"$TMP/$mc.a"
    tr ' ' '\n' <"$TMP/$mc.pc.dec" >"$TMP/$mc.b"
    check "three classes, --multiclass $mc: -t rbf and -t precomputed agree to 1e-10" \
        close "$TMP/$mc.b" "$TMP/$mc.a" 1e-10
done

# LIBSVM: svm-predict reads kmtk's --save-libsvm model (its test rows need a number after
# 0:), kmtk's predict reads svm-train -t 4's model; each gives the other's labels
$T -q -s l1svm -t precomputed --save-libsvm "$TMP/pc.libsvm" "$TMP/tr.pc" "$TMP/k.model"
check "--save-libsvm: kernel_type precomputed, SV lines 'coef 0:ID'" \
    bash -c "grep -qx 'kernel_type precomputed' $TMP/pc.libsvm && sed -n '/^SV$/,\$p' $TMP/pc.libsvm | sed 1d | grep -qE '^[-0-9.e]+ 0:[0-9]+$'"
svm-predict "$TMP/te0.pc" "$TMP/pc.libsvm" "$TMP/svm.pred" >/dev/null
$P -q "$TMP/te.pc" "$TMP/k.model" "$TMP/k.pred"
check "svm-predict on kmtk's precomputed model: kmtk's labels" cmp -s "$TMP/svm.pred" "$TMP/k.pred"
svm-train -q -t 4 "$TMP/tr.pc" "$TMP/peer.model"
svm-predict "$TMP/te0.pc" "$TMP/peer.model" "$TMP/peer.pred" >/dev/null
$P -q "$TMP/te.pc" "$TMP/peer.model" "$TMP/peer.kmtk.pred"
check "kmtk predict on svm-train -t 4's model: svm-predict's labels" \
    cmp -s "$TMP/peer.pred" "$TMP/peer.kmtk.pred"
svm-train -q -t 2 -g $G "$TMP/tr" "$TMP/peer.rbf.model"
svm-predict "$TMP/te" "$TMP/peer.rbf.model" "$TMP/peer.rbf.pred" >/dev/null
check "svm-train -t 4 on the file and -t 2 -g $G on the data: the same labels (the file is right)" \
    cmp -s "$TMP/peer.pred" "$TMP/peer.rbf.pred"
agree=$(paste "$TMP/peer.pred" "$TMP/k.pred" | awk '$1 == $2 { n++ } END { print n + 0 }')
check "kmtk (no offset) and LIBSVM (offset b) agree on most labels ($agree of 100)" \
    test "$agree" -ge 90

# hostile files: exit 2, FILE:LINE:COL
printf '+1 1:1 2:0.5\n' >"$TMP/no0"
expect_fail "a row without 0:ID" 2 "no0:1:4: expected '0:ID' first" \
    $T -t precomputed "$TMP/no0" "$TMP/x.model"
printf '+1 0:1 1:1 2:0.5\n-1 0:3 1:0.5 2:1\n' >"$TMP/range"
expect_fail "an ID beyond the kernel values" 2 "range:2:6: expected a serial number in 1\\.\\.2" \
    $T -t precomputed "$TMP/range" "$TMP/x.model"
printf '+1 0:1 1:1 2:0.5\n-1 0:1 1:0.5 2:1\n' >"$TMP/dup"
expect_fail "an ID twice" 2 "dup:2:6: expected a new serial number, got 1 again \\(line 1 has it\\)" \
    $T -t precomputed "$TMP/dup" "$TMP/x.model"
printf '+1 0:1 1:1 2:0.5 3:0.1\n-1 0:2 1:0.5 2:1\n+1 0:3 1:0.1 2:0 3:1\n' >"$TMP/short"
expect_fail "a short row" 2 "short:2:17: expected 3 kernel values \\(1:\\.\\.3:, as on the first row\\), got 2" \
    $T -t precomputed "$TMP/short" "$TMP/x.model"
printf '+1 0:1 1:1 3:0.5\n' >"$TMP/gap"
expect_fail "a missing kernel value" 2 "gap:1:12: expected the kernel value 2: next" \
    $T -t precomputed "$TMP/gap" "$TMP/x.model"
printf '+1 0:x 1:1\n' >"$TMP/nan"
expect_fail "an ID that is not a number" 2 "nan:1:6: expected the row's serial number" \
    $T -t precomputed "$TMP/nan" "$TMP/x.model"
expect_fail "without -t precomputed, 0: is refused as before" 2 "tr.pc:1:4: expected a feature index >= 1, got 0" \
    $T -t rbf "$TMP/tr.pc" "$TMP/x.model"
head -n 3 "$TMP/te.pc" | awk '{ NF = NF - 1; print }' >"$TMP/te.short"
expect_fail "predict: a test row short of the model's 170 kernel values" 2 "te.short:1:[0-9]+: expected 170 kernel values \\(1:\\.\\.170:, the model's\\), got 169" \
    $P "$TMP/te.short" "$TMP/k.model" "$TMP/x.out"
expect_fail "-t precomputed is not a kernel of -s okl" 1 "-t: unknown value 'precomputed'" \
    $T -s okl -t precomputed "$TMP/tr.pc" "$TMP/x.model"

# the example of kmtk-train(1): LIBSVM README's linear-kernel example
printf '1 0:1 1:4 2:6 3:1\n-1 0:2 1:6 2:18 3:0\n1 0:3 1:1 2:0 3:1\n' >"$TMP/tiny.pc"
$T -q -s l1svm -t precomputed "$TMP/tiny.pc" "$TMP/tiny.model"
out=$(printf '1 0:? 1:2 2:0 3:1\n' | $P -q - "$TMP/tiny.model" -)
check "the man page's tiny example predicts 1 (got '$out')" test "$out" = 1
