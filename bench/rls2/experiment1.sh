#!/usr/bin/env bash
# bench/rls2/experiment1.sh - thesis 4.5.1, Experiment 1 (Binary strings, Figure 4.1): lower
# bounds over the lambda path of the test RMSE against the training-set size, for linear
# RLS2 with scaling (4.12) (rls2-path --kernels linear -S trace) and the other methods of the
# figure, and the thesis' claim that after 12 examples RLS2 keeps d_1, d_2, d_3 ~ 1/3 and
# sets the other d_k to zero. A benchmark, not a test: it never fails on a number.
#
# Data: datasets/gen_binary_strings --seed SEED (250 strings of 100 bits, p = 0.5,
# y = x1 + x2 + x3 + N(0, 0.01^2); rows 1-150 train, 151-250 test). A training set of size
# N is the first N training rows; the test set is always the 100 test rows.
#
# Methods (columns of the first table; every RMSE is the minimum over the lambda grid):
#   rls2         linear RLS2, -S trace (= (4.12), no centering), no intercept
#                (rls2-path --no-intercept): the model y = x1 + x2 + x3 has none. The
#                thesis' setting. Checked against the same path on the "mirrored" file (every
#                row (x, y) plus (-x, -y), bench/rls2/rls2util.py mirror), where the default
#                output centering subtracts mean(y) = 0: with linear kernels and trace
#                scaling its objective (4.1) is exactly twice the un-mirrored, intercept-free
#                one at the same lambda (the loss doubles, every s_k halves), so the best RMSE
#                must agree (the notes give the largest difference). A build of rls2-path
#                without --no-intercept gets the mirrored file instead.
#   rls2+icpt    rls2-path as it is on the raw file: y centered by its training mean, the
#                0/1 inputs not centered (the intercept then has to be built from features)
#   rls2-center  inputs centered by their training means (rls2util.py center), y centered
#                by rls2-path; -S trace then gives the centered variant of (4.12)
#   ridge        RLS with the linear kernel: kmtk train -s rls -c 1/lambda -e 1e-6 (no bias)
#   ideal        RLS with the "ideal" kernel (4.15): train -s rls on features 1-3 only
#   rbf          RLS with exp(-0.005 ||x - x'||^2): train -s rls -t rbf -g 0.005
#   lasso        R glmnet, no intercept, no standardization (bench/rls2/lasso_curve.R);
#                skipped when Rscript or the glmnet package is missing
# The second table: for rls2 at its best-test lambda, the model of that lambda (the same path
# rerun up to that lambda: -L lambda*:lambda_max:row+1, same lambdas and warm starts; there
# is no option to choose a lambda by test error) and its d: how many d_k > 0, d_1..d_3, their
# sum, the largest other d_k and how many other d_k exceed 0.01; and the smallest lambda of
# the path whose model keeps kernels 1, 2, 3 and no other (d_k = 0 exactly), with its RMSE.
#
# Usage: bench/rls2/experiment1.sh > exp1.md      (after make; about a minute on 2 cores)
# Environment (all optional):
#   EXP1_SIZES    training-set sizes (default: 1-15 20 25 30 40 50 60 80 100 125 150)
#   EXP1_LAMBDAS  the lambda grid MIN:MAX:N for every method (default 1e-6:1e4:41; ridge,
#                 ideal and rbf use C = 1/lambda)
#   EXP1_SEED     gen_binary_strings --seed (default 1)
#   EXP1_METHODS  subset of "rls2 rls2+icpt rls2-center ridge ideal rbf lasso" (default all)
#   BENCH_BIN     directory with rls2-path, train, predict, datasets/gen_binary_strings
#                 (default: the repository)
# Exit status: 0; 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BIN=${BENCH_BIN:-$repo}
SIZES=${EXP1_SIZES:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 20 25 30 40 50 60 80 100 125 150}
LAMBDAS=${EXP1_LAMBDAS:-1e-6:1e4:41}
SEED=${EXP1_SEED:-1}
METHODS=${EXP1_METHODS:-rls2 rls2+icpt rls2-center ridge ideal rbf lasso}
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}   # not used: the data are generated
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
UTIL="python3 $here/rls2util.py"
export OPENBLAS_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

for t in "$BIN/rls2-path" "$BIN/train" "$BIN/predict" "$BIN/datasets/gen_binary_strings"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
command -v python3 >/dev/null || die "python3 not found"
has() { case " $METHODS " in *" $1 "*) return 0 ;; esac; return 1; }
if has lasso && ! { command -v Rscript >/dev/null &&
                    Rscript -e 'suppressMessages(library(glmnet))' >/dev/null 2>&1; }; then
    say "Rscript or the R package glmnet missing: no lasso column (apt-get install r-cran-glmnet)"
    METHODS=${METHODS/lasso/}
fi
NOI=
"$BIN/rls2-path" -h 2>/dev/null | grep -q -- --no-intercept && NOI=--no-intercept
IFS=: read -r LMIN LMAX NL <<<"$LAMBDAS"
[ -n "${NL:-}" ] || die "EXP1_LAMBDAS must be MIN:MAX:N, not '$LAMBDAS'"
bench_dirs
# a snapshot of the binaries: a rebuild during the run does not change them
mkdir -p "$work/bin/datasets" &&
    cp "$BIN/rls2-path" "$BIN/train" "$BIN/predict" "$work/bin/" &&
    cp "$BIN/datasets/gen_binary_strings" "$work/bin/datasets/" || die "cannot copy the binaries"
BIN=$work/bin

# The lambda grid of rls2-path -L (N values log-spaced from MAX down to MIN), one per line.
lambda_grid() {
    awk -v lo="$LMIN" -v hi="$LMAX" -v n="$NL" 'BEGIN {
        for (t = 0; t < n; t++) printf "%.10g\n", n == 1 ? hi : exp(log(hi) + (log(lo) - log(hi)) * t / (n - 1)) }'
}

# rls2_best FILE TEST TAG [extra rls2-path options]: the path with --test; prints
# "row lambda rmse lambdaspec" of the best test RMSE, or "n/a" when rls2-path fails.
rls2_best() {
    local f=$1 te=$2 tag=$3
    shift 3
    if "$BIN/rls2-path" -q --kernels linear -S trace -L "$LAMBDAS" --no-dof --test "$te" \
            -o "$work/$tag.csv" "$@" "$f" "$work/$tag.model" >"$work/$tag.log" 2>&1; then
        $UTIL best "$work/$tag.csv" test_rmse min
    else
        echo "n = $n, $tag: rls2-path failed: $(tail -n 1 "$work/$tag.log")" >>"$work/notes"
        echo "n/a"
    fi
}

# krls_best FILE TEST [train options]: train -s rls over C = 1/lambda; prints the smallest
# test RMSE and its lambda.
krls_best() {
    local f=$1 te=$2 lam c mse best=
    shift 2
    for lam in $(lambda_grid); do
        c=$(awk -v l="$lam" 'BEGIN { printf "%.10g", 1 / l }')
        if ! "$BIN/train" -q -s rls -e 1e-6 -c "$c" "$@" "$f" "$work/k.model" >/dev/null 2>"$work/k.err"; then
            echo "n = $n: train -s rls -c $c $* failed: $(tail -n 1 "$work/k.err")" >>"$work/notes"
            continue
        fi
        mse=$("$BIN/predict" "$te" "$work/k.model" "$work/k.pred" | awk '/^Mean squared error/ { print $5 }')
        best=$(awk -v b="$best" -v m="$mse" -v l="$lam" 'BEGIN {
            split(b, a, " "); r = sqrt(m); if (b == "" || r < a[1]) printf "%.6g %s", r, l; else print b }')
    done
    echo "${best:-n/a}"
}

say "generating the Binary strings data (seed $SEED)"
"$BIN/datasets/gen_binary_strings" --seed "$SEED" "$work/bs.train" "$work/bs.test" ||
    die "gen_binary_strings failed"
$UTIL keep "$work/bs.test" "$work/bs3.test" 1-3
: >"$work/notes"

declare -A LASSO
if has lasso; then
    say "lasso learning curve (R glmnet)"
    while read -r n r _ _; do LASSO[$n]="$r"; done < <(
        Rscript "$here/lasso_curve.R" "$work/bs.train" "$work/bs.test" "$SIZES" "$LMIN" "$LMAX" "$NL")
fi

cell() { [ -n "$1" ] && [ "$1" != n/a ] && printf '%.4f' "$1" || printf 'n/a'; }
T1="$work/t1" T2="$work/t2"
: >"$T1"
: >"$T2"
t_start=$EPOCHREALTIME
for n in $SIZES; do
    say "training-set size $n"
    head -n "$n" "$work/bs.train" >"$work/tr"
    row="| $n"
    for m in rls2 rls2+icpt rls2-center ridge ideal rbf lasso; do
        has "$m" || continue
        v=n/a
        case $m in
        rls2)
            $UTIL mirror "$work/tr" "$work/trm"
            if [ -n "$NOI" ]; then
                trm=$work/tr
                read -r _ _ vm _ < <(rls2_best "$work/trm" "$work/bs.test" rls2-mirror)
            else
                trm=$work/trm vm=
            fi
            read -r brow blam v spec < <(rls2_best "$trm" "$work/bs.test" rls2 $NOI)
            [ -n "$vm" ] && [ "$vm" != n/a ] && [ -n "$v" ] &&
                echo "$n $v $vm" >>"$work/mirror"
            if [ "$brow" != n/a ]; then
                # the smallest lambda whose model keeps exactly kernels 1, 2, 3 (if any)
                three="- -"
                read -r r3 l3 v3 < <(awk -F, 'NR > 1 && $3 == 3 { r = NR - 2; l = $1; v = $10 }
                    END { if (r != "") print r, l, v }' "$work/rls2.csv")
                first=$(awk -F, 'NR == 2 { print $1 }' "$work/rls2.csv")
                if [ -n "${r3:-}" ] &&
                    "$BIN/rls2-path" -q --kernels linear -S trace -L "$l3:$first:$((r3 + 1))" --no-dof \
                        $NOI "$trm" "$work/three.model" >/dev/null 2>&1 &&
                    [ "$($UTIL coef "$work/three.model" | awk '$1 ~ /^[0-9]+$/ { printf "%s,", $1 }')" = "1,2,3," ]; then
                    three="$l3 $v3"
                fi
                # the model of the best lambda: the same path, stopped there
                "$BIN/rls2-path" -q --kernels linear -S trace -L "$spec" --no-dof $NOI "$trm" \
                    "$work/best.model" >/dev/null 2>&1 &&
                $UTIL coef "$work/best.model" | awk -v n="$n" -v lam="$blam" -v r="$v" -v three="$three" '
                    $1 ~ /^[0-9]+$/ { d[$1] = $5; if ($5 > 0) nz++
                        if ($1 > 3) { if ($5 > mo) mo = $5; if ($5 > 0.01) big++ } }
                    END { s = d[1] + d[2] + d[3]; split(three, t, " ")
                        printf "| %d | %.3g | %.4f | %d | %.3f | %.3f | %.3f | %.3f | %.2g | %d | %s | %s |\n",
                            n, lam, r, nz, d[1], d[2], d[3], s, mo, big,
                            t[1] == "-" ? "-" : sprintf("%.3g", t[1]), t[2] == "-" ? "-" : sprintf("%.4f", t[2]) }' >>"$T2"
            fi
            ;;
        rls2+icpt)
            read -r _ _ v _ < <(rls2_best "$work/tr" "$work/bs.test" rls2+icpt) ;;
        rls2-center)
            $UTIL center "$work/tr" "$work/bs.test" "$work/trc" "$work/tec"
            read -r _ _ v _ < <(rls2_best "$work/trc" "$work/tec" rls2-center) ;;
        ridge)
            read -r v _ < <(krls_best "$work/tr" "$work/bs.test") ;;
        ideal)
            $UTIL keep "$work/tr" "$work/tr3" 1-3
            read -r v _ < <(krls_best "$work/tr3" "$work/bs3.test") ;;
        rbf)
            read -r v _ < <(krls_best "$work/tr" "$work/bs.test" -t rbf -g 0.005) ;;
        lasso)
            v=${LASSO[$n]:-n/a}; [ "$v" = NA ] && v=n/a ;;
        esac
        row="$row | $(cell "$v")"
    done
    echo "$row |" >>"$T1"
done
secs=$(awk -v a="${t_start/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.0f", b - a }')

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- rls2-path.c common 2>/dev/null | head -c1)
echo "Binary strings (thesis 4.5.1, Experiment 1): gen_binary_strings --seed $SEED, 150 train /"
echo "100 test rows; lambda grid $LAMBDAS; kmtk $commit${dirty:+ (rls2-path.c/common modified)};"
echo "$(date -u +%Y-%m-%d), $(getconf _NPROCESSORS_ONLN) cores; ${secs} s."
echo
echo "Lower bounds over lambda of the test RMSE (noise sd 0.01):"
echo
hdr="| n"; sep="|---:"
for m in rls2 rls2+icpt rls2-center ridge ideal rbf lasso; do
    has "$m" || continue
    hdr="$hdr | $m"; sep="$sep|---:"
done
echo "$hdr |"
echo "$sep|"
cat "$T1"
if [ -s "$T2" ]; then
    echo
    echo "rls2 (no intercept) at its best-test lambda: the weights d_k of the model:"
    echo
    echo "| n | lambda* | test RMSE | d_k > 0 | d_1 | d_2 | d_3 | d_1+d_2+d_3 | max other d_k | other d_k > 0.01 | smallest lambda with d = (d_1, d_2, d_3) only | its test RMSE |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    cat "$T2"
    echo
    awk -F'|' '$2 + 0 >= 12 { s = $9 + 0; o = $10 + 0; if (min == "" || s < min) min = s
               if (o > mo) mo = o; if ($11 + 0 > 0) big++; k++ }
        END { if (k) printf "Claim check (n >= 12, %d sizes): d_1+d_2+d_3 >= %.3f; largest other d_k %.2g; sizes with another d_k > 0.01: %d.\n", k, min, mo, big + 0 }' "$T2"
fi
if [ -s "$work/mirror" ]; then
    awk '{ d = $2 - $3; if (d < 0) d = -d; r = d / $3; if (r > m) { m = r; n = $1 } }
        END { printf "\nCheck: rls2 --no-intercept against the mirrored file: largest relative difference of the best RMSE %.2g (n = %s).\n", m, n }' "$work/mirror"
elif has rls2; then
    echo
    echo "rls2: this rls2-path has no --no-intercept: the mirrored files were used."
fi
if [ -s "$work/notes" ]; then
    echo
    echo "Notes:"
    sed 's/^/- /' "$work/notes"
fi
exit 0
