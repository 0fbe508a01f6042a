/* bench/sim_report.c: the simulator's outputs (sim_report.h): CSV, markdown,
 * gnuplot scripts and their PNG/SVG, and a self-contained report.html.
 *
 * Times in the tables and plots are hours; utilisation is a fraction of all
 * GPUs of the cluster. Plot data are time-weighted averages over
 * S_BINS equal bins of the longest makespan (util.csv) and nearest-rank
 * quantiles at every percent (jct_cdf.csv, wait_cdf.csv). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"
#include "sim_report.h"

#define S_BINS      200
#define S_N_CLASSES 5

/* ---- local methods --------------------------------------------------------------------------------------------- */

static const char *const s_class_names[S_N_CLASSES] = {"1", "2-8", "9-64", "65-256", ">256"};

static int32_t s_class(int32_t gpus)
{
    return gpus <= 1 ? 0 : gpus <= 8 ? 1 : gpus <= 64 ? 2 : gpus <= 256 ? 3 : 4;
}

static FILE *s_open(const char *dir, const char *name, char *path, size_t cap, rf_error_t *err)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        rf_error_set(err, RF_EIO, "", "%s: %s", path, strerror(errno));
    return fp;
}

static rf_status s_close(FILE *fp, const char *path, rf_error_t *err)
{
    bool bad = ferror(fp) != 0;
    if (fclose(fp) != 0 || bad)
        return rf_error_set(err, RF_EIO, "", "%s: write failed", path);
    return RF_OK;
}

static void s_run_name(const sim_run_t *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s_%s", sim_policy_name(r->policy), r->comm_on ? "on" : "off");
}

/* A CSV header: `first`, then for each run its name followed by each of
 * `suffixes` (NULL-terminated; {""} for the bare name), one line. */
static void s_csv_header(FILE *fp, const char *first, const sim_run_t *runs, int32_t n_runs,
                         const char *const *suffixes)
{
    fputs(first, fp);
    for (int32_t k = 0; k < n_runs; k++) {
        char rn[32];
        s_run_name(&runs[k], rn, sizeof(rn));
        for (const char *const *x = suffixes; *x; x++)
            fprintf(fp, ",%s%s", rn, *x);
    }
    fputc('\n', fp);
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted JCTs (wait = false) or queueing delays of the finished jobs, hours. */
static double *s_sorted(const sim_result_t *r, bool wait, int32_t *n)
{
    double *v = malloc((size_t)r->n_jobs * sizeof(double) + 1);
    *n = 0;
    for (int32_t i = 0; v && i < r->n_jobs; i++)
        if (r->jobs[i].finished)
            v[(*n)++] = ((wait ? r->jobs[i].start : r->jobs[i].end) - r->jobs[i].submit) / 3600.0;
    if (v)
        qsort(v, (size_t)*n, sizeof(double), s_cmp_double);
    return v;
}

static rf_status s_cdf_csv(const char *dir, const char *name, const sim_run_t *runs, int32_t n_runs, bool wait,
                           rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, name, path, sizeof(path), err);
    if (!fp)
        return err->code;
    double *v[2 * SIM_N_POLICIES];
    int32_t n[2 * SIM_N_POLICIES];
    static const char *const bare[] = {"", NULL};
    s_csv_header(fp, "quantile", runs, n_runs, bare);
    for (int32_t k = 0; k < n_runs; k++)
        v[k] = s_sorted(&runs[k].res, wait, &n[k]);
    for (int32_t q = 1; q <= 100; q++) {
        fprintf(fp, "%.2f", q / 100.0);
        for (int32_t k = 0; k < n_runs; k++) {
            if (!v[k] || n[k] == 0) {
                fprintf(fp, ",");
                continue;
            }
            int32_t i = (int32_t)ceil(q / 100.0 * n[k]) - 1;
            fprintf(fp, ",%.6g", v[k][i < 0 ? 0 : (i >= n[k] ? n[k] - 1 : i)]);
        }
        fprintf(fp, "\n");
    }
    for (int32_t k = 0; k < n_runs; k++)
        free(v[k]);
    return s_close(fp, path, err);
}

/* Time-weighted mean of sample field `f` (0 alloc, 1 eff) over [a, b). */
static double s_bin(const sim_result_t *r, int f, double a, double b)
{
    double sum = 0;
    for (int32_t k = 0; k < r->n_samples; k++) {
        double t0 = r->samples[k].t, t1 = k + 1 < r->n_samples ? r->samples[k + 1].t : t0;
        double lo = t0 > a ? t0 : a, hi = t1 < b ? t1 : b;
        if (hi > lo)
            sum += (f == 0 ? r->samples[k].alloc : r->samples[k].eff) * (hi - lo);
    }
    return b > a ? sum / (b - a) : 0;
}

static rf_status s_util_csv(const char *dir, const sim_run_t *runs, int32_t n_runs, double G, rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "util.csv", path, sizeof(path), err);
    if (!fp)
        return err->code;
    double span = 0;
    for (int32_t k = 0; k < n_runs; k++)
        span = runs[k].res.makespan > span ? runs[k].res.makespan : span;
    static const char *const util[] = {"_alloc", "_eff", NULL};
    s_csv_header(fp, "hours", runs, n_runs, util);
    for (int32_t b = 0; b < S_BINS && span > 0; b++) {
        double a = span * b / S_BINS, e = span * (b + 1) / S_BINS;
        fprintf(fp, "%.6g", (a + e) / 2 / 3600.0);
        for (int32_t k = 0; k < n_runs; k++)
            fprintf(fp, ",%.5f,%.5f", s_bin(&runs[k].res, 0, a, e) / G, s_bin(&runs[k].res, 1, a, e) / G);
        fprintf(fp, "\n");
    }
    return s_close(fp, path, err);
}

static rf_status s_spread_csv(const char *dir, const sim_run_t *runs, int32_t n_runs, rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "spread.csv", path, sizeof(path), err);
    if (!fp)
        return err->code;
    static const char *const spread[] = {"_racks", "_jobs", NULL};
    s_csv_header(fp, "gpus", runs, n_runs, spread);
    for (int32_t c = 0; c < S_N_CLASSES; c++) {
        fprintf(fp, "%s", s_class_names[c]);
        for (int32_t k = 0; k < n_runs; k++) {
            const sim_result_t *r = &runs[k].res;
            double racks = 0;
            int32_t n = 0;
            for (int32_t i = 0; i < r->n_jobs; i++)
                if (r->jobs[i].finished && s_class(r->jobs[i].gpus) == c) {
                    racks += r->jobs[i].racks;
                    n++;
                }
            fprintf(fp, ",%.4f,%d", n ? racks / n : 0.0, (int)n);
        }
        fprintf(fp, "\n");
    }
    return s_close(fp, path, err);
}

static rf_status s_jobs_csv(const char *dir, const sim_run_t *runs, int32_t n_runs, const sim_trace_t *t,
                            rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "jobs.csv", path, sizeof(path), err);
    if (!fp)
        return err->code;
    fprintf(fp, "policy,comm,job,model,family,gpus,pods,submit_s,first_pod_s,start_s,end_s,duration_s,sigma,hosts,"
                "racks,blocks,finished,preempted,priority\n");
    for (int32_t k = 0; k < n_runs; k++)
        for (int32_t i = 0; i < runs[k].res.n_jobs; i++) {
            const sim_job_result_t *j = &runs[k].res.jobs[i];
            fprintf(fp, "%s,%s,%s,%s,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%d,%d,%d,%d,%d,%lld\n",
                    sim_policy_name(runs[k].policy), runs[k].comm_on ? "on" : "off", t->jobs[i].name, t->jobs[i].model,
                    comm_family_name(t->jobs[i].family), (int)j->gpus, (int)j->pods, j->submit, j->first_pod, j->start,
                    j->end, t->jobs[i].duration, j->sigma, (int)j->hosts, (int)j->racks, (int)j->blocks,
                    j->finished ? 1 : 0, (int)j->preempted, (long long)t->jobs[i].priority);
        }
    return s_close(fp, path, err);
}

static void s_row(FILE *fp, const sim_run_t *r, bool html)
{
    const sim_result_t *x = &r->res;
    char kube[96] = "-";
    if (r->policy == SIM_KUBE)
        snprintf(kube, sizeof(kube), "%d / %d / %.3g / %d%s", (int)x->partial_jobs, (int)x->partial_peak, x->idle_gpu_h,
                 (int)x->deadlocks, x->deadlocked_at_end ? " (at end)" : "");
    const char *b = html ? "<tr><td>" : "| ", *m = html ? "</td><td>" : " | ", *e = html ? "</td></tr>\n" : " |\n";
    fprintf(fp,
            "%s%s%s%d/%d%s%.3g%s%.3g%s%.3g%s%.3g%s%.3g%s%.3g%s%.3f%s%.3f%s%.1f%s%d / %d / %d%s%.3f%s%d%s%s%s%d%s%.0f / "
            "%.0f%s%.1f%s",
            b, sim_policy_name(r->policy), m, (int)x->finished, (int)(x->finished + x->unfinished), m,
            x->jct_mean / 3600, m, x->jct_p50 / 3600, m, x->jct_p99 / 3600, m, x->wait_mean / 3600, m,
            x->wait_p99 / 3600, m, x->makespan / 3600, m, x->u_alloc, m, x->u_eff, m, x->frag_mean, m,
            (int)x->multi_host, (int)x->span_racks, (int)x->span_blocks, m, x->sigma_mean, m, (int)x->preemptions, m,
            kube, m, (int)x->rounds, m, x->solve_ms, x->solve_ms_max, m, x->wall_ms / 1000, e);
}

static const char s_head[] = "policy | done | JCT mean | JCT p50 | JCT p99 | wait mean | wait p99 | makespan | "
                             "U alloc | U eff | frag GPUs | multi-host / >1 rack / >1 block | sigma | preempted | "
                             "kube partial / peak / idle GPU-h / deadlocks | rounds | solve ms total / max | wall s";

static rf_status s_summary_csv(const char *dir, const sim_run_t *runs, int32_t n_runs, rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "summary.csv", path, sizeof(path), err);
    if (!fp)
        return err->code;
    fprintf(fp, "policy,comm,finished,unfinished,too_big,jct_mean_h,jct_p50_h,jct_p99_h,wait_mean_h,wait_p50_h,"
                "wait_p99_h,makespan_h,u_alloc,u_eff,frag_gpus,multi_host,span_racks,span_blocks,sigma_mean,"
                "partial_jobs,partial_peak,idle_gpu_h,deadlocks,deadlock_h,deadlocked_at_end,rounds,solve_ms,"
                "solve_ms_max,wall_ms,preemptions\n");
    for (int32_t k = 0; k < n_runs; k++) {
        const sim_result_t *x = &runs[k].res;
        fprintf(fp,
                "%s,%s,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.5f,%.5f,%.4f,%d,%d,%d,%.5f,%d,%d,%.5g,%d,%.5g,%d,"
                "%d,%.1f,%.1f,%.1f,%d\n",
                sim_policy_name(runs[k].policy), runs[k].comm_on ? "on" : "off", (int)x->finished, (int)x->unfinished,
                (int)x->too_big, x->jct_mean / 3600, x->jct_p50 / 3600, x->jct_p99 / 3600, x->wait_mean / 3600,
                x->wait_p50 / 3600, x->wait_p99 / 3600, x->makespan / 3600, x->u_alloc, x->u_eff, x->frag_mean,
                (int)x->multi_host, (int)x->span_racks, (int)x->span_blocks, x->sigma_mean, (int)x->partial_jobs,
                (int)x->partial_peak, x->idle_gpu_h, (int)x->deadlocks, x->deadlock_s / 3600,
                x->deadlocked_at_end ? 1 : 0, (int)x->rounds, x->solve_ms, x->solve_ms_max, x->wall_ms,
                (int)x->preemptions);
    }
    return s_close(fp, path, err);
}

/* The gnuplot script of the four plots, each as PNG and SVG. */
static rf_status s_gnuplot(const char *dir, const sim_run_t *runs, int32_t n_runs, bool *drawn, rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "plots.gp", path, sizeof(path), err);
    if (!fp)
        return err->code;
    fprintf(fp, "# gnuplot script written by rackfit-bench sim; run from this directory: gnuplot plots.gp\n"
                "set datafile separator ','\nset grid\nset key outside right top\n");
    static const struct {
        const char *name, *title, *xl, *yl, *csv;
        int kind; /* 0 util, 1 cdf, 2 spread */
    } plots[] = {
        {"util", "GPU utilisation over time (solid: allocated, dashed: effective)", "hours", "fraction of GPUs",
         "util.csv", 0},
        {"jct_cdf", "Job completion time CDF (solid: comm on, dashed: comm off)", "JCT (hours, log)",
         "fraction of jobs", "jct_cdf.csv", 1},
        {"wait_cdf", "Queueing delay CDF (solid: comm on, dashed: comm off)", "queueing delay (hours)",
         "fraction of jobs", "wait_cdf.csv", 1},
        {"spread", "Racks spanned per job, by job size", "job size (GPUs)", "mean racks per job", "spread.csv", 2},
    };
    bool want = false; /* util and spread show the comm-on runs, or the comm-off ones when there are none */
    for (int32_t k = 0; k < n_runs; k++)
        want = want || runs[k].comm_on;
    for (size_t p = 0; p < sizeof(plots) / sizeof(plots[0]); p++) {
        for (int fmt = 0; fmt < 2; fmt++) {
            fprintf(fp, "\nset terminal %s size 900,480\nset output '%s.%s'\nset title \"%s\"\n",
                    fmt ? "svg dynamic" : "pngcairo", plots[p].name, fmt ? "svg" : "png", plots[p].title);
            fprintf(fp, "set xlabel '%s'\nset ylabel '%s'\nunset logscale\n", plots[p].xl, plots[p].yl);
            if (plots[p].kind == 1 && strstr(plots[p].xl, "log"))
                fprintf(fp, "set logscale x\n");
            if (plots[p].kind == 2)
                fprintf(fp, "set style data histograms\nset style histogram cluster gap 1\nset style fill solid 0.8\n"
                            "set yrange [0:*]\n");
            else
                fprintf(fp, "set style data lines\nset yrange [0:*]\n");
            fprintf(fp, "plot ");
            int col = 2, first = 1;
            for (int32_t k = 0; k < n_runs; k++) {
                int lc = (int)runs[k].policy + 1;
                if (plots[p].kind == 0) {
                    if (runs[k].comm_on == want)
                        fprintf(fp, "%s'%s' using 1:%d lw 2 lc %d title '%s', '%s' using 1:%d lw 2 dt 2 lc %d notitle",
                                first ? "" : ", ", plots[p].csv, col, lc, sim_policy_name(runs[k].policy), plots[p].csv,
                                col + 1, lc);
                    first = first && runs[k].comm_on != want;
                    col += 2;
                } else if (plots[p].kind == 1) {
                    bool dashed = !runs[k].comm_on && want;
                    fprintf(fp, "%s'%s' using %d:1 lw 2 lc %d%s", first ? "" : ", ", plots[p].csv, col, lc,
                            dashed ? " dt 2" : "");
                    if (dashed)
                        fprintf(fp, " notitle");
                    else
                        fprintf(fp, " title '%s'", sim_policy_name(runs[k].policy));
                    first = 0;
                    col++;
                } else {
                    if (runs[k].comm_on == want)
                        fprintf(fp, "%s'%s' using %d:xtic(1) lc %d title '%s'", first ? "" : ", ", plots[p].csv, col,
                                lc, sim_policy_name(runs[k].policy));
                    first = first && runs[k].comm_on != want;
                    col += 2;
                }
            }
            fprintf(fp, "\n");
        }
    }
    RF_CALL(s_close(fp, path, err));
    *drawn = false;
    if (system("command -v gnuplot >/dev/null 2>&1") != 0)
        return RF_OK;
    char cmd[1300];
    snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot plots.gp 2>plots.log", dir);
    *drawn = system(cmd) == 0;
    return RF_OK;
}

static void s_html_esc(FILE *fp, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", fp);
        else if (*s == '>')
            fputs("&gt;", fp);
        else if (*s == '&')
            fputs("&amp;", fp);
        else if (*s == '"')
            fputs("&quot;", fp);
        else
            fputc(*s, fp);
}

/* The SVG file's <svg ...>...</svg> element, inline. */
static void s_inline_svg(FILE *fp, const char *dir, const char *name)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/%s.svg", dir, name);
    char *text = NULL;
    size_t len = 0;
    rf_error_t e;
    if (rf__read_file(path, 16u << 20, &text, &len, &e) != RF_OK) {
        fprintf(fp, "<p>(plot %s.svg missing)</p>\n", name);
        return;
    }
    const char *svg = strstr(text, "<svg");
    fputs(svg ? svg : "", fp);
    free(text);
}

static rf_status s_html(const char *dir, const sim_report_params_t *p, const sim_run_t *runs, int32_t n_runs,
                        bool plots, rf_error_t *err)
{
    char path[1100];
    FILE *fp = s_open(dir, "report.html", path, sizeof(path), err);
    if (!fp)
        return err->code;
    fprintf(fp, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rackfit-bench sim</title>\n"
                "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;"
                "font-size:13px}td,th{border:1px solid #bbb;padding:3px 6px;text-align:right}td:first-child,"
                "th:first-child{text-align:left}code{background:#eee}</style></head><body>\n"
                "<h1>rackfit-bench sim</h1>\n<h2>Run</h2>\n<table>\n<tr><td>command</td><td><code>");
    s_html_esc(fp, p->cmdline);
    fprintf(fp, "</code></td></tr>\n<tr><td>trace</td><td>");
    s_html_esc(fp, p->trace_path);
    fprintf(fp, " (%s format): %d jobs replayed of %d rows (%d skipped)</td></tr>\n", p->trace->format,
            (int)p->trace->n, (int)p->trace->rows, (int)p->trace->skipped);
    fprintf(fp, "<tr><td>cluster</td><td>");
    s_html_esc(fp, p->cluster->desc);
    fprintf(fp, ": %d nodes, %lld GPUs, %d GPUs per host</td></tr>\n", (int)p->cluster->n_nodes,
            (long long)p->cluster->total_gpus, (int)p->cluster->g_host);
    fprintf(fp,
            "<tr><td>options</td><td>seed %llu, hours %g (0: all), jobs %d (0: all), size scale %g, time scale %g, "
            "pod GPUs %d (0: host), round %lld ms, max queue %d, admission %s, max time %g s, preemption %s, "
            "drawn high-priority share %g</td></tr>\n",
            (unsigned long long)p->trace_opts->seed, p->trace_opts->hours, (int)p->trace_opts->max_jobs,
            p->trace_opts->size_scale, p->trace_opts->time_scale, (int)p->opts->pod_gpus, (long long)p->opts->round_ms,
            (int)p->opts->max_queue, p->opts->admission == RF_ADMIT_VALUE ? "value" : "ordered", p->opts->max_time,
            p->opts->preempt ? "when priorities differ" : "off", p->trace_opts->high_share);
    fprintf(fp,
            "<tr><td>communication model</td><td>NVLink %g GB/s, NIC %g GB/s per GPU, contention %s, "
            "oversubscription by level above hosts:",
            p->comm->b_intra, p->comm->nu, p->comm->contention ? "on" : "off");
    for (int32_t u = 1; u < p->cluster->L; u++)
        fprintf(fp, " %d: %g:1 (floor %g)", (int)u, p->comm->oversub[u], p->comm->kappa_floor[u]);
    fprintf(fp, "</td></tr>\n<tr><td>machine</td><td>");
    s_html_esc(fp, p->machine);
    fprintf(fp, "; the whole command took %.1f s</td></tr>\n</table>\n", p->wall_s);
    for (int on = 1; on >= 0; on--) {
        fprintf(fp, "<h2>Results, communication model %s</h2>\n<table>\n<tr>", on ? "on" : "off");
        char head[sizeof(s_head)];
        snprintf(head, sizeof(head), "%s", s_head);
        for (char *tok = strtok(head, "|"); tok; tok = strtok(NULL, "|"))
            fprintf(fp, "<th>%s</th>", tok);
        fprintf(fp, "</tr>\n");
        for (int32_t k = 0; k < n_runs; k++)
            if (runs[k].comm_on == on)
                s_row(fp, &runs[k], true);
        fprintf(fp, "</table>\n");
    }
    fprintf(fp, "<p>Times in hours; utilisation as a fraction of all GPUs; sigma: mean stretch of multi-host jobs "
                "(time taken / duration on a packed placement). Per-job data: <a href=\"jobs.csv\">jobs.csv</a>, "
                "summary: <a href=\"summary.csv\">summary.csv</a>.</p>\n<h2>Plots</h2>\n");
    static const char *const names[] = {"util", "jct_cdf", "wait_cdf", "spread"};
    static const char *const csvs[] = {"util.csv", "jct_cdf.csv", "wait_cdf.csv", "spread.csv"};
    for (int i = 0; i < 4; i++) {
        if (plots)
            s_inline_svg(fp, dir, names[i]);
        else
            fprintf(fp, "<p>(no plot: gnuplot was not found; install gnuplot-nox)</p>\n");
        fprintf(fp, "<p>data: <a href=\"%s\">%s</a>%s%s%s</p>\n", csvs[i], csvs[i], plots ? ", PNG: <a href=\"" : "",
                plots ? names[i] : "", plots ? ".png\">here</a>" : "");
    }
    fprintf(fp, "</body></html>\n");
    return s_close(fp, path, err);
}

/* ---- public API ------------------------------------------------------------------------------------------------ */

void sim_report_table(FILE *fp, const sim_run_t *runs, int32_t n_runs, bool on)
{
    fprintf(fp, "| %s |\n|", s_head);
    for (const char *c = s_head; *c; c++)
        if (*c == '|')
            fprintf(fp, "---|");
    fprintf(fp, "---|\n");
    for (int32_t k = 0; k < n_runs; k++)
        if (runs[k].comm_on == on)
            s_row(fp, &runs[k], false);
}

rf_status sim_report_mkdir(const char *dir, rf_error_t *err)
{
    char path[1024];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path) || !*path)
        return rf_error_set(err, RF_EINVAL, "", "--out: empty or too long a path");
    for (char *q = path + 1;; q++) {
        bool end = *q == '\0';
        if (*q == '/' || end) {
            *q = '\0';
            struct stat st;
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return rf_error_set(err, RF_EIO, "", "%s: %s", path, strerror(errno));
            if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
                return rf_error_set(err, RF_EIO, "", "%s: not a directory", path);
            if (end)
                break;
            *q = '/';
        }
    }
    return RF_OK;
}

rf_status sim_report_write(const char *dir, const sim_report_params_t *p, const sim_run_t *runs, int32_t n_runs,
                           bool *plots, rf_error_t *err)
{
    *plots = false;
    RF_CALL(sim_report_mkdir(dir, err));
    RF_CALL(s_summary_csv(dir, runs, n_runs, err));
    RF_CALL(s_jobs_csv(dir, runs, n_runs, p->trace, err));
    RF_CALL(s_util_csv(dir, runs, n_runs, (double)p->cluster->total_gpus, err));
    RF_CALL(s_cdf_csv(dir, "jct_cdf.csv", runs, n_runs, false, err));
    RF_CALL(s_cdf_csv(dir, "wait_cdf.csv", runs, n_runs, true, err));
    RF_CALL(s_spread_csv(dir, runs, n_runs, err));
    char path[1100];
    FILE *fp = s_open(dir, "summary.md", path, sizeof(path), err);
    if (!fp)
        return err->code;
    for (int on = 1; on >= 0; on--) {
        fprintf(fp, "%sCommunication model %s (times in hours):\n\n", on ? "" : "\n", on ? "on" : "off");
        sim_report_table(fp, runs, n_runs, on);
    }
    RF_CALL(s_close(fp, path, err));
    RF_CALL(s_gnuplot(dir, runs, n_runs, plots, err));
    return s_html(dir, p, runs, n_runs, *plots, err);
}
