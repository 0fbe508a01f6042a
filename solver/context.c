/* solver/context.c: building one solve's context (see context.h) and the
 * public accessors of include/rackfit/solve.h. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cluster_cache.h"
#include "rackfit/machine.h"

/* The cache's roll-up of every pod set's shape (NULL where it has none). */
static rf_status s_cache_shapes(rf_solve_ctx_t *ctx, rf_error_t *err)
{
    const rf_problem_t *pb = ctx->problem;
    ctx->cshape = calloc((size_t)ctx->elig.n_pod_sets + 1, sizeof *ctx->cshape);
    if (!ctx->cshape)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    int64_t k = 0;
    for (int32_t g = 0; g < pb->n_gangs; g++)
        for (int32_t p = 0; p < pb->gangs[g].n_pod_sets; p++, k++) {
            int32_t cls = ctx->elig.cache_class[ctx->elig.class_of[k]];
            ctx->cshape[k] = cls >= 0 ? rf__cache_shape(ctx->cache, cls, pb->gangs[g].pod_sets[p].requests) : NULL;
        }
    return RF_OK;
}

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
    if (o->cache && rf_cluster_cache_sync(o->cache, pb, NULL, NULL) == RF_OK) {
        ctx->cache = o->cache;
        ctx->tree = o->cache->tree; /* borrowed */
    } else {
        RF_CALL(rf__tree_of(pb, &ctx->tree, &ctx->tree_owned, err));
    }
    ctx->view.tree_hint = &ctx->tree;
    rf_status rc = rf__elig_build_cached(ctx->problem, &ctx->tree, ctx->cache, &ctx->elig, err);
    if (rc == RF_OK && ctx->cache)
        rc = s_cache_shapes(ctx, err);
    if (rc != RF_OK)
        rf__ctx_fini(ctx);
    return rc;
}

void rf__ctx_fini(rf_solve_ctx_t *ctx)
{
    free(ctx->cshape);
    ctx->cshape = NULL;
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
