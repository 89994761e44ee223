/* mpitopo env: the environment variables mpitopo reads (src/core/env.def). */
#include "cli.h"

#include "core/env.h"

#include <stdio.h>
#include <string.h>

static const char *env_help =
    "Usage: mpitopo env [--markdown]\n"
    "\n"
    "Lists every environment variable that the library, the shim, the tracer and\n"
    "the tools read, who reads it, and its value in this environment.\n"
    "\n"
    "Options:\n"
    "  --markdown            print the table of doc/user-guide.md instead\n"
    "                        (variable and meaning)\n";

/* The variables of src/core/env.def: their values here, or the table of
 * doc/user-guide.md (which tests/cli/test_cli.sh compares with this output). */
int mpitopo__cmd_env(int argc, char **argv)
{
    int markdown = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return fputs(env_help, stdout), 0;
        if (strcmp(argv[i], "--markdown"))
            return mpitopo__cli_usage_error("env: unknown option '%s'", argv[i]);
        markdown = 1;
    }
    int n;
    const mpitopo__env_var_t *vars = mpitopo__env_vars(&n);
    if (markdown) {
        printf("| variable | read by | meaning |\n|---|---|---|\n");
        for (int i = 0; i < n; i++)
            printf("| `%s` | %s | %s |\n", vars[i].name, vars[i].who, vars[i].meaning);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const char *v = mpitopo__getenv((mpitopo__env_id)i);
        printf("%-26s %-22s %s\n", vars[i].name, vars[i].who, v ? v : "(unset)");
    }
    return 0;
}
