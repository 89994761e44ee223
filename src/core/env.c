#include "core/env.h"

#include <errno.h>
#include <stdlib.h>

static const mpitopo__env_var_t vars[MPITOPO_ENV_COUNT] = {
#define MPITOPO_ENV(id, name, who, meaning) [MPITOPO_ENV_##id] = {name, who, meaning},
#include "core/env.def"
#undef MPITOPO_ENV
};

const char *mpitopo__getenv(mpitopo__env_id id)
{
    if ((int)id < 0 || id >= MPITOPO_ENV_COUNT)
        return NULL;
    return getenv(vars[id].name);
}

int mpitopo__env_level(mpitopo__env_id id)
{
    const char *v = mpitopo__getenv(id);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    return (errno == 0 && *end == '\0' && n >= 0 && n <= 100) ? (int)n : 0;
}

const mpitopo__env_var_t *mpitopo__env_vars(int *count)
{
    *count = MPITOPO_ENV_COUNT;
    return vars;
}
