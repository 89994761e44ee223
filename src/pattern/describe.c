/* Patterns from one-line descriptions ("cart:128x128:moore=1", "ring:64:8",
 * "alltoall:64x64:1,0"). */
#include "network/network_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A piece of the description: s[0..len), not NUL-terminated. */
typedef struct slice {
    const char *s;
    size_t len;
} slice_t;

/* For "%.*s": at most 64 characters of a slice. */
#define SLICE(f) (int)((f).len < 64 ? (f).len : 64), (f).s

/* Errors of the helpers below are reported as this function's. */
static const char *const from_string = "mpitopo_pattern_from_string";

static int bad(int code, const char *desc, const char *fmt, ...) MPITOPO_PRINTF(3, 4);
static int bad(int code, const char *desc, const char *fmt, ...)
{
    char detail[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return MPITOPO_FAIL_AS(code, from_string, "desc = \"%.100s\": %s", desc, detail);
}

/* Cut the next piece up to sep (or the end) off the front of rest. */
static slice_t take(slice_t *rest, char sep)
{
    const char *p = rest->len ? memchr(rest->s, sep, rest->len) : NULL;
    slice_t piece = {rest->s, p ? (size_t)(p - rest->s) : rest->len};
    size_t used = p ? piece.len + 1 : piece.len;
    rest->s += used;
    rest->len -= used;
    return piece;
}

static int count_pieces(slice_t f, char sep)
{
    int n = 1;
    for (size_t i = 0; i < f.len && n < INT_MAX; i++)
        n += f.s[i] == sep;
    return n;
}

static int is(slice_t f, const char *word)
{
    return f.len == strlen(word) && memcmp(f.s, word, f.len) == 0;
}

static int to_int(slice_t f, long long min, long long max, int *out)
{
    long long v;
    if (mpitopo__parse_long(f.s, f.len, min, max, &v))
        return -1;
    *out = (int)v;
    return 0;
}

static int to_factor(slice_t f, double *out)
{
    return mpitopo__parse_double(f.s, f.len, out) || *out < 0 ? -1 : 0;
}

/* The Cartesian options -------------------------------------------------------- */

typedef struct cart_desc {
    int ndims;
    int dims[MPITOPO_MAX_DIMS];
    int periods[MPITOPO_MAX_DIMS];
    double dim_weights[MPITOPO_MAX_DIMS];
    int *offsets;
    mpitopo_stencil_t stencil;
    unsigned seen; /* bit per option name, to refuse repeats */
} cart_desc_t;

static int parse_dims(const char *desc, slice_t f, cart_desc_t *c)
{
    int n = count_pieces(f, 'x');
    if (n > MPITOPO_MAX_DIMS)
        return bad(MPITOPO_ERR_PARSE, desc, "DIMS \"%.*s\" has %d dimensions, more than %d",
                   SLICE(f), n, MPITOPO_MAX_DIMS);
    for (int i = 0; i < n; i++) {
        slice_t d = take(&f, 'x');
        if (to_int(d, 1, INT_MAX, &c->dims[i]))
            return bad(MPITOPO_ERR_PARSE, desc, "dimension %d \"%.*s\" is not an integer >= 1",
                       i + 1, SLICE(d));
        c->periods[i] = 1;
    }
    c->ndims = n;
    return MPITOPO_SUCCESS;
}

/* name=V,V,..: exactly ndims integers in [min, max]. */
static int parse_int_list(const char *desc, slice_t name, slice_t v, const cart_desc_t *c, int min,
                          int max, int *out)
{
    if (count_pieces(v, ',') != c->ndims)
        return bad(MPITOPO_ERR_PARSE, desc,
                   "%.*s = \"%.*s\" must have %d values, one per dimension", SLICE(name), SLICE(v),
                   c->ndims);
    for (int i = 0; i < c->ndims; i++) {
        slice_t x = take(&v, ',');
        if (to_int(x, min, max, &out[i]))
            return bad(MPITOPO_ERR_PARSE, desc,
                       "%.*s: value %d \"%.*s\" is not an integer in [%d, %d]", SLICE(name), i + 1,
                       SLICE(x), min, max);
    }
    return MPITOPO_SUCCESS;
}

static int parse_weights(const char *desc, slice_t v, cart_desc_t *c)
{
    if (count_pieces(v, ',') != c->ndims)
        return bad(MPITOPO_ERR_PARSE, desc,
                   "weights = \"%.*s\" must have %d values, one per dimension", SLICE(v), c->ndims);
    for (int i = 0; i < c->ndims; i++) {
        slice_t x = take(&v, ',');
        if (to_factor(x, &c->dim_weights[i]))
            return bad(MPITOPO_ERR_PARSE, desc, "weights: value %d \"%.*s\" is not a number >= 0",
                       i + 1, SLICE(x));
    }
    c->stencil.dim_weights = c->dim_weights;
    return MPITOPO_SUCCESS;
}

/* offsets=O;O;.. with ndims comma-separated integers per offset. */
static int parse_offsets(const char *desc, slice_t v, cart_desc_t *c)
{
    int n = count_pieces(v, ';');
    c->offsets = mpitopo__malloc_array((size_t)n * (size_t)(c->ndims ? c->ndims : 1), sizeof(int));
    if (!c->offsets)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, from_string,
                                 "out of memory allocating offsets");
    for (int k = 0; k < n; k++) {
        slice_t o = take(&v, ';');
        int rc = parse_int_list(desc, (slice_t){"offset", 6}, o, c, INT_MIN, INT_MAX,
                                c->offsets + (size_t)k * (size_t)c->ndims);
        if (rc)
            return rc;
    }
    c->stencil.kind = MPITOPO_STENCIL_OFFSETS;
    c->stencil.noffsets = n;
    c->stencil.offsets = c->offsets;
    return MPITOPO_SUCCESS;
}

static int parse_radius(const char *desc, slice_t name, slice_t v, cart_desc_t *c)
{
    if (to_int(v, 0, INT_MAX, &c->stencil.radius))
        return bad(MPITOPO_ERR_PARSE, desc, "%.*s = \"%.*s\" is not an integer >= 0", SLICE(name),
                   SLICE(v));
    c->stencil.kind = is(name, "star") ? MPITOPO_STENCIL_STAR : MPITOPO_STENCIL_MOORE;
    return MPITOPO_SUCCESS;
}

int mpitopo__stencil_parse(const char *text, size_t len, int *moore, long long *radius)
{
    /* "moore:R" and "star:R", mpitopo_cart_stencil_create's first
     * spelling, read the same (deprecated: NEWS). */
    size_t k = 0;
    while (k < len && text[k] != '=' && text[k] != ':')
        k++;
    slice_t name = {text, k}, v = {text + k + 1, k < len ? len - k - 1 : 0};
    if (k == len || !(is(name, "moore") || is(name, "star")))
        return -1;
    *moore = is(name, "moore");
    return mpitopo__parse_long(v.s, v.len, 0, LLONG_MAX, radius) == 0 ? 0 : -2;
}

static const char *const cart_options[] = {"open",    "periods", "star", "moore",
                                           "offsets", "weights", "bytes"};
enum { OPT_OPEN, OPT_PERIODS, OPT_STAR, OPT_MOORE, OPT_OFFSETS, OPT_WEIGHTS, OPT_BYTES, NOPTS };

/* Which option `name` is, refusing unknown, repeated and exclusive ones. */
static int option_index(const char *desc, slice_t name, cart_desc_t *c, int *opt)
{
    int k = 0;
    while (k < NOPTS && !is(name, cart_options[k]))
        k++;
    if (k == NOPTS)
        return bad(MPITOPO_ERR_PARSE, desc,
                   "unknown option \"%.*s\" (known: open, periods=, star=, moore=, offsets=, "
                   "weights=, bytes=)",
                   SLICE(name));
    unsigned group = k == OPT_OPEN || k == OPT_PERIODS ? 1u << OPT_OPEN | 1u << OPT_PERIODS
                     : k == OPT_STAR || k == OPT_MOORE || k == OPT_OFFSETS
                         ? 1u << OPT_STAR | 1u << OPT_MOORE | 1u << OPT_OFFSETS
                         : 1u << k;
    if (c->seen & 1u << k)
        return bad(MPITOPO_ERR_PARSE, desc, "option \"%s\" given twice", cart_options[k]);
    if (c->seen & group)
        return bad(MPITOPO_ERR_PARSE, desc, "option \"%s\" conflicts with an earlier option",
                   cart_options[k]);
    c->seen |= 1u << k;
    *opt = k;
    return MPITOPO_SUCCESS;
}

static int parse_cart_option(const char *desc, slice_t f, cart_desc_t *c)
{
    const char *eq = memchr(f.s, '=', f.len);
    slice_t name = {f.s, eq ? (size_t)(eq - f.s) : f.len};
    slice_t v = {eq ? eq + 1 : f.s + f.len, eq ? f.len - name.len - 1 : 0};
    int opt = 0, rc = option_index(desc, name, c, &opt);
    if (rc)
        return rc;
    if (opt == OPT_OPEN && eq)
        return bad(MPITOPO_ERR_PARSE, desc, "option \"open\" takes no value");
    if (opt != OPT_OPEN && !eq)
        return bad(MPITOPO_ERR_PARSE, desc, "option \"%s\" needs a value (%s=...)",
                   cart_options[opt], cart_options[opt]);
    switch (opt) {
    case OPT_OPEN:
        memset(c->periods, 0, sizeof c->periods);
        return MPITOPO_SUCCESS;
    case OPT_PERIODS:
        return parse_int_list(desc, name, v, c, 0, 1, c->periods);
    case OPT_STAR:
    case OPT_MOORE:
        return parse_radius(desc, name, v, c);
    case OPT_OFFSETS:
        return parse_offsets(desc, v, c);
    case OPT_WEIGHTS:
        return parse_weights(desc, v, c);
    default:
        if (to_factor(v, &c->stencil.bytes))
            return bad(MPITOPO_ERR_PARSE, desc, "bytes = \"%.*s\" is not a number >= 0", SLICE(v));
        return MPITOPO_SUCCESS;
    }
}

/* A generator's own complaint, restated as this function's with the
 * description in front (running out of memory keeps its code). */
static int rewrap(int rc, const char *desc)
{
    if (rc == MPITOPO_SUCCESS)
        return rc;
    return MPITOPO_FAIL_RESTATE(rc == MPITOPO_ERR_ARG ? MPITOPO_ERR_PARSE : rc, from_string,
                                  "desc = \"%.100s\"", desc);
}

static int parse_cart(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    cart_desc_t c = {.stencil = MPITOPO_STENCIL_DEFAULT};
    int nfields = count_pieces(rest, ':');
    int rc = parse_dims(desc, take(&rest, ':'), &c);
    for (int i = 1; !rc && i < nfields; i++)
        rc = parse_cart_option(desc, take(&rest, ':'), &c);
    if (!rc)
        rc = rewrap(mpitopo_pattern_cart(c.ndims, c.dims, c.periods, &c.stencil, pattern), desc);
    mpitopo__free(c.offsets);
    return rc;
}

/* The other kinds ------------------------------------------------------------------ */

/* Exactly n more fields after the kind, named by names[]. */
static int split_fields(const char *desc, slice_t rest, int n, const char *const *names,
                        slice_t *fields)
{
    int have = count_pieces(rest, ':');
    if (have != n)
        return bad(MPITOPO_ERR_PARSE, desc,
                   "expected %d fields after the kind (%s%s%s%s%s), got %d", n, names[0],
                   n > 1 ? ":" : "", n > 1 ? names[1] : "", n > 2 ? ":" : "", n > 2 ? names[2] : "",
                   have);
    for (int i = 0; i < n; i++)
        fields[i] = take(&rest, ':');
    return MPITOPO_SUCCESS;
}

static int field_int(const char *desc, const char *name, slice_t f, int *out)
{
    if (to_int(f, 1, INT_MAX, out))
        return bad(MPITOPO_ERR_PARSE, desc, "%s = \"%.*s\" is not an integer >= 1", name, SLICE(f));
    return MPITOPO_SUCCESS;
}

static int parse_random(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    static const char *const names[] = {"N", "DENSITY", "SEED"};
    slice_t f[3] = {{0}};
    int n = 0, rc;
    double density = 0;
    long long seed = 0;
    if ((rc = split_fields(desc, rest, 3, names, f)) || (rc = field_int(desc, "N", f[0], &n)))
        return rc;
    if (mpitopo__parse_double(f[1].s, f[1].len, &density) || !(density >= 0 && density <= 1))
        return bad(MPITOPO_ERR_PARSE, desc, "DENSITY = \"%.*s\" is not a number in [0, 1]",
                   SLICE(f[1]));
    if (mpitopo__parse_long(f[2].s, f[2].len, 0, LLONG_MAX, &seed))
        return bad(MPITOPO_ERR_PARSE, desc, "SEED = \"%.*s\" is not an integer >= 0", SLICE(f[2]));
    return rewrap(mpitopo_pattern_random(n, density, (uint64_t)seed, pattern), desc);
}

static int parse_ring(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    static const char *const names[] = {"N", "K"};
    slice_t f[2] = {{0}};
    int n = 0, k = 0, rc;
    if ((rc = split_fields(desc, rest, 2, names, f)) || (rc = field_int(desc, "N", f[0], &n)) ||
        (rc = field_int(desc, "K", f[1], &k)))
        return rc;
    return rewrap(mpitopo_pattern_rings(n, k, pattern), desc);
}

static int parse_complete(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    static const char *const names[] = {"N"};
    slice_t f[1] = {{0}};
    int n = 0, rc;
    if ((rc = split_fields(desc, rest, 1, names, f)) || (rc = field_int(desc, "N", f[0], &n)))
        return rc;
    return rewrap(mpitopo_pattern_complete(n, pattern), desc);
}

/* alltoall:DIMS:REMAIN[:bytes=B]: the grid's syntax (parse_dims), then
 * MPI_Cart_sub's remain_dims as 0/1 flags, one per dimension. */
static int parse_alltoall(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    cart_desc_t c = {.stencil = MPITOPO_STENCIL_DEFAULT};
    int remain[MPITOPO_MAX_DIMS] = {0};
    int nfields = count_pieces(rest, ':');
    if (nfields < 2 || nfields > 3)
        return bad(MPITOPO_ERR_PARSE, desc,
                   "expected DIMS:REMAIN[:bytes=B] after the kind, got %d fields", nfields);
    int rc = parse_dims(desc, take(&rest, ':'), &c);
    if (rc || (rc = parse_int_list(desc, (slice_t){"REMAIN", 6}, take(&rest, ':'), &c, 0, 1,
                                   remain)))
        return rc;
    if (nfields == 3) {
        slice_t f = take(&rest, ':');
        if (f.len < 6 || memcmp(f.s, "bytes=", 6) != 0)
            return bad(MPITOPO_ERR_PARSE, desc, "unknown option \"%.*s\" (known: bytes=)",
                       SLICE(f));
        slice_t v = {f.s + 6, f.len - 6};
        if (to_factor(v, &c.stencil.bytes))
            return bad(MPITOPO_ERR_PARSE, desc, "bytes = \"%.*s\" is not a number >= 0", SLICE(v));
    }
    return rewrap(mpitopo_pattern_subcomm_alltoall(c.ndims, c.dims, remain, c.stencil.bytes,
                                                   pattern),
                  desc);
}

/* hhc:D: the links of the D-HHC network (src/pattern/hhc_pattern.c). */
static int parse_hhc(const char *desc, slice_t rest, mpitopo_pattern_t **pattern)
{
    static const char *const names[] = {"D"};
    slice_t f[1] = {{0}};
    int d = 0, rc;
    if ((rc = split_fields(desc, rest, 1, names, f)) || (rc = field_int(desc, "D", f[0], &d)))
        return rc;
    return rewrap(mpitopo__hhc_pattern(d, pattern), desc);
}

int mpitopo_pattern_from_string(const char *desc, mpitopo_pattern_t **pattern)
{
    if (!desc || !pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "desc and pattern must not be NULL");
    *pattern = NULL;
    slice_t rest = {desc, strlen(desc)};
    slice_t kind = take(&rest, ':');
    if (is(kind, "cart"))
        return parse_cart(desc, rest, pattern);
    if (is(kind, "random"))
        return parse_random(desc, rest, pattern);
    if (is(kind, "ring"))
        return parse_ring(desc, rest, pattern);
    if (is(kind, "complete"))
        return parse_complete(desc, rest, pattern);
    if (is(kind, "alltoall"))
        return parse_alltoall(desc, rest, pattern);
    if (is(kind, "hhc"))
        return parse_hhc(desc, rest, pattern);
    if (is(kind, "coll"))
        return mpitopo__coll_pattern(desc, rest.s, rest.len, pattern);
    return bad(MPITOPO_ERR_PARSE, desc,
               "unknown kind \"%.*s\" (known: cart:DIMS[:options], random:N:DENSITY:SEED, "
               "ring:N:K, complete:N, alltoall:DIMS:REMAIN[:bytes=B], hhc:D, coll:ALG:N[:BYTES])",
               SLICE(kind));
}
