/* Shared by the files of src/mpi: the MPI session (cleanup at MPI_Finalize)
 * and the emulation helpers. Only src/mpi and src/coll include this. */
#ifndef MPITOPO_MPI_INTERNAL_H
#define MPITOPO_MPI_INTERNAL_H

#include <mpi.h>
#ifdef MPITOPO_SMPI
#include "mpi/smpi_compat.h" /* SimGrid SMPI shims (bench/smpi/build.sh) */
#endif

#include "core/internal.h"
#include <mpitopo/mpi.h>

/*
 * Make sure the library's MPI state is released at MPI_Finalize: the first
 * call of a session attaches an attribute to MPI_COMM_SELF whose delete
 * callback (run at the start of MPI_Finalize) calls the *_finalize functions
 * below. Does nothing when MPI is not initialized (the state then lives
 * until the process exits). Returns MPI_SUCCESS or an MPI error code.
 */
int mpitopo__session_open(void);

/* Release everything a module keeps for the session; called once, from the
 * MPI_COMM_SELF delete callback, while MPI is still fully usable. */
void mpitopo__nodeinfo_finalize(void);
void mpitopo__emulation_finalize(void);
void mpitopo__comm_machine_finalize(void);

/* Return rc; when it is an MPI error code, first set mpitopo_last_error()
 * to "func: MPI error N: <MPI's own text>", so the message never belongs to
 * an earlier failure. Public MPI-layer functions return through this. */
int mpitopo__mpi_result(const char *func, int rc);

/* MPITOPO_ERR_ARG, naming `func`, unless MPI is initialized and not
 * finalized. */
int mpitopo__check_mpi(const char *func);

/* MPITOPO_ERR_ARG unless comm is an intracommunicator (not MPI_COMM_NULL);
 * a positive MPI error code if MPI fails to tell. */
int mpitopo__check_intracomm(MPI_Comm comm, const char *func);

/*
 * The emulated machine and the leaf of the calling process of comm (its rank
 * in MPI_COMM_WORLD placed by mpitopo_emulation). *machine is NULL when
 * emulation is off. Returns MPITOPO_SUCCESS, a negative mpitopo error (with
 * message), or a positive MPI error code. Local.
 */
int mpitopo__emulated_leaf(MPI_Comm comm, const mpitopo_machine_t **machine, int *leaf);

/*
 * The machine of comm (mpitopo_comm_machine), computed on the first call
 * and cached with its node information (shared by duplicates), and that
 * node information. Collective over comm on the first call, local after.
 * The pointers stay valid while comm lives.
 */
int mpitopo__comm_machine_cached(MPI_Comm comm, const mpitopo_nodeinfo_t **info,
                                 const mpitopo_machine_t **machine, const int **leaf_of_rank);

/* Whether collective arguments are compared across processes
 * (MPITOPO_CHECK_ARGS, read once; default on without NDEBUG). */
int mpitopo__check_args(void);

/* Value of key in info; *found = 0 for MPI_INFO_NULL or a missing key. */
int mpitopo__info_get(MPI_Info info, const char *key, char *value, int len, int *found);

/* What the info keys mpitopo_mapper, mpitopo_weights and mpitopo_reorder of
 * the topology constructors set. The caller fills the defaults first. */
typedef struct mpitopo__topo_options {
    char mapper[64];
    mpitopo_weight_t weight;
    int reorder;
} mpitopo__topo_options_t;
/* Read the keys into *o (errors MPITOPO_ERR_PARSE naming key and value). */
int mpitopo__topo_options_read(const char *func, MPI_Info info, mpitopo__topo_options_t *o);

/* FNV-1a over len bytes, continuing from h (start with 2166136261u): to
 * compare arguments across processes. */
uint32_t mpitopo__hash(uint32_t h, const void *data, size_t len);

#endif
