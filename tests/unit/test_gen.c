/* tests/unit/test_gen.c: the benchmark's problem generators (bench/gen.c):
 * the same options give the same bytes, another seed other bytes; the output
 * is a valid contract problem whose shape matches the reported stats and
 * that the greedy strategy solves feasibly; bad sizes are refused. The
 * running-gang variant: deterministic, valid, the running pods in used, the
 * greedy preempts on it (rf_check accepts its answer and the kueue
 * baseline's with preemption), and with nothing to fill it is the base problem again. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "bench.h"
#include "gen.h"
#include "rackfit/rackfit.h"

static void s_small(bench_gen_opts_t *o, uint64_t seed)
{
    bench_gen_opts_fabric(o);
    o->blocks = 2;
    o->racks = 3;
    o->hosts = 4;
    o->gangs = 20;
    o->seed = seed;
}

static char *s_gen(const bench_gen_opts_t *o, bench_gen_stats_t *st)
{
    rf__jw_t buf;
    rf__jw_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_fabric(o, &buf, st, &err), RF_OK, "%s", err.message);
    cr_assert_not(buf.oom);
    cr_assert_gt(buf.len, 0);
    char *text = strdup(buf.p);
    rf__jw_fini(&buf);
    return text;
}

Test(gen, same_seed_same_bytes_other_seed_other_bytes)
{
    bench_gen_opts_t o;
    bench_gen_stats_t s1, s2, s3;
    s_small(&o, 7);
    char *a = s_gen(&o, &s1);
    char *b = s_gen(&o, &s2);
    cr_assert_str_eq(a, b, "the same seed gave different problems");
    cr_assert_eq(memcmp(&s1, &s2, sizeof s1), 0);
    s_small(&o, 8);
    char *c = s_gen(&o, &s3);
    cr_assert_str_neq(a, c, "another seed gave the same problem");
    free(a);
    free(b);
    free(c);
    rf_test_no_leaks();
}

Test(gen, fabric_is_a_valid_problem_of_the_reported_shape)
{
    bench_gen_opts_t o;
    bench_gen_stats_t st;
    s_small(&o, 3);
    char *text = s_gen(&o, &st);
    cr_assert_eq(st.nodes, 2 * 3 * 4);
    cr_assert_eq(st.racks, 2 * 3);
    cr_assert_eq(st.blocks, 2);
    cr_assert_eq(st.gangs, 20);
    cr_assert_eq(st.gpus_total, 8 * st.nodes, "8 GPUs a host");
    cr_assert_leq(st.gpus_free, st.gpus_total);
    cr_assert_gt(st.gpus_requested, 0);
    cr_assert_geq(st.pods, st.gangs);

    rf_problem_t *pb = rf_test_parse(text);
    cr_assert_eq(pb->n_nodes, st.nodes);
    cr_assert_eq(pb->n_gangs, st.gangs);
    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 2000);
    rf_test_assert_feasible(pb, ans, "greedy on a generated fabric");
    rf_answer_destroy(&ans);
    rf_problem_destroy(&pb);
    free(text);
    rf_test_no_leaks();
}

Test(gen, bad_sizes_are_refused)
{
    bench_gen_opts_t o;
    s_small(&o, 1);
    o.racks = 0;
    rf__jw_t buf;
    rf__jw_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    cr_assert_neq(err.message[0], '\0', "the error says what is wrong");
    s_small(&o, 1);
    o.gangs = -1;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    s_small(&o, 1);
    o.load = 2.0;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    rf__jw_fini(&buf);
    rf_test_no_leaks();
}

Test(gen, lingjun_missing_topo_is_an_io_error)
{
    bench_gen_opts_t o;
    bench_gen_opts_lingjun(&o);
    o.topo = "/nonexistent/topo.csv";
    rf__jw_t buf;
    rf__jw_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_lingjun(&o, &buf, NULL, &err), RF_EIO);
    cr_assert(strstr(err.message, "topo") || strstr(err.path, "topo") || strstr(err.message, "nonexistent"), "%s",
              err.message);
    rf__jw_fini(&buf);
    rf_test_no_leaks();
}

/* ---- the running-gang variant (bench_gen_running) ---- */

static rf_problem_t *s_base(uint64_t seed)
{
    bench_gen_opts_t o;
    bench_gen_opts_fabric(&o);
    o.blocks = 2;
    o.racks = 4;
    o.hosts = 8;
    o.gangs = 40;
    o.seed = seed;
    char *text = s_gen(&o, NULL);
    rf_problem_t *pb = rf_test_parse(text);
    free(text);
    return pb;
}

static char *s_running(const rf_problem_t *base, uint64_t seed, double fill, bench_run_stats_t *st)
{
    bench_run_opts_t ro;
    bench_run_opts_default(&ro);
    ro.seed = seed;
    ro.fill = fill;
    rf__jw_t buf;
    rf__jw_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_running(base, &ro, &buf, st, &err), RF_OK, "%s", err.message);
    cr_assert_not(buf.oom);
    char *text = strdup(buf.p);
    rf__jw_fini(&buf);
    return text;
}

Test(gen, running_variant_same_seed_same_bytes_other_seed_other_bytes)
{
    rf_problem_t *base = s_base(5);
    bench_run_stats_t s1, s2, s3;
    char *a = s_running(base, 1, 0.6, &s1);
    char *b = s_running(base, 1, 0.6, &s2);
    char *c = s_running(base, 2, 0.6, &s3);
    cr_assert_str_eq(a, b, "the same seed gave different variants");
    cr_assert_eq(memcmp(&s1, &s2, sizeof s1), 0);
    cr_assert_str_neq(a, c, "another seed gave the same variant");
    free(a);
    free(b);
    free(c);
    rf_problem_destroy(&base);
    rf_test_no_leaks();
}

/* The variant is a valid problem: the base's nodes and gangs unchanged, the
 * running gangs the stats report (of priority 0 or 100, some not
 * preemptible), their pods in `used`; the greedy admits higher-priority
 * gangs by preempting, and rf_check accepts its answer and the kueue
 * baseline's. */
Test(gen, running_variant_is_valid_and_makes_the_greedy_preempt)
{
    rf_problem_t *base = s_base(5);
    bench_run_stats_t st;
    char *text = s_running(base, 1, 0.8, &st);
    rf_problem_t *pb = rf_test_parse(text);
    cr_assert_eq(pb->n_nodes, base->n_nodes);
    cr_assert_eq(pb->n_gangs, base->n_gangs);
    for (int32_t g = 0; g < pb->n_gangs; g++) {
        cr_assert_str_eq(pb->gangs[g].name, base->gangs[g].name);
        cr_assert_eq(pb->gangs[g].priority, base->gangs[g].priority);
        cr_assert_eq(pb->gangs[g].pod_sets[pb->gangs[g].n_pod_sets - 1].count,
                     base->gangs[g].pod_sets[base->gangs[g].n_pod_sets - 1].count);
    }
    cr_assert_gt(st.running, 0);
    cr_assert_eq(pb->n_running, st.running);
    int32_t not_preemptible = 0;
    int64_t gpus = 0, used_before = 0, used_after = 0;
    int32_t vr = pb->options.value_resource;
    for (int32_t v = 0; v < pb->n_running; v++) {
        cr_assert(pb->running[v].priority == 0 || pb->running[v].priority == 100);
        not_preemptible += !pb->running[v].preemptible;
        gpus += pb->running[v].units;
    }
    for (int32_t n = 0; n < pb->n_nodes; n++) {
        used_before += base->nodes[n].used[vr];
        used_after += pb->nodes[n].used[vr];
    }
    cr_assert_eq(not_preemptible, st.not_preemptible);
    cr_assert_eq(gpus, st.running_gpus);
    cr_assert_eq(used_after - used_before, gpus, "the running pods are in used");
    cr_assert_eq(st.gpus_free_before - st.gpus_free_after, gpus);
    cr_assert_geq(gpus * 10, st.gpus_free_before * 8 - 10 * 64, "filled close to 0.8 of the free GPUs");

    rf_answer_t *ans = rf_test_solve(pb, RF_MODE_GREEDY, 1, 2000);
    rf_test_assert_feasible(pb, ans, "greedy on a running-gang variant");
    cr_assert_gt(ans->summary.preempted, 0, "the variant makes the greedy preempt");
    rf_answer_destroy(&ans);

    rf_solve_opts_t opts;
    rf_solve_opts_default(&opts);
    opts.threads = 1;
    rf_error_t err;
    cr_assert_eq(rf_solve_with(&bench_strategy_kueue_preempt, pb, &opts, &ans, &err), RF_OK, "%s", err.message);
    rf_test_assert_feasible(pb, ans, "kueue-preempt on a running-gang variant");
    cr_assert_gt(ans->summary.preempted, 0, "the variant makes the baseline preempt too");
    rf_answer_destroy(&ans);

    rf_problem_destroy(&pb);
    free(text);
    rf_problem_destroy(&base);
    rf_test_no_leaks();
}

/* With fill 0 the variant is the base problem written back: the same greedy
 * answer (value per priority and penalty). The tutorial's features (bound
 * pods, slices, taints, tolerations, selectors, cordons, a launcher, an
 * elastic gang) go through the writer. */
Test(gen, running_variant_with_nothing_to_fill_is_the_base_problem)
{
    rf_problem_t *base = NULL;
    rf_error_t err;
    cr_assert_eq(rf_problem_from_json_file(RF_SOURCE_DIR "/models/tutorial.json", NULL, &base, &err), RF_OK, "%s",
                 err.message);
    bench_run_stats_t st;
    char *text = s_running(base, 1, 0.0, &st);
    cr_assert_eq(st.running, 0);
    rf_problem_t *pb = rf_test_parse(text);
    rf_answer_t *a = rf_test_solve(base, RF_MODE_GREEDY, 1, 2000);
    rf_answer_t *b = rf_test_solve(pb, RF_MODE_GREEDY, 1, 2000);
    cr_assert_eq(a->summary.n_value, b->summary.n_value);
    for (int32_t i = 0; i < a->summary.n_value; i++) {
        cr_assert_eq(a->summary.value[i].priority, b->summary.value[i].priority);
        cr_assert_eq(a->summary.value[i].units, b->summary.value[i].units);
        cr_assert_eq(a->summary.value[i].pods, b->summary.value[i].pods);
    }
    cr_assert_float_eq(a->summary.penalty, b->summary.penalty, 1e-9);
    for (int32_t g = 0; g < a->n_gangs; g++)
        cr_assert_eq(a->gangs[g].admitted, b->gangs[g].admitted, "gang %s", base->gangs[g].name);
    rf_answer_destroy(&a);
    rf_answer_destroy(&b);
    rf_problem_destroy(&pb);
    free(text);
    rf_problem_destroy(&base);
    rf_test_no_leaks();
}

Test(gen, running_variant_refuses_a_fill_outside_0_1)
{
    rf_problem_t *base = s_base(1);
    bench_run_opts_t ro;
    bench_run_opts_default(&ro);
    ro.fill = 1.5;
    rf__jw_t buf;
    rf__jw_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_running(base, &ro, &buf, NULL, &err), RF_EINVAL);
    cr_assert_neq(err.message[0], '\0');
    rf__jw_fini(&buf);
    rf_problem_destroy(&base);
    rf_test_no_leaks();
}
