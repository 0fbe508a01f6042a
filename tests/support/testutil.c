/* tests/support/testutil.c: shared helpers of the solver tests (testutil.h). */
#include "testutil.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

rf_problem_t *rf_test_parse(const char *json)
{
    rf_problem_t *pb = NULL;
    rf_error_t err;
    rf_status rc = rf_problem_from_json(json, strlen(json), NULL, &pb, &err);
    cr_assert_eq(rc, RF_OK, "problem: %s: %s\n%s", err.path, err.message, json);
    return pb;
}

const char *const RF_TEST_MISSES[RF_TEST_N_MISSES] = {"batch-24n-a", "batch-64n-b", "batch-64n-c"};

void rf_test_missed_batch(const char *name, rf_problem_t **pb, rf_answer_t **optimum)
{
    char path[512], opt_path[512];
    snprintf(path, sizeof path, RF_SOURCE_DIR "/tests/data/ilp/misses-%s.json", name);
    snprintf(opt_path, sizeof opt_path, RF_SOURCE_DIR "/tests/data/ilp/misses-%s.optimum.answer.json", name);
    rf_error_t err;
    *pb = NULL;
    cr_assert_eq(rf_problem_from_json_file(path, NULL, pb, &err), RF_OK, "%s: %s", path, err.message);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(rf__read_file(opt_path, 1 << 20, &text, &len, &err), RF_OK, "%s", err.message);
    *optimum = NULL;
    cr_assert_eq(rf_answer_from_json(*pb, text, len, optimum, &err), RF_OK, "%s: %s", opt_path, err.message);
    free(text);
    cr_assert_eq(rf_answer_finish(*optimum), RF_OK);
}

rf_answer_t *rf_test_solve(const rf_problem_t *pb, int mode, int threads, int64_t limit_ms)
{
    rf_answer_t *ans = NULL;
    rf_error_t err;
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.mode = mode;
    o.threads = threads;
    o.time_limit_ms = limit_ms;
    cr_assert_eq(rf_solve(pb, &o, &ans, &err), RF_OK, "solve: %s", err.message);
    return ans;
}

void rf_test_assert_feasible(const rf_problem_t *pb, const rf_answer_t *ans, const char *what)
{
    rf_check_report_t rep;
    rf_error_t err;
    cr_assert_eq(rf_check(pb, ans, &rep, &err), RF_OK, "%s: check could not run: %s", what, err.message);
    if (!rep.feasible || !rep.reported_totals_match) {
        char *json = NULL;
        size_t len = 0;
        rf_answer_to_json(ans, &json, &len, NULL);
        cr_log_error("%s: answer %s", what, json ? json : "?");
        free(json);
        for (int i = 0; i < rep.n_violations && i < RF_CHECK_MAX_VIOLATIONS; i++)
            cr_log_error("%s: violation: %s", what, rep.violations[i]);
    }
    bool ok = rep.feasible && rep.reported_totals_match;
    rf_check_report_fini(&rep);
    cr_assert(ok, "%s: infeasible answer", what);
}

char *rf_test_preempt_json(const int *used_gpu, const char *running, const char *gangs, const char *options)
{
    size_t cap = 4096 + strlen(running) + strlen(gangs) + (options ? strlen(options) : 0);
    char *json = malloc(cap);
    cr_assert_not_null(json);
    int len = snprintf(json, cap,
                       "{\"cluster\":{\"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"],"
                       "\"level_costs\":[10,1],\"nodes\":[");
    for (int i = 0; i < 8; i++)
        len += snprintf(json + len, cap - (size_t)len,
                        "%s{\"name\":\"h-%d\",\"labels\":{\"example.com/rack\":\"r%d\","
                        "\"kubernetes.io/hostname\":\"h-%d\"},\"allocatable\":{\"nvidia.com/gpu\":8},"
                        "\"used\":{\"nvidia.com/gpu\":%d}}",
                        i ? "," : "", i, i / 4 + 1, i, used_gpu ? used_gpu[i] : 0);
    snprintf(json + len, cap - (size_t)len, "]},\"running\":%s,\"gangs\":%s%s%s}", running, gangs,
             options ? ",\"options\":" : "", options ? options : "");
    return json;
}
