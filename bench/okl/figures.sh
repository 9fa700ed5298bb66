#!/usr/bin/env bash
# bench/okl/figures.sh - regenerates doc/okl-figure1.svg and doc/okl-figure2.svg (the OKL
# reproduction, seed 001 Figures 1 and 2; see doc/okl.md) from the current build, in one
# command: builds train, predict, datasets/gen_okl_signals and bench/okl/okl_figure with
# make, runs bench/okl/experiment1.sh and experiment2.sh with their defaults (every point of
# both figures is computed in this run: no table is reused), and copies the two figures into
# doc/ only when both scripts drew theirs. About 4-6 minutes on 2 shared cores (plus ~15 s
# the first time, to generate Experiment 2's 2 x 110 MB of data into $BENCH_CACHE).
#
# Usage: bench/okl/figures.sh            (from anywhere; the repository is this script's)
# Environment (all optional):
#   OUT_DIR    where the tables, the scripts' markdown reports (exp1.md, exp2.md) and the
#              figures go before they are copied (default ${TMPDIR:-/tmp}/kmtk-okl-figures)
#   DOC_DIR    where the figures are copied (default: the repository's doc/)
#   MAKEFLAGS  as for make (e.g. -j2); the build is plain `make TARGETS`
#   The experiment scripts' variables (OKL_SEEDS, OKL_RANKS, REPEATS, ...) pass through;
#   doc/okl.md's figures are from the defaults.
# Prints the commit, the CPU and the reports' paths at the end. Exit status: 0 when both
# figures were regenerated; 1 when a run or a figure failed (doc/ is then left alone); 2
# when the build failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
OUT_DIR=${OUT_DIR:-${TMPDIR:-/tmp}/kmtk-okl-figures}
DOC_DIR=${DOC_DIR:-$repo/doc}
export LC_ALL=C

say() { echo "figures: $*" >&2; }

say "building with make in $repo"
make -C "$repo" train predict datasets/gen_okl_signals bench/okl/okl_figure >&2 ||
    { say "make failed"; exit 2; }

mkdir -p "$OUT_DIR" || { say "cannot create $OUT_DIR"; exit 1; }
# nothing old may end up in a figure: the scripts write every table and figure afresh
rm -f "$OUT_DIR"/exp1.tsv "$OUT_DIR"/exp1-raw.tsv "$OUT_DIR"/exp2.tsv \
    "$OUT_DIR"/exp2-runs.txt "$OUT_DIR"/figure1.svg "$OUT_DIR"/figure2.svg \
    "$OUT_DIR"/exp1.md "$OUT_DIR"/exp2.md

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
# the sources and scripts (not doc/, where the figures themselves go)
dirty=$(git -C "$repo" status --porcelain --untracked-files=no -- . ':!doc' 2>/dev/null | head -c1)
[ -n "$dirty" ] && say "warning: the work tree has uncommitted changes; the figures' titles say 'modified'"
t0=$SECONDS
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a)
status=0
say "experiment 1 (Figure 1) -> $OUT_DIR/exp1.md"
OUT_DIR=$OUT_DIR "$here/experiment1.sh" >"$OUT_DIR/exp1.md" || status=1
say "experiment 2 (Figure 2) -> $OUT_DIR/exp2.md"
OUT_DIR=$OUT_DIR "$here/experiment2.sh" >"$OUT_DIR/exp2.md" || status=1
for f in figure1 figure2; do
    [ -s "$OUT_DIR/$f.svg" ] || { say "no $OUT_DIR/$f.svg"; status=1; }
done
if [ "$status" -ne 0 ]; then
    say "a run failed: $DOC_DIR left as it was (see $OUT_DIR)"
    exit 1
fi
cp "$OUT_DIR/figure1.svg" "$DOC_DIR/okl-figure1.svg" &&
    cp "$OUT_DIR/figure2.svg" "$DOC_DIR/okl-figure2.svg" || { say "cannot copy into $DOC_DIR"; exit 1; }

. "$repo/bench/lib.bash"
echo "Regenerated $DOC_DIR/okl-figure1.svg and okl-figure2.svg in $((SECONDS - t0)) s"
echo "kmtk $commit${dirty:+ (with uncommitted changes)}, $(date -u '+%Y-%m-%d %H:%M UTC')"
cpu_line
echo "load average before the runs: $load (timings vary with the load of a shared machine)"
echo "reports: $OUT_DIR/exp1.md, $OUT_DIR/exp2.md; tables: $OUT_DIR/exp1.tsv, $OUT_DIR/exp2.tsv"
