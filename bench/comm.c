/* bench/comm.c: the simulator's communication model (comm.h; the formulas
 * and their sources are in docs/simulator.md).
 *
 * A job is reduced once, when it starts, to its communication groups (the
 * data-parallel ring; for a TP x PP x DP job also its slowest tensor-parallel
 * group and its widest pipeline boundary) and to the ring traffic it sends
 * through each uplink. comm_update then re-rates every running job whenever
 * the set of running jobs changes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "grow.h"

/* ---- local methods --------------------------------------------------------------------------------------------- */

static const comm_family_t s_families[COMM_N_FAMILIES] = {
    /* ResNet-50, 25.6 M fp32 parameters, 52 ms per sync at 256 images per GPU (H100 = A100 / 2) */
    [COMM_CNN] = {.name = "cnn-dp", .v_bytes = 102.4e6, .t_comp = 0.052, .x_dp = 1.0, .bucket = 25e6},
    /* BERT-large, 340 M fp32 parameters, 184 ms per micro-batch, one sync per micro-batch */
    [COMM_BERT] = {.name = "bert-dp", .v_bytes = 1.36e9, .t_comp = 0.184, .x_dp = 1.0, .bucket = 25e6},
    /* GPT-7B, bf16 all-reduce of 6.7 B parameters, 0.82 s per sync at 8,192 tokens per GPU */
    [COMM_LLM_DP] = {.name = "llm-dp", .v_bytes = 13.4e9, .t_comp = 0.82, .x_dp = 1.0, .bucket = 200e6},
    /* 70B, TP8 x PP8 x DP: 8.6 s per step on 512 GPUs; DP 2.19 GB at TP8 x PP8, TP 343 GB at PP8,
     * PP 17 GB per boundary per step (both at DP8; see S_V_TP_REF) */
    [COMM_LLM_3D] = {.name = "llm-3d",
                     .v_bytes = 2.19e9,
                     .t_comp = 8.6,
                     .ref_gpus = 512,
                     .x_dp = 1.0,
                     .bucket = 200e6,
                     .tp = 8,
                     .pp_max = 8,
                     .v_pp = 17.2e9,
                     .x_pp = 0.1},
};

/* 3D: tensor-parallel bytes per TP group per step at PP8 x DP8; like the pipeline's bytes per boundary
 * (v_pp, at DP8) they scale with the micro-batches per replica, i.e. with 8 / dp, and TP's with 8 / pp */
#define S_V_TP_REF 343e9

/* The coarsest level (as "up") on which two nodes differ; -1 when equal. */
static int32_t s_span2(const comm_topo_t *t, int32_t a, int32_t b)
{
    if (a == b)
        return -1;
    for (int32_t l = 0; l < t->L - 1; l++)
        if (t->dom[(size_t)l * (size_t)t->n_nodes + (size_t)a] != t->dom[(size_t)l * (size_t)t->n_nodes + (size_t)b])
            return t->L - 1 - l;
    return 0;
}

static int s_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Reduce the group of ranks rank_node[idx[0..n-1]]; `tmp` holds n ints. */
static comm_group_t s_group(const comm_topo_t *t, const int32_t *rank_node, const int32_t *idx, int32_t n, int32_t *tmp)
{
    comm_group_t g = {.n = n, .hosts = 0, .g_min = n, .span_up = -1};
    for (int32_t i = 0; i < n; i++)
        tmp[i] = rank_node[idx[i]];
    qsort(tmp, (size_t)n, sizeof(int32_t), s_cmp_i32);
    for (int32_t i = 0; i < n;) {
        int32_t j = i;
        while (j < n && tmp[j] == tmp[i])
            j++;
        g.hosts++;
        if (j - i < g.g_min)
            g.g_min = j - i;
        int32_t sp = s_span2(t, tmp[0], tmp[i]);
        if (sp > g.span_up)
            g.span_up = sp;
        i = j;
    }
    return g;
}

/* Add the uplink traffic of a ring over rank_node[idx[0..n-1]] (cyclic),
 * `channels` NIC channels per edge. */
static rf_status s_ring_edges(comm_job_t *job, const comm_topo_t *t, const int32_t *rank_node, const int32_t *idx,
                              int32_t n, double channels, int32_t *cap)
{
    if (n < 2)
        return RF_OK;
    for (int32_t i = 0; i < n; i++) {
        int32_t a = rank_node[idx[i]], b = rank_node[idx[(i + 1) % n]];
        if (a == b)
            continue;
        for (int32_t l = 0; l < t->L - 1; l++) {
            int32_t da = t->dom[(size_t)l * (size_t)t->n_nodes + (size_t)a];
            if (da == t->dom[(size_t)l * (size_t)t->n_nodes + (size_t)b])
                continue;
            int32_t e = 0;
            while (e < job->n_edges && (job->edges[e].level != l || job->edges[e].dom != da))
                e++;
            if (e == job->n_edges) {
                if (job->n_edges == *cap) {
                    comm_edge_t *ne = rf__grow(job->edges, cap, (int64_t)job->n_edges + 1, 8, sizeof(*ne));
                    if (!ne)
                        return RF_ENOMEM;
                    job->edges = ne;
                }
                job->edges[e] = (comm_edge_t){.level = l, .dom = da, .weight = 0};
                job->n_edges++;
            }
            job->edges[e].weight += channels;
        }
    }
    return RF_OK;
}

/* Ring all-reduce of V bytes over group g at load factor kappa (seconds). */
static double s_ring(const comm_profile_t *p, const comm_group_t *g, double v, double bucket, double kappa)
{
    if (g->n < 2 || v <= 0)
        return 0;
    double n = g->n, h = g->hosts;
    double bw = g->hosts <= 1 ? p->b_intra : fmin(p->b_intra, (double)g->g_min * p->nu / kappa);
    double lat = p->lam[g->span_up < 0 ? 0 : g->span_up];
    double steps = ceil(v / bucket);
    return 2.0 * (n - 1) / n * v / (bw * 1e9) + steps * (p->a0 + 2.0 * (n - h) * p->lam_intra + 2.0 * (h - 1) * lat);
}

static double s_t_comp(const comm_profile_t *p, const comm_job_t *job)
{
    const comm_family_t *f = &p->fam[job->family];
    return f->ref_gpus > 0 ? f->t_comp * (double)f->ref_gpus / (double)job->gpus : f->t_comp;
}

/* The job's groups at a packed placement: hosts filled one after another in one rack. */
static void s_packed(const comm_job_t *job, comm_group_t *dp, comm_group_t *tp, comm_group_t *pp)
{
    int32_t G = job->g_host;
    if (job->family != COMM_LLM_3D) {
        int32_t h = (job->gpus + G - 1) / G;
        *dp = (comm_group_t){.n = job->gpus,
                             .hosts = h,
                             .g_min = h > 1 && job->gpus % G ? job->gpus % G : (h > 1 ? G : job->gpus),
                             .span_up = h > 1 ? 0 : -1};
        return;
    }
    /* TP groups inside hosts when tp divides the host (else split as packing splits them) */
    int32_t tp_hosts = job->tp <= G ? 1 : (job->tp + G - 1) / G;
    *tp = (comm_group_t){
        .n = job->tp, .hosts = tp_hosts, .g_min = tp_hosts > 1 ? G : job->tp, .span_up = tp_hosts > 1 ? 0 : -1};
    int32_t per_host = G / job->tp > 0 ? G / job->tp : 1; /* TP groups per host */
    int32_t dp_hosts = job->dp <= per_host ? 1 : job->dp;
    *dp = (comm_group_t){
        .n = job->dp, .hosts = dp_hosts, .g_min = dp_hosts > 1 ? 1 : job->dp, .span_up = dp_hosts > 1 ? 0 : -1};
    *pp = (comm_group_t){.n = 2, .hosts = job->pp > 1 ? 2 : 1, .g_min = 1, .span_up = job->pp > 1 ? 0 : -1};
}

static double s_iter(const comm_profile_t *p, const comm_job_t *job, const comm_group_t *dp, const comm_group_t *tp,
                     const comm_group_t *pp, double kappa)
{
    const comm_family_t *f = &p->fam[job->family];
    double t = s_t_comp(p, job);
    if (job->family != COMM_LLM_3D)
        return t + f->x_dp * s_ring(p, dp, f->v_bytes, f->bucket, kappa);
    double v_dp = f->v_bytes * 64.0 / (double)(job->tp * job->pp);
    double v_tp = S_V_TP_REF * 8.0 / (double)job->pp * 8.0 / (double)job->dp;
    comm_group_t in_host = {.n = job->tp, .hosts = 1, .g_min = job->tp, .span_up = -1};
    double tp_excess = s_ring(p, tp, v_tp, f->bucket, kappa) - s_ring(p, &in_host, v_tp, f->bucket, 1.0);
    double t_pp = 0;
    if (job->pp > 1) {
        double bw = pp->hosts <= 1 ? p->b_intra : fmin(p->b_intra, p->nu / kappa);
        t_pp =
            f->v_pp * 8.0 / (double)job->dp / (double)job->tp / (bw * 1e9) + p->lam[pp->span_up < 0 ? 0 : pp->span_up];
    }
    return t + (tp_excess > 0 ? tp_excess : 0) + f->x_dp * s_ring(p, dp, v_dp, f->bucket, kappa) + f->x_pp * t_pp;
}

/* 3D: degrees, groups and ring traffic from GPU ranks (rank = t + tp * (k + dp * s)). */
static rf_status s_init_3d(comm_job_t *job, const comm_topo_t *t, const int32_t *rank_node, int32_t *idx, int32_t *tmp,
                           int32_t *cap)
{
    int32_t tp = job->tp, pp = job->pp, dp = job->dp;
    double worst = -1;
    for (int32_t i = 0; i < pp * dp; i++) { /* tensor-parallel groups: consecutive ranks */
        for (int32_t r = 0; r < tp; r++)
            idx[r] = i * tp + r;
        comm_group_t g = s_group(t, rank_node, idx, tp, tmp);
        double w = (double)g.hosts * 1e6 / (double)g.g_min + g.span_up;
        if (w > worst) {
            worst = w;
            job->tp_g = g;
        }
    }
    worst = -1;
    for (int32_t s = 0; s < pp; s++)
        for (int32_t r = 0; r < tp; r++) { /* data-parallel rings, one per (stage, tp rank) */
            for (int32_t k = 0; k < dp; k++)
                idx[k] = r + tp * (k + dp * s);
            comm_group_t g = s_group(t, rank_node, idx, dp, tmp);
            double w = g.hosts <= 1 ? 0 : 1e6 / (double)g.g_min + g.span_up;
            if (w > worst) {
                worst = w;
                job->dp_g = g;
            }
            RF_CALL(s_ring_edges(job, t, rank_node, idx, dp, 1.0, cap));
        }
    job->pp_g = (comm_group_t){.n = 2, .hosts = 1, .g_min = 1, .span_up = -1};
    for (int32_t s = 0; s + 1 < pp; s++)
        for (int32_t k = 0; k < dp * tp; k++) {
            int32_t a = rank_node[k + tp * dp * s], b = rank_node[k + tp * dp * (s + 1)];
            int32_t sp = s_span2(t, a, b);
            if (a != b)
                job->pp_g.hosts = 2;
            if (sp > job->pp_g.span_up)
                job->pp_g.span_up = sp;
        }
    return RF_OK;
}

/* ---- public API ------------------------------------------------------------------------------------------------ */

void comm_profile_default(comm_profile_t *p)
{
    memset(p, 0, sizeof(*p));
    p->on = true;
    p->contention = true;
    p->b_intra = 370;
    p->nu = 47;
    p->a0 = 8.4e-6;
    p->lam_intra = 3.4e-6;
    for (int32_t u = 0; u < RF_MAX_LEVELS; u++) {
        p->lam[u] = (14.0 + u) * 1e-6;
        p->oversub[u] = 1.0;
        p->kappa_floor[u] = 1.0;
    }
    p->kappa_floor[1] = 1.1; /* across racks in a block: ECMP collisions (Crux +11 %) */
    p->kappa_floor[2] = 1.1;
    p->oversub[2] = 7.0; /* block uplinks: Meta's 7:1 above a pod */
    for (int32_t u = 3; u < RF_MAX_LEVELS; u++) {
        p->kappa_floor[u] = 1.1;
        p->oversub[u] = 7.0;
    }
    memcpy(p->fam, s_families, sizeof(s_families));
}

int32_t comm_family_find(const char *name)
{
    for (int32_t f = 0; f < COMM_N_FAMILIES; f++)
        if (strcmp(s_families[f].name, name) == 0)
            return f;
    return -1;
}

const char *comm_family_name(comm_family_id f)
{
    return f >= 0 && f < COMM_N_FAMILIES ? s_families[f].name : "?";
}

rf_status comm_job_init(comm_job_t *job, const comm_profile_t *p, const comm_topo_t *topo, comm_family_id family,
                        int32_t g_host, const int32_t *pod_node, const int32_t *pod_gpus, int32_t n_pods,
                        rf_error_t *err)
{
    memset(job, 0, sizeof(*job));
    int64_t n = 0;
    for (int32_t i = 0; i < n_pods; i++)
        n += pod_gpus[i];
    if (n <= 0 || g_host <= 0)
        return rf_error_set(err, RF_EINVAL, "", "communication model: a job with no GPUs");
    int32_t *rank_node = malloc((size_t)n * sizeof(int32_t));
    int32_t *idx = malloc((size_t)n * sizeof(int32_t));
    int32_t *tmp = malloc((size_t)n * sizeof(int32_t));
    if (!rank_node || !idx || !tmp) {
        free(rank_node);
        free(idx);
        free(tmp);
        return rf_error_set(err, RF_ENOMEM, "", "communication model: out of memory");
    }
    for (int32_t i = 0, r = 0; i < n_pods; i++)
        for (int32_t k = 0; k < pod_gpus[i]; k++)
            rank_node[r++] = pod_node[i];
    job->gpus = (int32_t)n;
    job->g_host = g_host;
    job->family = family;
    const comm_family_t *f = &p->fam[COMM_LLM_3D];
    if (family == COMM_LLM_3D && (f->tp <= 0 || n % f->tp != 0))
        job->family = COMM_LLM_DP;
    for (int32_t r = 0; r < n; r++)
        idx[r] = r;
    comm_group_t whole = s_group(topo, rank_node, idx, (int32_t)n, tmp);
    job->hosts = whole.hosts;
    job->g_min = whole.g_min;
    job->span_up = whole.span_up;
    int32_t cap = 0;
    rf_status st = RF_OK;
    if (job->family == COMM_LLM_3D) {
        job->tp = f->tp;
        int32_t groups = (int32_t)(n / f->tp);
        job->pp = 1;
        while (job->pp * 2 <= f->pp_max && groups % (job->pp * 2) == 0)
            job->pp *= 2;
        job->dp = groups / job->pp;
        st = s_init_3d(job, topo, rank_node, idx, tmp, &cap);
    } else {
        job->dp_g = whole;
        st = s_ring_edges(job, topo, rank_node, idx, (int32_t)n, (double)whole.g_min, &cap);
    }
    free(rank_node);
    free(idx);
    free(tmp);
    if (st != RF_OK) {
        comm_job_fini(job);
        return rf_error_set(err, st, "", "communication model: out of memory");
    }
    comm_group_t dp, tp, pp;
    memset(&tp, 0, sizeof(tp));
    memset(&pp, 0, sizeof(pp));
    s_packed(job, &dp, &tp, &pp);
    job->t_star = s_iter(p, job, &dp, &tp, &pp, 1.0);
    job->kappa = 1.0;
    job->sigma = p->on ? comm_iter_time(p, job, 1.0) / job->t_star : 1.0;
    return RF_OK;
}

void comm_job_fini(comm_job_t *job)
{
    free(job->edges);
    job->edges = NULL;
    job->n_edges = 0;
}

double comm_iter_time(const comm_profile_t *p, const comm_job_t *job, double kappa)
{
    return s_iter(p, job, &job->dp_g, &job->tp_g, &job->pp_g, kappa);
}

void comm_update(const comm_profile_t *p, const comm_topo_t *topo, comm_job_t *const *jobs, int32_t n_jobs,
                 double *scratch)
{
    int32_t off[RF_MAX_LEVELS + 1];
    off[0] = 0;
    for (int32_t l = 0; l < topo->L; l++)
        off[l + 1] = off[l] + topo->n_dom[l];
    for (int32_t pass = 0; pass < 2; pass++) {
        memset(scratch, 0, (size_t)off[topo->L] * sizeof(double));
        for (int32_t j = 0; p->on && p->contention && j < n_jobs; j++) {
            const comm_job_t *job = jobs[j];
            double T = comm_iter_time(p, job, job->kappa);
            double duty = T > 0 ? 1.0 - s_t_comp(p, job) / T : 0;
            for (int32_t e = 0; e < job->n_edges; e++)
                scratch[off[job->edges[e].level] + job->edges[e].dom] += job->edges[e].weight * p->nu * duty;
        }
        for (int32_t j = 0; j < n_jobs; j++) {
            comm_job_t *job = jobs[j];
            double k = job->span_up >= 1 ? p->kappa_floor[job->span_up] : 1.0;
            for (int32_t e = 0; p->contention && e < job->n_edges; e++) {
                int32_t l = job->edges[e].level, up = topo->L - 1 - l;
                double capacity = (double)topo->dom_gpus[l][job->edges[e].dom] * p->nu / p->oversub[up];
                double load = capacity > 0 ? scratch[off[l] + job->edges[e].dom] / capacity : 1.0;
                if (load > k)
                    k = load;
            }
            job->kappa = k;
            job->sigma = p->on ? comm_iter_time(p, job, k) / job->t_star : 1.0;
        }
    }
}
