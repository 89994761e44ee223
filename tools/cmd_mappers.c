/* mpitopo mappers: the mappers that --mapper accepts. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *mappers_help =
    "Usage: mpitopo mappers\n"
    "\n"
    "Lists the mappers that --mapper accepts, one per line with a summary.\n";

int mpitopo__cmd_mappers(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs(mappers_help, stdout);
        return 0;
    }
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        printf("%-10s %s\n", mpitopo_mapper_at(i)->name, mpitopo_mapper_at(i)->summary);
    return 0;
}
