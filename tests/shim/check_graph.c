/*
 * Reads what shim_graph_c or shim_graph_f* printed (see graph_c.c) on stdin
 * and checks it:
 *   check_graph NAME EXPECT MAP
 *   EXPECT  identity   every communicator keeps the world order
 *           reordered  every communicator is reordered so that every ring
 *                      partner of every process shares its emulated node
 *                      (the rings of 4 fit the nodes of 4; under round-robin
 *                      placement the world order has no partner on-node)
 *   MAP     same       MPI_Graph_map gives every process its rank in the
 *                      MPI_Graph_create communicator
 *           any        not checked
 * Always: the new ranks are a permutation; the process with new rank v has
 * the neighbours of ring vertex v (in MPI's numbering, the graph is on the
 * new ranks), with their weights, in the given order (as multisets for
 * MPI_Dist_graph_create, whose order MPI leaves open); the neighbour
 * allgather delivered the world rank of every in-neighbour, in order.
 * Prints one "PASS NAME: ..." or "FAIL NAME: ..." line; exit status 0 on
 * PASS.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulated_nodes.h"

#define MAXP 1024
#define MAXD 8
#define RING 4

/* What graph_c.c builds, by kind. */
static const struct kind {
    const char *name;
    int weighted; /* weights 100 along the ring, 10 against it */
    int ordered;  /* neighbour order is the caller's */
    int graph;    /* MPI_Graph_create: neighbours next, prev both ways */
} kinds[] = {
    {"adjacent", 1, 1, 0},
    {"adjacent_unweighted", 0, 1, 0},
    {"dist", 1, 0, 0},
    {"dist_unweighted", 0, 0, 0},
    {"graph", 0, 1, 1},
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

typedef struct list {
    int n, v[MAXD];
} list_t;

typedef struct proc {
    int seen, new_rank;
    list_t in, inw, out, outw, got;
} proc_t;

static const char *name = "shim";
static proc_t procs[NKINDS][MAXP];
static int listed[NKINDS], nprocs[NKINDS], graph_map[MAXP], nmap = -1, node[MAXP];

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 1;
}

static int next_of(int v) { return v - v % RING + (v % RING + 1) % RING; }
static int prev_of(int v) { return v - v % RING + (v % RING + RING - 1) % RING; }

static int kind_index(const char *s)
{
    for (int k = 0; k < NKINDS; k++)
        if (strcmp(kinds[k].name, s) == 0)
            return k;
    return -1;
}

/* Read "KEY N v1 .. vN" from the tokens; 0 if malformed. */
static int read_list(const char *key, list_t *l)
{
    char *t = strtok(NULL, " \n");
    if (!t || strcmp(t, key) != 0 || !(t = strtok(NULL, " \n")))
        return 0;
    l->n = atoi(t);
    if (l->n < 0 || l->n > MAXD)
        return 0;
    for (int i = 0; i < l->n; i++) {
        if (!(t = strtok(NULL, " \n")))
            return 0;
        l->v[i] = atoi(t);
    }
    return 1;
}

/* "proc KIND W NEW in .. inw .. out .. outw .. got .."; 0 if malformed. */
static int read_proc(char *line)
{
    strtok(line, " \n");
    char *kind = strtok(NULL, " \n"), *w = strtok(NULL, " \n"), *nr = strtok(NULL, " \n");
    int k = kind ? kind_index(kind) : -1, p = w ? atoi(w) : -1;
    if (k < 0 || !nr || p < 0 || p >= MAXP || procs[k][p].seen)
        return 0;
    proc_t *q = &procs[k][p];
    q->seen = 1;
    q->new_rank = atoi(nr);
    nprocs[k]++;
    return read_list("in", &q->in) && read_list("inw", &q->inw) && read_list("out", &q->out) &&
           read_list("outw", &q->outw) && read_list("got", &q->got);
}

static int read_output(int *valid)
{
    static char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "FAIL", 4) == 0)
            return fail("the program says: %s", line);
        if (strncmp(line, "valid", 5) == 0)
            *valid = 1;
        else if (strncmp(line, "proc ", 5) == 0 && !read_proc(line))
            return fail("malformed or repeated line: %s", line);
        else if (strncmp(line, "kinds ", 6) == 0) {
            strtok(line, " \n");
            for (char *t; (t = strtok(NULL, " \n"));) {
                if (kind_index(t) < 0)
                    return fail("unknown kind %s", t);
                listed[kind_index(t)] = 1;
            }
        } else if (strncmp(line, "graph_map", 9) == 0) {
            strtok(line, " \n");
            nmap = 0;
            for (char *t; nmap < MAXP && (t = strtok(NULL, " \n"));)
                graph_map[nmap++] = atoi(t);
        }
    }
    return 0;
}

/* The neighbours of vertex v as lists of vertices and weights. */
static void expected(const struct kind *k, int v, list_t *in, list_t *inw, list_t *out,
                     list_t *outw)
{
    *in = (list_t){2, {prev_of(v), next_of(v)}};
    *out = (list_t){2, {next_of(v), prev_of(v)}};
    if (k->graph)
        *in = *out;
    *inw = *outw = k->weighted ? (list_t){2, {100, 10}} : (list_t){0, {0}};
}

/* Sort the (neighbour, weight) pairs of a list, for a multiset comparison. */
static void sort_pairs(list_t *l, list_t *w)
{
    for (int i = 1; i < l->n; i++)
        for (int j = i; j > 0; j--) {
            int wj = w->n ? w->v[j] : 0, wp = w->n ? w->v[j - 1] : 0;
            if (l->v[j - 1] < l->v[j] || (l->v[j - 1] == l->v[j] && wp <= wj))
                break;
            int t = l->v[j];
            l->v[j] = l->v[j - 1];
            l->v[j - 1] = t;
            if (w->n) {
                w->v[j] = wp;
                w->v[j - 1] = wj;
            }
        }
}

static int same_list(const list_t *a, const list_t *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->v[i] != b->v[i])
            return 0;
    return 1;
}

/* Compare one direction of one process: got (world ranks, weights) against
 * the expected vertices mapped to world ranks. */
static int same_direction(const struct kind *k, list_t got, list_t gotw, list_t want,
                          list_t wantw, const int *world_of_new)
{
    for (int i = 0; i < want.n; i++)
        want.v[i] = world_of_new[want.v[i]];
    if (!k->ordered) {
        sort_pairs(&got, &gotw);
        sort_pairs(&want, &wantw);
    }
    return same_list(&got, &want) && same_list(&gotw, &wantw);
}

/* Checks of one kind; counts the neighbours that share a node. */
static int check_kind(int k, int n, int *on_node, int *total, int *identity)
{
    const struct kind *kd = &kinds[k];
    static int world_of_new[MAXP];
    for (int v = 0; v < n; v++)
        world_of_new[v] = -1;
    for (int p = 0; p < n; p++) {
        int r = procs[k][p].new_rank;
        if (r < 0 || r >= n || world_of_new[r] >= 0)
            return fail("%s: the new ranks are not a permutation (world rank %d)", kd->name, p);
        world_of_new[r] = p;
        *identity = *identity && r == p;
    }
    for (int p = 0; p < n; p++) {
        const proc_t *q = &procs[k][p];
        list_t in, inw, out, outw;
        expected(kd, q->new_rank, &in, &inw, &out, &outw);
        if (!same_direction(kd, q->in, q->inw, in, inw, world_of_new))
            return fail("%s: world rank %d: in-neighbours or weights differ from the graph",
                        kd->name, p);
        if (!same_direction(kd, q->out, q->outw, out, outw, world_of_new))
            return fail("%s: world rank %d: out-neighbours or weights differ from the graph",
                        kd->name, p);
        if (!same_list(&q->got, &q->in))
            return fail("%s: world rank %d: the neighbour allgather delivered wrong data",
                        kd->name, p);
        for (int i = 0; i < q->in.n; i++)
            *on_node += node[q->in.v[i]] == node[p];
        for (int i = 0; i < q->out.n; i++)
            *on_node += node[q->out.v[i]] == node[p];
        *total += q->in.n + q->out.n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check_graph NAME identity|reordered same|any < output\n");
        return 2;
    }
    name = argv[1];
    const char *expect = argv[2], *map = argv[3];
    int valid = 0, n = -1, nlisted = 0;
    if (read_output(&valid))
        return 1;
    for (int k = 0; k < NKINDS; k++) {
        if (!listed[k])
            continue;
        nlisted++;
        if (n < 0)
            n = nprocs[k];
        if (nprocs[k] != n || n < RING || n % RING != 0)
            return fail("%s: %d process lines", kinds[k].name, nprocs[k]);
    }
    if (!valid || nlisted == 0 || nmap != n)
        return fail("incomplete output (no valid, kinds or graph_map line)");
    if (nodes_of_world(n, node, MAXP) != 0)
        return fail("cannot compute the emulated nodes");

    int identity = 1, on_node = 0, total = 0;
    for (int k = 0; k < NKINDS; k++) {
        int kid = 1;
        if (listed[k] && check_kind(k, n, &on_node, &total, &kid))
            return 1;
        identity = identity && kid;
        if (listed[k] && strcmp(expect, "reordered") == 0 && kid)
            return fail("%s: expected a reordering, got the world order", kinds[k].name);
        if (listed[k] && strcmp(expect, "identity") == 0 && !kid)
            return fail("%s: expected the world order, got a reordering", kinds[k].name);
    }
    if (strcmp(expect, "reordered") == 0 && on_node != total)
        return fail("only %d of %d neighbours share the node of their process", on_node, total);
    if (strcmp(map, "same") == 0 && listed[kind_index("graph")])
        for (int p = 0; p < n; p++)
            if (graph_map[p] != procs[kind_index("graph")][p].new_rank)
                return fail("MPI_Graph_map disagrees with MPI_Graph_create at world rank %d", p);
    printf("PASS %s: %d kinds, %s, on-node neighbours %d/%d\n", name, nlisted,
           identity ? "world order" : "reordered", on_node, total);
    return 0;
}
