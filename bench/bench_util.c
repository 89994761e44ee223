#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

int bench_parse_sizes(const char *s, long *min, long *max)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    char *colon = strchr(buf, ':');
    if (!colon) {
        *min = 1;
        return bench_parse_long(buf, 1, 1L << 26, max) || !is_pow2(*max) ? -1 : 0;
    }
    *colon = '\0';
    if (bench_parse_long(buf, 1, 1L << 26, min) || bench_parse_long(colon + 1, 1, 1L << 26, max))
        return -1;
    return is_pow2(*min) && is_pow2(*max) && *min <= *max ? 0 : -1;
}

/* "MIN:MAX:STEP": sizes MIN, MIN*STEP, ... up to MAX (STEP a power of two,
 * at least 2); "MIN:MAX" or "MAX" as bench_parse_sizes, STEP 2. */
int bench_parse_sizes_step(const char *s, long *min, long *max, long *step)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    *step = 2;
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2) {
        *c2 = '\0';
        if (bench_parse_long(c2 + 1, 2, 1L << 20, step) || !is_pow2(*step))
            return -1;
    }
    return bench_parse_sizes(buf, min, max);
}

int bench_parse_names(const char *s, const char *const *names, const char *const *alias, int n, int *use)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    memset(use, 0, (size_t)n * sizeof *use);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < n && strcmp(t, names[k]) && !(alias && strcmp(t, alias[k]) == 0))
            k++;
        if (k == n)
            return -1;
        use[k] = 1;
    }
    return 0;
}

int bench_world_nodes(const char *prog, int **node_of, const mpitopo_nodeinfo_t **ni)
{
    int size, rc = mpitopo_comm_nodeinfo(MPI_COMM_WORLD, ni);
    if (rc != MPITOPO_SUCCESS) {
        fprintf(stderr, "%s: mpitopo_comm_nodeinfo: %s\n", prog, mpitopo_last_error());
        return rc;
    }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *node_of = malloc((size_t)size * sizeof **node_of);
    if (!*node_of)
        return MPITOPO_ERR_NOMEM;
    return MPI_Allgather(&(*ni)->node, 1, MPI_INT, *node_of, 1, MPI_INT, MPI_COMM_WORLD);
}
