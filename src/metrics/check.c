/* Whether a placement is one: every process on a distinct leaf of the
 * machine. What every mapper's result and every metric's input must be. */
#include "machine/machine_internal.h"

int mpitopo_mapping_check(const mpitopo_machine_t *machine, int nprocs, const int *leaf_of_proc)
{
    if (!machine || !leaf_of_proc)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !machine ? "machine" : "leaf_of_proc");
    if (nprocs < 0 || nprocs > machine->nleaves)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "nprocs = %d must be in [0, %d] (leaves of the machine)",
                            nprocs, machine->nleaves);
    unsigned char *used = mpitopo__calloc((size_t)machine->nleaves, 1);
    if (!used)
        return MPITOPO_NOMEM("the leaf bitmap");
    int rc = MPITOPO_SUCCESS;
    for (int p = 0; p < nprocs && rc == MPITOPO_SUCCESS; p++) {
        int leaf = leaf_of_proc[p];
        if (leaf < 0 || leaf >= machine->nleaves)
            rc = MPITOPO_FAIL(MPITOPO_ERR_RANGE, "leaf_of_proc[%d] = %d out of range [0, %d)", p, leaf,
                              machine->nleaves);
        else if (used[leaf])
            rc = MPITOPO_FAIL(MPITOPO_ERR_ARG, "leaf_of_proc[%d] = %d: leaf already taken by another process",
                              p, leaf);
        else
            used[leaf] = 1;
    }
    mpitopo__free(used);
    return rc;
}
