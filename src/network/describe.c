/* What the parsers of network descriptions share: the error naming the
 * description, checked products, lists of integers. The kinds' files and
 * the front end (network.c) use them; they use nothing of either. */
#include "network/network_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

int mpitopo__net_fail(const char *desc, int code, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return MPITOPO_FAIL_AS(code, "mpitopo_network_from_string", "desc = \"%.200s\": %s", desc, detail);
}

int64_t mpitopo__net_mul_max(int64_t a, int64_t b, int64_t limit)
{
    if (a != 0 && b > limit / a)
        return -1;
    return a * b;
}

int mpitopo__net_parse_list(const char *desc, const char *what, const char *s, size_t len, char sep,
                      int64_t max, int64_t *out, int maxn, int *n)
{
    *n = 0;
    size_t i = 0;
    for (;;) {
        size_t j = i;
        while (j < len && s[j] != sep)
            j++;
        if (*n == maxn)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "%s has more than %d entries", what, maxn);
        long long v;
        if (mpitopo__parse_long(s + i, j - i, LLONG_MIN, LLONG_MAX, &v) != 0)
            return mpitopo__net_fail(desc, MPITOPO_ERR_PARSE, "%s[%d] = \"%.*s\" is not an integer", what,
                             *n, (int)(j - i > 40 ? 40 : j - i), s + i);
        if (v < 1 || v > max)
            return mpitopo__net_fail(desc, MPITOPO_ERR_RANGE, "%s[%d] = %lld must be in [1, %lld]", what,
                             *n, v, (long long)max);
        out[(*n)++] = v;
        if (j == len)
            return MPITOPO_SUCCESS;
        i = j + 1;
    }
}
