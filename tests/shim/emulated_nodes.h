/* For the shim checkers: the emulated node of every world rank, computed
 * with the MPI-free core from MPITOPO_EMULATE and MPITOPO_EMULATE_PLACEMENT
 * as the library does. Include after <mpitopo.h> (MPITOPO_NO_MPI). */
#ifndef SHIM_EMULATED_NODES_H
#define SHIM_EMULATED_NODES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* node[w] for the n world ranks (all 0 without emulation); n <= maxp.
 * Returns 0, or an mpitopo error code after printing why. */
static int nodes_of_world(int n, int *node, int maxp)
{
    const char *desc = getenv("MPITOPO_EMULATE"), *spec = getenv("MPITOPO_EMULATE_PLACEMENT");
    memset(node, 0, (size_t)n * sizeof *node);
    if (!desc || !*desc)
        return 0;
    int *leaf = malloc((size_t)maxp * sizeof *leaf);
    mpitopo_machine_t *m = NULL;
    int level = -1, rc = leaf ? mpitopo_machine_from_string(desc, &m) : MPITOPO_ERR_NOMEM;
    if (rc == 0)
        rc = mpitopo_placement(m, n, spec && *spec ? spec : "block", leaf);
    if (rc == 0)
        rc = mpitopo_machine_node_level(m, &level);
    for (int w = 0; rc == 0 && level >= 0 && w < n; w++)
        rc = mpitopo_machine_unit_of(m, level, leaf[w], &node[w]);
    if (rc != 0)
        fprintf(stderr, "emulated nodes: %s\n", mpitopo_last_error());
    mpitopo_machine_destroy(&m);
    free(leaf);
    return rc;
}

#endif
