/* tests/unit/test_client.c: the C client (service/client.c,
 * include/rackfit/client.h) against rackfitd's server run in-process
 * (rf__server_run on a thread, an ipc:// endpoint, stopped by SIGTERM).
 * A bad endpoint and malformed CURVE keys are refused by message; a REQ
 * client's rf_client_request gets decoded replies, times out (RF_ETIMEOUT)
 * with no server and stays usable once one comes; a pipelined client
 * answers every one of many requests in flight, matched by id, and its
 * rf_client_recv says timed out when nothing is pending; the wrong call
 * for the kind of client is RF_EINVAL; rf_client_solve_json prints the
 * answer as JSON (no id) and returns an error reply's status, message and
 * path; a CURVE client with an allowed key is served, one with another key
 * times out. Every test ends with the leak check. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "../support/leak.h"
#include "../support/server_fixture.h"
#include "arena.h"
#include "codec.h"
#include "config.h"
#include "doc.h"
#include "json.h"
#include "log.h"
#include "rackfit/client.h"
#include "server.h"

/* ------------------------------------------------------------ the server */

static void s_ping_ok(rf_client_t *c);

/* Start the server; `ready` (a REQ client, or NULL: a plain one made here)
 * waits until it answers a ping, so its SIGTERM handler is in place. */
static void s_server_start(server_t *s, rf_client_t *ready)
{
    cr_assert_eq(pthread_create(&s->thread, NULL, s_serve, s), 0);
    s->running = true;
    rf_client_t *c = ready;
    if (!c) {
        rf_error_t err;
        rf_client_opts_t o;
        rf_client_opts_default(&o);
        o.timeout_ms = 20000;
        c = rf_client_new(s->endpoint, &o, &err);
        cr_assert_not_null(c, "%s", err.message);
    }
    s_ping_ok(c);
    if (!ready)
        rf_client_destroy(&c);
}

/* ------------------------------------------------------------ messages */

/* A reply decoded into `arena` (the reply is freed). */
static const rf_doc_t *s_decode(void *reply, size_t len, rf__arena_t *arena)
{
    rf__mp_limits_t lim = {.max_bytes = 1 << 24, .max_depth = 32, .max_elements = 0, .max_string = 1 << 20};
    rf_doc_t *out = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf__mp_decode(reply, len, &lim, arena, &out, &err);
    free(reply);
    cr_assert_eq(rc, RF_OK, "%s", err.message);
    cr_assert_eq(out->type, RF_DOC_MAP);
    return out;
}

/* One request on a REQ client; the decoded reply. */
static const rf_doc_t *s_request(rf_client_t *c, rf__arena_t *arena, const char *json)
{
    size_t len = 0, rl = 0;
    void *msg = s_mp(json, &len), *reply = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    rf_status rc = rf_client_request(c, msg, len, &reply, &rl, &err);
    free(msg);
    cr_assert_eq(rc, RF_OK, "%s", err.message);
    return s_decode(reply, rl, arena);
}

static void s_ping_ok(rf_client_t *c)
{
    rf__arena_t *arena = rf__arena_new(0);
    const rf_doc_t *r = s_request(c, arena, "{\"op\":\"ping\",\"id\":\"hello\"}");
    cr_assert_null(rf__doc_get(r, "error"));
    cr_assert_eq(s_get(r, "v", RF_DOC_INT)->u.i, 1);
    cr_assert_str_eq(s_get(r, "id", RF_DOC_STR)->u.s, "hello");
    rf__arena_destroy(&arena);
}

static rf_client_t *s_client(const char *endpoint, int pipelined, int timeout_ms)
{
    rf_client_opts_t o;
    rf_client_opts_default(&o);
    o.pipelined = pipelined;
    o.timeout_ms = timeout_ms;
    rf_error_t err;
    rf_error_clear(&err);
    rf_client_t *c = rf_client_new(endpoint, &o, &err);
    cr_assert_not_null(c, "%s", err.message);
    return c;
}

#define NODES                                                                                                          \
    "{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":["                                                    \
    "{\"name\":\"h1\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}},"                                                                                                       \
    "{\"name\":\"h2\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h2\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}}]}"

#define GANG(name, count)                                                                                              \
    "{\"name\":\"" name "\",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

/* ------------------------------------------------------------------ tests */

Test(client, defaults)
{
    rf_client_opts_t o;
    memset(&o, 0x5a, sizeof o);
    rf_client_opts_default(&o);
    cr_assert_eq(o.timeout_ms, 60000);
    cr_assert_null(o.server_public_key);
    cr_assert_null(o.public_key);
    cr_assert_null(o.secret_key);
    cr_assert_eq(o.pipelined, 0);
    /* NULL-safe destroy */
    rf_client_destroy(NULL);
    rf_client_t *none = NULL;
    rf_client_destroy(&none);
    /* NULL opts: the defaults; destroy clears the pointer */
    rf_error_t err;
    rf_error_clear(&err);
    rf_client_t *c = rf_client_new("ipc:///tmp/rf-test-client-nothing.sock", NULL, &err);
    cr_assert_not_null(c, "%s", err.message);
    rf_client_destroy(&c);
    cr_assert_null(c);
    rf_test_no_leaks();
}

Test(client, bad_endpoints_are_refused_by_message)
{
    static const char *const bad[] = {"nonsense", "tcp://", "nosuch://127.0.0.1:1", "tcp://127.0.0.1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rf_error_t err;
        rf_error_clear(&err);
        rf_client_t *c = rf_client_new(bad[i], NULL, &err);
        cr_assert_null(c, "%s accepted", bad[i]);
        cr_assert_eq(err.code, RF_EINVAL, "%s: %s", bad[i], err.message);
        char want[128];
        snprintf(want, sizeof want, "cannot connect to %s: ", bad[i]);
        cr_assert_eq(strncmp(err.message, want, strlen(want)), 0, "%s", err.message);
    }
    /* a pipelined client checks the same way */
    rf_client_opts_t o;
    rf_client_opts_default(&o);
    o.pipelined = 1;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_null(rf_client_new("nonsense", &o, &err));
    cr_assert_eq(err.code, RF_EINVAL);
    rf_test_no_leaks();
}

Test(client, malformed_curve_keys_are_refused_by_message)
{
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
        cr_assert_fail("libzmq without CURVE: rackfitd's authentication cannot work (Debian's libzmq5 has it)");
        return;
    }
    static const char *const refused = "CURVE keys refused";
    rf_client_opts_t o;
    rf_error_t err;
    const char *ep = "ipc:///tmp/rf-test-client-nothing.sock";

    /* a server key of 39 characters, and one of 41 */
    char short_key[41], long_key[42];
    snprintf(short_key, sizeof short_key, "%.39s", pub);
    snprintf(long_key, sizeof long_key, "%sA", pub);
    const char *lengths[] = {short_key, long_key, ""};
    for (size_t i = 0; i < 3; i++) {
        rf_client_opts_default(&o);
        o.server_public_key = lengths[i];
        rf_error_clear(&err);
        cr_assert_null(rf_client_new(ep, &o, &err), "server key of %zu characters", strlen(lengths[i]));
        cr_assert_eq(err.code, RF_EINVAL);
        cr_assert(strstr(err.message, refused), "%s", err.message);
    }
    /* the client's public key without its secret key, and the reverse */
    rf_client_opts_default(&o);
    o.server_public_key = pub;
    o.public_key = pub;
    rf_error_clear(&err);
    cr_assert_null(rf_client_new(ep, &o, &err));
    cr_assert(strstr(err.message, "come together"), "%s", err.message);
    o.public_key = NULL;
    o.secret_key = sec;
    rf_error_clear(&err);
    cr_assert_null(rf_client_new(ep, &o, &err));
    cr_assert(strstr(err.message, "come together"), "%s", err.message);
    /* a client key of the wrong length */
    o.public_key = short_key;
    rf_error_clear(&err);
    cr_assert_null(rf_client_new(ep, &o, &err));
    cr_assert_eq(err.code, RF_EINVAL);
    /* 40 characters, not Z85 */
    rf_client_opts_default(&o);
    o.server_public_key = "                                        ";
    cr_assert_eq(strlen(o.server_public_key), 40);
    rf_error_clear(&err);
    cr_assert_null(rf_client_new(ep, &o, &err));
    cr_assert_eq(err.code, RF_EINVAL);
    cr_assert(strstr(err.message, refused), "%s", err.message);
    /* well-formed keys: a client (it connects lazily) */
    rf_client_opts_default(&o);
    o.server_public_key = pub;
    o.public_key = pub;
    o.secret_key = sec;
    rf_error_clear(&err);
    rf_client_t *c = rf_client_new(ep, &o, &err);
    cr_assert_not_null(c, "%s", err.message);
    rf_client_destroy(&c);
    rf_test_no_leaks();
}

Test(client, request_on_a_req_client)
{
    server_t s;
    s_server_init(&s, "client", 2);
    s_server_start(&s, NULL);
    rf_client_t *c = s_client(s.endpoint, 0, 30000);
    rf__arena_t *arena = rf__arena_new(0);
    s_ping_ok(c);
    /* a solve: g takes both hosts, h does not fit */
    const rf_doc_t *r =
        s_request(c, arena, "{\"id\":42,\"cluster\":" NODES ",\"gangs\":[" GANG("g", 2) "," GANG("h", 1) "]}");
    cr_assert_null(rf__doc_get(r, "error"));
    cr_assert_eq(s_get(r, "id", RF_DOC_INT)->u.i, 42);
    const rf_doc_t *gangs = s_get(r, "gangs", RF_DOC_ARRAY);
    cr_assert_eq(gangs->len, 2);
    cr_assert(s_get(&gangs->u.items[0], "admitted", RF_DOC_BOOL)->u.b);
    cr_assert_not(s_get(&gangs->u.items[1], "admitted", RF_DOC_BOOL)->u.b);
    cr_assert_eq(s_get(s_get(r, "summary", RF_DOC_MAP), "admitted", RF_DOC_INT)->u.i, 1);
    /* an error reply is a reply: RF_OK, the error inside */
    r = s_request(c, arena, "{\"op\":\"no.such.op\"}");
    const rf_doc_t *e = s_get(r, "error", RF_DOC_MAP);
    cr_assert_str_eq(s_get(e, "code", RF_DOC_STR)->u.s, "unsupported");
    /* one request after another on the same client */
    for (int i = 0; i < 5; i++) {
        char json[64];
        snprintf(json, sizeof json, "{\"op\":\"ping\",\"id\":%d}", i);
        cr_assert_eq(s_get(s_request(c, arena, json), "id", RF_DOC_INT)->u.i, i);
    }
    rf__arena_destroy(&arena);
    rf_client_destroy(&c);
    cr_assert_eq(s_server_stop(&s), 0);
    rf_test_no_leaks();
}

Test(client, a_request_times_out_and_the_client_stays_usable)
{
    server_t s;
    s_server_init(&s, "client", 2);
    /* no server yet */
    rf_client_t *c = s_client(s.endpoint, 0, 200);
    size_t len = 0, rl = 0;
    void *msg = s_mp("{\"op\":\"ping\",\"id\":1}", &len), *reply = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_request(c, msg, len, &reply, &rl, &err), RF_ETIMEOUT, "%s", err.message);
    cr_assert_eq(err.code, RF_ETIMEOUT);
    cr_assert(strstr(err.message, "timed out"), "%s", err.message);
    cr_assert_null(reply);
    cr_assert_eq(rl, 0);
    /* the server comes: the same client gets replies (a late reply to the
     * first request is dropped, never taken for a later one's) */
    s_server_start(&s, NULL);
    rf_status rc = RF_ETIMEOUT;
    for (int tries = 0; tries < 100 && rc == RF_ETIMEOUT; tries++) {
        rf_error_clear(&err);
        rc = rf_client_request(c, msg, len, &reply, &rl, &err);
    }
    cr_assert_eq(rc, RF_OK, "%s", err.message);
    free(msg);
    rf__arena_t *arena = rf__arena_new(0);
    const rf_doc_t *r = s_decode(reply, rl, arena);
    cr_assert_eq(s_get(r, "id", RF_DOC_INT)->u.i, 1);
    for (int i = 2; i < 5; i++) {
        char json[64];
        snprintf(json, sizeof json, "{\"op\":\"ping\",\"id\":%d}", i);
        rc = RF_ETIMEOUT;
        const rf_doc_t *ri = NULL;
        size_t ml = 0;
        void *m = s_mp(json, &ml);
        for (int tries = 0; tries < 50 && rc == RF_ETIMEOUT; tries++)
            rc = rf_client_request(c, m, ml, &reply, &rl, &err);
        free(m);
        cr_assert_eq(rc, RF_OK, "%s", err.message);
        ri = s_decode(reply, rl, arena);
        cr_assert_eq(s_get(ri, "id", RF_DOC_INT)->u.i, i, "each reply is its own request's");
    }
    rf__arena_destroy(&arena);
    rf_client_destroy(&c);
    cr_assert_eq(s_server_stop(&s), 0);
    rf_test_no_leaks();
}

Test(client, pipelined_requests_in_flight_are_all_answered)
{
    server_t s;
    s_server_init(&s, "client", 2);
    s_server_start(&s, NULL);
    rf_client_t *c = s_client(s.endpoint, 1, 30000);
    rf__arena_t *arena = rf__arena_new(0);
    enum { N = 24 };
    /* pings, greedy solves (fast lane) and auto solves (solver lane), all
     * in flight at once */
    for (int i = 0; i < N; i++) {
        char json[1024];
        if (i % 3 == 0)
            snprintf(json, sizeof json, "{\"op\":\"ping\",\"id\":%d}", i);
        else
            snprintf(json, sizeof json,
                     "{\"id\":%d,\"options\":{\"mode\":\"%s\"},\"cluster\":" NODES ",\"gangs\":[" GANG("g", 2) "]}", i,
                     i % 3 == 1 ? "greedy" : "auto");
        size_t len = 0;
        void *msg = s_mp(json, &len);
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_eq(rf_client_send(c, msg, len, &err), RF_OK, "%s", err.message);
        free(msg);
    }
    bool seen[N] = {false};
    for (int k = 0; k < N; k++) {
        void *reply = NULL;
        size_t rl = 0;
        rf_error_t err;
        rf_error_clear(&err);
        cr_assert_eq(rf_client_recv(c, 30000, &reply, &rl, &err), RF_OK, "reply %d: %s", k, err.message);
        const rf_doc_t *r = s_decode(reply, rl, arena);
        cr_assert_null(rf__doc_get(r, "error"));
        int64_t id = s_get(r, "id", RF_DOC_INT)->u.i;
        cr_assert(id >= 0 && id < N, "id %lld", (long long)id);
        cr_assert_not(seen[id], "id %lld twice", (long long)id);
        seen[id] = true;
        if (id % 3 == 0)
            cr_assert_eq(s_get(r, "v", RF_DOC_INT)->u.i, 1);
        else
            cr_assert(s_get(&s_get(r, "gangs", RF_DOC_ARRAY)->u.items[0], "admitted", RF_DOC_BOOL)->u.b);
    }
    /* nothing left: a short wait, and a poll, time out */
    void *reply = (void *)1;
    size_t rl = 1;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_recv(c, 50, &reply, &rl, &err), RF_ETIMEOUT);
    cr_assert_eq(err.code, RF_ETIMEOUT);
    cr_assert_str_eq(err.message, "no reply yet");
    cr_assert_null(reply);
    cr_assert_eq(rl, 0);
    cr_assert_eq(rf_client_recv(c, 0, &reply, &rl, &err), RF_ETIMEOUT);
    rf__arena_destroy(&arena);
    rf_client_destroy(&c);
    cr_assert_eq(s_server_stop(&s), 0);
    rf_test_no_leaks();
}

Test(client, recv_with_nothing_pending_times_out)
{
    /* no server at all: nothing can be pending */
    rf_client_t *c = s_client("ipc:///tmp/rf-test-client-nothing.sock", 1, 1000);
    void *reply = NULL;
    size_t rl = 0;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_recv(c, 20, &reply, &rl, &err), RF_ETIMEOUT);
    cr_assert_str_eq(err.message, "no reply yet");
    cr_assert_null(reply);
    rf_client_destroy(&c);
    rf_test_no_leaks();
}

Test(client, the_wrong_call_for_the_client_is_invalid)
{
    const char *ep = "ipc:///tmp/rf-test-client-nothing.sock";
    rf_client_t *dealer = s_client(ep, 1, 1000), *req = s_client(ep, 0, 1000);
    static const char ping[] = "\x81\xa2op\xa4ping";
    void *reply = (void *)1;
    size_t rl = 1;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_request(dealer, ping, sizeof ping - 1, &reply, &rl, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "rf_client_request needs a client that is not pipelined");
    cr_assert_null(reply, "no reply on an error");
    cr_assert_eq(rl, 0);
    rf_error_clear(&err);
    cr_assert_eq(rf_client_send(req, ping, sizeof ping - 1, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "rf_client_send needs a pipelined client");
    rf_error_clear(&err);
    reply = (void *)1;
    cr_assert_eq(rf_client_recv(req, 0, &reply, &rl, &err), RF_EINVAL);
    cr_assert_str_eq(err.message, "rf_client_recv needs a pipelined client");
    cr_assert_null(reply);
    /* rf_client_solve_json sends a request: not on a pipelined client */
    char *answer = (char *)1;
    size_t al = 1;
    static const char json[] = "{\"cluster\":" NODES ",\"gangs\":[" GANG("g", 1) "]}";
    cr_assert_eq(rf_client_solve_json(dealer, json, sizeof json - 1, &answer, &al, &err), RF_EINVAL);
    cr_assert_null(answer);
    cr_assert_eq(al, 0);
    rf_client_destroy(&dealer);
    rf_client_destroy(&req);
    rf_test_no_leaks();
}

Test(client, solve_json_prints_the_answer_and_returns_error_replies)
{
    server_t s;
    s_server_init(&s, "client", 2);
    s_server_start(&s, NULL);
    rf_client_t *c = s_client(s.endpoint, 0, 30000);
    rf_error_t err;
    rf_error_clear(&err);
    char *answer = NULL;
    size_t al = 0;
    static const char json[] = "{\"cluster\":" NODES ",\"gangs\":[" GANG("g", 2) "," GANG("h", 1) "]}";
    cr_assert_eq(rf_client_solve_json(c, json, sizeof json - 1, &answer, &al, &err), RF_OK, "%s", err.message);
    cr_assert_not_null(answer);
    cr_assert_eq(al, strlen(answer), "answer_len is the text's length");
    cr_assert_eq(answer[al - 1], '\n', "one line break at the end");
    cr_assert_eq(answer[0], '{');
    /* the answer is JSON: parse it back */
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    cr_assert_eq(rf__json_parse(answer, al, NULL, arena, &doc, &err), RF_OK, "%s\n%s", err.message, answer);
    cr_assert_eq(doc->type, RF_DOC_MAP);
    cr_assert_null(rf__doc_get(doc, "id"), "the id is not printed");
    cr_assert_null(rf__doc_get(doc, "cluster"), "nor the cluster block");
    const rf_doc_t *gangs = s_get(doc, "gangs", RF_DOC_ARRAY);
    cr_assert_eq(gangs->len, 2);
    cr_assert_str_eq(s_get(&gangs->u.items[0], "name", RF_DOC_STR)->u.s, "g");
    cr_assert(s_get(&gangs->u.items[0], "admitted", RF_DOC_BOOL)->u.b);
    cr_assert_not(s_get(&gangs->u.items[1], "admitted", RF_DOC_BOOL)->u.b);
    const rf_doc_t *sum = s_get(doc, "summary", RF_DOC_MAP);
    cr_assert_eq(s_get(sum, "admitted", RF_DOC_INT)->u.i, 1);
    cr_assert_eq(s_get(sum, "rejected", RF_DOC_INT)->u.i, 1);
    free(answer);
    /* answer_len may be NULL */
    answer = NULL;
    cr_assert_eq(rf_client_solve_json(c, json, sizeof json - 1, &answer, NULL, &err), RF_OK, "%s", err.message);
    cr_assert_not_null(answer);
    free(answer);

    /* an error reply: its status, the server's message and path */
    static const char bad[] = "{\"cluster\":" NODES ",\"gangs\":[{\"name\":\"g\",\"pod_sets\":[{\"name\":\"w\","
                              "\"count\":\"two\",\"requests\":{\"nvidia.com/gpu\":8}}]}]}";
    answer = (char *)1;
    al = 1;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_solve_json(c, bad, sizeof bad - 1, &answer, &al, &err), RF_ESCHEMA, "%s", err.message);
    cr_assert_eq(err.code, RF_ESCHEMA);
    cr_assert_str_eq(err.path, "gangs[0].pod_sets[0].count");
    cr_assert_gt(strlen(err.message), 0);
    cr_assert_null(answer);
    cr_assert_eq(al, 0);
    /* an unknown key, at the top */
    static const char extra[] = "{\"cluster\":" NODES ",\"gangs\":[],\"surprise\":1}";
    rf_error_clear(&err);
    cr_assert_eq(rf_client_solve_json(c, extra, sizeof extra - 1, &answer, &al, &err), RF_ESCHEMA, "%s", err.message);
    cr_assert_str_eq(err.path, "surprise");
    /* JSON that does not parse never reaches the server */
    rf_error_clear(&err);
    cr_assert_eq(rf_client_solve_json(c, "{\"cluster\":", 11, &answer, &al, &err), RF_EPARSE, "%s", err.message);
    cr_assert_null(answer);
    rf__arena_destroy(&arena);
    rf_client_destroy(&c);
    cr_assert_eq(s_server_stop(&s), 0);
    rf_test_no_leaks();
}

Test(client, solve_json_times_out_without_a_server)
{
    rf_client_t *c = s_client("ipc:///tmp/rf-test-client-nothing.sock", 0, 100);
    static const char json[] = "{\"cluster\":" NODES ",\"gangs\":[" GANG("g", 1) "]}";
    char *answer = (char *)1;
    size_t al = 1;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_solve_json(c, json, sizeof json - 1, &answer, &al, &err), RF_ETIMEOUT, "%s", err.message);
    cr_assert_null(answer);
    cr_assert_eq(al, 0);
    rf_client_destroy(&c);
    rf_test_no_leaks();
}

Test(client, curve_with_an_allowed_key_is_served_and_another_key_times_out)
{
    char spub[41], ssec[41], cpub[41], csec[41];
    if (zmq_curve_keypair(spub, ssec) != 0) {
        cr_assert_fail("libzmq without CURVE: rackfitd's authentication cannot work (Debian's libzmq5 has it)");
        return;
    }
    cr_assert_eq(zmq_curve_keypair(cpub, csec), 0);
    server_t s;
    s_server_init(&s, "client", 2);
    s.cfg.curve = true;
    memcpy(s.cfg.curve_secret, ssec, sizeof ssec);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__server_config_set(&s.cfg, "curve_allowed_key", cpub, "test", &err), RF_OK, "%s", err.message);
    rf_client_opts_t o;
    rf_client_opts_default(&o);
    o.timeout_ms = 20000;
    o.server_public_key = spub;
    o.public_key = cpub;
    o.secret_key = csec;
    rf_client_t *ok = rf_client_new(s.endpoint, &o, &err);
    cr_assert_not_null(ok, "%s", err.message);
    s_server_start(&s, ok); /* the readiness ping goes through CURVE */
    s_ping_ok(ok);
    /* a fresh key pair (no client keys given): not allowed, no reply */
    rf_client_opts_default(&o);
    o.timeout_ms = 500;
    o.server_public_key = spub;
    rf_client_t *other = rf_client_new(s.endpoint, &o, &err);
    cr_assert_not_null(other, "%s", err.message);
    static const char ping[] = "\x81\xa2op\xa4ping";
    void *reply = NULL;
    size_t rl = 0;
    rf_error_clear(&err);
    cr_assert_eq(rf_client_request(other, ping, sizeof ping - 1, &reply, &rl, &err), RF_ETIMEOUT, "%s", err.message);
    cr_assert_null(reply);
    s_ping_ok(ok);
    rf_client_destroy(&ok);
    rf_client_destroy(&other);
    cr_assert_eq(s_server_stop(&s), 0);
    rf_test_no_leaks();
}
