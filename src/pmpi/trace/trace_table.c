/* The tracer's hash table: 64-bit keys, linear probing, backward-shift
 * deletion (no tombstones, so lookups stay short after many removals of
 * persistent requests). */
#include "pmpi/trace/trace.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64's finaliser: request handles are aligned pointers and ranks
 * are consecutive, both need their bits mixed before masking. */
static uint64_t hash(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static trace_slot_t *probe(const trace_table_t *t, uint64_t key)
{
    uint64_t mask = t->cap - 1;
    for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask)
        if (!t->slots[i].used || t->slots[i].key == key)
            return &t->slots[i];
}

static int grow(trace_table_t *t)
{
    uint64_t cap = t->cap ? 2 * t->cap : 16;
    trace_slot_t *old = t->slots;
    uint64_t oldcap = t->cap;
    trace_slot_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return 0;
    t->slots = slots;
    t->cap = cap;
    for (uint64_t i = 0; i < oldcap; i++)
        if (old[i].used)
            *probe(t, old[i].key) = old[i];
    free(old);
    return 1;
}

trace_slot_t *mpitopo__trace_table_get(trace_table_t *t, uint64_t key)
{
    if (2 * (t->n + 1) > t->cap && !grow(t))
        return NULL;
    trace_slot_t *s = probe(t, key);
    if (!s->used) {
        memset(s, 0, sizeof *s);
        s->key = key;
        s->used = 1;
        t->n++;
    }
    return s;
}

trace_slot_t *mpitopo__trace_table_find(const trace_table_t *t, uint64_t key)
{
    if (t->cap == 0)
        return NULL;
    trace_slot_t *s = probe(t, key);
    return s->used ? s : NULL;
}

/* Backward shift: move later members of the probe run into the hole when
 * their home slot does not lie cyclically between the hole and them. */
void mpitopo__trace_table_remove(trace_table_t *t, uint64_t key)
{
    trace_slot_t *s = mpitopo__trace_table_find(t, key);
    if (!s)
        return;
    uint64_t mask = t->cap - 1, hole = (uint64_t)(s - t->slots);
    for (uint64_t j = (hole + 1) & mask; t->slots[j].used; j = (j + 1) & mask) {
        uint64_t home = hash(t->slots[j].key) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole].used = 0;
    t->n--;
}

void mpitopo__trace_table_free(trace_table_t *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->n = 0;
}
