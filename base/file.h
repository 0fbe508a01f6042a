/* base/file.h: reading a whole input file (a problem, a trace, a
 * kubeconfig) with a size limit, so no room reads files its own way. */
#ifndef RACKFIT_BASE_FILE_H
#define RACKFIT_BASE_FILE_H

#include <stddef.h>

#include "rackfit/status.h"

/* Read a whole file ("-": standard input) into a malloc'ed, NUL-terminated
 * buffer, refusing files larger than `max_bytes` (0: no limit) with
 * RF_ELIMIT; RF_EIO names the file and the system's reason. */
rf_status rf__read_file(const char *path, size_t max_bytes, char **out, size_t *len, rf_error_t *err);

#endif
