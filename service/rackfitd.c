/* service/rackfitd.c: rackfitd's main: flags and the config file, then the
 * server (service/server.c).
 *
 *   rackfitd --listen ENDPOINT [--listen ...] [--threads N] [--config FILE]
 *            [--allow-insecure] [--KEY VALUE]...
 *   rackfitd --keygen
 *
 * Flags are applied in order after the config file (the file first, wherever
 * --config appears), so a flag overrides the file. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "rackfit/rackfit.h"
#include "server.h"

static void s_usage(FILE *out)
{
    fputs("usage: rackfitd --listen ENDPOINT [--listen ENDPOINT]... [--threads N] [--config FILE]\n"
          "                [--allow-insecure] [--log-level error|warn|info|debug] [--KEY VALUE]...\n"
          "       rackfitd --keygen     print a new CURVE key pair\n"
          "       rackfitd --version | --help\n"
          "\n"
          "Serves the placement API over ZeroMQ (docs/protocol.md). Without CURVE keys it\n"
          "listens in plain mode, on loopback only unless --allow-insecure is given.\n"
          "--threads N is the server-wide budget of solver threads (default: the usable cores).\n"
          "Every config-file key (docs/operating-rackfitd.md) is also a flag: --max-nodes 20000.\n",
          out);
}

int main(int argc, char **argv)
{
    rf__server_config_t cfg;
    rf_error_t err;
    rf_error_clear(&err);
    rf__server_config_init(&cfg);
    int rc = 0;
    /* The config file first. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            if (rf__server_config_load(&cfg, argv[i + 1], &err) != RF_OK) {
                fprintf(stderr, "rackfitd: %s%s%s\n", err.path, err.path[0] ? ": " : "", err.message);
                rc = 2;
                goto done;
            }
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            s_usage(stdout);
            goto done;
        }
        if (strcmp(a, "--version") == 0) {
            printf("rackfitd %s\n", RACKFIT_VERSION);
            goto done;
        }
        if (strcmp(a, "--keygen") == 0) {
            rc = rf__server_keygen();
            goto done;
        }
        if (strcmp(a, "--allow-insecure") == 0) {
            cfg.allow_insecure = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "rackfitd: unexpected argument `%s` (see --help)\n", a);
            rc = 2;
            goto done;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--config") == 0)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%s", a + 2);
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        if (strcmp(key, "threads") == 0)
            snprintf(key, sizeof key, "solver_threads");
        if (rf__server_config_set(&cfg, key, v, "command line", &err) != RF_OK) {
            fprintf(stderr, "rackfitd: --%s: %s\n", a + 2, err.message);
            rc = 2;
            goto done;
        }
    }
    if (cfg.n_listen == 0) {
        fprintf(stderr, "rackfitd: no --listen ENDPOINT (for a first run: --listen tcp://127.0.0.1:5555)\n");
        rc = 2;
        goto done;
    }
    if (cfg.malloc_keep_bytes > 0) {
        /* free memory stays in the process up to malloc_keep_bytes
         * (config.c says why); blocks of 32 MiB and more are still mmap'ed
         * and given back at once */
        int keep = (int)cfg.malloc_keep_bytes;
        mallopt(M_TRIM_THRESHOLD, keep);
        mallopt(M_TOP_PAD, keep < 16 * 1024 * 1024 ? keep : 16 * 1024 * 1024);
        mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    }
    rc = rf__server_run(&cfg);
done:
    rf__server_config_fini(&cfg);
    return rc;
}
