/* tests/unit/test_solve.c: the strategy table and the one call every
 * strategy runs through (solver/solve.c).
 *
 * rf_strategies is indexed by rf_mode and rf_solve picks from it by the
 * problem's mode or opts->mode; rf_solve_with runs any rf_strategy_t (here
 * one written in the test, as bench/'s baselines are) with a context, times
 * the whole solve, hands back an answer for the caller's problem, and on a
 * strategy's error returns it with no answer and nothing leaked. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

static const char s_json[] =
    "{\"cluster\":{\"levels\":[\"kubernetes.io/hostname\"],\"nodes\":["
    "{\"name\":\"h1\",\"labels\":{\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/gpu\":8}}]},"
    "\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\",\"count\":2,\"requests\":{\"nvidia.com/gpu\":4}}]}],"
    "\"options\":{\"time_limit_ms\":500,\"threads\":1}}";

Test(solve, the_table_is_indexed_by_mode)
{
    const rf_strategy_t *const *t = rf_strategies();
    cr_assert_str_eq(t[RF_MODE_AUTO]->name, "auto");
    cr_assert_str_eq(t[RF_MODE_GREEDY]->name, "greedy");
    cr_assert_str_eq(t[RF_MODE_ILP]->name, "ilp");
    cr_assert_null(t[3], "NULL-terminated");
    for (int i = 0; t[i]; i++) {
        cr_assert_eq(rf_strategy_find(t[i]->name), t[i]);
        cr_assert(t[i]->description && t[i]->description[0]);
        cr_assert_not_null(t[i]->solve);
    }
    cr_assert_null(rf_strategy_find("kueue"), "bench's baselines are not the library's");
    cr_assert_null(rf_strategy_find(NULL));
}

Test(solve, rf_solve_picks_by_mode)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    for (int mode = RF_MODE_AUTO; mode <= RF_MODE_ILP; mode++) {
        rf_answer_t *ans = rf_test_solve(pb, mode, 1, 500);
        rf_test_assert_feasible(pb, ans, "by mode");
        cr_assert(ans->gangs[0].admitted);
        cr_assert_eq(ans->problem, pb);
        cr_assert_geq(ans->summary.solve_ms, 0);
        if (mode == RF_MODE_GREEDY)
            cr_assert_str_eq(ans->summary.mode_used, "greedy");
        rf_answer_destroy(&ans);
    }
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.mode = 99;
    rf_answer_t *ans = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve(pb, &o, &ans, &err), RF_EINVAL);
    cr_assert_null(ans);
    cr_assert(strstr(err.message, "99") != NULL, "%s", err.message);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

/* A strategy of the test's own: it checks what the context gives it and
 * admits nothing. */
typedef struct {
    int calls;
    const rf_problem_t *seen;
    int64_t limit;
    int32_t threads;
    double deadline, start;
} s_seen_t;

static rf_status s_watch(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err)
{
    s_seen_t *seen = rf_solve_ctx_user(ctx);
    seen->calls++;
    seen->seen = rf_solve_ctx_problem(ctx);
    seen->limit = rf_solve_ctx_opts(ctx)->time_limit_ms;
    seen->threads = rf_solve_ctx_threads(ctx);
    seen->deadline = rf_solve_ctx_deadline_ms(ctx);
    seen->start = rf_solve_ctx_opts(ctx)->start_ms;
    if (answer->problem != seen->seen)
        return rf_error_set(err, RF_EINTERNAL, "", "the answer is not for the context's problem");
    RF_CALL(rf_answer_finish(answer));
    answer->summary.mode_used = "watch";
    return RF_OK;
}

static rf_status s_fail(const rf_solve_ctx_t *ctx, rf_answer_t *answer, rf_error_t *err)
{
    (void)ctx;
    (void)answer;
    return rf_error_set(err, RF_ESOLVER, "", "this strategy always fails");
}

Test(solve, any_strategy_through_the_same_call)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    const rf_strategy_t watch = {.name = "watch", .description = "test strategy", .solve = s_watch};
    s_seen_t seen = {0};
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.user = &seen;
    rf_answer_t *ans = NULL;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&watch, pb, &o, &ans, &err), RF_OK, "%s", err.message);
    cr_assert_eq(seen.calls, 1);
    cr_assert_not_null(seen.seen);
    cr_assert_eq(seen.seen->n_gangs, pb->n_gangs);
    cr_assert_eq(seen.limit, 500, "the problem's limit, resolved");
    cr_assert_eq(seen.threads, 1);
    cr_assert_float_eq(seen.deadline, seen.start + 500.0, 1e-9);
    cr_assert_eq(ans->problem, pb, "the answer is handed back for the caller's problem");
    cr_assert_str_eq(ans->summary.mode_used, "watch");
    cr_assert(!ans->gangs[0].admitted);
    rf_test_assert_feasible(pb, ans, "watch");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(solve, a_failing_strategy_leaves_no_answer)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    const rf_strategy_t fail = {.name = "fail", .description = "fails", .solve = s_fail};
    rf_answer_t *ans = (rf_answer_t *)&ans; /* overwritten with NULL */
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&fail, pb, NULL, &ans, &err), RF_ESOLVER);
    cr_assert_null(ans);
    cr_assert_str_eq(err.message, "this strategy always fails");
    cr_assert_eq(rf_solve_with(NULL, pb, NULL, &ans, &err), RF_EINVAL);
    cr_assert_null(ans);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}
