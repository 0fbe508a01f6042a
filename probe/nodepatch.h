/* probe/nodepatch.h: writing the labels onto the Node, through the
 * watcher's Kubernetes HTTP client (watcher/kube_http.h), with nothing but
 * the `patch` verb on nodes:
 *
 *   1. PATCH an empty JSON merge patch ({}): the API server answers with
 *      the Node as it is and writes nothing (a no-op patch is not stored);
 *   2. compute the one merge patch that applies the labels
 *      (rf__labels_patch, with metadata.resourceVersion as precondition);
 *      nothing to change: done;
 *   3. PATCH it; a 409 (someone changed the Node in between) starts again
 *      from 1, at most `max_conflicts` times. */
#ifndef RACKFIT_PROBE_NODEPATCH_H
#define RACKFIT_PROBE_NODEPATCH_H

#include <stdbool.h>

#include "kube_http.h"
#include "labels.h"
#include "rackfit/status.h"

typedef struct {
    long timeout_ms;   /* each request */
    int max_conflicts; /* 409s retried */
} rf_probe_patch_opts_t;

/* *patched: whether a patch was written; *patch (may be NULL): a copy of it. */
rf_status rf__node_apply(rf__kube_t *kube, const char *node, const rf_probe_labels_t *want,
                         const rf_probe_label_cfg_t *cfg, const rf_probe_patch_opts_t *opts, bool *patched,
                         char **patch, rf_error_t *err);

#endif
