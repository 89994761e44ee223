/*
 * ptram_par: the parallel ptram's greedy step (src/mpi/ptram_par.c) with
 * every process of MPI_COMM_WORLD a node leader: NODES = size nodes of
 * CORES cores under a network, a halo pattern of NODES x CORES processes.
 * Rank 0 maps with mpitopo__ptram_par_map (the internal entry point the
 * graph constructors use; SMPI has no dist-graph calls), the others serve;
 * then rank 0 maps serially with mpitopo_map_network and checks that both
 * agree. Prints the time per greedy step, the communication's share, the
 * largest memory of the greedy's arrays on a leader, and the serial times.
 *
 *   ptram_par [--network DESC] [--cores C] [--pattern 2d|3d] [--spec ptram[:ARGS]]
 *
 * Defaults: gpc, 8 cores, 2d (a 2-D 5-point halo weighted 3x along x;
 * 3d: the 3-D 15-point halo), ptram.
 */
#include "map/ptram_internal.h"
#include "mpi/ptram_par.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what, int rc)
{
    fprintf(stderr, "ptram_par: %s: %s (%s)\n", what, mpitopo_err_name(rc), mpitopo_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

/* The pattern of n processes: a weighted 2-D 5-point or a 3-D 15-point halo. */
static mpitopo_pattern_t *halo(int n, int three)
{
    int dims[3] = {0, 0, 0};
    char desc[128];
    MPI_Dims_create(n, three ? 3 : 2, dims);
    if (three)
        snprintf(desc, sizeof desc, "cart:%dx%dx%d:offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;"
                 "1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;-1,-1,1;-1,-1,-1", dims[0], dims[1], dims[2]);
    else
        snprintf(desc, sizeof desc, "cart:%dx%d:weights=3,1", dims[0], dims[1]);
    mpitopo_pattern_t *p = NULL;
    int rc = mpitopo_pattern_from_string(desc, &p);
    if (rc != MPITOPO_SUCCESS)
        die(desc, rc);
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, cores = 8, three = 0;
    const char *netdesc = "gpc", *spec = "ptram";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--network") == 0)
            netdesc = argv[i + 1];
        else if (strcmp(argv[i], "--cores") == 0)
            cores = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--pattern") == 0)
            three = strcmp(argv[i + 1], "3d") == 0;
        else if (strcmp(argv[i], "--spec") == 0)
            spec = argv[i + 1];
    }
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_string(netdesc, &net);
    if (rc != MPITOPO_SUCCESS)
        die(netdesc, rc);
    mpitopo__ptram_par_stats_t st = {0};
    double t0 = MPI_Wtime(), t_par = 0;
    if (rank == 0) {
        char desc[64];
        snprintf(desc, sizeof desc, "node:%d core:%d", size, cores);
        mpitopo_machine_t *flat = NULL, *m = NULL;
        if ((rc = mpitopo_machine_from_string(desc, &flat)) != MPITOPO_SUCCESS ||
            (rc = mpitopo_network_machine(net, flat, NULL, &m, NULL)) != MPITOPO_SUCCESS)
            die(desc, rc);
        int n = size * cores, kept = 0, kept2 = 0;
        mpitopo_pattern_t *pat = halo(n, three);
        int *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
        opt.never_worse = 1;
        rc = mpitopo__ptram_par_map(MPI_COMM_WORLD, spec, m, net, NULL, pat, &opt, a, &kept, &st);
        int rrc = mpitopo__ptram_par_release(MPI_COMM_WORLD);
        t_par = MPI_Wtime() - t0;
        if (rc != MPITOPO_SUCCESS || rrc != MPI_SUCCESS)
            die("the parallel mapping", rc);
        /* the serial mapper, its statistics, then the public call */
        mpitopo__ptram_params_t prm;
        mpitopo__ptram_stats_t ss;
        mpitopo__ptram_parse(spec[5] == ':' ? spec + 6 : NULL, &prm);
        double t1 = MPI_Wtime();
        if ((rc = mpitopo__ptram_run(m, pat, &opt, net, NULL, &prm, b, &ss)) != MPITOPO_SUCCESS)
            die("the serial mapping", rc);
        double t_ser = MPI_Wtime() - t1;
        if ((rc = mpitopo_map_network(spec, m, net, NULL, pat, &opt, b, &kept2)) != MPITOPO_SUCCESS)
            die("mpitopo_map_network", rc);
        int same = memcmp(a, b, (size_t)n * sizeof *a) == 0 && kept == kept2;
        int64_t mem_max = st.mem_bytes;
        double greedy_max = st.t_greedy;
        MPI_Reduce(MPI_IN_PLACE, &mem_max, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(MPI_IN_PLACE, &greedy_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        int nch = 0;
        int64_t channels;
        mpitopo_network_size(net, NULL, &channels, NULL);
        nch = (int)channels;
        printf("leaders %d processes %d network %s pattern %s spec %s\n", size, n, netdesc, three ? "3d15" : "2d5w",
               spec);
        printf("parallel greedy: %d steps (%d scored) %.6f s, %.3f ms per step, %.3f ms per scored step, "
               "communication %.1f %%, parts' graph broadcast %.6f s, largest increment %lld channels\n",
               st.steps, st.scored_steps, st.t_greedy, 1e3 * st.t_greedy / (st.steps ? st.steps : 1),
               1e3 * st.t_greedy / (st.scored_steps ? st.scored_steps : 1),
               st.t_greedy > 0 ? 100 * st.t_comm / st.t_greedy : 0.0, st.t_setup, (long long)st.max_delta);
        printf("parallel mapping total %.6f s; greedy's arrays per leader max %.1f KiB (network: %d channels)\n",
               t_par, mem_max / 1024.0, nch);
        printf("serial: greedy %.6f s (%.3f ms per step), partition %.6f s, refinement %.6f s, total %.6f s\n",
               ss.t_greedy, 1e3 * ss.t_greedy / (ss.nparts ? ss.nparts : 1), ss.t_part, ss.t_refine, t_ser);
        printf("same mapping as mpitopo_map_network: %s\n", same ? "yes" : "NO");
        free(a);
        free(b);
        mpitopo_pattern_destroy(&pat);
        mpitopo_machine_destroy(&m);
        mpitopo_machine_destroy(&flat);
        if (!same)
            MPI_Abort(MPI_COMM_WORLD, 2);
    } else {
        if (mpitopo__ptram_par_serve(MPI_COMM_WORLD, net, &st) != MPI_SUCCESS)
            die("serving", MPITOPO_ERR_INTERNAL);
        int64_t mem = st.mem_bytes;
        double g = st.t_greedy;
        MPI_Reduce(&mem, NULL, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&g, NULL, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    }
    mpitopo_network_destroy(&net);
    MPI_Finalize();
    return 0;
}
