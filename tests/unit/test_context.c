/* tests/unit/test_context.c: one solve's context (solver/context.c).
 *
 * The context resolves the options (the problem's where the call leaves
 * them unset, threads through rf_machine_threads, a start time, the
 * deadline), builds the tree and the eligibility classes once, and hands out
 * a view of the problem whose tree_hint is its own tree, so a kernel asking
 * for the tree borrows it; a problem that brings a tree_hint lends it to the
 * context instead; a cluster cache that matches the problem lends its tree,
 * eligibility masks and capacity roll-ups, one that does not is left alone. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "cluster_cache.h"
#include "context.h"
#include "rackfit/rackfit.h"

static const char s_json[] =
    "{\"cluster\":{\"levels\":[\"example.com/rack\",\"kubernetes.io/hostname\"],\"nodes\":["
    "{\"name\":\"h1\",\"labels\":{\"example.com/rack\":\"r1\",\"kubernetes.io/hostname\":\"h1\"}},"
    "{\"name\":\"h2\",\"labels\":{\"example.com/rack\":\"r2\",\"kubernetes.io/hostname\":\"h2\"}}]},"
    "\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"a\",\"count\":1},{\"name\":\"b\",\"count\":1,"
    "\"node_selector\":{\"kubernetes.io/hostname\":\"h2\"}}]}],"
    "\"options\":{\"time_limit_ms\":250,\"threads\":1,\"mode\":\"greedy\"}}";

Test(context, options_resolved_from_the_problem)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    rf_solve_ctx_t ctx;
    rf_error_t err;
    cr_assert_eq(rf__ctx_init(&ctx, pb, NULL, &err), RF_OK, "%s", err.message);
    const rf_solve_opts_t *o = rf_solve_ctx_opts(&ctx);
    cr_assert_eq(o->time_limit_ms, 250);
    cr_assert_eq(o->threads, 1);
    cr_assert_eq(rf_solve_ctx_threads(&ctx), 1);
    cr_assert_eq(o->mode, RF_MODE_GREEDY);
    cr_assert_gt(o->start_ms, 0);
    cr_assert_float_eq(rf_solve_ctx_deadline_ms(&ctx), o->start_ms + 250.0, 1e-9);
    cr_assert_null(rf_solve_ctx_user(&ctx));
    rf__ctx_fini(&ctx);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(context, call_options_override_and_threads_are_capped)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.time_limit_ms = 40;
    o.threads = 100000; /* more than any machine: capped to the usable cores */
    o.start_ms = 1000.0;
    int marker = 7;
    o.user = &marker;
    rf_solve_ctx_t ctx;
    rf_error_t err;
    cr_assert_eq(rf__ctx_init(&ctx, pb, &o, &err), RF_OK);
    cr_assert_eq(rf_solve_ctx_opts(&ctx)->time_limit_ms, 40);
    cr_assert_eq(rf_solve_ctx_threads(&ctx), rf_machine()->usable);
    cr_assert_float_eq(rf_solve_ctx_deadline_ms(&ctx), 1040.0, 1e-9);
    cr_assert_eq(rf_solve_ctx_user(&ctx), &marker);
    rf__ctx_fini(&ctx);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(context, the_view_lends_the_tree_and_holds_eligibility)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    rf_solve_ctx_t ctx;
    rf_error_t err;
    cr_assert_eq(rf__ctx_init(&ctx, pb, NULL, &err), RF_OK);
    const rf_problem_t *view = rf_solve_ctx_problem(&ctx);
    cr_assert_neq(view, pb, "a view, not the caller's problem");
    cr_assert_eq(view->nodes, pb->nodes, "the same nodes");
    cr_assert_eq(view->tree_hint, &ctx.tree);
    cr_assert_null(pb->tree_hint, "the caller's problem is not touched");
    cr_assert(ctx.tree_owned);
    /* a kernel asking the view for its tree borrows the context's */
    rf__tree_t t;
    bool owned = true;
    cr_assert_eq(rf__tree_of(view, &t, &owned, &err), RF_OK);
    cr_assert(!owned);
    cr_assert_eq(t.node_dom, ctx.tree.node_dom);
    /* eligibility: pod set b only on h2 */
    cr_assert_eq(ctx.elig.n_classes, 2);
    cr_assert_eq(ctx.elig.n_ok[ctx.elig.class_of[0]], 2);
    cr_assert_eq(ctx.elig.n_ok[ctx.elig.class_of[1]], 1);
    cr_assert(ctx.elig.ok[ctx.elig.class_of[1]][1]);
    rf__ctx_fini(&ctx);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(context, a_problem_tree_hint_is_borrowed)
{
    rf_problem_t *pb = rf_test_parse(s_json);
    rf__tree_t mine;
    rf_error_t err;
    cr_assert_eq(rf__tree_build(pb, &mine, &err), RF_OK);
    pb->tree_hint = &mine; /* a caller that built the tree already (rackfitd now lends a cluster cache) */
    rf_solve_ctx_t ctx;
    cr_assert_eq(rf__ctx_init(&ctx, pb, NULL, &err), RF_OK);
    cr_assert(!ctx.tree_owned);
    cr_assert_eq(ctx.tree.node_dom, mine.node_dom);
    rf__ctx_fini(&ctx);
    cr_assert_not_null(mine.node_dom, "fini leaves a lent tree alone");
    /* and a whole solve on it */
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 1000);
    rf_test_assert_feasible(pb, ans, "tree hint");
    cr_assert(ans->gangs[0].admitted);
    rf_answer_destroy(&ans);
    pb->tree_hint = NULL;
    rf__tree_fini(&mine);
    rf_problem_destroy(&pb);
    rf_test_no_leaks();
}

Test(context, a_matching_cluster_cache_is_adopted_and_another_is_not)
{
    rf_problem_t *pb = rf_test_parse(s_json), *other = rf_test_parse(s_json);
    rf_cluster_cache_t *cache = NULL;
    rf_error_t err;
    cr_assert_eq(rf_cluster_cache_new(pb, NULL, &cache, &err), RF_OK, "%s", err.message);
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    cr_assert_null(o.cache, "no cache by default");
    o.cache = cache;
    rf_solve_ctx_t ctx;
    cr_assert_eq(rf__ctx_init(&ctx, pb, &o, &err), RF_OK, "%s", err.message);
    cr_assert_eq(ctx.cache, cache);
    cr_assert(!ctx.tree_owned);
    cr_assert_eq(ctx.tree.node_dom, cache->tree.node_dom, "the cache's tree");
    cr_assert_eq(ctx.elig.n_classes, 2);
    for (int32_t c = 0; c < 2; c++) {
        int32_t cc = ctx.elig.cache_class[c];
        cr_assert_geq(cc, 0);
        cr_assert_eq(ctx.elig.ok[c], cache->classes[cc].ok, "the cache's mask, borrowed");
    }
    cr_assert_eq(ctx.elig.n_ok[ctx.elig.class_of[1]], 1, "pod set b only on h2, as without the cache");
    cr_assert_not_null(ctx.cshape);
    cr_assert_not_null(ctx.cshape[0]);
    cr_assert_not_null(ctx.cshape[1]);
    rf__ctx_fini(&ctx);
    cr_assert_not_null(cache->classes[0].ok, "fini leaves the cache's masks alone");
    /* the same text read again describes the same nodes: adopted; with a
     * node cordoned it is another cluster: not adopted */
    cr_assert_eq(rf__ctx_init(&ctx, other, &o, &err), RF_OK);
    cr_assert_eq(ctx.cache, cache);
    rf__ctx_fini(&ctx);
    other->nodes[0].unschedulable = true;
    cr_assert_eq(rf__ctx_init(&ctx, other, &o, &err), RF_OK);
    cr_assert_null(ctx.cache);
    cr_assert_null(ctx.cshape);
    cr_assert(ctx.tree_owned);
    rf__ctx_fini(&ctx);
    rf_cluster_cache_destroy(&cache);
    rf_problem_destroy(&pb);
    rf_problem_destroy(&other);
    rf_test_no_leaks();
}
