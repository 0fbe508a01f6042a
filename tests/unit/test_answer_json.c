/* tests/unit/test_answer_json.c: an answer to and from JSON
 * (solver/answer_json.c) on its own: the writer's exact layout (root pairs
 * and gangs one per line), doubles in their shortest round-tripping form
 * with ".0" on whole numbers and null when not finite, string escaping; the
 * reader's messages for unknown and missing keys at each map (root, gang,
 * pod set, placement, running gang), running gangs (count, names, `by`),
 * counts filled in when the summary is absent, a mode_used it owns; and
 * NULL arguments. test_answer covers the round trip of whole answers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "rackfit/rackfit.h"

/* Nodes h-0..h-7 (racks r1, r2), h-0 full with running gang `old`; gangs
 * `a"q` (two pod sets) and `b`. */
static rf_problem_t *s_problem(bool with_running)
{
    static const int used[8] = {8, 0, 0, 0, 0, 0, 0, 0};
    char *json = rf_test_preempt_json(
        with_running ? used : NULL,
        with_running ? "[{\"name\":\"old\",\"pod_sets\":[{\"name\":\"w\",\"requests\":{\"nvidia.com/gpu\":8},"
                       "\"placements\":[{\"node\":\"h-0\",\"count\":1}]}]}]"
                     : "[]",
        "[{\"name\":\"a\\\"q\",\"priority\":2,\"pod_sets\":[{\"name\":\"x\",\"count\":1},{\"name\":\"y\",\"count\":2}]}"
        ","
        "{\"name\":\"b\",\"pod_sets\":[{\"name\":\"w\",\"count\":1}]}]",
        NULL);
    rf_problem_t *p = rf_test_parse(json);
    free(json);
    return p;
}

static char *s_write(const rf_answer_t *a)
{
    char *out = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf_answer_to_json(a, &out, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, strlen(out));
    return out;
}

Test(answer_json, writer_layout_doubles_and_escapes)
{
    rf_problem_t *p = s_problem(false);
    rf_answer_t *a = rf_answer_new(p);
    cr_assert_eq(rf_answer_add(a, 0, 0, 1, 1), RF_OK);
    cr_assert_eq(rf_answer_add(a, 0, 1, 5, 2), RF_OK);
    rf_why_t why = {-1, -1, -1, -1};
    cr_assert_eq(rf_answer_reject(a, 1, why, "%s", "tab\there"), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);
    a->summary.penalty_bound = 0.1;
    a->summary.solve_ms = NAN;
    a->summary.mode_used = "greedy";
    char *out = s_write(a);
    const char *want = "{\"gangs\":[\n"
                       "{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\",\"placements\":"
                       "[{\"node\":\"h-1\",\"count\":1}]},{\"name\":\"y\",\"placements\":[{\"node\":\"h-5\","
                       "\"count\":2}]}],\"domains\":[2,2],\"penalty\":11.0},\n"
                       "{\"name\":\"b\",\"admitted\":false,\"reason\":\"tab\\there\",\"why\":{}}\n"
                       "],\n"
                       "\"summary\":{\"admitted\":1,\"rejected\":1,\"value\":[[2,0,3],[0,0,0]],\"penalty\":11.0,"
                       "\"penalty_bound\":0.1,\"optimal\":false,\"mode_used\":\"greedy\",\"solve_ms\":null}}\n";
    cr_assert_str_eq(out, want);
    free(out);

    /* shortest round-tripping forms */
    double cases[] = {0.1 + 0.2, 1e21, 5e-324, 123456789.0, -0.5};
    const char *text[] = {"0.30000000000000004", "1e+21", "4.94065645841247e-324", "123456789.0", "-0.5"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        a->summary.solve_ms = cases[i];
        out = s_write(a);
        char key[64];
        snprintf(key, sizeof key, "\"solve_ms\":%s}", text[i]);
        cr_assert(strstr(out, key), "%g: %s", cases[i], out);
        rf_answer_t *back = NULL;
        rf_error_t err;
        cr_assert_eq(rf_answer_from_json(p, out, strlen(out), &back, &err), RF_OK, "%s: %s", err.path, err.message);
        cr_assert_eq(back->summary.solve_ms, cases[i]); /* exact */
        cr_assert_str_eq(back->summary.mode_used, "greedy");
        cr_assert_str_eq(back->gangs[1].reason, "tab\there");
        rf_answer_destroy(&back);
        free(out);
    }
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* Reading `json` fails with RF_ESCHEMA at `path` with exactly `msg`. */
static void s_fails(const rf_problem_t *p, const char *json, const char *path, const char *msg)
{
    rf_answer_t *a = (rf_answer_t *)&a;
    rf_error_t err;
    cr_assert_eq(rf_answer_from_json(p, json, strlen(json), &a, &err), RF_ESCHEMA, "%s", json);
    cr_assert_null(a);
    cr_assert_str_eq(err.path, path, "%s: %s", json, err.message);
    cr_assert_str_eq(err.message, msg, "%s", json);
}

#define B_REJECTED "{\"name\":\"b\",\"admitted\":false}"

Test(answer_json, unknown_and_missing_keys_at_every_map)
{
    rf_problem_t *p = s_problem(false);
    s_fails(p, "{\"summary\":{}}", "", "missing key \"gangs\"");
    s_fails(p, "{\"gangs\":[],\"colour\":1}", "colour", "unknown key \"colour\"");
    s_fails(p, "{\"gangs\":[{\"admitted\":false}," B_REJECTED "]}", "gangs[0]", "missing key \"name\"");
    s_fails(p, "{\"gangs\":[{\"name\":\"a\\\"q\"}," B_REJECTED "]}", "gangs[0]", "missing key \"admitted\"");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"placements\":[]}]}," B_REJECTED "]}",
            "gangs[0].pod_sets[0]", "missing key \"name\"");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\",\"size\":1}]}," B_REJECTED
            "]}",
            "gangs[0].pod_sets[0].size", "unknown key \"size\"");
    s_fails(p, "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"z\"}]}," B_REJECTED "]}",
            "gangs[0].pod_sets[0].name", "unknown pod set \"z\"");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\"},{\"name\":\"x\"}]},"
            "" B_REJECTED "]}",
            "gangs[0].pod_sets[1].name", "pod set \"x\" is listed twice");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\",\"placements\":"
            "[{\"count\":1}]}]}," B_REJECTED "]}",
            "gangs[0].pod_sets[0].placements[0]", "missing key \"node\"");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\",\"placements\":"
            "[{\"node\":\"h-9\",\"count\":1}]}]}," B_REJECTED "]}",
            "gangs[0].pod_sets[0].placements[0].node", "unknown node \"h-9\"");
    s_fails(p,
            "{\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":true,\"pod_sets\":[{\"name\":\"x\",\"placements\":"
            "[{\"node\":\"h-1\",\"count\":0}]}]}," B_REJECTED "]}",
            "gangs[0].pod_sets[0].placements[0].count", "0 is out of range [1, 2147483647]");
    s_fails(p, "{\"gangs\":[{\"name\":\"b\",\"admitted\":false}," B_REJECTED "]}", "gangs[0].name",
            "is \"b\", but the problem's gang 0 is \"a\"q\"");
    s_fails(p, "{\"gangs\":[" B_REJECTED "]}", "gangs", "has 1 gangs, the problem 2 (every gang once, in order)");
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

#define BOTH_REJECTED "\"gangs\":[{\"name\":\"a\\\"q\",\"admitted\":false}," B_REJECTED "]"

Test(answer_json, running_gangs)
{
    rf_problem_t *p = s_problem(true);
    s_fails(p, "{" BOTH_REJECTED "}", "",
            "missing key \"running\" (the problem has 1 running gangs: each is kept or preempted)");
    s_fails(p, "{" BOTH_REJECTED ",\"running\":[]}", "running",
            "has 0 running gangs, the problem 1 (every running gang once, in order)");
    s_fails(p, "{" BOTH_REJECTED ",\"running\":[{\"name\":\"old\"}]}", "running[0]", "missing key \"preempted\"");
    s_fails(p, "{" BOTH_REJECTED ",\"running\":[{\"name\":\"old\",\"preempted\":false,\"pod_sets\":[]}]}",
            "running[0].pod_sets", "unknown key \"pod_sets\"");
    s_fails(p, "{" BOTH_REJECTED ",\"running\":[{\"name\":\"new\",\"preempted\":false}]}", "running[0].name",
            "is \"new\", but the problem's running gang 0 is \"old\"");
    s_fails(p, "{" BOTH_REJECTED ",\"running\":[{\"name\":\"old\",\"preempted\":true,\"by\":[\"zz\"]}]}",
            "running[0].by[0]", "unknown gang \"zz\" (not in the problem's gangs)");

    const char *ok = "{" BOTH_REJECTED ",\"running\":[{\"name\":\"old\",\"preempted\":true,\"by\":[\"b\"]}]}";
    rf_answer_t *a = NULL;
    rf_error_t err;
    cr_assert_eq(rf_answer_from_json(p, ok, strlen(ok), &a, &err), RF_OK, "%s: %s", err.path, err.message);
    cr_assert(a->has_running);
    cr_assert(a->running[0].preempted);
    cr_assert_eq(a->running[0].n_by, 1);
    cr_assert_eq(a->running[0].by[0], 1);
    /* no summary: the counts come from the gangs */
    cr_assert_eq(a->summary.admitted, 0);
    cr_assert_eq(a->summary.rejected, 2);
    char *out = s_write(a);
    cr_assert(strstr(out, "\"running\":[\n{\"name\":\"old\",\"preempted\":true,\"by\":[\"b\"]}\n],\n"), "%s", out);
    free(out);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer_json, null_arguments_and_bad_text)
{
    rf_problem_t *p = s_problem(false);
    rf_answer_t *a = rf_answer_new(p);
    rf_error_t err;
    size_t len = 7;
    cr_assert_eq(rf_answer_to_json(NULL, NULL, &len, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "rf_answer_to_json: NULL argument");
    cr_assert_eq(rf_answer_to_json(a, NULL, &len, &err), RF_EINVAL);
    rf_answer_t *back = NULL;
    cr_assert_eq(rf_answer_from_json(p, "{\"gangs\":", 9, &back, &err), RF_EPARSE);
    cr_assert_null(back);
    cr_assert_eq(rf_answer_from_json(p, "[1]", 3, &back, &err), RF_ESCHEMA);
    cr_assert_str_eq(err.message, "must be a map, not an array");
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}
