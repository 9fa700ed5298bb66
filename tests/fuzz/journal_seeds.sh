#!/usr/bin/env bash
# Writes the seed corpus of fuzz_journal (tests/fuzz/corpus/fuzz_journal): journals of a
# real mtl-server (built by make; the parameters fuzz_journal.c replays with: defaults,
# --features 8) fed the requests of wire_seeds.py, whole (first byte 0) and as records after
# the header (first byte 1), plus damaged copies. Run it again after a journal format change.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-tests/fuzz/corpus/fuzz_journal}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-jseeds.XXXXXX")
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$out"
printf '1 s1\n2 s2\n' >"$tmp/secrets"
python3 tests/fuzz/wire_seeds.py "$tmp/wire" >/dev/null
for name in empty server5_session server5_register server5_send_get; do
    rm -f "$tmp/journal" "$tmp/port"
    ./mtl-server -q --port 0 --port-file "$tmp/port" --secrets "$tmp/secrets" --register \
        --features 8 --fsync none -j "$tmp/journal" &
    pid=$!
    while [ ! -s "$tmp/port" ]; do sleep 0.05; done
    if [ "$name" != empty ]; then
        python3 - "$(cat "$tmp/port")" "$tmp/wire/$name" <<'PY'
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(open(sys.argv[2], 'rb').read()[1:])
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
PY
    fi
    kill -TERM $pid
    wait $pid || true
    cp "$tmp/journal" "$tmp/$name.jnl"
done
head=$(stat -c %s "$tmp/empty.jnl")
python3 - "$out" "$head" "$tmp" <<'PY'
import sys
out, head, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def w(name, data):
    open(f'{out}/{name}', 'wb').write(data)
for n in ('empty', 'server5_session', 'server5_register', 'server5_send_get'):
    j = open(f'{tmp}/{n}.jnl', 'rb').read()
    w(f'whole_{n}', b'\x00' + j)
    if len(j) > head:
        w(f'records_{n}', b'\x01' + j[head:])
j = open(f'{tmp}/server5_session.jnl', 'rb').read()
w('whole_torn_tail', b'\x00' + j[:-5])
w('whole_torn_header', b'\x00' + j[:head - 3])
mid = head + (len(j) - head) // 2
w('whole_flipped_middle', b'\x00' + j[:mid] + bytes([j[mid] ^ 0x40]) + j[mid + 1:])
w('whole_length_high_byte', b'\x00' + j[:head + 3] + b'\x80' + j[head + 4:])
w('records_flipped_first', b'\x01' + bytes([j[head] ^ 1]) + j[head + 1:])
PY
ls "$out" | wc -l
