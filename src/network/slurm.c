/*
 * Slurm's topology (issue 32): topology.conf of the topology/tree plugin
 *
 *   SwitchName=s0 Switches=s[1-3] LinkSpeed=100
 *   SwitchName=s1 Nodes=node[01-16,20]
 *
 * and of topology/block
 *
 *   BlockName=b1 Nodes=node[01-04]
 *   BlockSizes=4,16
 *
 * read into switch (or block) paths per host, and SLURM_TOPOLOGY_ADDR.
 * Keys are case-insensitive as in Slurm, '#' starts a comment, a line
 * ending in '\' continues on the next. Anything Slurm would refuse or that
 * is not a tree (an unknown key, a node under two switches, a switch named
 * as the child of two switches or of none that exists, a loop) is an error
 * naming the file and line.
 *
 * What the files cannot say is assumed: every link of a switch runs at
 * its LinkSpeed (equal links when none is given), and the blocks of
 * topology/block aggregate in file order, BlockSizes' first value being
 * the base block's size in nodes (default: the largest block).
 */
#include "network/slurm.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SL_MAX_FILE ((size_t)64 << 20)
#define SL_MAX_HOSTS (1 << 20)
#define SL_MAX_SIZES MPITOPO__SLURM_MAX_DEPTH

typedef struct sw {
    int name;     /* offset in pool */
    long line;
    double speed; /* LinkSpeed, 0 when not given */
    int parent;   /* -1 for a top switch */
    int depth;    /* 0 at the top */
    int children; /* offset in pool of Switches=, -1 without */
} sw_t;

typedef struct host {
    int name; /* offset in pool */
    int leaf; /* switch or block */
    long line;
} host_t;

struct mpitopo__slurm {
    const char *file, *func; /* for messages, while reading */
    int block;               /* topology/block */
    sw_t *sw;                /* switches, or blocks */
    int nsw, capsw;
    host_t *host;
    int nhosts, caphosts;
    int *by_name; /* hosts sorted by name */
    char *pool;
    size_t npool, cappool;
    long long sizes[SL_MAX_SIZES]; /* BlockSizes */
    int nsizes;
    long sizes_line;
    int maxdepth;
    uint64_t digest;
};

static int bad(const mpitopo__slurm_t *t, long line, const char *fmt, ...) MPITOPO_PRINTF(3, 4);
static int bad(const mpitopo__slurm_t *t, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpitopo__error_line(MPITOPO_ERR_FORMAT, t->func, t->file, line, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------ host lists */

typedef struct range {
    long long lo, hi;
    int width; /* zero padding: the digits of lo when it starts with 0 */
} range_t;

#define HL_MAX_NAME 256

/* Expand s[0..len) (one item: no top-level comma) into fn, name so far in
 * buf[0..at). */
static int expand_item(const char *s, size_t len, char *buf, size_t at, mpitopo__slurm_host_fn fn,
                       void *ctx, long *count, char *why, size_t whysize)
{
    size_t open = 0;
    while (open < len && s[open] != '[')
        open++;
    if (at + open >= HL_MAX_NAME)
        return snprintf(why, whysize, "a host name longer than %d characters", HL_MAX_NAME - 1), -1;
    memcpy(buf + at, s, open);
    at += open;
    if (open == len) {
        buf[at] = '\0';
        if (at == 0)
            return snprintf(why, whysize, "an empty host name"), -1;
        if (++*count > SL_MAX_HOSTS)
            return snprintf(why, whysize, "more than %d hosts", SL_MAX_HOSTS), -1;
        return fn(ctx, buf) ? 1 : 0;
    }
    size_t close = open + 1;
    while (close < len && s[close] != ']' && s[close] != '[')
        close++;
    if (close == len || s[close] != ']')
        return snprintf(why, whysize, "'[' at column %zu without its ']'", open + 1), -1;
    /* Each range of the brackets: lo or lo-hi, separated by commas. */
    for (size_t p = open + 1; p < close;) {
        size_t q = p;
        while (q < close && s[q] != ',')
            q++;
        size_t dash = p;
        while (dash < q && s[dash] != '-')
            dash++;
        range_t r;
        long long lo, hi = 0;
        if (mpitopo__parse_long(s + p, dash - p, 0, 999999999, &lo) != 0 || s[p] == '+' ||
            s[p] == '-' ||
            (dash < q && (mpitopo__parse_long(s + dash + 1, q - dash - 1, 0, 999999999, &hi) != 0 ||
                          s[dash + 1] == '+' || s[dash + 1] == '-')))
            return snprintf(why, whysize, "'%.*s' is not a number or a range N-M", (int)(q - p),
                            s + p),
                   -1;
        r.lo = lo;
        r.hi = dash < q ? hi : lo;
        r.width = s[p] == '0' ? (int)(dash - p) : 0;
        if (r.hi < r.lo)
            return snprintf(why, whysize, "range '%.*s' goes down", (int)(q - p), s + p), -1;
        for (long long v = r.lo; v <= r.hi; v++) {
            if (*count >= SL_MAX_HOSTS)
                return snprintf(why, whysize, "more than %d hosts", SL_MAX_HOSTS), -1;
            int n = snprintf(buf + at, HL_MAX_NAME - at, "%0*lld", r.width, v);
            if (n < 0 || at + (size_t)n >= HL_MAX_NAME)
                return snprintf(why, whysize, "a host name longer than %d characters",
                                HL_MAX_NAME - 1),
                       -1;
            int rc = expand_item(s + close + 1, len - close - 1, buf, at + (size_t)n, fn, ctx,
                                 count, why, whysize);
            if (rc)
                return rc;
        }
        p = q + 1;
        if (q + 1 == close)
            return snprintf(why, whysize, "an empty range before ']'"), -1;
    }
    if (close == open + 1)
        return snprintf(why, whysize, "empty brackets"), -1;
    return 0;
}

int mpitopo__slurm_hostlist(const char *list, size_t len, mpitopo__slurm_host_fn fn, void *ctx,
                            char *why, size_t whysize)
{
    char buf[HL_MAX_NAME];
    long count = 0;
    if (len == 0)
        return snprintf(why, whysize, "an empty host list"), -1;
    for (size_t p = 0; p <= len;) {
        size_t q = p;
        int depth = 0;
        while (q < len && (depth || list[q] != ',')) {
            if (list[q] == '[')
                depth++;
            else if (list[q] == ']' && depth-- == 0)
                return snprintf(why, whysize, "']' at column %zu without its '['", q + 1), -1;
            if (list[q] == ' ' || list[q] == '\t' || list[q] == '\0')
                return snprintf(why, whysize, "a blank at column %zu", q + 1), -1;
            q++;
        }
        int rc = expand_item(list + p, q - p, buf, 0, fn, ctx, &count, why, whysize);
        if (rc)
            return rc;
        p = q + 1;
    }
    return 0;
}

/* ------------------------------------------------------------ the file */

/* s[0..len) into the pool; its offset, or -1 when out of memory. */
static int pool_add(mpitopo__slurm_t *t, const char *s, size_t len)
{
    if (t->npool + len + 1 > (size_t)INT_MAX)
        return -1;
    if (t->npool + len + 1 > t->cappool) {
        size_t cap = t->cappool ? t->cappool : 1024;
        while (cap < t->npool + len + 1)
            cap *= 2;
        char *p = mpitopo__realloc(t->pool, cap);
        if (!p)
            return -1;
        t->pool = p;
        t->cappool = cap;
    }
    int at = (int)t->npool;
    memcpy(t->pool + at, s, len);
    t->pool[at + (int)len] = '\0';
    t->npool += len + 1;
    return at;
}

static int add_switch(mpitopo__slurm_t *t, const char *name, size_t len, long line)
{
    if (t->nsw == t->capsw) {
        int cap = t->capsw ? 2 * t->capsw : 64;
        sw_t *p = cap > SL_MAX_HOSTS ? NULL : mpitopo__realloc_array(t->sw, (size_t)cap, sizeof *p);
        if (!p)
            return cap > SL_MAX_HOSTS ? bad(t, line, "more than %d switches or blocks", SL_MAX_HOSTS)
                                      : MPITOPO_NOMEM("the switches");
        t->sw = p;
        t->capsw = cap;
    }
    int off = pool_add(t, name, len);
    if (off < 0)
        return MPITOPO_NOMEM("the switch names");
    t->sw[t->nsw++] = (sw_t){off, line, 0.0, -1, -1, -1};
    return MPITOPO_SUCCESS;
}

typedef struct add_ctx {
    mpitopo__slurm_t *t;
    long line;
    int rc;
} add_ctx_t;

static int add_host(void *c, const char *name)
{
    add_ctx_t *a = c;
    mpitopo__slurm_t *t = a->t;
    if (t->nhosts == SL_MAX_HOSTS)
        return a->rc = bad(t, a->line, "more than %d nodes", SL_MAX_HOSTS), 1;
    if (t->nhosts == t->caphosts) {
        int cap = t->caphosts ? 2 * t->caphosts : 256;
        host_t *p = mpitopo__realloc_array(t->host, (size_t)cap, sizeof *p);
        if (!p)
            return a->rc = MPITOPO_NOMEM("the nodes"), 1;
        t->host = p;
        t->caphosts = cap;
    }
    int off = pool_add(t, name, strlen(name));
    if (off < 0)
        return a->rc = MPITOPO_NOMEM("the node names"), 1;
    t->host[t->nhosts++] = (host_t){off, t->nsw - 1, a->line};
    return 0;
}

static int add_nodes(mpitopo__slurm_t *t, const char *v, long line)
{
    add_ctx_t a = {t, line, MPITOPO_SUCCESS};
    char why[200];
    int rc = mpitopo__slurm_hostlist(v, strlen(v), add_host, &a, why, sizeof why);
    if (rc < 0)
        return bad(t, line, "Nodes=%.200s: %s", v, why);
    return rc ? a.rc : MPITOPO_SUCCESS;
}

/* One KEY=VALUE of a line; which keys a line may hold depends on its first. */
enum { K_SWITCHNAME, K_SWITCHES, K_NODES, K_LINKSPEED, K_BLOCKNAME, K_BLOCKSIZES, K_COUNT };
static const char *const keys[K_COUNT] = {"SwitchName", "Switches",  "Nodes",
                                          "LinkSpeed",  "BlockName", "BlockSizes"};

static int parse_sizes(mpitopo__slurm_t *t, const char *v, long line)
{
    if (t->nsizes)
        return bad(t, line, "BlockSizes given twice (first on line %ld)", t->sizes_line);
    t->sizes_line = line;
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        long long s;
        if (mpitopo__parse_long(p, n, 1, SL_MAX_HOSTS, &s) != 0)
            return bad(t, line, "BlockSizes=%.200s: '%.*s' is not a size in [1, %d]", v, (int)n,
                       p, SL_MAX_HOSTS);
        if (t->nsizes == SL_MAX_SIZES)
            return bad(t, line, "BlockSizes=%.200s: more than %d sizes", v, SL_MAX_SIZES);
        if (t->nsizes && (s <= t->sizes[t->nsizes - 1] || s % t->sizes[0]))
            return bad(t, line,
                       "BlockSizes=%.200s: %lld is not a larger multiple of the base size %lld",
                       v, s, t->sizes[0]);
        t->sizes[t->nsizes++] = s;
        if (!p[n])
            return MPITOPO_SUCCESS;
        p += n + 1;
    }
}

/* One logical line (comments and continuations gone), tokens separated by
 * blanks. */
static int parse_line(mpitopo__slurm_t *t, char *s, long line)
{
    const char *val[K_COUNT] = {0};
    int first = -1;
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t\r\v\f", &save); tok;
         tok = strtok_r(NULL, " \t\r\v\f", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return bad(t, line, "'%.100s': expected KEY=VALUE", tok);
        *eq = '\0';
        int k = 0;
        while (k < K_COUNT && strcasecmp(tok, keys[k]))
            k++;
        if (k == K_COUNT)
            return bad(t, line,
                       "unknown key '%.100s' (topology.conf takes SwitchName, Switches, Nodes, "
                       "LinkSpeed, BlockName and BlockSizes)",
                       tok);
        if (first < 0)
            first = k;
        if (val[k])
            return bad(t, line, "%s given twice", keys[k]);
        if (!eq[1])
            return bad(t, line, "%s has no value", keys[k]);
        val[k] = eq + 1;
    }
    if (first < 0)
        return MPITOPO_SUCCESS;
    if (first != K_SWITCHNAME && first != K_BLOCKNAME && first != K_BLOCKSIZES)
        return bad(t, line, "a line starts with SwitchName=, BlockName= or BlockSizes=, not %s=",
                   keys[first]);
    int block = first != K_SWITCHNAME;
    if (t->nsw + t->nsizes > 0 && block != t->block)
        return bad(t, line, "%s= in a file of %s: one file is topology/tree or topology/block",
                   keys[first], t->block ? "blocks" : "switches");
    t->block = block;
    static const int allowed[3][K_COUNT] = {
        {1, 1, 1, 1, 0, 0}, /* SwitchName */
        {0, 0, 1, 0, 1, 0}, /* BlockName */
        {0, 0, 0, 0, 0, 1}, /* BlockSizes */
    };
    int kind = first == K_SWITCHNAME ? 0 : first == K_BLOCKNAME ? 1 : 2;
    for (int k = 0; k < K_COUNT; k++)
        if (val[k] && !allowed[kind][k])
            return bad(t, line, "%s= does not go with %s=", keys[k], keys[first]);
    if (kind == 2)
        return parse_sizes(t, val[K_BLOCKSIZES], line);
    const char *name = val[first];
    if (strpbrk(name, ",[]"))
        return bad(t, line, "%s=%.200s: one name, not a list", keys[first], name);
    int rc = add_switch(t, name, strlen(name), line);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    sw_t *w = &t->sw[t->nsw - 1];
    if (val[K_LINKSPEED]) {
        double v;
        if (mpitopo__parse_double(val[K_LINKSPEED], strlen(val[K_LINKSPEED]), &v) != 0 ||
            !(v > 0) || v > 1e15)
            return bad(t, line, "LinkSpeed=%.100s: expected a positive number", val[K_LINKSPEED]);
        w->speed = v;
    }
    if (val[K_SWITCHES] && (w->children = pool_add(t, val[K_SWITCHES],
                                                   strlen(val[K_SWITCHES]))) < 0)
        return MPITOPO_NOMEM("the switch lists");
    if (block && !val[K_NODES])
        return bad(t, line, "BlockName=%.200s has no Nodes=", name);
    return val[K_NODES] ? add_nodes(t, val[K_NODES], line) : MPITOPO_SUCCESS;
}

/* Read the text line by line: '#' comments, '\' continuations. */
static int parse_text(mpitopo__slurm_t *t, const char *text, size_t len)
{
    char *buf = mpitopo__malloc(len + 1);
    if (!buf)
        return MPITOPO_NOMEM("the file's lines");
    int rc = MPITOPO_SUCCESS;
    size_t n = 0;
    long line = 1, start = 1;
    int comment = 0;
    for (size_t i = 0; i <= len && rc == MPITOPO_SUCCESS; i++) {
        char c = i < len ? text[i] : '\n';
        if (c == '\0') {
            rc = bad(t, line, "NUL byte in a line");
        } else if (c == '\n') {
            /* A '\' ending the line (before any comment) joins the next. */
            int joined = !comment && n > 0 && buf[n - 1] == '\\' && i < len;
            if (joined) {
                buf[n - 1] = ' ';
            } else {
                buf[n] = '\0';
                rc = parse_line(t, buf, start);
                n = 0;
                start = line + 1;
            }
            comment = 0;
            line++;
        } else if (c == '#') {
            comment = 1;
        } else if (!comment) {
            buf[n++] = c;
        }
    }
    mpitopo__free(buf);
    return rc;
}

static const mpitopo__slurm_t *sort_t; /* qsort has no context argument */

static int cmp_sw(const void *a, const void *b)
{
    return strcmp(sort_t->pool + sort_t->sw[*(const int *)a].name,
                  sort_t->pool + sort_t->sw[*(const int *)b].name);
}

static int cmp_host(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(sort_t->pool + sort_t->host[x].name, sort_t->pool + sort_t->host[y].name);
    return c ? c : (x > y) - (x < y);
}

typedef struct child_ctx {
    mpitopo__slurm_t *t;
    const int *sorted; /* switches by name */
    int parent, rc;
} child_ctx_t;

static int add_child(void *c, const char *name)
{
    child_ctx_t *a = c;
    mpitopo__slurm_t *t = a->t;
    int lo = 0, hi = t->nsw - 1, found = -1;
    while (lo <= hi && found < 0) {
        int mid = lo + (hi - lo) / 2, cmp = strcmp(name, t->pool + t->sw[a->sorted[mid]].name);
        if (cmp == 0)
            found = a->sorted[mid];
        else if (cmp < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    sw_t *p = &t->sw[a->parent];
    if (found < 0)
        return a->rc = bad(t, p->line, "switch %.100s names switch %.100s, which no SwitchName= defines",
                           t->pool + p->name, name), 1;
    sw_t *w = &t->sw[found];
    if (found == a->parent)
        return a->rc = bad(t, p->line, "switch %.100s names itself: a loop", name), 1;
    if (w->parent >= 0)
        return a->rc = bad(t, p->line, "switch %.100s is under switch %.100s (line %ld) and %.100s",
                           name, t->pool + t->sw[w->parent].name, t->sw[w->parent].line,
                           t->pool + p->name), 1;
    w->parent = a->parent;
    return 0;
}

/* Parents, depths, loops; duplicate names. */
static int link_switches(mpitopo__slurm_t *t, int *sorted)
{
    for (int i = 0; i < t->nsw; i++)
        sorted[i] = i;
    sort_t = t;
    qsort(sorted, (size_t)t->nsw, sizeof *sorted, cmp_sw);
    for (int i = 1; i < t->nsw; i++)
        if (!strcmp(t->pool + t->sw[sorted[i - 1]].name, t->pool + t->sw[sorted[i]].name)) {
            int a = sorted[i - 1] < sorted[i] ? sorted[i - 1] : sorted[i];
            int b = sorted[i - 1] < sorted[i] ? sorted[i] : sorted[i - 1];
            return bad(t, t->sw[b].line, "%s %.100s is already defined on line %ld",
                       t->block ? "block" : "switch", t->pool + t->sw[b].name, t->sw[a].line);
        }
    for (int i = 0; i < t->nsw; i++) {
        if (t->sw[i].children < 0)
            continue;
        child_ctx_t c = {t, sorted, i, MPITOPO_SUCCESS};
        char why[200];
        const char *list = t->pool + t->sw[i].children;
        int rc = mpitopo__slurm_hostlist(list, strlen(list), add_child, &c, why, sizeof why);
        if (rc < 0)
            return bad(t, t->sw[i].line, "Switches=%.200s: %s", list, why);
        if (rc)
            return c.rc;
    }
    /* Depths: walk up to a switch of known depth (or the top); coming back
     * to the walk's own switches is a loop. depth -2 marks "on this walk". */
    for (int i = 0; i < t->nsw; i++) {
        int s = i, len = 0;
        while (s >= 0 && t->sw[s].depth == -1) {
            t->sw[s].depth = -2;
            sorted[len++] = s;
            s = t->sw[s].parent;
        }
        if (s >= 0 && t->sw[s].depth == -2)
            return bad(t, t->sw[s].line, "switches form a loop through switch %.100s",
                       t->pool + t->sw[s].name);
        int d = s < 0 ? -1 : t->sw[s].depth;
        while (len > 0) {
            d++;
            if (d >= MPITOPO__SLURM_MAX_DEPTH)
                return bad(t, t->sw[sorted[len - 1]].line,
                           "switch %.100s is %d levels deep: at most %d are taken",
                           t->pool + t->sw[sorted[len - 1]].name, d + 1,
                           MPITOPO__SLURM_MAX_DEPTH);
            t->sw[sorted[--len]].depth = d;
        }
    }
    return MPITOPO_SUCCESS;
}

/* Blocks: the base size and the aggregation levels above it. */
static int check_blocks(mpitopo__slurm_t *t)
{
    int *count = mpitopo__calloc((size_t)t->nsw, sizeof *count);
    if (!count)
        return MPITOPO_NOMEM("the blocks");
    int biggest = 0, rc = MPITOPO_SUCCESS;
    for (int h = 0; h < t->nhosts; h++)
        count[t->host[h].leaf]++;
    for (int b = 0; b < t->nsw; b++)
        biggest = count[b] > count[biggest] ? b : biggest;
    if (!t->nsizes)
        t->sizes[t->nsizes++] = count[biggest];
    else if (count[biggest] > t->sizes[0])
        rc = bad(t, t->sw[biggest].line,
                 "block %.100s has %d nodes, more than the base block size %lld (BlockSizes, "
                 "line %ld)",
                 t->pool + t->sw[biggest].name, count[biggest], t->sizes[0], t->sizes_line);
    mpitopo__free(count);
    for (int b = 0; b < t->nsw; b++)
        t->sw[b].depth = t->nsizes - 1;
    return rc;
}

static int finish(mpitopo__slurm_t *t)
{
    if (t->nhosts == 0)
        return bad(t, 1, "no Nodes= anywhere: no node is under a %s", t->block ? "block" : "switch");
    if (t->block && t->nsw == 0)
        return bad(t, t->sizes_line, "BlockSizes= without any BlockName=");
    int n = t->nhosts > t->nsw ? t->nhosts : t->nsw;
    int *sorted = mpitopo__malloc_array((size_t)n, sizeof *sorted);
    if (!sorted)
        return MPITOPO_NOMEM("the sorted names");
    int rc = t->block ? check_blocks(t) : link_switches(t, sorted);
    mpitopo__free(sorted);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (!(t->by_name = mpitopo__malloc_array((size_t)t->nhosts, sizeof *t->by_name)))
        return MPITOPO_NOMEM("the sorted nodes");
    for (int h = 0; h < t->nhosts; h++)
        t->by_name[h] = h;
    sort_t = t;
    qsort(t->by_name, (size_t)t->nhosts, sizeof *t->by_name, cmp_host);
    for (int i = 1; i < t->nhosts; i++) {
        const host_t *a = &t->host[t->by_name[i - 1]], *b = &t->host[t->by_name[i]];
        if (!strcmp(t->pool + a->name, t->pool + b->name))
            return bad(t, b->line, "node %.100s is under %s %.100s (line %ld) and %.100s",
                       t->pool + b->name, t->block ? "block" : "switch",
                       t->pool + t->sw[a->leaf].name, a->line, t->pool + t->sw[b->leaf].name);
    }
    t->maxdepth = 0;
    for (int h = 0; h < t->nhosts; h++)
        if (t->sw[t->host[h].leaf].depth + 1 > t->maxdepth)
            t->maxdepth = t->sw[t->host[h].leaf].depth + 1;
    return MPITOPO_SUCCESS;
}

int mpitopo__slurm_parse(const char *file, const char *text, size_t len, const char *func,
                         mpitopo__slurm_t **out)
{
    *out = NULL;
    mpitopo__slurm_t *t = mpitopo__calloc(1, sizeof *t);
    if (!t)
        return MPITOPO_NOMEM("the Slurm topology");
    t->file = file;
    t->func = func;
    t->digest = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        t->digest = (t->digest ^ (unsigned char)text[i]) * 1099511628211ULL;
    int rc = parse_text(t, text, len);
    if (rc == MPITOPO_SUCCESS)
        rc = finish(t);
    t->file = t->func = NULL;
    if (rc != MPITOPO_SUCCESS)
        mpitopo__slurm_free(&t);
    *out = t;
    return rc;
}

int mpitopo__slurm_read(const char *path, const char *func, mpitopo__slurm_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_IO, func, "cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    int rc = MPITOPO_SUCCESS;
    do {
        if (cap - n < 4096) {
            if (cap > SL_MAX_FILE) {
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func, "%s is larger than %zu bytes", path,
                                     SL_MAX_FILE);
                break;
            }
            char *p = mpitopo__realloc(buf, (cap = cap ? 2 * cap : 16384) + 1);
            if (!p) {
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory reading %s", path);
                break;
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (rc == MPITOPO_SUCCESS && ferror(f))
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_IO, func, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slurm_parse(path, buf, n, func, out);
    mpitopo__free(buf);
    return rc;
}

void mpitopo__slurm_free(mpitopo__slurm_t **t)
{
    if (!t || !*t)
        return;
    mpitopo__free((*t)->sw);
    mpitopo__free((*t)->host);
    mpitopo__free((*t)->by_name);
    mpitopo__free((*t)->pool);
    mpitopo__free(*t);
    *t = NULL;
}

const char *mpitopo__slurm_kind(const mpitopo__slurm_t *t)
{
    return t->block ? "block" : "tree";
}

int mpitopo__slurm_nhosts(const mpitopo__slurm_t *t)
{
    return t->nhosts;
}

const char *mpitopo__slurm_host(const mpitopo__slurm_t *t, int h)
{
    return t->pool + t->host[h].name;
}

uint64_t mpitopo__slurm_digest(const mpitopo__slurm_t *t)
{
    return t->digest;
}

/* First host (in name order) whose name compares as s[0..len) with cmp. */
static int lower_bound(const mpitopo__slurm_t *t, const char *s, size_t len)
{
    int lo = 0, hi = t->nhosts;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strncmp(t->pool + t->host[t->by_name[mid]].name, s, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mpitopo__slurm_find(const mpitopo__slurm_t *t, const char *name)
{
    size_t full = strlen(name), shortlen = strcspn(name, ".");
    int i = lower_bound(t, name, full + 1);
    if (i < t->nhosts && !strcmp(t->pool + t->host[t->by_name[i]].name, name))
        return t->by_name[i];
    /* The short name: a host of the file equal to it, or starting with it
     * and a '.', when exactly one does. */
    int found = -1, n = 0;
    for (i = lower_bound(t, name, shortlen); i < t->nhosts; i++) {
        const char *h = t->pool + t->host[t->by_name[i]].name;
        if (strncmp(h, name, shortlen))
            break;
        if (h[shortlen] == '\0' || h[shortlen] == '.') {
            found = t->by_name[i];
            n++;
        }
    }
    return n == 1 ? found : -1;
}

void mpitopo__slurm_path(const mpitopo__slurm_t *t, int h, int *depth, int64_t *labels,
                         double *speeds)
{
    int leaf = t->host[h].leaf, d = t->sw[leaf].depth + 1;
    *depth = d;
    if (t->block) {
        /* The aggregations of nsizes-1 levels, largest first, then the block. */
        for (int l = 0; l < d; l++) {
            labels[l] = leaf / (t->sizes[t->nsizes - 1 - l] / t->sizes[0]);
            if (speeds)
                speeds[l] = 0.0;
        }
        return;
    }
    for (int s = leaf, l = d - 1; s >= 0 && l >= 0; s = t->sw[s].parent, l--) {
        labels[l] = s;
        if (speeds)
            speeds[l] = t->sw[s].speed;
    }
}

double mpitopo__slurm_speed(const mpitopo__slurm_t *t, int64_t label)
{
    return t && !t->block && label >= 0 && label < t->nsw ? t->sw[label].speed : 0.0;
}

/* ------------------------------------------------------------ levels */

typedef struct lab {
    int64_t label;
    int entry;
} lab_t;

static int cmp_lab(const void *a, const void *b)
{
    const lab_t *x = a, *y = b;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    return (x->entry > y->entry) - (x->entry < y->entry);
}

int mpitopo__slurm_levels(int n, const int *depth, const int64_t *labels, const double *speeds,
                          const char *kind, int *nlevels, int *out,
                          char names[][MPITOPO_MAX_NAME], double *factor)
{
    const int W = MPITOPO__SLURM_MAX_DEPTH;
    int D = 0;
    for (int i = 0; i < n; i++)
        D = depth[i] > D ? depth[i] : D;
    lab_t *tmp = mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof *tmp);
    if (!tmp)
        return MPITOPO_NOMEM("the Slurm levels");
    double speed[MPITOPO__SLURM_MAX_DEPTH], fastest = 0.0;
    int top = 0, single = 1;
    for (int l = 0; l < D; l++) {
        /* Padded label of every entry at level l, renumbered densely. */
        speed[l] = 0.0;
        for (int i = 0; i < n; i++) {
            int k = l < depth[i] ? l : depth[i] - 1;
            tmp[i] = (lab_t){labels[(size_t)i * W + k], i};
            double s = speeds ? speeds[(size_t)i * W + k] : 0.0;
            if (s > 0 && (speed[l] == 0.0 || s < speed[l]))
                speed[l] = s;
            fastest = s > fastest ? s : fastest;
        }
        qsort(tmp, (size_t)n, sizeof *tmp, cmp_lab);
        int id = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0 && tmp[i].label != tmp[i - 1].label)
                id++;
            out[(size_t)tmp[i].entry * W + l] = id;
        }
        /* Leading levels of one unit say nothing. */
        if (single && id == 0)
            top = l + 1;
        else
            single = 0;
    }
    mpitopo__free(tmp);
    *nlevels = D - top;
    for (int l = 0; l < D - top; l++) {
        for (int i = 0; i < n; i++)
            out[(size_t)i * W + l] = out[(size_t)i * W + l + top];
        int k = D - top - 1 - l; /* counted from the bottom */
        if (k == 0)
            snprintf(names[l], MPITOPO_MAX_NAME, "%s", !strcmp(kind, "block") ? "block" : "switch");
        else
            snprintf(names[l], MPITOPO_MAX_NAME, "%s%d", !strcmp(kind, "block") ? "block" : "switch",
                     k + 1);
        double slowest = 0.0;
        for (int m = l + top; m < D; m++)
            if (speed[m] > 0 && (slowest == 0.0 || speed[m] < slowest))
                slowest = speed[m];
        factor[l] = slowest > 0 ? fastest / slowest : 1.0;
    }
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------ machines */

int mpitopo__slurm_machine(const mpitopo__slurm_t *t, int nhosts, const char *const *hosts,
                           const char *inner, mpitopo_machine_t **machine, int *node_of_host)
{
    const int W = MPITOPO__SLURM_MAX_DEPTH;
    *machine = NULL;
    int n = hosts ? nhosts : t->nhosts, rc, nin = 0, nleaves = 1, nabove = 0;
    mpitopo_machine_t *in = NULL;
    if (inner && *inner) {
        if ((rc = mpitopo_machine_from_string(inner, &in)) != MPITOPO_SUCCESS)
            return rc;
        int node_level;
        mpitopo_machine_node_level(in, &node_level);
        mpitopo_machine_nlevels(in, &nin);
        mpitopo_machine_nleaves(in, &nleaves);
        if (node_level >= 0) {
            mpitopo_machine_destroy(&in);
            return MPITOPO_FAIL(MPITOPO_ERR_PARSE,
                                "\"%s\": the levels inside a node must not hold \"node\"", inner);
        }
    }
    int *depth = mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof *depth);
    int64_t *labels = mpitopo__malloc_array((size_t)(n > 0 ? n : 1) * W, sizeof *labels);
    double *speeds = mpitopo__malloc_array((size_t)(n > 0 ? n : 1) * W, sizeof *speeds);
    int *above = mpitopo__malloc_array((size_t)(n > 0 ? n : 1) * W, sizeof *above);
    int *paths = NULL, *leaf_of = NULL, *seen = mpitopo__calloc((size_t)t->nhosts, sizeof *seen);
    char names[MPITOPO_MAX_LEVELS][MPITOPO_MAX_NAME];
    double factor[MPITOPO__SLURM_MAX_DEPTH];
    rc = !depth || !labels || !speeds || !above || !seen ? MPITOPO_NOMEM("the hosts' paths")
         : n < 1 ? MPITOPO_FAIL(MPITOPO_ERR_ARG, "no hosts")
                 : MPITOPO_SUCCESS;
    for (int i = 0; i < n && rc == MPITOPO_SUCCESS; i++) {
        int h = hosts ? mpitopo__slurm_find(t, hosts[i]) : i;
        if (h < 0)
            rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_NOT_FOUND, "host %d, %.100s, is not a node of the file",
                              i, hosts[i]);
        else if (seen[h]++)
            rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "host %d, %.100s, is given twice", i, hosts[i]);
        else
            mpitopo__slurm_path(t, h, &depth[i], labels + (size_t)i * W, speeds + (size_t)i * W);
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slurm_levels(n, depth, labels, speeds, mpitopo__slurm_kind(t), &nabove,
                                   above, names, factor);
    int nlevels = nabove + 1 + nin;
    if (rc == MPITOPO_SUCCESS && nlevels > MPITOPO_MAX_LEVELS)
        rc = MPITOPO_FAIL(MPITOPO_ERR_RANGE, "%d switch levels, the node and %d inner levels exceed %d",
                          nabove, nin, MPITOPO_MAX_LEVELS);
    if (rc == MPITOPO_SUCCESS && (long long)n * nleaves > INT_MAX / nlevels)
        rc = MPITOPO_FAIL(MPITOPO_ERR_RANGE, "%d hosts of %d leaves are too many", n, nleaves);
    if (rc == MPITOPO_SUCCESS &&
        (!(paths = mpitopo__malloc_array((size_t)n * (size_t)nleaves, (size_t)nlevels * sizeof *paths)) ||
         !(leaf_of = mpitopo__malloc_array((size_t)n * (size_t)nleaves, sizeof *leaf_of))))
        rc = MPITOPO_NOMEM("the leaves' paths");
    if (rc == MPITOPO_SUCCESS) {
        const char *lnames[MPITOPO_MAX_LEVELS];
        double costs[MPITOPO_MAX_LEVELS];
        for (int l = 0; l < nlevels; l++) {
            costs[l] = (double)(nlevels - l) * (l < nabove ? factor[l] : 1.0);
            lnames[l] = l < nabove ? names[l] : l == nabove ? "node" : NULL;
            if (l > nabove)
                mpitopo_machine_level(in, l - nabove - 1, &lnames[l], NULL, NULL, NULL, NULL);
        }
        for (int i = 0; i < n; i++)
            for (int leaf = 0; leaf < nleaves; leaf++) {
                int *p = paths + ((size_t)i * nleaves + leaf) * nlevels;
                for (int l = 0; l < nabove; l++)
                    p[l] = above[(size_t)i * W + l];
                p[nabove] = i;
                for (int l = 0; l < nin; l++)
                    mpitopo_machine_unit_of(in, l, leaf, &p[nabove + 1 + l]);
            }
        rc = mpitopo_machine_from_paths(nlevels, lnames, costs, n * nleaves, paths, machine, leaf_of);
        for (int i = 0; rc == MPITOPO_SUCCESS && node_of_host && i < n; i++)
            mpitopo_machine_unit_of(*machine, nabove, leaf_of[(size_t)i * nleaves], &node_of_host[i]);
    }
    mpitopo_machine_destroy(&in);
    mpitopo__free(depth);
    mpitopo__free(labels);
    mpitopo__free(speeds);
    mpitopo__free(above);
    mpitopo__free(paths);
    mpitopo__free(leaf_of);
    mpitopo__free(seen);
    return rc;
}

/* ------------------------------------------------------------ SLURM_TOPOLOGY_ADDR */

int mpitopo__slurm_addr(const char *addr, const char *pattern, int *depth, int64_t *labels,
                        char *why, size_t whysize)
{
    *depth = 0;
    /* The pattern: "switch" components, then "node". */
    int parts = 1;
    for (const char *p = pattern; *p; p++)
        parts += *p == '.';
    const char *p = pattern;
    for (int i = 0; i < parts; i++) {
        size_t n = strcspn(p, ".");
        const char *want = i < parts - 1 ? "switch" : "node";
        if (n != strlen(want) || strncmp(p, want, n))
            return snprintf(why, whysize,
                            "SLURM_TOPOLOGY_ADDR_PATTERN = \"%.100s\": expected "
                            "\"switch.\" components then \"node\"",
                            pattern),
                   -1;
        p += n + (p[n] == '.');
    }
    if (parts - 1 > MPITOPO__SLURM_MAX_DEPTH)
        return snprintf(why, whysize, "SLURM_TOPOLOGY_ADDR_PATTERN = \"%.100s\": more than %d switches",
                        pattern, MPITOPO__SLURM_MAX_DEPTH),
               -1;
    /* The address: as many switch names, then the node's name (which may
     * hold dots). */
    const char *a = addr;
    for (int i = 0; i < parts - 1; i++) {
        size_t n = strcspn(a, ".");
        if (n == 0 || !a[n])
            return snprintf(why, whysize,
                            "SLURM_TOPOLOGY_ADDR = \"%.100s\" does not match its pattern \"%.100s\"",
                            addr, pattern),
                   -1;
        uint64_t h = 1469598103934665603ULL;
        for (size_t k = 0; k < n; k++)
            h = (h ^ (unsigned char)a[k]) * 1099511628211ULL;
        labels[i] = (int64_t)(h >> 2);
        a += n + 1;
    }
    if (!*a)
        return snprintf(why, whysize, "SLURM_TOPOLOGY_ADDR = \"%.100s\" has no node name", addr), -1;
    *depth = parts - 1;
    return 0;
}
