/* bench/main.c: rackfit-bench, the benchmark driver.
 *
 *   rackfit-bench gen fabric  [--blocks B --racks R --hosts H] [--gangs G --seed S --load X --contention C] -o FILE
 *   rackfit-bench gen lingjun --topo topo.csv [--gangs G --seed S --load X --contention C] -o FILE
 *   rackfit-bench solve FILE... [--runs N] [--out FILE] [--answers DIR]
 *   rackfit-bench run    [--models DIR] [--runs N] [--out FILE] [--skip-large]
 *   rackfit-bench report [--models DIR] [--runs N] [--out FILE] [--skip-large]
 *   rackfit-bench gen running BASE.json [--fill F --seed S] -o FILE
 *   rackfit-bench preempt [--models DIR] [--runs N] [--out FILE] [--skip-large] [--fill F --seed S --limit-ms L]
 *
 * For each problem: the JSON parse (rf_problem_from_json) and every strategy
 * ("greedy", and the baselines "kueue" and "kube", all rf_strategy_t's run
 * through rf_solve_with, threads = 1, the process pinned to one CPU) are
 * timed, median of N runs with min and max. Every answer goes through
 * rf_check, and an infeasible one stops the run (exit 3) with its
 * violations. Results are markdown: `run` and
 * `solve` print the tables, `report` a whole RESULTS.md (method included).
 *
 * Peak memory is the process's ru_maxrss, read after each problem; problems
 * run smallest first, so the last row's peak is the largest problem's (plus
 * the smaller ones' leftovers, if any: an upper bound).
 *
 * `preempt` does the same for the models' running-gang variants (gen.h,
 * bench_gen_running) with greedy, ilp, auto and the Kueue-style baselines,
 * "kueue-preempt" (Kueue's preemption) and "kueue" (none), whose answers
 * preempt running gangs (see the section near the end). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "arena.h" /* rf__arena_used: bytes a problem holds */
#include "bench.h"
#include "gen.h"

#define S_MAX_PROBLEMS 32
#define S_MAX_PRIOS    8
#define S_N_STRATEGIES 3

/* ---- data structures ------------------------------------------------------------------------------------------- */

typedef struct {
    bool ran;
    double ms, ms_min, ms_max; /* wall time of one solve: median, min, max of N */
    double cpu_ms;             /* process CPU time of one solve, median */
    int32_t admitted;
    int32_t rejected;
    rf_value_t value[S_MAX_PRIOS];
    int32_t n_value;
    double penalty;
    double domains[RF_MAX_LEVELS]; /* mean over admitted gangs */
    int vs_greedy;                 /* rf_answer_compare(greedy, this): < 0 greedy better; 2: not compared */
} s_quality_t;

typedef struct {
    char name[96];
    char source[160];
    int32_t nodes, gangs, levels;
    const char *level_names[RF_MAX_LEVELS];
    int64_t pods, units_asked, units_free;
    size_t bytes;
    double parse_med, parse_min, parse_max;
    bool have_greedy;
    double solve_med, solve_min, solve_max;
    double solve_cpu_med; /* CPU time of the process during the solve, median */
    double rss_mib, arena_mib;
    s_quality_t q[S_N_STRATEGIES]; /* greedy, kueue, kube */
    bench_kube_stats_t kube;
} s_result_t;

static const char *const s_strategy_names[S_N_STRATEGIES] = {"greedy", "kueue", "kube"};

typedef struct {
    int runs;
    const char *out;
    const char *models;
    const char *answers; /* directory for every answer's JSON, or NULL */
    bool skip_large;
    bool pin;
    char cmdline[1024];
} s_cfg_t;

/* ---- local methods --------------------------------------------------------------------------------------------- */

static void s_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rackfit-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(code);
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void s_stats(double *v, int n, double *med, double *mn, double *mx)
{
    qsort(v, (size_t)n, sizeof(double), s_cmp_double);
    *mn = v[0];
    *mx = v[n - 1];
    *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double s_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double s_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void s_pin_one_cpu(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        cpu = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        fprintf(stderr, "rackfit-bench: warning: could not pin to CPU %d: %s\n", cpu, strerror(errno));
}

static void s_limits(rf_limits_t *lim)
{
    rf_limits_default(lim);
    if (lim->max_nodes < (1 << 20))
        lim->max_nodes = 1 << 20;
    if (lim->max_gangs < (1 << 20))
        lim->max_gangs = 1 << 20;
    if (lim->max_input_bytes < ((int64_t)1 << 31))
        lim->max_input_bytes = (int64_t)1 << 31;
}

/* Abort loudly unless rf_check accepts the answer. */
static void s_verify(const rf_problem_t *p, const rf_answer_t *a, const char *problem, const char *strategy)
{
    rf_check_report_t rep;
    memset(&rep, 0, sizeof(rep));
    rf_error_t err;
    rf_error_clear(&err);
    rf_status st = rf_check(p, a, &rep, &err);
    if (st != RF_OK)
        s_die(3, "%s/%s: the checker could not run: %s", problem, strategy, err.message);
    if (!rep.feasible) {
        fprintf(stderr, "rackfit-bench: INFEASIBLE ANSWER from %s on %s (%d violations):\n", strategy, problem,
                (int)rep.n_violations);
        for (int32_t i = 0; i < rep.n_violations && i < RF_CHECK_MAX_VIOLATIONS; i++)
            fprintf(stderr, "  - %s\n", rep.violations[i] ? rep.violations[i] : "?");
        rf_check_report_fini(&rep);
        exit(3);
    }
    if (!rep.reported_totals_match)
        fprintf(stderr, "rackfit-bench: WARNING: %s/%s: the answer's own totals differ from the checker's\n", problem,
                strategy);
    rf_check_report_fini(&rep);
}

static void s_save_answer(const s_cfg_t *cfg, const rf_answer_t *a, const char *problem, const char *strategy)
{
    if (!cfg->answers)
        return;
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    rf_error_clear(&err);
    if (rf_answer_to_json(a, &text, &len, &err) != RF_OK)
        s_die(1, "%s/%s: answer to JSON: %s", problem, strategy, err.message);
    char path[1400];
    snprintf(path, sizeof(path), "%s/%s.%s.json", cfg->answers, problem, strategy);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(text, 1, len, fp) != len || fclose(fp) != 0)
        s_die(1, "%s: %s", path, strerror(errno));
    free(text);
}

static void s_quality(const rf_answer_t *a, double ms, s_quality_t *q)
{
    memset(q, 0, sizeof(*q));
    q->ran = true;
    q->vs_greedy = 2;
    q->ms = ms;
    q->admitted = a->summary.admitted;
    q->rejected = a->summary.rejected;
    q->penalty = a->summary.penalty;
    q->n_value = a->summary.n_value < S_MAX_PRIOS ? a->summary.n_value : S_MAX_PRIOS;
    for (int32_t i = 0; i < q->n_value; i++)
        q->value[i] = a->summary.value[i];
    int32_t L = a->problem->n_levels, n = 0;
    for (int32_t g = 0; g < a->n_gangs; g++) {
        if (!a->gangs[g].admitted)
            continue;
        n++;
        for (int32_t l = 0; l < L; l++)
            q->domains[l] += a->gangs[g].domains[l];
    }
    for (int32_t l = 0; l < L && n > 0; l++)
        q->domains[l] /= n;
}

/* The strategies of the tables, in s_strategy_names order. */
static const rf_strategy_t *s_strategy(int k)
{
    return k == 0 ? rf_strategy_find("greedy") : k == 1 ? &bench_strategy_kueue : &bench_strategy_kube;
}

/* Run strategy k on p cfg->runs times through rf_solve_with (one thread,
 * a bench_extra_t as opts.user), check and save the last answer, and fill
 * q (times: median, min, max; CPU median) and *kube when the strategy
 * reported it. Returns the last answer (the caller destroys it), or NULL
 * when this build has no such strategy. t has room for cfg->runs times. */
static rf_answer_t *s_run_strategy(const s_cfg_t *cfg, const rf_problem_t *p, const char *name, int k, double *t,
                                   s_quality_t *q, bench_kube_stats_t *kube)
{
    const rf_strategy_t *strategy = s_strategy(k);
    if (!strategy) {
        fprintf(stderr, "rackfit-bench: warning: no strategy \"%s\" in this build\n", s_strategy_names[k]);
        return NULL;
    }
    double *cpu = malloc((size_t)cfg->runs * sizeof(double));
    if (!cpu)
        s_die(1, "out of memory");
    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.threads = 1;
    bench_extra_t extra;
    rf_answer_t *a = NULL;
    for (int i = 0; i < cfg->runs; i++) {
        rf_answer_destroy(&a);
        memset(&extra, 0, sizeof extra);
        opts.user = &extra;
        rf_error_t err;
        rf_error_clear(&err);
        double c0 = s_cpu_ms();
        double t0 = rf_now_ms();
        rf_status st = rf_solve_with(strategy, p, &opts, &a, &err);
        t[i] = rf_now_ms() - t0;
        cpu[i] = s_cpu_ms() - c0;
        if (st != RF_OK)
            s_die(1, "%s: %s failed: %s: %s", name, strategy->name, rf_status_code(st), err.message);
    }
    s_verify(p, a, name, strategy->name);
    s_save_answer(cfg, a, name, strategy->name);
    double med, mn, mx, cmed, cmn, cmx;
    s_stats(t, cfg->runs, &med, &mn, &mx);
    s_stats(cpu, cfg->runs, &cmed, &cmn, &cmx);
    free(cpu);
    s_quality(a, med, q);
    q->ms_min = mn;
    q->ms_max = mx;
    q->cpu_ms = cmed;
    if (extra.have_kube)
        *kube = extra.kube;
    return a;
}

/* Measure one problem given as JSON text. */
static void s_measure(const s_cfg_t *cfg, const char *name, const char *source, const char *text, size_t len,
                      s_result_t *res)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->name, sizeof(res->name), "%s", name);
    snprintf(res->source, sizeof(res->source), "%s", source);
    res->bytes = len;
    rf_limits_t lim;
    s_limits(&lim);
    rf_error_t err;
    int runs = cfg->runs;
    double *t = malloc((size_t)runs * sizeof(double));
    if (!t)
        s_die(1, "out of memory");

    /* Parse, N times. */
    rf_problem_t *p = NULL;
    for (int i = 0; i < runs; i++) {
        rf_problem_destroy(&p);
        rf_error_clear(&err);
        double t0 = rf_now_ms();
        rf_status st = rf_problem_from_json(text, len, &lim, &p, &err);
        t[i] = rf_now_ms() - t0;
        if (st != RF_OK)
            s_die(1, "%s: %s: %s%s%s", name, rf_status_code(st), err.message, err.path[0] ? " at " : "", err.path);
    }
    s_stats(t, runs, &res->parse_med, &res->parse_min, &res->parse_max);
    res->nodes = p->n_nodes;
    res->gangs = p->n_gangs;
    res->levels = p->n_levels;
    for (int32_t l = 0; l < p->n_levels; l++)
        res->level_names[l] = s_strategy_names[0]; /* replaced below: names must outlive the problem */
    int32_t vr = p->options.value_resource;
    for (int32_t g = 0; g < p->n_gangs; g++)
        for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++) {
            const rf_pod_set_t *ps = &p->gangs[g].pod_sets[j];
            res->pods += ps->count;
            if (vr >= 0)
                res->units_asked += ps->count * ps->requests[vr];
        }
    for (int32_t n = 0; n < p->n_nodes && vr >= 0; n++) {
        const rf_node_t *node = &p->nodes[n];
        if (node->unschedulable || node->allocatable[vr] == RF_QTY_UNLIMITED)
            continue;
        int64_t f = node->allocatable[vr] - node->used[vr];
        res->units_free += f > 0 ? f : 0;
    }
    res->arena_mib = p->arena ? (double)rf__arena_used(p->arena) / (1024.0 * 1024.0) : 0;

    /* Every strategy through the same call, N times, one thread; the
     * greedy's answer is the one the others are compared with. */
    rf_answer_t *keep = NULL;
    for (int k = 0; k < S_N_STRATEGIES; k++) {
        rf_answer_t *a = s_run_strategy(cfg, p, name, k, t, &res->q[k], &res->kube);
        if (!a)
            continue;
        if (k == 0) {
            keep = a;
            continue;
        }
        if (keep) {
            int cmp = rf_answer_compare(keep, a);
            res->q[k].vs_greedy = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
        }
        rf_answer_destroy(&a);
    }
    res->have_greedy = res->q[0].ran;
    res->solve_med = res->q[0].ms;
    res->solve_min = res->q[0].ms_min;
    res->solve_max = res->q[0].ms_max;
    res->solve_cpu_med = res->q[0].cpu_ms;
    rf_answer_destroy(&keep);
    /* Level names: keep short copies that outlive the problem. */
    static char level_copy[S_MAX_PROBLEMS][RF_MAX_LEVELS][64];
    static int n_copy;
    int slot = n_copy++ % S_MAX_PROBLEMS;
    for (int32_t l = 0; l < p->n_levels; l++) {
        const char *full = p->levels[l], *slash = strrchr(full, '/');
        snprintf(level_copy[slot][l], sizeof(level_copy[slot][l]), "%s", slash ? slash + 1 : full);
        res->level_names[l] = level_copy[slot][l];
    }
    rf_problem_destroy(&p);
    free(t);
    res->rss_mib = s_rss_mib();
    fprintf(stderr, "rackfit-bench: %s: parse %.2f ms, greedy %.3f ms, peak RSS %.1f MiB\n", name, res->parse_med,
            res->solve_med, res->rss_mib);
}

static char *s_read(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    rf__jw_t b;
    rf__jw_init(&b);
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
        rf__jw_printf(&b, "%.*s", (int)n, chunk);
    fclose(fp);
    if (b.oom) {
        rf__jw_fini(&b);
        return NULL;
    }
    *len = b.len;
    if (!b.p)
        b.p = calloc(1, 1);
    return b.p;
}

/* ---- output ---------------------------------------------------------------------------------------------------- */

static void s_machine(rf__jw_t *o, const s_cfg_t *cfg)
{
    char model[256] = "unknown";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[512];
        while (fgets(line, sizeof(line), fp)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t')
                        c++;
                    c[strcspn(c, "\n")] = '\0';
                    snprintf(model, sizeof(model), "%s", c);
                }
                break;
            }
        }
        fclose(fp);
    }
    struct utsname u;
    char kernel[512] = "unknown";
    if (uname(&u) == 0)
        snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    rf__jw_printf(o, "## Machine\n\n");
    rf__jw_printf(o, "- CPU: %s, %ld online CPUs (nproc)\n", model, sysconf(_SC_NPROCESSORS_ONLN));
    rf__jw_printf(o, "- Kernel: %s\n", kernel);
    rf__jw_printf(o, "- Date: %s\n", date);
#if defined(__OPTIMIZE__) && defined(NDEBUG)
    rf__jw_printf(o, "- Build: optimized, assertions off (Release)\n");
#elif defined(__OPTIMIZE__)
    rf__jw_printf(o, "- Build: optimized, assertions ON (not a Release build)\n");
#else
    rf__jw_printf(o, "- Build: NOT optimized (debug build: timings are not representative)\n");
#endif
    rf__jw_printf(o, "- Greedy timing: one thread (options.threads = 1), process %s, median of %d runs\n",
                  cfg->pin ? "pinned to one CPU" : "not pinned", cfg->runs);
    rf__jw_printf(o, "- Command: `%s`\n\n", cfg->cmdline);
}

static void s_tables(rf__jw_t *o, const s_result_t *r, int n)
{
    rf__jw_printf(o, "## Speed: parse and greedy solve\n\n");
    rf__jw_printf(
        o, "| problem | nodes | gangs | pods asked | GPUs free | GPUs asked | JSON | parse ms (median) | "
           "greedy solve ms: median [min, max] | greedy CPU ms (median) | gangs/s | peak RSS MiB | arena MiB |\n");
    rf__jw_printf(o, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        rf__jw_printf(o, "| %s | %d | %d | %lld | %lld | %lld | %.1f KiB | %.2f [%.2f, %.2f] | ", r[i].name,
                      (int)r[i].nodes, (int)r[i].gangs, (long long)r[i].pods, (long long)r[i].units_free,
                      (long long)r[i].units_asked, (double)r[i].bytes / 1024.0, r[i].parse_med, r[i].parse_min,
                      r[i].parse_max);
        if (r[i].have_greedy)
            rf__jw_printf(o, "%.3f [%.3f, %.3f] | %.3f | %.0f | ", r[i].solve_med, r[i].solve_min, r[i].solve_max,
                          r[i].solve_cpu_med, r[i].solve_med > 0 ? r[i].gangs / (r[i].solve_med / 1000.0) : 0.0);
        else
            rf__jw_printf(o, "not available | — | — | ");
        rf__jw_printf(o, "%.1f | %.2f |\n", r[i].rss_mib, r[i].arena_mib);
    }
    rf__jw_printf(o, "\nSources: ");
    for (int i = 0; i < n; i++)
        rf__jw_printf(o, "%s`%s` = %s", i ? "; " : "", r[i].name, r[i].source);
    rf__jw_printf(o, ".\n\n");

    rf__jw_printf(o, "## Quality: greedy against the baselines\n\n");
    rf__jw_printf(o, "Value is GPU units admitted per priority (`priority: units`); domains are the mean number of "
                     "distinct domains per admitted gang at each level (1 is compact). Kube's answer admits only "
                     "gangs that got every pod and keep their required topology; `partial` counts the gangs it "
                     "left partly placed, `idle GPUs` the GPUs their placed pods hold, `broken` the complete "
                     "gangs whose spread breaks a required level or slice. `vs greedy` compares the "
                     "baseline's answer with the greedy's by the contract's objective (value per priority, "
                     "highest first, then penalty), with rf_answer_compare.\n\n");
    rf__jw_printf(o, "| problem | strategy | ms | admitted | rejected | value per priority | total value | penalty | "
                     "mean domains per level | vs greedy | partial | idle GPUs | broken |\n");
    rf__jw_printf(o, "|---|---|---:|---:|---:|---|---:|---:|---|---|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < S_N_STRATEGIES; k++) {
            const s_quality_t *q = &r[i].q[k];
            if (!q->ran) {
                rf__jw_printf(o, "| %s | %s | — | — | — | not available | — | — | — | — | — | — | — |\n", r[i].name,
                              s_strategy_names[k]);
                continue;
            }
            rf__jw_printf(o, "| %s | %s | %.2f | %d | %d | ", r[i].name, s_strategy_names[k], q->ms, (int)q->admitted,
                          (int)q->rejected);
            int64_t total = 0;
            for (int32_t v = 0; v < q->n_value; v++) {
                rf__jw_printf(o, "%s%lld: %lld", v ? " · " : "", (long long)q->value[v].priority,
                              (long long)q->value[v].units);
                total += q->value[v].units;
            }
            rf__jw_printf(o, " | %lld | %.0f | ", (long long)total, q->penalty);
            for (int32_t l = 0; l < r[i].levels; l++)
                rf__jw_printf(o, "%s%s %.2f", l ? " · " : "", r[i].level_names[l], q->domains[l]);
            static const char *const vs[] = {"greedy better", "equal", "baseline better", "—"};
            rf__jw_printf(o, " | %s", vs[q->vs_greedy + 1]);
            if (k == 2)
                rf__jw_printf(o, " | %d | %lld | %d |\n", (int)r[i].kube.partial,
                              (long long)r[i].kube.partial_idle_units, (int)r[i].kube.broken);
            else
                rf__jw_printf(o, " | — | — | — |\n");
        }
    }
    rf__jw_printf(o, "\n");

    rf__jw_printf(o, "## Targets (2-core machine)\n\n| target | measured | verdict |\n|---|---|---|\n");
    int shown = 0;
    for (int i = 0; i < n; i++) {
        const s_result_t *x = &r[i];
        if (x->nodes == 16384 && x->gangs == 1000) {
            shown++;
            if (x->have_greedy)
                rf__jw_printf(o, "| %s: greedy solve < 20 ms on one core | %.3f ms (median) | %s |\n", x->name,
                              x->solve_med, x->solve_med < 20 ? "PASS" : "FAIL");
            else
                rf__jw_printf(o, "| %s: greedy solve < 20 ms on one core | not measured | — |\n", x->name);
            rf__jw_printf(o, "| %s: peak memory < 256 MiB | %.1f MiB (process peak RSS) | %s |\n", x->name, x->rss_mib,
                          x->rss_mib < 256 ? "PASS" : "FAIL");
        }
        if (x->nodes == 1024 && x->gangs == 200) {
            shown++;
            if (x->have_greedy)
                rf__jw_printf(o, "| %s: greedy solve < 2 ms | %.3f ms (median) | %s |\n", x->name, x->solve_med,
                              x->solve_med < 2 ? "PASS" : "FAIL");
            else
                rf__jw_printf(o, "| %s: greedy solve < 2 ms | not measured | — |\n", x->name);
        }
    }
    if (!shown)
        rf__jw_printf(o, "| (no problem of the target sizes in this run) | — | — |\n");
    rf__jw_printf(o, "\n");
}

static const char s_method[] =
    "# rackfit-bench results\n\n"
    "Produced by `rackfit-bench report` (bench/main.c); regenerate with the command below from a Release build.\n\n"
    "## Method\n\n"
    "- Problems: `tutorial` (models/tutorial.json), `gpu-1024` (models/gpu-1024.json: 4 blocks x 16 racks x 16 "
    "hosts, 200 gangs), `lingjun-847` (models/lingjun-847.json: the real 847-host Alibaba Lingjun topology, 200 "
    "gangs), and `fabric-16384` (16 blocks x 32 racks x 32 hosts, 1,000 gangs, generated in memory by the same "
    "generator as `rackfit-bench gen fabric --seed 1`). Job sizes come from the Pollux and Tiresias traces with a "
    "heavy tail after Acme (see models/README.md).\n"
    "- Parse: `rf_problem_from_json` on the text already in memory (file I/O excluded), median of N runs.\n"
    "- Solve: every strategy (the library's `greedy`, `rf_strategy_find(\"greedy\")`, and the two baselines) runs "
    "through the same call, `rf_solve_with`, with `threads = 1`, the process pinned to one CPU; the time covers the "
    "solve's context (topology tree, eligibility), `rf_answer_new` and the strategy (search, answer), median of N "
    "runs with min and max. gangs/s = gangs / median greedy solve time.\n"
    "- Memory: `getrusage(RUSAGE_SELF).ru_maxrss` after each problem (problems run smallest first, so a row shows "
    "the peak so far; the input text, the parsed problem and every answer are included), and the problem's arena "
    "bytes.\n"
    "- Baselines (bench/): `kueue`, one gang at a time in queue order, Kueue TAS-style BestFit domain and "
    "descent; `kube`, pod by pod, LeastAllocated, no gang semantics and no topology. Their `ms` is the median of "
    "N runs, as the greedy's.\n"
    "- Every answer is checked by `rf_check`; an infeasible answer stops the run.\n"
    "- `greedy CPU ms` is the process CPU time during the solve: when it is well below the wall time, other load on "
    "the machine inflated the wall time.\n"
    "- Regenerate: `cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release && cmake --build build-bench -j2 && "
    "build-bench/bin/rackfit-bench report --runs 11 --out bench/RESULTS.md` (from the repository root).\n\n";

/* A report's text to stdout and, with --out, to that file; the writer is freed. */
static void s_emit_report(const s_cfg_t *cfg, rf__jw_t *o)
{
    if (o->oom)
        s_die(1, "out of memory");
    fwrite(o->p, 1, o->len, stdout);
    if (cfg->out) {
        FILE *fp = fopen(cfg->out, "w");
        if (!fp || fwrite(o->p, 1, o->len, fp) != o->len || fclose(fp) != 0)
            s_die(1, "%s: %s", cfg->out, strerror(errno));
    }
    rf__jw_fini(o);
}

static void s_emit_results(const s_cfg_t *cfg, const s_result_t *r, int n, bool full)
{
    rf__jw_t o;
    rf__jw_init(&o);
    if (full)
        rf__jw_printf(&o, "%s", s_method);
    s_machine(&o, cfg);
    s_tables(&o, r, n);
    s_emit_report(cfg, &o);
}

/* ---- subcommands ----------------------------------------------------------------------------------------------- */

static const char s_usage[] =
    "usage:\n"
    "  rackfit-bench gen fabric  [--blocks B] [--racks R] [--hosts H] [--gangs G] [--seed S]\n"
    "                            [--load X] [--contention C] -o FILE\n"
    "  rackfit-bench gen lingjun --topo PATH/topo.csv [--gangs G] [--seed S] [--load X] [--contention C] -o FILE\n"
    "  rackfit-bench gen running BASE.json [--fill F] [--seed S] -o FILE\n"
    "  rackfit-bench solve FILE... [--runs N] [--out FILE] [--answers DIR] [--no-pin]\n"
    "  rackfit-bench run    [--models DIR] [--runs N] [--out FILE] [--answers DIR] [--skip-large] [--no-pin]\n"
    "  rackfit-bench report [--models DIR] [--runs N] [--out FILE] [--answers DIR] [--skip-large] [--no-pin]\n"
    "  rackfit-bench preempt [--models DIR] [--runs N] [--out FILE] [--answers DIR] [--skip-large] [--no-pin]\n"
    "                        [--fill F] [--seed S] [--limit-ms L]\n"
    "  rackfit-bench sim --trace FILE --cluster SPEC --policy NAME[,NAME...] --out DIR [...] (sim --help)\n"
    "\n"
    "gen writes a problem (contract JSON); `-o -` is standard output. Defaults: fabric 16x32x32 hosts,\n"
    "1000 gangs; lingjun 200 gangs; seed 1, load 0.25, contention 1.2.\n"
    "solve/run/report time the parse and the greedy solve and compare with the kueue and kube baselines;\n"
    "run uses models/{tutorial,gpu-1024,lingjun-847}.json and a 16,384-node fabric made in memory;\n"
    "report prints a whole RESULTS.md (method, machine, tables); --answers DIR saves every answer as\n"
    "DIR/<problem>.<strategy>.json (check one with `rackfit check PROBLEM ANSWER`).\n"
    "preempt solves the running-gang variant of each model (gen running, fill 0.6, seed 1) with greedy, ilp,\n"
    "auto (limit 1000 ms) and the kueue baselines with (kueue-preempt) and without preemption, and prints the\n"
    "table of bench/RESULTS.md's \"Preemption\" section.\n";

static const char *s_arg(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        s_die(2, "%s needs a value\n%s", argv[*i], s_usage);
    return argv[++*i];
}

static double s_num(const char *flag, const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end)
        s_die(2, "%s: not a number: %s", flag, v);
    return x;
}

static char *s_read(const char *path, size_t *len);

/* gen running BASE.json [--fill F] [--seed S] -o FILE: the running-gang
 * variant of a problem (gen.h). */
static int s_gen_running(int argc, char **argv)
{
    const char *base = NULL, *out = NULL;
    bench_run_opts_t o;
    bench_run_opts_default(&o);
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--fill") == 0)
            o.fill = s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(s_arg(argc, argv, &i), NULL, 0);
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0)
            out = s_arg(argc, argv, &i);
        else if (a[0] != '-' && !base)
            base = a;
        else
            s_die(2, "gen running: unexpected argument %s\n%s", a, s_usage);
    }
    if (!base || !out)
        s_die(2, "gen running: BASE.json and -o FILE are required");
    rf_limits_t lim;
    s_limits(&lim);
    rf_problem_t *p = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    if (rf_problem_from_json_file(base, &lim, &p, &err) != RF_OK)
        s_die(1, "%s: %s%s%s", base, err.message, err.path[0] ? " at " : "", err.path);
    rf__jw_t b;
    rf__jw_init(&b);
    bench_run_stats_t st;
    if (bench_gen_running(p, &o, &b, &st, &err) != RF_OK)
        s_die(1, "gen running: %s", err.message);
    FILE *fp = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
    if (!fp || fwrite(b.p, 1, b.len, fp) != b.len || (fp != stdout && fclose(fp) != 0))
        s_die(1, "%s: %s", out, strerror(errno));
    fprintf(stderr,
            "rackfit-bench gen running: %d running gangs (%d not preemptible), %lld pods, %lld GPUs (%lld at "
            "priority 0); free GPUs %lld -> %lld; %zu bytes\n",
            (int)st.running, (int)st.not_preemptible, (long long)st.running_pods, (long long)st.running_gpus,
            (long long)st.running_gpus_low, (long long)st.gpus_free_before, (long long)st.gpus_free_after, b.len);
    rf__jw_fini(&b);
    rf_problem_destroy(&p);
    return 0;
}

static int s_gen(int argc, char **argv)
{
    if (argc < 3)
        s_die(2, "%s", s_usage);
    if (strcmp(argv[2], "running") == 0)
        return s_gen_running(argc, argv);
    const char *kind = argv[2], *out = NULL;
    bench_gen_opts_t o;
    if (strcmp(kind, "fabric") == 0)
        bench_gen_opts_fabric(&o);
    else if (strcmp(kind, "lingjun") == 0)
        bench_gen_opts_lingjun(&o);
    else
        s_die(2, "gen: unknown kind %s (fabric, lingjun or running)", kind);
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--blocks") == 0)
            o.blocks = (int32_t)s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--racks") == 0)
            o.racks = (int32_t)s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--hosts") == 0)
            o.hosts = (int32_t)s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--gangs") == 0)
            o.gangs = (int32_t)s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(s_arg(argc, argv, &i), NULL, 0);
        else if (strcmp(a, "--load") == 0)
            o.load = s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--contention") == 0)
            o.contention = s_num(a, s_arg(argc, argv, &i));
        else if (strcmp(a, "--topo") == 0)
            o.topo = s_arg(argc, argv, &i);
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0)
            out = s_arg(argc, argv, &i);
        else
            s_die(2, "gen: unknown flag %s\n%s", a, s_usage);
    }
    if (!out)
        s_die(2, "gen: -o FILE is required");
    rf__jw_t b;
    rf__jw_init(&b);
    bench_gen_stats_t st;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status s = kind[0] == 'f' ? bench_gen_fabric(&o, &b, &st, &err) : bench_gen_lingjun(&o, &b, &st, &err);
    if (s != RF_OK)
        s_die(1, "gen %s: %s", kind, err.message);
    FILE *fp = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
    if (!fp || fwrite(b.p, 1, b.len, fp) != b.len || (fp != stdout && fclose(fp) != 0))
        s_die(1, "%s: %s", out, strerror(errno));
    fprintf(stderr,
            "rackfit-bench gen %s: %d nodes (%d racks, %d blocks), %d gangs, %lld pods, %lld GPUs (%lld free), "
            "%lld GPUs asked (contention %.2f), %zu bytes\n",
            kind, (int)st.nodes, (int)st.racks, (int)st.blocks, (int)st.gangs, (long long)st.pods,
            (long long)st.gpus_total, (long long)st.gpus_free, (long long)st.gpus_requested,
            st.gpus_free ? (double)st.gpus_requested / (double)st.gpus_free : 0.0, b.len);
    rf__jw_fini(&b);
    return 0;
}

static void s_parse_common(s_cfg_t *cfg, int argc, char **argv, int first, const char **files, int *n_files)
{
    int n_dummy = 0;
    if (!n_files)
        n_files = &n_dummy;
    *n_files = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--runs") == 0) {
            cfg->runs = (int)s_num(a, s_arg(argc, argv, &i));
            if (cfg->runs < 1 || cfg->runs > 10000)
                s_die(2, "--runs must be 1..10000");
        } else if (strcmp(a, "--out") == 0 || strcmp(a, "-o") == 0) {
            cfg->out = s_arg(argc, argv, &i);
        } else if (strcmp(a, "--models") == 0) {
            cfg->models = s_arg(argc, argv, &i);
        } else if (strcmp(a, "--answers") == 0) {
            cfg->answers = s_arg(argc, argv, &i);
        } else if (strcmp(a, "--skip-large") == 0) {
            cfg->skip_large = true;
        } else if (strcmp(a, "--no-pin") == 0) {
            cfg->pin = false;
        } else if (a[0] == '-' && a[1]) {
            s_die(2, "unknown flag %s\n%s", a, s_usage);
        } else if (files && *n_files < S_MAX_PROBLEMS) {
            files[(*n_files)++] = a;
        } else {
            s_die(2, "unexpected argument %s\n%s", a, s_usage);
        }
    }
}

static int s_solve_files(s_cfg_t *cfg, int argc, char **argv)
{
    const char *files[S_MAX_PROBLEMS];
    int n = 0;
    s_parse_common(cfg, argc, argv, 2, files, &n);
    if (n == 0)
        s_die(2, "solve: no FILE\n%s", s_usage);
    if (cfg->pin)
        s_pin_one_cpu();
    static s_result_t res[S_MAX_PROBLEMS];
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *text = s_read(files[i], &len);
        if (!text)
            s_die(1, "%s: %s", files[i], strerror(errno));
        const char *base = strrchr(files[i], '/');
        char name[96];
        snprintf(name, sizeof(name), "%s", base ? base + 1 : files[i]);
        char *dot = strstr(name, ".json");
        if (dot)
            *dot = '\0';
        s_measure(cfg, name, files[i], text, len, &res[i]);
        free(text);
    }
    s_emit_results(cfg, res, n, false);
    return 0;
}

/* The models directory: --models, else ./models, ../models, or next to the binary (build/bin/../../models). */
static const char *s_models_dir(const s_cfg_t *cfg, const char *argv0, char *buf, size_t cap)
{
    if (cfg->models)
        return cfg->models;
    const char *cands[] = {"models", "../models", "../../models"};
    char probe[1200];
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        snprintf(probe, sizeof(probe), "%s/tutorial.json", cands[i]);
        if (access(probe, R_OK) == 0)
            return cands[i];
    }
    const char *slash = strrchr(argv0, '/');
    if (slash) {
        snprintf(buf, cap, "%.*s/../../models", (int)(slash - argv0), argv0);
        snprintf(probe, sizeof(probe), "%s/tutorial.json", buf);
        if (access(probe, R_OK) == 0)
            return buf;
    }
    s_die(2, "cannot find the models directory (tutorial.json); pass --models DIR");
    return NULL;
}

static int s_suite(s_cfg_t *cfg, int argc, char **argv, bool full)
{
    s_parse_common(cfg, argc, argv, 2, NULL, NULL);
    char mbuf[1024];
    const char *models = s_models_dir(cfg, argv[0], mbuf, sizeof(mbuf));
    if (cfg->pin)
        s_pin_one_cpu();
    static s_result_t res[S_MAX_PROBLEMS];
    int n = 0;
    static const char *const files[] = {"tutorial", "gpu-1024", "lingjun-847"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[1200], src[200];
        snprintf(path, sizeof(path), "%s/%s.json", models, files[i]);
        snprintf(src, sizeof(src), "models/%s.json", files[i]);
        size_t len = 0;
        char *text = s_read(path, &len);
        if (!text)
            s_die(1, "%s: %s", path, strerror(errno));
        s_measure(cfg, files[i], src, text, len, &res[n++]);
        free(text);
    }
    if (!cfg->skip_large) {
        bench_gen_opts_t o;
        bench_gen_opts_fabric(&o);
        rf__jw_t b;
        rf__jw_init(&b);
        rf_error_t err;
        rf_error_clear(&err);
        if (bench_gen_fabric(&o, &b, NULL, &err) != RF_OK)
            s_die(1, "gen fabric: %s", err.message);
        s_measure(cfg, "fabric-16384",
                  "generated in memory: `rackfit-bench gen fabric --seed 1` (16x32x32, 1000 gangs)", b.p, b.len,
                  &res[n++]);
        rf__jw_fini(&b);
    }
    s_emit_results(cfg, res, n, full);
    return 0;
}

/* ---- preempt: the batch models with running gangs ---------------------------------------------------------------
 *
 * rackfit-bench preempt [--models DIR] [--runs N] [--skip-large] [--fill F] [--seed S] [--limit-ms L] [--out FILE]
 *
 * For each batch model, its running-gang variant (bench_gen_running, gen.h)
 * made in memory, solved by greedy, ilp and auto (time limit L, default
 * 1,000 ms) and the Kueue-style baselines with preemption (kueue-preempt)
 * and without (kueue), all through
 * rf_solve_with on one thread, N runs each (median time, min, max); every
 * answer is checked by rf_check (an infeasible one stops the run, exit 3)
 * and the last run's answer is the one reported. Prints a markdown section. */

#define S_PRE_STRATEGIES 5

typedef struct {
    bool ran;
    double ms, ms_min, ms_max, cpu_ms;
    int32_t admitted;
    int64_t new_pods;  /* new pods placed */
    int32_t preempted; /* running gangs preempted */
    int64_t gpus_evicted;
    int64_t pods_evicted;
    rf_value_t value[S_MAX_PRIOS];
    int32_t n_value;
    double penalty;
    int32_t optimal; /* runs whose answer was proven optimal */
    int vs_greedy;   /* rf_answer_compare(greedy, this) sign; 2: not compared */
    const char *mode_used;
} s_pre_q_t;

typedef struct {
    char name[64];
    int32_t nodes, gangs, running;
    bench_run_stats_t rs;
    int64_t asked_high; /* GPUs asked by pending gangs of priority >= 100 */
    s_pre_q_t q[S_PRE_STRATEGIES];
} s_pre_result_t;

static const char *const s_pre_names[S_PRE_STRATEGIES] = {"greedy", "ilp", "auto", "kueue-preempt", "kueue"};

static void s_pre_quality(const rf_problem_t *p, const rf_answer_t *a, s_pre_q_t *q)
{
    q->admitted = a->summary.admitted;
    q->penalty = a->summary.penalty;
    q->n_value = a->summary.n_value < S_MAX_PRIOS ? a->summary.n_value : S_MAX_PRIOS;
    for (int32_t i = 0; i < q->n_value; i++)
        q->value[i] = a->summary.value[i];
    q->new_pods = 0;
    for (int32_t g = 0; g < a->n_gangs; g++)
        for (int32_t j = 0; a->gangs[g].admitted && a->gangs[g].pod_sets && j < p->gangs[g].n_pod_sets; j++)
            for (int32_t i = 0; i < a->gangs[g].pod_sets[j].n_placements; i++)
                q->new_pods += a->gangs[g].pod_sets[j].placements[i].count;
    q->preempted = 0;
    q->gpus_evicted = q->pods_evicted = 0;
    for (int32_t v = 0; v < a->n_running; v++)
        if (a->running[v].preempted) {
            q->preempted++;
            q->gpus_evicted += p->running[v].units;
            q->pods_evicted += p->running[v].pods;
        }
    q->mode_used = a->summary.mode_used;
}

static void s_pre_measure(const s_cfg_t *cfg, const char *name, const rf_problem_t *base, const bench_run_opts_t *ro,
                          int64_t limit_ms, s_pre_result_t *res)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->name, sizeof(res->name), "%s", name);
    rf__jw_t b;
    rf__jw_init(&b);
    rf_error_t err;
    rf_error_clear(&err);
    if (bench_gen_running(base, ro, &b, &res->rs, &err) != RF_OK)
        s_die(1, "%s: gen running: %s", name, err.message);
    rf_limits_t lim;
    s_limits(&lim);
    rf_problem_t *p = NULL;
    if (rf_problem_from_json(b.p, b.len, &lim, &p, &err) != RF_OK)
        s_die(1, "%s: the running variant does not parse: %s at %s", name, err.message, err.path);
    rf__jw_fini(&b);
    res->nodes = p->n_nodes;
    res->gangs = p->n_gangs;
    res->running = p->n_running;
    int32_t vr = p->options.value_resource;
    for (int32_t g = 0; g < p->n_gangs && vr >= 0; g++)
        if (p->gangs[g].priority >= 100)
            for (int32_t j = 0; j < p->gangs[g].n_pod_sets; j++)
                res->asked_high += p->gangs[g].pod_sets[j].count * p->gangs[g].pod_sets[j].requests[vr];

    double *t = malloc((size_t)cfg->runs * sizeof(double));
    double *cpu = malloc((size_t)cfg->runs * sizeof(double));
    if (!t || !cpu)
        s_die(1, "out of memory");
    rf_answer_t *greedy = NULL;
    for (int k = 0; k < S_PRE_STRATEGIES; k++) {
        const rf_strategy_t *strategy = k == 3   ? &bench_strategy_kueue_preempt
                                        : k == 4 ? &bench_strategy_kueue
                                                 : rf_strategy_find(s_pre_names[k]);
        s_pre_q_t *q = &res->q[k];
        q->vs_greedy = 2;
        if (!strategy) {
            fprintf(stderr, "rackfit-bench: warning: no strategy \"%s\" in this build\n", s_pre_names[k]);
            continue;
        }
        rf_solve_opts_t opts;
        rf_solve_opts_default(&opts);
        opts.threads = 1;
        opts.time_limit_ms = limit_ms;
        bench_extra_t extra;
        rf_answer_t *a = NULL;
        for (int i = 0; i < cfg->runs; i++) {
            rf_answer_destroy(&a);
            memset(&extra, 0, sizeof extra);
            opts.user = &extra;
            opts.start_ms = 0;
            rf_error_clear(&err);
            double c0 = s_cpu_ms();
            double t0 = rf_now_ms();
            rf_status st = rf_solve_with(strategy, p, &opts, &a, &err);
            t[i] = rf_now_ms() - t0;
            cpu[i] = s_cpu_ms() - c0;
            if (st != RF_OK)
                s_die(1, "%s: %s failed: %s: %s", name, strategy->name, rf_status_code(st), err.message);
            s_verify(p, a, name, s_pre_names[k]);
            q->optimal += a->summary.optimal;
        }
        char label[96];
        snprintf(label, sizeof(label), "%s-running", name);
        s_save_answer(cfg, a, label, s_pre_names[k]);
        double mn, mx, cmn, cmx;
        s_stats(t, cfg->runs, &q->ms, &mn, &mx);
        s_stats(cpu, cfg->runs, &q->cpu_ms, &cmn, &cmx);
        q->ms_min = mn;
        q->ms_max = mx;
        q->ran = true;
        s_pre_quality(p, a, q);
        if (k == 0) {
            greedy = a;
            continue;
        }
        if (greedy) {
            int cmp = rf_answer_compare(greedy, a);
            q->vs_greedy = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
        }
        rf_answer_destroy(&a);
    }
    rf_answer_destroy(&greedy);
    free(t);
    free(cpu);
    rf_problem_destroy(&p);
    fprintf(stderr, "rackfit-bench preempt: %s: %d running gangs, greedy %.1f ms, kueue-preempt %.1f ms\n", name,
            (int)res->running, res->q[0].ms, res->q[3].ms);
}

static void s_loadavg(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *fp = fopen("/proc/loadavg", "r");
    if (!fp)
        return;
    double a = 0, b = 0, c = 0;
    if (fscanf(fp, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
    fclose(fp);
}

static void s_pre_emit(const s_cfg_t *cfg, const s_pre_result_t *r, int n, const bench_run_opts_t *ro, int64_t limit_ms,
                       const char *load0, const char *load1)
{
    rf__jw_t o;
    rf__jw_init(&o);
    s_machine(&o, cfg);
    rf__jw_printf(&o, "- Load average (1, 5, 15 min): %s at the start, %s at the end\n", load0, load1);
    rf__jw_printf(&o,
                  "- Variants: `bench_gen_running` with fill %.2f, seed %llu; ilp and auto with a %lld ms "
                  "limit, one thread\n\n",
                  ro->fill, (unsigned long long)ro->seed, (long long)limit_ms);
    rf__jw_printf(&o, "| model | nodes | pending gangs | GPUs asked at priority >= 100 | running gangs (not "
                      "preemptible) | their GPUs (at priority 0) | free GPUs before -> after |\n");
    rf__jw_printf(&o, "|---|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++)
        rf__jw_printf(&o, "| %s | %d | %d | %lld | %d (%d) | %lld (%lld) | %lld -> %lld |\n", r[i].name,
                      (int)r[i].nodes, (int)r[i].gangs, (long long)r[i].asked_high, (int)r[i].rs.running,
                      (int)r[i].rs.not_preemptible, (long long)r[i].rs.running_gpus,
                      (long long)r[i].rs.running_gpus_low, (long long)r[i].rs.gpus_free_before,
                      (long long)r[i].rs.gpus_free_after);
    rf__jw_printf(&o, "\n| model | strategy | solve ms: median [min, max] | CPU ms | admitted | new pods | value "
                      "per priority (GPUs, running kept included) | preempted gangs | GPUs evicted | penalty | "
                      "vs greedy | proven optimal |\n");
    rf__jw_printf(&o, "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|\n");
    static const char *const vs[] = {"greedy better", "equal", "better than greedy", "—"};
    for (int i = 0; i < n; i++)
        for (int k = 0; k < S_PRE_STRATEGIES; k++) {
            const s_pre_q_t *q = &r[i].q[k];
            if (!q->ran) {
                rf__jw_printf(&o, "| %s | %s | not available | | | | | | | | | |\n", r[i].name, s_pre_names[k]);
                continue;
            }
            rf__jw_printf(&o, "| %s | %s | %.2f [%.2f, %.2f] | %.1f | %d | %lld | ", r[i].name, s_pre_names[k], q->ms,
                          q->ms_min, q->ms_max, q->cpu_ms, (int)q->admitted, (long long)q->new_pods);
            for (int32_t v = 0; v < q->n_value; v++)
                rf__jw_printf(&o, "%s%lld: %lld", v ? " · " : "", (long long)q->value[v].priority,
                              (long long)q->value[v].units);
            rf__jw_printf(&o, " | %d | %lld | %.0f | %s | %d of %d |\n", (int)q->preempted, (long long)q->gpus_evicted,
                          q->penalty, vs[q->vs_greedy + 1], (int)q->optimal, cfg->runs);
        }
    rf__jw_printf(&o, "\n");
    s_emit_report(cfg, &o);
}

static int s_preempt_suite(s_cfg_t *cfg, int argc, char **argv)
{
    bench_run_opts_t ro;
    bench_run_opts_default(&ro);
    int64_t limit_ms = 1000;
    /* Our own flags first; the rest are the suite's. */
    int kept = 2;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--fill") == 0)
            ro.fill = s_num(argv[i], s_arg(argc, argv, &i));
        else if (strcmp(argv[i], "--seed") == 0)
            ro.seed = strtoull(s_arg(argc, argv, &i), NULL, 0);
        else if (strcmp(argv[i], "--limit-ms") == 0)
            limit_ms = (int64_t)s_num(argv[i], s_arg(argc, argv, &i));
        else
            argv[kept++] = argv[i];
    }
    s_parse_common(cfg, kept, argv, 2, NULL, NULL);
    char mbuf[1024], load0[64], load1[64];
    const char *models = s_models_dir(cfg, argv[0], mbuf, sizeof(mbuf));
    if (cfg->pin)
        s_pin_one_cpu();
    s_loadavg(load0, sizeof(load0));
    static s_pre_result_t res[S_MAX_PROBLEMS];
    int n = 0;
    rf_limits_t lim;
    s_limits(&lim);
    rf_error_t err;
    static const char *const files[] = {"tutorial", "gpu-1024", "lingjun-847"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/%s.json", models, files[i]);
        rf_problem_t *p = NULL;
        rf_error_clear(&err);
        if (rf_problem_from_json_file(path, &lim, &p, &err) != RF_OK)
            s_die(1, "%s: %s", path, err.message);
        s_pre_measure(cfg, files[i], p, &ro, limit_ms, &res[n++]);
        rf_problem_destroy(&p);
    }
    if (!cfg->skip_large) {
        bench_gen_opts_t o;
        bench_gen_opts_fabric(&o);
        rf__jw_t b;
        rf__jw_init(&b);
        rf_error_clear(&err);
        if (bench_gen_fabric(&o, &b, NULL, &err) != RF_OK)
            s_die(1, "gen fabric: %s", err.message);
        rf_problem_t *p = NULL;
        if (rf_problem_from_json(b.p, b.len, &lim, &p, &err) != RF_OK)
            s_die(1, "fabric-16384: %s", err.message);
        rf__jw_fini(&b);
        s_pre_measure(cfg, "fabric-16384", p, &ro, limit_ms, &res[n++]);
        rf_problem_destroy(&p);
    }
    s_loadavg(load1, sizeof(load1));
    s_pre_emit(cfg, res, n, &ro, limit_ms, load0, load1);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------------------------ */

int bench_service_main(int argc, char **argv); /* bench/service.c */
int bench_ilp_main(int argc, char **argv);     /* bench/ilp.c */
int bench_watch_main(int argc, char **argv);   /* bench/watch.c */
int bench_sim_main(int argc, char **argv);     /* bench/sim_main.c */

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(s_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    s_cfg_t cfg = {.runs = 7, .pin = true};
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof(cfg.cmdline); i++) {
        const char *a = i == 0 ? "rackfit-bench" : argv[i];
        int w = snprintf(cfg.cmdline + used, sizeof(cfg.cmdline) - used, "%s%s", i ? " " : "", a);
        if (w < 0)
            break;
        used += (size_t)w;
        if (used >= sizeof(cfg.cmdline))
            used = sizeof(cfg.cmdline) - 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "gen") == 0)
        return s_gen(argc, argv);
    if (strcmp(cmd, "solve") == 0)
        return s_solve_files(&cfg, argc, argv);
    if (strcmp(cmd, "run") == 0)
        return s_suite(&cfg, argc, argv, false);
    if (strcmp(cmd, "report") == 0)
        return s_suite(&cfg, argc, argv, true);
    if (strcmp(cmd, "preempt") == 0)
        return s_preempt_suite(&cfg, argc, argv);
    if (strcmp(cmd, "service") == 0)
        return bench_service_main(argc, argv);
    if (strcmp(cmd, "ilp") == 0)
        return bench_ilp_main(argc, argv);
    if (strcmp(cmd, "watch") == 0)
        return bench_watch_main(argc, argv);
    if (strcmp(cmd, "sim") == 0)
        return bench_sim_main(argc, argv);
    s_die(2, "unknown command %s\n%s", cmd, s_usage);
    return 2;
}
