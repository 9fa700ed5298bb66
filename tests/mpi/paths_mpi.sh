#!/usr/bin/env bash
# The lambda paths of train under mpirun (issue 17 item 2, "lambda grids"): -s okl -L and
# -s polymkl -L are warm-started chains (each lambda starts from the last one's B or theta,
# and polymkl's random steps continue the last one's count), so their points cannot be
# split over ranks without changing the bits; train-mpi runs each chain whole (every rank,
# rank 0 writes) and spreads what is independent: the -v folds, each fold's whole path on
# one rank. Checked: train's model, path table and -v output, byte for byte, for every R;
# the path table (-o) is rank 0's alone (the other ranks write theirs apart and remove it).
source "$(dirname "$0")/lib.bash"
G=$BIN/datasets/gen_okl_signals

head -n 180 $H >"$TMP/tr"
tail -n 90 $H >"$TMP/va"
PM=(-s polymkl -d 2 --iters 300 -L 1e-4:1e-1:4 --valid "$TMP/va")
$T -q "${PM[@]}" -o "$TMP/pm.csv" "$TMP/tr" "$TMP/pm.model"
$T "${PM[@]}" -v 3 "$TMP/tr" >"$TMP/pmcv.want"
check "polymkl -L: a path of 4 lambdas" test "$(grep -c . "$TMP/pm.csv")" -eq 5
check "polymkl -L -v 3: a cross-validation MSE" grep -q '^Cross Validation Mean squared error' "$TMP/pmcv.want"
$G -m 20 --seed 3 "$TMP/s.train" "$TMP/s.test"
OK=(-s okl -t laplacian -g 10 --rank 4 -L 1e-4:1:6 --valid "$TMP/s.test")
$T -q "${OK[@]}" -o "$TMP/okl.csv" "$TMP/s.train" "$TMP/okl.model"
check "okl -L: a path of 6 lambdas" test "$(grep -c . "$TMP/okl.csv")" -eq 7
secs() { cut -d, -f1-4,6- "$1"; }   # the path table without its seconds
mkdir "$TMP/scratch"
for R in $RANKS; do
    TMPDIR="$TMP/scratch" run $R -q "${PM[@]}" -o "$TMP/pm.$R.csv" "$TMP/tr" "$TMP/pm.$R.model"
    check "R = $R: polymkl -L path (warm chain, whole on every rank): train's model" \
        cmp -s "$TMP/pm.model" "$TMP/pm.$R.model"
    check "R = $R: polymkl -L path: train's path table (but the seconds)" \
        cmp -s <(cut -d, -f1-2,4- "$TMP/pm.csv") <(cut -d, -f1-2,4- "$TMP/pm.$R.csv")
    run $R "${PM[@]}" -v 3 "$TMP/tr" >"$TMP/pmcv.$R"
    check "R = $R: polymkl -L -v 3 (each fold's path on a rank): train's output" \
        cmp -s "$TMP/pmcv.want" "$TMP/pmcv.$R"
    TMPDIR="$TMP/scratch" run $R -q "${OK[@]}" -o "$TMP/okl.$R.csv" "$TMP/s.train" "$TMP/okl.$R.model"
    check "R = $R: okl -L path (warm chain, whole on every rank): train's model" \
        cmp -s "$TMP/okl.model" "$TMP/okl.$R.model"
    check "R = $R: okl -L path: train's path table (but the seconds)" \
        cmp -s <(secs "$TMP/okl.csv") <(secs "$TMP/okl.$R.csv")
done
check "the other ranks' path tables: written apart, none left" \
    test -z "$(ls "$TMP/scratch" | grep '^kmtk-train-mpi')"
