/* base/arena.c: the bump allocator behind base/arena.h.
 *
 * Invariants:
 * - every byte handed out is zero: shared chunks come from malloc and each
 *   allocation is cleared as it is cut (so a small arena, a one-gang
 *   request's, clears the few KiB it uses, not a whole 64 KiB chunk); a
 *   large request's own chunk comes from calloc;
 *   nothing is ever reused before rf__arena_destroy;
 * - `current` is the chunk new small allocations are cut from; a request that
 *   does not fit it either opens a new current chunk (of at least
 *   S_CHUNK_MIN bytes) or, when it is large, gets a chunk of its own linked
 *   behind `current`, so the free tail of `current` is not wasted;
 * - `used` is the sum of the sizes handed out, each rounded up to S_ALIGN, and
 *   never exceeds `cap` when a cap is set;
 * - every size computation is checked for overflow before it is made. */
#include "arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S_ALIGN     ((size_t)16)
#define S_CHUNK_MIN ((size_t)64 * 1024)

typedef struct s_chunk {
    struct s_chunk *next;
    size_t size; /* usable bytes from `data` (after alignment) */
    size_t off;  /* bytes of `data` handed out */
    unsigned char *data;
    /* the bytes follow the header, plus up to S_ALIGN - 1 bytes of slack */
} s_chunk_t;

struct rf__arena {
    s_chunk_t *current; /* head of the chunk list */
    size_t used;
    size_t cap; /* 0: none */
};

/* A chunk with at least `size` usable, S_ALIGN-aligned bytes, or NULL; cleared by calloc when `zero` (a large
 * request's own chunk, whose fresh pages the kernel zeroes without their being touched), else left for
 * rf__arena_alloc to clear what it hands out. */
static s_chunk_t *s_chunk_new(size_t size, bool zero)
{
    size_t header = sizeof(s_chunk_t);
    if (size > SIZE_MAX - header - S_ALIGN)
        return NULL;
    s_chunk_t *chunk = zero ? calloc(1, header + size + S_ALIGN) : malloc(header + size + S_ALIGN);
    if (!chunk)
        return NULL;
    uintptr_t start = (uintptr_t)((unsigned char *)chunk + header);
    uintptr_t aligned = (start + (S_ALIGN - 1)) & ~(uintptr_t)(S_ALIGN - 1);
    chunk->data = (unsigned char *)chunk + header + (size_t)(aligned - start);
    chunk->size = size;
    chunk->off = 0;
    chunk->next = NULL;
    return chunk;
}

rf__arena_t *rf__arena_new(size_t cap_bytes)
{
    rf__arena_t *arena = calloc(1, sizeof(*arena));
    if (!arena)
        return NULL;
    arena->cap = cap_bytes;
    return arena;
}

void rf__arena_destroy(rf__arena_t **arena)
{
    if (!arena || !*arena)
        return;
    s_chunk_t *chunk = (*arena)->current;
    while (chunk) {
        s_chunk_t *next = chunk->next;
        free(chunk);
        chunk = next;
    }
    free(*arena);
    *arena = NULL;
}

void *rf__arena_alloc(rf__arena_t *arena, size_t size)
{
    if (!arena)
        return NULL;
    if (size == 0)
        size = 1; /* distinct, valid pointers even for empty arrays */
    if (size > (size_t)PTRDIFF_MAX - S_CHUNK_MIN)
        return NULL; /* no object can be this large; keeps every sum below in range */
    size_t need = (size + (S_ALIGN - 1)) & ~(S_ALIGN - 1);
    if (arena->cap && (need > arena->cap || arena->used > arena->cap - need))
        return NULL;

    s_chunk_t *cur = arena->current;
    if (cur && cur->size - cur->off >= need) {
        void *p = cur->data + cur->off;
        cur->off += need;
        arena->used += need;
        return memset(p, 0, size);
    }
    /* Large requests get a chunk of their own behind `current`. */
    if (cur && need >= S_CHUNK_MIN / 4) {
        s_chunk_t *own = s_chunk_new(need, true); /* calloc: a large block's pages come zeroed, untouched */
        if (!own)
            return NULL;
        own->off = need;
        own->next = cur->next;
        cur->next = own;
        arena->used += need;
        return own->data;
    }
    s_chunk_t *chunk = s_chunk_new(need > S_CHUNK_MIN ? need : S_CHUNK_MIN, false);
    if (!chunk)
        return NULL;
    chunk->next = cur;
    arena->current = chunk;
    chunk->off = need;
    arena->used += need;
    return memset(chunk->data, 0, size);
}

char *rf__arena_strndup(rf__arena_t *arena, const char *s, size_t len)
{
    if (len == SIZE_MAX || (!s && len > 0))
        return NULL;
    char *p = rf__arena_alloc(arena, len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

size_t rf__arena_used(const rf__arena_t *arena)
{
    return arena ? arena->used : 0;
}
