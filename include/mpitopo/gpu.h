#ifndef MPITOPO_GPU_H
#define MPITOPO_GPU_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/gpu.h>
#endif

#include <mpitopo/export.h>
#include <mpitopo/machine.h>
#include <mpitopo/map.h>
#include <mpitopo/network.h>
#include <mpitopo/pattern.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_gpu GPU clusters: GPU trees and joint CPU/GPU mapping
 * @ingroup mpitopo
 * @brief The GPUs of a node as a tree with link bandwidths, and the MAGC
 * mapper (processes to nodes and cores, GPUs to processes).
 *
 * Every node of a GPU cluster is assumed to hold the same GPUs. They form a
 * tree: the root is the node, inner vertices are packages, PCIe switches,
 * NVLink pairs..., the leaves are the GPUs, numbered 0..g-1 (the local
 * device index a process selects: in tree order for a description, in PCI
 * bus order from hwloc). Each tree link (a vertex to
 * its parent) has a bandwidth in GB/s; the congestion of a link is the
 * traffic crossing it divided by its bandwidth.
 *
 * Description strings (mpitopo_gpus_from_string()) list the levels from
 * the root down, separated by commas or blanks:
 * @verbatim
   NAME:FANOUT@GBPS[,NAME:FANOUT@GBPS]...
   @endverbatim
 * Level k has FANOUT children under every vertex of level k-1, each joined
 * to its parent by a link of GBPS GB/s (a positive real; "@GBPS" may be
 * left out, then 16). The last level is the GPUs. The thesis's clusters
 * (ch. 5), with assumed bandwidths (PCIe 3.0 x16 about 16 GB/s per
 * direction, the inter-socket QPI link about 38 GB/s shared by both
 * sockets' PCIe roots, modelled on the package links):
 * @verbatim
   cluster A (16 K80 per node): package:2@38,switch:2@16,board:2@16,gpu:2@16
   cluster B (8 K20 per node):  package:2@38,switch:2@16,gpu:2@16
   @endverbatim
 *
 * Mapping specs of mpitopo_map_gpu():
 * @verbatim
   "magc"         phase 1: processes to nodes from C_cpu + C_gpu (ptram when a
                  network is given, else the tree mapper's node-level
                  partition); phase 2: each node's processes to its cores by
                  the congestion-based greedy (thesis Alg. 5.1) over C_cpu;
                  phase 3: each node's GPUs to its processes by Alg. 5.1 over
                  C_gpu on the GPU tree;
   "magc:scotch"  phases 2 and 3 by Scotch (tree-leaf target) when built with
                  Scotch, else MPITOPO_ERR_UNSUPPORTED;
   "strategy1"    as magc, phase 1 from C_cpu only;
   "strategy2"    CPU-only mapping (magc's phases 1 and 2 from C_cpu) and the
                  default GPU assignment;
   "gpu-default"  the launch placement (options->launch, block when NULL) and
                  GPU = local rank on the node mod GPUs per node.
   @endverbatim
 * Alg. 5.1 is the thesis's greedy (ties: lowest process, lowest PE;
 * symmetric volumes); MAGC runs it as stated and in three variants (each
 * process's inter-node traffic loaded on the way to the node's root; ties
 * among PEs by least added congestion), keeps the least congested, the
 * thesis's on ties, then searches from it: exchanges of two processes'
 * PEs and of the contents of two subtrees with as many PEs, kept when they
 * lower MC, or keep MC and lower the number of links at MC, or keep both
 * and lower the sum over links of load^2 / bandwidth (a bounded number of
 * passes, lowest indices first; never above the best variant's MC).
 *
 * A process always gets a GPU of its own node: gpu_of_proc[p] is a local
 * index on the node of leaf_of_proc[p]. When a node holds more processes
 * than GPUs, the default assignment is used there (GPUs shared, local rank
 * mod g), and verbose level 1 says so. Never worse: on every node, phase 3
 * keeps the default assignment unless Alg. 5.1 (or Scotch) lowers the
 * node's maximum GPU-link congestion. With options->never_worse (as
 * mpitopo_gpu_map() sets it), the result is kept only when neither its
 * GPU-tree maximum congestion (C_gpu) nor its machine cost of C_cpu
 * (mpitopo_metrics_cost()) is above the default's (the launch with the
 * default GPUs); else the launch placement with the mapper's own GPU
 * assignment (phase 3 on the launch's nodes: the default's CPU cost) when
 * its GPU congestion is below the default's, else the default itself
 * (verbose level 1 says which).
 *
 * The functions of this page make no MPI call.
 * @threadsafe On distinct objects, and for concurrent reads of one object.
 * @{
 */

/** @brief Opaque GPU tree of one node (every node alike). */
typedef struct mpitopo_gpus mpitopo_gpus_t;

/**
 * @brief Build a GPU tree from a description string.
 *
 * The syntax is on the topic page: levels NAME:FANOUT\@GBPS from the root
 * down, the last level being the GPUs.
 * @param[in] desc the description, e.g. "package:2@38,switch:2@16,gpu:2@16"
 * @param[out] gpus the tree, released with mpitopo_gpus_destroy()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_PARSE a malformed level, a fan-out below 1 or a
 *         bandwidth not positive (the message names the level)
 * @retval MPITOPO_ERR_RANGE more than 65,536 GPUs
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_gpus_from_string(const char *desc, mpitopo_gpus_t **gpus);

/**
 * @brief Build a GPU tree from hwloc: an XML export or this host.
 *
 * GPUs are hwloc OS devices of type GPU or COPROC, one per PCI device
 * (the CUDA, OpenCL and NVML devices of one GPU count once), numbered by
 * PCI bus id. The tree is the GPUs' ancestors that matter: the machine,
 * packages, and every object above two or more GPUs through different
 * children (a PCIe switch: an upstream bridge whose downstream bridges lead
 * to different GPUs); a chain of objects between two of these becomes one
 * link whose bandwidth is the slowest hwloc PCI link speed on it, or
 * 16 GB/s for PCI objects without one, and 38 GB/s for a package's link
 * to the machine. Compute GPUs only: display devices (hwloc's
 * DRM "card0") do not count. When the topology holds hwloc's
 * NVLinkBandwidth distances (NVML backend): GPUs joined through NVSwitches
 * (a DGX-2) keep the PCIe shape, but each GPU's own link gets its total
 * NVSwitch bandwidth (150 GB/s on a DGX-2) and every link above GPUs that
 * all belong to the fabric never congests (a tree cannot hold the
 * all-to-all fabric, which is non-blocking: only the GPUs' own NVLink ports
 * can congest); two GPUs under one vertex joined directly (POWER8) get a
 * vertex "nvlink" above the pair, their links the pair's NVLink bandwidth,
 * the nvlink vertex's link the sum of their NVLink bandwidths to the
 * package.
 * @param[in] xml_path path of an hwloc XML export, or NULL for this host
 * @param[out] gpus the tree, released with mpitopo_gpus_destroy()
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL gpus, or no compute GPU in the topology (the
 *         message names the file: "no GPU in FILE")
 * @retval MPITOPO_ERR_HWLOC hwloc failed to read or load the topology
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_gpus_from_hwloc(const char *xml_path, mpitopo_gpus_t **gpus);

/**
 * @brief Build a GPU tree from a description or an hwloc XML file.
 *
 * A string ending in ".xml", or naming an existing file, is read with
 * mpitopo_gpus_from_hwloc(); "pcie:FILE" (FILE ending in ".xml" or an
 * existing file) reads FILE's PCIe tree with its PCI link speeds and
 * ignores NVLink; anything else is read with mpitopo_gpus_from_string().
 * @param[in] desc_or_xml a description or a path
 * @param[out] gpus the tree, released with mpitopo_gpus_destroy()
 * @retval MPITOPO_SUCCESS on success
 * @return the errors of mpitopo_gpus_from_string() or
 *         mpitopo_gpus_from_hwloc()
 */
MPITOPO_API int mpitopo_gpus_load(const char *desc_or_xml, mpitopo_gpus_t **gpus);

/**
 * @brief Release a GPU tree.
 * @param[in,out] gpus the handle; may be NULL or point to NULL; set to NULL
 */
MPITOPO_API void mpitopo_gpus_destroy(mpitopo_gpus_t **gpus);

/**
 * @brief Number of GPUs per node.
 * @param[in] gpus the GPU tree
 * @param[out] gpus_per_node the number of GPUs (leaves)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 */
MPITOPO_API int mpitopo_gpus_count(const mpitopo_gpus_t *gpus, int *gpus_per_node);

/**
 * @brief One-line description of a GPU tree.
 *
 * Lists the vertices from the root down as NAME(children)\@GBPS in
 * brackets; a regular tree built from a string prints as its description.
 * The text is truncated to size - 1 characters and always terminated.
 * @param[in] gpus the GPU tree
 * @param[out] buf the text
 * @param[in] size size of buf, >= 1
 * @retval MPITOPO_SUCCESS on success (also when truncated)
 * @retval MPITOPO_ERR_ARG NULL pointers, size 0
 */
MPITOPO_API int mpitopo_gpus_describe(const mpitopo_gpus_t *gpus, char *buf, size_t size);

/**
 * @brief Map processes to nodes and cores, and GPUs to processes (MAGC).
 *
 * The specs are on the topic page. Both patterns have the same nprocs;
 * the machine has a level named "node", every node has as many leaves as
 * the first. The CPU side (phase 2) runs Alg. 5.1 over the tree of the
 * machine's levels below "node", the link bandwidth of a level being the
 * inverse of its cost relative to the node level's cost (cost 0: the
 * level is free, its links never congest).
 * @param[in] spec "magc", "magc:scotch", "strategy1", "strategy2" or
 *            "gpu-default"
 * @param[in] machine the machine (levels above and below "node")
 * @param[in] network the network above the nodes, or NULL
 * @param[in] end_node the end node of each node unit, or NULL (unit u on
 *            end node u); ignored without a network
 * @param[in] gpus the GPU tree of every node
 * @param[in] cpu_pattern C_cpu, nprocs processes
 * @param[in] gpu_pattern C_gpu, nprocs processes
 * @param[in] options weight (both patterns), seed, launch (for gpu-default
 *            and the never-worse guards), never_worse (no worse than the
 *            default on C_gpu's GPU congestion and C_cpu's cost, see the
 *            topic page), or NULL for the defaults
 * @param[out] leaf_of_proc nprocs ints, caller-allocated: the leaf of the
 *             machine of each process
 * @param[out] gpu_of_proc nprocs ints, caller-allocated: the local GPU
 *             index of each process on its node, in [0, g)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, patterns of different sizes (both
 *         named), more processes than leaves, no "node" level
 * @retval MPITOPO_ERR_NOT_FOUND unknown spec
 * @retval MPITOPO_ERR_UNSUPPORTED "magc:scotch" without Scotch
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @return also the errors of mpitopo_map() and mpitopo_map_network()
 */
MPITOPO_API int mpitopo_map_gpu(const char *spec, const mpitopo_machine_t *machine,
                                const mpitopo_network_t *network, const int *end_node,
                                const mpitopo_gpus_t *gpus, const mpitopo_pattern_t *cpu_pattern,
                                const mpitopo_pattern_t *gpu_pattern,
                                const mpitopo_map_options_t *options, int *leaf_of_proc,
                                int *gpu_of_proc);

/**
 * @brief Metrics of a GPU assignment over the GPU trees of the nodes.
 *
 * The traffic of gpu_pattern (bytes) between processes p and q runs, when
 * both sit on one node, over the path between their GPUs in that node's
 * GPU tree (up to the lowest common ancestor and down); between nodes, up
 * from p's GPU to the node's root and down from the root to q's GPU on the
 * other node (the network between the nodes is not a GPU-tree link; its
 * metrics are those of mpitopo_metrics_compute() on the machine). Each
 * message loads the undirected links of its path.
 * @param[in] machine the machine (its "node" level gives each process's node)
 * @param[in] gpus the GPU tree of every node
 * @param[in] gpu_pattern C_gpu
 * @param[in] leaf_of_proc the leaf of each process
 * @param[in] gpu_of_proc the local GPU of each process
 * @param[out] max_congestion the largest load / bandwidth (bytes per GB/s)
 *             over every node's GPU-tree links; may be NULL
 * @param[out] hop_bytes the sum over messages of bytes x GPU-tree links
 *             on the path, an inter-node message counting the links of both
 *             nodes' trees plus one for the network; may be NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, no "node" level
 * @retval MPITOPO_ERR_RANGE a leaf or GPU index out of range
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_gpu_metrics(const mpitopo_machine_t *machine, const mpitopo_gpus_t *gpus,
                                    const mpitopo_pattern_t *gpu_pattern, const int *leaf_of_proc,
                                    const int *gpu_of_proc, double *max_congestion,
                                    double *hop_bytes);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_GPU_H */
