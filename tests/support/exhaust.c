/* tests/support/exhaust.c: the exhaustive reference solver (see exhaust.h).
 *
 * One round per preempted subset of the running gangs (exhaust.h), each in
 * two phases, with one best answer kept across the rounds:
 * 1. per gang, in isolation: every vector of new-pod counts per pod set and
 *    node that meets the gang's own rules (eligibility, free capacity of the
 *    nodes taken alone at the gang's priority, min_count..count, required domains with bound pods,
 *    slices), each with its value and penalty, plus "rejected"; sorted best
 *    first by the gang's own key;
 * 2. a depth-first search over the gangs, highest priority first (problem
 *    order within a priority, so that ordered admission is a prefix rule),
 *    choosing one option per gang that fits what the earlier choices left.
 *    A branch is cut when even the best option of every later gang (in
 *    isolation) could not beat the best answer found: exact, since the key
 *    is a sum of per-gang keys and options are tried best first.
 * Only the public model (rackfit/problem.h) is read; nothing of solver/. */
#include "exhaust.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- data structures ---------------------------------------------------- */

#define S_N  RF_EXHAUST_MAX_NODES
#define S_G  RF_EXHAUST_MAX_GANGS
#define S_PS RF_EXHAUST_MAX_POD_SETS
#define S_K  RF_EXHAUST_MAX_RUNNING
#define S_P  RF_EXHAUST_MAX_PRIOS

typedef struct {
    int32_t cnt[S_PS][S_N];
    bool admitted;
    int64_t units, pods;
    double penalty;
    int32_t idx; /* enumeration order, for deterministic ties */
    bool ordered;
} s_opt_t;

/* The objective of a (partial) assignment, per priority index. */
typedef struct {
    int32_t adm[S_P];
    int64_t units[S_P];
    int64_t pods[S_P];
    double penalty;
} s_key_t;

typedef struct {
    const rf_problem_t *pb;
    int32_t N, G, R, L;
    int32_t vr; /* value resource, or -1 */
    bool ordered;
    int32_t dom[S_N][RF_MAX_LEVELS];
    bool elig[S_G][S_PS][S_N];
    int32_t bnd[S_G][S_PS][S_N];
    int32_t B[S_G][S_PS];
    int32_t n_prio;
    int64_t prio[S_P]; /* distinct priorities (gangs' and running gangs'), highest first */
    int32_t pk[S_G];   /* gang -> priority index */
    int32_t rk[S_K];   /* running gang -> priority index */
    int32_t K;         /* running gangs */
    uint32_t subset;   /* running gangs preempted in this round (bit i: running gang i) */
    s_opt_t run[S_K];  /* each running gang's placement (cnt), value and penalty while kept */
    /* phase 1 */
    s_opt_t *opt[S_G];
    int32_t n_opt[S_G], cap_opt[S_G];
    int32_t cur[S_PS][S_N];
    int64_t *crem; /* [N*R] capacity left while enumerating one gang */
    rf_status rc;
    /* phase 2 */
    int32_t order[S_G];
    int32_t choice[S_G];
    bool have_best;
    s_key_t best;
    bool best_adm[S_G];
    int32_t best_cnt[S_G][S_PS][S_N];
    uint32_t best_subset;
    int64_t *rem; /* [n_prio][N*R]: room left for new pods of priority <= prio[k] */
    int64_t visited;
} s_ctx_t;

/* ---- local methods ------------------------------------------------------ */

static const char *s_label(const rf_node_t *node, const char *key)
{
    for (int32_t i = 0; i < node->n_labels; i++)
        if (strcmp(node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

/* Kubernetes' ToleratesTaint. */
static bool s_tolerates(const rf_toleration_t *t, const rf_taint_t *taint)
{
    if (t->effect != RF_EFFECT_NONE && t->effect != taint->effect)
        return false;
    if (t->key && t->key[0] && strcmp(t->key, taint->key) != 0)
        return false;
    if (t->op == RF_TOL_EXISTS)
        return true;
    return strcmp(t->value ? t->value : "", taint->value ? taint->value : "") == 0;
}

static bool s_eligible(const rf_problem_t *pb, const rf_pod_set_t *ps, const rf_node_t *node)
{
    if (node->unschedulable)
        return false;
    for (int32_t l = 0; l < pb->n_levels; l++)
        if (!s_label(node, pb->levels[l]))
            return false;
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        const char *v = s_label(node, ps->node_selector[i].key);
        if (!v || strcmp(v, ps->node_selector[i].value) != 0)
            return false;
    }
    for (int32_t i = 0; i < node->n_taints; i++) {
        const rf_taint_t *taint = &node->taints[i];
        if (taint->effect != RF_EFFECT_NO_SCHEDULE && taint->effect != RF_EFFECT_NO_EXECUTE)
            continue;
        bool ok = false;
        for (int32_t k = 0; k < ps->n_tolerations && !ok; k++)
            ok = s_tolerates(&ps->tolerations[k], taint);
        if (!ok)
            return false;
    }
    return true;
}

/* Whether node n has every label of levels 0..l. */
static bool s_complete(const rf_problem_t *pb, int32_t n, int32_t l)
{
    for (int32_t k = 0; k <= l; k++)
        if (!s_label(&pb->nodes[n], pb->levels[k]))
            return false;
    return true;
}

/* Domain ids per level: the first node with the same label path, or the node
 * itself when it lacks one of the labels (then it is a domain of its own). */
static void s_domains(s_ctx_t *c)
{
    const rf_problem_t *pb = c->pb;
    for (int32_t l = 0; l < c->L; l++) {
        for (int32_t n = 0; n < c->N; n++) {
            c->dom[n][l] = n;
            if (!s_complete(pb, n, l))
                continue;
            for (int32_t m = 0; m < n; m++) {
                if (!s_complete(pb, m, l))
                    continue;
                bool same = true;
                for (int32_t k = 0; k <= l && same; k++)
                    same = strcmp(s_label(&pb->nodes[n], pb->levels[k]), s_label(&pb->nodes[m], pb->levels[k])) == 0;
                if (same) {
                    c->dom[n][l] = m;
                    break;
                }
            }
        }
    }
}

static int64_t s_sat_mul(int64_t a, int64_t b) /* a, b >= 0 */
{
    if (a != 0 && b > INT64_MAX / a)
        return INT64_MAX;
    return a * b;
}

static int64_t s_sat_add(int64_t a, int64_t b) /* a, b >= 0 */
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int s_pen_cmp(double a, double b) /* < 0 when a is less */
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    double tol = 1e-9 * (m > 1 ? m : 1);
    if (fabs(a - b) <= tol)
        return 0;
    return a < b ? -1 : 1;
}

/* > 0 when a's value part is better, < 0 when worse, 0 when equal. */
static int s_value_cmp(const s_ctx_t *c, const s_key_t *a, const s_key_t *b)
{
    for (int32_t k = 0; k < c->n_prio; k++) {
        if (c->ordered && a->adm[k] != b->adm[k])
            return a->adm[k] > b->adm[k] ? 1 : -1;
        if (a->units[k] != b->units[k])
            return a->units[k] > b->units[k] ? 1 : -1;
        if (a->pods[k] != b->pods[k])
            return a->pods[k] > b->pods[k] ? 1 : -1;
    }
    return 0;
}

static void s_key_add(s_key_t *k, int32_t pk, const s_opt_t *o)
{
    k->adm[pk] += o->admitted;
    k->units[pk] += o->units;
    k->pods[pk] += o->pods;
    k->penalty += o->penalty;
}

/* The value and penalty of gang g admitted with new pods cnt (bound pods
 * included). Hard constraints are not checked here. */
static void s_gang_figures(const s_ctx_t *c, int32_t g, const int32_t cnt[S_PS][S_N], s_opt_t *o)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    o->units = o->pods = 0;
    bool has[S_N] = {false};
    for (int32_t p = 0; p < gang->n_pod_sets; p++) {
        int64_t pods = c->B[g][p];
        for (int32_t n = 0; n < c->N; n++) {
            pods += cnt[p][n];
            has[n] |= cnt[p][n] > 0 || c->bnd[g][p][n] > 0;
        }
        o->pods += pods;
        if (c->vr >= 0)
            o->units = s_sat_add(o->units, s_sat_mul(pods, gang->pod_sets[p].requests[c->vr]));
    }
    double pen = 0;
    for (int32_t l = 0; l < c->L; l++) {
        int32_t d = 0;
        for (int32_t n = 0; n < c->N; n++) {
            if (!has[n])
                continue;
            bool seen = false;
            for (int32_t m = 0; m < n && !seen; m++)
                seen = has[m] && c->dom[m][l] == c->dom[n][l];
            d += !seen;
        }
        if (d > 1)
            pen += c->pb->level_costs[l] * (double)(d - 1);
    }
    o->penalty = gang->bandwidth * pen;
}

/* All pods (bound and new) of pod set p, or of the whole gang (p < 0), in
 * one domain of level l. */
static bool s_one_domain(const s_ctx_t *c, int32_t g, int32_t p, int32_t l, const int32_t cnt[S_PS][S_N])
{
    int32_t d = -1;
    const rf_gang_t *gang = &c->pb->gangs[g];
    for (int32_t q = 0; q < gang->n_pod_sets; q++) {
        if (p >= 0 && q != p)
            continue;
        for (int32_t n = 0; n < c->N; n++) {
            if (cnt[q][n] == 0 && c->bnd[g][q][n] == 0)
                continue;
            if (d >= 0 && c->dom[n][l] != d)
                return false;
            d = c->dom[n][l];
        }
    }
    return true;
}

/* Placing a new pod of (g, p) on node n keeps the required domains so far. */
static bool s_domain_ok(const s_ctx_t *c, int32_t g, int32_t p, int32_t n)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    int32_t lg = gang->topology.required, lp = gang->pod_sets[p].topology.required;
    for (int32_t q = 0; q < gang->n_pod_sets; q++) {
        for (int32_t m = 0; m < c->N; m++) {
            bool here = c->bnd[g][q][m] > 0 || (q < p && c->cur[q][m] > 0) || (q == p && m < n && c->cur[q][m] > 0);
            if (!here)
                continue;
            if (lg >= 0 && c->dom[m][lg] != c->dom[n][lg])
                return false;
            if (q == p && lp >= 0 && c->dom[m][lp] != c->dom[n][lp])
                return false;
        }
    }
    return true;
}

static bool s_pod_set_ok(const s_ctx_t *c, int32_t g, int32_t p, int32_t placed)
{
    const rf_pod_set_t *ps = &c->pb->gangs[g].pod_sets[p];
    if (c->B[g][p] + placed < ps->min_count || c->B[g][p] + placed > ps->count)
        return false;
    if (ps->topology.required >= 0 && !s_one_domain(c, g, p, ps->topology.required, c->cur))
        return false;
    if (ps->slice.size > 1) {
        /* no bound pods here (scope): slices fill ranks 0.. domain by domain */
        int32_t s = ps->slice.size, l = ps->slice.level;
        for (int32_t n = 0; n < c->N; n++) {
            if (c->dom[n][l] != n)
                continue; /* count each domain once, at its first node */
            int32_t sum = 0;
            for (int32_t m = 0; m < c->N; m++)
                if (c->dom[m][l] == n)
                    sum += c->cur[p][m];
            if (sum % s != 0)
                return false;
        }
    }
    return true;
}

static void s_push(s_ctx_t *c, int32_t g, const s_opt_t *o)
{
    if (c->rc != RF_OK)
        return;
    if (c->n_opt[g] == c->cap_opt[g]) {
        int32_t cap = c->cap_opt[g] ? c->cap_opt[g] * 2 : 64;
        s_opt_t *a = realloc(c->opt[g], (size_t)cap * sizeof *a);
        if (!a) {
            c->rc = RF_ENOMEM;
            return;
        }
        c->opt[g] = a;
        c->cap_opt[g] = cap;
    }
    s_opt_t *dst = &c->opt[g][c->n_opt[g]];
    *dst = *o;
    dst->idx = c->n_opt[g]++;
    dst->ordered = c->ordered;
}

static void s_gen(s_ctx_t *c, int32_t g, int32_t p, int32_t n, int32_t placed)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    if (c->rc != RF_OK)
        return;
    if (p == gang->n_pod_sets) {
        if (gang->topology.required >= 0 && !s_one_domain(c, g, -1, gang->topology.required, c->cur))
            return;
        s_opt_t o;
        memset(&o, 0, sizeof o);
        memcpy(o.cnt, c->cur, sizeof o.cnt);
        o.admitted = true;
        s_gang_figures(c, g, c->cur, &o);
        s_push(c, g, &o);
        return;
    }
    if (n == c->N) {
        if (s_pod_set_ok(c, g, p, placed))
            s_gen(c, g, p + 1, 0, 0);
        return;
    }
    const rf_pod_set_t *ps = &gang->pod_sets[p];
    int64_t maxx = 0;
    if (c->elig[g][p][n] && s_domain_ok(c, g, p, n)) {
        maxx = ps->count - c->B[g][p] - placed;
        for (int32_t r = 0; r < c->R; r++)
            if (ps->requests[r] > 0 && c->crem[n * c->R + r] / ps->requests[r] < maxx)
                maxx = c->crem[n * c->R + r] / ps->requests[r];
    }
    for (int32_t x = 0; x <= maxx; x++) {
        c->cur[p][n] = x;
        for (int32_t r = 0; r < c->R; r++)
            c->crem[n * c->R + r] -= x * ps->requests[r];
        s_gen(c, g, p, n + 1, placed + x);
        for (int32_t r = 0; r < c->R; r++)
            c->crem[n * c->R + r] += x * ps->requests[r];
    }
    c->cur[p][n] = 0;
}

/* Best first: (admitted, when ordered), units, pods, then penalty; ties by
 * enumeration order. */
static int s_opt_order(const void *pa, const void *pb)
{
    const s_opt_t *a = pa, *b = pb;
    if (a->ordered && a->admitted != b->admitted)
        return a->admitted ? -1 : 1;
    if (a->units != b->units)
        return a->units > b->units ? -1 : 1;
    if (a->pods != b->pods)
        return a->pods > b->pods ? -1 : 1;
    int pc = s_pen_cmp(a->penalty, b->penalty);
    if (pc != 0)
        return pc;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Whether option o of gang g fits in what is left at its priority and
 * every priority above (its pods count among "priority <= p" for each of
 * those p); if so, take it (sign +1) or give it back (-1). */
static bool s_take(s_ctx_t *c, int32_t g, const s_opt_t *o, int sign)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    if (!o->admitted)
        return true;
    size_t NR = (size_t)c->N * (size_t)c->R;
    for (int32_t k = 0; sign > 0 && k <= c->pk[g]; k++)
        for (int32_t n = 0; n < c->N; n++)
            for (int32_t r = 0; r < c->R; r++) {
                int64_t need = 0;
                for (int32_t p = 0; p < gang->n_pod_sets; p++)
                    need = s_sat_add(need, s_sat_mul(o->cnt[p][n], gang->pod_sets[p].requests[r]));
                if (need > c->rem[k * NR + (size_t)(n * c->R + r)])
                    return false;
            }
    for (int32_t k = 0; k <= c->pk[g]; k++)
        for (int32_t n = 0; n < c->N; n++)
            for (int32_t r = 0; r < c->R; r++)
                for (int32_t p = 0; p < gang->n_pod_sets; p++)
                    c->rem[k * NR + (size_t)(n * c->R + r)] -= sign * o->cnt[p][n] * gang->pod_sets[p].requests[r];
    return true;
}

/* Every running gang of the round's subset has a preemptor among the
 * chosen options: an admitted gang of higher priority with a new pod on one
 * of its nodes. */
static bool s_preemptors_ok(const s_ctx_t *c)
{
    for (int32_t i = 0; i < c->K; i++) {
        if (!(c->subset >> i & 1u))
            continue;
        bool found = false;
        for (int32_t j = 0; j < c->G && !found; j++) {
            int32_t g = c->order[j];
            const s_opt_t *o = &c->opt[g][c->choice[j]];
            if (!o->admitted || c->pb->gangs[g].priority <= c->pb->running[i].priority)
                continue;
            for (int32_t p = 0; p < S_PS && !found; p++)
                for (int32_t n = 0; n < c->N && !found; n++)
                    for (int32_t q = 0; q < S_PS && !found; q++)
                        found = o->cnt[p][n] > 0 && c->run[i].cnt[q][n] > 0;
        }
        if (!found)
            return false;
    }
    return true;
}

static void s_search(s_ctx_t *c, int32_t i, const s_key_t *partial)
{
    c->visited++;
    if (i == c->G) {
        if (!s_preemptors_ok(c))
            return;
        if (!c->have_best || s_value_cmp(c, partial, &c->best) > 0 ||
            (s_value_cmp(c, partial, &c->best) == 0 && s_pen_cmp(partial->penalty, c->best.penalty) < 0)) {
            c->have_best = true;
            c->best = *partial;
            c->best_subset = c->subset;
            for (int32_t j = 0; j < c->G; j++) {
                const s_opt_t *o = &c->opt[c->order[j]][c->choice[j]];
                c->best_adm[c->order[j]] = o->admitted;
                memcpy(c->best_cnt[c->order[j]], o->cnt, sizeof o->cnt);
            }
        }
        return;
    }
    int32_t g = c->order[i];
    bool forced = c->ordered && i > 0 && c->pb->gangs[c->order[i - 1]].priority == c->pb->gangs[g].priority &&
                  !c->opt[c->order[i - 1]][c->choice[i - 1]].admitted;
    for (int32_t k = 0; k < c->n_opt[g]; k++) {
        const s_opt_t *o = &c->opt[g][k];
        if (forced && o->admitted)
            continue;
        s_key_t key = *partial;
        s_key_add(&key, c->pk[g], o);
        if (c->have_best) {
            s_key_t bound = key;
            for (int32_t j = i + 1; j < c->G; j++) {
                int32_t h = c->order[j];
                bool same = c->pb->gangs[h].priority == c->pb->gangs[g].priority;
                if (c->ordered && same && (!o->admitted || forced))
                    continue; /* a later gang of a priority whose prefix has ended */
                s_key_add(&bound, c->pk[h], &c->opt[h][0]);
            }
            int vc = s_value_cmp(c, &bound, &c->best);
            if (vc < 0 || (vc == 0 && s_pen_cmp(bound.penalty, c->best.penalty) >= 0))
                break; /* later options are no better (sorted best first) */
        }
        if (!s_take(c, g, o, +1))
            continue;
        c->choice[i] = k;
        s_search(c, i + 1, &key);
        s_take(c, g, o, -1);
    }
}

/* Insert a priority into the distinct list, highest first. */
static void s_prio_add(s_ctx_t *c, int64_t prio)
{
    int32_t k = 0;
    while (k < c->n_prio && c->prio[k] > prio)
        k++;
    if (k < c->n_prio && c->prio[k] == prio)
        return;
    memmove(&c->prio[k + 1], &c->prio[k], (size_t)(c->n_prio - k) * sizeof c->prio[0]);
    c->prio[k] = prio;
    c->n_prio++;
}

/* A running gang's value and penalty while kept, from its placements. */
static void s_running_figures(s_ctx_t *c, int32_t i)
{
    const rf_running_t *run = &c->pb->running[i];
    s_opt_t *o = &c->run[i];
    bool has[S_N] = {false};
    o->admitted = false; /* kept, it counts in value and penalty, but running gangs are in no ordered prefix */
    for (int32_t p = 0; p < run->n_pod_sets; p++) {
        int64_t pods = 0;
        for (int32_t n = 0; n < c->N; n++) {
            pods += o->cnt[p][n];
            has[n] |= o->cnt[p][n] > 0;
        }
        o->pods += pods;
        if (c->vr >= 0)
            o->units = s_sat_add(o->units, s_sat_mul(pods, run->pod_sets[p].requests[c->vr]));
    }
    double pen = 0;
    for (int32_t l = 0; l < c->L; l++) {
        int32_t d = 0;
        for (int32_t n = 0; n < c->N; n++) {
            bool seen = false;
            for (int32_t m = 0; m < n && !seen; m++)
                seen = has[m] && c->dom[m][l] == c->dom[n][l];
            d += has[n] && !seen;
        }
        if (d > 1)
            pen += c->pb->level_costs[l] * (double)(d - 1);
    }
    o->penalty = run->bandwidth * pen;
}

static rf_status s_init(s_ctx_t *c, const rf_problem_t *pb)
{
    memset(c, 0, sizeof *c);
    c->pb = pb;
    c->N = pb->n_nodes;
    c->G = pb->n_gangs;
    c->R = pb->n_resources;
    c->L = pb->n_levels;
    c->vr = pb->options.value_resource;
    c->ordered = pb->options.admission == RF_ADMIT_ORDERED;
    c->K = pb->n_running;
    size_t nr = (size_t)(c->N > 0 ? c->N : 1) * (size_t)(c->R > 0 ? c->R : 1);
    c->crem = calloc(nr, sizeof *c->crem);
    c->rem = calloc(nr * S_P, sizeof *c->rem);
    if (!c->crem || !c->rem)
        return RF_ENOMEM;
    s_domains(c);
    for (int32_t g = 0; g < c->G; g++) {
        const rf_gang_t *gang = &pb->gangs[g];
        for (int32_t p = 0; p < gang->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gang->pod_sets[p];
            for (int32_t n = 0; n < c->N; n++)
                c->elig[g][p][n] = s_eligible(pb, ps, &pb->nodes[n]);
            for (int32_t b = 0; b < ps->n_bound; b++) {
                c->bnd[g][p][ps->bound[b].node] += ps->bound[b].count;
                c->B[g][p] += ps->bound[b].count;
            }
        }
        s_prio_add(c, gang->priority);
    }
    for (int32_t i = 0; i < c->K; i++) {
        const rf_running_t *run = &pb->running[i];
        for (int32_t p = 0; p < run->n_pod_sets; p++)
            for (int32_t k = 0; k < run->pod_sets[p].n_placements; k++)
                c->run[i].cnt[p][run->pod_sets[p].placements[k].node] += run->pod_sets[p].placements[k].count;
        s_running_figures(c, i);
        s_prio_add(c, run->priority);
    }
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t k = 0; k < c->n_prio; k++)
            if (c->prio[k] == pb->gangs[g].priority)
                c->pk[g] = k;
    for (int32_t i = 0; i < c->K; i++)
        for (int32_t k = 0; k < c->n_prio; k++)
            if (c->prio[k] == pb->running[i].priority)
                c->rk[i] = k;
    return RF_OK;
}

static void s_fini(s_ctx_t *c)
{
    for (int32_t g = 0; g < S_G; g++)
        free(c->opt[g]);
    free(c->crem);
    free(c->rem);
}

static void s_fill(const s_ctx_t *c, const s_key_t *key, rf_exhaust_t *out)
{
    out->ordered = c->ordered;
    out->n_value = c->n_prio;
    for (int32_t k = 0; k < c->n_prio; k++) {
        out->value[k].priority = c->prio[k];
        out->value[k].admitted = key->adm[k];
        out->value[k].units = key->units[k];
        out->value[k].pods = key->pods[k];
    }
    out->penalty = key->penalty;
}

/* ---- interface ---------------------------------------------------------- */

bool rf_exhaust_supported(const rf_problem_t *pb, const char **why)
{
    const char *w = NULL;
    if (pb->n_nodes > S_N)
        w = "too many nodes";
    else if (pb->n_gangs > S_G)
        w = "too many gangs";
    else if (pb->n_running > S_K)
        w = "too many running gangs";
    for (int32_t i = 0; !w && i < pb->n_running; i++)
        if (pb->running[i].n_pod_sets > S_PS)
            w = "too many pod sets in a running gang";
    for (int32_t g = 0; !w && g < pb->n_gangs; g++) {
        const rf_gang_t *gang = &pb->gangs[g];
        if (gang->n_pod_sets > S_PS)
            w = "too many pod sets in a gang";
        for (int32_t p = 0; !w && p < gang->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gang->pod_sets[p];
            if (ps->count > RF_EXHAUST_MAX_PODS)
                w = "a pod set's count is too large";
            else if (ps->slice.size > 1 && ps->n_bound_pods > 0)
                w = "a sliced pod set has bound pods";
        }
    }
    if (why)
        *why = w;
    return w == NULL;
}

/* The round of one preempted subset: rooms per priority, each gang's
 * options against its own priority's room, then the search. */
static rf_status s_round(s_ctx_t *c, rf_exhaust_t *out)
{
    const rf_problem_t *pb = c->pb;
    size_t NR = (size_t)c->N * (size_t)c->R;
    for (int32_t k = 0; k < c->n_prio; k++)
        for (int32_t n = 0; n < c->N; n++)
            for (int32_t r = 0; r < c->R; r++) {
                const rf_node_t *node = &pb->nodes[n];
                int64_t *room = &c->rem[k * NR + (size_t)(n * c->R + r)];
                if (node->allocatable[r] == RF_QTY_UNLIMITED) {
                    *room = RF_QTY_UNLIMITED;
                    continue;
                }
                int64_t freed = 0;
                for (int32_t i = 0; i < c->K; i++) {
                    if (!(c->subset >> i & 1u) || pb->running[i].priority >= c->prio[k])
                        continue;
                    for (int32_t p = 0; p < pb->running[i].n_pod_sets; p++)
                        freed += c->run[i].cnt[p][n] * pb->running[i].pod_sets[p].requests[r];
                }
                int64_t v = node->allocatable[r] - node->used[r] + freed;
                *room = v > 0 ? v : 0;
            }
    for (int32_t g = 0; g < c->G; g++) {
        c->n_opt[g] = 0;
        s_opt_t reject;
        memset(&reject, 0, sizeof reject);
        s_push(c, g, &reject);
        memcpy(c->crem, &c->rem[(size_t)c->pk[g] * NR], NR * sizeof *c->crem);
        memset(c->cur, 0, sizeof c->cur);
        s_gen(c, g, 0, 0, 0);
        if (c->rc != RF_OK)
            return c->rc;
        qsort(c->opt[g], (size_t)c->n_opt[g], sizeof *c->opt[g], s_opt_order);
        out->options += c->n_opt[g];
    }
    s_key_t start;
    memset(&start, 0, sizeof start);
    for (int32_t i = 0; i < c->K; i++)
        if (!(c->subset >> i & 1u))
            s_key_add(&start, c->rk[i], &c->run[i]);
    s_search(c, 0, &start);
    return RF_OK;
}

rf_status rf_exhaust_solve(const rf_problem_t *pb, rf_exhaust_t *out)
{
    memset(out, 0, sizeof *out);
    if (!rf_exhaust_supported(pb, NULL))
        return RF_EUNSUPPORTED;
    s_ctx_t *c = malloc(sizeof *c);
    if (!c)
        return RF_ENOMEM;
    rf_status rc = s_init(c, pb);
    /* highest priority first, problem order within a priority */
    for (int32_t g = 0; g < c->G; g++)
        c->order[g] = g;
    for (int32_t i = 1; i < c->G; i++)
        for (int32_t j = i; j > 0 && pb->gangs[c->order[j]].priority > pb->gangs[c->order[j - 1]].priority; j--) {
            int32_t t = c->order[j];
            c->order[j] = c->order[j - 1];
            c->order[j - 1] = t;
        }
    uint32_t allowed = 0; /* running gangs that may be preempted */
    for (int32_t i = 0; i < c->K; i++)
        if (pb->running[i].preemptible && pb->options.preemption == RF_PREEMPT_LOWER_PRIORITY)
            allowed |= 1u << i;
    for (uint32_t subset = 0; rc == RF_OK && subset < (1u << c->K); subset++) {
        if (subset & ~allowed)
            continue;
        c->subset = subset;
        rc = s_round(c, out);
    }
    if (rc == RF_OK) {
        out->visited = c->visited;
        s_fill(c, &c->best, out);
        for (int32_t g = 0; g < c->G; g++) {
            out->admitted[g] = c->best_adm[g];
            memcpy(out->count[g], c->best_cnt[g], sizeof c->best_cnt[g]);
        }
        for (int32_t i = 0; i < c->K; i++)
            out->preempted[i] = c->best_subset >> i & 1u;
    }
    s_fini(c);
    free(c);
    return rc;
}

rf_status rf_exhaust_to_answer(const rf_problem_t *pb, const rf_exhaust_t *ex, rf_answer_t **out)
{
    *out = NULL;
    if (!rf_exhaust_supported(pb, NULL))
        return RF_EUNSUPPORTED;
    rf_answer_t *a = rf_answer_new(pb);
    if (!a)
        return RF_ENOMEM;
    rf_status rc = RF_OK;
    for (int32_t g = 0; rc == RF_OK && g < pb->n_gangs; g++) {
        const rf_gang_t *gang = &pb->gangs[g];
        if (!ex->admitted[g]) {
            rf_why_t why = {-1, -1, -1, -1};
            rc = rf_answer_reject(a, g, why, "not admitted by the exhaustive optimum");
            continue;
        }
        for (int32_t p = 0; rc == RF_OK && p < gang->n_pod_sets; p++) {
            const rf_pod_set_t *ps = &gang->pod_sets[p];
            /* slice domain by slice domain (in order of their first node), so
             * that every s consecutive ranks share one domain */
            bool done[S_N] = {false};
            for (int32_t n = 0; rc == RF_OK && n < pb->n_nodes; n++) {
                if (done[n])
                    continue;
                for (int32_t m = n; rc == RF_OK && m < pb->n_nodes; m++) {
                    bool same = m == n;
                    if (!same && ps->slice.size > 1 && !done[m]) {
                        const rf_node_t *a1 = &pb->nodes[n], *a2 = &pb->nodes[m];
                        same = true; /* same path down to the slice level (eligible nodes have every label) */
                        for (int32_t l = 0; l <= ps->slice.level && same; l++) {
                            const char *v1 = s_label(a1, pb->levels[l]);
                            const char *v2 = s_label(a2, pb->levels[l]);
                            same = v1 && v2 && strcmp(v1, v2) == 0;
                        }
                    }
                    if (!same)
                        continue;
                    done[m] = true;
                    if (ex->count[g][p][m] > 0)
                        rc = rf_answer_add(a, g, p, m, ex->count[g][p][m]);
                }
            }
        }
        a->gangs[g].admitted = true; /* also when admitted on bound pods alone */
    }
    for (int32_t i = 0; rc == RF_OK && i < pb->n_running; i++)
        rc = rf_answer_preempt(a, i, ex->preempted[i]);
    if (rc != RF_OK) {
        rf_answer_destroy(&a);
        return rc;
    }
    *out = a;
    return RF_OK;
}

rf_status rf_exhaust_evaluate(const rf_problem_t *pb, const rf_answer_t *answer, rf_exhaust_t *out)
{
    memset(out, 0, sizeof *out);
    if (!rf_exhaust_supported(pb, NULL) || answer->n_gangs != pb->n_gangs)
        return RF_EUNSUPPORTED;
    s_ctx_t *c = malloc(sizeof *c);
    if (!c)
        return RF_ENOMEM;
    rf_status rc = s_init(c, pb);
    s_key_t key;
    memset(&key, 0, sizeof key);
    for (int32_t g = 0; rc == RF_OK && g < pb->n_gangs; g++) {
        const rf_gang_answer_t *ga = &answer->gangs[g];
        if (!ga->admitted)
            continue;
        s_opt_t o;
        memset(&o, 0, sizeof o);
        o.admitted = true;
        for (int32_t p = 0; ga->pod_sets && p < pb->gangs[g].n_pod_sets; p++)
            for (int32_t i = 0; i < ga->pod_sets[p].n_placements; i++) {
                const rf_placement_t *pl = &ga->pod_sets[p].placements[i];
                if (pl->node >= 0 && pl->node < c->N)
                    o.cnt[p][pl->node] += pl->count;
            }
        s_gang_figures(c, g, o.cnt, &o);
        s_key_add(&key, c->pk[g], &o);
        out->admitted[g] = true;
        memcpy(out->count[g], o.cnt, sizeof o.cnt);
    }
    for (int32_t i = 0; rc == RF_OK && i < c->K; i++) {
        out->preempted[i] = answer->n_running == c->K && answer->running[i].preempted;
        if (!out->preempted[i])
            s_key_add(&key, c->rk[i], &c->run[i]);
    }
    if (rc == RF_OK)
        s_fill(c, &key, out);
    s_fini(c);
    free(c);
    return rc;
}

int rf_exhaust_cmp(const rf_exhaust_t *a, const rf_exhaust_t *b)
{
    int32_t n = a->n_value < b->n_value ? a->n_value : b->n_value;
    for (int32_t k = 0; k < n; k++) {
        const rf_exhaust_value_t *x = &a->value[k], *y = &b->value[k];
        if (a->ordered && x->admitted != y->admitted)
            return x->admitted > y->admitted ? -1 : 1;
        if (x->units != y->units)
            return x->units > y->units ? -1 : 1;
        if (x->pods != y->pods)
            return x->pods > y->pods ? -1 : 1;
    }
    return s_pen_cmp(a->penalty, b->penalty);
}

int rf_exhaust_compare(const rf_problem_t *pb, const rf_answer_t *answer)
{
    rf_exhaust_t opt, got;
    if (rf_exhaust_solve(pb, &opt) != RF_OK || rf_exhaust_evaluate(pb, answer, &got) != RF_OK)
        return RF_EXHAUST_UNSUPPORTED;
    return rf_exhaust_cmp(&got, &opt);
}

void rf_exhaust_randprob_opts(rf_randprob_opts_t *o)
{
    rf_randprob_default(o);
    o->max_nodes = RF_EXHAUST_MAX_NODES;
    o->max_gangs = RF_EXHAUST_MAX_GANGS;
    o->max_pods = RF_EXHAUST_MAX_PODS;
    o->max_pod_sets = RF_EXHAUST_MAX_POD_SETS;
    o->slice_bound = false;
}
