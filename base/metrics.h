/* base/metrics.h: a small metrics registry (counters, gauges, histograms,
 * each a family of series keyed by label values) rendered in the Prometheus
 * text exposition format 0.0.4. rackfitd and rackfit-watch keep one registry
 * each; base/httpd.h serves it at GET /metrics.
 *
 * Naming (enforced at registration; a bad name is our misuse, refused with
 * NULL): metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
 * [a-zA-Z_][a-zA-Z0-9_]* and never start with "__"; a counter's name ends in
 * "_total"; a histogram may not use the label "le". Families are unique by
 * name within a registry.
 *
 * Invariants:
 * - a series handle (rf__series_t *) is stable for the registry's lifetime,
 *   except in a family the caller clears (rf__metric_clear), which is for
 *   families refilled by a collect callback at each scrape;
 * - updates (add, set, observe) are lock-free atomics; finding or creating a
 *   series and rendering take the registry's mutex;
 * - a histogram's bucket counts are cumulative when rendered, the +Inf
 *   bucket equals _count; bounds are strictly increasing and finite.
 *
 * Thread-safe: any thread may update, look up and render at once. */
#ifndef RACKFIT_BASE_METRICS_H
#define RACKFIT_BASE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#define RF__METRIC_MAX_LABELS   4
#define RF__METRIC_MAX_BUCKETS  32
#define RF__METRICS_MAX_COLLECT 8

typedef struct rf__metrics rf__metrics_t;
typedef struct rf__metric rf__metric_t;
typedef struct rf__series rf__series_t;

/* NULL on ENOMEM. */
rf__metrics_t *rf__metrics_new(void);
/* NULL-safe; sets *m to NULL. Every family and series goes with it. */
void rf__metrics_destroy(rf__metrics_t **m);

/* Register a family with `n_labels` label names (0 to RF__METRIC_MAX_LABELS).
 * NULL when a name breaks the rules above, the name is taken, or ENOMEM. The
 * registry copies every string. */
rf__metric_t *rf__metrics_counter(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                  const char *const *label_names);
rf__metric_t *rf__metrics_gauge(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                const char *const *label_names);
/* `bounds`: the buckets' upper edges (1 to RF__METRIC_MAX_BUCKETS, strictly
 * increasing, finite); +Inf is implicit. */
rf__metric_t *rf__metrics_histogram(rf__metrics_t *m, const char *name, const char *help, int n_labels,
                                    const char *const *label_names, const double *bounds, int n_bounds);

/* `n` bounds start, start*factor, ... (start > 0, factor > 1); returns n. */
int rf__metrics_exp_bounds(double start, double factor, int n, double *out);

/* The series of `values` (one per label name; NULL for a family without
 * labels), created at zero on first use. NULL on ENOMEM or a NULL value. */
rf__series_t *rf__metric_series(rf__metric_t *f, const char *const *values);
/* The same with the values as arguments (exactly the family's label count). */
rf__series_t *rf__metric_with(rf__metric_t *f, ...);
/* Drop every series of the family (their handles become invalid). */
void rf__metric_clear(rf__metric_t *f);

/* Counters: add v >= 0 (a negative v is ignored). Gauges: set, add (any
 * sign). Histograms: observe. Every call is NULL-safe (a series that could
 * not be made for memory is skipped, never a crash). */
void rf__counter_add(rf__series_t *s, double v);
void rf__gauge_set(rf__series_t *s, double v);
void rf__gauge_add(rf__series_t *s, double v);
void rf__histogram_observe(rf__series_t *s, double v);
/* The current value (counter or gauge), or a histogram's count; 0 for NULL. */
double rf__series_value(const rf__series_t *s);

/* A callback run at the start of every render, before any family is read,
 * to set gauges that are computed on demand (queue depths, store sizes).
 * Up to RF__METRICS_MAX_COLLECT may be added; they run in order. -1 when
 * out of memory or over that number. */
int rf__metrics_on_collect(rf__metrics_t *m, void (*fn)(void *arg, rf__metrics_t *m), void *arg);

/* The whole registry in the text format (families in registration order,
 * series in creation order): malloc'ed, NUL-terminated; free() it. NULL on
 * ENOMEM. */
char *rf__metrics_render(rf__metrics_t *m, size_t *len);

/* The text format's content type. */
#define RF__METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
