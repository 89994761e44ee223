/*
 * The configuration of the global collectives: MPITOPO_COLL and the info
 * key mpitopo_coll (syntax in coll.h, mpitopo_collectives group). Whether
 * the shim routes a call to mpitopo (mpitopo_coll_handles) is decided in
 * gcoll_api.c from it.
 */
#include "coll/global/gcoll_internal.h"
#include "core/env.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const alg_names[MPITOPO__GA_COUNT] = {"auto", "mpi",  "rd",   "bruck",
                                                          "ring", "hier", "hierb", "binomial"};
static const char *const heur_names[MPITOPO__GH_COUNT] = {"auto", "none", "rdmh",
                                                           "rmh",  "bbmh", "bgmh"};
static const char *const op_names[MPITOPO__COLL_NOPS] = {"allgather", "bcast", "gather",
                                                          "allreduce"};

const char *mpitopo__galg_name(mpitopo__galg_t a)
{
    return a >= 0 && a < MPITOPO__GA_COUNT ? alg_names[a] : "?";
}

const char *mpitopo__gheur_name(mpitopo__gheur_t h)
{
    return h >= 0 && h < MPITOPO__GH_COUNT ? heur_names[h] : "?";
}

/* Whether algorithm a exists for operation op. */
static int alg_fits(int op, mpitopo__galg_t a)
{
    if (a == MPITOPO__GA_AUTO || a == MPITOPO__GA_MPI)
        return 1;
    switch (op) {
    case MPITOPO__COLL_OP_ALLGATHER:
        return a == MPITOPO__GA_RD || a == MPITOPO__GA_BRUCK || a == MPITOPO__GA_RING ||
               a == MPITOPO__GA_HIER || a == MPITOPO__GA_HIERB;
    case MPITOPO__COLL_OP_BCAST:
    case MPITOPO__COLL_OP_GATHER:
        return a == MPITOPO__GA_BINOMIAL;
    default:
        return a == MPITOPO__GA_RD;
    }
}

static void defaults(mpitopo__gconf_t *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < MPITOPO__COLL_NOPS; i++)
        c->order[i] = -1;
    c->switch_bytes = 1024;
}

static int bad(const char *func, const char *where, const char *text, const char *why,
               const char *item)
{
    return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                           "%s = \"%s\": %s \"%s\" (expected off, auto, or items such as "
                           "allgather=ring:rmh,bcast=binomial:none,order=initcomm,switch=1024)",
                           where, text, why, item);
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static int parse_order(const char *s)
{
    return strcmp(s, "initcomm") == 0 ? MPITOPO__GO_INITCOMM
           : strcmp(s, "endshfl") == 0 ? MPITOPO__GO_ENDSHFL
                                       : -1;
}

/* One item "OP=ALG[:HEUR[:ORDER]]", "order=X" or "switch=N". */
static int parse_item(char *item, mpitopo__gconf_t *c, const char *text, const char *where,
                      const char *func)
{
    char *eq = strchr(item, '=');
    if (!eq)
        return strcmp(item, "auto") == 0 ? MPITOPO_SUCCESS
                                         : bad(func, where, text, "unknown item", item);
    *eq = '\0';
    char *val = eq + 1;
    if (strcmp(item, "order") == 0) {
        int o = parse_order(val);
        if (o < 0)
            return bad(func, where, text, "unknown order", val);
        for (int i = 0; i < MPITOPO__COLL_NOPS; i++)
            c->order[i] = o;
        return MPITOPO_SUCCESS;
    }
    if (strcmp(item, "switch") == 0) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end || v < 0)
            return bad(func, where, text, "bad switch size", val);
        c->switch_bytes = v;
        return MPITOPO_SUCCESS;
    }
    int all = strcmp(item, "all") == 0, op = all ? 0 : lookup(op_names, MPITOPO__COLL_NOPS, item);
    if (op < 0)
        return bad(func, where, text, "unknown operation", item);
    char *f[3] = {val, NULL, NULL};
    for (int k = 1; k < 3; k++) {
        char *colon = f[k - 1] ? strchr(f[k - 1], ':') : NULL;
        if (colon) {
            *colon = '\0';
            f[k] = colon + 1;
        }
    }
    if (f[2] && strchr(f[2], ':'))
        return bad(func, where, text, "too many fields in", val);
    int a = lookup(alg_names, MPITOPO__GA_COUNT, f[0]);
    int h = f[1] ? lookup(heur_names, MPITOPO__GH_COUNT, f[1]) : MPITOPO__GH_AUTO;
    int o = f[2] ? parse_order(f[2]) : -2;
    if (a < 0)
        return bad(func, where, text, "unknown algorithm", f[0]);
    if (h < 0)
        return bad(func, where, text, "unknown heuristic", f[1]);
    if (o == -1)
        return bad(func, where, text, "unknown order", f[2]);
    for (int i = all ? 0 : op; i < (all ? MPITOPO__COLL_NOPS : op + 1); i++) {
        if (!all && !alg_fits(i, (mpitopo__galg_t)a))
            return bad(func, where, text, "algorithm not available for this operation", f[0]);
        c->alg[i] = all && !alg_fits(i, (mpitopo__galg_t)a) ? MPITOPO__GA_AUTO : (mpitopo__galg_t)a;
        c->heur[i] = (mpitopo__gheur_t)h;
        if (o >= 0)
            c->order[i] = o;
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__gconf_parse(const char *text, mpitopo__gconf_t *c, const char *where,
                         const char *func)
{
    defaults(c);
    if (!text || !*text || strcmp(text, "off") == 0) {
        c->off = 1;
        return MPITOPO_SUCCESS;
    }
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s: a value of %zu characters (at most %zu)",
                               where, strlen(text), sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", text);
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char *save = NULL;
    for (char *item = strtok_r(buf, ", \t", &save); item; item = strtok_r(NULL, ", \t", &save)) {
        int rc = parse_item(item, c, text, where, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
    }
    return MPITOPO_SUCCESS;
}

/* MPITOPO_COLL, read once. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char env_text[256];
static int env_set;

static void read_env(void)
{
    const char *v = mpitopo__getenv(MPITOPO_ENV_COLL);
    if (v && *v) {
        snprintf(env_text, sizeof env_text, "%s", v);
        env_set = 1;
    }
}

/* The value of the key in comm's MPI info (Open MPI keeps keys it does not
 * know; MPICH none: mpitopo_comm_set_info is the way there). */
static int mpi_info_value(MPI_Comm comm, char *value, int size)
{
    MPI_Info info = MPI_INFO_NULL;
    int flag = 0;
    if (PMPI_Comm_get_info(comm, &info) != MPI_SUCCESS || info == MPI_INFO_NULL)
        return 0;
    int len = 0;
    if (PMPI_Info_get_valuelen(info, "mpitopo_coll", &len, &flag) == MPI_SUCCESS && flag &&
        len < size)
        flag = PMPI_Info_get(info, "mpitopo_coll", size - 1, value, &flag) == MPI_SUCCESS && flag;
    else
        flag = 0;
    PMPI_Info_free(&info);
    return flag;
}

int mpitopo__gconf_of(MPI_Comm comm, mpitopo__gconf_cache_t *cache, mpitopo__gconf_t *c,
                      const char *func)
{
    char v[256], key[260];
    const char *text = NULL, *where = "MPITOPO_COLL";
    /* No communicator's keys changed since conf was taken (the MPI info
     * and MPITOPO_COLL are read once): conf holds. */
    unsigned gen = mpitopo__comm_info_generation();
    if (cache && cache->valid && cache->gen == gen) {
        *c = cache->conf;
        return MPITOPO_SUCCESS;
    }
    if (mpitopo__comm_info_get(comm, "mpitopo_coll", v, sizeof v)) {
        text = v;
        where = "comm's info key mpitopo_coll";
    } else {
        int found;
        if (cache) {
            if (!cache->mpi_read) {
                cache->mpi_found = mpi_info_value(comm, cache->mpi_text, sizeof cache->mpi_text);
                cache->mpi_read = 1;
            }
            found = cache->mpi_found;
            if (found)
                snprintf(v, sizeof v, "%s", cache->mpi_text);
        } else
            found = mpi_info_value(comm, v, sizeof v);
        if (found) {
            text = v;
            where = "comm's info key mpitopo_coll";
        } else {
            pthread_once(&env_once, read_env);
            text = env_set ? env_text : NULL;
        }
    }
    /* The cache key: where (first letter) and the text. */
    snprintf(key, sizeof key, "%c%s", where[0], text ? text : "");
    if (cache && cache->valid && strcmp(cache->text, key) == 0) {
        *c = cache->conf;
        cache->gen = gen;
        return MPITOPO_SUCCESS;
    }
    int rc = mpitopo__gconf_parse(text, c, where, func);
    if (rc == MPITOPO_SUCCESS && cache && strlen(key) < sizeof cache->text) {
        memcpy(cache->text, key, strlen(key) + 1); /* fits: checked above */
        cache->conf = *c;
        cache->valid = 1;
        cache->gen = gen;
    }
    return rc;
}
