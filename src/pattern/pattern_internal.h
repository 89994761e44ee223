/* Layout of a pattern, shared with the mappers and metrics. */
#ifndef MPITOPO_PATTERN_INTERNAL_H
#define MPITOPO_PATTERN_INTERNAL_H

#include "core/internal.h"

/* What a Cartesian generator remembers: the grid and the effective stencil.
 * Offsets that reach the same peer from every point (a periodic dimension
 * shorter than their spread, or an offset listed twice) are merged into one,
 * their bytes and messages summed; offsets that reach only the point itself
 * or nobody are dropped. So distinct offsets reach distinct neighbours, and
 * every offset gives exactly one edge from each process whose neighbour
 * exists, with the weights below: what the best-box bound counts on. */
typedef struct mpitopo__cart {
    int ndims;
    int dims[MPITOPO_MAX_DIMS];
    int periods[MPITOPO_MAX_DIMS];
    int noffsets;
    int *offsets;        /* noffsets x ndims */
    double *offset_bytes; /* noffsets */
    double *offset_msgs;  /* noffsets */
} mpitopo__cart_t;

/* CSR: out-edges of p are offs[p] .. offs[p+1]-1, sorted by dst, no
 * duplicates (merged at construction). */
struct mpitopo_pattern {
    int nprocs;
    int64_t nedges;
    int64_t *offs; /* nprocs + 1 */
    int *dst;
    double *bytes;
    double *msgs;
    mpitopo__cart_t *cart; /* NULL unless made by mpitopo_pattern_cart */
};

/* The longest line of a pattern file, its line end aside: an edge line is
 * under 100 bytes, the rest is room for comments. Bounds what a reader
 * holds before it can tell a file is not a pattern (/dev/zero). */
#define MPITOPO__PATTERN_MAX_LINE 4096

/* mpitopo_pattern_read_max (INT_MAX for mpitopo_pattern_read) reporting
 * as the public function `func`. */
int mpitopo__pattern_read_max(const char *path, int max_nprocs, const char *func, mpitopo_pattern_t **pattern);

/* Edges in coordinate form, the input of mpitopo__pattern_from_coo.
 * bytes (msgs) is allocated only with MPITOPO__COO_BYTES (_MSGS); without
 * it every edge weighs 1. Errors while growing or building are reported as
 * those of `func`, the public function at work. */
#define MPITOPO__COO_BYTES 1
#define MPITOPO__COO_MSGS 2
typedef struct mpitopo__coo {
    int64_t n, cap;
    int flags;
    const char *func;
    int *src;
    int *dst;
    double *bytes;
    double *msgs;
} mpitopo__coo_t;

void mpitopo__coo_init(mpitopo__coo_t *coo, int flags, const char *func);
/* Make room for at least cap edges. MPITOPO_ERR_NOMEM on failure. */
int mpitopo__coo_reserve(mpitopo__coo_t *coo, int64_t cap);
/* Append one edge (weights ignored unless kept), growing geometrically. */
int mpitopo__coo_push(mpitopo__coo_t *coo, int src, int dst, double bytes, double msgs);
void mpitopo__coo_free(mpitopo__coo_t *coo);

/* Build the CSR of nprocs processes from coo, which it consumes (freed and
 * reset on every path). No validation: ids must lie in [0, nprocs) and
 * weights be finite and >= 0. Duplicates are merged in input order (so the
 * sums are reproducible), self edges kept. MPITOPO_ERR_RANGE if a merged
 * weight overflows to infinity, MPITOPO_ERR_NOMEM. */
int mpitopo__pattern_from_coo(int nprocs, mpitopo__coo_t *coo, mpitopo_pattern_t **pattern);

/* The pattern "coll:ALG:N[:BYTES]" (coll_pattern.c): the messages of a
 * collective algorithm; s[0..len) is what follows "coll:", desc the whole
 * description for the messages. MPITOPO_ERR_PARSE for a bad field. */
int mpitopo__coll_pattern(const char *desc, const char *s, size_t len, mpitopo_pattern_t **pattern);

/*
 * The undirected weighted graph of a pattern (pattern/graph.c), CSR: the
 * neighbours of v are adj[offs[v]] .. adj[offs[v+1]-1], every edge stored
 * in both directions with the same weight, no self loops, no duplicates,
 * no zero weights. vw[v] is the vertex weight (processes a coarse vertex
 * stands for).
 */
typedef struct mpitopo__tgraph {
    int n;
    int64_t *offs;
    int *adj;
    double *w;
    int *vw;
} mpitopo__tgraph_t;

/* Allocate a graph of n vertices and nadj adjacency entries (offs zeroed,
 * vw all 1); NOMEM leaves g empty. */
int mpitopo__tgraph_alloc(mpitopo__tgraph_t *g, int n, int64_t nadj);
void mpitopo__tgraph_free(mpitopo__tgraph_t *g);
/* The pattern made undirected: w(u, v) = w(u -> v) + w(v -> u) under
 * weight, self edges and zero weights left out (tree.c). */
int mpitopo__tgraph_build(const mpitopo_pattern_t *pat, mpitopo_weight_t weight, mpitopo__tgraph_t *g);

/*
 * A star or Moore stencil, text[0..len): "moore=R" or "star=R", as in
 * Cartesian pattern descriptions (the one spelling; the deprecated "moore:R"
 * and "star:R" read the same). *moore 1 for Moore, 0 for star; *radius R.
 * Returns 0, -1 when text is no such stencil, -2 when R is not an integer
 * >= 0.
 */
int mpitopo__stencil_parse(const char *text, size_t len, int *moore, long long *radius);

#endif
