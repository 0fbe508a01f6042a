/* bench/comm.h: the simulator's communication model (docs/simulator.md,
 * "Communication model"): how much slower a training job runs on the
 * placement it got than on the most compact placement of the same pods.
 *
 * A job's iteration time is its compute time plus the exposed part of its
 * collectives: T_iter = T_comp + x * T_comm(P). A ring all-reduce of V bytes
 * over n ranks on H hosts runs at the bus bandwidth of the slowest link its
 * group spans: NVLink inside one host (b_intra), else min(b_intra,
 * g_min * nu / kappa), where g_min is the fewest GPUs of the group on one host,
 * nu the NIC bandwidth per GPU and kappa the worst load factor of the uplinks
 * the ring's edges cross (at least the level's floor). Uplink load comes from
 * the other running jobs whose rings cross the same uplink (contention): a
 * level-l domain's uplink carries gpus(d) * nu / oversub[l], and each job
 * crossing it asks channels * nu * duty per ring edge leaving the domain.
 * The stretch sigma = T_iter(P) / T_iter(P*) (P*: the same pods packed, one
 * rack, no contention) turns the trace's duration into the time the job
 * takes here. The model never reads rackfit's level_costs or bandwidth.
 *
 * Levels are the cluster's, coarsest first, the last being the host; "up"
 * counts levels above the host: up 1 = racks (level L-2), up 2 = blocks (L-3).
 * Invariants: sigma >= 1 for the shapes the simulator builds (pods of at most
 * one host, P* packed); sigma == 1 for a job on one host. */
#ifndef RACKFIT_BENCH_COMM_H
#define RACKFIT_BENCH_COMM_H

#include <stdbool.h>
#include <stdint.h>

#include "rackfit/problem.h"

typedef enum { COMM_CNN = 0, COMM_BERT, COMM_LLM_DP, COMM_LLM_3D, COMM_N_FAMILIES } comm_family_id;

typedef struct {
    const char *name; /* "cnn-dp", "bert-dp", "llm-dp", "llm-3d" */
    double v_bytes;   /* bytes all-reduced per sync by the data-parallel ring (3D: for TP8 x PP8) */
    double t_comp;    /* compute seconds per sync (3D: at ref_gpus GPUs; strong scaling) */
    int32_t ref_gpus; /* 0: weak scaling (t_comp per sync whatever the size) */
    double x_dp;      /* exposed share of the data-parallel term, in [0, 1] */
    double bucket;    /* bytes per collective (latency term) */
    int32_t tp;       /* 3D only: tensor-parallel degree (kept inside one host) */
    int32_t pp_max;   /* 3D only: the largest pipeline depth */
    double v_pp;      /* 3D only: bytes per stage boundary per step (all TP ranks together) */
    double x_pp;      /* 3D only: exposed share of the pipeline term */
} comm_family_t;

typedef struct {
    bool on;                           /* false: sigma == 1 always (communication cost off) */
    bool contention;                   /* uplink sharing between jobs */
    double b_intra;                    /* GB/s per GPU inside a host */
    double nu;                         /* GB/s of NIC per GPU */
    double a0;                         /* s, base latency per collective */
    double lam_intra;                  /* s per ring step inside a host */
    double lam[RF_MAX_LEVELS];         /* s per network step, by the "up" level the group crosses (0: hosts) */
    double oversub[RF_MAX_LEVELS];     /* uplink oversubscription of a domain "up" levels above hosts (>= 1) */
    double kappa_floor[RF_MAX_LEVELS]; /* the least load factor when a group crosses that level */
    comm_family_t fam[COMM_N_FAMILIES];
} comm_profile_t;

/* The cluster as the model sees it. dom[l * n_nodes + node] is the node's
 * domain id at level l (ids 0..n_dom[l]-1 per level); dom_gpus[l][d] the GPUs
 * of domain d. Level L-1 is the host. Borrowed arrays. */
typedef struct {
    int32_t L;
    int32_t n_nodes;
    const int32_t *dom;
    const int32_t *n_dom;
    int64_t *const *dom_gpus;
} comm_topo_t;

/* Ring traffic leaving a domain: `weight` = ring edges leaving domain `dom`
 * of level `level`, times the NIC channels each edge uses. */
typedef struct {
    int32_t level;
    int32_t dom;
    double weight;
} comm_edge_t;

/* One communication group, reduced: ranks, distinct hosts, fewest GPUs of the
 * group on one host, and the coarsest level crossed as "up" (-1: one host). */
typedef struct {
    int32_t n;
    int32_t hosts;
    int32_t g_min;
    int32_t span_up;
} comm_group_t;

/* A running job's placement, reduced to what the model needs (built by
 * comm_job_init from the pods in rank order). */
typedef struct {
    comm_family_id family;
    int32_t gpus;
    int32_t g_host;     /* GPUs per host of the cluster (pod size) */
    int32_t hosts;      /* distinct hosts */
    int32_t g_min;      /* fewest GPUs of the job on one of its hosts */
    int32_t span_up;    /* coarsest level the whole job crosses, as "up": -1 one host, 0 hosts, 1 racks ... */
    int32_t tp, pp, dp; /* 3D: degrees (tp * pp * dp == gpus); else 0 */
    comm_group_t dp_g;  /* the data-parallel ring (3D: the slowest of the tp * pp rings) */
    comm_group_t tp_g;  /* 3D: the slowest tensor-parallel group */
    comm_group_t pp_g;  /* 3D: the widest pipeline boundary (n 2) */
    comm_edge_t *edges;
    int32_t n_edges;
    double t_star; /* T_iter of the packed reference placement */
    double kappa;  /* current load factor on its worst crossed uplink (>= 1) */
    double sigma;  /* current stretch */
} comm_job_t;

/* H100 / NDR-400 defaults of communication-model.md 4.3-4.4 (sources in docs/simulator.md). */
void comm_profile_default(comm_profile_t *p);
/* A family by name ("cnn-dp", ...), or -1; and a family's name ("?" when out of range). */
int32_t comm_family_find(const char *name);
const char *comm_family_name(comm_family_id f);

/* Build a job's descriptor from its pods in rank order (node and GPUs of each
 * pod; GPU ranks follow pod order). An llm-3d job whose GPUs are not a
 * multiple of its tp degree is modelled as llm-dp. RF_ENOMEM, or RF_EINVAL on
 * an empty job. */
rf_status comm_job_init(comm_job_t *job, const comm_profile_t *p, const comm_topo_t *topo, comm_family_id family,
                        int32_t g_host, const int32_t *pod_node, const int32_t *pod_gpus, int32_t n_pods,
                        rf_error_t *err);
void comm_job_fini(comm_job_t *job);

/* Iteration time of the job at load factor kappa on its crossed uplinks. */
double comm_iter_time(const comm_profile_t *p, const comm_job_t *job, double kappa);

/* Recompute kappa and sigma of every running job from the uplink demand of
 * all of them (two fixed-point passes); `scratch` holds one double per
 * domain of every level (sum of n_dom). With contention off, kappa is each
 * job's floor; with the model off, sigma is 1. */
void comm_update(const comm_profile_t *p, const comm_topo_t *topo, comm_job_t *const *jobs, int32_t n_jobs,
                 double *scratch);

#endif
