/* Slurm's view of the machine above the nodes (slurm.c, issue 32): the
 * switch tree of topology.conf (topology/tree) or its blocks
 * (topology/block), and the switch path of SLURM_TOPOLOGY_ADDR. MPI-free:
 * the MPI layer (src/mpi/comm_machine.c) and the CLI (slurm:FILE machines)
 * share it. */
#ifndef MPITOPO_NETWORK_SLURM_H
#define MPITOPO_NETWORK_SLURM_H

#include "core/internal.h"
#include <mpitopo/machine.h>

/* Most levels above the node that Slurm may give (switch depth, or block
 * aggregation levels): a node and at least one level inside it follow. */
#define MPITOPO__SLURM_MAX_DEPTH 12

typedef struct mpitopo__slurm mpitopo__slurm_t;

/* One host of a Slurm host list ("node[01-16,20],login1"), for the callback
 * of mpitopo__slurm_hostlist: name is NUL-terminated; a non-zero return
 * stops the expansion. */
typedef int (*mpitopo__slurm_host_fn)(void *ctx, const char *name);

/* Expand list[0..len) into host names, in order. Returns 0, 1 when the
 * callback stopped it, or -1 with why (at most whysize bytes) on a malformed
 * list or one of more than 2^20 hosts. */
int mpitopo__slurm_hostlist(const char *list, size_t len, mpitopo__slurm_host_fn fn, void *ctx,
                            char *why, size_t whysize);

/* Read topology.conf at path (errors name path:line, reported as func);
 * mpitopo__slurm_parse reads text[0..len) named file. *out is NULL on error. */
int mpitopo__slurm_read(const char *path, const char *func, mpitopo__slurm_t **out);
int mpitopo__slurm_parse(const char *file, const char *text, size_t len, const char *func,
                         mpitopo__slurm_t **out);
void mpitopo__slurm_free(mpitopo__slurm_t **t);

/* "tree" or "block"; the hosts in file order; a 64-bit digest of the file. */
const char *mpitopo__slurm_kind(const mpitopo__slurm_t *t);
int mpitopo__slurm_nhosts(const mpitopo__slurm_t *t);
const char *mpitopo__slurm_host(const mpitopo__slurm_t *t, int h);
uint64_t mpitopo__slurm_digest(const mpitopo__slurm_t *t);

/* The host called name: the whole name, else its short name (up to the
 * first '.') when one host has it; -1 when none. */
int mpitopo__slurm_find(const mpitopo__slurm_t *t, const char *name);

/* The path of host h from the top down: *depth labels (ids of switches or
 * blocks, >= 0), and the link speed of each (0 when the file gives none). */
void mpitopo__slurm_path(const mpitopo__slurm_t *t, int h, int *depth, int64_t *labels,
                         double *speeds);

/* The link speed of the switch of label (a label of mpitopo__slurm_path),
 * 0 when none is given or t is NULL. */
double mpitopo__slurm_speed(const mpitopo__slurm_t *t, int64_t label);

/*
 * Levels above the node for n entries whose paths have depth[i] labels
 * (labels + i * MPITOPO__SLURM_MAX_DEPTH, speeds alike or NULL): shallow
 * paths are padded with their last label, leading levels with a single
 * unit dropped. Writes *nlevels, out[i * MPITOPO__SLURM_MAX_DEPTH + l]
 * (labels >= 0, distinct among siblings), the level names (kind "tree":
 * "switch" at the bottom, "switch2", "switch3" above; "block": "block",
 * "block2", ...) and cost factors: 1 for equal links, else the fastest
 * speed over the slowest one on the way up from level l. depth[i] >= 1.
 */
int mpitopo__slurm_levels(int n, const int *depth, const int64_t *labels, const double *speeds,
                          const char *kind, int *nlevels, int *out,
                          char names[][MPITOPO_MAX_NAME], double *factor);

/*
 * The machine of the hosts (nhosts names, in this order; NULL: every host
 * of the file, in file order): the levels above the node from t, then
 * "node", then the levels of inner (a machine description without a
 * "node" level: "core:4", "socket:2 core:8"), costs by default counting
 * from the bottom, those above the node multiplied by their factor.
 * Nodes follow the tree: the hosts of one switch together, in the given
 * order among them; node_of_host (NULL, or n ints) receives the node of
 * every host.
 */
int mpitopo__slurm_machine(const mpitopo__slurm_t *t, int nhosts, const char *const *hosts,
                           const char *inner, mpitopo_machine_t **machine, int *node_of_host);

/* SLURM_TOPOLOGY_ADDR ("s0.s3.node12") with its pattern
 * ("switch.switch.node"): the switches' labels (64-bit hashes of their
 * names) from the top, *depth of them. -1 with why when they do not
 * match. */
int mpitopo__slurm_addr(const char *addr, const char *pattern, int *depth, int64_t *labels,
                        char *why, size_t whysize);

#endif /* MPITOPO_NETWORK_SLURM_H */
