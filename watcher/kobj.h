/* watcher/kobj.h: the Kubernetes objects the watcher uses (nodes, pods,
 * PodGroups, PodDisruptionBudgets), extracted from a decoded JSON document (base/doc.h) into our
 * own structs, copying every string (STYLE.md, stage 4).
 *
 * Only the fields the watcher needs are kept. Malformed fields are errors
 * with the field's path; unknown fields are ignored (the API grows). Every
 * object is malloc'ed and freed with its rf__k*_destroy (NULL-safe).
 * Invariants: key-value lists are sorted by key with unique keys; resource
 * lists hold base units (rackfit/quantity.h) and unique names. */
#ifndef RACKFIT_WATCHER_KOBJ_H
#define RACKFIT_WATCHER_KOBJ_H

#include <stdbool.h>
#include <stdint.h>

#include "doc.h"
#include "kdoc.h"
#include "kres.h"
#include "rackfit/status.h"

typedef struct {
    char *key;
    char *value;
} rf__kv_t;

typedef struct {
    rf__kv_t *v;
    int32_t n;
} rf__kvs_t;

typedef struct {
    char *key;
    char *op; /* In NotIn Exists DoesNotExist Gt Lt */
    char **values;
    int32_t n_values;
} rf__nsreq_t;

/* One nodeSelectorTerm: its requirements are ANDed. */
typedef struct {
    rf__nsreq_t *exprs;
    int32_t n_exprs;
    rf__nsreq_t *fields; /* matchFields: only metadata.name exists */
    int32_t n_fields;
} rf__nsterm_t;

/* A taint (key, value, effect) or a toleration (key, op, value, effect). */
typedef struct {
    char *key;
    char *op; /* tolerations only: "Equal" or "Exists" */
    char *value;
    char *effect;
} rf__taint_t;

typedef struct {
    char *name;
    char *uid;
    rf__kvs_t labels;
    rf__res_t alloc;
    rf__taint_t *taints;
    int32_t n_taints;
    bool unschedulable; /* spec.unschedulable (cordon) */
    bool ready;         /* the Ready condition is True */
} rf__knode_t;

typedef struct {
    char *ns;
    char *name;
    char *uid;
    char *node_name;      /* spec.nodeName, NULL when not bound */
    char *scheduler_name; /* spec.schedulerName ("default-scheduler" when absent) */
    char *phase;          /* status.phase, "" when absent */
    char *reason;         /* status.reason (the kubelet's OutOfcpu...), "" when absent */
    char *nominated;      /* status.nominatedNodeName, NULL when none */
    bool deleting;        /* metadata.deletionTimestamp is set */
    bool gated;           /* spec.schedulingGates is not empty */
    bool started;         /* status.startTime is set: the kubelet has admitted it */
    bool ready;           /* the Ready condition is True */
    int64_t priority;     /* spec.priority, 0 when absent */
    rf__kvs_t labels;
    rf__kvs_t annotations;
    rf__kvs_t node_selector;
    rf__taint_t *tols;
    int32_t n_tols;
    rf__nsterm_t *affinity; /* required node affinity terms (ORed); NULL: none */
    int32_t n_affinity;
    rf__res_t requests;  /* the pod's effective requests (requests.c), `pods` not included */
    char *unsupported;   /* why the contract cannot express this pod, or NULL */
    char *sched_reason;  /* the PodScheduled condition's reason when it is False, else NULL */
    char *sched_message; /* and its message */
    char *sig;           /* the scheduling-relevant spec, canonical: pods with equal sig form a pod set */
    char *assumed_node;  /* set by the binder after a 201 until the watch shows the bind */
    double seen;         /* rf__now() when the cache first held this pod (set by rf__cache_put) */
} rf__kpod_t;

typedef struct {
    char *ns;
    char *name;
    int64_t min_member;
    rf__kvs_t annotations; /* rackfit.io/ready-timeout, rackfit.io/requeue */
} rf__kpodgroup_t;

/* A PodDisruptionBudget (policy/v1 or v1beta1): its selector and what its
 * status allows. The Eviction API refuses (429) an eviction when the pod's
 * budget has no disruption left, or when its status is older than its spec
 * (observedGeneration < generation); `allowed` is 0 then. */
typedef struct {
    char *ns;
    char *name;
    bool has_selector; /* spec.selector is not null (a null one selects nothing) */
    rf__kvs_t match_labels;
    rf__nsreq_t *exprs; /* matchExpressions: In NotIn Exists DoesNotExist */
    int32_t n_exprs;
    int64_t allowed; /* status.disruptionsAllowed, 0 when absent, negative or not current */
    bool v1beta1;    /* read as policy/v1beta1 (apiVersion; the watcher sets it for list items, which carry none) */
} rf__kpdb_t;

/* Labels that name a pod's role in its gang (NULL-terminated): pods with
 * different roles are different pod sets even with equal specs. */
extern const char *const rf__role_labels[];

/* Extraction. `path` prefixes error paths ("items[3]"). */
rf_status rf__knode_from_doc(const rf_doc_t *obj, rf__knode_t **out, rf_error_t *err);
rf_status rf__kpod_from_doc(const rf_doc_t *obj, rf__kpod_t **out, rf_error_t *err);
rf_status rf__kpodgroup_from_doc(const rf_doc_t *obj, rf__kpodgroup_t **out, rf_error_t *err);
rf_status rf__kpdb_from_doc(const rf_doc_t *obj, rf__kpdb_t **out, rf_error_t *err);
void rf__knode_destroy(rf__knode_t **node);
void rf__kpod_destroy(rf__kpod_t **pod);
void rf__kpodgroup_destroy(rf__kpodgroup_t **pg);
void rf__kpdb_destroy(rf__kpdb_t **pdb);

/* Lookups. The returned strings are borrowed from the object. */
const char *rf__kvs_get(const rf__kvs_t *kvs, const char *key);

/* Does the node match the pod's required node affinity (any term) and node selector? */
bool rf__kpod_affinity_matches(const rf__kpod_t *pod, const rf__knode_t *node);
/* Does the budget select the pod (same namespace, selector matches)? By the
 * rule of the API version the budget was read as (pdb->v1beta1): an empty
 * selector selects every pod of the namespace in policy/v1 and none in
 * policy/v1beta1; and a server that serves only v1beta1 (before 1.21) finds
 * no budget at all for a pod without labels. */
bool rf__kpdb_selects(const rf__kpdb_t *pdb, const rf__kpod_t *pod);
/* Is the pod terminal (Succeeded or Failed)? */
bool rf__kpod_terminal(const rf__kpod_t *pod);

#endif
