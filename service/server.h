/* service/server.h: rackfitd's transport: the ZeroMQ ROUTER, the lanes and
 * their workers, CURVE and the ZAP handler, signals and logs. */
#ifndef RACKFIT_SERVICE_SERVER_H
#define RACKFIT_SERVICE_SERVER_H

#include "config.h"

/* Serve until SIGTERM or SIGINT; returns the process exit status (0 after a
 * clean stop, 2 for a configuration that cannot be served, 3 on failure). */
int rf__server_run(const rf__server_config_t *cfg);

/* Print a new CURVE key pair (Z85) for a config; 0 or 3. */
int rf__server_keygen(void);

#endif
