# lib.bash - what the tests/mpi scripts share (sourced): tests/cli/lib.bash's helpers, the
# programs, run R ARGS... (M under mpirun with R ranks), the ranks of the loops.
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.bash"
T=$BIN/train
M=$BIN/train-mpi
H=$DATA/heart_scale
run() { local R=$1; shift; mpirun --oversubscribe -np "$R" "$M" "$@"; }
RANKS=${MPI_RANKS:-1 2 3 4}                                        # run.sh: MPI_RANKS
RANKS2=$(for r in $RANKS; do [ "$r" -gt 1 ] && echo "$r"; done)   # those past one rank
LARGE=${MPI_LARGE:-1}   # 0: leave out the runs on public data sets (make check-mpi-asan)
