/* mpitopo version (and mpitopo --version): the version and the optional
 * mappers built in. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char *version_help =
    "Usage: mpitopo version\n"
    "  or:  mpitopo --version\n"
    "\n"
    "Prints the version of mpitopo and which optional mappers (scotch, metis)\n"
    "this build has.\n";

int mpitopo__cmd_version(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")))
        return fputs(version_help, stdout), 0;
    if (argc > 0)
        return mpitopo__cli_usage_error("version takes no argument, not '%s'", argv[0]);
    printf("mpitopo %s\n", MPITOPO_VERSION_STRING);
    const char *optional[] = {"scotch", "metis"};
    const mpitopo_mapper_t *found;
    printf("optional mappers:");
    for (int i = 0; i < 2; i++)
        printf("%s %s %s", i ? "," : "", optional[i],
               mpitopo_mapper_find(optional[i], &found) == MPITOPO_SUCCESS ? "yes" : "no");
    printf("\n");
    return 0;
}
