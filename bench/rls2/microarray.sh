#!/usr/bin/env bash
# bench/rls2/microarray.sh - thesis 4.5.3 (Table 4.5): linear RLS2 one-versus-all on the
# 14 Cancers microarray data (144 training / 54 test patients, 16,063 genes, 14 classes),
# scaling s_k = (sigma+^2 + sigma-^2)^-1/2 (rls2-path -S microarray), stratified 8-fold
# cross-validation over 50 lambdas; test errors out of 54, selected genes, time.
# A benchmark, not a test.
#
# Data: the real files are not available here, so by default the data are SYNTHETIC:
# datasets/gen_microarray (a stand-in of the same shape and class sizes, drawn from a
# stated model: see datasets/gen_microarray.c). Its numbers say nothing about the real
# data's; every output line says which data were used. With MICRO_ESL_DIR pointing at a
# folder holding ESL's 14cancer.xtrain, 14cancer.ytrain, 14cancer.xtest, 14cancer.ytest
# (genes in rows, samples in columns; plain or .gz), those are converted to svmlight
# (bench/rls2/rls2util.py esl2svm) and used instead.
#
# Steps: standardize the genes with the training statistics (datasets/standardize; or see
# MICRO_STD), then
#   rls2-path --kernels linear -S microarray -L MICRO_LAMBDAS -v 8 --seed S --no-dof --test TEST
# whose model is the largest lambda with the best mean validation accuracy (the thesis:
# "the highest value of lambda maximizing the validation accuracy"). Reported: test errors
# out of 54 at that lambda, the thesis' figure (the mean of the test errors over all the
# lambdas that share the best validation accuracy), the genes selected (distinct features
# among the model's basis lines: the union over the 14 classifiers), and the time (the
# whole run with its 8 + 1 paths x 14 classes, and the path on all training rows alone).
#
# Usage: bench/rls2/microarray.sh > microarray.md    (after make; long: see doc/rls2-linear.md)
# Environment (all optional):
#   MICRO_ESL_DIR   folder with ESL's 14cancer.{xtrain,ytrain,xtest,ytest}: the real data
#   MICRO_SEED      gen_microarray --seed (default 1)
#   MICRO_GEN_OPTS  more gen_microarray options (default none)
#   MICRO_STD       genes (default: each gene to mean 0, sd 1 with the training
#                   statistics), patients (each patient's expression vector to mean 0,
#                   sd 1 over its genes: the other reading of the thesis' sentence), both
#                   (patients, then genes) or none
#   MICRO_LAMBDAS   rls2-path -L (default 1e-2:1e3:50)
#   MICRO_FOLDS     -v (default 8; 0: no cross-validation, the model is the last lambda)
#   MICRO_FOLD_SEED --seed of the folds (default 1)
#   MICRO_THREADS   rls2-path -n (default 1)
#   MICRO_TIMEOUT   seconds before rls2-path is stopped (default 0: none)
#   MICRO_OPTS      more rls2-path options (e.g. "-e 1e-3")
#   BENCH_BIN, BENCH_CACHE  as for bench/liblinear.sh
# Exit status: 0; 1 when rls2-path failed or was stopped; 2 when something is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BIN=${BENCH_BIN:-$repo}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}   # not used
ESL=${MICRO_ESL_DIR:-}
SEED=${MICRO_SEED:-1}
read -r -a GEN_OPTS <<<"${MICRO_GEN_OPTS:-}"
STD=${MICRO_STD:-genes}
LAMBDAS=${MICRO_LAMBDAS:-1e-2:1e3:50}
FOLDS=${MICRO_FOLDS:-8}
FSEED=${MICRO_FOLD_SEED:-1}
THREADS=${MICRO_THREADS:-1}
TIMEOUT=${MICRO_TIMEOUT:-0}
read -r -a OPTS <<<"${MICRO_OPTS:-}"
TIME=/usr/bin/time
UTIL="python3 $here/rls2util.py"
export OPENBLAS_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

for t in "$BIN/rls2-path" "$BIN/datasets/gen_microarray" "$BIN/datasets/standardize"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
[ -x "$TIME" ] || die "$TIME not found: apt-get install time"
command -v python3 >/dev/null || die "python3 not found"
case $STD in genes | patients | both | none) ;; *) die "MICRO_STD: genes, patients, both or none" ;; esac
bench_dirs
mkdir -p "$work/bin/datasets" && cp "$BIN/rls2-path" "$work/bin/" &&
    cp "$BIN/datasets/gen_microarray" "$BIN/datasets/standardize" "$work/bin/datasets/" ||
    die "cannot copy the binaries"
BIN=$work/bin

# ESL file NAME from MICRO_ESL_DIR, decompressed into $work when gzip; prints the path.
esl_file() {
    local f=$ESL/14cancer.$1
    if [ -f "$f" ]; then echo "$f"
    elif [ -f "$f.gz" ]; then gunzip -c "$f.gz" >"$work/$1" && echo "$work/$1"
    else die "$f (or $f.gz) not found in MICRO_ESL_DIR"
    fi
}

if [ -n "$ESL" ]; then
    KIND="REAL 14 Cancers data (ESL files in $ESL)"
    say "converting ESL's 14cancer files from $ESL"
    $UTIL esl2svm "$(esl_file xtrain)" "$(esl_file ytrain)" "$work/raw.train" &&
        $UTIL esl2svm "$(esl_file xtest)" "$(esl_file ytest)" "$work/raw.test" ||
        die "cannot convert the ESL files"
    raw_train=$work/raw.train raw_test=$work/raw.test
else
    KIND="SYNTHETIC stand-in (datasets/gen_microarray --seed $SEED${GEN_OPTS[*]:+ ${GEN_OPTS[*]}}), NOT the real 14 Cancers data"
    key=$({ printf '%s|' "$SEED" "${GEN_OPTS[@]}"; cat "$repo/datasets/gen_microarray.c"; } | md5sum | cut -c1-10)
    raw_train=$CACHE/microarray-$key.train raw_test=$CACHE/microarray-$key.test
    if [ ! -s "$raw_train" ] || [ ! -s "$raw_test" ]; then
        say "generating the synthetic microarray stand-in into $CACHE"
        "$BIN/datasets/gen_microarray" --seed "$SEED" "${GEN_OPTS[@]}" "$raw_train.tmp.$$" \
            "$raw_test.tmp.$$" && mv "$raw_train.tmp.$$" "$raw_train" &&
            mv "$raw_test.tmp.$$" "$raw_test" || die "gen_microarray failed"
    fi
fi
read -r ntr genes < <(awk '{ n++; if (NF - 1 > c) c = NF - 1 } END { print n, c }' "$raw_train")
nte=$(grep -c . "$raw_test")

say "standardizing ($STD)"
tr=$raw_train te=$raw_test
if [ "$STD" = patients ] || [ "$STD" = both ]; then
    $UTIL rowstd "$tr" "$work/p.train" "$genes" && $UTIL rowstd "$te" "$work/p.test" "$genes" ||
        die "per-patient standardization failed"
    tr=$work/p.train te=$work/p.test
fi
if [ "$STD" = genes ] || [ "$STD" = both ]; then
    "$BIN/datasets/standardize" "$tr" "$work/s.train" "$te" "$work/s.test" 2>"$work/std.err" ||
        die "standardize failed: $(cat "$work/std.err")"
    tr=$work/s.train te=$work/s.test
fi

cv=()
[ "$FOLDS" != 0 ] && cv=(-v "$FOLDS" --seed "$FSEED")
tm=()
[ "$TIMEOUT" != 0 ] && tm=(timeout "$TIMEOUT")
cmd=(rls2-path --kernels linear -S microarray -L "$LAMBDAS" "${cv[@]}" --no-dof -n "$THREADS"
     "${OPTS[@]}" --test TEST -o path.csv TRAIN model)
say "${cmd[*]} (on $KIND)"
"$TIME" -f '%e %U %S %M' -o "$work/time" "${tm[@]}" "$BIN/rls2-path" --kernels linear -S microarray \
    -L "$LAMBDAS" "${cv[@]}" --no-dof -n "$THREADS" "${OPTS[@]}" --test "$te" \
    -o "$work/path.csv" "$tr" "$work/model" >"$work/out" 2>"$work/err"
rc=$?
read -r wall usr sys _ < <(tail -n 1 "$work/time")
if [ "$rc" != 0 ]; then
    say "rls2-path $([ "$rc" = 124 ] && echo "stopped after $TIMEOUT s" || echo "failed ($rc): $(tail -n 1 "$work/err")")"
    exit 1
fi
sel=$($UTIL genes "$work/model")

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- rls2-path.c common 2>/dev/null | head -c1)
echo "Data: $KIND;"
echo "$ntr training / $nte test rows, $genes genes, standardization: $STD."
echo "Command: ${cmd[*]}"
echo "kmtk $commit${dirty:+ (rls2-path.c/common modified)}, $(date -u +%Y-%m-%d), $(getconf _NPROCESSORS_ONLN) cores."
echo
awk -F, -v nte="$nte" -v sel="$sel" -v kind="${KIND%%,*}" -v wall="$wall" -v cpu="$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')" '
    NR > 1 { t = NR - 1; lam[t] = $1; k[t] = $3; sec += $5; va[t] = $8; te[t] = $10; ch[t] = $11
             if ($8 != "" && (best == "" || $8 + 0 > best)) best = $8 + 0 }
    END {
        for (i = 1; i <= t; i++) if (ch[i] == 1) c = i
        if (best != "") for (i = 1; i <= t; i++) if (va[i] + 0 == best) { s += nte * (1 - te[i] / 100); n++ }
        printf "| method | test errors (of %d) | selected genes | lambda | time |\n", nte
        print "|---|---:|---:|---:|---|"
        printf "| linear RLS2 (OVA), kmtk, %s | %.0f%s | %d | %.4g | %.0f s wall, %.0f s cpu (path on all rows: %.1f s) |\n",
            kind, nte * (1 - te[c] / 100), n ? sprintf(" (mean over the %d lambdas of best CV accuracy: %.1f)", n, s / n) : "",
            sel, lam[c], wall, cpu, sec
        print "| linear RLS2 (OVA), thesis Table 4.5, real data | 9.8 | 855 | | |"
        print "| Lasso regression (OVA), ESL via the thesis, real data | 12.5 | 1,429 | | |"
        print "| L1-penalized multinomial, ESL via the thesis, real data | 13.0 | 269 | | |"
        print "| Elastic-net penalized multinomial, ESL via the thesis, real data | 11.8 | 384 | | |"
        print "| Support vector classifier, ESL via the thesis, real data | 14.0 | 16,063 | | |"
        print "| L2-penalized discriminant analysis, ESL via the thesis, real data | 12.0 | 16,063 | | |"
    }' "$work/path.csv"
echo
echo "The path ($KIND; accuracy in %; test errors = $nte x (1 - test accuracy); \`<-\`: the model):"
echo
echo "| lambda | genes (union) | iterations | seconds | train acc | CV acc | CV se | test acc | test errors | |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
awk -F, -v nte="$nte" 'NR > 1 { printf "| %.4g | %d | %d | %.2f | %.1f | %s | %s | %.1f | %.0f | %s |\n",
    $1, $3, $4, $5, $7, $8 == "" ? "" : sprintf("%.1f", $8), $9 == "" ? "" : sprintf("%.1f", $9),
    $10, nte * (1 - $10 / 100), $11 == 1 ? "<-" : "" }' "$work/path.csv"
exit 0
