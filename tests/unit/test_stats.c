/* tests/unit/test_stats.c: rackfitd's counters and latency histograms
 * (service/stats.c): each request is counted once in its class with its
 * outcome, busy and refused requests count as errors, percentiles are
 * ordered and never above the max, and /metrics renders the families. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "stats.h"

static rf__stats_t *s_new(void)
{
    rf__stats_t *s = calloc(1, sizeof *s);
    cr_assert(s);
    cr_assert_eq(rf__stats_init(s), 0);
    return s;
}

static void s_free(rf__stats_t *s)
{
    rf__stats_fini(s);
    free(s);
}

Test(stats, requests_are_counted_once_by_class_and_outcome)
{
    rf__stats_t *s = s_new();
    rf__stats_request(s, RF__OP_SOLVE, RF__CLASS_GREEDY, RF_OK, 2.0);
    rf__stats_request(s, RF__OP_SOLVE, RF__CLASS_GREEDY, RF_ESCHEMA, 1.0);
    rf__stats_request(s, RF__OP_PING, RF__CLASS_OTHER, RF_OK, 0.1);
    cr_assert_eq(atomic_load(&s->requests), 3);
    cr_assert_eq(atomic_load(&s->errors), 1);
    cr_assert_eq(atomic_load(&s->cls[RF__CLASS_GREEDY].count), 2);
    cr_assert_eq(atomic_load(&s->cls[RF__CLASS_GREEDY].errors), 1);
    cr_assert_eq(atomic_load(&s->cls[RF__CLASS_OTHER].count), 1);
    cr_assert_eq(atomic_load(&s->cls[RF__CLASS_SOLVER].count), 0);
    double by_solve = 0;
    for (int k = 0; k < RF__N_OUTCOMES; k++)
        by_solve += rf__series_value(s->by_op[RF__OP_SOLVE][k]);
    cr_assert_float_eq(by_solve, 2.0, 1e-9);
    cr_assert_float_eq(rf__series_value(s->by_op[RF__OP_SOLVE][0]), 1.0, 1e-9, "index 0 is ok");

    rf__stats_busy(s, 1);
    rf__stats_refused(s, RF_EPARSE);
    cr_assert_eq(atomic_load(&s->requests), 5);
    cr_assert_eq(atomic_load(&s->errors), 3);
    cr_assert_eq(atomic_load(&s->busy), 1);
    cr_assert_float_eq(rf__series_value(s->busy_lane[1]), 1.0, 1e-9);
    cr_assert_float_eq(rf__series_value(s->busy_lane[0]), 0.0, 1e-9);
    s_free(s);
    rf_test_no_leaks();
}

Test(stats, percentiles_are_ordered_and_bounded_by_the_max)
{
    rf__stats_t *s = s_new();
    rf__class_stats_t *c = &s->cls[RF__CLASS_SOLVER];
    cr_assert_float_eq(rf__stats_percentile(c, 0.5), 0.0, 1e-12, "no requests: 0");
    for (int i = 1; i <= 100; i++)
        rf__stats_request(s, RF__OP_SOLVE, RF__CLASS_SOLVER, RF_OK, (double)i);
    double p50 = rf__stats_percentile(c, 0.50), p90 = rf__stats_percentile(c, 0.90);
    double p99 = rf__stats_percentile(c, 0.99);
    double max = (double)atomic_load(&c->max_us) / 1000.0;
    cr_assert_float_eq(max, 100.0, 1e-6);
    cr_assert(p50 <= p90 && p90 <= p99 && p99 <= max, "p50 %g p90 %g p99 %g max %g", p50, p90, p99, max);
    /* 8 buckets per power of two: within 10% of the true value */
    cr_assert(p50 > 45 && p50 < 56, "p50 %g", p50);
    cr_assert(p90 > 81 && p90 < 100.0001, "p90 %g", p90);
    s_free(s);
    rf_test_no_leaks();
}

Test(stats, commits_and_metrics_render)
{
    rf__stats_t *s = s_new();
    rf__stats_commit(s, 0);
    rf__stats_commit(s, 1);
    rf__stats_commit(s, 2);
    cr_assert_float_eq(rf__series_value(s->commit_out[0]), 1.0, 1e-9);
    cr_assert_float_eq(rf__series_value(s->commit_out[1]), 1.0, 1e-9);
    cr_assert_float_eq(rf__series_value(s->commit_out[2]), 1.0, 1e-9);
    rf__stats_request(s, RF__OP_CLUSTER_PUT, RF__CLASS_OTHER, RF_OK, 0.5);
    size_t len = 0;
    char *text = rf__metrics_render(s->m, &len);
    cr_assert(text && len > 0);
    cr_assert(strstr(text, "rackfit_requests_total"), "requests family rendered");
    cr_assert(strstr(text, "cluster.put"), "the op is a label");
    cr_assert(strstr(text, "rackfit_request_duration_seconds"));
    free(text);
    s_free(s);
    rf_test_no_leaks();
}
