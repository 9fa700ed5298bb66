#!/usr/bin/env bash
# bench/polymkl/figure3.sh - seed 002's Figure 3: test MSE on Table 1's sets, SPLITS random
# splits, inputs (datasets/standardize) and outputs standardized on the training rows,
# lambda chosen on the validation rows from LAMBDAS, test MSE divided by the training
# variance of y:
#   Uniform d = 1, 2, 3   train -s rls -t poly -d d -g 1 -r 1 -c 1/lambda ((1 + x'x')^d;
#                         d = 1 is the linear ridge anchor)
#   Stoch                 train -s polymkl -d 3 (ITERS iterations)
#   Stoch prior           the same with --rho2 1,1,1,4
# Stoch runs the path -L MIN:MAX:N --valid over LAMBDAS (log-spaced, ascending), theta
# warm-started from lambda to lambda, ITERS iterations each.
# Sizes (training:validation:test) fit the files of ../shared/datasets: Table 1's, except
# splice 500:200:300 (the file has the 1,000 training rows of LIBSVM's splice only; Table 1:
# 500:1000:1491) and waveform, ringnorm 500:1000:1500 (the files have 3,000 rows; Table 1:
# test 2000).
# The splits are the outer loop (split 1 of every set, then split 2, ...), so a run cut
# short leaves every set with the same number of splits, give or take one; results are
# appended to OUT_DIR/NAME.results (one line per split) and CPU time per split to
# OUT_DIR/NAME.time ("wall user sys" of the split's processes). FIRST_SPLIT continues a run;
# SUMMARY_ONLY=1 only prints the table (and FIG) from what OUT_DIR holds.
# Prints a markdown table: mean and standard deviation over the splits; with FIG set, also
# the figure FIG (SVG: mean +- standard deviation per set, drawn by bench/okl/okl_figure
# from OUT_DIR/figure3.tsv).
# Usage: bench/polymkl/figure3.sh   (from the top of the tree after make; SETS, SPLITS,
#        FIRST_SPLIT, SUMMARY_ONLY, LAMBDAS, ITERS, OUT_DIR, DATA_DIR, BIN, FIG in the
#        environment)
set -eu
cd "$(dirname "$0")/../.."
DATA_DIR=${DATA_DIR:-../shared/datasets}
SETS=${SETS:-"german.numer:350:150:500 ionosphere:140:36:175 sonar:83:21:104 splice_scale:500:200:300 waveform:500:1000:1500 ringnorm:500:1000:1500"}
FIRST_SPLIT=${FIRST_SPLIT:-1}
SUMMARY_ONLY=${SUMMARY_ONLY:-0}
SPLITS=${SPLITS:-10}
LAMBDAS=${LAMBDAS:-"1e-4 1e-2 1 100 1e4"}
ITERS=${ITERS:-1000}
OUT=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-polymkl-figure3}
BIN=${BIN:-.}
FIG=${FIG:-}
mkdir -p "$OUT"
set -- $LAMBDAS
LMIN=$1 NL=$#
LMAX=${!NL}
printf 'set\tu1\tu1_lo\tu1_hi\tu2\tu2_lo\tu2_hi\tu3\tu3_lo\tu3_hi\tstoch\tstoch_lo\tstoch_hi\tprior\tprior_lo\tprior_hi\n' >"$OUT/figure3.tsv"
setno=0 setnames=""
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
methods=(u1 u2 u3 stoch prior)

mse() {   # predictions, data -> mean squared error
    paste -d' ' "$1" <(cut -d' ' -f1 "$2") | awk '{ d = $1 - $2; s += d * d } END { printf "%.6g", s / NR }'
}
var() {
    cut -d' ' -f1 "$1" | awk '{ s += $1; q += $1 * $1 } END { printf "%.6g", q / NR - (s / NR)^2 }'
}
train_one() {   # method lambda train model
    case $1 in
    u1|u2|u3) "$BIN/train" -q -s rls -t poly -d "${1#u}" -g 1 -r 1 -e 1e-6 \
                  -c "$(awk -v l="$2" 'BEGIN { printf "%.17g", 1 / l }')" "$3" "$4" ;;
    stoch) "$BIN/train" -q -s polymkl -d 3 --lambda "$2" --iters "$ITERS" "$3" "$4" ;;
    prior) "$BIN/train" -q -s polymkl -d 3 --rho2 1,1,1,4 --lambda "$2" --iters "$ITERS" "$3" "$4" ;;
    esac
}

ystd() {   # standardizes the labels of the files given with the training file's (the first)
    local m sd f
    read -r m sd < <(cut -d' ' -f1 "$1" | awk '{ s += $1; q += $1 * $1 } END { m = s / NR; printf "%.17g %.17g\n", m, sqrt((q - NR * m * m) / (NR - 1)) }')
    for f in "$@"; do
        awk -v m="$m" -v sd="$sd" '{ $1 = sprintf("%.17g", ($1 - m) / sd); print }' "$f" >"$f.y" && mv "$f.y" "$f"
    done
}

run_split() {   # name ntr nva nte split: appends one line to OUT/name.results
    local name=$1 ntr=$2 nva=$3 nte=$4 split=$5 line="" m best tm lam v vy
    awk -v s="$split" 'BEGIN { srand(s) } { print rand() "\t" $0 }' "$OUT/$name.all" |
        sort -k1,1g | cut -f2- >"$OUT/shuf"
    head -n "$ntr" "$OUT/shuf" >"$OUT/raw.train"
    tail -n +"$((ntr + 1))" "$OUT/shuf" | head -n "$nva" >"$OUT/raw.valid"
    tail -n +"$((ntr + nva + 1))" "$OUT/shuf" | head -n "$nte" >"$OUT/raw.test"
    "$BIN/datasets/standardize" "$OUT/raw.train" "$OUT/s.train" "$OUT/raw.valid" "$OUT/s.valid" \
        "$OUT/raw.test" "$OUT/s.test" 2>/dev/null
    ystd "$OUT/s.train" "$OUT/s.valid" "$OUT/s.test"
    vy=$(var "$OUT/s.train")
    for m in "${methods[@]}"; do
        best="" tm=""
        if [ "$m" = stoch ] || [ "$m" = prior ]; then   # the warm-started path
            prior=()
            [ "$m" = prior ] && prior=(--rho2 1,1,1,4)
            "$BIN/train" -q -s polymkl -d 3 "${prior[@]}" -L "$LMIN:$LMAX:$NL" --valid "$OUT/s.valid" \
                --iters "$ITERS" "$OUT/s.train" "$OUT/m.model" 2>/dev/null &&
                "$BIN/predict" -q "$OUT/s.test" "$OUT/m.model" "$OUT/p" && tm=$(mse "$OUT/p" "$OUT/s.test")
            line="$line $(awk -v a="$tm" -v b="$vy" 'BEGIN { printf "%.6g", a / b }')"
            continue
        fi
        for lam in $LAMBDAS; do
            train_one "$m" "$lam" "$OUT/s.train" "$OUT/m.model" 2>/dev/null || continue
            "$BIN/predict" -q "$OUT/s.valid" "$OUT/m.model" "$OUT/p"
            v=$(mse "$OUT/p" "$OUT/s.valid")
            if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then
                best=$v
                "$BIN/predict" -q "$OUT/s.test" "$OUT/m.model" "$OUT/p"
                tm=$(mse "$OUT/p" "$OUT/s.test")
            fi
        done
        line="$line $(awk -v a="$tm" -v b="$vy" 'BEGIN { printf "%.6g", a / b }')"
    done
    echo "$line" >>"$OUT/$name.results"
}

if [ "$SUMMARY_ONLY" != 1 ]; then
    runnable=""
    for entry in $SETS; do
        IFS=: read -r name ntr nva nte <<<"$entry"
        [ -f "$DATA_DIR/$name.gz" ] || { echo "figure3.sh: $name not in $DATA_DIR" >&2; continue; }
        gunzip -c "$DATA_DIR/$name.gz" | awk '{ print }' >"$OUT/$name.all"   # a last line without newline counts
        if [ "$(wc -l <"$OUT/$name.all")" -lt "$((ntr + nva + nte))" ]; then
            echo "figure3.sh: $name has fewer than $((ntr + nva + nte)) rows" >&2
            continue
        fi
        [ "$FIRST_SPLIT" = 1 ] && : >"$OUT/$name.results" && : >"$OUT/$name.time"
        runnable="$runnable $entry"
    done
    TIMEFORMAT='%R %U %S'
    for split in $(seq "$FIRST_SPLIT" "$SPLITS"); do
        for entry in $runnable; do
            IFS=: read -r name ntr nva nte <<<"$entry"
            { time run_split "$name" "$ntr" "$nva" "$nte" "$split"; } 2>>"$OUT/$name.time"
            echo "figure3.sh: split $split $name done $(date -u +%H:%M:%S)" >&2
        done
    done
fi

echo "| set | splits | Uniform d=1 (linear) | Uniform d=2 | Uniform d=3 | Stoch | Stoch, prior 1,1,1,4 | CPU s per split (wall) |"
echo "|---|---|---|---|---|---|---|---|"
for entry in $SETS; do
    IFS=: read -r name ntr nva nte <<<"$entry"
    [ -s "$OUT/$name.results" ] || { echo "| $name | 0 | not measured | | | | | |"; continue; }
    cpu=$(awk '{ u += $2 + $3; w += $1 } END { printf "%.1f (%.1f)", NR ? u / NR : 0, NR ? w / NR : 0 }' "$OUT/$name.time" 2>/dev/null || echo -)
    awk -v name="$name" -v cpu="$cpu" -v sz="$ntr/$nva/$nte" '{ for (k = 1; k <= NF; k++) { s[k] += $k; q[k] += $k * $k } }
        END { printf "| %s (%s) | %d |", name, sz, NR; for (k = 1; k <= 5; k++) { m = s[k] / NR; sd = NR > 1 ? sqrt((q[k] - NR * m * m) / (NR - 1)) : 0; printf " %.3f +- %.3f |", m, sd } print " " cpu " |" }' \
        "$OUT/$name.results"
    setno=$((setno + 1))
    setnames="$setnames$setno $name\n"
    awk -v x="$setno" '{ for (k = 1; k <= NF; k++) { s[k] += $k; q[k] += $k * $k } }
        END { printf "%d", x; for (k = 1; k <= 5; k++) { m = s[k] / NR; sd = NR > 1 ? sqrt((q[k] - NR * m * m) / (NR - 1)) : 0; printf "\t%.6g\t%.6g\t%.6g", m, m - sd, m + sd } print "" }' \
        "$OUT/$name.results" >>"$OUT/figure3.tsv"
done
if [ -n "$FIG" ]; then
    "$BIN/bench/okl/okl_figure" -x set --title "Figure 3: test MSE / training variance of y (${FIG_SPLITS:-$SPLITS} splits, mean +- sd)" \
        --xlabel "data set" \
        -P "Test MSE;normalised MSE;lin;u1/u1_lo/u1_hi=Uniform d=1 (linear ridge){dashed},u2=Uniform d=2{dotted},u3=Uniform d=3{dotted open},stoch/stoch_lo/stoch_hi=Stoch (Alg. 3),prior=Stoch with the prior (rho2 1 1 1 4){dashdot};sets: $(printf "$setnames" | tr '\n' ' ')" \
        "$OUT/figure3.tsv" "$FIG"
fi
