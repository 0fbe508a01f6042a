/* tests/unit/test_watch_config.c: rackfit-watch's settings
 * (watcher/config.c): defaults, flags, `_` for `-`, the config file with
 * flags overriding it, and bad input refused with the setting's name. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "binder.h"
#include "config.h"

static rf_status s_parse(rf__config_t *c, int argc, const char **argv, rf_error_t *err)
{
    bool help = false;
    rf__config_init(c);
    return rf__config_parse(c, argc, (char **)argv, &help, err);
}

Test(watch_config, defaults_and_flags)
{
    const char *argv[] = {"rackfit-watch",
                          "--kubeconfig",
                          "k",
                          "--solver",
                          "tcp://x:1",
                          "--scheduler-name",
                          "rf",
                          "--levels",
                          "a,b,c",
                          "--level_costs",
                          "100,10,1",
                          "--ready-timeout-s",
                          "90",
                          "--requeue-limit",
                          "3",
                          "--binders",
                          "8",
                          "--metrics-listen",
                          ":9100"};
    rf__config_t c;
    rf_error_t err;
    cr_assert_eq(s_parse(&c, sizeof argv / sizeof argv[0], argv, &err), RF_OK, "%s", err.message);
    cr_assert_eq(c.n_levels, 3);
    cr_assert_str_eq(c.level_v[2], "c");
    cr_assert_eq(c.n_costs, 3);
    cr_assert_float_eq(c.cost_v[1], 10, 1e-9);
    cr_assert_float_eq(c.ready_timeout_s, 90, 1e-9);
    cr_assert_eq(c.requeue_limit, 3);
    cr_assert_eq(c.binders, 8);
    cr_assert_float_eq(c.replan_s, 60, 1e-9, "a pending gang is planned again at least every minute");
    cr_assert_str_eq(c.metrics_listen, ":9100");
    cr_assert_float_eq(c.requeue_base_s, 60, 1e-9, "the default");
    cr_assert_float_eq(c.requeue_cap_s, 1800, 1e-9, "the default");
    cr_assert_eq(c.qps, 200);
    cr_assert(!c.preempt_others, "other schedulers' pods are never victims unless asked");
    rf__config_fini(&c);
    rf_test_no_leaks();
}

Test(watch_config, file_then_flags)
{
    char path[] = "/tmp/rackfit-watch-config.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *yaml = "scheduler-name: rf\nlevels: [a, b]\nready_timeout_s: 30\nqps: 50\npreempt_others: true\n";
    cr_assert_eq(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
    const char *argv[] = {"w", "--config", path, "--in-cluster", "--solver", "tcp://x:1", "--qps", "70"};
    rf__config_t c;
    rf_error_t err;
    cr_assert_eq(s_parse(&c, sizeof argv / sizeof argv[0], argv, &err), RF_OK, "%s", err.message);
    cr_assert(c.in_cluster);
    cr_assert_eq(c.n_levels, 2);
    cr_assert_float_eq(c.ready_timeout_s, 30, 1e-9);
    cr_assert_float_eq(c.qps, 70, 1e-9, "a flag overrides the file");
    cr_assert(c.preempt_others);
    rf__config_fini(&c);
    unlink(path);
    rf_test_no_leaks();
}

Test(watch_config, bad_input_names_the_setting)
{
    struct {
        const char *key, *value, *path;
    } bad[] = {{"--ready-timeout-s", "-1", "ready-timeout-s"},
               {"--requeue-limit", "many", "requeue-limit"},
               {"--no-such-thing", "1", "no-such-thing"},
               {"--level-costs", "1,2", "level-costs"},
               {"--log-level", "loud", "log-level"},
               {"--leader-elect", "maybe", "leader-elect"},
               {"--preempt-others", "sometimes", "preempt-others"},
               {"--replan-s", "-5", "replan-s"},
               {"--identity", "two words", "identity"},
               {"--identity", "tab\there", "identity"},
               {"--identity", "", "identity"},
               {"--identity", NULL, "identity"}};
    static char long_id[RF_IDENTITY_MAX + 2];
    memset(long_id, 'w', RF_IDENTITY_MAX + 1); /* one character too many */
    bad[sizeof bad / sizeof bad[0] - 1].value = long_id;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *argv[] = {"w",  "--kubeconfig", "k",     "--solver", "s",         "--scheduler-name",
                              "rf", "--levels",     "a,b,c", bad[i].key, bad[i].value};
        rf__config_t c;
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_eq(s_parse(&c, sizeof argv / sizeof argv[0], argv, &err), RF_EINVAL, "%s", bad[i].key);
        cr_assert_str_eq(err.path, bad[i].path, "%s: %s", bad[i].key, err.message);
        rf__config_fini(&c);
    }
    const char *missing[] = {"w", "--solver", "s"};
    rf__config_t c;
    rf_error_t err;
    cr_assert_eq(s_parse(&c, 3, missing, &err), RF_EINVAL);
    cr_assert(strstr(err.message, "--scheduler-name") != NULL, "%s", err.message);
    rf__config_fini(&c);
    const char *both[] = {"w", "--kubeconfig",     "k", "--in-cluster", "--solver",
                          "s", "--scheduler-name", "r", "--levels",     "a"};
    cr_assert_eq(s_parse(&c, sizeof both / sizeof both[0], both, &err), RF_EINVAL, "kubeconfig and in-cluster");
    rf__config_fini(&c);
    rf_test_no_leaks();
}
