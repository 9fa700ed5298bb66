#!/usr/bin/env bash
# restart.sh - how long mtl-server takes to start on the journal of the music run (thesis
# 5.4: 500,000 triples of 100,000 users, 489 unique inputs): from exec to listening, wall and
# CPU, medians of RUNS runs (default 5), for
#   snapshot    the snapshot written at SIGTERM (the journal after it empty)
#   crash       the snapshot 100,000 triples behind (the default --snapshot-every: the worst
#               case after kill -9), the journal after it replayed
#   full        no snapshot (--snapshot none): the whole journal replayed (FULL_RUNS, 3)
# Usage: bench/mtl/restart.sh [OUTDIR]   (default bench/mtl/out; the data and journal are
# made once and reused: REDO=1 makes them again)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/bench/mtl/out}
runs=${RUNS:-5}
full_runs=${FULL_RUNS:-3}
mkdir -p "$out"
G=$root/datasets/gen_music S=$root/mtl-server C=$root/mtl-client
J=$out/restart.jnl
SPID=
trap 'if [ -n "$SPID" ]; then kill -9 $SPID 2>/dev/null || true; fi' EXIT
params=(-t expdot -g 1 --alpha 0.1429 --lambda 1e-4 --features 19)
tick=$(getconf CLK_TCK)

serve() {  # serve LOG EXTRA...: starts the server, sets SPID and PORT
    local log=$1; shift
    rm -f "$out/port"
    "$S" --port 0 --port-file "$out/port" --secrets "$out/secrets" -j "$J" "${params[@]}" \
        "$@" 2>"$log" &
    SPID=$!
    for _ in $(seq 2000); do [ -s "$out/port" ] && break; sleep 0.05; done
    PORT=$(cat "$out/port")
}
halt() { kill -TERM "$SPID"; wait "$SPID"; SPID=; }

if [ "${REDO:-0}" = 1 ] || [ ! -s "$J" ] || [ ! -s "$out/snap400k" ]; then
    "$G" -m 100000 "$out/music"
    awk '{ print $1, "s" $1 }' "$out/music.users" >"$out/secrets"
    rm -f "$J" "$J.snap"
    head -n 400000 "$out/music.train" >"$out/first400k.train"
    tail -n +400001 "$out/music.train" >"$out/last100k.train"
    serve "$out/restart.send1.log"
    "$C" -q --port "$PORT" --secrets "$out/secrets" send "$out/first400k.train"
    halt
    cp "$J.snap" "$out/snap400k"
    serve "$out/restart.send2.log"
    "$C" -q --port "$PORT" --secrets "$out/secrets" send "$out/last100k.train"
    halt
    cp "$J.snap" "$out/snap500k"
fi

# one start: exec -> port file; prints "wall cpu" (s); the server is then stopped
measure() {  # measure LOG EXTRA...
    local log=$1; shift
    rm -f "$out/port"
    local t0 t1 st
    t0=$(date +%s.%N)
    "$S" --port 0 --port-file "$out/port" --secrets "$out/secrets" -j "$J" "${params[@]}" \
        "$@" 2>"$log" &
    SPID=$!
    until [ -s "$out/port" ]; do sleep 0.002; done
    t1=$(date +%s.%N)
    read -r -a st <"/proc/$SPID/stat"
    halt
    echo "$(echo "$t1 - $t0" | bc) $(echo "(${st[13]} + ${st[14]}) / $tick" | bc -l)"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

report() {  # report NAME FILE: medians of the wall and CPU columns
    printf '%-10s wall %.3f s  CPU %.3f s   (median of %d; walls: %s)\n' "$1" \
        "$(cut -d' ' -f1 "$2" | median)" "$(cut -d' ' -f2 "$2" | median)" "$(wc -l <"$2")" \
        "$(cut -d' ' -f1 "$2" | tr '\n' ' ')"
}

echo "== $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "journal $(stat -c %s "$J") bytes, snapshot $(stat -c %s "$out/snap500k") bytes"
: >"$out/restart.snapshot" ; : >"$out/restart.crash" ; : >"$out/restart.full"
for i in $(seq "$runs"); do
    cp "$out/snap500k" "$J.snap"
    measure "$out/restart.snapshot.log" >>"$out/restart.snapshot"
    cp "$out/snap400k" "$J.snap"
    measure "$out/restart.crash.log" >>"$out/restart.crash"
done
for i in $(seq "$full_runs"); do
    measure "$out/restart.full.log" --snapshot none >>"$out/restart.full"
done
cp "$out/snap500k" "$J.snap"
report snapshot "$out/restart.snapshot"
grep -h 'journal.*records' "$out/restart.snapshot.log" | sed 's/^/    /'
report crash "$out/restart.crash"
grep -h 'journal.*records' "$out/restart.crash.log" | sed 's/^/    /'
report full "$out/restart.full"
grep -h 'journal.*records' "$out/restart.full.log" | sed 's/^/    /'
echo "snapshot writes while sending: $(grep -h 'snapshot .* at version' "$out"/restart.send*.log | sed 's/.*: //' | tr '\n' ' ')"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
