/* tests/unit/test_request.c: the envelope and schema helpers of one request
 * (service/request.c): a request is a map with an optional string/integer
 * id, v 1 and a served op (default solve); every refusal names its field by
 * path; typed helpers check type, range and non-empty strings. */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "arena.h"
#include "codec.h"
#include "request.h"

typedef struct {
    rf__ops_t ops;
    rf__arena_t *arena;
    rf__mp_writer_t *w; /* the request's bytes are built here */
    rf__req_t q;
} fixture_t;

static void s_open(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    f->ops.mp = (rf__mp_limits_t){.max_bytes = 1 << 20, .max_depth = 16, .max_elements = 0, .max_string = 512};
    f->arena = rf__arena_new(0);
    f->w = rf__mp_writer_new();
    cr_assert(f->arena && f->w);
    f->q = (rf__req_t){.ops = &f->ops, .arena = f->arena, .op = RF__OP_UNKNOWN};
}

static void s_close(fixture_t *f)
{
    rf__mp_writer_destroy(&f->w);
    rf__arena_destroy(&f->arena);
}

/* Read the envelope of what f->w holds (a fresh request each time). */
static rf_status s_envelope(fixture_t *f)
{
    size_t len = 0;
    const void *data = rf__mp_writer_data(f->w, &len);
    f->q = (rf__req_t){.ops = &f->ops, .arena = f->arena, .op = RF__OP_UNKNOWN};
    rf_error_clear(&f->q.err);
    return rf__req_envelope(&f->q, data, len, false);
}

Test(request, op_defaults_to_solve_and_id_is_kept)
{
    fixture_t f;
    s_open(&f);
    rf__mp_map(f.w, 2);
    rf__mp_key(f.w, "id");
    rf__mp_str(f.w, "abc");
    rf__mp_key(f.w, "v");
    rf__mp_int(f.w, 1);
    cr_assert_eq(s_envelope(&f), RF_OK, "%s", f.q.err.message);
    cr_assert_eq(f.q.op, RF__OP_SOLVE);
    cr_assert(f.q.id && f.q.id->type == RF_DOC_STR);
    cr_assert_str_eq(f.q.id->u.s, "abc");

    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 2);
    rf__mp_key(f.w, "op");
    rf__mp_str(f.w, "cluster.info");
    rf__mp_key(f.w, "id");
    rf__mp_int(f.w, 99);
    cr_assert_eq(s_envelope(&f), RF_OK, "%s", f.q.err.message);
    cr_assert_eq(f.q.op, RF__OP_CLUSTER_INFO);
    cr_assert_eq(f.q.id->u.i, 99);
    s_close(&f);
    rf_test_no_leaks();
}

Test(request, every_served_op_is_recognised)
{
    fixture_t f;
    s_open(&f);
    for (int i = 0; i < RF__OP_COUNT; i++) {
        rf__mp_writer_reset(f.w);
        rf__mp_map(f.w, 1);
        rf__mp_key(f.w, "op");
        rf__mp_str(f.w, rf__op_names[i]);
        cr_assert_eq(s_envelope(&f), RF_OK, "%s: %s", rf__op_names[i], f.q.err.message);
        cr_assert_eq((int)f.q.op, i);
        cr_assert_null(f.q.id);
    }
    s_close(&f);
    rf_test_no_leaks();
}

Test(request, bad_envelopes_are_refused_by_path)
{
    fixture_t f;
    s_open(&f);
    /* not a map */
    rf__mp_array(f.w, 0);
    cr_assert_eq(s_envelope(&f), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "");
    cr_assert(strstr(f.q.err.message, "map"));
    /* id of the wrong type */
    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 1);
    rf__mp_key(f.w, "id");
    rf__mp_bool(f.w, true);
    cr_assert_eq(s_envelope(&f), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "id");
    /* a protocol version not served */
    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 1);
    rf__mp_key(f.w, "v");
    rf__mp_int(f.w, 2);
    cr_assert_eq(s_envelope(&f), RF_EUNSUPPORTED);
    cr_assert_str_eq(f.q.err.path, "v");
    /* op not a string */
    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 1);
    rf__mp_key(f.w, "op");
    rf__mp_int(f.w, 3);
    cr_assert_eq(s_envelope(&f), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "op");
    /* an unknown op, named in the message */
    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 1);
    rf__mp_key(f.w, "op");
    rf__mp_str(f.w, "launch");
    cr_assert_eq(s_envelope(&f), RF_EUNSUPPORTED);
    cr_assert_str_eq(f.q.err.path, "op");
    cr_assert(strstr(f.q.err.message, "launch"));
    /* an op with a NUL byte inside is not the op before the NUL */
    rf__mp_writer_reset(f.w);
    rf__mp_map(f.w, 1);
    rf__mp_key(f.w, "op");
    rf__mp_strn(f.w, "ping\0x", 6);
    cr_assert_eq(s_envelope(&f), RF_EUNSUPPORTED);
    /* truncated bytes (a string of 5 with 2 present): the codec's parse error */
    const unsigned char trunc[] = {0xa5, 'o', 'p'};
    f.q = (rf__req_t){.ops = &f.ops, .arena = f.arena, .op = RF__OP_UNKNOWN};
    rf_status st = rf__req_envelope(&f.q, trunc, sizeof trunc, false);
    cr_assert_eq(st, RF_EPARSE, "%s: %s", rf_status_code(st), f.q.err.message);
    s_close(&f);
    rf_test_no_leaks();
}

Test(request, keys_outside_the_schema_are_named)
{
    fixture_t f;
    s_open(&f);
    rf__mp_map(f.w, 3);
    rf__mp_key(f.w, "op");
    rf__mp_str(f.w, "ping");
    rf__mp_key(f.w, "id");
    rf__mp_int(f.w, 1);
    rf__mp_key(f.w, "extra");
    rf__mp_nil(f.w);
    cr_assert_eq(s_envelope(&f), RF_OK);
    static const char *const allowed[] = {"op", "id", "v", NULL};
    cr_assert_eq(rf__req_keys(&f.q, allowed), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "extra");
    static const char *const wider[] = {"op", "id", "v", "extra", NULL};
    cr_assert_eq(rf__req_keys(&f.q, wider), RF_OK);
    cr_assert(rf__req_in("v", wider));
    cr_assert_not(rf__req_in("w", wider));
    cr_assert_not(rf__req_in("v", NULL));
    s_close(&f);
    rf_test_no_leaks();
}

Test(request, typed_fields)
{
    fixture_t f;
    s_open(&f);
    rf__mp_map(f.w, 7);
    rf__mp_key(f.w, "name");
    rf__mp_str(f.w, "rack-a");
    rf__mp_key(f.w, "empty");
    rf__mp_str(f.w, "");
    rf__mp_key(f.w, "version");
    rf__mp_int(f.w, 12);
    rf__mp_key(f.w, "commit");
    rf__mp_bool(f.w, true);
    rf__mp_key(f.w, "nothing");
    rf__mp_nil(f.w);
    rf__mp_key(f.w, "gangs");
    rf__mp_array(f.w, 2);
    rf__mp_str(f.w, "g1");
    rf__mp_str(f.w, "g2");
    rf__mp_key(f.w, "bad_gangs");
    rf__mp_array(f.w, 2);
    rf__mp_str(f.w, "g1");
    rf__mp_int(f.w, 5);
    cr_assert_eq(s_envelope(&f), RF_OK, "%s", f.q.err.message);

    const char *s = NULL;
    cr_assert_eq(rf__req_need_str(&f.q, "name", &s), RF_OK);
    cr_assert_str_eq(s, "rack-a");
    cr_assert_eq(rf__req_need_str(&f.q, "empty", &s), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "empty");
    cr_assert_eq(rf__req_need_str(&f.q, "missing", &s), RF_ESCHEMA);
    cr_assert(strstr(f.q.err.message, "required"));
    cr_assert_eq(rf__req_need_str(&f.q, "nothing", &s), RF_ESCHEMA, "nil is absent");
    cr_assert_eq(rf__req_need_str(&f.q, "version", &s), RF_ESCHEMA);

    int64_t v = -1;
    cr_assert_eq(rf__req_opt_int(&f.q, "missing", 0, 100, &v), RF_OK);
    cr_assert_eq(v, -1, "absent keeps the value");
    cr_assert_eq(rf__req_opt_int(&f.q, "version", 0, 100, &v), RF_OK);
    cr_assert_eq(v, 12);
    v = -1;
    cr_assert_eq(rf__req_opt_int(&f.q, "version", 13, 100, &v), RF_ESCHEMA);
    cr_assert_eq(v, -1);
    cr_assert(strstr(f.q.err.message, "13"));
    cr_assert_eq(rf__req_opt_int(&f.q, "name", 0, 100, &v), RF_ESCHEMA);

    bool b = false;
    cr_assert_eq(rf__req_opt_bool(&f.q, "commit", &b), RF_OK);
    cr_assert(b);
    cr_assert_eq(rf__req_opt_bool(&f.q, "version", &b), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "version");

    const char **names = NULL;
    int32_t n = 0;
    cr_assert_eq(rf__req_names(&f.q, rf__req_get(f.q.root, "gangs"), "gangs", &names, &n), RF_OK);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(names[0], "g1");
    cr_assert_str_eq(names[1], "g2");
    cr_assert_eq(rf__req_names(&f.q, rf__req_get(f.q.root, "bad_gangs"), "bad_gangs", &names, &n), RF_ESCHEMA);
    cr_assert_str_eq(f.q.err.path, "bad_gangs[1]");
    cr_assert_eq(rf__req_names(&f.q, rf__req_get(f.q.root, "name"), "name", &names, &n), RF_ESCHEMA);
    cr_assert_null(rf__req_get(f.q.root, "nothing"));
    s_close(&f);
    rf_test_no_leaks();
}
