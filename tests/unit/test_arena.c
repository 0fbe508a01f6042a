/* tests/unit/test_arena.c: the bump allocator (base/arena.c): zeroed,
 * aligned, disjoint memory; large requests; the byte cap; overflow. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"

Test(arena, zeroed_aligned_disjoint)
{
    rf__arena_t *arena = rf__arena_new(0);
    cr_assert_not_null(arena);
    unsigned char *prev = NULL;
    size_t prev_size = 0;
    size_t total = 0;
    for (size_t i = 0; i < 5000; i++) {
        size_t size = (i * 7919) % 300; /* includes 0 */
        unsigned char *p = rf__arena_alloc(arena, size);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 16, 0, "allocation %zu not 16-byte aligned", i);
        for (size_t k = 0; k < size; k++)
            cr_assert_eq(p[k], 0);
        memset(p, 0xAB, size);
        if (prev)
            cr_assert(p >= prev + prev_size || p + size <= prev, "overlap");
        prev = p;
        prev_size = size;
        total += size ? (size + 15) / 16 * 16 : 16;
    }
    cr_assert_eq(rf__arena_used(arena), total);
    rf__arena_destroy(&arena);
    cr_assert_null(arena);
    rf__arena_destroy(&arena); /* NULL-safe */
    rf__arena_destroy(NULL);
    rf_test_no_leaks();
}

Test(arena, large_requests_keep_the_current_chunk)
{
    rf__arena_t *arena = rf__arena_new(0);
    char *a = rf__arena_alloc(arena, 100);
    char *big = rf__arena_alloc(arena, 1 << 20);
    char *b = rf__arena_alloc(arena, 100);
    cr_assert(a && big && b);
    cr_assert_eq(b, a + 112, "a small request after a large one continues the current chunk");
    for (size_t k = 0; k < (1 << 20); k += 4096)
        cr_assert_eq(big[k], 0);
    memset(big, 1, 1 << 20);
    char *huge = rf__arena_alloc(arena, 64 * 1024 + 1);
    cr_assert_not_null(huge);
    cr_assert_eq((uintptr_t)huge % 16, 0);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(arena, strndup)
{
    rf__arena_t *arena = rf__arena_new(0);
    char *s = rf__arena_strndup(arena, "hello world", 5);
    cr_assert_str_eq(s, "hello");
    char *e = rf__arena_strndup(arena, "", 0);
    cr_assert_str_eq(e, "");
    char *n = rf__arena_strndup(arena, NULL, 0);
    cr_assert_not_null(n);
    cr_assert_str_eq(n, "");
    cr_assert_null(rf__arena_strndup(arena, NULL, 3));
    char *z = rf__arena_strndup(arena, "a\0b", 3);
    cr_assert_eq(memcmp(z, "a\0b\0", 4), 0);
    cr_assert_null(rf__arena_strndup(arena, "x", SIZE_MAX));
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(arena, cap)
{
    rf__arena_t *arena = rf__arena_new(1000);
    cr_assert_not_null(rf__arena_alloc(arena, 500));
    cr_assert_not_null(rf__arena_alloc(arena, 400));
    cr_assert_eq(rf__arena_used(arena), 912);
    cr_assert_null(rf__arena_alloc(arena, 100), "912 + 112 > 1000");
    cr_assert_not_null(rf__arena_alloc(arena, 80));
    cr_assert_eq(rf__arena_used(arena), 992);
    cr_assert_null(rf__arena_alloc(arena, 16));
    cr_assert_null(rf__arena_alloc(arena, SIZE_MAX));
    cr_assert_eq(rf__arena_used(arena), 992);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(arena, overflow_and_null)
{
    rf__arena_t *arena = rf__arena_new(0);
    cr_assert_null(rf__arena_alloc(arena, SIZE_MAX));
    cr_assert_null(rf__arena_alloc(arena, SIZE_MAX - 8));
    cr_assert_null(rf__arena_alloc(arena, SIZE_MAX - 100));
    cr_assert_null(rf__arena_alloc(arena, (size_t)PTRDIFF_MAX));
    cr_assert_null(rf__arena_alloc(arena, (size_t)PTRDIFF_MAX + 1));
    cr_assert_eq(rf__arena_used(arena), 0);
    cr_assert_not_null(rf__arena_alloc(arena, 1));
    cr_assert_null(rf__arena_alloc(NULL, 1));
    cr_assert_null(rf__arena_strndup(NULL, "x", 1));
    cr_assert_eq(rf__arena_used(NULL), 0);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}
