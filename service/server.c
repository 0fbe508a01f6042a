/* service/server.c: rackfitd's transport (service/server.h), one of the two
 * files that include <zmq.h>.
 *
 * Threads and sockets (a ZeroMQ socket belongs to one thread):
 * - the main thread owns the ROUTER (every --listen endpoint) and a PULL
 *   socket; it reads requests, pre-scans them (small ones), puts them on a
 *   lane's bounded queue or answers `busy` at once, and forwards the replies
 *   the workers PUSH back to it, so it alone writes to the ROUTER;
 * - lanes: `fast` (greedy solves and every other op) and `solver` (ilp and
 *   auto solves, and requests larger than big_message_bytes), each with its
 *   own workers and queue, so a slow solve never holds up small requests;
 * - with CURVE, a ZAP handler thread (RFC 27) on inproc://zeromq.zap.01
 *   accepts only the configured client keys; others get no connection.
 *   Its socket is bound before the ROUTER binds, and the server does not
 *   start without it (libzmq admits CURVE clients unchecked when nothing is
 *   bound there).
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
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"
#include "ops.h"
#include "rackfit/rackfit.h"

#define S_REPLIES_ENDPOINT "inproc://rackfitd-replies"
#define S_ZAP_ENDPOINT     "inproc://zeromq.zap.01"
#define S_N_LANES          2
#define S_ENV_MAX          4 /* routing frames before the delimiter: identity, REQ_CORRELATE's id, ... */

/* --------------------------------------------------------- data structures */

typedef struct {
    zmq_msg_t env[S_ENV_MAX]; /* the routing envelope, echoed on the reply */
    int n_env;
    zmq_msg_t payload;
    double received_ms;
} s_job_t;

typedef struct {
    const char *name;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    s_job_t **ring;
    int32_t cap, head, len;
    bool closed;
    int32_t n_workers;
    pthread_t *workers;
} s_lane_t;

typedef struct {
    const rf__server_config_t *cfg;
    void *ctx;
    rf__ops_t *ops;
    s_lane_t lanes[S_N_LANES];
    atomic_int in_flight;
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

static void s_job_free(s_job_t *j)
{
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

static bool s_lane_push(s_lane_t *l, s_job_t *j)
{
    pthread_mutex_lock(&l->mu);
    bool ok = !l->closed && l->len < l->cap;
    if (ok) {
        l->ring[(l->head + l->len) % l->cap] = j;
        l->len++;
        pthread_cond_signal(&l->cv);
    }
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* NULL when the lane is closed and empty. */
static s_job_t *s_lane_pop(s_lane_t *l)
{
    pthread_mutex_lock(&l->mu);
    while (l->len == 0 && !l->closed)
        pthread_cond_wait(&l->cv, &l->mu);
    s_job_t *j = NULL;
    if (l->len > 0) {
        j = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
        l->len--;
    }
    pthread_mutex_unlock(&l->mu);
    return j;
}

static void s_lane_info(void *arg, rf__lane_info_t *out)
{
    s_server_t *s = arg;
    out->lanes = S_N_LANES;
    for (int i = 0; i < S_N_LANES; i++) {
        s_lane_t *l = &s->lanes[i];
        out->lane_name[i] = l->name;
        out->lane_threads[i] = l->n_workers;
        out->lane_queue_cap[i] = l->cap;
        pthread_mutex_lock(&l->mu);
        out->lane_queue_len[i] = l->len;
        pthread_mutex_unlock(&l->mu);
    }
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
    s_worker_arg_t *wa = &self;
    s_server_t *srv = wa->srv;
    void *push = wa->push;
    rf__mp_writer_t *w = wa->w;
    s_job_t *j;
    while ((j = s_lane_pop(wa->lane)) != NULL) {
        size_t len = 0;
        rf__ops_handle(srv->ops, zmq_msg_data(&j->payload), zmq_msg_size(&j->payload), j->received_ms, w);
        void *reply = rf__mp_writer_take(w, &len);
        /* Every path that forwards no reply gives the request back to
         * in_flight here (the main thread counts down only what it gets). */
        if (!reply) {
            rf__log(RF_LOG_ERROR, "%s worker %d: reply lost: out of memory", wa->lane->name, wa->index);
            atomic_fetch_sub(&srv->in_flight, 1);
        } else if (s_send_back(push, j, reply, len) != 0) {
            rf__log(RF_LOG_ERROR, "%s worker %d: reply lost: %s", wa->lane->name, wa->index, zmq_strerror(errno));
            atomic_fetch_sub(&srv->in_flight, 1);
        }
        s_job_free(j);
    }
    rf__mp_writer_destroy(&w);
    if (push)
        zmq_close(push);
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

/* Send [envelope...][""][reply] on the ROUTER (takes the reply; the
 * envelope frames are sent or closed). */
static void s_route(void *router, zmq_msg_t *env, int n_env, void *reply, size_t len)
{
    zmq_msg_t body;
    int i = 0;
    if (zmq_msg_init_data(&body, reply, len, s_free_buf, NULL) != 0) {
        free(reply);
        for (; i < n_env; i++)
            zmq_msg_close(&env[i]);
        return;
    }
    bool ok = true;
    for (; i < n_env && ok; i++)
        ok = zmq_msg_send(&env[i], router, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0;
    ok = ok && zmq_send(router, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
         zmq_msg_send(&body, router, ZMQ_DONTWAIT) >= 0;
    if (!ok) {
        rf__log(RF_LOG_WARN, "a reply could not be sent (client gone or too slow): %s", zmq_strerror(errno));
        for (int k = i > 0 ? i - 1 : 0; k < n_env; k++)
            zmq_msg_close(&env[k]);
        zmq_msg_close(&body);
    }
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

/* Read one request (all its frames) from the ROUTER and dispatch it:
 * [envelope...][""][payload]. */
static void s_on_request(s_server_t *s, void *router, rf__mp_writer_t *w)
{
    s_job_t *j = calloc(1, sizeof *j);
    zmq_msg_t frames[S_ENV_MAX + 2];
    int n = 0, delim = -1;
    bool more = true, overflow = false;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, router, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        if (n < S_ENV_MAX + 2) {
            if (delim < 0 && n > 0 && zmq_msg_size(&m) == 0)
                delim = n;
            frames[n++] = m;
        } else {
            overflow = true;
            zmq_msg_close(&m);
        }
    }
    double now = rf_now_ms();
    if (n < 1)
        return;
    if (!j) {
        /* Out of memory: still one reply, routed by the envelope. */
        int n_env = delim >= 1 && delim <= S_ENV_MAX ? delim : 1;
        rf__ops_note_error(s->ops);
        rf__mp_writer_reset(w);
        rf__mp_error_reply_raw(w, NULL, 0, RF_ENOMEM, "out of memory", "");
        rf__log(RF_LOG_ERROR, "a request refused: out of memory");
        for (int i = n_env; i < n; i++)
            zmq_msg_close(&frames[i]);
        s_reply_now(router, frames, n_env, w);
        return;
    }
    if (delim < 1 || delim > S_ENV_MAX || n != delim + 2 || overflow) {
        /* Not [envelope][""][payload]: an error reply, routed by what we have. */
        int n_env = delim >= 1 && delim <= S_ENV_MAX ? delim : 1;
        rf__ops_note_error(s->ops);
        rf__mp_writer_reset(w);
        rf__mp_error_reply_raw(w, NULL, 0, RF_EPARSE,
                               "a request is an empty delimiter frame then one payload frame (use REQ, or DEALER "
                               "sending an empty frame first)",
                               "");
        rf__log(RF_LOG_DEBUG, "request with %d frames refused", n);
        for (int i = n_env; i < n; i++)
            zmq_msg_close(&frames[i]);
        s_reply_now(router, frames, n_env, w);
        free(j);
        return;
    }
    for (int i = 0; i < delim; i++)
        j->env[i] = frames[i];
    j->n_env = delim;
    zmq_msg_close(&frames[delim]);
    j->payload = frames[delim + 1];
    j->received_ms = now;
    size_t len = zmq_msg_size(&j->payload);
    rf__mp_scan_t scan;
    memset(&scan, 0, sizeof scan);
    s_lane_t *lane = &s->lanes[1];
    if ((int64_t)len <= s->cfg->big_message_bytes) {
        rf__mp_limits_t lim;
        rf__mp_limits_from(&lim, &s->cfg->ops.limits);
        lim.max_bytes = s->cfg->ops.max_message_bytes;
        lim.max_elements = s->cfg->ops.max_elements;
        rf_error_t err;
        rf_error_clear(&err);
        if (rf__mp_prescan(zmq_msg_data(&j->payload), len, &lim, &scan, &err) != RF_OK) {
            /* Malformed: the worker would refuse it the same way; answer now. */
            rf__ops_note_error(s->ops);
            rf__mp_writer_reset(w);
            rf__mp_error_reply(w, NULL, err.code, err.message, err.path);
            int n_env = j->n_env;
            j->n_env = 0;
            s_reply_now(router, j->env, n_env, w);
            s_job_free(j);
            return;
        }
        if (rf__ops_classify(&scan) != RF__CLASS_SOLVER)
            lane = &s->lanes[0];
    }
    bool scanned = (int64_t)len <= s->cfg->big_message_bytes;
    atomic_fetch_add(&s->in_flight, 1);
    if (!s_lane_push(lane, j)) {
        atomic_fetch_sub(&s->in_flight, 1);
        if (!scanned) {
            /* Pre-scan it now (allocation-free) for the `id` of the reply;
             * a malformed one is answered `busy` without an id. */
            rf__mp_limits_t lim;
            rf__mp_limits_from(&lim, &s->cfg->ops.limits);
            lim.max_bytes = s->cfg->ops.max_message_bytes;
            lim.max_elements = s->cfg->ops.max_elements;
            rf_error_t err;
            rf_error_clear(&err);
            if (rf__mp_prescan(zmq_msg_data(&j->payload), len, &lim, &scan, &err) != RF_OK)
                memset(&scan, 0, sizeof scan);
        }
        rf__ops_busy(s->ops, zmq_msg_data(&j->payload), &scan, lane->name, w);
        int n_env = j->n_env;
        j->n_env = 0;
        s_reply_now(router, j->env, n_env, w);
        s_job_free(j);
    }
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
    size_t len = zmq_msg_size(&frames[n - 1]);
    void *copy = malloc(len ? len : 1);
    if (copy)
        memcpy(copy, zmq_msg_data(&frames[n - 1]), len);
    zmq_msg_close(&frames[n - 1]);
    if (!copy) {
        for (int i = 0; i < n - 1; i++)
            zmq_msg_close(&frames[i]);
        return;
    }
    s_route(router, frames, n - 1, copy, len);
}

static int s_lane_init(s_lane_t *l, const char *name, int32_t cap, int32_t workers)
{
    memset(l, 0, sizeof *l);
    l->name = name;
    l->cap = cap;
    l->n_workers = workers;
    l->ring = calloc((size_t)cap, sizeof *l->ring);
    l->workers = calloc((size_t)workers, sizeof *l->workers);
    if (!l->ring || !l->workers)
        return -1;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    return 0;
}

static void s_lane_close(s_lane_t *l)
{
    pthread_mutex_lock(&l->mu);
    l->closed = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
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
    rf__log_threshold = cfg->log_level;
    rf__log_program("rackfitd");
    int exit_code = 0;
    void *router = NULL, *pull = NULL;
    pthread_t zap;
    bool zap_started = false;
    int lanes_started = 0;
    rf__mp_writer_t *w = NULL;

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

    srv.ops = rf__ops_new(&cfg->ops);
    if (!srv.ops) {
        rf__log(RF_LOG_ERROR, "out of memory");
        return 3;
    }
    int32_t budget = rf__ops_budget(srv.ops);
    int32_t fast = cfg->fast_threads > 0 ? cfg->fast_threads : budget;
    int32_t slow = cfg->solver_workers > 0 ? cfg->solver_workers : 1;
    if (fast < 1) {
        /* A lane without workers would never answer, nor drain at SIGTERM. */
        rf__log(RF_LOG_ERROR, "the fast lane has no workers (fast_threads %d, solver budget %d)",
                (int)cfg->fast_threads, (int)budget);
        exit_code = 3;
        goto done;
    }
    if (s_lane_init(&srv.lanes[0], "fast", cfg->fast_queue, fast) != 0 ||
        s_lane_init(&srv.lanes[1], "solver", cfg->solver_queue, slow) != 0 || !(w = rf__mp_writer_new())) {
        rf__log(RF_LOG_ERROR, "out of memory");
        exit_code = 3;
        goto done;
    }
    rf__ops_set_lane_info(srv.ops, s_lane_info, &srv);

    if (pipe(s_sig_pipe) != 0) {
        rf__log(RF_LOG_ERROR, "pipe: %s", strerror(errno));
        exit_code = 3;
        goto done;
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
    /* Only the main thread takes the signals: block them in every thread it
     * starts (ZeroMQ's own included). */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);

    srv.ctx = zmq_ctx_new();
    if (!srv.ctx) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        rf__log(RF_LOG_ERROR, "zmq_ctx_new: %s", zmq_strerror(errno));
        exit_code = 3;
        goto done;
    }
    if (cfg->curve) {
        /* Bound here, before the ROUTER: with nothing bound on the ZAP
         * endpoint libzmq completes CURVE handshakes without a key check. */
        s_zap_arg_t *za = malloc(sizeof *za);
        void *rep = zmq_socket(srv.ctx, ZMQ_REP);
        if (!za || !rep || zmq_bind(rep, S_ZAP_ENDPOINT) != 0) {
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            rf__log(RF_LOG_ERROR, "ZAP handler: cannot bind %s: %s", S_ZAP_ENDPOINT,
                    za ? zmq_strerror(errno) : "out of memory");
            free(za);
            if (rep)
                zmq_close(rep);
            exit_code = 2;
            goto done;
        }
        *za = (s_zap_arg_t){&srv, rep};
        /* The thread takes `za` and the socket. */
        int e = pthread_create(&zap, NULL, s_zap, za);
        if (e != 0) {
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            rf__log(RF_LOG_ERROR, "ZAP handler: cannot start: %s", strerror(e));
            free(za);
            zmq_close(rep);
            exit_code = 2;
            goto done;
        }
        zap_started = true;
    }
    pull = zmq_socket(srv.ctx, ZMQ_PULL);
    int hwm = 0; /* the lanes bound what is in flight */
    if (!pull || zmq_setsockopt(pull, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 || zmq_bind(pull, S_REPLIES_ENDPOINT) != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        rf__log(RF_LOG_ERROR, "replies socket: %s", zmq_strerror(errno));
        exit_code = 3;
        goto done;
    }
    for (int l = 0; l < S_N_LANES && exit_code == 0; l++) {
        s_lane_t *lane = &srv.lanes[l];
        int32_t want = lane->n_workers;
        lane->n_workers = 0; /* the workers started: those to join */
        lanes_started++;
        for (int32_t k = 0; k < want; k++) {
            int linger = -1, e = 0;
            s_worker_arg_t *wa = malloc(sizeof *wa);
            void *push = wa ? zmq_socket(srv.ctx, ZMQ_PUSH) : NULL;
            rf__mp_writer_t *ww = push ? rf__mp_writer_new() : NULL;
            bool ok = ww && zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger) == 0 &&
                      zmq_connect(push, S_REPLIES_ENDPOINT) == 0;
            const char *why = ok ? NULL : push && ww ? zmq_strerror(errno) : "out of memory";
            if (ok) {
                *wa = (s_worker_arg_t){&srv, lane, (int)k, push, ww};
                /* The worker takes `wa`, its socket and its writer. */
                if ((e = pthread_create(&lane->workers[k], NULL, s_worker, wa)) == 0) {
                    lane->n_workers++;
                    continue;
                }
                why = strerror(e);
            }
            rf__log(RF_LOG_ERROR, "%s worker %d: cannot start: %s", lane->name, (int)k, why);
            rf__mp_writer_destroy(&ww);
            if (push)
                zmq_close(push);
            free(wa);
            exit_code = 3;
            break;
        }
    }
    if (exit_code != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        goto done;
    }
    router = zmq_socket(srv.ctx, ZMQ_ROUTER);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!router) {
        rf__log(RF_LOG_ERROR, "zmq_socket: %s", zmq_strerror(errno));
        exit_code = 3;
        goto done;
    }
    int64_t maxmsg = cfg->ops.max_message_bytes;
    int linger = 2000, qhwm = 100000, one = 1;
    zmq_setsockopt(router, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg);
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(router, ZMQ_SNDHWM, &qhwm, sizeof qhwm);
    zmq_setsockopt(router, ZMQ_RCVHWM, &qhwm, sizeof qhwm);
    if (cfg->curve) {
        if (zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
            zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, cfg->curve_secret, RF__Z85_KEY_LEN) != 0 ||
            zmq_setsockopt(router, ZMQ_ZAP_DOMAIN, "rackfit", 7) != 0) {
            rf__log(RF_LOG_ERROR, "CURVE setup failed: %s", zmq_strerror(errno));
            exit_code = 2;
            goto done;
        }
#ifdef ZMQ_ZAP_ENFORCE_DOMAIN
        /* RFC 27 strictly (a draft option: a libzmq built without drafts
         * refuses it). The key check itself is the ZAP handler bound above,
         * so a refusal here is a warning, not a reason to stop. */
        if (zmq_setsockopt(router, ZMQ_ZAP_ENFORCE_DOMAIN, &one, sizeof one) != 0)
            rf__log(RF_LOG_WARN, "ZMQ_ZAP_ENFORCE_DOMAIN not set: %s", zmq_strerror(errno));
#endif
    }
    for (int32_t i = 0; i < cfg->n_listen; i++) {
        if (zmq_bind(router, cfg->listen[i]) != 0) {
            rf__log(RF_LOG_ERROR, "cannot listen on %s: %s", cfg->listen[i], zmq_strerror(errno));
            exit_code = 2;
            goto done;
        }
        char actual[256];
        size_t al = sizeof actual;
        if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, actual, &al) != 0)
            snprintf(actual, sizeof actual, "%s", cfg->listen[i]);
        rf__log(RF_LOG_INFO, "listening on %s (%s)", actual, cfg->curve ? "CURVE" : "plain");
    }
    rf__log(RF_LOG_INFO,
            "rackfitd %s ready: %d usable cores, solver budget %d threads, fast lane %d workers "
            "(queue %d), solver lane %d workers (queue %d)",
            RACKFIT_VERSION, (int)budget, (int)budget, (int)srv.lanes[0].n_workers, (int)cfg->fast_queue,
            (int)srv.lanes[1].n_workers, (int)cfg->solver_queue);

    bool stopping = false;
    while (!stopping || atomic_load(&srv.in_flight) > 0) {
        zmq_pollitem_t items[3] = {
            {pull, 0, ZMQ_POLLIN, 0}, {NULL, s_sig_pipe[0], ZMQ_POLLIN, 0}, {router, 0, ZMQ_POLLIN, 0}};
        int n_items = stopping ? 2 : 3;
        int rc = zmq_poll(items, n_items, stopping ? 100 : 1000);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            rf__log(RF_LOG_ERROR, "zmq_poll: %s", zmq_strerror(errno));
            exit_code = 3;
            break;
        }
        if (items[1].revents & ZMQ_POLLIN) {
            unsigned char b;
            while (read(s_sig_pipe[0], &b, 1) == 1)
                ;
            if (!stopping)
                rf__log(RF_LOG_INFO, "signal received: no new requests; finishing %d in flight",
                        atomic_load(&srv.in_flight));
            stopping = true;
        }
        for (int k = 0; k < 256 && (items[0].revents & ZMQ_POLLIN); k++) {
            int ev = 0;
            size_t el = sizeof ev;
            s_on_reply(&srv, pull, router);
            if (zmq_getsockopt(pull, ZMQ_EVENTS, &ev, &el) != 0 || !(ev & ZMQ_POLLIN))
                break;
        }
        if (!stopping && n_items == 3 && (items[2].revents & ZMQ_POLLIN)) {
            for (int k = 0; k < 256; k++) {
                int ev = 0;
                size_t el = sizeof ev;
                if (zmq_getsockopt(router, ZMQ_EVENTS, &ev, &el) != 0 || !(ev & ZMQ_POLLIN))
                    break;
                s_on_request(&srv, router, w);
            }
        }
    }
    if (exit_code == 0)
        rf__log(RF_LOG_INFO, "stopped cleanly");

done:
    for (int l = 0; l < lanes_started; l++)
        s_lane_close(&srv.lanes[l]);
    for (int l = 0; l < lanes_started; l++)
        for (int32_t k = 0; k < srv.lanes[l].n_workers; k++) {
            void *ret = NULL;
            pthread_join(srv.lanes[l].workers[k], &ret);
        }
    rf__mp_writer_destroy(&w);
    if (router)
        zmq_close(router);
    if (pull)
        zmq_close(pull);
    if (srv.ctx)
        zmq_ctx_shutdown(srv.ctx);
    if (zap_started)
        pthread_join(zap, NULL);
    if (srv.ctx)
        zmq_ctx_term(srv.ctx);
    for (int l = 0; l < S_N_LANES; l++) {
        s_lane_t *lane = &srv.lanes[l];
        for (int32_t k = 0; lane->ring && k < lane->len; k++)
            s_job_free(lane->ring[(lane->head + k) % lane->cap]);
        free(lane->ring);
        free(lane->workers);
        if (lane->ring || lane->cap) {
            pthread_mutex_destroy(&lane->mu);
            pthread_cond_destroy(&lane->cv);
        }
    }
    rf__ops_destroy(&srv.ops);
    if (s_sig_pipe[0] >= 0) {
        close(s_sig_pipe[0]);
        close(s_sig_pipe[1]);
        s_sig_pipe[0] = s_sig_pipe[1] = -1;
    }
    return exit_code;
}
