/* bench/sim_report.h: what `rackfit-bench sim` writes into its --out
 * directory (docs/simulator.md, "Outputs"): summary.csv and summary.md (one
 * row per policy and communication setting), jobs.csv, the CSV behind each
 * plot (util.csv, jct_cdf.csv, wait_cdf.csv, spread.csv), the plots as PNG
 * and SVG through gnuplot, and report.html, self-contained (SVG inline).
 *
 * Without gnuplot on PATH the CSV, tables and report are still written, and
 * the report says the plots are missing. */
#ifndef RACKFIT_BENCH_SIM_REPORT_H
#define RACKFIT_BENCH_SIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim.h"

typedef struct {
    sim_policy_id policy;
    bool comm_on;
    sim_result_t res;
} sim_run_t;

typedef struct {
    const char *cmdline;
    const char *trace_path;
    const sim_trace_t *trace;
    const sim_trace_opts_t *trace_opts;
    const sim_cluster_t *cluster;
    const char *cluster_spec;
    const sim_opts_t *opts; /* policy field unused */
    const comm_profile_t *comm;
    double wall_s; /* the whole command */
    char machine[400];
} sim_report_params_t;

/* Create `dir` and its missing parents (sim_main does it before the runs,
 * so a bad --out fails at once). RF_EIO names the part that failed. */
rf_status sim_report_mkdir(const char *dir, rf_error_t *err);

/* Write everything into `dir` (created if missing). *plots is set to whether
 * gnuplot drew the plots. RF_EIO names the file that failed. */
rf_status sim_report_write(const char *dir, const sim_report_params_t *p, const sim_run_t *runs, int32_t n_runs,
                           bool *plots, rf_error_t *err);

/* One markdown table (the summary.md body) for the runs with comm_on == on. */
void sim_report_table(FILE *fp, const sim_run_t *runs, int32_t n_runs, bool on);

#endif
