/*
 * The registry's "tree" mapper. On a Cartesian pattern with no method named
 * it is the cart mapper, which runs the tree's two methods (the same seeds)
 * among its candidates and keeps the cheapest: running them here as well
 * would only double the time. Otherwise the tree's methods (tree.c).
 * Between the two files so that neither imports the other's mapper.
 */
#include "map/map_internal.h"
#include "pattern/pattern_internal.h"

#include <string.h>

int mpitopo__map_tree(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    if (!pattern->cart || pattern->nprocs == 0 || (args && strcmp(args, "best") != 0))
        return mpitopo__map_tree_methods(machine, pattern, args, options, leaf_of_proc);
    int kept = 0, rc = mpitopo__map_cart(machine, pattern, NULL, options, leaf_of_proc);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__keep_launch_unless_cheaper(machine, pattern, options, pattern->nprocs, leaf_of_proc, &kept);
    return rc;
}
