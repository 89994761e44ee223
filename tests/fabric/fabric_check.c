/*
 * The fabric tests' driver: imports a fabric with mpitopo_network_from_fabric,
 * prints one line about it, then for every "SRC DST" line of standard input
 * (end nodes by host name, the first word of their node description) the
 * route's channel names, "SRC DST: A/p1->B/p3 B/p7->C/p1 ...".
 *   fabric_check TOPOLOGY ROUTES [MAX_IMPORT_SECONDS]
 * Exits 1 when the import fails or takes longer than MAX_IMPORT_SECONDS,
 * or when a name on standard input is no end node's.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The end node whose host name is host, or -1. */
static int find(char (*hosts)[64], int n, const char *host)
{
    for (int i = 0; i < n; i++)
        if (strcmp(hosts[i], host) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s TOPOLOGY ROUTES [MAX_IMPORT_SECONDS]\n", argv[0]);
        return 2;
    }
    mpitopo_network_t *net = NULL;
    double t0 = now();
    int rc = mpitopo_network_from_fabric(argv[1], argv[2], &net);
    double took = now() - t0;
    if (rc != MPITOPO_SUCCESS) {
        fprintf(stderr, "fabric_check: %s\n", mpitopo_last_error());
        return 1;
    }
    int n = 0, maxr = 0;
    int64_t nch = 0;
    mpitopo_network_size(net, &n, &nch, &maxr);
    printf("imported %d end nodes, %lld channels, longest route %d, in %.3f s\n", n,
           (long long)nch, maxr, took);
    char(*hosts)[64] = calloc((size_t)n, sizeof *hosts);
    int64_t *route = calloc((size_t)maxr + 1, sizeof *route);
    if (!hosts || !route)
        return 1;
    for (int i = 0; i < n; i++) {
        char name[256];
        mpitopo_network_node_name(net, i, name, sizeof name);
        snprintf(hosts[i], sizeof hosts[i], "%.*s", (int)strcspn(name, " \t"), name);
    }
    int status = 0;
    if (argc == 4 && took > atof(argv[3])) {
        fprintf(stderr, "fabric_check: the import took %.3f s, more than %s s\n", took, argv[3]);
        status = 1;
    }
    char a[128], b[128];
    while (scanf("%127s %127s", a, b) == 2) {
        int s = find(hosts, n, a), d = find(hosts, n, b), len = 0;
        if (s < 0 || d < 0) {
            fprintf(stderr, "fabric_check: no end node \"%s\"\n", s < 0 ? a : b);
            status = 1;
            continue;
        }
        if (mpitopo_network_route(net, s, d, maxr, route, &len) != MPITOPO_SUCCESS) {
            fprintf(stderr, "fabric_check: %s\n", mpitopo_last_error());
            status = 1;
            continue;
        }
        printf("%s %s:", a, b);
        for (int i = 0; i < len; i++) {
            char name[512];
            mpitopo_network_channel(net, route[i], NULL, name, sizeof name);
            printf(" %s", name);
        }
        printf("\n");
    }
    free(hosts);
    free(route);
    mpitopo_network_destroy(&net);
    return status;
}
