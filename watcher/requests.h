/* watcher/requests.h: a pod's resource requests, computed the way
 * Kubernetes computes them (k8s.io/component-helpers/resource PodRequests,
 * which kube-scheduler's NodeResourcesFit uses), for every resource:
 *
 *   sidecars  = the init containers with restartPolicy Always
 *   regular   = sum over containers + sum over sidecars
 *   init peak = max over init containers i of: i's requests if i is a
 *               sidecar, the sum of the sidecars started before it plus
 *               its own requests otherwise (so a sidecar's peak is the sum
 *               of every sidecar up to and including it)
 *   requests  = max(regular, init peak) + spec.overhead
 *
 * A container that sets a limit but no request for a resource requests its
 * limit (the API server's defaulting; objects from a real API server already
 * carry it). Pod-level requests (spec.resources.requests, the
 * PodLevelResources feature) replace the container totals for cpu and memory
 * before the overhead is added. Not modelled: in-place resize (status
 * allocatedResources larger than the spec). */
#ifndef RACKFIT_WATCHER_REQUESTS_H
#define RACKFIT_WATCHER_REQUESTS_H

#include "doc.h"
#include "kres.h"
#include "rackfit/status.h"

/* `spec` is a PodSpec document. *out (empty on entry) receives the requests;
 * RF_ESCHEMA with the field's path for a malformed quantity. */
rf_status rf__pod_requests(const rf_doc_t *spec, rf__res_t *out, rf_error_t *err);

#endif
