/* tests/unit/test_budget.c: the solver-thread budget (service/budget.c):
 * takes are capped by what is asked and what is free, solver-lane solves
 * leave one thread for greedy ones, and a blocked take wakes on a give. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "../support/leak.h"
#include "budget.h"

Test(budget, takes_and_gives)
{
    rf__budget_t b;
    cr_assert_eq(rf__budget_init(&b, 4), 0);
    cr_assert_eq(rf__budget_take(&b, 0, false), 1, "at least one");
    cr_assert_eq(rf__budget_take(&b, 8, true), 3, "a solver-lane solve holds at most budget - 1 = 3");
    cr_assert_eq(rf__budget_in_use(&b), 4);
    rf__budget_give(&b, 3, true);
    cr_assert_eq(rf__budget_take(&b, 2, false), 2);
    cr_assert_eq(rf__budget_in_use(&b), 3);
    rf__budget_give(&b, 2, false);
    rf__budget_give(&b, 1, false);
    cr_assert_eq(rf__budget_in_use(&b), 0);
    rf__budget_fini(&b);
    rf_test_no_leaks();
}

static rf__budget_t s_b;

static void *s_greedy(void *arg)
{
    (void)arg;
    int32_t got = rf__budget_take(&s_b, 1, false);
    rf__budget_give(&s_b, got, false);
    return (void *)(intptr_t)got;
}

static void *s_solver(void *arg)
{
    (void)arg;
    int32_t got = rf__budget_take(&s_b, 1, true);
    rf__budget_give(&s_b, got, true);
    return (void *)(intptr_t)got;
}

Test(budget, solver_lane_leaves_one_for_greedy)
{
    cr_assert_eq(rf__budget_init(&s_b, 2), 0);
    cr_assert_eq(rf__budget_take(&s_b, 2, true), 1, "budget 2: the solver lane gets 1");
    /* a second solver-lane solve waits; a greedy one still runs */
    pthread_t g, s;
    pthread_create(&s, NULL, s_solver, NULL);
    pthread_create(&g, NULL, s_greedy, NULL);
    void *gr = NULL, *sr = NULL;
    pthread_join(g, &gr);
    cr_assert_eq((intptr_t)gr, 1, "the greedy solve found the thread left for it");
    usleep(20000);
    cr_assert_eq(rf__budget_in_use(&s_b), 1, "the second solver-lane solve is still waiting");
    rf__budget_give(&s_b, 1, true);
    pthread_join(s, &sr);
    cr_assert_eq((intptr_t)sr, 1, "it ran once the first gave its thread back");
    cr_assert_eq(rf__budget_in_use(&s_b), 0);
    rf__budget_fini(&s_b);
    rf_test_no_leaks();
}
