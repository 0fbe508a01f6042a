/* solver/problem.c: the placement problem as C data: building, limits,
 * lookups and validation (PLACEMENT-MODEL.md sections 1 and 4).
 *
 * A problem owns one arena; every string and array hangs off it, so
 * rf_problem_destroy frees all at once. rf_problem_validate is the one place
 * the contract's rules are checked, for problems from the readers and from
 * builders alike; it fills the defaults that depend on the whole problem,
 * sorts labels and selectors by key and indexes node names. Every error names
 * its field by contract path, built with rf__path_key/rf__path_index.
 *
 * Invariants kept here:
 * - resources[0] is "pods" from rf_problem_new on; `resources` has capacity
 *   max(8, the next power of two >= n_resources) (grown by doubling);
 * - node_by_name, once built, lists every node index sorted by name (ties
 *   impossible: names are unique). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "doc.h"
#include "eligible.h"
#include "preempt_problem.h"
#include "rackfit/problem.h"
#include "rackfit/quantity.h"
#include "rackfit/status.h"

#define S_RES_CAP0               8
#define S_PATH_CAP               RF_ERROR_PATH_MAX
#define S_DEFAULT_VALUE_RESOURCE "nvidia.com/gpu"

/* ---------------------------------------------------------------- limits */

void rf_limits_default(rf_limits_t *limits)
{
    limits->max_nodes = 100000;
    limits->max_gangs = 20000;
    limits->max_pod_sets = 64;
    limits->max_pods = 100000;
    limits->max_labels = 256;
    limits->max_taints = 64;
    limits->max_resources = 64;
    limits->max_bound = 100000;
    limits->max_string = 4096;
    limits->max_depth = 64;
    limits->max_input_bytes = (int64_t)512 * 1024 * 1024;
    limits->max_shape_cells = (int64_t)1 << 24;
}

/* ------------------------------------------------------ building blocks */

void rf_gang_init(rf_gang_t *gang)
{
    memset(gang, 0, sizeof *gang);
    gang->bandwidth = 1.0;
    gang->topology.required = -1;
    gang->topology.preferred = -1;
}

void rf_pod_set_init(rf_pod_set_t *pod_set)
{
    memset(pod_set, 0, sizeof *pod_set);
    pod_set->min_count = -1;
    pod_set->topology.required = -1;
    pod_set->topology.preferred = -1;
    pod_set->slice.size = 0;
    pod_set->slice.level = -1;
}

void rf_running_init(rf_running_t *running)
{
    memset(running, 0, sizeof *running);
    running->bandwidth = 1.0;
    running->preemptible = true;
}

rf_problem_t *rf_problem_new(void)
{
    rf_problem_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->arena = rf__arena_new(0);
    if (!p->arena)
        goto fail;
    p->resources = rf__arena_alloc(p->arena, S_RES_CAP0 * sizeof *p->resources);
    if (!p->resources)
        goto fail;
    p->resources[0] = rf__arena_strndup(p->arena, "pods", 4);
    if (!p->resources[0])
        goto fail;
    p->n_resources = 1;
    p->options.mode = RF_MODE_AUTO;
    p->options.time_limit_ms = 1000;
    p->options.threads = 0;
    p->options.admission = RF_ADMIT_VALUE;
    p->options.value_resource = -1;
    p->options.value_resource_name =
        rf__arena_strndup(p->arena, S_DEFAULT_VALUE_RESOURCE, strlen(S_DEFAULT_VALUE_RESOURCE));
    if (!p->options.value_resource_name)
        goto fail;
    return p;
fail:
    rf_problem_destroy(&p);
    return NULL;
}

void rf_problem_destroy(rf_problem_t **problem)
{
    if (!problem || !*problem)
        return;
    rf__arena_destroy(&(*problem)->arena);
    free(*problem);
    *problem = NULL;
}

void *rf_problem_alloc(rf_problem_t *problem, size_t size)
{
    return rf__arena_alloc(problem->arena, size ? size : 1);
}

const char *rf_problem_strdup(rf_problem_t *problem, const char *s, size_t len)
{
    return rf__arena_strndup(problem->arena, s, len);
}

int32_t rf_problem_resource(rf_problem_t *problem, const char *name)
{
    for (int32_t i = 0; i < problem->n_resources; i++) /* (first bytes first: called per quantity read) */
        if (problem->resources[i][0] == name[0] && strcmp(problem->resources[i], name) == 0)
            return i;
    int32_t n = problem->n_resources;
    if (n >= INT32_MAX / 2)
        return -1;
    /* Full when n is the capacity: 8, or a power of two above it. */
    if (n >= S_RES_CAP0 && (n & (n - 1)) == 0) {
        const char **grown = rf__arena_alloc(problem->arena, (size_t)n * 2 * sizeof *grown);
        if (!grown)
            return -1;
        memcpy(grown, problem->resources, (size_t)n * sizeof *grown);
        problem->resources = grown;
    }
    const char *copy = rf__arena_strndup(problem->arena, name, strlen(name));
    if (!copy)
        return -1;
    problem->resources[n] = copy;
    problem->n_resources = n + 1;
    return n;
}

int32_t rf_problem_level(const rf_problem_t *problem, const char *key)
{
    for (int32_t i = 0; i < problem->n_levels; i++)
        if (problem->levels[i] && strcmp(problem->levels[i], key) == 0)
            return i;
    return -1;
}

int32_t rf_problem_node(const rf_problem_t *problem, const char *name)
{
    if (!problem->node_by_name) {
        for (int32_t i = 0; i < problem->n_nodes; i++)
            if (problem->nodes[i].name && strcmp(problem->nodes[i].name, name) == 0)
                return i;
        return -1;
    }
    int32_t lo = 0, hi = problem->n_nodes;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int32_t idx = problem->node_by_name[mid];
        int c = strcmp(problem->nodes[idx].name, name);
        if (c == 0)
            return idx;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* ---------------------------------------------------------------- paths */

/* A field's path, kept as segments and written out only for an error:
 * validating 16,384 nodes must not format 16,384 paths. Keys point at the
 * problem's strings or at literals, which outlive the path. */
#define S_PATH_SEGS 8
typedef struct {
    const char *key[S_PATH_SEGS]; /* NULL: the segment is idx[i] */
    long idx[S_PATH_SEGS];
    int n;
} s_path_t;

static s_path_t *s_key(s_path_t *p, const char *key)
{
    if (p->n < S_PATH_SEGS) {
        p->key[p->n] = key;
        p->n++;
    }
    return p;
}
static s_path_t *s_at(s_path_t *p, const char *key)
{
    p->n = 0;
    return s_key(p, key);
}
static s_path_t *s_idx(s_path_t *p, long i)
{
    if (p->n < S_PATH_SEGS) {
        p->key[p->n] = NULL;
        p->idx[p->n] = i;
        p->n++;
    }
    return p;
}
/* The path as text, in a per-thread buffer that rf_error_set copies at once. */
static const char *s_str(const s_path_t *p)
{
    static _Thread_local char buf[S_PATH_CAP];
    int len = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->n; i++)
        len =
            p->key[i] ? rf__path_key(buf, len, S_PATH_CAP, p->key[i]) : rf__path_index(buf, len, S_PATH_CAP, p->idx[i]);
    return buf;
}
/* "cluster.nodes[i]" */
static s_path_t *s_node(s_path_t *p, int32_t i)
{
    return s_idx(s_key(s_at(p, "cluster"), "nodes"), i);
}
/* "gangs[g]" */
static s_path_t *s_gang(s_path_t *p, int32_t g)
{
    return s_idx(s_at(p, "gangs"), g);
}
/* "gangs[g].pod_sets[j]" */
static s_path_t *s_ps(s_path_t *p, int32_t g, int32_t j)
{
    return s_idx(s_key(s_gang(p, g), "pod_sets"), j);
}

/* ---------------------------------------------------------- local checks */

typedef struct {
    const char *name;
    int32_t index;
} s_named_t;

static int s_named_cmp(const void *a, const void *b)
{
    const s_named_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* Sort `n` names and find the duplicate that comes first in input order:
 * *dup is its index (-1: none) and *first the earlier holder of its name. */
static void s_first_duplicate(s_named_t *tmp, int32_t n, int32_t *dup, int32_t *first)
{
    if (n > 1)
        qsort(tmp, (size_t)n, sizeof *tmp, s_named_cmp);
    *dup = -1;
    *first = -1;
    for (int32_t i = 1; i < n; i++)
        if (strcmp(tmp[i - 1].name, tmp[i].name) == 0 && (*dup < 0 || tmp[i].index < *dup)) {
            *dup = tmp[i].index;
            *first = tmp[i - 1].index;
        }
}

static int s_label_cmp(const void *a, const void *b)
{
    const rf_label_t *x = a, *y = b;
    return strcmp(x->key, y->key);
}

/* Pairs of int32 (rank, position), lexicographic. */
static int s_pair_cmp(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static bool s_string_ok(const char *s, const rf_limits_t *lim)
{
    return s && strlen(s) <= (size_t)lim->max_string;
}

/* Labels or a node selector: keys non-empty and unique, sorted by key. `base`
 * is the path of the map. */
static rf_status s_check_labels(rf_label_t *labels, int32_t n, const s_path_t *base, const rf_limits_t *lim,
                                rf_error_t *err)
{
    s_path_t p = *base;
    if (n < 0 || (n > 0 && !labels))
        return rf_error_set(err, RF_EINVAL, s_str(&p), "bad label array");
    if (n > lim->max_labels)
        return rf_error_set(err, RF_ELIMIT, s_str(&p), "has %d labels, more than max_labels (%d)", (int)n,
                            (int)lim->max_labels);
    for (int32_t i = 0; i < n; i++) {
        if (!labels[i].key || !labels[i].key[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "a label key must not be empty");
        if (!labels[i].value)
            labels[i].value = "";
        if (!s_string_ok(labels[i].key, lim) || !s_string_ok(labels[i].value, lim))
            return rf_error_set(err, RF_ELIMIT, s_str(s_key(&p, labels[i].key)), "longer than max_string (%d)",
                                (int)lim->max_string);
    }
    if (n > 1)
        qsort(labels, (size_t)n, sizeof *labels, s_label_cmp);
    for (int32_t i = 1; i < n; i++)
        if (strcmp(labels[i - 1].key, labels[i].key) == 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, labels[i].key)), "duplicate key");
    return RF_OK;
}

/* A quantity array: every entry in [0, RF_QTY_MAX] (`allow_unlimited_pods`:
 * entry 0 may also be RF_QTY_UNLIMITED). `base` is the path of the map. */
static rf_status s_check_qty(const rf_problem_t *prob, const int64_t *q, const s_path_t *base,
                             bool allow_unlimited_pods, rf_error_t *err)
{
    for (int32_t r = 0; r < prob->n_resources; r++) {
        if (r == RF_RES_PODS && allow_unlimited_pods && q[r] == RF_QTY_UNLIMITED)
            continue;
        if (q[r] < 0 || q[r] > RF_QTY_MAX) {
            s_path_t p = *base;
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, prob->resources[r])),
                                q[r] < 0 ? "must not be negative" : "is above 2^62 base units");
        }
    }
    return RF_OK;
}

static bool s_effect_ok(rf_effect e)
{
    return e == RF_EFFECT_NONE || e == RF_EFFECT_NO_SCHEDULE || e == RF_EFFECT_PREFER_NO_SCHEDULE ||
           e == RF_EFFECT_NO_EXECUTE;
}

static rf_status s_check_level_index(const rf_problem_t *prob, int32_t level, const s_path_t *p, rf_error_t *err)
{
    if (level < -1 || level >= prob->n_levels)
        return rf_error_set(err, RF_ESCHEMA, s_str(p), "level index %d is not a level", (int)level);
    return RF_OK;
}

/* ------------------------------------------------------------ validation */

rf_status rf_problem_index_nodes(rf_problem_t *problem, rf_error_t *err)
{
    s_path_t p;
    int32_t n = problem->n_nodes;
    if (n < 0 || (n > 0 && !problem->nodes))
        return rf_error_set(err, RF_EINVAL, s_str(s_key(s_at(&p, "cluster"), "nodes")), "bad node array");
    for (int32_t i = 0; i < n; i++)
        if (!problem->nodes[i].name || !problem->nodes[i].name[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_node(&p, i), "name")), "must not be empty");
    int32_t *index = rf__arena_alloc(problem->arena, (size_t)(n ? n : 1) * sizeof *index);
    s_named_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!index || !tmp) {
        free(tmp);
        return rf_error_set(err, RF_ENOMEM, "", "out of memory indexing %d nodes", (int)n);
    }
    for (int32_t i = 0; i < n; i++)
        tmp[i] = (s_named_t){problem->nodes[i].name, i};
    int32_t dup, first;
    s_first_duplicate(tmp, n, &dup, &first);
    for (int32_t i = 0; i < n; i++)
        index[i] = tmp[i].index;
    free(tmp);
    if (dup >= 0) {
        problem->node_by_name = NULL;
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_node(&p, dup), "name")),
                            "duplicate name \"%.200s\" (also cluster.nodes[%d])", problem->nodes[dup].name, (int)first);
    }
    problem->node_by_name = index;
    return RF_OK;
}

static rf_status s_validate_cluster(rf_problem_t *prob, const rf_limits_t *lim, rf_error_t *err)
{
    s_path_t p;

    /* levels */
    if (prob->n_levels < 1 || !prob->levels)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "cluster"), "levels")),
                            "must list 1 to %d levels, not %d", RF_MAX_LEVELS, (int)prob->n_levels);
    if (prob->n_levels > RF_MAX_LEVELS)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "cluster"), "levels")), "has %d levels, more than %d",
                            (int)prob->n_levels, RF_MAX_LEVELS);
    for (int32_t l = 0; l < prob->n_levels; l++) {
        const char *key = prob->levels[l];
        s_idx(s_key(s_at(&p, "cluster"), "levels"), l);
        if (!key || !key[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "must not be empty");
        if (!s_string_ok(key, lim))
            return rf_error_set(err, RF_ELIMIT, s_str(&p), "longer than max_string (%d)", (int)lim->max_string);
        for (int32_t k = 0; k < l; k++)
            if (strcmp(prob->levels[k], key) == 0)
                return rf_error_set(err, RF_ESCHEMA, s_str(&p), "duplicate level \"%.200s\" (also cluster.levels[%d])",
                                    key, (int)k);
        if (strcmp(key, RF_HOSTNAME_LABEL) == 0 && l != prob->n_levels - 1)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "%s must be the last level", RF_HOSTNAME_LABEL);
    }

    /* level_costs: default 10^(levels above the last) */
    if (!prob->level_costs) {
        prob->level_costs = rf_problem_alloc(prob, (size_t)prob->n_levels * sizeof *prob->level_costs);
        if (!prob->level_costs)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        double c = 1.0;
        for (int32_t l = prob->n_levels - 1; l >= 0; l--, c *= 10.0)
            prob->level_costs[l] = c;
    }
    for (int32_t l = 0; l < prob->n_levels; l++)
        if (!isfinite(prob->level_costs[l]) || prob->level_costs[l] < 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_idx(s_key(s_at(&p, "cluster"), "level_costs"), l)),
                                "must be a finite number >= 0");

    /* resources */
    if (prob->n_resources < 1 || !prob->resources || !prob->resources[0] ||
        strcmp(prob->resources[RF_RES_PODS], "pods") != 0)
        return rf_error_set(err, RF_EINVAL, "", "resources[0] must be \"pods\"");
    if (prob->n_resources > lim->max_resources)
        return rf_error_set(err, RF_ELIMIT, "", "%d distinct resources, more than max_resources (%d)",
                            (int)prob->n_resources, (int)lim->max_resources);
    for (int32_t r = 1; r < prob->n_resources; r++) {
        if (!prob->resources[r] || !prob->resources[r][0])
            return rf_error_set(err, RF_ESCHEMA, "", "a resource name must not be empty");
        for (int32_t k = 0; k < r; k++)
            if (strcmp(prob->resources[k], prob->resources[r]) == 0)
                return rf_error_set(err, RF_EINVAL, "", "resource \"%.200s\" interned twice", prob->resources[r]);
    }

    /* nodes */
    if (prob->n_nodes > lim->max_nodes)
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_at(&p, "cluster"), "nodes")),
                            "has %d nodes, more than max_nodes (%d)", (int)prob->n_nodes, (int)lim->max_nodes);
    RF_CALL(rf_problem_index_nodes(prob, err));
    for (int32_t i = 0; i < prob->n_nodes; i++) {
        rf_node_t *node = &prob->nodes[i];
        if (!s_string_ok(node->name, lim))
            return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_node(&p, i), "name")), "longer than max_string (%d)",
                                (int)lim->max_string);
        RF_CALL(s_check_labels(node->labels, node->n_labels, s_key(s_node(&p, i), "labels"), lim, err));
        if (!node->allocatable) {
            node->allocatable = rf_problem_alloc(prob, (size_t)prob->n_resources * sizeof(int64_t));
            if (!node->allocatable)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
            node->allocatable[RF_RES_PODS] = RF_QTY_UNLIMITED;
        }
        if (!node->used) {
            node->used = rf_problem_alloc(prob, (size_t)prob->n_resources * sizeof(int64_t));
            if (!node->used)
                return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        }
        RF_CALL(s_check_qty(prob, node->allocatable, s_key(s_node(&p, i), "allocatable"), true, err));
        RF_CALL(s_check_qty(prob, node->used, s_key(s_node(&p, i), "used"), false, err));
        if (node->n_taints < 0 || (node->n_taints > 0 && !node->taints))
            return rf_error_set(err, RF_EINVAL, s_str(s_key(s_node(&p, i), "taints")), "bad taint array");
        if (node->n_taints > lim->max_taints)
            return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_node(&p, i), "taints")),
                                "has %d taints, more than max_taints (%d)", (int)node->n_taints, (int)lim->max_taints);
        for (int32_t t = 0; t < node->n_taints; t++) {
            rf_taint_t *taint = &node->taints[t];
            if (!taint->key || !taint->key[0])
                return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_key(s_node(&p, i), "taints"), t), "key")),
                                    "must not be empty");
            if (!taint->value)
                taint->value = "";
            if (taint->effect == RF_EFFECT_NONE || !s_effect_ok(taint->effect))
                return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_key(s_node(&p, i), "taints"), t), "effect")),
                                    "must be NoSchedule, PreferNoSchedule or NoExecute");
        }
    }
    return RF_OK;
}

static rf_status s_validate_bound(rf_problem_t *prob, rf_pod_set_t *ps, int32_t g, int32_t j, const rf_limits_t *lim,
                                  rf_error_t *err)
{
    s_path_t p;
    if (ps->n_bound < 0 || (ps->n_bound > 0 && !ps->bound))
        return rf_error_set(err, RF_EINVAL, s_str(s_key(s_ps(&p, g, j), "bound")), "bad bound array");
    if (ps->n_bound > lim->max_bound)
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_ps(&p, g, j), "bound")),
                            "has %d entries, more than max_bound (%d)", (int)ps->n_bound, (int)lim->max_bound);
    int64_t total = 0;
    int32_t with_ranks = 0;
    for (int32_t b = 0; b < ps->n_bound; b++) {
        const rf_bound_t *bd = &ps->bound[b];
        if (bd->node < 0 || bd->node >= prob->n_nodes)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_key(s_ps(&p, g, j), "bound"), b), "node")),
                                "node index %d is not a node", (int)bd->node);
        for (int32_t k = 0; k < b; k++)
            if (ps->bound[k].node == bd->node)
                return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_key(s_ps(&p, g, j), "bound"), b), "node")),
                                    "node \"%.200s\" is already listed in bound[%d]", prob->nodes[bd->node].name,
                                    (int)k);
        if (bd->count <= 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_key(s_ps(&p, g, j), "bound"), b), "count")),
                                "must be > 0");
        total += bd->count;
        if (bd->ranks)
            with_ranks++;
        for (int32_t r = 0; bd->ranks && r < bd->count; r++)
            if (bd->ranks[r] < 0 || bd->ranks[r] >= ps->count)
                return rf_error_set(err, RF_ESCHEMA,
                                    s_str(s_idx(s_key(s_idx(s_key(s_ps(&p, g, j), "bound"), b), "ranks"), r)),
                                    "rank %d is out of range: the pod set's ranks are 0 to %lld", (int)bd->ranks[r],
                                    (long long)ps->count - 1);
    }
    if (total > ps->count)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "bound")),
                            "lists %lld bound pods, more than count (%lld)", (long long)total, (long long)ps->count);
    ps->n_bound_pods = total;
    if (with_ranks == 0)
        return RF_OK;
    if (with_ranks != ps->n_bound)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "bound")),
                            "either every entry gives its ranks or none does");
    /* Ranks are distinct across the whole pod set: sort (rank, position). */
    int32_t *all = malloc((size_t)total * 2 * sizeof *all);
    if (!all)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    int64_t k = 0;
    for (int32_t b = 0; b < ps->n_bound; b++)
        for (int32_t r = 0; r < ps->bound[b].count; r++, k++) {
            all[2 * k] = ps->bound[b].ranks[r];
            all[2 * k + 1] = (int32_t)k; /* position, to report the later one */
        }
    if (total > 1)
        qsort(all, (size_t)total, 2 * sizeof *all, s_pair_cmp);
    int64_t dup_pos = -1;
    int32_t dup_rank = 0;
    for (int64_t i = 1; i < total; i++)
        if (all[2 * i] == all[2 * (i - 1)]) {
            int32_t later = all[2 * i + 1]; /* sorted by (rank, position) */
            if (dup_pos < 0 || later < dup_pos) {
                dup_pos = later;
                dup_rank = all[2 * i];
            }
        }
    free(all);
    if (dup_pos < 0)
        return RF_OK;
    /* Position back to (entry, rank index). */
    int32_t b = 0;
    while (dup_pos >= ps->bound[b].count) {
        dup_pos -= ps->bound[b].count;
        b++;
    }
    return rf_error_set(err, RF_ESCHEMA,
                        s_str(s_idx(s_key(s_idx(s_key(s_ps(&p, g, j), "bound"), b), "ranks"), dup_pos)),
                        "rank %d is listed twice", (int)dup_rank);
}

static rf_status s_validate_pod_set(rf_problem_t *prob, rf_gang_t *gang, int32_t g, int32_t j, const rf_limits_t *lim,
                                    rf_error_t *err)
{
    s_path_t p;
    rf_pod_set_t *ps = &gang->pod_sets[j];

    if (!ps->name || !ps->name[0])
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "name")), "must not be empty");
    if (!s_string_ok(ps->name, lim))
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_ps(&p, g, j), "name")), "longer than max_string (%d)",
                            (int)lim->max_string);
    for (int32_t k = 0; k < j; k++)
        if (strcmp(gang->pod_sets[k].name, ps->name) == 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "name")),
                                "duplicate name \"%.200s\" (also gangs[%d].pod_sets[%d])", ps->name, (int)g, (int)k);

    /* count, min_count */
    if (ps->count < 1)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "count")), "must be >= 1");
    if (ps->count > lim->max_pods)
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_ps(&p, g, j), "count")), "%lld is more than max_pods (%lld)",
                            (long long)ps->count, (long long)lim->max_pods);
    if (ps->count > INT32_MAX)
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_ps(&p, g, j), "count")), "must be at most %d", INT32_MAX);
    if (ps->min_count < 0)
        ps->min_count = ps->count;
    if (ps->min_count > ps->count)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_ps(&p, g, j), "min_count")),
                            "%lld is more than count (%lld)", (long long)ps->min_count, (long long)ps->count);

    /* requests: pods is always 1 */
    if (!ps->requests) {
        ps->requests = rf_problem_alloc(prob, (size_t)prob->n_resources * sizeof(int64_t));
        if (!ps->requests)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    }
    if (ps->requests[RF_RES_PODS] != 0 && ps->requests[RF_RES_PODS] != 1)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_key(s_ps(&p, g, j), "requests"), "pods")),
                            "is implied (every pod uses pods: 1) and must not be given");
    ps->requests[RF_RES_PODS] = 1;
    RF_CALL(s_check_qty(prob, ps->requests, s_key(s_ps(&p, g, j), "requests"), false, err));

    RF_CALL(s_check_labels(ps->node_selector, ps->n_node_selector, s_key(s_ps(&p, g, j), "node_selector"), lim, err));

    /* tolerations */
    if (ps->n_tolerations < 0 || (ps->n_tolerations > 0 && !ps->tolerations))
        return rf_error_set(err, RF_EINVAL, s_str(s_key(s_ps(&p, g, j), "tolerations")), "bad toleration array");
    if (ps->n_tolerations > lim->max_taints)
        return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_ps(&p, g, j), "tolerations")),
                            "has %d tolerations, more than max_taints (%d)", (int)ps->n_tolerations,
                            (int)lim->max_taints);
    for (int32_t t = 0; t < ps->n_tolerations; t++) {
        rf_toleration_t *tol = &ps->tolerations[t];
        s_idx(s_key(s_ps(&p, g, j), "tolerations"), t);
        if (!tol->key)
            tol->key = "";
        if (!tol->value)
            tol->value = "";
        if (tol->op != RF_TOL_EQUAL && tol->op != RF_TOL_EXISTS)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, "operator")), "must be Equal or Exists");
        if (!s_effect_ok(tol->effect))
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, "effect")),
                                "must be \"\", NoSchedule, PreferNoSchedule or NoExecute");
        if (tol->op == RF_TOL_EXISTS && tol->value[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, "value")), "must be empty when operator is Exists");
        if (tol->op == RF_TOL_EQUAL && !tol->key[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(&p, "key")),
                                "must not be empty when operator is Equal (use Exists to tolerate every taint)");
    }

    /* topology: at or below the gang's required level */
    RF_CALL(
        s_check_level_index(prob, ps->topology.required, s_key(s_key(s_ps(&p, g, j), "topology"), "required"), err));
    RF_CALL(
        s_check_level_index(prob, ps->topology.preferred, s_key(s_key(s_ps(&p, g, j), "topology"), "preferred"), err));
    if (ps->topology.preferred >= 0 && ps->topology.required >= 0 && ps->topology.preferred < ps->topology.required)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_key(s_ps(&p, g, j), "topology"), "preferred")),
                            "level \"%.200s\" is coarser than the required level \"%.200s\"",
                            prob->levels[ps->topology.preferred], prob->levels[ps->topology.required]);
    if (ps->topology.required >= 0 && gang->topology.required >= 0 && ps->topology.required < gang->topology.required)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_key(s_ps(&p, g, j), "topology"), "required")),
                            "level \"%.200s\" is above the gang's required level \"%.200s\"",
                            prob->levels[ps->topology.required], prob->levels[gang->topology.required]);

    /* slice */
    if (ps->slice.size < 0)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_key(s_ps(&p, g, j), "slice"), "size")), "must be > 0");
    if (ps->slice.size > 0) {
        s_key(s_key(s_ps(&p, g, j), "slice"), "required");
        if (ps->slice.level < 0 || ps->slice.level >= prob->n_levels)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "level index %d is not a level", (int)ps->slice.level);
        if (gang->topology.required >= 0 && ps->slice.level < gang->topology.required)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p),
                                "level \"%.200s\" is above the gang's required level \"%.200s\"",
                                prob->levels[ps->slice.level], prob->levels[gang->topology.required]);
        if (ps->topology.required >= 0 && ps->slice.level < ps->topology.required)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p),
                                "level \"%.200s\" is above the pod set's required level \"%.200s\"",
                                prob->levels[ps->slice.level], prob->levels[ps->topology.required]);
        s_key(s_key(s_ps(&p, g, j), "slice"), "size");
        if (ps->count % ps->slice.size != 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "%d does not divide count (%lld)", (int)ps->slice.size,
                                (long long)ps->count);
        if (ps->min_count % ps->slice.size != 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(&p), "%d does not divide min_count (%lld)", (int)ps->slice.size,
                                (long long)ps->min_count);
    }

    return s_validate_bound(prob, ps, g, j, lim, err);
}

static rf_status s_validate_gangs(rf_problem_t *prob, const rf_limits_t *lim, rf_error_t *err)
{
    s_path_t p;
    if (prob->n_gangs < 0 || (prob->n_gangs > 0 && !prob->gangs))
        return rf_error_set(err, RF_EINVAL, s_str(s_at(&p, "gangs")), "bad gang array");
    if (prob->n_gangs > lim->max_gangs)
        return rf_error_set(err, RF_ELIMIT, s_str(s_at(&p, "gangs")), "has %d gangs, more than max_gangs (%d)",
                            (int)prob->n_gangs, (int)lim->max_gangs);
    for (int32_t g = 0; g < prob->n_gangs; g++) {
        rf_gang_t *gang = &prob->gangs[g];
        if (!gang->name || !gang->name[0])
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_gang(&p, g), "name")), "must not be empty");
        if (!s_string_ok(gang->name, lim))
            return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_gang(&p, g), "name")), "longer than max_string (%d)",
                                (int)lim->max_string);
        if (!isfinite(gang->bandwidth) || gang->bandwidth < 0)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_gang(&p, g), "bandwidth")),
                                "must be a finite number >= 0");
        RF_CALL(s_check_level_index(prob, gang->topology.required, s_key(s_key(s_gang(&p, g), "topology"), "required"),
                                    err));
        RF_CALL(s_check_level_index(prob, gang->topology.preferred,
                                    s_key(s_key(s_gang(&p, g), "topology"), "preferred"), err));
        if (gang->topology.preferred >= 0 && gang->topology.required >= 0 &&
            gang->topology.preferred < gang->topology.required)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_key(s_gang(&p, g), "topology"), "preferred")),
                                "level \"%.200s\" is coarser than the required level \"%.200s\"",
                                prob->levels[gang->topology.preferred], prob->levels[gang->topology.required]);
        if (gang->n_pod_sets < 1 || !gang->pod_sets)
            return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_gang(&p, g), "pod_sets")),
                                "must list at least one pod set");
        if (gang->n_pod_sets > lim->max_pod_sets)
            return rf_error_set(err, RF_ELIMIT, s_str(s_key(s_gang(&p, g), "pod_sets")),
                                "has %d pod sets, more than max_pod_sets (%d)", (int)gang->n_pod_sets,
                                (int)lim->max_pod_sets);
        for (int32_t j = 0; j < gang->n_pod_sets; j++)
            RF_CALL(s_validate_pod_set(prob, gang, g, j, lim, err));
    }

    /* names unique across gangs and running gangs (index n_gangs + i is
     * running[i]; running gangs without a name are reported by
     * rf__problem_validate_running) */
    int32_t G = prob->n_gangs, n = G;
    bool running_ok = prob->n_running >= 0 && (prob->n_running == 0 || prob->running);
    s_named_t *tmp = malloc((size_t)(G + (running_ok ? prob->n_running : 0) + 1) * sizeof *tmp);
    if (!tmp)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (int32_t g = 0; g < G; g++)
        tmp[g] = (s_named_t){prob->gangs[g].name, g};
    for (int32_t i = 0; running_ok && i < prob->n_running; i++)
        if (prob->running[i].name && prob->running[i].name[0])
            tmp[n++] = (s_named_t){prob->running[i].name, G + i};
    int32_t dup, first;
    s_first_duplicate(tmp, n, &dup, &first);
    free(tmp);
    if (dup < 0)
        return RF_OK;
    char also[64];
    snprintf(also, sizeof also, first < G ? "gangs[%d]" : "running[%d]", (int)(first < G ? first : first - G));
    if (dup < G)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_gang(&p, dup), "name")),
                            "duplicate name \"%.200s\" (also %s)", prob->gangs[dup].name, also);
    return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_idx(s_at(&p, "running"), dup - G), "name")),
                        "duplicate name \"%.200s\" (also %s)", prob->running[dup - G].name, also);
}

static rf_status s_validate_options(rf_problem_t *prob, const rf_limits_t *lim, rf_error_t *err)
{
    s_path_t p;
    rf_options_t *o = &prob->options;
    if (o->mode != RF_MODE_AUTO && o->mode != RF_MODE_GREEDY && o->mode != RF_MODE_ILP)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "mode")), "must be greedy, ilp or auto");
    if (o->admission != RF_ADMIT_VALUE && o->admission != RF_ADMIT_ORDERED)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "admission")),
                            "must be value or ordered");
    if (o->time_limit_ms < 0)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "time_limit_ms")), "must be >= 0");
    if (o->threads < 0)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "threads")), "must be >= 0");
    if (o->preemption != RF_PREEMPT_LOWER_PRIORITY && o->preemption != RF_PREEMPT_NEVER)
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "preemption")),
                            "must be lower_priority or never");
    if (!o->value_resource_name)
        o->value_resource_name = S_DEFAULT_VALUE_RESOURCE;
    if (!o->value_resource_name[0])
        return rf_error_set(err, RF_ESCHEMA, s_str(s_key(s_at(&p, "options"), "value_resource")), "must not be empty");

    /* The value resource counts only if some node or request mentions it
     * (a column of zeros is the same as no column). */
    o->value_resource = -1;
    int32_t r = -1;
    for (int32_t i = 0; i < prob->n_resources; i++)
        if (strcmp(prob->resources[i], o->value_resource_name) == 0)
            r = i;
    if (r < 0)
        return RF_OK;
    if (r == RF_RES_PODS) {
        o->value_resource = r;
        return RF_OK;
    }
    for (int32_t i = 0; i < prob->n_nodes && o->value_resource < 0; i++)
        if (prob->nodes[i].allocatable[r] || prob->nodes[i].used[r])
            o->value_resource = r;
    for (int32_t g = 0; g < prob->n_gangs && o->value_resource < 0; g++)
        for (int32_t j = 0; j < prob->gangs[g].n_pod_sets; j++)
            if (prob->gangs[g].pod_sets[j].requests[r])
                o->value_resource = r;
    for (int32_t g = 0; g < prob->n_running && o->value_resource < 0; g++)
        for (int32_t j = 0; j < prob->running[g].n_pod_sets; j++)
            if (prob->running[g].pod_sets[j].requests[r])
                o->value_resource = r;
    return RF_OK;
}

rf_status rf_problem_validate(rf_problem_t *problem, const rf_limits_t *limits, rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    if (!problem || !problem->arena)
        return rf_error_set(err, RF_EINVAL, "", "no problem");
    RF_CALL(s_validate_cluster(problem, limits, err));
    RF_CALL(s_validate_gangs(problem, limits, err));
    RF_CALL(s_validate_options(problem, limits, err));
    RF_CALL(rf__problem_validate_running(problem, limits, err));
    RF_CALL(rf_problem_check_shapes(problem, problem->n_nodes, limits, err));
    return RF_OK;
}

/* A pod set's shape as a 64-bit hash: requests, node_selector (sorted) and
 * tolerations. Two shapes that collide count as one: the check may then
 * undercount by a little, never refuse a batch it should take. */
static uint64_t s_shape_hash(const rf_problem_t *p, const rf_pod_set_t *ps)
{
    uint64_t h = 1469598103934665603ULL;
#define S_MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ULL)
    for (int32_t r = 0; r < p->n_resources; r++)
        S_MIX(ps->requests[r]);
    for (int32_t i = 0; i < ps->n_node_selector; i++) {
        for (const char *c = ps->node_selector[i].key; *c; c++)
            S_MIX((unsigned char)*c);
        S_MIX(0x100);
        for (const char *c = ps->node_selector[i].value; *c; c++)
            S_MIX((unsigned char)*c);
        S_MIX(0x101);
    }
    for (int32_t i = 0; i < ps->n_tolerations; i++) {
        const rf_toleration_t *t = &ps->tolerations[i];
        for (const char *c = t->key ? t->key : ""; *c; c++)
            S_MIX((unsigned char)*c);
        S_MIX(0x102 + t->op);
        for (const char *c = t->value ? t->value : ""; *c; c++)
            S_MIX((unsigned char)*c);
        S_MIX(0x110 + t->effect);
    }
#undef S_MIX
    return h ^ (h >> 31);
}

rf_status rf_problem_check_shapes(const rf_problem_t *p, int64_t n_nodes, const rf_limits_t *limits, rf_error_t *err)
{
    rf_limits_t defaults;
    if (!limits) {
        rf_limits_default(&defaults);
        limits = &defaults;
    }
    if (limits->max_shape_cells <= 0 || n_nodes <= 0)
        return RF_OK;
    int64_t allowed = limits->max_shape_cells / n_nodes; /* distinct shapes this cluster may have */
    int64_t n_ps = 0;
    for (int32_t g = 0; g < p->n_gangs; g++)
        n_ps += p->gangs[g].n_pod_sets;
    if (n_ps <= allowed)
        return RF_OK; /* cannot pass it */
    size_t cap = 16;
    while ((int64_t)cap < 2 * n_ps)
        cap <<= 1;
    uint64_t *tab = calloc(cap, sizeof *tab); /* 0: empty (a hash of 0 is stored as 1) */
    if (!tab)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory checking pod shapes");
    int64_t distinct = 0;
    rf_status rc = RF_OK;
    for (int32_t g = 0; g < p->n_gangs && rc == RF_OK; g++)
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets && rc == RF_OK; j++) {
            uint64_t h = s_shape_hash(p, &p->gangs[g].pod_sets[j]);
            h = h ? h : 1;
            size_t i = h & (cap - 1);
            while (tab[i] && tab[i] != h)
                i = (i + 1) & (cap - 1);
            if (tab[i])
                continue;
            tab[i] = h;
            if (++distinct > allowed) {
                s_path_t path;
                rc = rf_error_set(err, RF_ELIMIT, s_str(s_idx(s_key(s_idx(s_at(&path, "gangs"), g), "pod_sets"), j)),
                                  "more than %lld distinct pod shapes (requests, node_selector, tolerations) for "
                                  "%lld nodes: max_shape_cells (%lld) bounds shapes times nodes",
                                  (long long)allowed, (long long)n_nodes, (long long)limits->max_shape_cells);
            }
        }
    free(tab);
    return rc;
}

/* ---------------------------------------------------------------- nodes */

const char *rf_node_label(const rf_node_t *node, const char *key)
{
    int32_t lo = 0, hi = node->n_labels - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(node->labels[mid].key, key);
        if (c == 0)
            return node->labels[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

bool rf_node_admits(const rf_problem_t *pb, int32_t n, const rf_pod_set_t *ps)
{
    for (int32_t l = 0; l < pb->n_levels; l++)
        if (!rf_node_label(&pb->nodes[n], pb->levels[l]))
            return false;
    return rf__node_admits_labelled(pb, n, ps);
}
