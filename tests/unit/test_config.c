/* tests/unit/test_config.c: rackfitd's settings (service/config.c): the
 * defaults, `key = value` files with comments and Z85 keys holding '#',
 * repeatable keys, range checks naming the key and its place, and the
 * metrics address and lane byte budgets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "config.h"

Test(config, defaults)
{
    rf__server_config_t cfg;
    rf__server_config_init(&cfg);
    cr_assert_eq(cfg.n_listen, 0);
    cr_assert_null(cfg.metrics_listen, "metrics are off unless asked for");
    cr_assert_eq(cfg.fast_queue_bytes, 64 * 1024 * 1024);
    cr_assert_eq(cfg.solver_queue_bytes, 256 * 1024 * 1024);
    cr_assert_geq(cfg.solver_queue, 400, "a burst of 400 small solves fits the solver lane by count");
    cr_assert_eq(cfg.ops.max_message_bytes, 64 * 1024 * 1024);
    cr_assert_eq(cfg.ops.max_elements, 4000000);
    rf__server_config_fini(&cfg);
    rf_test_no_leaks();
}

Test(config, set_and_errors)
{
    rf__server_config_t cfg;
    rf_error_t err;
    rf__server_config_init(&cfg);
    cr_assert_eq(rf__server_config_set(&cfg, "listen", "tcp://127.0.0.1:1", "t", &err), RF_OK);
    cr_assert_eq(rf__server_config_set(&cfg, "listen", "ipc:///tmp/x", "t", &err), RF_OK);
    cr_assert_eq(cfg.n_listen, 2);
    cr_assert_eq(rf__server_config_set(&cfg, "metrics_listen", "127.0.0.1:9100", "t", &err), RF_OK);
    cr_assert_eq(rf__server_config_set(&cfg, "metrics_listen", "0.0.0.0:9200", "t", &err), RF_OK);
    cr_assert_str_eq(cfg.metrics_listen, "0.0.0.0:9200", "the last one wins");
    cr_assert_eq(rf__server_config_set(&cfg, "solver_queue_bytes", "1048576", "t", &err), RF_OK);
    cr_assert_eq(cfg.solver_queue_bytes, 1048576);
    cr_assert_eq(rf__server_config_set(&cfg, "solver_queue_bytes", "0", "flag", &err), RF_EINVAL);
    cr_assert_str_eq(err.path, "solver_queue_bytes");
    cr_assert_not_null(strstr(err.message, "flag"), "%s", err.message);
    cr_assert_eq(rf__server_config_set(&cfg, "max_depth", "33", "t", &err), RF_EINVAL);
    cr_assert_eq(rf__server_config_set(&cfg, "fast_queue", "12x", "t", &err), RF_EINVAL);
    cr_assert_eq(rf__server_config_set(&cfg, "allow_insecure", "maybe", "t", &err), RF_EINVAL);
    cr_assert_eq(rf__server_config_set(&cfg, "allow_insecure", "yes", "t", &err), RF_OK);
    cr_assert(cfg.allow_insecure);
    cr_assert_eq(rf__server_config_set(&cfg, "log_level", "loud", "t", &err), RF_EINVAL);
    cr_assert_eq(rf__server_config_set(&cfg, "no_such_key", "1", "t", &err), RF_EINVAL);
    cr_assert_eq(rf__server_config_set(&cfg, "curve_allowed_key", "short", "t", &err), RF_EINVAL);
    rf__server_config_fini(&cfg);
    rf_test_no_leaks();
}

Test(config, file)
{
    char path[] = "/tmp/rackfitd-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    char pub[41], sec[41];
    /* a Z85 key may hold '#': only whole lines are comments */
    snprintf(pub, sizeof pub, "%s", "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
    (void)sec;
    fprintf(f,
            "# a comment\n\nlisten = tcp://127.0.0.1:5555\n  fast_threads = 3\nmetrics_listen = :9100\n"
            "curve_allowed_key = %s\n",
            pub);
    fclose(f);
    rf__server_config_t cfg;
    rf_error_t err;
    rf__server_config_init(&cfg);
    cr_assert_eq(rf__server_config_load(&cfg, path, &err), RF_OK, "%s", err.message);
    cr_assert_eq(cfg.n_listen, 1);
    cr_assert_eq(cfg.fast_threads, 3);
    cr_assert_str_eq(cfg.metrics_listen, ":9100");
    cr_assert_eq(cfg.n_allowed, 1);
    f = fopen(path, "w");
    fputs("fast_threads 3\n", f);
    fclose(f);
    cr_assert_eq(rf__server_config_load(&cfg, path, &err), RF_EINVAL);
    cr_assert_not_null(strstr(err.message, ":1"), "the line is named: %s", err.message);
    unlink(path);
    cr_assert_eq(rf__server_config_load(&cfg, path, &err), RF_EIO);
    rf__server_config_fini(&cfg);
    rf_test_no_leaks();
}
