/* service/store.c: named clusters with versions, patches and commits
 * (service/store.h).
 *
 * Invariants (all under `mu`):
 * - a cluster's `base` is a validated, cluster-only problem; its resource
 *   list only grows across patches (old resources keep their index), so a
 *   commit's `amount` array stays valid when extended with zeros;
 * - eff_used[n * R + r] == base used[n][r] + the sum of amount[r] of the
 *   live commits on node n, always;
 * - `snap` is NULL or the snapshot of the current version; a snapshot holds
 *   one reference to its base, and the store one to its current snapshot;
 *   `spare` is NULL or a snapshot of `base` that nothing references (refs
 *   0), kept when its last solve let go so the next acquire refreshes it
 *   (`used`, version) instead of building one;
 *   a snapshot no solve holds is refreshed in place when only commits
 *   change (its `used` rewritten, its version moved), never one held;
 *   a base or snapshot is freed when its last reference goes;
 * - a commit entry belongs to one solve and holds that solve's pods of one
 *   gang on one node, with its own expiry; two solves of one gang on one
 *   node are two entries (never merged, so neither extends the other);
 * - a base's running gangs (`run`, documents in `run_arena`) were validated
 *   against its nodes (`runp` is that reading: their placements and
 *   requests); they change only with a new base (put, patch);
 * - a `pre` entry names a gang with live commits whose solve preempted the
 *   stored running gang `victim` (dropped when the gang has none left);
 * - a base's solver caches (include/rackfit/cluster_cache.h) were built from
 *   one of its snapshots, so they borrow the base's node descriptions and
 *   match every snapshot of it; `caches` holds those no solve holds, at
 *   most max_caches; a held one is its solve's alone and comes back (or is
 *   destroyed when the pool is full) before the solve drops its snapshot,
 *   so a cache never outlives its base. */
#include "store.h"
#include "grow.h"

#include "rackfit/cluster_cache.h"
#include "rackfit/quantity.h"
#include "rackfit/solve.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------- data structures */

typedef struct {
    int refs;
    rf_problem_t *p;
    rf_cluster_cache_t **caches; /* [cap_caches] solver caches no solve holds, at most max_caches of them */
    int32_t n_caches;
    int32_t cap_caches;
    rf__arena_t *run_arena; /* the stored running gangs' documents */
    rf_doc_t *run;
    int32_t n_run;
    rf_problem_t *runp; /* `run` read against p (NULL when n_run == 0) */
} s_base_t;

typedef struct {
    char *gang;   /* the preemptor */
    char *victim; /* a stored running gang */
    char **set;   /* nodes whose `used` a patch set since (they hold the client's word) */
    int32_t n_set;
} s_pre_t;

typedef struct {
    rf__snapshot_t pub; /* first: the public view */
    int refs;
    s_base_t *base;
    rf_problem_t *own; /* pub.problem */
    int64_t *used;     /* own's nodes' used, one block [n_nodes * R] */
    char *name;        /* pub.name */
} s_snap_t;

typedef struct {
    char *gang;
    int32_t node;
    int32_t count;
    int64_t *amount; /* [R of the base] */
    double expires_ms;
} s_commit_t;

typedef struct {
    char *name;
    int64_t version;
    int64_t base_version;
    s_base_t *base;
    int64_t *eff_used; /* [n_nodes * R] */
    s_commit_t *commits;
    int32_t n_commits;
    int32_t cap_commits;
    s_snap_t *snap;
    s_snap_t *spare; /* a snapshot of `base` no solve holds any more (refs 0), reused by the next acquire */
    s_pre_t *pre;
    int32_t n_pre;
} s_cluster_t;

struct rf__store {
    pthread_mutex_t mu;
    s_cluster_t *clusters;
    int32_t n_clusters;
    int32_t max_clusters;
    int32_t max_commits;
    int32_t max_caches; /* solver caches kept per cluster; 0: none */
    rf_cluster_cache_limits_t cache_limits;
    int64_t expired; /* commit entries expired, all clusters, ever */
};

/* ------------------------------------------------------------ local methods */

static void s_base_unref(s_base_t *b)
{
    if (b && --b->refs == 0) {
        for (int32_t i = 0; i < b->n_caches; i++)
            rf_cluster_cache_destroy(&b->caches[i]);
        free(b->caches);
        rf_problem_destroy(&b->runp);
        rf__arena_destroy(&b->run_arena);
        rf_problem_destroy(&b->p);
        free(b);
    }
}

static void s_snap_unref(s_snap_t *s)
{
    if (s && --s->refs == 0) {
        rf_problem_destroy(&s->own);
        s_base_unref(s->base);
        free(s->name);
        free(s);
    }
}

static void s_commit_free(s_commit_t *c)
{
    free(c->gang);
    free(c->amount);
}

static s_cluster_t *s_find(rf__store_t *st, const char *name)
{
    for (int32_t i = 0; i < st->n_clusters; i++)
        if (strcmp(st->clusters[i].name, name) == 0)
            return &st->clusters[i];
    return NULL;
}

/* --------------------------------------------- running gangs (documents) */

bool rf__doc_same(const rf_doc_t *a, const rf_doc_t *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case RF_DOC_NULL:
        return true;
    case RF_DOC_BOOL:
        return a->u.b == b->u.b;
    case RF_DOC_INT:
        return a->u.i == b->u.i;
    case RF_DOC_FLOAT:
        return a->u.f == b->u.f;
    case RF_DOC_STR:
        return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    case RF_DOC_ARRAY:
        if (a->len != b->len)
            return false;
        for (uint32_t i = 0; i < a->len; i++)
            if (!rf__doc_same(&a->u.items[i], &b->u.items[i]))
                return false;
        return true;
    case RF_DOC_MAP:
        if (a->len != b->len)
            return false;
        for (uint32_t i = 0; i < a->len; i++) {
            const rf_doc_t *v = rf__doc_get(b, a->u.pairs[i].key);
            if (!v || !rf__doc_same(&a->u.pairs[i].value, v))
                return false;
        }
        return true;
    }
    return false;
}

/* Deep copy of `src` into `a` (false on ENOMEM). */
static bool s_doc_copy(rf__arena_t *a, const rf_doc_t *src, rf_doc_t *dst)
{
    *dst = *src;
    dst->offset = -1;
    if (src->type == RF_DOC_STR)
        return (dst->u.s = rf__arena_strndup(a, src->u.s, src->len)) != NULL;
    if (src->type == RF_DOC_ARRAY) {
        dst->u.items = rf__arena_alloc(a, ((size_t)src->len + 1) * sizeof *dst->u.items);
        for (uint32_t i = 0; dst->u.items && i < src->len; i++)
            if (!s_doc_copy(a, &src->u.items[i], &dst->u.items[i]))
                return false;
        return dst->u.items != NULL;
    }
    if (src->type == RF_DOC_MAP) {
        dst->u.pairs = rf__arena_alloc(a, ((size_t)src->len + 1) * sizeof *dst->u.pairs);
        for (uint32_t i = 0; dst->u.pairs && i < src->len; i++) {
            dst->u.pairs[i] = src->u.pairs[i];
            dst->u.pairs[i].key = rf__arena_strndup(a, src->u.pairs[i].key, src->u.pairs[i].key_len);
            if (!dst->u.pairs[i].key || !s_doc_copy(a, &src->u.pairs[i].value, &dst->u.pairs[i].value))
                return false;
        }
        return dst->u.pairs != NULL;
    }
    return true;
}

static const char *s_doc_name(const rf_doc_t *g)
{
    const rf_doc_t *n = g->type == RF_DOC_MAP ? rf__doc_get(g, "name") : NULL;
    return n && n->type == RF_DOC_STR ? n->u.s : "";
}

/* Give base `b` (its p set) the running gangs items[0..n) (pointers into
 * other documents: copied), read and validated against b->p. */
static rf_status s_base_running(s_base_t *b, const rf_doc_t *const *items, int32_t n, const rf_limits_t *limits,
                                rf_error_t *err)
{
    if (n == 0)
        return RF_OK;
    b->run_arena = rf__arena_new(1 << 16);
    b->run = b->run_arena ? rf__arena_alloc(b->run_arena, (size_t)n * sizeof *b->run) : NULL;
    for (int32_t i = 0; b->run && i < n; i++)
        if (!s_doc_copy(b->run_arena, items[i], &b->run[i]))
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    if (!b->run)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    b->n_run = n;
    rf_doc_kv_t top[2] = {
        {.key = "gangs", .key_len = 5, .value = {.type = RF_DOC_ARRAY, .len = 0, .offset = -1, .u.items = b->run}},
        {.key = "running",
         .key_len = 7,
         .value = {.type = RF_DOC_ARRAY, .len = (uint32_t)n, .offset = -1, .u.items = b->run}}};
    rf_doc_t root = {.type = RF_DOC_MAP, .len = 2, .offset = -1, .u.pairs = top};
    return rf_problem_from_doc_on(&root, NULL, b->p, limits, &b->runp, err);
}

/* The running gangs of a put: every item of `arr` (an array). */
static rf_status s_put_running(s_base_t *b, const rf_doc_t *arr, const rf_limits_t *limits, rf_error_t *err)
{
    if (!arr)
        return RF_OK;
    if (arr->type != RF_DOC_ARRAY)
        return rf_error_set(err, RF_ESCHEMA, "running", "must be an array of running gangs, not %s",
                            rf__doc_type_name(arr->type));
    const rf_doc_t **items = malloc(((size_t)arr->len + 1) * sizeof *items);
    if (!items)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (uint32_t i = 0; i < arr->len; i++)
        items[i] = &arr->u.items[i];
    rf_status rc = s_base_running(b, items, (int32_t)arr->len, limits, err);
    free(items);
    return rc;
}

static bool s_has_commit(const s_cluster_t *c, const char *gang)
{
    for (int32_t k = 0; k < c->n_commits; k++)
        if (strcmp(c->commits[k].gang, gang) == 0)
            return true;
    return false;
}

static bool s_base_has_running(const s_base_t *b, const char *name)
{
    for (int32_t i = 0; i < b->n_run; i++)
        if (strcmp(s_doc_name(&b->run[i]), name) == 0)
            return true;
    return false;
}

/* Forget preemptions whose preemptor has no live commit, or whose victim is
 * no longer stored. */
static void s_prune_pre(s_cluster_t *c)
{
    for (int32_t i = 0; i < c->n_pre;) {
        if (!s_has_commit(c, c->pre[i].gang) || !s_base_has_running(c->base, c->pre[i].victim)) {
            free(c->pre[i].gang);
            free(c->pre[i].victim);
            for (int32_t k = 0; k < c->pre[i].n_set; k++)
                free(c->pre[i].set[k]);
            free(c->pre[i].set);
            c->pre[i] = c->pre[--c->n_pre];
        } else {
            i++;
        }
    }
}

static void s_invalidate(s_cluster_t *c)
{
    s_snap_unref(c->snap);
    c->snap = NULL;
    if (c->spare && c->spare->base != c->base) {
        c->spare->refs = 1;
        s_snap_unref(c->spare);
        c->spare = NULL;
    }
}

/* Only commits changed (the base did not): when no solve holds the current
 * snapshot, refresh its `used` in place and give it the new version,
 * instead of building a new one for the next solve; otherwise drop it
 * (a solve that holds one keeps reading the version it read: its commit
 * compares that version). */
static void s_commits_changed(s_cluster_t *c)
{
    s_snap_t *sn = c->snap;
    if (sn && sn->refs == 1 && sn->base == c->base) {
        const rf_problem_t *b = c->base->p;
        memcpy(sn->used, c->eff_used, (size_t)b->n_nodes * (size_t)b->n_resources * sizeof *sn->used);
        sn->pub.version = c->version;
        return;
    }
    s_invalidate(c);
}

/* Recompute eff_used from the base and the commits. */
static rf_status s_recompute(s_cluster_t *c, rf_error_t *err)
{
    const rf_problem_t *p = c->base->p;
    size_t R = (size_t)p->n_resources;
    int64_t *eff = malloc(((size_t)p->n_nodes * R + 1) * sizeof *eff);
    if (!eff)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t n = 0; n < p->n_nodes; n++)
        memcpy(eff + (size_t)n * R, p->nodes[n].used, R * sizeof *eff);
    for (int32_t k = 0; k < c->n_commits; k++)
        for (size_t r = 0; r < R; r++)
            eff[(size_t)c->commits[k].node * R + r] += c->commits[k].amount[r];
    free(c->eff_used);
    c->eff_used = eff;
    return RF_OK;
}

static void s_drop_commit(s_cluster_t *c, int32_t k)
{
    size_t R = (size_t)c->base->p->n_resources;
    s_commit_t *cm = &c->commits[k];
    for (size_t r = 0; r < R; r++)
        c->eff_used[(size_t)cm->node * R + r] -= cm->amount[r];
    s_commit_free(cm);
    c->commits[k] = c->commits[--c->n_commits];
}

/* Drop expired commits; a drop is a change (version + 1). */
static void s_expire(s_cluster_t *c, double now_ms, int64_t *expired)
{
    bool any = false;
    for (int32_t k = 0; k < c->n_commits;) {
        if (c->commits[k].expires_ms <= now_ms) {
            s_drop_commit(c, k);
            (*expired)++;
            any = true;
        } else {
            k++;
        }
    }
    if (any) {
        c->version++;
        s_prune_pre(c);
        s_commits_changed(c);
    }
}

static rf_status s_lookup(rf__store_t *st, const char *name, int64_t version, double now_ms, s_cluster_t **out,
                          rf_error_t *err)
{
    s_cluster_t *c = s_find(st, name);
    if (!c)
        return rf_error_set(err, RF_ENOTFOUND, "cluster_name", "no stored cluster is named \"%.200s\"", name);
    s_expire(c, now_ms, &st->expired);
    if (version >= 0 && version != c->version)
        return rf_error_set(err, RF_ESTALE, "", "cluster \"%.200s\" is at version %lld, not %lld", name,
                            (long long)c->version, (long long)version);
    *out = c;
    return RF_OK;
}

/* Deep-copy node `src` of `from` into `to` (resources already interned in
 * `to`; `map[r]` is to's index of from's resource r). */
static rf_status s_copy_node(rf_problem_t *to, const rf_problem_t *from, const rf_node_t *src, const int32_t *map,
                             rf_node_t *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->name = rf_problem_strdup(to, src->name, strlen(src->name));
    dst->labels = rf_problem_alloc(to, (size_t)src->n_labels * sizeof *dst->labels);
    dst->taints = rf_problem_alloc(to, (size_t)src->n_taints * sizeof *dst->taints);
    dst->allocatable = rf_problem_alloc(to, (size_t)to->n_resources * sizeof(int64_t));
    dst->used = rf_problem_alloc(to, (size_t)to->n_resources * sizeof(int64_t));
    if (!dst->name || !dst->labels || !dst->taints || !dst->allocatable || !dst->used)
        return RF_ENOMEM;
    for (int32_t i = 0; i < src->n_labels; i++) {
        dst->labels[i].key = rf_problem_strdup(to, src->labels[i].key, strlen(src->labels[i].key));
        dst->labels[i].value = rf_problem_strdup(to, src->labels[i].value, strlen(src->labels[i].value));
        if (!dst->labels[i].key || !dst->labels[i].value)
            return RF_ENOMEM;
    }
    dst->n_labels = src->n_labels;
    for (int32_t i = 0; i < src->n_taints; i++) {
        dst->taints[i].key = rf_problem_strdup(to, src->taints[i].key, strlen(src->taints[i].key));
        dst->taints[i].value = rf_problem_strdup(to, src->taints[i].value, strlen(src->taints[i].value));
        dst->taints[i].effect = src->taints[i].effect;
        if (!dst->taints[i].key || !dst->taints[i].value)
            return RF_ENOMEM;
    }
    dst->n_taints = src->n_taints;
    dst->allocatable[RF_RES_PODS] = RF_QTY_UNLIMITED;
    for (int32_t r = 0; r < from->n_resources; r++) {
        dst->allocatable[map[r]] = src->allocatable[r];
        dst->used[map[r]] = src->used[r];
    }
    dst->unschedulable = src->unschedulable;
    return RF_OK;
}

/* Intern `from`'s resources into `to`; map[r] receives to's index. */
static rf_status s_intern(rf_problem_t *to, const rf_problem_t *from, int32_t *map)
{
    for (int32_t r = 0; r < from->n_resources; r++)
        if ((map[r] = rf_problem_resource(to, from->resources[r])) < 0)
            return RF_ENOMEM;
    return RF_OK;
}

/* Move the commits onto a new base (nodes remapped by name; those on nodes
 * that are gone dropped; amounts extended to the new resource count). */
static rf_status s_rebase(s_cluster_t *c, s_base_t *nb, rf_error_t *err)
{
    const rf_problem_t *old = c->base->p;
    int32_t R_old = old->n_resources, R_new = nb->p->n_resources;
    for (int32_t k = 0; k < c->n_commits;) {
        s_commit_t *cm = &c->commits[k];
        int32_t n = rf_problem_node(nb->p, old->nodes[cm->node].name);
        if (n < 0) {
            s_commit_free(cm);
            c->commits[k] = c->commits[--c->n_commits];
            continue;
        }
        if (R_new > R_old) {
            int64_t *a = realloc(cm->amount, (size_t)R_new * sizeof *a);
            if (!a)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            memset(a + R_old, 0, (size_t)(R_new - R_old) * sizeof *a);
            cm->amount = a;
        }
        cm->node = n;
        k++;
    }
    s_base_unref(c->base);
    c->base = nb;
    return s_recompute(c, err);
}

static rf_status s_cluster_init(s_cluster_t *c, const char *name, rf_problem_t *cluster, rf_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->name = strdup(name);
    c->base = calloc(1, sizeof *c->base);
    if (!c->name || !c->base) {
        free(c->name);
        free(c->base);
        c->name = NULL;
        c->base = NULL;
        rf_problem_destroy(&cluster);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    c->base->refs = 1;
    c->base->p = cluster;
    return s_recompute(c, err);
}

static void s_cluster_fini(s_cluster_t *c)
{
    s_invalidate(c);
    if (c->spare) {
        c->spare->refs = 1;
        s_snap_unref(c->spare);
        c->spare = NULL;
    }
    for (int32_t k = 0; k < c->n_commits; k++)
        s_commit_free(&c->commits[k]);
    c->n_commits = 0;
    s_prune_pre(c);
    free(c->pre);
    free(c->commits);
    free(c->eff_used);
    s_base_unref(c->base);
    free(c->name);
}

/* ------------------------------------------------------------------ interface */

rf__store_t *rf__store_new(int32_t max_clusters, int32_t max_commits)
{
    rf__store_t *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->max_clusters = max_clusters > 0 ? max_clusters : 1;
    st->max_commits = max_commits > 0 ? max_commits : 1;
    st->max_caches = RF__STORE_CACHES;
    rf_cluster_cache_limits_default(&st->cache_limits);
    st->clusters = calloc((size_t)st->max_clusters, sizeof *st->clusters);
    if (!st->clusters || pthread_mutex_init(&st->mu, NULL) != 0) {
        free(st->clusters);
        free(st);
        return NULL;
    }
    return st;
}

void rf__store_destroy(rf__store_t **store)
{
    if (!store || !*store)
        return;
    rf__store_t *st = *store;
    for (int32_t i = 0; i < st->n_clusters; i++)
        s_cluster_fini(&st->clusters[i]);
    free(st->clusters);
    pthread_mutex_destroy(&st->mu);
    free(st);
    *store = NULL;
}

int32_t rf__store_each(rf__store_t *st, double now_ms,
                       void (*fn)(void *arg, const char *name, const rf__store_info_t *info), void *arg,
                       int64_t *expired)
{
    pthread_mutex_lock(&st->mu);
    for (int32_t i = 0; i < st->n_clusters; i++) {
        s_cluster_t *c = &st->clusters[i];
        s_expire(c, now_ms, &st->expired);
        rf__store_info_t info = {.version = c->version,
                                 .base_version = c->base_version,
                                 .nodes = c->base->p->n_nodes,
                                 .commits = c->n_commits,
                                 .clusters = st->n_clusters};
        for (int32_t k = 0; k < c->n_commits; k++)
            info.commit_pods += c->commits[k].count;
        if (fn)
            fn(arg, c->name, &info);
    }
    int32_t n = st->n_clusters;
    if (expired)
        *expired = st->expired;
    pthread_mutex_unlock(&st->mu);
    return n;
}

int32_t rf__store_count(rf__store_t *st)
{
    pthread_mutex_lock(&st->mu);
    int32_t n = st->n_clusters;
    pthread_mutex_unlock(&st->mu);
    return n;
}

rf_status rf__store_put(rf__store_t *st, const char *name, rf_problem_t *cluster, const rf_doc_t *running,
                        const rf_limits_t *limits, int64_t version, double now_ms, int64_t *new_version,
                        rf_error_t *err)
{
    rf_status rc = RF_OK;
    pthread_mutex_lock(&st->mu);
    s_cluster_t *c = s_find(st, name);
    if (!c) {
        if (version > 0) {
            rc = rf_error_set(err, RF_ENOTFOUND, "name", "no stored cluster is named \"%.200s\"", name);
            goto fail;
        }
        if (st->n_clusters >= st->max_clusters) {
            rc = rf_error_set(err, RF_ELIMIT, "name", "the store holds %d clusters, the limit (max_clusters)",
                              (int)st->n_clusters);
            goto fail;
        }
        c = &st->clusters[st->n_clusters];
        cluster->options.value_resource = -1;
        rc = s_cluster_init(c, name, cluster, err);
        cluster = NULL;
        if (rc == RF_OK)
            rc = s_put_running(c->base, running, limits, err);
        if (rc != RF_OK) {
            if (c->name)
                s_cluster_fini(c);
            goto fail;
        }
        st->n_clusters++;
        c->version = 1;
        c->base_version = 1;
    } else {
        s_expire(c, now_ms, &st->expired);
        if (version >= 0 && version != c->version) {
            rc = rf_error_set(err, RF_ESTALE, "version", "cluster \"%.200s\" is at version %lld, not %lld", name,
                              (long long)c->version, (long long)version);
            goto fail;
        }
        s_base_t *nb = calloc(1, sizeof *nb);
        if (!nb) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto fail;
        }
        /* The new base keeps the old resource order (commit amounts index it). */
        int32_t R_old = c->base->p->n_resources;
        rf_problem_t *p = cluster;
        bool same_prefix = p->n_resources >= R_old;
        for (int32_t r = 0; same_prefix && r < R_old; r++)
            same_prefix = strcmp(p->resources[r], c->base->p->resources[r]) == 0;
        if (!same_prefix) {
            /* Rebuild with the old resources first. */
            rf_problem_t *q = rf_problem_new();
            int32_t *map = malloc((size_t)(p->n_resources + R_old + 1) * sizeof *map);
            if (!q || !map) {
                rf_problem_destroy(&q);
                free(map);
                free(nb);
                rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto fail;
            }
            rc = s_intern(q, c->base->p, map);
            if (rc == RF_OK)
                rc = s_intern(q, p, map);
            q->n_levels = p->n_levels;
            q->levels = rf_problem_alloc(q, (size_t)p->n_levels * sizeof *q->levels);
            q->level_costs = rf_problem_alloc(q, (size_t)p->n_levels * sizeof *q->level_costs);
            q->nodes = rf_problem_alloc(q, (size_t)p->n_nodes * sizeof *q->nodes);
            if (rc == RF_OK && (!q->levels || !q->level_costs || !q->nodes))
                rc = RF_ENOMEM;
            for (int32_t l = 0; rc == RF_OK && l < p->n_levels; l++) {
                q->levels[l] = rf_problem_strdup(q, p->levels[l], strlen(p->levels[l]));
                q->level_costs[l] = p->level_costs[l];
            }
            for (int32_t n = 0; rc == RF_OK && n < p->n_nodes; n++)
                rc = s_copy_node(q, p, &p->nodes[n], map, &q->nodes[n]);
            q->n_nodes = p->n_nodes;
            free(map);
            if (rc == RF_OK)
                rc = rf_problem_validate(q, NULL, err);
            else
                rf_error_set(err, rc, "", "out of memory");
            rf_problem_destroy(&cluster);
            if (rc != RF_OK) {
                rf_problem_destroy(&q);
                free(nb);
                goto fail;
            }
            p = q;
        }
        nb->refs = 1;
        nb->p = p;
        cluster = NULL;
        if ((rc = s_put_running(nb, running, limits, err)) != RF_OK) {
            s_base_unref(nb);
            goto fail;
        }
        if ((rc = s_rebase(c, nb, err)) != RF_OK)
            goto fail;
        c->version++;
        c->base_version++;
        s_prune_pre(c);
        s_invalidate(c);
    }
    *new_version = c->version;
    pthread_mutex_unlock(&st->mu);
    return RF_OK;
fail:
    pthread_mutex_unlock(&st->mu);
    rf_problem_destroy(&cluster);
    return rc;
}

/* Build the patched base of `c` into *out (validated). */
static rf_status s_patched(const s_cluster_t *c, const rf__patch_t *pt, const rf_limits_t *limits, rf_problem_t **out,
                           rf_error_t *err)
{
    const rf_problem_t *old = c->base->p;
    const rf_problem_t *up = pt->upsert, *us = pt->used;
    rf_status rc = RF_OK;
    char path[64];
    int32_t n_up = up ? up->n_nodes : 0;
    rf_problem_t *q = rf_problem_new();
    int32_t *map_old = malloc(((size_t)old->n_resources + 1) * sizeof(int32_t));
    int32_t *map_up = malloc(((size_t)(up ? up->n_resources : 0) + 1) * sizeof(int32_t));
    int32_t *map_us = malloc(((size_t)(us ? us->n_resources : 0) + 1) * sizeof(int32_t));
    int32_t *fate = malloc(((size_t)old->n_nodes + 1) * sizeof(int32_t)); /* -1 keep, -2 removed, k: upsert k */
    bool *appended = malloc(((size_t)n_up + 1) * sizeof(bool));
    if (!q || !map_old || !map_up || !map_us || !fate || !appended) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if (s_intern(q, old, map_old) || (up && s_intern(q, up, map_up)) || (us && s_intern(q, us, map_us))) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if (limits && q->n_resources > limits->max_resources) {
        rc = rf_error_set(err, RF_ELIMIT, "", "the patched cluster has %d resources, more than max_resources (%d)",
                          (int)q->n_resources, (int)limits->max_resources);
        goto done;
    }
    for (int32_t n = 0; n < old->n_nodes; n++)
        fate[n] = -1;
    for (int32_t i = 0; i < pt->n_remove; i++) {
        int32_t n = rf_problem_node(old, pt->remove[i]);
        if (n < 0) {
            snprintf(path, sizeof path, "remove[%d]", (int)i);
            rc = rf_error_set(err, RF_ENOTFOUND, path, "no node \"%.200s\" in the cluster", pt->remove[i]);
            goto done;
        }
        fate[n] = -2;
    }
    int32_t count = 0;
    for (int32_t n = 0; n < old->n_nodes; n++)
        count += fate[n] != -2;
    for (int32_t k = 0; k < n_up; k++) {
        int32_t n = rf_problem_node(old, up->nodes[k].name);
        appended[k] = n < 0 || fate[n] == -2;
        if (appended[k])
            count++;
        else
            fate[n] = k;
    }
    q->n_levels = old->n_levels;
    q->levels = rf_problem_alloc(q, (size_t)old->n_levels * sizeof *q->levels);
    q->level_costs = rf_problem_alloc(q, (size_t)old->n_levels * sizeof *q->level_costs);
    q->nodes = rf_problem_alloc(q, (size_t)(count ? count : 1) * sizeof *q->nodes);
    if (!q->levels || !q->level_costs || !q->nodes) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t l = 0; l < old->n_levels; l++) {
        q->levels[l] = rf_problem_strdup(q, old->levels[l], strlen(old->levels[l]));
        q->level_costs[l] = old->level_costs[l];
    }
    int32_t m = 0;
    for (int32_t n = 0; n < old->n_nodes && rc == RF_OK; n++) {
        if (fate[n] == -1)
            rc = s_copy_node(q, old, &old->nodes[n], map_old, &q->nodes[m++]);
        else if (fate[n] >= 0)
            rc = s_copy_node(q, up, &up->nodes[fate[n]], map_up, &q->nodes[m++]);
    }
    for (int32_t k = 0; k < n_up && rc == RF_OK; k++)
        if (appended[k])
            rc = s_copy_node(q, up, &up->nodes[k], map_up, &q->nodes[m++]);
    q->n_nodes = m;
    if (rc != RF_OK) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    if ((rc = rf_problem_index_nodes(q, err)) != RF_OK)
        goto done;
    for (int32_t i = 0; us && i < us->n_nodes; i++) {
        int32_t n = rf_problem_node(q, us->nodes[i].name);
        if (n < 0) {
            snprintf(path, sizeof path, "used[%d].node", (int)i);
            rc = rf_error_set(err, RF_ENOTFOUND, path, "no node \"%.200s\" in the cluster", us->nodes[i].name);
            goto done;
        }
        memset(q->nodes[n].used, 0, (size_t)q->n_resources * sizeof(int64_t));
        for (int32_t r = 0; r < us->n_resources; r++)
            q->nodes[n].used[map_us[r]] = us->nodes[i].used[r];
    }
    rc = rf_problem_validate(q, limits, err);
done:
    free(map_old);
    free(map_up);
    free(map_us);
    free(fate);
    free(appended);
    if (rc != RF_OK)
        rf_problem_destroy(&q);
    *out = q;
    return rc;
}

/* Remember, on every open preemption, the nodes this patch set `used` of
 * (best effort: on ENOMEM a node is not remembered). */
static void s_pre_note_set(s_cluster_t *c, const rf__patch_t *pt)
{
    for (int32_t e = 0; e < c->n_pre; e++)
        for (int32_t i = 0; pt->used && i < pt->used->n_nodes; i++) {
            char **grown = realloc(c->pre[e].set, ((size_t)c->pre[e].n_set + 1) * sizeof *grown);
            if (!grown)
                return;
            c->pre[e].set = grown;
            if ((grown[c->pre[e].n_set] = strdup(pt->used->nodes[i].name)))
                c->pre[e].n_set++;
        }
}

/* Does this patch confirm the last live commits of `gang` (each on a node
 * whose `used` entry includes it)? */
static bool s_confirmed(const s_cluster_t *c, const rf__patch_t *pt, const char *gang)
{
    bool any = false;
    for (int32_t k = 0; k < c->n_commits; k++) {
        if (strcmp(c->commits[k].gang, gang) != 0)
            continue;
        const char *node = c->base->p->nodes[c->commits[k].node].name;
        bool covered = false;
        for (int32_t i = 0; pt->used && pt->includes && i < pt->used->n_nodes && !covered; i++)
            if (strcmp(pt->used->nodes[i].name, node) == 0)
                for (int32_t g = 0; g < pt->includes[i].n && !covered; g++)
                    covered = strcmp(pt->includes[i].gangs[g], gang) == 0;
        if (!covered)
            return false;
        any = true;
    }
    return any;
}

/* Take running gang `v` of the old base out of `q`'s `used`, on the nodes
 * the patch's `used` does not set (those it sets are the client's word). */
static void s_victim_gone(const s_base_t *ob, int32_t v, const s_pre_t *e, const rf__patch_t *pt, rf_problem_t *q)
{
    const rf_problem_t *rp = ob->runp;
    const rf_running_t *g = &rp->running[v];
    for (int32_t j = 0; j < g->n_pod_sets; j++)
        for (int32_t k = 0; k < g->pod_sets[j].n_placements; k++) {
            const rf_run_placement_t *pl = &g->pod_sets[j].placements[k];
            const char *node = rp->nodes[pl->node].name;
            bool set = false;
            for (int32_t i = 0; pt->used && i < pt->used->n_nodes && !set; i++)
                set = strcmp(pt->used->nodes[i].name, node) == 0;
            for (int32_t i = 0; i < e->n_set && !set; i++)
                set = strcmp(e->set[i], node) == 0;
            int32_t n = rf_problem_node(q, node);
            if (set || n < 0)
                continue;
            for (int32_t r = 0; r < rp->n_resources; r++)
                for (int32_t t = 0; t < q->n_resources; t++)
                    if (strcmp(q->resources[t], rp->resources[r]) == 0) {
                        int64_t *u = &q->nodes[n].used[t], a = g->pod_sets[j].requests[r] * pl->count;
                        *u = *u > a ? *u - a : 0;
                    }
        }
}

/* The running gangs of the patched base `nb` (its p the patched nodes):
 * the old ones, less running_remove, those running_upsert replaces and the
 * victims of confirmed preemptors, then running_upsert's. */
static rf_status s_patch_running(s_cluster_t *c, const rf__patch_t *pt, s_base_t *nb, const rf_limits_t *limits,
                                 rf_error_t *err)
{
    const s_base_t *ob = c->base;
    const rf_doc_t *up = pt->running_upsert;
    char path[64];
    if (up && up->type != RF_DOC_ARRAY)
        return rf_error_set(err, RF_ESCHEMA, "running_upsert", "must be an array of running gangs, not %s",
                            rf__doc_type_name(up->type));
    for (int32_t i = 0; i < pt->n_running_remove; i++)
        if (!s_base_has_running(ob, pt->running_remove[i])) {
            snprintf(path, sizeof path, "running_remove[%d]", (int)i);
            return rf_error_set(err, RF_ENOTFOUND, path, "no running gang \"%.200s\" is stored with the cluster",
                                pt->running_remove[i]);
        }
    int32_t n_up = up ? (int32_t)up->len : 0;
    const rf_doc_t **items = malloc(((size_t)ob->n_run + (size_t)n_up + 1) * sizeof *items);
    bool *gone = calloc((size_t)ob->n_run + 1, sizeof *gone);
    if (!items || !gone) {
        free(items);
        free(gone);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    for (int32_t e = 0; e < c->n_pre; e++)
        if (s_confirmed(c, pt, c->pre[e].gang))
            for (int32_t v = 0; v < ob->n_run; v++)
                if (!gone[v] && strcmp(s_doc_name(&ob->run[v]), c->pre[e].victim) == 0) {
                    gone[v] = true;
                    s_victim_gone(ob, v, &c->pre[e], pt, nb->p);
                }
    int32_t n = 0;
    for (int32_t v = 0; v < ob->n_run; v++) {
        const char *name = s_doc_name(&ob->run[v]);
        bool drop = gone[v];
        for (int32_t i = 0; i < pt->n_running_remove && !drop; i++)
            drop = strcmp(pt->running_remove[i], name) == 0;
        for (int32_t i = 0; i < n_up && !drop; i++)
            drop = strcmp(s_doc_name(&up->u.items[i]), name) == 0;
        if (!drop)
            items[n++] = &ob->run[v];
    }
    const int32_t kept = n;
    for (int32_t i = 0; i < n_up; i++)
        items[n++] = &up->u.items[i];
    rf_status rc = s_base_running(nb, items, n, limits, err);
    /* running[i] of the new list: name running_upsert's own entries by their index there */
    int idx = -1, used_chars = 0;
    if (rc != RF_OK && sscanf(err->path, "running[%d]%n", &idx, &used_chars) == 1 && idx >= kept) {
        char rest[RF_ERROR_PATH_MAX - 32];
        snprintf(rest, sizeof rest, "%s", err->path + used_chars);
        snprintf(err->path, sizeof err->path, "running_upsert[%d]%.200s", idx - kept, rest);
    }
    free(items);
    free(gone);
    return rc;
}

rf_status rf__store_patch(rf__store_t *st, const char *name, int64_t version, const rf__patch_t *patch,
                          const rf_limits_t *limits, double now_ms, int64_t *new_version, rf_error_t *err)
{
    s_cluster_t *c = NULL;
    rf_problem_t *q = NULL;
    pthread_mutex_lock(&st->mu);
    rf_status rc = s_lookup(st, name, version, now_ms, &c, err);
    if (rc == RF_OK)
        rc = s_patched(c, patch, limits, &q, err);
    s_base_t *nb = NULL;
    if (rc == RF_OK && !(nb = calloc(1, sizeof *nb)))
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
    if (rc != RF_OK) {
        rf_problem_destroy(&q);
        pthread_mutex_unlock(&st->mu);
        return rc;
    }
    nb->refs = 1;
    nb->p = q;
    if ((rc = s_patch_running(c, patch, nb, limits, err)) != RF_OK) {
        s_base_unref(nb);
        pthread_mutex_unlock(&st->mu);
        return rc;
    }
    rc = s_rebase(c, nb, err);
    /* A `used` that includes a gang confirms every live commit of that gang
     * on that node, whichever solve made it: `includes` names gangs, not
     * solves, so the client includes a gang only once `used` holds all of
     * its pods there (docs/protocol.md, "Versions and commits"). */
    for (int32_t i = 0; rc == RF_OK && patch->used && i < patch->used->n_nodes; i++) {
        int32_t n = rf_problem_node(q, patch->used->nodes[i].name);
        for (int32_t g = 0; patch->includes && g < patch->includes[i].n; g++)
            for (int32_t k = 0; k < c->n_commits;) {
                if (c->commits[k].node == n && strcmp(c->commits[k].gang, patch->includes[i].gangs[g]) == 0)
                    s_drop_commit(c, k);
                else
                    k++;
            }
    }
    c->version++;
    c->base_version++;
    s_prune_pre(c);
    s_pre_note_set(c, patch);
    s_invalidate(c);
    *new_version = c->version;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* The cluster's spare snapshot becomes its current one: same base, so the
 * same nodes; only `used` and the version are brought up to date. */
static void s_reuse_spare(s_cluster_t *c)
{
    s_snap_t *s = c->spare;
    c->spare = NULL;
    if (s->base != c->base) {
        s->refs = 1;
        s_snap_unref(s);
        return;
    }
    const rf_problem_t *b = c->base->p;
    memcpy(s->used, c->eff_used, (size_t)b->n_nodes * (size_t)b->n_resources * sizeof *s->used);
    s->pub.version = c->version;
    s->pub.base_version = c->base_version;
    s->pub.running = c->base->run;
    s->pub.n_running = c->base->n_run;
    s->refs = 1; /* the cluster's */
    c->snap = s;
}

rf_status rf__store_acquire(rf__store_t *st, const char *name, int64_t version, double now_ms, rf__snapshot_t **snap,
                            rf_error_t *err)
{
    s_cluster_t *c = NULL;
    *snap = NULL;
    pthread_mutex_lock(&st->mu);
    rf_status rc = s_lookup(st, name, version, now_ms, &c, err);
    if (rc == RF_OK && !c->snap && c->spare)
        s_reuse_spare(c);
    if (rc == RF_OK && !c->snap) {
        const rf_problem_t *b = c->base->p;
        size_t R = (size_t)b->n_resources;
        s_snap_t *s = calloc(1, sizeof *s);
        rf_problem_t *p = s ? rf_problem_new() : NULL;
        rf_node_t *nodes = p ? rf_problem_alloc(p, (size_t)(b->n_nodes ? b->n_nodes : 1) * sizeof *nodes) : NULL;
        int64_t *used = nodes ? rf_problem_alloc(p, (size_t)b->n_nodes * R * sizeof *used) : NULL;
        char *nm = used ? strdup(c->name) : NULL;
        if (!nm) {
            rf_problem_destroy(&p);
            free(s);
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        } else {
            memcpy(nodes, b->nodes, (size_t)b->n_nodes * sizeof *nodes);
            memcpy(used, c->eff_used, (size_t)b->n_nodes * R * sizeof *used);
            for (int32_t n = 0; n < b->n_nodes; n++)
                nodes[n].used = used + (size_t)n * R;
            /* Borrowed from the base, which the snapshot keeps alive. */
            p->levels = b->levels;
            p->level_costs = b->level_costs;
            p->n_levels = b->n_levels;
            p->resources = b->resources;
            p->n_resources = b->n_resources;
            p->nodes = nodes;
            p->n_nodes = b->n_nodes;
            p->node_by_name = b->node_by_name;
            s->own = p;
            s->used = used;
            s->base = c->base;
            c->base->refs++;
            s->refs = 1; /* the cluster's */
            s->pub.problem = p;
            s->pub.version = c->version;
            s->pub.base_version = c->base_version;
            s->pub.running = c->base->run;
            s->pub.n_running = c->base->n_run;
            s->name = nm;
            s->pub.name = nm;
            c->snap = s;
        }
    }
    if (rc == RF_OK) {
        c->snap->refs++;
        *snap = &c->snap->pub;
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

void rf__store_set_caches(rf__store_t *st, int32_t max_caches, const rf_cluster_cache_limits_t *limits)
{
    pthread_mutex_lock(&st->mu);
    st->max_caches = max_caches > 0 ? max_caches : 0;
    if (limits)
        st->cache_limits = *limits;
    pthread_mutex_unlock(&st->mu);
}

rf_cluster_cache_t *rf__store_cache_take(rf__store_t *st, const rf__snapshot_t *snap)
{
    s_base_t *b = ((const s_snap_t *)snap)->base;
    rf_cluster_cache_t *cache = NULL;
    pthread_mutex_lock(&st->mu);
    int32_t max = st->max_caches;
    if (b->n_caches > 0 && max > 0)
        cache = b->caches[--b->n_caches];
    rf_cluster_cache_limits_t lim = st->cache_limits;
    pthread_mutex_unlock(&st->mu);
    /* built outside the lock, from the snapshot (the base's descriptions);
     * on failure the solve goes without one */
    if (!cache && max > 0 && rf_cluster_cache_new(snap->problem, &lim, &cache, NULL) != RF_OK)
        cache = NULL;
    return cache;
}

void rf__store_cache_give(rf__store_t *st, const rf__snapshot_t *snap, rf_cluster_cache_t **cache)
{
    if (!cache || !*cache)
        return;
    s_base_t *b = ((const s_snap_t *)snap)->base;
    pthread_mutex_lock(&st->mu);
    if (b->n_caches < st->max_caches) { /* the limit may have been raised since the pool was made */
        rf_cluster_cache_t **grown = rf__grow(b->caches, &b->cap_caches, (int64_t)b->n_caches + 1, 4, sizeof *grown);
        if (grown) {
            b->caches = grown;
            b->caches[b->n_caches++] = *cache;
            *cache = NULL;
        }
    }
    pthread_mutex_unlock(&st->mu);
    rf_cluster_cache_destroy(cache); /* the pool was full */
}

void rf__store_unref(rf__store_t *st, rf__snapshot_t **snap)
{
    if (!snap || !*snap)
        return;
    pthread_mutex_lock(&st->mu);
    s_snap_t *s = (s_snap_t *)*snap;
    s_cluster_t *keep = NULL;
    /* The last solve of a snapshot that commits retired: kept as its
     * cluster's spare (same base), so the next acquire need not build one. */
    for (int32_t i = 0; s->refs == 1 && i < st->n_clusters && !keep; i++)
        if (st->clusters[i].base == s->base && st->clusters[i].snap != s && !st->clusters[i].spare)
            keep = &st->clusters[i];
    if (keep) {
        s->refs = 0;
        keep->spare = s;
    } else {
        s_snap_unref(s);
    }
    pthread_mutex_unlock(&st->mu);
    *snap = NULL;
}

/* Only commits changed since the snapshot: do the answer's placements
 * still fit, together? (RF_ESTALE naming the first node and resource that
 * no longer has room.) */
static rf_status s_still_fits(const s_cluster_t *c, const rf_problem_t *problem, const rf_answer_t *answer,
                              rf_error_t *err)
{
    const rf_problem_t *b = c->base->p;
    const size_t R = (size_t)b->n_resources;
    rf_status rc = RF_OK;
    /* Only commits changed: the placements must still fit, together.
     * The need is summed per (node, resource) over the whole answer
     * (two gangs, or two pod sets, on one node), on a copy of the rows
     * of eff_used it touches: row[n] is that copy's index, or -1. */
    int32_t *row = malloc(((size_t)b->n_nodes + 1) * sizeof *row);
    int32_t n_rows = 0, cap_rows = 0;
    int64_t *sum = NULL;
    if (!row) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        return rc;
    }
    for (int32_t n = 0; n < b->n_nodes; n++)
        row[n] = -1;
    for (int32_t g = 0; g < answer->n_gangs && rc == RF_OK; g++) {
        if (!answer->gangs[g].admitted)
            continue;
        for (int32_t j = 0; j < problem->gangs[g].n_pod_sets && rc == RF_OK; j++) {
            const rf_pod_set_answer_t *pa = &answer->gangs[g].pod_sets[j];
            const int64_t *req = problem->gangs[g].pod_sets[j].requests;
            for (int32_t k = 0; k < pa->n_placements && rc == RF_OK; k++) {
                int32_t n = pa->placements[k].node;
                if (row[n] < 0) {
                    if (n_rows == cap_rows) {
                        int32_t cap = cap_rows ? cap_rows * 2 : 8;
                        int64_t *grown = realloc(sum, (size_t)cap * R * sizeof *grown);
                        if (!grown) {
                            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                            break;
                        }
                        sum = grown;
                        cap_rows = cap;
                    }
                    row[n] = n_rows++;
                    memcpy(sum + (size_t)row[n] * R, c->eff_used + (size_t)n * R, R * sizeof *sum);
                }
                int64_t *u = sum + (size_t)row[n] * R;
                for (size_t r = 0; r < R; r++) {
                    int64_t need = req[r] * pa->placements[k].count;
                    int64_t alloc = b->nodes[n].allocatable[r];
                    /* used + need > alloc, without overflow (both >= 0). */
                    if (need > 0 && (u[r] > alloc || need > alloc - u[r])) {
                        rc = rf_error_set(err, RF_ESTALE, "cluster_version",
                                          "other commits took node %.200s's %s while solving (now version %lld): "
                                          "nothing committed",
                                          b->nodes[n].name, b->resources[r], (long long)c->version);
                        break;
                    }
                    u[r] += need;
                }
            }
        }
    }
    free(row);
    free(sum);
    return rc;
}

/* Remember, for each stored running gang `answer` preempts, its preemptors
 * (their commits were just made). */
static rf_status s_record_preemptions(s_cluster_t *c, const rf_problem_t *problem, const rf_answer_t *answer,
                                      rf_error_t *err)
{
    for (int32_t r = 0; r < answer->n_running; r++) {
        const char *victim = problem->running[r].name;
        if (!answer->running[r].preempted || !s_base_has_running(c->base, victim))
            continue;
        for (int32_t b = 0; b < answer->running[r].n_by; b++) {
            const char *gang = problem->gangs[answer->running[r].by[b]].name;
            s_pre_t *grown = realloc(c->pre, ((size_t)c->n_pre + 1) * sizeof *grown);
            if (!grown)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            c->pre = grown;
            s_pre_t *e = &c->pre[c->n_pre];
            memset(e, 0, sizeof *e);
            e->gang = strdup(gang);
            e->victim = strdup(victim);
            if (!e->gang || !e->victim) {
                free(e->gang);
                free(e->victim);
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            }
            c->n_pre++;
        }
    }
    return RF_OK;
}

rf_status rf__store_commit(rf__store_t *st, const rf__snapshot_t *snap, const rf_problem_t *problem,
                           const rf_answer_t *answer, int64_t ttl_ms, double now_ms, int64_t *new_version,
                           rf_error_t *err)
{
    s_cluster_t *c = NULL;
    rf_status rc = RF_OK;
    bool changed = false;
    pthread_mutex_lock(&st->mu);
    /* The snapshot's name belongs to a cluster that may have been deleted:
     * look the cluster up by its snapshot. */
    for (int32_t i = 0; i < st->n_clusters && !c; i++)
        if (st->clusters[i].snap && &st->clusters[i].snap->pub == snap)
            c = &st->clusters[i];
    for (int32_t i = 0; i < st->n_clusters && !c; i++)
        if (st->clusters[i].base == ((const s_snap_t *)snap)->base)
            c = &st->clusters[i];
    if (!c) {
        rc = rf_error_set(err, RF_ESTALE, "cluster_name", "the cluster changed while solving (replaced or deleted)");
        goto done;
    }
    s_expire(c, now_ms, &st->expired);
    const rf_problem_t *b = c->base->p;
    const size_t R = (size_t)b->n_resources;
    if (c->base_version != snap->base_version) {
        rc = rf_error_set(err, RF_ESTALE, "cluster_version",
                          "the cluster's nodes changed while solving (now version %lld): nothing committed",
                          (long long)c->version);
        goto done;
    }
    if (c->version != snap->version && (rc = s_still_fits(c, problem, answer, err)) != RF_OK)
        goto done;
    /* Count first, so that the limit refuses all or nothing. */
    int32_t fresh = 0;
    for (int32_t g = 0; g < answer->n_gangs; g++)
        if (answer->gangs[g].admitted)
            for (int32_t j = 0; j < problem->gangs[g].n_pod_sets; j++)
                fresh += answer->gangs[g].pod_sets[j].n_placements;
    if (c->n_commits + fresh > st->max_commits) {
        rc = rf_error_set(err, RF_ELIMIT, "commit", "the cluster holds %d commits; %d more exceed max_commits (%d)",
                          (int)c->n_commits, (int)fresh, (int)st->max_commits);
        goto done;
    }
    if (c->n_commits + fresh > c->cap_commits) {
        int32_t cap = c->cap_commits ? c->cap_commits : 16;
        while (cap < c->n_commits + fresh)
            cap *= 2;
        s_commit_t *grown = realloc(c->commits, (size_t)cap * sizeof *grown);
        if (!grown) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        c->commits = grown;
        c->cap_commits = cap;
    }
    const int32_t first = c->n_commits;
    for (int32_t g = 0; g < answer->n_gangs; g++) {
        if (!answer->gangs[g].admitted)
            continue;
        const char *gang = problem->gangs[g].name;
        for (int32_t j = 0; j < problem->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_answer_t *pa = &answer->gangs[g].pod_sets[j];
            const int64_t *req = problem->gangs[g].pod_sets[j].requests;
            for (int32_t k = 0; k < pa->n_placements; k++) {
                int32_t n = pa->placements[k].node, cnt = pa->placements[k].count;
                /* One entry per (solve, gang, node): pod sets of this gang
                 * on one node merge, another solve's entry is never
                 * touched (its pods and its expiry are its own). */
                s_commit_t *cm = NULL;
                for (int32_t q = first; q < c->n_commits && !cm; q++)
                    if (c->commits[q].node == n && strcmp(c->commits[q].gang, gang) == 0)
                        cm = &c->commits[q];
                if (!cm) {
                    cm = &c->commits[c->n_commits];
                    memset(cm, 0, sizeof *cm);
                    cm->gang = strdup(gang);
                    cm->amount = calloc(R, sizeof *cm->amount);
                    if (!cm->gang || !cm->amount) {
                        s_commit_free(cm);
                        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory (some commits may be kept)");
                        goto done;
                    }
                    cm->node = n;
                    c->n_commits++;
                }
                cm->count += cnt;
                cm->expires_ms = now_ms + (double)ttl_ms;
                for (size_t r = 0; r < R; r++) {
                    int64_t a = req[r] * cnt;
                    cm->amount[r] += a;
                    c->eff_used[(size_t)n * R + r] += a;
                }
                changed = true;
            }
        }
    }
    if ((rc = s_record_preemptions(c, problem, answer, err)) != RF_OK)
        goto done;
done:
    if (rc == RF_OK || changed) {
        if (changed) {
            c->version++;
            s_commits_changed(c);
        }
    }
    if (c)
        *new_version = c->version;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

rf_status rf__store_release(rf__store_t *st, const char *name, int64_t version, const char *const *gangs, int32_t n,
                            double now_ms, int64_t *new_version, int32_t *released, rf_error_t *err)
{
    s_cluster_t *c = NULL;
    *released = 0;
    pthread_mutex_lock(&st->mu);
    rf_status rc = s_lookup(st, name, version, now_ms, &c, err);
    if (rc == RF_OK) {
        for (int32_t k = 0; k < c->n_commits;) {
            bool hit = false;
            for (int32_t g = 0; g < n && !hit; g++)
                hit = strcmp(c->commits[k].gang, gangs[g]) == 0;
            if (hit) {
                s_drop_commit(c, k);
                (*released)++;
            } else {
                k++;
            }
        }
        if (*released > 0) {
            c->version++;
            s_prune_pre(c);
            s_commits_changed(c);
        }
        *new_version = c->version;
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* Expires commits before comparing versions, like every other op; the
 * clock is read here (rf_now_ms) as store.h's signature takes no time. */
rf_status rf__store_delete(rf__store_t *st, const char *name, int64_t version, rf_error_t *err)
{
    const double now_ms = rf_now_ms();
    s_cluster_t *c = NULL;
    pthread_mutex_lock(&st->mu);
    rf_status rc = s_lookup(st, name, version, now_ms, &c, err);
    if (rc == RF_OK) {
        s_cluster_fini(c);
        *c = st->clusters[--st->n_clusters];
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

rf_status rf__store_info(rf__store_t *st, const char *name, double now_ms, rf__store_info_t *info, rf_error_t *err)
{
    s_cluster_t *c = NULL;
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&st->mu);
    rf_status rc = s_lookup(st, name, -1, now_ms, &c, err);
    if (rc == RF_OK) {
        info->version = c->version;
        info->base_version = c->base_version;
        info->nodes = c->base->p->n_nodes;
        info->commits = c->n_commits;
        for (int32_t k = 0; k < c->n_commits; k++)
            info->commit_pods += c->commits[k].count;
        info->running = c->base->n_run;
        info->preempting = c->n_pre;
    }
    info->clusters = st->n_clusters;
    pthread_mutex_unlock(&st->mu);
    return rc;
}
