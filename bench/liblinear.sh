#!/usr/bin/env bash
# bench/liblinear.sh - kmtk train/predict against Debian's liblinear-train/-predict (a benchmark,
# not a test): the same plain files, the same C, no bias. Pairs: l1svm ~ liblinear -s 3,
# l2svm ~ -s 1, svr ~ -s 13 (same -p). Training runs in pairs, kmtk then liblinear, BENCH_REPEAT
# times after BENCH_WARMUP warm-up pairs; each run's wall time, CPU time (user + system) and peak
# RSS come from bench/runstat. One markdown table row per dataset x solver on stdout: median and
# (min-max) CPU and wall seconds of each tool, the kmtk/liblinear ratios (median over the pairs),
# median peak RSS, both primal objectives (kmtk's own `objective =` line; liblinear's computed
# from its model by bench/liblinear_objective) with their relative difference, each tool's
# relative primal gap to its own tight solve (matched accuracy: how far each default stops from
# its optimum), and both test accuracies (MSE for svr). The CPU (model, avx2/avx512f) heads the
# table. Progress goes to stderr.
#
# Usage: bench/liblinear.sh            (after `make`; takes a few minutes on 2 cores)
# Environment (all optional):
#   DATA_DIR              the *.gz sets (default: <repo>/../shared/datasets)
#   BENCH_BIN             directory holding train, predict, bench/liblinear_objective,
#                         bench/runstat and datasets/gen_sparse (default: the repository, i.e. `make` with OUT=.)
#   BENCH_CACHE           decompressed and generated data, kept between runs
#                         (default: ${TMPDIR:-/tmp}/kmtk-bench)
#   BENCH_DATASETS        space-separated names (default: "a9a w8a ijcnn1 reuters-lasvm synth abalone_scale space_ga
#                         cpusmall cadata"). NAME means DATA_DIR/NAME.gz, test NAME.t.gz if
#                         present, else training accuracy (marked). Labels all +-1 = binary,
#                         anything else = regression. synth / synth-reg = gen_sparse sets.
#   BENCH_SOLVERS         subset of "l1svm l2svm svr" (default: all three); l1svm/l2svm run on
#                         binary sets, svr on regression sets (and binary ones, see below)
#   BENCH_SVR_BINARY      1 = also run svr on the binary sets (default 1), 0 = do not
#   BENCH_C               C for both tools (default 1). Set C here, not in the *_OPTS.
#   BENCH_P               epsilon of svr for both tools (default 0.1 = liblinear's default)
#   BENCH_KMTK_OPTS       extra options for kmtk train (e.g. "-e 0.001"); default: none
#   BENCH_LIBLINEAR_OPTS  extra options for liblinear-train (e.g. "-e 0.01"); default: none
#   BENCH_SYNTH_OPTS      gen_sparse options for the synthetic training file (default: none,
#                         i.e. 400,000 rows x ~80 nnz, ~490 MB); --split-seed 1
#   BENCH_SYNTH_TEST_ROWS rows of the synthetic test file (default 100000; --split-seed 2)
#   BENCH_REPEAT          counted pairs of training runs (default 7)
#   BENCH_WARMUP          warm-up pairs before them, not counted (default 1)
#   BENCH_KMTK_TIGHT_OPTS options added for kmtk's tight solve (default "-e 1e-9"; the default -e
#                         is a relative duality gap of 1e-5)
#   BENCH_LIBLINEAR_TIGHT_OPTS  options added for liblinear's tight solve (default "-e 1e-5")
#   BENCH_TIGHT           0 = no tight solves (the gap columns read "-"); default 1
#   BENCH_MATCH           1 = matched accuracy: before the pairs, liblinear's default model
#                         and its tight solve give liblinear's relative primal gap g, and kmtk
#                         runs with -e g rounded down to one significant digit (kmtk's -e is a
#                         relative duality gap, which bounds its relative primal gap, so kmtk
#                         is at least as close to its optimum); BENCH_MATCH_MAX (e.g. 1e-3)
#                         caps that -e. Needs BENCH_TIGHT=1; default 0
#   BENCH_AVX2            1 = measure the AVX2 code path on an AVX-512 CPU (bench/lib.bash
#                         avx2_setup: a kmtk build without AVX-512 clones, made once into the
#                         cache unless BENCH_BIN is set; OPENBLAS_CORETYPE=Haswell and
#                         GLIBC_TUNABLES for both tools); default 0
#   LIBLINEAR_TRAIN, LIBLINEAR_PREDICT   the peer's binaries (default liblinear-train,
#                         liblinear-predict)
# Exit status: 0, or 1 when a tool failed (crashed or returned non-zero), 2 when something
# needed is missing. A slow ratio is never a failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.bash"
bench_paths
DATASETS=${BENCH_DATASETS:-a9a w8a ijcnn1 reuters-lasvm synth abalone_scale space_ga cpusmall cadata}
SOLVERS=${BENCH_SOLVERS:-l1svm l2svm svr}
SVR_BINARY=${BENCH_SVR_BINARY:-1}
C=${BENCH_C:-1}
P=${BENCH_P:-0.1}
read -r -a KOPTS <<<"${BENCH_KMTK_OPTS:-}"
read -r -a LOPTS <<<"${BENCH_LIBLINEAR_OPTS:-}"
read -r -a SYNTH_OPTS <<<"${BENCH_SYNTH_OPTS:-}"
SYNTH_TEST_ROWS=${BENCH_SYNTH_TEST_ROWS:-100000}
LLTRAIN=${LIBLINEAR_TRAIN:-liblinear-train}
LLPREDICT=${LIBLINEAR_PREDICT:-liblinear-predict}
REPEAT=${BENCH_REPEAT:-7}
WARMUP=${BENCH_WARMUP:-1}
read -r -a KTIGHT <<<"${BENCH_KMTK_TIGHT_OPTS--e 1e-9}"
read -r -a LTIGHT <<<"${BENCH_LIBLINEAR_TIGHT_OPTS--e 1e-5}"
[ "${BENCH_TIGHT:-1}" = 0 ] && KTIGHT=() LTIGHT=()
MATCH=${BENCH_MATCH:-0}
MATCH_MAX=${BENCH_MATCH_MAX:-}

[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT: not a positive count: '$REPEAT'"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "BENCH_WARMUP: not a count: '$WARMUP'"
[ "$MATCH" = 1 ] && [ "${#LTIGHT[@]}" -eq 0 ] && die "BENCH_MATCH=1 needs the tight solves (BENCH_TIGHT=1)"
bench_tools train predict bench/liblinear_objective datasets/gen_sparse bench/runstat
need_peers liblinear-tools "$LLTRAIN" "$LLPREDICT"
bench_dirs

# Makes the synthetic train/test pair ($1 = synth or synth-reg) in the cache once; prints both paths.
synth() {
    local extra=() key tr te
    [ "$1" = synth-reg ] && extra=(--regression)
    key=$({ printf '%s|' "${SYNTH_OPTS[@]}" "${extra[@]}" "$SYNTH_TEST_ROWS"
            cat "$repo/datasets/gen_sparse.c"; } | md5sum | cut -c1-10)
    tr=$CACHE/$1-$key.train te=$CACHE/$1-$key.test
    if [ ! -s "$tr" ]; then
        say "generating $tr"
        "$BIN/datasets/gen_sparse" "${SYNTH_OPTS[@]}" "${extra[@]}" --split-seed 1 >"$tr.tmp.$$" \
            && mv "$tr.tmp.$$" "$tr" || die "gen_sparse failed"
    fi
    if [ ! -s "$te" ]; then
        say "generating $te"
        "$BIN/datasets/gen_sparse" "${SYNTH_OPTS[@]}" "${extra[@]}" --rows "$SYNTH_TEST_ROWS" \
            --split-seed 2 >"$te.tmp.$$" && mv "$te.tmp.$$" "$te" || die "gen_sparse failed"
    fi
    echo "$tr $te"
}

# Runs a command once (run_once); stdout/stderr to $1.out/$1.err; sets RC and says so on failure.
once() {
    local pre=$1
    shift
    run_once "$pre" "$@"
    if [ "$RC" -ne 0 ]; then
        say "FAILED (status $RC): $*"
        sed 's/^/    /' "$pre.err" | tail -n 5 >&2
    fi
}

# Prints the accuracy (as "x%") or MSE found in a predict output file $1, or "?".
metric() {
    local a
    a=$(sed -n 's/^Accuracy = \([^%]*\)%.*/\1%/p' "$1" | tail -n 1)
    [ -n "$a" ] || a=$(sed -n 's/^Mean squared error = \([^ ]*\).*/\1/p' "$1" | tail -n 1)
    echo "${a:-?}"
}

# Prints kmtk's or liblinear_objective's "objective = F" value from file $1, or "?".
objective() {
    local f
    f=$(sed -n 's/^objective = \([^ ]*\).*/\1/p' "$1" | tail -n 1)
    echo "${f:-?}"
}

# Resolve every dataset first, so a missing file stops the run before any timing.
declare -A TRAIN TEST KIND
for d in $DATASETS; do
    case $d in
    synth | synth-reg)
        pair=$(synth "$d") || exit 2
        read -r tr te <<<"$pair"
        TRAIN[$d]=$tr TEST[$d]=$te
        if [ "$d" = synth ]; then KIND[$d]=binary; else KIND[$d]=regression; fi
        ;;
    *)
        [ -f "$DATA_DIR/$d.gz" ] || die "$DATA_DIR/$d.gz not found (set DATA_DIR or BENCH_DATASETS)"
        TRAIN[$d]=$(plain "$d") || exit 2
        if [ -f "$DATA_DIR/$d.t.gz" ]; then
            TEST[$d]=$(plain "$d.t") || exit 2
        else
            TEST[$d]=
        fi
        if is_binary "${TRAIN[$d]}"; then KIND[$d]=binary; else KIND[$d]=regression; fi
        ;;
    esac
done
for s in $SOLVERS; do
    case $s in l1svm | l2svm | svr) ;; *) die "unknown solver '$s' (l1svm l2svm svr)" ;; esac
done

llver=$(dpkg-query -W -f '${Version}' liblinear-tools 2>/dev/null || echo unknown)
commit=$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)
echo "kmtk \`train\` vs LIBLINEAR \`liblinear-train\` ($llver), $(date -u +%Y-%m-%d), kmtk commit $commit." \
    "C = $C, svr p = $P, no bias; kmtk options: \`${BENCH_KMTK_OPTS:-(defaults)}\`;" \
    "liblinear options: \`${BENCH_LIBLINEAR_OPTS:-(defaults)}\`; $REPEAT pairs after $WARMUP warm-up pair(s);" \
    "tight solves: kmtk \`${KTIGHT[*]:-(none)}\`, liblinear \`${LTIGHT[*]:-(none)}\`." \
    "$([ "$MATCH" = 1 ] && echo "Matched accuracy (BENCH_MATCH=1): kmtk's -e per row is liblinear's relative primal gap, rounded down${MATCH_MAX:+, at most $MATCH_MAX}.")"
echo
cpu_line
echo
echo "| data | solver (liblinear) | kmtk CPU s | liblinear CPU s | CPU ratio | kmtk wall s | liblinear wall s | wall ratio | kmtk MB | liblinear MB | kmtk objective | liblinear objective | rel. diff | kmtk gap | liblinear gap | kmtk test | liblinear test |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

# Prints the relative gap (F - F_tight) / |F_tight| of objective $1 to the tight objective $2, or "-".
gap() {
    awk -v f="$1" -v t="$2" 'BEGIN {
        num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"
        if (f ~ num && t ~ num && t + 0 != 0) printf "%.2e\n", (f - t) / (t < 0 ? -t : t); else print "-" }'
}

# Prints gap $1 rounded down to one significant digit, at most $2 (if given), for kmtk's -e;
# fails when $1 is not a positive number.
match_eps() {
    awk -v g="${1%\*}" -v cap="$2" 'BEGIN {
        if (g !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || g + 0 <= 0) exit 1
        k = 10 ^ int(log(g) / log(10) - (g < 1 ? 1 : 0))
        if (k * 10 <= g) k *= 10
        e = int(g / k + 1e-9) * k
        if (cap != "" && e > cap + 0) e = cap + 0
        printf "%.3g\n", e }'
}

status=0
train_note=
cap_note=
for d in $DATASETS; do
    for s in $SOLVERS; do
        case $s in
        l1svm) lls=3 ;;
        l2svm) lls=1 ;;
        svr) lls=13 ;;
        esac
        if [ "${KIND[$d]}" = binary ]; then
            [ "$s" = svr ] && [ "$SVR_BINARY" != 1 ] && continue
        else
            [ "$s" != svr ] && continue
        fi
        pflag=()
        [ "$s" = svr ] && pflag=(-p "$P")
        tr=${TRAIN[$d]} te=${TEST[$d]} mark=
        if [ -z "$te" ]; then
            te=$tr mark=" (train)" train_note=1
        fi
        w=$work/$d-$s
        meps=() mnote= pre_lgap=
        if [ "$MATCH" = 1 ]; then   # liblinear's accuracy first: its default and tight solves
            say "$d $s: liblinear's gap (default and ${LTIGHT[*]})"
            once "$w.lm" "$LLTRAIN" -s "$lls" -c "$C" "${pflag[@]}" -q "${LOPTS[@]}" "$tr" "$w.lmmodel"
            [ "$RC" -eq 0 ] && once "$w.lmobj" "$BIN/bench/liblinear_objective" -s "$s" -c "$C" "${pflag[@]}" "$w.lmmodel" "$tr"
            [ "$RC" -eq 0 ] && once "$w.ltight" "$LLTRAIN" -s "$lls" -c "$C" "${pflag[@]}" "${LOPTS[@]}" "${LTIGHT[@]}" "$tr" "$w.ltmodel"
            [ "$RC" -eq 0 ] && once "$w.ltobj" "$BIN/bench/liblinear_objective" -s "$s" -c "$C" "${pflag[@]}" "$w.ltmodel" "$tr"
            if [ "$RC" -eq 0 ] && pre_lgap=$(gap "$(objective "$w.lmobj.out")" "$(objective "$w.ltobj.out")") &&
                e=$(match_eps "$pre_lgap" "$MATCH_MAX"); then
                meps=(-e "$e") mnote=", kmtk -e $e"
            else
                say "$d $s: no liblinear gap ($pre_lgap): kmtk keeps its options"
                pre_lgap= mnote=", kmtk -e ?"
            fi
        fi
        say "$d $s: $REPEAT pairs"

        # Training, paired: kmtk, liblinear, kmtk, liblinear, ...
        CMD_A=("$BIN/train" -s "$s" -c "$C" "${pflag[@]}" "${KOPTS[@]}" "${meps[@]}" "$tr" "$w.kmodel")
        CMD_B=("$LLTRAIN" -s "$lls" -c "$C" "${pflag[@]}" -q "${LOPTS[@]}" "$tr" "$w.lmodel")
        pair_runs "$w.ktrain" "$w.ltrain" "$REPEAT" "$WARMUP"
        kcpu=$(fmt_spread $A_CPU) lcpu=$(fmt_spread $B_CPU) kwall=$(fmt_spread $A_WALL) lwall=$(fmt_spread $B_WALL)
        rcpu=$(awk -v r="${R_CPU%% *}" 'BEGIN { print (r ~ /^[0-9.eE+-]+$/) ? sprintf("%.2f", r) : "-" }')
        rwall=$(awk -v r="${R_WALL%% *}" 'BEGIN { print (r ~ /^[0-9.eE+-]+$/) ? sprintf("%.2f", r) : "-" }')
        kmb=${A_MB%% *} lmb=${B_MB%% *}
        kobj=- lobj=- kacc=- lacc=- kgap=- lgap=-
        if [ "$RC_A" -ne 0 ]; then
            say "FAILED (status $RC_A): ${CMD_A[*]}"; sed 's/^/    /' "$w.ktrain.err" | tail -n 5 >&2
            kcpu="FAIL($RC_A)" kwall=- status=1
        fi
        if [ "$RC_B" -ne 0 ]; then
            say "FAILED (status $RC_B): ${CMD_B[*]}"; sed 's/^/    /' "$w.ltrain.err" | tail -n 5 >&2
            lcpu="FAIL($RC_B)" lwall=- status=1
        fi
        if [ "$RC_A" -eq 0 ] && [ -s "$w.kmodel" ]; then
            kobj=$(objective "$w.ktrain.out")
            once "$w.kpred" "$BIN/predict" "$te" "$w.kmodel" "$w.kpredout"
            if [ "$RC" -eq 0 ]; then kacc=$(metric "$w.kpred.out"); else kacc="FAIL($RC)"; status=1; fi
            if [ "${#KTIGHT[@]}" -gt 0 ]; then
                say "$d $s: kmtk tight (${KTIGHT[*]})"
                once "$w.ktight" "$BIN/train" -s "$s" -c "$C" "${pflag[@]}" "${KOPTS[@]}" "${meps[@]}" "${KTIGHT[@]}" "$tr" "$w.ktmodel"
                if [ "$RC" -eq 0 ]; then
                    kgap=$(gap "$kobj" "$(objective "$w.ktight.out")")
                    grep -qi 'cap\|max.iter\|reached' "$w.ktight.err" "$w.ktight.out" && kgap="$kgap*" cap_note=1
                else kgap="FAIL($RC)"; status=1; fi
            fi
        fi
        if [ "$RC_B" -eq 0 ] && [ -s "$w.lmodel" ]; then
            once "$w.lobj" "$BIN/bench/liblinear_objective" -s "$s" -c "$C" "${pflag[@]}" "$w.lmodel" "$tr"
            if [ "$RC" -eq 0 ]; then lobj=$(objective "$w.lobj.out"); else lobj="FAIL($RC)"; status=1; fi
            once "$w.lpred" "$LLPREDICT" "$te" "$w.lmodel" "$w.lpredout"
            if [ "$RC" -eq 0 ]; then lacc=$(metric "$w.lpred.out"); else lacc="FAIL($RC)"; status=1; fi
            if [ "${#LTIGHT[@]}" -gt 0 ]; then
                if [ -n "$pre_lgap" ]; then   # solved before the pairs
                    RC=0
                else
                    say "$d $s: liblinear tight (${LTIGHT[*]})"
                    once "$w.ltight" "$LLTRAIN" -s "$lls" -c "$C" "${pflag[@]}" "${LOPTS[@]}" "${LTIGHT[@]}" "$tr" "$w.ltmodel"
                fi
                if [ "$RC" -eq 0 ]; then
                    [ -n "$pre_lgap" ] || once "$w.ltobj" "$BIN/bench/liblinear_objective" -s "$s" -c "$C" "${pflag[@]}" "$w.ltmodel" "$tr"
                    [ "$RC" -eq 0 ] && lgap=$(gap "$lobj" "$(objective "$w.ltobj.out")") || { lgap="FAIL($RC)"; status=1; }
                    grep -qi 'reaching max' "$w.ltight.out" "$w.ltight.err" && lgap="$lgap*" cap_note=1
                else lgap="FAIL($RC)"; status=1; fi
            fi
        fi

        row=$(awk -v ko="$kobj" -v lo="$lobj" 'BEGIN {
            num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"
            kf = (ko ~ num) ? sprintf("%.7g", ko) : ko
            lf = (lo ~ num) ? sprintf("%.7g", lo) : lo
            rel = (ko ~ num && lo ~ num && lo + 0 != 0) ? sprintf("%+.2e", (ko - lo) / (lo < 0 ? -lo : lo)) : "-"
            printf "%s|%s|%s", kf, lf, rel }')
        IFS='|' read -r kf lf rel <<<"$row"
        echo "| $d | $s (-s $lls)$mnote | $kcpu | $lcpu | $rcpu | $kwall | $lwall | $rwall | $kmb | $lmb | $kf | $lf | $rel | $kgap | $lgap | $kacc$mark | $lacc$mark |"
    done
done
echo
echo "Training runs in pairs, kmtk then liblinear, $REPEAT times after $WARMUP warm-up pair(s) (not counted): each cell is the median," \
    "(min-max) over the pairs; CPU = user + system seconds, wall = elapsed, of the whole process (reading the file included; bench/runstat)."
echo "Ratios: kmtk / liblinear pair by pair, the median (below 1 kmtk is faster). MB: median peak RSS."
echo "Objectives: primal F(w) of each tool's model on the training file (liblinear's by bench/liblinear_objective); rel. diff = (kmtk - liblinear) / |liblinear|."
echo "gap: each tool's relative primal gap (F - F_tight) / |F_tight| to its own tight solve (the options above), i.e. how far its default stops from its own optimum; negative = the tight solve ended higher."
[ -n "$cap_note" ] && echo "*: the tight solve stopped at its iteration cap, so its objective is not the optimum."
echo "Test column: accuracy for l1svm/l2svm, mean squared error for svr."
[ -n "$train_note" ] && echo "(train): no test file for this set; the figure is training accuracy (MSE for svr)."
exit $status
