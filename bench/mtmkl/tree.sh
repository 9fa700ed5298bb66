#!/usr/bin/env bash
# bench/mtmkl/tree.sh - seed 004's section 4 experiment: 32 tasks at the leaves of a binary
# tree (datasets/gen_mtl_tree), mean-over-tasks ROC AUC and ROC curves (the paper's Figure
# 1b) of Individual (G = I), Union (G = 11'), Vanilla (every tree node a group, theta fixed)
# and MT-MKL p = 1, 2, 3 (the same groups, theta learned), over DRAWS draws of the tree and
# its rows, C chosen per draw and method on a validation draw (same tree, other rows), for
# the noise's standard deviation s = 20 as printed (Bayes AUC about 0.64) and s = sqrt(20).
# Prints a markdown table per s (mean, standard deviation, median over draws; the C chosen)
# and draws the mean ROC curves as an SVG per s.
#
# The ROC curves are the test rows' decision values (predict -d) per task: the points
# (FPR, TPR) at every distinct threshold (tied values: one diagonal step, as the AUC counts
# ties as one half), read at FPR = 0, 1/GRID, ..., 1 by linear interpolation between
# consecutive points (the largest TPR where the curve is vertical); then averaged vertically
# (at each FPR) over the tasks of a draw and over the draws. The AUC in the table is the
# mean over tasks and draws of each task's exact AUC (a rank count).
#
# Usage: bench/mtmkl/tree.sh   (from anywhere, after make; the repository is this script's)
# Environment (all optional):
#   DRAWS (10), CS (the C grid: 1e-6 ... 1, 100), SIGMAS ("20 4.47213595499958"), GRID (100:
#   FPR steps of the curves), TEST_N (1000) and VAL_N (200): test and validation rows per
#   class per task, BIN (where train, predict, datasets/gen_mtl_tree and
#   bench/okl/okl_figure are; default: the repository), OUT_DIR (tables and figures; default
#   ${TMPDIR:-/tmp}/kmtk-mtmkl-tree), FIG_DIR (when set, the figures are copied there as
#   mtmkl-figure1b.svg for s = sqrt(20) and mtmkl-figure1b-sS.svg for any other s),
#   DRAW_FIRST (1: the draws are DRAW_FIRST .. DRAWS, e.g. to split a run in two
#   processes whose files are joined and reported by REPORT_ONLY),
#   METHODS (a subset of "individual union vanilla mtmkl1 mtmkl2 mtmkl3", the default),
#   REPORT_ONLY (1: no runs; the tables and figures from OUT_DIR's files of an earlier or
#   interrupted run, its finished draws).
# Files in OUT_DIR per s: auc-S.tsv (method, draw, C, AUC), valid-S.tsv (method, draw, C,
# validation AUC), roc-S.tsv (method, draw, mean TPR over the tasks at each FPR),
# roc-mean-S.tsv (the figure's table), figure1b-S.svg.
set -eu
cd "$(dirname "$0")/../.."
DRAWS=${DRAWS:-10}
CS=${CS:-"0.000001 0.00001 0.0001 0.001 0.01 0.1 1 100"}
SIGMAS=${SIGMAS:-"20 4.47213595499958"}
GRID=${GRID:-100}
TEST_N=${TEST_N:-1000}
VAL_N=${VAL_N:-200}
OUT=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-mtmkl-tree}
mkdir -p "$OUT"
BIN=${BIN:-.}
T=$BIN/train P=$BIN/predict G=$BIN/datasets/gen_mtl_tree FIG=$BIN/bench/okl/okl_figure
export LC_ALL=C

# test file and decision values, one row per line, sorted by task then decision value
by_task() {
    paste -d' ' <(cut -d' ' -f1,2 "$1") "$2" | sed 's/qid://' | sort -k2,2n -k3,3g
}

# mean over tasks of the ROC AUC: the rank count, a group of tied values sharing its mean rank
auc() {
    by_task "$1" "$2" |
    awk '
    function group() { if (gp) rs += gp * (g0 + r) / 2; gp = 0; g0 = 0 }
    function flush() { group(); if (np > 0 && nn > 0) { s += (rs - np * (np + 1) / 2) / (np * nn); k++ } }
    $2 != cur { flush(); cur = $2; r = 0; rs = 0; np = 0; nn = 0; prev = "" }
    { if ($3 != prev) group(); r++; if (!g0) g0 = r; prev = $3
      if ($1 > 0) { np++; gp++ } else nn++ }
    END { flush(); printf "%.6f\n", s / k }'
}

# mean over tasks of the TPR at FPR = 0, 1/GRID, ..., 1 (one line of GRID + 1 numbers)
roc() {
    by_task "$1" "$2" |
    awk -v G="$GRID" '
    function point() { px[npt] = fp; py[npt] = tp; npt++ }
    function flush(   j, k, f, v) {
        if (np == 0 || nn == 0) return
        point()
        k = 0
        for (j = 0; j <= G; j++) {
            f = j * nn / G                      # the FPR j/G in false positives
            while (k + 1 < npt && px[k + 1] <= f) k++
            v = py[k]
            if (k + 1 < npt && px[k] < f)       # on a diagonal (tied) step
                v += (py[k + 1] - py[k]) * (f - px[k]) / (px[k + 1] - px[k])
            acc[j] += v / np
        }
        tasks++
    }
    # rows of a task in decreasing decision value: a point before each new value
    function start() { np = 0; nn = 0; tp = 0; fp = 0; npt = 0; prev = ""; point() }
    $2 != cur { if (cur != "") { fill(); flush() } cur = $2; start(); n = 0 }
    { lab[n] = $1; val[n] = $3; n++ }
    function fill(   i) {
        for (i = n - 1; i >= 0; i--) {
            if (val[i] != prev && i < n - 1) point()
            prev = val[i]
            if (lab[i] > 0) { tp++; np++ } else { fp++; nn++ }
        }
    }
    END { fill(); flush(); for (j = 0; j <= G; j++) printf "%s%.6f", j ? " " : "", acc[j] / tasks; printf "\n" }'
}

# shellcheck disable=SC2206
methods=(${METHODS:-individual union vanilla mtmkl1 mtmkl2 mtmkl3})
label() {
    case $1 in
    individual) echo "Individual" ;; union) echo "Union" ;; vanilla) echo "Vanilla" ;;
    mtmkl1) echo "MT-MKL p = 1" ;; mtmkl2) echo "MT-MKL p = 2" ;; mtmkl3) echo "MT-MKL p = 3" ;;
    esac
}
style() {   # colour, line and marker: close curves stay visible (dashes, later on top)
    case $1 in
    individual) echo "color=1 solid nomarker" ;; union) echo "color=2 dashed nomarker" ;;
    vanilla) echo "color=3 solid nomarker" ;; mtmkl1) echo "color=4 dotted nomarker" ;;
    mtmkl2) echo "color=5 dashdot nomarker" ;; mtmkl3) echo "color=6 dashed nomarker" ;;
    esac
}
# train's options for method $1, groups file $2, C = $3. The stopping gap is relative to
# the primal, about C n at small C, while the part of the objective that theta changes is
# O(C^2): -e scales with C below C = 0.01 (min(1e-5, C / 1000), p = 1 too since its Newton
# walk), else theta would stop near its start, and MT-MKL at small C would be Vanilla.
opts() {
    local e
    e=$(awk -v c="$3" 'BEGIN { printf "%.3g", c / 1000 < 1e-5 ? c / 1000 : 1e-5 }')
    case $1 in
    individual) echo "--baseline individual -e $e" ;;
    union)      echo "--baseline union -e $e" ;;
    vanilla)    echo "--task-groups $2 --fixed-weights -e $e" ;;
    mtmkl1)     echo "--task-groups $2 --mkl-norm 1 -e $e" ;;
    mtmkl2)     echo "--task-groups $2 --mkl-norm 2 -e $e" ;;
    mtmkl3)     echo "--task-groups $2 --mkl-norm 3 -e $e" ;;
    esac
}
fig_name() {
    case $1 in 4.47213595499958) echo mtmkl-figure1b.svg ;; *) echo "mtmkl-figure1b-s$1.svg" ;; esac
}
sname() {
    case $1 in 4.47213595499958) echo "sqrt(20)" ;; *) echo "$1" ;; esac
}

. bench/lib.bash
echo "$(cpu_line) Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
for s2 in $SIGMAS; do
    if [ "${REPORT_ONLY:-0}" = 1 ]; then   # the draws whose every method is in roc-S.tsv
        DRAWS=$(awk -F'\t' -v nm=${#methods[@]} '{ n[$2]++ } END { k = 0; for (d in n) k += n[d] == nm; print k }' "$OUT/roc-$s2.tsv")
        for f in auc valid roc; do
            awk -F'\t' -v nm=${#methods[@]} 'NR == FNR { n[$2] += FILENAME ~ /roc-/; next } n[$2] == nm' \
                "$OUT/roc-$s2.tsv" "$OUT/$f-$s2.tsv" >"$OUT/$f-$s2.tsv.done"
            mv "$OUT/$f-$s2.tsv.done" "$OUT/$f-$s2.tsv"
        done
    else
        : >"$OUT/auc-$s2.tsv"
        : >"$OUT/valid-$s2.tsv"
        : >"$OUT/roc-$s2.tsv"
    fi
    for draw in $(seq "${DRAW_FIRST:-1}" "$DRAWS"); do
        [ "${REPORT_ONLY:-0}" = 1 ] && break
        D="$OUT/d$draw"
        $G --sigma "$s2" --tree-seed "$draw" --seed "$draw" --test "$TEST_N" "$D"
        $G --sigma "$s2" --tree-seed "$draw" --seed $((draw + 1000)) --test "$VAL_N" "$D.val"
        for m in "${methods[@]}"; do
            best=-1 bestc=
            for c in $CS; do   # the largest C of the best validation AUC (below some C every
                               # alpha_i is at C: w only scales, the AUC is flat)
                # shellcheck disable=SC2046
                $T -q -s mtmkl -c "$c" $(opts "$m" "$D.groups" "$c") "$D.train" "$D.$m.model" 2>/dev/null
                $P -q -d "$D.val.test" "$D.$m.model" "$D.val.dec"
                a=$(auc "$D.val.test" "$D.val.dec")
                printf '%s\t%s\t%s\t%s\n' "$m" "$draw" "$c" "$a" >>"$OUT/valid-$s2.tsv"
                if awk -v a="$a" -v b="$best" 'BEGIN { exit !(a >= b) }'; then best=$a bestc=$c; fi
            done
            # shellcheck disable=SC2046
            $T -q -s mtmkl -c "$bestc" $(opts "$m" "$D.groups" "$bestc") "$D.train" "$D.$m.model" 2>/dev/null
            $P -q -d "$D.test" "$D.$m.model" "$D.dec"
            printf '%s\t%s\t%s\t%s\n' "$m" "$draw" "$bestc" "$(auc "$D.test" "$D.dec")" >>"$OUT/auc-$s2.tsv"
            printf '%s\t%s\t%s\n' "$m" "$draw" "$(roc "$D.test" "$D.dec")" >>"$OUT/roc-$s2.tsv"
        done
    done
    echo
    echo "s = $(sname "$s2"), $DRAWS draws, C from {$CS} on a validation draw ($VAL_N rows per class per task; the largest C of the best validation AUC), $TEST_N test rows per class per task"
    echo
    echo "| method | mean AUC | sd | median | C chosen (count) |"
    echo "|---|---:|---:|---:|---|"
    for m in "${methods[@]}"; do
        awk -F'\t' -v m="$m" '$1 == m { print $4 "\t" $3 }' "$OUT/auc-$s2.tsv" | sort -g |
        awk -F'\t' -v m="$m" '{ a[n++] = $1; s += $1; q += $1 * $1; c[$2]++ }
            END { mean = s / n; sd = n > 1 ? sqrt((q - n * mean * mean) / (n - 1)) : 0
                  med = n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
                  cs = ""; for (k in c) cs = cs (cs == "" ? "" : ", ") k " (" c[k] ")"
                  printf "| %s | %.4f | %.4f | %.4f | %s |\n", m, mean, sd, med, cs }'
    done
    echo
    echo "Paired by draw against Vanilla: mean AUC difference (method - Vanilla), its standard error, draws where the method is ahead"
    echo
    echo "| method | mean difference | se | ahead |"
    echo "|---|---:|---:|---:|"
    for m in "${methods[@]}"; do
        [ "$m" = vanilla ] && continue
        awk -F'\t' -v m="$m" '$1 == "vanilla" { v[$2] = $4 } $1 == m { a[$2] = $4 }
            END { for (d in a) { x = a[d] - v[d]; n++; s += x; q += x * x; w += x > 0 }
                  mean = s / n; se = n > 1 ? sqrt((q - n * mean * mean) / (n - 1) / n) : 0
                  printf "| %s | %+.4f | %.4f | %d of %d |\n", m, mean, se, w, n }' "$OUT/auc-$s2.tsv"
    done
    echo
    echo "Mean validation AUC over the draws by C (the choice is interior when the best C is not an end of the grid, or the AUC is flat there)"
    echo
    echo "| method | $(echo $CS | sed 's/ / | /g') |"
    echo "|---|$(for c in $CS; do printf -- '---:|'; done)"
    for m in "${methods[@]}"; do
        awk -F'\t' -v m="$m" -v list="$CS" 'BEGIN { nc = split(list, c, " ") }
            $1 == m { s[$3] += $4; n[$3]++ }
            END { printf "| %s |", m; for (k = 1; k <= nc; k++) printf " %.4f |", s[c[k]] / n[c[k]]; printf "\n" }' \
            "$OUT/valid-$s2.tsv"
    done
    # the figure: mean over draws of the mean-over-tasks TPR; a second panel, the
    # difference from Vanilla, separates the close curves
    awk -F'\t' -v G="$GRID" -v list="${methods[*]}" '
        BEGIN { nm = split(list, name, " ") }
        { split($3, v, " "); for (j = 0; j <= G; j++) s[$1, j] += v[j + 1]; n[$1]++ }
        END {
            printf "fpr"; for (k = 1; k <= nm; k++) printf "\t%s", name[k]
            printf "\tchance"; for (k = 1; k <= nm; k++) printf "\td_%s", name[k]; printf "\n"
            for (j = 0; j <= G; j++) {
                printf "%.6g", j / G
                for (k = 1; k <= nm; k++) printf "\t%.6f", s[name[k], j] / n[name[k]]
                printf "\t%.6g", j / G
                for (k = 1; k <= nm; k++)
                    printf "\t%.6f", s[name[k], j] / n[name[k]] - s["vanilla", j] / n["vanilla"]
                printf "\n"
            }
        }' "$OUT/roc-$s2.tsv" >"$OUT/roc-mean-$s2.tsv"
    top= diff=
    for m in "${methods[@]}"; do
        a=$(awk -F'\t' -v m="$m" '$1 == m { s += $4; n++ } END { printf "%.3f", s / n }' "$OUT/auc-$s2.tsv")
        top="$top${top:+,}$m=$(label "$m") (AUC $a){$(style "$m")}"
        diff="$diff${diff:+,}d_$m=$(label "$m") (AUC $a){$(style "$m")}"
    done
    top="$top,chance=chance{color=8 dotted nomarker}"
    note="mean over the 32 tasks and $DRAWS draws of the test ROC curves (vertical averaging at FPR steps of 1/$GRID); AUC: mean of the exact per-task AUC; C per draw and method on a validation draw"
    $FIG --title "Mean ROC over tasks, tree of 32 tasks, s = $(sname "$s2") (seed 004, Figure 1b)" \
        --xlabel "false positive rate" \
        -P "mean ROC curve;true positive rate;lin;$top;$note" \
        -P "difference from Vanilla;TPR - TPR of Vanilla;lin;$diff" \
        "$OUT/roc-mean-$s2.tsv" "$OUT/figure1b-$s2.svg"
    echo
    echo "Figure: $OUT/figure1b-$s2.svg"
    if [ -n "${FIG_DIR:-}" ]; then
        cp "$OUT/figure1b-$s2.svg" "$FIG_DIR/$(fig_name "$s2")"
        echo "copied to $FIG_DIR/$(fig_name "$s2")"
    fi
done
