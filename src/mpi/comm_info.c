/*
 * mpitopo's own info keys of a communicator ("mpitopo_neighbor",
 * "mpitopo_combine_threshold", ...), kept where every MPI keeps them: in an
 * attribute. MPICH keeps no info key it does not know, so
 * MPI_Comm_set_info(comm, {mpitopo_neighbor: combine}) has no effect there,
 * while Open MPI keeps the key. mpitopo_comm_set_info (and the shim's
 * MPI_Comm_set_info and MPI_Comm_dup_with_info, which call it) store the
 * keys here; readers look here first, then at MPI's own info of comm.
 *
 * A record is immutable once attached and shared by reference between a
 * communicator and its duplicates (MPI_Comm_dup copies a communicator's
 * hints); setting keys attaches a new record. Live records sit in one list,
 * so memory stays reachable even where an MPI never deletes the attributes
 * of MPI_COMM_WORLD.
 */
#include "mpi/mpi_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MAX_KEYS 16
#define KEY_LEN 64
#define VALUE_LEN 256

typedef struct keys {
    struct keys *prev, *next; /* live records, under lock */
    int refs;                 /* under lock */
    int n;
    char key[MAX_KEYS][KEY_LEN];
    char value[MAX_KEYS][VALUE_LEN];
} keys_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint generation = 1; /* counts the changes of any communicator's keys */

unsigned mpitopo__comm_info_generation(void)
{
    return atomic_load(&generation);
}

static keys_t live = {.prev = &live, .next = &live};
static int keyval = MPI_KEYVAL_INVALID;

static void keys_ref(keys_t *k)
{
    pthread_mutex_lock(&lock);
    k->refs++;
    pthread_mutex_unlock(&lock);
}

static void keys_unref(keys_t *k)
{
    pthread_mutex_lock(&lock);
    int last = --k->refs == 0;
    if (last) {
        k->prev->next = k->next;
        k->next->prev = k->prev;
    }
    pthread_mutex_unlock(&lock);
    if (last)
        mpitopo__free(k);
}

static int copy_cb(MPI_Comm comm, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)kv, (void)extra;
    keys_ref(in);
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int kv, void *value, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    keys_unref(value);
    return MPI_SUCCESS;
}

void mpitopo__comm_info_finalize(void)
{
    pthread_mutex_lock(&lock);
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval); /* MPI keeps it while attributes remain */
    keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&lock);
}

/* The record on comm, with a reference, or NULL. */
static keys_t *keys_of(MPI_Comm comm)
{
    pthread_mutex_lock(&lock);
    int kv = keyval;
    pthread_mutex_unlock(&lock);
    keys_t *k = NULL;
    int found = 0;
    if (kv == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, kv, &k, &found) != MPI_SUCCESS ||
        !found)
        return NULL;
    keys_ref(k);
    return k;
}

int mpitopo__comm_info_get(MPI_Comm comm, const char *key, char *value, int len)
{
    keys_t *k = keys_of(comm);
    int found = 0;
    for (int i = 0; k && i < k->n && !found; i++)
        if (strcmp(k->key[i], key) == 0) {
            snprintf(value, (size_t)len, "%s", k->value[i]);
            found = 1;
        }
    if (k)
        keys_unref(k);
    return found;
}

/* Merge the mpitopo_* keys of info into k. */
static int merge(keys_t *k, MPI_Info info, const char *func)
{
    int nkeys, rc = PMPI_Info_get_nkeys(info, &nkeys);
    if (rc != MPI_SUCCESS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "info is not valid");
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[VALUE_LEN];
        int found = 0;
        if ((rc = PMPI_Info_get_nthkey(info, i, key)) != MPI_SUCCESS)
            return mpitopo__mpi_result(func, rc);
        if (strncmp(key, "mpitopo_", 8) != 0)
            continue;
        if (strlen(key) >= KEY_LEN)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "info key \"%.64s...\" is longer than %d characters",
                                     key, KEY_LEN - 1);
        if ((rc = mpitopo__info_get(func, info, key, value, VALUE_LEN, &found)) != MPITOPO_SUCCESS)
            return mpitopo__mpi_result(func, rc);
        int j = 0;
        while (j < k->n && strcmp(k->key[j], key) != 0)
            j++;
        if (j == MAX_KEYS)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "more than %d mpitopo_ info keys on comm (at %s)",
                                     MAX_KEYS, key);
        snprintf(k->key[j], KEY_LEN, "%s", key);
        snprintf(k->value[j], VALUE_LEN, "%s", value);
        if (j == k->n)
            k->n++;
    }
    return MPITOPO_SUCCESS;
}

static int keyval_ready(void)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    if (keyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(copy_cb, delete_cb, &keyval, NULL);
    pthread_mutex_unlock(&lock);
    return rc == MPI_SUCCESS ? mpitopo__at_finalize(MPITOPO__FINI_COMM_INFO, mpitopo__comm_info_finalize)
                             : rc;
}

int mpitopo__comm_info_set(MPI_Comm comm, MPI_Info info, const char *func)
{
    int rc = mpitopo__check_mpi(func);
    if (rc == MPITOPO_SUCCESS && comm == MPI_COMM_NULL)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "comm = MPI_COMM_NULL");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if ((rc = keyval_ready()) != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    keys_t *old = keys_of(comm);
    atomic_fetch_add(&generation, 1);
    if (info == MPI_INFO_NULL) { /* remove them all */
        if (old)
            keys_unref(old);
        rc = old ? PMPI_Comm_delete_attr(comm, keyval) : MPI_SUCCESS;
        return mpitopo__mpi_result(func, rc);
    }
    keys_t *k = mpitopo__malloc(sizeof *k);
    if (!k) {
        if (old)
            keys_unref(old);
        return MPITOPO_NOMEM("the info keys of comm");
    }
    if (old)
        memcpy(k, old, sizeof *k);
    else
        k->n = 0;
    if (old)
        keys_unref(old);
    k->refs = 1;
    rc = merge(k, info, func);
    if (rc != MPITOPO_SUCCESS || (!old && k->n == 0)) {
        mpitopo__free(k); /* an error, or no key to keep */
        return rc;
    }
    pthread_mutex_lock(&lock);
    k->prev = live.prev;
    k->next = &live;
    live.prev->next = k;
    live.prev = k;
    int kv = keyval;
    pthread_mutex_unlock(&lock);
    /* The attribute takes k's reference (and drops the old record's). */
    if ((rc = PMPI_Comm_set_attr(comm, kv, k)) != MPI_SUCCESS) {
        keys_unref(k);
        return mpitopo__mpi_result(func, rc);
    }
    return MPITOPO_SUCCESS;
}

/* The value of key in info, or 0 when absent (or info unreadable). */
int mpitopo__info_value(MPI_Info info, const char *key, char *value, int size)
{
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return 0;
#if MPI_VERSION >= 4
    int len = size;
    if (PMPI_Info_get_string(info, key, &len, value, &flag) != MPI_SUCCESS)
        return 0;
#else
    /* MPICH fails MPI_Info_get on a value longer than the buffer. */
    int len = 0;
    if (PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag)
        return 0;
    if (len >= size)
        snprintf(value, (size_t)size, "(a value of %d characters)", len);
    else if (PMPI_Info_get(info, key, size - 1, value, &flag) != MPI_SUCCESS)
        return 0;
#endif
    return flag;
}
