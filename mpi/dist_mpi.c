/* dist_mpi.c - see dist_mpi.h: the collectives of dist.h on MPI_COMM_WORLD. The counts of
 * dist.h are 64-bit; MPI's are int: a block of 2 GiB or more is refused (KM_EINTERNAL),
 * never truncated. Sums of doubles are in rank order, the simulation's bits: MPI's own
 * reductions group the operands by their algorithm ((a + b) + (c + d) at 4 ranks), so
 * with 3 or more ranks the sum is a reduce-scatter done by hand, rank r summing segment r
 * of every rank's vector in rank order (MPI_Alltoallv), then MPI_Allgatherv of the sums:
 * the bytes of a ring allreduce, 2 (R - 1)/R of the vector per rank, in two collectives. */
#include "dist_mpi.h"

#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

static int fits(int64_t n)
{
    return n >= 0 && n <= INT_MAX;
}

/* buf = the sum over ranks of buf, added in rank order 0, 1, ..., R-1 (see above). */
static int sum_in_rank_order(double *buf, int64_t n, int R, int rank)
{
    if (!fits(n * R))
        return KM_EINTERNAL;
    int *sc = malloc((size_t)R * 4 * sizeof *sc), *sd = sc + R, *rc = sc + 2 * R,
        *rd = sc + 3 * R;
    double *seg = malloc((size_t)(n / R + 1) * (size_t)R * sizeof *seg);
    double *sum = malloc((size_t)(n / R + 1) * sizeof *sum);
    int st = KM_EINTERNAL;
    if (sc && seg && sum) {
        int64_t mylo = n * rank / R, mylen = n * (rank + 1) / R - mylo;
        for (int r = 0; r < R; r++) {   /* segment r of my vector to rank r */
            sd[r] = (int)(n * r / R);
            sc[r] = (int)(n * (r + 1) / R) - sd[r];
            rc[r] = (int)mylen;         /* my segment of rank r's vector */
            rd[r] = (int)(mylen * r);
        }
        if (MPI_Alltoallv(buf, sc, sd, MPI_DOUBLE, seg, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD) ==
            MPI_SUCCESS) {
            for (int64_t i = 0; i < mylen; i++) {
                double s = seg[i];
                for (int r = 1; r < R; r++)
                    s += seg[(int64_t)r * mylen + i];
                sum[i] = s;
            }
            st = MPI_Allgatherv(sum, (int)mylen, MPI_DOUBLE, buf, sc, sd, MPI_DOUBLE,
                                MPI_COMM_WORLD) == MPI_SUCCESS ? KM_OK : KM_EINTERNAL;
        }
    }
    free(sc);
    free(seg);
    free(sum);
    return st;
}

/* buf = op over ranks of buf, by MPI's own reduction (any grouping of the operands). */
static int allreduce(void *buf, int64_t n, MPI_Datatype type, km_dist_op op)
{
    if (!fits(n))
        return KM_EINTERNAL;
    return MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, type, op == KM_DIST_SUM ? MPI_SUM : MPI_MAX,
                         MPI_COMM_WORLD) == MPI_SUCCESS ? KM_OK : KM_EINTERNAL;
}

static int mpi_reduce_d(void *impl, double *buf, int64_t n, km_dist_op op)
{
    (void)impl;
    int R, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (op == KM_DIST_SUM && R > 2 && fits(n))   /* MAX and a + b = b + a: any order is exact */
        return sum_in_rank_order(buf, n, R, rank);
    return allreduce(buf, n, MPI_DOUBLE, op);
}

static int mpi_reduce_i(void *impl, int64_t *buf, int64_t n, km_dist_op op)
{
    (void)impl;
    return allreduce(buf, n, MPI_INT64_T, op);
}

static int mpi_exscan(void *impl, int64_t *value)
{
    (void)impl;
    int64_t in = *value, out = 0;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_Exscan(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return KM_EINTERNAL;
    *value = rank == 0 ? 0 : out;   /* MPI leaves rank 0's result undefined */
    return KM_OK;
}

/* int counts and displacements from 64-bit ones; NULL when one does not fit. */
static int *ints(const int64_t *a, int n)
{
    int *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    for (int i = 0; r && i < n; i++) {
        if (!fits(a[i])) {
            free(r);
            return NULL;
        }
        r[i] = (int)a[i];
    }
    return r;
}

static int gather(const void *send, int64_t sbytes, void *recv, const int64_t *rbytes,
                  const int64_t *rdispl, int all)
{
    int R, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *rc = ints(rbytes, R), *rd = ints(rdispl, R), st = KM_EINTERNAL;
    if (rc && rd && fits(sbytes)) {
        if (all)
            st = MPI_Allgatherv(send, (int)sbytes, MPI_BYTE, recv, rc, rd, MPI_BYTE,
                                MPI_COMM_WORLD);
        else
            st = MPI_Gatherv(send, (int)sbytes, MPI_BYTE, recv, rc, rd, MPI_BYTE, 0,
                             MPI_COMM_WORLD);
        st = st == MPI_SUCCESS ? KM_OK : KM_EINTERNAL;
    }
    free(rc);
    free(rd);
    return st;
}

static int mpi_allgatherv(void *impl, const void *send, int64_t sbytes, void *recv,
                          const int64_t *rbytes, const int64_t *rdispl)
{
    (void)impl;
    return gather(send, sbytes, recv, rbytes, rdispl, 1);
}

static int mpi_gatherv(void *impl, const void *send, int64_t sbytes, void *recv,
                       const int64_t *rbytes, const int64_t *rdispl)
{
    (void)impl;
    return gather(send, sbytes, recv, rbytes, rdispl, 0);
}

static int mpi_alltoallv(void *impl, const void *send, const int64_t *sbytes,
                         const int64_t *sdispl, void *recv, const int64_t *rbytes,
                         const int64_t *rdispl)
{
    (void)impl;
    int R;
    MPI_Comm_size(MPI_COMM_WORLD, &R);
    int *sc = ints(sbytes, R), *sd = ints(sdispl, R), *rc = ints(rbytes, R);
    int *rd = ints(rdispl, R), st = KM_EINTERNAL;
    if (sc && sd && rc && rd)
        st = MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD)
             == MPI_SUCCESS ? KM_OK : KM_EINTERNAL;
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return st;
}

static int mpi_bcast(void *impl, void *buf, int64_t bytes, int root)
{
    (void)impl;
    if (!fits(bytes))
        return KM_EINTERNAL;
    return MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS
           ? KM_OK : KM_EINTERNAL;
}

static const km_dist_ops mpi_ops = {mpi_reduce_d, mpi_reduce_i, mpi_exscan, mpi_allgatherv,
                                    mpi_gatherv, mpi_alltoallv, mpi_bcast};

void km_dist_mpi_init(int *argc, char ***argv, km_dist *d)
{
    int provided;
    /* the library's own threads (tasks, kernel teams) never call MPI */
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    *d = (km_dist){0, 1, &mpi_ops, NULL, {0, 0}};
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
}

void km_dist_mpi_finalize(void)
{
    MPI_Finalize();
}

void km_dist_mpi_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}
