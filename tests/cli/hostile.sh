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

# ---- issue 13 item 11: write errors on standard output end with exit 2 and a message ----
if [ -w /dev/full ]; then
    expect_fail "train -v 3 > /dev/full" 2 "train: standard output: write error" \
        bash -c "$T -v 3 $H >/dev/full"
    expect_fail "train's summary > /dev/full" 2 "standard output: write error" \
        bash -c "$T $H $TMP/full.model >/dev/full"
    expect_fail "train -s okl's path table > /dev/full" 2 "standard output: write error" \
        bash -c "$T -s okl -L 1e-3:1:3 $M/okl.txt $TMP/full.model >/dev/full"
    expect_fail "rls2-path's path table > /dev/full" 2 "rls2-path: standard output: write error" \
        bash -c "$R -L 1:10:2 $H $TMP/full.model >/dev/full"
    expect_fail "predict's metrics > /dev/full" 2 "predict: standard output: write error" \
        bash -c "$P $H $M/linear.model $TMP/full.out >/dev/full"
    expect_fail "predict to - > /dev/full" 2 "write error" \
        bash -c "$P $H $M/linear.model - >/dev/full"
    expect_fail "predict output file /dev/full (written in place)" 2 "/dev/full" \
        $P $H $M/linear.model /dev/full
fi
check "train -q > /dev/full writes nothing there: exit 0" bash -c "$T -q $H $TMP/q.model >/dev/full"

# predictions appear whole or not at all
printf 'the previous predictions\n' >"$TMP/keep.out"
{ head -n 100 $H; printf '1 1:x\n'; } >"$TMP/bad100.svm"
expect_fail "predict failing at line 101" 2 "bad100.svm:101:5: expected a number" \
    $P "$TMP/bad100.svm" $M/linear.model "$TMP/keep.out"
check "... leaves the existing output file as it was" \
    grep -qx 'the previous predictions' "$TMP/keep.out"
check "... and no temporary file" bash -c "! ls $TMP | grep -q 'keep.out.tmp'"
check "predict on success replaces it whole" bash -c \
    "$P -q $H $M/linear.model $TMP/keep.out && test \$(wc -l <$TMP/keep.out) -eq 270"
# a predict killed by a signal (SIGTERM, SIGHUP; SIGINT too, but a script's background job
# ignores it) leaves no PATH.tmp* behind: it reads rows from a fifo that stays open, so it
# is killed in the middle of its output
for sig in TERM HUP; do
    rm -f "$TMP/fifo" && mkfifo "$TMP/fifo"
    # (env --default-signal: under nohup SIGHUP comes ignored, and predict keeps it so)
    env --default-signal=$sig $P $TMP/fifo $M/linear.model "$TMP/killed.out" 2>/dev/null &
    pid=$!
    exec 9>"$TMP/fifo"   # the writer end: predict's open returns, its read blocks
    head -n 10 $H >&9
    for _ in $(seq 100); do ls $TMP | grep -q 'killed.out.tmp' && break; sleep 0.05; done
    had=$(ls $TMP | grep -c 'killed.out.tmp')
    kill -$sig $pid
    for _ in $(seq 200); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
    kill -KILL $pid 2>/dev/null   # never a hung test (a survivor fails: status 137)
    wait $pid 2>/dev/null
    st=$?
    exec 9>&-
    check "predict killed by SIG$sig (status $st, temp file seen: $had) leaves no temporary file" \
        bash -c "[ $had = 1 ] && [ $st -gt 128 ] && ! ls $TMP | grep -q 'killed.out' "
done
check "predict to /dev/stdout (not a regular file) writes in place" bash -c \
    "$P -q $H $M/linear.model /dev/stdout | wc -l | grep -qx 270"

# a line is not longer than --max-line (default 1 GiB): a gzip bomb of zeros ends early
head -c 100000000 /dev/zero | gzip -1 >"$TMP/bomb.gz"
expect_fail "gzip bomb (100 MB of zeros) with --max-line 1M: refused at 1 MiB" 2 \
    "bomb.gz:1: a line longer than 1 MiB; --max-line raises the cap" \
    capped $T --max-line 1M "$TMP/bomb.gz" "$TMP/bomb.model"
{ printf '1 1:1\n-1 2:1\n1'; for i in $(seq 2 400); do printf ' %d:1' $i; done; echo; } \
    >"$TMP/long.svm"
expect_fail "train --max-line 1000: line 3 has 2900 bytes" 2 \
    "long.svm:3: a line longer than 1000 bytes; --max-line raises the cap" \
    $T --max-line 1000 "$TMP/long.svm" "$TMP/long.model"
check "... and --max-line 4k takes it" $T -q --max-line 4k "$TMP/long.svm" "$TMP/long.model"
expect_fail "predict --max-line 1k" 2 "long.svm:3: a line longer than 1 KiB" \
    $P --max-line 1k "$TMP/long.svm" "$TMP/long.model" "$TMP/long.out"
expect_fail "rls2-path --max-line 1000" 2 "long.svm:3: a line longer than 1000 bytes" \
    $R --max-line 1000 "$TMP/long.svm" "$TMP/long.model"
expect_fail "--max-line 0 is a usage error" 1 "--max-line: expected a size in bytes" \
    $T --max-line 0 $H
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
if [ "${avail:-0}" -gt 4000 ] && truncate -s 1100M "$TMP/zeros" 2>/dev/null; then
    expect_fail "1.1 GB of zeros (no newline): refused at the default 1 GiB" 2 \
        "zeros:1: a line longer than 1 GiB; --max-line raises the cap" \
        bash -c "ulimit -v $([ "$VMEM" = unlimited ] && echo unlimited || echo 1800000) && $T $TMP/zeros $TMP/z.model"
    rm -f "$TMP/zeros"
fi

# predict says once when the test data do not fit the model
printf '1 1:0.5 20:1\n-1 30:1\n3 2:1\n5 1:1\n' >"$TMP/misfit.svm"
$P "$TMP/misfit.svm" $M/linear.model "$TMP/misfit.out" >/dev/null 2>"$TMP/err"
check "predict: a feature beyond nr_feature is named once" bash -c \
    "grep -c 'misfit.svm:1: feature 20 is beyond the model.s 13 (nr_feature)' $TMP/err | grep -qx 1 && test \$(grep -c 'beyond' $TMP/err) -eq 1"
check "predict: a label that is not a class is named once" bash -c \
    "grep -q 'misfit.svm:3: label 3 is not one of the model.s classes (-1, 1)' $TMP/err && test \$(grep -c 'not one of' $TMP/err) -eq 1"
check "... and predicts every row" test "$(wc -l <"$TMP/misfit.out")" -eq 4
$P "$TMP/misfit.svm" $M/kernel_svr.model "$TMP/misfit.out" >/dev/null 2>"$TMP/err"
check "regression models: labels are values, no label warning" bash -c \
    "! grep -q 'not one of' $TMP/err && grep -q 'beyond' $TMP/err"
$P -q $H $M/linear.model "$TMP/fit.out" 2>"$TMP/err"
check "test data that fit: no warning" test ! -s "$TMP/err"
