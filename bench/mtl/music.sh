#!/usr/bin/env bash
# music.sh - Dinuzzo's thesis 5.4 (music recommendation) end to end, and mtl-server's
# throughput. Usage: bench/mtl/music.sh [OUTDIR]   (default bench/mtl/out; THREADS=2 runs
# the grid on two threads). Steps:
#   1. gen_music: 489 items, 19 generated tags, 100,000 users x 5 ratings (500,000 triples)
#   2. the 15 x 15 (alpha, lambda) grid with Algorithm 4: RMSE, TOP20HITS (grid.csv)
#   3. mtl-server at the best (alpha, lambda), journal on, fsync batched: the whole stream
#      sent over loopback, then every user's estimate as an active client; wall time of
#      both, triples/s, the server's peak memory, the estimates against Algorithm 4
#   (SKIP_GRID=1 reuses the grid of an earlier run in OUTDIR)
#   4. triples/s with one fdatasync per triple (--fsync always, one triple per request)
#      on the first 20,000 triples, and with --fsync none and without a journal
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/mtl/out}
mkdir -p "$out"
G=$root/datasets/gen_music S=$root/mtl-server C=$root/mtl-client B=$root/bench/mtl/music
SPID=
trap 'if [ -n "$SPID" ]; then kill -9 $SPID 2>/dev/null || true; fi' EXIT

start_server() {  # start_server ALPHA LAMBDA EXTRA...: sets SPID and PORT
    local a=$1 l=$2; shift 2
    rm -f "$out/port"
    "$S" -q --port 0 --port-file "$out/port" --secrets "$out/secrets" -t expdot -g 1 --alpha "$a" --lambda "$l" --features 19 "$@" &
    SPID=$!
    for _ in $(seq 200); do [ -s "$out/port" ] && break; sleep 0.05; done
    PORT=$(cat "$out/port")
}
stop_server() {
    kill -TERM "$SPID"
    wait "$SPID"
    SPID=
}
now() { date +%s.%N; }

"$G" -m 100000 "$out/music"
awk '{ printf "%s s%015d\n", $1, $1 }' "$out/music.users" >"$out/secrets"   # 16 characters

echo "== grid (Algorithm 4): 15 alphas x 15 lambdas in [1e-7, 1]"
if [ "${SKIP_GRID:-0}" = 1 ] && [ -s "$out/grid.txt" ]; then
    echo "(SKIP_GRID=1: the grid of the last run)"
else
    t0=$(now)
    "$B" grid "$out/music" -n "${THREADS:-1}" >"$out/grid.csv" 2>"$out/grid.txt"
    t1=$(now)
    echo "grid: $(echo "$t1 - $t0" | bc) s" >>"$out/grid.txt"
fi
cat "$out/grid.txt"
read -r alpha lambda < <(awk '$2 == "best" { sub(/:$/, "", $6); print $4, $6 }' "$out/grid.txt")

echo "== server at alpha $alpha, lambda $lambda: journal, fsync batch"
rm -f "$out/journal"
start_server "$alpha" "$lambda" -j "$out/journal" --fsync batch
t0=$(now)
"$C" -q --port "$PORT" --secrets "$out/secrets" send "$out/music.train"
t1=$(now)
"$B" clients "$out/music" -p "$PORT" >"$out/clients.txt"
t2=$(now)
hwm=$(awk '/VmHWM/ { print $2, $3 }' "/proc/$SPID/status")
stop_server
cat "$out/clients.txt"
echo "send 500000 triples: $(echo "$t1 - $t0" | bc) s ($(echo "500000 / ($t1 - $t0)" | bc) triples/s)"
echo "all 100000 client estimates: $(echo "$t2 - $t1" | bc) s; stream + estimates: $(echo "$t2 - $t0" | bc) s"
echo "server peak memory (VmHWM): $hwm; journal $(stat -c %s "$out/journal") bytes"

head -n 20000 "$out/music.train" >"$out/head20k.train"
for mode in "always" "none" "nojournal"; do
    rm -f "$out/journal"
    if [ "$mode" = nojournal ]; then
        start_server "$alpha" "$lambda"
    else
        start_server "$alpha" "$lambda" -j "$out/journal" --fsync "$mode"
    fi
    batch=5
    [ "$mode" = always ] && batch=1
    t0=$(now)
    "$C" -q --port "$PORT" --secrets "$out/secrets" --batch "$batch" send "$out/head20k.train"
    t1=$(now)
    stop_server
    echo "20000 triples, $batch per request, fsync $mode: $(echo "20000 / ($t1 - $t0)" | bc) triples/s"
done
