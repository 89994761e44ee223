/* What the commands of the mpitopo command line share: the command
 * functions that the table of tools/mpitopo.c calls (one file each,
 * tools/cmd_<name>.c), and the helpers of tools/cli_common.c that several
 * commands use (messages, the options and inputs of eval and map, nodes and
 * host names). The CLI is MPI-free. */
#ifndef MPITOPO_TOOLS_CLI_H
#define MPITOPO_TOOLS_CLI_H

#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <stddef.h>
#include <stdint.h>

/* ---- the commands ----------------------------------------------------------
 * Each takes the arguments after its name and returns the exit status. -h or
 * --help as the first argument prints its help (a "Usage:" line first, as
 * help2man reads it) and returns 0: 'mpitopo help NAME' runs NAME --help. */
int mpitopo__cmd_eval(int argc, char **argv);
int mpitopo__cmd_map(int argc, char **argv);
int mpitopo__cmd_mappers(int argc, char **argv);
int mpitopo__cmd_platform(int argc, char **argv);
int mpitopo__cmd_run(int argc, char **argv);
int mpitopo__cmd_dims(int argc, char **argv);
int mpitopo__cmd_version(int argc, char **argv);
int mpitopo__cmd_env(int argc, char **argv);

/* ---- messages ------------------------------------------------------------ */

/* "mpitopo: WHAT: " and the library's last error (or rc's message) on
 * stderr; returns the exit status 1. */
int mpitopo__cli_fail(const char *what, int rc);

/* "mpitopo: " and fmt with its one argument on stderr, then where to find
 * the commands' options; returns 1. */
int mpitopo__cli_usage_error(const char *fmt, const char *arg);

/* An integer in [lo, 2^31-1] filling s[0..len); 0 on success, -1 else
 * (*out is defined either way). */
int mpitopo__cli_parse_int(const char *s, size_t len, long long lo, long long *out);

/* ---- placement files (map writes them, eval --mapping reads them) -------- */

typedef enum mpitopo__cli_format {
    MPITOPO__CLI_FMT_AUTO = -1, /* eval --mapping: told from the first line */
    MPITOPO__CLI_FMT_PLAIN,
    MPITOPO__CLI_FMT_OPENMPI,
    MPITOPO__CLI_FMT_MPICH,
    MPITOPO__CLI_FMT_CRAY
} mpitopo__cli_format_t;

/* The names of the formats, indexed by mpitopo__cli_format_t (not AUTO). */
extern const char *const mpitopo__cli_format_names[4];

/* The format named s (auto too when allow_auto), or 1 after a message
 * naming the option opt. */
int mpitopo__cli_parse_format(const char *opt, const char *s, int allow_auto, mpitopo__cli_format_t *f);

/* ---- the options eval and map share --------------------------------------
 * One spelling each, and the other command's old spelling as an alias. */
typedef struct mpitopo__cli_args {
    const char *machine, *node_topology, *pattern, *placement, *hosts;
    const char *network;       /* --network DESC, NULL without */
    const char *gpu_pattern;   /* --gpu-pattern FILE|DESC, NULL without (issue 20) */
    const char *gpus;          /* --gpus DESC|XML, NULL without */
    const char *placement_opt; /* the spelling given, for messages */
    mpitopo_weight_t weight;
    uint64_t seed;
} mpitopo__cli_args_t;

#define MPITOPO__CLI_ARGS_INIT                                                                                         \
    {.placement = "block", .placement_opt = "--placement", .weight = MPITOPO_WEIGHT_BYTES, .seed = 1}

/* Option o with its value (NULL when none follows): 0 when o is one of
 * these (its value taken), 1 after a usage error, -1 when o is not. */
int mpitopo__cli_option(mpitopo__cli_args_t *c, const char *o, const char *value);

/* --gpu-pattern and --gpus come together: 0, or 1 after a usage error. */
int mpitopo__cli_gpu_options_check(const mpitopo__cli_args_t *c);

/* ---- the inputs of eval and map ------------------------------------------ */
typedef struct mpitopo__cli_inputs {
    mpitopo_machine_t *machine;     /* --machine (with --node-topology), the network's groups above the nodes */
    mpitopo_pattern_t *pattern;     /* --pattern */
    mpitopo_network_t *network;     /* --network, NULL without; its end nodes the machine's nodes in order */
    mpitopo_gpus_t *gpus;           /* --gpus, NULL without --gpu-pattern */
    mpitopo_pattern_t *gpu_pattern; /* --gpu-pattern, NULL without */
    char *slurm_hosts;              /* the hosts of a slurm: machine in node order, NULL for other machines */
} mpitopo__cli_inputs_t;

/* Load the inputs that a's options name into *in (zeroed first); with a
 * slurm: machine, a->hosts becomes the machine's hosts in node order. 0, or
 * 1 after a message; mpitopo__cli_free releases *in either way. */
int mpitopo__cli_load(mpitopo__cli_args_t *a, mpitopo__cli_inputs_t *in);
void mpitopo__cli_free(mpitopo__cli_inputs_t *in);

/* The network metrics of a placement (the leaves of in's machine) on in's
 * network: process p on the end node numbered as the node of its leaf; the
 * busiest channel's name in busiest ("" when no channel carries traffic).
 * 0, or 1 after a message. */
int mpitopo__cli_network_metrics(const mpitopo__cli_inputs_t *in, const int *leaves, mpitopo_network_metrics_t *net,
                                 char *busiest, size_t len);

/* ---- nodes and hosts ----------------------------------------------------- */

/* The machine's nodes: units of its "node" level (1 without one). */
int mpitopo__cli_nnodes(const mpitopo_machine_t *m);

/* Where a leaf is: its node (0 when the machine has no "node" level) and
 * its index inside the node. */
void mpitopo__cli_leaf_place(const mpitopo_machine_t *m, int node_level, int leaf, int *node, int *slot);

/* --hosts split at commas (pointers into *copy, both malloc'ed), at least
 * nnodes of them; NULL when list is NULL, or after a message. */
char **mpitopo__cli_host_names(const char *list, int nnodes, char **copy);

/* tools/slurm_machine.c: a machine "slurm:FILE INNER" (issue 32), with
 * *node_hosts its hosts in node order, comma-separated (malloc'ed). 0, or 1
 * after a message. */
int mpitopo__cli_slurm_machine(const char *desc, const char *hosts, mpitopo_machine_t **machine, char **node_hosts);

#endif
