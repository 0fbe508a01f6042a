/* solver/ilp_bound.c: the per-gang penalty bound (docs/ilp.md, "Bounds").
 *
 * Each admitted gang's least penalty alone on the cluster, as a one-gang
 * program (rf__ilp_improve with `isolate`), run in parallel while time
 * lasts; a gang whose program does not finish keeps its counting bound
 * (the greedy's gang_lb). The sum is valid for any answer admitting the
 * same gangs: a gang's placement there is feasible for it alone too, and
 * the programs are relaxations of the real placement. Kept running gangs
 * add their constant penalty. */
#include <math.h>
#include <stdlib.h>

#include "clock.h"
#include "ilp_search.h"
#include "mip.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

/* The tightest penalty bound provable here for the gangs `ans` admits:
 * each gang's own least penalty alone on the cluster (a program per gang, in
 * parallel, while time lasts), or its counting bound (gang_lb) otherwise;
 * summed over the admitted gangs. Valid for any answer admitting the same
 * gangs: there each gang's placement is feasible alone too. */
double rf__ilp_gang_bounds(const rf_problem_t *pb, rf__ilp_clock_t *ck, const rf_answer_t *ans, const double *gang_lb,
                           int32_t threads)
{
    const int32_t G = pb->n_gangs;
    double *each = malloc((size_t)(G + 1) * sizeof *each);
    int32_t *todo = malloc((size_t)(G + 1) * sizeof *todo);
    double total = 0;
    if (!each || !todo)
        goto done;
    int32_t n = 0;
    for (int32_t g = 0; g < G; g++) {
        each[g] = gang_lb[g];
        if (ans->gangs[g].admitted && ans->gangs[g].penalty > each[g] + 1e-9)
            todo[n++] = g; /* room between its bound and its penalty */
    }
    /* a program per gang costs about a build over the whole cluster */
    double cost = fmax(ck->step_ms, ck->greedy_ms);
    double deadline = ck->deadline;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(threads)                                                                          \
    schedule(dynamic, 1) if (threads > 1 && rf__mip_thread_safe()) default(none)                                       \
        shared(pb, ans, each, todo, n, deadline, cost)
#endif
    for (int32_t i = 0; i < n; i++) {
        if (deadline - rf_now_ms() < cost + RF__ILP_MIN_SLICE_MS)
            continue;
        int32_t g = todo[i];
        rf__ilp_opts_t io = {.isolate = g,
                             .deadline_ms = deadline - cost,
                             .mip_gap = 1e-9,
                             .aggregate = true,
                             .tight = true,
                             .keep = NULL,
                             .node_allowed = NULL};
        rf_answer_t *none = NULL;
        rf__ilp_stats_t st;
        rf_error_t e;
        if (rf__ilp_improve(pb, ans, &io, &none, &st, &e) == RF_OK && st.penalty_bound > each[g])
            each[g] = st.penalty_bound;
        rf_answer_destroy(&none);
    }
    for (int32_t g = 0; g < G; g++)
        if (ans->gangs[g].admitted)
            total += fmin(each[g], ans->gangs[g].penalty);
    total += rf_answer_kept_penalty(ans);
done:
    free(each);
    free(todo);
    return total;
}
