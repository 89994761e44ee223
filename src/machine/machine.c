/* The machine model: synthetic descriptions, explicit leaf paths, queries. */
#include "machine/machine_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Names and messages                                                        */

/* Input bytes quoted in a message, and the room they may take once escaped. */
#define QUOTE_MAX 40
#define QUOTE_SIZE (4 * QUOTE_MAX + 4)

/* Copy s[0..len) into out for a message: quotes, backslashes and
 * non-printable bytes escaped, cut after QUOTE_MAX bytes with "...". Any
 * byte may reach here (descriptions come from files and fuzzers). */
static const char *quote(char out[QUOTE_SIZE], const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == QUOTE_MAX) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

static int is_letter(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_name_char(int c)
{
    return is_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Why s[0..len) is not a valid level name, or NULL when it is; *at receives
 * the offset of the offending character. */
static const char *name_problem(const char *s, size_t len, size_t *at)
{
    *at = 0;
    if (len == 0)
        return "is empty";
    if (!is_letter((unsigned char)s[0]))
        return "must start with a letter";
    for (size_t i = 1; i < len; i++) {
        if (!is_name_char((unsigned char)s[i])) {
            *at = i;
            return "may hold only letters, digits, '_' and '-'";
        }
    }
    if (len >= MPITOPO_MAX_NAME) {
        *at = MPITOPO_MAX_NAME - 1;
        return "is longer than 31 characters";
    }
    return NULL;
}

/* Costs must be usable as weights: finite and non-negative. */
static int check_costs(const char *func, int n, const double *costs)
{
    for (int l = 0; l < n; l++)
        if (!(costs[l] >= 0.0) || !isfinite(costs[l]))
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                     "costs[%d] = %g must be a finite number >= 0", l, costs[l]);
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Layout                                                                     */

/* A machine with its arrays allocated (contents unset), or NULL when out of
 * memory. */
static mpitopo_machine_t *machine_new(int nlevels, int nleaves, const int *nunits)
{
    mpitopo_machine_t *m = mpitopo__calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->nlevels = nlevels;
    m->nleaves = nleaves;
    m->node_level = -1;
    for (int l = 0; l < nlevels; l++) {
        m->nunits[l] = nunits[l];
        m->unit[l] = mpitopo__malloc_array((size_t)nleaves, sizeof(int));
        m->first[l] = mpitopo__malloc_array((size_t)nunits[l] + 1, sizeof(int));
        if (!m->unit[l] || !m->first[l])
            goto cleanup;
    }
    return m;
cleanup:
    mpitopo_machine_destroy(&m);
    return NULL;
}

/* Names (already validated) and costs (NULL for the defaults). */
static void machine_set_levels(mpitopo_machine_t *m, const char *const *names, const double *costs)
{
    for (int l = 0; l < m->nlevels; l++) {
        snprintf(m->name[l], sizeof m->name[l], "%s", names[l]);
        /* Adding 0.0 turns -0.0 into 0.0, which describe() prints as "0". */
        m->cost[l] = costs ? costs[l] + 0.0 : (double)(m->nlevels - l);
        if (strcmp(m->name[l], "node") == 0)
            m->node_level = l;
    }
}

void mpitopo_machine_destroy(mpitopo_machine_t **machine)
{
    if (!machine || !*machine)
        return;
    mpitopo_machine_t *m = *machine;
    for (int l = 0; l < MPITOPO_MAX_LEVELS; l++) {
        mpitopo__free(m->unit[l]);
        mpitopo__free(m->first[l]);
    }
    mpitopo__free(m);
    *machine = NULL;
}

/* Smallest and largest number of level-l units inside one unit of level
 * l-1. Units are numbered in leaf order, so the level-l units of a parent
 * are those of its first leaf through those of its last leaf. */
static void level_arity(const mpitopo_machine_t *m, int l, int *min, int *max)
{
    if (l == 0) {
        *min = *max = m->nunits[0];
        return;
    }
    int lo = INT_MAX, hi = 0;
    for (int p = 0; p < m->nunits[l - 1]; p++) {
        int first = m->first[l - 1][p], last = m->first[l - 1][p + 1] - 1;
        int a = m->unit[l][last] - m->unit[l][first] + 1;
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
    }
    *min = lo;
    *max = hi;
}

/* ------------------------------------------------------------------------ */
/* Synthetic descriptions                                                    */

struct level_desc {
    char name[MPITOPO_MAX_NAME];
    int arity;
    double cost;
    int has_cost;
    size_t column; /* 1-based position of the level in the description */
};

struct desc {
    int nlevels;
    int nleaves;
    struct level_desc level[MPITOPO_MAX_LEVELS];
};

static int parse_fail(const char *desc, int code, const char *fmt, ...) MPITOPO_PRINTF(3, 4);

/* Record "desc = "...": <detail>" for mpitopo_machine_from_string. */
static int parse_fail(const char *desc, int code, const char *fmt, ...)
{
    char detail[400], q[QUOTE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return MPITOPO_FAIL_AS(code, "mpitopo_machine_from_string", "desc = \"%s\": %s",
                             quote(q, desc, strlen(desc)), detail);
}

static int is_separator(char c)
{
    return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* An optionally signed run of digits: what parse_long rejects only for size. */
static int is_integer_text(const char *s, size_t len)
{
    size_t i = len > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (i == len)
        return 0;
    for (; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* The arity s[0..len) (at offset `at` of desc) of level lv. */
static int parse_arity(const char *desc, size_t at, size_t len, struct level_desc *lv)
{
    const char *s = desc + at;
    char q[QUOTE_SIZE];
    long long v;
    if (mpitopo__parse_long(s, len, LLONG_MIN, LLONG_MAX, &v) != 0) {
        if (is_integer_text(s, len) && s[0] != '-')
            return parse_fail(desc, MPITOPO_ERR_RANGE,
                              "arity \"%s\" of level '%s' (column %zu) must be <= %d",
                              quote(q, s, len), lv->name, at + 1, INT_MAX);
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "arity \"%s\" of level '%s' (column %zu) must be an integer >= 1",
                          quote(q, s, len), lv->name, at + 1);
    }
    if (v < 1)
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "arity \"%s\" of level '%s' (column %zu) must be >= 1", quote(q, s, len),
                          lv->name, at + 1);
    if (v > INT_MAX)
        return parse_fail(desc, MPITOPO_ERR_RANGE,
                          "arity \"%s\" of level '%s' (column %zu) must be <= %d", quote(q, s, len),
                          lv->name, at + 1, INT_MAX);
    lv->arity = (int)v;
    return MPITOPO_SUCCESS;
}

/* The cost s[0..len) (at offset `at` of desc) of level lv. */
static int parse_cost(const char *desc, size_t at, size_t len, struct level_desc *lv)
{
    const char *s = desc + at;
    char q[QUOTE_SIZE];
    double v;
    if (mpitopo__parse_double(s, len, &v) != 0)
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "cost \"%s\" of level '%s' (column %zu) must be a finite decimal number",
                          quote(q, s, len), lv->name, at + 1);
    if (!(v >= 0.0))
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "cost \"%s\" of level '%s' (column %zu) must be >= 0", quote(q, s, len),
                          lv->name, at + 1);
    lv->cost = v + 0.0;
    lv->has_cost = 1;
    return MPITOPO_SUCCESS;
}

/* The name of level d->nlevels: desc[start..colon). */
static int parse_name(const char *desc, size_t start, size_t colon, struct desc *d)
{
    struct level_desc *lv = &d->level[d->nlevels];
    char q[QUOTE_SIZE];
    size_t len = colon - start, at;
    const char *why = name_problem(desc + start, len, &at);
    if (why)
        return parse_fail(desc, MPITOPO_ERR_PARSE, "level name \"%s\" (column %zu) %s",
                          quote(q, desc + start, len), start + at + 1, why);
    memcpy(lv->name, desc + start, len);
    lv->name[len] = '\0';
    lv->column = start + 1;
    for (int k = 0; k < d->nlevels; k++)
        if (strcmp(d->level[k].name, lv->name) == 0)
            return parse_fail(desc, MPITOPO_ERR_PARSE,
                              "level name \"%s\" (column %zu) repeats level %d (column %zu)",
                              lv->name, lv->column, k, d->level[k].column);
    return MPITOPO_SUCCESS;
}

/* One level, desc[start..end): name ":" arity [ "@" cost ]. */
static int parse_level(const char *desc, size_t start, size_t end, struct desc *d)
{
    struct level_desc *lv = &d->level[d->nlevels];
    char q[QUOTE_SIZE];
    const char *colon = memchr(desc + start, ':', end - start);
    if (!colon)
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "level \"%s\" (column %zu) needs the form name:arity[@cost]",
                          quote(q, desc + start, end - start), start + 1);
    size_t c = (size_t)(colon - desc);
    int rc = parse_name(desc, start, c, d);
    if (rc)
        return rc;
    const char *at_sign = memchr(colon + 1, '@', end - c - 1);
    size_t arity_end = at_sign ? (size_t)(at_sign - desc) : end;
    rc = parse_arity(desc, c + 1, arity_end - c - 1, lv);
    if (rc)
        return rc;
    lv->has_cost = 0;
    lv->cost = 0.0;
    if (at_sign) {
        rc = parse_cost(desc, arity_end + 1, end - arity_end - 1, lv);
        if (rc)
            return rc;
    }
    if (d->nlevels > 0 && lv->has_cost != d->level[0].has_cost)
        return parse_fail(desc, MPITOPO_ERR_PARSE,
                          "level '%s' (column %zu) %s a cost but level '%s' %s: give a cost on "
                          "every level or on none",
                          lv->name, lv->column, lv->has_cost ? "has" : "lacks", d->level[0].name,
                          lv->has_cost ? "does not" : "does");
    long long nleaves = (long long)d->nleaves * lv->arity;
    if (nleaves > INT_MAX)
        return parse_fail(desc, MPITOPO_ERR_RANGE,
                          "level '%s' (column %zu) brings the number of leaves to %lld, more than %d",
                          lv->name, lv->column, nleaves, INT_MAX);
    d->nleaves = (int)nleaves;
    d->nlevels++;
    return MPITOPO_SUCCESS;
}

static int parse_desc(const char *desc, struct desc *d)
{
    char q[QUOTE_SIZE];
    size_t pos = 0;
    d->nlevels = 0;
    d->nleaves = 1;
    for (;;) {
        while (desc[pos] && is_separator(desc[pos]))
            pos++;
        if (!desc[pos])
            break;
        size_t end = pos;
        while (desc[end] && !is_separator(desc[end]))
            end++;
        if (d->nlevels == MPITOPO_MAX_LEVELS)
            return parse_fail(desc, MPITOPO_ERR_RANGE,
                              "level \"%s\" (column %zu) is one more than the %d levels allowed",
                              quote(q, desc + pos, end - pos), pos + 1, MPITOPO_MAX_LEVELS);
        int rc = parse_level(desc, pos, end, d);
        if (rc)
            return rc;
        pos = end;
    }
    if (d->nlevels == 0)
        return parse_fail(desc, MPITOPO_ERR_PARSE, "no level given");
    return MPITOPO_SUCCESS;
}

/* Units of a regular machine are consecutive blocks of equal size: direct
 * fill, no sorting. */
static void fill_regular(mpitopo_machine_t *m)
{
    for (int l = 0; l < m->nlevels; l++) {
        int span = m->nleaves / m->nunits[l];
        int *unit = m->unit[l], *first = m->first[l];
        int leaf = 0;
        for (int u = 0; u < m->nunits[l]; u++) {
            first[u] = leaf;
            for (int i = 0; i < span; i++)
                unit[leaf++] = u;
        }
        first[m->nunits[l]] = m->nleaves;
    }
}

int mpitopo_machine_from_string(const char *desc, mpitopo_machine_t **machine)
{
    if (!machine)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "machine is NULL");
    *machine = NULL;
    if (!desc)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "desc is NULL");
    struct desc d;
    int rc = parse_desc(desc, &d);
    if (rc)
        return rc;
    int nunits[MPITOPO_MAX_LEVELS];
    const char *names[MPITOPO_MAX_LEVELS];
    double costs[MPITOPO_MAX_LEVELS];
    for (int l = 0, n = 1; l < d.nlevels; l++) {
        n *= d.level[l].arity; /* no overflow: the product was checked while parsing */
        nunits[l] = n;
        names[l] = d.level[l].name;
        costs[l] = d.level[l].cost;
    }
    mpitopo_machine_t *m = machine_new(d.nlevels, d.nleaves, nunits);
    if (!m)
        return MPITOPO_NOMEM("the layout of the machine");
    machine_set_levels(m, names, d.level[0].has_cost ? costs : NULL);
    fill_regular(m);
    *machine = m;
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Explicit paths                                                            */

#define PATHS_FAIL(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_machine_from_paths", __VA_ARGS__)

static int check_names(int nlevels, const char *const *names)
{
    char q[QUOTE_SIZE];
    size_t at;
    if (!names)
        return PATHS_FAIL(MPITOPO_ERR_ARG, "names is NULL");
    for (int l = 0; l < nlevels; l++) {
        if (!names[l])
            return PATHS_FAIL(MPITOPO_ERR_ARG, "names[%d] is NULL", l);
        size_t len = strlen(names[l]);
        const char *why = name_problem(names[l], len, &at);
        if (why)
            return PATHS_FAIL(MPITOPO_ERR_ARG, "names[%d] = \"%s\" %s (character %zu)", l,
                              quote(q, names[l], len), why, at + 1);
        for (int k = 0; k < l; k++)
            if (strcmp(names[k], names[l]) == 0)
                return PATHS_FAIL(MPITOPO_ERR_ARG, "names[%d] = \"%s\" repeats names[%d]", l,
                                  names[l], k);
    }
    return MPITOPO_SUCCESS;
}

static int check_path_args(int nlevels, const char *const *names, const double *costs,
                           int nentries, const int *paths)
{
    if (nlevels < 1)
        return PATHS_FAIL(MPITOPO_ERR_ARG, "nlevels = %d must be >= 1", nlevels);
    if (nlevels > MPITOPO_MAX_LEVELS)
        return PATHS_FAIL(MPITOPO_ERR_RANGE, "nlevels = %d must be <= %d", nlevels,
                          MPITOPO_MAX_LEVELS);
    int rc = check_names(nlevels, names);
    if (rc)
        return rc;
    if (costs && (rc = check_costs("mpitopo_machine_from_paths", nlevels, costs)) != 0)
        return rc;
    if (nentries < 1)
        return PATHS_FAIL(MPITOPO_ERR_ARG, "nentries = %d must be >= 1", nentries);
    if (!paths)
        return PATHS_FAIL(MPITOPO_ERR_ARG, "paths is NULL");
    for (int i = 0; i < nentries; i++) {
        for (int l = 0; l < nlevels; l++) {
            size_t at = (size_t)i * (size_t)nlevels + (size_t)l;
            if (paths[at] < 0)
                return PATHS_FAIL(MPITOPO_ERR_ARG,
                                  "paths[%zu] = %d (entry %d, level %d '%s') must be >= 0", at,
                                  paths[at], i, l, names[l]);
        }
    }
    return MPITOPO_SUCCESS;
}

static const int *path_of(const int *paths, int nlevels, int entry)
{
    return paths + (size_t)entry * (size_t)nlevels;
}

static int compare_paths(const int *a, const int *b, int nlevels)
{
    for (int l = 0; l < nlevels; l++)
        if (a[l] != b[l])
            return a[l] < b[l] ? -1 : 1;
    return 0;
}

/* List the entries in path order, ties in entry order, in `order` or
 * `spare` (the array returned). Entries that already come in path order (a
 * block launch) are not sorted. The others go through a stable LSD radix
 * sort: one counting pass per byte of label in use, last level first. It is
 * linear, and several times faster than qsort with a comparator on a
 * million entries. */
static int *sort_entries(const int *paths, int n, int nlevels, int *order, int *spare)
{
    int sorted = 1;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n && sorted; i++)
        sorted = compare_paths(path_of(paths, nlevels, i - 1), path_of(paths, nlevels, i),
                               nlevels) < 0;
    if (sorted)
        return order;
    for (int l = nlevels - 1; l >= 0; l--) {
        int max = 0;
        for (int i = 0; i < n; i++) {
            int label = path_of(paths, nlevels, i)[l];
            max = label > max ? label : max;
        }
        for (int shift = 0; shift < 32 && (max >> shift) > 0; shift += 8) {
            int count[257] = {0};
            for (int k = 0; k < n; k++)
                count[((path_of(paths, nlevels, order[k])[l] >> shift) & 255) + 1]++;
            for (int d = 0; d < 256; d++)
                count[d + 1] += count[d];
            for (int k = 0; k < n; k++) {
                int digit = (path_of(paths, nlevels, order[k])[l] >> shift) & 255;
                spare[count[digit]++] = order[k];
            }
            int *t = order;
            order = spare;
            spare = t;
        }
    }
    return order;
}

/* For every leaf k > 0 (entry order[k]), the level part[k] at which its
 * path leaves that of leaf k-1; and the number of units of every level. */
static int find_units(const int *paths, const int *order, int n, int nlevels,
                      unsigned char *part, int *nunits)
{
    for (int l = 0; l < nlevels; l++)
        nunits[l] = 1;
    for (int k = 1; k < n; k++) {
        const int *prev = path_of(paths, nlevels, order[k - 1]);
        const int *path = path_of(paths, nlevels, order[k]);
        int l = 0;
        while (l < nlevels && prev[l] == path[l])
            l++;
        if (l == nlevels)
            return PATHS_FAIL(MPITOPO_ERR_ARG, "entries %d and %d have the same path",
                              order[k - 1], order[k]);
        part[k] = (unsigned char)l;
        for (; l < nlevels; l++)
            nunits[l]++;
    }
    return MPITOPO_SUCCESS;
}

/* Leaf k starts a new unit on every level >= part[k]. */
static void fill_from_parts(mpitopo_machine_t *m, const unsigned char *part)
{
    int u[MPITOPO_MAX_LEVELS];
    for (int l = 0; l < m->nlevels; l++) {
        u[l] = 0;
        m->first[l][0] = 0;
        m->unit[l][0] = 0;
        m->first[l][m->nunits[l]] = m->nleaves;
    }
    for (int k = 1; k < m->nleaves; k++) {
        for (int l = 0; l < m->nlevels; l++) {
            if (part[k] <= l)
                m->first[l][++u[l]] = k;
            m->unit[l][k] = u[l];
        }
    }
}

int mpitopo_machine_from_paths(int nlevels, const char *const *names, const double *costs,
                               int nentries, const int *paths, mpitopo_machine_t **machine,
                               int *leaf_of_entry)
{
    int *order = NULL, *spare = NULL;
    const int *sorted = NULL;
    unsigned char *part = NULL;
    mpitopo_machine_t *m = NULL;
    int nunits[MPITOPO_MAX_LEVELS];
    if (!machine)
        return PATHS_FAIL(MPITOPO_ERR_ARG, "machine is NULL");
    *machine = NULL;
    int rc = check_path_args(nlevels, names, costs, nentries, paths);
    if (rc)
        return rc;
    order = mpitopo__malloc_array((size_t)nentries, sizeof(int));
    spare = mpitopo__malloc_array((size_t)nentries, sizeof(int));
    part = mpitopo__malloc((size_t)nentries);
    if (!order || !spare || !part) {
        rc = MPITOPO_NOMEM("the sorted entries");
        goto cleanup;
    }
    sorted = sort_entries(paths, nentries, nlevels, order, spare);
    rc = find_units(paths, sorted, nentries, nlevels, part, nunits);
    if (rc)
        goto cleanup;
    m = machine_new(nlevels, nentries, nunits);
    if (!m) {
        rc = MPITOPO_NOMEM("the layout of the machine");
        goto cleanup;
    }
    machine_set_levels(m, names, costs);
    fill_from_parts(m, part);
    if (leaf_of_entry)
        for (int k = 0; k < nentries; k++)
            leaf_of_entry[sorted[k]] = k;
    *machine = m;
    m = NULL;
cleanup:
    mpitopo__free(order);
    mpitopo__free(spare);
    mpitopo__free(part);
    mpitopo_machine_destroy(&m);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Costs and queries                                                         */

static int check_machine(const char *func, const mpitopo_machine_t *m, const void *out,
                         const char *out_name)
{
    if (!m)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "machine is NULL");
    if (out_name && !out)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s is NULL", out_name);
    return MPITOPO_SUCCESS;
}

/* `what` = value must be a valid index among `n` things. */
static int check_index(const char *func, const char *what, int value, int n, const char *things)
{
    if (value < 0 || value >= n)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                 "%s = %d is out of range: the machine has %d %s", what, value, n,
                                 things);
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_set_costs(mpitopo_machine_t *machine, int ncosts, const double *costs)
{
    int rc = check_machine(__func__, machine, costs, "costs");
    if (rc)
        return rc;
    if (ncosts != machine->nlevels)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "ncosts = %d must equal the number of levels, %d",
                            ncosts, machine->nlevels);
    rc = check_costs(__func__, ncosts, costs);
    if (rc)
        return rc;
    for (int l = 0; l < ncosts; l++)
        machine->cost[l] = costs[l] + 0.0;
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_nleaves(const mpitopo_machine_t *machine, int *nleaves)
{
    int rc = check_machine(__func__, machine, nleaves, "nleaves");
    if (rc)
        return rc;
    *nleaves = machine->nleaves;
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_nlevels(const mpitopo_machine_t *machine, int *nlevels)
{
    int rc = check_machine(__func__, machine, nlevels, "nlevels");
    if (rc)
        return rc;
    *nlevels = machine->nlevels;
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_node_level(const mpitopo_machine_t *machine, int *level)
{
    int rc = check_machine(__func__, machine, level, "level");
    if (rc)
        return rc;
    *level = machine->node_level;
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_level(const mpitopo_machine_t *machine, int level, const char **name,
                          double *cost, int *nunits, int *min_arity, int *max_arity)
{
    int rc = check_machine(__func__, machine, NULL, NULL);
    if (!rc)
        rc = check_index(__func__, "level", level, machine->nlevels, "levels");
    if (rc)
        return rc;
    if (name)
        *name = machine->name[level];
    if (cost)
        *cost = machine->cost[level];
    if (nunits)
        *nunits = machine->nunits[level];
    if (min_arity || max_arity) {
        int lo, hi;
        level_arity(machine, level, &lo, &hi);
        if (min_arity)
            *min_arity = lo;
        if (max_arity)
            *max_arity = hi;
    }
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_unit_of(const mpitopo_machine_t *machine, int level, int leaf, int *unit)
{
    int rc = check_machine(__func__, machine, unit, "unit");
    if (!rc)
        rc = check_index(__func__, "level", level, machine->nlevels, "levels");
    if (!rc)
        rc = check_index(__func__, "leaf", leaf, machine->nleaves, "leaves");
    if (rc)
        return rc;
    *unit = machine->unit[level][leaf];
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_unit_leaves(const mpitopo_machine_t *machine, int level, int unit,
                                int *first, int *count)
{
    int rc = check_machine(__func__, machine, first, "first");
    if (!rc)
        rc = check_machine(__func__, machine, count, "count");
    if (!rc)
        rc = check_index(__func__, "level", level, machine->nlevels, "levels");
    if (!rc)
        rc = check_index(__func__, "unit", unit, machine->nunits[level], "units on this level");
    if (rc)
        return rc;
    *first = machine->first[level][unit];
    *count = machine->first[level][unit + 1] - machine->first[level][unit];
    return MPITOPO_SUCCESS;
}

static int check_pair(const char *func, const mpitopo_machine_t *m, int a, int b, const void *out,
                      const char *out_name)
{
    int rc = check_machine(func, m, out, out_name);
    if (!rc)
        rc = check_index(func, "a", a, m->nleaves, "leaves");
    if (!rc)
        rc = check_index(func, "b", b, m->nleaves, "leaves");
    return rc;
}

int mpitopo_machine_meet_level(const mpitopo_machine_t *machine, int a, int b, int *level)
{
    int rc = check_pair(__func__, machine, a, b, level, "level");
    if (rc)
        return rc;
    *level = mpitopo__meet(machine, a, b);
    return MPITOPO_SUCCESS;
}

int mpitopo_machine_cost(const mpitopo_machine_t *machine, int a, int b, double *cost)
{
    int rc = check_pair(__func__, machine, a, b, cost, "cost");
    if (rc)
        return rc;
    *cost = mpitopo__cost(machine, a, b);
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Description                                                               */

/* A bounded string being appended to; `truncated` once something did not fit. */
struct out {
    char *buf;
    size_t size, len;
    int truncated;
};

static void put(struct out *o, const char *fmt, ...) MPITOPO_PRINTF(2, 3);

static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->size - o->len) {
        o->truncated = 1;
        o->len = o->size - 1;
    } else {
        o->len += (size_t)n;
    }
}

/* A decimal that reads back as c, so descriptions round-trip: 15 digits
 * (trailing zeros dropped by %g) print 0.1 as "0.1" and 100 as "100"; the
 * few doubles that need more get 16 or 17. */
static void format_cost(char *s, size_t size, double c)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(s, size, "%.*g", digits, c);
        if (strtod(s, NULL) == c)
            return;
    }
}

int mpitopo_machine_describe(const mpitopo_machine_t *machine, char *buf, size_t size)
{
    int rc = check_machine(__func__, machine, buf, "buf");
    if (rc)
        return rc;
    if (size == 0)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "size = 0 leaves no room for the description");
    int min[MPITOPO_MAX_LEVELS], max[MPITOPO_MAX_LEVELS];
    int regular = 1, default_costs = 1;
    for (int l = 0; l < machine->nlevels; l++) {
        level_arity(machine, l, &min[l], &max[l]);
        regular = regular && min[l] == max[l];
        default_costs = default_costs && machine->cost[l] == (double)(machine->nlevels - l);
    }
    struct out o = {buf, size, 0, 0};
    buf[0] = '\0';
    for (int l = 0; l < machine->nlevels; l++) {
        const char *sep = l ? " " : "";
        if (min[l] == max[l])
            put(&o, "%s%s:%d", sep, machine->name[l], min[l]);
        else
            put(&o, "%s%s:[%d..%d]", sep, machine->name[l], min[l], max[l]);
        if (!default_costs) {
            char c[32];
            format_cost(c, sizeof c, machine->cost[l]);
            put(&o, "@%s", c);
        }
    }
    if (!regular)
        put(&o, " (%d leaves)", machine->nleaves);
    if (o.truncated)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "size = %zu is too small for the description",
                            size);
    return MPITOPO_SUCCESS;
}
