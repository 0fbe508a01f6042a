/* service/stats.c: rackfitd's counters, latency histograms and metrics
 * families (service/stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

const char *const rf__op_names[RF__OP_COUNT] = {"solve",         "ping",         "stats",           "cluster.put",
                                                "cluster.patch", "cluster.info", "cluster.release", "cluster.delete"};
const char *const rf__class_names[RF__CLASS_COUNT] = {"greedy", "solver", "other"};
static const char *const s_modes[3] = {"auto", "greedy", "ilp"}; /* by rf_mode */
static const char *const s_lanes[2] = {"fast", "solver"};
static const char *const s_commit_outcomes[3] = {"committed", "retried", "stale"};

/* ------------------------------------------------------------- local methods */

static const char *s_outcome(int i)
{
    return i == 0 ? "ok" : rf_status_code((rf_status)-i);
}

static void s_hist_add(rf__class_stats_t *c, double ms)
{
    double us = ms * 1000.0;
    if (us < 1)
        us = 1;
    uint64_t u = (uint64_t)us;
    int p = 63 - __builtin_clzll(u); /* 2^p <= u */
    int sub = p >= 3 ? (int)((u >> (p - 3)) & 7) : (int)((u << (3 - p)) & 7);
    int b = p * RF__HIST_SUB + sub;
    if (b >= RF__HIST_N)
        b = RF__HIST_N - 1;
    atomic_fetch_add(&c->hist[b], 1);
    uint64_t prev = atomic_load(&c->max_us);
    while (u > prev && !atomic_compare_exchange_weak(&c->max_us, &prev, u))
        ;
}

/* The upper edge of bucket b, in ms. */
static double s_hist_edge(int b)
{
    int p = b / RF__HIST_SUB, sub = b % RF__HIST_SUB;
    double base = (double)(1ULL << p);
    return base * (1.0 + (sub + 1) / 8.0) / 1000.0;
}

static double s_percentile_raw(rf__class_stats_t *c, double q)
{
    uint64_t total = 0;
    uint64_t h[RF__HIST_N];
    for (int b = 0; b < RF__HIST_N; b++)
        total += (h[b] = atomic_load(&c->hist[b]));
    if (total == 0)
        return 0;
    uint64_t want = (uint64_t)(q * (double)total);
    if (want >= total)
        want = total - 1;
    uint64_t seen = 0;
    for (int b = 0; b < RF__HIST_N; b++) {
        seen += h[b];
        if (seen > want)
            return s_hist_edge(b);
    }
    return s_hist_edge(RF__HIST_N - 1);
}

static uint32_t s_hash_name(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h;
}

static int s_outcome_index(rf_status st)
{
    int i = -(int)st;
    return i >= 0 && i < RF__N_OUTCOMES ? i : -(int)RF_EINTERNAL;
}

/* Registers the families of the request path (cached series). */
static int s_request_families(rf__stats_t *s)
{
    static const char *const op_outcome[] = {"op", "outcome"};
    static const char *const cls[] = {"class"};
    static const char *const mode[] = {"mode"};
    static const char *const lane[] = {"lane"};
    static const char *const outcome[] = {"outcome"};
    double lat[20], ratio[11];
    rf__metrics_exp_bounds(0.0000625, 2, 20, lat); /* 62.5 us .. 33 s */
    for (int i = 0; i < 11; i++)
        ratio[i] = i == 0 ? 0.001 : i / 10.0;
    rf__metrics_t *m = s->m;
    rf__metric_t *req = rf__metrics_counter(
        m, "rackfit_requests_total", "Requests answered, by op and outcome (ok or the error code).", 2, op_outcome);
    rf__metric_t *dur = rf__metrics_histogram(
        m, "rackfit_request_duration_seconds",
        "Time from reading a request to its reply being ready, queueing included, by class (lane).", 1, cls, lat, 20);
    rf__metric_t *sol = rf__metrics_histogram(m, "rackfit_solve_duration_seconds",
                                              "Time rf_solve took, by requested mode.", 1, mode, lat, 20);
    rf__metric_t *gap = rf__metrics_histogram(
        m, "rackfit_solve_gap_ratio",
        "Per solve: (penalty - penalty_bound) / penalty of the answer (0 is proven compact), by mode.", 1, mode, ratio,
        11);
    rf__metric_t *tu =
        rf__metrics_histogram(m, "rackfit_solve_time_used_ratio",
                              "Per solve: solve time / options.time_limit_ms, by mode.", 1, mode, ratio, 11);
    rf__metric_t *busy = rf__metrics_counter(m, "rackfit_busy_total",
                                             "Requests answered busy because their lane was full, by lane.", 1, lane);
    rf__metric_t *com = rf__metrics_counter(
        m, "rackfit_commits_total",
        "Commit attempts: committed, retried (raced other commits, solved again), stale (given up).", 1, outcome);
    if (!req || !dur || !sol || !gap || !tu || !busy || !com)
        return -1;
    for (int o = 0; o <= RF__OP_COUNT; o++)
        for (int k = 0; k < RF__N_OUTCOMES; k++)
            if (!(s->by_op[o][k] = rf__metric_with(req, o < RF__OP_COUNT ? rf__op_names[o] : "unknown", s_outcome(k))))
                return -1;
    for (int c = 0; c < RF__CLASS_COUNT; c++)
        if (!(s->latency[c] = rf__metric_with(dur, rf__class_names[c])))
            return -1;
    for (int k = 0; k < 3; k++)
        if (!(s->solve_seconds[k] = rf__metric_with(sol, s_modes[k])) ||
            !(s->gap[k] = rf__metric_with(gap, s_modes[k])) || !(s->time_used[k] = rf__metric_with(tu, s_modes[k])) ||
            !(s->commit_out[k] = rf__metric_with(com, s_commit_outcomes[k])))
            return -1;
    for (int l = 0; l < 2; l++)
        if (!(s->busy_lane[l] = rf__metric_with(busy, s_lanes[l])))
            return -1;
    return 0;
}

/* The families set at scrape time (service/ops.c's collect callback) and
 * the placement-quality families. */
static int s_state_families(rf__stats_t *s)
{
    static const char *const lane[] = {"lane"};
    static const char *const cluster[] = {"cluster"};
    static const char *const cl_level[] = {"cluster", "level"};
    static const char *const level[] = {"level"};
    double dom[8] = {1, 2, 3, 4, 6, 8, 16, 32}, pen[10];
    rf__metrics_exp_bounds(0.25, 2, 10, pen);
    rf__metrics_t *m = s->m;
    s->f_queue_depth = rf__metrics_gauge(m, "rackfit_queue_depth", "Requests waiting in a lane's queue.", 1, lane);
    s->f_queue_bytes = rf__metrics_gauge(m, "rackfit_queue_bytes", "Bytes of the requests waiting in a lane.", 1, lane);
    s->f_queue_cap = rf__metrics_gauge(m, "rackfit_queue_capacity", "Requests a lane's queue holds at most.", 1, lane);
    s->f_queue_cap_bytes =
        rf__metrics_gauge(m, "rackfit_queue_capacity_bytes", "Bytes a lane's queue holds at most.", 1, lane);
    s->f_lane_workers = rf__metrics_gauge(m, "rackfit_lane_workers", "Worker threads of a lane.", 1, lane);
    s->f_budget = rf__metrics_gauge(m, "rackfit_solver_threads", "The server-wide budget of solver threads.", 0, NULL);
    s->f_budget_used =
        rf__metrics_gauge(m, "rackfit_solver_threads_in_use", "Solver threads held by solves now.", 0, NULL);
    s->f_uptime = rf__metrics_gauge(m, "rackfit_uptime_seconds", "Seconds since rackfitd started.", 0, NULL);
    s->f_clusters = rf__metrics_gauge(m, "rackfit_stored_clusters", "Clusters in the store.", 0, NULL);
    s->f_version = rf__metrics_gauge(m, "rackfit_cluster_version", "A stored cluster's current version.", 1, cluster);
    s->f_nodes = rf__metrics_gauge(m, "rackfit_cluster_nodes", "Nodes of a stored cluster.", 1, cluster);
    s->f_commits_open = rf__metrics_gauge(m, "rackfit_commits_open",
                                          "Live commit entries (solve, gang, node) of a stored cluster.", 1, cluster);
    s->f_commits_expired = rf__metrics_counter(m, "rackfit_commits_expired_total",
                                               "Commit entries that expired unconfirmed (all clusters).", 0, NULL);
    s->f_gangs = rf__metrics_counter(m, "rackfit_gangs_total", "Gangs solved, by result (admitted, rejected).", 1,
                                     (const char *const[]){"result"});
    s->f_gang_domains = rf__metrics_histogram(
        m, "rackfit_gang_domains", "Per admitted gang: the distinct domains it uses at each level (1 is compact).", 1,
        level, dom, 8);
    s->f_gang_penalty = rf__metrics_histogram(
        m, "rackfit_gang_penalty", "Per admitted gang: its topology penalty (the contract's objective term).", 0, NULL,
        pen, 10);
    s->f_free_gpus = rf__metrics_gauge(m, "rackfit_cluster_free_gpus",
                                       "Free units of the value resource (GPUs) after the latest solve.", 1, cluster);
    s->f_stranded_gpus = rf__metrics_gauge(
        m, "rackfit_cluster_stranded_gpus",
        "Free GPUs on nodes where no pod of any gang the latest solve rejected fits (fragmentation).", 1, cluster);
    s->f_free_hosts =
        rf__metrics_gauge(m, "rackfit_cluster_free_hosts", "Schedulable nodes with nothing used.", 1, cluster);
    s->f_free_domains = rf__metrics_gauge(m, "rackfit_cluster_free_domains",
                                          "Domains (racks, blocks, ...) whose nodes are all wholly free.", 2, cl_level);
    bool ok = s->f_queue_depth && s->f_queue_bytes && s->f_queue_cap && s->f_queue_cap_bytes && s->f_lane_workers &&
              s->f_budget && s->f_budget_used && s->f_uptime && s->f_clusters && s->f_version && s->f_nodes &&
              s->f_commits_open && s->f_commits_expired && s->f_gangs && s->f_gang_domains && s->f_gang_penalty &&
              s->f_free_gpus && s->f_stranded_gpus && s->f_free_hosts && s->f_free_domains;
    return ok ? 0 : -1;
}

static int s_cmp_str(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    if (!x || !y)
        return (x != NULL) - (y != NULL);
    return strcmp(x, y);
}

/* ------------------------------------------------------------------ interface */

int rf__stats_init(rf__stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (pthread_mutex_init(&s->frag_mu, NULL) != 0)
        return -1;
    s->m = rf__metrics_new();
    if (!s->m || s_request_families(s) != 0 || s_state_families(s) != 0) {
        rf__metrics_destroy(&s->m);
        pthread_mutex_destroy(&s->frag_mu);
        return -1;
    }
    return 0;
}

void rf__stats_fini(rf__stats_t *s)
{
    rf__metrics_destroy(&s->m);
    pthread_mutex_destroy(&s->frag_mu);
}

void rf__stats_cluster_solved(rf__stats_t *s, const char *cluster, const rf_problem_t *p, const rf_answer_t *a)
{
    if (pthread_mutex_trylock(&s->frag_mu) != 0)
        return;
    const char *one[1] = {cluster};
    uint32_t h = s_hash_name(one[0]) | 1u; /* 0 marks a free slot */
    double now = rf_now_ms();
    int slot = (int)(h % RF__FRAG_SLOTS);
    bool due = s->frag_hash[slot] != h || now - s->frag_ms[slot] >= RF__FRAG_INTERVAL_MS;
    if (due) {
        s->frag_hash[slot] = h;
        s->frag_ms[slot] = now;
    }
    pthread_mutex_unlock(&s->frag_mu);
    if (due)
        rf__stats_fragmentation(s, cluster, p, a);
}

void rf__stats_request(rf__stats_t *s, rf__op_id_t op, rf__class_t cls, rf_status outcome, double ms)
{
    atomic_fetch_add(&s->requests, 1);
    if (outcome != RF_OK) {
        atomic_fetch_add(&s->errors, 1);
        atomic_fetch_add(&s->cls[cls].errors, 1);
    }
    atomic_fetch_add(&s->cls[cls].count, 1);
    s_hist_add(&s->cls[cls], ms);
    rf__counter_add(s->by_op[op <= RF__OP_COUNT ? op : RF__OP_UNKNOWN][s_outcome_index(outcome)], 1);
    rf__histogram_observe(s->latency[cls], ms / 1000.0);
}

void rf__stats_busy(rf__stats_t *s, int lane)
{
    atomic_fetch_add(&s->requests, 1);
    atomic_fetch_add(&s->busy, 1);
    atomic_fetch_add(&s->errors, 1);
    rf__counter_add(s->busy_lane[lane ? 1 : 0], 1);
    rf__counter_add(s->by_op[RF__OP_UNKNOWN][s_outcome_index(RF_EBUSY)], 1);
}

void rf__stats_refused(rf__stats_t *s, rf_status outcome)
{
    atomic_fetch_add(&s->requests, 1);
    atomic_fetch_add(&s->errors, 1);
    rf__counter_add(s->by_op[RF__OP_UNKNOWN][s_outcome_index(outcome)], 1);
}

void rf__stats_solve(rf__stats_t *s, const rf_problem_t *p, const rf_answer_t *a, double solve_s)
{
    int mode = p->options.mode >= 0 && p->options.mode < 3 ? (int)p->options.mode : 0;
    rf__histogram_observe(s->solve_seconds[mode], solve_s);
    const rf_summary_t *sm = &a->summary;
    if (sm->penalty > 0)
        rf__histogram_observe(s->gap[mode], fmax(0.0, (sm->penalty - sm->penalty_bound) / sm->penalty));
    else
        rf__histogram_observe(s->gap[mode], 0.0);
    if (p->options.time_limit_ms > 0)
        rf__histogram_observe(s->time_used[mode], sm->solve_ms / (double)p->options.time_limit_ms);
    int32_t admitted = 0;
    for (int32_t g = 0; g < a->n_gangs; g++) {
        const rf_gang_answer_t *ga = &a->gangs[g];
        if (!ga->admitted)
            continue;
        admitted++;
        for (int32_t l = 0; l < p->n_levels && l < RF_MAX_LEVELS; l++) {
            /* the level names of one cluster rarely change: one lookup per
             * solve per level, cached by pointer equality of the name */
            rf__histogram_observe(rf__metric_with(s->f_gang_domains, p->levels[l]), (double)ga->domains[l]);
        }
        rf__histogram_observe(rf__metric_series(s->f_gang_penalty, NULL), ga->penalty);
    }
    rf__counter_add(rf__metric_with(s->f_gangs, "admitted"), admitted);
    rf__counter_add(rf__metric_with(s->f_gangs, "rejected"), a->n_gangs - admitted);
}

void rf__stats_commit(rf__stats_t *s, int outcome)
{
    if (outcome == 0)
        atomic_fetch_add(&s->commits, 1);
    if (outcome == 1)
        atomic_fetch_add(&s->commit_retries, 1);
    rf__counter_add(s->commit_out[outcome >= 0 && outcome < 3 ? outcome : 2], 1);
}

void rf__stats_fragmentation(rf__stats_t *s, const char *cluster, const rf_problem_t *p, const rf_answer_t *a)
{
    int32_t N = p->n_nodes, R = p->n_resources, v = p->options.value_resource;
    int64_t *used = malloc(((size_t)N * (size_t)R + 1) * sizeof *used);
    const char **vals = malloc(((size_t)N + 1) * sizeof *vals);
    bool *free_node = malloc(((size_t)N + 1) * sizeof *free_node);
    if (!used || !vals || !free_node)
        goto done;
    for (int32_t n = 0; n < N; n++)
        memcpy(used + (size_t)n * R, p->nodes[n].used, (size_t)R * sizeof *used);
    for (int32_t g = 0; g < a->n_gangs; g++)
        for (int32_t j = 0; a->gangs[g].admitted && j < p->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_answer_t *pa = &a->gangs[g].pod_sets[j];
            for (int32_t k = 0; k < pa->n_placements; k++)
                for (int32_t r = 0; r < R; r++)
                    used[(size_t)pa->placements[k].node * R + r] +=
                        p->gangs[g].pod_sets[j].requests[r] * pa->placements[k].count;
        }
    int64_t free_gpus = 0, stranded = 0, hosts = 0;
    for (int32_t n = 0; n < N; n++) {
        const rf_node_t *nd = &p->nodes[n];
        const int64_t *u = used + (size_t)n * R;
        bool empty = !nd->unschedulable;
        for (int32_t r = 0; r < R && empty; r++)
            empty = u[r] == 0;
        free_node[n] = empty;
        hosts += empty;
        int64_t fg = v >= 0 ? nd->allocatable[v] - u[v] : 0;
        if (fg <= 0 || nd->unschedulable)
            continue;
        free_gpus += fg;
        /* stranded unless one pod of some rejected gang's pod set fits here */
        bool usable = false, any_rejected = false;
        for (int32_t g = 0; g < a->n_gangs && !usable; g++) {
            if (a->gangs[g].admitted)
                continue;
            any_rejected = true;
            for (int32_t j = 0; j < p->gangs[g].n_pod_sets && !usable; j++) {
                const rf_pod_set_t *ps = &p->gangs[g].pod_sets[j];
                bool fits = ps->requests[v] > 0 && rf_node_admits(p, n, ps);
                for (int32_t r = 0; r < R && fits; r++)
                    fits = ps->requests[r] <= nd->allocatable[r] - u[r];
                usable = fits;
            }
        }
        if (any_rejected && !usable)
            stranded += fg;
    }
    rf__gauge_set(rf__metric_with(s->f_free_gpus, cluster), (double)free_gpus);
    rf__gauge_set(rf__metric_with(s->f_stranded_gpus, cluster), (double)stranded);
    rf__gauge_set(rf__metric_with(s->f_free_hosts, cluster), (double)hosts);
    /* whole free domains per level above the host: the distinct domain
     * names of the free nodes that no node in use also carries */
    for (int32_t l = 0; l < p->n_levels; l++) {
        if (strcmp(p->levels[l], RF_HOSTNAME_LABEL) == 0)
            continue;
        int32_t nb = 0, na = 0;
        for (int32_t n = 0; n < N; n++)
            if (!free_node[n])
                vals[nb++] = rf_node_label(&p->nodes[n], p->levels[l]);
        qsort(vals, (size_t)nb, sizeof *vals, s_cmp_str);
        int64_t whole = 0;
        const char **fr = malloc(((size_t)N + 1) * sizeof *fr);
        if (!fr)
            break;
        for (int32_t n = 0; n < N; n++)
            if (free_node[n])
                fr[na++] = rf_node_label(&p->nodes[n], p->levels[l]);
        qsort(fr, (size_t)na, sizeof *fr, s_cmp_str);
        for (int32_t i = 0; i < na; i++) {
            if (!fr[i] || (i > 0 && s_cmp_str(&fr[i], &fr[i - 1]) == 0))
                continue;
            if (!bsearch(&fr[i], vals, (size_t)nb, sizeof *vals, s_cmp_str))
                whole++;
        }
        free(fr);
        rf__gauge_set(rf__metric_with(s->f_free_domains, cluster, p->levels[l]), (double)whole);
    }
done:
    free(used);
    free(vals);
    free(free_node);
}

double rf__stats_percentile(rf__class_stats_t *c, double q)
{
    double v = s_percentile_raw(c, q), mx = (double)atomic_load(&c->max_us) / 1000.0;
    return v < mx ? v : mx;
}
