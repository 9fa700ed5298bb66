#!/usr/bin/env bash
# bench/polymkl/figure2.sh - seed 002's Figure 2: datasets/gen_poly_terms (x ~ U[-1,1]^r,
# y = the sum of 10 distinct monomials of degree <= 3, 500 / 1000 / 1000 rows) for r in RS;
# test MSE (normalised by the test variance of y) and training CPU time of
#   Stoch    train -s polymkl -d 3 (Algorithm 2 + 3, ITERS iterations),
#   Kloft    train -s polymkl -d 3 -a kloft (all tuples; r <= KLOFT_MAX_R),
#   Uniform  train -s rls -t poly -d 3 -g 1 -r 1 on standardized features: (1 + sum kappa)^3,
# lambda chosen on the validation rows from LAMBDAS (log-spaced, ascending; rls: -c
# 1/lambda; Stoch: one run of the path -L MIN:MAX:N --valid, theta warm-started from lambda
# to lambda, ITERS iterations each). CPU seconds: the sum over the lambdas (user + system,
# /usr/bin/time). Prints a markdown table; with FIG set, also the figure FIG (SVG: MSE and
# CPU seconds against r, drawn by bench/okl/okl_figure from OUT_DIR/figure2.tsv).
# MERGE_TSV: the figure2.tsv of an earlier run (other r, same settings); its rows are drawn
# with this run's, in the order of r.
# Usage: bench/polymkl/figure2.sh   (from the top of the tree after make; RS, LAMBDAS, ITERS,
#        KLOFT_MAX_R, SEED, OUT_DIR, BIN, FIG, MERGE_TSV in the environment)
set -eu
cd "$(dirname "$0")/../.."
RS=${RS:-"5 10 20 30 40 50 60 70 80 90 100"}
LAMBDAS=${LAMBDAS:-"1e-6 1e-4 1e-2 1"}
ITERS=${ITERS:-2000}
KLOFT_MAX_R=${KLOFT_MAX_R:-25}
SEED=${SEED:-1}
OUT=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-polymkl-figure2}
BIN=${BIN:-.}
FIG=${FIG:-}
mkdir -p "$OUT"
set -- $LAMBDAS
LMIN=$1 NL=$#
LMAX=${!NL}
printf 'r\tstoch_mse\tkloft_mse\tuniform_mse\tstoch_cpu\tkloft_cpu\tuniform_cpu\n' >"$OUT/figure2.tsv"
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
command -v /usr/bin/time >/dev/null || { echo "figure2.sh: needs /usr/bin/time" >&2; exit 2; }

mse() {   # predictions file, data file -> mean squared error
    paste -d' ' "$1" <(cut -d' ' -f1 "$2") | awk '{ d = $1 - $2; s += d * d } END { printf "%.6g", s / NR }'
}
var() {
    cut -d' ' -f1 "$1" | awk '{ s += $1; q += $1 * $1 } END { printf "%.6g", q / NR - (s / NR)^2 }'
}

# runs one method over the lambdas: prints "normalised-test-MSE cpu-seconds best-lambda"
run() {
    local method=$1 r=$2 best="" bestv="" cpu=0 lam
    if [ "$method" = stoch ]; then   # the warm-started path, chosen on the validation rows
        local m=$OUT/r$r.stoch.model
        /usr/bin/time -f '%U %S' -o "$OUT/time" "$BIN/train" -s polymkl -d 3 -L "$LMIN:$LMAX:$NL" \
            --valid "$OUT/r$r.valid" --iters "$ITERS" "$OUT/r$r.train" "$m" >"$OUT/r$r.stoch.out"
        best=$(awk '/^chosen lambda = / { print $4 }' "$OUT/r$r.stoch.out")
        "$BIN/predict" -q "$OUT/r$r.test" "$m" "$OUT/pred"
        tmse=$(mse "$OUT/pred" "$OUT/r$r.test")
        echo "$(awk -v a="$tmse" -v b="$(var "$OUT/r$r.test")" 'BEGIN { printf "%.4g", a / b }') $(awk '{ print $1 + $2 }' "$OUT/time") $best"
        return
    fi
    for lam in $LAMBDAS; do
        local m=$OUT/r$r.$method.$lam.model
        case $method in
        stoch) cmd=("$BIN/train" -q -s polymkl -d 3 --lambda "$lam" --iters "$ITERS" "$OUT/r$r.train" "$m") ;;
        kloft) cmd=("$BIN/train" -q -s polymkl -d 3 -a kloft -e 1e-8 --iters 200 --lambda "$lam" "$OUT/r$r.train" "$m") ;;
        uniform) cmd=("$BIN/train" -q -s rls -t poly -d 3 -g 1 -r 1 -c "$(awk -v l="$lam" 'BEGIN { printf "%.17g", 1 / l }')" -e 1e-8 "$OUT/r$r.std.train" "$m") ;;
        esac
        /usr/bin/time -f '%U %S' -o "$OUT/time" "${cmd[@]}" >/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; }
        cpu=$(awk -v c="$cpu" '{ print c + $1 + $2 }' "$OUT/time")
        local vf=$OUT/r$r.valid tf=$OUT/r$r.test
        [ "$method" = uniform ] && vf=$OUT/r$r.std.valid tf=$OUT/r$r.std.test
        "$BIN/predict" -q "$vf" "$m" "$OUT/pred"
        local v; v=$(mse "$OUT/pred" "$vf")
        if [ -z "$bestv" ] || awk -v a="$v" -v b="$bestv" 'BEGIN { exit !(a < b) }'; then
            bestv=$v best=$lam
            "$BIN/predict" -q "$tf" "$m" "$OUT/pred"
            tmse=$(mse "$OUT/pred" "$tf")
        fi
    done
    echo "$(awk -v a="$tmse" -v b="$(var "$OUT/r$r.test")" 'BEGIN { printf "%.4g", a / b }') $cpu $best"
}

echo "| r | Stoch MSE | Stoch CPU s | Kloft MSE | Kloft CPU s | Uniform MSE | Uniform CPU s |"
echo "|---|---|---|---|---|---|---|"
for r in $RS; do
    "$BIN/datasets/gen_poly_terms" -r "$r" --seed "$SEED" "$OUT/r$r"
    "$BIN/datasets/standardize" "$OUT/r$r.train" "$OUT/r$r.std.train" "$OUT/r$r.valid" \
        "$OUT/r$r.std.valid" "$OUT/r$r.test" "$OUT/r$r.std.test" 2>/dev/null
    read -r sm sc sl <<<"$(run stoch "$r")"
    if [ "$r" -le "$KLOFT_MAX_R" ]; then
        read -r km kc kl <<<"$(run kloft "$r")"
    else
        km=- kc=- kl=-
    fi
    read -r um uc ul <<<"$(run uniform "$r")"
    echo "| $r | $sm (lambda $sl) | $sc | $km (lambda $kl) | $kc | $um (lambda $ul) | $uc |"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$sm" "$km" "$um" "$sc" "$kc" "$uc" >>"$OUT/figure2.tsv"
done
if [ -n "${MERGE_TSV:-}" ]; then
    { head -n 1 "$OUT/figure2.tsv"; { tail -n +2 "$MERGE_TSV"; tail -n +2 "$OUT/figure2.tsv"; } | sort -k1,1n; } \
        >"$OUT/figure2.merged" && mv "$OUT/figure2.merged" "$OUT/figure2.tsv"
fi
if [ -n "$FIG" ]; then
    "$BIN/bench/okl/okl_figure" -x r --title "Figure 2: 10 monomials of degree <= 3 in r variables (500 training rows)" \
        -P "Test MSE / variance of y;MSE;log;stoch_mse=Stoch (Alg. 3),kloft_mse=Kloft{dashed},uniform_mse=Uniform (1 + x'x')^3{dotted}" \
        -P "Training time (the lambdas);CPU seconds;log;stoch_cpu=Stoch (Alg. 3),kloft_cpu=Kloft{dashed},uniform_cpu=Uniform (1 + x'x')^3{dotted}" \
        "$OUT/figure2.tsv" "$FIG"
fi
