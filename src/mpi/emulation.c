/*
 * Emulation: MPITOPO_EMULATE describes a machine with a "node" level and
 * MPI_COMM_WORLD is placed on its leaves (MPITOPO_EMULATE_PLACEMENT), so one
 * box looks like many nodes. The variables are read once per MPI session;
 * the machine and the placement are built once and released at
 * MPI_Finalize.
 */
#include "mpi/mpi_internal.h"
#include "core/env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMU_MSG 480

static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int loaded;
    int rc; /* error of reading the variables, with msg */
    char msg[EMU_MSG];
    mpitopo_machine_t *machine; /* NULL when emulation is off */
    char *desc;                 /* MPITOPO_EMULATE, for messages */
    char *placement;            /* MPITOPO_EMULATE_PLACEMENT or "block" */
    int world_size;             /* size the placement below was computed for, 0 if none */
    int *leaf_of_rank;
} emu;

/* Keep the current error message, prefixed, as the state's error. */
static int emu_error(int rc, const char *fmt, const char *value)
{
    char inner[sizeof emu.msg];
    /* Long messages are cut, not an error. */
    if (snprintf(inner, sizeof inner, "%s", mpitopo_last_error()) < 0)
        inner[0] = '\0';
    if (snprintf(emu.msg, sizeof emu.msg, fmt, value, inner) < 0)
        emu.msg[0] = '\0';
    emu.rc = rc;
    return rc;
}

static int load_machine(void)
{
    const char *desc = mpitopo__getenv(MPITOPO_ENV_EMULATE);
    const char *placement = mpitopo__getenv(MPITOPO_ENV_EMULATE_PLACEMENT);
    if (!desc || !*desc)
        return MPITOPO_SUCCESS;
    int rc = mpitopo_machine_from_string(desc, &emu.machine);
    if (rc != MPITOPO_SUCCESS)
        return emu_error(rc, "MPITOPO_EMULATE = \"%s\" is not a machine description: %s", desc);
    int node_level = -1;
    mpitopo_machine_node_level(emu.machine, &node_level);
    if (node_level < 0) {
        MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "it has no level named \"node\"");
        mpitopo_machine_destroy(&emu.machine);
        return emu_error(MPITOPO_ERR_ARG, "MPITOPO_EMULATE = \"%s\": %s", desc);
    }
    emu.placement = mpitopo__strdup(placement && *placement ? placement : "block");
    emu.desc = mpitopo__strdup(desc);
    if (!emu.placement || !emu.desc) {
        MPITOPO_NOMEM("the emulation settings");
        mpitopo_machine_destroy(&emu.machine);
        return emu_error(MPITOPO_ERR_NOMEM, "MPITOPO_EMULATE = \"%s\": %s", desc);
    }
    char buf[128] = "";
    mpitopo_machine_describe(emu.machine, buf, sizeof buf);
    mpitopo__log(2, "emulating %s, placement %s", buf, emu.placement);
    return MPITOPO_SUCCESS;
}

/* MPITOPO_EMULATE_PLACEMENT=file:PATH (what `mpitopo run` applies under
 * emulation): the leaf of every world rank, one integer per rank in rank
 * order, separated by white space, `#` to the end of a line a comment.
 * Exactly world_size distinct leaves of the machine. */
static int read_placement_file(const char *path, int world_size, int nleaves, int *leaves)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "cannot open %s", path);
    int *seen = mpitopo__calloc((size_t)nleaves, sizeof *seen);
    if (!seen) {
        fclose(f);
        return MPITOPO_NOMEM("the placement file");
    }
    int n = 0, line = 1, rc = MPITOPO_SUCCESS, c;
    while (rc == MPITOPO_SUCCESS && (c = fgetc(f)) != EOF) {
        if (c == '\n') {
            line++;
        } else if (c == '#') {
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
            line++;
        } else if (c >= '0' && c <= '9') {
            long v = c - '0';
            while ((c = fgetc(f)) != EOF && c >= '0' && c <= '9')
                v = v < 100000000 ? 10 * v + (c - '0') : v;
            if (c != EOF && c != '\n' && c != ' ' && c != '\t' && c != '\r')
                rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_PARSE, "%s:%d: '%c' after a leaf number", path, line, c);
            else if (v >= nleaves)
                rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_RANGE, "%s:%d: leaf %ld, the machine has %d", path, line, v,
                                      nleaves);
            else if (seen[v]++)
                rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "%s:%d: leaf %ld given twice", path, line, v);
            else if (n >= world_size)
                rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "%s:%d: more leaves than the %d processes", path, line,
                                      world_size);
            else
                leaves[n++] = (int)v;
            if (c == '\n')
                line++;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_PARSE, "%s:%d: '%c' is not a leaf number", path, line, c);
        }
    }
    if (rc == MPITOPO_SUCCESS && n != world_size)
        rc = MPITOPO_FAIL_MSG(MPITOPO_ERR_ARG, "%s gives %d leaves for %d processes", path, n, world_size);
    fclose(f);
    mpitopo__free(seen);
    return rc;
}

/* Place world_size ranks on the emulated machine (once per world size). */
static int place(int world_size)
{
    int nleaves = 0;
    mpitopo_machine_nleaves(emu.machine, &nleaves);
    if (nleaves < world_size) {
        MPITOPO_FAIL_MSG(MPITOPO_ERR_RANGE,
                       "%d leaves, fewer than the %d processes of MPI_COMM_WORLD", nleaves,
                       world_size);
        return emu_error(MPITOPO_ERR_RANGE, "MPITOPO_EMULATE = \"%s\" has %s", emu.desc);
    }
    int *leaves = mpitopo__malloc_array((size_t)world_size, sizeof *leaves);
    if (!leaves)
        return MPITOPO_NOMEM("the emulated placement"); /* not kept: may succeed later */
    int rc = strncmp(emu.placement, "file:", 5) == 0
                 ? read_placement_file(emu.placement + 5, world_size, nleaves, leaves)
                 : mpitopo_placement(emu.machine, world_size, emu.placement, leaves);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__free(leaves);
        return emu_error(rc, "MPITOPO_EMULATE_PLACEMENT = \"%s\": %s", emu.placement);
    }
    mpitopo__free(emu.leaf_of_rank);
    emu.leaf_of_rank = leaves;
    emu.world_size = world_size;
    return MPITOPO_SUCCESS;
}

static int emulation_impl(int world_rank, int world_size, const mpitopo_machine_t **machine,
                      int *leaf)
{
    if (!machine)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_emulation", "machine = NULL");
    if (world_size < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_emulation", "world_size = %d must be >= 1", world_size);
    if (world_rank < 0 || world_rank >= world_size)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_emulation", "world_rank = %d must be in [0, %d)", world_rank,
                            world_size);
    *machine = NULL;
    if (leaf)
        *leaf = -1;
    int rc = mpitopo__at_finalize(MPITOPO__FINI_EMULATION, mpitopo__emulation_finalize);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&emu_lock);
    if (!emu.loaded) {
        emu.loaded = 1;
        load_machine();
    }
    if (emu.rc == MPITOPO_SUCCESS && emu.machine && emu.world_size != world_size)
        rc = place(world_size);
    if (emu.rc != MPITOPO_SUCCESS) {
        /* The same error, with its message, on every call. */
        rc = MPITOPO_FAIL_AS(emu.rc, "mpitopo_emulation", "%s", emu.msg);
    } else if (rc == MPITOPO_SUCCESS && emu.machine) {
        *machine = emu.machine;
        if (leaf)
            *leaf = emu.leaf_of_rank[world_rank];
    }
    pthread_mutex_unlock(&emu_lock);
    return rc;
}

int mpitopo_emulation(int world_rank, int world_size, const mpitopo_machine_t **machine, int *leaf)
{
    return mpitopo__mpi_result(__func__, emulation_impl(world_rank, world_size, machine, leaf));
}

int mpitopo__emulated_leaf(MPI_Comm comm, const mpitopo_machine_t **machine, int *leaf)
{
    int rank, wrank, wsize, rc;
    *machine = NULL;
    *leaf = -1;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(MPI_COMM_WORLD, &wsize)) != MPI_SUCCESS)
        return rc;
    if (comm == MPI_COMM_WORLD) {
        wrank = rank;
    } else {
        MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
        if ((rc = PMPI_Comm_group(comm, &group)) == MPI_SUCCESS &&
            (rc = PMPI_Comm_group(MPI_COMM_WORLD, &world)) == MPI_SUCCESS)
            rc = PMPI_Group_translate_ranks(group, 1, &rank, world, &wrank);
        if (group != MPI_GROUP_NULL)
            PMPI_Group_free(&group);
        if (world != MPI_GROUP_NULL)
            PMPI_Group_free(&world);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    /* A process outside MPI_COMM_WORLD (spawned) has no emulated place. */
    if (wrank == MPI_UNDEFINED) {
        rc = mpitopo_emulation(0, wsize, machine, NULL);
        if (rc == MPITOPO_SUCCESS && *machine)
            return MPITOPO_FAIL_MSG(MPITOPO_ERR_UNSUPPORTED,
                                  "MPITOPO_EMULATE: rank %d of comm is not in MPI_COMM_WORLD "
                                  "(spawned?) and has no emulated place",
                                  rank);
        return rc;
    }
    return mpitopo_emulation(wrank, wsize, machine, leaf);
}

void mpitopo__emulation_finalize(void)
{
    pthread_mutex_lock(&emu_lock);
    mpitopo_machine_destroy(&emu.machine);
    mpitopo__free(emu.desc);
    mpitopo__free(emu.placement);
    mpitopo__free(emu.leaf_of_rank);
    memset(&emu, 0, sizeof emu);
    pthread_mutex_unlock(&emu_lock);
}
