/* solver/solve.c: the table of the library's strategies and the one call
 * every strategy runs through.
 *
 * rf_solve_with builds the solve's context once (solver/context.h: the
 * resolved options and clock, the topology tree, node eligibility), hands it
 * to the strategy with a fresh answer, and times the whole: summary.solve_ms
 * covers context, search and the finished answer. rf_solve picks the
 * strategy from the table by the problem's mode (or opts->mode). */
#include <stddef.h>
#include <string.h>

#include "clock.h"
#include "context.h"
#include "rackfit/solve.h"
#include "strategy.h"

/* Indexed by rf_mode. */
static const rf_strategy_t *const s_strategies[] = {
    [RF_MODE_AUTO] = &rf__strategy_auto,
    [RF_MODE_GREEDY] = &rf__strategy_greedy,
    [RF_MODE_ILP] = &rf__strategy_ilp,
    NULL,
};
#define S_N_STRATEGIES ((int32_t)(sizeof s_strategies / sizeof *s_strategies) - 1)

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
    opts->mip = RF_MIP_AUTO;
    opts->start_ms = 0;
    opts->user = NULL;
    opts->cache = NULL;
}

rf_status rf_solve_with(const rf_strategy_t *strategy, const rf_problem_t *problem, const rf_solve_opts_t *opts,
                        rf_answer_t **out, rf_error_t *err)
{
    *out = NULL;
    if (!strategy || !strategy->solve)
        return rf_error_set(err, RF_EINVAL, "", "no strategy to solve with");
    if (opts && (opts->mip < 0 || !rf_mip_backend_available((rf_mip_backend)opts->mip)))
        return rf_error_set(err, RF_EINVAL, "", "MIP backend %d (%s) is not built into this rackfit", (int)opts->mip,
                            opts->mip == RF_MIP_CBC ? "cbc: configure with RF_CBC=ON and coinor-libcbc-dev installed"
                                                    : "not one of auto, glpk, cbc");
    double t0 = rf_now_ms();
    rf_solve_ctx_t ctx;
    RF_CALL(rf__ctx_init(&ctx, problem, opts, err));
    rf_answer_t *answer = rf_answer_new(ctx.problem);
    rf_status rc =
        answer ? strategy->solve(&ctx, answer, err) : rf_error_set(err, RF_ENOMEM, "", "out of memory for the answer");
    rf__ctx_fini(&ctx);
    if (rc != RF_OK) {
        rf_answer_destroy(&answer);
        return rc;
    }
    answer->problem = problem; /* the context's view of it is gone */
    answer->summary.solve_ms = rf_now_ms() - t0;
    *out = answer;
    return RF_OK;
}

rf_status rf_solve(const rf_problem_t *problem, const rf_solve_opts_t *opts, rf_answer_t **out, rf_error_t *err)
{
    int32_t mode = opts && opts->mode >= 0 ? opts->mode : (int32_t)problem->options.mode;
    if (mode < 0 || mode >= S_N_STRATEGIES) {
        *out = NULL;
        return rf_error_set(err, RF_EINVAL, "", "mode %d is not a strategy of this library", (int)mode);
    }
    return rf_solve_with(s_strategies[mode], problem, opts, out, err);
}
