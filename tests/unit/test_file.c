/* tests/unit/test_file.c: reading a whole input file with a limit
 * (base/file.c, rf__read_file): bytes kept exactly (NUL bytes too) and a NUL
 * added after them; the limit, exactly at it and one byte past, on a
 * regular file (refused from its size, which the message gives) and on a
 * stream (refused once one byte too many has been read), 0 meaning none;
 * growth past the first buffer; standard input for "-"; and the errors: NULL
 * arguments, a missing file and a directory, each naming the file and the
 * system's reason, with the outputs reset. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../support/leak.h"
#include "file.h"

/* A temporary file holding `len` bytes of `content`; malloc'ed path. */
static char *s_temp(const char *content, size_t len)
{
    char tmpl[] = "/tmp/rf_test_file_XXXXXX";
    int fd = mkstemp(tmpl);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, content, len), (ssize_t)len);
    close(fd);
    return strdup(tmpl);
}

Test(file, bytes_kept_exactly_and_nul_added)
{
    char bytes[256];
    for (int i = 0; i < 256; i++)
        bytes[i] = (char)(255 - i); /* every byte value, a NUL at the end */
    char *path = s_temp(bytes, sizeof bytes);
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 0, &buf, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, sizeof bytes);
    cr_assert_eq(memcmp(buf, bytes, len), 0);
    cr_assert_eq(buf[len], '\0');
    free(buf);
    unlink(path);
    free(path);
    rf_test_no_leaks();
}

Test(file, limit_on_a_regular_file_gives_its_size)
{
    char *path = s_temp("0123456789", 10);
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 10, &buf, &len, &err), RF_OK);
    cr_assert_eq(len, 10);
    free(buf);
    cr_assert_eq(rf__read_file(path, 9, &buf, &len, &err), RF_ELIMIT);
    cr_assert_null(buf);
    cr_assert_eq(len, 0);
    char want[512];
    snprintf(want, sizeof want, "%s: 10 bytes, more than the limit of 9 bytes", path);
    cr_assert_str_eq(err.message, want);
    cr_assert_str_eq(err.path, "");
    unlink(path);
    free(path);
    rf_test_no_leaks();
}

Test(file, limit_on_a_stream_is_found_while_reading)
{
    /* a pipe as standard input: no size to look at before reading */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], "abcdefgh", 8), 8);
    close(fds[1]);
    cr_assert_neq(dup2(fds[0], STDIN_FILENO), -1);
    close(fds[0]);
    clearerr(stdin);
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file("-", 7, &buf, &len, &err), RF_ELIMIT);
    cr_assert_str_eq(err.message, "standard input: more than the limit of 7 bytes");
    cr_assert_null(buf);

    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], "abcdefgh", 8), 8);
    close(fds[1]);
    cr_assert_neq(dup2(fds[0], STDIN_FILENO), -1);
    close(fds[0]);
    clearerr(stdin);
    cr_assert_eq(rf__read_file("-", 8, &buf, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, 8);
    cr_assert_str_eq(buf, "abcdefgh");
    free(buf);
    rf_test_no_leaks();
}

Test(file, grows_past_the_first_buffer_up_to_the_limit)
{
    size_t n = 200 * 1024 + 17; /* the first buffer is 64 KiB */
    char *content = malloc(n);
    cr_assert_not_null(content);
    for (size_t i = 0; i < n; i++)
        content[i] = (char)('a' + i % 23);
    char *path = s_temp(content, n);
    char *buf = NULL;
    size_t len = 0;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, n, &buf, &len, &err), RF_OK, "%s", err.message);
    cr_assert_eq(len, n);
    cr_assert_eq(memcmp(buf, content, n), 0);
    cr_assert_eq(buf[n], '\0');
    free(buf);
    unlink(path);
    free(path);
    free(content);
    rf_test_no_leaks();
}

Test(file, errors_name_the_file_and_the_reason)
{
    char *buf = (char *)&buf;
    size_t len = 99;
    rf_error_t err;
    cr_assert_eq(rf__read_file(NULL, 0, &buf, &len, &err), RF_EINVAL);
    cr_assert_null(buf);
    cr_assert_eq(len, 0);
    cr_assert_str_eq(err.message, "rf__read_file: NULL argument");
    cr_assert_eq(rf__read_file("/tmp", 0, NULL, &len, &err), RF_EINVAL);
    cr_assert_eq(rf__read_file("/tmp", 0, &buf, NULL, &err), RF_EINVAL);

    cr_assert_eq(rf__read_file("/nonexistent/rf_test_file", 0, &buf, &len, &err), RF_EIO);
    cr_assert_str_eq(err.message, "/nonexistent/rf_test_file: No such file or directory");
    cr_assert_null(buf);

    cr_assert_eq(rf__read_file("/", 0, &buf, &len, &err), RF_EIO);
    cr_assert_str_eq(err.message, "/: Is a directory");
    cr_assert_null(buf);

    /* err may be NULL: the status alone */
    cr_assert_eq(rf__read_file("/nonexistent/rf_test_file", 0, &buf, &len, NULL), RF_EIO);
    rf_test_no_leaks();
}

Test(file, an_empty_file_is_an_empty_string)
{
    char *path = s_temp("", 0);
    char *buf = NULL;
    size_t len = 5;
    rf_error_t err;
    cr_assert_eq(rf__read_file(path, 1, &buf, &len, &err), RF_OK);
    cr_assert_eq(len, 0);
    cr_assert_not_null(buf);
    cr_assert_str_eq(buf, "");
    free(buf);
    unlink(path);
    free(path);
    rf_test_no_leaks();
}
