/* watcher/config.c: settings from flags and the config file (see config.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binder.h"
#include "kubeconfig.h"
#include "log.h"

void rf__config_init(rf__config_t *c)
{
    *c = (rf__config_t){.leader_elect = true,
                        .time_limit_ms = 1000,
                        .solve_timeout_ms = 30000,
                        .concurrency = 64,
                        .max_retries = 5,
                        .request_timeout_ms = 10000,
                        .debounce_ms = 20,
                        .batch_max_ms = 250,
                        .watch_timeout_s = 300,
                        .lease_duration_s = 15,
                        .binders = 4,
                        .requeue_limit = 0,
                        .qps = 200,
                        .burst = 400,
                        .admit_timeout_s = 300,
                        .backoff_base_s = 1,
                        .backoff_cap_s = 300,
                        .renew_deadline_s = 10,
                        .retry_period_s = 2,
                        .ready_timeout_s = 300,
                        .requeue_base_s = 60,
                        .requeue_cap_s = 1800,
                        .replan_s = 60};
}

void rf__config_usage(FILE *out)
{
    fputs("usage: rackfit-watch (--kubeconfig FILE [--context NAME] | --in-cluster) --solver ENDPOINT\n"
          "                     --scheduler-name NAME --levels L1,L2,... [--config FILE] [--KEY VALUE]...\n"
          "\n"
          "Watches nodes, pods, PodGroups and PodDisruptionBudgets, sends the pending gangs of pods with\n"
          "spec.schedulerName NAME to rackfitd at ENDPOINT, and binds each admitted gang whole.\n"
          "Settings (flags or config file keys, `-` and `_` alike; defaults in brackets):\n"
          "  level-costs 100,10,1 [contract default]   mode auto|greedy|ilp [auto]   time-limit-ms [1000]\n"
          "  value-resource [nvidia.com/gpu]   solve-timeout-ms [30000]\n"
          "  qps [200] burst [400]: the client's rate limit, shared by every binder thread\n"
          "  binders [4]: gangs bound at once (one thread each)   concurrency [64]: requests in flight per binder\n"
          "  max-retries [5] request-timeout-ms [10000] admit-timeout-s [300]\n"
          "  backoff-base-s [1] backoff-cap-s [300]: a gang that failed to bind waits base*2^(n-1), capped\n"
          "  ready-timeout-s [300]: a bound gang not all Ready by then is evicted whole (0: never)\n"
          "  requeue-base-s [60] requeue-cap-s [1800]: an evicted gang's pods wait base*2^(n-1), capped\n"
          "  requeue-limit [0: unlimited]: evictions after which the gang has failed and stays pending\n"
          "  debounce-ms [20] batch-max-ms [250]: a cycle starts once changes pause for debounce-ms\n"
          "  replan-s [60]: while a gang is pending, a plan at least this often, changes or not (0: off)\n"
          "  leader-elect true|false [true] lease-namespace [the kubeconfig's, else rackfit-system]\n"
          "  lease-name [rackfit-watch] lease-duration-s [15] renew-deadline-s [10] retry-period-s [2]\n"
          "  identity [$POD_NAME, else HOST-PID] health-port [0: off; GET /healthz, /readyz]\n"
          "  metrics-listen HOST:PORT [off; GET /metrics, /healthz, /readyz]\n"
          "  preemption lower_priority|never [lower_priority]: our running gangs may be preempted whole\n"
          "  preempt-others true|false [false]: other schedulers' running pods may be victims too\n"
          "  watch-timeout-s [300] log-level error|warn|info|debug [info]\n",
          out);
}

static rf_status s_set_str(rf__config_t *c, const char *key, const char *v, bool *done, rf_error_t *err)
{
    struct {
        const char *k;
        char **s;
    } strs[] = {{"kubeconfig", &c->kubeconfig},
                {"context", &c->context},
                {"solver", &c->solver},
                {"scheduler-name", &c->scheduler_name},
                {"levels", &c->levels},
                {"level-costs", &c->level_costs},
                {"mode", &c->mode},
                {"value-resource", &c->value_resource},
                {"lease-namespace", &c->lease_namespace},
                {"lease-name", &c->lease_name},
                {"identity", &c->identity},
                {"log-level", &c->log_level},
                {"metrics-listen", &c->metrics_listen},
                {"preemption", &c->preemption}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strcmp(key, strs[i].k) == 0) {
            *done = true;
            free(*strs[i].s);
            *strs[i].s = strdup(v);
            return *strs[i].s ? RF_OK : rf_error_set(err, RF_ENOMEM, key, "out of memory");
        }
    return RF_OK;
}

static rf_status s_set_num(rf__config_t *c, const char *key, const char *v, bool *done, rf_error_t *err)
{
    /* one table: an integer setting has `l`, a real-valued one `d` */
    struct {
        const char *k;
        long *l;
        double *d;
    } nums[] = {{"time-limit-ms", &c->time_limit_ms, NULL},
                {"solve-timeout-ms", &c->solve_timeout_ms, NULL},
                {"concurrency", &c->concurrency, NULL},
                {"max-retries", &c->max_retries, NULL},
                {"request-timeout-ms", &c->request_timeout_ms, NULL},
                {"debounce-ms", &c->debounce_ms, NULL},
                {"batch-max-ms", &c->batch_max_ms, NULL},
                {"health-port", &c->health_port, NULL},
                {"watch-timeout-s", &c->watch_timeout_s, NULL},
                {"lease-duration-s", &c->lease_duration_s, NULL},
                {"binders", &c->binders, NULL},
                {"requeue-limit", &c->requeue_limit, NULL},
                {"qps", NULL, &c->qps},
                {"burst", NULL, &c->burst},
                {"admit-timeout-s", NULL, &c->admit_timeout_s},
                {"backoff-base-s", NULL, &c->backoff_base_s},
                {"backoff-cap-s", NULL, &c->backoff_cap_s},
                {"renew-deadline-s", NULL, &c->renew_deadline_s},
                {"retry-period-s", NULL, &c->retry_period_s},
                {"ready-timeout-s", NULL, &c->ready_timeout_s},
                {"requeue-base-s", NULL, &c->requeue_base_s},
                {"requeue-cap-s", NULL, &c->requeue_cap_s},
                {"replan-s", NULL, &c->replan_s}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (strcmp(key, nums[i].k) != 0)
            continue;
        *done = true;
        char *end;
        errno = 0;
        if (nums[i].l) {
            long x = strtol(v, &end, 10);
            if (errno || *end || end == v || x < 0)
                return rf_error_set(err, RF_EINVAL, key, "must be a non-negative integer, not `%s`", v);
            *nums[i].l = x;
        } else {
            double x = strtod(v, &end);
            if (*end || end == v || !(x >= 0) || x > 1e9)
                return rf_error_set(err, RF_EINVAL, key, "must be a non-negative number, not `%s`", v);
            *nums[i].d = x;
        }
        return RF_OK;
    }
    return RF_OK;
}

rf_status rf__config_set(rf__config_t *c, const char *key_in, const char *v, rf_error_t *err)
{
    char key[64];
    snprintf(key, sizeof key, "%s", key_in);
    for (char *p = key; *p; p++)
        if (*p == '_')
            *p = '-';
    bool done = false;
    rf_status rc = s_set_str(c, key, v, &done, err);
    if (rc != RF_OK || done)
        return rc;
    if ((rc = s_set_num(c, key, v, &done, err)) != RF_OK || done)
        return rc;
    if (strcmp(key, "leader-elect") == 0 || strcmp(key, "in-cluster") == 0 || strcmp(key, "preempt-others") == 0) {
        bool b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "yes") == 0;
        if (!b && strcmp(v, "false") != 0 && strcmp(v, "0") != 0 && strcmp(v, "no") != 0)
            return rf_error_set(err, RF_EINVAL, key, "must be true or false, not `%s`", v);
        if (key[0] == 'l')
            c->leader_elect = b;
        else if (key[0] == 'p')
            c->preempt_others = b;
        else
            c->in_cluster = b;
        return RF_OK;
    }
    return rf_error_set(err, RF_EINVAL, key, "unknown setting (see --help)");
}

void rf__config_fini(rf__config_t *c)
{
    char **all[] = {&c->kubeconfig,  &c->context,   &c->solver,         &c->scheduler_name,  &c->levels,
                    &c->level_costs, &c->mode,      &c->value_resource, &c->lease_namespace, &c->lease_name,
                    &c->identity,    &c->log_level, &c->metrics_listen, &c->preemption,      &c->levels_buf};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        free(*all[i]);
        *all[i] = NULL;
    }
}

static rf_status s_config_set_cb(void *ctx, const char *key, const char *v, rf_error_t *err)
{
    return rf__config_set(ctx, key, v, err);
}

/* Levels, costs and identity, once every setting is in. */
static rf_status s_derive(rf__config_t *c, rf_error_t *err)
{
    if ((!c->kubeconfig) == (!c->in_cluster) || !c->solver || !c->scheduler_name || !c->levels)
        return rf_error_set(err, RF_EINVAL, "",
                            "need one of --kubeconfig/--in-cluster, and --solver, --scheduler-name, --levels "
                            "(see --help)");
    if (!(c->levels_buf = strdup(c->levels)))
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    for (char *save = NULL, *t = strtok_r(c->levels_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (c->n_levels == RF_CFG_MAX_LEVELS)
            return rf_error_set(err, RF_EINVAL, "levels", "at most %d levels", RF_CFG_MAX_LEVELS);
        c->level_v[c->n_levels++] = t;
    }
    if (c->n_levels == 0)
        return rf_error_set(err, RF_EINVAL, "levels", "no level given");
    if (c->level_costs) {
        const char *p = c->level_costs;
        while (*p && c->n_costs < RF_CFG_MAX_LEVELS) {
            char *end;
            double x = strtod(p, &end);
            if (end == p || !(x >= 0) || (*end && *end != ','))
                return rf_error_set(err, RF_EINVAL, "level-costs", "`%s` is not a list of non-negative numbers",
                                    c->level_costs);
            c->cost_v[c->n_costs++] = x;
            p = *end ? end + 1 : end;
        }
        if (c->n_costs != c->n_levels)
            return rf_error_set(err, RF_EINVAL, "level-costs", "has %d values for %d levels", c->n_costs, c->n_levels);
    }
    const char *id = c->identity ? c->identity : getenv("POD_NAME");
    if (id) { /* it names every bind attempt: "IDENTITY.MS.SEQ", one field of the intent "ATTEMPT NODE SIZE" */
        size_t len = strlen(id);
        bool space = false;
        for (size_t i = 0; i < len; i++)
            space |= isspace((unsigned char)id[i]) != 0;
        if (len == 0 || len > RF_IDENTITY_MAX || space)
            return rf_error_set(err, RF_EINVAL, "identity",
                                "`%.40s%s` (%s) must be 1 to %d characters without whitespace", id,
                                len > 40 ? "..." : "", c->identity ? "--identity" : "$POD_NAME", RF_IDENTITY_MAX);
        snprintf(c->ident, sizeof c->ident, "%s", id);
    } else {
        char host[200] = "host";
        gethostname(host, sizeof host - 1);
        snprintf(c->ident, sizeof c->ident, "%s-%d", host, (int)getpid());
    }
    if (c->log_level) {
        static const char *const lv[] = {"error", "warn", "info", "debug"};
        int found = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(c->log_level, lv[i]) == 0)
                found = i;
        if (found < 0)
            return rf_error_set(err, RF_EINVAL, "log-level", "must be error, warn, info or debug, not `%s`",
                                c->log_level);
        rf__log_threshold = found;
    }
    if (c->binders < 1)
        c->binders = 1;
    if (c->preemption && strcmp(c->preemption, "lower_priority") != 0 && strcmp(c->preemption, "never") != 0)
        return rf_error_set(err, RF_EINVAL, "preemption", "must be lower_priority or never, not `%s`", c->preemption);
    return RF_OK;
}

rf_status rf__config_parse(rf__config_t *c, int argc, char **argv, bool *help, rf_error_t *err)
{
    *help = false;
    rf_status rc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = true;
            return RF_OK;
        }
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc &&
            (rc = rf__yaml_flat_load(argv[i + 1], s_config_set_cb, c, err)) != RF_OK)
            return rc;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--in-cluster") == 0) {
            c->in_cluster = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc)
            return rf_error_set(err, RF_EINVAL, "", "unexpected argument `%s` (see --help)", a);
        const char *v = argv[++i];
        if (strcmp(a, "--config") == 0)
            continue;
        if ((rc = rf__config_set(c, a + 2, v, err)) != RF_OK)
            return rc;
    }
    return s_derive(c, err);
}
