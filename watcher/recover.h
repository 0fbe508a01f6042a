/* watcher/recover.h: taking over from an earlier watcher (docs/watcher.md,
 * "Crash safety").
 *
 * After taking the Lease and syncing, the new leader reads the intents on
 * the pods (each written by the pod's own binding, binder.h): an attempt
 * with fewer pods bound (or ended) than its SIZE was left half done and is
 * rolled back (its bound pods deleted, uid precondition); one with every pod
 * bound is followed (follow.h) until the kubelets admit it and its pods are
 * ready. Pending pods with an intent are only left by watchers before the
 * intent rode on the binding (a separate patch first); they still count as
 * a partner left pending, so an upgrade in the middle of a bind is safe. It also reads the requeue annotations on the
 * PodGroups, so an evicted gang's backoff and count (or its failure) survive a restart. The cycle thread, before its
 * first cycle. */
#ifndef RACKFIT_WATCHER_RECOVER_H
#define RACKFIT_WATCHER_RECOVER_H

#include "binder.h"

void rf__binder_recover(rf__binder_t *b);

#endif
