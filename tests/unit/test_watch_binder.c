/* tests/unit/test_watch_binder.c: the state the binder threads share
 * (watcher/binder.c): bind backoff (base doubling, capped, forgotten when
 * admitted), requeue backoff and limit, busy gangs, the hand-over of bound
 * gangs, why a gang is held, the next due time, and the requeue annotation's
 * format read back. Binding itself (requests to an API server) runs against
 * the emulator in tests/integration/watch_*.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../support/leak.h"
#include "binder.h"
#include "ktime.h"

Test(watch_binder, bind_backoff_doubles_and_caps)
{
    rf__binder_t b;
    rf__binder_init(&b);
    b.backoff_base_s = 10;
    b.backoff_cap_s = 35;
    cr_assert(!rf__binder_holds(&b, "ns/g"));
    double t0 = rf__now();
    double expect[] = {10, 20, 35, 35};
    for (int i = 0; i < 4; i++) {
        rf__binder_hold(&b, "ns/g");
        cr_assert_eq(b.n_holds, 1);
        cr_assert_float_eq(b.holds[0].until - t0, expect[i], 0.5, "failure %d", i + 1);
    }
    cr_assert(rf__binder_holds(&b, "ns/g"));
    cr_assert_eq(rf__binder_held_why(&b, "ns/g"), RF_HELD_BACKOFF);
    cr_assert_float_eq(rf__binder_next_due(&b, t0), b.holds[0].until, 1e-9);
    rf__binder_unhold(&b, "ns/g");
    cr_assert(!rf__binder_holds(&b, "ns/g"));
    cr_assert_eq(rf__binder_next_due(&b, t0), 0);
    b.admit_timeout_s = 7; /* an unevictable victim's window: its end is due (the victim is preemptible again) */
    rf__binder_unevictable_add(&b, "ns/v");
    cr_assert(rf__binder_unevictable(&b, "ns/v"));
    cr_assert_float_eq(rf__binder_next_due(&b, t0), b.unevictable[0].until, 1e-9);
    cr_assert_float_eq(b.unevictable[0].until - t0, 7, 0.5);
    rf__binder_fini(&b);
    rf_test_no_leaks();
}

Test(watch_binder, requeue_backoff_and_limit)
{
    rf__binder_t b;
    rf__binder_init(&b);
    b.requeue_base_s = 60;
    b.requeue_cap_s = 150;
    b.requeue_limit = 3;
    rf__requeue_t r;
    double t0 = rf__now();
    double expect[] = {60, 120, 150};
    for (int i = 0; i < 3; i++) {
        rf__binder_requeue(&b, "ns/g", "not ready", &r);
        cr_assert_eq(r.count, i + 1);
        cr_assert(!r.failed);
        cr_assert_float_eq(r.until - t0, expect[i], 0.5);
        cr_assert_eq(rf__binder_held_why(&b, "ns/g"), RF_HELD_BACKOFF);
    }
    rf__binder_requeue(&b, "ns/g", "still not ready", &r);
    cr_assert(r.failed, "past the limit the gang has failed");
    cr_assert_eq(rf__binder_held_why(&b, "ns/g"), RF_HELD_FAILED);
    cr_assert(rf__binder_holds(&b, "ns/g"), "a failed gang stays pending");
    char why[64];
    cr_assert(rf__binder_requeue_get(&b, "ns/g", &r, why, sizeof why));
    cr_assert_str_eq(why, "still not ready");
    cr_assert_eq(atomic_load(&b.requeued), 3);
    cr_assert_eq(atomic_load(&b.failed_gangs), 1);
    rf__binder_requeue_forget(&b, "ns/g");
    cr_assert(!rf__binder_requeue_get(&b, "ns/g", &r, why, sizeof why));
    cr_assert(!rf__binder_holds(&b, "ns/g"));
    rf__binder_fini(&b);
    rf_test_no_leaks();
}

Test(watch_binder, busy_and_bound_gangs_are_held)
{
    rf__binder_t b;
    rf__binder_init(&b);
    rf__binder_busy(&b, "ns/a", +1);
    cr_assert(rf__binder_holds(&b, "ns/a"));
    cr_assert_eq(rf__binder_held_why(&b, "ns/a"), RF_HELD_BINDING);
    rf__binder_busy(&b, "ns/a", -1);
    cr_assert(!rf__binder_holds(&b, "ns/a"));
    cr_assert_eq(rf__binder_held_why(&b, "ns/a"), RF_HELD_NONE);
    int32_t n = -1;
    rf__follow_t *f = rf__binder_take_bound(&b, &n);
    cr_assert_eq(n, 0);
    free(f);
    rf__binder_fini(&b);
    rf_test_no_leaks();
}

Test(watch_binder, requeue_annotation_round_trip)
{
    rf__requeue_t r = {.count = 2, .until_wall = 1796150832.4};
    char v[96];
    rf__requeue_format(&r, v, sizeof v);
    cr_assert_str_eq(v, "2 2026-12-01T18:47:12Z");
    int count;
    double until;
    bool failed;
    cr_assert(rf__requeue_parse(v, &count, &until, &failed));
    cr_assert_eq(count, 2);
    cr_assert(!failed);
    cr_assert_float_eq(until, 1796150832, 1e-6);
    r.failed = true;
    r.count = 4;
    rf__requeue_format(&r, v, sizeof v);
    cr_assert_str_eq(v, "4 failed");
    cr_assert(rf__requeue_parse(v, &count, &until, &failed));
    cr_assert(failed);
    cr_assert_eq(count, 4);
    const char *bad[] = {"", "x", "0 failed", "2", "2 tomorrow", "2 failed extra", "-1 failed", NULL};
    for (int i = 0; bad[i]; i++)
        cr_assert(!rf__requeue_parse(bad[i], &count, &until, &failed), "`%s` parsed", bad[i]);
    rf__binder_t b;
    rf__binder_init(&b);
    rf__binder_requeue_restore(&b, "ns/g", 2, rf__wall() + 100, false);
    cr_assert(rf__binder_holds(&b, "ns/g"), "a restored backoff holds the gang until its next try");
    rf__binder_requeue_restore(&b, "ns/h", 1, rf__wall() - 5, false);
    cr_assert(!rf__binder_holds(&b, "ns/h"), "a next try in the past is due");
    rf__binder_fini(&b);
    rf_test_no_leaks();
}

Test(watch_binder, readback_counts_only_this_attempts_own_binding)
{
    /* a 409 or a timed-out binding read back: the pod counts as bound by this
     * attempt only when it carries this attempt's intent on the planned node */
    rf__bind_t p = {.ns = "ns", .name = "p-0", .uid = "u1", .node = "n1"};
    char a1[RF_INTENT_CAP], a2[RF_INTENT_CAP];
    rf__bind_intent_value("w-0.1796150832000.1", "n1", 4, a1, sizeof a1);
    rf__bind_intent_value("w-0.1796150833000.2", "n1", 4, a2, sizeof a2);
    cr_assert_str_eq(a1, "w-0.1796150832000.1 n1 4");
    cr_assert_eq(rf__bind_readback("u1", "n1", a2, &p, a2), RF_RB_OURS);
    cr_assert_eq(rf__bind_readback("u1", "n1", a1, &p, a2), RF_RB_OTHER,
                 "the late write of a rolled-back attempt is not this attempt's success");
    cr_assert_eq(rf__bind_readback("u1", "n1", NULL, &p, a2), RF_RB_OTHER, "bound without an intent");
    cr_assert_eq(rf__bind_readback("u1", "n2", a2, &p, a2), RF_RB_OTHER, "bound on another node");
    cr_assert_eq(rf__bind_readback("u1", NULL, NULL, &p, a2), RF_RB_UNBOUND);
    cr_assert_eq(rf__bind_readback("u1", "", NULL, &p, a2), RF_RB_UNBOUND);
    cr_assert_eq(rf__bind_readback("u2", "n1", a1, &p, a2), RF_RB_UNBOUND, "another pod of that name");
    cr_assert_eq(rf__bind_readback("u2", "n1", NULL, &p, a2), RF_RB_UNBOUND);
    cr_assert_eq(rf__bind_readback("u2", "n1", a2, &p, a2), RF_RB_RECREATED,
                 "recreated mid-bind, bound by this attempt (a server ignoring the Binding's uid)");
    cr_assert_eq(rf__bind_readback("u2", NULL, a2, &p, a2), RF_RB_UNBOUND);
    cr_assert_eq(rf__bind_readback(NULL, "n1", a2, &p, a2), RF_RB_UNBOUND);
}

Test(watch_binder, intent_of_the_longest_identity_and_node_round_trips)
{
    /* the longest identity config.c accepts and the longest node name: nothing truncated */
    char id[RF_IDENTITY_MAX + 1], node[254], attempt[RF_ATTEMPT_CAP], v[RF_INTENT_CAP];
    memset(id, 'w', sizeof id - 1);
    id[sizeof id - 1] = '\0';
    memset(node, 'n', sizeof node - 1);
    node[sizeof node - 1] = '\0';
    int len = snprintf(attempt, sizeof attempt, "%s.%lld.%lu", id, 1796150832000LL, 18446744073709551615UL);
    cr_assert_lt(len, (int)sizeof attempt, "the attempt's unique suffix fits");
    rf__bind_intent_value(attempt, node, 1024, v, sizeof v);
    cr_assert_eq(strlen(v), strlen(attempt) + 1 + strlen(node) + 5, "SIZE is not cut");
    char a2[RF_ATTEMPT_CAP], n2[RF_NODE_NAME_CAP];
    int size = 0;
    cr_assert(rf__bind_intent_parse(v, a2, n2, &size));
    cr_assert_str_eq(a2, attempt);
    cr_assert_str_eq(n2, node);
    cr_assert_eq(size, 1024);
    cr_assert(rf__bind_intent_parse("w.1.2 n1 4", a2, n2, &size));
    cr_assert_eq(size, 4);
    const char *bad[] = {"",        "a n1",  "a n1 0",    "a n1 4 x", "a  n1 4",          " a n1 4",
                         "a n1 -4", "a n1 ", "a n1 four", "a n1 4x",  "a n1 99999999999", NULL};
    for (int i = 0; bad[i]; i++)
        cr_assert(!rf__bind_intent_parse(bad[i], a2, n2, &size), "`%s` parsed", bad[i]);
    char too_long[RF_ATTEMPT_CAP + 16];
    memset(too_long, 'a', RF_ATTEMPT_CAP);
    snprintf(too_long + RF_ATTEMPT_CAP, 16, " n1 4");
    cr_assert(!rf__bind_intent_parse(too_long, a2, n2, &size), "an attempt too long is refused, not cut");
}
