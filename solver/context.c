/* solver/context.c: building one solve's context (see context.h) and the
 * public accessors of include/rackfit/solve.h. */
#include "context.h"

#include <string.h>

#include "clock.h"
#include "rackfit/machine.h"

rf_status rf__ctx_init(rf_solve_ctx_t *ctx, const rf_problem_t *pb, const rf_solve_opts_t *opts, rf_error_t *err)
{
    memset(ctx, 0, sizeof *ctx);
    if (opts)
        ctx->opts = *opts;
    else
        rf_solve_opts_default(&ctx->opts);
    rf_solve_opts_t *o = &ctx->opts;
    if (o->start_ms <= 0)
        o->start_ms = rf_now_ms();
    if (o->time_limit_ms < 0)
        o->time_limit_ms = pb->options.time_limit_ms;
    o->threads = rf_machine_threads(o->threads >= 0 ? o->threads : pb->options.threads);
    if (o->mode < 0)
        o->mode = (int32_t)pb->options.mode;
    ctx->deadline_ms = o->start_ms + (double)o->time_limit_ms;
    ctx->caller = pb;
    ctx->view = *pb;
    ctx->problem = &ctx->view;
    RF_CALL(rf__tree_of(pb, &ctx->tree, &ctx->tree_owned, err));
    ctx->view.tree_hint = &ctx->tree;
    rf_status rc = rf__elig_build(ctx->problem, &ctx->tree, &ctx->elig, err);
    if (rc != RF_OK)
        rf__ctx_fini(ctx);
    return rc;
}

void rf__ctx_fini(rf_solve_ctx_t *ctx)
{
    rf__elig_fini(&ctx->elig);
    if (ctx->tree_owned)
        rf__tree_fini(&ctx->tree);
    ctx->tree_owned = false;
}

const rf_problem_t *rf_solve_ctx_problem(const rf_solve_ctx_t *ctx)
{
    return ctx->problem;
}

const rf_solve_opts_t *rf_solve_ctx_opts(const rf_solve_ctx_t *ctx)
{
    return &ctx->opts;
}

double rf_solve_ctx_deadline_ms(const rf_solve_ctx_t *ctx)
{
    return ctx->deadline_ms;
}

int32_t rf_solve_ctx_threads(const rf_solve_ctx_t *ctx)
{
    return ctx->opts.threads;
}

void *rf_solve_ctx_user(const rf_solve_ctx_t *ctx)
{
    return ctx->opts.user;
}
