# mtl.sh - command-line tests of mtl-server, mtl-client and gen_music (loopback only, a
# server on a free port, killed on exit).
. "$(dirname "$0")/lib.bash"
S=$BIN/mtl-server C=$BIN/mtl-client G=$BIN/datasets/gen_music PR=$BIN/predict
SPID=
trap 'if [ -n "$SPID" ]; then kill -9 $SPID 2>/dev/null; fi; rm -rf "$TMP"' EXIT

# ---- gen_music: thesis 5.4 at a small size
$G --items 60 -m 30 --seed 3 "$TMP/mu"
check "gen_music: 60 items, 30 users x 5 ratings, 30 user lines" bash -c \
    "test \$(wc -l <$TMP/mu.items) -eq 60 && test \$(wc -l <$TMP/mu.train) -eq 150 &&
     test \$(wc -l <$TMP/mu.users) -eq 30"
check "items: non-negative tags on the unit sphere" awk '
    { s = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); if (a[2] < 0) exit 1; s += a[2] * a[2] }
      if (s < 1 - 1e-12 || s > 1 + 1e-12) exit 1 }' "$TMP/mu.items"
check "ratings: y = 0.25 h(x) + 0.75 theta_j'x within 5 sigma (sigma 0.01)" awk '
    FILENAME ~ /items$/ { key = ""; for (i = 2; i <= NF; i++) key = key " " $i; h[key] = $1; next }
    FILENAME ~ /users$/ { for (t = 2; t <= NF; t++) th[$1, t - 1] = $t; next }
    { split($2, q, ":"); key = ""; g = 0
      for (i = 3; i <= NF; i++) { key = key " " $i; split($i, a, ":"); g += 0.75 * th[q[2], a[1]] * a[2] }
      g += 0.25 * h[key]; d = $1 - g; if (d < 0) d = -d; if (d > 0.05) exit 1 }' \
    "$TMP/mu.items" "$TMP/mu.users" "$TMP/mu.train"
check "each user rates 5 distinct items" bash -c \
    "cut -d' ' -f2- $TMP/mu.train | sed 's/^qid:\\([0-9]*\\) /\\1|/' | sort | uniq -d | grep -c . | grep -qx 0"

# ---- usage errors
expect_fail "mtl-client without a command: usage error" 1 'no command' $C
expect_fail "mtl-client estimate without -T: usage error" 1 'needs the task' $C estimate
expect_fail "mtl-server: alpha outside [0, 1]" 1 'alpha' $S -a 1.5
expect_fail "mtl-server: sigmoid refused" 1 'indefinite' $S -t sigmoid
expect_fail "mtl-server: bad secrets file" 2 'secrets:1: expected' \
    bash -c "echo 'x' >$TMP/secrets; $S -k $TMP/secrets"

# ---- a server (same kernel for K and K~: the estimate is a kernel model predict reads)
for j in $(seq 1 30); do echo "$j s$j"; done >"$TMP/secrets"
$S -q -p 0 --port-file "$TMP/port" -k "$TMP/secrets" -j "$TMP/journal" -t rbf -g 2 \
    --task-kernel rbf --task-gamma 2 -a 0.4 -l 0.1 --features 19 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
P=$(cat "$TMP/port")
check "the server writes its port" test -n "$P"
grep -v 'qid:7 ' "$TMP/mu.train" >"$TMP/others"
grep 'qid:7 ' "$TMP/mu.train" >"$TMP/u7"
$C -p "$P" -K "$TMP/secrets" send "$TMP/others" 2>"$TMP/send.err"
check "send: 145 triples of 29 users acknowledged" grep -q '145 triples acknowledged' "$TMP/send.err"
$C -p "$P" -T 3 -k s3 status >"$TMP/status"
check "status: version 145, task 3's 5 triples" bash -c \
    "grep -qx 'version 145' $TMP/status && grep -qx 'task_triples 5' $TMP/status"
expect_fail "task 3's secret cannot ask about task 4" 2 'error 3' $C -p "$P" -T 4 -k s3 status
expect_fail "task 7 cannot send rows of task 8 with its secret" 2 'no secret for task 8' \
    $C -p "$P" -T 7 -k s7 send <(grep 'qid:8 ' "$TMP/mu.train")
# user 7 passive: its ratings stay here; then active: sent, and its R_j rebuilt locally
$C -q -p "$P" -T 7 -k s7 estimate --passive "$TMP/u7" -o "$TMP/p7.model" \
    --eval "$TMP/mu.items" -e "$TMP/p7.g"
$C -q -p "$P" -T 7 -k s7 send "$TMP/u7"
$C -q -p "$P" -T 7 -k s7 estimate --active "$TMP/u7" -o "$TMP/a7.model" \
    --eval "$TMP/mu.items" -e "$TMP/a7.g"
check "passive and active estimates of user 7 agree on all items (1e-8 relative)" \
    awk 'NR == FNR { p[FNR] = $1; m = (p[FNR] < 0 ? -p[FNR] : p[FNR]) > m ? (p[FNR] < 0 ? -p[FNR] : p[FNR]) : m; next }
         { d = $1 - p[FNR]; if (d < 0) d = -d; if (d > e) e = d }
         END { exit !(e <= 1e-8 * m) }' "$TMP/p7.g" "$TMP/a7.g"
$PR -q "$TMP/mu.items" "$TMP/a7.model" "$TMP/a7.pred"
check "predict with the estimate's model = the estimate's values (1e-12 relative)" \
    awk 'NR == FNR { g[FNR] = $1; next }
         { d = $1 - g[FNR]; if (d < 0) d = -d; s = g[FNR] < 0 ? -g[FNR] : g[FNR]
           if (d > 1e-12 * (s > 1 ? s : 1)) exit 1 }' "$TMP/a7.g" "$TMP/a7.pred"
kill -TERM $SPID
wait $SPID
st=$?
SPID=
check "SIGTERM: the server exits 0" test "$st" -eq 0
$S -q -p 0 --port-file "$TMP/port2" -k "$TMP/secrets" -j "$TMP/journal" -t rbf -g 2 \
    --task-kernel rbf --task-gamma 2 -a 0.4 -l 0.1 --features 19 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port2" ] && break; sleep 0.05; done
P=$(cat "$TMP/port2")
$C -q -p "$P" -T 7 -k s7 estimate --active "$TMP/u7" --eval "$TMP/mu.items" -e "$TMP/r7.g"
check "after a restart the journal gives the same estimate, bit for bit" cmp -s "$TMP/a7.g" "$TMP/r7.g"
expect_fail "a journal with other parameters is refused" 2 'other parameters' \
    $S -q -p 0 -j "$TMP/journal" -k "$TMP/secrets" -a 0.3
kill -TERM $SPID
wait $SPID
SPID=
# the thesis kernels (expdot and linear): all users sent, user 7's estimate as an active
# client against train -s mtl (Algorithm 4) on the same file
$S -q -p 0 --port-file "$TMP/port3" -k "$TMP/secrets" -a 0.5 -l 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port3" ] && break; sleep 0.05; done
P=$(cat "$TMP/port3")
$C -q -p "$P" -K "$TMP/secrets" send "$TMP/mu.train"
$C -q -p "$P" -T 7 -k s7 estimate --active "$TMP/u7" -o "$TMP/e7.model" \
    --eval "$TMP/mu.items" -e "$TMP/e7.g"
kill -TERM $SPID
wait $SPID
SPID=
$PR -q "$TMP/mu.items" "$TMP/e7.model" "$TMP/e7.pred"
check "predict with the two-kernel estimate model = its values (rows without qid: its task)" \
    awk 'NR == FNR { g[FNR] = $1; next }
         { d = $1 - g[FNR]; if (d < 0) d = -d; s = g[FNR] < 0 ? -g[FNR] : g[FNR]
           if (d > 1e-12 * (s > 1 ? s : 1)) exit 1 }' "$TMP/e7.g" "$TMP/e7.pred"
$BIN/train -q -s mtl -t expdot -g 1 --task-kernel linear --task-gamma 1 --alpha 0.5 \
    --lambda 0.01 "$TMP/mu.train" "$TMP/all.model"
check "train -s mtl: an mtl model of 30 tasks" bash -c \
    "grep -qx 'solver mtl' $TMP/all.model && grep -qx 'nr_task 30' $TMP/all.model"
sed 's/^[^ ]*/0 qid:7/' "$TMP/mu.items" >"$TMP/items7"
$PR -q "$TMP/items7" "$TMP/all.model" "$TMP/all7.pred"
check "train -s mtl (Algorithm 4) predicts user 7 (qid:7) as the server's active client (1e-8)" \
    awk 'NR == FNR { g[FNR] = $1; s = $1 < 0 ? -$1 : $1; if (s > m) m = s; next }
         { d = $1 - g[FNR]; if (d < 0) d = -d; if (d > e) e = d }
         END { exit !(e <= 1e-8 * m) }' "$TMP/e7.g" "$TMP/all7.pred"
expect_fail "train -s mtl without qid: input error" 2 'needs task ids' \
    $BIN/train -s mtl <(sed 's/ qid:[0-9]*//' "$TMP/mu.train") "$TMP/x.model"
expect_fail "--lambda without -s mtl: usage error" 1 'does not apply to -s l2svm' \
    $BIN/train --lambda 1 "$TMP/mu.train" "$TMP/x.model"
# issued secrets: REGISTER, then the secret survives a restart (journaled)
start_reg() {
    rm -f "$TMP/port4"
    $S -q -p 0 --port-file "$TMP/port4" --register -j "$TMP/journal4" &
    SPID=$!
    for _ in $(seq 100); do [ -s "$TMP/port4" ] && break; sleep 0.05; done
    P=$(cat "$TMP/port4")
}
start_reg
$C -p "$P" -T 5 register >"$TMP/reg"
check "register prints 'TASK SECRET' (32 hex digits)" grep -Eqx '5 [0-9a-f]{32}' "$TMP/reg"
sec=$(cut -d' ' -f2 "$TMP/reg")
expect_fail "a second REGISTER of task 5 is refused" 2 'already has a secret' $C -p "$P" -T 5 register
kill -TERM $SPID
wait $SPID
SPID=
start_reg
$C -p "$P" -T 5 -k "$sec" status >"$TMP/status5"
check "after a restart the issued secret still works" grep -qx 'task 5' "$TMP/status5"
kill -TERM $SPID
wait $SPID
SPID=
# per-task individual kernels K~_j (--task-kernels): users 7 and 12 have their own, the
# others the default linear K~; the server's active clients = train -s mtl with the file
printf '# K~_j\n7 rbf gamma=3\n12   poly gamma=0.5 coef0=1 degree=2\n' >"$TMP/tk"
start_tk() {
    rm -f "$TMP/port5"
    $S -q -p 0 --port-file "$TMP/port5" -k "$TMP/secrets" -j "$TMP/journal5" -a 0.5 -l 0.01 \
        --task-kernels "$1" &
    SPID=$!
    for _ in $(seq 100); do [ -s "$TMP/port5" ] && break; sleep 0.05; done
    P=$(cat "$TMP/port5")
}
start_tk "$TMP/tk"
$C -q -p "$P" -K "$TMP/secrets" send "$TMP/mu.train"
$C -p "$P" -T 7 -k s7 status >"$TMP/status7"
$C -p "$P" -T 3 -k s3 status >"$TMP/status3"
check "status tells task 7 its own K~_j (rbf, gamma 3) and task 3 the default (linear)" bash -c \
    "grep -qx 'task_kernel rbf 3 0 3' $TMP/status7 && grep -q '^task_kernel linear ' $TMP/status3"
for u in 7 12 3; do
    grep "qid:$u " "$TMP/mu.train" >"$TMP/tu$u"
    $C -q -p "$P" -T $u -k s$u estimate --active "$TMP/tu$u" --eval "$TMP/mu.items" \
        -e "$TMP/tk$u.g"
done
kill -TERM $SPID
wait $SPID
SPID=
$BIN/train -q -s mtl -t expdot -g 1 --task-kernel linear --task-gamma 1 --alpha 0.5 \
    --lambda 0.01 --task-kernels "$TMP/tk" "$TMP/mu.train" "$TMP/tk.model"
check "train -s mtl --task-kernels: the model stores the 2 tasks' own kernels" bash -c \
    "grep -A2 -x 'task_kernels 2' $TMP/tk.model | tail -2 | tr '\n' '|' |
     grep -qx '7 rbf gamma=3 features=all|12 poly gamma=0.5 coef0=1 degree=2 features=all|'"
for u in 7 12 3; do
    sed "s/^[^ ]*/0 qid:$u/" "$TMP/mu.items" >"$TMP/items$u"
    $PR -q "$TMP/items$u" "$TMP/tk.model" "$TMP/tk$u.pred"
    check "task kernels: train -s mtl predicts user $u as the server's active client (1e-8)" \
        awk 'NR == FNR { g[FNR] = $1; s = $1 < 0 ? -$1 : $1; if (s > m) m = s; next }
             { d = $1 - g[FNR]; if (d < 0) d = -d; if (d > e) e = d }
             END { exit !(e <= 1e-8 * m) }' "$TMP/tk$u.g" "$TMP/tk$u.pred"
done
check "user 7's own kernel matters: its estimate differs from the default kernel's" bash -c \
    "! cmp -s $TMP/e7.g $TMP/tk7.g"
printf '7 rbf gamma=3\n12 poly gamma=0.5 coef0=1 degree=3\n' >"$TMP/tk2"
expect_fail "a journal with other task kernels is refused" 2 'other parameters' \
    timeout 20 $S -q -p 0 -j "$TMP/journal5" -k "$TMP/secrets" -a 0.5 -l 0.01 \
    --task-kernels "$TMP/tk2"
expect_fail "a journal with task kernels is refused without them" 2 'other parameters' \
    timeout 20 $S -q -p 0 -j "$TMP/journal5" -k "$TMP/secrets" -a 0.5 -l 0.01
start_tk "$TMP/tk"
$C -q -p "$P" -T 7 -k s7 estimate --active "$TMP/tu7" --eval "$TMP/mu.items" -e "$TMP/tkr7.g"
kill -TERM $SPID
wait $SPID
SPID=
check "the same task kernels replay the journal to the same estimate, bit for bit" \
    cmp -s "$TMP/tk7.g" "$TMP/tkr7.g"
printf '7 rbf gamma=3\n\n9 rbf features=2\n' >"$TMP/tkbad"
expect_fail "mtl-server: a malformed task-kernel file: FILE:LINE" 2 \
    "tkbad:3: a task kernel sees all" \
    timeout 20 $S -q -p 0 --task-kernels "$TMP/tkbad"
printf '7 rbf gamma=3\n7 linear\n' >"$TMP/tkdup"
expect_fail "train -s mtl: a task twice in the task-kernel file: FILE:LINE" 2 \
    "tkdup:2: task 7 already has a kernel \(line 1\)" \
    $BIN/train -s mtl --task-kernels "$TMP/tkdup" "$TMP/mu.train" "$TMP/x.model"
expect_fail "--task-kernels without -s mtl: usage error" 1 'does not apply to -s l2svm' \
    $BIN/train --task-kernels "$TMP/tk" "$TMP/mu.train" "$TMP/x.model"
# a journal shorter than the header with task kernels (one issued secret) is refused, not
# taken for a torn header and started over
rm -f "$TMP/port6"
$S -q -p 0 --port-file "$TMP/port6" --register -j "$TMP/journal6" -a 0.5 -l 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port6" ] && break; sleep 0.05; done
P=$(cat "$TMP/port6")
sec6=$($C -p "$P" -T 5 register | cut -d' ' -f2)
kill -TERM $SPID
wait $SPID
SPID=
expect_fail "a short journal without task kernels is refused with them" 2 'other parameters' \
    timeout 20 $S -q -p 0 -j "$TMP/journal6" -a 0.5 -l 0.01 --task-kernels "$TMP/tk"
rm -f "$TMP/port6"
$S -q -p 0 --port-file "$TMP/port6" -j "$TMP/journal6" -a 0.5 -l 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port6" ] && break; sleep 0.05; done
P=$(cat "$TMP/port6")
check "... and keeps its issued secret" $C -p "$P" -T 5 -k "$sec6" status
kill -TERM $SPID
wait $SPID
SPID=
