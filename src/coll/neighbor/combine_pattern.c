/*
 * Message combining, phase 1 (S. H. Mirsadeghi, PhD thesis, Queen's
 * University 2017, section 6.2.2, Alg. 6.1 and 6.2): which friend each
 * process pairs with in which round, which common out-neighbours it then
 * serves, and which combined messages it receives. Computed once per
 * communicator, collectively, on a private duplicate (so that it cannot
 * match messages of operations in flight); O(degree^2) memory: the matrix
 * M holds the in-neighbour list of every out-neighbour.
 *
 * The thesis does not say how the iterations of Alg. 6.1 line up across
 * processes. Here every process runs numbered rounds, with no barrier:
 * (1) while it has friends, pair (Alg. 6.2) with them, all of whom are in
 * the same round since friendship is symmetric; (2) send one notification
 * (none, on, off, done) to every active out-neighbour and receive one from
 * every active in-neighbour; (3) send its active in-list to its active
 * in-neighbours, receive theirs from its active out-neighbours, and update
 * M and the friends. A process that has left the loop keeps doing (2) and
 * (3) until it has no active in-neighbour (run_protocol).
 *
 * Self edges and MPI_PROC_NULL never take part (they stay direct).
 *
 * On dense graphs the HOPS pattern (combine.h) replaces the pairing: see
 * choose_mode for the rule and bench/RESULTS.md section 9 for why.
 */
#include "coll/neighbor/combine.h"
#include "core/env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpitopo__combine_parse_threshold(const char *v)
{
    long long x;
    return mpitopo__parse_long(v, strlen(v), 1, 1 << 30, &x) == 0 ? (int)x : -2;
}

/* MPITOPO_COMBINE_THRESHOLD, read once (-1 unset, -2 not a number >= 1). */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_threshold = -1;
static char env_threshold_text[64];

static void read_env(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_COMBINE_THRESHOLD);
    if (v && *v) {
        snprintf(env_threshold_text, sizeof env_threshold_text, "%s", v);
        env_threshold = mpitopo__combine_parse_threshold(v);
    }
}

int mpitopo__combine_threshold(const mpitopo__nbr_t *n, int *theta, const char *func)
{
    if (n->info_threshold == -2)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "comm's info key mpitopo_combine_threshold = \"%s\" must be an "
                                 "integer >= 1",
                                 n->info_threshold_text);
    pthread_once(&env_once, read_env);
    if (n->info_threshold < 0 && env_threshold == -2)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "MPITOPO_COMBINE_THRESHOLD = \"%s\" must be an integer >= 1",
                                 env_threshold_text);
    *theta = n->info_threshold > 0 ? n->info_threshold : env_threshold > 0 ? env_threshold : 4;
    return MPITOPO_SUCCESS;
}

/* Message kinds of the protocol; every kind keeps FIFO order between two
 * processes, and both sides run the same sequence per kind. */
enum { TAG_SIZE = 1, TAG_ROW, TAG_CHOICE, TAG_STATE, TAG_NOTE, TAG_ACTIVE, TAG_HOPN, TAG_HOP };
enum { NOTE_NONE = 0, NOTE_ON, NOTE_OFF, NOTE_DONE };
enum { ST_SEARCHING = 0, ST_PAIRED, ST_TERMINAL };

/* Under SimGrid SMPI the protocol's sends are synchronous. Its standard
 * small sends are "detached", and SimGrid 3.32 keeps every detached send
 * in flight, of all simulated ranks, in one list that each completion
 * walks: the protocol's millions of 4-byte messages made the 1024-rank
 * set-up run for hours (perf: 93 % in that list's remove, called from
 * CommImpl::finish). Synchronous sends are not detached. Every send here
 * meets a posted receive, so only the simulated set-up time changes. */
#ifdef MPITOPO_SMPI
#define SETUP_ISEND PMPI_Issend
#else
#define SETUP_ISEND PMPI_Isend
#endif

typedef struct pat {
    MPI_Comm comm;
    int me, size, theta;
    int no, ni;        /* distinct out- and in-neighbours (no self) */
    int *out, *oact;   /* no each */
    int *in, *iact;    /* ni each */
    int *mylist, mylen; /* sources without self, sorted, duplicates kept */
    int *roff;         /* no + 1: row j of M is entries roff[j]..roff[j+1] */
    int *rrank, *rmult, *ract;
    int nf, *frank, *fw; /* friends, ascending rank, and weights */
    struct mpitopo__comb *c;
} pat_t;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorted copy of list without self and MPI_PROC_NULL (duplicates kept). */
static int *clean_list(const int *list, int n, int me, int *len)
{
    int *l = mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof(int)), k = 0;
    if (!l)
        return NULL;
    for (int i = 0; i < n; i++)
        if (list[i] != me && list[i] != MPI_PROC_NULL)
            l[k++] = list[i];
    qsort(l, (size_t)k, sizeof(int), cmp_int);
    *len = k;
    return l;
}

/* Distinct values of a sorted list, in place; returns how many. */
static int distinct(int *l, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || l[k - 1] != l[i])
            l[k++] = l[i];
    return k;
}

/*
 * One exchange: send scount ints to each of to[0..nto) (from sbuf, or
 * sbuf + j * scount when stride is set) and receive counts[j] ints (scount
 * when counts is NULL) from each of from[0..nfrom) into rbuf, packed.
 */
static int xchg(const pat_t *p, int tag, int nto, const int *to, const int *sbuf, int stride,
                int scount, int nfrom, const int *from, int *rbuf, const int *counts)
{
    MPI_Request *q = mpitopo__malloc_array((size_t)(nto + nfrom + 1), sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS, n = 0;
    size_t at = 0;
    for (int j = 0; j < nfrom && rc == MPI_SUCCESS; j++) {
        int cnt = counts ? counts[j] : scount;
        rc = PMPI_Irecv(rbuf + at, cnt, MPI_INT, from[j], tag, p->comm, &q[n++]);
        at += (size_t)cnt;
    }
    for (int j = 0; j < nto && rc == MPI_SUCCESS; j++)
        rc = SETUP_ISEND(sbuf + (stride ? (size_t)j * scount : 0), scount, MPI_INT, to[j], tag,
                        p->comm, &q[n++]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    mpitopo__free(q);
    return rc;
}

/* The ranks of list whose flag is set, into out; returns how many. */
static int active(const int *list, const int *flag, int n, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (flag[i])
            out[k++] = list[i];
    return k;
}

/* M: row j is the source list of out-neighbour j, compressed to distinct
 * ranks (which is that neighbour's own `in` order) with multiplicities. */
static int build_matrix(pat_t *p)
{
    int *len = mpitopo__calloc((size_t)p->no + 1, sizeof(int));
    if (!len)
        return MPI_ERR_NO_MEM;
    int rc = xchg(p, TAG_SIZE, p->ni, p->in, &p->mylen, 0, 1, p->no, p->out, len, NULL);
    size_t total = 0;
    for (int j = 0; j < p->no; j++)
        total += (size_t)len[j];
    p->roff = mpitopo__calloc((size_t)p->no + 1, sizeof(int));
    p->rrank = mpitopo__malloc_array(total + 1, sizeof(int));
    p->rmult = mpitopo__malloc_array(total + 1, sizeof(int));
    p->ract = mpitopo__malloc_array(total + 1, sizeof(int));
    int *raw = mpitopo__malloc_array(total + 1, sizeof(int));
    if (rc == MPI_SUCCESS && (!p->roff || !p->rrank || !p->rmult || !p->ract || !raw))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = xchg(p, TAG_ROW, p->ni, p->in, p->mylist, 0, p->mylen, p->no, p->out, raw, len);
    size_t at = 0, k = 0;
    for (int j = 0; j < p->no && rc == MPI_SUCCESS; j++) {
        p->roff[j] = (int)k;
        for (int e = 0; e < len[j]; e++, at++) {
            if (k > (size_t)p->roff[j] && p->rrank[k - 1] == raw[at]) {
                p->rmult[k - 1]++;
                continue;
            }
            p->rrank[k] = raw[at];
            p->rmult[k] = 1;
            p->ract[k++] = 1;
        }
    }
    if (p->roff)
        p->roff[p->no] = (int)k;
    mpitopo__free(raw);
    mpitopo__free(len);
    return rc;
}

/* Find_friends: g is a friend when it appears in at least theta active
 * rows (w(p,g) common active out-neighbours). */
static int find_friends(pat_t *p)
{
    int total = p->roff[p->no], k = 0;
    int *all = mpitopo__malloc_array((size_t)total + 1, sizeof(int));
    if (!all)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < p->no; j++)
        for (int e = p->roff[j]; p->oact[j] && e < p->roff[j + 1]; e++)
            if (p->ract[e] && p->rrank[e] != p->me)
                all[k++] = p->rrank[e];
    qsort(all, (size_t)k, sizeof(int), cmp_int);
    p->nf = 0;
    for (int i = 0; i < k;) {
        int j = i;
        while (j < k && all[j] == all[i])
            j++;
        if (j - i >= p->theta) {
            p->frank[p->nf] = all[i];
            p->fw[p->nf++] = j - i;
        }
        i = j;
    }
    mpitopo__free(all);
    return MPI_SUCCESS;
}

/* Heaviest friend among those with in[i] set; ties to the lowest rank
 * (friends are in ascending rank). -1 when none. */
static int best(const pat_t *p, const int *in)
{
    int b = -1;
    for (int i = 0; i < p->nf; i++)
        if (in[i] && (b < 0 || p->fw[i] > p->fw[b]))
            b = i;
    return b;
}

typedef struct pairing {
    int *cand, *act, *prev, *cho, *st, *to;
} pairing_t;

/* Alg 6.2, one choice: index of the friend to propose to, or -1 (then
 * *terminal is set). */
static int choose(const pat_t *p, pairing_t *s, int iter, int f_old, int *terminal)
{
    if (iter == 1)
        return best(p, s->cand);
    if (f_old >= 0 && s->act[f_old] && p->me < p->frank[f_old])
        return f_old; /* retry: the rank condition prevents livelock */
    int g = -1;
    for (int i = 0; i < p->nf; i++)
        if (s->act[i] && p->frank[i] < p->me && s->prev[i] == p->me &&
            (g < 0 || p->fw[i] > p->fw[g]))
            g = i;
    if (g >= 0)
        return g; /* g retries us: mutual next round */
    for (int i = 0; i < p->nf; i++)
        s->cand[i] = s->cand[i] && s->act[i] && i != f_old;
    g = best(p, s->cand);
    *terminal = g < 0;
    return g;
}

/* Alg 6.2 (thesis section 6.2.2, "Pairing friend processes") with
 * separate candidate and messaging sets: the thesis drops f_old from the
 * one set F it also messages, so p would stop talking to f_old while f_old
 * still talks to p; here the active set changes only through state
 * messages both ends see. The friend paired with, or -1. */
static int pair_friend(pat_t *p, pairing_t *s, int *partner)
{
    for (int i = 0; i < p->nf; i++) {
        s->cand[i] = s->act[i] = 1;
        s->prev[i] = -1;
    }
    int paired = 0, terminal = 0, f = -1, rc = MPI_SUCCESS;
    for (int iter = 1; !paired && !terminal && rc == MPI_SUCCESS; iter++) {
        f = choose(p, s, iter, f, &terminal);
        int mine = f >= 0 ? p->frank[f] : -1, nact = active(p->frank, s->act, p->nf, s->to);
        rc = xchg(p, TAG_CHOICE, nact, s->to, &mine, 0, 1, nact, s->to, s->cho, NULL);
        /* Spread the answers (packed over the active friends) to friend
         * indices; the same order on both ends. */
        for (int i = p->nf - 1, k = nact - 1; i >= 0 && rc == MPI_SUCCESS; i--)
            s->cho[i] = s->act[i] ? s->cho[k--] : -1;
        paired = rc == MPI_SUCCESS && !terminal && f >= 0 && s->cho[f] == p->me;
        int state = paired ? ST_PAIRED : terminal ? ST_TERMINAL : ST_SEARCHING;
        if (rc == MPI_SUCCESS)
            rc = xchg(p, TAG_STATE, nact, s->to, &state, 0, 1, nact, s->to, s->st, NULL);
        for (int i = p->nf - 1, k = nact - 1; i >= 0 && rc == MPI_SUCCESS; i--)
            if (s->act[i]) {
                s->act[i] = s->st[k--] == ST_SEARCHING;
                s->prev[i] = s->cho[i];
            }
    }
    *partner = paired ? p->frank[f] : -1;
    return rc;
}

static int row_has(const pat_t *p, int j, int rank, int *mult)
{
    for (int e = p->roff[j]; e < p->roff[j + 1]; e++)
        if (p->rrank[e] == rank && p->ract[e]) {
            *mult = p->rmult[e];
            return 1;
        }
    return 0;
}

/* Record the combining step with friend f in round t: CN = the active
 * rows holding f, ascending; the lower rank takes the first half. Marks
 * the notes (ON/OFF) of the members and deactivates them. */
static int add_step(pat_t *p, int t, int f, int *notes)
{
    struct mpitopo__comb *c = p->c;
    mpitopo__comb_step_t *st = &c->steps[c->nsteps];
    st->cn = mpitopo__malloc_array((size_t)3 * (size_t)(p->no + 1), sizeof(int));
    if (!st->cn)
        return MPI_ERR_NO_MEM;
    st->mine = st->cn + p->no + 1;
    st->theirs = st->mine + p->no + 1;
    st->t = t;
    st->f = f;
    st->k = 0;
    for (int j = 0; j < p->no; j++) {
        int m;
        if (p->oact[j] && row_has(p, j, f, &st->theirs[st->k]) && row_has(p, j, p->me, &m)) {
            st->mine[st->k] = m;
            st->cn[st->k++] = j; /* index for now */
        }
    }
    int h = (st->k + 1) / 2;
    st->on_lo = p->me < f ? 0 : h;
    st->on_hi = p->me < f ? h : st->k;
    for (int i = 0; i < st->k; i++) {
        int j = st->cn[i];
        notes[3 * j + 1] = i >= st->on_lo && i < st->on_hi ? NOTE_ON : NOTE_OFF;
        notes[3 * j + 2] = f;
        st->cn[i] = p->out[j];
    }
    c->nsteps++;
    return MPI_SUCCESS;
}

/* A notification from in-neighbour i (round t). */
static int take_note(pat_t *p, int i, const int *note, int t)
{
    if (note[0] != t)
        return MPI_ERR_INTERN; /* the protocol lost step: a bug, not input */ /* the protocol lost step: a bug, not input */
    if (note[1] == NOTE_NONE)
        return MPI_SUCCESS;
    p->iact[i] = 0;
    if (note[1] == NOTE_ON) {
        struct mpitopo__comb *c = p->c;
        c->recvs[c->nrecv++] = (mpitopo__comb_recv_t){t, p->in[i], note[2]};
    }
    return MPI_SUCCESS;
}

/* Steps 2-3 of round t (see the top of this file; thesis section 6.2.2,
 * "Updating neighborhood information"): notifications, then the active
 * in-lists that update M. */
static int notify_and_update(pat_t *p, int t, int *notes, int *buf, int *to, int *from)
{
    int nto = 0, nfrom = active(p->in, p->iact, p->ni, from);
    for (int j = 0; j < p->no; j++)
        if (p->oact[j]) {
            notes[3 * nto] = t;
            notes[3 * nto + 1] = notes[3 * j + 1];
            notes[3 * nto + 2] = notes[3 * j + 2];
            to[nto++] = p->out[j];
        }
    int rc = xchg(p, TAG_NOTE, nto, to, notes, 1, 3, nfrom, from, buf, NULL);
    for (int i = 0, k = 0; i < p->ni && rc == MPI_SUCCESS; i++)
        if (p->iact[i])
            rc = take_note(p, i, &buf[3 * k++], t);
    for (int j = 0, k = 0; j < p->no; j++)
        if (p->oact[j])
            p->oact[j] = notes[3 * k++ + 1] == NOTE_NONE;
    /* Each active out-neighbour sends its in-flags (its `in` order, which
     * is the order of our row for it). */
    nto = active(p->in, p->iact, p->ni, to);
    nfrom = active(p->out, p->oact, p->no, from);
    int *counts = buf + 3 * (p->ni + 1);
    for (int j = 0, k = 0; j < p->no; j++)
        if (p->oact[j])
            counts[k++] = p->roff[j + 1] - p->roff[j];
    int *flags = counts + p->no + 1;
    if (rc == MPI_SUCCESS)
        rc = xchg(p, TAG_ACTIVE, nto, to, p->iact, 0, p->ni, nfrom, from, flags, counts);
    for (int j = 0, at = 0; j < p->no && rc == MPI_SUCCESS; j++)
        for (int e = p->roff[j]; p->oact[j] && e < p->roff[j + 1]; e++, at++)
            p->ract[e] = p->ract[e] && flags[at];
    return rc;
}

/* One round of Alg 6.1 for a process still in the loop: pair (or send
 * DONE when friendless), fill the notes of every out-neighbour. */
static int loop_round(pat_t *p, pairing_t *s, int t, int *in_loop, int *notes)
{
    for (int j = 0; j < p->no; j++) {
        notes[3 * j + 1] = *in_loop && p->nf == 0 ? NOTE_DONE : NOTE_NONE;
        notes[3 * j + 2] = -1;
    }
    if (!*in_loop || p->nf == 0) {
        *in_loop = 0;
        return MPI_SUCCESS;
    }
    int f, rc = pair_friend(p, s, &f);
    if (rc == MPI_SUCCESS && f >= 0)
        rc = add_step(p, t, f, notes);
    return rc;
}

static int any(const int *flag, int n)
{
    for (int i = 0; i < n; i++)
        if (flag[i])
            return 1;
    return 0;
}

static int run_protocol(pat_t *p, int *rounds)
{
    size_t d = (size_t)(p->no + p->ni) + 1, total = (size_t)p->roff[p->no] + 1;
    int *notes = mpitopo__malloc_array(3 * d, sizeof(int));
    int *buf = mpitopo__malloc_array(3 * d + d + total, sizeof(int));
    int *tofrom = mpitopo__malloc_array(2 * d, sizeof(int));
    int *ps = mpitopo__malloc_array(6 * ((size_t)p->nf + 1), sizeof(int));
    int rc = notes && buf && tofrom && ps ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    pairing_t s;
    if (ps) {
        s = (pairing_t){ps, ps + p->nf + 1, ps + 2 * (p->nf + 1), ps + 3 * (p->nf + 1),
                        ps + 4 * (p->nf + 1), ps + 5 * (p->nf + 1)};
    }
    int t = 0, in_loop = 1;
    while (rc == MPI_SUCCESS && (in_loop || any(p->iact, p->ni))) {
        t++;
        rc = loop_round(p, &s, t, &in_loop, notes);
        if (rc == MPI_SUCCESS)
            rc = notify_and_update(p, t, notes, buf, tofrom, tofrom + d);
        if (rc == MPI_SUCCESS && in_loop)
            rc = find_friends(p);
    }
    *rounds = t;
    mpitopo__free(notes);
    mpitopo__free(buf);
    mpitopo__free(tofrom);
    mpitopo__free(ps);
    return rc;
}


/* ---- The HOPS pattern (combine.h) ----
 *
 * Set-up: nhops exchanges, each of one count and one list, with the two
 * processes at distance 2^h; the lists hold (origin, destination, edges)
 * items, about degree / 2 per hop on a random graph: O(degree log P)
 * time and memory per process, no O(P) array anywhere. */

static int cmp_item(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The items the process starts with: one per distinct out-neighbour q
 * other than itself, with the number of its edges to q. */
static int own_items(const pat_t *p, const mpitopo__nbr_t *n, int *items)
{
    int k = 0;
    for (int j = 0; j < p->no; j++) {
        int m = 0;
        for (int d = 0; d < n->outdegree; d++)
            m += n->destinations[d] == p->out[j];
        items[3 * k] = p->me;
        items[3 * k + 1] = p->out[j];
        items[3 * k++ + 2] = m;
    }
    return k;
}

/* Whether item it, held by the process, crosses digit h now. */
static int crosses(const pat_t *p, const int *it, int h)
{
    int delta = (it[1] - p->me + p->size) % p->size;
    return (delta >> h) & 1;
}

/* Hop h: split held (nheld items) into what crosses (sent, recorded) and
 * what stays; receive the items of me - 2^h; held becomes what stays and
 * what arrived for others, sorted (grown as needed, *cap items). */
static int hop(pat_t *p, int h, int **held, int *nheld, size_t *cap)
{
    mpitopo__comb_hop_t *e = &p->c->hops[h];
    int ns = 0, nk = 0;
    for (int i = 0; i < *nheld; i++)
        ns += crosses(p, *held + 3 * i, h);
    int to = (int)(((long long)p->me + (1LL << h)) % p->size);
    int from = (int)(((long long)p->me - (1LL << h) % p->size + p->size) % p->size);
    int nr = 0, rc = xchg(p, TAG_HOPN, 1, &to, &ns, 0, 1, 1, &from, &nr, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t need = (size_t)*nheld - (size_t)ns + (size_t)nr + 1;
    if (need > *cap) {
        int *g = mpitopo__realloc_array(*held, 3 * need, sizeof(int));
        if (!g)
            return MPI_ERR_NO_MEM;
        *held = g;
        *cap = need;
    }
    e->send = mpitopo__malloc_array(3 * ((size_t)ns + (size_t)nr) + 1, sizeof(int));
    if (!e->send)
        return MPI_ERR_NO_MEM;
    e->recv = e->send + 3 * ns;
    e->nsend = ns;
    e->nrecv = nr;
    int *it = *held;
    for (int i = 0, j = 0; i < *nheld; i++)
        if (crosses(p, it + 3 * i, h))
            memcpy(e->send + 3 * j++, it + 3 * i, 3 * sizeof(int));
        else
            memmove(it + 3 * nk++, it + 3 * i, 3 * sizeof(int));
    int cnt = 3 * nr;
    rc = xchg(p, TAG_HOP, 1, &to, e->send, 0, 3 * ns, 1, &from, e->recv, &cnt);
    for (int i = 0; i < nr && rc == MPI_SUCCESS; i++)
        if (e->recv[3 * i + 1] != p->me)
            memcpy(it + 3 * nk++, e->recv + 3 * i, 3 * sizeof(int));
    qsort(it, (size_t)nk, 3 * sizeof(int), cmp_item);
    *nheld = nk;
    return rc;
}

/* The whole HOPS pattern. */
static int run_hops(pat_t *p, const mpitopo__nbr_t *n)
{
    struct mpitopo__comb *c = p->c;
    c->mode = MPITOPO__COMB_HOPS;
    while ((1LL << c->nhops) < p->size)
        c->nhops++;
    c->hops = mpitopo__calloc((size_t)c->nhops + 1, sizeof *c->hops);
    size_t cap = (size_t)p->no + 1;
    int *held = mpitopo__malloc_array(3 * cap, sizeof(int));
    int nheld = 0, rc = c->hops && held ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        nheld = own_items(p, n, held);
    for (int h = 0; h < c->nhops && rc == MPI_SUCCESS; h++)
        rc = hop(p, h, &held, &nheld, &cap);
    if (rc == MPI_SUCCESS && nheld != 0)
        rc = MPI_ERR_INTERN; /* every item must have arrived */
    mpitopo__free(held);
    return rc;
}

/*
 * Which pattern (the same answer everywhere: from a maximum over all
 * processes). HOPS costs the busiest process 2 * nhops messages and nhops
 * rounds whatever the degree; under SMPI's 1 us per message a round costs
 * about four message times (bench/RESULTS.md section 9: 48 us at 256
 * ranks, 60 at 1024, on random graphs and Moore stencils alike), about 6
 * * nhops in all. The thesis's pairing costs a round per pairing too, but
 * wins where neighbourhoods overlap a lot (Moore: 18-27 % below linear at
 * 256 ranks, where HOPS only ties) and can at best halve linear. So HOPS
 * is taken where its estimate is at most half of linear's (the busiest
 * process's messages): dense graphs (the thesis's random graphs from about
 * 50 neighbours at 256-4096 ranks, 3-D Moore radius 2, small communicators
 * with 24 or more neighbours), not the stencils whose pairing pays.
 * MPITOPO_COMBINE_PATTERN=pairs|hops forces one (read when the pattern is
 * made).
 */
static int choose_mode(pat_t *p, const mpitopo__nbr_t *n, int *hops)
{
    const char *env = mpitopo__getenv(MPITOPO_ENV_COMBINE_PATTERN);
    if (env && (!strcmp(env, "hops") || !strcmp(env, "pairs"))) {
        *hops = !strcmp(env, "hops");
        return MPI_SUCCESS;
    }
    int lin = 0, max = 0, k = 0;
    for (int i = 0; i < n->indegree; i++)
        lin += n->sources[i] != MPI_PROC_NULL && n->sources[i] != p->me;
    for (int d = 0; d < n->outdegree; d++)
        lin += n->destinations[d] != MPI_PROC_NULL && n->destinations[d] != p->me;
    int rc = PMPI_Allreduce(&lin, &max, 1, MPI_INT, MPI_MAX, p->comm);
    while ((1LL << k) < p->size)
        k++;
    *hops = k > 0 && 2LL * 6 * k <= (long long)max + 1;
    return rc;
}

static int setup(pat_t *p, const mpitopo__nbr_t *n)
{
    int len, rc = PMPI_Comm_rank(n->user_comm, &p->me);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(n->user_comm, &p->size);
    if (rc != MPI_SUCCESS)
        return rc;
    p->out = clean_list(n->destinations, n->outdegree, p->me, &len);
    p->no = p->out ? distinct(p->out, len) : 0;
    p->mylist = clean_list(n->sources, n->indegree, p->me, &p->mylen);
    p->in = p->mylist ? mpitopo__malloc_array((size_t)p->mylen + 1, sizeof(int)) : NULL;
    if (p->in)
        memcpy(p->in, p->mylist, (size_t)p->mylen * sizeof(int));
    p->ni = p->in ? distinct(p->in, p->mylen) : 0;
    p->oact = mpitopo__malloc_array((size_t)p->no + 1, sizeof(int));
    p->iact = mpitopo__malloc_array((size_t)p->ni + 1, sizeof(int));
    struct mpitopo__comb *c = p->c;
    c->steps = mpitopo__calloc((size_t)p->no + 1, sizeof *c->steps);
    c->recvs = mpitopo__malloc_array((size_t)p->ni + 1, sizeof *c->recvs);
    if (!p->out || !p->in || !p->oact || !p->iact || !c->steps || !c->recvs)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < p->no; j++)
        p->oact[j] = 1;
    for (int i = 0; i < p->ni; i++)
        p->iact[i] = 1;
    return MPI_SUCCESS;
}

static void teardown(pat_t *p)
{
    mpitopo__free(p->out);
    mpitopo__free(p->oact);
    mpitopo__free(p->in);
    mpitopo__free(p->iact);
    mpitopo__free(p->mylist);
    mpitopo__free(p->roff);
    mpitopo__free(p->rrank);
    mpitopo__free(p->rmult);
    mpitopo__free(p->ract);
    mpitopo__free(p->frank);
    mpitopo__free(p->fw);
    if (p->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&p->comm);
}

void mpitopo__combine_free(struct mpitopo__comb *c)
{
    if (!c)
        return;
    for (int i = 0; c->steps && i < c->nsteps; i++)
        mpitopo__free(c->steps[i].cn);
    mpitopo__free(c->steps);
    mpitopo__free(c->recvs);
    for (int h = 0; c->hops && h < c->nhops; h++)
        mpitopo__free(c->hops[h].send);
    mpitopo__free(c->hops);
    mpitopo__free(c);
}

/* Alg. 6.1: M, friends, rounds. Friends are bounded by the entries of M. */
static int run_pairs(pat_t *p)
{
    int rc = build_matrix(p);
    if (rc == MPI_SUCCESS) {
        size_t m = (size_t)p->roff[p->no] + 1;
        p->frank = mpitopo__malloc_array(m, sizeof(int));
        p->fw = mpitopo__malloc_array(m, sizeof(int));
        rc = p->frank && p->fw ? find_friends(p) : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = run_protocol(p, &p->c->rounds);
    return rc;
}

/* Whether a process has an edge twice (either way) or an edge to itself:
 * where host MPIs deliver such edges differently (MPICH 4.0 matches
 * duplicate edges in another order than Open MPI and mpitopo). */
static int has_duplicates(const mpitopo__nbr_t *n, int me)
{
    const int *lists[2] = {n->sources, n->destinations};
    int len[2] = {n->indegree, n->outdegree};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < len[l]; i++) {
            if (lists[l][i] == me)
                return 1;
            for (int j = 0; j < i; j++)
                if (lists[l][j] == lists[l][i] && lists[l][i] != MPI_PROC_NULL)
                    return 1;
        }
    return 0;
}

/* Tags of a combining schedule depend on the largest round anywhere;
 * auto weighs the busiest process's messages (and blocks). */
static int summarise(pat_t *p, const mpitopo__nbr_t *n)
{
    struct mpitopo__comb *c = p->c;
    long long v[6] = {c->mode == MPITOPO__COMB_HOPS ? (c->nhops + 1) / 2 : c->rounds, 0, 0, 0, 0,
                      has_duplicates(n, p->me)};
    long long all[6];
    int comb, lin;
    mpitopo__combine_messages(n, c, p->me, &comb, &lin);
    v[1] = comb;
    v[2] = lin;
    mpitopo__combine_blocks(n, c, p->me, &v[3], &v[4]);
    int rc = PMPI_Allreduce(v, all, 6, MPI_LONG_LONG, MPI_MAX, p->comm);
    if (rc == MPI_SUCCESS) {
        c->any_duplicates = all[5] != 0;
        c->rounds = (int)all[0];
        c->max_combined = (int)all[1];
        c->max_linear = (int)all[2];
        c->max_blocks_combined = all[3];
        c->max_blocks_linear = all[4];
    }
    return rc;
}

static int compute(pat_t *p, const mpitopo__nbr_t *n)
{
    int rc = setup(p, n);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_dup(n->user_comm, &p->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    int hops = 0;
    if (rc == MPI_SUCCESS)
        rc = choose_mode(p, n, &hops);
    if (rc == MPI_SUCCESS && hops)
        rc = run_hops(p, n);
    else if (rc == MPI_SUCCESS)
        rc = run_pairs(p);
    return rc == MPI_SUCCESS ? summarise(p, n) : rc;
}

static void log_pattern(const struct mpitopo__comb *c, int me)
{
    int hops = c->mode == MPITOPO__COMB_HOPS, ns = 0, nr = 0;
    for (int h = 0; hops && h < c->nhops; h++) {
        ns += c->hops[h].nsend > 0;
        nr += c->hops[h].nrecv > 0;
    }
    if (hops)
        mpitopo__log(2, "combine: rank %d sends %d and receives %d messages in %d hops", me, ns,
                     nr, c->nhops);
    else
        mpitopo__log(2, "combine: rank %d pairs %d times, receives %d combined messages, %d rounds",
                     me, c->nsteps, c->nrecv, c->rounds);
    if (me == 0)
        mpitopo__log(1,
                     "combine: %s pattern, busiest process %d messages combined in %d rounds, %d "
                     "linear; blocks %lld combined, %lld linear%s",
                     hops ? "hops" : "pairs", c->max_combined,
                     hops ? c->nhops + 1 : 2 * c->rounds + 1, c->max_linear,
                     c->max_blocks_combined, c->max_blocks_linear,
                     c->any_duplicates ? "; duplicate or self edges" : "");
}

int mpitopo__combine_pattern(mpitopo__nbr_t *n, const char *func)
{
    if (n->comb)
        return MPITOPO_SUCCESS;
    int theta = 0, rc = mpitopo__combine_threshold(n, &theta, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    pat_t p = {.comm = MPI_COMM_NULL, .theta = theta};
    p.c = mpitopo__calloc(1, sizeof *p.c);
    if (!p.c)
        return MPITOPO_NOMEM("combining pattern");
    rc = compute(&p, n);
    teardown(&p);
    if (rc != MPI_SUCCESS) {
        mpitopo__combine_free(p.c);
        return rc == MPI_ERR_NO_MEM ? MPITOPO_NOMEM("combining pattern")
                                    : mpitopo__mpi_result(func, rc);
    }
    n->comb = p.c;
    log_pattern(p.c, p.me);
    return MPITOPO_SUCCESS;
}

/* HOPS: the processes the calling one sends to (what the log calls
 * friends there). */
int mpitopo__combine_pairs(const mpitopo__nbr_t *n)
{
    const struct mpitopo__comb *c = n->comb;
    int m = 0;
    for (int h = 0; c && c->mode == MPITOPO__COMB_HOPS && h < c->nhops; h++)
        m += c->hops[h].nsend > 0;
    return !c ? 0 : c->mode == MPITOPO__COMB_HOPS ? m : c->nsteps;
}

/* ---- What a pattern costs: messages and blocks of the busiest process ---- */

static int nonempty_hops(const struct mpitopo__comb *c)
{
    int m = 0;
    for (int h = 0; h < c->nhops; h++)
        m += (c->hops[h].nsend > 0) + (c->hops[h].nrecv > 0);
    return m;
}

/* Edges of the calling process, rank me, other than self edges and
 * MPI_PROC_NULL (*lin), and self edges (*self), sends and receives. */
static void count_edges(const mpitopo__nbr_t *n, int me, int *lin, int *self)
{
    *lin = *self = 0;
    for (int i = 0; i < n->indegree; i++) {
        *lin += n->sources[i] != MPI_PROC_NULL && n->sources[i] != me;
        *self += n->sources[i] == me;
    }
    for (int d = 0; d < n->outdegree; d++) {
        *lin += n->destinations[d] != MPI_PROC_NULL && n->destinations[d] != me;
        *self += n->destinations[d] == me;
    }
}

void mpitopo__combine_messages(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                               int *combined, int *linear)
{
    int comb = c->nrecv, lin = 0, self = 0;
    if (c->mode == MPITOPO__COMB_HOPS) {
        count_edges(n, me, &lin, &self);
        *combined = nonempty_hops(c) + self;
        *linear = lin + self;
        return;
    }
    for (int i = 0; i < c->nsteps; i++)
        comb += 2 + c->steps[i].on_hi - c->steps[i].on_lo; /* swap both ways, combined sends */
    for (int i = 0; i < n->indegree; i++) {
        int s = n->sources[i];
        lin += s != MPI_PROC_NULL;
        comb += s != MPI_PROC_NULL && (s == me || !mpitopo__combine_in_recvs(c, s));
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        lin += q != MPI_PROC_NULL;
        comb += q != MPI_PROC_NULL && (q == me || !mpitopo__combine_in_steps(c, q));
    }
    *combined = comb;
    *linear = lin;
}

static long long item_edges(const int *items, int n)
{
    long long m = 0;
    for (int i = 0; i < n; i++)
        m += items[3 * i + 2];
    return m;
}

/* PAIRS: blocks of the swaps and combined messages of our steps. */
static long long step_blocks(const struct mpitopo__comb *c)
{
    long long m = 0;
    for (int i = 0; i < c->nsteps; i++) {
        const mpitopo__comb_step_t *s = &c->steps[i];
        for (int j = 0; j < s->k; j++)
            if (j >= s->on_lo && j < s->on_hi)
                m += s->theirs[j] + s->mine[j] + s->theirs[j]; /* swap in, combined out */
            else
                m += s->mine[j]; /* swap out */
    }
    return m;
}

void mpitopo__combine_blocks(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                             long long *combined, long long *linear)
{
    int lin, self;
    count_edges(n, me, &lin, &self);
    *linear = lin + self;
    long long comb = self;
    if (c->mode == MPITOPO__COMB_HOPS) {
        for (int h = 0; h < c->nhops; h++)
            comb += item_edges(c->hops[h].send, c->hops[h].nsend) +
                    item_edges(c->hops[h].recv, c->hops[h].nrecv);
        *combined = comb;
        return;
    }
    comb += step_blocks(c);
    for (int i = 0; i < c->nrecv; i++)
        comb += mpitopo__combine_edges_from(n, c->recvs[i].s) + mpitopo__combine_edges_from(n, c->recvs[i].f);
    for (int i = 0; i < n->indegree; i++) {
        int s = n->sources[i];
        comb += s != MPI_PROC_NULL && s != me && !mpitopo__combine_in_recvs(c, s);
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        comb += q != MPI_PROC_NULL && q != me && !mpitopo__combine_in_steps(c, q);
    }
    *combined = comb;
}
