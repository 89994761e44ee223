/*
 * A substitute for the CUDA runtime in the tracer's tests (MPITOPO_CUDART
 * points at it): cudaPointerGetAttributes says "device" for addresses in
 * the array fake_device_memory, "managed" in fake_managed_memory, "pinned
 * host" in fake_pinned_memory, which the traced program (trace_gpu_prog,
 * linked with its symbols exported) defines; anything else is unregistered
 * host memory. The struct is filled in the layout of the version it
 * reports, FAKE_CUDART_VERSION (default 12000):
 *   >= 11000  { type, device, devicePointer, hostPointer }
 *   10.x      { memoryType (deprecated), type, device, ... }
 *   < 10000   { memoryType, device, devicePointer, hostPointer, isManaged }
 * and, as the real ones do, versions < 11000 fail with error 1
 * (cudaErrorInvalidValue) on unregistered host memory and keep it as the
 * last error until cudaGetLastError. The device field is 3 for host memory,
 * so a tracer that reads the wrong int of the struct sees a "managed"
 * buffer and the test fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { UNREGISTERED = 0, HOST = 1, DEVICE = 2, MANAGED = 3 };

static int last_error;

static int version(void)
{
    const char *v = getenv("FAKE_CUDART_VERSION");
    return v && *v ? atoi(v) : 12000;
}

static int inside(const char *symbol, const char *size_symbol, const void *ptr)
{
    const unsigned char *base = dlsym(RTLD_DEFAULT, symbol);
    const size_t *size = dlsym(RTLD_DEFAULT, size_symbol);
    uintptr_t p = (uintptr_t)ptr;
    return base && size && p >= (uintptr_t)base && p < (uintptr_t)base + *size;
}

int cudaRuntimeGetVersion(int *v);
int cudaRuntimeGetVersion(int *v)
{
    *v = version();
    return 0;
}

int cudaGetLastError(void);
int cudaGetLastError(void)
{
    int e = last_error;
    last_error = 0;
    return e;
}

int cudaPointerGetAttributes(void *attributes, const void *ptr);
int cudaPointerGetAttributes(void *attributes, const void *ptr)
{
    int type = UNREGISTERED;
    if (inside("fake_device_memory", "fake_device_size", ptr))
        type = DEVICE;
    else if (inside("fake_managed_memory", "fake_managed_size", ptr))
        type = MANAGED;
    else if (inside("fake_pinned_memory", "fake_pinned_size", ptr))
        type = HOST;
    int v = version();
    if (v < 11000 && type == UNREGISTERED) {
        last_error = 1;
        return 1;
    }
    struct {
        int ints[2];
        void *pointers[2];
        int more[2];
    } a;
    memset(&a, 0, sizeof a);
    int device = type == DEVICE || type == MANAGED ? 0 : 3;
    if (v >= 11000) {
        a.ints[0] = type;
        a.ints[1] = device;
    } else if (v >= 10000) {
        /* memoryType: managed memory may say host */
        a.ints[0] = type == DEVICE ? DEVICE : HOST;
        a.ints[1] = type;
        a.more[0] = device;
    } else {
        a.ints[0] = type == HOST ? HOST : DEVICE;
        a.ints[1] = device;
        a.more[0] = type == MANAGED; /* isManaged */
    }
    memcpy(attributes, &a, sizeof a);
    return 0;
}
