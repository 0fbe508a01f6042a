/* bench/sim.c: the simulator's event loop and scheduling rounds (sim.h).
 *
 * State: every job is FUTURE (not yet submitted), WAIT (submitted, some pod
 * unbound), RUN (every pod bound; its remaining work, in seconds of the
 * packed placement, falls at 1 / sigma per second) or DONE. The loop takes
 * the next instant (an arrival or a completion), retires the completions,
 * admits the arrivals, runs one round if anything waits, re-rates the running
 * jobs (comm_update) and records a sample. Rounds build a fresh problem: the
 * cluster's nodes with `used` = GPUs bound now, and the waiting jobs (kube:
 * pods) in queue order, at most max_queue of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "grow.h"
#include "sim.h"

#define S_DONE_EPS 1e-6 /* seconds: a job whose remaining time is below this is done */

enum { S_FUTURE = 0, S_WAIT, S_RUN, S_DONE };

/* ---- data structures ------------------------------------------------------------------------------------------- */

typedef struct {
    int32_t state;
    int32_t n_pods, full, rest; /* pods: `full` of pod_gpus GPUs, then one of `rest` when rest > 0 */
    int32_t placed;
    int32_t *pod_node; /* [n_pods], -1 unbound; rank order */
    double queue_ts;   /* kube: when its pods last entered the queue */
    double work;       /* remaining seconds at sigma 1 */
    comm_job_t comm;
    bool was_partial;
    double run_start; /* when its current run started */
    double run_s;     /* seconds run so far (all runs) */
} s_job_t;

typedef struct {
    const sim_cluster_t *c;
    const sim_trace_t *t;
    const comm_profile_t *comm;
    const sim_opts_t *o;
    comm_topo_t topo;
    int32_t P; /* GPUs per pod */
    s_job_t *jobs;
    int64_t *free; /* [n_nodes] */
    int32_t *running;
    int32_t n_running;
    int32_t *waiting; /* submitted, not all pods bound, in submission order */
    int32_t n_waiting;
    comm_job_t **cj; /* scratch for comm_update */
    double *scratch;
    int32_t *mark; /* [max domains of a level] scratch for spread counts */
    int32_t stamp; /* the current mark */
    bool preempt;  /* running jobs go to each round as running gangs (priorities differ) */
    double now;
    sim_result_t *r;
} s_sim_t;

typedef struct {
    int32_t job, pod, pos;
} s_qpod_t;

/* ---- local methods --------------------------------------------------------------------------------------------- */

static int32_t s_pod_gpus(const s_job_t *j, int32_t P, int32_t pod)
{
    return pod < j->full ? P : j->rest;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of sorted v[n]. */
static double s_quantile(const double *v, int32_t n, double q)
{
    if (n == 0)
        return 0;
    int32_t k = (int32_t)ceil(q * n) - 1;
    return v[k < 0 ? 0 : (k >= n ? n - 1 : k)];
}

static rf_status s_sample(s_sim_t *s, rf_error_t *err)
{
    sim_result_t *r = s->r;
    sim_sample_t x = {.t = s->now};
    double min_pod = INFINITY;
    for (int32_t i = 0; i < s->n_waiting; i++) {
        const s_job_t *j = &s->jobs[s->waiting[i]];
        for (int32_t p = 0; p < j->n_pods; p++)
            if (j->pod_node[p] < 0) {
                double g = s_pod_gpus(j, s->P, p);
                min_pod = g < min_pod ? g : min_pod;
            } else {
                x.idle += s_pod_gpus(j, s->P, p);
            }
        x.waiting++;
    }
    for (int32_t n = 0; n < s->c->n_nodes; n++) {
        x.alloc += (double)(s->c->gpus[n] - s->free[n]);
        if (s->free[n] > 0 && (double)s->free[n] < min_pod && isfinite(min_pod))
            x.frag += (double)s->free[n];
    }
    for (int32_t i = 0; i < s->n_running; i++) {
        const s_job_t *j = &s->jobs[s->running[i]];
        x.eff += (double)s->t->jobs[s->running[i]].gpus / j->comm.sigma;
    }
    if (r->n_samples > 0 && r->samples[r->n_samples - 1].t == s->now) {
        r->samples[r->n_samples - 1] = x;
        return RF_OK;
    }
    if (r->n_samples == r->cap_samples) {
        sim_sample_t *ns = rf__grow(r->samples, &r->cap_samples, (int64_t)r->n_samples + 1, 1024, sizeof(*ns));
        if (!ns)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        r->samples = ns;
    }
    r->samples[r->n_samples++] = x;
    return RF_OK;
}

/* Distinct domains of level l among the job's pod nodes. */
static int32_t s_spread(s_sim_t *s, const s_job_t *j, int32_t l, int32_t stamp)
{
    if (l < 0)
        return 1;
    int32_t n = 0, N = s->c->n_nodes;
    for (int32_t p = 0; p < j->n_pods; p++) {
        int32_t d = s->c->dom[(size_t)l * (size_t)N + (size_t)j->pod_node[p]];
        if (s->mark[d] != stamp) {
            s->mark[d] = stamp;
            n++;
        }
    }
    return n;
}

static rf_status s_start(s_sim_t *s, int32_t ji, rf_error_t *err)
{
    s_job_t *j = &s->jobs[ji];
    sim_job_result_t *jr = &s->r->jobs[ji];
    int32_t *pg = malloc((size_t)j->n_pods * sizeof(int32_t));
    if (!pg)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    for (int32_t p = 0; p < j->n_pods; p++)
        pg[p] = s_pod_gpus(j, s->P, p);
    rf_status st = comm_job_init(&j->comm, s->comm, &s->topo, s->t->jobs[ji].family, s->c->g_host, j->pod_node, pg,
                                 j->n_pods, err);
    free(pg);
    RF_CALL(st);
    j->state = S_RUN;
    j->run_start = s->now;
    if (jr->start < 0)
        jr->start = s->now; /* the first start: a preempted job keeps it */
    if (jr->first_pod < 0)
        jr->first_pod = s->now;
    jr->hosts = j->comm.hosts;
    int32_t L = s->c->L;
    jr->racks = L >= 2 ? s_spread(s, j, L - 2, ++s->stamp) : 1;
    jr->blocks = L >= 3 ? s_spread(s, j, L - 3, ++s->stamp) : 1;
    s->running[s->n_running++] = ji;
    return RF_OK;
}

/* Fill the problem's cluster: every node, `used` = GPUs bound now. */
static rf_status s_nodes(s_sim_t *s, rf_problem_t *p, int32_t gpu, rf_error_t *err)
{
    const sim_cluster_t *c = s->c;
    int32_t L = c->L, R = p->n_resources;
    p->n_levels = L;
    p->levels = rf_problem_alloc(p, (size_t)L * sizeof(char *));
    p->level_costs = rf_problem_alloc(p, (size_t)L * sizeof(double));
    p->nodes = rf_problem_alloc(p, (size_t)c->n_nodes * sizeof(rf_node_t));
    int32_t *ord = rf_problem_alloc(p, (size_t)L * sizeof(int32_t));
    if (!p->levels || !p->level_costs || !p->nodes || !ord)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    for (int32_t l = 0; l < L; l++) {
        p->levels[l] = c->levels[l];
        p->level_costs[l] = pow(10.0, L - 1 - l);
        ord[l] = l;
    }
    for (int32_t a = 1; a < L; a++) /* label order: by key */
        for (int32_t b = a; b > 0 && strcmp(c->levels[ord[b - 1]], c->levels[ord[b]]) > 0; b--) {
            int32_t t = ord[b];
            ord[b] = ord[b - 1];
            ord[b - 1] = t;
        }
    p->n_nodes = c->n_nodes;
    for (int32_t n = 0; n < c->n_nodes; n++) {
        rf_node_t *nd = &p->nodes[n];
        nd->name = c->names[n];
        nd->labels = rf_problem_alloc(p, (size_t)L * sizeof(rf_label_t));
        nd->allocatable = rf_problem_alloc(p, (size_t)R * sizeof(int64_t));
        nd->used = rf_problem_alloc(p, (size_t)R * sizeof(int64_t));
        if (!nd->labels || !nd->allocatable || !nd->used)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        for (int32_t k = 0; k < L; k++)
            nd->labels[k] = (rf_label_t){c->levels[ord[k]], c->vals[(size_t)n * (size_t)L + (size_t)ord[k]]};
        nd->n_labels = L;
        nd->allocatable[RF_RES_PODS] = RF_QTY_UNLIMITED;
        nd->allocatable[gpu] = c->gpus[n];
        nd->used[gpu] = c->gpus[n] - s->free[n];
    }
    return RF_OK;
}

static rf_pod_set_t *s_pod_sets(rf_problem_t *p, rf_gang_t *g, int32_t n)
{
    g->pod_sets = rf_problem_alloc(p, (size_t)n * sizeof(rf_pod_set_t));
    g->n_pod_sets = n;
    return g->pod_sets;
}

static rf_status s_pod_set(rf_problem_t *p, rf_pod_set_t *ps, const char *name, int64_t count, int64_t gpus,
                           int32_t gpu)
{
    rf_pod_set_init(ps);
    ps->name = name;
    ps->count = count;
    ps->min_count = count;
    ps->requests = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
    if (!ps->requests)
        return RF_ENOMEM;
    ps->requests[RF_RES_PODS] = 1;
    ps->requests[gpu] = gpus;
    return RF_OK;
}

static const s_sim_t *s_qctx; /* qsort has no context argument; single-threaded use only */

/* kube-scheduler's queue: priority (higher first), then the time the pod
 * entered the queue, then its place among its job's unbound pods (jobs
 * queued at one instant interleave), then submission order. */
static int s_cmp_qpod(const void *a, const void *b)
{
    const s_sim_t *s = s_qctx;
    const s_qpod_t *x = a, *y = b;
    int64_t px = s->t->jobs[x->job].priority, py = s->t->jobs[y->job].priority;
    if (px != py)
        return px > py ? -1 : 1;
    double tx = s->jobs[x->job].queue_ts, ty = s->jobs[y->job].queue_ts;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return (x->pod > y->pod) - (x->pod < y->pod);
}

/* The gangs of one round. kube: one per waiting pod (in queue order, written
 * to *qp); else one per waiting job with pod sets "w" (full pods) and "r". */
static rf_status s_gangs(s_sim_t *s, rf_problem_t *p, int32_t gpu, s_qpod_t **qp, int32_t *n_q, rf_error_t *err)
{
    bool kube = s->o->policy == SIM_KUBE;
    int32_t cap = s->o->max_queue, n = 0;
    if (kube) {
        int32_t total = 0;
        for (int32_t i = 0; i < s->n_waiting; i++)
            total += s->jobs[s->waiting[i]].n_pods - s->jobs[s->waiting[i]].placed;
        *qp = malloc((size_t)(total > 0 ? total : 1) * sizeof(s_qpod_t));
        if (!*qp)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        for (int32_t i = 0; i < s->n_waiting; i++) {
            const s_job_t *j = &s->jobs[s->waiting[i]];
            for (int32_t pod = 0, pos = 0; pod < j->n_pods; pod++)
                if (j->pod_node[pod] < 0)
                    (*qp)[n++] = (s_qpod_t){s->waiting[i], pod, pos++};
        }
        s_qctx = s;
        qsort(*qp, (size_t)n, sizeof(s_qpod_t), s_cmp_qpod);
        if (n > cap)
            n = cap;
        *n_q = n;
    } else {
        n = s->n_waiting < cap ? s->n_waiting : cap;
    }
    p->gangs = rf_problem_alloc(p, (size_t)(n > 0 ? n : 1) * sizeof(rf_gang_t));
    if (!p->gangs)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    p->n_gangs = n;
    for (int32_t k = 0; k < n; k++) {
        rf_gang_t *g = &p->gangs[k];
        rf_gang_init(g);
        int32_t ji = kube ? (*qp)[k].job : s->waiting[k];
        const s_job_t *j = &s->jobs[ji];
        char name[80];
        snprintf(name, sizeof(name), "j%d-p%d", (int)ji, kube ? (int)(*qp)[k].pod : 0);
        g->name = rf_problem_strdup(p, name, strlen(name));
        g->priority = s->t->jobs[ji].priority;
        int32_t nps = kube ? 1 : (j->full > 0) + (j->rest > 0);
        rf_pod_set_t *ps = s_pod_sets(p, g, nps);
        if (!g->name || !ps)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        rf_status st = RF_OK;
        if (kube)
            st = s_pod_set(p, &ps[0], "p", 1, s_pod_gpus(j, s->P, (*qp)[k].pod), gpu);
        else {
            int32_t m = 0;
            if (j->full > 0)
                st = s_pod_set(p, &ps[m++], "w", j->full, s->P, gpu);
            if (st == RF_OK && j->rest > 0)
                st = s_pod_set(p, &ps[m], "r", 1, j->rest, gpu);
        }
        if (st != RF_OK)
            return rf_error_set(err, st, "", "sim: out of memory");
    }
    return RF_OK;
}

/* The running jobs as the problem's running gangs (pods merged per node and pod size). */
static rf_status s_running(s_sim_t *s, rf_problem_t *p, int32_t gpu, rf_error_t *err)
{
    p->n_running = s->n_running;
    p->running = rf_problem_alloc(p, (size_t)(s->n_running > 0 ? s->n_running : 1) * sizeof(rf_running_t));
    if (!p->running)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    for (int32_t k = 0; k < s->n_running; k++) {
        int32_t ji = s->running[k];
        const s_job_t *j = &s->jobs[ji];
        rf_running_t *rg = &p->running[k];
        rf_running_init(rg);
        char name[48];
        snprintf(name, sizeof(name), "r%d", (int)ji);
        rg->name = rf_problem_strdup(p, name, strlen(name));
        rg->priority = s->t->jobs[ji].priority;
        rg->n_pod_sets = (j->full > 0) + (j->rest > 0);
        rg->pod_sets = rf_problem_alloc(p, (size_t)rg->n_pod_sets * sizeof(rf_run_pod_set_t));
        if (!rg->name || !rg->pod_sets)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        for (int32_t m = 0; m < rg->n_pod_sets; m++) {
            bool full = m == 0 && j->full > 0;
            int32_t lo = full ? 0 : j->full, hi = full ? j->full : j->n_pods;
            rf_run_pod_set_t *ps = &rg->pod_sets[m];
            ps->name = full ? "w" : "r";
            ps->requests = rf_problem_alloc(p, (size_t)p->n_resources * sizeof(int64_t));
            ps->placements = rf_problem_alloc(p, (size_t)(hi - lo) * sizeof(rf_run_placement_t));
            if (!ps->requests || !ps->placements)
                return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
            ps->requests[RF_RES_PODS] = 1;
            ps->requests[gpu] = full ? s->P : j->rest;
            for (int32_t q = lo; q < hi; q++) {
                int32_t e = 0;
                while (e < ps->n_placements && ps->placements[e].node != j->pod_node[q])
                    e++;
                if (e == ps->n_placements)
                    ps->placements[ps->n_placements++] = (rf_run_placement_t){j->pod_node[q], 0};
                ps->placements[e].count++;
            }
        }
    }
    return RF_OK;
}

/* Stop the running jobs the answer preempted: their GPUs are free, their pods unbound, their remaining work
 * kept (they resume from where they stopped: a checkpoint at the preemption, an assumption), and they wait again
 * in submission order. */
static void s_preempted(s_sim_t *s, const rf_answer_t *a, const int32_t *run_ids, int32_t n_run)
{
    for (int32_t k = 0; k < n_run && k < a->n_running; k++) {
        if (!a->running[k].preempted)
            continue;
        int32_t ji = run_ids[k];
        s_job_t *j = &s->jobs[ji];
        for (int32_t q = 0; q < j->n_pods; q++) {
            s->free[j->pod_node[q]] += s_pod_gpus(j, s->P, q);
            j->pod_node[q] = -1;
        }
        j->placed = 0;
        j->run_s += s->now - j->run_start;
        comm_job_fini(&j->comm);
        j->state = S_WAIT;
        j->queue_ts = s->now;
        s->r->preemptions++;
        s->r->jobs[ji].preempted++;
        int32_t keep = 0;
        for (int32_t i = 0; i < s->n_running; i++)
            if (s->running[i] != ji)
                s->running[keep++] = s->running[i];
        s->n_running = keep;
        int32_t pos = s->n_waiting;
        while (pos > 0 && s->waiting[pos - 1] > ji) {
            s->waiting[pos] = s->waiting[pos - 1];
            pos--;
        }
        s->waiting[pos] = ji;
        s->n_waiting++;
    }
}

static rf_status s_solve(s_sim_t *s, rf_problem_t *p, rf_answer_t **ans, rf_error_t *err)
{
    rf_solve_opts_t so;
    rf_solve_opts_default(&so);
    so.threads = 1;
    so.time_limit_ms = s->o->round_ms;
    static const char *const lib[SIM_N_POLICIES] = {NULL, NULL, "greedy", "ilp", "auto"};
    const rf_strategy_t *st = s->o->policy == SIM_KUBE    ? &bench_strategy_kube
                              : s->o->policy == SIM_KUEUE ? &bench_strategy_kueue
                                                          : rf_strategy_find(lib[s->o->policy]);
    if (!st)
        return rf_error_set(err, RF_EINTERNAL, "", "sim: strategy %s not found", sim_policy_name(s->o->policy));
    return rf_solve_with(st, p, &so, ans, err);
}

static rf_status s_check(const rf_problem_t *p, const rf_answer_t *a, const char *policy, rf_error_t *err)
{
    rf_check_report_t rep;
    memset(&rep, 0, sizeof(rep));
    RF_CALL(rf_check(p, a, &rep, err));
    bool ok = rep.feasible;
    const char *why = rep.n_violations > 0 && rep.violations[0] ? rep.violations[0] : "?";
    rf_status st =
        ok ? RF_OK : rf_error_set(err, RF_EINFEASIBLE, "", "sim: %s gave an infeasible answer: %s", policy, why);
    rf_check_report_fini(&rep);
    return st;
}

/* Bind the answer's pods; returns the pods bound in *bound. */
static void s_apply(s_sim_t *s, const rf_answer_t *a, const s_qpod_t *qp, int32_t *bound)
{
    bool kube = s->o->policy == SIM_KUBE;
    *bound = 0;
    for (int32_t g = 0; g < a->n_gangs; g++) {
        const rf_gang_answer_t *ga = &a->gangs[g];
        if (!ga->admitted)
            continue;
        int32_t ji = kube ? qp[g].job : s->waiting[g];
        s_job_t *j = &s->jobs[ji];
        int32_t next = kube ? qp[g].pod : 0;
        for (int32_t k = 0; k < a->problem->gangs[g].n_pod_sets; k++) {
            const rf_pod_set_answer_t *pa = &ga->pod_sets[k];
            for (int32_t e = 0; e < pa->n_placements; e++)
                for (int32_t c = 0; c < pa->placements[e].count; c++) {
                    int32_t node = pa->placements[e].node;
                    j->pod_node[next] = node;
                    s->free[node] -= s_pod_gpus(j, s->P, next);
                    next++;
                    j->placed++;
                    (*bound)++;
                    if (s->r->jobs[ji].first_pod < 0)
                        s->r->jobs[ji].first_pod = s->now;
                }
        }
    }
}

/* One scheduling round. *bound: pods bound; *started: jobs started or preempted (the running set changed). */
static rf_status s_round(s_sim_t *s, int32_t *bound, int32_t *started, rf_error_t *err)
{
    *bound = *started = 0;
    rf_problem_t *p = rf_problem_new();
    if (!p)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    int32_t gpu = rf_problem_resource(p, "nvidia.com/gpu");
    p->options.mode = RF_MODE_GREEDY;
    p->options.time_limit_ms = s->o->round_ms;
    p->options.threads = 1;
    p->options.admission = s->o->admission;
    p->options.value_resource_name = "nvidia.com/gpu";
    p->options.preemption = s->preempt ? RF_PREEMPT_LOWER_PRIORITY : RF_PREEMPT_NEVER;
    int32_t n_run = s->preempt ? s->n_running : 0;
    int32_t *run_ids = malloc((size_t)(n_run > 0 ? n_run : 1) * sizeof(int32_t));
    if (!run_ids) {
        rf_problem_destroy(&p);
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    }
    memcpy(run_ids, s->running, (size_t)n_run * sizeof(int32_t));
    s_qpod_t *qp = NULL;
    int32_t n_q = 0;
    rf_answer_t *a = NULL;
    rf_status st = gpu < 0 ? rf_error_set(err, RF_ENOMEM, "", "sim: out of memory") : s_nodes(s, p, gpu, err);
    if (st == RF_OK)
        st = s_gangs(s, p, gpu, &qp, &n_q, err);
    if (st == RF_OK && s->preempt)
        st = s_running(s, p, gpu, err);
    if (st == RF_OK) {
        rf_limits_t lim;
        rf_limits_default(&lim);
        lim.max_nodes = INT32_MAX;
        lim.max_gangs = INT32_MAX;
        lim.max_shape_cells = INT64_MAX;
        st = rf_problem_validate(p, &lim, err);
    }
    double t0 = rf_now_ms();
    if (st == RF_OK)
        st = s_solve(s, p, &a, err);
    double ms = rf_now_ms() - t0;
    s->r->solve_ms += ms;
    s->r->solve_ms_max = ms > s->r->solve_ms_max ? ms : s->r->solve_ms_max;
    s->r->rounds++;
    if (st == RF_OK)
        st = s_check(p, a, sim_policy_name(s->o->policy), err);
    if (st == RF_OK)
        s_apply(s, a, qp, bound);
    free(qp);
    /* start complete jobs; requeue the rest (kube: their pods re-enter the queue now) */
    int32_t keep = 0, partial = 0;
    for (int32_t i = 0; st == RF_OK && i < s->n_waiting; i++) {
        int32_t ji = s->waiting[i];
        s_job_t *j = &s->jobs[ji];
        if (j->placed == j->n_pods) {
            st = s_start(s, ji, err);
            (*started)++;
            continue;
        }
        if (j->placed > 0) {
            partial++;
            if (!j->was_partial)
                s->r->partial_jobs++;
            j->was_partial = true;
        }
        j->queue_ts = s->now;
        s->waiting[keep++] = ji;
    }
    if (st == RF_OK)
        s->n_waiting = keep;
    if (partial > s->r->partial_peak)
        s->r->partial_peak = partial;
    if (st == RF_OK && n_run > 0) { /* after the starts: the preempted go back to the queue */
        int32_t before = s->r->preemptions;
        s_preempted(s, a, run_ids, n_run);
        *started += s->r->preemptions - before; /* the running set changed */
    }
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    free(run_ids);
    return st;
}

static void s_finish(s_sim_t *s, int32_t ji)
{
    s_job_t *j = &s->jobs[ji];
    sim_job_result_t *jr = &s->r->jobs[ji];
    for (int32_t p = 0; p < j->n_pods; p++)
        s->free[j->pod_node[p]] += s_pod_gpus(j, s->P, p);
    j->state = S_DONE;
    jr->end = s->now;
    jr->finished = true;
    j->run_s += s->now - j->run_start;
    jr->sigma = j->run_s / s->t->jobs[ji].duration;
    comm_job_fini(&j->comm);
}

static void s_rerate(s_sim_t *s)
{
    for (int32_t i = 0; i < s->n_running; i++)
        s->cj[i] = &s->jobs[s->running[i]].comm;
    comm_update(s->comm, &s->topo, s->cj, s->n_running, s->scratch);
}

/* Advance running jobs to `t`, integrating the last sample. */
static void s_advance(s_sim_t *s, double t)
{
    double dt = t - s->now;
    if (dt <= 0)
        return;
    for (int32_t i = 0; i < s->n_running; i++) {
        s_job_t *j = &s->jobs[s->running[i]];
        j->work -= dt / j->comm.sigma;
    }
    s->now = t;
}

/* Summary metrics from the per-job results and the samples. */
static rf_status s_metrics(s_sim_t *s, rf_error_t *err)
{
    sim_result_t *r = s->r;
    double *jct = malloc((size_t)r->n_jobs * sizeof(double) + 1),
           *wait = malloc((size_t)r->n_jobs * sizeof(double) + 1);
    if (!jct || !wait) {
        free(jct);
        free(wait);
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    }
    int32_t n = 0;
    double first = INFINITY, last = 0, sig = 0;
    for (int32_t i = 0; i < r->n_jobs; i++) {
        const sim_job_result_t *jr = &r->jobs[i];
        first = jr->submit < first ? jr->submit : first;
        if (!jr->finished)
            continue;
        jct[n] = jr->end - jr->submit;
        wait[n] = jr->start - jr->submit;
        r->jct_mean += jct[n];
        r->wait_mean += wait[n];
        n++;
        last = jr->end > last ? jr->end : last;
        if (jr->hosts > 1) {
            r->multi_host++;
            sig += jr->sigma;
        }
        r->span_racks += jr->racks > 1;
        r->span_blocks += jr->blocks > 1;
    }
    r->finished = n;
    r->sigma_mean = r->multi_host ? sig / r->multi_host : 1.0;
    if (n > 0) {
        r->jct_mean /= n;
        r->wait_mean /= n;
        qsort(jct, (size_t)n, sizeof(double), s_cmp_double);
        qsort(wait, (size_t)n, sizeof(double), s_cmp_double);
        r->jct_p50 = s_quantile(jct, n, 0.5);
        r->jct_p99 = s_quantile(jct, n, 0.99);
        r->wait_p50 = s_quantile(wait, n, 0.5);
        r->wait_p99 = s_quantile(wait, n, 0.99);
    }
    free(jct);
    free(wait);
    double end = s->now > last ? s->now : last;
    r->makespan = isfinite(first) ? end - first : 0;
    double a = 0, e = 0, f = 0, idle = 0;
    for (int32_t k = 0; k + 1 < r->n_samples; k++) {
        double dt = r->samples[k + 1].t - r->samples[k].t;
        a += r->samples[k].alloc * dt;
        e += r->samples[k].eff * dt;
        f += r->samples[k].frag * dt;
        idle += r->samples[k].idle * dt;
    }
    double G = (double)s->c->total_gpus;
    if (r->makespan > 0) {
        r->u_alloc = a / (G * r->makespan);
        r->u_eff = e / (G * r->makespan);
        r->frag_mean = f / r->makespan;
    }
    r->idle_gpu_h = idle / 3600.0;
    return RF_OK;
}

static rf_status s_init(s_sim_t *s, rf_error_t *err)
{
    const sim_cluster_t *c = s->c;
    int32_t N = s->t->n;
    sim_cluster_topo(c, &s->topo);
    s->P = s->o->pod_gpus > 0 ? s->o->pod_gpus : c->g_host;
    if (s->P > c->g_host)
        return rf_error_set(err, RF_EINVAL, "", "sim: --pod-gpus %d exceeds the largest host (%d GPUs)", (int)s->P,
                            (int)c->g_host);
    int64_t n_dom = 0;
    for (int32_t l = 0; l < c->L; l++)
        n_dom += c->n_dom[l];
    s->jobs = calloc((size_t)N, sizeof(s_job_t));
    s->free = malloc((size_t)c->n_nodes * sizeof(int64_t));
    s->running = malloc((size_t)N * sizeof(int32_t));
    s->waiting = malloc((size_t)N * sizeof(int32_t));
    s->cj = malloc((size_t)N * sizeof(comm_job_t *));
    s->scratch = malloc((size_t)n_dom * sizeof(double));
    s->mark = calloc((size_t)c->n_nodes, sizeof(int32_t));
    s->r->jobs = calloc((size_t)N, sizeof(sim_job_result_t));
    if (!s->jobs || !s->free || !s->running || !s->waiting || !s->cj || !s->scratch || !s->mark || !s->r->jobs)
        return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
    s->r->n_jobs = N;
    for (int32_t i = 1; i < N && s->o->preempt; i++)
        s->preempt = s->preempt || s->t->jobs[i].priority != s->t->jobs[0].priority;
    for (int32_t n = 0; n < c->n_nodes; n++)
        s->free[n] = c->gpus[n];
    for (int32_t i = 0; i < N; i++) {
        const sim_job_t *tj = &s->t->jobs[i];
        s_job_t *j = &s->jobs[i];
        sim_job_result_t *jr = &s->r->jobs[i];
        j->full = tj->gpus / s->P;
        j->rest = tj->gpus % s->P;
        j->n_pods = j->full + (j->rest > 0);
        j->work = tj->duration;
        j->pod_node = malloc((size_t)j->n_pods * sizeof(int32_t));
        if (!j->pod_node)
            return rf_error_set(err, RF_ENOMEM, "", "sim: out of memory");
        for (int32_t p = 0; p < j->n_pods; p++)
            j->pod_node[p] = -1;
        *jr = (sim_job_result_t){.submit = tj->submit,
                                 .start = -1,
                                 .end = -1,
                                 .first_pod = -1,
                                 .gpus = tj->gpus,
                                 .pods = j->n_pods,
                                 .family = tj->family};
        if (tj->gpus > c->total_gpus) {
            j->state = S_DONE; /* can never run here */
            s->r->too_big++;
        }
    }
    return RF_OK;
}

static void s_fini(s_sim_t *s)
{
    for (int32_t i = 0; s->jobs && i < s->t->n; i++) {
        free(s->jobs[i].pod_node);
        if (s->jobs[i].state == S_RUN)
            comm_job_fini(&s->jobs[i].comm);
    }
    free(s->jobs);
    free(s->free);
    free(s->running);
    free(s->waiting);
    free(s->cj);
    free(s->scratch);
    free(s->mark);
}

/* The event loop (see the file comment). */
static rf_status s_loop(s_sim_t *s, rf_error_t *err)
{
    int32_t next = 0, done = 0, N = s->t->n;
    bool stuck = false;
    double stuck_since = 0;
    for (;;) {
        while (next < N && s->jobs[next].state == S_DONE)
            next++, done++; /* too big for the cluster */
        double t_arr = next < N ? s->t->jobs[next].submit : INFINITY, t_end = INFINITY;
        for (int32_t i = 0; i < s->n_running; i++) {
            const s_job_t *j = &s->jobs[s->running[i]];
            double te = s->now + (j->work > 0 ? j->work : 0) * j->comm.sigma;
            t_end = te < t_end ? te : t_end;
        }
        double t = t_arr < t_end ? t_arr : t_end;
        if (!isfinite(t) || (s->o->max_time > 0 && t > s->o->max_time))
            break;
        s_advance(s, t);
        int32_t keep = 0, ended = 0;
        for (int32_t i = 0; i < s->n_running; i++) {
            int32_t ji = s->running[i];
            if (s->jobs[ji].work * s->jobs[ji].comm.sigma <= S_DONE_EPS) {
                s_finish(s, ji);
                ended++;
                done++;
            } else {
                s->running[keep++] = ji;
            }
        }
        s->n_running = keep;
        int32_t arrived = 0;
        for (; next < N && s->t->jobs[next].submit <= s->now; next++) {
            if (s->jobs[next].state == S_DONE) {
                done++;
                continue;
            }
            s->jobs[next].state = S_WAIT;
            s->jobs[next].queue_ts = s->now;
            s->waiting[s->n_waiting++] = next;
            arrived++;
        }
        int32_t bound = 0, started = 0;
        if (s->n_waiting > 0)
            RF_CALL(s_round(s, &bound, &started, err));
        if (ended || started)
            s_rerate(s);
        RF_CALL(s_sample(s, err));
        if (s->o->progress)
            s->o->progress(s->o->progress_ctx, s->now, done, N);
        /* nothing runs and jobs wait after a round: only an arrival can change that; with partly
         * placed jobs holding GPUs, that is a deadlock */
        bool now_stuck = s->n_running == 0 && s->n_waiting > 0; /* the round bound what it could */
        bool partial = false;
        for (int32_t i = 0; now_stuck && i < s->n_waiting; i++)
            partial = partial || s->jobs[s->waiting[i]].placed > 0;
        if (now_stuck && partial && !stuck) {
            s->r->deadlocks++;
            stuck_since = s->now;
            stuck = true;
        } else if (!(now_stuck && partial) && stuck) {
            s->r->deadlock_s += s->now - stuck_since;
            stuck = false;
        }
        if (now_stuck && next >= N) {
            s->r->deadlocked_at_end = stuck;
            break;
        }
    }
    return RF_OK;
}

/* ---- public API ------------------------------------------------------------------------------------------------ */

static const char *const s_policy_names[SIM_N_POLICIES] = {"kube", "kueue", "greedy", "ilp", "auto"};

int32_t sim_policy_find(const char *name)
{
    for (int32_t i = 0; i < SIM_N_POLICIES; i++)
        if (strcmp(name, s_policy_names[i]) == 0)
            return i;
    return -1;
}

const char *sim_policy_name(sim_policy_id p)
{
    return p >= 0 && p < SIM_N_POLICIES ? s_policy_names[p] : "?";
}

void sim_opts_default(sim_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->policy = SIM_GREEDY;
    o->round_ms = 200;
    o->max_queue = 512;
    o->admission = RF_ADMIT_VALUE;
    o->preempt = true;
}

rf_status sim_run(const sim_cluster_t *c, const sim_trace_t *t, const comm_profile_t *comm, const sim_opts_t *o,
                  sim_result_t *out, rf_error_t *err)
{
    memset(out, 0, sizeof(*out));
    if (o->max_queue < 1 || o->round_ms < 1)
        return rf_error_set(err, RF_EINVAL, "", "sim: --max-queue and --round-ms must be >= 1");
    double t0 = rf_now_ms();
    s_sim_t s = {.c = c, .t = t, .comm = comm, .o = o, .r = out};
    rf_status st = s_init(&s, err);
    if (st == RF_OK)
        st = s_loop(&s, err);
    if (st == RF_OK) {
        for (int32_t i = 0; i < t->n; i++)
            out->unfinished += !out->jobs[i].finished && s.jobs[i].state != S_DONE;
        st = s_metrics(&s, err);
    }
    s_fini(&s);
    out->wall_ms = rf_now_ms() - t0;
    if (st != RF_OK)
        sim_result_fini(out);
    return st;
}

void sim_result_fini(sim_result_t *r)
{
    free(r->jobs);
    free(r->samples);
    memset(r, 0, sizeof(*r));
}
