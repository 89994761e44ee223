/* The environment variables of mpitopo, read in one place (env.def lists
 * them with their meaning). MPI-free; compiled into the library, the shim,
 * the tracer and the CLI alike, hidden in each. */
#ifndef MPITOPO_CORE_ENV_H
#define MPITOPO_CORE_ENV_H

#define MPITOPO__HIDDEN __attribute__((visibility("hidden")))

typedef enum {
#define MPITOPO_ENV(id, name, who, meaning) MPITOPO_ENV_##id,
#include "core/env.def"
#undef MPITOPO_ENV
    MPITOPO_ENV_COUNT
} mpitopo__env_id;

typedef struct {
    const char *name;    /* "MPITOPO_..." */
    const char *who;     /* "library", "shim", "tracer", or several */
    const char *meaning; /* one Markdown paragraph */
} mpitopo__env_var_t;

/* The variable's value, or NULL when it is unset. */
MPITOPO__HIDDEN const char *mpitopo__getenv(mpitopo__env_id id);
/* A level variable (MPITOPO_VERBOSE): its integer value in [0, 100], 0 when
 * it is unset or anything else. */
MPITOPO__HIDDEN int mpitopo__env_level(mpitopo__env_id id);
/* Every variable, in the order of env.def. */
MPITOPO__HIDDEN const mpitopo__env_var_t *mpitopo__env_vars(int *count);

#endif
