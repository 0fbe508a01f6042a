/* bench/ilp.c: `rackfit-bench ilp`, the integer program against the greedy.
 *
 * For each contended batch (models/gpu-1024.json, models/lingjun-847.json,
 * and the generated 16,384-node fabric unless --skip-large): the greedy, then
 * `ilp` on 1 and 2 threads within the time limit, each answer checked by
 * rf_check; value admitted, penalty, proven penalty bound, gap, wall time.
 * Then the time limit itself: `ilp` at limits from 10 ms to 2 s, the wall
 * time of rf_solve measured outside it, against the contract's allowance
 * (5 % or 10 ms, whichever is larger). Prints markdown on stdout.
 * With --gap: only the gap (issue 10): `ilp` on 2 threads at 100 ms, 1 s
 * and 10 s on each batch, one run each, penalty against penalty_bound.
 * --mip picks the integer programs' backend (docs/ilp.md, "Backends"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gen.h"
#include "rackfit/rackfit.h"

typedef struct {
    const char *name;
    rf_problem_t *pb;
} s_case_t;

/* --mip: the integer programs' backend for every ilp run */
static rf_mip_backend s_mip = RF_MIP_AUTO;

static int64_t s_units(const rf_answer_t *a)
{
    int64_t u = 0;
    for (int32_t i = 0; i < a->summary.n_value; i++)
        u += a->summary.value[i].units;
    return u;
}

static int64_t s_pods(const rf_answer_t *a)
{
    int64_t u = 0;
    for (int32_t i = 0; i < a->summary.n_value; i++)
        u += a->summary.value[i].pods;
    return u;
}

static rf_answer_t *s_run(const rf_problem_t *pb, int mode, int threads, int64_t limit, double *wall)
{
    rf_solve_opts_t o;
    rf_solve_opts_default(&o);
    o.mode = mode;
    o.threads = threads;
    o.time_limit_ms = limit;
    o.mip = (int32_t)s_mip;
    rf_answer_t *a = NULL;
    rf_error_t err;
    double t0 = rf_now_ms();
    o.start_ms = t0;
    if (rf_solve(pb, &o, &a, &err) != RF_OK) {
        fprintf(stderr, "rackfit-bench ilp: solve failed: %s\n", err.message);
        exit(1);
    }
    *wall = rf_now_ms() - t0;
    rf_check_report_t rep;
    memset(&rep, 0, sizeof rep);
    if (rf_check(pb, a, &rep, &err) != RF_OK || !rep.feasible) {
        fprintf(stderr, "rackfit-bench ilp: INFEASIBLE answer (%s)\n",
                rep.n_violations > 0 ? rep.violations[0] : err.message);
        exit(1);
    }
    rf_check_report_fini(&rep);
    return a;
}

static void s_row(const char *problem, const char *what, const rf_answer_t *a, const rf_answer_t *greedy, double wall)
{
    double gap =
        a->summary.penalty > 0 ? 100.0 * (a->summary.penalty - a->summary.penalty_bound) / a->summary.penalty : 0.0;
    int cmp = greedy ? rf_answer_compare(a, greedy) : 0;
    char per[256];
    int len = 0;
    per[0] = '\0';
    for (int32_t i = 0; i < a->summary.n_value && len < (int)sizeof per - 40; i++)
        len += snprintf(per + len, sizeof per - (size_t)len, "%s%lld: %lld", i ? " · " : "",
                        (long long)a->summary.value[i].priority, (long long)a->summary.value[i].units);
    printf("| %s | %s | %d | %s | %lld | %lld | %.0f | %.0f | %.1f %% | %s | %.0f | %s |\n", problem, what,
           a->summary.admitted, per, (long long)s_units(a), (long long)s_pods(a), a->summary.penalty,
           a->summary.penalty_bound, gap, a->summary.optimal ? "yes" : "no", wall,
           !greedy    ? "—"
           : cmp < 0  ? "better"
           : cmp == 0 ? "same"
                      : "WORSE");
}

/* The gap table: ilp on 2 threads at 0.1, 1 and 10 s, one run each. */
static void s_gap(const s_case_t *cases, int n)
{
    printf("### the gap (ilp, 2 threads)\n\n| problem | limit ms | admitted | penalty | penalty bound | gap | proven "
           "optimal | wall ms |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
    const int64_t limits[] = {100, 1000, 10000};
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
            double w;
            rf_answer_t *a = s_run(cases[i].pb, RF_MODE_ILP, 2, limits[k], &w);
            double pen = a->summary.penalty, lb = a->summary.penalty_bound;
            printf("| %s | %lld | %d | %.0f | %.0f | %.1f %% | %s | %.0f |\n", cases[i].name, (long long)limits[k],
                   a->summary.admitted, pen, lb, pen > 0 ? 100.0 * (pen - lb) / pen : 0.0,
                   a->summary.optimal ? "yes" : "no", w);
            fflush(stdout);
            rf_answer_destroy(&a);
        }
}

int bench_ilp_main(int argc, char **argv);

int bench_ilp_main(int argc, char **argv)
{
    const char *models = "models";
    int64_t limit = 1000;
    bool large = true, gap = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--models") == 0 && i + 1 < argc)
            models = argv[++i];
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            limit = strtoll(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--skip-large") == 0)
            large = false;
        else if (strcmp(argv[i], "--gap") == 0)
            gap = true;
        else if (strcmp(argv[i], "--mip") == 0 && i + 1 < argc && rf_mip_backend_parse(argv[i + 1], &s_mip) == 0 &&
                 rf_mip_backend_available(s_mip))
            i++;
        else {
            fprintf(stderr, "usage: rackfit-bench ilp [--models DIR] [--limit MS] [--skip-large] [--gap] "
                            "[--mip auto|glpk|cbc]\n");
            return 2;
        }
    }
    s_case_t cases[3];
    int n = 0;
    const char *files[] = {"gpu-1024.json", "lingjun-847.json"};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", models, files[i]);
        rf_error_t err;
        cases[n].name = files[i];
        if (rf_problem_from_json_file(path, NULL, &cases[n].pb, &err) != RF_OK) {
            fprintf(stderr, "rackfit-bench ilp: %s: %s\n", path, err.message);
            return 1;
        }
        n++;
    }
    if (large) {
        bench_gen_opts_t o;
        bench_gen_opts_fabric(&o);
        rf__jw_t b;
        rf__jw_init(&b);
        rf_error_t err;
        if (bench_gen_fabric(&o, &b, NULL, &err) != RF_OK ||
            rf_problem_from_json(b.p, b.len, NULL, &cases[n].pb, &err) != RF_OK) {
            fprintf(stderr, "rackfit-bench ilp: fabric: %s\n", err.message);
            return 1;
        }
        rf__jw_fini(&b);
        cases[n++].name = "fabric-16384 (generated, seed 1)";
    }
    if (gap) {
        s_gap(cases, n);
        for (int i = 0; i < n; i++)
            rf_problem_destroy(&cases[i].pb);
        return 0;
    }
    printf("### greedy against ilp (time limit %lld ms)\n\n", (long long)limit);
    printf("| problem | strategy | admitted | GPUs per priority | GPUs | pods | penalty | penalty bound | gap | proven "
           "optimal | wall ms | vs greedy |\n|---|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|\n");
    for (int i = 0; i < n; i++) {
        double w;
        rf_answer_t *g = s_run(cases[i].pb, RF_MODE_GREEDY, 1, limit, &w);
        s_row(cases[i].name, "greedy", g, NULL, w);
        for (int t = 1; t <= 2; t++) {
            rf_answer_t *a = s_run(cases[i].pb, RF_MODE_ILP, t, limit, &w);
            char what[32];
            snprintf(what, sizeof what, "ilp, %d thread%s", t, t > 1 ? "s" : "");
            s_row(cases[i].name, what, a, g, w);
            rf_answer_destroy(&a);
        }
        rf_answer_destroy(&g);
    }
    printf("\n### the time limit\n\n`ilp` on 2 threads; wall time of rf_solve measured around the call; allowed: the "
           "limit plus 5 %% or 10 ms, whichever is larger.\n\n| problem | limit ms | wall ms | over by ms | within |\n"
           "|---|---:|---:|---:|---|\n");
    const int64_t limits[] = {10, 50, 100, 250, 500, 1000, 2000};
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
            double w;
            rf_answer_t *a = s_run(cases[i].pb, RF_MODE_ILP, 2, limits[k], &w);
            double allow = (double)limits[k] + (0.05 * (double)limits[k] > 10 ? 0.05 * (double)limits[k] : 10);
            printf("| %s | %lld | %.1f | %.1f | %s |\n", cases[i].name, (long long)limits[k], w, w - (double)limits[k],
                   w <= allow ? "yes" : "NO");
            rf_answer_destroy(&a);
        }
    for (int i = 0; i < n; i++)
        rf_problem_destroy(&cases[i].pb);
    return 0;
}
