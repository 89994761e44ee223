/* GPU trees: the tree structure shared with Alg. 5.1, the description
 * syntax, and the handle's lifecycle and queries. */
#include "machine/gpu_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The most GPUs a description may ask for: far above any node, low enough
 * that a typo cannot ask for gigabytes. */
#define GPUS_MAX 65536
#define DEFAULT_GBPS 16.0

int mpitopo__ptree_alloc(mpitopo__ptree_t *t, int nvert, int npe)
{
    memset(t, 0, sizeof *t);
    t->nvert = nvert;
    t->npe = npe;
    t->parent = mpitopo__malloc_array((size_t)nvert, sizeof *t->parent);
    t->depth = mpitopo__malloc_array((size_t)nvert, sizeof *t->depth);
    t->bw = mpitopo__malloc_array((size_t)nvert, sizeof *t->bw);
    t->pe_vertex = mpitopo__malloc_array((size_t)(npe > 0 ? npe : 1), sizeof *t->pe_vertex);
    if (!t->parent || !t->depth || !t->bw || !t->pe_vertex) {
        mpitopo__ptree_free(t);
        return MPITOPO_NOMEM("a PE tree");
    }
    return MPITOPO_SUCCESS;
}

void mpitopo__ptree_free(mpitopo__ptree_t *t)
{
    mpitopo__free(t->parent);
    mpitopo__free(t->depth);
    mpitopo__free(t->bw);
    mpitopo__free(t->pe_vertex);
    memset(t, 0, sizeof *t);
}

int mpitopo__ptree_finish(mpitopo__ptree_t *t)
{
    t->parent[0] = -1;
    t->depth[0] = 0;
    for (int v = 1; v < t->nvert; v++) {
        if (t->parent[v] < 0 || t->parent[v] >= v)
            return MPITOPO_FAIL(MPITOPO_ERR_INTERNAL, "vertex %d has parent %d", v, t->parent[v]);
        t->depth[v] = t->depth[t->parent[v]] + 1;
    }
    for (int i = 0; i < t->npe; i++) {
        int v = t->pe_vertex[i];
        if (v <= 0 || v >= t->nvert)
            return MPITOPO_FAIL(MPITOPO_ERR_INTERNAL, "PE %d on vertex %d", i, v);
    }
    return MPITOPO_SUCCESS;
}

static void free_names(char **vname, int n)
{
    if (!vname)
        return;
    for (int v = 0; v < n; v++)
        mpitopo__free(vname[v]);
    mpitopo__free(vname);
}

int mpitopo__gpus_new(mpitopo__ptree_t *tree, char **vname, const char *desc,
                      mpitopo_gpus_t **gpus)
{
    mpitopo_gpus_t *g = mpitopo__calloc(1, sizeof *g);
    char *d = desc ? mpitopo__strdup(desc) : NULL;
    if (!g || (desc && !d)) {
        mpitopo__free(g);
        mpitopo__free(d);
        free_names(vname, tree->nvert);
        mpitopo__ptree_free(tree);
        return MPITOPO_NOMEM("a GPU tree");
    }
    g->tree = *tree;
    g->vname = vname;
    g->desc = d;
    memset(tree, 0, sizeof *tree);
    *gpus = g;
    return MPITOPO_SUCCESS;
}

void mpitopo_gpus_destroy(mpitopo_gpus_t **gpus)
{
    if (!gpus || !*gpus)
        return;
    free_names((*gpus)->vname, (*gpus)->tree.nvert);
    mpitopo__ptree_free(&(*gpus)->tree);
    mpitopo__free((*gpus)->desc);
    mpitopo__free(*gpus);
    *gpus = NULL;
}

int mpitopo_gpus_count(const mpitopo_gpus_t *gpus, int *gpus_per_node)
{
    if (!gpus || !gpus_per_node)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", gpus ? "gpus_per_node" : "gpus");
    *gpus_per_node = gpus->tree.npe;
    return MPITOPO_SUCCESS;
}

/* ---- description strings ------------------------------------------------ */

typedef struct level {
    char name[MPITOPO_MAX_NAME];
    long long fanout;
    double gbps;
} level_t;

#define FAIL_DESC(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_gpus_from_string", __VA_ARGS__)

static int is_sep(char c)
{
    return c == ',' || isspace((unsigned char)c);
}

/* Parses one "NAME:FANOUT[@GBPS]" token of length len at column col. */
static int parse_level(const char *s, size_t len, int col, level_t *lv)
{
    size_t i = 0;
    while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-'))
        i++;
    if (i == 0 || !isalpha((unsigned char)s[0]) || i >= MPITOPO_MAX_NAME || i == len ||
        s[i] != ':')
        return FAIL_DESC(MPITOPO_ERR_PARSE,
                         "level \"%.*s\" (column %d) is not NAME:FANOUT[@GBPS] with a name of"
                         " 1-31 letters, digits, '_' or '-' starting with a letter",
                         (int)len, s, col);
    memcpy(lv->name, s, i);
    lv->name[i] = '\0';
    size_t f0 = ++i;
    while (i < len && s[i] != '@')
        i++;
    if (mpitopo__parse_long(s + f0, i - f0, 1, GPUS_MAX, &lv->fanout) != MPITOPO_SUCCESS)
        return FAIL_DESC(MPITOPO_ERR_PARSE,
                         "level \"%.*s\" (column %d): fan-out \"%.*s\" is not an integer in"
                         " [1, %d]",
                         (int)len, s, col, (int)(i - f0), s + f0, GPUS_MAX);
    lv->gbps = DEFAULT_GBPS;
    if (i < len) {
        i++;
        if (mpitopo__parse_double(s + i, len - i, &lv->gbps) != MPITOPO_SUCCESS ||
            !(lv->gbps > 0) || !isfinite(lv->gbps))
            return FAIL_DESC(MPITOPO_ERR_PARSE,
                             "level \"%.*s\" (column %d): bandwidth \"%.*s\" is not a positive"
                             " number of GB/s",
                             (int)len, s, col, (int)(len - i), s + i);
    }
    mpitopo__clear_error();
    return MPITOPO_SUCCESS;
}

static int parse_levels(const char *desc, level_t *lv, int *nlv)
{
    int n = 0;
    const char *p = desc;
    for (;;) {
        while (*p && is_sep(*p))
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && !is_sep(*e))
            e++;
        if (n == MPITOPO_MAX_LEVELS)
            return FAIL_DESC(MPITOPO_ERR_PARSE, "\"%s\": more than %d levels", desc,
                             MPITOPO_MAX_LEVELS);
        int rc = parse_level(p, (size_t)(e - p), (int)(p - desc) + 1, &lv[n]);
        if (rc)
            return rc;
        for (int k = 0; k < n; k++)
            if (strcmp(lv[k].name, lv[n].name) == 0)
                return FAIL_DESC(MPITOPO_ERR_PARSE, "\"%s\": level name \"%s\" appears twice",
                                 desc, lv[n].name);
        n++;
        p = e;
    }
    if (n == 0)
        return FAIL_DESC(MPITOPO_ERR_PARSE, "\"%s\" has no level (expected NAME:FANOUT@GBPS,...)",
                         desc);
    *nlv = n;
    return MPITOPO_SUCCESS;
}

int mpitopo_gpus_from_string(const char *desc, mpitopo_gpus_t **gpus)
{
    if (gpus)
        *gpus = NULL;
    if (!desc || !gpus)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", desc ? "gpus" : "desc");
    level_t lv[MPITOPO_MAX_LEVELS];
    int nlv = 0;
    int rc = parse_levels(desc, lv, &nlv);
    if (rc)
        return rc;
    long long width = 1, nvert = 1;
    for (int k = 0; k < nlv; k++) {
        width *= lv[k].fanout;
        if (width > GPUS_MAX)
            return FAIL_DESC(MPITOPO_ERR_RANGE, "\"%s\" asks for more than %d GPUs", desc,
                             GPUS_MAX);
        nvert += width;
    }
    mpitopo__ptree_t t;
    rc = mpitopo__ptree_alloc(&t, (int)nvert, (int)width);
    if (rc)
        return rc;
    char **vname = mpitopo__calloc((size_t)nvert, sizeof *vname);
    if (!vname) {
        mpitopo__ptree_free(&t);
        return MPITOPO_NOMEM("GPU tree names");
    }
    /* Breadth-first: the vertices of level k follow those of level k-1, the
     * children of one vertex are consecutive, so the last level's vertices
     * are the GPUs in tree order. */
    int v = 1, first_prev = 0, nprev = 1;
    vname[0] = mpitopo__strdup("node");
    rc = vname[0] ? MPITOPO_SUCCESS : MPITOPO_NOMEM("GPU tree names");
    for (int k = 0; k < nlv && !rc; k++) {
        int first = v;
        for (int u = 0; u < nprev && !rc; u++)
            for (long long c = 0; c < lv[k].fanout && !rc; c++, v++) {
                t.parent[v] = first_prev + u;
                t.bw[v] = lv[k].gbps;
                vname[v] = mpitopo__strdup(lv[k].name);
                if (!vname[v])
                    rc = MPITOPO_NOMEM("GPU tree names");
            }
        first_prev = first;
        nprev = v - first;
    }
    if (!rc) {
        for (int i = 0; i < t.npe; i++)
            t.pe_vertex[i] = first_prev + i;
        t.bw[0] = 0;
        rc = mpitopo__ptree_finish(&t);
    }
    if (rc) {
        free_names(vname, t.nvert);
        mpitopo__ptree_free(&t);
        return rc;
    }
    /* The normalised description, every bandwidth explicit. */
    char norm[MPITOPO_MAX_LEVELS * (MPITOPO_MAX_NAME + 48)];
    size_t off = 0;
    for (int k = 0; k < nlv; k++)
        off += (size_t)snprintf(norm + off, sizeof norm - off, "%s%s:%lld@%g", k ? "," : "",
                                lv[k].name, lv[k].fanout, lv[k].gbps);
    return mpitopo__gpus_new(&t, vname, norm, gpus);
}

/* ---- description of a tree ---------------------------------------------- */

typedef struct outbuf {
    char *buf;
    size_t size, off;
} outbuf_t;

static void put(outbuf_t *o, const char *fmt, ...) MPITOPO_PRINTF(2, 3);
static void put(outbuf_t *o, const char *fmt, ...)
{
    if (o->off + 1 >= o->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->off, o->size - o->off, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->off = o->off + (size_t)n < o->size ? o->off + (size_t)n : o->size - 1;
}

/* Children of v are the vertices w > v with parent[w] == v, in order. */
static void describe_vertex(const mpitopo_gpus_t *g, int v, const int *pe_of_vertex, outbuf_t *o)
{
    const mpitopo__ptree_t *t = &g->tree;
    if (pe_of_vertex[v] >= 0)
        put(o, "%s%d", g->vname[v], pe_of_vertex[v]);
    else
        put(o, "%s", g->vname[v]);
    if (v > 0)
        put(o, "@%g", t->bw[v]);
    int first = 1;
    for (int w = v + 1; w < t->nvert; w++) {
        if (t->parent[w] != v)
            continue;
        put(o, first ? "[" : " ");
        first = 0;
        describe_vertex(g, w, pe_of_vertex, o);
    }
    if (!first)
        put(o, "]");
}

int mpitopo_gpus_describe(const mpitopo_gpus_t *gpus, char *buf, size_t size)
{
    if (!gpus || !buf || size == 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s", !gpus ? "gpus is NULL" : !buf ? "buf is NULL"
                                                                               : "size is 0");
    buf[0] = '\0';
    if (gpus->desc) {
        snprintf(buf, size, "%s", gpus->desc);
        return MPITOPO_SUCCESS;
    }
    int *pe_of_vertex = mpitopo__malloc_array((size_t)gpus->tree.nvert, sizeof *pe_of_vertex);
    if (!pe_of_vertex)
        return MPITOPO_NOMEM("a GPU tree description");
    for (int v = 0; v < gpus->tree.nvert; v++)
        pe_of_vertex[v] = -1;
    for (int i = 0; i < gpus->tree.npe; i++)
        pe_of_vertex[gpus->tree.pe_vertex[i]] = i;
    outbuf_t o = {buf, size, 0};
    describe_vertex(gpus, 0, pe_of_vertex, &o);
    mpitopo__free(pe_of_vertex);
    return MPITOPO_SUCCESS;
}
