# bench/lib.bash - what the benchmark scripts share (sourced): messages, the data cache, the
# run directory. The caller sets DATA_DIR and CACHE first (bench_paths); $0 names the script in
# messages.

# The settings every benchmark takes from the environment (the caller sets repo first):
# DATA_DIR (default <repo>/../shared/datasets), BIN (BENCH_BIN, default the repository) and
# CACHE (BENCH_CACHE, default ${TMPDIR:-/tmp}/kmtk-bench).
bench_paths() {
    DATA_DIR=${DATA_DIR:-$repo/../shared/datasets}
    BIN=${BENCH_BIN:-$repo}
    CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/kmtk-bench}
}

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

# ---- Paired timing with CPU time (bench/runstat), the CPU line, the AVX2 code path.

# Runs "$@" once under $RUNSTAT (bench/runstat, set by the caller), output to $1.out/$1.err ($1
# is a path prefix, shifted off); sets RC, ONE_SEC (wall), ONE_CPU (user + sys) and ONE_MB (peak
# RSS), seconds to 1 ms.
run_once() {
    local pre=$1 w u s k st
    shift
    "$RUNSTAT" "$pre.time" "$@" >"$pre.out" 2>"$pre.err"
    RC=$?
    read -r w u s k st <"$pre.time" 2>/dev/null || { w=? u=? s=? k=?; }
    read -r ONE_SEC ONE_CPU ONE_MB < <(awk -v w="$w" -v u="$u" -v s="$s" -v k="$k" 'BEGIN {
        if (w !~ /^[0-9.]+$/) { print "? ? ?"; exit }
        printf "%.3f %.3f %.0f\n", w, u + s, k / 1024 }')
}

# Prints "median min max" of the numbers given as arguments ("- - -" when there are none).
med_min_max() {
    printf '%s\n' "$@" | sort -g | awk '/^[-+0-9.eE]+$/ { v[n++] = $1 }
        END { if (!n) { print "- - -"; exit }
              m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
              printf "%.6g %.6g %.6g\n", m, v[0], v[n - 1] }'
}

# Formats "median min max" (seconds) as "M (min-max)"; a single value as "M".
fmt_spread() {
    local m=$1 lo=$2 hi=$3
    [ "$m" = - ] && { echo -; return; }
    awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN {
        f = (m >= 100) ? "%.1f" : (m >= 10) ? "%.2f" : "%.3f"
        if (lo == hi) printf f "\n", m; else printf f " (" f "-" f ")\n", m, lo, hi }'
}

# Runs the commands in arrays CMD_A and CMD_B in turn, A B A B ..., $3 pairs after $4 warm-up
# pairs (not counted); output to $1.out/.err (A) and $2.out/.err (B), the last run's. A run that
# fails ends the series (RC_A/RC_B keep its status; a pair is counted only when both succeeded).
# Sets, over the counted pairs, A_WALL A_CPU A_MB B_WALL B_CPU B_MB (each "median min max") and
# R_WALL R_CPU (the ratios A/B pair by pair, "median min max"), and NPAIRS.
pair_runs() {
    local pa=$1 pb=$2 n=$3 warm=${4:-0} k aw=() ac=() am=() bw=() bc=() bm=() rw=() rc=()
    local w1 c1 m1
    RC_A=0 RC_B=0 NPAIRS=0
    for ((k = 0; k < warm + n; k++)); do
        run_once "$pa" "${CMD_A[@]}"
        RC_A=$RC w1=$ONE_SEC c1=$ONE_CPU m1=$ONE_MB
        [ "$RC_A" -eq 0 ] || break
        run_once "$pb" "${CMD_B[@]}"
        RC_B=$RC
        [ "$RC_B" -eq 0 ] || break
        ((k < warm)) && continue
        aw+=("$w1") ac+=("$c1") am+=("$m1") bw+=("$ONE_SEC") bc+=("$ONE_CPU") bm+=("$ONE_MB")
        rw+=("$(awk -v a="$w1" -v b="$ONE_SEC" 'BEGIN { if (b > 0) printf "%.6g", a / b; else print "-" }')")
        rc+=("$(awk -v a="$c1" -v b="$ONE_CPU" 'BEGIN { if (b > 0) printf "%.6g", a / b; else print "-" }')")
        NPAIRS=$((NPAIRS + 1))
    done
    A_WALL=$(med_min_max "${aw[@]}") A_CPU=$(med_min_max "${ac[@]}") A_MB=$(med_min_max "${am[@]}")
    B_WALL=$(med_min_max "${bw[@]}") B_CPU=$(med_min_max "${bc[@]}") B_MB=$(med_min_max "${bm[@]}")
    R_WALL=$(med_min_max "${rw[@]}") R_CPU=$(med_min_max "${rc[@]}")
}

# Before the runs: makes the cache directory, avx2_setup (which may move BIN), sets RUNSTAT
# ($BIN/bench/runstat) and checks that the kmtk executables "$@" (paths under $BIN, e.g. train
# bench/runstat) are there; exits with status 2 when one is missing.
bench_tools() {
    local t
    mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
    avx2_setup
    RUNSTAT=$BIN/bench/runstat
    for t in "$@"; do
        [ -x "$BIN/$t" ] || die "$BIN/$t not found: run make first (or set BENCH_BIN)"
    done
}

# Checks that the peer's commands "$@" (after the Debian package $1 that has them) are on PATH;
# exits with status 2 when one is missing.
need_peers() {
    local pkg=$1 t
    shift
    for t in "$@"; do
        command -v "$t" >/dev/null || die "$t not found: apt-get install $pkg"
    done
}

# Prints one line naming the CPU (model name, family/model), whether it has avx2 and avx512f,
# and which code path the run measures (see avx2_setup).
cpu_line() {
    local name fam mod flags a2 a5
    name=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    fam=$(sed -n 's/^cpu family[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    mod=$(sed -n 's/^model[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    flags=" $(sed -n 's/^flags[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1) "
    a2=no a5=no
    [[ $flags == *" avx2 "* ]] && a2=yes
    [[ $flags == *" avx512f "* ]] && a5=yes
    printf 'CPU: %s (family %s, model %s), %s cores; avx2 %s, avx512f %s; code path: %s.\n' \
        "${name:-unknown}" "${fam:-?}" "${mod:-?}" "$(getconf _NPROCESSORS_ONLN)" "$a2" "$a5" "${AVX2_NOTE:-$([ "$a5" = yes ] && echo "AVX-512 where the code has it" || echo "the best the CPU has")}"
}

# BENCH_AVX2=1: measure the AVX2 code path on an AVX-512 machine, for both tools. kmtk's hot loops
# carry GCC target_clones (common/simd.h: x86-64-v4, avx2, default) picked by a load-time
# resolver from CPUID, with no run-time switch; so kmtk is rebuilt once into the cache with
# XCPPFLAGS=-DKM_NO_AVX512 (simd.h's clones avx2 and default only, and kernel.c's hand-picked
# kernels no wider than AVX2), unless BENCH_BIN names such a build. OPENBLAS_CORETYPE=Haswell keeps
# OpenBLAS (kmtk, and LIBLINEAR's BLAS when it is OpenBLAS) on its AVX2 kernels, and
# GLIBC_TUNABLES masks AVX-512 from glibc's own ifuncs (memcpy, libm) in every process. Call
# after CACHE and BIN are set, before the tools are checked; sets AVX2_NOTE for cpu_line.
avx2_setup() {
    AVX2_NOTE=
    [ "${BENCH_AVX2:-0}" = 1 ] || return 0
    local key dir
    if [ -z "${BENCH_BIN:-}" ]; then
        key=$(cat "$repo"/common/*.[ch] "$repo"/*.c "$repo"/bench/*.c "$repo"/datasets/*.c "$repo/Makefile" | md5sum | cut -c1-10)
        dir=$CACHE/avx2-build-$key
        if [ ! -x "$dir/train" ] || [ ! -x "$dir/bench/runstat" ]; then
            mkdir -p "$dir" || die "cannot create $dir"
            say "BENCH_AVX2=1: building kmtk without AVX-512 clones into $dir"
            make -C "$repo" -j"$(nproc)" OUT="$dir" BUILD="$dir/obj" \
                XCPPFLAGS=-DKM_NO_AVX512 >"$dir/make.log" 2>&1 \
                || die "the AVX2 build failed: see $dir/make.log"
        fi
        BIN=$dir
    fi
    if command -v nm >/dev/null && nm "$BIN/train" 2>/dev/null | grep -q 'arch_x86_64_v4'; then
        die "BENCH_AVX2=1: $BIN/train has AVX-512 clones (build it with make XCPPFLAGS=-DKM_NO_AVX512, or unset BENCH_BIN)"
    fi
    export OPENBLAS_CORETYPE=Haswell
    export GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}
    AVX2_NOTE="AVX2 forced (BENCH_AVX2=1: kmtk built without AVX-512 clones, OPENBLAS_CORETYPE=Haswell, GLIBC_TUNABLES masks AVX-512)"
}
