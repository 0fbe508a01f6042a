/* watcher/ktime.h: the Kubernetes API's timestamps and the durations users
 * write in annotations.
 *
 * The API has two timestamp types, and a real API server refuses anything
 * else (422 on a pod status patch, 400 on an Event):
 * - Time (metav1.Time: conditions' lastTransitionTime, Events'
 *   firstTimestamp/lastTimestamp): RFC 3339 in whole seconds, UTC,
 *   "2026-12-01T18:47:12Z";
 * - MicroTime (metav1.MicroTime: Leases' renewTime/acquireTime, events.k8s.io
 *   eventTime): RFC 3339 with exactly six fractional digits,
 *   "2026-12-01T18:47:12.123456Z".
 * Both are produced from one broken-down time, so they always agree on the
 * second (the fraction is truncated, never rounded up into the next second).
 *
 * Durations ("90s", "5m", "1h30m", "2.5m", a bare number of seconds) parse
 * into seconds; anything else is an error naming the text. */
#ifndef RACKFIT_WATCHER_KTIME_H
#define RACKFIT_WATCHER_KTIME_H

#include <stdbool.h>
#include <stddef.h>

/* Buffers of RF_KTIME_CAP bytes hold either form. */
#define RF_KTIME_CAP 32

/* metav1.Time: "YYYY-MM-DDTHH:MM:SSZ". */
void rf__ktime(double wall, char *buf, size_t cap);
/* metav1.MicroTime: "YYYY-MM-DDTHH:MM:SS.ffffffZ". */
void rf__microtime(double wall, char *buf, size_t cap);

/* Parse "YYYY-MM-DDTHH:MM:SS[.frac]Z" back into wall seconds; false when it is not one. */
bool rf__ktime_parse(const char *text, double *wall);

/* A duration like Go's time.ParseDuration restricted to h, m, s and ms units
 * (a bare non-negative number means seconds). false when `text` is not one,
 * or is negative or over 30 days. */
bool rf__duration_parse(const char *text, double *seconds);

#endif
