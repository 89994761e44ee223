/*
 * InfiniBand fabrics read from files (issue 16): the topology as
 * ibnetdiscover prints it, the routes as the switches' linear forwarding
 * tables (OpenSM's opensm-lfts.dump, ibroute, dump_fts). The tables are
 * kept as they were read and walked on demand; every route is walked once
 * at import so that a table that loops, dead-ends or delivers to the wrong
 * port is reported there, naming the file and line.
 *
 * Vertices: the end nodes (one per connected CA port) first, in the order
 * of mpitopo_network_from_fabric(), then the switches in file order. Every
 * vertex has port slots: a switch's slot p is its port p (0 unused), an
 * end node has one slot, 0. A connected slot owns the channel leaving it.
 */
#include "network/network_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAB_FN "mpitopo_network_from_fabric"
#define FAB_MAX_LINE 4096
#define FAB_MAX_LID 0xBFFF          /* the highest unicast LID */
#define FAB_MAX_FILE ((long)1 << 30) /* a larger file is refused */
#define FAB_DEFAULT_RATE 8.0         /* 4xSDR: 4 lanes of 2 Gb/s of data */

typedef struct fabric {
    int nend, nsw;         /* end nodes [0, nend), switches [nend, nend + nsw) */
    int *pbase;            /* nend + nsw + 1: slots of vertex v: [pbase[v], pbase[v + 1]) */
    int *peer;             /* per slot: the vertex at the other end, or -1 */
    int *peerslot;         /* per slot: the slot at the other end */
    int64_t *chan;         /* per slot: the channel leaving it, or -1 */
    int64_t *chslot;       /* per channel: the slot it leaves */
    int *name;             /* per vertex: offset of its name in pool */
    int *lid;              /* per vertex: its (base) LID */
    int *caport;           /* per end node: its CA port number */
    int *group;            /* per end node: the first end node on the same switch */
    int ngroups;           /* the number of such groups */
    unsigned char *lft;    /* nsw * nend: switch s sends LID of end node e out of port
                              lft[s * nend + e], 0 where the table has no entry */
    char *pool;            /* NUL-terminated names */
} fabric_t;

/* ------------------------------------------------------------ reading */

typedef struct reader {
    const char *file; /* the file's name, for messages */
    char *buf;        /* the whole file, NUL-terminated */
    size_t len, pos;
    long line;
    char text[FAB_MAX_LINE + 1]; /* the current line, NUL-terminated, no "\r\n" */
} reader_t;

static int bad(const reader_t *rd, long line, const char *fmt, ...) MPITOPO_PRINTF(3, 4);
static int bad(const reader_t *rd, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mpitopo__error_line(MPITOPO_ERR_FORMAT, FAB_FN, rd->file, line, fmt, ap);
    va_end(ap);
    return rc;
}

/* The whole file into rd->buf, read in blocks (a pipe or a FIFO works
 * as well as a file). */
static int slurp(reader_t *rd, const char *path)
{
    rd->file = path;
    FILE *f = fopen(path, "rb");
    if (!f)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_IO, FAB_FN, "cannot open %s: %s", path,
                               strerror(errno));
    int rc = MPITOPO_SUCCESS;
    size_t cap = 0, n = 0, got;
    do {
        if (cap - n < 65536) {
            if (cap > (size_t)FAB_MAX_FILE) {
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, FAB_FN, "%s is larger than %ld bytes",
                                     path, FAB_MAX_FILE);
                break;
            }
            char *p = mpitopo__realloc(rd->buf, (cap = cap ? 2 * cap : 65536) + 1);
            if (!p) {
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, FAB_FN, "out of memory reading %s", path);
                break;
            }
            rd->buf = p;
        }
        got = fread(rd->buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (rc == MPITOPO_SUCCESS && ferror(f))
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_IO, FAB_FN, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc == MPITOPO_SUCCESS) {
        rd->len = n;
        rd->buf[n] = '\0';
    }
    return rc;
}

/* The next line into rd->text; 1 if there is one, 0 at the end, or an error. */
static int next_line(reader_t *rd)
{
    if (rd->pos >= rd->len)
        return 0;
    const char *s = rd->buf + rd->pos;
    const char *nl = memchr(s, '\n', rd->len - rd->pos);
    size_t n = nl ? (size_t)(nl - s) : rd->len - rd->pos;
    rd->pos += n + (nl != NULL);
    rd->line++;
    if (n > 0 && s[n - 1] == '\r')
        n--;
    if (n > FAB_MAX_LINE)
        return bad(rd, rd->line, "line longer than %d characters", FAB_MAX_LINE);
    if (memchr(s, '\0', n))
        return bad(rd, rd->line, "NUL byte in a line");
    memcpy(rd->text, s, n);
    rd->text[n] = '\0';
    return 1;
}

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A decimal integer in [min, max] at *s; advances *s. */
static int read_int(const char **s, long min, long max, long *out)
{
    const char *p = *s;
    long v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > max)
            return -1;
    }
    if (v < min)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

/* A hexadecimal integer "0x..." (at most 16 digits) at *s; advances *s. */
static int read_hex(const char **s, uint64_t *out)
{
    const char *p = *s;
    if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
        return -1;
    p += 2;
    uint64_t v = 0;
    int n = 0;
    for (;; p++, n++) {
        int d = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;
        if (d < 0)
            break;
        if (n == 16)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (n == 0)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

/* A quoted string at *s: its bounds (quotes excluded); advances *s past it. */
static int read_quoted(const char **s, const char **start, size_t *len)
{
    const char *p = *s;
    if (*p != '"')
        return -1;
    const char *end = strchr(p + 1, '"');
    if (!end)
        return -1;
    *start = p + 1;
    *len = (size_t)(end - p - 1);
    *s = end + 1;
    return 0;
}

/* ------------------------------------------------------------ growing arrays */

static int grow(void **a, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    if (need > INT_MAX / 2)
        return -1;
    int n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = mpitopo__realloc_array(*a, (size_t)n, size);
    if (!p)
        return -1;
    *a = p;
    *cap = n;
    return 0;
}

/* ------------------------------------------------------------ topology */

/* A node record and its port lines, as read. */
typedef struct record {
    int is_switch, nports;
    uint64_t guid; /* from the switchguid= / caguid= line, else 0 */
    int id, desc;  /* offsets in the pool */
    int lid;       /* a switch's, from "base port 0 lid N", or 0 */
    long line;
    int count;        /* its port lines */
    int vertex;       /* a switch's vertex */
} record_t;

typedef struct portline {
    int record, port, peer_port;
    int peer_id; /* offset in the pool */
    int peer;    /* the peer's record, once resolved */
    int back;    /* the peer's port line of this link, once resolved */
    int lid;     /* a CA port's LID, or 0 */
    double rate; /* Gb/s, 0 when not given */
    long line;
    int vertex; /* a CA port's vertex */
} portline_t;

typedef struct topo {
    reader_t rd;
    record_t *rec;
    int nrec, caprec;
    portline_t *pl;
    int npl, cappl;
    char *pool;
    int npool, cappool;
    uint64_t pending_guid; /* the last switchguid= / caguid= value, for the next record */
    int have_guid;
} topo_t;

static int pool_add(topo_t *t, const char *s, size_t len, int *off)
{
    if (len > FAB_MAX_LINE || grow((void **)&t->pool, &t->cappool, t->npool + (int)len + 1, 1))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, FAB_FN, "out of memory reading %s", t->rd.file);
    memcpy(t->pool + t->npool, s, len);
    t->pool[t->npool + (int)len] = '\0';
    *off = t->npool;
    t->npool += (int)len + 1;
    return MPITOPO_SUCCESS;
}

/* The data rate of "4xSDR"-like words, in Gb/s; 0 if s is not one; -1 if it
 * has the shape of one with an unknown width or speed. */
static double link_rate(const char *s, size_t len)
{
    static const struct {
        const char *name;
        double lane; /* Gb/s of data per lane */
    } speeds[] = {{"SDR", 2.0},    {"DDR", 4.0},     {"QDR", 8.0},  {"FDR10", 10.0},
                  {"FDR", 13.64}, {"EDR", 25.0},   {"HDR", 50.0}, {"NDR", 100.0},
                  {"XDR", 200.0}};
    size_t i = 0;
    long width = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9' && width < 1000)
        width = width * 10 + (s[i++] - '0');
    if (i == 0 || i >= len || s[i] != 'x')
        return 0;
    const char *sp = s + i + 1;
    size_t splen = len - i - 1;
    if (width != 1 && width != 2 && width != 4 && width != 8 && width != 12)
        return -1;
    for (size_t k = 0; k < sizeof speeds / sizeof speeds[0]; k++)
        if (strlen(speeds[k].name) == splen && memcmp(speeds[k].name, sp, splen) == 0)
            return (double)width * speeds[k].lane;
    return -1;
}

/* The comment of a port line: "# [lid N lmc M] ["desc"] lid L 4xSDR ...":
 * the CA port's own LID (the first "lid N" before the peer's description
 * on a CA's port line) and the link's rate. */
static int port_comment(topo_t *t, const char *c, int is_switch, portline_t *pl)
{
    int seen_desc = 0;
    while (*(c = skip_blank(c))) {
        if (*c == '"') {
            const char *q;
            size_t n;
            if (read_quoted(&c, &q, &n))
                return bad(&t->rd, t->rd.line, "unterminated quoted description");
            seen_desc = 1;
            continue;
        }
        size_t n = strcspn(c, " \t");
        if (n == 3 && memcmp(c, "lid", 3) == 0 && !is_switch && !seen_desc && !pl->lid) {
            const char *p = skip_blank(c + 3);
            long v;
            if (read_int(&p, 1, FAB_MAX_LID, &v))
                return bad(&t->rd, t->rd.line, "the CA port's LID is not an integer in [1, %d]",
                           FAB_MAX_LID);
            pl->lid = (int)v;
            c = p;
            continue;
        }
        double r = link_rate(c, n);
        if (r < 0)
            return bad(&t->rd, t->rd.line, "unknown link width or speed \"%.*s\"",
                       (int)(n > 32 ? 32 : n), c);
        if (r > 0 && pl->rate == 0)
            pl->rate = r;
        c += n;
    }
    return MPITOPO_SUCCESS;
}

/* "[p](guid) "peer"[q](guid) # comment" (the (guid) parts and an "[ext N]"
 * optional). */
static int port_line(topo_t *t, const char *s)
{
    if (t->nrec == 0)
        return bad(&t->rd, t->rd.line, "a port line before any Switch or Ca record");
    record_t *r = &t->rec[t->nrec - 1];
    if (grow((void **)&t->pl, &t->cappl, t->npl + 1, sizeof *t->pl))
        return MPITOPO_NOMEM("the port lines");
    portline_t *pl = &t->pl[t->npl];
    memset(pl, 0, sizeof *pl);
    pl->record = t->nrec - 1;
    pl->line = t->rd.line;
    long v;
    s++;
    if (read_int(&s, 1, 255, &v) || *s != ']')
        return bad(&t->rd, t->rd.line, "expected \"[PORT]\" with PORT in [1, 255]");
    pl->port = (int)v;
    s++;
    if (*s == '(') {
        s = strchr(s, ')');
        if (!s)
            return bad(&t->rd, t->rd.line, "unterminated \"(port GUID)\"");
        s++;
    }
    s = skip_blank(s);
    if (strncmp(s, "[ext", 4) == 0) {
        s = strchr(s, ']');
        if (!s)
            return bad(&t->rd, t->rd.line, "unterminated \"[ext N]\"");
        s = skip_blank(s + 1);
    }
    const char *q;
    size_t n;
    if (read_quoted(&s, &q, &n) || n == 0)
        return bad(&t->rd, t->rd.line, "expected the peer's quoted name after port %d",
                   pl->port);
    int rc = pool_add(t, q, n, &pl->peer_id);
    if (rc)
        return rc;
    if (*s != '[' || (s++, read_int(&s, 1, 255, &v)) || *s != ']')
        return bad(&t->rd, t->rd.line, "expected the peer's \"[PORT]\" with PORT in [1, 255]");
    pl->peer_port = (int)v;
    s = skip_blank(s + 1);
    if (*s == '(') {
        s = strchr(s, ')');
        if (!s)
            return bad(&t->rd, t->rd.line, "unterminated \"(port GUID)\"");
        s = skip_blank(s + 1);
    }
    if (*s && *s != '#')
        return bad(&t->rd, t->rd.line, "unexpected \"%.20s\" after the peer's port", s);
    if (*s == '#' && (rc = port_comment(t, s + 1, r->is_switch, pl)))
        return rc;
    r->count++;
    t->npl++;
    return MPITOPO_SUCCESS;
}

/* "Switch N "id" # "desc" base port 0 lid L lmc M" or "Ca N "id" # "desc"". */
static int node_line(topo_t *t, const char *s, int is_switch)
{
    if (grow((void **)&t->rec, &t->caprec, t->nrec + 1, sizeof *t->rec))
        return MPITOPO_NOMEM("the node records");
    record_t *r = &t->rec[t->nrec];
    memset(r, 0, sizeof *r);
    r->is_switch = is_switch;
    r->line = t->rd.line;
    r->guid = t->have_guid ? t->pending_guid : 0;
    t->have_guid = 0;
    long v;
    s = skip_blank(s);
    if (read_int(&s, 1, 255, &v))
        return bad(&t->rd, t->rd.line, "the number of ports is not an integer in [1, 255]");
    r->nports = (int)v;
    s = skip_blank(s);
    const char *q;
    size_t n;
    if (read_quoted(&s, &q, &n) || n == 0)
        return bad(&t->rd, t->rd.line, "expected the node's quoted name after its port count");
    int rc = pool_add(t, q, n, &r->id);
    if (rc)
        return rc;
    r->desc = r->id;
    s = skip_blank(s);
    if (*s && *s != '#')
        return bad(&t->rd, t->rd.line, "unexpected \"%.20s\" after the node's name", s);
    if (*s == '#') {
        s = skip_blank(s + 1);
        if (*s == '"') {
            if (read_quoted(&s, &q, &n))
                return bad(&t->rd, t->rd.line, "unterminated quoted description");
            if (n > 0 && (rc = pool_add(t, q, n, &r->desc)))
                return rc;
        }
        const char *l = is_switch ? strstr(s, "lid ") : NULL;
        if (l) {
            l += 4;
            if (read_int(&l, 1, FAB_MAX_LID, &v))
                return bad(&t->rd, t->rd.line, "the switch's LID is not an integer in [1, %d]",
                           FAB_MAX_LID);
            r->lid = (int)v;
        }
    }
    t->nrec++;
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------ opensm-subnet.lst */

/* One end of a link in OpenSM's subnet list: "{ SW Ports:0F SystemGUID:...
 * NodeGUID:... PortGUID:... VenID:... DevID:... Rev:... {desc} LID:0003
 * PN:01 }", numbers in hexadecimal. */
typedef struct lst_end {
    int is_switch, nports, lid, port;
    uint64_t guid;
    const char *desc;
    size_t desc_len;
} lst_end_t;

/* Exactly the n characters at s as a hexadecimal number (at most 16 digits). */
static int hex_field(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 16)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                             : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

static int lst_field(topo_t *t, const char *key, size_t klen, const char *v, size_t vlen,
                     lst_end_t *e, int *have)
{
    static const struct {
        const char *key;
        uint64_t max;
        int bit;
    } fields[] = {{"Ports", 255, 1}, {"NodeGUID", UINT64_MAX, 2}, {"LID", FAB_MAX_LID, 4},
                  {"PN", 255, 8}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strlen(fields[i].key) != klen || memcmp(fields[i].key, key, klen) != 0)
            continue;
        uint64_t x;
        if (hex_field(v, vlen, &x) || x > fields[i].max || (fields[i].bit != 2 && x == 0))
            return bad(&t->rd, t->rd.line, "%s:%.*s is not a hexadecimal number in [1, %llu]",
                       fields[i].key, (int)(vlen > 20 ? 20 : vlen), v,
                       (unsigned long long)fields[i].max);
        if (fields[i].bit == 1)
            e->nports = (int)x;
        else if (fields[i].bit == 2)
            e->guid = x;
        else if (fields[i].bit == 4)
            e->lid = (int)x;
        else
            e->port = (int)x;
        *have |= fields[i].bit;
    }
    return MPITOPO_SUCCESS;
}

static int lst_end(topo_t *t, const char **sp, lst_end_t *e)
{
    const char *s = skip_blank(*sp);
    memset(e, 0, sizeof *e);
    if (*s != '{')
        return bad(&t->rd, t->rd.line, "expected \"{\" opening an end of the link");
    s = skip_blank(s + 1);
    size_t n = strcspn(s, " \t}");
    if (n == 2 && memcmp(s, "SW", 2) == 0)
        e->is_switch = 1;
    else if (n >= 2 && memcmp(s, "RT", 2) == 0)
        return bad(&t->rd, t->rd.line, "routers are not supported");
    else if (!(n == 2 && memcmp(s, "CA", 2) == 0) && !(n == 5 && memcmp(s, "CA-SM", 5) == 0))
        return bad(&t->rd, t->rd.line, "node type \"%.*s\" is not SW or CA",
                   (int)(n > 20 ? 20 : n), s);
    s += n;
    int have = 0, rc;
    for (;;) {
        s = skip_blank(s);
        if (*s == '}')
            break;
        if (!*s)
            return bad(&t->rd, t->rd.line, "truncated: no \"}\" closes an end of the link");
        if (*s == '{') {
            const char *end = strchr(s, '}');
            if (!end)
                return bad(&t->rd, t->rd.line, "unterminated {description}");
            e->desc = s + 1;
            e->desc_len = (size_t)(end - s - 1);
            s = end + 1;
            continue;
        }
        n = strcspn(s, " \t}");
        const char *colon = memchr(s, ':', n);
        if (!colon)
            return bad(&t->rd, t->rd.line, "unexpected \"%.*s\" in an end of the link",
                       (int)(n > 20 ? 20 : n), s);
        if ((rc = lst_field(t, s, (size_t)(colon - s), colon + 1, n - (size_t)(colon - s) - 1,
                            e, &have)))
            return rc;
        s += n;
    }
    if (have != 15)
        return bad(&t->rd, t->rd.line, "an end of the link lacks %s",
                   !(have & 1) ? "Ports:" : !(have & 2) ? "NodeGUID:" : !(have & 4) ? "LID:"
                                                                                    : "PN:");
    if (e->port > e->nports)
        return bad(&t->rd, t->rd.line, "PN:%d of a node with %d ports", e->port, e->nports);
    *sp = s + 1;
    return MPITOPO_SUCCESS;
}

/* "PHY=4x LOG=ACT SPD=2.5": the data rate in Gb/s, 0 if not given. */
static int lst_rate(topo_t *t, const char *s, double *rate)
{
    static const struct {
        const char *spd;
        double lane;
    } speeds[] = {{"2.5", 2.0}, {"5", 4.0},   {"10", 8.0},   {"14", 13.64},
                  {"25", 25.0}, {"50", 50.0}, {"100", 100.0}, {"200", 200.0}};
    long width = 0;
    double lane = 0;
    for (s = skip_blank(s); *s; s = skip_blank(s)) {
        size_t n = strcspn(s, " \t");
        const char *p = s + 4;
        if (strncmp(s, "PHY=", 4) == 0 &&
            (read_int(&p, 1, 12, &width) || *p != 'x' || p + 1 != s + n))
            return bad(&t->rd, t->rd.line, "\"%.*s\" is not a width PHY=Nx",
                       (int)(n > 20 ? 20 : n), s);
        if (strncmp(s, "SPD=", 4) == 0) {
            for (size_t k = 0; k < sizeof speeds / sizeof speeds[0] && lane == 0; k++)
                if (strlen(speeds[k].spd) == n - 4 && memcmp(speeds[k].spd, s + 4, n - 4) == 0)
                    lane = speeds[k].lane;
            if (lane == 0)
                return bad(&t->rd, t->rd.line, "unknown link speed \"%.*s\"",
                           (int)(n > 20 ? 20 : n), s);
        }
        s += n;
    }
    *rate = width > 0 && lane > 0 ? (double)width * lane : 0;
    return MPITOPO_SUCCESS;
}

/* The record of a subnet list's node: found through tab (GUID -> record + 1,
 * open addressing, size *cap a power of two) or added. */
static int lst_record(topo_t *t, int **tab, int *cap, const lst_end_t *e, int *rec)
{
    if (2 * (t->nrec + 1) > *cap) {
        int ncap = *cap ? 2 * *cap : 64;
        int *nt = ncap > 0 ? mpitopo__calloc((size_t)ncap, sizeof *nt) : NULL;
        if (!nt)
            return MPITOPO_NOMEM("the node table");
        for (int r = 0; r < t->nrec; r++) {
            uint64_t h = t->rec[r].guid * 0x9E3779B97F4A7C15ULL;
            while (nt[h & (uint64_t)(ncap - 1)])
                h++;
            nt[h & (uint64_t)(ncap - 1)] = r + 1;
        }
        mpitopo__free(*tab);
        *tab = nt;
        *cap = ncap;
    }
    uint64_t h = e->guid * 0x9E3779B97F4A7C15ULL;
    for (;; h++) {
        int x = (*tab)[h & (uint64_t)(*cap - 1)];
        if (x == 0)
            break;
        const record_t *r = &t->rec[x - 1];
        if (r->guid == e->guid) {
            if (r->is_switch != e->is_switch || r->nports != e->nports)
                return bad(&t->rd, t->rd.line, "node 0x%016llx is not described as at line %ld",
                           (unsigned long long)e->guid, r->line);
            *rec = x - 1;
            return MPITOPO_SUCCESS;
        }
    }
    char id[24];
    snprintf(id, sizeof id, "0x%016llx", (unsigned long long)e->guid);
    if (grow((void **)&t->rec, &t->caprec, t->nrec + 1, sizeof *t->rec))
        return MPITOPO_NOMEM("the node records");
    record_t *r = &t->rec[t->nrec];
    memset(r, 0, sizeof *r);
    int rc = pool_add(t, id, strlen(id), &r->id);
    if (!rc && e->desc_len > 0)
        rc = pool_add(t, e->desc, e->desc_len, &r->desc);
    else
        r->desc = r->id;
    if (rc)
        return rc;
    r->is_switch = e->is_switch;
    r->nports = e->nports;
    r->guid = e->guid;
    r->lid = e->is_switch ? e->lid : 0;
    r->line = t->rd.line;
    (*tab)[h & (uint64_t)(*cap - 1)] = t->nrec + 1;
    *rec = t->nrec++;
    return MPITOPO_SUCCESS;
}

/* Every line one direction of a link: its port line at the first end. */
static int lst_read(topo_t *t)
{
    int *tab = NULL, cap = 0, rc;
    while ((rc = next_line(&t->rd)) == 1) {
        const char *s = skip_blank(t->rd.text);
        rc = MPITOPO_SUCCESS;
        if (!*s || *s == '#')
            continue;
        lst_end_t a, b;
        int ra, rb, id;
        double rate = 0;
        char peer[24];
        if ((rc = lst_end(t, &s, &a)) || (rc = lst_end(t, &s, &b)) ||
            (rc = lst_rate(t, s, &rate)) || (rc = lst_record(t, &tab, &cap, &a, &ra)) ||
            (rc = lst_record(t, &tab, &cap, &b, &rb)))
            break;
        snprintf(peer, sizeof peer, "%s", t->pool + t->rec[rb].id); /* the pool may move */
        if ((rc = pool_add(t, peer, strlen(peer), &id)))
            break;
        if (grow((void **)&t->pl, &t->cappl, t->npl + 1, sizeof *t->pl)) {
            rc = MPITOPO_NOMEM("the port lines");
            break;
        }
        t->pl[t->npl++] = (portline_t){.record = ra,
                                       .port = a.port,
                                       .peer_port = b.port,
                                       .peer_id = id,
                                       .lid = a.is_switch ? 0 : a.lid,
                                       .rate = rate,
                                       .line = t->rd.line};
        t->rec[ra].count++;
    }
    mpitopo__free(tab);
    if (rc == MPITOPO_SUCCESS && t->nrec == 0)
        rc = bad(&t->rd, t->rd.line, "no link");
    return rc;
}

/* ibnetdiscover's output, or OpenSM's subnet list (its lines open with '{'). */
static int topo_read(topo_t *t)
{
    const char *first = t->rd.buf + strspn(t->rd.buf, " \t\r\n");
    if (*first == '{')
        return lst_read(t);
    int rc;
    while ((rc = next_line(&t->rd)) == 1) {
        const char *s = skip_blank(t->rd.text);
        rc = MPITOPO_SUCCESS;
        if (!*s || *s == '#')
            continue;
        if (*s == '[') {
            rc = port_line(t, s);
        } else if (strncmp(s, "Switch", 6) == 0 && (s[6] == ' ' || s[6] == '\t')) {
            rc = node_line(t, s + 6, 1);
        } else if (strncmp(s, "Ca", 2) == 0 && (s[2] == ' ' || s[2] == '\t')) {
            rc = node_line(t, s + 2, 0);
        } else if (strncmp(s, "Hca", 3) == 0 && (s[3] == ' ' || s[3] == '\t')) {
            rc = node_line(t, s + 3, 0);
        } else if (strncmp(s, "Rt", 2) == 0 && (s[2] == ' ' || s[2] == '\t')) {
            rc = bad(&t->rd, t->rd.line, "routers are not supported");
        } else if (strncmp(s, "switchguid=", 11) == 0 || strncmp(s, "caguid=", 7) == 0) {
            const char *p = strchr(s, '=') + 1;
            if (read_hex(&p, &t->pending_guid))
                return bad(&t->rd, t->rd.line, "the GUID is not a hexadecimal 0x... number");
            t->have_guid = 1;
        } else if (strncmp(s, "vendid=", 7) && strncmp(s, "devid=", 6) &&
                   strncmp(s, "sysimgguid=", 11) && strncmp(s, "Rtguid=", 7)) {
            rc = bad(&t->rd, t->rd.line, "unrecognised line \"%.32s\"", s);
        }
        if (rc)
            return rc;
    }
    if (rc)
        return rc;
    if (t->nrec == 0)
        return bad(&t->rd, t->rd.line, "no Switch or Ca record");
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------ resolving */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

/* The record named id, through the open-addressing table tab (size a power
 * of two, entries record + 1, 0 empty); -1 if none. */
static int lookup(const topo_t *t, const int *tab, int size, const char *id)
{
    for (uint64_t h = hash_str(id);; h++) {
        int e = tab[h & (uint64_t)(size - 1)];
        if (e == 0)
            return -1;
        if (strcmp(t->pool + t->rec[e - 1].id, id) == 0)
            return e - 1;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The records in the name table tab (size a power of two, at least twice
 * the records); names and GUIDs unique. */
static int index_records(topo_t *t, int *tab, int size)
{
    uint64_t *guids = mpitopo__malloc_array((size_t)t->nrec, 2 * sizeof *guids);
    if (!guids)
        return MPITOPO_NOMEM("the GUIDs");
    int ng = 0, rc = MPITOPO_SUCCESS;
    for (int r = 0; r < t->nrec && !rc; r++) {
        const char *id = t->pool + t->rec[r].id;
        int other = lookup(t, tab, size, id);
        if (other >= 0) {
            rc = bad(&t->rd, t->rec[r].line, "duplicate node \"%.64s\" (first at line %ld)", id,
                     t->rec[other].line);
            break;
        }
        uint64_t h = hash_str(id);
        while (tab[h & (uint64_t)(size - 1)])
            h++;
        tab[h & (uint64_t)(size - 1)] = r + 1;
        if (t->rec[r].guid) {
            guids[2 * ng] = t->rec[r].guid;
            guids[2 * ng++ + 1] = (uint64_t)r;
        }
    }
    qsort(guids, (size_t)ng, 2 * sizeof *guids, cmp_u64);
    for (int i = 1; i < ng && !rc; i++)
        if (guids[2 * i] == guids[2 * i - 2]) {
            long la = t->rec[guids[2 * i - 1]].line, lb = t->rec[guids[2 * i + 1]].line;
            rc = bad(&t->rd, la > lb ? la : lb, "duplicate GUID 0x%016llx (first at line %ld)",
                     (unsigned long long)guids[2 * i], la < lb ? la : lb);
        }
    mpitopo__free(guids);
    return rc;
}

/* Names and GUIDs unique; every port line's peer found, in range, and
 * listing the same link back. Fills pl->peer and pl->back. */
static int resolve(topo_t *t)
{
    int size = 16, rc = MPITOPO_SUCCESS;
    while (size < 2 * t->nrec)
        size *= 2;
    int *tab = mpitopo__calloc((size_t)size, sizeof *tab);
    int *slot = NULL; /* per record, from rbase[r]: the port line of port p, or -1 */
    int *rbase = mpitopo__malloc_array((size_t)t->nrec + 1, sizeof *rbase);
    if (!tab || !rbase) {
        rc = MPITOPO_NOMEM("the node table");
        goto done;
    }
    rbase[0] = 0;
    for (int r = 0; r < t->nrec; r++)
        rbase[r + 1] = rbase[r] + t->rec[r].nports + 1;
    if (!(slot = mpitopo__malloc_array((size_t)rbase[t->nrec], sizeof *slot))) {
        rc = MPITOPO_NOMEM("the port table");
        goto done;
    }
    memset(slot, 0xff, (size_t)rbase[t->nrec] * sizeof *slot);
    if ((rc = index_records(t, tab, size)))
        goto done;
    for (int i = 0; i < t->npl; i++) {
        portline_t *pl = &t->pl[i];
        const record_t *r = &t->rec[pl->record];
        if (pl->port > r->nports) {
            rc = bad(&t->rd, pl->line, "port %d of a node with %d ports", pl->port, r->nports);
            goto done;
        }
        if (slot[rbase[pl->record] + pl->port] >= 0) {
            rc = bad(&t->rd, pl->line, "port %d listed twice (first at line %ld)", pl->port,
                     t->pl[slot[rbase[pl->record] + pl->port]].line);
            goto done;
        }
        slot[rbase[pl->record] + pl->port] = i;
        pl->peer = lookup(t, tab, size, t->pool + pl->peer_id);
        if (pl->peer < 0) {
            rc = bad(&t->rd, pl->line, "port %d links to \"%.64s\", a node with no record",
                     pl->port, t->pool + pl->peer_id);
            goto done;
        }
        if (pl->peer_port > t->rec[pl->peer].nports) {
            rc = bad(&t->rd, pl->line, "port %d links to port %d of \"%.64s\", which has %d ports",
                     pl->port, pl->peer_port, t->pool + pl->peer_id, t->rec[pl->peer].nports);
            goto done;
        }
        if (pl->peer == pl->record) {
            rc = bad(&t->rd, pl->line, "port %d links the node to itself", pl->port);
            goto done;
        }
    }
    /* Both ends list the link. */
    for (int i = 0; i < t->npl; i++) {
        const portline_t *pl = &t->pl[i];
        int back = slot[rbase[pl->peer] + pl->peer_port];
        if (back < 0 || t->pl[back].peer != pl->record || t->pl[back].peer_port != pl->port) {
            rc = bad(&t->rd, pl->line,
                     "port %d links to \"%.64s\"[%d], whose record (line %ld) does not list "
                     "this link back",
                     pl->port, t->pool + pl->peer_id, pl->peer_port, t->rec[pl->peer].line);
            goto done;
        }
        t->pl[i].back = back;
    }
    for (int r = 0; r < t->nrec; r++)
        if (t->rec[r].count == 0) {
            rc = bad(&t->rd, t->rec[r].line, "the record of \"%.64s\" lists no connected port",
                     t->pool + t->rec[r].id);
            goto done;
        }
done:
    mpitopo__free(tab);
    mpitopo__free(slot);
    mpitopo__free(rbase);
    return rc;
}

/* ------------------------------------------------------------ numbering */

/* Natural order: digit runs compare as numbers ("node2" < "node10"). */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0')
                a++;
            while (*b == '0')
                b++;
            size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = memcmp(a, b, na);
            if (c)
                return c;
            a += na, b += nb;
        } else {
            if (*a != *b)
                return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++, b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_ends(const topo_t *t, int x, int y)
{
    const portline_t *a = &t->pl[x], *b = &t->pl[y];
    const char *da = t->pool + t->rec[a->record].desc, *db = t->pool + t->rec[b->record].desc;
    int c = natural_cmp(da, db);
    if (!c)
        c = strcmp(da, db);
    if (c)
        return c;
    if (a->record != b->record)
        return a->record < b->record ? -1 : 1;
    return a->port < b->port ? -1 : a->port > b->port;
}

/* Merge sort of the port line indices a[0..n) by cmp_ends (qsort has no
 * context argument); tmp has room for n. */
static void sort_ends(const topo_t *t, int *a, int *tmp, int n)
{
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp_ends(t, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
}

/* The switch GUID of a record: from its switchguid= line, else from an
 * ibnetdiscover name "S-<16 hex digits>"; 0 if neither. */
static uint64_t switch_guid(const topo_t *t, const record_t *r)
{
    if (r->guid)
        return r->guid;
    const char *id = t->pool + r->id;
    char hex[24];
    uint64_t g;
    if (strncmp(id, "S-", 2) != 0 || strlen(id + 2) > 16)
        return 0;
    snprintf(hex, sizeof hex, "0x%s", id + 2);
    const char *p = hex;
    return read_hex(&p, &g) == 0 && *p == '\0' ? g : 0;
}

/* The vertices, slots, channels, capacities and names of a resolved topology. */
static int build(topo_t *t, mpitopo_network_t *net, fabric_t *f, int **lidmap, int *maxlid)
{
    int nend = 0, nsw = 0, nslots = 0;
    for (int r = 0; r < t->nrec; r++) {
        if (t->rec[r].is_switch) {
            nsw++;
            nslots += t->rec[r].nports + 1;
        }
    }
    for (int i = 0; i < t->npl; i++) {
        if (t->rec[t->pl[i].record].is_switch)
            continue;
        if (t->pl[i].lid == 0)
            return bad(&t->rd, t->pl[i].line,
                       "the CA port has no LID (ibnetdiscover's comment \"# lid N lmc M\")");
        nend++;
    }
    nslots += nend;
    if (nend == 0)
        return bad(&t->rd, t->rd.line, "no CA port: the fabric has no end node");
    f->nend = nend;
    f->nsw = nsw;
    int nv = nend + nsw, rc = MPITOPO_SUCCESS;
    int *order = mpitopo__malloc_array((size_t)nend, 2 * sizeof *order);
    f->pbase = mpitopo__malloc_array((size_t)nv + 1, sizeof *f->pbase);
    f->peer = mpitopo__malloc_array((size_t)nslots, sizeof *f->peer);
    f->peerslot = mpitopo__malloc_array((size_t)nslots, sizeof *f->peerslot);
    f->chan = mpitopo__malloc_array((size_t)nslots, sizeof *f->chan);
    f->name = mpitopo__malloc_array((size_t)nv, sizeof *f->name);
    f->lid = mpitopo__malloc_array((size_t)nv, sizeof *f->lid);
    f->caport = mpitopo__malloc_array((size_t)nend, sizeof *f->caport);
    if (!order || !f->pbase || !f->peer || !f->peerslot || !f->chan || !f->name || !f->lid ||
        !f->caport) {
        rc = MPITOPO_NOMEM("the fabric");
        goto done;
    }
    int k = 0;
    for (int i = 0; i < t->npl; i++)
        if (!t->rec[t->pl[i].record].is_switch)
            order[k++] = i;
    sort_ends(t, order, order + nend, nend);
    for (int e = 0; e < nend; e++) {
        portline_t *pl = &t->pl[order[e]];
        pl->vertex = e;
        f->pbase[e] = e;
        f->name[e] = t->rec[pl->record].desc;
        f->lid[e] = pl->lid;
        f->caport[e] = pl->port;
    }
    int v = nend, base = nend;
    for (int r = 0; r < t->nrec; r++) {
        record_t *rec = &t->rec[r];
        if (!rec->is_switch)
            continue;
        rec->vertex = v;
        f->pbase[v] = base;
        f->name[v] = rec->desc;
        f->lid[v] = rec->lid;
        base += rec->nports + 1;
        v++;
    }
    f->pbase[nv] = base;
    memset(f->peer, 0xff, (size_t)nslots * sizeof *f->peer);
    for (int i = 0; i < t->npl; i++) {
        const portline_t *pl = &t->pl[i], *back = &t->pl[pl->back];
        const record_t *r = &t->rec[pl->record], *pr = &t->rec[pl->peer];
        int s = r->is_switch ? f->pbase[r->vertex] + pl->port : pl->vertex;
        f->peer[s] = pr->is_switch ? pr->vertex : back->vertex;
        f->peerslot[s] = pr->is_switch ? f->pbase[pr->vertex] + back->port : back->vertex;
    }
    /* Groups: the end nodes on one switch (or one cable, with no switch). */
    f->group = mpitopo__malloc_array((size_t)nend, sizeof *f->group);
    int *first = mpitopo__malloc_array((size_t)nv, sizeof *first);
    if (!f->group || !first) {
        mpitopo__free(first);
        rc = MPITOPO_NOMEM("the groups");
        goto done;
    }
    for (v = 0; v < nv; v++)
        first[v] = -1;
    for (int e = 0; e < nend; e++) {
        int w = f->peer[e];
        if (w < nend) /* two end nodes on one cable */
            f->group[e] = w < e ? f->group[w] : e;
        else
            f->group[e] = first[w] >= 0 ? first[w] : (first[w] = e);
        f->ngroups += f->group[e] == e;
    }
    mpitopo__free(first);
    int64_t nch = 0;
    for (int s = 0; s < nslots; s++)
        f->chan[s] = f->peer[s] >= 0 ? nch++ : -1;
    net->nchannels = nch;
    f->chslot = mpitopo__malloc_array((size_t)nch, sizeof *f->chslot);
    net->chcap = mpitopo__malloc_array((size_t)nch, sizeof *net->chcap);
    if (!f->chslot || !net->chcap) {
        rc = MPITOPO_NOMEM("the channels");
        goto done;
    }
    for (int i = 0; i < t->npl; i++) {
        const portline_t *pl = &t->pl[i], *back = &t->pl[pl->back];
        const record_t *r = &t->rec[pl->record];
        int s = r->is_switch ? f->pbase[r->vertex] + pl->port : pl->vertex;
        double rate = pl->rate > 0 ? pl->rate : back->rate > 0 ? back->rate : FAB_DEFAULT_RATE;
        f->chslot[f->chan[s]] = s;
        net->chcap[f->chan[s]] = rate;
    }
    /* LIDs: unique over end nodes and switches. */
    *maxlid = 0;
    for (v = 0; v < nv; v++)
        *maxlid = f->lid[v] > *maxlid ? f->lid[v] : *maxlid;
    if (!(*lidmap = mpitopo__malloc_array((size_t)*maxlid + 1, sizeof **lidmap))) {
        rc = MPITOPO_NOMEM("the LID table");
        goto done;
    }
    memset(*lidmap, 0xff, ((size_t)*maxlid + 1) * sizeof **lidmap);
    for (v = 0; v < nv; v++) {
        int l = f->lid[v];
        if (l == 0)
            continue;
        if ((*lidmap)[l] >= 0) {
            long line = v < nend ? t->pl[order[v]].line : 0;
            for (int r = 0; r < t->nrec && !line; r++)
                if (t->rec[r].is_switch && t->rec[r].vertex == v)
                    line = t->rec[r].line;
            rc = bad(&t->rd, line,
                     "LID %d is given to both \"%.64s\" and \"%.64s\"", l,
                     t->pool + f->name[(*lidmap)[l]], t->pool + f->name[v]);
            goto done;
        }
        (*lidmap)[l] = v;
    }
done:
    mpitopo__free(order);
    return rc;
}

/* ------------------------------------------------------------ routes */

typedef struct routes {
    reader_t rd;
    uint64_t *guids; /* sorted pairs (GUID, switch vertex) */
    int nguids;
    long *swline;   /* per switch: the line of its table's header, 0 if none */
    int *entline;   /* per switch and end node: the line of the entry, as lft */
} routes_t;

static int switch_by_guid(const routes_t *ro, uint64_t g)
{
    int lo = 0, hi = ro->nguids;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ro->guids[2 * mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ro->nguids && ro->guids[2 * lo] == g ? (int)ro->guids[2 * lo + 1] : -1;
}

/* "Unicast lids [...] of switch ... guid 0x... (...):", then "0xLID PORT ..."
 * entries; every other line (column headings, "N lids dumped", multicast
 * tables) is skipped. */
static int routes_read(routes_t *ro, const fabric_t *f, const char *pool, const int *lidmap,
                       int maxlid)
{
    int rc, sw = -1, multicast = 0;
    while ((rc = next_line(&ro->rd)) == 1) {
        const char *s = skip_blank(ro->rd.text);
        if (strncmp(s, "Unicast lids", 12) == 0) {
            const char *g = strstr(s, " guid ");
            uint64_t guid;
            if (!g || (g = skip_blank(g + 6), read_hex(&g, &guid)))
                return bad(&ro->rd, ro->rd.line, "the table's header names no \"guid 0x...\"");
            int v = switch_by_guid(ro, guid);
            if (v < 0)
                return bad(&ro->rd, ro->rd.line,
                           "switch GUID 0x%016llx is not a switch of the topology file",
                           (unsigned long long)guid);
            sw = v - f->nend;
            if (ro->swline[sw])
                return bad(&ro->rd, ro->rd.line,
                           "a second table of switch \"%.64s\" (the first at line %ld)",
                           pool + f->name[v], ro->swline[sw]);
            ro->swline[sw] = ro->rd.line;
            multicast = 0;
            continue;
        }
        if (strncmp(s, "Multicast", 9) == 0) {
            multicast = 1;
            continue;
        }
        if (strncmp(s, "0x", 2) != 0 || multicast)
            continue;
        if (sw < 0)
            return bad(&ro->rd, ro->rd.line, "a table entry before any \"Unicast lids ... "
                                             "of switch ... guid ...\" header");
        uint64_t lid;
        long port;
        if (read_hex(&s, &lid) || lid > 0xFFFF || (*s != ' ' && *s != '\t') ||
            (s = skip_blank(s), read_int(&s, 0, 255, &port)) || (*s && *s != ' ' && *s != '\t'))
            return bad(&ro->rd, ro->rd.line, "expected \"0xLID PORT\" with PORT in [0, 255]");
        int e = lid <= (uint64_t)maxlid ? lidmap[lid] : -1;
        if (e < 0 || e >= f->nend || port == 255)
            continue; /* a switch's LID, one no CA port has, or OpenSM's "no path" */
        int v = f->nend + sw, np = f->pbase[v + 1] - f->pbase[v] - 1;
        if (port == 0 || port > np || f->peer[f->pbase[v] + port] < 0)
            return bad(&ro->rd, ro->rd.line,
                       "switch \"%.64s\" sends LID %d (\"%.64s\") to port %ld, %s",
                       pool + f->name[v], (int)lid, pool + f->name[e], port,
                       port == 0 ? "the switch itself"
                       : port > np ? "beyond its ports"
                                   : "which is not connected");
        size_t at = (size_t)sw * (size_t)f->nend + (size_t)e;
        if (f->lft[at])
            return bad(&ro->rd, ro->rd.line, "LID %d listed twice in this table (first at "
                       "line %d)", (int)lid, ro->entline[at]);
        f->lft[at] = (unsigned char)port;
        ro->entline[at] = (int)(ro->rd.line > INT_MAX ? INT_MAX : ro->rd.line);
    }
    return rc;
}

/* Walk every route to every end node once, with the hops from each switch
 * memoised per destination: O(switches * end nodes). Sets max_route. */
static int verify(const routes_t *ro, const fabric_t *f, const char *pool, mpitopo_network_t *net)
{
    int nend = f->nend, nsw = f->nsw, maxr = 0, rc = MPITOPO_SUCCESS;
    int *hops = mpitopo__malloc_array((size_t)nsw + 1, sizeof *hops);
    int *stamp = mpitopo__malloc_array((size_t)nsw + 1, sizeof *stamp);
    int *stack = mpitopo__malloc_array((size_t)nsw + 1, sizeof *stack);
    if (!hops || !stamp || !stack) {
        rc = MPITOPO_NOMEM("the route check");
        goto done;
    }
    /* stamp[s] = 2d + 1: hops[s] known for destination d; 2d + 2: on the walk now. */
    for (int s = 0; s < nsw; s++)
        stamp[s] = 0;
    for (int d = 0; d < nend; d++) {
        for (int src = 0; src < nend; src++) {
            if (src == d)
                continue;
            int v = f->peer[src], len;
            if (v < nend) {
                if (v != d) {
                    rc = MPITOPO_FAIL_AS(MPITOPO_ERR_FORMAT, FAB_FN,
                                         "%s: \"%.64s\" is linked to \"%.64s\" only and cannot "
                                         "reach \"%.64s\"",
                                         "the topology file", pool + f->name[src],
                                         pool + f->name[v], pool + f->name[d]);
                    goto done;
                }
                len = 1;
            } else {
                int n = 0, s = v - nend, h = 0;
                while (stamp[s] != 2 * d + 1) {
                    if (stamp[s] == 2 * d + 2) {
                        const int *at = &ro->entline[(size_t)stack[n - 1] * (size_t)nend + d];
                        rc = bad(&ro->rd, *at,
                                 "the route to LID %d (\"%.64s\") loops back to switch "
                                 "\"%.64s\"",
                                 f->lid[d], pool + f->name[d], pool + f->name[nend + s]);
                        goto done;
                    }
                    stamp[s] = 2 * d + 2;
                    stack[n++] = s;
                    size_t at = (size_t)s * (size_t)nend + (size_t)d;
                    int port = f->lft[at];
                    if (port == 0) {
                        rc = ro->swline[s]
                                 ? bad(&ro->rd, ro->swline[s],
                                       "the table of switch \"%.64s\" has no entry for LID %d "
                                       "(\"%.64s\")",
                                       pool + f->name[nend + s], f->lid[d], pool + f->name[d])
                                 : MPITOPO_FAIL_AS(MPITOPO_ERR_FORMAT, FAB_FN,
                                                   "%s: no table for switch \"%.64s\", on the "
                                                   "route to \"%.64s\"",
                                                   ro->rd.file, pool + f->name[nend + s],
                                                   pool + f->name[d]);
                        goto done;
                    }
                    int w = f->peer[f->pbase[nend + s] + port];
                    if (w < nend) {
                        if (w != d) {
                            rc = bad(&ro->rd, ro->entline[at],
                                     "switch \"%.64s\" sends LID %d (\"%.64s\") out of port %d "
                                     "to \"%.64s\"",
                                     pool + f->name[nend + s], f->lid[d], pool + f->name[d],
                                     port, pool + f->name[w]);
                            goto done;
                        }
                        h = 1;
                        break;
                    }
                    s = w - nend;
                }
                /* Ended at a switch already known (not at d): the last one
                 * walked is one hop further; unwind, one hop more each. */
                if (stamp[s] == 2 * d + 1)
                    h = hops[s] + 1;
                while (n > 0) {
                    int u = stack[--n];
                    hops[u] = h++;
                    stamp[u] = 2 * d + 1;
                }
                len = 1 + hops[v - nend];
            }
            maxr = len > maxr ? len : maxr;
        }
    }
    net->max_route = maxr;
done:
    mpitopo__free(hops);
    mpitopo__free(stamp);
    mpitopo__free(stack);
    return rc;
}

/* ------------------------------------------------------------ import */

static void fabric_release(fabric_t *f)
{
    if (!f)
        return;
    mpitopo__free(f->pbase);
    mpitopo__free(f->peer);
    mpitopo__free(f->peerslot);
    mpitopo__free(f->chan);
    mpitopo__free(f->chslot);
    mpitopo__free(f->name);
    mpitopo__free(f->lid);
    mpitopo__free(f->caport);
    mpitopo__free(f->group);
    mpitopo__free(f->lft);
    mpitopo__free(f->pool);
    mpitopo__free(f);
}

/* The routes file read into f->lft against the built topology, then checked. */
static int import_routes(const char *routes, topo_t *t, fabric_t *f, const int *lidmap,
                         int maxlid, mpitopo_network_t *net)
{
    routes_t ro;
    memset(&ro, 0, sizeof ro);
    size_t cells = (size_t)f->nsw * (size_t)f->nend;
    int rc = slurp(&ro.rd, routes);
    if (rc)
        goto done;
    ro.guids = mpitopo__malloc_array((size_t)f->nsw + 1, 2 * sizeof *ro.guids);
    ro.swline = mpitopo__calloc((size_t)f->nsw + 1, sizeof *ro.swline);
    ro.entline = mpitopo__malloc_array(cells + 1, sizeof *ro.entline);
    f->lft = mpitopo__calloc(cells + 1, 1);
    if (!ro.guids || !ro.swline || !ro.entline || !f->lft) {
        rc = MPITOPO_NOMEM("the forwarding tables");
        goto done;
    }
    for (int r = 0; r < t->nrec; r++) {
        uint64_t g = t->rec[r].is_switch ? switch_guid(t, &t->rec[r]) : 0;
        if (g) {
            ro.guids[2 * ro.nguids] = g;
            ro.guids[2 * ro.nguids++ + 1] = (uint64_t)t->rec[r].vertex;
        }
    }
    qsort(ro.guids, (size_t)ro.nguids, 2 * sizeof *ro.guids, cmp_u64);
    rc = routes_read(&ro, f, t->pool, lidmap, maxlid);
    if (rc == MPITOPO_SUCCESS)
        rc = verify(&ro, f, t->pool, net);
done:
    mpitopo__free(ro.rd.buf);
    mpitopo__free(ro.guids);
    mpitopo__free(ro.swline);
    mpitopo__free(ro.entline);
    return rc;
}

/* Fill net (zeroed but for its capacity) from the two files; on error net
 * holds nothing to release. */
static int fabric_load(const char *topology, const char *routes, mpitopo_network_t *net)
{
    topo_t t;
    memset(&t, 0, sizeof t);
    int *lidmap = NULL, maxlid = 0;
    fabric_t *f = mpitopo__calloc(1, sizeof *f);
    int rc = !f ? MPITOPO_NOMEM("the fabric") : slurp(&t.rd, topology);
    if (rc == MPITOPO_SUCCESS)
        rc = topo_read(&t);
    if (rc == MPITOPO_SUCCESS)
        rc = resolve(&t);
    if (rc == MPITOPO_SUCCESS)
        rc = build(&t, net, f, &lidmap, &maxlid);
    if (rc == MPITOPO_SUCCESS)
        rc = import_routes(routes, &t, f, lidmap, maxlid, net);
    if (rc == MPITOPO_SUCCESS) {
        f->pool = t.pool;
        t.pool = NULL;
        net->ops = &mpitopo__net_fabric_ops;
        net->kind = MPITOPO__NET_FABRIC;
        net->nnodes = f->nend;
        net->capacity = FAB_DEFAULT_RATE;
        net->ext = f;
    } else {
        fabric_release(f);
        mpitopo__free(net->chcap);
        net->chcap = NULL;
        net->nchannels = 0;
        net->max_route = 0;
    }
    mpitopo__free(lidmap);
    mpitopo__free(t.rd.buf);
    mpitopo__free(t.rec);
    mpitopo__free(t.pl);
    mpitopo__free(t.pool);
    return rc;
}

static int net_parse(const char *desc, const char *s, size_t len, mpitopo_network_t *net)
{
    const char *comma = memchr(s, ',', len);
    if (!comma || comma == s || comma + 1 == s + len)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, "mpitopo_network_from_string",
                               "\"%.64s\": expected fabric:TOPOLOGY,ROUTES (two file names)",
                               desc);
    size_t n1 = (size_t)(comma - s), n2 = len - n1 - 1;
    char *topology = mpitopo__malloc(n1 + 1), *routes = mpitopo__malloc(n2 + 1);
    int rc;
    if (!topology || !routes) {
        rc = MPITOPO_NOMEM("the file names");
    } else {
        memcpy(topology, s, n1);
        topology[n1] = '\0';
        memcpy(routes, comma + 1, n2);
        routes[n2] = '\0';
        rc = fabric_load(topology, routes, net);
    }
    mpitopo__free(topology);
    mpitopo__free(routes);
    return rc;
}

int mpitopo_network_from_fabric(const char *topology, const char *routes,
                                mpitopo_network_t **network)
{
    if (!network)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, FAB_FN, "network is NULL");
    *network = NULL;
    if (!topology || !routes)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, FAB_FN, "%s is NULL",
                               !topology ? "topology" : "routes");
    mpitopo_network_t *net = mpitopo__calloc(1, sizeof *net);
    if (!net)
        return MPITOPO_NOMEM("the network");
    int rc = fabric_load(topology, routes, net);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__free(net);
        return rc;
    }
    *network = net;
    return MPITOPO_SUCCESS;
}

/* ------------------------------------------------------------ queries */

static int net_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    const fabric_t *f = net->ext;
    int n = 0, v = src;
    /* Checked at import: every route reaches dst within max_route channels. */
    while (v != dst && n < net->max_route) {
        int slot = v < f->nend ? f->pbase[v]
                               : f->pbase[v] + f->lft[(size_t)(v - f->nend) * (size_t)f->nend +
                                                      (size_t)dst];
        ch[n++] = f->chan[slot];
        v = f->peer[slot];
    }
    return n;
}

/* A vertex as channel names show it: a switch's description, the host
 * name (the description's first word) of an end node. */
static void vertex_label(const fabric_t *f, int v, char *out, size_t size)
{
    const char *s = f->pool + f->name[v];
    size_t n = v < f->nend ? strcspn(s, " \t") : strlen(s);
    if (n == 0)
        n = strlen(s);
    snprintf(out, size, "%.*s", (int)(n > 200 ? 200 : n), s);
}

/* The slot's port as a name shows it: a switch port, or the CA port. */
static int slot_port(const fabric_t *f, int slot, int v)
{
    return v < f->nend ? f->caport[v] : slot - f->pbase[v];
}

static int slot_vertex(const fabric_t *f, int slot)
{
    int lo = 0, hi = f->nend + f->nsw - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (f->pbase[mid] <= slot)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void net_channel_name(const mpitopo_network_t *net, int64_t ch, char *name,
                                  size_t size)
{
    const fabric_t *f = net->ext;
    int slot = (int)f->chslot[ch], v = slot_vertex(f, slot), w = f->peer[slot];
    char a[208], b[208];
    vertex_label(f, v, a, sizeof a);
    vertex_label(f, w, b, sizeof b);
    snprintf(name, size, "%s/p%d->%s/p%d", a, slot_port(f, slot, v), b,
             slot_port(f, f->peerslot[slot], w));
}

static void net_node_name(const mpitopo_network_t *net, int node, char *name, size_t size)
{
    const fabric_t *f = net->ext;
    snprintf(name, size, "%s", f->pool + f->name[node]);
}

/* One group level, "switch", the end nodes on one switch, when there are
 * several such groups and not every end node is alone in its own. */
static int net_groups(const mpitopo_network_t *net, int64_t *size, const char **names)
{
    const fabric_t *f = net->ext;
    if (f->ngroups <= 1 || f->ngroups >= f->nend)
        return 0;
    size[0] = 0;
    names[0] = "switch";
    return 1;
}

static int64_t net_group(const mpitopo_network_t *net, int level, int node)
{
    const fabric_t *f = net->ext;
    (void)level;
    return f->group[node];
}

static void net_release(mpitopo_network_t *net)
{
    fabric_release(net->ext);
    net->ext = NULL;
}

const mpitopo__net_ops_t mpitopo__net_fabric_ops = {
    .name = "fabric", .kind = MPITOPO__NET_FABRIC, .parse = net_parse, .route = net_route,
    .channel_name = net_channel_name, .node_name = net_node_name, .groups = net_groups,
    .group = net_group, .release = net_release};
