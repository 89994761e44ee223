/*
 * mpitopo_comm_machine on MPI_COMM_WORLD and on a split subcommunicator:
 * one leaf per process, leaf_of_rank a permutation, level names as
 * documented, and the meet level of every pair of ranks equal to what their
 * nodes (and MPITOPO_NETWORK, MPITOPO_EMULATE) imply. MT_EXPECT_INNER (Open
 * MPI only) names the levels expected inside a node for bound processes.
 */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

static int nnet;
static char net_name[MPITOPO_MAX_LEVELS][MPITOPO_MAX_NAME];
static long long net_group[MPITOPO_MAX_LEVELS]; /* nodes per unit */

static void parse_network(void)
{
    const char *v = mt_getenv("MPITOPO_NETWORK");
    char buf[256];
    long long arity[MPITOPO_MAX_LEVELS];
    if (!v)
        return;
    strncpy(buf, v, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    for (char *t = strtok(buf, " ,"); t && nnet < MPITOPO_MAX_LEVELS; t = strtok(NULL, " ,")) {
        char *colon = strchr(t, ':');
        if (!MT_CHECK(colon, "bad MPITOPO_NETWORK token %s", t))
            return;
        *colon = '\0';
        strncpy(net_name[nnet], t, MPITOPO_MAX_NAME - 1);
        arity[nnet++] = atoll(colon + 1);
    }
    long long g = 1;
    for (int l = nnet - 1; l >= 0; l--)
        net_group[l] = g *= arity[l];
}

static int net_meet(int a, int b)
{
    for (int l = 0; l < nnet; l++)
        if (a / net_group[l] != b / net_group[l])
            return l;
    return nnet;
}

static void check_names(const mpitopo_machine_t *m, const mpitopo_machine_t *emu,
                        const char *label)
{
    int nlevels, node_level, en = -1, enl = 0;
    mpitopo_machine_nlevels(m, &nlevels);
    mpitopo_machine_node_level(m, &node_level);
    if (emu) {
        mpitopo_machine_node_level(emu, &en);
        mpitopo_machine_nlevels(emu, &enl);
    }
    int nabove = nnet ? nnet : emu ? en : 0;
    if (!MT_CHECK(node_level == nabove, "%s: node level %d, expected %d", label, node_level,
                  nabove))
        return;
    for (int l = 0; l < nlevels; l++) {
        const char *name = NULL, *want = NULL;
        mpitopo_machine_level(m, l, &name, NULL, NULL, NULL, NULL);
        if (l < nnet)
            want = net_name[l];
        else if (l == node_level)
            want = "node";
        else if (emu && l - node_level + en < enl)
            mpitopo_machine_level(emu, l < node_level ? l : l - node_level + en, &want, NULL, NULL,
                                  NULL, NULL);
        else if (!emu)
            want = l == nlevels - 1 ? "core" : l == nlevels - 2 ? "socket" : "?";
        MT_CHECK(want && !strcmp(name, want), "%s: level %d is \"%s\", expected \"%s\"", label,
                 l, name, want ? want : "(none)");
    }
    if (emu)
        MT_CHECK(nlevels - node_level == enl - en, "%s: %d levels from the node down, expected %d",
                 label, nlevels - node_level, enl - en);
    const char *inner = mt_getenv("MT_EXPECT_INNER");
    if (!emu && inner && !mt_is_mpich())
        MT_CHECK(nlevels - node_level - 1 == (strchr(inner, ' ') ? 2 : 1),
                 "%s: %d levels inside a node, expected \"%s\"", label,
                 nlevels - node_level - 1, inner);
}

static void check_comm(MPI_Comm comm, const int *keys, const mpitopo_machine_t *emu,
                       const int *emu_leaf, const char *label)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const mpitopo_nodeinfo_t *ni;
    mpitopo_machine_t *m = NULL;
    int *leaf = malloc((size_t)size * sizeof *leaf), *node = malloc((size_t)size * sizeof *node);
    int *w = mt_world_ranks(comm), *seen = calloc((size_t)size, sizeof *seen);
    if (!MT_CHECK_RC(mpitopo_comm_nodeinfo(comm, &ni)) ||
        !MT_CHECK_RC(mpitopo_comm_machine(comm, &m, leaf)))
        goto out;
    MPI_Allgather(&ni->node, 1, MPI_INT, node, 1, MPI_INT, comm);
    int nleaves, nlevels, node_level, nunits, en = -1;
    mpitopo_machine_nleaves(m, &nleaves);
    mpitopo_machine_nlevels(m, &nlevels);
    mpitopo_machine_node_level(m, &node_level);
    MT_CHECK(nleaves == size, "%s: %d leaves for %d processes", label, nleaves, size);
    for (int i = 0; i < size; i++)
        if (MT_CHECK(leaf[i] >= 0 && leaf[i] < size && !seen[leaf[i]],
                     "%s: leaf_of_rank[%d] = %d is not a permutation", label, i, leaf[i]))
            seen[leaf[i]] = 1;
    if (mt_failed())
        goto out;
    check_names(m, emu, label);
    mpitopo_machine_level(m, node_level, NULL, NULL, &nunits, NULL, NULL);
    MT_CHECK(nunits == ni->nnodes, "%s: %d node units, %d nodes", label, nunits, ni->nnodes);
    /* Distinct node keys of the members of comm. */
    int distinct = 0;
    for (int i = 0; i < size; i++) {
        int j = 0;
        while (j < i && keys[w[j]] != keys[w[i]])
            j++;
        distinct += j == i;
    }
    MT_CHECK(ni->nnodes == distinct, "%s: %d nodes, expected %d", label, ni->nnodes, distinct);
    if (emu)
        mpitopo_machine_node_level(emu, &en);
    for (int a = 0; a < size; a++)
        for (int b = 0; b < size; b++) {
            if (a == b)
                continue;
            int meet = -1, want = -1;
            mpitopo_machine_meet_level(m, leaf[a], leaf[b], &meet);
            if (emu) {
                int em;
                mpitopo_machine_meet_level(emu, emu_leaf[w[a]], emu_leaf[w[b]], &em);
                want = em > en ? node_level + em - en : nnet ? net_meet(node[a], node[b]) : em;
            } else if (node[a] != node[b]) {
                want = net_meet(node[a], node[b]);
            } else {
                want = meet > node_level && meet < nlevels ? meet : node_level + 1;
            }
            if (!MT_CHECK(meet == want, "%s: ranks %d and %d (nodes %d, %d) meet at level %d, "
                                        "expected %d", label, a, b, node[a], node[b], meet, want))
                goto out;
        }
out:
    mpitopo_machine_destroy(&m);
    free(leaf);
    free(node);
    free(w);
    free(seen);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parse_network();
    int *keys = mt_node_keys(), *emu_leaf = NULL;
    mpitopo_machine_t *emu = NULL;
    mt_emulation(&emu, &emu_leaf);
    check_comm(MPI_COMM_WORLD, keys, emu, emu_leaf, "world");
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
    check_comm(split, keys, emu, emu_leaf, "split");
    MPI_Comm_free(&split);
    mpitopo_machine_destroy(&emu);
    free(emu_leaf);
    free(keys);
    int rc = mt_finish("comm_machine");
    MPI_Finalize();
    return rc;
}
