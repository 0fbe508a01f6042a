/* tests/unit/test_doc.c: the document tree's helpers (base/doc.c): type
 * names, map lookup, and contract paths with safe truncation. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "doc.h"

Test(doc, type_names)
{
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_NULL), "null");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_BOOL), "a boolean");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_INT), "an integer");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_FLOAT), "a number");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_STR), "a string");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_ARRAY), "an array");
    cr_assert_str_eq(rf__doc_type_name(RF_DOC_MAP), "a map");
    cr_assert_not_null(rf__doc_type_name((rf_doc_type)99));
    rf_test_no_leaks();
}

Test(doc, get)
{
    rf__arena_t *arena = rf__arena_new(0);
    cr_assert_not_null(arena);
    rf_doc_t map = {.type = RF_DOC_MAP, .len = 3, .offset = -1};
    rf_doc_kv_t *pairs = rf__arena_alloc(arena, 3 * sizeof(*pairs));
    cr_assert_not_null(pairs);
    const char *keys[] = {"cluster", "gangs", "cluster2"};
    for (int i = 0; i < 3; i++) {
        pairs[i].key = rf__arena_strndup(arena, keys[i], strlen(keys[i]));
        pairs[i].key_len = (uint32_t)strlen(keys[i]);
        pairs[i].value.type = RF_DOC_INT;
        pairs[i].value.u.i = i;
    }
    map.u.pairs = pairs;
    cr_assert_eq(rf__doc_get(&map, "cluster"), &pairs[0].value);
    cr_assert_eq(rf__doc_get(&map, "gangs")->u.i, 1);
    cr_assert_eq(rf__doc_get(&map, "cluster2")->u.i, 2);
    cr_assert_null(rf__doc_get(&map, "clust"));
    cr_assert_null(rf__doc_get(&map, "clusterx"));
    cr_assert_null(rf__doc_get(&map, ""));
    cr_assert_null(rf__doc_get(&map, NULL));
    cr_assert_null(rf__doc_get(NULL, "cluster"));
    /* a key with an embedded NUL only matches by its full length */
    pairs[2].key = rf__arena_strndup(arena, "ab\0c", 4);
    pairs[2].key_len = 4;
    cr_assert_null(rf__doc_get(&map, "ab"));
    /* not a map */
    rf_doc_t arr = {.type = RF_DOC_ARRAY, .len = 0};
    cr_assert_null(rf__doc_get(&arr, "cluster"));
    rf_doc_t empty = {.type = RF_DOC_MAP, .len = 0};
    cr_assert_null(rf__doc_get(&empty, "cluster"));
    rf__arena_destroy(&arena);
    cr_assert_null(arena);
    rf_test_no_leaks();
}

Test(doc, paths)
{
    char p[256] = "";
    int n = 0;
    n = rf__path_key(p, n, sizeof(p), "cluster");
    cr_assert_str_eq(p, "cluster");
    cr_assert_eq(n, 7);
    n = rf__path_key(p, n, sizeof(p), "nodes");
    cr_assert_str_eq(p, "cluster.nodes");
    n = rf__path_index(p, n, sizeof(p), 3);
    cr_assert_str_eq(p, "cluster.nodes[3]");
    n = rf__path_key(p, n, sizeof(p), "labels");
    n = rf__path_key(p, n, sizeof(p), "kubernetes.io/hostname");
    cr_assert_str_eq(p, "cluster.nodes[3].labels[\"kubernetes.io/hostname\"]");
    cr_assert_eq(n, (int)strlen(p));

    n = 0;
    n = rf__path_key(p, n, sizeof(p), "gangs");
    n = rf__path_index(p, n, sizeof(p), 3);
    n = rf__path_key(p, n, sizeof(p), "pod_sets");
    n = rf__path_index(p, n, sizeof(p), 0);
    n = rf__path_key(p, n, sizeof(p), "requests");
    n = rf__path_key(p, n, sizeof(p), "nvidia.com/gpu");
    cr_assert_str_eq(p, "gangs[3].pod_sets[0].requests[\"nvidia.com/gpu\"]");
    cr_assert_eq(n, (int)strlen(p));
    rf_test_no_leaks();
}

Test(doc, plain_and_quoted_keys)
{
    const struct {
        const char *key;
        const char *want;
    } cases[] = {
        {"cpu", "x.cpu"},
        {"_x9", "x._x9"},
        {"A_b", "x.A_b"},
        {"9lives", "x[\"9lives\"]"},
        {"", "x[\"\"]"},
        {"a-b", "x[\"a-b\"]"},
        {"a b", "x[\"a b\"]"},
        {"say \"hi\"", "x[\"say \\\"hi\\\"\"]"},
        {"back\\slash", "x[\"back\\\\slash\"]"},
        {"tab\there", "x[\"tab\\there\"]"},
        {"nl\n", "x[\"nl\\n\"]"},
        {"\x01", "x[\"\\u0001\"]"},
        {"\x7f", "x[\"\\u007f\"]"},
        {"caf\xc3\xa9", "x[\"caf\xc3\xa9\"]"},            /* UTF-8 kept */
        {"bad\xff", "x[\"bad\\ufffd\"]"},                 /* not UTF-8: replaced */
        {"\xc0\xaf", "x[\"\\ufffd\\ufffd\"]"},            /* overlong */
        {"\xed\xa0\x80", "x[\"\\ufffd\\ufffd\\ufffd\"]"}, /* surrogate */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char p[64] = "x";
        int n = rf__path_key(p, 1, sizeof(p), cases[i].key);
        cr_assert_str_eq(p, cases[i].want, "key %zu", i);
        cr_assert_eq(n, (int)strlen(p));
    }
    /* at the root: no leading dot; a quoted key is just the brackets */
    char p[64] = "";
    rf__path_key(p, 0, sizeof(p), "a.b");
    cr_assert_str_eq(p, "[\"a.b\"]");
    /* NULL key reads as "" */
    p[0] = '\0';
    rf__path_key(p, 0, sizeof(p), NULL);
    cr_assert_str_eq(p, "[\"\"]");
    /* negative and large indices */
    p[0] = '\0';
    int n = rf__path_index(p, 0, sizeof(p), -1);
    cr_assert_str_eq(p, "[-1]");
    n = rf__path_index(p, n, sizeof(p), 2147483647L);
    cr_assert_str_eq(p, "[-1][2147483647]");
    rf_test_no_leaks();
}

/* Every capacity from 1 up: NUL-terminated, within bounds, never a broken
 * escape or UTF-8 sequence, and full once truncated. */
Test(doc, truncation)
{
    const char *keys[] = {"gangs", "pod_sets", "requests", "nvidia.com/gpu", "caf\xc3\xa9\"\\\x01", "\xf0\x9f\x98\x80"};
    for (int cap = 1; cap < 120; cap++) {
        char buf[160];
        memset(buf, 'Z', sizeof(buf));
        buf[0] = '\0';
        int n = 0;
        for (int round = 0; round < 3; round++) {
            for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                n = rf__path_key(buf, n, cap, keys[k]);
                cr_assert(n >= 0 && n < cap, "cap %d n %d", cap, n);
                cr_assert_eq((int)strlen(buf), n, "cap %d", cap);
                n = rf__path_index(buf, n, cap, 12345);
                cr_assert(n >= 0 && n < cap);
                cr_assert_eq((int)strlen(buf), n);
            }
        }
        for (int i = cap; i < (int)sizeof(buf); i++)
            cr_assert_eq(buf[i], 'Z', "cap %d: wrote past the end at %d", cap, i);
        /* no truncated UTF-8 at the end: the emoji is 4 bytes or absent */
        const char *emoji = strstr(buf, "\xf0");
        if (emoji)
            cr_assert(strlen(emoji) >= 4 && memcmp(emoji, "\xf0\x9f\x98\x80", 4) == 0);
        /* a truncated path ends in dots and is full */
        if (n == cap - 1 && cap > 4) {
            int before = n;
            n = rf__path_key(buf, n, cap, "x");
            cr_assert_eq(n, before);
        }
    }
    /* the exact fit is not truncated */
    char p[8] = "";
    int n = rf__path_key(p, 0, sizeof(p), "abcdefg");
    cr_assert_eq(n, 7);
    cr_assert_str_eq(p, "abcdefg");
    /* one byte short: dots */
    char q[7] = "";
    n = rf__path_key(q, 0, sizeof(q), "abcdefg");
    cr_assert_eq(n, 6);
    cr_assert_str_eq(q, "abc...");
    /* garbage in: len beyond cap, negative len, zero cap, NULL buffer */
    char r[4] = "abc";
    cr_assert_eq(rf__path_key(r, 99, sizeof(r), "x"), 3);
    cr_assert_str_eq(r, "abc");
    r[0] = '\0';
    cr_assert_eq(rf__path_key(r, -5, sizeof(r), "x"), 1);
    cr_assert_str_eq(r, "x");
    cr_assert_eq(rf__path_key(r, 0, 0, "x"), 0);
    cr_assert_eq(rf__path_key(NULL, 0, 10, "x"), 0);
    cr_assert_eq(rf__path_index(NULL, 0, 10, 1), 0);
    rf_test_no_leaks();
}
