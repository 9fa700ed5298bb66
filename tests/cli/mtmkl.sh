# mtmkl.sh - command-line tests of train -s mtmkl (seed 004) with datasets/gen_mtl_tree.
. "$(dirname "$0")/lib.bash"
T=$BIN/train P=$BIN/predict G=$BIN/datasets/gen_mtl_tree

$G --depth 3 --dim 20 --flips 3 --sigma 3 --train 15 --test 100 "$TMP/tree"
check "gen_mtl_tree: 8 tasks, 15 nodes in the groups file, rows per class per task" bash -c \
    "test \$(wc -l <$TMP/tree.groups) -eq 15 && test \$(wc -l <$TMP/tree.train) -eq 240 && test \$(wc -l <$TMP/tree.test) -eq 1600 && head -n 1 $TMP/tree.groups | grep -qx '1-8'"
$G --depth 3 --dim 20 --flips 3 --sigma 3 --train 15 --test 100 "$TMP/again"
check "gen_mtl_tree: the same seeds, the same files" cmp -s "$TMP/tree.train" "$TMP/again.train"
$G --depth 3 --dim 20 --flips 3 --sigma 3 --train 15 --test 100 --seed 2 "$TMP/other"
check "gen_mtl_tree: --seed draws other rows of the same tree" bash -c \
    "cmp -s $TMP/tree.groups $TMP/other.groups && ! cmp -s $TMP/tree.train $TMP/other.train"

$T -s mtmkl -c 0.01 --task-groups "$TMP/tree.groups" "$TMP/tree.train" "$TMP/tree.model" >"$TMP/tree.out"
check "train -s mtmkl: 8 tasks, 15 task kernels, converged (gap <= 1e-5)" bash -c \
    "grep -q '^mtmkl: 240 rows, 8 tasks, 15 task kernels' $TMP/tree.out && awk '/^gap = / { exit !(\$3 <= 1e-5) }' $TMP/tree.out"
$P "$TMP/tree.test" "$TMP/tree.model" "$TMP/tree.pred" >"$TMP/tree.acc"
check "predict: the tasks' rows by their qid, accuracy above 65% (Bayes: 77%)" \
    awk '/^Accuracy = / { sub("%", "", $3); exit !($3 > 65) }' "$TMP/tree.acc"
sed 's/ qid:[0-9]*//' "$TMP/tree.test" >"$TMP/noqid.test"
$P -q -d "$TMP/noqid.test" "$TMP/tree.model" "$TMP/noqid.dec" 2>"$TMP/noqid.err"
check "rows without qid: the average task (finite decision values), said once on stderr" bash -c \
    "awk '!(\$1 == \$1 + 0) { exit 1 }' $TMP/noqid.dec && test \$(wc -l <$TMP/noqid.err) -eq 1 && grep -q '1600 rows have a task the model does not have (the first: line 1, without qid)' $TMP/noqid.err"
$P -q "$TMP/tree.test" "$TMP/tree.model" "$TMP/known.pred" 2>"$TMP/known.err"
check "rows of the model's tasks: no such note" test ! -s "$TMP/known.err"
$T -q -s mtmkl --task-groups "$TMP/tree.groups" -n 1 "$TMP/tree.train" "$TMP/n1.model"
$T -q -s mtmkl --task-groups "$TMP/tree.groups" -n 2 "$TMP/tree.train" "$TMP/n2.model"
check "-n 1 and -n 2: the same model file" cmp -s "$TMP/n1.model" "$TMP/n2.model"
# p = 1 on the 32-task tree of the experiment (640 rows, 63 groups), where the Newton walk
# runs: a gap of 1e-6 within 100 passes (E.1's theta steps alone take thousands here,
# doc/mtmkl.md) at a small and a large C, and the same model bits at -n 1 and -n 2
$G --sigma 20 --test 1 "$TMP/t32"
for c in 0.001 1; do
    $T -n 1 -s mtmkl -c $c --mkl-norm 1 -e 1e-6 --task-groups "$TMP/t32.groups" "$TMP/t32.train" "$TMP/p1n1.model" >"$TMP/p1.out"
    $T -q -n 2 -s mtmkl -c $c --mkl-norm 1 -e 1e-6 --task-groups "$TMP/t32.groups" "$TMP/t32.train" "$TMP/p1n2.model"
    check "p = 1, 32 tasks, 63 groups, C = $c: gap <= 1e-6 within 100 passes; -n 1 and -n 2 write the same model" bash -c \
        "awk '/^gap = / { g = \$3 } /^passes = / { n = \$3 } END { exit !(g <= 1e-6 && n <= 100) }' $TMP/p1.out && cmp -s $TMP/p1n1.model $TMP/p1n2.model"
done
$T -s mtmkl --task-groups "$TMP/tree.groups" -v 3 "$TMP/tree.train" >"$TMP/cv.out"
check "-v 3: a cross-validated accuracy" grep -Eq '^Cross Validation Accuracy = [0-9.]+%$' "$TMP/cv.out"
$T -s mtmkl --task-groups "$TMP/tree.groups" --fixed-weights "$TMP/tree.train" "$TMP/v.model" >"$TMP/v.out"
check "--fixed-weights (Vanilla): theta stays M^(-1/2) = 1/sqrt(15)" \
    grep -q 'theta: group1 0.2582 ' "$TMP/v.out"
for b in individual union; do
    check "--baseline $b trains" $T -q -s mtmkl --baseline $b "$TMP/tree.train" "$TMP/$b.model"
done
printf '1 1 1 1\n1 1 2 0.5\n1 2 2 1\n2 3 3 1\n' >"$TMP/sim"
check "--task-sim: general PSD kernels (here on tasks 1-3 of 8) train" \
    $T -q -s mtmkl --task-sim "$TMP/sim" "$TMP/tree.train" "$TMP/sim.model"
printf '1 1 1 1\n1 1 2 2\n1 2 2 1\n' >"$TMP/notpsd"
expect_fail "--task-sim: a kernel that is not PSD is refused" 2 "not positive semi-definite" \
    $T -s mtmkl --task-sim "$TMP/notpsd" "$TMP/tree.train" "$TMP/x.model"
printf '1-4\n5-x\n' >"$TMP/badgroups"
expect_fail "--task-groups: a bad line names file, line and column" 2 "badgroups:2:2: expected a task id" \
    $T -s mtmkl --task-groups "$TMP/badgroups" "$TMP/tree.train" "$TMP/x.model"
expect_fail "-s mtmkl without qid: input error" 2 "needs task ids \\(qid:\\)" \
    $T -s mtmkl "$TMP/noqid.test" "$TMP/x.model"
expect_fail "-s mtmkl needs two classes" 2 "two classes" $T -s mtmkl "$(dirname "$0")/../models/mu.train" "$TMP/x.model"
expect_fail "options of other methods are refused" 1 "-p \\(epsilon\\) does not apply to -s mtmkl" \
    $T -s mtmkl -p 0.1 "$TMP/tree.train" "$TMP/x.model"
expect_fail "-g without -t is refused" 1 "-g needs a kernel \\(-t\\)" \
    $T -s mtmkl -g 0.1 "$TMP/tree.train" "$TMP/x.model"
$T -q -s mtmkl -c 0.01 --task-groups "$TMP/tree.groups" -t rbf -g 0.05 "$TMP/tree.train" "$TMP/rbf.model"
$P -q -d "$TMP/tree.test" "$TMP/rbf.model" "$TMP/rbf.dec"
check "kernel mode (-t rbf): a model with support vectors that predicts" bash -c \
    "grep -q '^kernel rbf' $TMP/rbf.model && grep -q '^nr_sv ' $TMP/rbf.model && test \$(wc -l <$TMP/rbf.dec) -eq 1600"

# predict --per-task: each task's accuracy and AUC; the AUC against an independent count
$P --per-task "$TMP/tree.test" "$TMP/tree.model" "$TMP/pt.pred" >"$TMP/pt.out"
$P -q -d "$TMP/tree.test" "$TMP/tree.model" "$TMP/pt.dec"
paste -d' ' <(cut -d' ' -f1,2 "$TMP/tree.test") "$TMP/pt.dec" | sed 's/qid://' | sort -k2,2n -k3,3g |
    awk 'function flush() { if (np > 0 && nn > 0) printf "%s %.6f\n", cur, (rs - np * (np + 1) / 2) / (np * nn) }
         $2 != cur { flush(); cur = $2; r = 0; rs = 0; np = 0; nn = 0 }
         { r++; if ($1 > 0) { np++; rs += r } else nn++ } END { flush() }' >"$TMP/pt.want"
awk '/^task [0-9]+: / { sub(":", "", $2); printf "%s %.6f\n", $2, $NF }' "$TMP/pt.out" >"$TMP/pt.got"
check "predict --per-task: 8 tasks, each AUC = a rank count by awk" bash -c \
    "test \$(wc -l <$TMP/pt.got) -eq 8 && cmp -s $TMP/pt.got $TMP/pt.want && grep -q '^mean over 8 tasks: accuracy = ' $TMP/pt.out"

# bench/mtmkl/tree.sh as written, on a tiny setting (1 draw, 2 values of C, 30 test rows per
# class per task): the table, Figure 1b's SVG, and its curves against the AUC
R=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$TMP/fig"
DRAWS=1 CS="0.001 1" SIGMAS=4.47213595499958 TEST_N=30 VAL_N=10 GRID=300 BIN=$BIN \
    OUT_DIR="$TMP/treebench" FIG_DIR="$TMP/fig" bash "$R/bench/mtmkl/tree.sh" >"$TMP/treebench.md" 2>"$TMP/treebench.err"
check "bench/mtmkl/tree.sh runs: a row per method" bash -c \
    "test \$(grep -cE '^\\| (individual|union|vanilla|mtmkl[123]) \\| 0\\.[0-9]{4} \\|' $TMP/treebench.md) -eq 12"
svg=$TMP/fig/mtmkl-figure1b.svg
check "Figure 1b: an SVG in FIG_DIR, 6 curves and chance above, 6 differences below, all in legends" bash -c \
    "for s in 0 1 2 3 4 5 6; do grep -q \"<g id=\\\"p0s\$s\\\"\" $svg || exit 1; done &&
     for s in 0 1 2 3 4 5; do grep -q \"<g id=\\\"p1s\$s\\\"\" $svg || exit 1; done &&
     test \$(grep -o 'class=\"key\"' $svg | wc -l) -eq 13 && grep -q 'MT-MKL p = 3 (AUC 0' $svg"
# each mean ROC curve rises from (0, TPR >= 0) to (1, 1); its trapezoid area is the mean of
# the per-task AUC of the table (a rank count), within 1/GRID (the grid's cut of vertical steps)
check "Figure 1b's curves: monotone, end at (1, 1), area = the table's AUC within 1/GRID" bash -c "
    awk -F'\\t' 'NR == 1 { next } { for (k = 2; k <= 7; k++) { if (NR > 2 && \$k < last[k] - 1e-12) exit 1
            if (NR > 2) area[k] += (\$1 - x) * (\$k + last[k]) / 2; last[k] = \$k } x = \$1 }
        END { for (k = 2; k <= 7; k++) { if (last[k] != 1) exit 1; printf \"%.6f\\n\", area[k] } }' \
        $TMP/treebench/roc-mean-4.47213595499958.tsv >$TMP/area &&
    grep -E '^\\| (individual|union|vanilla|mtmkl[123]) \\| 0\\.[0-9]{4} \\| 0\\.0000' $TMP/treebench.md | cut -d'|' -f3 >$TMP/tabauc &&
    paste $TMP/area $TMP/tabauc | awk '{ if (!(\$1 - \$2 < 1/300 + 5e-5 && \$2 - \$1 < 1/300 + 5e-5)) exit 1 } END { exit NR != 6 }'"
