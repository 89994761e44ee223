/*
 * libFuzzer harness of the Slurm topology reader (issue 32): the input is a
 * topology.conf (topology/tree or topology/block). Every input must either
 * fail cleanly (MPITOPO_ERR_FORMAT or another error code, a message, no
 * topology) or give hosts that are found by their own names and a machine
 * of the file's hosts whose nodes are a permutation of them, two leaves
 * each. The first line, read as SLURM_TOPOLOGY_ADDR and its pattern
 * separated by a blank, goes through the address parser too.
 * Inconsistencies trap; crashes, leaks and undefined behaviour are left
 * to the sanitizers.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "network/slurm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


#define FUZZ_ALLOC_LIMIT ((size_t)1 << 24)
#include "fuzz_alloc.h"

static void check_topology(const mpitopo__slurm_t *t)
{
    int n = mpitopo__slurm_nhosts(t);
    CHECK(n >= 1);
    if (n > 4096)
        return;
    for (int h = 0; h < n; h++) {
        CHECK(mpitopo__slurm_find(t, mpitopo__slurm_host(t, h)) == h);
        int depth = 0;
        int64_t labels[MPITOPO__SLURM_MAX_DEPTH];
        mpitopo__slurm_path(t, h, &depth, labels, NULL);
        CHECK(depth >= 1 && depth <= MPITOPO__SLURM_MAX_DEPTH);
        for (int l = 0; l < depth; l++)
            CHECK(labels[l] >= 0);
    }
    mpitopo_machine_t *m = NULL;
    int *node_of = malloc((size_t)n * sizeof *node_of);
    char *seen = calloc((size_t)n, 1);
    CHECK(node_of && seen);
    int rc = mpitopo__slurm_machine(t, 0, NULL, "core:2", &m, node_of);
    if (rc == MPITOPO_SUCCESS) {
        int nleaves = 0, node_level = -1, nunits = 0;
        CHECK(mpitopo_machine_nleaves(m, &nleaves) == MPITOPO_SUCCESS && nleaves == 2 * n);
        CHECK(mpitopo_machine_node_level(m, &node_level) == MPITOPO_SUCCESS && node_level >= 0);
        CHECK(mpitopo_machine_level(m, node_level, NULL, NULL, &nunits, NULL, NULL) == MPITOPO_SUCCESS);
        CHECK(nunits == n);
        for (int h = 0; h < n; h++) {
            CHECK(node_of[h] >= 0 && node_of[h] < n && !seen[node_of[h]]);
            seen[node_of[h]] = 1;
        }
    } else {
        CHECK(m == NULL && rc < 0 && strlen(mpitopo_last_error()) > 0);
    }
    mpitopo_machine_destroy(&m);
    free(node_of);
    free(seen);
}

static void check_addr(const uint8_t *data, size_t size)
{
    char line[512];
    size_t n = 0;
    while (n < size && n < sizeof line - 1 && data[n] != '\n' && data[n] != '\0') {
        line[n] = (char)data[n];
        n++;
    }
    line[n] = '\0';
    char *blank = strchr(line, ' ');
    if (!blank)
        return;
    *blank = '\0';
    int depth = -1;
    int64_t labels[MPITOPO__SLURM_MAX_DEPTH];
    char why[200];
    if (mpitopo__slurm_addr(line, blank + 1, &depth, labels, why, sizeof why) == 0) {
        CHECK(depth >= 0 && depth <= MPITOPO__SLURM_MAX_DEPTH);
        for (int l = 0; l < depth; l++)
            CHECK(labels[l] >= 0);
    } else {
        CHECK(why[0] != '\0');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialised;
    if (!initialised) {
        CHECK(mpitopo_set_allocator(&fuzz_allocator) == MPITOPO_SUCCESS);
        initialised = 1;
    }
    check_addr(data, size);
    mpitopo__slurm_t *t = NULL;
    int rc = mpitopo__slurm_parse("fuzz.conf", (const char *)data, size, "fuzz", &t);
    if (rc == MPITOPO_SUCCESS) {
        CHECK(t != NULL);
        check_topology(t);
    } else {
        /* A bad file is named in its message; out of memory (the harness's
         * allocator refuses big blocks: node[0-999999]) need not be. */
        CHECK(t == NULL && rc < 0 && (rc == MPITOPO_ERR_NOMEM || strstr(mpitopo_last_error(), "fuzz") != NULL));
    }
    mpitopo__slurm_free(&t);
    CHECK(t == NULL);
    return 0;
}
