/* tests/support/server_fixture.h: rackfitd's server (service/server.c) on
 * a thread of the test process, for test_server.c and test_client.c: a
 * small config on an ipc:// endpoint of this process, stopped with SIGTERM
 * as rackfitd is; requests written as JSON and sent as MessagePack.
 * Header-only (static inline): rf_test_support links no service code. */
#ifndef RACKFIT_TESTS_SERVER_FIXTURE_H
#define RACKFIT_TESTS_SERVER_FIXTURE_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "codec.h"
#include "config.h"
#include "doc.h"
#include "json.h"
#include "log.h"
#include "server.h"

static int s_server_counter; /* endpoints of this process: one a server */

typedef struct {
    rf__server_config_t cfg;
    char endpoint[128];
    pthread_t thread;
    int rc;
    bool running;
} server_t;

static inline void *s_serve(void *arg)
{
    server_t *s = arg;
    s->rc = rf__server_run(&s->cfg);
    return NULL;
}

/* A small config: `fast_threads` fast workers, one solver worker, one solver thread,
 * errors-only logs, an ipc:// endpoint of this process. */
static inline void s_server_init(server_t *s, const char *tag, int fast_threads)
{
    memset(s, 0, sizeof *s);
    rf__server_config_init(&s->cfg);
    snprintf(s->endpoint, sizeof s->endpoint, "ipc:///tmp/rf-test-%s-%d-%d.sock", tag, (int)getpid(),
             s_server_counter++);
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__server_config_set(&s->cfg, "listen", s->endpoint, "test", &err), RF_OK, "%s", err.message);
    s->cfg.log_level = RF_LOG_ERROR;
    s->cfg.fast_threads = fast_threads;
    s->cfg.solver_workers = 1;
    s->cfg.ops.solver_threads = 1;
}

/* SIGTERM, as rackfitd gets it, then the server's exit status. */
static inline int s_server_stop(server_t *s)
{
    if (s->running) {
        cr_assert_eq(kill(getpid(), SIGTERM), 0);
        pthread_join(s->thread, NULL);
        s->running = false;
    }
    unlink(s->endpoint + strlen("ipc://"));
    rf__server_config_fini(&s->cfg);
    return s->rc;
}

/* A request written as JSON, as MessagePack (malloc'ed). */
static inline void *s_mp(const char *json, size_t *len)
{
    rf__arena_t *arena = rf__arena_new(0);
    rf_doc_t *doc = NULL;
    rf_error_t err;
    rf_error_clear(&err);
    cr_assert_eq(rf__json_parse(json, strlen(json), NULL, arena, &doc, &err), RF_OK, "%s", err.message);
    rf__mp_writer_t *w = rf__mp_writer_new();
    rf__mp_doc(w, doc);
    cr_assert(rf__mp_writer_ok(w));
    void *out = rf__mp_writer_take(w, len);
    rf__mp_writer_destroy(&w);
    rf__arena_destroy(&arena);
    return out;
}

static inline const rf_doc_t *s_get(const rf_doc_t *map, const char *key, rf_doc_type type)
{
    const rf_doc_t *v = rf__doc_get(map, key);
    cr_assert(v, "no %s in the reply", key);
    cr_assert_eq(v->type, type, "%s is a %s", key, rf__doc_type_name(v->type));
    return v;
}

#endif
