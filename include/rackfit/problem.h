/* rackfit/problem.h: the placement problem of PLACEMENT-MODEL.md as C data.
 *
 * A problem is built once (by a reader: rf_problem_from_json, or
 * rf_problem_from_doc for an already decoded document; or by a caller with
 * rf_problem_new, rf_problem_alloc, rf_gang_init and rf_pod_set_init, then
 * rf_problem_validate) and is then read-only:
 * solvers, the checker and the benchmarks take it as `const`. Every string and
 * array belongs to the problem and lives until rf_problem_destroy.
 *
 * Invariants after a successful read (rf_problem_validate):
 * - names are unique: nodes, gangs, pod sets within their gang;
 * - 1 <= n_levels <= RF_MAX_LEVELS; "kubernetes.io/hostname", when present,
 *   is the last level; level_costs has n_levels entries, each >= 0;
 * - resources[0] is "pods"; every quantity array has n_resources entries;
 *   a node's `pods` allocatable is RF_QTY_UNLIMITED when not given; a pod
 *   set's requests[0] (pods) is 1;
 * - level indices (`required`, slice levels) are -1 (none) or in
 *   [0, n_levels); a pod set's required level is at or below (>=) its gang's;
 *   a slice's level is at or below every required level covering its pod set;
 * - 0 <= min_count <= count; with a slice, count and min_count are multiples
 *   of its size; bound pods of a pod set number at most `count`, their node
 *   indices are valid and their ranks (when given) are distinct and < count;
 * - running gangs: names unique together with the gangs' names; at least one
 *   pod set, each with at least one placement, counts >= 1, a node at most
 *   once per pod set; on every node, the bound pods and the running gangs'
 *   pods (with pods: 1 each where the node has a pods limit) fit in `used`.
 *   The number of running gangs is bounded by max_gangs, their pod sets by
 *   max_pod_sets, a pod set's placements by max_bound. */
#ifndef RACKFIT_PROBLEM_H
#define RACKFIT_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RF_MAX_LEVELS     16
#define RF_HOSTNAME_LABEL "kubernetes.io/hostname"
#define RF_RES_PODS       0 /* index of the implicit `pods` resource */

/* Limits on what a reader accepts; all configurable (rackfitd's config file,
 * the CLI's flags). rf_limits_default() gives the defaults documented in
 * docs/limits.md. */
typedef struct {
    int32_t max_nodes;       /* nodes in the cluster */
    int32_t max_gangs;       /* gangs in one problem */
    int32_t max_pod_sets;    /* pod sets in one gang */
    int64_t max_pods;        /* `count` of one pod set */
    int32_t max_labels;      /* labels on one node, keys in one selector */
    int32_t max_taints;      /* taints on a node, tolerations on a pod set */
    int32_t max_resources;   /* distinct resource names in one problem */
    int32_t max_bound;       /* `bound` entries of one pod set */
    int32_t max_string;      /* bytes in any one string */
    int32_t max_depth;       /* nesting depth of the input document */
    int64_t max_input_bytes; /* size of the whole input */
    int64_t max_shape_cells; /* distinct pod shapes (requests, node_selector, tolerations) times nodes:
                              * what the search keeps a table for; bounds its memory */
} rf_limits_t;

void rf_limits_default(rf_limits_t *limits);

typedef enum {
    RF_EFFECT_NONE = 0,
    RF_EFFECT_NO_SCHEDULE,
    RF_EFFECT_PREFER_NO_SCHEDULE,
    RF_EFFECT_NO_EXECUTE
} rf_effect;
typedef enum { RF_TOL_EQUAL = 0, RF_TOL_EXISTS } rf_tol_op;
typedef enum { RF_MODE_AUTO = 0, RF_MODE_GREEDY, RF_MODE_ILP } rf_mode;
typedef enum { RF_ADMIT_VALUE = 0, RF_ADMIT_ORDERED } rf_admission;
typedef enum { RF_PREEMPT_LOWER_PRIORITY = 0, RF_PREEMPT_NEVER } rf_preemption;

typedef struct {
    const char *key;
    const char *value;
} rf_label_t;

typedef struct {
    const char *key;
    const char *value; /* "" when absent */
    rf_effect effect;
} rf_taint_t;

typedef struct {
    const char *key; /* NULL or "" with EXISTS: tolerates every taint */
    rf_tol_op op;
    const char *value; /* "" when absent */
    rf_effect effect;  /* RF_EFFECT_NONE: matches every effect */
} rf_toleration_t;

typedef struct {
    const char *name;
    rf_label_t *labels; /* sorted by key, keys unique */
    int32_t n_labels;
    int64_t *allocatable; /* [n_resources]; 0 when not listed (pods: UNLIMITED) */
    int64_t *used;        /* [n_resources]; 0 when not listed */
    rf_taint_t *taints;
    int32_t n_taints;
    bool unschedulable;
} rf_node_t;

typedef struct {
    int32_t required;  /* level index, or -1 */
    int32_t preferred; /* level index, or -1 (no effect on the objective) */
} rf_topology_t;

typedef struct {
    int32_t size;  /* 0: no slice */
    int32_t level; /* level index of the slice's domain */
} rf_slice_t;

typedef struct {
    int32_t node; /* index into cluster nodes */
    int32_t count;
    int32_t *ranks; /* NULL, or `count` distinct ranks */
} rf_bound_t;

typedef struct {
    const char *name;
    int64_t count;
    int64_t min_count;
    int64_t *requests;         /* [n_resources]; requests[RF_RES_PODS] == 1 */
    rf_label_t *node_selector; /* sorted by key */
    int32_t n_node_selector;
    rf_toleration_t *tolerations;
    int32_t n_tolerations;
    rf_topology_t topology;
    rf_slice_t slice;
    rf_bound_t *bound;
    int32_t n_bound;
    int64_t n_bound_pods; /* sum of bound[].count */
} rf_pod_set_t;

typedef struct {
    const char *name;
    int64_t priority;
    double bandwidth;
    rf_topology_t topology;
    rf_pod_set_t *pod_sets;
    int32_t n_pod_sets;
} rf_gang_t;

/* A running gang (PLACEMENT-MODEL.md, "Running gangs and preemption"):
 * admitted and fully running, kept or preempted whole by an answer. Its pods
 * are already in the nodes' `used`. */
typedef struct {
    int32_t node;  /* index into cluster nodes */
    int32_t count; /* >= 1 */
} rf_run_placement_t;

typedef struct {
    const char *name;
    int64_t *requests;              /* [n_resources]; requests[RF_RES_PODS] == 1 */
    rf_run_placement_t *placements; /* each node at most once */
    int32_t n_placements;           /* >= 1 */
    int64_t n_pods;                 /* sum of placements[].count (validate) */
} rf_run_pod_set_t;

typedef struct {
    const char *name; /* unique among gangs and running gangs */
    int64_t priority;
    double bandwidth;
    bool preemptible; /* default true */
    rf_run_pod_set_t *pod_sets;
    int32_t n_pod_sets; /* >= 1 */
    /* Constants of the problem, filled by validate: the gang's value while
     * kept (units of value_resource, pods), D(g,l) over its placements, and
     * its penalty while kept. */
    int64_t units;
    int64_t pods;
    int32_t domains[RF_MAX_LEVELS];
    double penalty;
} rf_running_t;

typedef struct {
    rf_mode mode;
    int64_t time_limit_ms;
    int32_t threads; /* 0: all cores */
    rf_admission admission;
    int32_t value_resource; /* index into resources, or -1 if no node or pod names it */
    const char *value_resource_name;
    rf_preemption preemption; /* default RF_PREEMPT_LOWER_PRIORITY */
} rf_options_t;

typedef struct rf_problem {
    /* cluster */
    const char **levels;
    double *level_costs;
    int32_t n_levels;
    const char **resources; /* resources[0] == "pods" */
    int32_t n_resources;
    rf_node_t *nodes;
    int32_t n_nodes;
    /* batch */
    rf_gang_t *gangs;
    int32_t n_gangs;
    rf_options_t options;
    rf_running_t *running; /* running gangs, in problem order */
    int32_t n_running;
    /* internal: owned memory, and node indices sorted by name (validate) */
    struct rf__arena *arena;
    int32_t *node_by_name;
    const void *tree_hint; /* a topology tree already built for exactly these nodes and levels
                            * (rackfitd's stored clusters; solver/tree.h), or NULL: borrowed */
} rf_problem_t;

/* Builders: fill a gang or pod set with the contract's defaults before
 * setting fields (the zeroed memory of rf_problem_alloc would otherwise mean
 * "required level 0" and "min_count 0"): rf_gang_init gives priority 0,
 * bandwidth 1, no topology; rf_pod_set_init gives min_count -1 (validate
 * replaces a negative min_count by `count`), no topology, no slice.
 * A node needs no init: NULL allocatable/used/requests arrays are replaced by
 * validate with the defaults (nothing, `pods` UNLIMITED; nothing; `pods: 1`),
 * and a NULL options.value_resource_name by "nvidia.com/gpu". */
void rf_gang_init(rf_gang_t *gang);
void rf_pod_set_init(rf_pod_set_t *pod_set);
/* A running gang with the defaults: priority 0, bandwidth 1, preemptible. */
void rf_running_init(rf_running_t *running);

/* An empty problem with defaults (levels and nodes still to be given).
 * Returns NULL when out of memory. */
rf_problem_t *rf_problem_new(void);
/* NULL-safe; sets *problem to NULL. */
void rf_problem_destroy(rf_problem_t **problem);

/* Memory owned by the problem, for builders (the readers, generators).
 * Returns NULL when out of memory. Zeroed. */
void *rf_problem_alloc(rf_problem_t *problem, size_t size);
/* Copy `len` bytes of `s` into the problem as a NUL-terminated string. */
const char *rf_problem_strdup(rf_problem_t *problem, const char *s, size_t len);
/* The index of resource `name`, adding it if new (and growing every quantity
 * array already allocated is NOT done: builders intern all resource names
 * before allocating quantity arrays, or use the readers). -1 on ENOMEM. */
int32_t rf_problem_resource(rf_problem_t *problem, const char *name);
/* Index of a level by label key, -1 when not a level. */
int32_t rf_problem_level(const rf_problem_t *problem, const char *key);
/* Index of a node by name, -1 when absent (O(log n) after validate). */
int32_t rf_problem_node(const rf_problem_t *problem, const char *name);

/* The value of label `key` on a node of a validated problem (its labels are
 * sorted), or NULL. Borrowed: lives as long as the problem. */
const char *rf_node_label(const rf_node_t *node, const char *key);
/* Can node `n` take new pods of pod set `ps`, by Kubernetes' rules: it has
 * every level label, is not cordoned, matches the node_selector exactly, and
 * every NoSchedule/NoExecute taint is tolerated. (The checker, solver/check.c,
 * has its own copy of these rules on purpose.) */
bool rf_node_admits(const rf_problem_t *problem, int32_t n, const rf_pod_set_t *ps);

/* Sort node names into node_by_name (RF_ESCHEMA on an empty or duplicate
 * name, path `cluster.nodes[i].name`), so that rf_problem_node is O(log n).
 * Validate calls it; a reader calls it early to resolve `bound` node names.
 * Calling it again after nodes change rebuilds the index. */
rf_status rf_problem_index_nodes(rf_problem_t *problem, rf_error_t *err);

/* The distinct pod shapes of the batch times `n_nodes` must stay within
 * limits->max_shape_cells (RF_ELIMIT naming the pod set that passes it).
 * rf_problem_validate calls it with the problem's own nodes; a reader that
 * lends a stored cluster's nodes afterwards calls it with their count. */
rf_status rf_problem_check_shapes(const rf_problem_t *problem, int64_t n_nodes, const rf_limits_t *limits,
                                  rf_error_t *err);

/* Check every invariant above on a built problem, fill defaults that depend
 * on the whole problem, and index node names. The readers call it; builders
 * must. Errors name the field by its contract path. */
rf_status rf_problem_validate(rf_problem_t *problem, const rf_limits_t *limits, rf_error_t *err);
/* `limits` NULL means rf_limits_default() for the validate and read calls. */

/* Read a problem from a decoded document (base/doc.h: rf_doc_t, from the
 * JSON boundary or rackfitd's MessagePack codec), strictly, as the JSON
 * reader does. `root` is the problem map; keys other than cluster, gangs,
 * running and options are errors unless `extra_keys` (NULL-terminated, or
 * NULL) lists them (rackfitd passes its envelope's keys). Nothing of the
 * document is kept: every string is copied. */
struct rf_doc;
rf_status rf_problem_from_doc(const struct rf_doc *root, const char *const *extra_keys, const rf_limits_t *limits,
                              rf_problem_t **out, rf_error_t *err);
/* The same for a batch (gangs, running, options) against a stored cluster,
 * already validated: the new problem BORROWS the cluster's levels, nodes and
 * name index, so `cluster` must stay alive and unchanged until the problem
 * is destroyed; it is only read (several threads may read batches against
 * one cluster at once). */
rf_status rf_problem_from_doc_on(const struct rf_doc *root, const char *const *extra_keys, const rf_problem_t *cluster,
                                 const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err);

/* Read a problem from JSON text (strict: see PLACEMENT-MODEL.md section 4). */
rf_status rf_problem_from_json(const char *text, size_t len, const rf_limits_t *limits, rf_problem_t **out,
                               rf_error_t *err);
/* Read a JSON file; "-" is standard input. */
rf_status rf_problem_from_json_file(const char *path, const rf_limits_t *limits, rf_problem_t **out, rf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
