/* solver/cluster_cache.c: the solver cache for a stored cluster
 * (include/rackfit/cluster_cache.h, invariants in solver/cluster_cache.h):
 * building it, matching a problem against it, syncing it to a problem's
 * `used` node by node, and the classes and shapes solves add to it. */
#include "cluster_cache.h"

#include <stdlib.h>
#include <string.h>

#include "eligible.h"

void rf_cluster_cache_limits_default(rf_cluster_cache_limits_t *limits)
{
    limits->max_classes = 64;
    limits->max_shapes = 16;
}

/* The cache's nodes as a problem, for the eligibility rules (they read
 * nodes only). */
static rf_problem_t s_view(const rf_cluster_cache_t *c)
{
    rf_problem_t v;
    memset(&v, 0, sizeof v);
    v.levels = c->levels;
    v.n_levels = c->L;
    v.resources = c->resources;
    v.n_resources = c->R;
    v.nodes = c->nodes;
    v.n_nodes = c->N;
    return v;
}

/* Free capacity (and whether it is unlimited) of node n from used. */
static void s_node_free(rf_cluster_cache_t *c, int32_t n)
{
    const size_t R = (size_t)c->R;
    for (size_t r = 0; r < R; r++)
        c->free[(size_t)n * R + r] = rf__cap_free(c->nodes[n].allocatable[r], c->used[(size_t)n * R + r]);
}

rf_status rf_cluster_cache_new(const rf_problem_t *cluster, const rf_cluster_cache_limits_t *limits,
                               rf_cluster_cache_t **out, rf_error_t *err)
{
    rf_cluster_cache_limits_t lim;
    if (limits)
        lim = *limits;
    else
        rf_cluster_cache_limits_default(&lim);
    *out = NULL;
    if (!cluster || cluster->n_nodes < 1 || cluster->n_levels < 1 || lim.max_classes < 1 || lim.max_shapes < 1)
        return rf_error_set(err, RF_EINVAL, "", "a cluster cache needs nodes, levels and limits of at least 1");
    rf_cluster_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory for the cluster cache");
    c->lim = lim;
    c->N = cluster->n_nodes;
    c->R = cluster->n_resources;
    c->L = cluster->n_levels;
    c->levels = cluster->levels;
    c->resources = cluster->resources;
    const size_t N = (size_t)c->N, R = (size_t)c->R;
    c->nodes = malloc(N * sizeof *c->nodes);
    c->used = malloc((N * R + 1) * sizeof *c->used);
    c->free = malloc((N * R + 1) * sizeof *c->free);
    c->unlimited = calloc(R + 1, sizeof *c->unlimited);
    c->arena = rf__arena_new(0);
    c->classes = calloc((size_t)lim.max_classes, sizeof *c->classes);
    c->shapes = calloc((size_t)lim.max_shapes, sizeof *c->shapes);
    if (!c->nodes || !c->used || !c->free || !c->unlimited || !c->arena || !c->classes || !c->shapes) {
        rf_cluster_cache_destroy(&c);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory for the cluster cache");
    }
    for (size_t n = 0; n < N; n++) {
        c->nodes[n] = cluster->nodes[n];
        c->nodes[n].used = NULL; /* the cache's own `used` is the truth */
        memcpy(c->used + n * R, cluster->nodes[n].used, R * sizeof *c->used);
        s_node_free(c, (int32_t)n);
        for (size_t r = 0; r < R; r++)
            c->unlimited[r] = c->unlimited[r] || c->free[n * R + r] == RF_QTY_UNLIMITED;
    }
    rf_status rc = rf__tree_build(cluster, &c->tree, err);
    if (rc != RF_OK) {
        rf_cluster_cache_destroy(&c);
        return rc;
    }
    rf__cap_init(&c->cap, &c->tree, c->R);
    c->cap.free = c->free;
    c->stats.nodes = c->N;
    *out = c;
    return RF_OK;
}

void rf_cluster_cache_destroy(rf_cluster_cache_t **cache)
{
    if (!cache || !*cache)
        return;
    rf_cluster_cache_t *c = *cache;
    for (int32_t i = 0; c->classes && i < c->n_classes; i++)
        free(c->classes[i].ok);
    for (int32_t i = 0; c->shapes && i < c->n_shapes; i++) {
        rf__shape_fini(&c->shapes[i].sh);
        free(c->shapes[i].req);
    }
    if (c->tree.n_domains > 0 || c->tree.node_dom)
        rf__tree_fini(&c->tree);
    rf__arena_destroy(&c->arena);
    free(c->classes);
    free(c->shapes);
    free(c->nodes);
    free(c->used);
    free(c->free);
    free(c->unlimited);
    free(c);
    *cache = NULL;
}

static bool s_same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Levels and resources: the same names in the same order. */
static bool s_same_model(const rf_cluster_cache_t *c, const rf_problem_t *p)
{
    if (!c || !p || p->n_nodes != c->N || p->n_resources != c->R || p->n_levels != c->L)
        return false;
    for (int32_t l = 0; l < c->L; l++)
        if (!s_same_str(p->levels[l], c->levels[l]))
            return false;
    for (int32_t r = 0; r < c->R; r++)
        if (!s_same_str(p->resources[r], c->resources[r]))
            return false;
    return true;
}

/* Node a, a copy of the cache's node b (a batch with bound pods or running
 * gangs reads the cluster's nodes into its own arrays), describes it alike:
 * the same name, labels, taints, cordon and allocatable. */
static bool s_same_content(const rf_node_t *a, const rf_node_t *b, int32_t R)
{
    if (!s_same_str(a->name, b->name) || a->n_labels != b->n_labels || a->n_taints != b->n_taints ||
        a->unschedulable != b->unschedulable)
        return false;
    for (int32_t i = 0; a->labels != b->labels && i < a->n_labels; i++)
        if (!s_same_str(a->labels[i].key, b->labels[i].key) || !s_same_str(a->labels[i].value, b->labels[i].value))
            return false;
    for (int32_t i = 0; a->taints != b->taints && i < a->n_taints; i++)
        if (!s_same_str(a->taints[i].key, b->taints[i].key) || !s_same_str(a->taints[i].value, b->taints[i].value) ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return a->allocatable == b->allocatable || memcmp(a->allocatable, b->allocatable, (size_t)R * sizeof(int64_t)) == 0;
}

/* Node a describes what the cache's node b does (only `used` may differ):
 * the very arrays the cache borrowed settle it at once, copies are compared
 * by content. */
static inline bool s_same_node(const rf_node_t *a, const rf_node_t *b, int32_t R)
{
    if (a->name == b->name && a->labels == b->labels && a->n_labels == b->n_labels &&
        a->allocatable == b->allocatable && a->taints == b->taints && a->n_taints == b->n_taints &&
        a->unschedulable == b->unschedulable)
        return true;
    return s_same_content(a, b, R);
}

bool rf_cluster_cache_matches(const rf_cluster_cache_t *c, const rf_problem_t *p)
{
    if (!s_same_model(c, p))
        return false;
    for (int32_t n = 0; n < c->N; n++)
        if (!s_same_node(&p->nodes[n], &c->nodes[n], c->R))
            return false;
    return true;
}

rf_status rf_cluster_cache_sync(rf_cluster_cache_t *c, const rf_problem_t *p, int32_t *changed, rf_error_t *err)
{
    if (changed)
        *changed = 0;
    if (!s_same_model(c, p))
        return rf_error_set(err, RF_EINVAL, "", "the cluster cache was built for another cluster");
    c->tick++;
    const int32_t R = c->R;
    int32_t n_changed = 0, n = 0;
    /* one pass: each node's description checked, its `used` compared and,
     * when it differs, taken; a node that does not match stops the pass
     * (what was taken before it is consistent: a cache of those `used`) */
    for (; n < c->N && s_same_node(&p->nodes[n], &c->nodes[n], R); n++) {
        int64_t *u = c->used + (size_t)n * (size_t)R;
        const int64_t *pu = p->nodes[n].used;
        int32_t r = 0;
        while (r < R && u[r] == pu[r])
            r++;
        if (r == R)
            continue;
        memcpy(u, pu, (size_t)R * sizeof *u);
        s_node_free(c, n);
        for (int32_t s = 0; s < c->n_shapes; s++)
            if (c->shapes[s].cls >= 0)
                rf__shape_node(&c->cap, &c->shapes[s].sh, n);
        n_changed++;
    }
    /* buckets back in their canonical order, maxcnt0 from the new counts */
    for (int32_t s = 0; n_changed > 0 && s < c->n_shapes; s++)
        if (c->shapes[s].cls >= 0)
            rf__shape_index(&c->cap, &c->shapes[s].sh);
    c->stats.nodes_synced += n_changed;
    if (changed)
        *changed = n_changed;
    if (n < c->N)
        return rf_error_set(err, RF_EINVAL, "", "the cluster cache was built for another cluster");
    c->stats.syncs++;
    return RF_OK;
}

void rf_cluster_cache_info(const rf_cluster_cache_t *c, rf_cluster_cache_info_t *info)
{
    *info = c->stats;
    info->classes = c->n_classes;
    info->shapes = 0;
    for (int32_t s = 0; s < c->n_shapes; s++)
        info->shapes += c->shapes[s].cls >= 0;
}

/* A copy of ps's node_selector and tolerations in the arena. */
static bool s_copy_rep(rf__arena_t *a, const rf_pod_set_t *ps, rf_pod_set_t *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->n_node_selector = ps->n_node_selector;
    rep->n_tolerations = ps->n_tolerations;
    rep->node_selector = rf__arena_alloc(a, ((size_t)ps->n_node_selector + 1) * sizeof *rep->node_selector);
    rep->tolerations = rf__arena_alloc(a, ((size_t)ps->n_tolerations + 1) * sizeof *rep->tolerations);
    if (!rep->node_selector || !rep->tolerations)
        return false;
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        const rf_label_t *l = &ps->node_selector[i];
        rep->node_selector[i].key = rf__arena_strndup(a, l->key, strlen(l->key));
        rep->node_selector[i].value = rf__arena_strndup(a, l->value, strlen(l->value));
        if (!rep->node_selector[i].key || !rep->node_selector[i].value)
            return false;
    }
    for (int32_t i = 0; i < ps->n_tolerations; i++) {
        const rf_toleration_t *t = &ps->tolerations[i];
        rf_toleration_t *d = &rep->tolerations[i];
        *d = *t;
        d->key = t->key ? rf__arena_strndup(a, t->key, strlen(t->key)) : NULL;
        d->value = t->value ? rf__arena_strndup(a, t->value, strlen(t->value)) : NULL;
        if ((t->key && !d->key) || (t->value && !d->value))
            return false;
    }
    return true;
}

int32_t rf__cache_class(rf_cluster_cache_t *c, const rf_pod_set_t *ps)
{
    for (int32_t i = 0; i < c->n_classes; i++)
        if (rf__same_eligibility(&c->classes[i].rep, ps))
            return i;
    if (c->n_classes >= c->lim.max_classes)
        return -1;
    rf__cache_class_t *k = &c->classes[c->n_classes];
    k->ok = malloc((size_t)c->N + 1);
    if (!k->ok || !s_copy_rep(c->arena, ps, &k->rep)) {
        free(k->ok);
        k->ok = NULL;
        return -1; /* what the arena took stays until the cache goes */
    }
    rf_problem_t v = s_view(c);
    k->n_ok = 0;
    for (int32_t n = 0; n < c->N; n++) {
        bool in_tree = rf__tree_node_dom(&c->tree, n, c->L - 1) >= 0;
        k->ok[n] = in_tree && rf__node_admits_labelled(&v, n, &k->rep);
        k->n_ok += k->ok[n];
    }
    return c->n_classes++;
}

/* A slot for a new shape: a free one, a new one, or the least recently used
 * one no solve since the last sync uses (emptied); -1 when none. */
static int32_t s_shape_slot(rf_cluster_cache_t *c)
{
    int32_t lru = -1;
    for (int32_t s = 0; s < c->n_shapes; s++) {
        if (c->shapes[s].cls < 0)
            return s;
        if (c->shapes[s].last_use != c->tick && (lru < 0 || c->shapes[s].last_use < c->shapes[lru].last_use))
            lru = s;
    }
    if (c->n_shapes < c->lim.max_shapes) {
        c->shapes[c->n_shapes].cls = -1;
        return c->n_shapes++;
    }
    if (lru >= 0) {
        rf__shape_fini(&c->shapes[lru].sh);
        c->shapes[lru].cls = -1;
    }
    return lru;
}

const rf__shape_t *rf__cache_shape(rf_cluster_cache_t *c, int32_t cls, const int64_t *req)
{
    if (cls < 0 || cls >= c->n_classes)
        return NULL;
    const size_t R = (size_t)c->R;
    for (int32_t s = 0; s < c->n_shapes; s++) {
        rf__cache_shape_t *e = &c->shapes[s];
        if (e->cls == cls && memcmp(e->req, req, R * sizeof *req) == 0) {
            e->last_use = c->tick;
            c->stats.shape_hits++;
            return &e->sh;
        }
    }
    int32_t s = s_shape_slot(c);
    if (s < 0)
        return NULL;
    rf__cache_shape_t *e = &c->shapes[s];
    if (!e->req && !(e->req = malloc((R + 1) * sizeof *e->req)))
        return NULL;
    memcpy(e->req, req, R * sizeof *req);
    memset(&e->sh, 0, sizeof e->sh);
    rf__shape_set(&e->sh, &c->cap, e->req, cls, c->classes[cls].ok);
    if (rf__shape_build(&c->cap, &e->sh) != RF_OK) {
        rf__shape_fini(&e->sh);
        return NULL;
    }
    e->cls = cls;
    e->last_use = c->tick;
    c->stats.shape_builds++;
    return &e->sh;
}
