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

/**
 * @defgroup mpitopo_pattern Communication patterns
 * @ingroup mpitopo
 * @brief Communication patterns: directed, weighted, sparse graphs over processes.
 *
 * A communication pattern is a directed, weighted, sparse graph over nprocs
 * processes (nprocs >= 1), stored in CSR form (out-edges of each process
 * sorted by destination). Every edge carries two weights: bytes and
 * messages, finite and >= 0. Constructors merge duplicate edges (summing
 * both weights, in input order) and keep self edges (which never cross any
 * machine level); the Cartesian generator makes none. A merged sum that
 * overflows to infinity is an error (#MPITOPO_ERR_RANGE).
 *
 * Every constructor sets `*pattern` to NULL on error. The functions of this
 * page make no MPI call.
 * @threadsafe On distinct patterns, and for concurrent queries of one pattern.
 * @{
 */

/** @brief A pattern (opaque): made by the mpitopo_pattern_* constructors,
 * released by mpitopo_pattern_destroy(). */
typedef struct mpitopo_pattern mpitopo_pattern_t;

/** @brief Most dimensions of a Cartesian grid. */
#define MPITOPO_MAX_DIMS 32

/** @brief Which weight of an edge an algorithm or metric uses. */
typedef enum mpitopo_weight {
    MPITOPO_WEIGHT_BYTES = 0,    /**< bytes sent along the edge */
    MPITOPO_WEIGHT_MESSAGES = 1, /**< number of messages along the edge */
    MPITOPO_WEIGHT_UNIT = 2      /**< 1 per edge */
} mpitopo_weight_t;

/**
 * @brief Parse a weight name: "bytes", "messages" or "unit".
 * @param[in] s the name
 * @param[out] weight the weight
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_NOT_FOUND any other name
 */
MPITOPO_API int mpitopo_weight_from_string(const char *s, mpitopo_weight_t *weight);
/**
 * @brief The name of a weight, as mpitopo_weight_from_string() reads it.
 * @param[in] weight the weight
 * @return "bytes", "messages" or "unit"; "unknown" for other values.
 */
MPITOPO_API const char *mpitopo_weight_name(mpitopo_weight_t weight);

/** @brief The shape of a Cartesian stencil. */
typedef enum mpitopo_stencil_kind {
    MPITOPO_STENCIL_STAR = 0,   /**< +-k along each axis, k = 1..radius: 2*radius*ndims offsets */
    MPITOPO_STENCIL_MOORE = 1,  /**< every offset in [-radius, radius]^ndims but 0 */
    MPITOPO_STENCIL_OFFSETS = 2 /**< the explicit list of mpitopo_stencil_t::offsets */
} mpitopo_stencil_kind_t;

/**
 * @brief A Cartesian stencil.
 *
 * Each offset o gives one message per process, to the process at
 * coords + o (wrapped in periodic dimensions, dropped beyond the border of
 * open ones), of
 * @verbatim
       bytes * offset_weights[o] * prod over {i : o_i != 0} of dim_weights[i]
   @endverbatim
 * bytes (the optional arrays count as 1 when NULL).
 */
typedef struct mpitopo_stencil {
    mpitopo_stencil_kind_t kind;  /**< star, Moore or explicit offsets */
    int radius;                   /**< STAR and MOORE: >= 0 */
    int noffsets;                 /**< OFFSETS: number of offsets */
    const int *offsets;           /**< OFFSETS: noffsets x ndims, row-major */
    const double *offset_weights; /**< OFFSETS: NULL or noffsets factors >= 0 */
    const double *dim_weights;    /**< NULL or ndims factors >= 0 */
    double bytes;                 /**< bytes of one message, >= 0 */
} mpitopo_stencil_t;

/** @brief Star stencil of radius 1 (the 2*ndims face neighbours), one byte each.
 * @hideinitializer */
#define MPITOPO_STENCIL_DEFAULT {MPITOPO_STENCIL_STAR, 1, 0, NULL, NULL, NULL, 1.0}

/**
 * @brief A pattern from coordinate lists: src[e] -> dst[e] with bytes[e] and
 * msgs[e]; the arrays are copied.
 * @param[in] nprocs number of processes, >= 1
 * @param[in] nedges number of edges, >= 0
 * @param[in] src nedges source processes, in [0, nprocs)
 * @param[in] dst nedges destination processes, in [0, nprocs)
 * @param[in] bytes nedges byte weights, or NULL for 1 on every edge
 * @param[in] msgs nedges message counts, or NULL for 1 on every edge
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG nprocs < 1, nedges < 0, NULL arrays, a weight
 *         negative or not finite
 * @retval MPITOPO_ERR_RANGE an id outside [0, nprocs), a merged weight
 *         overflowing
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_create(int nprocs, int64_t nedges, const int *src, const int *dst,
                                       const double *bytes, const double *msgs,
                                       mpitopo_pattern_t **pattern);

/**
 * @brief A Cartesian grid with a stencil.
 *
 * Processes are numbered row-major (last dimension fastest, as
 * MPI_Cart_create does). The pattern remembers the grid and stencil (see
 * mpitopo_pattern_cart_info()) so metrics can compute the best-box bound.
 * In small periodic dimensions several offsets can reach the same peer
 * (size 2: +1 and -1): their messages are merged into one edge; an offset
 * that wraps onto the process itself (size 1) gives no edge. Explicit
 * offsets must not be all zero. Time O(nprocs * offsets).
 * @param[in] ndims number of dimensions, 0..#MPITOPO_MAX_DIMS; 0 gives one
 *            process, no edges
 * @param[in] dims ndims sizes, dims[i] >= 1, prod(dims) <= 2^31-1
 * @param[in] periods ndims flags (any non-zero entry is periodic), or NULL
 *            for all periodic
 * @param[in] stencil the stencil, or NULL for #MPITOPO_STENCIL_DEFAULT
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG an invalid argument (the message names it)
 * @retval MPITOPO_ERR_RANGE more than 2^31-1 processes, more than 2^20
 *         (1,048,576) stencil offsets (the limit of every stencil), bytes
 *         overflowing
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_cart(int ndims, const int *dims, const int *periods,
                                     const mpitopo_stencil_t *stencil, mpitopo_pattern_t **pattern);

/**
 * @brief Erdos-Renyi random pattern: every ordered pair (i, j), i != j, is
 * an edge with probability density, independently; one message of one
 * byte each.
 *
 * Time O(nprocs + edges). Deterministic for a given seed on every platform
 * (the gaps between edges go through log(); a C library whose log differs
 * in the last bit could, very rarely, shift one edge).
 * @param[in] nprocs number of processes, >= 1
 * @param[in] density probability of each edge, in [0, 1]
 * @param[in] seed seed of the random generator
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern, nprocs < 1, density outside [0, 1]
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_random(int nprocs, double density, uint64_t seed,
                                       mpitopo_pattern_t **pattern);

/**
 * @brief Rings of ring_size consecutive processes (the last ring may be
 * shorter): each process sends one message of one byte to the next one in
 * its ring.
 *
 * A ring of 2 gives both directions, a ring of 1 no edge.
 * @param[in] nprocs number of processes, >= 1
 * @param[in] ring_size processes per ring, >= 1
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern, nprocs or ring_size < 1
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_rings(int nprocs, int ring_size, mpitopo_pattern_t **pattern);

/**
 * @brief The complete pattern: every ordered pair (i, j), i != j, one
 * message of one byte.
 * @param[in] nprocs number of processes, >= 1
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern, nprocs < 1
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_complete(int nprocs, mpitopo_pattern_t **pattern);

/**
 * @brief All-to-all inside the sub-communicators of a Cartesian grid: the
 * groups MPI_Cart_sub(remain_dims) makes, each running MPI_Alltoall.
 *
 * Processes are numbered row-major, as in mpitopo_pattern_cart(); the
 * processes whose coordinates agree in every dimension not kept form one
 * sub-communicator, and each sends one message of `bytes` bytes to every
 * other member (the message to itself gives no edge). The sub-communicator
 * all-to-all microbenchmarks of Mirsadeghi's thesis (chapter 3): "1D",
 * each column of a 2-D grid (remain_dims {1, 0}); "2D", each plane spanned
 * by the first and last dimensions of a 3-D grid ({1, 0, 1}). The pattern
 * is a Cartesian one (mpitopo_pattern_cart_info() reports the grid, all
 * periodic): the offsets that reach every other member, wrapped round in
 * the kept dimensions. Time O(nprocs * group size).
 * @param[in] ndims number of dimensions, 0..#MPITOPO_MAX_DIMS
 * @param[in] dims ndims sizes, dims[i] >= 1, prod(dims) <= 2^31-1
 * @param[in] remain_dims ndims flags (non-zero: the dimension is kept in
 *            the sub-communicators), or NULL to keep them all (one
 *            all-to-all over the whole grid)
 * @param[in] bytes bytes of one message, finite and >= 0
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern, an invalid argument (the message
 *         names it)
 * @retval MPITOPO_ERR_RANGE more than 2^31-1 processes, sub-communicators
 *         of more than 2^20+1 processes (the stencil limit)
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_subcomm_alltoall(int ndims, const int *dims, const int *remain_dims,
                                                 double bytes, mpitopo_pattern_t **pattern);

/**
 * @brief A pattern from a description.
 *
 * @verbatim
   cart:DIMS[:open|:periods=P,P..][:star=R|:moore=R|:offsets=O;O;..][:weights=W,W..][:bytes=B]
        DIMS like 128x128 or 16x32x32; periodic unless :open; star radius 1
        by default; an offset O is ndims comma-separated integers;
        weights are the per-dimension factors (stencil dim_weights), one
        per dimension; options come in any order, each at most once.
   alltoall:DIMS:REMAIN[:bytes=B]
        all-to-all inside the sub-communicators of the grid DIMS that
        MPI_Cart_sub(REMAIN) makes (mpitopo_pattern_subcomm_alltoall());
        REMAIN is ndims comma-separated flags 0 or 1, e.g.
        alltoall:64x64:1,0 (each column), alltoall:16x16x16:1,0,1 (each
        plane of the first and last dimensions); one byte per message
        unless :bytes.
   hhc:D
        the links of the D-dimensional HHC network (M.-H. Ok, "A
        Process-to-Processor Mapping of HHC Topology in MPI"; see
        mpitopo_network_from_string()) both ways, one byte each, its
        processes numbered as that network's end nodes (D in [1, 30]).
   coll:ALG:N[:BYTES]
        the messages of a collective algorithm over N processes, each edge
        with the bytes and count of the messages along it; ALG one of
        allgather-rd (N a power of two), allgather-ring, allgather-bruck,
        bcast-binomial, gather-binomial (root 0); BYTES, a number >= 0, is
        one rank's block (allgather, gather) or the buffer (bcast), 1 by
        default; N at most 2^20.
   random:N:DENSITY:SEED    ring:N:K    complete:N
        SEED a decimal integer in [0, 2^63-1].
   @endverbatim
 * @param[in] desc the description
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_PARSE a malformed description, also an unknown kind
 *         (errors name the offending field)
 * @retval MPITOPO_ERR_RANGE too many processes (2^31-1) or offsets (2^20),
 *         overflowing bytes
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_pattern_from_string(const char *desc, mpitopo_pattern_t **pattern);

/**
 * @brief Read a pattern file.
 *
 * Pattern files (text, UTF-8/ASCII):
 * @verbatim
   # comments run from '#' to the end of the line; blank lines are ignored
   mpitopo-pattern 1 NPROCS        first non-comment line: format, version, processes
   SRC DST BYTES MESSAGES          one edge per line, as many as needed
   @endverbatim
 * NPROCS is an integer in [1, 2^31-1]; SRC and DST are integers in
 * [0, NPROCS); BYTES and MESSAGES are finite non-negative decimal numbers
 * (no hex, inf or nan). Fields are separated by blanks or tabs; lines end
 * with LF or CRLF, the last one may lack it, and hold at most 4096 bytes;
 * NUL bytes are refused. Repeated edges are summed. The file is parsed as it
 * is read (pipes work), so a stream that is not a pattern file (/dev/zero)
 * fails at its first bad line. Memory is O(NPROCS + edges): a caller that
 * knows how many processes it can take uses mpitopo_pattern_read_max().
 * @param[in] path the file
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_FORMAT a malformed file; the message gives the line
 *         number: "pattern.txt:12: DST = 70 out of range [0, 64)"
 * @retval MPITOPO_ERR_IO the file cannot be read (the message names the path
 *         and the system's reason)
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_read(const char *path, mpitopo_pattern_t **pattern);
/**
 * @brief Read a pattern file of at most max_nprocs processes.
 *
 * As mpitopo_pattern_read(), but a header declaring more than max_nprocs
 * processes is refused as soon as it is read, before anything is sized by
 * it: a caller that will place the pattern on a machine passes the
 * machine's number of leaves, so a header of 2^31-1 processes costs
 * nothing.
 * @param[in] path the file
 * @param[in] max_nprocs the most processes accepted, >= 1
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_RANGE the header declares more than max_nprocs
 *         processes (the message gives the file and line)
 * @retval MPITOPO_ERR_ARG NULL pointers, max_nprocs < 1
 * @retval MPITOPO_ERR_FORMAT a malformed file, as for mpitopo_pattern_read()
 * @retval MPITOPO_ERR_IO the file cannot be read
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_read_max(const char *path, int max_nprocs, mpitopo_pattern_t **pattern);
/**
 * @brief Parse a pattern file's text from memory (the format of
 * mpitopo_pattern_read()).
 * @param[in] text the text: len bytes, need not be NUL-terminated
 * @param[in] len its length in bytes
 * @param[in] name the name used in error messages
 * @param[out] pattern the new pattern, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_FORMAT a malformed text; the message gives the line number
 * @retval MPITOPO_ERR_ARG NULL pattern, or NULL text with len > 0
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_parse(const char *text, size_t len, const char *name,
                                      mpitopo_pattern_t **pattern);
/**
 * @brief Write a pattern file (the format of mpitopo_pattern_read()).
 *
 * Weights are printed exactly (`%.17g`), so reading the file back gives the
 * same pattern bit for bit.
 * @param[in] pattern the pattern
 * @param[in] path the file, created or truncated
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_IO writing fails
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_pattern_write(const mpitopo_pattern_t *pattern, const char *path);
/**
 * @brief Write a pattern in the file format to a stream, exactly (as
 * mpitopo_pattern_write()).
 *
 * The stream is flushed, not closed.
 * @param[in] pattern the pattern
 * @param[in] stream the stream
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_IO writing fails
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_pattern_write_stream(const mpitopo_pattern_t *pattern, FILE *stream);

/**
 * @brief Release a pattern.
 * @param[in,out] pattern the handle; accepts NULL and `*pattern` == NULL;
 *                `*pattern` is set to NULL
 */
MPITOPO_API void mpitopo_pattern_destroy(mpitopo_pattern_t **pattern);

/**
 * @brief Number of processes.
 * @param[in] pattern the pattern
 * @param[out] nprocs its number of processes
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_pattern_nprocs(const mpitopo_pattern_t *pattern, int *nprocs);
/**
 * @brief Number of (merged) edges.
 * @param[in] pattern the pattern
 * @param[out] nedges its number of edges
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_pattern_nedges(const mpitopo_pattern_t *pattern, int64_t *nedges);
/**
 * @brief Out-edges of a process: pointers into the pattern, valid while it
 * lives.
 * @param[in] pattern the pattern
 * @param[in] proc the process, in [0, nprocs)
 * @param[out] degree its number of out-edges; must not be NULL
 * @param[out] dst its destinations, sorted (or NULL)
 * @param[out] bytes the byte weights of its out-edges (or NULL)
 * @param[out] msgs the message counts of its out-edges (or NULL)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern or degree
 * @retval MPITOPO_ERR_RANGE proc is not in [0, nprocs)
 */
MPITOPO_API int mpitopo_pattern_out_edges(const mpitopo_pattern_t *pattern, int proc, int *degree,
                                          const int **dst, const double **bytes,
                                          const double **msgs);
/**
 * @brief Weight of an edge under `weight`.
 * @param[in] weight which weight
 * @param[in] bytes the edge's bytes
 * @param[in] msgs the edge's messages
 * @return bytes, msgs, or 1.0 for #MPITOPO_WEIGHT_UNIT (and other values).
 */
static inline double mpitopo_edge_weight(mpitopo_weight_t weight, double bytes, double msgs)
{
    return weight == MPITOPO_WEIGHT_BYTES ? bytes : weight == MPITOPO_WEIGHT_MESSAGES ? msgs : 1.0;
}
/**
 * @brief Grid of a Cartesian pattern.
 *
 * Any out-pointer may be NULL.
 * @param[in] pattern the pattern
 * @param[out] is_cart 1 for a pattern of mpitopo_pattern_cart(), else 0
 * @param[out] ndims its number of dimensions (0 for other patterns)
 * @param[out] dims #MPITOPO_MAX_DIMS entries, receive the grid's sizes
 * @param[out] periods #MPITOPO_MAX_DIMS entries, receive its periods as 0 or 1
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pattern
 */
MPITOPO_API int mpitopo_pattern_cart_info(const mpitopo_pattern_t *pattern, int *is_cart,
                                          int *ndims, int *dims, int *periods);

/**
 * @brief The arguments of MPI_Dist_graph_create_adjacent for one process of
 * a pattern (a traced one, say).
 *
 * Its in-neighbours (sources) and out-neighbours (destinations) in
 * increasing rank order, self edges included, with integer weights from
 * `weight`. Weights are rounded to the nearest integer and at least 1 (an
 * edge in the pattern is communication); when the pattern's largest weight
 * exceeds INT_MAX all weights are scaled by INT_MAX / largest first, the
 * same on every process. The arrays are allocated by the library: free them
 * with mpitopo_free(); any may be NULL on return when its degree is 0.
 * Time O(E) (in-edges need a scan); memory O(degree).
 * @param[in] pattern the pattern
 * @param[in] proc the process, in [0, nprocs)
 * @param[in] weight which weight becomes the integer weights
 * @param[out] indegree number of sources
 * @param[out] sources the sources (allocated)
 * @param[out] sourceweights their weights (allocated)
 * @param[out] outdegree number of destinations
 * @param[out] destinations the destinations (allocated)
 * @param[out] destweights their weights (allocated)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, bad weight
 * @retval MPITOPO_ERR_RANGE proc out of [0, nprocs)
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_pattern_adjacent(const mpitopo_pattern_t *pattern, int proc,
                                         mpitopo_weight_t weight, int *indegree, int **sources,
                                         int **sourceweights, int *outdegree, int **destinations,
                                         int **destweights);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_PATTERN_H */
