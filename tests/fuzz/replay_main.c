/* tests/fuzz/replay_main.c: a plain main() for a libFuzzer target, so that
 * its corpus is replayed in every build (gcc, no libFuzzer), as SQLite
 * replays its fuzz corpora forever after.
 *
 *   replay_<target> FILE_OR_DIR...
 *
 * Feeds every file given, and every regular file directly inside every
 * directory given (in name order, so runs are reproducible), to
 * LLVMFuzzerTestOneInput, each in a buffer of exactly its size. Exits 0 when
 * at least one input was replayed and none could not be read; a crash or a
 * sanitizer report ends the process as it would under libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int s_replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    int rc = 0;
    while (buf != NULL) {
        if (n == cap) {
            uint8_t *nbuf = realloc(buf, cap * 2);
            if (nbuf == NULL)
                break;
            buf = nbuf;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (buf == NULL || ferror(f) || !feof(f)) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        rc = -1;
    } else {
        /* exact-size copy, so that a read past the end is caught */
        uint8_t *exact = malloc(n > 0 ? n : 1);
        if (exact == NULL) {
            rc = -1;
        } else {
            if (n > 0)
                memcpy(exact, buf, n);
            LLVMFuzzerTestOneInput(exact, n);
            free(exact);
        }
    }
    free(buf);
    fclose(f);
    return rc;
}

static int s_compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay the regular files inside `dir`; adds to *count; -1 on error. */
static int s_replay_dir(const char *dir, long *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (nn == NULL) {
                rc = -1;
                break;
            }
            names = nn;
            cap = ncap;
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        names[n] = malloc(len);
        if (names[n] == NULL) {
            rc = -1;
            break;
        }
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, s_compare_names);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (s_replay_file(names[i]) != 0)
                rc = -1;
            else
                (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long count = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            failed = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (s_replay_dir(argv[i], &count) != 0)
                failed = 1;
        } else if (s_replay_file(argv[i]) != 0) {
            failed = 1;
        } else {
            count++;
        }
    }
    printf("replay: %ld input%s replayed\n", count, count == 1 ? "" : "s");
    if (count == 0) {
        fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_DIR...)\n", argc > 0 ? argv[0] : "replay");
        return 1;
    }
    return failed;
}
