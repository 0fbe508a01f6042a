/* tests/unit/test_trace.c: the simulator's trace readers (bench/trace.c).
 *
 * Each published format read from a small extract (tests/data/sim), field by
 * field against the extract's rows; the filters and scalings; deterministic
 * Pollux durations; clear errors on bad input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "trace.h"

static rf_status s_read(const char *name, const sim_trace_opts_t *o, sim_trace_t *t, rf_error_t *err)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/sim/%s", RF_SOURCE_DIR, name);
    return sim_trace_read(path, o, t, err);
}

static rf_status s_read_text(const char *text, sim_trace_t *t, rf_error_t *err)
{
    char path[] = "/tmp/test_trace_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    rf_status st = sim_trace_read(path, &o, t, err);
    unlink(path);
    return st;
}

Test(trace, tiresias)
{
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    sim_trace_t t;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(s_read("tiresias-10.csv", &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_str_eq(t.format, "tiresias");
    cr_expect_eq(t.n, 10);
    /* row 2: `1,8,30,133,vgg11,147,23` */
    cr_expect_str_eq(t.jobs[1].name, "1");
    cr_expect_eq(t.jobs[1].gpus, 8);
    cr_expect_eq(t.jobs[1].submit, 30);
    cr_expect_eq(t.jobs[1].duration, 147);
    cr_expect_str_eq(t.jobs[1].model, "vgg11");
    cr_expect_eq(t.jobs[1].family, COMM_CNN);
    for (int32_t i = 1; i < t.n; i++)
        cr_expect(t.jobs[i].submit >= t.jobs[i - 1].submit);
    sim_trace_fini(&t);
    o.size_scale = 4;
    o.time_scale = 2;
    o.max_jobs = 3;
    cr_assert_eq(s_read("tiresias-10.csv", &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_eq(t.n, 3);
    cr_expect_eq(t.skipped, 7);
    cr_expect_eq(t.jobs[1].gpus, 32);
    cr_expect_eq(t.jobs[1].submit, 15);
    cr_expect_eq(t.jobs[1].family, COMM_LLM_DP, "32 GPUs: modelled as llm-dp (llm_dp_from)");
    sim_trace_fini(&t);
    rf_test_no_leaks();
}

Test(trace, pollux_durations_drawn_per_seed)
{
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    sim_trace_t a, b, c;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(s_read("pollux-10.csv", &o, &a, &err), RF_OK, "%s", err.message);
    cr_assert_eq(s_read("pollux-10.csv", &o, &b, &err), RF_OK, "%s", err.message);
    o.seed = 2;
    cr_assert_eq(s_read("pollux-10.csv", &o, &c, &err), RF_OK, "%s", err.message);
    cr_expect_str_eq(a.format, "pollux");
    cr_expect_eq(a.n, 10);
    /* first row `cifar10-0,107,cifar10,1,128`: submit is relative to the first job */
    cr_expect_str_eq(a.jobs[0].name, "cifar10-0");
    cr_expect_eq(a.jobs[0].submit, 0);
    cr_expect_eq(a.jobs[1].submit, 110 - 107);
    bool differ = false;
    for (int32_t i = 0; i < a.n; i++) {
        cr_expect_eq(a.jobs[i].duration, b.jobs[i].duration, "same seed, same duration");
        cr_expect(a.jobs[i].duration > 0);
        differ = differ || a.jobs[i].duration != c.jobs[i].duration;
    }
    cr_expect(differ, "another seed draws other durations");
    sim_trace_fini(&a);
    sim_trace_fini(&b);
    sim_trace_fini(&c);
    rf_test_no_leaks();
}

Test(trace, openb_skips_cpu_only_and_never_scheduled)
{
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    sim_trace_t t;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(s_read("openb-11.csv", &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_str_eq(t.format, "openb");
    cr_expect_eq(t.rows, 11);
    cr_expect_eq(t.n, 7);
    cr_expect_eq(t.skipped, 4);
    /* `openb-pod-0001,...,427061,12902960,427061`: a GPU fraction takes a whole GPU */
    cr_expect_str_eq(t.jobs[1].name, "openb-pod-0001");
    cr_expect_eq(t.jobs[1].gpus, 1);
    cr_expect_eq(t.jobs[1].submit, 427061);
    cr_expect_eq(t.jobs[1].duration, 12902960 - 427061);
    cr_expect_eq(t.jobs[1].priority, 100, "qos LS: latency-sensitive");
    sim_trace_fini(&t);
    o.hours = 1000000 / 3600.0; /* the first 10^6 s: pods 0000 and 0001 */
    cr_assert_eq(s_read("openb-11.csv", &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_eq(t.n, 2);
    sim_trace_fini(&t);
    rf_test_no_leaks();
}

Test(trace, errors)
{
    sim_trace_t t;
    rf_error_t err;
    rf_error_clear(&err);
    cr_expect_eq(s_read_text("a,b,c\n1,2,3\n", &t, &err), RF_EPARSE);
    cr_expect(strstr(err.message, "unknown trace format") != NULL, "%s", err.message);
    cr_expect_eq(s_read_text("name,submit,duration,gpus,model\nx,zero,5,1,cnn-dp\n", &t, &err), RF_EPARSE);
    cr_expect(strstr(err.message, ":2: submit time is not a number: 'zero'") != NULL, "%s", err.message);
    cr_expect_eq(s_read_text("name,submit,duration,gpus,model\n\"x\",0,5,1,cnn-dp\n", &t, &err), RF_EPARSE);
    cr_expect(strstr(err.message, "quoted") != NULL, "%s", err.message);
    cr_expect_eq(s_read_text("name,submit,duration,gpus,model\nx,0,5\n", &t, &err), RF_EPARSE);
    cr_expect(strstr(err.message, "missing column") != NULL, "%s", err.message);
    cr_expect_eq(s_read_text("name,submit,duration,gpus,model\nx,0,0,1,cnn-dp\n", &t, &err), RF_EPARSE);
    cr_expect(strstr(err.message, "no job to replay") != NULL, "%s", err.message);
    cr_expect_eq(s_read_text("", &t, &err), RF_EPARSE);
    cr_expect_neq(
        sim_trace_read("/nonexistent/trace.csv", &(sim_trace_opts_t){.size_scale = 1, .time_scale = 1}, &t, &err),
        RF_OK);
    cr_expect(strstr(err.message, "/nonexistent/trace.csv") != NULL, "%s", err.message);
    rf_test_no_leaks();
}

Test(trace, several_files_merge_as_tenants)
{
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    char paths[1200];
    snprintf(paths, sizeof(paths), "%s/tests/data/sim/hand.csv,%s/tests/data/sim/deadlock.csv", RF_SOURCE_DIR,
             RF_SOURCE_DIR);
    sim_trace_t t;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(sim_trace_read(paths, &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_eq(t.n, 5);
    cr_expect_str_eq(t.format, "sim");
    /* submit 0: Y, X (first file), then A, B; then Z at 1 */
    const char *order[5] = {"Y", "X", "A", "B", "Z"};
    for (int i = 0; i < 5; i++)
        cr_expect_str_eq(t.jobs[i].name, order[i]);
    sim_trace_fini(&t);
    o.max_jobs = 2;
    cr_assert_eq(sim_trace_read(paths, &o, &t, &err), RF_OK, "%s", err.message);
    cr_expect_eq(t.n, 2);
    sim_trace_fini(&t);
    rf_test_no_leaks();
}

Test(trace, drawn_priorities)
{
    sim_trace_opts_t o;
    sim_trace_opts_default(&o);
    sim_trace_t a, b;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(s_read("tiresias-10.csv", &o, &a, &err), RF_OK, "%s", err.message);
    for (int32_t i = 0; i < a.n; i++)
        cr_expect_eq(a.jobs[i].priority, 0, "no priorities without --high-share");
    sim_trace_fini(&a);
    o.high_share = 0.5;
    cr_assert_eq(s_read("tiresias-10.csv", &o, &a, &err), RF_OK, "%s", err.message);
    cr_assert_eq(s_read("tiresias-10.csv", &o, &b, &err), RF_OK, "%s", err.message);
    int high = 0;
    for (int32_t i = 0; i < a.n; i++) {
        cr_expect(a.jobs[i].priority == 0 || a.jobs[i].priority == 100);
        cr_expect_eq(a.jobs[i].priority, b.jobs[i].priority, "same seed, same priorities");
        high += a.jobs[i].priority == 100;
    }
    cr_expect(high > 0 && high < a.n, "%d of %d drawn high", high, (int)a.n);
    sim_trace_fini(&a);
    sim_trace_fini(&b);
    o.high_share = 2;
    cr_expect_eq(s_read("tiresias-10.csv", &o, &a, &err), RF_EINVAL);
    rf_test_no_leaks();
}
