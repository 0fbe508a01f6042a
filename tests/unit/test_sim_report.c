/* tests/unit/test_sim_report.c: the simulator's outputs (bench/sim_report.c).
 *
 * The hand scenario of test_sim.c, run by two policies, written out: every
 * file is there, the summary has one row per run with the hand-worked
 * figures, the CDF quantiles are the jobs' own times, utilisation stays in
 * [0, 1], and report.html carries the parameters; a --out that is a file is
 * an error naming it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "file.h"
#include "sim_report.h"

static char *s_slurp(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *text = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 0, &text, &len, &err), RF_OK, "%s", err.message);
    return text;
}

Test(sim_report, writes_every_output)
{
    rf_error_t err;
    rf_error_clear(&err);
    sim_cluster_t c;
    cr_assert_eq(sim_cluster_load("fabric:1x2x2x4", &c, &err), RF_OK, "%s", err.message);
    sim_trace_opts_t to;
    sim_trace_opts_default(&to);
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/sim/hand.csv", RF_SOURCE_DIR);
    sim_trace_t t;
    cr_assert_eq(sim_trace_read(path, &to, &t, &err), RF_OK, "%s", err.message);
    comm_profile_t cp;
    comm_profile_default(&cp);
    cp.on = false;
    sim_opts_t so;
    sim_opts_default(&so);
    sim_run_t runs[2] = {{.policy = SIM_KUBE}, {.policy = SIM_GREEDY}};
    for (int i = 0; i < 2; i++) {
        so.policy = runs[i].policy;
        cr_assert_eq(sim_run(&c, &t, &cp, &so, &runs[i].res, &err), RF_OK, "%s", err.message);
    }
    char dir[] = "/tmp/test_sim_report_XXXXXX";
    cr_assert(mkdtemp(dir));
    char out[600];
    snprintf(out, sizeof(out), "%s/a/b", dir); /* parents are created */
    sim_report_params_t rp = {.cmdline = "rackfit-bench sim --test <&>",
                              .trace_path = path,
                              .trace = &t,
                              .trace_opts = &to,
                              .cluster = &c,
                              .cluster_spec = "fabric:1x2x2x4",
                              .opts = &so,
                              .comm = &cp,
                              .wall_s = 1.5,
                              .machine = "test"};
    bool plots = false;
    cr_assert_eq(sim_report_write(out, &rp, runs, 2, &plots, &err), RF_OK, "%s", err.message);

    char *sum = s_slurp(out, "summary.csv");
    /* kube: JCT of Y 5, X 15, Z 6 s (test_sim.c): mean 26/3 s; greedy: 10, 15, 2 s: mean 9 s */
    char want[128];
    snprintf(want, sizeof(want), "\nkube,off,3,0,0,%.6g,", 26.0 / 3 / 3600);
    cr_expect(strstr(sum, want) != NULL, "%s not in\n%s", want, sum);
    snprintf(want, sizeof(want), "\ngreedy,off,3,0,0,%.6g,", 9.0 / 3600);
    cr_expect(strstr(sum, want) != NULL, "%s not in\n%s", want, sum);
    free(sum);
    char *cdf = s_slurp(out, "jct_cdf.csv");
    cr_expect(strncmp(cdf, "quantile,kube_off,greedy_off\n", 29) == 0, "%.40s", cdf);
    snprintf(want, sizeof(want), "\n1.00,%.6g,%.6g\n", 15.0 / 3600, 15.0 / 3600);
    cr_expect(strstr(cdf, want) != NULL, "%s not in\n%s", want, cdf);
    snprintf(want, sizeof(want), "\n0.01,%.6g,%.6g\n", 5.0 / 3600, 2.0 / 3600);
    cr_expect(strstr(cdf, want) != NULL, "%s not in\n%s", want, cdf);
    free(cdf);
    char *util = s_slurp(out, "util.csv");
    int rows = 0;
    for (char *line = strchr(util, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double h, a1, e1, a2, e2;
        cr_assert_eq(sscanf(line + 1, "%lf,%lf,%lf,%lf,%lf", &h, &a1, &e1, &a2, &e2), 5);
        cr_expect(a1 >= 0 && a1 <= 1 && e1 <= a1 + 1e-9 && a2 >= 0 && a2 <= 1, "%.60s", line + 1);
        rows++;
    }
    cr_expect_eq(rows, 200);
    free(util);
    char *md = s_slurp(out, "summary.md");
    cr_expect(strstr(md, "| kube | 3/3 |") != NULL);
    free(md);
    char *html = s_slurp(out, "report.html");
    cr_expect(strstr(html, "rackfit-bench sim --test &lt;&amp;&gt;") != NULL, "the command, escaped");
    cr_expect(strstr(html, "fabric 1 blocks x 2 racks x 2 hosts x 4 GPUs") != NULL);
    cr_expect(plots ? strstr(html, "<svg") != NULL : strstr(html, "gnuplot was not found") != NULL);
    free(html);

    /* a file where the directory should be */
    snprintf(out, sizeof(out), "%s/a/b/summary.csv/x", dir);
    cr_expect_eq(sim_report_write(out, &rp, runs, 2, &plots, &err), RF_EIO);
    cr_expect(strstr(err.message, "not a directory") != NULL, "%s", err.message);

    char cmd[700];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    for (int i = 0; i < 2; i++)
        sim_result_fini(&runs[i].res);
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}
