#!/usr/bin/env bash
# bench/mtmkl/tree.sh - seed 004's section 4 experiment: 32 tasks at the leaves of a binary
# tree (datasets/gen_mtl_tree), mean-over-tasks ROC AUC of Individual (G = I), Union
# (G = 11'), Vanilla (every tree node a group, theta fixed) and MT-MKL p = 1, 2, 3 (the
# same groups, theta learned), over DRAWS draws of the tree and its rows, C chosen per draw
# and method on a validation draw (same tree, other rows), for the noise's standard
# deviation s = 20 as printed (Bayes AUC about 0.64) and s = sqrt(20). Prints a markdown table (mean, standard deviation, median over draws).
# Usage: bench/mtmkl/tree.sh   (from the top of the tree after make; DRAWS, CS, SIGMAS,
#        OUT_DIR, BIN (the programs, default .) in the environment)
set -eu
cd "$(dirname "$0")/../.."
DRAWS=${DRAWS:-10}
CS=${CS:-"0.001 0.01 0.1 1 10 100"}
SIGMAS=${SIGMAS:-"20 4.47213595499958"}
OUT=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-mtmkl-tree}
mkdir -p "$OUT"
BIN=${BIN:-.}
T=$BIN/train P=$BIN/predict G=$BIN/datasets/gen_mtl_tree

# mean over tasks of the ROC AUC: test file and decision values -> one number
auc() {
    paste -d' ' <(cut -d' ' -f1,2 "$1") "$2" | sed 's/qid://' | sort -k2,2n -k3,3g |
    awk '
    function flush() { if (np > 0 && nn > 0) { s += (rs - np * (np + 1) / 2) / (np * nn); k++ } }
    $2 != cur { flush(); cur = $2; r = 0; rs = 0; np = 0; nn = 0 }
    { r++; if ($1 > 0) { np++; rs += r } else nn++ }
    END { flush(); printf "%.6f\n", s / k }'
}

methods=(individual union vanilla mtmkl1 mtmkl2 mtmkl3)
opts() {
    case $1 in
    individual) echo "--baseline individual" ;;
    union)      echo "--baseline union" ;;
    vanilla)    echo "--task-groups $2 --fixed-weights" ;;
    mtmkl1)     echo "--task-groups $2 --mkl-norm 1 -e 1e-4" ;;
    mtmkl2)     echo "--task-groups $2 --mkl-norm 2" ;;
    mtmkl3)     echo "--task-groups $2 --mkl-norm 3" ;;
    esac
}

. bench/lib.bash
echo "$(cpu_line); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for s2 in $SIGMAS; do
    : >"$OUT/auc-$s2.tsv"
    for draw in $(seq 1 "$DRAWS"); do
        D="$OUT/d$draw"
        $G --sigma "$s2" --tree-seed "$draw" --seed "$draw" "$D"
        $G --sigma "$s2" --tree-seed "$draw" --seed $((draw + 1000)) --test 200 "$D.val"
        for m in "${methods[@]}"; do
            best=-1 bestc=
            for c in $CS; do
                # shellcheck disable=SC2046
                $T -q -s mtmkl -c "$c" $(opts "$m" "$D.groups") "$D.train" "$D.$m.model" 2>/dev/null
                $P -q -d "$D.val.test" "$D.$m.model" "$D.val.dec"
                a=$(auc "$D.val.test" "$D.val.dec")
                if awk -v a="$a" -v b="$best" 'BEGIN { exit !(a > b) }'; then best=$a bestc=$c; fi
            done
            # shellcheck disable=SC2046
            $T -q -s mtmkl -c "$bestc" $(opts "$m" "$D.groups") "$D.train" "$D.$m.model" 2>/dev/null
            $P -q -d "$D.test" "$D.$m.model" "$D.dec"
            printf '%s\t%s\t%s\t%s\n' "$m" "$draw" "$bestc" "$(auc "$D.test" "$D.dec")" >>"$OUT/auc-$s2.tsv"
        done
    done
    echo
    echo "s = $s2, $DRAWS draws, C from {$CS} on a validation draw (200 rows per class per task)"
    echo
    echo "| method | mean AUC | sd | median | C chosen (most often) |"
    echo "|---|---:|---:|---:|---:|"
    for m in "${methods[@]}"; do
        awk -F'\t' -v m="$m" '$1 == m { print $4 "\t" $3 }' "$OUT/auc-$s2.tsv" | sort -g |
        awk -F'\t' -v m="$m" '{ a[n++] = $1; s += $1; q += $1 * $1; c[$2]++ }
            END { mean = s / n; sd = n > 1 ? sqrt((q - n * mean * mean) / (n - 1)) : 0
                  med = n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
                  best = ""; bc = 0; for (k in c) if (c[k] > bc) { bc = c[k]; best = k }
                  printf "| %s | %.4f | %.4f | %.4f | %s |\n", m, mean, sd, med, best }'
    done
done
