# scale.sh - kmtk-scale: the same output as LIBSVM's svm-scale on the same data and options
# (svm-scale prints feature values with %g: ours, printed with %g, must be the same text;
# labels compared to 1e-12), svm-scale's parameter files restored, -s/-r round trips,
# --standardize moments, qid:/multi-output pass-through, gzip/stdin, atomic -o, errors, and
# issue 11's point: unscaled data make coordinate descent crawl, scaled data converge.
# REQUIRES svm-scale (Debian libsvm-tools; .ci/run installs it).
. "$(dirname "$0")/lib.bash"
S=$BIN/scale T=$BIN/train H=$DATA/heart_scale

if ! command -v svm-scale >/dev/null; then
    fail "svm-scale not found: this test requires Debian's libsvm-tools (apt-get install libsvm-tools)"
    exit 1
fi

# unscaled heart data: each feature j mapped to (x + 1.5) 10^(j mod 5) (implicit zeros stay 0)
awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); j = a[1]
       printf " %d:%.10g", j, (a[2] + 1.5) * 10^(j % 5) } print "" }' $H >"$TMP/raw"
# sparse data with negative values, a constant feature (4: always 2), a feature that never
# appears (6) and, in the test file only, a feature 9 (Park-Miller generator: the same
# bytes on every machine)
gen() {  # gen ROWS SEED [EXTRA]
    awk -v n="$1" -v seed="$2" -v extra="${3:-0}" '
        function u() { x = (x * 16807) % 2147483647; return x / 2147483647 }
        BEGIN { x = seed + 1
          for (i = 0; i < n; i++) {
            line = (u() < 0.5 ? "+1" : "-1")
            for (j = 1; j <= 8; j++) {
              if (j == 6) continue
              if (j == 4) { line = line " 4:2"; continue }
              if (u() < 0.4) continue
              line = line sprintf(" %d:%.6g", j, (u() - 0.3) * 10^(j - 3))
            }
            if (extra && u() < 0.3) line = line sprintf(" 9:%.6g", u())
            print line } }'
}
gen 200 1 >"$TMP/sp.train"
gen 100 2 1 >"$TMP/sp.test"

# same_as_peer MINE THEIRS: the same rows, labels within 1e-12, the same features, values
# equal once ours are printed as svm-scale prints them (%g)
same_as_peer() {
    awk 'NR == FNR { m[FNR] = $0; n = FNR; next }
         { na = split(m[FNR], a, " "); nb = split($0, b, " ")
           if (na != nb) { bad = 1; exit }
           d = a[1] - b[1]; s = b[1] < 0 ? -b[1] : b[1]
           if ((d < 0 ? -d : d) > 1e-12 * (s > 1 ? s : 1)) { bad = 1; exit }
           for (k = 2; k <= na; k++) {
             split(a[k], p, ":"); split(b[k], q, ":")
             if (p[1] != q[1] || sprintf("%g", p[2]) != q[2]) { bad = 1; exit } } }
         END { exit bad || FNR != n || n == 0 }' "$1" "$2"
}

for data in raw sp.train; do
    for opt in "" "-l 0 -u 1" "-l -1 -u 1 -y 0 1" "-l 0 -u 5 -y -1 1" "-l -2 -u 0.5"; do
        $S -q $opt "$TMP/$data" >"$TMP/mine" && svm-scale $opt "$TMP/$data" >"$TMP/theirs" 2>/dev/null
        check "scale $opt $data: svm-scale's output (same entries; values equal as %g)" \
            same_as_peer "$TMP/mine" "$TMP/theirs"
    done
done
# parameters saved by svm-scale, restored by both on a test file with an unseen feature (9)
svm-scale -l 0 -u 1 -y 0 1 -s "$TMP/svm.params" "$TMP/sp.train" >/dev/null 2>&1
$S -r "$TMP/svm.params" "$TMP/sp.test" >"$TMP/mine" 2>"$TMP/err"
svm-scale -r "$TMP/svm.params" "$TMP/sp.test" >"$TMP/theirs" 2>/dev/null
check "-r with svm-scale's own file (-y too): svm-scale -r's output on new data" \
    same_as_peer "$TMP/mine" "$TMP/theirs"
check "-r: the unseen feature 9 is dropped with a warning, as svm-scale does" bash -c \
    "grep -q 'without scaling parameters in .*svm.params.*dropped' $TMP/err && ! grep -q ' 9:' $TMP/mine"
svm-scale -s "$TMP/svm2.params" "$TMP/raw" >/dev/null 2>&1
$S -q -r "$TMP/svm2.params" $H >"$TMP/mine"
svm-scale -r "$TMP/svm2.params" $H >"$TMP/theirs" 2>/dev/null
check "-r svm-scale's parameters of other data: values outside [min, max] as svm-scale" \
    same_as_peer "$TMP/mine" "$TMP/theirs"

# our own parameter files: a round trip gives the same bytes
for opt in "" "-l 0 -u 1 -y -1 1" "--standardize" "--standardize --center -y 0 1"; do
    $S -q $opt -s "$TMP/p" "$TMP/sp.train" >"$TMP/a"
    $S -q -r "$TMP/p" "$TMP/sp.train" >"$TMP/b"
    check "scale $opt -s P, then -r P: the same bytes" cmp -s "$TMP/a" "$TMP/b"
done
$S -q -r <(cat "$TMP/p") "$TMP/sp.train" >"$TMP/c"
check "-r from a pipe (size unknown): the same bytes" cmp -s "$TMP/a" "$TMP/c"
check "the parameter file's first line is its format and version" \
    bash -c "head -n 1 $TMP/p | grep -qx 'kmtk-scale 1'"

# --standardize: per feature (absent = 0) sample sd 1; --center: mean 0 too, dense output
moments() {  # moments FILE N: max |mean| and max |sd - 1| over features 1..N present
    awk -v N="$2" '{ l++; for (i = 2; i <= NF; i++) { split($i, a, ":"); s[a[1]] += a[2]; q[a[1]] += a[2] * a[2] } }
        END { for (j = 1; j <= N; j++) if (j in s) { m = s[j] / l; v = (q[j] - l * m * m) / (l - 1)
                  e = m < 0 ? -m : m; if (e > em) em = e; d = sqrt(v) - 1; d = d < 0 ? -d : d
                  if (d > ed) ed = d }
              printf "%.3g %.3g\n", em, ed }' "$1"
}
$S --standardize --center "$TMP/raw" >"$TMP/std"
read -r em ed < <(moments "$TMP/std" 13)
check "--standardize --center: every feature has mean 0 ($em) and sd 1 ($ed) to 1e-9" \
    awk -v a="$em" -v b="$ed" 'BEGIN { exit !(a <= 1e-9 && b <= 1e-9) }'
$S --standardize "$TMP/sp.train" >"$TMP/std2"
read -r em ed < <(moments "$TMP/std2" 8)
check "--standardize: sd 1 ($ed)" awk -v b="$ed" 'BEGIN { exit !(b <= 1e-9) }'
nin=$(awk '{ n += NF - 1 } END { print n }' "$TMP/sp.train")
nout=$(awk '{ n += NF - 1 } END { print n }' "$TMP/std2")
check "--standardize without --center: sparse stays sparse ($nout entries <= $nin; the constant feature 4 dropped)" \
    bash -c "[ $nout -le $nin ] && ! grep -q ' 4:' $TMP/std2"

# labels, multi-output labels and qid: pass through; gzip and stdin read like files
printf '1.5 qid:3 1:10 2:-1\n-2 qid:3 1:20\n0.25 qid:7 2:4 # comment\n' >"$TMP/q.svm"
$S -q -l 0 "$TMP/q.svm" >"$TMP/q.out"
check "qid: and labels pass through" bash -c \
    "printf '1.5 qid:3 1:0.5\n-2 qid:3 1:1 2:0.2\n0.25 qid:7 2:1\n' | cmp -s - $TMP/q.out"
printf '0.3,-1.2 1:2\n1,2 1:4\n' | $S -q -l 0 - >"$TMP/mo.out"
check "multi-output labels pass through (stdin)" bash -c \
    "printf '0.3,-1.2\n1,2 1:1\n' | cmp -s - $TMP/mo.out"
expect_fail "-y with multi-output labels: refused" 1 "-y scales single labels" \
    bash -c "printf '0.3,-1.2 1:2\n1,2 1:4\n' | $S -y 0 1 -"
gzip -c "$TMP/sp.train" >"$TMP/sp.gz"
$S -q "$TMP/sp.train" >"$TMP/a"
$S -q "$TMP/sp.gz" >"$TMP/b"
$S -q - <"$TMP/sp.train" >"$TMP/c"
check "gzip and stdin give the same output" bash -c "cmp -s $TMP/a $TMP/b && cmp -s $TMP/a $TMP/c"
$S -q -o "$TMP/o.svm" "$TMP/sp.train"
check "-o FILE: the same bytes as standard output" cmp -s "$TMP/a" "$TMP/o.svm"
expect_fail "-o into a missing directory: exit 2, nothing half written" 2 "cannot" \
    $S -o "$TMP/no/such/o.svm" "$TMP/sp.train"

# errors
expect_fail "-r with -l: refused" 1 "-r takes the mode" $S -r "$TMP/p" -l 0 "$TMP/sp.train"
expect_fail "-s with -r: refused" 1 "cannot use -r and -s" $S -s "$TMP/x" -r "$TMP/p" "$TMP/sp.train"
expect_fail "--center without --standardize: refused" 1 "--center needs --standardize" $S --center $H
expect_fail "-l 1 -u 0: refused" 1 "inconsistent lower/upper" $S -l 1 -u 0 $H
printf 'kmtk-scale 1\nmode range\nx -1 1\nfeatures 1\n1 0 oops\nend\n' >"$TMP/bad.params"
expect_fail "a damaged parameter file: exit 2 with FILE:LINE:COL" 2 "bad.params:5:5: expected INDEX MIN MAX" \
    $S -r "$TMP/bad.params" $H
expect_fail "a missing parameter file: exit 2" 2 "nope.params" $S -r "$TMP/nope.params" $H
printf '1 1:x\n' >"$TMP/bad.svm"
expect_fail "bad data: exit 2 with FILE:LINE:COL" 2 "bad.svm:1:5" $S "$TMP/bad.svm"

# issue 11: on the unscaled data coordinate descent needs its active-set walk
# (doc/linear-solver.md) and many sweeps; scaled by kmtk-scale it converges in few
$T -s l1svm "$TMP/raw" "$TMP/u.model" >"$TMP/u.out" 2>&1
$S -q "$TMP/raw" >"$TMP/raw.scaled"
$T -s l1svm "$TMP/raw.scaled" "$TMP/s.model" >"$TMP/s.out" 2>&1
iu=$(awk '/^macro-iterations/ { print $3 }' "$TMP/u.out")
is=$(awk '/^macro-iterations/ { print $3 }' "$TMP/s.out")
check "scaled by kmtk-scale: converges (gap <= 1e-5) in $is macro-iterations, < 1/5 of the unscaled $iu" \
    bash -c "! grep -q warning $TMP/s.out && awk '/^gap = / { exit !(\$3 <= 1e-5) }' $TMP/s.out && [ $is -lt $((iu / 5)) ]"
$S -q --standardize "$TMP/raw" >"$TMP/raw.std"
$T -s l1svm "$TMP/raw.std" "$TMP/d.model" >"$TMP/d.out" 2>&1
check "standardized by kmtk-scale: converges too" \
    bash -c "! grep -q warning $TMP/d.out && awk '/^gap = / { exit !(\$3 <= 1e-5) }' $TMP/d.out"

# the EXAMPLES of kmtk-scale(1), as written, with kmtk-* on the PATH
MAN=$(cd "$(dirname "$0")/../../doc" && pwd)
mkdir -p "$TMP/mx/bin" "$TMP/mx/run"
for p in train predict scale; do printf '#!/bin/sh\nexec "%s" "$@"\n' "$BIN/$p" >"$TMP/mx/bin/kmtk-$p"; done
chmod +x "$TMP/mx/bin/"*
ln -s "$DATA" "$TMP/mx/run/data"
man_examples "$MAN/kmtk-scale.1" >"$TMP/mx/run/scale.sh"
check "kmtk-scale.1 has EXAMPLES" test "$(grep -c . "$TMP/mx/run/scale.sh")" -ge 4
(cd "$TMP/mx/run" && PATH="$TMP/mx/bin:$PATH" timeout 300 bash -e scale.sh) \
    >"$TMP/mx/scale.out" 2>"$TMP/mx/scale.err"
st=$?
check "every example of kmtk-scale.1 runs (status $st: $(tail -n 2 "$TMP/mx/scale.err" | tr '\n' ' '))" \
    test "$st" -eq 0

# the README's scaling and interchange block, as written, from a directory that looks like
# the top of the tree
README=$(dirname "$0")/../../README.md
R=$TMP/readme
mkdir -p "$R/data"
for p in train predict scale; do ln -sf "$BIN/$p" "$R/$p"; done
ln -sf $H "$R/data/heart_scale"
readme_block "$README" '^### Scaling and LIBLINEAR/LIBSVM models' >"$R/cmds"
check "the README's scaling block has commands" test "$(wc -l <"$R/cmds")" -ge 4
run_lines "$R/cmds" "$R" "README scaling example"
