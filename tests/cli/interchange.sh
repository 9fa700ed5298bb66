# interchange.sh - LIBLINEAR and LIBSVM model files read by predict: the peers' labels
# exactly (liblinear-train -s 0..7, 11..13; svm-train -s 0..4 -t 0..3) on the same test
# files, regression values and decision values to 1e-9 (against liblinear-predict -b 1's
# probabilities and against the decision functions computed here from the model files),
# and kmtk's linear models written by train --save-liblinear, read by liblinear-predict.
# REQUIRES liblinear-train, liblinear-predict, svm-train, svm-predict (Debian
# liblinear-tools and libsvm-tools; .ci/run installs them).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict H=$DATA/heart_scale

for peer in liblinear-train liblinear-predict svm-train svm-predict; do
    if ! command -v $peer >/dev/null; then
        fail "$peer not found: this test requires Debian's liblinear-tools and libsvm-tools"
        exit 1
    fi
done

# deterministic data (Park-Miller generator): 4 classes on 6 features (the test file also
# has a feature 9 no training row has), and regression
gen() {  # gen ROWS SEED CLASSES [EXTRA]: CLASSES 0 = regression
    awk -v n="$1" -v seed="$2" -v k="$3" -v extra="${4:-0}" '
        function u() { x = (x * 16807) % 2147483647; return x / 2147483647 }
        BEGIN { x = seed + 1
          for (i = 0; i < n; i++) {
            c = int(u() * (k ? k : 1)); line = ""; z = 0
            for (j = 1; j <= 6; j++) {
              v = (k && j == (c % 6) + 1 ? 1.5 : 0) + (u() - 0.5) * 2
              if (u() < 0.2) continue
              z += v * (j % 3 - 1 + 0.5 * j)
              line = line sprintf(" %d:%.6g", j, v)
            }
            if (extra && u() < 0.3) line = line sprintf(" 9:%.6g", u())
            print (k ? c + 1 : sprintf("%.6g", z + 0.1 * (u() - 0.5))) line } }'
}
gen 300 1 4 >"$TMP/m.train"
gen 200 2 4 1 >"$TMP/m.test"
gen 200 3 0 >"$TMP/r.train"
gen 100 4 0 1 >"$TMP/r.test"
gen 100 4 0 >"$TMP/r.test0"

close_files() {  # close_files A B TOL: the same number of lines, numbers within TOL (relative)
    paste -d' ' "$1" "$2" | awk -v tol="$3" '
        { h = NF / 2; if (NF % 2 || NF == 0) bad = 1
          for (k = 1; k <= h; k++) { a = $k; b = $(k + h); d = a - b; s = b < 0 ? -b : b
                                    if ((d < 0 ? -d : d) > tol * (s > 1 ? s : 1)) bad = 1 } }
        END { exit bad || NR == 0 }' &&
    test "$(wc -l <"$1")" -eq "$(wc -l <"$2")"
}

# peer_both PEER MODEL TRAIN TEST OPTIONS...: PEER-train (liblinear or svm) -q OPTIONS on TRAIN
# into MODEL; PEER-predict and predict with MODEL on TEST into $TMP/ref.out and $TMP/our.out.
peer_both() {
    local peer=$1 model=$2 tr=$3 te=$4
    shift 4
    $peer-train -q "$@" "$tr" "$model" >/dev/null
    $peer-predict "$te" "$model" "$TMP/ref.out" >/dev/null
    $P -q "$te" "$model" "$TMP/our.out" 2>/dev/null
}

# ---- LIBLINEAR
for s in 0 1 2 3 4 5 6 7; do
    for B in -1 1; do
        for d in heart m; do
            if [ $d = heart ]; then tr=$H te=$H; else tr=$TMP/m.train te=$TMP/m.test; fi
            peer_both liblinear "$TMP/ll.model" "$tr" "$te" -s $s -B $B
            check "liblinear-train -s $s -B $B ($d): predict gives liblinear-predict's labels" \
                cmp -s "$TMP/ref.out" "$TMP/our.out"
        done
    done
done
for s in 11 12 13; do
    peer_both liblinear "$TMP/ll.model" "$TMP/r.train" "$TMP/r.test" -s $s -B 1
    check "liblinear-train -s $s (regression): liblinear-predict's values to 1e-9" \
        close_files "$TMP/our.out" "$TMP/ref.out" 1e-9
done
# decision values against the model file: w'x + bias w_b, features beyond nr_feature unused
liblinear-train -q -s 2 -B 1 $H "$TMP/ll.model" >/dev/null
$P -q -d $H "$TMP/ll.model" "$TMP/our.dec"
awk 'NR == FNR { if ($1 == "nr_feature") n = $2; if ($1 == "bias") b = $2
                 if (w_on) w[++j] = $1; if ($1 == "w") w_on = 1; next }
     { d = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); if (a[1] <= n) d += w[a[1]] * a[2] }
       printf "%.17g\n", d + b * w[n + 1] }' "$TMP/ll.model" $H >"$TMP/ref.dec"
check "LIBLINEAR model: predict -d = w'x + bias w_b from the file (1e-12)" \
    close_files "$TMP/our.dec" "$TMP/ref.dec" 1e-12
# logistic regression: liblinear-predict -b 1's probabilities from our decision values
for d in heart m; do
    if [ $d = heart ]; then tr=$H te=$H; else tr=$TMP/m.train te=$TMP/m.test; fi
    liblinear-train -q -s 0 "$tr" "$TMP/lr.model" >/dev/null
    liblinear-predict -b 1 "$te" "$TMP/lr.model" "$TMP/lr.prob" >/dev/null
    $P -q -d "$te" "$TMP/lr.model" "$TMP/lr.dec" 2>/dev/null
    # two classes: P(first label) = 1/(1 + exp(-d)); more: sigmoid(d_k) normalised (linear.cpp)
    awk 'NR == FNR { n = NF; s = 0
                     for (k = 1; k <= n; k++) { p[FNR, k] = 1 / (1 + exp(-$k)); s += p[FNR, k] }
                     if (n == 1) { q[FNR, 1] = p[FNR, 1]; q[FNR, 2] = 1 - p[FNR, 1] }
                     else for (k = 1; k <= n; k++) q[FNR, k] = p[FNR, k] / s
                     next }
         FNR == 1 { next }
         { for (k = 2; k <= NF; k++) { e = q[FNR - 1, k - 1] - $k; if ((e < 0 ? -e : e) > 1e-5) bad = 1 } }
         END { exit bad || FNR < 2 }' "$TMP/lr.dec" "$TMP/lr.prob"
    check "liblinear -s 0 ($d): liblinear-predict -b 1's probabilities from predict -d (to its 6 digits)" \
        test $? -eq 0
done

# ---- LIBSVM
for s in 0 1 2; do
    for t in 0 1 2 3; do
        for d in heart m; do
            [ $s = 2 ] && [ $d = m ] && continue
            if [ $d = heart ]; then tr=$H te=$H; else tr=$TMP/m.train te=$TMP/m.test; fi
            peer_both svm "$TMP/svm.model" "$tr" "$te" -s $s -t $t
            check "svm-train -s $s -t $t ($d): predict gives svm-predict's labels" \
                cmp -s "$TMP/ref.out" "$TMP/our.out"
        done
    done
done
for s in 3 4; do
    for t in 0 1 2 3; do
        peer_both svm "$TMP/svm.model" "$TMP/r.train" "$TMP/r.test" -s $s -t $t
        check "svm-train -s $s -t $t (regression): svm-predict's values to 1e-9" \
            close_files "$TMP/our.out" "$TMP/ref.out" 1e-9
    done
done
# a model with probability estimates (probA, probB): read, the decision labels of -b 0
svm-train -q -b 1 -t 2 "$TMP/m.train" "$TMP/svmb.model" >/dev/null
svm-predict -b 0 "$TMP/m.test" "$TMP/svmb.model" "$TMP/ref.out" >/dev/null
$P -q "$TMP/m.test" "$TMP/svmb.model" "$TMP/our.out" 2>/dev/null
check "svm-train -b 1 model (probA/probB ignored): svm-predict -b 0's labels" \
    cmp -s "$TMP/ref.out" "$TMP/our.out"
$P -q -n 2 "$TMP/m.test" "$TMP/svmb.model" "$TMP/our2.out"
check "LIBSVM model, predict -n 2: the output of -n 1" cmp -s "$TMP/our.out" "$TMP/our2.out"
# decision values against the model file: sum_s a_s exp(-gamma ||x - sv_s||^2) - rho, the
# test rows' feature 9 counted in ||x - sv_s||^2 as LIBSVM does
for d in heart m; do
    if [ $d = heart ]; then tr=$H te=$H; else
        # two classes of the 4-class data, with feature 9 in the test rows
        awk '$1 <= 2' "$TMP/m.train" >"$TMP/m2.train"; awk '$1 <= 2' "$TMP/m.test" >"$TMP/m2.test"
        tr=$TMP/m2.train te=$TMP/m2.test
    fi
    svm-train -q -t 2 -g 0.3 -c 2 "$tr" "$TMP/svm2.model" >/dev/null
    $P -q -d "$te" "$TMP/svm2.model" "$TMP/our.dec"
    awk 'NR == FNR { if ($1 == "gamma") g = $2; if ($1 == "rho") rho = $2
                     if (sv_on) { ns++; a[ns] = $1; for (i = 2; i <= NF; i++) { split($i, p, ":"); X[ns, p[1]] = p[2]; I[ns] = I[ns] " " p[1] } }
                     if ($1 == "SV") sv_on = 1; next }
         { delete x; for (i = 2; i <= NF; i++) { split($i, p, ":"); x[p[1]] = p[2] }
           d = -rho
           for (s = 1; s <= ns; s++) { q = 0
               for (j in x) { v = x[j] - ((s, j) in X ? X[s, j] : 0); q += v * v }
               m = split(I[s], idx, " ")
               for (t = 1; t <= m; t++) if (!(idx[t] in x)) q += X[s, idx[t]] ^ 2
               d += a[s] * exp(-g * q) }
           printf "%.17g\n", d }' "$TMP/svm2.model" "$te" >"$TMP/ref.dec"
    check "LIBSVM rbf model ($d): predict -d = sum_s a_s K(sv_s, x) - rho from the file (1e-9)" \
        close_files "$TMP/our.dec" "$TMP/ref.dec" 1e-9
done

# ---- kmtk's linear models in LIBLINEAR's format
for opt in "-s l1svm" "-s l2svm -B 1" "-s l2svm -c 4 -w1 2" "-s rls" "-s rla -B 1" "-s svr -p 0.1"; do
    for d in heart m r; do
        case $d in heart) tr=$H te=$H ;; m) tr=$TMP/m.train te=$TMP/m.test ;;
                   r) tr=$TMP/r.train te=$TMP/r.test ;; esac
        case "$opt" in *rls*|*rla*|*svr*) [ $d = r ] || continue ;; *) [ $d = r ] && continue ;; esac
        $T -q $opt --save-liblinear "$TMP/k.ll" "$tr" "$TMP/k.model"
        $P -q "$te" "$TMP/k.model" "$TMP/our.out" 2>/dev/null
        liblinear-predict "$te" "$TMP/k.ll" "$TMP/ref.out" >/dev/null
        if [ $d = r ]; then
            check "train $opt --save-liblinear ($d): liblinear-predict's values = predict's (1e-12)" \
                close_files "$TMP/ref.out" "$TMP/our.out" 1e-12
        else
            check "train $opt --save-liblinear ($d): liblinear-predict gives predict's labels" \
                cmp -s "$TMP/ref.out" "$TMP/our.out"
        fi
    done
done
$P -q "$TMP/r.test" "$TMP/k.ll" "$TMP/again.out" 2>/dev/null
check "the written LIBLINEAR file read back by predict: the same predictions" \
    close_files "$TMP/again.out" "$TMP/our.out" 1e-12
expect_fail "--save-liblinear with a kernel model: refused (exit 1), naming the format" 1 \
    "does not fit LIBLINEAR's format" $T -q -t rbf --save-liblinear "$TMP/x.ll" $H "$TMP/x.model"
printf '0.5 1:1\n1.5 1:-1\n' >"$TMP/frac.svm"
expect_fail "--save-liblinear with labels 0.5, 1.5: refused (LIBLINEAR's labels are integers)" 1 \
    "labels are integers" $T -q -s l1svm --save-liblinear "$TMP/x.ll" "$TMP/frac.svm" "$TMP/x.model"

# ---- kmtk's kernel models (two classes, regression) in LIBSVM's format (rho 0; with -B b,
# the kernel K + b^2, rho = -b^2 sum_s c_s)
both_close() { close_files "$1" "$3" 1e-9 && close_files "$2" "$3" 1e-9; }
for opt in "-s l1svm -t rbf -g 0.1" "-s l2svm -t poly -d 2 -r 1 -g 0.2" "-s l1svm -t linear" \
           "-s l1svm -t sigmoid -g 0.01" "-s svr -t rbf -p 0.1" "-s rls -t poly -d 3 -g 0.1 -r 1" \
           "-s l1svm -t rbf -g 0.1 -B 2" "-s rls -t rbf -g 0.5 -B 3"; do
    # (test rows without features beyond the training data's: kmtk's RBF models ignore
    # them, LIBSVM's count them in ||x - sv||^2)
    case "$opt" in *svr*|*rls*) tr=$TMP/r.train te=$TMP/r.test0 ;; *) tr=$H te=$H ;; esac
    $T -q $opt --save-libsvm "$TMP/k.svm" "$tr" "$TMP/k.model"
    $P -q "$te" "$TMP/k.model" "$TMP/our.out" 2>/dev/null
    svm-predict "$te" "$TMP/k.svm" "$TMP/ref.out" >/dev/null
    $P -q "$te" "$TMP/k.svm" "$TMP/again.out" 2>/dev/null
    case "$opt" in
    *svr*|*rls*)
        check "train $opt --save-libsvm: svm-predict's values = predict's (1e-9), read back too" \
            both_close "$TMP/ref.out" "$TMP/again.out" "$TMP/our.out" ;;
    *)
        check "train $opt --save-libsvm: svm-predict gives predict's labels, read back too" \
            bash -c "cmp -s $TMP/ref.out $TMP/our.out && cmp -s $TMP/again.out $TMP/our.out" ;;
    esac
done
expect_fail "--save-libsvm with a one-versus-all kernel model: refused" 1 \
    "one-versus-one" $T -q -t rbf --save-libsvm "$TMP/x.svm" "$TMP/m.train" "$TMP/x.model"
expect_fail "--save-libsvm with a Laplacian kernel: refused" 1 \
    "laplacian kernel does not fit" $T -q -t laplacian --save-libsvm "$TMP/x.svm" $H "$TMP/x.model"

# ---- damaged peer files: exit 2, FILE:LINE:COL, no allocation before the counts are checked
liblinear-train -q -s 1 $H "$TMP/ll.model" >/dev/null
sed 's/^nr_feature 13$/nr_feature 2000000000/' "$TMP/ll.model" >"$TMP/huge.model"
expect_fail "LIBLINEAR nr_feature 2000000000 in a small file: exit 2, checked first" 2 \
    "huge.model:6: nr_feature 2000000000 needs at least" $P $H "$TMP/huge.model" "$TMP/o"
sed '8s/.*/0.5 oops /' "$TMP/ll.model" >"$TMP/bad.model"
expect_fail "a damaged LIBLINEAR weight line: exit 2 with FILE:LINE:COL" 2 "bad.model:8:5: unexpected text" \
    $P $H "$TMP/bad.model" "$TMP/o"
svm-train -q $H "$TMP/svm.model" >/dev/null
sed -e 's/^total_sv .*/total_sv 99999999999/' -e 's/^nr_sv .*/nr_sv 99999999999 0/' \
    "$TMP/svm.model" >"$TMP/huge2.model"
expect_fail "LIBSVM total_sv 99999999999: exit 2 before any allocation" 2 "total_sv 99999999999 needs at least" \
    $P $H "$TMP/huge2.model" "$TMP/o"
sed 's/^kernel_type .*/kernel_type precomputed/' "$TMP/svm.model" >"$TMP/pre.model"
expect_fail "a LIBSVM precomputed-kernel model with feature SV lines: exit 2, said plainly" 2 "pre.model:[0-9]+:[0-9]+: expected 0:ID \\(a precomputed kernel's serial number" \
    $P $H "$TMP/pre.model" "$TMP/o"
