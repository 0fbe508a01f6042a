/* bench/gen.h: deterministic generators of placement problems (contract JSON).
 *
 * Two topologies: `fabric`, a regular B blocks x R racks x H hosts fabric, and
 * `lingjun`, the real 847-host Clos of the Alibaba Lingjun 2023 dataset
 * (topo.csv: host, core, aggregation and ToR switch). Both get the same host
 * model (8 GPUs, 128 cpu, 1Ti, 110 pods; a fraction partly used, a few
 * cordoned or tainted) and the same job mix (job sizes in GPUs from the Pollux
 * and Tiresias traces, a heavy tail shaped after Acme's Seren/Kalos maxima).
 *
 * Invariants: the output depends only on the options (and the topo.csv bytes):
 * the same seed gives the same bytes on every platform (our own PRNG,
 * xoshiro256** seeded by splitmix64; no floating point in the output). */
#ifndef RACKFIT_BENCH_GEN_H
#define RACKFIT_BENCH_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jw.h"
#include "rackfit/problem.h"
#include "rackfit/status.h"

typedef struct {
    int32_t blocks;    /* fabric only */
    int32_t racks;     /* per block, fabric only */
    int32_t hosts;     /* per rack, fabric only */
    int32_t gangs;     /* gangs to draw */
    uint64_t seed;     /* PRNG seed */
    double load;       /* fraction of GPUs already used, [0, 0.95] */
    double contention; /* requested GPUs / free GPUs (the tail grows until reached) */
    const char *topo;  /* lingjun only: path of topo.csv */
} bench_gen_opts_t;

/* What a generator made (for logs and reports). */
typedef struct {
    int32_t nodes;
    int32_t racks;
    int32_t blocks;
    int32_t gangs;
    int64_t pods;           /* pods requested (count, all pod sets) */
    int64_t gpus_total;     /* allocatable GPUs */
    int64_t gpus_free;      /* free GPUs on schedulable (not cordoned) hosts */
    int64_t gpus_requested; /* GPUs requested at `count` */
} bench_gen_stats_t;

/* Defaults: fabric 16 x 32 x 32 = 16,384 hosts, 1,000 gangs; lingjun 200 gangs;
 * both seed 1, load 0.25, contention 1.2. */
void bench_gen_opts_fabric(bench_gen_opts_t *opts);
void bench_gen_opts_lingjun(bench_gen_opts_t *opts);

/* Append a problem to `out` (which the caller initialised). `stats` may be NULL.
 * Errors: RF_EINVAL (bad sizes), RF_EIO (topo.csv unreadable or malformed),
 * RF_ENOMEM. */
rf_status bench_gen_fabric(const bench_gen_opts_t *opts, rf__jw_t *out, bench_gen_stats_t *stats, rf_error_t *err);
rf_status bench_gen_lingjun(const bench_gen_opts_t *opts, rf__jw_t *out, bench_gen_stats_t *stats, rf_error_t *err);

/* ---- the running-gang variant of a batch model ----------------------------------------------------------------
 *
 * bench_gen_running writes `base` (any validated problem: a committed model
 * or a generated one) back as contract JSON with running gangs added: jobs
 * drawn from the same size mix as the generators' (the Pollux/Tiresias body,
 * one in ten made a tail job, log-uniform on 16..min(1024, GPUs / 8)), n < 8
 * GPUs one pod of n GPUs, else n/8 pods of 8 (12 cpu and 96Gi per GPU, as
 * the generators' pods), each placed compactly where it fits (the smallest
 * domain, host then up the levels, with room for all its pods: best fit,
 * nodes filled in label order), on nodes with every level label that are
 * not cordoned, until they hold `fill` of the free GPUs (or 200 jobs in a
 * row found no room). Their pods are added to the nodes' `used`. Priority 0
 * (two in three) or 100 (one in three), so the base batch's priority-100
 * gangs can preempt only the priority-0 ones and its priority-1000 gangs
 * any; one in ten is `preemptible: false`. Named `<team>/run-NNNNN`, in the
 * order drawn (the order they were admitted in). The pending batch, the
 * cluster and the options are written unchanged (quantities in canonical
 * base units), so the base model's higher-priority gangs that no longer find
 * free room can be admitted only by preempting.
 *
 * Deterministic: the output depends only on `base` and the options (its own
 * PRNG stream, seeded by `seed`). */
typedef struct {
    uint64_t seed;
    double fill; /* fraction of the base problem's free GPUs to fill with running gangs, [0, 1] */
} bench_run_opts_t;

typedef struct {
    int32_t running;          /* running gangs added */
    int32_t not_preemptible;  /* of them, preemptible: false */
    int64_t running_pods;     /* their pods */
    int64_t running_gpus;     /* their GPUs (value_resource units) */
    int64_t running_gpus_low; /* of them, at priority 0 */
    int64_t gpus_free_before; /* free GPUs on eligible nodes before */
    int64_t gpus_free_after;  /* and after */
} bench_run_stats_t;

/* Defaults: seed 1, fill 0.6. */
void bench_run_opts_default(bench_run_opts_t *opts);
/* Append the variant of `base` to `out`. `stats` may be NULL. Errors:
 * RF_EINVAL (fill outside [0, 1]), RF_ENOMEM. */
rf_status bench_gen_running(const rf_problem_t *base, const bench_run_opts_t *opts, rf__jw_t *out,
                            bench_run_stats_t *stats, rf_error_t *err);

#endif
