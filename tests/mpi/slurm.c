/*
 * The levels above the nodes from Slurm (issue 32), on emulated nodes
 * named as in a topology.conf: the testlist line sets SLURM_JOB_ID,
 * SLURM_JOB_NODELIST (emulated node k is its k-th host) and
 * MPITOPO_EMULATE; MT_SLURM says where the switches come from:
 *
 *   conf     topology.conf beside SLURM_CONF (set here to
 *            tests/data/slurm/MT_SLURM_DIR/slurm.conf): no mpitopo variable
 *            but the emulation. Checks the levels (switch, node, ...), that
 *            two ranks share a switch exactly when their hosts do in the
 *            file, the source line, and that mpitopo_cart_create's mapping
 *            of a periodic grid (MT_GRID, e.g. 8x4) never raises the
 *            traffic leaving the switches against the launch placement, and
 *            with MT_HALVE=1 at least halves it.
 *   addr     every task's SLURM_TOPOLOGY_ADDR (set here from its host:
 *            "spine.leafS.nodeNN"; with MT_MIXED=1 the hosts of leaf 2 say
 *            "leaf2.nodeNN", one level shallower): the same switches.
 *   missing  SLURM_TOPOLOGY_ADDR on even ranks only: the same error
 *            (MPITOPO_ERR_MISMATCH, naming processes 0 and 1) everywhere.
 *   error    MPITOPO_SLURM_TOPOLOGY = tests/data/slurm/MT_SLURM_FILE: the
 *            error MT_EXPECT_CODE with MT_EXPECT_MSG on every process.
 *   none     no levels above the node (MPITOPO_SLURM=off, or
 *            MPITOPO_NETWORK taking precedence: MT_EXPECT_SOURCE).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLURM_DATA MT_DATA_DIR "/slurm/"

static int rank, size;

/* The hosts of leaf switch s in leaf4x16/topology.conf: node[4s-3..4s]. */
static int leaf_of_host(int host) /* host: 1 for node01 */
{
    return (host - 1) / 4 + 1;
}

/* The host number (1 for node01) of emulated node k of SLURM_JOB_NODELIST,
 * which the lines give as node[..] ranges. */
static int host_of_node(int k)
{
    const char *list = mt_getenv("SLURM_JOB_NODELIST");
    int hosts[64], n = 0;
    /* "node[01-02,05-06]": ranges only. */
    const char *p = strchr(list, '[');
    while (p && *p && *p != ']' && n < 64) {
        p++;
        int lo = atoi(p), hi = lo;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p == '-') {
            hi = atoi(++p);
            while (*p >= '0' && *p <= '9')
                p++;
        }
        for (int v = lo; v <= hi && n < 64; v++)
            hosts[n++] = v;
    }
    return k < n ? hosts[k] : -1;
}

/* The emulated node of every world rank. */
static int *emulated_nodes(void)
{
    mpitopo_machine_t *emu = NULL;
    int *leaf = NULL, node_level;
    if (!mt_emulation(&emu, &leaf) || !MT_CHECK(emu, "MPITOPO_EMULATE is not set"))
        return NULL;
    mpitopo_machine_node_level(emu, &node_level);
    for (int r = 0; r < size; r++)
        mpitopo_machine_unit_of(emu, node_level, leaf[r], &leaf[r]);
    mpitopo_machine_destroy(&emu);
    return leaf;
}

static void set_addr(const int *node, int mixed)
{
    char addr[64];
    int host = host_of_node(node[rank]), leaf = leaf_of_host(host);
    if (mixed && leaf == 2) {
        snprintf(addr, sizeof addr, "leaf2.node%02d", host);
        setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.node", 1);
    } else {
        snprintf(addr, sizeof addr, "spine.leaf%d.node%02d", leaf, host);
        setenv("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node", 1);
    }
    setenv("SLURM_TOPOLOGY_ADDR", addr, 1);
}

/* Levels, sharing of switches, the source line. */
static void check_machine(const mpitopo_machine_t *m, const int *leaf_of_rank, const int *node,
                          const char *want_source)
{
    int node_level, nleaves;
    mpitopo_machine_node_level(m, &node_level);
    mpitopo_machine_nleaves(m, &nleaves);
    int leaves[64] = {0}, nl = 0;
    for (int r = 0; r < size; r++) {
        int l = leaf_of_host(host_of_node(node[r]));
        int seen = 0;
        for (int i = 0; i < nl; i++)
            seen |= leaves[i] == l;
        if (!seen && nl < 64)
            leaves[nl++] = l;
    }
    int mixed = mt_getenv("MT_MIXED") != NULL;
    int want_above = nl <= 1 ? 0 : mixed ? 2 : 1;
    if (!MT_CHECK(node_level == want_above, "node level %d, expected %d (%d leaf switches used)",
                  node_level, want_above, nl))
        return;
    const char *name = NULL;
    if (want_above) {
        mpitopo_machine_level(m, node_level - 1, &name, NULL, NULL, NULL, NULL);
        MT_CHECK(!strcmp(name, "switch"), "level %d is \"%s\", not \"switch\"", node_level - 1,
                 name);
    }
    for (int a = 0; a < size; a++)
        for (int b = 0; b < size && want_above; b++) {
            int ua, ub;
            mpitopo_machine_unit_of(m, node_level - 1, leaf_of_rank[a], &ua);
            mpitopo_machine_unit_of(m, node_level - 1, leaf_of_rank[b], &ub);
            int same = leaf_of_host(host_of_node(node[a])) == leaf_of_host(host_of_node(node[b]));
            if (!MT_CHECK((ua == ub) == same, "ranks %d and %d: switch units %d and %d, hosts "
                          "node%02d and node%02d", a, b, ua, ub, host_of_node(node[a]),
                          host_of_node(node[b])))
                return;
        }
    char source[320];
    if (MT_CHECK_RC(mpitopo_comm_machine_source(MPI_COMM_WORLD, source, sizeof source)))
        MT_CHECK(strstr(source, want_source), "source \"%s\" lacks \"%s\"", source, want_source);
}

/* mpitopo_cart_create on MT_GRID: the traffic leaving the switches. */
static void check_mapping(const mpitopo_machine_t *m, const int *leaf_of_rank)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1}, node_level;
    const char *grid = mt_getenv("MT_GRID");
    if (!grid || sscanf(grid, "%dx%d", &dims[0], &dims[1]) != 2)
        return;
    mpitopo_machine_node_level(m, &node_level);
    MPI_Comm cart;
    if (!MT_CHECK_RC(mpitopo_cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart)))
        return;
    int newrank, *old_of_new = malloc((size_t)size * sizeof *old_of_new);
    int *mapped = malloc((size_t)size * sizeof *mapped);
    MPI_Comm_rank(cart, &newrank);
    MPI_Allgather(&rank, 1, MPI_INT, old_of_new, 1, MPI_INT, cart);
    for (int q = 0; q < size; q++)
        mapped[q] = leaf_of_rank[old_of_new[q]];
    mpitopo_pattern_t *p = NULL;
    mpitopo_metrics_t before, after;
    if (MT_CHECK_RC(mpitopo_pattern_cart(2, dims, periods, NULL, &p)) &&
        MT_CHECK_RC(mpitopo_metrics_compute(m, p, leaf_of_rank, MPITOPO_WEIGHT_BYTES, &before)) &&
        MT_CHECK_RC(mpitopo_metrics_compute(m, p, mapped, MPITOPO_WEIGHT_BYTES, &after))) {
        double b = before.levels[node_level - 1].weight_crossing;
        double a = after.levels[node_level - 1].weight_crossing;
        if (rank == 0)
            printf("slurm: grid %s, traffic leaving the switches: launch %g, mapped %g\n", grid,
                   b, a);
        if (mt_getenv("MT_HALVE"))
            MT_CHECK(b > 0 && a <= b / 2, "off-switch traffic %g -> %g: not halved", b, a);
        else
            MT_CHECK(a <= b, "off-switch traffic %g -> %g: worse", b, a);
    }
    mpitopo_pattern_destroy(&p);
    free(old_of_new);
    free(mapped);
    MPI_Comm_free(&cart);
}

static void check_error(int rc, int want, const char *msg)
{
    MT_CHECK(rc == want, "mpitopo_comm_machine returned %s, expected %s (%s)",
             mpitopo_err_name(rc), mpitopo_err_name(want), mpitopo_last_error());
    MT_CHECK(!msg || strstr(mpitopo_last_error(), msg), "message \"%s\" lacks \"%s\"",
             mpitopo_last_error(), msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *mode = mt_getenv("MT_SLURM");
    char path[512];
    int *node = emulated_nodes();
    if (!node || !MT_CHECK(mode, "MT_SLURM is not set")) {
        int status = mt_finish("slurm");
        MPI_Finalize();
        return status;
    }
    /* Inside a real Slurm job, the task's own address describes the real
     * host, not the emulated nodes: only the addr modes set one, below. */
    unsetenv("SLURM_TOPOLOGY_ADDR");
    if (!strcmp(mode, "conf")) {
        snprintf(path, sizeof path, SLURM_DATA "%s/slurm.conf", mt_getenv("MT_SLURM_DIR"));
        setenv("SLURM_CONF", path, 1);
    } else if (!strcmp(mode, "addr")) {
        set_addr(node, mt_getenv("MT_MIXED") != NULL);
    } else if (!strcmp(mode, "missing")) {
        if (rank % 2 == 0)
            set_addr(node, 0);
    } else if (!strcmp(mode, "error")) {
        snprintf(path, sizeof path, SLURM_DATA "%s", mt_getenv("MT_SLURM_FILE"));
        setenv("MPITOPO_SLURM_TOPOLOGY", path, 1);
    }
    mpitopo_machine_t *m = NULL;
    int *leaf_of_rank = malloc((size_t)size * sizeof *leaf_of_rank);
    int rc = mpitopo_comm_machine(MPI_COMM_WORLD, &m, leaf_of_rank);
    if (!strcmp(mode, "missing")) {
        check_error(rc, MPITOPO_ERR_MISMATCH,
                    "SLURM_TOPOLOGY_ADDR is set for process 0 of comm but not for process 1");
    } else if (!strcmp(mode, "error")) {
        const char *want = mt_getenv("MT_EXPECT_CODE");
        int code = !want                          ? MPITOPO_ERR_FORMAT
                   : !strcmp(want, "NOT_FOUND") ? MPITOPO_ERR_NOT_FOUND
                                                 : MPITOPO_ERR_FORMAT;
        check_error(rc, code, mt_getenv("MT_EXPECT_MSG"));
    } else if (MT_CHECK_RC(rc)) {
        if (!strcmp(mode, "none")) {
            int node_level;
            char source[320];
            mpitopo_machine_node_level(m, &node_level);
            const char *want = mt_getenv("MT_EXPECT_SOURCE");
            MT_CHECK(node_level == (mt_getenv("MPITOPO_NETWORK") ? 1 : 0), "node level %d",
                     node_level);
            if (MT_CHECK_RC(mpitopo_comm_machine_source(MPI_COMM_WORLD, source, sizeof source)))
                MT_CHECK(strstr(source, want ? want : "none"), "source \"%s\"", source);
        } else {
            check_machine(m, leaf_of_rank, node,
                          !strcmp(mode, "addr") ? "Slurm (SLURM_TOPOLOGY_ADDR)" : "topology.conf");
            if (!mt_failed())
                check_mapping(m, leaf_of_rank);
        }
    }
    mpitopo_machine_destroy(&m);
    free(leaf_of_rank);
    free(node);
    int status = mt_finish("slurm");
    MPI_Finalize();
    return status;
}
