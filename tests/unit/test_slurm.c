/* Slurm's topology (issue 32): host lists, topology.conf of topology/tree
 * (tests/data/slurm/tree.conf: core s0 over spine s1 with leaves s2, s3,
 * and leaf s4 hanging from s0 directly; link speeds 100/200/400) and of
 * topology/block (block.conf: blocks of 4, 4, 4 and 3 nodes, aggregated
 * by 2), checked by hand; every malformed file with its file:line
 * message; SLURM_TOPOLOGY_ADDR; allocation failures. */
#include "unit.h"
#include "network/slurm.h"

#include <stdio.h>

#define DATA MPITOPO_TEST_DATA "/slurm/"

static char got[2048];

static int collect(void *ctx, const char *name)
{
    (void)ctx;
    size_t n = strlen(got);
    snprintf(got + n, sizeof got - n, "%s%s", n ? " " : "", name);
    return 0;
}

static void hostlist_is(const char *list, const char *want)
{
    char why[200] = "";
    got[0] = '\0';
    int rc = mpitopo__slurm_hostlist(list, strlen(list), collect, NULL, why, sizeof why);
    if (rc != 0)
        fail_msg("'%s': %s", list, why);
    assert_string_equal(got, want);
}

static void hostlist_bad(const char *list, const char *needle)
{
    char why[200] = "";
    got[0] = '\0';
    assert_int_equal(mpitopo__slurm_hostlist(list, strlen(list), collect, NULL, why, sizeof why), -1);
    if (!strstr(why, needle))
        fail_msg("'%s': \"%s\" lacks \"%s\"", list, why, needle);
}

static void test_hostlist(void **state)
{
    (void)state;
    hostlist_is("node[01-03,10]", "node01 node02 node03 node10");
    hostlist_is("a,b[7],c", "a b7 c");
    hostlist_is("r[1-2]n[08-09]", "r1n08 r1n09 r2n08 r2n09");
    hostlist_is("big[008-010]x", "big008x big009x big010x");
    hostlist_is("host.example.org", "host.example.org");
    hostlist_bad("node[", "without its ']'");
    hostlist_bad("node]", "without its '['");
    hostlist_bad("node[1-]", "not a number");
    hostlist_bad("node[3-1]", "goes down");
    hostlist_bad("node[]", "empty brackets");
    hostlist_bad("node[1,]", "empty range");
    hostlist_bad("a,,b", "empty host name");
    hostlist_bad("a b", "blank");
    hostlist_bad("n[0-999999999]", "more than");
    hostlist_bad("", "empty host list");
}

static const char *level(const mpitopo_machine_t *m, int l, double *cost, int *nunits)
{
    const char *name = NULL;
    OK(mpitopo_machine_level(m, l, &name, cost, nunits, NULL, NULL));
    return name;
}

static void test_tree(void **state)
{
    (void)state;
    mpitopo__slurm_t *t = NULL;
    OK(mpitopo__slurm_read(DATA "tree.conf", "test", &t));
    assert_string_equal(mpitopo__slurm_kind(t), "tree");
    assert_int_equal(mpitopo__slurm_nhosts(t), 10);
    const char *order[] = {"node01", "node02", "node03", "node04", "node05",
                           "gpu7",   "gpu8",   "big008", "big009", "big010"};
    for (int h = 0; h < 10; h++)
        assert_string_equal(mpitopo__slurm_host(t, h), order[h]);
    assert_int_equal(mpitopo__slurm_find(t, "gpu8"), 6);
    assert_int_equal(mpitopo__slurm_find(t, "gpu8.cluster.example"), 6);
    assert_int_equal(mpitopo__slurm_find(t, "gpu9"), -1);
    assert_int_equal(mpitopo__slurm_find(t, "node0"), -1);
    int depth;
    int64_t lab[MPITOPO__SLURM_MAX_DEPTH];
    double sp[MPITOPO__SLURM_MAX_DEPTH];
    mpitopo__slurm_path(t, 5, &depth, lab, sp); /* gpu7: s0 s1 s3 */
    assert_int_equal(depth, 3);
    assert_true(lab[0] == 0 && lab[1] == 1 && lab[2] == 3);
    assert_true(sp[0] == 100 && sp[1] == 200 && sp[2] == 400);
    mpitopo__slurm_path(t, 8, &depth, lab, sp); /* big009: s0 s4 */
    assert_int_equal(depth, 2);
    assert_true(lab[0] == 0 && lab[1] == 4);

    /* The machine: s0 (one unit) is dropped; s4 is padded under itself.
     * Costs count 4, 3, 2, 1 from the top; switch2 x 400/200 (s1's link
     * is half as fast as the leaves'). */
    mpitopo_machine_t *m = NULL;
    OK(mpitopo__slurm_machine(t, 0, NULL, "core:2", &m, NULL));
    int nlevels, nleaves, n;
    double c;
    OK(mpitopo_machine_nlevels(m, &nlevels));
    OK(mpitopo_machine_nleaves(m, &nleaves));
    assert_int_equal(nlevels, 4);
    assert_int_equal(nleaves, 20);
    assert_string_equal(level(m, 0, &c, &n), "switch2");
    assert_true(c == 8.0 && n == 2);
    assert_string_equal(level(m, 1, &c, &n), "switch");
    assert_true(c == 3.0 && n == 3);
    assert_string_equal(level(m, 2, &c, &n), "node");
    assert_true(c == 2.0 && n == 10);
    assert_string_equal(level(m, 3, &c, &n), "core");
    int u;
    OK(mpitopo_machine_unit_of(m, 1, 2 * 5, &u)); /* gpu7's first core: leaf s3 */
    assert_int_equal(u, 1);
    OK(mpitopo_machine_unit_of(m, 0, 2 * 9, &u)); /* big010: under s4 */
    assert_int_equal(u, 1);
    mpitopo_machine_destroy(&m);

    /* Restricted to three hosts, in launch order (nodes follow the tree). */
    const char *hosts[] = {"big009", "node04", "node01.cluster"};
    int node_of[3];
    OK(mpitopo__slurm_machine(t, 3, hosts, "", &m, node_of));
    assert_true(node_of[0] == 2 && node_of[1] == 1 && node_of[2] == 0);
    char desc[128];
    OK(mpitopo_machine_describe(m, desc, sizeof desc));
    assert_string_equal(desc, "switch2:2@6 switch:[1..2]@2 node:1@1 (3 leaves)");
    mpitopo_machine_destroy(&m);
    const char *unknown[] = {"node01", "node99"};
    FAILS(mpitopo__slurm_machine(t, 2, unknown, "core:2", &m, NULL), MPITOPO_ERR_NOT_FOUND, "node99");
    const char *twice[] = {"node01", "node01"};
    FAILS(mpitopo__slurm_machine(t, 2, twice, "core:2", &m, NULL), MPITOPO_ERR_ARG, "twice");
    FAILS(mpitopo__slurm_machine(t, 0, NULL, "node:2 core:2", &m, NULL), MPITOPO_ERR_PARSE, "node");
    assert_null(m);
    mpitopo__slurm_free(&t);
    assert_null(t);

    /* 4 leaf switches over 16 nodes: one level of 4 switches, equal links. */
    OK(mpitopo__slurm_read(DATA "leaf4x16/topology.conf", "test", &t));
    OK(mpitopo__slurm_machine(t, 0, NULL, "core:4", &m, NULL));
    OK(mpitopo_machine_describe(m, desc, sizeof desc));
    assert_string_equal(desc, "switch:4 node:4 core:4");
    mpitopo_machine_destroy(&m);
    mpitopo__slurm_free(&t);
}

static void test_block(void **state)
{
    (void)state;
    mpitopo__slurm_t *t = NULL;
    OK(mpitopo__slurm_read(DATA "block.conf", "test", &t));
    assert_string_equal(mpitopo__slurm_kind(t), "block");
    assert_int_equal(mpitopo__slurm_nhosts(t), 15);
    mpitopo_machine_t *m = NULL;
    OK(mpitopo__slurm_machine(t, 0, NULL, "core:1", &m, NULL));
    char desc[128];
    OK(mpitopo_machine_describe(m, desc, sizeof desc));
    assert_string_equal(desc, "block2:2 block:2 node:[3..4] core:1 (15 leaves)");
    int u;
    OK(mpitopo_machine_unit_of(m, 0, 9, &u)); /* n10: block b3, second pair */
    assert_int_equal(u, 1);
    mpitopo_machine_destroy(&m);
    mpitopo__slurm_free(&t);
}

/* Parse text (file "t.conf"): code, and a message holding needle. */
static void bad(const char *text, int code, const char *needle)
{
    mpitopo__slurm_t *t = (mpitopo__slurm_t *)&t;
    int rc = mpitopo__slurm_parse("t.conf", text, strlen(text), "test", &t);
    if (rc != code)
        fail_msg("%s: %s, expected %s (%s)", text, mpitopo_err_name(rc), mpitopo_err_name(code),
                 mpitopo_last_error());
    if (!strstr(mpitopo_last_error(), needle))
        fail_msg("%s: message \"%s\" lacks \"%s\"", text, mpitopo_last_error(), needle);
    assert_null(t);
}

static void test_malformed(void **state)
{
    (void)state;
    const int F = MPITOPO_ERR_FORMAT;
    bad("SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b Ports=4\n", F,
        "t.conf:2: unknown key 'Ports'");
    bad("SwitchName=s0 Nodes=n[1-4]\n\nSwitchName=s1 Nodes=n[4-5]\n", F,
        "t.conf:3: node n4 is under switch s0 (line 1) and s1");
    bad("SwitchName=s0 Switches=s[1-2]\nSwitchName=s1 Nodes=a\n", F,
        "t.conf:1: switch s0 names switch s2, which no SwitchName= defines");
    bad("SwitchName=s1 Switches=s2 Nodes=a\nSwitchName=s2 Switches=s3\nSwitchName=s3 Switches=s1\n",
        F, "switches form a loop");
    bad("SwitchName=s1 Switches=s1 Nodes=a\n", F, "t.conf:1: switch s1 names itself");
    bad("SwitchName=top Switches=a,b\nSwitchName=a Switches=b\nSwitchName=b Nodes=x\n", F,
        "t.conf:2: switch b is under switch top (line 1) and a");
    bad("SwitchName=s0 Nodes=a\n# c\nSwitchName=s0 Nodes=b\n", F,
        "t.conf:3: switch s0 is already defined on line 1");
    bad("SwitchName=s0 Nodes=a\nBlockName=b1 Nodes=c\n", F, "t.conf:2: BlockName= in a file of switches");
    bad("BlockName=b1 Nodes=a[1-4]\nBlockSizes=4,6\n", F, "t.conf:2: BlockSizes=4,6: 6 is not");
    bad("BlockName=b1 Nodes=a[1-5]\nBlockSizes=4,8\n", F, "t.conf:1: block b1 has 5 nodes");
    bad("BlockName=b1\n", F, "t.conf:1: BlockName=b1 has no Nodes=");
    bad("BlockName=b1 Nodes=a Switches=x\n", F, "Switches= does not go with BlockName=");
    bad("SwitchName=s0\n", F, "no Nodes= anywhere");
    bad("# only a comment\n", F, "t.conf:1: no Nodes=");
    bad("SwitchName=s0 Nodes=\n", F, "t.conf:1: Nodes has no value");
    bad("SwitchName=s0 Nodes=a LinkSpeed=-3\n", F, "LinkSpeed=-3: expected a positive number");
    bad("SwitchName=s0 \\\n  Nodes=a[\n", F, "t.conf:1: Nodes=a[: '[' at column 2 without its ']'");
    bad("Include /etc/slurm/other.conf\n", F, "t.conf:1: 'Include': expected KEY=VALUE");
    bad("Nodes=a SwitchName=s0\n", F, "a line starts with SwitchName=");
    bad("SwitchName=s0 nodes=a NODES=b\n", F, "Nodes given twice");
    bad("SwitchName=s[0-1] Nodes=a\n", F, "one name, not a list");
    static const char nul[] = "SwitchName=s0 Nodes=a\0b\n";
    mpitopo__slurm_t *t = NULL;
    FAILS(mpitopo__slurm_parse("t.conf", nul, sizeof nul - 1, "test", &t), F, "t.conf:1: NUL byte");
    assert_null(t);
    /* 13 nested switches: deeper than 12. */
    char deep[1024] = "";
    for (int i = 0; i < 13; i++)
        snprintf(deep + strlen(deep), sizeof deep - strlen(deep), "SwitchName=s%d %s%d\n", i,
                 i < 12 ? "Switches=s" : "Nodes=n", i + 1);
    bad(deep, F, "levels deep");
    FAILS(mpitopo__slurm_read("/nonexistent/topology.conf", "test", &t), MPITOPO_ERR_IO,
          "cannot open /nonexistent/topology.conf");
}

static void test_addr(void **state)
{
    (void)state;
    int depth;
    int64_t a[MPITOPO__SLURM_MAX_DEPTH], b[MPITOPO__SLURM_MAX_DEPTH];
    char why[200];
    assert_int_equal(mpitopo__slurm_addr("s0.s3.node12", "switch.switch.node", &depth, a, why, sizeof why), 0);
    assert_int_equal(depth, 2);
    assert_int_equal(mpitopo__slurm_addr("s0.s4.node1.example", "switch.switch.node", &depth, b, why, sizeof why), 0);
    assert_true(a[0] == b[0] && a[1] != b[1] && a[0] >= 0 && a[1] >= 0);
    assert_int_equal(mpitopo__slurm_addr("node3", "node", &depth, a, why, sizeof why), 0);
    assert_int_equal(depth, 0);
    assert_int_equal(mpitopo__slurm_addr("s0.node3", "switch.switch.node", &depth, a, why, sizeof why), -1);
    assert_non_null(strstr(why, "does not match"));
    assert_int_equal(mpitopo__slurm_addr("s0.node3", "switch.host", &depth, a, why, sizeof why), -1);
    assert_non_null(strstr(why, "SLURM_TOPOLOGY_ADDR_PATTERN"));
    assert_int_equal(mpitopo__slurm_addr("s0.", "switch.node", &depth, a, why, sizeof why), -1);

    /* Mixed depths: s0.s1.{s2,s3} and s0.s4 (as tree.conf): two levels. */
    const char *addr[] = {"s0.s1.s2.n1", "s0.s1.s3.n2", "s0.s4.n3", "s0.s1.s2.n4"};
    const char *pat[] = {"switch.switch.switch.node", "switch.switch.switch.node",
                         "switch.switch.node", "switch.switch.switch.node"};
    int d[4], out[4 * MPITOPO__SLURM_MAX_DEPTH], nl;
    int64_t lab[4 * MPITOPO__SLURM_MAX_DEPTH];
    char names[MPITOPO__SLURM_MAX_DEPTH][MPITOPO_MAX_NAME];
    double f[MPITOPO__SLURM_MAX_DEPTH];
    for (int i = 0; i < 4; i++)
        assert_int_equal(mpitopo__slurm_addr(addr[i], pat[i], &d[i], lab + i * MPITOPO__SLURM_MAX_DEPTH, why, sizeof why), 0);
    OK(mpitopo__slurm_levels(4, d, lab, NULL, "tree", &nl, out, names, f));
    assert_int_equal(nl, 2);
    assert_string_equal(names[0], "switch2");
    assert_string_equal(names[1], "switch");
    assert_true(f[0] == 1.0 && f[1] == 1.0);
    const int W = MPITOPO__SLURM_MAX_DEPTH;
    assert_int_equal(out[0 * W], out[1 * W]);     /* n1, n2 under s1 */
    assert_int_not_equal(out[0 * W], out[2 * W]); /* n3 under s4 */
    assert_int_not_equal(out[0 * W + 1], out[1 * W + 1]);
    assert_int_equal(out[0 * W + 1], out[3 * W + 1]); /* n1, n4 under s2 */
}

static int run_read(void *ctx)
{
    (void)ctx;
    mpitopo__slurm_t *t = NULL;
    mpitopo_machine_t *m = NULL;
    int rc = mpitopo__slurm_read(DATA "tree.conf", "test", &t);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slurm_machine(t, 0, NULL, "socket:2 core:2", &m, NULL);
    mpitopo_machine_destroy(&m);
    mpitopo__slurm_free(&t);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(unit_each_allocation_fails("slurm", run_read, NULL) > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostlist),  cmocka_unit_test(test_tree),
        cmocka_unit_test(test_block),     cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_addr),      cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
