#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

static mpitopo_allocator_t allocator = {malloc, calloc, realloc, free};

int mpitopo_set_allocator(const mpitopo_allocator_t *a)
{
    if (a == NULL) {
        allocator = (mpitopo_allocator_t){malloc, calloc, realloc, free};
        return MPITOPO_SUCCESS;
    }
    if (!a->malloc_fn || !a->calloc_fn || !a->realloc_fn || !a->free_fn)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "allocator has a NULL function pointer");
    allocator = *a;
    return MPITOPO_SUCCESS;
}

void *mpitopo__malloc(size_t size)
{
    return allocator.malloc_fn(size ? size : 1);
}

void *mpitopo__calloc(size_t count, size_t size)
{
    return allocator.calloc_fn(count ? count : 1, size ? size : 1);
}

void *mpitopo__realloc(void *ptr, size_t size)
{
    return allocator.realloc_fn(ptr, size ? size : 1);
}

void mpitopo__free(void *ptr)
{
    if (ptr)
        allocator.free_fn(ptr);
}

void *mpitopo__malloc_array(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return mpitopo__malloc(count * size);
}

void *mpitopo__realloc_array(void *ptr, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return mpitopo__realloc(ptr, count * size);
}

char *mpitopo__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = mpitopo__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void mpitopo_free(void *ptr)
{
    mpitopo__free(ptr);
}
