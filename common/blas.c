/* blas.c - how many threads OpenBLAS may use (blas.h). */
#include "blas.h"

void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
/* OpenBLAS's own (driver/others/blas_server.c): joins the pool's threads; its next threaded
 * call starts them again. Weak: a BLAS without it leaves the pool as it is. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void km_blas_threads(int n)
{
    openblas_set_num_threads(n < 1 ? 1 : n);
    if (n <= 1 && blas_thread_shutdown_)
        blas_thread_shutdown_();
}

void km_blas_serial(void)
{
    if (openblas_get_num_threads() != 1)
        km_blas_threads(1);
}
