#!/usr/bin/env bash
# bench/libsvm.sh - kmtk kernel train/predict against Debian's LIBSVM svm-train/svm-predict (a
# benchmark, not a test): Gaussian RBF kernel exp(-gamma ||x - x'||^2), the same C, gamma and
# kernel cache (MB) for both, the same plain train/test files. kmtk: `train -s l1svm -t rbf`
# (hinge loss, no bias term); LIBSVM: `svm-train -s 0 -t 2` (C-SVC, with a bias term b).
#
# Per dataset (each with its own C and gamma, below):
# - training runs in pairs, kmtk then svm-train, BENCH_REPEAT times (bench/runstat: wall, CPU =
#   user + system, peak RSS of the whole process); medians (min-max) and the ratios kmtk/svm
#   pair by pair; each tool's predict once on the test file: accuracy and CPU seconds;
# - matched accuracy: each default model's primal objective (bench/libsvm_objective: LIBSVM's
#   including b) and its relative gap (F - F_tight) / F_tight to the same tool's own tight solve
#   (BENCH_KMTK_TIGHT_OPTS, BENCH_SVM_TIGHT_OPTS); then kmtk along a ladder of stopping values
#   (BENCH_LADDER, option BENCH_LADDER_OPT): the first whose gap is no larger than svm-train's
#   default gap, its CPU and wall seconds (one run), the CPU ratio to svm-train's median and
#   its test accuracy. That is the time at which kmtk reaches LIBSVM-default accuracy.
# Two markdown tables on stdout (timings; matched accuracy), headed by the CPU (model,
# avx2/avx512f, code path); then, on one dataset, kmtk's fixed-point solver (-a fixedpoint)
# with 1 and 2 threads. Progress goes to stderr.
#
# Usage: bench/libsvm.sh              (after `make`; the default sets take about an hour on 2
#                                      cores: the pairs, the tight solves and the ladder)
#        BENCH_DATASETS="dense a9a" BENCH_REPEAT=2 bench/libsvm.sh
# Environment (all optional):
#   DATA_DIR           the *.gz sets (default: <repo>/../shared/datasets)
#   BENCH_BIN          directory holding train, predict, bench/runstat, bench/libsvm_objective
#                      and datasets/gen_dense (default: the repository)
#   BENCH_CACHE        decompressed data, test splits and the dense set, kept between runs
#                      (default: ${TMPDIR:-/tmp}/kmtk-bench, shared with bench/liblinear.sh)
#   BENCH_DATASETS     space-separated names (default: "a9a w8a ijcnn1 dense"). NAME means
#                      DATA_DIR/NAME.gz; the test file is NAME.t.gz when present, otherwise
#                      NAME is split deterministically: every 5th line (lines 5, 10, ...) to
#                      the test file, the rest to the training file (w8a: 80/20); both tools
#                      read the same two files. Labels must be +-1 (binary). `dense`:
#                      datasets/gen_dense BENCH_DENSE_OPTS --split-seed 1 (train) and
#                      --split-seed 2 (test), 8,000 x 16 each by default, made once.
#   BENCH_C, BENCH_GAMMA  C and gamma for both tools and every set; unset: per set, a9a, w8a,
#                      ijcnn1 and other public sets C 1 gamma 0.05, dense C 4 gamma 0.1
#   BENCH_DENSE_OPTS   gen_dense options for `dense` (default none: 8,000 x 16, noise 1.8)
#   BENCH_CACHE_MB     kernel cache in MB, -m of both tools (default 200: kmtk's default;
#                      svm-train's own default is 100, so it is always passed explicitly)
#   BENCH_THREADS      kmtk train -n for the comparison rows (default 1: svm-train uses one
#                      core); empty = do not pass -n (kmtk's default)
#   BENCH_KMTK_OPTS    extra options for every kmtk train (e.g. "--rule cyclic"); default none.
#                      Keep the stopping option out of it when the ladder runs.
#   BENCH_SVM_OPTS     extra options for every svm-train (e.g. "-h 0"); default: none
#   BENCH_KMTK_TIGHT_OPTS  added for kmtk's tight solve (default "-e 1e-9": relative duality gap)
#   BENCH_SVM_TIGHT_OPTS   added for svm-train's tight solve (default "-e 1e-5")
#   BENCH_LADDER       stopping values for kmtk, loosest first (default "1e-3 1e-4 1e-5 1e-6":
#                      relative duality gaps, -e's meaning under the default --stop gap);
#                      empty = no ladder (and BENCH_TIGHT=0 = no tight
#                      solves: the gap columns read "-")
#   BENCH_LADDER_OPT   the option the ladder sets (default -e)
#   BENCH_FP_DATASET   dataset for the fixed-point rows (default a9a; "none" = skip); it
#                      need not be in BENCH_DATASETS
#   BENCH_FP_ROWS      the fixed-point rows train on the first N rows of that set (default
#                      5000, so that K fits the cache and a run takes seconds; 0 = all)
#   BENCH_FP_OPTS      fixed-point options (default "--alpha norm2": fewer iterations)
#   BENCH_FP_THREADS   thread counts for the fixed-point rows (default "1 2"); the speed-up
#                      is relative to the first
#   BENCH_REPEAT       counted pairs of training runs (default 3)
#   BENCH_TIMEOUT      seconds after which a run is stopped and its cell reads ">N"
#                      (default 600; 0 = no limit). A timeout is not a failure.
#   BENCH_AVX2         1 = measure the AVX2 code path on an AVX-512 CPU (see bench/lib.bash
#                      avx2_setup and bench/README.md); default 0
#   SVM_TRAIN, SVM_PREDICT  the peer's binaries (default svm-train, svm-predict; Debian
#                      package libsvm-tools)
# Exit status: 0, or 1 when a tool failed (crashed or returned non-zero on a real run), 2 when
# something needed is missing. A slow ratio is never a failure, and neither is a kmtk train that
# does not accept the kernel options: its cells read "n/a: train has no -t" (or the option
# it rejected, or its message), probed once on a 4-row file (status 1 = usage error).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.bash"
bench_paths
DATASETS=${BENCH_DATASETS:-a9a w8a ijcnn1 dense}
MB=${BENCH_CACHE_MB:-200}
THREADS=${BENCH_THREADS-1}
FP_DATASET=${BENCH_FP_DATASET:-a9a}
FP_THREADS=${BENCH_FP_THREADS:-1 2}
FP_ROWS=${BENCH_FP_ROWS:-5000}
read -r -a FP_OPTS <<<"${BENCH_FP_OPTS---alpha norm2}"
REPEAT=${BENCH_REPEAT:-3}
TIMEOUT=${BENCH_TIMEOUT:-600}
read -r -a KOPTS <<<"${BENCH_KMTK_OPTS:-}"
read -r -a SOPTS <<<"${BENCH_SVM_OPTS:-}"
read -r -a KTIGHT <<<"${BENCH_KMTK_TIGHT_OPTS--e 1e-9}"
read -r -a STIGHT <<<"${BENCH_SVM_TIGHT_OPTS--e 1e-5}"
LADDER=${BENCH_LADDER-1e-3 1e-4 1e-5 1e-6}
LADDER_OPT=${BENCH_LADDER_OPT:--e}
TIGHT=${BENCH_TIGHT:-1}
read -r -a DENSE_OPTS <<<"${BENCH_DENSE_OPTS:-}"
SVMTRAIN=${SVM_TRAIN:-svm-train}
SVMPREDICT=${SVM_PREDICT:-svm-predict}
[ "$FP_DATASET" = none ] && FP_DATASET=
[ "$TIGHT" = 0 ] && LADDER=

for v in "$MB" "$REPEAT" "$TIMEOUT" ${BENCH_C:-} ${BENCH_GAMMA:-}; do
    [[ $v =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "not a non-negative number: '$v'"
done
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT: not a positive count: '$REPEAT'"
[[ $THREADS =~ ^[0-9]*$ ]] || die "BENCH_THREADS: not a count: '$THREADS'"
for n in $FP_THREADS; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "BENCH_FP_THREADS: not a count: '$n'"; done
bench_tools train predict bench/runstat bench/libsvm_objective datasets/gen_dense
need_peers libsvm-tools "$SVMTRAIN" "$SVMPREDICT"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
bench_dirs
TMO=(timeout --foreground -k 10 "$TIMEOUT")

# Prints "C gamma" for dataset $1: BENCH_C / BENCH_GAMMA when set, else the set's own.
params() {
    local c=1 g=0.05
    [ "$1" = dense ] && c=4 g=0.1
    echo "${BENCH_C:-$c} ${BENCH_GAMMA:-$g}"
}

# Makes the dense train/test pair in the cache once; prints both paths.
dense() {
    local key tr te
    key=$({ printf '%s|' "${DENSE_OPTS[@]}"; cat "$repo/datasets/gen_dense.c"; } | md5sum | cut -c1-10)
    tr=$CACHE/dense-$key.train te=$CACHE/dense-$key.test
    if [ ! -s "$tr" ] || [ ! -s "$te" ]; then
        say "generating $tr and .test"
        "$BIN/datasets/gen_dense" "${DENSE_OPTS[@]}" --split-seed 1 >"$tr.tmp.$$" && mv "$tr.tmp.$$" "$tr" &&
            "$BIN/datasets/gen_dense" "${DENSE_OPTS[@]}" --split-seed 2 >"$te.tmp.$$" && mv "$te.tmp.$$" "$te" ||
            die "gen_dense failed"
    fi
    echo "$tr $te"
}

# Splits plain file $1 into $1.split5.train (lines not divisible by 5) and $1.split5.test (lines
# 5, 10, ...) in the cache, once; prints both paths.
split5() {
    local tr=$1.split5.train te=$1.split5.test
    if [ ! -s "$tr" ] || [ ! -s "$te" ] || [ "$1" -nt "$tr" ] || [ "$1" -nt "$te" ]; then
        say "splitting $1: every 5th line to the test file"
        awk -v tr="$tr.tmp.$$" -v te="$te.tmp.$$" '{ if (NR % 5 == 0) print > te; else print > tr }' "$1" \
            && mv "$tr.tmp.$$" "$tr" && mv "$te.tmp.$$" "$te" || die "cannot split $1"
    fi
    echo "$tr $te"
}

# Prints the number of data lines of file $1.
rows() {
    awk 'NF > 0 && !/^#/ { n++ } END { print n + 0 }' "$1"
}

# Runs a command once under timeout (run_once); sets RC, ONE_SEC, ONE_CPU, ONE_MB and TIMEDOUT=1
# when BENCH_TIMEOUT stopped it; says so on failure.
once() {
    local pre=$1
    shift
    run_once "$pre" "${TMO[@]}" "$@"
    TIMEDOUT=0
    if { [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; } && [ "$TIMEOUT" != 0 ]; then
        TIMEDOUT=1
        say "stopped after $TIMEOUT s (BENCH_TIMEOUT): $*"
    elif [ "$RC" -ne 0 ]; then
        say "FAILED (status $RC): $*"
        sed 's/^/    /' "$pre.err" | tail -n 5 >&2
    fi
}

# Prints the primal objective of model $1 on training file $2 (libsvm_objective; extra options
# after), or "?" (and says why).
primal() {
    local m=$1 tr=$2 pre=$work/obj
    shift 2
    if "$BIN/bench/libsvm_objective" "$@" "$m" "$tr" >"$pre.out" 2>"$pre.err"; then
        awk '/^objective = / { printf "%.10g\n", $3 }' "$pre.out"
    else
        say "libsvm_objective failed: $(head -n 1 "$pre.err")"
        echo "?"
    fi
}

# Prints the relative gap (F - F_tight) / |F_tight| of objective $1 to $2, or "-".
gap() {
    awk -v f="$1" -v t="$2" 'BEGIN {
        num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"
        if (f ~ num && t ~ num && t + 0 != 0) printf "%.2e\n", (f - t) / (t < 0 ? -t : t); else print "-" }'
}

# Succeeds when gap $1 <= gap $2 (both numbers).
gap_le() {
    awk -v a="$1" -v b="$2" 'BEGIN { n = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"; exit !(a ~ n && b ~ n && a + 0 <= b + 0) }'
}

# Prints the accuracy ("x%") found in a predict output file $1, or "?".
accuracy() {
    local a
    a=$(sed -n 's/^Accuracy = \([^%]*\)%.*/\1%/p' "$1" | tail -n 1)
    echo "${a:-?}"
}

# Prints the first number of the last line of file $1 that starts with $2 (e.g. "nSV = "), or "?".
field() {
    local f
    f=$(sed -n "s/^$2\([-+0-9.eE]*\).*/\1/p" "$1" | tail -n 1)
    echo "${f:-?}"
}

# Probes kmtk train with options "$@" on a 4-row file; prints "" when accepted, else the cell text
# ("n/a: train has no -t", ...). Only a usage error (status 1) counts as "not supported yet".
probe() {
    local p=$work/probe rc opt
    printf '+1 1:1\n-1 1:-1\n+1 2:1\n-1 2:-1\n' >"$p.svm"
    timeout --foreground -k 10 60 "$BIN/train" "$@" "$p.svm" "$p.model" >"$p.out" 2>"$p.err"
    rc=$?
    [ "$rc" -eq 1 ] || return 0
    opt=$(sed -n "s/.*unknown option '\([^']*\)'.*/\1/p; s/.*unknown option \([^ ]*\).*/\1/p" "$p.err" | head -n 1)
    if [ -n "$opt" ]; then
        echo "n/a: train has no $opt"
    else
        echo "n/a: $(head -n 1 "$p.err" | tr '|' '/' | cut -c1-60)"
    fi
}

# Resolve every dataset first, so a missing file stops the run before any timing.
declare -A TRAIN TEST SPLIT
all=$DATASETS
[ -n "$FP_DATASET" ] && [[ " $DATASETS " != *" $FP_DATASET "* ]] && all="$all $FP_DATASET"
for d in $all; do
    if [ "$d" = dense ]; then
        pair=$(dense) || exit 2
        read -r "TRAIN[$d]" "TEST[$d]" <<<"$pair"
        SPLIT[$d]=
        continue
    fi
    [ -f "$DATA_DIR/$d.gz" ] || die "$DATA_DIR/$d.gz not found (set DATA_DIR or BENCH_DATASETS)"
    tr=$(plain "$d") || exit 2
    if [ -f "$DATA_DIR/$d.t.gz" ]; then
        TRAIN[$d]=$tr SPLIT[$d]=
        TEST[$d]=$(plain "$d.t") || exit 2
    else
        pair=$(split5 "$tr") || exit 2
        read -r "TRAIN[$d]" "TEST[$d]" <<<"$pair"
        SPLIT[$d]=1
    fi
    is_binary "${TRAIN[$d]}" || die "$d: labels are not all +1/-1 (this benchmark is binary only)"
done

nflag=()
[ -n "$THREADS" ] && nflag=(-n "$THREADS")
read -r c0 g0 <<<"$(params "${DATASETS%% *}")"
kna=$(probe -s l1svm -t rbf -g "$g0" -c "$c0" -m "$MB" "${nflag[@]}" "${KOPTS[@]}")
[ -n "$kna" ] && say "kmtk train does not take the kernel options yet: $kna"

svmver=$(dpkg-query -W -f '${Version}' libsvm-tools 2>/dev/null || echo unknown)
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
echo "kmtk \`train -s l1svm -t rbf\` vs LIBSVM \`svm-train -s 0 -t 2\` ($svmver), $(date -u +%Y-%m-%d)," \
    "kmtk commit $commit. Cache -m $MB MB for both, kmtk threads: ${THREADS:-(default)};" \
    "kmtk options: \`${BENCH_KMTK_OPTS:-(defaults)}\`; svm-train options: \`${BENCH_SVM_OPTS:-(defaults)}\`;" \
    "$REPEAT pair(s) of training runs; tight solves: kmtk \`${KTIGHT[*]:-(none)}\`, svm-train \`${STIGHT[*]:-(none)}\`."
echo
cpu_line
echo
echo "| data | C, gamma | rows train/test | kmtk CPU s | svm-train CPU s | CPU ratio | kmtk wall s | svm-train wall s | wall ratio | kmtk MB | svm-train MB | kmtk test | svm test | diff (points) | kmtk nonzero | svm nSV | kmtk predict CPU s | svm-predict CPU s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

status=0
split_note=
timeout_note=
matched=()
for d in $DATASETS; do
    tr=${TRAIN[$d]} te=${TEST[$d]} w=$work/$d
    read -r C GAMMA <<<"$(params "$d")"
    nrows="$(rows "$tr")/$(rows "$te")"
    [ -n "${SPLIT[$d]}" ] && split_note="$split_note $d" && nrows="$nrows (split)"
    kopts=(-s l1svm -t rbf -g "$GAMMA" -c "$C" -m "$MB" "${nflag[@]}" "${KOPTS[@]}")
    sopts=(-s 0 -t 2 -g "$GAMMA" -c "$C" -m "$MB" "${SOPTS[@]}")

    kcpu=- kwall=- kmb=- kacc=- knz=- kpcpu=- scpu=- swall=- smb=- sacc=- snsv=- spcpu=- rcpu=- rwall=-
    kok=0 sok=0
    if [ -n "$kna" ]; then
        kcpu=$kna
        say "$d: svm-train ($REPEAT runs)"
        CMD_A=(true) CMD_B=("${TMO[@]}" "$SVMTRAIN" "${sopts[@]}" "$tr" "$w.smodel")
    else
        say "$d: kmtk train and svm-train in pairs ($REPEAT)"
        CMD_A=("${TMO[@]}" "$BIN/train" "${kopts[@]}" "$tr" "$w.kmodel")
        CMD_B=("${TMO[@]}" "$SVMTRAIN" "${sopts[@]}" "$tr" "$w.smodel")
    fi
    pair_runs "$w.ktrain" "$w.strain" "$REPEAT" 0
    for side in A B; do
        v=RC_$side rc=${!v} pre=$w.ktrain cmd="kmtk train"
        [ $side = B ] && pre=$w.strain cmd=svm-train
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            say "$d: $cmd stopped after $TIMEOUT s"; timeout_note=1
            [ $side = A ] && kcpu=">$TIMEOUT" || scpu=">$TIMEOUT"
        elif [ "$rc" -ne 0 ]; then
            say "$d: $cmd FAILED (status $rc)"; sed 's/^/    /' "$pre.err" | tail -n 5 >&2; status=1
            [ $side = A ] && kcpu="FAIL($rc)" || scpu="FAIL($rc)"
        fi
    done
    if [ "$NPAIRS" -gt 0 ]; then
        [ -z "$kna" ] && kcpu=$(fmt_spread $A_CPU) kwall=$(fmt_spread $A_WALL) kmb=${A_MB%% *} kok=1
        scpu=$(fmt_spread $B_CPU) swall=$(fmt_spread $B_WALL) smb=${B_MB%% *} sok=1
        if [ -z "$kna" ]; then
            rcpu=$(awk -v r="${R_CPU%% *}" 'BEGIN { printf "%.2f", r }')
            rwall=$(awk -v r="${R_WALL%% *}" 'BEGIN { printf "%.2f", r }')
        fi
    fi
    scpu_med=${B_CPU%% *}

    if [ "$kok" = 1 ]; then
        knz=$(field "$w.ktrain.out" "nonzero coefficients = ")
        say "$d: kmtk predict"
        once "$w.kpred" "$BIN/predict" "$te" "$w.kmodel" "$w.kpredout"
        if [ "$RC" -eq 0 ]; then kacc=$(accuracy "$w.kpred.out") kpcpu=$ONE_CPU; else kacc="FAIL($RC)" status=1; fi
    fi
    if [ "$sok" = 1 ]; then
        snsv=$(field "$w.strain.out" "Total nSV = ")
        [ "$snsv" = "?" ] && snsv=$(field "$w.smodel" "total_sv ")
        say "$d: svm-predict"
        once "$w.spred" "$SVMPREDICT" "$te" "$w.smodel" "$w.spredout"
        if [ "$RC" -eq 0 ]; then sacc=$(accuracy "$w.spred.out") spcpu=$ONE_CPU; else sacc="FAIL($RC)" status=1; fi
    fi
    diff=$(awk -v ka="$kacc" -v sa="$sacc" 'BEGIN { sub(/%$/, "", ka); sub(/%$/, "", sa)
        n = "^[0-9.]+$"; print (ka ~ n && sa ~ n) ? sprintf("%+.2f", ka - sa) : "-" }')
    echo "| $d | $C, $GAMMA | $nrows | $kcpu | $scpu | $rcpu | $kwall | $swall | $rwall | $kmb | $smb | $kacc | $sacc | $diff | $knz | $snsv | $kpcpu | $spcpu |"

    # Matched accuracy: gaps to each tool's own tight solve, then kmtk's ladder.
    [ "$TIGHT" = 0 ] && continue
    kobj=- sobj=- ktobj=- stobj=- kgap=- sgap=- lstep=- lgap=- lcpu=- lwall=- lratio=- lacc=-
    [ "$kok" = 1 ] && kobj=$(primal "$w.kmodel" "$tr")
    [ "$sok" = 1 ] && sobj=$(primal "$w.smodel" "$tr" -c "$C")
    if [ "$sok" = 1 ]; then
        say "$d: svm-train tight (${STIGHT[*]})"
        once "$w.stight" "$SVMTRAIN" "${sopts[@]}" "${STIGHT[@]}" "$tr" "$w.stmodel"
        if [ "$RC" -eq 0 ]; then stobj=$(primal "$w.stmodel" "$tr" -c "$C"); sgap=$(gap "$sobj" "$stobj")
        elif [ "$TIMEDOUT" = 1 ]; then sgap=">$TIMEOUT" timeout_note=1; else sgap="FAIL($RC)" status=1; fi
    fi
    if [ "$kok" = 1 ]; then
        say "$d: kmtk tight (${KTIGHT[*]})"
        once "$w.ktight" "$BIN/train" "${kopts[@]}" "${KTIGHT[@]}" "$tr" "$w.ktmodel"
        if [ "$RC" -eq 0 ]; then
            ktobj=$(primal "$w.ktmodel" "$tr"); kgap=$(gap "$kobj" "$ktobj")
            grep -q 'reached the cap' "$w.ktight.err" && kgap="$kgap (tight at cap)"
        elif [ "$TIMEDOUT" = 1 ]; then kgap=">$TIMEOUT" timeout_note=1; else kgap="FAIL($RC)" status=1; fi
        for v in $LADDER; do
            [[ $ktobj =~ ^[-+0-9.eE]+$ ]] && [[ $sgap =~ ^[-+0-9.eE]+$ ]] || break
            say "$d: kmtk ladder $LADDER_OPT $v"
            once "$w.kl" "$BIN/train" "${kopts[@]}" "$LADDER_OPT" "$v" "$tr" "$w.klmodel"
            [ "$RC" -eq 0 ] || { [ "$TIMEDOUT" = 1 ] && timeout_note=1 || status=1; lstep="$LADDER_OPT $v: FAIL($RC)"; break; }
            g=$(gap "$(primal "$w.klmodel" "$tr")" "$ktobj")
            if gap_le "$g" "$sgap"; then
                lstep="$LADDER_OPT $v" lgap=$g lcpu=$ONE_CPU lwall=$ONE_SEC
                lratio=$(awk -v a="$ONE_CPU" -v b="$scpu_med" 'BEGIN { print (b > 0) ? sprintf("%.2f", a / b) : "-" }')
                once "$w.klpred" "$BIN/predict" "$te" "$w.klmodel" "$w.klpredout"
                [ "$RC" -eq 0 ] && lacc=$(accuracy "$w.klpred.out")
                break
            fi
            lstep="none up to $LADDER_OPT $v (gap $g)"
        done
    fi
    matched+=("| $d | $kobj | $ktobj | $kgap | $sobj | $stobj | $sgap | $lstep | $lgap | $lcpu | $lwall | $lratio | $lacc |")
done

if [ "${#matched[@]}" -gt 0 ]; then
    echo
    echo "Matched accuracy: primal objectives F (bench/libsvm_objective; svm-train's with its bias b), each tool's relative gap (F - F_tight) / F_tight to its own tight solve, and kmtk along the ladder \`$LADDER_OPT\` ${LADDER:-(none)}: the first step whose gap is no larger than svm-train's default gap, timed once."
    echo
    echo "| data | kmtk F | kmtk tight F | kmtk gap | svm F | svm tight F | svm gap | kmtk step at svm's gap | its gap | its CPU s | its wall s | CPU ratio to svm-train | its test |"
    echo "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
    printf '%s\n' "${matched[@]}"
fi

# kmtk's fixed-point solver with 1, 2, ... threads on one dataset.
fna=
if [ -n "$FP_DATASET" ]; then
    d=$FP_DATASET tr=${TRAIN[$FP_DATASET]}
    read -r C GAMMA <<<"$(params "$d")"
    what="$d"
    if [ "$FP_ROWS" -gt 0 ]; then
        head -n "$FP_ROWS" "$tr" >"$work/$d.head$FP_ROWS"
        tr=$work/$d.head$FP_ROWS what="$d, first $FP_ROWS rows"
    fi
    fopts=(-s l1svm -t rbf -g "$GAMMA" -c "$C" -m "$MB" -a fixedpoint "${FP_OPTS[@]}")
    echo
    echo "kmtk fixed-point solver (\`train ${fopts[*]} -n N\`) on $what:"
    echo
    echo "| data | threads | kmtk CPU s | kmtk wall s | kmtk MB | objective | nonzero | speed-up (wall) |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    fna=$kna
    [ -z "$fna" ] && fna=$(probe "${fopts[@]}" -n 1 "${KOPTS[@]}")
    [ -n "$fna" ] && say "kmtk train does not take -a fixedpoint yet: $fna"
    base=
    for n in $FP_THREADS; do
        fobj=- fnz=- fmb=- speed=- fcpu=-
        if [ -n "$fna" ]; then
            fsec=$fna
        else
            say "$d: kmtk train -a fixedpoint -n $n"
            once "$work/$d-fp$n" "$BIN/train" "${fopts[@]}" -n "$n" "${KOPTS[@]}" "$tr" "$work/$d-fp$n.model"
            fsec=$ONE_SEC fcpu=$ONE_CPU fmb=$ONE_MB
            if [ "$TIMEDOUT" = 1 ]; then
                fsec=">$TIMEOUT" fcpu=- timeout_note=1
            elif [ "$RC" -ne 0 ]; then
                fsec="FAIL($RC)" fcpu=- status=1
            else
                fobj=$(field "$work/$d-fp$n.out" "objective = ")
                fnz=$(field "$work/$d-fp$n.out" "nonzero coefficients = ")
                [ -z "$base" ] && base=$fsec
                speed=$(awk -v a="$base" -v b="$fsec" 'BEGIN { print (b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }')
            fi
        fi
        echo "| $d | $n | $fcpu | $fsec | $fmb | $fobj | $fnz | $speed |"
    done
fi

echo
echo "Training runs in pairs, kmtk then svm-train, $REPEAT time(s): each cell is the median (min-max) over the pairs;" \
    "CPU = user + system seconds, wall = elapsed, MB = peak RSS, of the whole process (reading included; bench/runstat)." \
    "Ratios: kmtk / svm-train pair by pair, the median (below 1 kmtk is faster). Predict: one run each."
echo "kmtk has no bias term and LIBSVM has one: their objectives are different problems, so each tool is measured against its own tight optimum;" \
    "diff = kmtk - svm test accuracy in percentage points. kmtk nonzero = coefficients c_i != 0; svm nSV = support vectors."
for d in $split_note; do
    echo "$d: no test file; split deterministically, every 5th line (lines 5, 10, ...) to the test file" \
        "and the rest to training; both tools read the same two files."
done
[[ " $DATASETS " == *" dense "* ]] && echo "dense: datasets/gen_dense ${DENSE_OPTS[*]:+${DENSE_OPTS[*]} }--split-seed 1 (train) and --split-seed 2 (test)."
[ -n "$timeout_note" ] && echo ">N: stopped after BENCH_TIMEOUT = $TIMEOUT s (not counted as a failure)."
[ -n "$kna$fna" ] && echo "n/a: kmtk train rejected these options (usage error) on a 4-row probe: not implemented yet, or a bad BENCH_KMTK_OPTS."
exit $status
