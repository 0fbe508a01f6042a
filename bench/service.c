/* bench/service.c: `rackfit-bench service`, rackfitd's throughput and latency
 * (bench/RESULTS.md, "rackfitd").
 *
 *   rackfit-bench service [--endpoint E] [--clients N] [--seconds S]
 *                         [--rate R] [--full N] [--runs N] [--inproc N]
 *
 * Without --endpoint it starts <bin>/rackfitd on a free loopback port
 * (plain mode) and stops it after. Measures, in this order:
 * 1. decode: a 16,384-node problem from MessagePack into the solver's model
 *    in this process (pre-scan, unpack, document, schema reader, validate);
 * 1b. in process: --inproc N (default 3,000) one-gang solves with commit
 *    and their releases through rf__ops_handle, no socket (0: skipped);
 *    --runs 0 stops here (no rackfitd is started);
 * 2. closed loop, --runs times: the same N clients (REQ, one thread each)
 *    first ping for S seconds, then each sends a one-gang greedy solve that
 *    commits against a stored 1,024-node cluster, then its release (so the
 *    cluster never fills); solves/s against ping/s; the same with the
 *    clients pipelined (DEALER); then the same one-gang solve without a
 *    commit (one request a solve), REQ and pipelined, against the same pings;
 *    then a burst: 400 small solver-lane solves from 8 pipelined clients at
 *    once, counted as answered or `busy`;
 * 3. open loop: one pipelined client sends solves on a clock at R requests/s
 *    (default: half the closed-loop rate) and releases each on its reply;
 *    latency runs from the scheduled send time, so a stall is not hidden;
 * 4. full problems: the whole 16,384-node, 1,000-gang problem (mode greedy)
 *    sent N times by one client.
 * Every reply is decoded; an error reply fails the run. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "codec.h"
#include "doc.h"
#include "gen.h"
#include "json.h"
#include "ops.h"
#include "rackfit/client.h"
#include "rackfit/rackfit.h"

int bench_service_main(int argc, char **argv);

typedef struct {
    const char *endpoint;
    int clients;
    double seconds;
    double rate;
    int full;
    int runs;   /* closed-loop ping and solve phases, each run both */
    int inproc; /* in-process solves (phase 1b) */
} s_opts_t;

typedef struct {
    double *v;
    size_t n, cap;
} s_lat_t;

static void s_lat_add(s_lat_t *l, double ms)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        double *v = realloc(l->v, l->cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "rackfit-bench service: out of memory\n");
            exit(3);
        }
        l->v = v;
    }
    l->v[l->n++] = ms;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double s_pct(s_lat_t *l, double q)
{
    if (!l->n)
        return 0;
    qsort(l->v, l->n, sizeof *l->v, s_cmp);
    size_t i = (size_t)(q * (double)(l->n - 1) + 0.5);
    return l->v[i];
}

static pid_t s_child; /* the rackfitd this bench started, if any */

static void s_die(const char *what, const rf_error_t *err)
{
    if (s_child > 0)
        kill(s_child, SIGTERM);
    fprintf(stderr, "rackfit-bench service: %s: %s%s%s\n", what, err ? err->path : "", err && err->path[0] ? ": " : "",
            err ? err->message : "");
    exit(3);
}

/* The fabric generator's problem as a document (in `arena`). */
static rf_doc_t *s_fabric(int blocks, int racks, int hosts, int gangs, rf__arena_t *arena, rf__jw_t *json)
{
    bench_gen_opts_t o;
    bench_gen_opts_fabric(&o);
    o.blocks = blocks;
    o.racks = racks;
    o.hosts = hosts;
    o.gangs = gangs;
    rf_error_t err;
    rf__jw_init(json);
    if (bench_gen_fabric(&o, json, NULL, &err) != RF_OK)
        s_die("gen fabric", &err);
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf_doc_t *doc = NULL;
    if (rf__json_parse(json->p, json->len, &lim, arena, &doc, &err) != RF_OK)
        s_die("parse the generated problem", &err);
    return doc;
}

/* Check a reply: a map without "error"; a stale_version error (another
 * client's commit took the capacity this answer used) returns 1. */
static int s_expect_ok(const void *reply, size_t len, const char *what)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__mp_limits_t l = {0};
    rf_doc_t *doc = NULL;
    rf_error_t err;
    if (rf__mp_decode(reply, len, &l, a, &doc, &err) != RF_OK)
        s_die(what, &err);
    const rf_doc_t *e = rf__doc_get(doc, "error");
    if (e) {
        const rf_doc_t *code = rf__doc_get(e, "code");
        if (code && code->type == RF_DOC_STR && strcmp(code->u.s, "stale_version") == 0) {
            rf__arena_destroy(&a);
            return 1;
        }
        const rf_doc_t *m = rf__doc_get(e, "message");
        fprintf(stderr, "rackfit-bench service: %s: error reply: %s\n", what,
                m && m->type == RF_DOC_STR ? m->u.s : "?");
        s_die("stopping", NULL);
    }
    rf__arena_destroy(&a);
    return 0;
}

/* A request's first keys: a map of n_keys entries, "id" and "op" (the op's name). */
static void s_msg_head(rf__mp_writer_t *w, uint32_t n_keys, long id, const char *op)
{
    rf__mp_writer_reset(w);
    rf__mp_map(w, n_keys);
    rf__mp_key(w, "id");
    rf__mp_int(w, id);
    rf__mp_key(w, "op");
    rf__mp_str(w, op);
}

/* A gang's last key: "pod_sets", one pod set "w" of `count` pods of `gpus` GPUs each. */
static void s_pod_sets(rf__mp_writer_t *w, int64_t count, int64_t gpus)
{
    rf__mp_key(w, "pod_sets");
    rf__mp_array(w, 1);
    rf__mp_map(w, 3);
    rf__mp_key(w, "name");
    rf__mp_str(w, "w");
    rf__mp_key(w, "count");
    rf__mp_int(w, count);
    rf__mp_key(w, "requests");
    rf__mp_map(w, 1);
    rf__mp_key(w, "nvidia.com/gpu");
    rf__mp_int(w, gpus);
}

/* A one-gang greedy solve against the stored cluster, committed or not. */
static void s_solve_msg(rf__mp_writer_t *w, long id, bool commit)
{
    char gang[64];
    snprintf(gang, sizeof gang, "bench/g%ld", id);
    s_msg_head(w, commit ? 6 : 5, id, "solve");
    rf__mp_key(w, "cluster_name");
    rf__mp_str(w, "bench");
    if (commit) {
        rf__mp_key(w, "commit");
        rf__mp_bool(w, true);
    }
    rf__mp_key(w, "options");
    rf__mp_map(w, 1);
    rf__mp_key(w, "mode");
    rf__mp_str(w, "greedy");
    rf__mp_key(w, "gangs");
    rf__mp_array(w, 1);
    rf__mp_map(w, 3);
    rf__mp_key(w, "name");
    rf__mp_str(w, gang);
    rf__mp_key(w, "topology");
    rf__mp_map(w, 1);
    rf__mp_key(w, "required");
    rf__mp_str(w, "example.com/rack");
    s_pod_sets(w, 2, 4);
}

static void s_release_msg(rf__mp_writer_t *w, long id)
{
    char gang[64];
    snprintf(gang, sizeof gang, "bench/g%ld", id);
    s_msg_head(w, 4, -id - 1, "cluster.release");
    rf__mp_key(w, "name");
    rf__mp_str(w, "bench");
    rf__mp_key(w, "gangs");
    rf__mp_array(w, 1);
    rf__mp_str(w, gang);
}

static void s_ping_msg(rf__mp_writer_t *w, long id)
{
    s_msg_head(w, 2, id, "ping");
}

/* A small solve that the server puts on its solver lane (mode auto, the
 * default), against the stored cluster, without a commit: the burst. */
static void s_burst_msg(rf__mp_writer_t *w, long id)
{
    rf__mp_writer_reset(w);
    rf__mp_map(w, 4);
    rf__mp_key(w, "id");
    rf__mp_int(w, id);
    rf__mp_key(w, "cluster_name");
    rf__mp_str(w, "bench");
    rf__mp_key(w, "options");
    rf__mp_map(w, 1);
    rf__mp_key(w, "time_limit_ms");
    rf__mp_int(w, 50);
    rf__mp_key(w, "gangs");
    rf__mp_array(w, 1);
    rf__mp_map(w, 2);
    rf__mp_key(w, "name");
    rf__mp_str(w, "bench/burst");
    s_pod_sets(w, 1, 1);
}

/* The id of a reply (0 when absent). */
static long s_reply_id(const void *reply, size_t len, long *stale)
{
    rf__arena_t *a = rf__arena_new(0);
    rf__mp_limits_t l = {0};
    rf_doc_t *doc = NULL;
    rf_error_t err;
    long id = 0;
    if (rf__mp_decode(reply, len, &l, a, &doc, &err) == RF_OK) {
        const rf_doc_t *e = rf__doc_get(doc, "error");
        const rf_doc_t *x = rf__doc_get(doc, "id");
        const rf_doc_t *code = e ? rf__doc_get(e, "code") : NULL;
        if (code && code->type == RF_DOC_STR && strcmp(code->u.s, "stale_version") == 0) {
            (*stale)++; /* its release below finds nothing to drop */
        } else if (e) {
            const rf_doc_t *m = rf__doc_get(e, "message");
            fprintf(stderr, "rackfit-bench service: error reply: %s\n", m && m->type == RF_DOC_STR ? m->u.s : "?");
            s_die("stopping", NULL);
        }
        if (x && x->type == RF_DOC_INT)
            id = (long)x->u.i;
    }
    rf__arena_destroy(&a);
    return id;
}

/* --------------------------------------------------------------- closed loop */

typedef struct {
    const s_opts_t *o;
    int index;
    double end_ms;
    int kind; /* S_PING round trips, S_COMMITTED solves (each then released), S_PLAIN solves */
    s_lat_t lat;
    long done;
    long stale;
} s_worker_t;

enum { S_PING, S_COMMITTED, S_PLAIN };

static void *s_closed(void *arg)
{
    s_worker_t *wk = arg;
    rf_error_t err;
    rf_client_t *c = rf_client_new(wk->o->endpoint, NULL, &err);
    rf__mp_writer_t *w = rf__mp_writer_new();
    if (!c || !w)
        s_die("client", &err);
    long id = (long)wk->index * 100000000L + 1;
    while (wk->kind != S_COMMITTED && rf_now_ms() < wk->end_ms) {
        void *reply = NULL;
        size_t n = 0, rn = 0;
        if (wk->kind == S_PING)
            s_ping_msg(w, id++);
        else
            s_solve_msg(w, id++, false);
        const void *msg = rf__mp_writer_data(w, &n);
        double t0 = rf_now_ms();
        if (rf_client_request(c, msg, n, &reply, &rn, &err) != RF_OK)
            s_die(wk->kind == S_PING ? "ping" : "solve", &err);
        s_lat_add(&wk->lat, rf_now_ms() - t0);
        s_expect_ok(reply, rn, wk->kind == S_PING ? "ping" : "solve");
        free(reply);
        wk->done++;
    }
    while (wk->kind == S_COMMITTED && rf_now_ms() < wk->end_ms) {
        void *reply = NULL;
        size_t n = 0, rn = 0;
        s_solve_msg(w, id, true);
        const void *msg = rf__mp_writer_data(w, &n);
        double t0 = rf_now_ms();
        if (rf_client_request(c, msg, n, &reply, &rn, &err) != RF_OK)
            s_die("solve", &err);
        s_lat_add(&wk->lat, rf_now_ms() - t0);
        int stale = s_expect_ok(reply, rn, "solve");
        free(reply);
        if (stale) {
            wk->stale++;
            continue; /* solve again on the new version */
        }
        s_release_msg(w, id);
        msg = rf__mp_writer_data(w, &n);
        if (rf_client_request(c, msg, n, &reply, &rn, &err) != RF_OK)
            s_die("release", &err);
        s_expect_ok(reply, rn, "release");
        free(reply);
        wk->done++;
        id++;
    }
    rf__mp_writer_destroy(&w);
    rf_client_destroy(&c);
    return NULL;
}

/* ------------------------------------------------------------------- helpers */

static pid_t s_spawn(const char *argv0, char *endpoint, size_t cap)
{
    char bin[1024];
    const char *slash = strrchr(argv0, '/');
    snprintf(bin, sizeof bin, "%.*s/rackfitd", slash ? (int)(slash - argv0) : 1, slash ? argv0 : ".");
    int port = 20000 + (int)(getpid() % 20000);
    snprintf(endpoint, cap, "tcp://127.0.0.1:%d", port);
    pid_t pid = fork();
    if (pid == 0) {
        execl(bin, bin, "--listen", endpoint, "--log-level", "warn", (char *)NULL); /* the defaults */
        _exit(127);
    }
    usleep(300 * 1000);
    return pid;
}

/* The pipelined form of a closed-loop phase: each client thread (a DEALER)
 * keeps S_WINDOW requests in flight; a ping's reply sends the next ping, a
 * solve's reply its release, a release's reply the next solve. */
#define S_WINDOW 16

static void *s_pipelined(void *arg)
{
    s_worker_t *wk = arg;
    rf_error_t err;
    rf_client_opts_t po;
    rf_client_opts_default(&po);
    po.pipelined = 1;
    rf_client_t *c = rf_client_new(wk->o->endpoint, &po, &err);
    rf__mp_writer_t *w = rf__mp_writer_new();
    if (!c || !w)
        s_die("pipelined client", &err);
    long next = (long)wk->index * 100000000L + 500000000L, in_flight = 0;
    for (; in_flight < S_WINDOW; in_flight++, next++) {
        size_t n = 0;
        if (wk->kind == S_PING)
            s_ping_msg(w, next);
        else
            s_solve_msg(w, next, wk->kind == S_COMMITTED);
        const void *msg = rf__mp_writer_data(w, &n);
        if (rf_client_send(c, msg, n, &err) != RF_OK)
            s_die("send", &err);
    }
    while (in_flight > 0) {
        void *reply = NULL;
        size_t rn = 0, n = 0;
        if (rf_client_recv(c, 60000, &reply, &rn, &err) != RF_OK)
            s_die("recv", &err);
        long stale = 0, id = s_reply_id(reply, rn, &stale);
        free(reply);
        in_flight--;
        bool more = rf_now_ms() < wk->end_ms;
        if (wk->kind != S_COMMITTED) {
            wk->done++;
            if (!more)
                continue;
            if (wk->kind == S_PING)
                s_ping_msg(w, next++);
            else
                s_solve_msg(w, next++, false);
        } else if (id >= 0 && !stale) {
            s_release_msg(w, id); /* the solve committed: release it */
            wk->done++;
        } else {
            wk->stale += stale;
            if (!more)
                continue;
            s_solve_msg(w, next++, true); /* a release came back (or a stale solve): the next solve */
        }
        const void *msg = rf__mp_writer_data(w, &n);
        if (rf_client_send(c, msg, n, &err) != RF_OK)
            s_die("send", &err);
        in_flight++;
    }
    rf__mp_writer_destroy(&w);
    rf_client_destroy(&c);
    return NULL;
}

typedef struct {
    double rate, req_rate, p50, p99;
    long stale;
} s_result_t;

/* One closed-loop phase of o->seconds: every client pings, or solves
 * (`kind`). */
static s_result_t s_closed_run(const s_opts_t *o, int kind, bool pipelined)
{
    s_worker_t *wk = calloc((size_t)o->clients, sizeof *wk);
    pthread_t *th = calloc((size_t)o->clients, sizeof *th);
    static int round;
    double t0 = rf_now_ms();
    round++;
    for (int k = 0; k < o->clients; k++) {
        wk[k] = (s_worker_t){.o = o, .index = k + 100 * round, .end_ms = t0 + o->seconds * 1000, .kind = kind};
        pthread_create(&th[k], NULL, pipelined ? s_pipelined : s_closed, &wk[k]);
    }
    s_lat_t all = {0};
    long done = 0, stale = 0;
    for (int k = 0; k < o->clients; k++) {
        pthread_join(th[k], NULL);
        done += wk[k].done;
        stale += wk[k].stale;
        for (size_t i = 0; i < wk[k].lat.n; i++)
            s_lat_add(&all, wk[k].lat.v[i]);
        free(wk[k].lat.v);
    }
    double el = (rf_now_ms() - t0) / 1000;
    s_result_t r = {.rate = (double)done / el,
                    .req_rate = ((kind == S_COMMITTED ? 2 : 1) * (double)done + (double)stale) / el,
                    .p50 = s_pct(&all, 0.5),
                    .p99 = s_pct(&all, 0.99),
                    .stale = stale};
    free(all.v);
    free(wk);
    free(th);
    return r;
}

/* 400 small solve requests (mode auto: the solver lane) from 8 pipelined
 * clients, all sent before any reply is read: how many are answered, and
 * how many `busy`. */
static void s_burst(const s_opts_t *o)
{
    enum { CLIENTS = 8, EACH = 50 };
    rf_client_t *pc[CLIENTS];
    rf_client_opts_t po;
    rf_client_opts_default(&po);
    po.pipelined = 1;
    po.timeout_ms = 120000;
    rf_error_t err;
    rf__mp_writer_t *w = rf__mp_writer_new();
    for (int k = 0; k < CLIENTS; k++)
        if (!(pc[k] = rf_client_new(o->endpoint, &po, &err)))
            s_die("burst client", &err);
    double t0 = rf_now_ms();
    for (int i = 0; i < EACH; i++)
        for (int k = 0; k < CLIENTS; k++) {
            size_t n = 0;
            s_burst_msg(w, 2000000000L + k * EACH + i);
            const void *msg = rf__mp_writer_data(w, &n);
            if (rf_client_send(pc[k], msg, n, &err) != RF_OK)
                s_die("burst send", &err);
        }
    long ok = 0, busy = 0, other = 0;
    for (int k = 0; k < CLIENTS; k++)
        for (int i = 0; i < EACH; i++) {
            void *reply = NULL;
            size_t rn = 0;
            if (rf_client_recv(pc[k], 120000, &reply, &rn, &err) != RF_OK)
                s_die("burst recv", &err);
            rf__arena_t *a = rf__arena_new(0);
            rf__mp_limits_t l = {0};
            rf_doc_t *doc = NULL;
            if (rf__mp_decode(reply, rn, &l, a, &doc, &err) == RF_OK) {
                const rf_doc_t *e = rf__doc_get(doc, "error");
                const rf_doc_t *code = e ? rf__doc_get(e, "code") : NULL;
                if (!e)
                    ok++;
                else if (code && code->type == RF_DOC_STR && strcmp(code->u.s, "busy") == 0)
                    busy++;
                else
                    other++;
            }
            rf__arena_destroy(&a);
            free(reply);
        }
    printf("burst: %d small solve requests (mode auto, the solver lane) from %d pipelined clients at once: %ld "
           "answered, %ld busy, %ld other errors, all in %.0f ms\n",
           CLIENTS * EACH, CLIENTS, ok, busy, other, rf_now_ms() - t0);
    for (int k = 0; k < CLIENTS; k++)
        rf_client_destroy(&pc[k]);
    rf__mp_writer_destroy(&w);
}

/* 1. Decode `msg` (the 16,384-node problem) into the model in this
 * process, 7 times: pre-scan, unpack, document, schema reader, validate. */
static void s_decode_phase(const void *full_msg, size_t full_len)
{
    rf_error_t err;
    rf_limits_t lim;
    rf_limits_default(&lim);
    rf__mp_limits_t mpl;
    rf__mp_limits_from(&mpl, &lim);
    s_lat_t dec = {0}, codec = {0}, reader = {0};
    for (int r = 0; r < 7; r++) {
        double t0 = rf_now_ms();
        rf__arena_t *a = rf__arena_new(0);
        rf_doc_t *doc = NULL;
        rf_problem_t *p = NULL;
        if (rf__mp_decode(full_msg, full_len, &mpl, a, &doc, &err) != RF_OK)
            s_die("decode", &err);
        double t1 = rf_now_ms();
        if (rf_problem_from_doc(doc, NULL, &lim, &p, &err) != RF_OK)
            s_die("decode", &err);
        double t2 = rf_now_ms();
        rf_problem_destroy(&p);
        rf__arena_destroy(&a);
        s_lat_add(&dec, rf_now_ms() - t0);
        s_lat_add(&codec, t1 - t0);
        s_lat_add(&reader, t2 - t1);
    }
    printf("decode: 16,384 nodes x 1,000 gangs, %zu bytes of MessagePack -> model: median %.2f ms (min %.2f) "
           "over %zu runs (codec: pre-scan and document, median %.2f ms; schema reader and validate, median %.2f "
           "ms)\n",
           full_len, s_pct(&dec, 0.5), s_pct(&dec, 0.0), dec.n, s_pct(&codec, 0.5), s_pct(&reader, 0.5));
    free(dec.v);
    free(codec.v);
    free(reader.v);
}

/* 1b. In this process, no socket: `n` one-gang greedy solves with commit,
 * each then released, through rf__ops_handle against the stored cluster
 * `put` (a cluster.put message); the cost of one solve+commit and of one
 * release, in microseconds (the request path without ZeroMQ). */
static void s_inproc_phase(const void *put, size_t put_len, int n)
{
    if (n <= 0)
        return;
    rf__ops_config_t cfg;
    rf__ops_config_default(&cfg);
    rf__ops_t *ops = rf__ops_new(&cfg);
    rf__mp_writer_t *req = rf__mp_writer_new(), *rep = rf__mp_writer_new();
    if (!ops || !req || !rep)
        s_die("in-process: out of memory", NULL);
    size_t rn = 0;
    rf__ops_handle(ops, put, put_len, false, rf_now_ms(), rep);
    const void *reply = rf__mp_writer_data(rep, &rn);
    s_expect_ok(reply, rn, "in-process cluster.put");
    s_lat_t sl = {0}, rl = {0};
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        s_solve_msg(req, i + 1, true);
        const void *msg = rf__mp_writer_data(req, &len);
        double t0 = rf_now_ms();
        rf__ops_handle(ops, msg, len, false, t0, rep);
        double t1 = rf_now_ms();
        reply = rf__mp_writer_data(rep, &rn);
        s_expect_ok(reply, rn, "in-process solve");
        s_release_msg(req, i + 1);
        msg = rf__mp_writer_data(req, &len);
        double t2 = rf_now_ms();
        rf__ops_handle(ops, msg, len, false, t2, rep);
        double t3 = rf_now_ms();
        reply = rf__mp_writer_data(rep, &rn);
        s_expect_ok(reply, rn, "in-process release");
        s_lat_add(&sl, (t1 - t0) * 1000);
        s_lat_add(&rl, (t3 - t2) * 1000);
    }
    printf("in process (rf__ops_handle, no socket), stored 1,024 nodes, %d one-gang greedy solves with commit, each "
           "released: solve+commit p50 %.1f us (min %.1f, p99 %.1f); release p50 %.1f us\n",
           n, s_pct(&sl, 0.5), s_pct(&sl, 0.0), s_pct(&sl, 0.99), s_pct(&rl, 0.5));
    free(sl.v);
    free(rl.v);
    rf__mp_writer_destroy(&req);
    rf__mp_writer_destroy(&rep);
    rf__ops_destroy(&ops);
}

/* 3. One pipelined client sends solves on a clock at `want` per second and
 * releases each on its reply; latency from the scheduled send. */
static void s_open_loop(const s_opts_t *op, double want)
{
    s_opts_t o = *op;
    rf_error_t err;
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf_client_opts_t po;
    rf_client_opts_default(&po);
    po.pipelined = 1;
    rf_client_t *pc = rf_client_new(o.endpoint, &po, &err);
    if (!pc)
        s_die("pipelined client", &err);
    long total = (long)(want * o.seconds);
    double *sched = calloc((size_t)total + 1, sizeof *sched);
    s_lat_t open = {0};
    long sent = 0, answered = 0, releases = 0, released_back = 0, open_stale = 0;
    double start = rf_now_ms() + 50;
    rf__mp_writer_t *w2 = rf__mp_writer_new();
    while (answered < total || released_back < releases) {
        double now = rf_now_ms();
        while (sent < total && start + (double)sent * 1000.0 / want <= now) {
            sched[sent] = start + (double)sent * 1000.0 / want;
            s_solve_msg(w, 1000000000L + sent, true);
            size_t n = 0;
            const void *msg = rf__mp_writer_data(w, &n);
            if (rf_client_send(pc, msg, n, &err) != RF_OK)
                s_die("send", &err);
            sent++;
        }
        double next = sent < total ? start + (double)sent * 1000.0 / want : now + 1000;
        int wait = (int)(next - rf_now_ms());
        void *reply = NULL;
        size_t rn = 0;
        rf_status st = rf_client_recv(pc, wait > 0 ? wait : 0, &reply, &rn, &err);
        if (st == RF_ETIMEOUT)
            continue;
        if (st != RF_OK)
            s_die("recv", &err);
        long id = s_reply_id(reply, rn, &open_stale);
        free(reply);
        if (id >= 1000000000L) {
            long k = id - 1000000000L;
            s_lat_add(&open, rf_now_ms() - sched[k]);
            answered++;
            s_release_msg(w2, id);
            size_t n = 0;
            const void *msg = rf__mp_writer_data(w2, &n);
            if (rf_client_send(pc, msg, n, &err) != RF_OK)
                s_die("send", &err);
            releases++;
        } else {
            released_back++;
        }
    }
    printf("open loop: %.0f solves/s on a clock (plus a release per reply) for %.0f s: latency from the scheduled "
           "send p50 %.3f ms, p99 %.3f ms, max %.3f ms (%ld commits refused as stale)\n",
           want, o.seconds, s_pct(&open, 0.5), s_pct(&open, 0.99), s_pct(&open, 1.0), open_stale);
    free(open.v);
    free(sched);
    rf__mp_writer_destroy(&w2);
    rf_client_destroy(&pc);

    rf__mp_writer_destroy(&w);
}

/* 4. The whole 16,384-node problem sent `n` times by one client. */
static void s_full_phase(rf_client_t *c, const void *full_msg, size_t full_len, int n)
{
    rf_error_t err;
    s_opts_t o = {.full = n};
    s_lat_t fl = {0};
    double f0 = rf_now_ms();
    for (int r = 0; r < o.full; r++) {
        void *reply = NULL;
        size_t rn = 0;
        double t = rf_now_ms();
        if (rf_client_request(c, full_msg, full_len, &reply, &rn, &err) != RF_OK)
            s_die("full problem", &err);
        s_lat_add(&fl, rf_now_ms() - t);
        s_expect_ok(reply, rn, "full problem");
        free(reply);
    }
    double fel = (rf_now_ms() - f0) / 1000;
    if (o.full > 0)
        printf("full problems: 16,384 nodes x 1,000 gangs (mode greedy), one client: %.2f requests/s; latency p50 "
               "%.1f ms, p99 %.1f ms\n",
               o.full / fel, s_pct(&fl, 0.5), s_pct(&fl, 0.99));
    free(fl.v);
}

int bench_service_main(int argc, char **argv)
{
    s_opts_t o = {.endpoint = NULL, .clients = 4, .seconds = 5, .rate = 0, .full = 10, .runs = 3, .inproc = 3000};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "rackfit-bench service: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--endpoint") == 0)
            o.endpoint = v;
        else if (strcmp(a, "--clients") == 0)
            o.clients = atoi(v);
        else if (strcmp(a, "--seconds") == 0)
            o.seconds = atof(v);
        else if (strcmp(a, "--rate") == 0)
            o.rate = atof(v);
        else if (strcmp(a, "--full") == 0)
            o.full = atoi(v);
        else if (strcmp(a, "--runs") == 0)
            o.runs = atoi(v);
        else if (strcmp(a, "--inproc") == 0)
            o.inproc = atoi(v);
        else {
            fprintf(stderr, "usage: rackfit-bench service [--endpoint E] [--clients N] [--seconds S] [--rate R] "
                            "[--full N] [--runs N] [--inproc N]\n");
            return 2;
        }
        i++;
    }
    if (o.clients < 1 || o.seconds <= 0 || o.runs < 0) {
        fprintf(stderr, "rackfit-bench service: --clients and --seconds must be positive, --runs not negative\n");
        return 2;
    }
    /* as rackfitd does (malloc_keep_bytes, service/config.c): the decode
     * below is measured in this process */
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_TOP_PAD, 16 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    char spawned_ep[64];
    pid_t child = 0;
    if (!o.endpoint && o.runs > 0) {
        child = s_spawn(argv[0], spawned_ep, sizeof spawned_ep);
        s_child = child;
        o.endpoint = spawned_ep;
    }
    rf_error_t err;
    rf__arena_t *arena = rf__arena_new(0);
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf__jw_t json16k, json1k;

    /* 1. decode a 16,384-node problem in this process */
    rf_doc_t *full = s_fabric(16, 32, 32, 1000, arena, &json16k);
    /* mode greedy: see bench/RESULTS.md for why not auto */
    rf__mp_map(w, 3);
    rf__mp_key(w, "cluster");
    rf__mp_doc(w, rf__doc_get(full, "cluster"));
    rf__mp_key(w, "gangs");
    rf__mp_doc(w, rf__doc_get(full, "gangs"));
    rf__mp_key(w, "options");
    rf__mp_map(w, 1);
    rf__mp_key(w, "mode");
    rf__mp_str(w, "greedy");
    size_t full_len = 0;
    void *full_msg = rf__mp_writer_take(w, &full_len);
    s_decode_phase(full_msg, full_len);

    /* 2. the stored 1,024-node cluster */
    rf_doc_t *small = s_fabric(1, 32, 32, 1, arena, &json1k);
    const rf_doc_t *cl = rf__doc_get(small, "cluster");
    rf__mp_writer_reset(w);
    rf__mp_map(w, 3);
    rf__mp_key(w, "op");
    rf__mp_str(w, "cluster.put");
    rf__mp_key(w, "name");
    rf__mp_str(w, "bench");
    rf__mp_key(w, "cluster");
    rf__mp_doc(w, cl);
    size_t put_len = 0;
    const void *put_msg = rf__mp_writer_data(w, &put_len);
    s_inproc_phase(put_msg, put_len, o.inproc);
    if (o.runs == 0) { /* the in-process phases only */
        free(full_msg);
        rf__mp_writer_destroy(&w);
        rf__jw_fini(&json16k);
        rf__jw_fini(&json1k);
        rf__arena_destroy(&arena);
        return 0;
    }
    rf_client_t *c = NULL;
    for (int tries = 0; tries < 50 && !c; tries++) {
        c = rf_client_new(o.endpoint, NULL, &err);
        size_t n = 0, rn = 0;
        void *reply = NULL;
        const void *msg = rf__mp_writer_data(w, &n);
        if (c && rf_client_request(c, msg, n, &reply, &rn, &err) == RF_OK) {
            s_expect_ok(reply, rn, "cluster.put");
            free(reply);
        } else {
            rf_client_destroy(&c);
            usleep(100 * 1000);
        }
    }
    if (!c)
        s_die("cannot reach rackfitd", &err);

    double rate = 0;
    for (int run = 0; run < o.runs; run++) {
        s_result_t pr = s_closed_run(&o, S_PING, false), sr = s_closed_run(&o, S_COMMITTED, false);
        s_result_t pp = s_closed_run(&o, S_PING, true), sp = s_closed_run(&o, S_COMMITTED, true);
        s_result_t qr = s_closed_run(&o, S_PLAIN, false), qp = s_closed_run(&o, S_PLAIN, true);
        rate = sr.rate;
        printf("run %d, %d clients (REQ, one thread each), stored 1,024 nodes: ping %.0f round trips/s (p50 %.3f ms, "
               "p99 %.3f ms); one-gang greedy solve+commit then release %.0f committed solves/s (%.0f requests/s "
               "with the releases, %ld stale retries; solve p50 %.3f ms, p99 %.3f ms): solves/ping = %.2f\n",
               run + 1, o.clients, pr.rate, pr.p50, pr.p99, sr.rate, sr.req_rate, sr.stale, sr.p50, sr.p99,
               pr.rate > 0 ? sr.rate / pr.rate : 0);
        printf("run %d, the same %d clients pipelined (DEALER, %d in flight each): ping %.0f/s; committed one-gang "
               "solves %.0f/s (%.0f requests/s with the releases, %ld stale): solves/ping = %.2f\n",
               run + 1, o.clients, S_WINDOW, pp.rate, sp.rate, sp.req_rate, sp.stale,
               pp.rate > 0 ? sp.rate / pp.rate : 0);
        printf("run %d, the same %d clients, one-gang greedy solves without commit (one request each): REQ %.0f/s "
               "(p50 %.3f ms, p99 %.3f ms): solves/ping = %.2f; pipelined %.0f/s: solves/ping = %.2f\n",
               run + 1, o.clients, qr.rate, qr.p50, qr.p99, pr.rate > 0 ? qr.rate / pr.rate : 0, qp.rate,
               pp.rate > 0 ? qp.rate / pp.rate : 0);
    }

    /* 2b. a burst of small solver-lane solves from 8 pipelined clients */
    s_burst(&o);

    /* 3. open loop at a fixed rate */
    s_open_loop(&o, o.rate > 0 ? o.rate : rate / 2);

    /* 4. full problems */
    s_full_phase(c, full_msg, full_len, o.full);
    free(full_msg);
    rf_client_destroy(&c);
    rf__mp_writer_destroy(&w);
    rf__jw_fini(&json16k);
    rf__jw_fini(&json1k);
    rf__arena_destroy(&arena);
    if (child > 0) {
        kill(child, SIGTERM);
        int status = 0;
        waitpid(child, &status, 0);
    }
    return 0;
}
