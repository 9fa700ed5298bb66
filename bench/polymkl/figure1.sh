#!/usr/bin/env bash
# bench/polymkl/figure1.sh - seed 002's Figure 1: the objective J against CPU time of
# Stoch (Algorithm 2 with Algorithm 3), Kloft (the closed form over all tuples) and UCD
# (uniform tuple, exact g_t), lambda = 1e-5, D = 3, one linear kernel per standardized
# feature, the same CPU budget for each. The training rows: the first ROWS of a seeded
# shuffle (Table 1's training sizes: german 350, ionosphere 140, ringnorm 500, waveform
# 500). Writes OUT_DIR/SET.SOLVER.csv (the traces of train -o) and prints a markdown table
# of J at 10%, 50% and 100% of the budget with the relative gap where evaluated; with FIG
# set, also the figure FIG (SVG: a panel per set, J against CPU seconds on a log axis, drawn by
# bench/okl/okl_figure from OUT_DIR/figure1.tsv).
# Usage: bench/polymkl/figure1.sh   (from the top of the tree after make; SETS, BUDGET (CPU
#        seconds per run, default 30), OUT_DIR, DATA_DIR, BIN, FIG in the environment)
set -eu
cd "$(dirname "$0")/../.."
DATA_DIR=${DATA_DIR:-../shared/datasets}
BUDGET=${BUDGET:-30}
SETS=${SETS:-"german.numer:350 ionosphere:140 ringnorm:500 waveform:500"}
OUT=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-polymkl-figure1}
BIN=${BIN:-.}
FIG=${FIG:-}
mkdir -p "$OUT"
: >"$OUT/figure1.long"
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# J of the last trace row at or before time t (CSV: iteration,seconds,J,active,g1,gap)
j_at() {
    awk -F, -v t="$2" 'NR > 1 && $2 <= t { j = $3; g = $6 } END { if (j == "") print "-"; else if (g == "nan") printf "%.6g", j; else printf "%.6g (gap %.2g)", j, g }' "$1"
}

echo "| set | rows | solver | iterations | J at $(awk -v b="$BUDGET" 'BEGIN { print 0.1 * b }') s | J at $(awk -v b="$BUDGET" 'BEGIN { print 0.5 * b }') s | J at $BUDGET s |"
echo "|---|---|---|---|---|---|---|"
for entry in $SETS; do
    set_name=${entry%%:*} rows=${entry##*:}
    if [ ! -f "$DATA_DIR/$set_name.gz" ]; then
        echo "| $set_name | - | (not in $DATA_DIR) | | | | |"
        continue
    fi
    gunzip -c "$DATA_DIR/$set_name.gz" | awk 'BEGIN { srand(1) } { print rand() "\t" $0 }' |
        sort -k1,1g | cut -f2- | head -n "$rows" >"$OUT/$set_name.train"
    for solver in stoch kloft ucd; do
        case $solver in
        stoch) opts="--iters 1000000000" ;;
        kloft) opts="-a kloft -e 1e-300 --iters 1000000000" ;;
        ucd)   opts="--sampler uniform --iters 1000000000" ;;
        esac
        "$BIN/train" -s polymkl -d 3 --lambda 1e-5 --time "$BUDGET" $opts \
            -o "$OUT/$set_name.$solver.csv" "$OUT/$set_name.train" "$OUT/$set_name.$solver.model" \
            >"$OUT/$set_name.$solver.out"
        it=$(awk '/^iterations = / { print $3 }' "$OUT/$set_name.$solver.out")
        f=$OUT/$set_name.$solver.csv
        awk -F, -v c="$set_name.$solver" 'NR > 1 { print c "\t" $2 "\t" $3 }' "$f" >>"$OUT/figure1.long"
        echo "| $set_name | $rows | $solver | $it | $(j_at "$f" "$(awk -v b="$BUDGET" 'BEGIN { print 0.1 * b }')") | $(j_at "$f" "$(awk -v b="$BUDGET" 'BEGIN { print 0.5 * b }')") | $(j_at "$f" "$BUDGET") |"
    done
done

# the figure: one row per trace point, a column per set and solver (gaps elsewhere)
if [ -n "$FIG" ]; then
    awk -F'\t' '!($1 in col) { col[$1] = 1; names[++n] = $1 } { x[NR] = $2; c[NR] = $1; v[NR] = $3 }
        END { printf "seconds";
              for (j = 1; j <= n; j++) printf "\t%s", names[j]; print "";
              for (i = 1; i <= NR; i++) { printf "%s", x[i];
                  for (j = 1; j <= n; j++) printf "\t%s", names[j] == c[i] ? v[i] : "-"; print "" } }' \
        "$OUT/figure1.long" | awk -F'\t' 'NR == 1 || $1 > 0' >"$OUT/figure1.tsv"
    panels=()
    for entry in $SETS; do
        set_name=${entry%%:*} rows=${entry##*:}
        grep -q "^$set_name\.stoch" "$OUT/figure1.long" || continue
        panels+=(-P "$set_name ($rows rows);J;log;$set_name.stoch=Stoch (Alg. 3){join},$set_name.kloft=Kloft{join dashed},$set_name.ucd=UCD{join dotted}")
    done
    "$BIN/bench/okl/okl_figure" --log-x --title "Figure 1: J against CPU time (lambda = 1e-5, D = 3, $BUDGET s each)" \
        --xlabel "CPU seconds" "${panels[@]}" "$OUT/figure1.tsv" "$FIG"
fi
