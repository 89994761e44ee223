/*
 * Agreement on the arguments of a collective call (mpi_internal.h): one
 * allreduce tells every process whether any process found its arguments
 * invalid and whether the arguments that must match do; only on an error
 * do more collectives follow, to spread the first faulty process's message
 * or to find who differs from process 0 and how. So a process with bad
 * arguments never returns while the others wait in the next collective,
 * and every process returns the same error.
 */
#include "core/env.h"
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* MPITOPO_CHECK_ARGS: compare every argument across processes (default in
 * debug builds), read once. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int check_args;

static void read_env(void)
{
#ifdef NDEBUG
    check_args = 0;
#else
    check_args = 1;
#endif
    const char *v = mpitopo__getenv(MPITOPO_ENV_CHECK_ARGS);
    if (v && *v)
        check_args = strcmp(v, "0") != 0;
}

int mpitopo__check_args(void)
{
    pthread_once(&env_once, read_env);
    return check_args;
}

/* FNV-1a, the hash of the arguments compared by hash. */
uint32_t mpitopo__hash(uint32_t h, const void *data, size_t len)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

/* Layout of the reduced vector: first faulty rank, whether any process
 * checks (0 when one does), then (value, ~value) per argument — the
 * minimum of ~value is ~maximum, so one MPI_MIN gives both ends — then
 * the caller's extra slots. */
enum { SLOT_BAD, SLOT_NOCHECK, SLOT_ARGS };

/* The message of a faulty process, without its leading "func: ". */
static const char *own_message(const mpitopo__agree_t *a, int local, char *buf, size_t len)
{
    if (local > 0) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int n = 0;
        if (PMPI_Error_string(local, text, &n) != MPI_SUCCESS)
            snprintf(text, sizeof text, "(no description)");
        snprintf(buf, len, "MPI error %d: %s", local, text);
        return buf;
    }
    const char *m = mpitopo_last_error();
    size_t f = strlen(a->func);
    if (strncmp(m, a->func, f) == 0 && strncmp(m + f, ": ", 2) == 0)
        m += f + 2;
    snprintf(buf, len, "%s", m);
    return buf;
}

/* Someone's arguments were invalid: the first faulty process broadcasts its
 * code and message, which every process returns (the faulty ones keep
 * their own message when their code is the same). */
static int spread_error(const mpitopo__agree_t *a, int local, int first)
{
    struct {
        int code;
        char what[MPITOPO__AGREE_MSG];
    } e = {local, ""};
    if (a->rank == first)
        own_message(a, local, e.what, sizeof e.what);
    int rc = PMPI_Bcast(&e, (int)sizeof e, MPI_BYTE, first, a->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    e.what[sizeof e.what - 1] = '\0';
    if (a->rank == first || (local != MPITOPO_SUCCESS && local == e.code))
        return local;
    if (e.code > 0) /* MPI's own code passes through */
        return MPITOPO_FAIL_AS(e.code, a->func, "process %d of comm: %s", first, e.what);
    if (local != MPITOPO_SUCCESS) {
        char mine[MPITOPO__AGREE_MSG];
        own_message(a, local, mine, sizeof mine);
        return MPITOPO_FAIL_AS(e.code, a->func, "process %d of comm has invalid arguments: %s "
                                 "(and this process: %s)", first, e.what, mine);
    }
    return MPITOPO_FAIL_AS(e.code, a->func, "process %d of comm has invalid arguments: %s", first,
                             e.what);
}

/* What differs on this process from process 0's values, when the caller
 * gave no record: the first argument that does. */
static void describe_args(const mpitopo__agree_t *a, const int *root, char *out, size_t len)
{
    for (int i = 0; i < a->nargs; i++) {
        if (a->arg[i].value == root[i])
            continue;
        if (a->arg[i].hashed)
            snprintf(out, len, "%s differs from process 0's", a->arg[i].name);
        else
            snprintf(out, len, "%s = %d (process 0: %d)", a->arg[i].name, a->arg[i].value, root[i]);
        return;
    }
    snprintf(out, len, "nothing");
}

/*
 * Who differs from process 0, and how: process 0's record (or argument
 * values) is broadcast, every process compares, the lowest that differs
 * describes the difference to everyone. MPITOPO_SUCCESS when nobody
 * differs.
 */
static int find_difference(const mpitopo__agree_t *a)
{
    int vals[MPITOPO__AGREE_ARGS];
    size_t len = a->record ? a->record_len : (size_t)a->nargs * sizeof *vals;
    unsigned char root[MPITOPO__AGREE_RECORD];
    if (len > sizeof root)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, a->func, "agreement record of %zu bytes", len);
    for (int i = 0; i < a->nargs; i++)
        vals[i] = a->arg[i].value;
    const void *mine = a->record ? a->record : (const void *)vals;
    memcpy(root, mine, len);
    int rc = PMPI_Bcast(root, (int)len, MPI_BYTE, 0, a->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    int differs = memcmp(root, mine, len) != 0 ? a->rank : INT_MAX, first = INT_MAX;
    if ((rc = PMPI_Allreduce(&differs, &first, 1, MPI_INT, MPI_MIN, a->comm)) != MPI_SUCCESS)
        return rc;
    if (first == INT_MAX)
        return MPITOPO_SUCCESS;
    char what[MPITOPO__AGREE_MSG] = "";
    if (first == a->rank) {
        if (a->record)
            a->describe(a->record, root, what, sizeof what);
        else
            describe_args(a, (const int *)(const void *)root, what, sizeof what);
    }
    if ((rc = PMPI_Bcast(what, sizeof what, MPI_CHAR, first, a->comm)) != MPI_SUCCESS)
        return rc;
    what[sizeof what - 1] = '\0';
    return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, a->func,
                             "the arguments differ between processes: on process %d, %s", first, what);
}

int mpitopo__agree(mpitopo__agree_t *a, int local)
{
    int v[SLOT_ARGS + 2 * MPITOPO__AGREE_ARGS + MPITOPO__AGREE_EXTRA];
    int g[sizeof v / sizeof *v];
    int n = SLOT_ARGS + 2 * a->nargs + a->nextra;
    if (a->nargs > MPITOPO__AGREE_ARGS || a->nextra > MPITOPO__AGREE_EXTRA)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, a->func, "agreement on too many arguments");
    v[SLOT_BAD] = local != MPITOPO_SUCCESS ? a->rank : INT_MAX;
    v[SLOT_NOCHECK] = !mpitopo__check_args();
    for (int i = 0; i < a->nargs; i++) {
        int x = local == MPITOPO_SUCCESS ? a->arg[i].value : 0;
        v[SLOT_ARGS + 2 * i] = x;
        v[SLOT_ARGS + 2 * i + 1] = ~x;
    }
    for (int i = 0; i < a->nextra; i++)
        v[SLOT_ARGS + 2 * a->nargs + i] = a->extra[i];
    int rc = PMPI_Allreduce(v, g, n, MPI_INT, MPI_MIN, a->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < a->nextra; i++)
        a->extra[i] = g[SLOT_ARGS + 2 * a->nargs + i];
    if (g[SLOT_BAD] != INT_MAX)
        return spread_error(a, local, g[SLOT_BAD]);
    int differ = 0;
    for (int i = 0; i < a->nargs; i++)
        differ |= g[SLOT_ARGS + 2 * i] != ~g[SLOT_ARGS + 2 * i + 1];
    if (differ || (g[SLOT_NOCHECK] == 0 && a->record))
        return find_difference(a);
    return MPITOPO_SUCCESS;
}

void mpitopo__agree_arg(mpitopo__agree_t *a, const char *name, int value)
{
    if (a->nargs < MPITOPO__AGREE_ARGS)
        a->arg[a->nargs++] = (mpitopo__agree_arg_t){name, value, 0};
}

void mpitopo__agree_hash(mpitopo__agree_t *a, const char *name, const void *data, size_t len)
{
    uint32_t h = mpitopo__hash(2166136261u, &len, sizeof len);
    if (len > 0)
        h = mpitopo__hash(h, data, len);
    if (a->nargs < MPITOPO__AGREE_ARGS)
        a->arg[a->nargs++] = (mpitopo__agree_arg_t){name, (int)(h & 0x7fffffff), 1};
}

void mpitopo__agree_string(mpitopo__agree_t *a, const char *name, const char *s)
{
    mpitopo__agree_hash(a, name, s ? s : "", s ? strlen(s) : 0);
}
