/* Layout of a pattern, shared with the mappers and metrics. */
#ifndef MPITOPO_PATTERN_INTERNAL_H
#define MPITOPO_PATTERN_INTERNAL_H

#include "core/internal.h"

/* What a Cartesian generator remembers: the grid and the final weight of
 * every stencil offset (bytes after offset and dimension factors). */
typedef struct mpitopo__cart {
    int ndims;
    int dims[MPITOPO_MAX_DIMS];
    int periods[MPITOPO_MAX_DIMS];
    int noffsets;
    int *offsets;        /* noffsets x ndims */
    double *offset_bytes; /* noffsets */
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

#endif
