/* tests/unit/test_watch_wmetrics.c: rackfit-watch's metrics
 * (watcher/wmetrics.c): every family rendered with the Prometheus names,
 * the binder's and watches' atomics carried over at each scrape (only the
 * difference added, restarts and relists not counting the first), API
 * requests by verb and code, pending gangs by state, the bind latency. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "wmetrics.h"

static bool s_has(const char *text, const char *line)
{
    return strstr(text, line) != NULL;
}

Test(watch_wmetrics, families_move)
{
    rf__binder_t b;
    rf__binder_init(&b);
    rf__watch_t watches[RF_KIND_COUNT];
    memset(watches, 0, sizeof watches);
    for (int k = 0; k < RF_KIND_COUNT; k++)
        watches[k].kind = (rf__kind)k;
    rf__leader_t leader;
    memset(&leader, 0, sizeof leader);
    leader.leading = 1;
    rf__wmetrics_t *m = rf__wmetrics_new(&b, watches, RF_KIND_COUNT, &leader);
    cr_assert_not_null(m);
    atomic_store(&b.gangs_bound, 3);
    atomic_store(&b.retries, 7);
    atomic_store(&watches[RF_KIND_POD].watches, 4); /* the first is the start: 3 restarts */
    atomic_store(&watches[RF_KIND_POD].lists, 2);
    rf__wmetrics_api(m, "POST", 201);
    rf__wmetrics_api(m, "POST", 201);
    rf__wmetrics_api(m, "PATCH", 429);
    rf__wmetrics_bound(m, 0.3);
    long counts[RF_PENDING_COUNT] = {[RF_PENDING_MEMBERS] = 2, [RF_PENDING_BINDING] = 1};
    rf__wmetrics_pending(m, counts);
    rf__wmetrics_cycle(m, true, 0.02);
    char *text = rf__metrics_render(rf__wmetrics_registry(m), NULL);
    cr_assert_not_null(text);
    cr_assert(s_has(text, "rackfit_watch_gangs_bound_total 3"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_api_retries_total 7"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_api_requests_total{verb=\"POST\",code=\"201\"} 2"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_api_requests_total{verb=\"PATCH\",code=\"429\"} 1"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_pending_gangs{state=\"waiting_for_members\"} 2"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_pending_gangs{state=\"binding\"} 1"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_pending_gangs{state=\"backoff\"} 0"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_watch_restarts_total{kind=\"pods\"} 3"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_relists_total{kind=\"pods\"} 1"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_lease_held 1"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_bind_latency_seconds_count 1"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_solves_total 1"), "%s", text);
    free(text);
    /* the next scrape adds only what changed */
    atomic_store(&b.gangs_bound, 5);
    leader.lost = 1;
    text = rf__metrics_render(rf__wmetrics_registry(m), NULL);
    cr_assert(s_has(text, "rackfit_watch_gangs_bound_total 5"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_watch_restarts_total{kind=\"pods\"} 3"), "%s", text);
    cr_assert(s_has(text, "rackfit_watch_lease_held 0"), "%s", text);
    free(text);
    rf__wmetrics_destroy(&m);
    cr_assert_null(m);
    rf__binder_fini(&b);
    rf_test_no_leaks();
}
