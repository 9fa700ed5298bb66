# lib.sh - helpers for command-line tests (sourced). BIN is the directory with the executables.
BIN=$(cd "${BIN:-.}" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DATA=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../data" && pwd)

ok()   { echo "ok - $*"; }
fail() { echo "FAIL - $*"; }
check() {  # check "description" command...  (passes when the command succeeds)
    local d=$1; shift
    if "$@"; then ok "$d"; else fail "$d"; fi
}
# expect_fail "description" STATUS PATTERN command... : command exits with STATUS and
# prints PATTERN (grep -E) on stderr.
expect_fail() {
    local d=$1 want=$2 pat=$3; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    local st=$?
    if [ "$st" -eq "$want" ] && grep -Eq -- "$pat" "$TMP/err"; then ok "$d"
    else fail "$d (status $st, stderr: $(head -c 300 "$TMP/err"))"; fi
}
readme_block() {  # readme_block FILE HEADING: the commands of the first ```sh block after the line
    # matching HEADING (an awk regular expression) in FILE, comments and blank lines dropped
    awk -v h="$2" '$0 ~ h { on = 1 } on && /^```sh/ { code = 1; next } code && /^```/ { exit }
         code' "$1" | sed 's/ *#.*//' | grep -v '^ *$'
}
run_lines() {  # run_lines FILE DIR LABEL: each line of FILE run by bash in DIR (pipefail; a
    # writer stopped by "| head", status 141, has done its part), one check "LABEL N runs: LINE",
    # stderr in DIR/err.N
    local n=0 cmd
    while read -r cmd; do
        n=$((n + 1))
        check "$3 $n runs: $cmd" bash -o pipefail -c \
            "cd $2 && { $cmd; } >/dev/null 2>$2/err.$n; st=\$?; [ \$st -eq 0 ] || [ \$st -eq 141 ]"
    done <"$1"
}
man_examples() {  # the shell lines of a man page's EXAMPLES (.nf/.fi blocks), unescaped
    awk '/^\.SH/ { ex = ($2 == "EXAMPLES") } ex && /^\.nf/ { on = 1; next }
         ex && /^\.fi/ { on = 0; next } ex && on' "$1" | sed -e 's/\\-/-/g' -e 's/\\e/\\/g'
}

# gen_unscaled SEED ROWS class2|class3|reg: unscaled, badly conditioned rows near (120, 120,
# 120, 120, 1000), labels from small deviations (2 or 3 classes, or a real target); a
# Park-Miller generator, the same numbers in any awk (unscaled.sh, kwalk.sh)
gen_unscaled() {
    awk -v seed="$1" -v n="$2" -v task="$3" '
    function u() { s = (s * 16807) % 2147483647; return s / 2147483647 }
    BEGIN {
        s = seed
        for (i = 0; i < n; i++) {
            a = u(); b = u(); c = u(); d = u(); e = u()
            if (task != "reg") {
                t = a - b + 0.5 * (c - 0.5) + 0.2 * (u() - 0.5)
                y = task == "class2" ? (t < 0 ? 1 : -1) : t < -0.2 ? 1 : t < 0.2 ? 2 : 3
            } else
                y = sprintf("%.4f", 3 + 2 * (a - b) + 4 * c + 0.3 * (u() - 0.5))
            printf "%s 1:%.2f 2:%.2f 3:%.2f 4:%.2f 5:%.1f\n", y, 120 + 8 * a, 120 + 8 * b,
                   120 + 8 * c, 120 + 8 * d, 1000 + 20 * e
        }
    }'
}
