/* bench/trace.h: job traces for the simulator (rackfit-bench sim), each read
 * in its own published format (docs/simulator.md, "Traces", says which
 * field becomes what).
 *
 * Formats, recognised by their header line:
 * - tiresias: `job_id,num_gpu,submit_time,iterations,model_name,duration,interval`
 *   (SymbioticLab/Tiresias simulator input; duration in seconds);
 * - pollux:   `name,time,application,num_replicas,batch_size` (petuum/adaptdl
 *   realistic workloads; no duration: drawn per application, see trace.c);
 * - openb:    `name,cpu_milli,memory_mib,num_gpu,gpu_milli,...,creation_time,
 *   deletion_time,scheduled_time` (Alibaba GPU v2023; one pod per job);
 * - sim:      `name,submit,duration,gpus,model[,priority]` (this simulator's
 *   own, for hand-made scenarios such as tests/data/sim/).
 *
 * Invariants of a read trace: jobs sorted by submit time (ties in file
 * order), submit >= 0 relative to the first job, duration > 0, gpus >= 1.
 * Deterministic: the same file, options and seed give the same jobs. */
#ifndef RACKFIT_BENCH_TRACE_H
#define RACKFIT_BENCH_TRACE_H

#include <stdint.h>

#include "comm.h"
#include "rackfit/status.h"

typedef struct {
    char name[48];
    double submit;   /* s after the trace's first submission */
    double duration; /* s on a packed placement (D*) */
    int32_t gpus;
    comm_family_id family;
    char model[24];   /* the trace's model name, "" when none */
    int32_t row;      /* data row in the file (ties in submit time keep file order) */
    int64_t priority; /* sim: its column; openb: qos LS 100, BE 0, other 50; else 100 for a drawn share
                       * (high_share) and 0 */
} sim_job_t;

typedef struct {
    sim_job_t *jobs;
    int32_t n;
    const char *format; /* "tiresias", "pollux", "openb", "sim" (static) */
    int32_t rows;       /* data rows in the file */
    int32_t skipped;    /* rows not replayed (no GPU, never scheduled, past --hours/--jobs) */
} sim_trace_t;

typedef struct {
    uint64_t seed;       /* for drawn fields (pollux durations) */
    double hours;        /* keep jobs submitted in the first H hours (<= 0: all) */
    int32_t max_jobs;    /* keep the first N jobs (<= 0: all) */
    double size_scale;   /* GPUs per job multiplied by this (1: as traced) */
    double time_scale;   /* submit times divided by this (1: as traced) */
    int32_t llm_dp_from; /* jobs of at least this many GPUs are modelled as llm-dp (0: never) */
    int32_t llm_3d_from; /* ... and of at least this many as llm-3d (0: never) */
    int64_t max_bytes;   /* largest trace file read */
    double high_share;   /* traces without priorities: this share of jobs (drawn per row) gets priority 100 */
} sim_trace_opts_t;

void sim_trace_opts_default(sim_trace_opts_t *o);
/* Read a trace file, or several (comma-separated paths: each replayed from
 * time 0, merged by submit time, as tenants sharing the cluster). Errors name the file, line and field: RF_EIO,
 * RF_EPARSE (unknown header, bad number), RF_ELIMIT, RF_ENOMEM. */
rf_status sim_trace_read(const char *path, const sim_trace_opts_t *o, sim_trace_t *out, rf_error_t *err);
void sim_trace_fini(sim_trace_t *t);

#endif
