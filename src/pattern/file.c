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
    int nprocs;     /* 0 until the header is read */
    int max_nprocs; /* a larger header is refused before anything is sized by it */
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
    return MPITOPO_FAIL_AS(MPITOPO_ERR_FORMAT, ps->func, "%s:%ld: %s", ps->name, ps->line,
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
    if (v > ps->max_nprocs)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, ps->func, "%s:%ld: NPROCS = %lld is more than "
                                 "the %d processes allowed", ps->name, ps->line, v, ps->max_nprocs);
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
    char buf[MPITOPO__PATTERN_MAX_LINE + 1];
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
        return bad_line(ps, "NUL byte in the line (not a text file?)");
    if (len > MPITOPO__PATTERN_MAX_LINE)
        return bad_line(ps, "line longer than %d bytes", MPITOPO__PATTERN_MAX_LINE);
    const char *hash = memchr(s, '#', len);
    if (hash)
        len = (size_t)(hash - s);
    field_t f[MAX_FIELDS];
    int n = split(s, len, f);
    if (n == 0)
        return MPITOPO_SUCCESS;
    return ps->nprocs ? parse_edge(ps, f, n) : parse_header(ps, f, n);
}

static void parser_init(parser_t *ps, const char *name, const char *func, int max_nprocs)
{
    *ps = (parser_t){func, name ? name : "(memory)", 0, 0, max_nprocs, {0}};
    mpitopo__coo_init(&ps->coo, MPITOPO__COO_BYTES | MPITOPO__COO_MSGS, func);
}

/* After the last line: the pattern, sized by its edges and the header. */
static int parser_finish(parser_t *ps, mpitopo_pattern_t **pattern)
{
    int rc = MPITOPO_SUCCESS;
    if (!ps->nprocs)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_FORMAT, ps->func,
                               "%s: no header line \"mpitopo-pattern 1 NPROCS\"", ps->name);
    if (!rc && (rc = mpitopo__pattern_from_coo(ps->nprocs, &ps->coo, pattern)) == MPITOPO_ERR_RANGE)
        rc = MPITOPO_FAIL_RESTATE(MPITOPO_ERR_FORMAT, ps->func, "%s", ps->name);
    mpitopo__coo_free(&ps->coo);
    return rc;
}

static int parse_text(const char *text, size_t len, const char *name, const char *func,
                      mpitopo_pattern_t **pattern)
{
    parser_t ps;
    parser_init(&ps, name, func, INT_MAX);
    int rc = MPITOPO_SUCCESS;
    for (size_t pos = 0; !rc && pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        ps.line++;
        rc = parse_line(&ps, text + pos, end - pos);
        pos = nl ? end + 1 : len;
    }
    if (rc) {
        mpitopo__coo_free(&ps.coo);
        return rc;
    }
    return parser_finish(&ps, pattern);
}

int mpitopo_pattern_parse(const char *text, size_t len, const char *name,
                          mpitopo_pattern_t **pattern)
{
    if (!pattern || (!text && len > 0))
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and text must not be NULL");
    *pattern = NULL;
    return parse_text(text, len, name, __func__, pattern);
}

/*
 * Files are parsed as they are read, a line at a time, so nothing is held
 * but the edges: an endless stream of bytes without a line end (/dev/zero)
 * stops at its first NUL byte or once the line is longer than any line may
 * be, and a stream of lines costs only the edges it gives.
 */
#define READ_CHUNK 65536
_Static_assert(READ_CHUNK > 2 * (MPITOPO__PATTERN_MAX_LINE + 1), "a whole line and more fit in a chunk");

/* The complete lines of buf[0..have): parsed; *used is what they took. */
static int parse_lines(parser_t *ps, const char *buf, size_t have, size_t *used)
{
    size_t pos = 0;
    int rc = MPITOPO_SUCCESS;
    const char *nl;
    while (!rc && (nl = memchr(buf + pos, '\n', have - pos))) {
        ps->line++;
        rc = parse_line(ps, buf + pos, (size_t)(nl - buf) - pos);
        pos = (size_t)(nl - buf) + 1;
    }
    *used = pos;
    return rc;
}

/* The start of a line whose end has not come yet: refused as soon as it
 * cannot become a valid line. */
static int check_partial(parser_t *ps, const char *s, size_t len)
{
    if (!memchr(s, '\0', len) && len <= MPITOPO__PATTERN_MAX_LINE + 1) /* + 1: a CR */
        return MPITOPO_SUCCESS;
    ps->line++;
    return parse_line(ps, s, len);
}

static int parse_stream(FILE *f, parser_t *ps)
{
    char *buf = mpitopo__malloc(READ_CHUNK);
    if (!buf)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, ps->func, "out of memory reading \"%s\"", ps->name);
    size_t have = 0, used = 0;
    int rc = MPITOPO_SUCCESS;
    for (;;) {
        size_t got = fread(buf + have, 1, READ_CHUNK - have, f);
        if (got == 0) {
            int err = errno;
            if (ferror(f)) {
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_IO, ps->func, "cannot read \"%s\": %s", ps->name,
                                       strerror(err));
            } else if (have > 0) { /* the last line, without a line end */
                ps->line++;
                rc = parse_line(ps, buf, have);
            }
            break;
        }
        have += got;
        if ((rc = parse_lines(ps, buf, have, &used)) != MPITOPO_SUCCESS)
            break;
        memmove(buf, buf + used, have - used);
        have -= used;
        if ((rc = check_partial(ps, buf, have)) != MPITOPO_SUCCESS)
            break;
    }
    mpitopo__free(buf);
    return rc;
}

int mpitopo__pattern_read_max(const char *path, int max_nprocs, const char *func, mpitopo_pattern_t **pattern)
{
    if (!path || !pattern)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "path and pattern must not be NULL");
    *pattern = NULL;
    if (max_nprocs < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "max_nprocs = %d must be >= 1", max_nprocs);
    FILE *f = fopen(path, "rb");
    if (!f)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_IO, func, "cannot open \"%s\": %s", path, strerror(errno));
    parser_t ps;
    parser_init(&ps, path, func, max_nprocs);
    errno = 0;
    int rc = parse_stream(f, &ps);
    fclose(f);
    if (rc) {
        mpitopo__coo_free(&ps.coo);
        return rc;
    }
    return parser_finish(&ps, pattern);
}

int mpitopo_pattern_read(const char *path, mpitopo_pattern_t **pattern)
{
    return mpitopo__pattern_read_max(path, INT_MAX, __func__, pattern);
}

int mpitopo_pattern_read_max(const char *path, int max_nprocs, mpitopo_pattern_t **pattern)
{
    return mpitopo__pattern_read_max(path, max_nprocs, __func__, pattern);
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
