/* tests/support/cbcref.c: the CBC reference (see cbcref.h).
 *
 * One LP file per stage in a fresh temporary directory (removed after):
 * the model (rows below), the optima of the earlier stages as rows, and the
 * stage's objective. `cbc FILE solve solu OUT` writes "Optimal - ..." and
 * then one line per nonzero column; the stage's optimum is recomputed here
 * from the x values (integers), so the objective's sign convention in cbc's
 * output does not matter. The penalty is recomputed from x as well (D(g,l)
 * over the nodes that got pods), which is the contract's definition.
 * Capacity rows are divided by the gcd of their coefficients (and the right
 * side floored), exact for integer x, to keep byte-sized memory figures
 * small for cbc. */
#include "cbcref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rackfit/quantity.h"

typedef struct {
    const rf_problem_t *pb;
    int32_t N, G, L;
    int32_t *dom; /* [L*N]: domain id (first node with the same label path) */
    bool *elig;   /* [G*P*N] with P = max pod sets */
    int32_t P;
    int32_t n_prio;
    int64_t prio[RF_CBCREF_MAX_PRIOS];
    int64_t opt[RF_CBCREF_MAX_PRIOS]; /* stage optima found so far */
    int64_t M;
    int32_t *x; /* [G*P*N] solution */
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
    if (pb->n_running > 0)
        w = "running gangs are not modelled";
    else if (pb->options.admission != RF_ADMIT_VALUE)
        w = "only admission: value is modelled";
    for (int32_t g = 0; g < pb->n_gangs && !w; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets && !w; p++) {
            if (pb->gangs[g].pod_sets[p].slice.size > 0)
                w = "slices are not modelled";
            else if (pb->gangs[g].pod_sets[p].n_bound > 0)
                w = "bound pods are not modelled";
        }
    if (why)
        *why = w;
    return w == NULL;
}

/* ---- model -------------------------------------------------------------- */

static int64_t s_gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
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

/* Terms sum (units*M + 1) x over gangs of priority index k. */
static void s_value_terms(const s_ctx_t *c, FILE *f, int32_t k)
{
    int terms = 0;
    for (int32_t g = 0; g < c->G; g++) {
        const rf_gang_t *gang = &c->pb->gangs[g];
        if (s_prio_index(c, gang->priority) != k)
            continue;
        for (int32_t p = 0; p < gang->n_pod_sets; p++) {
            int64_t w = s_units(c, &gang->pod_sets[p]) * c->M + 1;
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " + %lld x_%d_%d_%d%s", (long long)w, g, p, n, ++terms % 8 ? "" : "\n");
        }
    }
    if (!terms)
        fprintf(f, " + 0 y_0");
}

/* Gang g uses domain d of level l (a node n with dom[l][n] == d is eligible
 * for one of its pod sets). */
static bool s_gang_domain(const s_ctx_t *c, int32_t g, int32_t l, int32_t d)
{
    for (int32_t n = 0; n < c->N; n++)
        if (c->dom[l * c->N + n] == d)
            for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets; p++)
                if (c->elig[S_IX(c, g, p, n)])
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
}

static void s_gang_rows(const s_ctx_t *c, FILE *f, int32_t g)
{
    const rf_gang_t *gang = &c->pb->gangs[g];
    for (int32_t p = 0; p < gang->n_pod_sets; p++) {
        const rf_pod_set_t *ps = &gang->pod_sets[p];
        for (int side = 0; side < 2; side++) {
            fprintf(f, " cnt%d_%d_%d: %lld y_%d", side, g, p, -(long long)(side ? ps->count : ps->min_count), g);
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " + x_%d_%d_%d%s", g, p, n, n % 8 == 7 ? "\n" : "");
            fprintf(f, side ? " <= 0\n" : " >= 0\n");
        }
        for (int32_t n = 0; n < c->N; n++) {
            if (!c->elig[S_IX(c, g, p, n)])
                continue;
            for (int32_t l = 0; l < c->L; l++)
                fprintf(f, " lk_%d_%d_%d_%d: x_%d_%d_%d - %lld u_%d_%d_%d <= 0\n", g, p, n, l, g, p, n,
                        (long long)ps->count, g, l, c->dom[l * c->N + n]);
            int32_t rl = ps->topology.required;
            if (rl >= 0)
                fprintf(f, " pv_%d_%d_%d: x_%d_%d_%d - %lld v_%d_%d_%d <= 0\n", g, p, n, g, p, n, (long long)ps->count,
                        g, p, c->dom[rl * c->N + n]);
        }
        int32_t rl = ps->topology.required;
        if (rl >= 0) {
            fprintf(f, " pr_%d_%d: 0 y_%d", g, p, g);
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[rl * c->N + d] == d && s_gang_domain(c, g, rl, d))
                    fprintf(f, " + v_%d_%d_%d\n", g, p, d);
            fprintf(f, " <= 1\n");
        }
    }
    for (int32_t l = 0; l < c->L; l++) {
        /* admitted: at least one domain per level (so D - 1 >= 0); required: at most one */
        for (int side = 0; side < 2; side++) {
            if (side && gang->topology.required != l)
                continue;
            fprintf(f, " gd%d_%d_%d: %s y_%d", side, g, l, side ? "0" : "-1", g);
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[l * c->N + d] == d && s_gang_domain(c, g, l, d))
                    fprintf(f, " + u_%d_%d_%d\n", g, l, d);
            fprintf(f, side ? " <= 1\n" : " >= 0\n");
        }
    }
}

static void s_capacity_rows(const s_ctx_t *c, FILE *f)
{
    const rf_problem_t *pb = c->pb;
    for (int32_t n = 0; n < c->N; n++)
        for (int32_t r = 0; r < pb->n_resources; r++) {
            int64_t alloc = pb->nodes[n].allocatable[r];
            if (alloc == RF_QTY_UNLIMITED)
                continue;
            int64_t free_ = alloc - pb->nodes[n].used[r];
            if (free_ < 0)
                free_ = 0;
            int64_t gcd = 0;
            for (int32_t g = 0; g < c->G; g++)
                for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
                    if (c->elig[S_IX(c, g, p, n)] && pb->gangs[g].pod_sets[p].requests[r] > 0)
                        gcd = s_gcd(pb->gangs[g].pod_sets[p].requests[r], gcd);
            if (gcd == 0)
                continue;
            fprintf(f, " cap_%d_%d: 0 y_0", n, r);
            for (int32_t g = 0; g < c->G; g++)
                for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
                    if (c->elig[S_IX(c, g, p, n)] && pb->gangs[g].pod_sets[p].requests[r] > 0)
                        fprintf(f, " + %lld x_%d_%d_%d\n", (long long)(pb->gangs[g].pod_sets[p].requests[r] / gcd), g,
                                p, n);
            fprintf(f, " <= %lld\n", (long long)(free_ / gcd));
        }
}

static void s_columns(const s_ctx_t *c, FILE *f)
{
    fprintf(f, "Bounds\n");
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets; p++)
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " 0 <= x_%d_%d_%d <= %lld\n", g, p, n, (long long)c->pb->gangs[g].pod_sets[p].count);
    fprintf(f, "Generals\n");
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets; p++)
            for (int32_t n = 0; n < c->N; n++)
                if (c->elig[S_IX(c, g, p, n)])
                    fprintf(f, " x_%d_%d_%d\n", g, p, n);
    fprintf(f, "Binaries\n");
    for (int32_t g = 0; g < c->G; g++) {
        fprintf(f, " y_%d\n", g);
        for (int32_t l = 0; l < c->L; l++)
            for (int32_t d = 0; d < c->N; d++)
                if (c->dom[l * c->N + d] == d && s_gang_domain(c, g, l, d))
                    fprintf(f, " u_%d_%d_%d\n", g, l, d);
        for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets; p++) {
            int32_t rl = c->pb->gangs[g].pod_sets[p].topology.required;
            for (int32_t d = 0; d < c->N && rl >= 0; d++)
                if (c->dom[rl * c->N + d] == d && s_gang_domain(c, g, rl, d))
                    fprintf(f, " v_%d_%d_%d\n", g, p, d);
        }
    }
    fprintf(f, "End\n");
}

/* Stage k < n_prio: maximise priority k's value; k == n_prio: minimise the penalty. */
static bool s_write(const s_ctx_t *c, int32_t k, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, k < c->n_prio ? "Maximize\n obj:" : "Minimize\n obj:");
    if (k < c->n_prio)
        s_value_terms(c, f, k);
    else
        s_penalty_terms(c, f);
    fprintf(f, "\nSubject To\n");
    for (int32_t j = 0; j < k; j++) {
        fprintf(f, " fix_%d:", j);
        s_value_terms(c, f, j);
        fprintf(f, " >= %lld\n", (long long)c->opt[j]);
    }
    for (int32_t g = 0; g < c->G; g++)
        s_gang_rows(c, f, g);
    s_capacity_rows(c, f);
    s_columns(c, f);
    return fclose(f) == 0;
}

/* Run cbc on stage k and read x. */
static bool s_run(s_ctx_t *c, int32_t k, char *err, size_t errlen)
{
    char lp[128], sol[128], cmd[512];
    snprintf(lp, sizeof lp, "%s/stage%d.lp", c->dir, k);
    snprintf(sol, sizeof sol, "%s/stage%d.sol", c->dir, k);
    if (!s_write(c, k, lp)) {
        snprintf(err, errlen, "cannot write %s", lp);
        return false;
    }
    snprintf(cmd, sizeof cmd, "cbc %s solve solu %s >%s/stage%d.log 2>&1", lp, sol, c->dir, k);
    if (system(cmd) != 0) {
        snprintf(err, errlen, "cbc failed on %s (see %s/stage%d.log)", lp, c->dir, k);
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
        snprintf(err, errlen, "cbc stage %d: not optimal: %.200s", k, line);
    memset(c->x, 0, sizeof(int32_t) * (size_t)c->G * (size_t)c->P * (size_t)c->N);
    while (ok && fgets(line, sizeof line, f)) {
        int idx, g, p, n;
        double v;
        char *s = line;
        while (*s == ' ' || *s == '*')
            s++;
        if (sscanf(s, "%d x_%d_%d_%d %lf", &idx, &g, &p, &n, &v) == 5 && g >= 0 && g < c->G && p >= 0 && p < c->P &&
            n >= 0 && n < c->N)
            c->x[S_IX(c, g, p, n)] = (int32_t)(v + 0.5);
    }
    fclose(f);
    return ok;
}

static int64_t s_stage_value(const s_ctx_t *c, int32_t k, int64_t *units, int64_t *pods)
{
    *units = *pods = 0;
    for (int32_t g = 0; g < c->G; g++) {
        const rf_gang_t *gang = &c->pb->gangs[g];
        if (s_prio_index(c, gang->priority) != k)
            continue;
        for (int32_t p = 0; p < gang->n_pod_sets; p++)
            for (int32_t n = 0; n < c->N; n++) {
                *units += s_units(c, &gang->pod_sets[p]) * c->x[S_IX(c, g, p, n)];
                *pods += c->x[S_IX(c, g, p, n)];
            }
    }
    return *units * c->M + *pods;
}

static double s_penalty(const s_ctx_t *c)
{
    double pen = 0;
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t l = 0; l < c->L; l++) {
            int32_t D = 0;
            for (int32_t d = 0; d < c->N; d++) {
                if (c->dom[l * c->N + d] != d)
                    continue;
                bool used = false;
                for (int32_t n = 0; n < c->N && !used; n++)
                    for (int32_t p = 0; p < c->pb->gangs[g].n_pod_sets && !used; p++)
                        used = c->dom[l * c->N + n] == d && c->x[S_IX(c, g, p, n)] > 0;
                D += used;
            }
            if (D > 0)
                pen += c->pb->gangs[g].bandwidth * c->pb->level_costs[l] * (D - 1);
        }
    return pen;
}

static void s_setup(s_ctx_t *c, const rf_problem_t *pb)
{
    c->pb = pb;
    c->N = pb->n_nodes;
    c->G = pb->n_gangs;
    c->L = pb->n_levels;
    c->P = 1;
    c->M = 1;
    for (int32_t g = 0; g < c->G; g++) {
        if (pb->gangs[g].n_pod_sets > c->P)
            c->P = pb->gangs[g].n_pod_sets;
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
            c->M += pb->gangs[g].pod_sets[p].count;
        if (s_prio_index(c, pb->gangs[g].priority) < 0 && c->n_prio < RF_CBCREF_MAX_PRIOS)
            c->prio[c->n_prio++] = pb->gangs[g].priority;
    }
    for (int32_t i = 1; i < c->n_prio; i++) /* highest first */
        for (int32_t j = i; j > 0 && c->prio[j] > c->prio[j - 1]; j--) {
            int64_t t = c->prio[j];
            c->prio[j] = c->prio[j - 1];
            c->prio[j - 1] = t;
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
    for (int32_t g = 0; g < c->G; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++)
            for (int32_t n = 0; n < c->N; n++)
                c->elig[S_IX(c, g, p, n)] = s_eligible(pb, &pb->gangs[g].pod_sets[p], &pb->nodes[n]);
}

bool rf_cbcref_solve(const rf_problem_t *pb, rf_cbcref_t *out, char *err, size_t errlen)
{
    const char *why = NULL;
    memset(out, 0, sizeof *out);
    if (!rf_cbcref_supported(pb, &why)) {
        snprintf(err, errlen, "out of scope: %s", why);
        return false;
    }
    s_ctx_t c;
    memset(&c, 0, sizeof c);
    int32_t P = 1;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        P = pb->gangs[g].n_pod_sets > P ? pb->gangs[g].n_pod_sets : P;
    size_t cells = (size_t)(pb->n_gangs ? pb->n_gangs : 1) * (size_t)P * (size_t)(pb->n_nodes ? pb->n_nodes : 1);
    c.dom = calloc((size_t)(pb->n_levels ? pb->n_levels : 1) * (size_t)(pb->n_nodes ? pb->n_nodes : 1), sizeof *c.dom);
    c.elig = calloc(cells, sizeof *c.elig);
    c.x = calloc(cells, sizeof *c.x);
    snprintf(c.dir, sizeof c.dir, "/tmp/rf-cbcref-XXXXXX");
    bool ok = c.dom && c.elig && c.x && mkdtemp(c.dir) != NULL;
    if (!ok)
        snprintf(err, errlen, "out of memory or no temporary directory");
    if (ok) {
        s_setup(&c, pb);
        if (pb->n_gangs == 0)
            c.n_prio = 0;
    }
    for (int32_t k = 0; ok && pb->n_gangs > 0 && k <= c.n_prio; k++) {
        ok = s_run(&c, k, err, errlen);
        out->cbc_runs++;
        if (ok && k < c.n_prio) {
            c.opt[k] = s_stage_value(&c, k, &out->value[k].units, &out->value[k].pods);
            out->value[k].priority = c.prio[k];
        }
    }
    if (ok) {
        out->n_value = c.n_prio;
        out->penalty = s_penalty(&c);
    }
    if (c.dir[0] && strstr(c.dir, "XXXXXX") == NULL) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", c.dir);
        if (system(cmd) != 0 && ok) {
            snprintf(err, errlen, "cannot remove %s", c.dir);
            ok = false;
        }
    }
    free(c.dom);
    free(c.elig);
    free(c.x);
    return ok;
}
