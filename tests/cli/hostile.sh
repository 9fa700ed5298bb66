# hostile.sh - hostile input (issue 13): sizes that come from input allocate only what the
# input justifies (common/sizelimit.h), counts in model files are checked against the bytes
# there, write errors and over-long lines end with a message (run by tests/run.sh).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict R=$BIN/rls2-path H=$DATA/heart_scale
M=$(cd "$(dirname "$0")/../models" && pwd)

# Under a cap on virtual memory a regression fails (out of memory, exit 3) instead of
# swapping; the sanitizer build reserves terabytes of shadow memory: no cap there.
case $BIN in *asan*) VMEM=unlimited ;; *) VMEM=${VMEM:-1500000} ;; esac
capped() { (ulimit -v "$VMEM" && exec timeout 60 "$@"); }

# ---- issue 13 item 5: a 30-byte file must not ask for 16 GiB ----
printf '1 2147483647:1\n-1 1:1\n' >"$TMP/big.svm"
printf '1,2 2147483647:1\n-1,0 1:1\n1,1 2:1\n' >"$TMP/bigm.svm"
printf '1 qid:1 2147483647:1\n-1 qid:2 1:1\n1 qid:1 2:1\n' >"$TMP/bigq.svm"
expect_fail "train: feature index 2^31-1 in a 30-byte file refused before allocating" 2 \
    "feature index 2147483647 would need dense arrays of 2147483648 x 1 entries \(16 GiB\) for the weights w; the data have 2 non-zeros in 2 distinct features" \
    capped $T "$TMP/big.svm" "$TMP/big.model"
check "... and no model written" test ! -e "$TMP/big.model"
cat "$TMP/big.svm" | capped $T - "$TMP/pipe.model" >/dev/null 2>"$TMP/err"
check "... also from a pipe (exit 2)" test $? -eq 2
printf '1 2147483647:1\n-1 1:1\n1 2:1\n-1 3:1\n' >"$TMP/big4.svm"
expect_fail "train -v 2: each fold refused the same way" 2 "feature index 2147483647 would need" \
    capped $T -v 2 "$TMP/big4.svm"
expect_fail "train -s l1svm -B 1: the bias row counts" 2 "would need dense arrays" \
    capped $T -s l1svm -B 1 "$TMP/big.svm" "$TMP/big.model"
expect_fail "rls2-path --kernels linear: one kernel per feature refused" 2 \
    "feature index 2147483647 would need .* for the basis kernels" \
    capped $R -q --kernels linear "$TMP/big.svm" "$TMP/big.model"
expect_fail "rls2-path (paper kernels): refused as input (exit 2), not usage" 2 \
    "for the basis kernels" capped $R -q "$TMP/big.svm" "$TMP/big.model"
for s in "okl bigm" "mtl bigq" "l1svm -t rbf big" "rls -t linear big"; do
    set -- $s
    data=$TMP/${!#}.svm
    capped $T -q -s "${@:1:$#-1}" "$data" "$TMP/k.model" >/dev/null 2>"$TMP/err"
    st=$?
    check "train -s ${*:1:$#-1} on index 2^31-1: no dense w, a small model (status $st)" \
        bash -c "test $st -eq 0 && test \$(wc -c <$TMP/k.model) -lt 20000"
    check "... which predict reads back (nr_feature 2147483647) and applies" \
        capped $P -q "$data" "$TMP/k.model" "$TMP/k.out"
done
printf '1 1000000:1\n-1 1:1\n' >"$TMP/wide.svm"
check "an index of 10^6 in 2 rows stays within the free 2^24 entries: trains" \
    capped $T -q "$TMP/wide.svm" "$TMP/wide.model"
gen=$BIN/datasets/gen_sparse
if [ -x "$gen" ]; then
    "$gen" --rows 300 --features 20 --avg-nnz 5 --seed 1 | awk '{ for (i = 2; i <= NF; i++) { split($i, a, ":"); $i = a[1] * 70000 ":" a[2] } print }' >"$TMP/spread.svm"
    check "features spread to 70000 x 20 = 1.4M indices but 20 present (< 2^24): trains" \
        capped $T -q "$TMP/spread.svm" "$TMP/spread.model"
fi

# ---- issue 13 item 10: model counts are checked against the bytes of the file ----
damage() {  # damage NAME 'sed expression' PATTERN: predict refuses the damaged model
    local name=$1 expr=$2 pat=$3 test=$H
    case $name in okl) test=$M/okl_test.txt ;; mtl) test=$M/mu.train ;;
                  linear_ova|kernel_svr) test=$M/three.txt ;; esac
    sed "$expr" "$M/$name.model" >"$TMP/d.model"
    expect_fail "$name model with '$expr': refused before allocating" 2 "$pat" \
        capped $P "$test" "$TMP/d.model" "$TMP/d.out"
}
damage kernel 's/^nr_sv .*/nr_sv 868087920/' \
    'd.model:16: nr_sv 868087920 needs at least 1736175840 bytes of support vector lines; the file has [0-9]+ left'
damage linear 's/^nr_feature .*/nr_feature 2147483647/' \
    'd.model:7: nr_feature 2147483648 needs at least 4294967296 bytes of weight lines'
damage linear_ova 's/^nr_class .*/nr_class 16777216/;s/^nr_w .*/nr_w 16777216/' \
    'd.model:9: expected nr_class numbers'
damage rls2 's/^nr_basis .*/nr_basis 1073741823/' 'nr_basis 1073741823 needs at least'
damage rls2 's/^nr_sv .*/nr_sv 9000000000000/' 'nr_sv 9000000000000 needs at least'
damage okl 's/^nr_output .*/nr_output 2000000000/' \
    'd.model:5: nr_output 2000000000 needs at least 20000000000 bytes of output map lines'
damage mtl 's/^nr_task .*/nr_task 4000000000000/' 'nr_task 4000000000000 needs at least'
damage mtl 's/^task_kernels .*/task_kernels 4000000000000/' 'task_kernels 4000000000000 needs'
sed 's/^nr_sv .*/nr_sv 868087920/' "$M/kernel.model" | capped $P $H /dev/stdin "$TMP/d.out" \
    >/dev/null 2>"$TMP/err"
check "a model from a pipe: read into memory first, then the same check (exit 2)" \
    bash -c "test $? -eq 2 && grep -q 'nr_sv 868087920 needs at least' $TMP/err"
check "a model from a pipe still predicts" bash -c \
    "cat $M/kernel.model | $P -q -d $H /dev/stdin - | cmp -s - $M/kernel.dec"

# ---- issue 13 item 10: no NULL + 0 on rows without entries (clang -fsanitize=undefined:
# make check-asan CC=clang) ----
printf '1\n-1\n' >"$TMP/empty.svm"
printf '1 qid:3\n-1 qid:4\n' >"$TMP/emptyq.svm"
printf '1 40:1\n' >"$TMP/beyond.svm"
for m in linear linear_ova kernel kernel_svr rls2 okl mtl; do
    for f in empty emptyq beyond; do
        case $m:$f in mtl:empty | okl:emptyq | linear*:emptyq | kernel*:emptyq | rls2:emptyq)
            continue ;; esac
        check "$m model on rows without (known) features ($f)" \
            $P -q "$TMP/$f.svm" "$M/$m.model" "$TMP/e.out"
    done
done
