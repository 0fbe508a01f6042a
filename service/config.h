/* service/config.h: rackfitd's settings, from its config file and flags.
 *
 * The file is `key = value` lines; a line starting with `#` is a comment
 * (a `#` elsewhere is part of the value: Z85 keys use it); blank lines are
 * ignored; `listen` and `curve_allowed_key` may repeat, every other key is
 * set once (the last wins). Every key is also a flag: `--key value`.
 * docs/operating-rackfitd.md lists the keys and their defaults. */
#ifndef RACKFIT_SERVICE_CONFIG_H
#define RACKFIT_SERVICE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "log.h" /* log_level takes rf__log_level values */
#include "ops.h"
#include "rackfit/status.h"

#define RF__MAX_LISTEN  16
#define RF__MAX_ALLOWED 1024
#define RF__Z85_KEY_LEN 40

typedef struct {
    char *listen[RF__MAX_LISTEN]; /* owned */
    int32_t n_listen;
    int32_t fast_threads;   /* fast lane workers; 0: the solver budget */
    int32_t solver_workers; /* solver lane workers; 0: 1 */
    int32_t fast_queue;     /* requests waiting per lane before `busy` */
    int32_t solver_queue;
    int64_t fast_queue_bytes; /* bytes of requests waiting per lane before `busy` */
    int64_t solver_queue_bytes;
    int64_t malloc_keep_bytes; /* free heap kept, not given back to the kernel per request; 0: glibc's default */
    char *metrics_listen;      /* HOST:PORT of /metrics, /healthz, /readyz; NULL: off. Owned */
    int64_t big_message_bytes; /* larger requests go to the solver lane unscanned */
    bool allow_insecure;       /* plain mode on endpoints other than loopback */
    bool curve;                /* curve_secret_key set */
    char curve_secret[RF__Z85_KEY_LEN + 1];
    uint8_t (*allowed)[32]; /* allowed client public keys, binary; owned */
    int32_t n_allowed;
    int log_level;
    rf__ops_config_t ops;
} rf__server_config_t;

void rf__server_config_init(rf__server_config_t *cfg);
void rf__server_config_fini(rf__server_config_t *cfg);
/* Set one key (from the file or a flag). `where` names the place for errors. */
rf_status rf__server_config_set(rf__server_config_t *cfg, const char *key, const char *value, const char *where,
                                rf_error_t *err);
/* Read a config file. */
rf_status rf__server_config_load(rf__server_config_t *cfg, const char *path, rf_error_t *err);

/* A Z85 key (40 characters) to 32 bytes; false when malformed. */
bool rf__z85_key(const char *text, uint8_t out[32]);

#endif
