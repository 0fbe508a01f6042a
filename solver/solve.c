/* solver/solve.c: the table of built-in strategies and rf_solve, which picks
 * one by the problem's mode (or opts->mode) and times it: summary.solve_ms
 * covers the whole solve (tree, eligibility, search and the finished
 * answer). summary.mode_used says which strategy produced the answer. */
#include <stddef.h>
#include <string.h>

#include "clock.h"
#include "rackfit/solve.h"
#include "strategy.h"

static const rf_strategy_t *const s_strategies[] = {&rf__strategy_greedy, &rf__strategy_ilp, &rf__strategy_auto, NULL};

const rf_strategy_t *const *rf_strategies(void)
{
    return s_strategies;
}

const rf_strategy_t *rf_strategy_find(const char *name)
{
    for (size_t i = 0; name && s_strategies[i]; i++)
        if (strcmp(s_strategies[i]->name, name) == 0)
            return s_strategies[i];
    return NULL;
}

void rf_solve_opts_default(rf_solve_opts_t *opts)
{
    opts->time_limit_ms = -1;
    opts->threads = -1;
    opts->mode = -1;
    opts->start_ms = 0;
}

rf_status rf_solve(const rf_problem_t *problem, const rf_solve_opts_t *opts, rf_answer_t **out, rf_error_t *err)
{
    rf_solve_opts_t o;
    if (opts)
        o = *opts;
    else
        rf_solve_opts_default(&o);
    *out = NULL;
    double t0 = rf_now_ms();
    rf_answer_t *answer = rf_answer_new(problem);
    if (!answer)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory for the answer");
    int32_t mode = o.mode >= 0 ? o.mode : (int32_t)problem->options.mode;
    if (o.start_ms <= 0)
        o.start_ms = t0;
    const rf_strategy_t *strategy = mode == RF_MODE_GREEDY ? &rf__strategy_greedy
                                    : mode == RF_MODE_ILP  ? &rf__strategy_ilp
                                                           : &rf__strategy_auto;
    rf_status rc = strategy->solve(problem, &o, answer, err);
    if (rc != RF_OK) {
        rf_answer_destroy(&answer);
        return rc;
    }
    answer->summary.solve_ms = rf_now_ms() - t0;
    *out = answer;
    return RF_OK;
}
