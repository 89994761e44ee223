/* mpitopo: evaluate process mappings on machine models from the command line.
 * This file holds the table of commands, the general help and main; each
 * command is a file tools/cmd_<name>.c (tools/cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    /* The command's line in the Commands block of the general help; a '\n'
     * continues it on the next line, under the first. */
    const char *summary;
    int (*run)(int argc, char **argv);
} command_t;

/* In the order of the general help. */
static const command_t commands[] = {
    {"eval", "print the metrics of mappers and of placement files\nside by side", mpitopo__cmd_eval},
    {"map", "map a (traced) pattern and write a rank placement for\na launcher", mpitopo__cmd_map},
    {"mappers", "list the available mappers", mpitopo__cmd_mappers},
    {"platform", "write a SimGrid platform with the links and routes\nof a network model, for SMPI",
     mpitopo__cmd_platform},
    {"run", "launch a program with the placement recorded from its\ntraffic (records it on the first run)",
     mpitopo__cmd_run},
    {"dims", "Cartesian dimensions for N processes, balanced or\nnode-aware", mpitopo__cmd_dims},
    {"version", "print the version and the optional mappers", mpitopo__cmd_version},
    {"env", "list the environment variables mpitopo reads, and\ntheir values here", mpitopo__cmd_env},
};

/* The help texts follow help2man's conventions (the man pages are made from
 * them): a "Usage:" line, a description, "Options:" with options indented by
 * two blanks and descriptions from column 24. doc/help2man.cmake reads the
 * commands from the Commands block (two blanks, then the name). */
static const char *help_head =
    "Usage: mpitopo COMMAND [OPTION]...\n"
    "  or:  mpitopo help [COMMAND]\n"
    "  or:  mpitopo --version\n"
    "\n"
    "Evaluate how MPI processes are placed on a machine and how much of their\n"
    "communication crosses each level of it (nodes, sockets, switches), and write\n"
    "better rank placements for launchers.\n"
    "\n"
    "Commands:\n";

static const char *help_tail =
    "  help [COMMAND]        this text, or the help of COMMAND\n"
    "\n"
    "Options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and the optional mappers, and exit\n"
    "\n"
    "Run 'mpitopo COMMAND --help' for the options of a command.\n"
    "\n"
    "Exit status:\n"
    "  0 on success, 1 on a usage or input error (with a message on standard\n"
    "  error)\n";

static void print_help(FILE *f)
{
    fputs(help_head, f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(f, "  %-22s", commands[i].name);
        for (const char *s = commands[i].summary; *s; s++)
            if (*s == '\n')
                fprintf(f, "\n%24s", "");
            else
                fputc(*s, f);
        fputc('\n', f);
    }
    fputs(help_tail, f);
}

static const command_t *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* mpitopo help [NAME]: the general help, or NAME --help. */
static int help(const char *name)
{
    if (!name) {
        print_help(stdout);
        return 0;
    }
    const command_t *c = find(name);
    if (!c) {
        fprintf(stderr, "mpitopo: no command '%s'\n", name);
        return 1;
    }
    char opt[] = "--help", *argv[] = {opt, NULL};
    return c->run(1, argv);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        print_help(argc < 2 ? stderr : stdout);
        return argc < 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-V") || !strcmp(name, "--version"))
        return mpitopo__cmd_version(0, argv + 2);
    if (!strcmp(name, "help"))
        return help(argc > 2 ? argv[2] : NULL);
    const command_t *c = find(name);
    if (c)
        return c->run(argc - 2, argv + 2);
    fprintf(stderr, "mpitopo: unknown command '%s'\n\n", name);
    print_help(stderr);
    return 1;
}
