/* blas.h - how many threads OpenBLAS may use.
 *
 * OpenBLAS starts its pool of threads when the library is loaded, and an idle pool thread
 * spin-yields for about 2^28 cycles (about 0.1 s of a core) at start and after every
 * threaded call before it sleeps: measured here, a process that ran 0.15 s used 0.20 s of
 * CPU, 0.08 s with the pool stopped. */
#ifndef KM_BLAS_H
#define KM_BLAS_H

/* OpenBLAS runs its calls on n threads (n < 1: 1); with n = 1 its pool is stopped as well
 * (it restarts by itself at the next call that asks for more threads). Call it from one
 * thread, outside parallel regions that call BLAS. */
void km_blas_threads(int n);

/* OpenBLAS on one thread, unless it already is (then nothing happens, so workers may call
 * it). The solvers call BLAS and LAPACK this way: OpenBLAS's results depend on its thread
 * count (measured with OpenBLAS 0.3.21: dgemm, dgemv, dpotrf, dpotrs and dsyevr change in
 * the last bits with 2 threads from n = 120 on), and the solvers' own threads give the same
 * bits for any count; a count that a concurrent caller had changed for a moment once made
 * -n 2's cross-validation differ from -n 1's. */
void km_blas_serial(void);

#endif
