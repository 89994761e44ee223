/*
 * The neighbourhood collectives' entry of a communicator: the canonical
 * lists of the engine (engine/neighbors.c) with what this layer keeps on
 * them (mpitopo__nbr_layer_t): the info keys mpitopo_neighbor and
 * mpitopo_combine_threshold, read when the lists are cached and again when
 * mpitopo_comm_set_info sets them; the grid and stencil of a communicator
 * made by mpitopo_cart_stencil_create; the schedules' plans and the
 * tuner's decisions, released with the entry. Also the public info calls
 * mpitopo_comm_set_info and mpitopo_comm_get_info.
 */
#include "coll/coll_internal.h"

#include <stdio.h>
#include <string.h>

/* The value of key on comm: mpitopo's own keys (mpitopo_comm_set_info)
 * first, then MPI's info of comm (Open MPI keeps keys it does not know). */
static int comm_value(MPI_Comm comm, MPI_Info info, const char *key, char *value, int size)
{
    return mpitopo__comm_info_get(comm, key, value, size) || mpitopo__info_value(info, key, value, size);
}

void mpitopo__nbr_read_info(mpitopo__nbr_t *n, MPI_Comm comm)
{
    char v[64];
    MPI_Info info = MPI_INFO_NULL;
    n->info_sched = MPITOPO__SCHED_UNSET;
    n->info_threshold = -1;
    if (PMPI_Comm_get_info(comm, &info) != MPI_SUCCESS)
        info = MPI_INFO_NULL;
    if (comm_value(comm, info, "mpitopo_neighbor", v, sizeof v)) {
        n->info_sched = mpitopo__sched_parse(v);
        snprintf(n->info_sched_text, sizeof n->info_sched_text, "%s", v);
    }
    if (comm_value(comm, info, "mpitopo_combine_threshold", v, sizeof v)) {
        n->info_threshold = mpitopo__combine_parse_threshold(v);
        snprintf(n->info_threshold_text, sizeof n->info_threshold_text, "%s", v);
    }
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
}

void mpitopo__nbr_refresh_info(MPI_Comm comm)
{
    mpitopo__nbr_t *n = mpitopo__nbr_cached(comm);
    if (n)
        mpitopo__nbr_read_info(n, comm);
}

/* The neighbourhood collectives' state of an entry: the info keys read at
 * cache time, the grid and stencil of a communicator made by
 * mpitopo_cart_stencil_create; released with the schedules' plans and the
 * tuner's decisions. */
static int layer_init(mpitopo__nbr_t *n, MPI_Comm comm, const char *func)
{
    mpitopo__nbr_read_info(n, comm);
    return n->kind == MPI_DIST_GRAPH ? mpitopo__stencil_of(comm, &n->stencil, func) : MPI_SUCCESS;
}

static void layer_release(mpitopo__nbr_t *n)
{
    mpitopo__sched_free_state(n);
    mpitopo__tune_free(n->tune);
}

static const mpitopo__nbr_layer_t layer = {.init = layer_init, .release = layer_release};

int mpitopo__nbr_get(MPI_Comm comm, const char *func, mpitopo__nbr_t **nbr)
{
    return mpitopo__nbr_lists(comm, &layer, func, nbr);
}

int mpitopo_comm_set_info(MPI_Comm comm, MPI_Info info)
{
    int rc = mpitopo__comm_info_set(comm, info, __func__);
    if (rc == MPITOPO_SUCCESS)
        mpitopo__nbr_refresh_info(comm);
    return rc;
}

int mpitopo_comm_get_info(MPI_Comm comm, const char *key, int size, char *value, int *found)
{
    int rc = mpitopo__check_mpi(__func__);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (comm == MPI_COMM_NULL || !key || !value || !found || size < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, __func__, "%s",
                               comm == MPI_COMM_NULL ? "comm = MPI_COMM_NULL"
                               : size < 1            ? "size < 1"
                                                     : "a NULL pointer");
    MPI_Info info = MPI_INFO_NULL;
    *found = mpitopo__comm_info_get(comm, key, value, size);
    if (!*found && PMPI_Comm_get_info(comm, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
        *found = mpitopo__info_value(info, key, value, size);
        PMPI_Info_free(&info);
    }
    return MPITOPO_SUCCESS;
}
