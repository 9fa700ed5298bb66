# compat.sh - models written by the previous release (tests/models, commit 0927949) load
# and predict the same bits; train writes the same files byte for byte where the solver
# did not change (test_model also reads and writes every one back byte for byte).
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict R=$BIN/rls2-path H=$DATA/heart_scale
M=$(cd "$(dirname "$0")/../models" && pwd)

same_dec() {  # same_dec NAME TEST_FILE [predict options]: predict -d = the stored values
    # (to 1e-13 relative: the sanitizer build's kernel loops round differently from -O2's)
    local name=$1 test=$2; shift 2
    "$P" -q "$@" "$test" "$M/$name.model" "$TMP/$name.now" &&
    paste -d' ' "$TMP/$name.now" "$M/$name.${EXT:-dec}" | awk '
        { h = NF / 2; if (NF % 2) bad = 1
          for (k = 1; k <= h; k++) { a = $k; b = $(k + h); d = a - b; s = b < 0 ? -b : b
                                    if ((d < 0 ? -d : d) > 1e-13 * (s > 1 ? s : 1)) bad = 1 } }
        END { exit bad || NR == 0 }' &&
    test "$(wc -l <"$TMP/$name.now")" -eq "$(wc -l <"$M/$name.${EXT:-dec}")"
}
check "linear model of the previous release: the same decision values" same_dec linear $H -d
check "kernel model: same decision values" same_dec kernel $H -d
check "one-versus-all linear model: same decision values" same_dec linear_ova "$M/three.txt" -d
check "kernel svr model: same decision values" same_dec kernel_svr "$M/three.txt" -d
check "rls2 model: same decision values" same_dec rls2 $H -d
check "mtl model (task kernels, qid): same predictions" same_dec mtl "$M/mu.train"
EXT=out check "okl model: same outputs" same_dec okl "$M/okl_test.txt"

same_file() {  # same_file NAME command...: the command's model = the stored file
    local name=$1; shift
    "$@" "$TMP/$name.model" >/dev/null 2>&1 && cmp -s "$TMP/$name.model" "$M/$name.model"
}
check "train -s l1svm -t rbf writes the same file" same_file kernel $T -q -s l1svm -t rbf -g 0.1 -c 4 $H
check "kernel svr: the same file" \
    same_file kernel_svr $T -q -s svr -t poly -d 2 -g 0.2 -r 1 -p 0.2 "$M/three.txt"
# (the linear solver's shrinking, rls2-path's packed kernels and okl's line search since
# then move the last digits of those models: test_model reads and writes every one back
# byte for byte instead)
(cd "$M" && same_file mtl $T -q -s mtl -t expdot -g 0.5 --alpha 0.3 --lambda 0.1 \
    --task-kernels tk.txt mu.train) && ok "train -s mtl (task kernels): the same file" \
    || fail "train -s mtl (task kernels): the same file"
