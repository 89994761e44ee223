/*
 * The messages of collective algorithms as communication patterns
 * ("coll:ALG:N[:BYTES]", issue 19), so that any mapper, the collective-aware
 * ones (rdmh, rmh, bbmh, bgmh) and the general ones (tree, scotch) alike,
 * can be evaluated on the traffic of one algorithm:
 *   allgather-rd      recursive doubling, N a power of two: at stage s,
 *                     i -> i ^ 2^s with 2^s blocks; N log2 N messages
 *   allgather-ring    ring: N - 1 stages of i -> i + 1 (mod N) with one
 *                     block; N (N - 1) messages
 *   allgather-bruck   Bruck, any N: at stage k, i -> i - 2^k (mod N) with
 *                     min(2^k, N - 2^k) blocks; N ceil(log2 N) messages
 *   bcast-binomial    binomial tree from 0: r -> r + 2^k (r a multiple of
 *                     2^(k+1)) with the whole buffer; N - 1 messages
 *   gather-binomial   the same tree towards 0: r + 2^k -> r with the blocks
 *                     of the subtree of r + 2^k; N - 1 messages
 * BYTES is the bytes of one rank's block (allgather, gather) or of the
 * buffer (bcast), a number >= 0, 1 by default. An edge carries the sum of
 * the algorithm's messages along it: bytes and message count (the ring's
 * N - 1 stages all use the edge i -> i + 1). The three allgathers move
 * N (N - 1) BYTES in all. These are the stages the cost model of
 * src/map/collmap_cost.c charges.
 */
#include "pattern/pattern_internal.h"

#include <math.h>
#include <string.h>

/* Above this the largest of these patterns (N log2 N edges) outgrows memory
 * without telling anything the smaller ones do not. */
#define COLL_MAX_PROCS (1 << 20)

static const char *const fn = "mpitopo_pattern_from_string";

enum coll_kind { RD, RING, BRUCK, BCAST, GATHER };

static const struct {
    const char *name;
    enum coll_kind kind;
} algs[] = {{"allgather-rd", RD},
            {"allgather-ring", RING},
            {"allgather-bruck", BRUCK},
            {"bcast-binomial", BCAST},
            {"gather-binomial", GATHER}};

static int push(mpitopo__coo_t *coo, long long src, long long dst, double bytes, double msgs)
{
    return mpitopo__coo_push(coo, (int)src, (int)dst, bytes, msgs);
}

static int gen(enum coll_kind kind, int n, double b, mpitopo__coo_t *coo)
{
    int rc = MPITOPO_SUCCESS;
    switch (kind) {
    case RD:
        for (long long s = 1; s < n && rc == MPITOPO_SUCCESS; s *= 2)
            for (long long i = 0; i < n && rc == MPITOPO_SUCCESS; i++)
                rc = push(coo, i, i ^ s, b * (double)s, 1);
        break;
    case RING:
        for (long long i = 0; i < n && n > 1 && rc == MPITOPO_SUCCESS; i++)
            rc = push(coo, i, (i + 1) % n, b * (n - 1), n - 1);
        break;
    case BRUCK:
        for (long long k = 1; k < n && rc == MPITOPO_SUCCESS; k *= 2)
            for (long long i = 0; i < n && rc == MPITOPO_SUCCESS; i++)
                rc = push(coo, i, (i - k + n) % n, b * (double)(k < n - k ? k : n - k), 1);
        break;
    default:
        for (long long m = 1; m < n && rc == MPITOPO_SUCCESS; m *= 2)
            for (long long r = 0; r + m < n && rc == MPITOPO_SUCCESS; r += 2 * m)
                rc = kind == BCAST ? push(coo, r, r + m, b, 1)
                                   : push(coo, r + m, r, b * (double)(m < n - r - m ? m : n - r - m), 1);
        break;
    }
    return rc;
}

int mpitopo__coll_pattern(const char *desc, const char *s, size_t len, mpitopo_pattern_t **pattern)
{
    const char *end = s + len, *c1 = memchr(s, ':', len);
    if (!c1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn, "desc = \"%.100s\": expected coll:ALG:N[:BYTES]", desc);
    const char *c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
    int a = -1;
    for (int i = 0; i < (int)(sizeof algs / sizeof algs[0]); i++)
        if ((size_t)(c1 - s) == strlen(algs[i].name) && memcmp(s, algs[i].name, (size_t)(c1 - s)) == 0)
            a = i;
    if (a < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn,
                               "desc = \"%.100s\": ALG = \"%.*s\" is not a collective algorithm (known: allgather-rd, "
                               "allgather-ring, allgather-bruck, bcast-binomial, gather-binomial)",
                               desc, (int)(c1 - s < 64 ? c1 - s : 64), s);
    const char *nend = c2 ? c2 : end;
    long long n = 0;
    if (mpitopo__parse_long(c1 + 1, (size_t)(nend - c1 - 1), 1, COLL_MAX_PROCS, &n))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn, "desc = \"%.100s\": N = \"%.*s\" is not an integer in [1, %d]",
                               desc, (int)(nend - c1 - 1 < 64 ? nend - c1 - 1 : 64), c1 + 1, COLL_MAX_PROCS);
    double bytes = 1;
    if (c2 && (mpitopo__parse_double(c2 + 1, (size_t)(end - c2 - 1), &bytes) || !(bytes >= 0) || isinf(bytes)))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn, "desc = \"%.100s\": BYTES = \"%.*s\" is not a number >= 0",
                               desc, (int)(end - c2 - 1 < 64 ? end - c2 - 1 : 64), c2 + 1);
    if (isinf(bytes * (double)n * (double)n))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, fn, "desc = \"%.100s\": BYTES = %g: the traffic overflows", desc,
                               bytes);
    if (algs[a].kind == RD && (n & (n - 1)) != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn,
                               "desc = \"%.100s\": N = %lld: recursive doubling needs a power of two (allgather-bruck "
                               "or allgather-ring take any N)",
                               desc, n);
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, MPITOPO__COO_BYTES | MPITOPO__COO_MSGS, fn);
    int rc = gen(algs[a].kind, (int)n, bytes, &coo);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__coo_free(&coo);
        return rc;
    }
    return mpitopo__pattern_from_coo((int)n, &coo, pattern);
}
