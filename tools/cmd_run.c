/*
 * mpitopo run: launch-time placement in one command.
 *
 *   mpitopo run [--record | --apply | --auto] [--cache DIR] [--explain] -- LAUNCHER [ARGS...] PROGRAM [ARGS...]
 *
 * Reordering inside a job only helps programs that honour MPI's rule on
 * renumbered communicators; the launch placement is safe for every program
 * (the launcher decides which slot runs each rank of MPI_COMM_WORLD, and no
 * program can tell). So the first run of a program records what it sends
 * (the shim preloaded with MPITOPO_RUN_RECORD: its tracer counts the
 * point-to-point sends and the neighbourhood collectives' blocks in
 * MPI_COMM_WORLD ranks, and at MPI_Finalize rank 0 maps that traffic onto
 * the job's machine, src/pmpi/shim_record.c), and the next runs of the
 * same program, process count and node layout are launched with that
 * placement, in the launcher's own terms: an Open MPI rankfile, an MPICH
 * (Hydra) machine file in rank order, Slurm's arbitrary distribution
 * (SLURM_HOSTFILE), or under emulation MPITOPO_EMULATE_PLACEMENT=file:FILE.
 *
 * The launcher is told by what it says it is (`LAUNCHER --version`), not by
 * its name, and its command line is parsed against the options each one
 * documents; a command that cannot be parsed is refused before anything
 * starts. The stored placement is applied only when its predicted off-node
 * bytes are below the launch placement's (never worse). Every run prints
 * exactly one of these lines on standard error (a contract: scripts read
 * it):
 *   mpitopo run: recorded FILE (off-node bytes X -> Y predicted)
 *   mpitopo run: applied FILE (off-node bytes X -> Y)
 *   mpitopo run: kept the launch placement (WHY)
 * A cache entry that cannot be read, is stale (another binary, process
 * count or layout) or corrupted is ignored with one line saying why, and
 * the run goes on; a recording run that fails stores nothing (the shim
 * writes to a temporary name, this command renames it into the cache only
 * after the launcher succeeded).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"

#include "core/env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *run_help =
    "Usage: mpitopo run [--record | --apply | --auto] [--cache DIR] [--explain] --\n"
    "                   LAUNCHER [ARGS...] PROGRAM [ARGS...]\n"
    "\n"
    "Launch an MPI program with a placement that keeps its traffic on the nodes.\n"
    "The first run records what the program sends (the shim, libmpitopo_shim.so,\n"
    "preloaded: point-to-point sends and neighbourhood collectives, in\n"
    "MPI_COMM_WORLD ranks) and, at MPI_Finalize, maps that traffic onto the job's\n"
    "machine (its nodes, hwloc inside them, the network when one is given) and\n"
    "stores the placement in a cache. Later runs of the same program, process\n"
    "count, node layout and launch options start with that placement, given to\n"
    "the launcher in its own terms. Nothing about the program's run changes: it\n"
    "keeps MPI's ranks, only the slot each rank runs on differs.\n"
    "\n"
    "Modes:\n"
    "  --auto                (default) apply the stored placement when there is\n"
    "                        one, else record one\n"
    "  --record              record (again), whatever is stored\n"
    "  --apply               apply the stored placement; without one, run the\n"
    "                        command unchanged\n"
    "\n"
    "Options:\n"
    "  --cache DIR           the cache directory (default $MPITOPO_CACHE, else\n"
    "                        $XDG_CACHE_HOME/mpitopo, else ~/.cache/mpitopo)\n"
    "  --explain             also print the launch placement's and the stored\n"
    "                        placement's metrics side by side\n"
    "  -h, --help            print this help and exit\n"
    "\n"
    "Launchers (told by what LAUNCHER --version prints, whatever its name):\n"
    "  Open MPI mpirun       the placement as a rankfile (--rankfile; --map-by,\n"
    "                        --rank-by, -npernode and the like are dropped)\n"
    "  MPICH Hydra mpiexec   a machine file, one host per rank in rank order (-f;\n"
    "                        -hosts, -ppn and other machine files are dropped)\n"
    "  Slurm srun            --distribution=arbitrary with SLURM_HOSTFILE\n"
    "  Under emulation (MPITOPO_EMULATE set), any of them: the placement as\n"
    "  MPITOPO_EMULATE_PLACEMENT=file:FILE. The launcher needs the process count\n"
    "  (-n N); MPMD commands (':') and application context files are refused.\n"
    "\n"
    "Every run prints exactly one of these lines on standard error:\n"
    "  mpitopo run: recorded FILE (off-node bytes X -> Y predicted)\n"
    "  mpitopo run: applied FILE (off-node bytes X -> Y)\n"
    "  mpitopo run: kept the launch placement (WHY)\n"
    "X is the off-node traffic of the launch placement (bytes sent between\n"
    "processes on different nodes, over the recorded run), Y that of the stored\n"
    "placement: predicted when recording, measured in the run when applying (the\n"
    "stored prediction when the applied run ends without MPI_Finalize).\n"
    "\n"
    "Environment:\n"
    "  MPITOPO_CACHE         the cache directory\n"
    "  MPITOPO_SHIM          the shim to preload (default: the one installed or\n"
    "                        built beside this command)\n"
    "  MPITOPO_EMULATE, MPITOPO_EMULATE_PLACEMENT, MPITOPO_NETWORK, MPITOPO_MAPPER\n"
    "                        as for the library; they are part of the cache key\n"
    "\n"
    "Exit status:\n"
    "  the program's (the launcher's), or 1 when mpitopo run refuses the command\n"
    "\n"
    "Examples:\n"
    "  $ mpitopo run -- mpirun -n 64 --hostfile hosts ./app input   (records)\n"
    "  $ mpitopo run -- mpirun -n 64 --hostfile hosts ./app input   (applies)\n"
    "  $ MPITOPO_EMULATE=\"node:4 core:4\" MPITOPO_EMULATE_PLACEMENT=rr \\\n"
    "      mpitopo run --explain -- mpiexec -n 16 ./halo\n";

#define SAY(...) fprintf(stderr, "mpitopo run: " __VA_ARGS__)

/* ---- the launchers and their options ------------------------------------ */

typedef enum { OMPI, HYDRA, SRUN } flavour_t;
static const char *const flavour_name[] = {"Open MPI mpirun", "MPICH Hydra mpiexec", "Slurm srun"};

enum {
    ARG1 = 1,      /* takes one value */
    ARG2 = 2,      /* takes two values */
    PLACE = 4,     /* decides the placement: dropped when applying */
    HOSTS = 8,     /* names the hosts: part of the key */
    NP = 16,       /* the process count */
    REFUSE = 32,   /* a form mpitopo run cannot handle */
    HOSTFILE = 64, /* a file of hosts: its contents go into the key */
};
typedef struct opt {
    const char *name;
    int flags;
} opt_t;

/* Open MPI 4.1's mpirun (orterun): both the one-dash and two-dash spellings. */
static const opt_t ompi_opts[] = {
    {"-n", ARG1 | NP}, {"--n", ARG1 | NP}, {"-np", ARG1 | NP}, {"--np", ARG1 | NP}, {"-c", ARG1 | NP},
    {"-H", ARG1 | HOSTS}, {"-host", ARG1 | HOSTS}, {"--host", ARG1 | HOSTS},
    {"-hostfile", ARG1 | HOSTS | HOSTFILE}, {"--hostfile", ARG1 | HOSTS | HOSTFILE},
    {"-machinefile", ARG1 | HOSTS | HOSTFILE}, {"--machinefile", ARG1 | HOSTS | HOSTFILE},
    {"--default-hostfile", ARG1 | HOSTS | HOSTFILE},
    {"-map-by", ARG1 | PLACE}, {"--map-by", ARG1 | PLACE}, {"-rank-by", ARG1 | PLACE}, {"--rank-by", ARG1 | PLACE},
    {"-npernode", ARG1 | PLACE}, {"--npernode", ARG1 | PLACE}, {"-N", ARG1 | PLACE},
    {"-npersocket", ARG1 | PLACE}, {"--npersocket", ARG1 | PLACE}, {"-rf", ARG1 | PLACE},
    {"-rankfile", ARG1 | PLACE}, {"--rankfile", ARG1 | PLACE}, {"-bynode", PLACE}, {"--bynode", PLACE},
    {"-byslot", PLACE}, {"--byslot", PLACE}, {"-pernode", PLACE}, {"--pernode", PLACE},
    {"-bind-to", ARG1}, {"--bind-to", ARG1}, {"-x", ARG1}, {"-mca", ARG2}, {"--mca", ARG2},
    {"-gmca", ARG2}, {"--gmca", ARG2}, {"-am", ARG1}, {"--am", ARG1}, {"-tune", ARG1}, {"--tune", ARG1},
    {"-wdir", ARG1}, {"--wdir", ARG1}, {"-path", ARG1}, {"--path", ARG1}, {"-prefix", ARG1}, {"--prefix", ARG1},
    {"-cpus-per-proc", ARG1}, {"--cpus-per-proc", ARG1}, {"-cpus-per-rank", ARG1}, {"--cpus-per-rank", ARG1},
    {"-cpu-set", ARG1}, {"--cpu-set", ARG1}, {"-launch-agent", ARG1}, {"--launch-agent", ARG1},
    {"-output-filename", ARG1}, {"--output-filename", ARG1}, {"-timeout", ARG1}, {"--timeout", ARG1},
    {"-stdin", ARG1}, {"--stdin", ARG1}, {"-report-uri", ARG1}, {"--report-uri", ARG1},
    {"-preload-files", ARG1}, {"--preload-files", ARG1}, {"-personality", ARG1}, {"--personality", ARG1},
    {"-app", ARG1 | REFUSE}, {"--app", ARG1 | REFUSE},
    {"-oversubscribe", 0}, {"--oversubscribe", 0}, {"-nooversubscribe", 0}, {"--nooversubscribe", 0},
    {"-allow-run-as-root", 0}, {"--allow-run-as-root", 0}, {"-display-map", 0}, {"--display-map", 0},
    {"-display-allocation", 0}, {"--display-allocation", 0}, {"-report-bindings", 0}, {"--report-bindings", 0},
    {"-tag-output", 0}, {"--tag-output", 0}, {"-timestamp-output", 0}, {"--timestamp-output", 0},
    {"-merge-stderr-to-stdout", 0}, {"--merge-stderr-to-stdout", 0}, {"-q", 0}, {"--quiet", 0}, {"-v", 0},
    {"--verbose", 0}, {"-use-hwthread-cpus", 0}, {"--use-hwthread-cpus", 0}, {"-noprefix", 0},
    {"--noprefix", 0}, {"-s", 0}, {"--preload-binary", 0}, {"-xml", 0}, {"--xml", 0},
    {"-do-not-resolve", 0}, {"--do-not-resolve", 0}, {"-enable-recovery", 0}, {"--enable-recovery", 0},
    {NULL, 0}};

/* MPICH 4.0's mpiexec.hydra. */
static const opt_t hydra_opts[] = {
    {"-n", ARG1 | NP}, {"-np", ARG1 | NP}, {"-f", ARG1 | HOSTS | HOSTFILE | PLACE},
    {"-hostfile", ARG1 | HOSTS | HOSTFILE | PLACE}, {"-machinefile", ARG1 | HOSTS | HOSTFILE | PLACE},
    {"-hosts", ARG1 | HOSTS | PLACE}, {"-host", ARG1 | HOSTS | PLACE}, {"-ppn", ARG1 | PLACE},
    {"-genv", ARG2}, {"-env", ARG2}, {"-genvlist", ARG1}, {"-envlist", ARG1}, {"-wdir", ARG1},
    {"-launcher", ARG1}, {"-launcher-exec", ARG1}, {"-bootstrap", ARG1}, {"-bootstrap-exec", ARG1},
    {"-iface", ARG1}, {"-rmk", ARG1}, {"-bind-to", ARG1}, {"-binding", ARG1}, {"-map-by", ARG1},
    {"-membind", ARG1}, {"-outfile-pattern", ARG1}, {"-errfile-pattern", ARG1}, {"-prepend-pattern", ARG1},
    {"-configfile", ARG1 | REFUSE}, {"-genvall", 0}, {"-genvnone", 0}, {"-envall", 0}, {"-envnone", 0},
    {"-l", 0}, {"-prepend-rank", 0}, {"-verbose", 0}, {"-v", 0}, {"-disable-auto-cleanup", 0},
    {"-print-all-exitcodes", 0}, {"-disable-hostname-propagation", 0}, {NULL, 0}};

/* Slurm 22.05's srun: the short options that take a value, and the long
 * ones mpitopo run treats specially; any other --name=value is accepted. */
static const opt_t srun_opts[] = {
    {"-n", ARG1 | NP}, {"--ntasks", ARG1 | NP}, {"-N", ARG1 | HOSTS}, {"--nodes", ARG1 | HOSTS},
    {"-w", ARG1 | HOSTS}, {"--nodelist", ARG1 | HOSTS}, {"-m", ARG1 | PLACE}, {"--distribution", ARG1 | PLACE},
    {"--ntasks-per-node", ARG1}, {"-c", ARG1}, {"--cpus-per-task", ARG1}, {"-p", ARG1}, {"--partition", ARG1},
    {"-t", ARG1}, {"--time", ARG1}, {"-J", ARG1}, {"--job-name", ARG1}, {"-A", ARG1}, {"--account", ARG1},
    {"-o", ARG1}, {"--output", ARG1}, {"-e", ARG1}, {"--error", ARG1}, {"-i", ARG1}, {"--input", ARG1},
    {"--mpi", ARG1}, {"--export", ARG1}, {"--cpu-bind", ARG1}, {"--mem", ARG1}, {"-D", ARG1}, {"--chdir", ARG1},
    {"--multi-prog", REFUSE}, {"-l", 0}, {"--label", 0}, {"-v", 0}, {"--verbose", 0}, {"-Q", 0}, {"--quiet", 0},
    {"--exclusive", 0}, {"--overlap", 0}, {"-u", 0}, {"--unbuffered", 0}, {NULL, 0}};

static const opt_t *opt_table(flavour_t f)
{
    return f == OMPI ? ompi_opts : f == HYDRA ? hydra_opts : srun_opts;
}

static const opt_t *find_opt(flavour_t f, const char *name, size_t len)
{
    for (const opt_t *o = opt_table(f); o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

/* The command, parsed. */
typedef struct launch {
    flavour_t flavour;
    int argc;
    char **argv;     /* argv[0] the launcher, argv[prog] the program */
    int prog;
    int np;
    int *drop;       /* per argument: 1 when dropped on apply, 2 when dropped on apply under emulation */
    int emulated;    /* MPITOPO_EMULATE passed to the processes with -x / -genv */
    int preload_at;  /* the argument holding the user's LD_PRELOAD for the processes, or 0 */
    char key[8192];  /* the layout part of the cache key */
} launch_t;

static void key_add(launch_t *l, const char *fmt, ...)
{
    size_t n = strlen(l->key);
    va_list ap;
    va_start(ap, fmt);
    if (n < sizeof l->key)
        vsnprintf(l->key + n, sizeof l->key - n, fmt, ap);
    va_end(ap);
}

/* FNV-1a, 64 bits: the identity of a file's contents and the cache key's
 * digest (not a security measure: the cache is the user's own). */
static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

static int file_digest(const char *path, uint64_t *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char buf[65536];
    size_t n;
    *h = FNV_INIT;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        *h = fnv(*h, buf, n);
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : 0;
}

static int parse_count(const char *s, int *np)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > INT_MAX)
        return -1;
    *np = (int)v;
    return 0;
}

/* Parse LAUNCHER ARGS... PROGRAM: 0, or -1 with the reason printed. */
static int parse_launch(launch_t *l)
{
    l->np = 0;
    l->prog = 0;
    for (int i = 1; i < l->argc; i++) {
        const char *a = l->argv[i];
        if (strcmp(a, ":") == 0) {
            SAY("cannot parse the launcher command: MPMD (':') is not supported\n");
            return -1;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            l->prog = i;
            break;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
        const opt_t *o = find_opt(l->flavour, a, len);
        if (!o && l->flavour == SRUN && a[1] == '-' && eq) {
            key_add(l, "%s\n", a); /* another srun --name=value */
            continue;
        }
        if (!o) {
            SAY("cannot parse the launcher command: %s does not take the option '%s' (or mpitopo run does not "
                "know it); nothing was started\n",
                flavour_name[l->flavour], a);
            return -1;
        }
        if (o->flags & REFUSE) {
            SAY("cannot parse the launcher command: '%s' (several programs) is not supported\n", a);
            return -1;
        }
        int nargs = o->flags & ARG2 ? 2 : o->flags & ARG1 ? 1 : 0;
        const char *value = NULL;
        if (eq && a[1] == '-') {
            if (nargs != 1) {
                SAY("cannot parse the launcher command: '%s' takes no value\n", a);
                return -1;
            }
            value = eq + 1;
            nargs = 0;
        } else if (i + nargs >= l->argc) {
            SAY("cannot parse the launcher command: '%s' needs %d value%s\n", a, nargs, nargs > 1 ? "s" : "");
            return -1;
        } else if (nargs) {
            value = l->argv[i + 1];
        }
        if (o->flags & NP && parse_count(value, &l->np)) {
            SAY("cannot parse the launcher command: %s '%s' is not a process count\n", o->name, value);
            return -1;
        }
        if (o->flags & (HOSTS | PLACE))
            key_add(l, "%.*s %s\n", (int)len, a, value ? value : "");
        if (o->flags & HOSTFILE) {
            uint64_t h;
            if (file_digest(value, &h)) {
                SAY("cannot read the host file '%s' of %s: %s\n", value, o->name, strerror(errno));
                return -1;
            }
            key_add(l, "hostfile-digest %016llx\n", (unsigned long long)h);
        }
        for (int k = 0; k <= nargs; k++)
            l->drop[i + k] = (o->flags & PLACE) != 0;
        /* mpitopo's variables given to the processes on the command line:
         * part of the key; the emulated launch placement is replaced when
         * applying under emulation. */
        const char *var = NULL, *val = NULL;
        if (l->flavour == OMPI && !strcmp(o->name, "-x"))
            var = value, val = strchr(value, '=') ? strchr(value, '=') + 1 : getenv(value);
        if (l->flavour == HYDRA && (!strcmp(o->name, "-genv") || !strcmp(o->name, "-env")))
            var = value, val = l->argv[i + 2];
        if (var && !strncmp(var, "MPITOPO_", 8)) {
            size_t vlen = strcspn(var, "=");
            key_add(l, "%.*s=%s\n", (int)vlen, var, val ? val : "");
            if (vlen == 25 && !strncmp(var, "MPITOPO_EMULATE_PLACEMENT", vlen))
                for (int k = 0; k <= nargs; k++)
                    l->drop[i + k] = 2;
            if (vlen == 15 && !strncmp(var, "MPITOPO_EMULATE", vlen))
                l->emulated = val && *val;
        }
        /* The program's own preload: the shim goes in front of it. */
        if (l->flavour == OMPI && !strcmp(o->name, "-x") && !strncmp(value, "LD_PRELOAD=", 11))
            l->preload_at = i + 1;
        if (l->flavour == HYDRA && (!strcmp(o->name, "-genv") || !strcmp(o->name, "-env")) &&
            !strcmp(value, "LD_PRELOAD"))
            l->preload_at = i + 2;
        i += nargs;
    }
    if (!l->prog) {
        SAY("cannot parse the launcher command: no program after the launcher's options\n");
        return -1;
    }
    if (!l->np) {
        SAY("cannot parse the launcher command: give the process count (-n N); mpitopo run keys the placement "
            "by it\n");
        return -1;
    }
    return 0;
}

/* ---- running commands ---------------------------------------------------- */

/* argv run with extra environment (NAME=VALUE strings, NULL-terminated);
 * the exit status (128+signal for a signal), or -1 when it cannot start.
 * out: when not NULL, the first outlen-1 bytes of stdout and stderr. */
static int spawn(char *const *argv, char *const *env, char *out, size_t outlen)
{
    int pfd[2] = {-1, -1};
    if (out && pipe(pfd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        if (out) {
            dup2(pfd[1], 1);
            dup2(pfd[1], 2);
            close(pfd[0]);
            close(pfd[1]);
            int devnull = open("/dev/null", O_RDONLY);
            if (devnull >= 0)
                dup2(devnull, 0);
        }
        execvp(argv[0], argv);
        if (!out)
            fprintf(stderr, "mpitopo run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (out) {
        close(pfd[1]);
        size_t n = 0;
        ssize_t k;
        char sink[4096];
        while ((k = read(pfd[0], n + 1 < outlen ? out + n : sink,
                         n + 1 < outlen ? outlen - 1 - n : sizeof sink)) > 0)
            if (n + 1 < outlen)
                n += (size_t)k;
        out[n] = '\0';
        close(pfd[0]);
    }
    /* Interrupts reach the launcher (same process group): wait for it. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oterm;
    sigaction(SIGINT, &ign, &oint);
    sigaction(SIGTERM, &ign, &oterm);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &oint, NULL);
    sigaction(SIGTERM, &oterm, NULL);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static int detect(const char *launcher, flavour_t *f)
{
    char out[4096];
    char *argv[] = {(char *)launcher, "--version", NULL};
    int rc = spawn(argv, NULL, out, sizeof out);
    if (rc == 127 || rc < 0) {
        SAY("cannot run the launcher '%s'\n", launcher);
        return -1;
    }
    if (strstr(out, "Open MPI") || strstr(out, "OpenRTE") || strstr(out, "open-mpi"))
        *f = OMPI;
    else if (strstr(out, "HYDRA") || strstr(out, "Hydra"))
        *f = HYDRA;
    else if (strncmp(out, "slurm", 5) == 0 || strstr(out, "\nslurm"))
        *f = SRUN;
    else {
        out[strcspn(out, "\n")] = '\0';
        SAY("'%s' is not a launcher mpitopo run knows: it supports Open MPI's mpirun, MPICH's Hydra mpiexec and "
            "Slurm's srun (told by --version, which printed \"%.120s\")\n",
            launcher, out);
        return -1;
    }
    return 0;
}

/* ---- files ----------------------------------------------------------------- */

static int mkdirs(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The program as the launcher will find it: PATH searched for a bare name. */
static int resolve_program(const char *prog, char *out)
{
    if (strchr(prog, '/'))
        return realpath(prog, out) ? 0 : -1;
    const char *path = getenv("PATH");
    char cand[PATH_MAX];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", prog) < (int)sizeof cand &&
            access(cand, X_OK) == 0 && realpath(cand, out))
            return 0;
        p += n + (p[n] == ':');
    }
    return -1;
}

/* What the shim recorded (and the cache keeps after the header). */
typedef struct record {
    int nprocs, nnodes;
    char machine[512], mapper[128];
    double off[2], cost[2];
    char (*host)[256];
    int *leaves, *cores;   /* per node */
    int *node, *slot, *leaf, *lnode, *lslot, *lleaf; /* per rank: placed, then launch */
} record_t;

static void record_free(record_t *r)
{
    free(r->host);
    free(r->leaves);
    free(r->cores);
    free(r->node);
    free(r->slot);
    free(r->leaf);
    free(r->lnode);
    free(r->lslot);
    free(r->lleaf);
    memset(r, 0, sizeof *r);
}

/* Parse the shim's lines from f (after any header); 0, or -1 with why. */
static int record_read(FILE *f, record_t *r, char *why, size_t wlen)
{
    char line[1024];
    int ranks = 0, nodes = 0, ended = 0, ln = 0;
    memset(r, 0, sizeof *r);
    while (fgets(line, sizeof line, f)) {
        ln++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (ended) {
            snprintf(why, wlen, "line %d: text after 'end'", ln);
            return -1;
        }
        int a, b, c, d, e, g, h;
        char s[256];
        if (sscanf(line, "nprocs %d", &a) == 1 && !r->nprocs && a > 0 && a <= 1 << 24) {
            r->nprocs = a;
            r->node = calloc((size_t)a, sizeof *r->node), r->slot = calloc((size_t)a, sizeof *r->slot);
            r->leaf = calloc((size_t)a, sizeof *r->leaf), r->lnode = calloc((size_t)a, sizeof *r->lnode);
            r->lslot = calloc((size_t)a, sizeof *r->lslot), r->lleaf = calloc((size_t)a, sizeof *r->lleaf);
            if (!r->node || !r->slot || !r->leaf || !r->lnode || !r->lslot || !r->lleaf) {
                snprintf(why, wlen, "out of memory");
                return -1;
            }
            for (int i = 0; i < a; i++)
                r->node[i] = -1;
        } else if (strncmp(line, "machine ", 8) == 0) {
            snprintf(r->machine, sizeof r->machine, "%.*s", (int)sizeof r->machine - 1, line + 8);
        } else if (strncmp(line, "mapper ", 7) == 0) {
            snprintf(r->mapper, sizeof r->mapper, "%.*s", (int)sizeof r->mapper - 1, line + 7);
        } else if (sscanf(line, "offnode_bytes %lf %lf", &r->off[0], &r->off[1]) == 2) {
        } else if (sscanf(line, "cost %lf %lf", &r->cost[0], &r->cost[1]) == 2) {
        } else if (sscanf(line, "nodes %d", &a) == 1 && !r->nnodes && a > 0 && a <= 1 << 20) {
            r->nnodes = a;
            r->host = calloc((size_t)a, sizeof *r->host);
            r->leaves = calloc((size_t)a, sizeof *r->leaves);
            r->cores = calloc((size_t)a, sizeof *r->cores);
            if (!r->host || !r->leaves || !r->cores) {
                snprintf(why, wlen, "out of memory");
                return -1;
            }
        } else if (sscanf(line, "node %d %255s %d %d", &a, s, &b, &c) == 4 && r->nnodes && a == nodes &&
                   a < r->nnodes && b > 0) {
            snprintf(r->host[a], sizeof r->host[a], "%s", s);
            r->leaves[a] = b;
            r->cores[a] = c;
            nodes++;
        } else if (sscanf(line, "rank %d %d %d %d %d %d %d", &a, &b, &c, &d, &e, &g, &h) == 7 && r->nprocs &&
                   a == ranks && a < r->nprocs && b >= 0 && b < r->nnodes && e >= 0 && e < r->nnodes && c >= 0 &&
                   c < r->leaves[b] && g >= 0 && g < r->leaves[e]) {
            r->node[a] = b, r->slot[a] = c, r->leaf[a] = d, r->lnode[a] = e, r->lslot[a] = g, r->lleaf[a] = h;
            ranks++;
        } else if (strcmp(line, "end") == 0) {
            ended = 1;
        } else {
            snprintf(why, wlen, "line %d: '%.60s' is not a placement line", ln, line);
            return -1;
        }
    }
    if (!ended || !r->nprocs || ranks != r->nprocs || !r->nnodes || nodes != r->nnodes || !r->machine[0]) {
        snprintf(why, wlen, "incomplete (%d of %d ranks, %d of %d nodes%s)", ranks, r->nprocs, nodes, r->nnodes,
                 ended ? "" : ", no 'end'");
        return -1;
    }
    /* Two ranks on one slot is no placement. */
    for (int i = 0; i < r->nprocs; i++)
        for (int j = i + 1; j < r->nprocs && j < i + 4096; j++)
            if (r->node[i] == r->node[j] && r->slot[i] == r->slot[j]) {
                snprintf(why, wlen, "ranks %d and %d on the same slot", i, j);
                return -1;
            }
    return 0;
}

/* The cache entry's header: what it was recorded for. */
typedef struct identity {
    char program[PATH_MAX];
    long long size, mtime;
    uint64_t digest;
    int np;
    uint64_t key;
} identity_t;

static int write_entry(const char *path, const identity_t *id, const char *key, const char *recfile)
{
    char tmp[PATH_MAX + 300];
    snprintf(tmp, sizeof tmp, "%.4100s.tmp.%ld", path, (long)getpid());
    FILE *in = fopen(recfile, "r"), *out = in ? fopen(tmp, "w") : NULL;
    if (!out) {
        if (in)
            fclose(in);
        return -1;
    }
    fprintf(out, "# mpitopo run cache entry 1\nprogram %s\nidentity %lld %lld %016llx\nnp %d\nkey %016llx\n",
            id->program, id->size, id->mtime, (unsigned long long)id->digest, id->np,
            (unsigned long long)id->key);
    for (const char *k = key; *k;) {
        size_t n = strcspn(k, "\n");
        fprintf(out, "# layout: %.*s\n", (int)n, k);
        k += n + (k[n] == '\n');
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    int bad = ferror(in) || ferror(out);
    fclose(in);
    bad |= fclose(out) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Read a cache entry and check it fits this run: 0, or -1 with why. */
static int read_entry(const char *path, const identity_t *id, record_t *r, char *why, size_t wlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, wlen, "cannot be read: %s", strerror(errno));
        return -1;
    }
    char line[PATH_MAX + 64], prog[PATH_MAX];
    long long size = -1, mtime = -1;
    unsigned long long digest = 0, key = 0;
    int np = -1, ok = fgets(line, sizeof line, f) && strcmp(line, "# mpitopo run cache entry 1\n") == 0;
    ok = ok && fgets(line, sizeof line, f) && sscanf(line, "program %4095[^\n]", prog) == 1;
    ok = ok && fgets(line, sizeof line, f) && sscanf(line, "identity %lld %lld %llx", &size, &mtime, &digest) == 3;
    ok = ok && fgets(line, sizeof line, f) && sscanf(line, "np %d", &np) == 1;
    ok = ok && fgets(line, sizeof line, f) && sscanf(line, "key %llx", &key) == 1;
    if (!ok) {
        fclose(f);
        snprintf(why, wlen, "corrupted (not a cache entry of this version of mpitopo run)");
        return -1;
    }
    if (strcmp(prog, id->program) != 0 || key != id->key) {
        fclose(f);
        snprintf(why, wlen, "stale: recorded for another program or node layout");
        return -1;
    }
    if (size != id->size || mtime != id->mtime || digest != id->digest) {
        fclose(f);
        snprintf(why, wlen, "stale: %s changed since it was recorded", id->program);
        return -1;
    }
    if (np != id->np) {
        fclose(f);
        snprintf(why, wlen, "stale: recorded for %d processes, not %d", np, id->np);
        return -1;
    }
    char inner[256];
    int rc = record_read(f, r, inner, sizeof inner);
    fclose(f);
    if (rc) {
        snprintf(why, wlen, "corrupted: %s", inner);
        return -1;
    }
    if (r->nprocs != id->np) {
        snprintf(why, wlen, "corrupted: %d ranks placed for %d processes", r->nprocs, id->np);
        return -1;
    }
    return 0;
}

/* ---- the placement in the launcher's terms -------------------------------- */

static int write_launcher_file(const char *path, const launch_t *l, const record_t *r, int emulated)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    if (emulated) {
        fprintf(f, "# mpitopo run: the emulated leaf of every rank (MPITOPO_EMULATE_PLACEMENT=file:)\n");
        for (int i = 0; i < r->nprocs; i++)
            fprintf(f, "%d\n", r->leaf[i]);
    } else if (l->flavour == OMPI) {
        /* Hosts by the names the processes reported (Open MPI 4.1 refuses
         * relative hosts, +nK, beside a --hostfile). A node with at most
         * one process per core gets each on the core of its slot; an
         * oversubscribed one (more processes than cores) the whole range
         * for every process, as an unbound launch leaves them: mpirun stops
         * on a slot the node does not have. */
        for (int i = 0; i < r->nprocs; i++) {
            int n = r->node[i], cores = r->cores[n];
            if (cores > 0 && r->leaves[n] <= cores)
                fprintf(f, "rank %d=%s slot=%d\n", i, r->host[n], r->slot[i]);
            else if (cores > 1)
                fprintf(f, "rank %d=%s slot=0-%d\n", i, r->host[n], cores - 1);
            else
                fprintf(f, "rank %d=%s slot=0\n", i, r->host[n]);
        }
    } else if (l->flavour == HYDRA) {
        for (int i = 0; i < r->nprocs; i++)
            fprintf(f, "%s:1\n", r->host[r->node[i]]);
    } else {
        for (int i = 0; i < r->nprocs; i++)
            fprintf(f, "%s\n", r->host[r->node[i]]);
    }
    return fclose(f) != 0 ? -1 : 0;
}

/* ---- --explain --------------------------------------------------------------- */

static void explain(const record_t *r, const char *pattern_path)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    mpitopo_metrics_t a, b;
    fprintf(stderr, "mpitopo run: machine %s, %d processes on %d nodes, mapper %s\n", r->machine, r->nprocs,
            r->nnodes, r->mapper);
    if (mpitopo_machine_from_string(r->machine, &m) != MPITOPO_SUCCESS ||
        mpitopo_pattern_read(pattern_path, &p) != MPITOPO_SUCCESS ||
        mpitopo_metrics_compute(m, p, r->lleaf, MPITOPO_WEIGHT_BYTES, &a) != MPITOPO_SUCCESS ||
        mpitopo_metrics_compute(m, p, r->leaf, MPITOPO_WEIGHT_BYTES, &b) != MPITOPO_SUCCESS) {
        fprintf(stderr, "%-34s %16s %16s\n", "", "launch", "stored");
        fprintf(stderr, "%-34s %16.0f %16.0f\n", "off-node bytes", r->off[0], r->off[1]);
        fprintf(stderr, "%-34s %16.6g %16.6g\n", "cost", r->cost[0], r->cost[1]);
    } else {
        fprintf(stderr, "%-34s %16s %16s\n", "", "launch", "stored");
        for (int l = 0; l < a.nlevels; l++) {
            char label[64];
            snprintf(label, sizeof label, "bytes crossing %s", a.levels[l].name);
            fprintf(stderr, "%-34s %16.0f %16.0f\n", label, a.levels[l].weight_crossing, b.levels[l].weight_crossing);
            snprintf(label, sizeof label, "messages crossing %s (edges)", a.levels[l].name);
            fprintf(stderr, "%-34s %16lld %16lld\n", label, (long long)a.levels[l].edges_crossing,
                    (long long)b.levels[l].edges_crossing);
        }
        fprintf(stderr, "%-34s %16.2f %16.2f\n", "off-node partners (avg)", a.offnode_partners.avg,
                b.offnode_partners.avg);
        fprintf(stderr, "%-34s %16.0f %16.0f\n", "off-node partners (max)", a.offnode_partners.max,
                b.offnode_partners.max);
        fprintf(stderr, "%-34s %16.6g %16.6g\n", "cost", a.cost, b.cost);
    }
    mpitopo_machine_destroy(&m);
    mpitopo_pattern_destroy(&p);
}

/* ---- the command ------------------------------------------------------------- */

/* The shim beside this command: <bindir>/../<libdir> installed, src/ of the
 * build tree. */
static int find_shim(char *out, size_t len)
{
    const char *env = mpitopo__getenv(MPITOPO_ENV_SHIM);
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    const char *rel[] = {"/" MPITOPO_BIN_TO_LIB "/libmpitopo_shim.so", "/../src/libmpitopo_shim.so"};
    for (int i = 0; i < 2; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, out))
            return 0;
    }
    return -1;
}

typedef struct env_list {
    char *v[8];
    int n;
} env_list_t;

static void env_put(env_list_t *e, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    if (!s)
        return;
    snprintf(s, len, "%s=%s", name, value);
    e->v[e->n++] = s;
    e->v[e->n] = NULL;
}

static void env_free(env_list_t *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->v[i]);
    e->n = 0;
}

/* The command to run: the launcher with the variables passed on to the
 * processes (Open MPI forwards only what -x names; Hydra and srun forward
 * the environment, -genv makes it explicit), placement options dropped and
 * the placement added when applying. */
static char **build_argv(const launch_t *l, const env_list_t *e, int apply, const char *file, int emulated)
{
    char **v = calloc((size_t)l->argc + 4 * 8 + 8, sizeof *v);
    if (!v)
        return NULL;
    int k = 0;
    v[k++] = l->argv[0];
    for (int i = 0; i < e->n; i++) {
        char *eq = strchr(e->v[i], '=');
        if (l->preload_at && !strncmp(e->v[i], "LD_PRELOAD=", 11))
            continue; /* merged into the user's own, below */
        if (l->flavour == OMPI) {
            v[k++] = "-x";
            v[k++] = e->v[i];
        } else if (l->flavour == HYDRA) {
            *eq = '\0';
            v[k++] = "-genv";
            v[k++] = strdup(e->v[i]); /* the name; freed with the process */
            *eq = '=';
            v[k++] = eq + 1;
        }
    }
    if (apply && !emulated) {
        if (l->flavour == OMPI) {
            v[k++] = "--rankfile";
            v[k++] = (char *)file;
        } else if (l->flavour == HYDRA) {
            v[k++] = "-f";
            v[k++] = (char *)file;
        } else {
            v[k++] = "--distribution=arbitrary";
        }
    }
    for (int i = 1; i < l->argc; i++) {
        if (apply && i < l->prog && l->drop[i] == (emulated ? 2 : 1))
            continue;
        v[k] = l->argv[i];
        for (int j = 0; i == l->preload_at && j < e->n; j++)
            if (!strncmp(e->v[j], "LD_PRELOAD=", 11)) {
                const char *user = l->argv[i] + (l->flavour == OMPI ? 11 : 0);
                size_t len = strlen(e->v[j]) + strlen(user) + 2;
                char *merged = malloc(len); /* freed with the process */
                if (merged) {
                    /* e->v[j] is LD_PRELOAD=<shim>[:<the environment's>], the user's list follows:
                     * -x takes NAME=VALUE, -genv the value alone. */
                    snprintf(merged, len, "%s:%s", e->v[j] + (l->flavour == OMPI ? 0 : 11), user);
                    v[k] = merged;
                }
            }
        k++;
    }
    v[k] = NULL;
    return v;
}

static int run_with(const launch_t *l, env_list_t *e, int apply, const char *file, int emulated)
{
    char **v = build_argv(l, e, apply, file, emulated);
    if (!v) {
        SAY("out of memory\n");
        return 1;
    }
    /* Open MPI and Hydra get the variables as options (-x, -genv): the
     * launcher itself runs without the shim. srun forwards its environment. */
    int rc = spawn(v, l->flavour == SRUN ? e->v : NULL, NULL, 0);
    free(v);
    return rc < 0 ? 1 : rc;
}

static void remove_record(const char *rec)
{
    char p[PATH_MAX + 300];
    unlink(rec);
    snprintf(p, sizeof p, "%.4100s.pattern", rec);
    unlink(p);
}

/* One run of the command: what it was asked, the cache's paths for it. */
typedef struct job {
    enum { AUTO, RECORD, APPLY } mode;
    int explain;
    const char *cache; /* --cache, or NULL */
    launch_t l;
    identity_t id;
    int emulated;
    const char *base; /* the program's file name */
    char dir[PATH_MAX], entry[PATH_MAX + 256], pattern[PATH_MAX + 256], rec[PATH_MAX + 256],
        file[PATH_MAX + 256];
    char preload[2 * PATH_MAX + 2];
} job_t;

/* mpitopo run's own options; *first receives the launcher's index. 0 to
 * go on, 1 after --help, -1 on an error (said). */
static int parse_options(job_t *j, int argc, char **argv, int *first)
{
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return fputs(run_help, stdout), 1;
        if (!strcmp(a, "--record"))
            j->mode = RECORD;
        else if (!strcmp(a, "--apply"))
            j->mode = APPLY;
        else if (!strcmp(a, "--auto"))
            j->mode = AUTO;
        else if (!strcmp(a, "--explain"))
            j->explain = 1;
        else if (!strcmp(a, "--cache") && i + 1 < argc)
            j->cache = argv[++i];
        else if (!strncmp(a, "--cache=", 8))
            j->cache = a + 8;
        else if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (a[0] == '-') {
            SAY("unknown option '%s' (see mpitopo run --help)\n", a);
            return -1;
        } else
            break;
    }
    if (argc - i < 2) {
        SAY("expected a launcher command: mpitopo run [OPTIONS] -- LAUNCHER [ARGS...] PROGRAM [ARGS...]\n");
        return -1;
    }
    *first = i;
    return 0;
}

/* What the cache is keyed by: the program's identity, the process count and
 * what decides the nodes and the launch placement. 0, or -1 (said). */
static int identify(job_t *j)
{
    launch_t *l = &j->l;
    struct stat st;
    j->id.np = l->np;
    if (resolve_program(l->argv[l->prog], j->id.program) || stat(j->id.program, &st) ||
        file_digest(j->id.program, &j->id.digest)) {
        SAY("cannot find the program '%s' (PATH searched)\n", l->argv[l->prog]);
        return -1;
    }
    j->id.size = (long long)st.st_size;
    j->id.mtime = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    static const mpitopo__env_id keyed[] = {MPITOPO_ENV_EMULATE, MPITOPO_ENV_EMULATE_PLACEMENT,
                                            MPITOPO_ENV_NETWORK, MPITOPO_ENV_MAPPER};
    static const char *const keyed_name[] = {"MPITOPO_EMULATE", "MPITOPO_EMULATE_PLACEMENT", "MPITOPO_NETWORK",
                                             "MPITOPO_MAPPER"};
    for (size_t k = 0; k < sizeof keyed / sizeof *keyed; k++) {
        const char *v = mpitopo__getenv(keyed[k]);
        key_add(l, "%s=%s\n", keyed_name[k], v ? v : "");
    }
    const char *slurm[] = {"SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE"};
    for (int k = 0; k < 2; k++)
        if (getenv(slurm[k]))
            key_add(l, "%s %s\n", slurm[k], getenv(slurm[k]));
    key_add(l, "launcher %s np %d\n", flavour_name[l->flavour], l->np);
    j->id.key = fnv(fnv(FNV_INIT, j->id.program, strlen(j->id.program)), l->key, strlen(l->key));
    const char *emulate = mpitopo__getenv(MPITOPO_ENV_EMULATE);
    j->emulated = (emulate && *emulate) || l->emulated;
    j->base = strrchr(j->id.program, '/') ? strrchr(j->id.program, '/') + 1 : j->id.program;
    return 0;
}

/* The cache directory (made if missing), the entry's and the record's
 * paths, and the shim to preload. 0, or -1 (said). */
static int prepare_paths(job_t *j)
{
    const char *env_cache = mpitopo__getenv(MPITOPO_ENV_CACHE), *xdg = getenv("XDG_CACHE_HOME");
    if (j->cache && *j->cache)
        snprintf(j->dir, sizeof j->dir, "%s", j->cache);
    else if (env_cache && *env_cache)
        snprintf(j->dir, sizeof j->dir, "%s", env_cache);
    else if (xdg && *xdg)
        snprintf(j->dir, sizeof j->dir, "%s/mpitopo", xdg);
    else
        snprintf(j->dir, sizeof j->dir, "%s/.cache/mpitopo", getenv("HOME") ? getenv("HOME") : "/tmp");
    if (strlen(j->dir) > PATH_MAX - 128) {
        SAY("the cache directory's path is too long\n");
        return -1;
    }
    unsigned long long key = (unsigned long long)j->id.key;
    snprintf(j->entry, sizeof j->entry, "%.3900s/%.64s-%d-%016llx.placement", j->dir, j->base, j->l.np, key);
    snprintf(j->pattern, sizeof j->pattern, "%.4000s.pattern", j->entry);
    snprintf(j->rec, sizeof j->rec, "%.3900s/.%.64s-%016llx.%ld.record", j->dir, j->base, key, (long)getpid());
    snprintf(j->file, sizeof j->file, "%.4000s.%s", j->entry,
             j->emulated              ? "emulate"
             : j->l.flavour == OMPI  ? "rankfile"
             : j->l.flavour == HYDRA ? "hosts"
                                      : "slurmhosts");
    char shim[PATH_MAX];
    if (find_shim(shim, sizeof shim)) {
        SAY("cannot find libmpitopo_shim.so (set MPITOPO_SHIM to its path)\n");
        return -1;
    }
    if (mkdirs(j->dir)) {
        SAY("cannot create the cache directory %s: %s\n", j->dir, strerror(errno));
        return -1;
    }
    const char *old = getenv("LD_PRELOAD");
    snprintf(j->preload, sizeof j->preload, "%s%s%s", shim, old && *old ? ":" : "", old && *old ? old : "");
    return 0;
}

/* What the shim wrote to the record file: 0, or -1 with why (an absent
 * file: the program did not reach MPI_Finalize with the shim loaded). */
static int read_record(const char *path, record_t *r, char *why, size_t wlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, wlen, "the program did not reach MPI_Finalize with the shim loaded");
        return -1;
    }
    int rc = record_read(f, r, why, wlen);
    fclose(f);
    return rc;
}

/* Relaunch with the stored placement r (when it is better); the run
 * records too, so the line gives the off-node bytes it measured. */
static int apply(job_t *j, const record_t *r)
{
    env_list_t e = {0};
    int status;
    if (!(r->off[1] < r->off[0])) {
        status = run_with(&j->l, &e, 0, NULL, 0);
        SAY("kept the launch placement (the stored placement %s is no better: off-node bytes %.0f -> %.0f)\n",
            j->entry, r->off[0], r->off[1]);
        return status;
    }
    if (write_launcher_file(j->file, &j->l, r, j->emulated)) {
        status = run_with(&j->l, &e, 0, NULL, 0);
        SAY("kept the launch placement (cannot write %s: %s)\n", j->file, strerror(errno));
        return status;
    }
    if (j->explain)
        explain(r, j->pattern);
    char placement[PATH_MAX + 300];
    env_put(&e, "LD_PRELOAD", j->preload);
    env_put(&e, "MPITOPO_RUN_RECORD", j->rec);
    if (j->emulated) {
        snprintf(placement, sizeof placement, "file:%.4100s", j->file);
        env_put(&e, "MPITOPO_EMULATE_PLACEMENT", placement);
    } else if (j->l.flavour == SRUN) {
        env_put(&e, "SLURM_HOSTFILE", j->file);
    }
    status = run_with(&j->l, &e, 1, j->file, j->emulated);
    env_free(&e);
    record_t now = {0};
    char why[256];
    double y = read_record(j->rec, &now, why, sizeof why) == 0 ? now.off[0] /* this run's own, measured */
                                                               : r->off[1];
    record_free(&now);
    remove_record(j->rec);
    SAY("applied %s (off-node bytes %.0f -> %.0f)\n", j->entry, r->off[0], y);
    return status;
}

/* Run with the shim recording; store the placement only after success. */
static int record(job_t *j)
{
    env_list_t e = {0};
    env_put(&e, "LD_PRELOAD", j->preload);
    env_put(&e, "MPITOPO_RUN_RECORD", j->rec);
    int status = run_with(&j->l, &e, 0, NULL, 0);
    env_free(&e);
    record_t r = {0};
    char why[256] = "", recpat[PATH_MAX + 300];
    snprintf(recpat, sizeof recpat, "%.4100s.pattern", j->rec);
    if (status != 0)
        SAY("kept the launch placement (the recording run failed with status %d: nothing stored)\n", status);
    else if (read_record(j->rec, &r, why, sizeof why) != 0)
        SAY("kept the launch placement (the recording run stored no placement: %s)\n", why);
    else if (rename(recpat, j->pattern) != 0 || write_entry(j->entry, &j->id, j->l.key, j->rec) != 0)
        SAY("kept the launch placement (cannot write %s: %s)\n", j->entry, strerror(errno));
    else {
        if (j->explain)
            explain(&r, j->pattern);
        SAY("recorded %s (off-node bytes %.0f -> %.0f predicted)\n", j->entry, r.off[0], r.off[1]);
    }
    record_free(&r);
    remove_record(j->rec);
    return status;
}

int mpitopo__cmd_run(int argc, char **argv)
{
    static job_t j; /* large (paths): not on the stack */
    memset(&j, 0, sizeof j);
    int first = 0, rc = parse_options(&j, argc, argv, &first);
    if (rc)
        return rc > 0 ? 0 : 1;
    j.l.argc = argc - first;
    j.l.argv = argv + first;
    j.l.drop = calloc((size_t)j.l.argc, sizeof *j.l.drop);
    int status = 1;
    if (!j.l.drop || detect(j.l.argv[0], &j.l.flavour) || parse_launch(&j.l) || identify(&j) ||
        prepare_paths(&j))
        goto done;
    record_t r = {0};
    char why[512] = "";
    int have = 0;
    if (j.mode != RECORD) {
        if (access(j.entry, F_OK) != 0)
            snprintf(why, sizeof why, "no placement stored for %.200s with %d processes on this layout", j.base,
                     j.l.np);
        else if (read_entry(j.entry, &j.id, &r, why, sizeof why) == 0)
            have = 1;
        else if (j.mode == AUTO)
            SAY("ignoring %s: %s\n", j.entry, why); /* then record afresh */
    }
    if (have) {
        status = apply(&j, &r);
    } else if (j.mode == APPLY) {
        env_list_t none = {0};
        status = run_with(&j.l, &none, 0, NULL, 0);
        SAY("kept the launch placement (%s)\n", why);
    } else {
        status = record(&j);
    }
    record_free(&r);
done:
    free(j.l.drop);
    return status;
}
