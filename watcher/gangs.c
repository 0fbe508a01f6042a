/* watcher/gangs.c: gang assembly into a contract problem (see gangs.h).
 *
 * Layout: pods of ours are sorted by (gang, pod set signature, rank) so
 * that each gang, and each pod set inside it, is one run of the array. */
#include "gangs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"

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

int rf__pod_rank_cmp(const rf__kpod_t *a, const rf__kpod_t *b)
{
    int64_t ma = s_index(a, s_major_index), mb = s_index(b, s_major_index);
    if (ma != mb)
        return ma < mb ? -1 : 1;
    int64_t na = s_index(a, s_minor_index), nb = s_index(b, s_minor_index);
    if (na != nb) {
        if (na < 0 || nb < 0) /* indexed pods first */
            return na < 0 ? 1 : -1;
        return na < nb ? -1 : 1;
    }
    int c = s_natcmp(a->name, b->name);
    return c ? c : strcmp(a->name, b->name);
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
    return rf__pod_rank_cmp(a->pod, b->pod);
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

typedef struct {
    const char *node;
    int64_t rank;
} s_bound_t;

static int s_bound_cmp(const void *x, const void *y)
{
    const s_bound_t *a = x, *b = y;
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

void rf__plan_fini(rf__plan_t *plan)
{
    for (int32_t i = 0; i < plan->n_gangs; i++)
        s_gang_fini(&plan->gangs[i]);
    free(plan->gangs);
    free(plan->sent);
    free(plan->json);
    memset(plan, 0, sizeof *plan);
}

/* ---- writing quantities ---------------------------------------------------------------------------------------- */

static void s_res_json(rf__jw_t *w, const char *key, const rf__res_t *r, int64_t pods)
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
        rf__jw_key(w, "pods");
        rf__jw_printf(w, "%lld", (long long)pods);
    }
    rf__jw_puts(w, "}");
}

static int32_t s_level(const rf__gang_opts_t *o, const char *key)
{
    for (int32_t i = 0; i < o->n_levels; i++)
        if (strcmp(o->levels[i], key) == 0)
            return i;
    return -1;
}

/* ---- one build ------------------------------------------------------------------------------------------------- */

typedef struct {
    char *key; /* the affinity part of a signature */
    const rf__kpod_t *pod;
} s_aff_t;

static const char *s_aff_part(const rf__kpod_t *p)
{
    return p->affinity ? strstr(p->sig, "a:(") : NULL;
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

/* Fill plan->gangs (states, pod sets, pending members) and write the problem.
 * `refused` (n_refused names with messages) forces those gangs to REFUSED. */
static rf_status s_build(rf__cache_t *cache, const rf__gang_opts_t *o, bool (*skip)(void *, const char *), void *ctx,
                         char **refused, char **refused_why, int n_refused, rf__plan_t *plan, rf_error_t *err)
{
    rf_status rc = RF_OK;
    rf__kmap_t *nm = &cache->maps[RF_KIND_NODE], *pm = &cache->maps[RF_KIND_POD];
    int32_t n_nodes = nm->n;
    rf__knode_t **nodes = calloc((size_t)n_nodes + 1, sizeof *nodes);
    rf__res_t *used = calloc((size_t)n_nodes + 1, sizeof *used);
    int64_t *used_pods = calloc((size_t)n_nodes + 1, sizeof *used_pods);
    s_item_t *items = calloc((size_t)pm->n + 1, sizeof *items);
    s_aff_t *affs = NULL;
    int32_t n_affs = 0;
    int32_t n_items = 0;
    rf__jw_t gw; /* the gangs array */
    rf__jw_t w;
    rf__jw_init(&gw);
    rf__jw_init(&w);
    if (!nodes || !used || !used_pods || !items) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < n_nodes; i++)
        nodes[i] = nm->items[i].obj;
    qsort(nodes, (size_t)n_nodes, sizeof *nodes, s_node_cmp);

    /* Usage, and the pods of ours. */
    for (int32_t i = 0; i < pm->n; i++) {
        const rf__kpod_t *p = pm->items[i].obj;
        if (rf__kpod_terminal(p))
            continue;
        const char *on = p->node_name ? p->node_name : p->assumed_node;
        const char *charge = on;
        if (!on && p->nominated && strcmp(p->scheduler_name, o->scheduler_name) != 0)
            charge = p->nominated; /* another scheduler's preemptor holds it */
        if (charge) {
            int32_t ni = s_node_index(nodes, n_nodes, charge);
            if (ni >= 0) {
                for (int32_t r = 0; r < p->requests.n; r++)
                    if (rf__res_add(&used[ni], p->requests.names[r], p->requests.vals[r]) != RF_OK) {
                        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                        goto done;
                    }
                used_pods[ni]++;
            }
        }
        if (strcmp(p->scheduler_name, o->scheduler_name) != 0)
            continue;
        s_item_t *it = &items[n_items++];
        rf__pod_gang_name(p, it->gang, sizeof it->gang);
        it->pod = p;
        it->node = on;
    }
    qsort(items, (size_t)n_items, sizeof *items, s_item_cmp);

    /* Gangs, one run of items each. */
    plan->gangs = calloc((size_t)n_items + 1, sizeof *plan->gangs);
    plan->sent = calloc((size_t)n_items + 1, sizeof *plan->sent);
    affs = calloc((size_t)n_items + 1, sizeof *affs);
    if (!plan->gangs || !plan->sent || !affs) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    rf__jw_puts(&gw, "[");
    for (int32_t a = 0; a < n_items;) {
        int32_t b = a;
        while (b < n_items && strcmp(items[b].gang, items[a].gang) == 0)
            b++;
        const rf__kpod_t *first = items[a].pod;
        bool single = strstr(items[a].gang, "/pod:") != NULL;
        int64_t members = 0, pending = 0, nonmembers = 0;
        const char *unsupported = NULL, *unsupported_pod = NULL;
        int64_t prio = INT64_MIN;
        for (int32_t i = a; i < b; i++) {
            const rf__kpod_t *p = items[i].pod;
            if (p->deleting || p->gated) {
                nonmembers++;
                continue;
            }
            members++;
            if (!items[i].node)
                pending++;
            if (p->unsupported && !items[i].node && !unsupported) {
                unsupported = p->unsupported;
                unsupported_pod = p->name;
            }
            if (p->priority > prio)
                prio = p->priority;
        }
        if (single && (pending == 0 || members == 0)) {
            a = b;
            continue;
        }
        if (pending == 0) {
            a = b;
            continue;
        }
        rf__pgang_t *g = &plan->gangs[plan->n_gangs++];
        g->name = strdup(items[a].gang);
        g->ns = strdup(first->ns);
        g->n_pending = pending;
        if (!g->name || !g->ns) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        /* The gang's size. */
        int64_t need = 1;
        bool no_total = false; /* refused: its pending pods are still collected, to be told */
        const char *pg_label = rf__kvs_get(&first->labels, RF_LABEL_POD_GROUP);
        if (!single && pg_label && *pg_label) {
            char key[512];
            snprintf(key, sizeof key, "%s/%s", first->ns, pg_label);
            const rf__kpodgroup_t *pg = rf__cache_get(cache, RF_KIND_PODGROUP, key);
            if (!pg) {
                g->state = RF_GANG_WAITING;
                g->why = s_strdupf("PodGroup %s does not exist (yet)", key);
                a = b;
                continue;
            }
            need = pg->min_member > 0 ? pg->min_member : members;
        } else if (!single) {
            const char *tc = NULL;
            for (int32_t i = a; i < b && !tc; i++)
                tc = rf__kvs_get(&items[i].pod->annotations, RF_ANN_KUEUE_TOTAL);
            char *end = NULL;
            errno = 0;
            long long v = tc ? strtoll(tc, &end, 10) : -1;
            if (!tc || errno || *end || v <= 0) {
                g->state = RF_GANG_REFUSED;
                g->why = s_strdupf("pod group %s: annotation %s is missing or not a positive integer", items[a].gang,
                                   RF_ANN_KUEUE_TOTAL);
                no_total = true;
                v = members;
            }
            need = v;
        }
        bool forced = no_total;
        for (int r = 0; r < n_refused && !no_total; r++)
            if (strcmp(refused[r], g->name) == 0) {
                g->state = RF_GANG_REFUSED;
                g->why = strdup(refused_why[r]);
                forced = true;
            }
        if (forced) {
            /* fall through to collect the pending members (for events) */
        } else if (skip && skip(ctx, g->name)) {
            g->state = RF_GANG_HELD;
        } else if (members < need) {
            g->state = RF_GANG_WAITING;
            g->why = s_strdupf("waiting for the gang's pods: %lld of %lld are members%s", (long long)members,
                               (long long)need, nonmembers ? " (others are gated or being deleted)" : "");
        } else if (unsupported) {
            g->state = RF_GANG_REFUSED;
            g->why = s_strdupf("pod %s uses what rackfit cannot express: %s", unsupported_pod, unsupported);
        }
        /* Pod sets: runs of equal signature among members. */
        int32_t n_sets = 0;
        for (int32_t i = a; i < b; i++)
            if (i == a || strcmp(items[i].pod->sig, items[i - 1].pod->sig) != 0)
                n_sets++;
        g->sets = calloc((size_t)n_sets, sizeof *g->sets);
        if (!g->sets) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        bool sent = g->state == RF_GANG_SENT;
        rf__jw_t pw; /* this gang's JSON, appended to gw only if it is sent */
        rf__jw_init(&pw);
        const char *bw = rf__kvs_get(&first->annotations, RF_ANN_BANDWIDTH);
        double bandwidth = bw ? strtod(bw, NULL) : 1.0;
        if (!(bandwidth > 0) || !isfinite(bandwidth))
            bandwidth = 1.0;
        rf__jw_puts(&pw, "{");
        rf__jw_key(&pw, "name");
        rf__jw_str(&pw, g->name);
        rf__jw_key(&pw, "priority");
        rf__jw_printf(&pw, "%lld", (long long)(prio == INT64_MIN ? 0 : prio));
        rf__jw_key(&pw, "bandwidth");
        rf__jw_printf(&pw, "%.17g", bandwidth);
        rf__jw_key(&pw, "pod_sets");
        rf__jw_puts(&pw, "[");
        int64_t largest = -1;
        int32_t largest_set = -1;
        int64_t total = 0;
        for (int32_t i = a; i < b;) {
            int32_t j = i;
            bool any_member = false;
            while (j < b && strcmp(items[j].pod->sig, items[i].pod->sig) == 0) {
                any_member |= !items[j].pod->deleting && !items[j].pod->gated;
                j++;
            }
            if (!any_member) { /* only pods being deleted or gated: not a pod set (it would have count 0) */
                i = j;
                continue;
            }
            const rf__kpod_t *p = items[i].pod;
            rf__gset_t *set = &g->sets[g->n_sets++];
            /* name: the role label, else the pod set's first pod name */
            const char *role = NULL;
            for (int r = 0; rf__role_labels[r] && !role; r++)
                role = rf__kvs_get(&p->labels, rf__role_labels[r]);
            set->name = role ? strdup(role) : s_strdupf("set-%d", g->n_sets - 1);
            for (int32_t q = 0; set->name && q < g->n_sets - 1; q++)
                if (strcmp(g->sets[q].name, set->name) == 0) {
                    char *renamed = s_strdupf("%s-%d", set->name, g->n_sets - 1);
                    free(set->name);
                    set->name = renamed;
                    break;
                }
            set->pending = calloc((size_t)(j - i), sizeof *set->pending);
            if (!set->name || !set->pending) {
                rf__jw_fini(&pw);
                rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto done;
            }
            int64_t rank = 0, count = 0;
            int32_t n_bound = 0;
            s_bound_t *bound = calloc((size_t)(j - i), sizeof *bound);
            if (!bound) {
                rf__jw_fini(&pw);
                rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto done;
            }
            rf__jw_t bw_json;
            rf__jw_init(&bw_json);
            rf__jw_puts(&bw_json, "[");
            /* bound members, grouped by node in the order met */
            for (int32_t k = i; k < j; k++) {
                const rf__kpod_t *q = items[k].pod;
                if (q->deleting || q->gated)
                    continue;
                int64_t my_rank = rank++;
                count++;
                if (!items[k].node) {
                    rf__member_t *m = &set->pending[set->n_pending++];
                    m->ns = strdup(q->ns);
                    m->name = strdup(q->name);
                    m->uid = strdup(q->uid);
                    m->rank = my_rank;
                    if (!m->ns || !m->name || !m->uid) {
                        free(bound);
                        rf__jw_fini(&pw);
                        rf__jw_fini(&bw_json);
                        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                        goto done;
                    }
                    continue;
                }
                int32_t ni = s_node_index(nodes, n_nodes, items[k].node);
                if (ni < 0 && sent) {
                    g->state = RF_GANG_WAITING;
                    g->why = s_strdupf("pod %s is bound to node %s, which the watcher does not know", q->name,
                                       items[k].node);
                    sent = false;
                }
                bound[n_bound].node = items[k].node;
                bound[n_bound++].rank = my_rank;
            }
            /* one entry per node, ranks ascending */
            qsort(bound, (size_t)n_bound, sizeof *bound, s_bound_cmp);
            for (int32_t k = 0; k < n_bound; k++) {
                if (k == 0 || strcmp(bound[k].node, bound[k - 1].node) != 0) {
                    if (k)
                        rf__jw_puts(&bw_json, "]}");
                    rf__jw_sep(&bw_json);
                    rf__jw_puts(&bw_json, "{\"node\":");
                    rf__jw_str(&bw_json, bound[k].node);
                    rf__jw_puts(&bw_json, ",\"ranks\":[");
                }
                rf__jw_sep(&bw_json);
                rf__jw_printf(&bw_json, "%lld", (long long)bound[k].rank);
            }
            if (n_bound)
                rf__jw_puts(&bw_json, "]}");
            rf__jw_puts(&bw_json, "]");
            free(bound);
            set->count = count;
            total += count;
            if (count > largest) {
                largest = count;
                largest_set = g->n_sets - 1;
            }
            rf__jw_sep(&pw);
            rf__jw_puts(&pw, "{");
            rf__jw_key(&pw, "name");
            rf__jw_str(&pw, set->name);
            rf__jw_key(&pw, "count");
            rf__jw_printf(&pw, "%lld", (long long)count);
            rf__jw_key(&pw, "min_count");
            rf__jw_printf(&pw, "@MIN%d@", g->n_sets - 1); /* filled below */
            s_res_json(&pw, "requests", &p->requests, -1);
            rf__jw_key(&pw, "node_selector");
            rf__jw_puts(&pw, "{");
            for (int32_t k = 0; k < p->node_selector.n; k++) {
                rf__jw_key(&pw, p->node_selector.v[k].key);
                rf__jw_str(&pw, p->node_selector.v[k].value);
            }
            const char *aff = s_aff_part(p);
            if (aff && sent) {
                int32_t ai = 0;
                while (ai < n_affs && strcmp(affs[ai].key, aff) != 0)
                    ai++;
                if (ai == n_affs) {
                    affs[n_affs].key = (char *)aff;
                    affs[n_affs++].pod = p;
                }
                char lk[64];
                snprintf(lk, sizeof lk, RF_AFFINITY_LABEL_PREFIX "%d", ai);
                rf__jw_key(&pw, lk);
                rf__jw_str(&pw, "true");
            }
            rf__jw_puts(&pw, "}");
            rf__jw_key(&pw, "tolerations");
            rf__jw_puts(&pw, "[");
            for (int32_t k = 0; k < p->n_tols; k++) {
                rf__jw_sep(&pw);
                rf__jw_puts(&pw, "{");
                if (*p->tols[k].key) {
                    rf__jw_key(&pw, "key");
                    rf__jw_str(&pw, p->tols[k].key);
                }
                rf__jw_key(&pw, "operator");
                rf__jw_str(&pw, p->tols[k].op);
                if (*p->tols[k].value) {
                    rf__jw_key(&pw, "value");
                    rf__jw_str(&pw, p->tols[k].value);
                }
                if (*p->tols[k].effect) {
                    rf__jw_key(&pw, "effect");
                    rf__jw_str(&pw, p->tols[k].effect);
                }
                rf__jw_puts(&pw, "}");
            }
            rf__jw_puts(&pw, "]");
            /* topology and slices from Kueue's annotations */
            const char *req = rf__kvs_get(&p->annotations, RF_ANN_REQUIRED);
            const char *pref = rf__kvs_get(&p->annotations, RF_ANN_PREFERRED);
            const char *sreq = rf__kvs_get(&p->annotations, RF_ANN_SLICE_REQUIRED);
            const char *ssize = rf__kvs_get(&p->annotations, RF_ANN_SLICE_SIZE);
            int32_t lreq = req ? s_level(o, req) : -1, lpref = pref ? s_level(o, pref) : -1;
            if (sent && ((req && lreq < 0) || (sreq && s_level(o, sreq) < 0))) {
                g->state = RF_GANG_REFUSED;
                g->why =
                    s_strdupf("topology level %s is not one of the watcher's levels", req && lreq < 0 ? req : sreq);
                sent = false;
            }
            if (lreq >= 0 && lpref >= 0 && lpref < lreq)
                lpref = -1; /* a preferred level coarser than the required one adds nothing */
            if (lreq >= 0 || lpref >= 0) {
                rf__jw_key(&pw, "topology");
                rf__jw_puts(&pw, "{");
                if (lreq >= 0) {
                    rf__jw_key(&pw, "required");
                    rf__jw_str(&pw, req);
                }
                if (lpref >= 0) {
                    rf__jw_key(&pw, "preferred");
                    rf__jw_str(&pw, pref);
                }
                rf__jw_puts(&pw, "}");
            }
            int64_t slice = 0;
            if (sreq && sent) {
                char *end = NULL;
                errno = 0;
                slice = ssize ? strtoll(ssize, &end, 10) : 0;
                if (!ssize || errno || *end || slice <= 0 || count % slice != 0) {
                    g->state = RF_GANG_REFUSED;
                    g->why = s_strdupf("pod set %s: slice size %s does not divide its %lld pods", set->name,
                                       ssize ? ssize : "(missing)", (long long)count);
                    sent = false;
                } else {
                    rf__jw_key(&pw, "slice");
                    rf__jw_printf(&pw, "{\"size\":%lld,\"required\":", (long long)slice);
                    rf__jw_str(&pw, sreq);
                    rf__jw_puts(&pw, "}");
                }
            }
            rf__jw_key(&pw, "bound");
            rf__jw_raw(&pw, bw_json.p ? bw_json.p : "[]", bw_json.p ? bw_json.len : 2);
            rf__jw_fini(&bw_json);
            rf__jw_puts(&pw, "}");
            set->slice = slice;
            i = j;
        }
        rf__jw_puts(&pw, "]}");
        if (sent) {
            /* min_count: minMember below the member count lowers the largest pod set's. */
            char *text = rf__jw_take(&pw, NULL);
            if (!text) {
                rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
                goto done;
            }
            rf__jw_sep(&gw);
            const char *s = text;
            while (*s) {
                const char *at = strstr(s, "@MIN");
                if (!at) {
                    rf__jw_puts(&gw, s);
                    break;
                }
                rf__jw_raw(&gw, s, (size_t)(at - s));
                int k = atoi(at + 4);
                int64_t mc = g->sets[k].count;
                if (k == largest_set && need < total) {
                    mc = g->sets[k].count - (total - need);
                    if (mc < 0)
                        mc = 0;
                    int64_t sl = g->sets[k].slice; /* a sliced pod set takes whole slices */
                    if (sl > 0 && mc % sl)
                        mc += sl - mc % sl;
                }
                rf__jw_printf(&gw, "%lld", (long long)mc);
                s = strchr(at + 1, '@') + 1;
            }
            free(text);
            plan->sent[plan->n_sent++] = plan->n_gangs - 1;
        } else {
            rf__jw_fini(&pw);
        }
        a = b;
    }
    rf__jw_puts(&gw, "]");

    if (plan->n_sent == 0)
        goto done;
    /* The problem: cluster, gangs, options. */
    rf__jw_puts(&w, "{\"cluster\":{\"levels\":[");
    for (int32_t l = 0; l < o->n_levels; l++) {
        rf__jw_sep(&w);
        rf__jw_str(&w, o->levels[l]);
    }
    rf__jw_puts(&w, "]");
    if (o->level_costs) {
        rf__jw_key(&w, "level_costs");
        rf__jw_puts(&w, "[");
        for (int32_t l = 0; l < o->n_levels; l++) {
            rf__jw_sep(&w);
            rf__jw_printf(&w, "%.17g", o->level_costs[l]);
        }
        rf__jw_puts(&w, "]");
    }
    rf__jw_key(&w, "nodes");
    rf__jw_puts(&w, "[");
    for (int32_t i = 0; i < n_nodes; i++) {
        const rf__knode_t *n = nodes[i];
        rf__jw_sep(&w);
        rf__jw_puts(&w, "{");
        rf__jw_key(&w, "name");
        rf__jw_str(&w, n->name);
        rf__jw_key(&w, "labels");
        rf__jw_puts(&w, "{");
        for (int32_t k = 0; k < n->labels.n; k++) {
            if (strncmp(n->labels.v[k].key, RF_AFFINITY_LABEL_PREFIX, strlen(RF_AFFINITY_LABEL_PREFIX)) == 0)
                continue; /* ours to set */
            rf__jw_key(&w, n->labels.v[k].key);
            rf__jw_str(&w, n->labels.v[k].value);
        }
        for (int32_t ai = 0; ai < n_affs; ai++)
            if (rf__kpod_affinity_matches(affs[ai].pod, n)) {
                char lk[64];
                snprintf(lk, sizeof lk, RF_AFFINITY_LABEL_PREFIX "%d", ai);
                rf__jw_key(&w, lk);
                rf__jw_str(&w, "true");
            }
        rf__jw_puts(&w, "}");
        int64_t podcap = -1;
        for (int32_t k = 0; k < n->alloc.n; k++)
            if (strcmp(n->alloc.names[k], "pods") == 0)
                podcap = n->alloc.vals[k];
        s_res_json(&w, "allocatable", &n->alloc, podcap);
        s_res_json(&w, "used", &used[i], used_pods[i]);
        rf__jw_key(&w, "taints");
        rf__jw_puts(&w, "[");
        for (int32_t k = 0; k < n->n_taints; k++) {
            rf__jw_sep(&w);
            rf__jw_puts(&w, "{");
            rf__jw_key(&w, "key");
            rf__jw_str(&w, n->taints[k].key);
            if (*n->taints[k].value) {
                rf__jw_key(&w, "value");
                rf__jw_str(&w, n->taints[k].value);
            }
            rf__jw_key(&w, "effect");
            rf__jw_str(&w, n->taints[k].effect);
            rf__jw_puts(&w, "}");
        }
        rf__jw_puts(&w, "]");
        rf__jw_key(&w, "unschedulable");
        rf__jw_puts(&w, n->unschedulable || !n->ready ? "true" : "false");
        rf__jw_puts(&w, "}");
    }
    rf__jw_puts(&w, "]}");
    rf__jw_key(&w, "gangs");
    rf__jw_raw(&w, gw.p, gw.len);
    rf__jw_key(&w, "options");
    rf__jw_puts(&w, "{");
    rf__jw_key(&w, "mode");
    rf__jw_str(&w, o->mode ? o->mode : "auto");
    rf__jw_key(&w, "time_limit_ms");
    rf__jw_printf(&w, "%lld", (long long)(o->time_limit_ms > 0 ? o->time_limit_ms : 1000));
    if (o->value_resource) {
        rf__jw_key(&w, "value_resource");
        rf__jw_str(&w, o->value_resource);
    }
    rf__jw_puts(&w, "}}");
    if (w.oom || gw.oom) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    plan->json = rf__jw_take(&w, &plan->len);
done:
    for (int32_t i = 0; i < n_nodes; i++)
        rf__res_fini(&used[i]);
    free(used);
    free(used_pods);
    free(nodes);
    free(items);
    free(affs);
    rf__jw_fini(&gw);
    rf__jw_fini(&w);
    return rc;
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
        if ((rc = s_build(cache, opts, skip, ctx, refused, why, n_refused, out, err)) != RF_OK)
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
