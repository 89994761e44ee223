/* The parallel "ptram" mapper (ptram_par.c): the greedy step of Alg. 3.1
 * over one leader per node, the rest on rank 0 with the serial code, so
 * the mapping is exactly mpitopo_map_network's. */
#ifndef MPITOPO_PTRAM_PAR_H
#define MPITOPO_PTRAM_PAR_H

#include "mpi/mpi_internal.h"

/* What the parallel greedy did on the calling leader. */
typedef struct mpitopo__ptram_par_stats {
    int leaders, steps, scored_steps;  /* steps; those that needed the allgather */
    double t_setup, t_greedy, t_comm;  /* seconds: the problem's broadcast, the loop, its communication */
    int64_t max_delta;                 /* the largest increment broadcast (channels) */
    int64_t mem_bytes;                 /* what the loop allocated on this leader */
} mpitopo__ptram_par_stats_t;

/* Whether spec is "ptram" or "ptram:ARGS" and comm's cached machine has a
 * network (net, mpitopo__nodeinfo_network): then the graph constructors map
 * with the functions below. The same answer on every process of comm. */
int mpitopo__ptram_par_applies(const mpitopo_network_t *net, const char *spec);

/*
 * On rank 0 of `leaders` only: mpitopo_map_network(spec, machine, network,
 * end_node, pattern, options, leaf_of_proc, kept), with the greedy step
 * run by all the leaders (each serving with mpitopo__ptram_par_serve).
 * The caller then calls mpitopo__ptram_par_release once, whatever this
 * returned. stats may be NULL.
 */
int mpitopo__ptram_par_map(MPI_Comm leaders, const char *spec, const mpitopo_machine_t *machine,
                           const mpitopo_network_t *network, const int *end_node, const mpitopo_pattern_t *pattern,
                           const mpitopo_map_options_t *options, int *leaf_of_proc, int *kept,
                           mpitopo__ptram_par_stats_t *stats);

/* On rank 0 of `leaders`: no greedy step follows (collective with serve). */
int mpitopo__ptram_par_release(MPI_Comm leaders);

/* On the other leaders: take part in every greedy step rank 0 starts until
 * it releases them. Their failures reach rank 0 (and it reports them);
 * only MPI errors are returned. stats may be NULL (the last greedy's). */
int mpitopo__ptram_par_serve(MPI_Comm leaders, const mpitopo_network_t *network, mpitopo__ptram_par_stats_t *stats);

#endif
