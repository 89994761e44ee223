/* What several commands of the mpitopo command line share (tools/cli.h):
 * messages, number and format parsers, the options and inputs of eval and
 * map, nodes and host names. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages and parsers ------------------------------------------------ */

int mpitopo__cli_fail(const char *what, int rc)
{
    const char *detail = mpitopo_last_error();
    fprintf(stderr, "mpitopo: %s: %s\n", what, detail[0] ? detail : mpitopo_strerror(rc));
    return 1;
}

int mpitopo__cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpitopo: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'mpitopo help' for the commands and their options.\n");
    return 1;
}

int mpitopo__cli_parse_int(const char *s, size_t len, long long lo, long long *out)
{
    char buf[32], *end;
    *out = 0; /* defined on every return */
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return *end || errno || *out < lo || *out > INT32_MAX ? -1 : 0;
}

const char *const mpitopo__cli_format_names[4] = {"plain", "openmpi-rankfile", "mpich-hosts", "cray-rank-order"};

int mpitopo__cli_parse_format(const char *opt, const char *s, int allow_auto, mpitopo__cli_format_t *f)
{
    if (allow_auto && !strcmp(s, "auto")) {
        *f = MPITOPO__CLI_FMT_AUTO;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, mpitopo__cli_format_names[i])) {
            *f = (mpitopo__cli_format_t)i;
            return 0;
        }
    fprintf(stderr, "mpitopo: %s '%s': expected %splain, openmpi-rankfile, mpich-hosts or cray-rank-order\n", opt, s,
            allow_auto ? "auto, " : "");
    return 1;
}

/* ---- the options of eval and map ----------------------------------------- */

/* A launch placement as mpitopo_placement takes it: block, rr or random:SEED. */
static int valid_placement(const char *s)
{
    if (!strcmp(s, "block") || !strcmp(s, "rr"))
        return 1;
    if (strncmp(s, "random:", 7))
        return 0;
    char *end;
    errno = 0;
    long long seed = strtoll(s + 7, &end, 10);
    return s[7] >= '0' && s[7] <= '9' && !*end && errno != ERANGE && seed >= 0;
}

int mpitopo__cli_option(mpitopo__cli_args_t *c, const char *o, const char *value)
{
    const char **slot = !strcmp(o, "--machine")         ? &c->machine
                        : !strcmp(o, "--node-topology") ? &c->node_topology
                        : !strcmp(o, "--pattern")       ? &c->pattern
                        : !strcmp(o, "--hosts")         ? &c->hosts
                        : !strcmp(o, "--network")       ? &c->network
                        : !strcmp(o, "--gpu-pattern")   ? &c->gpu_pattern
                        : !strcmp(o, "--gpus")          ? &c->gpus
                        : !strcmp(o, "--placement") || !strcmp(o, "--launch") ? &c->placement
                                                                              : NULL;
    int weights = !strcmp(o, "--weights") || !strcmp(o, "--weight");
    if (!slot && !weights && strcmp(o, "--seed"))
        return -1;
    if (!value)
        return mpitopo__cli_usage_error("option '%s' needs a value", o);
    if (slot == &c->placement) {
        c->placement_opt = o;
        if (!valid_placement(value)) {
            fprintf(stderr, "mpitopo: %s '%s': expected block, rr or random:SEED\n", o, value);
            return 1;
        }
    }
    if (slot) {
        *slot = value;
    } else if (weights) {
        if (mpitopo_weight_from_string(value, &c->weight) != MPITOPO_SUCCESS) {
            fprintf(stderr, "mpitopo: %s '%s': expected bytes, messages or unit\n", o, value);
            return 1;
        }
    } else {
        char *end;
        errno = 0;
        long long s = strtoll(value, &end, 10);
        if (!*value || *end || s < 0 || errno == ERANGE)
            return mpitopo__cli_usage_error("--seed '%s': expected an integer in [0, 2^63-1]", value);
        c->seed = (uint64_t)s;
    }
    return 0;
}

int mpitopo__cli_gpu_options_check(const mpitopo__cli_args_t *c)
{
    if (c->gpu_pattern && !c->gpus)
        return mpitopo__cli_usage_error("--gpu-pattern '%s' needs --gpus DESC|XML (the GPUs of a node)",
                                        c->gpu_pattern);
    if (c->gpus && !c->gpu_pattern)
        return mpitopo__cli_usage_error("--gpus '%s' needs --gpu-pattern FILE|DESC (the GPU traffic)", c->gpus);
    return 0;
}

/* ---- nodes and hosts ----------------------------------------------------- */

int mpitopo__cli_nnodes(const mpitopo_machine_t *m)
{
    int node_level, nnodes = 1;
    mpitopo_machine_node_level(m, &node_level);
    if (node_level >= 0)
        mpitopo_machine_level(m, node_level, NULL, NULL, &nnodes, NULL, NULL);
    return nnodes;
}

void mpitopo__cli_leaf_place(const mpitopo_machine_t *m, int node_level, int leaf, int *node, int *slot)
{
    int first = 0, count;
    *node = 0;
    if (node_level >= 0) {
        mpitopo_machine_unit_of(m, node_level, leaf, node);
        mpitopo_machine_unit_leaves(m, node_level, *node, &first, &count);
    }
    *slot = leaf - first;
}

char **mpitopo__cli_host_names(const char *list, int nnodes, char **copy)
{
    *copy = NULL;
    if (!list)
        return NULL;
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    char **names = malloc((size_t)n * sizeof *names);
    *copy = malloc(strlen(list) + 1);
    if (!names || !*copy) {
        free(names);
        free(*copy);
        *copy = NULL;
        fprintf(stderr, "mpitopo: out of memory\n");
        return NULL;
    }
    strcpy(*copy, list);
    n = 0;
    for (char *tok = *copy, *end; tok; tok = end) {
        end = strchr(tok, ',');
        if (end)
            *end++ = '\0';
        names[n++] = tok;
    }
    for (int i = 0; i < n; i++)
        if (!names[i][0] || strpbrk(names[i], " \t=:")) {
            fprintf(stderr, "mpitopo: --hosts '%s': host %d is empty or contains a blank, '=' or ':'\n",
                    list, i);
            goto bad;
        }
    if (n < nnodes) {
        fprintf(stderr, "mpitopo: --hosts '%s': %d host names for %d nodes\n", list, n, nnodes);
        goto bad;
    }
    return names;
bad:
    free(names);
    free(*copy);
    *copy = NULL;
    return NULL;
}

/* ---- the inputs of eval and map ------------------------------------------ */

static int is_pattern_description(const char *s)
{
    static const char *kinds[] = {"cart:", "random:", "ring:", "complete:", "alltoall:", "hhc:", "coll:"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strncmp(s, kinds[i], strlen(kinds[i])))
            return 1;
    return 0;
}

/* Load --network, and put its group levels (switches) above the machine's
 * nodes in place of the machine's own. */
static int load_network(const char *desc, mpitopo__cli_inputs_t *in)
{
    if (!desc)
        return 0;
    int rc = mpitopo_network_from_string(desc, &in->network);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --network '%s': %s\n", desc, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    int nend = 0, nnodes = mpitopo__cli_nnodes(in->machine);
    mpitopo_network_size(in->network, &nend, NULL, NULL);
    if (nnodes > nend) {
        fprintf(stderr, "mpitopo: --network '%s': the machine has %d nodes but the network only %d end nodes\n",
                desc, nnodes, nend);
        return 1;
    }
    mpitopo_machine_t *m = NULL;
    if ((rc = mpitopo_network_machine(in->network, in->machine, NULL, &m, NULL)) != MPITOPO_SUCCESS)
        return mpitopo__cli_fail("--network", rc);
    mpitopo_machine_destroy(&in->machine);
    in->machine = m;
    return 0;
}

/* --machine (a slurm: machine, hwloc inside the nodes, or a description),
 * --network, --pattern and --hosts. */
static int load_machine_pattern(mpitopo__cli_args_t *a, mpitopo__cli_inputs_t *in)
{
    int rc;
    if (!strncmp(a->machine, "slurm:", 6)) {
        if (a->node_topology)
            return mpitopo__cli_usage_error("--node-topology '%s': not with a slurm: machine (give the levels inside a "
                                            "node after the file)", a->node_topology);
        if (mpitopo__cli_slurm_machine(a->machine, a->hosts, &in->machine, &in->slurm_hosts))
            return 1;
        a->hosts = in->slurm_hosts; /* --hosts of the mapping files, now in node order */
        rc = MPITOPO_SUCCESS;
    } else if (a->node_topology)
        rc = mpitopo_machine_from_hwloc(a->machine, strcmp(a->node_topology, "this") ? a->node_topology : NULL,
                                        &in->machine);
    else
        rc = mpitopo_machine_from_string(a->machine, &in->machine);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__cli_fail("--machine", rc);
    if (load_network(a->network, in))
        return 1;
    int nprocs, nleaves;
    mpitopo_machine_nleaves(in->machine, &nleaves);
    /* A file's header is checked against the machine before anything is
     * allocated for it, so a huge process count costs nothing. */
    if (is_pattern_description(a->pattern))
        rc = mpitopo_pattern_from_string(a->pattern, &in->pattern);
    else
        rc = mpitopo_pattern_read_max(a->pattern, nleaves, &in->pattern);
    if (rc == MPITOPO_ERR_RANGE && !is_pattern_description(a->pattern)) {
        fprintf(stderr, "mpitopo: --pattern: %s (the machine has %d leaves)\n", mpitopo_last_error(), nleaves);
        return 1;
    }
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__cli_fail("--pattern", rc);
    mpitopo_pattern_nprocs(in->pattern, &nprocs);
    if (nprocs > nleaves) {
        fprintf(stderr, "mpitopo: the pattern has %d processes but the machine only %d leaves\n", nprocs, nleaves);
        return 1;
    }
    /* --hosts is checked whether or not a format needs it. */
    char *copy = NULL, **hosts = a->hosts ? mpitopo__cli_host_names(a->hosts, mpitopo__cli_nnodes(in->machine), &copy)
                                          : NULL;
    free(hosts);
    free(copy);
    return a->hosts && !hosts;
}

/* Load --gpus and --gpu-pattern (when given), the GPU pattern over the
 * same processes as the CPU pattern. */
static int load_gpus(const mpitopo__cli_args_t *a, mpitopo__cli_inputs_t *in)
{
    if (!a->gpu_pattern)
        return 0;
    int rc = mpitopo_gpus_load(a->gpus, &in->gpus);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --gpus '%s': %s\n", a->gpus, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    int nleaves, nprocs, gprocs;
    mpitopo_machine_nleaves(in->machine, &nleaves);
    if (is_pattern_description(a->gpu_pattern))
        rc = mpitopo_pattern_from_string(a->gpu_pattern, &in->gpu_pattern);
    else
        rc = mpitopo_pattern_read_max(a->gpu_pattern, nleaves, &in->gpu_pattern);
    if (rc != MPITOPO_SUCCESS) {
        const char *detail = mpitopo_last_error();
        fprintf(stderr, "mpitopo: --gpu-pattern '%s': %s\n", a->gpu_pattern, detail[0] ? detail : mpitopo_strerror(rc));
        return 1;
    }
    mpitopo_pattern_nprocs(in->pattern, &nprocs);
    mpitopo_pattern_nprocs(in->gpu_pattern, &gprocs);
    if (gprocs != nprocs) {
        fprintf(stderr, "mpitopo: --gpu-pattern '%s' has %d processes but --pattern '%s' has %d: both must describe "
                        "the same processes\n", a->gpu_pattern, gprocs, a->pattern, nprocs);
        return 1;
    }
    return 0;
}

int mpitopo__cli_load(mpitopo__cli_args_t *a, mpitopo__cli_inputs_t *in)
{
    *in = (mpitopo__cli_inputs_t){0};
    return load_machine_pattern(a, in) || load_gpus(a, in);
}

void mpitopo__cli_free(mpitopo__cli_inputs_t *in)
{
    mpitopo_gpus_destroy(&in->gpus);
    mpitopo_pattern_destroy(&in->gpu_pattern);
    mpitopo_network_destroy(&in->network);
    mpitopo_machine_destroy(&in->machine);
    mpitopo_pattern_destroy(&in->pattern);
    free(in->slurm_hosts);
    in->slurm_hosts = NULL;
}

int mpitopo__cli_network_metrics(const mpitopo__cli_inputs_t *in, const int *leaves, mpitopo_network_metrics_t *net,
                                 char *busiest, size_t len)
{
    int nprocs, node_level, status = 0;
    mpitopo_pattern_nprocs(in->pattern, &nprocs);
    mpitopo_machine_node_level(in->machine, &node_level);
    mpitopo_network_load_t *load = NULL;
    int rc = mpitopo_network_load_create(in->network, in->pattern, &load);
    for (int p = 0; p < nprocs && rc == MPITOPO_SUCCESS; p++) {
        int node = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_of(in->machine, node_level, leaves[p], &node);
        rc = mpitopo_network_load_place(load, p, node);
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_metrics(load, NULL, NULL, net);
    int64_t channel;
    int count = 0;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_load_top(load, 1, &channel, NULL, &count);
    busiest[0] = '\0';
    if (rc == MPITOPO_SUCCESS && count > 0)
        rc = mpitopo_network_channel(in->network, channel, NULL, busiest, len);
    if (rc != MPITOPO_SUCCESS)
        status = mpitopo__cli_fail("--network", rc);
    mpitopo_network_load_destroy(&load);
    return status;
}
