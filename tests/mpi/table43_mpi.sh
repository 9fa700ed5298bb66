#!/usr/bin/env bash
# The Table 4.3 protocol's independent paths on ranks (issue 17 item 2): `mpirun -np R
# bench/rls2/table43-mpi` (split r on rank r mod R, results gathered to rank 0) gives the
# serial driver's results byte for byte for R in {1, 2, 3, 4}: the summary line without its
# timing fields, the per-split table and the curves without their seconds, the figure; and
# bench/rls2/table43.sh with MPI=R prints the serial Table 4.3.
source "$(dirname "$0")/lib.bash"
S=$BIN/bench/rls2/table43
M=$BIN/bench/rls2/table43-mpi
# the summary's fields that are not timings (times are measured where the paths ran)
results() { tr ' ' '\n' | grep -Ev '^(path_s_mean|path_s_sd|path_cpu_mean|path_cpu_sd|solver_s_mean|bank_s|read_s|paths_wall_s|total_s|threads|ranks)='; }
opts=(-q -r 7 --standardize --train-fraction 0.6 -L 1e-4:1e2:8)
"$S" "${opts[@]}" -n 2 --raw "$TMP/raw" -o "$TMP/csv" --plot "$TMP/svg" $H >"$TMP/want"
check "the serial driver: a summary with a test metric" grep -q 'test_mean=' "$TMP/want"
check "the serial driver: 7 splits x 8 lambdas" test "$(grep -c '^[0-9]' "$TMP/raw")" -eq 56
for R in $RANKS; do
    run $R "${opts[@]}" -n 1 --raw "$TMP/raw.$R" -o "$TMP/csv.$R" --plot "$TMP/svg.$R" $H \
        >"$TMP/got.$R"
    check "R = $R: the summary's results are the serial driver's" \
        cmp -s <(results <"$TMP/want") <(results <"$TMP/got.$R")
    check "R = $R: the summary names the ranks" \
        test "$(grep -c " ranks=$R" "$TMP/got.$R")" -eq $((R > 1))
    check "R = $R: the per-split table (test, kernels, iterations) is the serial one" \
        cmp -s <(cut -d, -f1-5 "$TMP/raw") <(cut -d, -f1-5 "$TMP/raw.$R")
    check "R = $R: the per-lambda curves (all but the seconds) are the serial ones" \
        cmp -s <(cut -d, -f1-7,9 "$TMP/csv") <(cut -d, -f1-7,9 "$TMP/csv.$R")
    check "R = $R: the figure is the serial one" cmp -s "$TMP/svg" "$TMP/svg.$R"
done
# a failing path stops every rank with the error (a training share leaving no test rows)
expect_fail "R = 3: a usage error on every rank: status 1" 1 "leaves no training or no test" \
    run 3 -q -r 4 --train-fraction 0.999 $H
expect_fail "R = 2: a missing file: status 2" 2 "no_such" run 2 -q "$TMP/no_such"

# the driver script's MPI mode: the serial Table 4.3 rows (public data, by path)
DD=${KMTK_DATASETS:-/work/shared/datasets}
if [ -f "$DD/heart_scale.gz" ]; then
    T43=$(cd "$(dirname "$0")/../../bench/rls2" && pwd)/table43.sh
    DATA_DIR=$DD DATASETS=heart REPS=5 RATIOS=70 BIN=$BIN bash "$T43" >"$TMP/s.md" 2>/dev/null
    DATA_DIR=$DD DATASETS=heart REPS=5 RATIOS=70 BIN=$BIN MPI=3 THREADS=1 bash "$T43" \
        >"$TMP/m.md" 2>/dev/null
    check "table43.sh MPI=3: ran" grep -q 'MPI=3 ranks' "$TMP/m.md"
    # Table 4.3's rows (metric, lambda*) have no timings: the same bytes
    check "table43.sh MPI=3: Table 4.3 is the serial one" \
        cmp -s <(grep '^| Heart | [0-9]' "$TMP/s.md" | head -n 1) \
               <(grep '^| Heart | [0-9]' "$TMP/m.md" | head -n 1)
    check "table43.sh: the Table 4.3 row is there" grep -q '^| Heart | [0-9]' "$TMP/s.md"
else
    echo "# skipped: $DD/heart_scale.gz not found (set KMTK_DATASETS)"
fi
