/* service/server.c: rackfitd's transport (service/server.h), one of the two
 * files that include <zmq.h>.
 *
 * Threads and sockets (a ZeroMQ socket belongs to one thread):
 * - the main thread owns the ROUTER (every --listen endpoint) and a PULL
 *   socket; it reads requests, pre-scans the small ones (once: the worker
 *   does not scan them again), puts each on a lane (service/lanes.h) or
 *   answers `busy` at once, and forwards the replies the workers PUSH back
 *   to it, so it alone writes to the ROUTER;
 * - lanes: `fast` (greedy solves and every other op) and `solver` (ilp and
 *   auto solves, and requests larger than big_message_bytes), each with its
 *   own workers and a queue bounded by requests and bytes, so a slow solve
 *   never holds up small requests;
 * - with CURVE, a ZAP handler thread (RFC 27) on inproc://zeromq.zap.01
 *   accepts only the configured client keys; others get no connection.
 *   Its socket is bound before the ROUTER binds, and the server does not
 *   start without it (libzmq admits CURVE clients unchecked when nothing is
 *   bound there);
 * - with --metrics-listen, libmicrohttpd's thread (base/httpd.h) serves
 *   /metrics, /healthz and /readyz (ready once every endpoint is bound,
 *   not ready again from SIGTERM on);
 * - the workers' PUSH sockets and writers are made before the workers
 *   start; a worker that cannot start stops the server (exit 3).
 * Invariants: every request that reaches the main thread gets exactly one
 * reply (its own, an error, or `busy`), and `in_flight` counts those queued
 * or being worked on; after SIGTERM/SIGINT the ROUTER is no longer read, the
 * requests in flight are answered, and the process exits 0. Logs go to
 * stderr, one line per event; no key is ever logged. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "clock.h"
#include "httpd.h"
#include "lanes.h"
#include "log.h"
#include "ops.h"
#include "rackfit/rackfit.h"

#define S_REPLIES_ENDPOINT "inproc://rackfitd-replies"
#define S_ZAP_ENDPOINT     "inproc://zeromq.zap.01"
#define S_N_LANES          2
#define S_FAST             0
#define S_SOLVER           1
#define S_ENV_MAX          4 /* routing frames before the delimiter: identity, REQ_CORRELATE's id, ... */

/* --------------------------------------------------------- data structures */

typedef struct {
    zmq_msg_t env[S_ENV_MAX]; /* the routing envelope, echoed on the reply */
    int n_env;
    zmq_msg_t payload;
    double received_ms;
    bool scanned; /* the main thread pre-scanned the payload */
} s_job_t;

typedef struct {
    rf__lane_t q;
    int32_t n_workers; /* started: those to join */
    pthread_t *workers;
} s_lane_t;

typedef enum { S_STARTING = 0, S_SERVING, S_STOPPING } s_phase_t;

typedef struct {
    const rf__server_config_t *cfg;
    void *ctx;
    rf__ops_t *ops;
    s_lane_t lanes[S_N_LANES];
    int lanes_ready;
    atomic_int in_flight;
    atomic_int phase; /* s_phase_t, for /readyz */
    void *router, *pull;
    pthread_t zap;
    bool zap_started;
    rf__mp_writer_t *w; /* the main thread's, for replies it makes itself */
    rf__httpd_t *httpd;
    sigset_t old_mask;
} s_server_t;

/* Made by the main thread, so that a worker that cannot start is a startup
 * failure (exit 3), never a lane that silently drops its requests; the
 * worker takes all of it (pthread_create is the barrier that hands the
 * PUSH socket over to the worker's thread). */
typedef struct {
    s_server_t *srv;
    s_lane_t *lane;
    int index;
    void *push; /* connected to S_REPLIES_ENDPOINT */
    rf__mp_writer_t *w;
} s_worker_arg_t;

/* The ZAP handler's REP socket is bound by the main thread before the
 * ROUTER binds (libzmq lets CURVE clients in unchecked while nothing is
 * bound on inproc://zeromq.zap.01); the thread takes it. */
typedef struct {
    s_server_t *srv;
    void *rep;
} s_zap_arg_t;

static int s_sig_pipe[2] = {-1, -1};

/* ------------------------------------------------------------- local methods */

static void s_on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (s_sig_pipe[1] >= 0 && write(s_sig_pipe[1], &b, 1) < 0) {
        /* nothing to do: a byte is already pending */
    }
    errno = saved;
}

static void s_free_buf(void *data, void *hint)
{
    (void)hint;
    free(data);
}

static void s_job_free(void *job)
{
    s_job_t *j = job;
    if (!j)
        return;
    for (int i = 0; i < j->n_env; i++)
        zmq_msg_close(&j->env[i]);
    zmq_msg_close(&j->payload);
    free(j);
}

/* A plain endpoint is loopback when it is ipc://, inproc://, or tcp:// on
 * 127.0.0.0/8, ::1 or localhost. */
static bool s_is_loopback(const char *ep)
{
    if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0)
        return true;
    if (strncmp(ep, "tcp://", 6) != 0)
        return false;
    const char *h = ep + 6;
    return strncmp(h, "127.", 4) == 0 || strncmp(h, "localhost:", 10) == 0 || strncmp(h, "[::1]:", 6) == 0;
}

static void s_lane_info(void *arg, rf__lane_info_t *out)
{
    s_server_t *s = arg;
    out->lanes = S_N_LANES;
    for (int i = 0; i < S_N_LANES; i++) {
        s_lane_t *l = &s->lanes[i];
        out->lane_name[i] = l->q.name;
        out->lane_threads[i] = l->n_workers;
        out->lane_queue_cap[i] = l->q.cap;
        out->lane_queue_cap_bytes[i] = l->q.cap_bytes;
        rf__lane_depth(&l->q, &out->lane_queue_len[i], &out->lane_queue_bytes[i]);
    }
}

static const char *s_not_ready(void *arg)
{
    s_server_t *s = arg;
    int ph = atomic_load(&s->phase);
    return ph == S_SERVING ? NULL : ph == S_STARTING ? "starting" : "stopping";
}

/* Send [envelope...][reply] on a PUSH socket (to the main thread); takes
 * the envelope frames (left closed) and the malloc'ed reply. */
static int s_send_back(void *push, s_job_t *j, void *reply, size_t len)
{
    zmq_msg_t body;
    if (zmq_msg_init_data(&body, reply, len, s_free_buf, NULL) != 0) {
        free(reply);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < j->n_env && rc >= 0; i++) {
        while ((rc = zmq_msg_send(&j->env[i], push, ZMQ_SNDMORE)) < 0 && errno == EINTR)
            ;
    }
    if (rc >= 0)
        while ((rc = zmq_msg_send(&body, push, 0)) < 0 && errno == EINTR)
            ;
    if (rc < 0)
        zmq_msg_close(&body);
    return rc < 0 ? -1 : 0;
}

static void *s_worker(void *arg)
{
    s_worker_arg_t self = *(s_worker_arg_t *)arg;
    free(arg);
    s_server_t *srv = self.srv;
    s_job_t *j;
    while ((j = rf__lane_pop(&self.lane->q)) != NULL) {
        size_t len = 0;
        rf__ops_handle(srv->ops, zmq_msg_data(&j->payload), zmq_msg_size(&j->payload), j->scanned, j->received_ms,
                       self.w);
        void *reply = rf__mp_writer_take(self.w, &len);
        /* Every path that forwards no reply gives the request back to
         * in_flight here (the main thread counts down only what it gets). */
        if (!reply) {
            rf__log(RF_LOG_ERROR, "%s worker %d: reply lost: out of memory", self.lane->q.name, self.index);
            atomic_fetch_sub(&srv->in_flight, 1);
        } else if (s_send_back(self.push, j, reply, len) != 0) {
            rf__log(RF_LOG_ERROR, "%s worker %d: reply lost: %s", self.lane->q.name, self.index, zmq_strerror(errno));
            atomic_fetch_sub(&srv->in_flight, 1);
        }
        s_job_free(j);
    }
    rf__mp_writer_destroy(&self.w);
    if (self.push)
        zmq_close(self.push);
    return NULL;
}

/* ZAP (RFC 27): allow a CURVE client whose public key is configured. */
static void *s_zap(void *arg)
{
    s_zap_arg_t self = *(s_zap_arg_t *)arg;
    free(arg);
    s_server_t *srv = self.srv;
    void *rep = self.rep;
    for (;;) {
        zmq_msg_t parts[7];
        int n = 0;
        bool more = true, dead = false;
        while (more) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, rep, 0) < 0) {
                zmq_msg_close(&m);
                if (errno == EINTR)
                    continue;
                dead = true;
                break;
            }
            more = zmq_msg_more(&m);
            if (n < 7)
                parts[n++] = m;
            else
                zmq_msg_close(&m);
        }
        if (dead) {
            for (int i = 0; i < n; i++)
                zmq_msg_close(&parts[i]);
            break; /* the context is shutting down */
        }
        bool ok = false;
        char address[64] = "?";
        if (n >= 6) {
            size_t al = zmq_msg_size(&parts[3]) < sizeof address - 1 ? zmq_msg_size(&parts[3]) : sizeof address - 1;
            memcpy(address, zmq_msg_data(&parts[3]), al);
            address[al] = '\0';
            bool curve = zmq_msg_size(&parts[5]) == 5 && memcmp(zmq_msg_data(&parts[5]), "CURVE", 5) == 0;
            if (curve && n == 7 && zmq_msg_size(&parts[6]) == 32)
                for (int32_t k = 0; k < srv->cfg->n_allowed && !ok; k++)
                    ok = memcmp(zmq_msg_data(&parts[6]), srv->cfg->allowed[k], 32) == 0;
        }
        const char *status = ok ? "200" : "400";
        const char *text = ok ? "OK" : "client key not allowed";
        zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
        if (n >= 2)
            zmq_send(rep, zmq_msg_data(&parts[1]), zmq_msg_size(&parts[1]), ZMQ_SNDMORE);
        else
            zmq_send(rep, "", 0, ZMQ_SNDMORE);
        zmq_send(rep, status, 3, ZMQ_SNDMORE);
        zmq_send(rep, text, strlen(text), ZMQ_SNDMORE);
        zmq_send(rep, ok ? "client" : "", ok ? 6 : 0, ZMQ_SNDMORE);
        zmq_send(rep, "", 0, 0);
        rf__log(ok ? RF_LOG_DEBUG : RF_LOG_INFO, "ZAP: %s client from %s", ok ? "accepted" : "refused", address);
        for (int i = 0; i < n; i++)
            zmq_msg_close(&parts[i]);
    }
    zmq_close(rep);
    return NULL;
}

/* Send [envelope...][""][body] on the ROUTER; the envelope frames and the
 * body are sent or closed. */
static void s_route_msg(void *router, zmq_msg_t *env, int n_env, zmq_msg_t *body)
{
    int i = 0;
    bool ok = true;
    for (; i < n_env && ok; i++)
        ok = zmq_msg_send(&env[i], router, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0;
    ok =
        ok && zmq_send(router, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 && zmq_msg_send(body, router, ZMQ_DONTWAIT) >= 0;
    if (!ok) {
        rf__log(RF_LOG_WARN, "a reply could not be sent (client gone or too slow): %s", zmq_strerror(errno));
        for (int k = i > 0 ? i - 1 : 0; k < n_env; k++)
            zmq_msg_close(&env[k]);
        zmq_msg_close(body);
    }
}

/* The same with a malloc'ed reply (taken). */
static void s_route(void *router, zmq_msg_t *env, int n_env, void *reply, size_t len)
{
    zmq_msg_t body;
    if (zmq_msg_init_data(&body, reply, len, s_free_buf, NULL) != 0) {
        free(reply);
        for (int i = 0; i < n_env; i++)
            zmq_msg_close(&env[i]);
        return;
    }
    s_route_msg(router, env, n_env, &body);
}

/* Reply at once from the main thread with what `w` holds. */
static void s_reply_now(void *router, zmq_msg_t *env, int n_env, rf__mp_writer_t *w)
{
    size_t len = 0;
    void *reply = rf__mp_writer_take(w, &len);
    if (!reply) {
        for (int i = 0; i < n_env; i++)
            zmq_msg_close(&env[i]);
        return;
    }
    s_route(router, env, n_env, reply, len);
}

/* An error reply for a request that never reaches a lane; `frames[0..n)`
 * are closed or sent (the envelope, routed by what there is). */
static void s_refuse(s_server_t *s, zmq_msg_t *frames, int n, int delim, rf_status code, const char *message)
{
    int n_env = delim >= 1 && delim <= S_ENV_MAX ? delim : 1;
    rf__ops_note_error(s->ops, code);
    rf__mp_writer_reset(s->w);
    rf__mp_error_reply_raw(s->w, NULL, 0, code, message, "");
    for (int i = n_env; i < n; i++)
        zmq_msg_close(&frames[i]);
    s_reply_now(s->router, frames, n_env, s->w);
}

/* Read every frame of one message: up to S_ENV_MAX + 2 kept, the rest
 * closed (*overflow). Returns the frames kept; *delim: the first empty
 * frame after the first, or -1. */
static int s_read_frames(void *router, zmq_msg_t *frames, int *delim, bool *overflow)
{
    int n = 0;
    bool more = true;
    *delim = -1;
    *overflow = false;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, router, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        if (n < S_ENV_MAX + 2) {
            if (*delim < 0 && n > 0 && zmq_msg_size(&m) == 0)
                *delim = n;
            frames[n++] = m;
        } else {
            *overflow = true;
            zmq_msg_close(&m);
        }
    }
    return n;
}

/* Put a well-framed request on its lane (or answer it now): small ones are
 * pre-scanned here, once, to pick the lane and to refuse malformed bytes;
 * larger ones go to the solver lane unscanned (the worker scans them). */
static void s_enqueue(s_server_t *s, s_job_t *j)
{
    const void *data = zmq_msg_data(&j->payload);
    size_t len = zmq_msg_size(&j->payload);
    rf__mp_scan_t scan;
    memset(&scan, 0, sizeof scan);
    int lane = S_SOLVER;
    rf_error_t err;
    rf_error_clear(&err);
    if ((int64_t)len <= s->cfg->big_message_bytes) {
        if (rf__mp_prescan(data, len, rf__ops_mp_limits(s->ops), &scan, &err) != RF_OK) {
            /* Malformed: the worker would refuse it the same way; answer now. */
            rf__ops_note_error(s->ops, err.code);
            rf__mp_writer_reset(s->w);
            rf__mp_error_reply(s->w, NULL, err.code, err.message, err.path);
            int n_env = j->n_env;
            j->n_env = 0;
            s_reply_now(s->router, j->env, n_env, s->w);
            s_job_free(j);
            return;
        }
        j->scanned = true;
        if (rf__ops_classify(&scan) != RF__CLASS_SOLVER)
            lane = S_FAST;
    }
    atomic_fetch_add(&s->in_flight, 1);
    if (rf__lane_push(&s->lanes[lane].q, j, (int64_t)len))
        return;
    atomic_fetch_sub(&s->in_flight, 1);
    /* An unscanned (big) request refused: scan it now, only for the `id` of
     * the reply (it is never decoded); a malformed one gets no id. */
    if (!j->scanned && rf__mp_prescan(data, len, rf__ops_mp_limits(s->ops), &scan, &err) != RF_OK)
        memset(&scan, 0, sizeof scan);
    rf__ops_busy(s->ops, data, &scan, lane, s->lanes[lane].q.name, s->w);
    int n_env = j->n_env;
    j->n_env = 0;
    s_reply_now(s->router, j->env, n_env, s->w);
    s_job_free(j);
}

/* Read one request (all its frames) from the ROUTER and dispatch it:
 * [envelope...][""][payload]. */
static void s_on_request(s_server_t *s)
{
    zmq_msg_t frames[S_ENV_MAX + 2];
    int delim = -1;
    bool overflow = false;
    int n = s_read_frames(s->router, frames, &delim, &overflow);
    double now = rf_now_ms();
    if (n < 1)
        return;
    if (delim < 1 || delim > S_ENV_MAX || n != delim + 2 || overflow) {
        rf__log(RF_LOG_DEBUG, "request with %d frames refused", n);
        s_refuse(s, frames, n, delim, RF_EPARSE,
                 "a request is an empty delimiter frame then one payload frame (use REQ, or DEALER sending an "
                 "empty frame first)");
        return;
    }
    s_job_t *j = calloc(1, sizeof *j);
    if (!j) {
        rf__log(RF_LOG_ERROR, "a request refused: out of memory");
        s_refuse(s, frames, n, delim, RF_ENOMEM, "out of memory");
        return;
    }
    for (int i = 0; i < delim; i++)
        j->env[i] = frames[i];
    j->n_env = delim;
    zmq_msg_close(&frames[delim]);
    j->payload = frames[delim + 1];
    j->received_ms = now;
    s_enqueue(s, j);
}

/* Forward one worker reply [envelope...][reply] to the ROUTER. */
static void s_on_reply(s_server_t *s, void *pull, void *router)
{
    zmq_msg_t frames[S_ENV_MAX + 1];
    int n = 0;
    bool more = true;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, pull, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        if (n < S_ENV_MAX + 1)
            frames[n++] = m;
        else
            zmq_msg_close(&m);
    }
    if (n == 0)
        return;
    atomic_fetch_sub(&s->in_flight, 1);
    if (n < 2) {
        zmq_msg_close(&frames[0]);
        return;
    }
    /* the worker's reply frame goes on as it is: no copy */
    s_route_msg(router, frames, n - 1, &frames[n - 1]);
}

/* Block SIGTERM/SIGINT in every thread started from now on (ZeroMQ's,
 * the workers', libmicrohttpd's): only the main thread takes them, through
 * the self-pipe. -1 when the pipe cannot be made. */
static int s_signals(s_server_t *s)
{
    if (pipe(s_sig_pipe) != 0) {
        rf__log(RF_LOG_ERROR, "pipe: %s", strerror(errno));
        return -1;
    }
    fcntl(s_sig_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(s_sig_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &s->old_mask);
    return 0;
}

/* Bind the ZAP handler's socket and start its thread (CURVE only): the
 * exit status on failure (2), else 0. */
static int s_start_zap(s_server_t *s)
{
    /* Bound here, before the ROUTER: with nothing bound on the ZAP endpoint
     * libzmq completes CURVE handshakes without a key check. */
    s_zap_arg_t *za = malloc(sizeof *za);
    void *rep = zmq_socket(s->ctx, ZMQ_REP);
    if (!za || !rep || zmq_bind(rep, S_ZAP_ENDPOINT) != 0) {
        rf__log(RF_LOG_ERROR, "ZAP handler: cannot bind %s: %s", S_ZAP_ENDPOINT,
                za ? zmq_strerror(errno) : "out of memory");
        free(za);
        if (rep)
            zmq_close(rep);
        return 2;
    }
    *za = (s_zap_arg_t){s, rep};
    /* The thread takes `za` and the socket. */
    int e = pthread_create(&s->zap, NULL, s_zap, za);
    if (e != 0) {
        rf__log(RF_LOG_ERROR, "ZAP handler: cannot start: %s", strerror(e));
        free(za);
        zmq_close(rep);
        return 2;
    }
    s->zap_started = true;
    return 0;
}

/* One worker of `lane`, with its PUSH socket and writer: 0, or -1 (logged). */
static int s_start_worker(s_server_t *s, s_lane_t *lane, int k)
{
    int linger = -1, e = 0;
    s_worker_arg_t *wa = malloc(sizeof *wa);
    void *push = wa ? zmq_socket(s->ctx, ZMQ_PUSH) : NULL;
    rf__mp_writer_t *ww = push ? rf__mp_writer_new() : NULL;
    bool ok = ww && zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger) == 0 &&
              zmq_connect(push, S_REPLIES_ENDPOINT) == 0;
    const char *why = ok ? NULL : push && ww ? zmq_strerror(errno) : "out of memory";
    if (ok) {
        *wa = (s_worker_arg_t){s, lane, k, push, ww};
        /* The worker takes `wa`, its socket and its writer. */
        if ((e = pthread_create(&lane->workers[lane->n_workers], NULL, s_worker, wa)) == 0) {
            lane->n_workers++;
            return 0;
        }
        why = strerror(e);
    }
    rf__log(RF_LOG_ERROR, "%s worker %d: cannot start: %s", lane->q.name, k, why);
    rf__mp_writer_destroy(&ww);
    if (push)
        zmq_close(push);
    free(wa);
    return -1;
}

/* The lanes, the replies' PULL socket, and every worker: 0 or 3. */
static int s_start_lanes(s_server_t *s)
{
    const rf__server_config_t *cfg = s->cfg;
    int32_t budget = rf__ops_budget(s->ops);
    int32_t want[S_N_LANES] = {cfg->fast_threads > 0 ? cfg->fast_threads : budget,
                               cfg->solver_workers > 0 ? cfg->solver_workers : 1};
    if (want[S_FAST] < 1) {
        /* A lane without workers would never answer, nor drain at SIGTERM. */
        rf__log(RF_LOG_ERROR, "the fast lane has no workers (fast_threads %d, solver budget %d)",
                (int)cfg->fast_threads, (int)budget);
        return 3;
    }
    static const char *const names[S_N_LANES] = {"fast", "solver"};
    int32_t caps[S_N_LANES] = {cfg->fast_queue, cfg->solver_queue};
    int64_t bytes[S_N_LANES] = {cfg->fast_queue_bytes, cfg->solver_queue_bytes};
    for (int l = 0; l < S_N_LANES; l++) {
        s_lane_t *lane = &s->lanes[l];
        lane->workers = calloc((size_t)want[l], sizeof *lane->workers);
        if (!lane->workers || rf__lane_init(&lane->q, names[l], caps[l], bytes[l]) != 0) {
            rf__log(RF_LOG_ERROR, "out of memory");
            return 3;
        }
        s->lanes_ready = l + 1;
    }
    s->pull = zmq_socket(s->ctx, ZMQ_PULL);
    int hwm = 0; /* the lanes bound what is in flight */
    if (!s->pull || zmq_setsockopt(s->pull, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        zmq_bind(s->pull, S_REPLIES_ENDPOINT) != 0) {
        rf__log(RF_LOG_ERROR, "replies socket: %s", zmq_strerror(errno));
        return 3;
    }
    for (int l = 0; l < S_N_LANES; l++)
        for (int32_t k = 0; k < want[l]; k++)
            if (s_start_worker(s, &s->lanes[l], (int)k) != 0)
                return 3;
    return 0;
}

/* The ROUTER with its options and every endpoint bound: 0, 2 or 3. */
static int s_open_router(s_server_t *s)
{
    const rf__server_config_t *cfg = s->cfg;
    s->router = zmq_socket(s->ctx, ZMQ_ROUTER);
    if (!s->router) {
        rf__log(RF_LOG_ERROR, "zmq_socket: %s", zmq_strerror(errno));
        return 3;
    }
    int64_t maxmsg = cfg->ops.max_message_bytes;
    int linger = 2000, qhwm = 100000, one = 1;
    zmq_setsockopt(s->router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    zmq_setsockopt(s->router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s->router, ZMQ_SNDHWM, &qhwm, sizeof qhwm);
    zmq_setsockopt(s->router, ZMQ_RCVHWM, &qhwm, sizeof qhwm);
    if (cfg->curve) {
        if (zmq_setsockopt(s->router, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
            zmq_setsockopt(s->router, ZMQ_CURVE_SECRETKEY, cfg->curve_secret, RF__Z85_KEY_LEN) != 0 ||
            zmq_setsockopt(s->router, ZMQ_ZAP_DOMAIN, "rackfit", 7) != 0) {
            rf__log(RF_LOG_ERROR, "CURVE setup failed: %s", zmq_strerror(errno));
            return 2;
        }
#ifdef ZMQ_ZAP_ENFORCE_DOMAIN
        /* RFC 27 strictly (a draft option: a libzmq built without drafts
         * refuses it). The key check itself is the ZAP handler bound above,
         * so a refusal here is a warning, not a reason to stop. */
        if (zmq_setsockopt(s->router, ZMQ_ZAP_ENFORCE_DOMAIN, &one, sizeof one) != 0)
            rf__log(RF_LOG_WARN, "ZMQ_ZAP_ENFORCE_DOMAIN not set: %s", zmq_strerror(errno));
#endif
    }
    for (int32_t i = 0; i < cfg->n_listen; i++) {
        if (zmq_bind(s->router, cfg->listen[i]) != 0) {
            rf__log(RF_LOG_ERROR, "cannot listen on %s: %s", cfg->listen[i], zmq_strerror(errno));
            return 2;
        }
        char actual[256];
        size_t al = sizeof actual;
        if (zmq_getsockopt(s->router, ZMQ_LAST_ENDPOINT, actual, &al) != 0)
            snprintf(actual, sizeof actual, "%s", cfg->listen[i]);
        rf__log(RF_LOG_INFO, "listening on %s (%s)", actual, cfg->curve ? "CURVE" : "plain");
    }
    return 0;
}

/* /metrics, /healthz, /readyz when --metrics-listen is given: 0 or 2. */
static int s_start_httpd(s_server_t *s)
{
    if (!s->cfg->metrics_listen)
        return 0;
    rf__httpd_config_t hc = {.metrics = rf__ops_metrics(s->ops), .not_ready = s_not_ready, .arg = s};
    rf_error_t err;
    rf_error_clear(&err);
    if (rf__httpd_start(s->cfg->metrics_listen, &hc, &s->httpd, &err) != RF_OK) {
        rf__log(RF_LOG_ERROR, "--metrics-listen: %s", err.message);
        return 2;
    }
    rf__log(RF_LOG_INFO, "metrics on http://%s/metrics (port %d), /healthz, /readyz", s->cfg->metrics_listen,
            rf__httpd_port(s->httpd));
    return 0;
}

/* Serve until a signal, then drain what is in flight: 0, or 3. */
static int s_loop(s_server_t *s)
{
    bool stopping = false;
    while (!stopping || atomic_load(&s->in_flight) > 0) {
        zmq_pollitem_t items[3] = {
            {s->pull, 0, ZMQ_POLLIN, 0}, {NULL, s_sig_pipe[0], ZMQ_POLLIN, 0}, {s->router, 0, ZMQ_POLLIN, 0}};
        int n_items = stopping ? 2 : 3;
        int rc = zmq_poll(items, n_items, stopping ? 100 : 1000);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            rf__log(RF_LOG_ERROR, "zmq_poll: %s", zmq_strerror(errno));
            return 3;
        }
        if (items[1].revents & ZMQ_POLLIN) {
            unsigned char b;
            while (read(s_sig_pipe[0], &b, 1) == 1)
                ;
            if (!stopping)
                rf__log(RF_LOG_INFO, "signal received: no new requests; finishing %d in flight",
                        atomic_load(&s->in_flight));
            stopping = true;
            atomic_store(&s->phase, S_STOPPING);
        }
        for (int k = 0; k < 256 && (items[0].revents & ZMQ_POLLIN); k++) {
            int ev = 0;
            size_t el = sizeof ev;
            s_on_reply(s, s->pull, s->router);
            if (zmq_getsockopt(s->pull, ZMQ_EVENTS, &ev, &el) != 0 || !(ev & ZMQ_POLLIN))
                break;
        }
        for (int k = 0; !stopping && k < 256 && (items[2].revents & ZMQ_POLLIN); k++) {
            int ev = 0;
            size_t el = sizeof ev;
            if (zmq_getsockopt(s->router, ZMQ_EVENTS, &ev, &el) != 0 || !(ev & ZMQ_POLLIN))
                break;
            s_on_request(s);
        }
    }
    return 0;
}

/* Close the lanes, join the workers, close sockets and the context, free. */
static void s_shutdown(s_server_t *s)
{
    rf__httpd_stop(&s->httpd);
    for (int l = 0; l < s->lanes_ready; l++)
        rf__lane_close(&s->lanes[l].q);
    for (int l = 0; l < S_N_LANES; l++)
        for (int32_t k = 0; k < s->lanes[l].n_workers; k++)
            pthread_join(s->lanes[l].workers[k], NULL);
    rf__mp_writer_destroy(&s->w);
    if (s->router)
        zmq_close(s->router);
    if (s->pull)
        zmq_close(s->pull);
    if (s->ctx)
        zmq_ctx_shutdown(s->ctx);
    if (s->zap_started)
        pthread_join(s->zap, NULL);
    if (s->ctx)
        zmq_ctx_term(s->ctx);
    for (int l = 0; l < S_N_LANES; l++) {
        rf__lane_fini(&s->lanes[l].q, s_job_free);
        free(s->lanes[l].workers);
    }
    rf__ops_destroy(&s->ops);
    if (s_sig_pipe[0] >= 0) {
        close(s_sig_pipe[0]);
        close(s_sig_pipe[1]);
        s_sig_pipe[0] = s_sig_pipe[1] = -1;
    }
}

/* Everything the threads need before the ROUTER opens, with signals
 * blocked in the threads it starts: 0, 2 or 3. */
static int s_start(s_server_t *s)
{
    const rf__server_config_t *cfg = s->cfg;
    for (int32_t i = 0; i < cfg->n_listen; i++)
        if (!cfg->curve && !cfg->allow_insecure && !s_is_loopback(cfg->listen[i])) {
            rf__log(RF_LOG_ERROR,
                    "refusing to listen in plain mode on %s: not loopback (configure CURVE keys, or pass "
                    "--allow-insecure)",
                    cfg->listen[i]);
            return 2;
        }
    if (cfg->curve && cfg->n_allowed == 0)
        rf__log(RF_LOG_WARN, "CURVE is on but no client key is allowed: every client will be refused");
    if (!(s->ops = rf__ops_new(&cfg->ops)) || !(s->w = rf__mp_writer_new())) {
        rf__log(RF_LOG_ERROR, "out of memory");
        return 3;
    }
    rf__ops_set_lane_info(s->ops, s_lane_info, s);
    if (s_signals(s) != 0)
        return 3;
    int rc = 0;
    if (!(s->ctx = zmq_ctx_new())) {
        rf__log(RF_LOG_ERROR, "zmq_ctx_new: %s", zmq_strerror(errno));
        rc = 3;
    }
    if (rc == 0 && cfg->curve)
        rc = s_start_zap(s);
    if (rc == 0)
        rc = s_start_lanes(s);
    if (rc == 0)
        rc = s_start_httpd(s);
    pthread_sigmask(SIG_SETMASK, &s->old_mask, NULL);
    return rc;
}

/* ------------------------------------------------------------------ interface */

int rf__server_keygen(void)
{
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
        fprintf(stderr, "rackfitd: --keygen: %s (is libzmq built with CURVE?)\n", zmq_strerror(errno));
        return 3;
    }
    printf("# rackfitd CURVE key pair. Keep the secret line private.\n"
           "public = %s\nsecret = %s\n",
           pub, sec);
    memset(sec, 0, sizeof sec);
    return fflush(stdout) == 0 ? 0 : 3;
}

int rf__server_run(const rf__server_config_t *cfg)
{
    s_server_t srv;
    memset(&srv, 0, sizeof srv);
    srv.cfg = cfg;
    atomic_init(&srv.in_flight, 0);
    atomic_init(&srv.phase, S_STARTING);
    rf__log_threshold = cfg->log_level;
    rf__log_program("rackfitd");
    int rc = s_start(&srv);
    if (rc == 0)
        rc = s_open_router(&srv);
    if (rc == 0) {
        rf__log(RF_LOG_INFO,
                "rackfitd %s ready: %d usable cores, solver budget %d threads, fast lane %d workers (queue %d "
                "requests, %lld bytes), solver lane %d workers (queue %d requests, %lld bytes)",
                RACKFIT_VERSION, (int)rf__ops_cores(srv.ops), (int)rf__ops_budget(srv.ops),
                (int)srv.lanes[S_FAST].n_workers, (int)cfg->fast_queue, (long long)cfg->fast_queue_bytes,
                (int)srv.lanes[S_SOLVER].n_workers, (int)cfg->solver_queue, (long long)cfg->solver_queue_bytes);
        atomic_store(&srv.phase, S_SERVING);
        rc = s_loop(&srv);
        if (rc == 0)
            rf__log(RF_LOG_INFO, "stopped cleanly");
    }
    s_shutdown(&srv);
    return rc;
}
