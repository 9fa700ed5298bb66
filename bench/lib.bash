# bench/lib.bash - what the benchmark scripts share (sourced): messages, the data cache, the
# run directory. The caller sets DATA_DIR and CACHE first; $0 names the script in messages.

# Prints a message to stderr and exits with status 2 (something needed is missing).
die() {
    echo "bench/$(basename "$0"): $*" >&2
    exit 2
}

# Prints a progress line to stderr.
say() {
    echo "bench: $*" >&2
}

# Makes the cache directory and a run directory $work, removed at exit.
bench_dirs() {
    [ -d "$DATA_DIR" ] && DATA_DIR=$(cd "$DATA_DIR" && pwd)
    mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
    work=$(mktemp -d "${TMPDIR:-/tmp}/kmtk-bench-run.XXXXXX") || die "mktemp failed"
    trap 'rm -rf "$work"' EXIT
}

# Decompresses DATA_DIR/$1.gz into the cache (once; again when the .gz is newer); prints the path.
plain() {
    local gz=$DATA_DIR/$1.gz out=$CACHE/$1
    if [ ! -s "$out" ] || [ "$gz" -nt "$out" ]; then
        say "decompressing $gz"
        gunzip -c "$gz" >"$out.tmp.$$" && mv "$out.tmp.$$" "$out" || die "cannot decompress $gz"
    fi
    echo "$out"
}

# Succeeds when every label (first field) of file $1 is +1 or -1.
is_binary() {
    awk 'NF == 0 || /^#/ { next } { v = $1 + 0; if (v != 1 && v != -1) { bad = 1; exit } } END { exit bad }' "$1"
}

# Runs "$@" once under /usr/bin/time, output to $1.out/$1.err ($1 is a path prefix, shifted
# off); sets RC and ONE_SEC (wall: time's %e from 10 s up, else the shell's 1 ms clock) and
# ONE_MB (peak RSS).
time_once() {
    local pre=$1 t0 t1 t
    shift
    t0=$EPOCHREALTIME
    "$TIME" -f '%e %M' -o "$pre.time" "$@" >"$pre.out" 2>"$pre.err"
    RC=$?
    t1=$EPOCHREALTIME
    t=$(tail -n 1 "$pre.time" 2>/dev/null)
    read -r ONE_SEC ONE_MB < <(awk -v e="${t%% *}" -v k="${t##* }" -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN {
        s = (e ~ /^[0-9.]+$/ && e + 0 >= 10) ? sprintf("%.2f", e) : sprintf("%.3f", b - a)
        m = (k ~ /^[0-9]+$/) ? sprintf("%.0f", k / 1024) : "?"
        print s, m }')
}
