/*
 * Known defects of host MPIs' neighbourhood collectives, in one table:
 * where a row matches (the MPI, its version range, the operation and a
 * condition on the communicator), the host MPI's own call is never a
 * candidate of `auto`, neither for the cost model (select.c) nor for the
 * measurements (tune.c); a schedule of mpitopo runs instead. Asked for by
 * name (`mpi`), the host call still runs: the user chose it.
 *
 * Every row has a test that shows the defect natively and its cure
 * through mpitopo (tests/mpi/host_defects.c). A condition must give the
 * same answer on every process (it reads what every process shares).
 */
#include "coll/coll_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct host_id {
    char name[16]; /* "mpich", "openmpi", "other" */
    int v[3];
    char text[64]; /* "MPICH 4.0.2", for messages and the tuning file */
} host_id_t;

typedef struct defect {
    const char *mpi;       /* host_id_t.name */
    int from[3], to[3];    /* versions, inclusive */
    mpitopo__opkind_t op;
    int (*condition)(const mpitopo__nbr_t *n);
    const char *what;
} defect_t;

static int any_comm(const mpitopo__nbr_t *n)
{
    (void)n;
    return 1;
}

/* A dist-graph communicator: the defect needs a one-way graph (a process
 * that sends to processes that send nothing back), which every process
 * cannot tell alone; all dist graphs are taken, the cost is only speed. */
static int dist_graph(const mpitopo__nbr_t *n)
{
    return n->kind == MPI_DIST_GRAPH;
}

static const defect_t defects[] = {
    {"mpich", {4, 0, 2}, {4, 0, 2}, MPITOPO__OPK_ALLTOALLW, dist_graph,
     "MPICH 4.0.2 MPI_Neighbor_alltoallw on a one-way dist graph leaves the receivers' buffers "
     "unchanged"},
    {"mpich", {4, 0, 2}, {4, 0, 2}, MPITOPO__OPK_ALLGATHER, any_comm,
     "MPICH 4.0.2 MPI_Neighbor_allgather does not report a truncated receive"},
};

static pthread_once_t id_once = PTHREAD_ONCE_INIT;
static host_id_t host;

static void read_host(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    snprintf(host.name, sizeof host.name, "other");
    if (PMPI_Get_library_version(lib, &len) != MPI_SUCCESS)
        lib[0] = '\0';
    const char *p;
    if ((p = strstr(lib, "MPICH Version:")) != NULL) {
        p += strlen("MPICH Version:");
        snprintf(host.name, sizeof host.name, "mpich");
    } else if ((p = strstr(lib, "Open MPI v")) != NULL) {
        p += strlen("Open MPI v");
        snprintf(host.name, sizeof host.name, "openmpi");
    }
    if (p && sscanf(p, " %d.%d.%d", &host.v[0], &host.v[1], &host.v[2]) < 2)
        host.v[0] = host.v[1] = host.v[2] = 0;
    snprintf(host.text, sizeof host.text, "%s %d.%d.%d", host.name, host.v[0], host.v[1],
             host.v[2]);
}

static int cmp_version(const int *a, const int *b)
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

const char *mpitopo__host_name(void)
{
    pthread_once(&id_once, read_host);
    return host.text;
}

const char *mpitopo__host_defect(const mpitopo__nbr_t *n, mpitopo__opkind_t op)
{
    if (!mpitopo__host_available())
        return NULL;
    pthread_once(&id_once, read_host);
    for (size_t i = 0; i < sizeof defects / sizeof *defects; i++) {
        const defect_t *d = &defects[i];
        if (d->op == op && strcmp(d->mpi, host.name) == 0 && cmp_version(host.v, d->from) >= 0 &&
            cmp_version(host.v, d->to) <= 0 && d->condition(n))
            return d->what;
    }
    return NULL;
}
