/* tests/unit/test_gen.c: the benchmark's problem generators (bench/gen.c):
 * the same options give the same bytes, another seed other bytes; the output
 * is a valid contract problem whose shape matches the reported stats and
 * that the greedy strategy solves feasibly; bad sizes are refused. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
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
    bench_buf_t buf;
    bench_buf_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_fabric(o, &buf, st, &err), RF_OK, "%s", err.message);
    cr_assert_not(buf.oom);
    cr_assert_gt(buf.len, 0);
    char *text = strdup(buf.data);
    bench_buf_fini(&buf);
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
    bench_buf_t buf;
    bench_buf_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    cr_assert_neq(err.message[0], '\0', "the error says what is wrong");
    s_small(&o, 1);
    o.gangs = -1;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    s_small(&o, 1);
    o.load = 2.0;
    cr_assert_eq(bench_gen_fabric(&o, &buf, NULL, &err), RF_EINVAL);
    bench_buf_fini(&buf);
    rf_test_no_leaks();
}

Test(gen, lingjun_missing_topo_is_an_io_error)
{
    bench_gen_opts_t o;
    bench_gen_opts_lingjun(&o);
    o.topo = "/nonexistent/topo.csv";
    bench_buf_t buf;
    bench_buf_init(&buf);
    rf_error_t err;
    cr_assert_eq(bench_gen_lingjun(&o, &buf, NULL, &err), RF_EIO);
    cr_assert(strstr(err.message, "topo") || strstr(err.path, "topo") || strstr(err.message, "nonexistent"), "%s",
              err.message);
    bench_buf_fini(&buf);
    rf_test_no_leaks();
}
