/*
 * The library's MPI session: state the MPI layer and the collectives keep
 * between calls (the node-information cache, the emulated machine, the hwloc
 * topology, the tuner's decisions) is released at MPI_Finalize, so valgrind
 * sees no leak and a new session starts clean. MPI_Finalize deletes the
 * attributes of MPI_COMM_SELF first, while MPI is still fully usable; our
 * attribute's delete callback runs the hooks the modules registered with
 * mpitopo__at_finalize. The hooks are registered, not called by name, so
 * this file imports no module above it.
 */
#include "mpi/mpi_internal.h"

#include <stdio.h>
#include <string.h>

#include <pthread.h>

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static int finalize_keyval = MPI_KEYVAL_INVALID;
static void (*hooks[MPITOPO__FINI_COUNT])(void); /* under session_lock */

static int finalize_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    /* In slot order: the tuner's decisions go to MPITOPO_TUNING_FILE while
     * MPI runs; the node-information cache comes before the rest because
     * its delete callbacks free communicators. */
    void (*run[MPITOPO__FINI_COUNT])(void);
    pthread_mutex_lock(&session_lock);
    memcpy(run, hooks, sizeof run);
    memset(hooks, 0, sizeof hooks);
    pthread_mutex_unlock(&session_lock);
    for (int s = 0; s < MPITOPO__FINI_COUNT; s++)
        if (run[s])
            run[s]();
    pthread_mutex_lock(&session_lock);
    /* MPI keeps the keyval alive until this attribute is gone. */
    int k = keyval;
    PMPI_Comm_free_keyval(&k);
    finalize_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&session_lock);
    mpitopo__log(2, "MPI session released");
    return MPI_SUCCESS;
}

int mpitopo__at_finalize(mpitopo__fini_slot_t slot, void (*release)(void))
{
    int init = 0, fini = 0, rc = MPI_SUCCESS;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fini);
    if (!init || fini)
        return MPI_SUCCESS;
    pthread_mutex_lock(&session_lock);
    if ((int)slot >= 0 && slot < MPITOPO__FINI_COUNT)
        hooks[slot] = release;
    if (finalize_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_cb, &finalize_keyval, NULL);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
            if (rc != MPI_SUCCESS)
                PMPI_Comm_free_keyval(&finalize_keyval);
        }
        if (rc != MPI_SUCCESS)
            finalize_keyval = MPI_KEYVAL_INVALID;
    }
    pthread_mutex_unlock(&session_lock);
    return rc;
}

int mpitopo__check_mpi(const char *func)
{
    int init = 0, fini = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fini);
    if (!init || fini)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "MPI is %s",
                                 fini ? "already finalized" : "not initialized");
    return MPITOPO_SUCCESS;
}

int mpitopo__check_intracomm(MPI_Comm comm, const char *func)
{
    if (comm == MPI_COMM_NULL)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "comm = MPI_COMM_NULL");
    int inter = 0, rc = PMPI_Comm_test_inter(comm, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    if (inter)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "comm is an intercommunicator; an intracommunicator is required");
    return MPITOPO_SUCCESS;
}

int mpitopo__mpi_result(const char *func, int rc)
{
    if (rc <= 0)
        return rc;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (PMPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "(no description)");
    return MPITOPO_FAIL_AS(rc, func, "MPI error %d: %s", rc, text);
}
