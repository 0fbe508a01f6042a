/* tests/unit/test_metrics.c: the metrics registry and its Prometheus text
 * rendering (base/metrics.c): naming rules, series by labels, counters,
 * gauges, cumulative histogram buckets, escaping, collect callbacks, and
 * concurrent updates adding up. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "metrics.h"

static char *s_render(rf__metrics_t *m)
{
    size_t len = 0;
    char *t = rf__metrics_render(m, &len);
    cr_assert_not_null(t);
    cr_assert_eq(strlen(t), len);
    return t;
}

static void s_has(const char *text, const char *line)
{
    cr_assert_not_null(strstr(text, line), "missing %s in:\n%s", line, text);
}

Test(metrics, names_are_checked)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const ok[] = {"op", "outcome"};
    static const char *const dunder[] = {"__op"};
    static const char *const le[] = {"le"};
    static const char *const twice[] = {"a", "a"};
    double b[] = {1, 2};
    double bad_b[] = {2, 1};
    cr_assert_null(rf__metrics_counter(m, "rackfit_requests", "no _total", 0, NULL));
    cr_assert_null(rf__metrics_counter(m, "9rackfit_total", "", 0, NULL));
    cr_assert_null(rf__metrics_counter(m, "rackfit-x_total", "", 0, NULL));
    cr_assert_null(rf__metrics_gauge(m, "", "", 0, NULL));
    cr_assert_null(rf__metrics_gauge(m, "rackfit_g", "", 1, dunder));
    cr_assert_null(rf__metrics_gauge(m, "rackfit_g", "", 2, twice));
    cr_assert_null(rf__metrics_gauge(m, "rackfit_g", "", RF__METRIC_MAX_LABELS + 1, ok));
    cr_assert_null(rf__metrics_histogram(m, "rackfit_h_seconds", "", 1, le, b, 2));
    cr_assert_null(rf__metrics_histogram(m, "rackfit_h_seconds", "", 0, NULL, bad_b, 2));
    cr_assert_null(rf__metrics_histogram(m, "rackfit_h_seconds", "", 0, NULL, b, 0));
    cr_assert_not_null(rf__metrics_counter(m, "rackfit_requests_total", "Requests.", 2, ok));
    cr_assert_null(rf__metrics_gauge(m, "rackfit_requests_total", "taken", 0, NULL));
    cr_assert_not_null(rf__metrics_gauge(m, "ns:rackfit_g", "colons are allowed in names", 0, NULL));
    rf__metrics_destroy(&m);
    cr_assert_null(m);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

Test(metrics, counters_and_gauges_render)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const lab[] = {"op", "outcome"};
    rf__metric_t *c = rf__metrics_counter(m, "rackfit_requests_total", "Requests by op and outcome.", 2, lab);
    rf__metric_t *g = rf__metrics_gauge(m, "rackfit_clusters", "Stored clusters.", 0, NULL);
    rf__series_t *ok = rf__metric_with(c, "solve", "ok");
    cr_assert_eq(rf__metric_with(c, "solve", "ok"), ok, "the same labels give the same series");
    rf__counter_add(ok, 1);
    rf__counter_add(ok, 2);
    rf__counter_add(ok, -5); /* ignored: counters only go up */
    rf__counter_add(rf__metric_with(c, "ping", "ok"), 1);
    rf__counter_add(rf__metric_with(c, "solve", "bad_problem"), 1);
    rf__gauge_set(rf__metric_series(g, NULL), 7);
    rf__gauge_add(rf__metric_series(g, NULL), -2.5);
    rf__gauge_set(ok, 100); /* wrong type: ignored */
    rf__counter_add(NULL, 1);
    cr_assert_float_eq(rf__series_value(ok), 3.0, 1e-12);
    cr_assert_float_eq(rf__series_value(rf__metric_series(g, NULL)), 4.5, 1e-12);
    char *t = s_render(m);
    s_has(t, "# HELP rackfit_requests_total Requests by op and outcome.\n# TYPE rackfit_requests_total counter\n");
    s_has(t, "rackfit_requests_total{op=\"solve\",outcome=\"ok\"} 3\n");
    s_has(t, "rackfit_requests_total{op=\"ping\",outcome=\"ok\"} 1\n");
    s_has(t, "rackfit_requests_total{op=\"solve\",outcome=\"bad_problem\"} 1\n");
    s_has(t, "# TYPE rackfit_clusters gauge\nrackfit_clusters 4.5\n");
    /* families in registration order, series in creation order */
    cr_assert_lt(strstr(t, "outcome=\"ok\"} 3"), strstr(t, "op=\"ping\""));
    cr_assert_lt(strstr(t, "rackfit_requests_total"), strstr(t, "rackfit_clusters"));
    free(t);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

Test(metrics, histogram_buckets_are_cumulative)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const lab[] = {"mode"};
    double b[3] = {0.001, 0.01, 0.1};
    rf__metric_t *h = rf__metrics_histogram(m, "rackfit_solve_seconds", "Solve latency.", 1, lab, b, 3);
    rf__series_t *s = rf__metric_with(h, "greedy");
    rf__histogram_observe(s, 0.0005);
    rf__histogram_observe(s, 0.001); /* on the edge: le is <= */
    rf__histogram_observe(s, 0.05);
    rf__histogram_observe(s, 3);
    rf__histogram_observe(s, NAN); /* ignored */
    cr_assert_float_eq(rf__series_value(s), 4.0, 1e-12);
    char *t = s_render(m);
    s_has(t, "rackfit_solve_seconds_bucket{mode=\"greedy\",le=\"0.001\"} 2\n");
    s_has(t, "rackfit_solve_seconds_bucket{mode=\"greedy\",le=\"0.01\"} 2\n");
    s_has(t, "rackfit_solve_seconds_bucket{mode=\"greedy\",le=\"0.1\"} 3\n");
    s_has(t, "rackfit_solve_seconds_bucket{mode=\"greedy\",le=\"+Inf\"} 4\n");
    s_has(t, "rackfit_solve_seconds_sum{mode=\"greedy\"} 3.0515\n");
    s_has(t, "rackfit_solve_seconds_count{mode=\"greedy\"} 4\n");
    free(t);
    double e[4];
    cr_assert_eq(rf__metrics_exp_bounds(0.0001, 2, 4, e), 4);
    cr_assert_float_eq(e[3], 0.0008, 1e-15);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

Test(metrics, escaping)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const lab[] = {"name"};
    rf__metric_t *g = rf__metrics_gauge(m, "rackfit_x", "Help with a \\ and a\nnewline.", 1, lab);
    rf__gauge_set(rf__metric_with(g, "a\"b\\c\nd"), 1);
    rf__gauge_set(rf__metric_with(g, "inf"), INFINITY);
    rf__gauge_set(rf__metric_with(g, "frac"), 0.1);
    cr_assert_null(rf__metric_with(g, NULL));
    char *t = s_render(m);
    s_has(t, "# HELP rackfit_x Help with a \\\\ and a\\nnewline.\n");
    s_has(t, "rackfit_x{name=\"a\\\"b\\\\c\\nd\"} 1\n");
    s_has(t, "rackfit_x{name=\"inf\"} +Inf\n");
    s_has(t, "rackfit_x{name=\"frac\"} 0.1\n");
    free(t);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

static void s_collect(void *arg, rf__metrics_t *m)
{
    (void)m;
    rf__metric_t *g = arg;
    rf__metric_clear(g);
    rf__gauge_set(rf__metric_with(g, "fast"), 3);
}

Test(metrics, collect_refills_a_family)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const lab[] = {"lane"};
    rf__metric_t *g = rf__metrics_gauge(m, "rackfit_queue_depth", "Requests waiting.", 1, lab);
    rf__gauge_set(rf__metric_with(g, "gone"), 9);
    cr_assert_eq(rf__metrics_on_collect(m, s_collect, g), 0);
    char *t = s_render(m);
    s_has(t, "rackfit_queue_depth{lane=\"fast\"} 3\n");
    cr_assert_null(strstr(t, "gone"), "a cleared series is not rendered");
    free(t);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}

typedef struct {
    rf__metric_t *c, *h;
} s_pair_t;

static void *s_worker(void *arg)
{
    s_pair_t *p = arg;
    for (int i = 0; i < 10000; i++) {
        rf__counter_add(rf__metric_with(p->c, i % 2 ? "odd" : "even"), 1);
        rf__histogram_observe(rf__metric_with(p->h), 0.5);
    }
    return NULL;
}

Test(metrics, concurrent_updates_add_up)
{
    rf__metrics_t *m = rf__metrics_new();
    static const char *const lab[] = {"k"};
    double b[] = {1};
    s_pair_t p = {rf__metrics_counter(m, "rackfit_n_total", "n", 1, lab),
                  rf__metrics_histogram(m, "rackfit_h_seconds", "h", 0, NULL, b, 1)};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, s_worker, &p);
    for (int i = 0; i < 4; i++) {
        char *text = rf__metrics_render(m, NULL); /* rendering while updating */
        free(text);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cr_assert_float_eq(rf__series_value(rf__metric_with(p.c, "odd")), 20000.0, 1e-9);
    cr_assert_float_eq(rf__series_value(rf__metric_with(p.c, "even")), 20000.0, 1e-9);
    cr_assert_float_eq(rf__series_value(rf__metric_with(p.h)), 40000.0, 1e-9);
    char *text = s_render(m);
    s_has(text, "rackfit_h_seconds_sum 20000\n");
    free(text);
    rf__metrics_destroy(&m);
    rf_test_no_leaks();
}
