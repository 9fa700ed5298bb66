#!/usr/bin/env bash
# bench/rls2/glmnet.sh - the linear RLS2 path (rls2-path -k linear) against R's glmnet lasso
# path on the same 144 x 16,063 Gaussian regression design, the same number of lambdas (30).
# The target of the issue: RLS2 faster than glmnet (about 0.05 s of compute for 30 lambdas).
# A benchmark, not a test: a slow ratio is never a failure.
#
# Data: bench/rls2/gen_gauss.py (x_ij ~ N(0,1), y = X beta + N(0,1), beta with 10 non-zeros
# of size 1-2; deterministic for a seed), made once into the cache; both tools read the same
# svmlight file. Outside the timed regions: reading the file, building glmnet's matrix and
# rls2-path's basis kernels.
#
# Timed:
#   rls2-path  -k linear -S trace --task reg -L RLS2_LAMBDAS --no-dof -q -o path.csv: the sum
#              of the "seconds" column (wall time of the solver at each lambda: the path's
#              compute; for -k linear the solver of (4.9), common/rls2lin.h, which rls2-path
#              picks for rank-one kernels instead of Algorithm 3); fastest of RLS2_REPEAT
#              runs, as for glmnet; also the whole process (wall and user+system,
#              /usr/bin/time), which adds reading the 33 MB file and the kernel set-up.
#              --no-dof skips the degrees of freedom (an l^3 inverse per lambda, not part
#              of the path).
#   glmnet     system.time() around glmnet(x, y, nlambda = 30) (bench/rls2/glmnet.R): with
#              its defaults (it may stop before 30 lambdas when the deviance explained
#              passes 0.999) and forced to compute all 30 (glmnet.control(fdev = 0,
#              devmax = 1)). Fastest of GLMNET_REPEAT runs, elapsed and user+system.
# The lambda scales differ (RLS2's (4.9) penalizes the squared, scaled l1 norm): RLS2_LAMBDAS
# is chosen so that the RLS2 path covers the same models as glmnet's, from one variable to a
# deviance explained of about 0.9996 (glmnet's last forced lambda); the table prints both
# ends for each tool.
#
# Usage: bench/rls2/glmnet.sh > glmnet.md      (after make; a few minutes on 2 cores)
# Environment (all optional):
#   RLS2_LAMBDAS    rls2-path -L (default 1e-3:5:30)
#   GLMNET_NL       lambdas for both (default 30; also sets the N of RLS2_LAMBDAS' default)
#   GLMNET_REPEAT   glmnet runs, the fastest counts (default 5)
#   RLS2_REPEAT     rls2-path runs, the fastest counts (default 5)
#   GAUSS_OPTS      gen_gauss.py options (default: none: 144 x 16063, 10 non-zeros, seed 1)
#   GLMNET_TIMEOUT  seconds before an rls2-path run is stopped (default 3600; 0: none)
#   GLMNET_INSTALL  1 (default): install r-cran-glmnet with apt-get when it is missing and
#                   this runs as root; 0: never (then the glmnet rows are skipped)
#   BENCH_BIN, BENCH_CACHE  as for bench/liblinear.sh
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
TIME=/usr/bin/time
# one thread everywhere: glmnet is single-threaded, and so is rls2-path's -n 1 (its BLAS
# calls included)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 LC_ALL=C

. "$repo/bench/lib.bash"

[ -x "$BIN/rls2-path" ] || die "$BIN/rls2-path not found: run make first (or set BENCH_BIN)"
[ -x "$TIME" ] || die "$TIME not found: apt-get install time"
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
mkdir -p "$work/bin" && cp "$BIN/rls2-path" "$work/bin/" || die "cannot copy rls2-path"
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

say "rls2-path -k linear -L $RLS2_LAMBDAS ($RREPEAT run(s))"
best=
for r in $(seq 1 "$RREPEAT"); do
    tm=()
    [ "$TIMEOUT" != 0 ] && tm=(timeout "$TIMEOUT")
    "$TIME" -f '%e %U %S %M' -o "$work/rls2.time" "${tm[@]}" "$BIN/rls2-path" -q -k linear \
        -S trace --task reg -L "$RLS2_LAMBDAS" --no-dof -n 1 -o "$work/r$r.csv" "$data" \
        "$work/r.model" >"$work/rls2.out" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
        [ "$rc" = 124 ] && say "rls2-path stopped after $TIMEOUT s" ||
            say "rls2-path failed ($rc): $(tail -n 1 "$work/rls2.out")"
        status=1
        break
    fi
    path=$(awk -F, 'NR > 1 { s += $5 } END { printf "%.3f", s }' "$work/r$r.csv")
    read -r pw pu ps pm < <(tail -n 1 "$work/rls2.time")
    if [ -z "$best" ] || awk -v a="$path" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
        best="$path $pw $(awk -v u="$pu" -v s="$ps" 'BEGIN { printf "%.2f", u + s }') $((pm / 1024)) $r"
    fi
done

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
echo "$(date -u +%Y-%m-%d), $(getconf _NPROCESSORS_ONLN) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; one thread each."
echo
echo "| tool | lambdas | variables first -> last | deviance explained at the end | compute s | process s (wall / cpu) | compute ratio RLS2/glmnet |"
echo "|---|---:|---|---:|---:|---:|---:|"
gref=${G[1.cpu_min]:-${G[0.cpu_min]:-}}
if [ -n "$best" ]; then
    read -r path pw pcpu _ prun <<<"$best"
    read -r k1 kn dev < <(awk -F, -v v0="$var0" 'NR == 2 { a = $3 } NR > 1 { b = $3; r = $7 }
        END { printf "%s %s %.5f", a, b, 1 - r * r / v0 }' "$work/r$prun.csv")
    ratio=n/a
    [ -n "$gref" ] && ratio=$(awk -v a="$path" -v b="$gref" 'BEGIN { printf "%.2f", a / b }')
    echo "| rls2-path -k linear -L $RLS2_LAMBDAS | $NL | $k1 -> $kn | $dev | $path | $pw / $pcpu | $ratio |"
fi
for force in 0 1; do
    [ -n "${G[$force.lambdas]:-}" ] || continue
    ratio=n/a
    [ -n "$best" ] && ratio=$(awk -v a="${best%% *}" -v b="${G[$force.cpu_min]}" 'BEGIN { printf "%.2f", a / b }')
    echo "| glmnet nlambda=$NL$([ $force = 1 ] && echo ", all forced" || echo ", defaults") | ${G[$force.lambdas]} | ${G[$force.df_first]} -> ${G[$force.df_last]} | ${G[$force.dev_last]} | ${G[$force.cpu_min]} (elapsed ${G[$force.elapsed_min]}) | - | $ratio |"
done
echo
echo "compute s: rls2-path = sum of the path table's seconds column (wall), fastest of $RREPEAT runs;"
echo "glmnet = user+system of the fastest of $GREPEAT calls (its elapsed time in brackets). The ratio"
echo "divides the RLS2 path seconds by glmnet's user+system seconds (of the forced run when present):"
echo "below 1, RLS2 is faster."
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
