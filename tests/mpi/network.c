/*
 * The network of a communicator: MPITOPO_NETWORK (a network description)
 * on MPI_COMM_WORLD, the info key mpitopo_network on split communicators,
 * end nodes in order (the emulated node, world-wide), the network's group
 * levels above the machine's nodes with the meet level of every pair of
 * ranks what their end nodes' groups imply, and errors (a bad description,
 * more nodes than end nodes) on every process alike. MT_FABRIC_HOST (set by
 * the fabric tests) names a fabric description in which this host is an
 * end node: the nodes then sit on it by host name.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* The emulated node of every world rank (world-size ints), or NULL. */
static int *emulated_nodes(void)
{
    mpitopo_machine_t *emu = NULL;
    int *leaf = NULL, level;
    if (!mt_emulation(&emu, &leaf) || !emu) {
        free(leaf);
        mpitopo_machine_destroy(&emu);
        return NULL;
    }
    int *node = malloc((size_t)size * sizeof *node);
    mpitopo_machine_node_level(emu, &level);
    for (int i = 0; i < size; i++)
        mpitopo_machine_unit_of(emu, level, leaf[i], &node[i]);
    free(leaf);
    mpitopo_machine_destroy(&emu);
    return node;
}

/*
 * comm's network is desc; world rank w sits on end node expect[w] (NULL:
 * every process on end node by_name). Checks mpitopo_comm_network and the
 * machine: group levels named as the network's, then "node", and for every
 * pair of ranks a meet level below a group level exactly when their end
 * nodes share that group.
 */
static void check_comm(MPI_Comm comm, const char *desc, const int *expect, int by_name,
                       const char *label)
{
    int csize, crank;
    MPI_Comm_size(comm, &csize);
    MPI_Comm_rank(comm, &crank);
    const mpitopo_network_t *net = NULL;
    int end = -2;
    if (!MT_CHECK_RC(mpitopo_comm_network(comm, &net, &end)))
        return;
    int *world = mt_world_ranks(comm);
    int want = expect ? expect[world[crank]] : by_name;
    MT_CHECK(net != NULL, "%s: no network", label);
    MT_CHECK(end == want, "%s: end node %d, expected %d", label, end, want);
    mpitopo_network_t *ref = NULL;
    if (!MT_CHECK_RC(mpitopo_network_from_string(desc, &ref)) || !net) {
        free(world);
        return;
    }
    int nref, ngroups, nlevels, node_level;
    mpitopo_network_size(ref, &nref, NULL, NULL);
    int nnet;
    mpitopo_network_size(net, &nnet, NULL, NULL);
    MT_CHECK(nnet == nref, "%s: %d end nodes, expected %d", label, nnet, nref);
    mpitopo_network_group_levels(ref, &ngroups);
    mpitopo_machine_t *m = NULL;
    int *leaf = malloc((size_t)csize * sizeof *leaf);
    if (MT_CHECK_RC(mpitopo_comm_machine(comm, &m, leaf))) {
        mpitopo_machine_nlevels(m, &nlevels);
        mpitopo_machine_node_level(m, &node_level);
        MT_CHECK(node_level == ngroups, "%s: node level %d, expected %d", label, node_level,
                 ngroups);
        for (int l = 0; l < ngroups && l < nlevels; l++) {
            const char *got, *name;
            int64_t g;
            mpitopo_machine_level(m, l, &got, NULL, NULL, NULL, NULL);
            mpitopo_network_group(ref, l, 0, &g, &name);
            MT_CHECK(strcmp(got, name) == 0, "%s: level %d is %s, expected %s", label, l, got,
                     name);
        }
        /* Every process knows every end node: gather them. */
        int *ends = malloc((size_t)csize * sizeof *ends);
        MPI_Allgather(&end, 1, MPI_INT, ends, 1, MPI_INT, comm);
        for (int a = 0; a < csize; a++)
            for (int b = 0; b < csize; b++) {
                int meet;
                mpitopo_machine_meet_level(m, leaf[a], leaf[b], &meet);
                int share = ngroups; /* the first group level they do not share */
                for (int l = 0; l < ngroups; l++) {
                    int64_t ga, gb;
                    mpitopo_network_group(ref, l, ends[a], &ga, NULL);
                    mpitopo_network_group(ref, l, ends[b], &gb, NULL);
                    if (ga != gb) {
                        share = l;
                        break;
                    }
                }
                /* Different end nodes part at the first group they do not
                 * share (or at the node level); one end node: below it. */
                int ok = ends[a] != ends[b] ? meet == share : meet > ngroups;
                if (!MT_CHECK(ok, "%s: ranks %d (end node %d) and %d (%d) meet at level %d, "
                              "first group level not shared %d", label, a, ends[a], b, ends[b],
                              meet, share))
                    a = b = csize;
            }
        free(ends);
    }
    free(leaf);
    free(world);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&ref);
}

/* A communicator split from world with the info key set first. */
static MPI_Comm keyed(int color, const char *desc)
{
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &c);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_network", desc);
    MT_CHECK_RC(mpitopo_comm_set_info(c, info));
    MPI_Info_free(&info);
    return c;
}

/* An error every process of comm returns alike, naming what (or, on the
 * processes that did not fail themselves, the process that did). */
static void check_error(MPI_Comm comm, int code, const char *what, const char *label)
{
    const mpitopo_network_t *net = NULL;
    int end;
    int rc = mpitopo_comm_network(comm, &net, &end);
    MT_CHECK(rc == code, "%s: rc %d (%s), expected %s", label, rc, mpitopo_last_error(),
             mpitopo_err_name(code));
    /* The processes that failed name the cause, the others the process. */
    MT_CHECK(strstr(mpitopo_last_error(), what) || strstr(mpitopo_last_error(), "of comm failed"),
             "%s: message \"%s\" names neither %s nor a process", label, mpitopo_last_error(),
             what);
    MT_CHECK(net == NULL && end == -1, "%s: outputs set on error", label);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *emu = emulated_nodes();
    const char *env = mt_getenv("MPITOPO_NETWORK");
    const char *fabric = mt_getenv("MT_FABRIC_HOST");
    if (fabric) {
        /* One host, named in the fabric: every process on its end node. */
        MPI_Comm c = keyed(0, fabric);
        check_comm(c, fabric, NULL, atoi(mt_getenv("MT_FABRIC_END") ? mt_getenv("MT_FABRIC_END")
                                                                     : "-1"),
                   "by host name");
        MPI_Comm_free(&c);
    } else if (emu) {
        if (env)
            check_comm(MPI_COMM_WORLD, env, emu, 0, "MPITOPO_NETWORK on world");
        /* Split by halves: the end node stays the emulated node, world-wide. */
        char desc[64];
        int nodes = 0;
        for (int i = 0; i < size; i++)
            nodes = emu[i] + 1 > nodes ? emu[i] + 1 : nodes;
        snprintf(desc, sizeof desc, "fattree:2;2,%d;1,2;1,1", (nodes + 1) / 2);
        MPI_Comm c = keyed(rank < size / 2, desc);
        check_comm(c, desc, emu, 0, "info key on a split");
        MPI_Comm_free(&c);
        /* Too few end nodes, and a bad description: every process fails alike. */
        if (nodes > 1) {
            c = keyed(0, "mesh:1x1");
            check_error(c, MPITOPO_ERR_RANGE, "the network has 1", "too few end nodes");
            MPI_Comm_free(&c);
        }
        c = keyed(0, "torus:0x3");
        check_error(c, MPITOPO_ERR_RANGE, "torus:0x3", "bad description");
        MPI_Comm_free(&c);
    } else {
        /* One real host, no names: end node 0 in order. */
        MPI_Comm c = keyed(0, "dragonfly:1,2,1");
        check_comm(c, "dragonfly:1,2,1", NULL, 0, "one host in order");
        MPI_Comm_free(&c);
    }
    /* Without a network: NULL and -1. */
    if (!env) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
        const mpitopo_network_t *net = (const mpitopo_network_t *)&c;
        int end = 5;
        MT_CHECK_RC(mpitopo_comm_network(c, &net, &end));
        MT_CHECK(net == NULL && end == -1, "no network: %p, %d", (const void *)net, end);
        MPI_Comm_free(&c);
    }
    free(emu);
    int rc = mt_finish("network");
    MPI_Finalize();
    return rc;
}
