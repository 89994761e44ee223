/*
 * The exploration bookkeeping of both tuners and their tuning file
 * (explore.h). Why the decision needs no agreement step of its own: every
 * process stores the same reduced maxima and applies the same rules.
 */
#include "coll/coll_internal.h"
#include "coll/engine/explore.h"
#include "core/env.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPLORE_FILE_MAX (1 << 22)

/* ---- Settings ---- */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int tune_on = 1;
static const char *tune_path;

static void read_env(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_TUNE);
    if (v && *v && strcmp(v, "off") != 0 && strcmp(v, "on") != 0)
        mpitopo__log(0, "MPITOPO_TUNE = \"%s\" is not on or off: on", v);
    tune_on = !(v && strcmp(v, "off") == 0);
    v = mpitopo__getenv(MPITOPO_ENV_TUNING_FILE);
    tune_path = v && *v ? v : NULL;
}

int mpitopo__explore_on(void)
{
    pthread_once(&env_once, read_env);
    return tune_on;
}

const char *mpitopo__explore_path(void)
{
    pthread_once(&env_once, read_env);
    return tune_path;
}

/* ---- Rounds ---- */

void mpitopo__explore_init(mpitopo__explore_t *x, int ncand)
{
    memset(x, 0, sizeof *x);
    x->ncand = ncand < 1 ? 1 : ncand > MPITOPO__EXPLORE_MAXC ? MPITOPO__EXPLORE_MAXC : ncand;
    for (int i = 0; i < MPITOPO__EXPLORE_MAXC; i++) {
        x->alive[i] = i < x->ncand;
        for (int r = 0; r < MPITOPO__EXPLORE_REPS; r++)
            x->t[r][i] = -1;
    }
}

int mpitopo__explore_next(mpitopo__explore_t *x)
{
    while (x->pos < x->ncand - 1 && !x->alive[x->pos])
        x->pos++;
    return x->pos;
}

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* The medians and the slot decided. */
static int decide(mpitopo__explore_t *x)
{
    int best = -1;
    for (int i = 0; i < x->ncand; i++) {
        x->med[i] = x->alive[i] ? median3(x->t[0][i], x->t[1][i], x->t[2][i]) : x->t[0][i];
        if (x->alive[i] && (best < 0 || x->med[i] < x->med[best]))
            best = i;
    }
    if (best < 0)
        best = 0; /* cannot happen: the best of round 0 is never stopped */
    /* The model's choice (slot 0) stays unless clearly beaten. */
    if (x->alive[0] && x->med[0] <= (1 + MPITOPO__EXPLORE_KEEP) * x->med[best])
        best = 0;
    return best;
}

/* After round 0 (x->t[0]: the slowest process's times): the early stop
 * and the budget (explore.h). red: the slowest process's time of one
 * reduction. Returns the candidates left. */
static int round0_cut(mpitopo__explore_t *x, double red)
{
    double best = -1, spent = red;
    int alive = 0;
    for (int i = 0; i < x->ncand; i++)
        if (best < 0 || x->t[0][i] < best)
            best = x->t[0][i];
    for (int i = 0; i < x->ncand; i++) {
        int failed = x->t[0][i] >= MPITOPO__EXPLORE_FAILED;
        spent += failed ? 0 : x->t[0][i] - best;
        alive += x->alive[i] = !failed && x->t[0][i] <= MPITOPO__EXPLORE_EARLY * best;
    }
    if (!alive) /* every candidate failed: slot 0 */
        alive = x->alive[0] = 1;
    double budget = MPITOPO__EXPLORE_BUDGET * MPITOPO__EXPLORE_HORIZON * best;
    for (;;) {
        double plan = red;
        int worst = -1;
        for (int i = 0; i < x->ncand; i++)
            if (x->alive[i] && x->t[0][i] > best) {
                plan += (MPITOPO__EXPLORE_REPS - 1) * (x->t[0][i] - best);
                if (worst < 0 || x->t[0][i] > x->t[0][worst])
                    worst = i;
            }
        if (worst < 0 || spent + plan <= budget)
            return alive;
        x->alive[worst] = 0;
        alive--;
    }
}

static int reduce_max(MPI_Comm comm, const double *in, double *out, int count, double *red_out)
{
    double t0 = PMPI_Wtime();
    int rc = PMPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_MAX, comm);
    *red_out = PMPI_Wtime() - t0;
    return rc;
}

int mpitopo__explore_note(mpitopo__explore_t *x, int slot, double seconds)
{
    x->t[x->round][slot] = seconds;
    x->pos = slot + 1;
    while (x->pos < x->ncand && !x->alive[x->pos])
        x->pos++;
    if (x->pos < x->ncand)
        return 0;
    x->pos = 0;
    if (x->round == 0 || x->round == MPITOPO__EXPLORE_REPS - 1)
        return 1;
    x->round++;
    return 0;
}

int mpitopo__explore_pack(const mpitopo__explore_t *x, double red_in, double *buf)
{
    enum { M = MPITOPO__EXPLORE_MAXC, R = MPITOPO__EXPLORE_REPS };
    if (x->round == 0) {
        /* The last slot: the previous reduction's time, for the budget. */
        memcpy(buf, x->t[0], sizeof x->t[0]);
        buf[M] = red_in;
        return M + 1;
    }
    memcpy(buf, &x->t[1][0], (R - 1) * sizeof x->t[0]);
    return (R - 1) * M;
}

int mpitopo__explore_apply(mpitopo__explore_t *x, const double *mx)
{
    enum { M = MPITOPO__EXPLORE_MAXC, R = MPITOPO__EXPLORE_REPS };
    int decided = -1;
    if (x->round == 0) {
        memcpy(x->t[0], mx, sizeof x->t[0]);
        if (round0_cut(x, mx[M]) == 1) {
            for (int i = 0; i < x->ncand; i++)
                x->t[1][i] = x->t[2][i] = x->t[0][i];
            decided = decide(x);
        }
    } else {
        memcpy(x->t[1], mx, (R - 1) * sizeof x->t[0]);
        decided = decide(x);
    }
    x->round++;
    return decided;
}

int mpitopo__explore_record(mpitopo__explore_t *x, int slot, double seconds, MPI_Comm comm,
                            double red_in, double *red_out, int *decided)
{
    *decided = -1;
    *red_out = red_in;
    if (!mpitopo__explore_note(x, slot, seconds))
        return MPI_SUCCESS;
    double in[MPITOPO__EXPLORE_PACK], mx[MPITOPO__EXPLORE_PACK];
    int count = mpitopo__explore_pack(x, red_in, in);
    int rc = reduce_max(comm, in, mx, count, red_out);
    if (rc == MPI_SUCCESS)
        *decided = mpitopo__explore_apply(x, mx);
    else
        x->round++;
    return rc;
}

/* ---- The tuning file ---- */

char *mpitopo__tunefile_slurp(const char *path, char *why, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, len, "cannot be read (%s)", strerror(errno));
        return NULL;
    }
    char *buf = mpitopo__malloc(EXPLORE_FILE_MAX + 1);
    size_t got = buf ? fread(buf, 1, EXPLORE_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || got > EXPLORE_FILE_MAX) {
        snprintf(why, len, buf ? "is larger than %d bytes" : "out of memory", EXPLORE_FILE_MAX);
        mpitopo__free(buf);
        return NULL;
    }
    buf[got] = '\0';
    return buf;
}

int mpitopo__tunefile_share(MPI_Comm comm, char **text, char *why, size_t len)
{
    int rank = 0, rc = PMPI_Comm_rank(comm, &rank);
    long long n = -1;
    *text = NULL;
    why[0] = '\0';
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank == 0) {
        errno = 0;
        *text = mpitopo__tunefile_slurp(mpitopo__explore_path(), why, len);
        n = *text ? (long long)strlen(*text) : -1;
        /* A missing file is the first job's: nothing to say. */
        if (!*text && errno == ENOENT)
            why[0] = '\0';
    }
    rc = PMPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm);
    if (rc == MPI_SUCCESS && n >= 0 && rank != 0)
        *text = mpitopo__malloc((size_t)n + 1);
    /* Out of memory on a process: it still takes part, into a scratch
     * buffer, and reads no file. */
    char *scratch = NULL;
    if (rc == MPI_SUCCESS && n >= 0 && !*text && !(scratch = mpitopo__malloc((size_t)n + 1)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && n >= 0)
        rc = PMPI_Bcast(*text ? *text : scratch, (int)n, MPI_CHAR, 0, comm);
    mpitopo__free(scratch);
    if (rc != MPI_SUCCESS || n < 0 || !*text) {
        mpitopo__free(*text);
        *text = NULL;
        return rc;
    }
    (*text)[n] = '\0';
    return MPI_SUCCESS;
}

#ifdef MPITOPO_HAVE_JSONC
json_object *mpitopo__tunefile_parse(const char *text, const char *host, char *why, size_t len)
{
    enum json_tokener_error err;
    json_object *root = json_tokener_parse_verbose(text, &err), *x;
    if (!root) {
        snprintf(why, len, "does not parse as JSON (%s)", json_tokener_error_desc(err));
        return NULL;
    }
    const char *s = NULL;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "format", &x) || !json_object_is_type(x, json_type_string) ||
        strcmp(json_object_get_string(x), "mpitopo-tuning") != 0) {
        snprintf(why, len, "is not an mpitopo tuning file (an object with \"format\": "
                           "\"mpitopo-tuning\" and a \"decisions\" array)");
        json_object_put(root);
        return NULL;
    }
    if (json_object_object_get_ex(root, "host", &x) && json_object_is_type(x, json_type_string))
        s = json_object_get_string(x);
    if (!s || strcmp(s, host) != 0) {
        snprintf(why, len, "was written for host MPI \"%s\", this job runs \"%s\"", s ? s : "(none)",
                 host);
        json_object_put(root);
        return NULL;
    }
    return root;
}

void mpitopo__tunefile_write(const char *key, json_object *list, const char *host, int ndecisions)
{
    const char *path = mpitopo__explore_path();
    char why[256] = "", tmp[4096];
    char *text = mpitopo__tunefile_slurp(path, why, sizeof why);
    json_object *root = text ? mpitopo__tunefile_parse(text, host, why, sizeof why) : NULL;
    mpitopo__free(text);
    /* The other tuner's sections stay as they are. */
    if (!root)
        root = json_object_new_object();
    json_object_object_add(root, "format", json_object_new_string("mpitopo-tuning"));
    json_object_object_add(root, "version", json_object_new_int(1));
    json_object_object_add(root, "host", json_object_new_string(host));
    json_object_object_add(root, key, list);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (json_object_to_file_ext(tmp, root, JSON_C_TO_STRING_PRETTY) != 0 || rename(tmp, path) != 0) {
        mpitopo__log(0, "MPITOPO_TUNING_FILE %s could not be written (%s)", path, strerror(errno));
        unlink(tmp);
    } else {
        mpitopo__log(1, "MPITOPO_TUNING_FILE %s: %d %s decision(s) of this job written", path,
                     ndecisions, key);
    }
    json_object_put(root);
}
json_object *mpitopo__tunefile_merge(const void *old, int nold, const void *job, int njob, size_t elt,
                                     int (*same)(const void *a, const void *b),
                                     json_object *(*json)(const void *entry, int j))
{
    const char *o = old, *d = job;
    json_object *list = json_object_new_array();
    for (int i = 0; i < nold; i++) {
        int again = 0;
        for (int j = 0; j < njob && !again; j++)
            again = same(o + (size_t)i * elt, d + (size_t)j * elt);
        if (!again)
            json_object_array_add(list, json(o + (size_t)i * elt, -1));
    }
    for (int j = 0; j < njob; j++) {
        int later = 0;
        for (int k = j + 1; k < njob && !later; k++)
            later = same(d + (size_t)j * elt, d + (size_t)k * elt);
        if (!later)
            json_object_array_add(list, json(d + (size_t)j * elt, j));
    }
    return list;
}
#endif
