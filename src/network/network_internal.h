/* Internal layout of a network: the regular topologies are described by a
 * few numbers, from which routes and channel names are computed on demand. */
#ifndef MPITOPO_NETWORK_INTERNAL_H
#define MPITOPO_NETWORK_INTERNAL_H

#include "core/internal.h"
#include <mpitopo/network.h>

/* Most levels of switches in a fat tree. */
#define MPITOPO_NET_MAX_LEVELS 16

enum mpitopo__net_kind {
    MPITOPO__NET_GRID = 0,
    MPITOPO__NET_FATTREE = 1,
    MPITOPO__NET_DRAGONFLY = 2,
    MPITOPO__NET_HHC = 3,   /* hierarchical hypercubes with centre nodes (hhc.c) */
    MPITOPO__NET_FABRIC = 4 /* a fabric read from files, routed by tables (fabric.c) */
};

/* Nodes, and vertices of one level; channels, and the d-mod-k products. */
#define MPITOPO__NET_LIMIT 2147483647LL
#define MPITOPO__NET_CHANNEL_LIMIT (1LL << 40)

struct mpitopo__net_ops;

struct mpitopo_network {
    const struct mpitopo__net_ops *ops; /* its kind's */
    int kind;
    int nnodes;
    int64_t nchannels;
    int max_route;
    double capacity; /* of every channel, unless chcap is set */
    double *chcap;   /* nchannels capacities, or NULL: all equal to capacity */
    void *ext;       /* kind-specific data (HHC, fabric), released with the network */
    /* torus and mesh: dims, row-major strides; the channels of dimension d,
     * direction s (0 = +, 1 = -) are [chbase[d][s], chbase[d][s] + chcount[d][s]). */
    int ndims;
    int torus;
    int dims[MPITOPO_MAX_DIMS];
    int64_t stride[MPITOPO_MAX_DIMS];
    int64_t chbase[MPITOPO_MAX_DIMS][2];
    int64_t chcount[MPITOPO_MAX_DIMS][2];
    /* fat tree (PGFT), levels 1..h (index 0 unused for m, w, p):
     * M[l] = m1*..*ml, W[l] = w1*..*wl, P[l] = w1*p1*..*wl*pl (M, W, P[0] = 1);
     * nvert[l]: vertices present at level l (0: the end nodes);
     * the up channels of layer l (level l-1 to l) start at upbase[l], its
     * down channels at downbase[l], nvert[l-1]*w_l*p_l of each. */
    int h;
    int64_t m[MPITOPO_NET_MAX_LEVELS + 1], w[MPITOPO_NET_MAX_LEVELS + 1],
        p[MPITOPO_NET_MAX_LEVELS + 1];
    int64_t M[MPITOPO_NET_MAX_LEVELS + 1], W[MPITOPO_NET_MAX_LEVELS + 1],
        P[MPITOPO_NET_MAX_LEVELS + 1];
    int64_t nvert[MPITOPO_NET_MAX_LEVELS + 1];
    int64_t upbase[MPITOPO_NET_MAX_LEVELS + 1], downbase[MPITOPO_NET_MAX_LEVELS + 1];
    /* dragonfly: df_p nodes per router, df_a routers per group, df_h global
     * ports per router, df_g groups; channels: node up [0, N), node down
     * [N, 2N), local from df_lbase (a*(a-1) per group), global from
     * df_gbase (g-1 per group: the t-th leaves router t / h). */
    int64_t df_p, df_a, df_h, df_g, df_lbase, df_gbase;
};

/* The capacity of channel ch (valid). */
static inline double mpitopo__network_capacity(const mpitopo_network_t *net, int64_t ch)
{
    return net->chcap ? net->chcap[ch] : net->capacity;
}

/*
 * One kind of network (network.c's table `kinds`; one file per kind). parse
 * reads the parameters body[0..len) of "KIND:..." into net (net->ops and
 * net->kind are set already), finish (NULL: none) completes it once the
 * options are read (nodes = 0 when no nodes=N was given, which only kinds
 * with takes_nodes accept). route: the channels of src -> dst (distinct,
 * valid) into ch, net->max_route at most, returns the length.
 * channel_name and node_name (NULL: "n<node>") write at most size bytes.
 * groups (NULL: none): group levels top-down, at most MPITOPO_MAX_LEVELS -
 * 2, their names, and size[l] > 0 when the groups of level l are runs of
 * size[l] consecutive end nodes, else 0 and group() numbers them. release
 * (NULL: nothing) frees net->ext.
 */
typedef struct mpitopo__net_ops {
    const char *name;
    int kind;
    int (*parse)(const char *desc, const char *body, size_t len, mpitopo_network_t *net);
    int (*finish)(const char *desc, mpitopo_network_t *net, int64_t nodes);
    int takes_nodes;
    int (*route)(const mpitopo_network_t *net, int src, int dst, int64_t *ch);
    void (*channel_name)(const mpitopo_network_t *net, int64_t ch, char *name, size_t size);
    void (*node_name)(const mpitopo_network_t *net, int node, char *name, size_t size);
    int (*groups)(const mpitopo_network_t *net, int64_t *size, const char **names);
    int64_t (*group)(const mpitopo_network_t *net, int level, int node);
    void (*release)(mpitopo_network_t *net);
} mpitopo__net_ops_t;

extern const mpitopo__net_ops_t mpitopo__net_torus_ops, mpitopo__net_mesh_ops; /* grid.c */
extern const mpitopo__net_ops_t mpitopo__net_fattree_ops, mpitopo__net_ktree_ops; /* fattree.c */
extern const mpitopo__net_ops_t mpitopo__net_dragonfly_ops; /* dragonfly.c */
extern const mpitopo__net_ops_t mpitopo__net_hhc_ops;       /* hhc.c */
extern const mpitopo__net_ops_t mpitopo__net_fabric_ops;    /* fabric.c: InfiniBand files */

/* What the kinds' parsers share (network.c): an error of the description,
 * naming it ("desc = \"...\": <detail>", as mpitopo_network_from_string);
 * a * b when it stays <= limit, else -1 (a, b >= 0); a list of integers in
 * [1, max] separated by sep, exactly s[0..len), at most maxn. */
MPITOPO_PRINTF(3, 4)
int mpitopo__net_fail(const char *desc, int code, const char *fmt, ...);
int64_t mpitopo__net_mul_max(int64_t a, int64_t b, int64_t limit);
int mpitopo__net_parse_list(const char *desc, const char *what, const char *s, size_t len, char sep,
                            int64_t max, int64_t *out, int maxn, int *n);

/* The HHC's arithmetic by end node number (hhc.c), for the virtual
 * topology (src/hhc/hhc.c) and the pattern "hhc:D". D in [1, 30] (nnodes
 * returns -1 outside), nodes valid. A node's level l: 0 for the bottom
 * nodes, l for the centre of a level-l cube; its parent: the centre of the
 * cube it is a leaf of (-1 for the top centre), *position its nibble there
 * (its rank in that cube); child: leaf q of centre's cube. Integer IDs hold
 * the nibbles, the top cube's highest ("0011.0101" = 0x35); node_of_id and
 * id_parse ("dddd.dddd", L nibbles) return -1 for no node. path: the nodes
 * after src on the route src -> dst (the network's route, as end nodes),
 * at most max_path(D); returns its length. */
int mpitopo__hhc_nnodes(int D);
int mpitopo__hhc_levels(int D);
int mpitopo__hhc_cube_dim(int D, int j);
int mpitopo__hhc_level(int D, int node);
int mpitopo__hhc_parent(int D, int node, int *position);
int mpitopo__hhc_child(int D, int centre, int q);
int64_t mpitopo__hhc_id(int D, int node);
int mpitopo__hhc_node_of_id(int D, int64_t id);
void mpitopo__hhc_id_string(int D, int node, char *name, size_t size);
int mpitopo__hhc_id_parse(int D, const char *s, int64_t *id);
int mpitopo__hhc_path(int D, int src, int dst, int *nodes);
int mpitopo__hhc_max_path(int D);
/* The pattern "hhc:D" (src/pattern/hhc_pattern.c): the links of the
 * network hhc:D, both ways, weight 1; D in [1, 24] (else MPITOPO_ERR_PARSE). */
int mpitopo__hhc_pattern(int D, mpitopo_pattern_t **pattern);

/* Whether s is a network description (its kind is one of the network
 * kinds: torus, mesh, fattree, ktree, dragonfly, gpc, hhc, fabric) rather
 * than, say, a list of machine levels ("switch:8"). */
int mpitopo__network_is_description(const char *s);

/* The route of src -> dst (valid, distinct or equal) into ch, which has
 * room for net->max_route channels; returns its length. */
int mpitopo__network_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch);

#endif /* MPITOPO_NETWORK_INTERNAL_H */
