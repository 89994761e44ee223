/* Pattern files: "mpitopo-pattern 1 NPROCS" then "SRC DST BYTES MESSAGES" lines. */
#include "pattern/pattern_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 5 /* one more than an edge line has, to detect extras */

typedef struct field {
    const char *s;
    size_t len;
} field_t;

typedef struct parser {
    const char *func; /* public function reporting the errors */
    const char *name;
    long line;
    int nprocs; /* 0 until the header is read */
    mpitopo__coo_t coo;
} parser_t;

static int bad_line(const parser_t *ps, const char *fmt, ...) MPITOPO_PRINTF(2, 3);
static int bad_line(const parser_t *ps, const char *fmt, ...)
{
    char detail[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return mpitopo__error_at(MPITOPO_ERR_FORMAT, ps->func, "%s:%ld: %s", ps->name, ps->line,
                             detail);
}

/* A field as it can be quoted in a message: at most 32 characters, the
 * unprintable ones shown as '?'. */
static const char *show(field_t f, char buf[40])
{
    size_t n = f.len < 32 ? f.len : 32, i;
    for (i = 0; i < n; i++)
        buf[i] = f.s[i] >= 0x20 && f.s[i] < 0x7f ? f.s[i] : '?';
    strcpy(buf + i, f.len > n ? "..." : "");
    return buf;
}

/* Split a line (comment removed) at blanks and tabs; returns the number of
 * fields, counting at most MAX_FIELDS. */
static int split(const char *s, size_t len, field_t *fields)
{
    int n = 0;
    size_t i = 0;
    while (i < len && n < MAX_FIELDS) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i > start)
            fields[n++] = (field_t){s + start, i - start};
    }
    return n;
}

static int parse_header(parser_t *ps, const field_t *f, int n)
{
    char buf[40];
    long long v;
    if (f[0].len != 15 || memcmp(f[0].s, "mpitopo-pattern", 15) != 0)
        return bad_line(ps, "expected the header \"mpitopo-pattern 1 NPROCS\", got \"%s\"",
                        show(f[0], buf));
    if (n != 3)
        return bad_line(ps, "the header \"mpitopo-pattern 1 NPROCS\" needs 3 fields, got %s%d",
                        n == MAX_FIELDS ? "at least " : "", n);
    if (mpitopo__parse_long(f[1].s, f[1].len, 1, 1, &v))
        return bad_line(ps, "version = \"%s\" is not supported (this reader knows version 1)",
                        show(f[1], buf));
    if (mpitopo__parse_long(f[2].s, f[2].len, 1, INT_MAX, &v))
        return bad_line(ps, "NPROCS = \"%s\" is not an integer in [1, %d]", show(f[2], buf),
                        INT_MAX);
    ps->nprocs = (int)v;
    return MPITOPO_SUCCESS;
}

static int parse_id(const parser_t *ps, const char *what, field_t f, int *id)
{
    char buf[40];
    long long v;
    if (mpitopo__parse_long(f.s, f.len, LLONG_MIN, LLONG_MAX, &v))
        return bad_line(ps, "%s = \"%s\" is not an integer", what, show(f, buf));
    if (v < 0 || v >= ps->nprocs)
        return bad_line(ps, "%s = %lld out of range [0, %d)", what, v, ps->nprocs);
    *id = (int)v;
    return MPITOPO_SUCCESS;
}

/* A finite decimal number, like mpitopo__parse_double, but subnormal values
 * (which strtod flags with ERANGE) are accepted: %.17g writes them and they
 * must read back. */
static int parse_number(field_t f, double *out)
{
    char buf[128];
    if (f.len == 0 || f.len >= sizeof buf)
        return -1;
    for (size_t i = 0; i < f.len; i++)
        if (f.s[i] == '\0' || !strchr("0123456789.+-eE", f.s[i]))
            return -1;
    memcpy(buf, f.s, f.len);
    buf[f.len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + f.len || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_weight(const parser_t *ps, const char *what, field_t f, double *w)
{
    char buf[40];
    if (parse_number(f, w) || !(*w >= 0))
        return bad_line(ps, "%s = \"%s\" is not a finite number >= 0", what, show(f, buf));
    return MPITOPO_SUCCESS;
}

static int parse_edge(parser_t *ps, const field_t *f, int n)
{
    int src = 0, dst = 0, rc;
    double bytes = 0, msgs = 0;
    if (n != 4)
        return bad_line(ps, "expected 4 fields SRC DST BYTES MESSAGES, got %s%d",
                        n == MAX_FIELDS ? "at least " : "", n);
    if ((rc = parse_id(ps, "SRC", f[0], &src)) || (rc = parse_id(ps, "DST", f[1], &dst)) ||
        (rc = parse_weight(ps, "BYTES", f[2], &bytes)) ||
        (rc = parse_weight(ps, "MESSAGES", f[3], &msgs)))
        return rc;
    return mpitopo__coo_push(&ps->coo, src, dst, bytes, msgs);
}

static int parse_line(parser_t *ps, const char *s, size_t len)
{
    if (len > 0 && s[len - 1] == '\r')
        len--;
    if (memchr(s, '\0', len))
        return bad_line(ps, "NUL byte in the line");
    const char *hash = memchr(s, '#', len);
    if (hash)
        len = (size_t)(hash - s);
    field_t f[MAX_FIELDS];
    int n = split(s, len, f);
    if (n == 0)
        return MPITOPO_SUCCESS;
    return ps->nprocs ? parse_edge(ps, f, n) : parse_header(ps, f, n);
}

static int parse_text(const char *text, size_t len, const char *name, const char *func,
                      mpitopo_pattern_t **pattern)
{
    parser_t ps = {func, name ? name : "(memory)", 0, 0, {0}};
    mpitopo__coo_init(&ps.coo, MPITOPO__COO_BYTES | MPITOPO__COO_MSGS, func);
    int rc = MPITOPO_SUCCESS;
    for (size_t pos = 0; !rc && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        ps.line++;
        rc = parse_line(&ps, text + pos, end - pos);
        pos = nl ? end + 1 : len;
    }
    if (!rc && !ps.nprocs)
        rc = mpitopo__error_at(MPITOPO_ERR_FORMAT, func,
                               "%s: no header line \"mpitopo-pattern 1 NPROCS\"", ps.name);
    if (!rc && (rc = mpitopo__pattern_from_coo(ps.nprocs, &ps.coo, pattern)) == MPITOPO_ERR_RANGE)
        rc = mpitopo__error_restate(MPITOPO_ERR_FORMAT, func, "%s", ps.name);
    mpitopo__coo_free(&ps.coo);
    return rc;
}

int mpitopo_pattern_parse(const char *text, size_t len, const char *name,
                          mpitopo_pattern_t **pattern)
{
    if (!pattern || (!text && len > 0))
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and text must not be NULL");
    *pattern = NULL;
    return parse_text(text, len, name, __func__, pattern);
}

/* The whole file in memory, from any stream (pipes included). */
static int read_all(FILE *f, const char *path, char **text, size_t *len)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            char *b = cap < SIZE_MAX / 2 ? mpitopo__realloc(buf, cap ? 2 * cap : 65536) : NULL;
            if (!b) {
                mpitopo__free(buf);
                return mpitopo__error_at(MPITOPO_ERR_NOMEM, "mpitopo_pattern_read",
                                         "out of memory reading \"%s\"", path);
            }
            buf = b;
            cap = cap ? 2 * cap : 65536;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
    }
    if (ferror(f)) {
        int err = errno;
        mpitopo__free(buf);
        return mpitopo__error_at(MPITOPO_ERR_IO, "mpitopo_pattern_read", "cannot read \"%s\": %s",
                                 path, strerror(err));
    }
    *text = buf;
    *len = n;
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_read(const char *path, mpitopo_pattern_t **pattern)
{
    if (!path || !pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "path and pattern must not be NULL");
    *pattern = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return MPITOPO_FAIL(MPITOPO_ERR_IO, "cannot open \"%s\": %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(f, path, &text, &len);
    fclose(f);
    if (!rc)
        rc = parse_text(text, len, path, __func__, pattern);
    mpitopo__free(text);
    return rc;
}

/* Header, then one line per edge; %.17g gives back every double exactly.
 * Returns -1 with errno set on failure. */
static int write_edges(const mpitopo_pattern_t *p, FILE *f)
{
    if (fprintf(f, "mpitopo-pattern 1 %d\n# SRC DST BYTES MESSAGES\n", p->nprocs) < 0)
        return -1;
    for (int i = 0; i < p->nprocs; i++)
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++)
            if (fprintf(f, "%d %d %.17g %.17g\n", i, p->dst[k], p->bytes[k], p->msgs[k]) < 0)
                return -1;
    return fflush(f) ? -1 : 0;
}

int mpitopo_pattern_write_stream(const mpitopo_pattern_t *pattern, FILE *stream)
{
    if (!pattern || !stream)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and stream must not be NULL");
    errno = 0;
    if (write_edges(pattern, stream))
        return MPITOPO_FAIL(MPITOPO_ERR_IO, "write failed: %s", strerror(errno));
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_write(const mpitopo_pattern_t *pattern, const char *path)
{
    if (!pattern || !path)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and path must not be NULL");
    FILE *f = fopen(path, "w");
    if (!f)
        return MPITOPO_FAIL(MPITOPO_ERR_IO, "cannot open \"%s\" for writing: %s", path,
                            strerror(errno));
    errno = 0;
    int failed = write_edges(pattern, f);
    int err = errno;
    failed |= fclose(f) != 0;
    if (failed)
        return MPITOPO_FAIL(MPITOPO_ERR_IO, "cannot write \"%s\": %s", path,
                            strerror(err ? err : errno));
    return MPITOPO_SUCCESS;
}
