/* tests/unit/test_json.c: the JSON boundary (base/json.c): documents,
 * key order, duplicate keys, limits (size, depth, strings), error messages
 * with line and column, every prefix of a sample failing cleanly, and
 * rf__read_file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "arena.h"
#include "doc.h"
#include "file.h"
#include "json.h"

static const char s_sample[] =
    "{\n"
    "  \"cluster\": {\n"
    "    \"levels\": [\"example.com/block\", \"example.com/rack\", \"kubernetes.io/hostname\"],\n"
    "    \"level_costs\": [100, 10, 1],\n"
    "    \"nodes\": [\n"
    "      { \"name\": \"h-0001\",\n"
    "        \"labels\": { \"example.com/rack\": \"r07\", \"kubernetes.io/hostname\": \"h-0001\" },\n"
    "        \"allocatable\": { \"nvidia.com/gpu\": 8, \"cpu\": \"96\", \"memory\": \"1Ti\", \"pods\": 110 },\n"
    "        \"taints\": [ { \"key\": \"nvidia.com/gpu\", \"value\": \"present\", \"effect\": \"NoSchedule\" } ],\n"
    "        \"unschedulable\": false }\n"
    "    ]\n"
    "  },\n"
    "  \"gangs\": [ { \"name\": \"team-a/llama\", \"priority\": -100, \"bandwidth\": 1.5, \"x\": null,\n"
    "               \"big\": 9223372036854775807, \"tiny\": 1e-3, \"esc\": \"a\\\"b\\\\c\\u00e9\\n\" } ],\n"
    "  \"options\": { \"mode\": \"auto\", \"time_limit_ms\": 1000 }\n"
    "}\n";

static rf_limits_t s_limits(void)
{
    rf_limits_t l;
    memset(&l, 0, sizeof(l));
    l.max_string = 4096;
    l.max_depth = 32;
    l.max_input_bytes = 1 << 20;
    return l;
}

static rf_status s_parse(const char *text, size_t len, const rf_limits_t *limits, rf_error_t *err)
{
    rf__arena_t *arena = rf__arena_new(0);
    cr_assert_not_null(arena);
    rf_doc_t *doc = (rf_doc_t *)1;
    rf_error_clear(err);
    rf_status s = rf__json_parse(text, len, limits, arena, &doc, err);
    if (s == RF_OK)
        cr_assert_not_null(doc);
    else
        cr_assert_null(doc);
    rf__arena_destroy(&arena);
    return s;
}

Test(json, sample_document)
{
    rf_limits_t limits = s_limits();
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *root = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(s_sample, strlen(s_sample), &limits, arena, &root, &err), RF_OK, "%s", err.message);
    cr_assert_eq(root->type, RF_DOC_MAP);
    cr_assert_eq(root->len, 3);
    cr_assert_str_eq(root->u.pairs[0].key, "cluster");
    cr_assert_str_eq(root->u.pairs[1].key, "gangs");
    cr_assert_str_eq(root->u.pairs[2].key, "options");
    cr_assert_eq(root->offset, -1);

    const rf_doc_t *cluster = rf__doc_get(root, "cluster");
    const rf_doc_t *levels = rf__doc_get(cluster, "levels");
    cr_assert_eq(levels->type, RF_DOC_ARRAY);
    cr_assert_eq(levels->len, 3);
    cr_assert_eq(levels->u.items[2].type, RF_DOC_STR);
    cr_assert_str_eq(levels->u.items[2].u.s, "kubernetes.io/hostname");
    cr_assert_eq(levels->u.items[2].len, strlen("kubernetes.io/hostname"));
    const rf_doc_t *costs = rf__doc_get(cluster, "level_costs");
    cr_assert_eq(costs->u.items[0].type, RF_DOC_INT);
    cr_assert_eq(costs->u.items[0].u.i, 100);

    const rf_doc_t *node = &rf__doc_get(cluster, "nodes")->u.items[0];
    const rf_doc_t *alloc = rf__doc_get(node, "allocatable");
    cr_assert_str_eq(alloc->u.pairs[0].key, "nvidia.com/gpu"); /* input order */
    cr_assert_str_eq(alloc->u.pairs[1].key, "cpu");
    cr_assert_str_eq(alloc->u.pairs[2].key, "memory");
    cr_assert_str_eq(alloc->u.pairs[3].key, "pods");
    cr_assert_eq(alloc->u.pairs[0].key_len, strlen("nvidia.com/gpu"));
    cr_assert_eq(rf__doc_get(alloc, "nvidia.com/gpu")->u.i, 8);
    cr_assert_str_eq(rf__doc_get(alloc, "memory")->u.s, "1Ti");
    cr_assert_eq(rf__doc_get(node, "unschedulable")->type, RF_DOC_BOOL);
    cr_assert_eq(rf__doc_get(node, "unschedulable")->u.b, false);

    const rf_doc_t *gang = &rf__doc_get(root, "gangs")->u.items[0];
    cr_assert_eq(rf__doc_get(gang, "priority")->u.i, -100);
    cr_assert_eq(rf__doc_get(gang, "bandwidth")->type, RF_DOC_FLOAT);
    cr_assert_float_eq(rf__doc_get(gang, "bandwidth")->u.f, 1.5, 1e-12);
    cr_assert_eq(rf__doc_get(gang, "x")->type, RF_DOC_NULL);
    cr_assert_eq(rf__doc_get(gang, "big")->u.i, INT64_MAX);
    cr_assert_eq(rf__doc_get(gang, "tiny")->type, RF_DOC_FLOAT);
    const rf_doc_t *esc = rf__doc_get(gang, "esc");
    cr_assert_str_eq(esc->u.s, "a\"b\\c\xc3\xa9\n");
    cr_assert_eq(esc->len, 8);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(json, key_order_is_input_order)
{
    char text[4096];
    int o = snprintf(text, sizeof(text), "{");
    for (int i = 200; i > 0; i--)
        o += snprintf(text + o, sizeof(text) - (size_t)o, "%s\"k%03d\":%d", i == 200 ? "" : ",", (i * 37) % 1000, i);
    o += snprintf(text + o, sizeof(text) - (size_t)o, "}");
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *root = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(text, (size_t)o, NULL, arena, &root, &err), RF_OK, "%s", err.message);
    cr_assert_eq(root->len, 200);
    for (uint32_t k = 0; k < 200; k++) {
        int i = 200 - (int)k;
        char want[8];
        snprintf(want, sizeof(want), "k%03d", (i * 37) % 1000);
        cr_assert_str_eq(root->u.pairs[k].key, want);
        cr_assert_eq(root->u.pairs[k].value.u.i, i);
    }
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(json, scalars_and_empty_containers)
{
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *d = NULL;
    cr_assert_eq(rf__json_parse("42", 2, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_INT);
    cr_assert_eq(rf__json_parse("-0", 2, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_INT);
    cr_assert_eq(rf__json_parse("1.0", 3, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_FLOAT);
    cr_assert_eq(rf__json_parse("1e3", 3, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_FLOAT);
    cr_assert_eq(rf__json_parse("\"\"", 2, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_STR);
    cr_assert_eq(d->len, 0);
    cr_assert_str_eq(d->u.s, "");
    cr_assert_eq(rf__json_parse("{}", 2, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_MAP);
    cr_assert_eq(d->len, 0);
    cr_assert_eq(rf__json_parse(" [ ] ", 5, NULL, arena, &d, NULL), RF_OK);
    cr_assert_eq(d->type, RF_DOC_ARRAY);
    cr_assert_eq(d->len, 0);
    cr_assert_eq(rf__json_parse("true", 4, NULL, arena, &d, NULL), RF_OK);
    cr_assert(d->type == RF_DOC_BOOL && d->u.b);
    /* the length is honoured: no NUL needed, nothing read past it */
    char *exact = malloc(2);
    memcpy(exact, "[]", 2);
    cr_assert_eq(rf__json_parse(exact, 2, NULL, arena, &d, NULL), RF_OK);
    free(exact);
    rf__arena_destroy(&arena);
    rf_test_no_leaks();
}

Test(json, parse_errors)
{
    rf_limits_t limits = s_limits();
    rf_error_t err;
    const char *bad[] = {"",
                         "   ",
                         "{",
                         "{\"a\":}",
                         "[1,]",
                         "{\"a\" 1}",
                         "[1 2]",
                         "tru",
                         "\"abc",
                         "{\"a\":1}x",
                         "[\"\\x\"]",
                         "[01]",
                         "[NaN]",
                         "[1e999]",
                         "[99999999999999999999]",
                         "[\"\\u0000\"]",
                         "{\"\\u0000\":1}",
                         "[\"\xff\"]",
                         "[\"\xc3\"]",
                         "['a']",
                         "[\"a\nb\"]",
                         "{\"a\":1,}",
                         "/* c */ {}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rf_status s = s_parse(bad[i], strlen(bad[i]), &limits, &err);
        cr_assert_eq(s, RF_EPARSE, "case %zu (%s): got %d", i, bad[i], (int)s);
        cr_assert_eq(err.code, RF_EPARSE);
        cr_assert(strncmp(err.message, "line ", 5) == 0, "%s", err.message);
        cr_assert(strstr(err.message, " column "), "%s", err.message);
        cr_assert(err.offset >= 0 && (size_t)err.offset <= strlen(bad[i]), "offset %ld", err.offset);
        for (const char *p = err.message; *p; p++)
            cr_assert((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "%s", err.message);
    }
    rf_test_no_leaks();
}

Test(json, error_names_line_and_column)
{
    rf_error_t err;
    const char text[] = "{\n  \"a\": 1,\n  \"b\": tru\n}";
    cr_assert_eq(s_parse(text, strlen(text), NULL, &err), RF_EPARSE);
    cr_assert(strncmp(err.message, "line 3 column ", 14) == 0, "%s", err.message);
    cr_assert(err.offset > 12 && err.offset <= (long)strlen(text), "%ld", err.offset);
    rf_test_no_leaks();
}

Test(json, duplicate_keys)
{
    rf_error_t err;
    const char text[] = "{\"cluster\": {\"nodes\": [], \"nodes\": []}}";
    cr_assert_eq(s_parse(text, strlen(text), NULL, &err), RF_EPARSE);
    cr_assert(strstr(err.message, "duplicate"), "%s", err.message);
    cr_assert(strncmp(err.message, "line 1 column ", 14) == 0, "%s", err.message);
    /* the same key in two maps is fine */
    const char ok[] = "{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}";
    cr_assert_eq(s_parse(ok, strlen(ok), NULL, &err), RF_OK, "%s", err.message);
    rf_test_no_leaks();
}

Test(json, depth_bomb)
{
    rf_limits_t limits = s_limits();
    size_t n = 100000;
    char *bomb = malloc(n);
    memset(bomb, '[', n);
    rf_error_t err;
    cr_assert_eq(s_parse(bomb, n, &limits, &err), RF_ELIMIT);
    cr_assert(strstr(err.message, "nesting"), "%s", err.message);
    cr_assert_eq(err.offset, limits.max_depth); /* the first bracket too deep */
    /* no configured limit: jansson's own (2048) still holds, without a crash */
    cr_assert_eq(s_parse(bomb, n, NULL, &err), RF_ELIMIT);
    memset(bomb, '{', n);
    cr_assert_eq(s_parse(bomb, n, NULL, &err), RF_ELIMIT);
    /* a limit above jansson's is clamped to it */
    limits.max_depth = 1000000;
    cr_assert_eq(s_parse(bomb, n, &limits, &err), RF_ELIMIT);
    /* balanced: depth 100000 of "[" then "]" */
    char *balanced = malloc(2 * n);
    memset(balanced, '[', n);
    memset(balanced + n, ']', n);
    cr_assert_eq(s_parse(balanced, 2 * n, NULL, &err), RF_ELIMIT);
    free(balanced);
    free(bomb);
    rf_test_no_leaks();
}

Test(json, depth_limit_is_exact)
{
    rf_limits_t limits = s_limits();
    char text[256];
    rf_error_t err;
    for (int depth = 1; depth <= 40; depth++) {
        /* {"a":[{"a":[ ... 1 ... ]}]} with `depth` containers */
        int o = 0;
        for (int i = 0; i < depth; i++) {
            if (i % 2 == 0) {
                memcpy(text + o, "{\"a\":", 5);
                o += 5;
            } else {
                text[o++] = '[';
            }
        }
        text[o++] = '1';
        for (int i = depth - 1; i >= 0; i--)
            text[o++] = i % 2 == 0 ? '}' : ']';
        rf_status s = s_parse(text, (size_t)o, &limits, &err);
        if (depth <= limits.max_depth)
            cr_assert_eq(s, RF_OK, "depth %d: %s", depth, err.message);
        else
            cr_assert_eq(s, RF_ELIMIT, "depth %d", depth);
    }
    /* brackets inside strings do not count */
    char str[2100];
    str[0] = '[';
    str[1] = '"';
    memset(str + 2, '[', 2000);
    memcpy(str + 2002, "\\\"{\"]", 5);
    cr_assert_eq(s_parse(str, 2007, &limits, &err), RF_OK, "%s", err.message);
    rf_test_no_leaks();
}

Test(json, string_limits)
{
    rf_limits_t limits = s_limits();
    limits.max_string = 10;
    rf_error_t err;
    const char ok[] = "{\"abcdefghij\": \"0123456789\"}";
    cr_assert_eq(s_parse(ok, strlen(ok), &limits, &err), RF_OK, "%s", err.message);
    const char long_value[] = "{\"cluster\": {\"nodes\": [{\"name\": \"0123456789a\"}]}}";
    cr_assert_eq(s_parse(long_value, strlen(long_value), &limits, &err), RF_ELIMIT);
    cr_assert_str_eq(err.path, "cluster.nodes[0].name");
    cr_assert(strstr(err.message, "11 bytes"), "%s", err.message);
    const char long_key[] = "{\"a\": {\"abcdefghijk\": 1}}";
    cr_assert_eq(s_parse(long_key, strlen(long_key), &limits, &err), RF_ELIMIT);
    cr_assert_str_eq(err.path, "a.abcdefghijk");
    /* escapes count decoded: 10 bytes of \u00e9 x5 */
    const char escaped[] = "[\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"]";
    cr_assert_eq(s_parse(escaped, strlen(escaped), &limits, &err), RF_OK, "%s", err.message);

    /* a huge string under the default-style limit */
    limits.max_string = 1 << 16;
    limits.max_input_bytes = 1 << 22;
    size_t n = 1 << 20;
    char *huge = malloc(n + 4);
    huge[0] = '[';
    huge[1] = '"';
    memset(huge + 2, 'x', n);
    huge[n + 2] = '"';
    huge[n + 3] = ']';
    cr_assert_eq(s_parse(huge, n + 4, &limits, &err), RF_ELIMIT);
    cr_assert_str_eq(err.path, "[0]");
    free(huge);
    rf_test_no_leaks();
}

Test(json, input_size_limit)
{
    rf_limits_t limits = s_limits();
    limits.max_input_bytes = 10;
    rf_error_t err;
    cr_assert_eq(s_parse("[1,2,3,4,5]", 11, &limits, &err), RF_ELIMIT);
    cr_assert(strstr(err.message, "11 bytes"), "%s", err.message);
    cr_assert_eq(s_parse("[1,2,3,45]", 10, &limits, &err), RF_OK);
    rf_test_no_leaks();
}

Test(json, arena_cap_is_out_of_memory)
{
    rf__arena_t *arena = rf__arena_new(64);
    rf_doc_t *d = NULL;
    rf_error_t err;
    cr_assert_eq(rf__json_parse(s_sample, strlen(s_sample), NULL, arena, &d, &err), RF_ENOMEM);
    cr_assert_null(d);
    rf__arena_destroy(&arena);
    cr_assert_eq(rf__json_parse("[]", 2, NULL, NULL, &d, &err), RF_EINVAL);
    rf_test_no_leaks();
}

/* Every prefix of the sample fails cleanly; so does every one-byte change. */
Test(json, every_prefix_and_mutation)
{
    rf_limits_t limits = s_limits();
    size_t len = strlen(s_sample);
    rf_error_t err;
    for (size_t cut = 0; cut < len; cut++) {
        char *copy = malloc(cut ? cut : 1); /* exact size: ASan catches reads past it */
        memcpy(copy, s_sample, cut);
        rf_status s = s_parse(copy, cut, &limits, &err);
        /* the sample ends in "}\n": only the prefix without the newline is complete */
        if (cut == len - 1)
            cr_assert_eq(s, RF_OK, "%s", err.message);
        else
            cr_assert_eq(s, RF_EPARSE, "prefix %zu: %d %s", cut, (int)s, err.message);
        free(copy);
    }
    const char flips[] = {'\0', '"', '\\', '[', ']', '{', '}', ',', ':', '\xff', 'e', '-'};
    for (size_t i = 0; i < len; i++) {
        for (size_t f = 0; f < sizeof(flips); f++) {
            char *copy = malloc(len);
            memcpy(copy, s_sample, len);
            copy[i] = flips[f];
            rf_status s = s_parse(copy, len, &limits, &err);
            cr_assert(s == RF_OK || s == RF_EPARSE || s == RF_ELIMIT, "byte %zu: %d", i, (int)s);
            free(copy);
        }
    }
    rf_test_no_leaks();
}

#ifndef RF_BIN_DIR
#define RF_BIN_DIR "/tmp"
#endif

static char *s_temp_file(const char *content, size_t len)
{
    char tmpl[] = "/tmp/rf_test_json_XXXXXX";
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, content, len), (ssize_t)len);
    close(fd);
    return strdup(tmpl);
}

Test(json, read_file)
{
    char *path = s_temp_file(s_sample, strlen(s_sample));
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 1 << 20, &buf, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, strlen(s_sample));
    cr_assert_eq(memcmp(buf, s_sample, len), 0);
    cr_assert_eq(buf[len], '\0');
    free(buf);
    /* exactly at the limit, and one byte past it */
    cr_assert_eq(rf__read_file(path, len, &buf, &len, &err), RF_OK);
    free(buf);
    cr_assert_eq(rf__read_file(path, strlen(s_sample) - 1, &buf, &len, &err), RF_ELIMIT);
    cr_assert_null(buf);
    cr_assert(strstr(err.message, path), "%s", err.message);
    /* no limit */
    cr_assert_eq(rf__read_file(path, 0, &buf, &len, &err), RF_OK);
    free(buf);
    unlink(path);
    /* missing file and a directory: EIO naming the path and the reason */
    cr_assert_eq(rf__read_file(path, 100, &buf, &len, &err), RF_EIO);
    cr_assert(strstr(err.message, path), "%s", err.message);
    cr_assert(strstr(err.message, "No such file"), "%s", err.message);
    free(path);
    cr_assert_eq(rf__read_file("/", 100, &buf, &len, &err), RF_EIO);
    cr_assert(strstr(err.message, "/:"), "%s", err.message);
    /* an empty file reads as an empty, NUL-terminated buffer */
    path = s_temp_file("", 0);
    cr_assert_eq(rf__read_file(path, 100, &buf, &len, &err), RF_OK);
    cr_assert_eq(len, 0);
    cr_assert_eq(buf[0], '\0');
    free(buf);
    unlink(path);
    free(path);
    rf_test_no_leaks();
}

Test(json, read_large_file_and_stdin)
{
    size_t n = 300 * 1000; /* several growth steps */
    char *content = malloc(n);
    for (size_t i = 0; i < n; i++)
        content[i] = (char)('a' + i % 26);
    char *path = s_temp_file(content, n);
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 0, &buf, &len, &err), RF_OK);
    cr_assert_eq(len, n);
    cr_assert_eq(memcmp(buf, content, n), 0);
    free(buf);
    /* "-" is standard input (this test runs in its own process) */
    cr_assert_not_null(freopen(path, "rb", stdin));
    cr_assert_eq(rf__read_file("-", n - 1, &buf, &len, &err), RF_ELIMIT);
    cr_assert(strstr(err.message, "standard input"), "%s", err.message);
    cr_assert_not_null(freopen(path, "rb", stdin));
    cr_assert_eq(rf__read_file("-", n, &buf, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, n);
    cr_assert_eq(memcmp(buf, content, n), 0);
    free(buf);
    unlink(path);
    free(path);
    free(content);
    rf_test_no_leaks();
}
