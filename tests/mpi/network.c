/*
 * The network of a communicator: MPITOPO_NETWORK (a network description)
 * on MPI_COMM_WORLD, the info key mpitopo_network on split communicators,
 * end nodes in order (the emulated node, world-wide), the network's group
 * levels above the machine's nodes with the meet level of every pair of
 * ranks what their end nodes' groups imply, and errors (a bad description,
 * more nodes than end nodes) on every process alike. With MT_FABRIC=1, the
 * hand-written fabric of tests/data/fabric with this host in place of
 * "node3": the (one) node sits on that end node by host name, not in order.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * A dist-graph with reorder under the network of world (MPITOPO_NETWORK):
 * the constructor maps with ptram by default, and its result is exactly
 * what mpitopo_map_network("ptram") gives here from the same graph, never
 * worse than the launch under the hybrid metric. The graph: r -> r+1
 * (weight 3) and r -> r+size/2 (weight 1), periodic.
 */
static void check_ptram(void)
{
    int dst[2] = {(rank + 1) % size, (rank + size / 2) % size}, w[2] = {3, 1};
    MPI_Comm g;
    if (!MT_CHECK_RC(mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 2, dst,
                                                        w, MPI_INFO_NULL, 1, &g)))
        return;
    int newrank, end, node_level;
    MPI_Comm_rank(g, &newrank);
    const mpitopo_network_t *net = NULL;
    mpitopo_machine_t *m = NULL;
    int *leaf = malloc((size_t)size * sizeof *leaf), *newranks = malloc((size_t)size * sizeof *newranks);
    int *ends = malloc((size_t)size * sizeof *ends), *unit_end = malloc((size_t)size * sizeof *unit_end);
    int *src = malloc((size_t)size * 2 * sizeof *src), *dsts = malloc((size_t)size * 2 * sizeof *dsts);
    double *bytes = malloc((size_t)size * 2 * sizeof *bytes);
    int *mapped = malloc((size_t)size * sizeof *mapped), *launch_end = malloc((size_t)size * sizeof *launch_end);
    int *mapped_end = malloc((size_t)size * sizeof *mapped_end);
    mpitopo_pattern_t *pat = NULL;
    MT_CHECK_RC(mpitopo_comm_network(MPI_COMM_WORLD, &net, &end));
    MT_CHECK_RC(mpitopo_comm_machine(MPI_COMM_WORLD, &m, leaf));
    MPI_Allgather(&newrank, 1, MPI_INT, newranks, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(&end, 1, MPI_INT, ends, 1, MPI_INT, MPI_COMM_WORLD);
    if (!net || !m || mt_failed())
        goto cleanup;
    mpitopo_machine_node_level(m, &node_level);
    for (int q = 0; q < size; q++) {
        int unit;
        mpitopo_machine_unit_of(m, node_level, leaf[q], &unit);
        unit_end[unit] = ends[q];
        src[2 * q] = src[2 * q + 1] = q;
        dsts[2 * q] = (q + 1) % size;
        dsts[2 * q + 1] = (q + size / 2) % size;
        bytes[2 * q] = 3;
        bytes[2 * q + 1] = 1;
    }
    if (!MT_CHECK_RC(mpitopo_pattern_create(size, 2 * size, src, dsts, bytes, bytes, &pat)))
        goto cleanup;
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.launch = leaf;
    opt.never_worse = 1;
    if (!MT_CHECK_RC(mpitopo_map_network("ptram", m, net, unit_end, pat, &opt, mapped, NULL)))
        goto cleanup;
    for (int q = 0; q < size; q++) {
        int p = newranks[q]; /* the role of world rank q sits on q's leaf */
        if (!MT_CHECK(mapped[p] == leaf[q], "ptram: role %d on leaf %d in the constructor, %d serially", p,
                      leaf[q], mapped[p]))
            break;
    }
    for (int p = 0; p < size; p++) {
        int unit;
        mpitopo_machine_unit_of(m, node_level, leaf[p], &unit);
        launch_end[p] = unit_end[unit];
        mpitopo_machine_unit_of(m, node_level, mapped[p], &unit);
        mapped_end[p] = unit_end[unit];
    }
    mpitopo_network_metrics_t before, after;
    MT_CHECK_RC(mpitopo_network_evaluate(net, pat, launch_end, NULL, NULL, &before));
    MT_CHECK_RC(mpitopo_network_evaluate(net, pat, mapped_end, NULL, NULL, &after));
    MT_CHECK(after.hybrid <= before.hybrid, "ptram: hybrid %g above the launch's %g", after.hybrid,
             before.hybrid);
cleanup:
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    free(leaf);
    free(newranks);
    free(ends);
    free(unit_end);
    free(src);
    free(dsts);
    free(bytes);
    free(mapped);
    free(launch_end);
    free(mapped_end);
    MPI_Comm_free(&g);
}

/* Copy a file, every "node3" becoming host. 0 on failure. */
static int copy_renamed(const char *from, const char *to, const char *host)
{
    FILE *in = fopen(from, "r"), *out = fopen(to, "w");
    char line[512];
    int ok = in && out;
    while (ok && fgets(line, sizeof line, in)) {
        char *p = line, *hit;
        while ((hit = strstr(p, "node3")) != NULL) {
            fwrite(p, 1, (size_t)(hit - p), out);
            fputs(host, out);
            p = hit + 5;
        }
        fputs(p, out);
    }
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok;
}

/* The hand-written fabric with this host as "node3": the node on it by
 * host name, or the emulated nodes (emu) in order. */
static void check_fabric(const int *emu)
{
    char host[MPI_MAX_PROCESSOR_NAME + 1], dir[] = "/tmp/mt_fabricXXXXXX", desc[640] = "";
    int len;
    MPI_Get_processor_name(host, &len);
    host[strcspn(host, ".")] = '\0';
    if (rank == 0 && mkdtemp(dir)) {
        char t[300], r[300]; /* dir is 20 characters long */
        snprintf(t, sizeof t, "%s/f.topo", dir);
        snprintf(r, sizeof r, "%s/f.lfts", dir);
        if (copy_renamed(MT_DATA_DIR "/fabric/small.topo", t, host) &&
            copy_renamed(MT_DATA_DIR "/fabric/small.lfts", r, host))
            snprintf(desc, sizeof desc, "fabric:%s,%s", t, r);
    }
    MPI_Bcast(desc, sizeof desc, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!MT_CHECK(desc[0], "could not write the fabric files in %s", dir))
        return;
    /* The end node named after this host, in the fabric's own numbering. */
    mpitopo_network_t *ref = NULL;
    int n = 0, want = -1;
    MT_CHECK_RC(mpitopo_network_from_string(desc, &ref));
    if (ref)
        mpitopo_network_size(ref, &n, NULL, NULL);
    for (int e = 0; e < n; e++) {
        char name[256];
        mpitopo_network_node_name(ref, e, name, sizeof name);
        if (strncmp(name, host, strlen(host)) == 0 && name[strlen(host)] == ' ')
            want = e;
    }
    mpitopo_network_destroy(&ref);
    MT_CHECK(want >= 0, "host %s is not in %s", host, desc);
    MPI_Comm c = keyed(0, desc);
    /* Emulated nodes all run on this host: they go in order, names unused. */
    check_comm(c, desc, emu, want, emu ? "emulated nodes in order" : "by host name");
    MPI_Comm_free(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char f[300];
        snprintf(f, sizeof f, "%s/f.topo", dir);
        unlink(f);
        snprintf(f, sizeof f, "%s/f.lfts", dir);
        unlink(f);
        rmdir(dir);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *emu = emulated_nodes();
    const char *env = mt_getenv("MPITOPO_NETWORK");
    if (mt_getenv("MT_FABRIC")) {
        check_fabric(emu);
    } else if (emu) {
        if (env)
            check_comm(MPI_COMM_WORLD, env, emu, 0, "MPITOPO_NETWORK on world");
        if (env && size >= 4)
            check_ptram();
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
