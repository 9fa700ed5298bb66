#!/usr/bin/env bash
# bench/okl/experiment1.sh - "Learning low-rank output kernels" (Dinuzzo and Fukumizu, seed
# 001), section 6.1, Experiment 1 (Figure 1): validation MSE and training time of low-rank
# output kernel learning (train -s okl) against the rank p, with the baseline L = I
# (train -s okl --identity) as a horizontal line, and Algorithm 1 as printed (--plain) at a
# few p to show what the acceleration and the saddle escape change. A benchmark, not a
# test: it never fails on a number. See doc/okl.md.
#
# Data: datasets/gen_okl_signals -m M --seed S (200 grid points of [-1, 1], m mixtures of
# 50 Gaussian-process realisations, noise at SNR 1:1; a random 100 train, the other 100
# validation). For every p: the 25-lambda path in [1e-5 alpha, alpha] (warm starts) with
# the Laplacian kernel exp(-10 |x - x'|) (-t laplacian -g 10), --valid on the other 100
# points; the MSE of p is the least validation MSE over the path (the paper's "tuning
# lambda"), the time the path's ("path: ... X s (setup Y s)": X + Y, eigendecomposition
# and all 25 solves; reading the file is not included). The baseline: the same grid with
# --identity, best validation MSE. With several seeds: means over seeds, times as
# min-max.
#
# Usage: bench/okl/experiment1.sh > exp1.md     (after make)
#   The default thins p to 27 values (1-100 and 200) and runs 3 seeds: about 2 minutes
#   on 2 shared cores. OKL_RANKS=all (p = 1..200, the paper's protocol): a path costs ~3-4 s
#   at p >= 100 (a rank above l = 100 works as l), so count ~10 minutes per seed.
# Environment (all optional):
#   OKL_RANKS        ranks p (default "1-10 12 14 16 18 20 22 25 30 35 40 50 60 70 80 90
#                    100 200"; "all" = 1..M; ranges a-b allowed)
#   OKL_PLAIN_RANKS  ranks also run with --plain (default "5 20 50 100"; "" = none)
#   OKL_SEEDS        gen_okl_signals seeds (default "1 2 3")
#   OKL_M            outputs m (default 200, the paper's)
#   OKL_EXTRA        extra train options for every run (e.g. "-e 1e-8")
#   OUT_DIR          if set: exp1.tsv (per p: means over seeds), exp1-raw.tsv (per seed
#                    and run) and figure1.svg (drawn by bench/okl/okl_figure) go there
#   BENCH_BIN        directory with train and datasets/gen_okl_signals (default: the
#                    repository); bench/okl/okl_figure is taken from the repository
# Exit status: 0; 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BIN=${BENCH_BIN:-$repo}
M=${OKL_M:-200}
RANKS=${OKL_RANKS:-1-10 12 14 16 18 20 22 25 30 35 40 50 60 70 80 90 100 200}
PLAIN=${OKL_PLAIN_RANKS-5 20 50 100}
SEEDS=${OKL_SEEDS:-1 2 3}
EXTRA=${OKL_EXTRA:-}
OUT_DIR=${OUT_DIR:-}
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}   # not used: the data are generated
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
KOPT="-s okl -t laplacian -g 10"
export OPENBLAS_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

for t in "$BIN/train" "$BIN/datasets/gen_okl_signals"; do
    [ -x "$t" ] || die "$t not found: run make first (or set BENCH_BIN)"
done
FIG=$repo/bench/okl/okl_figure
[ -n "$OUT_DIR" ] && [ ! -x "$FIG" ] && die "$FIG not found: run make first"
# expands "1-3 5" into "1 2 3 5"; "all" into 1..M
expand() {
    local a out=
    [ "$1" = all ] && { seq 1 "$M" | tr '\n' ' '; return; }
    for a in $1; do
        case $a in
        *-*) out="$out $(seq "${a%-*}" "${a#*-}" | tr '\n' ' ')" ;;
        *) out="$out $a" ;;
        esac
    done
    echo $out
}
RANKS=$(expand "$RANKS")
PLAIN=$(expand "$PLAIN")
for p in $RANKS $PLAIN; do
    [[ $p =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] || die "bad rank '$p'"
done
bench_dirs
[ -n "$OUT_DIR" ] && { mkdir -p "$OUT_DIR" || die "cannot create $OUT_DIR"; }
# a snapshot of the binaries: a rebuild during the run does not change them
mkdir -p "$work/bin/datasets" &&
    cp "$BIN/train" "$work/bin/" &&
    cp "$BIN/datasets/gen_okl_signals" "$work/bin/datasets/" || die "cannot copy the binaries"
[ -n "$OUT_DIR" ] && { cp "$FIG" "$work/bin/" || die "cannot copy $FIG"; FIG=$work/bin/okl_figure; }
BIN=$work/bin

# run SEED P METHOD [train options]: one path; appends "seed p method mse lambda rank iters
# seconds" to raw (mse n/a when train fails; the failure goes to the notes).
run() {
    local s=$1 p=$2 meth=$3 log=$work/run.log
    shift 3
    if "$BIN/train" $KOPT "$@" $EXTRA --valid "$work/va$s" -o "$work/path.csv" \
            "$work/tr$s" "$work/run.model" >"$log" 2>&1; then
        awk -F, -v s="$s" -v p="$p" -v m="$meth" -v path="$(grep '^path:' "$log")" '
            NR > 1 && $8 == 1 { mse = $7; lam = $1; rk = $3 }
            NR > 1 { it += $4 }
            END { n = split(path, w, " "); sec = "n/a"
                  for (i = 1; i <= n; i++) {
                      if (w[i] == "s" && w[i + 1] == "(setup") { x = w[i - 1] }
                      if (w[i] == "(setup") { y = w[i + 1]; sec = sprintf("%.4f", x + y) } }
                  printf "%s\t%s\t%s\t%.8g\t%.6g\t%s\t%d\t%s\n", s, p, m, mse, lam, rk, it, sec }' \
            "$work/path.csv" >>"$work/raw"
    else
        printf '%s\t%s\t%s\tn/a\tn/a\tn/a\tn/a\tn/a\n' "$s" "$p" "$meth" >>"$work/raw"
        echo "seed $s, p = $p, $meth: train failed: $(tail -n 1 "$log")" >>"$work/notes"
    fi
}

: >"$work/raw"
: >"$work/notes"
t_start=$EPOCHREALTIME
for s in $SEEDS; do
    say "seed $s: generating m = $M"
    "$BIN/datasets/gen_okl_signals" -m "$M" --seed "$s" "$work/tr$s" "$work/va$s" ||
        die "gen_okl_signals failed"
    say "seed $s: L = I"
    run "$s" "$M" identity --identity
    for p in $RANKS; do
        say "seed $s: p = $p"
        run "$s" "$p" okl --rank "$p"
    done
    for p in $PLAIN; do
        case " $RANKS " in
        *" $p "*) ;;
        *) say "seed $s: p = $p"; run "$s" "$p" okl --rank "$p" ;;
        esac
        say "seed $s: p = $p --plain"
        run "$s" "$p" plain --rank "$p" --plain
    done
done
secs=$(awk -v a="${t_start/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.0f", b - a }')
nseeds=$(echo $SEEDS | wc -w)

# per (method, p): mean MSE, its min and max over seeds, mean time, min and max time,
# mean iterations, lambda* and rank of seed-1st (the first seed)
awk -F'\t' '$3 == "identity" && $4 != "n/a" { id[$1] = $4 }
    $4 != "n/a" { k = $3 SUBSEP $2; n[k]++; s[k] += $4; it[k] += $7
        if ($1 in id) { nr[k]++; r[k] += $4 / id[$1]; if ($4 < id[$1]) below[k]++ }
        if (!(k in lo) || $4 < lo[k]) lo[k] = $4; if (!(k in hi) || $4 > hi[k]) hi[k] = $4
        t[k] += $8; if (!(k in tl) || $8 < tl[k]) tl[k] = $8; if (!(k in th) || $8 > th[k]) th[k] = $8
        if (!(k in lam)) { lam[k] = $5; rk[k] = $6 } }
    END { for (k in n) { split(k, a, SUBSEP)
            printf "%s\t%s\t%.6f\t%.6f\t%.6f\t%.4f\t%.4f\t%.4f\t%.0f\t%s\t%s\t%d\t%s\t%d\n", a[1], a[2],
                s[k] / n[k], lo[k], hi[k], t[k] / n[k], tl[k], th[k], it[k] / n[k], lam[k], rk[k], n[k],
                nr[k] ? sprintf("%.4f", r[k] / nr[k]) : "n/a", below[k] } }' \
    <(awk -F'\t' '$3 == "identity"' "$work/raw"; awk -F'\t' '$3 != "identity"' "$work/raw") | sort -t$'\t' -k1,1 -k2,2n >"$work/agg"
# agg: method p mse mse_lo mse_hi sec sec_lo sec_hi iters lambda* rank nseeds ratio below
# (ratio: mean over seeds of MSE / the same seed's L = I MSE; below: seeds where MSE < it)
get() { awk -F'\t' -v m="$1" -v p="$2" -v c="$3" '$1 == m && $2 == p { print $c }' "$work/agg"; }
IDM=$(awk -F'\t' '$1 == "identity" { print $3 }' "$work/agg")
IDM=${IDM:-n/a}
best=$(awk -F'\t' '$1 == "okl" && (b == "" || $3 < b) { b = $3; p = $2 } END { print p }' "$work/agg")

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- train.c common 2>/dev/null | head -c1)
echo "Experiment 1 (seed 001, section 6.1, Figure 1): gen_okl_signals -m $M, seeds $SEEDS"
echo "(100 train / 100 validation points); train $KOPT${EXTRA:+ $EXTRA}, 25 lambdas in"
echo "[1e-5 alpha, alpha]; kmtk $commit${dirty:+ (train.c/common modified)}, $(date -u +%Y-%m-%d),"
echo "$(getconf _NPROCESSORS_ONLN) cores (shared), OPENBLAS_NUM_THREADS=1; the run took ${secs} s."
echo
echo "MSE: least validation MSE over the 25 lambdas, mean over $nseeds seed(s) (min-max over"
echo "seeds in brackets when more than one: mostly the seeds' different noise levels); vs L = I:"
echo "MSE over the same seed's L = I MSE, mean over seeds; below: seeds where OKL beats L = I."
echo "Time: eigendecomposition + the 25 warm-started solves of one path (train's"
echo "\"path: X s (setup Y s)\", X + Y), mean over seeds [min-max]. lambda* and rank of L at"
echo "lambda*: the first seed's. Iterations: the whole path, mean over seeds."
echo
echo "| p | MSE | vs L = I | below | lambda* | rank of L | iterations | time (s) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -F'\t' -v id="$IDM" -v ns="$nseeds" -v best="$best" '
    function rng(a, b, f) { return ns > 1 ? sprintf(" [" f "-" f "]", a, b) : "" }
    $1 == "okl" || $1 == "identity" {
        printf "| %s%s | %.4f%s | %s | %s | %.4g | %s | %s | %.3f%s |\n",
            $1 == "identity" ? "L = I" : $2, ($2 == best && $1 == "okl") ? " (best)" : "",
            $3, rng($4, $5, "%.4f"), $13, $1 == "identity" ? "-" : $14 "/" ns, $10, $11, $9, $6,
            rng($7, $8, "%.3f") }' \
    <(awk -F'\t' '$1 == "okl"' "$work/agg"; awk -F'\t' '$1 == "identity"' "$work/agg")
echo
if [ -n "$PLAIN" ]; then
    echo "Algorithm 1 as printed (--plain: no Anderson acceleration, no saddle escape) against"
    echo "the default at the same p (same seeds; MSE difference plain - default; the time ratio"
    echo "of the means):"
    echo
    echo "| p | MSE plain | MSE default | difference | iterations plain | iterations default | time plain (s) | time default (s) | plain / default |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for p in $PLAIN; do
        pm=$(get plain "$p" 3) dm=$(get okl "$p" 3)
        pi=$(get plain "$p" 9) di=$(get okl "$p" 9)
        pt=$(get plain "$p" 6) dt=$(get okl "$p" 6)
        ptr="$(get plain "$p" 7)-$(get plain "$p" 8)" dtr="$(get okl "$p" 7)-$(get okl "$p" 8)"
        awk -v p="$p" -v pm="${pm:-n/a}" -v dm="${dm:-n/a}" -v pi="${pi:-n/a}" -v di="${di:-n/a}" \
            -v pt="${pt:-n/a}" -v dt="${dt:-n/a}" -v ptr="$ptr" -v dtr="$dtr" -v ns="$nseeds" 'BEGIN {
            d = (pm == "n/a" || dm == "n/a") ? "n/a" : sprintf("%+.2g", pm - dm)
            q = (pt == "n/a" || dt == "n/a" || dt == 0) ? "n/a" : sprintf("%.1f", pt / dt)
            f = "%.4f"; g = "%.3f"
            split(ptr, a, "-"); split(dtr, b, "-")
            printf "| %s | %s | %s | %s | %s | %s | %s%s | %s%s | %s |\n", p,
                pm == "n/a" ? pm : sprintf(f, pm), dm == "n/a" ? dm : sprintf(f, dm), d, pi, di,
                pt == "n/a" ? pt : sprintf(g, pt), (ns > 1 && pt != "n/a" ? sprintf(" [" g "-" g "]", a[1], a[2]) : ""),
                dt == "n/a" ? dt : sprintf(g, dt), (ns > 1 && dt != "n/a" ? sprintf(" [" g "-" g "]", b[1], b[2]) : ""), q }'
    done
    echo
fi
# the summary lines of the paper's claims
awk -F'\t' -v id="$IDM" -v best="$best" -v M="$M" -v ns="$nseeds" '
    $1 == "okl" { n++; p[n] = $2; m[n] = $3; t[n] = $6; r[n] = $13; all[n] = ($14 == ns)
                  if ($2 == best) { bm = $3; bt = $6; br = $13 }
                  if ($2 == M) full = $6 }
    # runs of consecutive ranks (in the list run) where cond[i] holds
    function runs(cond,   i, seg, start, last) {
        seg = ""; start = ""
        for (i = 1; i <= n + 1; i++) {
            if (i <= n && cond[i]) { if (start == "") start = p[i]; last = p[i] }
            else if (start != "") { seg = seg (seg == "" ? "" : ", ") (start == last ? start : start "-" last); start = "" } }
        return seg == "" ? "none" : seg }
    END {
        if (!n) { print "No OKL run succeeded."; exit }
        printf "Best p (least mean MSE): %s (mean MSE %.4f", best, bm
        if (id != "n/a") printf "; L = I %.4f; MSE / L = I MSE %s", id, br
        printf ").\n"
        for (i = 1; i <= n; i++) if (m[i] <= bm * 1.001) { printf "Smallest p within 0.1%% of the best mean MSE: %s (%.4f, path %.3f s).\n", p[i], m[i], t[i]; break }
        for (i = 1; i <= n; i++) if (m[i] <= bm * 1.01) { printf "Smallest p within 1%% of the best mean MSE: %s (%.4f, path %.3f s).\n", p[i], m[i], t[i]; break }
        if (id != "n/a") {
            k = 0; for (i = 1; i <= n; i++) { c1[i] = (r[i] != "n/a" && r[i] < 1); k += c1[i] }
            printf "Ranks where OKL beats L = I on average (MSE / L = I MSE < 1): %d of the %d run (p = %s).\n", k, n, runs(c1)
            k = 0; for (i = 1; i <= n; i++) { c2[i] = all[i]; k += c2[i] }
            printf "Ranks where OKL beats L = I for every seed: %d of the %d run (p = %s).\n", k, n, runs(c2) }
        if (full != "" && bt > 0) printf "Time at full rank p = %s over the time at the best p: %.1fx (%.3f s / %.3f s).\n", M, full / bt, full, bt }' "$work/agg"
if [ -s "$work/notes" ]; then
    echo
    echo "Notes:"
    sed 's/^/- /' "$work/notes"
fi

if [ -n "$OUT_DIR" ]; then
    { printf 'seed\tp\tmethod\tmse\tlambda\trank\titerations\tseconds\n'; cat "$work/raw"; } >"$OUT_DIR/exp1-raw.tsv"
    # one row per p: OKL, the baseline (constant), plain where run
    {
        printf 'p\tokl_mse\tokl_mse_lo\tokl_mse_hi\tidentity_mse\tplain_mse\tokl_seconds\tokl_seconds_lo\tokl_seconds_hi\tplain_seconds\tidentity_seconds\n'
        awk -F'\t' -v id="$IDM" -v idt="$(awk -F'\t' '$1 == "identity" { print $6 }' "$work/agg")" '
            $1 == "okl" { ps[$2] = 1; om[$2] = $3; ol[$2] = $4; oh[$2] = $5; ot[$2] = $6; tl[$2] = $7; th[$2] = $8 }
            $1 == "plain" { ps[$2] = 1; pm[$2] = $3; pt[$2] = $6 }
            END { for (p in ps) printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p,
                    p in om ? om[p] : "-", p in ol ? ol[p] : "-", p in oh ? oh[p] : "-", id,
                    p in pm ? pm[p] : "-", p in ot ? ot[p] : "-", p in tl ? tl[p] : "-",
                    p in th ? th[p] : "-", p in pt ? pt[p] : "-", idt == "" ? "-" : idt }' "$work/agg" | sort -n
    } >"$OUT_DIR/exp1.tsv"
    tband=okl_seconds
    [ "$nseeds" -gt 1 ] && tband=okl_seconds/okl_seconds_lo/okl_seconds_hi
    mark=()
    [ -n "$best" ] && mark=(--mark "$best" --mark-label "best p = $best (least mean MSE)")
    # one style per meaning in both panels (and in figure 2): OKL blue, solid, dots; L = I
    # orange, dotted, no markers (a constant); --plain green, dashed, open triangles joined
    # across the ranks it was not run at, drawn last so that it stays visible on the default
    okl="{color=1 solid circle}" ident="{color=2 dotted nomarker}" plain="{color=3 dashed triangle open join}"
    # notes: what the legend cannot say (where --plain was run, how far from the default)
    pn=$(awk -F'\t' '$1 == "plain" { pm[$2] = $3 } $1 == "okl" { om[$2] = $3 }
        END { n = 0; d = 0; for (p in pm) { ps[++n] = p + 0; if (p in om) { x = pm[p] - om[p]; x = x < 0 ? -x : x; d = x > d ? x : d } }
              if (!n) exit
              for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ps[j] < ps[i]) { t = ps[i]; ps[i] = ps[j]; ps[j] = t }
              s = ps[1]; for (i = 2; i <= n; i++) s = s ", " ps[i]
              printf "--plain run at p = %s only (joined by the dashed line); its MSE is within %.2g of the default there, so the open triangles ring the dots.", s, d }' "$work/agg")
    tn="L = I: one path of independent RLS (no rank). Above p = l = 100 a rank works as l."
    "$FIG" "${mark[@]}" --title "Experiment 1: m = $M, 100 training points, seeds $SEEDS (kmtk $commit${dirty:+, modified})" \
        --xlabel "rank p of the output kernel L" \
        -P "Validation MSE (best of 25 lambdas), mean over seeds;validation MSE;lin;okl_mse=OKL (default)$okl,identity_mse=L = I (baseline)$ident,plain_mse=OKL --plain$plain;$pn" \
        -P "Training time of the 25-lambda path (band: min-max over seeds);seconds (log scale);log;$tband=OKL (default)$okl,identity_seconds=L = I (baseline)$ident,plain_seconds=OKL --plain$plain;$tn" \
        "$OUT_DIR/exp1.tsv" "$OUT_DIR/figure1.svg" && say "wrote $OUT_DIR/figure1.svg" ||
        say "okl_figure failed: no figure"
fi
exit 0
