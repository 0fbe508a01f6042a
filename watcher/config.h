/* watcher/config.h: rackfit-watch's settings, from flags and a flat YAML
 * config file (docs/watcher.md). Every setting is both a flag (--KEY VALUE)
 * and a key of the file (`-` and `_` alike); flags override the file.
 *
 * Invariants after rf__config_parse returns RF_OK: kubeconfig xor
 * in_cluster; solver, scheduler_name and levels set; 1..RF_CFG_MAX_LEVELS
 * levels and, when given, as many level costs; identity filled in. Strings
 * are owned by the config (rf__config_fini frees them). */
#ifndef RACKFIT_WATCHER_CONFIG_H
#define RACKFIT_WATCHER_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "rackfit/status.h"

#define RF_CFG_MAX_LEVELS 16

typedef struct {
    char *kubeconfig, *context, *solver, *scheduler_name, *levels, *level_costs, *mode, *value_resource;
    char *lease_namespace, *lease_name, *identity, *log_level, *metrics_listen, *preemption;
    bool in_cluster, leader_elect, preempt_others;
    long time_limit_ms, solve_timeout_ms, concurrency, max_retries, request_timeout_ms, debounce_ms, batch_max_ms,
        health_port, watch_timeout_s, lease_duration_s, binders, requeue_limit;
    double qps, burst, admit_timeout_s, backoff_base_s, backoff_cap_s, renew_deadline_s, retry_period_s,
        ready_timeout_s, requeue_base_s, requeue_cap_s, replan_s;
    /* derived */
    char *levels_buf; /* levels[] point into it */
    const char *level_v[RF_CFG_MAX_LEVELS];
    double cost_v[RF_CFG_MAX_LEVELS];
    int n_levels, n_costs;
    char ident[256];
} rf__config_t;

/* Defaults (every field). */
void rf__config_init(rf__config_t *c);
void rf__config_fini(rf__config_t *c);
/* One setting by name (a flag without its `--`, or a file key). */
rf_status rf__config_set(rf__config_t *c, const char *key, const char *value, rf_error_t *err);
/* argv: --config FILE first, then every flag; then the checks above. RF_EINVAL with the message. *help is set for
 * --help/-h (nothing else is done). */
rf_status rf__config_parse(rf__config_t *c, int argc, char **argv, bool *help, rf_error_t *err);
void rf__config_usage(FILE *out);

#endif
