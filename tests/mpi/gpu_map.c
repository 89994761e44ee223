/*
 * mpitopo_gpu_map (issue 20) on an emulated GPU cluster: run with
 * MPITOPO_EMULATE (e.g. node:4,core:4) and MPITOPO_GPU (a GPU description).
 * On MPI_COMM_WORLD and on both halves of a split (so comm need not be the
 * world), every rank checks that
 *  - newcomm holds comm's processes (congruent or similar, same size);
 *  - its device is a local GPU index in [0, GPUs per node), the processes
 *    of one node have distinct devices when the node has enough GPUs, and
 *    share them as local rank mod GPUs otherwise (the default assignment);
 *  - its new rank and device are those of the MPI-free mpitopo_map_gpu
 *    computed here on mpitopo_comm_machine()'s machine with the launch as
 *    baseline (rank 0 computes them in the library and scatters them);
 * with the description from MPITOPO_GPU, from the info key mpitopo_gpu
 * (fewer GPUs than processes per node), and strategy2 through the info key
 * mpitopo_gpu_mapper. Errors on every process alike: patterns of different
 * sizes or of the wrong size, a bad description, NULL outputs. Without any
 * description (MPITOPO_GPU unset here): when hwloc of this host finds no
 * GPU, a duplicate of comm and device -1.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize;

/* A 2-D torus of n = r x c processes over comm ranks, bytes per message
 * b_row along rows and b_col along columns: a pattern both sides know. */
static mpitopo_pattern_t *torus(int n, double b_row, double b_col)
{
    int c = 1;
    for (int k = 1; k * k <= n; k++)
        if (n % k == 0)
            c = k;
    int r = n / c;
    int m = 4 * n, e = 0;
    int *src = malloc((size_t)m * sizeof *src), *dst = malloc((size_t)m * sizeof *dst);
    double *bytes = malloc((size_t)m * sizeof *bytes), *msgs = malloc((size_t)m * sizeof *msgs);
    for (int p = 0; p < n; p++) {
        int i = p / c, j = p % c;
        int nb[4] = {((i + 1) % r) * c + j, ((i + r - 1) % r) * c + j, i * c + (j + 1) % c,
                     i * c + (j + c - 1) % c};
        for (int k = 0; k < 4; k++) {
            if (nb[k] == p)
                continue;
            src[e] = p, dst[e] = nb[k], bytes[e] = k < 2 ? b_col : b_row, msgs[e] = 1;
            e++;
        }
    }
    mpitopo_pattern_t *pat = NULL;
    MT_CHECK_RC(mpitopo_pattern_create(n, e, src, dst, bytes, msgs, &pat));
    free(src), free(dst), free(bytes), free(msgs);
    return pat;
}

/* One successful call on comm, checked against the local computation. */
static void check_map(MPI_Comm comm, const char *desc, const char *mapper, MPI_Info info, const char *label)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mpitopo_pattern_t *cpu = torus(size, 100, 1), *gpu = torus(size, 1, 1000);
    MPI_Comm newcomm = MPI_COMM_NULL;
    int device = -2;
    if (!MT_CHECK_RC(mpitopo_gpu_map(comm, cpu, gpu, info, &newcomm, &device)))
        goto out;
    int cmp = MPI_UNEQUAL, nsize = 0, nrank = -1;
    MPI_Comm_compare(comm, newcomm, &cmp);
    MPI_Comm_size(newcomm, &nsize);
    MPI_Comm_rank(newcomm, &nrank);
    MT_CHECK(cmp == MPI_CONGRUENT || cmp == MPI_SIMILAR, "%s: newcomm is not a permutation of comm (%d)", label,
             cmp);
    MT_CHECK(nsize == size, "%s: newcomm has %d processes, comm %d", label, nsize, size);

    /* The local computation, on the same machine and launch. */
    mpitopo_machine_t *m = NULL;
    mpitopo_gpus_t *gpus = NULL;
    int *launch = malloc((size_t)size * sizeof *launch), *leaf = malloc((size_t)size * sizeof *leaf);
    int *gpu_of = malloc((size_t)size * sizeof *gpu_of);
    int g = 0, level = -1, ok = MT_CHECK_RC(mpitopo_comm_machine(comm, &m, launch)) &&
                                  MT_CHECK_RC(mpitopo_gpus_load(desc, &gpus));
    if (ok) {
        mpitopo_gpus_count(gpus, &g);
        mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
        opt.launch = launch;
        opt.never_worse = 1;
        ok = MT_CHECK_RC(mpitopo_map_gpu(mapper, m, NULL, NULL, gpus, cpu, gpu, &opt, leaf, gpu_of));
    }
    if (ok) {
        int p = -1;
        for (int q = 0; q < size; q++)
            if (leaf[q] == launch[rank])
                p = q;
        MT_CHECK(p == nrank, "%s: rank %d got new rank %d, mpitopo_map_gpu gives %d", label, rank, nrank, p);
        MT_CHECK(p >= 0 && device == gpu_of[p], "%s: rank %d got device %d, mpitopo_map_gpu gives %d", label,
                 rank, device, p >= 0 ? gpu_of[p] : -1);
        MT_CHECK(device >= 0 && device < g, "%s: device %d outside [0, %d)", label, device, g);
        /* Per node: distinct devices when there are enough, else local
         * rank mod g. */
        mpitopo_machine_node_level(m, &level);
        int me[2] = {0, device}, *all = malloc(2 * (size_t)size * sizeof *all);
        mpitopo_machine_unit_of(m, level, launch[rank], &me[0]);
        MPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, newcomm);
        int on_node = 0, local = 0;
        for (int q = 0; q < size; q++)
            on_node += all[2 * q] == me[0], local += all[2 * q] == me[0] && q < nrank;
        for (int q = 0; q < size; q++)
            if (q != nrank && all[2 * q] == me[0] && on_node <= g)
                MT_CHECK(all[2 * q + 1] != device, "%s: ranks %d and %d of node %d share GPU %d", label, nrank,
                         q, me[0], device);
        if (on_node > g)
            MT_CHECK(device == local % g, "%s: %d processes on %d GPUs: device %d, expected local rank %d mod %d",
                     label, on_node, g, device, local, g);
        free(all);
    }
    free(launch), free(leaf), free(gpu_of);
    mpitopo_gpus_destroy(&gpus);
    mpitopo_machine_destroy(&m);
    MPI_Comm_free(&newcomm);
out:
    mpitopo_pattern_destroy(&cpu);
    mpitopo_pattern_destroy(&gpu);
}

/* A call every process must fail with `code`, its message naming `needle`. */
static void check_error(MPI_Comm comm, const mpitopo_pattern_t *cpu, const mpitopo_pattern_t *gpu, MPI_Info info,
                        int null_device, int code, const char *needle, const char *label)
{
    MPI_Comm newcomm = MPI_COMM_NULL;
    int device = -2;
    int rc = mpitopo_gpu_map(comm, cpu, gpu, info, &newcomm, null_device ? NULL : &device);
    MT_CHECK(rc == code, "%s: rc %d (%s), expected %d", label, rc, mpitopo_last_error(), code);
    MT_CHECK(strstr(mpitopo_last_error(), needle), "%s: message '%s' lacks '%s'", label, mpitopo_last_error(),
             needle);
    MT_CHECK(newcomm == MPI_COMM_NULL, "%s: newcomm set on error", label);
    if (newcomm != MPI_COMM_NULL)
        MPI_Comm_free(&newcomm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const char *desc = mt_getenv("MPITOPO_GPU");
    if (!MT_CHECK(desc && *desc, "MPITOPO_GPU is not set")) {
        int rc = mt_finish("gpu_map");
        MPI_Finalize();
        return rc;
    }
    char saved[256];
    snprintf(saved, sizeof saved, "%s", desc);

    check_map(MPI_COMM_WORLD, saved, "magc", MPI_INFO_NULL, "world");
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half);
    check_map(half, saved, "magc", MPI_INFO_NULL, "half");

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_gpu", "package:1@38,gpu:2@16");
    check_map(MPI_COMM_WORLD, "package:1@38,gpu:2@16", "magc", info, "info 2 GPUs");
    MPI_Info_set(info, "mpitopo_gpu", saved);
    MPI_Info_set(info, "mpitopo_gpu_mapper", "strategy2");
    check_map(half, saved, "strategy2", info, "info strategy2");

    /* Errors, on every process. */
    mpitopo_pattern_t *p_world = torus(wsize, 1, 1), *p_small = wsize > 1 ? torus(wsize - 1, 1, 1) : NULL;
    if (p_small)
        check_error(MPI_COMM_WORLD, p_world, p_small, MPI_INFO_NULL, 0, MPITOPO_ERR_ARG, "gpu_pattern has",
                    "sizes differ");
    check_error(half, p_world, p_world, MPI_INFO_NULL, 0, MPITOPO_ERR_ARG, "cpu_pattern has", "size of comm");
    check_error(MPI_COMM_WORLD, p_world, p_world, MPI_INFO_NULL, 1, MPITOPO_ERR_ARG, "device = NULL", "NULL device");
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "mpitopo_gpu", "gpu:0");
    check_error(MPI_COMM_WORLD, p_world, p_world, bad, 0, MPITOPO_ERR_PARSE, "info mpitopo_gpu", "bad description");
    MPI_Info_free(&bad);

    /* No description: hwloc of this host (rank 0's). */
    unsetenv("MPITOPO_GPU");
    int host_gpus = 0;
    if (wrank == 0) {
        mpitopo_gpus_t *h = NULL;
        host_gpus = mpitopo_gpus_from_hwloc(NULL, &h) == MPITOPO_SUCCESS;
        mpitopo_gpus_destroy(&h);
    }
    MPI_Bcast(&host_gpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm dup = MPI_COMM_NULL;
    int device = -2, cmp = MPI_UNEQUAL;
    if (MT_CHECK_RC(mpitopo_gpu_map(MPI_COMM_WORLD, p_world, p_world, MPI_INFO_NULL, &dup, &device))) {
        MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
        if (!host_gpus) {
            MT_CHECK(device == -1, "no GPU: device %d, expected -1", device);
            MT_CHECK(cmp == MPI_CONGRUENT, "no GPU: newcomm is not a duplicate (%d)", cmp);
        } else {
            MT_CHECK(device >= 0, "hwloc GPUs: device %d", device);
        }
        MPI_Comm_free(&dup);
    }
    setenv("MPITOPO_GPU", saved, 1);

    mpitopo_pattern_destroy(&p_world);
    mpitopo_pattern_destroy(&p_small);
    MPI_Info_free(&info);
    MPI_Comm_free(&half);
    int rc = mt_finish("gpu_map");
    MPI_Finalize();
    return rc;
}
