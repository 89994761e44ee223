/* Machines whose node interior comes from hwloc. */
#include "machine/machine_internal.h"

#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages of the helpers below belong to the public function. */
#define HWLOC_FAIL(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_machine_from_hwloc", __VA_ARGS__)

#define SYNTHETIC_PREFIX "synthetic:"

/* How `source` reads in a message. */
static const char *source_text(char *out, size_t size, const char *source)
{
    if (!source || !*source)
        snprintf(out, size, "%s (this machine)", source ? "\"\"" : "NULL");
    else
        snprintf(out, size, "\"%.200s\"", source);
    return out;
}

/* Report a bad `above` as an argument of this function: the parser's
 * message names mpitopo_machine_from_string's `desc`, which would mislead. */
static int above_fail(int rc)
{
    static const char prefix[] = "mpitopo_machine_from_string: desc = ";
    char msg[512];
    snprintf(msg, sizeof msg, "%s", mpitopo_last_error());
    if (strncmp(msg, prefix, sizeof prefix - 1) == 0)
        return HWLOC_FAIL(rc, "above = %s", msg + sizeof prefix - 1);
    return HWLOC_FAIL(rc, "above: %s", msg);
}

/* `above` must end at the node and leave room and names for the two inner
 * levels. */
static int check_above(const char *above, const mpitopo_machine_t *top)
{
    int last = top->nlevels - 1;
    if (strcmp(top->name[last], "node") != 0)
        return HWLOC_FAIL(MPITOPO_ERR_PARSE, "above = \"%.200s\": last level '%s' must be named \"node\"",
                          above, top->name[last]);
    for (int l = 0; l < last; l++)
        if (strcmp(top->name[l], "socket") == 0 || strcmp(top->name[l], "core") == 0)
            return HWLOC_FAIL(MPITOPO_ERR_PARSE,
                              "above = \"%.200s\": level '%s' is one of the levels inside a node",
                              above, top->name[l]);
    if (top->nlevels + 2 > MPITOPO_MAX_LEVELS)
        return HWLOC_FAIL(MPITOPO_ERR_RANGE,
                          "above = \"%.200s\": %d levels plus socket and core exceed %d levels",
                          above, top->nlevels, MPITOPO_MAX_LEVELS);
    return MPITOPO_SUCCESS;
}

/* What a synthetic description asks hwloc to build, as far as it costs:
 * its PUs (the product of its arities), the NUMA nodes attached with
 * "[numa]" (one per object of the level before each), and the largest
 * index given in an explicit "indexes=" list (every cpuset and nodeset is
 * a bitmap that long). Counts saturate above the limits. */
typedef struct synthetic_size {
    long long pus, numa;
    unsigned long long index;
} synthetic_size_t;

/* The attributes from s (at '(') to the first ')': the largest index of an
 * explicit indexes= list (hwloc's other form, interleaving loops, gives
 * indexes below the number of objects). Returns past the ')', or NULL. */
static const char *scan_attributes(const char *s, synthetic_size_t *sz)
{
    const char *close = strchr(s, ')');
    if (!close)
        return NULL;
    for (const char *p = s; p < close; p++) {
        if (strncmp(p, "indexes=", 8) != 0)
            continue;
        const char *v = p + 8;
        size_t len = strcspn(v, " )");
        for (const char *q = v; strspn(v, "0123456789,") >= len && q < v + len; q += strspn(q, ",")) {
            char *end;
            unsigned long long x = strtoull(q, &end, 10);
            sz->index = x > sz->index ? x : sz->index;
            q = end > q ? end : q + 1;
        }
    }
    return close + 1;
}

/*
 * The scan reads a description as hwloc does: an optional "(attributes)" of
 * the root; then levels "TYPE:N" or "N", each optionally followed by
 * "(attributes)", and attached memory "[numa(attributes)]", separated by
 * blanks or newlines. Where it cannot read on it stops with what it has:
 * hwloc refuses such a description itself.
 */
static void synthetic_size(const char *desc, synthetic_size_t *sz)
{
    const long long max = MPITOPO__SYNTHETIC_MAX_PUS;
    *sz = (synthetic_size_t){1, 0, 0};
    const char *pos = *desc == '(' ? scan_attributes(desc, sz) : desc;
    while (pos && sz->pus <= max && sz->numa <= max) {
        pos += strspn(pos, " \n");
        if (*pos == '\0')
            break;
        if (*pos == '[') {
            const char *close = strchr(pos, ']'), *open = strchr(pos, '(');
            sz->numa += sz->pus;
            if (close && open && open < close)
                scan_attributes(open, sz);
            pos = close ? close + 1 : NULL;
            continue;
        }
        if (*pos < '0' || *pos > '9') {
            pos = strchr(pos, ':');
            if (!pos)
                break;
            pos++;
        }
        char *end;
        unsigned long long n = strtoull(pos, &end, 0);
        if (end == pos)
            break;
        sz->pus = n > (unsigned long long)max ? max + 1 : sz->pus * (long long)n;
        pos = *end == '(' ? scan_attributes(end, sz) : end;
    }
}

/* Refuse a description hwloc would spend minutes or gigabytes on. */
static int check_synthetic(const char *source, const char *desc)
{
    char s[256];
    synthetic_size_t sz;
    synthetic_size(desc, &sz);
    if (sz.pus > MPITOPO__SYNTHETIC_MAX_PUS || sz.numa > MPITOPO__SYNTHETIC_MAX_PUS)
        return HWLOC_FAIL(MPITOPO_ERR_RANGE, "source = %s: the synthetic description has more than %d %s",
                          source_text(s, sizeof s, source), MPITOPO__SYNTHETIC_MAX_PUS,
                          sz.pus > MPITOPO__SYNTHETIC_MAX_PUS ? "PUs (the product of its arities)"
                                                              : "attached NUMA nodes");
    if (sz.index >= MPITOPO__SYNTHETIC_MAX_INDEX)
        return HWLOC_FAIL(MPITOPO_ERR_RANGE, "source = %s: the synthetic description has an index of %llu in "
                          "indexes=, more than %d", source_text(s, sizeof s, source), sz.index,
                          MPITOPO__SYNTHETIC_MAX_INDEX - 1);
    return MPITOPO_SUCCESS;
}

/* hwloc wants PUs at the bottom of a synthetic description; one that stops
 * above them ("package:2 core:4") means one PU per core. */
static int set_synthetic(hwloc_topology_t topo, const char *source)
{
    static const char pu[] = " pu:1";
    const char *desc = source + strlen(SYNTHETIC_PREFIX);
    char s[256];
    if (desc[strspn(desc, " \t\n")] == '\0')
        return HWLOC_FAIL(MPITOPO_ERR_HWLOC, "source = %s: the synthetic description is empty",
                          source_text(s, sizeof s, source));
    int rc = check_synthetic(source, desc);
    if (rc)
        return rc;
    if (hwloc_topology_set_synthetic(topo, desc) == 0)
        return MPITOPO_SUCCESS;
    size_t len = strlen(desc);
    char *with_pu = mpitopo__malloc(len + sizeof pu);
    if (!with_pu)
        return HWLOC_FAIL(MPITOPO_ERR_NOMEM, "out of memory allocating a synthetic description");
    memcpy(with_pu, desc, len);
    memcpy(with_pu + len, pu, sizeof pu);
    rc = hwloc_topology_set_synthetic(topo, with_pu);
    mpitopo__free(with_pu);
    if (rc != 0)
        return HWLOC_FAIL(MPITOPO_ERR_HWLOC,
                          "source = %s: hwloc cannot parse the synthetic description",
                          source_text(s, sizeof s, source));
    return MPITOPO_SUCCESS;
}

/* Initialise *topo (left NULL if even that fails) and load it from source. */
static int load_topology(const char *source, hwloc_topology_t *topo)
{
    char s[256];
    if (hwloc_topology_init(topo) != 0) {
        *topo = NULL;
        return HWLOC_FAIL(MPITOPO_ERR_HWLOC, "source = %s: hwloc_topology_init failed",
                          source_text(s, sizeof s, source));
    }
    /* Caches play no part in the model; skipping them saves load time. */
    hwloc_topology_set_cache_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (source && strncmp(source, SYNTHETIC_PREFIX, strlen(SYNTHETIC_PREFIX)) == 0) {
        int rc = set_synthetic(*topo, source);
        if (rc)
            return rc;
    } else if (source && *source) {
        if (hwloc_topology_set_xml(*topo, source) != 0)
            return HWLOC_FAIL(MPITOPO_ERR_HWLOC, "source = %s: hwloc cannot read the XML file (%s)",
                              source_text(s, sizeof s, source), strerror(errno));
    }
    if (hwloc_topology_load(*topo) != 0)
        return HWLOC_FAIL(MPITOPO_ERR_HWLOC, "source = %s: hwloc cannot load the topology (%s)",
                          source_text(s, sizeof s, source), strerror(errno));
    return MPITOPO_SUCCESS;
}

/* The (socket, core) labels of every core of the node, in core order:
 * (*inner)[2c], (*inner)[2c+1]. Topologies without Core objects use PUs. */
static int node_cores(hwloc_topology_t topo, const char *source, int **inner, int *ncores)
{
    char s[256];
    hwloc_obj_type_t type =
        hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n < 1)
        return HWLOC_FAIL(MPITOPO_ERR_HWLOC, "source = %s: the topology has no core",
                          source_text(s, sizeof s, source));
    int *labels = mpitopo__malloc_array((size_t)n, 2 * sizeof(int));
    if (!labels)
        return HWLOC_FAIL(MPITOPO_ERR_NOMEM, "out of memory allocating the labels of %d cores", n);
    for (int c = 0; c < n; c++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, (unsigned)c);
        hwloc_obj_t package =
            obj ? hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj) : NULL;
        /* Cores outside any package (rare) get socket label 0, packages 1 on. */
        labels[2 * c] = package ? (int)package->logical_index + 1 : 0;
        labels[2 * c + 1] = c;
    }
    *inner = labels;
    *ncores = n;
    return MPITOPO_SUCCESS;
}

/* Every node of `top` gets the same interior; from_paths copes with
 * interiors that are not regular (packages with different core counts). */
static int build(const char *above, const mpitopo_machine_t *top, const int *inner, int ncores,
                 mpitopo_machine_t **machine)
{
    int na = top->nlevels, nlevels = na + 2;
    long long n = (long long)top->nleaves * ncores;
    if (n > INT_MAX)
        return HWLOC_FAIL(MPITOPO_ERR_RANGE, "%d nodes of %d cores make %lld leaves, more than %d",
                          top->nleaves, ncores, n, INT_MAX);
    int *paths = mpitopo__malloc_array((size_t)n, (size_t)nlevels * sizeof(int));
    if (!paths)
        return HWLOC_FAIL(MPITOPO_ERR_NOMEM, "out of memory allocating %lld leaf paths", n);
    int *row = paths;
    for (int node = 0; node < top->nleaves; node++) {
        for (int c = 0; c < ncores; c++, row += nlevels) {
            for (int l = 0; l < na; l++)
                row[l] = top->unit[l][node];
            row[na] = inner[2 * c];
            row[na + 1] = inner[2 * c + 1];
        }
    }
    const char *names[MPITOPO_MAX_LEVELS];
    double costs[MPITOPO_MAX_LEVELS];
    for (int l = 0; l < na; l++) {
        names[l] = top->name[l];
        costs[l] = top->cost[l];
    }
    names[na] = "socket";
    names[na + 1] = "core";
    costs[na] = 2.0;
    costs[na + 1] = 1.0;
    /* `above` parsed, so an '@' in it can only introduce a cost. */
    int explicit_costs = strchr(above, '@') != NULL;
    int rc = mpitopo_machine_from_paths(nlevels, names, explicit_costs ? costs : NULL, (int)n,
                                        paths, machine, NULL);
    mpitopo__free(paths);
    return rc ? MPITOPO_FAIL_CONTEXT(rc, "mpitopo_machine_from_hwloc") : MPITOPO_SUCCESS;
}

int mpitopo_machine_from_hwloc(const char *above, const char *source,
                               mpitopo_machine_t **machine)
{
    mpitopo_machine_t *top = NULL;
    hwloc_topology_t topo = NULL;
    int *inner = NULL, ncores = 0;
    if (!machine)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "machine is NULL");
    *machine = NULL;
    if (!above)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "above is NULL");
    int rc = mpitopo_machine_from_string(above, &top);
    if (rc)
        return above_fail(rc);
    rc = check_above(above, top);
    if (!rc)
        rc = load_topology(source, &topo);
    if (!rc)
        rc = node_cores(topo, source, &inner, &ncores);
    if (!rc)
        rc = build(above, top, inner, ncores, machine);
    mpitopo__free(inner);
    if (topo)
        hwloc_topology_destroy(topo);
    mpitopo_machine_destroy(&top);
    return rc;
}
