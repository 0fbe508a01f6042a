/* rackfit/status.h: status codes and the per-call error detail.
 *
 * One X-macro table makes the enum, the stable code strings (used verbatim on
 * the wire by rackfitd) and the default messages. Every fallible call returns
 * rf_status: 0 is success, negative is an error. Detail goes into an
 * rf_error_t owned by the caller, never into a global. */
#ifndef RACKFIT_STATUS_H
#define RACKFIT_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(ENUM_SUFFIX, value, "wire_code", "default message") */
#define RF_STATUS_MAP(X)                                                                                               \
    X(OK, 0, "ok", "success")                                                                                          \
    X(ENOMEM, -1, "no_memory", "out of memory")                                                                        \
    X(EINVAL, -2, "invalid_argument", "invalid argument")                                                              \
    X(EPARSE, -3, "parse_error", "input is not well-formed")                                                           \
    X(ESCHEMA, -4, "bad_problem", "input breaks the placement contract")                                               \
    X(ELIMIT, -5, "limit_exceeded", "input exceeds a configured limit")                                                \
    X(EIO, -6, "io_error", "input/output error")                                                                       \
    X(EINFEASIBLE, -7, "infeasible_answer", "answer breaks the contract")                                              \
    X(ESOLVER, -8, "solver_failure", "the solver failed")                                                              \
    X(EUNSUPPORTED, -9, "unsupported", "not supported")                                                                \
    X(ETIMEOUT, -10, "timeout", "time limit reached")                                                                  \
    X(EBUSY, -11, "busy", "server is busy")                                                                            \
    X(ESTALE, -12, "stale_version", "stale version")                                                                   \
    X(ENOTFOUND, -13, "not_found", "not found")                                                                        \
    X(EINTERNAL, -14, "internal", "internal error")

typedef enum {
#define RF__STATUS_ENUM(name, value, code, msg) RF_##name = value,
    RF_STATUS_MAP(RF__STATUS_ENUM)
#undef RF__STATUS_ENUM
} rf_status;

/* Stable lower-case code string ("bad_problem"); never NULL. Static storage. */
const char *rf_status_code(rf_status status);
/* Default human message for a status; never NULL. Static storage. */
const char *rf_status_message(rf_status status);

#define RF_ERROR_MESSAGE_MAX 512
#define RF_ERROR_PATH_MAX    256

/* Detail of one failed call. `path` is the contract's field path
 * (`gangs[3].pod_sets[0].requests["nvidia.com/gpu"]`), empty when the error is
 * not about one field; `offset` is a byte offset into the input, or -1. */
typedef struct {
    rf_status code;
    char message[RF_ERROR_MESSAGE_MAX];
    char path[RF_ERROR_PATH_MAX];
    long offset;
} rf_error_t;

/* Reset to "no error". NULL-safe. */
void rf_error_clear(rf_error_t *err);
/* Fill `err` (NULL-safe) and return `code`, so call sites can
 * `return rf_error_set(err, RF_ESCHEMA, path, "...", ...);`. */
rf_status rf_error_set(rf_error_t *err, rf_status code, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Propagate an error status in one line (SCIP_CALL's shape). */
#define RF_CALL(expr)                                                                                                  \
    do {                                                                                                               \
        rf_status rf__s_ = (expr);                                                                                     \
        if (rf__s_ != RF_OK)                                                                                           \
            return rf__s_;                                                                                             \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
