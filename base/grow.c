/* base/grow.c: see grow.h. */
#include "grow.h"

#include <stdlib.h>

void *rf__grow(void *arr, int32_t *cap, int64_t need, int32_t first, size_t size)
{
    if (need <= *cap)
        return arr;
    if (need > INT32_MAX || first < 1 || size == 0)
        return NULL;
    int64_t c = *cap > 0 ? *cap : first;
    while (c < need)
        c *= 2;
    if (c > INT32_MAX)
        c = INT32_MAX;
    if ((uint64_t)c > SIZE_MAX / size)
        return NULL;
    void *bigger = realloc(arr, (size_t)c * size);
    if (!bigger)
        return NULL;
    *cap = (int32_t)c;
    return bigger;
}

bool rf__grow_one(void **arr, int32_t n, int32_t *cap, size_t size)
{
    void *bigger = rf__grow(*arr, cap, (int64_t)n + 1, 16, size);
    if (!bigger)
        return false;
    *arr = bigger;
    return true;
}
