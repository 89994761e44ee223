/*
 * libFuzzer harness of mpitopo_network_from_string. Every input must either
 * fail cleanly (an error code, a message, no network) or give a network whose
 * routes, for a few pairs drawn from the input, stay inside it: every
 * channel in range and named, no route longer than max_route, none between
 * a node and itself, and the same route twice. With few enough channels,
 * the metrics of a ring over the nodes agree with the incremental loads.
 * Inconsistencies trap; crashes, leaks and undefined behaviour are left to
 * the sanitizers.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define FUZZ_ALLOC_LIMIT ((size_t)1 << 20)
#include "fuzz_alloc.h"

#define MAX_ROUTE 4096

static void check_routes(const mpitopo_network_t *net, const uint8_t *data, size_t size)
{
    int n = 0, maxr = 0;
    int64_t nch = 0;
    CHECK(mpitopo_network_size(net, &n, &nch, &maxr) == MPITOPO_SUCCESS);
    CHECK(n >= 1 && nch >= 0 && maxr >= 0);
    if (maxr > MAX_ROUTE)
        return;
    static int64_t r[MAX_ROUTE], r2[MAX_ROUTE];
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ULL;
    for (int t = 0; t < 8; t++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        int s = (int)((h >> 33) % (uint64_t)n), d = (int)((h >> 7) % (uint64_t)n);
        if (t == 0)
            d = n - 1;
        int len = -1, len2 = -1;
        CHECK(mpitopo_network_route(net, s, d, MAX_ROUTE, r, &len) == MPITOPO_SUCCESS);
        CHECK(len >= 0 && len <= maxr && (len == 0) == (s == d));
        CHECK(mpitopo_network_route(net, s, d, MAX_ROUTE, r2, &len2) == MPITOPO_SUCCESS);
        CHECK(len2 == len && memcmp(r, r2, sizeof *r * (size_t)len) == 0);
        for (int i = 0; i < len; i++) {
            char name[96] = "";
            double cap = 0;
            CHECK(r[i] >= 0 && r[i] < nch);
            CHECK(mpitopo_network_channel(net, r[i], &cap, name, sizeof name) == MPITOPO_SUCCESS);
            CHECK(cap > 0 && strstr(name, "->") != NULL);
        }
    }
    CHECK(mpitopo_network_channel(net, nch, NULL, NULL, 0) == MPITOPO_ERR_RANGE);
    if (nch > 100000 || n > 1000)
        return;
    /* A ring over the nodes: whole and incremental metrics agree. */
    mpitopo_pattern_t *p = NULL;
    if (mpitopo_pattern_rings(n, n, &p) != MPITOPO_SUCCESS)
        return;
    int *mapping = malloc(sizeof *mapping * (size_t)n);
    mpitopo_network_load_t *l = NULL;
    mpitopo_network_metrics_t a, b;
    if (mapping && mpitopo_network_load_create(net, p, &l) == MPITOPO_SUCCESS) {
        for (int i = 0; i < n; i++) {
            mapping[i] = n - 1 - i;
            CHECK(mpitopo_network_load_place(l, i, mapping[i]) == MPITOPO_SUCCESS);
        }
        CHECK(mpitopo_network_load_metrics(l, NULL, NULL, &b) == MPITOPO_SUCCESS);
        if (mpitopo_network_evaluate(net, p, mapping, NULL, NULL, &a) == MPITOPO_SUCCESS)
            CHECK(a.busy_channels == b.busy_channels && a.dilation == b.dilation);
    }
    mpitopo_network_load_destroy(&l);
    free(mapping);
    mpitopo_pattern_destroy(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialised;
    if (!initialised) {
        CHECK(mpitopo_set_allocator(&fuzz_allocator) == MPITOPO_SUCCESS);
        initialised = 1;
    }
    char *desc = malloc(size + 1);
    if (!desc)
        return 0;
    memcpy(desc, data, size);
    desc[size] = '\0';
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_string(desc, &net);
    if (rc == MPITOPO_SUCCESS) {
        CHECK(net != NULL);
        check_routes(net, data, size);
    } else {
        CHECK(net == NULL && rc < 0 && strlen(mpitopo_last_error()) > 0);
    }
    mpitopo_network_destroy(&net);
    CHECK(net == NULL);
    free(desc);
    return 0;
}
