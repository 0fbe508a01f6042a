/* solver/preempt_problem.c: the contract's rules for running gangs, checked
 * once per problem by rf_problem_validate (PLACEMENT-MODEL.md, "Running gangs
 * and preemption"), and the constants an answer reads from them.
 *
 * Invariants on success:
 * - every running gang has 1..max_pod_sets pod sets, each with a non-empty
 *   name unique in its gang, requests[RF_RES_PODS] == 1 and every request in
 *   [0, RF_QTY_MAX], and 1..max_bound placements with valid node indices,
 *   counts >= 1 and no node twice;
 * - names are unique across `gangs` and `running` together (checked with
 *   the gangs' names, in solver/problem.c);
 * - on every node, the bound pods of all gangs plus the pods of running
 *   gangs 0..i fit in `used` for every i (pods: 1 each counted only where the
 *   node has a pods limit): nothing a running gang frees is counted twice;
 * - units, pods, domains and penalty hold the gang's value and penalty while
 *   kept (domains as in the objective: distinct label paths per level, a node
 *   lacking a level's label alone at that level and below). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "preempt_problem.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"

/* ---------------------------------------------------------------- paths */

/* "running[i]" then optional ".pod_sets[j]" then optional ".placements[k]",
 * then an optional last key; -1 leaves a segment out. Error paths only. */
static const char *s_path(char *buf, int32_t i, int32_t j, int32_t k, const char *last)
{
    int len = rf__path_key(buf, 0, RF_ERROR_PATH_MAX, "running");
    len = rf__path_index(buf, len, RF_ERROR_PATH_MAX, i);
    if (j >= 0) {
        len = rf__path_key(buf, len, RF_ERROR_PATH_MAX, "pod_sets");
        len = rf__path_index(buf, len, RF_ERROR_PATH_MAX, j);
    }
    if (k >= 0) {
        len = rf__path_key(buf, len, RF_ERROR_PATH_MAX, "placements");
        len = rf__path_index(buf, len, RF_ERROR_PATH_MAX, k);
    }
    if (last)
        rf__path_key(buf, len, RF_ERROR_PATH_MAX, last);
    return buf;
}

/* ------------------------------------------------------- one running gang */

static rf_status s_check_pod_set(const rf_problem_t *p, const rf_limits_t *lim, int32_t i, int32_t j, rf_error_t *err)
{
    char path[RF_ERROR_PATH_MAX];
    const rf_running_t *run = &p->running[i];
    rf_run_pod_set_t *ps = &run->pod_sets[j];
    if (!ps->name || !ps->name[0])
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, -1, "name"), "must not be empty");
    if (strlen(ps->name) > (size_t)lim->max_string)
        return rf_error_set(err, RF_ELIMIT, s_path(path, i, j, -1, "name"), "longer than max_string (%d)",
                            (int)lim->max_string);
    for (int32_t k = 0; k < j; k++)
        if (strcmp(run->pod_sets[k].name, ps->name) == 0)
            return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, -1, "name"),
                                "duplicate name \"%.200s\" (also running[%d].pod_sets[%d])", ps->name, (int)i, (int)k);
    if (!ps->requests)
        return rf_error_set(err, RF_EINVAL, s_path(path, i, j, -1, "requests"), "no requests array");
    if (ps->requests[RF_RES_PODS] != 0 && ps->requests[RF_RES_PODS] != 1)
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, -1, "requests"),
                            "pods is implied (every pod uses pods: 1) and must not be given");
    ps->requests[RF_RES_PODS] = 1;
    for (int32_t r = 1; r < p->n_resources; r++)
        if (ps->requests[r] < 0 || ps->requests[r] > RF_QTY_MAX) {
            int len = (int)strlen(s_path(path, i, j, -1, "requests"));
            rf__path_key(path, len, RF_ERROR_PATH_MAX, p->resources[r]);
            return rf_error_set(err, RF_ESCHEMA, path,
                                ps->requests[r] < 0 ? "must not be negative" : "is above 2^62 base units");
        }
    if (ps->n_placements < 1 || !ps->placements)
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, -1, "placements"), "must list at least one placement");
    if (ps->n_placements > lim->max_bound)
        return rf_error_set(err, RF_ELIMIT, s_path(path, i, j, -1, "placements"),
                            "has %d entries, more than max_bound (%d)", (int)ps->n_placements, (int)lim->max_bound);
    ps->n_pods = 0;
    for (int32_t k = 0; k < ps->n_placements; k++) {
        const rf_run_placement_t *pl = &ps->placements[k];
        if (pl->node < 0 || pl->node >= p->n_nodes)
            return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, k, "node"), "node index %d is not a node",
                                (int)pl->node);
        if (pl->count < 1)
            return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, k, "count"), "must be >= 1");
        if (pl->count > lim->max_pods - ps->n_pods) /* checked before the sum: it cannot overflow */
            return rf_error_set(err, RF_ELIMIT, s_path(path, i, j, k, "count"),
                                "the pod set has more than max_pods (%lld) pods", (long long)lim->max_pods);
        ps->n_pods += pl->count;
    }
    return RF_OK;
}

/* A node at most once per pod set: sort (node, position) pairs. */
static int s_pair_cmp(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static rf_status s_check_nodes_once(const rf_problem_t *p, int32_t i, int32_t j, int32_t *scratch, rf_error_t *err)
{
    const rf_run_pod_set_t *ps = &p->running[i].pod_sets[j];
    int32_t n = ps->n_placements;
    for (int32_t k = 0; k < n; k++) {
        scratch[2 * k] = ps->placements[k].node;
        scratch[2 * k + 1] = k;
    }
    qsort(scratch, (size_t)n, 2 * sizeof *scratch, s_pair_cmp);
    int32_t dup = -1, first = -1;
    for (int32_t k = 1; k < n; k++)
        if (scratch[2 * k] == scratch[2 * k - 2] && (dup < 0 || scratch[2 * k + 1] < dup)) {
            dup = scratch[2 * k + 1];
            first = scratch[2 * k - 1];
        }
    if (dup < 0)
        return RF_OK;
    char path[RF_ERROR_PATH_MAX];
    return rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, dup, "node"),
                        "node \"%.200s\" is already listed in placements[%d]", p->nodes[ps->placements[dup].node].name,
                        (int)first);
}

static rf_status s_check_gang(const rf_problem_t *p, const rf_limits_t *lim, int32_t i, rf_error_t *err)
{
    char path[RF_ERROR_PATH_MAX];
    const rf_running_t *run = &p->running[i];
    if (!run->name || !run->name[0])
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, -1, -1, "name"), "must not be empty");
    if (strlen(run->name) > (size_t)lim->max_string)
        return rf_error_set(err, RF_ELIMIT, s_path(path, i, -1, -1, "name"), "longer than max_string (%d)",
                            (int)lim->max_string);
    if (!isfinite(run->bandwidth) || run->bandwidth < 0)
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, -1, -1, "bandwidth"), "must be a finite number >= 0");
    if (run->n_pod_sets < 1 || !run->pod_sets)
        return rf_error_set(err, RF_ESCHEMA, s_path(path, i, -1, -1, "pod_sets"), "must list at least one pod set");
    if (run->n_pod_sets > lim->max_pod_sets)
        return rf_error_set(err, RF_ELIMIT, s_path(path, i, -1, -1, "pod_sets"),
                            "has %d pod sets, more than max_pod_sets (%d)", (int)run->n_pod_sets,
                            (int)lim->max_pod_sets);
    int32_t most = 1;
    for (int32_t j = 0; j < run->n_pod_sets; j++) {
        RF_CALL(s_check_pod_set(p, lim, i, j, err));
        if (run->pod_sets[j].n_placements > most)
            most = run->pod_sets[j].n_placements;
    }
    int32_t *scratch = malloc((size_t)most * 2 * sizeof *scratch);
    if (!scratch)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    rf_status rc = RF_OK;
    for (int32_t j = 0; j < run->n_pod_sets && rc == RF_OK; j++)
        rc = s_check_nodes_once(p, i, j, scratch, err);
    free(scratch);
    return rc;
}

/* ------------------------------------------------------- fitting in used */

/* Add `count` pods of `req` to node n's tally; false when the tally then
 * exceeds `used` in some resource (*bad is that resource). */
static bool s_tally(const rf_problem_t *p, int64_t *tally, int32_t n, const int64_t *req, int64_t count, int32_t *bad)
{
    const rf_node_t *node = &p->nodes[n];
    int64_t *t = &tally[(size_t)n * (size_t)p->n_resources];
    bool ok = true;
    for (int32_t r = 0; r < p->n_resources; r++) {
        if (r == RF_RES_PODS && node->allocatable[RF_RES_PODS] == RF_QTY_UNLIMITED)
            continue;
        int64_t add;
        if (__builtin_mul_overflow(req[r], count, &add) || __builtin_add_overflow(t[r], add, &t[r]))
            t[r] = INT64_MAX;
        if (ok && t[r] > node->used[r]) {
            ok = false;
            *bad = r;
        }
    }
    return ok;
}

static rf_status s_check_used(const rf_problem_t *p, rf_error_t *err)
{
    int64_t *tally = calloc((size_t)p->n_nodes * (size_t)p->n_resources + 1, sizeof *tally);
    if (!tally)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory checking running gangs against used");
    int32_t bad = 0;
    for (int32_t g = 0; g < p->n_gangs; g++)
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_t *ps = &p->gangs[g].pod_sets[j];
            for (int32_t b = 0; b < ps->n_bound; b++)
                (void)s_tally(p, tally, ps->bound[b].node, ps->requests, ps->bound[b].count, &bad);
        }
    rf_status rc = RF_OK;
    for (int32_t i = 0; i < p->n_running && rc == RF_OK; i++) {
        const rf_running_t *run = &p->running[i];
        for (int32_t j = 0; j < run->n_pod_sets && rc == RF_OK; j++) {
            const rf_run_pod_set_t *ps = &run->pod_sets[j];
            for (int32_t k = 0; k < ps->n_placements && rc == RF_OK; k++) {
                int32_t n = ps->placements[k].node;
                if (s_tally(p, tally, n, ps->requests, ps->placements[k].count, &bad))
                    continue;
                char path[RF_ERROR_PATH_MAX];
                rc = rf_error_set(err, RF_ESCHEMA, s_path(path, i, j, k, NULL),
                                  "node \"%.200s\": the bound pods and the running gangs up to this one use %s %lld, "
                                  "more than its used (%lld)",
                                  p->nodes[n].name, p->resources[bad],
                                  (long long)tally[(size_t)n * (size_t)p->n_resources + (size_t)bad],
                                  (long long)p->nodes[n].used[bad]);
            }
        }
    }
    free(tally);
    return rc;
}

/* ------------------------------------------------------------ constants */

/* Node order by label path, level by level; a node lacking a label at
 * level l sorts by its own index there (it is alone at l and below). */
typedef struct {
    const rf_problem_t *p;
    const char **labels; /* [n * L]: entry k's label per level, NULL when absent */
    const int32_t *node; /* [n]: entry k's node index */
} s_sorter_t;

/* qsort has no context argument: the sorter of the running call. */
static _Thread_local const s_sorter_t *s_sort_ctx;

/* Entries a and b by their label path down to level `upto`; an entry missing a level's label sorts after one that
 * has it, and two missing ones by node index. */
static int s_path_cmp_upto(const s_sorter_t *s, int32_t a, int32_t b, int32_t upto)
{
    const int32_t *node = s->node;
    int32_t L = s->p->n_levels;
    for (int32_t l = 0; l <= upto; l++) {
        const char *x = s->labels[(size_t)a * L + l], *y = s->labels[(size_t)b * L + l];
        if (!x || !y) {
            if (x || y)
                return x ? -1 : 1;
            return (node[a] > node[b]) - (node[a] < node[b]);
        }
        int c = strcmp(x, y);
        if (c)
            return c;
    }
    return 0;
}

static int s_idx_cmp(const void *a, const void *b)
{
    return s_path_cmp_upto(s_sort_ctx, *(const int32_t *)a, *(const int32_t *)b, s_sort_ctx->p->n_levels - 1);
}

/* D(g,l) over the distinct nodes of a running gang. */
static rf_status s_domains(const rf_problem_t *p, rf_running_t *run, rf_error_t *err)
{
    int32_t L = p->n_levels, n = 0;
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        n += run->pod_sets[j].n_placements;
    int32_t *node = malloc((size_t)n * sizeof *node);
    int32_t *order = malloc((size_t)n * sizeof *order);
    const char **labels = malloc((size_t)n * (size_t)L * sizeof *labels);
    if (!node || !order || !labels) {
        free(node);
        free(order);
        free(labels);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    n = 0;
    for (int32_t j = 0; j < run->n_pod_sets; j++)
        for (int32_t k = 0; k < run->pod_sets[j].n_placements; k++)
            node[n++] = run->pod_sets[j].placements[k].node;
    for (int32_t k = 0; k < n; k++) {
        order[k] = k;
        bool alone = false;
        for (int32_t l = 0; l < L; l++) {
            const char *v = alone ? NULL : rf_node_label(&p->nodes[node[k]], p->levels[l]);
            alone = alone || !v;
            labels[(size_t)k * L + l] = v;
        }
    }
    s_sorter_t s = {p, labels, node};
    s_sort_ctx = &s;
    qsort(order, (size_t)n, sizeof *order, s_idx_cmp);
    memset(run->domains, 0, sizeof run->domains);
    for (int32_t l = 0; l < L; l++) {
        run->domains[l] = n > 0;
        for (int32_t k = 1; k < n; k++)
            run->domains[l] += s_path_cmp_upto(&s, order[k - 1], order[k], l) != 0;
    }
    s_sort_ctx = NULL;
    free(node);
    free(order);
    free(labels);
    return RF_OK;
}

static rf_status s_constants(const rf_problem_t *p, rf_running_t *run, rf_error_t *err)
{
    int32_t vr = p->options.value_resource;
    run->units = 0;
    run->pods = 0;
    for (int32_t j = 0; j < run->n_pod_sets; j++) {
        const rf_run_pod_set_t *ps = &run->pod_sets[j];
        run->pods += ps->n_pods;
        if (vr >= 0) {
            int64_t u;
            if (__builtin_mul_overflow(ps->n_pods, ps->requests[vr], &u) ||
                __builtin_add_overflow(run->units, u, &run->units))
                run->units = INT64_MAX;
        }
    }
    RF_CALL(s_domains(p, run, err));
    double pen = 0;
    for (int32_t l = 0; l < p->n_levels; l++)
        if (run->domains[l] > 1)
            pen += p->level_costs[l] * (double)(run->domains[l] - 1);
    run->penalty = run->bandwidth * pen;
    return RF_OK;
}

/* ------------------------------------------------------------ interface */

rf_status rf__problem_validate_running(rf_problem_t *p, const rf_limits_t *lim, rf_error_t *err)
{
    if (p->n_running < 0 || (p->n_running > 0 && !p->running))
        return rf_error_set(err, RF_EINVAL, "running", "bad running array");
    if (p->n_running == 0)
        return RF_OK;
    if (p->n_running > lim->max_gangs)
        return rf_error_set(err, RF_ELIMIT, "running", "has %d running gangs, more than max_gangs (%d)",
                            (int)p->n_running, (int)lim->max_gangs);
    for (int32_t i = 0; i < p->n_running; i++)
        RF_CALL(s_check_gang(p, lim, i, err));
    RF_CALL(s_check_used(p, err));
    for (int32_t i = 0; i < p->n_running; i++)
        RF_CALL(s_constants(p, &p->running[i], err));
    return RF_OK;
}
