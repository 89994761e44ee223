/*
 * SimGrid SMPI: the emulated graph and dist-graph communicators that
 * src/mpi/smpi_compat.h redirects the PMPI_ graph calls to. Compiled only
 * when MPITOPO_SMPI is defined (bench/smpi/build.sh); empty otherwise.
 */
#include "mpi/mpi_internal.h"

#ifdef MPITOPO_SMPI

#include <string.h>

static int is_unweighted(const int *w)
{
    return w == MPI_UNWEIGHTED;
}

/*
 * SMPI has no graph or dist-graph communicators (src/mpi/smpi_compat.h
 * redirects the PMPI_ calls of src/mpi and src/coll here). The
 * constructors return a plain communicator carrying this record in an
 * attribute; MPI_Comm_dup shares it (the copy callback takes a reference),
 * as MPI copies a communicator's topology. The keyval is made on first use
 * and kept until the process ends (one per simulated rank: SMPI privatizes
 * the globals).
 */
typedef struct smpi_topo {
    int refs;
    int kind;     /* MPI_GRAPH or MPI_DIST_GRAPH */
    int weighted; /* dist-graph: the edges carry weights */
    int indegree, outdegree;
    int *sources, *sourceweights, *destinations, *destweights; /* within lists */
    int nnodes;         /* graph: the whole graph, as given */
    int *index, *edges; /* within lists */
    int *lists;
} smpi_topo_t;

static int smpi_keyval = MPI_KEYVAL_INVALID;

static void smpi_topo_unref(smpi_topo_t *t)
{
    if (t && --t->refs == 0) {
        mpitopo__free(t->lists);
        mpitopo__free(t);
    }
}

static int smpi_copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    ((smpi_topo_t *)in)->refs++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int smpi_delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    smpi_topo_unref(value);
    return MPI_SUCCESS;
}

/* The record of comm, or NULL when it has none. */
static smpi_topo_t *smpi_topo_of(MPI_Comm comm)
{
    void *v = NULL;
    int found = 0;
    if (smpi_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, smpi_keyval, &v, &found) != MPI_SUCCESS || !found)
        return NULL;
    return v;
}

/* A record of `kind` with room for n ints of lists, or NULL. */
static smpi_topo_t *smpi_topo_new(int kind, size_t n)
{
    smpi_topo_t *t = mpitopo__calloc(1, sizeof *t);
    if (t && !(t->lists = mpitopo__malloc_array(n + 1, sizeof *t->lists))) {
        mpitopo__free(t);
        t = NULL;
    }
    if (t) {
        t->refs = 1;
        t->kind = kind;
    }
    return t;
}

/* Hang t on *newcomm (the attribute takes t's reference); on failure free
 * both and set *newcomm to MPI_COMM_NULL. */
static int smpi_attach(smpi_topo_t *t, MPI_Comm *newcomm)
{
    int rc = MPI_SUCCESS;
    if (!t)
        rc = MPITOPO_NOMEM("the emulated topology");
    if (rc == MPI_SUCCESS && smpi_keyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(smpi_copy_cb, smpi_delete_cb, &smpi_keyval, NULL);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(*newcomm, smpi_keyval, t);
    if (rc != MPI_SUCCESS) {
        smpi_topo_unref(t);
        PMPI_Comm_free(newcomm);
    }
    return rc;
}

int mpitopo__smpi_topo_test(MPI_Comm comm, int *status)
{
    int ndims;
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    smpi_topo_t *t = smpi_topo_of(comm);
    *status = t ? t->kind : PMPI_Cartdim_get(comm, &ndims) == MPI_SUCCESS ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static void smpi_copy(int *to, const int *from, int n)
{
    if (n > 0)
        memcpy(to, from, (size_t)n * sizeof *to);
}

int mpitopo__smpi_dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                             const int sourceweights[], int outdegree,
                                             const int destinations[], const int destweights[],
                                             MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    (void)info, (void)reorder;
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    int w = (indegree > 0 && !is_unweighted(sourceweights)) || (outdegree > 0 && !is_unweighted(destweights));
    smpi_topo_t *t = smpi_topo_new(MPI_DIST_GRAPH, (size_t)(indegree + outdegree) * 2);
    if (t) {
        t->weighted = w;
        t->indegree = indegree;
        t->outdegree = outdegree;
        t->sources = t->lists;
        t->destinations = t->sources + indegree;
        t->sourceweights = t->destinations + outdegree;
        t->destweights = t->sourceweights + indegree;
        smpi_copy(t->sources, sources, indegree);
        smpi_copy(t->destinations, destinations, outdegree);
        for (int i = 0; i < indegree; i++)
            t->sourceweights[i] = w && !is_unweighted(sourceweights) ? sourceweights[i] : 1;
        for (int i = 0; i < outdegree; i++)
            t->destweights[i] = w && !is_unweighted(destweights) ? destweights[i] : 1;
    }
    return smpi_attach(t, newcomm);
}

/*
 * The general form: every edge (s, d, weight) goes to s as an out-edge and
 * to d as an in-edge, as 4-int records (kind, s, d, weight or -1), by one
 * MPI_Alltoall of the counts and one MPI_Alltoallv (O(size) counts per
 * process: acceptable for a simulator shim). Every process reads the
 * records in the order of the process that gave them, so the k-th (s, d)
 * out-edge of s is the k-th (s, d) in-edge of d, as message matching needs.
 */
int mpitopo__smpi_dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                                    const int destinations[], const int weights[], MPI_Info info,
                                    int reorder, MPI_Comm *newcomm)
{
    (void)info, (void)reorder;
    int size, rc = PMPI_Comm_size(comm, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    int nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += degrees[i];
    int w = nedges > 0 && !is_unweighted(weights);
    int *scount = mpitopo__calloc((size_t)size * 4, sizeof *scount), *sdispl = scount + size;
    int *rcount = sdispl + size, *rdispl = rcount + size;
    int *sbuf = mpitopo__malloc_array((size_t)nedges * 8 + 1, sizeof *sbuf), *rbuf = NULL;
    smpi_topo_t *t = NULL;
    if (!scount || !sbuf) {
        rc = MPITOPO_NOMEM("the edges to distribute");
        goto cleanup;
    }
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++)
            scount[sources[i]] += 4, scount[destinations[k]] += 4;
    for (int q = 1; q < size; q++)
        sdispl[q] = sdispl[q - 1] + scount[q - 1];
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int rec[2][4] = {{1, sources[i], destinations[k], w ? weights[k] : -1},
                             {0, sources[i], destinations[k], w ? weights[k] : -1}};
            memcpy(sbuf + sdispl[sources[i]], rec[0], sizeof rec[0]);
            sdispl[sources[i]] += 4;
            memcpy(sbuf + sdispl[destinations[k]], rec[1], sizeof rec[1]);
            sdispl[destinations[k]] += 4;
        }
    for (int q = 0; q < size; q++)
        sdispl[q] -= scount[q];
    if ((rc = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm)) != MPI_SUCCESS)
        goto cleanup;
    int total = 0;
    for (int q = 0; q < size; q++) {
        rdispl[q] = total;
        total += rcount[q];
    }
    if (!(rbuf = mpitopo__malloc_array((size_t)total + 1, sizeof *rbuf))) {
        rc = MPITOPO_NOMEM("the received edges");
        goto cleanup;
    }
    rc = PMPI_Alltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT, comm);
    int in = 0, out = 0;
    for (int e = 0; rc == MPI_SUCCESS && e < total; e += 4) {
        if (rbuf[e])
            out++;
        else
            in++;
    }
    if (rc == MPI_SUCCESS && !(t = smpi_topo_new(MPI_DIST_GRAPH, (size_t)(in + out) * 2)))
        rc = MPITOPO_NOMEM("the emulated topology");
    if (rc != MPI_SUCCESS)
        goto cleanup;
    t->indegree = t->outdegree = 0;
    t->sources = t->lists;
    t->destinations = t->sources + in;
    t->sourceweights = t->destinations + out;
    t->destweights = t->sourceweights + in;
    for (int e = 0; e < total; e += 4) {
        t->weighted |= rbuf[e + 3] >= 0;
        if (rbuf[e]) {
            t->destweights[t->outdegree] = rbuf[e + 3] >= 0 ? rbuf[e + 3] : 1;
            t->destinations[t->outdegree++] = rbuf[e + 2];
        } else {
            t->sourceweights[t->indegree] = rbuf[e + 3] >= 0 ? rbuf[e + 3] : 1;
            t->sources[t->indegree++] = rbuf[e + 1];
        }
    }
    if ((rc = PMPI_Comm_dup(comm, newcomm)) == MPI_SUCCESS) {
        rc = smpi_attach(t, newcomm);
        t = NULL;
    }
cleanup:
    smpi_topo_unref(t);
    mpitopo__free(scount);
    mpitopo__free(sbuf);
    mpitopo__free(rbuf);
    return rc;
}

static int smpi_dist_graph(MPI_Comm comm, smpi_topo_t **t)
{
    *t = smpi_topo_of(comm);
    return *t && (*t)->kind == MPI_DIST_GRAPH ? MPI_SUCCESS : MPI_ERR_TOPOLOGY;
}

int mpitopo__smpi_dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    smpi_topo_t *t;
    int rc = smpi_dist_graph(comm, &t);
    if (rc == MPI_SUCCESS) {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
        *weighted = t->weighted;
    }
    return rc;
}

int mpitopo__smpi_dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                       int maxoutdegree, int destinations[], int destweights[])
{
    smpi_topo_t *t;
    int rc = smpi_dist_graph(comm, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    int in = maxindegree < t->indegree ? maxindegree : t->indegree;
    int out = maxoutdegree < t->outdegree ? maxoutdegree : t->outdegree;
    smpi_copy(sources, t->sources, in);
    smpi_copy(destinations, t->destinations, out);
    if (t->weighted && !is_unweighted(sourceweights))
        smpi_copy(sourceweights, t->sourceweights, in);
    if (t->weighted && !is_unweighted(destweights))
        smpi_copy(destweights, t->destweights, out);
    return MPI_SUCCESS;
}

/* Processes of rank >= nnodes get MPI_COMM_NULL, as from MPI_Graph_create. */
int mpitopo__smpi_graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                               MPI_Comm *newcomm)
{
    (void)reorder;
    int rank, size, rc = PMPI_Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(comm, &size);
    if (rc == MPI_SUCCESS)
        rc = nnodes == size ? PMPI_Comm_dup(comm, newcomm)
                            : PMPI_Comm_split(comm, rank < nnodes ? 0 : MPI_UNDEFINED, rank, newcomm);
    if (rc != MPI_SUCCESS || *newcomm == MPI_COMM_NULL)
        return rc;
    int nedges = index[nnodes - 1];
    smpi_topo_t *t = smpi_topo_new(MPI_GRAPH, (size_t)nnodes + (size_t)nedges);
    if (t) {
        t->nnodes = nnodes;
        t->index = t->lists;
        t->edges = t->index + nnodes;
        smpi_copy(t->index, index, nnodes);
        smpi_copy(t->edges, edges, nedges);
        int first = rank ? index[rank - 1] : 0;
        t->indegree = t->outdegree = index[rank] - first;
        t->sources = t->destinations = t->edges + first;
    }
    return smpi_attach(t, newcomm);
}

static int smpi_graph(MPI_Comm comm, smpi_topo_t **t)
{
    *t = smpi_topo_of(comm);
    return *t && (*t)->kind == MPI_GRAPH ? MPI_SUCCESS : MPI_ERR_TOPOLOGY;
}

int mpitopo__smpi_graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    smpi_topo_t *t;
    int rc = smpi_graph(comm, &t);
    if (rc == MPI_SUCCESS) {
        *nnodes = t->nnodes;
        *nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    }
    return rc;
}

int mpitopo__smpi_graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    smpi_topo_t *t;
    int rc = smpi_graph(comm, &t);
    if (rc == MPI_SUCCESS) {
        int nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
        smpi_copy(index, t->index, maxindex < t->nnodes ? maxindex : t->nnodes);
        smpi_copy(edges, t->edges, maxedges < nedges ? maxedges : nedges);
    }
    return rc;
}

int mpitopo__smpi_graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    smpi_topo_t *t;
    int rc = smpi_graph(comm, &t);
    if (rc == MPI_SUCCESS && (rank < 0 || rank >= t->nnodes))
        rc = MPI_ERR_RANK;
    if (rc == MPI_SUCCESS)
        *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return rc;
}

int mpitopo__smpi_graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    int n, rc = mpitopo__smpi_graph_neighbors_count(comm, rank, &n);
    if (rc == MPI_SUCCESS) {
        smpi_topo_t *t = smpi_topo_of(comm);
        smpi_copy(neighbors, t->edges + (rank ? t->index[rank - 1] : 0), maxneighbors < n ? maxneighbors : n);
    }
    return rc;
}
#endif /* MPITOPO_SMPI */
