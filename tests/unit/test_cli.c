/* tests/unit/test_cli.c: `rackfit`, the offline command line (cli/rackfit.c),
 * as a unit: the file is compiled into this test with its main() renamed,
 * so its file-local parts are tested directly: whole-number parsing,
 * --limit NAME=VALUE (int32 and int64 limits), the argument parser (files,
 * `--`, `--opt VALUE` and `--opt=VALUE`, solve-only flags), exit codes by
 * status, s_got, the pretty printer (strings copied as they are, flat
 * containers of scalars on one line), and the commands end to end in this
 * process: solve prints an answer that rf_check accepts, check says
 * feasible, errors are one line `rackfit: FILE: PATH: MESSAGE` with exit 2. */
#define main s_rackfit_main
int s_rackfit_main(int argc, char **argv);
#include "../../cli/rackfit.c"
#undef main

#include <criterion/criterion.h>
#include <unistd.h>

#include "../support/leak.h"

/* The whole text written to `f` (malloc'ed). */
static char *s_slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    cr_assert(n >= 0);
    char *b = malloc((size_t)n + 1);
    cr_assert_not_null(b);
    rewind(f);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    return b;
}

/* stdout and stderr sent to temporary files between s_capture_begin and
 * s_capture_end, which hands back their text (malloc'ed). */
typedef struct {
    int saved_out, saved_err;
    FILE *out, *err;
} s_capture_t;

static void s_capture_begin(s_capture_t *c)
{
    fflush(stdout);
    fflush(stderr);
    c->out = tmpfile();
    c->err = tmpfile();
    cr_assert(c->out && c->err);
    c->saved_out = dup(STDOUT_FILENO);
    c->saved_err = dup(STDERR_FILENO);
    dup2(fileno(c->out), STDOUT_FILENO);
    dup2(fileno(c->err), STDERR_FILENO);
}

static void s_capture_end(s_capture_t *c, char **out, char **err)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved_out, STDOUT_FILENO);
    dup2(c->saved_err, STDERR_FILENO);
    close(c->saved_out);
    close(c->saved_err);
    fseek(c->out, 0, SEEK_END);
    fseek(c->err, 0, SEEK_END);
    *out = s_slurp(c->out);
    *err = s_slurp(c->err);
    fclose(c->out);
    fclose(c->err);
}

/* Run the command line `argv` (NULL-terminated, without the program name). */
static int s_run(const char *const *args, char **out, char **err)
{
    char *argv[16] = {"rackfit"};
    int argc = 1;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    s_capture_t c;
    s_capture_begin(&c);
    int rc = s_rackfit_main(argc, argv);
    s_capture_end(&c, out, err);
    return rc;
}

Test(cli, whole_numbers)
{
    int64_t v = -1;
    cr_assert_eq(s_parse_int("0", 0, 10, &v), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(s_parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
    cr_assert_eq(v, INT64_MAX);
    const char *bad[] = {"", "12x", "1 ", "1.0", "-1", "11", "9223372036854775808", "0x5", " 1", "+1", "-", "\t2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(s_parse_int(bad[i], 0, 10, &v), -1, "`%s`", bad[i]);
    cr_assert_eq(s_parse_int(NULL, 0, 10, &v), -1);
    cr_assert_eq(s_parse_int("-5", -5, 5, &v), 0);
    cr_assert_eq(v, -5);
    rf_test_no_leaks();
}

Test(cli, limits_by_name)
{
    rf_limits_t lim;
    rf_limits_default(&lim);
    cr_assert_eq(s_set_limit(&lim, "max_nodes=7"), 0);
    cr_assert_eq(lim.max_nodes, 7);
    cr_assert_eq(s_set_limit(&lim, "max_input_bytes=8589934592"), 0); /* an int64 limit */
    cr_assert_eq(lim.max_input_bytes, 8589934592LL);

    s_capture_t c;
    char *out, *err;
    s_capture_begin(&c);
    cr_assert_eq(s_set_limit(&lim, "max_nodes=2147483648"), S_EXIT_INPUT); /* past int32 */
    cr_assert_eq(s_set_limit(&lim, "max_colour=1"), S_EXIT_INPUT);
    cr_assert_eq(s_set_limit(&lim, "max_nodes"), S_EXIT_INPUT);
    s_capture_end(&c, &out, &err);
    cr_assert_eq(lim.max_nodes, 7);
    cr_assert_str_empty(out);
    cr_assert(strstr(err, "rackfit: --limit max_nodes=2147483648: the value must be a whole number >= 0 that fits"),
              "%s", err);
    cr_assert(strstr(err, "rackfit: --limit max_colour=1: unknown limit"), "%s", err);
    cr_assert(strstr(err, "rackfit: --limit wants NAME=VALUE, not `max_nodes`"), "%s", err);
    free(out);
    free(err);
    rf_test_no_leaks();
}

Test(cli, arguments)
{
    s_args_t a;
    char *argv1[] = {"p.json", "--mode", "ilp", "--time-limit=250", "--threads", "3", "--pretty", "--limit=max_gangs=9",
                     "--",     "-x"};
    cr_assert_eq(s_parse_args(10, argv1, 1, 2, &a), 0);
    cr_assert_eq(a.n_files, 2);
    cr_assert_str_eq(a.files[0], "p.json");
    cr_assert_str_eq(a.files[1], "-x"); /* after `--`, a file */
    cr_assert_eq(a.opts.mode, RF_MODE_ILP);
    cr_assert_eq(a.opts.time_limit_ms, 250);
    cr_assert_eq(a.opts.threads, 3);
    cr_assert(a.pretty);
    cr_assert_eq(a.limits.max_gangs, 9);
    cr_assert_null(a.endpoint);

    char *argv2[] = {"-", "--endpoint", "tcp://127.0.0.1:1"};
    cr_assert_eq(s_parse_args(3, argv2, 1, 1, &a), 0);
    cr_assert_str_eq(a.files[0], "-");
    cr_assert_str_eq(a.endpoint, "tcp://127.0.0.1:1");

    s_capture_t c;
    char *out, *err;
    s_capture_begin(&c);
    char *bad_mode[] = {"--mode=fast"};
    cr_assert_eq(s_parse_args(1, bad_mode, 1, 1, &a), S_EXIT_INPUT);
    char *solve_only[] = {"--pretty"}; /* check takes no solve flags */
    cr_assert_eq(s_parse_args(1, solve_only, 0, 2, &a), S_EXIT_INPUT);
    char *threads[] = {"--threads", "4097"};
    cr_assert_eq(s_parse_args(2, threads, 1, 1, &a), S_EXIT_INPUT);
    char *extra[] = {"a.json", "b.json"};
    cr_assert_eq(s_parse_args(2, extra, 1, 1, &a), S_EXIT_INPUT);
    char *endpoint[] = {"--endpoint"};
    cr_assert_eq(s_parse_args(1, endpoint, 1, 1, &a), S_EXIT_INPUT);
    s_capture_end(&c, &out, &err);
    cr_assert(strstr(err, "rackfit: --mode: `fast` is not one of greedy, ilp, auto"), "%s", err);
    cr_assert(strstr(err, "rackfit: unknown option `--pretty`"), "%s", err);
    cr_assert(strstr(err, "rackfit: --threads: `4097` is not a whole number from 0 (all cores) to 4096"), "%s", err);
    cr_assert(strstr(err, "rackfit: unexpected argument `b.json`"), "%s", err);
    cr_assert(strstr(err, "rackfit: --endpoint wants a ZeroMQ endpoint"), "%s", err);
    free(out);
    free(err);
    rf_test_no_leaks();
}

Test(cli, exit_codes_and_got)
{
    cr_assert_eq(s_exit_for(RF_EPARSE), S_EXIT_INPUT);
    cr_assert_eq(s_exit_for(RF_ESCHEMA), S_EXIT_INPUT);
    cr_assert_eq(s_exit_for(RF_ELIMIT), S_EXIT_INPUT);
    cr_assert_eq(s_exit_for(RF_ENOTFOUND), S_EXIT_INPUT);
    cr_assert_eq(s_exit_for(RF_ENOMEM), S_EXIT_FAILURE);
    cr_assert_eq(s_exit_for(RF_ESOLVER), S_EXIT_FAILURE);
    cr_assert_eq(s_exit_for(RF_EINTERNAL), S_EXIT_FAILURE);

    rf_error_t err;
    rf_error_clear(&err);
    int x = 0;
    cr_assert_eq(s_got(RF_OK, &x, &err, "none"), RF_OK);
    cr_assert_eq(s_got(RF_ESCHEMA, NULL, &err, "none"), RF_ESCHEMA);
    cr_assert_str_empty(err.message);
    cr_assert_eq(s_got(RF_OK, NULL, &err, "the solver returned no answer"), RF_EINTERNAL);
    cr_assert_str_eq(err.message, "the solver returned no answer");
    rf_test_no_leaks();
}

/* The pretty printer's text for `json`. */
static char *s_pretty(const char *json)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    s_write_pretty(f, json, strlen(json));
    char *s = s_slurp(f);
    fclose(f);
    return s;
}

Test(cli, pretty_printer)
{
    char *s = s_pretty("{\"a\":[1,2],\"b\":{\"c\":\"x, {y}: \\\"]\"},\"d\":[ ],\"e\":[{\"f\":1}]}");
    cr_assert_str_eq(s, "{\n"
                        "  \"a\": [1, 2],\n"
                        "  \"b\": {\"c\": \"x, {y}: \\\"]\"},\n"
                        "  \"d\": [],\n"
                        "  \"e\": [\n"
                        "    {\"f\": 1}\n"
                        "  ]\n"
                        "}\n");
    free(s);
    /* whitespace outside strings is replaced, inside kept */
    s = s_pretty(" [\n\t\"a  b\" ,\r\n3 ] ");
    cr_assert_str_eq(s, "[\"a  b\", 3]\n");
    free(s);
    int in_string = 1, escaped = 0;
    s_string_step('\\', &in_string, &escaped);
    cr_assert(escaped && in_string);
    s_string_step('"', &in_string, &escaped); /* escaped quote: still inside */
    cr_assert(!escaped && in_string);
    s_string_step('"', &in_string, &escaped);
    cr_assert(!in_string);
    rf_test_no_leaks();
}

static char *s_temp(const char *text)
{
    char tmpl[] = "/tmp/rf_test_cli_XXXXXX";
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return strdup(tmpl);
}

#define PROBLEM                                                                                                        \
    "{\"cluster\":{\"levels\":[\"host\"],\"nodes\":[{\"name\":\"h0\",\"labels\":{\"host\":\"h0\"},"                    \
    "\"allocatable\":{\"nvidia.com/gpu\":8}}]},\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\","              \
    "\"count\":2,\"requests\":{\"nvidia.com/gpu\":4}}]}]}"

Test(cli, commands_end_to_end)
{
    char *problem = s_temp(PROBLEM);
    char *out, *err;
    const char *solve[] = {"solve", problem, "--mode", "greedy", NULL};
    cr_assert_eq(s_run(solve, &out, &err), S_EXIT_OK, "%s", err);
    cr_assert_str_empty(err);
    rf_problem_t *p = NULL;
    rf_error_t e;
    cr_assert_eq(rf_problem_from_json(PROBLEM, strlen(PROBLEM), NULL, &p, &e), RF_OK);
    rf_answer_t *a = NULL;
    cr_assert_eq(rf_answer_from_json(p, out, strlen(out), &a, &e), RF_OK, "%s: %s", e.path, e.message);
    cr_assert(a->gangs[0].admitted);
    rf_check_report_t report;
    cr_assert_eq(rf_check(p, a, &report, &e), RF_OK);
    cr_assert(report.feasible);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);

    char *answer = s_temp(out);
    free(out);
    free(err);
    const char *check[] = {"check", problem, answer, NULL};
    cr_assert_eq(s_run(check, &out, &err), S_EXIT_OK, "%s", err);
    cr_assert(strncmp(out, "feasible\n", 9) == 0, "%s", out);
    free(out);
    free(err);

    /* errors: one line naming the file and the field */
    char *broken = s_temp("{\"cluster\":{\"levels\":[\"host\"],\"nodes\":[]},\"gangs\":[{\"name\":\"\"}]}");
    const char *bad[] = {"solve", broken, NULL};
    cr_assert_eq(s_run(bad, &out, &err), S_EXIT_INPUT);
    char want[512];
    snprintf(want, sizeof want, "rackfit: %s: gangs[0].name: must not be empty\n", broken);
    cr_assert_str_eq(err, want);
    cr_assert_str_empty(out);
    free(out);
    free(err);
    const char *missing[] = {"check", problem, "/nonexistent/answer.json", NULL};
    cr_assert_eq(s_run(missing, &out, &err), S_EXIT_INPUT);
    cr_assert_str_eq(err, "rackfit: /nonexistent/answer.json: /nonexistent/answer.json: No such file or directory\n");
    free(out);
    free(err);
    const char *version[] = {"version", NULL};
    cr_assert_eq(s_run(version, &out, &err), S_EXIT_OK);
    cr_assert_str_eq(out, "rackfit " RACKFIT_VERSION "\n");
    free(out);
    free(err);
    const char *unknown[] = {"place", NULL};
    cr_assert_eq(s_run(unknown, &out, &err), S_EXIT_INPUT);
    cr_assert(strstr(err, "rackfit: unknown command `place`"), "%s", err);
    free(out);
    free(err);

    unlink(problem);
    unlink(answer);
    unlink(broken);
    free(problem);
    free(answer);
    free(broken);
    rf_test_no_leaks();
}
