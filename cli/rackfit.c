/* cli/rackfit.c: `rackfit`, the offline command line.
 *
 *   rackfit solve PROBLEM.json [--mode greedy|ilp|auto] [--time-limit MS]
 *                 [--threads N] [--limit NAME=VALUE]... [--pretty]
 *   rackfit check PROBLEM.json ANSWER.json [--limit NAME=VALUE]...
 *   rackfit version | help
 *
 * `-` names standard input. Exit codes: 0 success (check: the answer is
 * feasible and its reported totals match the recomputed ones), 1 the answer
 * checked is not, 2 bad input or usage, 3 the work itself failed (out of
 * memory, solver failure, write error).
 *
 * Invariants: every error is one line on stderr, `rackfit: FILE: PATH: at
 * byte N: MESSAGE` (PATH and offset only when known); nothing on stdout but
 * the answer (solve) or the report (check). The time limit counts from the
 * moment the problem's bytes were read (PLACEMENT-MODEL.md: "counted from
 * when the problem is received"), so parsing and validating count in it. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "rackfit/client.h"
#include "rackfit/rackfit.h"

enum { S_EXIT_OK = 0, S_EXIT_INFEASIBLE = 1, S_EXIT_INPUT = 2, S_EXIT_FAILURE = 3 };

/* ---- data structures ---------------------------------------------------- */

typedef struct {
    const char *name;
    size_t offset; /* into rf_limits_t */
    int is64;      /* int64_t field, else int32_t */
    const char *what;
} s_limit_field_t;

/* clang-format off */
#define S_IS64(field)        (sizeof(((rf_limits_t *)0)->field) == sizeof(int64_t))
#define S_LIMIT(field, what) {#field, offsetof(rf_limits_t, field), S_IS64(field), what}
/* clang-format on */

static const s_limit_field_t s_limit_fields[] = {
    S_LIMIT(max_nodes, "nodes in the cluster"),
    S_LIMIT(max_gangs, "gangs in one problem"),
    S_LIMIT(max_pod_sets, "pod sets in one gang"),
    S_LIMIT(max_pods, "`count` of one pod set"),
    S_LIMIT(max_labels, "labels on a node, keys in a selector"),
    S_LIMIT(max_taints, "taints on a node, tolerations on a pod set"),
    S_LIMIT(max_resources, "distinct resource names"),
    S_LIMIT(max_bound, "`bound` entries of one pod set"),
    S_LIMIT(max_string, "bytes in any one string"),
    S_LIMIT(max_depth, "nesting depth of the document"),
    S_LIMIT(max_input_bytes, "bytes of the whole input"),
    S_LIMIT(max_shape_cells, "distinct pod shapes times nodes"),
};
#define S_N_LIMIT_FIELDS ((int)(sizeof(s_limit_fields) / sizeof(s_limit_fields[0])))

typedef struct {
    const char *files[2]; /* positional arguments */
    int n_files;
    rf_limits_t limits;
    rf_solve_opts_t opts;
    int pretty;
    const char *endpoint; /* solve --endpoint: ask rackfitd */
} s_args_t;

/* ---- local methods ------------------------------------------------------ */

static void s_usage(FILE *out)
{
    fputs("usage:\n"
          "  rackfit solve PROBLEM.json [--mode greedy|ilp|auto] [--time-limit MS] [--threads N]\n"
          "                [--mip auto|glpk|cbc] [--limit NAME=VALUE]... [--pretty] [--endpoint ENDPOINT]\n"
          "      Solve the problem and print the answer as JSON on stdout.\n"
          "      --endpoint sends it to rackfitd at ENDPOINT instead (tcp://127.0.0.1:5555);\n"
          "      the problem's own `options` apply, and --mode/--time-limit/--threads\n"
          "      cannot be combined with it.\n"
          "      --mip picks the integer programs' solver for ilp and auto: auto (the\n"
          "      default: GLPK, and CBC beside it on small batches when built with it),\n"
          "      glpk (GLPK only) or cbc (CBC only); docs/ilp.md, \"Backends\".\n"
          "      The flags override the problem's `options`; the time limit counts\n"
          "      from when the problem has been read.\n"
          "  rackfit check PROBLEM.json ANSWER.json [--limit NAME=VALUE]...\n"
          "      Check an answer against its problem (feasibility, recomputed value\n"
          "      and penalty) and print a report.\n"
          "  rackfit version\n"
          "  rackfit help\n"
          "\n"
          "`-` reads standard input (for one of the files).\n"
          "\n"
          "--limit NAME=VALUE sets a reader limit; NAME is one of:\n",
          out);
    rf_limits_t def;
    rf_limits_default(&def);
    for (int i = 0; i < S_N_LIMIT_FIELDS; i++) {
        const s_limit_field_t *f = &s_limit_fields[i];
        const char *p = (const char *)&def + f->offset;
        int64_t v;
        if (f->is64) {
            memcpy(&v, p, sizeof v);
        } else {
            int32_t v32;
            memcpy(&v32, p, sizeof v32);
            v = v32;
        }
        fprintf(out, "  %-16s %s (default %" PRId64 ")\n", f->name, f->what, v);
    }
    fputs("\n"
          "exit status: 0 ok (check: feasible, reported totals match), 1 the checked\n"
          "answer is infeasible or misreports its totals, 2 bad input or usage,\n"
          "3 the solve or the output failed.\n",
          out);
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int
s_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rackfit: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(see `rackfit help`)\n", stderr);
    va_end(ap);
    return S_EXIT_INPUT;
}

/* Print `rackfit: FILE: PATH: at byte N: MESSAGE` for a failed call. */
static void s_report_error(const char *file, const rf_error_t *err, rf_status status)
{
    /* The struct may not be NUL-terminated if a callee misbehaved: bound it. */
    char path[RF_ERROR_PATH_MAX + 1];
    char message[RF_ERROR_MESSAGE_MAX + 1];
    memcpy(path, err->path, RF_ERROR_PATH_MAX);
    path[RF_ERROR_PATH_MAX] = '\0';
    memcpy(message, err->message, RF_ERROR_MESSAGE_MAX);
    message[RF_ERROR_MESSAGE_MAX] = '\0';

    fputs("rackfit: ", stderr);
    if (file != NULL)
        fprintf(stderr, "%s: ", strcmp(file, "-") == 0 ? "<stdin>" : file);
    if (path[0] != '\0')
        fprintf(stderr, "%s: ", path);
    if (err->offset >= 0)
        fprintf(stderr, "at byte %ld: ", err->offset);
    fprintf(stderr, "%s\n", message[0] != '\0' ? message : rf_status_message(status));
}

/* Exit code for a failed library call. */
static int s_exit_for(rf_status status)
{
    switch (status) {
    case RF_EPARSE:
    case RF_ESCHEMA:
    case RF_ELIMIT:
    case RF_EIO:
    case RF_EINVAL:
    case RF_ENOTFOUND:
        return S_EXIT_INPUT;
    default:
        return S_EXIT_FAILURE;
    }
}

/* Report a failed step on `path` and return the exit code for it. */
static int s_fail(const char *path, const rf_error_t *err, rf_status status)
{
    s_report_error(path, err, status);
    return s_exit_for(status);
}

/* `s`, or RF_EINTERNAL (with `what` in `err`) when a call that returned
 * RF_OK left its result NULL: a library bug, reported as a failure. Call it
 * after the call, never around it (`result` is read when s_got is called). */
static rf_status s_got(rf_status s, const void *result, rf_error_t *err, const char *what)
{
    if (s == RF_OK && result == NULL)
        return rf_error_set(err, RF_EINTERNAL, "", "%s", what);
    return s;
}

/* Parse a whole decimal integer in [min, max]: digits with an optional leading '-' and nothing else (strtoll alone
 * would also take leading white space and a '+'). */
static int s_parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
    if (text == NULL || !(isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1]))))
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static int s_set_limit(rf_limits_t *limits, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (eq == NULL)
        return s_usage_error("--limit wants NAME=VALUE, not `%s`", spec);
    size_t name_len = (size_t)(eq - spec);
    for (int i = 0; i < S_N_LIMIT_FIELDS; i++) {
        const s_limit_field_t *f = &s_limit_fields[i];
        if (strlen(f->name) != name_len || memcmp(f->name, spec, name_len) != 0)
            continue;
        int64_t v;
        if (s_parse_int(eq + 1, 0, f->is64 ? INT64_MAX : INT32_MAX, &v) != 0)
            return s_usage_error("--limit %s: the value must be a whole number >= 0 that fits the limit", spec);
        char *p = (char *)limits + f->offset;
        if (f->is64) {
            memcpy(p, &v, sizeof v);
        } else {
            int32_t v32 = (int32_t)v;
            memcpy(p, &v32, sizeof v32);
        }
        return 0;
    }
    return s_usage_error("--limit %s: unknown limit (see `rackfit help` for the names)", spec);
}

/* The value of option `name` given as `--name VALUE` or `--name=VALUE`. */
static const char *s_option_value(int argc, char **argv, int *i, const char *name)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        return "";
    return argv[++*i];
}

static int s_is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Parse the arguments after the command. `solve_flags`: accept the solve-only
 * flags. Returns 0 or an exit code. */
static int s_parse_args(int argc, char **argv, int solve_flags, int max_files, s_args_t *args)
{
    memset(args, 0, sizeof *args);
    rf_limits_default(&args->limits);
    rf_solve_opts_default(&args->opts);
    int only_files = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int64_t n;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (args->n_files >= max_files)
                return s_usage_error("unexpected argument `%s`", arg);
            args->files[args->n_files++] = arg;
        } else if (strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (s_is_option(arg, "--limit")) {
            v = s_option_value(argc, argv, &i, "--limit");
            int rc = s_set_limit(&args->limits, v);
            if (rc != 0)
                return rc;
        } else if (solve_flags && s_is_option(arg, "--mode")) {
            v = s_option_value(argc, argv, &i, "--mode");
            if (strcmp(v, "greedy") == 0)
                args->opts.mode = RF_MODE_GREEDY;
            else if (strcmp(v, "ilp") == 0)
                args->opts.mode = RF_MODE_ILP;
            else if (strcmp(v, "auto") == 0)
                args->opts.mode = RF_MODE_AUTO;
            else
                return s_usage_error("--mode: `%s` is not one of greedy, ilp, auto", v);
        } else if (solve_flags && s_is_option(arg, "--time-limit")) {
            v = s_option_value(argc, argv, &i, "--time-limit");
            if (s_parse_int(v, 0, INT64_MAX, &n) != 0)
                return s_usage_error("--time-limit: `%s` is not a whole number of milliseconds >= 0", v);
            args->opts.time_limit_ms = n;
        } else if (solve_flags && s_is_option(arg, "--threads")) {
            v = s_option_value(argc, argv, &i, "--threads");
            if (s_parse_int(v, 0, 4096, &n) != 0)
                return s_usage_error("--threads: `%s` is not a whole number from 0 (all cores) to 4096", v);
            args->opts.threads = (int32_t)n;
        } else if (solve_flags && s_is_option(arg, "--mip")) {
            v = s_option_value(argc, argv, &i, "--mip");
            rf_mip_backend b;
            if (rf_mip_backend_parse(v, &b) != 0)
                return s_usage_error("--mip: `%s` is not one of auto, glpk, cbc", v);
            if (!rf_mip_backend_available(b))
                return s_usage_error("--mip: this rackfit was built without %s (configure with RF_CBC=ON and "
                                     "coinor-libcbc-dev installed)",
                                     v);
            args->opts.mip = (int32_t)b;
        } else if (solve_flags && strcmp(arg, "--pretty") == 0) {
            args->pretty = 1;
        } else if (solve_flags && s_is_option(arg, "--endpoint")) {
            v = s_option_value(argc, argv, &i, "--endpoint");
            if (v[0] == '\0')
                return s_usage_error("%s", "--endpoint wants a ZeroMQ endpoint (tcp://127.0.0.1:5555)");
            args->endpoint = v;
        } else {
            return s_usage_error("unknown option `%s`", arg);
        }
    }
    if (args->n_files != max_files)
        return s_usage_error("%s", max_files == 1 ? "solve wants one PROBLEM file (`-` for stdin)"
                                                  : "check wants a PROBLEM and an ANSWER file (`-` for stdin)");
    if (args->n_files == 2 && strcmp(args->files[0], "-") == 0 && strcmp(args->files[1], "-") == 0)
        return s_usage_error("%s", "only one of the files can be `-` (stdin)");
    return 0;
}

/* Read a whole input file ("-": standard input) within max_input_bytes
 * (<= 0: no limit), through the base layer's one file reader. */
static rf_status s_read_file(const char *path, int64_t max_bytes, char **out, size_t *len, rf_error_t *err)
{
    return rf__read_file(path, max_bytes > 0 ? (size_t)max_bytes : 0, out, len, err);
}

/* Read and validate a problem file. Returns 0 or an exit code (error
 * printed). `*read_ms`: the monotonic time the bytes were in. */
static int s_load_problem(const char *path, const rf_limits_t *limits, rf_problem_t **out, double *read_ms)
{
    rf_error_t err;
    rf_error_clear(&err);
    char *text = NULL;
    size_t len = 0;
    rf_status s = s_read_file(path, limits->max_input_bytes, &text, &len, &err);
    if (read_ms != NULL)
        *read_ms = rf_now_ms();
    if (s == RF_OK) {
        rf_error_clear(&err);
        s = rf_problem_from_json(text, len, limits, out, &err);
        s = s_got(s, *out, &err, "the reader returned no problem");
    }
    free(text);
    if (s != RF_OK) {
        rf_problem_destroy(out);
        return s_fail(path, &err, s);
    }
    return 0;
}

static int s_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One character `c` inside a JSON string: follows escapes and clears
 * *in_string at the closing quote. */
static void s_string_step(char c, int *in_string, int *escaped)
{
    if (*escaped)
        *escaped = 0;
    else if (c == '\\')
        *escaped = 1;
    else if (c == '"')
        *in_string = 0;
}

/* The index of the `]` or `}` closing the container that opens at text[i]
 * when it holds only scalars (printed on one line), else 0. */
static size_t s_flat_end(const char *text, size_t len, size_t i)
{
    int in_string = 0, escaped = 0;
    for (size_t j = i + 1; j < len; j++) {
        char c = text[j];
        if (in_string) {
            s_string_step(c, &in_string, &escaped);
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            return 0;
        } else if (c == ']' || c == '}') {
            return j;
        }
    }
    return 0;
}

static void s_newline(FILE *out, int depth)
{
    fputc('\n', out);
    for (int k = 0; k < depth; k++)
        fputs("  ", out);
}

/* Write JSON text re-indented by two spaces per level, arrays and objects
 * of scalars on one line. Strings are copied as they are; whitespace outside strings is
 * replaced. */
static void s_write_pretty(FILE *out, const char *text, size_t len)
{
    int depth = 0, in_string = 0, escaped = 0;
    size_t flat_end = 0; /* inside a one-line array up to this index */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            fputc(c, out);
            s_string_step(c, &in_string, &escaped);
            continue;
        }
        if (s_is_space(c))
            continue;
        if (flat_end > i) {
            if (c == '"')
                in_string = 1;
            fputc(c, out);
            if (c == ',' || c == ':')
                fputc(' ', out);
            continue;
        }
        switch (c) {
        case '"':
            in_string = 1;
            fputc(c, out);
            break;
        case '{':
        case '[': {
            size_t j = i + 1;
            while (j < len && s_is_space(text[j]))
                j++;
            if (j < len && text[j] == (c == '{' ? '}' : ']')) { /* empty */
                fputc(c, out);
                fputc(text[j], out);
                i = j;
                break;
            }
            fputc(c, out);
            if ((flat_end = s_flat_end(text, len, i)) != 0) {
                flat_end++; /* the closing bracket is printed flat too */
                break;
            }
            s_newline(out, ++depth);
            break;
        }
        case '}':
        case ']':
            if (depth > 0)
                depth--;
            s_newline(out, depth);
            fputc(c, out);
            break;
        case ',':
            fputc(c, out);
            s_newline(out, depth);
            break;
        case ':':
            fputs(": ", out);
            break;
        default:
            fputc(c, out);
        }
    }
    fputc('\n', out);
}

static int s_flush_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "rackfit: <stdout>: write error: %s\n", strerror(errno));
        return S_EXIT_FAILURE;
    }
    return S_EXIT_OK;
}

/* ---- commands ----------------------------------------------------------- */

/* solve --endpoint: the problem's JSON goes to rackfitd as MessagePack (the
 * client library), the answer comes back and is printed as JSON. */
static int s_solve_remote(const s_args_t *args)
{
    if (args->opts.mode >= 0 || args->opts.time_limit_ms >= 0 || args->opts.threads >= 0 ||
        args->opts.mip != RF_MIP_AUTO)
        return s_usage_error("%s",
                             "--endpoint takes the problem's own options: drop --mode, --time-limit, --threads, --mip");
    rf_error_t err;
    rf_error_clear(&err);
    char *text = NULL, *answer = NULL;
    size_t len = 0, answer_len = 0;
    int rc = S_EXIT_OK;
    rf_client_t *client = NULL;
    rf_status s = s_read_file(args->files[0], args->limits.max_input_bytes, &text, &len, &err);
    if (s != RF_OK)
        return s_fail(args->files[0], &err, s);
    client = rf_client_new(args->endpoint, NULL, &err);
    s = client ? rf_client_solve_json(client, text, len, &answer, &answer_len, &err) : err.code;
    if (s != RF_OK) {
        s_report_error(args->files[0], &err, s);
        rc = s == RF_EIO || s == RF_ETIMEOUT || s == RF_EBUSY ? S_EXIT_FAILURE : s_exit_for(s);
    } else {
        if (args->pretty)
            s_write_pretty(stdout, answer, answer_len);
        else
            fwrite(answer, 1, answer_len, stdout);
        rc = s_flush_stdout();
    }
    free(answer);
    free(text);
    rf_client_destroy(&client);
    return rc;
}

static int s_cmd_solve(int argc, char **argv)
{
    s_args_t args;
    int rc = s_parse_args(argc, argv, 1, 1, &args);
    if (rc != 0)
        return rc;
    if (args.endpoint != NULL)
        return s_solve_remote(&args);

    rf_problem_t *problem = NULL;
    rf_answer_t *answer = NULL;
    char *json = NULL;
    size_t json_len = 0;
    rf_error_t err;
    rf_error_clear(&err);

    rc = s_load_problem(args.files[0], &args.limits, &problem, &args.opts.start_ms);
    if (rc != 0)
        goto done;

    rf_status s = rf_solve(problem, &args.opts, &answer, &err);
    s = s_got(s, answer, &err, "the solver returned no answer");
    if (s != RF_OK) {
        rc = s_fail(args.files[0], &err, s);
        goto done;
    }
    rf_error_clear(&err);
    s = rf_answer_to_json(answer, &json, &json_len, &err);
    s = s_got(s, json, &err, "the answer writer returned no text");
    if (s != RF_OK) {
        s_report_error(NULL, &err, s);
        rc = S_EXIT_FAILURE;
        goto done;
    }
    if (args.pretty) {
        s_write_pretty(stdout, json, json_len);
    } else {
        fwrite(json, 1, json_len, stdout);
        if (json_len == 0 || json[json_len - 1] != '\n')
            fputc('\n', stdout);
    }
    rc = s_flush_stdout();
done:
    free(json);
    rf_answer_destroy(&answer);
    rf_problem_destroy(&problem);
    return rc;
}

static void s_print_value(const rf_value_t *value, int32_t n)
{
    fputs("[", stdout);
    for (int32_t i = 0; value != NULL && i < n; i++)
        printf("%s[%" PRId64 ", %" PRId64 ", %" PRId64 "]", i > 0 ? ", " : "", value[i].priority, value[i].units,
               value[i].pods);
    fputs("]", stdout);
}

static int s_cmd_check(int argc, char **argv)
{
    s_args_t args;
    int rc = s_parse_args(argc, argv, 0, 2, &args);
    if (rc != 0)
        return rc;

    rf_problem_t *problem = NULL;
    rf_answer_t *answer = NULL;
    char *text = NULL;
    size_t len = 0;
    rf_check_report_t report;
    memset(&report, 0, sizeof report);
    int have_report = 0;
    rf_error_t err;
    rf_error_clear(&err);

    rc = s_load_problem(args.files[0], &args.limits, &problem, NULL);
    if (rc != 0)
        goto done;

    /* The answer: the same size cap as the problem's input. */
    rf_status s = s_read_file(args.files[1], args.limits.max_input_bytes, &text, &len, &err);
    if (s == RF_OK) {
        rf_error_clear(&err);
        s = rf_answer_from_json(problem, text, len, &answer, &err);
        s = s_got(s, answer, &err, "the answer reader returned no answer");
    }
    if (s != RF_OK) {
        rc = s_fail(args.files[1], &err, s);
        goto done;
    }

    rf_error_clear(&err);
    have_report = 1;
    s = rf_check(problem, answer, &report, &err);
    if (s != RF_OK) {
        rc = s_fail(args.files[1], &err, s);
        goto done;
    }

    if (report.feasible)
        printf("feasible\n");
    else
        printf("infeasible: %" PRId32 " violation%s\n", report.n_violations, report.n_violations == 1 ? "" : "s");
    int32_t shown = report.n_violations < RF_CHECK_MAX_VIOLATIONS ? report.n_violations : RF_CHECK_MAX_VIOLATIONS;
    for (int32_t i = 0; i < shown; i++)
        if (report.violations[i] != NULL)
            printf("  violation: %s\n", report.violations[i]);
    if (report.n_violations > shown)
        printf("  ... and %" PRId32 " more\n", report.n_violations - shown);
    printf("admitted: %" PRId32 " of %" PRId32 " gangs\n", report.admitted, problem->n_gangs);
    printf("value: ");
    s_print_value(report.value, report.n_value);
    printf("  (recomputed; [priority, units, pods], highest priority first)\n");
    printf("penalty: %.6f  (recomputed)\n", report.penalty);
    printf("reported totals: %s\n", report.reported_totals_match ? "match" : "DO NOT MATCH the recomputed ones");
    if (!report.feasible || !report.reported_totals_match)
        rc = S_EXIT_INFEASIBLE;
    int frc = s_flush_stdout();
    if (rc == 0)
        rc = frc;
done:
    if (have_report)
        rf_check_report_fini(&report);
    free(text);
    rf_answer_destroy(&answer);
    rf_problem_destroy(&problem);
    return rc;
}

/* ---- interface ---------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2) {
        s_usage(stderr);
        return S_EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "solve") == 0)
        return s_cmd_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return s_cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("rackfit %s\n", RACKFIT_VERSION);
        return s_flush_stdout();
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        s_usage(stdout);
        return s_flush_stdout();
    }
    return s_usage_error("unknown command `%s`", cmd);
}
