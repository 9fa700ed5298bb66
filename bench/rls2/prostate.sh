#!/usr/bin/env bash
# bench/rls2/prostate.sh - thesis 4.5.1, Experiment 2 (Prostate Cancer, Table 4.1): linear
# RLS2 with scaling (4.12) on ESL's prostate data, lambda by 10-fold cross-validation with
# the one-standard-error rule, coefficients w_k = d_k s_k z_k (4.7) in standardized units,
# test MSE and its standard error, next to the thesis' RLS2 column. A benchmark, not a test.
#
# Steps:
#   1. DATA_DIR/prostate.train.gz (67 rows) and prostate.test.gz (30 rows): the raw ESL
#      data (label lpsa; features lcavol lweight age lbph svi lcp gleason pgg45).
#   2. datasets/standardize: inputs to mean 0 and sd 1 (divisor l - 1, as R's scale()), with
#      the statistics of all 97 rows (PROSTATE_STATS=all, the default: what ESL does, so the
#      coefficients are in the units of ESL's Table 3.3 and the thesis' Table 4.1) or of the
#      67 training rows only (PROSTATE_STATS=train).
#   3. rls2-path --kernels linear -S trace -L 1e-4:1e4:N -v 10 --one-se --seed S --test: rls2-path
#      subtracts the training mean of y (the intercept), runs the 10-fold CV path (the metric
#      of each fold is its RMSE; the thesis and ESL average fold MSEs) and writes the model of
#      the largest lambda within one standard error of the best.
#   4. bench/rls2/rls2util.py coef: w_k = d_k s_k sum_i c_i x_ik from the model file;
#      predict + rls2util.py testerr: test MSE and its standard error over the 30 test rows.
#   5. The same for fold seeds 1..PROSTATE_SEEDS (the fold assignment moves the choice).
#
# Usage: bench/rls2/prostate.sh > prostate.md     (after make; a few seconds)
# Environment (all optional):
#   DATA_DIR          the *.gz sets (default: <repo>/../shared/datasets)
#   PROSTATE_STATS    all (default) or train: the rows of the standardization statistics
#   PROSTATE_LAMBDAS  the -L grid (default 1e-4:1e4:30)
#   PROSTATE_SEED     the fold seed of the main table (default 1)
#   PROSTATE_SEEDS    how many fold seeds in the robustness table (default 20; 0: none)
#   BENCH_BIN         directory with rls2-path, predict, datasets/standardize
#   BENCH_CACHE       decompressed data (default ${TMPDIR:-/tmp}/kmtk-bench)
# Exit status: 0; 1 when rls2-path or predict failed; 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}
BIN=${BENCH_BIN:-$repo}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
STATS=${PROSTATE_STATS:-all}
LAMBDAS=${PROSTATE_LAMBDAS:-1e-4:1e4:30}
SEED=${PROSTATE_SEED:-1}
SEEDS=${PROSTATE_SEEDS:-20}
UTIL="python3 $here/rls2util.py"
NAMES=lcavol,lweight,age,lbph,svi,lcp,gleason,pgg45
export OPENBLAS_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

for t in "$BIN/rls2-path" "$BIN/predict" "$BIN/datasets/standardize"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
command -v python3 >/dev/null || die "python3 not found"
for f in prostate.train prostate.test; do
    [ -f "$DATA_DIR/$f.gz" ] || die "$DATA_DIR/$f.gz not found (set DATA_DIR)"
done
case $STATS in all | train) ;; *) die "PROSTATE_STATS must be all or train, not '$STATS'" ;; esac
bench_dirs
mkdir -p "$work/bin/datasets" &&
    cp "$BIN/rls2-path" "$BIN/predict" "$work/bin/" &&
    cp "$BIN/datasets/standardize" "$work/bin/datasets/" || die "cannot copy the binaries"
BIN=$work/bin

tr=$(plain prostate.train) te=$(plain prostate.test)
if [ "$STATS" = all ]; then
    cat "$tr" "$te" >"$work/all"
    ref=$work/all
else
    ref=$tr
fi
"$BIN/datasets/standardize" --stats-from "$ref" "$tr" "$work/train" "$te" "$work/test" ||
    die "standardize failed"

status=0
# run SEED TAG: the CV path and its model; sets CH_LAMBDA, CH_K, MSE, SE.
run() {
    local seed=$1 tag=$2
    if ! "$BIN/rls2-path" -q --kernels linear -S trace -L "$LAMBDAS" -v 10 --one-se --seed "$seed" \
            --test "$work/test" -o "$work/$tag.csv" "$work/train" "$work/$tag.model" \
            >"$work/$tag.log" 2>&1; then
        say "rls2-path failed (seed $seed): $(tail -n 1 "$work/$tag.log")"
        status=1
        return 1
    fi
    if ! "$BIN/predict" "$work/test" "$work/$tag.model" "$work/$tag.pred" >/dev/null 2>&1; then
        say "predict failed (seed $seed)"
        status=1
        return 1
    fi
    read -r MSE SE < <($UTIL testerr "$work/$tag.pred" "$work/test")
    read -r CH_LAMBDA CH_K < <(awk -F, '$NF == 1 { print $1, $3 }' "$work/$tag.csv")
}

say "10-fold CV path, fold seed $SEED"
run "$SEED" main || exit 1
$UTIL coef "$work/main.model" "$NAMES" >"$work/coef"
icpt=$(awk '$1 == "intercept" { print $2 }' "$work/coef")

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- rls2-path.c common 2>/dev/null | head -c1)
echo "Prostate cancer (thesis 4.5.1, Experiment 2; Table 4.1): 67 training / 30 test rows,"
echo "inputs standardized with the statistics of $([ "$STATS" = all ] && echo "all 97 rows (as ESL)" || echo "the 67 training rows"),"
echo "rls2-path --kernels linear -S trace -L $LAMBDAS -v 10 --one-se --seed $SEED;"
echo "kmtk $commit${dirty:+ (rls2-path.c/common modified)}, $(date -u +%Y-%m-%d)."
echo
echo "Chosen lambda $CH_LAMBDA ($CH_K variables). Coefficients in standardized units"
echo "(w_k = d_k s_k z_k, thesis (4.7)); blank: not selected. Thesis = Table 4.1's RLS2 column;"
echo "ESL lasso and LS = ESL Table 3.3 (as quoted in Table 4.1)."
echo
echo "| term | kmtk RLS2 | thesis RLS2 | ESL lasso | ESL LS |"
echo "|---|---:|---:|---:|---:|"
printf '| intercept | %.3f | 2.452 | 2.468 | 2.465 |\n' "$icpt"
awk -v names="$NAMES" '
    BEGIN { n = split(names, nm, ",")
        split("0.544 0.207 - 0.104 0.170 - - 0.064", th, " ")
        split("0.533 0.169 - 0.002 0.094 - - -", la, " ")
        split("0.680 0.263 -0.141 0.210 0.305 -0.288 -0.021 0.267", ls, " ") }
    $1 ~ /^[0-9]+$/ { w[$1] = $7 }
    END { for (k = 1; k <= n; k++)
        printf "| %s | %s | %s | %s | %s |\n", nm[k], (k in w) ? sprintf("%.3f", w[k]) : "",
            th[k] == "-" ? "" : th[k], la[k] == "-" ? "" : la[k], ls[k] }' "$work/coef"
printf '| test error (MSE) | %.3f | 0.454 | 0.479 | 0.521 |\n' "$MSE"
printf '| std error | %.3f | 0.152 | 0.164 | 0.179 |\n' "$SE"
echo
echo "The path (fold seed $SEED; RMSE; \`<-\`: the chosen lambda):"
echo
echo "| lambda | variables | dof (4.11) | train RMSE | CV RMSE | CV se | test RMSE | |"
echo "|---:|---:|---:|---:|---:|---:|---:|---|"
awk -F, 'NR > 1 { printf "| %.4g | %d | %.2f | %.4f | %.4f | %.4f | %.4f | %s |\n",
    $1, $3, $6, $7, $8, $9, $10, $11 == 1 ? "<-" : "" }' "$work/main.csv"

say "coefficient profiles"
echo
echo "Coefficient profiles along the path (thesis Figure 4.3 as a table): the model of each"
echo "lambda (the path rerun up to it, -L lambda:1e4:row+1), w_k in standardized units:"
echo
echo "| lambda | dof | $(echo "$NAMES" | sed 's/,/ | /g') | test MSE |"
echo "|---:|---:|$(echo "$NAMES" | sed 's/[^,]*/---:/g; s/,/|/g')|---:|"
first=$(awk -F, 'NR == 2 { print $1 }' "$work/main.csv")
awk -F, 'NR > 1 { print NR - 2, $1, $6, $10 }' "$work/main.csv" | while read -r t lam dof rmse; do
    "$BIN/rls2-path" -q --kernels linear -S trace -L "$lam:$first:$((t + 1))" --no-dof "$work/train" \
        "$work/prof.model" >/dev/null 2>&1 || { echo "| $lam | failed |"; status=1; continue; }
    $UTIL coef "$work/prof.model" "$NAMES" | awk -v lam="$lam" -v dof="$dof" -v r="$rmse" -v names="$NAMES" '
        $1 ~ /^[0-9]+$/ { w[$1] = $7 }
        END { n = split(names, nm, ","); printf "| %.4g | %.2f |", lam, dof
            for (k = 1; k <= n; k++) printf " %s |", (k in w) ? sprintf("%.3f", w[k]) : ""
            printf " %.3f |\n", r * r }'
done

if [ "$SEEDS" -gt 0 ]; then
    say "fold seeds 1..$SEEDS"
    echo
    echo "The choice for other fold assignments (--seed 1..$SEEDS):"
    echo
    echo "| seed | lambda | variables | selected | test MSE | std error |"
    echo "|---:|---:|---:|---|---:|---:|"
    for s in $(seq 1 "$SEEDS"); do
        run "$s" "s$s" || continue
        sel=$($UTIL coef "$work/s$s.model" "$NAMES" | awk '$1 ~ /^[0-9]+$/ { printf "%s%s", sep, $2; sep = " " }')
        printf '| %d | %.4g | %d | %s | %.3f | %.3f |\n' "$s" "$CH_LAMBDA" "$CH_K" "$sel" "$MSE" "$SE"
        echo "$CH_K $MSE" >>"$work/seeds"
    done
    awk '{ k[$1]++; m += $2; n++ } END { printf "\nOver %d seeds: mean test MSE %.3f; variables chosen:", n, m / n
        for (v in k) printf " %s (%d seeds)", v, k[v]; print "." }' "$work/seeds"
fi
exit "$status"
