#!/usr/bin/env bash
# Writes the seed corpus of fuzz_journal (tests/fuzz/corpus/fuzz_journal): journals of a
# real mtl-server (built by make; the parameters fuzz_journal.c replays with: defaults,
# --features 8) fed the requests of wire_seeds.py, whole (first byte 0) and as records after
# the header (first byte 1), plus damaged copies, the session's journal in version 1 (which
# is converted) and records through the API (first byte 2). Journal format version 2
# (common/journal.h): run it again after a journal format change.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-tests/fuzz/corpus/fuzz_journal}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-jseeds.XXXXXX")
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$out"
printf '1 fuzz-secret-of-1\n2 fuzz-secret-of-2\n' >"$tmp/secrets"   # those of fuzz_wire.c
printf 'fuzz-admin-token\n' >"$tmp/admin"
python3 tests/fuzz/wire_seeds.py "$tmp/wire" >/dev/null
for name in empty server5_session server5_register server5_send_get; do
    rm -f "$tmp/journal" "$tmp/port"
    ./mtl-server -q --port 0 --port-file "$tmp/port" --secrets "$tmp/secrets" --register \
        --admin-token-file "$tmp/admin" --features 8 --fsync none -j "$tmp/journal" \
        --snapshot none &
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
import struct, sys, zlib
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
w('whole_short_header', b'\x00' + j[:20])
w('whole_header_length_flipped', b'\x00' + j[:8] + bytes([j[8] ^ 1]) + j[9:])
mid = head + (len(j) - head) // 2
w('whole_flipped_middle', b'\x00' + j[:mid] + bytes([j[mid] ^ 0x40]) + j[mid + 1:])
w('whole_length_high_byte', b'\x00' + j[:head + 3] + b'\x80' + j[head + 4:])
w('whole_zero_tail', b'\x00' + j + bytes(16))
w('records_flipped_first', b'\x01' + bytes([j[head] ^ 1]) + j[head + 1:])
# the same journal in version 1: "KMTKJNL1", u32 H, header, u32 CRC; records u32 length,
# u32 CRC of type + body, type, body
H = struct.unpack_from('<I', j, 8)[0]
hdr = j[32:32 + H]
v1 = b'KMTKJNL1' + struct.pack('<I', H) + hdr + struct.pack('<I', zlib.crc32(hdr))
at = head
while at < len(j):
    n = struct.unpack_from('<I', j, at)[0]
    v1 += struct.pack('<II', n, zlib.crc32(j[at + 8:at + 8 + n])) + j[at + 8:at + 8 + n]
    at += 12 + n
w('whole_v1_session', b'\x00' + v1)
w('whole_v1_torn_tail', b'\x00' + v1[:-3])
# mode 2: records (u8 type, u16 length, body) through the API
def rec(t, body): return struct.pack('<BH', t, len(body)) + body
trip = struct.pack('<ddI', 1.0, 1.0, 2) + struct.pack('<Id', 0, 1.0) + struct.pack('<Id', 3, -0.5)
w('api_records', b'\x02' + rec(3, struct.pack('<qQI', 1, 7, 1) + trip)
  + rec(1, struct.pack('<qI', 2, 1) + trip)
  + rec(2, struct.pack('<qH', 3, 16) + b'0123456789abcdef'))
w('api_bad_seq', b'\x02' + rec(3, struct.pack('<qQI', 1, 2**63, 1) + trip))
w('api_bad_triples', b'\x02' + rec(3, struct.pack('<qQI', 1, 1, 3) + trip))
w('api_bad_type', b'\x02' + rec(9, b'abc'))
PY
ls "$out" | wc -l
