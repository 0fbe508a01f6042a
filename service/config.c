/* service/config.c: rackfitd's config file and flags (service/config.h).
 *
 * Invariants: a key either sets its field whole or leaves the config as it
 * was and returns an error naming the key and its place; keys and
 * secrets are never echoed in messages (only their names). */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { S_I32, S_I64, S_BOOL } s_kind_t;

typedef struct {
    const char *key;
    s_kind_t kind;
    size_t offset; /* into rf__server_config_t */
    int64_t min;
    int64_t max;
} s_field_t;

#define S_F(key, kind, member, min, max)                                                                               \
    {                                                                                                                  \
        key, kind, offsetof(rf__server_config_t, member), min, max                                                     \
    }

static const s_field_t s_fields[] = {
    S_F("fast_threads", S_I32, fast_threads, 0, 1024),
    S_F("solver_workers", S_I32, solver_workers, 0, 1024),
    S_F("fast_queue", S_I32, fast_queue, 1, 1000000),
    S_F("solver_queue", S_I32, solver_queue, 1, 1000000),
    S_F("fast_queue_bytes", S_I64, fast_queue_bytes, 1, INT64_MAX),
    S_F("solver_queue_bytes", S_I64, solver_queue_bytes, 1, INT64_MAX),
    S_F("big_message_bytes", S_I64, big_message_bytes, 0, INT64_MAX),
    S_F("malloc_keep_bytes", S_I64, malloc_keep_bytes, 0, INT32_MAX),
    S_F("allow_insecure", S_BOOL, allow_insecure, 0, 1),
    S_F("solver_threads", S_I32, ops.solver_threads, 0, 4096),
    S_F("max_message_bytes", S_I64, ops.max_message_bytes, 1, INT64_MAX),
    S_F("max_elements", S_I64, ops.max_elements, 0, INT64_MAX),
    S_F("max_time_limit_ms", S_I64, ops.max_time_limit_ms, 0, INT64_MAX),
    S_F("commit_ttl_ms", S_I64, ops.commit_ttl_ms, 1, INT64_MAX),
    S_F("max_commit_ttl_ms", S_I64, ops.max_commit_ttl_ms, 1, INT64_MAX),
    S_F("max_clusters", S_I32, ops.max_clusters, 1, 1000000),
    S_F("max_commits", S_I32, ops.max_commits, 1, INT32_MAX),
    S_F("cluster_caches", S_I32, ops.cluster_caches, 0, 1024),
    S_F("cache_max_classes", S_I32, ops.cache_limits.max_classes, 1, 4096),
    S_F("cache_max_shapes", S_I32, ops.cache_limits.max_shapes, 1, 256),
    S_F("max_nodes", S_I32, ops.limits.max_nodes, 0, INT32_MAX),
    S_F("max_gangs", S_I32, ops.limits.max_gangs, 0, INT32_MAX),
    S_F("max_pod_sets", S_I32, ops.limits.max_pod_sets, 0, INT32_MAX),
    S_F("max_pods", S_I64, ops.limits.max_pods, 0, INT64_MAX),
    S_F("max_labels", S_I32, ops.limits.max_labels, 0, INT32_MAX),
    S_F("max_taints", S_I32, ops.limits.max_taints, 0, INT32_MAX),
    S_F("max_resources", S_I32, ops.limits.max_resources, 1, INT32_MAX),
    S_F("max_bound", S_I32, ops.limits.max_bound, 0, INT32_MAX),
    S_F("max_string", S_I32, ops.limits.max_string, 1, INT32_MAX),
    S_F("max_depth", S_I32, ops.limits.max_depth, 1, 32),
    S_F("max_input_bytes", S_I64, ops.limits.max_input_bytes, 1, INT64_MAX),
    S_F("max_shape_cells", S_I64, ops.limits.max_shape_cells, 1, INT64_MAX),
};

void rf__server_config_init(rf__server_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->fast_threads = 0;
    cfg->solver_workers = 1;
    /* Lanes are bounded by bytes first (a request's bytes bound what
     * decoding it costs); the counts only cap the rings. */
    cfg->fast_queue = 65536;
    cfg->solver_queue = 4096;
    cfg->fast_queue_bytes = 64 * 1024 * 1024;
    cfg->solver_queue_bytes = 256 * 1024 * 1024;
    cfg->big_message_bytes = 256 * 1024;
    /* glibc gives the top of the heap back to the kernel once 128 KiB are
     * free, and each give-back is a brk with a TLB shootdown: a one-gang
     * solve paid 150-250 us of it. Keep up to 256 MiB instead. */
    cfg->malloc_keep_bytes = 256 * 1024 * 1024;
    cfg->log_level = RF_LOG_INFO;
    rf__ops_config_default(&cfg->ops);
}

void rf__server_config_fini(rf__server_config_t *cfg)
{
    for (int32_t i = 0; i < cfg->n_listen; i++)
        free(cfg->listen[i]);
    free(cfg->allowed);
    free(cfg->metrics_listen);
    cfg->metrics_listen = NULL;
    memset(cfg->curve_secret, 0, sizeof cfg->curve_secret);
    cfg->n_listen = 0;
    cfg->allowed = NULL;
    cfg->n_allowed = 0;
}

static const char s_z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

bool rf__z85_key(const char *text, uint8_t out[32])
{
    if (!text || strlen(text) != RF__Z85_KEY_LEN)
        return false;
    for (int blk = 0; blk < 8; blk++) {
        uint64_t v = 0;
        for (int k = 0; k < 5; k++) {
            const char *p = strchr(s_z85_chars, text[blk * 5 + k]);
            if (!p || !*p)
                return false;
            v = v * 85 + (uint64_t)(p - s_z85_chars);
        }
        if (v > 0xffffffffULL)
            return false;
        for (int k = 0; k < 4; k++)
            out[blk * 4 + k] = (uint8_t)(v >> (24 - 8 * k));
    }
    return true;
}

/* The first key in a key file: the first line that is not blank or a
 * comment, trimmed. */
static rf_status s_key_file(const char *path, char out[RF__Z85_KEY_LEN + 1], const char *key, rf_error_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return rf_error_set(err, RF_EIO, key, "%s: %s", path, strerror(errno));
    char line[256];
    rf_status rc = rf_error_set(err, RF_EINVAL, key, "%s: no Z85 key (40 characters) in the file", path);
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#')
            continue; /* Z85 keys may hold '#': only whole lines are comments */
        size_t n = strcspn(s, " \t\r\n");
        if (n == 0)
            continue;
        s[n] = '\0';
        uint8_t bin[32];
        if (rf__z85_key(s, bin)) {
            memcpy(out, s, RF__Z85_KEY_LEN + 1);
            rf_error_clear(err);
            rc = RF_OK;
        }
        break;
    }
    memset(line, 0, sizeof line);
    fclose(f);
    return rc;
}

static rf_status s_add_allowed(rf__server_config_t *cfg, const char *z85, const char *where, rf_error_t *err)
{
    uint8_t bin[32];
    if (!rf__z85_key(z85, bin))
        return rf_error_set(err, RF_EINVAL, "curve_allowed_key", "%s: not a Z85 public key (40 characters)", where);
    if (cfg->n_allowed >= RF__MAX_ALLOWED)
        return rf_error_set(err, RF_ELIMIT, "curve_allowed_key", "%s: more than %d keys", where, RF__MAX_ALLOWED);
    uint8_t(*grown)[32] = realloc(cfg->allowed, (size_t)(cfg->n_allowed + 1) * sizeof *grown);
    if (!grown)
        return rf_error_set(err, RF_ENOMEM, "", "out of memory");
    cfg->allowed = grown;
    memcpy(cfg->allowed[cfg->n_allowed++], bin, 32);
    return RF_OK;
}

rf_status rf__server_config_set(rf__server_config_t *cfg, const char *key, const char *value, const char *where,
                                rf_error_t *err)
{
    if (strcmp(key, "listen") == 0) {
        if (cfg->n_listen >= RF__MAX_LISTEN)
            return rf_error_set(err, RF_ELIMIT, key, "%s: more than %d endpoints", where, RF__MAX_LISTEN);
        if (!(cfg->listen[cfg->n_listen] = strdup(value)))
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        cfg->n_listen++;
        return RF_OK;
    }
    if (strcmp(key, "metrics_listen") == 0) {
        char *v = strdup(value);
        if (!v)
            return rf_error_set(err, RF_ENOMEM, "", "out of memory");
        free(cfg->metrics_listen);
        cfg->metrics_listen = v;
        return RF_OK;
    }
    if (strcmp(key, "log_level") == 0) {
        static const char *const names[] = {"error", "warn", "info", "debug"};
        for (int i = 0; i < 4; i++)
            if (strcmp(value, names[i]) == 0) {
                cfg->log_level = i;
                return RF_OK;
            }
        return rf_error_set(err, RF_EINVAL, key, "%s: must be error, warn, info or debug", where);
    }
    if (strcmp(key, "curve_secret_key_file") == 0) {
        RF_CALL(s_key_file(value, cfg->curve_secret, key, err));
        cfg->curve = true;
        return RF_OK;
    }
    if (strcmp(key, "curve_allowed_key") == 0)
        return s_add_allowed(cfg, value, where, err);
    if (strcmp(key, "curve_allowed_keys_file") == 0) {
        FILE *f = fopen(value, "r");
        if (!f)
            return rf_error_set(err, RF_EIO, key, "%s: %s: %s", where, value, strerror(errno));
        char line[256];
        rf_status rc = RF_OK;
        while (rc == RF_OK && fgets(line, sizeof line, f)) {
            char *s = line;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s == '#')
                continue;
            size_t n = strcspn(s, " \t\r\n");
            if (n == 0)
                continue;
            s[n] = '\0';
            rc = s_add_allowed(cfg, s, value, err);
        }
        fclose(f);
        return rc;
    }
    for (size_t i = 0; i < sizeof s_fields / sizeof s_fields[0]; i++) {
        const s_field_t *f = &s_fields[i];
        if (strcmp(key, f->key) != 0)
            continue;
        char *p = (char *)cfg + f->offset;
        if (f->kind == S_BOOL) {
            bool b;
            if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 || strcmp(value, "yes") == 0)
                b = true;
            else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 || strcmp(value, "no") == 0)
                b = false;
            else
                return rf_error_set(err, RF_EINVAL, key, "%s: must be true or false", where);
            memcpy(p, &b, sizeof b);
            return RF_OK;
        }
        errno = 0;
        char *end = NULL;
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end || v < f->min || v > f->max)
            return rf_error_set(err, RF_EINVAL, key, "%s: must be a whole number from %lld to %lld", where,
                                (long long)f->min, (long long)f->max);
        if (f->kind == S_I32) {
            int32_t v32 = (int32_t)v;
            memcpy(p, &v32, sizeof v32);
        } else {
            int64_t v64 = v;
            memcpy(p, &v64, sizeof v64);
        }
        return RF_OK;
    }
    return rf_error_set(err, RF_EINVAL, key, "%s: unknown key", where);
}

rf_status rf__server_config_load(rf__server_config_t *cfg, const char *path, rf_error_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return rf_error_set(err, RF_EIO, "", "%s: %s", path, strerror(errno));
    char line[4096], where[512];
    int lineno = 0;
    rf_status rc = RF_OK;
    while (rc == RF_OK && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%.400s:%d", path, lineno);
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#')
            continue; /* comments are whole lines (Z85 keys may hold '#') */
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
            *--e = '\0';
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = rf_error_set(err, RF_EINVAL, "", "%s: expected `key = value`", where);
            break;
        }
        char *k_end = eq;
        while (k_end > s && (k_end[-1] == ' ' || k_end[-1] == '\t'))
            k_end--;
        *k_end = '\0';
        char *v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        rc = rf__server_config_set(cfg, s, v, where, err);
    }
    fclose(f);
    return rc;
}
