/* test_blas.c - km_blas_threads: with 1 thread OpenBLAS's pool is stopped (its idle threads
 * spin-yield, blas.h); asked for 2, a threaded call starts it again and computes the same
 * product. The pool is seen as the process's threads in /proc/self/task. km_blas_serial:
 * OpenBLAS's bits depend on its thread count, a solve's do not. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "blas.h"
#include "kmtk.h"
#include "test.h"
#include "testutil.h"

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

/* The Cholesky factor of a 200 x 200 matrix X X' + I on OpenBLAS's current threads */
static double *cholesky200(void)
{
    int n = 200;
    double *X = malloc((size_t)n * n * sizeof *X), *A = calloc((size_t)n * n, sizeof *A);
    for (int i = 0; i < n * n; i++)
        X[i] = (double)((i * 7919) % 1000) / 1000 - 0.5;
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, n, 1, X, n, 0, A, n);
    for (int i = 0; i < n; i++)
        A[i * n + i] += 1;
    LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, A, n);
    free(X);
    return A;
}

/* rls -t rbf at a tight gap (the walk factors K_WW of about 200 free coefficients) on
 * OpenBLAS set to blas threads by the caller: the decision values on the training rows */
static double *rls_rbf(const km_problem *P, int blas)
{
    km_error err;
    km_params *p = km_params_new();
    km_params_set(p, "-t", "rbf", &err);
    km_params_set(p, "-c", "512", &err);
    km_params_set(p, "-e", "1e-12", &err);
    km_params_set(p, "-n", "1", &err);
    km_blas_threads(blas);
    km_model *M = NULL;
    double *dec = malloc((size_t)P->l * sizeof *dec);
    int rc = km_method_train(km_method_find("rls"), P, p, &M, NULL, &err);
    rc = rc ? rc : km_model_decision_rows(M, P, NULL, P->l, dec, 1, &err);
    CHECK(rc == KM_OK, "rls -t rbf with OpenBLAS on %d threads: %s", blas, rc ? err.msg : "");
    km_model_free(M);
    km_params_free(p);
    return dec;
}

static void test_serial(int cores)
{
    km_blas_threads(1);
    double *L1 = cholesky200();
    km_blas_threads(2);
    double *L2 = cholesky200();
    /* (why: with one core OpenBLAS runs one thread whatever it is asked) */
    if (cores > 1)
        CHECK(memcmp(L1, L2, 200 * 200 * sizeof *L1) != 0, "OpenBLAS's dpotrf of 200 x 200 "
              "gives other bits on 2 threads than on 1 (why the solvers call it on one)");
    km_problem *P = random_problem(240, 5, 1, 0, 7);
    double *d1 = rls_rbf(P, 1), *d2 = rls_rbf(P, 2);
    CHECK(memcmp(d1, d2, (size_t)P->l * sizeof *d1) == 0, "a solve gives the same bits whatever "
          "thread count OpenBLAS had (km_blas_serial)");
    km_problem_free(P);
    free(d1);
    free(d2);
    free(L1);
    free(L2);
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
    test_serial(before);
    TEST_EXIT();
}
