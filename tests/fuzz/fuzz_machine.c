/*
 * libFuzzer harness of mpitopo_machine_from_string. Every input must either
 * fail cleanly (an error code, a message, no machine) or give a machine whose
 * queries agree with one another, whose description parses back to the same
 * machine, and which mpitopo_machine_from_paths rebuilds from its leaf paths.
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

/* The paths of leaves larger than this are not rebuilt through from_paths. */
#define MAX_REBUILD 4096

static void check_levels(const mpitopo_machine_t *m, int nlevels, int nleaves)
{
    int prev = 1;
    for (int l = 0; l < nlevels; l++) {
        const char *name = NULL;
        double cost = -1;
        int nunits = 0, lo = 0, hi = 0;
        CHECK(mpitopo_machine_level(m, l, &name, &cost, &nunits, &lo, &hi) == MPITOPO_SUCCESS);
        CHECK(name && strlen(name) >= 1 && strlen(name) < MPITOPO_MAX_NAME);
        CHECK(cost >= 0);
        /* A regular machine: every unit has the same number of children. */
        CHECK(lo >= 1 && lo == hi && nunits == prev * lo);
        prev = nunits;
    }
    CHECK(prev == nleaves);
    CHECK(mpitopo_machine_level(m, nlevels, NULL, NULL, NULL, NULL, NULL) == MPITOPO_ERR_RANGE);
    CHECK(mpitopo_machine_level(m, -1, NULL, NULL, NULL, NULL, NULL) == MPITOPO_ERR_RANGE);
}

/* Queries between leaf a and a few others agree with unit_of. */
static void check_leaf(const mpitopo_machine_t *m, int nlevels, int nleaves, int a,
                       const int *others, int nothers)
{
    for (int l = 0; l < nlevels; l++) {
        int unit = -1, first = -1, count = -1;
        CHECK(mpitopo_machine_unit_of(m, l, a, &unit) == MPITOPO_SUCCESS);
        CHECK(mpitopo_machine_unit_leaves(m, l, unit, &first, &count) == MPITOPO_SUCCESS);
        CHECK(first <= a && a < first + count && first + count <= nleaves);
    }
    for (int i = 0; i < nothers; i++) {
        int b = others[i], level = -1, expect = nlevels;
        double cost = -1;
        for (int l = 0; l < nlevels && expect == nlevels; l++) {
            int ua, ub;
            CHECK(mpitopo_machine_unit_of(m, l, a, &ua) == MPITOPO_SUCCESS);
            CHECK(mpitopo_machine_unit_of(m, l, b, &ub) == MPITOPO_SUCCESS);
            if (ua != ub)
                expect = l;
        }
        CHECK(mpitopo_machine_meet_level(m, a, b, &level) == MPITOPO_SUCCESS);
        CHECK(level == expect && (level == nlevels) == (a == b));
        CHECK(mpitopo_machine_cost(m, a, b, &cost) == MPITOPO_SUCCESS);
        if (a == b) {
            CHECK(cost == 0);
        } else {
            double want;
            CHECK(mpitopo_machine_level(m, level, NULL, &want, NULL, NULL, NULL) == 0);
            CHECK(cost == want);
        }
    }
    int unit;
    CHECK(mpitopo_machine_unit_of(m, 0, nleaves, &unit) == MPITOPO_ERR_RANGE);
    CHECK(mpitopo_machine_meet_level(m, a, -1, &unit) == MPITOPO_ERR_RANGE);
}

/* Two machines have the same levels and the same units on probed leaves. */
static void check_same(const mpitopo_machine_t *a, const mpitopo_machine_t *b, int nlevels,
                       int nleaves)
{
    int n = 0, nl = 0;
    CHECK(mpitopo_machine_nleaves(b, &n) == 0 && n == nleaves);
    CHECK(mpitopo_machine_nlevels(b, &nl) == 0 && nl == nlevels);
    for (int l = 0; l < nlevels; l++) {
        const char *na, *nb;
        double ca, cb;
        int ua, ub;
        CHECK(mpitopo_machine_level(a, l, &na, &ca, &ua, NULL, NULL) == 0);
        CHECK(mpitopo_machine_level(b, l, &nb, &cb, &ub, NULL, NULL) == 0);
        CHECK(strcmp(na, nb) == 0 && ca == cb && ua == ub);
        int probes[] = {0, nleaves / 3, nleaves / 2, nleaves - 1};
        for (int i = 0; i < 4; i++) {
            CHECK(mpitopo_machine_unit_of(a, l, probes[i], &ua) == 0);
            CHECK(mpitopo_machine_unit_of(b, l, probes[i], &ub) == 0);
            CHECK(ua == ub);
        }
    }
}

/* describe() gives the string of a regular machine: it must parse back. */
static void check_describe(const mpitopo_machine_t *m, int nlevels, int nleaves)
{
    char buf[4096], small[8];
    CHECK(mpitopo_machine_describe(m, buf, sizeof buf) == MPITOPO_SUCCESS);
    size_t len = strlen(buf);
    for (size_t s = 1; s <= sizeof small; s++) {
        int rc = mpitopo_machine_describe(m, small, s);
        CHECK(rc == (len < s ? MPITOPO_SUCCESS : MPITOPO_ERR_RANGE));
        CHECK(strlen(small) == (len < s ? len : s - 1) && memcmp(small, buf, strlen(small)) == 0);
    }
    mpitopo_machine_t *again = NULL;
    CHECK(mpitopo_machine_from_string(buf, &again) == MPITOPO_SUCCESS);
    check_same(m, again, nlevels, nleaves);
    mpitopo_machine_destroy(&again);
}

/* Rebuild the machine from its leaf paths given in reverse order. */
static void check_rebuild(const mpitopo_machine_t *m, int nlevels, int nleaves)
{
    static int paths[MAX_REBUILD * MPITOPO_MAX_LEVELS], leaf_of[MAX_REBUILD];
    const char *names[MPITOPO_MAX_LEVELS];
    double costs[MPITOPO_MAX_LEVELS];
    for (int l = 0; l < nlevels; l++)
        CHECK(mpitopo_machine_level(m, l, &names[l], &costs[l], NULL, NULL, NULL) == 0);
    for (int leaf = 0; leaf < nleaves; leaf++)
        for (int l = 0; l < nlevels; l++)
            CHECK(mpitopo_machine_unit_of(m, l, leaf, &paths[(nleaves - 1 - leaf) * nlevels + l]) == 0);
    mpitopo_machine_t *p = NULL;
    int rc = mpitopo_machine_from_paths(nlevels, names, costs, nleaves, paths, &p, leaf_of);
    CHECK(rc == MPITOPO_SUCCESS);
    for (int i = 0; i < nleaves; i++)
        CHECK(leaf_of[i] == nleaves - 1 - i);
    check_same(m, p, nlevels, nleaves);
    mpitopo_machine_destroy(&p);
}

static void exercise(const mpitopo_machine_t *m, const uint8_t *data, size_t size)
{
    int nleaves = 0, nlevels = 0, node = -2;
    CHECK(mpitopo_machine_nleaves(m, &nleaves) == MPITOPO_SUCCESS && nleaves >= 1);
    CHECK(mpitopo_machine_nlevels(m, &nlevels) == MPITOPO_SUCCESS);
    CHECK(nlevels >= 1 && nlevels <= MPITOPO_MAX_LEVELS);
    CHECK(mpitopo_machine_node_level(m, &node) == MPITOPO_SUCCESS);
    CHECK(node >= -1 && node < nlevels);
    check_levels(m, nlevels, nleaves);

    uint32_t h = 2166136261u; /* FNV-1a of the input picks a few more leaves */
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    int leaves[] = {0, nleaves - 1, nleaves / 2, (int)(h % (uint32_t)nleaves),
                    (int)((h >> 7) % (uint32_t)nleaves)};
    int nprobes = (int)(sizeof leaves / sizeof leaves[0]);
    for (int i = 0; i < nprobes; i++)
        check_leaf(m, nlevels, nleaves, leaves[i], leaves, nprobes);
    check_describe(m, nlevels, nleaves);
    if (nleaves <= MAX_REBUILD)
        check_rebuild(m, nlevels, nleaves);
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
    mpitopo_machine_t *m = NULL;
    int rc = mpitopo_machine_from_string(desc, &m);
    if (rc == MPITOPO_SUCCESS) {
        CHECK(m != NULL);
        exercise(m, data, size);
    } else {
        CHECK(m == NULL);
        CHECK(rc == MPITOPO_ERR_PARSE || rc == MPITOPO_ERR_RANGE || rc == MPITOPO_ERR_NOMEM);
        CHECK(mpitopo_last_error()[0] != '\0');
    }
    mpitopo_machine_destroy(&m);
    free(desc);
    return 0;
}
