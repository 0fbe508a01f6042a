/* solver/ilp_search.c: the searches over the batch that the strategies
 * run the integer program in (docs/ilp.md, "Solving it").
 *
 * - rf__ilp_whole: one program for the whole batch, two runs racing on two
 *   threads (OpenMP, one GLPK problem per thread); the best answer wins,
 *   ties to the lower run, so the answer does not depend on timing when no
 *   time limit cuts a search.
 * - rf__ilp_lns: the neighbourhood search for batches too large for one
 *   program. Passes cycle through three grains of region (fine: runs of
 *   racks of about S_REGION_NODES nodes; around spread gangs: the racks of
 *   one gang over several domains; coarse: the top-level domains when
 *   there are several of at most S_REGION_MAX nodes, else longer runs). A region's
 *   program frees the gangs that lie wholly inside it and a window of the
 *   rejected gangs, keeps every other gang, and may only use the region's
 *   nodes; `threads` disjoint regions are solved at once, their
 *   improvements merged (a rejected gang several regions admit is taken
 *   from the first), checked by rf_check and kept if better. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ilp_search.h"
#include "mip.h"
#include "preempt.h"
#include "rackfit/check.h"
#include "rackfit/machine.h"
#include "tree.h"

#ifdef RF_HAVE_OPENMP
#include <omp.h>
#endif

/* Rejected gangs one region's program may try at once. */
#define S_LNS_REJECTED 256
/* Region sizes for the neighbourhood search, in nodes. */
#define S_REGION_NODES 64
#define S_REGION_MAX   1100
/* The share of the time left that a pass of regions around spread gangs
 * may take. */
#define S_SPREAD_SHARE 0.34
/* The least time left (ms) for which the whole batch's two runs race. */
#define S_RACE_MS 250
/* Small batches with CBC: the share of the time the program over units has
 * before CBC takes its thread. */
#define S_UNITS_SHARE 0.3

typedef struct {
    rf_answer_t *answer;
    rf__ilp_stats_t stats;
    rf_status rc;
    rf_error_t err;
    bool from_other; /* started from another run's answer, not the caller's */
} s_run_t;

/* ---------------------------------------------------------------- one program for the batch */

rf_status rf__ilp_whole(const rf_problem_t *pb, rf__ilp_clock_t *ck, rf_answer_t *ans, const rf_answer_t *other,
                        int32_t threads, bool small, bool tight, double *bound, bool *values_proven, rf_error_t *err)
{
    /* two runs race only when there is time for both: below S_RACE_MS they
     * would share the cores while GLPK's first factorisations, which its
     * time limit does not interrupt, run late */
    int32_t n_runs = threads > 1 && rf__mip_thread_safe(ck->mip) && rf__ilp_left(ck) > S_RACE_MS ? 2 : 1;
    /* a backend that cannot run two programs at once (CBC) runs one with
     * every thread of its own */
    int32_t mip_threads = n_runs == 1 ? threads : 1;
    rf_mip_backend mip = ck->mip;
    /* small batches under the default backend, with CBC built in: the
     * thread of the program over units goes on with CBC on the exact
     * program (run 2) when that one has not proven its answer by
     * S_UNITS_SHARE of the time (docs/ilp.md, "Backends") */
    bool with_cbc = small && n_runs == 2 && mip == RF_MIP_AUTO && rf_mip_backend_available(RF_MIP_CBC);
    s_run_t runs[3];
    memset(runs, 0, sizeof runs);
    double deadline = ck->deadline;
    double units_end = with_cbc ? rf_now_ms() + S_UNITS_SHARE * rf__ilp_left(ck) : deadline;
    /* small batches: when the program over units (run 1) proves its answer
     * optimal (it is a relaxation, so nothing beats it), the exact run
     * stops and that answer is taken, whatever the exact run had; when the
     * exact run proves its own, CBC's run (run 2) stops, and ties go to the
     * lower run, so the exact run's answer is taken. A proof by CBC stops
     * nothing: the outcome does not depend on which finished first. */
    volatile int stop_exact = 0, stop_cbc = 0;
    bool units_won = false;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(n_runs) schedule(static, 1) if (n_runs > 1) default(none)                         \
    shared(runs, pb, ans, other, deadline, units_end, small, tight, n_runs, stop_exact, stop_cbc, units_won, mip,      \
           mip_threads, with_cbc)
#endif
    for (int32_t i = 0; i < n_runs; i++) {
        rf_machine_bind_team();
        /* small batches: run 0 exact (every node its own unit), run 1 over
         * units (often faster, sometimes not decodable); larger ones: both
         * over units, run 1 with the other linking formulation from the
         * other greedy answer */
        rf__ilp_opts_t io = {.isolate = -1,
                             .deadline_ms = i == 1 ? units_end : deadline,
                             .mip_gap = 1e-9,
                             .aggregate = small ? i == 1 : true,
                             .tight = small ? true : (i == 0 ? tight : !tight),
                             .keep = NULL,
                             .node_allowed = NULL,
                             .stop = small && i == 0 && n_runs > 1 ? &stop_exact : NULL,
                             .mip = mip == RF_MIP_AUTO ? RF_MIP_GLPK : mip,
                             .mip_threads = mip_threads};
        const rf_answer_t *from = (i == 1 && !small && other) ? other : ans;
        runs[i].rc = rf__ilp_improve(pb, from, &io, &runs[i].answer, &runs[i].stats, &runs[i].err);
        bool proved = runs[i].rc == RF_OK && runs[i].stats.values_proven && runs[i].stats.penalty_proven;
        if (small && i == 0 && proved)
            __atomic_store_n(&stop_cbc, 1, __ATOMIC_RELAXED);
        if (small && i == 1 && proved) {
            units_won = true;
            __atomic_store_n(&stop_exact, 1, __ATOMIC_RELAXED);
        }
        if (i == 1 && with_cbc && !units_won && !__atomic_load_n(&stop_cbc, __ATOMIC_RELAXED)) {
            /* run 2: CBC on the exact program, from the best answer so far */
            io.deadline_ms = deadline;
            io.aggregate = false;
            io.mip = RF_MIP_CBC;
            io.stop = &stop_cbc;
            bool from_units = runs[1].answer && rf_answer_compare(runs[1].answer, ans) < 0;
            runs[2].rc = rf__ilp_improve(pb, from_units ? runs[1].answer : ans, &io, &runs[2].answer, &runs[2].stats,
                                         &runs[2].err);
            runs[2].from_other = from_units;
        }
    }
    if (with_cbc)
        n_runs = 3;
    rf_status rc = RF_OK;
    int32_t best = -1;
    for (int32_t i = 0; i < n_runs; i++) {
        rf__ilp_note_step(ck, &runs[i].stats);
        if (runs[i].rc == RF_ENOMEM) {
            rc = RF_ENOMEM;
            if (err)
                *err = runs[i].err;
        }
        if (runs[i].answer && (best < 0 || rf_answer_compare(runs[i].answer, runs[best].answer) < 0))
            best = i;
    }
    if (units_won) /* proven; no answer: the incumbent is optimal */
        best = runs[1].answer ? 1 : -1;
    /* the values the runs started from (a run without an answer ends at them) */
    rf_value_t start[RF_MIP_MAX_STAGES];
    int32_t n_start = ans->summary.n_value <= RF_MIP_MAX_STAGES ? ans->summary.n_value : -1;
    for (int32_t v = 0; v < n_start; v++)
        start[v] = ans->summary.value[v];
    if (best >= 0 && rf_answer_compare(runs[best].answer, ans) < 0 && rc == RF_OK)
        rc = rf_answer_copy(ans, runs[best].answer);
    bool same_values = n_start == ans->summary.n_value;
    for (int32_t v = 0; same_values && v < n_start; v++)
        same_values = start[v].priority == ans->summary.value[v].priority &&
                      start[v].units == ans->summary.value[v].units && start[v].pods == ans->summary.value[v].pods;
    /* a run proves a bound for the answer only when its program's values are
     * the answer's: its own answer equals the answer, or it returned none
     * (not better, or not decodable: the program over units is a relaxation)
     * while starting from this very answer, ending at its values, and the
     * answer kept them. A run whose values are proven and the answer's proves
     * the answer's values optimal; the penalty is then optimal where it meets
     * the bound. */
    for (int32_t i = 0; i < n_runs; i++) {
        const rf__ilp_stats_t *st = &runs[i].stats;
        bool from_ans = !(i == 1 && !small && other) && !runs[i].from_other;
        bool own = runs[i].answer && rf_answer_compare(runs[i].answer, ans) == 0;
        bool matches = own || (!runs[i].answer && st->solved && st->values_match_incumbent && from_ans && same_values);
        if (!st->solved || !matches || st->penalty_bound < 0)
            continue;
        *bound = fmax(*bound, st->penalty_bound); /* running gangs included (the run decides them all) */
        *values_proven |= st->values_proven;
    }
    for (int32_t i = 0; i < n_runs; i++)
        rf_answer_destroy(&runs[i].answer);
    return rc;
}

/* ---------------------------------------------------------------- the neighbourhood search */

/* Copy gang g's decision (placements or reason) from `src` into `dst`. */
static rf_status s_copy_gang(rf_answer_t *dst, const rf_answer_t *src, int32_t g)
{
    const rf_gang_answer_t *sg = &src->gangs[g];
    if (!sg->admitted)
        return rf_answer_reject(dst, g, sg->why, "%s", sg->reason ? sg->reason : "");
    rf_answer_gang_reset(dst, g);
    for (int32_t p = 0; p < src->problem->gangs[g].n_pod_sets; p++)
        for (int32_t i = 0; i < sg->pod_sets[p].n_placements; i++)
            RF_CALL(rf_answer_add(dst, g, p, sg->pod_sets[p].placements[i].node, sg->pod_sets[p].placements[i].count));
    dst->gangs[g].admitted = true;
    return RF_OK;
}

typedef struct {
    int32_t first, last; /* positions in the tree's node order */
} s_region_t;

/* Regions of the two grains of consecutive racks (the third is
 * s_spread_regions'): fine, runs of consecutive deepest-z-level domains
 * (racks) of about S_REGION_NODES nodes (tree order keeps them close), where
 * programs finish fast; coarse, the top-level domains when there are several
 * of at most S_REGION_MAX nodes (else runs four times as long), where gangs
 * can move further. */
static int32_t s_regions(const rf__tree_t *t, int32_t zl, bool fine, s_region_t *out, int32_t cap)
{
    int32_t n = 0;
    int32_t tops = t->level_start[1] - t->level_start[0];
    if (!fine && zl >= 1 && tops >= 2) {
        bool fit = true;
        for (int32_t d = t->level_start[0]; d < t->level_start[1]; d++)
            fit &= t->node_end[d] - t->node_start[d] <= S_REGION_MAX;
        if (fit) {
            for (int32_t d = t->level_start[0]; d < t->level_start[1] && n < cap; d++)
                out[n++] = (s_region_t){t->node_start[d], t->node_end[d]};
            return n;
        }
    }
    int32_t size = fine ? S_REGION_NODES : 4 * S_REGION_NODES;
    int32_t lz = zl >= 1 ? zl - 1 : -1;
    if (lz < 0) {
        for (int32_t i = 0; i < t->n_in_tree && n < cap; i += size)
            out[n++] = (s_region_t){i, i + size < t->n_in_tree ? i + size : t->n_in_tree};
        return n;
    }
    int32_t a = 0;
    for (int32_t d = t->level_start[lz]; d < t->level_start[lz + 1] && n < cap; d++)
        if (t->node_end[d] - a >= size || d + 1 == t->level_start[lz + 1]) {
            out[n++] = (s_region_t){a, t->node_end[d]};
            a = t->node_end[d];
        }
    return n;
}

/* The neighbourhood search's state. */
typedef struct {
    const rf_problem_t *pb;
    rf__tree_t tree;
    bool tree_owned;
    int32_t N, G, zl, threads, cap;
    s_region_t *regions;
    int32_t n_regions;
    int32_t *region_of; /* [N] the region of each node in this pass, -1 none */
    uint8_t *masks;     /* [threads * N] the nodes each run may use */
    bool *keeps;        /* [threads * (G + 1)] the gangs each run keeps */
    s_run_t *runs;      /* [threads] */
    rf_answer_t *merged;
    double merge_ms;     /* the most a merge (finish and check of the batch) took */
    int32_t mip_threads; /* threads each region's program may give its backend */
} s_lns_t;

static bool *s_keeps(s_lns_t *l, int32_t k)
{
    return &l->keeps[(size_t)k * (size_t)(l->G + 1)];
}

static int s_cmp_pen_desc(const void *a, const void *b)
{
    const double *x = a, *y = b; /* {penalty, gang} */
    if (x[0] != y[0])
        return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Node n's rack (level lz) into the region being built (racks[], *nodes);
 * false when it has none or an earlier region has it. taken[d]: 0 free, 1
 * an earlier region's, 2 this one's. */
static bool s_spread_add(const rf__tree_t *t, int32_t lz, int32_t n, uint8_t *taken, int32_t *racks, int32_t *n_racks,
                         int32_t *nodes)
{
    int32_t d = rf__tree_node_dom(t, n, lz);
    if (d < 0 || taken[d] == 1)
        return false;
    if (taken[d] == 0) {
        taken[d] = 2;
        racks[(*n_racks)++] = d;
        *nodes += t->node_end[d] - t->node_start[d];
    }
    return true;
}

/* The third grain, around spread gangs: for each admitted gang over several
 * domains of a level above the hosts, the highest penalty first, a region of
 * every deepest domain (rack) it has pods in, when none of them is in an
 * earlier region and they hold at most S_REGION_MAX nodes. The gang lies
 * wholly inside, so the region's program may gather it into fewer racks,
 * moving the gangs inside out of its way: a region of consecutive racks
 * holds a gang over two blocks only at the coarse grain's block, never
 * when it spans blocks. false: out of memory. */
static bool s_spread_regions(s_lns_t *l, const rf_answer_t *best)
{
    const rf__tree_t *t = &l->tree;
    l->n_regions = 0;
    if (l->zl < 1)
        return true;
    int32_t lz = l->zl - 1;
    double *cand = malloc(sizeof *cand * 2 * (size_t)(l->G + 1));
    int32_t *racks = malloc(sizeof *racks * (size_t)(t->n_domains + 1));
    uint8_t *taken = calloc((size_t)t->n_domains + 1, 1);
    int32_t n_cand = 0;
    bool ok = cand && racks && taken;
    for (int32_t g = 0; ok && g < l->G; g++) {
        bool spread = false;
        for (int32_t lv = 0; best->gangs[g].admitted && lv < l->zl; lv++)
            spread |= best->gangs[g].domains[lv] > 1;
        if (spread) {
            cand[2 * n_cand] = best->gangs[g].penalty;
            cand[2 * n_cand++ + 1] = g;
        }
    }
    if (ok)
        qsort(cand, (size_t)n_cand, 2 * sizeof *cand, s_cmp_pen_desc);
    for (int32_t i = 0; ok && i < n_cand && l->n_regions < l->cap; i++) {
        int32_t g = (int32_t)cand[2 * i + 1], n_racks = 0, nodes = 0;
        const rf_gang_t *gg = &l->pb->gangs[g];
        bool clash = false;
        /* every pod of the gang, new and bound (s_home counts both) */
        for (int32_t p = 0; p < gg->n_pod_sets && !clash; p++) {
            for (int32_t k = 0; k < best->gangs[g].pod_sets[p].n_placements && !clash; k++)
                clash =
                    !s_spread_add(t, lz, best->gangs[g].pod_sets[p].placements[k].node, taken, racks, &n_racks, &nodes);
            for (int32_t k = 0; k < gg->pod_sets[p].n_bound && !clash; k++)
                clash = !s_spread_add(t, lz, gg->pod_sets[p].bound[k].node, taken, racks, &n_racks, &nodes);
        }
        bool take = !clash && n_racks > 0 && nodes <= S_REGION_MAX;
        for (int32_t j = 0; j < n_racks; j++) {
            taken[racks[j]] = take ? 1 : 0;
            for (int32_t q = t->node_start[racks[j]]; take && q < t->node_end[racks[j]]; q++)
                l->region_of[t->node_order[q]] = l->n_regions;
        }
        l->n_regions += take;
    }
    free(cand);
    free(racks);
    free(taken);
    return ok;
}

/* The region of every node of this pass's regions: grain 0 fine, 1 coarse,
 * 2 around spread gangs. false: out of memory. */
static bool s_lns_regions(s_lns_t *l, int32_t grain, const rf_answer_t *best)
{
    for (int32_t n = 0; n < l->N; n++)
        l->region_of[n] = -1;
    if (grain == 2)
        return s_spread_regions(l, best);
    l->n_regions = s_regions(&l->tree, l->zl, grain == 0, l->regions, l->cap);
    for (int32_t r = 0; r < l->n_regions; r++)
        for (int32_t i = l->regions[r].first; i < l->regions[r].last; i++)
            l->region_of[l->tree.node_order[i]] = r;
    return true;
}

/* The region holding every pod (new and bound) of admitted gang g, -1 when
 * they lie in several. */
static int32_t s_home(const s_lns_t *l, const rf_answer_t *best, int32_t g)
{
    const rf_gang_answer_t *ga = &best->gangs[g];
    const rf_gang_t *gg = &l->pb->gangs[g];
    int32_t home = -2;
    for (int32_t p = 0; p < gg->n_pod_sets && home != -1; p++) {
        for (int32_t i = 0; i < ga->pod_sets[p].n_placements && home != -1; i++) {
            int32_t r = l->region_of[ga->pod_sets[p].placements[i].node];
            home = home == -2 || home == r ? r : -1;
        }
        for (int32_t i = 0; i < gg->pod_sets[p].n_bound && home != -1; i++) {
            int32_t r = l->region_of[gg->pod_sets[p].bound[i].node];
            home = home == -2 || home == r ? r : -1;
        }
    }
    return home;
}

/* What runs [0, batch) of regions r0.. may use and which gangs they free:
 * the admitted gangs wholly inside their region, and a window of at most
 * S_LNS_REJECTED rejected gangs (moving with the pass, so a batch of
 * thousands of rejected gangs cannot make one region's program huge) that
 * every run may try and the merge admits once. */
static void s_lns_frees(s_lns_t *l, const rf_answer_t *best, int32_t pass, int32_t r0, int32_t batch)
{
    const int32_t N = l->N, G = l->G;
    for (int32_t k = 0; k < batch; k++) {
        uint8_t *mask = &l->masks[(size_t)k * N];
        for (int32_t n = 0; n < N; n++)
            mask[n] = l->region_of[n] == r0 + k;
        for (int32_t g = 0; g < G; g++)
            s_keeps(l, k)[g] = true;
    }
    int32_t n_rejected = 0;
    for (int32_t g = 0; g < G; g++)
        n_rejected += !best->gangs[g].admitted;
    int32_t rejected_seen = 0;
    for (int32_t g = 0; g < G; g++) {
        if (!best->gangs[g].admitted) {
            int32_t pos = rejected_seen++;
            int32_t from = n_rejected > S_LNS_REJECTED ? (pass * S_LNS_REJECTED) % n_rejected : 0;
            int32_t rel = (pos - from + n_rejected) % (n_rejected ? n_rejected : 1);
            if (rel < S_LNS_REJECTED)
                for (int32_t k = 0; k < batch; k++)
                    s_keeps(l, k)[g] = false;
            continue;
        }
        int32_t home = s_home(l, best, g);
        if (home >= r0 && home < r0 + batch)
            s_keeps(l, home - r0)[g] = false;
    }
}

/* The runs' improvements merged into one answer, checked, and kept in
 * `best` when better (*improved). */
static rf_status s_lns_merge(s_lns_t *l, rf_answer_t *best, int32_t batch, bool *improved)
{
    double t0 = rf_now_ms();
    rf_status rc = rf_answer_copy(l->merged, best);
    /* a gang rejected in `best` that several runs admit is taken from the
     * first: the others' placements only lose a gang, which frees capacity
     * and keeps them feasible */
    for (int32_t k = 0; k < batch && rc == RF_OK; k++)
        for (int32_t g = 0; g < l->G && l->runs[k].answer && rc == RF_OK; g++) {
            if (s_keeps(l, k)[g])
                continue;
            if (!best->gangs[g].admitted && l->merged->gangs[g].admitted)
                continue; /* an earlier run admitted it */
            if (!best->gangs[g].admitted && !l->runs[k].answer->gangs[g].admitted)
                continue; /* still rejected: keep the first reason */
            rc = s_copy_gang(l->merged, l->runs[k].answer, g);
        }
    /* running gangs: a run decides those wholly inside its region (and
     * only it); a victim whose preemptor went with another run's copy of a
     * gang is kept again (always feasible: nothing above it is there) */
    for (int32_t k = 0; k < batch && rc == RF_OK; k++)
        for (int32_t i = 0; i < l->pb->n_running && l->runs[k].answer && rc == RF_OK; i++)
            if (rf__ilp_running_inside(&l->pb->running[i], &l->masks[(size_t)k * l->N]))
                rc = rf_answer_preempt(l->merged, i, l->runs[k].answer->running[i].preempted);
    if (rc == RF_OK)
        rc = rf__preempt_settle(l->merged);
    if (rc == RF_OK)
        rc = rf_answer_finish(l->merged);
    if (rc == RF_OK) {
        rf_check_report_t rep;
        memset(&rep, 0, sizeof rep);
        rf_error_t cerr;
        bool ok = rf_check(l->pb, l->merged, &rep, &cerr) == RF_OK && rep.feasible;
        rf_check_report_fini(&rep);
        if (ok && rf_answer_compare(l->merged, best) < 0) {
            rc = rf_answer_copy(best, l->merged);
            *improved = true;
        }
    }
    l->merge_ms = fmax(l->merge_ms, rf_now_ms() - t0);
    return rc;
}

/* Regions r0.. solved at once (one run each, disjoint), then merged. */
static rf_status s_lns_batch(s_lns_t *l, rf__ilp_clock_t *ck, rf_answer_t *best, int32_t batch, double slice_end,
                             bool *improved, bool *all_proven, rf_error_t *err)
{
    const rf_problem_t *pb = l->pb;
    s_run_t *runs = l->runs;
    const uint8_t *masks = l->masks;
    const bool *keeps = l->keeps;
    const int32_t G = l->G, N = l->N;
    rf_mip_backend mip = ck->mip;
    int32_t mip_threads = l->mip_threads;
#ifdef RF_HAVE_OPENMP
#pragma omp parallel for num_threads(batch)                                                                            \
    schedule(static, 1) if (batch > 1 && rf__mip_thread_safe(mip)) default(none)                                       \
        shared(runs, pb, best, keeps, masks, slice_end, batch, G, N, mip, mip_threads)
#endif
    for (int32_t k = 0; k < batch; k++) {
        rf_machine_bind_team();
        rf__ilp_opts_t io = {.isolate = -1,
                             .deadline_ms = slice_end,
                             .mip_gap = 1e-9,
                             .aggregate = true,
                             .tight = true,
                             .keep = &keeps[(size_t)k * (G + 1)],
                             .node_allowed = &masks[(size_t)k * N],
                             .mip = mip,
                             .mip_threads = mip_threads};
        runs[k].rc = rf__ilp_improve(pb, best, &io, &runs[k].answer, &runs[k].stats, &runs[k].err);
    }
    /* merge what improved: the regions and the gangs freed are disjoint */
    rf_status rc = RF_OK;
    bool any = false;
    for (int32_t k = 0; k < batch; k++) {
        rf__ilp_note_step(ck, &runs[k].stats);
        if (runs[k].rc == RF_ENOMEM) {
            rc = RF_ENOMEM;
            if (err)
                *err = runs[k].err;
        }
        *all_proven &= runs[k].stats.values_proven && runs[k].stats.penalty_proven;
        any |= runs[k].answer != NULL;
    }
    if (any && rc == RF_OK)
        rc = s_lns_merge(l, best, batch, improved);
    for (int32_t k = 0; k < batch; k++)
        rf_answer_destroy(&runs[k].answer);
    return rc;
}

/* Passes cycling through the grains until `end`, or until a pass of each grain
 * proves every region optimal on its own and changes nothing. */
rf_status rf__ilp_lns(const rf_problem_t *pb, rf__ilp_clock_t *ck, rf_answer_t *best, double end, int32_t threads,
                      rf_error_t *err)
{
    s_lns_t l;
    memset(&l, 0, sizeof l);
    l.pb = pb;
    RF_CALL(rf__tree_of(pb, &l.tree, &l.tree_owned, err));
    l.N = pb->n_nodes;
    l.G = pb->n_gangs;
    l.threads = threads;
    l.zl = strcmp(pb->levels[pb->n_levels - 1], RF_HOSTNAME_LABEL) == 0 ? pb->n_levels - 1 : pb->n_levels;
    l.cap = l.tree.n_in_tree + 16;
    l.regions = malloc((size_t)l.cap * sizeof *l.regions);
    l.region_of = malloc((size_t)(l.N + 1) * sizeof *l.region_of);
    l.masks = calloc((size_t)threads * (size_t)l.N + 1, 1);
    l.keeps = malloc((size_t)threads * (size_t)(l.G + 1) * sizeof *l.keeps);
    l.runs = calloc((size_t)threads, sizeof *l.runs);
    l.merged = rf_answer_new(pb);
    rf_status rc = RF_OK;
    if (!l.regions || !l.region_of || !l.masks || !l.keeps || !l.runs || !l.merged) {
        rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
        goto done;
    }
    l.merge_ms = ck->greedy_ms;            /* a merge costs a finish and a check over the batch: about a greedy pass */
    bool quiet[3] = {false, false, false}; /* a whole pass of that grain proved every region and changed nothing */
    /* regions solved at once: one at a time, with every thread its own,
     * under a backend that solves one program at a time (CBC) */
    int32_t par = rf__mip_thread_safe(ck->mip) ? threads : 1;
    l.mip_threads = par == 1 ? threads : 1;
    for (int32_t pass = 0; rf_now_ms() < end && !(quiet[0] && quiet[1] && quiet[2]); pass++) {
        int32_t grain = (int32_t[]){0, 2, 1}[pass % 3]; /* fine, around spread gangs, coarse */
        if (!s_lns_regions(&l, grain, best)) {
            rc = rf_error_set(err, RF_ENOMEM, "", "out of memory");
            goto done;
        }
        bool improved_pass = false, all_proven = true;
        int32_t tried = 0;
        /* the regions around spread gangs get a share of the time left, so
         * as not to starve the coarse grain, where gangs move furthest */
        double pass_end = grain == 2 ? rf_now_ms() + (end - rf_now_ms()) * S_SPREAD_SHARE : end;
        for (int32_t r0 = 0; r0 < l.n_regions; r0 += par) {
            double left = pass_end - rf_now_ms();
            if (left < ck->step_ms + l.merge_ms + RF__ILP_MIN_SLICE_MS) {
                if (grain != 2)
                    goto done;
                /* its share is spent: regions not tried; one that cannot
                 * try any counts as quiet, so that the others' quiet passes
                 * still end the search */
                all_proven = tried == 0;
                break;
            }
            int32_t batch = l.n_regions - r0 < par ? l.n_regions - r0 : par;
            int32_t batches_left = (l.n_regions - r0 + par - 1) / par;
            double slice_end = rf_now_ms() + (left - l.merge_ms) / batches_left;
            s_lns_frees(&l, best, pass, r0, batch);
            rc = s_lns_batch(&l, ck, best, batch, slice_end, &improved_pass, &all_proven, err);
            if (rc != RF_OK)
                goto done;
            tried += batch;
        }
        quiet[grain] = !improved_pass && all_proven;
        if (improved_pass) /* the other grains may have room again */
            memset(quiet, 0, sizeof quiet);
    }
done:
    rf_answer_destroy(&l.merged);
    free(l.regions);
    free(l.region_of);
    free(l.masks);
    free(l.keeps);
    free(l.runs);
    if (l.tree_owned)
        rf__tree_fini(&l.tree);
    return rc;
}
