/* bench/sim_main.c: `rackfit-bench sim`, the command line of the
 * trace-driven simulator (docs/simulator.md).
 *
 *   rackfit-bench sim --trace FILE --cluster SPEC --policy NAME[,NAME...] --out DIR
 *                     [--seed S] [--hours H] [--jobs N] [--size-scale K] [--time-scale F]
 *                     [--pod-gpus G] [--round-ms MS] [--max-queue N] [--admission value|ordered]
 *                     [--max-time S] [--oversub U=R,...] [--no-contention] [--comm on|off|both]
 *                     [--high-share X] [--no-preempt]
 *
 * Every policy runs on the same arrivals, once with the communication model
 * and once without (--comm both, the default), and the report compares them.
 * A progress bar goes to standard error when it is a terminal; otherwise the
 * command prints only its summary. Exit 0 on success, 1 on a run error, 2 on
 * bad usage. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock.h"
#include "sim.h"
#include "sim_report.h"

static const char s_usage[] =
    "usage: rackfit-bench sim --trace FILE --cluster SPEC --policy NAME[,NAME...] --out DIR [options]\n"
    "  --trace FILE[,...]  Tiresias, Pollux, Alibaba openb or sim CSV (by its header); several: merged\n"
    "  --cluster SPEC      a contract JSON file (models/gpu-1024.json), fabric:BxRxH[xG], or tiresias:SPEC.csv\n"
    "  --policy LIST       kube, kueue, greedy, ilp, auto (comma-separated; all: every one)\n"
    "  --out DIR           where the CSV, plots and report.html go\n"
    "  --seed S            seed of drawn trace fields (Pollux durations), default 1\n"
    "  --hours H           replay the jobs submitted in the first H hours (default all)\n"
    "  --jobs N            replay the first N jobs (default all)\n"
    "  --size-scale K      multiply every job's GPUs by K (default 1)\n"
    "  --time-scale F      divide submission times by F (default 1)\n"
    "  --pod-gpus G        GPUs per pod (default: the host size)\n"
    "  --round-ms MS       time limit of one ilp/auto round (default 200)\n"
    "  --max-queue N       waiting jobs (kube: pods) handed to one round (default 512)\n"
    "  --admission A       value (default) or ordered\n"
    "  --max-time S        stop the replay at simulated second S (default: when all jobs are done)\n"
    "  --oversub U=R,...   uplink oversubscription U levels above hosts (default 1=1,2=7)\n"
    "  --no-contention     no uplink sharing between jobs\n"
    "  --high-share X      traces without priorities: this share of jobs (drawn by seed) gets priority 100\n"
    "  --no-preempt        never preempt (by default, when priorities differ, running jobs may be preempted)\n"
    "  --comm on|off|both  with the communication model, without, or both (default both)\n";

static void s_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rackfit-bench sim: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(code);
}

static double s_num(const char *flag, const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi))
        s_die(2, "%s: expected a number in [%g, %g], got '%s'", flag, lo, hi, v);
    return x;
}

typedef struct {
    const char *label;
    double t0;
    double last;
} s_progress_t;

static void s_progress(void *ctx, double now, int32_t done, int32_t total)
{
    s_progress_t *p = ctx;
    double t = rf__now();
    if (t - p->last < 0.1 && done < total)
        return;
    p->last = t;
    int width = 30, fill = total > 0 ? (int)((double)done * width / total) : width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '-';
    bar[width] = '\0';
    fprintf(stderr, "\r%-16s [%s] %5.1f%%  sim %.2f h  %d/%d jobs  %.1f s", p->label, bar,
            total ? 100.0 * done / total : 100.0, now / 3600.0, (int)done, (int)total, t - p->t0);
    fflush(stderr);
}

static void s_oversub(comm_profile_t *cp, const char *v)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int u = 0;
        double r = 0;
        if (sscanf(tok, "%d=%lf", &u, &r) != 2 || u < 1 || u >= RF_MAX_LEVELS || !(r >= 1 && r <= 1000))
            s_die(2, "--oversub: expected U=R with 1 <= U < %d and 1 <= R <= 1000, got '%s'", RF_MAX_LEVELS, tok);
        cp->oversub[u] = r;
    }
}

typedef struct {
    const char *trace, *cluster, *policies, *out;
    sim_trace_opts_t to;
    sim_opts_t so;
    comm_profile_t cp;
    int comm; /* 1 on, 0 off, 2 both */
} s_args_t;

static void s_parse(int argc, char **argv, s_args_t *a)
{
    memset(a, 0, sizeof(*a));
    sim_trace_opts_default(&a->to);
    sim_opts_default(&a->so);
    comm_profile_default(&a->cp);
    a->comm = 2;
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "--no-contention") == 0) {
            a->cp.contention = false;
            continue;
        }
        if (strcmp(f, "--no-preempt") == 0) {
            a->so.preempt = false;
            continue;
        }
        if (strcmp(f, "-h") == 0 || strcmp(f, "--help") == 0) {
            fputs(s_usage, stdout);
            exit(0);
        }
        if (i + 1 >= argc)
            s_die(2, "%s needs a value (or is unknown)\n%s", f, s_usage);
        const char *v = argv[++i];
        if (strcmp(f, "--trace") == 0)
            a->trace = v;
        else if (strcmp(f, "--cluster") == 0)
            a->cluster = v;
        else if (strcmp(f, "--policy") == 0)
            a->policies = v;
        else if (strcmp(f, "--out") == 0)
            a->out = v;
        else if (strcmp(f, "--seed") == 0)
            a->to.seed = (uint64_t)s_num(f, v, 0, 9007199254740992.0);
        else if (strcmp(f, "--hours") == 0)
            a->to.hours = s_num(f, v, 0, 1e7);
        else if (strcmp(f, "--jobs") == 0)
            a->to.max_jobs = (int32_t)s_num(f, v, 0, 1e8);
        else if (strcmp(f, "--size-scale") == 0)
            a->to.size_scale = s_num(f, v, 1e-3, 1e4);
        else if (strcmp(f, "--time-scale") == 0)
            a->to.time_scale = s_num(f, v, 1e-3, 1e6);
        else if (strcmp(f, "--pod-gpus") == 0)
            a->so.pod_gpus = (int32_t)s_num(f, v, 0, 1024);
        else if (strcmp(f, "--round-ms") == 0)
            a->so.round_ms = (int64_t)s_num(f, v, 1, 3.6e6);
        else if (strcmp(f, "--max-queue") == 0)
            a->so.max_queue = (int32_t)s_num(f, v, 1, 1e7);
        else if (strcmp(f, "--high-share") == 0)
            a->to.high_share = s_num(f, v, 0, 1);
        else if (strcmp(f, "--max-time") == 0)
            a->so.max_time = s_num(f, v, 0, 1e12);
        else if (strcmp(f, "--oversub") == 0)
            s_oversub(&a->cp, v);
        else if (strcmp(f, "--admission") == 0) {
            if (strcmp(v, "value") && strcmp(v, "ordered"))
                s_die(2, "--admission: value or ordered, got '%s'", v);
            a->so.admission = strcmp(v, "value") == 0 ? RF_ADMIT_VALUE : RF_ADMIT_ORDERED;
        } else if (strcmp(f, "--comm") == 0) {
            if (strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "both"))
                s_die(2, "--comm: on, off or both, got '%s'", v);
            a->comm = strcmp(v, "on") == 0 ? 1 : strcmp(v, "off") == 0 ? 0 : 2;
        } else
            s_die(2, "unknown flag %s\n%s", f, s_usage);
    }
    if (!a->trace || !a->cluster || !a->policies || !a->out)
        s_die(2, "--trace, --cluster, --policy and --out are required\n%s", s_usage);
}

int bench_sim_main(int argc, char **argv); /* called by bench/main.c */

int bench_sim_main(int argc, char **argv)
{
    double t_start = rf__now();
    s_args_t a;
    s_parse(argc, argv, &a);
    sim_policy_id pol[SIM_N_POLICIES];
    int32_t n_pol = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", strcmp(a.policies, "all") == 0 ? "kube,kueue,greedy,ilp,auto" : a.policies);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int32_t p = sim_policy_find(tok);
        if (p < 0)
            s_die(2, "--policy: unknown policy '%s' (kube, kueue, greedy, ilp, auto)", tok);
        for (int32_t k = 0; k < n_pol; k++)
            if ((int32_t)pol[k] == p)
                s_die(2, "--policy: '%s' given twice", tok);
        pol[n_pol++] = (sim_policy_id)p;
    }
    rf_error_t err;
    rf_error_clear(&err);
    if (sim_report_mkdir(a.out, &err) != RF_OK)
        s_die(1, "%s", err.message);
    sim_cluster_t c;
    if (sim_cluster_load(a.cluster, &c, &err) != RF_OK)
        s_die(1, "%s", err.message);
    sim_trace_t t;
    if (sim_trace_read(a.trace, &a.to, &t, &err) != RF_OK) {
        sim_cluster_fini(&c);
        s_die(1, "%s", err.message);
    }
    bool tty = isatty(STDERR_FILENO);
    sim_run_t runs[2 * SIM_N_POLICIES];
    int32_t n_runs = 0;
    for (int32_t on = 1; on >= 0; on--) {
        if (a.comm != 2 && a.comm != on)
            continue;
        for (int32_t k = 0; k < n_pol; k++) {
            comm_profile_t cp = a.cp;
            cp.on = on;
            sim_opts_t so = a.so;
            so.policy = pol[k];
            char label[32];
            snprintf(label, sizeof(label), "%s/comm-%s", sim_policy_name(pol[k]), on ? "on" : "off");
            s_progress_t pr = {.label = label, .t0 = rf__now()};
            if (tty) {
                so.progress = s_progress;
                so.progress_ctx = &pr;
            }
            sim_run_t *r = &runs[n_runs];
            r->policy = pol[k];
            r->comm_on = on;
            rf_status st = sim_run(&c, &t, &cp, &so, &r->res, &err);
            if (tty)
                fprintf(stderr, "\n");
            if (st != RF_OK) {
                for (int32_t i = 0; i < n_runs; i++)
                    sim_result_fini(&runs[i].res);
                sim_trace_fini(&t);
                sim_cluster_fini(&c);
                s_die(1, "%s: %s", label, err.message);
            }
            n_runs++;
        }
    }
    char cmdline[1024];
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof(cmdline); i++) {
        int w = snprintf(cmdline + used, sizeof(cmdline) - used, "%s%s", i ? " " : "", i ? argv[i] : "rackfit-bench");
        used = w < 0 ? used : (used + (size_t)w >= sizeof(cmdline) ? sizeof(cmdline) - 1 : used + (size_t)w);
    }
    sim_report_params_t rp = {.cmdline = cmdline,
                              .trace_path = a.trace,
                              .trace = &t,
                              .trace_opts = &a.to,
                              .cluster = &c,
                              .cluster_spec = a.cluster,
                              .opts = &a.so,
                              .comm = &a.cp};
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(rp.machine, sizeof(rp.machine), "%s %s %s, %ld CPUs", u.sysname, u.release, u.machine,
                 sysconf(_SC_NPROCESSORS_ONLN));
    rp.wall_s = rf__now() - t_start;
    bool plots = false;
    rf_status st = sim_report_write(a.out, &rp, runs, n_runs, &plots, &err);
    if (st == RF_OK) {
        printf("rackfit-bench sim: %d jobs (%s), %s, %d runs in %.1f s; report: %s/report.html%s\n", (int)t.n, t.format,
               c.desc, (int)n_runs, rp.wall_s, a.out, plots ? "" : " (no plots: gnuplot not found)");
        for (int32_t on = 1; on >= 0; on--)
            if (a.comm == 2 || a.comm == on) {
                printf("\ncommunication model %s:\n\n", on ? "on" : "off");
                sim_report_table(stdout, runs, n_runs, on);
            }
    }
    for (int32_t i = 0; i < n_runs; i++)
        sim_result_fini(&runs[i].res);
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    if (st != RF_OK)
        s_die(1, "%s", err.message);
    return 0;
}
