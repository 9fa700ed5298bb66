#!/usr/bin/env bash
# bench/libsvm.sh - kmtk kernel train/predict against Debian's LIBSVM svm-train/svm-predict (a
# benchmark, not a test): Gaussian RBF kernel exp(-gamma ||x - x'||^2), the same C, gamma and
# kernel cache (MB) for both, the same plain train/test files. kmtk: `train -s l1svm -t rbf`
# (hinge loss, no bias term); LIBSVM: `svm-train -s 0 -t 2` (C-SVC, with a bias term b), so the
# objectives differ by design and the table compares test accuracy, not objectives.
# One markdown row per dataset on stdout: wall seconds and peak RSS of each whole training
# process (/usr/bin/time -f '%e %M'), the ratio kmtk/svm-train, both test accuracies and their
# difference in points, kmtk's nonzero coefficients and svm-train's nSV, and the wall seconds of
# each predict. Then, on one dataset, kmtk's fixed-point solver (-a fixedpoint) with 1 and 2
# threads and the speed-up. Progress goes to stderr.
#
# Usage: bench/libsvm.sh              (after `make`; svm-train + svm-predict alone take about
#                                      2.5 minutes on 2 cores for the three default sets)
# Environment (all optional):
#   DATA_DIR           the *.gz sets (default: <repo>/../shared/datasets)
#   BENCH_BIN          directory holding train and predict (default: the repository)
#   BENCH_CACHE        decompressed data and test splits, kept between runs
#                      (default: ${TMPDIR:-/tmp}/kmtk-bench, shared with bench/liblinear.sh)
#   BENCH_DATASETS     space-separated names (default: "a9a w8a ijcnn1"). NAME means
#                      DATA_DIR/NAME.gz; the test file is NAME.t.gz when present, otherwise
#                      NAME is split deterministically: every 5th line (lines 5, 10, ...) to
#                      the test file, the rest to the training file (w8a); both tools read
#                      the same two files. Labels must be +-1 (binary).
#   BENCH_C            C for both tools (default 1)
#   BENCH_GAMMA        gamma of the RBF kernel for both tools (default 0.05)
#   BENCH_CACHE_MB     kernel cache in MB, -m of both tools (default 200: kmtk's default;
#                      svm-train's own default is 100, so it is always passed explicitly)
#   BENCH_THREADS      kmtk train -n for the comparison rows (default 1: svm-train uses one
#                      core); empty = do not pass -n (kmtk's default)
#   BENCH_KMTK_OPTS    extra options for kmtk train (e.g. "-e 0.01"); default: none
#   BENCH_SVM_OPTS     extra options for svm-train (e.g. "-e 0.01 -h 0"); default: none
#   BENCH_FP_DATASET   dataset for the fixed-point rows (default a9a; "none" = skip); it
#                      need not be in BENCH_DATASETS
#   BENCH_FP_ROWS      the fixed-point rows train on the first N rows of that set (default
#                      5000, so that K fits the cache and a run takes seconds; 0 = all: the
#                      fixed point needs many products Kc, hours on all of a9a)
#   BENCH_FP_OPTS      fixed-point options (default "--alpha norm2": fewer iterations)
#   BENCH_FP_THREADS   thread counts for the fixed-point rows (default "1 2"); the speed-up
#                      is relative to the first
#   BENCH_REPEAT       runs of each command, the fastest counts (default 1: training runs are
#                      long); a command that takes under 2 s is run up to 5 times anyway
#   BENCH_TIMEOUT      seconds after which a run is stopped and its cell reads ">N"
#                      (default 600; 0 = no limit). A timeout is not a failure.
#   SVM_TRAIN, SVM_PREDICT  the peer's binaries (default svm-train, svm-predict; Debian
#                      package libsvm-tools)
# Exit status: 0, or 1 when a tool failed (crashed or returned non-zero on a real run), 2 when
# something needed is missing. A slow ratio is never a failure, and neither is a kmtk train that
# does not accept the kernel options yet: its cells read "n/a: train has no -t" (or the option
# it rejected, or its message), probed once on a 4-row file (status 1 = usage error).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}
BIN=${BENCH_BIN:-$repo}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
DATASETS=${BENCH_DATASETS:-a9a w8a ijcnn1}
C=${BENCH_C:-1}
GAMMA=${BENCH_GAMMA:-0.05}
MB=${BENCH_CACHE_MB:-200}
THREADS=${BENCH_THREADS-1}
FP_DATASET=${BENCH_FP_DATASET:-a9a}
FP_THREADS=${BENCH_FP_THREADS:-1 2}
FP_ROWS=${BENCH_FP_ROWS:-5000}
read -r -a FP_OPTS <<<"${BENCH_FP_OPTS---alpha norm2}"
REPEAT=${BENCH_REPEAT:-1}
TIMEOUT=${BENCH_TIMEOUT:-600}
read -r -a KOPTS <<<"${BENCH_KMTK_OPTS:-}"
read -r -a SOPTS <<<"${BENCH_SVM_OPTS:-}"
SVMTRAIN=${SVM_TRAIN:-svm-train}
SVMPREDICT=${SVM_PREDICT:-svm-predict}
TIME=/usr/bin/time
[ "$FP_DATASET" = none ] && FP_DATASET=

. "$here/lib.bash"

for t in "$BIN/train" "$BIN/predict"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
for t in "$SVMTRAIN" "$SVMPREDICT"; do
    command -v "$t" >/dev/null || die "$t not found: apt-get install libsvm-tools"
done
[ -x "$TIME" ] || die "$TIME not found: apt-get install time"
command -v timeout >/dev/null || die "timeout not found (coreutils)"
for v in "$C" "$GAMMA" "$MB" "$REPEAT" "$TIMEOUT"; do
    [[ $v =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "not a non-negative number: '$v'"
done
[[ $THREADS =~ ^[0-9]*$ ]] || die "BENCH_THREADS: not a count: '$THREADS'"
for n in $FP_THREADS; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "BENCH_FP_THREADS: not a count: '$n'"; done
bench_dirs

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

# Runs a command under /usr/bin/time and timeout; stdout/stderr to $1.out/$1.err; sets SEC (wall),
# RSS (peak MB), RC, and TIMEDOUT=1 when BENCH_TIMEOUT stopped it. BENCH_REPEAT runs (default 1),
# up to 5 when a run takes under 2 s; the fastest counts.
timed() {
    local pre=$1
    shift
    local s m k best="" bestmb=""
    TIMEDOUT=0
    for ((k = 0; ; k++)); do
        time_once "$pre" timeout --foreground -k 10 "$TIMEOUT" "$@"
        s=$ONE_SEC m=$ONE_MB
        if [ -z "$best" ] || awk -v a="$s" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$s bestmb=$m
        fi
        if { [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; } && [ "$TIMEOUT" != 0 ] \
            && awk -v a="$s" -v b="$TIMEOUT" 'BEGIN { exit !(a >= b) }'; then
            TIMEDOUT=1
            break
        fi
        [ "$RC" -eq 0 ] || break
        ((k + 1 < REPEAT)) && continue
        ((k + 1 < 5)) && awk -v a="$s" 'BEGIN { exit !(a < 2) }' && continue
        break
    done
    SEC=$best RSS=$bestmb
    if [ "$TIMEDOUT" = 1 ]; then
        say "stopped after $TIMEOUT s (BENCH_TIMEOUT): $*"
    elif [ "$RC" -ne 0 ]; then
        say "FAILED (status $RC): $*"
        sed 's/^/    /' "$pre.err" | tail -n 5 >&2
    fi
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

# kmtk train's kernel options, as used in every kmtk run (-n added per run).
kernel_opts=(-s l1svm -t rbf -g "$GAMMA" -c "$C" -m "$MB")

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
kna=$(probe "${kernel_opts[@]}" "${nflag[@]}" "${KOPTS[@]}")
[ -n "$kna" ] && say "kmtk train does not take the kernel options yet: $kna"

svmver=$(dpkg-query -W -f '${Version}' libsvm-tools 2>/dev/null || echo unknown)
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
echo "kmtk \`train -s l1svm -t rbf\` vs LIBSVM \`svm-train -s 0 -t 2\` ($svmver), $(date -u +%Y-%m-%d)," \
    "$(nproc) cores, kmtk commit $commit. C = $C, gamma = $GAMMA, cache -m $MB MB for both," \
    "kmtk threads: ${THREADS:-(default)}; kmtk options: \`${BENCH_KMTK_OPTS:-(defaults)}\`;" \
    "svm-train options: \`${BENCH_SVM_OPTS:-(defaults)}\`."
echo
echo "| data | rows train/test | kmtk s | svm-train s | ratio | kmtk MB | svm-train MB | kmtk test | svm test | diff (points) | kmtk nonzero | svm nSV | kmtk predict s | svm-predict s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

status=0
fna=
split_note=
timeout_note=
for d in $DATASETS; do
    tr=${TRAIN[$d]} te=${TEST[$d]} w=$work/$d
    nrows="$(rows "$tr")/$(rows "$te")"
    [ -n "${SPLIT[$d]}" ] && split_note="$split_note $d" && nrows="$nrows (split)"

    # kmtk
    kacc=- knz=- kpsec=- kmb=-
    if [ -n "$kna" ]; then
        ksec=$kna
    else
        say "$d: kmtk train"
        timed "$w.ktrain" "$BIN/train" "${kernel_opts[@]}" "${nflag[@]}" "${KOPTS[@]}" "$tr" "$w.kmodel"
        ksec=$SEC kmb=$RSS
        if [ "$TIMEDOUT" = 1 ]; then
            ksec=">$TIMEOUT" timeout_note=1
        elif [ "$RC" -ne 0 ]; then
            ksec="FAIL($RC)" status=1
        else
            knz=$(field "$w.ktrain.out" "nonzero coefficients = ")
            say "$d: kmtk predict"
            timed "$w.kpred" "$BIN/predict" "$te" "$w.kmodel" "$w.kpredout"
            if [ "$RC" -eq 0 ]; then kacc=$(accuracy "$w.kpred.out") kpsec=$SEC; else kacc="FAIL($RC)" status=1; fi
        fi
    fi

    # LIBSVM (no -q: its summary carries nSV)
    say "$d: svm-train"
    sacc=- snsv=- spsec=-
    timed "$w.strain" "$SVMTRAIN" -s 0 -t 2 -g "$GAMMA" -c "$C" -m "$MB" "${SOPTS[@]}" "$tr" "$w.smodel"
    ssec=$SEC smb=$RSS
    if [ "$TIMEDOUT" = 1 ]; then
        ssec=">$TIMEOUT" timeout_note=1
    elif [ "$RC" -ne 0 ]; then
        ssec="FAIL($RC)" status=1
    else
        snsv=$(field "$w.strain.out" "Total nSV = ")
        [ "$snsv" = "?" ] && snsv=$(field "$w.smodel" "total_sv ")
        say "$d: svm-predict"
        timed "$w.spred" "$SVMPREDICT" "$te" "$w.smodel" "$w.spredout"
        if [ "$RC" -eq 0 ]; then sacc=$(accuracy "$w.spred.out") spsec=$SEC; else sacc="FAIL($RC)" status=1; fi
    fi

    row=$(awk -v ks="$ksec" -v ss="$ssec" -v ka="$kacc" -v sa="$sacc" 'BEGIN {
        num = "^[0-9.]+$"
        ratio = (ks ~ num && ss ~ num && ss + 0 > 0) ? sprintf("%.2f", ks / ss) : "-"
        sub(/%$/, "", ka); sub(/%$/, "", sa)
        diff = (ka ~ num && sa ~ num) ? sprintf("%+.2f", ka - sa) : "-"
        printf "%s|%s", ratio, diff }')
    IFS='|' read -r ratio diff <<<"$row"
    echo "| $d | $nrows | $ksec | $ssec | $ratio | $kmb | $smb | $kacc | $sacc | $diff | $knz | $snsv | $kpsec | $spsec |"
done

# kmtk's fixed-point solver with 1, 2, ... threads on one dataset.
if [ -n "$FP_DATASET" ]; then
    d=$FP_DATASET tr=${TRAIN[$FP_DATASET]}
    what="$d"
    if [ "$FP_ROWS" -gt 0 ]; then
        head -n "$FP_ROWS" "$tr" >"$work/$d.head$FP_ROWS"
        tr=$work/$d.head$FP_ROWS what="$d, first $FP_ROWS rows"
    fi
    echo
    echo "kmtk fixed-point solver (\`train -s l1svm -t rbf -a fixedpoint ${FP_OPTS[*]} -n N\`, same C, gamma, -m) on $what:"
    echo
    echo "| data | threads | kmtk s | kmtk MB | objective | nonzero | speed-up |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    fna=$kna
    [ -z "$fna" ] && fna=$(probe "${kernel_opts[@]}" -a fixedpoint -n 1 "${KOPTS[@]}")
    [ -n "$fna" ] && say "kmtk train does not take -a fixedpoint yet: $fna"
    base=
    for n in $FP_THREADS; do
        fobj=- fnz=- fmb=- speed=-
        if [ -n "$fna" ]; then
            fsec=$fna
        else
            say "$d: kmtk train -a fixedpoint -n $n"
            timed "$work/$d-fp$n" "$BIN/train" "${kernel_opts[@]}" -a fixedpoint "${FP_OPTS[@]}" -n "$n" "${KOPTS[@]}" "$tr" "$work/$d-fp$n.model"
            fsec=$SEC fmb=$RSS
            if [ "$TIMEDOUT" = 1 ]; then
                fsec=">$TIMEOUT" timeout_note=1
            elif [ "$RC" -ne 0 ]; then
                fsec="FAIL($RC)" status=1
            else
                fobj=$(field "$work/$d-fp$n.out" "objective = ")
                fnz=$(field "$work/$d-fp$n.out" "nonzero coefficients = ")
                [ -z "$base" ] && base=$fsec
                speed=$(awk -v a="$base" -v b="$fsec" 'BEGIN { print (b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }')
            fi
        fi
        echo "| $d | $n | $fsec | $fmb | $fobj | $fnz | $speed |"
    done
fi

echo
echo "Times (wall s) and peak RSS (MB) are whole processes, reading the file included; training runs" \
    "once unless BENCH_REPEAT is set (the fastest counts), commands under 2 s up to 5 times."
echo "kmtk has no bias term and LIBSVM has one, so objectives are not comparable; test accuracy is." \
    "diff = kmtk - svm in percentage points. kmtk nonzero = coefficients c_i != 0; svm nSV = support vectors."
for d in $split_note; do
    echo "$d: no test file; split deterministically, every 5th line (lines 5, 10, ...) to the test file" \
        "and the rest to training; both tools read the same two files."
done
[ -n "$timeout_note" ] && echo ">N: stopped after BENCH_TIMEOUT = $TIMEOUT s (not counted as a failure)."
[ -n "$kna$fna" ] && echo "n/a: kmtk train rejected these options (usage error) on a 4-row probe: not implemented yet, or a bad BENCH_KMTK_OPTS."
exit $status
