#include "core/internal.h"
#include "core/env.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpitopo__verbose(void)
{
    static int level = -1;
    if (level < 0)
        level = mpitopo__env_level(MPITOPO_ENV_VERBOSE);
    return level;
}

void mpitopo__log(int level, const char *fmt, ...)
{
    if (mpitopo__verbose() < level)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mpitopo: %s\n", line);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void mpitopo__rng_seed(mpitopo__rng_t *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t mpitopo__rng_next(mpitopo__rng_t *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double mpitopo__rng_double(mpitopo__rng_t *rng)
{
    return (double)(mpitopo__rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t mpitopo__rng_below(mpitopo__rng_t *rng, uint64_t n)
{
    /* Rejection sampling keeps the result unbiased for any n. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = mpitopo__rng_next(rng);
    while (x >= limit);
    return x % n;
}

int mpitopo__parse_long(const char *s, size_t len, long long min, long long max, long long *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i == len)
        return -1;
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v > (ULLONG_MAX - 9) / 10)
            return -1;
        v = v * 10 + (unsigned long long)(s[i] - '0');
        if (v > (unsigned long long)LLONG_MAX + 1)
            return -1;
    }
    long long r;
    if (neg)
        r = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    else if (v > (unsigned long long)LLONG_MAX)
        return -1;
    else
        r = (long long)v;
    if (r < min || r > max)
        return -1;
    *out = r;
    return 0;
}

int mpitopo__parse_double(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    /* strtod accepts hex, inf and nan; the formats here take plain decimals only. */
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
            return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + len || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}
