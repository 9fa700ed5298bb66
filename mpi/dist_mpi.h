/* dist_mpi.h - the MPI backend of dist.h (only in train-mpi; `make mpi`). */
#ifndef KM_DIST_MPI_H
#define KM_DIST_MPI_H

#include "dist.h"

/* MPI_Init and a km_dist on MPI_COMM_WORLD. */
void km_dist_mpi_init(int *argc, char ***argv, km_dist *d);

/* MPI_Finalize. */
void km_dist_mpi_finalize(void);

/* MPI_Abort(MPI_COMM_WORLD, code): for a failure the ranks cannot agree on. */
void km_dist_mpi_abort(int code);

#endif
