/* tests/unit/test_sim.c: the simulator's event loop and rounds (bench/sim.c).
 *
 * Hand-sized scenarios whose completion times are worked out by hand in the
 * comments and matched exactly, for every policy; a kube deadlock; the
 * communication model's stretch applied to a job's run time; the cluster
 * specs and their errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "sim.h"

static void s_load(sim_cluster_t *c, sim_trace_t *t, const char *cluster, const char *trace)
{
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(sim_cluster_load(cluster, c, &err), RF_OK, "%s", err.message);
    sim_trace_opts_t to;
    sim_trace_opts_default(&to);
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/sim/%s", RF_SOURCE_DIR, trace);
    cr_assert_eq(sim_trace_read(path, &to, t, &err), RF_OK, "%s", err.message);
}

static void s_run(const sim_cluster_t *c, const sim_trace_t *t, sim_policy_id pol, bool comm_on, sim_result_t *r)
{
    comm_profile_t cp;
    comm_profile_default(&cp);
    cp.on = comm_on;
    sim_opts_t o;
    sim_opts_default(&o);
    o.policy = pol;
    o.round_ms = 2000; /* the ILP proves these tiny rounds optimal long before */
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(sim_run(c, t, &cp, &o, r, &err), RF_OK, "%s: %s", sim_policy_name(pol), err.message);
}

static void s_expect(const sim_result_t *r, int32_t job, double start, double end, const char *what)
{
    cr_assert(r->jobs[job].finished, "%s: job %d unfinished", what, (int)job);
    cr_expect_eq(r->jobs[job].start, start, "%s: job %d started at %g, expected %g", what, (int)job, r->jobs[job].start,
                 start);
    cr_expect_eq(r->jobs[job].end, end, "%s: job %d ended at %g, expected %g", what, (int)job, r->jobs[job].end, end);
}

/* tests/data/sim/hand.csv on fabric:1x2x2x4 (4 hosts of 4 GPUs, 16 GPUs; pods of 4 GPUs), no communication cost:
 *   Y: t=0, 8 GPUs (2 pods), 5 s;  X: t=0, 12 GPUs (3 pods), 10 s;  Z: t=1, 4 GPUs (1 pod), 2 s.
 * Trace order (submit, then file row): Y = 0, X = 1, Z = 2. */
Test(sim, hand_scenario_every_policy)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x2x4", "hand.csv");
    cr_assert_eq(t.n, 3);
    cr_assert_str_eq(t.jobs[0].name, "Y");
    sim_result_t r;

    /* kube: no gangs; at t=0 the pods of Y and X (queued together) interleave: Y0, X0, Y1, X1 take the 4 hosts
     * and X2 stays pending. Y has both pods and runs 0..5; X holds 2 hosts idle. At t=1 Z's pod finds no room.
     * At t=5 Y ends: 2 hosts free; X2 and Z0 were both requeued at t=1, same place in their jobs, so X (earlier
     * in the trace) goes first: X completes and runs 5..15, Z runs 5..7. Idle: 8 GPUs x 5 s held by X. */
    s_run(&c, &t, SIM_KUBE, false, &r);
    s_expect(&r, 0, 0, 5, "kube");
    s_expect(&r, 1, 5, 15, "kube");
    s_expect(&r, 2, 5, 7, "kube");
    cr_expect_eq(r.jobs[1].first_pod, 0);
    cr_expect_eq(r.partial_jobs, 1);
    cr_expect(fabs(r.idle_gpu_h - 8.0 * 5.0 / 3600.0) < 1e-12, "idle %g", r.idle_gpu_h);
    cr_expect_eq(r.deadlocks, 0);
    sim_result_fini(&r);

    /* kueue: one gang at a time in queue order: Y (8) fits, then X (12) does not fit the 8 left; at t=1 Z (4)
     * fits: 1..3. At t=5 Y ends and X gets 12 of 16: 5..15. */
    s_run(&c, &t, SIM_KUEUE, false, &r);
    s_expect(&r, 0, 0, 5, "kueue");
    s_expect(&r, 1, 5, 15, "kueue");
    s_expect(&r, 2, 1, 3, "kueue");
    cr_expect_eq(r.partial_jobs, 0);
    sim_result_fini(&r);

    /* greedy, ilp, auto: the batch as one problem, most GPUs first: X (12) beats Y (8), and both do not fit;
     * X runs 0..10. Z fits the 4 left at t=1: 1..3. Y waits for X: 10..15. */
    for (sim_policy_id p = SIM_GREEDY; p <= SIM_AUTO; p++) {
        s_run(&c, &t, p, false, &r);
        s_expect(&r, 0, 10, 15, sim_policy_name(p));
        s_expect(&r, 1, 0, 10, sim_policy_name(p));
        s_expect(&r, 2, 1, 3, sim_policy_name(p));
        cr_expect_eq(r.makespan, 15);
        sim_result_fini(&r);
    }
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

/* tests/data/sim/deadlock.csv: A and B, 12 GPUs (3 pods) each, 10 s, both at t=0, on the same 4 hosts.
 * kube interleaves A0, B0, A1, B1: each holds 2 of the 3 hosts it needs, nothing runs, nothing will: a
 * deadlock to the end. The gang policies run A 0..10, then B 10..20. */
Test(sim, kube_deadlock)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x2x4", "deadlock.csv");
    sim_result_t r;
    s_run(&c, &t, SIM_KUBE, false, &r);
    cr_expect_eq(r.finished, 0);
    cr_expect_eq(r.unfinished, 2);
    cr_expect_eq(r.deadlocks, 1);
    cr_expect(r.deadlocked_at_end);
    cr_expect_eq(r.partial_jobs, 2);
    cr_expect_eq(r.partial_peak, 2);
    cr_expect_eq(r.samples[r.n_samples - 1].idle, 16);
    sim_result_fini(&r);
    for (sim_policy_id p = SIM_KUEUE; p <= SIM_AUTO; p++) {
        s_run(&c, &t, p, false, &r);
        s_expect(&r, 0, 0, 10, sim_policy_name(p));
        s_expect(&r, 1, 10, 20, sim_policy_name(p));
        cr_expect_eq(r.deadlocks, 0);
        sim_result_fini(&r);
    }
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

/* tests/data/sim/comm.csv: one cnn-dp job of 8 GPUs, 100 s, on fabric:1x2x1x4 (2 racks of one 4-GPU host): any
 * placement has 4 GPUs in each rack, so its ring crosses racks (kappa = the floor 1.1; its own uplink load is
 * far below). By hand (comm.h): T = 0.052 + 2*7/8 * 102.4e6 / B + 5 * (8.4e-6 + 2*(8-2)*3.4e-6 + 2*1*lam) with
 * B = min(370, 4*47/kappa) GB/s; packed reference: kappa 1, lam = 14e-6; here kappa 1.1, lam = 15e-6. */
Test(sim, comm_stretch_hand)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x1x4", "comm.csv");
    double ring = 2.0 * 7.0 / 8.0 * 102.4e6;
    double t_star = 0.052 + ring / (188e9) + 5 * (8.4e-6 + 12 * 3.4e-6 + 2 * 14e-6);
    double t_here = 0.052 + ring / (4 * 47 / 1.1 * 1e9) + 5 * (8.4e-6 + 12 * 3.4e-6 + 2 * 15e-6);
    double end = 100.0 * t_here / t_star;
    for (sim_policy_id p = SIM_KUBE; p <= SIM_AUTO; p++) {
        sim_result_t r;
        s_run(&c, &t, p, true, &r);
        cr_expect(fabs(r.jobs[0].end - end) < 1e-9, "%s: end %.12g, by hand %.12g", sim_policy_name(p), r.jobs[0].end,
                  end);
        cr_expect_eq(r.jobs[0].racks, 2);
        sim_result_fini(&r);
        s_run(&c, &t, p, false, &r);
        cr_expect_eq(r.jobs[0].end, 100, "%s without communication cost", sim_policy_name(p));
        sim_result_fini(&r);
    }
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

Test(sim, clusters_and_errors)
{
    sim_cluster_t c;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(sim_cluster_load("fabric:2x3x4", &c, &err), RF_OK, "%s", err.message);
    cr_expect_eq(c.n_nodes, 24);
    cr_expect_eq(c.total_gpus, 192);
    cr_expect_eq(c.n_dom[0], 2);
    cr_expect_eq(c.n_dom[1], 6);
    cr_expect_eq(c.n_dom[2], 24);
    cr_expect_eq(c.dom[1 * 24 + 0], c.dom[1 * 24 + 3]); /* hosts 0..3 share rack 0 */
    cr_expect_neq(c.dom[1 * 24 + 3], c.dom[1 * 24 + 4]);
    sim_cluster_fini(&c);
    char path[512];
    snprintf(path, sizeof(path), "tiresias:%s/tests/data/sim/n4g4.csv", RF_SOURCE_DIR);
    cr_assert_eq(sim_cluster_load(path, &c, &err), RF_OK, "%s", err.message);
    cr_expect_eq(c.L, 2);
    cr_expect_eq(c.n_nodes, 8);
    cr_expect_eq(c.g_host, 4);
    sim_cluster_fini(&c);
    snprintf(path, sizeof(path), "%s/models/tutorial.json", RF_SOURCE_DIR);
    cr_assert_eq(sim_cluster_load(path, &c, &err), RF_OK, "%s", err.message);
    cr_expect_eq(c.n_nodes, 15, "the cordoned host is dropped"); /* tutorial.json: 16 hosts, one cordoned */
    cr_expect_eq(c.dropped, 1);
    sim_cluster_fini(&c);
    cr_expect_eq(sim_cluster_load("fabric:2x0x4", &c, &err), RF_EINVAL);
    cr_expect(strstr(err.message, "fabric") != NULL, "%s", err.message);
    cr_expect_eq(sim_cluster_load("fabric:2x2", &c, &err), RF_EINVAL);
    cr_expect_neq(sim_cluster_load("/nonexistent/cluster.json", &c, &err), RF_OK);
    snprintf(path, sizeof(path), "tiresias:%s/tests/data/sim/hand.csv", RF_SOURCE_DIR);
    cr_expect_eq(sim_cluster_load(path, &c, &err), RF_EPARSE);
    cr_expect(strstr(err.message, "Tiresias cluster spec") != NULL, "%s", err.message);
    cr_expect_eq(sim_policy_find("kube"), SIM_KUBE);
    cr_expect_eq(sim_policy_find("slurm"), -1);
    rf_test_no_leaks();
}

Test(sim, pod_gpus_above_host_is_an_error)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x2x4", "hand.csv");
    comm_profile_t cp;
    comm_profile_default(&cp);
    sim_opts_t o;
    sim_opts_default(&o);
    o.pod_gpus = 8;
    sim_result_t r;
    rf_error_t err;
    rf_error_clear(&err);
    cr_expect_eq(sim_run(&c, &t, &cp, &o, &r, &err), RF_EINVAL);
    cr_expect(strstr(err.message, "--pod-gpus") != NULL, "%s", err.message);
    o.pod_gpus = 0;
    o.max_queue = 0;
    cr_expect_eq(sim_run(&c, &t, &cp, &o, &r, &err), RF_EINVAL);
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

/* tests/data/sim/limits.csv on 16 GPUs: `big` (32 GPUs) can never run and is counted apart; `small` runs 0..100;
 * `late` arrives at 50 and runs 50..60. With --max-time 55 the replay stops before `small` and `late` end. */
Test(sim, too_big_and_max_time)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x2x4", "limits.csv");
    sim_result_t r;
    s_run(&c, &t, SIM_GREEDY, false, &r);
    cr_expect_eq(r.too_big, 1);
    cr_expect_eq(r.unfinished, 0);
    cr_expect_eq(r.finished, 2);
    cr_expect(!r.jobs[0].finished);
    s_expect(&r, 1, 0, 100, "greedy");
    s_expect(&r, 2, 50, 60, "greedy");
    sim_result_fini(&r);
    comm_profile_t cp;
    comm_profile_default(&cp);
    cp.on = false;
    sim_opts_t o;
    sim_opts_default(&o);
    o.max_time = 55;
    rf_error_t err;
    cr_assert_eq(sim_run(&c, &t, &cp, &o, &r, &err), RF_OK, "%s", err.message);
    cr_expect_eq(r.finished, 0);
    cr_expect_eq(r.unfinished, 2);
    cr_expect_eq(r.jobs[2].start, 50);
    sim_result_fini(&r);
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}

/* tests/data/sim/preempt.csv on the same 16 GPUs: L (priority 0, 16 GPUs, 10 s) at t=0, H (priority 100, 8 GPUs,
 * 5 s) at t=2. greedy, ilp, auto: at t=2 H preempts L (its value at priority 100 beats keeping L), runs 2..7; L
 * waits with 8 s left and resumes at 7: 7..15 (first start 0, preempted once, 10 s run in all). The kube and kueue
 * baselines never preempt: L 0..10, H 10..15. Without preemption every policy runs it the kueue way. */
Test(sim, preemption_by_priority)
{
    sim_cluster_t c;
    sim_trace_t t;
    s_load(&c, &t, "fabric:1x2x2x4", "preempt.csv");
    cr_assert_eq(t.jobs[1].priority, 100);
    sim_result_t r;
    for (sim_policy_id p = SIM_KUBE; p <= SIM_AUTO; p++) {
        s_run(&c, &t, p, false, &r);
        bool pre = p >= SIM_GREEDY;
        s_expect(&r, 0, 0, pre ? 15 : 10, sim_policy_name(p));
        s_expect(&r, 1, pre ? 2 : 10, pre ? 7 : 15, sim_policy_name(p));
        cr_expect_eq(r.preemptions, pre ? 1 : 0, "%s", sim_policy_name(p));
        cr_expect_eq(r.jobs[0].preempted, pre ? 1 : 0);
        cr_expect_eq(r.jobs[0].sigma, 1.0, "L ran 10 s in all");
        sim_result_fini(&r);
    }
    comm_profile_t cp;
    comm_profile_default(&cp);
    cp.on = false;
    sim_opts_t o;
    sim_opts_default(&o);
    o.preempt = false;
    rf_error_t err;
    cr_assert_eq(sim_run(&c, &t, &cp, &o, &r, &err), RF_OK, "%s", err.message);
    s_expect(&r, 0, 0, 10, "greedy without preemption");
    s_expect(&r, 1, 10, 15, "greedy without preemption");
    sim_result_fini(&r);
    sim_trace_fini(&t);
    sim_cluster_fini(&c);
    rf_test_no_leaks();
}
