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
man_examples() {  # the shell lines of a man page's EXAMPLES (.nf/.fi blocks), unescaped
    awk '/^\.SH/ { ex = ($2 == "EXAMPLES") } ex && /^\.nf/ { on = 1; next }
         ex && /^\.fi/ { on = 0; next } ex && on' "$1" | sed -e 's/\\-/-/g' -e 's/\\e/\\/g'
}
