/* base/grow.h: growing a malloc'ed array by doubling, the one way the rooms
 * make room in their arrays (placements, preemptors, baseline output,
 * simulator samples and jobs, trace rows, communication edges).
 *
 * Capacities are int32_t (the model's counts are); an array never grows past
 * INT32_MAX items. */
#ifndef RACKFIT_BASE_GROW_H
#define RACKFIT_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* `arr` (items of `size` bytes, capacity *cap, may be NULL with *cap 0)
 * with room for at least `need` (>= 1) items: `arr` itself when it has it, else
 * reallocated to *cap doubled (`first` when *cap is 0) until it holds
 * `need`, at most INT32_MAX items, and *cap set to that. NULL when out of
 * memory or when `need` is above INT32_MAX: then `arr` and *cap are
 * untouched and `arr` is still the caller's. */
void *rf__grow(void *arr, int32_t *cap, int64_t need, int32_t first, size_t size);

/* Room for one more item after the n in *arr (rf__grow with need n + 1 and a
 * first capacity of 16): true with *arr updated, false when out of memory,
 * with *arr and *cap untouched. */
bool rf__grow_one(void **arr, int32_t n, int32_t *cap, size_t size);

#endif
