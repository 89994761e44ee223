/* Helpers shared by the MPI benchmarks of bench/ (not part of the library). */
#ifndef MPITOPO_BENCH_UTIL_H
#define MPITOPO_BENCH_UTIL_H

#include <mpitopo.h>

/* A decimal integer in [lo, hi], the whole string: 0, else -1. */
int bench_parse_long(const char *s, long lo, long hi, long *out);

/* Message sizes "MAX" (1..MAX) or "MIN:MAX", powers of two in [1, 2^26]:
 * 0, else -1 (OSU's -m). */
int bench_parse_sizes(const char *s, long *min, long *max);
int bench_parse_sizes_step(const char *s, long *min, long *max, long *step);

/* A comma-separated list of names among names[0..n) (or alias[k], when
 * alias is not NULL): use[k] = 1 for the listed ones, 0 for the others.
 * -1 for an unknown name or a list longer than 255 characters. */
int bench_parse_names(const char *s, const char *const *names, const char *const *alias, int n, int *use);

/* The node of every world rank (O(P) ints: a benchmark, not the library),
 * from mpitopo_comm_nodeinfo; *ni receives the node information. Prints
 * "PROG: ..." on failure. Collective over MPI_COMM_WORLD. */
int bench_world_nodes(const char *prog, int **node_of, const mpitopo_nodeinfo_t **ni);

#endif
