/* tests/unit/test_server.c: rackfitd's transport (service/server.c) run
 * in-process: rf__server_run on a thread listening on an ipc:// endpoint,
 * spoken to with plain ZeroMQ sockets (REQ and DEALER, so that malformed
 * framing can be sent too) and stopped with SIGTERM as the process would
 * be. A ping answers; an inline solve answers a feasible answer; malformed
 * bytes get an error reply naming the problem (parse_error for bad or
 * truncated MessagePack, limit_exceeded for counts the bytes cannot hold,
 * bad_problem for a non-map, unsupported for an unknown op) and badly
 * framed messages a parse_error naming the framing, and the server goes on; a full fast lane (by requests or by bytes)
 * and a full solver lane (big requests go there unscanned) answer `busy`
 * with the request's id and the lane's name, counted by stats; at SIGTERM
 * the requests already read are answered before the server returns 0; a
 * plain endpoint that is not loopback, or one that cannot be bound, is a
 * configuration error (2); with CURVE only an allowed client key is
 * answered. Every test ends with the leak check. */
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
#include "server.h"

/* ------------------------------------------------------------ the server */

static void *s_socket(void *ctx, int type, int timeout_ms)
{
    void *sock = zmq_socket(ctx, type);
    cr_assert_not_null(sock);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
    return sock;
}

/* Start the server and wait until it answers a ping (so its SIGTERM
 * handler is in place). */
static void s_server_start(server_t *s, void *ctx)
{
    cr_assert_eq(pthread_create(&s->thread, NULL, s_serve, s), 0);
    s->running = true;
    void *req = s_socket(ctx, ZMQ_REQ, 20000);
    cr_assert_eq(zmq_connect(req, s->endpoint), 0);
    static const char ping[] = "\x81\xa2op\xa4ping"; /* {"op":"ping"} */
    cr_assert_eq(zmq_send(req, ping, sizeof ping - 1, 0), (int)sizeof ping - 1);
    char buf[512];
    cr_assert_gt(zmq_recv(req, buf, sizeof buf, 0), 0, "the server never answered a ping: %s", zmq_strerror(errno));
    zmq_close(req);
}

/* ------------------------------------------------------------ messages */

/* Send [""][payload] on a DEALER. */
static void s_send(void *dealer, const void *msg, size_t len)
{
    cr_assert_eq(zmq_send(dealer, "", 0, ZMQ_SNDMORE), 0);
    cr_assert_eq(zmq_send(dealer, msg, len, 0), (int)len);
}

static void s_send_json(void *dealer, const char *json)
{
    size_t len = 0;
    void *msg = s_mp(json, &len);
    s_send(dealer, msg, len);
    free(msg);
}

/* The next reply on a DEALER ([""][reply]), decoded into `arena`; the
 * frames are checked: an empty delimiter, then one payload frame. */
static const rf_doc_t *s_recv(void *dealer, rf__arena_t *arena)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    cr_assert_geq(zmq_msg_recv(&m, dealer, 0), 0, "no reply: %s", zmq_strerror(errno));
    cr_assert_eq(zmq_msg_size(&m), 0, "the reply starts with the empty delimiter");
    cr_assert(zmq_msg_more(&m));
    zmq_msg_close(&m);
    zmq_msg_init(&m);
    cr_assert_geq(zmq_msg_recv(&m, dealer, 0), 0, "no payload: %s", zmq_strerror(errno));
    cr_assert_not(zmq_msg_more(&m), "a reply is one payload frame");
    rf__mp_limits_t lim = {.max_bytes = 1 << 24, .max_depth = 32, .max_elements = 0, .max_string = 1 << 20};
    rf_doc_t *out = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__mp_decode(zmq_msg_data(&m), zmq_msg_size(&m), &lim, arena, &out, &err), RF_OK, "%s", err.message);
    zmq_msg_close(&m);
    cr_assert_eq(out->type, RF_DOC_MAP, "a reply is a map");
    return out;
}

static const rf_doc_t *s_call(void *dealer, rf__arena_t *arena, const char *json)
{
    s_send_json(dealer, json);
    return s_recv(dealer, arena);
}

static void s_ok(const rf_doc_t *reply)
{
    const rf_doc_t *e = rf__doc_get(reply, "error");
    cr_assert_null(e, "unexpected error: %s", e ? s_get(e, "message", RF_DOC_STR)->u.s : "");
}

/* The error of a reply: its code is `code`; its message. */
static const char *s_error(const rf_doc_t *reply, rf_status code)
{
    const rf_doc_t *e = rf__doc_get(reply, "error");
    cr_assert(e && e->type == RF_DOC_MAP, "no error in the reply");
    cr_assert_str_eq(s_get(e, "code", RF_DOC_STR)->u.s, rf_status_code(code));
    const char *message = s_get(e, "message", RF_DOC_STR)->u.s;
    cr_assert_gt(strlen(message), 0, "an error names its problem");
    return message;
}

static void *s_dealer(void *ctx, const server_t *s, int timeout_ms)
{
    void *d = s_socket(ctx, ZMQ_DEALER, timeout_ms);
    cr_assert_eq(zmq_connect(d, s->endpoint), 0);
    return d;
}

/* The server started on a thread and a DEALER connected to it. */
static void *s_up(server_t *s, void *ctx, int timeout_ms)
{
    s_server_start(s, ctx);
    return s_dealer(ctx, s, timeout_ms);
}

/* The end of a test with one dealer: everything closed, the server stopped
 * cleanly (status 0), nothing leaked. */
static void s_down(server_t *s, void *ctx, void *d, rf__arena_t **arena)
{
    rf__arena_destroy(arena);
    zmq_close(d);
    cr_assert_eq(s_server_stop(s), 0);
    zmq_ctx_term(ctx);
    rf_test_no_leaks();
}

#define NODES                                                                                                          \
    "{\"levels\":[\"rack\",\"kubernetes.io/hostname\"],\"nodes\":["                                                    \
    "{\"name\":\"h1\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h1\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}},"                                                                                                       \
    "{\"name\":\"h2\",\"labels\":{\"rack\":\"r1\",\"kubernetes.io/hostname\":\"h2\"},\"allocatable\":{\"nvidia.com/"   \
    "gpu\":8}}]}"

#define GANG(name, count)                                                                                              \
    "{\"name\":\"" name "\",\"pod_sets\":[{\"name\":\"w\",\"count\":" #count ",\"requests\":{\"nvidia.com/gpu\":8}}]}"

/* A solve with some work in it: `n_nodes` nodes of 8 GPUs in racks of 8
 * and `n_gangs` gangs of 1..4 pods, mode `mode`, id `id`. Malloc'ed. */
static char *s_big_solve(int id, const char *mode, int n_nodes, int n_gangs)
{
    size_t cap = (size_t)(n_nodes + n_gangs) * 200 + 512, len = 0;
    char *b = malloc(cap);
    cr_assert_not_null(b);
    len += (size_t)snprintf(b + len, cap - len,
                            "{\"id\":%d,\"options\":{\"mode\":\"%s\"},\"cluster\":{\"levels\":[\"rack\",\"host\"],"
                            "\"nodes\":[",
                            id, mode);
    for (int i = 0; i < n_nodes; i++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"name\":\"n%d\",\"labels\":{\"rack\":\"r%d\",\"host\":\"n%d\"},"
                                "\"allocatable\":{\"gpu\":8}}",
                                i ? "," : "", i, i / 8, i);
    len += (size_t)snprintf(b + len, cap - len, "]},\"gangs\":[");
    for (int g = 0; g < n_gangs; g++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"name\":\"g%d\",\"pod_sets\":[{\"name\":\"w\",\"count\":%d,"
                                "\"requests\":{\"gpu\":%d}}]}",
                                g ? "," : "", g, 1 + g % 4, 1 + g % 8);
    snprintf(b + len, cap - len, "]}");
    return b;
}

/* ------------------------------------------------------------------ tests */

Test(server, ping_answers_with_the_protocol_version)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    void *d = s_up(&s, ctx, 20000);
    rf__arena_t *arena = rf__arena_new(0);
    const rf_doc_t *r = s_call(d, arena, "{\"op\":\"ping\",\"id\":\"p-1\"}");
    s_ok(r);
    cr_assert_eq(s_get(r, "v", RF_DOC_INT)->u.i, 1);
    cr_assert_str_eq(s_get(r, "id", RF_DOC_STR)->u.s, "p-1", "the id is echoed verbatim");
    cr_assert_eq(strncmp(s_get(r, "server", RF_DOC_STR)->u.s, "rackfitd ", 9), 0);
    const rf_doc_t *ops = s_get(r, "ops", RF_DOC_ARRAY);
    bool solve = false;
    for (uint32_t i = 0; i < ops->len; i++)
        solve = solve || (ops->u.items[i].type == RF_DOC_STR && strcmp(ops->u.items[i].u.s, "solve") == 0);
    cr_assert(solve, "ping lists the solve op");
    s_down(&s, ctx, d, &arena);
}

Test(server, a_solve_answers_a_feasible_answer)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    void *d = s_up(&s, ctx, 30000);
    rf__arena_t *arena = rf__arena_new(0);
    /* two hosts of 8 GPUs: g takes both (one pod each), h does not fit */
    const rf_doc_t *r =
        s_call(d, arena, "{\"id\":7,\"cluster\":" NODES ",\"gangs\":[" GANG("g", 2) "," GANG("h", 1) "]}");
    s_ok(r);
    cr_assert_eq(s_get(r, "id", RF_DOC_INT)->u.i, 7);
    const rf_doc_t *gangs = s_get(r, "gangs", RF_DOC_ARRAY);
    cr_assert_eq(gangs->len, 2);
    cr_assert_str_eq(s_get(&gangs->u.items[0], "name", RF_DOC_STR)->u.s, "g");
    cr_assert(s_get(&gangs->u.items[0], "admitted", RF_DOC_BOOL)->u.b);
    cr_assert_not(s_get(&gangs->u.items[1], "admitted", RF_DOC_BOOL)->u.b, "h has no host left");
    /* g's two pods: one on each host, 8 GPUs each fills a host */
    const rf_doc_t *sets = s_get(&gangs->u.items[0], "pod_sets", RF_DOC_ARRAY);
    cr_assert_eq(sets->len, 1);
    const rf_doc_t *pl = s_get(&sets->u.items[0], "placements", RF_DOC_ARRAY);
    int64_t pods = 0;
    bool on[2] = {false, false};
    for (uint32_t i = 0; i < pl->len; i++) {
        const char *node = s_get(&pl->u.items[i], "node", RF_DOC_STR)->u.s;
        int64_t count = s_get(&pl->u.items[i], "count", RF_DOC_INT)->u.i;
        cr_assert_eq(count, 1, "one 8-GPU pod per 8-GPU host");
        cr_assert(strcmp(node, "h1") == 0 || strcmp(node, "h2") == 0, "unknown node %s", node);
        int k = node[1] - '1';
        cr_assert_not(on[k], "two pods on %s", node);
        on[k] = true;
        pods += count;
    }
    cr_assert_eq(pods, 2);
    const rf_doc_t *sum = s_get(r, "summary", RF_DOC_MAP);
    cr_assert_eq(s_get(sum, "admitted", RF_DOC_INT)->u.i, 1);
    cr_assert_eq(s_get(sum, "rejected", RF_DOC_INT)->u.i, 1);
    s_down(&s, ctx, d, &arena);
}

Test(server, malformed_bytes_get_an_error_naming_the_problem)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    void *d = s_up(&s, ctx, 20000);
    rf__arena_t *arena = rf__arena_new(0);
    /* 0xc1 is never used in MessagePack */
    s_send(d, "\xc1", 1);
    const char *m = s_error(s_recv(d, arena), RF_EPARSE);
    cr_assert(strstr(m, "0xc1"), "%s", m);
    /* truncated: {"op": "pi... (a string of 4 bytes, 2 sent) */
    s_send(d, "\x81\xa2op\xa4pi", 6);
    m = s_error(s_recv(d, arena), RF_EPARSE);
    cr_assert(strstr(m, "truncated"), "%s", m);
    /* a map that declares more pairs than the message has bytes for */
    s_send(d, "\x82\xa2op", 4);
    m = s_error(s_recv(d, arena), RF_ELIMIT);
    cr_assert(strstr(m, "declares more elements"), "%s", m);
    /* a well-formed array, not a map */
    s_send(d, "\x92\x01\x02", 3);
    m = s_error(s_recv(d, arena), RF_ESCHEMA);
    cr_assert(strstr(m, "must be a map"), "%s", m);
    /* an unknown op is well-formed: its error is `unsupported` */
    m = s_error(s_call(d, arena, "{\"op\":\"no.such.op\",\"id\":3}"), RF_EUNSUPPORTED);
    cr_assert(strstr(m, "no.such.op"), "the message names the op: %s", m);
    /* and the server still answers */
    s_ok(s_call(d, arena, "{\"op\":\"ping\"}"));
    s_down(&s, ctx, d, &arena);
}

Test(server, bad_framing_gets_a_parse_error_naming_the_framing)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    void *d = s_up(&s, ctx, 20000);
    rf__arena_t *arena = rf__arena_new(0);
    static const char ping[] = "\x81\xa2op\xa4ping";
    /* no delimiter: [payload] */
    cr_assert_eq(zmq_send(d, ping, sizeof ping - 1, 0), (int)sizeof ping - 1);
    const char *m = s_error(s_recv(d, arena), RF_EPARSE);
    cr_assert(strstr(m, "delimiter"), "%s", m);
    /* two payload frames: [""][payload][payload] */
    cr_assert_eq(zmq_send(d, "", 0, ZMQ_SNDMORE), 0);
    cr_assert_eq(zmq_send(d, ping, sizeof ping - 1, ZMQ_SNDMORE), (int)sizeof ping - 1);
    cr_assert_eq(zmq_send(d, ping, sizeof ping - 1, 0), (int)sizeof ping - 1);
    m = s_error(s_recv(d, arena), RF_EPARSE);
    cr_assert(strstr(m, "one payload frame"), "%s", m);
    /* an empty frame only: [""] */
    cr_assert_eq(zmq_send(d, "", 0, 0), 0);
    s_error(s_recv(d, arena), RF_EPARSE);
    /* many frames, more than the server keeps */
    for (int i = 0; i < 10; i++)
        cr_assert_eq(zmq_send(d, "x", 1, i < 9 ? ZMQ_SNDMORE : 0), 1);
    s_error(s_recv(d, arena), RF_EPARSE);
    s_ok(s_call(d, arena, "{\"op\":\"ping\"}"));
    s_down(&s, ctx, d, &arena);
}

/* Send `n` solves with ids 0..n-1 at once on one DEALER, then read the n
 * replies: each id answered once, either an answer or `busy` naming
 * `lane`. Returns how many were busy; the stats' busy count agrees. */
static int s_flood(void *d, rf__arena_t *arena, int n, const char *mode, const char *lane)
{
    char **reqs = calloc((size_t)n, sizeof *reqs);
    void **mps = calloc((size_t)n, sizeof *mps);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    bool *seen = calloc((size_t)n, sizeof *seen);
    cr_assert(reqs && mps && lens && seen);
    for (int i = 0; i < n; i++) {
        reqs[i] = s_big_solve(i, mode, 128, 48);
        mps[i] = s_mp(reqs[i], &lens[i]);
    }
    for (int i = 0; i < n; i++)
        s_send(d, mps[i], lens[i]);
    int busy = 0, answered = 0;
    char want[64];
    snprintf(want, sizeof want, "the %s lane's queue is full", lane);
    for (int k = 0; k < n; k++) {
        const rf_doc_t *r = s_recv(d, arena);
        int64_t id = s_get(r, "id", RF_DOC_INT)->u.i;
        cr_assert(id >= 0 && id < n, "id %lld", (long long)id);
        cr_assert_not(seen[id], "id %lld answered twice", (long long)id);
        seen[id] = true;
        if (rf__doc_get(r, "error")) {
            const char *m = s_error(r, RF_EBUSY);
            cr_assert(strstr(m, want), "%s", m);
            busy++;
        } else {
            cr_assert_eq(s_get(r, "gangs", RF_DOC_ARRAY)->len, 48);
            answered++;
        }
    }
    cr_log_info("%s lane: %d of %d busy", lane, busy, n);
    cr_assert_geq(answered, 1, "the lane's first request is always taken");
    const rf_doc_t *st = s_call(d, arena, "{\"op\":\"stats\"}");
    s_ok(st);
    cr_assert_eq(s_get(st, "busy", RF_DOC_INT)->u.i, busy, "stats counts the busy replies");
    for (int i = 0; i < n; i++) {
        free(reqs[i]);
        free(mps[i]);
    }
    free(reqs);
    free(mps);
    free(lens);
    free(seen);
    return busy;
}

Test(server, a_full_fast_lane_by_requests_answers_busy)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    s.cfg.fast_queue = 1;
    void *d = s_up(&s, ctx, 60000);
    rf__arena_t *arena = rf__arena_new(0);
    int busy = s_flood(d, arena, 60, "greedy", "fast");
    cr_assert_geq(busy, 1, "60 solves at once on a lane of one worker and a queue of one: some are busy");
    s_down(&s, ctx, d, &arena);
}

Test(server, a_full_fast_lane_by_bytes_answers_busy)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    s.cfg.fast_queue = 100000;
    s.cfg.fast_queue_bytes = 1; /* one request at a time, whatever its size */
    void *d = s_up(&s, ctx, 60000);
    rf__arena_t *arena = rf__arena_new(0);
    int busy = s_flood(d, arena, 60, "greedy", "fast");
    cr_assert_geq(busy, 1, "60 solves at once on a lane that holds one request's bytes: some are busy");
    s_down(&s, ctx, d, &arena);
}

Test(server, big_requests_go_to_the_solver_lane_and_fill_it)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    s.cfg.big_message_bytes = 0; /* every request is big: the solver lane, unscanned */
    s.cfg.solver_queue = 1;
    s.cfg.fast_queue = 1;
    void *d = s_up(&s, ctx, 60000);
    rf__arena_t *arena = rf__arena_new(0);
    /* greedy solves would be the fast lane's; big, they are the solver's */
    int busy = s_flood(d, arena, 60, "greedy", "solver");
    cr_assert_geq(busy, 1);
    /* unscanned, a malformed request is refused by the worker */
    s_send(d, "\xc1", 1);
    s_error(s_recv(d, arena), RF_EPARSE);
    s_down(&s, ctx, d, &arena);
}

Test(server, sigterm_drains_the_requests_in_flight_then_stops)
{
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    void *d = s_up(&s, ctx, 60000);
    rf__arena_t *arena = rf__arena_new(0);
    enum { N = 6 };
    /* N solver-lane solves (one worker), then a ping on the same
     * connection: once the ping is answered the server has read every
     * solve before it (one connection's messages are read in order). */
    for (int i = 0; i < N; i++) {
        char *json = s_big_solve(i, "auto", 64, 24);
        s_send_json(d, json);
        free(json);
    }
    s_send_json(d, "{\"op\":\"ping\",\"id\":\"last\"}");
    bool seen[N] = {false};
    int answered = 0;
    for (bool pinged = false; !pinged;) {
        const rf_doc_t *r = s_recv(d, arena);
        s_ok(r);
        const rf_doc_t *id = rf__doc_get(r, "id");
        cr_assert_not_null(id);
        if (id->type == RF_DOC_STR) {
            cr_assert_str_eq(id->u.s, "last");
            pinged = true;
        } else {
            cr_assert_not(seen[id->u.i]);
            seen[id->u.i] = true;
            answered++;
        }
    }
    cr_log_info("%d of %d solves answered before SIGTERM", answered, N);
    cr_assert_eq(kill(getpid(), SIGTERM), 0);
    /* every solve read before the signal is answered: an answer, not an error */
    for (; answered < N; answered++) {
        const rf_doc_t *r = s_recv(d, arena);
        s_ok(r);
        int64_t id = s_get(r, "id", RF_DOC_INT)->u.i;
        cr_assert(id >= 0 && id < N && !seen[id]);
        seen[id] = true;
        cr_assert_eq(s_get(r, "gangs", RF_DOC_ARRAY)->len, 24);
    }
    pthread_join(s.thread, NULL);
    s.running = false;
    cr_assert_eq(s.rc, 0, "a clean stop is exit status 0");
    /* stopped: nothing answers any more */
    int short_ms = 300;
    zmq_setsockopt(d, ZMQ_RCVTIMEO, &short_ms, sizeof short_ms);
    s_send_json(d, "{\"op\":\"ping\"}");
    zmq_msg_t m;
    zmq_msg_init(&m);
    cr_assert_lt(zmq_msg_recv(&m, d, 0), 0, "a stopped server answers nothing");
    zmq_msg_close(&m);
    s_down(&s, ctx, d, &arena);
}

Test(server, plain_mode_refuses_an_endpoint_that_is_not_loopback)
{
    rf__server_config_t cfg;
    rf__server_config_init(&cfg);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__server_config_set(&cfg, "listen", "tcp://0.0.0.0:0", "test", &err), RF_OK);
    cfg.log_level = RF_LOG_ERROR;
    cr_assert_eq(rf__server_run(&cfg), 2, "plain mode off loopback without allow_insecure: a config error");
    rf__server_config_fini(&cfg);
    rf_test_no_leaks();
}

Test(server, an_endpoint_that_cannot_be_bound_is_a_config_error)
{
    rf__server_config_t cfg;
    rf__server_config_init(&cfg);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__server_config_set(&cfg, "listen", "tcp://127.0.0.1:notaport", "test", &err), RF_OK);
    cfg.log_level = RF_LOG_ERROR;
    cfg.fast_threads = 1;
    cfg.ops.solver_threads = 1;
    cr_assert_eq(rf__server_run(&cfg), 2);
    rf__server_config_fini(&cfg);
    rf_test_no_leaks();
}

Test(server, curve_answers_only_allowed_client_keys)
{
    if (!zmq_has("curve")) {
        cr_assert_fail("libzmq without CURVE: rackfitd's authentication cannot work (Debian's libzmq5 has it)");
        return;
    }
    char spub[41], ssec[41], cpub[41], csec[41], opub[41], osec[41];
    cr_assert_eq(zmq_curve_keypair(spub, ssec), 0);
    cr_assert_eq(zmq_curve_keypair(cpub, csec), 0);
    cr_assert_eq(zmq_curve_keypair(opub, osec), 0);
    void *ctx = zmq_ctx_new();
    server_t s;
    s_server_init(&s, "server", 1);
    s.cfg.curve = true;
    memcpy(s.cfg.curve_secret, ssec, sizeof ssec);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__server_config_set(&s.cfg, "curve_allowed_key", cpub, "test", &err), RF_OK, "%s", err.message);
    /* start: the readiness ping must be CURVE too, with the allowed key */
    cr_assert_eq(pthread_create(&s.thread, NULL, s_serve, &s), 0);
    s.running = true;
    rf__arena_t *arena = rf__arena_new(0);
    void *ok = s_socket(ctx, ZMQ_DEALER, 20000);
    zmq_setsockopt(ok, ZMQ_CURVE_SERVERKEY, spub, 40);
    zmq_setsockopt(ok, ZMQ_CURVE_PUBLICKEY, cpub, 40);
    zmq_setsockopt(ok, ZMQ_CURVE_SECRETKEY, csec, 40);
    cr_assert_eq(zmq_connect(ok, s.endpoint), 0);
    const rf_doc_t *r = s_call(ok, arena, "{\"op\":\"ping\",\"id\":1}");
    s_ok(r);
    cr_assert_eq(s_get(r, "id", RF_DOC_INT)->u.i, 1);
    /* another key: no connection, so no reply */
    void *other = s_socket(ctx, ZMQ_DEALER, 500);
    zmq_setsockopt(other, ZMQ_CURVE_SERVERKEY, spub, 40);
    zmq_setsockopt(other, ZMQ_CURVE_PUBLICKEY, opub, 40);
    zmq_setsockopt(other, ZMQ_CURVE_SECRETKEY, osec, 40);
    cr_assert_eq(zmq_connect(other, s.endpoint), 0);
    zmq_send(other, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT);
    zmq_send(other, "\x81\xa2op\xa4ping", 8, ZMQ_DONTWAIT);
    char buf[256];
    cr_assert_lt(zmq_recv(other, buf, sizeof buf, 0), 0, "a client whose key is not allowed gets nothing");
    /* plain: no connection either */
    void *plain = s_socket(ctx, ZMQ_DEALER, 500);
    cr_assert_eq(zmq_connect(plain, s.endpoint), 0);
    zmq_send(plain, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT);
    zmq_send(plain, "\x81\xa2op\xa4ping", 8, ZMQ_DONTWAIT);
    cr_assert_lt(zmq_recv(plain, buf, sizeof buf, 0), 0, "a plain client gets nothing from a CURVE server");
    /* the allowed client is still served */
    s_ok(s_call(ok, arena, "{\"op\":\"ping\"}"));
    rf__arena_destroy(&arena);
    zmq_close(ok);
    zmq_close(other);
    zmq_close(plain);
    cr_assert_eq(s_server_stop(&s), 0);
    zmq_ctx_term(ctx);
    rf_test_no_leaks();
}
