#include "core/internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[512];

const char *mpitopo_strerror(int code)
{
    if (code > 0)
        return "MPI error";
    switch (code) {
#define MPITOPO_CASE_(name, value, msg) \
    case (value):                       \
        return (msg);
        MPITOPO_ERROR_TABLE(MPITOPO_CASE_)
#undef MPITOPO_CASE_
    }
    return "unknown error code";
}

const char *mpitopo_err_name(int code)
{
    if (code > 0)
        return "MPI_ERROR";
    switch (code) {
#define MPITOPO_CASE_(name, value, msg) \
    case (value):                       \
        return "MPITOPO_" #name;
        MPITOPO_ERROR_TABLE(MPITOPO_CASE_)
#undef MPITOPO_CASE_
    }
    return "MPITOPO_ERR_UNKNOWN";
}

const char *mpitopo_last_error(void)
{
    return last_error;
}

void mpitopo__clear_error(void)
{
    last_error[0] = '\0';
}

static void set_message(const char *func, const char *fmt, va_list ap)
{
    size_t used = 0;
    if (func) {
        int n = snprintf(last_error, sizeof last_error, "%s: ", func);
        used = n > 0 && (size_t)n < sizeof last_error ? (size_t)n : 0;
    }
    vsnprintf(last_error + used, sizeof last_error - used, fmt, ap);
}

int mpitopo__error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(NULL, fmt, ap);
    va_end(ap);
    return code;
}

int mpitopo__error_at(int code, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(func, fmt, ap);
    va_end(ap);
    return code;
}

int mpitopo__error_line(int code, const char *func, const char *file, long line, const char *fmt, va_list ap)
{
    char detail[512];
    vsnprintf(detail, sizeof detail, fmt, ap);
    return mpitopo__error_at(code, func, "%s:%ld: %s", file, line, detail);
}

/* last_error = "<context>: <detail>", where detail is a copy of
 * last_error[skip..] (so it may overlap). Truncation is fine: the message is
 * advisory, the code is what counts. */
static void prepend(const char *context, size_t skip)
{
    char detail[sizeof last_error];
    snprintf(detail, sizeof detail, "%s", last_error + skip);
    size_t n = strnlen(context, sizeof last_error - 3);
    memcpy(last_error, context, n);
    memcpy(last_error + n, ": ", 2);
    size_t m = strnlen(detail, sizeof last_error - n - 3);
    memcpy(last_error + n + 2, detail, m);
    last_error[n + 2 + m] = '\0';
}

int mpitopo__error_context(int code, const char *fmt, ...)
{
    char context[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    prepend(context, 0);
    return code;
}

int mpitopo__error_restate(int code, const char *func, const char *fmt, ...)
{
    char context[256];
    int n = snprintf(context, sizeof context, "%s: ", func);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof context)
        vsnprintf(context + n, sizeof context - (size_t)n, fmt, ap);
    va_end(ap);
    const char *colon = strstr(last_error, ": ");
    prepend(context, colon ? (size_t)(colon + 2 - last_error) : 0);
    return code;
}

const char *mpitopo_get_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = MPITOPO_VERSION_MAJOR;
    if (minor)
        *minor = MPITOPO_VERSION_MINOR;
    if (patch)
        *patch = MPITOPO_VERSION_PATCH;
    return MPITOPO_VERSION_STRING;
}
