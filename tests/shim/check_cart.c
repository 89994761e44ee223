/*
 * Reads what shim_cart_c or shim_cart_f* printed (see cart_c.c) on stdin and
 * checks it against the expectation:
 *   check_cart NAME EXPECT MAP
 *   EXPECT  identity   cart rank c is world rank c
 *           reordered  not the identity, and more grid neighbours share an
 *                      emulated node than under the identity
 *           atleast    as many grid neighbours share a node as under the
 *                      identity (the identity itself passes)
 *   MAP     same       MPI_Cart_map gives every process its cart rank
 *           any        not checked
 * The nodes are those of MPITOPO_EMULATE and MPITOPO_EMULATE_PLACEMENT,
 * computed with the MPI-free core as the library does. Prints one
 * "PASS NAME: ..." or "FAIL NAME: ..." line; exit status 0 on PASS.
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulated_nodes.h"

#define MAXP 4096

static const char *name = "shim";

static int fail(const char *why, const char *detail)
{
    printf("FAIL %s: %s%s\n", name, why, detail ? detail : "");
    return 1;
}

/* Parse "KEY v0 v1 ..." into v; returns the count, -1 for another key. */
static int parse_ints(const char *line, const char *key, int *v, int max)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || (line[k] != ' ' && line[k] != '\n' && line[k] != '\0'))
        return -1;
    int n = 0;
    char *end;
    for (const char *p = line + k; n < max; p = end) {
        long x = strtol(p, &end, 10);
        if (end == p)
            break;
        v[n++] = (int)x;
    }
    return n;
}

/* Directed grid-neighbour pairs (both directions of both dimensions,
 * periodic) whose processes share a node, when cart rank c is world rank
 * world_of_cart[c] (identity when NULL). Row-major ranks, as MPI's. */
static int on_node_pairs(const int dims[2], const int *world_of_cart, const int *node)
{
    int count = 0;
    for (int i = 0; i < dims[0]; i++)
        for (int j = 0; j < dims[1]; j++) {
            int c = i * dims[1] + j;
            int nb[4] = {((i + 1) % dims[0]) * dims[1] + j,
                         ((i - 1 + dims[0]) % dims[0]) * dims[1] + j,
                         i * dims[1] + (j + 1) % dims[1], i * dims[1] + (j - 1 + dims[1]) % dims[1]};
            for (int k = 0; k < 4; k++) {
                int a = world_of_cart ? world_of_cart[c] : c;
                int b = world_of_cart ? world_of_cart[nb[k]] : nb[k];
                count += node[a] == node[b];
            }
        }
    return count;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check_cart NAME identity|reordered|atleast same|any < output\n");
        return 2;
    }
    name = argv[1];
    const char *expect = argv[2], *map = argv[3];
    static int dims[2], woc[MAXP], cmap[MAXP], node[MAXP], seen[MAXP];
    int nd = -1, n = -1, nm = -1, valid = 0;
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        int k;
        if ((k = parse_ints(line, "dims", dims, 2)) >= 0)
            nd = k;
        else if ((k = parse_ints(line, "world_of_cart", woc, MAXP)) >= 0)
            n = k;
        else if ((k = parse_ints(line, "cart_map", cmap, MAXP)) >= 0)
            nm = k;
        else if (strncmp(line, "valid", 5) == 0)
            valid = 1;
        else if (strncmp(line, "FAIL", 4) == 0)
            return fail("the program says: ", line);
    }
    if (!valid || nd != 2 || n < 1 || nm != n)
        return fail("incomplete output (no valid, dims, world_of_cart or cart_map line)", NULL);
    if (dims[0] < 1 || dims[1] < 1 || dims[0] * dims[1] != n)
        return fail("dims do not match the number of processes", NULL);
    for (int c = 0; c < n; c++) {
        if (woc[c] < 0 || woc[c] >= n || seen[woc[c]]++)
            return fail("world_of_cart is not a permutation", NULL);
    }
    if (strcmp(map, "same") == 0)
        for (int c = 0; c < n; c++)
            if (cmap[woc[c]] != c)
                return fail("MPI_Cart_map disagrees with MPI_Cart_create", NULL);
    if (nodes_of_world(n, node, MAXP) != 0)
        return fail("cannot compute the emulated nodes", NULL);

    int identity = 1;
    for (int c = 0; c < n; c++)
        identity = identity && woc[c] == c;
    int got = on_node_pairs(dims, woc, node), base = on_node_pairs(dims, NULL, node);
    char detail[128];
    snprintf(detail, sizeof detail, " (on-node neighbour pairs %d/%d, identity %d/%d)", got,
             4 * n, base, 4 * n);
    if (strcmp(expect, "identity") == 0 && !identity)
        return fail("expected the identity, got a reordering", detail);
    if (strcmp(expect, "reordered") == 0 && (identity || got <= base))
        return fail(identity ? "expected a reordering, got the identity"
                             : "the reordering has no more on-node neighbours",
                    detail);
    if (strcmp(expect, "atleast") == 0 && got < base)
        return fail("fewer on-node neighbours than the identity", detail);
    printf("PASS %s: %s%s\n", name, identity ? "identity" : "reordered", detail);
    return 0;
}
