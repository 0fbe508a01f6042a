/* probe/labels.h: from facts to node labels, and from the node's current
 * labels to the one patch that brings them there.
 *
 * Each label the probe manages ends in one of three states: SET (the probe
 * established a value), REMOVE (the probe established that the fact no
 * longer holds: NVML says no GPU is in a multi-node NVLink fabric; hwloc
 * sees no GPU or no NIC for the locality labels) or LEAVE (the probe could
 * not establish it: a source failed, a neighbour has no name, a query timed
 * out — the label is not touched, and `reason` says why).
 *
 * Ownership: the probe records the keys it wrote in one annotation
 * (`owner_annotation`, default rackfit.io/probe-labels, comma-separated).
 * It removes only keys listed there; it never writes a key outside its
 * configured set. The patch is one JSON merge patch of metadata.labels and
 * that annotation, with metadata.resourceVersion as a precondition. */
#ifndef RACKFIT_PROBE_LABELS_H
#define RACKFIT_PROBE_LABELS_H

#include <stdbool.h>

#include "doc.h"
#include "facts.h"
#include "rackfit/status.h"

#define RF_PROBE_MAX_LABELS 16
#define RF_LABEL_VALUE_MAX  63

typedef struct {
    const char *tier0_key;        /* fabric.topograph.run/tier-0 */
    const char *domain_key;       /* accelerator.topograph.run/domain */
    const char *locality_prefix;  /* NULL or "": the GPU-NIC locality labels are off (opt-in) */
    const char *owner_annotation; /* rackfit.io/probe-labels */
    const char *tier0_source;     /* "auto" (InfiniBand when it has a linked port, else LLDP), "ib", "lldp" */
    const char *ib_rail;          /* NULL: the leaf with the smallest GUID of all this node's HCAs; else a CA name */
    const char *lldp_interface;   /* NULL: every interface's neighbours must agree; else only this one's */
    bool lldp_chassis_id;         /* a neighbour without a System Name is named by its chassis id */
} rf_probe_label_cfg_t;

void rf__label_cfg_defaults(rf_probe_label_cfg_t *c);
/* Keys must be valid Kubernetes label keys, tier0_source one of the three. */
rf_status rf__label_cfg_check(const rf_probe_label_cfg_t *c, rf_error_t *err);

typedef enum { RF_LABEL_LEAVE = 0, RF_LABEL_SET, RF_LABEL_REMOVE } rf_label_action;

typedef struct {
    char key[320];
    rf_label_action action;
    char value[RF_LABEL_VALUE_MAX + 1];
    char reason[512]; /* where the value comes from, or why the label is left alone */
} rf_probe_label_t;

typedef struct {
    int n;
    rf_probe_label_t l[RF_PROBE_MAX_LABELS];
} rf_probe_labels_t;

void rf__labels_derive(const rf_probe_facts_t *f, const rf_probe_label_cfg_t *c, rf_probe_labels_t *out);

/* A valid label value for `raw`: itself when it is one (<= 63 characters of
 * [A-Za-z0-9._-], alphanumeric at both ends), else "x" followed by the
 * 16 hex digits of its FNV-1a 64 hash (topograph's rule for long values). */
void rf__label_value(const char *raw, char out[RF_LABEL_VALUE_MAX + 1]);
bool rf__label_key_valid(const char *key);

/* The merge patch that applies `want` to `node` (a Node object as the API
 * returns it), or *patch = NULL when nothing would change. *patch is
 * malloc'ed. RF_EPARSE when `node` is not a Node object. */
rf_status rf__labels_patch(const rf_probe_labels_t *want, const rf_probe_label_cfg_t *c, const rf_doc_t *node,
                           char **patch, rf_error_t *err);

#endif
