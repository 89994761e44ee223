/* mpitopo's machines "slurm:FILE INNER" (issue 32): the switches or blocks of
 * a Slurm topology.conf above the nodes, the levels INNER inside each node,
 * and --hosts restricting them to a job's nodes. */
#include "cli.h"

#include "network/slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    char **v;
    int n, cap;
} names_t;

static int add(void *ctx, const char *name)
{
    names_t *a = ctx;
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 64;
        char **p = realloc(a->v, (size_t)cap * sizeof *p);
        if (!p)
            return 1;
        a->v = p;
        a->cap = cap;
    }
    return !(a->v[a->n++] = strdup(name));
}

static int message(const char *what, const char *value, int rc)
{
    const char *detail = mpitopo_last_error();
    fprintf(stderr, "mpitopo: %s '%s': %s\n", what, value, detail[0] ? detail : mpitopo_strerror(rc));
    return 1;
}

/*
 * desc is "slurm:FILE" then, after a blank or a comma, the levels inside a
 * node. The machine's nodes are the file's hosts (or those of hosts, a
 * Slurm host list such as "node[01-04],gpu7", in launch order), the hosts
 * of one switch together; *node_hosts receives their names in node order,
 * separated by commas (malloc'ed), for the mapping files. 0 or 1 after a
 * message.
 */
int mpitopo__cli_slurm_machine(const char *desc, const char *hosts, mpitopo_machine_t **machine,
                               char **node_hosts)
{
    const char *file = desc + strlen("slurm:");
    size_t flen = strcspn(file, " \t,");
    const char *inner = file + flen + strspn(file + flen, " \t,");
    char path[4096];
    if (flen == 0 || flen >= sizeof path) {
        fprintf(stderr, "mpitopo: --machine '%s': expected slurm:FILE, then the levels inside a node\n", desc);
        return 1;
    }
    memcpy(path, file, flen);
    path[flen] = '\0';
    mpitopo__slurm_t *t = NULL;
    names_t list = {0};
    int *node_of = NULL, status = 0, rc = mpitopo__slurm_read(path, "Slurm topology", &t);
    if (rc != MPITOPO_SUCCESS)
        return message("--machine", desc, rc);
    char why[200];
    if (hosts && (rc = mpitopo__slurm_hostlist(hosts, strlen(hosts), add, &list, why, sizeof why)) != 0) {
        if (rc < 0)
            fprintf(stderr, "mpitopo: --hosts '%s': %s\n", hosts, why);
        else
            fprintf(stderr, "mpitopo: --hosts '%s': out of memory\n", hosts);
        status = 1;
        goto cleanup;
    }
    int n = hosts ? list.n : mpitopo__slurm_nhosts(t);
    node_of = malloc((size_t)n * sizeof *node_of);
    if (!node_of) {
        status = message("--machine", desc, MPITOPO_ERR_NOMEM);
        goto cleanup;
    }
    rc = mpitopo__slurm_machine(t, n, hosts ? (const char *const *)list.v : NULL, inner, machine, node_of);
    if (rc != MPITOPO_SUCCESS) {
        status = message(hosts ? "--machine with --hosts" : "--machine", desc, rc);
        goto cleanup;
    }
    /* The names in node order. */
    const char **by_node = calloc((size_t)n, sizeof *by_node);
    size_t len = 1;
    for (int i = 0; by_node && i < n; i++) {
        by_node[node_of[i]] = hosts ? list.v[i] : mpitopo__slurm_host(t, i);
        len += strlen(by_node[node_of[i]]) + 1;
    }
    *node_hosts = by_node ? malloc(len) : NULL;
    if (!*node_hosts) {
        free(by_node);
        mpitopo_machine_destroy(machine);
        status = message("--machine", desc, MPITOPO_ERR_NOMEM);
        goto cleanup;
    }
    (*node_hosts)[0] = '\0';
    for (int u = 0; u < n; u++) {
        if (u)
            strcat(*node_hosts, ",");
        strcat(*node_hosts, by_node[u]);
    }
    free(by_node);
cleanup:
    for (int i = 0; i < list.n; i++)
        free(list.v[i]);
    free(list.v);
    free(node_of);
    mpitopo__slurm_free(&t);
    return status;
}
