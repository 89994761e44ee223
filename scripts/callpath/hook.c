/*
 * The recorder of scripts/callpath/run.sh: with a library built with
 * -finstrument-functions, every function entry and exit of the calling
 * process between callpath_start and callpath_stop (rank 0 of prog.c) is
 * written as "> OBJECT OFFSET" or "<" to the file named by CALLPATH_OUT.
 * Resolved to files by run.sh (addr2line). Test tooling only; never linked
 * into the library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *out;
static int on;

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));
void callpath_start(void) __attribute__((no_instrument_function));
void callpath_stop(void) __attribute__((no_instrument_function));

void callpath_start(void)
{
    const char *path = getenv("CALLPATH_OUT");
    out = path ? fopen(path, "w") : NULL;
    on = out != NULL;
}

void callpath_stop(void)
{
    on = 0;
    if (out)
        fclose(out);
    out = NULL;
}

void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    Dl_info info;
    if (!on)
        return;
    if (!dladdr(fn, &info) || !info.dli_fname) {
        fprintf(out, "> ? 0\n");
        return;
    }
    fprintf(out, "> %s %#lx\n", info.dli_fname, (unsigned long)((char *)fn - (char *)info.dli_fbase));
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    if (on)
        fputs("<\n", out);
}
