#!/usr/bin/env python3
# Writes the seed corpus of fuzz_wire (tests/fuzz/corpus/fuzz_wire) from the frame layouts of
# doc/mtl-protocol.md (protocol version 2): run it again after a protocol change. The first
# byte of each seed is the harness's mode (see fuzz_wire.c). The secrets and the admin token
# are those of fuzz_wire.c.
import os, struct, sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus', 'fuzz_wire')
os.makedirs(out, exist_ok=True)

S1, S2, ADMIN = b'fuzz-secret-of-1', b'fuzz-secret-of-2', b'fuzz-admin-token'

def frame(t, body): return struct.pack('<IB', len(body) + 1, t) + body
def auth(task, s): return struct.pack('<qH', task, len(s)) + s
def triple(y, w, pairs):
    return struct.pack('<ddI', y, w, len(pairs)) + b''.join(struct.pack('<Id', i, v) for i, v in pairs)
def send_body(ts, seq=0): return struct.pack('<QI', seq, len(ts)) + b''.join(ts)
def send_body_v1(ts): return struct.pack('<I', len(ts)) + b''.join(ts)
def kernel(t, g, c, d): return struct.pack('<BddI', t, g, c, d)
def param(alpha=0.5, lam=1.0, K=(0, 1, 0, 3), Kt=(0, 1, 0, 3), nf=0):
    return struct.pack('<dd', alpha, lam) + kernel(*K) + kernel(*Kt) + struct.pack('<I', nf)
def disclosed(version, n, first, rows, ybar, H):
    b = struct.pack('<QQQ', version, n, first)
    for r in rows:
        b += struct.pack('<I', len(r)) + b''.join(struct.pack('<Id', i, v) for i, v in r)
    return b + b''.join(struct.pack('<d', v) for v in ybar) + b''.join(struct.pack('<d', v) for v in H)
def w(name, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)

ts = [triple(1.0, 1.0, [(0, 1.0), (3, -0.5)]), triple(-1.0, 2.0, [(1, 0.25)]),
      triple(0.5, 1.0, [(0, 1.0), (3, -0.5)])]
send = frame(2, auth(1, S1) + send_body(ts, seq=5))
send_retry = frame(2, auth(1, S1) + send_body(ts[:1], seq=5))
send2 = frame(2, auth(2, S2) + send_body([triple(2.0, 0.5, [(0, 1.0), (3, -0.5)]),
                                         triple(0.0, 1.0, [(2, 3.0), (7, 1.0)])]))
reg = frame(1, auth(3, ADMIN))
get = frame(3, auth(1, S1) + struct.pack('<QQ', 2**64 - 1, 0))
get_have = frame(3, auth(1, S1) + struct.pack('<QQ', 3, 2))
status = frame(4, auth(2, S2))
for m in (4, 5):   # server: any feature index / 8 features
    p = bytes([m])
    w(f'server{m}_session', p + reg + send + send_retry + send2 + status + get + get_have)
    w(f'server{m}_send_get', p + send + get)
w('server5_register', b'\x05' + reg + reg + frame(1, auth(4, ADMIN)))
w('server5_register_bad_token', b'\x05' + frame(1, auth(4, S1)) + frame(1, struct.pack('<q', 5)))
w('server5_bad_secret', b'\x05' + frame(2, auth(1, S2) + send_body(ts)))
w('server5_bad_seq', b'\x05' + frame(2, auth(1, S1) + send_body(ts, seq=2**63)) + send)
w('server5_v1_send', b'\x05' + frame(2, auth(1, S1) + send_body_v1(ts)))
w('server5_bad_index', b'\x05' + frame(2, auth(1, S1) + send_body([triple(1, 1, [(9, 1.0)])])))
w('server5_bad_order', b'\x05' + frame(2, auth(1, S1) + send_body([triple(1, 1, [(3, 1.0), (1, 1.0)])])))
w('server5_bad_w', b'\x05' + frame(2, auth(1, S1) + send_body([triple(1, -1, [(1, 1.0)])])))
w('server5_big_y', b'\x05' + frame(2, auth(1, S1) + send_body([triple(1e101, 1, [(1, 1.0)])])) + get)
w('server5_empty_frame', b'\x05' + struct.pack('<I', 0) + get)
w('server5_too_big', b'\x05' + struct.pack('<IB', 100000, 2) + b'x' * 20)
w('server5_unknown_type', b'\x05' + frame(9, b'abc') + get)
w('server5_torn', b'\x05' + send[:-3])
w('server4_big_index', b'\x04' + frame(2, auth(1, S1) + send_body([triple(1, 1, [(1000, 1.0)])])) + get)
w('server4_huge_index', b'\x04' + frame(2, auth(1, S1) + send_body([triple(1, 1, [(2**31 - 3, 1.0)])])) + get)
# the client reading replies (mode 3; then 0 register, 1 status, 2 get twice)
w('client_secret', b'\x03\x00' + frame(0x81, struct.pack('<H', 32) + b'0123456789abcdef0123456789abcdef'))
w('client_status', b'\x03\x01' + frame(0x85, struct.pack('<QQQQ', 5, 2, 1, 3) + param(K=(2, 0.5, 0, 3))))
d1 = disclosed(3, 2, 0, [[(0, 1.0)], [(1, 2.0), (4, -1.0)]], [0.5, -0.5], [1.0, 0.1, 0.1, 2.0])
d2 = disclosed(4, 3, 2, [[(0, 1.0), (1, 1.0)]], [0.5, -0.5, 0.25], [1, 0, 0, 0, 1, 0, 0, 0, 1.0])
w('client_get', b'\x03\x02' + frame(0x83, d1) + frame(0x83, d2))
w('client_get_unchanged', b'\x03\x02' + frame(0x83, d1) + frame(0x84, struct.pack('<Q', 3)))
w('client_error', b'\x03\x02' + frame(0xff, struct.pack('<IH', 3, 5) + b'nope!'))
w('client_bad_rows', b'\x03\x02' + frame(0x83, disclosed(3, 2, 0, [[(0, 1.0)]], [], []) + struct.pack('<I', 1000)))
# the parsers alone
w('disclosed_merge', b'\x00' + struct.pack('<H', len(d1)) + d1 + d2)
w('disclosed_bad_first', b'\x00' + struct.pack('<H', len(d1)) + d1 + disclosed(4, 3, 5, [], [0, 0, 0], [0] * 9))
w('send_body', b'\x01' + send_body(ts))
w('send_body_nan', b'\x01' + send_body([triple(float('nan'), 1, [(0, 1.0)])]))
w('auth_param', b'\x02' + auth(7, S1) + param(K=(5, 0.1, 0, 3), Kt=(2, 1.0, 0, 3), nf=8))
w('auth_param_bad', b'\x02' + auth(7, b'x' * 65) + param(alpha=2.0))
