/*
 * GPU trees from hwloc (an XML export or this host).
 *
 * The tree is made of the GPUs' ancestors that shape their traffic: the
 * machine (root), packages, and every object above two or more GPUs
 * through different children (a PCIe switch shows in hwloc as an upstream
 * bridge whose downstream bridges lead to different GPUs); chains of
 * objects above a single branch collapse into one link whose bandwidth is
 * the slowest PCI link speed on the chain.
 *
 * NVLink, from hwloc's "NVLinkBandwidth" distances (MB/s):
 *  - NVSwitch fabric (a GPU with bandwidth to NVSwitch PCI devices, the
 *    DGX-2): a tree cannot hold an all-to-all fabric, but NVSwitch fabrics
 *    are non-blocking, so the only links that can congest are each GPU's
 *    own NVLink ports. The GPU's leaf link gets the sum of its NVSwitch
 *    bandwidths (150 GB/s on a DGX-2), and every inner link whose GPUs all
 *    belong to the fabric becomes non-congesting (infinite bandwidth). The
 *    PCIe shape is kept (the description still shows it), but on a DGX-2
 *    every assignment of GPUs within a node then has the same congestion,
 *    which is the truth for peer-to-peer traffic there. "pcie:FILE" in
 *    mpitopo_gpus_load() ignores NVLink and keeps the PCIe bandwidths.
 *  - Direct GPU-GPU NVLink (POWER8): two GPUs under the same tree vertex
 *    that share an NVLink get a vertex "nvlink" of their own; their leaf
 *    links get the pair's NVLink bandwidth, the nvlink vertex's link the sum
 *    of their NVLink bandwidths to the package (else of their old links).
 */
#include "machine/gpu_internal.h"

#include <hwloc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PCIE_DEFAULT_GBPS 16.0
#define PACKAGE_DEFAULT_GBPS 38.0
#define FAIL_HW(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_gpus_from_hwloc", __VA_ARGS__)

typedef struct vtx {
    hwloc_obj_t obj; /* NULL for an inserted nvlink vertex */
    int parent;      /* index in the vertex list, -1 for the root */
    double bw;
    int gpu; /* GPU index for a leaf, else -1 */
    const char *name;
} vtx_t;

typedef struct build {
    hwloc_topology_t topo;
    const char *what; /* the file, for messages */
    int xml;          /* read from an XML file */
    int ngpus;
    hwloc_obj_t *gpu;  /* the PCI device (or OS device) of each GPU */
    hwloc_obj_t *anc;  /* objects above GPUs (GPUs included) */
    int *anc_count;    /* number of GPUs below */
    int *anc_branches; /* children (in anc) above a GPU */
    int nanc;
    vtx_t *v;
    int nv, capv;
} build_t;

static int pci_key_cmp(const void *a, const void *b)
{
    hwloc_obj_t x = *(const hwloc_obj_t *)a, y = *(const hwloc_obj_t *)b;
    int px = x->type == HWLOC_OBJ_PCI_DEVICE, py = y->type == HWLOC_OBJ_PCI_DEVICE;
    if (px != py)
        return py - px;
    if (px) {
        const struct hwloc_pcidev_attr_s *s = &x->attr->pcidev, *t = &y->attr->pcidev;
        unsigned long long kx = ((unsigned long long)s->domain << 24) | ((unsigned)s->bus << 16) |
                                ((unsigned)s->dev << 8) | s->func;
        unsigned long long ky = ((unsigned long long)t->domain << 24) | ((unsigned)t->bus << 16) |
                                ((unsigned)t->dev << 8) | t->func;
        return kx < ky ? -1 : kx > ky;
    }
    return x->logical_index < y->logical_index ? -1 : x->logical_index > y->logical_index;
}

/* The object that stands for the GPU of an OS device: its PCI device. */
static hwloc_obj_t gpu_key(hwloc_obj_t osdev)
{
    return osdev->parent && osdev->parent->type == HWLOC_OBJ_PCI_DEVICE ? osdev->parent : osdev;
}

static int gpu_index(const build_t *b, hwloc_obj_t obj)
{
    if (obj->type == HWLOC_OBJ_OS_DEVICE)
        obj = gpu_key(obj);
    for (int i = 0; i < b->ngpus; i++)
        if (b->gpu[i] == obj)
            return i;
    return -1;
}

/* A compute GPU: a coprocessor OS device (CUDA, OpenCL, NVML on some
 * exports), or a GPU OS device from a compute backend (NVML, ROCm SMI,
 * Level Zero...). Display devices ("card0", "renderD128": type GPU from the
 * Linux DRM backend) and OpenCL devices that are not GPUs are not. */
static int is_compute_gpu(hwloc_obj_t o)
{
    if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
        o->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
        return 0;
    const char *cl = hwloc_obj_get_info_by_name(o, "OpenCLDeviceType");
    if (cl && strcmp(cl, "GPU") != 0)
        return 0;
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
        return 1;
    static const char *const compute[] = {"NVML", "RSMI", "LevelZero", "CUDA", "OpenCL"};
    const char *backend = hwloc_obj_get_info_by_name(o, "Backend");
    for (size_t i = 0; i < sizeof compute / sizeof compute[0]; i++)
        if ((o->subtype && strcmp(o->subtype, compute[i]) == 0) ||
            (backend && strcmp(backend, compute[i]) == 0))
            return 1;
    return 0;
}

static int find_gpus(build_t *b)
{
    int cap = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(b->topo, o));) {
        if (!is_compute_gpu(o))
            continue;
        hwloc_obj_t k = gpu_key(o);
        if (gpu_index(b, k) >= 0)
            continue;
        if (b->ngpus == cap) {
            cap = cap ? 2 * cap : 16;
            hwloc_obj_t *g = mpitopo__realloc_array(b->gpu, (size_t)cap, sizeof *g);
            if (!g)
                return MPITOPO_NOMEM("the GPU list");
            b->gpu = g;
        }
        b->gpu[b->ngpus++] = k;
    }
    if (b->ngpus == 0)
        return FAIL_HW(MPITOPO_ERR_ARG,
                       "no GPU in %s (no hwloc OS device of a compute GPU: a CoProc, or a GPU"
                       " from NVML, RSMI or Level Zero%s)",
                       b->what, b->xml ? "; an XML must be exported with I/O devices" : "");
    qsort(b->gpu, (size_t)b->ngpus, sizeof *b->gpu, pci_key_cmp);
    return MPITOPO_SUCCESS;
}

static int anc_index(const build_t *b, hwloc_obj_t o)
{
    for (int i = 0; i < b->nanc; i++)
        if (b->anc[i] == o)
            return i;
    return -1;
}

/* Every object on the GPUs' paths to the root, with the number of GPUs
 * below it and of its children on such paths. */
static int find_ancestors(build_t *b)
{
    int cap = 0;
    for (int g = 0; g < b->ngpus; g++) {
        hwloc_obj_t below = NULL;
        for (hwloc_obj_t o = b->gpu[g]; o; below = o, o = o->parent) {
            int i = anc_index(b, o);
            if (i < 0) {
                if (b->nanc == cap) {
                    cap = cap ? 2 * cap : 64;
                    hwloc_obj_t *a = mpitopo__realloc_array(b->anc, (size_t)cap, sizeof *a);
                    int *c = mpitopo__realloc_array(b->anc_count, (size_t)cap, sizeof *c);
                    if (a)
                        b->anc = a;
                    if (c)
                        b->anc_count = c;
                    int *r = mpitopo__realloc_array(b->anc_branches, (size_t)cap, sizeof *r);
                    if (r)
                        b->anc_branches = r;
                    if (!a || !c || !r)
                        return MPITOPO_NOMEM("the GPUs' ancestors");
                }
                i = b->nanc++;
                b->anc[i] = o;
                b->anc_count[i] = 0;
                b->anc_branches[i] = 0;
            }
            b->anc_count[i]++;
            /* A child counts as a branch the first time a GPU path enters it. */
            if (below && b->anc_count[anc_index(b, below)] == 1)
                b->anc_branches[i]++;
        }
    }
    return MPITOPO_SUCCESS;
}

static int keep(const build_t *b, hwloc_obj_t o)
{
    int i = anc_index(b, o);
    if (i < 0)
        return 0;
    return !o->parent || o->type == HWLOC_OBJ_PACKAGE || b->anc_branches[i] >= 2 ||
           gpu_index(b, o) >= 0;
}

static double link_speed(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_PCI_DEVICE)
        return o->attr->pcidev.linkspeed;
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        return o->attr->bridge.upstream.pci.linkspeed;
    return 0;
}

/* Bandwidth of the collapsed link from kept object o up to its kept
 * ancestor top: the slowest PCI link speed on the way, else the defaults. */
static double chain_bw(hwloc_obj_t o, hwloc_obj_t top)
{
    double bw = INFINITY;
    int pci = 0, package = 0;
    for (; o && o != top; o = o->parent) {
        double s = link_speed(o);
        if (o->type == HWLOC_OBJ_PCI_DEVICE || o->type == HWLOC_OBJ_BRIDGE ||
            o->type == HWLOC_OBJ_OS_DEVICE)
            pci = 1;
        if (o->type == HWLOC_OBJ_PACKAGE)
            package = 1;
        if (s > 0 && s < bw)
            bw = s;
    }
    if (isinf(bw) && pci)
        bw = PCIE_DEFAULT_GBPS;
    if (package && PACKAGE_DEFAULT_GBPS < bw)
        bw = PACKAGE_DEFAULT_GBPS;
    return bw;
}

static const char *kind_name(const build_t *b, hwloc_obj_t o)
{
    if (!o->parent)
        return "node";
    if (gpu_index(b, o) >= 0)
        return "gpu";
    switch (o->type) {
    case HWLOC_OBJ_PACKAGE:
        return "package";
    case HWLOC_OBJ_BRIDGE:
        return o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? "hostbridge" : "switch";
    case HWLOC_OBJ_PCI_DEVICE:
        return "pcidev";
    case HWLOC_OBJ_GROUP:
        return "group";
    case HWLOC_OBJ_NUMANODE:
        return "numa";
    default:
        return "object";
    }
}

static int add_vertex(build_t *b, hwloc_obj_t obj, int parent, double bw, int gpu,
                      const char *name)
{
    if (b->nv == b->capv) {
        int cap = b->capv ? 2 * b->capv : 64;
        vtx_t *v = mpitopo__realloc_array(b->v, (size_t)cap, sizeof *v);
        if (!v)
            return MPITOPO_NOMEM("the GPU tree");
        b->v = v;
        b->capv = cap;
    }
    b->v[b->nv] = (vtx_t){obj, parent, bw, gpu, name};
    b->nv++;
    return MPITOPO_SUCCESS;
}

/* Depth-first over the hwloc tree (normal then I/O children), adding the
 * kept objects below the kept vertex `up`. */
static int visit(build_t *b, hwloc_obj_t o, int up, int depth)
{
    if (anc_index(b, o) < 0 || depth > 256)
        return MPITOPO_SUCCESS;
    int me = up;
    if (keep(b, o)) {
        int rc = add_vertex(b, o, up, up < 0 ? 0 : chain_bw(o, b->v[up].obj), gpu_index(b, o),
                            kind_name(b, o));
        if (rc)
            return rc;
        me = b->nv - 1;
    }
    for (hwloc_obj_t c = o->first_child; c; c = c->next_sibling) {
        int rc = visit(b, c, me, depth + 1);
        if (rc)
            return rc;
    }
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
        int rc = visit(b, c, me, depth + 1);
        if (rc)
            return rc;
    }
    return MPITOPO_SUCCESS;
}

static int is_nvswitch(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_PCI_DEVICE && o->subtype && strcmp(o->subtype, "NVSwitch") == 0;
}

static int leaf_of_gpu(const build_t *b, int g)
{
    for (int v = 0; v < b->nv; v++)
        if (b->v[v].gpu == g)
            return v;
    return -1;
}

/* Whether every GPU below vertex w is in the NVSwitch fabric. */
static int all_in_fabric(const build_t *b, int w, const double *nvsw)
{
    int any = 0;
    for (int g = 0; g < b->ngpus; g++) {
        int v = leaf_of_gpu(b, g);
        while (v >= 0 && v != w)
            v = b->v[v].parent;
        if (v == w) {
            if (!(nvsw[g] > 0))
                return 0;
            any = 1;
        }
    }
    return any;
}

static int apply_nvlink(build_t *b)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_name(b->topo, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0)
        return MPITOPO_SUCCESS;
    int n = b->ngpus, rc = MPITOPO_SUCCESS;
    double *nvsw = mpitopo__calloc((size_t)n, sizeof *nvsw);
    double *host = mpitopo__calloc((size_t)n, sizeof *host);
    double *peer = mpitopo__calloc((size_t)n * (size_t)n, sizeof *peer);
    if (!nvsw || !host || !peer) {
        rc = MPITOPO_NOMEM("the NVLink bandwidths");
        goto done;
    }
    int fabric = 0;
    for (unsigned i = 0; i < d->nbobjs; i++) {
        int g = gpu_index(b, d->objs[i]);
        if (g < 0)
            continue;
        for (unsigned j = 0; j < d->nbobjs; j++) {
            double x = (double)d->values[i * d->nbobjs + j] / 1000.0; /* MB/s -> GB/s */
            hwloc_obj_t o = d->objs[j];
            int h = gpu_index(b, o);
            if (j == i || x <= 0)
                continue;
            if (h >= 0 && h != g)
                peer[g * n + h] += x;
            else if (is_nvswitch(o)) {
                nvsw[g] += x;
                fabric = 1;
            } else if (o->type == HWLOC_OBJ_PACKAGE || o->type == HWLOC_OBJ_NUMANODE)
                host[g] += x;
        }
    }
    if (fabric) {
        for (int v = 1; v < b->nv; v++)
            if (b->v[v].gpu >= 0 && nvsw[b->v[v].gpu] > 0)
                b->v[v].bw = nvsw[b->v[v].gpu];
            else if (b->v[v].gpu < 0 && all_in_fabric(b, v, nvsw))
                b->v[v].bw = INFINITY;
        goto done;
    }
    int nv0 = b->nv;
    for (int g = 0; g < n && !rc; g++)
        for (int h = g + 1; h < n && !rc; h++) {
            int a = leaf_of_gpu(b, g), c = leaf_of_gpu(b, h);
            if (!(peer[g * n + h] > 0) || a < 0 || c < 0 || b->v[a].parent != b->v[c].parent ||
                b->v[a].parent >= nv0)
                continue;
            double up = host[g] + host[h] > 0 ? host[g] + host[h] : b->v[a].bw + b->v[c].bw;
            rc = add_vertex(b, NULL, b->v[a].parent, up, -1, "nvlink");
            b->v[a].parent = b->v[c].parent = b->nv - 1;
            b->v[a].bw = b->v[c].bw = peer[g * n + h];
        }
done:
    mpitopo__free(nvsw);
    mpitopo__free(host);
    mpitopo__free(peer);
    hwloc_distances_release(b->topo, d);
    return rc;
}

/* Renumbers the vertices depth-first (children in list order) into t. */
static int to_tree(build_t *b, mpitopo_gpus_t **gpus)
{
    int *order = mpitopo__malloc_array((size_t)b->nv, sizeof *order);
    int *newid = mpitopo__malloc_array((size_t)b->nv, sizeof *newid);
    int *stack = mpitopo__malloc_array((size_t)b->nv, sizeof *stack);
    char **vname = mpitopo__calloc((size_t)b->nv, sizeof *vname);
    mpitopo__ptree_t t = {0};
    int rc = order && newid && stack && vname ? mpitopo__ptree_alloc(&t, b->nv, b->ngpus)
                                              : MPITOPO_NOMEM("the GPU tree");
    int no = 0, ns = 0;
    if (!rc) {
        stack[ns++] = 0;
        while (ns) {
            int v = stack[--ns];
            newid[v] = no;
            order[no++] = v;
            for (int w = b->nv - 1; w > 0; w--) /* pushed in reverse: popped in order */
                if (b->v[w].parent == v)
                    stack[ns++] = w;
        }
        for (int k = 0; k < no && !rc; k++) {
            const vtx_t *x = &b->v[order[k]];
            t.parent[k] = x->parent < 0 ? -1 : newid[x->parent];
            t.bw[k] = x->bw;
            if (x->gpu >= 0)
                t.pe_vertex[x->gpu] = k;
            vname[k] = mpitopo__strdup(x->name);
            if (!vname[k])
                rc = MPITOPO_NOMEM("GPU tree names");
        }
        if (!rc && no != b->nv)
            rc = FAIL_HW(MPITOPO_ERR_INTERNAL, "%d of %d tree vertices reached", no, b->nv);
        if (!rc)
            rc = mpitopo__ptree_finish(&t);
    }
    mpitopo__free(order);
    mpitopo__free(newid);
    mpitopo__free(stack);
    if (rc) {
        if (vname)
            for (int k = 0; k < b->nv; k++)
                mpitopo__free(vname[k]);
        mpitopo__free(vname);
        mpitopo__ptree_free(&t);
        return rc;
    }
    return mpitopo__gpus_new(&t, vname, NULL, gpus);
}

int mpitopo__gpus_from_hwloc_opt(const char *xml_path, int nvlink, mpitopo_gpus_t **gpus)
{
    if (gpus)
        *gpus = NULL;
    if (!gpus)
        return FAIL_HW(MPITOPO_ERR_ARG, "gpus is NULL");
    build_t b = {0};
    b.what = xml_path ? xml_path : "this host's topology";
    b.xml = xml_path != NULL;
    if (hwloc_topology_init(&b.topo) != 0)
        return FAIL_HW(MPITOPO_ERR_HWLOC, "hwloc_topology_init failed");
    int rc = MPITOPO_SUCCESS;
    if (xml_path && hwloc_topology_set_xml(b.topo, xml_path) != 0)
        rc = FAIL_HW(MPITOPO_ERR_HWLOC, "hwloc cannot read the XML file %s", xml_path);
    /* The default filter drops every PCI object and OS device (and with them
     * the NVLink matrix): keep them all. */
    if (!rc && hwloc_topology_set_io_types_filter(b.topo, HWLOC_TYPE_FILTER_KEEP_ALL) != 0)
        rc = FAIL_HW(MPITOPO_ERR_HWLOC, "hwloc refuses to keep I/O objects");
    if (!rc && hwloc_topology_load(b.topo) != 0)
        rc = FAIL_HW(MPITOPO_ERR_HWLOC, "hwloc cannot load %s", b.what);
    if (!rc)
        rc = find_gpus(&b);
    if (!rc)
        rc = find_ancestors(&b);
    if (!rc)
        rc = visit(&b, hwloc_get_root_obj(b.topo), -1, 0);
    if (!rc && nvlink)
        rc = apply_nvlink(&b);
    if (!rc)
        rc = to_tree(&b, gpus);
    mpitopo__free(b.gpu);
    mpitopo__free(b.anc);
    mpitopo__free(b.anc_count);
    mpitopo__free(b.anc_branches);
    mpitopo__free(b.v);
    hwloc_topology_destroy(b.topo);
    return rc;
}

int mpitopo_gpus_from_hwloc(const char *xml_path, mpitopo_gpus_t **gpus)
{
    return mpitopo__gpus_from_hwloc_opt(xml_path, 1, gpus);
}

/* A description, an hwloc XML file, or pcie:FILE (this file's tree, NVLink
 * ignored): the one loader of GPU trees, above both readers. */
int mpitopo_gpus_load(const char *desc_or_xml, mpitopo_gpus_t **gpus)
{
    if (gpus)
        *gpus = NULL;
    if (!desc_or_xml || !gpus)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", desc_or_xml ? "gpus" : "desc_or_xml");
    size_t n = strlen(desc_or_xml);
    struct stat st;
    /* "pcie:FILE": the file's PCIe tree, NVLink ignored (a level named pcie
     * is still a description: what follows is then no file). */
    const char *f = desc_or_xml + 5;
    if (strncmp(desc_or_xml, "pcie:", 5) == 0 &&
        ((n >= 9 && strcmp(desc_or_xml + n - 4, ".xml") == 0) ||
         (stat(f, &st) == 0 && S_ISREG(st.st_mode))))
        return mpitopo__gpus_from_hwloc_opt(f, 0, gpus);
    if ((n >= 4 && strcmp(desc_or_xml + n - 4, ".xml") == 0) ||
        (stat(desc_or_xml, &st) == 0 && S_ISREG(st.st_mode)))
        return mpitopo_gpus_from_hwloc(desc_or_xml, gpus);
    return mpitopo_gpus_from_string(desc_or_xml, gpus);
}
