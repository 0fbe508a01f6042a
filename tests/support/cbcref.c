/* tests/support/cbcref.c: the CBC reference (see cbcref.h).
 *
 * One LP file per stage in a fresh temporary directory (removed after):
 * the model (rows below), the optima of the earlier stages as rows, and the
 * stage's objective. `cbc FILE solve solu OUT` writes "Optimal - ..." and
 * then one line per nonzero column; the stage's optimum is recomputed here
 * from the solution's x, y and q (integers), so the objective's sign
 * convention in cbc's output does not matter. The penalty is recomputed
 * from the solution as well (D(g,l) over the nodes that hold pods of the
 * gang, bound ones included; running gangs' D over their placements), which
 * is the contract's definition. Capacity rows are divided by the gcd of
 * their coefficients (and the right side floored), exact for integers, to
 * keep byte-sized memory figures small for cbc.
 *
 * The rows, each from PLACEMENT-MODEL.md (section in brackets):
 * - cnt: (min - B) y <= sum x <= (count - B) y, B the bound pods [Gangs];
 * - lk, gd, pv, pr: x <= count u at every level; sum_d u >= y; at most one
 *   domain of a required level (gang's u, pod set's v); a domain holding
 *   bound pods has u = y (and v = y) [Gangs: topology, bound];
 * - sl: in every domain d of a slice's level, the pod set's new pods are
 *   s w_d, w_d integer: laid out domain by domain, every s consecutive
 *   ranks share one domain [Gangs: slice; no bound pods in a sliced pod set
 *   here, as their ranks would decide];
 * - ord: y of consecutive gangs of one priority non-increasing, and a stage
 *   per priority that maximises the gangs admitted before its value
 *   [Options: admission ordered];
 * - cap: per node, resource and priority p of the gangs, the new pods of
 *   priority <= p fit in max(0, allocatable - used + freed(p)), freed(p)
 *   what the preempted running gangs of priority < p use there (q binary;
 *   with a binary b when allocatable - used < 0, for the max) [Running
 *   gangs and preemption];
 * - pre: q_r <= the new pods of higher-priority gangs on r's nodes (a
 *   preemptor exists); q_r = 0 when not preemptible or under `never`;
 * - the objective: kept running gangs count their value (1 - q) at their
 *   priority and their penalty (1 - q) [The objective]. */
#include "cbcref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rackfit/quantity.h"

#define S_MAX_STAGES (2 * RF_CBCREF_MAX_PRIOS + 1)

typedef struct {
    int kind; /* 0: prefix (ordered), 1: value, 2: penalty */
    int32_t k;
} s_stage_t;

typedef struct {
    const rf_problem_t *pb;
    int32_t N, G, L, NR;
    int32_t *dom; /* [L*N]: domain id (first node with the same label path) */
    bool *elig;   /* [G*P*N] with P = max pod sets */
    int32_t *bnd; /* [G*P*N] bound pods */
    int32_t P;
    int32_t n_prio;
    int64_t prio[RF_CBCREF_MAX_PRIOS];
    int32_t n_stage;
    s_stage_t stage[S_MAX_STAGES];
    int64_t opt[S_MAX_STAGES]; /* stage optima found so far */
    int64_t M;
    int64_t *run_units, *run_pods; /* [NR] kept value */
    double *run_pen;               /* [NR] kept penalty, D over its placements */
    bool *can_q;                   /* [NR] may be preempted */
    int32_t *x;                    /* [G*P*N] solution */
    int32_t *y;                    /* [G] */
    int32_t *q;                    /* [NR] */
    char dir[64];
} s_ctx_t;

#define S_IX(c, g, p, n) (((size_t)(g) * (size_t)(c)->P + (size_t)(p)) * (size_t)(c)->N + (size_t)(n))

static const char *s_label(const rf_node_t *node, const char *key)
{
    for (int32_t i = 0; i < node->n_labels; i++)
        if (strcmp(node->labels[i].key, key) == 0)
            return node->labels[i].value;
    return NULL;
}

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

/* Kubernetes' rules, written again here (PLACEMENT-MODEL.md section 1). */
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

bool rf_cbcref_available(void)
{
    return system("command -v cbc >/dev/null 2>&1") == 0;
}

bool rf_cbcref_supported(const rf_problem_t *pb, const char **why)
{
    const char *w = NULL;
    int64_t prios[2 * RF_CBCREF_MAX_PRIOS];
    int32_t n = 0;
    for (int32_t i = 0; i < pb->n_gangs + pb->n_running && !w; i++) {
        int64_t pr = i < pb->n_gangs ? pb->gangs[i].priority : pb->running[i - pb->n_gangs].priority;
        int32_t k = 0;
        while (k < n && prios[k] != pr)
            k++;
        if (k == n && n == RF_CBCREF_MAX_PRIOS)
            w = "more priorities than RF_CBCREF_MAX_PRIOS";
        else if (k == n)
            prios[n++] = pr;
    }
    for (int32_t g = 0; g < pb->n_gangs && !w; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets && !w; p++)
            if (pb->gangs[g].pod_sets[p].slice.size > 1 && pb->gangs[g].pod_sets[p].n_bound > 0)
                w = "bound pods in a sliced pod set (their ranks decide the slices) are not modelled";
    if (why)
        *why = w;
    return w == NULL;
}

/* ---- model -------------------------------------------------------------- */

static int64_t s_gcd(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t s_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t s_units(const s_ctx_t *c, const rf_pod_set_t *ps)
{
    int32_t vr = c->pb->options.value_resource;
    return vr >= 0 ? ps->requests[vr] : 0;
}

static int32_t s_prio_index(const s_ctx_t *c, int64_t prio)
{
    for (int32_t k = 0; k < c->n_prio; k++)
        if (c->prio[k] == prio)
            return k;
    return -1;
}

/* A running gang's use of resource r on node n. */
static int64_t s_run_use(const s_ctx_t *c, int32_t i, int32_t n, int32_t r)
{
    const rf_running_t *run = &c->pb->running[i];
    int64_t use = 0;
    for (int32_t p = 0; p < run->n_pod_sets; p++)
        for (int32_t k = 0; k < run->pod_sets[p].n_placements; k++)
            if (run->pod_sets[p].placements[k].node == n)
                use += run->pod_sets[p].placements[k].count * run->pod_sets[p].requests[r];
    return use;
}

static void s_term(FILE *f, int *terms, long long coef, const char *name)
{
    if (coef == 0)
        return;
    fprintf(f, " %c %lld %s", coef < 0 ? '-' : '+', coef < 0 ? -coef : coef, name);
    if (++*terms % 8 == 0)
        fputc('\n', f);
}

/* Priority k's value less its kept running gangs' constant: sum over its
 * gangs of (units M + 1) (x + B y), minus (units M + pods) q of its
 * running gangs. */
static void s_value_terms(const s_ctx_t *c, FILE *f, int32_t k)
{
    int terms = 0;
    char nm[48];
    for (int32_t g = 0; g < c->G; g++) {
        const rf_gang_t *gang = &c->pb->gangs[g];
        if (s_prio_index(c, gang->priority) != k)
            continue;
        long long wy = 0;
        for (int32_t p = 0; p < gang->n_pod_sets; p++) {
            int64_t w = s_units(c, &gang->pod_sets[p]) * c->M + 1;
            wy += (long long)(w * gang->pod_sets[p].n_bound_pods);
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)]) {
                    snprintf(nm, sizeof nm, "x_%d_%d_%d", g, p, n);
                    s_term(f, &terms, w, nm);
                }
        }
        snprintf(nm, sizeof nm, "y_%d", g);
        s_term(f, &terms, wy, nm);
    }
    for (int32_t i = 0; i < c->NR; i++)
        if (c->can_q[i] && s_prio_index(c, c->pb->running[i].priority) == k) {
            snprintf(nm, sizeof nm, "q_%d", i);
            s_term(f, &terms, -(c->run_units[i] * c->M + c->run_pods[i]), nm);
        }
    if (!terms)
        fprintf(f, " + 0 y_0");
}

static void s_prefix_terms(const s_ctx_t *c, FILE *f, int32_t k)
{
    int terms = 0;
    char nm[48];
    for (int32_t g = 0; g < c->G; g++)
        if (s_prio_index(c, c->pb->gangs[g].priority) == k) {
            snprintf(nm, sizeof nm, "y_%d", g);
            s_term(f, &terms, 1, nm);
        }
    if (!terms)
        fprintf(f, " + 0 y_0");
}

/* Does pod set p of gang g have bound pods in domain d of level l? */
static bool s_bound_in(const s_ctx_t *c, int32_t g, int32_t p, int32_t l, int32_t d)
{
    for (int32_t n = 0; n < c->N; n++)
        if (c->dom[l * c->N + n] == d && c->bnd[S_IX(c, g, p, n)] > 0)
            return true;
    return false;
}

/* Gang g may use domain d of level l (a node n with dom[l][n] == d is
 * eligible for one of its pod sets, or holds its bound pods). */
static bool s_gang_domain(const s_ctx_t *c, int32_t g, int32_t l, int32_t d)
{
    for (int32_t n = 0; n < c->N; n++)
        if (c->dom[l * c->N + n] == d)
            for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets; p++)
                if (c->elig[S_IX(c, g, p, n)] || c->bnd[S_IX(c, g, p, n)] > 0)
                    return true;
    return false;
}

static void s_penalty_terms(const s_ctx_t *c, FILE *f)
{
    for (int32_t g = 0; g < c->G; g++) {
        double bw = c->pb->gangs[g].bandwidth, sum = 0;
        for (int32_t l = 0; l < c->L; l++)
            sum += bw * c->pb->level_costs[l];
        fprintf(f, "\n - %.17g y_%d", sum, g);
        for (int32_t l = 0; l < c->L; l++) {
            double w = bw * c->pb->level_costs[l];
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[l * c->N + d] == d && s_gang_domain(c, g, l, d))
                    fprintf(f, " + %.17g u_%d_%d_%d", w, g, l, d);
        }
    }
    for (int32_t i = 0; i < c->NR; i++) /* a preempted gang's penalty is 0 */
        if (c->can_q[i] && c->run_pen[i] > 0)
            fprintf(f, "\n - %.17g q_%d", c->run_pen[i], i);
}

/* Domain d of pod set p's slice level has an eligible node (a w column). */
static bool s_slice_dom(const s_ctx_t *c, int32_t g, int32_t p, int32_t d)
{
    const int32_t sl = c->pb->gangs[g].pod_sets[p].slice.level;
    if (c->pb->gangs[g].pod_sets[p].slice.size <= 1 || c->dom[sl * c->N + d] != d)
        return false;
    for (int32_t n = 0; n < c->N; n++)
        if (c->dom[sl * c->N + n] == d && c->elig[S_IX(c, g, p, n)])
            return true;
    return false;
}

/* Rows of one pod set: counts, linking, its required level, its slices. */
static void s_pod_set_rows(const s_ctx_t *c, FILE *f, int32_t g, int32_t p)
{
    const rf_pod_set_t *ps = &c->pb->gangs[g].pod_sets[p];
    const int64_t B = ps->n_bound_pods;
    for (int side = 0; side < 2; side++) {
        int64_t need = (side ? ps->count : ps->min_count) - B;
        fprintf(f, " cnt%d_%d_%d: %lld y_%d", side, g, p, -(long long)(need > 0 ? need : 0), g);
        for (int32_t n = 0; n < c->N; n++)
            if (c->elig[S_IX(c, g, p, n)])
                fprintf(f, " + x_%d_%d_%d%s", g, p, n, n % 8 == 7 ? "\n" : "");
        fprintf(f, side ? " <= 0\n" : " >= 0\n");
    }
    const int32_t rl = ps->topology.required;
    for (int32_t n = 0; n < c->N; n++) {
        if (!c->elig[S_IX(c, g, p, n)])
            continue;
        for (int32_t l = 0; l < c->L; l++)
            fprintf(f, " lk_%d_%d_%d_%d: x_%d_%d_%d - %lld u_%d_%d_%d <= 0\n", g, p, n, l, g, p, n,
                    (long long)ps->count, g, l, c->dom[l * c->N + n]);
        if (rl >= 0)
            fprintf(f, " pv_%d_%d_%d: x_%d_%d_%d - %lld v_%d_%d_%d <= 0\n", g, p, n, g, p, n, (long long)ps->count, g,
                    p, c->dom[rl * c->N + n]);
    }
    if (rl >= 0) {
        fprintf(f, " pr_%d_%d: 0 y_%d", g, p, g);
        for (int32_t d = 0; d < c->N; d++)
            if (c->dom[rl * c->N + d] == d && s_gang_domain(c, g, rl, d))
                fprintf(f, " + v_%d_%d_%d\n", g, p, d);
        fprintf(f, " <= 1\n");
        for (int32_t d = 0; d < c->N; d++)
            if (c->dom[rl * c->N + d] == d && s_bound_in(c, g, p, rl, d)) /* bound pods there: v = y */
                fprintf(f, " pb_%d_%d_%d: v_%d_%d_%d - y_%d >= 0\n", g, p, d, g, p, d, g);
    }
    const int32_t sl = ps->slice.level;
    for (int32_t d = 0; ps->slice.size > 1 && d < c->N; d++) {
        if (!s_slice_dom(c, g, p, d))
            continue;
        fprintf(f, " sl_%d_%d_%d: - %d w_%d_%d_%d", g, p, d, ps->slice.size, g, p, d);
        for (int32_t n = 0; n < c->N; n++)
            if (c->dom[sl * c->N + n] == d && c->elig[S_IX(c, g, p, n)])
                fprintf(f, " + x_%d_%d_%d%s", g, p, n, n % 8 == 7 ? "\n" : "");
        fprintf(f, " = 0\n");
    }
}

/* Rows of one gang: its pod sets', its domains (at least one per level when
 * admitted, at most one at its required level, bound pods' domains used). */
static void s_gang_rows(const s_ctx_t *c, FILE *f, int32_t g)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    for (int32_t p = 0; p < gang->n_pod_sets; p++)
        s_pod_set_rows(c, f, g, p);
    for (int32_t l = 0; l < c->L; l++) {
        for (int side = 0; side < 2; side++) {
            if (side && gang->topology.required != l)
                continue;
            fprintf(f, " gd%d_%d_%d: %s y_%d", side, g, l, side ? "0" : "-1", g);
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[l * c->N + d] == d && s_gang_domain(c, g, l, d))
                    fprintf(f, " + u_%d_%d_%d\n", g, l, d);
            fprintf(f, side ? " <= 1\n" : " >= 0\n");
        }
        for (int32_t d = 0; d < c->N; d++) {
            bool b = false;
            for (int32_t p = 0; p < gang->n_pod_sets && !b && c->dom[l * c->N + d] == d; p++)
                b = s_bound_in(c, g, p, l, d);
            if (b) /* its bound pods are there when it is admitted */
                fprintf(f, " gb_%d_%d_%d: u_%d_%d_%d - y_%d >= 0\n", g, l, d, g, l, d, g);
        }
    }
}

/* admission: ordered: within a priority, admitted gangs are a prefix. */
static void s_order_rows(const s_ctx_t *c, FILE *f)
{
    if (c->pb->options.admission != RF_ADMIT_ORDERED)
        return;
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t h = g + 1; h < c->G; h++)
            if (c->pb->gangs[h].priority == c->pb->gangs[g].priority) {
                fprintf(f, " ord_%d: y_%d - y_%d >= 0\n", g, g, h);
                break;
            }
}

/* The capacity row of node n, resource r, for the new pods of priority
 * <= prio[k] (k a priority of some gang): written when `rows`, else only
 * its binary (when it needs one) declared. */
static void s_cap_row(const s_ctx_t *c, FILE *f, int32_t n, int32_t r, int32_t k, bool rows)
{
    const rf_problem_t *pb = c->pb;
    const int64_t p = c->prio[k];
    int64_t gcd = 0, most = 0;
    bool lhs = false, freed = false;
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t s = 0; s < pb->gangs[g].n_pod_sets && pb->gangs[g].priority <= p; s++)
            if (c->elig[S_IX(c, g, s, n)] && pb->gangs[g].pod_sets[s].requests[r] > 0) {
                gcd = s_gcd(pb->gangs[g].pod_sets[s].requests[r], gcd);
                most += pb->gangs[g].pod_sets[s].requests[r] * pb->gangs[g].pod_sets[s].count;
                lhs = true;
            }
    for (int32_t i = 0; i < c->NR; i++)
        if (c->can_q[i] && pb->running[i].priority < p && s_run_use(c, i, n, r) > 0) {
            gcd = s_gcd(s_run_use(c, i, n, r), gcd);
            freed = true;
        }
    if (!lhs)
        return;
    const int64_t c0 = pb->nodes[n].allocatable[r] - pb->nodes[n].used[r];
    const bool need_b = freed && c0 < 0; /* max(0, c0 + freed): 0 unless the pods fit in c0 + freed */
    if (!rows) {
        if (need_b)
            fprintf(f, " b_%d_%d_%d\n", n, r, k);
        return;
    }
    const int64_t Mb = most / gcd;
    for (int pass = need_b ? 0 : 1; pass < 2; pass++) {
        fprintf(f, " cap%d_%d_%d_%d: 0 y_0", pass, n, r, k);
        for (int32_t g = 0; g < c->G; g++)
            for (int32_t s = 0; s < pb->gangs[g].n_pod_sets && pb->gangs[g].priority <= p; s++)
                if (c->elig[S_IX(c, g, s, n)] && pb->gangs[g].pod_sets[s].requests[r] > 0)
                    fprintf(f, " + %lld x_%d_%d_%d\n", (long long)(pb->gangs[g].pod_sets[s].requests[r] / gcd), g, s,
                            n);
        if (pass == 0) { /* b = 0: no new pods here */
            fprintf(f, " - %lld b_%d_%d_%d <= 0\n", (long long)Mb, n, r, k);
            continue;
        }
        for (int32_t i = 0; i < c->NR; i++)
            if (c->can_q[i] && pb->running[i].priority < p && s_run_use(c, i, n, r) > 0)
                fprintf(f, " - %lld q_%d\n", (long long)(s_run_use(c, i, n, r) / gcd), i);
        if (need_b)
            fprintf(f, " + %lld b_%d_%d_%d <= %lld\n", (long long)Mb, n, r, k, (long long)(s_floor_div(c0, gcd) + Mb));
        else
            fprintf(f, " <= %lld\n", (long long)(freed ? s_floor_div(c0, gcd) : s_floor_div(c0 > 0 ? c0 : 0, gcd)));
    }
}

/* Capacity: per node, limited resource and priority of the gangs (only the
 * highest when nothing can be preempted: the others are implied). */
static void s_capacity_rows(const s_ctx_t *c, FILE *f, bool rows)
{
    bool anyq = false;
    for (int32_t i = 0; i < c->NR; i++)
        anyq |= c->can_q[i];
    for (int32_t n = 0; n < c->N; n++)
        for (int32_t r = 0; r < c->pb->n_resources; r++) {
            if (c->pb->nodes[n].allocatable[r] == RF_QTY_UNLIMITED)
                continue;
            for (int32_t k = 0; k < c->n_prio; k++) {
                bool gangs = false;
                for (int32_t g = 0; g < c->G && !gangs; g++)
                    gangs = c->pb->gangs[g].priority == c->prio[k];
                if (!gangs)
                    continue;
                s_cap_row(c, f, n, r, k, rows);
                if (!anyq)
                    break; /* prio is highest first: this row holds every gang */
            }
        }
}

/* A running gang is preempted only with a preemptor: an admitted gang of
 * higher priority with a new pod on one of its nodes. */
static void s_preempt_rows(const s_ctx_t *c, FILE *f)
{
    for (int32_t i = 0; i < c->NR; i++) {
        if (!c->can_q[i])
            continue;
        const rf_running_t *run = &c->pb->running[i];
        fprintf(f, " pre_%d: q_%d", i, i);
        for (int32_t n = 0; n < c->N; n++) {
            bool on = false;
            for (int32_t p = 0; p < run->n_pod_sets && !on; p++)
                for (int32_t k = 0; k < run->pod_sets[p].n_placements; k++)
                    on |= run->pod_sets[p].placements[k].node == n;
            for (int32_t g = 0; g < c->G && on; g++)
                for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets && c->pb->gangs[g].priority > run->priority; p++)
                    if (c->elig[S_IX(c, g, p, n)])
                        fprintf(f, " - x_%d_%d_%d\n", g, p, n);
        }
        fprintf(f, " <= 0\n");
    }
}

static void s_columns(const s_ctx_t *c, FILE *f)
{
    const rf_problem_t *pb = c->pb;
    fprintf(f, "Bounds\n");
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " 0 <= x_%d_%d_%d <= %lld\n", g, p, n, (long long)ps->count);
            for (int32_t d = 0; d < c->N; d++)
                if (s_slice_dom(c, g, p, d))
                    fprintf(f, " 0 <= w_%d_%d_%d <= %lld\n", g, p, d, (long long)(ps->count / ps->slice.size));
        }
    fprintf(f, "Generals\n");
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " x_%d_%d_%d\n", g, p, n);
            for (int32_t d = 0; d < c->N; d++)
                if (s_slice_dom(c, g, p, d))
                    fprintf(f, " w_%d_%d_%d\n", g, p, d);
        }
    fprintf(f, "Binaries\n");
    for (int32_t g = 0; g < c->G; g++) {
        fprintf(f, " y_%d\n", g);
        for (int32_t l = 0; l < c->L; l++)
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[l * c->N + d] == d && s_gang_domain(c, g, l, d))
                    fprintf(f, " u_%d_%d_%d\n", g, l, d);
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            int32_t rl = pb->gangs[g].pod_sets[p].topology.required;
            for (int32_t d = 0; d < c->N && rl >= 0; d++)
                if (c->dom[rl * c->N + d] == d && s_gang_domain(c, g, rl, d))
                    fprintf(f, " v_%d_%d_%d\n", g, p, d);
        }
    }
    for (int32_t i = 0; i < c->NR; i++)
        if (c->can_q[i])
            fprintf(f, " q_%d\n", i);
    s_capacity_rows(c, f, false);
    fprintf(f, "End\n");
}

/* Stage si: c->stage[si] (a prefix, a value, or the penalty), the earlier
 * stages' optima as rows. */
static bool s_write(const s_ctx_t *c, int32_t si, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    const s_stage_t *st = &c->stage[si];
    fprintf(f, st->kind < 2 ? "Maximize\n obj:" : "Minimize\n obj:");
    if (st->kind == 0)
        s_prefix_terms(c, f, st->k);
    else if (st->kind == 1)
        s_value_terms(c, f, st->k);
    else
        s_penalty_terms(c, f);
    fprintf(f, "\nSubject To\n");
    for (int32_t j = 0; j < si; j++) {
        fprintf(f, " fix_%d:", j);
        if (c->stage[j].kind == 0)
            s_prefix_terms(c, f, c->stage[j].k);
        else
            s_value_terms(c, f, c->stage[j].k);
        fprintf(f, " >= %lld\n", (long long)c->opt[j]);
    }
    for (int32_t g = 0; g < c->G; g++)
        s_gang_rows(c, f, g);
    s_order_rows(c, f);
    s_capacity_rows(c, f, true);
    s_preempt_rows(c, f);
    s_columns(c, f);
    return fclose(f) == 0;
}

/* Run cbc on stage si and read x, y and q. */
static bool s_run(s_ctx_t *c, int32_t si, char *err, size_t errlen)
{
    char lp[128], sol[128], cmd[512];
    snprintf(lp, sizeof lp, "%s/stage%d.lp", c->dir, si);
    snprintf(sol, sizeof sol, "%s/stage%d.sol", c->dir, si);
    if (!s_write(c, si, lp)) {
        snprintf(err, errlen, "cannot write %s", lp);
        return false;
    }
    const char *sec = getenv("RF_CBCREF_SEC"); /* cbc's own time limit per stage: then "not optimal" */
    snprintf(cmd, sizeof cmd, "cbc %s sec %d solve solu %s >%s/stage%d.log 2>&1", lp, sec ? atoi(sec) : 600, sol,
             c->dir, si);
    if (system(cmd) != 0) {
        snprintf(err, errlen, "cbc failed on %s (see %s/stage%d.log)", lp, c->dir, si);
        return false;
    }
    FILE *f = fopen(sol, "r");
    if (!f) {
        snprintf(err, errlen, "cbc wrote no solution file %s", sol);
        return false;
    }
    char line[512];
    bool ok = fgets(line, sizeof line, f) && strncmp(line, "Optimal", 7) == 0;
    if (!ok)
        snprintf(err, errlen, "cbc stage %d: not optimal: %.200s", si, line);
    memset(c->x, 0, sizeof(int32_t) * (size_t)c->G * (size_t)c->P * (size_t)c->N);
    memset(c->y, 0, sizeof(int32_t) * (size_t)(c->G + 1));
    memset(c->q, 0, sizeof(int32_t) * (size_t)(c->NR + 1));
    while (ok && fgets(line, sizeof line, f)) {
        int idx, g, p, n;
        double v;
        char *s = line;
        while (*s == ' ' || *s == '*')
            s++;
        if (sscanf(s, "%d x_%d_%d_%d %lf", &idx, &g, &p, &n, &v) == 5 && g >= 0 && g < c->G && p >= 0 && p < c->P &&
            n >= 0 && n < c->N)
            c->x[S_IX(c, g, p, n)] = (int32_t)(v + 0.5);
        else if (sscanf(s, "%d y_%d %lf", &idx, &g, &v) == 3 && g >= 0 && g < c->G)
            c->y[g] = v > 0.5;
        else if (sscanf(s, "%d q_%d %lf", &idx, &g, &v) == 3 && g >= 0 && g < c->NR)
            c->q[g] = v > 0.5;
    }
    fclose(f);
    return ok;
}

/* The solution's value at priority k (kept running gangs included) into
 * *units, *pods; returns stage si's objective at the solution. */
static int64_t s_stage_value(const s_ctx_t *c, int32_t si, int64_t *units, int64_t *pods)
{
    const int32_t k = c->stage[si].k;
    int64_t adm = 0, obj = 0;
    *units = *pods = 0;
    for (int32_t g = 0; g < c->G; g++) {
        const rf_gang_t *gang = &c->pb->gangs[g];
        if (s_prio_index(c, gang->priority) != k)
            continue;
        adm += c->y[g];
        for (int32_t p = 0; p < gang->n_pod_sets; p++) {
            int64_t n_pods = c->y[g] ? gang->pod_sets[p].n_bound_pods : 0;
            for (int32_t n = 0; n < c->N; n++)
                n_pods += c->x[S_IX(c, g, p, n)];
            *units += s_units(c, &gang->pod_sets[p]) * n_pods;
            *pods += n_pods;
            obj += (s_units(c, &gang->pod_sets[p]) * c->M + 1) * n_pods;
        }
    }
    for (int32_t i = 0; i < c->NR; i++)
        if (s_prio_index(c, c->pb->running[i].priority) == k) {
            if (!c->q[i]) {
                *units += c->run_units[i];
                *pods += c->run_pods[i];
            } else {
                obj -= c->run_units[i] * c->M + c->run_pods[i];
            }
        }
    return c->stage[si].kind == 0 ? adm : obj;
}

/* D(g,l) over the admitted gangs' pods (bound ones included), and the kept
 * running gangs' penalty. */
static double s_penalty(const s_ctx_t *c)
{
    double pen = 0;
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t l = 0; l < c->L && c->y[g]; l++) {
            int32_t D = 0;
            for (int32_t d = 0; d < c->N; d++) {
                if (c->dom[l * c->N + d] != d)
                    continue;
                bool used = false;
                for (int32_t n = 0; n < c->N && !used; n++)
                    for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets && !used; p++)
                        used =
                            c->dom[l * c->N + n] == d && (c->x[S_IX(c, g, p, n)] > 0 || c->bnd[S_IX(c, g, p, n)] > 0);
                D += used;
            }
            if (D > 1)
                pen += c->pb->gangs[g].bandwidth * c->pb->level_costs[l] * (D - 1);
        }
    for (int32_t i = 0; i < c->NR; i++)
        if (!c->q[i])
            pen += c->run_pen[i];
    return pen;
}

static void s_add_prio(s_ctx_t *c, int64_t prio)
{
    if (s_prio_index(c, prio) < 0 && c->n_prio < RF_CBCREF_MAX_PRIOS)
        c->prio[c->n_prio++] = prio;
}

/* Running gangs' constants: value, penalty over their placements, and
 * whether they may be preempted at all. */
static void s_setup_running(s_ctx_t *c)
{
    const rf_problem_t *pb = c->pb;
    const int32_t vr = pb->options.value_resource;
    for (int32_t i = 0; i < c->NR; i++) {
        const rf_running_t *run = &pb->running[i];
        s_add_prio(c, run->priority);
        c->can_q[i] = run->preemptible && pb->options.preemption != RF_PREEMPT_NEVER;
        for (int32_t p = 0; p < run->n_pod_sets; p++)
            for (int32_t k = 0; k < run->pod_sets[p].n_placements; k++) {
                c->run_pods[i] += run->pod_sets[p].placements[k].count;
                c->run_units[i] += vr >= 0 ? run->pod_sets[p].placements[k].count * run->pod_sets[p].requests[vr] : 0;
            }
        c->M += c->run_pods[i];
        for (int32_t l = 0; l < c->L; l++) {
            int32_t D = 0;
            for (int32_t d = 0; d < c->N; d++) {
                bool used = false;
                for (int32_t p = 0; p < run->n_pod_sets && c->dom[l * c->N + d] == d; p++)
                    for (int32_t k = 0; k < run->pod_sets[p].n_placements; k++)
                        used |= c->dom[l * c->N + run->pod_sets[p].placements[k].node] == d;
                D += used;
            }
            if (D > 1)
                c->run_pen[i] += run->bandwidth * pb->level_costs[l] * (D - 1);
        }
    }
}

static void s_setup(s_ctx_t *c, const rf_problem_t *pb)
{
    c->M = 1;
    for (int32_t g = 0; g < c->G; g++) {
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
            c->M += pb->gangs[g].pod_sets[p].count;
        s_add_prio(c, pb->gangs[g].priority);
    }
    for (int32_t l = 0; l < c->L; l++)
        for (int32_t n = 0; n < c->N; n++) {
            c->dom[l * c->N + n] = n;
            for (int32_t m = 0; m < n; m++) {
                bool same = true;
                for (int32_t k = 0; k <= l && same; k++) {
                    const char *a = s_label(&pb->nodes[n], pb->levels[k]);
                    const char *b = s_label(&pb->nodes[m], pb->levels[k]);
                    same = a && b && strcmp(a, b) == 0;
                }
                if (same) {
                    c->dom[l * c->N + n] = m;
                    break;
                }
            }
        }
    s_setup_running(c);
    for (int32_t i = 1; i < c->n_prio; i++) /* highest first */
        for (int32_t j = i; j > 0 && c->prio[j] > c->prio[j - 1]; j--) {
            int64_t t = c->prio[j];
            c->prio[j] = c->prio[j - 1];
            c->prio[j - 1] = t;
        }
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++) {
            for (int32_t n = 0; n < c->N; n++)
                c->elig[S_IX(c, g, p, n)] = s_eligible(pb, &pb->gangs[g].pod_sets[p], &pb->nodes[n]);
            for (int32_t b = 0; b < pb->gangs[g].pod_sets[p].n_bound; b++)
                c->bnd[S_IX(c, g, p, pb->gangs[g].pod_sets[p].bound[b].node)] +=
                    pb->gangs[g].pod_sets[p].bound[b].count;
        }
    for (int32_t k = 0; k < c->n_prio; k++) {
        bool gangs = false;
        for (int32_t g = 0; g < c->G && !gangs; g++)
            gangs = pb->gangs[g].priority == c->prio[k];
        if (gangs && pb->options.admission == RF_ADMIT_ORDERED)
            c->stage[c->n_stage++] = (s_stage_t){.kind = 0, .k = k};
        c->stage[c->n_stage++] = (s_stage_t){.kind = 1, .k = k};
    }
    c->stage[c->n_stage++] = (s_stage_t){.kind = 2, .k = -1};
}

/* The solution as an answer: placements slice domain by slice domain (in
 * order of their first node), so that every s consecutive ranks share one
 * domain; rejected gangs with a reason; preemptions. Not finished. */
static rf_answer_t *s_answer(const s_ctx_t *c)
{
    const rf_problem_t *pb = c->pb;
    rf_answer_t *a = rf_answer_new(pb);
    rf_status rc = a ? RF_OK : RF_ENOMEM;
    for (int32_t g = 0; rc == RF_OK && g < c->G; g++) {
        if (!c->y[g]) {
            rf_why_t why = {-1, -1, -1, -1};
            rc = rf_answer_reject(a, g, why, "not admitted by the CBC reference's optimum");
            continue;
        }
        for (int32_t p = 0; rc == RF_OK && p < pb->gangs[g].n_pod_sets; p++) {
            const rf_pod_set_t *ps = &pb->gangs[g].pod_sets[p];
            const int32_t l = ps->slice.size > 1 ? ps->slice.level : c->L - 1;
            for (int32_t d = 0; rc == RF_OK && d < c->N; d++)
                for (int32_t n = 0; rc == RF_OK && n < c->N; n++) {
                    bool here = ps->slice.size > 1 ? c->dom[l * c->N + d] == d && c->dom[l * c->N + n] == d : n == d;
                    if (here && c->x[S_IX(c, g, p, n)] > 0)
                        rc = rf_answer_add(a, g, p, n, c->x[S_IX(c, g, p, n)]);
                }
        }
        if (rc == RF_OK)
            a->gangs[g].admitted = true; /* also when admitted on bound pods alone */
    }
    for (int32_t i = 0; rc == RF_OK && i < c->NR; i++)
        rc = rf_answer_preempt(a, i, c->q[i] != 0);
    if (rc != RF_OK)
        rf_answer_destroy(&a);
    return a;
}

bool rf_cbcref_solve(const rf_problem_t *pb, rf_cbcref_t *out, char *err, size_t errlen)
{
    return rf_cbcref_solve_answer(pb, out, NULL, err, errlen);
}

bool rf_cbcref_solve_answer(const rf_problem_t *pb, rf_cbcref_t *out, rf_answer_t **answer, char *err, size_t errlen)
{
    const char *why = NULL;
    memset(out, 0, sizeof *out);
    if (answer)
        *answer = NULL;
    if (!rf_cbcref_supported(pb, &why)) {
        snprintf(err, errlen, "out of scope: %s", why);
        return false;
    }
    s_ctx_t c;
    memset(&c, 0, sizeof c);
    c.pb = pb;
    c.N = pb->n_nodes;
    c.G = pb->n_gangs;
    c.L = pb->n_levels;
    c.NR = pb->n_running;
    c.P = 1;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        c.P = pb->gangs[g].n_pod_sets > c.P ? pb->gangs[g].n_pod_sets : c.P;
    size_t cells = (size_t)(c.G ? c.G : 1) * (size_t)c.P * (size_t)(c.N ? c.N : 1), R1 = (size_t)c.NR + 1;
    c.dom = calloc((size_t)(c.L ? c.L : 1) * (size_t)(c.N ? c.N : 1), sizeof *c.dom);
    c.elig = calloc(cells, sizeof *c.elig);
    c.bnd = calloc(cells, sizeof *c.bnd);
    c.x = calloc(cells, sizeof *c.x);
    c.y = calloc((size_t)c.G + 1, sizeof *c.y);
    c.q = calloc(R1, sizeof *c.q);
    c.run_units = calloc(R1, sizeof *c.run_units);
    c.run_pods = calloc(R1, sizeof *c.run_pods);
    c.run_pen = calloc(R1, sizeof *c.run_pen);
    c.can_q = calloc(R1, sizeof *c.can_q);
    snprintf(c.dir, sizeof c.dir, "/tmp/rf-cbcref-XXXXXX");
    bool ok = c.dom && c.elig && c.bnd && c.x && c.y && c.q && c.run_units && c.run_pods && c.run_pen && c.can_q &&
              mkdtemp(c.dir) != NULL;
    if (!ok)
        snprintf(err, errlen, "out of memory or no temporary directory");
    if (ok)
        s_setup(&c, pb);
    for (int32_t si = 0; ok && c.G + c.NR > 0 && si < c.n_stage; si++) {
        ok = s_run(&c, si, err, errlen);
        out->cbc_runs++;
        if (ok && c.stage[si].kind < 2) {
            int32_t k = c.stage[si].k;
            c.opt[si] = s_stage_value(&c, si, &out->value[k].units, &out->value[k].pods);
            out->value[k].priority = c.prio[k];
        }
    }
    if (ok) {
        out->n_value = c.n_prio;
        out->penalty = s_penalty(&c);
        for (int32_t g = 0; g < c.G && g < RF_CBCREF_MAX_GANGS; g++)
            out->admitted[g] = c.y[g];
        for (int32_t i = 0; i < c.NR && i < RF_CBCREF_MAX_GANGS; i++)
            out->preempted[i] = c.q[i];
        if (answer && !(*answer = s_answer(&c))) {
            snprintf(err, errlen, "out of memory laying out the reference's answer");
            ok = false;
        }
    }
    if (c.dir[0] && strstr(c.dir, "XXXXXX") == NULL && !getenv("RF_CBCREF_KEEP")) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", c.dir);
        if (system(cmd) != 0 && ok) {
            snprintf(err, errlen, "cannot remove %s", c.dir);
            ok = false;
        }
    }
    free(c.dom);
    free(c.elig);
    free(c.bnd);
    free(c.x);
    free(c.y);
    free(c.q);
    free(c.run_units);
    free(c.run_pods);
    free(c.run_pen);
    free(c.can_q);
    return ok;
}
