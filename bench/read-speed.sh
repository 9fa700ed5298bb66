#!/usr/bin/env bash
# read-speed.sh - svmlight reading speed: kmtk's km_svmlight_read vs liblinear-train's reader.
#
# Usage: bench/read-speed.sh [FILE...]        (run `make` first: needs bench/read_speed)
#   Default files: a9a, w8a, ijcnn1, reuters-lasvm from ../shared/datasets, gunzipped into a
#   temporary directory. Extra FILE arguments (plain or gzip) are added to the list.
#   Every file is concatenated with itself until it is at least KM_BENCH_MB megabytes
#   (default 100) so the timings are long enough to mean something.
#   KM_BENCH_REPS (default 3): runs per reader and file; the fastest counts.
#   KM_BENCH_GZ=1: also time kmtk on the same text gzip-compressed (gzip -6), shown as
#   uncompressed MB/s in an extra column (liblinear-train cannot read gzip).
#
# Method. kmtk: bench/read_speed times km_svmlight_read alone (text already in the page
# cache, since it first streams the file once to count its bytes).
# liblinear-train has no read-only mode, so its reader is timed by stopping the process
# where reading ends: a tiny LD_PRELOAD library (compiled here from the heredoc below)
# defines train(), which liblinear-train calls from liblinear.so right after
# read_problem() and check_parameter(); it prints the seconds since the library's
# constructor ran (before main) and exits. That is exactly option parsing + read_problem
# (both of its passes over the file) + check_parameter, with no solver time. As a cross
# check the table also shows the whole-process time of a minimal solve,
# `liblinear-train -s 2 -e 1e30 -q FILE /dev/null` (reading + one gradient + model write),
# which bounds the reader time from above. MB/s = uncompressed text bytes / 10^6 / seconds.
# The ratio column is kmtk MB/s over liblinear read MB/s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
data=${KM_DATASETS:-$here/../../shared/datasets}
mb=${KM_BENCH_MB:-100}
reps=${KM_BENCH_REPS:-3}
rs=$here/read_speed
[ -x "$rs" ] || { echo "read-speed.sh: $rs missing; run make first" >&2; exit 1; }
command -v liblinear-train >/dev/null || { echo "read-speed.sh: liblinear-train missing (apt-get install liblinear-tools)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The shim: train() reports the time since load and ends the process.
cat >"$tmp/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static struct timespec t0;
__attribute__((constructor)) static void shim_start(void) { clock_gettime(CLOCK_MONOTONIC, &t0); }
void *train(const void *prob, const void *param);
void *train(const void *prob, const void *param)
{
    struct timespec t;
    (void)prob, (void)param;
    clock_gettime(CLOCK_MONOTONIC, &t);
    fprintf(stderr, "read_seconds %.6f\n", (t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec));
    _exit(0);
}
EOF
shim=
if ${CC:-cc} -O2 -shared -fPIC -o "$tmp/shim.so" "$tmp/shim.c" 2>"$tmp/shim.err"; then
    shim=$tmp/shim.so
else
    echo "read-speed.sh: could not build the train() shim; liblinear read column left empty" >&2
fi

# Prepares FILE (name, source path): plain text, >= mb megabytes; prints the path.
prepare() {
    local name=$1 src=$2 one=$tmp/$1.one out=$tmp/$1.txt
    if [ "$(head -c2 "$src" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
        gzip -dc "$src" >"$one" || return 1
    else
        cp "$src" "$one" || return 1
    fi
    local size; size=$(stat -c %s "$one")
    [ "$size" -gt 0 ] || return 1
    local copies=$(( (mb * 1000000 + size - 1) / size ))
    [ "$copies" -ge 1 ] || copies=1
    : >"$out"
    for ((i = 0; i < copies; i++)); do cat "$one" >>"$out"; done
    rm -f "$one"
    echo "$out"
}

# Best wall-clock seconds of reps runs of a command (stdout/stderr discarded).
best_wall() {
    local best= t0 t1 s
    for ((r = 0; r < reps; r++)); do
        t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
        best=$(awk -v a="$best" -v b="$s" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    echo "$best"
}

# Best read_seconds reported by the shim over reps runs.
best_shim() {
    local best= s
    for ((r = 0; r < reps; r++)); do
        s=$(LD_PRELOAD=$shim liblinear-train -s 2 -q "$1" "$tmp/model" 2>&1 >/dev/null |
            awk '/^read_seconds/ { print $2 }')
        [ -n "$s" ] || { echo ""; return; }
        best=$(awk -v a="$best" -v b="$s" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    echo "$best"
}

names=() srcs=()
for d in a9a w8a ijcnn1 reuters-lasvm; do
    if [ -f "$data/$d.gz" ]; then names+=("$d"); srcs+=("$data/$d.gz")
    else echo "read-speed.sh: $data/$d.gz not found, skipped" >&2; fi
done
for f in "$@"; do names+=("$(basename "$f" .gz)"); srcs+=("$f"); done

gz=${KM_BENCH_GZ:-0}
. "$(dirname "$0")/lib.bash"   # cpu_line: the CPU above the table
cpu_line
printf '%-16s %8s %10s %12s %12s %14s %7s' file MB rows "kmtk MB/s" "ll read MB/s" "ll -e1e30 MB/s" ratio
[ "$gz" = 1 ] && printf ' %12s' "kmtk gz MB/s"
echo
for k in "${!names[@]}"; do
    f=$(prepare "${names[k]}" "${srcs[k]}") || { echo "read-speed.sh: cannot prepare ${srcs[k]}" >&2; continue; }
    bytes=$(stat -c %s "$f")
    line=$("$rs" "$f" "$reps") || { echo "read-speed.sh: read_speed failed on $f" >&2; rm -f "$f"; continue; }
    rows=$(awk '{ print $2 }' <<<"$line")
    ours=$(awk '{ for (i = 1; i < NF; i++) if ($i == "MB/s") print $(i + 1) }' <<<"$line")
    llr=; [ -n "$shim" ] && llr=$(best_shim "$f")
    llp=$(best_wall liblinear-train -s 2 -e 1e30 -q "$f" "$tmp/model")
    awk -v n="${names[k]}" -v b="$bytes" -v rows="$rows" -v ours="$ours" -v llr="$llr" -v llp="$llp" 'BEGIN {
        r = (llr == "") ? "-" : sprintf("%.1f", b / 1e6 / llr)
        p = sprintf("%.1f", b / 1e6 / llp)
        ratio = (llr == "") ? sprintf("%.2f*", ours / p) : sprintf("%.2f", ours / r)
        printf "%-16s %8.1f %10d %12s %12s %14s %7s", n, b / 1e6, rows, ours, r, p, ratio
    }'
    if [ "$gz" = 1 ]; then
        gzip -6 -c "$f" >"$f.gz"
        gzl=$("$rs" "$f.gz" "$reps") || gzl=
        printf ' %12s' "$(awk '{ for (i = 1; i < NF; i++) if ($i == "MB/s") print $(i + 1) }' <<<"$gzl")"
        rm -f "$f.gz"
    fi
    echo
    rm -f "$f"
done
