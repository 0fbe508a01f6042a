/* tests/unit/test_reply.c: the encoding of rackfitd's replies
 * (service/reply.c): every reply is one MessagePack map that decodes back
 * through the codec, echoes the request's id first when it had one, and an
 * error reply names its code, path and message. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "codec.h"
#include "request.h"

typedef struct {
    rf__ops_t ops;
    rf__arena_t *arena;
    rf__mp_writer_t *w;
    rf__req_t q;
} fixture_t;

static void s_open(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    f->ops.mp = (rf__mp_limits_t){.max_bytes = 1 << 20, .max_depth = 16, .max_elements = 0, .max_string = 512};
    f->arena = rf__arena_new(0);
    f->w = rf__mp_writer_new();
    cr_assert(f->arena && f->w);
    f->q = (rf__req_t){.ops = &f->ops, .arena = f->arena, .w = f->w, .op = RF__OP_UNKNOWN};
}

static void s_close(fixture_t *f)
{
    rf__mp_writer_destroy(&f->w);
    rf__arena_destroy(&f->arena);
}

/* The reply written so far, decoded back into a document. */
static const rf_doc_t *s_decoded(fixture_t *f)
{
    cr_assert(rf__mp_writer_ok(f->w));
    size_t len = 0;
    const void *data = rf__mp_writer_data(f->w, &len);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    cr_assert_eq(rf__mp_decode(data, len, &f->ops.mp, f->arena, &doc, &err), RF_OK, "reply does not decode: %s",
                 err.message);
    cr_assert_eq(doc->type, RF_DOC_MAP);
    return doc;
}

static void s_has_int(const rf_doc_t *map, const char *key, int64_t want)
{
    const rf_doc_t *v = rf__doc_get(map, key);
    cr_assert(v, "no %s", key);
    cr_assert_eq(v->type, RF_DOC_INT, "%s is not an integer", key);
    cr_assert_eq(v->u.i, want, "%s: %lld, want %lld", key, (long long)v->u.i, (long long)want);
}

static void s_has_str(const rf_doc_t *map, const char *key, const char *want)
{
    const rf_doc_t *v = rf__doc_get(map, key);
    cr_assert(v, "no %s", key);
    cr_assert_eq(v->type, RF_DOC_STR, "%s is not a string", key);
    cr_assert_str_eq(v->u.s, want);
}

Test(reply, name_version_without_id_has_exactly_two_pairs)
{
    fixture_t f;
    s_open(&f);
    rf__reply_name_version(&f.q, "rack-a", 42);
    const rf_doc_t *d = s_decoded(&f);
    cr_assert_eq(d->len, 2);
    s_has_str(d, "name", "rack-a");
    s_has_int(d, "version", 42);
    cr_assert_null(rf__doc_get(d, "id"));
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, id_is_echoed_first)
{
    fixture_t f;
    s_open(&f);
    rf_doc_t id = {.type = RF_DOC_STR, .len = 5, .u.s = "req-7"};
    f.q.id = &id;
    rf__reply_released(&f.q, "rack-b", 9, 3);
    const rf_doc_t *d = s_decoded(&f);
    cr_assert_eq(d->len, 4);
    cr_assert_str_eq(d->u.pairs[0].key, "id");
    s_has_str(d, "id", "req-7");
    s_has_str(d, "name", "rack-b");
    s_has_int(d, "version", 9);
    s_has_int(d, "released", 3);
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, deleted_and_info)
{
    fixture_t f;
    s_open(&f);
    rf_doc_t id = {.type = RF_DOC_INT, .u.i = 11};
    f.q.id = &id;
    rf__reply_deleted(&f.q, "gone");
    const rf_doc_t *d = s_decoded(&f);
    s_has_int(d, "id", 11);
    s_has_str(d, "name", "gone");
    const rf_doc_t *del = rf__doc_get(d, "deleted");
    cr_assert(del && del->type == RF_DOC_BOOL && del->u.b);

    rf__mp_writer_reset(f.w);
    f.q.id = NULL;
    rf__store_info_t info;
    memset(&info, 0, sizeof info);
    info.version = 5;
    info.base_version = 2;
    info.nodes = 16;
    info.commits = 4;
    info.commit_pods = 12;
    info.running = 3;
    info.preempting = 1;
    rf__reply_info(&f.q, "rack-c", &info);
    d = s_decoded(&f);
    cr_assert_eq(d->len, 8);
    s_has_str(d, "name", "rack-c");
    s_has_int(d, "version", 5);
    s_has_int(d, "base_version", 2);
    s_has_int(d, "nodes", 16);
    s_has_int(d, "commits", 4);
    s_has_int(d, "commit_pods", 12);
    s_has_int(d, "running", 3);
    s_has_int(d, "preempting", 1);
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, error_names_code_path_message_and_replaces_what_was_written)
{
    fixture_t f;
    s_open(&f);
    rf_doc_t id = {.type = RF_DOC_STR, .len = 2, .u.s = "q1"};
    f.q.id = &id;
    rf__reply_name_version(&f.q, "half-written", 1); /* the error reply resets the writer */
    rf_error_set(&f.q.err, RF_ESCHEMA, "gangs[2].name", "must be a string, not %s", "integer");
    rf__reply_error(&f.q, RF_ESCHEMA);
    const rf_doc_t *d = s_decoded(&f);
    cr_assert_eq(d->len, 2);
    s_has_str(d, "id", "q1");
    const rf_doc_t *e = rf__doc_get(d, "error");
    cr_assert(e && e->type == RF_DOC_MAP);
    s_has_str(e, "code", rf_status_code(RF_ESCHEMA));
    s_has_str(e, "path", "gangs[2].name");
    s_has_str(e, "message", "must be a string, not integer");
    cr_assert_null(rf__doc_get(d, "name"));
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, error_without_message_gets_the_status_default)
{
    fixture_t f;
    s_open(&f);
    rf_error_clear(&f.q.err);
    rf__reply_error(&f.q, RF_ENOMEM);
    const rf_doc_t *d = s_decoded(&f);
    cr_assert_eq(d->len, 1);
    const rf_doc_t *e = rf__doc_get(d, "error");
    cr_assert(e && e->type == RF_DOC_MAP);
    s_has_str(e, "code", rf_status_code(RF_ENOMEM));
    s_has_str(e, "message", rf_status_message(RF_ENOMEM));
    s_has_str(e, "path", "");
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, busy_names_the_lane_and_echoes_the_raw_id)
{
    fixture_t f;
    s_open(&f);
    /* the id as the pre-scan hands it over: raw MessagePack bytes (fixint 7) */
    const unsigned char raw_id[] = {0x07};
    rf__reply_busy(f.w, raw_id, sizeof raw_id, "solver");
    const rf_doc_t *d = s_decoded(&f);
    s_has_int(d, "id", 7);
    const rf_doc_t *e = rf__doc_get(d, "error");
    cr_assert(e && e->type == RF_DOC_MAP);
    s_has_str(e, "code", rf_status_code(RF_EBUSY));
    const rf_doc_t *m = rf__doc_get(e, "message");
    cr_assert(m && m->type == RF_DOC_STR && strstr(m->u.s, "solver lane"), "message does not name the lane");

    rf__reply_busy(f.w, NULL, 0, "fast");
    d = s_decoded(&f);
    cr_assert_eq(d->len, 1, "no id: only the error");
    s_close(&f);
    rf_test_no_leaks();
}

Test(reply, ping_lists_every_served_op)
{
    fixture_t f;
    s_open(&f);
    rf__reply_ping(&f.q);
    const rf_doc_t *d = s_decoded(&f);
    s_has_int(d, "v", RF__PROTOCOL_VERSION);
    const rf_doc_t *ops = rf__doc_get(d, "ops");
    cr_assert(ops && ops->type == RF_DOC_ARRAY);
    cr_assert_eq(ops->len, RF__OP_COUNT);
    for (int i = 0; i < RF__OP_COUNT; i++)
        cr_assert_str_eq(ops->u.items[i].u.s, rf__op_names[i]);
    const rf_doc_t *srv = rf__doc_get(d, "server");
    cr_assert(srv && srv->type == RF_DOC_STR && strncmp(srv->u.s, "rackfitd ", 9) == 0);
    s_close(&f);
    rf_test_no_leaks();
}
