/* test_blas.c - km_blas_threads: with 1 thread OpenBLAS's pool is stopped (its idle threads
 * spin-yield, blas.h); asked for 2, a threaded call starts it again and computes the same
 * product. The pool is seen as the process's threads in /proc/self/task. */
#include <dirent.h>
#include <stdlib.h>

#include <cblas.h>

#include "blas.h"
#include "test.h"

static int process_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* C = A B (n x n, row major) by dgemm, and the largest |C - C_by_hand| */
static double product_error(int n)
{
    double *A = malloc(3 * (size_t)n * n * sizeof *A), *B = A + n * n, *Cm = B + n * n;
    for (int i = 0; i < n * n; i++) {
        A[i] = (double)(i % 7) - 3;
        B[i] = (double)(i % 5) - 2;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, A, n, B, n, 0, Cm, n);
    double worst = 0;
    for (int i = 0; i < n; i += 37)
        for (int j = 0; j < n; j += 41) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            double e = s > Cm[i * n + j] ? s - Cm[i * n + j] : Cm[i * n + j] - s;
            worst = e > worst ? e : worst;
        }
    free(A);
    return worst;
}

int main(void)
{
    int before = process_threads();
    km_blas_threads(1);
    int one = process_threads();
    printf("# threads: %d at start (OpenBLAS's pool), %d after km_blas_threads(1)\n", before,
           one);
    CHECK(one == 1, "km_blas_threads(1) stops OpenBLAS's pool (%d threads left)", one);
    CHECK(product_error(300) == 0, "a product on one thread is exact (small integers)");
    CHECK(process_threads() == 1, "a call on one thread starts no pool");
    km_blas_threads(2);
    CHECK(product_error(600) == 0, "asked for 2 threads, the product is the same");
    int two = process_threads();
    printf("# %d threads after a call on 2\n", two);
    if (before > 1)   /* (no pool at start: one CPU, or OPENBLAS_NUM_THREADS=1) */
        CHECK(two >= 2, "the pool starts again for a threaded call");
    km_blas_threads(1);
    CHECK(process_threads() == 1, "and stops again");
    TEST_EXIT();
}
