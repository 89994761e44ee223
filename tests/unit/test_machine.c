/* Unit tests of the machine model: parsing, layouts, queries, describe,
 * hwloc, errors and allocation failures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "machine/machine_internal.h"
#include "unit.h"

#include <hwloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

#define assert_contains(text, needle)                                                      \
    do {                                                                                   \
        const char *t_ = (text), *n_ = (needle);                                           \
        if (!strstr(t_, n_))                                                               \
            fail_msg("expected \"%s\" in \"%s\"", n_, t_);                                 \
    } while (0)

static mpitopo_machine_t *must_parse(const char *desc)
{
    mpitopo_machine_t *m = NULL;
    int rc = mpitopo_machine_from_string(desc, &m);
    if (rc != MPITOPO_SUCCESS)
        fail_msg("\"%s\": %s", desc, mpitopo_last_error());
    return m;
}

static int leaves(const mpitopo_machine_t *m)
{
    int n = -1;
    assert_int_equal(mpitopo_machine_nleaves(m, &n), MPITOPO_SUCCESS);
    return n;
}

static void describe(const mpitopo_machine_t *m, char *buf, size_t size)
{
    int rc = mpitopo_machine_describe(m, buf, size);
    if (rc != MPITOPO_SUCCESS)
        fail_msg("describe: %s", mpitopo_last_error());
}

/* Two machines have the same levels, costs and layout. */
static void assert_same_layout(const mpitopo_machine_t *a, const mpitopo_machine_t *b)
{
    assert_int_equal(a->nlevels, b->nlevels);
    assert_int_equal(a->nleaves, b->nleaves);
    assert_int_equal(a->node_level, b->node_level);
    for (int l = 0; l < a->nlevels; l++) {
        assert_string_equal(a->name[l], b->name[l]);
        assert_true(a->cost[l] == b->cost[l]);
        assert_int_equal(a->nunits[l], b->nunits[l]);
        assert_memory_equal(a->unit[l], b->unit[l], (size_t)a->nleaves * sizeof(int));
        assert_memory_equal(a->first[l], b->first[l], ((size_t)a->nunits[l] + 1) * sizeof(int));
    }
}

/* Every unit's leaves are the contiguous range unit_leaves gives, units
 * follow one another, and the leaf level is the identity. */
static void check_contiguity(const mpitopo_machine_t *m)
{
    int nlevels, n = leaves(m);
    assert_int_equal(mpitopo_machine_nlevels(m, &nlevels), MPITOPO_SUCCESS);
    for (int l = 0; l < nlevels; l++) {
        int nunits, next = 0;
        assert_int_equal(mpitopo_machine_level(m, l, NULL, NULL, &nunits, NULL, NULL), 0);
        for (int u = 0; u < nunits; u++) {
            int first, count;
            assert_int_equal(mpitopo_machine_unit_leaves(m, l, u, &first, &count), 0);
            assert_int_equal(first, next);
            assert_true(count >= 1);
            for (int leaf = first; leaf < first + count; leaf++) {
                int unit;
                assert_int_equal(mpitopo_machine_unit_of(m, l, leaf, &unit), 0);
                assert_int_equal(unit, u);
            }
            next = first + count;
        }
        assert_int_equal(next, n);
    }
    for (int leaf = 0; leaf < n; leaf++) {
        int unit;
        assert_int_equal(mpitopo_machine_unit_of(m, nlevels - 1, leaf, &unit), 0);
        assert_int_equal(unit, leaf);
    }
}

static int compare_rows(const int *a, const int *b, int n)
{
    for (int l = 0; l < n; l++)
        if (a[l] != b[l])
            return a[l] < b[l] ? -1 : 1;
    return 0;
}

/* Meet level of two label paths: the first level where they differ. */
static int naive_meet(const int *a, const int *b, int nlevels)
{
    for (int l = 0; l < nlevels; l++)
        if (a[l] != b[l])
            return l;
    return nlevels;
}

/* ------------------------------------------------------------------------ */
/* Synthetic descriptions                                                    */

static void test_from_string_basic(void **state)
{
    (void)state;
    mpitopo_machine_t *m = must_parse("switch:4 node:16 socket:2 core:8");
    int n, nlevels, node;
    assert_int_equal(mpitopo_machine_nleaves(m, &n), 0);
    assert_int_equal(n, 1024);
    assert_int_equal(mpitopo_machine_nlevels(m, &nlevels), 0);
    assert_int_equal(nlevels, 4);
    assert_int_equal(mpitopo_machine_node_level(m, &node), 0);
    assert_int_equal(node, 1);

    static const char *const names[] = {"switch", "node", "socket", "core"};
    static const int nunits[] = {4, 64, 128, 1024}, arity[] = {4, 16, 2, 8};
    for (int l = 0; l < 4; l++) {
        const char *name;
        double cost;
        int units, lo, hi;
        assert_int_equal(mpitopo_machine_level(m, l, &name, &cost, &units, &lo, &hi), 0);
        assert_string_equal(name, names[l]);
        assert_true(cost == 4 - l);
        assert_int_equal(units, nunits[l]);
        assert_int_equal(lo, arity[l]);
        assert_int_equal(hi, arity[l]);
    }
    /* Every out pointer of level() may be NULL. */
    assert_int_equal(mpitopo_machine_level(m, 2, NULL, NULL, NULL, NULL, NULL), 0);

    int level, unit, first, count;
    double cost;
    assert_int_equal(mpitopo_machine_meet_level(m, 5, 5, &level), 0);
    assert_int_equal(level, 4);
    assert_int_equal(mpitopo_machine_cost(m, 5, 5, &cost), 0);
    assert_true(cost == 0.0);
    assert_int_equal(mpitopo_machine_meet_level(m, 0, 7, &level), 0);
    assert_int_equal(level, 3);
    assert_int_equal(mpitopo_machine_meet_level(m, 0, 8, &level), 0);
    assert_int_equal(level, 2);
    assert_int_equal(mpitopo_machine_meet_level(m, 0, 16, &level), 0);
    assert_int_equal(level, 1);
    assert_int_equal(mpitopo_machine_meet_level(m, 255, 256, &level), 0);
    assert_int_equal(level, 0);
    assert_int_equal(mpitopo_machine_cost(m, 255, 256, &cost), 0);
    assert_true(cost == 4.0);
    assert_int_equal(mpitopo_machine_unit_of(m, 1, 1023, &unit), 0);
    assert_int_equal(unit, 63);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 1, 2, &first, &count), 0);
    assert_int_equal(first, 32);
    assert_int_equal(count, 16);
    check_contiguity(m);
    mpitopo_machine_destroy(&m);
    assert_null(m);
}

static void test_header_costs(void **state)
{
    (void)state;
    /* The example of machine.h: 100:40:10:1. */
    mpitopo_machine_t *m = must_parse("switch:4@100 node:16@40 socket:2@10 core:8@1");
    double cost;
    assert_int_equal(mpitopo_machine_cost(m, 0, 1, &cost), 0);
    assert_true(cost == 1);
    assert_int_equal(mpitopo_machine_cost(m, 0, 8, &cost), 0);
    assert_true(cost == 10);
    assert_int_equal(mpitopo_machine_cost(m, 0, 16, &cost), 0);
    assert_true(cost == 40);
    assert_int_equal(mpitopo_machine_cost(m, 0, 1023, &cost), 0);
    assert_true(cost == 100);
    char buf[128];
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "switch:4@100 node:16@40 socket:2@10 core:8@1");
    mpitopo_machine_destroy(&m);
}

static void test_node_level(void **state)
{
    (void)state;
    static const struct {
        const char *desc;
        int node;
    } cases[] = {
        {"node:4 core:2", 0}, {"rack:2 node:3", 1}, {"Node:4 core:2", -1},
        {"nodes:4 core:2", -1}, {"core:8", -1}, {"a:1 b:1 node:1", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mpitopo_machine_t *m = must_parse(cases[i].desc);
        int node = 99;
        assert_int_equal(mpitopo_machine_node_level(m, &node), 0);
        assert_int_equal(node, cases[i].node);
        mpitopo_machine_destroy(&m);
    }
}

static void test_separators_and_names(void **state)
{
    (void)state;
    mpitopo_machine_t *a = must_parse("node:3 core:2");
    static const char *const same[] = {
        "node:3,core:2", " node:3 ,, core:2 ", "\tnode:3\n core:2\r\n", "node:+3 core:02",
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        mpitopo_machine_t *b = must_parse(same[i]);
        assert_same_layout(a, b);
        mpitopo_machine_destroy(&b);
    }
    mpitopo_machine_destroy(&a);

    /* 31 characters is the longest name; '_' and '-' are allowed after the first letter. */
    a = must_parse("abcdefghijklmnopqrstuvwxyz01234:2 B_-9:1");
    const char *name;
    assert_int_equal(mpitopo_machine_level(a, 0, &name, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(strlen(name), 31);
    mpitopo_machine_destroy(&a);

    /* Sixteen levels are allowed. */
    a = must_parse("a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:1 i:1 j:1 k:1 l:1 m:1 n:1 o:2 p:3");
    assert_int_equal(leaves(a), 6);
    check_contiguity(a);
    mpitopo_machine_destroy(&a);
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *desc;
        int code;
        const char *text;   /* offending text as quoted in the message */
        const char *column; /* its position */
    } cases[] = {
        {"", MPITOPO_ERR_PARSE, "no level", ""},
        {" ,, \t", MPITOPO_ERR_PARSE, "no level", ""},
        {"node:0 core:4", MPITOPO_ERR_PARSE, "arity \"0\" of level 'node'", "(column 6)"},
        {"node:4 core:-2", MPITOPO_ERR_PARSE, "arity \"-2\"", "(column 13)"},
        {"node", MPITOPO_ERR_PARSE, "level \"node\"", "(column 1)"},
        {"node:4 core", MPITOPO_ERR_PARSE, "level \"core\"", "(column 8)"},
        {":4", MPITOPO_ERR_PARSE, "level name \"\"", "(column 1)"},
        {"node:4 1core:2", MPITOPO_ERR_PARSE, "\"1core\" (column 8) must start with a letter", ""},
        {"no#de:4", MPITOPO_ERR_PARSE, "level name \"no#de\"", "(column 3)"},
        {"_x:4", MPITOPO_ERR_PARSE, "level name \"_x\"", "(column 1)"},
        {"node:4 node:2", MPITOPO_ERR_PARSE, "\"node\" (column 8) repeats level 0", ""},
        {"abcdefghijklmnopqrstuvwxyz012345:2", MPITOPO_ERR_PARSE,
         "\"abcdefghijklmnopqrstuvwxyz012345\"", "longer than 31"},
        {"node:x", MPITOPO_ERR_PARSE, "arity \"x\"", "(column 6)"},
        {"node:", MPITOPO_ERR_PARSE, "arity \"\"", "(column 6)"},
        {"node:4.5", MPITOPO_ERR_PARSE, "arity \"4.5\"", "(column 6)"},
        {"node::4", MPITOPO_ERR_PARSE, "arity \":4\"", "(column 6)"},
        {"node:4@", MPITOPO_ERR_PARSE, "cost \"\"", "(column 8)"},
        {"node:4@x", MPITOPO_ERR_PARSE, "cost \"x\"", "(column 8)"},
        {"node:4@-1", MPITOPO_ERR_PARSE, "cost \"-1\"", "must be >= 0"},
        {"node:4@1e999", MPITOPO_ERR_PARSE, "cost \"1e999\"", "(column 8)"},
        {"node:4@nan", MPITOPO_ERR_PARSE, "cost \"nan\"", "(column 8)"},
        {"node:4@inf", MPITOPO_ERR_PARSE, "cost \"inf\"", "(column 8)"},
        {"node:4@0x10", MPITOPO_ERR_PARSE, "cost \"0x10\"", "(column 8)"},
        {"node:4@1@2", MPITOPO_ERR_PARSE, "cost \"1@2\"", "(column 8)"},
        {"node:4@1 core:2", MPITOPO_ERR_PARSE, "level 'core' (column 10) lacks a cost", ""},
        {"node:4 core:2@1", MPITOPO_ERR_PARSE, "level 'core' (column 8) has a cost", ""},
        {"node:4\x01", MPITOPO_ERR_PARSE, "arity \"4\\x01\"", "(column 6)"},
        {"n\"de:4", MPITOPO_ERR_PARSE, "level name \"n\\\"de\"", "(column 2)"},
        {"node:99999999999999999999", MPITOPO_ERR_RANGE, "arity \"99999999999999999999\"",
         "(column 6)"},
        {"node:2147483648", MPITOPO_ERR_RANGE, "arity \"2147483648\"", "must be <= 2147483647"},
        {"node:-99999999999999999999", MPITOPO_ERR_PARSE, "arity \"-99999999999999999999\"",
         "(column 6)"},
        {"a:65536 b:32768", MPITOPO_ERR_RANGE, "level 'b' (column 9)", "2147483648"},
        {"a:2 b:2 c:2 d:2 e:2 f:2 g:2 h:2 i:2 j:2 k:2 l:2 m:2 n:2 o:2 p:2 q:2 r:2",
         MPITOPO_ERR_RANGE, "level \"q:2\" (column 65)", "16 levels"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mpitopo_machine_t *m = (mpitopo_machine_t *)&m; /* must be reset to NULL */
        int rc = mpitopo_machine_from_string(cases[i].desc, &m);
        if (rc != cases[i].code)
            fail_msg("\"%s\": got %s, expected %s (%s)", cases[i].desc, mpitopo_err_name(rc),
                     mpitopo_err_name(cases[i].code), mpitopo_last_error());
        assert_null(m);
        const char *msg = mpitopo_last_error();
        assert_contains(msg, "mpitopo_machine_from_string: desc = \"");
        assert_contains(msg, cases[i].text);
        assert_contains(msg, cases[i].column);
    }
    /* The message of the brief, word for word. */
    mpitopo_machine_t *m;
    assert_int_equal(mpitopo_machine_from_string("node:0 core:4", &m), MPITOPO_ERR_PARSE);
    assert_string_equal(mpitopo_last_error(), "mpitopo_machine_from_string: desc = \"node:0 "
                                              "core:4\": arity \"0\" of level 'node' (column 6) "
                                              "must be >= 1");
    /* Long descriptions are cut in the message. */
    char longdesc[300];
    memset(longdesc, 'a', sizeof longdesc - 1);
    longdesc[sizeof longdesc - 1] = '\0';
    assert_int_equal(mpitopo_machine_from_string(longdesc, &m), MPITOPO_ERR_PARSE);
    assert_contains(mpitopo_last_error(), "...\"");
}

static void test_null_arguments(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    assert_int_equal(mpitopo_machine_from_string(NULL, &m), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "desc is NULL");
    assert_int_equal(mpitopo_machine_from_string("node:2", NULL), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "machine is NULL");

    int i;
    double d;
    char buf[16];
    assert_int_equal(mpitopo_machine_nleaves(NULL, &i), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "mpitopo_machine_nleaves: machine is NULL");
    assert_int_equal(mpitopo_machine_nlevels(NULL, &i), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_node_level(NULL, &i), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_level(NULL, 0, NULL, NULL, NULL, NULL, NULL),
                     MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_unit_of(NULL, 0, 0, &i), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_unit_leaves(NULL, 0, 0, &i, &i), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_meet_level(NULL, 0, 0, &i), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_cost(NULL, 0, 0, &d), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_describe(NULL, buf, sizeof buf), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_set_costs(NULL, 1, &d), MPITOPO_ERR_ARG);

    m = must_parse("node:2 core:2");
    assert_int_equal(mpitopo_machine_nleaves(m, NULL), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "nleaves is NULL");
    assert_int_equal(mpitopo_machine_nlevels(m, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_node_level(m, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_unit_of(m, 0, 0, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 0, 0, NULL, &i), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "first is NULL");
    assert_int_equal(mpitopo_machine_unit_leaves(m, 0, 0, &i, NULL), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "count is NULL");
    assert_int_equal(mpitopo_machine_meet_level(m, 0, 0, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_cost(m, 0, 0, NULL), MPITOPO_ERR_ARG);
    assert_int_equal(mpitopo_machine_describe(m, NULL, 16), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "buf is NULL");
    assert_int_equal(mpitopo_machine_set_costs(m, 2, NULL), MPITOPO_ERR_ARG);
    mpitopo_machine_destroy(&m);

    /* destroy accepts NULL and a NULL handle. */
    mpitopo_machine_destroy(NULL);
    mpitopo_machine_destroy(&m);
    assert_null(m);
}

static void test_query_ranges(void **state)
{
    (void)state;
    mpitopo_machine_t *m = must_parse("node:2 core:3");
    int i;
    double d;
    assert_int_equal(mpitopo_machine_level(m, -1, NULL, NULL, NULL, NULL, NULL),
                     MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "level = -1");
    assert_int_equal(mpitopo_machine_level(m, 2, NULL, NULL, NULL, NULL, NULL),
                     MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "level = 2");
    assert_int_equal(mpitopo_machine_unit_of(m, 2, 0, &i), MPITOPO_ERR_RANGE);
    assert_int_equal(mpitopo_machine_unit_of(m, 0, 6, &i), MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "leaf = 6");
    assert_int_equal(mpitopo_machine_unit_of(m, 0, -1, &i), MPITOPO_ERR_RANGE);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 0, 2, &i, &i), MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "unit = 2");
    assert_int_equal(mpitopo_machine_unit_leaves(m, 1, 5, &i, &i), 0);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 1, 6, &i, &i), MPITOPO_ERR_RANGE);
    assert_int_equal(mpitopo_machine_unit_leaves(m, -1, 0, &i, &i), MPITOPO_ERR_RANGE);
    assert_int_equal(mpitopo_machine_meet_level(m, 6, 0, &i), MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "mpitopo_machine_meet_level: a = 6");
    assert_int_equal(mpitopo_machine_meet_level(m, 0, -3, &i), MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "b = -3");
    assert_int_equal(mpitopo_machine_cost(m, 0, 6, &d), MPITOPO_ERR_RANGE);
    assert_contains(mpitopo_last_error(), "mpitopo_machine_cost: b = 6");
    mpitopo_machine_destroy(&m);
}

/* ------------------------------------------------------------------------ */
/* Brute force against naive paths                                           */

/* All pairs of random regular machines: the path of a leaf is its mixed-radix
 * digits. */
static void test_brute_regular(void **state)
{
    (void)state;
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, 42);
    for (int trial = 0; trial < 40; trial++) {
        int nlevels = 1 + (int)mpitopo__rng_below(&rng, 4), arity[4], n = 1;
        char desc[128];
        size_t len = 0;
        for (int l = 0; l < nlevels; l++) {
            arity[l] = 1 + (int)mpitopo__rng_below(&rng, 4);
            n *= arity[l];
            len += (size_t)snprintf(desc + len, sizeof desc - len, "%sL%d:%d", l ? " " : "", l,
                                    arity[l]);
        }
        mpitopo_machine_t *m = must_parse(desc);
        assert_int_equal(leaves(m), n);
        int(*path)[4] = calloc((size_t)n, sizeof *path);
        for (int leaf = 0; leaf < n; leaf++) {
            int x = leaf;
            for (int l = nlevels - 1; l >= 0; l--) {
                path[leaf][l] = x % arity[l];
                x /= arity[l];
            }
        }
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                int level;
                double cost;
                int expect = naive_meet(path[a], path[b], nlevels);
                assert_int_equal(mpitopo_machine_meet_level(m, a, b, &level), 0);
                assert_int_equal(level, expect);
                assert_int_equal(mpitopo_machine_cost(m, a, b, &cost), 0);
                assert_true(cost == (expect == nlevels ? 0.0 : (double)(nlevels - expect)));
            }
            for (int l = 0; l < nlevels; l++) {
                int unit, expect = 0;
                for (int k = 0; k <= l; k++)
                    expect = expect * arity[k] + path[a][k];
                assert_int_equal(mpitopo_machine_unit_of(m, l, a, &unit), 0);
                assert_int_equal(unit, expect);
            }
        }
        check_contiguity(m);
        free(path);
        mpitopo_machine_destroy(&m);
    }
}

/* A random irregular tree as explicit paths: every unit has 1..3 children
 * with distinct, sparse labels, spread over all four bytes of an int so that
 * every pass of the sort matters. Fills paths (nlevels per entry) and
 * returns the number of entries. */
static int random_tree(mpitopo__rng_t *rng, int nlevels, int level, int *prefix, int *paths, int n)
{
    static const int spread[] = {
        0,        1,        7,        255,        256,        257,       4096,
        65535,    65536,    65537,    0x00ff00ff, 0x00ffffff, 0x01000000, 0x01000001,
        0x0100ff00, 0x10000000, 0x7f000000, 0x7ffffffe, 0x7fffffff, 1000000,
    };
    int nchildren = 1 + (int)mpitopo__rng_below(rng, 3), labels[3];
    for (int c = 0; c < nchildren; c++) {
        int fresh;
        do {
            labels[c] = spread[mpitopo__rng_below(rng, sizeof spread / sizeof spread[0])];
            fresh = 1;
            for (int k = 0; k < c; k++)
                fresh = fresh && labels[k] != labels[c];
        } while (!fresh);
        prefix[level] = labels[c];
        if (level == nlevels - 1) {
            memcpy(paths + (size_t)n * (size_t)nlevels, prefix, (size_t)nlevels * sizeof(int));
            n++;
        } else {
            n = random_tree(rng, nlevels, level + 1, prefix, paths, n);
        }
    }
    return n;
}

static void shuffle_rows(mpitopo__rng_t *rng, int *paths, int n, int nlevels)
{
    int tmp[MPITOPO_MAX_LEVELS];
    size_t row = (size_t)nlevels * sizeof(int);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)mpitopo__rng_below(rng, (uint64_t)i + 1);
        memcpy(tmp, paths + (size_t)i * nlevels, row);
        memcpy(paths + (size_t)i * nlevels, paths + (size_t)j * nlevels, row);
        memcpy(paths + (size_t)j * nlevels, tmp, row);
    }
}

static void test_brute_paths(void **state)
{
    (void)state;
    static const char *const names[] = {"rack", "node", "socket", "core"};
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, 7);
    for (int trial = 0; trial < 100; trial++) {
        int nlevels = 1 + trial % 4, prefix[4], paths[81 * 4], leaf_of[81];
        int n = random_tree(&rng, nlevels, 0, prefix, paths, 0);
        shuffle_rows(&rng, paths, n, nlevels);
        double costs[4] = {9.5, 3.25, 2, 0};
        mpitopo_machine_t *m = NULL;
        int rc = mpitopo_machine_from_paths(nlevels, names, trial % 2 ? costs : NULL, n, paths,
                                            &m, leaf_of);
        if (rc)
            fail_msg("%s", mpitopo_last_error());
        assert_int_equal(leaves(m), n);
        for (int i = 0; i < n; i++) {
            const int *pi = paths + (size_t)i * nlevels;
            for (int j = 0; j < n; j++) {
                const int *pj = paths + (size_t)j * nlevels;
                int a = leaf_of[i], b = leaf_of[j], level;
                double cost;
                /* Leaves come in lexicographic order of the paths. */
                int order = compare_rows(pi, pj, nlevels);
                assert_true((order < 0) == (a < b) && (order == 0) == (a == b));
                int expect = naive_meet(pi, pj, nlevels);
                assert_int_equal(mpitopo_machine_meet_level(m, a, b, &level), 0);
                assert_int_equal(level, expect);
                assert_int_equal(mpitopo_machine_cost(m, a, b, &cost), 0);
                double want = expect == nlevels ? 0.0
                              : trial % 2       ? costs[expect]
                                                : (double)(nlevels - expect);
                assert_true(cost == want);
                for (int l = 0; l < nlevels; l++) {
                    int ua, ub;
                    assert_int_equal(mpitopo_machine_unit_of(m, l, a, &ua), 0);
                    assert_int_equal(mpitopo_machine_unit_of(m, l, b, &ub), 0);
                    assert_true((ua == ub) == (expect > l));
                }
            }
        }
        /* Arity ranges against a naive count of distinct children per parent. */
        for (int l = 0; l < nlevels; l++) {
            int lo = INT32_MAX, hi = 0, got_lo, got_hi;
            for (int i = 0; i < n; i++) {
                const int *pi = paths + (size_t)i * nlevels;
                int children = 0;
                for (int j = 0; j < n; j++) {
                    const int *pj = paths + (size_t)j * nlevels;
                    int first_of_label = 1;
                    if (compare_rows(pi, pj, l) != 0)
                        continue;
                    for (int k = 0; k < j; k++)
                        if (compare_rows(pj, paths + (size_t)k * nlevels, l + 1) == 0)
                            first_of_label = 0;
                    children += first_of_label;
                }
                lo = children < lo ? children : lo;
                hi = children > hi ? children : hi;
            }
            assert_int_equal(mpitopo_machine_level(m, l, NULL, NULL, NULL, &got_lo, &got_hi), 0);
            assert_int_equal(got_lo, lo);
            assert_int_equal(got_hi, hi);
        }
        check_contiguity(m);
        mpitopo_machine_destroy(&m);
    }
}

/* ------------------------------------------------------------------------ */
/* Explicit paths                                                            */

static void test_from_paths_irregular(void **state)
{
    (void)state;
    /* 4 nodes with 4, 4, 4 and 3 cores, given round-robin with sparse labels. */
    static const char *const names[] = {"node", "core"};
    int paths[15 * 2], leaf_of[15], n = 0;
    for (int c = 0; c < 4; c++)
        for (int node = 0; node < 4; node++)
            if (!(node == 3 && c == 3)) {
                paths[2 * n] = 10 * node + 5;
                paths[2 * n + 1] = 100 - c;
                n++;
            }
    assert_int_equal(n, 15);
    mpitopo_machine_t *m = NULL;
    assert_int_equal(mpitopo_machine_from_paths(2, names, NULL, n, paths, &m, leaf_of), 0);
    char buf[64];
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:4 core:[3..4] (15 leaves)");
    /* Entry 0 is node 5, core label 100: the last core of the first node. */
    assert_int_equal(leaf_of[0], 3);
    assert_int_equal(leaf_of[1], 7);
    int first, count, lo, hi, nunits;
    assert_int_equal(mpitopo_machine_unit_leaves(m, 0, 3, &first, &count), 0);
    assert_int_equal(first, 12);
    assert_int_equal(count, 3);
    assert_int_equal(mpitopo_machine_level(m, 1, NULL, NULL, &nunits, &lo, &hi), 0);
    assert_int_equal(nunits, 15);
    assert_int_equal(lo, 3);
    assert_int_equal(hi, 4);
    check_contiguity(m);
    mpitopo_machine_destroy(&m);

    /* leaf_of_entry is optional; a regular set of paths describes as a string. */
    assert_int_equal(mpitopo_machine_from_paths(2, names, NULL, 12, paths, &m, NULL), 0);
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:4 core:3");
    mpitopo_machine_t *s = must_parse(buf);
    assert_same_layout(m, s);
    mpitopo_machine_destroy(&s);
    mpitopo_machine_destroy(&m);
}

static void test_from_paths_errors(void **state)
{
    (void)state;
    const char *names[] = {"node", "core", "x"};
    int paths[] = {0, 0, 0, 1, 1, 0, 1, 1};
    double costs[] = {2, 1};
    mpitopo_machine_t *m = (mpitopo_machine_t *)&m;
    struct {
        int rc;
        const char *text;
    } got;
#define PATHS(nl, nm, c, ne, p)                                                     \
    (got.rc = mpitopo_machine_from_paths((nl), (nm), (c), (ne), (p), &m, NULL),     \
     got.text = mpitopo_last_error(), got.rc)
    assert_int_equal(PATHS(0, names, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_null(m);
    assert_contains(got.text, "mpitopo_machine_from_paths: nlevels = 0");
    assert_int_equal(PATHS(17, names, NULL, 4, paths), MPITOPO_ERR_RANGE);
    assert_contains(got.text, "nlevels = 17");
    assert_int_equal(PATHS(2, NULL, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names is NULL");
    const char *null_name[] = {"node", NULL};
    assert_int_equal(PATHS(2, null_name, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names[1] is NULL");
    const char *bad_name[] = {"node", "9core"};
    assert_int_equal(PATHS(2, bad_name, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names[1] = \"9core\" must start with a letter");
    const char *bad_char[] = {"no de", "core"};
    assert_int_equal(PATHS(2, bad_char, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names[0] = \"no de\"");
    assert_contains(got.text, "(character 3)");
    const char *dup_name[] = {"node", "node"};
    assert_int_equal(PATHS(2, dup_name, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names[1] = \"node\" repeats names[0]");
    const char *empty_name[] = {"", "core"};
    assert_int_equal(PATHS(2, empty_name, NULL, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "names[0] = \"\" is empty");
    double neg[] = {2, -1}, nan_cost[] = {NAN, 1}, inf_cost[] = {INFINITY, 1};
    assert_int_equal(PATHS(2, names, neg, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "costs[1] = -1");
    assert_int_equal(PATHS(2, names, nan_cost, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "costs[0] = nan");
    assert_int_equal(PATHS(2, names, inf_cost, 4, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "costs[0] = inf");
    assert_int_equal(PATHS(2, names, costs, 0, paths), MPITOPO_ERR_ARG);
    assert_contains(got.text, "nentries = 0");
    assert_int_equal(PATHS(2, names, costs, 4, NULL), MPITOPO_ERR_ARG);
    assert_contains(got.text, "paths is NULL");
    int negative[] = {0, 0, 0, 1, 1, -4, 1, 1};
    assert_int_equal(PATHS(2, names, costs, 4, negative), MPITOPO_ERR_ARG);
    assert_contains(got.text, "paths[5] = -4 (entry 2, level 1 'core')");
    int dup[] = {0, 0, 1, 1, 0, 1, 1, 1, 0, 1};
    assert_int_equal(PATHS(2, names, costs, 5, dup), MPITOPO_ERR_ARG);
    assert_contains(got.text, "entries 2 and 4 have the same path");
    int dup_sorted[] = {0, 0, 0, 1, 0, 1};
    assert_int_equal(PATHS(2, names, costs, 3, dup_sorted), MPITOPO_ERR_ARG);
    assert_contains(got.text, "entries 1 and 2 have the same path");
#undef PATHS
    int leaf_of[4] = {-7, -7, -7, -7};
    assert_int_equal(mpitopo_machine_from_paths(2, names, NULL, 4, paths, NULL, leaf_of),
                     MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "machine is NULL");
    /* A failed call leaves leaf_of_entry alone. */
    assert_int_equal(mpitopo_machine_from_paths(2, names, NULL, 5, dup, &m, leaf_of),
                     MPITOPO_ERR_ARG);
    assert_int_equal(leaf_of[0], -7);
}

/* ------------------------------------------------------------------------ */
/* Costs and descriptions                                                    */

static void test_set_costs(void **state)
{
    (void)state;
    mpitopo_machine_t *m = must_parse("node:2 socket:2 core:2");
    double c[] = {10, 0.5, -0.0}, bad[] = {1, -2, 0}, nan3[] = {1, 1, NAN}, cost;
    assert_int_equal(mpitopo_machine_set_costs(m, 2, c), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "ncosts = 2 must equal the number of levels, 3");
    assert_int_equal(mpitopo_machine_set_costs(m, 3, bad), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "mpitopo_machine_set_costs: costs[1] = -2");
    assert_int_equal(mpitopo_machine_set_costs(m, 3, nan3), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "costs[2] = nan");
    assert_int_equal(mpitopo_machine_cost(m, 0, 4, &cost), 0);
    assert_true(cost == 3.0); /* unchanged by the failed calls */
    assert_int_equal(mpitopo_machine_set_costs(m, 3, c), 0);
    assert_int_equal(mpitopo_machine_cost(m, 0, 4, &cost), 0);
    assert_true(cost == 10.0);
    assert_int_equal(mpitopo_machine_cost(m, 0, 2, &cost), 0);
    assert_true(cost == 0.5);
    char buf[64];
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2@10 socket:2@0.5 core:2@0");
    /* Setting the defaults back drops the costs from the description. */
    double defaults[] = {3, 2, 1};
    assert_int_equal(mpitopo_machine_set_costs(m, 3, defaults), 0);
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2 socket:2 core:2");
    mpitopo_machine_destroy(&m);
}

static void test_describe_roundtrip(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"switch:4 node:16 socket:2 core:8", "switch:4 node:16 socket:2 core:8"},
        {"node:3,core:2", "node:3 core:2"},
        {"core:1", "core:1"},
        {"node:4@3 core:2@1", "node:4@3 core:2@1"},
        {"node:4@2 core:2@1", ""},           /* equal to the defaults */
        {"a:2@0.1 b:3@1e-7 c:1@123456789012", "a:2@0.1 b:3@1e-07 c:1@123456789012"},
        {"a:2@0.3333333333333333 b:1@0", "a:2@0.3333333333333333 b:1@0"},
        {"a:2@-0 b:1@5", "a:2@0 b:1@5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mpitopo_machine_t *m = must_parse(cases[i].in), *again;
        char buf[256];
        describe(m, buf, sizeof buf);
        if (cases[i].out[0])
            assert_string_equal(buf, cases[i].out);
        else
            assert_string_equal(buf, "node:4 core:2");
        again = must_parse(buf);
        assert_same_layout(m, again);
        mpitopo_machine_destroy(&again);
        mpitopo_machine_destroy(&m);
    }
    /* Random regular machines with random costs round-trip exactly. */
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, 3);
    for (int trial = 0; trial < 200; trial++) {
        char desc[256], buf[512];
        size_t len = 0;
        int nlevels = 1 + (int)mpitopo__rng_below(&rng, 5);
        for (int l = 0; l < nlevels; l++)
            len += (size_t)snprintf(desc + len, sizeof desc - len, "%sl%d:%d", l ? "," : "", l,
                                    1 + (int)mpitopo__rng_below(&rng, 5));
        mpitopo_machine_t *m = must_parse(desc), *again;
        if (trial % 2) {
            double costs[5];
            for (int l = 0; l < nlevels; l++)
                costs[l] = mpitopo__rng_double(&rng) * pow(10.0, (double)mpitopo__rng_below(&rng, 40) - 20);
            assert_int_equal(mpitopo_machine_set_costs(m, nlevels, costs), 0);
        }
        describe(m, buf, sizeof buf);
        again = must_parse(buf);
        assert_same_layout(m, again);
        mpitopo_machine_destroy(&again);
        mpitopo_machine_destroy(&m);
    }
}

static void test_describe_truncation(void **state)
{
    (void)state;
    mpitopo_machine_t *m = must_parse("node:4 core:16");
    char buf[32];
    describe(m, buf, sizeof buf);
    size_t len = strlen(buf);
    assert_int_equal(len, 14);
    memset(buf, 'x', sizeof buf);
    assert_int_equal(mpitopo_machine_describe(m, buf, len + 1), 0);
    assert_string_equal(buf, "node:4 core:16");
    memset(buf, 'x', sizeof buf);
    assert_int_equal(mpitopo_machine_describe(m, buf, len), MPITOPO_ERR_RANGE);
    assert_string_equal(buf, "node:4 core:1");
    assert_contains(mpitopo_last_error(), "size = 14");
    assert_int_equal(mpitopo_machine_describe(m, buf, 5), MPITOPO_ERR_RANGE);
    assert_string_equal(buf, "node");
    assert_int_equal(mpitopo_machine_describe(m, buf, 1), MPITOPO_ERR_RANGE);
    assert_string_equal(buf, "");
    buf[0] = 'x';
    assert_int_equal(mpitopo_machine_describe(m, buf, 0), MPITOPO_ERR_RANGE);
    assert_int_equal(buf[0], 'x');
    mpitopo_machine_destroy(&m);

    /* Irregular: the leaf count is part of the text and may be cut too. */
    static const char *const names[] = {"node", "core"};
    int paths[] = {0, 0, 0, 1, 1, 0};
    assert_int_equal(mpitopo_machine_from_paths(2, names, NULL, 3, paths, &m, NULL), 0);
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2 core:[1..2] (3 leaves)");
    assert_int_equal(mpitopo_machine_describe(m, buf, 25), MPITOPO_ERR_RANGE);
    assert_string_equal(buf, "node:2 core:[1..2] (3 le");
    mpitopo_machine_destroy(&m);
}

/* ------------------------------------------------------------------------ */
/* Large machines                                                            */

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static void test_million_leaves(void **state)
{
    (void)state;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mpitopo_machine_t *m = must_parse("node:62500 core:16");
    double t = seconds_since(&t0);
    print_message("node:62500 core:16 built in %.3f s\n", t);
    int level, unit, first, count;
    assert_int_equal(leaves(m), 1000000);
    assert_int_equal(mpitopo_machine_unit_of(m, 0, 999999, &unit), 0);
    assert_int_equal(unit, 62499);
    assert_int_equal(mpitopo_machine_meet_level(m, 15, 16, &level), 0);
    assert_int_equal(level, 0);
    assert_int_equal(mpitopo_machine_meet_level(m, 999984, 999999, &level), 0);
    assert_int_equal(level, 1);
    mpitopo_machine_destroy(&m);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    m = must_parse("switch:64 node:1024 socket:2 core:8");
    t = seconds_since(&t0);
    print_message("switch:64 node:1024 socket:2 core:8 built in %.3f s\n", t);
    assert_int_equal(leaves(m), 1048576);
    assert_int_equal(mpitopo_machine_unit_of(m, 1, 1048575, &unit), 0);
    assert_int_equal(unit, 65535);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 0, 63, &first, &count), 0);
    assert_int_equal(first, 63 * 16384);
    assert_int_equal(count, 16384);
    assert_int_equal(mpitopo_machine_unit_leaves(m, 2, 5, &first, &count), 0);
    assert_int_equal(first, 40);
    assert_int_equal(count, 8);
    assert_int_equal(mpitopo_machine_meet_level(m, 16383, 16384, &level), 0);
    assert_int_equal(level, 0);
    assert_int_equal(mpitopo_machine_meet_level(m, 16, 23, &level), 0);
    assert_int_equal(level, 3);
    assert_int_equal(mpitopo_machine_meet_level(m, 16, 24, &level), 0);
    assert_int_equal(level, 2);
    char buf[64];
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "switch:64 node:1024 socket:2 core:8");

    /* The same machine from paths: in order (no sort) and reversed (sorted). */
    int n = 1048576, *paths = malloc((size_t)n * 4 * sizeof(int));
    assert_non_null(paths);
    for (int dir = 0; dir < 2; dir++) {
        for (int leaf = 0; leaf < n; leaf++) {
            int *row = paths + (size_t)(dir ? n - 1 - leaf : leaf) * 4;
            row[0] = leaf >> 14;
            row[1] = (leaf >> 4) & 1023;
            row[2] = (leaf >> 3) & 1;
            row[3] = leaf & 7;
        }
        static const char *const names[] = {"switch", "node", "socket", "core"};
        mpitopo_machine_t *p = NULL;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(mpitopo_machine_from_paths(4, names, NULL, n, paths, &p, NULL), 0);
        t = seconds_since(&t0);
        print_message("from_paths, %s, built in %.3f s\n", dir ? "reversed" : "in order", t);
        assert_same_layout(m, p);
        mpitopo_machine_destroy(&p);
    }
    free(paths);
    mpitopo_machine_destroy(&m);
}

/* ------------------------------------------------------------------------ */
/* hwloc                                                                      */

static mpitopo_machine_t *must_hwloc(const char *above, const char *source)
{
    mpitopo_machine_t *m = NULL;
    int rc = mpitopo_machine_from_hwloc(above, source, &m);
    if (rc != MPITOPO_SUCCESS)
        fail_msg("\"%s\" over %s: %s", above, source ? source : "NULL", mpitopo_last_error());
    return m;
}

static void test_hwloc_synthetic(void **state)
{
    (void)state;
    char buf[128];
    mpitopo_machine_t *m = must_hwloc("node:2", "synthetic:package:2 core:4");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2 socket:2 core:4");
    mpitopo_machine_t *s = must_parse(buf);
    assert_same_layout(m, s);
    mpitopo_machine_destroy(&s);
    int node;
    assert_int_equal(mpitopo_machine_node_level(m, &node), 0);
    assert_int_equal(node, 0);
    mpitopo_machine_destroy(&m);

    /* NUMA nodes are not levels; PUs are below the leaves. */
    m = must_hwloc("switch:2 node:3", "synthetic:package:2 numa:2 core:3 pu:2");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "switch:2 node:3 socket:2 core:6");
    mpitopo_machine_destroy(&m);

    /* Explicit costs above: the inner levels cost 2 and 1. */
    m = must_hwloc("switch:2@100 node:3@40", "synthetic:package:2 core:2");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "switch:2@100 node:3@40 socket:2@2 core:2@1");
    double cost;
    assert_int_equal(mpitopo_machine_cost(m, 0, 2, &cost), 0);
    assert_true(cost == 2.0);
    mpitopo_machine_destroy(&m);

    /* Without Core objects the PUs are the leaves. */
    m = must_hwloc("node:1", "synthetic:package:3 pu:2");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:1 socket:3 core:2");
    mpitopo_machine_destroy(&m);

    /* Without packages, one socket per node. */
    m = must_hwloc("node:2", "synthetic:core:5");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2 socket:1 core:5");
    mpitopo_machine_destroy(&m);

    /* Indexes below 65536, in lists or interleaving loops, are hwloc's to judge. */
    m = must_hwloc("node:1", "synthetic:package:2 core:2 pu:1(indexes=3,2,1,65535)");
    mpitopo_machine_destroy(&m);
    m = must_hwloc("node:1", "synthetic:package:2 [numa] core:2 pu:2(indexes=core:pu:package)");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:1 socket:2 core:2");
    mpitopo_machine_destroy(&m);

    /* The most PUs a synthetic description may have: 4096. */
    m = must_hwloc("node:1", "synthetic:package:64 core:64");
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:1 socket:64 core:64");
    mpitopo_machine_destroy(&m);
}

static int export_xml(hwloc_topology_t topo, char *path)
{
    strcpy(path, "/tmp/mpitopo_test_machine_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return hwloc_topology_export_xml(topo, path, 0);
}

static void test_hwloc_xml(void **state)
{
    (void)state;
    hwloc_topology_t topo;
    char path[64], buf[128];
    assert_int_equal(hwloc_topology_init(&topo), 0);
    assert_int_equal(hwloc_topology_set_synthetic(topo, "package:2 core:4 pu:1"), 0);
    assert_int_equal(hwloc_topology_load(topo), 0);
    assert_int_equal(export_xml(topo, path), 0);
    mpitopo_machine_t *m = must_hwloc("rack:2 node:2", path), *s;
    s = must_hwloc("rack:2 node:2", "synthetic:package:2 core:4 pu:1");
    assert_same_layout(m, s);
    mpitopo_machine_destroy(&s);
    mpitopo_machine_destroy(&m);
    unlink(path);

    /* Removing the first PU leaves package 0 with 3 cores: irregular nodes. */
    hwloc_bitmap_t set = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
    hwloc_bitmap_clr(set, 0);
    assert_int_equal(hwloc_topology_restrict(topo, set, 0), 0);
    hwloc_bitmap_free(set);
    assert_int_equal(export_xml(topo, path), 0);
    hwloc_topology_destroy(topo);
    m = must_hwloc("node:2", path);
    describe(m, buf, sizeof buf);
    assert_string_equal(buf, "node:2 socket:2 core:[3..4] (14 leaves)");
    int level, first, count;
    assert_int_equal(mpitopo_machine_unit_leaves(m, 1, 2, &first, &count), 0);
    assert_int_equal(first, 7);
    assert_int_equal(count, 3);
    assert_int_equal(mpitopo_machine_meet_level(m, 6, 7, &level), 0);
    assert_int_equal(level, 0);
    assert_int_equal(mpitopo_machine_meet_level(m, 2, 3, &level), 0);
    assert_int_equal(level, 1);
    check_contiguity(m);
    mpitopo_machine_destroy(&m);
    unlink(path);
}

static void test_hwloc_this_machine(void **state)
{
    (void)state;
    static const char *const sources[] = {NULL, ""};
    for (int i = 0; i < 2; i++) {
        mpitopo_machine_t *m = must_hwloc("node:1", sources[i]);
        int nlevels, node;
        char buf[128];
        assert_true(leaves(m) >= 1);
        assert_int_equal(mpitopo_machine_nlevels(m, &nlevels), 0);
        assert_int_equal(nlevels, 3);
        assert_int_equal(mpitopo_machine_node_level(m, &node), 0);
        assert_int_equal(node, 0);
        describe(m, buf, sizeof buf);
        print_message("this machine: %s\n", buf);
        check_contiguity(m);
        mpitopo_machine_destroy(&m);
    }
}

static void test_hwloc_errors(void **state)
{
    (void)state;
    static const struct {
        const char *above, *source;
        int code;
        const char *text;
    } cases[] = {
        {"switch:2", "synthetic:core:2", MPITOPO_ERR_PARSE, "last level 'switch' must be named \"node\""},
        {"node:2 switch:2", "synthetic:core:2", MPITOPO_ERR_PARSE, "\"node:2 switch:2\""},
        {"core:2 node:2", "synthetic:core:2", MPITOPO_ERR_PARSE, "level 'core' is one of the levels inside a node"},
        {"socket:2 node:2", "synthetic:core:2", MPITOPO_ERR_PARSE, "level 'socket'"},
        {"node:0", "synthetic:core:2", MPITOPO_ERR_PARSE,
         "mpitopo_machine_from_hwloc: above = \"node:0\": arity \"0\" of level 'node' (column 6)"},
        {"", "synthetic:core:2", MPITOPO_ERR_PARSE, "above = \"\": no level"},
        {"a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:1 i:1 j:1 k:1 l:1 m:1 n:1 node:1", "synthetic:core:2",
         MPITOPO_ERR_RANGE, "15 levels plus socket and core exceed 16"},
        {"node:2", "synthetic:bogus:7", MPITOPO_ERR_HWLOC, "source = \"synthetic:bogus:7\""},
        {"node:2", "synthetic:", MPITOPO_ERR_HWLOC, "source = \"synthetic:\": the synthetic description is empty"},
        {"node:2", "synthetic:core:2 pu:2 core:2", MPITOPO_ERR_HWLOC, "cannot parse"},
        {"node:2", "/nonexistent/mpitopo.xml", MPITOPO_ERR_HWLOC, "\"/nonexistent/mpitopo.xml\""},
        {"node:2", MPITOPO_TEST_DATA, MPITOPO_ERR_HWLOC, MPITOPO_TEST_DATA},
        {"node:1048576", "synthetic:core:2048", MPITOPO_ERR_RANGE, "1048576 nodes of 2048 cores"},
        /* Bounded before hwloc sees them: 65,536 cores per package kept
         * hwloc busy for minutes (issue 15). */
        {"node:2", "synthetic:package:2 core:65536", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:package:4 core:1024 pu:2", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:(memory=1GB) package:2 [numa] core:0x801(indexes=0:1)", MPITOPO_ERR_RANGE,
         "more than 4096 PUs"},
        {"node:2", "synthetic:2\n2048\n2", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:package:18446744073709551615 core:1", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:package:-1 core:1", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:package:99999999999999999999999 core:1", MPITOPO_ERR_RANGE, "more than 4096 PUs"},
        {"node:2", "synthetic:package:64 core:64 [numa] [numa]", MPITOPO_ERR_RANGE, "more than 4096 attached NUMA"},
        /* Explicit indexes make every cpuset as long as the largest one:
         * 4294967295 cost hwloc 512 MB per object. */
        {"node:2", "synthetic:pu:2(indexes=4294967295,0)", MPITOPO_ERR_RANGE, "an index of 4294967295 in indexes="},
        {"node:2", "synthetic:package:2 core:2 pu:1(indexes=0,1,2,65536)", MPITOPO_ERR_RANGE, "more than 65535"},
        {"node:2", "synthetic:package:2 [numa(indexes=99999)] core:2", MPITOPO_ERR_RANGE, "index of 99999"},
        {"node:2", "synthetic:(indexes=70000) package:2 core:2", MPITOPO_ERR_RANGE, "index of 70000"},
        {"node:2", "synthetic:package:0 core:2", MPITOPO_ERR_HWLOC, "cannot parse"},
        {"node:2", "synthetic:package:2(memory=1GB core:2", MPITOPO_ERR_HWLOC, "cannot parse"},
        {"node:2", "synthetic:[numa core:2", MPITOPO_ERR_HWLOC, "cannot parse"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mpitopo_machine_t *m = (mpitopo_machine_t *)&m;
        int rc = mpitopo_machine_from_hwloc(cases[i].above, cases[i].source, &m);
        if (rc != cases[i].code)
            fail_msg("\"%s\" over \"%s\": got %s, expected %s (%s)", cases[i].above,
                     cases[i].source, mpitopo_err_name(rc), mpitopo_err_name(cases[i].code),
                     mpitopo_last_error());
        assert_null(m);
        assert_contains(mpitopo_last_error(), "mpitopo_machine_from_hwloc: ");
        assert_contains(mpitopo_last_error(), cases[i].text);
    }
    mpitopo_machine_t *m;
    assert_int_equal(mpitopo_machine_from_hwloc(NULL, NULL, &m), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "above is NULL");
    assert_int_equal(mpitopo_machine_from_hwloc("node:1", NULL, NULL), MPITOPO_ERR_ARG);
    assert_contains(mpitopo_last_error(), "machine is NULL");
}

/* ------------------------------------------------------------------------ */
/* Allocation failures                                                       */

typedef int (*build_fn)(mpitopo_machine_t **m);

static int run_build(void *ctx)
{
    build_fn build = *(build_fn *)ctx;
    mpitopo_machine_t *m = (mpitopo_machine_t *)&m;
    int rc = build(&m);
    if (rc == MPITOPO_SUCCESS)
        mpitopo_machine_destroy(&m);
    assert_null(m);
    return rc;
}

/* Fail the k-th allocation for k = 1, 2, ... until the build succeeds:
 * every failure must report NOMEM, return no machine and free everything. */
static void fail_each_allocation(const char *what, build_fn build)
{
    long failures = unit_each_allocation_fails(what, run_build, &build);
    print_message("%s: %ld allocations failed in turn\n", what, failures);
    assert_true(failures > 1);
}

static int build_string(mpitopo_machine_t **m)
{
    return mpitopo_machine_from_string("switch:2 node:3 socket:2 core:2", m);
}

static int build_paths(mpitopo_machine_t **m)
{
    static const char *const names[] = {"node", "core"};
    static const int paths[] = {1, 0, 0, 0, 1, 1, 0, 1, 2, 5};
    int leaf_of[5];
    return mpitopo_machine_from_paths(2, names, NULL, 5, paths, m, leaf_of);
}

static int build_hwloc(mpitopo_machine_t **m)
{
    return mpitopo_machine_from_hwloc("switch:2@10 node:2@5", "synthetic:package:2 core:3", m);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    fail_each_allocation("from_string", build_string);
    fail_each_allocation("from_paths", build_paths);
    fail_each_allocation("from_hwloc", build_hwloc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_string_basic),
        cmocka_unit_test(test_header_costs),
        cmocka_unit_test(test_node_level),
        cmocka_unit_test(test_separators_and_names),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_query_ranges),
        cmocka_unit_test(test_brute_regular),
        cmocka_unit_test(test_brute_paths),
        cmocka_unit_test(test_from_paths_irregular),
        cmocka_unit_test(test_from_paths_errors),
        cmocka_unit_test(test_set_costs),
        cmocka_unit_test(test_describe_roundtrip),
        cmocka_unit_test(test_describe_truncation),
        cmocka_unit_test(test_million_leaves),
        cmocka_unit_test(test_hwloc_synthetic),
        cmocka_unit_test(test_hwloc_xml),
        cmocka_unit_test(test_hwloc_this_machine),
        cmocka_unit_test(test_hwloc_errors),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
