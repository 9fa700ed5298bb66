# python.sh - runs the Python module's tests (tests/python, pytest) against this build's
# libkmtk.so and executables; one "ok - "/"FAIL - " line per pytest test (for tests/run.sh).
# Debian's /usr/bin/python3 with python3-numpy, -scipy, -sklearn, -pytest (the first python3
# on PATH may be another one without them).
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
LIB=$BIN/lib/libkmtk.so.0
HERE=$(cd "$(dirname "$0")/.." && pwd)
if ! "$PY" -c 'import numpy, scipy, sklearn, pytest' 2>"$TMP/imp"; then
    fail "python: $PY lacks numpy, scipy, sklearn or pytest (apt-get install python3-numpy python3-scipy python3-sklearn python3-pytest): $(tail -n 1 "$TMP/imp")"
    exit 1
fi
if [ ! -e "$LIB" ]; then
    fail "python: no $LIB (make builds it)"
    exit 1
fi
pre=()
if readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
    # an ASan build: python itself is not instrumented, so the sanitizer runtimes are
    # preloaded (they must come first); Python's own allocations are not leak-checked
    pre=(env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
         ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0)
    echo "python: the library is built with AddressSanitizer: runtimes preloaded into $PY"
fi
# pytest -rA: a summary line per test ("PASSED id", "FAILED id - why", "ERROR id - why")
KMTK_BIN=$BIN KMTK_LIB=$LIB PYTHONDONTWRITEBYTECODE=1 "${pre[@]}" "$PY" -m pytest -rA -q \
    -p no:cacheprovider --basetemp="$TMP/pytest" "$HERE/python" >"$TMP/log" 2>&1
st=$?
awk '/^(PASSED|XPASS) / { sub(/^[A-Z]+ /, ""); print "ok - python: " $0 }
     /^(XFAIL|SKIPPED) / { print "skipped - python: " $0 }   # not counted: reasons shown
     /^(FAILED|ERROR) / { sub(/^[A-Z]+ /, ""); print "FAIL - python: " $0 }' "$TMP/log"
if [ "$st" -ne 0 ]; then
    sed -n '/= FAILURES =\|= ERRORS =/,$p' "$TMP/log" | head -n 80
    tail -n 5 "$TMP/log"
fi
exit "$st"
