/*
 * The levels above the nodes from Slurm (issue 32), for comm_machine.c.
 *
 * Inside a Slurm job (SLURM_JOB_ID set, MPITOPO_SLURM not "off") and with
 * no network given, every process adds a block to its record of the
 * machine's one allgather: where its switches come from (its own
 * SLURM_TOPOLOGY_ADDR, or its host's switches in topology.conf), their
 * labels and the file's digest. After the allgather every process holds
 * the same blocks and draws the same levels, or the same error: no
 * collective is added.
 */
#include "mpi/mpi_internal.h"
#include "core/env.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FN "mpitopo_comm_machine"
#define W MPITOPO__SLURM_MAX_DEPTH

/* Status of a block. */
enum { SL_NONE = 0, SL_ADDR = 1, SL_FILE = 2, SL_UNKNOWN_HOST = 3, SL_NO_NAME = 4 };

/* Session state, read once (under lock). */
static pthread_mutex_t sl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int loaded, rc;
    char msg[400];
    int on;
    char path[4096];
    int explicit_path; /* MPITOPO_SLURM_TOPOLOGY */
    int file_loaded, file_rc;
    char file_msg[600];
    mpitopo__slurm_t *topo; /* NULL when there is no file */
    char **nodelist;        /* SLURM_JOB_NODELIST, for emulated nodes */
    int nnodes, capnodes;
    int nodelist_loaded;
} sl;

static void load(void)
{
    if (sl.loaded)
        return;
    sl.loaded = 1;
    const char *job = getenv("SLURM_JOB_ID"), *v = mpitopo__getenv(MPITOPO_ENV_SLURM);
    if (v && *v && strcmp(v, "on") && strcmp(v, "off")) {
        snprintf(sl.msg, sizeof sl.msg, "MPITOPO_SLURM = \"%.200s\": expected on or off", v);
        sl.rc = MPITOPO_ERR_PARSE;
        return;
    }
    sl.on = job && *job && !(v && !strcmp(v, "off"));
    const char *file = mpitopo__getenv(MPITOPO_ENV_SLURM_TOPOLOGY), *conf = getenv("SLURM_CONF");
    if (file && *file) {
        snprintf(sl.path, sizeof sl.path, "%s", file);
        sl.explicit_path = 1;
    } else if (conf && strrchr(conf, '/')) {
        snprintf(sl.path, sizeof sl.path, "%.*s/topology.conf", (int)(strrchr(conf, '/') - conf),
                 conf);
    } else {
        snprintf(sl.path, sizeof sl.path, "/etc/slurm/topology.conf");
    }
}

int mpitopo__slurm_wanted(int *on)
{
    pthread_mutex_lock(&sl_lock);
    load();
    int rc = sl.rc;
    *on = sl.on;
    if (rc != MPITOPO_SUCCESS)
        rc = MPITOPO_FAIL_AS(rc, FN, "%s", sl.msg);
    pthread_mutex_unlock(&sl_lock);
    return rc;
}

/* topology.conf, read once: NULL when the default file does not exist. */
static int load_file(const mpitopo__slurm_t **topo)
{
    if (!sl.file_loaded) {
        sl.file_loaded = 1;
        struct stat st;
        if (sl.explicit_path || stat(sl.path, &st) == 0) {
            sl.file_rc = mpitopo__slurm_read(sl.path, FN, &sl.topo);
            if (sl.file_rc != MPITOPO_SUCCESS)
                snprintf(sl.file_msg, sizeof sl.file_msg, "%s", mpitopo_last_error());
        }
    }
    *topo = sl.topo;
    if (sl.file_rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_MSG(sl.file_rc, "%s%s", sl.file_msg,
                                sl.explicit_path ? " (MPITOPO_SLURM_TOPOLOGY)" : "");
    return MPITOPO_SUCCESS;
}

static int add_name(void *ctx, const char *name)
{
    (void)ctx;
    if (sl.nnodes == sl.capnodes) {
        int cap = sl.capnodes ? 2 * sl.capnodes : 64;
        char **p = mpitopo__realloc_array(sl.nodelist, (size_t)cap, sizeof *p);
        if (!p)
            return 1;
        sl.nodelist = p;
        sl.capnodes = cap;
    }
    if (!(sl.nodelist[sl.nnodes] = mpitopo__strdup(name)))
        return 1;
    sl.nnodes++;
    return 0;
}

/* The k-th host of SLURM_JOB_NODELIST (an emulated node's name), or NULL. */
static const char *nodelist_host(int k)
{
    if (!sl.nodelist_loaded) {
        sl.nodelist_loaded = 1;
        const char *list = getenv("SLURM_JOB_NODELIST");
        char why[200];
        if (!list || !*list)
            list = getenv("SLURM_NODELIST");
        if (list && *list && mpitopo__slurm_hostlist(list, strlen(list), add_name, NULL, why,
                                                     sizeof why) < 0)
            mpitopo__log(1, "SLURM_JOB_NODELIST = \"%.200s\": %s; emulated nodes have no names",
                         list, why);
    }
    return k >= 0 && k < sl.nnodes ? sl.nodelist[k] : NULL;
}

static void put_label(int *rec, int l, int64_t v)
{
    rec[4 + 2 * l] = (int)(v & 0x7fffffff);
    rec[5 + 2 * l] = (int)(v >> 31);
}

static int64_t get_label(const int *rec, int l)
{
    return (int64_t)rec[4 + 2 * l] | ((int64_t)rec[5 + 2 * l] << 31);
}

/* This process's host name, and the record of its switches in the file. */
static int from_file(int emulated_node, int *rec)
{
    const mpitopo__slurm_t *t;
    int rc = load_file(&t);
    if (rc != MPITOPO_SUCCESS || !t)
        return rc;
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    if (emulated_node >= 0) {
        const char *h = nodelist_host(emulated_node);
        if (!h) {
            rec[0] = SL_NO_NAME;
            return MPITOPO_SUCCESS;
        }
        snprintf(host, sizeof host, "%s", h);
    } else {
        int len = 0;
        if ((rc = PMPI_Get_processor_name(host, &len)) != MPI_SUCCESS)
            return rc;
        host[len < 0 ? 0 : len > MPI_MAX_PROCESSOR_NAME ? MPI_MAX_PROCESSOR_NAME : len] = '\0';
    }
    uint64_t d = mpitopo__slurm_digest(t);
    rec[2] = (int)(d & 0x7fffffff);
    rec[3] = (int)((d >> 31) & 0x7fffffff);
    int h = mpitopo__slurm_find(t, host);
    if (h < 0) {
        rec[0] = SL_UNKNOWN_HOST;
        mpitopo__log(2, "Slurm: host %s is not a node of %s", host, sl.path);
        return MPITOPO_SUCCESS;
    }
    int64_t labels[W];
    mpitopo__slurm_path(t, h, &rec[1], labels, NULL);
    for (int l = 0; l < rec[1]; l++)
        put_label(rec, l, labels[l]);
    rec[0] = SL_FILE;
    return MPITOPO_SUCCESS;
}

int mpitopo__slurm_record(int emulated_node, int *rec)
{
    memset(rec, 0, MPITOPO__SLURM_REC * sizeof *rec);
    const char *addr = getenv("SLURM_TOPOLOGY_ADDR");
    if (addr && *addr) {
        const char *pattern = getenv("SLURM_TOPOLOGY_ADDR_PATTERN");
        int64_t labels[W];
        char why[300];
        if (!pattern || !*pattern)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, FN,
                                   "SLURM_TOPOLOGY_ADDR = \"%.200s\" without "
                                   "SLURM_TOPOLOGY_ADDR_PATTERN",
                                   addr);
        if (mpitopo__slurm_addr(addr, pattern, &rec[1], labels, why, sizeof why) != 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, FN, "%s", why);
        for (int l = 0; l < rec[1]; l++)
            put_label(rec, l, labels[l]);
        rec[0] = SL_ADDR;
        return MPITOPO_SUCCESS;
    }
    pthread_mutex_lock(&sl_lock);
    int rc = from_file(emulated_node, rec);
    pthread_mutex_unlock(&sl_lock);
    return rc;
}

/* The first process of status s (or of any other when not), -1 when none. */
static int first_of(int size, const int *all, int stride, int s, int not)
{
    for (int i = 0; i < size; i++)
        if ((all[(size_t)i * stride] == s) != not)
            return i;
    return -1;
}

int mpitopo__slurm_gathered(int size, const int *all, int stride, mpitopo__slurm_levels_t *S)
{
    memset(S, 0, sizeof *S);
    int addr = first_of(size, all, stride, SL_ADDR, 0), file = first_of(size, all, stride, SL_FILE, 0);
    int unknown = first_of(size, all, stride, SL_UNKNOWN_HOST, 0);
    if (addr >= 0) {
        int other = first_of(size, all, stride, SL_ADDR, 1);
        if (other >= 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, FN,
                                   "SLURM_TOPOLOGY_ADDR is set for process %d of comm but not "
                                   "for process %d: set it for every task, or for none",
                                   addr, other);
        snprintf(S->source, sizeof S->source, "Slurm (SLURM_TOPOLOGY_ADDR)");
    } else if (unknown >= 0) {
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOT_FOUND, FN,
                               "the host of process %d of comm is not a node of %s (Slurm's "
                               "topology)",
                               unknown, sl.path);
    } else if (file >= 0) {
        int other = first_of(size, all, stride, SL_FILE, 1);
        if (other >= 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, FN,
                                   "process %d of comm found its switches in %s, process %d "
                                   "found %s",
                                   file, sl.path, other,
                                   all[(size_t)other * stride] == SL_NO_NAME
                                       ? "no name for its emulated node in SLURM_JOB_NODELIST"
                                       : "no topology.conf");
        for (int i = 0; i < size; i++)
            if (all[(size_t)i * stride + 2] != all[2] || all[(size_t)i * stride + 3] != all[3])
                return MPITOPO_FAIL_AS(MPITOPO_ERR_MISMATCH, FN,
                                       "processes 0 and %d of comm read different files %s", i,
                                       sl.path);
        snprintf(S->source, sizeof S->source, "Slurm (%.200s)", sl.path);
    } else {
        snprintf(S->source, sizeof S->source,
                 "none (a Slurm job without SLURM_TOPOLOGY_ADDR or %.200s)", sl.path);
        return MPITOPO_SUCCESS;
    }
    int *depth = mpitopo__malloc_array((size_t)size, sizeof *depth);
    int64_t *labels = mpitopo__malloc_array((size_t)size * W, sizeof *labels);
    double *speeds = file >= 0 ? mpitopo__malloc_array((size_t)size * W, sizeof *speeds) : NULL;
    S->labels = mpitopo__malloc_array((size_t)size * W, sizeof *S->labels);
    int rc = MPITOPO_SUCCESS;
    if (!depth || !labels || !S->labels || (file >= 0 && !speeds)) {
        rc = MPITOPO_NOMEM("the Slurm levels");
        goto cleanup;
    }
    for (int i = 0; i < size; i++) {
        const int *r = all + (size_t)i * stride;
        depth[i] = r[1];
        if (r[1] < 1 || r[1] > W) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOT_FOUND, FN,
                                 "process %d of comm has no switch above its node in %s", i,
                                 addr >= 0 ? "SLURM_TOPOLOGY_ADDR" : sl.path);
            goto cleanup;
        }
        for (int l = 0; l < r[1]; l++) {
            labels[(size_t)i * W + l] = get_label(r, l);
            if (speeds)
                speeds[(size_t)i * W + l] = mpitopo__slurm_speed(sl.topo, get_label(r, l));
        }
    }
    rc = mpitopo__slurm_levels(size, depth, labels, speeds,
                               addr >= 0 || !sl.topo ? "tree" : mpitopo__slurm_kind(sl.topo),
                               &S->n, S->labels, S->names, S->factor);
cleanup:
    mpitopo__free(depth);
    mpitopo__free(labels);
    mpitopo__free(speeds);
    if (rc != MPITOPO_SUCCESS)
        mpitopo__slurm_levels_free(S);
    return rc;
}

void mpitopo__slurm_levels_free(mpitopo__slurm_levels_t *S)
{
    mpitopo__free(S->labels);
    S->labels = NULL;
    S->n = 0;
}

void mpitopo__slurm_finalize(void)
{
    pthread_mutex_lock(&sl_lock);
    mpitopo__slurm_free(&sl.topo);
    for (int i = 0; i < sl.nnodes; i++)
        mpitopo__free(sl.nodelist[i]);
    mpitopo__free(sl.nodelist);
    memset(&sl, 0, sizeof sl);
    pthread_mutex_unlock(&sl_lock);
}
