/*
 * libFuzzer harness for pattern files and descriptions.
 *
 * Input starting with 'D': the rest is a description for
 * mpitopo_pattern_from_string. Anything else: a pattern file for
 * mpitopo_pattern_parse. Every pattern that comes out must satisfy the CSR
 * invariants and survive write_stream -> parse bit for bit.
 *
 * Allocations above FUZZ_ALLOC_LIMIT fail, so that descriptions like
 * "cart:100000x10000" or "complete:65536" exercise the out-of-memory paths
 * instead of the fuzzer's memory; it also bounds the work per input.
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "pattern/pattern_internal.h"

#define FUZZ_ALLOC_LIMIT ((size_t)512 << 10)
#include "fuzz_alloc.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_pattern: %s\n", what);
        abort();
    }
}

static void check_csr(const mpitopo_pattern_t *p)
{
    check(p->nprocs >= 1 && p->offs[0] == 0 && p->offs[p->nprocs] == p->nedges, "CSR offsets");
    for (int i = 0; i < p->nprocs; i++) {
        check(p->offs[i] <= p->offs[i + 1], "CSR rows");
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++) {
            check(p->dst[k] >= 0 && p->dst[k] < p->nprocs, "destination range");
            check(k == p->offs[i] || p->dst[k - 1] < p->dst[k], "rows sorted without duplicates");
            check(p->bytes[k] >= 0 && p->bytes[k] <= DBL_MAX, "bytes finite and >= 0");
            check(p->msgs[k] >= 0 && p->msgs[k] <= DBL_MAX, "messages finite and >= 0");
        }
    }
}

static int same(const mpitopo_pattern_t *a, const mpitopo_pattern_t *b)
{
    size_t e = (size_t)a->nedges;
    return a->nprocs == b->nprocs && a->nedges == b->nedges &&
           memcmp(a->offs, b->offs, ((size_t)a->nprocs + 1) * sizeof *a->offs) == 0 &&
           (e == 0 || (memcmp(a->dst, b->dst, e * sizeof *a->dst) == 0 &&
                       memcmp(a->bytes, b->bytes, e * sizeof *a->bytes) == 0 &&
                       memcmp(a->msgs, b->msgs, e * sizeof *a->msgs) == 0));
}

/* Write p out and read it back: the same pattern, or out of memory. */
static void round_trip(const mpitopo_pattern_t *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    check(f != NULL, "open_memstream");
    check(mpitopo_pattern_write_stream(p, f) == MPITOPO_SUCCESS, "write_stream");
    fclose(f);
    mpitopo_pattern_t *q = NULL;
    int rc = mpitopo_pattern_parse(text, len, "round-trip", &q);
    if (rc != MPITOPO_ERR_NOMEM) {
        if (rc != MPITOPO_SUCCESS)
            fprintf(stderr, "%s\n", mpitopo_last_error());
        check(rc == MPITOPO_SUCCESS, "written pattern parses");
        check(same(p, q), "round trip is exact");
    }
    mpitopo_pattern_destroy(&q);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mpitopo_set_allocator(&fuzz_allocator);
    mpitopo_pattern_t *p = NULL;
    int rc;
    if (size > 0 && data[0] == 'D') {
        char *desc = malloc(size);
        check(desc != NULL, "malloc");
        memcpy(desc, data + 1, size - 1);
        desc[size - 1] = '\0';
        rc = mpitopo_pattern_from_string(desc, &p);
        free(desc);
    } else {
        rc = mpitopo_pattern_parse((const char *)data, size, "fuzz", &p);
    }
    check((rc == MPITOPO_SUCCESS) == (p != NULL), "pattern set exactly on success");
    check(rc <= 0 && (rc == 0 || mpitopo_last_error()[0] != '\0'), "failures carry a message");
    if (p) {
        check_csr(p);
        round_trip(p);
    }
    mpitopo_pattern_destroy(&p);
    return 0;
}
