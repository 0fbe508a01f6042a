/* watcher/gangs.c: gang assembly into a contract problem (see gangs.h).
 *
 * Layout: pods of ours are sorted by (gang, pod set signature, rank) so
 * that each gang, and each pod set inside it, is one run of the array.
 * A build first decides everything (usage, then per gang: census, size,
 * state, pod sets with members, ranks, topology, min_count) into the plan
 * and its spec (plan.h), then writes it once (plan_json.c). */
#include "gangs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "log.h"
#include "plan.h"
#include "rackfit/problem.h"

/* ---- ranks ----------------------------------------------------------------------------------------------------- */

static const char *const s_major_index[] = {"jobset.sigs.k8s.io/job-index", NULL};
static const char *const s_minor_index[] = {"kueue.x-k8s.io/pod-group-pod-index",
                                            "batch.kubernetes.io/job-completion-index",
                                            "apps.kubernetes.io/pod-index",
                                            "leaderworkerset.sigs.k8s.io/worker-index",
                                            "rackfit.io/rank",
                                            NULL};

static int64_t s_index(const rf__kpod_t *p, const char *const *keys)
{
    /* Kueue's pod groups may name the label that holds the index */
    const char *named =
        keys == s_minor_index ? rf__kvs_get(&p->annotations, "kueue.x-k8s.io/pod-group-pod-index-label") : NULL;
    const char *one[2] = {named, NULL};
    if (named && rf__kvs_get(&p->labels, named))
        keys = one;
    for (int i = 0; keys[i]; i++) {
        const char *v = rf__kvs_get(&p->labels, keys[i]);
        if (!v)
            v = rf__kvs_get(&p->annotations, keys[i]);
        if (v && *v) {
            char *end;
            errno = 0;
            long long x = strtoll(v, &end, 10);
            if (!errno && !*end && x >= 0)
                return x;
        }
    }
    return -1;
}

/* Natural order: runs of digits compare as numbers ("w-2" < "w-10"). */
static int s_natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la]))
                la++;
            while (isdigit((unsigned char)b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

/* A pod's rank keys: its major and minor index (-1: none), and its name. */
typedef struct {
    int64_t major, minor;
    const char *name;
} s_rank_t;

static s_rank_t s_rank(const rf__kpod_t *p)
{
    return (s_rank_t){.major = s_index(p, s_major_index), .minor = s_index(p, s_minor_index), .name = p->name};
}

static int s_rank_cmp(const s_rank_t *a, const s_rank_t *b)
{
    if (a->major != b->major)
        return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) {
        if (a->minor < 0 || b->minor < 0) /* indexed pods first */
            return a->minor < 0 ? 1 : -1;
        return a->minor < b->minor ? -1 : 1;
    }
    int c = s_natcmp(a->name, b->name);
    return c ? c : strcmp(a->name, b->name);
}

int rf__pod_rank_cmp(const rf__kpod_t *a, const rf__kpod_t *b)
{
    s_rank_t ra = s_rank(a), rb = s_rank(b);
    return s_rank_cmp(&ra, &rb);
}

/* ---- gang membership ------------------------------------------------------------------------------------------- */

bool rf__pod_gang_name(const rf__kpod_t *pod, char *buf, size_t cap)
{
    const char *g = rf__kvs_get(&pod->labels, RF_LABEL_POD_GROUP);
    if (g && *g) {
        snprintf(buf, cap, "%s/%s", pod->ns, g);
        return true;
    }
    g = rf__kvs_get(&pod->labels, RF_LABEL_KUEUE_GROUP);
    if (g && *g) {
        snprintf(buf, cap, "%s/%s", pod->ns, g);
        return true;
    }
    snprintf(buf, cap, "%s/pod:%s", pod->ns, pod->name);
    return true;
}

typedef struct {
    char gang[320];
    const rf__kpod_t *pod;
    const char *node; /* bound or assumed node, NULL when pending */
    s_rank_t rank;    /* read once: the sort compares ranks n log n times */
} s_item_t;

static int s_item_cmp(const void *x, const void *y)
{
    const s_item_t *a = x, *b = y;
    int c = strcmp(a->gang, b->gang);
    if (c)
        return c;
    c = strcmp(a->pod->sig, b->pod->sig);
    if (c)
        return c;
    return s_rank_cmp(&a->rank, &b->rank);
}

static int s_node_cmp(const void *x, const void *y)
{
    return strcmp((*(rf__knode_t *const *)x)->name, (*(rf__knode_t *const *)y)->name);
}

static int32_t s_node_index(rf__knode_t **nodes, int32_t n, const char *name)
{
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int32_t mid = (lo + hi) / 2;
        int c = strcmp(nodes[mid]->name, name);
        if (!c)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

static int s_bound_cmp(const void *x, const void *y)
{
    const rf__pbound_t *a = x, *b = y;
    int c = strcmp(a->node, b->node);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* ---- plan memory ----------------------------------------------------------------------------------------------- */

static void s_gang_fini(rf__pgang_t *g)
{
    for (int32_t s = 0; s < g->n_sets; s++) {
        for (int32_t i = 0; i < g->sets[s].n_pending; i++) {
            free(g->sets[s].pending[i].ns);
            free(g->sets[s].pending[i].name);
            free(g->sets[s].pending[i].uid);
        }
        free(g->sets[s].pending);
        free(g->sets[s].name);
    }
    free(g->sets);
    free(g->name);
    free(g->ns);
    free(g->why);
    memset(g, 0, sizeof *g);
}

static void s_run_fini(rf__prun_t *r)
{
    for (int32_t i = 0; i < r->n_pods; i++) {
        free(r->pods[i].ns);
        free(r->pods[i].name);
        free(r->pods[i].uid);
    }
    free(r->pods);
    free(r->name);
    memset(r, 0, sizeof *r);
}

void rf__plan_fini(rf__plan_t *plan)
{
    for (int32_t i = 0; i < plan->n_running; i++)
        s_run_fini(&plan->running[i]);
    free(plan->running);
    for (int32_t i = 0; i < plan->n_gangs; i++)
        s_gang_fini(&plan->gangs[i]);
    free(plan->gangs);
    free(plan->sent);
    free(plan->json);
    memset(plan, 0, sizeof *plan);
}

static int32_t s_level(const rf__gang_opts_t *o, const char *key)
{
    for (int32_t i = 0; i < o->n_levels; i++)
        if (strcmp(o->levels[i], key) == 0)
            return i;
    return -1;
}

static char *s_strdupf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *s_strdupf(const char *fmt, ...)
{
    rf__jw_t w;
    rf__jw_init(&w);
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rf__jw_puts(&w, buf);
    return rf__jw_take(&w, NULL);
}

/* ---- one build: decide, then write ----------------------------------------------------------------------------- */

/* What one build holds while it decides (all borrowed from the cache but the arrays). */
typedef struct {
    rf__cache_t *cache;
    const rf__gang_opts_t *o;
    bool (*skip)(void *, const char *);
    void *ctx;
    char **refused, **refused_why;
    int n_refused;
    rf__plan_spec_t spec;
    s_item_t *items;
    int32_t n_items;
    int32_t *run_a, *run_z; /* plan->running[r]'s members: items[run_a[r], run_z[r]) */
} s_build_t;

static void s_build_fini(s_build_t *b, const rf__plan_t *plan)
{
    for (int32_t i = 0; i < b->spec.n_nodes; i++)
        rf__res_fini(&b->spec.used[i]);
    free(b->spec.used);
    free(b->spec.used_pods);
    free(b->spec.nodes);
    for (int32_t g = 0; b->spec.gangs && g < plan->n_gangs; g++) {
        for (int32_t s = 0; s < plan->gangs[g].n_sets; s++)
            free(b->spec.gangs[g].sets[s].bound);
        free(b->spec.gangs[g].sets);
    }
    free(b->spec.gangs);
    for (int32_t r = 0; b->spec.running && r < plan->n_running; r++) {
        for (int32_t s = 0; s < b->spec.running[r].n_sets; s++)
            free(b->spec.running[r].sets[s].at);
        free(b->spec.running[r].sets);
    }
    free(b->spec.running);
    free(b->items);
    free(b->run_a);
    free(b->run_z);
}

/* Nodes by name, the usage of every live pod (bound, assumed, or another
 * scheduler's nominated), and our pods sorted by (gang, spec, rank). */
static rf_status s_usage(s_build_t *b, rf_error_t *err)
{
    rf__kmap_t *nm = &b->cache->maps[RF_KIND_NODE], *pm = &b->cache->maps[RF_KIND_POD];
    rf__plan_spec_t *sp = &b->spec;
    sp->n_nodes = nm->n;
    sp->nodes = calloc((size_t)sp->n_nodes + 1, sizeof *sp->nodes);
    sp->used = calloc((size_t)sp->n_nodes + 1, sizeof *sp->used);
    sp->used_pods = calloc((size_t)sp->n_nodes + 1, sizeof *sp->used_pods);
    b->items = calloc((size_t)pm->n + 1, sizeof *b->items);
    if (!sp->nodes || !sp->used || !sp->used_pods || !b->items)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t i = 0; i < sp->n_nodes; i++)
        sp->nodes[i] = nm->items[i].obj;
    qsort(sp->nodes, (size_t)sp->n_nodes, sizeof *sp->nodes, s_node_cmp);
    for (int32_t i = 0; i < pm->n; i++) {
        const rf__kpod_t *p = pm->items[i].obj;
        if (rf__kpod_terminal(p))
            continue;
        const char *on = p->node_name ? p->node_name : p->assumed_node;
        const char *charge = on;
        bool ours = strcmp(p->scheduler_name, b->o->scheduler_name) == 0;
        char gang[320] = "";
        if (ours)
            rf__pod_gang_name(p, gang, sizeof gang);
        /* a preemptor holds its nominated node: another scheduler's, or ours while it waits for its victims */
        if (!on && p->nominated && (!ours || (b->skip && b->skip(b->ctx, gang))))
            charge = p->nominated;
        int32_t ni = charge ? s_node_index(sp->nodes, sp->n_nodes, charge) : -1;
        if (ni >= 0) {
            for (int32_t r = 0; r < p->requests.n; r++)
                if (rf__res_add(&sp->used[ni], p->requests.names[r], p->requests.vals[r]) != RF_OK)
                    return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            sp->used_pods[ni]++;
        }
        if (!ours && !(b->o->preempt_others && b->o->preemption && p->node_name))
            continue;
        s_item_t *it = &b->items[b->n_items++];
        rf__pod_gang_name(p, it->gang, sizeof it->gang);
        if (!ours) { /* another scheduler's bound pod: only ever a running gang (a victim), never one of ours */
            const char *slash = strchr(it->gang, '/');
            if (slash && strncmp(slash + 1, "pod:", 4) != 0) { /* a group: named apart from ours ("ns/other:g") */
                char group[320];
                snprintf(group, sizeof group, "%s", slash + 1);
                int len = snprintf(it->gang, sizeof it->gang, "%s/other:", p->ns);
                if (len > 0 && (size_t)len < sizeof it->gang)
                    memcpy(it->gang + len, group, strnlen(group, sizeof it->gang - (size_t)len - 1) + 1);
                it->gang[sizeof it->gang - 1] = '\0';
            }
        }
        it->pod = p;
        it->node = on;
        it->rank = s_rank(p);
    }
    qsort(b->items, (size_t)b->n_items, sizeof *b->items, s_item_cmp);
    return RF_OK;
}

/* A gang's members, as the run items[a, z) shows them. */
typedef struct {
    int64_t members, pending, nonmembers, priority;
    const char *unsupported, *unsupported_pod;
} s_census_t;

static void s_census(const s_build_t *b, int32_t a, int32_t z, s_census_t *c)
{
    *c = (s_census_t){.priority = INT64_MIN};
    for (int32_t i = a; i < z; i++) {
        const rf__kpod_t *p = b->items[i].pod;
        if (p->deleting || p->gated) {
            c->nonmembers++;
            continue;
        }
        c->members++;
        if (!b->items[i].node)
            c->pending++;
        if (p->unsupported && !b->items[i].node && !c->unsupported) {
            c->unsupported = p->unsupported;
            c->unsupported_pod = p->name;
        }
        if (p->priority > c->priority)
            c->priority = p->priority;
    }
    if (c->priority == INT64_MIN)
        c->priority = 0;
}

/* The gang's size (`need`), and its state when that alone decides it (a
 * missing PodGroup waits; a Kueue group without its total is refused).
 * Returns false when the gang is not in the plan at all (waiting for its
 * PodGroup: nothing to tell, no pod sets). */
static bool s_size(const s_build_t *b, rf__pgang_t *g, int32_t a, int32_t z, const s_census_t *c, int64_t *need)
{
    const rf__kpod_t *first = b->items[a].pod;
    bool single = strstr(b->items[a].gang, "/pod:") != NULL;
    const char *pg_label = rf__kvs_get(&first->labels, RF_LABEL_POD_GROUP);
    *need = 1;
    if (!single && pg_label && *pg_label) {
        char key[512];
        snprintf(key, sizeof key, "%s/%s", first->ns, pg_label);
        const rf__kpodgroup_t *pg = rf__cache_get(b->cache, RF_KIND_PODGROUP, key);
        if (!pg) {
            g->state = RF_GANG_WAITING;
            g->why = s_strdupf("PodGroup %s does not exist (yet)", key);
            return false;
        }
        *need = pg->min_member > 0 ? pg->min_member : c->members;
    } else if (!single) {
        const char *tc = NULL;
        for (int32_t i = a; i < z && !tc; i++)
            tc = rf__kvs_get(&b->items[i].pod->annotations, RF_ANN_KUEUE_TOTAL);
        char *end = NULL;
        errno = 0;
        long long v = tc ? strtoll(tc, &end, 10) : -1;
        if (!tc || errno || *end || v <= 0) {
            g->state = RF_GANG_REFUSED;
            g->why = s_strdupf("pod group %s: annotation %s is missing or not a positive integer", g->name,
                               RF_ANN_KUEUE_TOTAL);
            v = c->members;
        }
        *need = v;
    }
    return true;
}

/* The gang's state from its size, the caller's holds and what it uses (a
 * state already decided, REFUSED, stays). */
static void s_state(const s_build_t *b, rf__pgang_t *g, const s_census_t *c, int64_t need)
{
    for (int r = 0; r < b->n_refused && g->state == RF_GANG_SENT; r++)
        if (strcmp(b->refused[r], g->name) == 0) {
            g->state = RF_GANG_REFUSED;
            g->why = strdup(b->refused_why[r]);
        }
    if (g->state != RF_GANG_SENT) /* forced: its pending members are still collected, to be told */
        return;
    if (b->skip && b->skip(b->ctx, g->name)) {
        g->state = RF_GANG_HELD;
    } else if (c->members < need) {
        g->state = RF_GANG_WAITING;
        g->why = s_strdupf("waiting for the gang's pods: %lld of %lld are members%s", (long long)c->members,
                           (long long)need, c->nonmembers ? " (others are gated or being deleted)" : "");
    } else if (c->unsupported) {
        g->state = RF_GANG_REFUSED;
        g->why = s_strdupf("pod %s uses what rackfit cannot express: %s", c->unsupported_pod, c->unsupported);
    }
}

/* Refuse a gang being planned (the first reason stands). */
static void s_refuse(rf__pgang_t *g, char *why)
{
    if (g->state == RF_GANG_SENT) {
        g->state = RF_GANG_REFUSED;
        g->why = why;
    } else {
        free(why);
    }
}

/* The pod set's name: its role label, else set-N; unique in the gang. */
static char *s_set_name(const rf__pgang_t *g, const rf__kpod_t *p)
{
    const char *role = NULL;
    for (int r = 0; rf__role_labels[r] && !role; r++)
        role = rf__kvs_get(&p->labels, rf__role_labels[r]);
    char *name = role ? strdup(role) : s_strdupf("set-%d", g->n_sets - 1);
    for (int32_t q = 0; name && q < g->n_sets - 1; q++)
        if (strcmp(g->sets[q].name, name) == 0) {
            char *renamed = s_strdupf("%s-%d", name, g->n_sets - 1);
            free(name);
            return renamed;
        }
    return name;
}

/* Members of items[i, j) (one spec): pending ones into set->pending, bound
 * ones into ps->bound, ranks in order; the gang waits when a member is bound
 * to a node the watcher does not know. */
static rf_status s_members(const s_build_t *b, rf__pgang_t *g, rf__gset_t *set, rf__pset_spec_t *ps, int32_t i,
                           int32_t j, rf_error_t *err)
{
    set->pending = calloc((size_t)(j - i), sizeof *set->pending);
    ps->bound = calloc((size_t)(j - i), sizeof *ps->bound);
    if (!set->pending || !ps->bound)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    int64_t rank = 0;
    for (int32_t k = i; k < j; k++) {
        const rf__kpod_t *q = b->items[k].pod;
        if (q->deleting || q->gated)
            continue;
        int64_t my_rank = rank++;
        set->count++;
        if (!b->items[k].node) {
            rf__member_t *m = &set->pending[set->n_pending++];
            *m = (rf__member_t){.ns = strdup(q->ns), .name = strdup(q->name), .uid = strdup(q->uid), .rank = my_rank};
            if (!m->ns || !m->name || !m->uid)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            continue;
        }
        if (s_node_index(b->spec.nodes, b->spec.n_nodes, b->items[k].node) < 0 && g->state == RF_GANG_SENT) {
            g->state = RF_GANG_WAITING;
            g->why =
                s_strdupf("pod %s is bound to node %s, which the watcher does not know", q->name, b->items[k].node);
        }
        ps->bound[ps->n_bound++] = (rf__pbound_t){.node = b->items[k].node, .rank = my_rank};
    }
    qsort(ps->bound, (size_t)ps->n_bound, sizeof *ps->bound, s_bound_cmp);
    return RF_OK;
}

/* Topology and slices from Kueue's annotations on the pod set's spec. */
static void s_topology(const s_build_t *b, rf__pgang_t *g, const rf__gset_t *set, rf__pset_spec_t *ps)
{
    const rf__kpod_t *p = ps->pod;
    const char *req = rf__kvs_get(&p->annotations, RF_ANN_REQUIRED);
    const char *pref = rf__kvs_get(&p->annotations, RF_ANN_PREFERRED);
    const char *sreq = rf__kvs_get(&p->annotations, RF_ANN_SLICE_REQUIRED);
    const char *ssize = rf__kvs_get(&p->annotations, RF_ANN_SLICE_SIZE);
    int32_t lreq = req ? s_level(b->o, req) : -1, lpref = pref ? s_level(b->o, pref) : -1;
    if ((req && lreq < 0) || (sreq && s_level(b->o, sreq) < 0)) {
        s_refuse(g, s_strdupf("topology level %s is not one of the watcher's levels", req && lreq < 0 ? req : sreq));
        return;
    }
    if (lreq >= 0 && lpref >= 0 && lpref < lreq)
        lpref = -1; /* a preferred level coarser than the required one adds nothing */
    ps->required = lreq >= 0 ? req : NULL;
    ps->preferred = lpref >= 0 ? pref : NULL;
    if (!sreq)
        return;
    char *end = NULL;
    errno = 0;
    long long slice = ssize ? strtoll(ssize, &end, 10) : 0;
    if (!ssize || errno || *end || slice <= 0 || set->count % slice != 0) {
        s_refuse(g, s_strdupf("pod set %s: slice size %s does not divide its %lld pods", set->name,
                              ssize ? ssize : "(missing)", (long long)set->count));
        return;
    }
    ps->slice = slice;
    ps->slice_level = sreq;
}

/* Pod sets: runs of equal spec among the gang's items[a, z). */
static rf_status s_sets(s_build_t *b, rf__pgang_t *g, rf__pgang_spec_t *gs, int32_t a, int32_t z, rf_error_t *err)
{
    int32_t n = 0;
    for (int32_t i = a; i < z; i++)
        if (i == a || strcmp(b->items[i].pod->sig, b->items[i - 1].pod->sig) != 0)
            n++;
    g->sets = calloc((size_t)n, sizeof *g->sets);
    gs->sets = calloc((size_t)n, sizeof *gs->sets);
    if (!g->sets || !gs->sets)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t i = a; i < z;) {
        int32_t j = i;
        bool any_member = false;
        while (j < z && strcmp(b->items[j].pod->sig, b->items[i].pod->sig) == 0) {
            any_member |= !b->items[j].pod->deleting && !b->items[j].pod->gated;
            j++;
        }
        if (any_member) { /* only pods being deleted or gated: not a pod set (it would have count 0) */
            rf__gset_t *set = &g->sets[g->n_sets++];
            rf__pset_spec_t *ps = &gs->sets[g->n_sets - 1];
            ps->pod = b->items[i].pod;
            if (!(set->name = s_set_name(g, ps->pod)))
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            rf_status rc = s_members(b, g, set, ps, i, j, err);
            if (rc != RF_OK)
                return rc;
            s_topology(b, g, set, ps);
            set->slice = ps->slice;
        }
        i = j;
    }
    return RF_OK;
}

/* min_count: a minMember below the member count lowers the largest pod set's (whole slices). */
static void s_min_counts(const rf__pgang_t *g, rf__pgang_spec_t *gs, int64_t need)
{
    int64_t total = 0, largest = -1;
    int32_t at = -1;
    for (int32_t s = 0; s < g->n_sets; s++) {
        gs->sets[s].min_count = g->sets[s].count;
        total += g->sets[s].count;
        if (g->sets[s].count > largest) {
            largest = g->sets[s].count;
            at = s;
        }
    }
    if (at < 0 || need >= total)
        return;
    int64_t mc = g->sets[at].count - (total - need);
    if (mc < 0)
        mc = 0;
    int64_t sl = g->sets[at].slice;
    if (sl > 0 && mc % sl)
        mc += sl - mc % sl;
    gs->sets[at].min_count = mc;
}

static int s_str_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A running pod set: members of items[i, j), counted per node. */
static rf_status s_run_set(const s_build_t *b, rf__prun_set_t *rs, int32_t i, int32_t j, rf_error_t *err)
{
    const char **nodes = calloc((size_t)(j - i) + 1, sizeof *nodes);
    rs->at = calloc((size_t)(j - i) + 1, sizeof *rs->at);
    if (!nodes || !rs->at) {
        free(nodes);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    rs->pod = b->items[i].pod;
    for (int32_t k = i; k < j; k++)
        nodes[k - i] = b->items[k].node;
    qsort(nodes, (size_t)(j - i), sizeof *nodes, s_str_cmp);
    for (int32_t k = 0; k < j - i; k++) {
        if (k == 0 || strcmp(nodes[k], nodes[k - 1]) != 0)
            rs->at[rs->n_at++] = (rf__pbound_t){.node = nodes[k]};
        rs->at[rs->n_at - 1].rank++;
    }
    free(nodes);
    return RF_OK;
}

/* Why a running gang may not be preempted for its PodDisruptionBudgets. */
typedef struct {
    const rf__kpdb_t *pdb;   /* the budget that forbids it */
    const rf__kpdb_t *other; /* a second budget selecting `pod` too, or NULL */
    const char *pod;         /* with `other`: the pod both select */
    int64_t n;               /* without: how many of the gang's pods `pdb` selects */
} s_pdb_why_t;

static int s_pdb_cmp(const void *x, const void *y)
{
    return strcmp((*(const rf__kpdb_t *const *)x)->ns, (*(const rf__kpdb_t *const *)y)->ns);
}

/* The first of pdbs[0, n) (sorted by namespace) in namespace `ns`, or n. */
static int32_t s_pdb_first(const rf__kpdb_t *const *pdbs, int32_t n, const char *ns, bool after)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(pdbs[mid]->ns, ns);
        if (c < 0 || (after && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Would evicting the run items[a, z) whole break a PodDisruptionBudget? The
 * Eviction API takes one disruption from a pod's budget per pod, and refuses a
 * pod that more than one budget selects (500): so a gang is safe to preempt
 * only when every budget selects at most `disruptionsAllowed` of its pods and
 * no pod has two. One pass over (pod x the budgets of its namespace), counting
 * per budget in counts[] (zero on entry and on return). Budgets shared by two
 * victims of one round are not summed: the second's eviction is refused
 * (429), and victims.c solves the round again without it. */
static bool s_pdb_forbids(const s_build_t *b, const rf__kpdb_t *const *pdbs, int32_t n_pdbs, int64_t *counts, int32_t a,
                          int32_t z, s_pdb_why_t *why)
{
    int32_t lo_all = n_pdbs, hi_all = 0;
    bool bad = false;
    for (int32_t i = a; i < z && !bad; i++) {
        const rf__kpod_t *pod = b->items[i].pod;
        int32_t lo = s_pdb_first(pdbs, n_pdbs, pod->ns, false), hi = s_pdb_first(pdbs, n_pdbs, pod->ns, true);
        lo_all = lo < lo_all ? lo : lo_all;
        hi_all = hi > hi_all ? hi : hi_all;
        int32_t first = -1;
        for (int32_t d = lo; d < hi; d++) {
            if (!rf__kpdb_selects(pdbs[d], pod))
                continue;
            counts[d]++;
            if (first >= 0) {
                *why = (s_pdb_why_t){.pdb = pdbs[first], .other = pdbs[d], .pod = pod->name};
                bad = true;
                break;
            }
            first = d;
        }
    }
    for (int32_t d = lo_all; d < hi_all; d++) {
        if (!bad && counts[d] > pdbs[d]->allowed) {
            *why = (s_pdb_why_t){.pdb = pdbs[d], .n = counts[d]};
            bad = true;
        }
        counts[d] = 0;
    }
    return bad;
}

/* The running gangs left after pruning that a budget protects: sent as not preemptible. */
static rf_status s_pdb_protect(s_build_t *b, rf__plan_t *plan, rf_error_t *err)
{
    const rf__kmap_t *dm = &b->cache->maps[RF_KIND_PDB];
    bool any = false;
    for (int32_t r = 0; r < plan->n_running && !any; r++)
        any = b->spec.running[r].preemptible;
    if (!any || dm->n == 0)
        return RF_OK;
    const rf__kpdb_t **pdbs = malloc((size_t)dm->n * sizeof *pdbs);
    int64_t *counts = calloc((size_t)dm->n, sizeof *counts);
    if (!pdbs || !counts) {
        free(pdbs);
        free(counts);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    for (int32_t d = 0; d < dm->n; d++)
        pdbs[d] = dm->items[d].obj;
    qsort(pdbs, (size_t)dm->n, sizeof *pdbs, s_pdb_cmp);
    for (int32_t r = 0; r < plan->n_running; r++) {
        rf__prun_spec_t *rs = &b->spec.running[r];
        s_pdb_why_t why;
        if (!rs->preemptible || !s_pdb_forbids(b, pdbs, dm->n, counts, b->run_a[r], b->run_z[r], &why))
            continue;
        rs->preemptible = false;
        if (why.other)
            rf__log(RF_LOG_DEBUG,
                    "gang %s: not preemptible: its pod %s is selected by two PodDisruptionBudgets, %s/%s and %s/%s "
                    "(the Eviction API refuses such a pod)",
                    plan->running[r].name, why.pod, why.pdb->ns, why.pdb->name, why.other->ns, why.other->name);
        else
            rf__log(RF_LOG_DEBUG,
                    "gang %s: not preemptible: evicting its %d pods would take %lld disruptions from the "
                    "PodDisruptionBudget %s/%s (%lld allowed)",
                    plan->running[r].name, plan->running[r].n_pods, (long long)why.n, why.pdb->ns, why.pdb->name,
                    (long long)why.pdb->allowed);
    }
    free(pdbs);
    free(counts);
    return RF_OK;
}

/* A gang of ours bound whole and running (every member Running on a known
 * node, none being deleted, not held): a `running` gang the solver may
 * preempt. Not one: RF_OK and nothing added. */
static rf_status s_running(s_build_t *b, rf__plan_t *plan, int32_t a, int32_t z, const s_census_t *c, rf_error_t *err)
{
    if (!b->o->preemption || c->members == 0 || c->nonmembers > 0 || (b->skip && b->skip(b->ctx, b->items[a].gang)))
        return RF_OK;
    for (int32_t i = a; i < z; i++)
        if (strcmp(b->items[i].pod->phase, "Running") != 0 || !b->items[i].pod->node_name ||
            s_node_index(b->spec.nodes, b->spec.n_nodes, b->items[i].node) < 0)
            return RF_OK;
    b->run_a[plan->n_running] = a;
    b->run_z[plan->n_running] = z;
    rf__prun_t *r = &plan->running[plan->n_running];
    rf__prun_spec_t *rs = &b->spec.running[plan->n_running++];
    const rf__kpod_t *first = b->items[a].pod;
    r->name = strdup(b->items[a].gang);
    r->priority = c->priority;
    r->pods = calloc((size_t)(z - a), sizeof *r->pods);
    rs->sets = calloc((size_t)(z - a), sizeof *rs->sets);
    if (!r->name || !r->pods || !rs->sets)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    const char *bw = rf__kvs_get(&first->annotations, RF_ANN_BANDWIDTH);
    rs->bandwidth = bw ? strtod(bw, NULL) : 1.0;
    if (!(rs->bandwidth > 0) || !isfinite(rs->bandwidth))
        rs->bandwidth = 1.0;
    /* an eviction of it was refused (a PodDisruptionBudget): solved again without it */
    rs->preemptible = !(b->o->unevictable && b->o->unevictable(b->o->unevictable_ctx, r->name));
    for (int32_t i = a; i < z; i++) {
        const char *pe = rf__kvs_get(&b->items[i].pod->annotations, RF_ANN_PREEMPTIBLE);
        if (pe && strcmp(pe, "false") == 0)
            rs->preemptible = false;
        rf__member_t *m = &r->pods[r->n_pods++];
        const rf__kpod_t *q = b->items[i].pod;
        *m = (rf__member_t){.ns = strdup(q->ns), .name = strdup(q->name), .uid = strdup(q->uid)};
        if (!m->ns || !m->name || !m->uid)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    /* its PodDisruptionBudgets: s_pdb_protect, for the gangs s_running_prune keeps */
    for (int32_t i = a; i < z;) {
        int32_t j = i;
        while (j < z && strcmp(b->items[j].pod->sig, b->items[i].pod->sig) == 0)
            j++;
        rf__prun_set_t *set = &rs->sets[rs->n_sets++];
        rf_status rc = s_run_set(b, set, i, j, err);
        if (rc != RF_OK)
            return rc;
        i = j;
    }
    return RF_OK;
}

/* Keep only the running gangs some sent gang outranks: no other can be preempted. */
static void s_running_prune(s_build_t *b, rf__plan_t *plan)
{
    int64_t top = INT64_MIN;
    for (int32_t j = 0; j < plan->n_sent; j++)
        if (b->spec.gangs[plan->sent[j]].priority > top)
            top = b->spec.gangs[plan->sent[j]].priority;
    int32_t keep = 0;
    for (int32_t r = 0; r < plan->n_running; r++) {
        if (plan->running[r].priority < top) {
            plan->running[keep] = plan->running[r];
            b->run_a[keep] = b->run_a[r];
            b->run_z[keep] = b->run_z[r];
            b->spec.running[keep++] = b->spec.running[r];
            continue;
        }
        s_run_fini(&plan->running[r]);
        for (int32_t s = 0; s < b->spec.running[r].n_sets; s++)
            free(b->spec.running[r].sets[s].at);
        free(b->spec.running[r].sets);
    }
    plan->n_running = keep;
}

/* One gang: the run items[a, z). */
static rf_status s_gang(s_build_t *b, rf__plan_t *plan, int32_t a, int32_t z, rf_error_t *err)
{
    s_census_t c;
    s_census(b, a, z, &c);
    if (c.pending == 0) /* nothing to place (a single pod that is bound, or a gang all bound): maybe a victim */
        return s_running(b, plan, a, z, &c, err);
    rf__pgang_t *g = &plan->gangs[plan->n_gangs];
    rf__pgang_spec_t *gs = &b->spec.gangs[plan->n_gangs++];
    g->name = strdup(b->items[a].gang);
    g->ns = strdup(b->items[a].pod->ns);
    g->n_pending = c.pending;
    if (!g->name || !g->ns)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    int64_t need;
    if (!s_size(b, g, a, z, &c, &need))
        return RF_OK;
    s_state(b, g, &c, need);
    const char *bw = rf__kvs_get(&b->items[a].pod->annotations, RF_ANN_BANDWIDTH);
    gs->bandwidth = bw ? strtod(bw, NULL) : 1.0;
    if (!(gs->bandwidth > 0) || !isfinite(gs->bandwidth))
        gs->bandwidth = 1.0;
    gs->priority = c.priority;
    rf_status rc = s_sets(b, g, gs, a, z, err);
    if (rc != RF_OK)
        return rc;
    s_min_counts(g, gs, need);
    if (g->state == RF_GANG_SENT)
        plan->sent[plan->n_sent++] = plan->n_gangs - 1;
    return RF_OK;
}

/* Decide every gang (plan->gangs: states, pod sets, pending members), then
 * write the problem of the sent ones. `refused` (n_refused names with
 * messages) forces those gangs to REFUSED. */
static rf_status s_build(s_build_t *b, rf__plan_t *plan, rf_error_t *err)
{
    b->spec.opts = b->o;
    rf_status rc = s_usage(b, err);
    if (rc != RF_OK)
        return rc;
    plan->gangs = calloc((size_t)b->n_items + 1, sizeof *plan->gangs);
    plan->sent = calloc((size_t)b->n_items + 1, sizeof *plan->sent);
    b->spec.gangs = calloc((size_t)b->n_items + 1, sizeof *b->spec.gangs);
    plan->running = calloc((size_t)b->n_items + 1, sizeof *plan->running);
    b->spec.running = calloc((size_t)b->n_items + 1, sizeof *b->spec.running);
    b->run_a = calloc((size_t)b->n_items + 1, sizeof *b->run_a);
    b->run_z = calloc((size_t)b->n_items + 1, sizeof *b->run_z);
    if (!plan->gangs || !plan->sent || !b->spec.gangs || !plan->running || !b->spec.running || !b->run_a || !b->run_z)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t a = 0; a < b->n_items;) {
        int32_t z = a;
        while (z < b->n_items && strcmp(b->items[z].gang, b->items[a].gang) == 0)
            z++;
        if ((rc = s_gang(b, plan, a, z, err)) != RF_OK)
            return rc;
        a = z;
    }
    s_running_prune(b, plan);
    if ((rc = s_pdb_protect(b, plan, err)) != RF_OK)
        return rc;
    return plan->n_sent ? rf__plan_write(&b->spec, plan, err) : RF_OK;
}

rf_status rf__plan_build(rf__cache_t *cache, const rf__gang_opts_t *opts, bool (*skip)(void *, const char *), void *ctx,
                         rf__plan_t *out, rf_error_t *err)
{
    enum { S_MAX_REBUILDS = 16 };
    char *refused[S_MAX_REBUILDS] = {0}, *why[S_MAX_REBUILDS] = {0};
    int n_refused = 0;
    rf_status rc;
    memset(out, 0, sizeof *out);
    for (;;) {
        s_build_t b = {.cache = cache,
                       .o = opts,
                       .skip = skip,
                       .ctx = ctx,
                       .refused = refused,
                       .refused_why = why,
                       .n_refused = n_refused};
        rc = s_build(&b, out, err);
        s_build_fini(&b, out);
        if (rc != RF_OK)
            break;
        if (!out->json)
            break;
        /* Read it back with librackfit's reader: a gang it rejects is refused alone. */
        rf_problem_t *prob = NULL;
        rf_error_t perr;
        rf_error_clear(&perr);
        rc = rf_problem_from_json(out->json, out->len, NULL, &prob, &perr);
        rf_problem_destroy(&prob);
        if (rc == RF_OK)
            break;
        int j = -1;
        if (strncmp(perr.path, "gangs[", 6) == 0)
            j = atoi(perr.path + 6);
        if (j < 0 || j >= out->n_sent || n_refused == S_MAX_REBUILDS) {
            rc = rf_error_set(err, rc, perr.path, "the problem built from the cluster is invalid: %s", perr.message);
            break;
        }
        refused[n_refused] = strdup(out->gangs[out->sent[j]].name);
        why[n_refused] = s_strdupf("the gang breaks the placement contract: %s: %s", perr.path, perr.message);
        n_refused++;
        rf__plan_fini(out);
    }
    for (int i = 0; i < n_refused; i++) {
        free(refused[i]);
        free(why[i]);
    }
    return rc;
}
