# mtl.sh - command-line tests of mtl-server, mtl-client and gen_music (loopback only, a
# server on a free port, killed on exit).
. "$(dirname "$0")/lib.bash"
S=$BIN/mtl-server C=$BIN/mtl-client G=$BIN/datasets/gen_music PR=$BIN/predict
SPID=
SX=-0123456789abcdef   # secrets have 16 characters at least
echo admin-token-0123456789 >"$TMP/admin"
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
expect_fail "mtl-server: alpha outside [0, 1]" 1 'alpha' $S --alpha 1.5
expect_fail "mtl-server: sigmoid refused" 1 'indefinite' $S -t sigmoid -g 1
expect_fail "mtl-server: bad secrets file" 2 'secrets:1: expected' \
    bash -c "echo 'x' >$TMP/secrets; $S --secrets $TMP/secrets"
expect_fail "mtl-server: -g with the linear kernel (the default) is refused" 1 \
    'the linear kernel K \(-t\) has no gamma' $S -g 2
expect_fail "mtl-server: -d with rbf is refused" 1 'rbf kernel K \(-t\) has no degree' \
    $S -t rbf -g 1 -d 2
expect_fail "mtl-server: --task-gamma with a linear K~ is refused" 1 'has no gamma' \
    $S --task-gamma 2
expect_fail "mtl-server: -t rbf without -g or --features: train's 1/features unknown" 1 \
    'give -g GAMMA.*--features N' $S -t rbf
expect_fail "mtl-server: an argument that is not an option" 1 'takes options only' $S 7353
expect_fail "mtl-client estimate without FILE and without --passive: refused, names --passive" \
    1 'estimate: no FILE of task 3.*not be personalised.*--passive' \
    env KMTK_SECRET=s3$SX $C -T 3 estimate --model "$TMP/x.model"
expect_fail "mtl-client estimate --active without FILE: refused" 1 '--active needs FILE' \
    env KMTK_SECRET=s3$SX $C -T 3 estimate --active --model "$TMP/x.model"
expect_fail "mtl-client: --secret-file and --secret together: usage error" 1 'give the secret once' \
    bash -c "echo s3$SX >$TMP/s3; $C -T 3 --secret-file $TMP/s3 --secret s3$SX status"
expect_fail "mtl-client: a secret file of another task is refused" 2 \
    'the secret of task 4, not of task 3' \
    bash -c "echo '4 s4$SX' >$TMP/s4; $C -T 3 --secret-file $TMP/s4 status"
expect_fail "mtl-client: a secret file of three words is refused" 2 \
    "s3bad:1: expected the secret, or 'TASK SECRET'" \
    bash -c "printf 'two words here\n' >$TMP/s3bad; $C -T 3 --secret-file $TMP/s3bad status"
expect_fail "mtl-client: a secret of 65 characters in a file is refused" 2 \
    's3long:1: a secret has 1 to 64' \
    bash -c "printf '3 %065d\n' 0 >$TMP/s3long; $C -T 3 --secret-file $TMP/s3long status"
expect_fail "mtl-client: an empty secret file is refused" 2 'empty' \
    bash -c ": >$TMP/s3empty; $C -T 3 --secret-file $TMP/s3empty status"
expect_fail "mtl-client: a malformed KMTK_SECRET is refused" 1 'KMTK_SECRET: a secret' \
    env KMTK_SECRET='a b' $C -T 3 status

# ---- a server (same kernel for K and K~: the estimate is a kernel model predict reads)
for j in $(seq 1 30); do echo "$j s$j$SX"; done >"$TMP/secrets"
$S -q --port 0 --port-file "$TMP/port" --secrets "$TMP/secrets" --journal "$TMP/journal" \
    -t rbf -g 2 --task-kernel rbf --task-gamma 2 --alpha 0.4 --lambda 0.1 --features 19 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
P=$(cat "$TMP/port")
check "the server writes its port" test -n "$P"
grep -v 'qid:7 ' "$TMP/mu.train" >"$TMP/others"
grep 'qid:7 ' "$TMP/mu.train" >"$TMP/u7"
$C --port "$P" --secrets "$TMP/secrets" send "$TMP/others" 2>"$TMP/send.err"
check "send: 145 triples of 29 users acknowledged" grep -q '145 triples acknowledged' "$TMP/send.err"
KMTK_SECRET=s3$SX $C --port "$P" -T 3 status >"$TMP/status"
check "status: version 145, task 3's 5 triples" bash -c \
    "grep -qx 'version 145' $TMP/status && grep -qx 'task_triples 5' $TMP/status"
expect_fail "task 3's secret cannot ask about task 4" 2 'error 3' \
    env KMTK_SECRET=s3$SX $C --port "$P" -T 4 status
echo s7$SX >"$TMP/s7"
expect_fail "task 7 cannot send rows of task 8 with its secret" 2 'no secret for task 8' \
    $C --port "$P" -T 7 --secret-file "$TMP/s7" send <(grep 'qid:8 ' "$TMP/mu.train")
# the secret from a file ('SECRET' or 'TASK SECRET'), the environment or argv: same answer
echo "3 s3$SX" >"$TMP/s3task"
$C --port "$P" -T 3 --secret-file "$TMP/s3task" status >"$TMP/status.file"
$C --port "$P" -T 3 --secret s3$SX status >"$TMP/status.argv" 2>"$TMP/status.argv.err"
check "the secret from a 'TASK SECRET' file, KMTK_SECRET or --secret: the same status" bash -c \
    "cmp -s $TMP/status $TMP/status.file && cmp -s $TMP/status $TMP/status.argv"
check "--secret on the command line: a warning that ps shows it" \
    grep -q 'warning: a secret on the command line is visible to other users (ps)' \
    "$TMP/status.argv.err"
$C -p "$P" -T 3 -k s3$SX status >"$TMP/status.old" 2>"$TMP/status.old.err"
check "old spellings -p and -k: the same status" cmp -s "$TMP/status" "$TMP/status.old"
check "old spellings -p and -k: deprecation warnings naming --port and --secret" bash -c \
    "grep -q 'warning: -p is deprecated, use --port (-p will be removed in the next release)' $TMP/status.old.err &&
     grep -q 'warning: -k is deprecated, use --secret' $TMP/status.old.err"
# user 7 passive: its ratings stay here; then active: sent, and its R_j rebuilt locally
export KMTK_SECRET=s7$SX
$C -q --port "$P" -T 7 estimate --passive "$TMP/u7" --model "$TMP/p7.model" \
    --eval "$TMP/mu.items" --eval-out "$TMP/p7.g" >"$TMP/p7.out"
check "estimate with private data: nothing on stdout" test ! -s "$TMP/p7.out"
$C -q --port "$P" -T 7 estimate "$TMP/u7" --eval "$TMP/mu.items" --eval-out "$TMP/d7.g"
check "estimate FILE without a mode is passive: the same values" cmp -s "$TMP/p7.g" "$TMP/d7.g"
$C -q --port "$P" -T 7 estimate --passive --eval "$TMP/mu.items" --eval-out "$TMP/c7.g" \
    >"$TMP/c7.out"
check "estimate --passive without FILE: stdout says it is not personalised" \
    grep -q 'task 7: no own examples given (--passive without FILE): a non-personalised estimate' \
    "$TMP/c7.out"
check "... and its values differ from the personalised estimate" bash -c \
    "test \$(wc -l <$TMP/c7.g) -eq 60 && ! cmp -s $TMP/c7.g $TMP/p7.g"
$C -q --port "$P" -T 7 estimate --passive --eval "$TMP/mu.items" --eval-out - \
    >"$TMP/c7.stdout" 2>"$TMP/c7.stderr"
check "... with --eval-out -: the values alone on stdout, the note on stderr" bash -c \
    "cmp -s $TMP/c7.g $TMP/c7.stdout && grep -q 'non-personalised' $TMP/c7.stderr"
$C -q --port "$P" -T 7 send "$TMP/u7"
$C -q --port "$P" -T 7 estimate --active "$TMP/u7" --model "$TMP/a7.model" \
    --eval "$TMP/mu.items" --eval-out "$TMP/a7.g"
$C -q -p "$P" -T 7 -k s7$SX estimate --active "$TMP/u7" -o "$TMP/o7.model" \
    --eval "$TMP/mu.items" -e "$TMP/o7.g" 2>"$TMP/o7.err"
check "old spellings -o and -e: the same model and values, bit for bit" bash -c \
    "cmp -s $TMP/a7.model $TMP/o7.model && cmp -s $TMP/a7.g $TMP/o7.g"
check "old spellings -o and -e: deprecation warnings naming --model and --eval-out" bash -c \
    "grep -q -- '-o is deprecated, use --model' $TMP/o7.err &&
     grep -q -- '-e is deprecated, use --eval-out' $TMP/o7.err"
unset KMTK_SECRET
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
# the restart with the old spellings: the same parameters (the journal is accepted)
$S -q -p 0 --port-file "$TMP/port2" -k "$TMP/secrets" -j "$TMP/journal" -t rbf -g 2 \
    --task-kernel rbf --task-gamma 2 -a 0.4 -l 0.1 --features 19 2>"$TMP/old.err" &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port2" ] && break; sleep 0.05; done
P=$(cat "$TMP/port2")
$C -q --port "$P" -T 7 --secret-file "$TMP/s7" estimate --active "$TMP/u7" \
    --eval "$TMP/mu.items" --eval-out "$TMP/r7.g"
check "a restart with the old spellings replays the journal to the same estimate, bit for bit" \
    cmp -s "$TMP/a7.g" "$TMP/r7.g"
check "the old spellings -p -k -a -l: one deprecation warning each" bash -c \
    "for o in '-p.*--port' '-k.*--secrets' '-a.*--alpha' '-l.*--lambda'; do
         test \$(grep -c -- \"warning: \$o\" $TMP/old.err) -eq 1 || exit 1; done"
expect_fail "a second server on the same journal is refused: the journal is locked" 2 \
    'journal: locked by another process.*refusing to start' \
    $S -q --port 0 --journal "$TMP/journal" --secrets "$TMP/secrets" -t rbf -g 2 \
    --task-kernel rbf --task-gamma 2 --alpha 0.4 --lambda 0.1 --features 19
check "... and the first one still answers" env KMTK_SECRET=s3$SX $C --port "$P" -T 3 status
kill -TERM $SPID
wait $SPID
SPID=
expect_fail "a journal with other parameters is refused" 2 'other parameters' \
    $S -q --port 0 --journal "$TMP/journal" --secrets "$TMP/secrets" -t rbf -g 2 \
    --task-kernel rbf --task-gamma 2 --alpha 0.3 --lambda 0.1 --features 19
expect_fail "the old defaults (-t expdot -g 1) are gone: that journal is refused without them" \
    2 'other parameters' \
    $S -q --port 0 --journal "$TMP/journal" --secrets "$TMP/secrets" --alpha 0.4 --lambda 0.1
# the thesis kernels (expdot and linear): all users sent, user 7's estimate as an active
# client against train -s mtl (Algorithm 4) on the same file
$S -q --port 0 --port-file "$TMP/port3" --secrets "$TMP/secrets" -t expdot -g 1 \
    --alpha 0.5 --lambda 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port3" ] && break; sleep 0.05; done
P=$(cat "$TMP/port3")
$C -q --port "$P" --secrets "$TMP/secrets" send "$TMP/mu.train"
$C -q --port "$P" -T 7 --secret-file "$TMP/s7" estimate --active "$TMP/u7" \
    --model "$TMP/e7.model" --eval "$TMP/mu.items" --eval-out "$TMP/e7.g"
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
    $S -q --port 0 --port-file "$TMP/port4" --register --admin-token-file "$TMP/admin" --journal "$TMP/journal4" &
    SPID=$!
    for _ in $(seq 100); do [ -s "$TMP/port4" ] && break; sleep 0.05; done
    P=$(cat "$TMP/port4")
}
start_reg
$C --port "$P" --admin-token-file "$TMP/admin" -T 5 register >"$TMP/reg"
check "register prints 'TASK SECRET' (32 hex digits)" grep -Eqx '5 [0-9a-f]{32}' "$TMP/reg"
sec=$(cut -d' ' -f2 "$TMP/reg")
expect_fail "a second REGISTER of task 5 is refused" 2 'already has a secret' \
    $C --port "$P" --admin-token-file "$TMP/admin" -T 5 register
kill -TERM $SPID
wait $SPID
SPID=
start_reg
$C --port "$P" -T 5 --secret-file "$TMP/reg" status >"$TMP/status5"
check "after a restart the issued secret still works (register's output as --secret-file)" \
    grep -qx 'task 5' "$TMP/status5"
KMTK_SECRET=$sec $C --port "$P" -T 5 status >"$TMP/status5e"
check "... and from KMTK_SECRET" cmp -s "$TMP/status5" "$TMP/status5e"
kill -TERM $SPID
wait $SPID
SPID=
# per-task individual kernels K~_j (--task-kernels): users 7 and 12 have their own, the
# others the default linear K~; the server's active clients = train -s mtl with the file
printf '# K~_j\n7 rbf gamma=3\n12   poly gamma=0.5 coef0=1 degree=2\n' >"$TMP/tk"
start_tk() {
    rm -f "$TMP/port5"
    $S -q --port 0 --port-file "$TMP/port5" --secrets "$TMP/secrets" --journal "$TMP/journal5" \
        -t expdot -g 1 --alpha 0.5 --lambda 0.01 --task-kernels "$1" &
    SPID=$!
    for _ in $(seq 100); do [ -s "$TMP/port5" ] && break; sleep 0.05; done
    P=$(cat "$TMP/port5")
}
start_tk "$TMP/tk"
$C -q --port "$P" --secrets "$TMP/secrets" send "$TMP/mu.train"
KMTK_SECRET=s7$SX $C --port "$P" -T 7 status >"$TMP/status7"
KMTK_SECRET=s3$SX $C --port "$P" -T 3 status >"$TMP/status3"
check "status tells task 7 its own K~_j (rbf, gamma 3) and task 3 the default (linear)" bash -c \
    "grep -qx 'task_kernel rbf 3 0 3' $TMP/status7 && grep -q '^task_kernel linear ' $TMP/status3"
for u in 7 12 3; do
    grep "qid:$u " "$TMP/mu.train" >"$TMP/tu$u"
    KMTK_SECRET=s$u$SX $C -q --port "$P" -T $u estimate --active "$TMP/tu$u" \
        --eval "$TMP/mu.items" --eval-out "$TMP/tk$u.g"
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
    timeout 20 $S -q --port 0 --journal "$TMP/journal5" --secrets "$TMP/secrets" -t expdot \
    -g 1 --alpha 0.5 --lambda 0.01 --task-kernels "$TMP/tk2"
expect_fail "a journal with task kernels is refused without them" 2 'other parameters' \
    timeout 20 $S -q --port 0 --journal "$TMP/journal5" --secrets "$TMP/secrets" -t expdot \
    -g 1 --alpha 0.5 --lambda 0.01
start_tk "$TMP/tk"
KMTK_SECRET=s7$SX $C -q --port "$P" -T 7 estimate --active "$TMP/tu7" --eval "$TMP/mu.items" \
    --eval-out "$TMP/tkr7.g"
kill -TERM $SPID
wait $SPID
SPID=
check "the same task kernels replay the journal to the same estimate, bit for bit" \
    cmp -s "$TMP/tk7.g" "$TMP/tkr7.g"
printf '7 rbf gamma=3\n\n9 rbf features=2\n' >"$TMP/tkbad"
expect_fail "mtl-server: a malformed task-kernel file: FILE:LINE" 2 \
    "tkbad:3: a task kernel sees all" \
    timeout 20 $S -q --port 0 --task-kernels "$TMP/tkbad"
printf '7 rbf gamma=3\n7 linear\n' >"$TMP/tkdup"
expect_fail "train -s mtl: a task twice in the task-kernel file: FILE:LINE" 2 \
    "tkdup:2: task 7 already has a kernel \(line 1\)" \
    $BIN/train -s mtl --task-kernels "$TMP/tkdup" "$TMP/mu.train" "$TMP/x.model"
expect_fail "--task-kernels without -s mtl: usage error" 1 'does not apply to -s l2svm' \
    $BIN/train --task-kernels "$TMP/tk" "$TMP/mu.train" "$TMP/x.model"
# a journal shorter than the header with task kernels (one issued secret) is refused, not
# taken for a torn header and started over
rm -f "$TMP/port6"
$S -q --port 0 --port-file "$TMP/port6" --register --admin-token-file "$TMP/admin" --journal "$TMP/journal6" --alpha 0.5 \
    --lambda 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port6" ] && break; sleep 0.05; done
P=$(cat "$TMP/port6")
sec6=$($C --port "$P" --admin-token-file "$TMP/admin" -T 5 register | cut -d' ' -f2)
kill -TERM $SPID
wait $SPID
SPID=
expect_fail "a short journal without task kernels is refused with them" 2 'other parameters' \
    timeout 20 $S -q --port 0 --journal "$TMP/journal6" --alpha 0.5 --lambda 0.01 \
    --task-kernels "$TMP/tk"
rm -f "$TMP/port6"
$S -q --port 0 --port-file "$TMP/port6" --journal "$TMP/journal6" --alpha 0.5 --lambda 0.01 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port6" ] && break; sleep 0.05; done
P=$(cat "$TMP/port6")
check "... and keeps its issued secret" env KMTK_SECRET="$sec6" $C --port "$P" -T 5 status
kill -TERM $SPID
wait $SPID
SPID=

# ---- the same defaults as train -s mtl (km_mtl_param_default: linear K and K~, alpha 0.5,
# lambda 1): the server's active client of user 7 = train -s mtl without options (1e-8)
rm -f "$TMP/port7"
$S -q --port 0 --port-file "$TMP/port7" --secrets "$TMP/secrets" &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port7" ] && break; sleep 0.05; done
P=$(cat "$TMP/port7")
$C -q --port "$P" --secrets "$TMP/secrets" send "$TMP/mu.train"
KMTK_SECRET=s7$SX $C --port "$P" -T 7 status >"$TMP/status.def"
KMTK_SECRET=s7$SX $C -q --port "$P" -T 7 estimate --active "$TMP/u7" --eval "$TMP/mu.items" \
    --eval-out "$TMP/def7.g"
kill -TERM $SPID
wait $SPID
SPID=
check "mtl-server's defaults: linear K and K~, alpha 0.5, lambda 1" bash -c \
    "grep -qx 'alpha 0.5' $TMP/status.def && grep -qx 'lambda 1' $TMP/status.def &&
     grep -q '^kernel linear ' $TMP/status.def && grep -q '^task_kernel linear ' $TMP/status.def"
$BIN/train -q -s mtl "$TMP/mu.train" "$TMP/def.model"
$PR -q "$TMP/items7" "$TMP/def.model" "$TMP/def7.pred"
check "mtl-server and train -s mtl with their defaults: the same estimate of user 7 (1e-8)" \
    awk 'NR == FNR { g[FNR] = $1; s = $1 < 0 ? -$1 : $1; if (s > m) m = s; next }
         { d = $1 - g[FNR]; if (d < 0) d = -d; if (d > e) e = d }
         END { exit !(FNR == 60 && e <= 1e-8 * m) }' "$TMP/def7.g" "$TMP/def7.pred"
# rbf without -g: gamma 1/N with --features N, as train's 1/features (19 tags here)
rm -f "$TMP/port8"
$S -q --port 0 --port-file "$TMP/port8" --secrets "$TMP/secrets" -t rbf --features 19 &
SPID=$!
for _ in $(seq 100); do [ -s "$TMP/port8" ] && break; sleep 0.05; done
P=$(cat "$TMP/port8")
KMTK_SECRET=s7$SX $C --port "$P" -T 7 status >"$TMP/status.g"
kill -TERM $SPID
wait $SPID
SPID=
check "-t rbf --features 19 without -g: gamma 1/19 (train's 1/features)" \
    grep -qx "kernel rbf $(awk 'BEGIN { printf "%.17g", 1 / 19 }') 0 3" "$TMP/status.g"

# ---- the EXAMPLES of both man pages, as written, with kmtk-* on the PATH; the server on a
# free port (the only change: the wrappers add --port), in a directory of their own
MAN=$(cd "$(dirname "$0")/../../doc" && pwd)
mkdir -p "$TMP/xbin" "$TMP/ex"
cat >"$TMP/xbin/kmtk-mtl-server" <<EOS
#!/bin/bash
rm -f "$TMP/ex.port"
exec "$S" --port 0 --port-file "$TMP/ex.port" "\$@"
EOS
cat >"$TMP/xbin/kmtk-mtl-client" <<EOS
#!/bin/bash
for _ in \$(seq 200); do   # the newest server listening
    p=\$(cat "$TMP/ex.port" 2>/dev/null) && [ -n "\$p" ] &&
        (exec 3<>/dev/tcp/127.0.0.1/\$p) 2>/dev/null && exec "$C" --port "\$p" "\$@"
    sleep 0.05
done
echo "kmtk-mtl-client (test): no server" >&2; exit 9
EOS
printf '#!/bin/sh\nexec "%s" "$@"\n' "$PR" >"$TMP/xbin/kmtk-predict"
chmod +x "$TMP/xbin/"*
ln -s "$BIN/datasets" "$TMP/ex/datasets"
for page in mtl-server mtl-client; do
    man_examples "$MAN/kmtk-$page.1" >"$TMP/ex/$page.sh"
    check "kmtk-$page.1 has EXAMPLES" test "$(grep -c . "$TMP/ex/$page.sh")" -ge 8
    (cd "$TMP/ex" && PATH="$TMP/xbin:$PATH" timeout 120 bash -e -o pipefail -c \
        "trap 'st=\$?; kill \$(jobs -p) 2>/dev/null || :; exit \$st' EXIT; . ./$page.sh") \
        >"$TMP/ex/$page.out" 2>"$TMP/ex/$page.err"
    st=$?
    check "every example of kmtk-$page.1 runs (status $st: $(tail -n 2 "$TMP/ex/$page.err" | tr '\n' ' '))" \
        test "$st" -eq 0
done
check "server examples: the replayed server has the 150 triples; task 5's 5 sent" bash -c \
    "grep -qx 'version 150' $TMP/ex/mtl-server.out && grep -qx 'task_triples 5' $TMP/ex/mtl-server.out"
check "server examples: no deprecation warning" bash -c "! grep -q deprecated $TMP/ex/mtl-server.err"
check "client examples: the non-personalised estimate says so on stdout" \
    grep -q 'non-personalised' "$TMP/ex/mtl-client.out"
check "client examples: passive (predict with its model) = active (1e-8)" \
    awk 'NR == FNR { g[FNR] = $1; s = $1 < 0 ? -$1 : $1; if (s > m) m = s; next }
         { d = $1 - g[FNR]; if (d < 0) d = -d; if (d > e) e = d }
         END { exit !(FNR == 60 && e <= 1e-8 * m) }' "$TMP/ex/active7.scores" \
    "$TMP/ex/passive7.scores"

# cross-validation comes from the method table: -s mtl takes -v (folds of rows, tasks kept)
$BIN/train -s mtl -v 3 "$TMP/mu.train" >"$TMP/mtlcv.out" 2>&1
check "train -s mtl -v 3: a cross-validated MSE" grep -Eq '^Cross Validation Mean squared error = [0-9.e+-]+$' "$TMP/mtlcv.out"

# ---- issue 13: hostile input (the hostile clients are in tests/unit/test_mtlserver.c)
printf '1 qid:1 1:1\n1 qid:1 1:100\n1 qid:2 1:100\n' >"$TMP/poison.svm"
expect_fail "item 2: train -s mtl -t expdot -g 1 on x = {1:100}: refused, no NaN model" 2 \
    'row 2: kernel value K\(x, x\) = inf \(expdot kernel' \
    $BIN/train -s mtl -t expdot -g 1 "$TMP/poison.svm" "$TMP/poison.model"
check "... and no model written" test ! -e "$TMP/poison.model"
printf '1 qid:1\n1 qid:1 1:1\n-1 qid:2 2:1\n' >"$TMP/empty1.svm"
check "item 9: train -s mtl with a first row without features" \
    $BIN/train -q -s mtl "$TMP/empty1.svm" "$TMP/empty1.model"
printf '1 %s\n' 0123456789abcde >"$TMP/short"
expect_fail "item 8: a secret of 15 characters is refused" 2 'short:1: task 1: a secret has at least 16' \
    $S -q --port 0 --secrets "$TMP/short"
printf '1 0123456789abcdef\n' >"$TMP/sixteen"
check "... 16 characters are accepted (the server listens)" bash -c \
    "$S -q --port 0 --port-file $TMP/p16 --secrets $TMP/sixteen & p=\$!
     for _ in \$(seq 200); do [ -s $TMP/p16 ] && break; sleep 0.05; done
     kill -9 \$p; test -s $TMP/p16"
printf '99999999999999999999 0123456789abcdef\n' >"$TMP/bigid"
expect_fail "item 11: a task id beyond 64 bits in a secrets file is refused (server)" 2 \
    'bigid:1: task id out of the 64-bit range' $S -q --port 0 --secrets "$TMP/bigid"
expect_fail "... and in the client's --secrets" 2 'bigid:1: task id out of the 64-bit range' \
    $C --secrets "$TMP/bigid" send "$TMP/u7"
printf '1 0123456789abcdef\0rest\n' >"$TMP/nul"
expect_fail "item 11: a NUL byte in a secrets line is refused (server)" 2 'nul:1: a NUL byte' \
    $S -q --port 0 --secrets "$TMP/nul"
expect_fail "... in the client's --secrets" 2 'nul:1: a NUL byte' \
    $C --secrets "$TMP/nul" send "$TMP/u7"
expect_fail "... in a --secret-file" 2 'nul:1: a NUL byte' $C -T 1 --secret-file "$TMP/nul" status
expect_fail "item 8: --register without an admin token: usage error" 1 \
    'register needs --admin-token-file' $S -q --port 0 --register
echo short-token >"$TMP/shorttok"
expect_fail "item 8: an admin token of 11 characters is refused" 2 'at least 16' \
    $S -q --port 0 --register --admin-token-file "$TMP/shorttok"
expect_fail "item 8: mtl-client register without the token: usage error" 1 \
    "register needs the server's admin token" $C -T 5 register

# ---- send outlives its server: killed (-9) in the middle of a send and started again on
# the same port and journal, the client reconnects and sends what was not acknowledged
# again; the server applies every triple exactly once (resent ones by sequence number)
awk 'BEGIN { for (i = 0; i < 3000; i++)
             printf "%d qid:%d %d:1 %d:0.5\n", i % 3 - 1, 1 + i % 30, 1 + i % 7, 8 + i % 5 }' \
    >"$TMP/many"
start_rs() {
    $S -q --port "$1" --port-file "$TMP/port9" --secrets "$TMP/secrets" --journal "$TMP/journal9" \
        --features 19 &
    SPID=$!
    for _ in $(seq 200); do [ -s "$TMP/port9" ] && break; sleep 0.05; done
}
rm -f "$TMP/port9"
start_rs 0
P9=$(cat "$TMP/port9")
$C --port "$P9" --secrets "$TMP/secrets" --batch 1 --retry 30 send "$TMP/many" 2>"$TMP/rs.err" &
CPID=$!
for _ in $(seq 400); do   # some requests acknowledged (journaled), the send not finished
    [ "$(stat -c %s "$TMP/journal9" 2>/dev/null || echo 0)" -gt 20000 ] && break
    sleep 0.01
done
kill -9 $SPID
wait $SPID 2>/dev/null
sleep 0.3   # the client finds the server gone and waits to reconnect
rm -f "$TMP/port9"
start_rs "$P9"
wait $CPID
cst=$?
check "send across a server killed with -9 and restarted: exit 0 (status $cst)" test $cst -eq 0
check "... the client said it reconnected" grep -q 'reconnecting in' "$TMP/rs.err"
check "... 3000 triples acknowledged" grep -q '3000 triples acknowledged' "$TMP/rs.err"
KMTK_SECRET=s1$SX $C --port "$P9" -T 1 status >"$TMP/rs.status"
check "... the server holds each of the 3000 triples once (version 3000, task 1: 100)" bash -c \
    "grep -qx 'version 3000' $TMP/rs.status && grep -qx 'task_triples 100' $TMP/rs.status"
kill -TERM $SPID
wait $SPID
SPID=
expect_fail "send --retry 0 to a port where nothing listens: fails at once" 2 \
    "cannot connect" $C --port "$P9" --secrets "$TMP/secrets" --retry 0 send "$TMP/many"
expect_fail "--retry -1: usage error" 1 "--retry: seconds >= 0" \
    $C --retry -1 --secrets "$TMP/secrets" send "$TMP/many"
