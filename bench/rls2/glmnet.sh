#!/usr/bin/env bash
# bench/rls2/glmnet.sh - the linear RLS2 path (rls2-path --kernels linear) against R's glmnet lasso
# path on the same 144 x 16,063 Gaussian regression design, the same number of lambdas (30).
# The target of the issue: RLS2 faster than glmnet (about 0.05 s of compute for 30 lambdas).
# A benchmark, not a test: a slow ratio is never a failure.
#
# Data: bench/rls2/gen_gauss.py (x_ij ~ N(0,1), y = X beta + N(0,1), beta with 10 non-zeros
# of size 1-2; deterministic for a seed), made once into the cache; both tools read the same
# svmlight file. Outside the timed regions: reading the file, building glmnet's matrix and
# rls2-path's basis kernels.
#
# Timed (CPU against CPU, wall against wall; medians):
#   rls2-path  --kernels linear -S trace --task reg -L RLS2_LAMBDAS --no-dof -q -o path.csv: compute
#              CPU = user + system of the whole process (bench/runstat) minus that of the same
#              process on the first lambda alone (run right after it: reading and set-up
#              cancel) plus that lambda's own seconds; compute wall = the sum of the "seconds"
#              column (the solver at each lambda; for --kernels linear the solver of (4.9),
#              common/rls2lin.h, which rls2-path picks for rank-one kernels instead of
#              Algorithm 3). Medians over RLS2_REPEAT pairs; also the whole process (wall and
#              CPU), which adds reading the 33 MB file and the kernel set-up. --no-dof skips
#              the degrees of freedom (an l^3 inverse per lambda, not part of the path).
#   glmnet     system.time() around glmnet(x, y, nlambda = 30) (bench/rls2/glmnet.R): with
#              its defaults (it may stop before 30 lambdas when the deviance explained
#              passes 0.999) and forced to compute all 30 (glmnet.control(fdev = 0,
#              devmax = 1)). Medians (and minima) of GLMNET_REPEAT calls, user+system and
#              elapsed.
# The ratios divide CPU by CPU and wall by wall, so a loaded machine does not tilt them.
# The lambda scales differ (RLS2's (4.9) penalizes the squared, scaled l1 norm): RLS2_LAMBDAS
# is chosen so that the RLS2 path covers the same models as glmnet's, from one variable to a
# deviance explained of about 0.9996 (glmnet's last forced lambda); the table prints both
# ends for each tool.
#
# Usage: bench/rls2/glmnet.sh > glmnet.md      (after make; a few minutes on 2 cores)
# Environment (all optional):
#   RLS2_LAMBDAS    rls2-path -L (default 1e-3:5:30)
#   GLMNET_NL       lambdas for both (default 30; also sets the N of RLS2_LAMBDAS' default)
#   GLMNET_REPEAT   glmnet calls, the median counts (default 5)
#   RLS2_REPEAT     rls2-path pairs (whole path, first lambda), the median counts (default 5)
#   GAUSS_OPTS      gen_gauss.py options (default: none: 144 x 16063, 10 non-zeros, seed 1)
#   GLMNET_TIMEOUT  seconds before an rls2-path run is stopped (default 3600; 0: none)
#   GLMNET_INSTALL  1 (default): install r-cran-glmnet with apt-get when it is missing and
#                   this runs as root; 0: never (then the glmnet rows are skipped)
#   BENCH_BIN, BENCH_CACHE, BENCH_AVX2  as for bench/liblinear.sh
# Exit status: 0; 1 when a tool failed; 2 when something needed is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BIN=${BENCH_BIN:-$repo}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}   # not used: the data are generated
NL=${GLMNET_NL:-30}
RLS2_LAMBDAS=${RLS2_LAMBDAS:-1e-3:5:$NL}
GREPEAT=${GLMNET_REPEAT:-5}
RREPEAT=${RLS2_REPEAT:-5}
read -r -a GAUSS_OPTS <<<"${GAUSS_OPTS:-}"
TIMEOUT=${GLMNET_TIMEOUT:-3600}
INSTALL=${GLMNET_INSTALL:-1}
# one thread everywhere: glmnet is single-threaded, and so is rls2-path's -n 1 (its BLAS
# calls included)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

[ -x "$BIN/rls2-path" ] || die "$BIN/rls2-path not found: run make first (or set BENCH_BIN)"
mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
avx2_setup
RUNSTAT=$BIN/bench/runstat
[ -x "$RUNSTAT" ] || die "$RUNSTAT not found: run make first (or set BENCH_BIN)"
command -v python3 >/dev/null || die "python3 not found"
have_glmnet() {
    command -v Rscript >/dev/null && Rscript -e 'suppressMessages(library(glmnet))' >/dev/null 2>&1
}
if ! have_glmnet; then
    if [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing r-cran-glmnet (apt-get; GLMNET_INSTALL=0 to skip)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends r-cran-glmnet \
            >&2 || say "apt-get install r-cran-glmnet failed"
    fi
    have_glmnet || say "R glmnet not available (apt-get install r-cran-glmnet as root): RLS2 only"
fi
bench_dirs
mkdir -p "$work/bin" && cp "$BIN/rls2-path" "$BIN/bench/runstat" "$work/bin/" || die "cannot copy rls2-path"
RUNSTAT=$work/bin/runstat
BIN=$work/bin

key=$({ printf '%s|' "${GAUSS_OPTS[@]}"; cat "$here/gen_gauss.py"; } | md5sum | cut -c1-10)
data=$CACHE/gauss-$key.svm
if [ ! -s "$data" ]; then
    say "generating $data"
    python3 "$here/gen_gauss.py" "${GAUSS_OPTS[@]}" "$data.tmp.$$" 2>"$work/gen.err" &&
        mv "$data.tmp.$$" "$data" || die "gen_gauss.py failed: $(cat "$work/gen.err")"
fi
read -r rows cols < <(awk '{ n++; if (NF - 1 > c) c = NF - 1 } END { print n, c }' "$data")
var0=$(awk '{ s += $1; q += $1 * $1; n++ } END { m = s / n; printf "%.10g", q / n - m * m }' "$data")
status=0

# The RLS2 path's CPU time: rls2-path reports wall seconds per lambda only, so each run of the
# whole path is paired with a run of the same process on its first (largest) lambda alone; the
# difference of their CPU times (user + system, bench/runstat) is the CPU of lambdas 2..N with
# reading and set-up cancelled, and the first lambda's own seconds (tiny: one variable) are
# added back. Medians over RLS2_REPEAT pairs.
lmax=$(awk -F: -v l="$RLS2_LAMBDAS" 'BEGIN { split(l, a, ":"); print a[2] }')
say "rls2-path --kernels linear -L $RLS2_LAMBDAS, paired with -L $lmax:$lmax:1 ($RREPEAT pair(s))"
rpath=() rcpu=() rwall=() rpcpu=() rmb=()
prun=
for r in $(seq 1 "$RREPEAT"); do
    tm=()
    [ "$TIMEOUT" != 0 ] && tm=(timeout "$TIMEOUT")
    run_once "$work/rls2" "${tm[@]}" "$BIN/rls2-path" -q --kernels linear \
        -S trace --task reg -L "$RLS2_LAMBDAS" --no-dof -n 1 -o "$work/r$r.csv" "$data" "$work/r.model"
    rc=$RC full_cpu=$ONE_CPU full_wall=$ONE_SEC full_mb=$ONE_MB
    if [ "$rc" = 0 ]; then
        run_once "$work/rls2b" "${tm[@]}" "$BIN/rls2-path" -q --kernels linear \
            -S trace --task reg -L "$lmax:$lmax:1" --no-dof -n 1 -o "$work/b$r.csv" "$data" "$work/b.model"
        rc=$RC base_cpu=$ONE_CPU
    fi
    if [ "$rc" != 0 ]; then
        [ "$rc" = 124 ] && say "rls2-path stopped after $TIMEOUT s" ||
            say "rls2-path failed ($rc): $(tail -n 1 "$work/rls2.err" "$work/rls2b.err" 2>/dev/null)"
        status=1
        break
    fi
    path=$(awk -F, 'NR > 1 { s += $5 } END { printf "%.4f", s }' "$work/r$r.csv")
    first=$(awk -F, 'NR == 2 { printf "%.4f", $5 }' "$work/b$r.csv")
    rpath+=("$path") rcpu+=("$full_cpu") rwall+=("$full_wall") rmb+=("$full_mb")
    rpcpu+=("$(awk -v f="$full_cpu" -v b="$base_cpu" -v s="$first" 'BEGIN { printf "%.4f", f - b + s }')")
    prun=$r
done
best=
if [ -n "$prun" ]; then
    read -r path_med path_lo path_hi <<<"$(med_min_max "${rpath[@]}")"
    read -r pcpu_med pcpu_lo pcpu_hi <<<"$(med_min_max "${rpcpu[@]}")"
    read -r pw _ <<<"$(med_min_max "${rwall[@]}")"
    read -r pc _ <<<"$(med_min_max "${rcpu[@]}")"
    read -r pm _ <<<"$(med_min_max "${rmb[@]}")"
    best=1
fi

declare -A G
for force in 0 1; do
    have_glmnet || break
    say "glmnet, nlambda = $NL, $([ $force = 1 ] && echo "all $NL lambdas forced" || echo "its defaults") ($GREPEAT runs)"
    if ! Rscript "$here/glmnet.R" "$data" "$NL" "$GREPEAT" "$force" >"$work/g$force.out" 2>"$work/g$force.err"; then
        say "glmnet.R failed: $(tail -n 2 "$work/g$force.err")"
        status=1
        continue
    fi
    while IFS='=' read -r k v; do G[$force.$k]=$v; done < <(grep '=' "$work/g$force.out")
done

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- rls2-path.c common 2>/dev/null | head -c1)
echo "Linear RLS2 path vs glmnet lasso path: $rows x $cols Gaussian design (gen_gauss.py ${GAUSS_OPTS[*]:-defaults}),"
echo "$NL lambdas; kmtk $commit${dirty:+ (rls2-path.c/common modified)}${G[0.glmnet_version]:+, glmnet ${G[0.glmnet_version]} (R ${G[0.R_version]})};"
echo "$(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; one thread each."
echo
cpu_line
echo
echo "| tool | lambdas | variables first -> last | deviance explained at the end | compute CPU s | compute wall s | process s (wall / CPU) | CPU ratio RLS2/glmnet | wall ratio RLS2/glmnet |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
gcpu=${G[1.cpu_median]:-${G[0.cpu_median]:-}}
gwall=${G[1.elapsed_median]:-${G[0.elapsed_median]:-}}
ratio() {
    [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }' || echo n/a
}
if [ -n "$best" ]; then
    read -r k1 kn dev < <(awk -F, -v v0="$var0" 'NR == 2 { a = $3 } NR > 1 { b = $3; r = $7 }
        END { printf "%s %s %.5f", a, b, 1 - r * r / v0 }' "$work/r$prun.csv")
    echo "| rls2-path --kernels linear -L $RLS2_LAMBDAS | $NL | $k1 -> $kn | $dev | $(fmt_spread "$pcpu_med" "$pcpu_lo" "$pcpu_hi") | $(fmt_spread "$path_med" "$path_lo" "$path_hi") | $pw / $pc | $(ratio "$pcpu_med" "$gcpu") | $(ratio "$path_med" "$gwall") |"
fi
for force in 0 1; do
    [ -n "${G[$force.lambdas]:-}" ] || continue
    echo "| glmnet nlambda=$NL$([ $force = 1 ] && echo ", all forced" || echo ", defaults") | ${G[$force.lambdas]} | ${G[$force.df_first]} -> ${G[$force.df_last]} | ${G[$force.dev_last]} | ${G[$force.cpu_median]} (min ${G[$force.cpu_min]}) | ${G[$force.elapsed_median]} (min ${G[$force.elapsed_min]}) | - | $([ -n "$best" ] && ratio "$pcpu_med" "${G[$force.cpu_median]}" || echo n/a) | $([ -n "$best" ] && ratio "$path_med" "${G[$force.elapsed_median]}" || echo n/a) |"
done
echo
echo "compute CPU s: user + system seconds of the path alone, median (min-max) over the runs. glmnet:"
echo "system.time() around glmnet(), median of $GREPEAT calls. rls2-path: the CPU of the whole process"
echo "minus that of the same process on the first lambda alone (reading and set-up cancel; run in"
echo "pairs), plus that lambda's own seconds; median of $RREPEAT pairs. compute wall s: rls2-path's"
echo "seconds column summed; glmnet's elapsed time. The ratios divide RLS2's median by glmnet's"
echo "(the forced run's in the rls2 row when present), CPU by CPU and wall by wall: below 1, RLS2 is"
echo "faster. process s: the whole rls2-path process (reading and kernel set-up included), medians."
if [ -n "$best" ]; then
    echo
    echo "The RLS2 path (run $prun):"
    echo
    echo "| lambda | variables | iterations | seconds | train RMSE | deviance explained |"
    echo "|---:|---:|---:|---:|---:|---:|"
    awk -F, -v v0="$var0" 'NR > 1 { printf "| %.4g | %d | %d | %.3f | %.4f | %.5f |\n", $1, $3, $4, $5, $7, 1 - $7 * $7 / v0 }' "$work/r$prun.csv"
fi
if [ -s "$work/g1.out" ]; then
    echo
    echo "glmnet's path (all $NL lambdas): lambda, variables, deviance explained:"
    echo
    awk '$1 == "path" { printf "%s%s/%s/%s", sep, $2, $3, $4; sep = "  " } END { print "" }' "$work/g1.out" | fold -s -w 100
fi
exit "$status"
