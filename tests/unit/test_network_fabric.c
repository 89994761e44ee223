/* Fabrics read from files (tests/data/fabric/small.*: two switches joined
 * by a 4xQDR and a 1xEDR cable, node1 and node2 on swA, node3 and node10
 * on swB): numbering, routes, capacities and names checked by hand, the
 * three table formats alike, metrics, and every malformed input with its
 * code and the file:line its message names. */
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#define DATA MPITOPO_TEST_DATA "/fabric/"

static char tmpdir[64];

/* The text of a data file (static storage). */
static const char *slurp(const char *name)
{
    static char buf[8192];
    FILE *f = fopen(name, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Write text, with the first occurrence of from replaced by to (from NULL:
 * the text as it is), to a file named name in the temporary directory;
 * returns its path (static storage, one per slot). */
static const char *variant(int slot, const char *name, const char *text, const char *from,
                           const char *to)
{
    static char paths[2][256];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", tmpdir, name);
    FILE *f = fopen(paths[slot], "wb");
    assert_non_null(f);
    const char *at = from ? strstr(text, from) : NULL;
    if (from && !at)
        fail_msg("\"%s\" is not in the file", from);
    if (at) {
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
    } else {
        fputs(text, f);
    }
    fclose(f);
    return paths[slot];
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mpitopo-fabric-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void route_is(const mpitopo_network_t *net, int s, int d, int n, const int64_t *want)
{
    int64_t ch[16];
    int len = -1;
    OK(mpitopo_network_route(net, s, d, 16, ch, &len));
    assert_int_equal(len, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(ch[i], want[i]);
}

/* ---------------------------------------------------------------- good */

/* End nodes by description in natural order: node1, node2, node3, node10;
 * channels: the end nodes' four, then swA's ports 1-4, swB's ports 1-4. */
static void test_small(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", &net));
    int n, maxr;
    int64_t nch;
    OK(mpitopo_network_size(net, &n, &nch, &maxr));
    assert_int_equal(n, 4);
    assert_int_equal(nch, 12);
    assert_int_equal(maxr, 3);
    const char *names[] = {"node1 HCA-1", "node2 HCA-1", "node3 HCA-1", "node10 HCA-1"};
    char name[64];
    for (int i = 0; i < 4; i++) {
        OK(mpitopo_network_node_name(net, i, name, sizeof name));
        assert_string_equal(name, names[i]);
    }
    OK(mpitopo_network_node_name(net, 3, name, 5));
    assert_string_equal(name, "node");
    /* Capacities in Gb/s of data: 4xSDR 8, 4xQDR 32, 1xEDR 25. */
    const double cap[12] = {8, 8, 8, 8, 8, 8, 32, 25, 8, 8, 32, 25};
    const char *chname[12] = {"node1/p1->swA/p1", "node2/p1->swA/p2", "node3/p1->swB/p1",
                              "node10/p1->swB/p2", "swA/p1->node1/p1", "swA/p2->node2/p1",
                              "swA/p3->swB/p3", "swA/p4->swB/p4", "swB/p1->node3/p1",
                              "swB/p2->node10/p1", "swB/p3->swA/p3", "swB/p4->swA/p4"};
    for (int64_t c = 0; c < 12; c++) {
        double cp = 0;
        OK(mpitopo_network_channel(net, c, &cp, name, sizeof name));
        assert_true(cp == cap[c]);
        assert_string_equal(name, chname[c]);
    }
    FAILS(mpitopo_network_channel(net, 12, NULL, NULL, 0), MPITOPO_ERR_RANGE, "channel = 12");
    /* swA sends node3 over port 3, node10 over port 4; swB node1 over 3, node2 over 4. */
    route_is(net, 0, 3, 3, (const int64_t[]){0, 7, 9});
    route_is(net, 3, 1, 3, (const int64_t[]){3, 11, 5});
    route_is(net, 1, 2, 3, (const int64_t[]){1, 6, 8});
    route_is(net, 2, 0, 3, (const int64_t[]){2, 10, 4});
    route_is(net, 0, 1, 2, (const int64_t[]){0, 5});
    route_is(net, 2, 2, 0, NULL);
    int64_t ch[2];
    int len;
    FAILS(mpitopo_network_route(net, 0, 3, 2, ch, &len), MPITOPO_ERR_RANGE, "maxlen = 2");
    /* 100 bytes node1 -> node10: 3 hops; loads 100 on channels of 8, 25, 8. */
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(4, 1, (const int[]){0}, (const int[]){3}, (const double[]){100},
                              NULL, &p));
    mpitopo_network_metrics_t m;
    OK(mpitopo_network_evaluate(net, p, (const int[]){0, 1, 2, 3}, NULL, NULL, &m));
    assert_true(m.hop_bytes == 300 && m.dilation == 3 && m.busy_channels == 3);
    assert_true(m.max_congestion == 12.5);
    assert_true(fabs(m.nzca - 29.0 / 3) < 1e-12);
    mpitopo_pattern_destroy(&p);
    /* One group level: the nodes on each switch, labelled by the first. */
    int nl;
    OK(mpitopo_network_group_levels(net, &nl));
    assert_int_equal(nl, 1);
    for (int i = 0; i < 4; i++) {
        int64_t g;
        const char *lname;
        OK(mpitopo_network_group(net, 0, i, &g, &lname));
        assert_int_equal(g, i < 2 ? 0 : 2);
        assert_string_equal(lname, "switch");
    }
    mpitopo_network_destroy(&net);
    assert_null(net);
}

/* The same routes from ibroute's and dump_fts's output and through a
 * description. */
static void test_formats(void **state)
{
    (void)state;
    mpitopo_network_t *a = NULL, *b = NULL, *c = NULL;
    OK(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", &a));
    OK(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.ibroute", &b));
    OK(mpitopo_network_from_string("fabric:" DATA "small.topo," DATA "small.ibroute", &c));
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++) {
            int64_t ra[8], rb[8], rc[8];
            int la, lb, lc;
            OK(mpitopo_network_route(a, s, d, 8, ra, &la));
            OK(mpitopo_network_route(b, s, d, 8, rb, &lb));
            OK(mpitopo_network_route(c, s, d, 8, rc, &lc));
            assert_int_equal(la, lb);
            assert_int_equal(la, lc);
            assert_memory_equal(ra, rb, sizeof *ra * (size_t)la);
            assert_memory_equal(ra, rc, sizeof *ra * (size_t)la);
        }
    mpitopo_network_destroy(&a);
    mpitopo_network_destroy(&b);
    mpitopo_network_destroy(&c);
    FAILS(mpitopo_network_from_string("fabric:" DATA "small.topo", &c), MPITOPO_ERR_PARSE,
          "TOPOLOGY,ROUTES");
    assert_null(c);
    FAILS(mpitopo_network_from_string("fabric:" DATA "small.topo," DATA "small.lfts:bad=1", &c),
          MPITOPO_ERR_PARSE, "unknown option");
    assert_null(c);
}

/* A machine of more nodes than the fabric has end nodes is refused. */
static void test_machine(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    mpitopo_machine_t *m = NULL, *out = NULL;
    OK(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", &net));
    OK(mpitopo_machine_from_string("node:5 core:2", &m));
    FAILS(mpitopo_network_machine(net, m, NULL, &out, NULL), MPITOPO_ERR_RANGE,
          "only 4 end nodes");
    assert_null(out);
    mpitopo_machine_destroy(&m);
    OK(mpitopo_machine_from_string("node:4 core:2", &m));
    OK(mpitopo_network_machine(net, m, NULL, &out, NULL));
    int nlev;
    OK(mpitopo_machine_nlevels(out, &nlev));
    assert_int_equal(nlev, 3); /* switch, node, core */
    mpitopo_machine_destroy(&out);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* ---------------------------------------------------------------- bad */

static void fails_from(const char *base, const char *name, const char *from, const char *to,
                       int code, const char *needle)
{
    char topo[8192];
    snprintf(topo, sizeof topo, "%s", slurp(base));
    mpitopo_network_t *net = (mpitopo_network_t *)&net;
    FAILS(mpitopo_network_from_fabric(variant(0, name, topo, from, to), DATA "small.lfts", &net),
          code, needle);
    assert_null(net);
}

static void topo_fails(const char *name, const char *from, const char *to, int code,
                       const char *needle)
{
    fails_from(DATA "small.topo", name, from, to, code, needle);
}

static void routes_fails(const char *name, const char *from, const char *to, int code,
                         const char *needle)
{
    char lfts[8192];
    snprintf(lfts, sizeof lfts, "%s", slurp(DATA "small.lfts"));
    mpitopo_network_t *net = (mpitopo_network_t *)&net;
    FAILS(mpitopo_network_from_fabric(DATA "small.topo", variant(1, name, lfts, from, to), &net),
          code, needle);
    assert_null(net);
}

static void test_bad_topology(void **state)
{
    (void)state;
    const int F = MPITOPO_ERR_FORMAT;
    /* Truncated: inside a port line, and after a record's header. */
    topo_fails("t1.topo", "\"S-0000000000000020\"[2]\t\t# lid 8 lmc 0 \"swB\" lid 2 4xSDR\n",
               "\"S-00000000000", F, "t1.topo:31: expected the peer's quoted name");
    topo_fails("t2.topo",
               "[1](a01) \t\"S-0000000000000020\"[2]\t\t# lid 8 lmc 0 \"swB\" lid 2 4xSDR\n", "",
               F,
               "t2.topo:22: port 2 links to \"H-0000000000000a00\"[1], whose record (line 30) "
               "does not list this link back");
    topo_fails("t3.topo", "[1](a01) \t\"S-0000000000000020\"[2]",
               "[1](a01) \t\"S-0000000000000020\"[", F,
               "t3.topo:31: expected the peer's \"[PORT]\"");
    /* Unknown ports and nodes. */
    topo_fails("t4.topo", "\"S-0000000000000020\"[4]", "\"S-0000000000000020\"[9]", F,
               "t4.topo:14: port 4 links to port 9 of \"S-0000000000000020\", which has 8 ports");
    topo_fails("t5.topo", "\"H-0000000000000100\"[1](101)", "\"H-0000000000000999\"[1](101)", F,
               "t5.topo:11: port 1 links to \"H-0000000000000999\", a node with no record");
    topo_fails("t6.topo", "[4]\t\"S-0000000000000020\"[4]", "[9]\t\"S-0000000000000020\"[4]", F,
               "t6.topo:14: port 9 of a node with 8 ports");
    topo_fails("t7.topo", "[3]\t\"S-0000000000000020\"[3]", "[3]\t\"S-0000000000000020\"[4]", F,
               "t7.topo:13: port 3 links to \"S-0000000000000020\"[4]");
    topo_fails("t8.topo", "[2]\t\"H-0000000000000200\"", "[1]\t\"H-0000000000000200\"", F,
               "t8.topo:12: port 1 listed twice (first at line 11)");
    /* Duplicate GUIDs, names and LIDs. */
    topo_fails("t9.topo", "caguid=0x300", "caguid=0xa00", F,
               "t9.topo:37: duplicate GUID 0x0000000000000a00 (first at line 30)");
    topo_fails("t10.topo", "Ca\t1 \"H-0000000000000300\"", "Ca\t1 \"H-0000000000000a00\"", F,
               "t10.topo:37: duplicate node \"H-0000000000000a00\" (first at line 30)");
    topo_fails("t11.topo", "# lid 7 lmc 0", "# lid 8 lmc 0", F,
               "LID 8 is given to both \"node3 HCA-1\" and \"node10 HCA-1\"");
    /* Lines that are not ibnetdiscover's. */
    topo_fails("t12.topo", "vendid=0x0", "hello", F, "t12.topo:6: unrecognised line \"hello\"");
    topo_fails("t13.topo", "lid 2 4xQDR", "lid 2 4xQQR", F,
               "t13.topo:13: unknown link width or speed \"4xQQR\"");
    topo_fails("t14.topo", "# lid 5 lmc 0", "# lmc 0", F, "t14.topo:52: the CA port has no LID");
    topo_fails("t15.topo", "Switch\t8 \"S-0000000000000010\"", "Switch\t300 \"S-0000000000000010\"",
               F, "t15.topo:10: the number of ports");
    topo_fails("t16.topo", "Switch\t8 \"S-0000000000000020\"", "Rt\t8 \"S-0000000000000020\"", F,
               "t16.topo:20: routers are not supported");
    topo_fails("t17.topo", "#\n# Hand", "[1]\t\"x\"[1]\n# Hand", F,
               "t17.topo:1: a port line before any Switch or Ca record");
    /* Nothing at all; no such file. */
    mpitopo_network_t *net = NULL;
    FAILS(mpitopo_network_from_fabric(variant(0, "empty.topo", "# nothing\n", NULL, NULL),
                                      DATA "small.lfts", &net),
          F, "empty.topo:1: no Switch or Ca record");
    FAILS(mpitopo_network_from_fabric(DATA "nonexistent.topo", DATA "small.lfts", &net),
          MPITOPO_ERR_IO, "cannot open");
    FAILS(mpitopo_network_from_fabric(tmpdir, DATA "small.lfts", &net), MPITOPO_ERR_IO,
          "cannot read");
    FAILS(mpitopo_network_from_fabric(NULL, DATA "small.lfts", &net), MPITOPO_ERR_ARG,
          "topology is NULL");
    FAILS(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", NULL),
          MPITOPO_ERR_ARG, "network is NULL");
    assert_null(net);
}

static void test_bad_routes(void **state)
{
    (void)state;
    const int F = MPITOPO_ERR_FORMAT;
    /* swB sends node10's LID back to swA, which sends it to swB. */
    routes_fails("r1.lfts", "0x0008 002", "0x0008 003", F,
                 "r1.lfts:15: the route to LID 8 (\"node10 HCA-1\") loops back to switch \"swA\"");
    /* swA sends node2's LID to node1: the route leaves at the wrong end node. */
    routes_fails("r2.lfts", "0x0006 002", "0x0006 001", F,
                 "r2.lfts:5: switch \"swA\" sends LID 6 (\"node2 HCA-1\") out of port 1 to "
                 "\"node1 HCA-1\"");
    /* An entry pointing to an unconnected port, beyond the ports, to the switch. */
    routes_fails("r3.lfts", "0x0005 001", "0x0005 007", F,
                 "r3.lfts:4: switch \"swA\" sends LID 5 (\"node1 HCA-1\") to port 7, which is "
                 "not connected");
    routes_fails("r4.lfts", "0x0005 001", "0x0005 009", F, "r4.lfts:4: switch \"swA\" sends LID 5 "
                 "(\"node1 HCA-1\") to port 9, beyond its ports");
    routes_fails("r15.lfts", "0x0005 003", "0x0005 255", F,
                 "r15.lfts:9: the table of switch \"swB\" has no entry for LID 5");
    routes_fails("r5.lfts", "0x0005 001", "0x0005 000", F, "r5.lfts:4: switch \"swA\" sends LID 5 "
                 "(\"node1 HCA-1\") to port 0, the switch itself");
    /* A dead end: swB has no entry for node1. */
    routes_fails("r6.lfts", "0x0005 003 # Channel Adapter portguid 0x0000000000000101: "
                 "'node1 HCA-1'\n", "", F, "r6.lfts:9: the table of switch \"swB\" has no entry "
                 "for LID 5 (\"node1 HCA-1\")");
    /* No table for swB at all. */
    char two[8192];
    snprintf(two, sizeof two, "%s", slurp(DATA "small.lfts"));
    *strstr(two, "6 lids dumped") = '\0';
    mpitopo_network_t *net = NULL;
    FAILS(mpitopo_network_from_fabric(DATA "small.topo", variant(1, "r7.lfts", two, NULL, NULL),
                                      &net),
          F, "r7.lfts: no table for switch \"swB\"");
    /* Unknown switch, a second table, entries before a header, truncated entries. */
    routes_fails("r8.lfts", "Lid 2 guid 0x0000000000000020", "Lid 2 guid 0x0000000000000030", F,
                 "r8.lfts:9: switch GUID 0x0000000000000030 is not a switch of the topology");
    routes_fails("r9.lfts", "Lid 2 guid 0x0000000000000020", "Lid 2 guid 0x0000000000000010", F,
                 "r9.lfts:9: a second table of switch \"swA\" (the first at line 1)");
    routes_fails("r10.lfts", "Unicast lids [0-8] of switch Lid 1",
                 "0x0005 001\nUnicast lids [0-8] of switch Lid 1", F,
                 "r10.lfts:1: a table entry before any");
    routes_fails("r11.lfts", "0x0007 001 # Channel Adapter portguid 0x0000000000000301: "
                 "'node3 HCA-1'\n", "0x000", F, "r11.lfts:14: expected \"0xLID PORT\"");
    routes_fails("r12.lfts", "0x0007 003", "0x0007 3x", F, "r12.lfts:6: expected \"0xLID PORT\"");
    routes_fails("r13.lfts", "0x0008 004", "0x0007 003", F,
                 "r13.lfts:7: LID 7 listed twice in this table (first at line 6)");
    routes_fails("r14.lfts", "guid 0x0000000000000010", "guid 0xzz", F,
                 "r14.lfts:1: the table's header names no \"guid 0x...\"");
    FAILS(mpitopo_network_from_fabric(DATA "small.topo", DATA "nonexistent.lfts", &net),
          MPITOPO_ERR_IO, "nonexistent.lfts");
    assert_null(net);
}

/* OpenSM's subnet list as the topology: the same network as small.topo,
 * channel by channel and route by route. */
static void test_subnet_list(void **state)
{
    (void)state;
    mpitopo_network_t *a = NULL, *b = NULL;
    OK(mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", &a));
    OK(mpitopo_network_from_fabric(DATA "small.lst", DATA "small.lfts", &b));
    int na, nb;
    int64_t ca, cb;
    OK(mpitopo_network_size(a, &na, &ca, NULL));
    OK(mpitopo_network_size(b, &nb, &cb, NULL));
    assert_int_equal(na, nb);
    assert_int_equal(ca, cb);
    for (int64_t c = 0; c < ca; c++) {
        char x[64], y[64];
        double px, py;
        OK(mpitopo_network_channel(a, c, &px, x, sizeof x));
        OK(mpitopo_network_channel(b, c, &py, y, sizeof y));
        assert_string_equal(x, y);
        assert_true(px == py);
    }
    for (int s = 0; s < na; s++) {
        char x[64], y[64];
        OK(mpitopo_network_node_name(a, s, x, sizeof x));
        OK(mpitopo_network_node_name(b, s, y, sizeof y));
        assert_string_equal(x, y);
        for (int d = 0; d < na; d++) {
            int64_t ra[8], rb[8];
            int la, lb;
            OK(mpitopo_network_route(a, s, d, 8, ra, &la));
            OK(mpitopo_network_route(b, s, d, 8, rb, &lb));
            assert_int_equal(la, lb);
            assert_memory_equal(ra, rb, sizeof *ra * (size_t)la);
        }
    }
    mpitopo_network_destroy(&a);
    mpitopo_network_destroy(&b);
    const int F = MPITOPO_ERR_FORMAT;
    const char *lst = DATA "small.lst";
    mpitopo_network_t *net = NULL;
    fails_from(lst, "l1.lst", "{swA} LID:0001 PN:01 } { CA", "{swA} LID:0001 PN:0", F,
               "l1.lst:1: PN:0 is not a hexadecimal number in [1, 255]");
    char cut[512];
    snprintf(cut, sizeof cut, "%s", slurp(lst));
    *strstr(cut, " PN:01 } { CA") = '\0';
    FAILS(mpitopo_network_from_fabric(variant(0, "l2.lst", cut, NULL, NULL), DATA "small.lfts",
                                      &net),
          F, "l2.lst:1: truncated: no \"}\" closes an end of the link");
    fails_from(lst, "l3.lst", "{ SW Ports:08", "{ RT Ports:08", F,
               "l3.lst:1: routers are not supported");
    fails_from(lst, "l4.lst", "{ SW Ports:08", "{ XX Ports:08", F,
               "l4.lst:1: node type \"XX\" is not SW or CA");
    fails_from(lst, "l5.lst", "PHY=4x LOG=ACT SPD=2.5", "PHY=4x LOG=ACT SPD=3", F,
               "l5.lst:1: unknown link speed \"SPD=3\"");
    fails_from(lst, "l6.lst", "PHY=4x LOG=ACT SPD=2.5", "PHY=4 LOG=ACT SPD=2.5", F,
               "l6.lst:1: \"PHY=4\" is not a width PHY=Nx");
    fails_from(lst, "l7.lst", "Ports:08", "Ports:04", F, "is not described as at line");
    fails_from(lst, "l8.lst", "NodeGUID:0000000000000010", "NodeGUIX:0000000000000010", F,
               "l8.lst:1: an end of the link lacks NodeGUID:");
    fails_from(lst, "l9.lst", "PN:01 } { CA", "PN:09 } { CA", F,
               "l9.lst:1: PN:9 of a node with 8 ports");
    /* One direction of swA port 1's link missing. */
    char text[8192];
    snprintf(text, sizeof text, "%s", slurp(lst));
    char *second = strchr(text, '\n') + 1;
    memmove(text, second, strlen(second) + 1);
    FAILS(mpitopo_network_from_fabric(variant(0, "l10.lst", text, NULL, NULL), DATA "small.lfts",
                                      &net),
          F, "l10.lst:1: port 1 links to \"0x0000000000000010\"[1], whose record (line 1) does not "
             "list this link back");
    assert_null(net);
}

/* A chain of 40 switches with a host at either end: routes of 41
 * channels, longer than the 32 mpitopo_network_route copies through its
 * own buffer when the caller's room is short. */
static void test_long_routes(void **state)
{
    (void)state;
    enum { K = 40 };
    static char topo[16384], lfts[8192];
    size_t n = 0, m = 0;
    for (int i = 0; i < K; i++) {
        n += (size_t)snprintf(topo + n, sizeof topo - n,
                              "switchguid=0x%x\n"
                              "Switch\t3 \"S-%016x\"\t# \"s%d\" base port 0 lid %d\n",
                              0x100 + i, 0x100 + i, i, i + 1);
        if (i > 0)
            n += (size_t)snprintf(topo + n, sizeof topo - n, "[1]\t\"S-%016x\"[2]\n", 0xff + i);
        if (i < K - 1)
            n += (size_t)snprintf(topo + n, sizeof topo - n, "[2]\t\"S-%016x\"[1]\n", 0x101 + i);
        if (i == 0 || i == K - 1)
            n += (size_t)snprintf(topo + n, sizeof topo - n, "[3]\t\"H-%d\"[1]\n", i);
        n += (size_t)snprintf(topo + n, sizeof topo - n, "\n");
        m += (size_t)snprintf(lfts + m, sizeof lfts - m,
                              "Unicast lids [0-%d] of switch Lid %d guid 0x%016x ('s%d'):\n"
                              "0x%04x %03d\n0x%04x %03d\n",
                              K + 2, i + 1, 0x100 + i, i, K + 1, i == 0 ? 3 : 1, K + 2,
                              i == K - 1 ? 3 : 2);
    }
    snprintf(topo + n, sizeof topo - n,
             "Ca\t1 \"H-0\"\t# \"hostA\"\n[1](1)\t\"S-%016x\"[3]\t# lid %d lmc 0 \"s0\"\n\n"
             "Ca\t1 \"H-%d\"\t# \"hostB\"\n[1](2)\t\"S-%016x\"[3]\t# lid %d lmc 0 \"s%d\"\n",
             0x100, K + 1, K - 1, 0x100 + K - 1, K + 2, K - 1);
    mpitopo_network_t *net = NULL;
    char path[256];
    snprintf(path, sizeof path, "%s", variant(0, "chain.topo", topo, NULL, NULL));
    OK(mpitopo_network_from_fabric(path, variant(1, "chain.lfts", lfts, NULL, NULL), &net));
    int nn, maxr, len = -1;
    OK(mpitopo_network_size(net, &nn, NULL, &maxr));
    assert_int_equal(nn, 2);
    assert_int_equal(maxr, K + 1);
    int64_t ch[K + 1];
    FAILS(mpitopo_network_route(net, 0, 1, 10, ch, &len), MPITOPO_ERR_RANGE,
          "maxlen = 10 is less than the route's 41");
    OK(mpitopo_network_route(net, 1, 1, 0, ch, &len));
    assert_int_equal(len, 0);
    OK(mpitopo_network_route(net, 0, 1, K + 1, ch, &len));
    assert_int_equal(len, K + 1);
    char name[64];
    OK(mpitopo_network_channel(net, ch[K], NULL, name, sizeof name));
    assert_string_equal(name, "s39/p3->hostB/p1");
    mpitopo_pattern_t *p = NULL;
    mpitopo_network_metrics_t met;
    OK(mpitopo_pattern_create(2, 1, (const int[]){0}, (const int[]){1}, (const double[]){8}, NULL,
                              &p));
    OK(mpitopo_network_evaluate(net, p, (const int[]){0, 1}, NULL, NULL, &met));
    assert_true(met.dilation == K + 1 && met.hop_bytes == 8.0 * (K + 1));
    mpitopo_pattern_destroy(&p);
    mpitopo_network_destroy(&net);
}

/* ---------------------------------------------------------------- memory */

static int run_import(void *ctx)
{
    (void)ctx;
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_fabric(DATA "small.topo", DATA "small.lfts", &net);
    if (rc == MPITOPO_SUCCESS) {
        char name[64];
        int64_t ch[8];
        int len;
        mpitopo_network_route(net, 0, 3, 8, ch, &len);
        mpitopo_network_channel(net, 7, NULL, name, sizeof name);
        mpitopo_network_destroy(&net);
    }
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(unit_each_allocation_fails("fabric", run_import, NULL) > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),         cmocka_unit_test(test_formats),
        cmocka_unit_test(test_subnet_list),   cmocka_unit_test(test_machine),
        cmocka_unit_test(test_bad_topology),  cmocka_unit_test(test_long_routes),
        cmocka_unit_test(test_bad_routes),    cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
