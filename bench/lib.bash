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
