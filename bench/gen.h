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
#include "rackfit/status.h"

/* A growable text buffer: the base layer's writer (base/jw.h), its members
 * also under the names bench has always used (`data` is the writer's `p`).
 * `oom` is sticky: once an append failed, the buffer keeps its old contents
 * and every later append is a no-op. */
typedef union {
    rf__jw_t jw;
    struct {
        char *data; /* NUL-terminated while len > 0 */
        size_t len;
        size_t cap;
        bool oom;
    };
} bench_buf_t;

void bench_buf_init(bench_buf_t *buf);
void bench_buf_fini(bench_buf_t *buf);
void bench_buf_printf(bench_buf_t *buf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

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
rf_status bench_gen_fabric(const bench_gen_opts_t *opts, bench_buf_t *out, bench_gen_stats_t *stats, rf_error_t *err);
rf_status bench_gen_lingjun(const bench_gen_opts_t *opts, bench_buf_t *out, bench_gen_stats_t *stats, rf_error_t *err);

#endif
