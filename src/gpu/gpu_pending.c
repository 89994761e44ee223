/* Entry points of issue 20 not written yet: they fail with
 * MPITOPO_ERR_UNSUPPORTED (replaced by gpu_hwloc.c, gpu_map.c and
 * gpu_metrics.c within this issue). */
#include "gpu/gpu_internal.h"

int mpitopo_map_gpu(const char *spec, const mpitopo_machine_t *machine,
                    const mpitopo_network_t *network, const int *end_node,
                    const mpitopo_gpus_t *gpus, const mpitopo_pattern_t *cpu_pattern,
                    const mpitopo_pattern_t *gpu_pattern, const mpitopo_map_options_t *options,
                    int *leaf_of_proc, int *gpu_of_proc)
{
    (void)spec, (void)machine, (void)network, (void)end_node, (void)gpus, (void)cpu_pattern;
    (void)gpu_pattern, (void)options, (void)leaf_of_proc, (void)gpu_of_proc;
    return MPITOPO_FAIL(MPITOPO_ERR_UNSUPPORTED, "not implemented yet (issue 20)");
}

int mpitopo_gpu_metrics(const mpitopo_machine_t *machine, const mpitopo_gpus_t *gpus,
                        const mpitopo_pattern_t *gpu_pattern, const int *leaf_of_proc,
                        const int *gpu_of_proc, double *max_congestion, double *hop_bytes)
{
    (void)machine, (void)gpus, (void)gpu_pattern, (void)leaf_of_proc, (void)gpu_of_proc;
    (void)max_congestion, (void)hop_bytes;
    return MPITOPO_FAIL(MPITOPO_ERR_UNSUPPORTED, "not implemented yet (issue 20)");
}
