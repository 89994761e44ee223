/* mpitopo platform: a SimGrid platform with the links, capacities and routes
 * of mpitopo's network model, so that a simulated run (SMPI) loads exactly
 * the channels the congestion metrics count. */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_ROUTES 1048576LL

static const char *platform_help =
    "Usage: mpitopo platform --network DESC [OPTION]...\n"
    "\n"
    "Writes a SimGrid (3.32) platform XML with the links, capacities and routes of\n"
    "mpitopo's model of a network, for running an MPI program under SMPI\n"
    "(smpirun -platform FILE) on the network the metrics of 'mpitopo eval\n"
    "--network' describe: the links a simulated run loads are the channels\n"
    "those metrics count. One host per end node; one SHARED link per directed\n"
    "channel (a cable is two links, one each way), named c<CHANNEL> after the\n"
    "channel's number, with its mpitopo name in the property \"channel\"; the\n"
    "switches are implicit. Every ordered pair of hosts gets an explicit route\n"
    "(a zone with routing=\"Full\", symmetrical=\"NO\") listing the links of\n"
    "mpitopo's route in order, and every host a FATPIPE loopback link for the\n"
    "traffic between its own cores. Only the links some route crosses are\n"
    "written. To see which links a run loads, trace it (--cfg=tracing:yes\n"
    "--cfg=tracing/platform:yes --cfg=tracing/uncategorized:yes) and\n"
    "integrate each link's bandwidth_used over time: SimGrid 3.32 accounts a\n"
    "flow's bytes exactly only while its rate does not change, so replay\n"
    "one flow at a time (tests/simgrid/replay.c serial).\n"
    "Explicit routes serve every kind of network alike, fat trees included\n"
    "(SimGrid's own FAT_TREE cluster is not used), so that the simulated\n"
    "routes are the model's by construction; tests/simgrid checks that SMPI\n"
    "loads every link as the model loads its channel.\n"
    "\n"
    "Options:\n"
    "  --network DESC        the network (\"torus:4x4x4\", \"mesh:3x5\",\n"
    "                        \"fattree:...\", \"ktree:K,N\", \"dragonfly:P,A,H\",\n"
    "                        \"gpc\", each with an optional \":cap=X\"; see\n"
    "                        mpitopo_network(3))\n"
    "  --nodes N             only the first N end nodes become hosts (default:\n"
    "                        all), as 'mpitopo eval --network' uses the first\n"
    "                        nodes of a machine\n"
    "  --cores N             cores per host (default 1): one SMPI process per\n"
    "                        core\n"
    "  --bandwidth BW        the bandwidth of a channel of capacity 1 (default\n"
    "                        1GBps); a channel of capacity X gets X times BW.\n"
    "                        BW is a number with a SimGrid unit: Bps, kBps,\n"
    "                        MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, or\n"
    "                        the same with bps (bits)\n"
    "  --latency LAT         the latency of every link (default 100ns), a number\n"
    "                        with a unit: s, ms, us, ns or ps\n"
    "  --speed S             the speed of a core (default 1Gf), a number with a\n"
    "                        unit: f, kf, Mf, Gf, Tf\n"
    "  --loopback-bandwidth BW\n"
    "                        the bandwidth of a host's loopback link, shared by\n"
    "                        the traffic between its cores (default 10GBps)\n"
    "  --max-routes R        refuse a platform with more than R routes (default\n"
    "                        1048576, 1,024 hosts): n hosts have n(n-1) routes,\n"
    "                        and SimGrid loads 1,024 hosts' routes from XML in\n"
    "                        about 24 s and 230 MB\n"
    "  -o, --output FILE     write there instead of standard output\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Host names are the end nodes' names (\"n0\", \"n1\", ... for the described\n"
    "networks) when they are all distinct and made of letters, digits, '.', '_'\n"
    "and '-'; otherwise node-0, node-1, ... in end-node order. A hostfile for\n"
    "smpirun lists them in rank order.\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on a usage or input error (with a message on standard\n"
    "  error)\n"
    "\n"
    "Examples:\n"
    "  128 nodes of SciNet's GPC with 8 cores each, and a halo exchange on them:\n"
    "\n"
    "  $ mpitopo platform --network gpc --nodes 128 --cores 8 -o gpc128.xml\n"
    "  $ smpirun -np 1024 -platform gpc128.xml -hostfile hosts.txt ./halo\n";

typedef struct platform_args {
    const char *network, *output;
    const char *bandwidth, *latency, *speed, *loopback;
    long long nodes, cores, max_routes;
} platform_args_t;

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpitopo: platform: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'mpitopo platform --help' for its options.\n");
    return 1;
}

static const char *const bw_units[] = {"Bps",  "kBps", "MBps", "GBps", "TBps", "KiBps", "MiBps", "GiBps", "TiBps",
                                       "bps",  "kbps", "Mbps", "Gbps", "Tbps", "Kibps", "Mibps", "Gibps", "Tibps",
                                       NULL};
static const char *const lat_units[] = {"s", "ms", "us", "ns", "ps", NULL};
static const char *const speed_units[] = {"f", "kf", "Mf", "Gf", "Tf", NULL};

/* A positive finite number (a latency may be 0) followed by one of the
 * units; 0 on success, the number in *value and the unit in *unit. */
static int parse_quantity(const char *s, const char *const *units, double *value, const char **unit)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    int zero_ok = units == lat_units; /* a latency may be 0 */
    if (end == s || errno || !(v > 0 || (zero_ok && v == 0)) || v > 1e300)
        return -1;
    for (int i = 0; units[i]; i++)
        if (!strcmp(end, units[i])) {
            *value = v;
            *unit = units[i];
            return 0;
        }
    return -1;
}

static int parse_count(const char *opt, const char *s, long long hi, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(s, &end, 10);
    if (end == s || *end || errno || *out < 1 || *out > hi) {
        fprintf(stderr, "mpitopo: platform: %s '%s': expected an integer in [1, %lld]\n", opt, s, hi);
        return 1;
    }
    return 0;
}

/* The options into a; 1 after a usage error, *done when --help was printed. */
static int parse_args(int argc, char **argv, platform_args_t *a, int *done)
{
    *a = (platform_args_t){.bandwidth = "1GBps", .latency = "100ns", .speed = "1Gf", .loopback = "10GBps",
                           .cores = 1, .max_routes = DEFAULT_MAX_ROUTES};
    *done = 0;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            fputs(platform_help, stdout);
            *done = 1;
            return 0;
        }
        const char **slot = !strcmp(o, "--network")                            ? &a->network
                            : !strcmp(o, "--output") || !strcmp(o, "-o")       ? &a->output
                            : !strcmp(o, "--bandwidth")                        ? &a->bandwidth
                            : !strcmp(o, "--latency")                          ? &a->latency
                            : !strcmp(o, "--speed")                            ? &a->speed
                            : !strcmp(o, "--loopback-bandwidth")               ? &a->loopback
                                                                               : NULL;
        long long *count = !strcmp(o, "--nodes")        ? &a->nodes
                           : !strcmp(o, "--cores")      ? &a->cores
                           : !strcmp(o, "--max-routes") ? &a->max_routes
                                                        : NULL;
        if (!slot && !count)
            return usage("unknown option '%s'", o);
        if (i + 1 >= argc)
            return usage("option '%s' needs a value", o);
        const char *v = argv[++i];
        if (slot)
            *slot = v;
        else if (parse_count(o, v, count == &a->max_routes ? INT64_MAX : INT32_MAX, count))
            return 1;
    }
    if (!a->network)
        return usage("%s", "platform needs --network DESC");
    double x;
    const char *u;
    if (parse_quantity(a->bandwidth, bw_units, &x, &u))
        return usage("--bandwidth '%s': expected a positive number with a unit like GBps", a->bandwidth);
    if (parse_quantity(a->loopback, bw_units, &x, &u))
        return usage("--loopback-bandwidth '%s': expected a positive number with a unit like GBps", a->loopback);
    if (parse_quantity(a->latency, lat_units, &x, &u))
        return usage("--latency '%s': expected a number with a unit: s, ms, us, ns or ps", a->latency);
    if (parse_quantity(a->speed, speed_units, &x, &u))
        return usage("--speed '%s': expected a positive number with a unit: f, kf, Mf, Gf or Tf", a->speed);
    return 0;
}

/* A name SimGrid and a hostfile take as it is. */
static int safe_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            return 0;
    return 1;
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp((const char *)x, (const char *)y);
}

#define NAME_LEN 64

/* The hosts' names: the end nodes' own when all are safe and distinct,
 * else node-<i>. names holds n * NAME_LEN bytes. */
static int host_names(const mpitopo_network_t *net, int n, char *names)
{
    char *sorted = malloc((size_t)n * NAME_LEN);
    if (!sorted)
        return -1;
    int own = 1;
    for (int i = 0; i < n && own; i++) {
        char *name = names + (size_t)i * NAME_LEN;
        own = mpitopo_network_node_name(net, i, name, NAME_LEN) == MPITOPO_SUCCESS &&
              strlen(name) < NAME_LEN - 1 && safe_name(name);
    }
    if (own) {
        memcpy(sorted, names, (size_t)n * NAME_LEN);
        qsort(sorted, (size_t)n, NAME_LEN, cmp_name);
        for (int i = 1; i < n && own; i++)
            own = strcmp(sorted + (size_t)(i - 1) * NAME_LEN, sorted + (size_t)i * NAME_LEN) != 0;
    }
    free(sorted);
    for (int i = 0; i < n && !own; i++)
        snprintf(names + (size_t)i * NAME_LEN, NAME_LEN, "node-%d", i);
    return 0;
}

/* s with the characters XML attributes cannot hold escaped. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Marks in used the channels of every route between the first n nodes. */
static int mark_used(const mpitopo_network_t *net, int n, int maxlen, int64_t *route, unsigned char *used)
{
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            int len;
            if (s == d)
                continue;
            int rc = mpitopo_network_route(net, s, d, maxlen, route, &len);
            if (rc != MPITOPO_SUCCESS)
                return rc;
            for (int k = 0; k < len; k++)
                used[route[k]] = 1;
        }
    return MPITOPO_SUCCESS;
}

static void write_links(FILE *f, const mpitopo_network_t *net, int64_t nchannels, const unsigned char *used,
                        const platform_args_t *a)
{
    /* --bandwidth was checked when the options were read: it parses. */
    double bw = 0;
    const char *unit = bw_units[0];
    parse_quantity(a->bandwidth, bw_units, &bw, &unit);
    for (int64_t c = 0; c < nchannels; c++) {
        double cap = 1;
        char name[128];
        if (!used[c] || mpitopo_network_channel(net, c, &cap, name, sizeof name) != MPITOPO_SUCCESS)
            continue;
        fprintf(f, "    <link id=\"c%lld\" bandwidth=\"%.17g%s\" latency=\"%s\">"
                   "<prop id=\"channel\" value=\"", (long long)c, cap * bw, unit, a->latency);
        put_escaped(f, name);
        fprintf(f, "\"/><prop id=\"capacity\" value=\"%.17g\"/></link>\n", cap);
    }
}

static int write_routes(FILE *f, const mpitopo_network_t *net, int n, int maxlen, int64_t *route,
                        const char *names)
{
    for (int s = 0; s < n; s++) {
        const char *sn = names + (size_t)s * NAME_LEN;
        fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s_loopback\"/></route>\n",
                sn, sn, sn);
        for (int d = 0; d < n; d++) {
            int len;
            if (s == d)
                continue;
            int rc = mpitopo_network_route(net, s, d, maxlen, route, &len);
            if (rc != MPITOPO_SUCCESS)
                return rc;
            fprintf(f, "    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", sn, names + (size_t)d * NAME_LEN);
            for (int k = 0; k < len; k++)
                fprintf(f, "<link_ctn id=\"c%lld\"/>", (long long)route[k]);
            fputs("</route>\n", f);
        }
    }
    return MPITOPO_SUCCESS;
}

static int write_platform(FILE *f, const mpitopo_network_t *net, int n, const platform_args_t *a)
{
    int64_t nchannels;
    int maxlen, rc = MPITOPO_ERR_NOMEM;
    mpitopo_network_size(net, NULL, &nchannels, &maxlen);
    int64_t *route = malloc(sizeof *route * (size_t)(maxlen > 0 ? maxlen : 1));
    unsigned char *used = calloc((size_t)(nchannels > 0 ? nchannels : 1), 1);
    char *names = malloc((size_t)n * NAME_LEN);
    if (!route || !used || !names || host_names(net, n, names))
        goto out;
    if ((rc = mark_used(net, n, maxlen, route, used)) != MPITOPO_SUCCESS)
        goto out;
    fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<!-- Written by mpitopo platform: the network ");
    for (const char *p = a->network; *p; p++) /* an XML comment holds no "--" and ends in no '-' */
        fputc(*p == '-' && (p[1] == '-' || !p[1]) ? '_' : *p, f);
    fprintf(f, ", %d hosts, mpitopo's routes -->\n<platform version=\"4.1\">\n"
               "  <zone id=\"mpitopo\" routing=\"Full\">\n", n);
    for (int i = 0; i < n; i++) {
        const char *h = names + (size_t)i * NAME_LEN;
        fprintf(f, "    <host id=\"%s\" speed=\"%s\" core=\"%lld\"/>\n", h, a->speed, a->cores);
        fprintf(f, "    <link id=\"%s_loopback\" bandwidth=\"%s\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n", h,
                a->loopback);
    }
    write_links(f, net, nchannels, used, a);
    if ((rc = write_routes(f, net, n, maxlen, route, names)) != MPITOPO_SUCCESS)
        goto out;
    fprintf(f, "  </zone>\n</platform>\n");
out:
    free(route);
    free(used);
    free(names);
    return rc;
}

int mpitopo__cmd_platform(int argc, char **argv)
{
    platform_args_t a;
    int done;
    if (parse_args(argc, argv, &a, &done))
        return 1;
    if (done)
        return 0;
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_string(a.network, &net);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: platform: --network '%s': %s\n", a.network,
                detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    int nnodes, status = 1;
    mpitopo_network_size(net, &nnodes, NULL, NULL);
    long long n = a.nodes ? a.nodes : nnodes;
    FILE *f = NULL;
    if (n > nnodes) {
        fprintf(stderr, "mpitopo: platform: --nodes %lld: the network '%s' has only %d end nodes\n", n, a.network,
                nnodes);
        goto out;
    }
    if (n * (n - 1) > a.max_routes) {
        fprintf(stderr, "mpitopo: platform: %lld hosts need %lld routes, more than --max-routes %lld; keep fewer "
                        "hosts with --nodes N or raise --max-routes\n", n, n * (n - 1), a.max_routes);
        goto out;
    }
    f = a.output ? fopen(a.output, "w") : stdout;
    if (!f) {
        fprintf(stderr, "mpitopo: platform: --output '%s': %s\n", a.output, strerror(errno));
        goto out;
    }
    rc = write_platform(f, net, (int)n, &a);
    int werr = ferror(f) || fflush(f);
    if (a.output && fclose(f))
        werr = 1;
    if (rc != MPITOPO_SUCCESS)
        fprintf(stderr, "mpitopo: platform: %s\n", mpitopo_strerror(rc));
    else if (werr)
        fprintf(stderr, "mpitopo: platform: writing '%s' failed\n", a.output ? a.output : "standard output");
    else
        status = 0;
out:
    mpitopo_network_destroy(&net);
    return status;
}
