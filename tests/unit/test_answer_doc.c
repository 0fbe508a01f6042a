/* tests/unit/test_answer_doc.c: the one answer encoder (solver/answer_doc.c,
 * rf_answer_to_doc): the tree's keys in their fixed order, with only the
 * fields that apply (an admitted gang's placements and domains, a rejected
 * one's reason and the why fields that are set, `running` and
 * summary.preempted only when the problem has running gangs, `by` only for a
 * preempted one); INT counts and FLOAT penalties; strings borrowed from the
 * problem; the caller's arena used; a bad index written as null; NULL
 * arguments refused. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "../support/testutil.h"
#include "arena.h"
#include "doc.h"
#include "rackfit/rackfit.h"

/* The value of `key` in map m, asserting it is the `i`-th pair. */
static const rf_doc_t *s_at(const rf_doc_t *m, uint32_t i, const char *key)
{
    cr_assert_eq(m->type, RF_DOC_MAP);
    cr_assert_lt(i, m->len, "no pair %u for \"%s\" (%u pairs)", i, key, m->len);
    cr_assert_str_eq(m->u.pairs[i].key, key);
    cr_assert_eq(m->u.pairs[i].key_len, strlen(key));
    return &m->u.pairs[i].value;
}

static rf_problem_t *s_problem(const char *running, const char *gangs)
{
    static const int used[8] = {8, 0, 0, 0, 0, 0, 0, 0};
    char *json = rf_test_preempt_json(used, running, gangs, NULL);
    rf_problem_t *p = rf_test_parse(json);
    free(json);
    return p;
}

#define TWO_GANGS                                                                                                      \
    "[{\"name\":\"train\",\"priority\":5,\"pod_sets\":[{\"name\":\"ps\",\"count\":1},"                                 \
    "{\"name\":\"workers\",\"count\":3,\"requests\":{\"nvidia.com/gpu\":8}}]},"                                        \
    "{\"name\":\"big\",\"pod_sets\":[{\"name\":\"w\",\"count\":64,\"requests\":{\"nvidia.com/gpu\":8}}]}]"

Test(answer_doc, admitted_and_rejected_gangs_without_running)
{
    rf_problem_t *p = s_problem("[]", TWO_GANGS);
    rf_answer_t *a = rf_answer_new(p);
    cr_assert_eq(rf_answer_add(a, 0, 0, 1, 1), RF_OK);
    cr_assert_eq(rf_answer_add(a, 0, 1, 1, 1), RF_OK);
    cr_assert_eq(rf_answer_add(a, 0, 1, 4, 2), RF_OK);
    rf_why_t why = {1, 1, 7, 8}; /* host level, nvidia.com/gpu */
    cr_assert_eq(rf_answer_reject(a, 1, why, "short by %d GPUs", 8), RF_OK);
    cr_assert_eq(rf_answer_finish(a), RF_OK);

    rf__arena_t *arena = rf__arena_new(0);
    size_t before = rf__arena_used(arena);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf_answer_to_doc(a, arena, &doc, &err), RF_OK, "%s", err.message);
    cr_assert_gt(rf__arena_used(arena), before); /* built in the caller's arena */
    cr_assert_eq(doc->len, 2);                   /* no running gangs: gangs, summary */
    const rf_doc_t *gangs = s_at(doc, 0, "gangs");
    cr_assert_eq(gangs->type, RF_DOC_ARRAY);
    cr_assert_eq(gangs->len, 2);

    const rf_doc_t *g = &gangs->u.items[0];
    cr_assert_eq(g->len, 5);
    cr_assert_eq(s_at(g, 0, "name")->u.s, p->gangs[0].name); /* borrowed */
    cr_assert(s_at(g, 1, "admitted")->u.b);
    const rf_doc_t *sets = s_at(g, 2, "pod_sets");
    cr_assert_eq(sets->len, 2);
    cr_assert_str_eq(s_at(&sets->u.items[0], 0, "name")->u.s, "ps");
    const rf_doc_t *pl = s_at(&sets->u.items[1], 1, "placements");
    cr_assert_eq(pl->len, 2);
    cr_assert_str_eq(s_at(&pl->u.items[1], 0, "node")->u.s, "h-4");
    const rf_doc_t *count = s_at(&pl->u.items[1], 1, "count");
    cr_assert_eq(count->type, RF_DOC_INT);
    cr_assert_eq(count->u.i, 2);
    const rf_doc_t *dom = s_at(g, 3, "domains");
    cr_assert_eq(dom->len, 2);
    cr_assert_eq(dom->u.items[0].u.i, 2); /* racks r1, r2 */
    cr_assert_eq(dom->u.items[1].u.i, 2); /* hosts h-1, h-4 */
    const rf_doc_t *pen = s_at(g, 4, "penalty");
    cr_assert_eq(pen->type, RF_DOC_FLOAT);
    cr_assert_float_eq(pen->u.f, a->gangs[0].penalty, 0);

    g = &gangs->u.items[1];
    cr_assert_eq(g->len, 4);
    cr_assert_not(s_at(g, 1, "admitted")->u.b);
    cr_assert_str_eq(s_at(g, 2, "reason")->u.s, "short by 8 GPUs");
    const rf_doc_t *w = s_at(g, 3, "why");
    cr_assert_eq(w->len, 4);
    cr_assert_str_eq(s_at(w, 0, "level")->u.s, "kubernetes.io/hostname");
    cr_assert_str_eq(s_at(w, 1, "resource")->u.s, "nvidia.com/gpu");
    cr_assert_eq(s_at(w, 2, "fits")->u.i, 7);
    cr_assert_eq(s_at(w, 3, "needs")->u.i, 8);

    const rf_doc_t *sum = s_at(doc, 1, "summary");
    cr_assert_eq(sum->len, 8);
    cr_assert_eq(s_at(sum, 0, "admitted")->u.i, 1);
    cr_assert_eq(s_at(sum, 1, "rejected")->u.i, 1);
    const rf_doc_t *value = s_at(sum, 2, "value");
    cr_assert_eq(value->len, 2); /* priorities 5 and 0 */
    cr_assert_eq(value->u.items[0].len, 3);
    cr_assert_eq(value->u.items[0].u.items[0].u.i, 5);
    cr_assert_eq(value->u.items[0].u.items[1].u.i, 24); /* 3 workers x 8 GPUs */
    cr_assert_eq(value->u.items[0].u.items[2].u.i, 4);
    cr_assert_eq(s_at(sum, 3, "penalty")->type, RF_DOC_FLOAT);
    cr_assert_eq(s_at(sum, 4, "penalty_bound")->type, RF_DOC_FLOAT);
    cr_assert_eq(s_at(sum, 5, "optimal")->type, RF_DOC_BOOL);
    cr_assert_str_eq(s_at(sum, 6, "mode_used")->u.s, "none"); /* no solver ran */
    cr_assert_eq(s_at(sum, 7, "solve_ms")->type, RF_DOC_FLOAT);

    rf__arena_destroy(&arena);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer_doc, why_fields_only_when_set_and_default_reason)
{
    rf_problem_t *p = s_problem("[]", TWO_GANGS);
    rf_answer_t *a = rf_answer_new(p);
    rf_why_t why = {-1, -1, -1, 3};
    cr_assert_eq(rf_answer_reject(a, 0, why, "%s", "no room"), RF_OK);
    a->gangs[1].admitted = false; /* never touched: no reason recorded */
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf_answer_to_doc(a, NULL, &doc, NULL), RF_OK); /* the problem's arena */
    const rf_doc_t *w = s_at(&s_at(doc, 0, "gangs")->u.items[0], 3, "why");
    cr_assert_eq(w->len, 1);
    cr_assert_eq(s_at(w, 0, "needs")->u.i, 3);
    const rf_doc_t *g1 = &s_at(doc, 0, "gangs")->u.items[1];
    cr_assert_str_eq(s_at(g1, 2, "reason")->u.s, "not admitted");
    cr_assert_eq(s_at(g1, 3, "why")->len, 0);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer_doc, running_gangs_kept_and_preempted)
{
    rf_problem_t *p = s_problem("[{\"name\":\"old\",\"priority\":0,\"pod_sets\":[{\"name\":\"w\",\"requests\":"
                                "{\"nvidia.com/gpu\":8},\"placements\":[{\"node\":\"h-0\",\"count\":1}]}]}]",
                                "[{\"name\":\"new\",\"priority\":9,\"pod_sets\":[{\"name\":\"w\",\"count\":1,"
                                "\"requests\":{\"nvidia.com/gpu\":8}}]}]");
    rf_answer_t *kept = rf_answer_new(p);
    cr_assert_eq(rf_answer_finish(kept), RF_OK);
    rf_answer_t *pre = rf_answer_new(p);
    cr_assert_eq(rf_answer_add(pre, 0, 0, 0, 1), RF_OK);
    cr_assert_eq(rf_answer_preempt(pre, 0, true), RF_OK);
    cr_assert_eq(rf_answer_finish(pre), RF_OK);

    rf_doc_t *doc = NULL;
    cr_assert_eq(rf_answer_to_doc(kept, NULL, &doc, NULL), RF_OK);
    cr_assert_eq(doc->len, 3);
    const rf_doc_t *r = &s_at(doc, 1, "running")->u.items[0];
    cr_assert_eq(r->len, 2); /* kept: no `by` */
    cr_assert_eq(s_at(r, 0, "name")->u.s, p->running[0].name);
    cr_assert_not(s_at(r, 1, "preempted")->u.b);
    const rf_doc_t *sum = s_at(doc, 2, "summary");
    cr_assert_eq(sum->len, 9);
    cr_assert_eq(s_at(sum, 2, "preempted")->u.i, 0);

    cr_assert_eq(rf_answer_to_doc(pre, NULL, &doc, NULL), RF_OK);
    r = &s_at(doc, 1, "running")->u.items[0];
    cr_assert_eq(r->len, 3);
    cr_assert(s_at(r, 1, "preempted")->u.b);
    const rf_doc_t *by = s_at(r, 2, "by");
    cr_assert_eq(by->len, 1);
    cr_assert_eq(by->u.items[0].u.s, p->gangs[0].name);
    cr_assert_eq(s_at(s_at(doc, 2, "summary"), 2, "preempted")->u.i, 1);

    rf_answer_destroy(&kept);
    rf_answer_destroy(&pre);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

Test(answer_doc, bad_indices_become_null_and_null_arguments_are_refused)
{
    rf_problem_t *p = s_problem("[]", TWO_GANGS);
    rf_answer_t *a = rf_answer_new(p);
    cr_assert_eq(rf_answer_add(a, 0, 0, 2, 1), RF_OK);
    a->gangs[0].pod_sets[0].placements[0].node = 99; /* not a node */
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf_answer_to_doc(a, NULL, &doc, NULL), RF_OK);
    const rf_doc_t *ps = &s_at(&s_at(doc, 0, "gangs")->u.items[0], 2, "pod_sets")->u.items[0];
    cr_assert_eq(s_at(&s_at(ps, 1, "placements")->u.items[0], 0, "node")->type, RF_DOC_NULL);

    rf_error_t err;
    doc = (rf_doc_t *)&doc;
    cr_assert_eq(rf_answer_to_doc(NULL, NULL, &doc, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "rf_answer_to_doc: NULL argument");
    cr_assert_eq(rf_answer_to_doc(a, NULL, NULL, &err), RF_EINVAL);
    rf_answer_destroy(&a);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}
