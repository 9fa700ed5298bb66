#!/usr/bin/env bash
# bench/okl/experiment2.sh - "Learning low-rank output kernels" (Dinuzzo and Fukumizu, seed
# 001), section 6.2, Experiment 2 (Figure 2): m = 100,000 outputs, rank p = 50, 25 lambdas:
# validation MSE per lambda against the baseline L = I, time per lambda, the whole path's
# time (the paper: about 45 s in MATLAB) and peak memory (target < 1 GiB), for train -s okl
# as it is and with --plain (Algorithm 1 as printed). A benchmark, not a test: it never
# fails on a number. See doc/okl.md.
#
# Data: datasets/gen_okl_signals -m M --seed S: 200 grid points, a random 100 train, the
# other 100 validation (the MSE of Figure 2), each file ~115 MB at m = 100,000; generated
# once into the cache (BENCH_CACHE) and reused.
# Runs (train -s okl -t laplacian -g 10 --valid, 25 lambdas in [1e-5 alpha, alpha]):
#   default   --rank P, REPEATS times (timings vary on a shared machine: ranges)
#   plain     --rank P --plain, PLAIN_REPEATS times
#   identity  --identity (L = I: independent RLS per output), once
# Each under /usr/bin/time (wall seconds, peak RSS). Times reported: train's own "path: X s
# (setup Y s)" and "time = Z s (read W s, ...)" (X: the 25 solves; Y: kernel matrix, eigendecomposition
# and the products of the reduction; W: parsing the file) and the process's wall time
# (which also counts reading the validation file and writing the model: A, B of m x p).
# Then predict on the validation file with the chosen model, as a check of the MSE.
#
# Usage: bench/okl/experiment2.sh > exp2.md     (after make; about 1-2 minutes when the
#        data are cached, plus ~15 s to generate them the first time)
# Environment (all optional):
#   OKL_M            outputs m (default 100000, the paper's)
#   OKL_RANK         rank p (default 50)
#   OKL_SEED         gen_okl_signals --seed (default 1)
#   REPEATS          runs of the default path (default 3)
#   PLAIN_REPEATS    runs with --plain (default 1; 0: none)
#   OKL_EXTRA        extra train options for every run (e.g. "-e 1e-8")
#   BENCH_CACHE      cache for the data (default ${TMPDIR:-/tmp}/kmtk-bench)
#   OUT_DIR          if set: exp2.tsv (per lambda) and figure2.svg (bench/okl/okl_figure)
#   BENCH_BIN        directory with train, predict, datasets/gen_okl_signals (default:
#                    the repository)
# Exit status: 0; 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BIN=${BENCH_BIN:-$repo}
M=${OKL_M:-100000}
P=${OKL_RANK:-50}
SEED=${OKL_SEED:-1}
REPEATS=${REPEATS:-3}
PLAIN_REPEATS=${PLAIN_REPEATS:-1}
EXTRA=${OKL_EXTRA:-}
OUT_DIR=${OUT_DIR:-}
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}   # not used: the data are generated
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
TIME=${TIME:-/usr/bin/time}
KOPT="-s okl -t laplacian -g 10"
export OPENBLAS_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

for t in "$BIN/train" "$BIN/predict" "$BIN/datasets/gen_okl_signals"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
[ -x "$TIME" ] || die "$TIME not found (apt-get install time)"
FIG=$repo/bench/okl/okl_figure
[ -n "$OUT_DIR" ] && [ ! -x "$FIG" ] && die "$FIG not found: run make first"
for v in M P SEED REPEATS PLAIN_REPEATS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
[ "$REPEATS" -ge 1 ] || die "REPEATS must be at least 1"
bench_dirs
[ -n "$OUT_DIR" ] && { mkdir -p "$OUT_DIR" || die "cannot create $OUT_DIR"; }
mkdir -p "$work/bin/datasets" &&
    cp "$BIN/train" "$BIN/predict" "$work/bin/" &&
    cp "$BIN/datasets/gen_okl_signals" "$work/bin/datasets/" || die "cannot copy the binaries"
[ -n "$OUT_DIR" ] && { cp "$FIG" "$work/bin/" || die "cannot copy $FIG"; FIG=$work/bin/okl_figure; }
BIN=$work/bin

TR=$CACHE/okl-signals-m$M-s$SEED.train
VA=$CACHE/okl-signals-m$M-s$SEED.valid
if [ ! -s "$TR" ] || [ ! -s "$VA" ]; then
    say "generating the data (m = $M, seed $SEED) into $CACHE"
    "$BIN/datasets/gen_okl_signals" -m "$M" --seed "$SEED" "$TR.tmp.$$" "$VA.tmp.$$" &&
        mv "$TR.tmp.$$" "$TR" && mv "$VA.tmp.$$" "$VA" ||
        { rm -f "$TR.tmp.$$" "$VA.tmp.$$"; die "gen_okl_signals failed"; }
fi
mb() { du -m "$1" | cut -f1; }
: >"$work/notes"
: >"$work/runs"

# one NAME I [train options]: a path under time; appends to runs "name i rc wall_s peak_MB
# iterations path_s setup_s total_s read_s" and keeps the CSV as NAME-I.csv.
one() {
    local name=$1 i=$2 pre=$work/$1-$2
    shift 2
    say "$name run $i: train $KOPT $* (m = $M)"
    time_once "$pre" "$BIN/train" $KOPT "$@" $EXTRA --valid "$VA" -o "$pre.csv" "$TR" "$work/$name.model"
    if [ "$RC" -ne 0 ]; then
        echo "$name run $i: train failed (status $RC): $(tail -n 1 "$pre.err")" >>"$work/notes"
        echo "$name $i $RC $ONE_SEC $ONE_MB - - - - -" >>"$work/runs"
        return
    fi
    # "path: N iterations, X s (setup Y s)" and "time = Z s (read W s, train T s)"
    { grep -h '^path:' "$pre.out" "$pre.err" | head -n 1
      grep -h '^time = ' "$pre.out" "$pre.err" | head -n 1; } | tr -d '(),;' |
        awk -v n="$name" -v i="$i" -v w="$ONE_SEC" -v mem="$ONE_MB" '
            /^path:/ { it = $2; ps = $4; su = $7 } /^time =/ { tot = $3; rd = $6 }
            END { print n, i, 0, w, mem, it, ps, su, tot, rd }' >>"$work/runs"
}

for i in $(seq 1 "$REPEATS"); do one default "$i" --rank "$P"; done
for i in $(seq 1 "$PLAIN_REPEATS"); do one plain "$i" --rank "$P" --plain; done
one identity 1 --identity

# predict on the validation file with the default model (the chosen lambda): the MSE check
pmse=n/a
if [ -s "$work/default.model" ]; then
    say "predict (default model) on the validation file"
    time_once "$work/predict" "$BIN/predict" "$VA" "$work/default.model" "$work/pred.out"
    if [ "$RC" -eq 0 ]; then
        pmse=$(awk '/^Mean squared error/ { print $5 }' "$work/predict.out" "$work/predict.err" | head -n 1)
        psec=$ONE_SEC pmb=$ONE_MB
    else
        echo "predict failed (status $RC): $(tail -n 1 "$work/predict.err")" >>"$work/notes"
    fi
    rm -f "$work/pred.out"
fi

# per lambda: default (MSE, rank, iterations of run 1; seconds: median, min and max over the
# runs), plain (run 1: MSE, iterations; seconds median over runs), identity (MSE)
csv() { [ -s "$work/$1.csv" ] && echo "$work/$1.csv"; }
dcsv=() pcsv=()
for i in $(seq 1 "$REPEATS"); do c=$(csv "default-$i") && dcsv+=("$c"); done
for i in $(seq 1 "$PLAIN_REPEATS"); do c=$(csv "plain-$i") && pcsv+=("$c"); done
icsv=$(csv identity-1)
# stats FILE...: per row, "median min max" of the seconds column over the files
stats() {
    [ $# -eq 0 ] && return
    awk -F, 'FNR > 1 { v[FNR, ++n[FNR]] = $5; rows = FNR > rows ? FNR : rows }
        END { for (r = 2; r <= rows; r++) { k = n[r]
                for (a = 1; a <= k; a++) s[a] = v[r, a]
                for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++) if (s[b] < s[a]) { t = s[a]; s[a] = s[b]; s[b] = t }
                med = k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2
                printf "%.6g %.6g %.6g\n", med, s[1], s[k] } }' "$@"
}
# piece N FILE AWK: the awk program's output on FILE, or N rows of "-" placeholders
piece() {
    local n=$1 f=$2 prog=$3 k=$4
    if [ -n "$f" ] && [ -s "$f" ]; then awk -F, "$prog" "$f"
    else for _ in $(seq 1 "$n"); do printf -- '- %.0s' $(seq 1 "$k"); echo; done; fi
}
: >"$work/table"
if [ ${#dcsv[@]} -gt 0 ]; then
    nrow=$(($(wc -l <"${dcsv[0]}") - 1))
    stats "${dcsv[@]}" >"$work/dsec"
    if [ ${#pcsv[@]} -gt 0 ]; then stats "${pcsv[@]}" | awk '{ print $1 }' >"$work/psec"
    else piece "$nrow" "" "" 1 >"$work/psec"; fi
    paste -d' ' <(piece "$nrow" "${dcsv[0]}" 'NR > 1 { print $1, $3, $4, $7, $8 }' 5) "$work/dsec" \
        <(piece "$nrow" "${pcsv[0]:-}" 'NR > 1 { print $7, $4, $3, $1 }' 4) "$work/psec" \
        <(piece "$nrow" "$icsv" 'NR > 1 { print $7, $1, ($8 == 1) }' 3) >"$work/table"
fi
# table: lambda rank iter mse chosen | sec_med sec_min sec_max | p_mse p_iter p_rank p_lambda | p_sec | i_mse i_lambda i_chosen

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- train.c predict.c common 2>/dev/null | head -c1)
echo "Experiment 2 (seed 001, section 6.2, Figure 2): gen_okl_signals -m $M --seed $SEED (100 train /"
echo "100 validation points; $(mb "$TR") MB + $(mb "$VA") MB of text); train $KOPT --rank $P${EXTRA:+ $EXTRA}, 25 lambdas in"
echo "[1e-5 alpha, alpha]; kmtk $commit${dirty:+ (train.c/predict.c/common modified)}, $(date -u +%Y-%m-%d),"
echo "$(getconf _NPROCESSORS_ONLN) cores (shared), OPENBLAS_NUM_THREADS=1."
echo
if [ -s "$work/table" ]; then
    echo "Per lambda (large to small, warm-started): validation MSE of OKL (p = $P), of --plain, and"
    echo "of L = I at the same lambda; rank of L and iterations (first run); seconds of the solve:"
    echo "median over the $REPEATS default run(s) [min-max], --plain: median over $PLAIN_REPEATS. <- lambda*."
    echo
    echo "| # | lambda | MSE OKL | MSE --plain | MSE L = I | rank | iterations | iterations --plain | seconds | seconds --plain |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -v nr="$REPEATS" '{ n++
        same = ($15 == "-" || ($15 - $1) * ($15 - $1) <= 1e-18 * $1 * $1) ? "" : " (lambda differs!)"
        printf "| %d | %.5g%s%s | %.4f | %s | %s%s | %s | %s | %s | %.4f%s | %s |\n", n, $1,
            $5 == 1 ? " <-" : "", same, $4, $9 == "-" ? "-" : sprintf("%.4f", $9),
            $14 == "-" ? "-" : sprintf("%.4f", $14), $16 == 1 ? " <-" : "", $2, $3, $10 == "-" ? "-" : $10,
            $6, (nr > 1 ? sprintf(" [%.4f-%.4f]", $7, $8) : ""), $13 == "-" ? "-" : sprintf("%.4f", $13) }' "$work/table"
    echo
fi
echo "Runs (wall: the whole process under $TIME; peak: maximum resident set size):"
echo
echo "| run | path (s) | setup (s) | read (s) | total (s) | wall (s) | peak RSS (MB) | iterations |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
awk '{ printf "| %s %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $7, $8, $10, $9, $4, $5, $6 }' "$work/runs"
[ "$pmse" != n/a ] && { echo "| predict (validation file) | | | | | ${psec} | ${pmb} | |"; }
echo
# summaries
awk -v paper=45 '
    $3 == 0 && $7 != "-" { k = $1; n[k]++; x = $7 + $8
        if (!(k in lo) || x < lo[k]) lo[k] = x; if (!(k in hi) || x > hi[k]) hi[k] = x
        if (!(k in mlo) || $5 < mlo[k]) mlo[k] = $5; if (!(k in mhi) || $5 > mhi[k]) mhi[k] = $5 }
    END { for (k in n) { printf "%s: path + setup %.2f-%.2f s over %d run(s)", k, lo[k], hi[k], n[k]
            if (k != "identity") printf " (paper: ~%d s for the path, %.0f-%.0fx)", paper, paper / hi[k], paper / lo[k]
            printf "; peak RSS %s-%s MB.\n", mlo[k], mhi[k] } }' "$work/runs" | sort
if [ -s "$work/table" ]; then
    awk -v pm="$pmse" '{ n++; if ($5 == 1) { c = n; cm = $4; cl = $1 }
            if ($14 != "-" && (im == "" || $14 < im)) { im = $14; il = $15 }
            if ($9 != "-" && (qm == "" || $9 < qm)) { qm = $9 }
            s += $6; if ($6 > ms) { ms = $6; mi = n; ml = $1 } ; sec[n] = $6 }
        END {
            printf "Best validation MSE: OKL %.4f at lambda #%d = %.5g", cm, c, cl
            if (im != "") printf "; L = I %.4f at lambda %.5g (OKL %.2f%% lower)", im, il, 100 * (1 - cm / im)
            if (qm != "") printf "; --plain %.4f", qm
            printf ".\n"
            if (pm != "n/a") printf "predict on the validation file with the model of lambda*: Mean squared error = %s.\n", pm
            w = 0; for (i = c - 2; i <= c + 2; i++) if (i >= 1 && i <= n) w += sec[i]
            printf "Time per lambda (medians): the largest at lambda #%d = %.5g (%.3f s, %.0f%% of the %.3f s of the path); the five lambdas around lambda* (#%d-#%d) take %.0f%%.\n",
                mi, ml, ms, 100 * ms / s, s, (c - 2 < 1 ? 1 : c - 2), (c + 2 > n ? n : c + 2), 100 * w / s }' "$work/table"
fi
if [ -s "$work/notes" ]; then
    echo
    echo "Notes:"
    sed 's/^/- /' "$work/notes"
fi

if [ -n "$OUT_DIR" ] && [ -s "$work/table" ]; then
    {
        printf 'lambda\tokl_mse\tplain_mse\tidentity_mse\trank\titerations\tplain_iterations\tseconds\tseconds_lo\tseconds_hi\tplain_seconds\n'
        # a lambda solved without iterations (lambda >= alpha: L = 0 by Lemma 8) takes
        # microseconds: its time is left out ("-"), not drawn decades below the others
        awk -v OFS='\t' '{ z = $3 == 0; pz = $10 == 0
            print $1, $4, $9 == "-" ? "-" : $9, $14 == "-" ? "-" : $14, $2, $3,
            $10 == "-" ? "-" : $10, z ? "-" : $6, z ? "-" : $7, z ? "-" : $8,
            ($13 == "-" || pz) ? "-" : $13 }' "$work/table"
    } >"$OUT_DIR/exp2.tsv"
    cp "$work/runs" "$OUT_DIR/exp2-runs.txt"
    mark=()
    lstar=$(awk '$5 == 1 { print $1 }' "$work/table")
    [ -n "$lstar" ] && mark=(--mark "$lstar" --mark-label "$(awk -v l="$lstar" 'BEGIN {
        printf "lambda* = %.4g (least validation MSE)", l }')")
    band=seconds
    [ "$REPEATS" -gt 1 ] && band=seconds/seconds_lo/seconds_hi
    # the styles of figure 1: OKL blue solid dots, L = I orange dotted, --plain green dashed
    # open triangles (drawn last: where it equals the default, the dots show inside)
    okl="{color=1 solid circle}" ident="{color=2 dotted nomarker}" plain="{color=3 dashed triangle open}"
    # notes: how close --plain is to the default (the curves overlap), the paths' totals
    mn=$(awk -F'\t' 'NR > 1 && $3 != "-" { n++; d = $3 - $2; d = d < 0 ? -d : d
            if (d <= 0.01) near++; if (d > md) { md = d; ml = $1 } }
        END { if (n) printf "--plain lies on the default curve (|difference| <= 0.01 at %d of %d lambdas; the largest, %.3g, at lambda = %.4g): its open triangles ring the default dots.", near, n, md, ml }' "$OUT_DIR/exp2.tsv")
    tn=$(awk -F'\t' 'NR > 1 { d += $8; if ($11 != "-") { p += $11; np++ }; if ($6 == 0) z = z (z ? ", " : "") sprintf("%.4g", $1) }
        END { printf "The 25 solves: %.2f s in all", d; if (np) printf " (--plain %.2f s)", p
              printf "; the paper: about 45 s."
              if (z) printf " Not drawn: lambda = %s (L = 0 without iterations, microseconds).", z }' "$OUT_DIR/exp2.tsv")
    "$FIG" --log-x "${mark[@]}" --xlabel "lambda (log scale)" \
        --title "Experiment 2: m = $M, p = $P, 100 training points (kmtk $commit${dirty:+, modified})" \
        -P "Validation MSE per lambda;validation MSE;lin;okl_mse=OKL (default)$okl,identity_mse=L = I (baseline)$ident,plain_mse=OKL --plain$plain;$mn" \
        -P "Time per lambda (warm start), median over $REPEATS run(s), band min-max;seconds (log scale);log;$band=OKL (default)$okl,plain_seconds=OKL --plain$plain;$tn" \
        "$OUT_DIR/exp2.tsv" "$OUT_DIR/figure2.svg" && say "wrote $OUT_DIR/figure2.svg" ||
        say "okl_figure failed: no figure"
fi
exit 0
