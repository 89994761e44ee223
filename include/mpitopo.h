/**
 * @defgroup mpitopo topology-aware rank reordering and neighbourhood collectives
 * @brief Overview of the API and its conventions.
 *
 * mpitopo: topology-aware rank reordering and neighbourhood collectives on
 * top of any MPI-3 (or newer) implementation.
 *
 * @code
 * #include <mpitopo.h>
 * @endcode
 * This is the one header users include. The topic headers under mpitopo/
 * refuse to be included alone. Link with -lmpitopo (pkg-config mpitopo, or
 * CMake's find_package(mpitopo) and mpitopo::mpitopo).
 *
 * Conventions, stated once for the whole API:
 *  - Functions return an int: #MPITOPO_SUCCESS (0) on success, a negative
 *    MPITOPO_ERR_* code for mpitopo's own errors, or a positive MPI error code
 *    passed through unchanged from the MPI library. After a failure,
 *    mpitopo_last_error() gives a message that names the argument and value.
 *  - Input arrays are copied, never kept. Objects returned through an
 *    out-pointer belong to the caller, who releases them with the matching
 *    *_destroy function; destroy accepts NULL and sets the handle to NULL.
 *  - The MPI-free parts (machine, pattern, map, metrics) are thread safe on
 *    distinct objects and for concurrent reads of one object.
 *  - Every function of the MPI layer states whether it is collective, and
 *    over which communicator ("Collective:").
 *
 * Define MPITOPO_NO_MPI before including this header to use only the
 * MPI-free core (the CLI does this).
 *
 * The pages of the topics: mpitopo_errors(3), mpitopo_machine(3),
 * mpitopo_pattern(3), mpitopo_mapping(3), mpitopo_metrics(3), mpitopo_network(3),
 * mpitopo_gpu(3), mpitopo_nodes(3), mpitopo_cart(3), mpitopo_graph(3),
 * mpitopo_neighbors(3), mpitopo_coll(3), mpitopo_requests(3); each function
 * has a page of its own name (mpitopo_cart_create(3)) that shows its topic.
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
#include <mpitopo/network.h>
#include <mpitopo/gpu.h>
#ifndef MPITOPO_NO_MPI
#include <mpitopo/mpi.h>
#include <mpitopo/hhc.h>
#include <mpitopo/coll.h>
#endif

#undef MPITOPO_INSIDE_H_

#endif /* MPITOPO_H */
