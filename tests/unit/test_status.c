/* tests/unit/test_status.c: status codes and strings, and the per-call error
 * detail (solver/status.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "../support/leak.h"
#include "rackfit/status.h"

Test(status, codes_and_messages)
{
    cr_assert_str_eq(rf_status_code(RF_OK), "ok");
    cr_assert_str_eq(rf_status_code(RF_ESCHEMA), "bad_problem");
    cr_assert_str_eq(rf_status_code(RF_ELIMIT), "limit_exceeded");
    cr_assert_str_eq(rf_status_code(RF_EINTERNAL), "internal");
    cr_assert_str_eq(rf_status_message(RF_ENOMEM), "out of memory");
    cr_assert_str_eq(rf_status_message(RF_EPARSE), "input is not well-formed");
#define CHECK(name, value, code, msg)                                                                                  \
    cr_assert_eq(RF_##name, value);                                                                                    \
    cr_assert_str_eq(rf_status_code(RF_##name), code);                                                                 \
    cr_assert_str_eq(rf_status_message(RF_##name), msg);
    RF_STATUS_MAP(CHECK)
#undef CHECK
    cr_assert_str_eq(rf_status_code((rf_status)-999), "unknown");
    cr_assert_not_null(rf_status_message((rf_status)42));
    rf_test_no_leaks();
}

Test(status, error_set_and_clear)
{
    rf_error_t err;
    memset(&err, 0x55, sizeof(err));
    rf_error_clear(&err);
    cr_assert_eq(err.code, RF_OK);
    cr_assert_str_eq(err.message, "");
    cr_assert_str_eq(err.path, "");
    cr_assert_eq(err.offset, -1);

    err.offset = 12;
    cr_assert_eq(rf_error_set(&err, RF_ESCHEMA, "gangs[3].name", "duplicate name \"%s\" (%d)", "a", 7), RF_ESCHEMA);
    cr_assert_eq(err.code, RF_ESCHEMA);
    cr_assert_str_eq(err.message, "duplicate name \"a\" (7)");
    cr_assert_str_eq(err.path, "gangs[3].name");
    cr_assert_eq(err.offset, -1);

    cr_assert_eq(rf_error_set(&err, RF_EIO, NULL, NULL), RF_EIO);
    cr_assert_str_eq(err.message, "input/output error");
    cr_assert_str_eq(err.path, "");
    cr_assert_eq(rf_error_set(&err, RF_ENOMEM, NULL, "%s", ""), RF_ENOMEM);
    cr_assert_str_eq(err.message, "out of memory");

    cr_assert_eq(rf_error_set(NULL, RF_ELIMIT, "x", "y"), RF_ELIMIT);
    rf_error_clear(NULL);
    rf_test_no_leaks();
}

Test(status, truncation_keeps_utf8_whole)
{
    rf_error_t err;
    char long_text[2000];
    /* "é" (2 bytes) repeated: any cut falls inside or between characters */
    for (size_t i = 0; i + 1 < sizeof(long_text); i += 2) {
        long_text[i] = '\xc3';
        long_text[i + 1] = '\xa9';
    }
    long_text[sizeof(long_text) - 1] = '\0';
    for (int shift = 0; shift < 4; shift++) {
        char path[700];
        memset(path, 'a', (size_t)shift);
        strcpy(path + shift, long_text + 1400);
        rf_error_set(&err, RF_ESCHEMA, path, "%.*s%s", shift, "abc", long_text);
        size_t m = strlen(err.message);
        size_t p = strlen(err.path);
        cr_assert(m < RF_ERROR_MESSAGE_MAX && m >= RF_ERROR_MESSAGE_MAX - 4);
        cr_assert(p < RF_ERROR_PATH_MAX && p >= RF_ERROR_PATH_MAX - 4);
        /* ends on a whole character */
        cr_assert_eq((unsigned char)err.message[m - 1], 0xa9, "shift %d", shift);
        cr_assert_eq((unsigned char)err.path[p - 1], 0xa9, "shift %d", shift);
    }
    rf_test_no_leaks();
}
