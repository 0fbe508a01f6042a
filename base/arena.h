/* base/arena.h: a bump allocator for data that lives and dies together
 * (a problem's strings and arrays, a decoded document).
 *
 * Memory comes in chunks of at least 64 KiB; rf__arena_alloc returns zeroed,
 * 16-byte aligned memory or NULL when out of memory (or past the arena's byte
 * cap, if one is set). Nothing is freed until rf__arena_destroy. Not thread-safe:
 * an arena belongs to one thread at a time. */
#ifndef RACKFIT_BASE_ARENA_H
#define RACKFIT_BASE_ARENA_H

#include <stddef.h>

typedef struct rf__arena rf__arena_t;

/* `cap_bytes` 0: no cap. NULL on ENOMEM. */
rf__arena_t *rf__arena_new(size_t cap_bytes);
/* NULL-safe; sets *arena to NULL. */
void rf__arena_destroy(rf__arena_t **arena);
void *rf__arena_alloc(rf__arena_t *arena, size_t size);
/* Copy `len` bytes and add a NUL. */
char *rf__arena_strndup(rf__arena_t *arena, const char *s, size_t len);
/* Bytes handed out so far (for limits and benchmarks). */
size_t rf__arena_used(const rf__arena_t *arena);

#endif
