/*
 * mpitopo: topology-aware rank reordering and neighbourhood collectives on
 * top of any MPI-3 (or newer) implementation.
 *
 * This is the one header users include. The topic headers under mpitopo/
 * refuse to be included alone.
 *
 * Conventions, stated once for the whole API:
 *  - Functions return an int: MPITOPO_SUCCESS (0) on success, a negative
 *    MPITOPO_ERR_* code for mpitopo's own errors, or a positive MPI error code
 *    passed through unchanged from the MPI library. After a failure,
 *    mpitopo_last_error() gives a message that names the argument and value.
 *  - Input arrays are copied, never kept. Objects returned through an
 *    out-pointer belong to the caller, who releases them with the matching
 *    *_destroy function; destroy accepts NULL and sets the handle to NULL.
 *  - The MPI-free parts (machine, pattern, map, metrics) are thread safe on
 *    distinct objects and for concurrent reads of one object.
 *
 * Define MPITOPO_NO_MPI before including this header to use only the
 * MPI-free core (the CLI does this).
 */
#ifndef MPITOPO_H
#define MPITOPO_H

#define MPITOPO_INSIDE_H_ 1

#include <mpitopo/version.h>
#include <mpitopo/error.h>
#include <mpitopo/machine.h>
#include <mpitopo/pattern.h>
#include <mpitopo/map.h>
#include <mpitopo/metrics.h>
#ifndef MPITOPO_NO_MPI
#include <mpitopo/mpi.h>
#include <mpitopo/coll.h>
#endif

#undef MPITOPO_INSIDE_H_

#endif /* MPITOPO_H */
