/* tests/unit/test_lanes.c: rackfitd's lanes (service/lanes.c): bounded by
 * requests and by bytes, one oversized request into an empty lane, FIFO
 * order, close-and-drain, and producers and consumers on threads. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "../support/leak.h"
#include "lanes.h"

static int s_jobs[64];

Test(lanes, bounded_by_count_and_bytes)
{
    rf__lane_t l;
    cr_assert_eq(rf__lane_init(&l, "fast", 4, 100), 0);
    cr_assert(rf__lane_push(&l, &s_jobs[0], 40));
    cr_assert(rf__lane_push(&l, &s_jobs[1], 40));
    cr_assert_not(rf__lane_push(&l, &s_jobs[2], 21), "121 bytes > 100");
    cr_assert(rf__lane_push(&l, &s_jobs[3], 20));
    int32_t n = 0;
    int64_t b = 0;
    rf__lane_depth(&l, &n, &b);
    cr_assert_eq(n, 3);
    cr_assert_eq(b, 100);
    cr_assert(rf__lane_push(&l, &s_jobs[4], 0));
    cr_assert_not(rf__lane_push(&l, &s_jobs[5], 0), "4 requests: the ring is full");
    cr_assert_eq(rf__lane_pop(&l), &s_jobs[0]);
    cr_assert_eq(rf__lane_pop(&l), &s_jobs[1]);
    cr_assert_eq(rf__lane_pop(&l), &s_jobs[3]);
    cr_assert_eq(rf__lane_pop(&l), &s_jobs[4]);
    rf__lane_depth(&l, &n, &b);
    cr_assert_eq(n, 0);
    cr_assert_eq(b, 0);
    /* one request larger than the whole budget is taken, alone */
    cr_assert(rf__lane_push(&l, &s_jobs[6], 1000));
    cr_assert_not(rf__lane_push(&l, &s_jobs[7], 1));
    cr_assert_eq(rf__lane_pop(&l), &s_jobs[6]);
    rf__lane_close(&l);
    cr_assert_not(rf__lane_push(&l, &s_jobs[8], 1), "a closed lane takes nothing");
    cr_assert_null(rf__lane_pop(&l));
    rf__lane_fini(&l, NULL);
    rf_test_no_leaks();
}

static void s_free(void *job)
{
    free(job);
}

Test(lanes, fini_frees_what_is_left)
{
    rf__lane_t l;
    cr_assert_eq(rf__lane_init(&l, "solver", 8, 1 << 20), 0);
    for (int i = 0; i < 5; i++)
        cr_assert(rf__lane_push(&l, malloc(16), 16));
    rf__lane_close(&l);
    void *first = rf__lane_pop(&l); /* a closed lane still drains */
    cr_assert_not_null(first);
    free(first);
    rf__lane_fini(&l, s_free);
    rf_test_no_leaks();
}

typedef struct {
    rf__lane_t *l;
    int64_t sum;
} s_consumer_t;

static void *s_consume(void *arg)
{
    s_consumer_t *c = arg;
    intptr_t *p;
    while ((p = rf__lane_pop(c->l)) != NULL) {
        c->sum += *p;
        free(p);
    }
    return NULL;
}

Test(lanes, producers_and_consumers)
{
    rf__lane_t l;
    cr_assert_eq(rf__lane_init(&l, "fast", 16, 1 << 20), 0);
    s_consumer_t c[2] = {{&l, 0}, {&l, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, s_consume, &c[i]);
    int64_t want = 0;
    for (intptr_t i = 1; i <= 2000; i++) {
        intptr_t *p = malloc(sizeof *p);
        *p = i;
        while (!rf__lane_push(&l, p, 8))
            ; /* full: the consumers make room */
        want += i;
    }
    rf__lane_close(&l);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(c[0].sum + c[1].sum, want, "every request popped exactly once");
    rf__lane_fini(&l, s_free);
    rf_test_no_leaks();
}
