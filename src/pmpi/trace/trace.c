/*
 * libmpitopo_trace: LD_PRELOADed into an unmodified MPI program, it records
 * who sends how much to whom and writes one pattern file at MPI_Finalize
 * (the tracing step of Mercier & Jeannot, EuroMPI'11), ready for
 * `mpitopo map`, `mpitopo eval` or mpitopo_pattern_adjacent.
 *
 * Intercepted, in C and in Fortran (mpif.h and `use mpi`; the bindings are
 * generated from src/pmpi/bindings.def, its `trace` lines, and call the
 * hooks mpitopo__trace_* below):
 *   MPI_Send, MPI_Bsend, MPI_Ssend, MPI_Rsend, MPI_Isend, MPI_Ibsend,
 *   MPI_Issend, MPI_Irsend, MPI_Sendrecv, MPI_Sendrecv_replace: one message
 *     of count x type size bytes to dest;
 *   MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init: the
 *     request is remembered; each MPI_Start / MPI_Startall of it counts one
 *     message; MPI_Request_free forgets it;
 *   MPI_Finalize: gathers the edges on rank 0 of MPI_COMM_WORLD and writes
 *     the file, then calls PMPI_Finalize (one thread calls it, as MPI
 *     requires, after the others' last MPI call).
 * Destinations are translated to ranks of MPI_COMM_WORLD (the remote group
 * for intercommunicators), with a per-communicator cache hung on the
 * communicator as an attribute (so it dies with it); MPI_PROC_NULL is
 * ignored, and a call MPI refused is not counted. Memory per process is
 * O(distinct destinations + live persistent requests), never O(processes);
 * rank 0 needs O(edges + processes) at the end.
 *
 * CPU and GPU traffic (issue 20): a send whose buffer is device memory
 * counts for the GPU pattern C_gpu, any other for the CPU pattern C_cpu.
 * The tracer asks the CUDA runtime, cudaPointerGetAttributes, found at run
 * time with dlopen/dlsym (no link-time dependency):
 *   - MPITOPO_CUDART=PATH: that library (a substitute in the tests), loaded
 *     at the first send (rank 0 says so when it cannot be loaded, and
 *     every send counts as CPU traffic); `off`: no query at all;
 *   - unset: cudaPointerGetAttributes already in the global scope, or a
 *     libcudart.so* the program has loaded; otherwise, once the program
 *     has loaded the CUDA driver (libcuda.so.1), libcudart.so, .so.12,
 *     .so.11.0, .so.11, .so.10 loaded by the tracer. A program that never
 *     loads CUDA is never made to initialise it (no context on GPU 0 in
 *     every process); whether a library was loaded since the last look is
 *     read from dl_iterate_phdr's load counter, so the look is cheap.
 * The memory type is read by the runtime's version (cudaRuntimeGetVersion,
 * assumed >= 11000 when the library has none): >= 11.0 the first int of
 * cudaPointerAttributes (`type`), 10.x the second (`type`, after the
 * deprecated `memoryType`), < 10 the first (`memoryType`); the types
 * cudaMemoryTypeDevice (2) and cudaMemoryTypeManaged (3) are device
 * memory, unregistered (0) and pinned host (1) memory are not. A query
 * that fails (CUDA < 11 fails on unregistered host memory) means host
 * memory, and its error is cleared with cudaGetLastError so the program's
 * own error checks do not see it. Persistent sends are classified once, at
 * *_init.
 *
 * Environment:
 *   MPITOPO_TRACE_FILE   the pattern file (default "mpitopo-trace.txt"),
 *                        written by rank 0 of MPI_COMM_WORLD: the CPU
 *                        traffic; the GPU traffic, when any process saw
 *                        some, in the same name with ".gpu" appended (the
 *                        same format, same number of processes); when none
 *                        was seen, no ".gpu" file is written and one left
 *                        by an earlier run is removed, so the first file is
 *                        byte for byte what a tracer without the split
 *                        writes;
 *   MPITOPO_CUDART       see above;
 *   MPITOPO_VERBOSE=1    rank 0 says what it wrote.
 * A file that cannot be written gives one line on stderr; the program goes
 * on to PMPI_Finalize either way. Thread safe (one mutex around the
 * tables). The tracer's own communication uses PMPI_* only.
 */
/* dl_iterate_phdr, RTLD_DEFAULT, RTLD_NOLOAD */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <mpitopo.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmpi/trace/trace.h"
#include "core/env.h"

_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "request handles fit 64 bits");

/* What a communicator's attribute holds: its group (local, or remote for an
 * intercommunicator) and the translations asked for so far. */
typedef struct comm_cache {
    int identity; /* congruent to MPI_COMM_WORLD: no translation */
    MPI_Group group;
    trace_table_t ranks;
} comm_cache_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trace_table_t edges, gpu_edges, persistent;
static int keyval = MPI_KEYVAL_INVALID;
static MPI_Group world_group = MPI_GROUP_NULL;
static uint64_t lost;          /* messages not recorded (no memory, no world rank) */
static uint64_t lost_requests; /* persistent requests not remembered (no memory) */
static _Thread_local int fortran_depth;

/* Whether to record. The tracer always records; the shim (built with
 * MPITOPO_TRACE_IN_SHIM) when MPITOPO_TRACE_FILE or MPITOPO_RUN_RECORD is
 * set, and otherwise only watches the communicators it renumbered
 * (mpitopo__shim_watch_used). */
#ifdef MPITOPO_TRACE_IN_SHIM
static pthread_once_t on_once = PTHREAD_ONCE_INIT;
static int on;

static void read_on(void)
{
    const char *file = mpitopo__getenv(MPITOPO_ENV_TRACE_FILE);
    const char *record = mpitopo__getenv(MPITOPO_ENV_RUN_RECORD);
    on = (file && *file) || (record && *record);
}

int mpitopo__trace_on(void)
{
    pthread_once(&on_once, read_on);
    return on;
}
#else
int mpitopo__trace_on(void)
{
    return 1;
}
#endif

void mpitopo__trace_fortran_enter(void)
{
    fortran_depth++;
}

void mpitopo__trace_fortran_leave(void)
{
    fortran_depth--;
}

static int cache_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    comm_cache_t *c = attr;
    if (c->group != MPI_GROUP_NULL)
        PMPI_Group_free(&c->group);
    mpitopo__trace_table_free(&c->ranks);
    free(c);
    return MPI_SUCCESS;
}

static comm_cache_t *cache_new(MPI_Comm comm)
{
    int cmp = MPI_UNEQUAL, inter = 0;
    comm_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->group = MPI_GROUP_NULL;
    PMPI_Comm_test_inter(comm, &inter);
    if (!inter)
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
    c->identity = cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
    if (!c->identity && (inter ? PMPI_Comm_remote_group(comm, &c->group)
                               : PMPI_Comm_group(comm, &c->group)) != MPI_SUCCESS) {
        free(c);
        return NULL;
    }
    return c;
}

/* The cache of comm, made on first use. Called with the lock held. */
static comm_cache_t *cache_of(MPI_Comm comm)
{
    comm_cache_t *c = NULL;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_delete, &keyval, NULL) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &c, &found) == MPI_SUCCESS && found)
        return c;
    if (!(c = cache_new(comm)))
        return NULL;
    if (PMPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
        cache_delete(comm, keyval, c, NULL);
        return NULL;
    }
    return c;
}

/* World rank of `rank` of comm, or -1 (out of memory, MPI failure).
 * Called with the lock held. */
static int world_rank(int rank, MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    comm_cache_t *c = cache_of(comm);
    if (!c)
        return -1;
    if (c->identity)
        return rank;
    trace_slot_t *s = mpitopo__trace_table_find(&c->ranks, (uint64_t)rank);
    if (s)
        return s->rank;
    int w = MPI_UNDEFINED;
    if (world_group == MPI_GROUP_NULL && PMPI_Comm_group(MPI_COMM_WORLD, &world_group) != MPI_SUCCESS)
        return -1;
    if (PMPI_Group_translate_ranks(c->group, 1, &rank, world_group, &w) != MPI_SUCCESS ||
        w == MPI_UNDEFINED)
        return -1; /* a process outside MPI_COMM_WORLD (dynamic processes) */
    if (!(s = mpitopo__trace_table_get(&c->ranks, (uint64_t)rank)))
        return -1;
    s->rank = w;
    return w;
}

/* ------------------------------------------------------------------------
 * Is a buffer device memory? (see the top of the file)
 */

typedef int (*cuda_attr_fn)(void *attributes, const void *ptr);
typedef int (*cuda_int_fn)(int *value);
typedef int (*cuda_void_fn)(void);

static struct {
    int done;             /* no further look: bound, or never will be */
    unsigned long long adds; /* dl_iterate_phdr's load counter at the last look */
    cuda_attr_fn attr;
    cuda_void_fn last_error;
    int type_index;       /* which int of cudaPointerAttributes is the memory type */
} cuda = {0, ~0ull, NULL, NULL, 0};

static const char *const cudart_names[] = {"libcudart.so",      "libcudart.so.12",
                                           "libcudart.so.11.0", "libcudart.so.11",
                                           "libcudart.so.10",   NULL};

static int load_counter(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *adds = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        *adds = info->dlpi_adds;
    else
        (*adds)++; /* an old loader without the counter: look every time */
    return 1;      /* the counter is the same on every object: stop at the first */
}

/* Bind the functions of handle h (or of the global scope for RTLD_DEFAULT);
 * 1 when cudaPointerGetAttributes is there. */
static int cuda_bind(void *h)
{
    cuda_attr_fn attr;
    cuda_int_fn version_fn;
    cuda_void_fn last_error;
    *(void **)&attr = dlsym(h, "cudaPointerGetAttributes");
    if (!attr)
        return 0;
    *(void **)&version_fn = dlsym(h, "cudaRuntimeGetVersion");
    *(void **)&last_error = dlsym(h, "cudaGetLastError");
    int version = 0;
    if (!version_fn || version_fn(&version) != 0 || version <= 0)
        version = 11000;
    cuda.type_index = version >= 10000 && version < 11000 ? 1 : 0;
    cuda.last_error = last_error;
    cuda.attr = attr;
    cuda.done = 1;
    return 1;
}

/* Look for the runtime; with the lock held. */
static void cuda_resolve(void)
{
    const char *path = mpitopo__getenv(MPITOPO_ENV_CUDART);
    if (path && *path) {
        cuda.done = 1;
        if (strcmp(path, "off") == 0)
            return;
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if ((!h || !cuda_bind(h)) && rank == 0)
            fprintf(stderr,
                    "mpitopo trace: MPITOPO_CUDART=%s: %s; every send counts as CPU traffic\n",
                    path, h ? "no cudaPointerGetAttributes in it" : dlerror());
        return;
    }
    unsigned long long adds = cuda.adds;
    dl_iterate_phdr(load_counter, &adds);
    if (adds == cuda.adds)
        return; /* nothing loaded since the last look */
    cuda.adds = adds;
    if (cuda_bind(RTLD_DEFAULT))
        return;
    for (int i = 0; cudart_names[i]; i++) {
        void *h = dlopen(cudart_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h && cuda_bind(h))
            return;
    }
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!driver)
        return; /* the program has not loaded CUDA (yet): no device memory */
    dlclose(driver);
    cuda.done = 1; /* the driver is there: one try at loading a runtime */
    for (int i = 0; cudart_names[i]; i++) {
        void *h = dlopen(cudart_names[i], RTLD_NOW | RTLD_LOCAL);
        if (h && cuda_bind(h))
            return;
    }
}

/* 1 when buf is device (or managed) memory; with the lock held. */
static int is_device(const void *buf)
{
    if (!cuda.done)
        cuda_resolve();
    if (!cuda.attr || !buf)
        return 0;
    union {
        int ints[2];
        unsigned char bytes[256]; /* larger than every version's struct */
        void *align;
    } a;
    memset(&a, 0, sizeof a);
    if (cuda.attr(&a, buf) != 0) {
        if (cuda.last_error)
            cuda.last_error();
        return 0;
    }
    int type = a.ints[cuda.type_index];
    return type == 2 || type == 3;
}

static uint64_t message_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Add msgs messages of bytes in total to world rank w, in the GPU pattern
 * when gpu. Lock held. */
static void add_edge(int w, int gpu, uint64_t bytes, uint64_t msgs)
{
    trace_table_t *t = gpu ? &gpu_edges : &edges;
    trace_slot_t *s = w < 0 ? NULL : mpitopo__trace_table_get(t, (uint64_t)w);
    if (!s) {
        lost += msgs;
        return;
    }
    s->bytes += bytes;
    s->msgs += msgs;
}

void mpitopo__trace_send(const void *buf, int dest, MPI_Count count, MPI_Datatype type,
                         MPI_Comm comm)
{
#ifdef MPITOPO_TRACE_IN_SHIM
    mpitopo__shim_watch_used(comm);
#endif
    if (dest == MPI_PROC_NULL || fortran_depth || !mpitopo__trace_on())
        return;
    uint64_t bytes = message_bytes(count, type);
    pthread_mutex_lock(&lock);
    add_edge(world_rank(dest, comm), is_device(buf), bytes, 1);
    pthread_mutex_unlock(&lock);
}

void mpitopo__trace_neighbors(MPI_Comm comm, const void *buf, int count, const int *counts, MPI_Datatype type,
                              const MPI_Datatype *types)
{
    if (fortran_depth || !mpitopo__trace_on() || comm == MPI_COMM_NULL)
        return;
    int topo = MPI_UNDEFINED, n = 0, rank, indeg = 0, weighted = 0;
    int *out = NULL, *in = NULL, *w = NULL;
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return;
    if (topo == MPI_CART) {
        int ndims = 0;
        PMPI_Cartdim_get(comm, &ndims);
        out = malloc((size_t)(2 * ndims + 1) * sizeof *out);
        for (int d = 0; out && d < ndims; d++)
            PMPI_Cart_shift(comm, d, 1, &out[2 * d], &out[2 * d + 1]); /* -1 side, then +1 side */
        n = out ? 2 * ndims : 0;
    } else if (topo == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, rank, &n);
        out = malloc((size_t)(n + 1) * sizeof *out);
        if (!out || PMPI_Graph_neighbors(comm, rank, n, out) != MPI_SUCCESS)
            n = 0;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &indeg, &n, &weighted);
        out = malloc((size_t)(n + 1) * sizeof *out);
        in = malloc((size_t)(indeg + 1) * sizeof *in);
        w = malloc((size_t)(indeg + n + 1) * sizeof *w);
        if (!out || !in || !w ||
            PMPI_Dist_graph_neighbors(comm, indeg, in, weighted ? w : MPI_UNWEIGHTED, n, out,
                                      weighted ? w + indeg : MPI_UNWEIGHTED) != MPI_SUCCESS)
            n = 0;
    }
    for (int i = 0; i < n; i++)
        mpitopo__trace_send(buf, out[i], counts ? counts[i] : count, types ? types[i] : type, comm);
    free(out);
    free(in);
    free(w);
}

static uint64_t request_key(MPI_Request req)
{
    uint64_t key = 0;
    memcpy(&key, &req, sizeof req);
    return key;
}

void mpitopo__trace_init(MPI_Request req, const void *buf, int dest, MPI_Count count,
                         MPI_Datatype type, MPI_Comm comm)
{
#ifdef MPITOPO_TRACE_IN_SHIM
    mpitopo__shim_watch_used(comm);
#endif
    if (dest == MPI_PROC_NULL || fortran_depth || !mpitopo__trace_on())
        return;
    uint64_t bytes = message_bytes(count, type);
    pthread_mutex_lock(&lock);
    /* A destination that cannot be translated stays in the table with rank
     * -1, so that its starts are counted as lost. */
    int w = world_rank(dest, comm);
    trace_slot_t *s = mpitopo__trace_table_get(&persistent, request_key(req));
    if (s) {
        s->rank = w;
        s->bytes = bytes;
        s->gpu = is_device(buf);
    } else {
        lost_requests++;
    }
    pthread_mutex_unlock(&lock);
}

void mpitopo__trace_start(int n, const MPI_Request *reqs)
{
    if (fortran_depth || !mpitopo__trace_on())
        return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) {
        const trace_slot_t *s = mpitopo__trace_table_find(&persistent, request_key(reqs[i]));
        if (s)
            add_edge(s->rank, s->gpu, s->bytes, 1);
    }
    pthread_mutex_unlock(&lock);
}

void mpitopo__trace_forget(MPI_Request req)
{
    if (fortran_depth || !mpitopo__trace_on())
        return;
    pthread_mutex_lock(&lock);
    mpitopo__trace_table_remove(&persistent, request_key(req));
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------------
 * MPI_Finalize: gather and write.
 */

/* The edges of this process as (dst, bytes, msgs, gpu) records of doubles
 * (dst and counts are exact up to 2^53; gpu 1 for the GPU pattern), and
 * the tables emptied. *n = -1 when out of memory. */
enum { RECORD = 4 };

static void take_table(const trace_table_t *t, int gpu, double *out, int *n)
{
    for (uint64_t i = 0; i < t->cap; i++) {
        const trace_slot_t *s = &t->slots[i];
        if (!s->used)
            continue;
        double *r = out + (size_t)RECORD * (size_t)*n;
        r[0] = (double)s->key;
        r[1] = (double)s->bytes;
        r[2] = (double)s->msgs;
        r[3] = gpu;
        (*n)++;
    }
}

static double *take_edges(int *n)
{
    pthread_mutex_lock(&lock);
    uint64_t count = edges.n + gpu_edges.n;
    double *out = count > INT32_MAX ? NULL : malloc((count ? count : 1) * RECORD * sizeof *out);
    *n = out ? 0 : -1;
    if (out) {
        take_table(&edges, 0, out, n);
        take_table(&gpu_edges, 1, out, n);
    }
    mpitopo__trace_table_free(&edges);
    mpitopo__trace_table_free(&gpu_edges);
    mpitopo__trace_table_free(&persistent);
    if (lost || lost_requests)
        fprintf(stderr,
                "mpitopo trace: %llu messages and the starts of %llu persistent requests were "
                "not recorded (out of memory, or a destination outside MPI_COMM_WORLD)\n",
                (unsigned long long)lost, (unsigned long long)lost_requests);
    pthread_mutex_unlock(&lock);
    return out;
}

static int verbose(void)
{
    return mpitopo__env_level(MPITOPO_ENV_VERBOSE) > 0;
}

/* On rank 0: the pattern of the gathered records of kind gpu (0 CPU, 1
 * GPU), written to path. */
/* On rank 0: the pattern of the gathered records of kind gpu (0 CPU, 1
 * GPU, -1 both), *nedges of them; NULL with the library's error set when
 * out of memory. */
static mpitopo_pattern_t *records_pattern(int gpu, int nprocs, const int *counts, const double *all, int64_t total,
                                          int64_t *nedges)
{
    int64_t m = 0;
    for (int64_t e = 0; e < total; e++)
        m += gpu < 0 || all[RECORD * e + 3] == gpu;
    int *src = malloc((size_t)(m ? m : 1) * sizeof *src);
    int *dst = malloc((size_t)(m ? m : 1) * sizeof *dst);
    double *bytes = malloc((size_t)(m ? m : 1) * sizeof *bytes);
    double *msgs = malloc((size_t)(m ? m : 1) * sizeof *msgs);
    mpitopo_pattern_t *pattern = NULL;
    if (src && dst && bytes && msgs) {
        int64_t e = 0, k = 0;
        for (int p = 0; p < nprocs; p++)
            for (int c = 0; c < counts[p]; c++, e++) {
                const double *r = all + RECORD * e;
                if (gpu >= 0 && r[3] != gpu)
                    continue;
                src[k] = p;
                dst[k] = (int)r[0];
                bytes[k] = r[1];
                msgs[k] = r[2];
                k++;
            }
        if (mpitopo_pattern_create(nprocs, m, src, dst, bytes, msgs, &pattern) != MPITOPO_SUCCESS)
            pattern = NULL;
    }
    free(src);
    free(dst);
    free(bytes);
    free(msgs);
    *nedges = m;
    return pattern;
}

/* On rank 0: the pattern of the records of kind gpu, written to path. */
static void write_pattern(const char *path, int gpu, int nprocs, const int *counts,
                          const double *all, int64_t total)
{
    int64_t m = 0;
    mpitopo_pattern_t *pattern = records_pattern(gpu, nprocs, counts, all, total, &m);
    int rc = pattern ? mpitopo_pattern_write(pattern, path) : MPITOPO_ERR_NOMEM;
    if (rc != MPITOPO_SUCCESS)
        fprintf(stderr, "mpitopo trace: cannot write the trace to %s: %s\n", path,
                rc == MPITOPO_ERR_NOMEM && !*mpitopo_last_error() ? "out of memory"
                                                                   : mpitopo_last_error());
    else if (verbose())
        fprintf(stderr, "mpitopo trace: wrote %lld %sedges among %d processes to %s\n",
                (long long)m, gpu ? "GPU " : "", nprocs, path);
    mpitopo_pattern_destroy(&pattern);
}

/* On rank 0: the CPU file, and the GPU file when there is GPU traffic (a
 * stale one removed otherwise). */
static void write_patterns(int nprocs, const int *counts, const double *all, int64_t total)
{
    const char *path = mpitopo__getenv(MPITOPO_ENV_TRACE_FILE);
    if (!path || !*path)
        path = "mpitopo-trace.txt";
    write_pattern(path, 0, nprocs, counts, all, total);
    int any_gpu = 0;
    for (int64_t e = 0; e < total && !any_gpu; e++)
        any_gpu = all[RECORD * e + 3] != 0;
    size_t len = strlen(path);
    char *gpu_path = malloc(len + sizeof ".gpu");
    if (!gpu_path) {
        if (any_gpu)
            fprintf(stderr, "mpitopo trace: cannot write the GPU trace: out of memory\n");
        return;
    }
    memcpy(gpu_path, path, len);
    memcpy(gpu_path + len, ".gpu", sizeof ".gpu");
    if (any_gpu)
        write_pattern(gpu_path, 1, nprocs, counts, all, total);
    else
        unlink(gpu_path);
    free(gpu_path);
}

/* Rank 0 receives O(edges) records: counts first, then one Gatherv of
 * 4-double records (so 2^31-1 edges fit the int counts). A broadcast flag
 * lets every process skip the Gatherv together when rank 0 cannot take it
 * (too many edges, a process out of memory, rank 0 out of memory). On
 * rank 0, when it returns 1: *counts (records per process) and *all (the
 * records in process order), *total of them, both to free. */
static int gather(int *counts_out[], double **all_out, int64_t *total_out)
{
    int rank, size, n, ok = 1;
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    int64_t total = 0;
    MPI_Datatype record = MPI_DATATYPE_NULL;
    double *mine = take_edges(&n);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        counts = malloc((size_t)size * sizeof *counts);
        displs = malloc((size_t)size * sizeof *displs);
        ok = counts && displs;
    }
    PMPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int p = 0; rank == 0 && ok && p < size; p++) {
        if (counts[p] < 0 || total + counts[p] > INT32_MAX)
            ok = 0;
        else
            displs[p] = (int)total, total += counts[p];
    }
    if (rank == 0 && ok && !(all = malloc((size_t)(total ? total : 1) * RECORD * sizeof *all)))
        ok = 0;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) {
        PMPI_Type_contiguous(RECORD, MPI_DOUBLE, &record);
        PMPI_Type_commit(&record);
        PMPI_Gatherv(mine, n, record, all, counts, displs, record, 0, MPI_COMM_WORLD);
        PMPI_Type_free(&record);
    }
    if (rank == 0 && !ok)
        fprintf(stderr, "mpitopo trace: cannot gather the trace (%s); no file written\n",
                total > INT32_MAX ? "more than 2^31-1 edges" : "out of memory");
    free(mine);
    free(displs);
    if (rank != 0 || !ok) {
        free(counts);
        free(all);
        return 0;
    }
    *counts_out = counts;
    *all_out = all;
    *total_out = total;
    return 1;
}


/* Gather on rank 0; the files (the tracer's, or the shim's when
 * MPITOPO_TRACE_FILE is set), and in the shim the placement of mpitopo run
 * (collective: every process takes part, rank 0 holding the traffic). */
static void gather_and_write(void)
{
    int size, *counts = NULL;
    double *all = NULL;
    int64_t total = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int root = gather(&counts, &all, &total);
#ifdef MPITOPO_TRACE_IN_SHIM
    const char *file = mpitopo__getenv(MPITOPO_ENV_TRACE_FILE);
    if (root && file && *file)
        write_patterns(size, counts, all, total);
    const char *record = mpitopo__getenv(MPITOPO_ENV_RUN_RECORD);
    if (record && *record) {
        int64_t m = 0; /* the whole traffic, CPU and GPU */
        mpitopo_pattern_t *traffic = root ? records_pattern(-1, size, counts, all, total, &m) : NULL;
        mpitopo__shim_record_placement(record, root, traffic);
        mpitopo_pattern_destroy(&traffic);
    }
#else
    if (root)
        write_patterns(size, counts, all, total);
#endif
    free(counts);
    free(all);
}

/* Once only: the Fortran MPI_FINALIZE of MPICH calls the C MPI_Finalize. */
void mpitopo__trace_finalize(void)
{
    static int done;
    int initialized = 0, finalized = 1;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (done || !initialized || finalized || !mpitopo__trace_on())
        return;
    done = 1;
    gather_and_write();
    pthread_mutex_lock(&lock);
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    pthread_mutex_unlock(&lock);
}
