/* service/reply.c: every reply rackfitd sends, encoded here and nowhere
 * else (service/request.h): the ops' results, errors and `busy`. A reply is
 * one MessagePack map; the request's `id` is echoed first when it had one.
 * The MessagePack itself is the codec's (service/codec.h). */
#include "request.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "rackfit/rackfit.h"

void rf__reply_open(rf__req_t *q, uint32_t n)
{
    rf__mp_map(q->w, n + (q->id ? 1 : 0));
    if (q->id) {
        rf__mp_key(q->w, "id");
        rf__mp_doc(q->w, q->id);
    }
}

static void s_int(rf__mp_writer_t *w, const char *key, int64_t v)
{
    rf__mp_key(w, key);
    rf__mp_int(w, v);
}

void rf__reply_name_version(rf__req_t *q, const char *name, int64_t version)
{
    rf__reply_open(q, 2);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    s_int(q->w, "version", version);
}

void rf__reply_released(rf__req_t *q, const char *name, int64_t version, int32_t released)
{
    rf__reply_open(q, 3);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    s_int(q->w, "version", version);
    s_int(q->w, "released", released);
}

void rf__reply_deleted(rf__req_t *q, const char *name)
{
    rf__reply_open(q, 2);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    rf__mp_key(q->w, "deleted");
    rf__mp_bool(q->w, true);
}

void rf__reply_info(rf__req_t *q, const char *name, const rf__store_info_t *info)
{
    rf__reply_open(q, 8);
    rf__mp_key(q->w, "name");
    rf__mp_str(q->w, name);
    s_int(q->w, "version", info->version);
    s_int(q->w, "base_version", info->base_version);
    s_int(q->w, "nodes", info->nodes);
    s_int(q->w, "commits", info->commits);
    s_int(q->w, "commit_pods", info->commit_pods);
    s_int(q->w, "running", info->running);
    s_int(q->w, "preempting", info->preempting);
}

rf_status rf__reply_answer(rf__req_t *q, const rf_answer_t *answer, const char *cluster, int64_t version,
                           bool committed)
{
    /* the one answer encoder (rf_answer_to_doc), serialised generically */
    rf_doc_t *doc = NULL;
    RF_CALL(rf_answer_to_doc(answer, q->arena, &doc, &q->err));
    rf__reply_open(q, doc->len + (cluster ? 1 : 0));
    for (uint32_t i = 0; i < doc->len; i++) {
        rf__mp_strn(q->w, doc->u.pairs[i].key, doc->u.pairs[i].key_len);
        rf__mp_doc(q->w, &doc->u.pairs[i].value);
    }
    if (cluster) {
        rf__mp_key(q->w, "cluster");
        rf__mp_map(q->w, 3);
        rf__mp_key(q->w, "name");
        rf__mp_str(q->w, cluster);
        s_int(q->w, "version", version);
        rf__mp_key(q->w, "committed");
        rf__mp_bool(q->w, committed);
    }
    return RF_OK;
}

void rf__reply_ping(rf__req_t *q)
{
    rf__reply_open(q, 3);
    s_int(q->w, "v", RF__PROTOCOL_VERSION);
    rf__mp_key(q->w, "ops");
    rf__mp_array(q->w, RF__OP_COUNT);
    for (int i = 0; i < RF__OP_COUNT; i++)
        rf__mp_str(q->w, rf__op_names[i]);
    rf__mp_key(q->w, "server");
    rf__mp_str(q->w, "rackfitd " RACKFIT_VERSION);
}

void rf__reply_stats(rf__req_t *q, const rf__lane_info_t *lanes)
{
    rf__ops_t *o = q->ops;
    rf__stats_t *st = &o->stats;
    rf__mp_writer_t *w = q->w;
    rf__reply_open(q, 12);
    s_int(w, "commit_retries", (int64_t)atomic_load(&st->commit_retries));
    rf__mp_key(w, "uptime_s");
    rf__mp_double(w, (rf_now_ms() - o->started_ms) / 1000.0);
    s_int(w, "cores", o->cores);
    s_int(w, "solver_threads", o->cfg.solver_threads);
    s_int(w, "requests", (int64_t)atomic_load(&st->requests));
    s_int(w, "errors", (int64_t)atomic_load(&st->errors));
    s_int(w, "busy", (int64_t)atomic_load(&st->busy));
    s_int(w, "commits", (int64_t)atomic_load(&st->commits));
    s_int(w, "clusters", rf__store_count(o->store));
    rf__mp_key(w, "by_op");
    rf__mp_map(w, RF__OP_COUNT);
    for (int op = 0; op < RF__OP_COUNT; op++) {
        uint64_t n = 0;
        for (int k = 0; k < RF__N_OUTCOMES; k++)
            n += (uint64_t)rf__series_value(st->by_op[op][k]);
        s_int(w, rf__op_names[op], (int64_t)n);
    }
    rf__mp_key(w, "by_mode");
    rf__mp_map(w, RF__CLASS_COUNT);
    for (int c = 0; c < RF__CLASS_COUNT; c++) {
        rf__class_stats_t *cs = &st->cls[c];
        rf__mp_key(w, rf__class_names[c]);
        rf__mp_map(w, 6);
        s_int(w, "requests", (int64_t)atomic_load(&cs->count));
        s_int(w, "errors", (int64_t)atomic_load(&cs->errors));
        rf__mp_key(w, "p50_ms");
        rf__mp_double(w, rf__stats_percentile(cs, 0.50));
        rf__mp_key(w, "p90_ms");
        rf__mp_double(w, rf__stats_percentile(cs, 0.90));
        rf__mp_key(w, "p99_ms");
        rf__mp_double(w, rf__stats_percentile(cs, 0.99));
        rf__mp_key(w, "max_ms");
        rf__mp_double(w, (double)atomic_load(&cs->max_us) / 1000.0);
    }
    rf__mp_key(w, "lanes");
    rf__mp_map(w, (uint32_t)lanes->lanes);
    for (int l = 0; l < lanes->lanes; l++) {
        rf__mp_key(w, lanes->lane_name[l]);
        rf__mp_map(w, 5);
        s_int(w, "threads", lanes->lane_threads[l]);
        s_int(w, "queue_cap", lanes->lane_queue_cap[l]);
        s_int(w, "queue_len", lanes->lane_queue_len[l]);
        s_int(w, "queue_bytes", lanes->lane_queue_bytes[l]);
        s_int(w, "queue_cap_bytes", lanes->lane_queue_cap_bytes[l]);
    }
}

void rf__reply_error(rf__req_t *q, rf_status code)
{
    rf__mp_writer_reset(q->w);
    rf__mp_error_reply(q->w, q->id, code, q->err.message, q->err.path);
}

void rf__reply_busy(rf__mp_writer_t *w, const void *id, size_t id_len, const char *lane)
{
    char message[160];
    snprintf(message, sizeof message, "the %s lane's queue is full (by requests or bytes): retry later", lane);
    rf__mp_writer_reset(w);
    rf__mp_error_reply_raw(w, id, id_len, RF_EBUSY, message, "");
}
