/* solver/check.c: the independent checker (include/rackfit/check.h).
 *
 * It shares no code with the search or with rf_answer_finish: it includes
 * only public headers and recomputes everything from the problem and the
 * placements, by methods of its own. The few rules it writes out again
 * (label lookup, tolerations) stand once more in the test references
 * tests/support/exhaust.c and cbcref.c: on purpose, so that the checker and
 * each reference stay independent of the search and of one another; do not
 * fold them into one shared helper. Its methods:
 * - a node's label value per level is found by a linear scan of its labels;
 * - D(g,l) is counted by sorting the gang's nodes by their label paths (a
 *   missing level label is a value of the node's own, so the node is alone
 *   at that level and below) and counting the changes of domain between
 *   neighbours;
 * - slice ranks are handed out rank by rank into an array of `count` slots.
 *
 * Rank convention for bound pods (see docs/decisions.md, "Answers and
 * checking"): bound entries with `ranks` hold those ranks; bound entries
 * given as {node, count} without ranks hold, in the order of the bound list,
 * the lowest ranks that no bound entry lists explicitly; new pods then take
 * the remaining ranks, lowest first, down the placement list.
 *
 * Feasibility follows PLACEMENT-MODEL.md: capacity (free = allocatable - used,
 * never below zero; a resource not listed is 0; `pods` unlimited when not
 * listed), eligibility of new pods (every level label, not cordoned, the
 * node_selector matched exactly, every NoSchedule/NoExecute taint
 * tolerated), counts, slices, required domains, all-or-nothing, and, under
 * `admission: ordered`, that no gang is admitted after a rejected gang of its
 * priority. Reported totals that differ from the recomputed ones by more than
 * 1e-6 (relative to the larger when above 1) are violations too.
 *
 * Preemption (PLACEMENT-MODEL.md, "Running gangs and preemption"), checked
 * from the answer's `running` list alone, never from how it was found:
 * - whole gangs only: the answer cannot say anything else (a running gang is
 *   kept or preempted, and its reader refuses any other key);
 * - a preempted gang must be preemptible, and options.preemption must be
 *   lower_priority;
 * - its preemptors are the admitted gangs of strictly higher priority with at
 *   least one new pod on one of its nodes: there must be one, and `by` must
 *   list exactly them, in problem order; a kept gang lists none;
 * - capacity on a node that a preempted gang frees is checked per priority:
 *   for every priority p of the new pods there, the new pods of priority <= p
 *   fit in max(0, allocatable - used + freed(p)), freed(p) being what the
 *   preempted gangs of priority < p used there (their requests, and pods: 1
 *   each); on every other node, as before, all new pods fit in
 *   max(0, allocatable - used);
 * - kept running gangs count in the value at their priority and in the
 *   penalty (D over their placements), and summary.preempted must match. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rackfit/check.h"
#include "rackfit/quantity.h"

#define S_TOL 1e-6

typedef struct {
    const rf_problem_t *p;
    const rf_answer_t *a;
    rf_check_report_t *rep;
    const char **lv;   /* [node * n_levels + level]: label value, NULL if missing */
    int64_t *add;      /* [node * n_resources]: new demand by admitted gangs */
    int32_t *seen;     /* [node]: stamp of the pod set that last listed it */
    int32_t *rank_at;  /* scratch: node holding each rank, -1 none */
    int64_t rank_cap;  /* entries in rank_at */
    int32_t *nodes;    /* scratch: nodes of the current gang, one per entry */
    int32_t nodes_cap; /* entries in nodes */
    uint8_t *freed;    /* [node]: 1 when a preempted running gang has pods there */
    bool oom;
} s_ck_t;

typedef struct {
    const char *const *path; /* the node's row of lv */
    int32_t node;
    int32_t n_levels;
} s_key_t;

/* ------------------------------------------------------------------ */
/* Local methods                                                        */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
s_violation(s_ck_t *ck, const char *fmt, ...)
{
    rf_check_report_t *rep = ck->rep;
    int32_t i = rep->n_violations++;
    if (i >= RF_CHECK_MAX_VIOLATIONS)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rep->violations[i] = strdup(buf);
    if (!rep->violations[i])
        ck->oom = true;
}

static bool s_close(double x, double y)
{
    double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
    if (scale < 1)
        scale = 1;
    return fabs(x - y) <= S_TOL * scale;
}

static int64_t s_add_sat(int64_t x, int64_t y)
{
    return (y > 0 && x > INT64_MAX - y) ? INT64_MAX : x + y;
}

static int64_t s_mul_sat(int64_t x, int64_t y)
{
    if (x <= 0 || y <= 0)
        return 0;
    return x > INT64_MAX / y ? INT64_MAX : x * y;
}

static const char *s_node_name(const rf_problem_t *p, int32_t n)
{
    return n >= 0 && n < p->n_nodes ? p->nodes[n].name : "?";
}

static const char *s_effect_name(rf_effect e)
{
    switch (e) {
    case RF_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case RF_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case RF_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return "";
    }
}

static const char *s_find_label(const rf_node_t *node, const char *key)
{
    for (int32_t i = 0; i < node->n_labels; i++)
        if (strcmp(node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

/* Kubernetes' Toleration.ToleratesTaint: an empty effect matches every
 * effect; an empty key matches every key; Exists matches any value, Equal
 * compares the value. */
static bool s_tolerates(const rf_toleration_t *t, const rf_taint_t *taint)
{
    if (t->effect != RF_EFFECT_NONE && t->effect != taint->effect)
        return false;
    if (t->key && t->key[0] && strcmp(t->key, taint->key) != 0)
        return false;
    if (t->op == RF_TOL_EXISTS)
        return true;
    const char *tv = t->value ? t->value : "";
    const char *nv = taint->value ? taint->value : "";
    return strcmp(tv, nv) == 0;
}

/* Are nodes x and y in one domain of level l? */
static bool s_same(const s_ck_t *ck, int32_t x, int32_t y, int32_t l)
{
    if (x == y)
        return true;
    int32_t L = ck->p->n_levels;
    for (int32_t k = 0; k <= l; k++) {
        const char *vx = ck->lv[(size_t)x * L + k], *vy = ck->lv[(size_t)y * L + k];
        if (!vx || !vy || strcmp(vx, vy) != 0)
            return false;
    }
    return true;
}

static int s_key_cmp(const void *va, const void *vb)
{
    const s_key_t *x = va, *y = vb;
    if (x->node == y->node)
        return 0;
    for (int32_t k = 0; k < x->n_levels; k++) {
        const char *sx = x->path[k], *sy = y->path[k];
        if (!sx || !sy) {
            if (sx)
                return -1;
            if (sy)
                return 1;
            break; /* both alone from here: order by node */
        }
        int c = strcmp(sx, sy);
        if (c)
            return c;
    }
    return (x->node > y->node) - (x->node < y->node);
}

/* Distinct domains per level among `n` nodes (repeats allowed) into d[]. */
static void s_count_domains(s_ck_t *ck, const int32_t *nodes, int32_t n, int32_t *d)
{
    int32_t L = ck->p->n_levels;
    for (int32_t l = 0; l < L; l++)
        d[l] = n > 0 ? 1 : 0;
    if (n <= 1)
        return;
    s_key_t *keys = malloc(sizeof *keys * (size_t)n);
    if (!keys) {
        ck->oom = true;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        keys[i].path = &ck->lv[(size_t)nodes[i] * L];
        keys[i].node = nodes[i];
        keys[i].n_levels = L;
    }
    qsort(keys, (size_t)n, sizeof *keys, s_key_cmp);
    for (int32_t i = 1; i < n; i++)
        for (int32_t l = 0; l < L; l++)
            if (!s_same(ck, keys[i - 1].node, keys[i].node, l))
                d[l]++;
    free(keys);
}

static bool s_push_node(s_ck_t *ck, int32_t *n, int32_t node)
{
    if (*n == ck->nodes_cap) {
        int32_t cap = ck->nodes_cap ? ck->nodes_cap * 2 : 64;
        int32_t *x = realloc(ck->nodes, sizeof *x * (size_t)cap);
        if (!x) {
            ck->oom = true;
            return false;
        }
        ck->nodes = x;
        ck->nodes_cap = cap;
    }
    ck->nodes[(*n)++] = node;
    return true;
}

/* Why node n cannot take new pods of pod set ps: writes a clause into why
 * and returns false, or returns true. */
static bool s_eligible(const s_ck_t *ck, const rf_pod_set_t *ps, int32_t n, char *why, size_t cap)
{
    const rf_problem_t *p = ck->p;
    const rf_node_t *node = &p->nodes[n];
    for (int32_t l = 0; l < p->n_levels; l++)
        if (!ck->lv[(size_t)n * p->n_levels + l]) {
            snprintf(why, cap, "lacks the level label %s", p->levels[l]);
            return false;
        }
    if (node->unschedulable) {
        snprintf(why, cap, "is cordoned (unschedulable)");
        return false;
    }
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        const rf_label_t *sel = &ps->node_selector[i];
        const char *v = s_find_label(node, sel->key);
        if (!v || strcmp(v, sel->value) != 0) {
            snprintf(why, cap, "does not match node_selector %s=%s (node has %s)", sel->key, sel->value,
                     v ? v : "no such label");
            return false;
        }
    }
    for (int32_t i = 0; i < node->n_taints; i++) {
        const rf_taint_t *t = &node->taints[i];
        if (t->effect != RF_EFFECT_NO_SCHEDULE && t->effect != RF_EFFECT_NO_EXECUTE)
            continue;
        bool ok = false;
        for (int32_t k = 0; k < ps->n_tolerations && !ok; k++)
            ok = s_tolerates(&ps->tolerations[k], t);
        if (!ok) {
            snprintf(why, cap, "has taint %s%s%s:%s, not tolerated", t->key, t->value && t->value[0] ? "=" : "",
                     t->value ? t->value : "", s_effect_name(t->effect));
            return false;
        }
    }
    return true;
}

/* Slice ranks of one pod set: returns false (after reporting) on a problem. */
static void s_check_slices(s_ck_t *ck, const rf_gang_t *gang, const rf_pod_set_t *ps, const rf_pod_set_answer_t *pa,
                           int64_t total)
{
    const rf_problem_t *p = ck->p;
    int64_t s = ps->slice.size, count = ps->count;
    int32_t lvl = ps->slice.level;
    if (s <= 0 || total > count || total % s != 0 || lvl < 0 || lvl >= p->n_levels)
        return; /* counts already reported, or no slice */
    if (count > ck->rank_cap) {
        int32_t *x = realloc(ck->rank_at, sizeof *x * (size_t)count);
        if (!x) {
            ck->oom = true;
            return;
        }
        ck->rank_at = x;
        ck->rank_cap = count;
    }
    int32_t *at = ck->rank_at;
    for (int64_t r = 0; r < count; r++)
        at[r] = -1;
    /* 1. bound pods with explicit ranks */
    for (int32_t b = 0; b < ps->n_bound; b++) {
        const rf_bound_t *bd = &ps->bound[b];
        if (!bd->ranks)
            continue;
        for (int32_t k = 0; k < bd->count; k++) {
            int32_t r = bd->ranks[k];
            if (r < 0 || r >= count) {
                s_violation(ck, "gang %s, pod set %s: bound rank %d is outside [0, %lld)", gang->name, ps->name, r,
                            (long long)count);
                continue;
            }
            if (at[r] >= 0) {
                s_violation(ck, "gang %s, pod set %s: bound rank %d is held twice", gang->name, ps->name, r);
                continue;
            }
            at[r] = bd->node;
        }
    }
    /* 2. bound pods without ranks, then 3. new pods: lowest free ranks */
    int64_t next = 0;
    for (int32_t b = 0; b < ps->n_bound; b++) {
        const rf_bound_t *bd = &ps->bound[b];
        if (bd->ranks)
            continue;
        for (int32_t k = 0; k < bd->count; k++) {
            while (next < count && at[next] >= 0)
                next++;
            if (next < count)
                at[next] = bd->node;
        }
    }
    for (int32_t i = 0; i < pa->n_placements; i++) {
        const rf_placement_t *pl = &pa->placements[i];
        if (pl->node < 0 || pl->node >= p->n_nodes)
            continue;
        for (int32_t k = 0; k < pl->count; k++) {
            while (next < count && at[next] >= 0)
                next++;
            if (next < count)
                at[next] = pl->node;
        }
    }
    /* every group that holds a pod is full and in one domain */
    for (int64_t j = 0; j * s < count; j++) {
        int64_t lo = j * s, hi = lo + s, filled = 0, first = -1;
        for (int64_t r = lo; r < hi; r++)
            if (at[r] >= 0) {
                filled++;
                if (first < 0)
                    first = r;
            }
        if (filled == 0)
            continue;
        if (filled < s) {
            s_violation(ck, "gang %s, pod set %s: slice %lld (ranks %lld-%lld) holds %lld of %lld pods", gang->name,
                        ps->name, (long long)j, (long long)lo, (long long)hi - 1, (long long)filled, (long long)s);
            continue;
        }
        for (int64_t r = lo; r < hi; r++)
            if (!s_same(ck, at[first], at[r], lvl)) {
                s_violation(ck,
                            "gang %s, pod set %s: slice %lld (ranks %lld-%lld) spans more than one %s domain "
                            "(rank %lld on node %s, rank %lld on node %s)",
                            gang->name, ps->name, (long long)j, (long long)lo, (long long)hi - 1, p->levels[lvl],
                            (long long)first, s_node_name(p, at[first]), (long long)r, s_node_name(p, at[r]));
                break;
            }
    }
}

/* Required level: all `n` nodes in one domain of level `lvl`. */
static void s_check_required(s_ck_t *ck, const int32_t *nodes, int32_t n, int32_t lvl, const char *who)
{
    const rf_problem_t *p = ck->p;
    if (lvl < 0 || lvl >= p->n_levels)
        return;
    for (int32_t i = 1; i < n; i++)
        if (!s_same(ck, nodes[0], nodes[i], lvl)) {
            s_violation(ck, "%s: pods span more than one %s domain (nodes %s and %s), required one", who,
                        p->levels[lvl], s_node_name(p, nodes[0]), s_node_name(p, nodes[i]));
            return;
        }
}

static int32_t s_prio_index(const rf_check_report_t *rep, int64_t prio)
{
    for (int32_t i = 0; i < rep->n_value; i++)
        if (rep->value[i].priority == prio)
            return i;
    return -1;
}

/* One gang: counts, eligibility, demand, domains, slices, value. */
static void s_check_gang(s_ck_t *ck, int32_t g, int32_t *stamp)
{
    const rf_problem_t *p = ck->p;
    const rf_gang_t *gang = &p->gangs[g];
    const rf_gang_answer_t *ga = &ck->a->gangs[g];
    int32_t L = p->n_levels, R = p->n_resources;
    int32_t d[RF_MAX_LEVELS] = {0};
    double penalty = 0;

    if (!ga->admitted) {
        for (int32_t j = 0; j < gang->n_pod_sets; j++) {
            const rf_pod_set_answer_t *pa = ga->pod_sets ? &ga->pod_sets[j] : NULL;
            if (pa && pa->n_placements > 0)
                s_violation(ck, "gang %s is rejected but pod set %s lists %d placements", gang->name,
                            gang->pod_sets[j].name, (int)pa->n_placements);
        }
    } else {
        int32_t n_gang = 0; /* ck->nodes[0, n_gang): every node holding a pod of the gang */
        int64_t units = 0, pods = 0;
        int32_t vr = p->options.value_resource;
        char who[600];
        for (int32_t j = 0; j < gang->n_pod_sets; j++) {
            const rf_pod_set_t *ps = &gang->pod_sets[j];
            static const rf_pod_set_answer_t empty = {0};
            const rf_pod_set_answer_t *pa = ga->pod_sets ? &ga->pod_sets[j] : &empty;
            int32_t first = n_gang;
            int64_t total = ps->n_bound_pods;
            ++*stamp;
            for (int32_t b = 0; b < ps->n_bound; b++)
                if (ps->bound[b].count > 0 && ps->bound[b].node >= 0 && ps->bound[b].node < p->n_nodes)
                    s_push_node(ck, &n_gang, ps->bound[b].node);
            for (int32_t k = 0; k < pa->n_placements; k++) {
                const rf_placement_t *pl = &pa->placements[k];
                if (pl->node < 0 || pl->node >= p->n_nodes) {
                    s_violation(ck, "gang %s, pod set %s: placement %d names unknown node index %d", gang->name,
                                ps->name, (int)k, (int)pl->node);
                    continue;
                }
                const char *nn = p->nodes[pl->node].name;
                if (pl->count <= 0) {
                    s_violation(ck, "gang %s, pod set %s: node %s: count %d is not positive", gang->name, ps->name, nn,
                                (int)pl->count);
                    continue;
                }
                if (ck->seen[pl->node] == *stamp)
                    s_violation(ck, "gang %s, pod set %s: node %s is listed twice", gang->name, ps->name, nn);
                ck->seen[pl->node] = *stamp;
                char why[600];
                if (!s_eligible(ck, ps, pl->node, why, sizeof why))
                    s_violation(ck, "gang %s, pod set %s: node %s %s", gang->name, ps->name, nn, why);
                int64_t *row = &ck->add[(size_t)pl->node * R];
                for (int32_t r = 0; r < R; r++)
                    row[r] = s_add_sat(row[r], s_mul_sat(pl->count, ps->requests[r]));
                total = s_add_sat(total, pl->count);
                s_push_node(ck, &n_gang, pl->node);
            }
            if (total < ps->min_count || total > ps->count)
                s_violation(ck, "gang %s, pod set %s: %lld pods (%lld bound + %lld new), needs %lld to %lld",
                            gang->name, ps->name, (long long)total, (long long)ps->n_bound_pods,
                            (long long)(total - ps->n_bound_pods), (long long)ps->min_count, (long long)ps->count);
            if (ps->slice.size > 0 && total % ps->slice.size != 0)
                s_violation(ck, "gang %s, pod set %s: %lld pods is not a multiple of the slice size %d", gang->name,
                            ps->name, (long long)total, (int)ps->slice.size);
            snprintf(who, sizeof who, "gang %s, pod set %s", gang->name, ps->name);
            if (!ck->oom)
                s_check_required(ck, ck->nodes + first, n_gang - first, ps->topology.required, who);
            if (ps->slice.size > 0 && !ck->oom)
                s_check_slices(ck, gang, ps, pa, total);
            pods = s_add_sat(pods, total);
            if (vr >= 0 && vr < R)
                units = s_add_sat(units, s_mul_sat(total, ps->requests[vr]));
        }
        if (ck->oom)
            return;
        snprintf(who, sizeof who, "gang %s", gang->name);
        s_check_required(ck, ck->nodes, n_gang, gang->topology.required, who);
        s_count_domains(ck, ck->nodes, n_gang, d);
        for (int32_t l = 0; l < L; l++)
            if (d[l] > 1)
                penalty += p->level_costs[l] * (double)(d[l] - 1);
        penalty *= gang->bandwidth;
        rf_check_report_t *rep = ck->rep;
        rep->admitted++;
        rep->penalty += penalty;
        int32_t vi = s_prio_index(rep, gang->priority);
        if (vi >= 0) {
            rep->value[vi].units = s_add_sat(rep->value[vi].units, units);
            rep->value[vi].pods = s_add_sat(rep->value[vi].pods, pods);
        }
    }

    /* the answer's own figures, when it gives them */
    if (ga->has_domains)
        for (int32_t l = 0; l < L; l++)
            if (ga->domains[l] != d[l]) {
                s_violation(ck, "gang %s: reported %d domains of %s, recomputed %d", gang->name, (int)ga->domains[l],
                            p->levels[l], (int)d[l]);
                ck->rep->reported_totals_match = false;
                break;
            }
    if (ga->has_penalty && !s_close(ga->penalty, penalty)) {
        s_violation(ck, "gang %s: reported penalty %.17g, recomputed %.17g", gang->name, ga->penalty, penalty);
        ck->rep->reported_totals_match = false;
    }
}

static void s_check_capacity(s_ck_t *ck)
{
    const rf_problem_t *p = ck->p;
    int32_t R = p->n_resources;
    for (int32_t n = 0; n < p->n_nodes; n++) {
        const rf_node_t *node = &p->nodes[n];
        const int64_t *row = &ck->add[(size_t)n * R];
        if (ck->freed[n])
            continue; /* per priority: s_check_freed_capacity */
        for (int32_t r = 0; r < R; r++) {
            if (row[r] <= 0 || node->allocatable[r] == RF_QTY_UNLIMITED)
                continue;
            int64_t free_ = node->allocatable[r] - node->used[r];
            if (free_ < 0)
                free_ = 0;
            if (row[r] > free_) {
                char a[48], f[48];
                rf_qty_kind kind = rf_qty_kind_of(p->resources[r]);
                if (rf_qty_format(row[r], kind, a, sizeof a) >= (int)sizeof a)
                    snprintf(a, sizeof a, "%lld", (long long)row[r]);
                if (rf_qty_format(free_, kind, f, sizeof f) >= (int)sizeof f)
                    snprintf(f, sizeof f, "%lld", (long long)free_);
                s_violation(ck, "node %s: %s %s > free %s", node->name, p->resources[r], a, f);
            }
        }
    }
}

static void s_check_ordered(s_ck_t *ck)
{
    const rf_problem_t *p = ck->p;
    rf_check_report_t *rep = ck->rep;
    int32_t *first_rejected = malloc(sizeof *first_rejected * (size_t)(rep->n_value > 0 ? rep->n_value : 1));
    if (!first_rejected) {
        ck->oom = true;
        return;
    }
    for (int32_t i = 0; i < rep->n_value; i++)
        first_rejected[i] = -1;
    for (int32_t g = 0; g < p->n_gangs; g++) {
        int32_t vi = s_prio_index(rep, p->gangs[g].priority);
        if (vi < 0)
            continue;
        if (!ck->a->gangs[g].admitted) {
            if (first_rejected[vi] < 0)
                first_rejected[vi] = g;
        } else if (first_rejected[vi] >= 0) {
            s_violation(ck,
                        "gang %s is admitted after gang %s of the same priority %lld was rejected (admission: ordered)",
                        p->gangs[g].name, p->gangs[first_rejected[vi]].name, (long long)p->gangs[g].priority);
        }
    }
    free(first_rejected);
}

static void s_check_summary(s_ck_t *ck)
{
    const rf_summary_t *s = &ck->a->summary;
    rf_check_report_t *rep = ck->rep;
    int32_t rejected = ck->p->n_gangs - rep->admitted;
    if (s->has_counts && (s->admitted != rep->admitted || s->rejected != rejected)) {
        s_violation(ck, "summary: reported %d admitted and %d rejected, recomputed %d and %d", (int)s->admitted,
                    (int)s->rejected, (int)rep->admitted, (int)rejected);
        rep->reported_totals_match = false;
    }
    if (s->has_value) {
        bool same = s->n_value == rep->n_value;
        for (int32_t i = 0; same && i < rep->n_value; i++)
            same = s->value[i].priority == rep->value[i].priority && s->value[i].units == rep->value[i].units &&
                   s->value[i].pods == rep->value[i].pods;
        if (!same) {
            char got[256] = "", want[256] = "";
            size_t lg = 0, lw = 0;
            for (int32_t i = 0; i < s->n_value && lg < sizeof got; i++)
                lg += (size_t)snprintf(got + lg, sizeof got - lg, "%s[%lld,%lld,%lld]", i ? "," : "",
                                       (long long)s->value[i].priority, (long long)s->value[i].units,
                                       (long long)s->value[i].pods);
            for (int32_t i = 0; i < rep->n_value && lw < sizeof want; i++)
                lw += (size_t)snprintf(want + lw, sizeof want - lw, "%s[%lld,%lld,%lld]", i ? "," : "",
                                       (long long)rep->value[i].priority, (long long)rep->value[i].units,
                                       (long long)rep->value[i].pods);
            s_violation(ck, "summary: reported value [%s], recomputed [%s]", got, want);
            rep->reported_totals_match = false;
        }
    }
    if (s->has_penalty && !s_close(s->penalty, rep->penalty)) {
        s_violation(ck, "summary: reported penalty %.17g, recomputed %.17g", s->penalty, rep->penalty);
        rep->reported_totals_match = false;
    }
    /* a lower bound can never exceed the penalty of an answer it bounds */
    if (s->penalty_bound > rep->penalty && !s_close(s->penalty_bound, rep->penalty)) {
        s_violation(ck, "summary: penalty_bound %.17g exceeds the recomputed penalty %.17g", s->penalty_bound,
                    rep->penalty);
        rep->reported_totals_match = false;
    }
    if (s->optimal && !s_close(s->penalty_bound, rep->penalty)) {
        s_violation(ck, "summary: optimal, but the penalty %.17g is not within 1e-6 of penalty_bound %.17g",
                    rep->penalty, s->penalty_bound);
        rep->reported_totals_match = false;
    }
}

/* ------------------------------------------------------------------ */
/* Running gangs and preemption                                         */

/* Does admitted gang g put at least one new pod on a node of running gang i? */
static bool s_on_nodes_of(const s_ck_t *ck, int32_t g, const uint8_t *mark)
{
    const rf_problem_t *p = ck->p;
    const rf_gang_answer_t *ga = &ck->a->gangs[g];
    for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++)
        for (int32_t k = 0; k < ga->pod_sets[j].n_placements; k++) {
            const rf_placement_t *pl = &ga->pod_sets[j].placements[k];
            if (pl->count > 0 && pl->node >= 0 && pl->node < p->n_nodes && mark[pl->node])
                return true;
        }
    return false;
}

/* One preempted gang: allowed at all, and `by` exactly its preemptors. */
static void s_check_preempted(s_ck_t *ck, int32_t i, uint8_t *mark)
{
    const rf_problem_t *p = ck->p;
    const rf_running_t *run = &p->running[i];
    const rf_running_answer_t *ra = &ck->a->running[i];
    if (p->options.preemption == RF_PREEMPT_NEVER)
        s_violation(ck, "running gang %s is preempted, but options.preemption is never", run->name);
    if (!run->preemptible)
        s_violation(ck, "running gang %s is preempted, but it is not preemptible", run->name);
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
            mark[run->pod_sets[j].placements[k].node] = 1;
    int32_t n_pre = 0, at = 0; /* preemptors found; position reached in `by` */
    bool by_ok = true;
    for (int32_t g = 0; g < p->n_gangs; g++) {
        if (!ck->a->gangs[g].admitted || p->gangs[g].priority <= run->priority || !s_on_nodes_of(ck, g, mark))
            continue;
        n_pre++;
        if (at < ra->n_by && ra->by[at] == g)
            at++;
        else
            by_ok = false;
    }
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
            mark[run->pod_sets[j].placements[k].node] = 0;
    if (n_pre == 0) {
        s_violation(ck,
                    "running gang %s (priority %lld) is preempted, but no admitted gang of higher priority puts a new "
                    "pod on its nodes",
                    run->name, (long long)run->priority);
        return;
    }
    if (!by_ok || at != ra->n_by) {
        char got[512] = "";
        size_t len = 0;
        for (int32_t k = 0; k < ra->n_by && len < sizeof got; k++)
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", k ? ", " : "",
                                    ra->by[k] >= 0 && ra->by[k] < p->n_gangs ? p->gangs[ra->by[k]].name : "?");
        s_violation(ck, "running gang %s: by lists [%s], but its %d preemptors are not exactly these, in problem order",
                    run->name, got, (int)n_pre);
    }
}

/* Every running gang: the preemption rules, and the kept ones' value and
 * penalty into the report. Marks ck->freed. */
static void s_check_running(s_ck_t *ck)
{
    const rf_problem_t *p = ck->p;
    rf_check_report_t *rep = ck->rep;
    int32_t L = p->n_levels, vr = p->options.value_resource;
    int32_t preempted = 0;
    uint8_t *mark = calloc((size_t)p->n_nodes + 1, 1);
    if (!mark) {
        ck->oom = true;
        return;
    }
    for (int32_t i = 0; i < p->n_running && !ck->oom; i++) {
        const rf_running_t *run = &p->running[i];
        const rf_running_answer_t *ra = &ck->a->running[i];
        if (ra->preempted) {
            preempted++;
            for (int32_t j = 0; j < run->n_pod_sets; j++)
                for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
                    ck->freed[run->pod_sets[j].placements[k].node] = 1;
            s_check_preempted(ck, i, mark);
            continue;
        }
        if (ra->n_by > 0)
            s_violation(ck, "running gang %s is kept, but by lists %d gangs", run->name, (int)ra->n_by);
        int32_t n = 0, d[RF_MAX_LEVELS] = {0};
        int64_t units = 0, pods = 0;
        for (int32_t j = 0; j < run->n_pod_sets; j++) {
            const rf_run_pod_set_t *ps = &run->pod_sets[j];
            for (int32_t k = 0; k < ps->n_placements; k++) {
                s_push_node(ck, &n, ps->placements[k].node);
                pods = s_add_sat(pods, ps->placements[k].count);
                if (vr >= 0 && vr < p->n_resources)
                    units = s_add_sat(units, s_mul_sat(ps->placements[k].count, ps->requests[vr]));
            }
        }
        if (ck->oom)
            break;
        s_count_domains(ck, ck->nodes, n, d);
        double penalty = 0;
        for (int32_t l = 0; l < L; l++)
            if (d[l] > 1)
                penalty += p->level_costs[l] * (double)(d[l] - 1);
        rep->penalty += run->bandwidth * penalty;
        int32_t vi = s_prio_index(rep, run->priority);
        if (vi >= 0) {
            rep->value[vi].units = s_add_sat(rep->value[vi].units, units);
            rep->value[vi].pods = s_add_sat(rep->value[vi].pods, pods);
        }
    }
    free(mark);
    const rf_summary_t *s = &ck->a->summary;
    if (s->has_preempted && s->preempted != preempted) {
        s_violation(ck, "summary: reported %d preempted, recomputed %d", (int)s->preempted, (int)preempted);
        rep->reported_totals_match = false;
    }
}

/* Demand (new pods) or supply (freed pods) on one node at one priority. */
typedef struct {
    int32_t node;
    int64_t priority;
    const int64_t *requests;
    int64_t count;
} s_item_t;

static int s_item_cmp(const void *va, const void *vb)
{
    const s_item_t *x = va, *y = vb;
    if (x->node != y->node)
        return (x->node > y->node) - (x->node < y->node);
    return (x->priority > y->priority) - (x->priority < y->priority);
}

static bool s_item_push(s_ck_t *ck, s_item_t **v, int64_t *n, int64_t *cap, s_item_t it)
{
    if (*n == *cap) {
        int64_t c = *cap ? *cap * 2 : 64;
        s_item_t *x = realloc(*v, sizeof *x * (size_t)c);
        if (!x) {
            ck->oom = true;
            return false;
        }
        *v = x;
        *cap = c;
    }
    (*v)[(*n)++] = it;
    return true;
}

/* On one node (items of `dem` and `sup` for it, sorted by priority): for
 * each priority p of its new pods, the new pods of priority <= p against
 * max(0, allocatable - used + freed(< p)). */
static void s_check_node_prio(s_ck_t *ck, int32_t n, const s_item_t *dem, int64_t nd, const s_item_t *sup, int64_t ns,
                              int64_t *need, int64_t *freed)
{
    const rf_problem_t *p = ck->p;
    const rf_node_t *node = &p->nodes[n];
    int32_t R = p->n_resources;
    memset(need, 0, sizeof *need * (size_t)R);
    memset(freed, 0, sizeof *freed * (size_t)R);
    int64_t a = 0, b = 0;
    while (a < nd) {
        int64_t prio = dem[a].priority;
        for (; a < nd && dem[a].priority == prio; a++)
            for (int32_t r = 0; r < R; r++)
                need[r] = s_add_sat(need[r], s_mul_sat(dem[a].count, dem[a].requests[r]));
        for (; b < ns && sup[b].priority < prio; b++)
            for (int32_t r = 0; r < R; r++)
                freed[r] = s_add_sat(freed[r], s_mul_sat(sup[b].count, sup[b].requests[r]));
        for (int32_t r = 0; r < R; r++) {
            if (need[r] <= 0 || node->allocatable[r] == RF_QTY_UNLIMITED)
                continue;
            int64_t room = node->allocatable[r] - node->used[r] + freed[r];
            if (room < 0)
                room = 0;
            if (need[r] > room)
                s_violation(ck,
                            "node %s: %s %lld for new pods of priority <= %lld > free %lld (%lld freed by preempted "
                            "gangs of lower priority)",
                            node->name, p->resources[r], (long long)need[r], (long long)prio, (long long)room,
                            (long long)freed[r]);
        }
    }
}

static void s_check_freed_capacity(s_ck_t *ck)
{
    const rf_problem_t *p = ck->p;
    s_item_t *dem = NULL, *sup = NULL;
    int64_t nd = 0, cd = 0, ns = 0, cs = 0;
    int64_t *need = calloc((size_t)p->n_resources * 2, sizeof *need);
    if (!need) {
        ck->oom = true;
        return;
    }
    for (int32_t g = 0; g < p->n_gangs && !ck->oom; g++) {
        const rf_gang_answer_t *ga = &ck->a->gangs[g];
        for (int32_t j = 0; ga->admitted && j < p->gangs[g].n_pod_sets; j++)
            for (int32_t k = 0; k < ga->pod_sets[j].n_placements; k++) {
                const rf_placement_t *pl = &ga->pod_sets[j].placements[k];
                if (pl->count > 0 && pl->node >= 0 && pl->node < p->n_nodes && ck->freed[pl->node])
                    s_item_push(
                        ck, &dem, &nd, &cd,
                        (s_item_t){pl->node, p->gangs[g].priority, p->gangs[g].pod_sets[j].requests, pl->count});
            }
    }
    for (int32_t i = 0; i < p->n_running && !ck->oom; i++) {
        if (!ck->a->running[i].preempted)
            continue;
        const rf_running_t *run = &p->running[i];
        for (int32_t j = 0; j < run->n_pod_sets; j++)
            for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
                s_item_push(ck, &sup, &ns, &cs,
                            (s_item_t){run->pod_sets[j].placements[k].node, run->priority, run->pod_sets[j].requests,
                                       run->pod_sets[j].placements[k].count});
    }
    if (!ck->oom && nd > 0) {
        qsort(dem, (size_t)nd, sizeof *dem, s_item_cmp);
        if (ns > 0)
            qsort(sup, (size_t)ns, sizeof *sup, s_item_cmp);
        for (int64_t a = 0, b = 0; a < nd;) {
            int32_t n = dem[a].node;
            int64_t a1 = a, b0;
            while (a1 < nd && dem[a1].node == n)
                a1++;
            while (b < ns && sup[b].node < n)
                b++;
            b0 = b;
            while (b < ns && sup[b].node == n)
                b++;
            s_check_node_prio(ck, n, dem + a, a1 - a, sup + b0, b - b0, need, need + p->n_resources);
            a = a1;
        }
    }
    free(dem);
    free(sup);
    free(need);
}

/* ------------------------------------------------------------------ */
/* Interface                                                            */

rf_status rf_check(const rf_problem_t *problem, const rf_answer_t *answer, rf_check_report_t *report, rf_error_t *err)
{
    if (!problem || !answer || !report)
        return rf_error_set(err, RF_EINVAL, "", "rf_check: NULL argument");
    memset(report, 0, sizeof *report);
    report->reported_totals_match = true;
    if (answer->problem != problem || answer->n_gangs != problem->n_gangs || (problem->n_gangs > 0 && !answer->gangs))
        return rf_error_set(err, RF_EINVAL, "", "rf_check: the answer is for another problem");

    const rf_problem_t *p = problem;
    s_ck_t ck = {.p = p, .a = answer, .rep = report};
    int32_t L = p->n_levels, N = p->n_nodes, R = p->n_resources;
    rf_status rc = RF_OK;
    ck.lv = calloc((size_t)N * (size_t)L + 1, sizeof *ck.lv);
    ck.add = calloc((size_t)N * (size_t)R + 1, sizeof *ck.add);
    ck.seen = calloc((size_t)N + 1, sizeof *ck.seen);
    ck.freed = calloc((size_t)N + 1, sizeof *ck.freed);
    if (!ck.lv || !ck.add || !ck.seen || !ck.freed)
        goto oom;
    if (p->n_running > 0 && (answer->n_running != p->n_running || !answer->running))
        goto other;
    for (int32_t n = 0; n < N; n++)
        for (int32_t l = 0; l < L; l++)
            ck.lv[(size_t)n * L + l] = s_find_label(&p->nodes[n], p->levels[l]);

    /* the problem's distinct priorities (gangs' and running gangs'),
     * highest first (insertion) */
    report->value = calloc((size_t)p->n_gangs + (size_t)p->n_running + 1, sizeof *report->value);
    if (!report->value)
        goto oom;
    for (int32_t g = 0; g < p->n_gangs + p->n_running; g++) {
        int64_t prio = g < p->n_gangs ? p->gangs[g].priority : p->running[g - p->n_gangs].priority;
        int32_t i = 0;
        while (i < report->n_value && report->value[i].priority > prio)
            i++;
        if (i < report->n_value && report->value[i].priority == prio)
            continue;
        memmove(&report->value[i + 1], &report->value[i], sizeof *report->value * (size_t)(report->n_value - i));
        report->value[i] = (rf_value_t){prio, 0, 0};
        report->n_value++;
    }

    int32_t stamp = 0;
    for (int32_t g = 0; g < p->n_gangs && !ck.oom; g++)
        s_check_gang(&ck, g, &stamp);
    if (ck.oom)
        goto oom;
    s_check_running(&ck);
    if (ck.oom)
        goto oom;
    s_check_capacity(&ck);
    s_check_freed_capacity(&ck);
    if (p->options.admission == RF_ADMIT_ORDERED)
        s_check_ordered(&ck);
    s_check_summary(&ck);
    if (ck.oom)
        goto oom;
    report->feasible = report->n_violations == 0;
    goto done;
other:
    rf_check_report_fini(report);
    rc = rf_error_set(err, RF_EINVAL, "", "rf_check: the answer's running gangs are not the problem's");
    goto done;
oom:
    rf_check_report_fini(report);
    rc = rf_error_set(err, RF_ENOMEM, "", "out of memory checking the answer");
done:
    free(ck.freed);
    free(ck.lv);
    free(ck.add);
    free(ck.seen);
    free(ck.rank_at);
    free(ck.nodes);
    return rc;
}

void rf_check_report_fini(rf_check_report_t *report)
{
    if (!report)
        return;
    int32_t n = report->n_violations < RF_CHECK_MAX_VIOLATIONS ? report->n_violations : RF_CHECK_MAX_VIOLATIONS;
    for (int32_t i = 0; i < n; i++)
        free(report->violations[i]);
    free(report->value);
    memset(report, 0, sizeof *report);
}
