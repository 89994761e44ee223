/*
 * libFuzzer harness of mpitopo_network_from_fabric. The input is the
 * topology file, then a line "%%", then the routes file (no "%%": all
 * topology, no routes); both are written to temporary files and imported.
 * Every input must either fail cleanly (an error code, a message, no
 * network) or give a network whose routes, for a few pairs drawn from the
 * input, stay inside it: every channel in range, of positive capacity and
 * named "A->B", no route longer than max_route, the same route twice, and
 * the route's channels chained (each one leaves where the previous one
 * arrives). Inconsistencies trap; crashes, leaks and undefined behaviour
 * are left to the sanitizers.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define FUZZ_ALLOC_LIMIT ((size_t)1 << 20)
#include "fuzz_alloc.h"

#define MAX_ROUTE 4096

static char topo_path[64], routes_path[64];

static void put(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(data, 1, size, f) == size);
    CHECK(fclose(f) == 0);
}

/* The ends of a channel name "FROM/pP->TO/pQ" into from and to. */
static void ends(const char *name, char *from, char *to, size_t size)
{
    const char *arrow = strstr(name, "->");
    CHECK(arrow != NULL);
    snprintf(from, size, "%.*s", (int)(arrow - name), name);
    snprintf(to, size, "%s", arrow + 2);
}

static void check_routes(const mpitopo_network_t *net, const uint8_t *data, size_t size)
{
    int n = 0, maxr = 0;
    int64_t nch = 0;
    CHECK(mpitopo_network_size(net, &n, &nch, &maxr) == MPITOPO_SUCCESS);
    CHECK(n >= 1 && nch >= 2 && maxr >= 0 && maxr <= MAX_ROUTE);
    static int64_t r[MAX_ROUTE], r2[MAX_ROUTE];
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ULL;
    for (int t = 0; t < 8; t++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        int s = (int)((h >> 33) % (uint64_t)n), d = (int)((h >> 7) % (uint64_t)n);
        int len = -1, len2 = -1;
        CHECK(mpitopo_network_route(net, s, d, MAX_ROUTE, r, &len) == MPITOPO_SUCCESS);
        CHECK(len >= 0 && len <= maxr && (len == 0) == (s == d));
        CHECK(mpitopo_network_route(net, s, d, MAX_ROUTE, r2, &len2) == MPITOPO_SUCCESS);
        CHECK(len2 == len && memcmp(r, r2, sizeof *r * (size_t)len) == 0);
        char prev_to[300] = "", from[300], to[300], name[600];
        int chained = 1; /* names whose descriptions hold "->" cannot be split */
        for (int i = 0; i < len; i++) {
            double cap = 0;
            CHECK(r[i] >= 0 && r[i] < nch);
            CHECK(mpitopo_network_channel(net, r[i], &cap, name, sizeof name) == MPITOPO_SUCCESS);
            CHECK(cap > 0);
            ends(name, from, to, sizeof from);
            chained &= strstr(strstr(name, "->") + 2, "->") == NULL;
            /* The previous channel arrives at this one's vertex (ports differ). */
            if (i > 0 && chained) {
                *strrchr(prev_to, '/') = '\0';
                *strrchr(from, '/') = '\0';
                CHECK(strcmp(prev_to, from) == 0);
            }
            snprintf(prev_to, sizeof prev_to, "%s", to);
        }
        char host[256];
        CHECK(mpitopo_network_node_name(net, d, host, sizeof host) == MPITOPO_SUCCESS);
    }
    CHECK(mpitopo_network_channel(net, nch, NULL, NULL, 0) == MPITOPO_ERR_RANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialised;
    if (!initialised) {
        CHECK(mpitopo_set_allocator(&fuzz_allocator) == MPITOPO_SUCCESS);
        snprintf(topo_path, sizeof topo_path, "/tmp/fuzz_fabric_%ld.topo", (long)getpid());
        snprintf(routes_path, sizeof routes_path, "/tmp/fuzz_fabric_%ld.lfts", (long)getpid());
        initialised = 1;
    }
    const uint8_t *sep = NULL;
    for (size_t i = 0; i + 3 <= size && !sep; i++)
        if (data[i] == '%' && data[i + 1] == '%' && data[i + 2] == '\n' &&
            (i == 0 || data[i - 1] == '\n'))
            sep = data + i;
    size_t tlen = sep ? (size_t)(sep - data) : size;
    put(topo_path, data, tlen);
    put(routes_path, sep ? sep + 3 : data, sep ? size - tlen - 3 : 0);
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_fabric(topo_path, routes_path, &net);
    if (rc == MPITOPO_SUCCESS) {
        CHECK(net != NULL);
        check_routes(net, data, size);
    } else {
        CHECK(net == NULL && rc < 0 && strlen(mpitopo_last_error()) > 0);
    }
    mpitopo_network_destroy(&net);
    CHECK(net == NULL);
    unlink(topo_path);
    unlink(routes_path);
    return 0;
}
