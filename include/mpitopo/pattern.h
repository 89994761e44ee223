#ifndef MPITOPO_PATTERN_H
#define MPITOPO_PATTERN_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/pattern.h>
#endif

#include <mpitopo/export.h>

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A communication pattern: a directed, weighted, sparse graph over nprocs
 * processes (nprocs >= 1), stored in CSR form (out-edges of each process
 * sorted by destination). Every edge carries two weights: bytes and
 * messages, finite and >= 0. Constructors merge duplicate edges (summing
 * both weights, in input order) and keep self edges (which never cross any
 * machine level); the Cartesian generator makes none. A merged sum that
 * overflows to infinity is an error (MPITOPO_ERR_RANGE).
 */
typedef struct mpitopo_pattern mpitopo_pattern_t;

#define MPITOPO_MAX_DIMS 32

/* Which weight of an edge an algorithm or metric uses. */
typedef enum mpitopo_weight {
    MPITOPO_WEIGHT_BYTES = 0,    /* bytes sent along the edge */
    MPITOPO_WEIGHT_MESSAGES = 1, /* number of messages along the edge */
    MPITOPO_WEIGHT_UNIT = 2      /* 1 per edge */
} mpitopo_weight_t;

/* Parse "bytes", "messages" or "unit"; MPITOPO_ERR_NOT_FOUND otherwise.
 * mpitopo_weight_name gives the name back ("unknown" for other values). */
MPITOPO_API int mpitopo_weight_from_string(const char *s, mpitopo_weight_t *weight);
MPITOPO_API const char *mpitopo_weight_name(mpitopo_weight_t weight);

typedef enum mpitopo_stencil_kind {
    MPITOPO_STENCIL_STAR = 0,   /* +-k along each axis, k = 1..radius: 2*radius*ndims offsets */
    MPITOPO_STENCIL_MOORE = 1,  /* every offset in [-radius, radius]^ndims but 0 */
    MPITOPO_STENCIL_OFFSETS = 2 /* the explicit list below */
} mpitopo_stencil_kind_t;

/*
 * A Cartesian stencil. Each offset o gives one message per process, to the
 * process at coords + o (wrapped in periodic dimensions, dropped beyond the
 * border of open ones), of
 *     bytes * offset_weights[o] * prod over {i : o_i != 0} of dim_weights[i]
 * bytes (the optional arrays count as 1 when NULL).
 */
typedef struct mpitopo_stencil {
    mpitopo_stencil_kind_t kind;
    int radius;                   /* STAR and MOORE: >= 0 */
    int noffsets;                 /* OFFSETS: number of offsets */
    const int *offsets;           /* OFFSETS: noffsets x ndims, row-major */
    const double *offset_weights; /* OFFSETS: NULL or noffsets factors >= 0 */
    const double *dim_weights;    /* NULL or ndims factors >= 0 */
    double bytes;                 /* bytes of one message, >= 0 */
} mpitopo_stencil_t;

/* Star stencil of radius 1 (the 2*ndims face neighbours), one byte each. */
#define MPITOPO_STENCIL_DEFAULT {MPITOPO_STENCIL_STAR, 1, 0, NULL, NULL, NULL, 1.0}

/* From coordinate lists: src[e] -> dst[e] with bytes[e] and msgs[e]
 * (NULL means 1 for every edge); the arrays are copied.
 * Errors: MPITOPO_ERR_ARG (nprocs < 1, nedges < 0, NULL arrays, a weight
 * negative or not finite), MPITOPO_ERR_RANGE (an id outside [0, nprocs), a
 * merged weight overflowing), MPITOPO_ERR_NOMEM. */
MPITOPO_API int mpitopo_pattern_create(int nprocs, int64_t nedges, const int *src, const int *dst,
                                       const double *bytes, const double *msgs,
                                       mpitopo_pattern_t **pattern);

/* Cartesian grid: processes numbered row-major (last dimension fastest, as
 * MPI_Cart_create does). periods NULL means all periodic (any non-zero
 * entry is periodic); stencil NULL means MPITOPO_STENCIL_DEFAULT. The
 * pattern remembers the grid and stencil (see mpitopo_pattern_cart_info) so
 * metrics can compute the best-box bound.
 * ndims may be 0 (one process, no edges). dims[i] >= 1, prod(dims) <= 2^31-1.
 * In small periodic dimensions several offsets can reach the same peer
 * (size 2: +1 and -1): their messages are merged into one edge; an offset
 * that wraps onto the process itself (size 1) gives no edge. Explicit
 * offsets must not be all zero. Time O(nprocs * offsets).
 * Errors: MPITOPO_ERR_ARG, MPITOPO_ERR_RANGE (more than 2^31-1 processes or
 * stencil offsets, bytes overflowing), MPITOPO_ERR_NOMEM. */
MPITOPO_API int mpitopo_pattern_cart(int ndims, const int *dims, const int *periods,
                                     const mpitopo_stencil_t *stencil, mpitopo_pattern_t **pattern);

/* Erdos-Renyi: every ordered pair (i, j), i != j, is an edge with
 * probability density (in [0, 1]), independently; one message of one byte
 * each. Time O(nprocs + edges). Deterministic for a given seed on every
 * platform (the gaps between edges go through log(); a C library whose log
 * differs in the last bit could, very rarely, shift one edge). */
MPITOPO_API int mpitopo_pattern_random(int nprocs, double density, uint64_t seed,
                                       mpitopo_pattern_t **pattern);

/* Rings of ring_size consecutive processes (the last ring may be shorter):
 * each process sends one message of one byte to the next one in its ring.
 * A ring of 2 gives both directions, a ring of 1 no edge. nprocs and
 * ring_size >= 1. */
MPITOPO_API int mpitopo_pattern_rings(int nprocs, int ring_size, mpitopo_pattern_t **pattern);

/* Every ordered pair (i, j), i != j: one message of one byte. */
MPITOPO_API int mpitopo_pattern_complete(int nprocs, mpitopo_pattern_t **pattern);

/*
 * From a description:
 *   cart:DIMS[:open|:periods=P,P..][:star=R|:moore=R|:offsets=O;O;..][:weights=W,W..][:bytes=B]
 *        DIMS like 128x128 or 16x32x32; periodic unless :open; star radius 1
 *        by default; an offset O is ndims comma-separated integers;
 *        weights are the per-dimension factors (stencil dim_weights), one
 *        per dimension; options come in any order, each at most once.
 *   random:N:DENSITY:SEED    ring:N:K    complete:N
 *        SEED a decimal integer in [0, 2^63-1].
 * Errors name the offending field: MPITOPO_ERR_PARSE (also for unknown
 * kinds), MPITOPO_ERR_RANGE (too many processes or offsets, overflowing
 * bytes), MPITOPO_ERR_NOMEM, MPITOPO_ERR_ARG (NULL pointers).
 */
MPITOPO_API int mpitopo_pattern_from_string(const char *desc, mpitopo_pattern_t **pattern);

/*
 * Pattern files (text, UTF-8/ASCII):
 *
 *   # comments run from '#' to the end of the line; blank lines are ignored
 *   mpitopo-pattern 1 NPROCS        first non-comment line: format, version, processes
 *   SRC DST BYTES MESSAGES          one edge per line, as many as needed
 *
 * NPROCS is an integer in [1, 2^31-1]; SRC and DST are integers in
 * [0, NPROCS); BYTES and MESSAGES are finite non-negative decimal numbers
 * (no hex, inf or nan). Fields are separated by blanks or tabs; lines end
 * with LF or CRLF, the last one may lack it; NUL bytes are refused. Repeated
 * edges are summed. Errors (MPITOPO_ERR_FORMAT) give the line number:
 * "pattern.txt:12: DST = 70 out of range [0, 64)". mpitopo_pattern_read
 * also fails with MPITOPO_ERR_IO (naming the path and the system's reason).
 */
MPITOPO_API int mpitopo_pattern_read(const char *path, mpitopo_pattern_t **pattern);
/* The same format from memory (len bytes, need not be NUL-terminated);
 * `name` is used in error messages. */
MPITOPO_API int mpitopo_pattern_parse(const char *text, size_t len, const char *name,
                                      mpitopo_pattern_t **pattern);
/* Write in the format above; weights are printed exactly (%.17g), so
 * reading the file back gives the same pattern bit for bit. The stream is
 * flushed, not closed. MPITOPO_ERR_IO when writing fails. */
MPITOPO_API int mpitopo_pattern_write(const mpitopo_pattern_t *pattern, const char *path);
MPITOPO_API int mpitopo_pattern_write_stream(const mpitopo_pattern_t *pattern, FILE *stream);

MPITOPO_API void mpitopo_pattern_destroy(mpitopo_pattern_t **pattern);

MPITOPO_API int mpitopo_pattern_nprocs(const mpitopo_pattern_t *pattern, int *nprocs);
MPITOPO_API int mpitopo_pattern_nedges(const mpitopo_pattern_t *pattern, int64_t *nedges);
/* Out-edges of `proc`: pointers into the pattern, valid while it lives. Any
 * out-pointer but degree may be NULL. MPITOPO_ERR_RANGE if proc is not in
 * [0, nprocs). */
MPITOPO_API int mpitopo_pattern_out_edges(const mpitopo_pattern_t *pattern, int proc, int *degree,
                                          const int **dst, const double **bytes,
                                          const double **msgs);
/* Weight of an edge under `weight`. */
static inline double mpitopo_edge_weight(mpitopo_weight_t weight, double bytes, double msgs)
{
    return weight == MPITOPO_WEIGHT_BYTES ? bytes : weight == MPITOPO_WEIGHT_MESSAGES ? msgs : 1.0;
}
/* Grid of a Cartesian pattern. *is_cart = 0 (and *ndims = 0) for other
 * patterns. dims and periods (MPITOPO_MAX_DIMS entries each, may be NULL)
 * receive the grid, periods as 0 or 1. Any out-pointer may be NULL. */
MPITOPO_API int mpitopo_pattern_cart_info(const mpitopo_pattern_t *pattern, int *is_cart,
                                          int *ndims, int *dims, int *periods);

/*
 * The arguments of MPI_Dist_graph_create_adjacent for process `proc` of a
 * pattern (a traced one, say): its in-neighbours (sources) and
 * out-neighbours (destinations) in increasing rank order, self edges
 * included, with integer weights from `weight`. Weights are rounded to the
 * nearest integer and at least 1 (an edge in the pattern is communication);
 * when the pattern's largest weight exceeds INT_MAX all weights are scaled
 * by INT_MAX / largest first, the same on every process. The arrays are
 * allocated by the library (free them with mpitopo_free; any may be NULL
 * on return when its degree is 0). Time O(E) (in-edges need a scan); memory
 * O(degree). Errors: MPITOPO_ERR_ARG (NULL pointers, bad weight),
 * MPITOPO_ERR_RANGE (proc out of [0, nprocs)), MPITOPO_ERR_NOMEM.
 */
MPITOPO_API int mpitopo_pattern_adjacent(const mpitopo_pattern_t *pattern, int proc,
                                         mpitopo_weight_t weight, int *indegree, int **sources,
                                         int **sourceweights, int *outdegree, int **destinations,
                                         int **destweights);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_PATTERN_H */
