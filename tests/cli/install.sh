# install.sh - make install into a DESTDIR: programs, libkmtk.so with its soname links,
# kmtk.h, kmtk.pc, man pages and docs; doc/example.c compiled against the installed tree
# through pkg-config (relocated: --define-prefix) and run; make uninstall leaves no file.
. "$(dirname "$0")/lib.bash"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
D=$TMP/dest PREFIX=/opt/kmtk
# the build of BIN (OUT=BIN; its objects where make puts them for that OUT)
if [ "$BIN" = "$TOP" ]; then mk=(make -C "$TOP" -s); else
    mk=(make -C "$TOP" -s OUT="$BIN" BUILD="$BIN"); fi
sanitized=0
readelf -d "$BIN/lib/libkmtk.so.0" 2>/dev/null | grep -q 'NEEDED.*libasan' && sanitized=1

check "make install DESTDIR=... PREFIX=$PREFIX succeeds" "${mk[@]}" install DESTDIR="$D" PREFIX=$PREFIX
I=$D$PREFIX
for p in train predict rls2-path mtl-server mtl-client; do
    check "installed: bin/kmtk-$p and its man page" test -x "$I/bin/kmtk-$p" -a -f "$I/share/man/man1/kmtk-$p.1"
done
check "installed: libkmtk.so.0.x.y, libkmtk.so.0 -> it, libkmtk.so -> libkmtk.so.0" \
    bash -c "test -f $I/lib/libkmtk.so.0.*.* && test \"\$(readlink $I/lib/libkmtk.so.0)\" = \"\$(basename $I/lib/libkmtk.so.0.*.*)\" && test \"\$(readlink $I/lib/libkmtk.so)\" = libkmtk.so.0"
check "the library's soname is libkmtk.so.0" bash -c "readelf -d $I/lib/libkmtk.so.0 | grep -q 'SONAME.*\[libkmtk.so.0\]'"
# exactly the functions kmtk.h declares are exported
sed -n 's/^[a-zA-Z].*[ *]\(km_[a-z0-9_]*\)(.*/\1/p' "$I/include/kmtk.h" | sort >"$TMP/api"
nm -D --defined-only "$I/lib/libkmtk.so.0" | awk '{print $3}' | grep -v '^_' | sort >"$TMP/exported"
check "the library exports exactly the $(wc -l <"$TMP/api") functions of kmtk.h (nm -D)" \
    cmp -s "$TMP/api" "$TMP/exported"
check "installed: include/kmtk.h" cmp -s "$TOP/common/kmtk.h" "$I/include/kmtk.h"
check "installed: lib/pkgconfig/kmtk.pc with prefix=$PREFIX" grep -qx "prefix=$PREFIX" "$I/lib/pkgconfig/kmtk.pc"
# every doc/*.md a man page names is installed under share/doc/kmtk
missing=0
for f in $(grep -oh 'doc/[a-z0-9-]*\.md' "$TOP"/doc/kmtk-*.1 | sort -u); do
    [ -f "$I/share/doc/kmtk/${f#doc/}" ] || { missing=1; echo "# not installed: $f"; }
done
check "installed: the docs the man pages cite (share/doc/kmtk)" test $missing -eq 0

# doc/example.c against the installed tree only (the pc file relocated to DESTDIR)
export PKG_CONFIG_PATH=$I/lib/pkgconfig
flags=$(pkg-config --define-prefix --cflags --libs kmtk)
check "pkg-config --define-prefix --cflags --libs kmtk points into DESTDIR ($flags)" \
    bash -c "[[ '$flags' == *-I$I/include* && '$flags' == *-L$I/lib* && '$flags' == *-lkmtk* ]]"
san=()
[ $sanitized -eq 1 ] && san=(-fsanitize=address,undefined)
check "doc/example.c compiles against the installed kmtk.h and libkmtk.so" \
    cc -std=c11 -Wall -Werror "${san[@]}" "$TOP/doc/example.c" $flags -o "$TMP/example"
check "the example links the installed shared library" \
    bash -c "LD_LIBRARY_PATH=$I/lib ldd $TMP/example | grep -q '$I/lib/libkmtk.so.0'"
LD_LIBRARY_PATH=$I/lib "$TMP/example" "$DATA/heart_scale" "$TMP/ex.model" >"$TMP/ex.out" 2>&1
check "the example runs: objective, gap, training accuracy ($(cat "$TMP/ex.out"))" \
    grep -Eq '^objective [0-9.]+, gap [0-9.e-]+, training accuracy [0-9.]+%$' "$TMP/ex.out"
# its model is the one kmtk-train writes for the same options (same library, same bits)
"$I/bin/kmtk-train" -q -s l1svm -t rbf -c 4 "$DATA/heart_scale" "$TMP/cli.model"
check "the example's model = kmtk-train -s l1svm -t rbf -c 4's" cmp -s "$TMP/ex.model" "$TMP/cli.model"
acc=$("$I/bin/kmtk-predict" "$DATA/heart_scale" "$TMP/cli.model" "$TMP/p" | sed -n 's/^Accuracy = \([0-9.]*\)%.*/\1/p')
check "the example's training accuracy = kmtk-predict's ($acc%)" \
    grep -q "training accuracy $(printf '%.2f' "$acc")%" "$TMP/ex.out"

check "make uninstall succeeds" "${mk[@]}" uninstall DESTDIR="$D" PREFIX=$PREFIX
left=$(find "$D" ! -type d | head -n 5)
check "after uninstall no file is left under DESTDIR ($left)" test -z "$left"
