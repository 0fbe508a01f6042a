/* watcher/plan_json.c: a decided plan written once as the contract's JSON (see plan.h). */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "rackfit/quantity.h"

/* `"key":` then an integer, or a string (escaped). */
static void s_kint(rf__jw_t *w, const char *key, long long v)
{
    rf__jw_key(w, key);
    rf__jw_printf(w, "%lld", v);
}

static void s_kstr(rf__jw_t *w, const char *key, const char *v)
{
    rf__jw_key(w, key);
    rf__jw_str(w, v);
}

static void s_res(rf__jw_t *w, const char *key, const rf__res_t *r, int64_t pods)
{
    rf__jw_key(w, key);
    rf__jw_puts(w, "{");
    for (int32_t i = 0; i < r->n; i++) {
        if (strcmp(r->names[i], "pods") == 0)
            continue;
        rf__jw_key(w, r->names[i]);
        if (rf_qty_kind_of(r->names[i]) == RF_QTY_MILLI)
            rf__jw_printf(w, "\"%lldm\"", (long long)r->vals[i]);
        else
            rf__jw_printf(w, "%lld", (long long)r->vals[i]);
    }
    if (pods >= 0) {
        s_kint(w, "pods", pods);
    }
    rf__jw_puts(w, "}");
}

/* The distinct required node affinities of the sent gangs' pod sets, in order of need. */
typedef struct {
    const rf__kpod_t **pods;
    int32_t n;
} s_affs_t;

static const char *s_aff_key(const rf__kpod_t *p)
{
    return p->affinity ? strstr(p->sig, "a:(") : NULL;
}

static int32_t s_aff_index(s_affs_t *a, const rf__kpod_t *p)
{
    const char *key = s_aff_key(p);
    if (!key)
        return -1;
    for (int32_t i = 0; i < a->n; i++)
        if (strcmp(s_aff_key(a->pods[i]), key) == 0)
            return i;
    a->pods[a->n] = p;
    return a->n++;
}

/* `key: [...]`: taints (a node's: key and effect always there) or
 * tolerations (a pod's: an operator, an empty key or effect meaning any). */
static void s_taints(rf__jw_t *w, const char *key, const rf__taint_t *t, int32_t n, bool tolerations)
{
    rf__jw_key(w, key);
    rf__jw_puts(w, "[");
    for (int32_t k = 0; k < n; k++) {
        rf__jw_sep(w);
        rf__jw_puts(w, "{");
        if (*t[k].key || !tolerations) {
            s_kstr(w, "key", t[k].key);
        }
        if (tolerations) {
            s_kstr(w, "operator", t[k].op);
        }
        if (*t[k].value) {
            s_kstr(w, "value", t[k].value);
        }
        if (*t[k].effect || !tolerations) {
            s_kstr(w, "effect", t[k].effect);
        }
        rf__jw_puts(w, "}");
    }
    rf__jw_puts(w, "]");
}

/* One entry per node, ranks ascending (the spec's bound list is sorted so). */
static void s_bound(rf__jw_t *w, const rf__pset_spec_t *ps)
{
    rf__jw_key(w, "bound");
    rf__jw_puts(w, "[");
    for (int32_t k = 0; k < ps->n_bound; k++) {
        if (k == 0 || strcmp(ps->bound[k].node, ps->bound[k - 1].node) != 0) {
            if (k)
                rf__jw_puts(w, "]}");
            rf__jw_sep(w);
            rf__jw_puts(w, "{\"node\":");
            rf__jw_str(w, ps->bound[k].node);
            rf__jw_puts(w, ",\"ranks\":[");
        }
        rf__jw_sep(w);
        rf__jw_printf(w, "%lld", (long long)ps->bound[k].rank);
    }
    if (ps->n_bound)
        rf__jw_puts(w, "]}");
    rf__jw_puts(w, "]");
}

static void s_pod_set(rf__jw_t *w, const rf__gset_t *set, const rf__pset_spec_t *ps, s_affs_t *affs)
{
    const rf__kpod_t *p = ps->pod;
    rf__jw_sep(w);
    rf__jw_puts(w, "{");
    s_kstr(w, "name", set->name);
    s_kint(w, "count", set->count);
    s_kint(w, "min_count", ps->min_count);
    s_res(w, "requests", &p->requests, -1);
    rf__jw_key(w, "node_selector");
    rf__jw_puts(w, "{");
    for (int32_t k = 0; k < p->node_selector.n; k++) {
        rf__jw_key(w, p->node_selector.v[k].key);
        rf__jw_str(w, p->node_selector.v[k].value);
    }
    int32_t ai = s_aff_index(affs, p);
    if (ai >= 0) {
        char lk[64];
        snprintf(lk, sizeof lk, RF_AFFINITY_LABEL_PREFIX "%d", ai);
        rf__jw_key(w, lk);
        rf__jw_str(w, "true");
    }
    rf__jw_puts(w, "}");
    s_taints(w, "tolerations", p->tols, p->n_tols, true);
    if (ps->required || ps->preferred) {
        rf__jw_key(w, "topology");
        rf__jw_puts(w, "{");
        if (ps->required) {
            s_kstr(w, "required", ps->required);
        }
        if (ps->preferred) {
            s_kstr(w, "preferred", ps->preferred);
        }
        rf__jw_puts(w, "}");
    }
    if (ps->slice > 0) {
        rf__jw_key(w, "slice");
        rf__jw_printf(w, "{\"size\":%lld,\"required\":", (long long)ps->slice);
        rf__jw_str(w, ps->slice_level);
        rf__jw_puts(w, "}");
    }
    s_bound(w, ps);
    rf__jw_puts(w, "}");
}

static void s_gangs(rf__jw_t *w, const rf__plan_spec_t *spec, const rf__plan_t *plan, s_affs_t *affs)
{
    rf__jw_key(w, "gangs");
    rf__jw_puts(w, "[");
    for (int32_t j = 0; j < plan->n_sent; j++) {
        const rf__pgang_t *g = &plan->gangs[plan->sent[j]];
        const rf__pgang_spec_t *gs = &spec->gangs[plan->sent[j]];
        rf__jw_sep(w);
        rf__jw_puts(w, "{");
        s_kstr(w, "name", g->name);
        s_kint(w, "priority", gs->priority);
        rf__jw_key(w, "bandwidth");
        rf__jw_printf(w, "%.17g", gs->bandwidth);
        rf__jw_key(w, "pod_sets");
        rf__jw_puts(w, "[");
        for (int32_t s = 0; s < g->n_sets; s++)
            s_pod_set(w, &g->sets[s], &gs->sets[s], affs);
        rf__jw_puts(w, "]}");
    }
    rf__jw_puts(w, "]");
}

/* The running gangs the solver may preempt: where they are, whole. */
static void s_running(rf__jw_t *w, const rf__plan_spec_t *spec, const rf__plan_t *plan)
{
    rf__jw_key(w, "running");
    rf__jw_puts(w, "[");
    for (int32_t r = 0; r < plan->n_running; r++) {
        const rf__prun_spec_t *rs = &spec->running[r];
        rf__jw_sep(w);
        rf__jw_puts(w, "{");
        s_kstr(w, "name", plan->running[r].name);
        s_kint(w, "priority", plan->running[r].priority);
        rf__jw_key(w, "bandwidth");
        rf__jw_printf(w, "%.17g", rs->bandwidth);
        rf__jw_key(w, "preemptible");
        rf__jw_puts(w, rs->preemptible ? "true" : "false");
        rf__jw_key(w, "pod_sets");
        rf__jw_puts(w, "[");
        for (int32_t s = 0; s < rs->n_sets; s++) {
            rf__jw_sep(w);
            rf__jw_printf(w, "{\"name\":\"set-%d\"", s);
            s_res(w, "requests", &rs->sets[s].pod->requests, -1);
            rf__jw_key(w, "placements");
            rf__jw_puts(w, "[");
            for (int32_t k = 0; k < rs->sets[s].n_at; k++) {
                rf__jw_sep(w);
                rf__jw_puts(w, "{\"node\":");
                rf__jw_str(w, rs->sets[s].at[k].node);
                rf__jw_printf(w, ",\"count\":%lld}", (long long)rs->sets[s].at[k].rank);
            }
            rf__jw_puts(w, "]}");
        }
        rf__jw_puts(w, "]}");
    }
    rf__jw_puts(w, "]");
}

static void s_node(rf__jw_t *w, const rf__plan_spec_t *spec, int32_t i, const s_affs_t *affs)
{
    const rf__knode_t *n = spec->nodes[i];
    rf__jw_sep(w);
    rf__jw_puts(w, "{");
    s_kstr(w, "name", n->name);
    rf__jw_key(w, "labels");
    rf__jw_puts(w, "{");
    for (int32_t k = 0; k < n->labels.n; k++) {
        if (strncmp(n->labels.v[k].key, RF_AFFINITY_LABEL_PREFIX, strlen(RF_AFFINITY_LABEL_PREFIX)) == 0)
            continue; /* ours to set */
        rf__jw_key(w, n->labels.v[k].key);
        rf__jw_str(w, n->labels.v[k].value);
    }
    for (int32_t ai = 0; ai < affs->n; ai++)
        if (rf__kpod_affinity_matches(affs->pods[ai], n)) {
            char lk[64];
            snprintf(lk, sizeof lk, RF_AFFINITY_LABEL_PREFIX "%d", ai);
            rf__jw_key(w, lk);
            rf__jw_str(w, "true");
        }
    rf__jw_puts(w, "}");
    int64_t podcap = -1;
    for (int32_t k = 0; k < n->alloc.n; k++)
        if (strcmp(n->alloc.names[k], "pods") == 0)
            podcap = n->alloc.vals[k];
    s_res(w, "allocatable", &n->alloc, podcap);
    s_res(w, "used", &spec->used[i], spec->used_pods[i]);
    s_taints(w, "taints", n->taints, n->n_taints, false);
    rf__jw_key(w, "unschedulable");
    rf__jw_puts(w, n->unschedulable || !n->ready ? "true" : "false");
    rf__jw_puts(w, "}");
}

static void s_cluster(rf__jw_t *w, const rf__plan_spec_t *spec, const s_affs_t *affs)
{
    const rf__gang_opts_t *o = spec->opts;
    rf__jw_key(w, "cluster");
    rf__jw_puts(w, "{\"levels\":[");
    for (int32_t l = 0; l < o->n_levels; l++) {
        rf__jw_sep(w);
        rf__jw_str(w, o->levels[l]);
    }
    rf__jw_puts(w, "]");
    if (o->level_costs) {
        rf__jw_key(w, "level_costs");
        rf__jw_puts(w, "[");
        for (int32_t l = 0; l < o->n_levels; l++) {
            rf__jw_sep(w);
            rf__jw_printf(w, "%.17g", o->level_costs[l]);
        }
        rf__jw_puts(w, "]");
    }
    rf__jw_key(w, "nodes");
    rf__jw_puts(w, "[");
    for (int32_t i = 0; i < spec->n_nodes; i++)
        s_node(w, spec, i, affs);
    rf__jw_puts(w, "]}");
}

rf_status rf__plan_write(const rf__plan_spec_t *spec, rf__plan_t *plan, rf_error_t *err)
{
    const rf__gang_opts_t *o = spec->opts;
    int32_t n_sets = 0;
    for (int32_t j = 0; j < plan->n_sent; j++)
        n_sets += plan->gangs[plan->sent[j]].n_sets;
    s_affs_t affs = {.pods = calloc((size_t)n_sets + 1, sizeof *affs.pods)};
    rf__jw_t gw, w;
    rf__jw_init(&gw);
    rf__jw_init(&w);
    if (!affs.pods)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    /* the gangs first: they number the affinity labels the nodes then carry */
    s_gangs(&gw, spec, plan, &affs);
    rf__jw_puts(&w, "{");
    s_cluster(&w, spec, &affs);
    rf__jw_raw(&w, ",", 1);
    rf__jw_raw(&w, gw.p ? gw.p : "", gw.len);
    if (plan->n_running)
        s_running(&w, spec, plan);
    rf__jw_key(&w, "options");
    rf__jw_puts(&w, "{");
    rf__jw_key(&w, "preemption");
    rf__jw_str(&w, o->preemption ? "lower_priority" : "never");
    rf__jw_key(&w, "mode");
    rf__jw_str(&w, o->mode ? o->mode : "auto");
    rf__jw_key(&w, "time_limit_ms");
    rf__jw_printf(&w, "%lld", (long long)(o->time_limit_ms > 0 ? o->time_limit_ms : 1000));
    if (o->value_resource) {
        rf__jw_key(&w, "value_resource");
        rf__jw_str(&w, o->value_resource);
    }
    rf__jw_puts(&w, "}}");
    bool oom = w.oom || gw.oom;
    rf__jw_fini(&gw);
    free(affs.pods);
    if (oom) {
        rf__jw_fini(&w);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    plan->json = rf__jw_take(&w, &plan->len);
    return RF_OK;
}
