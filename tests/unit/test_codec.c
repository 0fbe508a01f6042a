/* tests/unit/test_codec.c: the MessagePack boundary (service/codec.c): the
 * allocation-free pre-scan (bombs, depth, truncation, bin/ext, key types,
 * trailing bytes), the decode into a document (duplicates, uint64, string
 * limits, paths), the writer, and answers encoded by walking rf_answer_t. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "rackfit/rackfit.h"

static rf__mp_limits_t s_lim(void)
{
    rf__mp_limits_t l = {.max_bytes = 1 << 20, .max_depth = 16, .max_elements = 0, .max_string = 64};
    return l;
}

static rf_status s_scan(const char *hex_or_bytes, size_t len, rf__mp_scan_t *scan, rf_error_t *err)
{
    rf__mp_limits_t l = s_lim();
    return rf__mp_prescan(hex_or_bytes, len, &l, scan, err);
}

/* {"op": "solve", "id": 7, "options": {"mode": "greedy"}, "gangs": []} */
static size_t s_sample(rf__mp_writer_t *w)
{
    rf__mp_map(w, 4);
    rf__mp_key(w, "op");
    rf__mp_str(w, "solve");
    rf__mp_key(w, "id");
    rf__mp_int(w, 7);
    rf__mp_key(w, "options");
    rf__mp_map(w, 1);
    rf__mp_key(w, "mode");
    rf__mp_str(w, "greedy");
    rf__mp_key(w, "gangs");
    rf__mp_array(w, 0);
    size_t n = 0;
    rf__mp_writer_data(w, &n);
    return n;
}

Test(codec, bombs_are_refused_before_unpacking)
{
    rf_error_t err;
    cr_assert_eq(s_scan("\xdd\xff\x00\x00\x00", 5, NULL, &err), RF_ELIMIT);
    cr_assert_eq(err.offset, 0);
    cr_assert_eq(s_scan("\xdf\xff\xff\xff\xff", 5, NULL, &err), RF_ELIMIT);
    cr_assert_eq(s_scan("\x9f\x01", 2, NULL, &err), RF_ELIMIT);
    cr_assert_eq(s_scan("\xdb\xff\xff\xff\xff"
                        "abc",
                        8, NULL, &err),
                 RF_EPARSE);
    /* a budget across containers: 3 arrays each claiming 2 of 7 bytes is fine */
    cr_assert_eq(s_scan("\x92\x92\x01\x02\x92\x03\x04", 7, NULL, &err), RF_OK);
    rf_test_no_leaks();
}

Test(codec, depth_and_types)
{
    rf_error_t err;
    char deep[40];
    memset(deep, 0x91, sizeof deep);
    deep[39] = (char)0xc0;
    cr_assert_eq(s_scan(deep, sizeof deep, NULL, &err), RF_ELIMIT);
    cr_assert_eq(s_scan(deep + 24, 16, NULL, &err), RF_OK);                   /* 15 levels */
    cr_assert_eq(s_scan("\x81\xa2op\xc4\x01x", 7, NULL, &err), RF_EPARSE);    /* bin */
    cr_assert_eq(s_scan("\x81\xa2op\xd4\x01\x00", 7, NULL, &err), RF_EPARSE); /* ext */
    cr_assert_eq(s_scan("\x81\x01\x02", 3, NULL, &err), RF_EPARSE);           /* int key */
    cr_assert_eq(s_scan("\xc1", 1, NULL, &err), RF_EPARSE);
    cr_assert_eq(s_scan("\xc0\xc0", 2, NULL, &err), RF_EPARSE); /* trailing */
    cr_assert_eq(s_scan("", 0, NULL, &err), RF_EPARSE);
    rf_test_no_leaks();
}

Test(codec, every_prefix_fails_cleanly)
{
    rf__mp_writer_t *w = rf__mp_writer_new();
    size_t n = s_sample(w);
    const char *data = rf__mp_writer_data(w, &n);
    rf_error_t err;
    rf__mp_scan_t scan;
    cr_assert_eq(s_scan(data, n, &scan, &err), RF_OK);
    cr_assert_str_eq(scan.op, "solve");
    cr_assert_str_eq(scan.mode, "greedy");
    cr_assert(scan.top_map);
    cr_assert_eq(scan.id_len, 1);
    cr_assert_eq((unsigned char)data[scan.id_off], 7);
    for (size_t k = 0; k < n; k++) {
        char *copy = malloc(k ? k : 1);
        memcpy(copy, data, k);
        rf_status st = s_scan(copy, k, NULL, &err);
        /* truncated, or a container claiming more than the bytes left */
        cr_assert(st == RF_EPARSE || st == RF_ELIMIT, "prefix %zu: %d", k, (int)st);
        free(copy);
    }
    rf__mp_writer_destroy(&w);
    cr_assert_null(w);
    rf_test_no_leaks();
}

Test(codec, decode_roundtrip_and_rules)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__mp_writer_t *w = rf__mp_writer_new();
    size_t n = s_sample(w);
    const void *data = rf__mp_writer_data(w, &n);
    rf__mp_limits_t l = s_lim();
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__mp_decode(data, n, &l, a, &doc, &err), RF_OK);
    cr_assert_eq(doc->type, RF_DOC_MAP);
    cr_assert_eq(doc->len, 4);
    cr_assert_str_eq(rf__doc_get(doc, "op")->u.s, "solve");
    cr_assert_eq(rf__doc_get(doc, "id")->u.i, 7);
    cr_assert_str_eq(rf__doc_get(rf__doc_get(doc, "options"), "mode")->u.s, "greedy");
    /* re-encode the document: the same bytes */
    rf__mp_writer_t *w2 = rf__mp_writer_new();
    rf__mp_doc(w2, doc);
    size_t n2 = 0;
    const void *d2 = rf__mp_writer_data(w2, &n2);
    cr_assert_eq(n2, n);
    cr_assert_eq(memcmp(d2, data, n), 0);
    /* duplicate key, with its path */
    cr_assert_eq(rf__mp_decode("\x81\xa1m\x82\xa1k\x01\xa1k\x02", 10, &l, a, &doc, &err), RF_EPARSE);
    cr_assert_str_eq(err.path, "m.k");
    /* uint64 above INT64_MAX */
    cr_assert_eq(rf__mp_decode("\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9, &l, a, &doc, &err), RF_ESCHEMA);
    cr_assert_eq(rf__mp_decode("\xcf\x7f\xff\xff\xff\xff\xff\xff\xff", 9, &l, a, &doc, &err), RF_OK);
    cr_assert_eq(doc->u.i, INT64_MAX);
    /* strings over the limit */
    char big[70] = "\xd9\x41";
    memset(big + 2, 'x', 65);
    cr_assert_eq(rf__mp_decode(big, 67, &l, a, &doc, &err), RF_ELIMIT);
    rf__mp_writer_destroy(&w);
    rf__mp_writer_destroy(&w2);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}

Test(codec, answer_and_error_encoding)
{
    rf_problem_t *p = NULL;
    rf_error_t err;
    char path[1024];
    snprintf(path, sizeof path, "%s/models/tutorial.json", RF_SOURCE_DIR);
    cr_assert_eq(rf_problem_from_json_file(path, NULL, &p, &err), RF_OK);
    rf_answer_t *ans = NULL;
    cr_assert_eq(rf_solve(p, NULL, &ans, &err), RF_OK);
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf__arena_t *da = rf__arena_new(0);
    rf_doc_t *adoc = NULL;
    cr_assert_eq(rf_answer_to_doc(ans, da, &adoc, &err), RF_OK, "%s", err.message);
    rf__mp_doc(w, adoc); /* the one answer encoder, serialised generically */
    cr_assert(rf__mp_writer_ok(w));
    size_t n = 0;
    const void *data = rf__mp_writer_data(w, &n);
    rf__arena_t *a = rf__arena_new(0);
    rf__mp_limits_t l = {0};
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf__mp_decode(data, n, &l, a, &doc, &err), RF_OK);
    const rf_doc_t *gangs = rf__doc_get(doc, "gangs");
    cr_assert_eq(gangs->len, (uint32_t)p->n_gangs);
    cr_assert_str_eq(rf__doc_get(&gangs->u.items[0], "name")->u.s, p->gangs[0].name);
    const rf_doc_t *summary = rf__doc_get(doc, "summary");
    cr_assert_eq(rf__doc_get(summary, "admitted")->u.i, ans->summary.admitted);
    cr_assert_str_eq(rf__doc_get(summary, "mode_used")->u.s, ans->summary.mode_used);
    /* the document and the answer agree on the admitted gangs */
    for (int32_t g = 0; g < p->n_gangs; g++)
        cr_assert_eq(rf__doc_get(&gangs->u.items[g], "admitted")->u.b, ans->gangs[g].admitted);
    rf__mp_writer_reset(w);
    rf__mp_error_reply_raw(w, "\x07", 1, RF_EBUSY, "full", "");
    data = rf__mp_writer_data(w, &n);
    cr_assert_eq(rf__mp_decode(data, n, &l, a, &doc, &err), RF_OK);
    cr_assert_eq(rf__doc_get(doc, "id")->u.i, 7);
    cr_assert_str_eq(rf__doc_get(rf__doc_get(doc, "error"), "code")->u.s, "busy");
    rf__arena_destroy(&a);
    rf__arena_destroy(&da);
    rf__mp_writer_destroy(&w);
    rf_answer_destroy(&ans);
    rf_problem_destroy(&p);
    rf_test_no_leaks();
}

/* One MessagePack str (fixstr: up to 31 bytes) decoded: RF_OK or not. */
static rf_status s_str_status(const char *bytes)
{
    size_t n = strlen(bytes);
    cr_assert_lt(n, 32);
    char msg[40];
    msg[0] = (char)(0xa0 | n);
    memcpy(msg + 1, bytes, n);
    rf__mp_limits_t l = s_lim();
    rf__arena_t *a = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    rf_status rc = rf__mp_decode(msg, n + 1, &l, a, &doc, &err);
    if (rc == RF_OK)
        cr_assert(doc->type == RF_DOC_STR && doc->len == n && memcmp(doc->u.s, bytes, n) == 0);
    rf__arena_destroy(&a);
    return rc;
}

/* Strings are UTF-8: ASCII of any length (the eight-bytes-at-a-time path
 * and its tail), 2-, 3- and 4-byte forms pass; a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF and a cut
 * sequence fail, wherever they sit. */
Test(codec, strings_are_utf8)
{
    cr_assert_eq(s_str_status("h-0001"), RF_OK);
    cr_assert_eq(s_str_status("kubernetes.io/hostname"), RF_OK);
    cr_assert_eq(s_str_status("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), RF_OK);
    cr_assert_eq(s_str_status("\xf4\x8f\xbf\xbf"), RF_OK); /* U+10FFFF */
    static const char *const bad[] = {
        "\x80", "\xc0\x80", "\xc1\xbf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\xf8\x88\x80\x80\x80", "\xff"};
    char s[32];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(s_str_status(bad[i]), RF_EPARSE, "bad[%zu] alone", i);
        snprintf(s, sizeof s, "abcdefghij%s", bad[i]); /* after a run of ASCII */
        cr_assert_eq(s_str_status(s), RF_EPARSE, "bad[%zu] after ASCII", i);
        snprintf(s, sizeof s, "%sabcdefghij", bad[i]); /* before one */
        cr_assert_eq(s_str_status(s), RF_EPARSE, "bad[%zu] before ASCII", i);
    }
    rf_test_no_leaks();
}

/* Keys that repeat share one checked copy (service/codec.c, s_read_key);
 * keys of the same length and end bytes but other middle bytes do not;
 * values are copied each; a key that is not UTF-8 is still refused. */
Test(codec, repeated_strings_share_a_copy)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__mp_limits_t l = s_lim();
    rf_doc_t *doc = NULL;
    rf_error_t err;
    /* [{"rack":"r1"},{"rack":"r1"},{"rxck":"rx1"... same length, other middle}] */
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf__mp_array(w, 3);
    rf__mp_map(w, 1);
    rf__mp_key(w, "rack");
    rf__mp_str(w, "b0-r1");
    rf__mp_map(w, 1);
    rf__mp_key(w, "rack");
    rf__mp_str(w, "b0-r1");
    rf__mp_map(w, 1);
    rf__mp_key(w, "rxck");
    rf__mp_str(w, "b9-r1");
    size_t n = 0;
    const void *data = rf__mp_writer_data(w, &n);
    cr_assert_eq(rf__mp_decode(data, n, &l, a, &doc, &err), RF_OK, "%s", err.message);
    const rf_doc_t *m0 = &doc->u.items[0], *m1 = &doc->u.items[1], *m2 = &doc->u.items[2];
    cr_assert_eq(m0->u.pairs[0].key, m1->u.pairs[0].key, "equal keys share a copy");
    cr_assert_neq(m0->u.pairs[0].value.u.s, m1->u.pairs[0].value.u.s, "values are copied each");
    cr_assert_str_eq(m1->u.pairs[0].value.u.s, "b0-r1");
    cr_assert_str_eq(m2->u.pairs[0].key, "rxck");
    cr_assert_str_eq(m2->u.pairs[0].value.u.s, "b9-r1");
    cr_assert_neq(m2->u.pairs[0].key, m0->u.pairs[0].key);
    cr_assert_eq(m2->u.pairs[0].key_len, 4);
    /* a bad key after a good one of the same length and end bytes (the same slot) */
    cr_assert_eq(rf__mp_decode("\x92\x81\xa3\x61\x62\x63\x01\x81\xa3\x61\xff\x63\x02", 13, &l, a, &doc, &err),
                 RF_EPARSE);
    rf__mp_writer_destroy(&w);
    rf__arena_destroy(&a);
    rf_test_no_leaks();
}
