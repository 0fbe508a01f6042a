/* watcher/cache.c: the object store (see cache.h): a dense array per kind
 * with an open-addressing index by key (FNV-1a, linear probing, tombstones
 * rebuilt away when they pile up). */
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

static uint64_t s_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void rf__kobj_destroy(rf__kind kind, void *obj)
{
    if (kind == RF_KIND_NODE) {
        rf__knode_t *n = obj;
        rf__knode_destroy(&n);
    } else if (kind == RF_KIND_POD) {
        rf__kpod_t *p = obj;
        rf__kpod_destroy(&p);
    } else if (kind == RF_KIND_PODGROUP) {
        rf__kpodgroup_t *g = obj;
        rf__kpodgroup_destroy(&g);
    } else {
        rf__kpdb_t *d = obj;
        rf__kpdb_destroy(&d);
    }
}

void rf__cache_key(rf__kind kind, const void *obj, char *buf, size_t cap)
{
    if (kind == RF_KIND_NODE)
        snprintf(buf, cap, "%s", ((const rf__knode_t *)obj)->name);
    else if (kind == RF_KIND_POD)
        snprintf(buf, cap, "%s/%s", ((const rf__kpod_t *)obj)->ns, ((const rf__kpod_t *)obj)->name);
    else if (kind == RF_KIND_PODGROUP)
        snprintf(buf, cap, "%s/%s", ((const rf__kpodgroup_t *)obj)->ns, ((const rf__kpodgroup_t *)obj)->name);
    else
        snprintf(buf, cap, "%s/%s", ((const rf__kpdb_t *)obj)->ns, ((const rf__kpdb_t *)obj)->name);
}

/* Slot holding `key`, or -1. */
static int32_t s_find(const rf__kmap_t *m, const char *key)
{
    if (!m->n_slots)
        return -1;
    uint32_t mask = (uint32_t)m->n_slots - 1;
    for (uint32_t i = (uint32_t)s_hash(key) & mask;; i = (i + 1) & mask) {
        int32_t e = m->slots[i];
        if (e == -1)
            return -1;
        if (e >= 0 && strcmp(m->items[e].key, key) == 0)
            return (int32_t)i;
    }
}

static bool s_rehash(rf__kmap_t *m, int32_t n_slots)
{
    int32_t *slots = malloc((size_t)n_slots * sizeof *slots);
    if (!slots)
        return false;
    for (int32_t i = 0; i < n_slots; i++)
        slots[i] = -1;
    uint32_t mask = (uint32_t)n_slots - 1;
    for (int32_t e = 0; e < m->n; e++) {
        uint32_t i = (uint32_t)s_hash(m->items[e].key) & mask;
        while (slots[i] != -1)
            i = (i + 1) & mask;
        slots[i] = e;
    }
    free(m->slots);
    m->slots = slots;
    m->n_slots = n_slots;
    m->n_used_slots = m->n;
    return true;
}

static void s_map_fini(rf__kmap_t *m, rf__kind kind)
{
    for (int32_t i = 0; i < m->n; i++) {
        free(m->items[i].key);
        rf__kobj_destroy(kind, m->items[i].obj);
    }
    free(m->items);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

rf__cache_t *rf__cache_new(unsigned kinds)
{
    rf__cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->changed, &ca);
    pthread_condattr_destroy(&ca);
    c->kinds = kinds;
    c->loud = true;
    return c;
}

void rf__cache_destroy(rf__cache_t **cache)
{
    if (!cache || !*cache)
        return;
    rf__cache_t *c = *cache;
    for (int k = 0; k < RF_KIND_COUNT; k++)
        s_map_fini(&c->maps[k], (rf__kind)k);
    for (int32_t i = 0; i < c->n_quiet; i++)
        free(c->quiet[i]);
    free(c->quiet);
    free(c->ours);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->changed);
    free(c);
    *cache = NULL;
}

void rf__cache_lock(rf__cache_t *c)
{
    pthread_mutex_lock(&c->mu);
}

void rf__cache_unlock(rf__cache_t *c)
{
    pthread_mutex_unlock(&c->mu);
}

void rf__cache_touch(rf__cache_t *c)
{
    c->generation++;
    c->loud = true;
    pthread_cond_broadcast(&c->changed);
}

void rf__cache_touch_quiet(rf__cache_t *c, const char *gang)
{
    c->generation++;
    pthread_cond_broadcast(&c->changed);
    for (int32_t i = 0; i < c->n_quiet; i++)
        if (strcmp(c->quiet[i], gang) == 0)
            return;
    if (c->n_quiet == c->cap_quiet) {
        int32_t cap = c->cap_quiet ? 2 * c->cap_quiet : 8;
        char **q = realloc(c->quiet, (size_t)cap * sizeof *q);
        if (!q) {
            c->loud = true;
            return;
        }
        c->quiet = q;
        c->cap_quiet = cap;
    }
    if (!(c->quiet[c->n_quiet] = strdup(gang)))
        c->loud = true;
    else
        c->n_quiet++;
}

void rf__cache_plan_taken(rf__cache_t *c)
{
    for (int32_t i = 0; i < c->n_quiet; i++)
        free(c->quiet[i]);
    c->n_quiet = 0;
    c->loud = false;
}

static bool s_streq(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool s_kvs_eq(const rf__kvs_t *a, const rf__kvs_t *b)
{
    if (a->n != b->n)
        return false;
    for (int32_t i = 0; i < a->n; i++)
        if (!s_streq(rf__kvs_get(b, a->v[i].key), a->v[i].value))
            return false;
    return true;
}

static bool s_res_eq(const rf__res_t *a, const rf__res_t *b)
{
    if (a->n != b->n)
        return false;
    for (int32_t i = 0; i < a->n; i++) {
        int32_t j = 0;
        while (j < b->n && strcmp(b->names[j], a->names[i]) != 0)
            j++;
        if (j == b->n || b->vals[j] != a->vals[i])
            return false;
    }
    return true;
}

bool rf__cache_pod_quiet(const rf__cache_t *c, const rf__kpod_t *old, const rf__kpod_t *new)
{
    if (!c->ours || !old || strcmp(old->uid, new->uid) != 0 || strcmp(new->scheduler_name, c->ours) != 0 ||
        strcmp(old->scheduler_name, c->ours) != 0)
        return false;
    const char *was = old->node_name ? old->node_name : old->assumed_node;
    const char *is = new->node_name ? new->node_name : old->assumed_node; /* what rf__cache_put leaves it */
    return s_streq(was, is) && s_streq(old->nominated, new->nominated) &&
           rf__kpod_terminal(old) == rf__kpod_terminal(new) && old->deleting == new->deleting &&
           old->gated == new->gated && old->priority == new->priority &&s_streq(old->sig, new->sig) &&
           s_streq(old->unsupported, new->unsupported) && s_res_eq(&old->requests, &new->requests) &&
           s_kvs_eq(&old->labels, &new->labels);
}

void *rf__cache_get(rf__cache_t *c, rf__kind kind, const char *key)
{
    rf__kmap_t *m = &c->maps[kind];
    int32_t s = s_find(m, key);
    return s < 0 ? NULL : m->items[m->slots[s]].obj;
}

rf_status rf__cache_put(rf__cache_t *c, rf__kind kind, void *obj)
{
    rf__kmap_t *m = &c->maps[kind];
    char key[512];
    rf__cache_key(kind, obj, key, sizeof key);
    int32_t s = s_find(m, key);
    if (s >= 0) {
        rf__kentry_t *e = &m->items[m->slots[s]];
        if (kind == RF_KIND_POD) {
            rf__kpod_t *old = e->obj, *new = obj;
            if (!new->node_name && old->assumed_node &&strcmp(old->uid, new->uid) == 0) {
                new->assumed_node = old->assumed_node;
                old->assumed_node = NULL;
            }
            /* the same pod was first seen when the old version was; a new uid is a new pod */
            new->seen = strcmp(old->uid, new->uid) == 0 ? old->seen : rf__now();
        }
        rf__kobj_destroy(kind, e->obj);
        e->obj = obj;
        e->mark = true;
        return RF_OK;
    }
    if (kind == RF_KIND_POD)
        ((rf__kpod_t *)obj)->seen = rf__now();
    if ((m->n_used_slots + 1) * 4 >= m->n_slots * 3) {
        int32_t want = m->n_slots ? m->n_slots : 64;
        while ((m->n + 1) * 2 >= want)
            want *= 2;
        if (!s_rehash(m, want)) {
            rf__kobj_destroy(kind, obj);
            return RF_ENOMEM;
        }
    }
    if (m->n == m->cap) {
        int32_t cap = m->cap ? m->cap * 2 : 64;
        rf__kentry_t *items = realloc(m->items, (size_t)cap * sizeof *items);
        if (!items) {
            rf__kobj_destroy(kind, obj);
            return RF_ENOMEM;
        }
        m->items = items;
        m->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        rf__kobj_destroy(kind, obj);
        return RF_ENOMEM;
    }
    m->items[m->n] = (rf__kentry_t){.key = k, .obj = obj, .mark = true};
    uint32_t mask = (uint32_t)m->n_slots - 1;
    uint32_t i = (uint32_t)s_hash(k) & mask;
    while (m->slots[i] >= 0)
        i = (i + 1) & mask;
    if (m->slots[i] == -1)
        m->n_used_slots++;
    m->slots[i] = m->n++;
    return RF_OK;
}

void rf__cache_del(rf__cache_t *c, rf__kind kind, const char *key)
{
    rf__kmap_t *m = &c->maps[kind];
    int32_t s = s_find(m, key);
    if (s < 0)
        return;
    int32_t e = m->slots[s];
    m->slots[s] = -2;
    free(m->items[e].key);
    rf__kobj_destroy(kind, m->items[e].obj);
    int32_t last = m->n - 1;
    if (e != last) {
        int32_t ls = s_find(m, m->items[last].key);
        m->items[e] = m->items[last];
        m->slots[ls] = e;
    }
    m->n--;
    if (m->n_used_slots - m->n > m->n_slots / 4)
        s_rehash(m, m->n_slots); /* on ENOMEM the tombstones stay: still correct */
}

void rf__cache_mark_begin(rf__cache_t *c, rf__kind kind)
{
    rf__kmap_t *m = &c->maps[kind];
    for (int32_t i = 0; i < m->n; i++)
        m->items[i].mark = false;
}

void rf__cache_sweep(rf__cache_t *c, rf__kind kind)
{
    rf__kmap_t *m = &c->maps[kind];
    for (int32_t i = m->n - 1; i >= 0; i--)
        if (!m->items[i].mark) {
            char key[512];
            snprintf(key, sizeof key, "%s", m->items[i].key);
            rf__cache_del(c, kind, key);
        }
}

void rf__cache_clear(rf__cache_t *c, rf__kind kind)
{
    rf__cache_mark_begin(c, kind);
    rf__cache_sweep(c, kind);
}
